"""The registry of loop families: family name → its `Entry` (the dotted path of its
``FAMILY``, and what shared code needs to know before importing it).

Front ends (`crewbook.widgets`, `crewbook.simulate`, `crewbook step FAMILY`), the
command line, routing and the ledger's conformance rules ask here instead of importing
a family package or naming one. Nothing registers at import time and nothing is
imported until a family is asked for, so ``import crewbook`` and ``crewbook --help``
stay light: an entry holds only strings (the family's own command group is a dotted
module path, imported when the parser is built). Adding a family is its folder plus one
line below (or a `register` call, for a family that lives outside crewbook).

Family names and the ledger kinds (``loop`` values) of their engines:

- ``pipeline``: ``pipeline`` (a role pipeline of stages, SPEC B);
- ``delivery``: ``standard`` and ``coordinator`` (delivery roles, SPEC C);
- ``crew``: ``crew`` (the crew loop, SPEC D1–D5);
- ``autonomous``: ``autonomous`` (the autonomous loop, SPEC D6).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, NamedTuple, TypeAlias

from .errors import NotFoundError, UsageError, did_you_mean

if TYPE_CHECKING:
    from .core.family import LoopFamily

    #: A registered family, whatever its loops' state and report types.
    AnyFamily: TypeAlias = LoopFamily[Any, Any]

__all__ = ["FAMILIES", "CommandGroup", "Entry", "command_groups", "default_routing_loop",
           "families", "family", "family_of", "family_of_kind", "policy_sections", "register",
           "routing_roles", "tool_modules", "unregister"]


class CommandGroup(NamedTuple):
    """A family's own ``crewbook NAME ...`` command group: its name, aliases and help
    (what ``crewbook --help`` lists without importing anything), and `module`, the dotted
    path of the module whose ``build(parser, common)`` adds its sub-commands (imported
    when the parser is built; `common` is the parent parser of the shared options)."""

    name: str
    help: str
    module: str
    description: str | None = None
    aliases: tuple[str, ...] = ()


class Entry(NamedTuple):
    """One registry line: `family` is ``"module:attribute"`` of the `LoopFamily`;
    `command`, the family's own command group (None: it is stepped by ``crewbook step``
    alone); `roles`, the roles the routing profile gives a default route, its routing
    loop being the family's name (empty: the family is not routed by role);
    `default_routing`, whether it is the loop a role is routed on when none is named (at
    most one family says so); `tools`, the dotted path of the module whose ``TOOLS`` are
    the family's MCP tools (`crewbook.core.toolbox` gathers them; None: it offers none);
    `policy`, the sections of a random ``policy.yaml`` the family's simulated players
    read, as (top-level key, ``"module:Model"`` of a `crewbook.models.FileModel`) pairs
    (`crewbook.simulate.model.policy_model`). Named tuples, not dataclasses: the command
    line reads the registry at start-up, and a named tuple's class is made ~8x faster."""

    family: str
    command: CommandGroup | None = None
    roles: tuple[str, ...] = ()
    default_routing: bool = False
    tools: str | None = None
    policy: tuple[tuple[str, str], ...] = ()


#: Family name → its registry line.
FAMILIES: Final[dict[str, Entry]] = {
    "pipeline": Entry("crewbook.pipeline.family:FAMILY"),
    "delivery": Entry("crewbook.delivery.family:FAMILY", roles=(
        "architect", "developer", "qa", "reviewer", "web-tester", "explorer",
        "dependency-analyser"), policy=(
        ("coordinator", "crewbook.delivery.behaviour:CoordinatorBehaviour"),)),
    "crew": Entry("crewbook.crew.family:FAMILY", CommandGroup(
        "crew", "the crew loop: analyst, developer, qa (D1-D5)", "crewbook.commands.crew",
        "The crew loop on the project's changes (D1-D5)."),
        roles=("analyst", "developer", "qa"), default_routing=True,
        tools="crewbook.crew.tools"),
    "autonomous": Entry("crewbook.autonomous.family:FAMILY", CommandGroup(
        "autonomous", "the autonomous loop: plan → implementation → recette → delivery "
        "(D6); `loop` is its old name", "crewbook.commands.autonomous",
        "The autonomous build loop (D6).", aliases=("loop",)),
        tools="crewbook.autonomous.tools"),
}

_LOADED: dict[str, AnyFamily] = {}
_BY_KIND: dict[str, AnyFamily | None] = {}
#: `routing_roles`, worked out once per registry change (routing asks on every route).
_ROUTED: dict[str, tuple[str, ...]] = {}


def register(name: str, dotted: str, *, command: CommandGroup | None = None,
             roles: tuple[str, ...] = (), tools: str | None = None,
             policy: tuple[tuple[str, str], ...] = ()) -> None:
    """Add family `name` at ``"module:attribute"`` (a plug-in, or a test's toy family),
    with its own command group, routing roles, MCP tool module and policy sections if it
    has them (`Entry`); it is imported when first asked for. `UsageError` when the name
    is taken, when its command group takes the name of another family's group, or when a
    policy section takes another family's section (one taking a key every family shares
    is refused when a policy is read)."""
    if name in FAMILIES:
        raise UsageError(f"a loop family {name!r} is registered already "
                         f"({FAMILIES[name].family}); pick another name, or unregister it "
                         "first")
    if command is not None:
        taken = {n: f for f, group in command_groups().items()
                 for n in (group.name, *group.aliases)}
        clash = next((n for n in (command.name, *command.aliases) if n in taken), None)
        if clash is not None:
            raise UsageError(f"the command group {clash!r} of family {name!r} is family "
                             f"{taken[clash]!r}'s already; give it another name")
    taken_keys = {key: f for f, e in FAMILIES.items() for key, _ in e.policy}
    for key, _ in policy:
        if key in taken_keys:
            raise UsageError(f"the policy section {key!r} of family {name!r} is declared "
                             f"by family {taken_keys[key]!r} already; give it another name")
    FAMILIES[name] = Entry(dotted, command, tuple(roles), tools=tools, policy=tuple(policy))
    _BY_KIND.clear()  # a kind no family wrote so far may be this family's
    _ROUTED.clear()


def unregister(name: str) -> None:
    """Remove family `name` (one `register` added); nothing when it is not registered."""
    FAMILIES.pop(name, None)
    _LOADED.pop(name, None)
    _BY_KIND.clear()
    _ROUTED.clear()


def family(name: str) -> AnyFamily:
    """The family called `name` (imported on first use)."""
    found = _LOADED.get(name)
    if found is None:
        if name not in FAMILIES:
            raise NotFoundError(f"no loop family {name!r}{did_you_mean(name, FAMILIES)}; "
                                f"families: {', '.join(FAMILIES)}")
        from .core.family import LoopFamily, resolve

        dotted = FAMILIES[name].family
        loaded = resolve(dotted)
        if not isinstance(loaded, LoopFamily):
            raise UsageError(f"{dotted} is a {type(loaded).__name__}, not a "
                             f"LoopFamily; the registry names each family's FAMILY")
        found = _LOADED[name] = loaded
    return found


def families() -> list[AnyFamily]:
    """Every registered family, in registry order."""
    return [family(name) for name in FAMILIES]


def family_of_kind(kind: str) -> AnyFamily | None:
    """The family whose engines write ledger kind `kind` (a loop's ``kind``), or None."""
    if kind in _BY_KIND:
        return _BY_KIND[kind]
    found = next((f for f in families() if kind in f.kinds), None)
    _BY_KIND[kind] = found
    return found


def family_of(loop: Any) -> AnyFamily | None:
    """The family of `loop` (by its ``kind``), or None for a loop no family describes."""
    return family_of_kind(str(getattr(loop, "kind", "")))


def command_groups() -> dict[str, CommandGroup]:
    """Family name → its own command group, for the families that have one, in registry
    order (nothing is imported)."""
    return {name: e.command for name, e in FAMILIES.items() if e.command is not None}


def tool_modules() -> list[str]:
    """The dotted paths of the families' MCP tool modules, in registry order (nothing is
    imported)."""
    return [e.tools for e in FAMILIES.values() if e.tools is not None]


def routing_roles() -> dict[str, tuple[str, ...]]:
    """Routing loop (a family's name) → the roles the routing profile gives a default
    route, for the families routed by role: the default routing loop first, then
    registry order (nothing is imported). The same dict until the registry changes: do
    not change it."""
    if not _ROUTED:
        routed = sorted((name for name, e in FAMILIES.items() if e.roles),
                        key=lambda name: not FAMILIES[name].default_routing)
        _ROUTED.update((name, FAMILIES[name].roles) for name in routed)
    return _ROUTED


def policy_sections() -> tuple[tuple[str, str], ...]:
    """Every family's random-policy sections, (key, ``"module:Model"``), in registry
    order (nothing is imported)."""
    return tuple(section for e in FAMILIES.values() for section in e.policy)


def default_routing_loop() -> str:
    """The routing loop a role is routed on when none is named: the family whose entry
    says ``default_routing`` (else the first routed by role). `UsageError` when no
    registered family is routed by role."""
    found = next(iter(routing_roles()), None)
    if found is None:
        raise UsageError("no registered loop family has routing roles; name the loop")
    return found


def __getattr__(name: str) -> object:
    """`AnyFamily` at run time, imported when first asked for: the command line reads
    the registry's entries without loading `crewbook.core.family`."""
    if name == "AnyFamily":
        from .core.family import LoopFamily

        return LoopFamily[Any, Any]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
