"""The review policy (C7, risk-based) over real commits of a git repository.

    python benchmarks/review_commits.py GIT_DIR [--last N] [--commits FILE] [--json]

Each commit is judged as ``crewbook review-policy --git C^..C --risk-based`` judges it
(merges and root commits are skipped). ``--last N`` takes the N newest non-merge
commits of HEAD's first-parent history; ``--commits FILE`` reads commit ids (one per
line, ``#`` comments allowed, anything after the id ignored). Prints one line per commit
(id, decision, reason codes, subject) and a summary: how many are sent to review, for
which reasons, and how many only because of what a changed file *is* (its imports, its
classes, its name), the part the changed lines alone would not show. Nothing is timed;
the figures do not depend on the machine. Not run by the tests (it needs a clone).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "toolkit"))

from crewbook.delivery.diffstat import from_git
from crewbook.delivery.model import ReviewPolicy
from crewbook.delivery.review import review_required


def _git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", "-C", git_dir, *args], capture_output=True, check=True,
                          text=True).stdout


def commits(git_dir: str, last: int | None, listed: Path | None) -> list[str]:
    """The commits to judge, newest first for ``--last``, in file order for ``--commits``."""
    if listed is not None:
        ids = [line.split("#", 1)[0].split() for line in listed.read_text().splitlines()]
        return [words[0] for words in ids if words]
    out = _git(git_dir, "rev-list", "--first-parent", "--no-merges", f"--max-count={last}",
               "HEAD")
    return out.split()


def judge(git_dir: str, commit: str) -> dict[str, Any]:
    """One commit's decision, and whether only what-a-file-is reasons made it required."""
    parents = _git(git_dir, "rev-list", "--parents", "-n1", commit).split()[1:]
    subject = _git(git_dir, "log", "-1", "--format=%s", commit).strip()
    if len(parents) != 1:
        return {"commit": commit[:10], "skipped": "merge or root commit", "subject": subject}
    change = from_git(f"{commit}^..{commit}", git_dir)
    decision = review_required(change, ReviewPolicy(policy="risk-based"))
    identity = {(m.category, m.path) for m in decision.matches
                if m.by in ("file", "convention")}
    other = {(m.category, m.path) for m in decision.matches
             if m.by not in ("file", "convention")}
    plain = [c for c in decision.codes if not c.startswith("sensitive:")]
    only_identity = bool(identity) and not plain and not {c for c, _ in other} - {
        c for c, _ in identity} and not other
    return {"commit": commit[:10], "required": decision.required,
            "codes": list(decision.codes), "only_identity": only_identity,
            "subject": subject, "line": decision.line}


def main(argv: list[str] | None = None) -> int:
    """Judge the commits and print the lines and the summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("git_dir")
    parser.add_argument("--last", type=int, default=300)
    parser.add_argument("--commits", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = [judge(args.git_dir, c) for c in commits(args.git_dir, args.last, args.commits)]
    judged = [r for r in rows if "skipped" not in r]
    required = [r for r in judged if r["required"]]
    codes = Counter(c for r in required for c in r["codes"])
    summary: dict[str, Any] = {"commits": len(judged), "required": len(required),
               "only_identity": sum(1 for r in judged if r["only_identity"]),
               "codes": dict(sorted(codes.items(), key=lambda kv: (-kv[1], kv[0])))}
    if args.json:
        print(json.dumps({"rows": rows, "summary": summary}, indent=1))
        return 0
    for r in rows:
        if "skipped" in r:
            continue
        mark = "REVIEW" if r["required"] else "skip  "
        extra = " (only what a file is)" if r["only_identity"] else ""
        print(f"{r['commit']} {mark} {','.join(r['codes'])}{extra}  {r['subject']}")
    share = summary["required"] / max(1, summary["commits"])
    print(f"\n{summary['required']}/{summary['commits']} sent to review ({share:.0%}); "
          f"{summary['only_identity']} only because of what a changed file is")
    print("reasons:", ", ".join(f"{k} {v}" for k, v in summary["codes"].items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
