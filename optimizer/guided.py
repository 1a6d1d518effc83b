"""The offline default optimizer: a deterministic, rule-based search (not a language model).

It walks the search space (`space.py`) around the best program found so far (docs/tuning.md):

1. After a failure, AutoGuide's structured edits for that failure are applied to the failing program
   (`autoguide.apply_edits`: e.g. drop the layout constraint that broke a kernel, reduce an index modulo the
   machine size); the result is mapped back into the space with `SearchSpace.project`.
2. After a success whose feedback carries edits (e.g. "move tasks to the GPU"), they are applied to the best program.
3. Otherwise the next unevaluated neighbour of the best point is proposed: one decision (or one pattern for every
   index launch) changed, the most promising first (see `SearchSpace.neighbours`: compute tasks first, then the
   tasks that took the most time in the best run's profile).
4. When the neighbourhood is exhausted, a random point (a restart).

A mapping already measured is never proposed again, whether it was written the same way or not (two patterns that
place every point alike, or the start program and its rendering in the space, count as one mapping).

Every random choice comes from a generator seeded with (seed, iteration), so the same seed and the same measurements
give the same proposals, and `resume` can rebuild the state by replaying the journal.
"""

from __future__ import annotations

import random
from typing import Any, Iterator, Mapping, Sequence

from mapperopt.errors import MapperoptError
from mapperopt.optimizer.base import IterationRecord, Optimizer, Proposal, normalize_dsl
from mapperopt.optimizer.space import SearchSpace
from mapperopt.records import Edit

RESTART_TRIES = 200


class GuidedOptimizer(Optimizer):
    """Rule-based local search over the mapping space, driven by AutoGuide's edits.

    Args:
        space: the SearchSpace.
        start: the DSL program of iteration 1.
        seed: seeds the order of equally promising moves and the restarts.
        start_point: the point of `space` that `start` renders from, when known; otherwise `space.project(start)`.
    """

    name = "guided"

    def __init__(self, space: SearchSpace, start: str, seed: int = 0, start_point: Mapping[str, Any] | None = None,
                 **options: Any):
        super().__init__(space, start, seed, **options)
        self.start_point = space.normalize(start_point) if start_point is not None else space.project(start)
        self.points: dict[str, dict[str, Any]] = {normalize_dsl(start): self.start_point}
        self.rendered: set[str] = set()  # normalised programs rendered from their point (exactly that point)
        self.exact: dict[str, bool] = {}  # for other programs: does the point's rendering map the same?
        self.best: IterationRecord | None = None

    def describe(self) -> str:
        return "guided — rule-based search (AutoGuide edits + local search), not a language model"

    # ------------------------------------------------------------------------------------------------ protocol

    def propose(self, history: Sequence[IterationRecord]) -> Proposal:
        if not history:
            return Proposal(self.start, note="start program")
        evaluated = {normalize_dsl(r.dsl) for r in history if r.dsl is not None}
        evaluated |= {self._semantic_key(text) for text in evaluated if self._is_exact(text)}
        rng = random.Random(f"{self.seed}:{len(history)}")
        for dsl, point, note in self._candidates(history, rng):
            if (proposal := self._new(point, note, evaluated, dsl)) is not None:
                return proposal
        for _ in range(RESTART_TRIES):
            proposal = self._new(self.space.random_point(rng), "random restart (neighbourhood of the best exhausted)",
                                 evaluated)
            if proposal is not None:
                return proposal
        return Proposal(self.best.dsl if self.best else self.start, note="search space exhausted: best program again")

    def _new(self, point: dict[str, Any], note: str, evaluated: set, dsl: str | None = None) -> Proposal | None:
        """A proposal of program `dsl` (default: `point` rendered), whose point is `point`, unless that program, or
        for a rendered point the same mapping, was evaluated already."""
        rendered = dsl is None
        if rendered:
            point = self.space.semantic(point)
            dsl = self.space.render(point)
        key = normalize_dsl(dsl)
        if key in evaluated or (rendered and tuple(sorted(point.items())) in evaluated):
            return None
        self.points.setdefault(key, point)
        if rendered:
            self.rendered.add(key)
        return Proposal(dsl, note=note)

    def _semantic_key(self, text: str) -> tuple:
        return tuple(sorted(self.space.semantic(self.points[text]).items()))

    def _is_exact(self, text: str) -> bool:
        """Whether the program `text` (normalised) maps exactly as its point: true for rendered points, checked with
        the reference evaluator for the start program and AutoGuide's edited programs."""
        if text in self.rendered:
            return True
        if text not in self.points:
            return False
        if text not in self.exact:
            self.exact[text] = self.space.same_mapping(text, self.space.render(self.points[text]))
        return self.exact[text]

    def observe(self, record: IterationRecord) -> None:
        if record.best_iter is not None:  # the loop decided, beyond the noise
            if record.best_iter == record.iter:
                self.best = record
        elif record.ok and record.throughput is not None and (self.best is None or record.score > self.best.score):
            self.best = record

    # ------------------------------------------------------------------------------------------------ candidates

    def _candidates(self, history: Sequence[IterationRecord], rng: random.Random
                    ) -> Iterator[tuple[str | None, dict, str]]:
        """Candidates, most promising first: (program text, or None to render the point; point; note)."""
        last = history[-1]
        best_point = self.points.get(normalize_dsl(self.best.dsl)) if self.best else None
        edits = [Edit.from_json(e) for e in (last.feedback or {}).get("edits", ())]
        base = last.dsl if not last.ok else (self.best.dsl if self.best else None)
        edited = _apply(base, edits) if base and edits else None
        if edited is not None:
            ops = ", ".join(sorted({e.op for e in edits}))
            yield edited, self.space.project(edited), f"AutoGuide edits ({ops}) on iteration {last.iter}'s program"
        if best_point is None:
            # Nothing has worked yet: the default mapper's behaviour first, then around the start.
            yield None, self.space.default_point(), "the default mapper's behaviour (nothing has succeeded yet)"
            best_point, origin = self.start_point, "the start program"
        else:
            origin = f"the best, iteration {self.best.iter}"
        for move in self.space.neighbours(best_point, weights=_profile_weights(self.best), rng=rng):
            yield None, self.space.apply(best_point, move), f"neighbour of {origin}: {move.label}"


def _apply(dsl: str, edits: list[Edit]) -> str | None:
    """`dsl` with AutoGuide's `edits` applied, formatted; None when they do not apply to it."""
    from mapperopt.autoguide import apply_edits, program_edits
    from mapperopt.dsl.formatter import format_program
    from mapperopt.dsl.parser import parse

    edits = program_edits(edits)  # a run setting (a memory size) is the loop's to apply, not the search's
    if not edits:
        return None
    try:
        return format_program(apply_edits(parse(dsl, "<edit>"), edits))
    except MapperoptError:
        return None


def _profile_weights(record: IterationRecord | None) -> dict[str, float]:
    """Seconds of execution per task in the record's run profile (docs/compiler.md), summed over kinds and
    repeats; empty when the run had no profile."""
    weights: dict[str, float] = {}
    for attempt in ((record.result or {}).get("attempts") or []) if record else []:
        for entry in ((attempt.get("profile") or {}).get("tasks") or []):
            weights[entry["task"]] = weights.get(entry["task"], 0.0) + float(entry.get("total_s", 0.0))
    return weights
