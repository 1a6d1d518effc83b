"""`mapperopt compare`: every optimizer, several seeds, the same benchmark, budget and measurements.

    mapperopt compare circuit --optimizers guided,opentuner,optuna,random --iters 10 --runs 5 --size small
    mapperopt compare --app mapperopt.yaml --optimizers guided,random --iters 10 --runs 3

The reference every throughput is divided by is the benchmark's expert mapper; a user's program (`--app`) has none,
and Legion's default mapper takes its place (measured the same way; `reference` in summary.json says which), or the
program's own mapper where it registers one (`own_mapper` names it).

Folder `runs/<bench>/compare-<settings hash>/` (the same command finds it again and resumes; `--new` starts another,
`compare-<hash>-2/`, ...):

    settings.json       what was asked for, and the --jobs of each command that measured (`jobs_by_command`)
    expert.json         the reference mapper measured first (baseline-expert/; default.json and baseline-default/
                        for a user's program): AutoGuide's reference, the iteration count every run starts from
                        (calibration), and the unit of the curves
    <opt>-<r>/          one tuning folder per optimizer and repeat r (seed = --seed + r), as `mapperopt tune` writes
    evaluations/        outcomes shared by all tuning runs of this comparison: a program is compiled and run once
                        (.evaluating/: a lock per program, so that two jobs proposing it at once measure it once)
    final-N/, final.json  the reference and every run's best program measured together at the end, in groups of runs
                        (one per job with --jobs; each group measures the reference again); groups set aside are
                        kept under `replaced`, measurements cut short under `interrupted` (and ended ones
                        whose record a deleted final.json lost, under `lost`); a final-N/ whose measurement
                        ended holds ended.json (its rounds and runs)
    runs.csv            one row per tuning run
    summary.csv         the paper's table per optimizer (mean, std, worst, median, best of the runs' normalised best
                        throughput; std empty for a single run, n/a in the tables) and the share
                        of failed evaluations
    summary.json        all of the above
    compare.png         normalised best-so-far throughput against iteration: mean over the repeats, min-max band;
                        at "final", the table's scores (which divide by the reference's final measurement)
    table.md            the table in Markdown

Measurements follow the protocol of `mapperopt tune` (`benchmarks/protocol.py`: calibrated executions, adaptive
repeats, trimmed mean; a candidate becomes a run's best only beyond the noise). Scoring (the paper's): a run's score
is its best program's throughput divided by the reference mapper's, both from the final measurement, in which the
reference and the best program of every run are measured together in `--final-rounds` interleaved rounds (one
invocation, so that a change of the machine's load falls on all alike; with `--jobs`, by groups of runs, each with
its own measurement of the reference on the same cores, run in parallel); 0 when no program worked or the best failed
there. The curves divide each run's best-so-far by the reference's first measurement. A user's program without a
verification (its own MAPPEROPT_RESULT check does not count) gets no layout choices, as with `mapperopt tune` (a
layout can make a program compute wrong numbers silently). Every optimizer starts repeat r from the same program
(`--start`, default a random point of the space drawn from seed r: the paper's random initial agent), gets the same
iterations and the same evaluator.
"""

from __future__ import annotations

import csv
import errno
import hashlib
import json
import math
import os
import re
import shlex
import signal
import statistics
import sys
import textwrap
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, NoReturn

import click
from click.core import ParameterSource

from mapperopt import toolchain
from mapperopt.benchmarks import protocol
from mapperopt.benchmarks.apps import require_one_value
from mapperopt.benchmarks.commands import (BenchCommand, check_repeats, check_timeout, print_command_last,
                                           print_progress, print_wrapped, size_options, wrap_whole, wraps)
from mapperopt.benchmarks.userapp import (UserApp, app_from_options, app_options, build_record, own_check_seen,
                                          spec_words, unseen_rebuild_note)
from mapperopt.descriptions import APP_FIELDS, MACHINE_FIELDS
from mapperopt.dsl.parser import read_source
from mapperopt.errors import MapperoptError, UsageError, closest
from mapperopt.files import AtLeast, OneOf, Positive, read_json, restore_hint, write_atomically, wrong_kind
from mapperopt.optimizer.base import (OPTIMIZERS, IterationRecord, cache_key, make_optimizer, normalize_dsl,
                                      require_packages)
from mapperopt.optimizer.commands import (ADAPTIVE_TIMEOUT, FINAL_ROUNDS, BuildChanged, best_run_command,
                                          changed_build, check_endpoint_first, check_options, check_start_file,
                                          continued_by, final_round_check, keep_named, keep_reference, layouts_note,
                                          measure_more, memory_now, min_time_option, next_line, noise_options,
                                          option_words, print_new_notes, require_known_size, require_same_build,
                                          require_same_machine, require_start_file, tests_size_note)
from mapperopt.optimizer.loop import BenchmarkEvaluator, Evaluation, best_run
from mapperopt.optimizer.store import (SAME_FIGURE, SETTINGS_SCHEMA, TuneStore, folder_path, held_elsewhere,
                                       hold_program_folder, joined_names, measured_values, rebuilt_iterations,
                                       reference_name, relative_run_dirs, require_machine)
from mapperopt.benchmarks.protocol import SHORTEST_TIMEOUT_S
from mapperopt.options import FiniteFloatRange
from mapperopt.records import RESULT_FIELDS, RunResult

SCHEMA = "mapperopt.compare/1"
DEFAULT_OPTIMIZERS = tuple(name for name, spec in OPTIMIZERS.items() if spec.compared)
# Stated limit of --runs: each run is a whole tuning run (minutes), and set-up goes over every run, so a mistyped count
# (1000000000) spun for an hour before printing anything.
MAX_RUNS = 1000
SUMMARY_COLUMNS = ("optimizer", "runs", "mean", "std", "worst", "median", "best", "failed_share", "evaluations")
# The reference's final measurement this far from its first (either way) is said under the table and plot.
DRIFT = 1.2
RUN_COLUMNS = ("optimizer", "repeat", "seed", "iterations", "failed", "best_iter", "best_throughput",
               "final_throughput", "reference_throughput", "unit", "normalized", "folder")


@dataclass(frozen=True)
class RunOutcome:
    """One finished tuning run of a comparison.

    Attributes:
        optimizer, repeat, seed: which run.
        records: its iterations.
        best: its best iteration (the loop's, decided beyond the noise), None when nothing worked.
        final: the best program's throughput in the final measurement, None when nothing worked or it failed there.
        folder: its tuning folder.
        reference: the reference mapper's throughput in the final measurement of this run's group (None: the one
            passed to `score`).
        failure: how its best program failed in the final measurement (`_final_failure`), None when it did not.
    """

    optimizer: str
    repeat: int
    seed: int
    records: list[IterationRecord]
    best: IterationRecord | None
    final: float | None
    folder: Path
    reference: float | None = None
    failure: dict | None = None

    def curve(self, expert: float) -> list[float]:
        """Normalised best-so-far throughput after each iteration (failures count 0)."""
        return [r.best_throughput / expert for r in self.records]

    def score(self, expert: float) -> float:
        return (self.final or 0.0) / (self.reference or expert)




class SharedEvaluations:
    """An evaluator that runs each program once per comparison: a program some run of the comparison evaluated
    already (same normalised text, same settings) gets the stored `RunResult`, explained again for this run (AutoGuide
    compares with this run's best). Assumes, as the paper does, that a mapper's performance is deterministic. An
    outcome without a task profile serves an evaluator that profiles only when it failed (nothing to profile); a
    timeout or kill is kept only on a dedicated machine (elsewhere the load may have caused it)."""

    def __init__(self, inner: BenchmarkEvaluator, folder: Path, say: Callable[[str], None] = print):
        self.inner = inner
        self.folder = folder
        self.say = say  # for the note on a damaged stored outcome
        self.settings = inner.settings

    def _path(self, dsl: str) -> Path:
        # the key of a profiling evaluator, whichever this one is: with and without a profile share outcomes
        return self.folder / f"{cache_key(normalize_dsl(dsl), {**self.settings, 'profile': True})}.json"

    def _stored(self, path: Path):
        """The `RunResult` stored at `path` that this evaluator reuses, or None."""
        try:
            stored = RunResult.from_json(read_json(path, fields=RESULT_FIELDS)) if path.exists() else None
        except MapperoptError as exc:  # a damaged outcome: measured again, then stored anew (`_evaluate`)
            self.say(f"Note: {exc.message}; its program is measured again.")
            return None
        if stored is not None and self.inner.profile and stored.status == "ok" and stored.profile is None:
            return None  # measured without the profile this run's optimizer reads: run again, with it
        return stored

    def measured_in(self, dsl: str) -> Path | None:
        """The run folder of the stored outcome of `dsl` that `evaluate` would reuse (None: none), as a path to use
        now: a run resuming the iteration it was measured in keeps that folder's files."""
        stored = self._stored(self._path(dsl))
        return folder_path(stored.run_dir, self.folder.parent) if stored is not None and stored.run_dir else None

    def evaluate(self, dsl: str, out_dir: Path, best: IterationRecord | None) -> Evaluation:
        from filelock import FileLock

        path = self._path(dsl)
        # one program at a time: a run of another job (--jobs) proposing it meanwhile waits for this outcome (the
        # lock beside evaluations/, whose files are all outcomes)
        locks = self.folder.parent / ".evaluating"
        locks.mkdir(parents=True, exist_ok=True)
        with FileLock(locks / f"{path.stem}.lock"):
            return self._evaluate(path, dsl, out_dir, best)

    def _evaluate(self, path: Path, dsl: str, out_dir: Path, best: IterationRecord | None) -> Evaluation:
        from mapperopt.autoguide import explain, feedback_text

        stored = self._stored(path)
        comparison = self.folder.parent
        if stored is not None:
            # where it ran now (the comparison's folder may have moved), and relative to that folder
            run_dir = folder_path(stored.run_dir, comparison) if stored.run_dir else None
            result = replace(stored, run_dir=str(run_dir) if run_dir else None)
            where = os.path.relpath(run_dir, comparison) if run_dir else None
            if run_dir is not None and run_dir.resolve() == out_dir.resolve():
                where = None  # measured in this very iteration, interrupted after that: no other's measurement
            else:
                (out_dir / "shared.json").write_text(json.dumps({"evaluated_in": where}) + "\n")
            feedback = explain(result, level=self.inner.level, best=best.throughput if best else None,
                               baselines=self.inner.baselines, own_mapper=self.inner.own_mapper,
                               best_result=best_run(best))
            return Evaluation(result, feedback, feedback_text(feedback, result), measured_in=where)
        evaluation = self.inner.evaluate(dsl, out_dir, best)
        probe = IterationRecord(iter=0, dsl=dsl, key=None, status=evaluation.result.status,
                                stage=evaluation.result.stage, category="", throughput=None, unit=None,
                                best_throughput=0.0, result=evaluation.result.to_json())
        if self.inner.dedicated or not probe.transient:  # else a timeout or kill is measured again next time
            self.folder.mkdir(exist_ok=True)
            run_dir = evaluation.result.run_dir and os.path.relpath(evaluation.result.run_dir, comparison)
            # a torn file never looks like a stored outcome
            write_atomically(path, json.dumps(replace(evaluation.result, run_dir=run_dir).to_json()) + "\n")
        return evaluation

    def remeasure(self, mappers: dict[str, str], out_dir: Path) -> dict[str, protocol.Measured]:
        return self.inner.remeasure(mappers, out_dir)


def settings_hash(settings: dict) -> str:
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:10]


def compare_folder(runs_dir: Path, bench: str, settings: dict, new: bool,
                   keeps: Callable[[Path], Any] | None = None) -> Path:
    """The folder of the comparison with these settings: the latest one (resumed), or a new one with `new` or when
    none exists. The optimizers, iterations and repeats are not part of its identity: asking for more of them later
    extends the runs already made. With `keeps`, the latest one for which it is false (a folder whose report the
    command would replace with part of it: `_left_out_of_report`), else a new one."""
    identity = {k: v for k, v in settings.items() if k not in ("optimizers", "iters", "repeats")}
    base = Path(runs_dir) / bench / f"compare-{settings_hash(identity)}"
    existing = [base] if base.exists() else []
    n = 2
    while (base.parent / f"{base.name}-{n}").exists():
        existing.append(base.parent / f"{base.name}-{n}")
        n += 1
    if existing and not new:
        if keeps is None:
            return existing[-1]
        kept = next((f for f in reversed(existing) if not keeps(f)), None)
        return kept or base.parent / f"{base.name}-{n}"
    return base.parent / f"{base.name}-{n}" if existing else base


def _left_out_of_report(folder: Path, optimizers: list[str], repeats: int, iters: int) -> tuple[list[str], Any]:
    """The optimizers of the comparison folder `folder`'s report (summary.json's table) and its settings.json's
    iterations, when a command of `optimizers` x `repeats` runs of `iters` iterations leaves some of them out and has
    runs to tune there: resumed, it would replace that report with one of its own optimizers only. Empty when it
    only reports (a smaller comparison answered from the bigger one, said by `_bigger_note`) or names them all."""
    try:
        reported = list(json.loads((folder / "summary.json").read_text()).get("optimizers") or {})
        made = json.loads((folder / "settings.json").read_text()).get("iters")
        held = _held_runs(folder)
    except (OSError, ValueError, AttributeError, MapperoptError):  # damaged: said and refused by what reads it
        return ()
    if all(name in optimizers for name in reported) or all(
            held.get(f"{name}-{r + 1}", 0) >= iters for name in optimizers for r in range(repeats)):
        return ()
    return reported, made


def _no_comparison(bench, runs_dir, folder: Path, asked: dict) -> NoReturn:
    """Raises the error of `--report-only` without a measured comparison of these settings: what is missing, and the
    comparisons of `bench` under `runs_dir` that were made with other settings, with those settings."""
    if folder.exists():
        raise MapperoptError(f"no comparison of {bench} with these settings under {runs_dir} ({folder} has no "
                             "measurement yet)", hint="run the same command without --report-only to measure it")
    others = []
    for settings in sorted(Path(runs_dir, str(bench)).glob("compare-*/settings.json")):
        stored = _folder_file(settings)
        differ = [k for k in asked if k not in ("optimizers", "iters", "repeats") and stored.get(k) != asked[k]]
        shown = ", ".join(_option_text(k, stored.get(k)) for k in differ)
        here = ", ".join(_option_text(k, asked[k]) for k in differ)
        others.append(f"{settings.parent} ({shown}; this command: {here})" if differ else str(settings.parent))
    if not others:
        raise MapperoptError(f"no comparison of {bench} under {runs_dir} to report on",
                             hint="run the same command without --report-only first (from the folder that holds "
                                  "runs/, or give --runs-dir)")
    raise MapperoptError(f"no comparison of {bench} with these settings under {runs_dir}; made with other settings: "
                         + "; ".join(others),
                         hint="give the options of the command that made it (--size, --seed, --start, --repeats, "
                              "--min-time, --cpus ...)")


def _setting_text(value) -> str:
    """A comparison setting as the error above shows it: a start file's text is long, so it is only named."""
    if isinstance(value, str) and "\n" in value:
        return "a start file"
    return "none" if value is None else str(value)


# settings.json's keys by the options that set them, as the error above names them
_OPTIONS = {"size": "--size", "cpus": "--cpus", "gpus": "--gpus", "seed": "--seed", "start": "--start",
            "executions": "--repeats", "max_executions": "--max-repeats", "min_time_s": "--min-time",
            "timeout_s": "--timeout"}


def _option_text(key: str, value) -> str:
    """The comparison setting `key` of `value` in the command line's words ("--repeats 2"; "no --timeout")."""
    if key == "memory":
        given = " ".join(f"--{k} {v}" for k, v in sorted((value or {}).items()))
        return given or "no --csize, --fsize or --zsize"
    if key == "app_args":
        return f"arguments after -- {shlex.join(value)}" if value else "no arguments after --"
    option = _OPTIONS.get(key)
    if option is None:
        return f"{key} {_setting_text(value)}"
    if value is None:
        return f"no {option}"
    return f"a {option} file" if _setting_text(value) == "a start file" else f"{option} {value}"


_DAMAGED = restore_hint("comparison")
# written in a final-N folder once its measurement has ended (its rounds and runs)
ENDED = "ended.json"
# final.json is the record of the final measurement: without it, the command without --report-only measures again
# (`_record_interrupted` names its final-N folders as ended)
_FINAL_DAMAGED = ("restore final.json from a copy; or delete it: the command without --report-only then measures the "
                  "final scores again (its final-N folders are kept)")
# final.json's groups (`_final`), their measurements by mapper (`protocol.Measured` as JSON)
_ESTIMATE = {"values": [Positive], "value": Positive, "low": float, "high": float, "spread": float}
_GROUP = {"runs": [str], "folder": str, "cores": ([int], None), "load_average": [float], "reference": Positive,
          "measured": {str: {"estimate": (_ESTIMATE, None), "unit": (str, None), "reason": (str, None),
                             "run_dirs?": [str], "time_s?": (float, None)}}}
# The fields of a comparison folder's files (`_folder_file`), by file; those of a settings.json that an earlier
# mapperopt did not write may be missing (`_comparison_settings` names them); settings.json's `app` (an object: a
# program of the user's) is checked by `_folder_file`.
# settings.json's counts and choices hold the values their options take (as a tuning folder's do, `store.open`).
_FIELDS = {"settings.json": {"schema?": str, "compare?": str, "bench?": str, "optimizers?": [OneOf(OPTIMIZERS)],
                             "iters?": AtLeast(1, integer=True), "repeats?": AtLeast(1, integer=True), "size?": str,
                             "cpus?": AtLeast(1, integer=True), "gpus?": AtLeast(0, integer=True), "seed?": int,
                             "start?": str, "memory?": {str: AtLeast(1, integer=True)},
                             "executions?": AtLeast(1, integer=True), "max_executions?": AtLeast(1, integer=True),
                             "min_time_s?": AtLeast(0), "timeout_s?": (AtLeast(SHORTEST_TIMEOUT_S), None),
                             "app_args?": [str], "dedicated?": bool, "app_description?": APP_FIELDS,
                             "machine?": MACHINE_FIELDS,
                             "jobs_by_command?": [{"jobs": AtLeast(1, integer=True),
                                                   "cores_per_job": (AtLeast(1, integer=True), None)}]},
           "final.json": {"rounds?": int, "host_cores?": (int, None), "groups?": [_GROUP],
                          # set aside: named only
                          "replaced?": [{"folder": str}], "failed?": [{"folder": str}],
                          "interrupted?": [{"folder": str, "mappers?": [str]}],
                          "lost?": [{"folder": str, "mappers?": [str]}]},
           "summary.json": {"runs?": [{"folder": str, "best_iter?": (int, None)}], "jobs?": int,
                            "cores_per_job?": (int, None)},
           "expert.json": {"throughput": Positive, "iterations": (AtLeast(1, integer=True), None),
                           "wall_s?": (float, None)}}
_FIELDS["default.json"] = _FIELDS["expert.json"]


def _folder_file(path: Path) -> dict:
    """The comparison folder's file `path` (settings.json, final.json, expert.json or default.json).

    Raises:
        MapperoptError: the file is damaged: not valid JSON, a field of another type (`read_json`), a final group
            at odds with itself or the folder (`_require_own_references`), or a machine no probe wrote
            (`store.require_machine`), named.
    """
    data = read_json(path, hint=_FINAL_DAMAGED if path.name == "final.json" else _DAMAGED, fields=_FIELDS[path.name])
    if path.name == "final.json":
        _require_own_references(path, data)
    if path.name == "settings.json" and "machine" in data:
        require_machine(path, data["machine"], _DAMAGED)
    if path.name == "settings.json" and not isinstance(data.get("app", {}), dict):
        # a program's name, as a tuning folder's settings.json has it: said so, not as if an object were simply due
        shown = repr(data["app"]) if isinstance(data["app"], str) else json.dumps(data["app"])
        raise MapperoptError(f"{path} is damaged: its field 'app' is {shown}, not an object: a "
                             "comparison's settings.json keeps in 'app' the description of a program of yours "
                             "(--app), and names a benchmark in 'bench'",
                             hint="remove its field 'app' if it was added by hand; or " + _DAMAGED)
    return data


def _require_own_references(path: Path, finals: dict) -> None:
    """Refuses the final.json `path` (its content `finals`) whose group names a run that has no folder beside it and
    that the report files do not name (a run whose folder was removed is tuned again), holds an estimate whose
    `value` is not the trimmed mean of its `values` (the score of its run, or of every run of the group, takes that
    value), or has a `reference` other than the value of its own measurement of the reference mapper (`measured`),
    which is what `_record_group` keeps there: every score of the group divides by it.

    Raises:
        MapperoptError: naming the field, its value and what it should be.
    """
    for i, group in enumerate(finals.get("groups", [])):
        where = f"groups[{i}]"
        # a file in a run folder's place is named as such by `run_compare`
        absent = [run for run in group["runs"] if not (path.parent / run).exists()]
        if absent:  # a run the report files name was there: its folder was removed, and it is tuned again
            absent = [run for run in absent if run not in _report_runs(path.parent)]
        if absent:
            raise MapperoptError(f"{path} is damaged: its field '{where}.runs' names {', '.join(absent)}, which "
                                 f"{'is no run' if len(absent) == 1 else 'are no runs'} of this comparison (there is "
                                 f"no folder {path.parent / absent[0]})",
                                 hint=f"remove {', '.join(map(repr, absent))} from '{where}.runs' if "
                                      f"{'it was' if len(absent) == 1 else 'they were'} added by hand; or "
                                      + _FINAL_DAMAGED)
        name = next((n for n in ("expert", "default") if n in group["measured"]), None)
        if name is None:
            raise MapperoptError(f"{path} is damaged: its field '{where}.measured' holds no measurement of the "
                                 "reference mapper (expert or default)", hint=_FINAL_DAMAGED)
        for mapper, measured in group["measured"].items():
            _require_own_value(path, f"{where}.measured.{mapper}.estimate", measured["estimate"],
                               f"{where}.reference" if mapper == name and group["reference"] ==
                               (measured["estimate"] or {}).get("value") else None)
        own = (group["measured"][name]["estimate"] or {}).get("value")
        if own != group["reference"]:
            raise MapperoptError(f"{path} is damaged: its field '{where}.reference' is {group['reference']!r}, but the "
                                 f"group's own measurement of the {name} mapper, "
                                 f"'{where}.measured.{name}.estimate.value', is "
                                 + (f"{own!r}" if own is not None else "missing (it failed)"),
                                 hint=(f"set its '{where}.reference' back to {own!r} (its scores divide by it); or "
                                       if own is not None else "") + _FINAL_DAMAGED)


def _require_own_value(path: Path, where: str, estimate: dict | None, also: str | None) -> None:
    """Refuses the estimate `estimate` of final.json `path` (at `where`) whose `value` is not the trimmed mean of its
    `values`, as `protocol.estimate` made it (`also`: a field that holds the same figure, named in the hint).

    Raises:
        MapperoptError: naming the field, its value and the trimmed mean of its values.
    """
    if not estimate or not estimate["values"]:
        return
    values = estimate["values"]
    mean = min(max(protocol.trimmed_mean(values), min(values)), max(values))  # clamped, as `protocol.estimate` does
    if math.isclose(estimate["value"], mean, rel_tol=SAME_FIGURE):
        return
    fields = f"'{where}.value'" + (f" and '{also}'" if also else "")
    raise MapperoptError(f"{path} is damaged: its field '{where}.value' is {estimate['value']!r}, but the trimmed mean "
                         f"of the same estimate's 'values', the throughputs of its executions, is {mean!r}",
                         hint=f"set its {fields} back to {mean!r} if {'they were' if also else 'it was'} edited by "
                              f"hand; or {_FINAL_DAMAGED}")


def _comparison_settings(folder: Path) -> dict:
    """The settings.json of the comparison folder `folder` (`compare --resume`).

    Raises:
        MapperoptError: `folder` is no comparison folder (a tuning run's, one of its runs', any other), or its
            settings.json is damaged or a folder (`read_json`).
    """
    path = folder / "settings.json"
    # a run's settings.json (fields of other types) is named as such before its fields are checked as a comparison's;
    # a folder in its place, by `read_json`
    settings = read_json(path, hint=_DAMAGED, fields={"schema?": str, "compare?": str}) if path.exists() else {}
    if settings.get("schema") != SCHEMA:
        if "compare" in settings:  # a run of a comparison names its folder, relative to its own
            raise MapperoptError(f"{folder} is the tuning run {folder.name} of a comparison, not a comparison folder",
                                 hint="give the comparison's: --resume "
                                      f"{os.path.normpath(folder / settings['compare'])}")
        if not path.exists():
            _require_no_comparison(folder)
        run = " (a tuning run: `mapperopt tune --resume` continues it)" if settings.get("schema") else ""
        raise MapperoptError(f"{folder} is not a comparison folder{run}",
                             hint="give a folder `mapperopt compare` made, e.g. runs/BENCH/compare-<hash>, which "
                                  "holds settings.json, expert.json or default.json and the runs")
    settings = _folder_file(path)
    _require_one_problem(folder, settings)
    missing = [k for k in ("bench", "size", "cpus", "gpus", "seed", "start", "executions", "max_executions",
                           "min_time_s", "optimizers", "iters", "repeats") if k not in settings]
    if missing:
        raise MapperoptError(f"{folder}: its settings.json, written by an earlier mapperopt, lacks "
                             f"{', '.join(missing)}", hint="resume it with the command that made it, without --resume")
    return settings


def _require_one_problem(folder: Path, settings: dict) -> None:
    """Refuses the comparison folder `folder` whose settings.json (`settings`) names another problem than its runs
    were tuned on (an edit): in `bench`, another program than its `app_description` and its runs' settings.json
    (`app`) do; in `size`, another size than its runs' settings.json, or none of the benchmark's sizes. Continued,
    the runs would tune that other problem and append its figures to their journals. A run's `optimizer` other than
    its folder's name (`<optimizer>-<repeat>`) is refused too: its figures would be counted as that folder's
    optimizer's. A program of the user's (`app`) is checked by its identity instead (`run_compare`).

    Raises:
        MapperoptError: naming the file, the fields that disagree and both values: the runs' settings.json when they
            alone disagree with the comparison's other fields, else the comparison's.
    """
    runs = {}
    for run in sorted(folder.glob("*/settings.json")):
        try:
            runs[f"{run.parent.name}/settings.json"] = json.loads(run.read_text())
        except (OSError, ValueError):  # a run's damaged file is named when the run is opened
            continue
    runs = {f: r for f, r in runs.items() if isinstance(r, dict)}
    for file, run in runs.items():  # a run's folder, `<optimizer>-<repeat>`, names the optimizer that tunes it
        name = file.split("/")[0]
        optimizer, _, repeat = name.rpartition("-")
        named = run.get("optimizer")  # another type than a name is refused when the run is opened
        if repeat.isdigit() and optimizer in OPTIMIZERS and isinstance(named, str) and named in OPTIMIZERS and \
                named != optimizer:
            raise MapperoptError(f"{folder / file} is damaged: its field 'optimizer' is {run['optimizer']!r}, but its "
                                 f"folder {name} is a run of {optimizer}",
                                 hint=f"set its 'optimizer' back to \"{optimizer}\" (its iterations were proposed by "
                                      f"that optimizer); or {_DAMAGED}")
    for field in _TUNED_WITH:
        if field in settings:
            _require_runs_setting(folder, field, settings[field], {f: r.get(field) for f, r in runs.items()})
    if "app" in settings or "bench" not in settings:
        return
    bench, described = settings["bench"], (settings.get("app_description") or {}).get("app")
    other = {f: r.get("app") for f, r in runs.items() if isinstance(r.get("app"), str) and r["app"] != bench}
    tuned = set(other.values())
    if described == bench and other and len(other) == len(runs) and len(tuned) == 1 and all(
            _same_description(settings["app_description"], runs[f].get("app_description"), *tuned) for f in other):
        # every run says, in both its fields, the one program whose tasks the comparison's description lists: the
        # comparison's settings.json was edited, in both of its fields
        [program] = tuned
        named = " and ".join(other)
        raise MapperoptError(f"{folder / 'settings.json'} is damaged: its fields 'bench' and 'app_description.app' "
                             f"are {bench!r}, but its runs' {named} {'names' if len(other) == 1 else 'name'} "
                             f"{program!r} in 'app' and 'app_description.app', and its own 'app_description' lists "
                             f"the tasks of theirs",
                             hint=f"set its 'bench' and 'app_description.app' back to \"{program}\" (its runs tune "
                                  f"that program); or {_DAMAGED}")
    if described in (None, bench) and other:  # the runs' files are the odd ones: named as damaged
        run, app = next(iter(other.items()))
        also = " and 'app_description.app'" if described else ""
        raise MapperoptError(f"{folder / run} is damaged: its field 'app' is {app!r}, but the comparison's "
                             f"settings.json names {bench!r} in 'bench'{also}",
                             hint=f"set its 'app' back to \"{bench}\"; or {_DAMAGED}")
    if described not in (None, bench):
        fields = ["its field 'app_description.app'"] + ([f"the field 'app' of {' and '.join(other)}"] if other else [])
        programs = sorted({described, *other.values()})
        raise MapperoptError(f"{folder / 'settings.json'} is damaged: its field 'bench' is {bench!r}, but "
                             f"{' and '.join(fields)} {'are' if len(fields) > 1 else 'is'} "
                             f"{' and '.join(map(repr, programs))}",
                             hint=(f"set its 'bench' back to \"{programs[0]}\" (its runs tune that program); or "
                                   if len(programs) == 1 else "") + _DAMAGED)
    if "size" in settings:
        require_known_size(folder / "settings.json", settings["size"], bench, _DAMAGED)


# The settings a comparison's runs copy from its settings.json (each run's `seed` is its seed plus the repeat's
# number less one), with the reason to set one back.
_TUNED_WITH = {"size": "its runs were tuned at that size", "app_args": "its runs were tuned with those arguments",
               "cpus": "its runs were tuned with that count", "gpus": "its runs were tuned with that count",
               "min_time_s": "its runs were measured with it", "seed": "its runs were tuned from it"}


def _require_runs_setting(folder: Path, field: str, value: Any, runs: dict[str, Any]) -> None:
    """Refuses the comparison folder `folder` whose settings.json's `field` (`value`; a `_TUNED_WITH` field) is not
    its runs' (`runs`: their settings.json's `field`, by file): the comparison's file is named when every run agrees
    on another value and the reference mapper was not measured with its value, else the runs' that differ from it
    (the comparison tunes every run with its own settings)."""
    def shift(run: str) -> int:  # what a run's field adds to the comparison's: its repeat's offset, for the seed
        repeat = run.split("/")[0].rpartition("-")[2]
        return int(repeat) - 1 if field == "seed" and repeat.isdigit() else 0

    due = {f: value + shift(f) if shift(f) else value for f in runs}
    # a run's value of another kind is named when the run is opened
    kind = (int, float) if isinstance(value, (int, float)) else type(value)
    other = {f: v for f, v in runs.items() if isinstance(v, kind) and v != due[f]}
    if not other:
        return
    # the comparison's value each run implies; the one the reference mapper was measured with decides a tie
    implied = [v - shift(f) if shift(f) else v for f, v in other.items()]
    if len(other) == len(runs) and all(v == implied[0] for v in implied) and value not in measured_values(folder,
                                                                                                         field):
        values = list(other.values())
        shown = [repr(v) for i, v in enumerate(values) if v not in values[:i]]
        raise MapperoptError(f"{folder / 'settings.json'} is damaged: its field '{field}' is {value!r}, but the field "
                             f"'{field}' of {' and '.join(other)} {'are' if len(other) > 1 else 'is'} "
                             f"{' and '.join(shown)}",
                             hint=f"set its '{field}' back to {json.dumps(implied[0])} ({_TUNED_WITH[field]}); or "
                                  + _DAMAGED)
    run, was = next(iter(other.items()))
    raise MapperoptError(f"{folder / run} is damaged: its field '{field}' is {was!r}, but the comparison's "
                         f"settings.json names {value!r} in '{field}'"
                         + (f", which makes its seed {due[run]!r}" if shift(run) else ""),
                         hint=f"set its '{field}' back to {json.dumps(due[run])}; or {_DAMAGED}")


def _same_description(comparison: Any, run: Any, program: str) -> bool:
    """Whether a run's `app_description` (`run`) describes `program` and is the comparison's (`comparison`, which
    each run copies) but for the program's name."""
    if not isinstance(comparison, dict) or not isinstance(run, dict) or run.get("app") != program:
        return False
    return {k: v for k, v in comparison.items() if k != "app"} == {k: v for k, v in run.items() if k != "app"}


def _require_no_comparison(folder: Path) -> None:
    """Refuses the folder `folder` without settings.json when it holds what a comparison does (expert.json,
    final.json, its baselines', final measurement's and runs' folders) and no tuning run's journal: a comparison
    that lost its settings, not another folder.

    Raises:
        MapperoptError: what is there, and what to restore; nothing is changed.
    """
    if (folder / "state.jsonl").exists() or any(folder.glob("iter-*")):  # a tuning folder's
        return
    held = [name for name in ("expert.json", "default.json", "final.json", "summary.json") if (folder / name).exists()]
    held += sorted(p.name for p in folder.glob("*") if p.is_dir() and (
        p.name.startswith("baseline-") or p.name[:6] == "final-" and p.name[6:].isdigit()
        or (p / "state.jsonl").exists()))
    if held:
        shown = ", ".join(held[:8]) + (f" and {len(held) - 8} more" if len(held) > 8 else "")
        raise MapperoptError(f"{folder} has no settings.json, but {shown} {'is' if len(held) == 1 else 'are'} there: "
                             "the comparison cannot be continued nor reported on without it; nothing was changed",
                             hint="restore settings.json from a copy; or leave this folder as it is and start a new "
                                  "comparison: the command that made it, with --new")


# `compare`'s parameters that `--resume DIR` takes from the folder's settings instead.
_FOLDER_OPTIONS = ("size", "cpus", "gpus", "csize", "fsize", "zsize", "seed", "start", "repeats", "max_repeats",
                   "old_repeats", "old_max_repeats", "min_time_s", "timeout_s", "runs_dir", "new")


def _resumed_options(folder: Path, stored: dict, app_args: tuple, console: Any) -> dict:
    """`run_compare`'s options for `compare --resume folder`: the settings that identify the comparison from the
    folder (`stored`, its settings.json), so that `run_compare` finds the same identity, and --optimizers, --runs
    and --iters from its last command and --final-rounds from its final measurement, unless given. Notes the
    identifying options given, which it ignores."""
    ctx = click.get_current_context()
    given = [p.opts[0] for p in ctx.command.params if p.name in _FOLDER_OPTIONS
             and ctx.get_parameter_source(p.name) is ParameterSource.COMMANDLINE]
    if app_args and "app" not in stored and list(app_args) != stored.get("app_args", []):
        given.append("the application's arguments (after --)")
    if given:
        console.print(f"Note: {', '.join(given)}: ignored; a resumed comparison keeps its folder's settings.",
                      markup=False)
    start = stored["start"]
    options = {"folder": folder, "runs_dir": folder.parent.parent, "new": False, "size": stored["size"],
               "cpus": stored["cpus"], "gpus": stored["gpus"], "seed": stored["seed"],
               "memory": stored.get("memory", {}), "executions": stored["executions"],
               "max_executions": stored["max_executions"], "min_time_s": stored["min_time_s"],
               "timeout_s": stored.get("timeout_s"),
               "app_args": tuple(app_args if "app" in stored else stored.get("app_args", [])),
               "dedicated": stored.get("dedicated", False)}
    if start not in ("default", "random"):  # a start file's text: named as the runs name it
        named = [read_json(p, hint=_DAMAGED, fields={"start?": str}).get("start")
                 for p in folder.glob("*/settings.json")]
        options.update(start=next((n for n in named if n not in (None, "default", "random")), "the start file"),
                       start_text=start)
    else:
        options["start"] = start
    for name, key in (("optimizers", "optimizers"), ("runs", "repeats"), ("iters", "iters")):
        if ctx.get_parameter_source(name) is not ParameterSource.COMMANDLINE:
            options[key] = stored[key]
    final = folder / "final.json"  # a final measurement in other rounds would be made again
    if ctx.get_parameter_source("final_rounds") is not ParameterSource.COMMANDLINE:
        measured = _folder_file(final) if final.exists() else {}
        if measured.get("groups"):
            options["final_rounds"] = measured.get("rounds", FINAL_ROUNDS)
        elif any(folder.glob("final-*")):  # its rounds are known only once a group of it has ended
            lost = not final.exists() and _ended_finals(folder)  # ended, but its record was deleted
            what = f"final.json of {folder} was lost" if lost else f"no final measurement of {folder} has ended"
            console.print(f"Note: {what}: it is made in {_rounds(FINAL_ROUNDS)} (--final-rounds' default), whatever "
                          f"{'the lost one' if lost else 'a measurement cut short'} asked for; give --final-rounds "
                          "to choose.", markup=False)
    return options


def _listed(value) -> str:
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def _rounds(n: int, kind: str = "") -> str:
    return f"{n} {kind + ' ' if kind else ''}round{'s' if n != 1 else ''}"


def _iterations(n) -> str:
    return f"{n} iteration{'s' if n != 1 else ''}"


def _held_runs(folder: Path) -> dict[str, int]:
    """The tuning runs a comparison folder holds (`<optimizer>-<r>/`) and their iterations."""
    return {run.name: len(TuneStore.open(run).records) for run in sorted(folder.iterdir())
            if run.is_dir() and (run / "settings.json").exists() and (run / "state.jsonl").exists()}


def _bigger_note(folder: Path, held: dict[str, int], optimizers: list[str], opts: dict, measured: bool) -> str | None:
    """A note when this command's runs were all done before it (`held`: the folder's runs then) and the folder holds
    more than it asks for (more iterations, runs or optimizers): the table comes from that bigger comparison and no
    run is tuned; `measured`: whether their best programs have their final measurement already (then nothing new is
    measured at all)."""
    asked = [f"{name}-{r + 1}" for name in optimizers for r in range(opts["repeats"])]
    if any(held.get(run, 0) < opts["iters"] for run in asked) or (
            set(held) == set(asked) and all(held[run] == opts["iters"] for run in asked)):
        return None
    names = sorted({run.rsplit("-", 1)[0] for run in held})
    per = [sum(run.rsplit("-", 1)[0] == name for run in held) for name in names]
    counts = sorted(set(held.values()))
    holds = (f"tuning runs of {' and '.join(names) if len(names) < 3 else ', '.join(names[:-1]) + ' and ' + names[-1]}"
             f", {f'{per[0]} each' if len(set(per)) == 1 else f'{len(held)} in all'}, of "
             f"{_iterations(counts[0]) if len(counts) == 1 else f'{counts[0]} to {_iterations(counts[-1])}'}")
    first = "the first iteration" if opts["iters"] == 1 else f"the first {opts['iters']} iterations"
    what = (f"this table is of {first} of {', '.join(optimizers)} ({opts['repeats']} run"
            f"{'s' * (opts['repeats'] > 1)}{' each' * (len(optimizers) > 1)})")
    lead = "nothing new was measured" if measured else "no run is tuned"
    return (f"Note: {lead}: {folder} already holds a bigger comparison ({holds}); {what}"
            + (" and its earlier final measurement" if measured else "")
            + ". --new or another --runs-dir starts a separate comparison.")


def left_out_lines(left_out: dict, iters: int) -> list[str]:
    """The sentences naming the runs a report leaves out (summary.json's `left_out`: not_tuned, runs with fewer
    than `iters` iterations; not_measured, runs whose best has no final measurement yet; damaged, the torn journal
    lines that made runs short)."""
    return ([f"Left out, not tuned to {_iterations(iters)} yet: {', '.join(left_out['not_tuned'])}."]
            if left_out.get("not_tuned") else []) + \
           ([f"Left out, no final measurement yet: {', '.join(left_out['not_measured'])}."]
            if left_out.get("not_measured") else []) + [f"Note: {note}." for note in left_out.get("damaged", [])]


def _afresh(bench: str | UserApp, folder: Path, opts: dict, optimizers: list[str]) -> str:
    """The compare command that starts a new comparison with the settings of `folder` (`opts`: `--resume`'s, from its
    settings.json, and this command's), next to it, for `--resume DIR`, which ignores --new. Its processor counts
    are left to the size (the folder records them as counted, given or not); a start file it names only by its
    text is left out."""
    start = opts["start"] if opts["start"] in ("default", "random") or Path(opts["start"]).is_file() else None
    extra = list(opts["app_args"])
    options = option_words(("--size", opts["size"], "ci"), ("--seed", opts["seed"], 0), ("--start", start, "random"),
                           *((f"--{k}", opts["memory"].get(k), None) for k in ("csize", "fsize", "zsize")),
                           ("--repeats", opts["executions"], protocol.MIN_REPEATS),
                           ("--max-repeats", opts["max_executions"], protocol.MAX_REPEATS),
                           ("--timeout", opts["timeout_s"], None),
                           ("--final-rounds", opts["final_rounds"], FINAL_ROUNDS),
                           ("--runs-dir", str(opts["runs_dir"]), "runs"), ("--jobs", opts.get("jobs"), 1),
                           ("--cpus-per-job", opts.get("cpus_per_job"), None))
    return toolchain.command("compare", *(spec_words(bench) if isinstance(bench, UserApp) else [str(bench)]),
                             "--optimizers", ",".join(optimizers), "--iters", str(opts["iters"]), "--runs",
                             str(opts["repeats"]), *options, "--new", *(["--", *extra] if extra else []))


def _resume_command(bench: str | UserApp, folder: Path, opts: dict) -> str:
    """The command that continues the comparison in `folder` as this one (`opts`) asked: `--resume` with its
    --optimizers, --runs, --iters and --final-rounds (and --jobs), and a user's program given again, which the folder
    cannot run by itself."""
    app = isinstance(bench, UserApp)
    extra = list(opts["app_args"]) if app else []
    return toolchain.command("compare", *(spec_words(bench) if app else []), "--resume", str(folder),
                             "--optimizers", ",".join(opts["optimizers"]), "--runs", str(opts["repeats"]),
                             "--iters", str(opts["iters"]),
                             *option_words(("--final-rounds", opts["final_rounds"], FINAL_ROUNDS),
                                           ("--jobs", opts.get("jobs"), 1),
                                           ("--cpus-per-job", opts.get("cpus_per_job"), None)),
                             *(["--", *extra] if extra else []))


def run_compare(bench: str | UserApp, opts: dict, say: Callable[[str], Any] = print,
                on_record: Callable[..., Any] | None = None,
                on_folder: Callable[[Path], Any] | None = None) -> dict:
    """Runs (or resumes) a comparison and writes its outputs.

    Args:
        bench: benchmark name (any of `configs/`) or a user's program (`--app`; normalised to the default mapper).
        opts: optimizers (list), iters, repeats, size, cpus, gpus, seed, start ("default", "random" or a DSL file),
            memory ({"csize"/"fsize"/"zsize": MiB}), executions and max_executions (the protocol's repeats per
            mapper), min_time_s (None: the size's, at least
            `protocol.MIN_TIME_S`), timeout_s, final_rounds, runs_dir, new, app_args (list), remeasure (repeat
            numbers, from 1, whose final measurement is set aside and made again; optional), dedicated (optional:
            nothing else runs on the machine, so a timeout or kill is not run again: `BenchmarkEvaluator`), folder
            (optional: the comparison folder to continue, `--resume`, whose settings the others must match) and
            start_text (optional: the start file's text, as such a folder records it, for `start` named so).
        say: prints one line of progress.
        on_record: called with (run label, record, iterations=the run's calibrated count, root=its folder,
            said=the notes of the run's iterations said so far, its journal's included) after each new iteration.
        on_folder: called with the comparison's folder once it is chosen (before anything is measured).

    Returns:
        the summary (what summary.json holds), with "folder".

    Raises:
        MapperoptError: unknown optimizer, nothing to compare, the reference mapper fails, or the harness cannot run.
    """
    from mapperopt.benchmarks import describe_app, load_config
    from mapperopt.benchmarks.apps import processor_counts, require_gpu_driver
    from mapperopt.benchmarks.harness import new_folder, remove_made
    from mapperopt.descriptions import MachineDescription
    from mapperopt.probe import run_probe_json
    from mapperopt.optimizer.commands import default_cpus
    from mapperopt.optimizer.llm import LLMConfig
    from mapperopt.optimizer.loop import measure_baselines

    if not opts["optimizers"]:  # `--optimizers ,`
        raise UsageError("--optimizers names no optimizer", hint=f"choose from {', '.join(OPTIMIZERS)}")
    unknown = [o for o in opts["optimizers"] if o not in OPTIMIZERS]
    if unknown:
        near = closest(unknown[0], OPTIMIZERS)
        raise UsageError(f"unknown optimizer(s) {', '.join(unknown)}",
                         hint=(f"did you mean {near!r}? " if near else "") + f"choose from {', '.join(OPTIMIZERS)}")
    twice = [o for o in dict.fromkeys(opts["optimizers"]) if opts["optimizers"].count(o) > 1]
    if twice:  # its runs are one folder: the table would count each of them twice
        raise UsageError(f"--optimizers names {', '.join(twice)} twice", hint="name each optimizer once")
    llm = LLMConfig.from_env()
    optimizers = [name for name in opts["optimizers"] if not OPTIMIZERS[name].needs_model or llm.configured]
    # Said once the comparison is known to go on: `--report-only` without one gets its error alone.
    notices = [_skipped(name) for name in opts["optimizers"] if name not in optimizers]
    if not optimizers:
        for notice in notices:  # why none is left
            say(notice)
        offline = ", ".join(name for name, spec in OPTIMIZERS.items() if not spec.needs_model)
        raise MapperoptError("no optimizer left to compare", hint=f"name at least one of {offline} in --optimizers")
    require_packages(optimizers)  # before any measurement: a run that cannot start would fail minutes later
    config = load_config(bench)
    reference = "expert" if config.expert else "default"
    layouts = not isinstance(bench, UserApp) or bench.verify.checks_output
    if not layouts:  # whatever an optimizer proposes; said once the reference's run shows whether it checks itself
        bench = replace(bench, refuse_layouts=True)
    size = config.size(opts["size"])
    gpus = size.gpus if opts["gpus"] is None else opts["gpus"]
    cores = core_groups(opts.get("jobs", 1), opts.get("cpus_per_job"))
    with _pinned(cores[0]):  # a job's CPU processors: its cores less the utility processors'
        cpus = default_cpus(size, gpus, bench) if opts["cpus"] is None else opts["cpus"]
    cpus, gpus = processor_counts(cpus, gpus, opts["app_args"])  # `-- -ll:cpu 3`: what the runs get
    if opts.get("tune", True):  # a comparison that cannot run says only that, before any notice; a report runs nothing
        require_gpu_driver(gpus, opts["size"], size.gpus, opts["app_args"])
    shared = _shared_cores(cores, cpus, protocol.utility_processors(size.util, opts["app_args"]),
                           opts.get("cpus_per_job") is not None)
    if shared and opts.get("tune", True):  # said before anything is measured; a report measures nothing
        notices.append(shared)
    min_time = opts["min_time_s"] if opts["min_time_s"] is not None else max(size.min_time_s, protocol.MIN_TIME_S)
    max_executions = max(opts["executions"], opts["max_executions"])
    # a start file is identified by its text, so that an edited file does not resume the old comparison
    start_text = opts.get("start_text") or (read_source(opts["start"]) if opts["start"] not in ("default", "random")
                                            else opts["start"])
    asked = {"bench": str(bench), "optimizers": optimizers, "iters": opts["iters"], "repeats": opts["repeats"],
             "size": opts["size"], "cpus": cpus, "gpus": gpus, "seed": opts["seed"], "start": start_text,
             "memory": opts["memory"], "executions": opts["executions"], "max_executions": max_executions,
             "min_time_s": min_time, "timeout_s": opts["timeout_s"], "app_args": list(opts["app_args"])}
    if opts.get("dedicated"):  # named only when set: the folders of earlier comparisons keep their names
        asked["dedicated"] = True
    if isinstance(bench, UserApp):  # the same name may be another program, or the same one judged otherwise
        asked["app"] = {"exe": str(bench.exe), "args": {k: list(v) for k, v in bench.args.items()},
                        "file": bench.path, "metric": bench.metric.describe(), "verify": bench.verify.describe()}
    passed: dict[Path, tuple] = {}  # the folders `compare_folder` passed over, newest first

    def keeps(f: Path) -> tuple:  # a comparison's own report is never replaced by part of it, unsaid
        passed[f] = _left_out_of_report(f, optimizers, opts["repeats"], opts["iters"])
        return passed[f]

    def lacks(f: Path) -> bool:  # --report-only: a comparison without this command's runs reports nothing
        try:
            held = _held_runs(f) if f.is_dir() else {}
        except MapperoptError:  # damaged: the newest is reported on (and says so) unless another holds them
            return True
        return any(held.get(f"{name}-{r + 1}", 0) < opts["iters"]
                   for name in optimizers for r in range(opts["repeats"]))

    folder = opts.get("folder") or compare_folder(opts["runs_dir"], str(bench), asked, opts["new"],
                                                  None if not opts.get("keep_reports") else
                                                  keeps if opts.get("tune", True) else lacks)
    if not opts.get("tune", True) and opts.get("keep_reports") and not folder.exists() and not opts.get("folder"):
        folder = compare_folder(opts["runs_dir"], str(bench), asked, False)  # none holds them: the newest says why
    if not opts.get("tune", True) and (who := held_elsewhere(folder)):  # before its half-written files are read
        raise MapperoptError(f"{folder} is in use by {who}, which is tuning or measuring it: its report waits until "
                             "that process ends; nothing was written",
                             hint="wait for it to finish, then run this command again")
    if opts.get("tune", True) and not folder.exists() and any(OPTIMIZERS[o].needs_model for o in optimizers):
        check_endpoint_first(llm, say, "comparison")  # found in seconds, not after the build, expert and other runs
    other = next((f for f, v in passed.items() if v), None)
    if other and not folder.exists():
        reported, made = passed[other]
        added = [o for o in optimizers if o not in reported]
        notices.append(f"Note: {other} holds a comparison of {', '.join(reported)}"
                       + (f" ({_iterations(made)})" if isinstance(made, int) else "")
                       + ", which this command leaves out: it is kept as it is, and this one is made in a new "
                       "folder. " + toolchain.command("compare", "--resume", str(other),  # a program of yours: named
                                                      *(spec_words(bench) if isinstance(bench, UserApp) else []),
                                                      "--optimizers", ",".join([*reported, *added]))
                       + f" adds {', '.join(added)} to it.")
    if opts.get("folder"):  # `--resume DIR`: its settings, the same identity (a program of the user's: the same one)
        stored = _folder_file(folder / "settings.json")
        differ = []
        for k, now in asked.items():
            was = stored.get(k)
            if k in ("optimizers", "iters", "repeats") or was == now:
                continue
            if isinstance(now, dict):  # a program of the user's: what of it differs (arguments, metric, ...)
                differ += [(f"{k} {sub}", (was or {}).get(sub), v) for sub, v in now.items()
                           if (was or {}).get(sub) != v]
            else:
                differ.append((k, was, now))
        if differ:
            raise MapperoptError(f"{folder} compares with other settings than this command: "
                                 + "; ".join(f"{k} {_setting_text(was)} (this command: {_setting_text(now)})"
                                             for k, was, now in differ),
                                 hint="give the program as the command that made the comparison gave it")
    if opts.get("tune", True) and (folder / "settings.json").exists():  # not in its name: found after a rebuild too
        stored = _folder_file(folder / "settings.json")
        # --resume ignores --new: a command that starts afresh, with the folder's settings
        afresh = _afresh(bench, folder, opts, optimizers) if opts.get("folder") else None
        require_same_build(folder, stored, bench, new=afresh)
        if isinstance(bench, UserApp):  # nor its machine: its program's size may have changed since
            require_same_machine(folder, stored, {"CPU": cpus, "GPU": gpus,
                                                  "UTIL": protocol.utility_processors(size.util, opts["app_args"])},
                                 memory_now(size, opts["memory"], opts["app_args"]), app=bench, new=afresh)
    files = [run for r in range(opts["repeats"]) for name in optimizers
             if (run := folder / f"{name}-{r + 1}").exists() and not run.is_dir()]
    if files:  # else taken for a run not tuned yet, and made over (which the file refuses)
        raise MapperoptError(f"{files[0]} is a file, where mapperopt keeps a run's folder",
                             hint="remove or rename it, then run the command without --report-only: it tunes "
                                  "that run again")
    if not opts.get("tune", True) and not (folder / f"{reference}.json").exists() \
            and _kept_reference(folder, reference) is None:  # else `_reference` makes it again from its run folder
        kept = folder / f"baseline-{reference}" / "result.json"
        try:  # a damaged one is named: the folder has a measurement, unreadable
            if kept.is_file():
                read_json(kept, fields=RESULT_FIELDS)
        except MapperoptError as exc:
            raise MapperoptError(f"{exc.message}, and {folder / f'{reference}.json'}, the {reference} mapper's "
                                 "measurement made from it, is missing",
                                 hint=f"restore them from a copy, or run the same command without --report-only to "
                                      f"measure the {reference} mapper again") from None
        _no_comparison(bench, opts["runs_dir"], folder, asked)
    if not opts.get("tune", True) and opts.get("final", True):
        _require_measured(folder, optimizers, opts)
    _report_paths(folder)  # before anything is tuned or measured for a report that could not be written
    # One tune or comparison of a user's program per runs folder at a time (`tune`'s lock): both would measure on
    # the same cores. Taken before the folder is made: a refused command leaves nothing.
    program = hold_program_folder(folder.parent, str(bench)) if opts.get("tune", True) and isinstance(
        bench, UserApp) else None
    resumed = folder.exists()
    held: dict[str, int] | None = None
    made = new_folder(folder, exist_ok=True)
    holder = TuneStore(folder, {}, [])
    try:
        holder.lock()  # one process per comparison: the lock of a tuning folder (tune.lock, owner.json)
    except MapperoptError as e:
        if program is not None:
            program.release()
        raise MapperoptError(e.message, hint="wait for it to finish or stop that process; `--new` starts a separate "
                                             "comparison") from None
    try:
        for notice in notices:  # once the comparison is known to go on: a refused one says the refusal alone
            say(notice)
        if on_folder:
            on_folder(folder)
        if resumed and (folder / "settings.json").exists():
            stored = _folder_file(folder / "settings.json")
            _require_one_problem(folder, stored)
            app, machine = stored["app_description"], stored["machine"]
            say(f"Resuming {folder}." if opts.get("tune", True) else f"Reporting on {folder}.")
            held = _held_runs(folder)  # before any is tuned: whether this command's runs were all done already
        else:
            try:
                app_args = tuple(map(str, opts["app_args"]))
                app = describe_app(bench, opts["size"], cpus, gpus, app_args, opts["timeout_s"],  # `-- -p 8`
                                   memory=opts["memory"])
                # The machine the runs get: `-- -ll:cpu 4` changes it, as it changes the runs' command lines.
                machine = MachineDescription.from_json(
                    run_probe_json(bench, opts["size"], app_args, cpus, gpus, opts["memory"])).to_json()
                if opts["start"] not in ("default", "random"):  # before the reference is measured
                    check_start_file(str(opts["start"]), start_text, check_options(bench, opts["size"], app_args),
                                     app, machine, layouts)
            except BaseException:
                # A folder without settings.json holds only its lock: a set-up that fails leaves none behind.
                for name in ("owner.json", "tune.lock"):  # while locked: no other process is using them
                    (folder / name).unlink(missing_ok=True)
                holder.unlock()
                remove_made(made or [folder])
                raise
            say(f"Comparison folder: {folder}")
            if note := tests_size_note(bench, opts["size"]):
                say(note)
        if opts.get("tune", True) and (note := unseen_rebuild_note(bench)):
            say(f"Note: {note}.")
        if opts.get("tune", True):  # --report-only changes nothing of the comparison
            jobs = _jobs_by_command(folder, cores, say)
            build = build_record(bench) if isinstance(bench, UserApp) else {}
            (folder / "settings.json").write_text(json.dumps({"schema": SCHEMA, **asked, "app_description": app,
                                                              "machine": machine, "jobs_by_command": jobs, **build},
                                                             indent=2) + "\n")
        if opts["start"] not in ("default", "random"):
            from mapperopt.optimizer.space import SearchSpace

            note = SearchSpace(app, machine, layouts=layouts, start=start_text).not_kept(start_text, str(opts["start"]))
            if note:
                say(f"Note: {note}")
        run_settings = {"size": opts["size"], "cpus": cpus, "gpus": gpus, "memory": opts["memory"],
                        "repeats": opts["executions"], "max_repeats": max_executions, "min_time_s": min_time,
                        "timeout_s": opts["timeout_s"], "feedback_level": "suggest", "app_args": list(opts["app_args"]),
                        "search_layouts": layouts}
        if isinstance(bench, UserApp):
            run_settings["app_file"] = bench.path

        ctx = {"bench": bench, "opts": opts, "cpus": cpus, "gpus": gpus, "min_time": min_time,
               "max_executions": max_executions, "app": app, "machine": machine, "layouts": layouts,
               "run_settings": run_settings, "reference": reference, "folder": folder, "cores": cores,
               "own_mapper": app.get("own_mapper") if reference == "default" else None,
               # what the folder recorded of a user's program's build, checked before each iteration and final
               # measurement (a rebuild while the comparison runs), and the command that compares a new one
               "build": build if opts.get("tune", True) else {},
               "afresh": _afresh(bench, folder, opts, optimizers) if isinstance(bench, UserApp) else ""}
        named = reference_name(reference, ctx["own_mapper"])
        with _pinned(cores[0]):
            first, iterations, wall_s = _reference(bench, reference, named, folder, _evaluator(ctx, {}, None),
                                                   measure_baselines, say)
        ctx.update(first=first, iterations=iterations, wall_s=wall_s)
        if said := layouts_note(bench, layouts, folder / f"baseline-{reference}"):
            say(": ".join(said))
        # repeat-major: a comparison stopped early has every optimizer alike
        jobs = [(name, r) for r in range(opts["repeats"]) for name in optimizers]
        errors: list[str] = []
        # the runs whose groups are measured again: those groups stay in use until the new measurement ends
        ctx["again"] = _set_aside(folder, opts["final_rounds"],
                                  {f"{name}-{r}" for name in optimizers for r in opts.get("remeasure") or ()}, say)
        if opts.get("tune", True):
            earlier = _folder_file(folder / "final.json") if (folder / "final.json").exists() else {}
            if earlier.get("groups") and earlier.get("rounds") != opts["final_rounds"]:
                say(f"The final measurement is made again, in {_rounds(opts['final_rounds'])} (--final-rounds); the "
                    f"earlier one, in {earlier['rounds']}, is kept in final.json under `replaced`.")
            serial = len(cores) == 1  # callbacks cannot cross to worker processes
            finals = _load_finals(folder, opts["final_rounds"])
            _record_interrupted(folder, finals, say)
            n = _next_final(folder, finals)
            tasks: list[tuple[str, Callable, tuple, Any]] = []
            for r in range(opts["repeats"]):
                start = len(tasks)
                tasks += [(f"tuning run {name}-{r + 1}", _tune_run,
                           (ctx, name, r, on_record if serial else None, say if serial else None), ())
                          for name in optimizers]
                done = [_outcome(folder, name, r, opts) for name in optimizers]
                if not serial and opts.get("final", True) and not all(
                        o is not None and (o.best is None or _measured(o, finals, ctx["again"])) for o in done):
                    # the repeat's final measurement as soon as its runs are done, while later repeats tune
                    tasks.append((f"final measurement final-{n}", _measure_runs,
                                  (ctx, [(name, r) for name in optimizers], opts["final_rounds"], f"final-{n}"),
                                  range(start, len(tasks))))
                    n += 1
            errors += _in_parallel(cores, tasks, say=say, on_done=lambda i, result: _record_group(
                ctx, finals, result, errors, say) if tasks[i][1] is _measure_runs else None)
        outcomes = [_outcome(folder, name, r, opts) for name, r in jobs]
        left_out = {"not_tuned": [f"{name}-{r + 1}" for (name, r), o in zip(jobs, outcomes) if o is None],
                    "not_measured": []}
        # why a run is short: a torn last line of its journal, skipped as `tune` skips it (tuning said it already)
        damaged = [f"{note} (the command without --report-only measures it again)" for run in left_out["not_tuned"]
                   if not opts.get("tune", True) and (folder / run / "settings.json").exists()
                   for note in TuneStore.open(folder / run).damaged]
        if damaged:
            left_out["damaged"] = damaged
        outcomes = [o for o in outcomes if o is not None]
        if not outcomes:
            for line in left_out_lines(left_out, opts["iters"]):
                say(line)
            raise MapperoptError(f"no tuning run of {folder} has {_iterations(opts['iters'])} yet",
                                 hint="the errors above stopped the runs: do what they say, then run the same command "
                                      "again" if opts.get("tune", True) else
                                 "run the command without --report-only to tune")
        if opts.get("tune", True) and held and (note := _bigger_note(
                folder, held, optimizers, opts, opts.get("final", True) and all(
                    o.best is None or _measured(o, finals, ctx["again"]) for o in outcomes))):
            say(note)
        measured: dict[str, Any] = {}
        final = opts.get("final", True)
        if final:
            finals = _final(ctx, outcomes, opts["final_rounds"], opts.get("tune", True), say, errors)
            scored = [_scored(o, finals) for o in outcomes]
            if not any(o is not None and o.best is not None for o in scored):  # only with --report-only
                say("No final measurement yet: the scores below are the tuning runs' own measurements.")
                final = False
            else:
                left_out["not_measured"] = [o.folder.name for o, x in zip(outcomes, scored) if x is None]
                outcomes = [o for o in scored if o is not None]
        for line in left_out_lines(left_out, opts["iters"]):
            say(line)
        if final:
            # only the groups the scores divide by (an extended run's earlier group is not one of them)
            used = [g for g in finals["groups"] if any(o.best and _group_of(o, finals) is g for o in outcomes)]
            references = [g["reference"] for g in used]
            # the table's header names one reference throughput: the median of the groups' (one group: its own)
            final_reference = statistics.median(references) if references else first
            unit = used[0]["measured"][reference]["unit"] if used else None
            normalization = (f"best program's throughput / {named}'s, measured together in "
                             f"{_rounds(opts['final_rounds'], 'interleaved')} (trimmed mean); failures count 0")
            loads = [x for g in used for x in g["load_average"]]
            measured = {"final_rounds": finals["rounds"], "host_cores": finals.get("host_cores"),
                        "load_average": [min(loads), max(loads)] if loads else None,
                        "noise_warnings": _noise(ctx, used, outcomes, finals, say),
                        "score_intervals": score_intervals(outcomes, used, reference),
                        "reference_noise": reference_noise(used, reference),
                        "same_as_reference": same_as_reference(ctx, outcomes),
                        "final_groups": [{k: g[k] for k in ("runs", "cores", "folder", "reference", "load_average")}
                                         for g in used]}
        else:  # tuning runs only (the final measurement comes later, e.g. benchmarks/evaluate.py's `final` unit)
            final_reference, unit = first, next((o.best.unit for o in outcomes if o.best), None)
            outcomes = [replace(o, final=o.best.throughput) if o.best else o for o in outcomes]
            normalization = (f"best program's throughput as its run measured it / {named}'s first "
                             "measurement (no final measurement yet); failures count 0")
        summary = summarize(outcomes, final_reference, curve_expert=first)
        summary["check_kinds"] = check_kinds(outcomes, _first_result(folder, reference))
        # how the runs were measured: a --report-only's own --jobs measured nothing
        last = (_folder_file(folder / "settings.json").get("jobs_by_command") or [None])[-1] \
            if not opts.get("tune", True) else None
        ran = last or {"jobs": len(cores), "cores_per_job": len(cores[0]) if cores[0] else None}
        summary.update(folder=str(folder), bench=str(bench), unit=unit, reference=reference,
                       reference_throughput=final_reference, reference_first_throughput=first, settings=asked,
                       normalization=normalization, cores_per_job=ran["cores_per_job"], jobs=ran["jobs"],
                       left_out=left_out, **measured)
        if ctx["own_mapper"]:
            summary["own_mapper"] = ctx["own_mapper"]
        if isinstance(bench, UserApp) and any(own_check_seen(r) for r in _first_result(folder, reference)):
            # read in every execution, as `run`'s table says it (a failed one fails the execution); the settings
            # that identify the comparison (settings.json) keep the verification alone
            summary["settings"] = {**asked, "app": {**asked["app"], "verify": f"{asked['app']['verify']}, the "
                                                    "program's own check: its MAPPEROPT_RESULT line says "
                                                    '"verified": true'}}
        if opts["start"] not in ("default", "random"):  # settings' `start` is the file's text: named by its path
            summary["start_file"] = str(opts["start"])
        # --report-only of other runs than those of the command that last ran the comparison (settings.json):
        # printed only, so that the report files never describe part of it as the whole
        stored = _folder_file(folder / "settings.json")
        options = {"optimizers": "--optimizers", "repeats": "--runs", "iters": "--iters"}
        other = [k for k in options if (set(stored.get(k) or ()) != set(asked[k]) if k == "optimizers"
                                        else stored.get(k) != asked[k])]
        # ...and of fewer runs than the report files have (a run's last journal line torn since): never a complete
        # report replaced by a partial one
        dropped = [] if opts.get("tune", True) or other else _reported(folder, left_out)
        # ...nor final scores replaced by the tuning runs' own figures (final.json lost since)
        lost = None if opts.get("tune", True) or other or dropped or final or not opts.get("final", True) \
            else _lost_final(folder)
        summary["written"] = not other and not dropped and not lost
        if other:
            say("Not written: this --report-only asks for " + ", ".join(f"{options[k]} {_listed(asked[k])}"
                                                                         for k in other)
                + ", the comparison's report files are of " + ", ".join(f"{options[k]} {_listed(stored.get(k))}"
                                                                        for k in other)
                + " (its settings.json): they are left as they are, and this report is printed only.")
        elif dropped:
            say(f"Not written: the comparison's report files (summary.json, ...) include {', '.join(dropped)}, which "
                "this --report-only leaves out: they are left as they are, and this report is printed only (the "
                "command without --report-only finishes "
                + ("it" if len(dropped) == 1 else "them") + ").")
        elif lost:
            say(lost)
        else:
            write_outputs(folder, summary)
        if errors:
            raise MapperoptError(f"{len(errors)} job(s) of {folder} failed: {'; '.join(errors)}",
                                 hint="the outputs hold what finished; run the command again to retry the rest")
        return summary
    except _Rebuilt as stop:  # the runs' messages, as one: which run measured which build
        raise _rebuilt(ctx, stop.changed) from None
    finally:
        holder.unlock()
        if program is not None:
            program.release()


def _first_result(folder: Path, reference: str) -> list[dict]:
    """The reference's first measurement (its result.json) as a list of one, for `check_kinds`; none where it is missing
    or unreadable (its noise note says so)."""
    path = folder / f"baseline-{reference}" / "result.json"
    try:
        return [read_json(path, fields=RESULT_FIELDS)] if path.exists() else []
    except MapperoptError:
        return []


def _reported(folder: Path, left_out: dict) -> list[str]:
    """The runs of `left_out` (`not_tuned`, `not_measured`) that the comparison's report files include, as any of
    them that is readable names them: summary.json's runs, runs.csv's folders and, while a report file is there,
    final.json's groups (table.md and summary.csv name no run), so that one lost or damaged file does not let the
    others be replaced by a partial report."""
    names = _report_runs(folder)
    if any((folder / name).exists() for name in ("summary.json", "summary.csv", "table.md", "runs.csv")):
        try:
            final = _folder_file(folder / "final.json")
            names |= {run for group in final.get("groups", []) for run in group["runs"]}
        except (OSError, MapperoptError):
            pass
    return [run for run in left_out["not_tuned"] + left_out["not_measured"] if run in names]


def _report_runs(folder: Path) -> set[str]:
    """The runs (folder names) that the comparison's summary.json or runs.csv names, as any of them is readable."""
    names: set = set()
    try:
        names |= {r.get("folder") for r in read_json(folder / "summary.json",
                                                     fields={"runs?": [{"folder?": str}]}).get("runs", [])}
    except (OSError, MapperoptError):  # none, or damaged: the other may still name the runs
        pass
    try:
        with open(folder / "runs.csv", newline="") as f:
            names |= {row.get("folder") for row in csv.DictReader(f)}
    except (OSError, UnicodeDecodeError, csv.Error):
        pass
    return names


def _lost_final(folder: Path) -> str | None:
    """Why a --report-only that found no final measurement leaves the comparison's report files as they are: their
    scores are the final measurement's (summary.json says so; unreadable, its final-N folders do), but final.json is
    missing or holds no group; None when they hold no final scores, or there are none."""
    path = folder / "final.json"
    if not any((folder / name).exists() for name in ("summary.json", "summary.csv", "table.md", "runs.csv")) or \
            path.exists() and _folder_file(path).get("groups"):
        return None
    kept = sorted((p.name for p in folder.glob("final-*") if p.is_dir() and p.name[6:].isdigit()),
                  key=lambda name: int(name[6:]))
    try:
        had = "final_rounds" in read_json(folder / "summary.json")
    except (OSError, MapperoptError):  # lost or damaged: the final measurement's folders tell
        had = bool(kept)
    if not had:
        return None
    there = f", but {', '.join(kept)} {'is' if len(kept) == 1 else 'are'} there:" if kept else ", but"
    return (f"Not written: {path} {'holds no final group' if path.exists() else 'is missing'}{there} the "
            "comparison's report files (summary.json, ...) hold its final measurement's scores, which this report, "
            "of the tuning runs' own measurements, does not replace: they are left as they are, and this report is "
            "printed only (restore final.json from a copy; the command without --report-only measures the final "
            "scores again).")


def core_groups(jobs: int, per_job: int | None) -> list[list[int] | None]:
    """The host cores of each of `jobs` parallel jobs: consecutive `per_job` of the cores this process may use
    (default: all of them shared out evenly); [None] (no pinning) for one job without `per_job`.

    Raises:
        MapperoptError: fewer cores than jobs x per_job.
    """
    if jobs == 1 and per_job is None:
        return [None]
    free = sorted(os.sched_getaffinity(0))
    per_job = per_job or len(free) // jobs
    if per_job < 1 or jobs * per_job > len(free):
        raise MapperoptError(f"{jobs} jobs of {per_job or 1} cores need {jobs * (per_job or 1)} cores; this process "
                             f"may use {len(free)}", hint="lower --jobs or --cpus-per-job")
    return [free[i * per_job:(i + 1) * per_job] for i in range(jobs)]


def _shared_cores(cores: list[list[int] | None], cpus: int, util: int, per_job_given: bool) -> str | None:
    """The warning, for the user, when each job's CPU (`cpus`) and utility processors (`util`) outnumber its cores
    (`core_groups`' `cores`; unpinned: those this process may use): Realm then shares cores among them, and every
    figure is slower and noisier than with a core each. None when each has a core."""
    total = len(os.sched_getaffinity(0))
    per_job = len(cores[0]) if cores[0] else total
    if cpus + util <= per_job:
        return None
    jobs = len(cores)
    where = (f", each job {cpus + util} on its own {per_job} core{'s' * (per_job != 1)} "
             + (f"(--cpus-per-job {per_job})" if per_job_given else "(this process's cores shared out evenly)")
             if cores[0] else "")
    return (f"More processors than cores: {jobs} job{'s' * (jobs != 1)} x ({cpus} CPU + {util} utility "
            f"processor{'s' * (util != 1)}) need {jobs * (cpus + util)} cores{where}; this process may use {total}. "
            "Processors that share a core make every timing slower and noisier, and the scores unlike those of a "
            f"comparison with a core each: give each job {cpus + util} cores or more (a lower --jobs, --cpus-per-job)"
            # one CPU is the least --cpus takes: then only cores can help
            + (f", or fewer processors (--cpus {max(1, per_job - util)})." if cpus > 1 else "."))


def _jobs_by_command(folder: Path, cores: list[list[int] | None], say: Callable) -> list[dict]:
    """The jobs and cores per job (None: not pinned) of the commands that measured in the comparison `folder`, this
    one (`cores`) last: its settings.json's record (an older folder: its summary.json's), extended when this
    command's differ, which is said: the runs and final measurements made under earlier ones keep their figures."""
    this = {"jobs": len(cores), "cores_per_job": len(cores[0]) if cores[0] else None}
    settings, summary = folder / "settings.json", folder / "summary.json"
    earlier = _folder_file(settings).get("jobs_by_command") if settings.exists() else None
    if earlier is None and summary.exists():
        last = _folder_file(summary)
        earlier = [{"jobs": last["jobs"], "cores_per_job": last.get("cores_per_job")}] if "jobs" in last else []
    earlier = earlier or []
    if not earlier or earlier[-1] != this:
        others = [e for e in earlier if e != this]
        if others:
            def ran(e: dict) -> str:
                n = e["cores_per_job"]
                return f"--jobs {e['jobs']} " + ("(no pinning)" if n is None else f"({n} core{'s' * (n != 1)} each)")

            said = ", ".join(dict.fromkeys(ran(e) for e in others))
            say(f"{ran(this)}: earlier commands on this comparison ran {said}; the runs and final measurements they "
                "made keep their figures, measured on other cores under another load.")
        earlier = [*earlier, this]
    return earlier


@contextmanager
def _pinned(cores: list[int] | None):
    """This process (and what it starts) confined to `cores` (None: as it is), restored afterwards."""
    if cores is None:
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cores)
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def _die_with(parent: int) -> None:
    """Initializer of a worker process: it is killed when `parent` dies (SIGKILL included), and its tuning run's
    benchmark with it, so that no worker outlives a killed `compare`; SIGTERM, which a terminated `compare` sends
    it, stops its task as Ctrl-C does, and an idle worker quietly (exit status 143); SIGHUP (a closed terminal
    reaches every process of the job) likewise (129)."""
    from mapperopt import interrupts
    from mapperopt.benchmarks.harness import _prctl, arm_parent_death

    arm_parent_death(_prctl(), parent, signal.SIGKILL)
    interrupts.sigterm_as_ctrl_c()
    as_ctrl_c = signal.getsignal(signal.SIGTERM)

    def on_stop(signum, frame) -> None:
        global _stopped
        _stopped = signum
        if not _busy:
            # Idle: SystemExit, which releases the lock of the pool's queue that the worker waits under (after an
            # os._exit the other worker waited on it for good); a KeyboardInterrupt there prints a traceback. Where
            # the pool catches it instead (sending the last result back), `_call_pinned` ends the worker.
            raise SystemExit(128 + signum)
        as_ctrl_c(signum, frame)

    for signum in interrupts.STOPPING:  # those `sigterm_as_ctrl_c` took (not SIGHUP where ignored: under nohup)
        if signal.getsignal(signum) is as_ctrl_c:
            signal.signal(signum, on_stop)


_busy = False  # in a worker process: whether it runs a task (`_call_pinned`)
_stopped = 0  # in a worker process: the stopping signal that reached it while idle (`_die_with`)


def _call_pinned(cores: list[int] | None, fn: Callable, args: tuple) -> Any:
    global _busy
    _end_if_stopped()  # the pool caught the SystemExit of a stopping signal: no new task
    _busy = True
    try:
        with _pinned(cores):
            return fn(*args)
    finally:
        _busy = False
        # a task a stopping signal interrupted has kept its files; the interrupted `compare` waits for no result,
        # and back in the pool's queue the worker would wait on (or read from) a pool being torn down
        _end_if_stopped()


def _end_if_stopped() -> None:
    """Ends this worker process (exit status 128 + the signal) if a stopping signal reached it; here, between tasks,
    it holds none of the pool's locks."""
    if _stopped:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(128 + _stopped)


def _in_parallel(cores: list[list[int] | None], tasks: list[tuple[str, Callable, tuple, Any]],
                 on_done: Callable[[int, Any], Any] | None = None, say: Callable = print) -> list[str]:
    """Runs `tasks` ((label naming it in errors, function, arguments, indices of the tasks it needs finished
    first)), each pinned to one free
    group of `cores`, the first ready one first: in this process for one group, else in as many worker processes.
    `on_done(index, result)` runs here as each one ends; a task whose needs failed is not run.

    Returns:
        one line per task that raised an error or was not run (the others went on).
    """
    errors: list[str] = []
    ok: set[int] = set()
    failed: set[int] = set()
    queue = list(range(len(tasks)))
    changed: list[tuple[str, BuildChanged]] = []  # a user's program rebuilt meanwhile: no task starts after it

    def finished(i: int, result: Any = None, error: str | None = None) -> None:
        if error is not None:
            failed.add(i)
            errors.append(error)
            say(f"Error: {error}")
            return
        ok.add(i)
        if on_done:
            on_done(i, result)

    def ready() -> int | None:
        for i in list(queue) if not changed else ():
            needs = set(tasks[i][3])
            if needs & failed:
                queue.remove(i)
                failed.add(i)
                errors.append(f"{tasks[i][0]} not run: {', '.join(tasks[n][0] for n in sorted(needs & failed))} "
                              "failed")
            elif needs <= ok:
                queue.remove(i)
                return i
        return None

    if len(cores) == 1:
        while (i := ready()) is not None:
            label, fn, args, _ = tasks[i]
            try:
                result = _call_pinned(cores[0], fn, args)
            except BuildChanged as e:
                changed.append((label, e))
                continue
            except MapperoptError as e:
                finished(i, error=f"{label}: {e}")
                continue
            finished(i, result)
        if changed:
            raise _Rebuilt(changed)
        return errors
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    from mapperopt import interrupts

    free, running = list(cores), {}
    # spawn: a fresh interpreter per worker (forking a process with threads can deadlock)
    pool = ProcessPoolExecutor(max_workers=len(cores), mp_context=multiprocessing.get_context("spawn"),
                               initializer=_die_with, initargs=(os.getpid(),))
    try:
        while queue or running:
            while free and (i := ready()) is not None:
                group = free.pop(0)
                _, fn, args, _ = tasks[i]
                running[pool.submit(_call_pinned, group, fn, args)] = (i, group)
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                i, group = running.pop(future)
                free.append(group)
                try:
                    result = future.result()
                except BuildChanged as e:  # those running stop at their next iteration
                    changed.append((tasks[i][0], e))
                    continue
                except Exception as e:  # noqa: BLE001 - one failed job does not stop the others
                    finished(i, error=f"{tasks[i][0]}: {type(e).__name__}: {e}")
                    continue
                finished(i, result)
    except KeyboardInterrupt:
        if interrupts.terminated():  # a Ctrl-C reached the workers too (one process group); a SIGTERM only this one
            for worker in multiprocessing.active_children():
                worker.terminate()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    if changed:
        raise _Rebuilt(changed)
    return errors


class _Rebuilt(Exception):
    """`_in_parallel`'s tasks stopped by a rebuild of the user's program (`changed`: (task label, its error))."""

    def __init__(self, changed: list[tuple[str, BuildChanged]]):
        super().__init__(changed)
        self.changed = changed


def _rebuilt(ctx: dict, changed: list[tuple[str, BuildChanged]]) -> MapperoptError:
    """The error that stops a comparison whose user's program was rebuilt while it ran: which task (tuning run or
    final measurement) measured which build, that the folder keeps it all, and how to go on."""
    folder, first = ctx["folder"], changed[0][1]
    what = "is gone" if first.digests.endswith("no file now") else "changed"
    return MapperoptError(
        f"{first.path} {what} while this comparison ran ({first.digests}): "
        + "; ".join(f"{label}: {e.measured}" for label, e in changed)
        + f"; the comparison stopped before measuring more (nothing measured is lost: {folder} keeps every run's "
        "iterations)",
        hint=f"to compare the new build, start a new comparison: `{ctx['afresh']}`; to finish this one, put back the "
             "build it was made with and " + continued_by(  # with --new, the same command starts another
                 _resume_command(ctx["bench"], folder, ctx["opts"]) if ctx["opts"].get("new") else None))


def _evaluator(ctx: dict, baselines: dict, iterations: int | None,
               wall_s: float | None = None, profile: bool = True) -> BenchmarkEvaluator:
    opts = ctx["opts"]
    return BenchmarkEvaluator(ctx["bench"], size=opts["size"], cpus=ctx["cpus"], gpus=ctx["gpus"],
                              repeats=opts["executions"], max_repeats=ctx["max_executions"],
                              timeout_s=opts["timeout_s"], min_time_s=ctx["min_time"], iterations=iterations,
                              memory=opts["memory"], baselines=baselines, extra_args=tuple(opts["app_args"]),
                              reference_wall_s=wall_s, profile=profile, dedicated=opts.get("dedicated", False),
                              own_mapper=ctx.get("own_mapper"))


def progress_line(label: str, r: IterationRecord, iters: int, iterations: int | None = None,
                  root: Path | None = None) -> str:
    """One line of progress after iteration `r` of the run `label`: its throughput and the best so far, in the
    benchmark's unit, as `run` and `tune` print them (`protocol.figure`: a time metric's time first), the joint
    re-measurement that decided whether it became the best (from the run's folder `root`), a figure measured at
    another iteration count than the run's calibrated `iterations`, and its note: what the optimizer changed, or for
    a language model's step what became of the answer, and tokens."""
    from mapperopt.optimizer.commands import failure_reason, remeasured
    from mapperopt.optimizer.store import recalibrated

    unit = r.unit or ""
    this = protocol.figure(unit, r.throughput) if r.throughput is not None else f"failed ({r.stage})"
    if other := recalibrated(r, iterations):
        this += f" [{other}]"
    again = remeasured(root, r)
    if r.best_iter is None:
        best = "best: none yet"
    elif r.best_iter == r.iter:
        best = f"best {protocol.figure(unit, r.best_throughput)} (this one{'; ' + again if again else ''})"
    else:
        best = f"best {protocol.figure(unit, r.best_throughput)} (iter {r.best_iter})"
        if r.kept_out_by_noise:
            best += "; this one is not faster beyond the noise" + (f" ({again})" if again else "") + \
                ", so the best is kept"
        elif again:
            best += f"; {again}"
    source = (" (cached)" if r.cached else
              f" (measured in {r.cached_from})" if isinstance(r.cached_from, str) else "")  # another run's
    tokens = (r.llm or {}).get("total_tokens")
    # A model's step: whether its answer was used (a wrong answer looks like one that did not help otherwise).
    model = (f"; {r.note}" + (f" ({tokens} tokens)" if tokens else "")) if (r.note or "").startswith("LLM ") else \
        f"  {r.note}" if r.note else ""  # what the optimizer changed, as tune's line says it
    reason, where = failure_reason(r, root, Path(root).parent if root else None)
    why = f" (failed: {reason}{f'; see {where}' if where else ''})" if reason else ""
    return f"  {label} iter {r.iter}/{iters}: {this}{source}  {best}{model}{why}"


def _tune_run(ctx: dict, name: str, r: int, on_record: Callable | None = None, say: Callable | None = None) -> None:
    """Tuning run `<name>-<r + 1>` of the comparison `ctx["folder"]` (created, or resumed from its journal) until
    it has `--iters` iterations; progress lines through `on_record(label, record)`, else printed."""
    from rich.console import Console

    from mapperopt.optimizer.commands import recorded_start_point, start_program
    from mapperopt.optimizer.llm import LLMConfig
    from mapperopt.optimizer.loop import tune
    from mapperopt.optimizer.space import SearchSpace

    say = say or (lambda line: print(line, flush=True))
    opts, folder, reference = ctx["opts"], ctx["folder"], ctx["reference"]
    seed, root, label = opts["seed"] + r, folder / f"{name}-{r + 1}", f"{name} #{r + 1}"
    space = SearchSpace(ctx["app"], ctx["machine"], layouts=ctx["layouts"])
    if (root / "settings.json").exists():
        store = TuneStore.open(root)  # resume with the run's own start program
        for note in store.damaged:
            say(f"Note: {note}.")
    else:
        # a resumed comparison's start file: its text as the folder recorded it
        start_dsl, start_point = (opts["start_text"], None) if opts.get("start_text") else \
            start_program(opts["start"], space, seed)
        store = _new_store(root, ctx["bench"], {**ctx["run_settings"], "optimizer": name, "seed": seed,
                                                "iters": opts["iters"], "start": opts["start"],
                                                "start_dsl": start_dsl, "start_point": start_point,
                                                "baselines": {reference: ctx["first"]},
                                                "iterations": ctx["iterations"], "app_description": ctx["app"],
                                                "machine": ctx["machine"], "compare": ".."})
    if len(store.records) >= opts["iters"]:
        return
    say(f"{label} (seed {seed}): {len(store.records)} of {_iterations(opts['iters'])} done"
        + (f"; cores {','.join(map(str, sorted(os.sched_getaffinity(0))))}." if len(ctx["cores"]) > 1 else "."))
    # a start that names some tasks only, where the program's own mapper is kept, scopes the search (`scope`)
    space = SearchSpace(ctx["app"], ctx["machine"], layouts=ctx["layouts"], start=store.settings["start_dsl"])
    optimizer = make_optimizer(name, space=space, start=store.settings["start_dsl"], seed=seed,
                               start_point=recorded_start_point(store, space), llm=LLMConfig.from_env(), workdir=root)
    # the run's calibrated count and folder: a figure measured otherwise, and a joint re-measurement, are said
    where = {"iterations": ctx["iterations"], "root": root}
    said: set[str] = set()  # the notes this run said (`print_new_notes`): its journal's said when they ran
    for rec in store.records:
        print_new_notes(None, root, rec, said, show=False)

    def printed(lab: str, rec: IterationRecord) -> None:
        print_progress(Console(highlight=False, soft_wrap=True), progress_line(lab, rec, opts["iters"], **where),
                       markup=False)
        print_new_notes(Console(highlight=False), root, rec, said)

    report = (lambda lab, rec: on_record(lab, rec, said=said, **where)) if on_record else printed
    evaluator = _evaluator(ctx, {reference: ctx["first"]}, ctx["iterations"], ctx["wall_s"],
                           OPTIMIZERS[name].reads_profile)

    def shown(rec: IterationRecord) -> IterationRecord:
        """`rec` for its progress line: a failed one (no unit of its own) with the run's, which its best figure has."""
        unit = rec.unit or next((x.unit for x in store.records if x.unit), None)
        return replace(rec, unit=unit) if unit != rec.unit else rec

    checked: list[int] = []  # the iterations before whose start the build was the comparison's

    def on_start(i: int) -> None:
        if (stop := changed_build(ctx["bench"], ctx["build"], root, checked[-1:], len(store.records),
                                  ctx["afresh"], "comparison")) is not None:
            raise stop
        checked.append(i)

    tune(store, optimizer, SharedEvaluations(evaluator, folder / "evaluations", say), opts["iters"],
         on_start=on_start, on_record=lambda rec: report(label, shown(rec)))


def _outcome(folder: Path, name: str, r: int, opts: dict) -> RunOutcome | None:
    """Run `<name>-<r + 1>` of the comparison, or None while it has fewer than `--iters` iterations."""
    root = folder / f"{name}-{r + 1}"
    if not (root / "settings.json").exists():
        return None
    records = TuneStore.open(root).records[:opts["iters"]]  # a run extended by an earlier, longer comparison
    if len(records) < opts["iters"]:
        return None
    named = records[-1].best_iter
    return RunOutcome(name, r + 1, opts["seed"] + r, records, records[named - 1] if named else None, None, root)


def _reference(bench: str | UserApp, name: str, named: str, folder: Path, evaluator: BenchmarkEvaluator,
               measure: Callable, say: Callable) -> tuple[float, int | None, float | None]:
    """The reference mapper's (`name`: "expert", or "default" for a program without one; `named`: as the texts
    name it, `reference_name`) throughput, calibrated
    iteration count and longest execution (seconds; None where an older comparison did not keep it), measured once
    per comparison (kept in `<name>.json`, which is made again from the run folder's result.json when it is damaged,
    its count other than that one's included, or missing).

    Raises:
        MapperoptError: the reference failed; `<name>.json` is damaged and its run folder cannot replace it, or is a
            folder.
    """
    path = folder / f"{name}.json"
    result = folder / f"baseline-{name}" / "result.json"  # measure_baselines' run folder
    if path.is_dir():  # not made again over it: named before anything else
        raise wrong_kind(IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path)))
    damaged = None
    kept = _kept_reference(folder, name)
    if path.exists():
        try:
            data = _folder_file(path)
            if kept is not None and data["iterations"] != kept.settings["iterations"]:  # the count every run runs
                raise MapperoptError(f"{path} is damaged: its field 'iterations' is {data['iterations']}, but "
                                     f"{named} was measured at {kept.settings['iterations']}")
            if kept is not None and not math.isclose(data["throughput"], kept.trimmed_mean, rel_tol=SAME_FIGURE):
                raise MapperoptError(f"{path} is damaged: its field 'throughput' is {data['throughput']!r}, but "
                                     f"{named} was measured at {kept.trimmed_mean!r}")  # what the curves divide by
            return data["throughput"], data["iterations"], data.get("wall_s")
        except MapperoptError as exc:
            damaged = exc
    if kept is not None:
        if damaged is not None:
            say(f"Note: {damaged.message}: made again from {result}.")
        throughput, iterations, run = kept.trimmed_mean, kept.settings["iterations"], kept.to_json()
    elif damaged is not None:
        raise damaged
    else:
        say(f"Measuring {named}" + ("..." if isinstance(bench, UserApp) else
                                    " (it also calibrates the iteration count)..."))
        measured, failed, iterations = measure(bench, [name], evaluator, folder)
        if name not in measured:
            # a user's program is named as --app names it: its application file, or its command line (size ci)
            program = ["--app", bench.path or shlex.join([str(bench.exe), *bench.args["ci"]])] \
                if isinstance(bench, UserApp) else [str(bench)]
            flags = ["--", *evaluator.extra_args] if evaluator.extra_args else []
            late = evaluator.timeout_s is not None and (failed.get(name) or "").startswith("failed at stage timeout")
            raise MapperoptError(f"the {name} mapper of {bench} could not be measured: {failed.get(name)}",
                                 hint=f"compare normalises every throughput to the {name} mapper's; " + (
                                     f"it ran past --timeout {evaluator.timeout_s:g}: give a larger --timeout, or "
                                     "leave it out" if late else
                                     f"check `{toolchain.command('run', *program, '--mapper', name, *flags)}`"))
        throughput, run = measured[name], read_json(result, hint=_DAMAGED, fields=RESULT_FIELDS) \
            if result.exists() else {}
    # Now what an execution costs besides its measured time is known: a --timeout without room for it is refused
    # before any run is tuned (each would fall short of --min-time or time out).
    check_timeout(bench, evaluator.size, evaluator.timeout_s, evaluator.min_time_s,
                  protocol.start_up_time(run) or 0.0)
    data = _reference_record(throughput, iterations, run)
    write_atomically(path, json.dumps(data) + "\n")
    return data["throughput"], data["iterations"], data["wall_s"]


def _kept_reference(folder: Path, name: str) -> RunResult | None:
    """The reference `name`'s measurement in its run folder (`baseline-<name>/result.json`, a `RunResult`) that
    `<name>.json` is taken from, so made again from, rather than measured over; None where it is missing, damaged or
    no working measurement."""
    result = folder / f"baseline-{name}" / "result.json"  # measure_baselines' run folder
    try:
        kept = RunResult.from_json(read_json(result, fields=RESULT_FIELDS)) if result.exists() else None
    except MapperoptError:
        return None
    return kept if kept is not None and kept.ok and kept.trimmed_mean and "iterations" in kept.settings else None


def _reference_record(throughput: float, iterations: int | None, run: dict) -> dict:
    """What `<name>.json` keeps of the reference's measurement (`_reference`), its run's result.json `run`."""
    walls = [a["wall_s"] for a in run.get("attempts") or []]
    return {"throughput": throughput, "iterations": iterations, "wall_s": max(walls) if walls else None}


def _new_store(root: Path, bench: str | UserApp, settings: dict) -> TuneStore:
    """A new tuning folder for one run of the comparison (a fixed path, unlike `TuneStore.create`).

    Raises:
        MapperoptError: `root` holds iterations (a journal, iteration folders) but no settings.json: made anew, the
            run would be tuned again over them.
    """
    journal = root / "state.jsonl"
    held = ["state.jsonl"] * (journal.is_file() and journal.stat().st_size > 0) + sorted(
        p.name for p in root.glob("iter-*") if p.is_dir())
    if held:
        raise MapperoptError(f"{root} has no settings.json, but {', '.join(held)} {'is' if len(held) == 1 else 'are'} "
                             "there: the run cannot be continued without it, and making it anew would tune it again "
                             "over them; nothing was changed",
                             hint="restore settings.json from a copy; or leave this comparison as it is and make a "
                                  "new one with --new")
    root.mkdir(parents=True, exist_ok=True)
    store = TuneStore(root, {"schema": SETTINGS_SCHEMA, "app": str(bench), **settings}, [])
    store.write_settings()
    (root / "state.jsonl").touch()
    return store


def _program(record: IterationRecord) -> str:
    """The name of a run's best program in the final measurement."""
    return "p-" + cache_key(normalize_dsl(record.dsl), {})


def _load_finals(folder: Path, rounds: int) -> dict:
    """final.json's content (see `_final`), or one without groups when there is none or it was measured in other
    `rounds`: then its groups are kept under `replaced`, each with its `rounds`, as `--remeasure` keeps them."""
    path = folder / "final.json"
    stored = _folder_file(path) if path.exists() else {}
    if stored.get("rounds") != rounds or "groups" not in stored:
        earlier = [{**g, "rounds": stored.get("rounds")} for g in stored.get("groups", [])]
        stored = {"rounds": rounds, "host_cores": os.cpu_count(), "groups": [],
                  **({"replaced": stored.get("replaced", []) + earlier} if "replaced" in stored or earlier else {})}
    return stored


def _require_measured(folder: Path, optimizers: list[str], opts: dict) -> None:
    """Refuses a `--report-only` that would not report the comparison's final measurement: one made in other rounds
    than --final-rounds, or runs whose best after --iters iterations is not the program their group measured (the
    table would show the tuning runs' own figures instead). Runs never measured at the end (an interrupted
    comparison) are left out by `run_compare`, and said.

    Raises:
        MapperoptError: the option that differs, its value in the measurement, and nothing written.
    """
    path = folder / "final.json"
    stored = _folder_file(path) if path.exists() else {}
    if not stored.get("groups"):
        if stored.get("replaced"):  # measured, then set aside: the report would pass tuning figures off as its own
            raise MapperoptError(f"no group of the final measurement of {folder} is in use: those it made, "
                                 f"{', '.join(g['folder'] for g in stored['replaced'])}, are set aside in final.json "
                                 "under `replaced` (a measurement made again was cut short), so this report would "
                                 "show the tuning runs' own figures; nothing was written",
                                 hint="run the command without --report-only to measure them again")
        return
    if stored["rounds"] != opts["final_rounds"]:
        raise MapperoptError(f"--final-rounds {opts['final_rounds']}: the final measurement of {folder} was made in "
                             f"{_rounds(stored['rounds'])}, so this report would show the tuning runs' own figures; "
                             "nothing was written",
                             hint=f"give --final-rounds {stored['rounds']} to report it (without --report-only, "
                                  f"--final-rounds {opts['final_rounds']} measures again, keeping it)")
    # a best after --iters that is another iteration than the measured comparison's (its settings.json --iters),
    # even one whose program another run's best had and so was measured, is not the run's measured best
    made_iters = _folder_file(folder / "settings.json").get("iters")

    def differs(o: RunOutcome) -> bool:
        full = _outcome(folder, o.optimizer, o.repeat - 1, {**opts, "iters": made_iters}) if made_iters else None
        return _group_of(o, stored) is None or (full is not None and full.best is not None
                                                and full.best.iter != o.best.iter)

    other = [o.folder.name for r in range(opts["repeats"]) for name in optimizers
             if (o := _outcome(folder, name, r, opts)) is not None and o.best is not None
             and any(o.folder.name in g["runs"] for g in stored["groups"]) and differs(o)]
    if other:
        # their journals' length: the comparison that measured them tuned them that far
        made = max(len(TuneStore.open(folder / name).records) for name in other)
        raise MapperoptError(f"--iters {opts['iters']}: the best programs of {', '.join(other)} after "
                             f"{_iterations(opts['iters'])} are not those the final measurement of {folder} measured, "
                             "so this report would show the tuning runs' own figures; nothing was written",
                             hint=f"give the --iters of the command that measured it (--iters {made})")


def _set_aside(folder: Path, rounds: int, runs: set[str], say: Callable) -> set[str]:
    """The runs of the final measurement's groups that measured any of `runs` (run folder names), all of which are
    measured again (e.g. after a measurement on a loaded machine). Their groups stay in final.json, and in use,
    until a new group measures them (`_record_group` then moves them to `replaced`): a measurement cut short loses
    nothing."""
    stored = _load_finals(folder, rounds)
    old = [g for g in stored["groups"] if runs & set(g["runs"])]
    if not old:
        if runs:
            say(f"Nothing to measure again: no group of the final measurement holds {', '.join(sorted(runs))}.")
        return set()
    # a run in two groups (final.json of an earlier version, which kept an extended run's first group) named once
    again = list(dict.fromkeys(r for g in old for r in g["runs"]))
    groups = ", ".join(g["folder"] for g in old)
    say(f"Measuring again: {', '.join(again)} ("
        + (f"their group {groups} moves" if len(old) == 1 else f"their groups {groups} move")
        + " to `replaced` in final.json once the new measurement ends).")
    return set(again)


def _write_finals(folder: Path, stored: dict) -> None:
    path = folder / "final.json"
    write_atomically(path, json.dumps(stored, indent=2) + "\n")  # a torn file never looks like a measurement


def _record_interrupted(folder: Path, stored: dict, say: Callable) -> None:
    """Records in final.json, under `interrupted` (folder, the mappers it has run folders of), the `final-N/`
    folders of final measurements that never ended (Ctrl-C, a kill): their rounds are incomplete, so no score uses
    them, but what they measured stays, and is named. Those that ended (`_ended_finals`) lost their record instead
    (final.json deleted or replaced): recorded under `lost`, and not used either."""
    known = {g["folder"] for k in ("groups", "replaced", "interrupted", "failed", "lost") for g in stored.get(k, [])}
    new = [{"folder": p.name, "mappers": sorted(m.name for m in p.iterdir() if m.is_dir())}
           for p in sorted(folder.glob("final-*"), key=lambda p: (len(p.name), p.name))
           if p.is_dir() and p.name not in known]
    if not new:
        return
    ended = _ended_finals(folder)
    cut = [g for g in new if g["folder"] not in ended]
    lost = [g for g in new if g["folder"] in ended]
    stored.update({k: stored.get(k, []) + groups for k, groups in (("interrupted", cut), ("lost", lost)) if groups})
    # written into final.json as it is: groups that `stored` sets aside (another --final-rounds) stay in use there
    # until a new group is measured
    path = folder / "final.json"
    on_disk = _folder_file(path) if path.exists() else stored
    on_disk.update({k: stored[k] for k in ("interrupted", "lost") if k in stored})
    _write_finals(folder, on_disk)
    for groups, what, key in ((cut, "cut short (interrupted or killed)", "interrupted"),
                              (lost, "ended, but final.json lost its record", "lost")):
        if not groups:
            continue
        held = ", ".join(f"{g['folder']} (runs of {', '.join(g['mappers']) or 'no mapper'})" for g in groups)
        one = len(groups) == 1
        they = "it" if one else "they"
        say(f"{'Interrupted' if key == 'interrupted' else 'Not recorded'}: {held}: "
            f"{'a final measurement' if one else 'final measurements'} {what}; what {they} measured is not used "
            f"(final.json lists {'it' if one else 'them'} under `{key}`), and the runs {they} measured are measured "
            "again unless a finished measurement has them.")


def _ended_finals(folder: Path) -> set[str]:
    """The `final-N` folders of the comparison `folder` whose measurement ended: those that hold `ENDED`, and (made
    before it was written) those that its summary.json names (`final_groups`; none when it is missing or damaged: a
    derived file, only a hint of what final.json held)."""
    ended = {p.parent.name for p in folder.glob(f"final-*/{ENDED}")}
    try:
        groups = json.loads((folder / "summary.json").read_text()).get("final_groups") or []
        return ended | {g["folder"] for g in groups if isinstance(g, dict) and isinstance(g.get("folder"), str)}
    except (OSError, ValueError, AttributeError, TypeError):
        return ended


def _next_final(folder: Path, stored: dict) -> int:
    """The first N of a new `final-N` group: after the folders here and the groups final.json names, set aside ones
    too (whose folders may not have travelled with it)."""
    names = {p.name for p in folder.glob("final-*")} | {g["folder"] for k in ("groups", "replaced", "interrupted",
                                                                              "failed", "lost")
                                                        for g in stored.get(k, [])}
    return 1 + max((int(n[6:]) for n in names if n[6:].isdigit()), default=0)


def _record_group(ctx: dict, stored: dict, result: dict | None, errors: list[str], say: Callable) -> None:
    """Adds one measured group (`_measure_runs`' result) to final.json, unless the reference failed there."""
    if result is None:
        return
    reference, measured = ctx["reference"], result["measured"]
    if not (measured[reference]["estimate"] or {}).get("value"):
        errors.append(f"{reference_name(reference, ctx.get('own_mapper'))} failed in {result['folder']}: "
                      f"{measured[reference]['reason']}")
        say(f"Error: {errors[-1]}")
        stored["failed"] = stored.get("failed", []) + [{**result, "error": errors[-1]}]  # kept, not used
        _write_finals(ctx["folder"], stored)
        return
    # A run is in one group: one measured again (a run finished again after its group, with --jobs) sets its
    # earlier group aside, as in `_final`.
    old = [g for g in stored["groups"] if set(g["runs"]) & set(result["runs"])]
    if old:
        stored["groups"] = [g for g in stored["groups"] if g not in old]
        stored["replaced"] = stored.get("replaced", []) + old
    stored["groups"].append({**result, "reference": measured[reference]["estimate"]["value"]})
    _write_finals(ctx["folder"], stored)  # a group measured is kept even if the others are interrupted
    ctx["again"] = set(ctx.get("again", ())) - set(result["runs"])  # measured again: done
    if old:
        say(f"{', '.join(g['folder'] for g in old)}: kept in final.json under `replaced` ({result['folder']} "
            f"measured {', '.join(sorted(set(result['runs']) & {r for g in old for r in g['runs']}))} again).")


def _skipped(name: str) -> str:
    """The notice that the model optimizer `name` is skipped for want of an endpoint: how to set one, and where its
    packages are missing too, those and how to install them (as `tune --optimizer trace` says both)."""
    from mapperopt.optimizer.llm import CONFIGURE

    try:
        require_packages([name])
    except MapperoptError as exc:
        return (f"Skipping {name}: it needs a language-model endpoint and "
                f"{exc.message.removeprefix(f'the {name} optimizer needs ')}. Set {CONFIGURE}; and run "
                f"{(exc.hint or '').split(', or choose another optimizer')[0]}.")
    return f"Skipping {name}: it needs a language-model endpoint; set {CONFIGURE}."


def _measure_runs(ctx: dict, runs: list[tuple[str, int]], rounds: int, name: str) -> dict | None:
    """The reference and the best programs of `runs` ((optimizer, repeat index); those with `--iters` iterations
    and a best) measured together in `rounds` interleaved rounds in `<folder>/<name>/`; None when none has a best.

    Returns:
        a group of final.json (see `_final`) without its reference figure.
    """
    folder, reference = ctx["folder"], ctx["reference"]
    outcomes = [o for o in (_outcome(folder, n, r, ctx["opts"]) for n, r in runs) if o is not None and o.best]
    if not outcomes:
        return None
    if (stop := changed_build(ctx["bench"], ctx.get("build") or {}, folder, [], 0, ctx["afresh"], "comparison",
                              measured="not made (it measures the best programs of "
                                       f"{', '.join(o.folder.name for o in outcomes)})")) is not None:
        raise stop
    mappers = {reference: reference, **{_program(o.best): o.best.dsl for o in outcomes}}
    evaluator = _evaluator(ctx, {}, ctx["iterations"])
    sharing: dict[str, list[str]] = {}  # runs whose best is the same program: measured once, said so
    for o in outcomes:
        sharing.setdefault(_program(o.best), []).append(o.folder.name)
    shared = "".join(f"; {joined_names(names)} share one" for names in sharing.values() if len(names) > 1)
    n = len(mappers) - 1
    print(f"Measuring {reference_name(reference, ctx.get('own_mapper'))} and {n} best program{'s' * (n != 1)} of "
          f"{', '.join(o.folder.name for o in outcomes)} together ({_rounds(rounds)}, {name}{shared})...", flush=True)
    load_before = os.getloadavg()[0]
    # checked after each round too: a rebuild while it measures stops it before any score mixes two builds
    after_round = final_round_check(ctx["bench"], ctx.get("build") or {}, folder, folder / name, lambda: 0,
                                    ctx["afresh"], "comparison", label=name)
    measured = protocol.measure_together(ctx["bench"], mappers, rounds, folder / name,
                                         min_time_s=evaluator.min_time_s or 0, after_round=after_round,
                                         **evaluator.run_options())
    # the folder says itself that its measurement ended: final.json, its record, may be lost (`_ended_finals`)
    (folder / name / ENDED).write_text(json.dumps({"rounds": rounds, "runs": [o.folder.name for o in outcomes]})
                                       + "\n")
    cores = sorted(os.sched_getaffinity(0))
    return {"runs": [o.folder.name for o in outcomes], "folder": name,
            "cores": cores if len(cores) < (os.cpu_count() or 0) else None,
            "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
            "measured": {k: {**m.to_json(), "run_dirs": relative_run_dirs(m.run_dirs, folder)}
                         for k, m in measured.items()}}


def _final(ctx: dict, outcomes: list[RunOutcome], rounds: int, measure: bool, say: Callable,
           errors: list[str]) -> dict:
    """The final measurement: the reference mapper and every run's best program measured together in `rounds`
    interleaved rounds (`protocol.measure_together`), by groups of runs, each group with its own measurement of the
    reference on the cores of one job (a run's score divides by the reference measured with it, on the same cores at
    the same time). With several jobs each repeat is a group, measured as soon as its runs are done (`run_compare`);
    here the runs in no group yet (with one job: all) are measured, the runs of one or more repeats per group, one
    group per job, in parallel (unless not `measure`).

    Returns:
        final.json's content: rounds, host_cores, groups (each: runs, cores, folder `final-N`, load_average
        (1-minute, before and after), reference (its throughput), measured (name (the reference, or `_program` of
        a best) -> `protocol.Measured` as JSON, run folders relative to the comparison's)); a run is in one group at
        most. Optional: replaced (groups set aside, by --remeasure, another --final-rounds or a run whose best
        changed), failed (groups whose reference failed, with the error), interrupted (folder and mappers of
        measurements that never ended); no score uses those.
    """
    folder = ctx["folder"]
    stored = _load_finals(folder, rounds)
    again = set(ctx.get("again", ()))
    if measure:
        # A run extended (a larger --iters) or tuned again whose best is not the program its group measured: the
        # group is set aside whole, as --remeasure does, and its runs measured again together with the expert, so
        # that the runs of one group are scored against one measurement of it (the group stays in use until then).
        changed = [o.folder.name for o in outcomes if o.best is not None and o.folder.name not in again and any(
            o.folder.name in g["runs"] and _program(o.best) not in g["measured"] for g in stored["groups"])]
        stale = [g for g in stored["groups"] if set(changed) & set(g["runs"])]
        if stale:
            again |= {r for g in stale for r in g["runs"]}
            asked = {o.folder.name for o in outcomes}
            others = [r for g in stale for r in g["runs"] if r not in asked]
            say(f"Measuring again: the best programs of {', '.join(changed)} after "
                f"{_iterations(len(outcomes[0].records))} are not those {', '.join(g['folder'] for g in stale)} "
                "measured, so "
                + ("it moves" if len(stale) == 1 else "they move") + " to `replaced` in final.json once "
                "the runs of this command are measured again together with "
                + reference_name(ctx["reference"], ctx.get("own_mapper"))
                + (f" ({', '.join(others)}, not asked here, have no final measurement until a command names them)"
                   if others else "") + ".")
        # A new best whose program the run's group measured already (another run's best) keeps that figure: said,
        # against the best the last report (summary.json) named.
        report = folder / "summary.json"
        named = {r["folder"]: r.get("best_iter") for r in _folder_file(report).get("runs", [])} \
            if report.exists() else {}
        for o in outcomes:
            if o.best is None or named.get(o.folder.name) in (None, o.best.iter) or o.folder.name in again:
                continue
            group = _group_of(o, stored)
            if group is not None:
                say(f"Note: the best program of {o.folder.name} changed since the last report to one that "
                    f"{group['folder']} measured already (as another run's best): its score takes that figure, "
                    "measured in the same group.")
    todo = [o for o in outcomes if o.best is not None and not _measured(o, stored, again)]
    if not todo or not measure:
        return stored
    repeats = sorted({o.repeat for o in todo})
    n = min(len(ctx["cores"]), len(repeats))
    first = _next_final(folder, stored)
    tasks = [(f"final measurement final-{first + g}", _measure_runs,
              (ctx, [(o.optimizer, o.repeat - 1) for o in todo if repeats.index(o.repeat) % n == g], rounds,
               f"final-{first + g}"), ()) for g in range(n)]
    errors += _in_parallel(ctx["cores"], tasks, say=say,
                           on_done=lambda i, result: _record_group(ctx, stored, result, errors, say))
    return stored


def _noise(ctx: dict, groups: list[dict], outcomes: list[RunOutcome], finals: dict,
           say: Callable[[str], Any] = print) -> list[list[str]]:
    """What makes the comparison's figures unreliable (`protocol.noise_warnings`), as [title, text] pairs, as `tune`
    says of its baselines and final comparison: the reference's first measurement (exactly --repeats executions;
    the curves divide by it; its run's result.json damaged: noted through `say`, as `tune` notes it), then the final
    measurement's reference (per group) and each run's best program (named by its run)."""
    reference, folder, min_time = ctx["reference"], ctx["folder"], ctx["min_time"]
    out = []
    first = folder / f"baseline-{reference}" / "result.json"
    try:
        result = read_json(first, fields=RESULT_FIELDS) if first.exists() else None
    except MapperoptError as exc:  # the figure is in <reference>.json: only its noise is unknown
        say(f"Note: {exc.message}: the noise of {reference_name(reference, ctx.get('own_mapper'))}'s first "
            f"measurement is not shown (its figure is in {reference}.json).")
        result = None
    # the advised --timeout leaves room for what an execution costs besides its measured time (`start_up`)
    how = noise_options(ctx["bench"], ctx["opts"].get("size"), ctx["opts"]["timeout_s"],
                        [] if result is None else [result])
    if result is not None:
        if protocol.values_of(result):
            # named by the title only ("": `noise_warnings`' measurement that the text does not name)
            measured = {"": (protocol.estimate(protocol.values_of(result)), protocol.measured_time(result))}
            out += [[f"{title} of {reference_name(reference, ctx.get('own_mapper'))}'s first measurement", text]
                    for title, text in protocol.noise_warnings(measured, _NEW_REPEATS, min_time, anew=_ANEW, **how)]
    # the reference by its label, or as the mapper it ran where that is the program's own
    label = reference_name(reference, ctx.get("own_mapper")) if ctx.get("own_mapper") else reference
    final = {label if len(groups) == 1 else f"{label} ({g['folder']})": g["measured"][reference] for g in groups}
    final.update({o.folder.name: _group_of(o, finals)["measured"][_program(o.best)] for o in outcomes if o.best})
    measured = {name: (protocol.Estimate.from_json(m["estimate"]), m.get("time_s"))
                for name, m in final.items() if m.get("estimate")}
    out += [[f"{title} in the final measurement", text]
            for title, text in protocol.noise_warnings(measured, "a higher --final-rounds", min_time, anew=_ANEW,
                                                       **how)]
    return out


def _measured(o: RunOutcome, finals: dict, again: set[str]) -> bool:
    """Whether run `o`'s best has a group of the final measurement that this command does not measure again."""
    return o.folder.name not in again and _group_of(o, finals) is not None


# The expert's first measurement is made once per comparison; --repeats is one of the settings that identify it.
_NEW_REPEATS = "a higher --repeats in a new comparison (--repeats is one of the settings that identify one)"
# --size, --min-time, --timeout and a program's arguments identify a comparison too.
_ANEW = "a new comparison (these are among the settings that identify one)"


def _group_of(o: RunOutcome, finals: dict) -> dict | None:
    """The final measurement's group that measured run `o`'s best program."""
    return next((g for g in finals["groups"] if o.folder.name in g["runs"] and _program(o.best) in g["measured"]),
                None)


def _scored(o: RunOutcome, finals: dict) -> RunOutcome | None:
    """`o` with its final throughput and its group's reference; None when its best was not measured at the end (a run
    without a best scores 0 and needs none)."""
    if o.best is None:
        return o
    group = _group_of(o, finals)
    if group is None:
        return None
    measured = group["measured"][_program(o.best)]
    return replace(o, final=(measured["estimate"] or {}).get("value"), reference=group["reference"],
                   failure=_final_failure(measured, finals.get("rounds")))


def _final_failure(measured: dict, rounds: int | None) -> dict | None:
    """How a best program failed in the final measurement, from its record in final.json (`protocol.Measured` as
    JSON: no estimate, the reason, the run folders of its rounds up to the failed one): {reason, round (the failed
    one), rounds, run_dir (the failed round's, relative to the comparison)}; None when it did not fail."""
    if measured.get("estimate"):
        return None
    dirs = measured.get("run_dirs") or []
    number = re.search(r"round-(\d+)$", dirs[-1]) if dirs else None
    return {"reason": measured.get("reason"), "round": int(number.group(1)) if number else None, "rounds": rounds,
            "run_dir": dirs[-1] if dirs else None}


def score_stats(scores: list[float]) -> dict:
    """The mean, std (population), worst, median and best of runs' scores; std None for a single run (a spread of one
    score is no figure), whose worst and median are its score. `summarize`'s, and the GPU evaluation's tables'."""
    return {"mean": statistics.fmean(scores), "std": statistics.pstdev(scores) if len(scores) > 1 else None,
            "worst": min(scores), "median": statistics.median(scores), "best": max(scores)}


def summarize(outcomes: list[RunOutcome], expert: float, curve_expert: float | None = None) -> dict:
    """The paper's table per optimizer, from the runs' normalised scores (failures 0): each run's `final` / `expert`;
    the curves divide best-so-far throughputs by `curve_expert` (default `expert`).

    Returns:
        {"optimizers": {name: {runs, mean, std (population), worst, median, best, failed_share (failed iterations
        / iterations, cached ones included: each counts against the budget), evaluations}}, "runs": [...],
        "curves": {name: [[normalised best-so-far per iteration] per run]}, "start_scores": {run number (str):
        {"score": its start program's score where it is the best of a run (`best_of`: that run's folder), else
        its throughput in iteration 1 / `curve_expert`, None where it failed}}, and "rebuilt":
        [{folder, iter, path}] where iterations ran while the program was rebuilt}; std is None for a single run (a
        spread of one score is no figure), whose worst and median are its score.
    """
    table, runs, curves = {}, [], {}
    for name in dict.fromkeys(o.optimizer for o in outcomes):
        mine = [o for o in outcomes if o.optimizer == name]
        scores = [o.score(expert) for o in mine]
        iterations = sum(len(o.records) for o in mine)
        failed = sum(not r.ok for o in mine for r in o.records)
        table[name] = {"runs": len(mine), **score_stats(scores),
                       "failed_share": failed / iterations if iterations else 0.0, "evaluations": iterations,
                       "final_failed": sum(o.failure is not None for o in mine)}
        curves[name] = [o.curve(curve_expert or expert) for o in mine]
    failures = {name: kinds for name in table if (kinds := failure_kinds([o for o in outcomes if o.optimizer == name]))}
    for o in outcomes:
        best = o.best
        runs.append({"optimizer": o.optimizer, "repeat": o.repeat, "seed": o.seed, "iterations": len(o.records),
                     "failed": sum(not r.ok for r in o.records), "best_iter": best.iter if best else None,
                     "best_throughput": best.throughput if best else None, "final_throughput": o.final,
                     "reference_throughput": o.reference or expert, "unit": best.unit if best else None,
                     "normalized": o.score(expert), "folder": o.folder.name,  # relative to the comparison
                     "final_failure": o.failure})
    # every optimizer's run of a repeat starts from the same program, measured once (`SharedEvaluations`): the first
    # run's iteration 1 is theirs; where it is a run's best, that run's score (measured with the reference) is its
    starts = {}
    for o in outcomes:
        first = next((r for r in o.records if r.iter == 1), None)
        if o.best is not None and o.best.iter == 1 and not (starts.get(str(o.repeat)) or {}).get("best_of"):
            starts[str(o.repeat)] = {"score": o.score(expert), "best_of": o.folder.name}  # the first such run's
        elif first is not None and str(o.repeat) not in starts:
            starts[str(o.repeat)] = {"score": first.throughput / (curve_expert or expert) if first.ok else None,
                                     "best_of": None}
    repeated = repeated_runs(outcomes)
    # the iterations that ran while the program was rebuilt (marked in the run's history.csv and progress.png)
    rebuilt = [{"folder": o.folder.name, "iter": r.iter, "path": path} for o in outcomes
               for r in o.records if (path := rebuilt_iterations(o.folder).get(r.iter))]
    return {"schema": SCHEMA, "optimizers": table, "runs": runs, "curves": curves, "failures": failures,
            "start_scores": dict(sorted(starts.items(), key=lambda item: int(item[0]))),
            **({"repeated": repeated} if repeated else {}), **({"rebuilt": rebuilt} if rebuilt else {})}


def repeated_runs(outcomes: list[RunOutcome]) -> list[dict]:
    """The runs that proposed the same programs as an earlier run of the same optimizer (guided from the same start,
    or from starts that failed alike: its search is deterministic), as {"optimizer", "run", "of", "from_iter"}:
    the same normalised program in every iteration from `from_iter` on, at least two iterations and half of them.
    Such a run is no second sample of the optimizer; the table says so (`under_table`)."""
    def programs(o: RunOutcome) -> list[str | None]:
        return [normalize_dsl(r.dsl) if r.dsl else None for r in sorted(o.records, key=lambda r: r.iter)]

    found = []
    for i, later in enumerate(outcomes):
        mine = programs(later)
        for earlier in outcomes[:i]:
            theirs = programs(earlier)
            if earlier.optimizer != later.optimizer or len(theirs) != len(mine) or not mine:
                continue
            start = len(mine)
            while start > 0 and mine[start - 1] == theirs[start - 1] and mine[start - 1] is not None:
                start -= 1
            if len(mine) - start >= max(2, len(mine) / 2):
                found.append({"optimizer": later.optimizer, "run": later.folder.name, "of": earlier.folder.name,
                              "from_iter": start + 1})
                break
    return found


def _iteration_folder(o: RunOutcome, r: IterationRecord) -> str:
    """Where iteration `r` of run `o` has its files, relative to the comparison's folder: in the run's own folder, its
    own iteration's, or the earlier iteration of the run whose outcome it reused (`cached_from`); one that reused
    another run's outcome (the start program every optimizer's run shares) has its own folder, whose shared.json
    says where that outcome was measured."""
    return f"{o.folder.name}/iter-{r.cached_from if isinstance(r.cached_from, int) else r.iter:03d}"


def _timeout_of(r: IterationRecord) -> float | None:
    """The limit a timed-out iteration was killed at: its result's settings, else its reason's figure."""
    result = r.result if isinstance(r.result, dict) else {}
    settings = result.get("settings") if isinstance(result.get("settings"), dict) else {}
    limit = settings.get("timeout_s")
    if isinstance(limit, (int, float)) and not isinstance(limit, bool):
        return float(limit)
    found = re.search(r"within (\d+(?:\.\d+)?) s", str(result.get("reason") or ""))
    return float(found.group(1)) if found else None


def failure_kinds(outcomes: list[RunOutcome]) -> list[dict]:
    """What the failed iterations of `outcomes` (one optimizer's runs) were, most frequent first: per kind (AutoGuide's
    category, or the stage where it has none) {kind, stage (the first one's), count, example (an iteration folder
    relative to the comparison's), timeout_s ([lowest, highest] limit for timeouts, else None), start (how many of
    them are iteration 1: the start program every optimizer's run of a repeat shares, counted in each one's figure)}."""
    kinds: dict[str, dict] = {}
    for o in outcomes:
        for r in o.records:
            if r.ok:
                continue
            kind = r.category if r.category and r.category != "unknown" else (r.stage or "unknown")
            entry = kinds.setdefault(kind, {"kind": kind, "stage": r.stage, "count": 0,
                                            "example": _iteration_folder(o, r), "timeout_s": None, "start": 0})
            entry["count"] += 1
            entry["start"] += r.iter == 1
            if r.stage == "timeout" and (limit := _timeout_of(r)) is not None:
                low, high = entry["timeout_s"] or (limit, limit)
                entry["timeout_s"] = [min(low, limit), max(high, limit)]
    return sorted(kinds.values(), key=lambda k: -k["count"])


def failure_line(name: str, kinds: list[dict], evaluations: int) -> str:
    """One line of what optimizer `name`'s failed evaluations were (`failure_kinds`): so that a score of 0 reads as,
    e.g., three timeouts rather than wrong mappers."""
    def said(k: dict) -> str:
        if k["stage"] == "timeout":
            limit = k["timeout_s"]
            how = ("killed after " + (f"{limit[0]:.4g} s" if limit[0] == limit[1] else
                                      f"{limit[0]:.4g}-{limit[1]:.4g} s") + ", the limit that applied: "
                   if limit else "killed at the time limit: ") + "too slow or stuck, no result checked"
        else:
            how = f"at stage {k['stage']}" if k["stage"] and k["stage"] != k["kind"] else ""
        return f"{k['count']} {k['kind']} (" + (f"{how}; " if how else "") + f"e.g. {k['example']})"

    failed = sum(k["count"] for k in kinds)
    start = sum(k.get("start") or 0 for k in kinds)  # a summary.json written before it was counted has none
    shared = (f"; {start} of them the start program (iteration 1), which every optimizer's run of a repeat shares: "
              "it counts in each optimizer's figure") if start else ""
    return f"Failed evaluations of {name} ({failed} of {evaluations}): " + ", ".join(map(said, kinds)) + shared + "."


def check_kinds(outcomes: list[RunOutcome], results: list[dict]) -> dict[str, int]:
    """How the comparison's results were checked: executions per check kind that their result lines name
    (`energy`, `sequential`, `full_product`, ...), over the runs' evaluated iterations and `results` (e.g. the
    reference's first measurement, as result.json data)."""
    counts: dict[str, int] = {}
    # an outcome reused from elsewhere (`cached_from`) is counted where it was measured
    for result in [*(r.result for o in outcomes for r in o.records if r.result and r.cached_from is None),
                   *results]:
        attempts = result.get("attempts") if isinstance(result, dict) else None
        for attempt in attempts if isinstance(attempts, list) else []:
            # read as far as it has the shape: a damaged file's own check names it elsewhere
            check = ((attempt.get("result") if isinstance(attempt, dict) else None) or {})
            kind = (check.get("check") if isinstance(check, dict) else None) or {}
            kind = kind.get("kind") if isinstance(kind, dict) else None
            if isinstance(kind, str) and kind:
                counts[kind] = counts.get(kind, 0) + 1
    return dict(sorted(counts.items()))


def describe(summary: dict) -> list[str]:
    """What a comparison's figures are: the benchmark, size and machine, how each evaluation and the final scores
    were measured, and how to read the columns (lines of text, for the table's header)."""
    s, reference = summary.get("settings", {}), summary.get("reference", "expert")
    named = reference_name(reference, summary.get("own_mapper"))
    unit = summary.get("unit") or ""
    # a time metric's times, as `run` and `tune` print them (`protocol.figure`): a score is still a ratio of
    # throughputs, which for a time is the reference's time over the best's
    ratio = (f"{named}'s time / its best program's time" if protocol.as_time(unit, 1) else
             f"its best program's throughput / {named}'s")
    groups = summary.get("final_groups") or []
    runs = max((o["runs"] for o in summary.get("optimizers", {}).values()), default=s.get("repeats", "?"))
    low, high = s.get("executions", "?"), s.get("max_executions", "?")
    executions = f"{low} execution{'s' if low != 1 else ''}" if low == high else f"{low}-{high} executions"
    lines = [f"{summary.get('bench', '?')} at size {s.get('size', '?')} on {s.get('cpus', '?')} CPU processor(s) "
             f"and {s.get('gpus', '?')} GPU(s)"
             + (f" of a {summary['host_cores']}-core machine" if summary.get("host_cores") else "")
             + (f" (load average {summary['load_average'][0]:g} to {summary['load_average'][1]:g} during the final "
                "measurement)" if summary.get("load_average") else "")
             + f"; {runs} run(s) x {_iterations(s.get('iters', '?'))} per optimizer"
             + (f" (of {s['repeats']} asked: the others are not finished)" if s.get("repeats", runs) != runs else "")
             + (f", {summary['jobs']} runs at a time, each on its own {summary['cores_per_job']} "
                f"core{'s' if summary['cores_per_job'] != 1 else ''}"
                if summary.get("jobs", 1) > 1 else "") + ".",
             f"Each evaluation: {executions} "
             + ("measured, not calibrated (the program's arguments fix the work of an execution)" if "app" in s else
                f"of at least {s.get('min_time_s', '?')} s measured") + ", trimmed mean. " + _best_rule(low, high)
             + checked_by(summary.get("check_kinds") or {}),
             (f"Score of a run (higher is better): {ratio}, both measured together at the end in "
              f"{_rounds(summary['final_rounds'], 'interleaved')}, where {named} measured "
              f"{protocol.figure(unit, summary.get('reference_throughput', 0))}; 0 when nothing worked or the best "
              "failed there."
              if summary.get("final_rounds") and len(groups) < 2 else
              f"Score of a run (higher is better): {ratio}, both measured together at the end in "
              f"{_rounds(summary['final_rounds'], 'interleaved')}, in {len(groups)} groups of runs, each with its "
              f"own measurement of {named} on the same cores, where it measured "
              f"{protocol.figure(unit, min(g['reference'] for g in groups), max(g['reference'] for g in groups))}, "
              f"median {protocol.figure(unit, summary.get('reference_throughput', 0))}; 0 when nothing worked or the "
              "best failed there."
              if summary.get("final_rounds") else
              # no final measurement (a tuning unit): said from the figures, not the stored `normalization`, whose
              # text summary.json keeps as written (benchmarks/evaluate.py copies it)
              f"Score of a run (higher is better): {ratio}, the best's as its run measured it, where {named} "
              f"measured {protocol.figure(unit, summary.get('reference_throughput', 0))} before tuning (no final "
              "measurement yet); 0 when nothing worked.")
             + " Columns mean..best: over the runs' scores (std: the population standard deviation (divided by the "
             "number of runs, not one less); std n/a for a single run); failed "
             "evaluations: failed iterations / iterations."
             + (f" The reference is the program's own mapper ('{summary['own_mapper']}'), which maps it without a "
                "DSL mapper, not Legion's default mapper." if summary.get("own_mapper") else "")]
    return lines


def _best_rule(low: Any, high: Any) -> str:
    """How a candidate became a run's best at --repeats `low` and --max-repeats `high` (`optimizer.loop`'s rule: with
    one execution on each side the ratio has no interval, and the higher estimate decides alone)."""
    noise = (f"a candidate becomes a run's best only when its figure is higher than the best's beyond the noise (the "
             f"{100 * protocol.CONFIDENCE:.0f} % interval of their ratio above 1) or, within the noise, when it is "
             "still higher with both re-measured together")
    if high == 1:
        return ("With one execution per evaluation there is no interval: a candidate whose figure is higher than the "
                "best's becomes the run's best outright (nothing is re-measured).")
    if low == 1:
        return (f"{noise[0].upper()}{noise[1:]}; where both have a single execution, the higher figure decides alone "
                "(one execution has no interval).")
    return f"{noise[0].upper()}{noise[1:]}."


def checked_by(kinds: dict[str, int]) -> str:
    """A sentence when results were checked by energy conservation only (Pennant's check where there is no
    sequential or reference one, `check_kinds`), as `run` says it; else ""."""
    energy, checked = kinds.get("energy", 0), sum(kinds.values())
    if not energy:
        return ""
    how = ("energy conservation only: the final state is not compared, so a mapping wrong from the start or wrong "
           "in a way that conserves energy passes")
    return (f" Every result was checked by {how}." if energy == checked else
            f" {energy} of {checked} checked executions were checked by {how}.")


def reference_drift(summary: dict) -> str | None:
    """One line when the reference's final measurement (any group's) differs from its first one, which the curves
    divide by, by more than `DRIFT` either way: the figures, and that the scores are the table's; else None."""
    first, groups = summary.get("reference_first_throughput"), summary.get("final_groups") or []
    finals = [g["reference"] for g in groups if g.get("reference")]
    if not first or not any(max(f / first, first / f) > DRIFT for f in finals):
        return None
    unit = summary.get("unit") or ""
    both = " and ".join if len(finals) == 2 else ", ".join
    named = reference_name(summary.get("reference", "expert"), summary.get("own_mapper"))
    if protocol.as_time(unit, 1):  # a time metric: its times, as `run` and `tune` print them, and their ratios
        measured = (f"took {both(protocol.figure(unit, f) for f in finals)} in the final measurement, "
                    f"{both(f'{first / f:.2f}x' for f in finals)} the {protocol.figure(unit, first)} it took before "
                    "tuning")
    else:
        unit = f" {unit}" if unit else ""
        measured = (f"measured {both(f'{f:.4g}' for f in finals)}{unit} in the final measurement, "
                    f"{both(f'{f / first:.2f}x' for f in finals)} its {first:.4g}{unit} before tuning")
    return (f"{named[0].upper()}{named[1:]} {measured}, which the curves divide by: the scores are the table's, not "
            "where the curves end.")


def reference_noise(groups: list[dict], reference: str) -> dict | None:
    """How much the reference itself varied in the final measurement, from final.json's `groups` (those the scores
    divide by): the largest half-width of its 90 % interval in a group, its largest spread, the rounds, and how far
    the groups' figures of it lie from their median (half their range / median; 0 for one group). None without a
    group that measured it."""
    estimates = [protocol.Estimate.from_json(g["measured"][reference]["estimate"]) for g in groups
                 if (g.get("measured", {}).get(reference) or {}).get("estimate")]
    if not estimates:
        return None
    values = [e.value for e in estimates]
    middle = statistics.median(values)
    return {"half_width": max(e.half_width for e in estimates), "spread": max(e.spread for e in estimates),
            "rounds": max(len(e.values) for e in estimates), "groups": len(estimates),
            "between_groups": (max(values) - min(values)) / 2 / middle if middle else 0.0}


def score_intervals(outcomes: list[RunOutcome], groups: list[dict], reference: str) -> dict[str, list[float]]:
    """Each run's score (`outcomes`, scored) with the 90 % interval of the ratio of its best program's rounds to the
    reference's in its group of the final measurement (`groups`): {run folder: [score, low, high]}; none for a run
    whose either side has fewer than `protocol.MIN_INTERVAL_VALUES` rounds, failed, or has no best."""
    intervals = {}
    for o in outcomes:
        group = next((g for g in groups if o.best and o.folder.name in g["runs"]
                      and _program(o.best) in g["measured"]), None)
        if group is None:
            continue
        mine, theirs = (((group["measured"].get(n) or {}).get("estimate") or {}).get("values") or []
                        for n in (_program(o.best), reference))
        if min(len(mine), len(theirs)) < protocol.MIN_INTERVAL_VALUES or not all(theirs):
            continue
        c = protocol.compare(mine, theirs, protocol.MIN_INTERVAL_VALUES)
        intervals[o.folder.name] = [c.ratio, c.low, c.high]
    return intervals


def same_as_reference(ctx: dict, outcomes: list[RunOutcome]) -> list[str]:
    """The run folders (`outcomes`) whose best program maps as the reference does: Legion's default mapper, where it
    is the reference (`SearchSpace.default_mapper_differences` finds no difference); none for the expert mapper or a
    program's own one. Such a program's score measures the machine's noise, not a mapping (`best_mapper_lines`)."""
    from mapperopt.optimizer.space import SearchSpace

    if ctx["reference"] != "default" or ctx.get("own_mapper"):
        return []
    space = SearchSpace(ctx["app"], ctx["machine"])
    same = []
    for o in outcomes:
        if o.best is None or not o.best.dsl:
            continue
        try:
            differs = space.default_mapper_differences(o.best.dsl)
        except MapperoptError:  # not decided (R400-R410): never claimed the same
            continue
        if not differs:
            same.append(o.folder.name)
    return same


def under_table(summary: dict) -> list[str]:
    """The lines under the table that say how far its scores can be told apart: per optimizer, the runs whose best is
    their start program (iteration 1: the search found nothing faster than where it started), the iterations that
    ran while the program was rebuilt (not comparable, as tune's table marks them), and how much the reference
    itself varied in the final measurement (`reference_noise`), less than which two scores are not told
    apart."""
    lines = [*filter(None, [start_line(summary)])]
    lines += [final_failure_line(r) for r in summary.get("runs") or [] if r.get("final_failure")]
    rows = summary.get("runs") or []
    optimizers = summary.get("optimizers", {})
    lines += [failure_line(name, kinds, optimizers[name]["evaluations"])
              for name, kinds in (summary.get("failures") or {}).items() if kinds and name in optimizers]
    single = [name for name, s in optimizers.items() if s["runs"] == 1]
    if single and len(single) == len(optimizers):
        lines.append("One run per optimizer: each row is a single tuning run (one seed), so this table compares single "
                     "runs, not the optimizers; that takes several runs each (--runs).")
    elif single:
        lines.append(f"One run only of {', '.join(single)}: {'its row is' if len(single) == 1 else 'their rows are'} "
                     "a single tuning run's score (one seed), not the optimizer's.")
    for name, s in optimizers.items():
        repeats = [r for r in summary.get("repeated") or [] if r["optimizer"] == name]
        if repeats:
            said = "; ".join(f"{r['run']} repeated {r['of']} " + (
                "(the same program in every iteration)" if r["from_iter"] == 1 else
                f"from iteration {r['from_iter']} on (the same programs from there)") for r in repeats)
            distinct = s["runs"] - len(repeats)
            lines.append(f"{said}: {name} has {distinct} distinct run{'s' * (distinct != 1)} of {s['runs']}, so its "
                         "std, worst and median do not show how much its runs vary.")
    lines += [f"{r['folder']}: iteration {r['iter']} ran while {r['path']} was rebuilt and may have measured either "
              "build: its figure is not comparable with the other iterations' (the scores come from the final "
              "measurement, of one build)." for r in summary.get("rebuilt") or []]
    counts = []
    for name in summary.get("optimizers", {}):
        mine = [r for r in rows if r["optimizer"] == name]
        counts.append(f"{name} {sum(r.get('best_iter') == 1 for r in mine)} of {len(mine)} "
                      f"run{'s' if len(mine) != 1 else ''}")
    if counts:
        lines.append("Runs whose best is their start program (iteration 1: the search found nothing faster than where "
                     "it started, so the score is the start's, not the optimizer's): " + ", ".join(counts) + ".")
    intervals = summary.get("score_intervals") or {}
    if intervals:
        lines.append(f"Scores with the {100 * protocol.CONFIDENCE:.0f} % interval of the ratio of each run's best "
                     f"program to {reference_name(summary.get('reference', 'expert'), summary.get('own_mapper'))}'s "
                     "over the final rounds: "
                     + ", ".join([*(f"{run} {x:.2f} ({low:.2f}-{high:.2f})"
                                    for run, (x, low, high) in intervals.items()),
                                  *(f"{r['folder']} 0 (failed in the final measurement)" for r in rows
                                    if r.get("final_failure"))])
                     + ".")
    noise = summary.get("reference_noise")
    if noise:
        named = reference_name(summary.get("reference", "expert"), summary.get("own_mapper"))
        groups = (f", and its {noise['groups']} groups' figures lie ±{100 * noise['between_groups']:.0f} % about "
                  "their median" if noise["groups"] > 1 else "")
        # too few rounds for an interval: said as such, with how many give one, never as a bound on the noise
        takes = (f"{100 * protocol.CONFIDENCE:.0f} % interval (one takes --final-rounds "
                 f"{protocol.MIN_INTERVAL_VALUES} or more)")
        if noise["rounds"] < 2:
            lines.append(f"Noise: {named} was measured by a single round in the final measurement, which gives no "
                         f"{takes}, so how much it varies is unknown" + groups + ": no difference between the scores "
                         "is shown to be real.")
        elif noise["rounds"] < protocol.MIN_INTERVAL_VALUES:
            limit = max(noise["spread"], noise["between_groups"])
            lines.append(f"Noise: {named} was measured by {noise['rounds']} rounds in the final measurement, too few "
                         f"for a {takes}, so how much it varies is unknown; its rounds lie "
                         f"{100 * noise['spread']:.0f} % apart" + groups + ": optimizers whose scores differ by less "
                         f"than about {100 * limit:.0f} % of a score are not distinguishable by this comparison, and "
                         "no larger difference is shown to be real either.")
        else:
            own = noise["half_width"]
            # the runs' own intervals (of their score: both sides' noise) may be wider than the reference's
            widest = max(((run, (high - low) / 2 / x) for run, (x, low, high) in intervals.items() if x),
                         key=lambda item: item[1], default=None)
            limit = max(own, noise["between_groups"], widest[1] if widest else 0.0)
            runs = (f", and the runs' scores have {100 * protocol.CONFIDENCE:.0f} % intervals up to "
                    f"±{100 * widest[1]:.0f} % ({widest[0]}'s, above)" if widest and widest[1] > own else "")
            lines.append(
                f"Noise: in the final measurement {named} itself varied by ±{100 * own:.0f} % "
                f"({100 * protocol.CONFIDENCE:.0f} % interval of its trimmed mean over {_rounds(noise['rounds'])}; "
                f"spread {100 * noise['spread']:.0f} %)"
                + groups + runs + f": optimizers whose scores differ by less than about {100 * limit:.0f} % of a "
                "score are not distinguishable by this comparison"
                + (", nor are runs whose score intervals overlap." if intervals else "."))
    return lines


def start_line(summary: dict) -> str | None:
    """Where every run started (--start: a random program per seed, Legion's default mapping or the user's file) and
    how that start program scored in each run (`summarize`'s `start_scores`), so that a score
    below 1 is not read as the optimizer's doing; where a random start's failures are at least half of the failed
    evaluations (each optimizer counts the shared start's), that, and --start default to try first. None for a
    summary without them (written before they were)."""
    scores = summary.get("start_scores")
    start = summary.get("settings", {}).get("start")
    if not scores or start is None:
        return None
    named = reference_name(summary.get("reference", "expert"), summary.get("own_mapper"))
    where = {"random": "a random program drawn from its seed (the same for every optimizer)",
             "default": "Legion's default mapping written in the DSL (--start default)"}.get(
        start, f"your program {summary.get('start_file') or 'given by --start'}")
    said = ", ".join(f"{x['score']:.2f} in run {run} (the best of {x['best_of']}: that run's score)" if x["best_of"]
                     else f"0 in run {run} (it failed in iteration 1)" if x["score"] is None else
                     f"{x['score']:.2f} in run {run} (iteration 1's measurement / {named}'s first)"
                     for run, x in scores.items())
    kinds = [k for name in summary.get("optimizers", {}) for k in (summary.get("failures") or {}).get(name, ())]
    failed, shared = sum(k["count"] for k in kinds), sum(k.get("start") or 0 for k in kinds)
    if start == "random" and shared and 2 * shared >= failed:
        # a short comparison of a program that a random mapping breaks (a layout its kernels do not expect) says
        # little of the optimizers: the start's failure is in every one's figure
        return (f"Start: each run began from {where}, which scored {said}: that failed start is {shared} of the "
                f"{failed} failed evaluations below, in every optimizer's figure alike; for a short comparison, "
                "give --start default, which starts every run from Legion's default mapping.")
    return (f"Start: each run began from {where}, which scored {said}"
            + ("" if start == "default" else "; --start default starts from Legion's default mapping") + ".")


def final_failure_line(row: dict) -> str:
    """The line that says why run `row` (summary.json's) scores 0 although its best program worked in tuning: it
    failed in a round of the final measurement."""
    f = row["final_failure"]
    where = f"round {f['round']} of {f['rounds']}" if f.get("round") and f.get("rounds") else \
        f"round {f['round']}" if f.get("round") else "a round"
    return (f"{row['folder']}: its best program (iteration {row.get('best_iter')}) failed in {where} of the final "
            "measurement" + (", after passing in the rounds before" if (f.get("round") or 1) > 1 else "")
            + f" ({f.get('reason') or 'no reason recorded'}), so it scores 0 (failures count 0)"
            + (f": see {f['run_dir']} in the comparison's folder" if f.get("run_dir") else "")
            + "; the same program passed in tuning, so it may fail only at times (measure again with --remeasure "
            f"{row.get('repeat')}).")


def _failed_cell(s: dict) -> str:
    """An optimizer's `failed evaluations` cell: the share of failed iterations, and the runs whose best failed in
    the final measurement (each scores 0)."""
    failed = s.get("final_failed") or 0
    return f"{s['failed_share']:.0%} of {s['evaluations']}" + (
        f"; best failed at the end in {failed} of {s['runs']} run{'s' if s['runs'] != 1 else ''}" if failed else "")


def stat_cells(s: dict) -> list[str]:
    """An optimizer's mean, std, worst, median and best as the tables print them: `n/a` where `summarize` has none
    (the std of a single run)."""
    return ["n/a" if s[k] is None else f"{s[k]:.2f}" for k in ("mean", "std", "worst", "median", "best")]


def format_table(summary: dict) -> str:
    """The table as Markdown: what was measured and how (`describe`), then one row per optimizer; under it, the runs
    left out, the noise warnings and the reference's drift."""
    lines = [*describe(summary), "",
             "| optimizer | runs | mean | std | worst | median | best | failed evaluations |",
             "|---|---|---|---|---|---|---|---|"]
    for name, s in summary["optimizers"].items():
        lines.append(f"| {name} | {s['runs']} | {' | '.join(stat_cells(s))} | {_failed_cell(s)} |")
    drift = reference_drift(summary)
    left = left_out_lines(summary.get("left_out") or {}, summary.get("settings", {}).get("iters", "?"))
    # What makes the scores unreliable, as compare prints it: of the measurements they divide by (`_noise`).
    noise = [line for title, text in summary.get("noise_warnings", []) for line in ("", f"{title}: {text}")]
    said = [line for text in under_table(summary) for line in ("", text)]
    return "\n".join([*lines, *said, *(["", *left] if left else []), *noise, *(["", drift] if drift else [])])


def best_mapper_lines(summary: dict, folder: Path, bench: str | UserApp) -> list[str]:
    """The comparison's last lines (as tune's summary ends): the best mapper found, the best program of the run with
    the highest score in the final measurement, else (none made yet) of the runs' own (the table's `best` column; the
    first on a tie), with its file; then a `Next:` line: use it where its score's interval lies above 1, unless the
    final measurement was warned of as too short or noisy (`measure_more`) or a score of the reference's own mapping
    shows the gain to be noise (`_noise_measured`): then the gain is said not established, why, and how to measure
    again; else keep the reference (`keep_reference`). Only a best that the Next line says to use is given with the
    `mapperopt run` command that runs it as the comparison did; another is said to be not shown better than the
    reference (or its gain not established), its file named to inspect. Where no run's best worked
    (`_nothing_ran_lines`), that none is recommended, and a Next line; empty where the best's file is gone."""
    rows = [r for r in summary.get("runs") or [] if r.get("normalized") and r.get("best_iter")]
    if not rows:
        return _nothing_ran_lines(summary, folder)
    best = max(rows, key=lambda r: r["normalized"])  # max keeps the first of equal scores
    run = folder / best["folder"]  # its best.dsl, else (deleted) the iteration's own copy
    path = next((p for p in (run / "best.dsl", run / f"iter-{best['best_iter']:03d}" / "mapper.dsl") if p.is_file()),
                None)
    if path is None:
        return []
    command = best_run_command(bench, summary.get("settings", {}), path)
    own = summary.get("own_mapper")
    reference = summary.get("reference", "expert")
    named = keep_reference(reference, own)[0]
    score = f"{best['normalized']:.2f}"
    final = bool(summary.get("final_rounds"))  # else a report of the tuning runs' own measurements (--report-only)
    which = "the highest score in the final measurement" if final else \
        "the highest of the runs' own scores, no final measurement yet"
    found = (f"iteration {best['best_iter']} of {best['folder']} ({best['optimizer']}, run {best['repeat']}), "
             f"{which} ({score}, {named}'s = 1)")
    interval = (summary.get("score_intervals") or {}).get(best["folder"])
    confidence = f"{100 * protocol.CONFIDENCE:.0f} % interval"
    unsure = measure_more([title for title, _ in summary.get("noise_warnings") or []], "compare")
    above = interval and interval[1] > 1
    doubts = [*filter(None, [unsure]), *_noise_measured(summary, best, named)] if above else []
    if above and not doubts:
        return [f"Best mapper: {found}: {path}; run it with: {command}",
                next_line([f"use it ({command}): its score's {confidence}, {interval[1]:.2f}-{interval[2]:.2f}, lies "
                           f"above {named}'s 1"], "comparison")]
    if above:  # a gain the same measurement does not establish: not the one to run either
        again = "" if unsure else (f"; compare again with a higher --final-rounds (now {summary['final_rounds']}), "
                                   "on a quieter machine")
        return [f"Best mapper found: {found}, but its gain is not established (see Next); its file, to inspect: "
                f"{path}",
                next_line([f"its score's {confidence}, {interval[1]:.2f}-{interval[2]:.2f}, lies above {named}'s 1, "
                           f"but the gain is not established: {'; and '.join(doubts)}{again}",
                           f"{keep_named(reference, own)} until a measurement shows the gain"], "comparison")]
    # not the one to run: the Next line below says which is; said plainly where it is the reference's own mapping
    same = (f"; it maps as {named} does (the same mapping: its score is the machine's noise or the two mappers' "
            "own overhead)"
            if best["folder"] in (summary.get("same_as_reference") or []) else "")
    lines = [f"Best mapper found: {found}, but not shown better than {named} (see Next){same}; its file, to inspect: "
             f"{path}"]
    why = (f"its score's {confidence}, {interval[1]:.2f}-{interval[2]:.2f}, lies below 1" if interval and
           interval[2] < 1 else
           f"its score's {confidence}, {interval[1]:.2f}-{interval[2]:.2f}, holds 1" if interval else
           f"its score has no {confidence}, which takes --final-rounds {protocol.MIN_INTERVAL_VALUES} or more"
           if final else "its score is its run's own measurement; the final measurement, which the command "
           "without --report-only makes, tells")
    lines.append(next_line([*filter(None, [unsure]), f"{keep_named(reference, own)}: the best mapper found is not "
                            f"shown faster than it: {why}"], "comparison"))
    return lines


def _noise_measured(summary: dict, best: dict, named: str) -> list[str]:
    """What says that the best run's (`best`, its row) score above 1 is the machine's noise: the scores of runs whose
    best maps as the reference `named` does (summary's `same_as_reference`) with an interval that excludes 1, or as
    far from 1 as the best's gain; the best's own where it is one of them. A score of the reference's mapping is
    the noise of the measurement that made it."""
    gain, intervals, same = best["normalized"] - 1, summary.get("score_intervals") or {}, summary.get(
        "same_as_reference") or []
    said = []
    # the best's own score, where it maps as the reference does, says it all
    for row in [best] if best["folder"] in same else summary.get("runs") or []:
        if row["folder"] not in same or not row.get("normalized"):
            continue
        interval = intervals.get(row["folder"])
        if not (interval and not interval[1] <= 1 <= interval[2]) and abs(row["normalized"] - 1) < gain:
            continue
        score = f"{row['normalized']:.2f}" + (f" ({interval[1]:.2f}-{interval[2]:.2f})" if interval else "")
        said.append(f"it maps as {named} does, so its score, {score}, is the machine's noise"
                    if row is best else f"{row['folder']}'s best maps as {named} does, yet scored {score} in "
                    "the same measurement: a difference this size is the machine's noise")
    return said


def _nothing_ran_lines(summary: dict, folder: Path) -> list[str]:
    """`best_mapper_lines`' lines where no run's best has a score (`folder`: the comparison's): that no mapper of the
    comparison ran (every run found no working mapper, or its best failed in the final measurement), claiming no best,
    where to read why (the first such run's final run folder, else the failed evaluations column: its iterations'
    feedback.txt), then a Next line to keep the reference. Empty without runs, or where a run's best lacks a score
    for another reason (nothing is said of it then)."""
    runs = summary.get("runs") or []
    failed = [r for r in runs if r.get("final_failure") and r.get("best_iter")]
    found_none = [r for r in runs if not r.get("best_iter")]
    if not runs or len(failed) + len(found_none) < len(runs):
        return []
    how = ("every run's best program failed there" if not found_none else
           "no run found a working mapper" if not failed else
           "each run found no working mapper or its best program failed there")
    reference, own = summary.get("reference", "expert"), summary.get("own_mapper")
    first = failed[0]["final_failure"].get("run_dir") if failed else None
    why = (f"read why {failed[0]['folder']}'s best program failed in the final measurement (its run's output and "
           f"AutoGuide's feedback on it: {folder / first}/stderr.txt, feedback.json)" if first else
           f"read why the runs' iterations failed (each one's feedback.txt, e.g. {folder / runs[0]['folder']}/"
           "iter-001/feedback.txt)")
    return [f"No mapper this comparison found ran in the final measurement: {how} (why: the lines under the table "
            "and its failed evaluations column), so none is shown to work and none is recommended.",
            next_line([why, f"{keep_named(reference, own)}: no mapper of this comparison is shown to work"],
                      "comparison")]


def _report_paths(folder: Path) -> dict[str, Path]:
    """The comparison's report files, by name.

    Raises:
        MapperoptError: one of them is a folder (named), so that none is written: a report is never half replaced.
    """
    out = {"runs": folder / "runs.csv", "summary": folder / "summary.csv", "json": folder / "summary.json",
           "table": folder / "table.md", "plot": folder / "compare.png"}
    for path in out.values():
        if path.is_dir():
            raise wrong_kind(IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path)))
    return out


def write_outputs(folder: Path, summary: dict) -> dict[str, Path]:
    """Writes runs.csv, summary.csv, summary.json, table.md and compare.png; returns their paths by name.

    Raises:
        MapperoptError: one of them is a folder (`_report_paths`); nothing is written then.
    """
    out = _report_paths(folder)
    with open(out["runs"], "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(RUN_COLUMNS)
        for row in summary["runs"]:
            writer.writerow(["" if row[c] is None else row[c] for c in RUN_COLUMNS])
    with open(out["summary"], "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(SUMMARY_COLUMNS)
        for name, s in summary["optimizers"].items():
            writer.writerow([name, *(round(s[c], 4) if isinstance(s[c], float) else s[c] for c in SUMMARY_COLUMNS[1:])])
    # without the comparison's own path: the folder may be moved (e.g. from the machine that measured it)
    out["json"].write_text(json.dumps({k: v for k, v in summary.items() if k not in ("folder", "written")},
                                      indent=2) + "\n")
    out["table"].write_text(format_table(summary) + "\n")
    plot_compare(summary, out["plot"])
    return out


def plot_compare(summary: dict, path: Path) -> None:
    """Writes `compare_figure(summary)` as a PNG to `path`."""
    compare_figure(summary).savefig(path)


def compare_figure(summary: dict):
    """The figure of normalised best-so-far throughput against iteration per optimizer: the mean over its runs as
    a line, the runs' minimum to maximum as a band; then, at "final", the table's scores (mean as a diamond, worst to
    best as a bar), which divide by the reference measured at the end, not before tuning as the curves do; the
    reference mapper at 1.0 dashed. Returns a matplotlib Figure (`figures.figure`)."""
    from mapperopt.figures import figure
    from mapperopt.optimizer.store import clear_of_data

    fig = figure(figsize=(6.4, 5.2), dpi=100)  # imports matplotlib, and with it numpy
    import numpy as np
    from matplotlib.ticker import MaxNLocator

    ax = fig.subplots()
    n = max((len(c) for runs in summary["curves"].values() for c in runs), default=0)
    final_x = n + 1
    spread = 0.8 / max(len(summary["curves"]), 1)  # the final markers side by side, not on top of each other
    for i, (name, runs) in enumerate(summary["curves"].items()):
        if not any(runs):
            continue
        # a run shorter than the others (interrupted) keeps its last value
        values = np.array([c + [c[-1] if c else 0.0] * (n - len(c)) for c in runs])
        x = np.arange(1, n + 1)
        # each its own line style and marker: a curve with the same values as another stays visible over it
        line, = ax.plot(x, values.mean(axis=0), linestyle=("-", "--", ":", "-.")[i % 4],
                        marker="osv^Pp"[i % 6], markersize=3 + (i % 4), label=f"{name} (mean of {len(runs)})")
        ax.fill_between(x, values.min(axis=0), values.max(axis=0), alpha=0.2, color=line.get_color())
        row = summary.get("optimizers", {}).get(name)
        if row is not None:
            # worst: None for a single run in a summary.json written before one run's worst was its score
            low, high = row["worst"] if row["worst"] is not None else row["mean"], row["best"]
            at = final_x + spread * (i - (len(summary["curves"]) - 1) / 2)
            mark, _, (bar,) = ax.errorbar([at], [row["mean"]], yerr=[[row["mean"] - low], [high - row["mean"]]],
                                          marker="D", markersize=4, color=line.get_color(), capsize=2)
            mark.set_gid(f"final-{name}")
            bar.set_gid(f"final-{name}")
    reference = reference_name(summary.get("reference", "expert"), summary.get("own_mapper"))[4:]  # no "the "
    ax.axhline(1.0, color="gray", linestyle="--", linewidth=1, label=f"{reference} (1.0)")
    scored = bool(summary.get("optimizers"))
    ticks = [t for t in MaxNLocator(integer=True, nbins=8).tick_values(1, max(n, 1)) if 1 <= t <= n]
    if scored:
        ax.plot([], [], "D", color="gray", label="final: the table's score (mean, worst to best)")
        ax.set_xticks([*ticks, final_x], [*(str(int(t)) for t in ticks), "final"])
    else:
        ax.set_xticks(ticks, [str(int(t)) for t in ticks])
    ax.set_xlabel("iteration")
    # The curves are tuning-time figures; the final scores come from one measurement of the best programs together
    # with the reference (their load may differ): each is divided by its own measurement of the reference.
    ax.set_ylabel(f"{reference}'s time / time" if protocol.as_time(summary.get("unit") or "", 1)
                  else f"throughput / {reference}'s")  # a time metric's ratio as the table's header says it
    size = summary.get("settings", {}).get("size")
    final = (f"final: best program / {reference}, measured together at the end (the table)"
             if summary.get("final_rounds") else
             f"final: the table's score (no final measurement yet: best so far / {reference} before tuning)")
    ax.set_title(f"{summary.get('bench', '')}{f' ({size})' if size else ''}: best so far / {reference} measured "
                 "before tuning (band: min to max)" + (f";\n{final}" if scored else ""), fontsize="small")
    ax.grid(alpha=0.3)
    clear_of_data(ax)
    drift = reference_drift(summary)
    if drift:  # under the legend, as the table has it under its rows
        fig.text(0.5, 0.01, textwrap.fill(drift, 90), ha="center", va="bottom", fontsize="small", color="darkred")
    fig.tight_layout(rect=(0, 0.07 if drift else 0, 1, 1))
    return fig


def _runs_list(text: str, runs: int) -> list[int]:
    """`--remeasure`'s run numbers ("3,4,5").

    Raises:
        MapperoptError: not a comma-separated list of numbers from 1 to `runs`.
    """
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items or not all(t.isdigit() and 1 <= int(t) <= runs for t in items):
        raise UsageError(f"--remeasure {text!r}: expected run numbers from 1 to {runs}, comma-separated",
                         hint=f"e.g. --remeasure {','.join(map(str, range(max(1, runs - 2), runs + 1)))}")
    return sorted({int(t) for t in items})


def _renamed(name: str, value: int | None, old_name: str, old_value: int | None, default: int) -> int:
    """The value of option `name` given under it or under its deprecated `old_name` (with a warning), else
    `default`. Raises MapperoptError when both are given with different values."""
    if old_value is None:
        return default if value is None else value
    if value is not None and value != old_value:
        raise UsageError(f"{name} {value} and {old_name} {old_value} disagree; {old_name} is {name}'s old name")
    click.echo(f"warning: compare's {old_name} is deprecated: say {name} {old_value}", err=True)
    return old_value


HEARTBEAT_S = 60.0  # seconds without a line after which compare says that it is still measuring


class Heartbeat:
    """compare's sign of life: after `HEARTBEAT_S` seconds without a line (`said` marks one), a line saying how long
    it has been and how many executions started since in the comparison's folder (each execution of a run adds a
    line to its run folder's command.txt), so that a slow program (calibration runs executions until one measures
    --min-time; a user's program, never calibrated, may take long for each) is not minutes of silence. `folders`:
    the comparison's folder, once known (`on_folder`); `calibrated`: False for a user's program."""

    def __init__(self, say: Callable[[str], None], folders: list[Path], calibrated: bool):
        import threading

        self.say, self.folders = say, folders
        self.why = ("a slow program's calibration runs executions until one measures --min-time" if calibrated else
                    "your program is not calibrated: each execution takes as long as a candidate's mapping makes it, "
                    "and a run measures several")
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._beat, daemon=True, name="compare-heartbeat")
        self.said()

    def said(self) -> None:
        import time

        self.last = self.beaten = time.monotonic()
        self.counted = self._executions()

    def _executions(self) -> int:
        total = 0
        for folder in self.folders[:1]:
            for path in folder.rglob("command.txt"):
                try:
                    total += sum(1 for line in path.read_text().splitlines() if line and not line.startswith("#"))
                except OSError:  # removed meanwhile (a set-up that failed)
                    continue
        return total

    def _beat(self) -> None:
        import time

        while not self.stop_event.wait(min(HEARTBEAT_S, 5.0)):
            now = time.monotonic()
            if now - self.beaten < HEARTBEAT_S:
                continue
            quiet = now - self.last
            started = self._executions() - self.counted
            minutes, seconds = divmod(round(quiet), 60)
            self.say(f"  ... still measuring: {f'{minutes} min ' if minutes else ''}{seconds} s since the last line, "
                     f"{started} execution{'s' * (started != 1)} started since ({self.why})")
            self.beaten = time.monotonic()  # the next one after as long again; both counts run on from the last line

    def __enter__(self) -> "Heartbeat":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop_event.set()


@click.command(name="compare", cls=BenchCommand)
@click.argument("bench", required=False)
@click.option("--optimizers", default=",".join(DEFAULT_OPTIMIZERS), show_default=True,
              help="Comma-separated optimizers; those needing a language model are skipped when none is "
                   "configured.")
@click.option("--iters", type=click.IntRange(min=1), default=10, show_default=True,
              help="Iterations per tuning run (the budget).")
@click.option("--runs", type=click.IntRange(min=1, max=MAX_RUNS), default=5, show_default=True,
              help=f"Tuning runs per optimizer, with seeds --seed, --seed+1, ... (at most {MAX_RUNS}).")
@size_options
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the first run.")
@click.option("--start", default="random", show_default=True,
              help="Start program of every run: `random` (per run number; `tune` starts from `default`), `default` "
                   "or a DSL file.")
@click.option("--repeats", type=click.IntRange(min=1), default=None,
              help="Executions of each proposed mapper at --size, at least; the reference mapper's first "
                   f"measurement has exactly this many [default: {protocol.MIN_REPEATS}].")
@click.option("--max-repeats", type=click.IntRange(min=1), default=None,
              help=f"...and at most: until the 90 % interval is within {protocol.TARGET_HALF_WIDTH:.0%} of the "
                   f"trimmed mean or this many were measured [default: {protocol.MAX_REPEATS}].")
@click.option("--executions", "old_repeats", type=click.IntRange(min=1), default=None, hidden=True,
              help="Deprecated name of --repeats.")
@click.option("--max-executions", "old_max_repeats", type=click.IntRange(min=1), default=None, hidden=True,
              help="Deprecated name of --max-repeats.")
@min_time_option
@click.option("--timeout", "timeout_s", type=FiniteFloatRange(min=SHORTEST_TIMEOUT_S), default=None,
              help=f"Seconds an execution may take [default: {ADAPTIVE_TIMEOUT}; the reference: the size's].")
@click.option("--final-rounds", type=click.IntRange(min=1), default=FINAL_ROUNDS, show_default=True,
              help="Executions of each mapper in the final measurement at --size, one per interleaved round.")
@click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("runs"),
              show_default=True, help="Where comparison folders are created.")
@click.option("--new", is_flag=True, help="Start a new comparison instead of resuming the one with these "
                                          "settings.")
@click.option("--resume", "resume_dir", type=click.Path(file_okay=False, exists=True, path_type=Path), default=None,
              help="Continue the comparison in this folder with its settings (a program of yours: give --app "
                   "again).")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Tuning runs at a time, each pinned to its own cores.")
@click.option("--cpus-per-job", type=click.IntRange(min=1), default=None,
              help="Host cores of each job [default: with --jobs 1 no pinning; else this process's cores shared out "
                   "evenly].")
@click.option("--remeasure", metavar="RUNS", default=None,
              help="Measure again, with the reference, the final measurement's groups that hold these run numbers "
                   "(e.g. 1,3), with every run they hold.")
@click.option("--report-only", is_flag=True, help="Run and measure nothing: write the report from what has "
                                                  "finished so far.")
@app_options
@click.argument("app_args", nargs=-1, type=click.UNPROCESSED)
def compare(bench, optimizers, iters, runs, size, cpus, gpus, csize, fsize, zsize, seed, start, repeats, max_repeats,
            old_repeats, old_max_repeats, min_time_s, timeout_s, final_rounds, runs_dir, new, resume_dir, jobs,
            cpus_per_job, remeasure, report_only, app_args, **app_flags):
    """Compare optimizers on BENCH (or your program, --app): each tunes --runs times for --iters iterations,
    starting from a random program by default (the same per seed for every optimizer; `tune` starts from the
    default mapping; --start default does so here too); throughputs are normalised to the expert mapper measured in the
    same comparison (failures count 0), or to Legion's default mapper (or the program's own, where it registers one) for
    a program without an expert mapper (--app).

    Writes runs/BENCH/compare-<hash>/ with summary.csv, summary.json, runs.csv, table.md and compare.png.
    Running the same command again resumes it (finished iterations are not rerun; --resume DIR continues a given
    folder); with --report-only it writes those from what has finished. --jobs N runs N tuning runs at a time, each
    pinned to its own cores.
    """
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from mapperopt import interrupts

    interrupts.sigterm_as_ctrl_c()  # `kill` says how to continue too
    console = Console(highlight=False, soft_wrap=True)
    source = click.get_current_context().get_parameter_source
    stored = _comparison_settings(resume_dir) if resume_dir is not None else None
    if stored is not None:
        # Without BENCH, click fills it with the first of the program's flags after `--`.
        if app_flags.get("app_spec") is None and (bench is None or bench.startswith("-")):
            if "app" in stored:  # a program of the user's, which the folder names but cannot run again by itself
                program = stored["app"]
                spec = program.get("file") or shlex.join([program["exe"], *program["args"].get("ci", [])])
                raise MapperoptError(f"{resume_dir} compares a program of yours, {stored['bench']}: name it",
                                     hint=f"give --app as the command that made it did, e.g. --resume {resume_dir} "
                                          f"--app {shlex.quote(spec)} (with its --metric and --verify-* options: "
                                          f"{program['metric']}; {program['verify']})")
            app_args = (bench, *app_args) if bench else app_args
            bench = stored["bench"]
        elif app_flags.get("app_spec") is None and "app" not in stored and bench != stored["bench"]:
            console.print(f"Note: {bench}: ignored; {resume_dir} compares {stored['bench']}, which it keeps.",
                          markup=False)
            bench = stored["bench"]
        min_time_s = None  # the folder's: refused with --app otherwise
    bench, app_args = app_from_options(bench, app_args, min_time_s=min_time_s, **app_flags)
    require_one_value(bench, app_args, cpus=cpus, gpus=gpus,
                      csize=csize, fsize=fsize, zsize=zsize)
    if repeats is not None and stored is None and source("runs") is not ParameterSource.COMMANDLINE:
        # Until recently compare's --repeats meant --runs: a command written then must not change meaning unseen.
        click.echo(f"note: compare's --repeats {repeats} counts measured executions per mapper, as in run and tune; "
                   f"it used to mean --runs (tuning runs per optimizer): this makes --runs {runs} (give --runs and "
                   "this note goes)", err=True)
    executions = _renamed("--repeats", repeats, "--executions", old_repeats, protocol.MIN_REPEATS)
    max_executions = _renamed("--max-repeats", max_repeats, "--max-executions", old_max_repeats, protocol.MAX_REPEATS)
    check_repeats(executions, max_executions, max_repeats is not None or old_max_repeats is not None)
    check_timeout(bench, size, timeout_s, min_time_s)
    if stored is None:
        require_start_file(start, check_options(bench, size, app_args))
    if remeasure is not None and report_only:
        raise UsageError("--remeasure measures, --report-only does not", hint="give one of them")

    heard: set[str] = set()  # the notes of the iterations' runs said so far (`print_new_notes`): each once

    chosen: list[Path] = []
    beat = Heartbeat(lambda line: console.print(line, markup=False), chosen, not isinstance(bench, UserApp))

    def on_record(label: str, r: IterationRecord, said: set[str], **where: Any) -> None:
        print_progress(console, progress_line(label, r, opts["iters"], **where), markup=False)  # its own --iters
        heard.update(said)  # a resumed run's journal said its notes when it ran
        print_new_notes(console, where["root"], r, heard)
        beat.said()

    def say(line: str) -> None:
        print_wrapped(console, escape(line))  # at the console's width, as `run` wraps; a bare command stays whole
        beat.said()

    opts = {"optimizers": [o.strip() for o in optimizers.split(",") if o.strip()], "iters": iters,
            "repeats": runs, "size": size, "cpus": cpus, "gpus": gpus, "seed": seed, "start": start,
            "memory": {k: v for k, v in (("csize", csize), ("fsize", fsize), ("zsize", zsize)) if v is not None},
            "executions": executions, "max_executions": max_executions, "min_time_s": min_time_s,
            "timeout_s": timeout_s, "final_rounds": final_rounds, "runs_dir": runs_dir, "new": new,
            "app_args": app_args, "jobs": jobs, "cpus_per_job": cpus_per_job, "tune": not report_only,
            "keep_reports": True}  # (benchmarks/evaluate.py tunes one optimizer at a time in one folder)
    if stored is not None:
        opts.update(_resumed_options(resume_dir, stored, app_args, console))
    opts["remeasure"] = _runs_list(remeasure, opts["repeats"]) if remeasure is not None else []
    try:
        with beat:
            summary = run_compare(bench, opts, say=say, on_record=on_record, on_folder=chosen.append)
    except KeyboardInterrupt:
        # With --new the same command would start yet another comparison; without it, it resumes the newest one
        # (a folder interrupted while being set up is removed: then --new starts it again).
        kept = chosen and (chosen[0] / "settings.json").exists()
        if kept:
            again = _resume_command(bench, chosen[0], opts)
            said = (f"What it did is kept in {chosen[0]} (finished iterations are not run again; a final measurement "
                    "cut short is measured again). "
                    + (f"Run the same command without --new to resume {chosen[0]} (the newest comparison with "
                       f"these settings), or: {again}." if new and resume_dir is None else
                       f"The same command continues; or: {again}."))
        else:  # interrupted while being set up: the folder was removed
            said = "Run the same command again to resume."
        with interrupts.terminal_may_be_gone():
            console.print("[yellow]Interrupted.[/] " + escape(said))
        raise click.exceptions.Exit(130) from None  # said: no `aborted` line after it (cli.main)
    if report_only and source("optimizers") is not ParameterSource.COMMANDLINE:
        # a folder tuned one optimizer at a time (benchmarks/evaluate.py's) holds runs the default leaves out
        reported = list(summary["optimizers"])
        held = sorted({p.parent.name.rsplit("-", 1)[0] for p in Path(summary["folder"]).glob("*-*/settings.json")}
                      & set(OPTIMIZERS) - set(reported))
        if held:
            say(f"Note: {summary['folder']} also holds runs of {joined_names(held)}, which this report of "
                f"{joined_names(reported)} leaves out; give --optimizers {','.join(sorted(held + reported))} to "
                "include them.")
    header = describe(summary)
    fold = (lambda text: wrap_whole(text, console.width)) if wraps(console) else (lambda text: text)
    table = Table(title=escape(fold(header[0])), caption=escape(fold(" ".join(header[1:]))))
    for col in ("optimizer", "runs", "mean", "std", "worst", "median", "best", "failed evaluations"):  # table.md's
        table.add_column(col)
    for name, s in summary["optimizers"].items():
        table.add_row(name, str(s["runs"]), *stat_cells(s), _failed_cell(s))
    console.print(table)
    for line in under_table(summary):
        print_wrapped(console, escape(line))
    for title, text in summary.get("noise_warnings", []):
        print_wrapped(console, f"[yellow]{escape(title)}:[/] {escape(text)}")
    if reference_drift(summary):
        print_wrapped(console, f"[yellow]Curves and scores:[/] {escape(reference_drift(summary))}")
    folder = Path(summary["folder"])
    if not summary["written"]:  # a --report-only of part of the comparison: said by run_compare
        return
    console.print(f"Table: {folder / 'summary.csv'}, {folder / 'table.md'}; runs: {folder / 'runs.csv'}; "
                  f"JSON: {folder / 'summary.json'}; plot: {folder / 'compare.png'}", markup=False)
    for line in best_mapper_lines(summary, folder, bench):  # a line with a command stays whole (`wrap_prose`)
        print_command_last(console, line)


__all__ = ["RunOutcome", "SharedEvaluations", "check_kinds", "checked_by", "compare", "compare_folder", "describe",
           "failure_kinds", "failure_line", "format_table",
           "plot_compare", "reference_noise", "run_compare", "score_stats", "stat_cells", "summarize", "under_table",
           "write_outputs"]
