"""Driving JupyterLab from playwright: open a notebook, run every cell, read the page."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from crewbook.draw.cards import FIT_HEIGHT

#: JavaScript: True when the kernel is idle and every code cell has run.
ALL_RAN = """() => {
  const status = document.querySelector('.jp-Notebook-ExecutionIndicator');
  const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];
  return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent))
    && (!status || status.getAttribute('data-status') === 'idle');
}"""

#: JavaScript: every image of the notebook that failed to load (naturalWidth 0).
BROKEN_IMAGES = """() => [...document.querySelectorAll('.jp-Notebook img')]
  .filter(img => img.complete && img.naturalWidth === 0)
  .map(img => (img.getAttribute('src') || '').slice(0, 80))"""

#: JavaScript: whether every image of the notebook has finished loading.
IMAGES_LOADED = """() => [...document.querySelectorAll('.jp-Notebook img')]
  .every(img => img.complete)"""

#: JavaScript: the text of error outputs (tracebacks, widget errors, crewbook errors).
ERRORS = """() => {
  const found = [];
  for (const el of document.querySelectorAll(
      '.jp-Notebook [data-mime-type="application/vnd.jupyter.stderr"]')) {
    found.push('stderr: ' + el.textContent.slice(0, 300));
  }
  for (const el of document.querySelectorAll('.jp-Notebook .crewbook-error')) {
    found.push('crewbook: ' + el.textContent.slice(0, 300));
  }
  for (const el of document.querySelectorAll('.jp-Notebook .jp-OutputArea-output')) {
    if (/Error displaying widget|Failed to display|Model not found/.test(el.textContent)) {
      found.push('widget: ' + el.textContent.slice(0, 300));
    }
  }
  return found;
}"""


#: JavaScript: whether the notebook's kernel is connected and idle.
KERNEL_IDLE = """() => {
  const status = document.querySelector('.jp-Notebook-ExecutionIndicator');
  const name = document.querySelector('.jp-KernelName');
  return status !== null && status.getAttribute('data-status') === 'idle'
    && name !== null && /Python/.test(name.textContent);
}"""


_opened = 0


def open_notebook(page: Any, lab: str, name: str) -> None:
    """Open `name` (its saved outputs shown, untrusted) and wait for its kernel."""
    global _opened
    _opened += 1  # a workspace of its own: no notebook left open by an earlier test
    page.goto(f"{lab}/lab/workspaces/test-{_opened}/tree/{name}?reset")
    page.wait_for_selector(".jp-Notebook .jp-Cell")
    select = page.locator(".jp-Dialog button", has_text=re.compile("^Select$"))
    # Some JupyterLabs ask which kernel even when the notebook names one; with
    # `autoStartDefaultKernel` there is no dialog and the kernel starts by itself.
    if select.count():
        select.click()
    page.wait_for_function(KERNEL_IDLE, timeout=90_000)
    page.wait_for_function(IMAGES_LOADED)


def menu(page: Any, top: str, item: str) -> None:
    """Click `top` in the menu bar, then `item` in its menu."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{top}$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{re.escape(item)}$")).click()


def run_all(page: Any, timeout_s: float = 240) -> None:
    """Clear every output, Run All Cells, then wait until every code cell has run."""
    menu(page, "Edit", "Clear Outputs of All Cells")
    page.wait_for_function("""() => [...document.querySelectorAll(
        '.jp-CodeCell .jp-InputPrompt')].every(p => !/\\d/.test(p.textContent))""")
    menu(page, "Run", "Run All Cells")
    page.wait_for_function(ALL_RAN, timeout=timeout_s * 1000)
    page.wait_for_function(IMAGES_LOADED)


#: JavaScript: drawings shown narrower than their own size (squeezed into the cell
#: instead of scrolling at 1:1), and drawings whose box does not scroll.
SQUEEZED = """() => [...document.querySelectorAll('.jp-Notebook .crewbook-drawing img[width]')]
  .filter(img => img.getBoundingClientRect().width < 0.98 * Number(img.getAttribute('width'))
                 || getComputedStyle(img.parentElement).overflowX !== 'auto')
  .map(img => img.getAttribute('width') + 'px shown ' +
              Math.round(img.getBoundingClientRect().width) + 'px')"""


#: JavaScript: overviews (a drawing's default display, shrunk to fit the cell) that do
#: not fit: wider than their cell, taller than `FIT_HEIGHT`, or enlarged past 1:1.
OVERFLOWING = """() => [...document.querySelectorAll('.jp-Notebook .crewbook-overview img')]
  .filter(img => img.complete && img.naturalWidth > 0)
  .filter(img => { const r = img.getBoundingClientRect();
                   const cell = img.closest('.jp-OutputArea-output') || img.parentElement;
                   return r.width > cell.getBoundingClientRect().width + 1 || r.height > FIT + 1
                          || r.width > img.naturalWidth + 1; })
  .map(img => Math.round(img.getBoundingClientRect().width) + 'x' +
              Math.round(img.getBoundingClientRect().height) + 'px shown')
""".replace("FIT", str(FIT_HEIGHT))


#: JavaScript: the outputs wider than their cell (the output area scrolls sideways:
#: ``scrollWidth > clientWidth``), each named by its cell's and output's index and what
#: sticks out (a table, a drawing, a widget...).
WIDER_THAN_CELL = """() => {
  const found = [];
  const named = out => {
    const what = out.querySelector(
      '.jupyter-widgets[class*="crewbook-"], table, svg, img, pre');
    if (!what) return 'output';
    const classes = typeof what.className === 'string' ? what.className.split(' ') : [];
    return classes.find(k => k.startsWith('crewbook-')) || what.tagName.toLowerCase();
  };
  const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
  cells.forEach((cell, c) => {
    const outputs = cell.querySelectorAll(
      '.jp-Cell-outputArea > .jp-OutputArea-child > .jp-OutputArea-output');
    outputs.forEach((out, o) => {
      if (out.scrollWidth > out.clientWidth + 1) {
        found.push(`cell ${c} output ${o}: ${named(out)} ${out.scrollWidth}px ` +
                   `in ${out.clientWidth}px`);
      }
    });
  });
  return found;
}"""

#: The smallest drawing text a reader can read on a projected screen, in CSS pixels.
MIN_TEXT_PX = 10

#: JavaScript: drawings whose smallest text is under `MIN_TEXT_PX` on screen. Inline SVG:
#: each text's font size times its screen scale (``getScreenCTM``); an SVG image (a data
#: URI): its smallest font size times the top group's scale times the shown width over the
#: viewBox's. Named by cell index and the size seen; matplotlib plots are left out.
SMALL_TEXT = r"""() => {
  const MIN = MIN_PX;
  const found = [];
  const size = t => parseFloat(t.getAttribute('font-size') || getComputedStyle(t).fontSize);
  const decode = data => {
    const comma = data.indexOf(',');
    const body = data.slice(comma + 1);
    return data.slice(0, comma).endsWith(';base64') ? atob(body) : decodeURIComponent(body);
  };
  const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
  cells.forEach((cell, c) => {
    for (const svg of cell.querySelectorAll('.jp-OutputArea-output svg')) {
      if (svg.getBoundingClientRect().width === 0 || svg.closest('.jp-RenderedImage')) continue;
      let least = Infinity;
      for (const t of svg.querySelectorAll('text')) {
        const m = t.getScreenCTM();
        if (m) least = Math.min(least, size(t) * Math.hypot(m.a, m.b));
      }
      if (least < MIN) found.push(`cell ${c}: inline drawing text ${least.toFixed(1)}px`);
    }
    const images = cell.querySelectorAll(
      '.jp-OutputArea-output img[src^="data:image/svg+xml"]');
    for (const img of images) {
      const shown = img.getBoundingClientRect().width;
      if (shown === 0 || img.classList.contains('crewbook-plot')) continue;
      let root;
      try {
        root = new DOMParser().parseFromString(decode(img.getAttribute('src')),
                                               'image/svg+xml').documentElement;
      } catch (e) { continue; }
      const view = (root.getAttribute('viewBox') || '').split(/[\s,]+/).map(Number);
      const width = view.length === 4 && view[2] > 0 ? view[2] : img.naturalWidth;
      const group = root.querySelector('g[transform*="scale"]');
      const scaled = group && /scale\(([\d.]+)/.exec(group.getAttribute('transform'));
      const scale = scaled ? parseFloat(scaled[1]) : 1;
      const sizes = [...root.querySelectorAll('text')]
        .map(t => parseFloat(t.getAttribute('font-size') || '14'));
      if (!sizes.length || !width) continue;
      const least = Math.min(...sizes) * scale * shown / width;
      if (least < MIN) {
        found.push(`cell ${c}: drawing image text ${least.toFixed(1)}px ` +
                   `(shown ${Math.round(shown)}px wide)`);
      }
    }
  });
  return found;
}""".replace("MIN_PX", str(MIN_TEXT_PX))


#: What `problems` finds on a page that has none.
CLEAN: dict[str, list[str]] = {
    "broken images": [], "errors": [], "squeezed drawings": [], "overviews that do not fit": [],
    "outputs wider than their cell": [], "drawing text under 10 px": []}


def problems(page: Any) -> dict[str, list[str]]:
    """Broken images, 1:1 drawings squeezed, overviews that do not fit, outputs wider
    than their cell, drawing text too small to read, error outputs."""
    return {"broken images": page.evaluate(BROKEN_IMAGES), "errors": page.evaluate(ERRORS),
            "squeezed drawings": page.evaluate(SQUEEZED),
            "overviews that do not fit": page.evaluate(OVERFLOWING),
            "outputs wider than their cell": page.evaluate(WIDER_THAN_CELL),
            "drawing text under 10 px": page.evaluate(SMALL_TEXT)}


def shoot(page: Any, folder: Path, name: str, selector: str = ".jp-Notebook") -> list[Path]:
    """Screenshot every element matching `selector` (in page order) into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, element in enumerate(page.locator(selector).all()):
        path = folder / f"{name}-{i:02d}.png"
        element.screenshot(path=str(path))
        paths.append(path)
    return paths


#: JavaScript: the widget outputs of the current notebook (read from its model, through
#: ``window.jupyterapp``): how many, how many show a widget view (from the kernel or from
#: the state saved in the notebook), and the text of the others (the text/plain fallback
#: that an untrusted notebook shows, "Loading widget…", an error).
WIDGET_OUTPUTS = """() => {
  const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  if (!panel || !panel.content || !panel.content.widgets) {
    return {outputs: 0, shown: 0, not_shown: ['no notebook in the main area']};
  }
  let outputs = 0, shown = 0;
  const not_shown = [];
  for (const cell of panel.content.widgets) {
    if (cell.model.type !== 'code') continue;
    const model = cell.model.outputs;
    const nodes = [...cell.node.querySelectorAll(
      '.jp-Cell-outputArea > .jp-OutputArea-child > .jp-OutputArea-output')];
    for (let i = 0; i < model.length; i++) {
      if (!('application/vnd.jupyter.widget-view+json' in model.get(i).data)) continue;
      outputs++;
      const node = nodes[i];
      if (node && node.querySelector('.jupyter-widgets')) shown++;
      else not_shown.push(node ? node.textContent.trim().slice(0, 120) : 'no output node');
    }
  }
  return {outputs, shown, not_shown};
}"""



def start_run_all(page: Any) -> None:
    """Clear every output and click Run All Cells without waiting for the end (see
    `run_all`, and `ran` to poll)."""
    menu(page, "Edit", "Clear Outputs of All Cells")
    page.wait_for_function("""() => [...document.querySelectorAll(
        '.jp-CodeCell .jp-InputPrompt')].every(p => !/\\d/.test(p.textContent))""")
    menu(page, "Run", "Run All Cells")


def ran(page: Any) -> bool:
    """Whether every code cell of the page's notebook has run and its images loaded."""
    return bool(page.evaluate(ALL_RAN)) and bool(page.evaluate(IMAGES_LOADED))
