"""A Legion program written the way others write them (tests/app/foreign.cc: its own mapper registered in main, task
names with spaces, data named only through index and field spaces, a tunable, a must-epoch launch), mapped by a DSL
mapper through `mapperopt run --app`: the placement trace agrees with where the program saw its tasks run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from mapperopt.benchmarks import build_app, load_config
from mapperopt.benchmarks.harness import run_benchmark
from mapperopt.benchmarks.userapp import (describe_from_record, discover, discovery_command, legion_command,
                                          load_app_file, shim_env)
from mapperopt.compiler import compile_program
from mapperopt.dsl.parser import parse
from mapperopt.cli import main

MAPPER = """
Task "Initialize Nodes" CPU;
Tunable 11 = 4 int32;
def spread(Task task) { return Machine(CPU)[0, task.ipoint[0] % Machine(CPU).size[1]]; }
def second(Task task) { return Machine(CPU)[0, 1]; }
IndexTaskMap "Initialize Nodes","Update Values" spread;
SingleTaskMap "epoch worker",sum second;
Layout * node_pieces * AOS;
Layout sum node_fields * C_order;
"""


def app_file(tmp_path: Path, exe: Path, keep: bool = False, steps: int = 2) -> Path:
    path = tmp_path / "mapperopt.yaml"
    path.write_text(f"""
app: foreign
executable: {exe}
args: ["-steps", "{steps}"]
sizes:
  ci: {{args: ["-n", "400"], cpus: 2, csize: 128, timeout_s: 60}}
verify: {{pattern: 'checksum [0-9.]+ OK'}}
keep_app_mapper: {str(keep).lower()}
""")
    return path


def observed(stdout: str) -> Counter:
    """(task, point or None, CPU index, memory kind) of every 'RAN' line the program printed."""
    out = Counter()
    for line in stdout.splitlines():
        if line.startswith("RAN "):
            *name, point, cpu, memory = line[4:].split(" ")
            out[(" ".join(name), None if point == "-1" else int(point), int(cpu), memory)] += 1
    return out


def traced(path: Path) -> Counter:
    out = Counter()
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        if rec["task"] == "top_level":
            continue
        memory = rec["regions"][0]["memory"] if rec["regions"] else "NONE"
        out[(rec["task"], rec["point"][0] if rec["point"] else None, rec["proc"]["index"], memory)] += 1
    return out


def test_dsl_mapper_displaces_the_programs_mapper_and_the_trace_agrees(tmp_path, foreign_exe):
    app = load_app_file(app_file(tmp_path, foreign_exe))
    result = run_benchmark(app, MAPPER, trace=True, out_dir=tmp_path / "run")
    assert result.ok, result.reason
    run = Path(result.run_dir)
    stdout, stderr = (run / "stdout.txt").read_text(), (run / "stderr.txt").read_text()
    assert "pieces 4" in stdout  # the DSL answered the tunable (the program's own mapper says 2)
    seen, trace = observed(stdout), traced(run / "trace.jsonl")
    assert seen == trace
    # The DSL placed the points (the program's mapper would put them all on CPU 0), including the epoch tasks,
    # which Legion places itself: the trace has the processor it used.
    assert {(t, p, c) for t, p, c, _ in seen if t == "Initialize Nodes"} == {
        ("Initialize Nodes", p, p % 2) for p in range(4)}
    assert sorted(c for t, _, c, _ in seen.elements() if t == "epoch worker") == [0, 1]
    assert ("sum", None, 1, "SYSMEM") in seen
    layouts = {}
    for line in (run / "trace.jsonl").read_text().splitlines():
        rec = json.loads(line)
        for req in rec["regions"]:
            layouts[(rec["task"], req["index"])] = (req["layout"]["order"], req["layout"]["dims"])
    # Names attached to an index partition and a field space select regions.
    assert layouts[("Update Values", 1)] == ("AOS", "F") and layouts[("sum", 0)] == ("SOA", "C")
    assert "replaces the default mapper with its own mapper ('first_cpu_mapper')" in stderr
    assert "R455" in stderr  # the epoch worker's map statement was overridden by the must-epoch launch


def test_kept_application_mapper_serves_the_tasks_the_dsl_does_not_name(tmp_path, foreign_exe):
    # Compiled without the application's description, so that selectors naming nothing reach the run.
    mapper = compile_program('def spread(Task task) { return Machine(CPU)[0, task.ipoint[0] % 2]; }\n'
                             'IndexTaskMap "Initialize Nodes" spread;\nRegion * nowhere CPU SYSMEM;\n'
                             'Task "no such task" CPU;\nTask "Update Value" CPU;\n', "mapper.dsl")
    app = load_app_file(app_file(tmp_path, foreign_exe, keep=True))
    done = subprocess.run(legion_command(app, "ci", 2, 0), env=shim_env(app, mapper.so_path, tmp_path / "trace.jsonl"),
                          capture_output=True, text=True, timeout=120)
    stdout = done.stdout
    assert done.returncode == 0, done.stderr[-2000:]
    assert "pieces 2" in stdout  # the program's mapper answered its tunable
    assert "hands it the tasks the DSL does not name" in done.stderr
    # Positions are those of the canonical text the mapper was compiled from.
    assert re.search(r"note R453: mapper.dsl:\d+: this Region statement matched nothing in this run: no region "
                     r"requirement has 'nowhere' among its names", done.stderr)
    assert re.search(r"note R453: mapper.dsl:\d+: this Task statement matched nothing in this run: no task named "
                     r"'no such task' was mapped\n", done.stderr)
    # a near miss of a task that was mapped (by either mapper) is named, as check's E202 names it
    assert re.search(r"note R453: mapper.dsl:\d+: this Task statement matched nothing in this run: no task named "
                     r"'Update Value' was mapped; did you mean 'Update Values'\?\n", done.stderr), done.stderr[-3000:]
    seen = observed(stdout)
    assert {c for t, _, c, _ in seen if t == "Initialize Nodes"} == {0, 1}
    assert {c for t, _, c, _ in seen if t == "Update Values"} == {0}  # the program's mapper: all on the first CPU
    # The trace has the application mapper's decisions too, marked as such, and agrees with the placement.
    assert traced(tmp_path / "trace.jsonl") == seen
    marked = {json.loads(line)["task"] for line in (tmp_path / "trace.jsonl").read_text().splitlines()
              if json.loads(line).get("mapper") == "application"}
    assert marked == {"top_level", "Update Values", "epoch worker", "sum"}


def test_discovered_description_is_the_same_whichever_order_the_tasks_were_mapped_in(tmp_path, foreign_exe):
    # The epoch workers need no region, so they are mapped before or after "Update Values", run to run: the record's
    # lines come in that order. The description lists parents first, then by task ID, whatever the order.
    app = load_app_file(app_file(tmp_path, foreign_exe))
    record = tmp_path / "record.jsonl"
    mapper = compile_program("", "discovery.dsl")
    done = subprocess.run(discovery_command(app, "ci"), env=shim_env(app, mapper.so_path, record_path=record,
                                                                     keep=True),
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    desc = describe_from_record("foreign", lines)
    assert describe_from_record("foreign", lines[::-1]) == desc
    assert [t["name"] for t in desc["tasks"]] == ["top_level", "Initialize Nodes", "Update Values", "sum",
                                                  "epoch worker"]


def test_discovery_and_static_check(tmp_path, foreign_exe, capsys):
    path = app_file(tmp_path, foreign_exe)
    desc = discover(load_app_file(path))
    tasks = {t["name"]: t for t in desc["tasks"]}
    assert set(tasks) == {"top_level", "Initialize Nodes", "Update Values", "epoch worker", "sum"}
    init = tasks["Initialize Nodes"]
    assert init["launch"] == "index" and init["domain"] == [2] and init["parent"] == "top_level"
    assert init["regions"][0]["names"] == ["node_pieces", "node space", "node_fields"]
    assert init["regions"][0]["fields"] == ["value", "weight"] and init["regions"][0]["field_sizes"] == [8, 8]
    assert tasks["Update Values"]["regions"][1]["privilege"] == "read_only"
    assert desc["tunables"] == [{"id": 11, "value": 2, "type": "int32"}]
    mapper = tmp_path / "m.dsl"
    mapper.write_text('Task "Initialise Nodes" CPU;\nRegion * "node space" CPU SYSMEM;\n')
    assert main(["check", str(mapper), "--app", str(path)]) == 1
    assert "unknown task 'Initialise Nodes'" in capsys.readouterr().out
    # A field name selects nothing (a statement maps a whole argument): the hint names the argument that holds it.
    mapper.write_text('Region "Initialize Nodes" weight CPU SYSMEM;\n')
    assert main(["check", str(mapper), "--app", str(path)]) == 1
    assert ("hint: 'weight' is a field of argument 0 (node_pieces) of 'Initialize Nodes': a Region statement applies "
            "to a whole region argument, all its fields") in capsys.readouterr().out
    mapper.write_text(MAPPER)
    assert main(["explain", str(mapper), "--app", str(path), "--machine", "1x0x2"]) == 0
    assert re.search(r"\n +0 +node_pieces +SYSMEM +AOS F_order +\w+ +value, weight\n", capsys.readouterr().out)
    assert main(["explain", str(mapper), "--app", str(path), "--machine", "1x0x2", "--json"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    points = {(r["task"], tuple(r["point"] or ()), r["proc"]["index"]) for r in records
              if r["task"] == "Initialize Nodes" and "balance" not in r}
    assert points == {("Initialize Nodes", (0,), 0), ("Initialize Nodes", (1,), 1)}  # discovered domain: 2 pieces


def test_compile_checks_against_the_program_as_check_does(tmp_path, foreign_exe, capsys):
    path = app_file(tmp_path, foreign_exe)
    mapper = tmp_path / "m.dsl"
    mapper.write_text('Task "Initialise Nodes" CPU;\n')
    assert main(["compile", str(mapper)]) == 0  # without a program the names are not checked, and the note says how
    assert "not checked: task and region names (give --bench NAME, or --app" in capsys.readouterr().err
    assert main(["compile", str(mapper), "--app", str(path)]) == 1
    assert "unknown task 'Initialise Nodes'" in capsys.readouterr().err
    mapper.write_text(MAPPER)
    assert main(["compile", str(mapper), "--app", str(path)]) == 0
    out, err = capsys.readouterr()
    assert out.strip().endswith(".so") and Path(out.strip()).is_file() and "not checked" not in err
    # the launch domains checked are those of the program's run at --size, on the machine that run sees
    mapper.write_text(MAPPER.replace("% Machine(CPU).size[1]", "+ 1"))  # point 1 -> CPU 2 of 2 CPUs: out of range
    assert main(["compile", str(mapper), "--app", str(path)]) == 1
    assert "error[" in capsys.readouterr().err


def test_first_check_says_it_is_discovering(tmp_path, foreign_exe, capsys, monkeypatch):
    import mapperopt.benchmarks.userapp as U

    monkeypatch.setattr(U, "discovery_path", lambda app, size: tmp_path / "discovered.json")
    mapper = tmp_path / "m.dsl"
    mapper.write_text(MAPPER)
    path = app_file(tmp_path, foreign_exe)
    assert main(["check", str(mapper), "--app", str(path)]) == 0
    assert "discovering foreign (first run, cached afterwards)" in capsys.readouterr().err
    assert main(["check", str(mapper), "--app", str(path)]) == 0
    assert "discovering" not in capsys.readouterr().err


# a tunable without its value: the description's reader needs it (the check of the cache asked for id and type)
@pytest.mark.parametrize("damage", ["cut", "[]", "tasks 5", "tasks [1, 2]", 'tunables [{"id": 11, "type": "int64"}]'])
def test_a_damaged_discovery_record_is_named_and_discovered_again(tmp_path, foreign_exe, capsys, monkeypatch, damage):
    import mapperopt.benchmarks.userapp as U

    cache = tmp_path / "discovered.json"
    monkeypatch.setattr(U, "discovery_path", lambda app, size: cache)
    mapper = tmp_path / "m.dsl"
    mapper.write_text(MAPPER)
    path = app_file(tmp_path, foreign_exe)
    assert main(["check", str(mapper), "--app", str(path)]) == 0
    whole = cache.read_text()
    if damage.startswith(("tasks", "tunables")):  # valid JSON, of the wrong shape
        key, value = damage.split(" ", 1)
        cache.write_text(json.dumps({**json.loads(whole), key: json.loads(value)}))
    else:
        cache.write_text(whole[: len(whole) // 2] if damage == "cut" else damage)  # a crash, or a hand, damaged it
    capsys.readouterr()
    assert main(["check", str(mapper), "--app", str(path)]) == 0
    err = capsys.readouterr().err
    assert f"note: {cache} is damaged" in err and "discovering foreign" in err, err
    again, first = json.loads(cache.read_text()), json.loads(whole)  # discovered again and cached
    assert again["schema"] == first["schema"] and {"top_level", "sum"} <= {t["name"] for t in again["tasks"]}


def test_a_file_where_the_discovery_cache_keeps_its_folder_is_named_before_discovery(tmp_path, foreign_exe, capsys,
                                                                                       monkeypatch):
    import mapperopt.benchmarks.userapp as U

    folder = tmp_path / "discovered"
    folder.write_text("x\n")
    monkeypatch.setattr(U, "discovery_path", lambda app, size: folder / "foreign.json")
    mapper = tmp_path / "m.dsl"
    mapper.write_text(MAPPER)
    assert main(["check", str(mapper), "--app", str(app_file(tmp_path, foreign_exe))]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"error: {folder} is a file, where mapperopt keeps a folder" in err, err
    assert "hint: remove or rename it, then run the same command again" in err and "discovering" not in err, err


def test_a_folder_where_the_discovery_record_goes_is_named_before_discovery(tmp_path, foreign_exe, capsys,
                                                                            monkeypatch):
    """The record could not be written after discovery ran (for nothing): the folder is named before it runs."""
    import mapperopt.benchmarks.userapp as U

    record = tmp_path / "discovered" / "foreign.json"
    record.mkdir(parents=True)
    monkeypatch.setattr(U, "discovery_path", lambda app, size: record)
    mapper = tmp_path / "m.dsl"
    mapper.write_text(MAPPER)
    assert main(["check", str(mapper), "--app", str(app_file(tmp_path, foreign_exe))]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"error: {record} is a folder, where mapperopt keeps a file" in err, err
    assert "hint: remove or rename it, then run the same command again" in err and "discovering" not in err, err


def test_a_users_program_is_profiled_in_an_execution_of_its_own(tmp_path, foreign_exe):
    app = load_app_file(app_file(tmp_path, foreign_exe))
    result = run_benchmark(app, MAPPER, profile=True, out_dir=tmp_path / "run")
    assert result.ok, result.reason
    assert "Update Values" in {t["task"] for t in result.profile["tasks"]}
    assert all(a.profile is None for a in result.attempts)  # the measured executions keep Legion's tracing
    measured, profiled = (tmp_path / "run" / "command.txt").read_text().split("# profile\n")
    assert "MAPPEROPT_PROFILE=1" not in measured and "MAPPEROPT_PROFILE=1" in profiled
    assert "-lg:no_physical_tracing" not in measured and "-lg:no_physical_tracing" in profiled


def test_a_failed_profiling_execution_is_said_not_left_silent(tmp_path, foreign_exe, capsys, monkeypatch):
    """The profiling execution can fail where the measured ones passed (here a wrapper script that stops when the
    shim is asked to profile); the run printed no profile and advice without one, and never said why."""
    monkeypatch.setenv("COLUMNS", "400")  # one line each
    wrapper = tmp_path / "prog"
    wrapper.write_text(f'#!/bin/sh\n[ -n "$MAPPEROPT_PROFILE" ] && {{ echo "no profiling here" >&2; exit 3; }}\n'
                       f'exec {foreign_exe} "$@"\n')
    wrapper.chmod(0o755)
    app_file(tmp_path, wrapper)
    (tmp_path / "m.dsl").write_text(MAPPER)
    capsys.readouterr()
    assert main(["run", "--app", str(tmp_path / "mapperopt.yaml"), "--mapper", str(tmp_path / "m.dsl"), "--profile",
                 "--once", "--out", str(tmp_path / "run")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "No task profile: the profiling execution failed: " in out and "(stderr-profile.txt in the run folder)" \
        in out, out
    settings = json.loads((tmp_path / "run" / "result.json").read_text())["settings"]
    assert "exit" in settings["profile_failed"] or "no profiling here" in settings["profile_failed"], settings


def test_an_instance_limit_turns_legions_physical_tracing_off(tmp_path, foreign_exe):
    # A limited task must be mapped in every iteration, which a replayed trace skips (tests/benchmarks/
    # test_instance_limit_trace.py: the cost when the trace is recorded again instead).
    app = load_app_file(app_file(tmp_path, foreign_exe))
    result = run_benchmark(app, MAPPER + 'InstanceLimit "Update Values" 2;\n', out_dir=tmp_path / "run")
    assert result.ok, result.reason
    assert result.settings["command"].split()[-1] == "-lg:no_physical_tracing"
    # The program never calls begin_trace: its feedback says nothing of a traced loop mapped again.
    assert "trace" not in json.loads((tmp_path / "run" / "feedback.json").read_text())["explanation"]


def test_the_tracing_note_is_conditional_for_a_program_a_wrapper_script_starts(tmp_path):
    """Stencil traces its timesteps. Started by a wrapper script (the --app is a script that execs the binary), the
    script has no begin_trace symbol to read, and the note that a traced loop is mapped again was left out; it now
    says that mapperopt cannot tell, and what the flag costs if the program traces a loop. The binary itself gets
    the note as it is."""
    from mapperopt.autoguide import explain
    from mapperopt.benchmarks.userapp import app_from_command

    exe = build_app("stencil")
    wrapper = tmp_path / "wrap.sh"
    wrapper.write_text(f'#!/bin/sh\nexec {exe} "$@"\n')
    wrapper.chmod(0o755)
    args = "-nx 68 -ny 68 -ntx 2 -nty 2 -tsteps 20 -tprune 1"
    limited = "Task * CPU;\nInstanceLimit increment 4;\n"
    wrapped = run_benchmark(app_from_command(f"{wrapper} {args}"), limited, out_dir=tmp_path / "wrapped")
    assert wrapped.ok, wrapped.reason
    assert ("Because of `InstanceLimit increment 4;` (line 2 of the mapper), mapperopt ran the program with Legion's "
            f"-lg:no_physical_tracing. mapperopt cannot tell whether the program traces a loop ({wrapper} is not an "
            "executable whose symbols it can read, e.g. a script that starts one): if it does"
            ) in explain(wrapped).explanation
    direct = run_benchmark(app_from_command(f"{exe} {args}"), limited, out_dir=tmp_path / "direct")
    assert direct.ok, direct.reason
    assert ("-lg:no_physical_tracing: a loop the program traces is mapped again in every iteration"
            in explain(direct).explanation)


def test_advice_on_a_users_program_names_a_leaf_task_not_the_top_level_one(tmp_path, foreign_exe, capsys):
    """The top-level task (no region requirements, not a leaf: its time is its children's) takes the most time of a
    profiled execution, but neither the advice, the profile table nor the guided search's ranking may pick it; and
    the table claims no timed loop, which a user's program does not declare."""
    from types import SimpleNamespace

    from mapperopt.autoguide.explain import task_profile
    from mapperopt.optimizer.guided import _profile_weights
    from mapperopt.records import RunResult

    mapper = tmp_path / "m.dsl"
    mapper.write_text(MAPPER)
    path, out_dir = app_file(tmp_path, foreign_exe), tmp_path / "run"
    capsys.readouterr()
    assert main(["run", "--app", str(path), "--mapper", str(mapper), "--profile", "--out", str(out_dir)]) == 0
    printed = capsys.readouterr().out
    result = RunResult.from_json(json.loads((out_dir / "result.json").read_text()))
    feedback = json.loads((out_dir / "feedback.json").read_text())
    profiled = {t["task"] for t in result.profile["tasks"]}
    assert {"top_level", "epoch worker"} <= profiled  # both ran and were timed, and neither has regions
    rows = task_profile(result)
    assert {r["task"] for r in rows} == profiled - {"top_level", "epoch worker"}
    assert all("top_level" not in feedback[k] for k in ("explanation", "suggestion"))
    # first, or after the sentence on how little of the wall time the counted tasks fill, if they fill little
    assert re.search(rf"(^|\. )'{re.escape(rows[0]['task'])}' on CPU takes ", feedback["explanation"]), feedback
    assert "top_level" not in printed and "┃ timed loop" not in printed
    assert "the program's timed loop is unknown" in " ".join(printed.split())
    weights = _profile_weights(SimpleNamespace(result=result.to_json()))
    assert set(weights) == {r["task"] for r in rows}


def test_a_run_without_a_dsl_mapper_names_the_programs_own_mapper(tmp_path, foreign_exe, capsys, monkeypatch):
    """Without --mapper the program maps with its own mapper (discovery found it): the title names it, not "the
    default mapper", and the advice keeps it (--keep-app-mapper) rather than offer a `default.dsl` that maps as
    Legion's default mapper, which displaces it (and crashes a program that needs it)."""
    monkeypatch.setenv("COLUMNS", "400")  # one line each
    path = app_file(tmp_path, foreign_exe)
    assert main(["run", "--app", str(path), "--once", "--out", str(tmp_path / "run")]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "foreign with its own mapper ('first_cpu_mapper') (size ci" in printed, printed
    assert "default.dsl" not in printed and "the default mapper" not in printed, printed
    assert ("This run used the program's own mapper ('first_cpu_mapper'), not Legion's default one" in printed
            and f"`mapperopt run --app {path} --mapper my.dsl --keep-app-mapper --profile`" in printed), printed


def test_a_run_keeping_the_programs_mapper_warns_of_a_mapper_that_names_no_task(tmp_path, foreign_exe, capsys):
    """`run --keep-app-mapper --mapper star.dsl` whose statements name no task measured the program's own mapper under
    the DSL mapper's name: run says W326 as check does (it said nothing)."""
    mapper = tmp_path / "star.dsl"
    mapper.write_text("Task * CPU;\nRegion * * CPU SYSMEM;\n")
    assert main(["run", "--app", str(app_file(tmp_path, foreign_exe)), "--keep-app-mapper", "--mapper", str(mapper),
                 "--once", "--out", str(tmp_path / "run")]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert ("warning[W326]: no statement names a task" in err
            and "'first_cpu_mapper' maps every task; this mapper changes nothing" in err), err


def test_the_default_mapper_advice_names_the_command_that_profiles_a_users_program(tmp_path, foreign_exe):
    from mapperopt.autoguide import explain

    path = app_file(tmp_path, foreign_exe)
    result = run_benchmark(load_app_file(path), "default", out_dir=tmp_path / "run")
    assert result.ok, result.reason
    result.settings.pop("own_mapper")  # as for a program without a mapper of its own
    suggestion = explain(result).suggestion
    assert f"`mapperopt run --app {path} --mapper start.dsl --profile`" in suggestion, suggestion
    assert "to write in start.dsl: `Task * CPU; Region * * CPU SYSMEM; Layout * * * SOA F_order;`" in suggestion
    # the file first: the command, pasted before it is written, finds no start.dsl
    assert suggestion.index("to write in start.dsl") < suggestion.index("--mapper start.dsl --profile"), suggestion


def test_the_default_mapper_advice_under_keep_app_mapper_names_the_programs_tasks(tmp_path, foreign_exe):
    """Under --keep-app-mapper a `*` names no task: the advice's `Task * CPU; ...` changed nothing there."""
    from mapperopt.autoguide import explain
    from mapperopt.descriptions import AppDescription
    from mapperopt.dsl.formatter import selector_name

    path = app_file(tmp_path, foreign_exe, keep=True)
    result = run_benchmark(load_app_file(path), "default", out_dir=tmp_path / "run")
    assert result.ok, result.reason
    assert result.settings["keep_app_mapper"] and result.settings.get("description"), result.settings
    result.settings.pop("own_mapper", None)  # as for a program without a mapper of its own
    suggestion = " ".join(explain(result).suggestion.split())
    names = AppDescription.from_json(json.loads(Path(result.settings["description"]).read_text())).task_names
    assert "Task * " not in suggestion and "--keep-app-mapper" in suggestion, suggestion
    assert all(f"Task {selector_name(n)} CPU;" in suggestion for n in names), (names, suggestion)


def test_the_advice_without_a_profile_claims_no_timed_loop_for_a_users_program(tmp_path, foreign_exe):
    """A DSL mapper's unprofiled run of a user's program: the advice does not speak of the tasks of a timed loop,
    which mapperopt does not know for it, and names the command that profiles it."""
    from mapperopt.autoguide import explain

    path = app_file(tmp_path, foreign_exe)
    result = run_benchmark(load_app_file(path), MAPPER, out_dir=tmp_path / "run")
    assert result.ok, result.reason
    suggestion = explain(result).suggestion
    assert "timed loop" not in suggestion and "2 CPU processors with SYSMEM" in suggestion, suggestion
    assert (f"`mapperopt run --app {path} --mapper {tmp_path / 'run' / 'mapper.dsl'} "
            "--profile`") in suggestion, suggestion


def test_the_advice_names_the_memories_the_runs_legion_flags_create(tmp_path, foreign_exe):
    """`-ll:rsize 64` after `--` gives the run an RDMEM (the run's footer lists it): the advice's machine summary
    names it with its size, beside SYSMEM (it named SYSMEM only)."""
    path = app_file(tmp_path, foreign_exe)
    (tmp_path / "m.dsl").write_text(MAPPER)
    assert main(["run", "--app", str(path), "--mapper", str(tmp_path / "m.dsl"), "--once", "--out",
                 str(tmp_path / "run"), "--", "-ll:rsize", "64"]) == 0
    suggestion = json.loads((tmp_path / "run" / "feedback.json").read_text())["suggestion"]
    assert re.search(r"2 CPU processors with SYSMEM( \(\d+ MiB\))?, RDMEM \(64 MiB\)\.", suggestion), suggestion


def test_a_verify_pattern_typo_points_at_the_file_and_the_output_not_at_a_mapper(tmp_path, foreign_exe, capsys):
    path = app_file(tmp_path, foreign_exe)
    path.write_text(path.read_text().replace("checksum [0-9.]+ OK", "checksum [0-9.]+ KO"))
    mapper = tmp_path / "m.dsl"
    mapper.write_text(MAPPER)
    for args, blamed in (([], False), (["--mapper", str(mapper)], True)):
        out_dir = tmp_path / f"run{len(args)}"
        capsys.readouterr()
        assert main(["run", "--app", str(path), "--out", str(out_dir), *args]) == 1
        printed = " ".join(capsys.readouterr().out.split())
        feedback = json.loads((out_dir / "feedback.json").read_text())
        assert feedback["stage"] == "verify" and feedback["category"] == "verification"
        assert f"the verification that {path} gives" in feedback["explanation"]
        assert "no rule" not in feedback["explanation"]  # nor an excerpt "above" that the run does not show
        assert str(out_dir / "stdout.txt") in feedback["suggestion"] and str(path) in feedback["suggestion"]
        assert ("a statement of this mapper is the cause" in feedback["suggestion"]) == blamed
        assert ("No DSL mapper ran" in feedback["suggestion"]) == (not blamed)
        assert f"suggestion: {feedback['suggestion'][:30]}" in printed  # the run prints it


def test_the_run_names_its_trace_files(tmp_path, foreign_exe, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # paths unbroken by the table
    mapper = tmp_path / "m.dsl"
    mapper.write_text(MAPPER)
    path, out_dir = app_file(tmp_path, foreign_exe), tmp_path / "run"
    capsys.readouterr()
    assert main(["run", "--app", str(path), "--mapper", str(mapper), "--trace", "--repeats", "2", "--max-repeats", "2",
                 "--no-profile", "--out", str(out_dir)]) == 0
    out = capsys.readouterr().out
    assert f"{out_dir / 'trace-1.jsonl'} ... trace-2.jsonl (one per execution)" in out
    # foreign never calls begin_trace (its executable has no such symbol): no word of replayed iterations
    assert "iterations Legion replays from a loop the program traces" not in out, out
    assert sorted(p.name for p in out_dir.glob("trace*")) == ["trace-1.jsonl", "trace-2.jsonl"]
    assert main(["run", "--help"]) == 0
    assert "trace-1.jsonl ... trace-N.jsonl" in " ".join(capsys.readouterr().out.split())
    # one execution: its trace is trace.jsonl, and command.txt, to run again by hand, names that file
    assert main(["run", "--app", str(path), "--mapper", str(mapper), "--trace", "--once", "--no-profile",
                 "--out", str(tmp_path / "once")]) == 0
    assert [p.name for p in (tmp_path / "once").glob("trace*")] == ["trace.jsonl"]
    command = (tmp_path / "once" / "command.txt").read_text()
    assert "trace.jsonl" in command and "trace-1.jsonl" not in command, command


def test_a_crash_names_its_signal_and_a_command_is_quoted_to_paste_back(tmp_path, foreign_exe, capsys, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the failed discovery's kept folder: under the test's
    crash = tmp_path / "crash"
    crash.write_text("#!/bin/sh\nkill -FPE $$\n")  # dies of SIGFPE, as a division by zero would
    crash.chmod(0o755)
    mapper = tmp_path / "m.dsl"
    mapper.write_text(MAPPER)
    assert main(["check", str(mapper), "--app", str(crash)]) == 1
    assert "your program was killed by signal 8 (SIGFPE) in its first run" in capsys.readouterr().err
    mapper.write_text("Task * CPU;\n")
    args = load_config("stencil").size("ci").args
    command = " ".join([str(build_app("stencil")), *(f"{k} {v}" for k, v in args.items())])
    assert main(["check", str(mapper), "--app", command]) == 0
    assert f"as `mapperopt run --app '{command}' --size ci` sees it" in capsys.readouterr().err


def test_cpu_count_after_dashdash_is_the_same_in_the_run_and_the_probe(tmp_path, foreign_exe):
    """`mapperopt run --app ... -- -ll:cpu 3`: the run gets 3 CPUs, not the size's 2, as the machine its mapper is
    checked against (the probe) does."""
    from mapperopt.probe import run_probe_json

    app = load_app_file(app_file(tmp_path, foreign_exe))
    assert run_probe_json(app, "ci", ("-ll:cpu", "3"))["processors"]["CPU"] == [3]
    mapper = compile_program('Tunable 11 = 3 int32;\n'
                             'def spread(Task task) '
                             '{ return Machine(CPU)[0, task.ipoint[0] % Machine(CPU).size[1]]; }\n'
                             'IndexTaskMap "Initialize Nodes" spread;\n', "mapper.dsl")
    done = subprocess.run(legion_command(app, "ci", 2, 0, ["-ll:cpu", "3"]), env=shim_env(app, mapper.so_path),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert {c for t, _, c, _ in observed(done.stdout) if t == "Initialize Nodes"} == {0, 1, 2}


def test_run_records_and_prints_the_cpu_count_after_dashdash(tmp_path, foreign_exe, capsys):
    """`run --app FILE -- -ll:cpu 3`: the table's title and result.json say 3 CPUs, as the run got (not the
    size's 2)."""
    path = app_file(tmp_path, foreign_exe)
    assert main(["run", "--app", str(path), "--once", "--out", str(tmp_path / "r"), "--", "-ll:cpu", "3"]) == 0
    assert "(size ci, 3 CPU, 0 GPU)" in capsys.readouterr().out
    result = json.loads((tmp_path / "r" / "result.json").read_text())
    assert result["settings"]["cpus"] == 3 and "-ll:cpu 3" in result["settings"]["command"]


def test_tune_and_compare_search_the_machine_of_the_runs_flags_after_dashdash(tmp_path, foreign_exe, capsys,
                                                                              monkeypatch):
    """`tune --app FILE -- -ll:cpu 3` (and compare): every run gets 3 CPUs, and so do the machine the search space is
    built from and the one the settings record (they were probed with the size's 2), and the counts tune prints and
    records; on 2 cores, tune says once that the processors share them, as run does (it said nothing)."""
    from mapperopt.optimizer.space import SearchSpace

    monkeypatch.setenv("COLUMNS", "400")  # one line each
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    path = app_file(tmp_path, foreign_exe)
    quick = ["--repeats", "1", "--max-repeats", "1", "--final-rounds", "1"]
    assert main(["tune", "--app", str(path), "--iters", "1", "--baseline", "none", *quick,
                 "--runs-dir", str(tmp_path / "t"), "--", "-ll:cpu", "3"]) == 0
    out = capsys.readouterr().out
    assert "(size ci, 3 CPU, 0 GPU)" in out
    assert out.count("More processors than cores: 3 CPU and ") == 1, out
    (root,) = (tmp_path / "t" / "foreign").glob("tune-*")
    settings = json.loads((root / "settings.json").read_text())
    assert settings["machine"]["processors"]["CPU"] == [3] and settings["cpus"] == 3
    assert "-ll:cpu 3" in (root / "iter-001" / "command.txt").read_text()
    assert SearchSpace(settings["app_description"], settings["machine"])._per_node("CPU") == 3
    assert main(["compare", "--app", str(path), "--iters", "1", "--runs", "1", "--optimizers", "random", *quick,
                 "--runs-dir", str(tmp_path / "c"), "--", "-ll:cpu", "3"]) == 0
    (folder,) = (tmp_path / "c" / "foreign").glob("compare-*")
    settings = json.loads((folder / "settings.json").read_text())
    assert settings["machine"]["processors"]["CPU"] == [3] and settings["cpus"] == 3


def test_discovery_runs_the_program_with_the_runs_flags_after_dashdash(tmp_path, foreign_exe, capsys):
    """`mapperopt run --app FILE -- -steps 2` launches "Update Values", which the file's `-steps 0` does not: the
    description the mapper is checked against (and tune's search space is built from) is discovered with the same
    flags as the run, and cached apart from the one without them."""
    from mapperopt.benchmarks import describe_app

    path = app_file(tmp_path, foreign_exe, steps=0)
    app = load_app_file(path)
    assert "Update Values" not in {t["name"] for t in describe_app(app, "ci")["tasks"]}
    assert "Update Values" in {t["name"] for t in describe_app(app, "ci", extra_args=("-steps", "2"))["tasks"]}
    assert "Update Values" not in {t["name"] for t in discover(app)["tasks"]}  # the two are cached apart
    mapper = tmp_path / "m.dsl"
    mapper.write_text(MAPPER)
    assert main(["run", "--app", str(path), "--mapper", str(mapper), "--once", "--no-profile",
                 "--out", str(tmp_path / "run"),
                 "--", "-steps", "2"]) == 0, capsys.readouterr()
    ran = observed((tmp_path / "run" / "stdout.txt").read_text())
    assert sum(n for (task, *_), n in ran.items() if task == "Update Values") == 8  # 4 pieces (Tunable 11) x 2


def test_w315_keeps_the_flags_given_after_dashdash(tmp_path, foreign_exe, capsys):
    """`check ... -- -ll:cpu 2`: W315 quoted discovery's command and wrote its hint without the flags given after
    `--`, so a user pasting the hint lost them."""
    path = app_file(tmp_path, foreign_exe, steps=0)
    mapper = tmp_path / "m.dsl"
    mapper.write_text(MAPPER)
    assert main(["check", str(mapper), "--app", str(path), "--", "-ll:cpu", "2"]) == 0
    out = capsys.readouterr().out
    assert "task 'Update Values' did not run in discovery (`foreign -steps 0 -n 400 -ll:cpu 2`)" in out, out
    assert (f"  hint: if your runs launch it, check with their flags after `--`: `mapperopt check {mapper} "
            f"--app {path} -- -ll:cpu 2 FLAGS`\n") in out, out


def test_a_run_stopped_by_a_diagnostic_without_position_is_told_to_add_a_statement(tmp_path, foreign_exe, capsys,
                                                                                    monkeypatch):
    """E224 (a tunable the mapper does not answer) is about the whole file and has no position: the run's advice
    said "Fix the statement at the position shown"; it says the fix is a statement to add."""
    monkeypatch.chdir(tmp_path)
    mapper = tmp_path / "m.dsl"
    mapper.write_text('Task "Initialize Nodes" CPU;\n')  # tunable 11 unanswered
    program = f"{foreign_exe} -n 400 -ll:cpu 2"
    assert main(["run", "--app", program, "--mapper", str(mapper), "--once", "--out", str(tmp_path / "run"),
                 "--", "-steps", "0"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "error[E224]" in out and "hint: add `Tunable 11 = 2 int32;`" in out, out
    suggestion = json.loads((tmp_path / "run" / "feedback.json").read_text())["suggestion"]
    assert "at the position shown" not in suggestion and "add the statement" in suggestion, suggestion


@pytest.mark.parametrize("command", ["tune", "compare"])
def test_a_start_files_w315_hint_gives_the_program_as_the_run_was_given_it(tmp_path, foreign_exe, capsys,
                                                                           monkeypatch, command):
    """`tune --app 'CMD ARGS' --start FILE -- FLAGS` checks its start file before it measures: W315's hint gave the
    program as `--app ...` (a placeholder); it names the quoted command line and the flags after `--`, as `check`
    does, so that the command it prints checks the file for these runs."""
    monkeypatch.chdir(tmp_path)  # the runs/ folder
    start = tmp_path / "start.dsl"
    start.write_text('Task "Initialize Nodes" CPU;\nTask nosuch CPU;\n')  # W315, and E224: tunable 11 unanswered
    program = f"{foreign_exe} -n 400 -ll:cpu 2"
    assert main([command, "--app", program, "--start", str(start), "--iters", "1", "--", "-steps", "0"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "warning[W315]" in err and "error[E224]" in err, err
    assert (f"hint: if your runs launch it, check with their flags after `--`: `mapperopt check {start} --app "
            f"'{program}' -- -steps 0 FLAGS`") in err, err
    # the summary's hint: the same program and flags (the file before `--`, which ends mapperopt's arguments)
    assert f"`mapperopt check {start} --app '{program}' -- -steps 0` checks it alone" in err, err


def test_check_explain_and_compile_take_the_runs_flags_after_dashdash(tmp_path, foreign_exe, capsys):
    """`check --app FILE -- -steps 2` checks the mapper for the run `run --app FILE -- -steps 2` makes (the same
    discovery), in which "Update Values" runs; without the flags (the file's `-steps 0`) it does not run, which is
    a warning naming the command line discovery ran, not an error: the mapper is valid for the program."""
    path = app_file(tmp_path, foreign_exe, steps=0)
    mapper = tmp_path / "m.dsl"
    mapper.write_text(MAPPER)
    assert main(["check", str(mapper), "--app", str(path), "--machine", "1x0x2"]) == 0
    out = capsys.readouterr().out
    # The program's own arguments name the run; Legion's resource flags (the machine, printed apart) would bury them.
    assert (f"{mapper}:6:33: warning[W315]: task 'Update Values' did not run in discovery (`foreign -steps 0 -n 400`): "
            "this statement applies only to runs that launch it\n") in out, out
    assert (f"  hint: if your runs launch it, check with their flags after `--`: `mapperopt check {mapper} "
            f"--app {path} "
            "-- FLAGS`\n  note: tasks that ran: top_level, Initialize Nodes, sum, epoch worker\n") in out, out
    assert main(["check", str(mapper), "--app", str(path), "--machine", "1x0x2", "--", "-steps", "2"]) == 0
    out, err = capsys.readouterr()
    assert "W315" not in out
    # Which launch domains were checked, as with --bench: those of the run these flags make.
    assert f"launch domains: those of `mapperopt run --app {path} --size ci -- -steps 2`" in err
    assert main(["explain", str(mapper), "--app", str(path), "--machine", "1x0x2", "--", "-steps", "2"]) == 0
    assert "Update Values (index launch over (2,))" in capsys.readouterr().out
    assert main(["compile", str(mapper), "--app", str(path), "--", "-steps", "2"]) == 0
    out, err = capsys.readouterr()
    assert Path(out.strip()).is_file() and "W315" not in err
    assert main(["compile", str(mapper), "--app", str(path)]) == 0  # recorded apart from the run with `-steps 2`
    assert "warning[W315]" in capsys.readouterr().err


def test_check_and_explain_find_that_the_discovered_top_level_task_has_no_parent(tmp_path, foreign_exe, capsys):
    """Discovery lists the top-level task (parent null); a function reading task.parent for it fails at run time
    (R406), so check reports it and explain shows that error, not a placement, for it."""
    path = app_file(tmp_path, foreign_exe)
    mapper = tmp_path / "near.dsl"
    mapper.write_text("m = Machine(CPU);\ndef near(Task task) { return m[*task.parent.processor(m)]; }\n"
                      "SingleTaskMap * near;\n")
    assert main(["check", str(mapper), "--app", str(path), "--machine", "1x0x2"]) == 1
    out = capsys.readouterr()
    assert "error[E206]: task 'top_level' has no parent (it is the top-level task)" in out.out
    assert main(["explain", str(mapper), "--app", str(path), "--machine", "1x0x2"]) == 1
    out = capsys.readouterr()
    assert "task 'top_level' has no parent" in out.err
    # the table shows the failing task with the run's error, not a placement
    section = out.out.split("top_level (top-level task)\n", 1)[1].split("\n\n", 1)[0]
    assert "error R406: task 'top_level' has no parent" in section and "processor: CPU[" not in section, section


def test_check_reports_the_tunables_the_program_reads_with_another_type_or_never_asks_for(tmp_path, foreign_exe,
                                                                                            capsys):
    """Discovery saw the program read tunable 11 as an int: answering it as int64 (the default type) aborts the run
    (Legion's "Future size mismatch"), leaving it unanswered kills it (R456) unless the program keeps its own
    mapper; a Tunable the program never asks for is a warning."""
    path = app_file(tmp_path, foreign_exe)
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Task * CPU;\nTunable 11 = 2;\nTunable 12 = 1 int32;\n")
    assert main(["check", str(mapper), "--app", str(path), "--machine", "1x0x2"]) == 1
    out = capsys.readouterr().out
    assert (f"{mapper}:2:1: error[E224]: tunable 11 is answered as int64 (8 bytes), but the application reads it as "
            "int32 (4 bytes)") in out
    assert (f"{mapper}:3:1: warning[W313]: foreign did not ask for tunable 12 in discovery (`foreign -steps 2 -n 400`)"
            "\n") in out, out
    mapper.write_text("Task * CPU;\n")
    assert main(["check", str(mapper), "--app", str(path), "--machine", "1x0x2"]) == 1
    assert (f"{mapper}: error[E224]: the application asks for tunable 11 (read as int32), which this mapper does not "
            "answer: the run aborts (R456)\n  hint: add `Tunable 11 = ") in capsys.readouterr().out
    assert main(["check", str(mapper), "--app", str(app_file(tmp_path, foreign_exe, keep=True)),
                 "--machine", "1x0x2"]) == 0


def _suggested_statements(text: str) -> list[str]:
    """The DSL statements a suggestion quotes (between backticks), those that are no command line."""
    return [s for s in re.findall(r"`([^`]*;)`", text) if not s.startswith("mapperopt ")]


def test_advice_writes_task_names_that_are_not_identifiers_as_strings(tmp_path, foreign_exe):
    """With its launches spread over both CPUs and one memory, the advice quotes Layout and CollectMemory statements
    for the heaviest task, 'Update Values': pasted into the mapper they must parse (a name with a space is a string
    in the DSL)."""
    from mapperopt.autoguide import explain
    from mapperopt.autoguide.explain import task_profile
    from mapperopt.dsl import parse

    path = app_file(tmp_path, foreign_exe)
    mapper = ('Task * CPU;\nRegion * * CPU SYSMEM;\nTunable 11 = 4 int32;\n'
              'def spread(Task task) { return Machine(CPU)[0, task.ipoint[0] % Machine(CPU).size[1]]; }\n'
              'IndexTaskMap "Initialize Nodes","Update Values" spread;\n')
    result = run_benchmark(load_app_file(path), mapper, profile=True, out_dir=tmp_path / "run")
    assert result.ok, result.reason
    assert " " in task_profile(result)[0]["task"], task_profile(result)
    statements = _suggested_statements(explain(result).suggestion)
    assert statements, explain(result).explanation
    for statement in statements:
        parse(statement, "<suggestion>")


def test_advice_tells_a_map_statement_that_uses_one_of_several_processors(tmp_path, foreign_exe):
    """A mapper that puts every point of the index launches on CPU 0 of two: the advice says so (not that the
    statement already places the task over both) and proposes a placement, and its run command names the mapper
    the run used, not a made-up file."""
    from mapperopt.autoguide import explain

    mapper = tmp_path / "one.dsl"
    mapper.write_text('Task * CPU;\nRegion * * CPU SYSMEM;\nTunable 11 = 4 int32;\n'
                      'def first(Task task) { return Machine(CPU)[0, 0]; }\n'
                      'IndexTaskMap "Initialize Nodes","Update Values" first;\n')
    path = app_file(tmp_path, foreign_exe)
    result = run_benchmark(load_app_file(path), mapper, profile=True, out_dir=tmp_path / "run")
    assert result.ok, result.reason
    suggestion = explain(result).suggestion
    assert "already places" not in suggestion, suggestion
    # after the sentence on how little of the wall time the counted tasks fill, if they fill little
    assert re.search(r"(^|\. )The mapper's IndexTaskMap statement at line 5 puts every point of '(Initialize Nodes|"
                     r"Update Values)' on CPU 0 \(1 of 2 CPUs used\)\.", suggestion), suggestion
    assert "places its points block-wise or cyclically over the 2 CPU processors" in suggestion, suggestion
    unprofiled = run_benchmark(load_app_file(path), mapper, out_dir=tmp_path / "plain")
    assert f"--mapper {mapper} --profile`" in explain(unprofiled).suggestion, explain(unprofiled).suggestion


def test_a_statement_that_matched_nothing_is_said_in_runs_output_with_the_name_it_is_a_prefix_of(tmp_path, foreign_exe,
                                                                                                 capsys):
    """`epoch` for the task 'epoch worker' (too short for a close match): `run` prints the mapper's note R453 (it was
    only in stderr-N.txt) with `did you mean "epoch worker"?`, and check's W315 says the same."""
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Task * CPU;\nTunable 11 = 4 int32;\nTask epoch CPU;\nTask sum CPU;\n")
    path = app_file(tmp_path, foreign_exe)
    capsys.readouterr()
    main(["check", str(mapper), "--app", str(path)])
    said = " ".join("".join(capsys.readouterr()).split())
    assert "warning[W315]: task 'epoch' did not run in discovery" in said and 'did you mean "epoch worker"?' in said, \
        said
    assert main(["run", "--app", str(path), "--mapper", str(mapper), "--once", "--out", str(tmp_path / "run")]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert (f"note R453: {mapper}:3: this Task statement matched nothing in this run: no task named 'epoch' was "
            'mapped; did you mean "epoch worker"?') in printed, printed


def test_tune_does_not_call_the_programs_own_mapper_the_default_mapping(foreign_exe, tmp_path, capsys, monkeypatch):
    """The `default` reference of a program with its own mapper runs that mapper, not Legion's default one: the
    start program (Legion's default mapper in the DSL, --start default) is not "the same mapping" as it, and the
    summary says which mapper the reference ran. It said "the same mapping (the start program is Legion's default
    mapper written in the DSL)"."""
    from mapperopt.optimizer import store

    plotted, plot = [], store.plot_progress  # the reference lines of progress.png, by their legend's name
    monkeypatch.setattr(store, "plot_progress", lambda *a, **kw: plotted.append(kw["baselines"]) or plot(*a, **kw))
    assert main(["tune", "--app", str(app_file(tmp_path, foreign_exe)), "--iters", "1", "--baseline", "default",
                 "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1",
                 "--runs-dir", str(tmp_path / "runs")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert plotted and all(list(b) == ["the program's own mapper"] for b in plotted), plotted
    assert "the same mapping" not in out, out
    assert ("The start program (--start default) is Legion's default mapper written in the DSL; the reference ran "
            "the program's own mapper ('first_cpu_mapper') in its place.") in out, out
    # every text that names the `default` reference names the mapper it ran (they said "the default mapper",
    # "default 0.3 s", "vs default")
    assert "Baselines: the program's own mapper " in out and "Best (iter-1) vs the program's own mapper: " in out, out
    assert re.search(r"Verdict: .*x the program's own mapper's throughput \((\d+ % (faster|slower), )?",
                     out) and "x the default mapper" not in out, out
    assert "default measured by" not in out and not re.search(r"default [0-9.]+ s", out), out
    (root,) = (tmp_path / "runs" / "foreign").glob("tune-*")
    feedback = (root / "iter-001" / "feedback.txt").read_text()
    assert "that of the program's own mapper as measured before tuning;" in feedback, feedback
    assert "default mapper" not in feedback, feedback
    # what the start and the best map otherwise than Legion's default mapper, under keys that say so: not under
    # `best_vs_default`, the key of the reference, which ran the program's own mapper
    summary = json.loads((root / "summary.json").read_text())
    assert summary["own_mapper"] == "first_cpu_mapper", summary
    assert "best_vs_default" not in summary and "start_vs_default" not in summary, summary
    assert summary["best_vs_legion_default"] == summary["start_vs_legion_default"] == [], summary


def test_a_failing_verification_under_the_programs_own_mapper_is_said_of_that_mapper(foreign_exe, tmp_path, capsys):
    """A verification that fails whatever the mapping: the `default` reference, which ran the program's own mapper,
    failed it too. The error and the iterations' feedback say so of that mapper (they said "Legion's default
    mapper")."""
    path = app_file(tmp_path, foreign_exe)
    path.write_text(path.read_text().replace("checksum [0-9.]+ OK", "checksum NEVER"))
    assert main(["tune", "--app", str(path), "--iters", "1", "--baseline", "default", "--repeats", "1",
                 "--max-repeats", "1", "--final-rounds", "1", "--runs-dir", str(tmp_path / "runs")]) == 1
    said = " ".join(capsys.readouterr().err.split())
    assert ("no iteration produced a working mapper, and the program's own mapper failed at stage verify too" in said
            and "runs it under the program's own mapper" in said), said
    # the command to copy, with the tune's program and options (it said "`mapperopt run` with the same program")
    assert f"fix that first: `mapperopt run --app {path}` runs it under" in said, said
    (root,) = (tmp_path / "runs" / "foreign").glob("tune-*")
    feedback = " ".join((root / "iter-001" / "feedback.txt").read_text().split())
    assert ("The program's own mapper ('first_cpu_mapper'), measured as the baseline with the same program and "
            "settings, failed this verification too") in feedback and "Legion's default" not in feedback, feedback


def test_a_dsl_mappers_failed_verification_says_that_without_mapper_the_programs_own_maps(foreign_exe, tmp_path,
                                                                                           capsys):
    """After a DSL mapper's run that fails verification, AutoGuide advises running without --mapper to tell the
    mapper from the program: for a program with its own mapper that runs that mapper (it said "Legion's default
    mapper")."""
    path = app_file(tmp_path, foreign_exe)
    path.write_text(path.read_text().replace("checksum [0-9.]+ OK", "checksum NEVER"))
    (tmp_path / "m.dsl").write_text("Task * CPU;\nTunable 11 = 2 int32;\n")
    assert main(["run", "--app", str(path), "--mapper", str(tmp_path / "m.dsl"), "--once",
                 "--out", str(tmp_path / "run")]) == 1
    feedback = " ".join(json.loads((tmp_path / "run" / "feedback.json").read_text())["suggestion"].split())
    assert ("run without --mapper (the program's own mapper, 'first_cpu_mapper'): if that passes, a statement of this "
            "mapper is the cause") in feedback and "Legion's default" not in feedback, feedback


def _kept_tune(tmp_path, exe, start_text: str, *options: str) -> tuple[Path, Path, Path]:
    """(the app file, the start file, the tune folder) of a real tune of `exe` that keeps the program's own mapper,
    from the start program `start_text`, one execution per measurement, with `options` (--iters, --baseline)."""
    path = app_file(tmp_path, exe, keep=True)
    start = tmp_path / "partial.dsl"
    start.write_text(start_text)
    assert main(["tune", "--app", str(path), "--start", str(start), *options, "--repeats", "1", "--max-repeats", "1",
                 "--final-rounds", "1", "--runs-dir", str(tmp_path / "runs")]) == 0
    (root,) = (tmp_path / "runs" / "foreign").glob("tune-*")
    return path, start, root


def test_a_tune_keeping_the_programs_mapper_tunes_only_the_tasks_its_start_names(foreign_exe, tmp_path, capsys):
    """With the program's own mapper kept and a start file that names one task, tune says which tasks stay with
    that mapper, and its later candidates name that task alone: a real run of iteration 2's mapper has the program's
    mapper map every other task. They named every task but the top-level one, taking the others from it."""
    path, start, root = _kept_tune(
        tmp_path, foreign_exe, 'Task "Update Values" CPU;\nRegion "Update Values" * CPU SYSMEM;\n',
        "--iters", "2", "--baseline", "none")
    out = " ".join(capsys.readouterr().out.split())
    assert ("Note: the program's own mapper ('first_cpu_mapper') is kept (--keep-app-mapper) for top_level, "
            "Initialize Nodes, sum, epoch worker, which no statement names") in out, out
    assert f"{start} and every program the search writes map Update Values." in out, out
    second = root / "iter-002" / "mapper.dsl"
    assert parse(second.read_text()).named_tasks() == {"Update Values"}, second.read_text()
    assert main(["run", "--app", str(path), "--mapper", str(second), "--once", "--trace", "--out",
                 str(tmp_path / "run")]) == 0
    records = [json.loads(line) for line in (tmp_path / "run" / "trace.jsonl").read_text().splitlines()]
    by = {(r["task"], r.get("mapper")) for r in records}
    assert {t for t, m in by if m != "application"} == {"Update Values"}, by
    assert {t for t, m in by if m == "application"} >= {"Initialize Nodes", "sum"}, by


def test_a_scoped_tune_keeping_the_programs_mapper_compares_only_its_tasks_with_legions_default(foreign_exe, tmp_path):
    """With the program's own mapper kept and a start that names one task, summary.json's `best_vs_legion_default`
    lists only what the best maps for that task: the others are that mapper's, which the best decides nothing for.
    It listed a difference for every task the program's mapper keeps."""
    # `*` names no task: the AOS layout is Update Values' alone, though the evaluator gives it every task
    _, _, root = _kept_tune(tmp_path, foreign_exe, 'Task "Update Values" CPU;\nLayout * * * AOS;\n',
                            "--iters", "1", "--baseline", "default")
    summary = json.loads((root / "summary.json").read_text())
    assert [line.split(":")[0] for line in summary["best_vs_legion_default"]] == ["Update Values"], summary
    assert "AOS F_order (Legion's default mapper: SOA F_order)" in summary["best_vs_legion_default"][0], summary


def test_check_names_the_tasks_a_kept_programs_mapper_maps(foreign_exe, tmp_path, capsys):
    """`check` of a mapper that names some tasks, with the program's own mapper kept (the application file's
    keep_app_mapper), names the tasks that stay with that mapper, as explain marks them. It said nothing of it."""
    mapper = tmp_path / "partial.dsl"
    mapper.write_text('Task "Update Values" CPU;\n')
    assert main(["check", str(mapper), "--app", str(app_file(tmp_path, foreign_exe, keep=True))]) == 0
    captured = capsys.readouterr()
    said = " ".join((captured.out + captured.err).split())
    assert ("note: the program's own mapper ('first_cpu_mapper') is kept (--keep-app-mapper) for top_level, "
            "Initialize Nodes, sum, epoch worker, which no statement names") in said, said
    assert "this mapper maps Update Values" in said, said


def test_tune_keeping_the_programs_mapper_says_its_best_needs_keep_app_mapper(foreign_exe, tmp_path, capsys):
    """best.dsl of `tune --keep-app-mapper` was measured with the program's mapper mapping the tasks it does not
    name: the final lines and a comment in best.dsl say to use it with --keep-app-mapper (without it, it maps every
    task, and a program that needs its own mapper fails)."""
    assert main(["tune", "--app", str(app_file(tmp_path, foreign_exe)), "--keep-app-mapper", "--iters", "1",
                 "--baseline", "none", "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1",
                 "--runs-dir", str(tmp_path / "runs")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    (root,) = (tmp_path / "runs" / "foreign").glob("tune-*")
    best = (root / "best.dsl").read_text()
    said = ("Tuned with --keep-app-mapper: use it with --keep-app-mapper (MAPPEROPT_KEEP_APP_MAPPER=1 by hand); "
            "without it, it maps every task in place of the program's own mapper.")
    assert best.startswith(f"# {said}\n"), best
    assert f"{root / 'best.dsl'} was tuned with --keep-app-mapper: use it with --keep-app-mapper" in out, out


def test_a_tune_keeping_the_programs_mapper_proposes_mappers_that_map_its_tasks(foreign_exe, tmp_path, capsys):
    """With the program's own mapper kept, a `*` names no task: the search's programs name the tasks they decide
    for, so that the runs' traces show every task but the top-level one mapped by the DSL, and two candidates map
    them differently. Its programs used `*` only: every candidate was the program's own mapper, measured again."""
    path = app_file(tmp_path, foreign_exe, keep=True)
    assert main(["tune", "--app", str(path), "--iters", "2", "--baseline", "none", "--repeats", "1",
                 "--max-repeats", "1", "--final-rounds", "1", "--runs-dir", str(tmp_path / "runs")]) == 0
    (root,) = (tmp_path / "runs" / "foreign").glob("tune-*")
    mapped = []
    for i in (1, 2):
        out = tmp_path / f"run-{i}"
        assert main(["run", "--app", str(path), "--mapper", str(root / f"iter-00{i}" / "mapper.dsl"), "--once",
                     "--trace", "--out", str(out)]) == 0
        records = [json.loads(line) for line in (out / "trace.jsonl").read_text().splitlines()]
        assert {r["task"] for r in records if r.get("mapper") == "application"} <= {"top_level"}, records
        # what the DSL decided, not where the runtime happened to run a default-placed point
        mapped.append(Counter(json.dumps([r["task"], r.get("placed_by"), [x.get("layout") for x in r["regions"]],
                                          r["collect"], r["limited"]]) for r in records if not r.get("mapper")))
    assert mapped[0] and mapped[1] and mapped[0] != mapped[1], mapped
    capsys.readouterr()
    # a mapper of `*` statements only is said to change nothing
    (tmp_path / "stars.dsl").write_text("Task * CPU;\nLayout * * * AOS;\nTunable 11 = 4 int32;\n")
    assert main(["check", str(tmp_path / "stars.dsl"), "--app", str(path)]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "warning[W326]: no statement names a task" in said and "'first_cpu_mapper' maps every task" in said, said


def test_check_of_another_tunable_answer_checks_the_launches_of_a_run_with_that_answer(foreign_exe, tmp_path,
                                                                                         capsys):
    """The program sizes its launches from tunable 11 (its own mapper answers 2): a mapper answering 4 is checked
    against a discovery run with its answers, so that the function that fits 2 points on 2 CPUs but not 4 is an
    error (E205) in `check`, not R400 in the run. It was checked at discovery's 2 points: `ok` with W323."""
    mapper = tmp_path / "m.dsl"
    mapper.write_text('Task * CPU;\nTunable 11 = 4 int32;\n'
                      'def f(Task task) { return Machine(CPU)[0, task.ipoint[0]]; }\nIndexTaskMap "Update Values" f;\n')
    assert main(["check", str(mapper), "--app", str(app_file(tmp_path, foreign_exe))]) == 1
    out, err = capsys.readouterr()
    said = " ".join((out + err).split())
    assert "error[E205]" in said and "launch domain (4,)" in said and "W323" not in said, said
    assert ("note: discovered again with this mapper's tunable answers (11 = 4): the launch domains checked are "
            "those of a run with them") in said, said


def test_compare_names_the_programs_own_mapper_as_its_reference(foreign_exe, tmp_path, capsys):
    """The `default` reference of a program with its own mapper runs that mapper: compare's lines, table.md and
    summary.json name it (they said "the default mapper", and README "normalised to Legion's default mapper")."""
    assert main(["compare", "--app", str(app_file(tmp_path, foreign_exe)), "--iters", "1", "--runs", "1",
                 "--optimizers", "random", "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1",
                 "--runs-dir", str(tmp_path / "c")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    (folder,) = (tmp_path / "c" / "foreign").glob("compare-*")
    table = " ".join((folder / "table.md").read_text().split())
    summary = json.loads((folder / "summary.json").read_text())
    assert "Measuring the program's own mapper..." in out, out
    # the final lines name what runs without --mapper: the program's own mapper, not Legion's default one
    assert "the program's own mapper's = 1)" in out and "keep the program's own mapper (run without --mapper)" \
        in out[out.index("Next: "):] and "Legion's default mapper (run" not in out, out
    for text in (out, table):
        assert "the default mapper" not in text.lower(), text
        # the final measurement's notes name it too (they said "default, random-1 measured by a single execution")
        assert ("No spread estimate in the final measurement: the program's own mapper, random-1 measured by a "
                "single execution each") in text, text
        # the wall time, a time: the reference's time over the best's
        assert ("Score of a run (higher is better): the program's own mapper's time / its best program's time, both "
                "measured together at the end in 1 interleaved round, where the program's own mapper measured ") \
            in text, text
        assert ("The reference is the program's own mapper ('first_cpu_mapper'), which maps it without a DSL "
                "mapper, not Legion's default mapper.") in text, text
    assert summary["reference"] == "default" and summary["own_mapper"] == "first_cpu_mapper"
    assert summary["normalization"].startswith("best program's throughput / the program's own mapper's, ")


def test_a_did_you_mean_shows_a_name_with_a_space_as_the_dsl_writes_it(tmp_path, foreign_exe, capsys):
    """`Task "Update Valeus"` gets `did you mean "Update Values"?`, which can be pasted; it said 'Update Values', which
    the DSL rejects (E104: strings use double quotes)."""
    mapper = tmp_path / "m.dsl"
    mapper.write_text('Task "Update Valeus" CPU;\n')
    assert main(["check", str(mapper), "--app", str(app_file(tmp_path, foreign_exe))]) == 1
    said = " ".join("".join(capsys.readouterr()).split())
    assert "error[E202]: unknown task 'Update Valeus'" in said and 'hint: did you mean "Update Values"?' in said, said


def test_timeout_advice_names_the_programs_own_mapper_as_what_runs_without_mapper(foreign_exe, tmp_path):
    """A timed-out run of a program with its own mapper: the advice to run without --mapper, and the explanation of
    a run without one, name that mapper (they said "Legion's default mapping", which maps it only where the program
    registers no mapper of its own)."""
    from mapperopt.autoguide import explain

    path = app_file(tmp_path, foreign_exe)
    app = load_app_file(path)
    discover(app)  # cached: the timed-out run's discovery does not run under its tiny limit
    (tmp_path / "m.dsl").write_text("Task * CPU;\nTunable 11 = 2 int32;\n")
    dsl = run_benchmark(app, tmp_path / "m.dsl", out_dir=tmp_path / "dsl", timeout_s=0.05)
    assert dsl.stage == "timeout", dsl.reason
    said = " ".join(json.loads((tmp_path / "dsl" / "feedback.json").read_text())["suggestion"].split())
    assert ("Run the same command once without --mapper (the program's own mapper, 'first_cpu_mapper')" in said
            and "if it also runs past the limit, the program hangs or needs longer whatever the mapping (give a larger "
                "--timeout, or none)" in said and "Legion's default" not in said), said
    bare = run_benchmark(app, "default", out_dir=tmp_path / "bare", timeout_s=0.05)
    assert bare.stage == "timeout" and bare.dsl is None, bare.reason
    # the run's own feedback (its discovery cached), and tune's and compare's evaluators (`own_mapper`)
    for told in (json.loads((tmp_path / "bare" / "feedback.json").read_text())["explanation"],
                 explain(bare, own_mapper="first_cpu_mapper").explanation):
        told = " ".join(told.split())
        assert ("did not finish within 0.05 s under the program's own mapper, 'first_cpu_mapper' (no DSL mapper ran)"
                in told and "Legion's default" not in told), told
    # a program whose discovery has not run: what maps it without --mapper is unknown, and said so
    unknown = {k: v for k, v in bare.settings.items() if k not in ("own_mapper", "description")}
    told = " ".join(explain(replace(bare, settings=unknown)).explanation.split())
    assert "under Legion's default mapper, or the program's own where it registers one (no DSL mapper ran)" in told, \
        told


def test_a_run_without_a_dsl_mapper_whose_discovery_did_not_answer_claims_no_mapper(tmp_path, foreign_exe, capsys,
                                                                                     monkeypatch):
    """Without --mapper and without its discovery (not cached, or failed), what mapped the program is unknown: its
    own mapper where it registers one, else Legion's default. The title said "with the default mapper", which is
    false for a program with its own mapper; a discovery that answered says which."""
    from mapperopt.benchmarks import userapp
    from mapperopt.errors import MapperoptError

    def failed(*args, **kwargs):
        raise MapperoptError("discovering foreign failed")

    monkeypatch.setenv("COLUMNS", "400")  # one line each
    monkeypatch.setattr(userapp, "discovery_path", lambda app, cmd: tmp_path / "not-cached.json")
    monkeypatch.setattr(userapp, "discover", failed)
    path = app_file(tmp_path, foreign_exe)
    # a run cut short (only a cached discovery is read) and a measured one whose discovery failed
    for args, rc in ((["--timeout", "0.1"], 1), (["--once"], 0)):
        assert main(["run", "--app", str(path), *args, "--out", str(tmp_path / f"run{rc}")]) == rc
        printed = " ".join(capsys.readouterr().out.split())
        assert ("foreign with Legion's default mapper, or the program's own if it registers one (which one is not "
                "known: the program has not been discovered; size ci") in printed, printed
        assert "with the default mapper" not in printed, printed
    # a discovery that found no mapper of the program's own: Legion's default mapper mapped it
    monkeypatch.setattr(userapp, "discover", lambda *args, **kwargs: {"app": "foreign"})
    assert main(["run", "--app", str(path), "--once", "--out", str(tmp_path / "none")]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "foreign with Legion's default mapper (size ci" in printed, printed


def test_rsize_in_the_app_command_line_is_on_the_probed_machine(foreign_exe):
    """`--app './prog -ll:rsize 16 ...'`: the program gets the flag, so the machine its mapper is checked against has
    RDMEM too, as with `-- -ll:rsize 16` (a mapper placing data there is no E221)."""
    from mapperopt.benchmarks.userapp import app_from_command
    from mapperopt.probe import run_probe_json

    app = app_from_command(f"{foreign_exe} -steps 2 -n 400 -ll:rsize 16")
    kinds = {m["kind"] for m in run_probe_json(app, "ci")["memories"]}
    assert "RDMEM" in kinds


def test_util_in_the_app_command_line_yields_to_the_flag_after_dashdash(foreign_exe):
    """`--app './prog -ll:util 1' -- -ll:util 2`: the run gets 2 utility processors (the flag after `--` replaces the
    command line's), and so does the probed machine."""
    from mapperopt.benchmarks.userapp import app_from_command
    from mapperopt.probe import run_probe_json

    app = app_from_command(f"{foreign_exe} -steps 2 -n 400 -ll:util 1")
    assert run_probe_json(app, "ci", ("-ll:util", "2"))["processors"].get("UTIL") == [2]


def test_explain_of_an_empty_file_lists_what_discovery_found_even_where_a_tunable_is_unanswered(tmp_path, foreign_exe,
                                                                                                  capsys):
    """docs/own-app.md: explaining an empty file lists what discovery found. For a program whose own mapper answers a
    tunable it printed only W311 and E224, no listing: the listing comes first, the diagnostics at the end (exit
    status 1), and W311 says that the program's own mapper is replaced (it read as if that mapper were used)."""
    path = app_file(tmp_path, foreign_exe)
    empty = tmp_path / "empty.dsl"
    empty.write_text("")
    assert main(["explain", str(empty), "--app", str(path), "--machine", "1x0x2"]) == 1
    out, err = capsys.readouterr()
    assert "Initialize Nodes" in out and "node_pieces" in out, out
    assert f"{empty}: error[E224]: the application asks for tunable 11 (read as int32)" in err, err
    assert "hint: add `Tunable 11 = 2 int32;`" in err, err
    assert "warning[W311]: the mapper is empty: the program's own mapper ('first_cpu_mapper') is replaced" in err, err
    assert f"{empty}: 1 error(s), 1 warning(s)" in err, err
    # an error that changes the evaluation still stops before any listing
    empty.write_text("Task nosuch CPU;\nTask * TPU;\n")
    assert main(["explain", str(empty), "--app", str(path), "--machine", "1x0x2"]) == 1
    assert "Initialize Nodes" not in capsys.readouterr().out


@pytest.mark.parametrize("baseline", ["default", "none"])
def test_tunes_next_line_names_the_programs_own_mapper_as_what_runs_without_mapper(foreign_exe, tmp_path, capsys,
                                                                                  baseline):
    """A start program (--start default: Legion's default mapping in the DSL) that stays the best: the `Next:` line
    said "keep Legion's default mapper (run without --mapper)", but without --mapper this program maps with its own
    mapper. It says to keep the start program's file and what runs without --mapper, with or without the `default`
    reference measured."""
    assert main(["tune", "--app", str(app_file(tmp_path, foreign_exe)), "--iters", "1", "--baseline", baseline,
                 "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1",
                 "--runs-dir", str(tmp_path / "runs")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    (next_line,) = [line for line in out.split("Next: ")[1:]]
    # first, where its executions measured under the protocol's minimum, that they were too short to conclude
    lead = ("the final comparison's measurements were too short to conclude: tune again as Short measurement above "
            "says; ")
    assert next_line.startswith(lead) == ("Short measurement: " in out), out
    next_line = next_line.removeprefix(lead)
    assert "Legion's default mapper (run without --mapper)" not in out, out
    if baseline == "default":  # the start did not beat the measured own mapper: that is the one to keep, said once
        assert next_line.startswith("tuning found nothing faster than the start program (iter-1, "
                                    "iter-001/mapper.dsl: Legion's default mapping written in the DSL)"), out
        assert "no candidate beat the program's own mapper (run without --mapper)" in next_line, out
        assert "keep the start program" not in next_line, out
    else:
        assert next_line.startswith("keep the start program (iter-1, iter-001/mapper.dsl: Legion's default mapping "
                                    "written in the DSL; run it with --mapper and that file, as without --mapper the "
                                    "program's own mapper ('first_cpu_mapper') runs): tuning found nothing faster"), out


def test_tunes_best_mapper_line_gives_the_command_that_runs_best_dsl(foreign_exe, tmp_path, capsys, monkeypatch):
    """tune's ending printed best.dsl's program but no command that runs it, which compare's `Best mapper:` line
    gives: the user had to put `mapperopt run --app ... --mapper .../best.dsl` together from the docs. The line gives
    the same command (`run_command`), with the options the tune was given that `run` takes, where the pick is the
    program to run; run as printed, it runs best.dsl. Here the start stays the pick and the Next line keeps the
    program's own mapper: the line says the pick is printed to inspect, with no command (it read as the advice)."""
    import shlex

    from mapperopt.optimizer.commands import run_command

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)  # the Best mapper line whole, as piped
    app_file(tmp_path, foreign_exe)
    assert main(["tune", "--app", "mapperopt.yaml", "--timeout", "50", "--iters", "1", "--baseline", "default",
                 "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1", "--runs-dir", "runs"]) == 0
    out = capsys.readouterr().out
    (root,) = Path("runs", "foreign").glob("tune-*")
    command = run_command(["--app", "mapperopt.yaml"], root / "best.dsl", {"timeout_s": 50})
    assert command == f"mapperopt run --app mapperopt.yaml --timeout 50 --mapper {root / 'best.dsl'}", command
    (line,) = [line for line in out.splitlines() if line.startswith("Best mapper")]
    assert line.endswith(", printed below to inspect") and "run it with" not in line, out
    assert "no candidate beat the program's own mapper (run without --mapper)" in " ".join(out.split()), out
    assert command not in out, out  # the Best mapper line's command: only where the pick is the one to run
    best = (root / "best.dsl").read_text().rstrip("\n")
    assert out[out.index(line) + len(line) + 1:].startswith(best), out  # the program follows the line
    assert main([*shlex.split(command)[1:], "--once", "--out", "again"]) == 0
    assert (tmp_path / "again" / "mapper.dsl").read_text() == (root / "best.dsl").read_text()


def test_the_advice_after_a_run_of_the_programs_own_mapper_names_a_file_to_write(foreign_exe, tmp_path, capsys,
                                                                                 monkeypatch):
    """`run --app FILE` without --mapper (the program's own mapper ran) advised "write statements naming only the
    tasks to change in my.dsl and run `mapperopt run ... --mapper my.dsl ...`": my.dsl read as a file that exists,
    and the command, given as printed, failed. It says the file is a new one to write; written, the command runs."""
    import re
    import shlex

    monkeypatch.chdir(tmp_path)
    path = app_file(tmp_path, foreign_exe)
    assert main(["run", "--app", str(path), "--once", "--out", "own"]) == 0
    suggestion = " ".join(json.loads((tmp_path / "own" / "feedback.json").read_text())["suggestion"].split())
    assert ("write a new DSL file, my.dsl, with statements naming only the tasks to change, and run "
            f"`mapperopt run --app {path} --mapper my.dsl --keep-app-mapper --profile`") in suggestion, suggestion
    assert not (tmp_path / "my.dsl").exists()
    (tmp_path / "my.dsl").write_text('Task "Update Values" CPU;\n')
    command = re.search(r"`(mapperopt run [^`]*)`", suggestion).group(1)
    assert main([*shlex.split(command)[1:], "--once", "--out", "mine"]) == 0
