"""The names of the sources `import_runs` reads, and what each is: the registry of
`crewbook.ledger.importers` (which loads no importer until one is used)."""

from __future__ import annotations

from .importers import DESCRIPTIONS, SOURCES

__all__ = ["DESCRIPTIONS", "SOURCES"]
