"""The Stencil application (benchmarks/legion/stencil): build, CI-size runs, the result line, --describe against
the decomposition (points, private, four halo buffers), the failed-check path and the CPU kernel's layout assertion."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mapperopt import toolchain
from mapperopt.benchmarks import build_app, describe_app

ROOT = Path(__file__).resolve().parents[2]
APP_DIR = ROOT / "benchmarks" / "legion" / "stencil"
COMMON = ROOT / "benchmarks" / "legion" / "common"
CI = ["-nx", "68", "-ny", "68", "-ntx", "2", "-nty", "2", "-tsteps", "4", "-tprune", "1"]
LEGION = ["-ll:cpu", "1", "-ll:util", "1", "-logfile", "stderr"]

# The decomposition: task -> [(name chain, privilege, fields)] in the normative requirement order.
OUT = [(["pxm_out", "xm"], "write_discard", ["input"]), (["pxp_out", "xp"], "write_discard", ["input"]),
       (["pym_out", "ym"], "write_discard", ["input"]), (["pyp_out", "yp"], "write_discard", ["input"])]
EXPECTED_TASKS = {
    "init_tile": [(["private", "points"], "write_discard", ["input", "output"])] + OUT,
    "stencil": [(["private", "points"], "read_write", ["input", "output"]),
                (["pxm_in", "xm"], "read_only", ["input"]), (["pxp_in", "xp"], "read_only", ["input"]),
                (["pym_in", "ym"], "read_only", ["input"]), (["pyp_in", "yp"], "read_only", ["input"])],
    "increment": [(["private", "points"], "read_write", ["input"])] + OUT,
    "check": [(["private", "points"], "read_only", ["input", "output"])],
}


@pytest.fixture(scope="module")
def app() -> Path:
    return build_app("stencil")


@pytest.fixture(scope="module")
def env() -> dict[str, str]:
    return toolchain.runtime_env()


def run(app: Path, env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([str(app), *args], capture_output=True, text=True, env=env, timeout=timeout)


def result_of(stdout: str) -> dict:
    lines = [line for line in stdout.splitlines() if line.startswith("MAPPEROPT_")]
    assert len(lines) == 1, stdout
    assert lines[0].startswith("MAPPEROPT_RESULT ")
    return json.loads(lines[0][len("MAPPEROPT_RESULT "):])


@pytest.mark.parametrize("legion", [LEGION, LEGION + ["-lg:safe_mapper"], ["-ll:cpu", "2", *LEGION[2:]]],
                         ids=["default", "safe_mapper", "2cpu"])
def test_ci_size_verifies(app, env, legion):
    proc = run(app, env, *CI, *legion)
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = result_of(proc.stdout)
    assert res["schema"] == "mapperopt.result/1" and res["app"] == "stencil"
    assert res["verified"] is True
    assert res["unit"] == "GFLOPS" and res["iterations"] == 4 and res["warmup"] == 1 and res["after"] == 1  # -tprune
    assert res["check"] == {"kind": "analytic", "max_abs_err": 0}
    assert res["time_s"] > 0 and res["throughput"] > 0
    # throughput = 19 (nx - 4)(ny - 4) tsteps / time / 1e9
    assert res["throughput"] == pytest.approx(19 * 64 * 64 * 4 / res["time_s"] / 1e9, rel=1e-3)
    assert "ELAPSED TIME = " in proc.stdout and "BANDWIDTH = " in proc.stdout


def test_uneven_tiles_verify(app, env):
    proc = run(app, env, "-nx", "37", "-ny", "53", "-ntx", "3", "-nty", "5", "-tsteps", "3", "-tprune", "0", *LEGION)
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = result_of(proc.stdout)
    assert res["verified"] is True and res["warmup"] == 1


def test_missing_halo_exchange_fails_the_check(app, env):
    proc = run(app, env, *CI, *LEGION, "-test-skip-halo")
    assert proc.returncode == 2, proc.stderr[-2000:]
    res = result_of(proc.stdout)
    assert res["verified"] is False
    first = res["check"]["first_mismatch"]
    assert first["field"] == "output" and first["value"] != first["expected"]
    assert res["check"]["max_abs_err"] > 0 and res["check"]["mismatches"] > 0


def test_describe_matches_benchmarks_md(app, env):
    proc = run(app, env, "--describe", "-ntx", "3", "-nty", "2")
    assert proc.returncode == 0, proc.stderr
    desc = json.loads(proc.stdout)
    assert desc["schema"] == "mapperopt.app/1" and desc["app"] == "stencil"
    tasks = {t["name"]: t for t in desc["tasks"]}
    assert list(tasks) == list(EXPECTED_TASKS)
    for name, reqs in EXPECTED_TASKS.items():
        task = tasks[name]
        assert task["launch"] == "index" and task["domain"] == [6] and task["leaf"] is True
        assert task["variants"][0] == "CPU"
        assert set(task["variants"]) <= {"CPU", "GPU"}
        got = [(r["names"], r["privilege"], r["fields"]) for r in task["regions"]]
        assert got == reqs, name
        assert [r["index"] for r in task["regions"]] == list(range(len(reqs)))
    tree = {n["name"]: (n["kind"], n["parent"]) for n in desc["region_tree"]}
    for region in ("points", "xm", "xp", "ym", "yp"):
        assert tree[region] == ("region", None)
    assert tree["private"] == ("partition", "points")
    for buf in ("xm", "xp", "ym", "yp"):
        assert tree[f"p{buf}_out"] == ("partition", buf)
        assert tree[f"p{buf}_in"] == ("partition", buf)


def test_bad_flags_are_usage_errors(app, env):
    proc = run(app, env, "-nx", "10", "-ntx", "6", *LEGION)
    assert proc.returncode == 1 and "tiles must be at least" in proc.stderr


@pytest.fixture(scope="module")
def layout_mapper() -> Path:
    return toolchain.build("stencil_layout_test_mapper", [APP_DIR / "layout_test_mapper.cc"], shared=True,
                           include_dirs=[COMMON])


def test_c_order_trips_the_cpu_stride_assertion(app, env, layout_mapper):
    proc = run(app, {**env, "STENCIL_TEST_LAYOUT": "SOA_C"}, *CI, *LEGION, "-mapper", str(layout_mapper))
    assert proc.returncode != 0
    assert "Assertion failed: stride does not match expected value." in proc.stderr
    assert "MAPPEROPT_RESULT" not in proc.stdout


def test_f_order_through_a_mapper_verifies(app, env, layout_mapper):
    proc = run(app, {**env, "STENCIL_TEST_LAYOUT": "SOA_F"}, *CI, *LEGION, "-mapper", str(layout_mapper))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert result_of(proc.stdout)["verified"] is True


@pytest.mark.skipif(not toolchain.cuda_enabled("auto"), reason="no nvcc, or Legion built without CUDA")
def test_cuda_variants_compile(app):
    """stencil.cu compiles for Hopper and links with stencil.cc built as a CUDA build (`-DMAPPEROPT_USE_CUDA`): the
    build the other tests of this file run (from the build cache); running the variants needs a GPU machine."""
    gpu_tasks = {t["name"] for t in describe_app("stencil", "ci")["tasks"] if "GPU" in t["variants"]}
    assert gpu_tasks == {"init_tile", "stencil", "increment"}, gpu_tasks
