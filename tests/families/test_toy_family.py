"""A family is its folder plus one registry line: the toy family of `toy.py`, which
crewbook's code never names, is added through `crewbook.families.register` alone and
then works with every front end: ``crewbook step``, its own command group in
``crewbook``, the Stepper, simulate, routing and ledger conformance (the protocol suite
runs over it too: `conftest.SAMPLES`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from crewbook.commands import main
from crewbook.core.sinks import MemoryLedger
from crewbook.errors import NotFoundError, UsageError
from crewbook.families import (
    CommandGroup,
    command_groups,
    family,
    family_of,
    register,
    unregister,
)

from . import toy
from .conftest import register_toy, toy_registered


@pytest.fixture(autouse=True)
def registered() -> Iterator[None]:
    with toy_registered():
        yield


def step(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, Any]:
    code = main(["step", *(str(a) for a in argv), "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else None


def report_file(folder: Path, name: str, data: Any) -> Path:
    path = folder / f"{name}.json"
    path.write_text(json.dumps(data), "utf-8")
    return path


def test_the_registry_finds_it_by_name_and_kind() -> None:
    assert family(toy.NAME).kinds == (toy.KIND,)
    assert family_of(toy.ToyLoop()) is family(toy.NAME)


def test_registering_a_taken_name_is_refused() -> None:
    with pytest.raises(UsageError, match="registered already"):
        register(toy.NAME, toy.DOTTED)


def test_a_registry_line_naming_something_else_is_refused() -> None:
    register("not-a-family", f"{toy.__name__}:NAME")
    try:
        with pytest.raises(UsageError, match="is a str, not a LoopFamily"):
            family("not-a-family")
    finally:
        unregister("not-a-family")


def test_it_is_gone_once_unregistered() -> None:
    unregister(toy.NAME)
    try:
        assert family_of(toy.ToyLoop()) is None
        with pytest.raises(NotFoundError, match="no loop family 'toy'"):
            family(toy.NAME)
    finally:
        register_toy()


def test_the_step_command_steps_it_across_calls(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    code, shown = step(capsys, toy.NAME, "--run", run)
    assert code == 0
    assert (shown["contract"]["role"], shown["contract"]["moves"]) == ("writer", ["submit"])
    assert not run.exists()  # showing the contract writes nothing
    code, shown = step(capsys, toy.NAME, "--run", run, "--report",
                       report_file(tmp_path, "submit", {"move": "submit"}))
    assert (code, shown["accepted"], shown["contract"]["role"]) == (0, True, "checker")
    before = (run / toy.STATE_FILE).read_bytes()
    code, shown = step(capsys, toy.NAME, "--run", run, "--report",
                       report_file(tmp_path, "bad", {"move": "submit"}))
    assert (code, shown["refused"], shown["code"]) == (1, True, "bad_move")
    assert (run / toy.STATE_FILE).read_bytes() == before  # a refusal changes nothing
    code, shown = step(capsys, toy.NAME, "--run", run, "--report",
                       report_file(tmp_path, "pass", {"move": "pass"}))
    assert code == 0
    assert shown["status"]["finished_reason"] == "approved"


def test_the_stepper_drives_it_with_its_form() -> None:
    pytest.importorskip("ipywidgets")
    from crewbook.widgets import Stepper

    form = toy.FAMILY.form
    assert isinstance(form, toy.ToyForm)
    form.applied.clear()
    loop = toy.ToyLoop()
    ledger = cast(MemoryLedger, loop.ledger)
    stepper = Stepper(loop)
    assert stepper.read_form().fields == {"note": "proposed"}
    assert stepper.run(10) == 2
    assert loop.status().finished_reason == "approved"
    assert [e["kind"] for e in ledger.events] == ["report", "verdict", "finish"]
    assert form.applied == [1, 2]  # the form's own apply, found on the form spec


def test_simulate_plays_it_with_a_random_policy() -> None:
    from crewbook.simulate import simulate

    outcomes = simulate(toy.ToyLoop, {"roles": {"checker": {"fail": 1.0}}}, n=3, seed=1)
    assert list(outcomes["finished_reason"].astype(str)) == ["rounds_exhausted"] * 3
    outcomes = simulate(toy.ToyLoop, {"roles": {"checker": {"fail": 0.0}}}, n=3, seed=1)
    assert list(outcomes["finished_reason"].astype(str)) == ["approved"] * 3


def _lenient_of(spec: Any) -> bool:
    """In a worker process: the toy section of a pickled random policy."""
    return bool(spec.section("toy", toy.ToyBehaviour).lenient)


def test_its_policy_section_is_read_strictly_and_played(tmp_path: Path) -> None:
    """Its registry line's policy section is a key of the random policy file (strict,
    with did-you-mean at the file's line), its random player reads it, and a policy
    holding it pickles into a fresh worker process, where the toy is not registered."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from crewbook.errors import SimulationError
    from crewbook.simulate import load_policy, simulate
    from crewbook.simulate.model import RandomPolicyFile

    assert "toy" not in RandomPolicyFile.model_fields  # the shared model names no family
    policy = {"roles": {"checker": {"fail": 1.0}}, "toy": {"lenient": True}}
    outcomes = simulate(toy.ToyLoop, policy, n=2, seed=1)
    assert list(outcomes["finished_reason"].astype(str)) == ["approved"] * 2
    path = tmp_path / "policy.yaml"
    path.write_text("roles: {}\ntoy:\n  lenent: true\n", encoding="utf-8")
    with pytest.raises(SimulationError) as caught:
        load_policy(path)
    assert "policy.yaml:3" in str(caught.value)
    assert "toy.lenent: unknown key 'lenent'; did you mean 'lenient'?" in str(caught.value)
    path.write_text("toy: {lenient: true}\n", encoding="utf-8")
    loaded = load_policy(path)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        assert pool.submit(_lenient_of, loaded.spec).result() is True  # type: ignore[attr-defined]
    unregister(toy.NAME)
    try:
        with pytest.raises(SimulationError, match="unknown key 'toy'"):
            load_policy(path)  # without its registry line, nothing knows the key
    finally:
        register_toy()


def test_a_policy_section_taken_by_another_family_or_shared_is_refused() -> None:
    from crewbook.simulate import RandomPolicy

    with pytest.raises(UsageError, match="the policy section 'toy' of family 'clash' is "
                       "declared by family 'toy' already"):
        register("clash", toy.DOTTED, policy=toy.POLICY)
    with pytest.raises(NotFoundError):
        family("clash")  # nothing was registered
    register("clash", toy.DOTTED, policy=(("roles", f"{toy.__name__}:ToyBehaviour"),))
    try:
        with pytest.raises(UsageError, match=r"policy section 'roles' \(.*\) takes a key "
                           "every family shares"):
            RandomPolicy({})
    finally:
        unregister("clash")


def test_simulate_asks_its_fast_simulator() -> None:
    """An optional part declared on the family is found through the registry."""
    from crewbook.simulate import simulate

    fast = toy.FAMILY.fast_simulator
    assert isinstance(fast, toy.ToyFastSimulator)
    fast.asked.clear()
    outcomes = simulate(toy.ToyLoop, {"roles": {"checker": {"fail": 0.0}}}, n=2, seed=1)
    assert len(outcomes) == 2
    assert fast.asked
    assert set(fast.asked) == {toy.KIND}


def test_simulate_finds_its_engine_and_names_its_sources(tmp_path: Path) -> None:
    from crewbook.errors import SimulationError
    from crewbook.simulate import simulate

    outcomes = simulate(tmp_path / "x.toy", {"roles": {"checker": {"fail": 0.0}}}, n=2, seed=1)
    assert list(outcomes["finished_reason"].astype(str)) == ["approved"] * 2
    with pytest.raises(SimulationError, match=r"a toy file \(\.toy\)"):
        simulate(tmp_path / "x.txt", {}, n=1)


def test_conformance_applies_its_rules() -> None:
    """The family's rules are found through the registry: a verdict from the writer is
    flagged, which the generic rules alone would let pass."""
    from crewbook.ledger import check_conformance

    loop = toy.ToyLoop()
    loop.report(toy.ToyReport("submit"))
    loop.report(toy.ToyReport("pass"))
    frame = cast(MemoryLedger, loop.ledger).frame()
    assert check_conformance(frame).empty
    frame.loc[frame["kind"] == "verdict", "role"] = "writer"
    problems = check_conformance(frame)
    assert list(problems["code"].astype(str)) == ["verdict_not_allowed"]


def test_its_command_group_is_in_the_command_line(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Its registry line's command group is listed by ``crewbook --help`` and runs the
    family's own module; gone with the family."""
    with pytest.raises(SystemExit) as shown:
        main(["--help"])
    assert shown.value.code == 0
    listed = capsys.readouterr().out
    assert f"{toy.NAME} (toy-loop)" in listed
    assert toy.COMMAND.help in listed
    run = tmp_path / "run"
    step(capsys, toy.NAME, "--run", run, "--report",
         report_file(tmp_path, "submit", {"move": "submit"}))
    for name in (toy.NAME, "toy-loop"):
        assert main([name, "show", "--run", str(run)]) == 0
        shown_state = json.loads(capsys.readouterr().out)
        assert (shown_state["at"], shown_state["acts"], shown_state["role"]) == (
            "check", 1, "checker")
    unregister(toy.NAME)
    try:
        with pytest.raises(SystemExit) as gone:
            main([toy.NAME, "show", "--run", str(run)])
        assert gone.value.code == 2
        assert "invalid choice: 'toy'" in capsys.readouterr().err
    finally:
        register_toy()


#: A name and an alias of crewbook's own families' command groups (from the registry).
TAKEN = [next(g.name for g in command_groups().values()),
         next(a for g in command_groups().values() for a in g.aliases)]


@pytest.mark.parametrize("name", TAKEN)
def test_a_command_group_taken_by_another_family_is_refused(name: str) -> None:
    """A group named as another family's group, or one of its aliases, is refused."""
    group = CommandGroup(name, "a clash", toy.__name__)
    with pytest.raises(UsageError, match=f"the command group '{name}' of family 'clash'"):
        register("clash", toy.DOTTED, command=group)
    with pytest.raises(NotFoundError):
        family("clash")  # nothing was registered


def test_routing_routes_its_roles(tour: Path) -> None:
    """Its registry line's roles are routed by the routing profile: roles crewbook's
    defaults do not name get an unclassified task's tier and effort; the roles frame
    has a row and a loop category for each."""
    from crewbook.errors import RoutingError
    from crewbook.routing import LOOP_ROLES, provider_profile_show, role_route

    assert LOOP_ROLES[toy.NAME] == ("writer", "checker")
    profile = provider_profile_show(tour)
    unclassified = profile.task_default("unclassified").pair
    route = role_route("checker", toy.NAME, tour)
    assert (route.loop, route.role) == (toy.NAME, "checker")
    assert (route.tier, route.effort) == (unclassified.tier, unclassified.effort)
    frame = profile.roles_frame()
    rows = frame[frame["loop"] == toy.NAME]
    assert list(rows["role"]) == ["writer", "checker"]
    assert toy.NAME in frame["loop"].cat.categories
    with pytest.raises(RoutingError, match="no role 'analyst' in the toy loop"):
        role_route("analyst", toy.NAME, tour)


def test_a_profile_gives_its_roles_defaults(tour: Path) -> None:
    """A profile's ``roles`` has a section for its routing loop, from its registry line
    alone: accepted and routed; an unknown role there, or its section once it is
    unregistered, is the profile's located error with a did-you-mean."""
    from crewbook.errors import RoutingError
    from crewbook.families import default_routing_loop, routing_roles
    from crewbook.routing import role_route

    profile = tour / "_codev" / "routing" / "profile.yaml"
    profile.parent.mkdir(parents=True, exist_ok=True)
    profile.write_text("roles:\n  toy:\n    checker: {tier: deep, effort: high}\n",
                       encoding="utf-8")
    route = role_route("checker", toy.NAME, tour)
    assert (route.tier, route.effort, route.source) == ("deep", "high", "project")
    profile.write_text("roles:\n  toy:\n    chekcer: {tier: deep, effort: high}\n",
                       encoding="utf-8")
    with pytest.raises(RoutingError) as caught:
        role_route("checker", toy.NAME, tour)
    assert "profile.yaml:3" in str(caught.value)
    assert "unknown key 'chekcer'; did you mean 'checker'?" in str(caught.value)
    profile.write_text("roles:\n  toy:\n    checker: {tier: deep, effort: high}\n",
                       encoding="utf-8")
    unregister(toy.NAME)
    loop = default_routing_loop()
    try:
        with pytest.raises(RoutingError, match="unknown key 'toy'"):
            role_route(routing_roles()[loop][0], loop, tour)
    finally:
        register_toy()


def test_a_family_ships_its_roles_defaults_in_its_folder(tour: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """A family's own ``roles.yaml``, beside its modules, is the last layer of its roles'
    routes (shared code names no family's roles); a wrong key there is a located error."""
    from crewbook.errors import RoutingError
    from crewbook.routing import role_route

    for name, text in (("goodroles", "checker: {tier: light, effort: low}\n"),
                       ("badroles", "checker: {tier: light, effort: low}\n"
                                    "chekcer: {tier: deep, effort: low}\n")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("", encoding="utf-8")
        (tmp_path / name / "roles.yaml").write_text(text, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    register("goodroles", "goodroles.family:FAMILY", roles=("checker",))
    try:
        route = role_route("checker", "goodroles", tour)
        assert (route.tier, route.effort, route.source) == ("light", "low", "built-in")
        assert route.where == "<built-in>/goodroles/roles.yaml"
    finally:
        unregister("goodroles")
    register("badroles", "badroles.family:FAMILY", roles=("checker",))
    try:
        with pytest.raises(RoutingError) as caught:
            role_route("checker", "badroles", tour)
        assert "<built-in>/badroles/roles.yaml:2" in str(caught.value)
        assert "did you mean 'checker'?" in str(caught.value)
    finally:
        unregister("badroles")


def test_a_generated_profile_leaves_out_its_empty_roles_section() -> None:
    """crewbook's defaults name none of its roles: a profile generated from a preset
    has no empty ``toy:`` section, and every default crewbook's defaults do name."""
    from crewbook.routing.presets import get_preset
    from crewbook.routing.profiles import profile_data

    roles = profile_data(get_preset("claude"))["roles"]
    assert toy.NAME not in roles
    assert roles
    assert all(roles.values())
