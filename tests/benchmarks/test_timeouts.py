"""benchmarks/gpu/timeouts.py on a results folder of two Circuit evaluations: which limits and placements count as the
timed loop's."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Timed out: `calculate_new_currents` named CPU-first, a limit on a loop task.
TIMED_OUT = "Task * GPU,CPU;\nTask calculate_new_currents CPU,GPU;\nInstanceLimit update_voltages 2;\n"
# Finished: `Task * CPU` reaches only `update_voltages` (the other loop tasks are named GPU); the limit is on a setup
# task.
FINISHED = "Task * CPU;\nTask calculate_new_currents,distribute_charge GPU;\nInstanceLimit init_piece 1;\n"


def test_counts_limits_and_cpu_first_placements_of_loop_tasks_only(tmp_path):
    folder = tmp_path / "work" / "circuit" / "compare-0" / "evaluations"
    folder.mkdir(parents=True)
    for name, stage, status, dsl in (("a", "timeout", "failed", TIMED_OUT), ("b", None, "ok", FINISHED)):
        (folder / f"{name}.json").write_text(json.dumps({"status": status, "stage": stage, "dsl": dsl,
                                                         "settings": {"size": "gpu"}}))
    out = subprocess.run([sys.executable, "benchmarks/gpu/timeouts.py", "--results", str(tmp_path)], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    rows = [line.split() for line in out.splitlines()[1:]]
    assert rows == [["circuit", "gpu", "timed", "out", "1", "1", "1", "calculate_new_currents"],
                    ["circuit", "gpu", "finished", "1", "0", "1"]]


def test_a_folder_without_evaluations_is_an_error(tmp_path):
    run = subprocess.run([sys.executable, "benchmarks/gpu/timeouts.py", "--results", str(tmp_path)], cwd=ROOT,
                         capture_output=True, text=True)
    assert run.returncode == 1 and f"no evaluation of circuit, stencil, pennant under {tmp_path / 'work'}" in run.stderr
