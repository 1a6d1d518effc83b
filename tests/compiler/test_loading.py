"""Putting a compiled mapper into an application: the LD_PRELOAD shim for an unmodified Legion program
(docs/compiler.md), and the -mapper-profile line (docs/compiler.md)."""

from __future__ import annotations

import json
import subprocess

from compiler_support import BASE_FLAGS, build_testapp, plainapp, run
from mapperopt import toolchain
from mapperopt.compiler import compile_program, preload_library

REVERSE = """
m = Machine(CPU);
def reverse(Task task) { return m[0, m.size[1] - 1 - task.ipoint[0] % m.size[1]]; }
IndexTaskMap fill reverse;
Layout fill parts * AOS;
"""


def run_plain(tmp_path, env_extra: dict, *flags: str) -> subprocess.CompletedProcess:
    env = toolchain.runtime_env()
    env.update(env_extra)
    return subprocess.run([str(plainapp()), "-ll:cpu", "2", *BASE_FLAGS, *flags], capture_output=True, text=True,
                          env=env, timeout=120)


def placements(stdout: str) -> dict[int, int]:
    return {int(p): int(c) for _, p, c in (ln.split() for ln in stdout.splitlines() if ln.startswith("PLAIN_RUN"))}


def test_preloaded_mapper_drives_an_unmodified_application(tmp_path):
    cm = compile_program(REVERSE)
    trace = tmp_path / "trace.jsonl"
    proc = run_plain(tmp_path, {"LD_PRELOAD": str(preload_library()), "MAPPEROPT_MAPPER": str(cm.so_path)},
                     "-mapper-trace", str(trace))
    assert proc.returncode == 0, proc.stderr
    assert placements(proc.stdout) == {0: 1, 1: 0, 2: 1, 3: 0}
    records = [json.loads(ln) for ln in trace.read_text().splitlines()]
    fills = [r for r in records if r["task"] == "fill"]
    assert {r["point"][0]: r["proc"]["index"] for r in fills} == {0: 1, 1: 0, 2: 1, 3: 0}
    assert {(r["regions"][0]["name"], r["regions"][0]["layout"]["order"]) for r in fills} == {("parts", "AOS")}


def test_without_the_shim_the_application_keeps_the_default_mapper(tmp_path):
    proc = run_plain(tmp_path, {})
    assert proc.returncode == 0, proc.stderr
    assert sorted(placements(proc.stdout)) == [0, 1, 2, 3] and "[mapperopt]" not in proc.stderr
    warned = run_plain(tmp_path, {"LD_PRELOAD": str(preload_library())})
    assert warned.returncode == 0 and "MAPPEROPT_MAPPER is not set" in warned.stderr


def test_profile_line(tmp_path):
    cm = compile_program("Task step IO,CPU;\n")
    result = run(build_testapp(), cm.so_path, tmp_path, legion=("-ll:cpu", "2", "-ll:io", "1"),
                 app_flags=("-iters", "3", "-mapper-profile"))
    assert result.ok(), result.stderr
    lines = [ln for ln in result.stdout.splitlines() if ln.startswith("MAPPEROPT_PROFILE ")]
    assert len(lines) == 1 and result.stdout.rstrip().endswith(lines[0])
    profile = json.loads(lines[0].split(" ", 1)[1])
    assert profile["schema"] == "mapperopt.profile/1"
    stats = {(t["task"], t["kind"]): t for t in profile["tasks"]}
    assert stats[("step", "IO")]["count"] == 12 and ("step", "CPU") not in stats
    assert stats[("tile", "CPU")]["count"] == 12 and stats[("check", "CPU")]["count"] == 1
    for t in profile["tasks"]:
        assert 0 < t["max_s"] <= t["total_s"] < 60
