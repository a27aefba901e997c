"""What the widgets share: callbacks that never lose an error, drawings in a zoomable box,
small HTML tables."""

from __future__ import annotations

import functools
import html
import threading
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import ipywidgets as w

from ..draw.display import fallback_card, prepare, svg_box
from ..draw.dot import to_dot
from ..draw.render import render_svg
from ..draw.table import PROSE
from ..errors import CrewbookError, error_text


def guarded(output: w.Output, message: w.HTML) -> Callable[[Callable[..., object]],
                                                               Callable[..., None]]:
    """Wrap a callback: it runs inside `output` (prints and tracebacks show in the widget)
    and an exception becomes a red line in `message` instead of vanishing."""

    # One widget's callbacks run one at a time: a kernel may hand two browser messages to
    # two threads, and an explorer half-way through drawing the old filters' run would
    # then show it after the new filters' "no events match" (seen in CI). Re-entrant: a
    # callback's own trait changes call the widget's observers on the same thread.
    lock = threading.RLock()

    def wrap(fn: Callable[..., object]) -> Callable[..., None]:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> None:
            with lock, output:
                try:
                    fn(*args, **kwargs)
                except CrewbookError as exc:  # expected: the message says it all
                    message.value = error_html(exc)
                except Exception as exc:
                    message.value = error_html(exc)
                    traceback.print_exc()
        return run
    return wrap


def error_html(exc: BaseException, title: str = "error") -> str:
    """A red box: the message first, then, muted, what it is (`title` and the error's
    `code`, e.g. ``(refused [wrong_role])``; the class name only for an error crewbook
    did not raise, which is a bug to report)."""
    code = getattr(exc, "code", None)
    label = f"{title} [{code}]" if code else title
    if not code and not isinstance(exc, CrewbookError):
        label += f", {type(exc).__name__}"
    return ("<div class='crewbook-error' style='color:#b71c1c;border-left:3px solid #b71c1c;"
            f"padding:2px 8px'>{html.escape(error_text(exc))} "
            f"<span style='color:#78909c'>({html.escape(label)})</span></div>")


def warning_html(text: str) -> str:
    """An amber box (an escalation, a failed try: the loop moved on, but said why)."""
    return ("<div class='crewbook-warning' style='color:#e65100;border-left:3px solid #e65100;"
            f"padding:2px 8px'>{html.escape(text)}</div>")


def note_html(text: str) -> str:
    """A quiet one-line note."""
    return f"<div style='color:#546e7a'>{html.escape(text)}</div>"


def drawing_html(model_of: Callable[[], Any], zoom: float = 1.0,
                 expand: Sequence[str] = ()) -> str:
    """The drawing of `model_of()` inline (tooltips work) in a scrolling box scaled by
    `zoom` (`expand`: groups kept open when a big graph collapses); the fallback card
    without `dot` or on any error. Never raises."""
    dot_text: str | None = None
    try:
        model = model_of()
        if model is None:
            return note_html("(no drawing)")
        dot_text = to_dot(prepare(model, expand=expand))
        svg = render_svg(dot_text)
    except Exception as exc:  # a widget must keep working
        return fallback_card(dot_text, exc)
    return svg_box(svg, zoom, inline=True)


def table_html(rows: Sequence[Mapping[str, Any]], columns: Sequence[str],
               empty: str = "(none)",
               row_style: Callable[[Mapping[str, Any]], str] | None = None) -> str:
    """An HTML table of `rows` (missing values shown as ``–``, text escaped, every cell
    left-aligned under its left-aligned header); `row_style(row)` styles a row. As in
    `crewbook.readable`, only prose wraps: ids such as ``crew-2`` never break at a hyphen."""
    if not rows:
        return note_html(empty)
    texts = [{c: cell(r.get(c)) for c in columns} for r in rows]
    wraps = {c: ("white-space:normal;min-width:18em" if max(len(t[c]) for t in texts) > PROSE
                 else "white-space:nowrap") for c in columns}
    head = "".join(f"<th style='text-align:left;padding:0 6px'>{html.escape(c)}</th>"
                   for c in columns)
    body = "".join(
        _tr(row_style(r) if row_style is not None else "")
        + "".join(f"<td style='text-align:left;padding:0 6px;{wraps[c]}'>"
                  f"{html.escape(t[c])}</td>" for c in columns) + "</tr>"
        for r, t in zip(rows, texts, strict=True))
    return f"<table class='crewbook-table'><tr>{head}</tr>{body}</table>"


def _tr(style: str) -> str:
    return f"<tr style='{html.escape(style)}'>" if style else "<tr>"


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


def ledger_size(ledger: Any) -> int | None:
    """How many events `ledger` holds (all runs): a `MemoryLedger` or a file `Ledger`;
    None when it cannot say."""
    events = getattr(ledger, "events", None)
    if isinstance(events, list):
        return len(events)
    if isinstance(events, int):
        return events
    try:
        return len(ledger)
    except TypeError:
        return None


def last_events(ledger: Any, n: int, run: str | None = None) -> list[dict[str, Any]]:
    """The last `n` events of a ledger: a `MemoryLedger` (``.events``) or a file `Ledger`
    (``.read()``). With `run`, only the events of that run and of the runs a rewind
    branched from it (``RUN~1``...): a project's ledger also holds its earlier runs,
    which a fresh loop's table must not show."""
    if n <= 0:
        return []
    root = None if run is None else run_root(run)
    events = getattr(ledger, "events", None)
    if isinstance(events, list):
        kept = [e for e in events if root is None or run_root(e.get("run")) == root]
        return [dict(e) for e in kept[-n:]]
    read = getattr(ledger, "read", None)
    if callable(read):
        frame = read()
        if root is not None and "run" in frame.columns:
            frame = frame[[run_root(r) == root for r in frame["run"]]]
        return [dict(r) for r in frame.tail(n).to_dict("records")]
    return []


def run_root(run: Any) -> str:
    """The run a rewind branched `run` from (``crew-2~1`` → ``crew-2``)."""
    return str(run).split("~", 1)[0]


def problems_html_of(loop: Any) -> str:
    """The validation problems of what `loop` runs (`Loop.warnings`: a pipeline stage
    that can only escalate, an uncapped loop...), shown above the Stepper's buttons;
    empty when there are none."""
    problems = loop.warnings()
    if not problems:
        return ""
    from ..errors import plural, problems_html

    return ("<details class='crewbook-validation'><summary style='color:#e65100'>⚠ "
            f"the {loop.kind} loop has {plural(len(problems), 'validation warning')}</summary>"
            f"{problems_html(problems)}</details>")


#: How a picked node stands out: a thick blue border (the Stepper's current node is
#: drawn bold by its engine; a pick is blue so the two never look alike).
PICKED = (("color", "#1565c0"), ("penwidth", "4"))


def highlighted(model: Any, node_id: str | None) -> Any:
    """A copy of the `GraphModel` `model` with `node_id` drawn picked (bold, blue border);
    `model` itself unchanged; the same model when the node is not in it."""
    if node_id is None or node_id not in model.nodes:
        return model
    import copy
    from dataclasses import replace

    out = copy.copy(model)
    out.nodes = dict(model.nodes)
    node = model.nodes[node_id]
    kept = tuple((k, v) for k, v in node.attrs if k not in dict(PICKED))
    out.nodes[node_id] = replace(node, emphasis=True, attrs=(*kept, *PICKED))
    return out
