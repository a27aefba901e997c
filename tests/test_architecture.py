"""The one-way rules between layers (docs/architecture.md), checked on the source.

Every import statement of `toolkit/crewbook` is read with `ast` (nothing is imported),
module level and inside functions alike; imports under `if TYPE_CHECKING:` are only
for annotations and do not count.

- No library module imports `crewbook.commands` (the command line sits on top).
- `crewbook.draw` imports no concept: a concept builds a draw graph model.
- The bottom layer (`core`, `families`, `errors`, `models`, `sources`, `report`,
  `ledger`, `draw`) imports nothing above it; concepts import neither `commands` nor
  `widgets`.
- The front ends `widgets` and `simulate` import no loop family: they ask the registry
  (`crewbook.families`).
- No import cycle anywhere, counting imports inside functions (a module importing its
  own package, which is already loaded, is not an edge).
- No module reads an underscored attribute another module defines (attribute access or
  `getattr`); writes into an object's `__dict__` (a key, an update, a replacement, a
  setter) are listed (`DICT_WRITES`) and may only shrink.
- Shared code names no family: no string constant (docstrings aside) of `core`,
  `routing`, `simulate`, `commands`, `widgets`, `formats.py` or `tests/families` is a
  registered family's name or ledger kind (a ``Literal`` of another vocabulary aside,
  such as the routing tiers): what a family says comes from its registry line.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import crewbook
from crewbook.families import FAMILIES

ROOT = Path(crewbook.__file__).parent
BOTTOM = ("errors", "models", "sources", "report", "core", "families", "ledger", "draw",
          "examples")
#: The loop families, read from the registry (a new family is one registry line), and
#: the front ends that must not import them.
FAMILY_PACKAGES = tuple(FAMILIES)
CONCEPTS = ("artifacts", *FAMILY_PACKAGES, "routing", "compare", "simulate")
TOP = ("commands", "widgets", "formats")
FRONT_ENDS = ("widgets", "simulate")


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


@pytest.mark.parametrize("layer", BOTTOM)
def test_the_bottom_layer_imports_nothing_above_it(layer: str) -> None:
    offenders = [(m, target) for m, found in GRAPH.items() if layer_of(m) == layer
                 for target, _ in found if layer_of(target) in (*CONCEPTS, *TOP)]
    assert offenders == []


def test_the_stepper_shortcut_imports_nothing_above() -> None:
    """`Loop.stepper()` finds the widgets by a dotted path, not an import."""
    assert not [t for t, _ in GRAPH["crewbook.core.loop"] if t.startswith("crewbook.widgets")]


def test_concepts_import_neither_commands_nor_widgets() -> None:
    offenders = [(m, target) for m, found in GRAPH.items() if layer_of(m) in CONCEPTS
                 for target, _ in found if layer_of(target) in TOP]
    assert offenders == []


def test_front_ends_import_no_family() -> None:
    offenders = [(m, target) for m, found in GRAPH.items() if layer_of(m) in FRONT_ENDS
                 for target, _ in found if layer_of(target) in FAMILY_PACKAGES]
    assert offenders == []


def family_crossings(graph: dict[str, list[tuple[str, bool]]]) -> list[tuple[str, str]]:
    """(module, import) pairs where one family folder imports another, counting the
    imports inside functions."""
    return [(m, target) for m, found in graph.items() if layer_of(m) in FAMILY_PACKAGES
            for target, _ in found
            if layer_of(target) in FAMILY_PACKAGES and layer_of(target) != layer_of(m)]


def test_no_family_imports_another_family() -> None:
    """A family is its folder: what two families share lives in `core/` or a concept that
    is no family (`artifacts/`), never in one of them."""
    assert family_crossings(GRAPH) == []


def test_the_family_crossing_finder_finds_one() -> None:
    first, second = FAMILY_PACKAGES[:2]
    graph = {f"crewbook.{first}.x": [(f"crewbook.{second}.family", False)],
             f"crewbook.{first}.y": [(f"crewbook.{first}.family", True)]}
    assert family_crossings(graph) == [(f"crewbook.{first}.x", f"crewbook.{second}.family")]


def test_the_registry_names_every_family_package() -> None:
    """Each family folder is registered, under its own name, and nothing else is."""
    from crewbook.families import family

    folders = sorted(p.parent.name for p in ROOT.glob("*/family.py") if p.parent.name != "core")
    assert folders == sorted(FAMILIES), "a family folder without its registry line"
    for name, entry in FAMILIES.items():
        assert entry.family == f"crewbook.{name}.family:FAMILY"
        assert family(name).name == name
        assert callable(family(name).sample)


def _module(name: str) -> str:
    """`name`, or the module of the package it names an attribute of."""
    while name and name not in GRAPH:
        name = name.rpartition(".")[0]
    return name


def _cycles(edges: dict[str, list[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative order)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on.add(node)
        for nxt in edges[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles_counting_function_level_imports() -> None:
    edges = {m: sorted({t for t in (_module(x) for x, _ in found) if t and t != m
                        and not m.startswith(t + ".")})  # its own package is loaded
             for m, found in GRAPH.items()}
    assert _cycles(edges) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c"]]


#: Underscored names that belong to other libraries' protocols, not to a crewbook module:
#: IPython's display, namedtuple, os, argparse, concurrent.futures and dask executors.
FOREIGN_PRIVATE = frozenset({"_repr_html_", "_asdict", "_exit", "_SubParsersAction",
                             "_actions", "_max_workers", "_client"})
#: How a `__dict__` is written: a key stored, a method that changes it, a replacement.
_DICT_CHANGES = frozenset({"update", "setdefault", "pop", "popitem", "clear"})
_SETTERS = frozenset({"setattr", "__setattr__", "_set_attribute"})


def _own_private_names(tree: ast.AST) -> set[str]:
    """The underscored names a module defines: functions, classes, attributes it assigns
    (on any object), slots."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets):
            names |= {c.value for c in ast.walk(node.value)
                      if isinstance(c, ast.Constant) and isinstance(c.value, str)}
        elif isinstance(node, ast.Call) and len(node.args) > 1 \
                and isinstance(node.args[1], ast.Constant) \
                and isinstance(node.args[1].value, str) and (
                    (isinstance(node.func, ast.Name) and node.func.id in _SETTERS)
                    or (isinstance(node.func, ast.Attribute) and node.func.attr in _SETTERS)):
            names.add(node.args[1].value)  # setattr(obj, "_name", ...)
    return names


def _is_own(node: ast.expr) -> bool:
    """`self`, `cls` or `super()`: an object reading its own attributes."""
    return (isinstance(node, ast.Name) and node.id in ("self", "cls")) or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        and node.func.id == "super")


def _writes_dict(node: ast.AST) -> bool:
    """Whether `node` changes an object's `__dict__`: a key stored or deleted, a method
    that changes it, the attribute replaced, or set through a setter."""
    if isinstance(node, ast.Subscript):
        return isinstance(node.value, ast.Attribute) and node.value.attr == "__dict__" \
            and isinstance(node.ctx, ast.Store | ast.Del)
    if isinstance(node, ast.Attribute):
        return node.attr == "__dict__" and isinstance(node.ctx, ast.Store)
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in _DICT_CHANGES:
        return isinstance(func.value, ast.Attribute) and func.value.attr == "__dict__"
    setter = (isinstance(func, ast.Name) and func.id in _SETTERS) or (
        isinstance(func, ast.Attribute) and func.attr in _SETTERS)
    return setter and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) \
        and node.args[1].value == "__dict__"


def private_reads(path: Path) -> list[str]:
    """Where `path` reads an underscored attribute another module defines, or changes an
    object's `__dict__` (a key, an update, a replacement), as ``module:line what``."""
    tree = ast.parse(path.read_text("utf-8"))
    own = _own_private_names(tree)
    where = module_name(path) if path.is_relative_to(ROOT.parent) else path.name
    out = []

    def private(name: str) -> bool:
        return name.startswith("_") and not name.startswith("__") and name not in own \
            and name not in FOREIGN_PRIVATE

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and private(node.attr) and not _is_own(node.value):
            out.append(f"{where}:{node.lineno} reads .{node.attr}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("getattr", "hasattr") and len(node.args) > 1 \
                and isinstance(node.args[1], ast.Constant) \
                and isinstance(node.args[1].value, str) and private(node.args[1].value) \
                and not _is_own(node.args[0]):
            out.append(f"{where}:{node.lineno} reads .{node.args[1].value}")
        if _writes_dict(node):
            out.append(f"{where}:{getattr(node, 'lineno', 0)} writes __dict__")
    return out


#: The `__dict__` writes left, each a speed trick of one engine's state (to go behind one
#: seam), or a cache of a frozen object: module → how many. The list may only shrink.
DICT_WRITES = {
    "crewbook.artifacts.project": 1,  # Project's schema cache (frozen dataclass)
    "crewbook.crew.engine": 1,  # the crew's working state updated in place
    "crewbook.crew.working": 1,  # the same, inside Working.apply
    "crewbook.delivery.engine": 1,  # a delivery state's fields replaced at once
    "crewbook.delivery.state": 1,  # the same, building a state from a draft
    "crewbook.pipeline.moves": 1,  # a pipeline state's fields replaced at once
}


def test_no_module_reads_another_modules_private_attributes() -> None:
    hits = [hit for path in sorted(ROOT.rglob("*.py")) for hit in private_reads(path)]
    reads = [hit for hit in hits if " reads " in hit]
    assert reads == []
    writes: dict[str, int] = {}
    for hit in hits:
        if hit.endswith("writes __dict__"):
            module = hit.partition(":")[0]
            writes[module] = writes.get(module, 0) + 1
    assert writes == DICT_WRITES


def test_the_private_read_finder_finds_each_form(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "class A:\n    def __init__(self):\n        self._mine = 1\n"
        "def f(loop, x):\n"
        "    loop._mine\n"             # defined here: fine
        "    loop._store\n"            # another module's: flagged
        "    getattr(loop, '_turn')\n"  # flagged
        "    x._repr_html_()\n"        # a foreign protocol: fine
        "    x.__dict__['k'] = 1\n"    # each write of __dict__ is flagged
        "    x.__dict__.update({})\n"
        "    x.__dict__.setdefault('k', 1)\n"
        "    object.__setattr__(x, '__dict__', {})\n"
        "    x.__dict__ = {}\n")
    found = [h.partition(" ")[2] for h in private_reads(source)]
    assert sorted(found) == sorted(["reads ._store", "reads ._turn"] + ["writes __dict__"] * 5)


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
        # the pandas ExtensionArray protocol (PayloadArray): pandas catches these
        ("crewbook.ledger.payloads", "IndexError"),
        ("crewbook.ledger.payloads", "TypeError"),
        ("crewbook.ledger.payloads", "ValueError"),
    }
    found = set()
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) \
                    and isinstance(node.exc.func, ast.Name) and node.exc.func.id in builtins:
                found.add((module_name(path), node.exc.func.id))
    assert found - allowed == set()


#: Where shared code must not name a family (DESIGN: a family is its folder plus one
#: registry line), as paths under the repository.
NAMELESS = ("toolkit/crewbook/core", "toolkit/crewbook/routing", "toolkit/crewbook/simulate",
            "toolkit/crewbook/commands", "toolkit/crewbook/widgets",
            "toolkit/crewbook/formats.py", "tests/families")
REPO = ROOT.parents[1]



def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) \
                and node.body and isinstance(node.body[0], ast.Expr) \
                and isinstance(node.body[0].value, ast.Constant):
            found.add(id(node.body[0].value))
    return found


def _other_vocabulary(tree: ast.AST, names: set[str]) -> set[int]:
    """The string constants of a ``Literal[...]`` that also holds a word that is no
    family name nor kind: a word of another vocabulary that happens to be spelt like a
    kind (the routing tier ``standard`` of ``Literal["deep", "standard", "light"]``)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and (
                (isinstance(node.value, ast.Name) and node.value.id == "Literal")
                or (isinstance(node.value, ast.Attribute) and node.value.attr == "Literal")):
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            words = [i for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
            if any(w.value not in names for w in words):
                found |= {id(w) for w in words}
    return found


def _class_words(tree: ast.AST) -> set[str]:
    """The words of every class name (``CoordinatorBehaviour``: coordinator, behaviour),
    lowercase: a class named after a family's concept is that family's."""
    return {word.lower() for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
            for word in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+", node.name)}


def family_names_in(path: Path, names: set[str]) -> set[str]:
    """The strings of `names` that `path` holds as constants outside docstrings (and
    outside a ``Literal`` of another vocabulary, `_other_vocabulary`) or as a word of a
    class name."""
    tree = ast.parse(path.read_text("utf-8"))
    skip = _docstrings(tree) | _other_vocabulary(tree, names)
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str) and n.value in names and id(n) not in skip} \
        | (_class_words(tree) & names)


def test_shared_code_names_no_family() -> None:
    from crewbook.families import family

    names = set(FAMILIES) | {k for name in FAMILIES for k in family(name).kinds}
    found = set()
    for where in NAMELESS:
        base = REPO / where
        for path in sorted([base] if base.is_file() else base.rglob("*.py")):
            shown = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) \
                else str(path.relative_to(REPO))
            found |= {(shown, name) for name in family_names_in(path, names)}
    assert found == set(), "shared code names a family: let the family's registry line " \
        "(crewbook.families.Entry) or its folder say it"


def test_the_family_name_finder_finds_a_name(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text('"""The delivery family."""\nKIND = "delivery"\nX = f"{KIND}"\n')
    assert family_names_in(source, {"delivery", "crew"}) == {"delivery"}
    source.write_text('"""The delivery family."""\n')
    assert family_names_in(source, {"delivery"}) == set()


def test_the_family_name_finder_finds_a_class_named_after_a_family(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("class CoordinatorBehaviour:\n    pass\n\nclass CrewRoles:\n    pass\n")
    assert family_names_in(source, {"coordinator", "crew", "delivery"}) == {
        "coordinator", "crew"}
    source.write_text("class Standardised:\n    standard: int\n\nclass CREWish:\n    pass\n")
    assert family_names_in(source, {"standard", "crew"}) == set()


def test_the_family_name_finder_tells_another_vocabulary_apart(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text('Tier = Literal["deep", "standard", "light"]\n'
                      'Kind = typing.Literal["standard", "coordinator"]\n'
                      'LOOPS = ["crew", "delivery", "standard"]\n')
    assert family_names_in(source, {"standard", "coordinator", "crew", "delivery"}) == {
        "standard", "coordinator", "crew", "delivery"}
    source.write_text('Tier = Literal["deep", "standard", "light"]\n')
    assert family_names_in(source, {"standard", "crew"}) == set()
