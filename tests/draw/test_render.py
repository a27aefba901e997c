"""Running `dot`: formats, the missing-program error, failures, timeouts and the cache."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from crewbook.draw import DotError, DotNotFoundError, options, render, render_svg
from crewbook.draw.render import dot_available, find_dot
from crewbook.errors import CrewbookError, InvalidInputError

SMALL = 'digraph "g" { "a" -> "b" }\n'


def fake_dot(tmp_path: Path, body: str) -> str:
    """A shell script standing in for `dot`; returns its absolute path."""
    script = tmp_path / "fake-dot"
    script.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


@pytest.mark.requires_dot
def test_renders_svg_and_png() -> None:
    svg = render_svg(SMALL)
    assert "<svg" in svg
    assert "<title>a&#45;&gt;b</title>" in svg
    assert render(SMALL, "png").startswith(b"\x89PNG")


def test_missing_dot_is_a_clear_crewbook_error(no_dot: None) -> None:
    assert find_dot() is None
    assert not dot_available()
    with pytest.raises(DotNotFoundError) as info:
        render_svg(SMALL)
    assert isinstance(info.value, CrewbookError)
    assert isinstance(info.value, FileNotFoundError)
    message = str(info.value)
    for hint in ("apt-get install graphviz", "brew install graphviz", "conda install graphviz"):
        assert hint in message


def test_a_program_name_is_looked_up_on_path(monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert find_dot() is None
    fake = Path(fake_dot(tmp_path, "cat"))
    fake.rename(tmp_path / "dot")
    assert find_dot() == str(tmp_path / "dot")


def test_unknown_format_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="cannot render format 'gif'"):
        render(SMALL, "gif")


def test_failure_reports_the_exit_status_and_message(tmp_path: Path) -> None:
    options.dot_program = fake_dot(tmp_path, "echo 'syntax error in line 1' >&2; exit 3")
    with pytest.raises(DotError, match=r"dot failed \(exit 3\): syntax error in line 1"):
        render_svg(SMALL)


def test_a_slow_dot_is_stopped(tmp_path: Path) -> None:
    options.dot_program = fake_dot(tmp_path, "exec sleep 10")
    with pytest.raises(DotError, match=r"longer than 0\.3 s"):
        render_svg(SMALL, timeout=0.3)


def test_results_are_cached_by_text(tmp_path: Path) -> None:
    log = tmp_path / "calls"
    options.dot_program = fake_dot(tmp_path, f"echo run >> {log}; echo '<svg/>'")
    assert render_svg(SMALL) == "<svg/>\n"
    assert render_svg(SMALL) == "<svg/>\n"
    assert log.read_text().count("run") == 1
    render_svg(SMALL + "\n")
    assert log.read_text().count("run") == 2


@pytest.mark.requires_dot
def test_invalid_dot_text_is_a_dot_error() -> None:
    with pytest.raises(DotError, match="syntax error"):
        render_svg("digraph { a -> }")
