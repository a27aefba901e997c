"""Fast fuzz profile: mutated files of every format never crash a reader.

Each format's valid documents (see `corpus.py`) are broken by byte flips, deleted,
duplicated and swapped lines, random keys and unicode, YAML tags, deep nesting and
huge numbers, then fed to every public reader: it must return or raise a
`CrewbookError` (readers documented "never raise" must return), and
`crewbook validate --json` must print one JSON document. `CREWBOOK_FUZZ_EXAMPLES`
sets the examples per format (default 150: the whole profile takes well under a
minute). The inputs are derandomized (the same every run, so CI is reproducible);
``CREWBOOK_FUZZ_RANDOM=1`` draws new ones each run, and `benchmarks/fuzz.py` is the
long run.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .corpus import Target, mutations, run_cli, run_readers, targets

EXAMPLES = int(os.environ.get("CREWBOOK_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                derandomize=os.environ.get("CREWBOOK_FUZZ_RANDOM") != "1",
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def check_one(target: Target, data: bytes, *, cli: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = target.write(Path(folder), data)
        broken = run_readers(target, path)
        assert not broken, f"{target.name}: {broken!r} on {data[:300]!r}"
        if cli and target.cli:
            status, out, exc = run_cli(path)
            assert exc is None, f"validate --json raised {exc!r} on {data[:300]!r}"
            assert status in (0, 1, 2)
            document = json.loads(out)  # exactly one JSON document, errors included
            assert isinstance(document, dict)


@pytest.mark.parametrize("name", sorted(targets()))
def test_mutated_files_never_crash_a_reader(name: str) -> None:
    target = targets()[name]

    @FUZZ
    @given(st.data())
    def run(data: st.DataObject) -> None:
        text = data.draw(target.documents, label="valid document")
        broken = data.draw(mutations(text), label="mutated bytes")
        check_one(target, broken, cli=data.draw(st.integers(0, 3)) == 0)

    run()


def test_the_valid_documents_are_valid() -> None:
    """The strategies build files every reader accepts (else the mutations prove little)."""

    @settings(max_examples=10, deadline=None, database=None)
    @given(st.data())
    def run(data: st.DataObject) -> None:
        for target in targets().values():
            text = data.draw(target.documents)
            with tempfile.TemporaryDirectory() as folder:
                path = target.write(Path(folder), text.encode())
                for _, reader in target.readers:
                    reader(path)
                if target.cli:
                    status, out, exc = run_cli(path)
                    assert (status, exc) == (0, None), out

    run()
