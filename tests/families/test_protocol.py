"""The protocol every loop family keeps (DESIGN rule 2), run over every ledger kind of
every registered family (`conftest.SAMPLES`): contracts are pure, refusals change and
log nothing, snapshots restore, the happy path finishes, replaying a ledger reproduces
the run, conformance accepts the engine's own runs, the Stepper's form round-trips, and
random policies never get a loop stuck."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from crewbook.core.family import CodecBase, Declined
from crewbook.errors import LoopRefused
from crewbook.families import AnyFamily, family_of
from crewbook.ledger import check_conformance
from crewbook.simulate import simulate

from .conftest import SAMPLES

#: More acts than any sample's happy path takes.
MAX_ACTS = 60


def family_of_loop(loop: Any) -> AnyFamily:
    found = family_of(loop)
    assert found is not None, f"no family for {loop.kind}"
    return found


def events(loop: Any) -> list[dict[str, Any]]:
    return list(loop.ledger.events)


def happy_run(loop: Any) -> list[Any]:
    """Step `loop` along its family's happy path to the end; the reports given."""
    players = family_of_loop(loop).players
    assert not isinstance(players, Declined)
    given: list[Any] = []
    act = loop.contract()
    while not act.finished:
        assert len(given) < MAX_ACTS, f"the happy path of {loop.kind} does not finish"
        report = players.happy(loop, act)
        assert report is not None, f"no happy report for {act!r}"
        given.append(report)
        act = loop.report(report)
    return given


def test_the_family_of_each_kind_is_the_registered_one(kind: str,
                                                       factory: Callable[[], Any]) -> None:
    loop = factory()
    assert loop.kind == kind
    assert family_of_loop(loop).name == SAMPLES[kind][0]


def test_contracts_are_pure(factory: Callable[[], Any]) -> None:
    loop = factory()
    for _ in range(3):
        before = len(loop.ledger)
        first, second = loop.contract(), loop.contract()
        assert first == second
        assert len(loop.ledger) == before
        if first.finished:
            break
        loop.report(family_of_loop(loop).players.happy(loop, first))  # type: ignore[union-attr]


def test_refusals_change_and_log_nothing(factory: Callable[[], Any]) -> None:
    loop = factory()
    loop.report(family_of_loop(loop).players.happy(loop, loop.contract()))  # type: ignore[union-attr]
    before, act, status = len(loop.ledger), loop.contract(), loop.status()
    with pytest.raises(LoopRefused):
        loop.report(object())  # no family takes a bare object as a report
    assert (len(loop.ledger), loop.contract(), loop.status()) == (before, act, status)


def test_snapshot_and_restore_round_trip(factory: Callable[[], Any]) -> None:
    loop = factory()
    players = family_of_loop(loop).players
    loop.report(players.happy(loop, loop.contract()))  # type: ignore[union-attr]
    snap, act, status = loop.snapshot(), loop.contract(), loop.status()
    loop.report(players.happy(loop, act))  # type: ignore[union-attr]
    assert loop.contract() != act
    assert loop.restore(snap) == act
    assert loop.status() == status
    assert events(loop)[-1]["kind"] == "rewind"


def test_the_happy_path_finishes(factory: Callable[[], Any]) -> None:
    loop = factory()
    happy_run(loop)
    assert loop.is_finished()
    assert loop.status().finished_reason


def test_replaying_the_ledger_reproduces_the_run(factory: Callable[[], Any]) -> None:
    loop = factory()
    happy_run(loop)
    codec = family_of_loop(loop).codec
    assert not isinstance(codec, Declined)
    again = factory()
    reports, _ = codec.from_events(events(loop), again)
    for report in reports:
        again.report(report)
    assert again.status() == loop.status()
    assert [e["kind"] for e in events(again)] == [e["kind"] for e in events(loop)]


def test_the_codec_replays_through_the_one_skeleton(factory: Callable[[], Any]) -> None:
    """A family says only what report each event stands for (`report_of`): the walk over
    a run's events, and the times kept with the reports, are `CodecBase.from_events`."""
    codec = family_of_loop(factory()).codec
    assert isinstance(codec, CodecBase)
    assert type(codec).from_events is CodecBase.from_events
    assert type(codec).report_of is not CodecBase.report_of


def test_the_codec_round_trips_every_report(factory: Callable[[], Any]) -> None:
    loop = factory()
    codec = family_of_loop(loop).codec
    assert not isinstance(codec, Declined)
    for report in happy_run(loop):
        data = report if isinstance(report, dict) else codec.serialize(report)
        assert codec.serialize(codec.parse(data)) == codec.serialize(codec.parse(
            codec.serialize(codec.parse(data))))
        if not isinstance(report, dict):
            assert codec.parse(data) == report


def test_conformance_accepts_the_engines_own_runs(factory: Callable[[], Any]) -> None:
    loop = factory()
    happy_run(loop)
    problems = check_conformance(loop.ledger.frame())
    assert problems.empty, problems.to_dict("records")


def test_conformance_rules_are_given(kind: str, factory: Callable[[], Any]) -> None:
    rules = family_of_loop(factory()).rules
    assert not isinstance(rules, Declined)
    assert kind in {r.loop for r in rules()}


def test_the_form_round_trips(factory: Callable[[], Any]) -> None:
    """Each happy report shown in the Stepper's form builds back to the same report."""
    loop = factory()
    found = family_of_loop(loop)
    form, codec = found.form, found.codec
    assert not isinstance(form, Declined)
    assert not isinstance(codec, Declined)
    act = loop.contract()
    while not act.finished:
        report = found.players.happy(loop, act)  # type: ignore[union-attr]
        built = form.build(loop, act, form.to_draft(loop, act, report))
        assert codec.serialize(codec.parse(built) if isinstance(built, dict) else built) == \
            codec.serialize(codec.parse(report) if isinstance(report, dict) else report)
        act = loop.report(built)
    assert loop.is_finished()


def test_the_form_proposes_what_the_loop_accepts(kind: str,
                                                factory: Callable[[], Any]) -> None:
    """The first proposal of the form is accepted (the autonomous recette, which runs a
    real command, is not reached at the first act)."""
    loop = factory()
    form = family_of_loop(loop).form
    assert not isinstance(form, Declined)
    act = loop.contract()
    assert loop.report(form.build(loop, act, form.propose(loop, act))).act == act.act + 1


def test_fifty_random_seeds_never_get_stuck(factory: Callable[[], Any]) -> None:
    players = family_of_loop(factory()).players
    assert not isinstance(players, Declined)
    roles = players.roles(factory())
    outcomes = simulate(factory, {"roles": {r: {"fail": 0.2} for r in roles}}, n=50, seed=7)
    assert len(outcomes) == 50
    reasons = set(outcomes["finished_reason"].astype(str))
    assert "stuck" not in reasons, reasons
    assert "unfinished" not in reasons, reasons


def test_one_acts_frame_with_the_same_columns_for_every_family(
        factory: Callable[[], Any]) -> None:
    from crewbook.core.frames import TRAIL_COLUMNS

    loop = factory()
    happy_run(loop)
    frame = loop.trail_frame()
    assert tuple(frame.columns) == TRAIL_COLUMNS
    assert [str(t) for t in frame.dtypes] == ["Int64", "datetime64[ns, UTC]", "string",
                                              "string", "string", "string", "Int64", "string"]
    assert len(frame) >= 2
    assert frame["act"].is_monotonic_increasing
    assert frame["role"].notna().all()
    assert frame["ts"].notna().all()


def test_a_store_keeps_a_run_between_processes(kind: str, factory: Callable[[], Any],
                                               tmp_path: Any) -> None:
    """Families that keep runs (`crewbook step FAMILY`) give the same loop back."""
    loop = factory()
    store = family_of_loop(loop).store
    if isinstance(store, Declined):
        assert str(store)  # declined with a reason
        return
    source = store.sample_source(tmp_path, kind)
    if isinstance(source, Declined):
        pytest.skip(str(source))
    first = store.load(tmp_path, source)
    players = family_of_loop(first).players
    first.report(players.happy(first, first.contract()))  # type: ignore[union-attr]
    store.save(first, tmp_path)
    again = store.load(tmp_path)
    assert again.status() == first.status()
    assert again.contract() == first.contract()
