"""Cannon, SUMMA and PUMMA on the GEMM layer (benchmarks/legion/gemm): CI-size runs with Legion's default mapper
and the expert DSL mapper on 1, 2 and 4 CPUs, both checks (full product, structured closed form), a product with
a step left out failing its check, --describe against the stored copies, and the BLAS layout failure that
AutoGuide explains and repairs (real runs)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import pytest

from mapperopt import toolchain
from mapperopt.autoguide import apply_edits, explain
from mapperopt.benchmarks import build_app, describe_app, load_config
from mapperopt.benchmarks.harness import run_benchmark
from mapperopt.benchmarks.userapp import app_from_command, discover
from mapperopt.compiler import compile_program
from mapperopt.dsl import parse
from mapperopt.dsl.formatter import format_program

ALGS = ["cannon", "summa", "pumma"]
CI = ["-n", "256", "-g", "4", "-iters", "1", "-warmup", "1"]
LEGION = ["-ll:util", "1", "-ll:csize", "256", "-logfile", "stderr"]
TASKS = ["taco_fill", "task_1", "task_2", "task_3", "init_cublas", "task_4", "taco_validate"]


@pytest.fixture(scope="module")
def bins() -> dict[str, Path]:
    return {alg: build_app(alg) for alg in ALGS}


@pytest.fixture(scope="module")
def env() -> dict[str, str]:
    return toolchain.runtime_env()


@pytest.fixture(scope="module")
def expert() -> Path:
    cfg = load_config("cannon")
    return compile_program(cfg.expert_dsl(), cfg.expert).so_path


def run(binary: Path, env: dict, *args: str, cpus: int = 1) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *args, "-ll:cpu", str(cpus), *LEGION], capture_output=True, text=True,
                          env=env, timeout=60)


def result_of(stdout: str) -> dict:
    lines = [line for line in stdout.splitlines() if line.startswith("MAPPEROPT_")]
    assert len(lines) == 1, stdout
    return json.loads(lines[0][len("MAPPEROPT_RESULT "):])


# Every algorithm with each mapper, and each mapper on 1, 2 and 4 CPUs (the expert's 1-D and 2-D block paths): one
# run per combination that takes a path of its own, not the whole grid (each run starts Legion, ~1 CPU-s).
@pytest.mark.parametrize("alg, mapper, cpus", [("cannon", "default", 1), ("summa", "default", 2),
                                               ("pumma", "default", 4), ("cannon", "expert", 4),
                                               ("summa", "expert", 1), ("pumma", "expert", 2)])
def test_ci_size_verifies(bins, env, expert, alg, mapper, cpus, tmp_path):
    args = list(CI)
    if mapper == "expert":
        args += ["-mapper", str(expert), "-mapper-trace", str(tmp_path / "trace.jsonl")]
    proc = run(bins[alg], env, *args, cpus=cpus)
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = result_of(proc.stdout)
    assert res["app"] == alg and res["verified"] is True and res["unit"] == "GFLOPS"
    assert res["check"] == {"kind": "full_product", "max_abs_err": 0}
    assert res["iterations"] == 1 and res["warmup"] == 1
    assert res["throughput"] == pytest.approx(2 * 256**3 / res["time_s"] / 1e9, rel=1e-6)
    assert proc.stdout.count("Execution time: ") == 2
    if mapper == "expert":
        # The expert's 2-D block decomposition: every CPU computes, each on one block of the 4 x 4 tile grid, with
        # row-major tiles.
        records = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
        gemms = [r for r in records if r["task"] == "task_4"]
        assert len(gemms) == 2 * 4 * 16   # 2 products x 4 steps x 16 points
        blocks: dict[int, set] = {}
        for r in gemms:
            assert {reg["layout"]["dims"] for reg in r["regions"]} == {"C"}
            blocks.setdefault(r["proc"]["index"], set()).add(
                (r["point"][0] * 2 // 4, r["point"][1] * 2 // 4) if cpus == 4 else r["point"][0] * cpus // 4)
        assert sorted(blocks) == list(range(cpus))
        assert all(len(b) == 1 for b in blocks.values()) and len(set.union(*blocks.values())) == cpus


@pytest.mark.parametrize("alg, check", [("cannon", "structured"), ("summa", "full"), ("pumma", "structured")])
def test_uneven_tiles_and_both_checks_verify(bins, env, alg, check):
    proc = run(bins[alg], env, "-n", "101", "-g", "3", "-iters", "1", "-warmup", "1", "-check", check, cpus=2)
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = result_of(proc.stdout)
    assert res["verified"] is True
    assert res["check"]["kind"] == {"full": "full_product", "structured": "structured"}[check]


@pytest.mark.parametrize("mapper, cpus", [("default", 1), ("expert", 2)])
def test_task_4_reducing_into_a_verifies(bins, env, expert, mapper, cpus):
    """-reduce: task_4's A is a float64 sum reduction (what the 3-D algorithms need), through both mappers."""
    mapper_args = ["-mapper", str(expert)] if mapper == "expert" else []
    proc = run(bins["summa"], env, *CI, "-reduce", *mapper_args, cpus=cpus)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert result_of(proc.stdout)["verified"] is True
    proc = run(bins["summa"], env, *CI, "-reduce", "-test-skip-step", *mapper_args, cpus=cpus)
    assert proc.returncode == 2 and result_of(proc.stdout)["verified"] is False


@pytest.mark.parametrize("alg, check", [("cannon", "full"), ("pumma", "structured")])
def test_a_missing_step_fails_the_check(bins, env, alg, check):
    proc = run(bins[alg], env, *CI, "-check", check, "-test-skip-step")
    assert proc.returncode == 2, proc.stderr[-2000:]
    res = result_of(proc.stdout)
    assert res["verified"] is False and res["check"]["mismatches"] > 0
    first = res["check"]["first_mismatch"]
    assert first["value"] != first["expected"]


def test_bad_flags_are_usage_errors(bins, env):
    proc = run(bins["summa"], env, "-n", "3", "-g", "4")
    assert proc.returncode == 1 and "-n must be at least -g" in proc.stderr
    proc = run(bins["summa"], env, "-check", "half")
    assert proc.returncode == 1 and "-check expects" in proc.stderr


def described(alg: str) -> dict:
    """The live ci description of `alg`, asserted to list TASKS and to equal the stored copy (CPU variants only in a
    CPU-only build)."""
    live = describe_app(alg, "ci")
    assert [t["name"] for t in live["tasks"]] == TASKS
    stored = load_config(alg).stored_description()
    if toolchain.find_cublas() is None or not toolchain.cuda_enabled("auto"):  # a CPU-only build
        stored = {**stored, "tasks": [{**t, "variants": ["CPU"]} for t in stored["tasks"]]}
    assert live == stored
    return live


@pytest.mark.parametrize("alg", ALGS)
def test_describe_matches_the_stored_copy_and_the_size(alg):
    live = described(alg)
    tasks = {t["name"]: t for t in live["tasks"]}
    assert [(r["names"], r["privilege"]) for r in tasks["task_4"]["regions"]] == [
        (["A_tiles", "A"], "read_write"), (["B_tiles", "B"], "read_only"), (["C_tiles", "C"], "read_only")]
    assert all(t["domain"] == [4, 4] and t["launch"] == "index" for t in live["tasks"])
    assert all(t["domain"] == [4, 4] for t in describe_app(alg, "gpu")["tasks"])


def test_described_layouts_are_those_the_variants_register(bins):
    """Each requirement's dimension order in --describe (and its stored copy, which `check` reads) is the one the
    task's variants register, as the recording mapper reads it from Legion (discovery): taco_validate reads A through
    its strides and registers none, so `check` must not say that it needs C_order."""
    app = app_from_command(f"{bins['cannon']} -n 64 -g 2 -iters 1 -warmup 1")
    registered = {t["name"]: [r.get("layout") for r in t["regions"]] for t in discover(app)["tasks"]}
    layouts = {t["name"]: [r.get("layout") for r in t["regions"]] for t in described("cannon")["tasks"]}
    assert layouts == {name: registered[name] for name in layouts}
    assert layouts["taco_validate"] == [None] and layouts["task_4"] == ["C_order"] * 3


def test_the_blas_comes_from_the_installed_wheel(bins):
    blas = toolchain.find_blas()
    assert (blas.include_dir / "cblas.h").is_file() and blas.lib == "scipy_openblas"
    linked = subprocess.run(["ldd", str(bins["cannon"])], capture_output=True, text=True).stdout
    assert str(blas.lib_dir / "libscipy_openblas.so") in linked


def test_expert_mapper_names_exist():
    cfg = load_config("summa")
    program = parse(cfg.expert_dsl(), cfg.expert)
    named = {ident.name for stmt in program.statements
             if getattr(stmt, "tasks", None) is not None and not stmt.tasks.is_wildcard for ident in stmt.tasks.names}
    assert named == set(TASKS)   # the expert maps every task of the applications


def test_f_order_is_refused_by_check_and_aborts_task_4_without_it(tmp_path, monkeypatch):
    """The expert mapper with column-major tiles: check refuses it (E223, the description says task_4 needs C_order)
    and AutoGuide's edit makes a mapper that verifies. Compiled without the application's description (what check
    cannot see: a mapper written for another program), task_4 aborts with DGEMM's message, never wrong numbers, and
    AutoGuide's edit gives back the expert."""
    cfg = load_config("pumma")
    expert_text = cfg.expert_dsl()
    bad = expert_text.replace("SOA C_order", "SOA F_order")
    assert bad != expert_text
    refused = run_benchmark("pumma", bad, out_dir=tmp_path / "refused")
    assert not refused.ok and refused.stage == "check" and "error[E223]" in refused.reason, refused.reason
    feedback = explain(refused)
    assert feedback.rule == "dsl-e223-rejected-layout" and feedback.edits
    checked = run_benchmark("pumma", format_program(apply_edits(parse(bad, "bad.dsl"), feedback.edits)),
                            min_time_s=0, out_dir=tmp_path / "checked")
    assert checked.ok and checked.throughput > 0

    import mapperopt.compiler as compiler

    compile_program = compiler.compile_program
    monkeypatch.setattr(compiler, "compile_program",
                        lambda dsl, filename, app=None, machine=None: compile_program(dsl, filename, machine=machine))
    failed = run_benchmark("pumma", bad, out_dir=tmp_path / "bad")
    assert not failed.ok and failed.stage == "run"
    assert "not row-major" in failed.reason
    feedback = explain(failed)
    assert feedback.rule == "dgemm-illegal-parameter" and feedback.category == "layout.blas"
    assert "parameter 8" in feedback.explanation
    assert [e.op for e in feedback.edits] == ["set_layout_order"]
    fixed = format_program(apply_edits(parse(bad, "bad.dsl"), feedback.edits))
    # an edited program keeps no source layout (aligned comment columns): compare with the expert's canonical text
    assert fixed == format_program(dataclasses.replace(parse(expert_text, cfg.expert), source=""))


@pytest.mark.skipif(not toolchain.cuda_enabled("auto") or toolchain.find_cublas() is None,
                    reason="no nvcc, Legion built without CUDA, or no cuBLAS in the CUDA toolkit here")
def test_cuda_variants_compile(bins):
    """gemm.cu (taco_fill, task_4 on cuBLAS, init_cublas) compiles for Hopper and links: the build the other tests of
    this file run (from the build cache); running the variants needs a GPU machine."""
    for alg in bins:
        gpu = {t["name"] for t in describe_app(alg, "ci")["tasks"] if "GPU" in t["variants"]}
        assert gpu == {"taco_fill", "task_1", "task_2", "task_3", "init_cublas", "task_4"}, alg
