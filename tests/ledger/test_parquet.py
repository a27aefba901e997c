"""Parquet folders and the DuckDB analyses: the same tables as pandas, on the same events."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from crewbook.errors import LedgerError
from crewbook.ledger import (
    PARQUET_SCHEMA,
    LedgerFolder,
    read_ledger,
    rework,
    run_outcomes,
    usage_by_role,
    verdict_funnel,
    write_parquet,
)
from crewbook.ledger.reader import COLUMNS
from crewbook.ledger.synthetic import write_big_ledger

from .conftest import DATA, HISTORY, SPECKIT_RUNS
from .test_analyses import A, B

pytest.importorskip("duckdb")


def same_analyses(frame: pd.DataFrame, folder: LedgerFolder) -> None:
    """Every analysis of the folder (DuckDB) equals the pandas one of the frame."""
    pd.testing.assert_frame_equal(run_outcomes(folder), run_outcomes(frame))
    pd.testing.assert_frame_equal(usage_by_role(folder), usage_by_role(frame))
    pd.testing.assert_frame_equal(usage_by_role(folder, by="role"),
                                  usage_by_role(frame, by="role"))
    pd.testing.assert_frame_equal(rework(folder), rework(frame))
    pd.testing.assert_frame_equal(verdict_funnel(folder), verdict_funnel(frame))


def test_the_schema_is_the_frame_columns() -> None:
    assert tuple(PARQUET_SCHEMA.names) == COLUMNS


def test_generated_ledgers_give_the_same_tables(tmp_path: Path) -> None:
    source = write_big_ledger(tmp_path / "big.jsonl", 3_000, seed=11)
    frame = read_ledger(source)
    files = write_parquet(source, tmp_path / "pq")
    assert len({f.parent.name for f in files}) > 1  # several days: several partitions
    assert all(f.parent.name.startswith("date=") for f in files)
    folder = LedgerFolder(tmp_path / "pq")
    assert len(folder) == len(frame)
    same_analyses(frame, folder)


def test_the_hand_made_history_gives_the_known_answers(tmp_path: Path) -> None:
    from crewbook.ledger import Ledger

    with Ledger(tmp_path / "A.jsonl", run="A", loop="coordinator") as a:
        for e in A:
            a.append(e)
    with Ledger(tmp_path / "B.jsonl", run="B", loop="crew") as b:
        for e in B:
            b.append(e)
    frame = read_ledger(tmp_path)
    write_parquet(tmp_path, tmp_path / "pq")
    folder = LedgerFolder(tmp_path / "pq")
    same_analyses(frame, folder)
    assert rework(folder).index.tolist() == [("A", "T-1"), ("B", "S1"), ("B", "S2")]


@pytest.mark.parametrize("source", [HISTORY, SPECKIT_RUNS], ids=["history", "speckit"])
def test_the_real_fixtures_give_the_same_tables(source: Path, tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = read_ledger(source)
    write_parquet(frame, tmp_path / "pq")
    same_analyses(frame, LedgerFolder(tmp_path / "pq"))


def test_a_frame_round_trips_through_the_schema(tmp_path: Path) -> None:
    frame = read_ledger(HISTORY)
    files = write_parquet(frame, tmp_path / "pq")
    table = pa.concat_tables([pq.read_table(f, partitioning=None) for f in files])
    assert table.schema.names == list(COLUMNS)
    assert table.num_rows == len(frame)
    assert sorted(table.column("payload").to_pylist())[0].startswith("{")


def test_a_folder_with_no_parquet_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LedgerError, match="no ledger") as info:
        LedgerFolder(tmp_path)
    assert info.value.problems[0].code == "parquet_no_files"
    assert info.value.problems[0].path == str(tmp_path)


def test_a_file_with_a_missing_or_wrong_column_is_named(tmp_path: Path) -> None:
    write_parquet(read_ledger(HISTORY), tmp_path)
    bad = tmp_path / "other.parquet"
    table = pq.read_table(next(tmp_path.rglob("events-*.parquet")), partitioning=None)
    table = table.drop_columns(["cost"]).set_column(1, "seq", table.column("seq").cast(
        pa.string()))
    pq.write_table(table, bad)
    with pytest.raises(LedgerError) as info:
        LedgerFolder(tmp_path)
    found = {(p.path, p.key, p.code) for p in info.value.problems}
    assert found == {(str(bad), "cost", "parquet_missing_column"),
                     (str(bad), "seq", "parquet_bad_column")}


def test_sql_over_the_events(tmp_path: Path) -> None:
    write_parquet(DATA / "history", tmp_path)
    folder = LedgerFolder(tmp_path)
    runs = folder.sql("SELECT count(DISTINCT run) AS n FROM events")["n"].iloc[0]
    assert runs == read_ledger(HISTORY)["run"].nunique()
    assert "LedgerFolder(" in repr(folder)
    assert "LedgerFolder" in folder._repr_html_()
