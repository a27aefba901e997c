"""Read YAML (and TOML: `read_toml`) files while keeping where every key is.

A `SourceDoc` holds the plain data and a map from key path (``("artifacts", 2,
"requires")``) to its line and column, so a model error can name `file:line:col`.
Reading never lets a library traceback through: a missing, huge, non-UTF-8, empty,
malformed or non-mapping file, or a YAML alias bomb, is one `InvalidInputError`
(of the class the caller asks for) with a coded `Problem`.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .errors import InvalidInputError, Problem

KeyPath = tuple[str | int, ...]

#: Largest YAML file read, in bytes. Real schemas are a few kilobytes; a generated
#: 10,000-artifact schema is about 2 MB.
MAX_YAML_BYTES = 16 * 1024 * 1024
#: Largest number of nodes an alias may expand to, in total (guards alias bombs).
MAX_ALIAS_EXPANSION = 100_000

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Position:
    """A 1-based line and column."""

    line: int
    column: int


@dataclass
class SourceDoc:
    """Plain data read from a file, with the position of every key and item."""

    path: Path
    data: Any
    positions: dict[KeyPath, Position] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    display_path: str | None = None

    @property
    def name(self) -> str:
        """The path as shown in messages."""
        return self.display_path or str(self.path)

    def position(self, key_path: Sequence[str | int]) -> Position | None:
        """Where `key_path` is, or its nearest ancestor that has a position."""
        loc = tuple(key_path)
        while loc:
            if loc in self.positions:
                return self.positions[loc]
            loc = loc[:-1]
        return self.positions.get(())

    def problem(
        self, code: str, message: str, key_path: Sequence[str | int] = (), **kw: Any
    ) -> Problem:
        """A `Problem` located at `key_path` in this file."""
        pos = self.position(key_path)
        return Problem(
            code=code,
            message=message,
            path=self.name,
            line=pos.line if pos else None,
            column=pos.column if pos else None,
            key=format_key_path(key_path) or None,
            **kw,
        )


def format_key_path(key_path: Sequence[str | int]) -> str:
    """``("artifacts", 2, "requires")`` → ``"artifacts[2].requires"``."""
    out = ""
    for part in key_path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _fail(
    error_cls: type[InvalidInputError],
    name: str,
    code: str,
    message: str,
    line: int | None = None,
    column: int | None = None,
) -> InvalidInputError:
    problem = Problem(code=code, message=message, path=name, line=line, column=column)
    return error_cls(f"cannot read {name}", [problem])


def read_text(
    path: Path,
    *,
    error_cls: type[InvalidInputError] = InvalidInputError,
    max_bytes: int = MAX_YAML_BYTES,
    display_path: str | None = None,
) -> str:
    """The UTF-8 text of `path`, or one clear error if it is missing, huge or binary."""
    name = display_path or str(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise _fail(error_cls, name, "file_not_found", "no such file") from None
    except OSError as exc:
        raise _fail(error_cls, name, "unreadable", f"cannot read the file: {exc}") from None
    if not path.is_file():
        raise _fail(error_cls, name, "not_a_file", "expected a file, found a folder")
    if size > max_bytes:
        raise _fail(
            error_cls,
            name,
            "file_too_large",
            f"the file is {size / 1e6:.1f} MB, over the limit of {max_bytes / 1e6:.0f} MB; "
            "is it the right file?",
        )
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _fail(
            error_cls,
            name,
            "not_utf8",
            f"the file is not UTF-8 text (byte {exc.start}); save it as UTF-8",
        ) from None


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


# --------------------------------------------------------------------------- TOML

#: Largest TOML file read, in bytes (pipelines and configs are a few kilobytes).
MAX_TOML_BYTES = 4 * 1024 * 1024

_TOML_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
_TOML_END = re.compile(r"\s*\(at end of document\)\s*$")


def read_toml(
    path: Path | str,
    *,
    error_cls: type[InvalidInputError] = InvalidInputError,
    max_bytes: int = MAX_TOML_BYTES,
    display_path: str | None = None,
) -> SourceDoc:
    """Read a TOML file with `tomllib` and recover where every key is (see `parse_toml`)."""
    path = Path(path)
    text = read_text(path, error_cls=error_cls, max_bytes=max_bytes, display_path=display_path)
    return parse_toml(text, path, error_cls=error_cls, display_path=display_path or str(path))


def parse_toml(
    text: str,
    path: Path | str = "<string>",
    *,
    error_cls: type[InvalidInputError] = InvalidInputError,
    display_path: str | None = None,
) -> SourceDoc:
    """Parse TOML text; `positions` maps key paths (``("stages", 3, "needs", 1)``) to
    where they are written.

    `tomllib` gives values but no positions, so a light scan of the text follows
    it: table headers ``[a.b]``, arrays of tables ``[[stages]]`` (numbered in order),
    ``key = value`` lines (dotted and quoted keys too), and the items of arrays and
    inline tables. A syntax error is one `toml_syntax` problem at tomllib's line and
    column; an empty file is `empty_file`.
    """
    import tomllib

    path = Path(path)
    name = display_path or str(path)
    if not text.strip() or all(
        not line.strip() or line.lstrip().startswith("#") for line in text.splitlines()
    ):
        raise _fail(error_cls, name, "empty_file", "the file is empty; it needs TOML keys")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        line = column = None
        at = _TOML_AT.search(message)
        if at:
            line, column = int(at.group(1)), int(at.group(2))
            message = message[: at.start()]
        elif _TOML_END.search(message):
            message = _TOML_END.sub("", message) + " (at the end of the file)"
            line = text.count("\n") + 1
        raise _fail(error_cls, name, "toml_syntax", f"invalid TOML: {message}", line,
                    column) from None
    scanner = _TomlScanner(text)
    with contextlib.suppress(IndexError, ValueError):  # tomllib accepted the text already
        scanner.scan()
    return SourceDoc(path=path, data=data, positions=scanner.positions, display_path=name)


class _TomlScanner:
    """Finds the position of every key, array item and table in TOML text tomllib accepted."""

    _BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.line = 1
        self.line_start = 0
        self.positions: dict[KeyPath, Position] = {(): Position(1, 1)}
        self.counts: dict[KeyPath, int] = {}

    # -- low level -----------------------------------------------------------------
    def _pos(self) -> Position:
        return Position(self.line, self.i - self.line_start + 1)

    def _peek(self, n: int = 1) -> str:
        return self.text[self.i:self.i + n]

    def _advance(self, n: int = 1) -> None:
        for _ in range(n):
            if self.i < len(self.text) and self.text[self.i] == "\n":
                self.line += 1
                self.line_start = self.i + 1
            self.i += 1

    def _skip_blank(self, newlines: bool) -> None:
        while self.i < len(self.text):
            char = self.text[self.i]
            if char in " \t\r" or (newlines and char == "\n"):
                self._advance()
            elif char == "#":
                while self.i < len(self.text) and self.text[self.i] != "\n":
                    self.i += 1
            else:
                return

    def _string(self) -> str:
        quote = self.text[self.i]
        if self._peek(3) == quote * 3:
            self._advance(3)
            while self.i < len(self.text):
                if quote == '"' and self.text[self.i] == "\\":
                    self._advance(2)
                elif self._peek(3) == quote * 3:
                    self._advance(3)
                    while self._peek() == quote:  # up to two quotes may end the content
                        self._advance()
                    return ""
                else:
                    self._advance()
            return ""
        self._advance()
        out: list[str] = []
        while self.i < len(self.text) and self.text[self.i] != quote:
            if quote == '"' and self.text[self.i] == "\\":
                out.append(self.text[self.i:self.i + 2])
                self._advance(2)
            else:
                out.append(self.text[self.i])
                self._advance()
        self._advance()
        raw = "".join(out)
        if quote == '"' and "\\" in raw:
            import json

            try:
                decoded: str = json.loads(f'"{raw}"')
                return decoded
            except ValueError:
                return raw
        return raw

    def _key(self) -> list[str]:
        parts: list[str] = []
        while True:
            self._skip_blank(newlines=False)
            if self._peek() in ('"', "'"):
                parts.append(self._string())
            else:
                start = self.i
                while self.i < len(self.text) and self.text[self.i] in self._BARE:
                    self.i += 1
                if self.i == start:
                    raise ValueError("no key")
                parts.append(self.text[start:self.i])
            self._skip_blank(newlines=False)
            if self._peek() != ".":
                return parts
            self._advance()

    def _resolve(self, parts: list[str]) -> KeyPath:
        """A header's key path, with the current index of arrays of tables it goes through."""
        out: KeyPath = ()
        for part in parts:
            out = (*out, part)
            if out in self.counts:
                out = (*out, self.counts[out] - 1)
        return out

    # -- structure -------------------------------------------------------------------
    def scan(self) -> None:
        table: KeyPath = ()
        while True:
            self._skip_blank(newlines=True)
            if self.i >= len(self.text):
                return
            pos = self._pos()
            if self._peek(2) == "[[":
                self._advance(2)
                parts = self._key()
                self._advance(2)
                parent = self._resolve(parts[:-1])
                array = (*parent, parts[-1])
                index = self.counts.get(array, 0)
                self.counts[array] = index + 1
                self.positions.setdefault(array, pos)
                table = (*array, index)
                self.positions[table] = pos
            elif self._peek() == "[":
                self._advance()
                parts = self._key()
                self._advance()
                table = self._resolve(parts)
                self.positions.setdefault(table, pos)
            else:
                self._pair(table)

    def _pair(self, table: KeyPath) -> None:
        pos = self._pos()
        keys = self._key()
        for depth in range(1, len(keys)):
            self.positions.setdefault((*table, *keys[:depth]), pos)
        where = (*table, *keys)
        self.positions[where] = pos
        self._skip_blank(newlines=False)
        self._advance()  # '='
        self._skip_blank(newlines=False)
        self._value(where)

    def _value(self, where: KeyPath) -> None:
        char = self._peek()
        if char in ('"', "'"):
            self._string()
        elif char == "[":
            self._advance()
            index = 0
            while True:
                self._skip_blank(newlines=True)
                if self._peek() in ("]", ""):
                    self._advance()
                    return
                if self._peek() == ",":
                    self._advance()
                    continue
                self.positions[(*where, index)] = self._pos()
                self._value((*where, index))
                index += 1
        elif char == "{":
            self._advance()
            while True:
                self._skip_blank(newlines=False)
                if self._peek() in ("}", ""):
                    self._advance()
                    return
                if self._peek() == ",":
                    self._advance()
                    continue
                self._pair(where)
        else:
            while self.i < len(self.text) and self.text[self.i] not in ",]}#\n":
                self.i += 1
