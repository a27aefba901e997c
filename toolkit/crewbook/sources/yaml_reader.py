"""YAML with `yaml.safe_load` semantics, keeping where every key is.

Guards beyond safe_load: a key repeated in one mapping is a problem (the later value
would silently win), aliases may expand to at most `MAX_ALIAS_EXPANSION` nodes (the
"billion laughs"), and tags on collections are refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from ..errors import InvalidInputError, Problem
from .document import (
    MAX_YAML_BYTES,
    KeyPath,
    Position,
    SourceDoc,
    _fail,
    format_key_path,
    read_text,
)

#: Largest number of nodes an alias may expand to, in total (guards alias bombs).
MAX_ALIAS_EXPANSION = 100_000

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_yaml(
    path: Path | str,
    *,
    error_cls: type[InvalidInputError] = InvalidInputError,
    max_bytes: int = MAX_YAML_BYTES,
    display_path: str | None = None,
    require_mapping: bool = True,
) -> SourceDoc:
    """Read one YAML document with positions; see the module docstring."""
    path = Path(path)
    name = display_path or str(path)
    text = read_text(path, error_cls=error_cls, max_bytes=max_bytes, display_path=display_path)
    return parse_yaml(
        text, path, error_cls=error_cls, display_path=name, require_mapping=require_mapping
    )


def parse_yaml(
    text: str,
    path: Path | str = "<string>",
    *,
    error_cls: type[InvalidInputError] = InvalidInputError,
    display_path: str | None = None,
    require_mapping: bool = True,
) -> SourceDoc:
    """Parse YAML text with positions (see `read_yaml`)."""
    path = Path(path)
    name = display_path or str(path)
    if not text.strip() or all(
        not line.strip() or line.lstrip().startswith("#") for line in text.splitlines()
    ):
        raise _fail(error_cls, name, "empty_file", "the file is empty; it needs a YAML mapping")
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise _fail(error_cls, name, "empty_file", "the file holds no YAML document")
        builder = _Builder(loader)
        data = builder.build(node, ())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = " ".join(x for x in (exc.context, exc.problem) if x) or "invalid YAML"
        raise _fail(
            error_cls,
            name,
            "yaml_syntax",
            f"invalid YAML: {what}",
            mark.line + 1 if mark else None,
            mark.column + 1 if mark else None,
        ) from None
    except yaml.YAMLError as exc:
        raise _fail(error_cls, name, "yaml_syntax", f"invalid YAML: {exc}") from None
    except _TooComplex:
        raise _fail(
            error_cls,
            name,
            "yaml_too_complex",
            f"aliases expand to more than {MAX_ALIAS_EXPANSION:,} nodes (an alias bomb?); "
            "write the data out instead of nesting aliases",
        ) from None
    except RecursionError:
        raise _fail(error_cls, name, "yaml_too_complex", "the YAML nests too deeply") from None
    finally:
        loader.dispose()
    if require_mapping and data is None:  # "---" alone, or a bare null
        raise _fail(error_cls, name, "empty_file", "the document is empty; it needs a YAML mapping")
    if require_mapping and not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else f"a single value ({type(data).__name__})"
        raise _fail(
            error_cls,
            name,
            "not_a_mapping",
            f"the document is {kind}; it must be a mapping of keys to values",
            1,
            1,
        )
    problems = [
        Problem(
            code="duplicate_key",
            message=msg,
            path=name,
            line=pos.line,
            column=pos.column,
            key=format_key_path(kp),
        )
        for kp, pos, msg in builder.duplicates
    ]
    return SourceDoc(
        path=path, data=data, positions=builder.positions, problems=problems, display_path=name
    )


#: Tags of the collections `yaml.safe_load` builds as plain dicts and lists.
_PLAIN_TAGS = frozenset({"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"})


class _TooComplex(Exception):
    pass


class _Builder:
    """Turns composed YAML nodes into plain data, recording positions."""

    def __init__(self, loader: yaml.SafeLoader) -> None:
        self.loader = loader
        self.positions: dict[KeyPath, Position] = {}
        self.duplicates: list[tuple[KeyPath, Position, str]] = []
        self.seen: set[int] = set()
        self.expanded = 0

    def build(self, node: yaml.Node, key_path: KeyPath) -> Any:
        if not key_path:
            self.positions[()] = Position(node.start_mark.line + 1, node.start_mark.column + 1)
        if id(node) in self.seen:
            # The same node again: an alias. Count what it expands to.
            self.expanded += 1
            if self.expanded > MAX_ALIAS_EXPANSION:
                raise _TooComplex
        else:
            self.seen.add(id(node))
        if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and node.tag not in _PLAIN_TAGS:
            raise yaml.constructor.ConstructorError(
                None, None, f"tag {node.tag!r} is not supported; write plain YAML", node.start_mark
            )
        if isinstance(node, yaml.MappingNode):
            self.loader.flatten_mapping(node)
            result: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                key = self.loader.construct_object(key_node, deep=True)
                if isinstance(key, (list, dict)):
                    raise yaml.constructor.ConstructorError(
                        None, None, "a mapping key must be a single value", key_node.start_mark
                    )
                kp = (*key_path, key if isinstance(key, str) else str(key))
                pos = Position(key_node.start_mark.line + 1, key_node.start_mark.column + 1)
                if key in result:
                    self.duplicates.append(
                        (
                            kp,
                            pos,
                            f"key {key!r} appears twice in one mapping; "
                            "the later value would silently win",
                        )
                    )
                self.positions[kp] = pos
                result[key] = self.build(value_node, kp)
            return result
        if isinstance(node, yaml.SequenceNode):
            items = []
            for index, item in enumerate(node.value):
                kp = (*key_path, index)
                self.positions[kp] = Position(item.start_mark.line + 1, item.start_mark.column + 1)
                items.append(self.build(item, kp))
            return items
        return self.loader.construct_object(node, deep=True)


def iter_key_paths(data: Any, prefix: KeyPath = ()) -> Iterator[KeyPath]:
    """Every key path in plain data, depth first (used by tests and linters)."""
    if isinstance(data, dict):
        for key, value in data.items():
            kp = (*prefix, key)
            yield kp
            yield from iter_key_paths(value, kp)
    elif isinstance(data, list):
        for index, value in enumerate(data):
            kp = (*prefix, index)
            yield kp
            yield from iter_key_paths(value, kp)
