"""The names of the sources `import_runs` reads, and what each is (no imports: the
command line builds its ``--from`` choices from here without loading pandas or pydantic)."""

from __future__ import annotations

from typing import Final

#: Every source, in the order `detect` tries them.
SOURCES: Final[tuple[str, ...]] = (
    "crewbook", "speckit", "otlp", "openhands", "swe-agent", "aider", "claude-code",
    "codex")
#: What each source is, for messages and ``--help``.
DESCRIPTIONS: Final[dict[str, str]] = {
    "crewbook": "a crewbook ledger (JSON Lines with \"v\": 1)",
    "speckit": "a spec-kit workflow run folder (log.jsonl + state.json)",
    "otlp": "OTLP JSON trace data (\"resourceSpans\")",
    "openhands": "an OpenHands event list (JSON list of events with id, timestamp, "
                 "source, action/observation)",
    "swe-agent": "a SWE-agent trajectory (.traj: JSON with 'trajectory' and 'info')",
    "aider": "an aider chat history ('# aider chat started at ...')",
    "claude-code": "a Claude Code session transcript (JSON Lines with sessionId and type)",
    "codex": "a Codex CLI rollout (JSON Lines: session_meta, response_item, event_msg)",
}

__all__ = ["DESCRIPTIONS", "SOURCES"]
