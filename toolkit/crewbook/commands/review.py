"""`crewbook review-policy DIFF | --git BASE..HEAD`: does this change need the reviewer (C7)?

Registered by `crewbook.commands` through `register(subparsers, common)`. Best:
``--git main..HEAD`` reads the change from git itself (modes and changed lines; an
empty change is then established). Else DIFF is a regular file holding a unified diff
(``git diff main``) or ``-`` for stdin (at most 32 MiB). Input that cannot show file
modes (``--numstat``, plain ``diff -u``) cannot show a symlink retarget or a submodule
bump: it counts as unreadable unless ``--no-modes``. Blank input proves nothing. A
change that cannot be read is not an error: it makes the reviewer required (when in
doubt, required), and so does a policy file that cannot be read. With ``--project``
the project's ``_codev/review.yaml`` applies (``--policy`` names another file).

Exit status: 0 a decision was printed; 1 invalid input; 2 DIFF (or the policy file
named) does not exist. Errors are raised and printed by `crewbook.commands.main`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..core.paths import checked_path, kind_of, read_capped
from ..errors import InvalidInputError, NotFoundError
from ._shared import emit_json, project_arg


def _read_input(name: str) -> bytes:
    """The bytes of DIFF (a regular file, or ``-`` for stdin), at most `MAX_CHANGE_BYTES`."""
    from ..delivery.diffstat import MAX_CHANGE_BYTES

    cap = MAX_CHANGE_BYTES
    shown = "stdin" if name == "-" else name
    too_big = (f"{shown} holds more than {cap // 2**20} MiB; a change that large is not "
               "reviewed from a file (use --git BASE..HEAD, or split the change)")
    if name == "-":
        data = sys.stdin.buffer.read(cap + 1)
        if len(data) > cap:
            raise InvalidInputError(too_big)
        return data
    path = checked_path(name, "DIFF")
    kind = kind_of(path)
    if kind in ("missing", "unreadable"):
        raise NotFoundError(f"no such file: {name} (give a diff file, or - to read stdin)")
    if kind != "file":
        raise InvalidInputError(f"{name} is a {kind}, not a regular file; give a diff file, "
                                "or pipe it into - (stdin)")
    if path.stat().st_size > cap:
        raise InvalidInputError(too_big)
    try:
        return read_capped(path, cap, shown=name)
    except InvalidInputError as exc:
        if "file_too_large" in getattr(exc, "codes", ()):
            raise InvalidInputError(too_big) from None
        raise


def cmd_review_policy(args: argparse.Namespace) -> int:
    """Print whether the change (DIFF, or --git BASE..HEAD) needs the reviewer, with
    every reason."""
    from pydantic import ValidationError

    from ..delivery.diffstat import ChangeSummary, Unreadable, from_git, read_change, with_modes
    from ..delivery.model import POLICY_FILE, ReviewPolicy
    from ..delivery.review import load_review_policy, review_required

    root = project_arg(args)
    if root is not None and not root.is_dir():
        raise NotFoundError(f"no such project folder: {root}")
    change: ChangeSummary | Unreadable
    if args.git is not None:
        change = from_git(args.git, root or Path("."))
    else:
        change = read_change(_read_input(args.diff))
    if not args.no_modes:
        change = with_modes(change)
    policy: ReviewPolicy | Unreadable = ReviewPolicy()
    policy_file = checked_path(args.policy, "--policy") if args.policy else None
    if policy_file is None and root is not None and (root / POLICY_FILE).exists():
        policy_file = root / POLICY_FILE
    if policy_file is not None:
        if kind_of(policy_file) == "missing":
            raise NotFoundError(f"no such policy file: {policy_file}")
        policy = load_review_policy(policy_file)
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
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("diff", metavar="DIFF", nargs="?", help="a unified diff (`git diff`) or "
                   "`git diff --numstat [--summary]` output, in a file or - for stdin")
    source.add_argument("--git", metavar="BASE..HEAD", help="read the change from git itself "
                   "(in --project, else the current folder): the form that carries file "
                   "modes and changed lines; an empty change is then established")
    p.add_argument("--no-modes", action="store_true", help="accept input that cannot show "
                   "file modes (numstat, plain diff -u) instead of treating it as unreadable")
    p.add_argument("--risk-based", action="store_true",
                   help="the optional risk-based policy (default: always required)")
    p.add_argument("--max-lines", type=int, metavar="N",
                   help="changed lines above which a change is not minor (default 80)")
    p.add_argument("--policy", metavar="FILE", help="a review policy YAML file "
                   "(_codev/review.yaml format; default: the --project's _codev/review.yaml)")
    p.add_argument("--reviewer-started", action="store_true",
                   help="a reviewer already started on the task")
    p.set_defaults(func=cmd_review_policy)
