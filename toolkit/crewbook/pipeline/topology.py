"""The shape of a pipeline as a graph: who follows whom, what runs before what, which
transitions close a loop. Shared by the checks, the engine and the drawings."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from .model import DONE, PipelineFile, StageSpec, TransitionSpec


@dataclass
class Topology:
    """Graph facts about a pipeline file; stages or transitions naming unknown stages
    are left out (the checks report them)."""

    model: PipelineFile
    stages: dict[str, StageSpec] = field(init=False)
    order: list[str] = field(init=False)
    out: dict[str, list[TransitionSpec]] = field(init=False)
    depth: dict[str, int] = field(init=False)
    producers: dict[str, list[str]] = field(init=False)
    _reach: dict[str, set[str]] = field(init=False)
    _loops: list[TransitionSpec] = field(init=False)
    _loop_ids: set[int] = field(init=False)

    def __post_init__(self) -> None:
        self.stages = {}
        for stage in self.model.stages:
            self.stages.setdefault(stage.id, stage)
        self.order = list(self.stages)
        self.out = {s: [] for s in self.stages}
        for t in self.model.transitions:
            if t.from_ in self.stages and (t.to in self.stages or t.to == DONE):
                self.out[t.from_].append(t)
        self.depth = self._depths()
        self.producers = {}
        for stage in self.stages.values():
            for produce in stage.produces:
                owners = self.producers.setdefault(produce.name, [])
                if stage.id not in owners:
                    owners.append(stage.id)
        self._reach = {s: self._walk(s) for s in self.stages}
        self._loops = [t for t in self.model.transitions if self._sends_back(t)]
        self._loop_ids = {id(t) for t in self._loops}

    def _depths(self) -> dict[str, int]:
        start = self.model.start
        if start not in self.stages:
            return {}
        depth = {start: 0}
        queue = deque([start])
        while queue:
            here = queue.popleft()
            for t in self.out[here]:
                if t.to != DONE and t.to not in depth:
                    depth[t.to] = depth[here] + 1
                    queue.append(t.to)
        return depth

    def _walk(self, source: str) -> set[str]:
        """Stages reachable from `source` in one or more transitions (itself only via a loop)."""
        seen: set[str] = set()
        queue = deque(t.to for t in self.out[source] if t.to != DONE)
        while queue:
            here = queue.popleft()
            if here in seen:
                continue
            seen.add(here)
            queue.extend(t.to for t in self.out[here] if t.to != DONE)
        return seen

    # ---------------------------------------------------------------- questions
    @property
    def reachable(self) -> set[str]:
        """Stages a run can enter (the start and what follows it)."""
        return set(self.depth)

    def reaches(self, source: str, target: str) -> bool:
        """Whether `target` can run after `source` (through one or more transitions)."""
        return target in self._reach.get(source, set())

    def reaches_done(self, source: str) -> bool:
        """Whether a run in `source` can still end in `done`."""
        here = {source} | self._reach.get(source, set())
        return any(t.to == DONE for s in here for t in self.out.get(s, []))

    def is_loop(self, transition: TransitionSpec) -> bool:
        """Whether taking `transition` sends work back (to a stage no deeper than its source)."""
        if id(transition) in self._loop_ids:
            return True
        return any(t == transition for t in self._loops)

    def _sends_back(self, transition: TransitionSpec) -> bool:
        if transition.to == DONE or transition.to not in self.stages:
            return False
        if transition.from_ in self.depth and transition.to in self.depth:
            return self.depth[transition.to] <= self.depth[transition.from_]
        if transition.from_ not in self.stages:
            return False
        return self.order.index(transition.to) <= self.order.index(transition.from_)

    def loops(self) -> list[TransitionSpec]:
        """The transitions that send work back, in file order."""
        return list(self._loops)

    def runs_before(self, producer: str, stage: str) -> bool:
        """Whether `producer` can run (reachably) before `stage` on some path."""
        return (producer != stage and producer in self.depth
                and self.reaches(producer, stage))

    def upstream(self, stage: str) -> list[str]:
        """Stages that can run before `stage`, in file order."""
        return [s for s in self.order if self.runs_before(s, stage)]

    def rank(self) -> dict[str, int]:
        """A drawing rank per stage: its depth, unreachable stages after the rest."""
        last = max(self.depth.values(), default=-1) + 1
        return {s: self.depth.get(s, last) for s in self.order}
