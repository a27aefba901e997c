"""``crewbook ledger summary|convert`` through `register`, and ``crewbook validate`` on ledgers."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from crewbook.commands.ledger import register
from crewbook.ledger import read_ledger, validate_ledger
from ledger.conftest import HISTORY, SPECKIT_RUNS, event, line

EVENTS = sum(len(p.read_text().splitlines()) for p in HISTORY.glob("*.jsonl"))


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="crewbook")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


@pytest.fixture
def history(tmp_path: Path) -> Path:
    return Path(shutil.copytree(HISTORY, tmp_path / "history"))


def test_summary_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["ledger", "summary", str(HISTORY)]) == 0
    out = capsys.readouterr()
    lines = out.out.splitlines()
    assert lines[0] == f"3 files, {EVENTS} events, 3 runs (crew 2, coordinator 1)"
    assert lines[1].startswith("from 2025-03-03T")
    assert " to 2025-03-03T" in lines[1]
    assert ("finished: failed 1, rounds_exhausted 1, scope_covered 1; not finished: 0; "
            "escalated: 1") in out.out
    assert "tokens:" in out.out
    assert out.err == ""


def test_summary_json_covers_spec_kit_runs_too(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["ledger", "summary", str(HISTORY), str(SPECKIT_RUNS), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["files"], data["runs"], data["events"]) == (5, 5, EVENTS + 35)
    assert data["loops"] == {"crew": 2, "coordinator": 1, "spec-kit": 2}
    assert data["finished"] == {"completed": 1, "failed": 2, "rounds_exhausted": 1,
                                "scope_covered": 1}
    assert data["problems"] == []
    df = read_ledger([HISTORY, SPECKIT_RUNS])
    assert data["tokens_in"] == int(df["tokens_in"].sum())


def test_summary_reports_bad_lines_and_exits_1(history: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = history / "run-0001.jsonl"
    lines = path.read_text().splitlines()
    lines[4] = "{oops"
    path.write_text("\n".join(lines) + "\n" + line(event(99))[:15])
    assert run(["ledger", "summary", str(history)]) == 1
    out = capsys.readouterr()
    assert "1 bad line skipped, 1 warning (listed" in out.out  # counts in words
    assert f"{path}:5:2: not JSON" in out.err
    assert "ledger_truncated_line" in out.err
    assert run(["ledger", "summary", str(history), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [(p["code"], p["line"]) for p in data["problems"]] == [
        ("ledger_bad_json", 5), ("ledger_truncated_line", len(lines) + 1)]


def test_summary_refuses_a_line_with_a_key_that_is_not_a_field(
        history: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A typo in a key (here ``verdct``) makes the line invalid: the summary does not
    count it, names the key and its line, and exits 1, as validation does."""
    path = history / "run-0001.jsonl"
    lines = path.read_text().splitlines()
    lines[2] = lines[2][:-1] + ',"verdct":"go"}'
    path.write_text("\n".join(lines) + "\n")
    assert run(["ledger", "summary", str(history), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["events"] == EVENTS - 1
    assert [(p["code"], p["line"], p["key"]) for p in data["problems"]] == [
        ("ledger_bad_event", 3, "verdct")]
    assert "verdict" in data["problems"][0]["message"]  # did you mean
    assert [p.key for p in validate_ledger(path).errors] == ["verdct"]


def test_summary_says_when_tokens_and_cost_were_not_recorded(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["ledger", "summary", str(SPECKIT_RUNS)]) == 0
    assert "tokens: not recorded; cost not recorded" in capsys.readouterr().out
    assert run(["ledger", "summary", str(SPECKIT_RUNS), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["tokens_in"], data["tokens_out"], data["cost"]) == (None, None, None)
    assert run(["ledger", "summary", str(HISTORY), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tokens_out"] == int(
        read_ledger(HISTORY)["tokens_out"].sum())


def test_summary_of_a_missing_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a path that does not exist is a usage error (2), as in every command
    assert run(["ledger", "summary", str(tmp_path / "nope.jsonl")]) == 2
    assert "file_not_found" in capsys.readouterr().err


def test_convert_one_file(history: Path, tmp_path: Path,
                          capsys: pytest.CaptureFixture[str]) -> None:
    source = history / "run-0002.jsonl"
    assert run(["ledger", "convert", str(source), "--to", "parquet"]) == 0
    target = source.with_suffix(".parquet")
    assert f"wrote {target}" in capsys.readouterr().out
    pd.testing.assert_frame_equal(read_ledger(target), read_ledger(source))
    out = tmp_path / "elsewhere" / "x.parquet"
    assert run(["ledger", "convert", str(source), "--to", "parquet", "-o", str(out)]) == 0
    assert out.is_file()


def test_convert_a_folder_keeps_relative_names(history: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(SPECKIT_RUNS, history / "speckit")
    out = tmp_path / "parquet"
    assert run(["ledger", "convert", str(history), "--to", "parquet", "-o", str(out),
                "--json"]) == 0
    written = json.loads(capsys.readouterr().out)["written"]
    assert sorted(Path(w["output"]).relative_to(out).as_posix() for w in written) == [
        "run-0001.parquet", "run-0002.parquet", "run-0003.parquet",
        "speckit/3f9a1c2e.parquet", "speckit/b71e04d9.parquet"]
    assert len(read_ledger(sorted(out.rglob("*.parquet")))) == EVENTS + 35


def test_convert_with_nothing_to_convert_says_so(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("not a ledger")
    assert run(["ledger", "convert", str(tmp_path), "--to", "parquet"]) == 1
    err = capsys.readouterr().err
    assert f"{tmp_path}: no ledger here" in err
    assert "[no_ledger]" in err
    assert list(tmp_path.iterdir()) == [tmp_path / "notes.txt"]


def test_convert_refuses_a_ledger_with_bad_lines_unless_told(
        history: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = history / "run-0003.jsonl"
    path.write_text(path.read_text() + "junk\n")
    assert run(["ledger", "convert", str(path), "--to", "parquet"]) == 1
    err = capsys.readouterr().err
    assert f"{path}:" in err
    assert "--errors skip" in err
    assert not path.with_suffix(".parquet").exists()
    assert run(["ledger", "convert", str(path), "--to", "parquet", "--errors", "skip"]) == 1
    assert path.with_suffix(".parquet").exists()


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["ledger"], ["ledger", "convert", "x.jsonl"],
                 ["ledger", "convert", "x.jsonl", "--to", "csv"]):
        with pytest.raises(SystemExit) as info:
            run(argv)
        assert info.value.code == 2
    capsys.readouterr()


def test_validate_ledger_lists_every_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text("\n".join([line(event(0)), "nope", line(event(2, seq=-1)),
                               line(event(3))[:20]]))
    problems = validate_ledger(path)
    assert [(p.code, p.line, p.severity) for p in problems] == [
        ("ledger_bad_json", 2, "error"), ("ledger_bad_event", 3, "error"),
        ("ledger_truncated_line", 4, "warning")]
    assert list(validate_ledger(SPECKIT_RUNS / "3f9a1c2e" / "log.jsonl")) == []


def test_through_the_crewbook_command(history: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    import crewbook.commands as cli

    bad = history / "run-0001.jsonl"
    bad.write_text(bad.read_text() + "nope\n")
    assert cli.main(["validate", str(history / "run-0002.jsonl")]) == 0
    assert cli.main(["validate", str(bad)]) == 1
    assert "ledger_bad_json" in capsys.readouterr().out
    one = str(history / "run-0002.jsonl")
    assert cli.main(["ledger", "summary", one, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"] == 1
    assert cli.main(["--json", "ledger", "summary", one]) == 0  # the shared --json
    assert json.loads(capsys.readouterr().out)["events"] > 0
    assert cli.main(["ledger", "summary", str(bad)]) == 1
    assert "not JSON" in capsys.readouterr().err
    assert cli.main(["ledger", "convert", one, "--to", "parquet"]) == 0
    assert (history / "run-0002.parquet").is_file()


def test_summary_of_many_runs_none_finished(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 12: past 127 runs without a `finish`, a dtype mismatch crashed the summary."""
    path = tmp_path / "many.jsonl"
    path.write_text("".join(json.dumps(
        {"v": 1, "ts": "2025-03-01T09:00:00Z", "run": f"r{i}", "seq": 0, "loop": "crew",
         "kind": "init"}) + "\n" for i in range(130)))
    assert run(["ledger", "summary", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 file, 130 events, 130 runs (crew 130)")
    assert "not finished: 130" in out


def test_summary_of_a_parquet_folder_matches_the_ledgers(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["ledger", "convert", str(HISTORY), "--to", "parquet-folder",
                "-o", str(tmp_path / "pq")]) == 0
    assert "wrote" in capsys.readouterr().out
    assert run(["ledger", "summary", str(HISTORY), "--json"]) == 0
    expected = json.loads(capsys.readouterr().out)
    assert run(["ledger", "summary", "--parquet", str(tmp_path / "pq"), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["files"] >= 1
    assert {k: v for k, v in got.items() if k != "files"} == {
        k: v for k, v in expected.items() if k != "files"}


def test_summary_of_a_bad_parquet_folder_names_the_file_and_column(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["ledger", "summary", "--parquet", str(tmp_path)]) == 1
    assert "holds no .parquet file" in capsys.readouterr().err
    df = read_ledger(HISTORY)
    df[["run", "seq"]].to_parquet(tmp_path / "x.parquet")
    assert run(["ledger", "summary", "--parquet", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert str(tmp_path / "x.parquet") in err
    assert "no column 'ts'" in err
