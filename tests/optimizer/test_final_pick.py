"""The final comparison's pick: the start program competes with the top candidates, so that the final best is never
slower than the start as they are measured together.

The measurement is a stand-in here (what it returns is chosen, so nothing depends on timing or load); the real
interleaved measurement is exercised by tests/optimizer/test_tune_cli.py.
"""

from __future__ import annotations

import csv
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


FINAL = {"start": 9.0, "iter-5": 6.0, "iter-4": 5.0, "iter-3": 4.0, "default": 3.0}


def slow_start_store(tmp_path, monkeypatch) -> tuple[TuneStore, dict]:
    """(a store, the mappers the final comparison measures, filled in when it runs). The start (iteration 1) measured
    slowest in the loop, so it is not among the three top candidates; measured together at the end (`FINAL`) it is
    the fastest of all."""
    store = TuneStore.create(tmp_path, "circuit", SETTINGS)
    for i, value in enumerate((1.0, 2.0, 3.0, 4.0, 5.0), start=1):
        store.append(record(i, value))
    seen = {}

    def measure_together(app, mappers, rounds, out_dir, min_time_s=0, **options):
        seen.update(mappers)
        return {name: protocol.Measured(name, protocol.estimate([FINAL[name]] * 3), None, (), "GFLOPS")
                for name in mappers}

    monkeypatch.setattr(protocol, "measure_together", measure_together)
    return store, seen


def test_the_start_can_be_the_final_pick(tmp_path, monkeypatch, capsys):
    store, seen = slow_start_store(tmp_path, monkeypatch)
    summary = commands.final_comparison("circuit", store, rounds=3)
    assert set(seen) == set(FINAL) and seen["start"] == store.records[0].dsl
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


def test_history_and_plot_name_the_final_pick(tmp_path, monkeypatch):
    """The plot's best-so-far line and history.csv ended at iteration 5 while best.dsl was the start: the final pick
    is marked in both, so that they agree with best.dsl and summary.json."""
    store, _ = slow_start_store(tmp_path, monkeypatch)
    store.write_outputs()
    before = (store.root / "progress.png").read_bytes()
    assert store.best().iter == 5 and (store.root / "best.dsl").read_text() == store.records[4].dsl
    summary = commands.final_comparison("circuit", store, rounds=3)
    assert summary["best_iter"] == 1 and (store.root / "best.dsl").read_text() == store.records[0].dsl
    with (store.root / "history.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [r["final_pick"] for r in rows] == ["best.dsl", "", "", "", ""]
    marked = (store.root / "progress.png").read_bytes()
    store.write_outputs()  # the same plot without the pick: drawn alike each time, so the star is the difference
    assert (store.root / "progress.png").read_bytes() == before != marked
