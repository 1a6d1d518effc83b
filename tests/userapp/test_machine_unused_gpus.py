"""`--machine 1x4`, copied from the README for a CPU-only program (tests/app/timed.cc: one CPU variant per task),
describes one node of 4 GPUs and 1 CPU: every point went to the one CPU with no word of why. `explain` and `check`
now say that the program's tasks have CPU variants only and give the spec of as many CPUs; that spec explains the
points spread over them. A benchmark with GPU variants gets no such note."""

from __future__ import annotations

from pathlib import Path

from mapperopt.cli import main

# timed's `work` launch, a point a CPU in turn
_PLACE = """Task * CPU;
Region * * CPU SYSMEM;
mcpu = Machine(CPU);
def block(Task task) {
    lin = task.ipoint[0] * mcpu.volume / task.ispace[0];
    return mcpu[lin / mcpu.size[1], lin % mcpu.size[1]];
}
IndexTaskMap work block;
"""


def _said(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, " ".join(out.err.split())


def test_a_cpu_only_program_on_a_gpu_machine_is_said_to_leave_its_gpus_unused(tmp_path, timed_exe, capsys,
                                                                             monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("m.dsl").write_text(_PLACE)
    code, out, err = _said(capsys, "explain", "m.dsl", "--app", str(timed_exe), "--machine", "1x4")
    assert code == 0 and out.startswith("machine: 1 node of 1 CPU and 4 GPUs"), out
    assert ("note: timed's tasks have CPU variants only: the 4 GPUs of --machine 1x4 are unused; `--machine 1x0x4` "
            "describes 1 node of 4 CPUs") in err, err
    assert "(1 of 1 CPUs used)" in out, out
    # the spec it gives: the program's points over 4 CPUs, and no note
    code, out, err = _said(capsys, "explain", "m.dsl", "--app", str(timed_exe), "--machine", "1x0x4")
    assert code == 0 and out.startswith("machine: 1 node of 4 CPUs") and "(4 of 4 CPUs used)" in out, out
    assert "variants only" not in err, err
    # check says it among its notes, for several nodes too
    code, out, err = _said(capsys, "check", "m.dsl", "--app", str(timed_exe), "--machine", "2x1")
    flat = " ".join((out + err).split())
    assert code == 0 and ("note: timed's tasks have CPU variants only: the 1 GPU of --machine 2x1 is unused; "
                          "`--machine 2x0x1` describes 2 nodes of 1 CPU each") in flat, flat


def test_a_benchmark_with_gpu_variants_gets_no_note(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("m.dsl").write_text("Task * CPU;\n")
    code, out, err = _said(capsys, "explain", "m.dsl", "--bench", "circuit", "--machine", "1x4")
    assert code == 0 and out.startswith("machine: 1 node of 1 CPU and 4 GPUs"), out
    assert "variants only" not in err, err
