"""Print the JSON Schema of one ledger line (kept in ``schemas/ledger-event.json``).

Regenerate the file after changing `crewbook.ledger.events.LedgerEvent`::

    python -m crewbook.ledger.jsonschema > schemas/ledger-event.json

(a separate module, not imported by the package, so ``python -m`` runs it cleanly).
"""

from __future__ import annotations

import sys

from .events import schema_text


def main() -> int:
    """Write the schema to standard output."""
    sys.stdout.write(schema_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
