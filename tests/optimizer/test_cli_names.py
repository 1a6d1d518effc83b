"""One meaning per flag name across the command line: `--repeats` and `--max-repeats` count the measured executions
of each mapper wherever they appear; compare's tuning runs per optimizer are `--runs`. compare's old `--executions`
and `--max-executions` still work, with a warning; its `--repeats`, which once meant `--runs`, says what it means
unless `--runs` is given too."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from mapperopt.cli import COMMANDS, cli, main
from mapperopt.errors import MapperoptError
from mapperopt.optimizer import compare


def _options(name: str) -> dict[str, click.Option]:
    command = cli.get_command(click.Context(cli), name)
    return {opt: p for p in command.params if isinstance(p, click.Option) and not p.hidden for opt in p.opts}


def test_repeats_means_executions_in_every_command():
    having = {name: _options(name)["--repeats"] for name in COMMANDS if "--repeats" in _options(name)}
    assert sorted(having) == ["compare", "run", "tune"]
    assert all("executions" in opt.help.lower() for opt in having.values())
    assert all("--max-repeats" in _options(name) for name in having)
    runs = _options("compare")["--runs"]
    assert "Tuning runs per optimizer" in runs.help


@pytest.fixture
def compare_options(monkeypatch):
    """compare's command line -> (the options it hands to the comparison, its output, its exception)."""
    seen: dict = {}

    def stop(bench, opts, **kw):
        seen.update(opts)
        raise MapperoptError("stopped before tuning")

    monkeypatch.setattr(compare, "run_compare", stop)

    def invoke(*args: str):
        seen.clear()
        result = CliRunner().invoke(cli, ["compare", "circuit", "--optimizers", "random", *args])
        return dict(seen), result.output, result.exception

    return invoke


def test_compare_repeats_counts_executions(compare_options):
    opts, output, _ = compare_options("--repeats", "2", "--max-repeats", "4", "--runs", "3")
    assert (opts["executions"], opts["max_executions"], opts["repeats"]) == (2, 4, 3)
    assert "note:" not in output and "warning:" not in output
    # Without --runs, the note says what --repeats means now, and how many runs this makes.
    opts, output, _ = compare_options("--repeats", "2")
    assert (opts["executions"], opts["max_executions"], opts["repeats"]) == (2, 7, 5)
    assert "note: compare's --repeats 2 counts measured executions per mapper, as in run and tune" in output
    assert "it used to mean --runs (tuning runs per optimizer): this makes --runs 5" in output


def test_compare_old_executions_names_still_work_with_a_warning(compare_options):
    opts, output, _ = compare_options("--executions", "2", "--max-executions", "4", "--runs", "3")
    assert (opts["executions"], opts["max_executions"], opts["repeats"]) == (2, 4, 3)
    assert "warning: compare's --executions is deprecated: say --repeats 2" in output
    assert "warning: compare's --max-executions is deprecated: say --max-repeats 4" in output
    opts, _, error = compare_options("--repeats", "2", "--executions", "3", "--runs", "3")
    assert not opts and "--repeats 2 and --executions 3 disagree" in str(error)


@pytest.mark.parametrize("command", [["tune", "nope"], ["compare", "nope"], ["run", "nope", "--once"]])
def test_an_unknown_benchmark_is_refused_before_anything_is_said(command, monkeypatch, tmp_path, capsys):
    """tune said it was describing `nope`, compare that it skipped the trace optimizer, run that it was running
    `nope`, before the error: the name is checked first, and nothing is written."""
    for name in ("MAPPEROPT_LLM_BASE_URL", "MAPPEROPT_LLM_MODEL"):  # compare skips trace, aloud, without them
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(command) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: unknown benchmark 'nope'; known: "), (out, err)
    assert not list(tmp_path.iterdir())


@pytest.fixture
def measured(monkeypatch, tmp_path):
    """run, tune or compare's command line -> (the most executions per mapper it would measure, or None; stderr),
    stopped where the measurements would begin."""
    from mapperopt.benchmarks import commands as run_commands
    from mapperopt.optimizer import commands as tune_commands

    seen: dict = {}

    def stop(most):
        def at(*args, **kw):
            seen["max"] = most(args, kw)
            raise MapperoptError("stopped before measuring")
        return at

    monkeypatch.setattr(run_commands, "run_benchmark", stop(lambda args, kw: kw["max_repeats"]))
    monkeypatch.setattr(tune_commands, "_new_run", stop(lambda args, kw: args[1]["max_repeats"]))  # (bench, opts, ..)
    monkeypatch.setattr(compare, "run_compare", stop(lambda args, kw: args[1]["max_executions"]))
    monkeypatch.chdir(tmp_path)

    def invoke(*args: str):
        seen.clear()
        result = CliRunner().invoke(cli, [*args[:1], "circuit", *args[1:]])
        assert result.exit_code == 1
        return seen.get("max"), str(result.exception)

    return invoke


@pytest.mark.parametrize("command", ["run", "tune", "compare"])
def test_repeats_above_the_max_repeats_given_is_an_error(command, measured):
    """`--repeats 5 --max-repeats 3` once measured up to 5 executions without a word: both were given, so the
    command cannot tell which the user meant."""
    most, error = measured(command, "--repeats", "5", "--max-repeats", "3")
    assert most is None and "--repeats 5 is more than --max-repeats 3" in error
    assert "give --max-repeats 5 or more, or leave it out" in error
    # --max-repeats left out: its default is raised to --repeats (where the measurements are set up), no error.
    assert measured(command, "--repeats", "9")[1] == "stopped before measuring"
    assert measured(command, "--repeats", "3", "--max-repeats", "3") == (3, "stopped before measuring")


@pytest.mark.parametrize("command", ["run", "tune", "compare"])
def test_a_timeout_below_the_measured_time_is_refused(command, measured):
    """`--timeout 0.4` where every execution must measure 0.5 s at least: every iteration timed out, and the
    feedback blamed the mappers. `--timeout 2.5 --min-time 2` was accepted, and calibration, which lengthens an
    execution only while its expected wall time stays within half of the timeout, fell short of --min-time, whose
    advice then named --min-time. Both are refused before anything runs, naming both options and the minimum; by
    `run` too, which accepted `--min-time 1 --timeout 1.5` and then advised an ever larger --min-time."""
    most, error = measured(command, "--timeout", "0.4")
    assert most is None and error.startswith(
        "--timeout 0.4 leaves no room for the 0.5 s of measured time every execution must reach (--min-time; by "
        "default the size's, at least 0.5): calibration lengthens an execution only while its expected wall time "
        "(Legion's start-up and the application's set-up included) stays within half of --timeout, so it needs more "
        "than 1\n  hint: give --timeout well above 1 (twice the measured time, plus the start-up), a --min-time "
        "below 0.2, or leave --timeout out"), error
    error = measured(command, "--timeout", "2.5", "--min-time", "2")[1]
    assert error.startswith("--timeout 2.5 leaves no room for the 2 s of measured time every execution must reach "
                            "(--min-time): calibration"), error
    assert "so it needs more than 4\n  hint: give --timeout well above 4" in error, error
    assert measured(command, "--timeout", "4", "--min-time", "2")[1].startswith("--timeout 4 leaves no room")
    # A measured time within half of it: on to the measurements.
    assert measured(command, "--timeout", "0.5", "--min-time", "0.2")[1] == "stopped before measuring"
    assert measured(command, "--timeout", "4.1", "--min-time", "2")[1] == "stopped before measuring"


@pytest.mark.parametrize("command", ["run", "tune", "compare"])
def test_a_huge_min_time_is_refused_with_finite_figures(command, measured):
    """`--min-time 1e308` without --timeout ran away under the size's timeout (calibration grew -l until the result
    was wrong, and the feedback blamed it); with `--timeout 60` the refusal said "needs more than inf"."""
    most, error = measured(command, "--min-time", "1e308")
    assert most is None and error.startswith("the size's timeout of "), error
    assert "leaves no room for the 1e+308 s of measured time" in error and "or leave --timeout out" not in error, error
    error = measured(command, "--timeout", "60", "--min-time", "1e308")[1]
    assert error.startswith("--timeout 60 leaves no room for the 1e+308 s") and "inf" not in error, error
    assert "give a --min-time below 30" in error, error
    assert measured(command, "--min-time", "1")[1] == "stopped before measuring"


CHECK_ERRORS = "Task nosuchtask CPU;\nRegion * * CPU FBMEM;\nIndexTaskMap calculate_new_currents undefined_fn;\n"


@pytest.mark.parametrize("command", ["tune", "compare"])
def test_a_start_file_with_errors_is_refused_with_all_of_them_before_anything_is_measured(command, monkeypatch,
                                                                                         tmp_path, capsys):
    """compare measured the expert, then its runs failed at `parse` with no line of the file, a table of 0.00,
    exit 0; tune named one error of three. Both check the file as `mapperopt check --bench` does (every error,
    file:line:col, carets) on the run's machine, and stop before any measurement, leaving no folder."""
    from mapperopt.benchmarks import harness

    def no_run(*args, **kw):
        raise AssertionError("measured")

    monkeypatch.setattr(harness, "run_benchmark", no_run)
    monkeypatch.chdir(tmp_path)
    bad = tmp_path / "bad.dsl"
    bad.write_text(CHECK_ERRORS)
    args = [command, "circuit", "--start", "bad.dsl", "--iters", "1", "--runs-dir", "runs"]
    assert main(args) == 1
    out, err = capsys.readouterr()
    assert "bad.dsl:1:6: error[E202]: unknown task 'nosuchtask'" in err and "  1 | Task nosuchtask CPU;\n" in err
    assert "    |      ^\n" in err, err
    assert "bad.dsl:2:1: error[E221]" in err and "bad.dsl:3:37: error[E200]: undefined function" in err, err
    assert "bad.dsl: 3 error(s), 0 warning(s)" in err and "Measuring" not in out, (out, err)
    # Nothing announced that was not done: the application and the machine are described to check the file, no
    # baseline is measured (tune said "measuring baselines..." before the error).
    assert "baseline" not in out.lower(), out
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").rglob("settings.json"))
    # A syntax error: the parser's (it stops at the first), before anything is announced.
    bad.write_text("Task * CPU;\nRegion * * CPU SYSMEM\nLayout * * * SOA C_order;\n")
    assert main(args) == 1
    out, err = capsys.readouterr()
    assert "bad.dsl:2:22: error[E102]: missing ';' after 'SYSMEM'" in err, err
    assert out == "", out
    assert "bad.dsl: 1 error(s), 0 warning(s) (parsing stops at the first syntax error)" in err, err


@pytest.mark.parametrize("command", ["tune", "compare"])
def test_a_misspelt_start_keyword_gets_a_did_you_mean(command, tmp_path, monkeypatch, capsys):
    """`--start defualt` is a file that does not exist: the hint names the keyword it is close to, as a misspelt
    benchmark's and --mapper's do; nothing is announced before the error."""
    monkeypatch.chdir(tmp_path)
    assert main([command, "circuit", "--start", "defualt", "--iters", "1", "--runs-dir", "runs"]) == 1
    out, err = capsys.readouterr()
    assert "error: start program defualt not found\n  hint: did you mean --start default? use --start default, " \
           "random or a DSL file" in err, err
    assert out == "", out
    assert main([command, "circuit", "--start", "nosuch.dsl", "--iters", "1", "--runs-dir", "runs"]) == 1
    err = capsys.readouterr().err
    assert "error: start program nosuch.dsl not found\n  hint: use --start default, random or a DSL file" in err, err


@pytest.mark.parametrize("typed,meant", [("tun", "tune"), ("chek", "check"), ("compil", "compile")])
def test_a_misspelt_subcommand_gets_a_did_you_mean(capsys, typed, meant):
    """`mapperopt tun` said only `No such command 'tun'.`, while a misspelt option gets a did-you-mean."""
    assert main([typed, "x.dsl"]) == 2
    assert f"No such command '{typed}'. Did you mean '{meant}'?" in capsys.readouterr().err


def test_a_misspelt_optimizer_name_gets_a_did_you_mean(tmp_path, capsys):
    """`compare --optimizers radnom` listed the names but named none, where a misspelt benchmark gets one."""
    assert main(["compare", "circuit", "--optimizers", "radnom", "--runs-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "unknown optimizer(s) radnom" in err and "did you mean 'random'?" in err, err
