"""The task profile covers every execution of the timed loop, including those Legion replays from a trace."""

from __future__ import annotations

import dataclasses
import json
import re
import shlex

from mapperopt.autoguide import explain
from mapperopt.autoguide.explain import task_profile
from mapperopt.benchmarks import run_benchmark

LOOP = {"calculate_new_currents", "distribute_charge", "update_voltages"}


def test_profile_counts_the_replayed_executions_of_circuits_traced_loop(tmp_path):
    # Circuit's main loop runs inside begin_trace/end_trace: after the first loops, Legion replays it without
    # calling the mapper's map_task, which a profile through profiling requests used to miss (one execution per
    # point in all, so that init_piece looked as heavy as the loop's tasks).
    result = run_benchmark("circuit", "Task * CPU;\n", profile=True, min_time_s=0, out_dir=tmp_path)
    assert result.ok, result.reason
    profile = result.profile
    assert profile["schema"] == "mapperopt.profile/1" and profile["iterations"] >= 2
    entries = {e["task"]: e for e in profile["tasks"]}
    for task in LOOP:  # every timed iteration (and the warm-up ones), for each point of the launch
        assert entries[task]["count"] >= entries[task]["points"] * (profile["iterations"] + 1), entries[task]
    assert entries["init_piece"]["count"] == entries["init_piece"]["points"]
    rows = task_profile(result)
    timed = {r["task"] for r in rows if r["timed"]}
    assert timed == LOOP
    assert rows[0]["task"] in LOOP and all(r["timed"] for r in rows[:len(LOOP)])
    assert f"'{rows[0]['task']}'" in explain(result).explanation
    # The measured executions keep their trace (no -mapper-profile); the profiling one comes after them.
    commands = (tmp_path / "command.txt").read_text().split("# profile\n")
    assert "-mapper-profile" not in commands[0] and "-mapper-profile" in commands[1]
    # Profiled, every step is mapped: physical tracing off, or Legion would record the loop again in every step.
    assert "-lg:no_physical_tracing" not in commands[0] and "-lg:no_physical_tracing" in commands[1]
    assert all(a.profile is None for a in result.attempts)


def test_run_profile_shows_the_timed_loop_first(tmp_path):
    from click.testing import CliRunner

    from mapperopt.benchmarks.commands import run

    # --once: one measured execution before the profiling one (the protocol's repeats add nothing to the table)
    out = CliRunner().invoke(run, ["stencil", "--mapper", "expert", "--profile", "--once", "--out", str(tmp_path)])
    assert out.exit_code == 0, out.output
    table = out.output.split("Task profile")[1].split("explanation:")[0]
    lines = [line for line in table.splitlines() if "stencil" in line or "increment" in line or "init" in line]
    assert "yes" in lines[0] and ("stencil" in lines[0] or "increment" in lines[0])
    assert any("init" in line and line.rstrip("│ ").endswith("no") for line in lines)
    # The title counts the iterations the application ran, the untimed ones after the timed loop (-tprune) too, so
    # that the loop's executions are exactly its launch points times that count (20 = 4 tiles x 5, not 4 x 4).
    text = " ".join(out.output.split())
    m = re.search(r"its (\d+) iterations \(-tsteps (\d+): (\d+) warm-up, (\d+) timed, (\d+) untimed after them\)",
                  text)
    assert m and int(m[1]) == int(m[3]) + int(m[4]) + int(m[5]) and int(m[5]) >= 1, text
    profile = json.loads((tmp_path / "result.json").read_text())["profile"]
    for entry in profile["tasks"]:
        if entry["task"] in ("stencil", "increment"):
            assert entry["count"] == entry["points"] * int(m[1]), entry
            assert any(re.match(rf"│ {entry['task']} +│ CPU +│ {entry['count']} ", line) for line in lines), lines


def test_run_profile_says_what_it_measured_and_keeps_task_names_whole(tmp_path):
    """At 80 columns the profile names every task in full, its title says which execution was profiled (the timed
    and warm-up iterations behind "executions"), and a successful run prints no "explanation: N/A"."""
    from click.testing import CliRunner

    from mapperopt.benchmarks.commands import run

    mapper = tmp_path / "cpu.dsl"
    mapper.write_text("Task * CPU;\n")
    out = CliRunner(env={"COLUMNS": "80"}).invoke(
        run, ["circuit", "--mapper", str(mapper), "--profile", "--once", "--out", str(tmp_path / "run")])
    assert out.exit_code == 0, out.output
    text = " ".join(out.output.split())  # the title wraps at 80 columns
    assert text.startswith("Running circuit (building the application and the mapper if needed)...")  # no terminal
    assert "Task profile of one more execution, untraced" in text
    # One sentence: what the execution ran, the set-up and check tasks included (not a dangling "..., the set-up
    # and check tasks").
    assert "mapped and timed: its set-up and check tasks and its 5 iterations (-l 3: 2 warm-up, 3 timed) ┏" in text
    assert "each launch point of an index launch one, every iteration counted" in text
    # The title is a plain line above the table, not rich's title centred over several lines.
    lines = out.output.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("Task profile of one more execution"))
    top = next(i for i, line in enumerate(lines) if line.startswith("┏"))
    assert first < top and not any(line.startswith(" ") for line in lines[first:top]), out.output
    rows = [line for line in out.output.splitlines() if line.startswith("│")]
    assert all(any(f"│ {task} " in line for line in rows) for task in LOOP), out.output
    out = CliRunner().invoke(run, ["circuit", "--mapper", str(mapper), "--no-profile", "--once", "--out",
                                   str(tmp_path / "plain")])
    assert out.exit_code == 0 and "status" in out.output, out.output
    assert "N/A" not in out.output  # AutoGuide has nothing to say about a run without a profile


def test_a_loop_the_runtime_dominates_gets_advice_against_its_overhead_not_for_the_heaviest_task(tmp_path):
    """Stencil at size ci: its tasks run for microseconds, and most of an iteration of the measured (traced) loop is
    usually the runtime's own work. The advice said "try `Layout stencil * * Align==64;`" for a task worth a fraction
    of the loop; it now says where the time goes and what helps against the runtime's overhead. The same profile
    under a loop that its tasks fill gets the heaviest task's advice again. Which case a run is depends on the
    machine's load, so the real run's profile is read under a measured time of each kind."""
    result = run_benchmark("stencil", "expert", profile=True, min_time_s=0, out_dir=tmp_path)
    assert result.ok, result.reason
    # The tasks' time per iteration, from the profile: the loop's tasks ran in every iteration the profile ran.
    p = result.profile
    busy = sum(r["total_s"] for r in task_profile(result) if r["timed"]) / (p["warmup"] + p["timed"] + p["after"])
    iterations = result.attempts[-1].result["iterations"]
    dominated = dataclasses.replace(result, time_s=4 * busy * iterations)  # the tasks fill a quarter
    fb = explain(dominated)
    m = re.search(r"its tasks ran ([\d.e-]+) ms of the ([\d.e-]+) ms that one iteration takes", fb.explanation)
    assert m and float(m[1]) < float(m[2]) / 2, fb.explanation
    assert "the runtime's own work" in fb.explanation, fb.explanation
    assert "fewer, larger tasks" in fb.suggestion and "`" not in fb.suggestion, fb.suggestion
    assert fb.edits == ()
    # Only the remedies that apply to this mapper: it has no InstanceLimit (the trace replays) and keeps every
    # instance in system memory, where its CPU tasks run (all three were listed).
    assert "InstanceLimit" not in fb.suggestion and "where their tasks run" not in fb.suggestion, fb.suggestion
    # An InstanceLimit, which turned the replay off, brings its remedy back.
    command = shlex.join([*shlex.split(result.settings["command"]), "-lg:no_physical_tracing"])
    limited = dataclasses.replace(dominated, dsl=result.dsl + "\nInstanceLimit stencil 4;\n",
                                  settings={**result.settings, "command": command})
    fb = explain(limited)
    assert "replayed" in fb.suggestion and "where their tasks run" not in fb.suggestion, fb.suggestion
    assert fb.edits == ()
    # Instances of a loop task put in zero-copy memory (a machine with GPUs has it) bring theirs back.
    from mapperopt.autoguide.explain import _overhead_remedies

    machine = {"CPU": {"procs": 2, "memories": {"SYSMEM": None, "ZCMEM": None}}}
    zero_copy = dataclasses.replace(result, dsl=result.dsl + "\nRegion stencil * CPU ZCMEM;\n")
    assert _overhead_remedies(zero_copy, task_profile(result), machine) == ["overhead_larger_tasks", "overhead_local"]
    assert _overhead_remedies(result, task_profile(result), machine) == ["overhead_larger_tasks"]
    filled = dataclasses.replace(result, time_s=busy * iterations)
    fb = explain(filled)
    assert "runtime's own work" not in fb.explanation and "'stencil'" in fb.suggestion, fb
