"""Hostile names on every command's path arguments and in files that name paths: a
clear error (exit 2 for arguments), never an OSError/ValueError traceback; FIFOs and
devices are named as what they are; a missing file under --json is the error document."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from crewbook.core.paths import checked_path, existing, inside, kind_of, read_capped
from crewbook.errors import CrewbookError, NotFoundError, UnsafePathError, UsageError

LONG = "x" * 300
TASKS = "# Tasks\n\n## One\n\n- [ ] 1.1 do it\n"


def _commands(tmp: Path, bad: str) -> list[list[str]]:
    return [
        ["validate", bad], ["validate", "--rules", bad], ["ledger", "summary", bad],
        ["diff", bad, str(tmp)], ["diff", str(tmp), bad], ["simulate", bad],
        ["review-policy", bad], ["review-policy", "-", "--policy", bad],
        ["crew", "status", "--project", bad], ["graph", bad],
        ["crew", "report", "analyst", "done", "x", "--payload-path", bad,
         "--project", str(tmp / "tour")],
    ]


@pytest.mark.parametrize("index", range(11))
@pytest.mark.parametrize("shape", ["part", "nested-part", "whole"])
def test_a_300_byte_name_on_any_path_argument_is_a_usage_error(
        tour: Path, tmp_path: Path, cli: Any, index: int, shape: str) -> None:
    bad = {"part": LONG, "nested-part": f"{tmp_path}/{LONG}/a.yaml",
           "whole": "/".join(["y" * 200] * 25)}[shape]
    argv = _commands(tmp_path, bad)[index]
    for extra in ([], ["--json"]):
        result = cli(*argv, *extra)
        assert result.code == 2, (argv, result)
        assert "Traceback" not in result.err
        if extra:
            doc = json.loads(result.out)
            assert doc["error"]["type"] == "UsageError", doc
            assert "bytes" in doc["error"]["message"]
        else:
            assert "over the limit" in result.err


@pytest.mark.parametrize("argv", [["validate", "{m}"], ["ledger", "summary", "{m}"],
                                  ["review-policy", "{m}"], ["simulate", "{m}"]])
def test_a_missing_file_under_json_is_the_error_document(tmp_path: Path, cli: Any,
                                                         argv: list[str]) -> None:
    result = cli(*[a.format(m=tmp_path / "nope.yaml") for a in argv], "--json")
    assert result.code == 2
    doc = json.loads(result.out)
    assert set(doc) == {"error"}
    assert set(doc["error"]) >= {"type", "message", "problems"}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_fifos_and_devices_are_named(tmp_path: Path, cli: Any) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    assert kind_of(fifo) == "FIFO"
    assert kind_of("/dev/null") == "character device"
    result = cli("validate", fifo, "--json")
    assert result.code == 1
    assert "it is a FIFO" in result.out
    result = cli("ledger", "summary", fifo, "--json")
    assert "it is a FIFO" in result.out
    result = cli("review-policy", "/dev/null")
    assert "character device" in result.err
    with pytest.raises(UsageError, match="is a FIFO, not a file"):
        existing(fifo, "--payload-path", want="file")
    with pytest.raises(CrewbookError, match="FIFO"):
        read_capped(fifo, 10)  # never blocks on a FIFO


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_payload_path_that_is_a_fifo_is_named(tour: Path, cli: Any) -> None:
    (tour / "_codev/changes/add-csv-export/tasks.md").write_text(TASKS)
    assert cli("crew", "init", "go", "--bar", "test=true", "--project", tour).code == 0
    os.mkfifo(tour / "payload.json")
    result = cli("crew", "report", "analyst", "done", "x", "--payload-path", "payload.json",
                 "--project", tour)
    assert result.code == 1
    assert "it is a FIFO, not a file" in result.err


@pytest.mark.parametrize("cwd", ["a\x00b", LONG, f"src/{LONG}"])
def test_a_hostile_bar_cwd_is_refused(tour: Path, cli: Any, cwd: str) -> None:
    (tour / "_codev/changes/add-csv-export/tasks.md").write_text(TASKS)
    bar = json.dumps({"test": {"command": "true", "cwd": cwd}})
    result = cli("crew", "init", "go", "--bar-json", bar, "--project", tour)
    assert result.code in (1, 2)
    assert "Traceback" not in result.err
    assert "cwd" in result.err


@pytest.mark.parametrize("cwd", ["a\\0b", LONG])
def test_a_hostile_stack_cwd_in_crew_yaml_is_refused(tour: Path, cli: Any, cwd: str) -> None:
    (tour / "_codev/changes/add-csv-export/tasks.md").write_text(TASKS)
    (tour / "_codev/crew.yaml").write_text(f'stacks:\n  - name: python\n    cwd: "{cwd}"\n')
    result = cli("loop", "init", "go", "--project", tour)
    assert result.code == 0
    result = cli("loop", "step", "--project", tour)  # plan
    result = cli("loop", "step", "--project", tour)  # implementation
    result = cli("loop", "step", "--project", tour)  # recette: the stack's cwd is used
    assert result.code in (1, 2), result
    assert "Traceback" not in result.err
    assert "cwd" in result.err


def test_a_300_character_schema_name_in_change_yaml(tour: Path, cli: Any) -> None:
    change = tour / "_codev/changes/add-csv-export/change.yaml"
    change.write_text(change.read_text().replace("schema: lite", f"schema: {'s' * 300}"))
    for argv in (["validate", change.parent], ["validate", tour], ["graph", change.parent]):
        result = cli(*argv)
        assert "Traceback" not in result.err
        assert result.code in (0, 1)
    result = cli("validate", change.parent, "--json")
    assert "cannot name a schema folder" in result.out


def test_the_helpers() -> None:
    with pytest.raises(UsageError, match="NUL"):
        checked_path("a\x00b")
    with pytest.raises(NotFoundError):
        existing("/no/such/file/here")
    with pytest.raises(UnsafePathError):
        inside(Path("/tmp"), "../etc/passwd", "x")
    with pytest.raises(UnsafePathError):
        inside(Path("/tmp"), "/etc/passwd", "x")
    assert inside(Path("/tmp"), "a/b", "x") == Path("/tmp").resolve() / "a/b"
    assert kind_of(LONG) == "missing"
    assert kind_of("a\x00b") == "missing"
