"""The final comparison's pick: the start program competes with the top candidates, so that the final best is never
slower than the start as they are measured together.

The measurement is a stand-in here (what it returns is chosen, so nothing depends on timing or load); the real
interleaved measurement is exercised by tests/optimizer/test_tune_cli.py.
"""

from __future__ import annotations

import json

from mapperopt.benchmarks import protocol
from mapperopt.optimizer import commands
from mapperopt.optimizer.base import IterationRecord
from mapperopt.optimizer.store import TuneStore

SETTINGS = {"size": "ci", "cpus": 1, "gpus": 0, "repeats": 1, "max_repeats": 1, "timeout_s": 60, "min_time_s": 0,
            "feedback_level": "full", "baseline": "default", "optimizer": "guided", "iters": 5}


def record(i: int, throughput: float) -> IterationRecord:
    return IterationRecord(iter=i, dsl=f"# program {i}\nTask * CPU;\n", key=f"k{i}", status="ok", stage=None,
                           category="performance", throughput=throughput, unit="GFLOPS",
                           best_throughput=throughput)


def test_the_start_can_be_the_final_pick(tmp_path, monkeypatch, capsys):
    # The start (iteration 1) measured slowest in the loop, so it is not among the three top candidates; measured
    # together at the end it is the fastest of all.
    store = TuneStore.create(tmp_path, "circuit", SETTINGS)
    for i, value in enumerate((1.0, 2.0, 3.0, 4.0, 5.0), start=1):
        store.append(record(i, value))
    final = {"start": 9.0, "iter-5": 6.0, "iter-4": 5.0, "iter-3": 4.0, "default": 3.0}
    seen = {}

    def measure_together(app, mappers, rounds, out_dir, min_time_s=0, **options):
        seen.update(mappers)
        return {name: protocol.Measured(name, protocol.estimate([final[name]] * 3), None, (), "GFLOPS")
                for name in mappers}

    monkeypatch.setattr(protocol, "measure_together", measure_together)
    summary = commands.final_comparison("circuit", store, rounds=3)
    assert set(seen) == set(final) and seen["start"] == store.records[0].dsl
    assert summary["best"] == "start" and summary["start"] == "start" and summary["best_iter"] == 1
    assert summary["best_dsl"] == store.records[0].dsl == (store.root / "best.dsl").read_text()
    assert json.loads((store.root / "summary.json").read_text())["best"] == "start"
    assert summary["vs"]["iter-5"]["ratio"] == 1.5 and "start" not in summary["vs"]
    from rich.console import Console

    commands._print_summary(Console(width=200), summary, "GFLOPS")
    out = capsys.readouterr().out
    assert "The best is the start program itself: tuning found nothing faster." in out
    assert "start (best)" in out
    assert "1.50x (1.50-1.50)" in out  # each ratio with its own interval, not only the throughputs' intervals
