"""Make docs/images/tour.png, the README's picture, from the tour's saved outputs.

    .venv/bin/python scripts/readme_picture.py

Takes cells 22 and 28 of notebooks/00_tour.ipynb (a change's status drawn, then its
tasks as a table) as they are saved, renders them as HTML with nbconvert, and
photographs them in Debian's headless chromium through playwright. Offline.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
CELLS = (22, 23)  # project.status(...) drawn, then status.frame()
CHROMIUM = os.environ.get("CREWBOOK_CHROMIUM", "/usr/bin/chromium")


def main() -> None:
    notebook = nbformat.read(ROOT / "notebooks" / "00_tour.ipynb", as_version=4)
    notebook.cells = [notebook.cells[i] for i in CELLS]
    html, _ = HTMLExporter(template_name="lab").from_notebook_node(notebook)
    target = ROOT / "docs" / "images" / "tour.png"
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        page_file = Path(tmp) / "tour.html"
        page_file.write_text(html, "utf-8")
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"])
        page = browser.new_page(viewport={"width": 980, "height": 600},
                                device_scale_factor=1)
        page.goto(page_file.as_uri())
        page.wait_for_load_state("networkidle")
        page.locator(".jp-Notebook").screenshot(path=str(target))
        browser.close()
    print(f"wrote {target.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
