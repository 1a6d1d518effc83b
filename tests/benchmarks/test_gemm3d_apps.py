"""Johnson, Solomonik 2.5-D and COSMA on the GEMM layer (benchmarks/legion/gemm/gemm3d.cc): CI-size runs with
Legion's default mapper and the expert DSL mappers on 1, 2, 4 and 8 CPUs (full-product check), COSMA's grid
following the processor count, a mapper leaving a processor idle, a missing layer failing the check, and
--describe against the stored copies (real runs; helpers shared with test_gemm_apps)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_gemm_apps import TASKS, described, env, result_of, run  # noqa: F401  (env is a fixture)

from mapperopt.benchmarks import build_app, describe_app, load_config
from mapperopt.compiler import compile_program
from mapperopt.dsl import parse

ALGS = ["johnson", "solomonik", "cosma"]
GRIDS = {"johnson": ["-gdim", "2"], "solomonik": ["-rpoc", "2", "-c", "2", "-rpoc3", "2"], "cosma": []}
CI = ["-n", "256", "-iters", "1", "-warmup", "1"]
# COSMA's grid for 1, 2, 4 and 8 processors (its table; one point for one processor).
COSMA_GRIDS = {1: (1, 1, 1), 2: (2, 1, 1), 4: (1, 2, 2), 8: (2, 2, 2)}


@pytest.fixture(scope="module")
def bins() -> dict[str, Path]:
    return {alg: build_app(alg) for alg in ALGS}


@pytest.fixture(scope="module")
def experts() -> dict[str, Path]:
    out = {}
    for alg in ALGS:
        cfg = load_config(alg)
        out[alg] = compile_program(cfg.expert_dsl(), cfg.expert).so_path
    return out


def task_4_records(trace: Path) -> list[dict]:
    return [r for r in map(json.loads, trace.read_text().splitlines()) if r["task"] == "task_4"]


# Every algorithm with each mapper, Legion's default mapper on 1, 2, 4 and 8 CPUs, the expert on 2, 4 and 8, and
# COSMA's four grids: one run per combination that takes a path of its own, not the whole grid (each run starts
# Legion, ~1 CPU-s).
@pytest.mark.parametrize("alg, mapper, cpus", [("johnson", "default", 8), ("johnson", "expert", 4),
                                               ("solomonik", "default", 2), ("solomonik", "expert", 8),
                                               ("cosma", "default", 1), ("cosma", "expert", 2),
                                               ("cosma", "default", 4), ("cosma", "expert", 8)])
def test_ci_size_verifies(bins, env, experts, alg, mapper, cpus, tmp_path):
    args = CI + GRIDS[alg]
    if mapper == "expert":
        args += ["-mapper", str(experts[alg]), "-mapper-trace", str(tmp_path / "trace.jsonl")]
    proc = run(bins[alg], env, *args, cpus=cpus)
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = result_of(proc.stdout)
    assert res["app"] == alg and res["verified"] is True
    assert res["check"] == {"kind": "full_product", "max_abs_err": 0}
    assert proc.stdout.count("Execution time: ") == 2
    grid = COSMA_GRIDS[cpus] if alg == "cosma" else (2, 2, 2)
    assert "grid %d x %d x %d" % grid in proc.stdout
    if mapper == "expert":
        # Every task_4 point of both products ran (steps x points), and the expert's 3-D decomposition keeps every
        # processor busy when there are at least as many points as processors.
        gemms = task_4_records(tmp_path / "trace.jsonl")
        points = grid[0] * grid[1] * grid[2]
        assert len(gemms) == 2 * (2 if alg == "solomonik" else 1) * points
        assert len({r["proc"]["index"] for r in gemms}) == min(cpus, points)
        assert all(r["regions"][0]["layout"]["dims"] == "C" for r in gemms)


def test_a_mapper_leaving_a_processor_idle_verifies(bins, env, tmp_path):
    """task_4's 3-D index map uses three of four CPUs: the partial sums still reach A."""
    cfg = load_config("johnson")
    text = cfg.expert_dsl() + (
        "def three_of_four(Task task) { p = task.ipoint; return mall[(p[0] + p[1] + p[2]) % (mall.size[0] - 1)]; }\n"
        "IndexTaskMap task_4 three_of_four;\n")
    so = compile_program(text, "idle.dsl").so_path
    trace = tmp_path / "trace.jsonl"
    proc = run(bins["johnson"], env, *CI, "-gdim", "2", "-mapper", str(so), "-mapper-trace", str(trace), cpus=4)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert result_of(proc.stdout)["verified"] is True
    assert {r["proc"]["index"] for r in task_4_records(trace)} == {0, 1, 2}


def test_collect_memory_on_the_placement_that_folds_the_partial_sums_keeps_the_product(bins, env, tmp_path):
    """task_1 after the product reads A and so receives task_4's partial sums; `CollectMemory task_1 *` must not
    let that instance go untracked (then nothing would hold the sums, and taco_validate, reading A from another
    memory, would see an instance never written: the wrong result of GPU runs, where A lives in FBMEM and is
    checked in SYSMEM). Here A is checked in registered memory, so that its check also needs a copy."""
    text = ("Task * CPU;\nRegion * * CPU SYSMEM;\nRegion taco_validate A_tiles CPU RDMEM;\n"
            "Layout * * * SOA C_order;\nCollectMemory task_1 *;\nCollectMemory task_4 *;\n")
    so = compile_program(text, "collect.dsl").so_path
    trace = tmp_path / "trace.jsonl"
    proc = run(bins["johnson"], env, *CI, "-gdim", "2", "-ll:rsize", "16", "-mapper", str(so),
               "-mapper-trace", str(trace), cpus=2)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert result_of(proc.stdout)["verified"] is True
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    # The reads of B and C are still collected; A's placement only before the first product was launched.
    assert {tuple(r["collect"]) for r in records if r["task"] == "task_4"} == {(1, 2)}
    assert [r["collect"] for r in records if r["task"] == "task_1"][-4:] == [[]] * 4
    notes = [ln for ln in proc.stderr.splitlines() if "R457" in ln]
    assert len(notes) == 1 and "requirement 0 of task 'task_1' stays tracked: task 'task_4' reduces" in notes[0]


@pytest.mark.parametrize("alg, check", [("solomonik", "full"), ("cosma", "structured")])
def test_a_missing_layer_fails_the_check(bins, env, alg, check):
    proc = run(bins[alg], env, *CI, *GRIDS[alg], "-check", check, "-test-skip-step", cpus=4)
    assert proc.returncode == 2, proc.stderr[-2000:]
    res = result_of(proc.stdout)
    assert res["verified"] is False and res["check"]["mismatches"] > 0


def test_bad_grid_flags_are_usage_errors(bins, env):
    proc = run(bins["cosma"], env, "-gx", "2", "-gy", "2")
    assert proc.returncode == 1 and "-gx, -gy and -gz go together" in proc.stderr
    proc = run(bins["johnson"], env, "-n", "4", "-gdim", "5")
    assert proc.returncode == 1 and "-n must be at least every tile count" in proc.stderr


@pytest.mark.parametrize("alg", ALGS)
def test_describe_matches_the_stored_copy(alg):
    live = described(alg)
    tasks = {t["name"]: t for t in live["tasks"]}
    assert tasks["task_4"]["regions"][0]["privilege"] == "reduce"
    assert tasks["task_4"]["regions"][0]["redop"] == "sum_f64"
    assert len(describe_app(alg, "gpu")["tasks"][5]["domain"]) == 3
    # The expert mapper names only tasks of the application.
    program = parse(load_config(alg).expert_dsl(), alg)
    named = {i.name for s in program.statements
             if getattr(s, "tasks", None) is not None and not s.tasks.is_wildcard for i in s.tasks.names}
    assert named == set(TASKS)
