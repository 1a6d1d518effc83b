"""What `tune --help` and `compare --help` say about resuming and the start program."""

from __future__ import annotations

from click.testing import CliRunner

from mapperopt.optimizer.commands import tune
from mapperopt.optimizer.compare import compare


def _help(command) -> str:
    result = CliRunner().invoke(command, ["--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def test_tune_help_says_resume_extends_a_finished_run():
    assert "a finished run is extended when --iters is larger than its total" in _help(tune)


def test_compare_help_says_it_starts_from_a_random_program():
    text = _help(compare)
    assert "starting from a random program by default" in text and "`tune` starts from the default mapping" in text
    assert "[default: random]" in text


def test_every_noise_knob_says_what_it_counts_and_at_which_size():
    """--repeats, --max-repeats, --min-time and --final-rounds once said neither which mappers they measure nor at
    which size: each names --size, and --final-rounds counts each mapper's executions in every command."""
    from mapperopt.benchmarks.commands import run

    for command in (run, tune, compare):
        options = {opt: p.help for p in command.params for opt in getattr(p, "opts", ())}
        for name in ("--repeats", "--min-time", "--final-rounds"):
            if name in options:
                assert "at --size" in options[name], (command.name, name, options[name])
        assert "this many were measured" in options["--max-repeats"], command.name
        if "--final-rounds" in options:
            assert options["--final-rounds"].startswith("Executions of each mapper in the final"), command.name
    assert "the reference mappers are measured with exactly this many" in _help(tune)
    assert "the reference mapper's first measurement has exactly this many" in _help(compare)


def test_remeasure_help_says_whole_groups_are_measured_again():
    """`--remeasure 1` measures again every group of the final measurement that holds a run numbered 1, with all of
    its runs (one job: one group, so every run): its help once said only "these runs"."""
    options = {opt: p.help for p in compare.params for opt in getattr(p, "opts", ())}
    text = " ".join(options["--remeasure"].split())
    assert "groups that hold these run numbers" in text and "with every run they hold" in text, text


def test_the_timeout_default_says_what_each_execution_gets_in_three_lines():
    """tune said `[default: the size's]` while its candidates ran under 30 s (5x the best's longest execution, at
    least 30) and its baselines under the size's 60; compare named neither the 30 s floor nor the reference. Then
    the help said every case in 11 lines at 80 columns: it says the rule in three, and docs/tuning.md the rest."""
    from pathlib import Path

    from mapperopt.optimizer.loop import MIN_TIMEOUT_S, TIMEOUT_FACTOR

    adaptive = f"{TIMEOUT_FACTOR:g}x the best's longest execution, {MIN_TIMEOUT_S:g} to the size's timeout"
    assert (f"--timeout FLOAT RANGE Seconds an execution may take [default: {adaptive}; references: the size's]."
            in _help(tune)), _help(tune)
    assert (f"--timeout FLOAT RANGE Seconds an execution may take [default: {adaptive}; the reference: the size's]."
            in _help(compare)), _help(compare)
    for command in (tune, compare):
        lines = CliRunner().invoke(command, ["--help"], terminal_width=80).output.splitlines()
        start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("--timeout"))
        end = next(i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("--"))
        assert end - start <= 4, lines[start:end]  # its range, [x>=0.1], on a fourth
    docs = " ".join((Path(__file__).parents[2] / "docs" / "tuning.md").read_text().split())
    assert ("the reference mappers, calibration, a candidate's re-measurement with the best and the final comparison "
            "get the size's") in docs


def test_no_option_of_run_tune_or_compare_takes_more_than_four_lines_at_80_columns():
    """--timeout took 11 lines of `tune --help` at 80 columns, --resume 11, --remeasure 9: the essentials stay (what,
    unit, default), the rest is in docs/tuning.md. `run`'s own options too (--profile took 9, --once and --min-time
    5): the rest is in docs/running.md."""
    from pathlib import Path

    from mapperopt.benchmarks.commands import run

    for command in (run, tune, compare):
        lines = CliRunner().invoke(command, ["--help"], terminal_width=80).output.splitlines()
        begin = lines.index("Options:")  # the options, up to the blank line after them (not the text above)
        end = lines.index("", begin)
        starts = [i for i in range(begin, end) if lines[i].startswith("  -")] + [end]
        for i, j in zip(starts, starts[1:]):
            assert j - i <= 4, (command.name, lines[i:j])
    running = " ".join((Path(__file__).parents[2] / "docs" / "running.md").read_text().split())
    assert ("(not with `--repeats` or `--max-repeats` above 1; with `--min-time`, calibration executions first grow a "
            "benchmark's iterations until it is met, as without `--once`)") in running
    assert "AutoGuide's advice names the task that takes the time" in running


def test_run_and_tune_help_say_a_programs_own_flags_after_the_separator_are_added_not_replaced():
    """`-- -nx 64` with --app is added after the program's own arguments (`-nx 256 ... -nx 64`: its parser decides
    which counts); the help said that a flag already set "takes the new value", true of the benchmarks and of
    Legion's resource flags only."""
    from mapperopt.benchmarks.commands import run

    for command in (run, tune):
        text = _help(command)
        assert ("with --app, the program's own flags are added after its arguments (both reach it: a parser that "
                "takes the last one sees the new value)") in text, (command.name, text)


def test_every_float_option_refuses_nan_and_inf():
    """`--timeout nan` once reached coreutils' `timeout` (every run failed with its usage text), `--min-time nan`
    skipped calibration and `--min-time inf` grew the loops until the result diverged: click's ranges let nan and
    inf through, so every float option of run, tune and compare refuses them, naming the option."""
    import click

    from mapperopt.benchmarks.commands import run

    for command in (run, tune, compare):
        names = [p.opts[0] for p in command.params if isinstance(p.type, click.types.FloatParamType)]
        assert "--timeout" in names, (command.name, names)
        for name in names:
            for value in ("nan", "inf", "-inf"):
                result = CliRunner().invoke(command, ["circuit", name, value])
                assert result.exit_code == 2, (command.name, name, value, result.output)
                assert f"'{name}'" in result.output and "not a finite number" in result.output, result.output


def test_the_size_option_says_that_its_default_is_the_tests_size():
    """`--size ... [default: ci]` did not say that ci is the tests' tiny size, where a mapper changes little, nor
    which size is meant for tuning."""
    from mapperopt.benchmarks.commands import run

    for command in (run, tune, compare):
        options = {opt: p.help for p in command.params for opt in getattr(p, "opts", ())}
        assert "ci, the tests' (tiny: a mapper changes little there); small for tuning" in options["--size"]


def test_the_main_help_gives_the_readme_tuning_command():
    """`mapperopt --help` gave `mapperopt tune circuit --iters 10`, without the `--size small` that the README's
    first command has (the default size, the tests', is where a mapper can change little)."""
    from pathlib import Path

    from mapperopt.cli import _group

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    command = "mapperopt tune circuit --size small --iters 10"
    assert command in readme  # the premise: the README's command
    result = CliRunner().invoke(_group(), ["--help"], terminal_width=200)
    assert f"`{command}`" in " ".join(result.output.split()), result.output


def test_the_options_run_tune_and_compare_share_take_at_most_three_lines_at_80_columns():
    """--size, --cpus, --app and the metric and verification options took 4-6 lines each of `run`, `tune` and
    `compare --help` at 80 columns: each says what it is, its unit and default in three at most, and names the page
    with the rest, which says it."""
    from pathlib import Path

    from mapperopt.benchmarks.commands import run

    shared = ("--size", "--cpus", "--app", "--metric", "--unit", "--higher-is-better", "--verify-cmd")
    for command in (run, tune, compare):
        lines = CliRunner().invoke(command, ["--help"], terminal_width=80).output.splitlines()
        end = lines.index("", lines.index("Options:"))
        starts = [i for i, line in enumerate(lines[:end]) if line.startswith("  -")] + [end]
        seen = set()
        for i, j in zip(starts, starts[1:]):
            if (name := lines[i].split()[0]) in shared:
                seen.add(name)
                assert j - i <= 3, (command.name, lines[i:j])
        assert seen == set(shared), (command.name, seen)
    options = {opt: " ".join((getattr(p, "help", None) or "").split()) for p in run.params for opt in p.opts}
    assert "docs/running.md" in options["--size"] and "docs/tuning.md" in options["--cpus"], options
    assert all("docs/own-app.md" in options[name] for name in ("--app", "--metric", "--verify-cmd")), options
    docs = Path(__file__).parents[2] / "docs"
    own = " ".join((docs / "own-app.md").read_text().split())
    assert "the first group of its last match in the standard output, else in the standard error" in own
    assert ("run in the current folder, as its relative paths are typed, with $MAPPEROPT_STDOUT, $MAPPEROPT_STDERR "
            "and $MAPPEROPT_RUN_DIR") in own.replace("`", "")
    running = " ".join((docs / "running.md").read_text().split())
    assert "`tight` (circuit, stencil, pennant) is a problem whose working set exceeds the framebuffer" in running
    tuning = " ".join((docs / "tuning.md").read_text().split())
    assert "a CPU run of a benchmark gets one CPU processor per core this process may use, less the size's" in tuning
