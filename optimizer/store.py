"""Resumable storage of one tuning run (docs/running.md, docs/tuning.md).

Layout of a tuning folder `runs/<app>/tune-<YYYYMMDD-HHMMSS>-<6 hex>/`:

    settings.json     what was asked for (app, size, processors, optimizer, seed, start, repeats, ...)
    tune.lock         held (an OS lock) by the one process that writes the folder; owner.json names it
    state.jsonl       the journal: one IterationRecord per line, appended and flushed as each iteration ends;
                      never rewritten (but for a torn last line), so an interrupted run loses at most the
                      iteration in progress
    iter-NNN/         the run folder of iteration NNN (mapper.dsl, the harness's files, feedback.txt)
    best.dsl          the best program so far          \
    best-from-start.dsl  with a start file: that file edited to map as best.dsl does here (`SearchSpace.edit_of`;
                      absent when no such edit is sound)
    history.csv       one row per iteration             > derived from the journal only (`write_outputs`),
    progress.png      best-so-far throughput per iteration /  rewritten after every iteration
    summary.json      the final comparison (written once the run is finished)

Once the run is finished, best.dsl is the final comparison's pick, which history.csv (`final_pick`) and
progress.png (a star) mark: it may be another iteration than the best so far. The plot then draws the final
comparison's own figures too (the pick's with its interval, the references'), on which its verdict rests.

`TuneStore.open(folder)` replays the journal; a torn last line (the process died, or the disk filled up, mid-write)
is skipped with a note (`damaged`) and moved by the next `append` to state.jsonl.damaged; other damaged lines are
skipped with a note that the journal was damaged there (at every open: an `append` keeps them) unless a record's
iteration is then missing: a damaged line before it is an error naming it (with what to delete to go on from there,
`_cut_hint`), and so are iteration folders or outputs that the journal does not record (it was emptied, deleted or
cut short) and a record that its iteration's result.json contradicts (`_require_as_measured`).
`store.lock()` makes the process the folder's only writer (`TuneStore.create` does it); a second process that
tries stops at once with an error naming the holder.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import math
import os
import secrets
import shlex
import shutil
import socket
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Callable, Iterable

from mapperopt.benchmarks.protocol import SHORTEST_TIMEOUT_S
from mapperopt.descriptions import APP_FIELDS, MACHINE_FIELDS, DescriptionError, MachineDescription
from mapperopt.errors import MapperoptError
from mapperopt.files import (AtLeast, OneOf, Positive, is_number, read_json, restore_hint, write_atomically,
                             wrong_kind)
from mapperopt.optimizer.base import OPTIMIZERS, IterationRecord
from mapperopt.records import LEVELS, RESULT_FIELDS

SETTINGS_SCHEMA = "mapperopt.tune.settings/1"
# How to use a best program tuned with the program's own mapper kept (best.dsl's first line, tune's final lines).
KEPT_USE = ("use it with --keep-app-mapper (MAPPEROPT_KEEP_APP_MAPPER=1 by hand); without it, it maps every task in "
            "place of the program's own mapper.")
# tune's --baseline choices: the reference mappers each measures (kept in settings.json as `baseline`)
BASELINES = {"expert": ["expert"], "default": ["default"], "both": ["expert", "default"], "none": []}
# The kinds of the fields of a tuning folder's settings.json that a resumed run reads, with the values the options
# that set them take (those an earlier mapperopt did not write may be missing; a count not known yet is null).
_SETTINGS_FIELDS = {"schema?": str, "app?": str, "compare?": str, "size?": str, "cpus?": AtLeast(1, integer=True),
                    "gpus?": AtLeast(0, integer=True), "memory?": {str: AtLeast(1, integer=True)},
                    "repeats?": AtLeast(1, integer=True), "max_repeats?": AtLeast(1, integer=True),
                    "min_time_s?": (AtLeast(0), None), "timeout_s?": (AtLeast(SHORTEST_TIMEOUT_S), None),
                    "optimizer?": OneOf(OPTIMIZERS), "baseline?": OneOf(BASELINES), "feedback_level?": OneOf(LEVELS),
                    "search_layouts?": bool,
                    "seed?": (int, None), "iters?": AtLeast(1, integer=True),
                    "iterations?": (AtLeast(1, integer=True), None),
                    "start?": str, "start_dsl?": str, "start_point?": (dict, None), "app_args?": [str],
                    "app_description?": APP_FIELDS, "machine?": MACHINE_FIELDS,
                    "request?": {"bench?": str, "size?": str},
                    "baselines?": {str: Positive}, "baseline_failures?": {str: str}}
# The files the run writes from its journal (`write_outputs`); a summary.json in the way is kept aside instead
# (`commands._set_aside_final`).
OUTPUTS = ("best.dsl", "best-from-start.dsl", "history.csv", "progress.png")
# How far apart two copies of one measured figure may be (a float written to JSON and read back is the same)
SAME_FIGURE = 1e-9
HISTORY_COLUMNS = ("iter", "status", "stage", "category", "throughput", "unit", "best_throughput", "best_iter",
                   "cached", "cached_from", "note", "total_tokens", "wall_s", "key", "final_pick", "not_comparable")
# not_comparable: last, as columns are only ever added at the end (readers that go by position keep working)


class TuneStore:
    """The files of one tuning run.

    Attributes:
        root: the tuning folder.
        settings: the contents of settings.json.
        records: the journal's records, in iteration order.
        damaged: the notes on the damaged lines that `open` skipped: the last one after the last record, torn by an
            interrupted write (the next `append` moves it aside), and one naming the others, which the journal was
            damaged at otherwise (the iterations they record are run again, or were, by the records after them);
            and, once `lock` moved an edited best.dsl aside, the note that says so.
    """

    def __init__(self, root: Path, settings: dict, records: list[IterationRecord]):
        self.root = root
        self.settings = settings
        self.records = records
        self.damaged: list[str] = []  # notes on the journal's lines `open` skipped
        self._lock = None

    # ------------------------------------------------------------------------------------------------ lock

    def lock(self) -> None:
        """Makes this process the folder's only writer until `unlock` or its exit (an OS file lock through
        `filelock`, released by the kernel even on SIGKILL); `owner.json` then names this process.
        Locking again from the same store does nothing. A best.dsl edited by hand is then moved aside
        (`_keep_edited_best`).

        Raises:
            MapperoptError: another process holds the folder (its pid and command in the message), or a folder is
                where the run writes a file (best.dsl, history.csv, ...): found now rather than once an iteration
                ran.
        """
        if self._lock is not None:
            return
        for name in OUTPUTS:
            if (self.root / name).is_dir():
                raise wrong_kind(IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(self.root / name)))
        self._lock = hold(self.root / "tune.lock", self.root / "owner.json", lambda who: MapperoptError(
            f"{self.root} is in use by {who}",
            hint="wait for it to finish or stop that process; `--new` starts a separate tuning folder"))
        self._keep_edited_best()

    def _keep_edited_best(self) -> None:
        """Moves best.dsl aside (best-edited-<time>.dsl, said in `damaged`) where it is none of the programs the
        journal records: an edit of the user's, which the run's next output would write over."""
        best = self.root / "best.dsl"
        if not self.records or not best.is_file() or best.read_bytes() in {
                self._best_text(r.dsl).encode() for r in self.records if r.dsl is not None}:
            return
        kept = self.root / f"best-edited-{time.strftime('%Y%m%d-%H%M%S')}.dsl"
        best.rename(kept)
        self.damaged.append(f"{best} is none of the programs this run recorded (an edit?): it is kept as {kept}, and "
                            "best.dsl is written anew")

    @property
    def locked(self) -> bool:
        """Whether this store holds the folder's lock."""
        return self._lock is not None

    def unlock(self) -> None:
        """Gives the folder up (see `lock`)."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    # ------------------------------------------------------------------------------------------ create / open

    @staticmethod
    def new_root(runs_dir: Path, app: str) -> Path:
        """The path of a new tuning folder, `runs_dir/<app>/tune-<timestamp>-<6 hex>/` (not created). The latest
        folder is found by name, to the second: where one of this second is there already, it waits for the next."""
        folder = Path(runs_dir) / str(app)
        while any(folder.glob(f"tune-{(stamp := time.strftime('%Y%m%d-%H%M%S'))}-*")):
            time.sleep(0.05)
        return folder / f"tune-{stamp}-{secrets.token_hex(3)}"

    @classmethod
    def create(cls, runs_dir: Path, app: str, settings: dict, root: Path | None = None) -> TuneStore:
        """A new, empty tuning folder (`root`, default `new_root(runs_dir, app)`) with settings.json written, locked
        by this process."""
        root = root or cls.new_root(runs_dir, app)
        root.mkdir(parents=True)
        store = cls(root, {"schema": SETTINGS_SCHEMA, "app": str(app), **settings}, [])
        store.lock()
        store.write_settings()
        (root / "state.jsonl").touch()
        return store

    def write_settings(self) -> None:
        """Writes `settings` to settings.json: at set-up; later only for memory sizes a capacity failure raised
        (`loop._raise_memory`) and for the iteration count an extension raised (`loop.tune`)."""
        write_atomically(self.root / "settings.json", json.dumps(self.settings, indent=2) + "\n")

    @classmethod
    def open(cls, root: Path) -> TuneStore:
        """Reopens a tuning folder and replays its journal. A torn last line (the process died, or the disk filled
        up, while writing it: its iteration never finished) is skipped, and `damaged` says so.

        Raises:
            MapperoptError: the folder has no settings.json (it is not a tuning folder), settings.json is damaged
                (a field of another kind or with a value its option does not take, named), the journal is out of
                order or has a damaged line before its last (the file and line named), or it does not record the
                iterations whose folders or outputs are there, or a file is where an iteration's folder belongs
                (`_require_recorded`).
        """
        root = Path(root)
        damaged = damage_hint(root)
        try:
            settings = read_json(root / "settings.json", hint=damaged, fields=_SETTINGS_FIELDS)
        except OSError as exc:
            _require_no_iterations(root)
            raise MapperoptError(f"{root} is not a tuning folder: cannot read settings.json ({exc.strerror})",
                                 hint="pass the folder that `mapperopt tune` printed (runs/<app>/tune-...)") from None
        _require_one_program(root / "settings.json", settings, damaged)
        _require_as_made(root / "settings.json", settings, damaged)
        _require_calibrated(root / "settings.json", settings, damaged)
        _require_runnable(root / "settings.json", settings, damaged)
        path = root / "state.jsonl"
        numbered, bad = _read_journal(path)
        for i, (line, record) in enumerate(numbered, 1):
            if record.iter != i:
                skipped = [b for b in bad if b[0] < line]  # a line lost there, rather than out of order
                if skipped:
                    raise MapperoptError(f"{path} line {skipped[-1][0]} is damaged ({skipped[-1][1]}): iteration "
                                         f"{i}'s record cannot be read",
                                         hint=_cut_hint(root, settings, numbered[i - 2][0] + 1 if i > 1 else 1, i)
                                         + damaged)
                copied = next((n for n, r in numbered[:i - 1] if r == record), None)  # a line there twice
                # every iteration recorded once, out of order (lines swapped): reordering keeps them all
                swapped = sorted(r.iter for _, r in numbered) == list(range(1, len(numbered) + 1))
                at = next((n for n, r in numbered if r.iter == i), None)
                raise MapperoptError(f"{path} line {line} records iteration {record.iter}"
                                     + (f" again (as line {copied} does)" if copied else "")
                                     + f", where iteration {i} was expected: its records number the iterations 1, "
                                       "2, 3, ... in order",
                                     hint=(f"delete line {line}, a copy of line {copied}, then run the same command "
                                           "again; or " if copied else
                                           f"line {at} records iteration {i}: put the lines in the order of their "
                                           "iterations (each line's \"iter\"), then run the same command again; or "
                                           if swapped else _cut_hint(root, settings, line, i)) + damaged)
        _require_recorded(root, settings, len(numbered))
        _require_as_measured(path, numbered, damaged)
        store = cls(root, settings, [record for _, record in numbered])
        last = numbered[-1][0] if numbered else 0
        # only a line after the last record can be an interrupted append's; those between records were there
        # before an append (which cut away only a torn last line). A line cut short is never valid JSON: a whole
        # object of the wrong shape was damaged otherwise (an edit).
        torn = bad[-1] if bad and bad[-1][0] > last and bad[-1][1].startswith(_CUT_SHORT) else None
        earlier = bad[:-1] if torn else bad
        if earlier:  # not an interrupted append's, which tears only the last line
            lines = [str(n) for n, _ in earlier]
            named = f"line {lines[0]} is" if len(lines) == 1 else \
                f"lines {', '.join(lines[:-1])} and {lines[-1]} are"
            whys = "; ".join(f"line {n}: {why}" for n, why in earlier) if len(earlier) > 1 else earlier[0][1]
            redone = "is" if earlier[-1][0] > last else "was"  # the records after it ran it again
            store.damaged.append(f"{path} {named} damaged ({whys}): skipped, and any iteration "
                                 f"{'they record' if len(earlier) > 1 else 'it records'} {redone} run again; the "
                                 "journal was damaged there otherwise than by an interrupted write, which tears only "
                                 "its last line")
        if torn is not None:
            store.damaged.append(f"{path} line {torn[0]} is damaged ({torn[1]}): skipped, as an iteration that never "
                                 f"finished; the journal's next record moves it to {_torn_copy(path)}")
        return store

    # ------------------------------------------------------------------------------------------------ journal

    def iter_dir(self, i: int, keep: Path | None = None) -> Path:
        """The run folder of iteration `i`, created empty when the iteration is not in the journal yet (what an
        interrupted attempt left there is removed, so that the folder only holds the run that is recorded), unless
        it is `keep`: the folder of a stored measurement that the iteration reuses."""
        path = self.root / f"iter-{i:03d}"
        if i > len(self.records) and path.exists() and not (keep is not None and keep.resolve() == path.resolve()):
            shutil.rmtree(path)
        path.mkdir(exist_ok=True)
        return path

    def append(self, record: IterationRecord) -> None:
        """Appends `record` to the journal as one `write` of a whole line (O_APPEND) and forces it to disk before
        returning; a torn line at the journal's end (see `open`) is cut away first (kept in state.jsonl.damaged),
        and so is what a failed write left, but a whole last record without its line end (an editor's save) gets
        one. Takes the folder's lock first if this store does not hold it yet.

        Raises:
            ValueError: `record.iter` is not the next iteration number.
            MapperoptError: another process holds the folder.
            OSError: the write failed (e.g. ENOSPC, the disk is full), naming the journal; the journal is as before.
        """
        if record.iter != len(self.records) + 1:
            raise ValueError(f"record of iteration {record.iter} appended after {len(self.records)} iterations")
        self.lock()
        path = self.root / "state.jsonl"
        line = (json.dumps(record.to_json()) + "\n").encode()
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            end = _whole_lines_end(fd)
            torn = os.pread(fd, os.lseek(fd, 0, os.SEEK_END) - end, end)
            if torn and self.records and _record_in(torn) == self.records[-1]:  # saved without its line end
                os.write(fd, b"\n")
                end, torn = end + len(torn) + 1, b""
            if torn:  # kept: a line damaged otherwise than by a torn write (an edit) would be lost
                with open(_torn_copy(path), "ab") as copy:
                    copy.write(torn + b"\n")
            os.ftruncate(fd, end)
            try:
                written = 0
                while written < len(line):  # after a short write, the next one says why (ENOSPC: a full disk)
                    written += os.write(fd, line[written:])
                os.fsync(fd)
            except OSError as exc:
                os.ftruncate(fd, end)  # no torn record of this iteration, which is run again
                raise OSError(exc.errno, exc.strerror, str(path)) from None
        finally:
            os.close(fd)
        self.records.append(record)

    def lookup(self, key: str) -> IterationRecord | None:
        """The iteration that evaluated the program with cache `key` (never a cached one, never a transient
        failure: a timeout or a kill is measured again), or None."""
        return next((r for r in self.records if r.key == key and not r.cached and not r.transient), None)

    def best(self) -> IterationRecord | None:
        """The best iteration so far: the one the last record names (`best_iter`, decided by the loop beyond
        the noise), else, for journals without it, the successful iteration with the highest throughput (the
        earliest among equals); None when none succeeded."""
        named = self.records[-1].best_iter if self.records else None
        if named is not None:
            return self.records[named - 1]
        ok = [r for r in self.records if r.ok and r.throughput is not None]
        return max(ok, key=lambda r: (r.throughput, -r.iter)) if ok else None

    # ------------------------------------------------------------------------------------------------ outputs

    def write_outputs(self, final_pick: int | None = None, summary: dict | None = None) -> dict[str, Path]:
        """Writes best.dsl (when some iteration succeeded), history.csv and progress.png from the journal.

        Args:
            final_pick: the iteration the final comparison picked (summary.json's `best_iter`), which may not be the
                loop's best: its program is best.dsl, its history.csv row says `best.dsl` under `final_pick` and
                the plot marks it, so that the three agree. None before the final comparison.
            summary: the final comparison's summary (`final_comparison`), whose figures the plot draws too (its
                verdict compares them, not those of the tuning), or None.

        Returns:
            the paths written, by name ("best", "history", "plot").
        """
        out = {"history": self.root / "history.csv", "plot": self.root / "progress.png"}
        best = self.records[final_pick - 1] if final_pick is not None else self.best()
        if best is not None and best.dsl is not None:
            out["best"] = self.root / "best.dsl"
            self._write_best(best.dsl)
        rows = io.StringIO(newline="")
        writer = csv.writer(rows)
        writer.writerow(HISTORY_COLUMNS)
        rebuilt = rebuilt_iterations(self.root)
        for r in self.records:
            writer.writerow(_history_row(r, r.iter == final_pick, self.settings.get("iterations"),
                                         rebuilt.get(r.iter)))
        write_atomically(out["history"], rows.getvalue())
        plot_progress(self.records, out["plot"], title=f"{self.settings.get('app', '')} — "
                                                       f"{self.settings.get('optimizer', '')}",
                      baselines=self.baseline_names(), final_pick=final_pick,
                      final=self._final_figures(summary) if summary else None,
                      iterations=self.settings.get("iterations"), rebuilt=rebuilt)
        return out

    def baseline_names(self) -> dict[str, float]:
        """The reference mappers' throughputs measured before tuning by the name the plot gives them: the `default`
        reference of a program that registers its own mapper (discovery's `own_mapper`) as that mapper."""
        return {self._plot_name(n): v for n, v in (self.settings.get("baselines") or {}).items()}

    def _plot_name(self, reference: str) -> str:
        own = own_mapper_of(self.settings)
        return reference_name(reference, own) if reference == "default" and own else reference

    def _final_figures(self, summary: dict) -> dict:
        """What `progress_figure` takes as `final` from a final comparison's summary (references and pick that
        failed there left out)."""
        measured = summary["measured"]
        return {"pick": (measured[summary["best"]] or {}).get("estimate"),
                "references": {self._plot_name(n): (m["estimate"]["value"], summary["vs"].get(n))
                               for n, m in measured.items() if not n.startswith("iter-") and m.get("estimate")}}

    def write_summary(self, summary: dict) -> None:
        """Writes the final comparison (summary.json, marking the run finished) and its best program to best.dsl.
        Lock held (see `lock`)."""
        self.lock()
        self._write_best(summary["best_dsl"])
        write_atomically(self.root / "summary.json", json.dumps(summary, indent=2) + "\n")


    def _best_text(self, dsl: str) -> str:
        """best.dsl's text for the program `dsl`."""
        return f"# Tuned with --keep-app-mapper: {KEPT_USE}\n{dsl}" if kept_app_mapper(self.settings) else dsl

    def _write_best(self, dsl: str) -> None:
        """Writes best.dsl and, when the run started from a file of the user's, best-from-start.dsl: that file
        edited to map as `dsl` does on this machine (`SearchSpace.edit_of`), or none when no such edit is sound."""
        from mapperopt.optimizer.space import SearchSpace

        best = self.root / "best.dsl"
        dsl = self._best_text(dsl)
        if best.is_file() and best.read_bytes() == dsl.encode():
            return  # the same best as after the last iteration: its edit was written before it (below)
        s, path = self.settings, self.root / "best-from-start.dsl"
        if s.get("start") not in (None, "default", "random") and "app_description" in s:
            space = SearchSpace(s["app_description"], s["machine"], layouts=s.get("search_layouts", True),
                                start=s["start_dsl"])
            edit = space.edit_of(s["start_dsl"], dsl)
            if edit is None:
                path.unlink(missing_ok=True)  # an earlier best's edit would not be this best's
            else:
                write_atomically(path, edit)
        write_atomically(best, dsl)


def damage_hint(root: Path) -> str:
    """The hint for a damaged file of the tuning folder `root`: restore it, or the comparison it is a run of (its
    records go with the comparison's shared files), from a copy."""
    from mapperopt.optimizer.compare import SCHEMA

    try:
        parent = json.loads((Path(root).parent / "settings.json").read_text())
    except (OSError, ValueError):
        parent = None
    return restore_hint("comparison" if isinstance(parent, dict) and parent.get("schema") == SCHEMA else "tuning")


def _require_no_iterations(root: Path) -> None:
    """Refuses the folder `root` without a readable settings.json when it holds iterations (a journal, iteration
    folders): it is a tuning folder that lost its settings, not another folder.

    Raises:
        MapperoptError: what is there, and what to restore; nothing is changed.
    """
    journal = root / "state.jsonl"
    held = ["state.jsonl"] * (journal.is_file() and journal.stat().st_size > 0) + sorted(
        p.name for p in root.glob("iter-*") if p.is_dir())
    if held:
        raise MapperoptError(f"{root} has no settings.json, but {', '.join(held)} {'is' if len(held) == 1 else 'are'} "
                             "there: the run cannot be continued without it; nothing was changed",
                             hint="restore settings.json from a copy; or leave this folder as it is and start a new "
                                  "run: the command without --resume, with --new")


def _require_one_program(path: Path, settings: dict, damaged: str) -> None:
    """Refuses the settings.json `path` (its `settings`) of a benchmark's tuning folder whose `app` is not the
    program its `request` and `app_description` name (an edit): continued, the run would mix two programs.

    Raises:
        MapperoptError: naming the fields and both programs.
    """
    request = settings.get("request")
    if "app" not in settings or not isinstance(request, dict) or "program" in request:  # a user's: by its identity
        return
    named = {"request.bench": request.get("bench"), "app_description.app": settings.get("app_description", {})
             .get("app")}
    other = {f: v for f, v in named.items() if v is not None and v != settings["app"]}
    if other:
        programs = sorted(set(map(str, other.values())))
        fields = " and ".join(f"'{f}'" for f in other)
        raise MapperoptError(f"{path} is damaged: its field 'app' is {settings['app']!r}, but its field"
                             f"{'s' * (len(other) > 1)} {fields} {'are' if len(other) > 1 else 'is'} "
                             f"{' and '.join(map(repr, programs))}",
                             hint=(f"set its 'app' back to \"{programs[0]}\" (its iterations are that program's); or "
                                   if len(programs) == 1 else "") + damaged)
    _require_own_tasks(path, settings, damaged)


def _require_own_tasks(path: Path, settings: dict, damaged: str) -> None:
    """Refuses the settings.json `path` (its `settings`) of a benchmark's tuning folder whose description lists
    tasks other than the benchmark's own (configs/): its names all edited to another benchmark, the run would go on
    as that one's.

    Raises:
        MapperoptError: naming both lists of tasks, and the benchmark the listed ones are of.
    """
    from mapperopt.benchmarks.apps import known_benchmarks, load_config

    def tasks(description: dict) -> list[str]:
        return [t["name"] for t in description.get("tasks", [])]

    benchmarks = known_benchmarks()
    if settings["app"] not in benchmarks or "app_description" not in settings:
        return
    listed, own = tasks(settings["app_description"]), tasks(load_config(settings["app"]).stored_description())
    if set(listed) == set(own):
        return
    theirs = next((b for b in benchmarks if set(tasks(load_config(b).stored_description())) == set(listed)), None)
    raise MapperoptError(f"{path} is damaged: its field 'app' is {settings['app']!r}, but its field "
                         f"'app_description.tasks' names the tasks {joined_names(listed)}, and {settings['app']}'s are "
                         f"{joined_names(own)}",
                         hint=(f"the tasks are {theirs}'s: if its iterations are too (their programs name these "
                               f"tasks), set 'app', 'request.bench' and 'app_description.app' to \"{theirs}\"; or "
                               if theirs else "") + damaged)


# The fields of a tuning folder's settings.json that `request` records as the run was made with (what each flag is
# called, the reason to set one back), and where the reference mappers' result.json `settings` record the same.
_AS_MADE = {"size": ("--size", "its iterations were measured at that size"),
            "app_args": ("arguments after --", "its iterations ran with those arguments"),
            "optimizer": ("--optimizer", "its iterations were proposed by that optimizer"),
            "seed": ("--seed", "its search was drawn from that seed"),
            # checked by the reference runs too, but a user's program with --baseline none has none
            "cpus": ("--cpus", "its iterations ran with that count"),
            "gpus": ("--gpus", "its iterations ran with that count")}
MEASURED_AS = {"size": "size", "app_args": "extra_args", "cpus": "cpus", "gpus": "gpus", "min_time_s": "min_time_s"}


def _require_as_made(path: Path, settings: dict, damaged: str) -> None:
    """Refuses the settings.json `path` (its `settings`) whose `size`, `app_args`, `optimizer`, `seed`, `cpus` or
    `gpus` is not what its `request` recorded, or whose `cpus`, `gpus` or `min_time_s` is not what its reference mappers
    were measured with (the request holds null for a value not given, and a -ll:cpu after -- may set a count), or whose
    `baselines` are not the trimmed means of their run folders (an edit): continued, the run would measure another
    problem, or search or measure on otherwise, into its journal, or AutoGuide would compare with a figure nothing
    measured. Where `request` and `settings` disagree, the field named is the setting unless the baselines were measured
    with it (`measured_values`): then the request's.

    Raises:
        MapperoptError: naming both fields and values, and the one to set back.
    """
    request = settings.get("request") or {}
    for field, (flag, why) in _AS_MADE.items():
        if field not in settings or field not in request or request[field] is None or \
                request[field] == settings[field]:
            continue
        value, made, measured = settings[field], request[field], measured_values(path.parent, field)
        if value in measured and made not in measured:
            raise MapperoptError(f"{path} is damaged: its field 'request.{field}' is {made!r}, but its field "
                                 f"'{field}' (the {'size' if field == 'size' else flag} its baselines were measured "
                                 f"{'at' if field == 'size' else 'with'}) is {value!r}",
                                 hint=f"set its 'request.{field}' back to {json.dumps(value)}; or {damaged}")
        raise MapperoptError(f"{path} is damaged: its field '{field}' is {value!r}, but its field 'request.{field}' "
                             f"(the {flag} it was made with) is {made!r}",
                             hint=f"set its '{field}' back to {json.dumps(made)} ({why}); or {damaged}")
    for field in ("cpus", "gpus", "min_time_s"):
        # a --min-time beyond what the timeout lets calibration reach was refused up front, but edited here it was
        # run, under a header claiming it; only calibrated executions (not a user's program's) record one
        # (a reference's damaged settings, not a number, tell nothing here: its own reading names them)
        kept = [(r["settings"][field], p) for p, r in _set_up_files(path.parent)
                if isinstance(r.get("settings"), dict) and is_number(r["settings"].get(field))
                and (field != "min_time_s" or r["settings"].get("iterations_flag"))]
        if settings.get(field) is not None and kept and settings[field] not in [v for v, _ in kept]:
            value, result = kept[0]
            raise MapperoptError(f"{path} is damaged: its field '{field}' is {settings[field]:g}, but the reference "
                                 f"mappers were measured with {value:g} ({result.relative_to(path.parent)})",
                                 hint=f"set its '{field}' back to {value:g}; or {damaged}")
    for name, value in (settings.get("baselines") or {}).items():
        result = path.parent / f"baseline-{name}" / "result.json"
        measured = ((result.is_file() and readable_result(result)) or {}).get("trimmed_mean")
        if is_number(measured) and is_number(value) and not math.isclose(value, measured, rel_tol=SAME_FIGURE):
            raise MapperoptError(f"{path} is damaged: its field 'baselines.{name}' is {value!r}, but "
                                 f"baseline-{name}/result.json measured {measured!r}",
                                 hint=f"set its 'baselines.{name}' back to {measured!r}; or {damaged}")


def _require_calibrated(path: Path, settings: dict, damaged: str) -> None:
    """Refuses the settings.json `path` (its `settings`) whose `iterations`, the count every iteration runs, is none
    that the reference mappers or the calibration measured successfully at before tuning (an edit): continued, the
    next iterations would measure another problem than the earlier ones.

    Raises:
        MapperoptError: naming the field and the count measured.
    """
    # in the order set-up takes the count from: the expert mapper's, the default mapper's, the calibration's
    counts = [r["settings"]["iterations"] for r in sorted(set_up_results(path.parent),
                                                          key=lambda r: r["mapper"] != "expert")
              if r["status"] == "ok" and (r.get("settings") or {}).get("iterations")]
    if counts and settings.get("iterations") is not None and settings["iterations"] not in counts:
        _require_references(path, settings)
        raise MapperoptError(f"{path} is damaged: its field 'iterations' is {settings['iterations']}, but the "
                             f"reference mappers were measured at {counts[0]}, the count calibrated before tuning",
                             hint=f"set its 'iterations' back to {counts[0]}; or {damaged}")


def _require_references(path: Path, settings: dict) -> None:
    """Refuses the tuning folder of the settings.json `path` (its `settings`) whose first reference mapper's run
    folder (`baseline-NAME/`, the expert's where `baselines` lists it) was removed: the run took its iteration count
    from that one, and the other was calibrated on its own (one that measured less than the minimum is calibrated
    again), so that its count may differ without anything being damaged, and `iterations` set to it would make
    every earlier iteration not comparable.

    Raises:
        MapperoptError: naming the missing folder (or its result.json) and how to restore it.
    """
    root, count = path.parent, settings["iterations"]
    names = sorted(settings.get("baselines") or {}, key=lambda n: n != "expert")  # the order they were measured in
    folder = root / f"baseline-{names[0]}" if names else None
    if folder is None or (folder / "result.json").is_file():
        return
    missing = f"{folder}/" if not folder.exists() else f"{folder / 'result.json'}"
    others = [f"baseline-{r['mapper']}/ measured at {r['settings']['iterations']}" for r in set_up_results(root)
              if r["status"] == "ok" and (r.get("settings") or {}).get("iterations")]
    ran = sum(((r.result or {}).get("settings") or {}).get("iterations") == count
              for _, r in _read_journal(root / "state.jsonl")[0])
    raise MapperoptError(f"{missing} is missing: it held the {names[0]} mapper's reference measurement, which fixed "
                         f"the run's iteration count (settings.json's 'iterations', {count}); without it that count "
                         "cannot be checked",
                         hint=f"restore {folder.name}/ from a copy of the tuning folder, then run the same command "
                              "again; leave settings.json as it is: each reference mapper is calibrated on its own, "
                              f"so {' and '.join(others) or 'another count of the other'} is no sign of damage"
                              + (f", and {ran} of the journal's iterations ran at {count} (another count would make "
                                 "them not comparable)" if ran else "")
                              + "; or start a new run with `--new`")


def set_up_results(root: Path) -> list[dict]:
    """The result.json of the reference mappers and the calibration the tuning or comparison folder `root` measured
    first (`baseline-*/`, `calibration/`), but damaged ones (`tune` notes a reference's)."""
    return [r for _, r in _set_up_files(root)]


def _set_up_files(root: Path) -> list[tuple[Path, dict]]:
    """`set_up_results` with the path of each."""
    return [(p, r) for p in (*sorted(root.glob("baseline-*/result.json")), root / "calibration" / "result.json")
            if p.is_file() and (r := readable_result(p)) is not None]


def readable_result(path: Path) -> dict | None:
    """The result.json `path`, or None where it is damaged."""
    try:
        return read_json(path, fields=RESULT_FIELDS)
    except MapperoptError:
        return None


def measured_values(root: Path, field: str) -> list:
    """The values of the setting `field` (none but for `MEASURED_AS`'s) that the reference mappers of the tuning or
    comparison folder `root` were measured with (`set_up_results`): what tells an edited setting from the one the
    folder ran."""
    return [(r.get("settings") or {}).get(MEASURED_AS[field]) for r in set_up_results(root)] \
        if field in MEASURED_AS else []


def _require_runnable(path: Path, settings: dict, damaged: str) -> None:
    """Refuses the settings.json `path` (its `settings`, of the right kinds) whose fields disagree in a way no run
    wrote (an edit): more repeats than the most allowed, or a machine no probe wrote (`require_machine`).

    Raises:
        MapperoptError: naming the field and what is wrong with it.
    """
    if settings.get("max_repeats", settings.get("repeats", 1)) < settings.get("repeats", 1):
        raise MapperoptError(f"{path} is damaged: its field 'max_repeats' is {settings['max_repeats']}, below its "
                             f"field 'repeats', {settings['repeats']}", hint=damaged)
    if settings.get("machine") is not None:
        require_machine(path, settings["machine"], damaged)


def require_machine(path: Path, machine: dict, damaged: str) -> None:
    """Refuses the settings.json `path` of a tuning or comparison folder whose `machine` (of the right kinds) is no
    machine a probe wrote (an edit): node 0 without a CPU or GPU processor or without memory, a node count other than
    its processor lists', counts of another node count, a memory with affinity to a processor that is not there.
    `damaged`: how to restore the folder.

    Raises:
        MapperoptError: naming the file, the field and what is wrong with it.
    """
    from mapperopt.optimizer.space import KIND_RANKING

    def refused(why: str) -> MapperoptError:
        return MapperoptError(f"{path} is damaged: its field {why}", hint=damaged)

    node0 = {k: counts if isinstance(counts, int) else (counts or [0])[0]
             for k, counts in machine["processors"].items()}
    kinds = [k for k in sorted(KIND_RANKING) if node0.get(k, 0) > 0]  # those the search places tasks on
    if not kinds:
        raise refused(f"'machine.processors' lists no {' or '.join(sorted(KIND_RANKING))} processor on node 0")
    if "memories" not in machine:
        raise refused("'machine.memories' is missing")
    if not any(m["node"] == 0 for m in machine["memories"]):  # Realm gives every node one, a SYSMEM at least
        raise refused("'machine.memories' lists no memory of node 0")
    listed = {k: len(counts) for k, counts in machine["processors"].items() if isinstance(counts, list)}
    if len(set(listed.values())) == 1 and machine["nodes"] not in listed.values():  # the node count is the odd one
        kind, n = next(iter(listed.items()))
        raise MapperoptError(f"{path} is damaged: its field 'machine.nodes' is {machine['nodes']}, but its field "
                             f"'machine.processors.{kind}' lists {n} node{'s' * (n != 1)}",
                             hint=f"set its 'machine.nodes' back to {n}; or {damaged}")
    try:
        MachineDescription.from_json(machine)
    except DescriptionError as exc:  # counts of another node count, a processor or node that is not there
        raise refused(f"'machine' is no machine description: {exc}") from None


def _cut_hint(root: Path, settings: dict, line: int, i: int) -> str:
    """The first part of the hint for a journal of the tuning folder `root` (its `settings`) whose record of
    iteration `i`, expected at `line`, cannot be read: what to delete so that the run goes on from iteration `i`
    (the journal from that line on, and `_after`), running those iterations again. A run of a comparison keeps the
    figures of the iterations run again that other runs reused: the comparison's stored outcomes hold them."""
    after = _after(root, i)
    return (f"delete line {line} and every line after it from state.jsonl"
            + (f", and {after[0]}" if len(after) == 1 else f", {after[0]}, and {after[1]}" if after else "")
            + f", {_go_on(root, settings, i)}; or ")


def _after(root: Path, i: int) -> list[str]:
    """What a run that goes on from iteration `i` must not find in the tuning folder `root` (`_require_recorded`
    would refuse it): the folders of the iterations from `i` on (iteration `i`'s would be made over anyway, but is
    named too, so that every hint names the folders of all the iterations it runs again) and, from iteration 1, the
    outputs written from the journal; as at most two phrases."""
    folders = sorted(p.name for p in root.glob("iter-*")
                     if p.name[5:].isdigit() and int(p.name[5:]) >= i and p.is_dir())
    outputs = [name for name in ("best.dsl", "history.csv", "progress.png", "summary.json")
               if i == 1 and (root / name).exists()]
    return ([f"the folder{'s' * (len(folders) > 1)} {joined_names(folders)}"] if folders else []) + (
        [joined_names(outputs)] if outputs else [])


def joined_names(names: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return " and ".join(names) if len(names) < 3 else f"{', '.join(names[:-1])} and {names[-1]}"


def _go_on(root: Path, settings: dict, i: int) -> str:
    """How the tuning folder `root` (its `settings`) goes on from iteration `i` once `_after` is deleted: `tune`'s
    same command, or a comparison's command that tunes (its --report-only does not)."""
    if "compare" in settings:
        return (f"then run the command without --report-only: it runs iteration {i} and the later ones of {root.name} "
                "again")
    return f"then run the same command again: it runs iteration {i} and the later ones again"


def _require_recorded(root: Path, settings: dict, n: int) -> None:
    """Refuses a tuning folder `root` whose journal holds `n` records but whose files say that more iterations ran:
    folders of iterations past the one after its end (that one is an interrupted attempt's), or, with no record at
    all, outputs written only after an iteration was recorded. Continued, the run would measure those iterations
    again over their folders (an emptied or deleted journal: a crash, a stray `>`).

    Raises:
        MapperoptError: the journal's state and what is there, or a file where an iteration's run folder belongs
            (named); nothing is changed.
    """
    taken = sorted(p for p in root.glob("iter-*") if p.name[5:].isdigit() and not p.is_dir())
    if taken:  # a recorded iteration's evidence lost, or an attempt's folder that cannot be made over
        raise MapperoptError(f"{taken[0]} is a file, where mapperopt keeps an iteration's run folder",
                             hint="remove or rename it, then run the same command again")
    done = sorted(int(p.name[5:]) for p in root.glob("iter-*") if p.name[5:].isdigit() and p.is_dir())
    outputs = [name for name in ("best.dsl", "history.csv", "progress.png", "summary.json")
               if not n and (root / name).exists()]
    if not outputs and all(i <= n + 1 for i in done):
        return
    shown = done if outputs else [i for i in done if i > n + 1]
    folders = ([f"iter-{shown[0]:03d} to iter-{shown[-1]:03d}"] if len(shown) > 2 and shown[-1] - shown[0] ==
               len(shown) - 1 else [f"iter-{i:03d}" for i in shown])
    path = root / "state.jsonl"
    journal = ("is missing" if not path.exists() else "is empty" if not path.read_bytes().strip() else
               f"records {n} iteration{'s' * (n != 1)}")
    # a folder that commits its journals compressed (benchmarks/evaluate.py's) holds the journal there
    packed = path.with_name("state.jsonl.xz")
    if not path.exists() and packed.exists():
        # the comparison's other runs lack theirs too: one command restores all
        others = sorted(p for p in root.parent.glob("*/state.jsonl.xz") if not p.with_suffix("").exists()
                        and p != packed) if "compare" in settings else []
        raise MapperoptError(f"{path} is missing; {packed.name} is beside it (a journal kept compressed)",
                             hint=("restore it and the other runs' journals" if others else "restore it") + ": `xz -dk "
                                  f"{' '.join(shlex.quote(str(p)) for p in [packed, *others])}`, then run the same "
                                  "command again")
    there = ", ".join(folders + outputs)
    raise MapperoptError(f"{path} {journal}, but {there} {'is' if len(folders + outputs) == 1 else 'are'} there: "
                         "the journal does not record the iterations they come from, and continuing would run them "
                         "again over their folders; nothing was changed",
                         hint="restore state.jsonl from a copy; or " + (
                             # a comparison's run: `compare --new` would start the whole comparison again
                             f"delete {', and '.join(_after(root, n + 1))}, {_go_on(root, settings, n + 1)}"
                             if "compare" in settings else
                             "leave this folder as it is and start a new run: the command without --resume, with "
                             "--new"))


def _record_in(line: bytes) -> IterationRecord | None:
    """The record the journal line `line` holds, or None."""
    try:
        return IterationRecord.from_json(json.loads(line))
    except (ValueError, TypeError, AttributeError):
        return None


def _torn_copy(journal: Path) -> Path:
    """Where `TuneStore.append` keeps the torn last line it cuts away from `journal`."""
    return journal.with_name(journal.name + ".damaged")


def _require_as_measured(path: Path, numbered: list[tuple[int, IterationRecord]], damaged: str) -> None:
    """Refuses the journal `path` (its records with their lines, `numbered`) where a record of an iteration that
    measured its program itself says otherwise than its run folder's result.json, the measurement (an edit of
    either): replayed, the journal's figure would be printed, plotted and kept as measured.

    Raises:
        MapperoptError: naming the line, both figures and both files.
    """
    from mapperopt.records import RunResult

    for line, r in numbered:
        result = path.parent / f"iter-{r.iter:03d}" / "result.json"
        # a reused or another run's measurement has no result.json of its own there
        data = None if r.cached or r.cached_from is not None or r.result is None or not result.is_file() \
            else readable_result(result)
        if data is None:
            continue
        run = RunResult.from_json(data)
        figure = run.recorded_throughput if run.ok else None
        if run.status == r.status and (figure == r.throughput or (
                is_number(figure) and is_number(r.throughput) and math.isclose(figure, r.throughput,
                                                                               rel_tol=SAME_FIGURE))):
            continue
        said = f"measured {figure!r}" if run.ok else f"failed (stage {run.stage})"
        back = (f"set its 'throughput' back to {figure!r}" if run.ok and r.ok else
                "restore state.jsonl from a copy")
        recorded = f"iteration {r.iter}'s throughput as {r.throughput!r}" if r.ok else f"iteration {r.iter} as failed"
        raise MapperoptError(f"{path} line {line} is damaged: it records {recorded}, but {result} {said}",
                             hint=f"{back} (result.json is the measurement, with its executions' times); or "
                                  f"{damaged}")


def _whole_lines_end(fd: int) -> int:
    """The size of the file `fd` without its last line when that line has no end (a torn record)."""
    end = os.lseek(fd, 0, os.SEEK_END)
    start = end
    while start > 0:
        chunk = os.pread(fd, min(start, 1 << 16), start - min(start, 1 << 16))
        if b"\n" in chunk:
            return start - len(chunk) + chunk.rindex(b"\n") + 1
        start -= len(chunk)
    return 0


def _without_secrets(argv: list[str]) -> list[str]:
    """`argv` with the value of `--llm-api-key` replaced by `***` (its help says the key is never stored)."""
    out: list[str] = []
    for arg in argv:
        if out and out[-1] == "--llm-api-key":
            out[-1] = "--llm-api-key=***"
        elif arg.startswith("--llm-api-key="):
            out.append("--llm-api-key=***")
        else:
            out.append(arg)
    return out


def kept_app_mapper(settings: dict) -> bool:
    """Whether the tuning folder's `settings` kept the program's own mapper (tune --keep-app-mapper)."""
    return bool(((settings.get("request") or {}).get("program") or {}).get("keep_app_mapper"))


def hold_program_folder(folder: Path, program: str, resumed: bool = False) -> Any:
    """Makes this process the only tune or comparison of `program` in `folder` (runs/<program>/) until the returned
    lock is released or the process exits: two of them at once run the program on the same cores, and each one's
    timings disturb the other's. An OS lock through `filelock` (released by the kernel even on SIGKILL), taken
    without waiting, with a JSON file beside it that names this process; both live in a per-user folder of this
    host (`program_locks`), under a key of the folder's absolute path, so that a refused command leaves nothing in
    the runs folder and two commands with different build caches (MAPPEROPT_CACHE) see each other.

    Raises:
        MapperoptError: another process holds it: its pid and command named; `resumed` (`tune --resume DIR`, whose
            folder stays in its runs folder): the hint suggests no other --runs-dir.
    """
    import hashlib

    folder = Path(folder)
    locks = program_locks()
    key = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:16]
    return hold(locks / f"{key}.lock", locks / f"{key}.json", lambda who: MapperoptError(
        f"{program} is being tuned or compared in {folder}: {who}; two tunes or comparisons of one program at once "
        "run it on the same cores, so each one's timings disturb the other's and neither one's decisions can be "
        "trusted",
        hint="wait for it to finish, or stop it (Ctrl-C or `kill` it: the same command continues it later)" + (
            "; a continued folder stays in its runs folder, so it cannot be tuned beside the other" if resumed else
            "; to run both at the same time anyway, give this one another --runs-dir")), folder=str(folder.resolve()))


def program_locks() -> Path:
    """The folder of the per-program locks (`hold_program_folder`), created if needed: <temporary folder>/mapperopt-
    <uid>/tuning, per user and host, the same whatever the build cache (and whatever the session: a login shell and
    a batch job of one user get the same one, where $XDG_RUNTIME_DIR is set in one only)."""
    import tempfile

    base = Path(tempfile.gettempdir()) / f"mapperopt-{os.getuid()}"
    locks = base / "tuning"
    try:
        locks.mkdir(parents=True, exist_ok=True)
        base.chmod(0o700)  # other users neither read the commands nor take the locks
    except OSError as exc:
        raise MapperoptError(f"{locks} cannot be made for the locks of the tunes and comparisons running "
                             f"({exc.strerror})", hint="make it writable, or set TMPDIR to a writable folder") from None
    return locks


def hold(lock_file: Path, owner_file: Path, refused: Callable[[str], MapperoptError], **about: str) -> Any:
    """Takes the OS lock `lock_file` (`filelock`, released by the kernel even on SIGKILL) without waiting, and names
    this process in `owner_file` (its pid, host, command and start, and `about`); returns the held lock.

    Raises:
        MapperoptError: `refused(who)` where another process holds it, `who` naming that process as its owner file
            does (`describe_owner`).
    """
    from filelock import FileLock, Timeout

    lock = FileLock(lock_file, timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise refused(describe_owner(owner_file.parent, owner_file.name)) from None
    owner = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.strftime("%Y-%m-%d %H:%M:%S"),
             "command": shlex.join(_without_secrets(sys.argv)), **about}
    write_atomically(owner_file, json.dumps(owner) + "\n")
    return lock


def describe_owner(root: Path, name: str = "owner.json") -> str:
    """'process 1234 (mapperopt tune circuit ..., since 2026-01-01 12:00:00)' from the folder's owner.json (or
    `name`)."""
    try:
        owner = json.loads((Path(root) / name).read_text())
    except (OSError, ValueError):
        return f"another process ({name} unreadable)"
    where = "" if owner.get("host") == socket.gethostname() else f" on {owner.get('host')}"
    return f"process {owner.get('pid')}{where} ({owner.get('command')}, since {owner.get('since')})"


def held_elsewhere(root: Path) -> str | None:
    """The process that holds the lock of the tuning or comparison folder `root` (`TuneStore.lock`), named as
    `describe_owner` names it, found without taking the lock (a report must not refuse a run that starts meanwhile):
    in the kernel's list of file locks (/proc/locks, Linux); None where no other process holds it, or where that
    list cannot be read."""
    try:
        lock = (Path(root) / "tune.lock").stat()
        held = Path("/proc/locks").read_text()
    except OSError:
        return None
    where = f"{os.major(lock.st_dev):02x}:{os.minor(lock.st_dev):02x}:{lock.st_ino}"
    # "1: FLOCK  ADVISORY  WRITE <pid> <major:minor:inode> 0 EOF"; a waiter's line has "->" after its number
    if not any(len(f) > 5 and f[5] == where and f[4] != str(os.getpid())
               for f in (line.replace("->", "").split() for line in held.splitlines())):
        return None
    return describe_owner(root)


def folder_path(stored: str, folder: Path) -> Path:
    """The path that a file of `folder` (a tuning or comparison folder) records as `stored`, as a path to use now.
    It is written relative to the folder, which can then be moved; records of before were relative to the working
    folder of the process that wrote them, or absolute: the folder's name in them says where its part begins (such
    a path without the name, of a folder renamed since, is taken as it is)."""
    path = Path(stored)
    if folder.name in path.parts:
        return folder.joinpath(*path.parts[len(path.parts) - path.parts[::-1].index(folder.name):])
    return path if path.is_absolute() else folder / path


def relative_run_dirs(run_dirs: Iterable[str], folder: Path) -> list[str]:
    """`run_dirs` (run folders the harness wrote under `folder`, a tuning or comparison folder) relative to
    `folder`, which can then be moved; each one's result.json is rewritten to name its run folder so (the harness
    writes the path it was given: absolute, or relative to the working folder)."""
    relative = []
    for run_dir in run_dirs:
        relative.append(os.path.relpath(run_dir, folder))
        path = Path(run_dir) / "result.json"
        if path.exists():
            write_atomically(path, json.dumps({**json.loads(path.read_text()), "run_dir": relative[-1]},
                                               indent=2) + "\n")
    return relative


def recalibrated(r: IterationRecord, iterations: int | None) -> str | None:
    """Why iteration `r`'s figure is not comparable with the run's others: its measurement ran at another iteration
    count than `iterations`, the run's calibrated count (it grew it, e.g. for a program much faster than the start),
    so its figure also weighs start-up differently; None when it ran at that count or says nothing."""
    settings = (r.result or {}).get("settings") or {}
    n = settings.get("iterations")
    if not iterations or not isinstance(n, int) or n == iterations:
        return None
    flag = settings.get("iterations_flag") or "the iteration count"
    return f"measured with {flag} {n}, not the run's {iterations}: not comparable with the other iterations"


REBUILT = "rebuilt.json"  # a tuning folder's iterations that ran while its program was rebuilt (`note_rebuilt`)


def note_rebuilt(root: Path, i: int, path: Path | str) -> None:
    """Records in the tuning folder `root` that its iteration `i` ran while `path`, its program's build, was
    replaced (a rebuild stopped the tune): it may have measured either build, so its figure is marked as not
    comparable (`rebuilt_iterations`)."""
    found = rebuilt_iterations(root)
    found[i] = str(path)
    write_atomically(root / REBUILT, json.dumps({"iterations": {str(k): v for k, v in sorted(found.items())}},
                                                indent=2) + "\n")


def rebuilt_iterations(root: Path) -> dict[int, str]:
    """The iterations of the tuning folder `root` that ran while its program was rebuilt, with the file that
    changed (`note_rebuilt`); {} where none did (or the record is unreadable: then nothing is marked)."""
    try:
        data = json.loads((root / REBUILT).read_text())
        return {int(k): str(v) for k, v in data["iterations"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def _history_row(r: IterationRecord, final_pick: bool, iterations: int | None = None,
                 rebuilt: str | None = None) -> list[Any]:
    """Iteration `r`'s row of history.csv; `not_comparable` says why its figure does not compare with the others
    (`recalibrated`; `iterations`: the run's calibrated count; `rebuilt`: the program's file that was replaced
    while it ran), empty when it does."""
    other = recalibrated(r, iterations) or (f"ran while {rebuilt} was rebuilt: either build" if rebuilt else None)
    values = {
        **{k: getattr(r, k) for k in ("iter", "status", "stage", "category", "throughput", "unit",
                                      "best_throughput", "best_iter", "cached", "cached_from", "note", "wall_s",
                                      "key")},
        "total_tokens": (r.llm or {}).get("total_tokens", 0),
        "final_pick": "best.dsl" if final_pick else None,
        "not_comparable": other.split(":")[0] if other else None,
    }
    return ["" if values[c] is None else values[c] for c in HISTORY_COLUMNS]


_CUT_SHORT = "not valid JSON"  # why `_read_journal` gives for a line that may be a torn write


def _read_journal(path: Path) -> tuple[list[tuple[int, IterationRecord]], list[tuple[int, str]]]:
    """The records of the journal `path` with their line numbers, and the lines that are not records with why."""
    numbered, bad = [], []
    text = path.read_text(errors="replace") if path.exists() else ""
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            numbered.append((n, IterationRecord.from_json(json.loads(line))))
        except json.JSONDecodeError as exc:
            bad.append((n, f"{_CUT_SHORT}: {exc.msg}, column {exc.colno}"))
        except (ValueError, TypeError, AttributeError) as exc:
            bad.append((n, f"not an iteration record: {exc}"))
    return numbered, bad


def own_mapper_of(settings: dict) -> str | None:
    """The name of the mapper a user's program registers itself (discovery's, in a tuning folder's `settings`),
    which its `default` reference runs; None for a benchmark or a program without one."""
    return (settings.get("app_description") or {}).get("own_mapper")


def reference_name(reference: str, own_mapper: str | None = None) -> str:
    """How the texts name the reference mapper (`reference`: "expert" or "default"): the `default` reference of a
    program that registers its own mapper (`own_mapper`, its name) runs that mapper, not Legion's default one."""
    return "the program's own mapper" if reference == "default" and own_mapper else f"the {reference} mapper"


def plot_progress(records: list[IterationRecord], path: Path, title: str = "",
                  baselines: dict[str, float] | None = None, final_pick: int | None = None,
                  final: dict | None = None, iterations: int | None = None,
                  rebuilt: dict[int, str] | None = None) -> None:
    """Writes `progress_figure(...)` as a PNG to `path`, whole or not at all (`write_atomically`)."""
    png = io.BytesIO()
    progress_figure(records, title, baselines, final_pick, final, iterations, rebuilt).savefig(png, format="png")
    write_atomically(path, png.getvalue())


def progress_figure(records: list[IterationRecord], title: str = "", baselines: dict[str, float] | None = None,
                    final_pick: int | None = None, final: dict | None = None, iterations: int | None = None,
                    rebuilt: dict[int, str] | None = None):
    """The figure of best-so-far throughput against iteration, with each iteration's own throughput as points
    (failures as crosses on the axis), the reference mappers' throughputs (`baselines`, by name) as dashed lines and
    the final comparison's pick (`final_pick`, an iteration: best.dsl) as a star at its tuning throughput. With
    `final`, the final comparison's own figures ({"pick": its Estimate JSON or None, "references": {name:
    (throughput, the pick's Comparison JSON against it or None)}}), on which its verdict rests, are drawn too: the
    pick's with its interval at its iteration, the references' as dotted lines naming the pick's ratio. An iteration
    measured at another iteration count than the run's calibrated `iterations` (`recalibrated`) is a hollow point
    with its own legend entry: its figure does not compare with the others; so is one that ran while the program
    was rebuilt (`rebuilt`: `rebuilt_iterations`), which may have measured either build. Returns a
    matplotlib Figure (`figures.figure`: matplotlib is imported here because it costs about a second)."""
    from mapperopt.benchmarks.protocol import CONFIDENCE, MIN_INTERVAL_VALUES, Comparison
    from mapperopt.figures import figure

    fig = figure(figsize=(6.4, 4.8), dpi=100)
    ax = fig.subplots()
    iters = [r.iter for r in records]
    ax.step(iters, [r.best_throughput for r in records], where="post", color="tab:blue", label="best so far")
    rebuilt = rebuilt or {}
    ok = [r for r in records if r.ok and not recalibrated(r, iterations) and r.iter not in rebuilt]
    ax.scatter([r.iter for r in ok], [r.score for r in ok], color="tab:green", s=18, zorder=3, label="iteration")
    apart = [r for r in records if r.ok and recalibrated(r, iterations)]
    if apart:
        ax.scatter([r.iter for r in apart], [r.score for r in apart], facecolors="none", edgecolors="tab:green",
                   s=30, zorder=3, label="iteration measured at another iteration count (not comparable)")
    mixed = [r for r in records if r.ok and r.iter in rebuilt and not recalibrated(r, iterations)]
    if mixed:
        ax.scatter([r.iter for r in mixed], [r.score for r in mixed], facecolors="none", edgecolors="tab:orange",
                   s=30, zorder=3, label="iteration that ran while the program was rebuilt (not comparable)")
    failed = [r for r in records if not r.ok]
    if failed:
        ax.scatter([r.iter for r in failed], [0] * len(failed), color="tab:red", marker="x", zorder=3,
                   label="failed")
    if final_pick is not None:
        pick = records[final_pick - 1]
        ax.scatter([pick.iter], [pick.score], marker="*", s=220, color="gold", edgecolors="black", zorder=4,
                   label=f"final pick: iteration {pick.iter} (best.dsl)")
        if final and final.get("pick"):
            e = final["pick"]
            n = len(e["values"])  # too few executions for an interval (as the table says): the bar is their range
            bar = (f"{CONFIDENCE:.0%} interval" if n >= MIN_INTERVAL_VALUES else "1 execution" if n == 1 else
                   f"lowest to highest of its {n} executions")
            ax.errorbar([pick.iter], [e["value"]], yerr=[[e["value"] - e["low"]], [e["high"] - e["value"]]],
                        fmt="D", color="black", markersize=5, capsize=4, zorder=5,
                        label=f"final pick in the final comparison ({bar})")
    references = (final or {}).get("references", {})
    colors = dict(zip(sorted(set(baselines or {}) | set(references)), ("tab:gray", "tab:orange", "tab:purple")))
    for name, value in sorted((baselines or {}).items()):
        # measured before iteration 1 (a comparison's final scores use a later measurement, taken with the bests)
        # lighter than the figures of this run: measured once, under other load, than the iterations
        ax.axhline(value, color=colors[name], linestyle="--", linewidth=0.8, alpha=0.5,
                   label=f"{name} (measured before tuning)")
    for name, (value, vs) in sorted(references.items()):
        ratio = f"; the pick: {Comparison.from_json(vs).text()}" if vs else ""
        # wrapped: a ratio without an interval says why at length, and one line of it ran off both sides
        ax.axhline(value, color=colors[name], linestyle=":", linewidth=1.5,
                   label="\n".join(textwrap.wrap(f"{name} (final comparison{ratio})", 60)))
    unit = next((r.unit for r in records if r.unit), "")
    ax.set_xlabel("iteration")
    ax.set_ylabel(f"throughput ({unit})" if unit else "throughput")
    if iters:
        ax.set_xticks(iters if len(iters) <= 20 else iters[:: max(1, len(iters) // 10)])
    # the staircase follows the loop's rule (`loop._becomes_best`), said where it is read
    interval = (final or {}).get("pick") and len(final["pick"]["values"]) >= MIN_INTERVAL_VALUES
    note = ("Each point: an iteration's trimmed mean. Best so far: replaced only by one higher beyond the noise or, "
            "within it, still higher with both re-measured together"
            + ("; the dashed lines were measured before tuning, under other load" if baselines else "") + ". "
            + (f"Read the final comparison (dotted lines, diamond{' with its interval' if interval else ''}): it "
               "measured them together."
               if references or (final or {}).get("pick") else
               "The final comparison, drawn here once tune finishes, measures them together: the one to read."))
    ax.set_title("\n".join([*([title] if title else []), *textwrap.wrap(note, 90)]), fontsize="small")
    ax.grid(alpha=0.3)
    clear_of_data(ax)
    fig.tight_layout()
    return fig


def clear_of_data(ax) -> None:
    """Sets `ax`'s y axis from 0 to a tenth above its highest value, so that a marker there is drawn whole, and puts
    its legend under the axes, where it covers no point, and under the x-axis label whatever the legend's height
    (progress.png, compare.png and the GPU evaluation's plots)."""
    ax.set_ylim(0, (ax.dataLim.y1 if ax.dataLim.y1 > 0 else 1.0) * 1.1)
    longest = max((len(label) for label in ax.get_legend_handles_labels()[1]), default=0)
    # two columns of labels longer than this are wider than the figure
    # under the x-axis label, by its distance from the axes in points (which tight_layout keeps), not over it
    from matplotlib.transforms import offset_copy

    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    below = (ax.get_window_extent(renderer).y0 - ax.xaxis.label.get_window_extent(renderer).y0) * 72 / fig.dpi + 4
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0),
              bbox_transform=offset_copy(ax.transAxes, fig=fig, y=-below, units="points"),
              ncol=2 if longest <= 42 else 1, fontsize="small")
