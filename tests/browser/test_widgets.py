"""The widgets under real clicks, in a real JupyterLab and a real chromium (issue 24):
change the Stepper's move and step, rewind then step, narrow the LedgerExplorer's
filters. The notebook driven is written for the test through the server's contents API
(the lessons in `notebooks/` are not touched) and deleted afterwards. Screenshots go to
``tests/browser/screenshots/widgets/``.
"""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from .lab import CLEAN, open_notebook, problems, run_all

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # a JupyterLab and a kernel: ~1 min

NAME = "widgets_under_clicks.ipynb"
CELLS = [
    """from crewbook.delivery import CoordinatorLoop, ManualClock, Task
from crewbook.widgets import LedgerExplorer, Stepper

loop = CoordinatorLoop(Task(id="csv", description="CSV export"),
                       clock=ManualClock("2025-03-01T09:00:00+00:00"))
Stepper(loop, events=12)""",
    """import tempfile
from pathlib import Path

import crewbook
from crewbook.ledger.synthetic import write_history

folder = Path(tempfile.mkdtemp(prefix="crewbook-widgets-"))
write_history(folder / "h", runs=12, seed=3)
LedgerExplorer(crewbook.read_ledger(folder / "h"))""",
]


def _notebook() -> dict[str, Any]:
    return {"nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                        "language": "python"}},
            "cells": [{"cell_type": "code", "id": f"cell-{i}", "metadata": {},
                       "execution_count": None, "outputs": [], "source": source}
                      for i, source in enumerate(CELLS)]}


def _contents(lab: str, method: str, body: dict[str, Any] | None = None) -> None:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"{lab}/api/contents/{NAME}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=30).close()


@pytest.fixture
def widgets_notebook(lab: str) -> Iterator[str]:
    """The test's notebook, saved in the lab's folder for the test only."""
    _contents(lab, "PUT", {"type": "notebook", "format": "json", "content": _notebook()})
    try:
        yield NAME
    finally:
        _contents(lab, "DELETE")


def _dropdown(scope: Any, label: str) -> Any:
    """The <select> of the ipywidgets Dropdown described `label` inside `scope`."""
    return scope.locator(".widget-dropdown", has=scope.page.locator(
        "label", has_text=re.compile(f"^{re.escape(label)}$"))).locator("select")


def _field(scope: Any, label: str) -> Any:
    """The text box or text area of the form field `label`."""
    return scope.locator(":is(.widget-text, .widget-textarea)", has=scope.page.locator(
        "label", has_text=re.compile(f"^{re.escape(label)}$"))).locator("input, textarea")


def _options(select: Any) -> list[str]:
    """The option labels (ipywidgets shows their spaces as no-break spaces)."""
    found: list[str] = select.locator("option").all_inner_texts()
    return [o.replace("\xa0", " ") for o in found]


def _coordinator_qa(folder: Path) -> tuple[int, int]:
    """How many events and runs of the notebook's history are qa's in coordinator runs
    (the same history, written here too: `write_history` is seeded)."""
    import crewbook
    from crewbook.ledger.synthetic import write_history

    write_history(folder / "h", runs=12, seed=3)
    df = crewbook.read_ledger(folder / "h")
    kept = df[(df.loop == "coordinator") & (df.role == "qa")]
    return len(kept), kept.run.nunique()


@contextmanager
def explained(widget: Any, picture: Path) -> Iterator[None]:
    """On a failed check, a screenshot of `widget` (a CI artifact) and its text in the
    message: what the widget said (a refusal, an error) is what explains the failure."""
    try:
        yield
    except AssertionError as failed:
        widget.screenshot(path=str(picture))
        raise AssertionError(f"{failed}\n--- the widget said:\n{widget.inner_text()}") from None


def test_stepper_and_ledger_explorer_under_clicks(page: Any, lab: str, widgets_notebook: str,
                                                   screenshots: Path, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    folder = screenshots / "widgets"
    folder.mkdir(parents=True, exist_ok=True)
    open_notebook(page, lab, widgets_notebook)
    try:
        run_all(page)
    except Exception:
        page.screenshot(path=str(folder / "run-all-failed.png"), full_page=True)
        raise
    stepper = page.locator(".crewbook-stepper").first
    with explained(stepper, folder / "stepper-failed.png"):
        header = stepper.locator(".crewbook-stepper-header")
        step = stepper.locator("button", has_text=re.compile(r"^\s*Step\s*$"))
        expect(header).to_contain_text("after 0 acts")
        stepper.screenshot(path=str(folder / "stepper-0-start.png"))

        # 1. the plan, then a move change: the form shows the delegation's own fields
        step.click()
        expect(header).to_contain_text("after 1 acts")
        move = _dropdown(stepper, "move")
        # the proposed move's form has an instructions field too: wait for the kernel to
        # replace the form, or the text typed below goes into the old one
        old = _field(stepper, "instructions").element_handle()
        move.select_option(label="delegate:explorer")
        page.wait_for_function("field => !field.isConnected", arg=old)
        expect(_field(stepper, "instructions")).to_have_count(1)
        expect(_field(stepper, "criteria")).to_have_count(0)
        _field(stepper, "instructions").fill("map the export code first")
        stepper.screenshot(path=str(folder / "stepper-1-move-changed.png"))
        step.click()
        expect(header).to_contain_text("after 2 acts")
        expect(header).to_contain_text("explorer")
        assert stepper.locator(".crewbook-error").count() == 0

        # 2. rewind to after act 1, then step again: the picker follows, the abandoned
        # events are struck through
        snapshot = _dropdown(stepper, "snapshot")
        index = next(i for i, o in enumerate(_options(snapshot)) if o.startswith("after act 1"))
        snapshot.select_option(index=index)
        stepper.locator("button", has_text=re.compile(r"^\s*Rewind\s*$")).click()
        expect(header).to_contain_text("after 1 acts")
        expect(snapshot.locator("option:checked")).to_contain_text("after act 1")
        expect(snapshot.locator("option:checked")).to_contain_text("← now")
        struck = stepper.locator(".crewbook-table tr[style*='line-through']")
        expect(struck.first).to_be_visible()
        stepper.screenshot(path=str(folder / "stepper-2-rewound.png"))
        step.click()
        expect(header).to_contain_text("after 2 acts")
        assert struck.count() > 0, "the abandoned branch stays marked"
        assert any("(abandoned branch)" in o for o in _options(snapshot))
        stepper.screenshot(path=str(folder / "stepper-3-stepped-after-rewind.png"))
        assert stepper.locator(".crewbook-error").count() == 0

    # 3. the ledger explorer: loop=coordinator narrows the roles, role=qa keeps events
    explorer = page.locator(".crewbook-ledger-explorer").first
    with explained(explorer, folder / "ledger-explorer-failed.png"):
        explorer.scroll_into_view_if_needed()
        box = explorer.bounding_box()
        assert box is not None
        assert box["height"] <= 800, f"the explorer is {box['height']:.0f} px tall"
        loop_pick, role_pick = _dropdown(explorer, "loop"), _dropdown(explorer, "role")
        assert "analyst" in _options(role_pick)
        loop_pick.select_option(label="coordinator")
        expect(role_pick.locator("option", has_text=re.compile("^analyst$"))).to_have_count(
            0, timeout=60_000)
        role_pick.select_option(label="qa")
        events, runs = _coordinator_qa(tmp_path)
        assert events > 0
        expect(explorer).to_contain_text(f"{events:,} events in {runs:,} runs match",
                                         timeout=60_000)
        expect(explorer.locator(".widget-select select option")).to_have_count(runs,
                                                                               timeout=60_000)
        plots = explorer.locator("img.crewbook-plot")
        expect(plots).to_have_count(2, timeout=60_000)
        for img in plots.all():  # shown at the size it was drawn: no upscaling blur
            shown = img.bounding_box()
            assert shown is not None
            assert abs(shown["width"] - float(img.get_attribute("width") or 0)) < 2
        explorer.screenshot(path=str(folder / "ledger-explorer-narrowed.png"))
        _dropdown(explorer, "kind").select_option(index=0)
        start = explorer.locator("input[type=date]").first
        start.fill("2100-01-01")
        start.dispatch_event("change")
        expect(explorer.locator("text=no events match").first).to_be_visible(timeout=60_000)
        expect(plots).to_have_count(0, timeout=60_000)
        page.wait_for_timeout(2_000)  # a callback still drawing the old filters would land now
        expect(plots).to_have_count(0)
        expect(explorer).not_to_contain_text("events of run-")
        explorer.screenshot(path=str(folder / "ledger-explorer-empty.png"))
        shown = "s => s.options[s.selectedIndex].text"
        assert (loop_pick.evaluate(shown), role_pick.evaluate(shown)) == ("coordinator", "qa"), \
            "dates that keep nothing leave the choices as they were"
        start.fill("")
        start.dispatch_event("change")
        expect(explorer).to_contain_text(f"{events:,} events in {runs:,} runs match",
                                         timeout=60_000)  # the chosen events, not every loop's
    assert problems(page) == CLEAN, "no widget wider than its cell after the clicks"
