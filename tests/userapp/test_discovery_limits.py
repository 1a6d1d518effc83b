"""What discovery cannot see, said by `check` and `explain` instead of silently: a ping-pong task's later launch on
another region (tests/app/pingpong.cc launches `fill` on `cur`, then on `next`; discovery records the first launch
of each task), a DSL answer to a tunable that sizes the launches other than discovery's, a machine on which Legion's
machine-dependent tunable (DEFAULT_TUNABLE_GLOBAL_CPUS) differs from discovery's; and the options of the program's
run that check, explain and compile take like `run` (--keep-app-mapper, --timeout, --rediscover)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time

import pytest
from userapp_support import APP_DIR, running

from mapperopt import toolchain
from mapperopt.cli import main


@pytest.fixture(scope="module")
def pingpong():
    return str(toolchain.build("pingpong", [APP_DIR / "pingpong.cc"]))


def check(capsys, *args) -> tuple[int, str]:
    code = main(["check", *map(str, args)])
    out = capsys.readouterr()
    return code, " ".join((out.out + out.err).split())


def test_a_region_of_a_later_launch_of_the_task_is_a_warning_not_an_error(tmp_path, pingpong, capsys):
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Region fill next CPU SYSMEM;\n")
    code, out = check(capsys, mapper, "--app", pingpong)
    assert code == 0, out
    assert "E203" not in out and "warning[W322]: region 'next' is not among the names of task 'fill' that " \
                                 "discovery saw" in out, out
    assert "with the same index space 'grid' as 'cur'" in out
    code, out = check(capsys, mapper, "--app", pingpong, "--", "-unnamed_grid")  # roots alike in their field space
    assert code == 0 and "warning[W322]" in out and "with the same field space 'temp' as 'cur'" in out, out
    mapper.write_text("Region fill nxet CPU SYSMEM;\n")  # a typo stays an error
    code, out = check(capsys, mapper, "--app", pingpong)
    assert code == 1 and "error[E203]: unknown region 'nxet' for task 'fill'" in out, out


def test_a_partition_of_a_later_launch_of_the_task_is_a_warning_not_an_error(tmp_path, pingpong, capsys):
    # the logical partitions of cur and next by one index partition: the usual Legion ping-pong
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Region fill next_pieces CPU SYSMEM;\n")
    code, out = check(capsys, mapper, "--app", pingpong, "--", "-named_pieces")
    assert code == 0, out
    assert "error[E203]" not in out and ("warning[W322]: region 'next_pieces' is not among the names of the first "
                                         "launch of task 'fill'") in out, out
    assert "launch 2 has argument 0 in 'next_pieces'" in out, out
    assert "hint: `Region fill 0 CPU SYSMEM;` selects argument 0 on every launch" in out, out
    mapper.write_text("Region fill next_pices CPU SYSMEM;\n")  # a typo stays an error
    code, out = check(capsys, mapper, "--app", pingpong, "--", "-named_pieces")
    assert code == 1 and "error[E203]: unknown region 'next_pices' for task 'fill'" in out, out


def test_a_tunable_answered_otherwise_than_in_discovery_says_the_launch_domains_may_differ(tmp_path, pingpong, capsys):
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Tunable 6 = 3;\nmcpu = Machine(CPU);\ndef direct(Task task) { return mcpu[0, task.ipoint[0]]; "
                      "}\nIndexTaskMap fill direct;\n")
    # explain shows discovery's launches, and says so; check discovers the program again with the mapper's answer
    # and checks the launch of that run (3 points on 1 CPU)
    assert main(["explain", str(mapper), "--app", pingpong]) == 0
    said = capsys.readouterr()
    out = " ".join((said.out + said.err).split())
    assert "warning[W323]: tunable 6 is answered 3 here, but 1 in discovery" in out, out
    code, out = check(capsys, mapper, "--app", pingpong)
    assert code == 1 and "error[E205]" in out and "launch domain (3,)" in out and "W323" not in out, out
    assert "note: discovered again with this mapper's tunable answers (6 = 3)" in out, out
    mapper.write_text("Tunable 6 = 1;\nTask * CPU;\n")  # discovery's own answer
    code, out = check(capsys, mapper, "--app", pingpong)
    assert code == 0 and "W323" not in out, out


def test_compile_checks_the_launches_of_a_run_with_the_mappers_tunable_answers_as_check_does(tmp_path, pingpong,
                                                                                             capsys):
    """`compile --app` checked discovery's launch domains (W323) where `check` discovered the program again."""
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Tunable 6 = 3;\nmcpu = Machine(CPU);\ndef direct(Task task) { return mcpu[0, task.ipoint[0]]; "
                      "}\nIndexTaskMap fill direct;\n")
    code = main(["compile", str(mapper), "--app", pingpong])
    said = capsys.readouterr()
    out = " ".join((said.out + said.err).split())
    assert code == 1 and "error[E205]" in out and "launch domain (3,)" in out and "W323" not in out, out
    assert "note: discovered again with this mapper's tunable answers (6 = 3)" in out, out


def test_another_machine_for_a_machine_dependent_tunable_is_said_by_check_and_explain(tmp_path, pingpong, capsys):
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Task * CPU;\n")
    code, out = check(capsys, mapper, "--app", pingpong, "--machine", "1x0x4")
    assert code == 0, out
    assert ("warning[W324]: the program asked Legion's default mapper for tunable 6 "
            "(DEFAULT_TUNABLE_GLOBAL_CPUS), answered 1 in discovery; on --machine 1x0x4 it is 4") in out, out
    assert "-- -ll:cpu 4" in out
    assert main(["explain", str(mapper), "--app", pingpong, "--machine", "1x0x4"]) == 0
    got = capsys.readouterr()
    err = " ".join(got.err.split())
    assert "launch domains: those of `mapperopt run --app" in err and "W324" in err, err
    code, out = check(capsys, mapper, "--app", pingpong, "--machine", "1x0x1")  # discovery's count: nothing to say
    assert code == 0 and "W324" not in out, out


def test_check_explain_and_compile_take_keep_app_mapper(tmp_path, foreign_exe, capsys):
    mapper = tmp_path / "m.dsl"
    mapper.write_text('Task "Initialize Nodes" CPU;\n')  # tunable 11 is left to the program's own mapper
    app = tmp_path / "foreign.yaml"  # its must-epoch launch needs 2 CPUs
    app.write_text(f"executable: {foreign_exe}\nargs: [-steps, '1']\nsizes:\n  ci: {{args: [-n, '400'], cpus: 2}}\n")
    code, out = check(capsys, mapper, "--app", app)
    assert code == 1 and "E224" in out, out
    code, out = check(capsys, mapper, "--app", app, "--keep-app-mapper")
    assert code == 0 and f"those of `mapperopt run --app {app} --keep-app-mapper --size ci`" in out, out
    assert "W332" not in out, out  # the program has a mapper of its own to keep
    assert main(["explain", str(mapper), "--app", str(app), "--keep-app-mapper"]) == 0
    text = capsys.readouterr().out
    # the tasks the DSL names no statement for are the program's mapper's, not Legion's default mapper's
    assert "processor: CPU (Legion default)" not in text and "mapper: the program's own (kept)" in text, text
    assert "processor: CPU (the program's own mapper, or Legion default)" in text, text
    assert main(["compile", str(mapper), "--app", str(app), "--keep-app-mapper", "-o", str(tmp_path / "m.so")]) == 0
    # about a user's program only: refused, not ignored, for a benchmark
    code, out = check(capsys, mapper, "--bench", "circuit", "--keep-app-mapper")
    assert code == 2 and "error: --keep-app-mapper needs --app" in out, out


def test_check_and_explain_say_that_the_mapper_displaces_the_programs_own(tmp_path, foreign_exe, capsys):
    """Discovery ran under the program's own mapper: check and explain say that a DSL mapper takes its place for
    every task (a program that needs it fails in the run), and how to keep it; not when the run keeps it."""
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Task * CPU;\nTunable 11 = 2 int32;\n")
    app = tmp_path / "foreign.yaml"  # its must-epoch launch needs 2 CPUs
    app.write_text(f"executable: {foreign_exe}\nargs: [-steps, '1']\nsizes:\n  ci: {{args: [-n, '400'], cpus: 2}}\n")
    note = ("note: the program registers its own mapper ('first_cpu_mapper'); this mapper takes its place for every "
            "task (--keep-app-mapper keeps it for the tasks no statement names)")
    code, out = check(capsys, mapper, "--app", app)
    assert code == 0 and note in out, out
    code, out = check(capsys, mapper, "--app", app, "--keep-app-mapper")
    assert code == 0 and "registers its own mapper" not in out, out
    assert main(["explain", str(mapper), "--app", str(app)]) == 0
    assert note in " ".join(capsys.readouterr().err.split())


def test_check_takes_the_discovery_runs_timeout(tmp_path, capsys):
    hang = ["sleep", str(200000 + os.getpid() % 100000)]
    exe = tmp_path / "prog"
    exe.write_text(f"#!/bin/sh\n{' '.join(hang)}\n")
    exe.chmod(0o755)
    (tmp_path / "m.dsl").write_text("Task * CPU;\n")
    start = time.monotonic()
    try:
        code, out = check(capsys, tmp_path / "m.dsl", "--app", exe, "--timeout", "2")
        assert code == 1 and time.monotonic() - start < 50, out
        assert "did not finish within 2 s" in out and "give a larger --timeout" in out, out
    finally:
        for pid in running(hang):
            os.kill(pid, signal.SIGKILL)


def test_a_rebuild_behind_a_wrapper_script_is_discovered_again(tmp_path, pingpong, foreign_exe, capsys):
    """Discovery's cache was keyed by the wrapper script's bytes: after a rebuild that renamed the program's tasks,
    `check` passed a mapper naming a task the program no longer has. The programs the script names are part of
    the key, so a rebuild is discovered again without --rediscover."""
    (tmp_path / "build").mkdir()
    shutil.copy(pingpong, tmp_path / "build" / "app")
    wrapper = tmp_path / "run.sh"
    wrapper.write_text('#!/bin/sh\nexec "$(dirname "$0")/build/app" "$@"\n')
    wrapper.chmod(0o755)
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Task fill CPU;\n")
    code, out = check(capsys, mapper, "--app", f"{wrapper} -ll:cpu 2")
    assert code == 0 and "keyed by its bytes" not in out, out  # its program is checked: no note
    shutil.copy(foreign_exe, tmp_path / "build" / "app")  # "rebuilt": its tasks have other names now
    code, out = check(capsys, mapper, "--app", f"{wrapper} -ll:cpu 2")
    assert code == 1 and "discovering run.sh" in out and "'fill'" in out, out


def test_rediscover_sees_a_rebuild_behind_a_wrapper_script_it_cannot_check(tmp_path, pingpong, capsys):
    """A script that names its program through a variable: mapperopt cannot check it, so the cache stays keyed by
    the script's bytes, and `check` says so and how to discover again."""
    (tmp_path / "bin").mkdir()
    shutil.copy(pingpong, tmp_path / "bin" / "pp")
    wrapper = tmp_path / "run.sh"
    wrapper.write_text(f"#!/bin/sh\nP={tmp_path / 'bin'}\nexec \"$P/\"pp \"$@\"\n")
    wrapper.chmod(0o755)
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Task fill CPU;\n")
    assert check(capsys, mapper, "--app", wrapper)[0] == 0
    shutil.copy(APP_DIR.parent.parent / "README.md", tmp_path / "bin" / "pp")  # "rebuilt": no program any more
    code, out = check(capsys, mapper, "--app", wrapper)
    assert code == 0, out  # the wrapper's bytes are the same: discovery's cache still answers
    assert "note: run.sh is a script that names no program mapperopt finds" in out
    assert "discovery's cache is keyed by its bytes" in out and "--rediscover" in out, out
    code, out = check(capsys, mapper, "--app", wrapper, "--rediscover")
    assert code == 1 and "discovering run.sh" in out, out


def test_runs_note_r453_for_an_unknown_region_name_says_the_close_one(tmp_path):
    """The mapper's note R453 that `run` prints gets "did you mean" for a region name as for a task name: from the
    names of the task's requirements in the discovered description (the mapper's own note has none for a region)."""
    from mapperopt.benchmarks.userapp import mapper_notes
    from mapperopt.records import Attempt, RunResult

    described = tmp_path / "described.json"
    described.write_text(json.dumps({
        "schema": "mapperopt.app/1", "app": "p", "discovered": True, "region_tree": [],
        "tasks": [{"name": "fill particles", "variants": ["CPU"], "launch": "index", "regions": [
            {"index": 0, "names": ["particle pieces", "particles", "particle fields"], "privilege": "write_discard",
             "fields": ["x"]}]}]}))
    (tmp_path / "stderr-1.txt").write_text(
        "[mapperopt] note R453: m.dsl:2: this Region statement matched nothing in this run: no region requirement of "
        "task 'fill particles' has 'particle piece' among its names\n"
        "[mapperopt] note R453: m.dsl:3: this Region statement matched nothing in this run: no region requirement "
        "has 'nowhere' among its names\n")
    result = RunResult("p", "m.dsl", "ok", attempts=(Attempt(0, 1.0, stderr="stderr-1.txt"),), run_dir=str(tmp_path),
                       settings={"description": str(described)})
    first, second = mapper_notes(result)
    assert first.endswith("has 'particle piece' among its names; did you mean \"particle pieces\"?"), first
    assert second.endswith("has 'nowhere' among its names"), second


def test_runs_note_r453_for_an_inner_tasks_region_says_it_is_mapped_virtually(tmp_path):
    """An inner task's region is mapped virtually, so its Region statement never applies and the mapper notes R453
    "no region requirement ... has 'data' among its names" although it has (check's W305 says why): `run` prints what
    happened instead."""
    from mapperopt.benchmarks.userapp import mapper_notes
    from mapperopt.records import Attempt, RunResult

    described = tmp_path / "described.json"
    described.write_text(json.dumps({
        "schema": "mapperopt.app/1", "app": "tree", "discovered": True, "region_tree": [],
        "tasks": [{"name": "fill", "variants": ["CPU"], "launch": "single", "inner": True, "leaf": False,
                   "regions": [{"index": 0, "names": ["data"], "privilege": "read_write", "fields": ["V"]}]},
                  {"name": "leaf", "variants": ["CPU"], "launch": "index", "regions": [
                      {"index": 0, "names": ["pieces", "data"], "privilege": "write_discard", "fields": ["V"]}]}]}))
    (tmp_path / "stderr-1.txt").write_text(  # as the run of tree with `Region fill data CPU SYSMEM;` printed it
        "[mapperopt] note R453: m/tree.dsl:3: this Region statement matched nothing in this run: no region requirement "
        "of task 'fill' has 'data' among its names\n")
    result = RunResult("tree", "tree.dsl", "ok", attempts=(Attempt(0, 1.0, stderr="stderr-1.txt"),),
                       run_dir=str(tmp_path), settings={"description": str(described)})
    note, = mapper_notes(result)
    assert "has 'data' among its names" not in note, note
    assert note.startswith("note R453: m/tree.dsl:3: this Region statement matched nothing in this run: "), note
    assert "'fill' is an inner task" in note and "mapped virtually" in note, note


def test_keep_app_mapper_for_a_program_without_a_mapper_of_its_own_is_said_to_keep_nothing(tmp_path, timed_exe,
                                                                                            capsys):
    """--keep-app-mapper on a program that registers no mapper (tests/app/timed.cc) was accepted silently: one may
    read it as keeping Legion's default mapper for the tasks no statement names. check and run say it keeps
    nothing."""
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Task * CPU;\nRegion * * CPU SYSMEM;\n")
    said = ("note[W332]: --keep-app-mapper keeps nothing here: the program registers no mapper of its own "
            "(discovery saw none), so this mapper maps every task, as without the option")
    code, out = check(capsys, mapper, "--app", timed_exe, "--keep-app-mapper")
    assert code == 0 and said in out, out
    code, out = check(capsys, mapper, "--app", timed_exe)
    assert code == 0 and "W332" not in out, out
    assert main(["run", "--app", f"{timed_exe} -reps 2", "--mapper", str(mapper), "--keep-app-mapper", "--once",
                 "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr()
    assert said in " ".join((out.out + out.err).split()), out
