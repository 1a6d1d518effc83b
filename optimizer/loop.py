"""The tuning loop: propose, evaluate (check, compile, run, AutoGuide), record, observe — resumable.

    store = TuneStore.create(Path("runs"), "circuit", settings)
    evaluator = BenchmarkEvaluator("circuit", size="ci", cpus=2)
    tune(store, optimizer, evaluator, iters=10, on_record=print)

Each iteration is appended to the store's journal before the next one starts, and best.dsl, history.csv and
progress.png are rewritten after it. The process holds the folder's lock throughout. A program evaluated before
(same normalised text, same run settings) is not run again: the stored outcome is reused, recorded as cached, and
the iteration still counts; a timeout or a kill is never reused (it is measured again). A candidate becomes the
best only when it is faster than the best beyond the noise (`protocol.compare`), or when both, re-measured together,
say so (docs/tuning.md). An exception raised by the optimizer's agent is not fatal: the optimizer returns it as a
proposal without a program, and the iteration records it as a failure at stage "generate" with the error as
feedback. Infrastructure errors (Legion or a compiler missing) do end the loop: they say nothing about the mapper.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Protocol

from mapperopt.benchmarks import protocol
from mapperopt.files import write_atomically, writing_in
from mapperopt.optimizer.base import IterationRecord, Optimizer, Proposal, cache_key, normalize_dsl
from mapperopt.optimizer.store import TuneStore, relative_run_dirs
from mapperopt.records import Feedback, RunResult

TIMEOUT_FACTOR = 5.0  # a new mapper may run this many times longer than the best one before it is stopped
MIN_TIMEOUT_S = 30.0  # ...but never less (start-up and a cold build cache must fit)


@dataclass(frozen=True)
class Evaluation:
    """The outcome of evaluating one program: the run, AutoGuide's reading of it and the feedback string."""

    result: RunResult
    feedback: Feedback
    text: str
    measured_in: str | None = None  # another run's iteration whose stored outcome this is (`SharedEvaluations`)


class Evaluator(Protocol):
    """Evaluates a program; `settings` (JSON) identifies the run conditions for the cache key. An evaluator may
    also have `remeasure(mappers: dict[str, str], out_dir) -> dict[str, protocol.Measured]`, measuring programs
    together (the loop uses it to settle a candidate that is not faster than the best beyond the noise)."""

    settings: dict

    def evaluate(self, dsl: str, out_dir: Path, best: IterationRecord | None) -> Evaluation: ...


@dataclass
class BenchmarkEvaluator:
    """Runs a benchmark application with a DSL mapper through the harness (`run_benchmark`) and explains the
    outcome with AutoGuide.

    Attributes:
        app: benchmark name.
        size: the config's size ("ci", "small", "gpu").
        cpus: CPU processors (`-ll:cpu`), None for the size's.
        gpus: GPUs, None for the size's.
        repeats, max_repeats: measured executions per program, at least and at most (the protocol's adaptive R);
            the optimizer sees their trimmed mean.
        timeout_s: per-execution limit in seconds, None for the size's.
        min_time_s: minimum measured seconds per execution (calibration), None for the size's.
        iterations: the iteration count to start from (the application's iterations flag), None for the size's;
            the harness still grows it when an execution measures less than `min_time_s`.
        memory: {"csize"/"fsize"/"zsize": MiB} overriding the size's.
        baselines: throughputs of reference mappers by name ("expert", "default") for AutoGuide's comparisons.
        level: AutoGuide level ("raw", "explain", "suggest").
        profile: collect per-task times (AutoGuide names the heaviest task; the guided search tries it first).
        extra_args: application arguments; a flag the size sets takes the value given here (e.g. ["-i", "5000"]).
        raise_memory: let `tune` raise `memory` as AutoGuide's size edits of a failed iteration ask (`mapperopt
            tune`; not in a comparison of optimizers, where every one must run alike).
        reference_wall_s: the longest execution of the reference mapper (compare's), seconds: what the adaptive
            timeout allows for until an iteration has succeeded (None: the size's timeout until then).
        dedicated: nothing else runs on the machine (a lent GPU machine): an execution that times out or is killed
            did so by its own doing, so it is not run again (on a shared machine the load may be the cause).
        default_failure: how Legion's default mapper failed as the baseline under these settings ({"stage",
            "reason"}, `baseline_failure`), None when it worked or was not run: AutoGuide then does not advise
            undoing a mapper change for a failure at that stage.
        own_mapper: the name of the mapper a user's program registers itself, which its `default` reference runs
            (AutoGuide's texts name it so); None for a benchmark or a program without one.
    """

    app: str
    size: str = "ci"
    cpus: int | None = None
    gpus: int | None = None
    repeats: int = 1
    max_repeats: int | None = None
    timeout_s: float | None = None
    min_time_s: float | None = None
    iterations: int | None = None
    memory: dict[str, int] = field(default_factory=dict)
    baselines: dict[str, float] = field(default_factory=dict)
    level: str = "suggest"
    profile: bool = True
    extra_args: tuple[str, ...] = ()
    raise_memory: bool = False
    reference_wall_s: float | None = None
    dedicated: bool = False
    default_failure: dict[str, str] | None = None
    own_mapper: str | None = None

    @property
    def settings(self) -> dict:
        return {"app": str(self.app), "size": self.size, "cpus": self.cpus, "gpus": self.gpus, "repeats": self.repeats,
                "max_repeats": self.max_repeats, "timeout_s": self.timeout_s, "min_time_s": self.min_time_s,
                "iterations": self.iterations, **self.memory, "profile": self.profile,
                "extra_args": list(self.extra_args)}

    def run_options(self) -> dict:
        """The options of `run_benchmark` (and `protocol.measure_together`) these settings mean."""
        from mapperopt.benchmarks import load_config

        fixed = [load_config(self.app).iterations_flag, str(self.iterations)] if self.iterations else []
        return {"size": self.size, "cpus": self.cpus, "gpus": self.gpus, "timeout_s": self.timeout_s,
                "extra_args": (*self.extra_args, *fixed), **self.memory}

    def remeasure(self, mappers: dict[str, str], out_dir: Path) -> dict[str, protocol.Measured]:
        """The programs `mappers` (name -> DSL) measured together, `protocol.MIN_REPEATS` interleaved rounds."""
        options = self.run_options()
        min_time = self.min_time_s if self.min_time_s is not None else protocol.MIN_TIME_S
        return protocol.measure_together(self.app, mappers, protocol.MIN_REPEATS, out_dir, min_time_s=min_time,
                                         **options)

    def evaluate(self, dsl: str, out_dir: Path, best: IterationRecord | None) -> Evaluation:
        """Checks, compiles and runs `dsl` with its files in `out_dir`; never raises for a bad mapper.

        Without an explicit `timeout_s`, an execution may take `TIMEOUT_FACTOR` times the best run's longest
        execution, or before any success the reference mapper's (at least `MIN_TIMEOUT_S`, at most the size's
        timeout): a mapper that much slower is a failure anyway (the paper scores it 0), and waiting out the size's
        full timeout would stall tuning (a random start at a GPU size may put the main kernel on the CPUs).

        Raises:
            MapperoptError: the harness cannot run at all (toolchain, build of the application, bad settings).
        """
        from mapperopt.autoguide import explain, feedback_text
        from mapperopt.benchmarks import load_config, run_benchmark

        timeout_s = self.timeout_s
        if timeout_s is None and adaptive_timeout(best, self.reference_wall_s) is not None:
            timeout_s = min(adaptive_timeout(best, self.reference_wall_s),
                            load_config(self.app).size(self.size).timeout_s)
        options = {**self.run_options(), "timeout_s": timeout_s, **({"retries": 0} if self.dedicated else {})}
        result = run_benchmark(self.app, dsl, repeats=self.repeats, max_repeats=self.max_repeats, out_dir=out_dir,
                               min_time_s=self.min_time_s, profile=self.profile, **options)
        feedback = explain(result, level=self.level, best=best.throughput if best else None,
                           baselines=self.baselines, default_failure=self.default_failure, own_mapper=self.own_mapper,
                           best_result=best_run(best))
        return Evaluation(result, feedback, feedback_text(feedback, result))


def best_run(best: IterationRecord | None) -> RunResult | None:
    """The best iteration's run, whose task profile AutoGuide compares a slower run's with; None without one (no best
    yet, or a cached iteration, which keeps no run)."""
    return RunResult.from_json(best.result) if best is not None and best.result else None


def adaptive_timeout(best: IterationRecord | None, reference_wall_s: float | None = None) -> float | None:
    """Seconds per execution allowed to a new mapper given the best iteration so far, or without one the reference
    mapper's longest execution (None: the size's)."""
    walls = [a["wall_s"] for a in ((best.result or {}).get("attempts") or [])] if best else []
    if not walls and reference_wall_s:
        walls = [reference_wall_s]
    return max(MIN_TIMEOUT_S, TIMEOUT_FACTOR * max(walls)) if walls else None


def measure_baselines(app: str, names: list[str], evaluator: BenchmarkEvaluator, out_dir: Path
                      ) -> tuple[dict[str, float], dict[str, str], int | None]:
    """Throughputs (trimmed means) of reference mappers ("expert", "default") under the evaluator's settings, with
    `evaluator.repeats` executions each. Run folders go to `out_dir/baseline-<name>/` (their result.json naming them
    relative to `out_dir`, the tuning or comparison folder).

    Returns:
        (throughput by name, reason by name for each reference that failed or is unavailable, the iteration count
        the first successful one was calibrated to, or None); AutoGuide only compares with the ones that worked.
    """
    from mapperopt.benchmarks import run_benchmark
    from mapperopt.errors import MapperoptError

    measured, failed, iterations = {}, {}, None
    for name in names:
        try:
            result = run_benchmark(app, name, repeats=evaluator.repeats, out_dir=out_dir / f"baseline-{name}",
                                   min_time_s=evaluator.min_time_s, **evaluator.run_options())
        except MapperoptError as exc:  # e.g. no expert mapper for this benchmark: tune without that comparison
            failed[name] = exc.message
            continue
        relative_run_dirs([result.run_dir], out_dir)
        if result.ok and result.trimmed_mean:
            measured[name] = result.trimmed_mean
            iterations = iterations or result.settings["iterations"]
        else:
            failed[name] = f"failed at stage {result.stage}: {result.reason}"
    return measured, failed, iterations


def baseline_failure(reason: str | None) -> dict[str, str] | None:
    """{"stage", "reason"} of a reference that `measure_baselines` says failed in a run (`reason`, its entry in the
    failures), None for one that did not run (unavailable) or none."""
    found = re.fullmatch(r"failed at stage (\w+): (.*)", reason or "", re.S)
    return {"stage": found[1], "reason": found[2]} if found else None


def tune(store: TuneStore, optimizer: Optimizer, evaluator: Evaluator, iters: int,
         on_start: Callable[[int], Any] | None = None,
         on_record: Callable[[IterationRecord], Any] | None = None) -> TuneStore:
    """Runs iterations until the store holds `iters` of them, rewriting best.dsl, history.csv and progress.png
    after each. Holds the store's lock (`TuneStore.lock`) from the start (and gives it up at the end if it took
    it). Closes the optimizer at the end (`Optimizer.close`), also when an exception or Ctrl-C ends the run: a
    resumed run takes a new one.

    Args:
        store: the tuning folder; its journal may already hold iterations (resume): the optimizer is brought up to
            date with `optimizer.resume` and those iterations are not run again.
        optimizer: proposes programs; closed when this returns or raises.
        evaluator: evaluates them (`BenchmarkEvaluator` for real runs).
        iters: the total number of iterations wanted.
        on_start: called with the iteration number before each new iteration (progress display).
        on_record: called with each new record once it is stored.

    Returns:
        the store.

    Raises:
        MapperoptError: another process holds the folder; the harness cannot run at all.
    """
    took_lock = not store.locked
    store.lock()
    try:
        if iters > store.settings.get("iters", iters):
            # Extended: settings.json records the run's count (no part of its `request`, which finds the folder).
            store.settings["iters"] = iters
            store.write_settings()
        if store.records:
            optimizer.resume(store.records)
        while len(store.records) < iters:
            i = len(store.records) + 1
            if on_start:
                on_start(i)
            started = time.monotonic()
            proposal = optimizer.propose(list(store.records))
            with writing_in(store.root):
                record = _evaluate(store, i, proposal, evaluator, started)
            store.append(record)
            _raise_memory(store, evaluator, record)
            store.write_outputs()
            optimizer.observe(record)
            if on_record:
                on_record(record)
        store.write_outputs()
    finally:
        try:
            optimizer.close()  # while the lock is held: an optimizer may keep files in the tuning folder
        finally:
            if took_lock:
                store.unlock()
    return store


def _raise_memory(store: TuneStore, evaluator: Evaluator, record: IterationRecord) -> None:
    """With `evaluator.raise_memory`, apply the memory sizes that AutoGuide's `set_memory_size` edits of a failed
    `record` ask for (a capacity failure that no placement avoids on this machine, autoguide/capacity.py) to the
    evaluator's `memory` and to the stored settings, so that later iterations, a resumed run and the final
    comparison use them. Sizes only grow."""
    from mapperopt.autoguide import memory_settings
    from mapperopt.errors import MapperoptError
    from mapperopt.records import Edit

    memory = getattr(evaluator, "memory", None)
    if not getattr(evaluator, "raise_memory", False) or memory is None or record.ok or not record.feedback:
        return
    try:
        sizes = memory_settings([Edit.from_json(e) for e in record.feedback.get("edits", ())])
    except MapperoptError:
        return
    raised = {option: mb for option, mb in sizes.items() if mb > memory.get(option, 0)}
    if raised:
        memory.update(raised)
        store.settings["memory"] = dict(memory)
        store.write_settings()


def _evaluate(store: TuneStore, i: int, proposal: Proposal, evaluator: Evaluator, started: float) -> IterationRecord:
    """The record of iteration `i` for `proposal`: an agent failure, a cache hit, or a new evaluation."""
    best = store.best()
    best_so_far = best.throughput if best else 0.0
    kept = {"best_iter": best.iter if best else None, "best_throughput": best_so_far}
    measured_in = getattr(evaluator, "measured_in", None)  # a stored measurement's folder (`SharedEvaluations`)
    out_dir = store.iter_dir(i, keep=measured_in(proposal.dsl) if measured_in and proposal.dsl is not None else None)
    common = {"iter": i, "note": proposal.note, "optimizer_state": proposal.state, "llm": proposal.llm}
    if proposal.dsl is None:
        (out_dir / "agent_error.txt").write_text(proposal.error or "")
        return IterationRecord(**common, dsl=None, key=None, status="failed", stage="generate",
                               category="agent.error", throughput=None, unit=None, **kept,
                               feedback_text=proposal.error or "Execution: Agent Error",
                               wall_s=round(time.monotonic() - started, 3))
    key = cache_key(normalize_dsl(proposal.dsl), evaluator.settings)
    hit = store.lookup(key)
    if hit is not None:
        (out_dir / "mapper.dsl").write_text(proposal.dsl)
        write_atomically(out_dir / "cached.json", json.dumps({"cached_from": hit.iter, "key": key}) + "\n")
        text = (f"{hit.feedback_text}\nNote: this mapper is identical to the one of iteration {hit.iter}; its result "
                "was reused. Propose a different mapper.")
        return IterationRecord(**common, dsl=proposal.dsl, key=key, status=hit.status, stage=hit.stage,
                               category=hit.category, throughput=hit.throughput, unit=hit.unit, **kept,
                               cached=True, cached_from=hit.iter, feedback_text=text,
                               feedback=hit.feedback, wall_s=round(time.monotonic() - started, 3))
    evaluation = evaluator.evaluate(proposal.dsl, out_dir, best)
    feedback = evaluation.feedback
    # the run folder relative to the tuning folder, which can be moved
    result = replace(evaluation.result, run_dir=os.path.relpath(evaluation.result.run_dir, store.root)
                     if evaluation.result.run_dir else None)
    if evaluation.measured_in is None and (out_dir / "result.json").exists():  # the harness's, of this run
        write_atomically(out_dir / "result.json", json.dumps(result.to_json(), indent=2) + "\n")
    (out_dir / "feedback.txt").write_text(evaluation.text + "\n")
    throughput = result.recorded_throughput if result.ok else None
    record = IterationRecord(**common, dsl=proposal.dsl, key=key, status=result.status, stage=result.stage,
                             category=feedback.category, throughput=throughput, unit=result.unit, **kept,
                             cached_from=evaluation.measured_in, feedback_text=evaluation.text,
                             result=_slim(result), feedback=feedback.to_json())
    if record.ok and _becomes_best(record, best, evaluator, out_dir, store.root):
        record = replace(record, best_iter=i, best_throughput=throughput)
    return replace(record, wall_s=round(time.monotonic() - started, 3))


def _becomes_best(record: IterationRecord, best: IterationRecord | None, evaluator: Evaluator, out_dir: Path,
                  root: Path) -> bool:
    """Whether a successful new `record` replaces `best`: it is faster beyond the noise (`protocol.compare` of
    their executions), or it looks faster and, when both are re-measured together (`evaluator.remeasure`, files in
    `out_dir/remeasure/`), it still is. The verdict goes to `out_dir/best.json` (its run folders relative to the
    tuning folder `root`)."""
    if best is None:
        return True
    if record.throughput <= best.throughput:
        return False
    mine, theirs = protocol.values_of(record.result), protocol.values_of(best.result or {})
    verdict: dict[str, Any] = {"best_before": best.iter}
    if not (mine and theirs):
        verdict["decided_by"] = "estimates (no executions to compare)"
        wins = True
    else:
        comparison = protocol.compare(mine, theirs)
        verdict.update(comparison=comparison.to_json(), decided_by="comparison")
        wins = comparison.significant
        remeasure = getattr(evaluator, "remeasure", None)
        if not wins and remeasure is not None:
            shutil.rmtree(out_dir / "remeasure", ignore_errors=True)  # an interrupted attempt's, kept with its folder
            again = remeasure({"candidate": record.dsl, "best": best.dsl}, out_dir / "remeasure")
            verdict.update(decided_by="re-measured together",
                           remeasured={k: {**m.to_json(), "run_dirs": relative_run_dirs(m.run_dirs, root)}
                                       for k, m in again.items()})
            wins = (all(m.ok for m in again.values())
                    and again["candidate"].estimate.value > again["best"].estimate.value)
    verdict["becomes_best"] = wins
    (out_dir / "best.json").write_text(json.dumps(verdict, indent=2) + "\n")
    return wins


def _slim(result: RunResult) -> dict:
    """The run as JSON without the failure log, which stays in the run folder (it can be megabytes)."""
    data = result.to_json()
    data["log"] = data["log"][:2000]
    return data
