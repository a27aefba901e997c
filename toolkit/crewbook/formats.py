"""JSON Schemas of every file format crewbook reads, generated from its models.

`schemas/` in the repository holds their output, so editors validate `schema.yaml`
and friends as they are typed; a test fails when a file there is stale. Regenerate
with ``python -m crewbook.formats schemas/``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel


def _artifact_models() -> dict[str, type[BaseModel]]:
    from .artifacts.model import ChangeFile, ProjectConfig, SchemaFile

    return {
        "codev-schema.json": SchemaFile,
        "codev-config.json": ProjectConfig,
        "codev-change.json": ChangeFile,
    }


def _routing_models() -> dict[str, type[BaseModel]]:
    from .routing.model import format_models

    return format_models()


def _ledger_models() -> dict[str, type[BaseModel]]:
    from .ledger.events import LedgerEvent

    return {"ledger-event.json": LedgerEvent}


def _family_models() -> dict[str, type[BaseModel]]:
    """The formats of every registered loop family (``FAMILY.formats``), in registry order."""
    from .core.family import Declined
    from .families import families

    out: dict[str, type[BaseModel]] = {}
    for found in families():
        if not isinstance(found.formats, Declined):
            out.update(found.formats())
    return out


#: Functions returning, for each file name in `schemas/`, the model it describes: the
#: shared formats, then each loop family's own.
FORMAT_SOURCES: list[Callable[[], dict[str, type[BaseModel]]]] = [
    _artifact_models,
    _routing_models,
    _ledger_models,
    _family_models,
]


def json_schemas() -> dict[str, dict[str, Any]]:
    """File name → JSON Schema (draft 2020-12) for each format."""
    out: dict[str, dict[str, Any]] = {}
    for source in FORMAT_SOURCES:
        for name, model in source().items():
            schema = model.model_json_schema(by_alias=True)
            out[name] = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
    return out


def render(schema: dict[str, Any]) -> str:
    """The exact text written to a file (stable key order, trailing newline)."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def write_json_schemas(folder: Path) -> list[Path]:
    """Write every JSON Schema into `folder`; returns the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in json_schemas().items():
        path = folder / name
        path.write_text(render(schema), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":  # pragma: no cover - exercised by the docs
    for path in write_json_schemas(Path(sys.argv[1] if len(sys.argv) > 1 else "schemas")):
        print(path)
