"""The notebooks in a real JupyterLab and a real chromium, at 1280 px.

Every notebook is opened as saved (untrusted, no cell run): no broken image, no error.
The notebooks with widgets are then run (Run All, trusted): still no error, and their
widgets live. The others are not run here: nbval runs every notebook in a kernel and
holds its outputs to the saved ones, so their live outputs are the saved ones checked
above (running them in the lab too cost about 4 minutes of a 2-core CI). The notebooks
go two at a time, in two tabs of one JupyterLab (page loads, kernel starts and
screenshots overlap the other tab's run); the results are collected once per module and
each notebook is its own test. The notebooks with widgets are also opened trusted and
unrun: their widgets show from the state saved with them.

Screenshots (CI artifacts, see docs/development.md) go to
``tests/browser/screenshots/<notebook>/``: ``saved-widget-NN.png`` for each widget as a
reader sees it before running anything, ``output-NN.png`` for every output with a
picture, a table, a drawing or a widget (after Run All for those that run).
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .conftest import stop_session, trust
from .lab import (
    CLEAN,
    SMALL_TEXT,
    WIDER_THAN_CELL,
    WIDGET_OUTPUTS,
    open_notebook,
    problems,
    ran,
    run_all,
    shoot,
    start_run_all,
)

#: Whether the Graphviz `dot` program is on PATH (the suite passes either way).
DOT = shutil.which("dot") is not None
#: The Stepper's drawing: inline SVG with dot, the card saying why without.
DRAWING = ".crewbook-drawing, .crewbook-nodraw"

#: Every notebook: a new notebook is covered by being there.
NOTEBOOKS = sorted(p.name for p in (Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))
#: Notebooks whose plots must show as pictures, as saved and after Run All.
PLOTTING = {"07_what_if.ipynb": 2}
PLOTS = ".jp-Notebook .jp-RenderedImage img"
#: How many notebooks run at once, each in its own tab.
TABS = 2
#: The longest a notebook may take to run all its cells.
RUN_TIMEOUT_S = 300
#: Outputs worth a screenshot after Run All.
SHOWN = ".jp-Notebook .jp-Cell-outputArea:has(img, table, svg, .jupyter-widgets)"
#: The notebooks with widgets, and how many widget outputs each shows.
WITH_WIDGETS = {"00_tour.ipynb": 2, "02_run_history.ipynb": 2, "03_pipeline_stepping.ipynb": 1,
                "05_coordinator.ipynb": 1, "06_crew_loop.ipynb": 1}
#: The notebooks run in the lab (Run All): those with widgets, which only live there.
LIVE = frozenset(WITH_WIDGETS)


@dataclass
class Result:
    """What one notebook looked like, as saved and after Run All."""

    name: str
    dirty: bool = False
    saved: dict[str, list[str]] = field(default_factory=dict)
    ran: dict[str, list[str]] = field(default_factory=dict)
    plots_saved: int = 0
    plots_ran: int = 0
    drawings_saved: int = 0
    drawings_ran: int = 0
    screenshots: list[Path] = field(default_factory=list)
    error: str = ""
    seconds: float = 0.0


def _open_and_check_saved(page: Any, lab: str, name: str, folder: Path) -> Result:
    result = Result(name)
    open_notebook(page, lab, name)
    page.wait_for_timeout(1_000)  # give JupyterLab time to touch the metadata, if it would
    result.dirty = page.locator(".lm-TabBar-tab.jp-mod-dirty").count() > 0
    result.saved = problems(page)
    result.plots_saved = page.locator(PLOTS).count()
    result.drawings_saved = page.locator(".jp-Notebook .crewbook-drawing img").count()
    if name in LIVE:
        start_run_all(page)
    else:  # as saved is as run (nbval): the saved outputs are the ones to look at
        result.ran, result.plots_ran = result.saved, result.plots_saved
        result.drawings_ran = result.drawings_saved
        result.screenshots += shoot(page, folder, "output", SHOWN)
    return result


def _finish(page: Any, result: Result, folder: Path) -> None:
    result.ran = problems(page)
    result.plots_ran = page.locator(PLOTS).count()
    shown = ".jp-Notebook .crewbook-drawing img" if DOT else ".jp-Notebook .crewbook-nodraw"
    result.drawings_ran = page.locator(shown).count()
    result.screenshots += shoot(page, folder, "output", SHOWN)


def _selected(session: pytest.Session) -> list[str]:
    """The notebooks the selected tests of this module need (all without `-k`)."""
    names: set[str] = set()
    for item in session.items:
        module = getattr(item, "module", None)
        if module is not None and module.__name__ == __name__:
            params = getattr(item, "callspec", None)
            if params is not None and "name" in params.params and \
                    item.name.startswith("test_no_broken_image_and_no_error"):
                names.add(params.params["name"])
    return sorted(names)


@pytest.fixture(scope="module")
def results(request: pytest.FixtureRequest, browser: Any, lab: str,
            screenshots: Path) -> Iterator[dict[str, Result]]:
    """Every notebook opened, checked as saved, run and checked again, `TABS` at a time."""
    # tall: an output taller than the viewport would be screenshot through the scrolled
    # notebook, with the page's chrome over it
    context = browser.new_context(viewport={"width": 1280, "height": 2000})
    done: dict[str, Result] = {}
    waiting = _selected(request.session)
    running: list[tuple[Any, Result, float]] = []
    try:
        while waiting or running:
            while waiting and len(running) < TABS:
                name = waiting.pop(0)
                folder = screenshots / Path(name).stem
                shutil.rmtree(folder, ignore_errors=True)  # this run's pictures only
                page = context.new_page()
                page.set_default_timeout(60_000)
                started = time.monotonic()
                try:
                    running.append((page, _open_and_check_saved(page, lab, name, folder),
                                    started))
                except Exception as error:  # the notebook's test reports it
                    done[name] = Result(name, error=f"opening: {error}")
                    page.close()
                    stop_session(lab, name)
            for entry in list(running):
                page, result, started = entry
                elapsed = time.monotonic() - started
                try:
                    finished = result.name not in LIVE or ran(page)
                except Exception as error:
                    result.error, finished = f"running: {error}", True
                if not finished and elapsed > RUN_TIMEOUT_S:
                    result.error, finished = f"not done after {RUN_TIMEOUT_S} s", True
                if finished:
                    if not result.error and result.name in LIVE:
                        try:
                            _finish(page, result, screenshots / Path(result.name).stem)
                        except Exception as error:
                            result.error = f"after running: {error}"
                    result.seconds = round(time.monotonic() - started, 1)
                    done[result.name] = result
                    running.remove(entry)
                    page.close()
                    stop_session(lab, result.name)
            if running:
                running[0][0].wait_for_timeout(500)
        yield done
    finally:
        context.close()


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_no_broken_image_and_no_error(results: dict[str, Result], name: str) -> None:
    result = results[name]
    assert result.error == ""
    clean = CLEAN
    assert not result.dirty, "opens as modified"
    assert result.saved == clean, f"{name} as saved (untrusted)"
    assert result.ran == clean, f"{name} after Run All (trusted)"
    if name in PLOTTING:  # matplotlib's inline backend: the pictures are in the file
        assert result.plots_saved >= PLOTTING[name]
        assert result.plots_ran >= PLOTTING[name]
    if name == "00_tour.ipynb":  # saved with dot: its drawings are images; after Run All,
        assert result.drawings_saved > 0  # drawings, or without dot the cards saying why
        assert result.drawings_ran > 0
    assert result.screenshots, "a notebook with nothing drawn"


@pytest.mark.parametrize("name", sorted(WITH_WIDGETS))
def test_a_trusted_notebook_shows_its_saved_widgets_before_anything_runs(
        page: Any, lab: str, name: str, screenshots: Path) -> None:
    """A reader who opens a notebook (trusted: JupyterLab renders no widget in an
    untrusted one, nor does it run JavaScript) sees its widgets from the state saved with
    it, not ``<LedgerExplorer 6,120 events …>``; scripts/run_notebook.py saves the state.
    No cell is run: the kernel starts, but holds no widget."""
    trust(lab, name)
    page.set_viewport_size({"width": 1280, "height": 2000})  # tall widgets screenshot whole
    open_notebook(page, lab, name)
    check = (f"() => {{ const w = ({WIDGET_OUTPUTS})(); "
             "return w.outputs > 0 && w.shown === w.outputs; }")
    try:
        page.wait_for_function(check)  # the folder's 60 s (conftest): CI is a loaded 2-core machine
    finally:
        widgets = page.evaluate(WIDGET_OUTPUTS)
        wide, small = page.evaluate(WIDER_THAN_CELL), page.evaluate(SMALL_TEXT)
        shoot(page, screenshots / Path(name).stem, "saved-widget",
              ".jp-Cell-outputArea > .jp-OutputArea-child > .jp-OutputArea-output"
              ":has(.jupyter-widgets)")
    assert widgets["not_shown"] == [], "widget outputs drawn as text"
    assert (wide, small) == ([], []), "saved widgets fit their cell, their text readable"
    assert widgets["shown"] == widgets["outputs"] == WITH_WIDGETS[name]
    assert page.locator(".jp-CodeCell .jp-InputPrompt", has_text=re.compile(r"\[\d")).count() \
        == page.locator(".jp-CodeCell").count(), "the saved prompts: nothing re-ran"


def test_tour_stepper_steps_three_times(page: Any, lab: str, screenshots: Path) -> None:
    open_notebook(page, lab, "00_tour.ipynb")
    run_all(page)
    stepper = page.locator(".crewbook-stepper").first
    stepper.scroll_into_view_if_needed()
    drawing = stepper.locator(DRAWING)
    table = stepper.locator(".crewbook-table, .widget-html-content:has-text('no events yet')")
    assert drawing.count() == 1, "the Stepper draws the loop (or says why it cannot)"
    if DOT:
        assert drawing.locator("svg").count() == 1, "inline SVG"
    stepper.screenshot(path=str(screenshots / "stepper-0.png"))
    step = stepper.locator("button", has_text=re.compile(r"^\s*Step\s*$"))
    before = (drawing.inner_html(), table.first.inner_text())
    seen = [before]
    for i in range(1, 4):
        step.click()
        # the drawing and the events table are two outputs, redrawn one after the other
        page.wait_for_function(
            """([selector, old, rows, oldRows]) => {
              const d = document.querySelector(selector);
              const t = document.querySelector(rows);
              return d !== null && d.innerHTML !== old && t !== null
                && t.innerText !== oldRows;
            }""", arg=[f".crewbook-stepper :is({DRAWING})", seen[-1][0],
                       ".crewbook-stepper .crewbook-table", seen[-1][1]])
        seen.append((drawing.inner_html(), stepper.locator(".crewbook-table").inner_text()))
        stepper.screenshot(path=str(screenshots / f"stepper-{i}.png"))
    drawings = [d for d, _ in seen]
    tables = [t for _, t in seen]
    assert len(set(drawings)) == 4, "the drawing changed at every step"
    assert len(set(tables)) == 4, "the events table changed at every step"
    assert "after 3 acts" in stepper.inner_text()
    assert stepper.locator(".crewbook-error").count() == 0
    if DOT:  # tooltips: the inline SVG keeps its <title> elements
        assert drawing.locator("svg title").count() > 0
