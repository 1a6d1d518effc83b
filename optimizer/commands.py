"""`mapperopt tune`: tune a mapper for a benchmark, showing progress, and keep the best."""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import json
import os
import random
import shlex
import shutil
import statistics
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack, nullcontext
from pathlib import Path
from typing import Any, Iterator, Sequence

import click
from click.core import ParameterSource

from mapperopt import toolchain
from mapperopt.benchmarks import protocol
from mapperopt.benchmarks.apps import larger_size, load_config, require_one_value
from mapperopt.benchmarks.commands import (BenchCommand, check_repeats, check_timeout, echo_mapper_prints,
                                          print_command_last, print_progress, print_whole,
                                          print_wrapped, size_options, status as say_status, wrap_whole, wraps)
from mapperopt.benchmarks.userapp import app_options
from mapperopt.dsl.parser import read_source
from mapperopt.errors import MapperoptError, closest
from mapperopt.files import read_json, write_atomically, writing_in, wrong_kind
from mapperopt.optimizer.base import (OPTIMIZERS, IterationRecord, default_optimizer, make_optimizer, optimizer_spec,
                                      require_packages)
from mapperopt.optimizer.llm import CONFIGURE, LLMConfig
from mapperopt.optimizer.loop import (MIN_TIMEOUT_S, TIMEOUT_FACTOR, BenchmarkEvaluator, baseline_failure,
                                      measure_baselines, tune as run_loop)
from mapperopt.optimizer.store import (BASELINES, KEPT_USE, TuneStore, damage_hint, folder_path, hold_program_folder,
                                      joined_names, kept_app_mapper, own_mapper_of, readable_result,
                                      rebuilt_iterations, recalibrated, reference_name, relative_run_dirs,
                                      set_up_results)
from mapperopt.optimizer.llm import ModelError
from mapperopt.benchmarks.protocol import SHORTEST_TIMEOUT_S
from mapperopt.options import FiniteFloatRange
from mapperopt.records import RESULT_FIELDS

FINAL_CANDIDATES = 3  # the top candidates re-measured together at the end
FINAL_ROUNDS = 5      # interleaved executions of each mapper in that final comparison
# Without --timeout (`BenchmarkEvaluator.evaluate`), as tune's and compare's --help say it (docs/tuning.md in full)
ADAPTIVE_TIMEOUT = f"{TIMEOUT_FACTOR:g}x the best's longest execution, {MIN_TIMEOUT_S:g} to the size's timeout"


def start_program(start: str, space: Any, seed: int) -> tuple[str, dict | None]:
    """(DSL text, point or None) of the start program: the default mapper's behaviour, a random point of the
    space, or a DSL file."""
    if start == "default":
        point = space.default_point()
    elif start == "random":
        point = space.random_point(random.Random(f"start:{seed}"))
    else:
        _require_start_path(start)
        return read_source(start), None
    return space.render(point), point


def _require_start_path(start: str) -> None:
    """Refuses a --start file that does not exist, naming the keyword it is close to (`defualt`), or a folder. A
    device or a pipe exists: `read_source` reads it up to its limit.

    Raises:
        MapperoptError: naming it.
    """
    if Path(start).is_dir():
        raise MapperoptError(f"--start {start} is a folder, not a DSL file", hint="use --start default, random or a "
                             "DSL file")
    if not Path(start).exists():
        keyword = closest(str(start), ["default", "random"], cutoff=0.7)
        raise MapperoptError(f"start program {start} not found",
                             hint=(f"did you mean --start {keyword}? " if keyword else "")
                             + "use --start default, random or a DSL file")


def require_start_file(start: str, check_with: Sequence[str]) -> None:
    """A `--start` that names a file (not `default` or `random`): it must exist, and a file that is not UTF-8 (E112)
    is said as `check` says it, and a syntax error as `check_start_file` says it, before any other output (its
    other errors need the application's and the machine's descriptions).

    Raises:
        MapperoptError: the file does not exist, or has a syntax error.
    """
    if start in ("default", "random"):
        return
    from mapperopt.dsl.commands import exit_on_syntax_error

    _require_start_path(start)
    with exit_on_syntax_error(start):
        text = read_source(start)
    _parse_start(start, text, check_with)


def check_options(bench: Any, size: str = "ci", app_args: Sequence[str] = ()) -> list[str]:
    """The options of `mapperopt check` that check a file for the runs of `bench` (a benchmark's name or a `UserApp`)
    at `size` with the flags `app_args` after `--`, as hints print them for pasting: `--bench NAME`, or the program's
    `--app` as the run was given it (and `--keep-app-mapper`); `--size` unless ci; `--` and the flags, last."""
    from mapperopt.benchmarks.userapp import UserApp, spec_words

    if isinstance(bench, UserApp):
        words = spec_words(bench)
        program = [*words[:2], *(["--keep-app-mapper"] if "--keep-app-mapper" in words else [])]
    else:
        program = ["--bench", str(bench)]
    return [*program, *(["--size", size] if size != "ci" else []), *(["--", *app_args] if app_args else [])]


def _parse_start(path: str, text: str, check_with: Sequence[str]) -> Any:
    """The start file `path` (its `text`) parsed (a `dsl.ast.Program`); `check_with`: `check_options` of the runs.

    Raises:
        MapperoptError: its syntax error, as `check` prints it (the first: parsing stops there).
    """
    from mapperopt.dsl.commands import syntax_error_summary
    from mapperopt.dsl.errors import DslSyntaxError
    from mapperopt.dsl.parser import parse

    try:
        return parse(text, path)
    except DslSyntaxError as exc:
        raise MapperoptError(f"the start program has an error; nothing was measured:\n{exc}"
                             f"{syntax_error_summary(path)}", hint=_fix_start(path, check_with)) from None


def _fix_start(path: str, check_with: Sequence[str]) -> str:
    """The hint for a start file with errors, naming the `check` command (`check_options`) that checks it alone."""
    return (f"fix the file and run the command again; `{toolchain.command('check', path, *check_with)}` "
            "checks it alone")


def check_start_file(path: str, text: str, check_with: Sequence[str], app: dict, machine: dict,
                     layouts: bool = True) -> None:
    """Checks the start file `path` (its `text`) as `mapperopt check` with the options `check_with`
    (`check_options`) does, against the run's application and machine (their JSON descriptions), before anything is
    measured: a file with errors would only fail its iteration (the start of every run, in compare) after the
    references were measured. Prints its warnings and notes on stderr, as `check` renders them.
    Without `layouts` (the program has no verification: the harness refuses every Layout statement) a Layout
    statement is refused too.

    Raises:
        MapperoptError: the file has errors: every diagnostic with its file:line:col, source line and caret, and the
            summary line, as `check` prints them (a syntax error: the first, where parsing stops); or its first
            Layout statement, by file:line:col, when layouts are refused.
    """
    from mapperopt.benchmarks.userapp import unsearched_layouts
    from mapperopt.descriptions import AppDescription, MachineDescription
    from mapperopt.dsl import ast as A
    from mapperopt.dsl.checker import check
    from mapperopt.dsl.commands import summary_line
    from mapperopt.dsl.errors import render_all

    program = _parse_start(path, text, check_with)
    # W315's hint names the program and flags to check it with
    described = dataclasses.replace(AppDescription.from_json(app), given_as=tuple(check_with))
    diags = check(program, described, MachineDescription.from_json(machine))
    if any(d.is_error for d in diags):
        raise MapperoptError(f"the start program has errors; nothing was measured:\n{render_all(diags, text)}\n"
                             f"{summary_line(path, diags)}", hint=_fix_start(path, check_with))
    # Said once here, as `run --mapper` says them: otherwise only the iterations' check.txt files hold them (W326:
    # every candidate made from a start file that names no task beside the program's kept mapper is that mapper).
    if diags:
        click.echo(render_all(diags, text), err=True)
    layout = next((s for s in program.statements if isinstance(s, A.LayoutStmt)), None)
    if not layouts and layout is not None:
        raise MapperoptError(f"{layout.loc}: the start program has a Layout statement, which is refused here: "
                             f"{unsearched_layouts(None, how=False)}; nothing was measured",
                             hint="remove its Layout statements, or give the application a verification (verify: in "
                                  "its application file, or --verify-pattern, --verify-cmd, --reference)")


def default_cpus(size: Any, gpus: int, bench: Any) -> int:
    """CPU processors for a tuning run without --cpus. A user's program gets its size's own count (its application
    file fixes the machine it is tuned for, as for `run`); a benchmark on CPUs gets every core this process may use,
    less the utility processors'; on GPUs, the size's count."""
    from mapperopt.benchmarks.userapp import UserApp

    if gpus or isinstance(bench, UserApp):
        return size.cpus
    return max(1, len(os.sched_getaffinity(0)) - size.util)


def _request(bench: str, opts: dict) -> dict:
    """What the user asked for, as it identifies a tuning run: the same command continues its latest unfinished
    folder (the iteration count aside). A user's program counts with its arguments, metric and verification
    (`userapp.identity`): with other ones it is another tune."""
    from mapperopt.benchmarks.userapp import UserApp, identity

    start = opts["start"]
    if start not in ("default", "random"):
        start = {"file": str(start), "sha256": hashlib.sha256(Path(start).read_bytes()).hexdigest()[:16]}
    keys = ("size", "cpus", "gpus", "csize", "fsize", "zsize", "repeats", "max_repeats", "min_time_s", "timeout_s",
            "optimizer", "seed", "baseline", "feedback_level")
    request = {"bench": str(bench), **{k: opts[k] for k in keys}, "start": start, "app_args": list(opts["app_args"]),
               "llm": opts["llm"].public() if OPTIMIZERS[opts["optimizer"]].needs_model else None}
    if isinstance(bench, UserApp):  # benchmarks' requests stay as their folders recorded them
        request["program"] = identity(bench)
    return request


def _searched(request: dict) -> dict:
    """`request` without the model's transport settings (timeout, retries, cap): they do not change the search, so a
    run stopped by a slow model is continued by the same command with a longer --llm-timeout."""
    llm = request.get("llm")
    if not isinstance(llm, dict):
        return request
    return {**request, "llm": {k: v for k, v in llm.items() if k not in ("timeout_s", "max_retries", "max_model_s")}}


def _set_up_tunings(runs_dir: Path, bench: Any, note_unreadable: bool = False) -> Iterator[tuple[Path, TuneStore]]:
    """The tuning folders of `bench` under `runs_dir` whose set-up finished (`_set_up`), newest first, each with its
    store. One that cannot be read is skipped, with a note on stderr where `note_unreadable` (the user may have meant
    the command to continue it)."""
    for root in sorted((Path(runs_dir) / str(bench)).glob("tune-*"), reverse=True):
        try:
            store = TuneStore.open(root)
        except MapperoptError as exc:
            if note_unreadable:
                click.echo(f"Note: {exc.message}: skipped.", err=True)
            continue
        if _set_up(store):
            yield root, store


def _latest(runs_dir: Path, bench: Any, request: dict, iters: int | None) -> tuple[Path | None, Path | None]:
    """The latest set-up tuning folders of `bench` under `runs_dir` made by the same request, as (unfinished, finished):
    (folder, None) for the latest one not finished (fewer iterations than asked for, or no final comparison yet),
    even when a later one finished (two runs of the command at once, one of them killed), unless that one was made
    with another build of a user's program than the later one (a run stopped by a rebuild, after which the new
    build's run finished); else (None, the latest finished one); (None, None) when there is none. A folder that
    cannot be read is skipped with a note."""
    finished = None
    for root, store in _set_up_tunings(runs_dir, bench, note_unreadable=True):
        if _searched(store.settings.get("request") or {}) != _searched(request):
            continue  # another request
        if len(store.records) < (iters or store.settings["iters"]) or not (root / "summary.json").exists():
            if finished is not None and store.settings.get("executable_sha256") not in (
                    None, TuneStore.open(finished).settings.get("executable_sha256")):
                continue
            return root, None
        finished = finished or root
    return None, finished


def _unfinished_tunes(runs_dir: Path, bench: Any, iters: int | None) -> Iterator[tuple[Path, dict]]:
    """The set-up tuning folders of `bench` under `runs_dir` that `tune --resume DIR --iters ITERS` would measure
    more in (unfinished, or finished with fewer iterations: `_tuning_state` words which), newest first, with the
    request each was made by (settings.json's `request`). Left out: unreadable ones (`_latest` says so) and those
    made with another build of the user's program, whose --resume is refused (`require_same_build`)."""
    from mapperopt.benchmarks.userapp import UserApp, build_change

    for root, store in _set_up_tunings(runs_dir, bench):
        if len(store.records) >= (iters or store.settings["iters"]) and (root / "summary.json").exists():
            continue
        if isinstance(bench, UserApp) and build_change(bench, store.settings) is not None:
            continue  # its --resume is refused: another build
        yield root, store.settings.get("request") or {}


def _tuning_state(root: Path, what: str = "") -> str:
    """How a note names the tuning folder `root` (of `what`, where given) that `_unfinished_tunes` found: "an
    unfinished tuning", or, where its own iterations and final comparison ended, "a finished tuning (N iterations; a
    larger --iters extends it)"."""
    of = f" of {what}" if what else ""
    try:
        store = TuneStore.open(root)
    except MapperoptError:
        return f"an unfinished tuning{of}"
    done = len(store.records)
    if done >= store.settings["iters"] and (root / "summary.json").exists():
        return f"a finished tuning{of} ({done} iteration{'s' * (done != 1)}; a larger --iters extends it)"
    return f"an unfinished tuning{of}"


def _other_unfinished(runs_dir: Path, bench: Any, request: dict, iters: int | None) -> tuple[Path, list[str]] | None:
    """The latest unfinished tuning folder of the user's program `bench` under `runs_dir` that the same command made
    before the program's settings changed (its arguments, metric, verification...: an edit of the application
    file), with what differs, one line each; None when there is none. Such a folder is another tune, which the
    command leaves alone."""
    from mapperopt.benchmarks.userapp import UserApp, identity_differences

    if not isinstance(bench, UserApp):
        return None
    for root, recorded in _unfinished_tunes(runs_dir, bench, iters):
        if (isinstance(recorded.get("program"), dict) and recorded["program"] != request["program"]
                and _searched({**recorded, "program": None}) == _searched({**request, "program": None})):
            return root, identity_differences(recorded["program"], request["program"], "here")
    return None


def _other_build(runs_dir: Path, bench: Any, request: dict) -> tuple[Path, str] | None:
    """The latest set-up tuning folder of the user's program `bench` under `runs_dir` that this command (`request`)
    made with another executable (the application file repointed) or another build of it (a rebuild), with what
    differs ("build/app (SHA-256 2fe2e28d04d9...) there, other/app (ee5ec9a92fcf...) here"); None where there is
    none, or where the latest folder of this command is of the executable as it is now. Such a folder is never
    continued or extended by this command: its measurements would be mixed with the new build's."""
    from mapperopt.benchmarks.userapp import UserApp, build_change, file_digest

    if not isinstance(bench, UserApp):
        return None
    here = request["program"]
    for root, store in _set_up_tunings(runs_dir, bench):
        recorded = store.settings.get("request") or {}
        program = recorded.get("program")
        if not isinstance(program, dict) or {**program, "executable": None} != {**here, "executable": None} or \
                _searched({**recorded, "program": None}) != _searched({**request, "program": None}):
            continue
        change = build_change(bench, store.settings)
        if program["executable"] == here["executable"] and change is None:
            return None
        if change is not None and change[0] != bench.exe:  # a program its script runs was rebuilt
            path, was, now = change
            return root, f"{path} (SHA-256 {was[:12]}... there, {'no file' if now is None else now[:12] + '...'} here)"
        try:
            now = f"{file_digest(bench.exe)[:12]}..."
        except OSError:
            now = "unreadable"
        was = store.settings.get("executable_sha256")
        return root, (f"{program['executable']} ({f'SHA-256 {was[:12]}...' if was else 'its SHA-256 not recorded'}) "
                      f"there, {bench.exe} ({now}) here")
    return None


def _other_endpoint(runs_dir: Path, bench: Any, request: dict, iters: int | None) -> list[tuple[Path, dict]]:
    """The unfinished tuning folders of `bench` under `runs_dir` that the same command (`request`) made with another
    language model or endpoint (a local server moved to another port, say), which it does not continue, newest
    first, each with the model settings it recorded."""
    if not isinstance(request.get("llm"), dict):
        return []
    return [(root, recorded["llm"]) for root, recorded in _unfinished_tunes(runs_dir, bench, iters)
            if isinstance(recorded.get("llm"), dict) and _searched(recorded) != _searched(request)
            and _searched({**recorded, "llm": None}) == _searched({**request, "llm": None})]


def _other_options(runs_dir: Path, bench: Any, request: dict, iters: int | None) -> list[tuple[Path, list[str]]]:
    """The unfinished tuning folders of `bench` under `runs_dir` that this command (`request`) made with other
    options (--repeats, --size, ...), which it does not continue, newest first, each with what differs ("--repeats
    1 there, 2 here"). Those another note names are left out: made with other program settings, another language
    model, or another version of the --start file (`_other_unfinished`, `_other_endpoint`, `_unfinished_from`)."""
    flags = {p.name: p.opts[0] for p in click.get_current_context().command.params} | {"app_args": "arguments after --"}

    def shown(value: Any) -> str:
        return "not given" if value is None else str(value.get("file") if isinstance(value, dict) else value)

    found = []
    for root, recorded in _unfinished_tunes(runs_dir, bench, iters):
        start, here = recorded.get("start"), request["start"]
        if recorded.get("program") != request.get("program") or (_searched(recorded).get("llm")
                                                                  != _searched(request).get("llm")) or (
                isinstance(start, dict) and isinstance(here, dict) and start["file"] == here["file"]):
            continue
        words = [f"{flags[k]} {shown(recorded[k])} there, {shown(request[k])} here" for k in flags
                 if k in recorded and k in request and shown(recorded[k]) != shown(request[k])]
        if words:
            found.append((root, words))
    return found


def _unfinished_from(runs_dir: Path, bench: Any, request: dict, start: str, iters: int | None) -> Path | None:
    """The latest unfinished tuning folder of `bench` under `runs_dir` that the same command (`request`, whose
    `start` is not compared) made from the --start file `start` as it was then: one the command does not continue
    because that file was edited since (or removed); None when there is none."""
    for root, recorded in _unfinished_tunes(runs_dir, bench, iters):
        made_from = recorded.get("start")
        if (isinstance(made_from, dict) and made_from.get("file") == start and made_from != request["start"]
                and _searched({**recorded, "start": None}) == _searched({**request, "start": None})):
            return root
    return None


def _how_to_continue(root: Path, iters: int | None, bench: Any) -> str:
    """How the note on the unfinished tuning folder `root` of another version of the user's program `bench` leads
    to `tune --resume root`: that command reads the program as it is now, so where its settings (an application
    file's arguments, say) changed since, they must first be given back."""
    try:
        _require_same_program(root, TuneStore.open(root).settings, _recorded_program(root), iters, True)
    except MapperoptError:
        where = getattr(bench, "path", None) or "its application file"
        return (f"To continue that one, first give {where} back the settings it was made with (those 'in the "
                "folder' above), then")
    return "To continue that one with its own settings"


def _recorded_program(root: Path) -> Any:
    """The program the tuning folder `root` tunes, from its settings: a benchmark's name, or the user's program
    read again (`userapp.app_from_identity`).

    Raises:
        MapperoptError: `root` is not a tuning folder, its program's file or executable is gone, or it is a user's
            program the folder does not describe (made by an earlier mapperopt).
    """
    from mapperopt.benchmarks.apps import known_benchmarks
    from mapperopt.benchmarks.userapp import app_from_identity

    settings = TuneStore.open(root).settings
    recorded = (settings.get("request") or {}).get("program")
    if recorded is not None:
        return app_from_identity(recorded)
    if settings.get("app") not in known_benchmarks() or "app_file" in settings:
        raise _undescribed(root)
    return settings["app"]


def _refuse_comparison(root: Path, iters: int | None) -> None:
    """Refuses `tune --resume` of a comparison's folder or of one of its tuning runs: tuned on its own, a run would
    no longer match its comparison's table, which `mapperopt compare` extends.

    Raises:
        MapperoptError: which comparison it is, and that `mapperopt compare` extends it.
    """
    from mapperopt.optimizer.compare import SCHEMA

    path = root / "settings.json"
    # a comparison's settings.json (fields of other types) is named as such: TuneStore.open checks a run's fields
    settings = read_json(path, hint=damage_hint(root), fields={"schema?": str, "compare?": str}) \
        if path.is_file() else {}

    def extend(comparison: Any) -> str:
        command = toolchain.command("compare", "--resume", str(comparison), *(["--iters", str(iters)] if iters else []))
        return f"extend it with `{command}`" + ("" if iters else " and a larger --iters")

    if settings.get("schema") == SCHEMA:
        raise MapperoptError(f"{root} is a comparison (made by `mapperopt compare`), not a tuning run",
                             hint=extend(root))
    if "compare" in settings:  # a run of a comparison names its folder, relative to its own
        comparison = os.path.normpath(root / settings["compare"])
        raise MapperoptError(f"{root} is the tuning run {root.name} of the comparison {comparison}",
                             hint=f"{extend(comparison)} (tuned on its own, the run would no longer match the "
                                  "comparison's table)")


def _undescribed(root: Path) -> MapperoptError:
    """The error for a folder of a user's program made before folders recorded its `userapp.identity`."""
    return MapperoptError(f"{root} does not record the arguments, metric and verification of its program (it was "
                          "made by an earlier mapperopt), so it cannot be continued",
                          hint="start a new run: the tune command without --resume")


def _require_same_program(root: Path, settings: dict, bench: Any, iters: int | None, plain: bool) -> None:
    """Refuses to continue the tuning folder `root` (its `settings`) with another program than its own: another
    benchmark, or a user's program with other arguments, metric or verification (`userapp.identity`), which would
    mix two tunes in one journal. `plain`: no program was named (`--resume DIR` alone), `bench` was read again
    from the folder's record.

    Raises:
        MapperoptError: what differs, one line each, and how to continue the folder with its own settings.
    """
    from mapperopt.benchmarks.userapp import UserApp, identity, identity_differences

    again = toolchain.command("tune", "--resume", str(root), *(["--iters", str(iters)] if iters else []))
    hint = (f"to continue it with its own program and settings: {again}; without --resume, this command tunes in "
            "a folder of its own")
    if settings.get("app") != str(bench):
        raise MapperoptError(f"{root} tunes {settings.get('app')}, not {bench}", hint=hint)
    if not isinstance(bench, UserApp):
        return
    recorded = (settings.get("request") or {}).get("program")
    if recorded is None:
        raise _undescribed(root)
    differs = identity_differences(recorded, identity(bench), "now" if plain else "here")
    if differs:
        what = "its program as it reads now" if plain else "this command"
        lines = "\n".join(f"  - {line}" for line in differs)
        raise MapperoptError(f"{root} tunes {bench} with other settings than {what}:\n{lines}",
                             hint="its application file or program changed since: start a new run (the tune "
                                  "command without --resume)" if plain else hint)


def require_known_size(path: Path, size: Any, bench: Any, hint: str) -> None:
    """Refuses the settings.json `path` of a tuning or comparison folder of the benchmark `bench` whose `size` is
    none of the benchmark's (an edit; a benchmark's sizes are fixed, a user's application file may change). `hint`:
    how to restore the folder (`damage_hint`).

    Raises:
        MapperoptError: naming the file, the field and the sizes there are, not --size (a resumed run ignores it).
    """
    from mapperopt.benchmarks.userapp import UserApp

    sizes = [] if isinstance(bench, UserApp) else list(load_config(bench).sizes)
    if sizes and size not in sizes:
        raise MapperoptError(f"{path} is damaged: its field 'size' is {size!r}, not one of {bench}'s sizes: "
                             f"{', '.join(sizes)}", hint=hint)


def require_same_build(root: Path, settings: dict, bench: Any, new: str | None = None) -> None:
    """Refuses to continue the tuning or comparison folder `root` (its `settings`) of a user's program whose
    executable's contents (or those of a program its script runs, `build_record`) changed since the folder recorded
    them (a rebuild): its iterations, baselines and cached
    results were measured with the old build, and they would be mixed with the new one's. Folders made before the
    contents were recorded are not checked. `new`: the command that measures in a folder of its own (for `--resume
    DIR`, which ignores --new); None: this command with --new.

    Raises:
        MapperoptError: both digests, and that --new tunes the new build in a folder of its own.
    """
    from mapperopt.benchmarks.userapp import UserApp, build_change

    if not isinstance(bench, UserApp) or (change := build_change(bench, settings)) is None:
        return
    path, recorded, now = change
    afresh = f"start a new run: `{new}`" if new else "give the command --new"
    now_text = "no file now" if now is None else f"{now[:12]}... now"
    raise MapperoptError(f"{root} was made with another build of {path}: its contents changed since (SHA-256 "
                         f"{recorded[:12]}... in the folder, {now_text}), and its measurements would be mixed with "
                         "the new build's",
                         hint=f"to measure the new build, {afresh} (a folder of its own; this one stays as it "
                              "is); to continue this folder, restore the executable it was made with")


class BuildChanged(MapperoptError):
    """A user's program's build changed while a tune or comparison ran (`changed_build`): `path`, the file that
    changed; `digests`, its SHA-256 recorded and now; `measured`, which iterations of the run folder measured which
    build."""

    def __init__(self, message: str, hint: str | None = None, path: str = "", digests: str = "",
                 measured: str = ""):
        super().__init__(message, hint)
        self.path, self.digests, self.measured = path, digests, measured

    def __reduce__(self) -> tuple:  # from a comparison's worker process
        return BuildChanged, (self.message, self.hint, self.path, self.digests, self.measured)


def _span(first: int, last: int) -> str:
    return f"iteration {first}" if first == last else f"iterations {first}-{last}"


def changed_build(bench: Any, settings: dict, root: Path, checked: list[int], done: int, new_command: str,
                  what: str = "tune", measured: str | None = None, same: str | None = None) -> BuildChanged | None:
    """The error that stops a tune (or a comparison's run, `what`) of the tuning folder `root` (its `settings`)
    whose program's build changed while it ran, or None where it is the folder's still (or the folder recorded
    none): `checked`, [the iteration before whose start it was last the folder's build] or [] (only when the command
    started); `done`, the iterations journaled. Which iterations measured which build, that the folder keeps them,
    and how to go on; `measured`, what is said of the measurements instead (a comparison's final measurement);
    `same`, the command that continues the run where it is not the same command (one given --new)."""
    from mapperopt.benchmarks.userapp import UserApp, build_change

    if not isinstance(bench, UserApp) or (change := build_change(bench, settings)) is None:
        return None
    path, recorded, now = change
    if measured is None and checked and checked[0] <= done:
        from mapperopt.optimizer.store import note_rebuilt

        try:
            note_rebuilt(root, checked[0], path)  # marked as not comparable where the run goes on
        except OSError:  # a folder that cannot be written to: the stop is said all the same
            pass
        measured = ((f"{_span(1, checked[0] - 1)} measured the build {root} was made with; " if checked[0] > 1
                     else "") + f"iteration {checked[0]} ran while it was replaced and may have measured either build "
                    f"(its run folder: {root / f'iter-{checked[0]:03d}'})")
    elif measured is None and done:
        measured = f"{_span(1, done)} measured the build {root} was made with"
    elif measured is None:
        measured = ("no iteration ran; the measurements of the set-up (the baselines) may have measured either "
                    "build") if what == "tune" else "no iteration of it ran"
    changed = "is gone" if now is None else "changed"
    digests = f"SHA-256 {recorded[:12]}... when the folder was made, " + (
        "no file now" if now is None else f"{now[:12]}... now")
    return BuildChanged(
        f"{path} {changed} while this {what} ran ({digests}): {measured}; the {what} stopped before measuring more "
        f"(nothing measured is lost: {root} keeps its {done} iteration{'s' * (done != 1)})",
        hint=f"to measure the new build, start a new run: `{new_command}`; to finish this {what}, put back the build "
             f"it was made with and {continued_by(same)}",
        path=str(path), digests=digests, measured=measured)


def continued_by(same: str | None) -> str:
    """How a tune or comparison stopped by a rebuild is continued: by the same command, or by `same` where that
    would start another one (it was given --new)."""
    return f"give `{same}`, which continues it" if same else "give the same command, which continues it"


def stale_warning(bench: Any, i: int, unmapped: str, root: Path) -> str:
    """What a tune of the user's program `bench` (its folder `root`) says when iteration `i`'s run did not map a task
    that the program's discovered description has (`unmapped`, `stale_description`'s words): the program changed
    since it was discovered. A rebuild behind a wrapper script that names no program mapperopt checks goes unseen
    (and the iterations may mix two builds); otherwise the description was discovered before a rebuild the tune
    started after. The command that discovers it again names a file that exists (the folder's best.dsl, or the
    iteration's mapper)."""
    from mapperopt.benchmarks.userapp import is_script, spec_words, wrapped_programs

    unseen = is_script(bench.exe) and not wrapped_programs(bench)
    why = ("a rebuild behind a wrapper script that names no program mapperopt can check is not noticed, and this "
           "run's iterations may mix two builds" if unseen else
           "its description was discovered from an earlier build")
    mapper = next((p for p in (root / "best.dsl", root / f"iter-{i:03d}" / "mapper.dsl") if p.exists()),
                  root / "best.dsl")
    again = toolchain.command("check", mapper, *spec_words(bench), "--rediscover")
    return (f"in iteration {i}, {unmapped}, a task that the program's description (its discovery) has: the program "
            f"changed since it was discovered ({why}). Discover it again (`{again}`) and tune it with --new.")


def _rounds_span(first: int, last: int) -> str:
    return f"round {first}" if first == last else f"rounds {first}-{last}"


def final_round_check(bench: Any, settings: dict, root: Path, runs: Path, done: Callable[[], int], new_command: str,
                      what: str = "tune", label: str = "the final comparison", same: str | None = None
                      ) -> Callable[[int], None] | None:
    """What `protocol.measure_together` calls after each round of a final measurement (`after_round`) of a user's
    program, its run folders in `runs`: raises `changed_build`'s error where the build is no longer the folder's
    (`root`, its `settings`), saying which rounds measured which build, so that no score mixes two builds. `done`:
    the iterations journaled. None for a built-in benchmark (nothing to check)."""
    from mapperopt.benchmarks.userapp import UserApp

    if not isinstance(bench, UserApp):
        return None

    def after_round(r: int) -> None:
        n = done()
        earlier = f"{_span(1, n)} measured the build {root} was made with" if n else ""
        if r > 1:
            earlier += (", and " if earlier else "") + f"{_rounds_span(1, r - 1)} of {label} measured " + (
                "it too" if n else f"the build {root} was made with")
        measured = ((earlier + "; ") if earlier else "") + (
            f"round {r} of {label} ran while it was replaced and may have measured either build (its run folders: "
            f"{runs}): what {label} measured is kept but used by no score or verdict")
        if (stop := changed_build(bench, settings, root, [], n, new_command, what, measured=measured,
                                  same=same)) is not None:
            raise stop

    return after_round


def require_same_machine(root: Path, settings: dict, processors: dict[str, int],
                         memory: dict[str, int | None], app: Any = None, new: str | None = None) -> None:
    """Refuses to continue the tuning or comparison folder `root` (its `settings`) whose machine, as probed when it
    was made, differs from what this command's runs get: `processors` per node by kind ("CPU", "GPU", "UTIL"), and
    `memory` in MiB by its flag's key ("csize", "fsize", "zsize"; None: Legion's default, not compared). The
    machine is not part of a folder's identity, so the same command finds a folder made before its program's size
    changed (`cpus:` in its application file; `--app './prog -ll:cpu 2'` ran on 1 CPU before mapperopt read that
    flag), and would mix two machines' measurements. Only what the folder's machine lists is compared. `app`: the
    user's program, whose application file's size (`settings["size"]`) is named where it gives what differs.
    `new`: the command that measures in a folder of its own (for `--resume DIR`, which ignores --new); None: this
    command with --new.

    Raises:
        MapperoptError: the recorded and the current counts and sizes, and that --new measures in a folder of its
            own.
    """
    from mapperopt.descriptions import MachineDescription

    if settings.get("machine") is None:
        return
    machine = MachineDescription.from_json(settings["machine"])
    recorded = dict(machine.processors)
    procs = [k for k, n in processors.items() if k in recorded and recorded[k][0] != n]
    capacity = {key: mems[0].capacity >> 20 for key, kind in (("csize", "SYSMEM"), ("fsize", "FBMEM"),
                                                              ("zsize", "ZCMEM"))
                if (mems := machine.memories_of(kind, 0))}
    mems = [k for k, mib in memory.items() if mib is not None and k in capacity and capacity[k] != mib]
    if not procs and not mems:
        return

    def machine_text(counts: dict, sizes: dict) -> str:
        parts = [" and ".join(f"{counts[k]} {'utility' if k == 'UTIL' else k}" for k in procs)
                 + f" processor{'s' * (counts[procs[-1]] != 1)} per node"] if procs else []
        kinds = {"csize": "SYSMEM", "fsize": "FBMEM", "zsize": "ZCMEM"}
        return ", ".join(parts + [f"{kinds[k]} of {sizes[k]} MiB" for k in mems])

    was = {k: c[0] for k, c in recorded.items()}
    afresh = f"start a new run: `{new}`" if new else "give the command --new"
    edit = _size_edit(app, settings.get("size"), procs, mems, was, capacity, processors, memory)
    if edit:
        where, before, after = edit
        raise MapperoptError(f"{root} was measured with {machine_text(was, capacity)}, and this command runs with "
                             f"{machine_text(processors, memory)}: {where} changed since ({before} in the folder; "
                             f"{after} now), and the folder's measurements would be mixed with the new size's",
                             hint=f"to measure the new size, {afresh} (a folder of its own; this one "
                                  f"stays as it is); to continue this folder, give {where} back {before}")
    raise MapperoptError(f"{root} was measured with {machine_text(was, capacity)}"
                         f", and this command runs with {machine_text(processors, memory)}: the folder's measurements "
                         "would be mixed with another machine's",
                         hint=f"to measure on this machine, {afresh} (a folder of its own; this one "
                              "stays as it is); to continue this folder, give the program the machine it was made "
                              "with")


def _size_edit(app: Any, size_name: str | None, procs: list[str], mems: list[str], was: dict, capacity: dict,
               processors: dict, memory: dict) -> tuple[str, str, str] | None:
    """(the size `size_name` of the application file of the user's program `app`, its keys as the folder had them,
    as they are now) where that size's keys (`cpus: 2`) give each of the processor counts `procs` and memory sizes
    `mems` that differ; else None (a --cpus option or a -ll flag gave one)."""
    path = getattr(app, "path", None)
    if not path or size_name is None:
        return None
    try:
        size = load_config(app).size(size_name)
    except MapperoptError:  # a size gone from the file: the generic words
        return None
    keys = [({"CPU": "cpus", "GPU": "gpus", "UTIL": "util"}[k], was[k], processors[k]) for k in procs]
    keys += [(k, capacity[k], memory[k]) for k in mems]
    if any(getattr(size, key, None) != now for key, _, now in keys):
        return None
    return (f"size {size_name} in {path}",
            ", ".join(f"{key}: {old}" for key, old, _ in keys), ", ".join(f"{key}: {now}" for key, _, now in keys))


def memory_now(size: Any, memory: dict, app_args) -> dict[str, int | None]:
    """The memory sizes (MiB by "csize", "fsize", "zsize"; None: Legion's default) a run gets: the last such flag
    after `--`, else the option's (`memory`), else the size's."""
    from mapperopt.benchmarks.apps import RESOURCE_FLAGS

    args = [str(a) for a in app_args]
    given = {key: int(v) for f, v in zip(args, args[1:]) for key in ("csize", "fsize", "zsize")
             if f == RESOURCE_FLAGS[key] and v.isdigit()}
    return {key: given.get(key, memory.get(key, getattr(size, key))) for key in ("csize", "fsize", "zsize")}


def app_machine_now(bench: Any, settings: dict) -> tuple[dict[str, int], dict[str, int | None]]:
    """The processors per node and memory sizes (`require_same_machine`'s) that the runs of the tuning folder with
    `settings` get now, as `_new_run` counts them from its request: its program's size may have changed since."""
    from mapperopt.benchmarks.apps import processor_counts

    size, request = load_config(bench).size(settings["size"]), settings.get("request") or {}
    app_args = [str(a) for a in settings.get("app_args") or ()]
    gpus = size.gpus if request.get("gpus") is None else request["gpus"]
    cpus = default_cpus(size, gpus, bench) if request.get("cpus") is None else request["cpus"]
    cpus, gpus = processor_counts(cpus, gpus, app_args)
    return ({"CPU": cpus, "GPU": gpus, "UTIL": protocol.utility_processors(size.util, app_args)},
            memory_now(size, settings.get("memory") or {}, app_args))


# `tune`'s parameters that a resumed run takes from its folder's settings instead (`--resume DIR`).
_FOLDER_SETTINGS = ("optimizer", "size", "cpus", "gpus", "csize", "fsize", "zsize", "repeats", "max_repeats",
                    "min_time_s", "timeout_s", "seed", "start", "baseline", "feedback_level", "new", "runs_dir")


def _ignored_on_resume(request: dict, app_args: tuple) -> list[str]:
    """The options given to `tune --resume DIR` (and a benchmark's `app_args`) with other values than the folder
    was made with (its `request`), which its own settings override: named as on the command line, in the order of
    `tune --help`."""
    ctx = click.get_current_context()

    def recorded(name: str) -> Any:
        value = request.get(name, ctx)  # `ctx`: not recorded (an older folder), never equal to a value
        return value.get("file") if name == "start" and isinstance(value, dict) else value

    given = [p.opts[0] for p in ctx.command.params if p.name in _FOLDER_SETTINGS
             and ctx.get_parameter_source(p.name) not in (ParameterSource.DEFAULT, None)
             and ctx.params[p.name] != recorded(p.name)]
    return given + ["the arguments after --"] * (bool(app_args) and list(app_args) != request.get("app_args"))


def option_words(*options: tuple[str, Any, Any]) -> list[str]:
    """`(option, value, default)` triples as words of a command line to print: each option whose value is given and
    other than its default, with that value."""
    return [w for option, value, default in options if value is not None and value != default
            for w in (option, str(value))]


def _afresh(bench: Any, found: Path, settings: dict, iters: int | None, final_rounds: int) -> str:
    """The tune command that starts a new folder with the settings of the folder `found` (its request: what its
    command gave), next to it, for `--resume DIR`, which ignores --new; with this command's --iters (else the
    folder's) and --final-rounds."""
    from mapperopt.benchmarks.userapp import UserApp, spec_words

    request = settings.get("request") or {}
    start = request.get("start")
    start = start.get("file") if isinstance(start, dict) else start
    size = settings["size"]
    extra = settings.get("app_args") or request.get("app_args") or []
    options = option_words(("--size", size, "ci"), ("--optimizer", settings.get("optimizer"), None),
                           *((f"--{k}", request.get(k), None) for k in ("cpus", "gpus", "csize", "fsize", "zsize")),
                           ("--repeats", request.get("repeats"), protocol.MIN_REPEATS),
                           ("--max-repeats", request.get("max_repeats"), protocol.MAX_REPEATS),
                           ("--min-time", request.get("min_time_s"), None),
                           ("--timeout", request.get("timeout_s"), None), ("--seed", request.get("seed"), 0),
                           ("--start", start, "default"),
                           ("--baseline", request.get("baseline"), "default" if isinstance(bench, UserApp) else "both"),
                           ("--feedback-level", request.get("feedback_level"), "suggest"),
                           ("--final-rounds", final_rounds, FINAL_ROUNDS),
                           ("--runs-dir", str(found.parent.parent), "runs"))
    return toolchain.command("tune", *(spec_words(bench) if isinstance(bench, UserApp) else [str(bench)]), *options,
                             "--new", "--iters", str(iters or settings["iters"]), *(["--", *extra] if extra else []))


def _set_up(store: TuneStore) -> bool:
    """Whether the folder's set-up finished (`_new_run` records the calibrated count, None where there is none, as
    its last step; folders made before that record it only by their iterations), so that it can be continued."""
    return "iterations" in store.settings or bool(store.records)


def _new_run(bench: str, opts: dict, request: dict,
             announce: Callable[[str], AbstractContextManager] = lambda text: nullcontext(),
             beat: Callable[[Path], AbstractContextManager] = lambda root: nullcontext()
             ) -> tuple[TuneStore, dict]:
    """Describes the application and the machine, builds and checks the start program, creates the tuning folder
    (locked), measures the baselines and fixes the calibrated iteration count. Returns the store and its settings.
    `announce(text)`: a context (a status line) around each of the two steps, so that the second, measuring, is
    said only once the start program passed its check. `beat(root)`: a context around the measurements in the
    tuning folder `root` (compare's `Heartbeat`, so that a slow program's baselines are not minutes of silence)."""
    from mapperopt.benchmarks import describe_app, load_config, run_benchmark
    from mapperopt.benchmarks.apps import processor_counts
    from mapperopt.descriptions import MachineDescription
    from mapperopt.optimizer.space import SearchSpace
    from mapperopt.probe import run_probe_json

    from mapperopt.benchmarks.harness import new_folder, remove_made
    from mapperopt.benchmarks.userapp import UserApp, build_record

    # A folder made and removed, before the program's runs that describe it and measure the baselines, as compare
    # makes its own first: a runs folder that cannot be written is said at once, and no empty folder is left.
    remove_made(new_folder(TuneStore.new_root(opts["runs_dir"], bench)))
    size = load_config(bench).size(opts["size"])
    gpus = size.gpus if opts["gpus"] is None else opts["gpus"]
    cpus = default_cpus(size, gpus, bench) if opts["cpus"] is None else opts["cpus"]
    app_args = tuple(map(str, opts["app_args"]))
    cpus, gpus = processor_counts(cpus, gpus, app_args)  # `-- -ll:cpu 3`: what the runs get, recorded and printed
    memory = {k: opts[k] for k in ("csize", "fsize", "zsize") if opts[k] is not None}
    # A layout can make a program compute wrong numbers silently: only search layouts when something checks them.
    layouts = not isinstance(bench, UserApp) or bench.verify.checks_output
    with announce(f"Describing {bench} and the machine"
                  + (", checking the start program..." if opts["start"] not in ("default", "random") else "...")):
        app = describe_app(bench, opts["size"], cpus, gpus, app_args, opts["timeout_s"],  # `-- -p 8` too
                           memory=memory)  # `--csize 2048`: discovered with the runs' memory
        # The machine the runs get: `-- -ll:cpu 4` changes it, as it changes the runs' command lines.
        machine = MachineDescription.from_json(run_probe_json(bench, opts["size"], app_args, cpus, gpus,
                                                              memory)).to_json()
        space = SearchSpace(app, machine, layouts=layouts)
        start_dsl, start_point = start_program(opts["start"], space, opts["seed"])
        if start_point is None:  # a start file
            check_start_file(str(opts["start"]), start_dsl, check_options(bench, opts["size"], app_args), app,
                             machine, layouts)
    min_time = opts["min_time_s"] if opts["min_time_s"] is not None else max(size.min_time_s, protocol.MIN_TIME_S)
    settings = {
        "size": opts["size"], "cpus": cpus, "gpus": gpus, "memory": memory, "repeats": opts["repeats"],
        "max_repeats": max(opts["repeats"], opts["max_repeats"]), "min_time_s": min_time,
        "timeout_s": opts["timeout_s"], "optimizer": opts["optimizer"], "seed": opts["seed"], "iters": opts["iters"],
        "start": str(opts["start"]), "start_dsl": start_dsl, "start_point": start_point,
        "feedback_level": opts["feedback_level"], "baseline": opts["baseline"],
        "llm": opts["llm"].public() if OPTIMIZERS[opts["optimizer"]].needs_model else None,
        "app_args": list(opts["app_args"]), "app_description": app, "machine": machine, "request": request,
        "search_layouts": layouts,
    }
    if isinstance(bench, UserApp):
        # Not part of the request (a folder is found by its command): a continued run checks it (`require_same_build`)
        settings.update(app_file=bench.path, **build_record(bench))
    # The folder's path is known before it exists: a Ctrl-C that lands while it is being created, or just after,
    # removes it too.
    root, store = TuneStore.new_root(opts["runs_dir"], bench), None
    # Said once the start program passed its check: a refusal before it announced no measurement.
    measuring = ("Measuring baselines..." if BASELINES[opts["baseline"]] else
                 "Calibrating the iteration count..." if not isinstance(bench, UserApp) else None)
    try:
        # a user's program without baselines: nothing to announce
        with announce(measuring) if measuring else nullcontext(), ExitStack() as measurements:
            store = TuneStore.create(opts["runs_dir"], bench, settings, root=root)
            evaluator = _evaluator(bench, store.settings)
            measurements.enter_context(beat(store.root))
            if BASELINES[opts["baseline"]]:
                baselines, failed, iterations = measure_baselines(bench, BASELINES[opts["baseline"]], evaluator,
                                                                  store.root)
                store.settings.update(baselines=baselines, baseline_failures=failed, iterations=iterations)
            if not store.settings.get("iterations") and not isinstance(bench, UserApp):  # a user's program: none
                # Every program starts from one calibrated count, so that most need no calibration executions of
                # their own.
                calibration = run_benchmark(bench, start_dsl, out_dir=store.root / "calibration",
                                            min_time_s=min_time, **evaluator.run_options())
                store.settings["iterations"] = calibration.settings.get("iterations") if calibration.ok else None
                relative_run_dirs([calibration.run_dir], store.root)
            store.settings.setdefault("iterations", None)  # none calibrated: a user's program without baselines
            refusal = _timeout_refusal(bench, opts, store.root, store.settings.get("baseline_failures") or {})
            if refusal is not None:  # a folder whose every iteration would time out or fall short: none
                store.unlock()
                shutil.rmtree(root, ignore_errors=True)
                raise refusal
            store.write_settings()
    except KeyboardInterrupt:
        # A folder whose set-up never finished is never continued (`_latest`): remove it rather than leave it.
        if store is not None:
            store.unlock()
        shutil.rmtree(root, ignore_errors=True)
        raise
    return store, store.settings


def recorded_start_point(store: TuneStore, space: Any) -> dict | None:
    """The start point that the tuning folder `store` records (settings.json's `start_point`), checked against the
    search space `space` it is a point of.

    Raises:
        MapperoptError: settings.json is damaged there: a decision or choice that `space` lacks (named).
    """
    point = store.settings.get("start_point")
    try:
        space.normalize(point or {})
    except ValueError as exc:
        raise MapperoptError(f"{store.root / 'settings.json'} is damaged: its field 'start_point': {exc}",
                             hint=damage_hint(store.root)) from None
    return point


def start_up(results: list[dict]) -> float | None:
    """What an execution cost besides its measured time (`protocol.start_up_time`), seconds, the least among the run
    folders' `results` (result.json), or None when none tells."""
    return min((t for r in results if (t := protocol.start_up_time(r)) is not None), default=None)


def noise_options(bench: Any, size: str | None, timeout_s: float | None, results: list[dict]) -> dict:
    """The options of `protocol.noise_warnings` that shape its advice (Short measurement, Noisy measurement...)
    alike for every measurement of tune's and compare's: for the program `bench` (a user's `UserApp`: not
    calibrated, measured by its wall time where it has no metric pattern; a benchmark's name: its sizes larger than
    `size` that run here, `larger_size`), under --timeout `timeout_s` (None: none), with what an execution costs
    besides its measured time as the run folders' `results` (result.json) tell (`start_up`)."""
    from mapperopt.benchmarks.userapp import UserApp

    calibrated = not isinstance(bench, UserApp)
    return {"calibrated": calibrated, "timeout_s": timeout_s, "start_up_s": start_up(results),
            "wall": not calibrated and bench.metric.regex is None, "larger": larger_size(bench, size)}


def _timeout_refusal(bench: Any, opts: dict, root: Path, failures: dict[str, str]) -> MapperoptError | None:
    """The error refusing the --timeout given (`opts`), now that the reference mappers and the calibration in `root`
    ran (`failures`: the references that failed, by name): one of them timed out under it, or it leaves no room for
    --min-time and what the executions cost besides (`check_timeout`; up front that cost was unknown). None when
    there is room, or no --timeout was given."""
    from mapperopt.benchmarks.userapp import UserApp

    if opts["timeout_s"] is None or isinstance(bench, UserApp):  # a user's program: never calibrated
        return None
    names = {"default": "Legion's default mapper", "expert": "the expert mapper"}
    late = [names.get(n, n) for n, reason in failures.items() if reason.startswith("failed at stage timeout")]
    if late:
        return MapperoptError(f"--timeout {opts['timeout_s']:g}: {' and '.join(late)} ran past it (measured before "
                              "tuning), so every candidate would likely time out too and the feedback would blame the "
                              "mappings; nothing was tuned", hint="give a larger --timeout, or leave it out")
    try:
        check_timeout(bench, opts["size"], opts["timeout_s"], opts["min_time_s"],
                      start_up(set_up_results(root)) or 0.0)
    except MapperoptError as exc:
        return MapperoptError(f"{exc.message}; nothing was tuned", hint=exc.hint)
    return None


def check_endpoint_first(llm: LLMConfig, say: Callable[[str], Any], what: str) -> None:
    """Asks the language-model endpoint `llm` for one token before a new `what` (a run, a comparison) measures
    anything (`check_endpoint`); when it fails, `say`s that nothing was measured and raises its error."""
    from mapperopt.optimizer.llm import check_endpoint

    try:
        check_endpoint(llm)
    except MapperoptError:
        say(f"The language-model endpoint failed before the {what} started: nothing was measured and no folder was "
            "made; the same command starts it once the endpoint answers.")
        raise


def _evaluator(bench: str, s: dict) -> BenchmarkEvaluator:
    return BenchmarkEvaluator(bench, size=s["size"], cpus=s["cpus"], gpus=s["gpus"], repeats=s["repeats"],
                              max_repeats=s.get("max_repeats"), timeout_s=s["timeout_s"],
                              min_time_s=s.get("min_time_s"), iterations=s.get("iterations"),
                              memory=s.get("memory") or {}, baselines=s.get("baselines") or {},
                              level=s["feedback_level"], extra_args=tuple(s.get("app_args", ())), raise_memory=True,
                              default_failure=baseline_failure((s.get("baseline_failures") or {}).get("default")),
                              own_mapper=own_mapper_of(s))


def _line(r: IterationRecord, iters: int, run_unit: str = "", iterations: int | None = None,
          root: Path | None = None, reasons: dict[str, int] | None = None) -> str:
    """One iteration as tune prints it as it goes (and again when continuing): this program's throughput and the
    best so far, with their unit (`run_unit`, that of the run's working mappers, when this one failed), the joint
    re-measurement that decided whether it became the best (`remeasured`, from the tuning folder `root`), and a
    figure measured at another iteration count than the run's calibrated `iterations` (`recalibrated`). Rich markup:
    the data in it is escaped (a bracketed note would otherwise be read as a tag and dropped). `reasons`: the
    failure reasons said in full so far, with the iteration that said each (updated): a reason said before is named
    by that iteration rather than repeated (its own result.json keeps it in full)."""
    from rich.markup import escape

    i, status, this, best, category, note = _row(r, r.unit or run_unit)
    best = f"best {best}" if _succeeded(r) else "best: none yet"  # as compare's progress says
    again = escape(remeasured(root, r, "iteration") or "")
    if r.kept_out_by_noise:  # said on the line itself, which a continued run prints again without the note below it
        best += f" (iteration {r.best_iter}; this one is within the noise of it{'; ' + again if again else ''})"
    elif again:
        best += f" ({again})"
    other = recalibrated(r, iterations)
    other = escape(f" [{other}]") if other else ""
    reason, where = failure_reason(r, root)
    said = reasons.setdefault(reason, r.iter) if reason and reasons is not None else r.iter
    why = "" if not reason else (f" (failed: same reason as iteration {said})" if said != r.iter else
                                 f" (failed: {escape(reason)}{escape(f'; see {where}') if where else ''})")
    return f"  iter {i}/{iters}  {status}  {this}{other}  {best}  {category}  {note}".rstrip() + why


FAILURE_CHARS = 120  # of a failure's reason in a progress line; its feedback file has it whole


def failure_reason(r: IterationRecord, root: Path | None, shown_from: Path | None = None) -> tuple[str, str]:
    """Why iteration `r` failed, in a progress line: the first line of its feedback's error (or, for a failure
    that AutoGuide could not categorise, e.g. the executable being replaced, its run's own reason), clipped, and its
    feedback file in the tuning folder `root` (that of the iteration it was cached from), relative to `shown_from`
    (`root` when None); ("", "") for an iteration that succeeded."""
    if r.ok:
        return "", ""
    first = (r.feedback_text or "").strip().splitlines()[:1]
    # a user's program whose output failed (no metric, a failed check): its reason, as the feedback's first line
    output = r.category in ("metric", "verification") and "app_file" in ((r.result or {}).get("settings") or {})
    reason = (r.result or {}).get("reason") if r.category == "unknown" or output else \
        first[0].removeprefix("Execution: ") if first else None
    reason = reason or ""
    if root is not None:  # the folder's paths (a program's mapper.dsl) relative to it, as the feedback file's
        reason = reason.replace(f"{shown_from or root}{os.sep}", "")
    if len(reason) > FAILURE_CHARS:
        reason = reason[:FAILURE_CHARS - 3].rstrip() + "..."
    where = ""
    if root is not None:
        folder = Path(root) / f"iter-{r.cached_from if r.cached and isinstance(r.cached_from, int) else r.iter:03d}"
        found = [f for f in (folder / "feedback.txt", folder / "agent_error.txt") if f.is_file()]
        where = os.path.relpath(found[0], shown_from or root) if found else ""
    return reason, where


def print_new_notes(console: Any, root: Path, r: IterationRecord, said: set[str], show: bool = True) -> None:
    """The notes that `run` prints after its table (`userapp.run_notes`: an output that says FAIL with nothing
    checking it, the mapper's notes R453 and R455, its skipped memories R452) of iteration `r`'s run in the tuning
    folder `root` (for `compare`, the comparison's run folder), in `run`'s words, under a line naming the iteration
    and its run folder; a note whose words are in `said` (an earlier iteration's) is not said again. Adds the notes
    said to `said`; with `show` False, only adds them (an iteration of the journal, which said them when it ran)."""
    from rich.markup import escape

    from mapperopt.benchmarks.userapp import run_notes
    from mapperopt.records import RunResult

    if not r.result or not r.result.get("run_dir"):
        return
    try:
        result = RunResult.from_json({**r.result, "run_dir": str(root / r.result["run_dir"])})
    except (KeyError, TypeError, ValueError):  # a journal line of an older layout: it has nothing to say
        return
    notes = [n for n in run_notes(result) if n.text not in said]
    if not show:
        said.update(n.text for n in notes)
        return
    if notes:
        console.print(f"    iteration {r.iter}'s run ({escape(result.run_dir)}):")
    for note in notes:  # as `run` prints them
        said.add(note.text)
        if note.title:
            print_whole(console, note.title, note.text, "yellow")
        else:
            console.print(note.text, markup=False, soft_wrap=True)


def remeasured(root: Path | None, r: IterationRecord, word: str = "iter") -> str | None:
    """The joint re-measurement that decided whether iteration `r` of the tuning folder `root` replaced the best
    (its `iter-NNN/best.json`), with both figures, each named: "re-measured together with iter 1: this one
    1019 ms, iter 1 1071 ms"; None when its first measurement decided, or nothing says."""
    try:
        verdict = json.loads((Path(root) / f"iter-{r.iter:03d}" / "best.json").read_text()) if root else {}
        figures = {k: (m.get("estimate") or {}).get("value") for k, m in verdict.get("remeasured", {}).items()}
        mine, theirs, before = figures.get("candidate"), figures.get("best"), verdict.get("best_before")
    except (OSError, ValueError, AttributeError):
        return None
    if verdict.get("decided_by") != "re-measured together" or not mine or not theirs:
        return None

    def shown(value: float) -> str:  # a time metric's time alone: two figures in a progress line
        return protocol.as_time(r.unit or "", value).strip(" ()") or f"{protocol.span(value)} {r.unit or ''}".rstrip()

    return f"re-measured together with {word} {before}: this one {shown(mine)}, {word} {before} {shown(theirs)}"


def _succeeded(r: IterationRecord) -> bool:
    """Whether an iteration of 1..r.iter succeeded (`best_throughput` is 0 until one does; journals older than
    `best_iter` name none)."""
    return r.best_iter is not None or r.best_throughput > 0


def _row(r: IterationRecord, unit: str = "") -> tuple[str, ...]:
    """An iteration as the table prints it; `unit`: that of the run's throughputs, printed as `run` prints them
    (`protocol.figure`: a time metric's time first)."""
    from rich.markup import escape

    status = "[green]ok[/]" if r.ok else f"[red]failed[/] ({r.stage})"
    this = protocol.figure(unit, r.throughput) if r.throughput is not None else "-"
    tokens = (r.llm or {}).get("total_tokens")
    return (str(r.iter), status + (" [dim]cached[/]" if r.cached else ""), this,
            protocol.figure(unit, r.best_throughput) if _succeeded(r) else "-",
            escape(r.category), escape(r.note or "") + (f" [dim]({tokens} tokens)[/]" if tokens else ""))


def layouts_note(bench: Any, layouts: bool, run_dir: Path) -> tuple[str, str] | None:
    """What tune and compare say of layouts once the reference's first run (its folder `run_dir`) shows whether the
    program prints its own check, as (head, text): where `layouts` are not searched, why ("Layouts are not
    searched", `unsearched_layouts`); where a user's program's verify pattern reads only that check, that layouts
    rest on it ("Note", `pattern_reads_own_check`); else None."""
    from mapperopt.benchmarks.userapp import UserApp, own_check_seen, pattern_reads_own_check, unsearched_layouts

    if not layouts:
        result = run_dir / "result.json"
        own = own_check_seen(readable_result(result)) if result.is_file() else None
        return "Layouts are not searched", f"{unsearched_layouts(own)}."
    if isinstance(bench, UserApp) and (note := pattern_reads_own_check(bench.verify, run_dir)):
        return "Note", note
    return None


# tune's and compare's option alike (`run`'s says more: it measures one mapper, calibrated in front of the user)
min_time_option = click.option(
    "--min-time", "min_time_s", type=FiniteFloatRange(min=0), default=None,
    help=f"Least measured seconds per execution at --size [default: the size's, at least {protocol.MIN_TIME_S:g}; "
         "not with --app].")


@click.command(cls=BenchCommand)
@click.argument("bench", required=False)
@click.option("--iters", type=click.IntRange(min=1), default=None,
              help="Total iterations (each proposes and evaluates one mapper) [default: 10; when continuing, the "
                   "run's].")
@click.option("--optimizer", type=click.Choice(sorted(OPTIMIZERS)), default=None,
              help="`trace` (a language model), `guided` (rules, no model) or a baseline "
                   f"[default: {default_optimizer(True)} with an endpoint, else {default_optimizer(False)}].")
@size_options
@click.option("--repeats", type=click.IntRange(min=1), default=protocol.MIN_REPEATS, show_default=True,
              help="Executions of each proposed mapper at --size, at least; the reference mappers are measured "
                   "with exactly this many.")
@click.option("--max-repeats", type=click.IntRange(min=1), default=protocol.MAX_REPEATS, show_default=True,
              help=f"...and at most: until the 90 % interval is within {protocol.TARGET_HALF_WIDTH:.0%} of the "
                   "trimmed mean or this many were measured.")
@min_time_option
@click.option("--timeout", "timeout_s", type=FiniteFloatRange(min=SHORTEST_TIMEOUT_S), default=None,
              help=f"Seconds an execution may take [default: {ADAPTIVE_TIMEOUT}; references: the size's].")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every random choice of the search.")
@click.option("--start", default="default", show_default=True,
              help="Start program: `default` (Legion's default mapper in the DSL), `random` or a DSL file.")
@click.option("--baseline", type=click.Choice(sorted(BASELINES)), default="both", show_default=True,
              help="Reference mappers, against which the feedback and the final comparison measure.")
@click.option("--feedback-level", type=click.Choice(["raw", "explain", "suggest"]), default="suggest",
              show_default=True, help="How much of AutoGuide's feedback the optimizer gets (the paper's ablation).")
@click.option("--final-rounds", type=click.IntRange(min=1), default=FINAL_ROUNDS, show_default=True,
              help="Executions of each mapper in the final comparison at --size, one per interleaved round.")
@click.option("--new", "new", is_flag=True,
              help="Start a new tuning folder even if the same command left an unfinished one.")
@click.option("--resume", "resume_dir", type=click.Path(file_okay=False, exists=True, path_type=Path), default=None,
              help="Continue the tuning run in this folder; a finished run is extended when --iters is larger than "
                   "its total.")
@click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("runs"),
              show_default=True, help="Where tuning folders are created.")
@click.option("--llm-base-url", default=None, help="OpenAI-compatible endpoint [env MAPPEROPT_LLM_BASE_URL].")
@click.option("--llm-model", default=None, help="Model name [env MAPPEROPT_LLM_MODEL; default gpt-4o].")
@click.option("--llm-api-key", default=None,
              help="API key [env MAPPEROPT_LLM_API_KEY, which `ps` does not show, else OPENAI_API_KEY]; never "
                   "stored.")
@click.option("--llm-timeout", type=FiniteFloatRange(min=0, min_open=True), default=None,
              help="Seconds per model request [env MAPPEROPT_LLM_TIMEOUT; 120].")
@click.option("--llm-retries", type=click.IntRange(min=0), default=None,
              help="Retries of a model request after an endpoint fault [env MAPPEROPT_LLM_RETRIES; 3].")
@click.option("--llm-cap", type=FiniteFloatRange(min=0, min_open=True), default=None,
              help="Seconds of model time one iteration may use [env MAPPEROPT_LLM_CAP; 300].")
@app_options
@click.argument("app_args", nargs=-1, type=click.UNPROCESSED)
def tune(bench, iters, optimizer, size, cpus, gpus, csize, fsize, zsize, repeats, max_repeats, min_time_s, timeout_s,
         seed, start, baseline, feedback_level, final_rounds, new, resume_dir, runs_dir, llm_base_url, llm_model,
         llm_api_key, llm_timeout, llm_retries, llm_cap, app_args, **app_flags):
    """Tune a mapper for BENCH: propose a DSL mapper, compile and run it, feed AutoGuide's feedback to the
    optimizer, repeat; keep the best. At the end the top candidates, the start and the reference mappers are
    measured together and the best is compared with each (docs/tuning.md).

    Writes runs/BENCH/tune-<time>-<hex>/ with settings.json, state.jsonl (one line per iteration), iter-NNN/ run
    folders, best.dsl, history.csv and progress.png (rewritten after every iteration) and summary.json.
    Interrupt at any time: the same command continues the latest unfinished run with the same settings (--new
    starts afresh; --resume DIR continues a given folder). One process at a time may write a folder.
    APP_ARGS (after `--`) are passed to the application; a flag the size or mapperopt already sets (e.g. `-i 5000`,
    `-ll:csize 4096`) takes the new value; with --app, the program's own flags are added after its arguments (both
    reach it: a parser that takes the last one sees the new value), Legion's resource flags take the new value.
    """
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from mapperopt import interrupts
    from mapperopt.benchmarks.userapp import (UserApp, app_from_options, app_words, spec_words, stale_description,
                                              unseen_rebuild_note)
    from mapperopt.records import RunResult

    interrupts.sigterm_as_ctrl_c()  # `kill` says how to continue too
    if resume_dir is not None:
        _refuse_comparison(resume_dir, iters)
    # `--resume DIR` naming no program continues the folder's own (`_recorded_program`).
    plain = resume_dir is not None and bench is None and not any(app_flags.values())
    if plain:
        bench = _recorded_program(resume_dir)
    else:
        bench, app_args = app_from_options(bench, app_args, min_time_s=min_time_s, **app_flags)
    require_one_value(bench, app_args, cpus=cpus, gpus=gpus,
                      csize=csize, fsize=fsize, zsize=zsize)
    check_repeats(repeats, max_repeats,
                  click.get_current_context().get_parameter_source("max_repeats") is not ParameterSource.DEFAULT)
    if resume_dir is None:  # a resumed run keeps its folder's timeout
        check_timeout(bench, size, timeout_s, min_time_s)
    if isinstance(bench, UserApp) and baseline in ("expert", "both"):
        baseline = "default"  # a user's program has no expert mapper
    if isinstance(bench, UserApp) and not bench.verify.checks_output:  # whatever the optimizer proposes
        bench = dataclasses.replace(bench, refuse_layouts=True)
    console = Console(highlight=False, soft_wrap=True)  # long lines (paths, notes) stay whole when piped
    llm = LLMConfig.from_env(base_url=llm_base_url, model=llm_model, api_key=llm_api_key, timeout_s=llm_timeout,
                             max_retries=llm_retries, max_model_s=llm_cap)
    # One tune of a program per runs folder at a time: refused rather than warned, as both would measure on the
    # same cores and decide on disturbed timings (a user who wants both gives this one another --runs-dir).
    held = hold_program_folder(Path(resume_dir).parent if resume_dir is not None else Path(runs_dir) / str(bench),
                               str(bench), resumed=resume_dir is not None)
    click.get_current_context().call_on_close(held.release)
    found, other_note = resume_dir, None
    if resume_dir is None:
        optimizer = optimizer or default_optimizer(llm.configured)
        if OPTIMIZERS[optimizer].needs_model and not llm.configured:
            endpoint = (f"give --llm-base-url or --llm-model, or set {CONFIGURE}; or use --optimizer "
                        f"{default_optimizer(False)}")
            try:  # its packages missing too: both said at once
                require_packages([optimizer])
            except MapperoptError as exc:
                raise MapperoptError(f"the {optimizer} optimizer needs a language-model endpoint, and "
                                     f"{exc.message.removeprefix(f'the {optimizer} optimizer needs ')}",
                                     hint=f"{exc.hint.split(', or choose another optimizer')[0]}; then {endpoint}"
                                     ) from None
            raise MapperoptError(f"the {optimizer} optimizer needs a language-model endpoint", hint=endpoint)
        ctx = click.get_current_context()
        unused = [p.opts[0] for p in ctx.command.params if p.name.startswith("llm_")
                  and ctx.get_parameter_source(p.name) is ParameterSource.COMMANDLINE]
        if unused and not OPTIMIZERS[optimizer].needs_model:  # as --resume names what it ignores
            console.print(f"Note: {', '.join(unused)}: ignored; the {optimizer} optimizer proposes without a language "
                          "model.", markup=False)
        require_packages([optimizer])
        opts = {"size": size, "cpus": cpus, "gpus": gpus, "csize": csize, "fsize": fsize, "zsize": zsize,
                "repeats": repeats, "max_repeats": max_repeats, "min_time_s": min_time_s, "timeout_s": timeout_s,
                "seed": seed, "start": start, "baseline": baseline, "feedback_level": feedback_level,
                "runs_dir": runs_dir, "optimizer": optimizer, "iters": iters or 10, "llm": llm, "app_args": app_args}
        def resume_line(root: Path) -> str:
            return toolchain.command("tune", "--resume", str(root), *(["--iters", str(iters)] if iters else []))

        try:
            require_start_file(start, check_options(bench, size, app_args))
        except MapperoptError as exc:  # a removed start file: the run it started keeps its own copy of it
            gone = start not in ("default", "random") and not Path(start).exists() and not new
            if gone and (root := _unfinished_from(runs_dir, bench, _request(bench, {**opts, "start": "default"}),
                                                  str(start), iters)):
                exc.hint = (f"{exc.hint}; or continue the unfinished run that {start} started, {root} (it keeps its "
                            f"own copy of the start program): {resume_line(root)}")
            raise
        request = _request(bench, opts)
        found, finished = (None, None) if new else _latest(runs_dir, bench, request, iters)
        if not new and found is None and isinstance(request["start"], dict) and (
                root := _unfinished_from(runs_dir, bench, request, str(start), iters)):
            other_note = (f"Note: {root} holds {_tuning_state(root, bench)} that started from another version of "
                          f"{start} (the file was edited since); it is left alone, and this command tunes in {{}}. "
                          f"To continue that one (from its own copy of the start program): {resume_line(root)}")
        if not new and found is None and (other := _other_unfinished(runs_dir, bench, request, iters)):
            again = toolchain.command("tune", "--resume", str(other[0]), *(["--iters", str(iters)] if iters else []))
            other_note = (f"Note: {other[0]} holds {_tuning_state(other[0], bench)} with other settings "
                          f"({'; '.join(other[1])}); it is left alone, and this command tunes in {{}}. "
                          f"{_how_to_continue(other[0], iters, bench)}: {again}")
        # named, as they are left alone: an option given otherwise by mistake would lose track of them
        option_notes = [] if new or found is not None else [
            f"Note: {root} holds {_tuning_state(root, bench)} with other options ({'; '.join(words)}); it is left "
            f"alone, and this command tunes in {{}}. To continue that one with its own options: {resume_line(root)}"
            for root, words in _other_options(runs_dir, bench, request, iters)[:3]]
        # After a rebuild, or with the application file repointed to another executable, the finished (or
        # unfinished) run of this command is not extended: said, as the user may expect a larger --iters to extend it.
        if not new and found is None and other_note is None and (rebuilt := _other_build(runs_dir, bench, request)):
            root, words = rebuilt
            done = len(TuneStore.open(root).records)
            other_note = (f"Note: {root} holds a tuning of {bench} ({done} iteration{'s' * (done != 1)}) made with "
                          f"another executable: {words}; a tuning is never continued or extended with "
                          "another build (its measurements would be mixed with the new one's), so this command "
                          "starts a new run, in {}. To extend that one instead, first put back the executable it "
                          "was made with, then: " + toolchain.command("tune", "--resume", root, "--iters",
                                                                       done + (iters or 10)))
            finished = None if finished == root else finished  # its extension would be refused: not offered
        for root, model in _other_endpoint(runs_dir, bench, request, iters):  # said before the endpoint's check
            console.print(f"Note: {root} holds {_tuning_state(root, bench)} made with another language model or "
                          f"endpoint (the model {model.get('model')} at {model.get('base_url') or 'the OpenAI API'});"
                          f" it is left alone. To continue it with this command's: {resume_line(root)}", markup=False)
        if finished is not None:  # a new folder, said out loud: the user may have meant to extend that run
            done = len(TuneStore.open(finished).records)
            console.print(f"The run of this command in {finished} finished ({done} iteration{'s' * (done != 1)}); "
                          f"starting a new one. To extend that run instead, give the command --resume {finished} "
                          f"--iters {done + (iters or 10)}", markup=False)
    if found is not None:
        store = TuneStore.open(found)
        if not _set_up(store):  # killed while setting up: baselines and the calibrated count are missing
            raise MapperoptError(f"{found}: its set-up (describing the application and the machine, measuring the "
                                 "baselines) never finished, so it cannot be continued",
                                 hint="the same tune command without --resume starts a new folder; this one can be "
                                      "deleted")
        settings = store.settings
        _require_same_program(found, settings, bench, iters, plain)  # before the lock: a refusal changes nothing
        require_known_size(found / "settings.json", settings["size"], bench, damage_hint(found))
        if resume_dir is not None:
            ignored = _ignored_on_resume(settings.get("request") or {},
                                         () if isinstance(bench, UserApp) else app_args)
            if ignored:
                console.print(f"Note: {', '.join(ignored)}: ignored; a resumed run keeps its folder's settings.",
                              markup=False)
            done = len(store.records)
            if (found / "summary.json").exists() and done >= (iters or settings["iters"]):
                # Finished: the final comparison again would only replace its measurements (summary.json).
                if click.get_current_context().get_parameter_source("final_rounds") is not ParameterSource.DEFAULT:
                    console.print(f"Note: --final-rounds {final_rounds}: ignored; the final comparison of a finished "
                                  "run is not measured again (with a larger --iters it is, in this many rounds).")
                again = toolchain.command("tune", "--resume", str(found), "--iters", str(done + 10))
                console.print(f"{found} is finished with {done} iteration{'s' * (done != 1)}: nothing to do. To "
                              f"extend it, give a larger --iters, e.g. {again}", markup=False)
                return
        # --resume ignores --new: a command that starts afresh, with the folder's settings
        afresh = None if resume_dir is None else _afresh(bench, found, settings, iters, final_rounds)
        require_same_build(found, settings, bench, new=afresh)  # before the lock: a refusal changes nothing
        if (found / "final").exists() and not (found / "final").is_dir():  # where its final comparison's runs go
            raise wrong_kind(NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(found / "final")))
        if isinstance(bench, UserApp):  # its size may have changed since; a benchmark's sizes are fixed
            require_same_machine(found, settings, *app_machine_now(bench, settings), app=bench, new=afresh)
        store.lock()
        iters = iters or settings["iters"]
        if optimizer_spec(settings["optimizer"]).needs_model and not llm.configured and len(store.records) < iters:
            raise MapperoptError(f"{found} was tuned with the {settings['optimizer']} optimizer, which needs a "
                                 "language-model endpoint", hint=f"set the endpoint again: {CONFIGURE}")
        if optimizer_spec(settings["optimizer"]).needs_model and not llm.configured:
            # no model call is left: the optimizer describes the model that proposed the folder's iterations
            recorded = settings.get("llm") or {}
            llm = LLMConfig(base_url=recorded.get("base_url"), model=recorded.get("model"))
        require_packages([settings["optimizer"]])
        # --final-rounds is not a folder setting: the final comparison measures this command's count.
        how = "--new starts afresh" if resume_dir is None else \
            f"the run's own settings apply; the final comparison takes this command's --final-rounds, {final_rounds}"
        done = len(store.records)
        if done > iters:  # the loop adds none; the lines count over what the folder holds
            console.print(f"Continuing {store.root}: it already holds {done} iterations, more than --iters {iters}: "
                          f"no iteration is added, and its final comparison covers all {done} ({how}).", markup=False)
            iters = done
        else:
            console.print(f"Continuing {store.root}: {done} of {iters} iteration{'s' * (iters != 1)} done ({how}).",
                          markup=False)
        if note := unseen_rebuild_note(bench, settings):
            console.print(f"Note: {note}.", markup=False)
        if resume_dir is None and (others := [root for root, recorded in _unfinished_tunes(runs_dir, bench, iters)
                                              if root != found and _searched(recorded) == _searched(request)]):
            console.print(f"Note: {Path(runs_dir) / str(bench)} holds other runs of this command that this "
                          f"{'--iters would measure more in' if iters else 'command could continue'}; this one "
                          "goes on with the newest. To go on with "
                          f"{'that one' if len(others) == 1 else 'one of the others'} instead: "
                          + "; ".join(f"{resume_line(root)} ({_tuning_state(root).split(' ', 1)[1]})"
                                      for root in others), markup=False)
        for note in store.damaged:
            console.print(f"Note: {note}.", markup=False)
    else:
        if OPTIMIZERS[opts["optimizer"]].needs_model:  # a dead endpoint is found in seconds, before any measurement
            with say_status(console, "Checking the language-model endpoint..."):
                check_endpoint_first(llm, lambda text: console.print(text, markup=False), "run")
        try:
            from mapperopt.optimizer.compare import Heartbeat

            store, settings = _new_run(bench, opts, request, lambda text: say_status(console, text),
                                       lambda root: Heartbeat(lambda line: console.print(line, markup=False), [root],
                                                              not isinstance(bench, UserApp)))
        except KeyboardInterrupt:
            with interrupts.terminal_may_be_gone():
                console.print("[yellow]Interrupted while setting up[/] (describing the application and the machine, "
                              "measuring the baselines): nothing was kept, no folder is left. The same command "
                              "starts again.")
            raise click.exceptions.Exit(130) from None  # said: no `aborted` line after it (cli.main)
        iters = settings["iters"]
        if other_note:  # said: the user may have edited the application file by accident
            console.print(other_note.format(store.root), markup=False)
        for note in option_notes:
            console.print(note.format(store.root), markup=False)
        if note := unseen_rebuild_note(bench):
            console.print(f"Note: {note}.", markup=False)
    from mapperopt.descriptions import AppDescription
    from mapperopt.dsl.commands import kept_note
    from mapperopt.dsl.parser import parse
    from mapperopt.optimizer.space import SearchSpace

    space = SearchSpace(settings["app_description"], settings["machine"], layouts=settings.get("search_layouts", True),
                        start=settings["start_dsl"])
    if said := layouts_note(bench, space.layouts, store.root / "baseline-default"):
        print_whole(console, *said, "none" if said[0] == "Note" else "yellow")
    if settings["start"] not in ("default", "random") and (note := space.not_kept(settings["start_dsl"],
                                                                                   settings["start"])):
        console.print(f"[yellow]Note:[/] {escape(note)}")
    if settings["start"] not in ("default", "random") and (note := kept_note(
            AppDescription.from_json(settings["app_description"]), parse(settings["start_dsl"], settings["start"]),
            f"{settings['start']} and every program the search writes map")):
        console.print(f"[yellow]Note:[/] {escape(note)}.")  # the search keeps to these tasks (`SearchSpace.scope`)
    opt = make_optimizer(settings["optimizer"], space=space, start=settings["start_dsl"], seed=settings["seed"],
                         start_point=recorded_start_point(store, space), llm=llm, workdir=store.root,
                         init="random" if settings["start"] == "random" else "start")
    print_wrapped(console, f"Tuning [bold]{escape(str(bench))}[/] (size {settings['size']}, {settings['cpus']} CPU, "
                  f"{settings['gpus']} GPU) for {iters} iteration{'s' if iters != 1 else ''} with "
                  f"{escape(opt.describe())}.")
    if note := tests_size_note(bench, settings["size"]):  # as compare says it: before the minutes, not only after
        print_wrapped(console, note, markup=False)
    # The search decides on timings that processors sharing cores slow down and make noisier: said as `run` says it.
    cores = protocol.core_warning({"cpus": settings["cpus"], "util": load_config(bench).size(settings["size"]).util,
                                   "extra_args": settings.get("app_args"),
                                   "app_options": shlex.join(spec_words(bench)) if isinstance(bench, UserApp) else ""})
    if cores:
        print_whole(console, cores[0], cores[1], "yellow")
    processors = (settings["cpus"], settings["gpus"],
                  protocol.utility_processors(load_config(bench).size(settings["size"]).util, settings.get("app_args")))
    if said := no_placement(processors):  # in full here, before the minutes; Next refers to it
        print_wrapped(console, f"Note: {said}. {still_tunable(space)}", markup=False)
    low, high = settings["repeats"], settings.get("max_repeats", settings["repeats"])
    executions = f"{low}-{high} executions" if low != high else f"{low} execution{'s' if low != 1 else ''}"
    print_wrapped(console, f"Each mapper: {executions} "
                  + ("measured, not calibrated (the program's arguments fix the work of an execution)"
                     if "app_file" in settings else
                     f"of at least {settings.get('min_time_s') or 0:g} s measured"
                     + (f" ({load_config(bench).iterations_flag} {settings['iterations']})"
                        if settings.get("iterations") else "")) + ", trimmed mean.")
    _print_baselines(console, store.root, settings, bench, next((r.unit for r in store.records if r.unit), ""))
    console.print(f"Folder: {store.root}", markup=False)
    if (stop := _default_fails_everywhere(store)) is not None:
        store.unlock()
        raise stop
    unit = next((r.unit for r in store.records if r.unit), "")
    said: set[str] = set()  # the notes of the iterations' runs said so far: each once
    reasons: dict[str, int] = {}  # the failure reasons said so far, with the iteration that said each: each once
    replaced = rebuilt_iterations(store.root)
    for r in store.records:
        print_progress(console, _line(r, iters, unit, store.settings.get("iterations"), store.root, reasons)
                       + "  [dim](from the journal)[/]" + (
                           f"  [yellow]ran while {escape(replaced[r.iter])} was rebuilt: either build[/]"
                           if r.iter in replaced else ""))
        print_new_notes(console, store.root, r, said, show=False)  # said when it ran: once per folder
    status = console.status("")

    build_checked: list[int] = []  # the iterations before whose start the executable was the folder's build

    def check_build(i: int) -> None:
        """Stops the tune before iteration `i` (the final comparison: `i` past the last) where a user's program's
        executable is no longer the build the folder was made with (a rebuild while the tune runs)."""
        if (stop := changed_build(bench, settings, store.root, build_checked[-1:], len(store.records),
                                  # the user's own options kept (their --iters, --cpus, --repeats...), as the
                                  # folder's request recorded them
                                  _afresh(bench, store.root, settings, iters, final_rounds), same=same)) is not None:
            raise stop
        build_checked.append(i)

    def on_start(i: int) -> None:
        check_build(i)
        status.update(f"iteration {i}/{iters}: proposing and evaluating a mapper...")
        status.start()

    stale_said = prints_said = False

    def on_record(r: IterationRecord) -> None:
        nonlocal stale_said, prints_said
        status.stop()
        print_progress(console, _line(r, iters, next((x.unit for x in store.records if x.unit), ""),
                                      store.settings.get("iterations"), store.root, reasons))
        print_new_notes(console, store.root, r, said)
        if not prints_said and r.dsl and r.result and r.result.get("run_dir"):
            # the mapper's print lines, as `run` shows them: once (every iteration's program may print), from the
            # first iteration that printed (the start program, where it prints)
            ran = RunResult.from_json({**r.result, "run_dir": str(store.root / r.result["run_dir"])})
            prints_said = echo_mapper_prints(dataclasses.replace(ran, dsl=r.dsl), f"iteration {r.iter}'s mapper",
                                             "; later iterations' are in their own folders' stderr files, not "
                                             "shown")
        if isinstance(bench, UserApp) and r.result and r.result.get("run_dir") and not stale_said:
            result = RunResult.from_json({**r.result, "run_dir": str(store.root / r.result["run_dir"])})
            unmapped = stale_description(bench, result, settings["app_description"])
            if unmapped:  # once: every later candidate naming the task says it again
                stale_said = True
                console.print(f"[yellow]Warning:[/] {escape(stale_warning(bench, r.iter, unmapped, store.root))}")
        if r.kept_out_by_noise:
            console.print(f"    not faster than iteration {r.best_iter} beyond the noise: the best stays iteration "
                          f"{r.best_iter} (the final comparison measures the top candidates together)")

    set_aside = None  # (the folder holding the final comparison this command set aside, the iterations it covers)
    if len(store.records) < iters and (store.root / "summary.json").exists():
        # Extended: its final comparison is set aside before any new iteration, so that a summary.json always covers
        # every iteration of its folder (a kill between the last iteration and the new comparison left the old one,
        # and the folder read as finished).
        set_aside = (_set_aside_final(store.root, lambda text: console.print(text, markup=False)),
                     len(store.records))
    finishing = False  # in the final comparison
    # as it was named, or not at all (`--resume DIR` alone)
    program = [] if plain else app_words(**app_flags) if isinstance(bench, UserApp) else [str(bench)]
    # --final-rounds is this command's, not the folder's: named, so that the final comparison keeps it
    rounds = ["--final-rounds", str(final_rounds)] if final_rounds != FINAL_ROUNDS else []
    # the model options given: a continued run takes the command's model settings (the key, a secret, not repeated)
    ctx = click.get_current_context()
    model = [word for p in ctx.command.params if p.name.startswith("llm_") and p.name != "llm_api_key"
             and ctx.get_parameter_source(p.name) is ParameterSource.COMMANDLINE
             and optimizer_spec(settings["optimizer"]).needs_model
             for word in (p.opts[0], f"{ctx.params[p.name]:g}" if isinstance(ctx.params[p.name], float) else
                          str(ctx.params[p.name]))]
    again = toolchain.command("tune", *program, "--resume", str(store.root), "--iters", str(iters), *rounds, *model)
    # With --new the same command would start yet another run: only --resume continues this one.
    lead = "To continue:" if new and resume_dir is None else "The same command continues; or:"
    to_continue = f"{lead} {again}"
    same = again if new and resume_dir is None else None  # what continues it where the same command would not
    try:
        run_loop(store, opt, _evaluator(bench, settings), iters, on_start=on_start, on_record=on_record)
        unit = next((r.unit for r in store.records if r.unit), unit)
        done = len(store.records)
        table = Table(title=f"{bench}: {done} iteration{'s' * (done != 1)} ({settings['optimizer']})")
        for col in ("iter", "status", "time" if protocol.as_time(unit, 1) else "throughput", "best",
                    "feedback category"):
            table.add_column(col)
        apart = []  # figures measured at another iteration count: marked, and said under the table
        rebuilt = rebuilt_iterations(store.root)  # and those that ran while the program was rebuilt
        for r in store.records:
            cells = list(_row(r, unit)[:5])  # how each program was proposed is printed in full above
            if (r.note or "").startswith("LLM answer not used"):  # its outcome is the unchanged mapper's, served again
                cells[1] += " [yellow](the model's answer not used)[/]"
            if protocol.as_time(unit, 1):  # a time metric: the time alone (its throughput beside it wrapped each row)
                cells[2:4] = [protocol.as_time(unit, v).strip(" ()") if v else "-" for v in
                              (r.throughput, r.best_throughput if _succeeded(r) else None)]
            if other := recalibrated(r, store.settings.get("iterations")):
                cells[2] += " [yellow]*[/]"
                apart.append(f"iteration {r.iter} {other.split(':')[0]}")
            elif r.iter in rebuilt:
                cells[2] += " [yellow]*[/]"
                apart.append(f"iteration {r.iter} ran while {rebuilt[r.iter]} was rebuilt and may have measured "
                             "either build")
            table.add_row(*cells)
        console.print(table)
        if apart:
            console.print(f"[yellow]*[/] not comparable with the other iterations: {escape('; '.join(apart))} ("
                          + ("its figure also weighs start-up differently; " if any(
                              recalibrated(r, store.settings.get("iterations")) for r in store.records) else "")
                          + "the final comparison measures the top candidates together).")
        tokens = sum((r.llm or {}).get("total_tokens", 0) for r in store.records)
        if tokens:
            console.print(f"Language-model tokens: {tokens} in total (a call of an interrupted iteration is in no "
                          "record).")
        if store.best() is None:
            raise _no_working_mapper(store)
        check_build(len(store.records) + 1)
        # the references final_comparison measures: one reads "the reference" (as the verdict says it)
        refs = len(BASELINES[settings.get("baseline", "none")])
        measured = ("the top candidates and the start" if not refs else
                    f"the top candidates, the start and the reference{'s' * (refs > 1)}")
        with say_status(console, f"Measuring {measured} together ({final_rounds} round{'s' * (final_rounds != 1)})..."):
            finishing = True
            summary = final_comparison(bench, store, final_rounds, after_round=final_round_check(
                bench, settings, store.root, store.root / "final", lambda: len(store.records),
                _afresh(bench, store.root, settings, iters, final_rounds), same=same))
    except KeyboardInterrupt:
        # counted on disk: an interrupt while `append` forces a record to disk leaves it there, not in `records`
        n = len(TuneStore.open(store.root).records)
        with interrupts.terminal_may_be_gone():
            status.stop()
            said = ("[yellow]Interrupted in the final comparison.[/] What it measured is kept (the next command "
                    "moves it to final-N/, names it in summary.json under `interrupted`, and measures the comparison "
                    "again). " if finishing else f"[yellow]Interrupted after {n} iteration{'s' * (n != 1)}.[/] ")
            # where the output wraps, the prose is wrapped and the command, whole, gets a line of its own
            print_wrapped(console, f"{said}{lead}\n{escape(again)}" if wraps(console) else said + to_continue)
        raise click.exceptions.Exit(130) from None
    except ModelError:
        status.stop()
        n = len(store.records)
        console.print(f"[yellow]Stopped after {n} iteration{'s' * (n != 1)}: the language model failed (no "
                      f"iteration was used up).[/] {to_continue}")
        if set_aside and set_aside[1] == n:  # the folder reads as unfinished now: where its summary went
            console.print(f"The final comparison of these {n} iterations is kept in {set_aside[0]} (its "
                          f"summary.json); --iters {n} finishes the run without the model, measuring a new one.",
                          markup=False)
        raise
    finally:
        status.stop()
        store.unlock()
    warned = _print_summary(console, summary, unit, default_start=settings["start"] == "default",
                            **noise_options(bench, settings["size"], settings.get("timeout_s"),
                                            set_up_results(store.root)))
    unsure = measure_more(warned)
    if said := pick_line(summary, store.best().iter):
        print_wrapped(console, said, markup=False)
    print_command_last(console, best_mapper_line(
        summary, store.root / "best.dsl", default_start=settings["start"] == "default",
        start_file=None if settings["start"] in ("default", "random") else settings["start"],
        command=best_run_command(bench, settings, store.root / "best.dsl"), unsure=unsure))
    console.print(summary["best_dsl"].rstrip("\n"), markup=False, soft_wrap=True)
    if kept_app_mapper(settings):
        console.print(f"{store.root / 'best.dsl'} was tuned with --keep-app-mapper: {KEPT_USE}", markup=False,
                      soft_wrap=True)
    if settings["start"] not in ("default", "random"):
        edit = store.root / "best-from-start.dsl"
        console.print(f"The same mapping as an edit of {escape(settings['start'])} (its comments, functions and "
                      f"statements for other machines kept): {edit}" if edit.exists() else
                      f"No edit of {escape(settings['start'])} maps as best.dsl does here "
                      f"({escape(_edit_blockers(settings, store.root / 'best.dsl'))} "
                      "would stay in it): take best.dsl's statements into it by hand.")
    console.print(f"History: {store.root / 'history.csv'}; plot: {store.root / 'progress.png'}; "
                  f"summary: {store.root / 'summary.json'}", markup=False)
    if drift := drift_line(summary, store, unit, default_start=settings["start"] == "default"):
        console.print(drift, markup=False)
    # Last: the iterations' table shows the loop's own figures (a lucky early measurement may stay its "best").
    print_wrapped(console, verdict(summary, default_start=settings["start"] == "default"), markup=False)
    if note := tests_size_note(bench, settings["size"], store.root):
        print_wrapped(console, note, markup=False)
    if note := mapping_cost_note(summary, store.root):
        print_wrapped(console, note, markup=False)
    if step := next_step(summary, default_start=settings["start"] == "default", own_mapper=own_mapper_of(settings),
                         start_file=None if settings["start"] in ("default", "random") else settings["start"],
                         processors=processors, root=store.root, unsure=unsure):
        print_wrapped(console, step, markup=False)
    if note := intermittent_note(summary, store, best_run_command(bench, settings, store.root / "best.dsl")):
        print_wrapped(console, note, markup=False)
    if summary["measured"][summary["best"]]["estimate"] is None:  # best.dsl is no tuning result: not a success
        raise click.exceptions.Exit(1)


def intermittent_note(summary: dict, store: TuneStore, command: str) -> str | None:
    """Said by tune last where a candidate of the final comparison (`summary`) that ran without failure in the search
    failed in that comparison: the same mapper both ran and failed, so the program fails intermittently (whatever
    the mapper, where a reference mapper failed there too); where that candidate is the pick, best.dsl is not shown
    to work (`command` runs it). A failure there before the program ran (its check) is said to be no intermittency:
    the mapper or the machine changed since the search. None otherwise."""
    measured, best = summary["measured"], summary["best"]
    ran = {f"iter-{r.iter}" for r in store.records if r.ok}
    failed = [n for n in measured if n in ran and measured[n]["estimate"] is None]
    # a reason is "stage: why"; a failure before the program starts (its check, its compilation) is no intermittency
    static = [n for n in failed if (measured[n]["reason"] or "").split(":")[0] in ("parse", "check", "compile")]
    flaked = [n for n in failed if n not in static]
    changed = ""
    if static:
        files = ", ".join(str(store.root / f"iter-{int(n.removeprefix('iter-')):03d}" / "mapper.dsl") for n in static)
        changed = (f"{' and '.join(static)} ran without failure in the search but failed the final comparison's "
                   f"static check ({measured[static[0]]['reason']}); a static check gives the same answer every time: "
                   f"the mapper compared there is not the text the search measured (see {files}), or this machine "
                   "is not the one the search ran on.")
    if not flaked:
        return changed or None
    refs = [reference_name(n, summary.get("own_mapper")) for n in ("default", "expert")
            if n in measured and measured[n]["estimate"] is None]
    head = (f"The program fails intermittently{', whatever the mapper' if refs else ''}: {' and '.join(flaked)} ran "
            f"without failure in the search but failed in the final comparison ({measured[flaked[0]]['reason']})"
            + (f"; {' and '.join(refs)} failed in it too." if refs else "."))
    if best in flaked:
        return (f"{head} So best.dsl (the search's pick) is not shown to work: make the program's failures stop (a "
                f"race, or a resource it runs short of), then run it several times before using it: {command}"
                + (f" Also: {changed}" if changed else ""))
    return (f"{head} The figures above are those of the mappers that ran; run best.dsl several times: {command}"
            + (f" Also: {changed}" if changed else ""))


def _edit_blockers(settings: dict, best: Path) -> str:
    """What keeps the start file of a tuning (`settings`) from being edited to map as its best program (the file
    `best`) does: its statements that decide otherwise (`SearchSpace.edit_blockers`), else the kind that may."""
    from mapperopt.optimizer.space import SearchSpace

    blockers = []
    if "app_description" in settings and best.is_file():
        space = SearchSpace(settings["app_description"], settings["machine"],
                            layouts=settings.get("search_layouts", True), start=settings["start_dsl"])
        blockers = space.edit_blockers(settings["start_dsl"], best.read_text())
    return (f"its {'statement' if len(blockers) == 1 else 'statements'} {'; '.join(blockers)}, which the search does "
            "not express," if blockers else "its statements that the search does not express")


# A crash of the program's (`harness.classify`): a signal, an abort; not SIGKILL (out of memory), nor a timeout.
_CRASHED = ("crashed with SIG", "aborted", "the program aborted")


def _default_fails_everywhere(store: TuneStore) -> MapperoptError | None:
    """The error that stops tuning a user's program before its first iteration when Legion's default mapper (the
    default baseline, with no mapper of the program's own) failed its verification or crashed: the program or its
    verification settings are most likely the cause, and every iteration from the default start would fail the same
    way (each ran before stopping); the program alone where earlier executions passed the same check (its output
    varies from run to run, which would rank mappers by chance); the memory option that gives the run more where a
    memory was too small for it (AutoGuide's advice). None otherwise: a benchmark, another failure (killed for
    lack of the machine's memory, a timeout), the program's own mapper as the baseline (a DSL mapper takes its
    place), a start of the user's own (--start FILE: the failure may depend on the mapping, e.g. a kernel that needs
    a layout), or iterations already run. Its text is also kept in the folder (stopped.txt), beside the baseline's
    run folder."""
    if "app_file" not in store.settings or store.records or own_mapper_of(store.settings) \
            or store.settings.get("start") not in (None, "default", "random"):
        return None
    failure = baseline_failure((store.settings.get("baseline_failures") or {}).get("default"))
    if failure is None:
        return None
    stage, reason = failure["stage"], failure["reason"]
    path = store.root / "baseline-default"
    try:
        result = read_json(path / "result.json")
    except (FileNotFoundError, MapperoptError):
        result = {}
    settings = result.get("settings") or {}
    app_options = settings.get("app_options") or ""
    run = f"`{toolchain.command('run', *_run_words(app_options, store.settings))}`" if app_options \
        else f"`{toolchain.invoked_as()} run --app ...` (no --mapper)"
    always = "and every iteration from the default start would fail the same way"
    memory = _size_advice(path) if stage == "run" and reason.startswith(_CRASHED) else None
    if memory:  # a memory too small for the program: the option that raises it, as `run` and discovery say
        cause = "the program needs more memory than the run gives it"
        fix = (f"{memory} Check it with {run} and that option (no --mapper: Legion's default mapper), then tune "
               "again with it")
    elif stage == "verify":
        from mapperopt.benchmarks.harness import UNREAD_OWN_CHECK, reported_check
        from mapperopt.benchmarks.userapp import VARYING_OUTPUT_CAUSES, intermittent, verify_option

        attempts = result.get("attempts") or []
        line = (attempts[-1].get("result") or {}) if attempts else {}
        rerun = f"{run} (no --mapper: Legion's default mapper), then tune again with --new"
        if line.get("verified") is False:  # the program's own check (its MAPPEROPT_RESULT line), no option's
            cause = "most likely the program or its arguments are the cause"
            fix = (f"its own check (its MAPPEROPT_RESULT line says \"verified\": false) reported "
                   f"{reported_check(reason)}: fix the program or its arguments, check it with {rerun}")
        elif UNREAD_OWN_CHECK in reason:
            cause = "most likely the program is the cause: its own check cannot be read"
            fix = ("make the program print `MAPPEROPT_RESULT` followed by one JSON object on the same line, whose "
                   f"\"verified\" is true or false, check it with {rerun}")
        else:
            option = verify_option(reason)
            given = option is not None and option in shlex.split(app_options)[2::2]
            where = f"the {option} option" if given else settings.get("app_file") \
                or store.settings.get("app_file") or "the --verify-pattern, --verify-cmd or --reference option"
            cause = "most likely the program or its verification settings are the cause"
            fix = f"fix the verification ({where}) or the program, check it with {rerun}"
        if intermittent(reason):  # earlier executions passed the same check: not the check's mistake
            cause, always = ("most likely the program is the cause: its output varies from run to run",
                             "so tuning it would rank mappers by chance")
            fix = (f"fix the program ({VARYING_OUTPUT_CAUSES}), check it with {run} (no --mapper: Legion's default "
                   "mapper; every execution must pass), then tune again with --new")
    elif stage == "run" and reason.startswith(_CRASHED):
        cause = "most likely the program itself is the cause"
        fix = f"fix the program, check it with {run} (no --mapper: Legion's default mapper), then tune again with --new"
    else:
        return None
    if not memory:
        fix += ("; if the failure depends on the mapping (a kernel that needs a layout, say), tune from a mapper "
                "that runs the program correctly: --start FILE")
    error = MapperoptError(f"Legion's default mapper, measured as the baseline, failed at stage {stage} ({reason}): "
                           f"{cause}, {always}; nothing was tuned (what was measured is in {path})", hint=fix)
    with writing_in(store.root):
        write_atomically(store.root / "stopped.txt", f"Stopped before the first iteration: {error.message}\n"
                                                     f"To fix: {fix}.\n")
    return error


def _size_advice(folder: Path) -> str | None:
    """AutoGuide's advice to raise the memory that was too small for the run in `folder` (its feedback.json), up to
    the option that raises it (`userapp.size_advice`); None for another failure, or without a readable feedback."""
    from mapperopt.benchmarks.userapp import size_advice
    from mapperopt.records import Feedback

    try:
        return size_advice(Feedback.from_json(read_json(folder / "feedback.json")))
    except (FileNotFoundError, MapperoptError, KeyError, TypeError, ValueError):
        return None


def _run_words(app_options: str, settings: dict) -> list[str]:
    """The arguments of `mapperopt run` that run the program `app_options` names (`--app FILE`) as the tuning run
    whose `settings` are given: the options its command was given (settings.json's `request`) that `run` takes too."""
    request = settings.get("request") or {}
    words = shlex.split(app_options)
    if request.get("size", "ci") != "ci":
        words += ["--size", str(request["size"])]
    for option in ("cpus", "gpus", "csize", "fsize", "zsize"):
        if request.get(option) is not None:
            words += [f"--{option}", str(request[option])]
    if request.get("timeout_s") is not None:
        words += ["--timeout", f"{request['timeout_s']:g}"]
    return words + (["--", *map(str, request["app_args"])] if request.get("app_args") else [])


def _no_working_mapper(store: TuneStore) -> MapperoptError:
    """The error of a run none of whose iterations worked: when every one failed at the stage Legion's default
    mapper (the default baseline) failed at too, the program or its verification fails whatever the mapping, and the
    error says so rather than send the user to feedback that advises running without a mapper; when every one ran
    past the --timeout given, it names the --timeout."""
    path = store.root / "baseline-default" / "result.json"
    default = (readable_result(path) if path.is_file() else None) or {}
    history = store.root / "history.csv"
    if default.get("status") == "failed" and {r.stage for r in store.records} == {default.get("stage")}:
        from mapperopt.autoguide.explain import without_mapper_command
        from mapperopt.records import RunResult

        named = "the program's own mapper" if own_mapper_of(store.settings) else "Legion's default mapper"
        app_options = (default.get("settings") or {}).get("app_options")
        try:  # a program: as the tune was asked to run it (as `_default_fails_everywhere` says); a benchmark: as it ran
            run = f"`{toolchain.command('run', *_run_words(app_options, store.settings))}`" if app_options \
                else f"`{without_mapper_command(RunResult.from_json(default))}`"
        except (KeyError, TypeError, ValueError):
            run = f"`{toolchain.command('run')}` with the same program and no --mapper"
        return MapperoptError(f"no iteration produced a working mapper, and {named} failed at stage "
                              f"{default['stage']} too ({default.get('reason')}): the program, its arguments or its "
                              f"verification fail whatever the mapping, so no mapper is the cause; see {history}",
                              hint=f"fix that first: {run} runs it under {named} (its files: {path.parent})")
    given = store.settings.get("timeout_s")
    if given is not None and {r.stage for r in store.records} == {"timeout"}:
        # The feedback blames each mapping; all of them too slow (Legion's default among them, with --start
        # default) says more about the limit.
        return MapperoptError(f"no iteration produced a working mapper: every one ran past --timeout {given:g}, "
                              "whatever its mapping, so that limit is the likely cause (it counts Legion's start-up "
                              f"and the application's set-up too); see {history}",
                              hint="give a larger --timeout, or leave it out")
    return MapperoptError(f"no iteration produced a working mapper; see {history}",
                          hint="look at the feedback in iter-NNN/feedback.txt")


def final_comparison(bench: str, store: TuneStore, rounds: int = FINAL_ROUNDS,
                     after_round: Callable[[int], Any] | None = None) -> dict:
    """Measures together (`protocol.measure_together`, `rounds` interleaved rounds) the `FINAL_CANDIDATES`
    best distinct programs of the journal (the loop's best among them), the start program and the reference
    mappers; picks the final best among the candidates and the start (so that the pick is never slower than the
    start as measured here); compares it with each of the others. Writes best.dsl (the final best) and
    summary.json, and returns the summary (`after_round`: as `protocol.measure_together`'s; what it raises
    stops the comparison before anything is written):

        {"best": name, "best_iter": N, "best_dsl": text, "rounds": R, "min_time_s": seconds calibrated to,
         "measured": {name: Measured.to_json()}, "vs": {name: Comparison.to_json() | None} (with "no_interval",
         too few rounds, "low" and "high" are no interval: with 1 or 2 executions each, the lowest and highest ratio
         of the best's executions to the other's),
         "start_vs_default": [what the start maps otherwise than Legion's default mapper] (with --start default),
         "best_vs_default": [what the best maps otherwise than Legion's default mapper] (with the default mapper),
         (for a program that registers its own mapper, which the `default` reference runs: "start_vs_legion_default"
         and "best_vs_legion_default" in their place, without the tasks that program's mapper keeps: `app_mapped`;
         a summary written before has the two above, ending with a note that the reference ran the program's own
         mapper)
         "replaced": [the `final-N` folders of earlier final comparisons of a run extended since],
         "interrupted": [{"folder": "final-N", "mappers": [names it has run folders of]}: comparisons cut short
                         (Ctrl-C, a kill), whose `final/` the next one keeps as `final-N/`; no figure uses them]}

    Names: "iter-N" for candidates and the start (iteration 1, which competes even when it is not among them;
    "start" gives its name), "default", "expert".
    """
    settings = store.settings
    ok = sorted((r for r in store.records if r.ok and not r.cached and r.dsl), key=lambda r: -r.throughput)
    picked: dict[str, IterationRecord] = {}
    for r in [store.best(), *ok]:
        if r is not None and r.key not in {p.key for p in picked.values()} and len(picked) < FINAL_CANDIDATES:
            picked[f"iter-{r.iter}"] = r
    mappers: dict[str, Any] = {name: r.dsl for name, r in picked.items()}
    first = store.records[0]
    # The start keeps its iteration's name whether or not it is a top candidate: one label in every table.
    start_name = next((n for n, r in picked.items() if r.key == first.key), f"iter-{first.iter}")
    if start_name not in picked and first.dsl:
        mappers[start_name] = first.dsl
        picked[start_name] = first  # a candidate too: measured with the others, it may well be the fastest
    for name in BASELINES[settings.get("baseline", "none")]:
        mappers[name] = name
    evaluator = _evaluator(settings["app"], settings)
    if (store.root / "final").exists():  # an interrupted comparison's: kept, never used
        (store.root / "final").rename(store.root / f"final-{_next_final(store.root)}")
    measured = protocol.measure_together(bench, mappers, rounds, store.root / "final",
                                         min_time_s=evaluator.min_time_s or 0, after_round=after_round,
                                         **evaluator.run_options())
    finalists = [n for n in picked if measured[n].ok]
    if not finalists:  # every candidate and the start failed now: keep the loop's choice, without comparisons
        best_name = next(iter(picked))
    else:
        best_name = max(finalists, key=lambda n: measured[n].estimate.value)
    best = measured[best_name]
    vs = {}
    for name, m in measured.items():
        if name == best_name:
            continue
        vs[name] = (protocol.compare(best.estimate.values, m.estimate.values, protocol.MIN_INTERVAL_VALUES).to_json()
                    if best.ok and m.ok and m.estimate.value > 0 else None)
    summary = {"best": best_name, "best_iter": picked[best_name].iter, "best_dsl": picked[best_name].dsl,
               "start": start_name, "rounds": rounds, "unit": best.unit, "min_time_s": evaluator.min_time_s or 0,
               "measured": {n: {**m.to_json(), "run_dirs": relative_run_dirs(m.run_dirs, store.root)}
                            for n, m in measured.items()}, "vs": vs}  # relative to the folder, which can be moved
    if "default" in measured and own_mapper_of(settings):  # the mapper the `default` reference ran, named by the texts
        summary["own_mapper"] = own_mapper_of(settings)
    # How the results were checked, as compare counts it: the iterations (where measured), the references and the
    # calibration, and this comparison's runs.
    from mapperopt.optimizer.compare import check_kinds

    finals = [r for m in measured.values() for d in m.run_dirs
              if (store.root / d / "result.json").is_file()
              and (r := readable_result(store.root / d / "result.json")) is not None]
    summary["check_kinds"] = check_kinds([], [*(r.result for r in store.records if r.result and r.cached_from is None),
                                              *set_up_results(store.root), *finals])
    kept = sorted((p for p in store.root.glob("final-*") if p.is_dir() and p.name[6:].isdigit()),
                  key=lambda p: int(p.name[6:]))
    replaced = [p.name for p in kept if (p / "summary.json").exists()]
    if replaced:
        summary["replaced"] = replaced
    interrupted = [{"folder": p.name, "mappers": sorted(m.name for m in p.iterdir() if m.is_dir())}
                   for p in kept if not (p / "summary.json").exists()]
    if interrupted:
        summary["interrupted"] = interrupted
    if "app_description" in settings and (settings.get("start") == "default" or "default" in measured):
        # What a program maps otherwise than Legion's default mapper (the default start expresses it in the search's
        # terms: one Layout line for all tasks, say): none, and its comparison with the default mapper is noise.
        from mapperopt.benchmarks.userapp import own_mapper
        from mapperopt.optimizer.space import SearchSpace

        space = SearchSpace(settings["app_description"], settings["machine"])
        # without --mapper, a program with its own mapper maps with it: the `default` reference is not Legion's
        # default mapping, and the keys say which one the lists compare with
        own = own_mapper(d for n in picked for d in measured[n].run_dirs) or own_mapper_of(settings)
        key = "_vs_legion_default" if own else "_vs_default"

        def differences(dsl: str) -> list[str]:
            try:
                return space.default_mapper_differences(dsl)
            except MapperoptError as exc:
                return [f"not evaluated ({exc.message.splitlines()[0]})"]

        if settings.get("start") == "default" and first.dsl:
            summary["start" + key] = differences(first.dsl)
        if "default" in measured and summary["best_dsl"]:
            summary["best" + key] = differences(summary["best_dsl"])
    store.write_outputs(final_pick=summary["best_iter"], summary=summary)
    store.write_summary(summary)
    return summary


def _next_final(root: Path) -> int:
    """The N of the next free `final-N/` of the tuning folder `root`."""
    return 1 + max((int(p.name[6:]) for p in root.glob("final-*") if p.name[6:].isdigit()), default=0)


def _set_aside_final(root: Path, say: Callable[[str], Any]) -> Path:
    """Moves the final comparison of the finished tuning folder `root` (summary.json and the executions in final/)
    to the next free `final-N/`, with the run folders its summary names, before a longer run's first new iteration:
    nothing measured is lost (the new summary.json lists them under `replaced`). A damaged summary.json is moved as
    it is, and `say` notes it. A file named final is refused before (`tune`). Returns the `final-N/` folder.
    """
    kept, executions = root / f"final-{_next_final(root)}", root / "final"
    try:
        summary = read_json(root / "summary.json", fields={"measured?": {str: {"run_dirs?": [str]}}})
    except MapperoptError as exc:
        say(f"Note: {exc.message}: it is kept as it is in {kept.name}/ with the final comparison it summarised, and "
            "a new one is measured at the end.")
        if executions.exists():
            executions.rename(kept)
        kept.mkdir(exist_ok=True)
        (root / "summary.json").rename(kept / "summary.json")
        return kept
    for m in summary.get("measured", {}).values():
        m["run_dirs"] = [os.path.relpath(kept / p.relative_to(executions), root)
                         if (p := folder_path(d, root)).is_relative_to(executions) else d
                         for d in m.get("run_dirs", [])]
    if executions.exists():
        executions.rename(kept)  # first: until summary.json follows, the folder still reads as finished
    kept.mkdir(exist_ok=True)
    write_atomically(kept / "summary.json", json.dumps(summary, indent=2) + "\n")
    (root / "summary.json").unlink()
    return kept


def _label(name: str, own_mapper: str | None) -> str:
    """How tune's lines name the reference or candidate `name`: the `default` reference as the program's own mapper
    where it ran that one (`own_mapper`, its name; `reference_name`)."""
    return reference_name(name, own_mapper) if name == "default" and own_mapper else name


def _print_baselines(console: Any, root: Path, settings: dict, bench: Any = None, run_unit: str = "") -> None:
    """The reference mappers' throughputs with their unit, and what makes them unreliable
    (`protocol.noise_warnings` as `noise_options` shapes it for the program `bench`, by default the benchmark
    settings.json names; measured with exactly --repeats executions each), from their run folders; one whose folder
    is gone (deleted) with the unit of the others or of the run's iterations (`run_unit`), and a note that says
    so."""
    from rich.markup import escape

    own = own_mapper_of(settings)
    results, missing = {}, []
    for name in settings.get("baselines") or {}:
        try:
            results[name] = read_json(root / f"baseline-{name}" / "result.json", fields=RESULT_FIELDS)
        except FileNotFoundError:
            missing.append(name)
            continue
        except MapperoptError as exc:
            console.print(f"Note: {exc.message}: its unit and noise are not shown (its figure is in settings.json).",
                          markup=False)
    if settings.get("baselines"):
        units = {name: r.get("unit") or "" for name, r in results.items()}
        run_unit = next((u for u in units.values() if u), run_unit)  # every mapper of a program has the same unit
        units.update({name: run_unit for name in missing})
        # Not like with like: the progress lines' figures are each measured later, under another load; the best so
        # far is chosen by the loop's rule (`loop._becomes_best`), said here as it is.
        figures = ", ".join(f"{_label(name, own)} {protocol.figure(units.get(name, ''), value)}"
                            for name, value in settings["baselines"].items())
        print_whole(console, "Baselines", figures + " (measured once, before the search: each iteration below is "
                    "measured later, in its own run under the machine's load of its moment, so compare the "
                    "iterations' figures with them only roughly; an iteration becomes the best so far only when its "
                    f"figure is higher than the best's beyond the noise (the {100 * protocol.CONFIDENCE:.0f} % "
                    "interval of their ratio above 1) or, within the noise, when it is still higher with both "
                    "re-measured together; the final comparison measures the best, the start and these mappers "
                    "together)", "none")
    for name in missing:
        console.print(f"Note: {root / f'baseline-{name}'}/ is missing (deleted?): it held the measurement of "
                      f"{reference_name(name, own)} above, which is settings.json's figure, without its noise; the "
                      "final comparison measures that mapper anew.", markup=False)
    for name, reason in (settings.get("baseline_failures") or {}).items():
        console.print(f"[yellow]No baseline of {reference_name(name, own)}[/] ({escape(reason)}).")
    measured = {_label(name, own): (protocol.estimate(protocol.values_of(r)), protocol.measured_time(r))
                for name, r in results.items()}
    how = noise_options(settings.get("app") if bench is None else bench, settings.get("size"),
                        settings.get("timeout_s"), list(results.values()))
    for title, text in protocol.noise_warnings(measured, "a higher --repeats", settings.get("min_time_s") or 0, **how):
        print_whole(console, f"{title} of the baselines", text, "yellow")


def _ordered(measured: dict) -> list[tuple[str, dict]]:
    """The final comparison's mappers in the order its table gives them: the reference mappers (expert, default),
    then the candidates and the start by throughput, the fastest first, then those that failed."""
    def key(item: tuple[str, dict]) -> tuple:
        name, m = item
        reference = ("expert", "default").index(name) if name in ("expert", "default") else 2
        return reference, m["estimate"] is None, -(m["estimate"] or {}).get("value", 0)

    return sorted(measured.items(), key=key)


def _noisy(summary: dict, name: str) -> bool:
    """Whether the final comparison's measurement of its best or of `name` is too noisy to count a difference."""
    return any(protocol.Estimate.from_json(summary["measured"][n]["estimate"]).noisy for n in (summary["best"], name))


def _same_mapping(summary: dict, name: str, default_start: bool) -> bool:
    """Whether `name` is the default mapper and the best maps nothing otherwise than it (`best_vs_default`,
    `final_comparison`; a summary written before it has only `start_vs_default`, for a best that is the start
    program written as Legion's default mapping, `default_start`): the same mapping, whose difference is never a
    gain nor a reason to switch. Never for a program with its own mapper, which that reference ran."""
    if name != "default" or "best_vs_legion_default" in summary or summary.get("own_mapper"):
        return False  # the `default` reference ran the program's own mapper, not Legion's default mapping
    if "best_vs_default" in summary:
        return not summary["best_vs_default"]
    return default_start and summary["best"] == summary["start"] and not summary.get("start_vs_default")


def _comparison(summary: dict, name: str) -> protocol.Comparison | None:
    """The final comparison's ratio of its best to `name` (None when not compared), without an interval when either
    was measured by fewer than `protocol.MIN_INTERVAL_VALUES` executions (`protocol.too_few`; also for a summary
    written before that rule, which called such a ratio significant)."""
    vs = summary["vs"].get(name)
    if vs is None:
        return None
    counts = [len(summary["measured"][n]["estimate"]["values"]) for n in (summary["best"], name)]
    return protocol.Comparison(vs["ratio"], vs["low"], vs["high"], protocol.too_few(*counts))


def _gain(summary: dict, name: str) -> bool:
    """Whether the final comparison's best measured significantly faster than `name`, from measurements that are
    not too noisy to count it (as `verdict` counts a gain)."""
    c = _comparison(summary, name)
    return bool(c and c.significant and c.ratio > 1 and not _noisy(summary, name))


def _not_compared(summary: dict, name: str) -> str:
    """Why the final comparison has no ratio of its best to `name`: which of the two failed ("iter-2 failed"; every
    candidate failing leaves the loop's pick as the best), or that `name` measured 0."""
    own = summary.get("own_mapper")
    failed = [_label(n, own) for n in (summary["best"], name) if summary["measured"][n]["estimate"] is None]
    return f"{' and '.join(failed)} failed" if failed else f"{_label(name, own)} measured 0"


def not_shown(c: protocol.Comparison, noisy: bool) -> str:
    """Why the ratio `c` shows no difference, as `throughput_ratio`'s `how`: its lack of an interval, where it has
    none; "from measurements too noisy to count" where it is clear of 1 but either side's measurement is too noisy
    (`noisy`: `Estimate.noisy`) to count it; else "not significant"."""
    return c.no_interval or ("from measurements too noisy to count" if noisy and c.significant else "not significant")


def throughput_ratio(c: protocol.Comparison, label: str, how: str) -> str:
    """The ratio `c` of a throughput to that of the mapper `label` with its direction in words, and `how` it counts:
    "0.91x the default mapper's throughput (9 % slower, not significant)"; "0.91x the default mapper" alone reads, to
    one who thinks in times, as faster. The percentage has the ratio's decimals less two (none where it rounds to 0)."""
    direction = _change(c)
    return f"{c.ratio:.{c.decimals()}f}x {label}'s throughput ({direction}{', ' * bool(direction)}{how})"


def _change(c: protocol.Comparison) -> str:
    """`throughput_ratio`'s direction of `c`: "9 % slower"; "" where the percentage rounds to 0."""
    change = f"{100 * abs(c.ratio - 1):.{c.decimals() - 2}f}"
    return "" if float(change) == 0 else f"{change} % {'faster' if c.ratio > 1 else 'slower'}"


def verdict(summary: dict, default_start: bool = False) -> str:
    """One line that answers "did tuning beat the references?" from the final comparison (`final_comparison`'s
    summary): the best candidate against each reference mapper measured with it (against the start without any),
    beating one only with a significant ratio above 1 from measurements that are not noisy. With `default_start`,
    the start is the default mapping itself: neither it nor a best not shown faster than it gains over the default
    mapper."""
    best, measured, start = summary["best"], summary["measured"], summary["start"]
    others = [n for n in ("expert", "default") if n in measured] or ([start] if start != best else [])
    if not others:
        return "Verdict: the best is the start program itself: tuning found nothing faster."
    if measured[best]["estimate"] is None:  # every candidate and the start failed: the search's pick, unmeasured
        failed = [("the start" if n == start else reference_name(n, summary.get("own_mapper"))) for n in others
                  if measured[n]["estimate"] is None]
        return (f"Verdict: nothing was compared: the best ({best}) failed in the final comparison"
                + (f", and so did {' and '.join(failed)}." if failed else "."))
    beaten, parts, intervals, uncompared = [], [], {}, []  # intervals: label -> whether its ratio has one
    # The default start maps as Legion's default mapper does: a gain over that mapper but not over the start is the
    # machine's noise or the DSL mapper's own cost, not a gain of the mapping (as next_step says).
    start_gain = not (default_start and not summary.get("own_mapper") and best != start
                      and _comparison(summary, start) and not _gain(summary, start))
    unmapped = False
    for name in others:
        c = _comparison(summary, name)
        label = "the start" if name == start else reference_name(name, summary.get("own_mapper"))
        if c is None:
            uncompared.append(f"{label} ({_not_compared(summary, name)})")
            continue
        noisy, same = _noisy(summary, name), _same_mapping(summary, name, default_start)
        intervals[label] = not c.no_interval
        gain = c.significant and c.ratio > 1 and not noisy and not same
        caveat = gain and name == "default" and not start_gain
        unmapped |= caveat
        if gain and not caveat:
            beaten.append(label)
        # Noisy: a ratio outside its interval that still does not count (the rule above), said as such.
        too_noisy = (f"a difference beyond the {100 * protocol.CONFIDENCE:.0f} % intervals, but from measurements too "
                     f"noisy to trust: an interval wider than ±{100 * protocol.NOISY_HALF_WIDTH:.0f} %"
                     + (", so it does not count as beating it" if c.ratio > 1 else ""))
        # the same mapping never stands alone: "17 % faster, the same mapping" reads as a gain, shown or not
        shown = c.no_interval or ("not significant" if not c.significant else
                                  "significant but" if same else too_noisy if noisy else "significant")
        how = (shown if not same else f"{shown}: the same mapping" if shown != "significant but" else
               "significant but the same mapping: the machine's noise or the DSL mapper's own cost, not a gain")
        if caveat:
            how += (f", but not shown to differ from the start, which maps as {label} does: {_versus_start(summary)}; "
                    "so the machine's noise or the DSL mapper's own cost")
        parts.append(throughput_ratio(c, label, how))
    beat = " and ".join(beaten)
    them = "the start" if others == [start] else "the references" if len(others) > 1 else "the reference"
    # Too few executions for an interval: "no mapper beat" would read as measured slower, whatever the ratio.
    unshown = " and ".join(label for label, has in intervals.items() if not has)
    shown = " and ".join(label for label, has in intervals.items() if has)
    cannot = (f"can be said to beat {unshown if shown else them} without an interval (an interval takes "
              f"--final-rounds {protocol.MIN_INTERVAL_VALUES} or more)")
    head = (f"{best} beat {beat}" if beaten else "no gain of the mapping shown" if unmapped and not unshown else
            f"no mapper beat {them}" if not unshown else
            f"no mapper beat {shown}, and none {cannot}" if shown else f"no mapper {cannot}")
    said = (([f"measured {', '.join(parts)}"] if parts else [])
            + ([f"was not compared with {' or '.join(uncompared)}"] if uncompared else []))
    return f"Verdict: {head}; the best ({best}) {' and '.join(said)}."


def tests_size_note(bench: Any, size: str, root: Path | None = None) -> str | None:
    """Said by tune (at its start, and in its summary with the start program's share of the loop from iteration 1's
    profile in the tuning folder `root`, where it has one) and compare (at its start) when `size` is the tests' size:
    what its configuration says of it and of the sizes meant for tuning. None at another size, or for a program whose
    configuration says nothing of its sizes (a user's)."""
    from mapperopt.benchmarks.apps import TESTS_SIZE, size_descriptions

    config = load_config(bench)
    said = size_descriptions(config)
    tuning = [name for name, text in said.items() if "tuning" in text and name != size]
    if size != TESTS_SIZE or not tuning:
        return None
    share = ""
    if root is not None and (start := _start_result(root)) is not None:
        from mapperopt.autoguide.explain import loop_busy

        if (busy := loop_busy(*start)) is not None:
            share = (f": the start program's tasks ran {busy['busy']:.0f} % of each timed iteration (iteration 1's "
                     "profile), all a new mapping can win back")
    where = f"configs/{Path(config.path).name}"
    meant = "; ".join(f"--size {name} ({said[name]})" for name in tuning)
    return (f"Note: size {size} is the tests' size ({where}: {said.get(size, 'the default')}), where a mapper can "
            f"change little{share}. Meant for tuning: {meant}.")


def _start_result(root: Path) -> tuple[Any, list[dict]] | None:
    """(iteration 1's run, the start program's, in the tuning folder `root`; the rows of its task profile,
    `autoguide.explain.task_profile`'s), or None where they cannot be read."""
    from mapperopt.autoguide.explain import task_profile
    from mapperopt.records import RunResult

    try:
        data = json.loads((root / "iter-001" / "result.json").read_text())
        result = RunResult.from_json({**data, "run_dir": str(root / data["run_dir"])})
        return result, task_profile(result)
    except (OSError, ValueError, KeyError, TypeError, MapperoptError):
        return None


def mapping_cost_note(summary: dict, root: Path) -> str | None:
    """Said by tune after its Verdict where the final comparison (`summary`) measured the start program slower than
    Legion's default mapper (not a program's own mapper, which that reference ran) and iteration 1's profile in the
    tuning folder `root` shows short tasks: the DSL mapper's own cost per task mapping may be why
    (`mapping_overhead.short_task_cost`); None otherwise."""
    from mapperopt.benchmarks.mapping_overhead import short_task_cost

    start, measured = summary["start"], summary["measured"]
    figures = [((measured.get(n) or {}).get("estimate") or {}).get("value") for n in (start, "default")]
    if summary.get("own_mapper") or not all(figures) or figures[0] >= figures[1]:
        return None
    start_run = _start_result(root)
    # a benchmark's profiling execution runs other iterations than a measured one: its counts are no execution's
    if start_run is None or (start_run[0].profile or {}).get("iterations"):
        return None
    # the profile counts a whole execution's tasks: weighed against its wall time, not the metric (maybe one step's)
    result = start_run[0]
    walls = [a.wall_s for a in result.attempts if a.exit_code == 0 and a.result]
    walls = walls[-(result.settings.get("measured_runs") or len(walls)):]
    cost = short_task_cost(start_run[1], statistics.median(walls) if walls else None)
    return (f"Note: the start program ({start}) measured slower than Legion's default mapper, and {cost}: that cost "
            "may be the difference." if cost else None)


def measure_more(titles: list[str], command: str = "tune") -> str | None:
    """`next_step`'s first words where the final comparison's measurements were warned of as "Short measurement" or
    "Noisy measurement" (`titles`, `_print_summary`'s; `command` "compare": its final measurement's, "Short
    measurement in the final measurement", and its Next's): too short or noisy to conclude, and to `command` again as
    those warnings say (their options are not repeated); None where neither was."""
    where = " in the final measurement" if command == "compare" else ""
    warned = [f"{title}{where}" for title in ("Short measurement", "Noisy measurement") if f"{title}{where}" in titles]
    if not warned:
        return None
    what = " and ".join(f"too {word}" for word, title in (("short", "Short"), ("noisy", "Noisy"))
                        if f"{title} measurement{where}" in warned)
    measured = "the final measurement's executions" if where else "the final comparison's measurements"
    # a finished tune's final comparison is not measured again: only a new tune measures longer executions
    return (f"{measured} were {what} to conclude: {command} again as {' and '.join(warned)} above "
            f"say{'s' * (len(warned) == 1)}")


def next_step(summary: dict, default_start: bool = False, start_file: str | None = None,
              processors: tuple[int, int, int] | None = None, own_mapper: str | None = None,
              unsure: str | None = None, root: Path | None = None) -> str | None:
    """The summary's last line when the pick is no clear gain (`final_comparison`'s summary; `start_file`: tune's
    --start FILE): which program to keep, the start where the pick is not shown faster than it (as
    `best_mapper_line` counts a gain), and, where no candidate beat the references (as `verdict` counts beating one),
    the reference that measured significantly higher than the other (or that the two are not shown to differ), then
    how to search further; with 1 CPU processor and no GPU (`processors`: the run's CPU, GPU and utility processor
    counts), that there is no placement to tune, briefly (`no_placement`'s note, printed at the start of the run,
    says how to give more). None when the pick beat the start and every reference measured with it, on more than
    one processor, from measurements not warned of. `own_mapper`: the mapper a user's program registers itself
    (`own_mapper_of`), which runs without --mapper in place of Legion's default one. `unsure` (`measure_more`): said
    first where the pick is no clear gain, as the measurements could not show one, and where it is a gain, that the
    gain is not established. Where every
    candidate and the start failed in the final comparison, what to do instead (`_nothing_ran_step`; `root`: the
    tuning folder, which the comparison's run folders are relative to)."""
    best, start, measured = summary["best"], summary["start"], summary["measured"]
    if measured[best]["estimate"] is None:
        return _nothing_ran_step(summary, root, own_mapper or summary.get("own_mapper"))

    keep_start, refs = _kept_instead(summary, default_start)
    beat_default = _beats(summary, "default", default_start)
    parts = []
    if keep_start:
        n = start.removeprefix("iter-")
        own = own_mapper or summary.get("own_mapper")
        file = f"the start program ({start}" + (f", iter-{int(n):03d}/mapper.dsl" if n.isdigit() else "")
        if default_start and own and measured.get("default", {}).get("estimate") and not beat_default:
            # the measured own mapper is what to keep (said below), not the start the search found no gain over
            found = "best.dsl is not shown to be faster than" if best != start else "tuning found nothing faster than"
            parts.append(f"{found} {file}: Legion's default mapping written in the DSL)")
        else:
            # without --mapper, a program with its own mapper maps with it, not with Legion's default mapping
            keep = (f"keep {file}: Legion's default mapping written in the DSL; run it with --mapper and that file, "
                    f"as without --mapper the program's own mapper ({own!r}) runs)" if default_start and own else
                    "keep Legion's default mapper (run without --mapper)" if default_start else
                    f"keep your start program ({start_file})" if start_file else f"keep {file})")
            if default_start and not own and best != start:  # "it" would read as Legion's default mapper
                parts.append(f"{keep}: best.dsl is not shown to be faster than {file}), which maps as Legion's "
                             f"default mapper does{_versus_default(summary, beat_default)}")
            else:
                parts.append(f"{keep}: best.dsl is not shown to be faster than it here" if best != start else
                             f"{keep}: tuning found nothing faster")
    own = summary.get("own_mapper")  # the `default` reference ran it
    if parts and default_start and not own and refs == ["default"]:
        refs = []  # "keep Legion's default mapper" said it: the start is that mapping
    if refs and parts and start_file and not default_start:
        # one program to keep: the user's start, or a reference measured significantly higher than it
        parts = [_start_or_reference(summary, refs, start_file, parts[0], own)]
    elif refs:
        top = max(refs, key=lambda n: measured[n]["estimate"]["value"])
        use = "--mapper expert" if top == "expert" else "run without --mapper"
        names = [reference_name(n, own) for n in refs]
        head = f"no candidate beat {' or '.join(names)}"
        if len(refs) == 1:
            parts.append(f"{head} ({use})")
        else:  # one reference is pointed to only where it measured significantly higher than the other
            other = next(n for n in refs if n != top)
            values = [measured[n]["estimate"]["values"] for n in (top, other)]
            c = protocol.compare(*values, protocol.MIN_INTERVAL_VALUES)
            noisy = any(protocol.Estimate.from_json(measured[n]["estimate"]).noisy for n in (top, other))
            if c.significant and c.ratio > 1 and not noisy:
                ratio = throughput_ratio(c, reference_name(other, own), "significant")
                parts.append(f"{head} (the higher of them: {reference_name(top, own)} measured {ratio}; {use})")
            else:
                parts.append(f"{head}, and those two are not shown to differ: {reference_name(top, own)} measured "
                             f"{throughput_ratio(c, reference_name(other, own), not_shown(c, noisy))}")
    if parts and unsure:
        parts.insert(0, unsure)
    elif unsure:  # a gain from measurements warned of: not established, however far outside the noise it measured
        parts.append(f"{unsure}; until then best.dsl's gain is not established (it is printed above to inspect)")
    if no_placement(processors):  # said in full at the start of the run; its output holds it
        parts.append("1 CPU processor and no GPU: no placement to tune (see the note at the start)")
    if not parts:
        return None
    return next_line(parts, "run")


def _nothing_ran_step(summary: dict, root: Path | None, own: str | None) -> str:
    """`next_step`'s line where every candidate and the start failed in the final comparison (`summary`): where to
    read why the pick failed (its last run folder there, under `root`, the tuning folder, where given), then which
    mapper to keep: a reference that ran there, else, where the references failed too, that the program fails
    whatever the mapper; without references, the mapper the program runs without --mapper (`own`: its own)."""
    pick = summary["measured"][summary["best"]]
    run_dirs = pick.get("run_dirs") or []
    folder = (root / run_dirs[-1] if root else Path(run_dirs[-1])) if run_dirs else None
    where = f"; its run's output and AutoGuide's feedback on it: {folder}/stderr.txt, feedback.json" if folder else ""
    parts = [f"read why the pick ({summary['best']}) failed ({pick['reason'] or 'no reason recorded'}{where})"]
    refs = [n for n in ("expert", "default") if n in summary["measured"]]
    ran = [n for n in refs if summary["measured"][n]["estimate"]]
    if ran:
        parts.append(f"{keep_named(ran[0], own)}, which ran in the final comparison")
    elif refs:
        names = " and ".join(reference_name(n, own) for n in refs)
        parts.append(f"{names} failed there too, so the program fails whatever the mapper: make it run without "
                     "--mapper first")
    else:
        parts.append(f"{keep_named('default', own)}: no mapper of this tune is shown to work")
    return next_line(parts, "run")


def _beats(summary: dict, name: str, default_start: bool) -> bool:
    """Whether the final comparison's best gained over `name` (`_gain`) with another mapping than it (never over
    Legion's default mapper where it maps as that one does, `_same_mapping`)."""
    return _gain(summary, name) and not _same_mapping(summary, name, default_start)


def _kept_instead(summary: dict, default_start: bool) -> tuple[bool, list[str]]:
    """What `next_step` says to keep rather than the final comparison's pick (`final_comparison`'s summary, its best
    measured): (whether the start: the pick is the start, or not shown faster than it; the reference mappers
    measured, where the pick beat none of them (`_beats`), else [])."""
    best, start, measured = summary["best"], summary["start"], summary["measured"]
    refs = [n for n in ("expert", "default") if measured.get(n, {}).get("estimate")]
    return (best == start or (start in measured and not _beats(summary, start, default_start)),
            [] if any(_beats(summary, n, default_start) for n in refs) else refs)


def _versus_default(summary: dict, beat_default: bool) -> str:
    """The end of `next_step`'s words that best.dsl is not shown faster than the start, Legion's default mapping in
    the DSL: how it compared with the start and, where it beat Legion's default mapper (`beat_default`), that this
    gap is not the mapping's; else that it did not beat that mapper either (when measured)."""
    if not beat_default:
        return ", nor than Legion's default mapper here" if summary["measured"].get("default", {}).get("estimate") \
            else " here"
    ratio = f" (it measured {_versus_start(summary)})" if _comparison(summary, summary["start"]) else ""
    default = throughput_ratio(_comparison(summary, "default"), "Legion's default mapper", "significant")
    return (f"{ratio}, though it measured {default}: a difference of the same mapping, so the machine's noise or the "
            "DSL mapper's own cost, not a gain of the mapping")


def _versus_start(summary: dict) -> str:
    """The best's ratio to the start it is not shown faster than, its direction and why not ("1.01x the start's
    throughput, 1 % faster, not significant": `throughput_ratio`'s words without parentheses, said within some)."""
    c = _comparison(summary, summary["start"])
    why = not_shown(c, _noisy(summary, summary["start"]))
    return ", ".join(filter(None, [f"{c.ratio:.{c.decimals()}f}x the start's throughput", _change(c), why]))


def _start_or_reference(summary: dict, refs: list[str], start_file: str, keep_start: str, own: str | None) -> str:
    """The one program to keep where the pick is not shown faster than the user's start (`keep_start` says to keep
    it) and no candidate beat the references `refs`: the reference measured significantly higher than the start
    (the highest such), else the start, with how the highest reference compared with it."""
    measured, start = summary["measured"], summary["start"]
    start_values = measured[start]["estimate"]["values"]
    noisy_start = protocol.Estimate.from_json(measured[start]["estimate"]).noisy
    compared = []
    for n in sorted(refs, key=lambda n: -measured[n]["estimate"]["value"]):
        c = protocol.compare(measured[n]["estimate"]["values"], start_values, protocol.MIN_INTERVAL_VALUES)
        noisy = noisy_start or protocol.Estimate.from_json(measured[n]["estimate"]).noisy
        compared.append((n, c, noisy))
    name, c, noisy = compared[0]
    higher = [(n, c) for n, c, noisy in compared if c.significant and c.ratio > 1 and not noisy]
    if higher:
        name, c = higher[0]
        use = "use it (--mapper expert)" if name == "expert" else "run without --mapper"
        return (f"keep {reference_name(name, own)} ({use}): against your start program ({start_file}) it measured "
                f"{throughput_ratio(c, 'the start program', 'significant')}, and no candidate beat it")
    why = not_shown(c, noisy)
    names = [reference_name(n, own) for n in refs]
    which = f"{names[0]} is not" if len(names) == 1 else f"neither {names[0]} nor {names[1]} is"
    return (f"{keep_start}; {which} shown to be faster than it: {reference_name(name, own)} measured "
            f"{throughput_ratio(c, 'your start program', why)}")


def no_placement(processors: tuple[int, int, int] | None) -> str | None:
    """With 1 CPU processor and no GPU (`processors`: the run's CPU, GPU and utility processor counts), that there is
    no placement to tune and how to give more; else None."""
    if not processors or processors[:2] != (1, 0):  # every task on the one CPU: nothing to place
        return None
    util = processors[2]
    cores = len(os.sched_getaffinity(0))
    has = f"this machine gives the run {cores} core{'s' * (cores != 1)}, {util} of them the utility processor's"
    return ("with 1 CPU processor and no GPU every task runs on that one processor, so there is no placement to "
            f"tune: {has}" + (f": give --cpus {cores - util}" if cores - util > 1 else
                              ", so no more CPU processors fit here; on a machine with more cores, give --cpus N (a "
                              f"core each, besides the utility processor{'s' * (util != 1)}'s)"))


def still_tunable(space: Any) -> str:
    """What the search of `space` can change where there is no placement to tune (`no_placement`): its decisions
    other than processor kinds and index and single task maps."""
    groups = {d.group for d in space.decisions}
    words = [word for group, word in (("memory", "memories"), ("layout", "layouts"), ("limit", "instance limits"),
                                      ("collect", "memory collection (CollectMemory)")) if group in groups]
    if not words:
        return "Nothing else this tune searches changes the run here."
    return f"This tune can still change the {joined_names(words)}, not where tasks run."


def next_line(parts: list[str], extended: str) -> str:
    """The `Next:` line of tune's and compare's summaries: what to do (`parts`), then how to search further: the same
    command with a larger --iters, which extends the `extended` ("run", "comparison") rather than starting anew."""
    return (f"Next: {'; '.join(parts)}. To search further, give the same command a larger --iters (it extends this "
            f"{extended}).")


def keep_reference(name: str, own_mapper: str | None = None) -> tuple[str, str]:
    """How the summaries name the reference mapper `name` ("default" or "expert") and say to keep it: e.g. ("the
    expert mapper", "use it (--mapper expert)"); the `default` reference of a program with its own mapper
    (`own_mapper`) is that mapper."""
    return {"default": ("the program's own mapper" if own_mapper else "Legion's default mapper",
                        "keep it (run without --mapper)"),
            "expert": ("the expert mapper", "use it (--mapper expert)")}[name]


def keep_named(name: str, own_mapper: str | None = None) -> str:
    """`keep_reference`'s advice with the mapper named where it says "it": e.g. "use the expert mapper (--mapper
    expert)"."""
    named, keep = keep_reference(name, own_mapper)
    verb, _, how = keep.partition(" it ")
    return f"{verb} {named} {how}"


def run_command(program: list[str], mapper: Path, request: dict) -> str:
    """The `mapperopt run` command that runs `mapper` on the program whose words are `program` (a benchmark's name,
    or `--app` and its options: `spec_words`) as `request` (size, processors, memories, timeout, app_args) asked."""
    words = _run_words(shlex.join(program), {"request": request})
    at = words.index("--") if "--" in words else len(words)
    return toolchain.command("run", *words[:at], "--mapper", str(mapper), *words[at:])


def best_run_command(bench: Any, settings: dict, mapper: Path) -> str:
    """The `mapperopt run` command (`run_command`) that runs `mapper` on `bench` (a benchmark's name or a user's
    program) as a tuning's or a comparison's `settings` (size, cpus, gpus, memory, timeout_s, app_args) ran its
    mappers: the processor counts named where they differ from what `run` gives without --cpus and --gpus."""
    from mapperopt.benchmarks.apps import processor_counts
    from mapperopt.benchmarks.userapp import UserApp, spec_words

    app_args = [str(a) for a in settings.get("app_args") or []]
    try:
        size = load_config(bench).size(settings.get("size", "ci"))
        cpus, gpus = processor_counts(size.cpus, size.gpus, app_args)  # what `run` gives without --cpus, --gpus
    except MapperoptError:  # a size the configuration no longer has: the counts are named
        cpus = gpus = None
    request = {"size": settings.get("size", "ci"),
               "cpus": settings.get("cpus") if settings.get("cpus") != cpus else None,
               "gpus": settings.get("gpus") if settings.get("gpus") != gpus else None,
               **(settings.get("memory") or {}), "timeout_s": settings.get("timeout_s"), "app_args": app_args}
    return run_command(spec_words(bench) if isinstance(bench, UserApp) else [str(bench)], mapper, request)


def drift_line(summary: dict, store: TuneStore, unit: str, default_start: bool = False) -> str | None:
    """One line when the iterations' "best" column changed (its first figure to its last) while the final
    comparison's pick is not shown faster than the start (as `next_step` counts it), and every reference's figure
    measured before the search (settings' `baselines`) lies outside its 90 % interval in the final comparison, on the
    column's side: the machine's speed changed during the tune, which the column's change follows. None otherwise,
    or when a figure is missing (a reference that failed, an estimate without an interval)."""
    best, start, measured = summary["best"], summary["start"], summary["measured"]
    column = [r.best_throughput for r in store.records if _succeeded(r)]
    before = store.settings.get("baselines") or {}
    if not column or column[0] == column[-1] or measured[best]["estimate"] is None or not before:
        return None
    if best != start and _gain(summary, start):
        return None  # the pick is shown faster than the start: the column's change may be the search's own
    rose = column[-1] > column[0]
    moved = []
    for name, value in before.items():
        est = (measured.get(name) or {}).get("estimate")
        if not est or len(est["values"]) < protocol.MIN_INTERVAL_VALUES:
            return None
        if not (est["high"] < value if not rose else value < est["low"]):  # on the column's side, beyond the noise
            return None
        moved.append(f"{reference_name(name, summary.get('own_mapper'))} {protocol.figure(unit, value)} -> "
                     f"{protocol.figure(unit, est['value'])}")
    if not moved:
        return None
    how = "rise" if rose != bool(protocol.as_time(unit, 1)) else "fall"  # a time metric's column shows times
    return (f"The best column's {how} ({protocol.figure(unit, column[0])} -> {protocol.figure(unit, column[-1])}) "
            f"follows the references' own: measured before the search and again in the final comparison, "
            f"{' and '.join(moved)}, beyond their noise: the machine's speed changed during the tune, not the "
            "mapping.")


def pick_line(summary: dict, table_best: int) -> str | None:
    """The sentence that ties the final comparison's pick (`final_comparison`'s summary) to the iterations' table,
    whose `best` column ends at iteration `table_best` (the loop's best): the pick's figure is this comparison's, in
    which the pick was measured again together with the other mappers named; where the pick is another iteration,
    that it measured highest there. None where every candidate and the start failed (the search's pick, said so)."""
    best, measured, rounds = summary["best"], summary["measured"], summary["rounds"]
    if measured[best]["estimate"] is None:
        return None
    own = summary.get("own_mapper")
    others = joined_names([f"{n} (start)" if n == summary["start"] else _label(n, own) for n in measured if n != best])
    n, times = summary["best_iter"], f"{rounds} round{'s' * (rounds != 1)}"
    together = f"together with {others} in {times}, interleaved" if others else f"in {times}"
    same = "its figure above is this measurement's, not its row's in that table"
    if n == table_best:
        return f"The pick is iteration {n}, the iterations table's best, measured again {together}: {same}."
    return (f"The pick is iteration {n}, not the iterations table's best (iteration {table_best}): measured again "
            f"{together}, it measured highest of the candidates and the start; {same}.")


def best_mapper_line(summary: dict, path: Path, default_start: bool = False, start_file: str | None = None,
                     command: str | None = None, unsure: str | None = None) -> str:
    """The line above the best program (`final_comparison`'s summary; `path`: its best.dsl): the recommendation,
    unless a reference mapper measured significantly faster than it, from measurements that are not noisy (as
    `verdict` counts a gain); then it says to keep that reference, the fastest first; or unless it beat none of the
    reference mappers measured (`_kept_instead`); then it says that it is not shown faster than them. A line that
    speaks of another program (the start, a reference) ends by naming the program printed below it, the pick, and
    names the start by the user's own file (`start_file`: tune's --start FILE) where there is one; then, given the
    `command` that runs the pick (`best_run_command`), with it, last, as compare's `Best mapper:` line ends, where the
    pick is the program to run; where a reference is significantly faster or the Next line says to keep another
    program (`_kept_instead`), the pick is printed to inspect, without a command, as it is where every candidate and
    the start failed in the final comparison: then the line says that no mapper of the tune ran, claiming no best;
    and where the final comparison was warned of as too short or noisy (`unsure`, `measure_more`'s), as the Next
    line then says its gain is not established."""
    line = _best_mapper_line(summary, path, default_start, start_file)
    if not command:
        return line
    keep_start, refs = _kept_instead(summary, default_start)
    compared = summary["measured"][summary["best"]]["estimate"] is not None  # else it never ran: nothing to run
    if not compared or keep_start or refs or unsure or _faster(summary, default_start):
        return f"{line.removesuffix(':')}, printed below to inspect"
    return f"{line.removesuffix(':')}, printed below; run it with: {command}"


def _faster(summary: dict, default_start: bool) -> list[str]:
    """The reference mappers that measured significantly faster than the final comparison's best, from measurements
    that are not noisy (as `verdict` counts a gain), with another mapping than it; the fastest first."""
    faster = sorted((c.ratio, name) for name in ("default", "expert")
                    if (c := _comparison(summary, name)) and c.significant and c.ratio < 1
                    and not _noisy(summary, name) and not _same_mapping(summary, name, default_start))
    return [name for _, name in faster]


def _best_mapper_line(summary: dict, path: Path, default_start: bool, start_file: str | None) -> str:
    faster = _faster(summary, default_start)
    head = f"iteration {summary['best_iter']}, the final comparison's pick ({path})"
    pick = f"The pick, {path.name} (iteration {summary['best_iter']}):"  # the program printed below the line
    start, measured = summary["start"], summary["measured"]
    gain = _comparison(summary, start)
    if measured[summary["best"]]["estimate"] is None:  # every candidate and the start failed: no pick to claim
        return ("No mapper of this tune ran in the final comparison: every candidate and the start failed there "
                "(why: the failures under its table above; the Next line names the pick's run folder), so none is "
                f"shown to work and none is recommended. {path} holds the search's pick, iteration "
                f"{summary['best_iter']}:")
    if not faster and start != summary["best"] and start in measured and gain is None:
        # the start did not run (or measured 0): the pick is the best of those that ran, never "as good as the start"
        how = "failed" if measured[start]["estimate"] is None else "measured 0"
        return (f"Best mapper: iteration {summary['best_iter']} ({path}), the highest trimmed mean of the candidates "
                f"that ran in the final comparison; the start ({start}) {how} in it, so it is not compared. {pick}")
    if not faster and start != summary["best"] and start in measured and not _gain(summary, start):
        # the pick (the highest trimmed mean, the protocol's rule) is no evidence of a better mapper: said plainly,
        # with the start's own file (the user's --start FILE, and its copy in its iteration's folder)
        n = start.removeprefix("iter-")
        file = path.parent / f"iter-{int(n):03d}" / "mapper.dsl" if n.isdigit() else None
        copy = file if file is not None and file.exists() else None
        where = (f" ({start_file}" + (f", run as {copy}" if copy else "") + ")" if start_file else
                 f" ({copy})" if copy else "")
        head = (f"Best mapper: iteration {summary['best_iter']} ({path}), the highest trimmed mean among the "
                "candidates of the final comparison; but")
        if gain.no_interval:  # too few rounds: nothing is known of the noise, so nothing is said to be within it;
            # what was measured is said: the range of the ratios of the pick's executions to the start's
            mine = measured[summary["best"]]["estimate"]["values"]
            theirs = measured[start]["estimate"]["values"]
            low, high = min(mine) / max(theirs), max(mine) / min(theirs)
            d = protocol.Comparison(gain.ratio, low, high).decimals()
            why = f"{gain.no_interval}; --final-rounds {protocol.MIN_INTERVAL_VALUES} or more gives one"
            if low > 1 or high < 1:  # every execution of the pick on one side of every execution of the start
                faster = "faster" if low > 1 else "slower"
                what = (f"its one execution measured {low:.{d}f}x the start's ({start}), {faster}"
                        if len(mine) == len(theirs) == 1 else
                        f"its executions measured {low:.{d}f}-{high:.{d}f}x the start's ({start}), every one of "
                        f"them {faster}")
                return (f"{head.removesuffix('; but')}; {what}, though not shown significant ({why}). {pick}")
            return (f"{head} whether it is faster than the start ({start}) is unknown: its executions measured "
                    f"{low:.{d}f}-{high:.{d}f}x the start's, some faster and some not, with no "
                    f"{100 * protocol.CONFIDENCE:.0f} % interval ({why}), so the start program{where} may be as "
                    f"good. {pick}")
        if gain.significant:  # beyond the intervals, but from noisy measurements (`verdict` counts no gain either)
            return (f"{head} its difference from the start ({start}) is not counted, its measurements being too "
                    f"noisy (see above), so the start program{where} may be as good. {pick}")
        return (f"{head} no mapper measured significantly better than the start ({start}): the difference is "
                f"within the noise, so the start program{where} is as good by these measurements. {pick}")
    keep = {n: keep_reference(n, summary.get("own_mapper")) for n in ("default", "expert")}
    if not faster:
        _, refs = _kept_instead(summary, default_start)
        if not refs:
            return f"Best mapper: {head}:"
        # no clear gain over a reference, which the Next line then says to keep: said here, with the ratios
        ratios = [f"{keep[n][0]} (measured at {c.ratio:.{c.decimals()}f}x its throughput)"
                  if (c := _comparison(summary, n))
                  else keep[n][0] for n in refs]
        return (f"Best mapper found: {head}, but not shown faster than {' or '.join(ratios)}: the Next line, last, "
                f"says what to keep. {pick}")
    first, others = faster[0], [keep[n][0] for n in faster[1:]]
    also = f" ({others[0]} is significantly faster too)" if others else ""
    return (f"Best mapper found: {head} — but {keep[first][0]} is significantly faster here; {keep[first][1]}{also}. "
            f"{pick}")


def _print_summary(console: Any, summary: dict, unit: str, default_start: bool = False,
                   calibrated: bool = True, timeout_s: float | None = None,
                   start_up_s: float | None = None, wall: bool = False, larger: str = "a larger --size") -> list[str]:
    """The final comparison as a table and one line per comparison, saying plainly when a difference is not
    significant, when a measurement is too noisy or short to trust (`protocol.noise_warnings`; `calibrated`: False
    for a user's program; `timeout_s`: the run's --timeout, None without one; `start_up_s`: what an execution
    costs besides its measured time; `wall`: a user's program measured by its wall time), what was cut short
    (`interrupted`),
    and, with `default_start` (the start program is Legion's default mapper in the DSL), that the start and the
    default mapper are the same mapping. Returns the titles of the noise warnings it printed ("Short
    measurement"...)."""
    from rich.markup import escape
    from rich.table import Table

    rounds = summary["rounds"]
    # wrapped here: a console that wraps nothing itself (soft_wrap, tune's) printed it as one line of 250 characters
    title = (f"Measured together, {rounds} interleaved round{'s' * (rounds != 1)} each (trimmed mean, "
             f"{protocol.CONFIDENCE:.0%} interval, spread = (max - min) / median; best vs it: the ratio of the best's "
             "figure to the row's, with its interval); the reference mappers first, then the candidates from the "
             "fastest")
    table = Table(title=wrap_whole(title, console.width) if wraps(console) else title)
    # the figures' words keep their width (a narrow console, e.g. not a terminal, cut `0.00124-0.00179` to
    # `0.00124-0.001…`); a cell wraps between them
    def figure(*throughputs: float) -> str:  # a time metric's time alone, as the iterations table gives it: its
        # throughput beside it (`protocol.figure`) made the table wider than 80 columns
        return protocol.as_time(unit, *throughputs).strip(" ()") or protocol.figure(unit, *throughputs)

    def value(e: dict) -> str:
        return figure(e["value"])

    def interval(e: dict) -> str:  # none from too few executions (`protocol.too_few`), rather than a false one
        few = len(e["values"]) < protocol.MIN_INTERVAL_VALUES
        return "-" if few else figure(e["low"], e["high"])

    def spread(e: dict) -> str:  # one execution has none: "0%" would look exact (said under the table)
        return "-" if len(e["values"]) == 1 else f"{e['spread']:.0%}"

    figures = [m["estimate"] for m in summary["measured"].values() if m["estimate"]]
    metric = "time" if protocol.as_time(unit, 1) else "throughput"
    widths = {metric: max([len(w) for e in figures for w in value(e).split()], default=0),
              "interval": max([len(w) for e in figures for w in interval(e).split()], default=0)}
    for col in ("mapper", metric, "interval", "spread", "best vs it"):
        table.add_column(col, min_width=widths.get(col))
    own = summary.get("own_mapper")
    labels = {"default": _label("default", own), summary["start"]: f"{summary['start']} (start)",
              summary["best"]: f"{summary['best']} (best)"}
    if summary["start"] == summary["best"]:
        labels[summary["best"]] = f"{summary['best']} (start, best)"
    # A reason that every row would repeat is said once, under the table (a narrow console wrapped each row's
    # copy over several lines): why ratios have no interval, where all share one, and why each mapper failed.
    unshown = {c.no_interval for name in summary["measured"] if name != summary["best"]
               and (c := _comparison(summary, name)) and c.no_interval}
    once = next(iter(unshown)) if len(unshown) == 1 else None
    failed: dict[str, list[str]] = {}  # reason -> the mappers that failed with it
    below = []
    for name, m in _ordered(summary["measured"]):
        est = m["estimate"]
        c = _comparison(summary, name)
        if est is None:
            failed.setdefault(m["reason"] or "no reason recorded", []).append(labels.get(name, name))
            table.add_row(labels.get(name, name), "[red]failed[/]", "", "", "")
            continue
        ratio = "-" if name == summary["best"] or not c else (
            # the ratio's own interval: two overlapping throughput intervals can still give a significant ratio
            f"{c.ratio:.{c.decimals()}f}x" if c.no_interval and c.no_interval == once else
            c.text() + ("" if c.significant or c.no_interval else " [yellow](n.s.)[/]"))
        table.add_row(labels.get(name, name), value(est), interval(est), spread(est), ratio)
    console.print(table)
    if any(len(e["values"]) < protocol.MIN_INTERVAL_VALUES for e in figures):
        below.append(f"No interval (-) from fewer than {protocol.MIN_INTERVAL_VALUES} executions"
                     + ("; no spread (-) from one" if any(len(e["values"]) == 1 for e in figures) else "") + ".")
    if once:
        below.append(f"Best vs it: {once}.")
    below += [f"{', '.join(names)} failed: {reason}" for reason, names in failed.items()]
    for line in below:
        console.print(line, markup=False)
    estimates = {name: protocol.Estimate.from_json(m["estimate"]) for name, m in summary["measured"].items()
                 if m["estimate"]}
    warned = []
    for title, text in protocol.noise_warnings({_label(name, own): (est, summary["measured"][name].get("time_s"))
                                                for name, est in estimates.items()}, "a higher --final-rounds",
                                               summary.get("min_time_s", protocol.MIN_TIME_S), calibrated, timeout_s,
                                               None if calibrated else protocol.untimed(unit), start_up_s,
                                               wall=wall, larger=larger):
        print_whole(console, title, text, "yellow")
        warned.append(title)
    from mapperopt.optimizer.compare import checked_by

    if checked := checked_by(summary.get("check_kinds") or {}).strip():  # e.g. Pennant's energy check alone
        console.print(checked, markup=False)
    cut = summary.get("interrupted") or []
    if len(cut) == 1:
        console.print(f"[yellow]Not used:[/] {escape(cut[0]['folder'])}, a final comparison without its summary.json "
                      "(cut short before it ended, or its summary.json was lost; it holds runs of "
                      f"{escape(', '.join(cut[0]['mappers']) or 'no mapper')}); kept and named in summary.json under "
                      "`interrupted`.")
    elif cut:
        held = [f"{c['folder']} (runs of {', '.join(c['mappers']) or 'no mapper'})" for c in cut]
        console.print("[yellow]Not used:[/] " + escape(", ".join(held)) + ": final comparisons without their "
                      "summary.json (cut short before they ended, or their summary.json was lost); kept and named in "
                      "summary.json under `interrupted`.")
    best = summary["best"]
    for name in (summary["start"], "default", "expert"):
        c = _comparison(summary, name)
        if name == best or name not in summary["measured"]:
            if name == best:
                print_wrapped(console, f"The best is the start program ({name}) itself: tuning found nothing "
                              "faster.", markup=False)
            continue
        if c is None:
            print_wrapped(console, f"Best ({best}) vs {_label(name, own)}: not compared "
                          f"({_not_compared(summary, name)} in this comparison).", markup=False)
            continue
        if _same_mapping(summary, name, default_start):
            why = ("the start program is Legion's default mapper written in the DSL, --start default"
                   if default_start and best == summary["start"] else f"{best} maps as Legion's default mapper")
            print_wrapped(console, f"Best ({best}) vs default: the same mapping ({why}), measured at "
                          f"{c.describe()}: the machine's noise or the two mappers' own overhead, not a gain.",
                          markup=False)
            continue
        if c.no_interval:
            verdict = ""  # said in the ratio's parenthesis
        elif not c.significant:
            verdict = " [yellow]The difference is within the noise.[/]"
        elif estimates[best].noisy or estimates[name].noisy:
            # The rule counts no difference from such measurements (docs/tuning.md, point 7): said with its reason
            # rather than calling the ratio "significant" and then not counting it.
            # printed as the Noisy measurement line prints them: 10.3, not 10, beside "exceed the ±10 %"
            wide = " and ".join(f"{_label(n, own)}'s ±"
                                f"{protocol._above(100 * estimates[n].half_width, 100 * protocol.NOISY_HALF_WIDTH)} %"
                                for n in (best, name) if estimates[n].noisy)
            verdict = (f" [yellow]Not counted as a difference: {wide} (above) exceed the ±"
                       f"{100 * protocol.NOISY_HALF_WIDTH:.0f} % within which a measurement's difference counts, as a "
                       "changing load moves such measurements more than their intervals show (Noisy measurement "
                       "above says how to measure again).[/]")
        else:
            verdict = ""
        start = default_start and best == summary["start"] and name == "default"
        differs = summary.get("start_vs_default") if start else None
        legion = summary.get("start_vs_legion_default") if start else None  # the reference ran the program's own
        ratio = c.describe()
        if c.significant and (estimates[best].noisy or estimates[name].noisy):
            ratio = ratio.replace(": significant)", ": clear of 1, from noisy measurements)")
        print_wrapped(console, f"Best ({escape(best)}) vs {escape(_label(name, own))}: {escape(ratio)}.{verdict}" + (
            " The start program (--start default) differs from Legion's default mapper here: "
            f"{escape('; '.join(differs))}." if differs else "") + (
            " The start program (--start default) is Legion's default mapper written in the DSL"
            + (f" (but differs from it here: {escape('; '.join(legion))})" if legion else "")
            + f"; the reference ran the program's own mapper{f' ({own!r})' if own else ''} in its place."
            if legion is not None else ""))
    return warned
