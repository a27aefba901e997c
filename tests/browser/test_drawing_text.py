"""The drawings of the lessons about drawings and loops, in a real JupyterLab at 1280 × 900:
each is whole inside its cell and its smallest text is at least 10 px on screen (the
SVG's smallest font-size times the scale it is shown at), as saved and trusted, so the
Steppers' saved drawings show too."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from crewbook.draw.layout import MIN_TEXT_PX

from .conftest import trust
from .lab import open_notebook

#: The notebooks whose drawings are checked here (the overflow of every output is
#: another test's).
NOTEBOOKS = ["01_schema_design.ipynb", "03_pipeline_stepping.ipynb", "05_coordinator.ipynb",
             "06_crew_loop.ipynb", "09_openspec_project.ipynb"]

#: JavaScript: for every drawing (an overview image, or a widget's inline SVG), its
#: cell, its smallest text on screen in CSS px, and whether it lies inside its output.
TEXT_SIZES = r"""() => {
  const found = [];
  const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
  const place = (el, px) => {
    const r = el.getBoundingClientRect();
    const out = el.closest('.jp-OutputArea-output') || el.parentElement;
    const o = out.getBoundingClientRect();
    found.push({cell: cells.indexOf(el.closest('.jp-Cell')), px: px,
                width: Math.round(r.width),
                inside: r.left >= o.left - 1 && r.right <= o.right + 1});
  };
  for (const img of document.querySelectorAll('.jp-Notebook .crewbook-overview img')) {
    const src = img.getAttribute('src') || '';
    const at = src.indexOf('base64,');
    if (at < 0 || !img.naturalWidth) continue;
    const svg = new TextDecoder().decode(
      Uint8Array.from(atob(src.slice(at + 7)), c => c.charCodeAt(0)));
    const box = /viewBox="[-\d.]+ [-\d.]+ ([\d.]+) [\d.]+"/.exec(svg);
    const sizes = [...svg.matchAll(/font-size="([\d.]+)"/g)].map(m => parseFloat(m[1]));
    if (!box || !sizes.length) continue;
    place(img, Math.min(...sizes) * img.getBoundingClientRect().width / parseFloat(box[1]));
  }
  for (const svg of document.querySelectorAll('.jp-Notebook .crewbook-view svg')) {
    const texts = [...svg.querySelectorAll('text[font-size]')];
    if (!texts.length || !svg.getScreenCTM()) continue;
    place(svg, Math.min(...texts.map(
      t => parseFloat(t.getAttribute('font-size')) * t.getScreenCTM().a)));
  }
  return found;
}"""


@pytest.mark.skipif(shutil.which("dot") is None, reason="the Graphviz 'dot' program is not on PATH")
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_drawing_is_whole_and_its_text_legible(page: Any, lab: str, name: str) -> None:
    trust(lab, name)
    open_notebook(page, lab, name)
    page.wait_for_timeout(2_000)  # the saved widgets draw from their state
    drawings = page.evaluate(TEXT_SIZES)
    assert drawings, f"{name} shows no drawing"
    small = [d for d in drawings if d["px"] < MIN_TEXT_PX - 0.05]
    assert not small, f"{name}: text under {MIN_TEXT_PX:g} px on screen: {small}"
    cut = [d for d in drawings if not d["inside"]]
    assert not cut, f"{name}: drawings wider than their cell: {cut}"
