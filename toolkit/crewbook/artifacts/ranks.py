"""Topological ranks of a schema's artifacts (roots 0), for its drawing and its frames."""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Mapping, Sequence

__all__ = ["ranks"]


def ranks(requires: Mapping[str, Sequence[str]]) -> dict[str, int | None]:
    """Longest chain of `requires` above each node (roots 0), in O(nodes + edges).

    Names that are not keys are ignored; nodes on or after a cycle get None.
    """
    needs = {node: [d for d in deps if d in requires] for node, deps in requires.items()}
    users: dict[str, list[str]] = defaultdict(list)
    waiting = {node: len(deps) for node, deps in needs.items()}
    for node, deps in needs.items():
        for dep in deps:
            users[dep].append(node)
    rank: dict[str, int | None] = dict.fromkeys(requires)
    queue = deque(node for node, count in waiting.items() if count == 0)
    for node in queue:
        rank[node] = 0
    while queue:
        node = queue.popleft()
        for user in users[node]:
            current = rank[user]
            rank[user] = max(current if current is not None else 0, (rank[node] or 0) + 1)
            waiting[user] -= 1
            if waiting[user] == 0:
                queue.append(user)
    for node, count in waiting.items():
        if count:
            rank[node] = None
    return rank
