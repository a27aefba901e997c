"""Run the Graphviz `dot` program: DOT text → SVG, PNG or PDF, with a timeout and clear errors.

`dot` is found on PATH at each call (`options.dot_program`), never at import, so a
notebook notices when it is installed or removed. Results are cached by (program,
format, text): displaying the same object twice runs `dot` once.
"""

from __future__ import annotations

import shutil
import subprocess
from collections import OrderedDict
from pathlib import Path

from ..errors import DotError, DotNotFoundError, InvalidInputError
from .settings import options

#: How to install Graphviz, as shown in errors and in the display card.
INSTALL_HINTS: tuple[str, ...] = (
    "apt-get install graphviz",
    "brew install graphviz",
    "conda install graphviz",
)
#: Formats `render` accepts (the `-T` option of `dot`).
FORMATS = ("svg", "png", "pdf", "json")
_CACHE_SIZE = 32
_cache: OrderedDict[tuple[str, str, str], bytes] = OrderedDict()


def dot_not_found(program: str | None = None) -> DotNotFoundError:
    """The error for a missing `dot`, with the install hints."""
    name = program or options.dot_program
    return DotNotFoundError(
        f"the Graphviz program {name!r} was not found on PATH; install Graphviz ("
        + " / ".join(INSTALL_HINTS)
        + "), or use the DOT or mermaid text (.dot(), .mermaid(), a .dot/.mmd file) instead"
    )


def find_dot() -> str | None:
    """The full path of the `dot` program, or None when it is not installed."""
    program = options.dot_program
    if Path(program).is_absolute():
        return program if Path(program).is_file() else None
    return shutil.which(program)


def dot_available() -> bool:
    """Whether `dot` can be run (it is on PATH)."""
    return find_dot() is not None


def render(dot_text: str, fmt: str = "svg", *, timeout: float | None = None) -> bytes:
    """The output of `dot -T<fmt>` for `dot_text`.

    Raises `DotNotFoundError` when `dot` is missing, `DotError` when it fails or runs
    longer than `timeout` seconds (default `options.dot_timeout`).
    """
    if fmt not in FORMATS:
        raise InvalidInputError(f"cannot render format {fmt!r}; formats: {', '.join(FORMATS)}")
    program = find_dot()
    if program is None:
        raise dot_not_found()
    key = (program, fmt, dot_text)
    if key in _cache:
        _cache.move_to_end(key)
        return _cache[key]
    limit = timeout if timeout is not None else options.dot_timeout
    try:
        done = _run(program, fmt, dot_text, limit)
        if done.returncode != 0 and _ROUTER_GAVE_UP in done.stderr:
            # Graphviz 2.43's spline router gives up on some bundles of parallel edges
            # between clusters ("illegal values of prev … and next …"); straight edges
            # still draw every node and edge
            done = _run(program, fmt, dot_text, limit, "-Gsplines=line")
    except subprocess.TimeoutExpired:
        raise DotError(
            f"dot took longer than {limit:g} s and was stopped; draw less (the drawing "
            "collapses above crewbook.draw.options.collapse_threshold) or raise "
            "crewbook.draw.options.dot_timeout"
        ) from None
    except (FileNotFoundError, PermissionError):
        raise dot_not_found(program) from None
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip()
        raise DotError(f"dot failed (exit {done.returncode}): {err[:2000] or 'no message'}")
    _cache[key] = done.stdout
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return done.stdout


_ROUTER_GAVE_UP = b"in routesplines, illegal values"


def _run(program: str, fmt: str, dot_text: str, limit: float,
         *extra: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([program, f"-T{fmt}", *extra], input=dot_text.encode("utf-8"),
                          capture_output=True, timeout=limit, check=False)


def render_svg(dot_text: str, *, timeout: float | None = None) -> str:
    """SVG text for `dot_text` (see `render`)."""
    return render(dot_text, "svg", timeout=timeout).decode("utf-8")


def clear_cache() -> None:
    """Forget rendered drawings (tests, or after changing Graphviz)."""
    _cache.clear()
