"""What the widgets share: callbacks that never lose an error, drawings in a zoomable box,
small HTML tables."""

from __future__ import annotations

import functools
import html
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import ipywidgets as w

from ..draw.display import fallback_card, prepare, svg_box
from ..draw.dot import to_dot
from ..draw.render import render_svg


def guarded(output: w.Output, message: w.HTML) -> Callable[[Callable[..., object]],
                                                               Callable[..., None]]:
    """Wrap a callback: it runs inside `output` (prints and tracebacks show in the widget)
    and an exception becomes a red line in `message` instead of vanishing."""

    def wrap(fn: Callable[..., object]) -> Callable[..., None]:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> None:
            with output:
                try:
                    fn(*args, **kwargs)
                except Exception as exc:
                    message.value = error_html(exc)
                    traceback.print_exc()
        return run
    return wrap


def error_html(exc: BaseException, title: str = "error") -> str:
    """A red box naming the exception (its `code` when it has one) and its message."""
    code = getattr(exc, "code", None)
    label = f"{title} [{code}]" if code else f"{title}: {type(exc).__name__}"
    return ("<div class='crewbook-error' style='color:#b71c1c;border-left:3px solid #b71c1c;"
            f"padding:2px 8px'><b>{html.escape(label)}</b> {html.escape(str(exc))}</div>")


def note_html(text: str) -> str:
    """A quiet one-line note."""
    return f"<div style='color:#546e7a'>{html.escape(text)}</div>"


def drawing_html(model_of: Callable[[], Any], zoom: float = 1.0) -> str:
    """The drawing of `model_of()` inline (tooltips work) in a scrolling box scaled by
    `zoom`; the fallback card without `dot` or on any error. Never raises."""
    dot_text: str | None = None
    try:
        model = model_of()
        if model is None:
            return note_html("(no drawing)")
        dot_text = to_dot(prepare(model))
        svg = render_svg(dot_text)
    except Exception as exc:  # a widget must keep working
        return fallback_card(dot_text, exc)
    return svg_box(svg, zoom, inline=True)


def table_html(rows: Sequence[Mapping[str, Any]], columns: Sequence[str],
               empty: str = "(none)") -> str:
    """An HTML table of `rows` (missing values shown as ``–``, text escaped)."""
    if not rows:
        return note_html(empty)
    head = "".join(f"<th style='text-align:left;padding:0 6px'>{html.escape(c)}</th>"
                   for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td style='padding:0 6px'>{html.escape(cell(r.get(c)))}</td>"
                         for c in columns) + "</tr>" for r in rows)
    return f"<table class='crewbook-table'><tr>{head}</tr>{body}</table>"


def cell(value: Any) -> str:
    """A table cell's text: ``–`` for a missing value."""
    if value is None:
        return "–"
    try:
        import pandas as pd

        if not isinstance(value, list | tuple | dict) and pd.isna(value):
            return "–"
    except (TypeError, ValueError):
        pass
    return str(value)


def last_events(ledger: Any, n: int) -> list[dict[str, Any]]:
    """The last `n` events of a ledger: a `MemoryLedger` (``.events``) or a file `Ledger`
    (``.read()``)."""
    events = getattr(ledger, "events", None)
    if isinstance(events, list):
        return [dict(e) for e in events[-n:]]
    read = getattr(ledger, "read", None)
    if callable(read):
        frame = read()
        return [dict(r) for r in frame.tail(n).to_dict("records")]
    return []
