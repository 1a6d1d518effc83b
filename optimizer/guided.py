"""The offline default optimizer: a deterministic, rule-based search (not a language model).

It walks the search space (`space.py`) around the best program found so far (docs/tuning.md):

1. After a failure, AutoGuide's structured edits for that failure are applied to the failing program
   (`autoguide.apply_edits`: e.g. drop the layout constraint that broke a kernel, reduce an index modulo the
   machine size); the result is mapped back into the space with `SearchSpace.project`. While nothing has worked
   yet, that repair is first tried with the memory-pressure remedies dropped as well (unless a run ran out of
   memory), so that the first working mapper is also a fast one.
2. After a success whose feedback carries edits (e.g. "move tasks to the GPU"), they are applied to the best program.
3. Then the moves that take the best point's statements back to Legion's default (`SearchSpace.toward_default`):
   memory-pressure remedies no run needed, all of the heaviest tasks' decisions, the layout. A random start carries
   statements that only cost; one decision at a time, the neighbours would reach them last.
4. Otherwise the next unevaluated neighbour of the best point is proposed: one decision (or one pattern for every
   index launch) changed, the most promising first (see `SearchSpace.neighbours`: compute tasks first, then the
   tasks that took the most time in the best run's profile).
5. When the neighbourhood is exhausted, a random point (a restart).

A mapping already measured is never proposed again, whether it was written the same way or not (two patterns that
place every point alike, or the start program and its rendering in the space, count as one mapping), nor a layout
the application's kernels rejected (a failure AutoGuide files under layout.*; of the failing program's layout values,
those that ran in a program that worked are not blamed).

Every random choice comes from a generator seeded with (seed, iteration), so the same seed and the same measurements
give the same proposals, and `resume` can rebuild the state by replaying the journal.
"""

from __future__ import annotations

import random
from typing import Any, Iterator, Mapping, Sequence

from mapperopt.errors import MapperoptError
from mapperopt.optimizer.base import IterationRecord, Optimizer, Proposal, normalize_dsl, start_note
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
        self.start_note = start_note(space, start, start_point)
        self.points: dict[str, dict[str, Any]] = {normalize_dsl(start): self.start_point}
        self.rendered: set[str] = set()  # normalised programs rendered from their point (exactly that point)
        self.exact: dict[str, bool] = {}  # for other programs: does the point's rendering map the same?
        self.best: IterationRecord | None = None
        # (decision, value) of layouts the application's kernels rejected (a failure AutoGuide files as layout.*):
        # no point using one is proposed again. A value that ran in a successful program is never the culprit.
        self.rejected: set[tuple[str, Any]] = set()
        self.worked: set[tuple[str, Any]] = set()

    def describe(self) -> str:
        return "guided — rule-based search (AutoGuide edits + local search), not a language model"

    # ------------------------------------------------------------------------------------------------ protocol

    def propose(self, history: Sequence[IterationRecord]) -> Proposal:
        if not history:
            return Proposal(self.start, note=self.start_note)
        evaluated = {normalize_dsl(r.dsl) for r in history if r.dsl is not None}
        evaluated |= {self._semantic_key(text) for text in evaluated if self._is_exact(text)}
        rng = random.Random(f"{self.seed}:{len(history)}")
        for dsl, point, note in self._candidates(history, rng):
            if (proposal := self._new(point, note, evaluated, dsl, repair=note.startswith("AutoGuide"))) is not None:
                return proposal
        for _ in range(RESTART_TRIES):
            proposal = self._new(self.space.random_point(rng), "random restart (neighbourhood of the best exhausted)",
                                 evaluated)
            if proposal is not None:
                return proposal
        return Proposal(self.best.dsl if self.best else self.start, note="search space exhausted: best program again")

    def _new(self, point: dict[str, Any], note: str, evaluated: set, dsl: str | None = None, repair: bool = False
             ) -> Proposal | None:
        """A proposal of program `dsl` (default: `point` rendered), whose point is `point`, unless that program, or
        for a rendered point the same mapping, was evaluated already, or (`repair` aside: the layout AutoGuide's
        edits left) it uses a rejected layout."""
        rendered = dsl is None
        if rendered and not repair and any((name, value) in self.rejected for name, value in point.items()):
            return None
        if rendered:
            point = self.space.semantic(point)
            dsl = self.space.render(point)
        key = normalize_dsl(dsl)
        if key in evaluated or (rendered and tuple(sorted(point.items())) in evaluated):
            return None
        self.points.setdefault(key, point)
        if rendered:
            self.rendered.add(key)
        elif self._is_exact(key) and self._semantic_key(key) in evaluated:
            return None  # an edited program that maps as one measured already (e.g. the default after a repair)
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
        if not record.ok and record.category.startswith("layout.") and record.dsl is not None:
            point = self.points.get(normalize_dsl(record.dsl)) or self.space.project(record.dsl)
            self.rejected |= {(d.name, point[d.name]) for d in self.space.decisions
                              if d.group == "layout" and point[d.name] != d.default} - self.worked
        elif record.ok and record.dsl is not None:  # layout values that worked were not the culprits
            point = self.points.get(normalize_dsl(record.dsl)) or self.space.project(record.dsl)
            self.worked |= set(point.items())
            self.rejected -= self.worked
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
        pressure = any(_ran_out_of_memory(r) for r in history)
        edits = [Edit.from_json(e) for e in (last.feedback or {}).get("edits", ())]
        base = last.dsl if not last.ok else (self.best.dsl if self.best else None)
        edited, also = _apply(base, edits) if base and edits else (None, [])
        if edited is not None:
            ops = ", ".join(sorted({e.op for e in edits}))
            note = f"AutoGuide edits ({ops}) on iteration {last.iter}'s program" + "".join(f"; {n}" for n in also)
            repaired = self.space.project(edited)
            # Nothing has worked yet: the first repair also drops the remedies for a memory pressure no run had,
            # so that it gives a fast mapper, not only a working one.
            if best_point is None and not pressure and (drop := self.space.drop_remedies(repaired)) is not None:
                yield None, self.space.apply(repaired, drop), f"{note}, and {drop.label}"
            yield edited, repaired, note
        if best_point is None:
            # Nothing has worked yet: the default mapper's behaviour first, then around the start.
            yield None, self.space.default_point(), (f"{self.space.default_label} mapper's behaviour (nothing has "
                                                     "succeeded yet)")
            best_point, origin = self.start_point, "the start program"
        else:
            origin = f"the best, iteration {self.best.iter}"
        weights = _profile_weights(self.best)
        # Statements of a (random) start that the runs or Legion's default contradict go first: they are where a
        # start loses most, and the single-decision neighbours below would reach them last.
        for move in self.space.toward_default(best_point, weights=weights, pressure=pressure):
            yield (None, self.space.apply(best_point, move),
                   f"toward {self.space.default_label} from {origin}: {move.label}")
        for move in self.space.neighbours(best_point, weights=weights, rng=rng):
            yield None, self.space.apply(best_point, move), f"neighbour of {origin}: {move.label}"


def _apply(dsl: str, edits: list[Edit]) -> tuple[str | None, list[str]]:
    """`dsl` with AutoGuide's `edits` applied, formatted, and the notes of what they changed beyond the statements
    they name (`apply_edits`); None when they do not apply to it."""
    from mapperopt.autoguide import apply_edits, program_edits
    from mapperopt.dsl.formatter import format_program
    from mapperopt.dsl.parser import parse

    edits = program_edits(edits)  # a run setting (a memory size) is the loop's to apply, not the search's
    if not edits:
        return None, []
    notes: list[str] = []
    try:
        return format_program(apply_edits(parse(dsl, "<edit>"), edits, notes)), notes
    except MapperoptError:
        return None, []


def _profile_weights(record: IterationRecord | None) -> dict[str, float]:
    """Seconds of execution per task in the timed loop, from the record's task profile (`autoguide.task_profile`),
    summed over processor kinds; a task that runs only outside the timed loop (set-up, check) weighs 0. Empty when
    the run had no profile."""
    from mapperopt.autoguide.explain import task_profile
    from mapperopt.records import RunResult

    if record is None or not record.result:
        return {}
    weights: dict[str, float] = {}
    for row in task_profile(RunResult.from_json(record.result)):
        weights[row["task"]] = weights.get(row["task"], 0.0) + (row["total_s"] if row["timed"] else 0.0)
    return weights


def _ran_out_of_memory(r: IterationRecord) -> bool:
    """Whether run `r` failed for lack of memory: Legion's out-of-memory abort, or the mapper's R403 for a memory
    whose allocation failed (a full one, as opposed to an absent or invisible one)."""
    excerpt = str((r.feedback or {}).get("raw_excerpt") or "")
    return r.category == "memory.oom" or (r.category == "memory.placement" and "allocation of" in excerpt)
