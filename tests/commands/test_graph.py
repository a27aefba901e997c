"""`crewbook graph`: what PATH may be, formats by extension, and exit 1 without `dot`."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import pytest

import crewbook
from crewbook.commands.graph import model_for_path, register
from crewbook.draw import options
from crewbook.errors import InvalidInputError, ProjectNotFoundError, SchemaNotFoundError

Run = Callable[..., tuple[int, str, str]]
FULL = Path(__file__).parents[1] / "data" / "valid_schemas" / "full-featured"


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Run:
    """Parse and run `graph ...` through a parser built like crewbook.commands'."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    parser = argparse.ArgumentParser(prog="crewbook")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub, common)

    def call(*argv: str | Path) -> tuple[int, str, str]:
        args = parser.parse_args([str(a) for a in argv])
        capsys.readouterr()
        code = args.func(args)
        out, err = capsys.readouterr()
        return code, out, err

    return call


def test_register_works_with_one_argument_too() -> None:
    parser = argparse.ArgumentParser(prog="crewbook")
    register(parser.add_subparsers())
    args = parser.parse_args(["graph", "x", "-o", "x.svg", "--expand", "a", "--expand", "b"])
    assert (args.path, args.output, args.expand, args.collapse) == ("x", "x.svg", ["a", "b"], None)
    assert callable(args.func)


def test_a_schema_folder_prints_its_dot(run: Run, tour: Path) -> None:
    folder = tour / "_codev/schemas/lite"
    code, out, err = run("graph", folder)
    assert (code, err) == (0, "")
    assert out == crewbook.Project(tour).schema("lite").dot()
    assert run("graph", folder / "schema.yaml")[1] == out


def test_a_project_draws_its_default_or_named_schema(run: Run, tour: Path) -> None:
    assert run("graph", tour)[1].startswith('digraph "lite" {')
    assert run("graph", tour / "_codev", "--schema", "spec-driven")[1] == (
        crewbook.get_schema("spec-driven").dot())
    with pytest.raises(SchemaNotFoundError, match="did you mean 'lite'"):
        run("graph", tour, "--schema", "lit")


def test_a_built_in_schema_outside_any_project(run: Run, tmp_path: Path) -> None:
    code, out, _ = run("graph", tmp_path, "--schema", "spec-driven")
    assert code == 0
    assert 'label="schema spec-driven (built-in)"' in out
    with pytest.raises(ProjectNotFoundError):
        run("graph", tmp_path)


def test_a_broken_schema_is_drawn_and_its_problems_listed(run: Run, tour: Path) -> None:
    code, out, err = run("graph", tour / "_codev/schemas/research")
    assert code == 0
    assert '"findings" -> "recommendation" [color="#d50000"' in out
    assert '"missing:recomendation" -> "apply:gate"' in out
    assert err.startswith("crewbook graph: research is invalid (3 problems), drawn from its raw")
    assert "_codev/schemas/research/schema.yaml:10:16:" in err


def test_a_change(run: Run, tour: Path) -> None:
    expected = crewbook.Project(tour).status("add-csv-export").dot()
    assert run("graph", tour, "--change", "add-csv-export")[1] == expected
    folder = tour / "_codev/changes/add-csv-export"
    assert run("graph", "--change", folder)[1] == expected


def test_files_by_extension(run: Run, tour: Path, tmp_path: Path) -> None:
    code, out, _ = run("graph", tour, "-o", tmp_path / "lite.mmd")
    assert code == 0
    assert out.startswith(f"Wrote {tmp_path / 'lite.mmd'} (4 nodes, 3 edges)")
    assert (tmp_path / "lite.mmd").read_text().startswith("flowchart LR")
    run("graph", tour, "-o", tmp_path / "lite.dot")
    assert (tmp_path / "lite.dot").read_text().startswith('digraph "lite"')
    with pytest.raises(InvalidInputError, match="cannot tell what to write"):
        run("graph", tour, "-o", tmp_path / "lite.jpeg")


def test_mermaid_to_stdout_and_json(run: Run, tour: Path) -> None:
    assert run("graph", tour, "-f", "mmd")[1].startswith("flowchart LR\n")
    code, out, _ = run("graph", tour / "_codev/schemas/research", "--json")
    data = json.loads(out)
    assert code == 0
    assert (data["graph"], data["nodes"], data["format"]) == ("research", 5, "dot")
    assert [p["code"] for p in data["problems"]] == [
        "unknown_key", "dependency_cycle", "unknown_artifact"]
    assert data["text"].startswith('digraph "research"')


def test_collapse_flags(run: Run, tour: Path) -> None:
    assert "collapsed into" in run("graph", tour, "--collapse")[1]
    with options.override(collapse_threshold=3):
        assert "collapsed into" in run("graph", tour)[1]
        assert "collapsed into" not in run("graph", tour, "--no-collapse")[1]
        out = run("graph", tour, "--expand", "rank 0")[1]
        assert '"brief" -> "rank:' in out


def test_missing_dot_exits_1_with_the_hint(run: Run, tour: Path, tmp_path: Path,
                                           no_dot: None) -> None:
    code, out, err = run("graph", tour, "-o", tmp_path / "lite.svg")
    assert (code, out) == (1, "")
    assert err.startswith("crewbook graph: error: the Graphviz program")
    assert "brew install graphviz" in err
    assert not (tmp_path / "lite.svg").exists()
    assert run("graph", tour, "-f", "png")[0] == 1
    code, out, err = run("graph", tour, "-f", "svg", "--json")
    assert (code, err) == (1, "")
    assert json.loads(out)["error"]["type"] == "DotNotFoundError"


@pytest.mark.requires_dot
def test_svg_and_png_files(run: Run, tour: Path, tmp_path: Path) -> None:
    assert run("graph", tour, "-o", tmp_path / "lite.svg")[0] == 0
    assert "<svg" in (tmp_path / "lite.svg").read_text()
    assert run("graph", tour, "--change", "add-csv-export", "-o", tmp_path / "c.png")[0] == 0
    assert (tmp_path / "c.png").read_bytes().startswith(b"\x89PNG")
    code, out, _ = run("graph", tour, "-f", "svg")
    assert code == 0
    assert "<svg" in out


def test_through_crewbook_main(monkeypatch: pytest.MonkeyPatch, tour: Path,
                               capsys: pytest.CaptureFixture[str], no_dot: None) -> None:
    """Registered like every command: exit codes follow `crewbook.commands.main`."""
    import crewbook.commands
    assert crewbook.commands.main(["graph", str(tour)]) == 0
    assert capsys.readouterr().out.startswith('digraph "lite"')
    assert crewbook.commands.main(["graph", str(tour), "--schema", "nope"]) == 2
    assert "no schema named 'nope'" in capsys.readouterr().err
    assert crewbook.commands.main(["graph", str(tour), "-o", str(tour / "x.svg")]) == 1
    assert "apt-get install graphviz" in capsys.readouterr().err
    assert crewbook.commands.main(["--project", str(tour), "graph", "--json", str(tour)]) == 0
    assert json.loads(capsys.readouterr().out)["graph"] == "lite"


def test_model_for_path(tour: Path) -> None:
    model, problems = model_for_path(tour / "_codev/schemas/lite")
    assert (model.title, problems) == ("schema lite (project)", ())
    model, problems = model_for_path(tour / "_codev/schemas/research")
    assert [p.code for p in problems] == ["unknown_key", "dependency_cycle", "unknown_artifact"]
    assert problems[0].path == "_codev/schemas/research/schema.yaml", "relative to the project"
    model, _ = model_for_path(tour / "_codev/changes/add-csv-export")
    assert model.title == "schema lite (project)", "inside a project: its default schema"
    model, _ = model_for_path(tour, change="add-csv-export")
    assert model.name == "add-csv-export"
    model, _ = model_for_path(FULL)
    assert model.title == "schema full-featured (file)"
