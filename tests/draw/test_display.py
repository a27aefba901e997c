"""The display mixin: text/plain + text/html always, SVG only when `dot` ran, never a raise."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import crewbook
from crewbook.draw import Drawable, Edge, GraphModel, Node, options
from crewbook.draw.display import svg_box, svg_size
from crewbook.errors import CrewbookError, InvalidInputError

HINTS = ("apt-get install graphviz", "brew install graphviz", "conda install graphviz")


def tiny() -> GraphModel:
    model = GraphModel("tiny", title="tiny")
    model.add_node(Node("a"))
    model.add_node(Node("b"))
    model.add_edge(Edge("a", "b"))
    return model


class Thing(Drawable):
    """A drawable whose pieces can be made to fail."""

    def __init__(self, model: bool = True, html: bool = True, text: bool = True) -> None:
        self.ok_model, self.ok_html, self.ok_text = model, html, text

    def graph_model(self) -> GraphModel:
        if not self.ok_model:
            raise KeyError("no such artifact 'x'")
        return tiny()

    def _repr_html_(self) -> str:
        if not self.ok_html:
            raise RuntimeError("table broke")
        return "<table class='thing'></table>"

    def __repr__(self) -> str:
        if not self.ok_text:
            raise RuntimeError("repr broke")
        return "<Thing>"


@pytest.fixture
def lite(tour: Path) -> crewbook.Schema:
    return crewbook.Project(tour).schema("lite")


@pytest.mark.requires_dot
def test_with_dot_the_bundle_has_the_drawing(lite: crewbook.Schema) -> None:
    bundle = lite._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", "image/svg+xml", "text/vnd.mermaid"}
    assert bundle["text/plain"] == repr(lite)
    assert bundle["image/svg+xml"].lstrip().startswith("<?xml")
    html = bundle["text/html"]
    assert html.startswith("<div class='crewbook-display'><div class='crewbook-drawing "
                           "crewbook-overview'><img alt='drawing' style='width:")
    assert "px;max-width:100%;height:auto'" in html, "an overview shrinks to the cell"
    assert bundle["text/vnd.mermaid"] == lite.mermaid(), "mermaid beside the SVG"
    assert "data:image/svg+xml;base64," in html
    assert "<?xml" not in html
    assert "<div class='crewbook-schema'>" in html, "the object's own table follows"
    assert lite._repr_mimebundle_() == bundle, "deterministic"


def test_without_dot_a_card_with_hints_and_source(no_dot: None, lite: crewbook.Schema) -> None:
    bundle = lite._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    html = bundle["text/html"]
    assert "crewbook-nodraw" in html
    for hint in HINTS:
        assert hint in html
    assert "<details><summary>DOT source (" in html
    assert "digraph &quot;lite&quot; {" in html
    assert "<div class='crewbook-schema'>" in html


def test_a_failing_model_shows_its_error_and_the_table() -> None:
    bundle = Thing(model=False)._repr_mimebundle_()
    assert "image/svg+xml" not in bundle
    assert "No drawing</b>: no such artifact &#x27;x&#x27; (KeyError)" in (
        bundle["text/html"])
    assert "<table class='thing'>" in bundle["text/html"]


def test_a_failing_table_and_repr_do_not_raise(no_dot: None) -> None:
    bundle = Thing(html=False, text=False)._repr_mimebundle_()
    assert bundle["text/plain"] == "<Thing object>"
    assert "(no table: table broke (RuntimeError))" in bundle["text/html"]
    assert "digraph &quot;tiny&quot;" in bundle["text/html"]


def test_a_failing_dot_shows_its_message(tmp_path: Path) -> None:
    fake = tmp_path / "dot"
    fake.write_text("#!/bin/sh\necho 'Error: out of memory' >&2\nexit 1\n")
    fake.chmod(0o755)
    options.dot_program = str(fake)
    html = Thing()._repr_mimebundle_()["text/html"]
    assert "No drawing</b>: dot failed (exit 1): Error: out of memory</p>" in html
    assert "<details>" in html


def test_include_and_exclude(no_dot: None) -> None:
    thing = Thing()
    assert set(thing._repr_mimebundle_(include=["text/plain"])) == {"text/plain"}
    assert set(thing._repr_mimebundle_(exclude=["text/html"])) == {"text/plain"}


def test_text_methods_and_collapse(lite: crewbook.Schema) -> None:
    assert lite.dot() == lite.dot()
    assert lite.dot().startswith('digraph "lite" {')
    assert lite.mermaid().startswith("flowchart LR")
    with options.override(collapse_threshold=3):
        collapsed = lite.dot()
        # top folder and specs/ depend on each other, so ranks are used, not folders
        assert '"rank:rank 0" -> "rank:rank 1"' in collapsed
        assert "3 of 4 nodes collapsed into 3 rank bands" in collapsed
        assert lite.dot(collapse=False) == crewbook.draw.to_dot(lite.graph_model())
        assert '"brief" -> "rank:rank 1"' in lite.dot(expand=["rank 0"])
    assert "collapsed into" in lite.dot(collapse=True)
    assert "collapsed into" not in lite.dot()


def test_collapsed_display_says_how_to_expand(no_dot: None, lite: crewbook.Schema) -> None:
    with options.override(collapse_threshold=2):
        html = lite._repr_mimebundle_()["text/html"]
    assert "collapsed into" in html


@pytest.mark.requires_dot
def test_collapsed_display_note_under_the_drawing(lite: crewbook.Schema) -> None:
    with options.override(collapse_threshold=2):
        html = lite._repr_mimebundle_()["text/html"]
    assert "expand a group with <code>.graph(expand=[...])</code>" in html


def test_save_by_extension(tmp_path: Path, lite: crewbook.Schema) -> None:
    assert lite.save(tmp_path / "lite.dot").read_text() == lite.dot()
    assert lite.save(tmp_path / "lite.mmd").read_text() == lite.mermaid()
    with pytest.raises(InvalidInputError, match=r"cannot tell what to write from 'lite\.txt'"):
        lite.save(tmp_path / "lite.txt")


def test_save_svg_without_dot_is_refused(no_dot: None, tmp_path: Path,
                                         lite: crewbook.Schema) -> None:
    with pytest.raises(crewbook.draw.DotNotFoundError):
        lite.save(tmp_path / "lite.svg")
    assert not (tmp_path / "lite.svg").exists()


@pytest.mark.requires_dot
def test_svg_and_png(tmp_path: Path, lite: crewbook.Schema) -> None:
    assert "<svg" in lite.svg()
    assert lite.save(tmp_path / "lite.png").read_bytes().startswith(b"\x89PNG")
    assert "<svg" in lite.save(tmp_path / "lite.svg").read_text()


def test_graph_is_a_restylable_digraph(no_dot: None, lite: crewbook.Schema) -> None:
    import graphviz

    g = lite.graph()
    assert isinstance(g, graphviz.Digraph)
    g.attr(rankdir="TB")
    g.node_attr["fontname"] = "Courier"
    assert "rankdir=TB" in g.source
    assert "fontname=Courier" in g.source
    assert '"brief" -> "specs"' in g.source
    bundle = g._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}, "no ExecutableNotFound, a card"
    assert "apt-get install graphviz" in bundle["text/html"]
    assert g.copy().source == g.source


@pytest.mark.requires_dot
def test_graph_renders_like_the_dot_text(lite: crewbook.Schema) -> None:
    g = lite.graph()
    assert "image/svg+xml" in g._repr_mimebundle_()
    titles = [line for line in g.pipe("svg").decode().splitlines() if "<title>" in line]
    expected = [line for line in lite.svg().splitlines() if "<title>" in line]
    assert titles == expected


def test_a_report_without_a_file_has_no_drawing() -> None:
    report = crewbook.ValidationReport(())
    with pytest.raises(CrewbookError, match="nothing to draw"):
        report.graph_model()
    html = report._repr_mimebundle_()["text/html"]
    assert "crewbook-nodraw" not in html
    assert "<svg" not in html
    assert "No problems." in html


SCRIPT = textwrap.dedent("""
    import json, sys, crewbook
    tour = crewbook.Project(crewbook.example_project())
    objects = [tour.schema("lite"), crewbook.get_schema("spec-driven"),
               tour.status("add-csv-export"), tour.schemas(),
               crewbook.validate_schema(tour.root / "_codev/schemas/research"),
               tour.schema("lite").graph()]
    out = []
    for obj in objects:
        bundle = obj._repr_mimebundle_()
        out.append({"keys": sorted(bundle), "card": "crewbook-nodraw" in bundle["text/html"],
                    "hint": "apt-get install graphviz" in bundle["text/html"],
                    "source": "<details><summary>DOT source" in bundle["text/html"]})
    print(json.dumps(out))
""")


def test_without_dot_on_path_in_a_fresh_process(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(tmp_path)}  # an empty folder: no dot anywhere
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    results = json.loads(done.stdout)
    assert len(results) == 6
    for result in results:
        assert result == {"keys": ["text/html", "text/plain"], "card": True, "hint": True,
                          "source": True}


@pytest.mark.slow
def test_without_dot_in_a_real_kernel(tmp_path: Path) -> None:
    """What a notebook user sees: display a schema in an IPython kernel with no dot."""
    from jupyter_client.manager import start_new_kernel

    env = {**os.environ, "PATH": str(tmp_path)}
    manager, client = start_new_kernel(kernel_name="python3", env=env, cwd=str(tmp_path))
    try:
        reply = client.execute_interactive(
            "import crewbook\ncrewbook.get_schema('spec-driven')", timeout=60,
            output_hook=(messages := []).append,
        )
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    assert reply["content"]["status"] == "ok"
    kinds = [m["msg_type"] for m in messages]
    assert "error" not in kinds
    results = [m["content"]["data"] for m in messages if m["msg_type"] == "execute_result"]
    assert len(results) == 1
    data = results[0]
    assert "image/svg+xml" not in data
    assert "crewbook-nodraw" in data["text/html"]
    assert "conda install graphviz" in data["text/html"]
    assert data["text/plain"].startswith("<Schema 'spec-driven' (built-in)")
    streams = "".join(m["content"].get("text", "") for m in messages if m["msg_type"] == "stream")
    assert "Traceback" not in streams


SMALL_SVG = ('<?xml version="1.0"?>\n<svg width="300pt" height="60pt" viewBox="0 0 300 60" '
             'xmlns="http://www.w3.org/2000/svg"><g><title>a</title></g></svg>')


def test_svg_size_is_in_css_pixels() -> None:
    assert svg_size(SMALL_SVG) == (400.0, 80.0)
    assert svg_size("<svg viewBox='0 0 1 1'></svg>") is None


def test_a_wide_drawing_keeps_its_size_in_a_scrolling_box() -> None:
    box = svg_box(SMALL_SVG)
    assert "overflow:auto" in box
    assert "width='400'" in box, "1:1, never squeezed to the cell"
    assert "max-width:none" in box
    assert "<svg" not in box, "an <img>, which survives untrusted notebooks"


def test_inline_box_keeps_the_svg_and_zooms_it() -> None:
    box = svg_box(SMALL_SVG, zoom=0.5, inline=True)
    assert box.count("<svg") == 1
    assert "<?xml" not in box
    assert 'width="200px"' in box
    assert 'height="40px"' in box
    assert "<title>a</title>" in box, "tooltips stay"


def test_a_wide_drawing_says_how_to_zoom(monkeypatch: pytest.MonkeyPatch) -> None:
    from crewbook.draw import display

    wide = SMALL_SVG.replace('width="300pt"', 'width="3000pt"')
    monkeypatch.setattr(display, "render_svg", lambda _: wide)
    model = GraphModel("g")
    model.add_node(Node("a", "a"))
    html, svg = display.drawing_bundle(model)
    assert svg == wide
    assert "Overview of a 4,000 × " in html
    assert "DrawingView" in html
    assert "focus=" in html
    assert "At 1:1: “1:1” above" in html
    assert "<details class='crewbook-one-to-one'>" in html, "one click away"
    monkeypatch.setattr(display, "render_svg", lambda _: SMALL_SVG)
    assert "Overview of" not in display.drawing_bundle(model)[0]
