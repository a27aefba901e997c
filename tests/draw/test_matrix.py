"""Matrices: our colour scale, a deterministic Styler heatmap, Markdown for terminals."""

from __future__ import annotations

import sys

import pandas as pd
import pytest

from crewbook.draw import Matrix, heatmap_html, markdown_table
from crewbook.draw.matrix import EMPTY_BACKGROUND, SCALE, content_uuid, scale_colour, text_colour


@pytest.fixture
def frame() -> pd.DataFrame:
    df = pd.DataFrame({"low": pd.array([0, 1], dtype="Int64"),
                       "high": pd.array([4, pd.NA], dtype="Int64")},
                      index=pd.Index(["deep", "light"], name="tier"))
    df.columns.name = "effort"
    return df


def test_scale_ends_and_middle() -> None:
    assert scale_colour(0, 0, 4) == SCALE[0]
    assert scale_colour(4, 0, 4) == SCALE[-1]
    assert scale_colour(2, 0, 4) == SCALE[2]
    assert scale_colour(99, 0, 4) == SCALE[-1], "clipped"
    assert scale_colour(1, 1, 1) == SCALE[-1], "a constant matrix is all high"
    assert scale_colour(0.5, 0, 1, ("#000000", "#ffffff")) == "#808080"


def test_text_colour_reads_on_the_background() -> None:
    assert text_colour(SCALE[0]) == "#000000"
    assert text_colour(SCALE[-1]) == "#ffffff"


def test_heatmap_is_deterministic_and_coloured(frame: pd.DataFrame) -> None:
    html = heatmap_html(frame, title="tier × effort")
    assert html == heatmap_html(frame.copy(), title="tier × effort")
    uid = content_uuid(frame, "tier × effort")
    assert f'id="T_{uid}"' in html
    assert f"_row0_col1 {{\n  background-color: {SCALE[-1]};\n  color: #ffffff;" in html
    assert f"_row0_col0 {{\n  background-color: {SCALE[0]};\n  color: #000000;" in html
    assert f"_row1_col1 {{\n  background-color: {EMPTY_BACKGROUND};" in html
    assert "tier × effort</caption>" in html
    other = frame.copy()
    other.iloc[0, 0] = 3
    assert content_uuid(other, "tier × effort") != uid


def test_heatmap_labels_and_escaping() -> None:
    df = pd.DataFrame({"<col>": [2, 1]}, index=pd.Index(["<b>", "x"], name="<i>"))
    html = heatmap_html(df, labels={2: "writes", 1: "reads"}, title="<t>")
    assert ">writes</td>" in html
    assert ">reads</td>" in html
    for tag in ("<b>", "<i>", "<col>", "<t>"):
        assert tag not in html
    assert ">&lt;b&gt;</th>" in html
    assert ">&lt;col&gt;</th>" in html
    assert ">&lt;i&gt;</th>" in html
    assert df.index.name == "<i>", "the caller's frame is unchanged"


def test_without_jinja2_a_plain_table(frame: pd.DataFrame,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jinja2", None)
    html = heatmap_html(frame, title="t")
    assert "<table" in html
    assert "background-color" not in html
    assert "<p><b>t</b></p>" in html


def test_markdown(frame: pd.DataFrame) -> None:
    assert markdown_table(frame) == (
        "| tier  | low | high |\n"
        "| ----- | --: | ---: |\n"
        "| deep  | 0   | 4    |\n"
        "| light | 1   | ·    |\n"
    )
    assert "| a \\| b |" in markdown_table(pd.DataFrame({"x": ["a | b"]}))


def test_matrix_object(frame: pd.DataFrame) -> None:
    matrix = Matrix(frame, title="routes", labels={4: "max"})
    assert repr(matrix) == "<Matrix 'routes': 2 × 2>"
    assert str(matrix).startswith("**routes**\n\n| tier ")
    assert "| deep  | 0   | max  |" in matrix._repr_markdown_()
    assert ">max</td>" in matrix._repr_html_()


def test_matrix_display_never_raises(frame: pd.DataFrame, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> str:
        raise RuntimeError("styler broke")

    monkeypatch.setattr("crewbook.draw.matrix.heatmap_html", broken)
    html = Matrix(frame)._repr_html_()
    assert "(no heatmap: styler broke (RuntimeError))" in html
    assert "| deep" in html


def test_cell_colours_are_inline_so_untrusted_jupyterlab_keeps_them() -> None:
    """JupyterLab drops `<style>` from untrusted notebooks; the colours must sit on the cells."""
    import re

    import pandas as pd

    from crewbook.draw.matrix import heatmap_html, inline_styles

    html = heatmap_html(pd.DataFrame({"a": [0.0, 1.0]}, index=["x", "y"]), title="t")
    cells = re.findall(r"<td [^>]*>", html)
    assert len(cells) == 2
    colours = [re.search(r'style="background-color: (#[0-9a-f]{6})', c) for c in cells]
    assert colours[0] is not None
    assert colours[1] is not None
    assert colours[0].group(1) != colours[1].group(1)
    assert inline_styles("<table><td id='x'>1</td></table>") == "<table><td id='x'>1</td></table>"

