"""Ledger conformance: do the events of each run follow the rules of the loop that
wrote them?

`validate_ledger` checks lines one by one (is each a valid event?); this module
checks runs. Every loop kind gets the generic rules, and its own when it has
registered some (`LoopRules`, keyed by the ``loop`` column):

=======================  ==================================================================
code                     what it flags
=======================  ==================================================================
``seq_gap``              a run's ``seq`` skips numbers (or does not start at 0)
``seq_duplicate``        a ``seq`` written twice in one run
``time_backwards``       an event earlier than the one before it in the same run
``act_after_finish``     anything after the run's ``finish``
``verdict_not_allowed``  a ``verdict`` from a role that may not give one (C4.1)
``unexpected_role``      a report or verdict from a role the loop did not hand the turn
                         to (D2), or a role the loop does not know
``finalise_unverified``  a finish that ships a version QA did not pass (C4.2)
``cap_exceeded``         more launches, plan revisions, steps or attempts than the
                         run's caps allow (C4.3, B6)
``review_missing``       a pull request of a version the reviewer did not approve
                         although the decision said review is required (C7)
``wait_expired``         a report after its wait's deadline (C4.4)
``path_closed``          ``already_done`` after the run changed the code (C6)
=======================  ==================================================================

Each loop family gives its rules (``FAMILY.rules`` in its ``family.py``); they are
found through the family registry (`crewbook.families`) for the loop kinds a ledger
holds, so nothing registers at import. Spec-kit runs are checked against spec-kit's
own rules here: each report answers the step started last, by the same kind of
actor, and spec-kit gives no verdicts. A loop kind no family describes (a loop from
another tool) gets the generic rules only: add its rules with `register_loop_rules`
(rules registered so win over a family's).

`check_conformance(source)` returns a problems frame: ``run`` (category), ``seq``
(Int64; NA for a problem of the whole run), ``code`` (category), ``message`` (str).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from ..errors import Problem, UsageError

if TYPE_CHECKING:  # pandas loads when a check runs: registering rules costs nothing
    import pandas as pd

#: The columns of the problems frame, in order.
CONFORMANCE_COLUMNS: Final = ("run", "seq", "code", "message")
#: Every code `check_conformance` may report.
CODES: Final = ("seq_gap", "seq_duplicate", "time_backwards", "act_after_finish",
                "verdict_not_allowed", "unexpected_role", "finalise_unverified",
                "cap_exceeded", "review_missing", "wait_expired", "path_closed")

#: An event of a run as the rules see it: the row's fields as a plain dict.
Event = dict[str, Any]
#: A loop's extra check: (events of one run in order) → [(seq or None, code, message)].
RunCheck = Callable[[Sequence[Event]], list[tuple[int | None, str, str]]]


@dataclass(frozen=True)
class LoopRules:
    """The rules of one kind of loop, as far as a ledger can show them.

    - `judges`: the roles that may give a ``verdict`` (None: any role);
    - `roles`: the roles that may act, report or judge at all (None: any);
    - `turns`: ``"act"`` when each report or verdict answers the last ``act`` (its role
      must be that act's role), ``"stage"`` when it answers the current stage (the
      init payload's ``start``, then each ``transition``'s stage), None for no turns;
    - `shipping`: the ``finish`` verdicts that ship a version, which QA must have
      passed (C4.2); `qa` is the role whose ``pass`` counts;
    - `checks`: further checks of one run (caps...).
    """

    loop: str
    judges: frozenset[str] | None = None
    roles: frozenset[str] | None = None
    turns: str | None = None
    shipping: frozenset[str] = frozenset()
    qa: str = "qa"
    passes: frozenset[str] = frozenset({"pass"})
    checks: tuple[RunCheck, ...] = ()


#: Rules registered by hand (`register_loop_rules`), by loop kind; spec-kit's are here.
LOOP_RULES: dict[str, LoopRules] = {"spec-kit": LoopRules(
    "spec-kit", judges=frozenset(), roles=frozenset({"agent", "human", "shell", "engine"}),
    turns="act")}


def register_loop_rules(rules: LoopRules) -> None:
    """Check runs of `rules.loop` against `rules` from now on (replaces earlier rules)."""
    LOOP_RULES[rules.loop] = rules


def rules_for(loop: str) -> LoopRules | None:
    """The rules runs of loop kind `loop` are checked against: registered ones, else
    those of the family whose engines write that kind (`crewbook.families`)."""
    found = LOOP_RULES.get(loop)
    if found is not None:
        return found
    from ..core.family import Declined
    from ..families import family_of_kind

    family = family_of_kind(loop)
    if family is None or isinstance(family.rules, Declined):
        return None
    return next((r for r in family.rules() if r.loop == loop), None)


def check_conformance(
    source: pd.DataFrame | str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    rules: Mapping[str, LoopRules] | None = None,
) -> pd.DataFrame:
    """The problems of every run of `source` (a ledger frame, or what `read_ledger`
    reads) against the rules of its loop; an empty frame when every run conforms.

    `rules` replaces the registered and the families' rules (`rules_for`) for this call. Lines that
    are not valid events are not checked here (`validate_ledger` reports them).
    """
    import pandas as pd

    if isinstance(source, pd.DataFrame):
        frame = source
    else:
        import warnings

        from .reader import read_ledger

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frame = read_ledger(source, errors="skip")
    missing = [c for c in ("run", "seq", "ts", "loop", "kind", "role") if c not in frame.columns]
    if missing:
        raise UsageError(f"the frame has no column {', '.join(missing)}; pass a frame from "
                         "crewbook.read_ledger")
    found: list[tuple[str, int | None, str, str]] = []
    columns = [c for c in ("run", "seq", "ts", "loop", "kind", "role", "stage", "verdict",
                           "attempt", "version", "payload") if c in frame.columns]
    records = frame[columns].astype(object).where(frame[columns].notna(), None)
    by_run: dict[str, list[Event]] = {}
    for record in records.to_dict("records"):
        event: Event = {str(k): v for k, v in record.items()}
        by_run.setdefault(str(event["run"]), []).append(event)
    for run, events in by_run.items():
        loop = str(events[0]["loop"])
        found += [(run, seq, code, msg) for seq, code, msg in _generic(events)]
        loop_rules = rules.get(loop) if rules is not None else rules_for(loop)
        if loop_rules is not None:
            found += [(run, seq, code, msg) for seq, code, msg in _of_loop(events, loop_rules)]
    out = pd.DataFrame(found, columns=list(CONFORMANCE_COLUMNS))
    out["run"] = out["run"].astype("category")
    out["seq"] = out["seq"].astype("Int64")
    out["code"] = pd.Categorical(out["code"], categories=list(CODES))
    out["message"] = out["message"].astype(str)
    return out.sort_values(["run", "seq"], kind="stable", na_position="first").reset_index(
        drop=True)


def conformance_problems(path: str | os.PathLike[str]) -> list[Problem]:
    """`check_conformance` of a ledger file or folder as `Problem`s (errors), for
    ``crewbook validate LEDGER --rules``; the key names the run and seq."""
    import pandas as pd

    frame = check_conformance(path)
    return [Problem(str(code), str(message), path=str(path),
                    key=f"run {run}" + ("" if pd.isna(seq) else f", seq {int(seq)}"))
            for run, seq, code, message in zip(frame["run"].astype(str), frame["seq"],
                                               frame["code"].astype(str), frame["message"],
                                               strict=True)]


# -- the generic rules ----------------------------------------------------------------------


def _generic(events: Sequence[Event]) -> list[tuple[int | None, str, str]]:
    out: list[tuple[int | None, str, str]] = []
    expected = 0
    seen: set[int] = set()
    last_ts = None
    finished_at: int | None = None
    for event in events:
        seq = int(event["seq"])
        if seq in seen:
            out.append((seq, "seq_duplicate", f"seq {seq} appears twice in this run; the "
                        "writer numbers each event once"))
        elif seq != expected:
            what = (f"number {expected} is missing" if seq == expected + 1
                    else f"numbers {expected} to {seq - 1} are missing" if seq > expected
                    else f"it goes back from {expected - 1}")
            out.append((seq, "seq_gap", f"seq {seq} follows {expected - 1}: {what}; events "
                        "were lost or the file was edited"))
        seen.add(seq)
        expected = max(expected, seq + 1)
        ts = event["ts"]
        if last_ts is not None and ts is not None and ts < last_ts:
            out.append((seq, "time_backwards", f"{_time(ts)} is earlier than the event "
                        f"before it ({_time(last_ts)}); clocks of one run only go forward"))
        if ts is not None and (last_ts is None or ts > last_ts):
            last_ts = ts
        if finished_at is not None:
            out.append((seq, "act_after_finish", f"a {event['kind']!r} event after the run "
                        f"finished at seq {finished_at}; a finished run takes no more acts"))
        elif event["kind"] == "finish":
            finished_at = seq
    return out


def _time(ts: Any) -> str:
    import pandas as pd

    return pd.Timestamp(ts).strftime("%Y-%m-%d %H:%M:%S.%f").rstrip("0").rstrip(".")


# -- the rules of one loop ---------------------------------------------------------------------


def _of_loop(events: Sequence[Event], rules: LoopRules) -> list[tuple[int | None, str, str]]:
    out: list[tuple[int | None, str, str]] = []
    turn: str | None = None
    if rules.turns == "stage" and events and events[0]["kind"] == "init":
        payload = events[0].get("payload") or {}
        turn = payload.get("start") if isinstance(payload, dict) else None
    passed: dict[int | None, int] = {}  # version → seq of the QA pass
    for event in events:
        seq, kind, role = int(event["seq"]), event["kind"], event["role"]
        if role is not None and rules.roles is not None and role not in rules.roles \
                and kind in ("act", "report", "verdict"):
            out.append((seq, "unexpected_role", f"role {role!r} is not a role of a "
                        f"{rules.loop!r} loop ({', '.join(sorted(rules.roles))})"))
        if kind == "verdict" and rules.judges is not None and role not in rules.judges:
            who = ", ".join(sorted(rules.judges)) or "no role"
            out.append((seq, "verdict_not_allowed", f"{role!r} gave the verdict "
                        f"{event['verdict']!r}; in a {rules.loop!r} loop only {who} may"))
        if rules.turns == "act" and kind == "act":
            turn = role
        elif rules.turns == "stage" and kind == "transition":
            turn = event["stage"]
        elif kind in ("report", "verdict") and rules.turns is not None and role != turn:
            expected = f"{turn!r}" if turn is not None else "no one (no act started)"
            out.append((seq, "unexpected_role", f"a {kind} from {role!r}, but the loop "
                        f"expected {expected}"))
        if kind == "verdict" and role == rules.qa:
            if event["verdict"] in rules.passes:
                passed[_int(event["version"])] = seq
            else:  # a later fail on the same version cancels an earlier pass
                passed.pop(_int(event["version"]), None)
        if kind == "finish" and event["verdict"] in rules.shipping:
            version = _int(event["version"])
            if version not in passed:
                out.append((seq, "finalise_unverified", f"the run finished with "
                            f"{event['verdict']!r} shipping version {version}, but "
                            f"{rules.qa} never passed that version (C4.2)"))
    for check in rules.checks:
        out += check(events)
    return out


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def count_cap(events: Sequence[Event], *, what: str, limit: int | None,
              match: Callable[[Event], bool]) -> list[tuple[int | None, str, str]]:
    """A `cap_exceeded` problem at the first event matching `match` past `limit`."""
    if limit is None:
        return []
    count = 0
    for event in events:
        if match(event):
            count += 1
            if count > limit:
                return [(int(event["seq"]), "cap_exceeded",
                         f"{what}: {count} where the run allows {limit}")]
    return []
