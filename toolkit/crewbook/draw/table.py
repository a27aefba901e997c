"""Frames made readable for a notebook: `readable(df)`.

A display helper, not a change to the frame: the frame keeps its dtypes; what is shown
is text. Durations read ``26m 25s`` (not ``0 days 00:26:25.600000``), money columns
(``cost``, ``mean_cost``…) show cents, times show ``2025-03-01 09:06:00`` (UTC), every
missing value (``NaN``, ``<NA>``, ``NaT``, ``None``) shows one marker (``–``), and the
columns a reader needs first come first (`first`).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

#: The one missing-value marker.
MISSING = "–"
#: A column holding a text longer than this wraps (with a minimum width); others do not.
PROSE = 40


def format_duration(value: Any) -> str:
    """``26m 25s``, ``1h 05m``, ``2d 3h``, ``45s``, ``0.6s``; `MISSING` when missing."""
    import pandas as pd

    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return MISSING
    seconds = pd.Timedelta(value).total_seconds()
    sign = "-" if seconds < 0 else ""
    seconds = abs(seconds)
    if seconds < 10 and seconds != int(seconds):
        return f"{sign}{seconds:.1f}s"
    total = round(seconds)
    days, rest = divmod(total, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{sign}{days}d {hours}h"
    if hours:
        return f"{sign}{hours}h {minutes:02d}m"
    if minutes:
        return f"{sign}{minutes}m {secs:02d}s"
    return f"{sign}{secs}s"


def _label(value: Any) -> str:
    """An index label as shown: `MISSING` for a missing one (NaN, None, NA)."""
    import pandas as pd

    return MISSING if value is None or (not isinstance(value, str) and pd.isna(value)) \
        else str(value)


def _is_money(name: str) -> bool:
    return "cost" in name.lower() and "share" not in name.lower()


def _cell(value: Any, kind: str, money: bool) -> str:
    import pandas as pd

    if value is None:
        return MISSING
    if not isinstance(value, list | tuple | dict | set):
        try:
            if pd.isna(value):
                return MISSING
        except (TypeError, ValueError):
            pass
    if isinstance(value, list | tuple) and all(
            isinstance(v, str | int | float) for v in value):  # a list reads as one
        return ", ".join(map(str, value)) if value else MISSING
    if kind == "m":
        return format_duration(value)
    if kind == "M":
        stamp = pd.Timestamp(value)
        if stamp.tzinfo is not None:
            stamp = stamp.tz_convert("UTC")
        return stamp.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, float):
        if money:
            return f"{value:,.2f}"
        if math.isfinite(value) and value == int(value) and abs(value) < 1e15:
            return f"{int(value):,}"
        return f"{value:,.3g}" if abs(value) < 1e-3 or abs(value) >= 1e6 else f"{value:,.3f}"
    return str(value)


def _all_midnight(series: pd.Series) -> bool:
    """Whether every time in `series` (UTC) is midnight: a column of days."""
    import pandas as pd

    stamps = pd.to_datetime(series.dropna())
    if stamps.dt.tz is not None:
        stamps = stamps.dt.tz_convert("UTC")
    return bool(len(stamps)) and bool((stamps == stamps.dt.normalize()).all())


def breakable(name: str) -> str:
    """A header's text, escaped, that may break after ``_ . / @`` (never inside a word)."""
    escaped = html.escape(name)
    for mark in ("_", ".", "/", "@"):
        escaped = escaped.replace(mark, f"{mark}<wbr>")
    return escaped


def _pieces(text: str, separator: str) -> str:
    """``2025-03-01 09:06:00`` or ``analysis, design`` that may wrap between its pieces
    (day and time, a list's items), never inside one (a date's or an id's hyphens are no
    place to break)."""
    return separator.join(f"<span style='white-space:nowrap'>{html.escape(p)}</span>"
                          for p in text.split(separator))


class Readable:
    """A frame shown as text cells (see the module docstring); ``.frame`` is untouched."""

    def __init__(self, frame: pd.DataFrame, first: Sequence[str] = (), *,
                 index: bool = True) -> None:
        leading = [c for c in first if c in frame.columns]
        self.frame = frame[leading + [c for c in frame.columns if c not in leading]]
        self.index = index

    def cells(self) -> pd.DataFrame:
        """The frame as the text shown, same index and columns."""
        import pandas as pd

        out = {}
        for column in self.frame.columns:
            series = self.frame[column]
            kind = series.dtype.kind
            money = _is_money(str(column))
            out[column] = [_cell(v, kind, money) for v in series.tolist()]
            if kind == "M" and _all_midnight(series):  # days: the time says nothing
                out[column] = [v.removesuffix(" 00:00:00") for v in out[column]]
        return pd.DataFrame(out, index=self.frame.index, columns=self.frame.columns)

    def _repr_html_(self) -> str:
        cells = self.cells()
        numeric = {c for c in self.frame.columns if self.frame[c].dtype.kind in "iufm"}
        # prose (a long text somewhere in the column) wraps; everything else stays on one
        # line, so that ids like run-0001 or model names never break at a hyphen
        prose = {c for c in cells.columns if len(cells) and cells[c].str.len().max() > PROSE}
        # a time wraps between day and time, a list between its items: never inside one
        pieces = {c: " " for c in self.frame.columns if self.frame[c].dtype.kind == "M"}
        pieces.update({c: ", " for c in self.frame.columns if self.frame[c].dtype == object
                       and any(isinstance(v, list | tuple) for v in self.frame[c].tolist())})
        # headers sit over their cells (JupyterLab right-aligns every header otherwise)
        # and may break after _ . / @ (tokens_in, attempts.qa), so that a short column is
        # as narrow as its values: a wide frame then fits the cell
        head = "".join(
            f"<th style='text-align:{'right' if c in numeric else 'left'}'>"
            f"{breakable(str(c))}</th>" for c in cells.columns)
        # the index, a column per level (a MultiIndex's labels are never shown as tuples)
        levels = self.frame.index.nlevels
        if self.index:
            head = "".join(f"<th style='text-align:left'>{html.escape(str(name or ''))}</th>"
                           for name in self.frame.index.names) + head
        rows = []
        for label, row in zip(cells.index, cells.itertuples(index=False), strict=True):
            tds = "".join(
                f"<td style='text-align:{'right' if c in numeric else 'left'};"
                + ("white-space:normal'>" if c in pieces
                   else "white-space:normal;min-width:14em'>" if c in prose
                   else "white-space:nowrap'>")
                + (_pieces(v, pieces[c]) if c in pieces else html.escape(v)) + "</td>"
                for c, v in zip(cells.columns, row, strict=True))
            if self.index:
                parts = label if levels > 1 else (label,)
                tds = "".join(f"<th style='text-align:left'>{html.escape(_label(part))}</th>"
                              for part in parts) + tds
            rows.append(f"<tr>{tds}</tr>")
        return (f"<table class='dataframe crewbook-readable'><thead><tr>{head}</tr></thead>"
                f"<tbody>{''.join(rows)}</tbody></table>"
                f"<p style='color:#607d8b;font-size:85%'>{len(self.frame):,} rows × "
                f"{len(self.frame.columns)} columns</p>")

    def __str__(self) -> str:
        return str(self.cells().to_string(index=self.index))

    def __repr__(self) -> str:
        return f"<Readable {len(self.frame)}×{len(self.frame.columns)} frame>\n{self}"


def readable(frame: pd.DataFrame, first: Sequence[str] = (), *,
             index: bool = True) -> Readable:
    """`frame` shown for reading (durations, cents, one missing marker, `first` columns
    first); the frame itself is not changed (``.frame``)."""
    return Readable(frame, first, index=index)
