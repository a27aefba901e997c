"""One line of a ledger on its own: parse and validate it, or say what is wrong with it.

This is the slow, exact path of the reader (used only for the few lines Arrow
refuses) and the place that tells a line *cut short* by a crash — the beginning of a
JSON object — from a corrupt one. A cut line is a warning wherever it is; any other
bad line is an error.
"""

from __future__ import annotations

import json
from typing import Any, Final

from pydantic import ValidationError

from ..errors import Problem
from .events import LedgerEvent, validation_problems

TRUNCATED: Final = "ledger_truncated_line"
BAD_JSON: Final = "ledger_bad_json"
BAD_EVENT: Final = "ledger_bad_event"
EMPTY: Final = "ledger_empty"


def parse_line(raw: bytes, name: str, line: int, problems: list[Problem],
               *, first: bool = False) -> LedgerEvent | None:
    """One line as a `LedgerEvent`, or None with its problem appended to `problems`."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(Problem(BAD_JSON, f"the line is not UTF-8 text (byte {exc.start}); "
                                "ledgers are UTF-8 JSON Lines", name, line))
        return None
    if first:
        text = text.removeprefix("\ufeff")
    text = text.strip()
    try:
        obj = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        if is_object_prefix(text):
            problems.append(truncated(name, line, last=False))
        else:
            problems.append(Problem(
                BAD_JSON, f"not JSON: {exc.msg} at column {exc.colno}; each line must be "
                "one JSON object", name, line, exc.colno))
        return None
    except _Duplicate as exc:
        problems.append(Problem(BAD_JSON, f"key {exc.key!r} appears twice in one event; the "
                                "later value would silently win", name, line, key=exc.key))
        return None
    except ValueError as exc:  # NaN / Infinity
        problems.append(Problem(BAD_JSON, f"not JSON: {exc}", name, line))
        return None
    if not isinstance(obj, dict):
        problems.append(Problem(BAD_EVENT, f"the line is a JSON {type(obj).__name__}, not an "
                                "object; each line must be one event object", name, line))
        return None
    try:
        return LedgerEvent.model_validate(obj)
    except ValidationError as exc:
        problems.extend(validation_problems(exc, path=name, line=line))
        return None


def cut_short(raw: bytes) -> bool:
    """Whether a line is the beginning of a JSON object, but not a whole one.

    That is what a write cut by a crash leaves; any other invalid line is corrupt.
    """
    raw = raw.strip()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(raw) - 3 or exc.reason != "unexpected end of data":
            return False
        text = raw[:exc.start].decode("utf-8", errors="replace")  # a character cut in half
    try:
        json.loads(text)
    except ValueError:
        return is_object_prefix(text.removeprefix("\ufeff"))
    return False


_CLOSE: Final = {"}": "{", "]": "["}
_LITERALS: Final = ("true", "false", "null")


def is_object_prefix(text: str) -> bool:
    """Whether some text appended to `text` would make it one JSON object."""
    text = text.strip()
    if not text.startswith("{"):
        return False
    stack: list[str] = []
    in_string = escaped = False
    hex_left = 0  # hex digits still expected after \u
    for ch in text:
        if in_string:
            if hex_left:
                hex_left -= 1
            elif escaped:
                escaped = False
                hex_left = 4 if ch == "u" else 0
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append(ch)
        elif ch in "}]" and (not stack or stack.pop() != _CLOSE[ch] or not stack):
            return False  # a mismatched bracket, or the object closed: not a cut
    head = text
    if in_string:  # close the string, dropping a half-written escape
        head = head[:-1] if escaped else head[:-(6 - hex_left)] if hex_left else head
        head += '"'
    closers = "".join("}" if c == "{" else "]" for c in reversed(stack))
    tails = ["", "null", ":null", '"":null', "0", '""']
    tails += [lit[k:] for lit in _LITERALS for k in range(1, len(lit)) if head.endswith(lit[:k])]
    for tail in tails:
        try:
            json.loads(head + tail + closers)
        except ValueError:
            continue
        return True
    return False


def truncated(name: str, line: int, *, last: bool) -> Problem:
    where = "the last line" if last else f"line {line}"
    return Problem(
        TRUNCATED,
        f"{where} was cut short (a writer stopped mid-write, e.g. a crash); it was left "
        "out and every complete line was loaded",
        name, line, severity="warning",
    )


class _Duplicate(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Duplicate(key)
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")
