"""Edges of the command line: a loop of links where a path is expected, and the message
of a name that cannot be a file."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic_core import PydanticCustomError

from crewbook.crew.model import safe_name

pytestmark = pytest.mark.skipif(os.name != "posix", reason="links, pipes and fork are POSIX")


@pytest.mark.parametrize("argv", [["--project", "{loop}", "status"],
                                  ["graph", "{loop}"],
                                  ["--project", "{loop}", "archive", "x"]])
def test_a_loop_of_links_is_a_usage_error(tmp_path: Path, cli: Callable[..., Any],
                                          argv: list[str]) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(loop)
    result = cli(*[a.replace("{loop}", str(loop)) for a in argv])
    assert result.code == 2, result.err
    assert "loop of links" in result.err


def test_the_unsafe_name_message_shows_the_name() -> None:
    with pytest.raises(PydanticCustomError) as info:
        safe_name("../../x", "run")
    text = str(info.value)
    assert "'../../x'" in text
    assert "{shown" not in text


def _loop_of_links(at: Path) -> Path:
    at.symlink_to(at.with_name(at.name + "-2"))
    at.with_name(at.name + "-2").symlink_to(at)
    return at


@pytest.mark.parametrize("argv", [["status", "--change", "{name}"],
                                  ["status", "--change", "{path}"],
                                  ["archive", "{name}"]])
def test_a_change_that_is_a_loop_of_links_is_named_so(
        tour: Path, cli: Callable[..., Any], argv: list[str]) -> None:
    loop = _loop_of_links(tour / "_codev" / "changes" / "looped")
    result = cli("--project", tour, *[a.format(name="looped", path=loop) for a in argv])
    assert result.code == 2, result.err
    assert "loop of links" in result.err
    assert "Traceback" not in result.err


@pytest.mark.parametrize(("where", "kind"), [("_codev/crew/.lock", "folder"),
                                             ("_codev/crew/crew.jsonl", "folder"),
                                             ("_codev/crew/crew.jsonl", "FIFO"),
                                             ("_codev/crew/.lock", "loop")])
@pytest.mark.parametrize("command", [["crew", "report", "analyst", "done", "framed"],
                                     ["crew", "status", "--json"]])
def test_a_crew_file_that_is_not_a_file_is_a_named_error(
        tour: Path, cli: Callable[..., Any], where: str, kind: str, command: list[str]) -> None:
    """Never ``IsADirectoryError`` or ``Illegal seek``: the path and what is expected."""
    (tour / "_codev/changes/add-csv-export/tasks.md").write_text("# Tasks\n\n## A\n\n- [ ] 1.1 x\n")
    assert cli("--project", tour, "crew", "init", "goal", "--bar", "test=true").code == 0
    target = tour / where
    target.unlink(missing_ok=True)
    if kind == "folder":
        target.mkdir()
    elif kind == "FIFO":
        os.mkfifo(target)
    else:
        _loop_of_links(target)
    result = cli("--project", tour, *command)
    assert result.code == 1, result.err
    text = result.out + result.err
    assert "not_a_file" in text
    assert str(target) in text
    assert "must be a regular file" in text


CLI_CODE = "import sys; from crewbook.commands import main; sys.exit(main(sys.argv[1:]))"


@pytest.mark.parametrize("closed", [">&-", ">&- 2>&-"])
@pytest.mark.parametrize(("argv", "status"), [(["status"], 0), (["status", "--json"], 0),
                                              (["status", "--change", "nope"], 2)])
def test_a_closed_standard_output_is_no_traceback(
        tour: Path, closed: str, argv: list[str], status: int) -> None:
    """Started with its output closed (``>&-``), crewbook drops what it would print and
    keeps its exit status, as for a reader that left the pipe."""
    done = subprocess.run(["sh", "-c", f'"$@" {closed}', "sh", sys.executable, "-c",
                           CLI_CODE, "--project", str(tour), *argv],
                          capture_output=True, timeout=120, check=False)
    assert done.returncode == status, done.stderr
    assert b"Traceback" not in done.stderr
    assert done.stdout == b""


@pytest.mark.parametrize("source", ["auto", "otlp", "codex", "claude-code", "openhands"])
@pytest.mark.parametrize("text", ["[" * 100_000, '{"a": ' * 100_000])
def test_json_nested_too_deep_is_a_clear_import_error(
        tmp_path: Path, cli: Callable[..., Any], source: str, text: str) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text(text + "\n", encoding="utf-8")
    result = cli("ledger", "import", deep, "--from", source, "-o", tmp_path / "out.jsonl")
    assert result.code == 1, result.err
    assert "import_too_deep" in result.err
    assert str(deep) in result.err
    assert not (tmp_path / "out.jsonl").exists()
