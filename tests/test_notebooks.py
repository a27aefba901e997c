"""The notebooks' own hygiene: nbval markers it honours, one kernelspec, cell ids."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
MARKER = re.compile(r"NBVAL_\w+|PYTEST_VALIDATE_IGNORE_OUTPUT")
#: The cell tags nbval honours (its docs, "Cell tags"); any other nbval-* tag is a typo.
NBVAL_TAGS = {"nbval-ignore-output", "nbval-skip", "nbval-check-output", "raises-exception",
              "nbval-raises-exception"}


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def code_cells(path: Path) -> list[tuple[int, dict[str, Any]]]:
    return [(n, c) for n, c in enumerate(load(path)["cells"]) if c["cell_type"] == "code"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_code_a_learner_reads_is_only_the_lesson(path: Path) -> None:
    """nbval's instructions are cell tags, never comments in the code."""
    bad = [f"cell {n}: {line.strip()}" for n, cell in code_cells(path)
           for line in "".join(cell["source"]).splitlines() if MARKER.search(line)]
    assert bad == [], "use the cell tags nbval-ignore-output / nbval-skip instead"
    tags = {t for _, cell in code_cells(path) for t in cell["metadata"].get("tags", [])
            if t.startswith(("nbval", "raises"))}
    assert tags <= NBVAL_TAGS, f"unknown nbval tags: {sorted(tags - NBVAL_TAGS)}"


PLOTS = re.compile(r"\bplot_\w+\(|\bplt\.\w+\(|\.plot\(")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_plots_show_in_the_notebook_and_stay_in_the_file(path: Path) -> None:
    """A plotting cell keeps its picture; no notebook switches to a backend that shows none."""
    missing, backend = [], []
    for n, cell in code_cells(path):
        source = "".join(cell["source"])
        if re.search(r"matplotlib\.use\(|MPLBACKEND", source):
            backend.append(n)
        if PLOTS.search(source) and "nbval-skip" not in cell["metadata"].get("tags", []):
            kinds = {k for out in cell.get("outputs", []) for k in out.get("data", {})}
            if "image/png" not in kinds and "image/svg+xml" not in kinds:
                missing.append(n)
    assert backend == [], "the inline backend shows the plots; Agg shows nothing"
    assert missing == [], "plotting cells saved without their picture"


def test_one_kernelspec_and_language_info() -> None:
    metadata = {path.name: load(path)["metadata"] for path in NOTEBOOKS}
    specs = {json.dumps([m.get("kernelspec"), m.get("language_info")], sort_keys=True)
             for m in metadata.values()}
    assert len(specs) == 1, metadata
    first = next(iter(metadata.values()))
    assert first["kernelspec"]["display_name"] == "Python 3 (ipykernel)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_cells_have_ids_and_no_timestamps(path: Path) -> None:
    """nbformat 4.5 wants cell ids (a notebook without them opens as modified)."""
    nb = load(path)
    assert (nb["nbformat"], nb["nbformat_minor"]) == (4, 5)
    ids = [cell.get("id") for cell in nb["cells"]]
    assert None not in ids
    assert len(set(ids)) == len(ids)
    assert not any("execution" in cell.get("metadata", {}) for cell in nb["cells"])


WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
STABLE_ID = re.compile(r"00000000-0000-4000-8000-\d{12}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_widgets_are_saved_with_the_notebook(path: Path) -> None:
    """A reader who opens a notebook without running it sees its widgets: every widget
    output's model is in the saved state, with stable ids (scripts/run_notebook.py), and
    the state holds no model that no output shows (nothing random, nothing left over)."""
    nb = load(path)
    views = [out["data"][WIDGET_VIEW]["model_id"] for _, cell in code_cells(path)
             for out in cell.get("outputs", []) if WIDGET_VIEW in out.get("data", {})]
    if not views:
        assert "widgets" not in nb["metadata"], "widget state but no widget output"
        return
    state = nb["metadata"]["widgets"][WIDGET_STATE]["state"]
    missing = [v for v in views if v not in state]
    assert missing == [], "widget outputs whose model is not saved: re-run scripts/run_notebook.py"
    assert all(STABLE_ID.fullmatch(k) for k in state), "random model ids: use run_notebook.py"
    text = json.dumps(state)
    referenced = set(views) | set(re.findall(r"IPY_MODEL_([0-9a-f-]{36})", text))
    assert set(state) == referenced, "models no output shows"


BARE_CHECK = re.compile(r"\(?\s*(True|False)(\s*,\s*(True|False|\d+))*\s*\)?")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_lesson_says_what_it_checked(path: Path) -> None:
    """A cell whose result is a bare ``True`` or ``(True, 0)`` shows test mechanics; a
    lesson prints what was checked ("the ledger is unchanged")."""
    bare = [f"cell {n}: {''.join(cell['source']).splitlines()[-1]}"
            for n, cell in code_cells(path) for output in cell.get("outputs", [])
            if output.get("output_type") == "execute_result"
            and BARE_CHECK.fullmatch("".join(output["data"].get("text/plain", [])).strip())]
    assert bare == [], "print a sentence instead of a bare boolean"


#: The notebooks whose saved outputs show routes read from the user's global profile (a
#: run with a global profile present and no isolation changed cells of exactly these).
ROUTED = ["notebooks/03_pipeline_stepping.ipynb", "notebooks/05_coordinator.ipynb"]
CLI = [sys.executable, "-c", "import sys; from crewbook.commands import main; sys.exit(main())"]


@pytest.mark.slow
def test_a_global_profile_on_the_machine_changes_no_saved_output(tmp_path: Path) -> None:
    """A user who ran `crewbook routing init` (a global profile in `$CREWBOOK_HOME` and
    in `$XDG_CONFIG_HOME/crewbook`) still gets every saved output back under nbval: the
    test run points both variables at empty folders before any kernel starts."""
    homes = [tmp_path / "crewbook-home", tmp_path / "config" / "crewbook"]
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "XDIST"))}
    env = {**clean, "CREWBOOK_HOME": str(homes[0]), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    tour = tmp_path / "tour"
    for home in homes:
        subprocess.run([*CLI, "routing", "init", "codex"], check=True, capture_output=True,
                       env={**env, "CREWBOOK_HOME": str(home)})
    subprocess.run([*CLI, "example", "tour", str(tour)], env=env, check=True,
                   capture_output=True)
    shown = subprocess.run([*CLI, "routing", "show", "--project", str(tour)], env=env,
                           capture_output=True, text=True, check=True).stdout
    assert "global" in shown, "the profile must be one crewbook reads"
    assert "codex" in shown
    done = subprocess.run([sys.executable, "-m", "pytest", "-n0", "-p", "no:randomly", "-q",
                           *ROUTED], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=False, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:]
