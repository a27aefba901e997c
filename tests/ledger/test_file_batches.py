"""Small ledger files read in batches give what each file read alone gives: the same
rows in the same order, and every problem in its own file and line."""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crewbook.ledger import file_batches, read_ledger, validate_ledger
from crewbook.ledger._find import _order, find_ledgers
from crewbook.ledger.reader import PROBLEMS_ATTR, build_frame, read_one

from .conftest import event, line

#: Lines a file of a folder of runs may hold: valid events, and each kind of bad line.
LINES = st.sampled_from([
    line(event(1)), line(event(2, role="qa", kind="verdict", verdict="go")),
    line(event(3, payload={"a": [1, {"b": None}]})),
    '{"oops', "[1]", line({**event(4), "verdct": "go"}), line({**event(5), "seq": "x"}),
    line(event(6))[:30],  # cut short, a newline after it
    "", "   ",
])
#: How a file ends: its last line with a newline (batched), or cut (read alone).
ENDS = st.sampled_from(["\n", "\n", "\n", "", "\r\n"])


def _alone(folder: Path) -> tuple[pd.DataFrame, list[Any]]:
    """The folder read one file at a time (what the reader did before batches)."""
    parts = [read_one(path, shown, with_payload=True) for path, shown in find_ledgers(folder)]
    return build_frame(parts, "dict"), [p for part in parts for p in part.problems]


def _write(folder: Path, files: list[tuple[list[str], str]], bom: bool) -> None:
    """One file per (lines, ending); a byte-order mark on the first with `bom`."""
    for i, (lines, end) in enumerate(files):
        text = ("\ufeff" if bom and i == 0 else "") + "\n".join(lines) + (end if lines else "")
        (folder / f"run-{i:03d}.jsonl").write_text(text, encoding="utf-8")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(LINES, max_size=6), ENDS), min_size=1, max_size=12),
       st.integers(40, 2_000), st.booleans())
def test_a_folder_reads_as_its_files_read_alone(
        files: list[tuple[list[str], str]], batch: int, bom: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        folder = Path(tmp)
        _write(folder, files, bom)  # (a file with a mark is read alone)
        patch.setattr(file_batches, "BATCH", batch)  # batches of a file or of several
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frame = read_ledger(folder, errors="skip")
        expected, problems = _alone(folder)
        assert frame.attrs[PROBLEMS_ATTR] == problems
        pd.testing.assert_frame_equal(frame.astype(object), expected.astype(object))
        assert list(validate_ledger(folder).problems) == problems


def test_many_small_files_are_read_in_few_batches(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """300 files of 3 events: a few Arrow reads, not 300; every row and problem in place."""
    for i in range(300):
        lines = [line(event(3 * i + j, run=f"r{i}")) for j in range(3)]
        if i == 150:
            lines[1] = '{"v":1,"oops'
        (tmp_path / f"run-{i:03d}.jsonl").write_text("\n".join(lines) + "\n")
    reads: list[int] = []
    real = file_batches.arrow_read
    monkeypatch.setattr(file_batches, "arrow_read",
                        lambda *args: reads.append(1) or real(*args))
    with pytest.warns(UserWarning, match="1 line left out"):
        frame = read_ledger(tmp_path, errors="skip")
    assert len(frame) == 899
    assert frame["run"].tolist()[:4] == ["r0", "r0", "r0", "r1"]
    assert len(reads) == 1  # 300 files of 0.3 KB: one batch
    [problem] = frame.attrs[PROBLEMS_ATTR]
    assert (problem.path, problem.line) == (str(tmp_path / "run-150.jsonl"), 2)


def test_a_file_that_cannot_be_batched_is_read_alone_in_its_place(
        tmp_path: Path) -> None:
    """Empty, cut at its end, with a byte-order mark, or over `BATCH_FILE`: each read by
    the reader's own read of one file, between the batches before and after it."""
    big = [line(event(i, run="big", summary="x" * 200)) for i in range(1_400)]
    texts = {"a": line(event(1, run="a")) + "\n", "b": "", "c": line(event(1, run="c")),
             "d": "\ufeff" + line(event(1, run="d")) + "\n", "e": "\n".join(big) + "\n",
             "f": line(event(1, run="f")) + "\n"}
    for name, text in texts.items():
        (tmp_path / f"{name}.jsonl").write_text(text, encoding="utf-8")
    assert len(texts["e"]) > file_batches.BATCH_FILE
    assert [file_batches._small_ledger(tmp_path / f"{n}.jsonl") is not None
            for n in texts] == [True, False, False, False, False, True]
    with pytest.warns(UserWarning, match="no events"):
        frame = read_ledger(tmp_path)
    assert frame["run"].drop_duplicates().tolist() == ["a", "c", "d", "big", "f"]
    [empty] = frame.attrs[PROBLEMS_ATTR]
    assert (empty.code, empty.path) == ("ledger_empty", str(tmp_path / "b.jsonl"))


@given(st.lists(st.lists(st.sampled_from(["a", "B", "b", "a b", "é", "_", "a.jsonl", "10",
                                          "9"]), min_size=1, max_size=4), max_size=30))
def test_paths_sort_in_their_own_order(parts: list[list[str]]) -> None:
    paths = [Path("/root", *p) for p in parts]
    assert sorted(paths, key=_order) == sorted(paths)
