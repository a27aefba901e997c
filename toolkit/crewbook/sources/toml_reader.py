"""TOML through `tomllib`, with the line and column of every key recovered by a scan."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

from ..errors import InvalidInputError
from .document import (
    MAX_DEPTH,
    KeyPath,
    MiB,
    Position,
    SourceDoc,
    _fail,
    read_text,
    too_complex,
)

#: Largest TOML file read (pipelines and artifact-kinds configs), in bytes; real ones
#: are a few kilobytes.
MAX_TOML_BYTES = 1 * MiB

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
    column; an empty file is `empty_file`; a number of thousands of digits or nesting
    deeper than `MAX_DEPTH` is `toml_too_complex` (never a library traceback).
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
    except ValueError:  # an integer of thousands of digits (int max str digits)
        raise _fail(error_cls, name, "toml_too_complex",
                    "a number has more than 4,300 digits, too long to read; no crewbook "
                    "key needs one") from None
    except RecursionError:
        data = None
    why = f"it nests more than {MAX_DEPTH} levels deep" if data is None else too_complex(data)
    if why is not None:
        raise _fail(error_cls, name, "toml_too_complex", f"the TOML is too complex: {why}")
    scanner = _TomlScanner(text)
    # tomllib accepted the text already: a scan that trips only loses positions
    with contextlib.suppress(IndexError, ValueError, RecursionError):
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
