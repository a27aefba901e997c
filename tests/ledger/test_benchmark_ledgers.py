"""The reader benchmark's inputs hold what issue 35 asks of them, and read right.

`benchmarks/ledger_read.py` times `read_ledger` on ledgers that `benchmarks/make_ledgers.py`
writes as other valid writers may: shuffled key order, ``null`` optional fields, spaces,
CRLF endings, nested and large payloads with escapes, unknown top-level keys; seeded.
These tests keep a small run of each shape honest: it holds those variations, the same
seed gives the same bytes, and the fast path reads it as the exact path does (so the
figures are of a correct read).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from crewbook.ledger import parse
from crewbook.ledger.events import FIELDS
from crewbook.ledger.parse import parse_bytes
from crewbook.ledger.synthetic import write_big_ledger

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
EVENTS = 5_000


@pytest.fixture(scope="module")
def make_ledgers() -> ModuleType:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import make_ledgers as module
    finally:
        sys.path.remove(str(BENCHMARKS))
    return module


@pytest.fixture(scope="module")
def shapes(make_ledgers: ModuleType, tmp_path_factory: pytest.TempPathFactory
           ) -> dict[str, bytes]:
    folder = tmp_path_factory.mktemp("bench")
    source = write_big_ledger(folder / "writer.jsonl", EVENTS, seed=make_ledgers.SEED)
    out = {"writer": source.read_bytes()}
    for shape in make_ledgers.SHAPES[1:]:
        make_ledgers.rewrite(source, folder / f"{shape}.jsonl", shape)
        out[shape] = (folder / f"{shape}.jsonl").read_bytes()
    return out


def objects(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.splitlines()]


def test_each_shape_holds_the_variations_it_promises(shapes: dict[str, bytes]) -> None:
    writer, shuffled = shapes["writer"], shapes["shuffled"]
    assert b"\r\n" not in writer
    assert shuffled.count(b"\r\n") > EVENTS // 4  # CRLF endings
    assert b'": null' in shuffled or b'":null' in shuffled  # null optional fields
    assert b'", "' in shuffled  # spaces after , and :
    order = [list(obj) for obj in objects(shuffled)]
    assert sum(keys[-1] != "payload" for keys in order) > EVENTS // 2  # keys in any order
    assert all([k for k in FIELDS if k in keys] == keys for keys in
               (list(obj) for obj in objects(writer)))  # the writer's own order
    unknown = [k for obj in objects(shapes["unknown"]) for k in obj if k not in FIELDS]
    assert unknown  # top-level keys crewbook does not know
    bad = shapes["bad"].splitlines()
    corrupt = [line for line in bad if b'"seq": "' in line or b'"seq":"' in line
               or b'"payload": "done"' in line or b'"payload":"done"' in line
               or line.rstrip().endswith(b"#")]
    assert 1 <= len(corrupt) <= 20  # about one line in a thousand
    nested = shapes["nested"]
    assert b"\\\"" in nested
    assert b"\\\\" in nested
    assert max(len(line) for line in nested.splitlines()) > 2_000  # large payloads
    assert any(isinstance(obj["payload"].get("trace", {}).get("deep"), dict)
               for obj in objects(nested))


def test_the_same_seed_gives_the_same_bytes(make_ledgers: ModuleType,
                                            shapes: dict[str, bytes], tmp_path: Path) -> None:
    source = tmp_path / "writer.jsonl"
    source.write_bytes(shapes["writer"])
    make_ledgers.rewrite(source, tmp_path / "again.jsonl", "any")
    assert (tmp_path / "again.jsonl").read_bytes() == shapes["any"]


@pytest.mark.parametrize("shape", ["writer", "shuffled", "unknown", "bad", "nested", "any"])
def test_the_fast_path_reads_each_shape_as_the_exact_path(
        shapes: dict[str, bytes], shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    data = shapes[shape]
    fast = parse_bytes(data, f"{shape}.jsonl")
    with monkeypatch.context() as patch:
        patch.setattr(parse, "arrow_read", lambda *args: None)
        exact = parse_bytes(data, f"{shape}.jsonl")
    assert [(p.line, p.key) for p in fast.problems] == [(p.line, p.key) for p in exact.problems]
    assert bool(fast.problems) == (shape in ("unknown", "bad"))
    assert fast.table.to_pylist() == exact.table.to_pylist()
    assert fast.payloads == exact.payloads
