"""The one diff core every comparison uses: records and edges, added, removed, renamed, changed.

A design is compared as *records* (nodes: id → field values) and *edges*
(``(source, target, kind)`` → field values):

* `diff_records(a, b, signature=..., refs=...)`: ids added, removed, renamed and the
  fields that changed. A removed id and an added id with the same *signature* (for a
  schema artifact: the same `generates` and `requires`) and no other candidate are a
  rename. Fields listed in `refs` hold ids of the same records (`requires`): the old
  side is read through the renames found, so renaming `brief` does not also report
  every artifact that requires it as changed. Renames are found again until none is
  new, so a chain of renamed artifacts is found whole.
* `diff_edges(a, b, renames)`: edges added, removed and changed, the old side's ends
  read through the renames.
* `DiffEntry`: one difference, as every `Diff` lists them.

The overlay drawing is in `graph.py`, the result type (`Diff`) in `result.py`. The diff
is symmetric: what `diff(a, b)` adds, `diff(b, a)` removes (a hypothesis property test
checks it), and `diff(a, a)` is empty.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: Kinds of difference, in the order they are listed.
CHANGES: tuple[str, ...] = ("added", "removed", "renamed", "changed", "moved")

Record = Mapping[str, Any]
EdgeKey = tuple[str, str, str]
Signature = Callable[[Record], Hashable] | Sequence[str] | None


def jsonable(value: Any) -> Any:
    """`value` with tuples and sets as lists (sets sorted), for JSON and frames."""
    if isinstance(value, tuple | list):
        return [jsonable(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(jsonable(v) for v in value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    return value


def show(value: Any) -> str:
    """A value as one short line: lists joined by commas, None as an em dash."""
    if value is None:
        return "—"
    if isinstance(value, tuple | list | set | frozenset):
        items = sorted(value) if isinstance(value, set | frozenset) else value
        return "[" + ", ".join(show(v) for v in items) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# -- records -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordDiff:
    """How two sets of records differ.

    added / removed: ids only in the second / first. renamed: (old id, new id) pairs.
    changed: new id → field → (before, after), for records in both (renamed included).
    """

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()
    changed: Mapping[str, Mapping[str, tuple[Any, Any]]] = field(default_factory=dict)

    @property
    def renames(self) -> dict[str, str]:
        """Old id → new id."""
        return dict(self.renamed)

    @property
    def empty(self) -> bool:
        """True when both sides hold the same records."""
        return not (self.added or self.removed or self.renamed or self.changed)

    def entries(self, section: str, *, describe: Callable[[str], str] | None = None
                ) -> list[DiffEntry]:
        """One `DiffEntry` per difference, under `section` (``artifact``, ``stage``...)."""
        note = describe or (lambda _id: "")
        out = [DiffEntry(section, "added", i, None, None, None, note(i)) for i in self.added]
        out += [DiffEntry(section, "removed", i, None, None, None, note(i)) for i in self.removed]
        out += [DiffEntry(section, "renamed", new, "id", old, new) for old, new in self.renamed]
        for item in sorted(self.changed):
            for name, (before, after) in self.changed[item].items():
                out.append(DiffEntry(section, "changed", item, name, before, after))
        return out


def _signature_of(signature: Signature) -> Callable[[Record], Hashable] | None:
    if signature is None or callable(signature):
        return signature
    names = tuple(signature)
    return lambda rec: tuple(_hashable(rec.get(n)) for n in names)


def _hashable(value: Any) -> Hashable:
    if isinstance(value, list | tuple):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, set | frozenset):
        return frozenset(_hashable(v) for v in value)
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _hashable(v)) for k, v in value.items()))
    return value  # type: ignore[no-any-return]


def translate(record: Record, refs: Iterable[str], renames: Mapping[str, str]) -> dict[str, Any]:
    """`record` with the ids held in fields `refs` read through `renames` (old → new)."""
    out = dict(record)
    for name in refs:
        value = out.get(name)
        if isinstance(value, str):
            out[name] = renames.get(value, value)
        elif isinstance(value, list | tuple):
            out[name] = type(value)(renames.get(v, v) if isinstance(v, str) else v
                                    for v in value)
    return out


def diff_records(
    a: Mapping[str, Record],
    b: Mapping[str, Record],
    *,
    signature: Signature = None,
    refs: Sequence[str] = (),
) -> RecordDiff:
    """Records `a` (before) and `b` (after) compared: added, removed, renamed, changed.

    `signature` (field names, or a function of a record) pairs a removed id with an
    added one as a rename when exactly one of each has it; None finds no renames.
    `refs` names the fields holding ids of these same records (read through renames).
    """
    sig = _signature_of(signature)
    renames = _renames(a, b, sig, refs) if sig is not None else {}
    mapped = {renames.get(i, i): translate(rec, refs, renames) for i, rec in a.items()}
    changed: dict[str, dict[str, tuple[Any, Any]]] = {}
    for new_id, after in b.items():
        before = mapped.get(new_id)
        if before is None:
            continue
        fields = {}
        for name in dict.fromkeys([*before, *after]):
            old, cur = before.get(name), after.get(name)
            if _hashable(old) != _hashable(cur):
                fields[name] = (old, cur)
        if fields:
            changed[new_id] = fields
    return RecordDiff(
        added=tuple(sorted(i for i in b if i not in mapped)),
        removed=tuple(sorted(i for i in a if i not in renames and i not in b)),
        renamed=tuple(sorted(renames.items())),
        changed=changed,
    )


def _ids_in(record: Record, refs: Sequence[str]) -> list[str]:
    out: list[str] = []
    for name in refs:
        value = record.get(name)
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, list | tuple):
            out += [v for v in value if isinstance(v, str)]
    return out


def _renames(a: Mapping[str, Record], b: Mapping[str, Record],
             sig: Callable[[Record], Hashable], refs: Sequence[str]) -> dict[str, str]:
    """Old id → new id: rounds of unique signature matches, each round reading the old
    side through the renames found so far, until a round finds none.

    Only the groups a round touched are looked at again (a record's signature changes
    only when an id it refers to is renamed), so a chain of n renamed artifacts costs
    O(n), not O(n²).
    """
    renames: dict[str, str] = {}
    users: dict[str, list[str]] = defaultdict(list)
    sig_a: dict[str, Hashable] = {}
    group_a: dict[Hashable, set[str]] = defaultdict(set)
    group_b: dict[Hashable, set[str]] = defaultdict(set)
    for old_id, record in a.items():
        if old_id in b:
            continue
        for ref in _ids_in(record, refs):
            users[ref].append(old_id)
        sig_a[old_id] = sig(record)
        group_a[sig_a[old_id]].add(old_id)
    for new_id, record in b.items():
        if new_id not in a:
            group_b[sig(record)].add(new_id)
    candidates = set(group_a)
    while candidates:
        found = {next(iter(group_a[s])): next(iter(group_b[s])) for s in candidates
                 if len(group_a.get(s, ())) == 1 and len(group_b.get(s, ())) == 1}
        if not found:
            break
        renames.update(found)
        candidates = set()
        for old_id, new_id in found.items():
            key = sig_a.pop(old_id)
            group_a[key].discard(old_id)
            group_b[key].discard(new_id)
        for old_id in found:
            for user in users.get(old_id, ()):
                if user not in sig_a:
                    continue
                before, after = sig_a[user], sig(translate(a[user], refs, renames))
                if after != before:
                    group_a[before].discard(user)
                    group_a[after].add(user)
                    sig_a[user] = after
                    candidates.update((before, after))
    return renames


# -- edges ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class EdgeDiff:
    """Edges only in the second (added), only in the first (removed, ends already read
    through the renames) and in both with other fields (changed: key → field → pair)."""

    added: tuple[EdgeKey, ...] = ()
    removed: tuple[EdgeKey, ...] = ()
    changed: Mapping[EdgeKey, Mapping[str, tuple[Any, Any]]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        """True when both sides have the same edges."""
        return not (self.added or self.removed or self.changed)

    def entries(self, section: str = "edge") -> list[DiffEntry]:
        """One `DiffEntry` per edge difference; the item is ``source → target``."""
        def name(key: EdgeKey) -> str:
            return f"{key[0]} → {key[1]}" + (f" ({key[2]})" if key[2] else "")

        out = [DiffEntry(section, "added", name(k), None, None, None) for k in self.added]
        out += [DiffEntry(section, "removed", name(k), None, None, None) for k in self.removed]
        for key in sorted(self.changed):
            for fname, (before, after) in self.changed[key].items():
                out.append(DiffEntry(section, "changed", name(key), fname, before, after))
        return out


def diff_edges(
    a: Mapping[EdgeKey, Record] | Iterable[EdgeKey],
    b: Mapping[EdgeKey, Record] | Iterable[EdgeKey],
    renames: Mapping[str, str] | None = None,
) -> EdgeDiff:
    """Edges `a` (before) and `b` (after) compared, `a`'s ends read through `renames`."""
    ren = renames or {}
    left = a if isinstance(a, Mapping) else {key: {} for key in a}
    right = b if isinstance(b, Mapping) else {key: {} for key in b}
    mapped = {(ren.get(s, s), ren.get(t, t), k): rec for (s, t, k), rec in left.items()}
    changed: dict[EdgeKey, dict[str, tuple[Any, Any]]] = {}
    for key, after in right.items():
        before = mapped.get(key)
        if before is None:
            continue
        fields = {n: (before.get(n), after.get(n)) for n in dict.fromkeys([*before, *after])
                  if _hashable(before.get(n)) != _hashable(after.get(n))}
        if fields:
            changed[key] = fields
    return EdgeDiff(
        added=tuple(sorted(k for k in right if k not in mapped)),
        removed=tuple(sorted(k for k in mapped if k not in right)),
        changed=changed,
    )


@dataclass(frozen=True)
class DiffEntry:
    """One difference: in `section` (``artifact``, ``edge``, ``stage``...), a `change`
    (added, removed, renamed, changed, moved) of `item`, and for a changed field its
    name, value `before` and value `after`; `note` says more in words."""

    section: str
    change: str
    item: str
    field: str | None = None
    before: Any = None
    after: Any = None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """`{"section", "change", "item", "field", "before", "after", "note"}`."""
        return {"section": self.section, "change": self.change, "item": self.item,
                "field": self.field, "before": jsonable(self.before),
                "after": jsonable(self.after), "note": self.note or None}

    def __str__(self) -> str:
        mark = {"added": "+", "removed": "-", "renamed": "~", "changed": "~", "moved": ">"}
        text = f"{mark.get(self.change, '*')} {self.section}"
        text += "" if self.item == self.section else f" {self.item}"
        if self.change == "renamed":
            text += f": renamed from {self.before}"
        elif self.field is not None:
            text += f" {self.field}: {show(self.before)} → {show(self.after)}"
        elif self.change in ("added", "removed"):
            text += f" {self.change}"
        return text + (f"  ({self.note})" if self.note else "")
