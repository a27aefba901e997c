"""Generate big, realistic ledgers for the reader benchmark (fixed seed).

    python benchmarks/make_ledgers.py 100000 1000000
    python benchmarks/make_ledgers.py --shape any 300000

writes ``benchmarks/_data/ledger-<N>.jsonl`` (git-ignored) and prints the paths. The
events are whole synthetic runs (coordinator and crew loops, see
`crewbook.ledger.synthetic`): acts, reports, verdicts with findings, bar measures,
questions, escalations, finishes; about 240 bytes a line. The same N always gives
the same file, and an existing file is reused.

The other shapes are the same events written as another valid writer may write them
(``ledger-<shape>-<N>.jsonl``), each line drawn with a fixed seed:

* ``shuffled``: keys in a random order (``payload`` anywhere), ``null`` for absent
  optional fields (``"verdict": null``), spaces after ``:`` and ``,`` on some lines,
  CRLF line endings, times as other writers write them on some lines (``+00:00``, no
  offset, a space for the ``T``, milliseconds; one in a thousand with a lowercase ``t``
  and ``z``);
* ``nested``: payloads nested several levels deep, with escapes (quotes, backslashes,
  ``\\uXXXX``) in their texts, and one line in a hundred with a payload of several KB;
* ``any``: these and the writer's lines mixed, line by line;
* ``unknown``: ``shuffled``, with one line in a thousand holding a top-level key crewbook
  does not know (with a ``null`` value): not valid (the format refuses unknown keys, a
  null one too), so it is read with ``errors="skip"``: refusing a few lines must not
  cost the fast path;
* ``bad``: ``shuffled``, with one line in a thousand corrupt (a field of the wrong type,
  a payload that is not an object, or a line that is not JSON), read with
  ``errors="skip"``: a few bad lines must not cost a split of their blocks.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any, Final

from crewbook.ledger.synthetic import write_big_ledger

SEED = 20261202
DATA = Path(__file__).parent / "_data"
SHAPES: Final = ("writer", "shuffled", "unknown", "bad", "nested", "any")
#: The optional fields a line may write as ``null`` rather than leave out.
_OPTIONAL: Final = ("role", "stage", "verdict", "attempt", "version", "summary",
                    "tokens_in", "tokens_out", "cost", "duration_ms")
_UNKNOWN: Final = ("x_trace", "origin", "_meta", "labels", "host")


def ledger_path(n: int, shape: str = "writer") -> Path:
    """Where the ledger of `n` events of `shape` (see the module) lives (made when
    missing)."""
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; known: {', '.join(SHAPES)}")
    path = DATA / (f"ledger-{n}.jsonl" if shape == "writer" else f"ledger-{shape}-{n}.jsonl")
    if not path.exists():
        DATA.mkdir(exist_ok=True)
        tmp = path.with_suffix(".tmp")
        if shape == "writer":
            write_big_ledger(tmp, n, seed=SEED)
        else:
            rewrite(ledger_path(n), tmp, shape)
        tmp.replace(path)
    return path


def rewrite(source: Path, target: Path, shape: str, seed: int = SEED) -> None:
    """The events of `source` written to `target` as `shape` (seeded)."""
    rnd = random.Random(f"{seed}-{shape}")
    with source.open("rb") as lines, target.open("wb") as out:
        for line in lines:
            out.write(reshape(json.loads(line), shape, rnd))


def reshape(event: dict[str, Any], shape: str, rnd: random.Random) -> bytes:
    """One event as a line of `shape` (see the module), drawn from `rnd`."""
    if shape == "any":
        shape = rnd.choice(("shuffled", "nested", "writer"))
    crlf = False
    separators = (",", ":")
    if shape in ("shuffled", "unknown", "bad"):
        for name in _OPTIONAL:
            if name not in event and rnd.random() < 0.3:
                event[name] = None
        crlf = rnd.random() < 0.5
        if rnd.random() < 0.3:
            separators = (", ", ": ")
        if isinstance(event.get("ts"), str) and rnd.random() < 0.3:
            event["ts"] = _other_time(event["ts"], rnd)
    if shape == "unknown" and rnd.random() < 0.001:
        event[rnd.choice(_UNKNOWN)] = None
    corrupt = shape == "bad" and rnd.random() < 0.001
    if corrupt:
        how = rnd.choice(("type", "payload", "json"))
        if how == "type":
            event["seq"] = str(event.get("seq"))
        elif how == "payload":
            event["payload"] = "done"
    if shape == "nested":
        event["payload"] = _nested(event.get("payload") or {}, rnd)
    if shape != "writer":
        keys = list(event)
        rnd.shuffle(keys)
        event = {key: event[key] for key in keys}
    text = json.dumps(event, ensure_ascii=rnd.random() < 0.2, separators=separators)
    if corrupt and how == "json":
        text = text[:len(text) // 2] + "#"
    return (text + ("\r\n" if crlf else "\n")).encode()


def _other_time(ts: str, rnd: random.Random) -> str:
    """`ts` (the writer's ``...Z``) as another writer may write the same time."""
    how = rnd.choice(("+00:00", "naive", "space", "millis"))
    if how == "+00:00":  # Python's isoformat
        ts = ts.replace("Z", "+00:00")
    elif how == "naive":  # no offset: UTC
        ts = ts.removesuffix("Z")
    elif how == "space":
        ts = ts.replace("T", " ")
    elif "." in ts:  # milliseconds
        ts = ts[:ts.index(".") + 4] + "Z"
    if rnd.random() < 0.003:  # rare: RFC 3339 allows lowercase
        ts = ts.lower()
    return ts


def _nested(payload: dict[str, Any], rnd: random.Random) -> dict[str, Any]:
    """`payload` with a few levels of nesting, escaped texts, sometimes large."""
    payload = dict(payload)
    payload["trace"] = {"step": rnd.randint(0, 9), "path": ["a", {"b": [1, 2.5, None]}],
                        "note": 'said "done" \\ ok — ünïcode\ttab',
                        "deep": {"x": {"y": {"z": [{"w": rnd.random()}]}}}}
    if rnd.random() < 0.01:
        payload["log"] = "line {with} [brackets], \"quotes\"\n" * rnd.randint(50, 200)
    if rnd.random() < 0.1:
        payload["empty"] = {}
        payload["none"] = None
    return payload


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[100_000, 1_000_000])
    parser.add_argument("--shape", choices=SHAPES, default="writer")
    args = parser.parse_args()
    for n in args.sizes:
        print(ledger_path(n, args.shape))


if __name__ == "__main__":
    main()
