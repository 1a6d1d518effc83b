"""`mapperopt compile`: a DSL file -> a mapper library (and, on request, the generated C++).

A compile that succeeded is recorded under the build cache (compiler/cached.py); the same call again answers from
the record, through `cached.answer` before the command line is even parsed by click.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from mapperopt import toolchain
from mapperopt.benchmarks.userapp import discovery_options
from mapperopt.compiler.cached import machine_text, read_record, record_path
from mapperopt.dsl.commands import DslFile, MapperCommand
from mapperopt.errors import MapperoptError
from mapperopt.options import processor_options
from mapperopt.files import cannot_write, write_atomically


def compile_or_exit(text: str, file: str, app=None, machine=None, note: str | None = None) -> tuple[str, str, str]:
    """(library path, C++ path, messages for stderr) of a full compile of `text` (the file `file`) against `app` and
    `machine` (descriptions or None), `note` (what was not checked) ending the messages; a syntax or check error is
    printed to stderr as `check` prints it, and exits with status 1."""
    from mapperopt.compiler.build import CheckError, compile_program
    from mapperopt.dsl.commands import exit_on_syntax_error, summary_line
    from mapperopt.dsl.errors import render_all

    try:
        with exit_on_syntax_error(file):
            cm = compile_program(text, file, app=app, machine=machine)
    except CheckError as exc:
        click.echo(render_all(exc.diagnostics, text), err=True)
        click.echo(summary_line(file, exc.diagnostics), err=True)
        raise click.exceptions.Exit(1) from None
    messages = [render_all(cm.diagnostics, text)] if cm.diagnostics else []
    if note:
        messages.append(note)
    return str(cm.so_path), str(cm.cpp_path), "\n".join(messages)


@click.command("compile", cls=MapperCommand)
@click.argument("file", type=DslFile())
@click.option("-o", "output", type=click.Path(dir_okay=False), default=None,
              help="Copy the mapper library here (default: only print its path in the cache).")
@click.option("--emit-cpp", type=click.Path(dir_okay=False), default=None, help="Write the generated C++ here.")
@click.option("--bench", metavar="NAME", default=None,
              help="Check names and launches against this benchmark, on this machine as `run` sees it.")
@discovery_options
@click.option("--machine", "machine_spec", metavar="NODESxGPUS[xCPUS]", default=None,
              help="Check against a hypothetical machine instead, e.g. 1x4.")
@processor_options()
@click.option("--size", default=None, metavar="SIZE",
              help="With --bench or --app: check against the launch domains of a run at this size [default: ci].")
@click.argument("app_args", nargs=-1, type=click.UNPROCESSED, metavar="[-- APP_ARGS]")
def compile_cmd(file, output, emit_cpp, bench, app_spec, keep_app_mapper, timeout_s, rediscover, machine_spec, cpus,
                gpus, size, app_args):
    """Compile a DSL mapper to a shared library: mapperopt's benchmarks load it with `-mapper PATH.so`, any other
    Legion program through the LD_PRELOAD shim (`mapperopt toolchain --env`; with --app, the command is printed).

    Prints the library's path. The same file is compiled once; later calls return the cached library. Warnings go
    to stderr; errors exit with status 1. With --bench, the launch domains checked are those of `mapperopt run
    BENCH --size SIZE -- APP_ARGS` (APP_ARGS: the run's own flags after `--`, e.g. `-- -p 8`), on this machine as
    that run sees it (probed with Legion, as `check` does; --cpus and --gpus as `run` takes them) unless --machine
    describes another. With --app, your own program takes the place of the benchmark, as in `check --app`
    (APP_ARGS: its run's flags, as `run` takes them).
    """
    from mapperopt.descriptions import MachineDescription, parse_machine_spec
    from mapperopt.dsl.checker import check as check_program
    from mapperopt.dsl.commands import (answered_app, check_run_args, exit_on_syntax_error, load_app, sized_app,
                                        sized_machine, unchecked_note)
    from mapperopt.dsl.parser import parse, read_source

    check_run_args(bench, app_spec, app_args, size, keep_app_mapper, timeout_s, rediscover, machine_spec, cpus, gpus)
    with exit_on_syntax_error(file):
        text = read_source(file)
    given = None if machine_spec is None else parse_machine_spec(machine_spec, app_args)
    app, described, target = None, "", bench
    counted = cpus is not None or gpus is not None
    if app_spec or (bench and (size not in (None, "ci") or app_args or counted)):  # the application describes that run
        target, app, _, variants = sized_app(bench, app_spec, size or "ci", app_args, given, keep_app_mapper,
                                             timeout_s, rediscover, cpus, gpus)
        if variants:
            click.echo(variants, err=True)
        if app_spec:  # check the launches of a run with this mapper's tunable answers, as `check` does
            with exit_on_syntax_error(file):
                program = parse(text, file)
            app, note = answered_app(target, app, program, check_program(program, app), size or "ci", app_args,
                                     timeout_s, cpus, gpus)
            if note:
                click.echo(note, err=True)
        described = json.dumps(app.to_json(), sort_keys=True)
    if given is not None:
        given = sized_machine(machine_spec, target, size or "ci", app_args)
    # With --bench and without --machine, the machine is the one `check` probes; its description is part of the
    # record's key, so the record answers only on that machine (cached.answer probes it the same way). So is
    # --machine's when the run's size or flags size its memories.
    machine, probed, probe_error = None, "", None
    if given is not None:
        machine = given
        if target or app_args:  # its size's and flags' memories shape the machine: the record answers only for that one
            probed = json.dumps(machine.to_json(), sort_keys=True)
    elif target or counted:  # without a program, this machine with the run's counts
        try:
            probed = machine_text(target, size or "ci", tuple(app_args), cpus, gpus)
            machine = MachineDescription.from_json(json.loads(probed))
        except MapperoptError as exc:
            probe_error = exc
    record = record_path(text, file, None if app_spec else bench, machine_spec, described, probed)
    try:
        so_path, cpp_path, messages = read_record(record)
        if not (toolchain.sealed(Path(so_path)) and Path(cpp_path).is_file()):
            raise OSError("the recorded library is gone or damaged")
    except (OSError, ValueError):
        if bench and app is None:  # the stored description of size ci, read only when compiling
            app = load_app(bench)
        so_path, cpp_path, messages = compile_or_exit(text, file, app, machine,
                                               unchecked_note(target, machine_spec is not None or counted, probe_error))
        record.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(record, json.dumps([so_path, cpp_path, messages]))
    if messages:
        click.echo(messages, err=True)
    for source, copy in ((cpp_path, emit_cpp), (so_path, output)):
        if copy:
            try:  # whole or not at all: a full disk leaves no file cut short
                write_atomically(Path(copy), Path(source).read_bytes())
            except OSError as exc:  # no such folder, not writable: the folder is the user's to make (as cc -o)
                raise cannot_write(copy, exc) from None
    click.echo(output or so_path)
    if app_spec:  # `-mapper PATH.so` is the benchmarks' flag: a user's program ignores it, silently
        from mapperopt.benchmarks.userapp import load_command

        click.echo(f"to load it into {target.name} (not with -mapper, a flag of mapperopt's benchmarks only), run:\n"
                   f"{load_command(target, Path(output or so_path), size or 'ci', app_args, cpus, gpus)}", err=True)
