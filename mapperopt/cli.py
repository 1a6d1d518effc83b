"""The `mapperopt` command line.

Each subcommand lives in the layer that implements it and is imported only when used, so that heavy
dependencies (lark, trace-opt, matplotlib) are not needed for commands that do not use them.
"""

from __future__ import annotations

import functools
import importlib
import sys

from mapperopt.errors import MapperoptError, closest

# name -> (module, attribute, one-line help shown by `mapperopt --help` without importing the module)
COMMANDS = {
    "build": ("mapperopt.commands", "build", "Build benchmark applications (cached)."),
    "machine": ("mapperopt.commands", "machine", "Show the machine as Legion sees it."),
    "doctor": ("mapperopt.commands", "doctor", "Check that everything mapperopt needs is installed."),
    "toolchain": ("mapperopt.commands", "toolchain_cmd", "Flags and environment to build and run your own program."),
    "check": ("mapperopt.dsl.commands", "check", "Check a DSL mapper for errors."),
    "fmt": ("mapperopt.dsl.commands", "fmt", "Format DSL mappers canonically (--check: list unformatted ones)."),
    "explain": ("mapperopt.dsl.commands", "explain", "Show the decisions a DSL mapper makes."),
    "compile": ("mapperopt.compiler.commands", "compile_cmd", "Compile a DSL mapper to a shared library."),
    "run": ("mapperopt.benchmarks.commands", "run", "Run a benchmark with a mapper and measure it."),
    "tune": ("mapperopt.optimizer.commands", "tune", "Tune a mapper for a benchmark."),
    "compare": ("mapperopt.optimizer.compare", "compare", "Compare optimizers on a benchmark (several seeds each)."),
}


@functools.cache
def _group():
    """The click group (click is imported here: a compile answered from its record never needs it)."""
    import click

    class LazyGroup(click.Group):
        """A click group whose commands are imported on first use."""

        def list_commands(self, ctx):
            return list(COMMANDS)

        def get_command(self, ctx, name):
            if name not in COMMANDS:
                return None
            module, attr, short = COMMANDS[name]
            try:
                return getattr(importlib.import_module(module), attr)
            except (ImportError, AttributeError) as exc:
                missing = getattr(exc, "name", None) or str(exc)

                @click.command(name=name, help=short, context_settings={"ignore_unknown_options": True})
                @click.argument("args", nargs=-1, type=click.UNPROCESSED)
                def unavailable(args):
                    raise click.ClickException(
                        f"'mapperopt {name}' is not yet available in this installation ({missing})."
                    )

                return unavailable

        def resolve_command(self, ctx, args):
            from mapperopt.options import defer_refusal, misplaced_options, refuse_repeated_values

            try:
                name, command, rest = super().resolve_command(ctx, args)
            except click.UsageError as exc:  # click suggests misspelt options, not commands
                near = closest(args[0], COMMANDS) if args and args[0] not in COMMANDS else None
                if near is None:
                    raise
                raise click.UsageError(f"{exc.message} Did you mean {near!r}?", ctx) from None
            if command is not None and not ctx.resilient_parsing:
                try:
                    refuse_repeated_values(command, rest)  # `--iters 3 --iters 5`: click would take 5 silently
                except click.UsageError as exc:  # with --json: refused inside the command, in JSON too
                    defer_refusal(ctx, command, rest, exc)
                rest = misplaced_options(ctx, command, rest)  # another command's option after `--`, or with --json
            return name, command, rest

        def invoke(self, ctx):
            from mapperopt.options import another_commands_option

            try:
                return super().invoke(ctx)
            except click.NoSuchOption as exc:  # another command's option (`run --iters`): said so, no near miss
                if (said := another_commands_option(exc)) is None:
                    raise
                raise said from None

        def format_commands(self, ctx, formatter):
            # Short help from the table, so that `--help` imports nothing heavy.
            rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    @click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
    @click.version_option(package_name="mapperopt")
    def cli():
        """Write Legion mappers in a small DSL, compile them, run real benchmarks and tune them.

        Main commands: `mapperopt tune circuit --size small --iters 10`, `mapperopt run circuit --mapper my.dsl`.
        """

    return cli


def __getattr__(name: str):
    if name == "cli":  # `from mapperopt.cli import cli`
        return _group()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _show(exc) -> None:
    """Prints a click error (e.g. a usage error: the usage line, then the message) with the same `error: ` prefix as
    mapperopt's own errors, where click says `Error: `."""
    import io
    import re

    import click

    text = io.StringIO()
    exc.show(file=text)
    head, *message = re.split(r"^Error: ", text.getvalue(), maxsplit=1, flags=re.M)
    click.echo(head, err=True, nl=False)
    if message:
        click.secho(f"error: {message[0]}", fg="red", err=True, nl=False)


def _aborted(interrupt: BaseException | None) -> str:
    """What a Ctrl-C (`interrupt`, a KeyboardInterrupt, or None) that no command reported stopped: a build
    (`toolchain`'s `building` on it) is named, with what running again does."""
    what = getattr(interrupt, "building", None)
    return ("aborted" if what is None else
            f"aborted: interrupted while building {what}; the build cache keeps only finished builds: the same "
            "command builds it again")


def main(argv: list[str] | None = None) -> int:
    """Entry point: runs the CLI and turns `MapperoptError` (exit status 1, 2 for a usage error), a write the file
    system refused and a folder where a file belongs (or the reverse) into a message and exit status 1."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["compile"]:
        from mapperopt.compiler.cached import answer  # a compile done before: answered without click

        try:
            status = answer(args[1:])
        except KeyboardInterrupt as exc:  # it may build the machine probe first
            print(_aborted(exc), file=sys.stderr)
            return 130
        if status is not None:
            return status
    import click

    from mapperopt import interrupts

    interrupts.watch()  # a Ctrl-C that Python drops (inside a callback it runs itself) still stops the command
    try:
        # Without standalone mode click returns the status of `Exit` instead of raising it.
        status = _group().main(args=argv, standalone_mode=False)
    except MapperoptError as exc:
        click.secho(f"error: {exc}", fg="red", err=True)
        return exc.exit_code
    except OSError as exc:  # a full disk, a read-only cache, ...: said as the errors above
        from mapperopt.files import refused_write, wrong_kind

        if interrupts.terminated() and interrupts.output_lost(exc):  # a hang-up's EIO outran its KeyboardInterrupt
            return 128 + interrupts.terminated()
        if (error := refused_write(exc) or wrong_kind(exc)) is None:
            raise
        click.secho(f"error: {error}", fg="red", err=True)
        return 1
    except click.exceptions.Abort as exc:  # a Ctrl-C no command reported (tune and compare say so, then exit 130)
        with interrupts.terminal_may_be_gone():
            click.echo(_aborted(exc.__cause__), err=True)
        status = 130
    except click.ClickException as exc:
        _show(exc)
        return exc.exit_code
    status = status if isinstance(status, int) else 0
    stopped = interrupts.terminated()
    return 128 + stopped if status == 130 and stopped else status  # as if killed by the signal


if __name__ == "__main__":
    status = main()
    # A KeyboardInterrupt that ended code evaluated from a string (a namedtuple or dataclass being made, e.g. in an
    # import) marks it unhandled for the interpreter even once a command handled it, and `python -m` would then end
    # with SIGINT instead of `status`: evaluating a string afterwards clears that mark.
    exec("")
    sys.exit(status)
