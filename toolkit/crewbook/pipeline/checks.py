"""Every check of a pipeline file beyond its keys and types, each problem at file:line.

Errors (the pipeline cannot run): ``duplicate_stage``, ``duplicate_transition``,
``reserved_stage``, ``duplicate_artifact``, ``unknown_start``, ``unknown_stage``,
``unknown_kind``, ``stage_cannot_start``, ``condition_not_produced``,
``missing_condition``, ``unknown_condition_field``.

Warnings (it runs, but probably not as meant): ``unreachable_stage``, ``no_way_out``,
``uncapped_loop``, ``prompt_not_found``, ``judges_unseen`` (B5), ``impossible_condition``,
``cannot_write``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import Problem, UnsafePathError, did_you_mean, ordinal
from ..ledger.conformance import Event, LoopRules
from ..models import contained, path_defect
from ..sources import SourceDoc
from .kinds import FILE_WRITTEN, ArtifactKind, unknown_kind_message
from .lint import read_prompt, stage_comments, unseen_mentions
from .model import DONE, RESERVED_IDS, WRITE_TOOLS, PipelineFile
from .topology import Topology


def can_write(tools: tuple[str, ...]) -> bool:
    """Whether these allowed tools let a stage change files."""
    return any(t in WRITE_TOOLS for t in tools)


def check_pipeline(
    model: PipelineFile, doc: SourceDoc, kinds: Mapping[str, ArtifactKind],
    config: Path | None, folder: Path, text: str = "", *, kinds_known: bool = True,
) -> tuple[Topology, list[Problem]]:
    """The topology of `model` and every problem found, errors and warnings.

    `kinds_known` False (the kinds config could not be read) leaves unknown kinds
    unreported: the config's own problems say why.
    """
    problems: list[Problem] = []
    problems += _ids(model, doc)
    topo = Topology(model)
    problems += _references(model, doc, topo, kinds, config, kinds_known)
    problems += _needs(model, doc, topo)
    problems += _conditions(model, doc, kinds)
    problems += _shape(model, doc, topo)
    problems += _files(model, doc, folder)
    problems += _unseen(model, doc, topo, kinds, folder, text)
    return topo, problems


def _ids(model: PipelineFile, doc: SourceDoc) -> list[Problem]:
    out: list[Problem] = []
    seen: dict[str, int] = {}
    for i, stage in enumerate(model.stages):
        if stage.id in RESERVED_IDS:
            out.append(doc.problem("reserved_stage", f"{stage.id!r} is reserved for the end of "
                                   "a run; name the stage otherwise", ("stages", i, "id")))
        elif stage.id in seen:
            out.append(doc.problem("duplicate_stage", f"stage {stage.id!r} is declared twice "
                                   f"(first as stages[{seen[stage.id]}])", ("stages", i, "id")))
        else:
            seen[stage.id] = i
        names: set[str] = set()
        for j, produce in enumerate(stage.produces):
            if produce.name in names:
                out.append(doc.problem(
                    "duplicate_artifact", f"stage {stage.id!r} produces {produce.name!r} twice",
                    ("stages", i, "produces", j, "name")))
            names.add(produce.name)
    ids: dict[str, int] = {}
    for i, t in enumerate(model.transitions):
        if t.id in ids:
            out.append(doc.problem("duplicate_transition", f"transition {t.id!r} is declared "
                                   f"twice (first as transitions[{ids[t.id]}])",
                                   ("transitions", i, "id")))
        ids.setdefault(t.id, i)
    return out


def _references(model: PipelineFile, doc: SourceDoc, topo: Topology,
                kinds: Mapping[str, ArtifactKind], config: Path | None,
                kinds_known: bool) -> list[Problem]:
    out: list[Problem] = []
    stages = topo.order
    if model.start not in topo.stages:
        out.append(doc.problem(
            "unknown_start", f"start names no stage: {model.start!r}"
            + (did_you_mean(model.start, stages) or f"; stages: {', '.join(stages)}"),
            ("start",)))
    for i, t in enumerate(model.transitions):
        if t.from_ not in topo.stages:
            out.append(doc.problem(
                "unknown_stage", f"transition {t.id!r} leaves {t.from_!r}, which is not a stage"
                + (did_you_mean(t.from_, stages) or f"; stages: {', '.join(stages)}"),
                ("transitions", i, "from")))
        if t.to not in topo.stages and t.to != DONE:
            out.append(doc.problem(
                "unknown_stage", f"transition {t.id!r} goes to {t.to!r}, which is neither a "
                f"stage nor {DONE!r}" + did_you_mean(t.to, [*stages, DONE]),
                ("transitions", i, "to")))
    for i, stage in enumerate(model.stages):
        for j, produce in enumerate(stage.produces):
            if produce.kind not in kinds and kinds_known:
                out.append(doc.problem("unknown_kind",
                                       unknown_kind_message(produce.kind, kinds, config),
                                       ("stages", i, "produces", j, "kind")))
    return out


def _needs(model: PipelineFile, doc: SourceDoc, topo: Topology) -> list[Problem]:
    out: list[Problem] = []
    for i, stage in enumerate(model.stages):
        if stage.id not in topo.depth:
            continue  # unreachable: reported once, as such
        for k, need in enumerate(stage.needs):
            owners = topo.producers.get(need, [])
            where = ("stages", i, "needs", k)
            if not owners:
                out.append(doc.problem(
                    "stage_cannot_start", f"stage {stage.id!r} can never start: it needs "
                    f"{need!r}, which no stage produces" + did_you_mean(need, topo.producers),
                    where))
            elif not any(topo.runs_before(owner, stage.id) for owner in owners):
                out.append(doc.problem(
                    "stage_cannot_start", f"stage {stage.id!r} can never start: it needs "
                    f"{need!r}, produced only by {', '.join(map(repr, owners))}, which "
                    "cannot run before it", where))
    return out


def _conditions(model: PipelineFile, doc: SourceDoc,
                kinds: Mapping[str, ArtifactKind]) -> list[Problem]:
    out: list[Problem] = []
    stages = {s.id: s for s in reversed(model.stages)}
    for i, t in enumerate(model.transitions):
        where = ("transitions", i)
        source = stages.get(t.from_)
        if t.condition_type == "artifact_field_equals":
            for key in ("condition_field", "condition_value"):
                if getattr(t, key) is None:
                    out.append(doc.problem(
                        "missing_condition", f"an artifact_field_equals transition needs "
                        f"{key}", (*where, "condition_type")))
        if source is None:
            continue
        produced = {p.name: p.kind for p in source.produces}
        if t.condition_artifact_id not in produced:
            out.append(doc.problem(
                "condition_not_produced", f"transition {t.id!r} tests "
                f"{t.condition_artifact_id!r}, which its from-stage {source.id!r} does not "
                f"produce" + (did_you_mean(t.condition_artifact_id, produced)
                              or f" (it produces {', '.join(produced) or 'nothing'})"),
                (*where, "condition_artifact_id")))
            continue
        kind = kinds.get(produced[t.condition_artifact_id])
        if t.condition_type != "artifact_field_equals" or t.condition_field is None:
            continue
        if kind is None or not kind.declares_properties():
            continue
        schema = kind.field_schema(t.condition_field)
        if schema is None:
            out.append(doc.problem(
                "unknown_condition_field", f"kind {kind.id!r} declares no field "
                f"{t.condition_field!r}" + (did_you_mean(t.condition_field, kind.fields())
                                            or f"; fields: {', '.join(kind.fields())}"),
                (*where, "condition_field")))
        else:
            out += _enum(doc, t.condition_value, t.condition_operator, schema,
                         (*where, "condition_value"))
    return out


def _enum(doc: SourceDoc, value: Any, operator: str, schema: dict[str, Any],
          where: tuple[str | int, ...]) -> list[Problem]:
    allowed = schema.get("enum")
    if value is None or not isinstance(allowed, list) or value in allowed:
        return []
    never = "is never taken" if operator == "eq" else "is always taken"
    return [doc.problem(
        "impossible_condition", f"{value!r} is not one of {allowed}: the transition {never}",
        where, severity="warning")]


def _root_cause(model: PipelineFile, doc: SourceDoc, topo: Topology) -> str:
    """What the shape warnings follow from, when a transition names no stage: those
    warnings are then consequences, and the text says which error to fix first."""
    for i, t in enumerate(model.transitions):
        if t.from_ not in topo.stages or (t.to not in topo.stages and t.to != DONE):
            pos = doc.position(("transitions", i, "from" if t.from_ not in topo.stages
                                else "to"))
            where = f" (line {pos.line})" if pos else ""
            return (f"; this follows from transition {t.id!r}{where}, which names no stage: "
                    "fix that error first")
    return ""


def _shape(model: PipelineFile, doc: SourceDoc, topo: Topology) -> list[Problem]:
    out: list[Problem] = []
    if model.start not in topo.stages:
        return out
    cause = _root_cause(model, doc, topo)
    first = {s.id: i for i, s in reversed(list(enumerate(model.stages)))}
    for stage_id, i in sorted(first.items(), key=lambda kv: kv[1]):
        if stage_id not in topo.depth:
            out.append(doc.problem(
                "unreachable_stage", f"stage {stage_id!r} can never run: no transition leads "
                f"to it from the start {model.start!r}{cause}", ("stages", i),
                severity="warning"))
        elif not topo.out[stage_id]:
            out.append(doc.problem(
                "no_way_out", f"stage {stage_id!r} has no transition out: a run that reaches "
                f"it can only escalate{cause}", ("stages", i), severity="warning"))
        elif not topo.reaches_done(stage_id):
            out.append(doc.problem(
                "no_way_out", f"stage {stage_id!r} can never reach {DONE!r}: a run that "
                f"reaches it can only loop until it escalates{cause}", ("stages", i),
                severity="warning"))
    for i, t in enumerate(model.transitions):
        if topo.is_loop(t) and t.from_ in topo.depth:
            target = topo.stages[t.to]
            if target.max_retries is None:
                out.append(doc.problem(
                    "uncapped_loop", f"transition {t.id!r} sends work back to {t.to!r}, which "
                    "sets no max_retries: nothing caps the rounds of this loop",
                    ("transitions", i), severity="warning"))
    return out


def _files(model: PipelineFile, doc: SourceDoc, folder: Path) -> list[Problem]:
    out: list[Problem] = []
    for i, stage in enumerate(model.stages):
        try:
            found = None if path_defect(stage.prompt) else contained(folder, stage.prompt)
        except UnsafePathError as exc:
            out.append(doc.problem("unsafe_path", f"prompt {exc}", ("stages", i, "prompt")))
            continue
        if found is None or not found.is_file():
            out.append(doc.problem(
                "prompt_not_found", f"prompt file {stage.prompt!r} does not exist (relative "
                "to the pipeline file); it must exist for a real run", ("stages", i, "prompt"),
                severity="warning"))
        writer = can_write(stage.allowed_tools)
        if not writer and (stage.writes is not None
                           or any(p.kind == FILE_WRITTEN for p in stage.produces)):
            key = "writes" if stage.writes is not None else "allowed_tools"
            out.append(doc.problem(
                "cannot_write", f"stage {stage.id!r} writes files but its allowed_tools hold "
                f"no write tool ({', '.join(sorted(WRITE_TOOLS)[:2])}); its writes will be "
                "refused", ("stages", i, key), severity="warning"))
    return out


def _unseen(model: PipelineFile, doc: SourceDoc, topo: Topology,
            kinds: Mapping[str, ArtifactKind], folder: Path, text: str) -> list[Problem]:
    headers = sorted(doc.positions[("stages", i)].line for i in range(len(model.stages))
                     if ("stages", i) in doc.positions)
    texts: dict[str, dict[str, str]] = {}
    for i, stage in enumerate(model.stages):
        pos = doc.positions.get(("stages", i))
        comments = ""
        if pos is not None and text:
            later = [line for line in headers if line > pos.line]
            later += [doc.positions[("transitions", k)].line
                      for k in range(len(model.transitions))
                      if ("transitions", k) in doc.positions
                      and doc.positions[("transitions", k)].line > pos.line]
            comments = stage_comments(text, pos.line, min(later) if later else None)
        texts.setdefault(stage.id, {"comments": comments,
                                    "prompt": read_prompt(folder, stage.prompt)})
    out: list[Problem] = []
    for mention in unseen_mentions(topo, kinds, texts):
        i = next(k for k, s in enumerate(model.stages) if s.id == mention.stage)
        key = ("stages", i, "needs") if model.stages[i].needs else ("stages", i)
        where = "prompt" if mention.source == "prompt" else "comments"
        out.append(doc.problem(
            "judges_unseen", f"the {where} of stage {mention.stage!r} name "
            f"{mention.phrase!r} ({mention.artifact}), but the stage does not need "
            f"{mention.artifact!r}: it will never see it; add it to needs", key,
            severity="warning"))
    return out



# -- the rules of the pipeline loop, checked on its ledgers --------------------------------


def _pipeline_rules(events: Sequence[Event]) -> list[tuple[int | None, str, str]]:
    """B2/B6/B7 on a ledger: reports come from the pipeline's stages, and a stage's
    ``max_retries`` (the ``init`` payload's ``caps``) caps what the engine caps.

    Two counts, as the engine keeps them, not the ``attempt`` field (which counts every
    entry into a stage and every try): the times work is *sent back* to a stage by a
    loop transition (the transition's ``round`` is that count plus one), and the failed
    tries of one visit (the try after ``max_retries`` failed retries escalates, so no
    report of that stage may follow it).
    """
    payload = events[0].get("payload") if events and events[0]["kind"] == "init" else None
    if not isinstance(payload, dict):
        return []
    stages, caps = payload.get("stages"), payload.get("caps")
    caps = caps if isinstance(caps, dict) else {}
    out: list[tuple[int | None, str, str]] = []
    failed: dict[str, int] = {}  # failed tries in the stage's current visit
    for event in events:
        kind, seq = event["kind"], int(event["seq"])
        if kind == "transition":
            target, moved = event.get("stage"), event.get("payload")
            failed.pop(str(target), None)  # a new visit
            cap = caps.get(target)
            if isinstance(moved, dict) and moved.get("loop") and isinstance(cap, int):
                round_ = moved.get("round")
                if isinstance(round_, int) and round_ > cap + 1:
                    out.append((seq, "cap_exceeded", f"work sent back to stage {target!r} "
                                f"a {ordinal(round_ - 1)} time, where its max_retries "
                                f"allows {cap} (B6: the run escalates instead)"))
            continue
        if kind not in ("report", "verdict"):
            continue
        role = event["role"]
        if isinstance(stages, list) and role not in stages:
            out.append((seq, "unexpected_role", f"{role!r} is no stage of this pipeline "
                        f"({', '.join(map(str, stages))})"))
        cap = caps.get(role)
        if kind != "report" or not isinstance(cap, int):
            continue
        before = failed.get(role, 0)
        if before > cap:
            out.append((seq, "cap_exceeded", f"stage {role!r} reports after {before} failed "
                        f"tries in a row, where its max_retries allows {cap} retries "
                        f"(B7: the try after the last retry escalates)"))
        if event.get("verdict") == "failed":
            failed[role] = before + 1
    return out


#: The pipeline loop's ledger conformance rules (`crewbook.pipeline.family`).
PIPELINE_RULES = (LoopRules("pipeline", turns="stage", checks=(_pipeline_rules,)),)
