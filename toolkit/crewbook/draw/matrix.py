"""Matrices (a DataFrame of numbers) as an HTML heatmap or a Markdown table.

The heatmap goes through pandas' `Styler` with crewbook's own colour scale (no
matplotlib) and a uuid derived from the content (`Styler.set_uuid`), so the HTML is
the same on every run and two different matrices on one page never share ids.
`Styler` needs jinja2; without it the table is plain `DataFrame.to_html`.
Used for the schema's artifact × role table, and later for tier × effort routing and
tool × role permissions.
"""

from __future__ import annotations

import hashlib
import html
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import error_message

if TYPE_CHECKING:
    import pandas as pd

#: The colour scale, low to high: white-blue to deep blue (readable, prints in grey).
SCALE: tuple[str, ...] = ("#f7fbff", "#c6dbef", "#6baed6", "#2171b5", "#08306b")
EMPTY_BACKGROUND = "#fafafa"
EMPTY_COLOUR = "#bdbdbd"


def _rgb(colour: str) -> tuple[int, int, int]:
    value = colour.lstrip("#")
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)


def scale_colour(value: float, vmin: float, vmax: float, scale: Sequence[str] = SCALE) -> str:
    """The colour of `value` on `scale` between `vmin` and `vmax` (linear, clipped)."""
    share = 1.0 if vmax <= vmin else min(1.0, max(0.0, (value - vmin) / (vmax - vmin)))
    pos = share * (len(scale) - 1)
    low = min(int(pos), len(scale) - 2) if len(scale) > 1 else 0
    if len(scale) == 1:
        return scale[0]
    frac = pos - low
    a, b = _rgb(scale[low]), _rgb(scale[low + 1])
    mixed = (round(x + (y - x) * frac) for x, y in zip(a, b, strict=True))
    return "#" + "".join(f"{c:02x}" for c in mixed)


def text_colour(background: str) -> str:
    """Black or white, whichever reads better on `background`."""
    r, g, b = _rgb(background)
    luminance = (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255
    return "#000000" if luminance > 0.55 else "#ffffff"


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, str):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def content_uuid(frame: pd.DataFrame, title: str = "") -> str:
    """A short id derived from the frame and title, for `Styler.set_uuid`."""
    digest = hashlib.sha1(title.encode("utf-8"))
    digest.update(frame.to_csv().encode("utf-8"))
    return "crewbook-" + digest.hexdigest()[:10]


def _cell_text(value: Any, labels: Mapping[Any, str], empty: str, digits: int) -> str:
    number = _number(value)
    if number is None:
        return empty if value is None or _is_na(value) else str(value)
    for key, text in labels.items():
        if _number(key) == number:
            return text
    return f"{number:.{digits}f}" if number != int(number) else f"{int(number)}"


def _is_na(value: Any) -> bool:
    import pandas as pd

    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


_STYLE_BLOCK = re.compile(r"<style[^>]*>(.*?)</style>", re.S)
_CSS_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_ELEMENT_ID = re.compile(r'id="([\w-]+)"')


def inline_styles(styled_html: str) -> str:
    """Copy the per-cell rules of a `Styler`'s `<style>` block onto the cells themselves.

    JupyterLab sanitises the HTML of notebooks it does not trust (any notebook opened
    from disk): `<style>` blocks go, inline `style` attributes stay. With the colours
    inline, a stored heatmap keeps them; the block stays for everyone else.
    """
    block = _STYLE_BLOCK.search(styled_html)
    if block is None:
        return styled_html
    by_id: dict[str, list[str]] = {}
    for selectors, body in _CSS_RULE.findall(block.group(1)):
        props = " ".join(body.split()).strip()
        for selector in selectors.split(","):
            selector = selector.strip()
            if props and re.fullmatch(r"#[\w-]+", selector):
                by_id.setdefault(selector[1:], []).append(props)

    def add_style(match: re.Match[str]) -> str:
        props = by_id.get(match.group(1))
        if not props:
            return match.group(0)
        return f'{match.group(0)} style="{html.escape(" ".join(props))}"'

    return _ELEMENT_ID.sub(add_style, styled_html)


def heatmap_html(
    frame: pd.DataFrame,
    *,
    title: str = "",
    scale: Sequence[str] = SCALE,
    vmin: float | None = None,
    vmax: float | None = None,
    labels: Mapping[Any, str] | None = None,
    empty: str = "",
    digits: int = 2,
) -> str:
    """HTML table whose numeric cells are coloured on `scale` (non-numbers stay plain)."""
    labels = dict(labels or {})
    numbers = [n for n in (_number(v) for v in frame.to_numpy().ravel()) if n is not None]
    low = vmin if vmin is not None else min(numbers, default=0.0)
    high = vmax if vmax is not None else max(numbers, default=1.0)

    def css(value: Any) -> str:
        number = _number(value)
        if number is None:
            return f"background-color: {EMPTY_BACKGROUND}; color: {EMPTY_COLOUR}"
        bg = scale_colour(number, low, high, scale)
        return f"background-color: {bg}; color: {text_colour(bg)}"

    def fmt(value: Any) -> str:
        return html.escape(_cell_text(value, labels, empty, digits))

    try:
        import jinja2  # noqa: F401  (Styler needs it)
    except ImportError:
        table = frame.map(fmt).to_html(escape=False)
        return (f"<div class='crewbook-matrix'><p><b>{html.escape(title)}</b></p>{table}</div>"
                if title else f"<div class='crewbook-matrix'>{table}</div>")
    shown = frame.copy(deep=False)  # new axes with escaped names; `frame` is left alone
    shown.index = frame.index.set_names(
        [html.escape(str(n)) if n is not None else None for n in frame.index.names])
    shown.columns = frame.columns.set_names(
        [html.escape(str(n)) if n is not None else None for n in frame.columns.names])
    styler = shown.style.set_uuid(content_uuid(frame, title)).format(fmt).map(css)
    styler = styler.format_index(escape="html", axis=0).format_index(escape="html", axis=1)
    styler = styler.set_table_styles([
        {"selector": "td", "props": "text-align: center; min-width: 3em; padding: 2px 6px"},
        {"selector": "caption", "props": "caption-side: top; font-weight: bold; text-align: left"},
    ])
    if title:
        styler = styler.set_caption(html.escape(title))
    return f"<div class='crewbook-matrix'>{inline_styles(styler.to_html())}</div>"


def markdown_table(
    frame: pd.DataFrame, *, labels: Mapping[Any, str] | None = None, empty: str = "·",
    digits: int = 2,
) -> str:
    """A GitHub-flavoured Markdown table (numbers right-aligned), for terminals and docs."""
    labels = dict(labels or {})

    def cell(text: object) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    index_name = " / ".join(str(n) for n in frame.index.names if n is not None)
    head = [cell(index_name)] + [cell(c) for c in frame.columns]
    numeric = [frame[c].dtype.kind in "biuf" or str(frame[c].dtype) in ("Int64", "Float64")
               for c in frame.columns]
    rows = [
        [cell(idx)] + [cell(_cell_text(v, labels, empty, digits)) for v in row]
        for idx, row in zip(frame.index, frame.itertuples(index=False), strict=True)
    ]
    widths = [max(3, *(len(r[i]) for r in [head, *rows])) for i in range(len(head))]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    rule = ["-" * widths[0]] + [
        "-" * (w - 1) + ":" if num else "-" * w for w, num in zip(widths[1:], numeric, strict=True)
    ]
    return "\n".join([line(head), "| " + " | ".join(rule) + " |", *map(line, rows)]) + "\n"


@dataclass(frozen=True, eq=False)
class Matrix:
    """A DataFrame shown as a heatmap in notebooks and as Markdown in terminals.

    labels: text for some values (``{2: "writes", 1: "reads"}``); empty: text for
    missing cells; vmin/vmax: the ends of the colour scale (default: the data's).
    """

    frame: pd.DataFrame
    title: str = ""
    labels: Mapping[Any, str] = field(default_factory=dict)
    empty: str = ""
    vmin: float | None = None
    vmax: float | None = None

    def to_html(self) -> str:
        """The heatmap (see `heatmap_html`)."""
        return heatmap_html(self.frame, title=self.title, labels=self.labels, empty=self.empty,
                            vmin=self.vmin, vmax=self.vmax)

    def to_markdown(self) -> str:
        """The Markdown table (see `markdown_table`)."""
        table = markdown_table(self.frame, labels=self.labels, empty=self.empty or "·")
        return f"**{self.title}**\n\n{table}" if self.title else table

    def __str__(self) -> str:
        return self.to_markdown()

    def __repr__(self) -> str:
        rows, cols = self.frame.shape
        return f"<Matrix {self.title!r}: {rows} × {cols}>"

    def _repr_markdown_(self) -> str:
        return self.to_markdown()

    def _repr_html_(self) -> str:
        try:
            return self.to_html()
        except Exception as exc:  # a display must never raise
            return (f"<p>(no heatmap: {html.escape(error_message(exc))})</p>"
                    f"<pre>{html.escape(self.to_markdown())}</pre>")
