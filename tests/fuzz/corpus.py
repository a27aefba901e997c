"""Valid crewbook files built by hypothesis, the mutations that break them, and the
readers they are fed to.

Used by the fast fuzz profile in the suite (`tests/fuzz/test_readers.py`) and by the
long run (`benchmarks/fuzz.py --minutes N`). Each `Target` is one file format: it
writes a mutated document where crewbook looks for it and calls every public reader
of that format. The rule checked everywhere: a reader returns, or raises a
`CrewbookError`; a reader documented "never raises" returns.
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

# -- valid documents ----------------------------------------------------------------------

_LOWER = string.ascii_lowercase + string.digits
kebab = st.builds(
    lambda parts: "-".join(parts),
    st.lists(st.text(_LOWER, min_size=1, max_size=6), min_size=1, max_size=3),
).filter(lambda s: s[0].isalpha())
snake = st.text(string.ascii_lowercase + "_", min_size=1, max_size=10).filter(
    lambda s: s[0].isalpha())
words = st.text(string.ascii_letters + " ,.-é", min_size=1, max_size=40).map(str.strip).filter(
    bool)


@st.composite
def schema_docs(draw: st.DrawFn) -> dict[str, Any]:
    """A valid schema.yaml (SPEC A3): a dependency chain, some roles, one template."""
    ids = draw(st.lists(kebab, min_size=1, max_size=6, unique=True))
    artifacts: list[dict[str, Any]] = []
    for i, art_id in enumerate(ids):
        art: dict[str, Any] = {"id": art_id, "generates": f"{art_id}.md"}
        if i:
            art["requires"] = draw(st.lists(st.sampled_from(ids[:i]), max_size=2, unique=True))
        if draw(st.booleans()):
            art["description"] = draw(words)
        if i == 0:
            art["template"] = "first.md"
        if draw(st.integers(0, 4)) == 0:
            art["role"] = {"id": f"r-{art_id}", "name": {"en": draw(words)},
                           "question": draw(words), "done_when": [draw(words)]}
        artifacts.append(art)
    return {"name": "fuzzed", "version": 1, "artifacts": artifacts,
            "apply": {"requires": [ids[-1]], "tracks": f"{ids[-1]}.md"}}


@st.composite
def config_docs(draw: st.DrawFn) -> dict[str, Any]:
    """A valid `_codev/config.yaml`."""
    doc: dict[str, Any] = {"schema": "spec-driven", "context": draw(words)}
    doc["rules"] = {k: [draw(words)] for k in draw(
        st.lists(st.sampled_from(["proposal", "specs", "design", "tasks"]), unique=True))}
    if draw(st.booleans()):
        doc["decisions"] = [{"id": "D-1", "decision": draw(words), "reason": draw(words)}]
    return doc


@st.composite
def change_docs(draw: st.DrawFn) -> dict[str, Any]:
    """A valid change.yaml."""
    return {"schema": "spec-driven", "created": "2026-11-20", "description": draw(words)}


@st.composite
def pipeline_docs(draw: st.DrawFn) -> dict[str, Any]:
    """A valid pipeline (SPEC B): a chain of stages, each producing what the next needs,
    plus its kinds config (B4)."""
    ids = draw(st.lists(snake, min_size=1, max_size=4, unique=True))
    stages, transitions = [], []
    for i, stage in enumerate(ids):
        spec: dict[str, Any] = {"id": stage, "prompt": f"prompts/{stage}.md",
                                "produces": [{"name": f"{stage}_out", "kind": "note"}],
                                "token_budget": draw(st.integers(1, 100_000)),
                                "max_retries": draw(st.integers(0, 5))}
        if i:
            spec["needs"] = [f"{ids[i - 1]}_out"]
        stages.append(spec)
        transitions.append({"id": f"t{i}", "from": stage,
                            "to": ids[i + 1] if i + 1 < len(ids) else "done",
                            "condition_type": "artifact_validated",
                            "condition_artifact_id": f"{stage}_out"})
    return {"id": "fuzzed", "start": ids[0], "stages": stages, "transitions": transitions}


KINDS_DOC: dict[str, Any] = {"artifacts": [
    {"id": "note", "schema_path": "schemas/note.json", "llm_emitted": True}]}
NOTE_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"text": {"type": "string"}}}


@st.composite
def profile_docs(draw: st.DrawFn) -> dict[str, Any]:
    """A valid routing profile (D7), as `provider_profile_init` writes it."""
    from crewbook.routing.presets import builtin_families, get_preset
    from crewbook.routing.profiles import profile_data

    return profile_data(get_preset(draw(st.sampled_from(builtin_families()))))


@st.composite
def policy_docs(draw: st.DrawFn) -> dict[str, Any]:
    """A valid review policy (C7)."""
    doc: dict[str, Any] = {"policy": draw(st.sampled_from(["always", "risk-based"])),
                           "max_lines": draw(st.integers(0, 500))}
    if draw(st.booleans()):
        doc["sensitive"] = {"billing": ["billing/**"]}
    return doc


@st.composite
def task_docs(draw: st.DrawFn) -> dict[str, Any]:
    """A valid delivery task file (C3, C4)."""
    return {"id": draw(kebab), "description": draw(words),
            "mode": draw(st.sampled_from(["coordinator", "standard"])),
            "limits": {"steps": draw(st.integers(1, 100)), "wait_minutes": 30}}


@st.composite
def crew_docs(draw: st.DrawFn) -> dict[str, Any]:
    """A valid `_codev/crew.yaml` (D5, D6): stacks and workshop axes."""
    return {"stacks": [{"name": "python", "cwd": ".", "test": "pytest -q"}],
            "workshop": draw(st.lists(words, min_size=1, max_size=3, unique=True))}


@st.composite
def payload_docs(draw: st.DrawFn) -> dict[str, Any]:
    """A valid crew report payload file (D2): one JSON object."""
    return {"files": draw(st.lists(st.sampled_from(["a.py", "b.md"]), max_size=2)),
            "notes": draw(words), "count": draw(st.integers(0, 1000))}


@st.composite
def crew_state_docs(draw: st.DrawFn) -> dict[str, Any]:
    """A valid `_codev/crew/state.json` (D1-D5): a run, its settings, a pointer, a trail."""
    acts = draw(st.integers(0, 4))
    roles = ["analyst", "developer", "qa"]
    trail = [{"act": n, "ts": "2026-01-01T00:00:00+00:00", "role": roles[(n - 1) % 3],
              "verdict": "done" if n % 3 else "no-go", "summary": draw(words),
              "epic": "add-csv-export", "story": "Export"} for n in range(1, acts + 1)]
    return {"format": 1, "run": f"crew-{draw(st.integers(1, 9))}",
            "config": {"goal": draw(words), "scope": draw(st.sampled_from(["story", "epic"])),
                       "max_rounds": draw(st.integers(0, 50)), "max_epics": 3,
                       "bar": {"test": {"command": "true"}}},
            "expected": roles[acts % 3], "acts": acts, "epic": "add-csv-export",
            "story": "Export", "trail": trail}


@st.composite
def loop_state_docs(draw: st.DrawFn) -> dict[str, Any]:
    """A valid `_codev/crew/loop.json` (D6)."""
    return {"format": 1, "run": f"loop-{draw(st.integers(1, 9))}", "goal": draw(words),
            "phase": draw(st.sampled_from(["plan", "implementation", "recette", "delivery"])),
            "steps": draw(st.integers(0, 9)), "recettes": draw(st.integers(0, 2)),
            "max_recettes": 3}


@st.composite
def sim_policy_docs(draw: st.DrawFn) -> dict[str, Any]:
    """A valid simulation `policy.yaml`: fail rates per role."""
    return {"policy": "random", "roles": {
        role: {"fail": draw(st.sampled_from([0, 0.1, 0.25, 0.5]))}
        for role in draw(st.lists(st.sampled_from(["qa", "reviewer", "developer"]),
                                  min_size=1, max_size=3, unique=True))}}


@st.composite
def ledger_docs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A valid ledger: runs of events numbered from 0."""
    events: list[dict[str, Any]] = []
    for r in range(draw(st.integers(1, 3))):
        kinds = ["init", *draw(st.lists(st.sampled_from(["act", "report", "note"]),
                                        max_size=6)), "finish"]
        for seq, kind in enumerate(kinds):
            event: dict[str, Any] = {"v": 1, "ts": f"2025-03-01T09:{seq:02d}:00Z",
                                     "run": f"run-{r}", "seq": seq, "loop": "crew",
                                     "kind": kind}
            if kind in ("act", "report"):
                event["role"] = draw(st.sampled_from(["analyst", "developer", "qa"]))
                event["tokens_in"] = draw(st.integers(0, 10_000))
            if kind == "finish":
                event["verdict"] = "scope_covered"
            event["payload"] = {"task": draw(kebab)}
            events.append(event)
    return events


def diff_texts() -> st.SearchStrategy[str]:
    """`git diff --numstat` (with and without -z) and unified-diff texts."""
    paths = st.lists(st.sampled_from(["src/app.py", "secrets/x.pem", "README.md",
                                      "db/migrations/001.sql", "a b/c.txt"]),
                     min_size=1, max_size=4, unique=True)
    numstat = paths.map(lambda ps: "".join(f"{i}\t{i}\t{p}\n" for i, p in enumerate(ps)))
    numstat_z = paths.map(lambda ps: "".join(f"{i}\t1\t{p}\0" for i, p in enumerate(ps)))
    unified = paths.map(lambda ps: "".join(
        f"diff --git a/{p} b/{p}\n--- a/{p}\n+++ b/{p}\n@@ -1,1 +1,1 @@\n-old\n+new\n"
        for p in ps))
    return st.one_of(numstat, numstat_z, unified)


# -- serialising -----------------------------------------------------------------------------


def to_yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(type(value))


def to_toml(data: dict[str, Any]) -> str:
    """Enough TOML for our documents: scalars and inline values, arrays of tables."""
    head = [f"{k} = {_toml_value(v)}" for k, v in data.items()
            if not (isinstance(v, list) and v and isinstance(v[0], dict))]
    out = "\n".join(head) + "\n"
    for key, value in data.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            for item in value:
                out += f"\n[[{key}]]\n" + "".join(
                    f"{k} = {_toml_value(v)}\n" for k, v in item.items())
    return out


def to_jsonl(events: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events)


# -- mutations -------------------------------------------------------------------------------

TAGS = ["!!float", "!!int", "!!bool", "!!timestamp", "!!binary", "!!set", "!!omap", "!!str",
        "!!null", "!!python/object", "!!map", "!!seq", "!custom", "&a", "*a", "<<:"]
HUGE = ["9" * 5000, "1e999", "-1e999", "nan", "inf", str(2**63), str(2**64), str(10**44),
        "-" + str(2**63 + 1), "0x" + "f" * 40, "1" * 30]
ODD_TEXT = ["\x00", "\ud800", "\\ud800", "\udcff", "\u202e", "\ufeff", "[", "]", "{", "}",
            "'", '"', "\\", "\n", "\t", "../" * 3, "/etc/passwd", "x" * 300, "é", "🚀",
            ": ", "- ", "#", "&", "*", "%", "@", "`", "|", ">", "=", ",", "?"]


def _nest(depth: int, style: str) -> str:
    if style == "list":
        return "[" * depth + "]" * depth
    if style == "map":
        return "{a: " * depth + "1" + "}" * depth
    return "a = " + "{b = " * depth + "1" + "}" * depth


@st.composite
def mutations(draw: st.DrawFn, text: str) -> bytes:
    """`text` broken in 1 to 4 ways, as bytes (so byte-level damage is possible)."""
    data = text.encode("utf-8")
    for _ in range(draw(st.integers(1, 4))):
        lines = data.split(b"\n")
        how = draw(st.sampled_from([
            "flip", "delete_line", "duplicate_line", "swap_lines", "insert_line",
            "replace_value", "tag", "huge", "odd", "nest", "truncate", "indent",
        ]))
        at = draw(st.integers(0, max(len(lines) - 1, 0)))
        if how == "flip" and data:
            i = draw(st.integers(0, len(data) - 1))
            data = data[:i] + bytes([draw(st.integers(0, 255))]) + data[i + 1:]
            continue
        if how == "delete_line" and len(lines) > 1:
            del lines[at]
        elif how == "duplicate_line":
            lines.insert(at, lines[at])
        elif how == "swap_lines" and len(lines) > 1:
            other = draw(st.integers(0, len(lines) - 1))
            lines[at], lines[other] = lines[other], lines[at]
        elif how == "insert_line":
            key = draw(st.one_of(st.text(max_size=12), st.sampled_from(ODD_TEXT)))
            value = draw(st.one_of(st.text(max_size=12), st.sampled_from(HUGE + ODD_TEXT)))
            sep = draw(st.sampled_from([": ", " = ", '": "', ":", "="]))
            lines.insert(at, f"{key}{sep}{value}".encode("utf-8", "surrogatepass"))
        elif how in ("replace_value", "tag", "huge", "odd"):
            line = lines[at].decode("utf-8", "surrogateescape")
            cut = max(line.find(": "), line.find(" = "), line.find('":'))
            head, tail = (line[:cut + 2], line[cut + 2:]) if cut >= 0 else (line, "")
            if how == "tag":
                tail = f"{draw(st.sampled_from(TAGS))} {tail}"
            elif how == "huge":
                tail = draw(st.sampled_from(HUGE))
            elif how == "odd":
                tail = tail + draw(st.sampled_from(ODD_TEXT))
            else:
                tail = draw(st.one_of(st.text(max_size=20), st.sampled_from(HUGE + ODD_TEXT),
                                      st.integers().map(str)))
            lines[at] = (head + tail).encode("utf-8", "surrogatepass")
        elif how == "nest":
            depth = draw(st.sampled_from([3, 70, 1200, 5000]))
            style = draw(st.sampled_from(["list", "map", "toml"]))
            lines.insert(at, f"deep: {_nest(depth, style)}".encode())
        elif how == "truncate" and data:
            data = data[:draw(st.integers(0, len(data)))]
            continue
        elif how == "indent":
            lines[at] = b" " * draw(st.integers(1, 5)) + lines[at]
        data = b"\n".join(lines)
    return data


# -- targets ---------------------------------------------------------------------------------

Reader = Callable[[Path], Any]


@dataclass(frozen=True)
class Target:
    """One file format: how to build a valid document, where to write it, what reads it.

    `write(root, data)` puts the (mutated) bytes where crewbook looks for them and
    returns the path to give the readers and `crewbook validate`. `readers` may raise
    a `CrewbookError`; `safe_readers` are documented never to raise.
    """

    name: str
    documents: st.SearchStrategy[str]
    write: Callable[[Path, bytes], Path]
    readers: tuple[tuple[str, Reader], ...]
    safe_readers: tuple[tuple[str, Reader], ...] = ()
    cli: bool = True


def _put(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _write_schema(root: Path, data: bytes) -> Path:
    folder = root / "_codev" / "schemas" / "fuzzed"
    _put(folder / "templates" / "first.md", b"# template\n")
    _put(folder / "schema.yaml", data)
    return folder


def _write_config(root: Path, data: bytes) -> Path:
    return _put(root / "_codev" / "config.yaml", data)


def _write_change(root: Path, data: bytes) -> Path:
    (root / "_codev").mkdir(parents=True, exist_ok=True)
    return _put(root / "_codev" / "changes" / "fuzzed" / "change.yaml", data).parent


def _write_pipeline(root: Path, data: bytes) -> Path:
    _put(root / "config.toml", to_toml(KINDS_DOC).encode())
    _put(root / "schemas" / "note.json", json.dumps(NOTE_SCHEMA).encode())
    for name in ("a", "b"):
        _put(root / "prompts" / f"{name}.md", b"Do the work.\n")
    return _put(root / "pipeline.toml", data)


def _write_kinds(root: Path, data: bytes) -> Path:
    _put(root / "config.toml", data)
    _put(root / "schemas" / "note.json", json.dumps(NOTE_SCHEMA).encode())
    _put(root / "prompts" / "a.md", b"Do the work.\n")
    doc = {"id": "p", "start": "a", "stages": [
        {"id": "a", "prompt": "prompts/a.md", "produces": [{"name": "n", "kind": "note"}]}],
        "transitions": [{"id": "t", "from": "a", "to": "done",
                         "condition_type": "artifact_validated", "condition_artifact_id": "n"}]}
    return _put(root / "pipeline.toml", to_toml(doc).encode())


def _write_json_schema(root: Path, data: bytes) -> Path:
    path = _write_kinds(root, to_toml(KINDS_DOC).encode())
    _put(root / "schemas" / "note.json", data)
    return path


def _write_payload(root: Path, data: bytes) -> Path:
    (root / "_codev").mkdir(parents=True, exist_ok=True)  # a project for the crew API
    return _put(root / "payload.json", data)


def _write_crew_state(name: str) -> Callable[[Path, bytes], Path]:
    """The tour project with a change, its `_codev/crew/<name>` the mutated bytes."""

    def write(root: Path, data: bytes) -> Path:
        import crewbook

        if not (root / "tour").exists():
            crewbook.example_project(dest=root / "tour")
        _put(root / "tour" / "_codev/changes/add-csv-export/tasks.md",
             b"# Tasks\n\n## Export\n\n- [ ] 1.1 Add the button\n")
        return _put(root / "tour" / "_codev" / "crew" / name, data)

    return write


def _write_plain(name: str) -> Callable[[Path, bytes], Path]:
    def write(root: Path, data: bytes) -> Path:
        return _put(root / name, data)

    return write


def _targets() -> dict[str, Target]:
    from crewbook import list_schemas, load_pipeline, load_schema, validate_pipeline
    from crewbook.artifacts.change import open_change
    from crewbook.artifacts.project import load_config
    from crewbook.artifacts.schema import validate_schema
    from crewbook.delivery.diffstat import read_change
    from crewbook.delivery.model import load_task
    from crewbook.delivery.review import load_review_policy, review_required
    from crewbook.ledger import read_ledger, validate_ledger
    from crewbook.routing.profiles import load_profile

    def ledger_skip(path: Path) -> Any:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return read_ledger(path, errors="skip")

    def decide(path: Path) -> Any:
        return review_required(read_change(path.read_bytes()))

    def crew_file(path: Path) -> Any:
        from crewbook.artifacts.project import Project
        from crewbook.crew.backlog import Backlog

        return Backlog(Project(path.parents[1])).crew_file()

    def crew_state(path: Path) -> Any:
        from crewbook.crew.api import crew_status, open_crew

        loop = open_crew(path.parents[2], run_bar=False)
        loop.contract()
        return crew_status(project=path.parents[2]).to_dict()

    def loop_state(path: Path) -> Any:
        from crewbook.autonomous.api import open_autonomous

        loop = open_autonomous(path.parents[2])
        return loop.contract(), loop.status()

    def sim_policy(path: Path) -> Any:
        from crewbook.simulate import load_policy

        return load_policy(path)

    def payload(path: Path) -> Any:
        from crewbook.artifacts.project import Project
        from crewbook.crew.checks import load_payload

        return load_payload(None, path.name, Project(path.parent))

    return {t.name: t for t in (
        Target("schema", schema_docs().map(to_yaml), _write_schema,
               (("load_schema", load_schema),
                ("list_schemas", lambda p: list_schemas(p.parents[2]).to_dict())),
               (("validate_schema", validate_schema),)),
        Target("config", config_docs().map(to_yaml), _write_config,
               (("load_config", lambda p: load_config(p.parent.parent)),)),
        Target("change", change_docs().map(to_yaml), _write_change,
               (("open_change", lambda p: open_change(p, p.parents[2]).status()),)),
        Target("pipeline", pipeline_docs().map(to_toml), _write_pipeline,
               (("load_pipeline", load_pipeline),),
               (("validate_pipeline", validate_pipeline),)),
        Target("kinds", st.just(to_toml(KINDS_DOC)), _write_kinds,
               (("load_pipeline", load_pipeline),),
               (("validate_pipeline", validate_pipeline),)),
        Target("json_schema", st.just(json.dumps(NOTE_SCHEMA, indent=1)), _write_json_schema,
               (("load_pipeline", load_pipeline),),
               (("validate_pipeline", validate_pipeline),)),
        Target("profile", profile_docs().map(to_yaml), _write_plain("profile.yaml"),
               (("load_profile", load_profile),), cli=False),
        Target("policy", policy_docs().map(to_yaml), _write_plain("review.yaml"), (),
               (("load_review_policy", load_review_policy),), cli=False),
        Target("task", task_docs().map(to_yaml), _write_plain("task.yaml"),
               (("load_task", load_task),), cli=False),
        Target("ledger", ledger_docs().map(to_jsonl), _write_plain("run.jsonl"),
               (("read_ledger", read_ledger), ("read_ledger(skip)", ledger_skip)),
               (("validate_ledger", validate_ledger),)),
        Target("diff", diff_texts(), _write_plain("change.diff"), (),
               (("review_required", decide),), cli=False),
        Target("crew_file", crew_docs().map(to_yaml), _write_plain("_codev/crew.yaml"),
               (("Backlog.crew_file", crew_file),), cli=False),
        Target("payload", payload_docs().map(json.dumps), _write_payload,
               (("load_payload", payload),), cli=False),
        Target("crew_state", crew_state_docs().map(json.dumps), _write_crew_state("state.json"),
               (("open_crew", crew_state),), cli=False),
        Target("loop_state", loop_state_docs().map(json.dumps), _write_crew_state("loop.json"),
               (("open_autonomous", loop_state),), cli=False),
        Target("sim_policy", sim_policy_docs().map(to_yaml), _write_plain("policy.yaml"),
               (("load_policy", sim_policy),), cli=False),
    )}


TARGETS: dict[str, Target] = {}


def targets() -> dict[str, Target]:
    """Every fuzzed format, by name (built on first use: it imports crewbook)."""
    if not TARGETS:
        TARGETS.update(_targets())
    return TARGETS


def run_readers(target: Target, path: Path) -> list[tuple[str, BaseException]]:
    """Feed `path` to every reader of `target`: the (reader, exception) pairs that break
    the rule (anything but a `CrewbookError`, or any exception from a safe reader)."""
    import warnings

    from crewbook.errors import CrewbookError

    broken: list[tuple[str, BaseException]] = []
    with warnings.catch_warnings():  # a reader may warn (a cut ledger line): not a crash
        warnings.simplefilter("ignore")
        _run(target, path, broken, CrewbookError)
    return broken


def _run(target: Target, path: Path, broken: list[tuple[str, BaseException]],
         expected: type[BaseException]) -> None:
    for label, reader in target.readers:
        try:
            reader(path)
        except expected:
            continue  # refused with a CrewbookError: what a reader must do with bad input
        except Exception as exc:
            broken.append((label, exc))
    for label, reader in target.safe_readers:
        try:
            reader(path)
        except Exception as exc:
            broken.append((label, exc))


def run_cli(path: Path) -> tuple[int, str, BaseException | None]:
    """`crewbook validate PATH --json` in process: (exit status, stdout, exception)."""
    import contextlib
    import io

    from crewbook.commands import main

    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(["validate", str(path), "--json"])
    except SystemExit as exc:
        return int(exc.code or 0), out.getvalue(), None
    except Exception as exc:
        return -1, out.getvalue(), exc
    return status, out.getvalue(), None
