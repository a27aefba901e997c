"""A 2,000-artifact drawing in a real JupyterLab (issue 24): a `DrawingView` opens on
the overview, a node searched by id is focused on, and it is visible in the SVG."""

from __future__ import annotations

import json
import shutil
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from .lab import KERNEL_IDLE, menu

ROOT = Path(__file__).parents[2]
NAME = "_drawings_2000.ipynb"
#: The notebook the test writes into the lab (not a lesson: it lives only in the lab's
#: temporary copy): a 2,000-artifact schema generated with benchmarks/gen_schema.py's
#: fixed seed, in a DrawingView.
CELLS = [
    "import importlib.util, tempfile\n"
    "import crewbook\n"
    "from crewbook.widgets import DrawingView\n"
    f"spec = importlib.util.spec_from_file_location('gen_schema', {str(ROOT / 'benchmarks' / 'gen_schema.py')!r})\n"  # noqa: E501
    "gen = importlib.util.module_from_spec(spec); spec.loader.exec_module(gen)\n"
    "folder = gen.write(2000, __import__('pathlib').Path(tempfile.mkdtemp()))\n"
    "schema = crewbook.load_schema(folder)",
    "view = DrawingView(schema)\nview",
]

#: JavaScript: where the node titled `id` sits against the SVG window drawing it.
NODE_IN_VIEW = """(id) => {
  const svg = document.querySelector('.crewbook-drawing-view .crewbook-view svg');
  if (!svg) return null;
  const node = [...svg.querySelectorAll('g.node')]
    .find(g => g.querySelector('title') && g.querySelector('title').textContent === id);
  if (!node) return {found: false};
  const a = node.getBoundingClientRect(), b = svg.getBoundingClientRect();
  return {found: true, inside: a.left >= b.left - 1 && a.right <= b.right + 1
          && a.top >= b.top - 1 && a.bottom <= b.bottom + 1 && a.width > 20,
          node: [a.left, a.top, a.width, a.height], svg: [b.left, b.top, b.width, b.height],
          marked: node.querySelectorAll('polygon, path').length > 1};
}"""


def _put_notebook(lab: str) -> None:
    cells: list[dict[str, Any]] = [
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
         "source": source} for source in CELLS]
    notebook = {"cells": cells, "metadata": {"kernelspec": {
        "display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5}
    body = json.dumps({"type": "notebook", "format": "json", "content": notebook}).encode()
    request = urllib.request.Request(f"{lab}/api/contents/{NAME}", data=body, method="PUT",
                                     headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=30).close()


@pytest.mark.skipif(shutil.which("dot") is None, reason="the Graphviz 'dot' program is not on PATH")
def test_focus_on_a_node_of_a_2000_artifact_drawing(page: Any, lab: str,
                                                    screenshots: Path) -> None:
    _put_notebook(lab)
    page.goto(f"{lab}/lab/workspaces/drawings/tree/{NAME}?reset")
    page.wait_for_selector(".jp-Notebook .jp-Cell")
    page.wait_for_function(KERNEL_IDLE, timeout=90_000)
    menu(page, "Run", "Run All Cells")
    view = page.locator(".crewbook-drawing-view")
    view.wait_for(timeout=120_000)
    page.wait_for_selector(".crewbook-drawing-view .crewbook-view svg", timeout=60_000)
    assert "overview · whole drawing" in view.inner_text()
    box = page.locator(".crewbook-drawing-view .crewbook-view svg").bounding_box()
    assert box is not None
    assert box["width"] <= 1000, "the overview fits the window"
    cell = page.locator(".jp-OutputArea-output:has(.crewbook-drawing-view)").bounding_box()
    assert cell is not None
    assert box["x"] + box["width"] <= cell["x"] + cell["width"] + 1, "and the cell"
    view.screenshot(path=str(screenshots / "drawings-2000-overview.png"))

    search = view.locator("input[placeholder='node id']")
    search.fill("a01234")
    search.press("Enter")
    page.wait_for_function("() => /around a01234/.test(document.querySelector("
                           "'.crewbook-drawing-view').innerText)", timeout=60_000)
    where = page.evaluate(NODE_IN_VIEW, "a01234")
    assert where["found"], "the focused node is drawn"
    assert where["inside"], f"the focused node is inside the window: {where}"
    assert where["marked"], "a double border marks the focused node"
    assert view.locator("svg text", has_text="more").count() > 0, "+N more stubs"
    view.screenshot(path=str(screenshots / "drawings-2000-focus.png"))

    view.locator("button", has_text="overview").click()
    page.wait_for_function("() => /overview · whole/.test(document.querySelector("
                           "'.crewbook-drawing-view').innerText)", timeout=60_000)
    assert view.locator(".crewbook-error").count() == 0
