"""The committed results folders of benchmarks/evaluate.py keep their schema: every saved unit names itself."""

import json
from pathlib import Path

from mapperopt.benchmarks import evaluate

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
