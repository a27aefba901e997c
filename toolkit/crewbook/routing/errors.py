"""Errors of the routing package (defined with the rest in `crewbook.errors`)."""

from __future__ import annotations

from ..errors import PresetNotFoundError, RoutingError, TaskNotFoundError

__all__ = ["PresetNotFoundError", "RoutingError", "TaskNotFoundError"]
