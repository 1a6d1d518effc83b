"""The Circuit application (benchmarks/legion/circuit): builds it, runs the CI size with Legion's default mapper,
checks the result line, that a corrupted run fails verification, and that `--describe` gives the names and the
requirement order of docs/running.md."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mapperopt import toolchain
from mapperopt.benchmarks import build_app, describe_app

ROOT = Path(__file__).resolve().parents[2]
CI_FLAGS = ["-p", "4", "-pps", "2", "-npp", "100", "-wpp", "200", "-l", "3", "-i", "50"]
LEGION_FLAGS = ["-ll:cpu", "1", "-ll:util", "1", "-logfile", "stderr"]


@pytest.fixture(scope="module")
def circuit_bin() -> Path:
    try:
        toolchain.find_legion()
    except Exception as err:  # noqa: BLE001 - no Legion here means nothing to test
        pytest.skip(f"Legion not available: {err}")
    return build_app("circuit")


def run_app(binary: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=timeout,
                          env=toolchain.runtime_env())


def result_line(stdout: str) -> dict:
    lines = [line for line in stdout.splitlines() if line.startswith("MAPPEROPT_")]
    assert len(lines) == 1, stdout
    assert lines[0].startswith("MAPPEROPT_RESULT ")
    return json.loads(lines[0][len("MAPPEROPT_RESULT "):])


@pytest.fixture(scope="module")
def ci_run(circuit_bin) -> subprocess.CompletedProcess:
    """The CI size on one CPU, run once for the tests that read it."""
    return run_app(circuit_bin, *CI_FLAGS, *LEGION_FLAGS)


def test_ci_size_verifies_against_reference(ci_run):
    proc = ci_run
    assert proc.returncode == 0, proc.stderr
    for human in ("INIT TIME = ", "ELAPSED TIME = ", "GFLOPS = "):
        assert human in proc.stdout
    result = result_line(proc.stdout)
    assert result["schema"] == "mapperopt.result/1"
    assert result["app"] == "circuit"
    assert result["verified"] is True
    assert result["unit"] == "GFLOPS"
    assert result["iterations"] == 3
    assert result["warmup"] == 2 and result["after"] == 0  # no -prune
    assert result["time_s"] > 0 and result["throughput"] > 0
    check = result["check"]
    assert check["kind"] == "reference"
    assert check["nonfinite"] == 0
    assert check["rel_err_voltage"] <= 1e-4 and check["rel_err_current"] <= 1e-4
    # GFLOPS = 1e-9 · [W·96·steps + 4W + 4N] · loops / time (docs/running.md)
    flops = (800 * 96 * 50 + 4 * 800 + 4 * 400) * 3
    assert result["throughput"] == pytest.approx(1e-9 * flops / result["time_s"], rel=1e-3)


def test_two_cpus_safe_mapper_same_sums(circuit_bin, ci_run):
    """Index launches spread over two CPUs under -lg:safe_mapper give the same answer."""
    one = result_line(ci_run.stdout)
    proc = run_app(circuit_bin, *CI_FLAGS, "-ll:cpu", "2", "-ll:util", "1", "-lg:safe_mapper", "-logfile", "stderr")
    assert proc.returncode == 0, proc.stderr
    two = result_line(proc.stdout)
    assert two["verified"] is True
    assert two["check"]["sum_voltage"] == pytest.approx(one["check"]["sum_voltage"], rel=1e-6)
    assert two["check"]["sum_current"] == pytest.approx(one["check"]["sum_current"], rel=1e-6)


def test_corrupted_run_fails_verification(circuit_bin):
    proc = run_app(circuit_bin, *CI_FLAGS, "-test-corrupt", *LEGION_FLAGS)
    assert proc.returncode == 2, proc.stderr
    result = result_line(proc.stdout)
    assert result["verified"] is False
    assert "sum_voltage" in result["check"]["mismatch"]


def test_bad_flags_are_usage_errors(circuit_bin):
    proc = run_app(circuit_bin, "-p", "4", "-pps", "3", "--describe")
    assert proc.returncode == 1
    assert "-pps" in proc.stderr


EXPECTED_REQUIREMENTS = {  # docs/running.md: (nearest name, privilege) in requirement order
    "init_piece": [("rp_private", "write_discard"), ("rp_shared", "write_discard"), ("rp_wires", "write_discard")],
    "init_pointers": [("rp_wires", "write_discard")],
    "calculate_new_currents": [("rp_private", "read_only"), ("rp_shared", "read_only"), ("rp_ghost", "read_only"),
                               ("rp_wires", "read_only"), ("rp_wires", "read_write")],
    "distribute_charge": [("rp_private", "read_write"), ("rp_shared", "reduce"), ("rp_ghost", "reduce"),
                          ("rp_wires", "read_only")],
    "update_voltages": [("rp_private", "read_write"), ("rp_shared", "read_write"), ("rp_private", "read_only"),
                        ("rp_shared", "read_only")],
    "check_circuit": [("all_nodes", "read_only"), ("all_wires", "read_only")],
}
CURRENTS = [f"current_{i}" for i in range(10)]
VOLTAGES = [f"voltage_{i}" for i in range(1, 10)]
NODE_FIELDS = ["node_cap", "leakage", "charge", "node_voltage"]


def test_describe_names_and_requirement_order(circuit_bin):
    proc = run_app(circuit_bin, "-p", "8", "-pps", "2", "--describe")
    assert proc.returncode == 0, proc.stderr
    desc = json.loads(proc.stdout)
    assert desc["schema"] == "mapperopt.app/1" and desc["app"] == "circuit"
    tasks = {t["name"]: t for t in desc["tasks"]}
    assert set(EXPECTED_REQUIREMENTS) <= set(tasks)
    for name, expected in EXPECTED_REQUIREMENTS.items():
        task = tasks[name]
        got = [(r["names"][0], r["privilege"]) for r in task["regions"]]
        assert got == expected, name
        assert [r["index"] for r in task["regions"]] == list(range(len(expected)))
        assert "CPU" in task["variants"]
        if name == "check_circuit":
            assert task["launch"] == "single" and task["domain"] is None
        else:
            assert task["launch"] == "index" and task["domain"] == [4]
        assert task["parent"] == "main"
    for name in ("calculate_new_currents", "distribute_charge", "update_voltages"):
        assert set(tasks[name]["variants"]) <= {"CPU", "GPU"}
    for name in ("init_piece", "init_pointers", "check_circuit"):
        assert tasks[name]["variants"] == ["CPU"]
    cnc = tasks["calculate_new_currents"]["regions"]
    assert cnc[0]["names"] == ["rp_private", "all_private", "rp_all_nodes", "all_nodes"]
    assert cnc[1]["names"] == ["rp_shared", "all_shared", "rp_all_nodes", "all_nodes"]
    assert cnc[2]["names"] == ["rp_ghost", "all_shared", "rp_all_nodes", "all_nodes"]
    assert cnc[3]["names"] == ["rp_wires", "all_wires"]
    assert cnc[3]["fields"] == ["in_ptr", "out_ptr", "inductance", "resistance", "wire_cap"]
    assert cnc[4]["fields"] == CURRENTS + VOLTAGES
    assert tasks["init_piece"]["regions"][0]["fields"] == NODE_FIELDS
    assert tasks["init_piece"]["regions"][2]["fields"] == ["inductance", "resistance", "wire_cap"] + CURRENTS + VOLTAGES
    dc = tasks["distribute_charge"]["regions"]
    assert [r["fields"] for r in dc[:3]] == [["charge"]] * 3
    assert dc[1]["redop"] == "sum_f32" and dc[2]["redop"] == "sum_f32"
    assert dc[3]["fields"] == ["in_ptr", "out_ptr", "current_0", "current_9"]
    uv = tasks["update_voltages"]["regions"]
    assert [r["fields"] for r in uv] == [["node_voltage", "charge"]] * 2 + [["node_cap", "leakage"]] * 2
    assert tasks["check_circuit"]["regions"][0]["fields"] == ["node_voltage"]
    assert tasks["check_circuit"]["regions"][1]["fields"] == CURRENTS
    tree = {(n["name"], n["kind"], n["parent"]) for n in desc["region_tree"]}
    assert tree == {
        ("all_nodes", "region", None), ("rp_all_nodes", "partition", "all_nodes"),
        ("all_private", "region", "rp_all_nodes"), ("all_shared", "region", "rp_all_nodes"),
        ("rp_private", "partition", "all_private"), ("rp_shared", "partition", "all_shared"),
        ("rp_ghost", "partition", "all_shared"), ("all_wires", "region", None),
        ("rp_wires", "partition", "all_wires"),
    }


@pytest.mark.skipif(not toolchain.cuda_enabled("auto"), reason="no nvcc, or Legion built without CUDA")
def test_cuda_variants_compile(circuit_bin):
    """circuit.cu (the GPU variants) compiles for Hopper and links: the build the other tests of this file run (from
    the build cache); running the variants needs a GPU machine."""
    gpu = {t["name"] for t in describe_app("circuit", "ci")["tasks"] if "GPU" in t["variants"]}
    assert {"calculate_new_currents", "distribute_charge", "update_voltages"} <= gpu
