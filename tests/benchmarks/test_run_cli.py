"""`mapperopt run` measures with tune's protocol by default (calibrated executions of at least
`protocol.MIN_TIME_S`, `MIN_REPEATS` to `MAX_REPEATS` of them, the trimmed mean and its interval); `--once` gives
one raw execution at the size's own iteration count (real Circuit runs)."""

from __future__ import annotations

import importlib
import json
import re
import shlex
from pathlib import Path

import pytest

from mapperopt.autoguide.explain import task_profile
from mapperopt.benchmarks import load_config, protocol
from mapperopt.benchmarks.commands import run
from mapperopt.cli import main
from mapperopt.dsl import check, parse
from mapperopt.dsl.commands import load_app, run_machine
from mapperopt.records import RunResult


def run_json(capsys, *args: str) -> dict:
    capsys.readouterr()
    assert main(["run", "circuit", "--cpus", "2", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_run_measures_with_the_protocol_by_default(tmp_path, capsys):
    defaults = {p.name: p.default for p in run.params}
    assert (defaults["repeats"], defaults["max_repeats"]) == (protocol.MIN_REPEATS, protocol.MAX_REPEATS)
    # Capped at the minimum so that the test stays short; the repeats' default is checked above.
    res = run_json(capsys, "--max-repeats", str(protocol.MIN_REPEATS), "--out", str(tmp_path / "run"))
    s = res["settings"]
    assert s["min_time_s"] == max(load_config("circuit").size("ci").min_time_s, protocol.MIN_TIME_S)
    assert s["repeats"] == protocol.MIN_REPEATS
    # The ci size's 3 loops measure far less than MIN_TIME_S: calibration grew them until an execution met it.
    assert s["min_time_met"] and s["calibration_runs"] >= 1 and s["iterations"] > 3
    assert s["measured_runs"] == protocol.MIN_REPEATS
    assert len(res["attempts"]) == s["calibration_runs"] + s["measured_runs"] + s["retried"]
    values = [a["result"]["throughput"] for a in res["attempts"][-s["measured_runs"]:]]
    assert res["trimmed_mean"] == protocol.estimate(values).value
    assert res["interval"] == [protocol.estimate(values).low, protocol.estimate(values).high]
    assert res["spread"] == protocol.estimate(values).spread and res["no_spread"] is None


def test_run_once_is_one_raw_execution(tmp_path, capsys):
    res = run_json(capsys, "--once", "--out", str(tmp_path / "run"))
    s = res["settings"]
    assert (s["repeats"], s["max_repeats"], s["min_time_s"]) == (1, 1, 0.0)
    assert s["calibration_runs"] == 0 and s["measured_runs"] == 1 and len(res["attempts"]) == 1
    assert s["iterations"] == 3  # the ci size's own `-l 3`
    # One execution says nothing of the noise: no spread and no interval (0 and [v, v] would read as none), and why.
    assert res["trimmed_mean"] == res["throughput"] == res["attempts"][0]["result"]["throughput"]
    assert (res["spread"], res["interval"]) == (None, None)
    assert res["no_spread"] == "one measured execution: no estimate of the noise", res["no_spread"]
    assert RunResult.from_json(res).no_spread == res["no_spread"]


def test_run_once_with_min_time_calibrates_as_its_help_says(tmp_path, capsys):
    """--once with --min-time: calibration executions first, then the one measured execution."""
    once = next(p for p in run.params if p.name == "once")
    assert "--min-time" in once.help and "calibration" in once.help, once.help
    res = run_json(capsys, "--once", "--min-time", "0.2", "--out", str(tmp_path / "run"))
    s = res["settings"]
    assert s["measured_runs"] == 1 and len(res["attempts"]) == s["calibration_runs"] + 1 + s["retried"]
    # calibration raises the iteration count until an execution lasts --min-time; on a loaded machine the first
    # execution may already last that long, and then it is the measured one: no calibration, the count stays
    first = res["attempts"][0]["result"]["time_s"]
    if first < 0.2:
        assert s["calibration_runs"] >= 1 and s["iterations"] > 3, (s, first)
    else:
        assert s["calibration_runs"] == 0 and s["iterations"] == 3, (s, first)


def test_run_advice_names_the_task_that_takes_the_time_and_statements_that_check(tmp_path, capsys):
    """A run with a DSL mapper is profiled by default, and the advice after it names the timed loop's task that the
    profile says takes the most time, on the kind it ran on, with statements to try that pass `check` for this run
    (none that its variants reject: the CPU stencil kernel takes only SOA F_order). Tiles large enough for the
    tasks to fill the loop: at ci's the runtime's own work takes most of it, which gets advice against that."""
    mapper = tmp_path / "x.dsl"
    mapper.write_text("Task * GPU,CPU;\n")
    capsys.readouterr()
    assert main(["run", "stencil", "--mapper", str(mapper), "--once", "--out", str(tmp_path / "run"),
                 "--", "-nx", "2004", "-ny", "2004"]) == 0
    out = capsys.readouterr().out
    printed = " ".join(out.split())
    result = RunResult.from_json(json.loads((tmp_path / "run" / "result.json").read_text()))
    feedback = json.loads((tmp_path / "run" / "feedback.json").read_text())
    top = task_profile(result)[0]
    assert top["timed"] and result.profile["iterations"]
    assert feedback["explanation"].startswith(f"'{top['task']}' on {top['kind']} takes ")
    assert "of the timed loop's task time" in feedback["explanation"]
    # The profile table gives the task the same share.
    share = re.search(r"takes (\d+)% of", feedback["explanation"])[1]
    assert re.search(rf"│ {top['task']} +│ {top['kind']} +│ {top['count']} +│ [^│]+│ {share} % +│ yes", out), out
    assert f"'{top['task']}'" in feedback["suggestion"] and "suggestion: " + feedback["suggestion"][:40] in printed
    statements = re.findall(r"`([^`]+)`", feedback["suggestion"])
    assert statements, feedback["suggestion"]
    app, machine = load_app("stencil"), run_machine("stencil", "ci", ())
    for statement in statements:
        diags = check(parse(mapper.read_text() + statement + "\n", "<m>"), app, machine)
        assert not [d for d in diags if d.is_error or d.code == "W312"], (statement, diags)


def test_run_stopped_by_check_prints_the_diagnostic_with_its_source_line_and_hints(tmp_path, capsys, monkeypatch):
    """The advice after a run that `check` stopped points at the position and the hint of the diagnostic: both are
    printed, as `mapperopt check` prints them (the CPU stencil kernel takes only SOA F_order), each diagnostic once
    (the table's reason row does not repeat the first one)."""
    monkeypatch.setenv("COLUMNS", "400")  # no folding: a repeated line would show whole
    mapper = tmp_path / "st_aos.dsl"
    mapper.write_text("Layout * * * AOS F_order;\n")
    capsys.readouterr()
    assert main(["run", "stencil", "--mapper", str(mapper), "--once", "--out", str(tmp_path / "run")]) == 1
    out = capsys.readouterr().out
    assert out.count("error[E223]") == 1, out
    feedback = json.loads((tmp_path / "run" / "feedback.json").read_text())
    assert "at the position shown as its hint says" in feedback["suggestion"], feedback
    assert "  1 | Layout * * * AOS F_order;\n    | ^\n" in out
    assert re.search(r"^  hint: write `Layout \* \* \* SOA F_order;` instead$", out, re.M), out


def test_a_missing_semicolon_is_suggested_once(tmp_path, capsys, monkeypatch):
    """The suggestion after a statement without its ';' said it twice in one sentence: "Add ';' after 'SYSMEM'. end
    the statement with ';': Region * * CPU SYSMEM;"; and the `suggestion:` line `run` printed said the hint of the
    diagnostic above it again: `run` prints the diagnostic alone (the feedback for the optimizers keeps it)."""
    monkeypatch.setenv("COLUMNS", "400")  # no folding
    mapper = tmp_path / "no_semicolon.dsl"
    mapper.write_text("Task * CPU;\nRegion * * CPU SYSMEM\nLayout * * * SOA F_order;\n")
    capsys.readouterr()
    assert main(["run", "circuit", "--mapper", str(mapper), "--once", "--out", str(tmp_path / "run")]) == 1
    out = capsys.readouterr().out
    assert re.search(r"^  hint: end the statement with ';': Region \* \* CPU SYSMEM;$", out, re.M), out
    assert "suggestion:" not in out and out.count("Region * * CPU SYSMEM;") == 1, out
    feedback = json.loads((tmp_path / "run" / "feedback.json").read_text())
    assert feedback["suggestion"] == "Add ';' after 'SYSMEM': Region * * CPU SYSMEM;", feedback
    # a statement over two lines, not quoted: the suggestion without it
    mapper.write_text("Task * CPU;\nRegion * *\n  CPU SYSMEM\nLayout * * * SOA F_order;\n")
    assert main(["run", "circuit", "--mapper", str(mapper), "--once", "--out", str(tmp_path / "run2")]) == 1
    feedback = json.loads((tmp_path / "run2" / "feedback.json").read_text())
    assert feedback["suggestion"] == "Add ';' after 'SYSMEM'", feedback


def test_run_stopped_by_a_diagnostic_without_position_is_told_to_add_a_statement(tmp_path, capsys):
    """E223 without a Layout statement (the default's F_order for the GEMMs) is about the whole file, with no
    position: the advice said "rewrite the Layout statement at the position shown"; it says to add the statement."""
    mapper = tmp_path / "g.dsl"
    mapper.write_text("Task * CPU;\n")
    capsys.readouterr()
    assert main(["run", "summa", "--mapper", str(mapper), "--once", "--out", str(tmp_path / "run")]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert f"{mapper}: error[E223]" in out, out
    suggestion = json.loads((tmp_path / "run" / "feedback.json").read_text())["suggestion"]
    assert "at the position shown" not in suggestion and "add the Layout statement its hint gives" in suggestion


def test_run_refuses_a_mapper_that_check_refuses_before_building_the_application(tmp_path, capsys, monkeypatch):
    """At size ci with the size's counts, the committed description is the one the run's build prints: a mapper
    that `check` refuses (E223) fails at stage check without building the benchmark (15 s on its first use), with
    the same result folder; flags after `--` change the launch domains, so that run builds and describes first."""
    from mapperopt.benchmarks import apps, harness

    built = []

    def spy(name, *args, **kwargs):  # the real build, recorded
        built.append(name)
        return real(name, *args, **kwargs)

    real = apps.build_app
    monkeypatch.setattr(apps, "build_app", spy)
    monkeypatch.setattr(harness, "build_app", spy)
    mapper = tmp_path / "st_aos.dsl"
    mapper.write_text("Task * CPU;\nLayout * * * AOS C_order;\n")
    capsys.readouterr()
    # the committed description lists stencil's CUDA variants: a build without nvcc describes another program
    early = harness._stored_description("stencil", "ci", 1, 0, ()) is not None
    assert main(["run", "stencil", "--mapper", str(mapper), "--once", "--out", str(tmp_path / "run")]) == 1
    assert "error[E223]" in capsys.readouterr().out and built == ([] if early else ["stencil"])
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert (result["status"], result["stage"]) == ("failed", "check") and "E223" in result["reason"], result
    assert (tmp_path / "run" / "mapper.dsl").read_text() == mapper.read_text()
    assert main(["run", "stencil", "--mapper", str(mapper), "--once", "--out", str(tmp_path / "run2"), "--",
                 "-tsteps", "2"]) == 1
    assert "error[E223]" in capsys.readouterr().out and built[-1:] == ["stencil"]


def test_run_prints_the_checkers_warnings_and_keeps_them_in_the_run_folder(tmp_path, capsys):
    """A mapper that checks with warnings runs, and the run says them as `check` does (W305: an IndexTaskMap of a
    task never index-launched does nothing), on stderr and in the run folder's check.txt."""
    mapper = tmp_path / "wrongmap.dsl"
    mapper.write_text("m = Machine(CPU);\ndef f(Task task) { return m[0, 0]; }\nIndexTaskMap check_circuit f;\n")
    capsys.readouterr()
    assert main(["run", "circuit", "--mapper", str(mapper), "--once", "--out", str(tmp_path / "run")]) == 0
    err = capsys.readouterr().err
    assert "warning[W305]: IndexTaskMap has no effect on check_circuit" in err, err
    assert "warning[W305]" in (tmp_path / "run" / "check.txt").read_text()
    # with --json too: stdout is the result, stderr the warnings
    assert main(["run", "circuit", "--mapper", str(mapper), "--once", "--json", "--out", str(tmp_path / "j")]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["status"] == "ok"
    assert "warning[W305]: IndexTaskMap has no effect on check_circuit" in err, err


def test_run_shows_the_mappers_print_lines_and_names_the_file_that_holds_them(tmp_path, capsys, monkeypatch):
    """The runtime writes a print's line bare to the program's stderr, among Realm's lines: `run` shows the lines of
    the mapper's print statements (the load phase's and those of its index-launch function), none of Realm's (a
    `{}` alone matches any text), and names the run folder's stderr.txt; past the cap, it counts the rest there."""
    mapper = tmp_path / "pr.dsl"
    mapper.write_text('Task * CPU;\nmc = Machine(CPU);\nprint("load phase: {}", mc.size);\nprint("{}", 7);\n'
                      'def f(Task task) {\n    print("point {} of {}", task.ipoint, task.ispace);\n'
                      '    return mc[0, task.ipoint[0] % mc.size[1]];\n}\nIndexTaskMap calculate_new_currents f;\n')
    capsys.readouterr()
    assert main(["run", "circuit", "--mapper", str(mapper), "--once", "--no-profile", "--out",
                 str(tmp_path / "run")]) == 0
    err = capsys.readouterr().err.splitlines()
    stderr = (tmp_path / "run" / "stderr.txt").read_text().splitlines()
    printed = [line for line in stderr if line.startswith(("load phase: (", "point (")) or line == "7"]
    assert printed[:2] == ["load phase: (1, 1)", "7"] and len(printed) > 3, stderr  # the premise: points printed
    assert any(line.startswith("[") for line in stderr), stderr  # and Realm's lines beside them
    head = f"print output of the mapper, {len(printed)} line(s) (from the program's stderr, {tmp_path}/run/stderr.txt):"
    assert head in err, err
    assert err[err.index(head) + 1:err.index(head) + 1 + len(printed)] == [f"  {line}" for line in printed], err
    # past the cap: the first lines, then how many more and where
    monkeypatch.setattr("mapperopt.dsl.commands.MAX_PRINTED", 2)
    assert main(["run", "circuit", "--mapper", str(mapper), "--once", "--no-profile", "--out",
                 str(tmp_path / "capped")]) == 0
    err = capsys.readouterr().err.splitlines()
    head = next(i for i, line in enumerate(err) if line.startswith("print output of the mapper,"))
    assert err[head + 1:head + 4] == ["  load phase: (1, 1)", "  7", f"  ... {len(printed) - 2} more line(s) in "
                                      f"{tmp_path}/capped/stderr.txt"], err


def test_run_wraps_the_checkers_warnings_where_its_output_wraps(tmp_path, capsys, monkeypatch):
    """At 80 columns the run's table and feedback were wrapped, but a warning (W330: an AOS layout with an Align,
    one line of about 700 columns) was not. Its message and hint are wrapped where the output wraps (a terminal, or
    COLUMNS), the source line and caret kept whole; check.txt keeps each diagnostic line whole."""
    mapper = tmp_path / "aos.dsl"
    mapper.write_text("Task * CPU;\nLayout * * * AOS Align==64;\n")
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(tmp_path)  # the file named as a user names it: a path is never broken
    assert main(["run", "circuit", "--mapper", mapper.name, "--once", "--out", "run"]) == 0
    err = capsys.readouterr().err
    kept = (tmp_path / "run" / "check.txt").read_text()
    head = next(line for line in kept.splitlines() if "warning[W330]" in line)
    assert len(head) > 200, kept  # the premise: a long message, kept whole in the file
    assert max(len(line) for line in err.splitlines() if " | " not in line) <= 80, err
    assert " ".join(head.split()) in " ".join(err.split()), err
    assert "  2 | Layout * * * AOS Align==64;" in err.splitlines(), err


def test_run_stopped_by_more_errors_than_shown_says_how_many(tmp_path, capsys, monkeypatch):
    """25 undefined variables stop the run at stage check: the first 20 are printed, and a line counts all 25, as
    `check` says it."""
    monkeypatch.setenv("COLUMNS", "400")  # one line each
    mapper = tmp_path / "many.dsl"
    mapper.write_text("".join(f"x{i} = y{i};\n" for i in range(25)))
    capsys.readouterr()
    assert main(["run", "circuit", "--mapper", str(mapper), "--once", "--out", str(tmp_path / "run")]) == 1
    out = capsys.readouterr().out
    assert "failed at stage check" in out and out.count("error[E201]:") == 20, out
    assert "... and 5 more error[E201] like this" in out, out
    assert "25 error(s) (the first 20 shown)" in out, out


def test_run_expert_advice_says_which_file_to_edit(tmp_path, capsys, monkeypatch):
    """After a run of the expert mapper, the advice's statements go into a copy of the expert mapper's file: the
    output names that file (the installed one, the very text run) and the commands to copy it and run the copy, with
    the program's flags and the --cpus the run was given (they were left out)."""
    monkeypatch.setenv("COLUMNS", "400")  # one line each
    capsys.readouterr()
    # A graph large enough for the tasks to fill the loop even on a loaded machine (at ci's, or with 1000 nodes per
    # piece under CI's load, the advice is against the runtime's overhead).
    assert main(["run", "circuit", "--cpus", "2", "--mapper", "expert", "--once", "--out", str(tmp_path / "run"),
                 "--", "-npp", "4000", "-wpp", "16000"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^suggestion: .*`[^`]+;`", out, re.M), out  # statements to try
    # One execution: nothing shows how noisy it is, and the line says so.
    assert re.search(r"^No spread estimate: measured by a single execution, .* measure again with no --once\.$", out,
                     re.M), out
    where = re.search(r"^to apply it: the expert mapper is (\S+): copy it \(`cp (\S+) my\.dsl`\), edit the copy and "
                      r"run `mapperopt run circuit --cpus 2 --mapper my\.dsl -- -npp 4000 -wpp 16000`\.$", out, re.M)
    assert where and where[1] == where[2], out
    cfg = load_config("circuit")
    assert Path(shlex.split(where[1])[0]).read_text() == cfg.expert_dsl()


def test_run_warns_of_a_short_or_noisy_measurement(tmp_path, capsys, monkeypatch):
    """A run whose executions measure less than the protocol's minimum (here --min-time 0.01 at size ci) says so
    after its table, with the time measured, the minimum and the options that lengthen it; an interval far wider
    than the target is warned of exactly when the run's own figures have one."""
    monkeypatch.setenv("COLUMNS", "400")  # one line each
    capsys.readouterr()
    assert main(["run", "circuit", "--cpus", "2", "--min-time", "0.01", "--max-repeats", "3",
                 "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    result = RunResult.from_json(json.loads((tmp_path / "run" / "result.json").read_text()))
    assert result.time_s < protocol.MIN_TIME_S  # the premise: calibrated to 0.01 s, far below 0.5 s
    assert re.search(rf"^Short measurement: {result.time_s:.2g} s measured per execution, less than the protocol's "
                     r"minimum of 0\.5 s, .*measure again with a larger --size \(small\) or --min-time 0\.5\.$", out,
                     re.M), out
    noisy = protocol.estimate(protocol.values_of(result)).noisy
    assert ("Noisy measurement: " in out) == noisy and ("target of ±5 %" in out) == noisy, out


def test_a_short_wall_time_is_called_the_wall_time(tmp_path, capsys, monkeypatch):
    """A user's program without a metric is measured by its wall time: the short-measurement line said "by the
    program's time metric (not the wall time ...)", contradicting the table's "wall time in s". With a time metric
    that line stays."""
    monkeypatch.setenv("COLUMNS", "400")  # one line each
    prog = tmp_path / "prog"
    prog.write_text("#!/bin/sh\necho 'took 3 ms'\n")
    prog.chmod(0o755)
    assert main(["run", "--app", str(prog), "--repeats", "3", "--out", str(tmp_path / "wall")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^Short measurement: \S+ s of wall time per execution \(Legion's start-up included\), less than "
                     r"the protocol's minimum of 0\.5 s", out, re.M), out
    assert "time metric" not in out
    assert main(["run", "--app", str(prog), "--metric", "took ([0-9.]+) ms", "--unit", "ms", "--repeats", "3",
                 "--out", str(tmp_path / "metric")]) == 0
    out = capsys.readouterr().out
    assert "Short measurement: 0.003 s measured per execution by the program's time metric (not the wall time" in out


def test_run_warns_once_of_more_processors_than_cores(tmp_path, capsys, monkeypatch):
    """`--cpus 4` (4 CPU and 1 utility processor) on a machine that gives the run 2 cores: the processors share
    cores, so the figures are slower and noisier; the run said only that its measurement was noisy, if that."""
    import os

    monkeypatch.setenv("COLUMNS", "400")  # one line each
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    capsys.readouterr()
    assert main(["run", "circuit", "--cpus", "4", "--once", "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert out.count("More processors than cores: ") == 1, out
    assert ("More processors than cores: 4 CPU and 1 utility processor, 5 in all, on the 2 cores this machine gives "
            "the run: they share cores, so its timings are slower and noisier than with a core each") in out, out
    assert main(["run", "circuit", "--cpus", "1", "--once", "--out", str(tmp_path / "fits")]) == 0
    assert "More processors than cores" not in capsys.readouterr().out


def test_no_core_warning_for_a_run_that_never_ran(tmp_path, capsys, monkeypatch):
    """A mapper that fails `check` runs nothing: no word about its timings (it said that its timings are slower
    and noisier with more processors than cores)."""
    import os

    monkeypatch.setenv("COLUMNS", "400")  # one line each
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    bad = tmp_path / "bad.dsl"
    bad.write_text("Task no_such_task CPU;\n")
    capsys.readouterr()
    assert main(["run", "circuit", "--cpus", "4", "--once", "--mapper", str(bad), "--out", str(tmp_path / "run")]) == 1
    out = capsys.readouterr().out
    assert "failed at stage check" in out, out
    assert "More processors than cores" not in out, out


def test_a_failure_inside_autoguide_keeps_the_runs_summary_and_feedback(tmp_path, capsys, monkeypatch):
    """AutoGuide failing on a run (a bug of its own, here forced) leaves the run its summary and feedback.json: the
    feedback keeps the throughput and says that AutoGuide failed, naming the exception."""
    explain_module = importlib.import_module("mapperopt.autoguide.explain")  # the package's `explain` is the function

    def broken(*args, **kwargs):
        raise AttributeError("'NoneType' object has no attribute 'count'")

    monkeypatch.setattr(explain_module, "_performance", broken)
    capsys.readouterr()
    assert main(["run", "circuit", "--cpus", "2", "--once", "--mapper", "expert", "--out", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "throughput" in out.lower(), out
    feedback = json.loads((tmp_path / "r" / "feedback.json").read_text())
    assert feedback["explanation"].startswith("AutoGuide failed on this run (AttributeError: 'NoneType' object has "
                                              "no attribute 'count' at test_run_cli.py:"), feedback
    assert feedback["raw_excerpt"].startswith("Performance Metric: Achieved throughput = "), feedback


def test_a_missing_mapper_file_is_refused_before_the_run_is_announced(tmp_path, capsys, monkeypatch):
    """`run --mapper nosuch.dsl` printed `Running circuit (building ...)...` and then that the file does not exist:
    the file is looked for first, and nothing is announced (or built) for a run that cannot start."""
    monkeypatch.chdir(tmp_path)
    assert main(["run", "circuit", "--mapper", "nosuch.dsl"]) == 1
    out, err = capsys.readouterr()
    assert err.startswith("error: mapper file nosuch.dsl not found\n  hint: --mapper takes default"), err
    assert "Running" not in out + err, (out, err)
    assert main(["run", "circuit", "--mapper", "expertt"]) == 1  # its did-you-mean too
    assert capsys.readouterr().err.startswith("error: mapper file expertt not found\n  hint: did you mean --mapper "
                                              "expert?")
    assert main(["run", "circuit", "--mapper", "DEFAULT"]) == 1  # the keywords are lower case
    assert capsys.readouterr().err.startswith("error: mapper file DEFAULT not found\n  hint: did you mean --mapper "
                                              "default?")
    # An existing folder is not "not found": it is a folder, and its DSL files are named.
    (tmp_path / "mappers").mkdir()
    (tmp_path / "mappers" / "a.dsl").write_text("Task * CPU;\n")
    assert main(["run", "circuit", "--mapper", "mappers"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: --mapper mappers is a folder, not a DSL file: its .dsl files are mappers/a.dsl"), err
    assert "Running" not in err, err


def test_a_flag_the_benchmark_does_not_take_or_an_option_after_the_double_dash_is_refused(capsys):
    """The applications ignore flags they do not know: `-- -gdimm 3` measured (and verified) johnson's default grid,
    and `-- --mapper expert --once` ran Legion's default mapper, calibrated. Both are refused before anything runs, in
    run, tune, compare, check and explain; Legion's and Realm's flags pass."""
    for args, said in (
            (["run", "johnson", "--once", "--", "-gdimm", "3"], "error: johnson takes no flag -gdimm (after `--`)"),
            # another GEMM's flag changes nothing here: ignored, the same problem (docs/gemm.md)
            (["run", "johnson", "--once", "--", "-reduce"], "error: johnson takes no flag -reduce (after `--`): it "
                                                            "would ignore it (a flag of cannon, pumma, summa)\n"),
            (["run", "pennant", "--", "-npiece", "4"], "hint: did you mean -npieces?"),
            (["tune", "cannon", "--iters", "1", "--", "-nn", "512"], "hint: did you mean -n?"),
            (["compare", "pennant", "--", "-cstopp", "5"], "hint: did you mean -cstop?"),
            (["explain", "configs/cosma.dsl", "--bench", "cosma", "--", "-proc", "4"], "hint: did you mean -procs?"),
            (["run", "johnson", "--", "-gdim", "3", "--mapper", "expert", "--once"],
             "error: --mapper after `--` goes to johnson, not to mapperopt\n  hint: give --mapper before `--`"),
            (["check", "configs/cosma.dsl", "--bench", "cosma", "--", "--machine", "1x4"],
             "error: --machine after `--` goes to cosma")):
        capsys.readouterr()
        assert main(args) == 2, args
        out, err = capsys.readouterr()
        assert said in err and "Running" not in out, (args, out, err)
    from mapperopt.benchmarks.apps import check_app_flags

    check_app_flags("pennant", ["-deck", "-odd.pnt", "-npieces", "4", "-test-corrupt", "-ll:cpu", "2",
                                "-lg:safe_mapper", "-hl:sched", "1", "-dm:memoize", "-level", "mapper=2", "-logfile",
                                "x.log", "-cat", "legion_spy", "-mapper-profile", "--describe"])


def test_an_option_of_another_mapperopt_command_is_named_as_that_commands(capsys):
    """An option of another mapperopt command got a near miss that steered away: `check F --bench circuit --
    --mapper x` hinted `-mapper` (a Legion flag that loads a compiled library), `run circuit --iters 3` "Did you mean
    '--unit'?", `check F --bench circuit --domain 4` (explain's option) "Did you mean '--machine'?". Each now names
    the commands that take the option and what this one takes instead; still a usage error (2), nothing run."""
    dsl = "configs/circuit.dsl"
    for args, said in (
            (["check", dsl, "--bench", "circuit", "--", "--mapper", "x"],
             "error: --mapper after `--` goes to circuit, not to mapperopt\n  hint: --mapper is an option of "
             "`mapperopt toolchain` and `mapperopt run`, not of check: check takes the mapper file as its argument "
             "(`mapperopt check FILE`)\n"),
            (["run", "circuit", "--mapper", dsl, "--iters", "3"],
             "error: No such option '--iters': --iters is an option of `mapperopt tune` and `mapperopt compare`, not "
             "of run: run measures one mapper, --repeats N times (or --once)\n"),
            (["run", "circuit", "--mapper", dsl, "--", "--iters", "3"],
             "error: --iters after `--` goes to circuit, not to mapperopt\n  hint: --iters is an option of "
             "`mapperopt tune` and `mapperopt compare`, not of run: run measures one mapper, --repeats N times (or "
             "--once)\n"),
            (["tune", "circuit", "--mapper", dsl], "error: No such option '--mapper': --mapper is an option of "
                                                    "`mapperopt toolchain` and `mapperopt run`, not of tune: tune "
                                                    "starts from --start FILE\n"),
            (["check", dsl, "--bench", "circuit", "--domain", "4"],
             "error: No such option '--domain': --domain is an option of `mapperopt explain`, not of check: check "
             "judges the launch domains of the run (set them with the program's flags after `--`, e.g. `--bench "
             "circuit -- -p 8`)\n"),
            (["compile", dsl, "--domain=4"], "error: No such option '--domain': --domain is an option of `mapperopt "
                                             "explain`, not of compile: compile judges the launch domains of the run"),
            (["check", dsl, "--seed", "3"], "error: No such option '--seed': --seed is an option of `mapperopt "
                                            "tune` and `mapperopt compare`, not of check\n")):
        capsys.readouterr()
        assert main(args) == 2, args
        out, err = capsys.readouterr()
        assert said in err and "did you mean" not in err.lower() and not out, (args, out, err)
    # A misspelt option of this command keeps click's suggestion; a misspelt flag after `--` the application's.
    assert main(["run", "circuit", "--repeat", "3"]) == 2
    err = capsys.readouterr().err
    assert "Did you mean" in err and "'--repeats'" in err, err
    assert main(["check", dsl, "--bench", "circuit", "--", "-prun"]) == 2
    assert "hint: did you mean -prune?" in capsys.readouterr().err
    # tune's --seed after `--` may be meant for tune or be circuit's -seed: both said
    assert main(["run", "circuit", "--", "--seed", "3"]) == 2
    assert ("hint: --seed is an option of `mapperopt tune` and `mapperopt compare`, not of run; or did you mean "
            "circuit's -seed?") in capsys.readouterr().err


def test_another_commands_option_is_named_in_every_form_with_what_this_command_takes(capsys):
    """The hints of the test above were lost for `--opt=value` where click does not split it (run, tune, compare: `run
    circuit --iters=3` "flags for the program go after `--`") and after `--` (`-- --mapper=x`: "did you mean
    -mapper?"); `machine -- --json` sent the user to `run` though --json is machine's own option; and several hints
    stopped at "not of X" where X takes the same thing another way (`run --bench circuit`, `run --domain 4`, `run
    --machine 2x4`, `explain --gpus 1`, `check FILE circuit`). Each says what to do; still a usage error (2)."""
    dsl = "configs/circuit.dsl"
    iters = ("--iters is an option of `mapperopt tune` and `mapperopt compare`, not of run: run measures one mapper, "
             "--repeats N times (or --once)\n")
    for args, said in (
            (["run", "circuit", "--iters=3"], "error: No such option '--iters': " + iters),
            (["run", "circuit", "--", "--iters=3"],
             "error: --iters after `--` goes to circuit, not to mapperopt\n  hint: " + iters),
            (["tune", "circuit", "--iters=3", f"--mapper={dsl}"],
             "error: No such option '--mapper': --mapper is an option of `mapperopt toolchain` and `mapperopt run`, "
             "not of tune: tune starts from --start FILE\n"),
            (["check", dsl, "--bench", "circuit", "--", f"--mapper={dsl}"],
             "error: --mapper after `--` goes to circuit, not to mapperopt\n  hint: --mapper is an option of "
             "`mapperopt toolchain` and `mapperopt run`, not of check: check takes the mapper file as its argument"),
            (["run", "circuit", "--", "--mapper=expert"],
             "error: --mapper after `--` goes to circuit, not to mapperopt\n  hint: give --mapper before `--`\n"),
            (["machine", "--", "--json"], "hint: give --json before `--`\n"),
            (["machine", "--", "--gpus", "1"], "hint: give --gpus before `--`\n"),
            (["machine", "--", "--gpus=1"], "hint: give --gpus before `--`\n"),
            (["run", "circuit", "--domain", "4"],
             "error: No such option '--domain': --domain is an option of `mapperopt explain`, not of run: run's "
             "launch domains are the program's, set with its flags after `--` (e.g. `mapperopt run circuit -- -p "
             "8`)\n"),
            (["tune", "circuit", "--domain=4"], "not of tune: tune's launch domains are the program's, set with its "
                                                "flags after `--` (e.g. `mapperopt tune circuit -- -p 8`)\n"),
            (["run", "--bench", "circuit", "--mapper", dsl, "--once"],
             "error: No such option '--bench': --bench is an option of `mapperopt check`, `mapperopt explain` and "
             "`mapperopt compile`, not of run: run takes the benchmark as its argument (`mapperopt run BENCH`, e.g. "
             "`mapperopt run circuit`)\n"),
            (["tune", "--bench", "circuit"], "not of tune: tune takes the benchmark as its argument (`mapperopt tune "
                                             "BENCH`, e.g. `mapperopt tune circuit`)\n"),
            (["run", "circuit", "--machine", "2x4"],
             "error: No such option '--machine': --machine is an option of `mapperopt check`, `mapperopt explain` "
             "and `mapperopt compile`, not of run: run measures on this machine (`mapperopt machine` shows it), "
             "--cpus and --gpus set the processors it uses\n"),
            (["compare", "circuit", "--optimizer=guided"],
             "error: No such option '--optimizer': --optimizer is an option of `mapperopt tune`, not of compare: "
             "compare takes several, --optimizers NAME,NAME (e.g. `--optimizers guided,optuna`)\n"),
            (["tune", "circuit", "--optimizers", "guided"], "not of tune: tune runs one, --optimizer NAME\n"),
            (["fmt", dsl, "--", "--check"], "error: --check after `--` is read as a file name: give --check before "
                                            "`--`\n"),
            (["check", dsl, "--bench", "circuit", "--machine", "2x4", "--", "--machine", "1x4"],
             "error: --machine after `--` goes to circuit, not to mapperopt\n  hint: drop the one after `--`: "
             "--machine is given before it too\n")):
        capsys.readouterr()
        assert main(args) == 2, args
        out, err = capsys.readouterr()
        assert said in err and "did you mean" not in err.lower() and not out, (args, out, err)
    # a benchmark's name where the mapper file's command takes none: --bench
    for command in ("check", "explain", "compile"):
        assert main([command, dsl, "circuit"]) == 2
        assert (f"error: unexpected argument 'circuit': {command} takes one mapper file; flags for the run go after "
                f"`--`; did you mean `--bench circuit`?\n") in capsys.readouterr().err


def test_the_flags_mapperopt_lets_through_are_those_the_applications_read():
    """`check_app_flags` refuses what APP_FLAGS lacks: the list must follow the applications' sources (every flag an
    application reads is a string literal there), or a new flag would be refused, a removed one let through."""
    from mapperopt.benchmarks.apps import APP_FLAGS, LAYERS

    def literals(folder: str) -> set[str]:
        sources = [f for f in (Path(__file__).parents[2] / "benchmarks" / "legion" / folder).iterdir()
                   if f.suffix in (".cc", ".h", ".cu")]
        return {m for f in sources for m in re.findall(r'"(-[a-z][a-z0-9-]*)"', f.read_text())}

    for app, flags in APP_FLAGS.items():
        if app not in LAYERS:
            assert set(flags) == literals(app), app
    gemm = set().union(*(APP_FLAGS[app] for app in LAYERS))
    assert gemm == literals("gemm") - {"-mapper"}


def test_the_gemm_profile_says_which_loop_tasks_run_before_the_timer(tmp_path, capsys, monkeypatch):
    """taco_fill and the placement tasks run once per product, so the profile counts them in the timed loop, but each
    product times only its task_4 launches: the table and AutoGuide's excerpt say so (their shares, AutoGuide's
    choice and the guided search's order stay those of the count)."""
    monkeypatch.setenv("COLUMNS", "300")
    capsys.readouterr()
    assert main(["run", "cannon", "--mapper", "expert", "--once", "--out", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"│ taco_fill +│ CPU +│ 64 +│ [0-9.e-]+ +│ \d+ % +│ yes, before the timer +│", out), out
    assert re.search(r"│ task_4 +│ CPU +│ 256 +│ [0-9.e-]+ +│ \d+ % +│ yes +│", out), out
    # The verified row names the check that ran (the result lines' check.kind): ci's products are recomputed whole.
    assert re.search(r"│ verified +│ yes, every execution \(full product: the whole product recomputed\) +│", out), out
    feedback = json.loads((tmp_path / "r" / "feedback.json").read_text())
    assert re.search(r"task taco_fill on CPU: 64 runs, .* task time; before the timer\)", feedback["raw_excerpt"]), \
        feedback["raw_excerpt"]
    # The two take about as long: whichever the explanation names, it says whether that one is timed.
    hot = re.search(r"'(\w+)' on CPU takes \d+% of the timed loop's task time", feedback["explanation"]).group(1)
    assert ("It runs in every iteration but before the timer" in feedback["explanation"]) == (hot == "taco_fill")


def test_ctrl_c_names_the_run_folder_it_leaves(tmp_path):
    """Ctrl-C during an execution: `run` says which folder keeps what ran so far, and that it has no result.json
    (it printed only `aborted`)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out_dir = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "mapperopt.cli", "run", "circuit", "--mapper", "expert",
                             "--no-profile", "--out", str(out_dir)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                            env={**os.environ, "COLUMNS": "400"})
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None and not (out_dir / "stdout-1.txt").exists():
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()[0]
    os.kill(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    flat = " ".join(out.split())
    assert proc.returncode == 130, out
    assert not (out_dir / "result.json").exists() and (out_dir / "command.txt").exists()
    assert f"Interrupted: {out_dir} keeps what ran so far" in flat and "no result.json" in flat, out
    assert "aborted" not in out, out


@pytest.mark.parametrize("command", ["run", "tune", "compare", "check"])
@pytest.mark.parametrize(("option", "value"), [("--timeout", "nan"), ("--timeout", "inf"), ("--min-time", "nan"),
                                               ("--min-time", "inf")])
def test_a_time_that_is_not_a_finite_number_is_refused(command, option, value, tmp_path, monkeypatch, capsys):
    """`--timeout nan` failed every execution with coreutils' usage text; `--min-time nan` turned calibration off."""
    if command == "check" and option == "--min-time":
        pytest.skip("check has no --min-time")
    monkeypatch.chdir(tmp_path)
    rest = ["m.dsl", "--app", "./prog"] if command == "check" else ["circuit"]
    assert main([command, *rest, option, value]) == 2
    assert f"Invalid value for '{option}': '{value}' is not a finite number." in capsys.readouterr().err


def test_the_benchmarks_are_listed_by_the_help_of_run_tune_and_compare_and_when_none_is_named(capsys):
    """No command listed the benchmarks that BENCH names (only an unknown name's error did): the help of run, tune and
    compare lists them, and so does the error for a run that names none."""
    from mapperopt.benchmarks.apps import known_benchmarks

    listed = ", ".join(known_benchmarks())
    assert "cannon" in listed and "pennant" in listed
    for command in ("run", "tune", "compare"):
        assert main([command, "--help"]) == 0
        assert f"BENCH: {listed}." in " ".join(capsys.readouterr().out.split()), command
    assert main(["build", "--help"]) == 0
    assert f"BENCHES: {listed}." in " ".join(capsys.readouterr().out.split())
    assert main(["run"]) == 2
    assert f"hint: the benchmarks: {listed}" in capsys.readouterr().err


def test_the_docs_time_of_size_ci_is_one_execution_and_say_what_run_adds():
    """docs/running.md said "`ci` runs in a few seconds", true of one execution, but `mapperopt run` at ci took
    6-45 s: it calibrates every execution to the protocol's least measured time, repeats it and profiles once more.
    The sentence says so, with the protocol's figures."""
    text = " ".join((Path(__file__).resolve().parents[2] / "docs" / "running.md").read_text().split())
    claim = text[text.index("Sizes: "):text.index("`small` takes")]
    assert "one execution" in claim, claim
    assert f"{protocol.MIN_TIME_S:g} s" in claim and f"{protocol.MIN_REPEATS}–{protocol.MAX_REPEATS}" in claim, claim


def test_run_refuses_an_out_folder_that_is_not_empty(tmp_path, capsys):
    """`--out DIR` on a folder holding an earlier run (or the user's own files) once wrote the new run beside them:
    a failed result.json next to the earlier run's mapper.cc and stdout.txt. Like tune and compare, which never
    write into a folder of another run, it is refused before anything runs, and nothing there changes."""
    bad = tmp_path / "bad.dsl"
    bad.write_text("Region * * CPU FOOMEM;\n")
    folder = tmp_path / "r1"
    folder.mkdir()
    (folder / "stdout.txt").write_text("an earlier run's output\n")
    capsys.readouterr()
    assert main(["run", "circuit", "--mapper", str(bad), "--once", "--out", str(folder)]) == 1
    err = capsys.readouterr().err
    assert f"error: --out {folder} is not empty" in err and "hint: name a new or empty folder" in err, err
    assert [p.name for p in folder.iterdir()] == ["stdout.txt"]


@pytest.mark.parametrize("option", ["--repeats", "--max-repeats"])
def test_run_once_refuses_repeats(tmp_path, capsys, option):
    """`--once` (one measured execution) with --repeats 5 or --max-repeats 9 once ran one execution and exited 0,
    the option silently ignored: the contradiction is refused before anything runs, as --repeats above
    --max-repeats is."""
    capsys.readouterr()
    assert main(["run", "circuit", "--once", option, "5", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert f"error: --once measures one execution, {option} 5 several" in err and "hint: " in err, err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("args, status", [(["--size", "huge"], 2), (["--once", "--repeats", "5"], 2),
                                          (["--mapper", "nosuch.dsl"], 1), (["--once", "--", "-foo"], 2),
                                          (["--once", "--", "--mapper", "expert"], 2),
                                          (["--once", "--repeats", "2", "--repeats", "3", "--", "-foo"], 2)],
                         ids=["size", "once-repeats", "mapper", "app-flag", "option-after", "twice-and-app-flag"])
def test_run_json_prints_an_error_before_the_run_as_json(tmp_path, capsys, args, status):
    """`run --json` printed JSON for a finished or failed run only: an error before the run (an unknown size, a
    conflict of options, a missing mapper, a flag after `--` the program does not take) left stdout empty. It prints
    one object too, with a failed run's keys, status "error" and the error as `reason`; stderr says it as before, and
    the exit status is 2 for a usage error, 1 for another (the missing mapper)."""
    capsys.readouterr()
    assert main(["run", "circuit", "--json", "--out", str(tmp_path / "r"), *args]) == status
    out, err = capsys.readouterr()
    failed = {**RunResult(app="circuit", mapper="default", status="failed").to_json(), "notes": []}
    error = json.loads(out)
    assert error.keys() == failed.keys() and error["status"] == "error" and error["app"] == "circuit", out
    assert error["reason"] and f"error: {error['reason']}" in err and error["run_dir"] is None, (out, err)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("args, status", [(["machine", "--json", "--gpus", "1"], 1),
                                          (["machine", "--json", "--", "-steps", "4"], 2),
                                          (["explain", str(Path(__file__).parents[2] / "configs" / "circuit.dsl"),
                                            "--bench", "circiut", "--json"], 2),
                                          (["explain", str(Path(__file__).parents[2] / "configs" / "circuit.dsl"),
                                            "--bench", "circuit", "--machine", "1x4", "--png", "nosuch/x.png",
                                            "--json"], 1),
                                          (["explain", str(Path(__file__).parents[2] / "configs" / "circuit.dsl"),
                                            "--bench", "circuit", "--json", "--", "-proc", "4"], 2)],
                         ids=["machine", "machine-usage", "explain-usage", "explain", "explain-app-flag"])
def test_machine_and_explain_json_print_an_error_before_their_records_as_json(capsys, args, status):
    """`machine --json` and `explain --json` left stdout empty on an error before their records, so a program reading
    stdout got nothing to parse: they print one object there too, as `run --json` does, `status` "error", the error as
    `reason` and with its hint as `log`; stderr says it as without --json, and the exit status is the error's."""
    capsys.readouterr()
    assert main(args) == status
    out, err = capsys.readouterr()
    error = json.loads(out)
    assert error["status"] == "error" and error["reason"] and f"error: {error['reason']}" in err, (out, err)
    assert error["log"].startswith(error["reason"]), out
    assert args[0] == "machine" or len(out.splitlines()) == 1, out  # explain's: one JSON line, as its records are
    running = " ".join((Path(__file__).parents[2] / "docs" / "running.md").read_text().split())
    assert "`machine --json` and `explain --json` print such an error as one object too" in running


@pytest.mark.parametrize("command", [["machine"], ["run", "circuit", "--once"]], ids=["machine", "run"])
def test_no_system_memory_after_the_flags_is_refused_as_csize_0_is(tmp_path, capsys, command):
    """`--csize 0` is refused, but `-- -ll:csize 0` showed an empty memory table (`machine`) or started a run that
    failed: the flag is held to the option's range, before anything runs."""
    capsys.readouterr()
    assert main([*command, "--", "-ll:csize", "0"]) == 2
    err = capsys.readouterr().err
    assert "error: `-ll:csize 0` after `--` asks for no system memory: --csize takes 1 MiB or more" in err, err


@pytest.mark.parametrize("command", [["machine"], ["run", "circuit", "--once"]], ids=["machine", "run"])
def test_no_cpu_after_the_flags_is_refused_as_cpus_0_is(capsys, command):
    """`--cpus 0` is refused, but `-- -ll:cpu 0` was taken: the flag is held to the option's range, before anything
    runs, as `-ll:csize 0` is."""
    capsys.readouterr()
    assert main([*command, "--", "-ll:cpu", "0"]) == 2
    err = capsys.readouterr().err
    assert "error: `-ll:cpu 0` after `--` asks for no CPU: --cpus takes 1 or more" in err, err


@pytest.mark.parametrize("args,said", [
    (["machine", "--cpus", "100000"], "100000 CPUs and 0 GPUs per node: Realm numbers at most 4096 processors"),
    (["machine", "--", "-ll:cpu", "5000"], "5000 CPUs and 0 GPUs per node: Realm numbers at most 4096 processors"),
    (["run", "circuit", "--once", "--cpus", "100000"], "100000 CPUs and 0 GPUs per node: Realm numbers at most"),
    (["run", "circuit", "--once", "--csize", "99999999"], "--csize 99999999 MiB is more than this machine's memory"),
    (["run", "circuit", "--once", "--", "-ll:csize", "99999999"], "-ll:csize 99999999 MiB is more than this")],
    ids=["machine-cpus", "machine-flag", "run-cpus", "run-csize", "run-flag"])
def test_huge_processor_counts_and_memory_sizes_are_refused_before_legion_crashes(capsys, args, said):
    """`--cpus 100000` ended in a raw Realm assertion (its processor IDs have 12 bits for the index on a node), and
    `--csize 99999999` in a segmentation fault without a message: both are refused first, naming the limit."""
    capsys.readouterr()
    assert main(args) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert said in err, err


def test_more_processors_than_this_legion_build_runs_are_refused_and_warned_of_by_check(capsys, tmp_path):
    """`machine --cpus 1000` printed the probe's raw abort (LEGION RESOURCE EXCEPTION: Maximum number of local
    processors 1001 exceeds compile-time maximum of 64) and a backtrace; `check --machine 1x0x1000` accepted a machine
    this Legion cannot run. The limit comes from this Legion build's headers; the probe shows it is the real one."""
    from mapperopt import toolchain
    from mapperopt.probe import probe_json

    limit = toolchain.max_procs_per_node()
    assert limit is not None and limit < 4096
    capsys.readouterr()
    for args in (["machine", "--cpus", str(limit)], ["run", "circuit", "--once", "--cpus", str(limit)],
                 ["machine", "--", "-ll:cpu", str(limit - 1), "-ll:util", "2"]):
        assert main(args) == 1, args
        err = " ".join(capsys.readouterr().err.split())
        assert f"this Legion build runs at most {limit} processors on a node" in err, err
        assert "LEGION RESOURCE EXCEPTION" not in err and "give at most" in err, err
    # One fewer runs: the limit counts the utility processor, as Legion does.
    assert probe_json(limit - 1, 0)
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Task * CPU;\n")
    assert main(["check", str(mapper), "--bench", "circuit", "--machine", f"1x0x{limit}"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert (f"warning: --machine 1x0x{limit} has {limit + 1} processors per node (its utility processor included); "
            f"this Legion build runs at most {limit}") in err, err
    assert main(["check", str(mapper), "--bench", "circuit", "--machine", f"1x0x{limit - 1}"]) == 0
    assert "warning: --machine" not in capsys.readouterr().err


def test_a_run_json_error_of_an_application_file_names_its_app(tmp_path, capsys):
    """`run --app bad.yaml --json` of a file with `app: heat2d` and no size printed `"app": ""`, neither a name nor an
    absence: the file's app name, or null where nothing names one."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("app: heat2d\nexe: ./heat2d\nsizes: {}\n")
    capsys.readouterr()
    assert main(["run", "--app", str(bad), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["app"] == "heat2d"
    bad.write_text("exe: [\n")  # broken YAML: nothing names the program
    assert main(["run", "--app", str(bad), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["app"] is None
