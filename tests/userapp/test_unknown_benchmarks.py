"""Our own Circuit and Stencil run as if they were unknown programs (`--app 'CMD ARGS'`: no --describe, no result
line, wall time and an output pattern): discovered, mapped and tuned."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mapperopt.benchmarks import build_app, describe_app, load_config, protocol
from mapperopt.benchmarks.userapp import app_from_command, discover
from mapperopt.cli import main

VERIFIED = '"verified": true'  # what both print when their own check passes
# One execution per mapper, no reference mapper, the shortest final comparison: these tests check the workflow.
QUICK = ["--baseline", "none", "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1"]
# What tune and compare say of a program that prints its own check (Stencil's result line) and has no verification
OWN_CHECK_NOT_FOR_LAYOUTS = ("Layouts are not searched: this application's own check (its MAPPEROPT_RESULT lines) is "
                             "read in every execution but does not count for layouts: it may not notice a layout the "
                             "kernels do not expect, which can make a program compute wrong numbers silently; give "
                             "the application a verification (verify: in its application file, or --verify-pattern, "
                             "--verify-cmd, --reference) to search layouts.")


def command(bench: str) -> str:
    args = load_config(bench).size("ci").args
    return " ".join([str(build_app(bench)), *[f"{k} {v}" for k, v in args.items()]])


def test_ctrl_c_prints_a_resume_command_that_names_the_program_as_given(tmp_path, capsys):
    """Interrupted, `tune --app` prints the command that continues its run with the program as --app named it and
    the --app flags given (it printed `mapperopt tune stencil --resume ...`, an unknown benchmark), and that command,
    pasted, continues the run."""
    spec = command("stencil")
    args = ["tune", "--app", spec, "--verify-pattern", VERIFIED, "--iters", "2", "--new", *QUICK,
            "--runs-dir", str(tmp_path)]
    proc = subprocess.Popen([sys.executable, "-m", "mapperopt.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as tests/optimizer
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None and not any(
            p.read_text().strip() for p in tmp_path.glob("stencil/tune-*/state.jsonl")):  # iteration 1 journaled
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()[0]
    os.kill(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    (root,) = tmp_path.glob("stencil/tune-*")
    again = shlex.join(["mapperopt", "tune", "--app", spec, "--verify-pattern", VERIFIED, "--resume", str(root),
                        "--iters", "2"])
    # where the output wraps (COLUMNS set, as pytest-xdist's workers do) the command has a line of its own
    assert proc.returncode == 130 and f"To continue: {again}" in " ".join(out.split()), out
    capsys.readouterr()
    assert main(shlex.split(again)[1:]) == 0
    assert f"Continuing {root}: 1 of 2 iterations done" in capsys.readouterr().out


def test_a_programs_own_failed_check_is_reported_as_its_own(tmp_path):
    """A program whose own check fails (Circuit with -test-corrupt: its result line says "verified": false), run
    with no --verify-* option: AutoGuide says plainly that its own check failed and what the check reported, and
    after a DSL mapper what in the mapping to look at (it blamed "the --verify-pattern, --verify-cmd or --reference
    option", none given; then it said "checked its own results and reported them wrong", the check's object after the
    harness's reason)."""
    import dataclasses

    from mapperopt.autoguide import explain
    from mapperopt.records import RunResult

    out_dir = tmp_path / "run"
    assert main(["run", "--app", command("circuit") + " -test-corrupt", "--out", str(out_dir)]) == 1
    result = RunResult.from_json(json.loads((out_dir / "result.json").read_text()))
    feedback = json.loads((out_dir / "feedback.json").read_text())
    assert (result.stage, feedback["category"], feedback["rule"]) == ("verify", "verification",
                                                                      "verification-app-own-check")
    stdout = (out_dir / "stdout.txt").read_text().split("\n")
    ((line, printed),) = [(n, text) for n, text in enumerate(stdout, 1) if text.startswith("MAPPEROPT_RESULT ")]
    check = printed[printed.index('"check": ') + len('"check": '):].removesuffix("}")  # its line's last field
    assert check.startswith('{"kind": "reference", '), check
    # the check as Circuit printed it (it was re-serialised, keys sorted); a long one is cut short
    assert feedback["explanation"].startswith(f'circuit ran, but its own correctness check failed (its '
                                              f'MAPPEROPT_RESULT line, line {line} of the standard output, says '
                                              f'"verified": false; exit status 2). It reported: {check[:80]}')
    # not discovered (no DSL mapper ran): whether the program registers a mapper of its own is unknown
    assert feedback["suggestion"].startswith("No DSL mapper ran, so the mapper is not the cause: the check fails "
                                             "under Legion's default mapper, or the program's own where it registers "
                                             "one.")
    mapped = explain(dataclasses.replace(result, dsl="Task * CPU;\n"))
    assert mapped.explanation == feedback["explanation"]
    assert mapped.suggestion.startswith("Run the same command without --mapper (Legion's default mapper, or the "
                                        "program's own where it registers one). If the check passes there, the "
                                        "mapper changes the results")
    for text in (feedback["explanation"], feedback["suggestion"], mapped.suggestion):
        assert "--verify" not in text and "exited normally" not in text  # it exited 2, and no option was given
    # the file to read, with the line's number
    said = f"Its standard output, with that line (line {line}), is in {out_dir / 'stdout.txt'}."
    assert feedback["suggestion"].endswith(said) and mapped.suggestion.endswith(said), feedback


def normalized(desc: dict, discovered: bool) -> dict:
    """The parts `--describe` and discovery share, with the differences docs/own-app.md lists removed."""
    tasks = {}
    for t in desc["tasks"]:
        if discovered and t["parent"] is None:
            continue  # discovery also lists the top-level task
        regions = []
        for r in t["regions"]:
            names = r["names"]
            if discovered:  # chains end with the field space's name
                kinds = {n["name"]: n["kind"] for n in desc["region_tree"]}
                names = [n for n in names if kinds.get(n) != "field_space"]
            regions.append((r["index"], tuple(names), r["privilege"], frozenset(r["fields"]), r.get("redop")))
        tasks[t["name"]] = (tuple(t["variants"]), t["launch"], t["inner"], t["leaf"], t["parent"],
                            tuple(t["domain"] or ()), tuple(regions))
    tree = {(n["name"], n["kind"], n["parent"]) for n in desc["region_tree"] if n["kind"] != "field_space"}
    return {"tasks": tasks, "tree": tree}


@pytest.mark.parametrize("bench", ["circuit", "stencil"])
def test_discovered_description_equals_describe(bench):
    found = discover(app_from_command(command(bench)))
    assert found["discovered"] and any(t["parent"] is None for t in found["tasks"])
    assert normalized(found, True) == normalized(describe_app(bench, "ci"), False)


def test_gemm_leaf_gets_the_layout_its_variant_asks_for(tmp_path, capsys):
    """The GEMMs' variants ask for row-major tiles, which Legion's default mapper gives them. Through --app, a layout
    aspect no Layout statement mentions follows the variant too: discovery (whose recording mapper gave F_order)
    and a run aborted in task_4's BLAS call. Discovery records the order the variants fix, so that a statement the
    user writes against it is E223 before the run, and the search keeps it when it searches layouts."""
    from mapperopt.optimizer.space import SearchSpace
    from mapperopt.probe import run_probe_json

    app = app_from_command(command("cannon"))
    desc = discover(app, refresh=True)
    layouts = {(t["name"], r["index"]): r.get("layout") for t in desc["tasks"] for r in t["regions"]}
    assert layouts[("task_4", 2)] == "C_order" and layouts[("taco_validate", 0)] is None
    (tmp_path / "any.dsl").write_text("Task * CPU;\n")
    assert main(["run", "--app", command("cannon"), "--mapper", str(tmp_path / "any.dsl"), "--trace", "--repeats",
                 "1", "--max-repeats", "1", "--out", str(tmp_path / "run")]) == 0
    assert VERIFIED in (tmp_path / "run" / "stdout.txt").read_text()
    trace = [json.loads(line) for line in (tmp_path / "run" / "trace.jsonl").read_text().splitlines()]
    got = {(t["task"], r["layout"]["order"], r["layout"]["dims"]) for t in trace for r in t["regions"]}
    assert ("task_4", "SOA", "C") in got and ("taco_validate", "SOA", "F") in got  # no constraint: F
    assert not any(task == "task_4" and dims == "F" for task, _, dims in got)
    capsys.readouterr()
    assert main(["explain", str(tmp_path / "any.dsl"), "--app", command("cannon")]) == 0  # as the run maps it
    block = capsys.readouterr().out.split("\ntask_4 ")[1].split("\n\n")[0]
    assert block.count("SOA C_order") == 3 and "F_order" not in block
    (tmp_path / "f.dsl").write_text("Task * CPU;\nLayout task_4 * * F_order;\n")
    assert main(["check", str(tmp_path / "f.dsl"), "--app", command("cannon")]) == 1
    assert "error[E223]" in capsys.readouterr().out
    space = SearchSpace(describe_app(app, "ci"), run_probe_json(app, "ci"))
    assert "Layout * * * SOA C_order;" in space.render(space.default_point())


@pytest.mark.parametrize("bench", ["circuit", "stencil"])
def test_tuned_as_unknown_app(bench, tmp_path):
    status = main(["tune", "--app", command(bench), "--verify-pattern", VERIFIED, "--iters", "3", *QUICK,
                   "--runs-dir", str(tmp_path)])
    assert status == 0
    (root,) = (tmp_path / Path(command(bench).split()[0]).name).glob("tune-*")
    settings = json.loads((root / "settings.json").read_text())
    assert settings["search_layouts"] and settings["app_description"]["discovered"]
    records = [json.loads(line) for line in (root / "state.jsonl").read_text().splitlines()]
    assert len(records) == 3 and any(r["status"] == "ok" for r in records)
    for i, r in enumerate(records, 1):
        run = root / f"iter-{i:03d}"
        # mapped by the DSL mapper and verified by the pattern, with the wall time as the metric
        if r["status"] == "ok":
            result = json.loads((run / "result.json").read_text())
            assert VERIFIED in (run / "stdout.txt").read_text()
            assert result["unit"] == "1/s" and result["throughput"] == pytest.approx(1 / result["time_s"])
            assert "LD_PRELOAD=" in (run / "command.txt").read_text()
    assert (root / "best.dsl").is_file()


def test_compared_as_unknown_app(tmp_path, capsys):
    status = main(["compare", "--app", command("stencil"), "--iters", "2", "--runs", "1", "--optimizers",
                   "guided,random", "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1",
                   "--runs-dir", str(tmp_path)])
    assert status == 0
    out = capsys.readouterr().out
    # Stencil's result line is its own check, read but not counted for layouts (it was said that nothing verifies)
    flat = " ".join(out.split())
    assert OWN_CHECK_NOT_FOR_LAYOUTS in flat, out
    # its metric a time: scores as the default mapper's time over the best's, the reference given as a time
    assert "the default mapper's time / its best program's time" in flat and "the default mapper measured" in flat, out
    assert "nothing verifies" not in out, out
    (folder,) = (tmp_path / "stencil").glob("compare-*")
    for name in ("summary.csv", "summary.json", "runs.csv", "table.md", "compare.png", "default.json"):
        assert (folder / name).is_file(), name
    assert not (folder / "expert.json").exists()
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["reference"] == "default" and summary["reference_throughput"] > 0 and summary["unit"] == "1/s"
    assert list(summary["optimizers"]) == ["guided", "random"]
    (group,) = json.loads((folder / "final.json").read_text())["groups"]  # one job: one final group
    reference = group["measured"]["default"]["estimate"]["value"]
    for run in summary["runs"]:  # each score is the run's best over the default mapper of the same final rounds
        assert run["iterations"] == 2 and run["reference_throughput"] == pytest.approx(reference)
        if run["final_throughput"]:
            assert run["normalized"] == pytest.approx(run["final_throughput"] / reference)
        settings = json.loads((folder / run["folder"] / "settings.json").read_text())
        assert set(settings["baselines"]) == {"default"} and settings["search_layouts"] is False
    table = (folder / "table.md").read_text()
    assert "default mapper's" in table
    # No calibration for a user's program, said so; its metric is the wall time: a short one is warned of
    assert "Each evaluation: 1 execution measured, not calibrated" in table and "of at least" not in table
    assert "Measuring the default mapper..." in out and "calibrates" not in out
    assert "time metric" not in out + table  # no metric: the wall time is measured, and the lines say so
    wall = protocol.measured_time(json.loads((folder / "baseline-default" / "result.json").read_text()))
    assert wall is not None and (wall < protocol.MIN_TIME_S) == any(
        title == "Short measurement of the default mapper's first measurement"
        for title, _ in summary["noise_warnings"])


@pytest.mark.parametrize("cmd", ["tune", "compare"])
def test_a_start_file_with_a_layout_is_refused_when_layouts_are_not_searched(cmd, tmp_path, capsys):
    """Nothing verifies the program's results, so every Layout statement is refused: a start file with one is said
    before anything is measured, naming its line (its iteration failed at stage check after the baselines, and tune
    printed an empty line for it)."""
    start = tmp_path / "start.dsl"
    start.write_text("Task * CPU;\n# x fastest\nLayout * * * SOA F_order;\n")
    rest = ["--iters", "1", *QUICK] if cmd == "tune" else ["--iters", "1", "--runs", "1", "--optimizers", "random",
                                                           "--repeats", "1", "--max-repeats", "1"]
    assert main([cmd, "--app", command("stencil"), "--start", str(start), *rest, "--runs-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"{start}:3:1: the start program has a Layout statement" in err, err
    assert "nothing was measured" in err and "--verify-pattern" in err, err
    # Before anything ran, whether it prints its own check is not known: said either way (Stencil does)
    assert ("refused here: only a verification counts for layouts, and this application has none: its exit status, "
            "and its own check where it prints one (MAPPEROPT_RESULT lines, read in every execution), may not "
            "notice a layout") in " ".join(err.split()) and "nothing verifies" not in err, err
    assert not list(tmp_path.glob("stencil/*-*")), "a folder was made"


def test_a_verify_pattern_that_reads_only_the_own_check_line_says_so(tmp_path, capsys, timed_exe):
    """`--verify-pattern '"verified": true'` matches only Stencil's own MAPPEROPT_RESULT line, which the notice says
    does not count for layouts, yet it turned layout search on silently: a note says that layouts are searched on
    the strength of the program's own check. A pattern that matches another line of the output (timed's
    `elapsed:`) says nothing of it. compare's summary.json says that the own check was read."""
    note = (f"Note: the verify pattern /{VERIFIED}/ matches only the program's own MAPPEROPT_RESULT line: layouts are "
            "searched on the strength of the program's own check, which must compare values that a wrong layout "
            "would change.")
    quick = ["--iters", "1", "--baseline", "default", "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1"]
    assert main(["tune", "--app", command("stencil"), "--verify-pattern", VERIFIED, *quick,
                 "--runs-dir", str(tmp_path / "own")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    (root,) = (tmp_path / "own").glob("*/tune-*")
    assert json.loads((root / "settings.json").read_text())["search_layouts"] is True
    assert note in out and "Layouts are not searched" not in out, out
    # compare says it too, from its reference's run
    assert main(["compare", "--app", command("stencil"), "--verify-pattern", VERIFIED, "--optimizers", "random",
                 "--runs", "1", *quick[:2], *quick[4:], "--runs-dir", str(tmp_path / "own")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert note in out and "Layouts are not searched" not in out, out
    # its summary says that the program's own check was read, besides the pattern (it said the pattern only)
    (folder,) = (tmp_path / "own").glob("*/compare-*")
    said = json.loads((folder / "summary.json").read_text())["settings"]["app"]["verify"]
    assert said == (f"exit status 0, output matches /{VERIFIED}/, the program's own check: its MAPPEROPT_RESULT line "
                    'says "verified": true'), said
    assert json.loads((folder / "settings.json").read_text())["app"]["verify"] == f"exit status 0, output matches " \
        f"/{VERIFIED}/"  # what identifies the comparison: unchanged
    assert main(["tune", "--app", f"{timed_exe} -reps 2", "--verify-pattern", "elapsed", *quick,
                 "--runs-dir", str(tmp_path / "other")]) == 0
    out = capsys.readouterr().out
    assert "matches only the program's own" not in out and "Layouts are not searched" not in out, out


def test_tune_app_file_defaults_to_its_size_and_the_default_baseline(tmp_path, capsys):
    """The documented `tune --app mapperopt.yaml`: the size's `cpus:` is used and, with the default `--baseline
    both`, only the default mapper is the reference (a user's program has no expert mapper); without verification
    (no `verify:` here, no --verify-pattern) layouts are left alone (compare --app below: the same for a command)."""
    exe, *args = command("stencil").split()
    (tmp_path / "mapperopt.yaml").write_text(
        f"app: mine\nexecutable: {exe}\nsizes:\n  ci: {{args: {json.dumps(args)}, cpus: 2}}\n")
    status = main(["tune", "--app", str(tmp_path / "mapperopt.yaml"), "--iters", "1", "--repeats", "1",
                   "--max-repeats", "1", "--final-rounds", "1", "--runs-dir", str(tmp_path / "runs")])
    assert status == 0
    (root,) = (tmp_path / "runs" / "mine").glob("tune-*")
    settings = json.loads((root / "settings.json").read_text())
    assert settings["cpus"] == 2 and settings["baseline"] == "default"
    assert "-ll:cpu 2" in (root / "iter-001" / "command.txt").read_text()
    summary = json.loads((root / "summary.json").read_text())
    assert "default" in summary["measured"] and "expert" not in summary["measured"]
    out = capsys.readouterr().out
    # Stencil's result line is its own check, read but not counted for layouts (it was said that nothing verifies)
    assert settings["search_layouts"] is False and OWN_CHECK_NOT_FOR_LAYOUTS in " ".join(out.split()), out
    assert "nothing verifies" not in out, out
    assert "Each mapper: 1 execution measured, not calibrated" in out and "of at least" not in out
    wall = protocol.measured_time(json.loads((root / "baseline-default" / "result.json").read_text()))
    assert wall is not None and (wall < protocol.MIN_TIME_S) == ("Short measurement of the baselines" in out)
    assert "time metric" not in out  # no metric: the wall time is measured, and the lines say so
    assert "Layout" not in (root / "best.dsl").read_text()


def test_a_programs_own_passed_check_is_what_the_table_says_verified(tmp_path, capsys):
    """A program whose result line says "verified": true, run with no --verify-* option: the table says its own check
    passed (it said that only the exit status was checked); the line's other fields are not read (wall time)."""
    assert main(["run", "--app", command("circuit"), "--out", str(tmp_path / "run")]) == 0
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())  # the table's cells wrap at any width
    assert "only the exit status" not in out
    assert ('yes, every execution (exit status 0, the program\'s own check: its MAPPEROPT_RESULT line says "verified": '
            "true)") in out, out
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert all(a["result"]["own_check"] and a["result"]["unit"] == "1/s" for a in result["attempts"])


def test_the_documented_metric_reads_the_result_lines_throughput(tmp_path):
    """docs/own-app.md says the figure of merit ignores a MAPPEROPT_RESULT line's `throughput` and gives the metric
    that reads it: with that metric, each execution's figure is its line's throughput, in the unit given."""
    import re

    doc = " ".join((Path(__file__).resolve().parents[2] / "docs" / "own-app.md").read_text().split())
    regex = re.search(r"`--metric '([^']+)' --unit GB/s --higher-is-better`", doc)[1]
    assert main(["run", "--app", command("circuit"), "--metric", regex, "--unit", "GFLOPS", "--higher-is-better",
                 "--repeats", "2", "--max-repeats", "2", "--out", str(tmp_path / "run")]) == 0
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    for attempt in result["attempts"]:
        stdout = (tmp_path / "run" / attempt["stdout"]).read_text()
        (line,) = [json.loads(t.split(" ", 1)[1]) for t in stdout.splitlines() if t.startswith("MAPPEROPT_RESULT ")]
        assert attempt["result"]["throughput"] == pytest.approx(line["throughput"], rel=1e-9)
        assert attempt["result"]["unit"] == line["unit"] == "GFLOPS"


def test_a_metric_that_is_not_a_time_says_the_measured_time_is_unknown(tmp_path, capsys):
    """A time metric shorter than the protocol's 0.5 s gets `Short measurement`; the same solve measured by a
    throughput (GFLOPS) got no word at all, although it is just as noise-dominated. Now the run says that the
    measured time per execution is unknown with such a metric, and what to check."""
    capsys.readouterr()
    assert main(["run", "--app", command("circuit"), "--metric", r'"throughput": *([0-9.eE+-]+)', "--unit",
                 "GFLOPS", "--higher-is-better", "--once", "--out", str(tmp_path / "run")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("Measured time unknown: the metric, in GFLOPS, is not a time, so whether the part of each execution the "
            "program times reached the protocol's minimum of 0.5 s is not known") in out, out


def test_tunings_core_warning_names_the_command_line_that_gives_the_processors(tmp_path, capsys, monkeypatch):
    """`tune --app 'CMD -ll:cpu 2'` on a machine that gives the run 2 cores: the warning said to change -ll:cpu
    "after `--`", where there was none; it names --app's quoted command line, which gives it."""
    monkeypatch.setenv("COLUMNS", "400")  # one line each
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert main(["tune", "--app", f"{command('stencil')} -ll:cpu 2", "--iters", "1", *QUICK,
                 "--runs-dir", str(tmp_path / "runs")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.count("More processors than cores: ") == 1, out
    assert ("to measure, ask for fewer: lower -ll:cpu in --app's quoted command line, which gives it (or override it "
            "with -ll:cpu after `--`).") in out, out
