"""`crewbook routing …` end to end, through `crewbook.commands.main`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from crewbook.routing import get_preset

Run = Callable[..., Any]


def test_presets_lists_the_families(routing_cli: Run) -> None:
    result = routing_cli("routing", "presets", "--json")
    assert result.code == 0
    assert [p["family"] for p in result.json["presets"]] == ["claude", "codex", "gemini", "mistral"]
    text = routing_cli("routing", "presets")
    assert "thinking_budget" in text.out


def test_init_twice_refused_then_forced(routing_cli: Run, home: Path) -> None:
    first = routing_cli("routing", "init", "claude")
    assert first.code == 0
    assert "$CREWBOOK_HOME/profile.yaml" in first.out
    path = home / "profile.yaml"
    before = path.read_bytes()
    second = routing_cli("routing", "init", "claude")
    assert second.code == 1
    assert "already exists at $CREWBOOK_HOME/profile.yaml" in second.err
    assert "Pass --force to regenerate" in second.err
    assert "force=True" not in second.err
    assert path.read_bytes() == before
    path.write_text("family: claude\n", encoding="utf-8")
    forced = routing_cli("routing", "init", "claude", "--force", "--json")
    assert forced.code == 0
    assert forced.json["overwritten"] is True
    assert path.read_bytes() == before


def test_init_unknown_family_is_not_found(routing_cli: Run) -> None:
    result = routing_cli("routing", "init", "gemni", "--json")
    assert result.code == 2
    assert "did you mean 'gemini'?" in result.json["error"]["message"]


def test_init_project_scope_and_show(routing_cli: Run, project: Path) -> None:
    assert routing_cli("routing", "init", "codex").code == 0
    result = routing_cli(
        "routing", "init", "claude", "--scope", "project", "--project", project, "--json"
    )
    assert result.code == 0
    assert result.json["path"] == "_codev/routing/profile.yaml"
    shown = routing_cli("routing", "show", "--project", project, "--json")
    assert shown.json["family"] == "claude"
    assert [x["scope"] for x in shown.json["layers"]] == ["project", "global"]
    cell = shown.json["matrix"]["deep"]["high"]
    assert cell["model"] == get_preset("claude").cell("deep", "high").model
    assert cell["source"] == "project"
    text = routing_cli("routing", "show", "--project", project)
    assert "Cells from:" in text.out


def test_classify_errors_leave_the_classes_unchanged(routing_cli: Run, project: Path) -> None:
    ok = routing_cli(
        "routing",
        "classify",
        "1.1",
        "--change",
        "add-csv-export",
        "--complexity",
        "simple",
        "--project",
        project,
    )
    assert ok.code == 0
    stored = project / "_codev" / "routing" / "tasks.yaml"
    before = stored.read_bytes()
    no_axis = routing_cli(
        "routing", "classify", "1.2", "--change", "add-csv-export", "--project", project
    )
    assert no_axis.code == 1
    assert "at least one axis" in no_axis.err
    bad_tier = routing_cli(
        "routing",
        "classify",
        "1.2",
        "--change",
        "add-csv-export",
        "--tier",
        "stndard",
        "--project",
        project,
        "--json",
    )
    assert bad_tier.code == 1
    assert bad_tier.json["error"]["problems"][0]["key"] == "capability_tier"
    assert "did you mean 'standard'?" in bad_tier.json["error"]["message"]
    unknown = routing_cli(
        "routing",
        "classify",
        "7.7",
        "--change",
        "add-csv-export",
        "--effort",
        "low",
        "--project",
        project,
    )
    assert unknown.code == 2
    assert "no task '7.7'" in unknown.err
    assert stored.read_bytes() == before


def test_route_names_the_project_file(routing_cli: Run, project: Path) -> None:
    routing_cli("routing", "init", "gemini")
    routing_cli(
        "routing",
        "classify",
        "1.2",
        "--change",
        "add-csv-export",
        "--tier",
        "light",
        "--effort",
        "high",
        "--project",
        project,
    )
    profile = project / "_codev" / "routing" / "profile.yaml"
    profile.parent.mkdir(exist_ok=True)
    profile.write_text(
        yaml.safe_dump({"matrix": {"light": {"high": {"model": "local-override"}}}}), "utf-8"
    )
    result = routing_cli(
        "routing", "route", "1.2", "--change", "add-csv-export", "--project", project, "--json"
    )
    assert result.code == 0
    assert result.json["model"] == "local-override"
    assert result.json["source"] == "project"
    assert result.json["source_path"] == "_codev/routing/profile.yaml"
    assert result.json["suggestion"] is True
    text = routing_cli(
        "routing", "route", "1.2", "--change", "add-csv-export", "--project", project
    )
    assert "local-override" in text.out
    assert "(project _codev/routing/profile.yaml)" in text.out
    table = routing_cli("routing", "table", "--change", "add-csv-export", "--project", project)
    assert table.code == 0
    assert "local-override" in table.out


def test_unknown_scope_is_a_usage_error(routing_cli: Run) -> None:
    assert routing_cli("routing", "init", "claude", "--scope", "team").code == 2
