"""`mapperopt compile`: a DSL file -> a mapper library (and, on request, the generated C++)."""

from __future__ import annotations

import shutil
from pathlib import Path

import click

from mapperopt.compiler.build import CheckError, compile_program
from mapperopt.descriptions import parse_machine_spec
from mapperopt.dsl.commands import load_app, unchecked_note
from mapperopt.dsl.errors import DslSyntaxError, render_all
from mapperopt.errors import MapperoptError


@click.command("compile")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("-o", "output", type=click.Path(dir_okay=False), default=None,
              help="Copy the mapper library here (default: only print its path in the cache).")
@click.option("--emit-cpp", type=click.Path(dir_okay=False), default=None, help="Write the generated C++ here.")
@click.option("--bench", metavar="NAME", default=None, help="Check task and region names against this benchmark.")
@click.option("--machine", "machine_spec", metavar="NODESxGPUS[xCPUS]", default=None,
              help="Check against a hypothetical machine, e.g. 1x4.")
def compile_cmd(file, output, emit_cpp, bench, machine_spec):
    """Compile a DSL mapper to a shared library that applications load with `-mapper PATH.so`.

    Prints the library's path. The same program (after formatting) is compiled once; later calls return the cached
    library. Warnings go to stderr; errors exit with status 1.
    """
    try:
        text = Path(file).read_text()
    except OSError as exc:
        raise MapperoptError(f"cannot read '{file}': {exc.strerror}") from None
    app = load_app(bench) if bench else None
    machine = parse_machine_spec(machine_spec) if machine_spec else None
    try:
        cm = compile_program(text, file, app=app, machine=machine)
    except DslSyntaxError as exc:
        click.echo(str(exc), err=True)
        raise click.exceptions.Exit(1) from None
    except CheckError as exc:
        click.echo(render_all(exc.diagnostics, text), err=True)
        raise click.exceptions.Exit(1) from None
    if cm.diagnostics:
        click.echo(render_all(cm.diagnostics, text), err=True)
    note = unchecked_note(bench, machine_spec)
    if note:
        click.echo(note, err=True)
    if emit_cpp:
        shutil.copyfile(cm.cpp_path, emit_cpp)
    if output:
        shutil.copyfile(cm.so_path, output)
    click.echo(output or str(cm.so_path))
