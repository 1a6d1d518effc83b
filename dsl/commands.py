"""`mapperopt check`, `mapperopt fmt` and `mapperopt explain`: the DSL's command-line front ends."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import itertools
import json
import math
import re
import shlex
import textwrap
from importlib import resources
from pathlib import Path

import click

from mapperopt import toolchain
from mapperopt.benchmarks.apps import (COUNT_GRIDS, UNDESCRIBED_LAUNCHES, check_app_flags, known_benchmarks,
                                       require_app)
from mapperopt.benchmarks.userapp import discovery_options, is_script, wrapped_programs
from mapperopt.descriptions import AppDescription, MachineDescription, OtherRegions, parse_machine_spec
from mapperopt.dsl.ast import Program
from mapperopt.dsl.checker import (INERT_ERRORS, MAX_EXPLAIN_POINTS, MAX_STATIC_POINTS, check as check_program,
                                   launch_counts_text, launch_groups_text, launch_numbers, reads_parent)
from mapperopt.dsl.errors import CheckError, DslRuntimeError, DslSyntaxError, error_count, render_all
from mapperopt.dsl.evaluator import Evaluator, app_mapped, quoted_names
from mapperopt.dsl.formatter import format_program, selector_name
from mapperopt.dsl.machine import ProcSet, fmt_tuple, greedy_factors
from mapperopt.dsl.parser import parse, read_source
from mapperopt.errors import MapperoptError, UsageError, closest
from mapperopt.options import defer_refusal, errors_as_json, options_after_separator, processor_options
from mapperopt.files import cannot_write, check_writable, rewrite

MAX_TABLE_POINTS = 256  # launch points listed per task in the text output
MAX_PRINTED = 50  # lines of the mapper's print output shown by check and explain


def load_app(name: str) -> AppDescription:
    """The application description `configs/<name>.app.json`. Raises MapperoptError for an unknown benchmark."""
    configs = resources.files("mapperopt.configs")
    path = configs / f"{name}.app.json"
    if not path.is_file():
        require_app(name)  # a benchmark that has a configuration but no description gets past this
        known = sorted(p.name.removesuffix(".app.json") for p in configs.iterdir() if p.name.endswith(".app.json"))
        raise MapperoptError(f"no application description for benchmark '{name}'",
                             hint=f"known: {', '.join(known)}" if known else None)
    return AppDescription.from_json(path.read_text())


def load_machine(spec: str | None, bench=None, size: str = "ci", app_args: tuple[str, ...] = (),
                 cpus: int | None = None, gpus: int | None = None) -> MachineDescription:
    """A synthetic machine for `spec` (NODESxGPUS[xCPUS]), or when None the real one as a run of `bench` (a
    benchmark's name or a user's program) at `size` with `app_args` on `cpus` CPUs and `gpus` GPUs (None: the
    size's) sees it (`run_machine`)."""
    if spec is not None:
        return parse_machine_spec(spec, app_args)
    try:
        return run_machine(bench, size, app_args, cpus, gpus)
    except (ImportError, MapperoptError, OSError, ValueError) as exc:
        raise MapperoptError(f"could not probe the real machine ({str(exc).splitlines()[0] if str(exc) else exc!r})",
                             hint="describe one instead: --machine NODESxGPUS[xCPUS], e.g. --machine 1x4") from None


def summary_line(path: str, diags) -> str:
    """`FILE: N error(s), M warning(s)`, then `, K note(s)` when there are notes (W304, W309), or `FILE: ok` without
    diagnostics: the last line of every report. After diagnostics (`diags`, printed just before) it starts with an
    empty line: it begins with the file's name as a diagnostic does, and would read as one more."""
    if not diags:
        return f"{path}: ok"
    count = {sev: sum(d.severity == sev for d in diags) for sev in ("error", "warning", "note")}
    # counts with a thousands separator, as the lines that count what a cap left out (`errors.render_all`)
    notes = f", {count['note']:,} note(s)" if count["note"] else ""
    omitted = getattr(diags, "omitted", 0)  # errors past the checker's cap, not shown
    errors = error_count(count["error"], omitted)
    return f"\n{path}: {errors}, {count['warning']:,} warning(s){notes}"


def echo_printed(printed: str, what: str,
                 source: str = "load phase, then each task's launch points; a run prints them to stderr",
                 rest: str = "") -> None:
    """The lines the mapper's `print` statements wrote during `what` (an evaluation, or a run), on stderr under a
    header that says `source` (where they come from), the first MAX_PRINTED of them, then how many more there are
    and `rest` (where they are, e.g. " in FILE"); nothing when it printed none."""
    lines = printed.splitlines()
    if not lines:
        return
    click.echo(f"print output of {what}, {len(lines):,} line(s) ({source}):", err=True)
    for line in lines[:MAX_PRINTED]:
        click.echo(f"  {line}", err=True)
    if len(lines) > MAX_PRINTED:
        click.echo(f"  ... {len(lines) - MAX_PRINTED:,} more line(s){rest}", err=True)


def syntax_error_summary(path: str) -> str:
    """The summary line after a syntax error (the parser reports only the first), after an empty line as
    `summary_line`'s."""
    return f"\n{path}: 1 error(s), 0 warning(s) (parsing stops at the first syntax error)"


@contextlib.contextmanager
def exit_on_syntax_error(path: str, diagnostic_to_stdout: bool = False):
    """Inside it, a syntax error of the file `path` (a DslSyntaxError: E112 from `read_source` too) is printed to
    stderr (to stdout with `diagnostic_to_stdout`: `check`, whose report of diagnostics is its stdout), then its
    summary line to stderr, as `check` prints one, and exits with status 1."""
    try:
        yield
    except DslSyntaxError as exc:
        click.echo(str(exc), err=not diagnostic_to_stdout)
        click.echo(syntax_error_summary(path), err=True)
        raise click.exceptions.Exit(1) from None


@contextlib.contextmanager
def _exit_status(code: int):
    """Inside it, an error that ends the command with exit status 1 (a MapperoptError, or a syntax error said by
    `exit_on_syntax_error`) ends it with status `code` instead."""
    try:
        yield
    except click.exceptions.Exit as exc:
        if exc.exit_code != 1:
            raise
        raise click.exceptions.Exit(code) from None
    except MapperoptError as exc:
        exc.exit_code = code
        raise


def _read_source_or_exit(path: str, diagnostic_to_stdout: bool = False) -> str:
    with exit_on_syntax_error(path, diagnostic_to_stdout):
        return read_source(path)


def _parse_or_exit(text: str, path: str, diagnostic_to_stdout: bool = False):
    with exit_on_syntax_error(path, diagnostic_to_stdout):
        return parse(text, path)


def _parse_domain(spec: str) -> tuple[int, ...]:
    try:
        dims = tuple(int(x) for x in spec.lower().split("x"))
    except ValueError:
        dims = ()
    if not dims or any(d < 1 for d in dims):
        raise UsageError(f"domain '{spec}' is not of the form N[xM...] with positive extents",
                         hint="e.g. --domain 8x8")
    return dims


machine_option = click.option(
    "--machine", "machine_spec", metavar="NODESxGPUS[xCPUS]", default=None,
    help="A hypothetical machine: 2x4 is two nodes of four GPUs and one CPU each, 1x0x2 one node of two CPUs and no "
         "GPU; or labelled counts in any order: 4gpu, 2cpu, 2node,4gpu.")


UNCHECKED_NAMES = "task and region names (give --bench NAME, or --app for your own program)"


def unprobed(exc: MapperoptError) -> str:
    """What a check without --machine could not see when this machine could not be probed (`exc`: why)."""
    return (f"mapping functions at every launch point (this machine could not be probed: "
            f"{exc.message.splitlines()[0]}; {exc.hint or 'give --machine, e.g. 1x4'})")


def unchecked_note(bench: str | None, machine_given: bool, probe_error: MapperoptError | None = None
                   ) -> str | None:
    """A note naming what a compile could not check, or None: names without a program (`bench`: --bench or --app);
    the mapping functions at every launch point without one and a machine given (`machine_given`: --machine, or
    --cpus or --gpus), or when this machine could not be probed (`probe_error`)."""
    missing = []
    if not bench:
        missing.append(UNCHECKED_NAMES)
    if probe_error is not None:
        missing.append(unprobed(probe_error))
    elif not bench and not machine_given:
        missing.append("mapping functions at every launch point (give --machine, e.g. 1x4)")
    return "note: not checked: " + "; ".join(missing) if missing else None


def run_machine(bench, size: str, app_args: tuple[str, ...], cpus: int | None = None,
                gpus: int | None = None) -> MachineDescription:
    """This machine as `mapperopt run BENCH --size SIZE --cpus CPUS --gpus GPUS -- APP_ARGS` sees it
    (`mapperopt.probe.run_probe_json`; counts None: not given).

    Raises:
        MapperoptError: the size does not exist, or the probe failed (no Legion, or GPUs without a driver).
    """
    from mapperopt.probe import run_probe_json

    return MachineDescription.from_json(run_probe_json(bench, size, app_args, cpus, gpus))


class MapperCommand(click.Command):
    """A command on one mapper FILE whose APP_ARGS (a run's flags) come only after `--` (check, explain, compile):
    click would take anything else left over before `--`, such as a second mapper file, as one of them."""

    def parse_args(self, ctx, args):
        after = len(args) - args.index("--") - 1 if "--" in args else 0
        given = list(args)  # click's parser consumes `args`
        rest = super().parse_args(ctx, args)
        app_args = ctx.params.get("app_args", ())
        if len(app_args) > after:
            word = str(app_args[0])
            near = word if word in known_benchmarks() else closest(word, known_benchmarks())
            mean = f"; did you mean `--app {word}`?" if word.endswith((".yaml", ".yml")) else \
                f"; did you mean `--bench {near}`?" if near else ""
            raise click.UsageError(f"unexpected argument '{app_args[0]}': {self.name} takes one mapper file; "
                                   f"flags for the run go after `--`{mean}", ctx)
        bench = ctx.params.get("bench")
        if ctx.params.get("app_spec") and not ctx.resilient_parsing:  # the program's own flags may be these
            options_after_separator(self, ctx.params["app_spec"], app_args)
        if not ctx.params.get("app_spec") and bench in known_benchmarks() and not ctx.resilient_parsing:
            try:
                check_app_flags(bench, app_args, [o for p in self.params for o in p.opts], self.name,
                                given[:len(given) - after])
            except UsageError as exc:  # with --json: refused inside the command, in JSON too
                defer_refusal(ctx, self, given, exc)
        return rest


def displaced_note(app: AppDescription | None) -> str | None:
    """The note that a DSL mapper takes the place of the program's own mapper (discovery ran under it) for every
    task, unless the run keeps it; None when it has none, the run keeps it or no program is known."""
    if app is not None and app.own_mapper and not app.keep_app_mapper:
        return (f"note: the program registers its own mapper ('{app.own_mapper}'); this mapper takes its place for "
                "every task (--keep-app-mapper keeps it for the tasks no statement names)")
    return None


def kept_note(app: AppDescription | None, program: Program, who: str = "this mapper maps") -> str | None:
    """The note (a sentence) naming the tasks that stay with the program's own mapper, kept (`keep_app_mapper`),
    where `program` names some of the tasks below the top-level one but not all (`app_mapped`), then, after `who`
    (the subject and verb for the DSL mapper), the others; None otherwise (W326 says it when it names none)."""
    if app is None or not app.own_mapper or not program.named_tasks():
        return None
    kept = [t for t in app.tasks if app_mapped(app, program, t.name)]
    if not any(t.parent is not None for t in kept):
        return None
    return (f"the program's own mapper ('{app.own_mapper}') is kept (--keep-app-mapper) for "
            f"{', '.join(t.name for t in kept)}, which no statement names (every one where it replaced Legion's "
            f"default mapper, else those launched with its mapper ID); {who} "
            f"{', '.join(t.name for t in app.tasks if t not in kept)}")


def check_run_args(bench: str | None, app_spec: str | None, app_args, size: str | None = None,
                   keep_app_mapper=False, timeout_s=None, rediscover=False, machine_spec: str | None = None,
                   cpus: int | None = None, gpus: int | None = None) -> None:
    """Refuses flags after `--` without a program to pass them to, --size without a program to size, the
    `discovery_options` without --app, and --cpus or --gpus (the run's processors on this machine) with --machine
    (another machine) (check, explain, compile)."""
    counts = counts_given(cpus, gpus)
    if counts and machine_spec is not None:
        raise UsageError(f"{counts[0]} and --machine describe two machines ({shlex.join(counts)}: the run's "
                         f"processors on this one; --machine {machine_spec}: another): give one")
    given = [o for o, v in (("--keep-app-mapper", keep_app_mapper), ("--timeout", timeout_s),
                            ("--rediscover", rediscover)) if v]
    if bench and app_spec:
        raise UsageError(f"--bench and --app name two programs ({bench} and {app_spec}): give one")
    if given and not app_spec:
        raise UsageError(f"{given[0]} needs --app: it is about discovering your own program")
    if size and not bench and not app_spec:
        raise UsageError(f"--size {size} needs --bench NAME or --app: the size of which program?")
    if app_args and not bench and not app_spec:
        raise UsageError(f"unexpected arguments {' '.join(app_args)}: flags after `--` are a run's and need "
                         "--bench NAME or --app")


def counts_given(cpus: int | None, gpus: int | None) -> list[str]:
    """`--cpus N --gpus M` as given (None: not given), to paste into a `mapperopt run` command."""
    return [word for option, count in (("--cpus", cpus), ("--gpus", gpus)) if count is not None
            for word in (option, str(count))]


def sized_app(bench: str | None, app_spec: str | None, size: str, app_args=(),
              machine: MachineDescription | None = None, keep_app_mapper: bool = False,
              timeout_s: float | None = None, rediscover: bool = False, cpus: int | None = None,
              gpus: int | None = None) -> tuple:
    """(what runs: a benchmark's name, a user's program or None; its description; the `mapperopt run` command whose
    launch domains it has; a note on where its variants come from, or None) for a run of `bench` or `--app` at
    `size` with `app_args` (the run's flags after `--`). The stored description serves a benchmark at size ci
    without flags (nothing to build), unless its launch domains follow --machine's processor count
    (`apps.COUNT_GRIDS`); otherwise the application describes itself (built first if needed), on the
    processors of `machine` in all when given (--machine's: `{procs}` in the size's flags and COSMA's grid follow
    them; `parse_machine_spec` has refused `-ll:cpu`/`-ll:gpu` flags that contradict it), keeping, on a machine
    with GPUs, the committed description's variants when this build has no CUDA (`_cuda_variants`). A user's
    program is discovered by running it here, with the size's counts (`discovery_options`: `keep_app_mapper`,
    `timeout_s`, `rediscover`). `cpus` and `gpus`, as `run --cpus --gpus` takes them, replace the size's counts
    (None: not given; `check_run_args` refused them with `machine`)."""
    from mapperopt.benchmarks.apps import describe_app, require_one_value

    flags = ["--", *app_args] if app_args else []
    counts = counts_given(cpus, gpus)
    if app_spec:
        from mapperopt.benchmarks.userapp import built_as, resolve_app

        target = resolve_app(app_spec, keep_app_mapper=keep_app_mapper or None)
        if counts:  # refused as `run` refuses them
            require_one_value(target, app_args, cpus=cpus, gpus=gpus)
        desc = AppDescription.from_json(describe_app(target, size, cpus, gpus, extra_args=tuple(app_args),
                                                     timeout_s=timeout_s, refresh=rediscover))
        given = ("--app", app_spec, *(("--size", size) if size != "ci" else ()),
                 *(("--keep-app-mapper",) if keep_app_mapper else ()), *counts, *flags)
        keep = ["--keep-app-mapper"] if keep_app_mapper else []
        return target, dataclasses.replace(desc, given_as=given, built=built_as(target)), \
            f"`{toolchain.command('run', '--app', app_spec, *keep, '--size', size, *counts, *flags)}`", \
            None  # to paste
    run_cmd = f"`{toolchain.command('run', bench, '--size', size, *counts, *flags)}`"
    if bench and counts:
        require_one_value(bench, app_args, cpus=cpus, gpus=gpus)
    if not bench or (size == "ci" and not app_args and (machine is None and not counts or bench not in COUNT_GRIDS)):
        return bench, load_app(bench) if bench else None, run_cmd, None
    if machine is None:
        return bench, AppDescription.from_json(describe_app(bench, size, cpus, gpus, tuple(app_args))), run_cmd, None
    cpus, gpus = (sum(machine.count(kind, n) for n in range(machine.nodes)) for kind in ("CPU", "GPU"))
    args = [str(a) for a in app_args]
    rest = tuple(a for k, a in enumerate(args)  # the counts are the machine's (those flags agree with it)
                 if a not in ("-ll:cpu", "-ll:gpu") and (k == 0 or args[k - 1] not in ("-ll:cpu", "-ll:gpu")))
    desc, note = _cuda_variants(bench, describe_app(bench, size, cpus, gpus, rest), gpus > 0)
    procs = f"{gpus} GPU{'s' if gpus != 1 else ''}" if gpus else f"{cpus} CPU{'s' if cpus != 1 else ''}"
    return bench, AppDescription.from_json(desc), f"{run_cmd} on the {procs} of --machine", note


def beyond_legion(machine: MachineDescription, spec: str) -> str | None:
    """A warning where --machine `spec` (`machine`) has more processors on a node than this Legion build runs
    (`toolchain.max_procs_per_node`): the mapper is checked for it, but no run here could use it. None otherwise."""
    from mapperopt.toolchain import max_procs_per_node

    procs = sum(machine.count(kind) for kind, _ in machine.processors)  # on node 0; every node alike
    limit = max_procs_per_node()
    if limit is None or procs <= limit:
        return None
    return (f"warning: --machine {spec} has {procs} processors per node (its utility processor included); this Legion "
            f"build runs at most {limit} (its LEGION_MAX_NUM_PROCS): evaluated as given, but a run with this Legion "
            "on such a machine stops as it starts")


def unused_gpus(app: AppDescription | None, machine: MachineDescription, spec: str) -> str | None:
    """A note where --machine `spec` (`machine`) has GPUs but no task of `app` has a GPU variant (a CPU-only
    program, for which `1x4`, one node of 4 GPUs and 1 CPU, is a machine of one CPU), with the spec that gives as
    many CPUs instead. None otherwise, and without an application (a mapper checked alone)."""
    gpus = machine.count("GPU")
    kinds = sorted({kind for t in app.tasks for kind in t.variants}) if app is not None else []
    if not gpus or "GPU" in kinds or not kinds:
        return None
    nodes, plural = machine.nodes, "s" if gpus != 1 else ""
    return (f"note: {app.app}'s tasks have {' and '.join(kinds)} variants only: the {gpus} GPU{plural} of --machine "
            f"{spec} {'are' if plural else 'is'} unused; `--machine {nodes}x0x{gpus}` describes {nodes} "
            f"node{'s' if nodes != 1 else ''} of {gpus} CPU{plural}{' each' if nodes != 1 else ''}")


def sized_machine(machine_spec: str, target, size: str, app_args=()) -> MachineDescription:
    """--machine's machine (`parse_machine_spec`) with the memories of a run of `target` (`sized_app`'s: a
    benchmark's name, a user's program, or None) at `size`: the size's csize, fsize and zsize, then the run's flags
    after `--` (`app_args`), which override them as in the run; messages name it `--machine SPEC` (`given_as`).

    Raises:
        MapperoptError: the size does not exist; DescriptionError: as `parse_machine_spec`.
    """
    memories = ()
    if target:
        from mapperopt.benchmarks.apps import load_config

        sz = (load_config(target) if isinstance(target, str) else target.config).size(size)
        memories = tuple(a for flag, mib in (("-ll:csize", sz.csize), ("-ll:fsize", sz.fsize), ("-ll:zsize", sz.zsize))
                         if mib is not None for a in (flag, str(mib)))
    return dataclasses.replace(parse_machine_spec(machine_spec, (*memories, *app_args)),
                               given_as=f"--machine {machine_spec}")


def _cuda_variants(bench: str, desc: dict, gpus: bool) -> tuple[dict, str | None]:
    """(`desc`, None), or, on a machine with GPUs (`gpus`) when this build of `bench` has no CUDA (it lists no GPU
    variant where the committed description, a CUDA build's, lists some), `desc` with the committed variants of each
    task and a note that says so: the variants the application registers with CUDA are those the mapper meets on a
    machine with GPUs."""
    from mapperopt.benchmarks.apps import load_config

    stored = {t["name"]: t["variants"] for t in load_config(bench).stored_description()["tasks"]}
    if not gpus or any("GPU" in t["variants"] for t in desc["tasks"]) or not any("GPU" in v for v in stored.values()):
        return desc, None
    tasks = [{**t, "variants": stored.get(t["name"], t["variants"])} for t in desc["tasks"]]
    return {**desc, "tasks": tasks}, (f"note: this build of {bench} has no CUDA: the task variants are those of "
                                      f"configs/{bench}.app.json (a CUDA build's), as on a machine with GPUs")


class DslFile(click.Path):
    """A DSL file argument (`click.Path` that is no folder). A folder is refused with its `.dsl` files named, as
    the files to give instead (fmt: all at once), rather than click's bare 'is a directory'."""

    def __init__(self):
        super().__init__(dir_okay=False)

    def convert(self, value, param, ctx):
        folder = Path(value)
        if folder.is_dir():
            command = ctx.info_name if ctx is not None else "this command"
            files = sorted(str(f) for f in folder.glob("*.dsl"))
            named = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
            if not files:
                self.fail(f"'{value}' is a folder; {command} takes a DSL file, and it holds no .dsl file", param, ctx)
            if command == "fmt":
                self.fail(f"'{value}' is a folder; fmt takes DSL files: its .dsl files are {named} (all of them: "
                          f"`{toolchain.command('fmt', '--check')} {shlex.quote(str(folder))}/*.dsl`, or --write)",
                          param, ctx)
            self.fail(f"'{value}' is a folder; {command} takes one DSL file: its .dsl files are {named}", param, ctx)
        return super().convert(value, param, ctx)


size_option = click.option(
    "--size", default=None, metavar="SIZE",
    help="With --bench or --app: the launch domains and the machine of a run at this size [default: ci].")


@click.command(cls=MapperCommand)
@click.argument("file", type=DslFile())
@click.option("--bench", metavar="NAME", default=None, help="Check task and region names against this benchmark.")
@discovery_options
@machine_option
@processor_options()
@size_option
@click.argument("app_args", nargs=-1, type=click.UNPROCESSED, metavar="[-- APP_ARGS]")
def check(file, bench, app_spec, keep_app_mapper, timeout_s, rediscover, machine_spec, cpus, gpus, size, app_args):
    """Check a DSL mapper for errors; exits with status 1 if there is any.

    With --bench, names, kinds and launches are checked against the benchmark's description (with --app, against
    the description discovered by running your program; a selector that matches no task or region of it is an
    error, but a task name that is no near-miss of one the program ran only a warning, as other flags may launch it,
    unless no task the mapper names ran),
    and every mapping function is evaluated at every launch point of the machine: this machine as `run`
    sees it (probed with Legion; --cpus and --gpus as `run` takes them), or the one --machine describes. APP_ARGS
    (after `--`, with --bench or --app) are the run's own flags, as `run` takes them: `-- -p 8` checks the launch
    domains of a run with `-p 8` (with --app, the tasks that run launches), `-- -ll:rsize 64` a machine with RDMEM
    (--machine's too). With --size or flags, the launch domains are those of a run on --machine's processors in all
    (`-ll:cpu`/`-ll:gpu` after `--` must agree with it), or on --cpus and --gpus. The lines after the summary say
    which machine and which launch domains were checked; the lines the mapper's print statements write during the
    evaluation come first, under `print output of the static evaluation`.
    """
    check_run_args(bench, app_spec, app_args, size, keep_app_mapper, timeout_s, rediscover, machine_spec, cpus, gpus)
    text = _read_source_or_exit(file, diagnostic_to_stdout=True)
    program = _parse_or_exit(text, file, diagnostic_to_stdout=True)
    size = size or "ci"
    notes = []
    machine = None if machine_spec is None else parse_machine_spec(machine_spec, app_args)
    target, app, run_cmd, variants = sized_app(bench, app_spec, size, app_args, machine, keep_app_mapper, timeout_s,
                                               rediscover, cpus, gpus)
    if machine is not None:
        machine = sized_machine(machine_spec, target, size, app_args)
    if target:
        notes.append(f"launch domains: those of {run_cmd}")
    if app_spec and is_script(target.exe) and not rediscover and not wrapped_programs(target):
        notes.append(f"note: {target.exe.name} is a script that names no program mapperopt finds (by an absolute "
                     "path or one relative to its folder): discovery's cache is keyed by its bytes, not by those of "
                     "the program it runs; after rebuilding that program, check with --rediscover once")
    if variants:
        notes.append(variants)
    if note := displaced_note(app):
        notes.append(note)
    elif note := kept_note(app, program):
        notes.append(f"note: {note}")
    if machine is not None:
        notes.append(f"machine: --machine {machine_spec}, {machine.describe()}")
        notes += filter(None, (beyond_legion(machine, machine_spec), unused_gpus(app, machine, machine_spec)))
    else:
        try:
            machine = run_machine(target, size, tuple(app_args), cpus, gpus)
            counts = counts_given(cpus, gpus)
            how = f"as {run_cmd} sees it" if target else \
                f"Legion's default with {shlex.join(counts)}" if counts else "Legion's default of one CPU"
            notes.append(f"machine: this one ({how}), {machine.describe()}; --machine checks another")
        except MapperoptError as exc:
            notes.append(f"note: not checked: {unprobed(exc)}")
    printed = io.StringIO()
    diags = check_program(program, app, machine, printed)
    if app_spec:
        answered, note = answered_app(target, app, program, diags, size, app_args, timeout_s, cpus, gpus)
        if note:
            notes.append(note)
        if answered is not app:
            app, printed = answered, io.StringIO()
            diags = check_program(program, app, machine, printed)
    echo_printed(printed.getvalue(), "the static evaluation")
    if diags:
        click.echo(render_all(diags, text))
    errors = sum(d.is_error for d in diags)
    click.echo(summary_line(file, diags), err=bool(diags))
    if not target:
        notes.append(f"note: not checked: {UNCHECKED_NAMES}")
    for note in notes:
        click.echo(note, err=True)
    if errors:
        raise click.exceptions.Exit(1)


def answered_app(target, app: AppDescription, program, diags, size: str, app_args, timeout_s,
                 cpus: int | None = None, gpus: int | None = None) -> tuple[AppDescription, str | None]:
    """(the description of the program `target` as a run with `program` launches it, a note for stderr or None):
    `app`, discovery's, unless `diags` (`program` checked against `app`) says that `program` answers a tunable
    otherwise than discovery did (W323), then the program discovered again with `program`'s answers, since that
    run may launch other points (`app` still, with a note, when that discovery fails); on `cpus` CPUs and `gpus`
    GPUs (None: the size's). For check and compile."""
    if not any(d.code == "W323" for d in diags):
        return app, None
    try:
        answered, answers = _rediscovered(target, app, program, size, app_args, timeout_s, cpus, gpus)
    except MapperoptError as exc:
        why = exc.message.splitlines()[0]
        return app, (f"note: discovering again with this mapper's tunable answers failed ({why}): the launch "
                     "domains checked are discovery's (W323)")
    return answered, (f"note: discovered again with this mapper's tunable answers ({answers}): the launch domains "
                      "checked are those of a run with them")


def _rediscovered(target, app: AppDescription, program, size: str, app_args, timeout_s, cpus: int | None,
                  gpus: int | None) -> tuple[AppDescription, str]:
    """(`app` discovered again with the recording mapper answering `program`'s Tunable statements, as a run with
    `program` answers them; its answers as text, "11 = 4"). Its tunables are `app`'s (that discovery does not record
    the ones the DSL answers), with `program`'s answers."""
    from mapperopt.benchmarks.apps import describe_app
    from mapperopt.dsl import ast as A
    from mapperopt.dsl.formatter import format_statement, tunable_value

    answers = {s.id: s for s in program.statements if isinstance(s, A.TunableStmt)}  # the latest of an ID wins
    text = "".join(f"{format_statement(s)}\n" for s in answers.values())
    desc = AppDescription.from_json(describe_app(target, size, cpus, gpus, extra_args=tuple(app_args),
                                                 timeout_s=timeout_s, tunables=text))
    tunables = tuple(dataclasses.replace(t, value=answers[t.id].value) if t.id in answers else t
                     for t in app.tunables)
    return (dataclasses.replace(desc, tunables=tunables, given_as=app.given_as, built=app.built),
            ", ".join(f"{i} = {tunable_value(s.value, s.type)}" for i, s in answers.items()))


def _line_break(text: str) -> str:
    """The line break of the DSL text `text` as its first line has it: "\\r\\n" (Windows), "\\r" (old Mac) or
    "\\n" (also for a text of one line), which `fmt` keeps: a checkout that converts line endings (git's autocrlf)
    stays formatted."""
    end = re.search(r"\r\n?|\n", text)
    return end.group() if end else "\n"


@click.command()
@click.argument("files", metavar="FILE...", nargs=-1, required=True, type=DslFile())
@click.option("--write", is_flag=True, help="Rewrite each FILE in place instead of printing.")
@click.option("--check", is_flag=True,
              help="Change nothing: list each FILE that is not formatted (`would reformat FILE`) and exit 1 if any "
                   "is (for CI and commit hooks); a FILE that cannot be read or parsed exits 2.")
def fmt(files, write, check):
    """Format DSL mappers canonically (comments are kept): print the one FILE formatted, or rewrite (--write) or
    check (--check) each FILE. A FILE that cannot be read or parsed stops the command with its error (exit status 1;
    with --check 2, as 1 says that a FILE is not formatted)."""
    if (given := next((f for f in files if f in ("--write", "--check") and not Path(f).exists()), None)):
        raise click.UsageError(f"{given} after `--` is read as a file name: give {given} before `--`")
    if write and check:
        raise click.UsageError("--write rewrites the files and --check changes nothing: give one of them")
    if len(files) > 1 and not (write or check):
        raise click.UsageError(f"{len(files)} files given: print one at a time, or give --write or --check")
    unformatted = []
    for file in files:
        with _exit_status(2) if check else contextlib.nullcontext():
            text = _read_source_or_exit(file)
            formatted = format_program(_parse_or_exit(text, file)).replace("\n", _line_break(text))
        if not (write or check):
            click.echo(formatted, nl=False)
        elif formatted != text:
            unformatted.append(file)
            if check:
                click.echo(f"would reformat {file}")
            else:
                if not Path(file).stat().st_mode & 0o222:  # its owner made it read-only (root could write it anyway)
                    raise MapperoptError(f"{file} is read-only: not rewritten",
                                         hint=f"make it writable (chmod u+w {shlex.quote(file)}) or format a copy")
                rewrite(Path(file), formatted)  # a full disk leaves the user's file as it was
                click.echo(f"formatted {file}", err=True)
    if check and unformatted:
        raise click.exceptions.Exit(1)


def _layout_text(layout: dict | None) -> str:
    if layout is None:
        return "-"
    parts = [layout["order"], f"{layout['dims']}_order"]
    if layout["align"]:
        parts.append(f"Align{layout['align']['op']}{layout['align']['bytes']}")
    parts += [w for w in ("exact", "compact") if layout[w]]
    return " ".join(parts)


def _fields_text(fields: tuple[str, ...], most: int = 6) -> str:
    """A requirement's field names for explain's table: the first `most`, then how many more; `-` for none."""
    if not fields:
        return "-"
    return ", ".join(fields[:most]) + (f", ... ({len(fields)} fields)" if len(fields) > most else "")


def _proc_text(proc: dict) -> str:
    if proc["node"] is None:
        return f"{proc['kind']} (Legion default)"
    return f"{proc['kind']}[node {proc['node']}, proc {proc['index']}]"


def explain_decisions(program, app: AppDescription, machine: MachineDescription,
                      domain: tuple[int, ...] | None = None, stream=None,
                      diagnostics: list | None = None, inert_ok: bool = False) -> list[dict]:
    """Per task of `app`: {"task", "launch", "domain", "kind", "kinds" (the task's processor-kind list, §7.1:
    "kind" is its first kind with a variant and processors; empty without a Task statement), "regions" (of the first
    point), "fields" (per
    requirement index, its field names as the description has them), "privileges" (per requirement index, its
    privilege: read_only, read_write, write_discard, reduce or no_access), "reduce" ({requirement index: (its reduction
    operator or None, whether every point reduces into the one region)} for those with reduce privilege),
    "bounding_box" (a user's program: its discovered domains are bounding boxes), "collected" (the
    read-only requirements CollectMemory frees after use), "tracked" ({requirement CollectMemory selects but leaves
    tracked: the tasks that reduce into its fields}, note R457), "instance_limit" (InstanceLimit's N or None), "points":
    [(point, trace record or DslRuntimeError)], "one_point" (the region names of the record that name one point's
    subregion, W325), "error", "app_mapper" (the program keeps its own mapper and no
    statement names the task: that mapper maps it when the task is launched with its ID, or when it replaced Legion's
    default mapper; the records say what Legion's default mapping would do), and "parent" where the task's mapping
    function reads task.parent: {"task" (its first launch's, in discovery), "proc" (where it was explained to run,
    parents first; None: CPU 0 of node 0 assumed), "top_level"}}. `domain` replaces every index launch's
    domain. A record whose mapping function returned a processor set of several members has "set", the members'
    {"kind", "node", "index"} in the set's order, and "proc" says only what is known before the runtime picks the
    least loaded member (when the launch is distributed): the kind and the node, "index" None. A point of an index
    launch no map statement places has "default_proc" (unless the program keeps its own mapper, which slices such
    launches), the processor Legion's default mapper slices it to (`default_slices`; "index" None but for a GPU: the
    default mapper offers every processor of the kind on the node, and the first free one runs it, as the compiled
    mapper's trace says with its `candidates`). Each region of a record
    has "node", its memory's: the node of the point's processor (or of its default_proc; None when neither is
    known, or for VIRTUAL). "launches": the task's launches by kind that discovery mapped ({"index": 2}; empty: not
    known), of which "regions" and "fields" describe the first only, and "other_regions" and "other_unlisted" those on
    other regions (`TaskInfo`); "other_maps": those of them that get another memory or layout for an argument, with
    its record (`_other_launch_maps`; absent where the program's own mapper maps the task). `stream`: where the
    mapper's `print` output goes (None: nowhere). `diagnostics`: a list that receives check's diagnostics (warnings
    too). `inert_ok`: errors that leave the evaluation unchanged (`INERT_ERRORS`: an unanswered tunable) do not stop
    it; the caller reports them from `diagnostics`.

    Raises CheckError when the program has errors other than a mapping function failing on a launch's point (those
    failing points are in the records, as their DslRuntimeError) and, with `inert_ok`, those of `INERT_ERRORS`."""
    diags = check_program(program, app, machine)
    if diagnostics is not None:
        diagnostics.extend(diags)
    if any(d.is_error and not d.at_point and not (inert_ok and d.code in INERT_ERRORS) for d in diags):
        raise CheckError(diags, program.source)
    ev = Evaluator(program, machine, app, stream=stream)
    # The tasks it maps show Legion's default mapping, as the text says, not the `*` statements': an empty mapper's
    legion = Evaluator(parse(""), machine, app) if app.keep_app_mapper else ev
    # A function reading task.parent is evaluated with the task's discovered parent (its first launch's) on the
    # processor explained for it: parents first. The top-level task, or one Legion's default mapper places: CPU 0.
    parent_users = reads_parent(program.functions())
    where: dict[str, dict] = {}

    def depth(info) -> int:
        seen = set()
        while info is not None and info.parent and info.name not in seen:
            seen.add(info.name)
            info = app.task(info.parent)
        return len(seen)

    out = []
    # The top-level task is mapped too (SingleTaskMap and Task statements select it), though a benchmark's
    # description names it only as its tasks' parent: shown first, with "top_level".
    top = app.top_level
    added = [top] if top is not None and top not in app.tasks else []
    for info in [*added, *sorted(app.tasks, key=depth)]:
        entry = {"task": info.name, "launch": info.launch, "domain": None, "kind": None, "regions": [],
                 "top_level": info is top,
                 "fields": {r.index: r.fields for r in info.regions},
                 "privileges": {r.index: r.privilege for r in info.regions}, "collected": [], "tracked": {},
                 "reduce": {r.index: (r.redop, r.collective) for r in info.regions if r.privilege == "reduce"},
                 "bounding_box": bool(app.discovered_as),
                 "instance_limit": None, "points": [], "error": None,
                 "one_point": {n for r in info.regions for n in app.point_subregion(info, r)[0]},
                 "app_mapper": app_mapped(app, program, info.name),
                 "variant_names": dict(info.variant_names), "variant_ran": dict(info.variant_ran),
                 "launches": dict(info.launches), "other_regions": info.other_regions,
                 "other_unlisted": info.other_unlisted}
        out.append(entry)
        ev_task = legion if entry["app_mapper"] else ev
        entry["kinds"] = ev_task.task_kinds(info.name)
        try:
            entry["kind"] = ev_task.task_kind(info.name)
        except DslRuntimeError as err:
            entry["error"] = err
            continue
        reducers = {i: ev_task.reducers(info.name, i) for i in ev_task.collect(info.name)}
        entry["collected"] = [i for i, r in reducers.items() if not r]  # as Evaluator.collected
        entry["tracked"] = {i: r for i, r in reducers.items() if r}
        entry["instance_limit"] = ev_task.instance_limit(info.name, entry["kind"])
        dom = domain or info.domain
        if info.index_launched and dom:
            entry["domain"] = dom
            points = list(itertools.product(*(range(d) for d in dom)))
        else:
            points = [None]
        defaults = None
        stmt = ev_task.map_statement(info.name, points[0] is not None)
        if stmt is not None and stmt.func.name in parent_users and info.parent:
            above = app.task(info.parent)
            entry["parent"] = {"task": info.parent, "proc": where.get(info.parent),
                               "top_level": above is None or not above.parent}
        for point in points:
            launch = dom if point is not None else None
            try:
                placed = ev_task.place(info.name, point, launch, where.get(info.parent))
                rec = ev_task.record(info.name, point, launch, placed)
            except DslRuntimeError as err:
                entry["points"].append((point, err))
                continue
            if isinstance(placed, ProcSet) and len(placed.procs) > 1:
                rec["set"] = [p.to_json() for p in placed.procs]
                rec["proc"] = {**rec["proc"], "index": None}  # not the first member: any may run it (R405: one node)
            if placed is None and point is not None and not app.keep_app_mapper:  # else the program's mapper slices
                if defaults is None:
                    defaults = default_slices(dom, entry["kind"], machine)
                if point in defaults:  # a CPU's (an IO's) slice runs on the first free one of its node
                    rec["default_proc"] = {**defaults[point], **({} if entry["kind"] == "GPU" else {"index": None})}
            node = rec.get("default_proc", rec["proc"])["node"]
            for region in rec["regions"]:
                region["node"] = None if region["memory"] == "VIRTUAL" else node
            entry["points"].append((point, rec))
            if not entry["regions"]:
                entry["regions"] = rec["regions"]
                if not entry["app_mapper"]:  # Legion's default mapping reads no region name
                    entry["other_maps"] = _other_launch_maps(ev_task, app, info, point, launch, placed, rec)
                    for _, regions in entry["other_maps"]:  # the same point, on the same processor
                        for region in regions:
                            region["node"] = None if region["memory"] == "VIRTUAL" else node
                # the kinds of each requirement's list after the one chosen: where the instance goes if it does not fit
                kind = rec["proc"]["kind"]
                listed = {r["index"]: ev_task.memories(info.name, r["index"], kind) for r in rec["regions"]}
                entry["fallback"] = {i: ks[ks.index(r["memory"]) + 1:] if r["memory"] in ks else []
                                     for r in rec["regions"] for i, ks in [(r["index"], listed[r["index"]])]}
            if point is None and rec["proc"]["node"] is not None and "set" not in rec:
                where[info.name] = rec["proc"]
    return [e for info in [*added, *app.tasks] for e in out if e["task"] == info.name]  # in the description's order


def _other_launch_maps(ev: Evaluator, app: AppDescription, info, point, launch, placed, rec: dict) -> list:
    """[(group, region records)]: for each group of `info`'s later launches on other regions (`info.other_regions`),
    the records (as `Evaluator.record` writes them for `point` placed on `placed`, with "fallback": the kinds of the
    memory list after the one chosen) of its arguments on one other named region each (their chains:
    `AppDescription.other_launch_chains`) that get another memory or layout than in `rec`, the first launch's; groups
    without such an argument left out."""
    out = []
    for group in info.other_regions or ():
        chains = app.other_launch_chains(info, group)
        regions = tuple(dataclasses.replace(r, names=chains[r.index]) if r.index in chains else r
                        for r in info.regions)
        other = Evaluator(ev.program, ev.machine, dataclasses.replace(app, tasks=tuple(
            dataclasses.replace(t, regions=regions) if t is info else t for t in app.tasks)))
        try:
            theirs = other.record(info.name, point, launch, placed)["regions"]
        except DslRuntimeError:  # no memory of a list holds it on those launches (R403): the run reports it
            continue
        first = {r["index"]: r for r in rec["regions"]}
        kind = rec["proc"]["kind"]
        differ = [{**r, "fallback": ks[ks.index(r["memory"]) + 1:] if r["memory"] in ks else []}
                  for r in theirs if r["index"] in chains
                  and (r["memory"], r["layout"]) != (first[r["index"]]["memory"], first[r["index"]]["layout"])
                  for ks in [other.memories(info.name, r["index"], kind)]]
        if differ:
            out.append((group, differ))
    return out


def default_slices(domain: tuple[int, ...], kind: str, machine: MachineDescription) -> dict[tuple, dict]:
    """{point: {"kind", "node", "index"}}: where Legion's default mapper (DefaultMapper::slice_task, for a launch
    whose parent is not control-replicated) sends each point of an index launch over `domain` of a `kind` task: it
    cuts the domain into as many blocks as the machine has processors of the kind (the count split over the
    dimensions as greedy_split splits it), visits the blocks with the first dimension fastest and deals the non-empty
    ones to those processors in Realm's order, node by node. Empty without processors of the kind."""
    procs = [(n, i) for n in range(machine.nodes) for i in range(machine.count(kind, n))]
    if not procs:
        return {}
    blocks = greedy_factors(len(procs), domain)
    out, dealt = {}, 0
    for block in itertools.product(*(range(b) for b in reversed(blocks))):
        spans = [range(n * k // b, n * (k + 1) // b) for n, k, b in zip(domain, reversed(block), blocks)]
        if any(not s for s in spans):
            continue
        node, index = procs[dealt % len(procs)]
        dealt += 1
        for point in itertools.product(*spans):
            out[point] = {"kind": kind, "node": node, "index": index}
    return out


def _index_width(kind: str, machine: MachineDescription) -> int:
    """Digits of the largest index of a `kind` processor on any node: cells pad indices to it (`0.01` beside
    `0.10`, never `0.1`)."""
    return len(str(max((machine.count(kind, n) for n in range(machine.nodes)), default=1) - 1))


def _proc_label(proc: dict, machine: MachineDescription) -> str:
    """A processor as `node.index`, the index padded to the kind's widest (`_index_width`)."""
    return f"{proc['node']}.{proc['index']:0{_index_width(proc['kind'], machine)}d}"


def _set_label(procs: list[dict], machine: MachineDescription) -> str:
    """A processor set as `node.index` with `*` for all of them (`0.*`: every processor of the kind on node 0),
    `{0.1,0.3}` where it is no such product; indices padded as `_proc_label` pads them."""
    nodes, indices = sorted({p["node"] for p in procs}), sorted({p["index"] for p in procs})
    width = _index_width(procs[0]["kind"], machine)
    if len(procs) != len(nodes) * len(indices):
        return "{" + ",".join(_proc_label(p, machine) for p in procs) + "}"

    def part(values: list[int], every: int, w: int = 1) -> str:
        return f"{values[0]:0{w}d}" if len(values) == 1 else "*" if len(values) == every else \
            "{" + ",".join(f"{v:0{w}d}" for v in values) + "}"
    return f"{part(nodes, machine.nodes)}.{part(indices, machine.count(procs[0]['kind'], nodes[0]), width)}"


def _cell(rec, machine: MachineDescription) -> str:
    if isinstance(rec, DslRuntimeError):
        return rec.code
    if "set" in rec:
        return _set_label(rec["set"], machine)
    proc = rec["proc"]
    if "default_proc" in rec:
        proc = rec["default_proc"]
        return f"({proc['node']}.*)" if proc["index"] is None else f"({_proc_label(proc, machine)})"
    return "dflt" if proc["node"] is None else _proc_label(proc, machine)


def _launch_balance(entry: dict, machine: MachineDescription) -> dict:
    """How an index launch's points (`explain_decisions` entry) spread over the machine: {"kind", "per_node" (points
    per node, by node), "per_processor" (per node, points per processor of the kind, by index), "default" (points
    left to Legion's default placement: counted where its slicing puts them, `default_slices`), "sets" (points on a
    processor set: counted on their node only), "failing" (points whose mapping function fails), "own" (points the
    program's kept mapper maps: not predicted)}."""
    kind = entry["kind"]
    per_node = [0] * machine.nodes
    per_proc = [[0] * machine.count(kind, n) for n in range(machine.nodes)]
    out = {"kind": kind, "per_node": per_node, "per_processor": per_proc, "default": 0, "sets": 0, "failing": 0,
           "own": 0}
    for _, rec in entry["points"]:
        proc = rec.get("default_proc", rec["proc"]) if isinstance(rec, dict) else None
        if proc is None:
            out["failing"] += 1
        elif entry["app_mapper"]:
            out["own"] += 1
        elif proc["node"] is None:
            out["default"] += 1  # no processor of the kind to slice it to: not counted
        else:
            out["default"] += "default_proc" in rec
            per_node[proc["node"]] += 1
            if "set" in rec:
                out["sets"] += 1
            elif proc["index"] is not None:  # a default-placed CPU point counts on its node only
                per_proc[proc["node"]][proc["index"]] += 1
    return out


def _balance_line(balance: dict) -> str:
    """`_launch_balance` in one line: the points per node (fewest and most beyond 16 nodes), the fewest and most per
    processor, how many of them Legion's default mapper places, and the points neither counts."""
    if balance["own"]:  # the kept program's mapper maps the whole launch (no statement names the task)
        return f"  points per node: not predicted ({balance['own']} points mapped by the program's own mapper)"
    per_node, kind = balance["per_node"], balance["kind"]
    procs = [c for node in balance["per_processor"] for c in node]
    nodes = (" ".join(map(str, per_node)) if len(per_node) <= 16 else
             f"{min(per_node)} to {max(per_node)} ({len(per_node)} nodes)")
    line = f"  points per node: {nodes}"
    if procs and (sum(procs) or not sum(per_node)):  # not when every point counts per node only
        line += (f"; per {kind}: {min(procs)} to {max(procs)} ({sum(c > 0 for c in procs)} of {len(procs)} "
                 f"{kind}s used)")
    if balance["sets"]:
        line += f"; {balance['sets']} on processor sets, counted per node only"
    if balance["default"] and procs:  # `default_slices` placed them
        line += (f"; {balance['default']} left to Legion's default mapper, counted where its slicing puts them"
                 f"{'' if kind == 'GPU' else ' (per node only: the first free ' + kind + ' of the node runs each)'}")
    left = [f"{balance[k]} {what}" for k, what in (("default", "left to Legion's default"), ("failing", "failing"))
            if balance[k] and (k == "failing" or not procs)]
    return line + (f"; not counted: {', '.join(left)}" if left else "")


# The runtime's choice (dsl_mapper.cc's `least_loaded` from slice_task; dsl-reference.md §7.6).
SET_LEGEND = ("n.* = a processor set: the runtime runs the point on its least loaded member, the one with the fewest "
              "tasks placed on it through a set that are mapped and not yet finished (of any launch), single tasks "
              "given it through a set and not yet mapped, and points of the same launch placed on it before this one "
              "(the first in the set's order on a tie; in a concurrent launch, one no other point of the launch has)")
DEFAULT_LEGEND = ("(n.i) = where Legion's default mapper slices the point (blocks dealt to the processors, node by "
                  "node; (n.*): the first free of the node's)")


def _long_legends(entry: dict) -> list[str]:
    """The long legends (DEFAULT_LEGEND, SET_LEGEND) of the notations the placement of the index launch `entry`
    uses: said once per output or figure, after the tables, which name them in short."""
    default = any(isinstance(r, dict) and "default_proc" in r for _, r in entry["points"])
    sets = any(isinstance(r, dict) and "set" in r for _, r in entry["points"])
    return [DEFAULT_LEGEND] * default + [SET_LEGEND] * sets


def _placement_lines(entry: dict, machine: MachineDescription) -> list[str]:
    """The point -> processor table of an index launch as text: `node.index` per point."""
    points = entry["points"][:MAX_TABLE_POINTS]
    dom = entry["domain"]
    width = max(4, *(len(_cell(r, machine)) for _, r in points))
    long = _long_legends(entry)
    # a legend only for a notation the table uses: `dflt` cells, the default mapper's `(n.i)`, sets' `n.*` (these
    # two, long, in short here: the whole legend follows the last table)
    dflt = any(_cell(r, machine) == "dflt" for _, r in points)
    legend = ["(n.i) = Legion's default mapper's slicing"] if DEFAULT_LEGEND in long else [] if not dflt else [
        "dflt = the program's own mapper, as above" if entry["app_mapper"] else "dflt = Legion's default"]
    legend += ["n.* = a processor set"] if SET_LEGEND in long else []
    below = "; legend below" if long else ""
    lines = [f"  placement (point -> {entry['kind']} node.index{''.join('; ' + part for part in legend)}{below}):"]
    if len(dom) == 2:
        lines.append("  " + "i0 \\ i1".ljust(9) + "".join(str(j).rjust(width + 1) for j in range(dom[1])))
        for i in range(dom[0]):
            row = [r for p, r in points if p[0] == i]
            if row:
                lines.append("  " + str(i).ljust(9) + "".join(_cell(r, machine).rjust(width + 1) for r in row))
    else:
        label = (lambda p: str(p[0])) if len(dom) == 1 else (lambda p: "(" + ",".join(map(str, p)) + ")")
        w = max(width, *(len(label(p)) for p, _ in points))
        for start in range(0, len(points), 12):
            chunk = points[start : start + 12]
            lines.append("  point " + "".join(label(p).rjust(w + 1) for p, _ in chunk))
            lines.append("  proc  " + "".join(_cell(r, machine).rjust(w + 1) for _, r in chunk))
    if len(entry["points"]) > MAX_TABLE_POINTS:
        lines.append(f"  ... {len(entry['points']) - MAX_TABLE_POINTS} more points")
    return lines + [_balance_line(_launch_balance(entry, machine))]


def _privilege_text(privilege: str, reduce: tuple[str | None, bool] | None) -> str:
    """A requirement's privilege as the table's column shows it, a reduction's with its operator: "read_only",
    "reduce sum_f64"."""
    return f"{privilege} {reduce[0]}" if reduce and reduce[0] else privilege


def _reduce_text(reduce: tuple[str | None, bool] | None) -> str:
    """What a reduction requirement's row says after its fields: an operator discovery did not record, every point
    reducing into one region; "" for another privilege or neither."""
    if reduce is None:
        return ""
    redop, collective = reduce
    said = ["operator not recorded"] * (redop is None) + ["every point reduces into this one region"] * collective
    return f"  ({'; '.join(said)})" if said else ""


def _explanation_text(entries: list[dict], machine: MachineDescription) -> str:
    out = [f"machine: {machine.describe()}"]
    # Discovery records extents only, and cannot tell a sparse or offset domain from a dense one: said in short.
    if any(e["bounding_box"] and e["domain"] for e in entries):
        out.append("note: launch domains are shown as bounding boxes from 0; a sparse or offset domain has fewer or "
                   "other points")
    for e in entries:
        launch = (f"index launch over {fmt_tuple(e['domain'])}" if e["domain"] else
                  "top-level task" if e.get("top_level") else f"{e['launch']} launch")
        out += ["", f"{e['task']} ({launch})"]
        if e["error"] is not None:
            out.append(f"  {e['error']}")
            continue
        # the whole list, whose first kind with a variant and processors runs it (§7.1), as memories show theirs
        listed = f" (kind list {', '.join(e['kinds'])}: the first with a variant and processors)" \
            if len(e["kinds"]) > 1 else ""
        out.append(f"  processor kind: {e['kind']}{listed}")
        if len(names := e["variant_names"].get(e["kind"], ())) > 1:
            ran = e["variant_ran"].get(e["kind"])
            out.append(f"  variants: {len(names)} {e['kind']} variants ({', '.join(names)}): Legion's default mapper "
                       "picks the one that runs" + (f" (in discovery: {ran})" if ran else "")
                       + "; a Layout statement must suit each (check holds it against all)")
        if e["app_mapper"]:
            out.append("  mapper: the program's own (kept), when it maps this task (every task no statement names, "
                       "when it replaced Legion's default mapper; else those launched with its mapper ID); below: "
                       "Legion's default mapping, which the others get")
        if e["regions"]:
            # the first launch's rows, then those of later launches that map an argument otherwise (on other regions)
            rows = [*e["regions"], *(r for _, regions in e.get("other_maps", ()) for r in regions)]
            # a name as a statement selects it: quoted where it is no identifier ("grid.ghost")
            labels = [(selector_name(r["name"]) if r["name"] else "-")
                      + (" (one point's)" if r["name"] in e["one_point"] and k < len(e["regions"]) else "")
                      for k, r in enumerate(rows)]
            width = max(len("region"), *map(len, labels))
            layouts = [_layout_text(r["layout"]) for r in rows]
            lw = max(len("layout"), *map(len, layouts))
            # a list's later kinds, where the instance goes if it does not fit the first: `FBMEM (then ZCMEM)`
            memories = [r["memory"] + (f" (then {', '.join(later)})" if (later := e.get("fallback", {}).get(
                r["index"]) if k < len(e["regions"]) else r["fallback"]) else "") for k, r in enumerate(rows)]
            mw = max(7, *map(len, memories))
            # the first launch's privileges (discovery records no other launch's): blank on later launches' rows
            privileges = [_privilege_text(e["privileges"][r["index"]], e["reduce"].get(r["index"]))
                          if k < len(e["regions"]) else "" for k, r in enumerate(rows)]
            pw = max(len("privilege"), *map(len, privileges))
            out.append(f"  {'arg':>3}  {'region'.ljust(width)}  {'memory'.ljust(mw)}  {'layout'.ljust(lw)}  "
                       f"{'privilege'.ljust(pw)}  fields")
            lines = [f"  {r['index']:>3}  {label.ljust(width)}  {memory.ljust(mw)}  {layout.ljust(lw)}  "
                     f"{privilege.ljust(pw)}  "
                     for r, label, layout, memory, privilege in zip(rows, labels, layouts, memories, privileges)]
            for r, line in zip(e["regions"], lines):
                out.append(line + _fields_text(e["fields"][r["index"]]) + _reduce_text(e["reduce"].get(r["index"])))
            lines = lines[len(e["regions"]):]
            for group, regions in e.get("other_maps", ()):
                # discovery records no other launch's fields: none shown
                numbers = launch_numbers(group, len(e["launches"]) > 1)[0]
                out += [f"  {numbers} (on other regions) get:",
                        *(line.rstrip() for line in lines[:len(regions)])]
                lines = lines[len(regions):]
        if e["regions"] and (note := _launches_text(e["launches"], e["other_regions"], e["other_unlisted"],
                                                    bool(e.get("other_maps")))):
            out.append(note)
        if e["collected"]:
            out.append(f"  collected after use (CollectMemory): arg {', '.join(map(str, e['collected']))}")
        for i, names in e["tracked"].items():
            out.append(f"  kept tracked despite CollectMemory: arg {i} ({quoted_names(names)} "
                       f"{'reduces' if len(names) == 1 else 'reduce'} into its fields, R457)")
        if e["instance_limit"] is not None:
            out.append(f"  tasks mapped but not finished, per processor, at most (InstanceLimit: back-pressure): "
                       f"{e['instance_limit']}")
        if e["domain"]:
            out += _placement_lines(e, machine)
        elif isinstance(e["points"][0][1], dict):
            rec = e["points"][0][1]
            out.append(f"  processor: {rec['proc']['kind']} (the program's own mapper, or Legion default)"
                       if e["app_mapper"] else f"  processor: {_proc_text(rec['proc'])}" if "set" not in rec else
                       f"  processor: the least loaded of the set {', '.join(map(_proc_text, rec['set']))}, when "
                       "the task is launched")
        if e.get("top_level"):  # E202's rule: by name in ControlReplicate alone
            out.append("  the top-level task runs once, on the first processor (unless a `SingleTaskMap` of `*` or "
                       "of its kind places it), and launches the others; only a ControlReplicate statement may name "
                       "it (any other statement that names it is error E202); statements with `*` or a processor "
                       "kind (`Task * CPU;`, `SingleTaskMap CPU f;`) apply to it")
        if e.get("parent"):
            parent = e["parent"]
            at = (f"on {_proc_text(parent['proc'])}, as placed above" if parent["proc"] else
                  "on CPU[node 0, proc 0], where Legion's default mapper runs the top-level task"
                  if parent["top_level"] else "assumed on CPU[node 0, proc 0] (explain places it on no one processor)")
            out.append(f"  its mapping function reads task.parent: evaluated with the parent of its first launch in "
                       f"discovery, '{parent['task']}', {at}; launched by another task, it follows that task's "
                       "processor")
        errors = {}
        for _, rec in e["points"]:
            if isinstance(rec, DslRuntimeError):
                errors.setdefault(rec.code, rec)
        out += [f"  {err}" for err in errors.values()]
    if legends := list(dict.fromkeys(text for e in entries if e["domain"] for text in _long_legends(e))):
        out += ["", "legend of the placement tables:", *(f"  {text}" for text in legends)]
    return "\n".join(out)


def _launches_text(launches: dict[str, int], other: tuple[OtherRegions, ...] | None, unlisted: int,
                   shown: bool = False) -> str | None:
    """The line that says how a task launched more than once in discovery was launched: all on the regions of its
    first launch, which the table shows (the description keeps its requirements only), or which launches differ in
    which arguments (`other`, `unlisted`: `TaskInfo.other_regions`), e.g. for {"index": 2}; None for one launch, or
    where not known (a benchmark's description). `shown`: the table has rows of later launches that map an argument
    otherwise (`_other_launch_maps`)."""
    if sum(launches.values()) < 2 or other is None:
        return None
    counts = launch_counts_text(launches)
    first = "first index launch" if "index" in launches and len(launches) > 1 else "first launch"
    fields = f"the fields above are its {first}'s (discovery records no other launch's fields)"
    if not other:
        return f"  {counts} in discovery, all on the regions above; {fields}; the same statements map every launch"
    groups = launch_groups_text(other, unlisted, len(launches) > 1)
    return (f"  {counts} in discovery; {'; '.join(groups)}; {fields}; the same statements map every launch (a "
            "statement that selects an argument by a region name, on the launches where it is in that region"
            + ("; the rows of later launches above show the arguments it maps otherwise)" if shown else ")"))


TITLE_CHARS = 100  # characters of a placement figure's title line: well within its 8 inches at fontsize 9


def _save_png(entries: list[dict], machine: MachineDescription, path: str) -> list[str]:
    """`_placement_figure` written to the PNG file `path`; returns the launches drawn, e.g. `task_4 (2x2x2)`."""
    try:
        _placement_figure(entries, machine).savefig(path, dpi=120)
    except OSError as exc:
        raise cannot_write(path, exc) from None
    return [f"{e['task']} ({'x'.join(map(str, e['domain']))})" for e in _drawn(entries)]


def _drawn(entries: list[dict]) -> list[dict]:
    """The index launches a placement figure draws: every one with points."""
    return [e for e in entries if e["domain"] and e["points"]]


def _grid_title(e: dict) -> str:
    """The title of an index launch's placement grid: its task and processor kind, and the notations of its hatched
    (processor set) and parenthesised (Legion's default) cells in short (`_figure_legend` says them whole)."""
    long = _long_legends(e)
    short = ["(n.i): Legion's default"] * (DEFAULT_LEGEND in long) + ["hatched: a processor set"] * (SET_LEGEND in long)
    return f"{e['task']}: point -> {e['kind']} node.index" + "".join(f"; {part}" for part in short)


def _figure_legend(grids: list[dict]) -> str:
    """The long legends of the notations a placement figure's `grids` use, each once, wrapped: one line of either
    is wider than the figure, which cut it at both ends; "" when none uses one."""
    legends = dict.fromkeys(text.replace("n.* = ", "hatched, n.* = ") for e in grids for text in _long_legends(e))
    return "\n".join(textwrap.fill(text, TITLE_CHARS) for text in legends)


def _placement_figure(entries: list[dict], machine: MachineDescription):
    """A matplotlib figure with a colored grid per index launch: each cell one launch point, colored by its
    processor; a point placed on a processor set is hatched, uncolored, and labelled with the set (`_set_label`).
    The axes are the point's coordinates, whole numbers; a launch of 3 or more dimensions has one row per value of
    all its coordinates but the last (row `0,1` of a 2x2x2 launch: points (0,1,0) and (0,1,1)). Raises
    MapperoptError without an index launch (`figures.figure`)."""
    from mapperopt.figures import figure

    grids = _drawn(entries)
    if not grids:
        raise MapperoptError("no index launch to draw")
    per_node = {k: max(machine.count(k, 0), 1) for k in ("CPU", "GPU", "IO", "PY", "OMP")}
    titles = [_grid_title(e) for e in grids]
    legend = _figure_legend(grids)
    # each title line past the first takes room from its grid, and the legend, once below the grids, room of its
    # own: the figure grows by them
    below = 0.16 * (legend.count("\n") + 1) + 0.1 if legend else 0.0
    height = 1.2 + sum(1.6 + 0.16 * t.count("\n") for t in titles) + below
    fig = figure(figsize=(8, height))
    import matplotlib  # imported by `figure`, as numpy is
    import numpy as np
    from matplotlib.patches import Rectangle
    from matplotlib.ticker import MaxNLocator

    axes = fig.subplots(len(grids), 1, squeeze=False)
    cmap = matplotlib.colormaps["tab20"]
    for ax, e, title in zip(axes[:, 0], grids, titles):
        dims = e["domain"]
        rows = dims[:-1]  # the coordinates but the last, as one row index: 1-D launches have one row
        shape = (int(np.prod(rows)), dims[-1])
        cells = np.full(shape, np.nan)
        for point, rec in e["points"]:
            at = (int(np.ravel_multi_index(point[:-1], rows)) if rows else 0, point[-1])
            if isinstance(rec, dict) and "set" in rec:
                label = _set_label(rec["set"], machine)
                ax.add_patch(Rectangle((at[1] - 0.5, at[0] - 0.5), 1, 1, fill=False, hatch="//", lw=0))
            elif isinstance(rec, dict) and rec.get("default_proc", rec["proc"])["node"] is not None:
                p = rec.get("default_proc", rec["proc"])
                if p["index"] is not None:  # a default-placed CPU point has its node only: uncolored
                    cells[at] = p["node"] * per_node[p["kind"]] + p["index"]
                label = _cell(rec, machine)
            else:
                label = rec.code if isinstance(rec, DslRuntimeError) else "dflt"
            if cells.size <= 400:
                ax.text(at[1], at[0], label, ha="center", va="center", fontsize=7)
        ax.imshow(cells, cmap=cmap, vmin=0, vmax=20, aspect="auto")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(f"ipoint[{len(dims) - 1}]")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if dims[-1] <= 32:  # every column (a locator marks -0.5..0.5 for one)
            ax.set_xticks(range(dims[-1]))
        if len(dims) == 2:
            ax.set_ylabel("ipoint[0]")
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        elif len(dims) > 2:  # a row per leading coordinates, named by them while they can be read
            ax.set_ylabel(",".join(f"ipoint[{i}]" for i in range(len(rows))))
            if shape[0] <= 32:
                ax.set_yticks(range(shape[0]), [",".join(map(str, np.unravel_index(r, rows))) for r in
                                                range(shape[0])])
        else:  # one row of points: no coordinate
            ax.set_yticks([])
    if legend:
        fig.text(0.01, 0.01, legend, fontsize=8, va="bottom")
    fig.tight_layout(rect=(0, below / height, 1, 1))
    return fig


def _refuse_huge_launches(app: AppDescription, domain: tuple[int, ...] | None) -> None:
    """Refuses, before any evaluation, an index launch of `app` (over `domain`, when given) of more points than
    explain evaluates at once (MAX_EXPLAIN_POINTS: past it, minutes without output).

    Raises:
        MapperoptError: naming the launch, its points and the limit, and a smaller --domain.
    """
    for info in app.tasks:
        dom = domain or info.domain
        if info.index_launched and dom and math.prod(dom) > MAX_EXPLAIN_POINTS:
            example = "x".join([str(round(64 ** (1 / len(dom))))] * len(dom))  # about 64 points, as many dimensions
            raise MapperoptError(
                f"the index launch of '{info.name}' over {fmt_tuple(dom)} has {math.prod(dom)} points, more than "
                f"explain evaluates at once ({MAX_EXPLAIN_POINTS})",
                hint=f"explain a smaller launch of the same tasks: --domain with at most {MAX_EXPLAIN_POINTS} points "
                     f"(e.g. --domain {example}), or a smaller --size or flags; `mapperopt check` with these options "
                     f"checks the first {MAX_STATIC_POINTS} points of each launch")


def _apply_feedback(text: str, file: str, path: Path) -> str:
    """`text` with the edits of the feedback at `path` (a feedback.json or a run folder) applied; an edit of the
    run's memory sizes, which leaves the mapper as it is, is named on stderr with the option that applies it."""
    from mapperopt.autoguide import apply_edits_to_text, memory_settings
    from mapperopt.records import Edit

    if path.is_dir():
        path = path / "feedback.json"
    try:
        edits = json.loads(path.read_text())["edits"]
    except (OSError, ValueError, KeyError) as exc:
        raise MapperoptError(f"{path} is not a mapperopt feedback.json ({exc})") from None
    if not edits:
        raise MapperoptError(f"{path} suggests no edit that can be applied mechanically")
    edited = apply_edits_to_text(text, edits, filename=file)
    for option, mb in memory_settings([Edit.from_json(e) for e in edits]).items():
        click.echo(f"note: the edit set_memory_size changes the run's memory size, not the mapper: run with "
                   f"--{option} {mb} (Legion's -ll:{option} {mb})", err=True)
    return edited


@click.command(cls=MapperCommand)
@click.argument("file", type=DslFile())
@click.option("--bench", metavar="NAME", default=None, help="The benchmark whose tasks are explained.")
@discovery_options
@machine_option
@processor_options()
@click.option("--domain", "domain_spec", metavar="N[xM...]", default=None,
              help="Launch domain for every index launch [default: the benchmark's, at its CI size].")
@click.option("--png", "png", type=click.Path(dir_okay=False), default=None,
              help="Also draw the point-to-processor placement of each index launch into this PNG.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the placement-trace records as JSON lines, and per index launch its points per node and "
                   "processor (a `balance` record).")
@click.option("--apply", "feedback", type=click.Path(exists=True), default=None, metavar="FEEDBACK",
              help="Preview AutoGuide's suggestion: apply the edits of FEEDBACK (a feedback.json, or the run folder "
                   "holding one), print the edited mapper, and explain that instead.")
@size_option
@click.argument("app_args", nargs=-1, type=click.UNPROCESSED, metavar="[-- APP_ARGS]")
def explain(file, bench, app_spec, keep_app_mapper, timeout_s, rediscover, machine_spec, cpus, gpus, domain_spec, png,
            as_json, feedback, size, app_args):
    """Show the decisions a DSL mapper makes: per task its processor kind, the memory and layout of each region
    argument and, for index launches, the processor of every launch point (in parentheses where the mapper leaves
    the point to Legion's default mapper: where its slicing sends it) and the points per node. Memory capacity is
    not checked (the
    descriptions have no region sizes): an instance shown in a memory may not fit there when the application runs.
    A task's regions and fields are those of its first launch; a task of a user's program that discovery mapped more
    than once says so under its table (its other launches may use other fields or regions), with the rows of the
    later launches on other regions that the mapper maps otherwise (a statement that selects by region name).
    The lines the mapper's print statements write come first, on stderr, under `print output of the evaluation`.

    The launch domains and, without --machine, the machine (probed with Legion, cached) are those of
    `mapperopt run BENCH --size SIZE --cpus CPUS --gpus GPUS -- APP_ARGS` (or `run --app ...`): `--size small`,
    `--cpus 4` or `-- -p 8` explain another run; with --machine and --size or flags, a run on its processors in all
    (as `check`).
    """
    with errors_as_json(as_json):  # an error before the records: on stdout too, as one JSON line
        check_run_args(bench, app_spec, app_args, size, keep_app_mapper, timeout_s, rediscover, machine_spec, cpus,
                       gpus)
        if png:
            check_writable(png)
        text = _read_source_or_exit(file)
        if feedback:
            text = _apply_feedback(text, file, Path(feedback))
            click.echo(text, err=as_json)
        program = _parse_or_exit(text, file)
        if not bench and not app_spec:
            raise UsageError("explain needs --bench NAME or --app FILE|'CMD ARGS'")
        size = size or "ci"
        given = None if machine_spec is None else parse_machine_spec(machine_spec, app_args)
        domain = _parse_domain(domain_spec) if domain_spec else None
        bench, app, run_cmd, variants = sized_app(bench, app_spec, size, app_args, given, keep_app_mapper, timeout_s,
                                                  rediscover, cpus, gpus)
        _refuse_huge_launches(app, domain)
        if variants:
            click.echo(variants, err=True)
        if given is not None:
            given = sized_machine(machine_spec, bench, size, app_args)
            for note in filter(None, (beyond_legion(given, machine_spec), unused_gpus(app, given, machine_spec))):
                click.echo(note, err=True)
        machine = given or load_machine(None, bench, size, tuple(app_args), cpus, gpus)
        printed, diags = io.StringIO(), []
        try:
            # an unanswered tunable changes no decision shown: listed, then reported at the end (exit status 1)
            entries = explain_decisions(program, app, machine, domain, printed, diags, inert_ok=True)
        except CheckError as exc:  # said as check says it: every diagnostic, and the same summary
            click.echo(render_all(exc.diagnostics, text), err=True)
            click.echo(summary_line(file, exc.diagnostics), err=True)
            click.echo("explain stops at errors: it shows no decisions of a mapper with any; fix them as the hints "
                       "say, or remove (or comment out) the statements they name, then explain again", err=True)
            raise click.exceptions.Exit(1) from None
    echo_printed(printed.getvalue(), "the evaluation")
    if as_json:
        for e in entries:
            for pt, rec in e["points"]:  # a failing point: its error, keyed as the other points' records
                click.echo(json.dumps(rec if isinstance(rec, dict) else {
                    "task": e["task"], "point": None if pt is None else list(pt),
                    "domain": None if pt is None else list(e["domain"]), "error": str(rec)}))
            for group, regions in e.get("other_maps", ()):  # the rows the text shows under "launches ... get:"
                numbers = launch_numbers(group, len(e["launches"]) > 1)[0]
                click.echo(json.dumps({"task": e["task"], "launches": numbers, "other_regions": group.to_json(),
                                       "regions": regions}))
            if e["domain"] and e["points"]:
                click.echo(json.dumps({"task": e["task"], "balance": _launch_balance(e, machine)}))
    else:
        click.echo(_explanation_text(entries, machine))
    if png:
        drawn = _save_png(entries, machine, png)
        click.echo(f"wrote {png}: {', '.join(drawn)}", err=True)
    # after the explanation, as check's notes follow its summary; with the warnings that the launch domains shown may
    # not be the run's (another answer to the tunable that sizes them) and that a statement shown for a whole launch
    # applies to one of its points in the run (W325), or to the launches like the first only (W328)
    unlike_run = [d for d in diags if d.code in ("W325", "W328") or (d.code in ("W323", "W324") and not domain)]
    # Check's errors follow the table: a mapping function failing on some points (found by check's static evaluation,
    # or only over --domain's launches, which the table shows) or errors that change nothing shown (INERT_ERRORS: an
    # unanswered tunable); every diagnostic as check says them, and the mapper has errors (exit status 1).
    failed = any(d.is_error for d in diags) or any(
        isinstance(rec, DslRuntimeError) for e in entries for _, rec in e["points"])
    if any(d.is_error for d in diags):
        click.echo(render_all(diags, text), err=True)
        click.echo(summary_line(file, diags), err=True)
    elif unlike_run:
        click.echo(render_all(unlike_run, text), err=True)
    click.echo(f"launch domains: {f'--domain {domain_spec}' if domain else f'those of {run_cmd}'}", err=True)
    if bench in UNDESCRIBED_LAUNCHES:
        click.echo(f"note: {UNDESCRIBED_LAUNCHES[bench]}", err=True)
    if note := displaced_note(app):
        click.echo(note, err=True)
    if failed:
        raise click.exceptions.Exit(1)
