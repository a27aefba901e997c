"""YAML with `yaml.safe_load` semantics, keeping where every key is.

Guards beyond safe_load: a key repeated in one mapping is a problem (the later value
would silently win; a key that overrides one brought in by a merge ``<<: *base`` is
not), aliases may expand to at most `MAX_ALIAS_EXPANSION` nodes (the "billion
laughs"), nesting is at most `MAX_DEPTH` levels, tags on collections are refused, a
mapping key must be one scalar, an integer at most `MAX_INT_BITS` bits, and a scalar
its explicit tag cannot read (``!!float y``, ``!!timestamp x``) is a located
`yaml_syntax` problem, never a library traceback.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from ..core.gc_pause import paused_gc
from ..errors import InvalidInputError, Problem
from .document import (
    MAX_DEPTH,
    MAX_INT_BITS,
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
    with paused_gc():
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
    builder = _Builder(loader)
    positions: Mapping[KeyPath, Position] = builder.positions
    try:
        node = loader.get_single_node()
        if node is None:
            raise _fail(error_cls, name, "empty_file", "the file holds no YAML document")
        try:
            data = builder.fast(node)  # no positions: they are looked up when asked for
            positions = _LazyPositions(text, node)
        except _Redo:  # a key repeated: the full build names it, with its position
            builder = _Builder(loader)
            data = builder.build(node, ())
            positions = builder.positions
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = " ".join(x for x in (exc.context, exc.problem) if x) or "invalid YAML"
        raise _fail(
            error_cls,
            name,
            "yaml_too_complex" if "nesting depth" in what else "yaml_syntax",
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
    except (RecursionError, _TooDeep):
        raise _fail(
            error_cls, name, "yaml_too_complex",
            f"the YAML nests more than {MAX_DEPTH} levels deep; no crewbook file needs that",
        ) from None
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
        path=path, data=data, positions=positions, problems=problems, display_path=name
    )


class _LazyPositions(Mapping[KeyPath, Position]):
    """The position of every key path of a document, looked up when asked for: one key
    path by walking the composed nodes, all of them (iterating) by composing the text
    again. Reading a valid file never pays for them."""

    def __init__(self, text: str, root: yaml.Node) -> None:
        self._text: str | None = text
        self._root: yaml.Node | None = root
        self._found: dict[KeyPath, Position] = {}

    def _walk(self, key_path: KeyPath) -> Position | bool | None:
        """The position of `key_path`, None when it is not there, False when unsure."""
        node = self._root
        if node is None:
            return False
        mark = node.start_mark
        for part in key_path:
            kind = type(node)
            if kind is _MappingNode:
                for key_node, value_node in reversed(node.value):
                    if type(key_node) is not _ScalarNode or key_node.tag != _STR_TAG:
                        return False  # a key safe_load converts: let the full build say
                    if key_node.value == part:
                        mark, node = key_node.start_mark, value_node
                        break
                else:
                    return None
            elif kind is _SequenceNode and isinstance(part, int):
                if not 0 <= part < len(node.value):
                    return None
                node = node.value[part]
                mark = node.start_mark
            else:
                return None
        return Position(mark.line + 1, mark.column + 1)

    def get(self, key: KeyPath, default: Any = None) -> Any:
        found = self._walk(tuple(key)) if self._text is not None else False
        if found is False:
            return self._all().get(key, default)
        return default if found is None else found

    def _all(self) -> dict[KeyPath, Position]:
        if self._text is not None:
            loader = _Loader(self._text)
            try:
                node = loader.get_single_node()
                builder = _Builder(loader)
                if node is not None:
                    builder.build(node, ())
                self._found = builder.positions
            finally:
                loader.dispose()
            self._text = self._root = None
        return self._found

    def __getitem__(self, key: KeyPath) -> Position:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found  # type: ignore[no-any-return]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and self.get(key) is not None

    def __iter__(self) -> Iterator[KeyPath]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def __repr__(self) -> str:
        return f"<positions of {len(self)} key paths>"


#: Tags of the collections `yaml.safe_load` builds as plain dicts and lists.
_PLAIN_TAGS = frozenset({"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"})


class _TooComplex(Exception):
    pass


class _Redo(Exception):
    """The fast build met a repeated key: build again, with positions."""


class _TooDeep(Exception):
    pass


#: What a scalar's constructor may raise on a value its explicit tag cannot read.
_SCALAR_ERRORS = (ValueError, TypeError, KeyError, AttributeError, OverflowError, IndexError)


_STR_TAG = "tag:yaml.org,2002:str"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_MappingNode, _SequenceNode, _ScalarNode = yaml.MappingNode, yaml.SequenceNode, yaml.ScalarNode


class _Builder:
    """Turns composed YAML nodes into plain data, recording positions.

    Plain text scalars (most of a file) are taken from the node as they are, which is
    what safe_load's constructor does for them; other scalars go through it.
    """

    def __init__(self, loader: yaml.SafeLoader) -> None:
        self.loader = loader
        self.positions: dict[KeyPath, Position] = {}
        self.duplicates: list[tuple[KeyPath, Position, str]] = []
        self.seen: set[int] = set()
        self.expanded = 0

    def scalar(self, node: yaml.Node) -> Any:
        """The value of a scalar node, as `yaml.safe_load` builds it; a value its tag
        cannot read, or an integer past `MAX_INT_BITS`, is a located YAML error."""
        if node.tag == _STR_TAG and type(node) is _ScalarNode:
            return node.value
        try:
            value = self.loader.construct_object(node, deep=True)
        except yaml.YAMLError:
            raise
        except _SCALAR_ERRORS:
            tag = str(node.tag).replace("tag:yaml.org,2002:", "!!")
            raise yaml.constructor.ConstructorError(
                None, None,
                f"{str(node.value)[:40]!r} is not a valid {tag} value; remove the tag {tag} "
                "or fix the value",
                node.start_mark,
            ) from None
        if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
            raise yaml.constructor.ConstructorError(
                None, None, "a number has more than 4,000 digits; no crewbook key needs one",
                node.start_mark)
        return value

    def key(self, key_node: yaml.Node) -> Any:
        """A mapping key: one hashable scalar (not a list, a mapping or a `!!set`)."""
        if type(key_node) is not _ScalarNode:
            raise yaml.constructor.ConstructorError(
                None, None, "a mapping key must be a single value, not a list or mapping",
                key_node.start_mark)
        key = self.scalar(key_node)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, "a mapping key must be a single value", key_node.start_mark
            ) from None
        return key


    def visit(self, node: yaml.Node) -> None:
        """Count a node built again (an alias): too many expansions is `_TooComplex`."""
        if id(node) in self.seen:
            self.expanded += 1
            if self.expanded > MAX_ALIAS_EXPANSION:
                raise _TooComplex
        else:
            self.seen.add(id(node))

    def fast(self, node: yaml.Node, depth: int = 0) -> Any:
        """The data of `node`, without positions (`_Redo` on a repeated key)."""
        if depth > MAX_DEPTH:
            raise _TooDeep
        self.visit(node)
        kind = type(node)
        if kind is _ScalarNode:
            return node.value if node.tag == _STR_TAG else self.scalar(node)
        if node.tag not in _PLAIN_TAGS:
            raise yaml.constructor.ConstructorError(
                None, None, f"tag {node.tag!r} is not supported; write plain YAML", node.start_mark
            )
        fast = self.fast
        depth += 1
        if kind is _MappingNode:
            merged = _merged(self.loader, node)  # type: ignore[arg-type]
            result: dict[Any, Any] = {}
            for index, (key_node, value_node) in enumerate(node.value):
                if type(key_node) is _ScalarNode and key_node.tag == _STR_TAG:
                    key = key_node.value
                else:
                    key = self.key(key_node)
                if key in result and (not merged or index >= merged):
                    raise _Redo  # maybe a repeated key: the full build tells
                result[key] = fast(value_node, depth)
            return result
        return [fast(item, depth) for item in node.value]

    def build(self, node: yaml.Node, key_path: KeyPath) -> Any:
        if not key_path:
            self.positions[()] = Position(node.start_mark.line + 1, node.start_mark.column + 1)
        if len(key_path) > MAX_DEPTH:
            raise _TooDeep
        self.visit(node)
        kind = type(node)
        if kind is _ScalarNode:
            return self.scalar(node)
        if node.tag not in _PLAIN_TAGS:
            raise yaml.constructor.ConstructorError(
                None, None, f"tag {node.tag!r} is not supported; write plain YAML", node.start_mark
            )
        if kind is _MappingNode:
            merged = _merged(self.loader, node)  # type: ignore[arg-type]
            result: dict[Any, Any] = {}
            from_merge: set[Any] = set()
            for index, (key_node, value_node) in enumerate(node.value):
                key = self.key(key_node)
                kp = (*key_path, key if isinstance(key, str) else str(key))
                pos = Position(key_node.start_mark.line + 1, key_node.start_mark.column + 1)
                if index < merged:
                    from_merge.add(key)
                elif key in from_merge:
                    from_merge.discard(key)  # a written key overriding a merged one: legal
                elif key in result:
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
        if kind is _SequenceNode:
            items = []
            for index, item in enumerate(node.value):
                kp = (*key_path, index)
                self.positions[kp] = Position(item.start_mark.line + 1, item.start_mark.column + 1)
                items.append(self.build(item, kp))
            return items
        return self.loader.construct_object(node, deep=True)


def _merged(loader: yaml.SafeLoader, node: yaml.MappingNode) -> int:
    """How many of the node's pairs a merge (``<<: *base``) brought in: flatten_mapping
    puts them first, and the written keys after them may override them (that is what
    a merge is for). Flattens the node once; remembers the count on the node."""
    count: int | None = getattr(node, "_crewbook_merged", None)
    if count is None:
        if any(k.tag == _MERGE_TAG for k, _ in node.value):
            written = sum(1 for k, _ in node.value if k.tag != _MERGE_TAG)
            loader.flatten_mapping(node)
            count = len(node.value) - written
        else:
            count = 0
        node._crewbook_merged = count  # type: ignore[attr-defined]
    return count


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
