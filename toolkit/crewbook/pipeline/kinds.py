"""Artifact kinds (SPEC B4): the JSON Schema every produced artifact is validated against.

Kinds come from the ``[[artifacts]]`` entries of a config file (correx keeps them in
``~/.config/correx/config.toml``): ``id``, ``schema_path`` (relative to the config,
staying inside its folder) and ``llm_emitted``. The config used by a pipeline is
the ``kinds=`` argument of `load_pipeline`, else the ``config.toml`` next to the
pipeline file, else the one in its parent folder.

One kind is built in: ``file_written``, the files a stage wrote (``{"files":
["core/x.py"], "summary": "..."}``); a report's ``writes`` fill it when the
stage does not give it.

`jsonschema` is imported only when a kind is checked or used.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import PipelineError, Problem, did_you_mean
from ..models import parse_model, path_defect
from ..sources import SourceDoc, read_json, read_toml
from .model import KindsConfig

#: The kinds config looked for next to a pipeline file, then in its parent folder.
CONFIG_NAME = "config.toml"

FILE_WRITTEN = "file_written"
BUILTIN_SCHEMAS: dict[str, dict[str, Any]] = {
    FILE_WRITTEN: {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": FILE_WRITTEN,
        "description": "Files a stage wrote, workspace-relative.",
        "type": "object",
        "required": ["files"],
        "properties": {
            "files": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}},
            "summary": {"type": "string"},
        },
    },
}


@dataclass(eq=False)
class ArtifactKind:
    """One artifact kind: its JSON Schema and where it came from."""

    id: str
    schema: dict[str, Any]
    path: Path | None = None
    llm_emitted: bool = True
    builtin: bool = False
    _validator: Any = field(default=None, repr=False)

    @property
    def validator(self) -> Any:
        """The compiled `jsonschema` validator (made once)."""
        if self._validator is None:
            from ..core.lazy import import_jsonschema

            validator_for = import_jsonschema().validators.validator_for
            cls = validator_for(self.schema)
            self._validator = cls(self.schema, format_checker=cls.FORMAT_CHECKER)
        return self._validator

    def is_valid(self, content: Any) -> bool:
        """Whether `content` validates against the kind's JSON Schema."""
        return bool(self.validator.is_valid(content))

    def errors(self, content: Any) -> list[str]:
        """Why `content` does not validate (``at /steps/0: 'verify' is a required
        property``), in a stable order; empty when it is valid."""
        found = sorted(self.validator.iter_errors(content),
                       key=lambda e: (list(map(str, e.absolute_path)), e.message))
        return [f"at /{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in found]

    def fields(self) -> list[str]:
        """Every property path the schema declares (``verdict``, ``steps.id``...)."""
        return list(_properties(self.schema, ""))

    def field_schema(self, dotted: str) -> dict[str, Any] | None:
        """The sub-schema of a property path, or None when the schema does not declare it."""
        node: Any = self.schema
        for part in dotted.split("."):
            node = _items(node).get("properties", {}).get(part) if isinstance(node, dict) else None
            if not isinstance(node, dict):
                return None
        return dict(node)

    def declares_properties(self) -> bool:
        """Whether the schema lists its properties (so unknown fields can be told apart)."""
        return isinstance(self.schema.get("properties"), dict)

    def __repr__(self) -> str:
        where = "built-in" if self.builtin else str(self.path)
        return f"<ArtifactKind {self.id} ({where})>"


def _items(node: dict[str, Any]) -> dict[str, Any]:
    items = node.get("items")
    return items if node.get("type") == "array" and isinstance(items, dict) else node


def _properties(node: Any, prefix: str) -> Iterator[str]:
    if not isinstance(node, dict):
        return
    props = _items(node).get("properties")
    if not isinstance(props, dict):
        return
    for name, sub in props.items():
        path = f"{prefix}{name}"
        yield path
        yield from _properties(sub, path + ".")


def builtin_kinds() -> dict[str, ArtifactKind]:
    """The kinds every pipeline may use without declaring them."""
    return {k: ArtifactKind(k, schema, builtin=True) for k, schema in BUILTIN_SCHEMAS.items()}


def find_kinds_config(pipeline_path: Path) -> Path | None:
    """The config next to the pipeline file, else in its parent folder, else None."""
    folder = pipeline_path.resolve().parent
    for candidate in (folder / CONFIG_NAME, folder.parent / CONFIG_NAME):
        if candidate.is_file():
            return candidate
    return None


@dataclass
class KindsResult:
    """What reading a kinds config gave: the kinds, where each is declared, and problems."""

    kinds: dict[str, ArtifactKind]
    config: Path | None
    problems: list[Problem]
    doc: SourceDoc | None = None
    #: False when the config could not be read: its kinds are unknown, not missing.
    complete: bool = True


def load_kinds(config: Path | None, used: Iterable[str] = (),
               display: str | None = None) -> KindsResult:
    """Read the kinds of `config` (None: built-in kinds only).

    Every kind's JSON Schema in `used` is read and checked with `jsonschema`
    (problems located at its ``schema_path`` line); unused kinds are not opened, so
    one broken kind in a shared config does not break every pipeline.
    """
    kinds = builtin_kinds()
    if config is None:
        return KindsResult(kinds, None, [])
    try:
        doc = read_toml(config, error_cls=PipelineError, display_path=display)
    except PipelineError as exc:
        return KindsResult(kinds, config, list(exc.problems), complete=False)
    model, problems = parse_model(KindsConfig, doc)
    if not isinstance(model, KindsConfig):
        return KindsResult(kinds, config, problems, doc, complete=False)
    wanted = set(used)
    seen: dict[str, int] = {}
    for index, spec in enumerate(model.artifacts):
        where = ("artifacts", index)
        if spec.id in seen:
            problems.append(doc.problem(
                "duplicate_kind", f"kind {spec.id!r} is declared twice (first as "
                f"artifacts[{seen[spec.id]}]); the second would silently win", (*where, "id")))
            continue
        seen[spec.id] = index
        if spec.id in kinds:
            problems.append(doc.problem(
                "reserved_kind", f"{spec.id!r} is a built-in kind; give yours another id",
                (*where, "id")))
            continue
        path = config.parent / spec.schema_path
        kind = ArtifactKind(spec.id, {}, path, spec.llm_emitted)
        if spec.id in wanted:
            schema, found = _read_schema(doc, path, spec.schema_path, (*where, "schema_path"))
            problems += found  # a broken schema is reported once, here, not as unknown kind
            kind.schema = schema or {}
        kinds[spec.id] = kind
    return KindsResult(kinds, config, problems, doc)


def _read_schema(doc: SourceDoc, path: Path, shown: str,
                 where: tuple[str | int, ...]) -> tuple[dict[str, Any] | None, list[Problem]]:
    defect = path_defect(shown)
    if defect:
        return None, [doc.problem("unsafe_path", f"{shown!r}: {defect}", where)]
    if not path.is_file():
        return None, [doc.problem(
            "kind_schema_not_found", f"the JSON Schema {shown!r} does not exist "
            f"(looked in {path.parent})", where)]
    try:
        data = read_json(path, error_cls=PipelineError, display_path=shown)
    except PipelineError as exc:
        return None, [doc.problem(
            "kind_schema_unreadable",
            f"{shown}: {p.message}" + (f" (line {p.line}, column {p.column})" if p.line else ""),
            where) for p in exc.problems]
    if not isinstance(data, dict):
        return None, [doc.problem("kind_schema_invalid",
                                  f"{shown} must hold a JSON object (a JSON Schema)", where)]
    from ..core.lazy import import_jsonschema

    jsonschema = import_jsonschema()  # see import_jsonschema: the iri grammar waits
    SchemaError, validator_for = jsonschema.SchemaError, jsonschema.validators.validator_for

    try:
        validator_for(data).check_schema(data)
    except SchemaError as exc:
        at = "/" + "/".join(map(str, exc.absolute_path))
        return None, [doc.problem(
            "kind_schema_invalid",
            f"{shown} is not a valid JSON Schema: {exc.message} (at {at})", where)]
    except (TypeError, ValueError, LookupError, RecursionError) as exc:  # "$schema": [1]...
        return None, [doc.problem(
            "kind_schema_invalid", f"{shown} is not a valid JSON Schema: {exc}", where)]
    return data, []


def unknown_kind_message(kind: str, kinds: Mapping[str, ArtifactKind],
                         config: Path | None) -> str:
    """Why a kind is unknown, and what to do about it."""
    if config is None:
        return (f"kind {kind!r} is not built in and no {CONFIG_NAME} was found next to the "
                "pipeline or in its parent folder; declare it under [[artifacts]] there, "
                "or pass kinds=PATH")
    return (f"kind {kind!r} is not declared in {config.name}"
            + (did_you_mean(kind, kinds) or f"; kinds: {', '.join(sorted(kinds))}"))
