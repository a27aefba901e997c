"""What a newcomer meets first: a missing optional extra named in one line, a closed
pipe taken quietly, and a start-up that imports little."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from crewbook.commands import main

#: Runs `main(argv)` with the modules named in argv[1] (comma-separated) made missing.
WITHOUT = ("import sys\n"
           "for name in sys.argv[1].split(','): sys.modules[name] = None\n"
           "from crewbook.commands import main\n"
           "sys.exit(main(sys.argv[2:]))\n")


def run_without(modules: str, *argv: str, cwd: Path | None = None
                ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", WITHOUT, modules, *argv], cwd=cwd,
                          capture_output=True, text=True, check=False, timeout=120)


def test_mcp_without_its_extra_is_one_line_naming_what_to_install() -> None:
    done = run_without("mcp", "mcp")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert "pip install 'crewbook[mcp]'" in done.stderr
    assert done.stderr.startswith("crewbook: error: `crewbook mcp` needs the optional package")


def test_mcp_without_its_extra_with_json_is_one_json_document() -> None:
    import json

    done = run_without("mcp", "mcp", "--json")
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert error["type"] == "UsageError"
    assert "crewbook[mcp]" in error["message"]


def test_the_dask_executor_without_its_extra_names_the_extra(
        tour: Path, cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)
    result = cli("simulate", tour / "pipeline" / "role_pipeline.toml", "-n", "3",
                 "--executor", "dask")
    assert result.code == 2
    assert "pip install 'crewbook[dask]'" in result.err
    assert result.err.count("\n") == 1


def test_a_missing_notebook_package_names_the_notebook_extra() -> None:
    from crewbook.commands import missing_extra

    error = missing_extra(ModuleNotFoundError("no jupyterlab", name="jupyterlab.labapp"),
                          "tour")
    assert error is not None
    assert "pip install 'crewbook[notebook]'" in str(error)
    assert missing_extra(ModuleNotFoundError("x", name="crewbook.nothing"), "status") is None


def test_a_missing_module_that_is_no_extra_is_a_bug_and_shows(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Only optional extras become a one-line message; anything else is a real bug."""
    def broken(args: object) -> int:
        raise ModuleNotFoundError("No module named 'nothing_here'", name="nothing_here")

    import crewbook.commands.routing as routing

    monkeypatch.setattr(routing, "cmd_presets", broken)
    with pytest.raises(ModuleNotFoundError):
        main(["routing", "presets"])


def test_a_reader_that_left_the_pipe_is_no_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """`crewbook ... | head`: the write into a pipe whose reader is gone ends the command
    with status 0 and nothing on stderr, not a BrokenPipeError."""
    read, write = os.pipe()
    os.close(read)
    stdout = os.fdopen(write, "w")
    monkeypatch.setattr(sys, "stdout", stdout)
    try:
        assert main(["routing", "presets"]) == 0
    finally:
        stdout.close()


#: Prints, after `main(argv)`, the modules it imported (beyond Python's start-up), one a line.
IMPORTED = ("import sys\n"
            "before = set(sys.modules)\n"
            "from crewbook.commands import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print('\\n'.join(sorted(set(sys.modules) - before)), file=sys.stderr)\n")
HEAVY = ("pydantic", "pandas", "pyarrow", "numpy", "yaml", "graphviz", "matplotlib",
         "ipywidgets", "jsonschema", "jinja2", "duckdb")


def imported_by(*argv: str, cwd: Path | None = None) -> set[str]:
    done = subprocess.run([sys.executable, "-c", IMPORTED, *argv], cwd=cwd,
                          capture_output=True, text=True, check=True, timeout=120)
    return set(done.stderr.split())


def test_version_imports_only_the_errors_and_the_command_line() -> None:
    """`crewbook --version` answers from a handful of modules: no model, no parser of
    every command (benchmarks/startup.py times it)."""
    modules = imported_by("--version")
    ours = {m for m in modules if m.split(".")[0] == "crewbook"}
    assert ours <= {"crewbook", "crewbook.commands", "crewbook.commands._shared",
                    "crewbook.core", "crewbook.core.lazy", "crewbook.errors"}, sorted(ours)
    assert len(modules) < 90, sorted(modules)
    assert "difflib" not in modules  # only a "did you mean" needs it


def test_help_and_a_command_load_nothing_heavy_they_do_not_use(tour: Path) -> None:
    """`--help` builds every parser without a model, a frame or a drawing; `status`
    reads the project's files (pydantic, yaml) but loads no frame library."""
    found = imported_by("--help")
    assert [m for m in HEAVY if m in found] == []
    # the families' command groups come from their registry lines: no family is loaded
    from crewbook.families import FAMILIES

    assert [m for m in found if m.split(".")[:2] in (["crewbook", f] for f in FAMILIES)
            or m == "crewbook.core.family"] == []
    assert "crewbook.families" in found
    # the drawing layer: its settings (the formats `graph -o` lists) and the finding of
    # `dot`, no drawing
    assert sorted(m for m in found if m.startswith("crewbook.draw")) == [
        "crewbook.draw", "crewbook.draw.render", "crewbook.draw.settings"]
    found = imported_by("status", cwd=tour)
    assert [m for m in ("pandas", "pyarrow", "numpy", "graphviz", "matplotlib") if m in found] == []


def test_a_closed_pipe_keeps_the_status_of_a_finished_command(
        tour: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`crewbook validate . | head`: the problems were found before the reader left."""
    read, write = os.pipe()
    os.close(read)
    stdout = os.fdopen(write, "w")
    monkeypatch.setattr(sys, "stdout", stdout)
    try:
        assert main(["validate", str(tour)]) == 1
    finally:
        stdout.close()


def test_the_mcp_server_answers_initialize_before_loading_the_crew_loop() -> None:
    """The server is built (all that runs before ``initialize`` is answered) without the
    crew loop's modules: they load at the first tools/list or tools/call."""
    pytest.importorskip("mcp")
    code = ("import sys\n"
            "from crewbook.commands.mcp import build_server\n"
            "build_server(None)\n"
            "print(sorted(m for m in sys.modules if m.startswith('crewbook.crew')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120)
    assert done.stdout.strip() == "[]", done.stdout


def _refusal(parser: argparse.ArgumentParser, argv: list[str],
             capsys: pytest.CaptureFixture[str]) -> str:
    """What `parser` prints when it helps with or refuses `argv`, and its status."""
    with pytest.raises(SystemExit) as done:
        parser.parse_args(argv)
    captured = capsys.readouterr()
    return f"{done.value.code}\n{captured.out}\n{captured.err}"


def test_a_command_alone_parses_as_the_full_parser(capsys: pytest.CaptureFixture[str]
                                                   ) -> None:
    """`crewbook mcp ...` builds the parser of that command alone: the same help, the
    same refusals and the same arguments as with every command; ALONE names exactly the
    modules that add one command of their own name."""
    from importlib import import_module

    from crewbook.commands import ALONE, COMMANDS, FAMILY_GROUPS, build_parser
    from crewbook.commands._shared import common_options

    for name in (c for c in COMMANDS if c != FAMILY_GROUPS):  # the families' groups: many
        sub = argparse.ArgumentParser().add_subparsers()
        import_module(f"crewbook.commands.{name}").register(sub, common_options())
        assert (sorted(sub.choices) == [name]) == (name in ALONE), name
    full = build_parser()
    for name in ALONE:
        alone = build_parser(name)
        for argv in ([name, "--help"], [name, "--no-such-option"], [name, "-p"]):
            assert _refusal(alone, argv, capsys) == _refusal(full, argv, capsys), argv
    words = ["mcp", "--tool-prefix", "effortless_", "--project", "p", "--json"]
    assert vars(build_parser("mcp").parse_args(words)) == vars(full.parse_args(words))


def test_crewbook_mcp_builds_no_other_commands_parser() -> None:
    code = ("import sys\n"
            "from crewbook.commands import main\n"
            "try:\n"
            "    main(['mcp', '--help'])\n"
            "except SystemExit:\n"
            "    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('crewbook.commands.')),\n"
            "      file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120)
    assert done.stderr.strip() == "['crewbook.commands._shared', 'crewbook.commands.mcp']"
