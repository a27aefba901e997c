"""`crewbook review-policy DIFF`: does this change need the reviewer (SPEC C7)?

Registered by `crewbook.commands` through `register(subparsers, common)`. DIFF is a file
holding a unified diff or ``git diff --numstat [--summary]`` output, or ``-`` for
stdin (``git diff --numstat --summary main | crewbook review-policy - --risk-based``).
A diff that cannot be read is not an error: it makes the reviewer required (when in
doubt, required), and so does a ``--policy`` file that cannot be read.

Exit status: 0 a decision was printed; 1 invalid input; 2 DIFF (or the policy file
named) does not exist. Errors are raised and printed by `crewbook.commands.main`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pydantic import ValidationError

from ..core.paths import checked_path, kind_of
from ..errors import InvalidInputError, NotFoundError
from ._shared import emit_json


def _read_input(name: str) -> bytes:
    if name == "-":
        return sys.stdin.buffer.read()
    path = checked_path(name, "DIFF")
    kind = kind_of(path)
    if kind in ("missing", "unreadable"):
        raise NotFoundError(f"no such file: {name} (give a diff file, or - to read stdin)")
    if kind != "file":
        raise InvalidInputError(f"{name} is a {kind}; give a diff file, or - to read stdin")
    return path.read_bytes()


def cmd_review_policy(args: argparse.Namespace) -> int:
    """Print whether the change in DIFF needs the reviewer, with every reason."""
    from ..delivery.diffstat import ChangeSummary, Unreadable, read_change
    from ..delivery.model import ReviewPolicy
    from ..delivery.review import load_review_policy, review_required

    change = read_change(_read_input(args.diff))
    policy: ReviewPolicy | Unreadable = ReviewPolicy()
    if args.policy:
        if kind_of(checked_path(args.policy, "--policy")) == "missing":
            raise NotFoundError(f"no such policy file: {args.policy}")
        policy = load_review_policy(args.policy)
    if isinstance(policy, ReviewPolicy):
        update: dict[str, Any] = {}
        if args.risk_based:
            update["policy"] = "risk-based"
        if args.max_lines is not None:
            update["max_lines"] = args.max_lines
        try:
            policy = ReviewPolicy.model_validate({**policy.model_dump(), **update})
        except ValidationError as exc:
            raise InvalidInputError(f"invalid option: {exc.errors()[0]['msg']}") from None
    decision = review_required(change, policy, reviewer_started=args.reviewer_started)
    if getattr(args, "json", False):
        data = decision.to_dict()
        if isinstance(change, ChangeSummary):
            data["change"] = {"source": change.source, "files": [
                {"path": f.path, "added": f.added, "removed": f.removed, "status": f.status,
                 "binary": f.binary, "symlink": f.symlink, "submodule": f.submodule}
                for f in change.files]}
        else:
            data["change"] = {"unreadable": str(change)}
        emit_json(data)
    else:
        print(decision.line)
    return 0


def _common() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="print one JSON document instead of text")
    return common


def register(subparsers: Any, common: argparse.ArgumentParser | None = None) -> None:
    """Add `review-policy` to the `crewbook` subparsers."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "review-policy", parents=[common or _common()],
        help="does a change need the reviewer? (C7)",
        description="Decide whether a change needs the reviewer (SPEC C7) and print the "
        "pull-request line 'Reviewer required: …' or 'Reviewer not required: …'.")
    p.add_argument("diff", metavar="DIFF", help="a unified diff or `git diff --numstat "
                   "[--summary]` output, in a file or - for stdin")
    p.add_argument("--risk-based", action="store_true",
                   help="the optional risk-based policy (default: always required)")
    p.add_argument("--max-lines", type=int, metavar="N",
                   help="changed lines above which a change is not minor (default 80)")
    p.add_argument("--policy", metavar="FILE", help="a review policy YAML file "
                   "(_codev/review.yaml format)")
    p.add_argument("--reviewer-started", action="store_true",
                   help="a reviewer already started on the task")
    p.set_defaults(func=cmd_review_policy)
