"""`Stepper(loop)`: step any `crewbook.core.loop.Loop` from buttons.

The widget shows, top to bottom: where the loop is (its status); the buttons **Step**
(apply the report in the form), **Run N** (apply N reports the policy proposes, stopping
at a refusal or the end), **Rewind** (to a snapshot taken after any earlier step) and
**Reset** (to the loop as the Stepper found it); the report form built from the contract
(move, role, verdict choices, fields: see `crewbook.core.form`); a refusal or error
line; the live drawing (``loop.graph_model()``, current node highlighted by the engine)
with a zoom slider; the last ledger events as a table.

Changing the move refills the fields with that move's own (`draft_for_move`); a form
without moves (the pipeline's) hides the move picker. A refusal (`LoopRefused`) is
shown with its reason and code and changes nothing: the loop refused before writing
anything; an accepted report that fails a try or escalates says why in amber. Once
the loop has finished, Step and Run N are disabled until a Rewind or Reset. After a
rewind, the events written by the abandoned branch are struck through in the table
(column ``branch``) and counted, and snapshots taken on it say so in the picker. A
form spec may say how its family applies a report and restores a snapshot (``apply``,
``restore``: the autonomous loop's do what ``crewbook loop step`` does: lock, stale
check, state file, next prompt). Every callback runs inside the widget's `Output`,
so an unexpected error shows there with its traceback instead of vanishing.

The logic is in plain methods (`step`, `run`, `rewind`, `reset`, `propose`) that the
buttons call; tests drive them, or the buttons' ``.click()``, without a browser.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import ipywidgets as w

from ..core.loop import Act, Snapshot
from ..errors import LoopRefused, plural
from ._common import (
    error_html,
    guarded,
    last_events,
    ledger_size,
    note_html,
    problems_html_of,
    table_html,
    warning_html,
)
from .proposals import (
    Draft,
    Policy,
    Scripted,
    adapter_for,
    draft_for_move,
    propose,
    read_value,
    show_value,
)
from .view import reveal_html  # keeps the current node in view

#: Ledger columns the events table shows (those the events have).
EVENT_COLUMNS = ("seq", "act", "kind", "role", "stage", "verdict", "version", "summary")
#: How the events of an abandoned branch look in the table.
ABANDONED_STYLE = "color:#9e9e9e;text-decoration:line-through"


class Stepper(w.VBox):  # type: ignore[misc]
    """Buttons, a report form, the drawing and the ledger of one loop (module docstring).

    `policy` proposes each next report: a callable ``(loop, act) -> report``, a list of
    reports (played in order from the act they are at, then the happy path), or None
    for the happy path built from the contract. `events` is how many ledger events the
    table shows.
    """

    def __init__(self, loop: Any, policy: Policy | Sequence[Any] | None = None, *,
                 events: int = 8, zoom: float = 1.0) -> None:
        self.loop = loop
        self.policy: Policy | None = (Scripted(policy) if isinstance(policy, list | tuple)
                                      else policy)  # type: ignore[assignment]
        self.n_events = events
        self.adapter = adapter_for(loop)
        self.snapshots: list[tuple[str, Snapshot[Any]]] = [("start", loop.snapshot())]
        #: Each snapshot's line of history: the Stepper steps (indexes in `_written`)
        #: that led to it; `line` is the current one.
        self._lines: list[tuple[int, ...]] = [()]
        self.line: tuple[int, ...] = ()
        #: The (run, seq) of the events each Stepper step wrote, by step.
        self._written: list[tuple[tuple[str, str], ...]] = []
        self.at = 0  # the index in `snapshots` of the state the loop is in
        self.draft = Draft()
        self.refusals = 0
        #: How many rows of the events table are struck through (abandoned branches).
        self.struck_shown = 0
        self._filling = False

        self.output = w.Output(layout=w.Layout(max_height="12em", overflow="auto"))
        self.message = w.HTML()
        self.header = w.HTML()
        self.step_button = w.Button(description="Step", button_style="primary",
                                    tooltip="apply the report in the form")
        self.run_count = w.BoundedIntText(value=5, min=1, max=1000, layout=w.Layout(width="6em"))
        self.run_button = w.Button(description="Run N", tooltip="apply N proposed reports")
        self.snapshot_list = w.Dropdown(description="snapshot", options=[],
                                        layout=w.Layout(width="22em"))
        self.rewind_button = w.Button(description="Rewind", tooltip="restore that snapshot")
        self.reset_button = w.Button(description="Reset", button_style="warning",
                                     tooltip="back to the loop as the Stepper found it")
        self.propose_button = w.Button(description="Propose",
                                       tooltip="refill the form with the proposed report")
        wide = {"description_width": "8em"}
        self.move = w.Dropdown(description="move", options=[], style=wide)
        self.role = w.Text(description="role", style=wide)
        self.verdict = w.Dropdown(description="verdict", options=[], style=wide)
        self.fields = w.VBox()
        self.field_controls: dict[str, tuple[str, w.Widget]] = {}
        self.zoom = w.FloatSlider(value=zoom, min=0.2, max=2.0, step=0.1, description="zoom",
                                  readout_format=".1f", continuous_update=False)
        self.problems = w.HTML()
        self.drawing = w.HTML()
        self.events = w.HTML()

        guard = guarded(self.output, self.message)
        self.step_button.on_click(guard(lambda _: self.step()))
        self.run_button.on_click(guard(lambda _: self.run(self.run_count.value)))
        self.rewind_button.on_click(guard(lambda _: self.rewind(self.snapshot_list.value)))
        self.reset_button.on_click(guard(lambda _: self.reset()))
        self.propose_button.on_click(guard(lambda _: self.propose()))
        self.zoom.observe(guard(lambda _: self._draw()), names="value")
        self.move.observe(guard(lambda change: self._move_changed(change["new"])),
                          names="value")

        controls = w.HBox([self.step_button, self.run_count, self.run_button,
                           self.snapshot_list, self.rewind_button, self.reset_button])
        form = w.VBox([w.HTML("<b>report</b>"), w.HBox([self.move, self.role]),
                       self.verdict, self.fields, self.propose_button])
        super().__init__([self.header, self.problems, controls, form, self.message, self.zoom,
                          self.drawing, w.HTML("<b>last ledger events</b>"), self.events,
                          self.output])
        self.add_class("crewbook-stepper")
        self.problems.value = problems_html_of(loop)
        with self.output:
            self.propose()
            self.refresh()

    # ------------------------------------------------------------------ actions
    def step(self) -> bool:
        """Apply the report in the form. True when accepted; a refusal or a form error is
        shown in `message` and changes nothing."""
        act = self.loop.contract()
        try:
            report = self.adapter.build(self.loop, act, self.read_form())
        except LoopRefused as refused:
            return self._refused(refused)
        except ValueError as bad:  # a field that is not a number or JSON data
            self.message.value = error_html(bad, "form")
            return False
        return self._apply(report)

    def run(self, n: int) -> int:
        """Apply up to `n` proposed reports; stop at a refusal or when the loop finishes.
        Returns how many were accepted."""
        done = 0
        for _ in range(int(n)):
            if self.loop.contract().finished:
                break
            self.propose()
            if not self.step():
                break
            done += 1
        self.message.value = self.message.value or note_html(f"ran {done} step(s)")
        return done

    def rewind(self, index: int | None) -> Act:
        """Restore the snapshot at `index` in `snapshots` (the list stays as it is)."""
        if index is None:
            raise LoopRefused("pick a snapshot to rewind to", code="no_snapshot")
        label, snap = self.snapshots[int(index)]
        act: Act = self.adapter.restore(self.loop, snap)
        self.at = int(index)
        self.line = self._lines[self.at]
        self.propose()
        self.refresh()
        struck = self.struck_shown
        self.message.value = note_html(
            f"rewound to {label}"
            + (f"; {plural(struck, 'event')} of abandoned branches struck through below"
               if struck else ""))
        return act

    def reset(self) -> Act:
        """Back to the loop as the Stepper found it (the first snapshot). The snapshots
        taken since are dropped: after a reset they would all be abandoned, and stepping
        again would list the same labels twice. Their events stay struck through."""
        act: Act = self.adapter.restore(self.loop, self.snapshots[0][1])
        del self.snapshots[1:], self._lines[1:]
        self.at, self.line = 0, ()
        self.message.value = note_html("reset to the start")
        self.propose()
        self.refresh()
        return act

    def propose(self) -> Draft:
        """Fill the form with the report the policy proposes for the current contract."""
        act = self.loop.contract()
        self.draft = propose(self.loop, act, self.policy)
        self._fill_form(self.draft)
        return self.draft

    def pick_move(self, move: str) -> Draft:
        """Put `move`'s own fields in the form (what picking it in the list does)."""
        act = self.loop.contract()
        self.draft = draft_for_move(self.loop, act, move, self.policy)
        self._fill_form(self.draft)
        return self.draft

    def abandoned(self) -> set[tuple[str, str]]:
        """The (run, seq) of the events written by Stepper steps that are not on the
        current line of history (left by a rewind)."""
        kept = set(self.line)
        return {key for i, keys in enumerate(self._written) if i not in kept for key in keys}

    # ------------------------------------------------------------------ form
    def read_form(self) -> Draft:
        """The draft as the form holds it now (`ValueError` for a bad field)."""
        values = {name: read_value(name, kind, control.value)
                  for name, (kind, control) in self.field_controls.items()}
        return Draft(move=self.move.value or None, role=self.role.value or None,
                     verdict=self.verdict.value or None, moves=self.draft.moves,
                     verdicts=self.draft.verdicts, fields=values, hidden=self.draft.hidden)

    def set_field(self, name: str, value: Any) -> None:
        """Set a field's control (as a user typing would); `value` is shown as the form
        shows it (lists one per line, JSON data as JSON text)."""
        _, control = self.field_controls[name]
        control.value = value if isinstance(value, str | bool) else show_value(value)

    def _move_changed(self, move: str | None) -> None:
        if self._filling or move is None or move == self.draft.move:
            return
        self.message.value = ""
        self.pick_move(move)

    def _fill_form(self, draft: Draft) -> None:
        self._filling = True
        try:
            self._fill(draft)
        finally:
            self._filling = False

    def _fill(self, draft: Draft) -> None:
        moves = list(draft.moves)
        if draft.move and draft.move not in moves:
            moves.append(draft.move)
        self.move.options = moves
        self.move.value = draft.move if draft.move in moves else None
        self.move.layout.display = "" if moves else "none"
        self.role.value = draft.role or ""
        verdicts = list(draft.verdicts)
        if draft.verdict and draft.verdict not in verdicts:
            verdicts.append(draft.verdict)
        self.verdict.options = verdicts
        self.verdict.value = draft.verdict if draft.verdict in verdicts else None
        self.verdict.layout.display = "" if verdicts else "none"
        controls: dict[str, tuple[str, w.Widget]] = {}
        for name, value in draft.fields.items():
            kind = draft.field_kind(name)
            shown = show_value(value)
            control: w.Widget
            if kind == "flag":
                control = w.Checkbox(value=shown, description=name)
            elif kind in ("lines", "json"):
                rows = min(12, max(2, str(shown).count("\n") + 1))
                control = w.Textarea(value=shown, description=name, rows=rows,
                                     layout=w.Layout(width="95%"))
            else:
                control = w.Text(value=shown, description=name, layout=w.Layout(width="95%"))
            controls[name] = (kind, control)
        for _, control in controls.values():
            control.style.description_width = "8em"
        self.field_controls = controls
        self.fields.children = [c for _, c in controls.values()]

    # ------------------------------------------------------------------ display
    def _apply(self, report: Any) -> bool:
        before = ledger_size(self.loop.ledger)
        try:
            act = self.adapter.apply(self.loop, self.loop.contract(), report)
        except LoopRefused as refused:
            return self._refused(refused)
        after = ledger_size(self.loop.ledger)
        written = (last_events(self.loop.ledger, after - before)
                   if before is not None and after is not None else [])
        self._written.append(tuple(_key(e) for e in written))
        self.line = (*self.line, len(self._written) - 1)
        who = act.finished_reason if act.finished else (act.stage or act.role)
        self.snapshots.append((f"after act {self.loop.acts}: next {who}", self.loop.snapshot()))
        self._lines.append(self.line)
        self.at = len(self.snapshots) - 1
        self.message.value = self._outcome(act, written)
        self.propose()
        self.refresh()
        return True

    def _outcome(self, act: Act, written: Sequence[Any]) -> str:
        """Amber lines for what an accepted report did that the user must see: a failed
        try (with its errors), an escalation or a failure (with the reason)."""
        lines = []
        for event in written:
            kind, summary = event.get("kind"), str(event.get("summary") or "")
            payload = event.get("payload")
            errors = payload.get("errors") if isinstance(payload, dict) else None
            if kind == "report" and event.get("verdict") == "failed":
                detail = "; ".join(map(str, errors)) if errors else summary
                lines.append(f"the try failed: {detail}")
            elif kind in ("escalate", "error"):
                lines.append(f"{'escalated' if kind == 'escalate' else 'error'}: {summary}")
        if act.finished and not lines and act.finished_reason not in GOOD_ENDS:
            reason = self.loop.status().details.get("reason") or next(
                (str(e.get("summary")) for e in reversed(written)
                 if e.get("kind") == "finish" and e.get("summary")), None)
            lines.append(f"finished: {act.finished_reason}"
                         + (f": {reason}" if reason else ""))
        return "".join(warning_html(line) for line in lines)

    def _refused(self, refused: LoopRefused) -> bool:
        self.refusals += 1
        self.message.value = error_html(refused, "refused") + note_html(
            "the loop is unchanged: fix the report and Step again")
        return False

    def refresh(self) -> None:
        """Redraw the header, the buttons, the snapshot list, the drawing and the events
        table."""
        status = self.loop.status()
        act = self.loop.contract()
        reason = status.details.get("reason") if status.finished else None
        where = (f"finished: <code>{html.escape(str(status.finished_reason))}</code>"
                 + (f" — {html.escape(str(reason))}" if reason else "")
                 if status.finished else
                 f"next: <b>{html.escape(str(act.stage or act.role))}</b>"
                 + (f" — expects {html.escape(act.expects)}" if act.expects else ""))
        caps = ", ".join(html.escape(str(c)) for c in status.caps)
        self.header.value = (f"<div class='crewbook-stepper-header'><b>{html.escape(status.loop)}"
                             f"</b> after {status.acts} acts · {where}"
                             + (f"<br><small>caps: {caps}</small>" if caps else "") + "</div>")
        for button in (self.step_button, self.run_button):
            button.disabled = status.finished
        self.step_button.tooltip = ("the loop has finished: Rewind or Reset to step again"
                                    if status.finished else "apply the report in the form")
        self._list_snapshots()
        self._draw()
        self._table()

    def _list_snapshots(self) -> None:
        """The picker: every snapshot, those off the current line marked, the one the
        loop is at selected (so it never shows a later act after a rewind)."""
        kept = set(self.line)
        options = []
        for i, (label, _) in enumerate(self.snapshots):
            line = self._lines[i]
            off = any(step not in kept for step in line)
            shown = label + (" (abandoned branch)" if off else "") + (
                " ← now" if i == self.at else "")
            options.append((shown, i))
        self.snapshot_list.options = options
        self.snapshot_list.value = self.at

    def _table(self) -> None:
        run = getattr(self.loop, "run", None)
        rows = last_events(self.loop.ledger, self.n_events,
                           None if run is None else str(run))
        abandoned = self.abandoned()
        columns = [c for c in EVENT_COLUMNS if any(c in r for r in rows)]
        if len({r.get("run") for r in rows}) > 1:
            columns.insert(0, "run")
        note = ""
        struck = self.struck_shown = sum(_key(r) in abandoned for r in rows)
        if struck:  # counted among the rows shown: a note never points at no row
            for r in rows:
                r["branch"] = "abandoned" if _key(r) in abandoned else "current"
            columns.insert(0, "branch")
            note = note_html(f"{plural(struck, 'event')} of abandoned branches (struck "
                             "through): the loop was rewound before them")

        def style(row: Any) -> str:
            return ABANDONED_STYLE if _key(row) in abandoned else ""

        self.events.value = note + table_html(rows, columns, "(no events yet)", style)

    def _draw(self) -> None:
        model_of = getattr(self.loop, "graph_model", None)
        self.drawing.value = (reveal_html(model_of, self.zoom.value) if callable(model_of)
                              else note_html("(this loop has no drawing)"))

    def __repr__(self) -> str:
        """What a saved notebook shows before the widget runs: the loop's kind, acts and
        next actor, never a path (a loop's state file may sit in a temporary folder)."""
        status = self.loop.status()
        where = (f"finished ({status.finished_reason})" if status.finished
                 else f"at {status.current}" if status.current else "running")
        return f"<Stepper: {status.loop} loop after {status.acts} acts, {where}>"


#: How a loop may finish without anything to explain.
GOOD_ENDS = ("done", "pull_request", "already_done", "delivered", "scope_covered")


def _key(event: Any) -> tuple[str, str]:
    """An event's identity in the ledger: (run, seq) as text."""
    return (str(event.get("run")), str(event.get("seq")))
