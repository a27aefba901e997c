"""`Diff`: what every comparison returns (frames, text, JSON, a drawing, a rich display)."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ..draw.display import Drawable
from ..draw.model import GraphModel
from .core import CHANGES, DiffEntry, show
from .graph import DIFF_LEGEND

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True, eq=False)
class Diff(Drawable):
    """What two versions of a design differ in; every `diff_*` returns a subclass.

    `entries`: every difference (`frame()` for pandas, `to_dict()` for JSON, `text()`
    for terminals); `empty`: no difference; `graph_model()`: both versions in one
    drawing (added green, removed red dashed, changed amber), so `dot()`, `svg()`,
    `save()` and the notebook display come from `crewbook.draw.Drawable`.
    """

    kind: ClassVar[str] = "design"

    a: str
    b: str
    entries: tuple[DiffEntry, ...]
    drawing: GraphModel | None = field(default=None, repr=False)

    @property
    def empty(self) -> bool:
        """True when the two versions do not differ."""
        return not self.entries

    def counts(self) -> dict[str, int]:
        """How many entries of each change (added, removed, renamed, changed, moved...)."""
        out: dict[str, int] = {}
        for entry in self.entries:
            out[entry.change] = out.get(entry.change, 0) + 1
        return dict(sorted(out.items(), key=lambda kv: _change_rank(kv[0])))

    def section(self, name: str) -> list[DiffEntry]:
        """The entries of one section."""
        return [e for e in self.entries if e.section == name]

    def frame(self) -> pd.DataFrame:
        """One row per difference: section, change (categories), item, field, before,
        after (objects: lists stay lists), note."""
        import pandas as pd

        rows = [e.to_dict() for e in self.entries]
        cols = ["section", "change", "item", "field", "before", "after", "note"]
        df = pd.DataFrame(rows, columns=cols)
        return df.astype({"section": "category", "change": "category", "item": "string",
                          "field": "string", "before": object, "after": object,
                          "note": "string"})

    def frames(self) -> dict[str, pd.DataFrame]:
        """Every table of the comparison by name; `changes` is `frame()`."""
        return {"changes": self.frame()}

    def extra_dict(self) -> dict[str, Any]:
        """What a subclass adds to `to_dict()`."""
        return {}

    def to_dict(self) -> dict[str, Any]:
        """`{"kind", "a", "b", "empty", "counts", "changes": [...]}` plus the kind's own keys
        (the shape of `crewbook diff --json`)."""
        return {"kind": self.kind, "a": self.a, "b": self.b, "empty": self.empty,
                "counts": self.counts(), "changes": [e.to_dict() for e in self.entries],
                **self.extra_dict()}

    def extra_lines(self) -> list[str]:
        """What a subclass adds to `text()` after the entries."""
        return []

    def headline(self) -> str:
        """One line: what was compared and how many differences."""
        if self.empty:
            return f"{self.kind} {self.a} → {self.b}: no differences"
        counts = ", ".join(f"{n} {c}" for c, n in self.counts().items())
        return f"{self.kind} {self.a} → {self.b}: {counts}"

    def text(self) -> str:
        """The comparison for a terminal: a headline, then the entries by section."""
        lines = [self.headline()]
        current = None
        for entry in self.entries:
            if entry.section != current:
                current = entry.section
                lines.append(f"  {current}:")
            lines.append(f"    {entry}")
        lines += self.extra_lines()
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        counts = ", ".join(f"{n} {c}" for c, n in self.counts().items()) or "no differences"
        return f"<{type(self).__name__} {self.a!r} → {self.b!r}: {counts}>"

    def graph_model(self) -> GraphModel:
        """Both versions in one drawing: added green, removed red dashed, changed amber."""
        if self.drawing is None:
            return GraphModel(f"{self.kind}-diff", title=f"{self.kind} {self.a} → {self.b}",
                              legend=DIFF_LEGEND)
        return self.drawing

    def extra_html(self) -> str:
        """What a subclass adds to the notebook display after the table."""
        return ""

    def _repr_html_(self) -> str:
        head = f"<p><b>{html.escape(self.headline())}</b></p>"
        if self.empty:
            return f"<div class='crewbook-diff'>{head}{self.extra_html()}</div>"
        colour = {"added": "#2e7d32", "removed": "#c62828", "renamed": "#ff8f00",
                  "changed": "#ff8f00", "moved": "#1565c0"}
        rows = "".join(
            f"<tr><td>{html.escape(e.section)}</td>"
            f"<td style='color:{colour.get(e.change, '#212121')}'>{html.escape(e.change)}</td>"
            f"<td><b>{html.escape(e.item)}</b></td><td>{html.escape(e.field or '')}</td>"
            f"<td><code>{html.escape(show(e.before)) if e.field or e.before else ''}</code></td>"
            f"<td><code>{html.escape(show(e.after)) if e.field or e.after else ''}</code></td>"
            f"<td>{html.escape(e.note)}</td></tr>"
            for e in self.entries
        )
        table = ("<table><thead><tr><th>section</th><th>change</th><th>item</th><th>field</th>"
                 "<th>before</th><th>after</th><th>note</th></tr></thead>"
                 f"<tbody>{rows}</tbody></table>")
        return f"<div class='crewbook-diff'>{head}{table}{self.extra_html()}</div>"


def _change_rank(change: str) -> tuple[int, str]:
    return (CHANGES.index(change) if change in CHANGES else len(CHANGES), change)
