"""The one-way rules between layers (docs/architecture.md), checked on the source.

Every import statement of `toolkit/crewbook` is read with `ast` (nothing is imported),
module level and inside functions alike; imports under `if TYPE_CHECKING:` are only
for annotations and do not count.

- No library module imports `crewbook.commands` (the command line sits on top).
- `crewbook.draw` imports no concept: a concept builds a draw graph model.
- The bottom layer (`errors`, `models`, `sources`, `report`, `loop`, `ledger`, `draw`)
  imports nothing above it; concepts import neither `commands` nor `widgets`.
- No cycle between modules at module level.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

import crewbook

ROOT = Path(crewbook.__file__).parent
BOTTOM = ("errors", "models", "sources", "report", "loop", "core", "families", "ledger", "draw",
          "examples")
CONCEPTS = ("artifacts", "pipeline", "delivery", "crew", "autonomous", "routing", "compare",
            "simulate")
TOP = ("commands", "widgets", "formats")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id.endswith("TYPE_CHECKING")) or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports(path: Path) -> Iterator[tuple[str, bool]]:
    """(imported module, at module level?) for every import of `path`."""
    tree = ast.parse(path.read_text("utf-8"))
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def walk(node: ast.AST, top: bool) -> Iterator[tuple[str, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                continue
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield alias.name, top
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - child.level + 1]
                    target = ".".join([*base, child.module] if child.module else base)
                else:
                    target = child.module or ""
                yield target, top
                for alias in child.names:  # `from . import ledger` imports a module
                    if (ROOT.parent / (target.replace(".", "/") + f"/{alias.name}")).exists() \
                            or (ROOT.parent / (target.replace(".", "/")
                                               + f"/{alias.name}.py")).exists():
                        yield f"{target}.{alias.name}", top
            else:
                inner = top and not isinstance(
                    child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
                yield from walk(child, inner)

    yield from walk(tree, True)


GRAPH: dict[str, list[tuple[str, bool]]] = {
    module_name(p): [(m, top) for m, top in imports(p) if m.startswith("crewbook")]
    for p in sorted(ROOT.rglob("*.py"))
}


def layer_of(module: str) -> str:
    part = module.split(".")[1] if "." in module else ""
    return part


def test_the_graph_is_read() -> None:
    assert "crewbook.commands" in GRAPH
    assert ("crewbook.errors", True) in GRAPH["crewbook.core.loop"]


def test_no_library_module_imports_the_commands() -> None:
    offenders = [(m, target) for m, found in GRAPH.items() if layer_of(m) != "commands"
                 and m != "crewbook" for target, _ in found
                 if target == "crewbook.commands" or target.startswith("crewbook.commands.")]
    assert offenders == []


def test_draw_imports_no_concept() -> None:
    offenders = [(m, target) for m, found in GRAPH.items() if layer_of(m) == "draw"
                 for target, _ in found if layer_of(target) in (*CONCEPTS, *TOP)]
    assert offenders == []


#: The one upward import allowed, inside a function only: `Loop.stepper()`, the
#: notebook shortcut to `crewbook.widgets.Stepper(loop)` (docs/architecture.md).
SHORTCUTS = frozenset({("crewbook.loop", "crewbook.widgets")})


@pytest.mark.parametrize("layer", BOTTOM)
def test_the_bottom_layer_imports_nothing_above_it(layer: str) -> None:
    offenders = [(m, target) for m, found in GRAPH.items() if layer_of(m) == layer
                 for target, top in found if layer_of(target) in (*CONCEPTS, *TOP)
                 and (top or (m, target) not in SHORTCUTS)]
    assert offenders == []


def test_the_stepper_shortcut_imports_nothing_above() -> None:
    """`Loop.stepper()` finds the widgets by a dotted path, not an import."""
    assert not [t for t, _ in GRAPH["crewbook.core.loop"] if t.startswith("crewbook.widgets")]


def test_concepts_import_neither_commands_nor_widgets() -> None:
    offenders = [(m, target) for m, found in GRAPH.items() if layer_of(m) in CONCEPTS
                 for target, _ in found if layer_of(target) in TOP]
    assert offenders == []


def test_no_module_level_cycles() -> None:
    edges = {m: sorted({t for t, top in found if top and t in GRAPH and t != m})
             for m, found in GRAPH.items()}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in edges[node]:
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt):], nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)
    # A package's __init__ importing its own submodules is how packages work, not a cycle.
    real = [c for c in cycles if not all(
        a.startswith(b + ".") or b.startswith(a + ".") for a, b in itertools.pairwise(c))]
    assert real == []


def test_every_error_raised_is_a_crewbook_error() -> None:
    """Library code raises `CrewbookError` subclasses, not bare built-ins; the few
    exceptions are listed (pydantic validators must raise ValueError, hooks that a
    caller turns into a located problem, the protocol of `__getattr__`)."""
    builtins = {"ValueError", "KeyError", "TypeError", "RuntimeError", "LookupError",
                "IndexError", "FileNotFoundError", "OSError", "Exception"}
    allowed = {
        ("crewbook.delivery.model", "ValueError"),  # pydantic validator
        ("crewbook.ledger.events", "ValueError"),  # pydantic validator
        ("crewbook.ledger.lines", "ValueError"),  # json parse_constant hook, caught
        ("crewbook.pipeline.plan", "ValueError"),  # json_copy, caught by its callers
        ("crewbook.pipeline.plan", "TypeError"),  # json_copy, caught by its callers
        ("crewbook.sources.toml_reader", "ValueError"),  # parser-internal, caught
        ("crewbook.sources.yaml_reader", "KeyError"),  # the Mapping protocol (positions)
        ("crewbook.simulate.model", "ValueError"),  # pydantic validator
    }
    found = set()
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) \
                    and isinstance(node.exc.func, ast.Name) and node.exc.func.id in builtins:
                found.add((module_name(path), node.exc.func.id))
    assert found - allowed == set()
