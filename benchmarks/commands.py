"""`mapperopt run`: run a benchmark with a mapper, measure it, and show the result and AutoGuide's feedback."""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shlex
import statistics
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import click
from click.core import ParameterSource

from mapperopt.benchmarks import protocol
from mapperopt.benchmarks.apps import (BEFORE_TIMER, check_app_flags, known_benchmarks, larger_size, load_config,
                                      require_one_value)
from mapperopt.benchmarks.harness import (PROFILE_ITERATIONS, RunInterrupted, _resolve_mapper, printed_lines,
                                          run_benchmark)
from mapperopt.benchmarks.userapp import (Metric, UserApp, app_from_options, app_options, dsl_mapper_hint,
                                          output_checked, pattern_unit, read_app_file, relative_paths_note, run_notes,
                                          wrapped_programs)
from mapperopt.errors import MapperoptError, UsageError
from mapperopt.benchmarks.protocol import SHORTEST_TIMEOUT_S
from mapperopt.options import (FiniteFloatRange, ListsBenchmarks, defer_refusal, errors_as_json,
                               options_after_separator, processor_options)
from mapperopt.records import Feedback, RunResult



# What a line never breaks inside: a command (`...`), a regular expression (/.../) or a quoted text ('...'), each
# pasted or read as one piece.
_WHOLE = re.compile(r"`[^`\n]*`|(?<!\S)/[^/\n]+/(?=[\s.,;:)]|$)|(?<![\w'])'[^'\n]*'(?![\w'])")


def wrap_whole(text: str, width: int) -> str:
    """`text` wrapped at spaces to `width` columns, never inside a command, a regular expression or a quoted text
    (`_WHOLE`): one longer than `width` gets a line of its own, whole."""
    import textwrap

    keep = "\0"  # not whitespace to textwrap: the spaces of a piece kept whole
    text = _WHOLE.sub(lambda m: m.group(0).replace(" ", keep), text)
    return "\n".join(textwrap.wrap(text, max(width, 20), break_long_words=False, break_on_hyphens=False)
                     ).replace(keep, " ")


# A command the text gives outside backquotes (`mapperopt tune ... --resume DIR`; mapperopt by a path, quoted where
# the shell needs it: `toolchain.invoked_as`): its end is not known, so a line that holds one is left whole.
_BARE_COMMAND = re.compile(r"\bmapperopt'? [a-z]")


def wrap_prose(text: str, width: int) -> str:
    """`text` wrapped as `wrap_whole` wraps it, unless it gives a command outside backquotes (`_BARE_COMMAND`):
    then whole, so that it pastes as one."""
    return text if _BARE_COMMAND.search(_WHOLE.sub("", text)) else wrap_whole(text, width)


def wraps(console: Any) -> bool:
    """Whether tune's and compare's prose wraps on `console`, which wraps nothing itself (soft_wrap, so that its paths
    and commands stay whole): on a terminal, or where COLUMNS gives a width, as `run` wraps; piped output without
    COLUMNS keeps each line whole (for grep and logs)."""
    return not console.soft_wrap or console.is_terminal or bool(os.environ.get("COLUMNS"))


def print_wrapped(console: Any, text: str, markup: bool = True) -> None:
    """Prints `text` (rich markup, unless `markup` is False) with each of its lines wrapped to the console's width by
    `wrap_prose` where the console `wraps`, its styles kept."""
    from rich.text import Text

    rich_text = Text.from_markup(text) if markup else Text(text)
    plain = rich_text.plain
    wrapped = "\n".join(wrap_prose(line, console.width) if line.strip() and wraps(console) else line
                         for line in plain.split("\n"))
    if len(wrapped) == len(plain):  # only spaces became line breaks: the styles' spans still fit
        rich_text = Text(wrapped, spans=list(rich_text.spans))
    console.print(rich_text, soft_wrap=True)


def print_command_last(console: Any, text: str) -> None:
    """Prints `text` (no markup) as `print_wrapped` does; where it ends with `run it with: COMMAND` and the console
    `wraps`, the prose wrapped and the command, whole, on a line of its own, to paste as one."""
    prose, said, command = text.rpartition("run it with: ")
    print_wrapped(console, f"{prose}{said.rstrip()}\n{command}" if said and wraps(console) else text, markup=False)


# Where a progress line's figures start ("  iter 3/10  ", "  random #1 iter 3/10: "): its later lines are indented so.
_PROGRESS_HEAD = re.compile(r"\s*(?:\S+ #\d+ )?iter \d+/\d+:?\s+")


def print_progress(console: Any, text: str, markup: bool = True) -> None:
    """Prints an iteration's progress line (rich markup, unless `markup` is False) where the console `wraps` within
    its width as `wrap_prose` wraps, each later line indented under the figures (`_PROGRESS_HEAD`), its styles kept;
    whole otherwise, as one line."""
    import textwrap

    from rich.text import Text

    line = Text.from_markup(text) if markup else Text(text)
    plain = line.plain
    if not wraps(console) or _BARE_COMMAND.search(_WHOLE.sub("", plain)):
        console.print(line, soft_wrap=True)
        return
    head = _PROGRESS_HEAD.match(plain)
    indent = " " * (len(head.group(0)) if head and len(head.group(0)) < console.width // 2 else 4)
    held = _WHOLE.sub(lambda m: m.group(0).replace(" ", "\0"), plain)  # as `wrap_whole`: kept whole; same length
    parts = textwrap.wrap(held, max(console.width, 20), subsequent_indent=indent, break_long_words=False,
                          break_on_hyphens=False, expand_tabs=False, replace_whitespace=False)
    out, at = Text(), 0
    for n, part in enumerate(parts):  # each part is a piece of the line: its styles are sliced from it
        part = part[len(indent):] if n else part
        at = held.index(part, at)
        if n:
            out.append("\n" + indent)
        out.append_text(line[at:at + len(part)])
        at += len(part)
    console.print(out, soft_wrap=True)


def wrap_diagnostics(text: str) -> str:
    """Diagnostics as `render_all` gives them, each message, hint and note line wrapped by `wrap_whole` to stderr's
    width where it `wraps` (its continuation lines indented under it), the source excerpts and carets whole."""
    from rich.console import Console

    console = Console(stderr=True, soft_wrap=True)
    if not wraps(console):
        return text
    out = []
    for line in text.split("\n"):
        if len(line) <= console.width or re.match(r"\s*\d* \| ", line):
            out.append(line)
            continue
        indent = "    " if line.startswith("  ") else "  "
        first, *rest = wrap_whole(line, console.width - len(indent)).split("\n")
        out += [first, *(indent + part for part in rest)]
    return "\n".join(out)


def print_whole(console: Any, head: str, text: str, style: str = "bold") -> None:
    """Prints `head: text` (`head` in `style`) wrapped to the console's width by `wrap_whole`: rich wraps at any
    space, breaking a regular expression or a command the text offers across lines; a console that leaves long
    lines whole (soft_wrap: tune's, compare's, so that paths and commands stay whole) wraps these too where it
    `wraps`, a line with a bare command left whole (`wrap_prose`)."""
    from rich.markup import escape

    line = f"{head}: {text}"
    wrapped = (wrap_whole(line, console.width) if not console.soft_wrap else  # run's
               wrap_prose(line, console.width) if wraps(console) else line)
    console.print(f"[{style}]{escape(head)}:[/]{escape(wrapped[len(head) + 1:])}", soft_wrap=True)


def _short_in_doubt(text: str, metric: Metric, time_s: float | None) -> tuple[str, str]:
    """The "Short measurement" note (`text`) of a run whose metric's pattern reads another time unit than its unit
    (`pattern_unit`: `unit_mismatch` warned of it before the run; `time_s`: the measured seconds per execution in
    the unit given): whether the execution is short depends on the unit, so its advice of more work is not given as
    fact. In the pattern's unit the execution may be long enough: then the unit is what to correct; where it is
    short in either unit, the note stands, saying so. Returns (title, text): the note as it is where the pattern
    shows no other unit."""
    doubt = pattern_unit(metric)
    if doubt is None or time_s is None or metric.unit not in protocol.TIME_UNITS:
        return "Short measurement", text
    word, unit = doubt
    other = time_s * protocol.TIME_UNITS[unit] / protocol.TIME_UNITS[metric.unit]
    said = (f"read in {unit}, as the pattern's {word!r} says (the warning before the run), each execution measured "
            f"{other:.3g} s")
    if other >= protocol.MIN_TIME_S:
        return "Short measurement only if the unit is right", (
            f"{time_s:.3g} s measured per execution by the program's time metric in {metric.unit}, its unit as given; "
            f"{said}, not less than the protocol's minimum of {protocol.MIN_TIME_S:g} s: correct the unit first, "
            "then run again; whether the executions need more work depends on it.")
    return "Short measurement", f"{text.rstrip('.')}; in either unit: {said}, less than that minimum too."


def _value_width(console: Any, table: Any) -> int:
    """The columns that `run`'s two-column `table` gives its values on `console`: text wrapped to this width is not
    wrapped again. Its key column is as wide as its longest key so far or "run folder", a row every table ends with;
    the borders and each cell's padding take 7 columns."""
    return console.width - max(len(key) for key in [*table.columns[0].cells, "run folder"]) - 7


def _mapper_arg(value: str) -> str | Path:
    # Keywords stay strings; anything else names a file, never DSL text.
    return value if value in ("default", "expert") else Path(value)


def _print(result: RunResult, feedback: Feedback, once: bool = False, timeout_s: float | None = None,
           programs: Sequence[Path] = (), metric: Metric | None = None) -> None:
    """The run's table, what makes its figures unreliable (`protocol.core_warning`, `protocol.noise_warnings`;
    `once`: it ran with --once; `timeout_s`: the --timeout given), its task profile and AutoGuide's feedback;
    `programs`: those that the run's executable, a script, starts (`wrapped_programs`), read for begin_trace;
    `metric`: a user's program's, whose unit its pattern may contradict (`_short_in_doubt`)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from mapperopt.autoguide.explain import DSL_STAGES, program_traces, suggested_run_command, task_profile

    console = Console(highlight=False)
    s = result.settings
    machine = f"size {s['size']}, {s['cpus']} CPU, {s['gpus']} GPU"
    if s.get("own_mapper"):
        mapper = f"its own mapper ('{s['own_mapper']}') ({machine})"
    elif result.dsl is None and s.get("no_legion_task"):  # discovered: no task ran, so no mapper took part
        mapper = f"no mapper (no Legion task ran; {machine})"
    elif result.dsl is None and "app_file" in s:  # a user's program: its discovery says whether it has its own
        # (--mapper default runs the mapper that the program registers, where it registers one, as no --mapper does)
        mapper = (f"Legion's default mapper ({machine})" if s.get("description")
                  else f"Legion's default mapper, or the program's own if it registers one (which one is not "
                       f"known: the program has not been discovered; {machine})")
    else:
        mapper = f"the {result.mapper} mapper ({machine})"
    title = f"{result.app} with {mapper}"
    table = Table(title=escape(title), show_header=False, min_width=len(title) + 4)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    # the measured executions (failed ones run again are attempts too)
    runs = s.get("measured_runs", len(result.attempts) - s.get("calibration_runs", 0))
    diagnostics = result.stage in DSL_STAGES[:2] and result.log  # printed with their source lines, carets and hints
    if result.ok:
        table.add_row("status", "[green]ok[/]")
        unit, figure = result.unit, protocol.figure  # a time metric's time first, then its throughput (1/ms)
        if runs > 1:
            # An even count has no middle execution: the median is the mean of the two middle throughputs, whose
            # inverse is not the mean of their times (the metric row's median).
            table.add_row("median", figure(unit, result.throughput) + (
                ": the time is 1 / the mean of the two middle executions' throughputs, not the mean of their times"
                if runs % 2 == 0 and protocol.as_time(unit, result.throughput) else ""))
            # The statistics are the throughputs' (1/time for a time metric): the time beside them is their inverse.
            table.add_row("trimmed mean", figure(unit, result.trimmed_mean) + (
                ": the time is 1 / the trimmed mean of the throughputs (1/time), not the trimmed mean of the times"
                if protocol.as_time(unit, result.trimmed_mean) else ""))
            if runs >= protocol.MIN_INTERVAL_VALUES:  # fewer: too few to quote one (the noise notes say so)
                table.add_row("90 % interval", f"{figure(unit, *result.interval)}, bootstrap of the trimmed mean")
            table.add_row("spread", f"{100 * result.spread:.1f} % of the median")
        else:
            table.add_row("time" if protocol.as_time(unit, result.throughput) else "throughput",
                          figure(unit, result.throughput))
        if s.get("metric"):  # a user's program (--app)
            metrics = sorted(a.result["metric"] for a in result.attempts if a.result)
            half = len(metrics) // 2
            which = ("" if len(metrics) < 2 else "median; " if len(metrics) % 2 else
                     f"median: the mean of the two middle values, {metrics[half - 1]:.4g} and {metrics[half]:.4g}; ")
            stderr = any(a.result and a.result.get("metric_from") == "stderr" for a in result.attempts)
            table.add_row("metric", f"{statistics.median(metrics):.4g} ({which}{escape(s['metric'])}"
                                    + ("; read from standard error: the standard output has no match" if stderr
                                       else "") + ")")
        else:
            # The flag may count untimed iterations too (Pennant's -cstop its warm-up): the result line's count is
            # the timed one, which the throughput divides.
            timed = result.attempts[-1].result.get("iterations")
            table.add_row("measured time", f"{result.time_s:.3g} s ({'median; ' if runs > 1 else ''}"
                                           + (f"{timed} timed of " if timed not in (None, s["iterations"]) else "")
                                           + f"{s['iterations_flag']} {s['iterations']})")
        table.add_row("repeats", str(runs) + (f" (+ {s['calibration_runs']} calibration)"
                                              if s.get("calibration_runs") else ""))
        # A user's program's own check: its MAPPEROPT_RESULT line said "verified": true in every execution.
        own = bool(s.get("metric")) and all(a.result and a.result.get("own_check") for a in result.attempts)
        checked = output_checked(result)
        on_stderr = any(a.result and a.result.get("verify_from") == "stderr" for a in result.attempts)
        how = (f" ({escape(s['verify'])}" + ("; found on standard error only (the standard output has no match)"
                                             if on_stderr else "")
               + (", the program's own check: its MAPPEROPT_RESULT line says "
                  '"verified": true' if own else "") + ")") if s.get("metric") else ""
        # Pennant's energy check (its `small` and `gpu` sizes) passes a run whose state was wrong from the start.
        if any((a.result or {}).get("check", {}).get("kind") == "energy" for a in result.attempts):
            how = " (energy conservation only: the final state is not compared)"
        elif why := _reference_note(result):
            how = f" (against the program's own sequential run: {why})"
        elif not s.get("metric") and (kinds := _check_kinds(result)):  # a benchmark: which check its lines name
            how = f" ({escape(kinds)})"
        table.add_row("verified", f"yes, every execution{how}" if checked else "[yellow]only the exit status[/] "
                      "(nothing checks the output)")
    else:
        table.add_row("status", f"[red]failed[/] at stage {result.stage}")
        # The diagnostics print in full after the table, the reason (their first line) among them: said once.
        # wrapped here so that a pattern it quotes stays on one line
        table.add_row("reason", "the diagnostics below" if diagnostics else
                      escape(wrap_whole(result.reason, _value_width(console, table))))
        if result.stage == "verify":
            table.add_row("verified", "[red]no[/]")
    table.add_row("run folder", escape(result.run_dir))
    traces = sorted(Path(result.run_dir).glob("trace*.jsonl"), key=lambda p: (len(p.name), p.name))
    if traces:  # --trace: one file per execution
        table.add_row("trace", escape(str(traces[0]) if len(traces) == 1 else
                                      f"{traces[0]} ... {traces[-1].name} (one per execution)"))
        # Replays map nothing, so trace nothing: said unless the program never calls begin_trace (its symbols, or
        # those of the programs a wrapper script names) or the run turned replays off; as a condition where no
        # program could be read. Wrapped here so that the flag stays on one line.
        command = shlex.split(s.get("command", ""))
        traces = program_traces(command)
        if traces is None and programs:
            found = {program_traces([str(p)]) for p in programs}
            traces = True if True in found else None if None in found else False
        if "-lg:no_physical_tracing" not in command and traces is not False:
            replays = ("the iterations Legion replays from a loop the program traces (begin_trace/end_trace) ask"
                       if traces else "if the program traces a loop (begin_trace/end_trace), the iterations Legion "
                       "replays from it ask")
            table.add_row("", escape(wrap_whole(f"{replays} no mapper and have no lines: they run as the recorded "
                                                "ones were mapped (`-- -lg:no_physical_tracing` maps and traces "
                                                "every one)", _value_width(console, table))))
    console.print(table)
    notes = run_notes(result)  # what `run --json` gives as `notes`
    for note in notes:  # those with a heading (the output's own failure) here, the mapper's after the diagnostics
        if note.title:
            print_whole(console, note.title, note.text, "yellow")
    if s.get("no_legion_task"):  # its discovery found no Legion task: no mapper maps it, whatever --mapper says
        # unwrapped (soft_wrap): a path longer than the terminal stays whole
        console.print(f"[yellow]Warning:[/] {escape(s['no_legion_task'])}; no mapper takes part in such a run, and "
                      "check, explain and --mapper fail on it: build it with `mapperopt toolchain`'s flags and give it "
                      "arguments that make it launch Legion tasks, then run it again", soft_wrap=True)
    cores = protocol.core_warning(s) if result.attempts else None  # no word of timings where nothing ran
    if cores:
        console.print(f"[yellow]{cores[0]}:[/] {escape(cores[1])}")
    if result.ok:
        estimate = protocol.estimate(protocol.values_of(result))
        for title, text in protocol.noise_warnings({"": (estimate, protocol.measured_time(result))},
                                                   "no --once" if once else _more_executions(s, runs),
                                                   s.get("min_time_s") or 0, "app_file" not in s, timeout_s,
                                                   untimed=protocol.untimed(result.unit) if "app_file" in s else None,
                                                   start_up_s=protocol.start_up_time(result),
                                                   wall=s.get("metric") == Metric().describe(),
                                                   larger=larger_size(result.app, s.get("size"))):
            if title == "Short measurement" and metric is not None:
                title, text = _short_in_doubt(text, metric, protocol.measured_time(result))
            console.print(f"[yellow]{title}:[/] {escape(text)}")
    if diagnostics:
        console.print(result.log.rstrip(), markup=False, soft_wrap=True)
    for note in notes:  # else only in the run folder's stderr-N.txt
        if not note.title:
            console.print(note.text, markup=False, soft_wrap=True)
    if s.get("profile_failed"):
        console.print(f"[yellow]No task profile:[/] the profiling execution failed: {escape(s['profile_failed'])}.")
    rows = task_profile(result)
    if rows:
        p = result.profile or {}
        iterations = p.get("iterations")
        if iterations:  # the harness's own profiling execution (a user's program: its measured executions)
            # The counts the application reports itself: the flag may count the warm-up too (Pennant's -cstop), and
            # untimed iterations may follow the timed ones (Stencil's -tprune, Circuit's -prune).
            warmup, timed, after = p.get("warmup") or 0, p.get("timed") or iterations, p.get("after") or 0
            what = (f"one more execution, untraced so that every task execution is mapped and timed: its set-up "
                    f"and check tasks and its {warmup + timed + after} iterations ({s['iterations_flag']} "
                    f"{iterations}: {warmup} warm-up, {timed} timed"
                    + (f", {after} untimed after them" if after else "") + ")")
            base = "the timed loop's leaf tasks' total"
        else:
            what = "one more execution of the program, untraced so that every task execution in it is mapped and timed"
            # A user's program: its timed loop is unknown, so every execution counts and no column claims one.
            base = "the leaf tasks' total (tasks with region requirements; the program's timed loop is unknown)"
        total = sum(r["total_s"] for r in rows if r["timed"]) or 1.0  # the base of AutoGuide's shares too
        shares = [round(100 * r["total_s"] / total) if r["timed"] else None for r in rows]
        added = sum(x for x in shares if x is not None)
        rounded = f", each rounded to a whole percent: they add up to {added} %" if added not in (0, 100) else ""
        untimed = BEFORE_TIMER.get(result.app, ())
        before = ("; before the timer: run in every iteration, but outside its measured time (counted in the shares, "
                  "as AutoGuide and the guided search count it)") if any(r["task"] in untimed for r in rows) else ""
        # A plain line, not the table's title: rich centres a long title over several lines.
        console.print(escape(f"Task profile of {what}"))
        prof = Table(caption="executions: every execution of the task in it, each "
                     "launch point of an index launch one, every iteration counted (a task may run several times per "
                     f"iteration); seconds: their sum on the processors; share: of {base}{rounded}{before}",
                     caption_justify="left")
        # Task names whole where the terminal allows (rich would shorten them first), folded where it does not.
        others = ("kind", "executions", "seconds", "share") + (("timed loop",) if iterations else ())
        room = console.width - sum(max(len(c), 8) + 3 for c in others) - 4
        prof.add_column("task", overflow="fold", min_width=max(8, min(room, max(len(r["task"]) for r in rows))))
        for col in others:
            prof.add_column(col)
        for r, share in zip(rows, shares):
            loop = ("yes, before the timer" if r["task"] in untimed else "yes") if r["timed"] else "[dim]no[/]"
            prof.add_row(escape(r["task"]), r["kind"], str(r["count"]), f"{r['total_s']:.3g}",
                         f"{share} %" if share is not None else "[dim]-[/]", *((loop,) if iterations else ()))
        console.print(prof)
    for label, text in (("explanation", feedback.explanation), ("suggestion", feedback.suggestion)):
        # "N/A": AutoGuide has nothing to say; diagnostics said the fix already, in their hints
        if text and text != "N/A" and not (diagnostics and label == "suggestion"):
            print_whole(console, label, text)
    if result.mapper == "expert" and (feedback.edits or "`" in (feedback.suggestion or "")):
        # Edits or statements to try: the expert mapper is a file of the installed package, they go into a copy of it.
        cfg = load_config(result.app)
        path = shlex.quote(str(cfg.expert_path))
        command = suggested_run_command(result, "--mapper", "my.dsl")  # with the options that shaped the run
        console.print(f"[bold]to apply it:[/] the expert mapper is {escape(path)}: copy it "
                      f"(`cp {escape(path)} my.dsl`), edit the copy and run `{escape(command)}`.")


def status(console, text: str):
    """`console.status(text)` (a spinner) on a terminal; elsewhere (output piped to a file) the text, wrapped at
    spaces to the console's width (`print_wrapped`: no trailing space), so that a log says what the pause that
    follows is."""
    if console.is_terminal:
        from rich.markup import escape

        return console.status(escape(text))  # a path or a bracketed note in it is text, not markup
    print_wrapped(console, text, markup=False)
    return contextlib.nullcontext()


def check_repeats(repeats: int, max_repeats: int, max_given: bool, once_with: Sequence[str] = ()) -> None:
    """Refuses a --repeats above the --max-repeats the user gave (`max_given`); left out, the maximum's default is
    raised to --repeats instead. With --once, refuses either option given (`once_with`: their names) above 1.

    Raises:
        MapperoptError: naming both.
    """
    several = [f"{name} {value}" for name, value in (("--repeats", repeats), ("--max-repeats", max_repeats))
               if name in once_with and value > 1]
    if several:
        raise UsageError(f"--once measures one execution, {' and '.join(several)} several",
                         hint="leave --once out to measure with repeats, or leave out "
                           + " and ".join(s.split()[0] for s in several))
    if max_given and repeats > max_repeats:
        raise UsageError(f"--repeats {repeats} is more than --max-repeats {max_repeats}",
                         hint=f"give --max-repeats {repeats} or more, or leave it out")


def check_timeout(bench: Any, size: str, timeout_s: float | None, min_time_s: float | None,
                  start_up_s: float = 0.0) -> None:
    """Refuses a --timeout (`timeout_s`; None: the size's timeout, checked only against a --min-time given) that
    leaves no room for the measured seconds calibration makes every
    execution of a benchmark reach (`min_time_s`, None: the size's, at least `protocol.MIN_TIME_S`) and what an
    execution costs besides (`start_up_s`: Legion's start-up and the application's set-up, as measured; 0 before
    anything ran): calibration lengthens an execution only while its expected wall time stays within half of the
    timeout (`harness._grown`), so every measurement would fall short of it (or time out), and the feedback would
    blame the mappers. One rule for run, tune and compare. A user's program (`--app`) is never calibrated.

    Raises:
        MapperoptError: naming --timeout and --min-time, and the least --timeout that leaves room; a UsageError
            before anything ran (no `start_up_s`), when the command line alone is at fault.
    """
    from mapperopt.benchmarks.userapp import UserApp

    if isinstance(bench, UserApp) or (timeout_s is None and min_time_s is None):
        return
    given = timeout_s is not None
    if not given:
        timeout_s = load_config(bench).size(size).timeout_s
    least = min_time_s if min_time_s is not None else max(load_config(bench).size(size).min_time_s,
                                                         protocol.MIN_TIME_S)
    needed = protocol.timeout_needed(least, start_up_s)
    if timeout_s <= needed:
        default = f"; by default the size's, at least {protocol.MIN_TIME_S:g}" if min_time_s is None else ""
        besides = (f" and the {start_up_s:.2g} s each execution took here besides it (Legion's start-up and the "
                   "application's set-up, measured in the executions so far)" if start_up_s else "")
        lower = timeout_s / 2 - start_up_s
        name, said = ("--timeout", f"--timeout {timeout_s:g}") if given else \
            ("the timeout", f"the size's timeout of {timeout_s:g}")
        # Twice a --min-time near the largest float is inf: no --timeout can be given above it.
        above = f"{needed:.3g}" if math.isfinite(needed) else f"twice {least:g} s"
        error = MapperoptError if start_up_s else UsageError  # measured, or the command line's alone
        raise error(f"{said} leaves no room for the {least:g} s of measured time every "
                    f"execution must reach (--min-time{default}){besides}: calibration lengthens an "
                    "execution only while its expected wall time"
                    + ("" if start_up_s else " (Legion's start-up and the application's set-up included)")
                    + f" stays within half of {name}, so it needs more than {above}",
                    hint=", ".join(
                        ([f"give --timeout well above {needed:.3g} (twice the measured time, plus the "
                          "start-up)"] if math.isfinite(needed) else [])
                        + ([f"{'a' if math.isfinite(needed) else 'give a'} --min-time below {lower:.3g}"]
                           if lower > 0 else [])
                        + (["or leave --timeout out"] if given else [])))


class BenchCommand(ListsBenchmarks):
    """run, tune and compare: BENCH, then the program's flags (APP_ARGS) only after `--`. click would take any other
    word before `--` (a benchmark name given with --app, a second benchmark, an option the command does not know) as
    one of the program's flags. Options it does not know reach `parse_args` (`ignore_unknown_options`), which says
    where the program's flags go."""

    def __init__(self, *args, **kwargs):
        kwargs["context_settings"] = {**(kwargs.get("context_settings") or {}), "ignore_unknown_options": True}
        super().__init__(*args, **kwargs)

    def parse_args(self, ctx, args):
        after = len(args) - args.index("--") - 1 if "--" in args else 0
        given = list(args)  # click's parser consumes `args`
        rest = super().parse_args(ctx, args)
        bench, app_args = ctx.params.get("bench"), ctx.params.get("app_args", ())
        words = ([bench] if bench is not None else []) + list(app_args)
        before = words[:len(words) - after]
        # With --app no word may come before `--` (click fills BENCH first, also from the words after it); an option
        # the command does not know is no benchmark either.
        extra = before[0 if ctx.params.get("app_spec") or before[:1] and before[0].startswith("-") else 1:]
        if extra and not ctx.resilient_parsing:  # with --json: refused inside the command, in JSON too
            takes = "no BENCH with --app" if ctx.params.get("app_spec") else "one benchmark"
            # a mapper file given without its option (run's --mapper, tune's and compare's --start)
            option = next((o for p in self.params for o in p.opts if o in ("--mapper", "--start")), None)
            meant = f"; did you mean `{option} {extra[0]}`?" if option and extra[0].endswith(".dsl") else ""
            # `--app ./prog -n 512`: the program's command line, unquoted
            spec = ctx.params.get("app_spec")
            quote = (f"quote the program's command line: --app {shlex.quote(f'{spec} {shlex.join(extra)}')} (or put "
                     "its flags after `--`)" if spec else "flags for the program go after `--`")
            defer_refusal(ctx, self, given, click.NoSuchOption(  # with click's "Did you mean" too
                extra[0], f"No such option '{extra[0]}': {quote}.",
                [name for param in self.params for name in param.opts], ctx) if extra[0].startswith("-") else
                click.UsageError(f"unexpected argument '{extra[0]}': {self.name} takes {takes}; flags for the "
                                 f"program go after `--`{meant}", ctx))
            return rest
        if ctx.params.get("app_spec") and not ctx.resilient_parsing:  # the program's own flags may be these
            options_after_separator(self, ctx.params["app_spec"], words[len(words) - after:])
        if not ctx.params.get("app_spec") and bench in known_benchmarks() and not ctx.resilient_parsing:
            try:
                check_app_flags(bench, words[len(words) - after:], [o for p in self.params for o in p.opts],
                                self.name, given[:len(given) - after])
            except UsageError as exc:  # with --json: refused inside the command, in JSON too
                defer_refusal(ctx, self, given, exc)
        return rest


# What a benchmark's result line's `check.kind` checked, for the `verified` row (docs/gemm.md, docs/pennant.md; the
# applications' result lines): by (application, kind) first, then by kind.
CHECK_KINDS = {
    ("circuit", "reference"): "against a sequential reference run's sums",
    ("pennant", "reference"): "against the original PENNANT's output",
    "full_product": "full product: the whole product recomputed",
    "structured": "structured inputs: the product checked against its closed form",
    "analytic": "against the analytic solution",
    "sequential": "against the program's own sequential run",
    "finite": "finite values only: the result is not compared with a reference",
}


def _measured_checks(result: RunResult) -> list[str]:
    """The `check.kind` of each measured execution's result line (calibration executions left out: they ran at
    another iteration count, where another check may apply)."""
    s = result.settings or {}
    measured = result.attempts[s.get("calibration_runs", 0):]
    return [kind for a in measured if isinstance(kind := ((a.result or {}).get("check") or {}).get("kind"), str)]


def _more_executions(settings: dict, measured: int) -> str:
    """What gives `run` more executions, for its noise notes, after `measured` executions at `settings`' --repeats and
    --max-repeats. Executions are added beyond --repeats only while the interval is wider than the protocol's target,
    and one execution has no width at all (two may be within it): below `MIN_INTERVAL_VALUES` only a higher --repeats
    measures more; from there on the run stopped at --max-repeats, still too wide."""
    least = protocol.MIN_INTERVAL_VALUES
    if measured >= least:
        return "a higher --max-repeats"
    cap = settings.get("max_repeats", protocol.MAX_REPEATS)
    return (f"--repeats {least}" + (f" --max-repeats {least}" if cap < least else "")
            + f" (executions are added beyond --repeats only while the {100 * protocol.CONFIDENCE:.0f} % interval is "
            f"wider than ±{100 * protocol.TARGET_HALF_WIDTH:.0f} %, and "
            + ("one execution's has no width: --repeats 1 measures one, whatever --max-repeats is)"
               if measured == 1 else f"{measured} executions' may be within it)"))


def _check_kinds(result: RunResult) -> str | None:
    """The checks the measured executions of a benchmark ran, in words (`CHECK_KINDS`, else the kind as the result
    line names it), e.g. "full product: the whole product recomputed"; None where no line names one."""
    kinds = list(dict.fromkeys(_measured_checks(result)))
    return "; ".join(CHECK_KINDS.get((result.app, k)) or CHECK_KINDS.get(k) or k for k in kinds) or None


def _reference_note(result: RunResult) -> str | None:
    """Why a Pennant run given `-deck` after `--` was checked against the program's own sequential run, not the
    original PENNANT's output (`<deck>.xy.std`): that output is compared only at the deck's own cycle count (its
    `cstop`), else it is missing beside the deck; None for another run or check. The measured executions decide:
    calibration starts at the deck's own count, where the reference output is compared."""
    words = shlex.split(result.settings.get("command", ""))
    given = "-deck" in result.settings.get("extra_args", ()) and "-deck" in words[:-1]
    checks = _measured_checks(result)
    if not given or not checks or any(kind != "sequential" for kind in checks):
        return None
    deck = Path(words[words.index("-deck") + 1])  # as the program finds it, and its first -cstop
    cstop = words[words.index("-cstop") + 1] if "-cstop" in words[:-1] else None
    try:
        own = re.search(r"(?m)^\s*cstop\s+(\S+)", deck.read_text(errors="replace"))
    except OSError:
        own = None
    if own and cstop is not None and cstop != own[1]:
        return f"the original PENNANT's output is compared only at the deck's own cycle count, cstop {own[1]}, not " \
               f"-cstop {cstop}"
    reference = Path(str(deck).removesuffix(".pnt") + ".xy.std")
    return None if reference.exists() else f"no {reference.name} beside the deck, the original PENNANT's output"


def size_options(command):
    """The problem size, processors and memories of a benchmark run: `--size`, `--cpus`, `--gpus`, `--csize`,
    `--fsize`, `--zsize` (shared with `tune`)."""
    options = [
        click.option("--size", default="ci", show_default=True,
                     help="Problem size (docs/running.md): ci, the tests' (tiny: a mapper changes little there); "
                          "small for tuning; gpu; tight."),
        processor_options("the size's; tune and compare on CPUs: the cores less the utility processors, "
                          "docs/tuning.md"),
        click.option("--csize", type=click.IntRange(min=1), default=None,
                     help="System memory in MiB (-ll:csize) [default: the size's]."),
        click.option("--fsize", type=click.IntRange(min=1), default=None,
                     help="Framebuffer memory per GPU in MiB (-ll:fsize) [default: the size's]."),
        click.option("--zsize", type=click.IntRange(min=1), default=None,
                     help="Zero-copy memory in MiB (-ll:zsize) [default: the size's]."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _named_in(spec: str | None) -> str | None:
    """The `app:` that the application file `spec` (--app) names, read as plainly as possible, so that an error in
    the rest of the file is still reported with it; None for a command, or a file that names none or is unreadable."""
    import yaml

    try:
        data = yaml.safe_load(read_app_file(spec)) if spec and spec.endswith((".yaml", ".yml")) else None
    except (OSError, ValueError, yaml.YAMLError, MapperoptError):
        return None
    named = data.get("app") if isinstance(data, dict) else None
    return named if isinstance(named, str) and named else None


@contextlib.contextmanager
def _errors_as_json(as_json: bool, app: str, mapper: str) -> Iterator[Callable[[str], None]]:
    """With --json (`as_json`), an error raised inside, before a run has a result, is also printed on stdout as one
    object (`errors_as_json`) with a run's keys (`RunResult.to_json` and `notes`, empty): status "error", `reason`
    the error, `log` it and its hint, no `run_dir`; stderr says it as without --json. Yields a function that names the
    application (`app`, until it is known: the benchmark, or the program of --app)."""
    name = [app]
    shown = mapper if mapper in ("default", "expert") else Path(mapper).name

    def record(reason: str, log: str) -> dict:
        # none known: null, not "" (which is neither a name nor an absence)
        return {**RunResult(app=name[0] or "", mapper=shown, status="error", reason=reason, log=log).to_json(),
                "app": name[0] or None, "notes": []}

    with errors_as_json(as_json, record, indent=2):
        yield lambda known: name.__setitem__(0, known)


def echo_mapper_prints(result: RunResult, what: str = "the mapper", later: str = "") -> bool:
    """The lines that the DSL mapper's print statements wrote in the run's first execution that printed any, on
    stderr as `check` shows those of its static evaluation (`what`: whose, as the header names it), naming the file
    that holds them all (the program's stderr, kept in the run folder, where the runtime writes them among Legion's
    lines) and then `later` (where others are, e.g. tune's later iterations). Returns whether there were any."""
    from mapperopt.dsl.commands import echo_printed

    if not result.dsl or not result.run_dir:
        return False
    for attempt in result.attempts:
        file = Path(result.run_dir) / attempt.stderr
        if not attempt.stderr or not file.is_file():
            continue
        lines = printed_lines(result.dsl, file.read_text(errors="replace"))
        if lines:
            several = (f"; each of the {len(result.attempts)} executions has its own stderr file"
                       if len(result.attempts) > 1 else "")
            echo_printed("\n".join(lines), what, f"from the program's stderr, {file}{several}{later}", f" in {file}")
            return True
    return False


@click.command(cls=BenchCommand)
@click.argument("bench", required=False)
@click.option("--mapper", default="default", show_default=True, metavar="default|expert|FILE",
              help="`default` (Legion's default mapper, or the program's own where it registers one), `expert` "
                   "(the benchmark's expert DSL mapper) or a DSL file.")
@size_options
@click.option("--repeats", type=click.IntRange(min=1), default=protocol.MIN_REPEATS, show_default=True,
              help="Measured executions of the mapper at --size, at least (calibration executions not counted); "
                   "the median, the trimmed mean and its 90 % interval are reported.")
@click.option("--max-repeats", type=click.IntRange(min=1), default=protocol.MAX_REPEATS, show_default=True,
              help=f"...and at most: executions go on until the 90 % interval is within "
                   f"{protocol.TARGET_HALF_WIDTH:.0%} of the trimmed mean or this many were measured "
                   "(docs/tuning.md).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Run folder, new or empty: one that holds anything (an earlier run) is refused, never cleared "
                   "[default: runs/BENCH/<YYYYMMDD-HHMMSS>-<hex>/].")
@click.option("--timeout", "timeout_s", type=FiniteFloatRange(min=SHORTEST_TIMEOUT_S), default=None,
              help="Seconds one execution may take; more than twice --min-time and the start-up, as calibration "
                   "lengthens an execution only within half of it [default: the size's].")
@click.option("--min-time", "min_time_s", type=FiniteFloatRange(min=0), default=None,
              help="Minimum measured seconds per execution at --size; iterations grow until it is met [default: the "
                   f"size's, at least {protocol.MIN_TIME_S:g}; not with --app].")
@click.option("--once", is_flag=True,
              help="One measured execution at the size's own iteration count, no repeats; with --min-time, "
                   "calibration executions first (docs/running.md).")
@click.option("--trace", is_flag=True, help="Record the mapper's placement decisions in the run folder: trace.jsonl, "
                                            "or trace-1.jsonl ... trace-N.jsonl, one per execution, when there are "
                                            "several (the output names them).")
@click.option("--profile/--no-profile", default=None,
              help=f"Per-task times from one more, untraced execution of at most {PROFILE_ITERATIONS} timed "
                   "iterations; needs a DSL mapper (docs/running.md) [default: on for a benchmark with one].")
@click.option("--json", "as_json", is_flag=True, help="Print result.json instead of the table.")
@app_options
@click.argument("app_args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def run(ctx, bench, mapper, size, cpus, gpus, csize, fsize, zsize, repeats, max_repeats, out_dir, timeout_s,
        min_time_s, once, trace, profile, as_json, app_args, **app_flags):
    """Run benchmark BENCH (or your program, --app) with a mapper and measure it.

    Builds the application if needed, compiles the mapper and measures it with tune's protocol: each execution
    calibrated to at least --min-time measured seconds, REPEATS to MAX_REPEATS executions with a timeout, their
    trimmed mean and its interval (--once: a single measured execution, calibrated only with --min-time). Stores
    everything in a run folder. APP_ARGS (after `--`) are passed to the application; a flag the size or mapperopt
    already sets (e.g. `-i 5000`, `-ll:csize 4096`) takes the new value; with --app, the program's own flags are added
    after its arguments (both reach it: a parser that takes the last one sees the new value), Legion's resource flags
    take the new value. Exit status 1 when the run failed.
    """
    from rich.console import Console

    from mapperopt import interrupts

    interrupts.sigterm_as_ctrl_c()  # a killed run also removes discovery's folder and ends what the program started
    with _errors_as_json(as_json, bench or _named_in(app_flags.get("app_spec")), mapper) as named:
        bench, app_args = app_from_options(bench, app_args, min_time_s=min_time_s, **app_flags)
        named(bench.name if isinstance(bench, UserApp) else bench)
        require_one_value(bench, app_args, cpus=cpus, gpus=gpus,
                          csize=csize, fsize=fsize, zsize=zsize)
        if profile is None:  # a benchmark's profiling execution is short; a user's program may run long
            profile = isinstance(bench, str) and mapper != "default"
        if (trace or profile) and mapper == "default":  # refused before anything runs, as the run would refuse it
            raise UsageError(f"{'--trace' if trace else '--profile'} needs a DSL mapper (Legion's default mapper "
                             "writes neither a trace nor a profile)",
                             hint=dsl_mapper_hint(gpus) if isinstance(bench, UserApp) else
                             "give one with --mapper, e.g. --mapper expert or --mapper my.dsl")
        given = [name for name in ("repeats", "max_repeats")
                 if ctx.get_parameter_source(name) is not ParameterSource.DEFAULT]
        check_repeats(repeats, max_repeats, "max_repeats" in given,
                      [f"--{name.replace('_', '-')}" for name in given] if once else ())
        # --once: uncalibrated
        check_timeout(bench, size, timeout_s, 0.0 if once and min_time_s is None else min_time_s)
        if out_dir is not None and out_dir.is_dir() and any(out_dir.iterdir()):  # one run's files alone, as tune's
            raise MapperoptError(f"--out {out_dir} is not empty: a run folder holds the files of one run alone",
                                 hint="name a new or empty folder, or remove this one to run there again")
        if once:
            repeats = max_repeats = 1
            min_time_s = 0.0 if min_time_s is None else min_time_s
        elif min_time_s is None:
            min_time_s = max(load_config(bench).size(size).min_time_s, protocol.MIN_TIME_S)
        if mapper not in ("default", "expert"):
            from mapperopt.dsl.commands import exit_on_syntax_error

            with exit_on_syntax_error(mapper):
                # a file that does not exist, or is not UTF-8 (E112), is said before any output
                _resolve_mapper(load_config(bench), _mapper_arg(mapper))
        # A first run builds the application, or discovers a user's program, which mapperopt never builds (tens of
        # seconds); say so instead of sitting silent.
        running = (f"Running {bench} (a discovery run and the mapper's build first, if needed)..."
                   if isinstance(bench, UserApp) else
                   f"Running {bench} (building the application and the mapper if needed)...")
        try:
            with contextlib.nullcontext() if as_json else status(Console(stderr=True), running):
                result = run_benchmark(bench, _mapper_arg(mapper), size=size, cpus=cpus, gpus=gpus,
                                       repeats=repeats, max_repeats=max(repeats, max_repeats),
                                       out_dir=out_dir, timeout_s=timeout_s, min_time_s=min_time_s, trace=trace,
                                       profile=profile, extra_args=app_args, csize=csize, fsize=fsize, zsize=zsize)
        except RunInterrupted as exc:
            kept = ("keeps what ran so far (command.txt, each execution's stdout-N.txt and stderr-N.txt), "
                    "but no result.json (no figures)" if exc.run_dir.exists() else "was removed: nothing was kept")
            with interrupts.terminal_may_be_gone():
                click.echo(f"Interrupted: {exc.run_dir} {kept}. The same command runs again from the start.",
                           err=True)
            raise click.exceptions.Exit(130) from None  # said: no `aborted` line after it (cli.main)
    warnings = Path(result.run_dir) / "check.txt"  # the checker's warnings, which did not stop the run
    if warnings.is_file():  # on stderr: with --json, stdout is the result alone
        click.echo(wrap_diagnostics(warnings.read_text()), err=True, nl=False)
    echo_mapper_prints(result)
    from mapperopt.optimizer.measured_at import measured_elsewhere

    elsewhere = measured_elsewhere(bench, mapper, result)  # a mapper that a tuning or comparison measured
    if as_json:
        # result.json and the notes `run` prints after its table and after it (docs/running.md)
        notes = [*run_notes(result), *([elsewhere] if elsewhere else [])]
        click.echo(json.dumps({**result.to_json(), "notes": [n.to_json() for n in notes]}, indent=2))
    else:
        feedback_file = Path(result.run_dir) / "feedback.json"
        _print(result, Feedback.from_json(json.loads(feedback_file.read_text())), once, timeout_s,
               wrapped_programs(bench) if isinstance(bench, UserApp) else (),
               bench.metric if isinstance(bench, UserApp) else None)
        moved = relative_paths_note([*bench.args[size], *app_args], Path(result.run_dir).resolve()) \
            if isinstance(bench, UserApp) and not result.ok and result.run_dir else None
        if moved:  # its failure is then likely the missing file's
            click.echo(f"note: {moved}")
        if elsewhere:
            print_wrapped(Console(highlight=False), f"{elsewhere.title}: {elsewhere.text}", markup=False)
    if not result.ok:
        ctx.exit(1)
