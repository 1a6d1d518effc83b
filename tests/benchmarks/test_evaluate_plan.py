"""benchmarks/evaluate.py and benchmarks/gpu/evaluate.sh: each call of evaluate.sh leaves a record in the results
folder and names a benchmark that failed to build, and every saved unit names itself."""

import json
import os
import subprocess
import sys
from pathlib import Path

from mapperopt.benchmarks import evaluate
from mapperopt.benchmarks.evaluate import default_plan, write_report

ENDPOINT = {"MAPPEROPT_LLM_BASE_URL": "http://127.0.0.1:9/v1", "MAPPEROPT_LLM_MODEL": "a-model"}
COMMITTED = ("reports/h200-eval", "reports/h100-eval")


def test_every_saved_unit_names_itself():
    """A unit's file holds its id in `unit` and a throughput's unit in `throughput_unit` (the H200's CPU run of
    Pennant had its zone-cycles/s where its id belongs, and no `needs` or `throughput_unit`: as `run_unit` wrote
    before `_run_cpu` kept the application's unit apart)."""
    for folder in COMMITTED:
        for path in sorted(Path(folder, "units").rglob("*.json")):
            saved = json.loads(path.read_text())
            assert saved["unit"] == path.stem and saved["schema"] == evaluate.SCHEMA, path
    cpu = {folder: json.loads(Path(folder, "units", "cpu-pennant-gpu.json").read_text()) for folder in COMMITTED}
    assert [list(saved) for saved in cpu.values()] == [list(cpu[COMMITTED[1]])] * 2
    assert {saved["throughput_unit"] for saved in cpu.values()} == {"zone-cycles/s"}


def _stub(folder: Path, name: str, script: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)


def test_evaluate_sh_names_a_failed_build_and_records_each_call(tmp_path):
    """evaluate.sh ignored its builds' exit status (a failed build showed only in build.log), and a call's times
    were kept nowhere but in hand-written notes: it names the benchmark, goes on, and appends a line to the results
    folder's calls.jsonl, which travels with it and which the report summarises."""
    stubs = tmp_path / "bin"
    stubs.mkdir()
    _stub(stubs, "nvidia-smi", 'case "$*" in *-L*) echo "GPU 0: NVIDIA H200 (UUID: GPU-0)";; '
                               '*) echo "NVIDIA H200";; esac\n')
    # `mapperopt build --cuda on <benchmark>`: Circuit's build fails, the others succeed
    _stub(stubs, "mapperopt", 'echo "building $4"; [ "$4" != circuit ] || { echo "error: nvcc failed" >&2; exit 1; }\n')
    results = tmp_path / "reports" / "h200-eval"
    plan = default_plan(benchmarks=["stencil"], sizes=["ci"], gpus=0, optimizers=["random"], iters=1, seeds=1,
                        long_iters=0, base_rounds=1, final_rounds=1, min_time_s=0.05)
    results.mkdir(parents=True)
    (results / "plan.json").write_text(json.dumps(plan))
    env = {**os.environ, "PATH": f"{stubs}:{Path(sys.executable).parent}:{os.environ['PATH']}",
           "RESULTS": str(results), "OUT": str(tmp_path / "out"), "STOP_AFTER": "600", "EVAL_ARGS": "--only base-"}
    for name in ENDPOINT:
        env.pop(name, None)
    done = subprocess.run(["bash", "benchmarks/gpu/evaluate.sh"], env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "build failed: circuit (its log: " in done.stdout, done.stdout
    assert "build failed: stencil" not in done.stdout
    assert "base-stencil-ci: ok" in done.stdout, done.stdout
    calls = [json.loads(line) for line in (results / "calls.jsonl").read_text().splitlines()]
    assert len(calls) == 1
    call = calls[0]
    assert call["gpu"] == "NVIDIA H200" and call["stop_after_s"] == 600 and call["exit_status"] == 0
    assert call["builds_failed"] == ["circuit"] and call["units_finished"] == ["base-stencil-ci"]
    assert call["eval_args"] == "--only base-" and 0 <= call["build_s"] <= 60
    assert call["start"] <= call["end"] and call["end"].endswith("Z")
    # the record travels with the results folder
    listed = subprocess.run(["tar", "-tzf", str(tmp_path / "out" / "h200-eval.tar.gz")], capture_output=True,
                            text=True, check=True).stdout.split()
    assert "h200-eval/calls.jsonl" in listed

    # a second call with nothing left: another line, no unit finished
    env["STOP_AFTER"] = "0"
    assert subprocess.run(["bash", "benchmarks/gpu/evaluate.sh"], env=env, capture_output=True,
                          timeout=300).returncode == 0
    calls = [json.loads(line) for line in (results / "calls.jsonl").read_text().splitlines()]
    assert len(calls) == 2 and calls[1]["units_finished"] == [] and calls[1]["stop_after_s"] == 0

    text = write_report(results, tmp_path / "report.md", notes={})
    how = text[text.index("## How it was run"):]
    assert "2 calls," in how and "in `calls.jsonl` of the results folder" in how, how
    assert f"| {call['start']} | {call['end']} | " in how and " | 600 | " in how
    assert " | circuit | NVIDIA H200 | 1 | 0 |" in how
