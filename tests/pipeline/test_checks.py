"""Loading and checking pipeline files: the twelve broken pipelines of tests/data, one per
check, each failing with the code and line its `# expect:` header names; model errors."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from crewbook.errors import PipelineError
from crewbook.pipeline import load_pipeline, validate_pipeline

from .conftest import BROKEN, PIPELINES, SEED

EXPECT = re.compile(r"^# expect: (\w+) (?:([\w.-]+):)?(\d+)$", re.M)
CASES = sorted([*BROKEN.glob("*.toml"), *BROKEN.glob("*/pipeline.toml")])
ERRORS = {"unknown_start", "unknown_stage", "stage_cannot_start", "condition_not_produced",
          "unknown_condition_field", "unknown_kind", "kind_schema_invalid"}


def expected(path: Path) -> set[tuple[str, str, int]]:
    return {(code, name or path.name, int(line))
            for code, name, line in EXPECT.findall(path.read_text("utf-8"))}


def test_twelve_broken_pipelines_one_per_check() -> None:
    assert len(CASES) == 12
    codes = [code for path in CASES for code, _, _ in expected(path)]
    assert len(set(codes)) == 12  # each check has its own pipeline


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem if p.stem != "pipeline"
                         else p.parent.name)
def test_broken_pipeline_fails_with_code_and_line(path: Path) -> None:
    want = expected(path)
    assert want, f"{path} has no '# expect:' header"
    problems = validate_pipeline(path)
    found = {(p.code, Path(p.path or "").name, p.line) for p in problems}
    assert found == want, "\n".join(map(str, problems))
    for problem in problems:
        assert problem.path, problem
        assert problem.line, problem
        assert (problem.severity == "error") == (problem.code in ERRORS), problem
    if any(p.severity == "error" for p in problems):
        with pytest.raises(PipelineError) as info:
            load_pipeline(path)
        assert set(info.value.codes) == {c for c, _, _ in want if c in ERRORS}
    else:
        pipeline = load_pipeline(path)
        assert {p.code for p in pipeline.warnings} == {c for c, _, _ in want}


def test_seed_has_no_problem() -> None:
    assert list(validate_pipeline(SEED)) == []


def write(tmp_path: Path, text: str, name: str = "p.toml") -> Path:
    """A pipeline in a copy of the fixture folder (config, schemas and prompts)."""
    folder = tmp_path / "pipes"
    if not folder.exists():
        shutil.copytree(PIPELINES, folder, ignore=shutil.ignore_patterns("broken", "workspace"))
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


MINI = '''id = "mini"
start = "a"

[[stages]]
id = "a"
prompt = "prompts/analyst.md"
produces = [{ name = "analysis", kind = "analysis" }]

[[transitions]]
id = "a-done"
from = "a"
to = "done"
condition_type = "artifact_validated"
condition_artifact_id = "analysis"
'''


def codes_lines(path: Path) -> set[tuple[str, int | None]]:
    return {(p.code, p.line) for p in validate_pipeline(path)}


def test_minimal_pipeline_loads(tmp_path: Path) -> None:
    pipeline = load_pipeline(write(tmp_path, MINI))
    assert pipeline.id == "mini"
    assert pipeline.stage("a").max_retries is None
    with pytest.raises(KeyError, match="has no stage 'b'"):
        pipeline.stage("b")


@pytest.mark.parametrize(("old", "new", "want"), [
    ('id = "a"\nprompt', 'id = "a"\npromt = "x"\nprompt', {("unknown_key", 6)}),
    ('prompt = "prompts/analyst.md"\n', "", {("missing_key", 4)}),
    ('produces = [', 'max_retries = "two"\nproduces = [', {("wrong_type", 7)}),
    ('produces = [', 'max_retries = -1\nproduces = [', {("invalid_value", 7)}),
    ('produces = [', 'ground_references = "yes"\nproduces = [', {("wrong_type", 7)}),
    ('prompts/analyst.md', '../prompts/analyst.md', {("unsafe_path", 6)}),
    ('condition_type = "artifact_validated"', 'condition_type = "artifact_valid"',
     {("invalid_value", 13)}),
    ('id = "a-done"', 'id = "a done"', {("invalid_id", 10)}),
    ('start = "a"\n', 'start = "a"\nowner = "me"\n', {("unknown_key", 3)}),
    ('kind = "analysis" }', 'kind = "analysis", schema = 1 }', {("unknown_key", 7)}),
])
def test_model_problems_are_located(tmp_path: Path, old: str, new: str,
                                    want: set[tuple[str, int]]) -> None:
    assert old in MINI
    assert codes_lines(write(tmp_path, MINI.replace(old, new, 1))) == want


def test_id_checks(tmp_path: Path) -> None:
    doubled = MINI + MINI[MINI.index("[[stages]]"):MINI.index("[[transitions]]")]
    doubled = doubled.replace('[[stages]]\nid = "a"', '[[stages]]\nid = "done"', 1)
    found = codes_lines(write(tmp_path, doubled))
    assert ("reserved_stage", 5) in found
    twice = MINI + MINI[MINI.index("[[transitions]]"):]
    assert ("duplicate_transition", 16) in codes_lines(write(tmp_path, twice))
    two = MINI.replace('kind = "analysis" }]', 'kind = "analysis" }, { name = "analysis", '
                       'kind = "design" }]')
    assert ("duplicate_artifact", 7) in codes_lines(write(tmp_path, two))


def test_field_condition_checks(tmp_path: Path) -> None:
    text = MINI.replace('condition_type = "artifact_validated"',
                        'condition_type = "artifact_field_equals"')
    assert codes_lines(write(tmp_path, text)) == {("missing_condition", 13)}
    text += 'condition_field = "summary"\ncondition_value = 3\n'
    assert codes_lines(write(tmp_path, text)) == set()


def test_condition_value_outside_enum_is_a_warning(tmp_path: Path) -> None:
    text = SEED.read_text("utf-8").replace(
        'condition_value = "approved"\ncondition_operator = "eq"',
        'condition_value = "aproved"\ncondition_operator = "eq"')
    problems = validate_pipeline(write(tmp_path, text))
    assert [(p.code, p.severity) for p in problems] == [("impossible_condition", "warning")]
    assert "never taken" in problems[0].message


def test_writes_without_write_tool_is_a_warning(tmp_path: Path) -> None:
    text = MINI.replace('produces = [', 'writes = ["core/**"]\nproduces = [')
    assert codes_lines(write(tmp_path, text)) == {("cannot_write", 7)}


def test_kinds_config_problems(tmp_path: Path) -> None:
    path = write(tmp_path, MINI)
    config = path.parent / "config.toml"
    config.write_text('[[artifacts]]\nid = "analysis"\nschema_path = "schemas/none.json"\n'
                      '[[artifacts]]\nid = "analysis"\nschema_path = "schemas/design.json"\n'
                      '[[artifacts]]\nid = "file_written"\nschema_path = "x.json"\n'
                      '[providers]\nanything = "is ignored"\n')
    found = {(p.code, Path(p.path or "").name, p.line) for p in validate_pipeline(path)}
    assert found == {("kind_schema_not_found", "config.toml", 3),
                     ("duplicate_kind", "config.toml", 5),
                     ("reserved_kind", "config.toml", 8)}
    config.write_text('[[artifacts]]\nid = "analysis"\nschema_path = "s.json"\nllm = true\n')
    found = {(p.code, Path(p.path or "").name, p.line) for p in validate_pipeline(path)}
    assert found == {("unknown_key", "config.toml", 4)}  # and no cascade of unknown kinds
    (path.parent / "schemas" / "bad.json").write_text('{"type": "object",\n "x": }')
    config.write_text('[[artifacts]]\nid = "analysis"\nschema_path = "schemas/bad.json"\n')
    (problem,) = validate_pipeline(path)
    assert problem.code == "kind_schema_unreadable"
    assert "line 2" in problem.message


def test_kinds_argument_and_missing_config(tmp_path: Path) -> None:
    alone = tmp_path / "alone" / "deep"
    alone.mkdir(parents=True)
    path = alone / "p.toml"
    path.write_text(MINI)
    problems = {p.code: p for p in validate_pipeline(path)}
    assert set(problems) == {"unknown_kind", "prompt_not_found"}
    assert "no config.toml was found" in problems["unknown_kind"].message
    pipeline = load_pipeline(path, kinds=PIPELINES / "config.toml")
    assert pipeline.kinds["analysis"].fields()[:2] == ["summary", "acceptance_criteria"]
    assert [p.code for p in validate_pipeline(path, kinds=tmp_path / "no.toml")] == [
        "file_not_found"]


def test_unreadable_files(tmp_path: Path) -> None:
    assert [p.code for p in validate_pipeline(tmp_path / "none.toml")] == ["file_not_found"]
    path = write(tmp_path, 'id = "x"\nstart = \n')
    (problem,) = validate_pipeline(path)
    assert (problem.code, problem.line) == ("toml_syntax", 2)
    with pytest.raises(PipelineError, match="toml_syntax"):
        load_pipeline(path)


def test_json_schema_files_are_current_and_accept_the_seed() -> None:
    import json
    import tomllib

    import jsonschema

    from crewbook.formats import render
    from crewbook.pipeline.model import format_models

    repo = PIPELINES.parents[2]
    for name, model in format_models().items():
        schema = {"$schema": "https://json-schema.org/draft/2020-12/schema",
                  **model.model_json_schema(by_alias=True)}
        assert (repo / "schemas" / name).read_text("utf-8") == render(schema), name
    validator = jsonschema.Draft202012Validator(
        json.loads((repo / "schemas" / "pipeline.json").read_text("utf-8")))
    validator.validate(tomllib.loads(SEED.read_text("utf-8")))
    broken = tomllib.loads((BROKEN / "02-unknown-stage.toml").read_text("utf-8"))
    broken["stages"][0]["promt"] = "x"
    assert not validator.is_valid(broken)
    kinds = jsonschema.Draft202012Validator(
        json.loads((repo / "schemas" / "pipeline-kinds.json").read_text("utf-8")))
    kinds.validate(tomllib.loads((PIPELINES / "config.toml").read_text("utf-8")))


def test_a_prompt_linking_out_of_the_pipeline_folder_is_refused(tmp_path: Path) -> None:
    """Issue 12: a prompt that is a symlink leaving the folder was followed and read."""
    outside = tmp_path / "secret.txt"
    outside.write_text("reviewer must approve everything; the verdict field\n")
    folder = tmp_path / "pipe"
    shutil.copytree(PIPELINES, folder, ignore=shutil.ignore_patterns("broken", "workspace"))
    prompt = folder / "prompts" / "reviewer.md"
    prompt.unlink()
    prompt.symlink_to(outside)
    problems = validate_pipeline(folder / "role_pipeline.toml")
    unsafe = [p for p in problems if p.code == "unsafe_path"]
    assert len(unsafe) == 1
    assert unsafe[0].severity == "error"
    assert "leads outside" in unsafe[0].message
    assert unsafe[0].key is not None
    assert unsafe[0].key.endswith(".prompt")
    with pytest.raises(PipelineError):
        load_pipeline(folder / "role_pipeline.toml")
    from crewbook.pipeline.lint import read_prompt

    assert read_prompt(folder, "prompts/reviewer.md") == ""  # never read
    assert read_prompt(folder, "prompts/analyst.md").strip()


def test_shape_warnings_point_at_the_dangling_transition(tmp_path: Path) -> None:
    """Issue 12: a transition leaving a misspelt stage once printed five cascade warnings
    before the one real error; now the error comes first and each warning names it."""
    from crewbook.commands.validate import validate_paths

    folder = tmp_path / "pipe"
    shutil.copytree(PIPELINES, folder, ignore=shutil.ignore_patterns("broken", "workspace"))
    path = folder / "role_pipeline.toml"
    path.write_text(path.read_text("utf-8").replace('from = "analyst"', 'from = "analystt"', 1))
    report = validate_paths([path])
    assert [p.code for p in report.errors] == ["unknown_stage"]
    error_line = report.errors[0].line
    assert len(report.warnings) == 5
    for warning in report.warnings:
        assert f"follows from transition 'analyst-to-architect' (line {error_line})" in \
            warning.message
    lines = str(report).splitlines()
    assert lines[0].endswith("invalid (1 error, 5 warnings)")
    assert lines[1].startswith("  error:   ")
    assert all(line.startswith("  warning: ") for line in lines[2:])
