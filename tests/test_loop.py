"""The Loop protocol (`crewbook.core.loop`) with a toy engine: a counter that a `worker`
raises and a `judge` approves on an exact version, capped at three raises."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pytest

from crewbook.core.loop import (
    Act,
    Cap,
    JournalEntry,
    Loop,
    MemoryLedger,
    Status,
    Transition,
    Verdict,
    check_caps,
    require_role,
)
from crewbook.errors import LoopRefused


@dataclass
class Toy:
    value: int = 0
    version: int = 0
    approved: Verdict | None = None
    notes: list[str] | None = None
    done: bool = False


class ToyLoop(Loop[Toy, dict[str, Any]]):
    kind = "toy"
    cap = 3

    def caps(self, state: Toy) -> list[Cap]:
        return [Cap("raises", state.value, self.cap)]

    def contract(self) -> Act:
        s = self._state
        if s.done:
            return Act(self.kind, self.acts + 1, None, finished=True, finished_reason="shipped")
        role = "judge" if s.value and s.approved is None else "worker"
        return Act(self.kind, self.acts + 1, role, moves=("raise", "approve", "ship"),
                   details={"value": s.value})

    def status(self) -> Status:
        s = self._state
        return Status(self.kind, self.acts, None if s.done else "work", None, s.done,
                      "shipped" if s.done else None, counters={"value": s.value},
                      caps=tuple(self.caps(s)))

    def transition(self, state: Toy, report: dict[str, Any]) -> Transition[Toy]:
        move, role = report["move"], report["role"]
        check_caps(self.caps(state), move, allowed_at_cap=("approve", "ship"))
        if move == "raise":
            require_role(role, ["worker"], "raise")
            state.value += 1  # mutates: the base class hands a deep copy (copy_state)
            state.version += 1
            state.approved = None
            return Transition(state, [{"kind": "report", "role": role, "version": state.version}])
        if move == "approve":
            require_role(role, ["judge"], "give a verdict")
            verdict = Verdict(role, "approved", report.get("version", state.version))
            return Transition(replace(state, approved=verdict),
                              [{"kind": "verdict", "role": role, "verdict": "approved"}])
        if move == "ship":
            if state.approved is None or not state.approved.covers(state.version):
                raise LoopRefused("shipping needs an approval of this exact version",
                                  code="not_approved")
            return Transition(replace(state, done=True), [{"kind": "finish", "verdict": "shipped"}])
        raise LoopRefused(f"unknown move {move!r}", code="bad_report")


def fresh() -> ToyLoop:
    return ToyLoop(Toy())


def test_contract_is_pure_and_idempotent() -> None:
    loop = fresh()
    first, second = loop.contract(), loop.contract()
    assert first == second
    assert len(loop.ledger) == 0  # type: ignore[arg-type]
    assert loop.acts == 0


def test_accepted_report_advances_and_logs() -> None:
    loop = fresh()
    act = loop.report({"move": "raise", "role": "worker"})
    assert act.role == "judge"
    assert act.act == 2
    assert loop.acts == 1
    events = loop.ledger.events  # type: ignore[attr-defined]
    assert [e["kind"] for e in events] == ["report"]
    assert events[0]["loop"] == "toy"
    assert events[0]["seq"] == 0
    assert "ts" in events[0]


@pytest.mark.parametrize(("report", "code"), [
    ({"move": "approve", "role": "worker"}, "not_allowed"),
    ({"move": "ship", "role": "worker"}, "not_approved"),
    ({"move": "jump", "role": "worker"}, "bad_report"),
])
def test_refusal_changes_and_logs_nothing(report: dict[str, Any], code: str) -> None:
    loop = fresh()
    loop.report({"move": "raise", "role": "worker"})
    before = (loop.status(), loop.contract(), loop.state, list(loop.ledger.events))  # type: ignore[attr-defined]
    with pytest.raises(LoopRefused) as info:
        loop.report(report)
    assert info.value.code == code
    after = (loop.status(), loop.contract(), loop.state, list(loop.ledger.events))  # type: ignore[attr-defined]
    assert before == after


def test_engine_mutating_its_copy_does_not_leak() -> None:
    loop = fresh()
    state = loop.state
    state.value = 99  # the property is a copy
    assert loop.status().counters["value"] == 0


def test_caps_leave_only_the_allowed_moves() -> None:
    loop = fresh()
    for _ in range(3):
        loop.report({"move": "raise", "role": "worker"})
    assert loop.status().caps[0].reached
    with pytest.raises(LoopRefused, match="cap reached") as info:
        loop.report({"move": "raise", "role": "worker"})
    assert info.value.code == "cap_reached"
    loop.report({"move": "approve", "role": "judge"})
    loop.report({"move": "ship", "role": "judge"})
    assert loop.status().finished
    assert loop.status().finished_reason == "shipped"


def test_exact_version_rule() -> None:
    loop = fresh()
    loop.report({"move": "raise", "role": "worker"})
    loop.report({"move": "approve", "role": "judge", "version": 0})  # an older version
    with pytest.raises(LoopRefused) as info:
        loop.report({"move": "ship", "role": "judge"})
    assert info.value.code == "not_approved"
    assert Verdict("qa", "go", 3).covers(3)
    assert not Verdict("qa", "go", 3).covers(4)


def test_finished_loop_refuses_everything() -> None:
    loop = fresh()
    loop.report({"move": "raise", "role": "worker"})
    loop.report({"move": "approve", "role": "judge"})
    loop.report({"move": "ship", "role": "judge"})
    with pytest.raises(LoopRefused) as info:
        loop.report({"move": "raise", "role": "worker"})
    assert info.value.code == "finished"
    assert loop.contract().finished


def test_snapshot_restore_rewinds_and_logs_a_rewind() -> None:
    loop = fresh()
    loop.report({"move": "raise", "role": "worker"})
    snap = loop.snapshot()
    loop.report({"move": "approve", "role": "judge"})
    loop.report({"move": "ship", "role": "judge"})
    assert loop.status().finished
    act = loop.restore(snap)
    assert act == loop.contract()
    assert act.role == "judge"
    assert act.act == 2
    assert loop.acts == 1
    assert not loop.status().finished
    events = loop.ledger.events  # type: ignore[attr-defined]
    assert events[-1]["kind"] == "rewind"  # the history forks: a new run says where from
    assert events[-1]["payload"] == {"from_act": 3, "to_act": 1, "from_run": "memory",
                                     "copied": 1}
    old = [e for e in events if e["run"] == "memory"]
    new = [e for e in events if e["run"] == "memory~1"]
    assert len(old) == 3
    assert [e["kind"] for e in new] == [old[0]["kind"], "rewind"]
    assert [e["seq"] for e in old] == [0, 1, 2]
    assert [e["seq"] for e in new] == [0, 1]
    loop.report({"move": "approve", "role": "judge"})
    assert loop.ledger.events[-1]["run"] == "memory~1"  # type: ignore[attr-defined]
    snap.state.value = 42  # the snapshot the loop restored from is not shared
    assert loop.status().counters["value"] == 1


def test_snapshot_of_another_loop_is_refused() -> None:
    class Other(ToyLoop):
        kind = "other"

    with pytest.raises(LoopRefused) as info:
        fresh().restore(Other(Toy()).snapshot())
    assert info.value.code == "wrong_snapshot"


def test_run_and_clock_stamp_events() -> None:
    from datetime import UTC, datetime

    loop = ToyLoop(Toy(), run="r-1", clock=lambda: datetime(2025, 1, 1, tzinfo=UTC))
    loop.report({"move": "raise", "role": "worker"})
    event = loop.ledger.events[0]  # type: ignore[attr-defined]
    assert event["run"] == "r-1"
    assert event["ts"] == "2025-01-01T00:00:00+00:00"


def test_resume_with_acts() -> None:
    loop = ToyLoop(Toy(value=2, version=2), acts=5)
    assert loop.acts == 5
    assert loop.contract().act == 6


def test_value_objects() -> None:
    cap = Cap("rounds", 2, None)
    assert not cap.reached
    assert cap.left is None
    assert str(cap) == "rounds 2/∞"
    assert Cap("rounds", 3, 3).reached
    assert Cap("rounds", 1, 3).left == 2
    act = Act("toy", 1, "worker", journal=(JournalEntry("steering", "go"),))
    assert act.to_dict()["journal"] == [{"kind": "steering", "text": "go", "by": None, "act": None}]
    assert "worker" in repr(act)
    assert "<table>" in act._repr_html_()
    status = fresh().status()
    assert "raises 0/3" in repr(status)
    assert "raises" in status._repr_html_()
    assert Act("toy", 1, None, finished=True, finished_reason="x").to_dict()["finished"]
    require_role("qa", ["qa", "reviewer"], "judge")
    with pytest.raises(LoopRefused, match="only qa, reviewer"):
        require_role("developer", ["qa", "reviewer"], "judge")


def test_memory_ledger() -> None:
    ledger = MemoryLedger(run="r-1", loop="toy")
    stored = ledger.append({"kind": "note", "ts": "2025-01-01T00:00:00+00:00"})
    assert stored == {"kind": "note", "seq": 0, "run": "r-1", "loop": "toy",
                      "ts": "2025-01-01T00:00:00+00:00"}
    assert ledger.append({"kind": "note", "run": "other"})["seq"] == 0, "seq is per run"
    assert ledger.append({"kind": "note"})["seq"] == 1
    assert len(ledger) == 3
    assert list(ledger.frame()["kind"]) == ["note"] * 3
    assert repr(ledger) == "<MemoryLedger 3 events>"


def test_memory_ledger_frame_is_the_reader_frame() -> None:
    """Same columns and dtypes as `read_ledger` (Int64, category, datetime64[ns, UTC])."""
    from crewbook.ledger.reader import empty_frame

    loop = fresh()
    loop.report({"move": "raise", "role": "worker"})
    loop.ledger.append({"kind": "note", "attempt": 2})  # no version: <NA>, not NaN
    frame = loop.ledger.frame()  # type: ignore[attr-defined]
    kinds = {c: str(t) if str(t) != "category" else "category" for c, t in frame.dtypes.items()}
    empty = empty_frame().dtypes
    assert kinds == {c: str(t) if str(t) != "category" else "category" for c, t in empty.items()}
    assert str(frame["ts"].dtype) == "datetime64[ns, UTC]"
    assert frame["version"].tolist()[0] == 1
    assert frame["version"].isna().tolist() == [False, True]
    assert frame["attempt"].tolist()[1] == 2


def test_memory_ledger_frame_refuses_what_a_file_would() -> None:
    from crewbook.errors import LedgerError

    named = MemoryLedger()
    named.append({"kind": "note", "loop": "toy", "version": "v2"})  # not a ledger event
    with pytest.raises(LedgerError, match="not valid ledger events") as info:
        named.frame()
    assert info.value.problems[0].key == "version"


def test_a_loop_without_a_drawing_still_displays() -> None:
    loop = fresh()
    bundle = loop._repr_mimebundle_()
    assert "text/plain" in bundle
    assert "text/html" in bundle
    assert "image/svg+xml" not in bundle
    from crewbook.errors import UsageError

    with pytest.raises(UsageError, match="has no drawing"):
        loop.dot()


def test_engines_are_drawable_through_the_loop_base() -> None:
    """The pipeline and delivery engines draw through `Loop` (one `graph_model()` each)."""
    from pathlib import Path

    from crewbook.delivery import CoordinatorLoop, Task
    from crewbook.pipeline import PipelineLoop, load_pipeline

    seed = Path(__file__).parent / "data" / "pipelines" / "role_pipeline.toml"
    for loop in (load_pipeline(seed).loop(), CoordinatorLoop(Task(description="x"))):
        for method in ("dot", "mermaid", "graph", "svg", "save"):
            assert getattr(type(loop), method) is getattr(Loop, method)
        assert loop.dot().startswith("digraph")
        assert "flowchart" in loop.mermaid()
        assert "text/html" in loop._repr_mimebundle_()
    assert isinstance(load_pipeline(seed).loop(), PipelineLoop)
