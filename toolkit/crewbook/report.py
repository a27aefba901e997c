"""`ValidationReport`: what every `validate_*` function returns.

Checking never raises for bad input: a `validate_*` function reads what it can and
returns every problem found (errors and warnings, each located by file, line and key)
as one report, whatever the file kind: schema, config, change, project, pipeline or
ledger. Iterating a report gives its problems.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .draw.display import Drawable
from .errors import Problem, UsageError, plural, problems_html

if TYPE_CHECKING:
    import pandas as pd

    from .draw.model import GraphModel

__all__ = ["ValidationReport"]


@dataclass(frozen=True)
class ValidationReport(Drawable):
    """The result of checking files: every problem found, errors and warnings.

    `file` is the schema.yaml checked, when known: the display then draws it, even
    broken (cycle edges red, dangling `requires` to a dashed "missing" node).
    """

    problems: tuple[Problem, ...]
    subject: str = ""
    file: Path | None = field(default=None, compare=False, repr=False)
    #: Builds the drawing of what was checked (a schema drawn from its raw data), if any.
    drawing: Callable[[ValidationReport], GraphModel | None] | None = field(
        default=None, compare=False, repr=False
    )

    @property
    def valid(self) -> bool:
        """True when no problem is an error (warnings allowed)."""
        return not self.errors

    @property
    def errors(self) -> list[Problem]:
        """The problems that make the input unusable."""
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        """The problems worth fixing that do not stop anything."""
        return [p for p in self.problems if p.severity == "warning"]

    def to_dict(self) -> dict[str, Any]:
        """`{"valid": bool, "problems": [...]}`, the shape of `crewbook validate --json`."""
        return {"valid": self.valid, "problems": [p.to_dict() for p in self.problems]}

    def frame(self) -> pd.DataFrame:
        """One row per problem: severity, code, path, line, column, key, message."""
        import pandas as pd

        cols = ["severity", "code", "path", "line", "column", "key", "message"]
        df = pd.DataFrame([{c: getattr(p, c) for c in cols} for p in self.problems], columns=cols)
        return df.astype(
            {
                "severity": "category",
                "code": "category",
                "line": "Int64",
                "column": "Int64",
                "path": "string",
                "key": "string",
                "message": "string",
            }
        )

    def __str__(self) -> str:
        """The text of `crewbook validate`: a verdict with the counts, then one line per
        problem with its severity, errors first (a warning is often a consequence of an
        error: fix the errors, and such warnings go too)."""
        head = f"{self.subject}: " if self.subject else ""
        if not self.problems:
            return f"{head}valid"
        errors, warnings = self.errors, self.warnings
        counts = ", ".join(plural(len(group), word) for group, word in (
            (errors, "error"), (warnings, "warning")) if group)
        verdict = f"valid, with {counts}" if self.valid else f"invalid ({counts})"
        return f"{head}{verdict}\n" + "\n".join(
            f"  {p.severity + ':':<8} {p}" for p in [*errors, *warnings])

    def __repr__(self) -> str:
        return (
            f"<ValidationReport {self.subject or ''} valid={self.valid} "
            f"errors={len(self.errors)} warnings={len(self.warnings)}>"
        )

    def __iter__(self) -> Iterator[Problem]:
        return iter(self.problems)

    def __getitem__(self, index: int) -> Problem:
        return self.problems[index]

    def __len__(self) -> int:
        """The number of problems (errors and warnings)."""
        return len(self.problems)

    def __bool__(self) -> bool:  # a report is a report, even with no problem in it
        return True

    def _drawing_model(self) -> GraphModel | None:
        return self.drawing(self) if self.drawing is not None else None

    def graph_model(self) -> GraphModel:
        """The drawing of the checked schema from its raw data, broken or not."""
        model = self._drawing_model()
        if model is None:
            raise UsageError(f"report {self.subject!r} has nothing to draw: only a schema's "
                                     "report draws its schema")
        return model

    def _repr_html_(self) -> str:
        verdict = "✔ valid" if self.valid else "✖ invalid"
        return (
            f"<div class='crewbook-report'><p><b>{html.escape(self.subject)}</b> "
            f"{verdict}</p>{problems_html(self.problems)}</div>"
        )
