"""The final comparison's pick: the start program competes with the top candidates, so that the final best is never
slower than the start as they are measured together.

The measurement is a stand-in here (what it returns is chosen, so nothing depends on timing or load); the real
interleaved measurement is exercised by tests/optimizer/test_tune_cli.py.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re

import pytest

from mapperopt.benchmarks import protocol
from mapperopt.optimizer import commands
from mapperopt.optimizer.base import IterationRecord
from mapperopt.optimizer.store import TuneStore

SETTINGS = {"size": "ci", "cpus": 1, "gpus": 0, "repeats": 1, "max_repeats": 1, "timeout_s": 60, "min_time_s": 0,
            "feedback_level": "suggest", "baseline": "default", "optimizer": "guided", "iters": 5}


def record(i: int, throughput: float) -> IterationRecord:
    return IterationRecord(iter=i, dsl=f"# program {i}\nTask * CPU;\n", key=f"k{i}", status="ok", stage=None,
                           category="performance", throughput=throughput, unit="GFLOPS",
                           best_throughput=throughput)


FINAL = {"iter-1": 9.0, "iter-5": 6.0, "iter-4": 5.0, "iter-3": 4.0, "default": 3.0}


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
    # Not a top candidate, the start competes under its iteration's name (one label in every table)
    assert set(seen) == set(FINAL) and seen["iter-1"] == store.records[0].dsl
    assert summary["best"] == "iter-1" and summary["start"] == "iter-1" and summary["best_iter"] == 1
    assert summary["best_dsl"] == store.records[0].dsl == (store.root / "best.dsl").read_text()
    assert json.loads((store.root / "summary.json").read_text())["best"] == "iter-1"
    assert summary["vs"]["iter-5"]["ratio"] == 1.5 and "iter-1" not in summary["vs"]
    from rich.console import Console

    commands._print_summary(Console(width=200), summary, "GFLOPS")
    out = capsys.readouterr().out
    assert "The best is the start program (iter-1) itself: tuning found nothing faster." in out
    assert "iter-1 (start, best)" in out
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


def noisy_store(tmp_path, monkeypatch, final: dict[str, list[float]]) -> TuneStore:
    """A store whose final comparison measures `final` (name -> the executions' throughputs) at 0.2 s each."""
    store = TuneStore.create(tmp_path, "circuit", {**SETTINGS, "start": "default"})
    for i, value in enumerate((1.0, 2.0), start=1):
        store.append(record(i, value))

    def measure_together(app, mappers, rounds, out_dir, min_time_s=0, **options):
        return {name: protocol.Measured(name, protocol.estimate(final[name]), None, (), "GFLOPS", 0.2)
                for name in mappers}

    monkeypatch.setattr(protocol, "measure_together", measure_together)
    return store


def printed(summary: dict, **options) -> str:
    from rich.console import Console

    console = Console(width=400, record=True)
    commands._print_summary(console, summary, "GFLOPS", **options)
    return console.export_text()


def test_a_ratio_from_noisy_measurements_carries_the_warning(tmp_path, monkeypatch):
    """On a loaded machine each mapper's executions scatter widely, and a ratio of two such measurements can come
    out 'significant' all the same: its line says that the measurements are noisy, after a line naming them with
    their interval, the target and what to do; the short executions are named too."""
    final = {"iter-2": [10.0, 13.0, 7.5, 11.5, 8.5], "iter-1": [9.8, 10.1, 10.0, 9.9, 10.2],
             "default": [5.0, 6.5, 3.8, 5.8, 4.2]}
    summary = commands.final_comparison("circuit", noisy_store(tmp_path, monkeypatch, final), rounds=5)
    assert summary["best"] == "iter-2" and summary["measured"]["default"]["time_s"] == 0.2
    vs = summary["vs"]["default"]
    assert vs["significant"]  # the premise: the statistics call it significant
    out = printed(summary)
    noisy = protocol.estimate(final["default"])
    assert "Noisy measurement: the 90 % interval of the trimmed mean is iter-2 ±" in out
    assert f"default ±{100 * noisy.half_width:.0f} % after 5 executions" in out and "iter-1 ±" not in out
    assert "measure again with a higher --final-rounds, a larger --size" in out
    assert "Short measurement: iter-2 0.2 s, iter-1 0.2 s, default 0.2 s measured per execution" in out
    line = next(l for l in out.splitlines() if l.startswith("Best (iter-2) vs default:"))
    assert f"{vs['ratio']:.2f}x" in line  # the figure itself is kept
    # Not "significant" and then "do not read this as a real difference": the rule's reason, and where the Noisy
    # measurement line says what to do (its advice, once repeated in each such line).
    assert "significant" not in line and "clear of 1, from noisy measurements)" in line, line
    wide = f"iter-2's ±{100 * summary_estimate(summary, 'iter-2').half_width:.0f} % and default's ±" \
           f"{100 * noisy.half_width:.0f} % (above)"
    assert (f"Not counted as a difference: {wide} exceed the ±10 % within which a measurement's difference counts, "
            "as a changing load moves such measurements more than their intervals show") in line, line
    assert line.endswith("(Noisy measurement above says how to measure again)."), line
    assert out.count("quieter machine") == 1, out  # the Noisy measurement line's


def test_a_noisy_side_just_above_the_target_is_not_printed_at_it(tmp_path, monkeypatch):
    """A half width of 10.2 % printed as "±10 %" beside "exceed the ±10 %" read as a contradiction: printed with the
    decimal that shows it above, as the Noisy measurement line prints it."""
    final = {"iter-2": [10.0, 10.1, 10.0, 10.05, 10.02], "iter-1": [9.8, 10.1, 10.0, 9.9, 10.2],
             "default": [5.0, 5.78, 4.376, 5.416, 4.584]}
    summary = commands.final_comparison("circuit", noisy_store(tmp_path, monkeypatch, final), rounds=5)
    half = summary_estimate(summary, "default").half_width
    assert summary["best"] == "iter-2" and summary["vs"]["default"]["significant"] and 0.1 < half < 0.105  # premise
    out = printed(summary)
    line = next(l for l in out.splitlines() if l.startswith("Best (iter-2) vs default:"))
    shown = f"{math.ceil(1000 * half) / 10:.1f}"
    assert f"default ±{shown} % after 5 executions" in out, out
    assert f"Not counted as a difference: default's ±{shown} % (above) exceed the ±10 % within" in line, line


def summary_estimate(summary: dict, name: str) -> protocol.Estimate:
    return protocol.Estimate.from_json(summary["measured"][name]["estimate"])


def test_the_noise_of_a_programs_own_mapper_is_named_as_that_mapper(tmp_path, monkeypatch):
    """The `default` reference of a program with its own mapper ran that mapper (summary.json's `own_mapper`, as
    `final_comparison` records it for such a program): the sentence that does not count a noisy difference called
    its noise "default's ±12 %" right after "Best (iter-2) vs the program's own mapper"."""
    final = {"iter-2": [10.0, 13.0, 7.5, 11.5, 8.5], "iter-1": [9.8, 10.1, 10.0, 9.9, 10.2],
             "default": [5.0, 6.5, 3.8, 5.8, 4.2]}
    summary = commands.final_comparison("circuit", noisy_store(tmp_path, monkeypatch, final), rounds=5)
    summary["own_mapper"] = "jacobi_mapper"
    out = printed(summary)
    line = next(l for l in out.splitlines() if l.startswith("Best (iter-2) vs the program's own mapper:"))
    noisy = protocol.estimate(final["default"])
    assert (f"Not counted as a difference: iter-2's ±{100 * summary_estimate(summary, 'iter-2').half_width:.0f} % "
            f"and the program's own mapper's ±{100 * noisy.half_width:.0f} % (above)") in line, line
    assert "default's" not in out, out


def test_the_default_start_against_the_default_mapper_is_the_same_mapping(tmp_path, monkeypatch):
    """With --start default the start program is Legion's default mapper written in the DSL: when it is the best,
    its comparison with the default mapper says that they are the same mapping rather than claim a speedup."""
    final = {"iter-2": [9.0, 9.1, 9.0], "iter-1": [12.0, 12.1, 12.2], "default": [10.0, 10.1, 10.0]}
    summary = commands.final_comparison("circuit", noisy_store(tmp_path, monkeypatch, final), rounds=3)
    assert summary["best"] == "iter-1" == summary["start"] and summary["vs"]["default"]["significant"]
    lines = printed(summary, default_start=True).splitlines()
    line = next(l for l in lines if l.startswith("Best (iter-1) vs default"))
    assert line.startswith("Best (iter-1) vs default: the same mapping (the start program is Legion's default mapper "
                           "written in the DSL, --start default), measured at 1.21x"), line
    assert line.endswith("not a gain."), line
    # Another start program: the comparison is an ordinary one.
    line = next(l for l in printed(summary).splitlines() if l.startswith("Best (iter-1) vs default"))
    assert line == f"Best (iter-1) vs default: {protocol.compare(final['iter-1'], final['default']).describe()}."


def test_the_final_table_gives_the_references_first_then_the_candidates_from_the_fastest(tmp_path, monkeypatch):
    """The table followed the measurement's order (candidates as the loop ranked them, the start, the references),
    which read as no order at all: it is stated in the title and kept."""
    store, _ = slow_start_store(tmp_path, monkeypatch)
    store.settings["baseline"] = "both"
    FINAL["expert"] = 7.0
    try:
        summary = commands.final_comparison("circuit", store, rounds=3)
    finally:
        del FINAL["expert"]
    out = printed(summary)
    assert "the reference mappers first, then the candidates from the fastest" in " ".join(out.split())
    rows = [line.split("│")[1].strip() for line in out.splitlines() if line.startswith("│")]
    assert rows == ["expert", "default", "iter-1 (start, best)", "iter-5", "iter-4", "iter-3"], out


def test_the_verdict_agrees_with_the_final_comparison(tmp_path, monkeypatch):
    """The iterations' table may keep a lucky early figure as its best; the verdict line says what the final
    comparison found: whether any mapper beat the references, by how much, and whether it is significant."""
    slower = {"iter-2": [9.0, 9.1, 9.0], "iter-1": [8.0, 8.1, 8.0], "default": [10.0, 10.1, 10.0],
              "expert": [12.0, 12.2, 12.1]}
    def final(name: str, measured: dict, rounds: int = 3) -> dict:
        store = noisy_store(tmp_path / name, monkeypatch, measured)
        store.settings["baseline"] = "both"
        return commands.final_comparison("circuit", store, rounds=rounds)

    summary = final("a", slower)
    # the direction said in words: "0.75x the expert mapper" read, to one who thinks in times, as faster
    expert, default = (summary["vs"][n]["ratio"] for n in ("expert", "default"))
    assert expert < 1 and default < 1  # the premise
    assert commands.verdict(summary) == (
        f"Verdict: no mapper beat the references; the best (iter-2) measured "
        f"{expert:.2f}x the expert mapper's throughput ({100 * (1 - expert):.0f} % slower, significant), "
        f"{default:.2f}x the default mapper's throughput ({100 * (1 - default):.0f} % slower, significant).")
    between = {**slower, "iter-2": [11.0, 11.1, 11.0]}
    summary = final("b", between)
    line = commands.verdict(summary)
    assert line.startswith("Verdict: iter-2 beat the default mapper; the best (iter-2) measured"), line
    # Faster on paper but from noisy measurements: not a win; and the start against the default, with --start
    # default, is the same mapping.
    noisy = {**slower, "iter-2": [10.0, 16.0, 7.5, 15.5, 12.5], "expert": [6.0, 6.1, 6.0, 6.0, 6.1]}
    summary = final("c", noisy, rounds=5)
    assert summary["vs"]["expert"]["significant"] and summary["vs"]["expert"]["ratio"] > 1  # the premise
    line = commands.verdict(summary)
    assert line.startswith("Verdict: no mapper beat the references;")
    # Said so that a first reader sees why a significant ratio above 1 is no win (it said "significant, but noisy").
    ratio = summary["vs"]["expert"]["ratio"]
    assert (f"{ratio:.2f}x the expert mapper's throughput ({100 * (ratio - 1):.0f} % faster, a difference beyond the "
            "90 % intervals, but from measurements too noisy to trust: an interval wider than ±10 %, so it does not "
            "count as beating it)") in line, line
    same = {**slower, "iter-1": [11.0, 11.1, 11.0]}
    summary = final("d", same)
    assert summary["best"] == summary["start"] == "iter-1"
    assert ("x the default mapper's throughput (10 % faster, significant but the same mapping: the machine's noise "
            "or the DSL mapper's own cost, not a gain)") in commands.verdict(summary, default_start=True)
    # not significant: the headline says so, not only "faster" (the line above it did, and the table's "(n.s.)")
    unsure = {"iter-1": [11.5, 9.2, 12.0, 9.6, 11.0], "iter-2": [9.0, 9.1, 9.0, 9.05, 9.0],
              "default": [10.0, 10.1, 10.0, 10.05, 10.02], "expert": [12.0, 12.2, 12.1, 12.0, 12.1]}
    summary = final("f", unsure, rounds=5)
    ratio = summary["vs"]["default"]["ratio"]
    assert summary["best"] == "iter-1" and ratio > 1 and not summary["vs"]["default"]["significant"]  # the premise
    assert (f"x the default mapper's throughput ({100 * (ratio - 1):.0f} % faster, not significant: the same "
            "mapping)") in commands.verdict(summary, default_start=True)
    summary = final("e", {**slower, "iter-1": [9.1, 9.2, 9.1], "iter-2": [8.0, 8.1, 8.0]})  # 0.91x: slower, said so
    assert ("0.91x the default mapper's throughput (9 % slower, significant but the same mapping: the machine's "
            "noise or the DSL mapper's own cost, not a gain)") in commands.verdict(summary, default_start=True)
    assert commands.verdict(summary, default_start=True).startswith("Verdict: no mapper beat the references;")


def test_a_significantly_faster_reference_is_the_advice_and_its_interval_does_not_touch_1(tmp_path, monkeypatch):
    """The best candidate measured significantly slower than Legion's default mapper (0.987x, interval
    0.979-0.997): the table does not show the interval as 0.98-1.00, the comparison says "significant", and the
    line above the best program says to keep the default mapper; with an even faster expert, to use the expert."""
    best, default = [9.70, 9.80, 9.72, 9.85, 9.71], [9.90, 9.95, 9.78, 9.93, 9.80]
    final = {"iter-2": best, "iter-1": [5.0, 5.1, 5.0, 5.05, 5.02], "default": default}
    summary = commands.final_comparison("circuit", noisy_store(tmp_path, monkeypatch, final), rounds=5)
    c = protocol.compare(best, default)
    assert summary["best"] == "iter-2" and c.significant and c.high < 1 and f"{c.high:.2f}" == "1.00"  # premise
    out = printed(summary)
    row = next(l for l in out.splitlines() if l.split("│")[1:2] and l.split("│")[1].strip() == "default")
    assert "0.987x (0.979-0.997)" in row and "1.00" not in row and "n.s." not in row, row
    line = next(l for l in out.splitlines() if l.startswith("Best (iter-2) vs default:"))
    assert line == "Best (iter-2) vs default: 0.987x (90% interval 0.979-0.997x: significant).", line
    assert "0.987x the default mapper's throughput (1.3 % slower, significant)" in commands.verdict(summary)
    advice = commands.best_mapper_line(summary, tmp_path / "best.dsl")
    # "keep it:" above the program read as if that program were the default mapper's: the line names the pick
    assert advice == (f"Best mapper found: iteration 2, the final comparison's pick ({tmp_path / 'best.dsl'}) — but "
                      "Legion's default mapper is significantly faster here; keep it (run without --mapper). The pick, "
                      "best.dsl (iteration 2):"), advice

    store = TuneStore.create(tmp_path / "both", "circuit", {**SETTINGS, "baseline": "both"})
    for i, value in enumerate((1.0, 2.0), start=1):
        store.append(record(i, value))
    final["expert"] = [10.5, 10.6, 10.55, 10.45, 10.5]
    monkeypatch.setattr(protocol, "measure_together", lambda app, mappers, *a, **k: {
        name: protocol.Measured(name, protocol.estimate(final[name]), None, (), "GFLOPS", 0.2) for name in mappers})
    advice = commands.best_mapper_line(commands.final_comparison("circuit", store, rounds=5), tmp_path / "best.dsl")
    assert advice.endswith("— but the expert mapper is significantly faster here; use it (--mapper expert) "
                           "(Legion's default mapper is significantly faster too). The pick, best.dsl "
                           "(iteration 2):"), advice
    # Not significant either way: no plain recommendation ("Best mapper: ..., run it with" read as the advice, and
    # the Next line then said that no candidate beat the references), but the pick not shown faster than them
    final["expert"] = final["default"] = best
    advice = commands.best_mapper_line(commands.final_comparison("circuit", store, rounds=5), tmp_path / "best.dsl")
    assert advice == (f"Best mapper found: iteration 2, the final comparison's pick ({tmp_path / 'best.dsl'}), but "
                      "not shown faster than the expert mapper (measured at 1.00x its throughput) or Legion's "
                      "default mapper (measured at 1.00x its throughput): the Next line, last, says what to keep. "
                      "The pick, best.dsl (iteration 2):"), advice


def test_a_narrow_console_keeps_every_figure(tmp_path, monkeypatch):
    """Output that is not a terminal is 80 columns wide: a small throughput (a user's program in 1/ms) keeps its
    interval whole rather than cut to `0.00124-0.001…`; a time metric's cells give the time alone (with its
    throughput beside it the table was 83 columns wide)."""
    final = {"iter-2": [0.001251, 0.001153, 0.001317], "iter-1": [0.001523, 0.001289, 0.001712],
             "default": [0.001503, 0.001241, 0.001793]}
    summary = commands.final_comparison("circuit", noisy_store(tmp_path, monkeypatch, final), rounds=3)
    from rich.console import Console

    console = Console(width=80, record=True)
    commands._print_summary(console, summary, "1/ms")
    out = console.export_text()
    assert all(len(line) <= 80 for line in out.splitlines() if line[:1] in "┏┃┡│└"), out
    for m in summary["measured"].values():
        est = m["estimate"]
        # the throughput of a metric in ms is hard to read: the time itself, as the iterations table gives it (it
        # gave "0.0005639 (1773 ms)"), the interval's bounds swapped
        assert f"{1 / est['value']:.4g} ms" in out, out
        assert f"{1 / est['high']:.4g}-{1 / est['low']:.4g} ms" in out, out
    assert re.search(r"┃ mapper +┃ time +┃ interval", out) and "(throughput" not in out, out


def default_start_store(tmp_path, monkeypatch, bench: str, final: dict[str, list[float]]) -> tuple[TuneStore, str]:
    """(a store of `bench` tuned from --start default on one CPU, with the description and machine a tuning run
    records; the start program) whose final comparison measures `final`."""
    from mapperopt.benchmarks import load_config
    from mapperopt.descriptions import parse_machine_spec
    from mapperopt.optimizer.space import SearchSpace

    app, machine = load_config(bench).stored_description(), parse_machine_spec("1x0x1").to_json()
    space = SearchSpace(app, machine)
    start = space.render(space.default_point())
    store = TuneStore.create(tmp_path, bench, {**SETTINGS, "start": "default", "app_description": app,
                                               "machine": machine})
    store.append(IterationRecord(iter=1, dsl=start, key="k1", status="ok", stage=None, category="performance",
                                 throughput=2.0, unit="GFLOPS", best_throughput=2.0))
    store.append(record(2, 1.0))

    def measure_together(app, mappers, rounds, out_dir, min_time_s=0, **options):
        return {name: protocol.Measured(name, protocol.estimate(final[name]), None, (), "GFLOPS", 1.0)
                for name in mappers}

    monkeypatch.setattr(protocol, "measure_together", measure_together)
    return store, start


def test_a_default_start_that_maps_otherwise_is_compared_as_such(tmp_path, monkeypatch):
    """The GEMMs' default start gives every task one Layout line, SOA C_order, so taco_validate, whose variant
    registers no order, gets C_order where Legion's default mapper gives it F_order: a significant 0.67x against the
    default mapper is a real difference, named, not "the same mapping" nor noise; the default mapper is then the one
    to keep. Circuit's default start maps as Legion's default mapper does: that comparison stays "the same mapping"."""
    final = {"iter-1": [6.0, 6.01, 6.0, 6.02, 6.0], "iter-2": [5.0, 5.01, 5.0, 5.0, 5.02],
             "default": [9.0, 9.01, 9.02, 9.0, 9.0]}
    store, _ = default_start_store(tmp_path / "cannon", monkeypatch, "cannon", final)
    summary = commands.final_comparison("cannon", store, rounds=5)
    assert summary["best"] == summary["start"] == "iter-1" and summary["vs"]["default"]["significant"]
    assert summary["start_vs_default"] == [
        "taco_validate: requirement 0 (A_tiles) SOA C_order (Legion's default mapper: SOA F_order)"]
    out = printed(summary, default_start=True)
    line = next(l for l in out.splitlines() if l.startswith("Best (iter-1) vs default"))
    assert "the same mapping" not in line and "noise" not in line, line
    assert line.endswith("significant). The start program (--start default) differs from Legion's default mapper "
                         "here: taco_validate: requirement 0 (A_tiles) SOA C_order (Legion's default "
                         "mapper: SOA F_order)."), line
    assert "Legion's default mapper is significantly faster here" in commands.best_mapper_line(
        summary, store.root / "best.dsl", default_start=True)
    assert "(the same mapping)" not in commands.verdict(summary, default_start=True)

    store, _ = default_start_store(tmp_path / "circuit", monkeypatch, "circuit", final)
    summary = commands.final_comparison("circuit", store, rounds=5)
    assert summary["best"] == summary["start"] == "iter-1" and summary["start_vs_default"] == []
    line = next(l for l in printed(summary, default_start=True).splitlines()
                if l.startswith("Best (iter-1) vs default"))
    assert line.startswith("Best (iter-1) vs default: the same mapping"), line


def test_a_failed_best_is_named_as_the_one_that_failed(tmp_path, monkeypatch):
    """Every candidate and the start failed in the final comparison while the default mapper ran: the comparison
    line and the verdict name the best as the one that failed (they said "not compared (default failed)")."""
    store = noisy_store(tmp_path, monkeypatch, {})
    refused = "check: Layout statements are refused"
    monkeypatch.setattr(protocol, "measure_together", lambda app, mappers, *a, **k: {
        name: protocol.Measured(name, protocol.estimate([3.0, 3.1, 3.0]) if name == "default" else None,
                                None if name == "default" else refused, (), "GFLOPS", 0.2) for name in mappers})
    summary = commands.final_comparison("circuit", store, rounds=3)
    assert summary["measured"]["default"]["estimate"] and summary["vs"]["default"] is None  # the premise
    best = summary["best"]
    out = printed(summary)
    assert f"Best ({best}) vs default: not compared ({best} failed in this comparison)." in out, out
    assert "default failed" not in out, out
    line = commands.verdict(summary)
    assert line == f"Verdict: nothing was compared: the best ({best}) failed in the final comparison.", line


def test_a_failed_reference_is_said_in_a_sentence(tmp_path, monkeypatch):
    """The best ran and the default mapper failed: the verdict says the best was not compared with it (it read "the
    best (iter-2) measured the default mapper: not compared (default failed)")."""
    store = noisy_store(tmp_path, monkeypatch, {})
    monkeypatch.setattr(protocol, "measure_together", lambda app, mappers, *a, **k: {
        name: protocol.Measured(name, None if name == "default" else protocol.estimate([3.0, 3.1, 3.0]),
                                "run: exited with status 7: flaked" if name == "default" else None, (), "GFLOPS", 0.2)
        for name in mappers})
    summary = commands.final_comparison("circuit", store, rounds=3)
    line = commands.verdict(summary)
    best = summary["best"]
    assert line.endswith(f"the best ({best}) was not compared with the default mapper (default failed)."), line


def test_single_executions_are_never_significant(tmp_path, monkeypatch):
    """`--final-rounds 1`: each mapper measured by one execution, whose ratio's interval is the ratio itself
    (1.18-1.18x). It was called significant, and the verdict counted it as beating the start; without a spread
    estimate no difference is significant, and every line says why."""
    final = {"iter-2": [2.36], "iter-1": [2.0], "default": [1.0]}
    store = noisy_store(tmp_path, monkeypatch, final)
    summary = commands.final_comparison("circuit", store, rounds=1)
    stored = json.loads((store.root / "summary.json").read_text())
    for name in ("iter-1", "default"):
        assert not summary["vs"][name]["significant"] and not stored["vs"][name]["significant"], stored["vs"]
        assert summary["vs"][name]["no_interval"] == "one execution each: no interval"
    out = printed(summary)
    assert "Best (iter-2) vs iter-1: 1.18x (one execution each: no interval)." in out, out
    assert "Best (iter-2) vs default: 2.36x (one execution each: no interval)." in out, out
    assert "significant" not in out.replace("not significant", ""), out
    line = commands.verdict(summary)
    # Not "no mapper beat": a newcomer reads that against 2.36x; with one execution nothing can be said to beat.
    assert line == ("Verdict: no mapper can be said to beat the reference without an interval (an interval takes "
                    "--final-rounds 3 or more); the best (iter-2) measured 2.36x the default mapper's throughput "
                    "(136 % faster, one execution each: no interval)."), line
    assert commands.best_mapper_line(summary, tmp_path / "best.dsl").startswith("Best mapper: iteration 2")
    # A reference that measured faster by one execution is no reason to keep it either.
    slower = commands.final_comparison("circuit", noisy_store(tmp_path / "b", monkeypatch,
                                                               {**final, "default": [9.0]}), rounds=1)
    assert commands.best_mapper_line(slower, tmp_path / "best.dsl").startswith("Best mapper: iteration 2")


def test_a_single_execution_row_shows_no_spread_and_no_interval(tmp_path, monkeypatch):
    """The final table gave a one-execution row a spread of `0%` and the figure again as its interval
    (`1.473 GFLOPS`): exact-looking. It says that one execution has no spread, once under the table (every row said
    it, wrapped over lines at 80 columns); its title counts one round."""
    final = {"iter-2": [2.36], "iter-1": [2.0], "default": [1.473]}
    summary = commands.final_comparison("circuit", noisy_store(tmp_path, monkeypatch, final), rounds=1)
    out = printed(summary)
    assert "Measured together, 1 interleaved round each" in out, out
    rows = [line.split("│")[1:-1] for line in out.splitlines() if line.startswith("│")]
    assert len(rows) == 3, out
    for mapper, value, interval, spread, _ in rows:
        assert spread.strip() == "-" and interval.strip() == "-", (mapper, interval, spread)
    # why, once under the table rather than on every row
    assert "No interval (-) from fewer than 3 executions; no spread (-) from one." in out, out
    assert "Best vs it: one execution each: no interval." in out and "(1.18-1.18)" not in out, out
    assert "1.18x (one execution each: no interval)" in out, out  # the comparison's own line


def test_too_few_rounds_give_no_interval_and_say_how_many_do(tmp_path, monkeypatch):
    """With 2 rounds the bootstrap interval of a ratio is the min/max of the 4 ratios of the values: it claimed
    '90 %' and significance (1.37x, interval 1.36-1.37x: significant) where far fewer than 90 % of such intervals
    hold the true ratio. Below `protocol.MIN_INTERVAL_VALUES` rounds the ratio comes without an interval, never
    significant, and the output says how many rounds give one; from there on nothing changes."""
    final = {"iter-2": [2.0, 2.02], "iter-1": [1.0, 1.01], "default": [1.45, 1.47]}
    assert protocol.compare(final["iter-2"], final["iter-1"]).significant  # the premise: the bare statistics say so
    summary = commands.final_comparison("circuit", noisy_store(tmp_path, monkeypatch, final), rounds=2)
    assert protocol.MIN_INTERVAL_VALUES == 3
    for name in ("iter-1", "default"):
        assert not summary["vs"][name]["significant"]
        assert summary["vs"][name]["no_interval"] == "2 executions each: too few for a 90 % interval, which takes 3"
    out = " ".join(printed(summary).split())
    assert "Best (iter-2) vs iter-1: 2.00x (2 executions each: too few for a 90 % interval, which takes 3)." in out, out
    assert ("Too few executions for an interval: iter-2, iter-1, default measured by 2 executions each, too few for "
            "a 90 % interval, which takes 3: how much of the figure is the machine's noise is unknown; measure again "
            "with a higher --final-rounds, for 3 executions or more each.") in out, out
    assert "Noisy measurement" not in out, out
    assert commands.verdict(summary).startswith("Verdict: no mapper can be said to beat the reference without an "
                                                "interval"), commands.verdict(summary)
    # 3 and 5 rounds: the ratios, their intervals and verdicts of the statistics themselves, as before.
    for rounds in (3, 5):
        values = {"iter-2": [2.0, 2.02, 1.98, 2.01, 2.0][:rounds], "iter-1": [1.0, 1.01, 0.99, 1.0, 1.02][:rounds],
                  "default": [1.45, 1.47, 1.46, 1.44, 1.45][:rounds]}
        summary = commands.final_comparison("circuit", noisy_store(tmp_path / str(rounds), monkeypatch, values),
                                            rounds=rounds)
        for name in ("iter-1", "default"):
            assert summary["vs"][name] == protocol.compare(values["iter-2"], values[name]).to_json()
            assert summary["vs"][name]["significant"] and "no_interval" not in summary["vs"][name]
        assert "Too few" not in printed(summary)


def baselines_printed(root, mapper: str, time_s: float, wall_s: float, settings: dict) -> str:
    """What tune prints of its baseline `mapper` measured in three executions of `time_s` (each `wall_s` of wall
    time) in the tuning folder `root`, under the run's `settings`: one line of text."""
    from rich.console import Console

    run = root / f"baseline-{mapper}"
    run.mkdir()
    attempts = [{"exit_code": 0, "wall_s": wall_s, "result": {"throughput": v, "time_s": time_s}}
                for v in (3.5, 3.6, 3.4)]
    (run / "result.json").write_text(json.dumps({
        "app": "circuit", "mapper": mapper, "status": "ok", "unit": "GFLOPS", "time_s": time_s, "attempts": attempts,
        "settings": {"iterations_flag": "-l", "measured_runs": 3}}))
    console = Console(width=400, record=True)
    commands._print_baselines(console, root, settings)
    return " ".join(console.export_text().split())


def test_baselines_short_of_min_time_under_a_given_timeout_name_it(tmp_path):
    """`tune --min-time 2 --timeout 5`: the baselines measured 0.48 s per execution, calibration having stopped at
    half of the timeout, and the advice named --min-time only. It names the --timeout the run was given."""
    out = baselines_printed(tmp_path, "expert", 0.48, 1.3,
                            {"baselines": {"expert": 3.5}, "min_time_s": 2.0, "timeout_s": 5.0})
    assert "Short measurement of the baselines: expert 0.48 s" in out, out
    # with room for the 0.82 s each execution took besides its measured time (1.3 s of wall time)
    assert ("within half of --timeout 5, 2.5 s); measure again with a --timeout well above 5.64 (twice --min-time and "
            "the 0.82 s each execution took besides it) or none") in out, out


def test_an_interrupted_final_comparison_is_kept_and_recorded(tmp_path, monkeypatch):
    """tune's final comparison cut short by Ctrl-C: the next command deleted what it had measured and measured again
    from scratch, recording nothing (compare records such a measurement under `interrupted`). Its folder is kept as
    `final-N/`, named with the mappers it holds runs of under `interrupted` in summary.json, and said; no figure
    uses it, and an extended run's later comparisons keep naming it."""
    store, _ = slow_start_store(tmp_path, monkeypatch)
    measure = protocol.measure_together

    def cut(app, mappers, rounds, out_dir, min_time_s=0, **options):
        for name in ("iter-5", "default"):
            (out_dir / name / "round-1").mkdir(parents=True)
            (out_dir / name / "round-1" / "result.json").write_text("{}\n")
        raise KeyboardInterrupt

    monkeypatch.setattr(protocol, "measure_together", cut)
    with pytest.raises(KeyboardInterrupt):
        commands.final_comparison("circuit", store, rounds=3)
    monkeypatch.setattr(protocol, "measure_together", measure)
    summary = commands.final_comparison("circuit", store, rounds=3)
    assert summary["interrupted"] == [{"folder": "final-1", "mappers": ["default", "iter-5"]}], summary
    assert (store.root / "final-1" / "iter-5" / "round-1" / "result.json").exists()
    assert "replaced" not in summary and summary["best"] == "iter-1"
    stored = json.loads((store.root / "summary.json").read_text())
    assert stored["interrupted"] == summary["interrupted"]
    out = " ".join(printed(summary).split())
    assert ("Not used: final-1, a final comparison without its summary.json (cut short before it ended, or its "
            "summary.json was lost; it holds runs of default, iter-5); kept and named in summary.json under "
            "`interrupted`.") in out, out
    # Extended: the finished comparison goes to final-2 (replaced), the interrupted one stays named.
    commands._set_aside_final(store.root, print)  # as `tune` does before an extension's first iteration
    again = commands.final_comparison("circuit", store, rounds=3)
    assert again["replaced"] == ["final-2"] and again["interrupted"] == summary["interrupted"], again


def test_every_iteration_timing_out_under_a_given_timeout_names_it(tmp_path):
    """`tune --timeout 1.2`: every iteration, Legion's default mapping among them, ran past it, and the run ended
    with "no iteration produced a working mapper ... look at the feedback", whose advice was to spread the index
    launches on a one-CPU machine. The error says the --timeout is the likely cause; without one, as before."""
    def timed_out(i: int) -> IterationRecord:
        return IterationRecord(iter=i, dsl=f"# program {i}\nTask * CPU;\n", key=f"k{i}", status="failed",
                               stage="timeout", category="timeout", throughput=None, unit="GFLOPS",
                               best_throughput=0.0)

    for given, folder in ((1.2, "given"), (None, "none")):
        store = TuneStore.create(tmp_path / folder, "stencil", {**SETTINGS, "timeout_s": given, "start": "default"})
        for i in (1, 2):
            store.append(timed_out(i))
        error = str(commands._no_working_mapper(store))
        if given:
            assert error.startswith("no iteration produced a working mapper: every one ran past --timeout 1.2"), error
            assert "give a larger --timeout, or leave it out" in error, error
        else:
            assert "--timeout" not in error and "look at the feedback" in error, error


def test_a_verdict_with_one_reference_without_an_interval_says_none_was_shown_to_beat_it(tmp_path, monkeypatch):
    """One reference compared with an interval (the expert mapper, faster than the best) and one without (the
    default mapper, one execution): the verdict said "no mapper beat the references" beside 2.00x the default
    mapper, of which nothing could be shown either way; it says so of that one, as when no reference has an
    interval."""
    final = {"iter-2": [2.0, 2.02, 1.98], "iter-1": [1.0, 1.01, 0.99], "expert": [2.5, 2.52, 2.48],
             "default": [1.0]}
    store = noisy_store(tmp_path, monkeypatch, final)
    store.settings["baseline"] = "both"
    summary = commands.final_comparison("circuit", store, rounds=3)
    assert summary["vs"]["default"].get("no_interval") and not summary["vs"]["expert"].get("no_interval")  # the premise
    line = commands.verdict(summary)
    assert line.startswith("Verdict: no mapper beat the expert mapper, and none can be said to beat the default mapper "
                           "without an interval (an interval takes --final-rounds 3 or more); the best (iter-2) "
                           "measured 0.80x the expert mapper's throughput (20 % slower, significant), 2.00x the "
                           "default mapper's throughput (100 % faster, "), line


def test_a_pick_within_the_noise_of_the_start_is_said_so(tmp_path, monkeypatch):
    """Nothing measured significantly better than the start, yet the line above the changed program said "Best
    mapper: iteration 2, the final comparison's pick", inviting the user to adopt a change chosen by noise. It says
    that no mapper measured significantly better than the start and that best.dsl is the highest trimmed mean,
    within the noise; a significant gain keeps the plain line."""
    final = {"iter-2": [10.4, 9.6, 10.9, 9.5, 10.2], "iter-1": [10.0, 10.3, 9.4, 10.1, 9.7],
             "default": [5.0, 5.1, 5.0, 5.05, 5.02]}
    summary = commands.final_comparison("circuit", noisy_store(tmp_path, monkeypatch, final), rounds=5)
    assert summary["best"] == "iter-2" and not summary["vs"]["iter-1"]["significant"]  # the premise
    path = tmp_path / "best.dsl"
    start = tmp_path / "iter-001" / "mapper.dsl"
    start.parent.mkdir()
    start.write_text("# program 1\nTask * CPU;\n")
    # The program printed after the line is the pick (best.dsl), not the start: the line ends by naming it, and
    # names the start's own file.
    assert commands.best_mapper_line(summary, path) == (
        f"Best mapper: iteration 2 ({path}), the highest trimmed mean among the candidates of the final comparison; "
        "but no mapper measured significantly better than the start (iter-1): the difference is within the noise, so "
        f"the start program ({start}) is as good by these measurements. The pick, best.dsl (iteration 2):")
    final["iter-1"] = [5.0, 5.1, 5.0, 5.05, 5.02]
    summary = commands.final_comparison("circuit", noisy_store(tmp_path / "b", monkeypatch, final), rounds=5)
    assert commands.best_mapper_line(summary, path) == \
        f"Best mapper: iteration 2, the final comparison's pick ({path}):"


def test_a_pick_within_the_noise_of_a_start_file_names_the_users_file(tmp_path, monkeypatch):
    """`tune --start my.dsl`: nothing measured significantly better than the start, and the line said that the start
    program (runs/.../iter-001/mapper.dsl) is as good: a file the user never wrote. It names the user's file, with
    the iteration's copy that ran."""
    final = {"iter-2": [10.4, 9.6, 10.9, 9.5, 10.2], "iter-1": [10.0, 10.3, 9.4, 10.1, 9.7],
             "default": [5.0, 5.1, 5.0, 5.05, 5.02]}
    summary = commands.final_comparison("circuit", noisy_store(tmp_path, monkeypatch, final), rounds=5)
    assert summary["best"] == "iter-2" and not summary["vs"]["iter-1"]["significant"]  # the premise
    mine = tmp_path / "my.dsl"
    mine.write_text("# program 1\nTask * CPU;\n")
    copy = tmp_path / "iter-001" / "mapper.dsl"
    copy.parent.mkdir()
    copy.write_text(mine.read_text())
    line = commands.best_mapper_line(summary, tmp_path / "best.dsl", start_file=str(mine))
    assert f"so the start program ({mine}, run as {copy}) is as good by these measurements." in line, line
    assert line.endswith("The pick, best.dsl (iteration 2):"), line


def test_a_pick_without_an_interval_against_the_start_is_not_called_within_the_noise(tmp_path, monkeypatch):
    """`tune --final-rounds 2` (or 1): the ratio of the pick to the start has no interval, yet the line above
    best.dsl said "the difference is within the noise", of a noise nothing measured. It says what was measured, why
    there is no interval and how many rounds give one; where the executions disagree, that whether the pick is faster
    is unknown."""
    for rounds, values in ((2, {"iter-2": [2.0, 2.3], "iter-1": [1.9, 2.0]}), (1, {"iter-2": [2.2], "iter-1": [2.0]})):
        final = {**values, "default": [1.0] * rounds}
        summary = commands.final_comparison("circuit", noisy_store(tmp_path / str(rounds), monkeypatch, final),
                                            rounds=rounds)
        assert summary["best"] == "iter-2" and summary["vs"]["iter-1"]["no_interval"]  # the premise
        mine = tmp_path / "my.dsl"
        mine.write_text("# program 1\nTask * CPU;\n")
        line = commands.best_mapper_line(summary, tmp_path / "best.dsl", start_file=str(mine))
        assert "noise" not in line and "as good by these measurements" not in line, line
        c = protocol.Comparison.from_json(summary["vs"]["iter-1"])
        if rounds == 2:  # 1.00-1.21x: the rounds disagree
            assert ("but whether it is faster than the start (iter-1) is unknown: its executions measured 1.00-1.21x "
                    f"the start's, some faster and some not, with no 90 % interval ({c.no_interval}; --final-rounds 3 "
                    f"or more gives one), so the start program ({mine}) may be as good. The pick, best.dsl "
                    "(iteration 2):") in line, line
        else:  # one round: what it measured, never called significant
            assert ("the highest trimmed mean among the candidates of the final comparison; its one execution "
                    "measured 1.10x the start's "
                    f"(iter-1), faster, though not shown significant ({c.no_interval}; --final-rounds 3 or more gives "
                    "one). The pick, best.dsl (iteration 2):") in line, line


def test_a_pick_significant_only_from_noisy_measurements_is_not_called_within_the_noise(tmp_path, monkeypatch):
    """A pick whose ratio to the start is beyond the intervals but measured too noisily to count (as the verdict
    counts it): the line said "the difference is within the noise", which its interval contradicts. It says that the
    measurements are too noisy to count the difference."""
    final = {"iter-2": [20.0, 26.0, 15.0, 23.0, 17.0], "iter-1": [10.0, 10.1, 9.9, 10.0, 10.2],
             "default": [5.0, 5.1, 5.0, 5.05, 5.02]}
    summary = commands.final_comparison("circuit", noisy_store(tmp_path, monkeypatch, final), rounds=5)
    assert summary["vs"]["iter-1"]["significant"] and commands._noisy(summary, "iter-1")  # the premise
    line = commands.best_mapper_line(summary, tmp_path / "best.dsl")
    assert "within the noise" not in line, line
    assert ("but its difference from the start (iter-1) is not counted, its measurements being too noisy (see above), "
            "so the start program may be as good. The pick, best.dsl (iteration 2):") in line, line


def test_a_ratio_not_shown_to_differ_says_why_as_every_line_that_gives_one_does():
    """`not_shown`, the reason the Next line, the pick's line and the reference's line give for a ratio that shows
    no difference: its missing interval, measurements too noisy to count a ratio clear of 1, or not significant."""
    noisy, steady = [20.0, 26.0, 15.0, 23.0, 17.0], [10.0, 10.1, 9.9, 10.0, 10.2]
    c = protocol.compare(noisy, steady, protocol.MIN_INTERVAL_VALUES)
    assert c.significant and protocol.estimate(noisy).noisy  # the premise: clear of 1, from a noisy measurement
    assert commands.not_shown(c, noisy=True) == "from measurements too noisy to count"
    alike = protocol.compare(steady, [10.1, 9.9, 10.0, 10.2, 10.0], protocol.MIN_INTERVAL_VALUES)
    assert not alike.significant and commands.not_shown(alike, noisy=False) == "not significant"
    assert commands.not_shown(alike, noisy=True) == "not significant"  # noise says nothing of an unshown ratio
    few = protocol.compare([10.0, 10.1], [9.9, 10.0], protocol.MIN_INTERVAL_VALUES)
    assert few.no_interval and commands.not_shown(few, noisy=True) == few.no_interval


def test_a_start_that_failed_is_not_called_as_good(tmp_path, monkeypatch):
    """The start program aborted in the final comparison: the line above the best program said "not significantly
    better than the start ... the start program is as good", of a start that never ran. It says that the pick is the
    best of the programs that ran and that the start failed; a comparison where everything failed says so too."""
    final = {"iter-2": [10.4, 9.6, 10.9, 9.5, 10.2], "default": [5.0, 5.1, 5.0, 5.05, 5.02]}
    store = noisy_store(tmp_path, monkeypatch, final)
    aborted = "run: aborted: the tile of C is not row-major"
    monkeypatch.setattr(protocol, "measure_together", lambda app, mappers, *a, **k: {
        name: protocol.Measured(name, protocol.estimate(final[name]) if name in final else None,
                                None if name in final else aborted, (), "GFLOPS", 0.2) for name in mappers})
    summary = commands.final_comparison("circuit", store, rounds=5)
    assert summary["best"] == "iter-2" and summary["vs"]["iter-1"] is None  # the premise: the start failed
    path = store.root / "best.dsl"
    line = commands.best_mapper_line(summary, path)
    assert line == (f"Best mapper: iteration 2 ({path}), the highest trimmed mean of the candidates that ran in the "
                    "final comparison; the start (iter-1) failed in it, so it is not compared. The pick, best.dsl "
                    "(iteration 2):"), line
    assert "as good" not in line and "within the noise" not in line
    # Every program failed: the pick is the search's, not claimed the best, and nothing was compared.
    store = noisy_store(tmp_path / "b", monkeypatch, final)
    monkeypatch.setattr(protocol, "measure_together", lambda app, mappers, *a, **k: {
        name: protocol.Measured(name, None, aborted, (), "GFLOPS", 0.2) for name in mappers})
    summary = commands.final_comparison("circuit", store, rounds=5)
    line = commands.best_mapper_line(summary, path)
    assert "as good" not in line and "within the noise" not in line and "highest trimmed mean" not in line, line
    assert line.startswith("No mapper of this tune ran in the final comparison: every candidate and the start "
                           "failed there"), line
    assert line.endswith(f"{path} holds the search's pick, iteration {summary['best_iter']}:"), line


def test_the_baselines_header_states_how_the_best_so_far_is_chosen(tmp_path):
    """tune's header said "the best so far is the highest of those noisy figures", while an iteration replaces the
    best only when it is faster beyond the noise or, re-measured together with the best, still faster: it states
    that rule."""
    out = baselines_printed(tmp_path, "default", 0.6, 1.0, {"baselines": {"default": 3.5}})
    assert "highest of those noisy figures" not in out, out
    assert ("an iteration becomes the best so far only when its figure is higher than the best's beyond the noise "
            "(the 90 % interval of their ratio above 1) or, within the noise, when it is still higher with both "
            "re-measured together") in out, out


def test_a_pick_that_every_round_favours_says_so_without_an_interval(tmp_path, monkeypatch):
    """`tune --final-rounds 2`: the pick measured 4.75-5.70x the start in every pairing of their executions, yet the
    line above best.dsl said that whether it is faster is unknown and that the start "may be as good". Without an
    interval it still says what was measured: the range of the ratios of the pick's executions to the start's, that
    every one favours the pick, and that this is not shown significant; "may be as good" only where they disagree."""
    values = {"iter-2": [0.0873255374, 0.0790180009], "iter-1": [0.0166381474, 0.0153200379]}
    store = noisy_store(tmp_path, monkeypatch, {**values, "default": [0.05] * 2})
    summary = commands.final_comparison("circuit", store, rounds=2)
    assert summary["best"] == "iter-2" and summary["vs"]["iter-1"]["no_interval"]  # the premise
    assert not summary["vs"]["iter-1"]["significant"]
    # summary.json's low and high (documented so): the range of the ratios of the executions, not an interval
    ratios = [a / b for a in values["iter-2"] for b in values["iter-1"]]
    vs = summary["vs"]["iter-1"]
    assert (vs["low"], vs["high"]) == pytest.approx((min(ratios), max(ratios)))
    line = commands.best_mapper_line(summary, tmp_path / "best.dsl")
    assert "may be as good" not in line and "is unknown" not in line, line
    assert ("the highest trimmed mean among the candidates of the final comparison; its executions measured "
            "4.75-5.70x the start's (iter-1), every one of them faster, though not shown significant (2 executions "
            "each: too few for a 90 % interval, which takes 3; --final-rounds 3 or more gives one). The pick, best.dsl "
            "(iteration 2):") in line, line
    # the rounds disagree: the range is given, and the start may be as good
    values = {"iter-2": [2.0, 2.3], "iter-1": [2.1, 1.9]}
    summary = commands.final_comparison("circuit", noisy_store(tmp_path / "b", monkeypatch,
                                                               {**values, "default": [1.0] * 2}), rounds=2)
    line = commands.best_mapper_line(summary, tmp_path / "best.dsl")
    assert ("but whether it is faster than the start (iter-1) is unknown: its executions measured 0.95-1.21x the "
            "start's, some faster and some not, with no 90 % interval (2 executions each: too few for a 90 % interval, "
            "which takes 3; --final-rounds 3 or more gives one), so the start program may be as good.") in line, line


def test_the_pick_is_called_the_highest_among_the_candidates_and_a_next_step_ends_the_summary(tmp_path, monkeypatch):
    """The references measured higher than every candidate, yet the line above best.dsl said "the highest trimmed
    mean of the final comparison" (of the candidates only), and nothing said what to do next: a beginner copied
    best.dsl, not shown faster than the start. The line says "among the candidates"; a last line says which program
    to keep (the start, when the pick is not shown faster than it; a reference that no candidate beat) and how to
    search further. A pick that beat the start and every reference gets no such line."""
    final = {"iter-2": [10.4, 9.6, 10.9, 9.5, 10.2], "iter-1": [10.0, 10.3, 9.4, 10.1, 9.7],
             "default": [10.4, 9.8, 10.8, 9.7, 10.5], "expert": [10.4, 9.9, 10.9, 9.8, 10.6]}

    def compared(folder) -> dict:  # the final comparison of `final`, both references measured
        store = noisy_store(folder, monkeypatch, final)
        store.settings["baseline"] = "both"
        return commands.final_comparison("circuit", store, rounds=5)
    summary = compared(tmp_path)
    assert summary["best"] == "iter-2" and not summary["vs"]["iter-1"]["significant"]  # the premise
    mine = tmp_path / "my.dsl"
    mine.write_text("# program 1\nTask * CPU;\n")
    line = commands.best_mapper_line(summary, tmp_path / "best.dsl", start_file=str(mine))
    assert "the highest trimmed mean among the candidates of the final comparison; but" in line, line
    step = commands.next_step(summary, start_file=str(mine))
    # neither reference measured significantly higher than the start: the start is the one program to keep
    assert step.startswith(f"Next: keep your start program ({mine}): best.dsl is not shown to be faster than it "
                           "here; neither the expert mapper nor the default mapper is shown to be faster than it: the "
                           "expert mapper measured 1.04x your start program's throughput (4 % faster, not "
                           "significant). "
                           "To search further, give the same command a larger --iters (it extends this run)"), step
    assert "the higher of them" not in step and "--mapper expert" not in step, step
    # faster than the start, but not than the references: the fastest reference is named
    final["iter-1"] = [5.0, 5.1, 5.0, 5.05, 5.02]
    summary = compared(tmp_path / "b")
    step = commands.next_step(summary, default_start=True)
    assert step.startswith("Next: no candidate beat the expert mapper or the default mapper, and those two are not "
                           "shown to differ: the expert mapper measured "), step
    assert "x the default mapper's throughput (" in step, step
    assert "keep" not in step, step
    # the expert mapper measured significantly higher than the default mapper: it is the one pointed to
    final["expert"] = [12.6, 12.4, 12.5, 12.55, 12.45]
    summary = compared(tmp_path / "e")
    step = commands.next_step(summary, default_start=True)
    assert step.startswith("Next: no candidate beat the expert mapper or the default mapper (the higher of them: "
                           "the expert mapper measured 1.22x the default mapper's throughput (22 % faster, "
                           "significant); --mapper expert)."), step
    final["expert"] = [10.6, 10.0, 11.0, 9.9, 10.7]
    # the pick beat the start and both references: nothing to add
    final.update({"default": [5.0, 5.1, 5.0, 5.05, 5.02], "expert": [5.0, 5.1, 5.0, 5.05, 5.02]})
    summary = compared(tmp_path / "c")
    assert commands.next_step(summary) is None


def test_a_best_column_that_rose_with_the_references_says_the_machine_changed(tmp_path, monkeypatch):
    """Under a CI load the machine sped up by ~30 % during a tune: the iterations' "best" column rose 3.575 ->
    4.737 GFLOPS, while the final comparison kept the start (nothing faster); the references had risen the same way
    (expert 3.617 -> 4.656, default 3.182 -> 4.636), which nothing said, so the column read as a tuning gain. When
    the pick is not shown faster than the start and every reference's figure before the search lies outside its
    final interval in the column's direction, one line says so with both figures; otherwise none."""
    final = {"iter-2": [10.4, 9.6, 10.9, 9.5, 10.2], "iter-1": [10.0, 10.3, 9.4, 10.1, 9.7],
             "default": [10.4, 9.8, 10.8, 9.7, 10.5], "expert": [10.6, 10.0, 11.0, 9.9, 10.7]}
    store = noisy_store(tmp_path, monkeypatch, final)  # the column: iteration 1's 1.0, then 2.0
    store.settings.update(baseline="both", baselines={"expert": 5.0, "default": 4.5})
    summary = commands.final_comparison("circuit", store, rounds=5)
    assert not summary["vs"]["iter-1"]["significant"]  # the premise: the pick is not shown faster than the start
    line = commands.drift_line(summary, store, "GFLOPS", default_start=True)
    expert, default = (protocol.figure("GFLOPS", summary["measured"][n]["estimate"]["value"])
                       for n in ("expert", "default"))
    assert line == ("The best column's rise (1 GFLOPS -> 2 GFLOPS) follows the references' own: measured before the "
                    f"search and again in the final comparison, the expert mapper 5 GFLOPS -> {expert} and the "
                    f"default mapper 4.5 GFLOPS -> {default}, beyond their noise: the machine's speed changed during "
                    "the tune, not the mapping."), line
    # the references measured the same before and after (within their final intervals): nothing to say
    store.settings["baselines"] = {"expert": 10.3, "default": 10.2}
    assert commands.drift_line(summary, store, "GFLOPS", default_start=True) is None
    # the pick significantly faster than the start: the column's rise is the search's own
    final["iter-1"] = [5.0, 5.1, 5.0, 5.05, 5.02]
    store = noisy_store(tmp_path / "b", monkeypatch, final)
    store.settings.update(baseline="both", baselines={"expert": 5.0, "default": 4.5})
    summary = commands.final_comparison("circuit", store, rounds=5)
    assert commands.drift_line(summary, store, "GFLOPS", default_start=True) is None


def test_a_next_step_on_one_cpu_says_there_is_no_placement_to_tune(tmp_path, monkeypatch):
    """`tune circuit --size small` on a 2-core machine ran on 1 CPU processor (the other core is the utility
    processor's): every task on the one CPU, so no placement to tune, yet the Next line advised only a larger
    --iters. With 1 CPU and no GPU it says so, briefly, as tune's start note (`no_placement`) says it in full, with
    how to give more: --cpus N where the machine has the cores (its cores less the utility processors'), else what
    the machine has."""
    final = {"iter-2": [10.4, 9.6, 10.9, 9.5, 10.2], "iter-1": [10.0, 10.3, 9.4, 10.1, 9.7],
             "default": [10.4, 9.8, 10.8, 9.7, 10.5]}
    summary = commands.final_comparison("circuit", noisy_store(tmp_path, monkeypatch, final), rounds=5)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    step = commands.next_step(summary, default_start=True, processors=(1, 0, 1))
    # briefly: tune says it in full at its start (`no_placement`), with how to give more
    assert "; 1 CPU processor and no GPU: no placement to tune (see the note at the start)." in step, step
    assert ("with 1 CPU processor and no GPU every task runs on that one processor, so there is no placement to "
            "tune: this machine gives the run 2 cores, 1 of them the utility processor's, so no more CPU processors "
            "fit here; on a machine with more cores, give --cpus N (a core each, besides the utility "
            "processor's)") == commands.no_placement((1, 0, 1))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    assert ("so there is no placement to tune: this machine gives the run 4 cores, 1 of them the utility "
            "processor's: give --cpus 3") in commands.no_placement((1, 0, 1))
    # more processors, or a GPU: nothing of the kind
    for processors in ((2, 0, 1), (1, 1, 1)):
        step = commands.next_step(summary, default_start=True, processors=processors) or ""
        assert "no placement" not in step, step


def test_a_next_step_that_keeps_the_default_mapper_says_so_once(tmp_path, monkeypatch):
    """A user's program tuned from Legion's default mapping with the default mapper as its only reference: the Next
    line said "keep Legion's default mapper (run without --mapper): best.dsl is not shown to be faster than it here;
    no candidate beat the default mapper (run without --mapper)", the same advice twice. It is said once; with the
    expert mapper measured too, the comparison of the two references stays."""
    final = {"iter-2": [10.4, 9.6, 10.9, 9.5, 10.2], "iter-1": [10.0, 10.3, 9.4, 10.1, 9.7],
             "default": [10.4, 9.8, 10.8, 9.7, 10.5]}
    summary = commands.final_comparison("circuit", noisy_store(tmp_path, monkeypatch, final), rounds=5)
    assert summary["best"] == "iter-2" and not summary["vs"]["iter-1"]["significant"]  # the premise
    step = commands.next_step(summary, default_start=True)
    assert step == ("Next: keep Legion's default mapper (run without --mapper): best.dsl is not shown to be faster "
                    "than the start program (iter-1, iter-001/mapper.dsl), which maps as Legion's default mapper "
                    "does, nor than Legion's default mapper here. To search further, give the same command a larger "
                    "--iters (it extends this run)."), step
    # another start (a program of the user's own): the default mapper is named, as compared with it
    step = commands.next_step(summary, start_file="mine.dsl")
    assert "here; the default mapper is not shown to be faster than it: the default mapper measured" in step, step
    # the pick is the start itself
    final["iter-1"] = [11.0, 11.3, 10.4, 11.1, 10.7]
    summary = commands.final_comparison("circuit", noisy_store(tmp_path / "b", monkeypatch, final), rounds=5)
    assert summary["best"] == "iter-1"  # the premise
    step = commands.next_step(summary, default_start=True)
    assert step.count("run without --mapper") == 1 and "no candidate beat" not in step, step


def test_a_next_step_after_a_start_file_names_one_program_to_keep(tmp_path, monkeypatch):
    """`tune --start my.dsl`: the Next line said "keep your start program (my.dsl): tuning found nothing faster; no
    candidate beat the default mapper (run without --mapper)", two programs to keep. It names one: the start, with how
    the default mapper compared with it, or the default mapper where it measured significantly higher than the
    start."""
    mine = tmp_path / "my.dsl"
    mine.write_text("Task * CPU;\n")
    final = {"iter-2": [9.0, 9.4, 8.8, 9.1, 9.2], "iter-1": [10.0, 10.3, 9.4, 10.1, 9.7],
             "default": [9.9, 9.8, 10.1, 9.7, 10.2]}
    summary = commands.final_comparison("circuit", noisy_store(tmp_path, monkeypatch, final), rounds=5)
    assert summary["best"] == summary["start"] == "iter-1", summary  # the premise: the start stays the pick
    step = commands.next_step(summary, start_file=str(mine))
    assert step.startswith(f"Next: keep your start program ({mine}): tuning found nothing faster; the default mapper "
                           "is not shown to be faster than it: the default mapper measured 1.00x your start "
                           "program's throughput (not significant)."), step
    assert "run without --mapper" not in step, step
    # the default mapper measured significantly higher than the start: it alone is the advice
    final["default"] = [12.0, 12.2, 11.9, 12.1, 12.0]
    summary = commands.final_comparison("circuit", noisy_store(tmp_path / "b", monkeypatch, final), rounds=5)
    step = commands.next_step(summary, start_file=str(mine))
    assert step.startswith("Next: keep the default mapper (run without --mapper): against your start program "
                           f"({mine}) it measured 1.2"), step
    assert "x the start program's throughput (2" in step and "% faster, significant), and no candidate" in step, step
    assert "keep your start program" not in step, step


def test_a_next_step_that_keeps_the_default_mapper_after_the_best_beat_it_says_why(tmp_path, monkeypatch):
    """A user's program tuned from Legion's default mapping: the verdict said "iter-2 beat the default mapper ...
    1.11x (significant)", then the Next line said "keep Legion's default mapper (run without --mapper): best.dsl is
    not shown to be faster than it here", which reads as the default mapper. The decision stays (the start maps as
    Legion's default mapper does, and best.dsl is not shown faster than it); the line names the start program and
    says both facts, and the verdict that the gain is not the mapping's."""
    final = {"iter-2": [11.0, 11.4, 10.6, 11.2, 10.9], "iter-1": [10.6, 11.1, 10.2, 10.9, 10.5],
             "default": [9.9, 10.0, 10.1, 9.8, 10.0]}
    summary = commands.final_comparison("circuit", noisy_store(tmp_path, monkeypatch, final), rounds=5)
    # the premise: best beat the default mapper significantly, not the start
    assert summary["best"] == "iter-2" and summary["vs"]["default"]["significant"], summary
    assert not summary["vs"]["iter-1"]["significant"], summary
    step = " ".join(commands.next_step(summary, default_start=True).split())
    assert step.startswith("Next: keep Legion's default mapper (run without --mapper): best.dsl is not shown to be "
                           "faster than the start program (iter-1, iter-001/mapper.dsl), which maps as Legion's "
                           "default mapper does"), step
    vs_start, vs_default = (commands._comparison(summary, n) for n in ("iter-1", "default"))

    def faster(c) -> str:  # the ratio as a percentage, with the ratio's decimals less two
        return f"{100 * (c.ratio - 1):.{c.decimals() - 2}f} % faster"
    assert (f"does (it measured {vs_start.ratio:.{vs_start.decimals()}f}x the start's throughput, "
            f"{faster(vs_start)}, not significant)") in step, step
    assert (f"though it measured {vs_default.ratio:.{vs_default.decimals()}f}x Legion's default mapper's "
            f"throughput ({faster(vs_default)}, significant)") in step, step
    assert "a difference of the same mapping" in step, step
    # The verdict, which a reader may stop at, says so too: it said "iter-2 beat the default mapper ... (significant)".
    line = " ".join(commands.verdict(summary, default_start=True).split())
    assert line == ("Verdict: no gain of the mapping shown; the best (iter-2) measured "
                    f"{vs_default.ratio:.{vs_default.decimals()}f}x the default mapper's throughput "
                    f"({100 * (vs_default.ratio - 1):.0f} % faster, significant, but not shown to "
                    "differ from the start, which maps as the default mapper does: "
                    f"{vs_start.ratio:.{vs_start.decimals()}f}x the start's throughput, {faster(vs_start)}, not "
                    "significant; so the machine's noise or the DSL mapper's own cost)."), line
    # a start of the user's own, not Legion's default mapping: a gain over the default mapper is one
    assert commands.verdict(summary).startswith("Verdict: iter-2 beat the default mapper;")


def test_the_command_that_runs_the_pick_is_given_only_where_it_is_the_program_to_run(tmp_path, monkeypatch):
    """compare and tune ended with "Best mapper: ...; run it with: COMMAND" where the best scored 0.87 of Legion's
    default mapper, then "Next: keep Legion's default mapper": the command read as the advice. tune's line gives the
    command only where the pick beat the start and a reference; where the Next line keeps another program, or a
    reference is significantly faster, it says so and prints the pick to inspect, without a command."""
    run = "mapperopt run circuit --mapper best.dsl"
    path = tmp_path / "best.dsl"
    final = {"iter-2": [8.0, 9.9, 8.6, 9.5, 9.0], "iter-1": [5.0, 5.1, 5.0, 5.05, 5.02],
             "default": [8.2, 10.4, 9.0, 10.0, 9.6]}
    summaries = []

    def lines(name: str, default_start: bool = True) -> tuple[str, str | None]:  # the Best mapper and Next lines
        summaries.append(commands.final_comparison("circuit", noisy_store(tmp_path / name, monkeypatch, final),
                                                   rounds=5))
        return (commands.best_mapper_line(summaries[-1], path, default_start=default_start, command=run),
                commands.next_step(summaries[-1], default_start=default_start))

    # slower than the default mapper, not significantly: the Next line keeps it
    line, step = lines("slower")
    c = commands._comparison(summaries[-1], "default")
    assert c.ratio < 1 and not c.significant  # the premise
    assert "no candidate beat the default mapper (run without --mapper)" in step, step
    assert line == (f"Best mapper found: iteration 2, the final comparison's pick ({path}), but not shown faster than "
                    f"Legion's default mapper (measured at {c.ratio:.{c.decimals()}f}x its throughput): the Next line, "
                    "last, says what to keep. The pick, best.dsl (iteration 2), printed below to inspect"), line
    # significantly faster than it: the line says to keep it, and gives no command
    final["default"] = [10.0, 10.1, 10.0, 10.05, 10.02]
    line, step = lines("faster")
    assert "Legion's default mapper is significantly faster here; keep it (run without --mapper)" in line, line
    assert line.endswith("The pick, best.dsl (iteration 2), printed below to inspect"), line
    # not shown faster than the start (a program of the user's), though faster than the default mapper: the start
    final.update({"iter-1": [8.6, 8.7, 8.65, 8.7, 8.6], "default": [5.0, 5.1, 5.0, 5.05, 5.02]})
    line, step = lines("start", default_start=False)
    assert step.startswith("Next: keep the start program (iter-1"), step
    assert "the start program is as good" in line and line.endswith("printed below to inspect"), line
    # faster than the start and the default mapper: the pick is the one to run, and no Next line says otherwise
    final["iter-1"] = [5.0, 5.1, 5.0, 5.05, 5.02]
    line, step = lines("gain")
    assert step is None
    assert line == f"Best mapper: iteration 2, the final comparison's pick ({path}), printed below; run it with: {run}"


def test_the_pick_is_tied_to_the_iterations_table(tmp_path, monkeypatch):
    """The iterations' table ends with the best iteration's own figure; the final comparison then measures the pick
    again with the other mappers, and gave other figures for "best" with nothing to tie the two: one sentence says
    which iteration of the table the pick is, that its figure is this measurement's, and with which mappers it was
    measured; where the pick is not the table's best, that it measured highest of the candidates and the start
    there."""
    store, _ = slow_start_store(tmp_path, monkeypatch)  # the table's best: iteration 5; measured together: the start
    summary = commands.final_comparison("circuit", store, rounds=3)
    assert store.best().iter == 5 and summary["best_iter"] == 1  # the premise
    assert commands.pick_line(summary, store.best().iter) == (
        "The pick is iteration 1, not the iterations table's best (iteration 5): measured again together with "
        "iter-5, iter-4, iter-3 and default in 3 rounds, interleaved, it measured highest of the candidates and the "
        "start; its figure above is this measurement's, not its row's in that table.")
    final = {"iter-2": [10.0, 10.1, 10.0], "iter-1": [5.0, 5.1, 5.0], "default": [4.0, 4.1, 4.0]}
    store = noisy_store(tmp_path / "same", monkeypatch, final)
    summary = commands.final_comparison("circuit", store, rounds=3)
    assert commands.pick_line(summary, store.best().iter) == (
        "The pick is iteration 2, the iterations table's best, measured again together with iter-1 (start) and "
        "default in 3 rounds, interleaved: its figure above is this measurement's, not its row's in that table.")
