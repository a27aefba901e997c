"""What crewbook prints is the same on every machine: hash seed, time zone, sort kernel.

Each check runs the real `crewbook` command twice, in processes that differ in
`PYTHONHASHSEED` and `TZ`, and compares the bytes; and a lint over the package and the
notebooks keeps the sorts whose ties numpy's CPU-specific kernels would order.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
HISTORY = ROOT / "tests" / "data" / "ledgers" / "history"
ENVIRONMENTS = ({"PYTHONHASHSEED": "1", "TZ": "UTC"},
                {"PYTHONHASHSEED": "12345", "TZ": "America/Los_Angeles"},
                {"PYTHONHASHSEED": "random", "TZ": "Asia/Kolkata"})
COMMANDS = (
    ["--json", "ledger", "summary", str(HISTORY)],
    ["ledger", "summary", str(HISTORY)],
    ["--json", "status"],
    ["--json", "validate", "."],
    ["--json", "schemas"],
    ["graph", ".", "--schema", "lite", "--format", "dot"],
    ["graph", ".", "--schema", "lite", "--format", "mmd"],
)
#: One process per environment runs every command through the real entry point.
DRIVER = """
import contextlib, io, json, sys
from crewbook.commands import main
out = []
for args in json.loads(sys.argv[1]):
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(args)
    out.append([code, buffer.getvalue()])
print(json.dumps(out))
"""


def run_all(cwd: Path, env: dict[str, str]) -> list[list[object]]:
    done = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(COMMANDS)], cwd=cwd,
                          env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    result: list[list[object]] = json.loads(done.stdout)
    return result


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> list[list[list[object]]]:
    from crewbook import example_project

    tour = example_project("tour", tmp_path_factory.mktemp("reproducible") / "tour")
    return [run_all(tour, env) for env in ENVIRONMENTS]


@pytest.mark.parametrize("number", range(len(COMMANDS)),
                         ids=[" ".join(x for x in c if not x.startswith("/")) for c in COMMANDS])
def test_output_is_the_same_under_any_hash_seed_and_time_zone(
        number: int, outputs: list[list[list[object]]]) -> None:
    code, text = outputs[0][number]
    assert code in (0, 1)
    assert str(text).strip(), "the command printed nothing to compare"
    assert outputs[1][number] == outputs[0][number]
    assert outputs[2][number] == outputs[0][number]


def test_summary_counts_are_ordered_by_count_then_name(
        outputs: list[list[list[object]]]) -> None:
    summary = json.loads(str(outputs[1][0][1]))
    for key in ("loops", "kinds", "finished"):
        pairs = list(summary[key].items())
        assert pairs == sorted(pairs, key=lambda kv: (-kv[1], kv[0])), key


def _calls(tree: ast.AST) -> list[tuple[str, ast.Call]]:
    return [(node.func.attr, node) for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)]


def _unstable_sorts(source: str) -> list[str]:
    """Sorts whose ties a CPU-specific kernel may order: one key without a stable kind,
    `argsort` without one, `value_counts` ranking by count."""
    found = []
    for name, call in _calls(ast.parse(source)):
        kinds = {k.arg: k.value for k in call.keywords}
        stable = isinstance(kinds.get("kind"), ast.Constant) and \
            kinds["kind"].value in ("stable", "mergesort")
        if name == "sort_values" and not stable:
            by = call.args[0] if call.args else kinds.get("by")
            if not isinstance(by, ast.List | ast.Tuple):
                found.append(f"line {call.lineno}: sort_values on one key needs kind='stable'")
        elif name == "argsort" and not stable:
            found.append(f"line {call.lineno}: argsort needs kind='stable'")
        elif name == "value_counts":
            ordered = isinstance(kinds.get("sort"), ast.Constant) and \
                kinds["sort"].value is False
            if not ordered:
                found.append(f"line {call.lineno}: value_counts ranks ties by kernel; "
                             "use sort=False and order explicitly")
    return found


def _notebook_code(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    lines = []
    for cell in cells:
        if cell["cell_type"] == "code":
            lines += [ln for ln in "".join(cell["source"]).splitlines()
                      if not ln.lstrip().startswith(("%", "!"))]
    return "\n".join(lines)


SOURCES = sorted((ROOT / "toolkit").rglob("*.py")) + sorted(ROOT.glob("notebooks/*.ipynb"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_sort_breaks_its_ties(path: Path) -> None:
    source = _notebook_code(path) if path.suffix == ".ipynb" else path.read_text("utf-8")
    assert _unstable_sorts(source) == []


def test_the_lint_finds_what_it_forbids() -> None:
    bad = ('df.sort_values("a")\ndf.sort_values(by="a", ascending=False)\n'
           's.argsort()\ns.value_counts()\n')
    good = ('df.sort_values("a", kind="stable")\ndf.sort_values(["a", "b"])\n'
            's.argsort(kind="stable")\ns.value_counts(sort=False)\n')
    assert len(_unstable_sorts(bad)) == 4
    assert _unstable_sorts(good) == []
