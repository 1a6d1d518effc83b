"""Click parameter types and command classes shared by the commands."""

from __future__ import annotations

import contextlib
import json
import math
import shlex
from typing import Callable, Iterator

import click

from mapperopt.errors import MapperoptError


class FiniteFloatRange(click.FloatRange):
    """A `click.FloatRange` that refuses nan and inf: click's bounds let nan through (every comparison with it is
    false) and inf past a lower bound, and no number of seconds is either."""

    def convert(self, value, param, ctx):
        number = click.types.FloatParamType.convert(self, value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return super().convert(number, param, ctx)



class ListsBenchmarks(click.Command):
    """A command whose first argument names benchmarks (BENCH, build's BENCHES): its help ends with their names, which
    no other help lists."""

    def format_epilog(self, ctx, formatter):
        from mapperopt.benchmarks.apps import known_benchmarks

        formatter.write_paragraph()
        word = next(p.name for p in self.params if isinstance(p, click.Argument)).upper()
        formatter.write_text(f"{word}: {', '.join(known_benchmarks())}.")
        super().format_epilog(ctx, formatter)


@contextlib.contextmanager
def errors_as_json(as_json: bool, record: Callable[[str, str], dict] | None = None,
                   indent: int | None = None) -> Iterator[None]:
    """With --json (`as_json`), an error raised inside (a MapperoptError, or a click error such as a usage error)
    before the command's own JSON is also printed on stdout, as one JSON object (`indent` as json.dumps'), so that a
    program reading stdout learns why nothing else comes: `record(reason, log)`, by default `{"status": "error",
    "reason": reason, "log": log}`, where `reason` is the error's message and `log` the message with its hint. The
    error goes on: stderr says it as without --json, and the exit status is its own. A refusal the command line's
    parsing deferred to here (`defer_refusal`: an option given twice) is raised first, so that it is printed too."""
    try:
        ctx = click.get_current_context(silent=True)
        if ctx is not None and (pending := ctx.meta.pop(_DEFERRED, None)) is not None:
            raise pending
        yield
    except (MapperoptError, click.ClickException) as exc:
        if as_json:
            reason = exc.message if isinstance(exc, MapperoptError) else exc.format_message()
            made = record(reason, str(exc)) if record else {"status": "error", "reason": reason, "log": str(exc)}
            click.echo(json.dumps(made, indent=indent))
        raise


def processor_options(cpus_default: str = "the size's"):
    """`--cpus` and `--gpus`, the processors of a run on this machine (-ll:cpu, -ll:gpu): of `run`, `tune` and
    `compare`, and of `check`, `explain` and `compile`, which check or explain a mapper against that run.
    `cpus_default`: what runs without --cpus, in words."""
    def add(command):
        command = click.option("--gpus", type=click.IntRange(min=0), default=None,
                               help="GPUs (-ll:gpu) [default: the size's].")(command)
        return click.option("--cpus", type=click.IntRange(min=1), default=None,
                            help=f"CPU processors (-ll:cpu) [default: {cpus_default}].")(command)
    return add


# What a command takes in place of another command's option given to it (`run --iters 3`), said after the commands
# that take that option (`elsewhere`).
INSTEAD = {
    ("--iters", "run"): "run measures one mapper, --repeats N times (or --once)",
    ("--start", "run"): "run measures one mapper, --mapper FILE",
    **{("--domain", name): f"{name} judges the launch domains of the run (set them with the program's flags after "
                           "`--`, e.g. `--bench circuit -- -p 8`)" for name in ("check", "compile")},
    **{("--mapper", name): f"{name} starts from --start FILE" for name in ("tune", "compare")},
    **{("--mapper", name): f"{name} takes the mapper file as its argument (`mapperopt {name} FILE`)"
       for name in ("check", "explain", "compile")},
    **{("--domain", name): f"{name}'s launch domains are the program's, set with its flags after `--` (e.g. "
                           f"`mapperopt {name} circuit -- -p 8`)" for name in ("run", "tune", "compare")},
    **{("--bench", name): f"{name} takes the benchmark as its argument (`mapperopt {name} BENCH`, e.g. `mapperopt "
                          f"{name} circuit`)" for name in ("run", "tune", "compare")},
    **{("--machine", name): f"{name} measures on this machine (`mapperopt machine` shows it), --cpus and --gpus set "
                            "the processors it uses" for name in ("run", "tune", "compare")},
    ("--optimizer", "compare"): "compare takes several, --optimizers NAME,NAME (e.g. `--optimizers guided,optuna`)",
    ("--optimizers", "tune"): "tune runs one, --optimizer NAME",
    ("--runs", "tune"): "tune makes one tuning run (--seed chooses it); compare makes several of each optimizer",
}


def _commands() -> list[tuple[str, click.Command]]:
    """(name, command) of every mapperopt command; loads each command's module, so only on a refusal's path."""
    from mapperopt.cli import COMMANDS, _group

    group = _group()
    ctx = click.Context(group)
    return [(name, cmd) for name in COMMANDS if (cmd := group.get_command(ctx, name)) is not None]


def elsewhere(option: str, command: str) -> str | None:
    """"OPTION is an option of `mapperopt A` and `mapperopt B`, not of COMMAND", with what COMMAND takes instead
    (`INSTEAD`) where known, for an option that other mapperopt commands take and `command` does not; None when it
    takes it or no other does. click's near miss of such an option (`run --iters`: '--unit') misleads."""
    takes = [name for name, cmd in _commands() if any(option in p.opts + p.secondary_opts for p in cmd.params)]
    if not takes or command in takes:
        return None
    names = [f"`mapperopt {name}`" for name in takes]
    who = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
    instead = INSTEAD.get((option, command))
    return f"{option} is an option of {who}, not of {command}" + (f": {instead}" if instead else "")


def another_commands_option(exc: click.NoSuchOption) -> click.NoSuchOption | None:
    """click's refusal `exc` of an option its command does not take, said as `elsewhere` says it and without a near
    miss, when other mapperopt commands take the option; None otherwise."""
    if exc.ctx is None or exc.ctx.command.name is None:
        return None
    # `--iters=3` as a whole where the command lets unknown options through (run: `ignore_unknown_options`)
    name = exc.option_name.split("=", 1)[0] if exc.option_name.startswith("--") else exc.option_name
    said = elsewhere(name, exc.ctx.command.name)
    return None if said is None else click.NoSuchOption(name, f"No such option '{name}': {said}", None, exc.ctx)


def _takes_value(option: str) -> bool:
    """Whether `option`, as the mapperopt commands that take it read it, is followed by a value (`--iters 3`)."""
    return any(not (p.is_flag or p.count) for _, cmd in _commands()
               for p in cmd.params if isinstance(p, click.Option) and option in p.opts + p.secondary_opts)


def misplaced_options(ctx: click.Context, command: click.Command, args: list[str]) -> list[str]:
    """`args` of `command`, refusing another mapperopt command's option where click cannot say so itself:
    - after `--` of a command that passes nothing to a program (fmt, toolchain, doctor, build: no APP_ARGS), which
      read it as a file, a benchmark or an extra argument;
    - before `--` with --json (`run circuit --json --iters 3`): click's refusal would come before the command prints
      its JSON error object, so the option (and its value) is left out of the arguments returned and its refusal
      deferred to the command (`defer_refusal`), which prints the object as for the same option after `--`.

    Raises:
        click.UsageError: the first case, naming the commands that take the option.
    """
    from pathlib import Path

    cut = args.index("--") if "--" in args else len(args)
    own = {o for p in command.params for o in p.opts + p.secondary_opts}
    if not any(p.name == "app_args" or p.name == "flags" for p in command.params):
        for word in args[cut + 1:]:
            name = word.split("=", 1)[0]
            if word.startswith("--") and name not in own and not Path(word).exists() \
                    and (said := elsewhere(name, command.name)) is not None:
                read = next((p.name for p in command.params if isinstance(p, click.Argument)), None)
                read = {"files": "is read as a file name", "benches": "is read as a benchmark name"}.get(
                    read, "is read as an argument") if read else f"is not read: {command.name} takes nothing after `--`"
                raise click.UsageError(f"{name} after `--` {read}; {said}")
    takes_json = "--json" in own
    if not (takes_json and "--json" in args[:cut]):
        return args
    kept, k = [], 0
    while k < cut:
        word, k = args[k], k + 1
        name = word.split("=", 1)[0]
        if word.startswith("--") and name not in own and (said := elsewhere(name, command.name)) is not None:
            defer_refusal(ctx, command, args, click.NoSuchOption(name, f"No such option '{name}': {said}"))
            if "=" not in word and _takes_value(name) and k < cut:
                k += 1  # its value
            continue
        if word.startswith("--") and name not in own \
                and not command.context_settings.get("ignore_unknown_options", command.ignore_unknown_options):
            # an option no command takes (`machine --json --iterz 3`): click's refusal, deferred too (run's is its
            # own: BenchCommand.parse_args); a word after it that is neither an option nor a file taken for its value
            import difflib

            defer_refusal(ctx, command, args, click.NoSuchOption(
                name, f"No such option '{name}'.", difflib.get_close_matches(name, sorted(own))))
            if "=" not in word and k < cut and not args[k].startswith("-") and not Path(args[k]).exists():
                k += 1
            continue
        kept.append(word)
    return kept + args[cut:]


def options_after_separator(command: click.Command, app_spec: str, after) -> None:
    """Warns (one line on stderr, not an error: the program may take it) about a word among the flags after `--`
    (`after`) given to the program of `--app app_spec` that is a mapperopt option, of `command` or of another
    mapperopt command (`compare --app x.yaml -- --optimizer guided` would start the default comparison): it goes to
    the program, and mapperopt's options go before `--`."""
    own = {o for p in command.params for o in p.opts + p.secondary_opts if o.startswith("--")}
    for word in map(str, after):
        name = word.split("=", 1)[0]
        said = None if name in own or not word.startswith("--") else elsewhere(name, command.name)
        if name in own or said is not None:
            meant = f"mapperopt's {name} goes before `--`" if said is None else \
                f"if it is meant for mapperopt (which takes its options before `--`): {said}"
            click.secho(f"warning: {name} after `--` goes to the program of --app {app_spec}, not to mapperopt; "
                        + meant, fg="yellow", err=True)
            return


_DEFERRED = "mapperopt.deferred_refusal"  # ctx.meta's key (shared by a command's context and its group's)


def defer_refusal(ctx: click.Context, command: click.Command, args: list[str],
                  exc: click.UsageError | MapperoptError) -> None:
    """Raises `exc`, a refusal of `command`'s arguments `args` found before the command runs, unless --json is among
    them (up to `--`) and the command takes it: then the command's `errors_as_json`, entered before anything else it
    does (as `run`, `explain` and `machine` do), raises it, printing its JSON error object as for other usage errors.
    Of two refusals deferred, the first found is raised."""
    given = args[:args.index("--")] if "--" in args else args
    takes = any(isinstance(p, click.Option) and "--json" in p.opts for p in command.params)
    if not (takes and "--json" in given):
        raise exc
    ctx.meta.setdefault(_DEFERRED, exc)


def refuse_repeated_values(command: click.Command, args: list[str]) -> None:
    """Refuses an option of `command` that takes one value given more than once with different values among its
    arguments `args` (up to `--`: the program's flags after it are its own): click would take the last value, silently.
    A boolean flag pair given both ways (`--profile --no-profile`) is refused too. The same value again, a flag
    again and an option that takes several values (`multiple`) pass; with -h or --help
    nothing is refused (click shows the help first).

    Raises:
        click.BadOptionUsage: naming the option and every value given.
    """
    single = {opt: param for param in command.params if isinstance(param, click.Option)
              and not (param.is_flag or param.count or param.multiple) for opt in param.opts}
    # a boolean flag pair (`--profile/--no-profile`): given both ways, refused as an option of two values
    pairs = {opt: (param, on) for param in command.params if isinstance(param, click.Option) and param.is_flag
             and param.secondary_opts for on, opts in ((True, param.opts), (False, param.secondary_opts))
             for opt in opts}
    given: dict[click.Option, list[tuple[str, str | None]]] = {}
    ways: dict[click.Option, set[bool]] = {}
    k = 0
    while k < len(args) and args[k] != "--":
        word, k = args[k], k + 1
        if word in ("-h", "--help"):
            return
        name, value = (word.split("=", 1) + [None])[:2] if word.startswith("--") else (word, None)
        if name not in single and word[:2] in single and not word.startswith("--"):  # -oVALUE
            name, value = word[:2], word[2:]
        if word in pairs:
            param, on = pairs[word]
            given.setdefault(param, []).append((word, None))
            ways.setdefault(param, set()).add(on)
        elif name in single:
            if value is None and k < len(args):  # the next word, as click takes it, whatever it looks like
                value, k = args[k], k + 1
            if value is not None:  # none: click says that it needs one
                given.setdefault(single[name], []).append((name, value))
    for param, uses in given.items():
        if len({value for _, value in uses}) > 1 or len(ways.get(param, ())) > 1:
            said = ", ".join(name if value is None else f"{name} {shlex.quote(value)}" for name, value in uses)
            raise click.BadOptionUsage(uses[0][0], f"{param.opts[0]} given more than once ({said}): give it once")
