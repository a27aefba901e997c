"""docs/simulate.md agrees with the code: its policy file parses, its defaults are true."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from crewbook.delivery.behaviour import CoordinatorBehaviour
from crewbook.simulate.engine import MAX_ACTS, MAX_REFUSALS
from crewbook.simulate.executors import INLINE_RUNS
from crewbook.simulate.model import RandomPolicyFile, parse_policy
from crewbook.sources import SourceDoc

DOC = (Path(__file__).resolve().parents[2] / "docs" / "simulate.md").read_text("utf-8")


def test_the_policy_file_example_parses() -> None:
    block = re.search(r"```yaml\n(.*?)```", DOC, re.S)
    assert block is not None
    spec = parse_policy(SourceDoc(Path("policy.yaml"), yaml.safe_load(block.group(1))))
    assert isinstance(spec, RandomPolicyFile)
    assert spec.roles["qa"].fail == 0.3
    assert spec.section("coordinator", CoordinatorBehaviour).finalise_early == 0.05


def test_the_stated_defaults_are_the_codes() -> None:
    assert f"`max_refusals` ({MAX_REFUSALS})" in DOC
    assert f"`max_acts`\n({MAX_ACTS})" in DOC or f"`max_acts` ({MAX_ACTS})" in DOC
    assert f"up\nto {INLINE_RUNS:,} runs" in DOC or f"up to {INLINE_RUNS:,} runs" in DOC
