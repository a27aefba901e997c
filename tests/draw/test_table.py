"""`readable`: frames shown for reading, the frame itself untouched."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import crewbook
from crewbook.draw import MISSING, format_duration, readable


@pytest.mark.parametrize(("value", "shown"), [
    (pd.Timedelta("0 days 00:26:25.600000"), "26m 26s"),
    (pd.Timedelta(minutes=26, seconds=25), "26m 25s"),
    (pd.Timedelta(hours=1, minutes=5), "1h 05m"),
    (pd.Timedelta(days=2, hours=3, minutes=1), "2d 3h"),
    (pd.Timedelta(seconds=45), "45s"),
    (pd.Timedelta(milliseconds=600), "0.6s"),
    (pd.Timedelta(minutes=-2), "-2m 00s"),
    (pd.NaT, MISSING),
    (None, MISSING),
])
def test_format_duration(value: object, shown: str) -> None:
    assert format_duration(value) == shown


@given(st.integers(min_value=0, max_value=10**7))
def test_durations_keep_their_order(seconds: int) -> None:
    text = format_duration(pd.Timedelta(seconds=seconds))
    assert text[0].isdigit()
    assert "days" not in text


def frame() -> pd.DataFrame:
    return pd.DataFrame({
        "summary": ["a", None],
        "cost": [0.123456, float("nan")],
        "duration": pd.to_timedelta(["00:26:25", None]),
        "ts": pd.to_datetime(["2025-03-01T09:06:00Z", None], utc=True),
        "version": pd.array([1, None], dtype="Int64"),
        "run": ["r1", "r2"],
    })


def test_cells_use_one_marker_cents_and_durations() -> None:
    df = frame()
    shown = readable(df, first=["run", "ts"]).cells()
    assert list(shown.columns) == ["run", "ts", "summary", "cost", "duration", "version"]
    assert shown.iloc[0].tolist() == ["r1", "2025-03-01 09:06:00", "a", "0.12", "26m 25s", "1"]
    assert shown.iloc[1].tolist() == ["r2", MISSING, MISSING, MISSING, MISSING, MISSING]


def test_the_frame_is_not_changed() -> None:
    df = frame()
    view = readable(df)
    assert view.frame.dtypes.equals(df.dtypes)
    html = view._repr_html_()
    assert "NaN" not in html
    assert "&lt;NA&gt;" not in html
    assert "NaT" not in html
    assert "0 days" not in html
    assert "2 rows × 6 columns" in html
    assert repr(view).startswith("<Readable 2×6 frame>")
    assert "26m 25s" in str(view)


def test_exported_at_the_top() -> None:
    assert crewbook.readable is readable
    assert crewbook.format_duration is format_duration


def test_only_prose_wraps() -> None:
    df = pd.DataFrame({"run": ["run-0001"], "summary": ["a long sentence " * 4]})
    html = readable(df)._repr_html_()
    assert "white-space:nowrap'>run-0001<" in html
    assert "white-space:normal;min-width:14em'>a long sentence" in html
    assert readable(df.iloc[:0])._repr_html_().count("<tr>") == 1


def test_a_multiindex_shows_one_column_per_level_never_tuples() -> None:
    frame = pd.DataFrame({"acts": [3, 1]}, index=pd.MultiIndex.from_tuples(
        [("crew", "developer"), ("coordinator", None)], names=["loop", "role"]))
    shown = readable(frame)._repr_html_()
    assert "(&#x27;" not in shown
    assert "('" not in shown
    head = shown.split("</thead>")[0]
    assert head.count("<th ") == 3, head  # loop, role, acts
    assert ">loop</th><th style='text-align:left'>role</th>" in head
    assert f"<th style='text-align:left'>{MISSING}</th>" in shown  # a missing label


def test_wide_frames_can_fit_headers_break_times_wrap_days_alone() -> None:
    df = pd.DataFrame({
        "tokens_in": [1200], "attempts.qa": [1],
        "started": pd.to_datetime(["2024-08-06T10:53:39Z"], utc=True),
        "created": pd.to_datetime(["2025-12-19"]),
        "run": ["6e44b9__sweagenttestrepo-1c2844"]})
    shown = readable(df, index=False)
    html = shown._repr_html_()
    assert ">tokens_<wbr>in</th>" in html, "a header breaks after its underscore"
    assert ">attempts.<wbr>qa</th>" in html
    assert ("<span style='white-space:nowrap'>2024-08-06</span> "
            "<span style='white-space:nowrap'>10:53:39</span>") in html
    assert shown.cells()["created"].tolist() == ["2025-12-19"], "a day shows no 00:00:00"
    assert "white-space:nowrap'>6e44b9__sweagenttestrepo-1c2844<" in html, "ids never break"


def test_a_list_reads_as_a_list_not_as_python() -> None:
    df = pd.DataFrame({"needs": [["analysis", "design"], []], "kinds": [("a",), ("b", "c")]})
    cells = readable(df).cells()
    assert cells["needs"].tolist() == ["analysis, design", MISSING]
    assert cells["kinds"].tolist() == ["a", "b, c"]
    assert "[" not in readable(df)._repr_html_()


def test_a_list_wraps_between_its_items_only() -> None:
    df = pd.DataFrame({"produces": [["impl-plan", "design-notes"]]})
    html = readable(df)._repr_html_()
    assert ("white-space:normal'><span style='white-space:nowrap'>impl-plan</span>, "
            "<span style='white-space:nowrap'>design-notes</span></td>") in html
