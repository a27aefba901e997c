"""Instructions for an artifact (SPEC A10) and roles by step (A7)."""

from __future__ import annotations

import pandas as pd
import pytest

import crewbook
from crewbook.errors import ArtifactNotFoundError, ConfigError, InvalidInputError


def disable_editor(tour) -> None:
    config = tour / "_codev" / "config.yaml"
    text = config.read_text("utf-8")
    old = "  editor:\n    done_when:\n      - Links the ticket\n"
    assert old in text
    config.write_text(text.replace(old, old + "    enabled: false\n"))


def test_instructions_combine_everything_for_an_artifact(tour) -> None:
    ins = crewbook.instructions("brief", "add-csv-export", tour)
    assert (ins.change, ins.schema, ins.artifact, ins.generates, ins.status) == (
        "add-csv-export",
        "lite",
        "brief",
        "brief.md",
        "done",
    )
    assert ins.description == "What changes, and why"
    assert ins.instruction == "Explain in a few sentences what changes and why.\n"
    assert ins.template == "## Why\n\n## What changes\n"
    assert ins.rules == ("Name the person or ticket that asked for the change",)
    assert ins.context.startswith("Invoicer: a small web app")
    assert ins.decisions == ()
    assert ins.role is not None
    assert (ins.role.id, ins.role.name, ins.role.question) == (
        "editor",
        "Editor",
        "Is the brief clear?",
    )
    assert [(c.text, c.origin) for c in ins.role.done_when] == [
        ("One page at most", "schema:lite"),
        ("The why comes first", "schema:lite"),
        ("Links the ticket", "project"),
    ]


def test_rules_are_keyed_by_artifact_id(tour) -> None:
    assert crewbook.instructions("specs", "add-csv-export", tour).rules == ()
    tasks = crewbook.instructions("tasks", "add-csv-export", tour)
    assert tasks.rules == ("Each task names the test that proves it done",)
    assert tasks.role is None
    assert [(r.id, r.status) for r in tasks.requires] == [("specs", "done")]


def test_decisions_go_only_into_design(tour) -> None:
    crewbook.new_change("big", "spec-driven", tour)
    design = crewbook.instructions("design", "big", tour)
    assert [(d.id, d.decision) for d in design.decisions] == [
        ("D-1", "Exported CSV files are UTF-8 with a byte-order mark"),
    ]
    text = design.text()
    assert "## Decisions in force" in text
    assert "- [D-1] Exported CSV files are UTF-8 with a byte-order mark — Spreadsheet" in text
    for other in ("proposal", "specs", "tasks"):
        ins = crewbook.instructions(other, "big", tour)
        assert ins.decisions == ()
        assert "Decisions in force" not in ins.text()


def test_role_names_follow_the_language(tour) -> None:
    assert crewbook.instructions("brief", "add-csv-export", tour, language="fr").role.name == (
        "Rédacteur"
    )
    assert crewbook.instructions("brief", "add-csv-export", tour, language="de").role.name == (
        "Editor"
    )


def test_text_and_json_shapes(tour) -> None:
    ins = crewbook.instructions("brief", "add-csv-export", tour)
    text = ins.text()
    assert text.startswith("# brief — change add-csv-export (schema lite)\n")
    assert "## Role: Editor (editor)\n\nIs the brief clear?\n" in text
    assert "- [ ] One page at most _(schema:lite)_" in text
    assert "- [ ] Links the ticket _(project)_" in text
    assert "## Project rules\n\n- Name the person or ticket" in text
    assert "```markdown\n## Why\n\n## What changes\n```" in text
    data = ins.to_dict()
    assert data["role"]["done_when"][2] == {"text": "Links the ticket", "origin": "project"}
    assert data["role"]["names"] == {"en": "Editor", "fr": "Rédacteur"}
    assert ins._repr_markdown_() == text
    assert not hasattr(ins, "_repr_html_"), "notebooks render the Markdown, not a <pre>"


def test_apply_instructions(tour) -> None:
    ins = crewbook.instructions("apply", "add-csv-export", tour)
    assert (ins.artifact, ins.generates, ins.status) == ("apply", "tasks.md", "blocked")
    assert [(r.id, r.status) for r in ins.requires] == [("tasks", "ready")]


def test_an_unknown_artifact_suggests_one(tour) -> None:
    with pytest.raises(ArtifactNotFoundError, match="did you mean 'brief'"):
        crewbook.instructions("brif", "add-csv-export", tour)


def test_an_artifact_role_cannot_be_disabled(tour, cli) -> None:
    disable_editor(tour)
    with pytest.raises(ConfigError) as info:
        crewbook.instructions("brief", "add-csv-export", tour)
    [problem] = info.value.problems
    assert (problem.code, problem.path, problem.line, problem.key) == (
        "role_cannot_be_disabled",
        "_codev/config.yaml",
        14,
        "roles.editor.enabled",
    )
    assert "role 'editor' is the role of artifact 'brief'" in problem.message
    with pytest.raises(ConfigError):
        crewbook.list_roles(project=tour)
    result = cli("instructions", "brief", "--change", "add-csv-export", "--project", tour, "--json")
    assert result.code == 1
    assert [p["code"] for p in result.json["error"]["problems"]] == ["role_cannot_be_disabled"]


def test_a_builtin_step_role_can_be_disabled(tour) -> None:
    listing = crewbook.list_roles(project=tour)
    enabled = {r["id"]: r["enabled"] for r in listing.rows}
    assert enabled == {
        "editor": True,
        "skeptic": False,
        "implementer": True,
        "verifier": True,
        "archivist": True,
    }


def test_roles_at_plan_write_are_the_artifact_roles(tour) -> None:
    listing = crewbook.list_roles(at="plan.write", project=tour)
    assert listing.step == "plan.write"
    assert [(r["id"], r["origin"], r["artifact"]) for r in listing.rows] == [
        ("editor", "schema:lite", "brief"),
    ]
    assert listing.rows[0]["done_when"] == [
        "One page at most",
        "The why comes first",
        "Links the ticket",
    ]
    assert [r["id"] for r in crewbook.list_roles(at="plan.review", project=tour).rows] == [
        "skeptic"
    ]
    assert crewbook.list_roles(at="plan.write", schema="spec-driven", project=tour).rows == ()
    assert str(crewbook.list_roles(at="plan.write", schema="spec-driven", project=tour)) == (
        "No roles at step plan.write."
    )


def test_roles_are_listed_in_step_order_with_a_frame(tour) -> None:
    listing = crewbook.list_roles(project=tour)
    assert [r["step"] for r in listing.rows] == [
        "plan.write",
        "plan.review",
        "apply.build",
        "apply.verify",
        "archive",
    ]
    frame = listing.frame()
    assert isinstance(frame["step"].dtype, pd.CategoricalDtype)
    assert list(frame["step"].cat.categories) == [
        "plan.write",
        "plan.review",
        "apply.build",
        "apply.verify",
        "archive",
    ]
    assert frame["enabled"].dtype == bool
    assert listing.to_dict()["roles"][0]["id"] == "editor"
    assert "(disabled)" in str(listing)


def test_an_unknown_step_is_refused_with_a_suggestion(tour) -> None:
    with pytest.raises(InvalidInputError, match=r"did you mean 'plan\.write'"):
        crewbook.list_roles(at="plan.wrte", project=tour)


def test_roles_outside_a_project_use_the_builtin(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    listing = crewbook.list_roles()
    assert [r["id"] for r in listing.rows] == ["skeptic", "implementer", "verifier", "archivist"]
    assert all(r["origin"] == "built-in" for r in listing.rows)
