"""docs/crew.md agrees with the code: tools, stacks, bar names, limits, refusal codes."""

from __future__ import annotations

import re
from pathlib import Path

from crewbook.core.bar import DEFAULT_TIMEOUT
from crewbook.core.toolbox import TOOLS
from crewbook.crew import STACK_MODELS
from crewbook.crew.model import BAR_NAMES, MAX_PAYLOAD_BYTES, SCOPES

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "crew.md").read_text("utf-8")
ENGINE = "".join((ROOT / "toolkit" / "crewbook" / name).read_text("utf-8")
                 for name in ("crew/engine.py", "crew/refusals.py", "autonomous/engine.py"))


def test_every_tool_and_stack_model_is_documented() -> None:
    for tool in TOOLS:
        assert f"`{tool.name}`" in DOC
    for name in STACK_MODELS:
        assert f"`{name}`" in DOC
    for name in (*BAR_NAMES, *SCOPES):
        assert f"`{name}`" in DOC


def test_limits_are_the_documented_ones() -> None:
    assert f"{MAX_PAYLOAD_BYTES:,} bytes" in DOC
    assert f"{int(DEFAULT_TIMEOUT)} s by default" in DOC


def test_documented_refusal_codes_exist() -> None:
    codes = set(re.findall(r'code="([a-z_]+)"', ENGINE))
    for code in ("wrong_role", "unknown_role", "bad_verdict", "bad_report", "bar_unmeasured",
                 "bar_red", "stale", "no_test_command"):
        assert code in codes
        assert f"`{code}`" in DOC
