"""Run ledgers: one event format, a crash-safe writer, a fast reader, run-history analyses.

``import_runs`` reads the logs of other agent tools (OpenHands, SWE-agent, aider, OTLP
GenAI spans, spec-kit) into the same frame; ``to_otlp``/``write_otlp`` write runs out as
OpenTelemetry traces (GenAI and OpenInference spans) and ``send_otlp`` posts them to an
OTLP/HTTP endpoint (Phoenix, Langfuse, a collector).

``Ledger`` appends events (one JSON line each, under a file lock); ``read_ledger``
loads files, folders of runs and spec-kit runs into one typed DataFrame; the analysis
functions turn that frame into per-run outcomes, usage per role and stage, rework,
verdict funnels and timelines; ``plot_timeline`` and ``plot_rounds`` draw them;
``check_conformance`` checks each run against the rules of the loop that wrote it.

Names are loaded on first use (PEP 562), so ``import crewbook.ledger`` costs nothing
and ``from crewbook.ledger import Ledger`` does not load pandas or pyarrow; matplotlib
is imported inside the plot functions only.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .analyses import rework, run_outcomes, timeline, usage_by_role, verdict_funnel
    from .conformance import LoopRules, check_conformance, register_loop_rules
    from .events import KINDS, REQUIRED_BY_KIND, LedgerEvent
    from .importers import import_runs
    from .otlp import to_otlp, write_otlp
    from .otlp_send import send_otlp
    from .parquet import PARQUET_SCHEMA, LedgerFolder, parquet_schema, write_parquet
    from .plots import plot_rounds, plot_timeline
    from .reader import (
        LedgerWarning,
        frame_events,
        import_speckit_runs,
        read_ledger,
        to_parquet,
        validate_ledger,
    )
    from .speckit import speckit_events
    from .writer import Ledger

#: Public name → the module that defines it.
_WHERE = {
    "KINDS": "events", "REQUIRED_BY_KIND": "events", "LedgerEvent": "events",
    "Ledger": "writer",
    "LedgerWarning": "reader", "read_ledger": "reader", "to_parquet": "reader",
    "frame_events": "reader",
    "validate_ledger": "reader",
    "import_speckit_runs": "reader", "speckit_events": "speckit",
    "import_runs": "importers", "to_otlp": "otlp", "write_otlp": "otlp",
    "send_otlp": "otlp_send",
    "rework": "analyses", "run_outcomes": "analyses", "timeline": "analyses",
    "usage_by_role": "analyses", "verdict_funnel": "analyses",
    "plot_rounds": "plots", "plot_timeline": "plots",
    "LoopRules": "conformance", "check_conformance": "conformance",
    "register_loop_rules": "conformance",
    "PARQUET_SCHEMA": "parquet", "LedgerFolder": "parquet", "parquet_schema": "parquet",
    "write_parquet": "parquet",
}

__all__ = [
    "KINDS",
    "PARQUET_SCHEMA",
    "REQUIRED_BY_KIND",
    "Ledger",
    "LedgerEvent",
    "LedgerFolder",
    "LedgerWarning",
    "LoopRules",
    "check_conformance",
    "frame_events",
    "import_runs",
    "import_speckit_runs",
    "parquet_schema",
    "plot_rounds",
    "plot_timeline",
    "read_ledger",
    "register_loop_rules",
    "rework",
    "run_outcomes",
    "send_otlp",
    "speckit_events",
    "timeline",
    "to_otlp",
    "to_parquet",
    "usage_by_role",
    "validate_ledger",
    "verdict_funnel",
    "write_otlp",
    "write_parquet",
]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
