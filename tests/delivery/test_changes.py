"""Change summaries: git numstat + summary, unified diffs, by hand, unreadable input."""

from __future__ import annotations

import pytest

from crewbook import InvalidInputError
from crewbook.delivery import (
    ChangeSummary,
    Unreadable,
    from_numstat,
    from_unified_diff,
    parse_change,
    read_change,
)


def test_numstat_and_summary() -> None:
    change = from_numstat(
        "12\t3\tsrc/app.py\n-\t-\tlogo.png\n0\t0\tcurrent\n4\t1\tsrc/{core => id}/auth.py\n",
        " create mode 120000 current\n rename src/{core => id}/auth.py (80%)\n"
        " mode change 100644 => 100755 run.sh\n create mode 160000 vendor/lib\n")
    files = {f.path: f for f in change.files}
    assert files["src/app.py"].lines == 15
    assert files["logo.png"].binary
    assert files["logo.png"].added is None
    assert files["current"].symlink
    assert files["current"].status == "added"
    assert files["src/id/auth.py"].old_path == "src/core/auth.py"
    assert files["src/id/auth.py"].status == "renamed"
    assert files["run.sh"].mode_change == ("100644", "100755")
    assert files["vendor/lib"].submodule
    assert change.changed_lines == 20
    assert change.source == "numstat"


def test_summary_lines_before_numstat_lines_are_kept() -> None:
    """`git diff --summary; git diff --numstat` (summary first) reads the same as the
    usual order: a numstat line must not wipe the symlink or submodule flag."""
    summary = (" create mode 120000 current\n create mode 160000 vendor/lib\n"
               " rename src/{core => id}/auth.py (80%)\n")
    numstat = "0\t0\tcurrent\n1\t0\tvendor/lib\n4\t1\tsrc/{core => id}/auth.py\n"
    first = {f.path: f for f in from_numstat(summary + numstat).files}
    usual = {f.path: f for f in from_numstat(numstat, summary).files}
    assert first == usual
    assert first["current"].symlink
    assert first["current"].status == "added"
    assert first["vendor/lib"].submodule
    assert first["vendor/lib"].added == 1
    assert first["src/id/auth.py"].old_path == "src/core/auth.py"
    assert first["src/id/auth.py"].lines == 5
    assert list(first) == ["current", "vendor/lib", "src/id/auth.py"]


def test_unified_diff_counts_hunks() -> None:
    diff = ("diff --git a/a.py b/a.py\nindex 1..2 100644\n--- a/a.py\n+++ b/a.py\n"
            "@@ -1,3 +1,4 @@\n x\n-y\n+y2\n+z\n w\n"
            "diff --git a/new.txt b/new.txt\nnew file mode 100644\nindex 0..3\n--- /dev/null\n"
            "+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n\\ No newline at end of file\n"
            "diff --git a/gone.py b/gone.py\ndeleted file mode 100644\nindex 4..0\n"
            "--- a/gone.py\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n")
    change = from_unified_diff(diff)
    assert [(f.path, f.added, f.removed, f.status) for f in change.files] == [
        ("a.py", 2, 1, "modified"), ("new.txt", 1, 0, "added"), ("gone.py", 0, 2, "deleted")]
    assert ("a.py", "+z") in change.changed_text


def test_a_hunk_shorter_than_its_header_is_unreadable() -> None:
    with pytest.raises(InvalidInputError) as info:
        from_unified_diff("--- a/x\n+++ b/x\n@@ -1,5 +1,5 @@\n-a\n+b\ngarbage\n")
    assert info.value.codes == ["unreadable_change"]


def test_parse_change_detects_the_format() -> None:
    assert parse_change("").empty
    assert parse_change("\n  \n").source == "blank"
    assert parse_change("3\t1\tx.py\n").source == "numstat"
    assert parse_change("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n").source == "diff"
    with pytest.raises(InvalidInputError):
        parse_change("hello\n")


def test_read_change_never_raises() -> None:
    assert isinstance(read_change(b"\xff\xfe"), Unreadable)
    bad = read_change("3\t1\tx.py\nnot numstat\n")
    assert isinstance(bad, Unreadable)
    assert "line 2" in str(bad)
    assert isinstance(read_change(b"1\t1\tx.py\n"), ChangeSummary)


def test_by_hand() -> None:
    change = ChangeSummary.of({"a.py": (3, 1), "b.py": 4}, binaries=["c.bin"],
                              symlinks=["a.py"])
    frame = change.frame()
    assert list(frame["path"]) == ["a.py", "b.py", "c.bin"]
    assert frame["lines"].tolist()[:2] == [4, 4]
    assert frame["lines"].isna().tolist()[2]
    assert frame.loc[0, "symlink"]
    assert frame.loc[2, "binary"]
    assert "3 files" in repr(change)
    assert "<table" in change._repr_html_()


def test_numstat_z_output_is_read_renames_too() -> None:
    change = read_change(b"12\t3\tsecrets/x.pem\x004\t0\t\x00docs/a.md\x00keys/id.pem\x00"
                         b"-\t-\tlogo.png\x00")
    assert isinstance(change, ChangeSummary)
    assert [(f.path, f.old_path, f.status, f.added) for f in change.files] == [
        ("secrets/x.pem", None, "modified", 12), ("keys/id.pem", "docs/a.md", "renamed", 4),
        ("logo.png", None, "modified", None)]


@pytest.mark.parametrize("text", [
    "1\t1\tREADME.md\0garbage\0",       # a record that is not numstat
    "1\t1\t\0only-old-path\0",          # a rename cut short
    "1\t1\tREADME.md\n2\t2\ta\0b\n",     # a NUL inside line-based numstat
    "1\t1\tsrc/a\x1b[0m.py\n",          # a control character in a path
    "9" * 5000 + "\t1\tsrc/a.py\n",     # a count of 5,000 digits
])
def test_what_cannot_be_read_is_unreadable(text: str) -> None:
    assert isinstance(read_change(text), Unreadable)


def test_the_policy_fails_closed_on_numstat_z() -> None:
    """Issue 12: `git diff --numstat -z` once came out 'Reviewer not required'."""
    from crewbook.delivery import ReviewPolicy, review_required

    risky = ReviewPolicy(policy="risk-based")
    for data in (b"12\t3\tsecrets/x.pem\x00", b"1\t1\t\x00README.md\x00secrets/k.pem\x00",
                 b"1\t1\tREADME.md\x00\xff"):
        decision = review_required(read_change(data), risky)
        assert decision.required, data
    assert not review_required(read_change(b"1\t1\tREADME.md\x00"), risky).required
