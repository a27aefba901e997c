"""The notebooks in a real JupyterLab and a real chromium, at 1280 px."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from .lab import open_notebook, problems, run_all, shoot

#: Whether the Graphviz `dot` program is on PATH (the suite passes either way).
DOT = shutil.which("dot") is not None
#: The Stepper's drawing: inline SVG with dot, the card saying why without.
DRAWING = ".crewbook-drawing, .crewbook-nodraw"

#: Every notebook, checked for broken images and error outputs, as saved (untrusted) and
#: after Run All (trusted): a new notebook is covered by being there.
NOTEBOOKS = sorted(p.name for p in (Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))
#: Notebooks whose plots must show as pictures, as saved and after Run All.
PLOTTING = {"07_what_if.ipynb": 2}


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_no_broken_image_and_no_error(page: Any, lab: str, name: str,
                                      screenshots: Path) -> None:
    open_notebook(page, lab, name)
    page.wait_for_timeout(1_000)  # give JupyterLab time to touch the metadata, if it would
    assert page.locator(".lm-TabBar-tab.jp-mod-dirty").count() == 0, "opens as modified"
    saved = problems(page)
    plots = ".jp-Notebook .jp-RenderedImage img"
    if name in PLOTTING:  # matplotlib's inline backend: the pictures are in the file
        assert page.locator(plots).count() >= PLOTTING[name]
    if name == "00_tour.ipynb":  # saved with dot: its drawings are images
        assert page.locator(".jp-Notebook .crewbook-drawing img").count() > 0
    run_all(page)
    ran = problems(page)
    if name in PLOTTING:
        assert page.locator(plots).count() >= PLOTTING[name]
    if name == "00_tour.ipynb":  # drawings, or without dot the cards saying why
        shown = ".jp-Notebook .crewbook-drawing img" if DOT else ".jp-Notebook .crewbook-nodraw"
        assert page.locator(shown).count() > 0
    shoot(page, screenshots / Path(name).stem, "output",
          ".jp-Notebook .jp-Cell-outputArea:has(img, table, .jupyter-widgets)")
    clean = {"broken images": [], "errors": [], "squeezed drawings": []}
    assert saved == clean, "as saved (untrusted)"
    assert ran == clean, "after Run All (trusted)"


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
        page.wait_for_function(
            """([selector, old]) => {
              const d = document.querySelector(selector);
              return d !== null && d.innerHTML !== old;
            }""", arg=[f".crewbook-stepper :is({DRAWING})", seen[-1][0]])
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
