"""The reader: dtypes, cut and bad lines, folders, payload modes, Parquet, validation."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from crewbook.errors import LedgerError
from crewbook.ledger import (
    KINDS,
    LedgerWarning,
    file_blocks,
    read_ledger,
    to_parquet,
    validate_ledger,
)
from crewbook.ledger.reader import COLUMNS, PROBLEMS_ATTR, empty_frame

from .conftest import HISTORY, event, line

Writer = Callable[..., Path]

DTYPES = {
    "run": "category", "seq": "Int64", "ts": "datetime64[ns, UTC]", "loop": "category",
    "kind": "category", "role": "category", "stage": "category", "verdict": "category",
    "attempt": "Int64", "version": "Int64", "summary": "str", "tokens_in": "Int64",
    "tokens_out": "Int64", "cost": "float64", "duration_ms": "Int64", "payload": "payload",
}


def quietly(source: Any, **kwargs: Any) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LedgerWarning)
        return read_ledger(source, **kwargs)


@pytest.mark.parametrize("frame", [pytest.param("history", id="history"),
                                   pytest.param("empty", id="empty")])
def test_columns_and_dtypes_are_stable(frame: str, write_ledger: Writer) -> None:
    if frame == "history":
        df = read_ledger(HISTORY)
    else:
        with pytest.warns(LedgerWarning, match="no events"):
            df = read_ledger(write_ledger([]))
    assert tuple(df.columns) == COLUMNS
    assert {c: str(t) for c, t in df.dtypes.items()} == DTYPES
    assert list(df["kind"].cat.categories) == list(KINDS)
    for name in ("run", "loop", "role", "stage", "verdict"):
        cats = list(df[name].cat.categories)
        assert cats == sorted(cats)
    assert tuple(empty_frame().columns) == COLUMNS


def test_categories_are_the_values_seen_sorted_as_python_sorts_them(
        write_ledger: Writer, monkeypatch: pytest.MonkeyPatch) -> None:
    # code point order, whatever the letters; spread over blocks, each value once
    monkeypatch.setattr(file_blocks, "file_block", lambda size: 16 << 10)
    names = ["r-é", "R-2", "r-10", "r-2", "r-ω", "r-Ω", "r-😀", "r-z", "r-10"]
    events = [event(n, run=names[n % len(names)], stage=f"s{n % 7}") for n in range(4000)]
    df = read_ledger(write_ledger(events))
    assert list(df["run"].cat.categories) == sorted(set(names))
    assert df["run"].astype(str).tolist() == [e["run"] for e in events]
    assert list(df["stage"].cat.categories) == sorted({f"s{n}" for n in range(7)})


def test_a_folder_of_runs_is_one_frame_with_a_run_column() -> None:
    df = read_ledger(HISTORY)
    files = sorted(HISTORY.glob("*.jsonl"))
    assert len(df) == sum(len(f.read_text().splitlines()) for f in files)
    assert df["run"].astype(str).unique().tolist() == [f.stem for f in files]
    assert df.attrs[PROBLEMS_ATTR] == []
    assert df.attrs["crewbook_sources"] == [str(f) for f in files]
    same = read_ledger([str(f) for f in files])
    pd.testing.assert_frame_equal(df, same)


def test_values_are_read_as_written(write_ledger: Writer) -> None:
    path = write_ledger([event(0, kind="report", verdict="done", attempt=2, version=3,
                               summary="built it", tokens_in=1200, tokens_out=300,
                               cost=0.0105, duration_ms=61000,
                               payload={"task": "T-1", "files": ["a.py"], "n": {"x": 1}}),
                         event(1, ts="2025-03-01T11:00:01+02:00")])
    df = read_ledger(path)
    first = df.iloc[0]
    assert first["ts"] == pd.Timestamp("2025-03-01T09:00:00Z")
    assert (first["kind"], first["verdict"], first["attempt"], first["version"]) == (
        "report", "done", 2, 3)
    assert (first["tokens_in"], first["tokens_out"], first["duration_ms"]) == (1200, 300, 61000)
    assert first["cost"] == pytest.approx(0.0105)
    assert first["payload"] == {"task": "T-1", "files": ["a.py"], "n": {"x": 1}}
    assert df.iloc[1]["ts"] == pd.Timestamp("2025-03-01T09:00:01Z")
    assert df.iloc[1]["payload"] == {}
    assert pd.isna(df.iloc[1]["verdict"])
    assert pd.isna(df.iloc[1]["tokens_in"])


def test_payloads_keep_only_their_own_keys(write_ledger: Writer) -> None:
    path = write_ledger([event(0, payload={"a": 1, "nested": [{"x": 1}]}),
                         event(1, payload={"b": "two", "nested": [{"y": 2}]}),
                         event(2)])
    assert read_ledger(path)["payload"].tolist() == [
        {"a": 1, "nested": [{"x": 1}]}, {"b": "two", "nested": [{"y": 2}]}, {}]


def test_payload_keys_that_change_type_still_read_exactly(write_ledger: Writer) -> None:
    path = write_ledger([event(i, payload={"v": i if i % 2 else str(i)}) for i in range(600)])
    assert read_ledger(path)["payload"].tolist() == [
        {"v": i if i % 2 else str(i)} for i in range(600)]


def test_payload_modes(write_ledger: Writer) -> None:
    path = write_ledger([event(0, payload={"task": "T-1", "bar": {"test": 0}}),
                         event(1, payload={"task": "T-2"})])
    flat = read_ledger(path, payload="flat")
    assert flat["payload.task"].tolist() == ["T-1", "T-2"]
    assert flat["payload.bar.test"].iloc[0] == 0
    assert pd.isna(flat["payload.bar.test"].iloc[1])
    none = read_ledger(path, payload="none")
    assert "payload" not in none.columns
    assert len(none) == 2
    with pytest.raises(ValueError, match="payload must be"):
        read_ledger(path, payload="json")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="errors must be"):
        read_ledger(path, errors="ignore")  # type: ignore[arg-type]


def test_a_cut_last_line_loads_the_rest_and_warns(write_ledger: Writer) -> None:
    lines = [line(event(i)) for i in range(5)]
    path = write_ledger([*lines[:4], lines[4][:30]], end="")
    with pytest.warns(LedgerWarning, match="the last line was cut short") as caught:
        df = read_ledger(path)
    assert df["seq"].tolist() == [0, 1, 2, 3]
    [problem] = df.attrs[PROBLEMS_ATTR]
    assert (problem.code, problem.line, problem.severity) == ("ledger_truncated_line", 5,
                                                              "warning")
    assert str(path) in str(caught[0].message)
    assert list(validate_ledger(path)) == [problem]


def test_a_cut_character_is_still_a_cut_line(write_ledger: Writer) -> None:
    text = line(event(0)) + "\n" + line(event(1, summary="café"))
    path = write_ledger([])
    path.write_bytes(text.encode()[:-len('é"}') + 1])
    assert [p.code for p in validate_ledger(path)] == ["ledger_truncated_line"]


@pytest.mark.parametrize(("bad", "code", "key"), [
    ("{not json", "ledger_bad_json", None),
    ('{"a":1}}', "ledger_bad_json", None),
    (line(event(2)) + " " + line(event(3)), "ledger_bad_json", None),  # two on one line
    ('{"v":1,"seq":2,"seq":3}', "ledger_bad_json", "seq"),
    ("[1, 2]", "ledger_bad_event", None),
    (line(event(2, verdit="go")), "ledger_bad_event", "verdit"),
    (line(event(2, seq=1.5)), "ledger_bad_event", "seq"),
    (line(event(2, kind="verdict", role="qa")), "ledger_bad_event", "verdict"),
    (line(event(2, kind="acts")), "ledger_bad_event", "kind"),
    (line(event(2, cost=-1)), "ledger_bad_event", "cost"),
    (line(event(2, v=2)), "ledger_bad_event", "v"),
    (line(event(2, ts="yesterday")), "ledger_bad_event", "ts"),
    (line(event(2, payload=[1])), "ledger_bad_event", "payload"),
])
def test_a_bad_middle_line_raises_or_is_skipped(write_ledger: Writer, bad: str, code: str,
                                               key: str | None) -> None:
    path = write_ledger([event(0), event(1), bad, event(3), event(4)])
    with pytest.raises(LedgerError) as info:
        read_ledger(path)
    assert info.value.codes == [code]
    [problem] = info.value.problems
    assert (problem.path, problem.line, problem.key) == (str(path), 3, key)
    assert f"{path}:3" in str(info.value)
    assert "errors='skip'" in str(info.value)
    with pytest.warns(LedgerWarning, match="1 line"):
        df = read_ledger(path, errors="skip")
    assert df["seq"].tolist() == [0, 1, 3, 4]
    assert df.attrs[PROBLEMS_ATTR] == [problem]
    assert list(validate_ledger(path)) == [problem]


def test_every_bad_line_is_reported_at_once(write_ledger: Writer) -> None:
    lines: list[dict[str, Any] | str] = [event(i) for i in range(2000)]
    lines[17] = "oops"
    lines[1500] = line(event(1500, seq=-3))
    lines[1999] = line(event(1999, kind="verdict", role="qa"))
    path = write_ledger(lines)
    with pytest.raises(LedgerError) as info:
        read_ledger(path)
    assert [(p.line, p.code) for p in info.value.problems] == [
        (18, "ledger_bad_json"), (1501, "ledger_bad_event"), (2000, "ledger_bad_event")]
    df = quietly(path, errors="skip")
    assert len(df) == 1997


def test_line_numbers_count_blank_lines(write_ledger: Writer) -> None:
    path = write_ledger([event(0), "", "   ", event(1), "", line(event(2, seq=-1)),
                         event(3)])
    with pytest.raises(LedgerError) as info:
        read_ledger(path)
    assert [p.line for p in info.value.problems] == [6]
    assert quietly(path, errors="skip")["seq"].tolist() == [0, 1, 3]


def test_a_sealed_cut_line_in_the_middle_is_a_warning(write_ledger: Writer) -> None:
    path = write_ledger([event(0), line(event(1))[:40], event(2)])
    with pytest.warns(LedgerWarning, match="line 2 was cut short"):
        df = read_ledger(path)  # errors="raise", yet no error: a crash is not corruption
    assert df["seq"].tolist() == [0, 2]


def test_bom_crlf_and_a_missing_final_newline_are_fine(write_ledger: Writer) -> None:
    path = write_ledger([])
    path.write_bytes(b"\xef\xbb\xbf" + b"\r\n".join(line(event(i)).encode() for i in range(3)))
    assert read_ledger(path)["seq"].tolist() == [0, 1, 2]


def test_non_utf8_is_a_bad_line(write_ledger: Writer) -> None:
    path = write_ledger([])
    path.write_bytes(line(event(0)).encode() + b'\n{"v":1,"run":"\xe9"}\n'
                     + line(event(2)).encode() + b"\n")
    [problem] = validate_ledger(path)
    assert (problem.code, problem.line) == ("ledger_bad_json", 2)
    assert "UTF-8" in problem.message


def test_missing_paths_are_one_error(tmp_path: Path) -> None:
    with pytest.raises(LedgerError) as info:
        read_ledger([tmp_path / "nope.jsonl", tmp_path / "gone"])
    assert info.value.codes == ["file_not_found", "file_not_found"]
    assert validate_ledger(tmp_path / "nope.jsonl")[0].code == "file_not_found"


def test_a_big_file_with_one_bad_line_is_found_by_bisection(write_ledger: Writer) -> None:
    lines: list[dict[str, Any] | str] = [event(i, payload={"i": i}) for i in range(20_000)]
    lines[13_337] = line(event(13_337))[:-1] + ',"bogus":1}'
    path = write_ledger(lines)
    with pytest.raises(LedgerError) as info:
        read_ledger(path)
    [problem] = info.value.problems
    assert (problem.line, problem.key) == (13_338, "bogus")
    df = quietly(path, errors="skip")
    assert len(df) == 19_999
    assert df["payload"].iloc[-1] == {"i": 19_999}


def test_parquet_round_trip(tmp_path: Path) -> None:
    df = read_ledger(HISTORY)
    out = to_parquet(df, tmp_path / "out" / "history.parquet")
    back = read_ledger(out)
    pd.testing.assert_frame_equal(back, df)


def test_duckdb_query_over_a_folder_of_parquet(tmp_path: Path) -> None:
    duckdb = pytest.importorskip("duckdb")
    for path in sorted(HISTORY.glob("*.jsonl")):
        to_parquet(read_ledger(path), tmp_path / "parquet" / f"{path.stem}.parquet")
    # the query documented in docs/ledger.md
    query = f"""
        SELECT loop,
               count(DISTINCT run)                               AS runs,
               count(*) FILTER (kind = 'verdict' AND verdict = 'no-go') AS qa_no_go,
               sum(tokens_in + tokens_out)                       AS tokens,
               round(sum(cost), 2)                               AS cost
        FROM read_parquet('{tmp_path}/parquet/**/*.parquet')
        GROUP BY loop ORDER BY loop
    """
    rows = duckdb.sql(query).fetchall()
    df = read_ledger(HISTORY)
    expected = []
    for loop, group in df.groupby("loop", observed=True):
        no_go = ((group["kind"] == "verdict") & (group["verdict"] == "no-go")).sum()
        tokens = (group["tokens_in"] + group["tokens_out"]).sum()
        expected.append((loop, group["run"].nunique(), no_go, tokens,
                         round(group["cost"].sum(), 2)))
    assert rows == expected
    tasks = duckdb.sql(f"""
        SELECT json_extract_string(payload, '$.task') AS task, count(*) AS events
        FROM read_parquet('{tmp_path}/parquet/*.parquet')
        WHERE json_extract_string(payload, '$.task') IS NOT NULL
        GROUP BY task ORDER BY events DESC LIMIT 1
    """).fetchall()
    assert tasks
    assert tasks[0][1] > 1


def test_warnings_list_problems_with_file_and_line(write_ledger: Writer) -> None:
    path = write_ledger([event(0), "junk", event(2)])
    with pytest.warns(LedgerWarning) as caught:
        read_ledger(path, errors="skip")
    message = str(caught[0].message)
    assert f"{path}:2" in message
    assert "crewbook_problems" in message


def test_json_lines_written_by_hand_with_every_field(write_ledger: Writer) -> None:
    obj = json.loads((HISTORY / "run-0002.jsonl").read_text().splitlines()[2])
    path = write_ledger([obj])
    assert read_ledger(path).iloc[0]["payload"] == obj["payload"]


def test_a_timestamp_out_of_range_is_a_bad_line(write_ledger: Writer) -> None:
    path = write_ledger([event(0), event(1, ts="3000-01-01T00:00:00Z"), event(2)])
    [problem] = validate_ledger(path)
    assert (problem.line, problem.key, problem.code) == (2, "ts", "ledger_bad_event")
    assert "out of range" in problem.message
