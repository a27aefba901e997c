"""The one way a command writes the file a user named (`core.atomic.output_path`):
regular files replaced atomically, devices and FIFOs written in place, and nothing that
is not a regular file (a folder, a socket, the command's own input) ever replaced."""

from __future__ import annotations

import json
import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from crewbook.commands import main
from crewbook.core.atomic import OutputRefused, output_path, write_output

pytestmark = pytest.mark.skipif(os.name != "posix", reason="FIFOs and devices are POSIX")


def ledger(tmp_path: Path) -> Path:
    """A small valid crewbook ledger (two events)."""
    lines = [{"v": 1, "ts": f"2026-01-01T00:00:0{i}Z", "run": "r1", "seq": i, "loop": "crew",
              "kind": "report", "role": "developer", "summary": f"act {i}"} for i in (1, 2)]
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


@pytest.fixture
def fifo_reader(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    """A FIFO with a reader holding it open (no thread, no race), and the reader's fd."""
    path = tmp_path / "pipe"
    os.mkfifo(path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        yield path, fd
    finally:
        os.close(fd)


def test_a_regular_file_is_replaced_and_a_link_to_it_kept(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("old", encoding="utf-8")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    write_output(link, "new")
    assert link.is_symlink()
    assert real.read_text(encoding="utf-8") == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.txt", "real.txt"]


def test_a_failed_write_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("kept", encoding="utf-8")

    def half_then_fail() -> None:
        with output_path(target) as tmp:
            tmp.write_text("half", encoding="utf-8")
            raise ZeroDivisionError

    with pytest.raises(ZeroDivisionError):
        half_then_fail()
    assert target.read_text(encoding="utf-8") == "kept"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_a_fifo_with_a_reader_is_fed_and_stays_a_fifo(
        tmp_path: Path, fifo_reader: tuple[Path, int]) -> None:
    path, fd = fifo_reader
    assert main(["ledger", "import", str(ledger(tmp_path)), "-o", str(path)]) == 0
    assert stat.S_ISFIFO(os.stat(path).st_mode)
    assert os.read(fd, 1 << 16).count(b"\n") == 2  # the reader got both events


def test_a_fifo_without_a_reader_is_refused_at_once(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    assert main(["ledger", "import", str(ledger(tmp_path)), "-o", str(path)]) == 1
    assert "no process is reading this FIFO" in capsys.readouterr().err
    assert stat.S_ISFIFO(os.stat(path).st_mode)


def test_dev_null_is_written_in_place(tmp_path: Path) -> None:
    before = os.stat("/dev/null")
    assert main(["ledger", "import", str(ledger(tmp_path)), "-o", "/dev/null"]) == 0
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode)
    assert (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_a_full_device_is_a_clean_error(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ledger", "import", str(ledger(tmp_path)), "-o", "/dev/full"]) == 1
    assert "output_unwritable" in capsys.readouterr().err
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_folder_is_refused_with_an_error_document(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    assert main(["ledger", "import", str(ledger(tmp_path)), "-o", str(folder), "--json"]) == 1
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["problems"][0]["code"] == "output_is_folder"
    assert folder.is_dir()


def test_a_missing_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OutputRefused) as info:
        write_output(tmp_path / "nope" / "out.txt", "x")
    assert info.value.problems[0].code == "output_no_folder"
    assert not (tmp_path / "nope").exists()


def test_a_socket_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        with pytest.raises(OutputRefused) as info:
            write_output(path, "x")
        assert info.value.problems[0].code == "output_not_a_file"
        assert stat.S_ISSOCK(os.stat(path).st_mode)
    finally:
        server.close()


def test_export_onto_its_own_ledger_is_refused(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    source = ledger(tmp_path)
    before = source.read_bytes()
    assert main(["ledger", "export", str(source), "--otlp", "-o", str(source)]) == 1
    assert "output_is_input" in capsys.readouterr().err
    assert source.read_bytes() == before


def test_import_onto_its_own_source_is_refused(tmp_path: Path) -> None:
    source = ledger(tmp_path)
    before = source.read_bytes()
    assert main(["ledger", "import", str(source), "-o", str(source)]) == 1
    assert source.read_bytes() == before


def test_convert_onto_a_fifo_without_reader_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "pipe.parquet"
    os.mkfifo(path)
    assert main(["ledger", "convert", str(ledger(tmp_path)), "--to", "parquet",
                 "-o", str(path)]) == 1
    assert stat.S_ISFIFO(os.stat(path).st_mode)


def test_dash_writes_to_standard_output(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ledger", "export", str(ledger(tmp_path)), "--otlp", "-o", "-"]) == 0
    out = capsys.readouterr().out
    assert '"resourceSpans"' in out


def test_a_drawing_is_never_saved_over_a_folder(tmp_path: Path) -> None:
    from crewbook.draw.display import save
    from crewbook.draw.model import GraphModel

    folder = tmp_path / "g.dot"
    folder.mkdir()
    with pytest.raises(OutputRefused):
        save(GraphModel("g"), folder)
    assert folder.is_dir()


@pytest.mark.parametrize("kind", ["fifo", "socket", "dev-zero"])
def test_import_of_a_fifo_device_or_socket_is_refused(tmp_path: Path, kind: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.jsonl"
    server = None
    if kind == "fifo":
        source = tmp_path / "pipe"
        os.mkfifo(source)
    elif kind == "socket":
        source = tmp_path / "s"
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(source))
    else:
        source = Path("/dev/zero")
    try:
        assert main(["ledger", "import", str(source), "-o", str(out)]) == 1
    finally:
        if server is not None:
            server.close()
    assert "not_a_file" in capsys.readouterr().err
    assert not out.exists()
