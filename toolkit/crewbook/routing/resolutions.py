"""What resolving a routing value gives (SPEC D7, D9): the value and every layer
consulted for it, with where each came from. `ActiveProfile` (`active.py`) makes them;
routes, frames and the notebooks' displays read them.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any, Literal

from .axes import Effort, Tier
from .model import AxisPair, Capability

Source = Literal["project", "global", "preset", "built-in", "none"]


@dataclass(frozen=True)
class Candidate:
    """One layer consulted for a value: what it says, and whether it was used."""

    source: Source
    where: str
    value: str | None
    used: bool
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """`{"source", "where", "value", "used", "reason"}`."""
        return {
            "source": self.source,
            "where": self.where,
            "value": self.value,
            "used": self.used,
            "reason": self.reason,
        }

    def __str__(self) -> str:
        mark = "→" if self.used else " "
        value = self.value if self.value is not None else "(not set)"
        why = f"  [{self.reason}]" if self.reason else ""
        return f"{mark} {self.source:<8} {self.where}: {value}{why}"


@dataclass(frozen=True)
class CellResolution:
    """Where the capability of one tier × effort cell came from."""

    tier: Tier
    effort: Effort
    capability: Capability | None
    source: Source
    where: str | None
    candidates: tuple[Candidate, ...]

    def to_dict(self) -> dict[str, Any]:
        """The capability, its source and every layer consulted."""
        return {
            "tier": self.tier,
            "effort": self.effort,
            **(self.capability.to_dict() if self.capability else {"model": None}),
            "source": self.source,
            "source_path": self.where,
            "candidates": [c.to_dict() for c in self.candidates],
        }

    def __str__(self) -> str:
        head = f"{self.tier}/{self.effort}: " + (
            self.capability.label if self.capability else "no model"
        )
        return "\n".join([head, *(f"  {c}" for c in self.candidates)])

    def __repr__(self) -> str:
        model = self.capability.model if self.capability else None
        return f"<CellResolution {self.tier}/{self.effort} → {model} ({self.source})>"

    def _repr_html_(self) -> str:
        return candidates_html(str(self).splitlines()[0], self.candidates)


@dataclass(frozen=True)
class AxisResolution:
    """A tier and effort pair and where it came from (a role or task default)."""

    pair: AxisPair
    source: Source
    where: str


@dataclass(frozen=True, eq=False)
class RoleRoute:
    """The tier, effort and capability a role gets by default (a suggestion)."""

    loop: str
    role: str
    tier: Tier
    effort: Effort
    source: Source
    where: str
    cell: CellResolution

    @property
    def capability(self) -> Capability | None:
        """The model and native effort, or None without a profile."""
        return self.cell.capability

    def to_dict(self) -> dict[str, Any]:
        """Role, tier, effort, their source, and the resolved cell."""
        return {
            "loop": self.loop,
            "role": self.role,
            "tier": self.tier,
            "effort": self.effort,
            "source": self.source,
            "source_path": self.where,
            "cell": self.cell.to_dict(),
        }

    def __str__(self) -> str:
        cap = self.capability.label if self.capability else "no model (no profile)"
        return (
            f"{self.loop}.{self.role}: {self.tier}/{self.effort} ({self.source} {self.where}) "
            f"→ {cap} ({self.cell.source} {self.cell.where or ''})".rstrip()
        )

    def __repr__(self) -> str:
        model = self.capability.model if self.capability else None
        return f"<RoleRoute {self.loop}.{self.role} {self.tier}/{self.effort} → {model}>"

    def _repr_html_(self) -> str:
        head = (
            f"{self.loop}.{self.role}: {self.tier}/{self.effort} (from {self.source} "
            f"{self.where}) → " + (self.capability.label if self.capability else "no model")
        )
        return candidates_html(head, self.cell.candidates)


def candidates_html(head: str, candidates: tuple[Candidate, ...]) -> str:
    """An HTML table of the layers consulted for a value, under `head`."""
    rows = "".join(
        f"<tr style='{'' if c.used else 'color:#9e9e9e'}'><td>{'→' if c.used else ''}</td>"
        f"<td>{c.source}</td><td><code>{html.escape(c.where)}</code></td>"
        f"<td>{html.escape(c.value or '(not set)')}</td><td>{html.escape(c.reason)}</td></tr>"
        for c in candidates
    )
    return (
        f"<div class='crewbook-route'><p><b>{html.escape(head)}</b></p><table><thead><tr>"
        "<th></th><th>layer</th><th>file</th><th>value</th><th></th></tr></thead>"
        f"<tbody>{rows}</tbody></table></div>"
    )
