"""The real samples' audit: every ``PROVENANCE.md`` under tests/data/agent_logs/ lists its
files in one table (file, source, origin, kind, repository, commit, path, licence), and
each source has at least 5 real sessions from at least 3 origins (public repositories,
or tool versions the files state).

A source still short is listed in ``SHORT`` with what was searched; its check is a
strict xfail, so it fails (and must leave the list) as soon as the samples are there."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

LOGS = Path(__file__).resolve().parents[1] / "data" / "agent_logs"
COLUMNS = ["file", "source", "origin", "kind", "repository", "commit",
           "path in the repository", "licence"]
SOURCES = ["claude-code", "codex", "gemini-cli", "openhands-v0", "openhands-sdk",
           "openhands-eval", "swe-agent", "mini-swe-agent", "aider", "otlp", "openinference"]
KINDS = {"session", "fixture", "example"}
LICENCES = re.compile(r"^(MIT|Apache-2\.0|BSD|CC)")
MIN_FILES, MIN_ORIGINS = 5, 3
#: Scripts kept beside the samples that re-derive them (named in their PROVENANCE.md).
SCRIPTS = {"extract.mjs"}

#: Sources with fewer real files or origins than required, and why (the searches tried
#: are in the PROVENANCE.md that lists their files).
SHORT: dict[str, str] = {}


def _rows() -> list[dict[str, str]]:
    """Every table row of every PROVENANCE.md under tests/data/agent_logs/, with the
    listed file resolved (key ``path``) and the PROVENANCE.md it came from."""
    rows: list[dict[str, str]] = []
    for prov in sorted(LOGS.rglob("PROVENANCE.md")):
        header: list[str] | None = None
        for number, line in enumerate(prov.read_text(encoding="utf-8").splitlines(), 1):
            if not line.startswith("|"):
                header = None
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
                assert header == COLUMNS, f"{prov}:{number}: table columns {header}"
                continue
            if set(line) <= set("|- "):
                continue
            row = dict(zip(COLUMNS, cells, strict=True))
            found = re.match(r"`([^`]+)`", row["file"])
            assert found, f"{prov}:{number}: the file cell names no `file`"
            row["path"] = str((prov.parent / found.group(1)).resolve())
            row["where"] = f"{prov.relative_to(LOGS)}:{number}"
            rows.append(row)
    return rows


ROWS = _rows()


def test_every_row_names_an_existing_file_a_known_source_kind_and_licence() -> None:
    assert len(ROWS) > 40
    for row in ROWS:
        assert Path(row["path"]).exists(), row["where"]
        assert row["source"] in SOURCES, row["where"]
        assert row["kind"] in KINDS, row["where"]
        assert LICENCES.match(row["licence"]), row["where"]
        assert re.match(r"[0-9a-f]{40}\b", row["commit"]), row["where"]


def test_every_sample_file_is_listed_once() -> None:
    listed = [Path(r["path"]) for r in ROWS]
    assert len(listed) == len(set(listed))
    for path in LOGS.rglob("*"):
        if path.is_dir() or path.name in {"PROVENANCE.md", "README.md", *SCRIPTS}:
            continue
        assert any(path == p or p in path.parents for p in listed), f"{path} not listed"


def _coverage() -> dict[str, tuple[int, set[str]]]:
    files: dict[str, int] = defaultdict(int)
    origins: dict[str, set[str]] = defaultdict(set)
    for row in ROWS:
        if row["kind"] == "session":
            files[row["source"]] += 1
            origins[row["source"]].add(row["origin"])
    return {s: (files[s], origins[s]) for s in SOURCES}


@pytest.mark.parametrize("source", [
    pytest.param(s, marks=pytest.mark.xfail(strict=True, reason=SHORT[s])) if s in SHORT
    else s for s in SOURCES])
def test_each_source_has_five_real_files_from_three_origins(source: str) -> None:
    count, origins = _coverage()[source]
    assert count >= MIN_FILES, f"{source}: {count} real files"
    assert len(origins) >= MIN_ORIGINS, f"{source}: origins {sorted(origins)}"


def test_held_out_files_are_read_only_by_their_own_tests() -> None:
    """No test module but the held-out ones names the held-out folder (this audit only
    checks the files exist)."""
    tests = Path(__file__).resolve().parents[1]
    own = {"test_heldout.py", "test_heldout_agents.py", Path(__file__).name}
    word = '"held' + 'out"'
    naming = [p for p in sorted(tests.rglob("*.py"))
              if p.name not in own and word in p.read_text(encoding="utf-8")]
    assert naming == []
    assert all(word in (tests / "ledger" / name).read_text(encoding="utf-8")
               for name in own - {Path(__file__).name})


def _version(origin: str, repository: str) -> tuple[int, ...]:
    """The release an origin of `repository` names (``SWE-agent/SWE-agent 0.7.0`` ->
    (0, 7, 0))."""
    found = re.fullmatch(re.escape(repository) + r" (\d+)\.(\d+)\.(\d+)", origin)
    assert found, f"an origin of {repository} names no release: {origin!r}"
    return tuple(int(part) for part in found.groups())


def test_each_swe_agent_file_has_the_fields_of_the_release_its_origin_names() -> None:
    """A .traj file states no version, so its origin is the release that first shipped it;
    the fields only some releases write must agree (``message_type`` on history entries
    from 1.0.0, ``info.edited_files30`` from 0.7.0), or the origins count is wrong."""
    rows = [r for r in ROWS if r["source"] == "swe-agent"]
    assert len({r["origin"] for r in rows}) >= 3
    for row in rows:
        release = _version(row["origin"], "SWE-agent/SWE-agent")
        traj = json.loads(Path(row["path"]).read_text(encoding="utf-8"))
        typed = any("message_type" in entry for entry in traj["history"])
        assert typed == (release >= (1, 0, 0)), row["where"]
        if release < (0, 7, 0):
            assert "edited_files30" not in traj.get("info", {}), row["where"]
            assert all("execution_time" not in step for step in traj["trajectory"]), \
                row["where"]
        if "replay_config" in traj:
            assert release >= (1, 0, 0), row["where"]


def test_each_sdk_conversation_has_the_fields_of_the_version_its_origin_names() -> None:
    """An SDK conversation folder states no version; its origin is the SDK version of the
    checkout that wrote it, and ``base_state.json`` agrees: ``agent_state`` and
    ``last_user_message_id`` are written from 1.11.5 on."""
    rows = [r for r in ROWS if r["source"] == "openhands-sdk"]
    assert len({r["origin"] for r in rows}) >= 3
    folders = [r for r in rows if Path(r["path"]).is_dir()]
    assert len(folders) >= 3
    for row in rows:
        _version(row["origin"], "OpenHands/software-agent-sdk")
    for row in folders:
        state = json.loads((Path(row["path"]) / "base_state.json").read_text(encoding="utf-8"))
        newer = _version(row["origin"], "OpenHands/software-agent-sdk") >= (1, 11, 5)
        assert ("agent_state" in state) == newer, row["where"]
        assert ("last_user_message_id" in state) == newer, row["where"]


def _v0_events(path: Path) -> list[dict[str, Any]]:
    """The events of a V0 sample: a list, ``{"trajectory": [...]}``, or a session folder
    (``events/<id>.json``)."""
    if path.is_dir():
        return [json.loads(p.read_text(encoding="utf-8"))
                for p in sorted((path / "events").glob("*.json"), key=lambda p: int(p.stem))]
    raw = json.loads(path.read_text(encoding="utf-8"))
    events: list[dict[str, Any]] = raw["trajectory"] if isinstance(raw, dict) else raw
    return events


def test_each_openhands_v0_file_states_the_version_its_origin_names() -> None:
    """From 0.34.0 OpenHands writes a ``system`` action whose ``args.openhands_version``
    names the release that ran: a V0 file's origin must name that release; an older
    file (no such action) an older release."""
    rows = [r for r in ROWS if r["source"] == "openhands-v0"]
    assert len({r["origin"] for r in rows}) >= 3
    for row in rows:
        found = re.search(r" (\d+)\.(\d+)\.(\d+)$", row["origin"])
        assert found, f"{row['where']}: the origin names no release"
        release = tuple(int(part) for part in found.groups())
        stated = {str(e["args"]["openhands_version"])
                  for e in _v0_events(Path(row["path"])) if e.get("action") == "system"}
        if release >= (0, 34, 0):
            assert stated == {".".join(found.groups())}, row["where"]
        else:
            assert stated == set(), row["where"]


def _otlp_spans(path: Path) -> list[tuple[dict[str, str], str, dict[str, object]]]:
    """(resource attributes, scope name and version, span attributes) of each span."""
    def flat(items: list[dict[str, Any]]) -> dict[str, Any]:
        return {i["key"]: next(iter(i["value"].values())) for i in items}
    doc = json.loads(path.read_text(encoding="utf-8"))
    return [(flat(rs.get("resource", {}).get("attributes", [])),
             f"{ss['scope'].get('name', '')} {ss['scope'].get('version', '')}",
             flat(span.get("attributes", [])))
            for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for span in ss["spans"]]


def test_each_captured_otlp_file_holds_its_sources_spans_from_the_version_it_names() -> None:
    """A captured ``otlp`` file holds GenAI (``gen_ai.*``) spans and no OpenInference
    span kind, an ``openinference`` one spans with ``openinference.span.kind``; and the
    version its origin names is one the file states (a scope version, a resource
    attribute or a user agent), so the origins counted are the files' own."""
    rows = [r for r in ROWS if r["source"] in ("otlp", "openinference")
            and r["kind"] == "session"]
    assert len(rows) >= 10
    for row in rows:
        spans = _otlp_spans(Path(row["path"]))
        kinds = [a.get("openinference.span.kind") for _, _, a in spans]
        if row["source"] == "openinference":
            assert any(kinds), row["where"]
        else:
            assert not any(kinds), row["where"]
            assert any(k.startswith("gen_ai.") for _, _, a in spans for k in a), row["where"]
        version = row["origin"].rsplit(" ", 1)[1]
        stated = {str(v) for r, scope, a in spans
                  for v in [*r.values(), scope.rsplit(" ", 1)[1], *a.values()]}
        assert any(v == version or v.endswith(f"/{version}") for v in stated), row["where"]
