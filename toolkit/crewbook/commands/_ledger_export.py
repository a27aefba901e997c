"""``crewbook ledger export``: a ledger's runs as OTLP spans, written to a file or sent
to an OTLP/HTTP endpoint.

Its own module because it has its own options (format, endpoint, headers, clockless
runs) and output; the OTLP code loads only when the command runs.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..errors import LedgerError, plural
from ._ledger_problems import fail
from ._shared import emit_json

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["export_command"]


def export_command(args: argparse.Namespace) -> int:
    """``crewbook ledger export``: the ledger's runs as OTLP spans, written or sent."""
    from ..errors import SendError, UsageError
    from ..ledger.reader import read_ledger

    as_json = getattr(args, "json", False)
    if args.output is None and args.otlp_endpoint is None:
        print("give the file to write (-o OUT) or the endpoint to send to "
              "(--otlp-endpoint URL)", file=sys.stderr)
        return 2
    if args.output is not None:
        from ..core.atomic import output_kind

        output_kind(args.output, inputs=[args.ledger])  # refused before any work
    try:
        clockless_at = _clockless_at(args.clockless_at)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            df = read_ledger(args.ledger)
        sent = _send(args, df, clockless_at) if args.otlp_endpoint else None
        export = sent.export if sent is not None else None
        if args.output is not None:
            export = _write_export(args, df, clockless_at)
    except LedgerError as exc:
        return fail(exc.problems, as_json)
    except UsageError as exc:
        print(exc, file=sys.stderr)
        return 2
    except SendError as exc:
        if as_json:
            emit_json({"error": {"type": "SendError", "message": str(exc)}})
        else:
            print(exc, file=sys.stderr)
        return 1
    assert export is not None
    doc: dict[str, Any] = {"traces": export.traces, "spans": export.spans,
                           "placed": export.placed, "left_out": export.left_out}
    if args.output is not None:
        doc["output"] = str(args.output)
    if sent is not None:
        doc.update(endpoint=sent.endpoint, requests=sent.requests, retries=sent.retries,
                   rejected=sent.rejected)
    if as_json:
        emit_json(doc)
        return 1 if sent is not None and sent.rejected else 0
    what = f"{plural(export.traces, 'trace')}, {plural(export.spans, 'span')}"
    if args.output is not None:
        print(f"wrote {args.output} ({what})")
    if sent is not None:
        print(f"sent {what} to {sent.endpoint} in {plural(sent.requests, 'request')}"
              + (f"; it rejected {plural(sent.rejected, 'span')}: "
                 + "; ".join(sent.messages) if sent.rejected else ""))
    if export.placed:
        print(f"{plural(export.placed, 'event')} without a clock placed after the run's "
              "previous span (flagged crewbook.time_placed)")
    if export.left_out:
        print(f"left out {plural(len(export.left_out), 'run')} with no clock at all "
              f"({', '.join(export.left_out[:3])}{'…' if len(export.left_out) > 3 else ''}):"
              " --clockless-at TIME (or now) places them")
    return 1 if sent is not None and sent.rejected else 0


def _clockless_at(text: str | None) -> datetime | None:
    """``--clockless-at``: None, ``now`` (to the second), or an ISO-8601 time (UTC when
    it names no offset)."""
    from ..errors import UsageError

    if text is None:
        return None
    if text == "now":
        return datetime.now(UTC).replace(microsecond=0)
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--clockless-at takes an ISO-8601 time such as "
                         f"2026-01-05T12:00:00Z, or 'now'; not {text!r}") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _send(args: argparse.Namespace, df: pd.DataFrame,
          clockless_at: datetime | None) -> Any:
    from ..ledger.otlp_send import parse_headers, send_otlp

    return send_otlp(df, args.otlp_endpoint, parse_headers(args.header),
                     clockless_at=clockless_at, project=args.trace_project)


def _write_export(args: argparse.Namespace, df: pd.DataFrame,
                  clockless_at: datetime | None) -> Any:
    import json

    from ..core.atomic import write_output
    from ..ledger.otlp_export import otlp_export

    export = otlp_export(df, clockless_at=clockless_at, project=args.trace_project)
    if args.format == "protobuf":
        from ..ledger.otlp_send import to_protobuf

        data: str | bytes = to_protobuf(export.document)
    else:
        data = json.dumps(export.document, indent=1, sort_keys=True,
                          ensure_ascii=False) + "\n"
    write_output(args.output, data, inputs=[args.ledger])
    return export
