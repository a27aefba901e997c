"""Check a schema folder against every rule of SPEC A3, A4 and A7, collecting all problems.

The structural rules come from the pydantic model (`model.py`); the rules that need
the whole file or the disk are here. They run on the raw data too, so a file with a
wrong type in one place still gets its cycle and its dangling `requires` reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

from ..errors import Problem, did_you_mean
from ..models import is_glob, parse_model, path_defect
from ..sources import KeyPath, SourceDoc
from .model import SchemaFile
from .step_roles import builtin_role_ids


def check_schema(
    doc: SourceDoc, folder: Path, *, schema_name: str
) -> tuple[SchemaFile | None, list[Problem]]:
    """The validated model (None when any error) and every problem, errors and warnings."""
    model, problems = parse_model(SchemaFile, doc)
    problems = list(doc.problems) + problems
    artifacts = [
        (index, item)
        for index, item in enumerate(_list(doc.data.get("artifacts")))
        if isinstance(item, dict)
    ]
    problems += _check_ids(doc, artifacts)
    known = [str(item["id"]) for _, item in artifacts if isinstance(item.get("id"), str)]
    problems += _check_requires(doc, artifacts, known, schema_name)
    problems += _check_cycles(doc, artifacts)
    problems += _check_templates(doc, artifacts, folder)
    problems += _check_roles(doc, artifacts)
    problems += _check_outputs(doc, artifacts)
    declared = doc.data.get("name")
    if isinstance(declared, str) and declared != schema_name:
        problems.append(
            doc.problem(
                "schema_name_mismatch",
                f"name {declared!r} differs from the folder name {schema_name!r}; the folder "
                f"wins (the schema is used as {schema_name!r}): set `name: {schema_name}`",
                ("name",),
                severity="warning",
            )
        )
    problems.sort(key=lambda p: (p.line or 0, p.column or 0))
    if any(p.severity == "error" for p in problems):
        return None, problems
    return cast(SchemaFile, model), problems


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _check_ids(doc: SourceDoc, artifacts: list[tuple[int, dict[str, Any]]]) -> list[Problem]:
    problems = []
    first: dict[str, int] = {}
    for index, item in artifacts:
        art_id = item.get("id")
        if not isinstance(art_id, str):
            continue
        if art_id in first:
            line = doc.position(("artifacts", first[art_id], "id"))
            where = f" (first at line {line.line})" if line else ""
            problems.append(
                doc.problem(
                    "duplicate_id",
                    f"artifact id {art_id!r} is declared twice{where}; ids must be unique",
                    ("artifacts", index, "id"),
                )
            )
        else:
            first[art_id] = index
    return problems


def _requires(item: dict[str, Any]) -> list[tuple[int, str]]:
    return [(i, r) for i, r in enumerate(_list(item.get("requires"))) if isinstance(r, str)]


def _check_requires(
    doc: SourceDoc, artifacts: list[tuple[int, dict[str, Any]]], known: list[str], schema: str
) -> list[Problem]:
    problems = []
    known_ids = set(known)
    places: list[tuple[KeyPath, list[tuple[int, str]]]] = [
        (("artifacts", index, "requires"), _requires(item)) for index, item in artifacts
    ]
    apply = doc.data.get("apply")
    if isinstance(apply, dict):
        places.append((("apply", "requires"), _requires(apply)))
    for base, requires in places:
        key = "apply.requires" if base[0] == "apply" else "requires"
        for i, name in requires:
            if name not in known_ids:
                problems.append(
                    doc.problem(
                        "unknown_artifact",
                        f"`{key}` names {name!r}, which is no artifact of schema {schema!r}"
                        + (
                            did_you_mean(name, known)
                            or (
                                f"; artifacts: {', '.join(known)}"
                                if known
                                else "; the schema declares no artifacts"
                            )
                        ),
                        (*base, i),
                    )
                )
    return problems


def _check_cycles(doc: SourceDoc, artifacts: list[tuple[int, dict[str, Any]]]) -> list[Problem]:
    index_of = {
        str(item["id"]): index for index, item in artifacts if isinstance(item.get("id"), str)
    }
    graph = {
        art_id: [r for _, r in _requires(item) if r in index_of]
        for index, item in artifacts
        if isinstance((art_id := item.get("id")), str) and index_of[art_id] == index
    }
    problems = []
    for cycle in find_cycles(graph):
        path = " → ".join([*cycle, cycle[0]])
        first = cycle[0]
        req = _requires(artifacts[[i for i, _ in artifacts].index(index_of[first])][1])
        pos = next((i for i, r in req if r == (cycle[1] if len(cycle) > 1 else first)), 0)
        problems.append(
            doc.problem(
                "dependency_cycle",
                f"dependencies form a cycle: {path}; no artifact in it can ever be ready. "
                "Remove one of these `requires`",
                ("artifacts", index_of[first], "requires", pos),
            )
        )
    return problems


def find_cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Each elementary cycle found by a depth-first search, once, in declaration order.

    `graph` maps a node to the nodes it requires. A cycle is given from its first
    declared node, following `requires`.
    """
    order = {node: i for i, node in enumerate(graph)}
    state: dict[str, int] = {}  # 1 on the stack, 2 finished
    stack: list[str] = []
    seen: set[frozenset[str]] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in graph.get(node, []):
            if state.get(dep) == 1:
                cycle = stack[stack.index(dep) :]
                key = frozenset(cycle)
                if key not in seen:
                    seen.add(key)
                    start = min(range(len(cycle)), key=lambda i: order.get(cycle[i], 0))
                    cycles.append(cycle[start:] + cycle[:start])
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[node] = 2

    for node in graph:
        if node not in state:
            visit(node)
    return cycles


def _check_templates(
    doc: SourceDoc, artifacts: list[tuple[int, dict[str, Any]]], folder: Path
) -> list[Problem]:
    problems = []
    templates = folder / "templates"
    available = (
        sorted(p.name for p in templates.iterdir() if p.is_file()) if templates.is_dir() else []
    )
    for index, item in artifacts:
        name = item.get("template")
        if not isinstance(name, str) or path_defect(name):
            continue  # the model reports the type or the unsafe path
        target = templates / name
        if not target.is_file():
            hint = did_you_mean(name, available) or (
                f"; templates/ holds {', '.join(available)}"
                if available
                else "; the schema has no templates/ folder"
                if not templates.is_dir()
                else ""
            )
            problems.append(
                doc.problem(
                    "missing_template",
                    f"template {name!r} is not in the schema's templates/ folder{hint}",
                    ("artifacts", index, "template"),
                )
            )
        elif not target.resolve().is_relative_to(templates.resolve()):
            problems.append(
                doc.problem(
                    "unsafe_path",
                    f"template {name!r} is a link that leads outside templates/; "
                    "copy the file into templates/ instead",
                    ("artifacts", index, "template"),
                )
            )
    return problems


def _check_roles(doc: SourceDoc, artifacts: list[tuple[int, dict[str, Any]]]) -> list[Problem]:
    problems = []
    reserved = builtin_role_ids()
    first: dict[str, int] = {}
    for index, item in artifacts:
        role = item.get("role")
        if not isinstance(role, dict) or not isinstance(role.get("id"), str):
            continue
        role_id = role["id"]
        loc = ("artifacts", index, "role", "id")
        if role_id in reserved:
            problems.append(
                doc.problem(
                    "reserved_role",
                    f"role id {role_id!r} is a built-in step role; give the artifact role "
                    f"its own id (built-in: {', '.join(sorted(reserved))})",
                    loc,
                )
            )
        if role_id in first:
            owner = artifacts[[i for i, _ in artifacts].index(first[role_id])][1].get("id")
            problems.append(
                doc.problem(
                    "duplicate_role",
                    f"role id {role_id!r} is already the role of artifact {owner!r}; "
                    "role ids are unique in a schema",
                    loc,
                )
            )
        else:
            first[role_id] = index
    return problems


def _check_outputs(doc: SourceDoc, artifacts: list[tuple[int, dict[str, Any]]]) -> list[Problem]:
    problems = []
    owners: dict[str, str] = {}
    generated = set()
    unknown_output = False  # an artifact without a readable `generates` might write tracks
    for index, item in artifacts:
        out = item.get("generates")
        if not isinstance(out, str):
            unknown_output = True
            continue
        generated.add(out)
        if out in owners:
            problems.append(
                doc.problem(
                    "duplicate_output",
                    f"artifact {item.get('id')!r} generates {out!r}, as {owners[out]!r} does: "
                    "both would be done as soon as one is written",
                    ("artifacts", index, "generates"),
                    severity="warning",
                )
            )
        else:
            owners[out] = str(item.get("id"))
    apply = doc.data.get("apply")
    tracks = apply.get("tracks") if isinstance(apply, dict) else None
    if (
        isinstance(tracks, str)
        and generated
        and not unknown_output
        and tracks not in generated
        and not is_glob(tracks)
        and not path_defect(tracks)
    ):
        problems.append(
            doc.problem(
                "tracks_not_generated",
                f"apply.tracks is {tracks!r}, which no artifact generates; implementation "
                "progress will read a file no step writes",
                ("apply", "tracks"),
                severity="warning",
            )
        )
    return problems


def iter_errors(problems: list[Problem]) -> Iterator[Problem]:
    """Only the errors among `problems`."""
    return (p for p in problems if p.severity == "error")
