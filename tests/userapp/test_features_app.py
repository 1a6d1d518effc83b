"""A Legion program written after Legion's tutorials (tests/app/features.cc: an inline mapping, a fill, an index copy
and a copy, a must-epoch launch exchanging through a phase barrier and a region with simultaneous coherence, a
future and a future map passed to index launches, a projection functor of its own, aliased partitions, an attached
host buffer, index launches whose points all reduce into or read one region, a concurrent index launch), run through
`mapperopt run --app` with Legion's default mapper and with DSL mappers using every kind of statement: each part checks
its own result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mapperopt.benchmarks.harness import run_benchmark
from mapperopt.benchmarks.userapp import load_app_file

RDMEM = ("-ll:rsize", "16")  # registered memory, which a CPU-only machine has only when asked for

MAPPERS = {
    "default": "default",
    "memories and layouts": "Task * CPU;\nRegion * * CPU RDMEM,SYSMEM;\nLayout * * * AOS C_order;\n",
    "limits and collection": "Task * CPU;\nInstanceLimit increment 1;\nInstanceLimit sum 1;\n"
                             "InstanceLimit exchange 1;\n"
                             "InstanceLimit accumulate 1;\nCollectMemory * *;\n",
    "placement functions": "m = Machine(CPU);\n"
                           "def spread(Task task) { return m[0, (task.ipoint[0] + 1) % m.size[1]]; }\n"
                           "def anywhere(Task task) { return m[0, *]; }\n"
                           "IndexTaskMap * spread;\nSingleTaskMap exchange,sum,make_scale anywhere;\n",
}


def app_file(tmp_path: Path, exe: Path) -> Path:
    path = tmp_path / "mapperopt.yaml"
    path.write_text(f"""
app: features
executable: {exe}
sizes:
  ci: {{args: ["-n", "200"], cpus: 2, timeout_s: 30}}
verify: {{pattern: 'ALL OK'}}
""")
    return path


@pytest.mark.parametrize("mapper", MAPPERS)
def test_every_part_is_right_under_the_default_mapper_and_dsl_mappers(tmp_path, features_exe, mapper):
    app = load_app_file(app_file(tmp_path, features_exe))
    result = run_benchmark(app, MAPPERS[mapper], out_dir=tmp_path / "run", extra_args=RDMEM)
    stdout = "".join(p.read_text() for p in (tmp_path / "run").glob("stdout*.txt"))
    assert result.ok, (result.reason, stdout[-2000:])
    assert stdout.count(" OK\n") == 10, stdout  # nine parts and ALL OK


@pytest.mark.parametrize("mapper", ["Region exchange * CPU RDMEM;\n", "Region * mailbox CPU RDMEM,SYSMEM;\n"],
                         ids=["task name", "region name"])
def test_a_must_epoch_region_keeps_the_instance_the_epoch_mapped(tmp_path, features_exe, mapper):
    """The two tasks of the must-epoch launch share their region with simultaneous coherence: Legion's must-epoch
    mapping gives both one instance, premapped; the DSL mapper leaves it as it is (a debug Legion rejects a changed
    one), and the placement trace records where it lies, as the program sees it, not where the Region statement
    would have put it."""
    app = load_app_file(app_file(tmp_path, features_exe))
    result = run_benchmark(app, "Task * CPU;\n" + mapper, trace=True, out_dir=tmp_path / "run",
                           extra_args=(*RDMEM, "-part", "epoch"))
    run = tmp_path / "run"
    stdout = (run / "stdout.txt").read_text()
    assert result.ok, (result.reason, stdout[-2000:])
    seen = sorted(line.split()[2] for line in stdout.splitlines() if line.startswith("EXCHANGE "))
    traced = sorted(json.loads(line)["regions"][0]["memory"] for line in (run / "trace.jsonl").read_text().splitlines()
                    if json.loads(line)["task"] == "exchange")
    assert seen == traced == ["SYSMEM", "SYSMEM"]
    assert ("note R455: requirement 0 (mailbox) of task 'exchange' is shared by the tasks of a must-epoch launch: it "
            "uses the instance Legion's must-epoch mapping chose (SYSMEM)") in (run / "stderr.txt").read_text()


@pytest.mark.parametrize("statement", ["IndexTaskMap increment anywhere;\n", "IndexTaskMap CPU anywhere;\n"],
                         ids=["task name", "kind selector"])
def test_a_processor_set_gives_each_point_of_a_concurrent_launch_a_processor_of_its_own(tmp_path, features_exe,
                                                                                      statement):
    """The points of a concurrent index launch must run on different processors (Legion aborts otherwise): points
    mapped to one processor set take the least loaded of its processors that no other point of the launch has."""
    app = load_app_file(app_file(tmp_path, features_exe))
    mapper = "m = Machine(CPU);\ndef anywhere(Task task) { return m[0, *]; }\n" + statement
    result = run_benchmark(app, mapper, trace=True, out_dir=tmp_path / "run", extra_args=("-part", "concurrent"))
    run = tmp_path / "run"
    assert result.ok, (result.reason, (run / "stderr.txt").read_text()[-2000:])
    procs = [json.loads(line)["proc"]["index"] for line in (run / "trace.jsonl").read_text().splitlines()
             if json.loads(line)["task"] == "increment" and json.loads(line)["domain"] == [2]]
    assert sorted(procs) == [0, 1]


@pytest.mark.parametrize("task", ["accumulate", "sum"])
def test_a_limit_below_the_points_of_a_launch_that_shares_one_region_does_not_hang(tmp_path, features_exe, task):
    """Legion's default mapper asks Legion to map a region that every point of an index launch reads (or reduces
    into) collectively, which waits until every point maps; an InstanceLimit that holds some points back until
    others finish then hangs the program. A limited task's requirements are mapped point by point."""
    app = load_app_file(app_file(tmp_path, features_exe))
    result = run_benchmark(app, f"Task * CPU;\nInstanceLimit {task} 1;\n", out_dir=tmp_path / "run",
                           timeout_s=20, extra_args=("-part", "broadcast"))
    assert result.ok, result.reason
    assert "PART broadcast OK" in (tmp_path / "run" / "stdout.txt").read_text()


def test_run_prints_the_must_epoch_notes(tmp_path, features_exe, capsys):
    """`run` prints the mapper's notes R455 after its table, as it prints R453's (they were only in stderr-N.txt):
    the map statement the must-epoch launch overrode, and the Region statement its shared region did not follow."""
    from mapperopt.cli import main

    mapper = tmp_path / "m.dsl"
    mapper.write_text("Task * CPU;\nRegion * mailbox CPU RDMEM,SYSMEM;\n")
    assert main(["run", "--app", str(app_file(tmp_path, features_exe)), "--mapper", str(mapper), "--once",
                 "--out", str(tmp_path / "run"), "--", *RDMEM, "-part", "epoch"]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert ("note R455: requirement 0 (mailbox) of task 'exchange' is shared by the tasks of a must-epoch launch: it "
            "uses the instance Legion's must-epoch mapping chose (SYSMEM)") in printed, printed
