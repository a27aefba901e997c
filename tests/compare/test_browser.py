"""The overlay drawings render in a real browser (headless Chromium), as a notebook shows them.

Each kind of diff is displayed the way JupyterLab gets it (`_repr_mimebundle_`'s
text/html: the SVG made by `dot` as an <img> data URI, then the table); Chromium loads
the page and a script reports every image's size. A broken SVG loads as a 0×0 image.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from crewbook.compare import diff_pipelines, diff_profiles, diff_runs, diff_schemas
from crewbook.draw.render import clear_cache

DATA = Path(__file__).parent.parent / "data"
SEED = DATA / "pipelines" / "role_pipeline.toml"
CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"),
                             shutil.which("google-chrome")) if p), None)

pytestmark = [
    pytest.mark.requires_dot,
    pytest.mark.skipif(shutil.which("dot") is None, reason="the Graphviz 'dot' program is "
                       "not on PATH"),
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on PATH"),
]

SCRIPT = """<script>
window.addEventListener('load', () => {
  // one overview per diff (the 1:1 copy under a shrunk one is the same SVG)
  const sizes = [...document.querySelectorAll('.crewbook-overview img')].map(
    i => (i.complete && i.naturalWidth > 0) ? i.naturalWidth + 'x' + i.naturalHeight : 'broken');
  const out = document.createElement('pre');
  out.id = 'result';
  out.textContent = sizes.join(' ');
  document.body.appendChild(out);
});
</script>"""


def _render_in_chromium(page: Path) -> list[str]:
    assert CHROMIUM is not None
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={page.parent / 'chromium-profile'}", "--virtual-time-budget=5000",
         "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=False)
    found = re.search(r'<pre id="result">([^<]*)</pre>', done.stdout)
    assert found is not None, (
        f"Chromium gave no result (exit {done.returncode}): {done.stderr[-500:]}")
    return found.group(1).split()


def test_every_kind_of_diff_draws_in_the_browser(tour: Path, tmp_path: Path) -> None:
    clear_cache()
    lite = tour / "_codev" / "schemas" / "lite"
    v2 = tour / "_codev" / "schemas" / "lite-v2"
    shutil.copytree(lite, v2)
    data = yaml.safe_load((lite / "schema.yaml").read_text("utf-8"))
    data["artifacts"].insert(2, {"id": "review", "generates": "review.md",
                                 "requires": ["specs"]})
    data["artifacts"][3]["requires"] = ["review"]
    data["name"] = "lite-v2"
    (v2 / "schema.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    pipes = tmp_path / "pipes"
    shutil.copytree(DATA / "pipelines", pipes, ignore=shutil.ignore_patterns("broken"))
    edited = pipes / "edited.toml"
    edited.write_text(SEED.read_text("utf-8").replace('id = "planner"', 'id = "plan_writer"')
                      .replace('"planner"', '"plan_writer"'), encoding="utf-8")
    history = DATA / "ledgers" / "history"
    diffs = [
        diff_schemas(lite, v2, project=tour),
        diff_pipelines(SEED, edited),
        diff_runs(history, "run-0001", history, "run-0003"),
        diff_profiles("claude", "codex"),
    ]
    parts = []
    for d in diffs:
        bundle = d._repr_mimebundle_()
        assert "image/svg+xml" in bundle, f"{d!r} was not drawn"
        parts.append(bundle["text/html"])
    assert "review" in diffs[0].svg()
    assert "renamed from planner" in diffs[1].svg()
    page = tmp_path / "page.html"
    page.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
                    + "".join(parts) + SCRIPT + "</body></html>", encoding="utf-8")
    sizes = _render_in_chromium(page)
    assert len(sizes) == len(diffs)
    assert "broken" not in sizes
    for size in sizes:
        width, height = (int(x) for x in size.split("x"))
        assert width > 100
        assert height > 50
