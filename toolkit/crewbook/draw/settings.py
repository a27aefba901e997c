"""Settings of the drawing layer, changed at run time through ``crewbook.draw.options``.

Example::

    import crewbook.draw
    crewbook.draw.options.collapse_threshold = 500     # collapse sooner
    with crewbook.draw.options.override(collapse_threshold=50):
        schema                                          # displayed collapsed
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any

from ..errors import UsageError

#: The file extensions `save` writes, with what each holds (in the settings, a light
#: module: the command line lists them in its help without loading the renderers).
SAVE_FORMATS = {".dot": "DOT text", ".gv": "DOT text", ".mmd": "mermaid text",
                ".svg": "SVG (needs dot)", ".png": "PNG (needs dot)", ".pdf": "PDF (needs dot)"}

#: Default number of nodes above which a drawing collapses into summary nodes.
#: `dot` lays out 1,000 artifacts in well under a second and 2,000 in a couple of
#: seconds; past that the picture is unreadable anyway, so 1,500 keeps the 1,000
#: artifact case whole and a 10,000 artifact one quick.
DEFAULT_COLLAPSE_THRESHOLD = 1500


@dataclass
class DrawOptions:
    """What drawings do by default; every field may be set at run time.

    collapse_threshold: drawings with more nodes than this collapse by folder or rank
        (`GraphModel.collapse`), unless a call asks for `collapse=False`.
    dot_program: the Graphviz program to run, looked up on PATH (or a full path).
    dot_timeout: seconds a `dot` run may take before it is stopped.
    """

    collapse_threshold: int = DEFAULT_COLLAPSE_THRESHOLD
    dot_program: str = "dot"
    dot_timeout: float = 60.0

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "collapse_threshold" and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise UsageError(f"collapse_threshold must be a positive integer, not {value!r}")
        if name == "dot_timeout" and (
            isinstance(value, bool) or not isinstance(value, int | float) or value <= 0
        ):
            raise UsageError(f"dot_timeout must be a positive number of seconds, not {value!r}")
        if name == "dot_program" and (not isinstance(value, str) or not value):
            raise UsageError(f"dot_program must be a program name or path, not {value!r}")
        super().__setattr__(name, value)

    @contextmanager
    def override(self, **changes: Any) -> Iterator[DrawOptions]:
        """Change some options inside a `with` block, then restore them."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise UsageError(f"unknown drawing option(s) {', '.join(unknown)}; "
                             f"options: {', '.join(sorted(known))}")
        saved = {name: getattr(self, name) for name in changes}
        try:
            for name, value in changes.items():
                setattr(self, name, value)
            yield self
        finally:
            for name, value in saved.items():
                setattr(self, name, value)

    def reset(self) -> None:
        """Back to the defaults."""
        for f in fields(self):
            setattr(self, f.name, f.default)


#: The options in force (one per process).
options = DrawOptions()
