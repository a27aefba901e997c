"""`SchemaExplorer(project)`: pick a schema to see its graph; pick an artifact to see its
instruction, template, role and `done_when`, and the graph redrawn with that artifact
picked out (thick blue border; its folder kept open when a big graph collapses); pick a
change to see its status drawing and its tasks."""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as w

from ..draw.table import readable
from ._common import drawing_html, error_html, guarded, highlighted, note_html


class SchemaExplorer(w.VBox):  # type: ignore[misc]
    """Three pickers (schema, artifact, change) over one project (module docstring)."""

    def __init__(self, project: Any, zoom: float = 1.0) -> None:
        self.project = project
        listing = project.schemas()
        self.schema_names = [s.name for s in listing]
        default = project.config.schema_ if project.config.schema_ in self.schema_names \
            else (self.schema_names[0] if self.schema_names else None)
        self.schema_pick = w.Dropdown(description="schema", options=self.schema_names,
                                      value=default)
        self.artifact_pick = w.Dropdown(description="artifact", options=[])
        self.change_pick = w.Dropdown(description="change",
                                      options=[c.name for c in project.changes()])
        self.zoom = w.FloatSlider(value=zoom, min=0.2, max=2.0, step=0.1, description="zoom",
                                  readout_format=".1f", continuous_update=False)
        self.schema_drawing = w.HTML()
        self.artifact_view = w.HTML()
        self.change_drawing = w.HTML()
        self.tasks_view = w.HTML()
        self.message = w.HTML()
        self.output = w.Output()
        self._updating = False
        guard = guarded(self.output, self.message)
        self.schema_pick.observe(guard(lambda _: self.show_schema()), names="value")
        self.artifact_pick.observe(guard(lambda _: self._artifact_changed()), names="value")
        self.change_pick.observe(guard(lambda _: self.show_change()), names="value")
        self.zoom.observe(guard(lambda _: self.redraw()), names="value")
        tabs = w.Tab(children=[
            w.VBox([self.schema_drawing]),
            w.VBox([self.artifact_view]),
            w.VBox([self.change_pick, self.change_drawing, self.tasks_view]),
        ])
        for i, title in enumerate(("graph", "artifact", "change")):
            tabs.set_title(i, title)
        self.tabs = tabs
        super().__init__([w.HBox([self.schema_pick, self.artifact_pick, self.zoom]), tabs,
                          self.message, self.output])
        self.add_class("crewbook-schema-explorer")
        with self.output:
            self.show_schema()
            self.show_change()

    def schema(self) -> Any:
        """The schema picked."""
        return self.project.schema(self.schema_pick.value)

    def show_schema(self) -> None:
        """List the picked schema's artifacts, then show the first (`show_artifact`)."""
        self.message.value = ""
        if self.schema_pick.value is None:
            self.schema_drawing.value = note_html("(no usable schema in this project)")
            return
        schema = self.schema()
        ids = list(schema.order)
        current = self.artifact_pick.value
        self._updating = True
        try:
            self.artifact_pick.options = ids
            self.artifact_pick.value = current if current in ids else (ids[0] if ids else None)
        finally:
            self._updating = False
        self.show_artifact()

    def _artifact_changed(self) -> None:
        if not self._updating:
            self.show_artifact()

    def draw_schema(self) -> None:
        """The schema's graph with the picked artifact picked out."""
        schema = self.schema()
        picked = self.artifact_pick.value
        model = schema.graph_model()
        node = model.nodes.get(picked) if picked is not None else None
        expand = [node.group] if node is not None and node.group else []
        self.schema_drawing.value = drawing_html(lambda: highlighted(model, picked),
                                                 self.zoom.value, expand)

    def show_artifact(self) -> None:
        """The picked artifact: the graph with it picked out, what it generates,
        requires, its instruction, role, `done_when` and template."""
        if self.schema_pick.value is None:
            return
        self.draw_schema()
        if self.artifact_pick.value is None:
            self.artifact_view.value = note_html("(no artifact)")
            return
        schema = self.schema()
        art = schema.artifact(self.artifact_pick.value)
        rows = [("generates", f"<code>{html.escape(art.generates)}</code>"),
                ("requires", html.escape(", ".join(art.requires) or "nothing")),
                ("description", html.escape(art.description or "–")),
                ("instruction", _pre(art.instruction))]
        if art.role is not None:
            rows.append(("role", f"<b>{html.escape(art.role.id)}</b>: "
                                 f"{html.escape(art.role.question)}"))
            rows.append(("done_when", "<ul>" + "".join(
                f"<li>{html.escape(c)}</li>" for c in art.role.done_when) + "</ul>"
                if art.role.done_when else "–"))
        else:
            rows.append(("role", "–"))
        rows.append(("template", _pre(schema.template_text(art.id))))
        self.artifact_view.value = "<table class='crewbook-artifact'>" + "".join(
            f"<tr><th style='text-align:left;vertical-align:top;padding-right:8px'>{k}</th>"
            f"<td style='text-align:left'>{v}</td></tr>" for k, v in rows) + "</table>"

    def show_change(self) -> None:
        """The picked change: its status drawing and its tasks."""
        name = self.change_pick.value
        if name is None:
            self.change_drawing.value = note_html("(no change in this project)")
            self.tasks_view.value = ""
            return
        try:
            status = self.project.status(name)
        except Exception as exc:
            self.change_drawing.value = error_html(exc, "cannot read this change")
            self.tasks_view.value = ""
            return
        self.change_drawing.value = drawing_html(status.graph_model, self.zoom.value)
        tasks = status.tasks_frame()
        self.tasks_view.value = (note_html("(no tasks yet)") if tasks.empty
                                 else readable(tasks, index=False)._repr_html_())

    def redraw(self) -> None:
        """Redraw both drawings at the slider's zoom."""
        self.show_schema()
        self.show_change()

    def __repr__(self) -> str:
        return (f"<SchemaExplorer of {self.project!r}: schema {self.schema_pick.value}, "
                f"change {self.change_pick.value}>")


def _pre(text: str | None) -> str:
    if not text:
        return "–"
    return (f"<pre style='white-space:pre-wrap;margin:0'>{html.escape(text.strip())}</pre>")
