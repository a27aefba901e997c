"""What an archive would do, as something to look at: `SpecUpdate` (one capability's
spec before and after) and `ArchivePreview` (every update, the problems that would
refuse it, frames, a side-by-side diff as text and HTML, and a drawing). Computed by
`archive.preview_archive`; nothing here reads or writes files."""

from __future__ import annotations

import difflib
import html
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..draw.display import Drawable
from ..errors import Problem
from .specs import parse_spec, requirements_frame

if TYPE_CHECKING:
    import pandas as pd

    from ..draw.model import GraphModel


@dataclass(frozen=True)
class SpecUpdate:
    """One capability's main spec before and after the archive, and what changed."""

    capability: str
    path: str
    before: str | None
    after: str | None
    statuses: tuple[tuple[str, str], ...] = ()  # (requirement, added|modified|removed|renamed)
    retired: bool = False  # the change removes its last requirement: the spec is deleted

    @property
    def counts(self) -> dict[str, int]:
        """Operations applied, by kind."""
        out = {k: 0 for k in ("added", "modified", "removed", "renamed")}
        for _, status in self.statuses:
            out[status] += 1
        return out


@dataclass(frozen=True, eq=False)
class ArchivePreview(Drawable):
    """What archiving a change would do, computed without writing anything; once the
    archive is done (`archive_change`), what it did (`archived`)."""

    change: str
    target: str
    updates: tuple[SpecUpdate, ...]
    problems: tuple[Problem, ...] = field(default=())
    archived: bool = False

    @property
    def ok(self) -> bool:
        """Whether the archive would go ahead (no error)."""
        return not any(p.severity == "error" for p in self.problems)

    def frame(self) -> pd.DataFrame:
        """One row per requirement of the resulting specs: capability, requirement,
        op... (see `requirements_frame`) plus `status` (added, modified, renamed or
        unchanged); removed requirements are rows with status `removed` and no line."""
        import pandas as pd

        parts = []
        for u in self.updates:
            status = dict(u.statuses)
            if u.after is None:
                continue
            df = requirements_frame([parse_spec(u.after, u.capability, u.path)])
            df["status"] = [status.get(r, "unchanged") for r in df["requirement"]]
            gone = [r for r, s in u.statuses if s == "removed"]
            if gone:
                df = pd.concat([df, pd.DataFrame({
                    "capability": u.capability, "requirement": gone, "file": u.path,
                    "status": "removed"})], ignore_index=True)
            parts.append(df)
        columns = ["capability", "requirement", "op", "scenarios", "normative", "file",
                   "line", "status"]
        out = (pd.concat(parts, ignore_index=True) if parts
               else pd.DataFrame(columns=columns))[columns]
        out = out.astype({"capability": "string", "requirement": "string",
                          "scenarios": "Int64", "normative": "boolean", "file": "string",
                          "line": "Int64"})
        out["status"] = pd.Categorical(out["status"], categories=[
            "added", "modified", "renamed", "removed", "unchanged"])
        return out.sort_values(["capability", "line", "requirement"], kind="stable",
                               na_position="last").reset_index(drop=True)

    def diff(self, width: int = 60) -> str:
        """A side-by-side text diff of every spec (before | after), changed lines only
        with 2 lines of context."""
        out = [f"{self._title()} → {self.target}"]
        for u in self.updates:
            old = (u.before or "").splitlines()
            new = (u.after or "").splitlines()
            out.append(f"\n== {u.path} " + ("(new spec)" if u.before is None else
                                             "(retired: deleted)" if u.retired else ""))
            out.append(f"{'before':<{width}} | after")
            matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
            for group in matcher.get_grouped_opcodes(2):
                out.append("-" * width + "-+-" + "-" * width)
                for tag, i1, i2, j1, j2 in group:
                    left, right = old[i1:i2], new[j1:j2]
                    mark = {"equal": " ", "replace": "|", "delete": "<", "insert": ">"}[tag]
                    for k in range(max(len(left), len(right))):
                        a = left[k] if k < len(left) else ""
                        b = right[k] if k < len(right) else ""
                        out.append(f"{_cut(a, width):<{width}} {mark} {_cut(b, width)}")
        out += [str(p) for p in self.problems]
        return "\n".join(out)

    def __str__(self) -> str:
        counts = self.counts()
        verdict = "archived" if self.archived else "would archive" if self.ok else "REFUSED"
        lines = [f"{self._title()}: {verdict} → {self.target}"]
        for u in self.updates:
            c = u.counts
            new = " (new)" if u.before is None else " (retired: deleted)" if u.retired else ""
            lines.append(f"  {u.path}{new}: "
                         + ", ".join(f"{n} {k}" for k, n in c.items() if n))
        lines.append("  total: " + ", ".join(f"{n} {k}" for k, n in counts.items()))
        lines += [f"  {p}" for p in self.problems]
        return "\n".join(lines)

    def _title(self) -> str:
        return f"{'Archive' if self.archived else 'Archive preview'} of {self.change}"

    def counts(self) -> dict[str, int]:
        """Operations applied over every spec, by kind."""
        total = {k: 0 for k in ("added", "modified", "removed", "renamed")}
        for u in self.updates:
            for k, n in u.counts.items():
                total[k] += n
        return total

    def to_dict(self) -> dict[str, Any]:
        """The shape of `crewbook archive --dry-run --json`."""
        return {"change": self.change, "target": self.target, "ok": self.ok,
                "archived": self.archived,
                "specs": [{"capability": u.capability, "path": u.path,
                           "new": u.before is None, "retired": u.retired, **u.counts}
                          for u in self.updates],
                "problems": [p.to_dict() for p in self.problems]}

    def __repr__(self) -> str:
        c = self.counts()
        state = "archived" if self.archived else "ok" if self.ok else "refused"
        return (f"<ArchivePreview {self.change!r}: {state}, "
                f"{len(self.updates)} specs, {c['added']} added, {c['modified']} modified, "
                f"{c['removed']} removed, {c['renamed']} renamed>")

    def graph_model(self) -> GraphModel:
        """The resulting specs side by side: one box per capability, one node per
        requirement coloured by what the archive does to it."""
        from ..draw.model import Edge, GraphModel, Node

        model = GraphModel(name="archive_preview", title=f"Archive of {self.change}",
                           direction="LR",
                           legend=(("added", "added"), ("changed", "modified or renamed"),
                                   ("removed", "removed"), ("done", "unchanged")))
        colour = {"added": "added", "modified": "changed", "renamed": "changed",
                  "removed": "removed", "unchanged": "done"}
        for u in self.updates:
            model.clusters[u.capability] = u.capability
            status = dict(u.statuses)
            names = [r.key for r in parse_spec(u.after or "", u.capability).requirements]
            names += [r for r, s in u.statuses if s == "removed"]
            previous: str | None = None
            for rank, name in enumerate(names):
                node_id = f"{u.capability}::{name}"
                model.add_node(Node(node_id, label=name, group=u.capability, rank=rank,
                                    status=colour[status.get(name, "unchanged")],
                                    tooltip=status.get(name, "unchanged")))
                if previous:
                    model.add_edge(Edge(previous, node_id, kind="flow", style="dotted"))
                previous = node_id
        return model

    def _repr_html_(self) -> str:
        tables = []
        for u in self.updates:
            table = side_by_side_html(u.before or "", u.after or "")
            tables.append(f"<h4>{html.escape(u.path)}</h4>{table}")
        probs = "".join(f"<li>{html.escape(str(p))}</li>" for p in self.problems)
        return (f"<div class='crewbook-archive'><p><b>{html.escape(str(self).splitlines()[0])}"
                f"</b></p>{''.join(tables)}" + (f"<ul>{probs}</ul>" if probs else "")
                + "</div>")


#: How the side-by-side diff marks a line: added, changed, removed (difflib's colours,
#: inline: an untrusted notebook drops `<style>` blocks).
_MARKS = {"diff_add": "background:#aaffaa", "diff_chg": "background:#ffff77",
          "diff_sub": "background:#ffaaaa"}
#: The cells of the diff: line numbers on one line, text wrapping between words.
_NUMBER_CELL = "text-align:right;vertical-align:top;color:#78909c;padding:0 4px"
_TEXT_CELL = ("text-align:left;vertical-align:top;white-space:pre-wrap;"
              "overflow-wrap:break-word;padding:0 6px")


def side_by_side_html(before: str, after: str) -> str:
    """The two texts side by side (changed lines with two lines of context), in a table
    as wide as the cell: each half takes half, and a long line wraps between its words
    inside its own row (difflib's ``wrapcolumn`` cut words across rows, and its
    non-breaking spaces never wrapped). No ids or jump links: the same bytes for the
    same texts, however many diffs the kernel made before."""
    table = difflib.HtmlDiff().make_table(before.splitlines(), after.splitlines(),
                                          "before", "after", context=True, numlines=2)
    table = re.sub(r'\s+id="[^"]*"', "", table)
    table = re.sub(r'<t([dh]) class="diff_next"[^>]*>.*?</t\1>', "", table)
    table = re.sub(r"(?:<colgroup></colgroup>\s*)+",  # six empty groups: two (number, text)
                   "<colgroup><col style='width:3.2em'><col></colgroup>" * 2, table, count=1)
    table = re.sub(r'<table class="diff"[^>]*>',
                   "<table class='diff crewbook-diff' style='table-layout:fixed;width:100%;"
                   "border-collapse:collapse'>", table, count=1)
    table = table.replace('<th colspan="2" class="diff_header">',
                          "<th colspan='2' style='text-align:left'>")
    table = table.replace('<td class="diff_header">', f"<td style='{_NUMBER_CELL}'>")
    table = table.replace('<td nowrap="nowrap">', f"<td style='{_TEXT_CELL}'>")
    for name, style in _MARKS.items():
        table = table.replace(f'<span class="{name}">', f"<span style='{style}'>")
    return table.replace("&nbsp;", " ")


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
