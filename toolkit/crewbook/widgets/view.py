"""`DrawingView(obj)`: any drawing at 1:1 in a scrolling box, with a zoom slider and the
SVG inline (node tooltips work)."""

from __future__ import annotations

from typing import Any

import ipywidgets as w

from ..draw.model import GraphModel
from ._common import drawing_html, guarded


class DrawingView(w.VBox):  # type: ignore[misc]
    """A zoomable drawing of `obj`: a `GraphModel` or anything with ``graph_model()``
    (a schema, a change status, a loop...)."""

    def __init__(self, obj: Any, zoom: float = 1.0) -> None:
        self.obj = obj
        self.zoom = w.FloatSlider(value=zoom, min=0.1, max=3.0, step=0.1, description="zoom",
                                  readout_format=".1f", continuous_update=False)
        self.drawing = w.HTML()
        self.message = w.HTML()
        self.output = w.Output()
        self.zoom.observe(guarded(self.output, self.message)(lambda _: self.refresh()),
                          names="value")
        super().__init__([self.zoom, self.drawing, self.message, self.output])
        self.refresh()

    def model(self) -> GraphModel | None:
        """The model drawn."""
        if isinstance(self.obj, GraphModel):
            return self.obj
        model: GraphModel | None = self.obj.graph_model()
        return model

    def refresh(self) -> None:
        """Redraw at the slider's zoom."""
        self.drawing.value = drawing_html(self.model, self.zoom.value)

    def __repr__(self) -> str:
        return f"<DrawingView of {type(self.obj).__name__} at zoom {self.zoom.value:.1f}>"
