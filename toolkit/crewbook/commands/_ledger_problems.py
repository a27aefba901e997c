"""How the ledger commands report ledgers they cannot read: one place for the
exit status (2 for paths that do not exist, else 1) and the ``--json`` error document.
"""

from __future__ import annotations

import sys

from ..errors import Problem
from ._shared import emit_json

__all__ = ["fail"]


def fail(problems: tuple[Problem, ...] | list[Problem], as_json: bool) -> int:
    """Print the problems; 2 when they are only paths that do not exist (a usage error,
    as in every command), else 1."""
    if as_json:  # the error document of every command (docs/hardening.md)
        emit_json({"error": {"type": "LedgerError", "message": "cannot read the ledger",
                             "problems": [p.to_dict() for p in problems]}})
    else:
        for problem in problems:
            print(problem, file=sys.stderr)
    return 2 if problems and all(p.code == "file_not_found" for p in problems) else 1
