"""The role catalogue (SPEC C1): seven roles, one writer, two judges; project overrides of
tools, and the refusals that keep every non-developer read-only."""

from __future__ import annotations

from pathlib import Path

import pytest

from crewbook import InvalidInputError, NotFoundError
from crewbook.delivery import ROLE_IDS, builtin_catalogue, load_catalogue
from crewbook.routing.axes import LOOP_ROLES


def test_the_seven_roles_of_the_seed() -> None:
    cat = builtin_catalogue()
    assert cat.ids == ROLE_IDS == LOOP_ROLES["delivery"]
    assert cat.writers() == ("developer",)
    assert cat.judges() == ("qa", "reviewer")
    assert [r.id for r in cat if r.delivery] == ["architect", "developer", "qa", "reviewer"]
    assert cat["architect"].coordinator
    assert cat["explorer"].anytime
    assert cat.role("qa").display_name("fr") == "QA"
    assert cat.role("web-tester").display_name("fr") == "Testeur web"
    assert not any(cat.can_write(r) for r in ROLE_IDS if r != "developer")
    with pytest.raises(NotFoundError, match="did you mean 'reviewer'"):
        cat.role("reviewr")


def test_frames_and_permission_matrix() -> None:
    cat = builtin_catalogue()
    frame = cat.frame()
    assert list(frame["id"]) == list(ROLE_IDS)
    assert str(frame["id"].dtype) == "category"
    assert frame["writes"].dtype == bool
    assert frame.loc[frame["writes"], "id"].tolist() == ["developer"]
    perms = cat.permission_frame()
    assert perms.loc["developer", "edit"] == 2
    assert perms.loc["qa", "edit"] == 0
    assert perms.loc["qa", "verdict"] == 1
    assert perms.loc["architect", "verdict"] == 0
    matrix = cat.permissions()
    assert list(matrix.frame.index) == list(perms.columns), "a tool a row: it fits the cell"
    assert list(matrix.frame.columns) == list(perms.index)
    assert "writes" in matrix.to_markdown()
    assert "<table" in matrix.to_html()
    tools = cat.tools_frame()
    assert tools.set_index("tool").loc["edit", "roles"] == "developer"


def _project(tmp_path: Path, text: str) -> Path:
    (tmp_path / "_codev").mkdir()
    (tmp_path / "_codev" / "delivery.yaml").write_text(text, "utf-8")
    return tmp_path


def test_a_project_changes_tools(tmp_path: Path) -> None:
    root = _project(tmp_path, "tools:\n  tickets: {description: open tickets}\n"
                    "roles:\n  qa: {add: [browser], remove: [explore]}\n"
                    "  reviewer: {add: [tickets]}\n  explorer: {tools: [read, search]}\n")
    cat = load_catalogue(root)
    assert "browser" in cat["qa"].tools
    assert "explore" not in cat["qa"].tools
    assert cat["explorer"].tools == ("read", "search")
    assert cat["qa"].tools_origin == "_codev/delivery.yaml"
    assert "tickets" in cat.tools
    assert "tickets" in cat["reviewer"].tools
    assert builtin_catalogue()["explorer"].tools != ("read", "search")  # not mutated


def test_write_access_for_a_non_developer_is_refused(tmp_path: Path) -> None:
    root = _project(tmp_path, "roles:\n  qa: {add: [edit]}\n")
    with pytest.raises(InvalidInputError) as info:
        load_catalogue(root)
    assert info.value.codes == ["write_not_allowed"]
    problem = info.value.problems[0]
    assert problem.line == 2
    assert "only the developer may write (SPEC C1)" in problem.message


def test_a_project_tool_that_writes_is_refused_too() -> None:
    with pytest.raises(InvalidInputError) as info:
        builtin_catalogue().with_overrides({
            "tools": {"deploy": {"description": "push to prod", "writes": True}},
            "roles": {"explorer": {"add": ["deploy"]}}})
    assert info.value.codes == ["write_not_allowed"]


def test_verdicts_stay_with_qa_and_the_reviewer() -> None:
    with pytest.raises(InvalidInputError) as info:
        builtin_catalogue().with_overrides({"roles": {"architect": {"add": ["verdict"]}}})
    assert info.value.codes == ["verdict_not_allowed"]


@pytest.mark.parametrize(("overrides", "code"), [
    ({"roles": {"developer": {"remove": ["edit", "commit"]}}}, "developer_cannot_write"),
    ({"tools": {"edit": {"description": "harmless now"}}}, "tool_redefined"),
    ({"roles": {"reviewr": {"add": ["read"]}}}, "unknown_role"),
    ({"roles": {"qa": {"add": ["brwser"]}}}, "unknown_tool"),
    ({"roles": {"qa": {"tools": ["read"], "add": ["run"]}}}, "conflicting_keys"),
    ({"roles": {"qa": {"grant": ["read"]}}}, "unknown_key"),
])
def test_override_problems(overrides: dict[str, object], code: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        builtin_catalogue().with_overrides(overrides)
    assert code in info.value.codes


def test_no_project_file_is_the_builtin(tmp_path: Path) -> None:
    assert load_catalogue(tmp_path).source == "built-in"
