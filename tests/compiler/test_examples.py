"""All example mappers of dsl-reference.md §14 (and the expert mappers in configs/) compile and run in a real Legion
application on the CPU: the Circuit ones in Circuit, the Stencil one in Stencil (each decision compared with the
evaluator), the other experts (written for the original programs, whose task names mapperopt's benchmarks lack) in the
test application, where their load phase runs and their statements for unknown tasks stay inert. CPU-only runs use the
portable prelude of configs/*.dsl."""

from __future__ import annotations

import json
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest

from compiler_support import BASE_FLAGS, EXAMPLES, ROOT, machine, run, build_testapp
from mapperopt import toolchain
from mapperopt.benchmarks import build_app
from mapperopt.compiler import compile_program
from mapperopt.descriptions import AppDescription
from mapperopt.dsl import Evaluator, parse

APPS = {  # name -> CI-size arguments from configs/<name>.yaml
    "circuit": ("-p", "4", "-pps", "2", "-npp", "100", "-wpp", "200", "-l", "3", "-i", "50"),
    "stencil": ("-nx", "68", "-ny", "68", "-ntx", "2", "-nty", "2", "-tsteps", "4"),
}
LEGION = ("-ll:cpu", "2")
CIRCUIT = sorted(EXAMPLES.glob("s*.dsl")) + [EXAMPLES / "fig_a5.dsl", ROOT / "configs" / "circuit.dsl"]
STENCIL = [ROOT / "configs" / "stencil.dsl"]
OTHERS = [p for p in sorted(EXAMPLES.glob("e*.dsl")) if p.name not in ("e1_circuit.dsl", "e2_stencil.dsl")]


def portable(text: str) -> str:
    """The CPU-only prelude of configs/*.dsl: accelerator placement falls back to the CPU model."""
    return text.replace("mgpu = Machine(GPU);", "mgpu = Machine(GPU).volume > 0 ? Machine(GPU) : Machine(CPU);")


@lru_cache(maxsize=None)
def benchmark(name: str) -> tuple[Path, AppDescription]:
    exe = build_app(name)  # the build the harness runs (shared through the build cache)
    out = subprocess.run([str(exe), "--describe", *APPS[name]], capture_output=True, text=True, check=True,
                         env=toolchain.runtime_env())
    return exe, AppDescription.from_json(out.stdout)


def run_benchmark(name: str, path: Path, tmp_path: Path):
    exe, app = benchmark(name)
    cm = compile_program(portable(path.read_text()), path.name, app=app)
    trace = tmp_path / "trace.jsonl"
    proc = subprocess.run([str(exe), *APPS[name], *LEGION, *BASE_FLAGS, "-mapper", str(cm.so_path),
                           "-mapper-trace", str(trace)], capture_output=True, text=True, timeout=120,
                          env=toolchain.runtime_env())
    assert proc.returncode == 0 and '"verified": true' in proc.stdout, proc.stderr[-3000:]
    records = [json.loads(ln) for ln in trace.read_text().splitlines()]
    ev = Evaluator(parse(cm.dsl_text, path.name), machine(*LEGION), app)
    for rec in records:
        if app.task(rec["task"]) is None:  # the top-level task, which the description does not list
            assert rec["task"] == "main" and rec["placed_by"] == "default"
            continue
        point = tuple(rec["point"]) if rec["point"] is not None else None
        domain = tuple(rec["domain"]) if rec["domain"] is not None else None
        decided = ev.decide(rec["task"], point, domain)
        if decided["placed_by"] == "default":  # Legion's default mapping's pick, which the evaluator leaves open
            decided["proc"] = {**decided["proc"], "node": rec["proc"]["node"], "index": rec["proc"]["index"]}
            decided["candidates"] = rec["candidates"]
        assert rec == decided, rec["task"]
    return records


@pytest.mark.parametrize("path", CIRCUIT, ids=lambda p: p.stem)
def test_circuit_mappers_run_in_circuit(path, tmp_path):
    records = run_benchmark("circuit", path, tmp_path)
    assert {r["task"] for r in records} >= {"calculate_new_currents", "distribute_charge", "update_voltages"}


@pytest.mark.parametrize("path", STENCIL, ids=lambda p: p.stem)
def test_stencil_mapper_runs_in_stencil(path, tmp_path):
    records = run_benchmark("stencil", path, tmp_path)
    placed = [r for r in records if r["task"] == "stencil"]
    assert placed and all(r["placed_by"] == "map" for r in placed)
    assert {reg["layout"]["dims"] for r in placed for reg in r["regions"]} == {"F"}


@pytest.mark.parametrize("path", OTHERS, ids=lambda p: p.stem)
def test_other_expert_mappers_load_and_run(path, tmp_path):
    cm = compile_program(portable(path.read_text()), path.name)
    result = run(build_testapp(), cm.so_path, tmp_path, legion=LEGION)
    assert result.ok(), result.stderr[-3000:]
    assert not [ln for ln in result.mapper_errors() if " error " in ln]
    assert result.trace
