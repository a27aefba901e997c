"""JSON files (a kind's JSON Schema, a spec-kit ``state.json``, a payload file) read
whole, with the same guards as YAML and TOML: size, UTF-8, depth, huge numbers,
``NaN``. Any defect is one coded problem, never a library traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import InvalidInputError
from .document import MAX_DEPTH, MAX_TEXT_BYTES, _fail, read_text, too_complex


def read_json(
    path: Path | str,
    *,
    error_cls: type[InvalidInputError] = InvalidInputError,
    max_bytes: int = MAX_TEXT_BYTES,
    display_path: str | None = None,
) -> Any:
    """The JSON value of a file (see `parse_json`)."""
    path = Path(path)
    text = read_text(path, error_cls=error_cls, max_bytes=max_bytes, display_path=display_path)
    return parse_json(text, display_path or str(path), error_cls=error_cls)


def parse_json(text: str, name: str = "<string>", *,
               error_cls: type[InvalidInputError] = InvalidInputError) -> Any:
    """Parse JSON text: `json_syntax` (with line and column) for text that is not
    JSON (``NaN`` and ``Infinity`` included), `json_too_complex` for nesting deeper
    than `MAX_DEPTH` or a number of thousands of digits."""
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise _fail(error_cls, name, "json_syntax", f"not JSON: {exc.msg}", exc.lineno,
                    exc.colno) from None
    except _Constant as exc:
        raise _fail(error_cls, name, "json_syntax", f"not JSON: {exc} is not a JSON value "
                    "(write null or a number)") from None
    except ValueError:  # an integer of thousands of digits
        raise _fail(error_cls, name, "json_too_complex",
                    "a number has more than 4,300 digits, too long to read") from None
    except RecursionError:
        data = _TOO_DEEP
    why = f"it nests more than {MAX_DEPTH} levels deep" if data is _TOO_DEEP \
        else too_complex(data)
    if why is not None:
        raise _fail(error_cls, name, "json_too_complex", f"the JSON is too complex: {why}")
    return data


_TOO_DEEP = object()


class _Constant(ValueError):
    pass


def _no_constant(name: str) -> Any:
    raise _Constant(name)
