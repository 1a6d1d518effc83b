"""benchmarks/evaluate.py, the resumable evaluation: the work list's order and dependencies, and a real CPU plan
(Stencil at the ci size, no GPU) whose units run, are saved, are not run again, and are reported with what is
still missing."""

import csv
import json
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from mapperopt.benchmarks import evaluate
from mapperopt.benchmarks.evaluate import default_plan, load_units, work_list, write_report


def test_the_work_list_puts_references_and_limits_first_and_finals_after_their_runs(monkeypatch):
    for name in ("MAPPEROPT_LLM_BASE_URL", "MAPPEROPT_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    plan = default_plan(benchmarks=["pennant", "stencil", "circuit"], sizes=["gpu", "tight", "ci"],
                        optimizers=["guided", "trace", "opentuner"], seeds=2, long_iters=100)
    units = work_list(plan)
    ids = [u.id for u in units]
    assert len(ids) == len(set(ids))
    assert ids[:2] == ["limit-copybw", "limit-dgemm"]
    # every size a benchmark has, Circuit and Stencil first, Pennant last
    assert [u.id for u in units if u.kind == "base"] == [
        "base-circuit-gpu", "base-circuit-tight", "base-circuit-ci", "base-stencil-gpu", "base-stencil-tight",
        "base-stencil-ci", "base-pennant-gpu", "base-pennant-tight", "base-pennant-ci"]
    assert "cpu-pennant-gpu" in ids
    # trace named in the plan: in the list, an endpoint configured here or not (`run` refuses it without one)
    assert "tune-circuit-gpu-trace-i10-s0" in ids
    tunes = [u for u in units if u.kind == "tune"]
    assert max(ids.index(u.id) for u in units if u.kind in ("base", "cpu")) < ids.index(tunes[0].id)
    # seed 0 of every optimizer on one benchmark and size before the next, and on every one before any seed 1
    short = [(u.seed, u.bench, u.size, u.optimizer) for u in tunes if u.iters == 10]
    assert short[:27] == [(0, b, s, o) for b in ("circuit", "stencil", "pennant") for s in ("gpu", "tight", "ci")
                          for o in ("guided", "trace", "opentuner")]
    assert [x[0] for x in short] == sorted(x[0] for x in short)
    finals = {u.id: u for u in units if u.kind == "final"}
    final = finals["final-circuit-gpu-i10"]
    assert set(final.needs) == {f"tune-circuit-gpu-{o}-i10-s{s}" for o in ("guided", "trace", "opentuner")
                                for s in (0, 1)}
    assert all(ids.index(n) < ids.index(final.id) for n in final.needs)
    long = [i for i in ids if "-i100-" in i]
    assert long and ids.index(long[0]) > max(ids.index(i) for i in finals if i.endswith("-i10"))
    assert finals["final-circuit-gpu-i100"].optimizer == "opentuner"
    # without GPUs: no ceilings and no CPU comparison
    assert not [u for u in work_list({**plan, "gpus": 0}) if u.kind in ("limit", "cpu")]


def test_a_cpu_plan_runs_resumes_and_reports_what_is_missing(tmp_path):
    results = tmp_path / "eval"
    plan = default_plan(benchmarks=["stencil"], sizes=["ci"], gpus=0, optimizers=["random"], iters=1,
                        seeds=1, long_iters=0, base_rounds=1, final_rounds=1, min_time_s=0.05)
    lines = []
    assert evaluate.run(plan, results, Path("benchmarks/gpu"), stop_after=0, say=lines.append) == []
    assert json.loads((results / "plan.json").read_text()) == plan and not load_units(results)
    assert lines and lines[0].startswith("Stopping")

    finished = evaluate.run(plan, results, Path("benchmarks/gpu"), stop_after=900, say=lines.append)
    assert finished == ["base-stencil-ci", "tune-stencil-ci-random-i1-s0", "final-stencil-ci-i1"], lines
    units = load_units(results)
    assert {u["status"] for u in units.values()} == {"ok"}, units
    base = units["base-stencil-ci"]["mappers"]
    assert base["default"]["estimate"]["value"] > 0 and base["expert"]["estimate"]["value"] > 0
    # one execution (base_rounds 1) has no spread: null and why, as a run's result.json says, not a spread of 0
    for m in base.values():
        assert len(m["estimate"]["values"]) == 1 and m["estimate"]["spread"] is None, m
        assert m["estimate"]["no_spread"] == "one measured execution: no estimate of the noise", m
    assert base["expert"]["printed"]["BANDWIDTH"]["unit"] == "GB/s"  # what the application prints, kept
    tune = units["tune-stencil-ci-random-i1-s0"]
    assert len(tune["records"]) == 1 and tune["reference_first"] > 0 and tune["wall_s_tuning"] > 0
    final = units["final-stencil-ci-i1"]["summary"]
    assert final["optimizers"]["random"]["runs"] == 1

    stamps = {p: p.stat().st_mtime_ns for p in (results / "units").iterdir()}
    assert evaluate.run(plan, results, Path("benchmarks/gpu"), stop_after=900, say=lines.append) == []
    assert {p: p.stat().st_mtime_ns for p in (results / "units").iterdir()} == stamps

    # a second seed asked for: its run and the final measurement are missing, and the report says so
    (results / "plan.json").write_text(json.dumps({**plan, "seeds": 2}))
    text = write_report(results, tmp_path / "report.md", shown=Path("reports/x"))
    assert (tmp_path / "report.md").read_text() == text
    assert "| Legion default mapper | - | 1 |" in text
    row = next(line for line in text.splitlines() if line.startswith("| random | 1 | 1 of 2 |"))
    assert "provisional" in row and "of 1 |" in row  # the failed share of its one evaluation
    # the divisor of a provisional score is shown, so the reader can recompute it, in GFLOP/s (the app prints GFLOPS)
    assert base["expert"]["unit"] == "GFLOPS" and "GFLOPS" not in text
    assert f"provisional, / {evaluate._fmt(tune['reference_first'])} GFLOP/s;" in row, row
    # one run of two: its score is the mean and the best; a spread, a worst and a median of one value are not figures
    score = f"{(tune['best_throughput'] or 0.0) / tune['reference_first']:.2f}"
    noise = evaluate.spread(load_units(results), results, "stencil", "ci")
    # (marked where its divisor, another execution of the expert, reads otherwise than the reference unit's)
    expert = base["expert"]["estimate"]["value"]
    off = evaluate.off_divisor(tune["reference_first"], expert, noise) is not None and \
        f"{(tune['best_throughput'] or 0.0) / expert:.2f}" != score
    assert f"| 1 of 2 | {score} | n/a | {score} | {score} | {score}{'‡' if off else ''} |" in row, row
    # and the best against Legion's default mapper in the reference unit, for when the best found is the default
    versus = (tune["best_throughput"] or 0.0) / base["default"]["estimate"]["value"]
    # (marked within noise where two executions of one mapper here differed by more: on a shared CPU they may)
    assert f"| {score}{'‡' if off else ''} | {evaluate._marked(versus, noise)} | " in row, row
    # one round: one execution each, nothing trimmed
    assert "(one execution each, measured together: no spread)" in text and "trimmed mean" not in text
    # a run whose every evaluation failed has no unit of its own; its divisor keeps the expert's
    failed = {**tune, "throughput_unit": None, "best_throughput": None, "best_dsl": None, "best_iter": None}
    (results / "units" / "tune-stencil-ci-random-i1-s0.json").write_text(json.dumps(failed))
    row = next(line for line in write_report(results, tmp_path / "failed.md", shown=Path("reports/x")).splitlines()
               if line.startswith("| random | 1 | 1 of 2 |"))
    assert f"provisional, / {evaluate._fmt(tune['reference_first'])} GFLOP/s;" in row, row
    (results / "units" / "tune-stencil-ci-random-i1-s0.json").write_text(json.dumps(tune))
    assert "- `tune-stencil-ci-random-i1-s1`" in text and "- `final-stencil-ci-i1`" in text  # stale final
    assert "python3 benchmarks/gpu/evaluate.py run --results reports/x" in text
    # a person's status first; the commands and the log of device calls under "How it was run", after the tables
    noted = write_report(results, tmp_path / "noted.md", notes={"summary": "STATUS-TEXT", "log": "CALLS-TEXT"},
                         shown=Path("reports/x"))
    how = noted.index("## How it was run")
    assert noted.index("STATUS-TEXT") < noted.index("## Tuning") < how < noted.index("CALLS-TEXT")
    assert noted.index("evaluate.py run --results reports/x", how) < noted.index("## Not run yet")
    # the device time of what is left, from the seconds the done tuning unit took per iteration (over all its calls)
    cost = text[text.index("## Device time of what is left"):text.index("## Not run yet")]
    per_iter = tune["wall_s_tuning"] / len(tune["records"])
    assert "| stencil | ci | " in cost and " s (the expert's in the comparison) | " in cost
    # random's measured; guided's, not run, derived from it (not called measured)
    assert f" s (estimated: the other's + one execution) / {per_iter:.0f} s (measured over 1 iteration) | 1 | 3 |" \
        in cost, cost
    assert "where the table says a lower bound, its device time is one" in cost
    assert "| seed 0 of every optimizer, 1 iterations | 0 |" in cost
    assert "| every seed, 1 iterations, and their final units | 2 |" in cost
    assert ("Against the expert" in text) == (tune["best_dsl"] is not None)
    if tune["best_dsl"]:  # the best mapper in full, not only its changed lines
        assert "The best mapper:\n\n```\n" + tune["best_dsl"].rstrip() + "\n```" in text
    assert (results / "stencil-ci.png").stat().st_size > 0
    assert [u.id for u in work_list({**plan, "seeds": 2}) if not evaluate.is_done(u, units.get(u.id))] == [
        "tune-stencil-ci-random-i1-s1", "final-stencil-ci-i1"]


def test_the_change_against_the_expert_lists_added_and_removed_statements():
    expert = "# the expert\nTask * GPU,CPU;\nRegion * * GPU FBMEM;\nRegion * rp_shared GPU ZCMEM;\n"
    best = "Task * GPU,CPU;\nRegion * * GPU FBMEM;\nLayout * * * SOA F_order;\n"
    assert evaluate.describe_change(expert, best) == ["@@", " Task * GPU,CPU;", " Region * * GPU FBMEM;",
                                                      "-Region * rp_shared GPU ZCMEM;", "+Layout * * * SOA F_order;"]
    # a comment between statements leaves a blank line in the normalised text (configs/circuit.dsl's second line):
    # not a statement, so no empty `-` line
    assert [line for line in evaluate.describe_change("Task * GPU,CPU;\n# why\nRegion * * GPU FBMEM;\n", best)
            if line[:1] in "+-"] == ["+Layout * * * SOA F_order;"]


def test_no_tuning_where_the_expert_failed(tmp_path):
    # the reference unit as a run where the expert does not fit writes it (what Pennant's `tight` size gave)
    results = tmp_path / "eval"
    plan = default_plan(benchmarks=["stencil"], sizes=["ci"], gpus=0, optimizers=["random"], iters=1, seeds=1,
                        long_iters=0)
    reason = "run: aborted: error R403: no memory of the list FBMEM can hold requirement 3"
    (results / "units").mkdir(parents=True)
    (results / "units" / "base-stencil-ci.json").write_text(json.dumps({
        "schema": evaluate.SCHEMA, "unit": "base-stencil-ci", "kind": "base", "status": "failed", "rounds": 1,
        "started": "2026-12-02T03:33:00Z",
        "mappers": {"default": {"estimate": None, "reason": "run: aborted", "unit": None, "printed": {}},
                    "expert": {"estimate": None, "reason": reason, "unit": None, "printed": {}}}}))
    lines = []
    assert evaluate.run(plan, results, Path("benchmarks/gpu"), stop_after=900, say=lines.append) == []
    assert not (results / "work").exists()
    text = write_report(results, tmp_path / "report.md")
    assert f"expert: {reason}" in text and "its tuning units are not run" in text
    assert "- `tune-stencil-ci-random-i1-s0`: not run, the expert failed at this size" in text


def test_a_reference_where_only_the_default_mapper_failed_is_done(tmp_path):
    # what Pennant's `tight` size gave: Legion's default mapper overflows the framebuffer, the expert spills and
    # measures
    results = tmp_path / "eval"
    plan = default_plan(benchmarks=["stencil"], sizes=["ci"], gpus=0, optimizers=["random"], iters=1, seeds=1,
                        long_iters=0)
    reason = "run: aborted: {5}{default_mapper}: Default mapper failed allocation of size 6606028800 bytes"
    expert = {"values": [2.5], "value": 2.5, "low": 2.5, "high": 2.5, "spread": 0.0}
    (results / "units").mkdir(parents=True)
    (results / "units" / "base-stencil-ci.json").write_text(json.dumps({
        "schema": evaluate.SCHEMA, "unit": "base-stencil-ci", "kind": "base", "status": "failed", "rounds": 1,
        "started": "2026-12-02T06:25:00Z", "error": f"default: {reason}",
        "mappers": {"default": {"estimate": None, "reason": reason, "unit": None, "printed": {}},
                    "expert": {"estimate": expert, "reason": None, "unit": "GFLOPS", "printed": {}}}}))
    lines = []
    # done, so not run again even when failed units are retried (only the reference units asked for)
    assert evaluate.run(plan, results, Path("benchmarks/gpu"), stop_after=900, retry_failed=True, only="^base-",
                        say=lines.append) == []
    text = write_report(results, tmp_path / "report.md")
    # Legion's default mapper failing is a result the done unit records, not a unit that could not run
    assert "Work list: 1 of " in text and (" units done (1 of them record that Legion's default mapper fails at that "
                                           "size), 0 could not run") in text
    assert f"| Legion default mapper | - | 1 | failed: {reason} |" in text
    assert "not done yet (first: `tune-stencil-ci-random-i1-s0`)" in text


def _saved(results: Path, unit_id: str, **data) -> None:
    (results / "units").mkdir(parents=True, exist_ok=True)
    (results / "units" / f"{unit_id}.json").write_text(json.dumps(
        {"schema": evaluate.SCHEMA, "unit": unit_id, "status": "ok", "started": "2026-12-02T03:30:00Z", **data}))


def test_the_report_states_its_bases(tmp_path):
    # saved outcomes as a GPU machine writes them: a reference unit of one round whose expert printed its bandwidth,
    # one of two seeds tuned, and Pennant's CPU run
    results = tmp_path / "eval"
    plan = default_plan(benchmarks=["stencil"], sizes=["ci"], gpus=0, optimizers=["random"], iters=10, seeds=2,
                        long_iters=0)
    results.mkdir()
    (results / "plan.json").write_text(json.dumps(plan))
    one = {"values": [100.0], "value": 100.0, "low": 100.0, "high": 100.0, "spread": 0.0}
    bandwidth = {"BANDWIDTH": {"median": 210.0, "values": [210.0], "unit": "GB/s"}}
    _saved(results, "base-stencil-ci", kind="base", rounds=1, wall_s=1000.0, mappers={
        "default": {"estimate": {**one, "value": 80.0}, "reason": None, "unit": "GFLOPS", "printed": {}},
        "expert": {"estimate": one, "reason": None, "unit": "GFLOPS", "printed": bandwidth}})
    records = [{"iter": i, "status": "ok", "throughput": 120.0, "best_throughput": 120.0} for i in range(1, 11)]
    _saved(results, "tune-stencil-ci-random-i10-s0", kind="tune", bench="stencil", size="ci", optimizer="random",
           iters=10, seed=0, reference_first=95.0, throughput_unit="GFLOPS", best_throughput=120.0, best_iter=4,
           best_dsl="Task * GPU,CPU;\nRegion * * GPU FBMEM;\n", wall_s=20000.0, wall_s_tuning=30000.0,
           records=records)
    _saved(results, "cpu-pennant-gpu", kind="cpu", bench="pennant", size="gpu", cpus=12,
           args=["-npieces", "12", "-numpcx", "1", "-cstop", "5"], throughput=1.5e7, throughput_unit="zone-cycles/s",
           time_s=1.49)
    text = write_report(results, tmp_path / "report.md", notes={"history": "HISTORY-TEXT", "log": "CALLS-TEXT"})

    # the best found against Legion's default mapper first, then against the expert (which may be the weaker one)
    # and against the expert measured with the same runtime (the reference unit's), then its comparison's first
    assert ("### stencil, size `ci`: best mapper found\n\n"
            "1.50x Legion's default mapper (its reference unit's 80 GFLOP/s), 1.20x the "
            "expert in its reference unit (1.26x its first execution in the comparison).\n") in text
    # the stencil's bytes per flop, from the two figures its execution printed
    assert "printed BANDWIDTH = 210 GB/s (2.10 bytes per flop)" in text
    # the provisional divisor is another single execution of the expert: how far it is from the reference unit's
    assert "95 GFLOP/s (-5.0% against the reference unit's)" in text
    # one divisor per table: Legion's default mapper over the same expert execution as the optimizers' rows
    assert ("| Legion default mapper | - | 1 | 0.84‡ | | | | | 1.00 | | | the expert's first (95 GFLOP/s), "
            "as every row "
            "here;") in text, text
    # the time per run is the tuning's, over all its calls (30,000 s), not the unit's last call (its wall_s, 20,000 s)
    assert "| tuning time per run (all calls) |" in text and "| 1 of 2 | 1.26 | n/a |" in text
    assert "| 500.0 min | provisional" in text
    assert "Tuning time per run: the wall time of its iterations summed over every device call" in text
    # the header tells the computed figures from the hand-written notes
    assert "computed by `benchmarks/gpu/evaluate.py`" in text and "written by hand" in text
    assert "Every figure below" not in text
    # what the Pennant CPU run that GPU figures are compared with ran
    assert ("not a ceiling, Pennant's CPU run: the `gpu` size's deck (leblanc_long4x30.pnt) with Legion's default "
            "mapper on 12 CPUs (`-npieces 12 -numpcx 1 -cstop 5`), 1.500e+07 zone-cycles/s over 1.49 s timed") in text
    # rates of a million and more keep 4 significant figures: enough for the 2-decimal ratios printed beside them
    assert evaluate._fmt(150069381.0) == "1.501e+08" and evaluate._fmt(159636722.0) == "1.596e+08"
    # a newcomer meets "unit" and "the expert mapper" in the header: both defined there, "unit" where it first appears
    header = text[:text.index("## Physical limits")]
    assert "a unit is one piece of work" in header and "units/<unit id>.json" in header
    # (the first lines above the details count "planned units" only)
    details = header[header.index("## What ran"):]
    assert details[details.index(" units"):].startswith(" units (a unit is one piece of work: "), header
    assert "the expert mapper is the hand-written DSL mapper each benchmark ships with" in header
    # the report's commands need mapperopt installed (a plain python3 stops at ModuleNotFoundError)
    how = text[text.index("## How it was run"):]
    assert "with mapperopt installed (the README's install" in how
    # what changed during the evaluation in its own section, after the results, before how it was run
    assert text.index("## Best mapper found") < text.index("## Changes during the evaluation\n\nHISTORY-TEXT") \
        < text.index("## How it was run") < text.index("CALLS-TEXT")
    # the device time left: 3,000 s per iteration measured (the tuning's 30,000 s over all its calls, not the last
    # call's 20,000 s), 10 iterations of seed 1 and the final unit's 5 rounds of the expert and two bests at 500 s an
    # execution (the reference unit's 1,000 s over its two)
    cost = text[text.index("## Device time of what is left"):text.index("## Not run yet")]
    assert ("| 3500 s (estimated: the other's + one execution) / 3000 s (measured over 10 iterations) | 10 | 15 | "
            "10.4 h |") in cost, cost
    assert "nothing done: 20 = 1 optimizers x 2 seeds x 10; " in cost
    # 37,500 s of units: 68 calls of at most 555 s; a session's 1,800 s hold a start (90 s), the build (35 s) and
    # three warm calls (10 s each): 1,645 s of units, so 23 sessions; device time 37,500 + 23 x 125 + 68 x 10 s
    assert evaluate.UNITS_PER_SESSION_S == 1645
    assert "| every seed, 10 iterations, and their final units | 2 | 10.4 h | 68 | 11.4 h | 23 |" in cost, cost
    assert "1,645 s of units per session" in cost


def test_units_of_two_cards_are_never_mixed_in_one_folder(tmp_path, monkeypatch, capsys):
    # a folder from before the card was kept in plan.json: the copy-bandwidth unit names it
    results = tmp_path / "h200-eval"
    (results / "units").mkdir(parents=True)
    plan = default_plan(benchmarks=["stencil"], sizes=["ci"], optimizers=["random"], iters=1, seeds=1)
    (results / "plan.json").write_text(json.dumps({k: v for k, v in plan.items() if k != "gpu"}))
    copy = Path("reports/h200-eval/units/limit-copybw.json").read_text()
    assert json.loads(copy)["gpu"].startswith("NVIDIA H200, ")
    (results / "units" / "limit-copybw.json").write_text(copy)
    before = {p: p.read_bytes() for p in results.rglob("*") if p.is_file()}

    monkeypatch.setattr(evaluate, "this_gpu", lambda: "NVIDIA H100 80GB HBM3")
    assert evaluate.main(["run", "--results", str(results), "--stop-after", "0"]) == 2
    err = capsys.readouterr().err
    assert "holds units measured on NVIDIA H200; this machine's GPU is NVIDIA H100 80GB HBM3" in err, err
    assert f"--results {tmp_path / 'h100-eval'}" in err, err
    assert {p: p.read_bytes() for p in results.rglob("*") if p.is_file()} == before  # nothing written
    monkeypatch.setattr(evaluate, "this_gpu", lambda: None)  # no GPU at all
    assert evaluate.main(["run", "--results", str(results), "--stop-after", "0"]) == 2
    assert "no NVIDIA GPU on this machine" in capsys.readouterr().err

    # the same card resumes, and the folder keeps its name from then on
    monkeypatch.setattr(evaluate, "this_gpu", lambda: "NVIDIA H200")
    assert evaluate.main(["run", "--results", str(results), "--stop-after", "0"]) == 0
    assert json.loads((results / "plan.json").read_text())["gpu"] == "NVIDIA H200"
    # the report is named after the folder and the card
    assert evaluate.main(["report", "--results", str(results)]) == 0
    text = (tmp_path / "h200-evaluation.md").read_text()
    assert text.startswith("# Evaluation on one H200\n") and "On a lent H200 of the project" in text
    assert f"`h200-eval.tar.gz` (`tar -xzf h200-eval.tar.gz -C {tmp_path}`)" in text

    # a new folder takes the card it first runs on
    other = tmp_path / "h100-eval"
    monkeypatch.setattr(evaluate, "this_gpu", lambda: "NVIDIA H100 80GB HBM3")
    assert evaluate.main(["run", "--results", str(other), "--stop-after", "0", "--benchmarks", "stencil"]) == 0
    assert evaluate.main(["report", "--results", str(other)]) == 0
    assert (tmp_path / "h100-evaluation.md").read_text().startswith("# Evaluation on one H100\n")


def test_the_list_tells_a_started_tuning_unit_from_an_untouched_one(tmp_path, capsys):
    """A tuning unit stopped at the call's time limit keeps its finished iterations in its comparison's journal (the
    next call resumes it), but `list` called it `missing`, as if nothing of it had run."""
    import shutil

    results = tmp_path / "h100-eval"
    shutil.copytree("reports/h100-eval", results)  # a real evaluation folder: Circuit `gpu`, OpenTuner's seed 0 run
    evaluate.restore_journals(results)  # its journals, committed as .xz
    # as when OpenTuner's run stopped, whatever later calls added: no tuning unit of Circuit saved but guided's seed 0,
    # no run in its comparison but guided's and OpenTuner's, no comparison of Circuit at another size
    for unit in results.glob("units/tune-circuit-*.json"):
        if unit.name != "tune-circuit-gpu-guided-i10-s0.json":
            unit.unlink()
    for settings in results.glob("work/circuit/compare-*/settings.json"):
        if json.loads(settings.read_text())["size"] != "gpu":
            shutil.rmtree(settings.parent)
    for run in results.glob("work/circuit/compare-*/*-1"):
        if run.name not in ("guided-1", "opentuner-1"):
            shutil.rmtree(run)
    journal = next(results.glob("work/circuit/compare-*/opentuner-1/state.jsonl"))
    journal.write_text("".join(journal.read_text().splitlines(keepends=True)[:3]))  # 3 of its 10 iterations
    before = {p: p.read_bytes() for p in results.rglob("*") if p.is_file()}
    assert evaluate.main(["list", "--results", str(results)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "started  tune-circuit-gpu-opentuner-i10-s0 (3 of 10 iterations done)" in lines, lines
    assert "missing  tune-circuit-gpu-optuna-i10-s0" in lines, lines  # no run of it in the comparison
    assert "missing  tune-circuit-tight-opentuner-i10-s0" in lines, lines  # another size's comparison: none
    assert "ok       tune-circuit-gpu-guided-i10-s0" in lines, lines
    assert {p: p.read_bytes() for p in results.rglob("*") if p.is_file()} == before  # listing writes nothing


def _reference_folder(results: Path, rounds: int, expert: list[float], default: list[float], gpu: str | None = None,
                      **plan_options) -> dict:
    """A results folder with a plan (Stencil at the ci size, random and guided) and its reference unit."""
    plan = default_plan(**{"benchmarks": ["stencil"], "sizes": ["ci"], "gpus": 0, "optimizers": ["random", "guided"],
                           "iters": 10, "seeds": 2, "long_iters": 0, "base_rounds": rounds, "gpu": gpu,
                           **plan_options})
    results.mkdir(parents=True)
    (results / "plan.json").write_text(json.dumps(plan))

    def estimate(values):
        middle = sorted(values)[len(values) // 2]
        return {"values": values, "value": middle, "low": min(values), "high": max(values),
                "spread": (max(values) - min(values)) / middle}
    _saved(results, "base-stencil-ci", kind="base", rounds=rounds, wall_s=100.0 * rounds * 2, mappers={
        name: {"estimate": estimate(values), "reason": None, "unit": "GFLOPS", "printed": {}}
        for name, values in (("default", default), ("expert", expert))})
    return plan


def _tuned(results: Path, seed: int, best: float, first: float, wall_s_tuning: float = 300.0) -> None:
    records = [{"iter": i, "status": "ok", "throughput": best, "best_throughput": best} for i in range(1, 11)]
    _saved(results, f"tune-stencil-ci-random-i10-s{seed}", kind="tune", bench="stencil", size="ci", optimizer="random",
           iters=10, seed=seed, reference_first=first, throughput_unit="GFLOPS", best_throughput=best, best_iter=4,
           best_dsl="Task * GPU,CPU;\n", wall_s=wall_s_tuning, wall_s_tuning=wall_s_tuning, records=records)


def _repeated(results: Path) -> None:
    """Makes the reference unit (expert 100, default 95 GFLOP/s) the repeat of a new one where the default mapper ran
    99 (99 / 95: a 4.2 % spread)."""
    (results / "units" / "repeats").mkdir()
    (results / "units" / "base-stencil-ci.json").rename(results / "units" / "repeats" / "base-stencil-ci.json")
    _saved(results, "base-stencil-ci", **{**json.loads((results / "units" / "repeats" / "base-stencil-ci.json")
                                                       .read_text()), "mappers": {
        "default": {"estimate": {"values": [99.0], "value": 99.0}, "reason": None, "unit": "GFLOPS", "printed": {}},
        "expert": {"estimate": {"values": [100.0], "value": 100.0}, "reason": None, "unit": "GFLOPS",
                   "printed": {}}}})


def _one_run_report(tmp_path, best: float) -> str:
    """The report of one tuning run whose best measured `best` against the expert's 96 in the comparison, beside a
    reference unit (expert 100, default mapper 95) repeated once."""
    results = tmp_path / "eval"
    _reference_folder(results, 1, expert=[100.0], default=[95.0])
    _repeated(results)
    _tuned(results, 0, best=best, first=96.0)
    return write_report(results, tmp_path / "report.md", notes={})


def test_a_ratio_within_the_measured_spread_is_marked_and_given_against_the_same_runtime(tmp_path):
    """The headline ratios were a run's best over the comparison's first execution of the expert (measured days
    before, with another runtime): the heading gives it against the expert of the reference unit too, and marks a
    ratio no larger than the spread measured between two executions of one mapper."""
    text = _one_run_report(tmp_path, best=101.0)
    # over each execution of the default mapper (95 and 99: 1.06x and 1.02x)
    # 1.06x is beyond the 4.2 %: the range is not within as a whole, the expert's ratio is
    assert ("### stencil, size `ci`: best mapper found\n\n"
            "1.02-1.06x Legion's default mapper (its reference unit's 99 GFLOP/s; its 2 "
            "executions here 95-99), 1.01x the expert in its reference unit (within the 4.2 % two executions of one "
            "mapper differ by here) (1.05x its first execution in the comparison).\n") in text, text
    # the default mapper's row: also measured together with the expert
    assert ("| Legion default mapper | - | 1 | 1.03 | | | | | 1.00 | | | the expert's first (96 GFLOP/s), as every row "
            "here; measured together with the expert: 0.99 (within noise) |") in text, text
    # the best found over the default mapper in the table, and the run's best over the reference unit's expert
    assert "| 1.02 (within noise) | 0% of 10 |" in text, text
    assert "provisional, / 96 GFLOP/s; best / reference unit's expert: 1.01 (within noise)" in text, text
    # a ratio beyond the spread is not marked
    _tuned(tmp_path / "eval", 1, best=110.0, first=96.0)
    text = write_report(tmp_path / "eval", tmp_path / "report.md", notes={})
    assert ("### stencil, size `ci`: best mapper found\n\n"
            "1.11-1.16x Legion's default mapper (its reference unit's 99 GFLOP/s; its 2 "
            "executions here 95-99), 1.10x the "
            "expert in its reference unit (1.15x its first execution in the comparison).\n") in text, text
    header = text[:text.index("## Physical limits")]
    assert "within noise" in header and "units/repeats" in header


def test_the_spread_leaves_out_the_comparisons_first_execution_and_a_range_is_judged_whole(tmp_path):
    """The yardstick of "within noise" counted the expert's first execution in a tuning comparison, measured in
    another session (on the H200, before a runtime fix): 25 % here, which made every ratio "not a difference". Only
    the reference unit's rounds and its repeat (one session) count; and a range over the default mapper's executions
    is within only as a whole (1.04-1.08x is not within 4.2 %)."""
    results = tmp_path / "eval"
    _reference_folder(results, 1, expert=[100.0], default=[95.0])
    _repeated(results)
    _tuned(results, 0, best=103.0, first=80.0)
    assert evaluate.spread(load_units(results), results, "stencil", "ci") == pytest.approx(99 / 95 - 1)
    text = write_report(results, tmp_path / "report.md", notes={})
    assert ("### stencil, size `ci`: best mapper found\n\n"
            "1.04-1.08x Legion's default mapper (its reference unit's 99 GFLOP/s; its 2 "
            "executions here 95-99), 1.03x the expert in its reference unit (within the 4.2 % two executions of one "
            "mapper differ by here) (1.29x its first execution in the comparison).\n") in text, text
    header = text[:text.index("## Physical limits")]
    assert "not the expert's first execution in a tuning comparison" in header, header


def test_a_best_mapper_within_noise_names_the_ratios_it_judges(tmp_path):
    """"each within the 0.4 %" followed the comparison's 1.04x too: the sentence names the two ratios it judges."""
    text = _one_run_report(tmp_path, best=98.0)
    assert ("0.98x the expert in its reference unit (1.02x its first execution in the comparison); 0.99-1.03x and "
            "0.98x are within the 4.2 % two executions of one mapper differ by here: not a difference.\n") in text, text


def test_the_report_states_the_reference_protocol_and_the_spread_of_its_rounds(tmp_path):
    results = tmp_path / "eval"
    _reference_folder(results, 3, expert=[100.0, 110.0, 104.0], default=[90.0, 92.0, 91.0])
    text = write_report(results, tmp_path / "report.md", notes={})
    header = text[:text.index("## Physical limits")]
    assert "Reference units (plan.json `base_rounds`: 3): the median of 3 interleaved rounds of each mapper" in header
    # with 3 rounds the trimmed mean is the median; the rounds' range beside it
    assert ("Reference unit: expert 104 GFLOP/s (100-110), Legion's default mapper 91 GFLOP/s (90-92) (median of 3 "
            "interleaved rounds, range in brackets).") in text, text
    one = tmp_path / "one"
    _reference_folder(one, 1, expert=[100.0], default=[90.0])
    header = write_report(one, tmp_path / "one.md", notes={})
    assert "Reference units (plan.json `base_rounds`: 1): one execution of each mapper, measured together" in header


def test_a_single_execution_says_no_spread_whatever_its_unit_stored(tmp_path):
    """Units written before the writer stored null for one execution keep `"spread": 0.0` (the data stays as
    measured): a reader took it for "no noise". The page says that a single execution has no spread, and no ratio is
    marked within noise from it."""
    results = tmp_path / "eval"
    _reference_folder(results, 1, expert=[100.0], default=[99.5])  # stored spread 0.0, as the H200's units
    assert load_units(results)["base-stencil-ci"]["mappers"]["expert"]["estimate"]["spread"] == 0.0
    _tuned(results, 0, best=100.2, first=100.0)
    text = write_report(results, tmp_path / "report.md", notes={})
    assert ("Reference unit: expert 100 GFLOP/s, Legion's default mapper 99.5 GFLOP/s (one execution each, measured "
            "together: no spread).") in text, text
    header = text[:text.index("## Physical limits")]
    assert "a single execution has no spread" in header, header
    assert "(within noise" not in text and ", within noise" not in text, text  # no ratio is marked from it
    assert "| not measured |" in header and evaluate.spread(load_units(results), results, "stencil", "ci") is None


def test_the_tables_stats_of_one_and_two_runs_are_compares(tmp_path):
    """The page printed n/a for the std and median of two runs and the worst and median of one, where `mapperopt
    compare --report-only` on the same folder prints figures: the tables use compare's convention (one run: std
    n/a, worst and median its score; two: all figures), from the unit files' runs."""
    from mapperopt.optimizer.compare import stat_cells

    results = tmp_path / "eval"
    plan = _reference_folder(results, 1, expert=[100.0], default=[90.0])
    _tuned(results, 0, best=48.0, first=100.0)
    one = evaluate.row_scores(load_units(results), plan, "stencil", "ci", "random", 10)[0]
    assert stat_cells(one) == ["0.48", "n/a", "0.48", "0.48", "0.48"]
    _tuned(results, 1, best=60.0, first=100.0)
    two = evaluate.row_scores(load_units(results), plan, "stencil", "ci", "random", 10)[0]
    assert stat_cells(two) == ["0.54", "0.06", "0.48", "0.54", "0.60"]
    text = write_report(results, tmp_path / "report.md", notes={})
    assert "| random | 10 | 2 of 2 | 0.54 | 0.06 | 0.48 | 0.54 | 0.60 |" in text, text
    assert ("(as `mapperopt compare` prints them: of one run, std n/a and worst, median and best its score; of "
            "two, the median their mean)") in text, text


def test_the_full_list_command_names_its_results_folder(tmp_path):
    results = tmp_path / "eval"
    _reference_folder(results, 1, expert=[100.0], default=[90.0], seeds=25)
    text = write_report(results, tmp_path / "report.md", notes={}, shown=Path("reports/x-eval"))
    assert "more (`python3 benchmarks/gpu/evaluate.py list --results reports/x-eval`)" in text, text


def test_the_time_left_uses_another_cards_measured_iterations(tmp_path):
    """An optimizer kind with no iteration measured on this card costs what it cost, in executions, on another
    card's folder beside it (its random points time out), not one execution an iteration."""
    measured = tmp_path / "h200-eval"
    _reference_folder(measured, 1, expert=[100.0], default=[90.0], gpu="NVIDIA H200", gpus=None)
    # 600 s an iteration: 6 executions of 100 s (the reference unit's 200 s over its two)
    _tuned(measured, 0, best=101.0, first=96.0, wall_s_tuning=6000.0)
    _tuned(measured, 1, best=101.0, first=96.0, wall_s_tuning=6000.0)
    here = tmp_path / "h100-eval"
    _reference_folder(here, 1, expert=[100.0], default=[90.0], gpu="NVIDIA H100 80GB HBM3")
    cost = write_report(here, tmp_path / "h100.md", notes={}).split("## Device time of what is left")[1]
    assert "/ 600 s (estimated: 6.0 executions an iteration, as measured on the H200 over 20 iterations) |" in cost, \
        cost
    # guided (one profiling execution more) is measured nowhere: a lower bound, and said so where sessions are counted
    assert "| 200 s (estimated, a lower bound: 2 executions) /" in cost, cost
    assert "| sessions (a lower bound where a row above is) |" in cost, cost
    assert "| 5 | 5.1 h (a lower bound) | 34 | 5.7 h (a lower bound) | 12 (a lower bound) |" in cost, cost
    # a started unit's done iterations are not taken off: said, since `list` shows them
    assert "a tuning unit that `evaluate.py list` shows as started counts whole here" in cost, cost


def test_a_tight_size_has_no_bandwidth_target(tmp_path):
    """At a `tight` size what does not fit in the framebuffer is read from zero-copy memory over the host link: the
    card's copy bandwidth is no ceiling there, so no 80 % target either (as for Circuit, which has none)."""
    results = tmp_path / "eval"
    _reference_folder(results, 1, expert=[100.0], default=[90.0], sizes=["gpu", "tight"])
    for size in ("gpu", "tight"):
        saved = json.loads((results / "units" / "base-stencil-ci.json").read_text())
        for m in saved["mappers"].values():
            m["printed"] = {"BANDWIDTH": {"median": 200.0, "values": [200.0], "unit": "GB/s"}}
        _saved(results, f"base-stencil-{size}", **{**saved, "unit": f"base-stencil-{size}"})
    _saved(results, "limit-copybw", kind="limit", gpu="NVIDIA H200", copy_gbs=400.0, fp32_peak_gflops=1000.0,
           fp32_peak_source="a test's")
    text = write_report(results, tmp_path / "report.md", notes={})
    assert "| stencil | gpu | expert | 200 GB/s | 50.0% of the copy bandwidth 400 GB/s | target >= 80 % |" in text, text
    assert ("| stencil | tight | expert | 200 GB/s | 50.0% of the copy bandwidth 400 GB/s | no target: what does not "
            "fit in the framebuffer is read over the host link |") in text, text


def _tuned_as(results: Path, opt: str, seed: int, best: float, first: float, walls: list[float]) -> None:
    records = [{"iter": i, "status": "ok", "throughput": best, "best_throughput": best, "wall_s": w}
               for i, w in enumerate(walls, 1)]
    _saved(results, f"tune-stencil-ci-{opt}-i10-s{seed}", kind="tune", bench="stencil", size="ci", optimizer=opt,
           iters=10, seed=seed, reference_first=first, throughput_unit="GFLOPS", best_throughput=best, best_iter=4,
           best_dsl="Task * GPU,CPU;\n", wall_s=sum(walls), wall_s_tuning=sum(walls), records=records,
           folder="work/stencil/compare-x")


def test_a_summary_table_comes_before_the_notes(tmp_path):
    """A newcomer met ~3,000 words of notes before the first table: a short table per benchmark and size comes
    first, with the ceiling shares, guided's and the baselines' best against the expert, seeds done and whether the
    scores are provisional."""
    results = tmp_path / "eval"
    _reference_folder(results, 1, expert=[100.0], default=[90.0])
    _tuned_as(results, "guided", 0, best=110.0, first=100.0, walls=[30.0] * 10)
    _tuned_as(results, "random", 0, best=80.0, first=100.0, walls=[30.0] * 10)
    _tuned_as(results, "random", 1, best=50.0, first=100.0, walls=[30.0] * 10)
    text = write_report(results, tmp_path / "report.md", notes={"summary": "STATUS-TEXT"})
    assert text.index("## Summary") < text.index("STATUS-TEXT"), text
    # a short list at the top (its own test), a short intro, then the table: the protocol, the columns' explanation
    # and where the figures come from under it
    intro = text[text.index("Work list: "):text.index("| benchmark |")]
    assert len(intro) < 1500 and "Work list: " in intro, intro
    assert "the expert mapper is the hand-written DSL mapper" in intro, intro
    table_end = text.index("| provisional |\n\n") + len("| provisional |\n\n")
    below = text[table_end:text.index("Contents: ")]
    for moved in ("- default / ceiling, expert / ceiling: Legion's default mapper and the expert against the physical "
                  "ceiling",
                  "Reference units (plan.json `base_rounds`: 1)", "computed by `benchmarks/gpu/evaluate.py`",
                  "[How it was run](#how-it-was-run)"):
        assert moved in below and moved not in intro, (moved, below)
    summary = text[text.index("## Summary"):text.index("STATUS-TEXT")]
    assert ("| stencil | `ci` | - | - | 0.90 | 1.10 | 0.80 (random) | not measured | 1-2 of 2 | provisional |") \
        in summary, summary
    # a list of the sections, linked, after the summary
    assert ("Contents: [Physical limits](#physical-limits) · [Tuning: best throughput normalised to the expert "
            "mapper](#tuning-best-throughput-normalised-to-the-expert-mapper) · ") in text, text
    assert evaluate.anchor("Device time of what is left") == "device-time-of-what-is-left"
    # the best-mapper headings are short: the ratios are the line under them
    assert "### stencil, size `ci`: best mapper found\n\n1.22x Legion's default mapper" in text, text


def test_the_summary_marks_noise_as_the_tables_do_and_says_none_ran(tmp_path):
    """The summary showed Solomonik's 1.04 (over the expert's first execution in the comparison, measured before a
    runtime fix) unmarked, while its table said 1.00 within noise over the reference unit's expert; and "0.00 (none
    ran)" where no run found a mapper that runs. Where the divisor is the comparison's first execution, the figure
    over the reference unit's expert stands beside it, marked as the tables mark it, with the row's noise."""
    results = tmp_path / "eval"
    _reference_folder(results, 1, expert=[100.0], default=[95.0])
    _repeated(results)  # the reference unit: expert 100, default 99 (and 95 in its repeat): noise 4.2 %
    _tuned_as(results, "guided", 0, best=101.0, first=96.0, walls=[30.0] * 10)
    _tuned_as(results, "random", 0, best=0.0, first=96.0, walls=[30.0] * 10)
    text = write_report(results, tmp_path / "report.md", notes={})
    summary = text[text.index("## Summary"):text.index("## Physical limits")]
    # default / expert measured together first, then over the comparison's first execution
    assert ("| stencil | `ci` | - | - | 0.99 (within noise; comparison's first: 1.03) | 1.05 (reference unit: 1.01, "
            "within noise) | none found (random) | 4.2 % | 1 of 2 | provisional |") in summary, summary
    # the same figures as the table's last column
    assert "measured together with the expert: 0.99 (within noise) |" in text
    assert "best / reference unit's expert: 1.01 (within noise) |" in text
    # beyond the noise: the figure over the reference unit's expert, unmarked
    _tuned_as(results, "random", 1, best=110.0, first=96.0, walls=[30.0] * 10)
    text = write_report(results, tmp_path / "report.md", notes={})
    assert "| 1.15 (random; reference unit: 1.10) | 4.2 % | 1-2 of 2 | provisional |" in text, text
    # the columns are explained under the table, before the next section
    after = text[text.index("| benchmark |"):text.index("## Physical limits")]
    assert "in brackets" in after and "the noise column" in after, after


def _started(results: Path, unit_id: str, when: str) -> None:
    path = results / "units" / f"{unit_id}.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "started": when}))


def test_the_summary_leads_with_the_same_session_ratio_and_marks_what_predates_a_change(tmp_path):
    """The summary led with default / expert over the expert's first execution in a tuning comparison of another
    session (Pennant's 0.87, the reference unit's 0.94 in brackets), and no cell said that it was measured before a
    runtime fix or against an expert edited during the evaluation. The figure measured in one session (or with no
    listed change between its two executions) comes first, the other in brackets with its label; each figure carries
    the marks of the changes (`changes.json`) its executions predate, or of the expert's edit it is measured after."""
    results = tmp_path / "eval"
    _reference_folder(results, 1, expert=[100.0], default=[95.0])
    _started(results, "base-stencil-ci", "2026-12-03T10:00:00Z")  # after the fix
    _tuned_as(results, "guided", 0, best=101.0, first=96.0, walls=[30.0] * 10)
    _started(results, "tune-stencil-ci-guided-i10-s0", "2026-12-02T09:00:00Z")  # the comparison's first
    _tuned_as(results, "random", 1, best=110.0, first=96.0, walls=[30.0] * 10)
    _started(results, "tune-stencil-ci-random-i10-s1", "2026-12-03T11:00:00Z")
    (results / "changes.json").write_text(json.dumps([
        {"mark": "a", "from": "2026-12-03T00:00:00Z", "benchmarks": ["stencil"], "dsl": True,
         "what": "FIX-TEXT"},
        {"mark": "b", "from": "2026-12-02T09:30:00Z", "benchmarks": ["stencil"], "sizes": ["ci"], "expert": True,
         "what": "EDIT-TEXT"},
        {"mark": "c", "from": "2026-12-04T00:00:00Z", "benchmarks": ["cannon"], "what": "NOT-HERE"}]))
    text = write_report(results, tmp_path / "report.md", notes={})
    summary = text[text.index("## Summary"):text.index("## Physical limits")]
    # default / expert: measured together (after the fix, with the edited expert) first; the comparison's first
    # execution of the expert (before the fix, before the edit) in brackets
    # guided's best was measured in the unit that measured the comparison's first: that ratio first
    # random's best (after the fix) over the comparison's first (before it) is no same-runtime ratio: the reference
    # unit's (after it) first
    # (each figure over the comparison's first, 4 % below the reference unit's expert where no noise was
    # measured, marked ‡ wherever it stands)
    assert ("| stencil | `ci` | - | - | 0.95ᵇ (comparison's first: 0.99ᵃ‡) | 1.05ᵃ‡ (reference unit: 1.01ᵃᵇ) | "
            "1.10ᵇ (random; comparison's first: 1.15ᵃ‡) | not measured | 1 of 2 | provisional |") in summary, summary
    below = summary[summary.index("| provisional |"):]
    assert "ᵃ measured before FIX-TEXT (2026-12-03)" in below, below
    assert "ᵇ against the expert as edited during the evaluation: EDIT-TEXT (2026-12-02)" in below, below
    assert "NOT-HERE" not in below and "ᶜ" not in summary, summary
    # without changes.json (a folder whose reference never changed): no marks, the same order
    (results / "changes.json").unlink()
    summary = write_report(results, tmp_path / "report.md", notes={})
    assert ("| 0.95 (comparison's first: 0.99‡) | 1.05‡ (reference unit: 1.01) | 1.15‡ (random; reference unit: 1.10) |"
            in summary), summary


def test_the_summary_links_the_tuning_doc_from_where_the_page_is(tmp_path, monkeypatch):
    """The link was made relative to the current directory: from elsewhere, broken."""
    results = tmp_path / "repo" / "reports" / "eval"
    _reference_folder(results, 1, expert=[100.0], default=[90.0])
    _tuned_as(results, "guided", 0, best=110.0, first=100.0, walls=[30.0] * 10)
    for folder in ("elsewhere", "pages"):
        (tmp_path / folder).mkdir()
    (tmp_path / "repo" / "docs").mkdir()
    (tmp_path / "repo" / "docs" / "tuning.md").write_text("tuning\n")
    monkeypatch.chdir(tmp_path / "elsewhere")
    text = write_report(results, tmp_path / "pages" / "page.md", notes={})
    assert "([tuning.md](../repo/docs/tuning.md))" in text, text
    # a results folder copied out of a repository: the link went to its grandparent's docs/ (a folder that does not
    # exist); it goes to this script's repository's docs/tuning.md, from where the page is
    copy = tmp_path / "copy" / "eval"
    shutil.copytree(results, copy)
    text = write_report(copy, tmp_path / "pages" / "copy.md", notes={})
    link = re.search(r"\(\[tuning\.md\]\(([^)]+)\)\)", text)[1]
    assert (tmp_path / "pages" / link).resolve() == Path(evaluate.__file__).resolve().parents[1] / "docs" / "tuning.md"
    # where neither has it, the page names the file without a link
    monkeypatch.setattr(evaluate, "__file__", str(tmp_path / "nowhere" / "benchmarks" / "evaluate.py"))
    text = write_report(copy, tmp_path / "pages" / "copy.md", notes={})
    assert "(`docs/tuning.md` in the repository)" in text and "](../" not in text.split("## Physical")[0], text


def test_ratios_say_where_noise_was_not_measured_and_what_the_threshold_is(tmp_path):
    """With no repeat, a ratio was left unmarked, read as a difference; a threshold of two executions is a range
    of two samples, said."""
    results = tmp_path / "eval"
    _reference_folder(results, 1, expert=[100.0], default=[95.0])
    _tuned(results, 0, best=101.0, first=96.0)
    text = write_report(results, tmp_path / "report.md", notes={})
    assert "| 1.06 (noise not measured) |" in text, text
    assert "Noise: not measured here (no mapper executed twice in one session)" in text, text
    header = text[:text.index("## Physical limits")]
    assert "An unmarked provisional score, or any other ratio over an execution of the expert from another session, " \
        "is not shown to differ from 1" in header, header
    _repeated(results)
    text = write_report(results, tmp_path / "report.md", notes={})
    assert evaluate.noise_note(load_units(results), results, "stencil", "ci").startswith("Noise: 4.2 %")
    assert ("Noise: 4.2 %, the range of 2 executions of Legion's default mapper in one session (a range of two "
            "samples: a rough figure)") in text, text
    # the header's threshold counts the executions the tables' noise lines count
    header = text[:text.index("## Physical limits")]
    assert "(a range of 2 executions, said under each table)" in header, header
    three = tmp_path / "three"
    _reference_folder(three, 3, expert=[100.0, 110.0, 104.0], default=[90.0, 92.0, 91.0])
    header = write_report(three, tmp_path / "three.md", notes={})
    assert "(a range of 3 executions, said under each table)" in header, header


def test_the_tuning_time_tells_new_measurements_from_re_read_ones(tmp_path):
    """A run that re-reads programs another run of the comparison measured (seed 1 of guided on the GEMMs, each
    baseline's shared start) took 0.02-0.2 s for them: the time column counts what was measured anew, from the
    comparison's evaluations/ (each names the run and iteration that measured it)."""
    results = tmp_path / "eval"
    _reference_folder(results, 1, expert=[100.0], default=[95.0])
    _tuned_as(results, "guided", 0, best=101.0, first=96.0, walls=[30.0] * 10)
    _tuned_as(results, "guided", 1, best=101.0, first=96.0, walls=[30.0, *[0.05] * 9])
    _tuned_as(results, "random", 0, best=99.0, first=96.0, walls=[0.1, *[30.0] * 9])
    stored = results / "work" / "stencil" / "compare-x" / "evaluations"
    stored.mkdir(parents=True)
    measured = [f"guided-1/iter-{i:03d}" for i in range(1, 11)] + ["guided-2/iter-001"] + [
        f"work/stencil/compare-x/random-1/iter-{i:03d}" for i in range(2, 11)]  # the older form, results-relative
    for n, where in enumerate(measured):
        (stored / f"{n:016x}.json").write_text(json.dumps({"run_dir": where, "status": "ok"}))
    assert evaluate.new_measurements(results, json.loads(
        (results / "units" / "tune-stencil-ci-guided-i10-s1.json").read_text())) == {1}
    text = write_report(results, tmp_path / "report.md", notes={})
    assert "| 5.0, 0.5 min (measured anew: 10 of 10, 1 of 10) |" in text, text
    assert "| 4.5 min (measured anew: 9 of 10) |" in text, text
    assert "falls on whichever optimizer runs it first" in text, text


def test_a_row_of_fewer_runs_is_marked(tmp_path):
    results = tmp_path / "eval"
    _reference_folder(results, 1, expert=[100.0], default=[95.0])
    _tuned_as(results, "guided", 0, best=101.0, first=96.0, walls=[30.0] * 10)
    _tuned_as(results, "guided", 1, best=101.0, first=96.0, walls=[30.0] * 10)
    _tuned_as(results, "random", 0, best=99.0, first=96.0, walls=[30.0] * 10)
    text = write_report(results, tmp_path / "report.md", notes={})
    assert "| random | 10 | **1 of 2** † | 1.03 |" in text, text
    assert "| guided | 10 | 2 of 2 | 1.05 |" in text, text
    assert "† fewer runs than another row of this table" in text, text


def test_the_change_against_the_expert_keeps_context_lines():
    expert = "Task * GPU,CPU;\ndef f(Task task) {\n    return m[0];\n}\nRegion * * GPU FBMEM;\n"
    best = "Task * GPU,CPU;\ndef g(Task task) {\n    return m[0];\n}\nRegion * * GPU FBMEM;\n"
    lines = evaluate.describe_change(expert, best)
    assert "-def f(Task task) {" in lines and "+def g(Task task) {" in lines and " }" in lines, lines


def test_the_plot_draws_the_default_mapper_and_says_provisional(tmp_path):
    results = tmp_path / "eval"
    plan = _reference_folder(results, 1, expert=[100.0], default=[90.0])
    _tuned_as(results, "guided", 0, best=110.0, first=100.0, walls=[30.0] * 10)
    records = [{"iter": i, "status": "failed", "throughput": None, "best_throughput": 0.0, "wall_s": 1.0}
               for i in range(1, 11)]
    _saved(results, "tune-stencil-ci-random-i10-s0", kind="tune", bench="stencil", size="ci", optimizer="random",
           iters=10, seed=0, reference_first=100.0, best_throughput=None, best_iter=None, best_dsl=None,
           wall_s=10.0, wall_s_tuning=10.0, records=records)
    fig = evaluate.tuning_figure(load_units(results), plan, "stencil", "ci")
    ax = fig.axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    assert any(label.startswith("Legion's default mapper") for label in labels), labels
    assert "provisional" in ax.get_title()
    default = next(line for line in ax.get_lines() if line.get_label().startswith("Legion's default mapper"))
    assert default.get_ydata()[0] == pytest.approx(0.9) and default.get_linestyle() == "--"
    # the legend under the "iteration" label, not over it (a fixed place let a tall legend cover it)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    label = ax.xaxis.label.get_window_extent(renderer)
    legend = ax.get_legend().get_window_extent(renderer)
    assert legend.y1 < label.y0 and legend.y0 >= 0, (legend, label)


def test_the_limits_plot_names_its_card_and_why_pennant_is_missing():
    fig = evaluate.shares_figure([("stencil gpu expert", 0.89, True)], "H100", pennant=True)
    ax = fig.axes[0]
    assert "H100" in ax.get_title()
    assert "Pennant is not drawn: it has no ceiling" in ax.get_xlabel()


def test_without_results_the_commands_use_a_folder_of_ones_own(tmp_path, monkeypatch, capsys):
    """`evaluate.py run` without --results continued reports/h200-eval, the project's folder measured on its lent
    machines: a reader's GPU wrote into it (or was refused as another card). Without --results every command takes
    reports/my-eval, the folder the page's own-GPU path names."""
    project = tmp_path / "reports" / "h200-eval"
    _reference_folder(project, 1, expert=[100.0], default=[90.0], gpu="NVIDIA H200")
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    monkeypatch.chdir(tmp_path)
    # a listing or a page of a folder not made yet: said, with the folders there are
    assert evaluate.main(["list"]) == 2
    err = capsys.readouterr().err
    assert "error: reports/my-eval/plan.json not found: nothing was run with --results reports/my-eval" in err, err
    assert "hint: give --results: reports/h200-eval" in err, err
    monkeypatch.setattr(evaluate, "this_gpu", lambda: "NVIDIA H100 80GB HBM3")
    assert evaluate.main(["run", "--stop-after", "0", "--benchmarks", "stencil", "--sizes", "ci", "--gpus", "0"]) == 0
    assert json.loads((tmp_path / "reports" / "my-eval" / "plan.json").read_text())["benchmarks"] == ["stencil"]
    assert {p: p.read_bytes() for p in project.rglob("*") if p.is_file()} == before
    assert evaluate.main(["list"]) == 0 and "missing  base-stencil-ci" in capsys.readouterr().out


def test_the_page_goes_where_out_says_and_its_links_resolve_from_there(tmp_path, monkeypatch, capsys):
    """`report --out` names the page: a relative path from the current directory, as --results; a folder gets the
    page's default name in it. Its links (the results folder, the plots, docs/tuning.md) resolve from where it is."""
    import re

    results = tmp_path / "repo" / "reports" / "x-eval"
    _reference_folder(results, 1, expert=[100.0], default=[90.0])
    _tuned_as(results, "guided", 0, best=110.0, first=100.0, walls=[30.0] * 10)
    (tmp_path / "repo" / "docs").mkdir()
    (tmp_path / "repo" / "docs" / "tuning.md").write_text("tuning\n")
    (tmp_path / "elsewhere" / "pages").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "elsewhere")
    given = Path("../repo/reports/x-eval")
    assert evaluate.main(["report", "--results", str(given), "--out", "page.md"]) == 0
    assert evaluate.main(["report", "--results", str(given), "--out", "pages"]) == 0
    assert evaluate.main(["report", "--results", str(given)]) == 0
    for page in (tmp_path / "elsewhere" / "page.md", tmp_path / "elsewhere" / "pages" / "x-evaluation.md",
                 results.parent / "x-evaluation.md"):
        text = page.read_text()
        links = re.findall(r"\]\(([^)#][^)]*)\)", text)
        assert links and all((page.parent / link).exists() for link in links), (page, links)
    assert "--out pages/x-evaluation.md" in (tmp_path / "elsewhere" / "pages" / "x-evaluation.md").read_text()
    # the help says where a relative --out goes
    with pytest.raises(SystemExit):
        evaluate.main(["--help"])
    assert "a relative path is from the current directory" in " ".join(capsys.readouterr().out.split())


def test_the_limits_table_gives_each_benchmark_its_own_unit(tmp_path):
    """Pennant's rows and its CPU run were written in zone-cycles/s whatever unit the application printed, and the
    other rows in GFLOP/s: each figure now carries the unit its unit file saved."""
    results = tmp_path / "eval"
    plan = default_plan(benchmarks=["pennant", "circuit"], sizes=["ci"], optimizers=["random"], iters=1, seeds=1,
                        long_iters=0)
    results.mkdir()
    (results / "plan.json").write_text(json.dumps(plan))

    def one(value):
        return {"values": [value], "value": value, "low": value, "high": value, "spread": 0.0}
    for bench, unit in (("pennant", "zones/s"), ("circuit", "GFLOPS")):
        _saved(results, f"base-{bench}-ci", kind="base", rounds=1, wall_s=10.0, mappers={
            name: {"estimate": one(value), "reason": None, "unit": unit, "printed": {}}
            for name, value in (("default", 2.0e6), ("expert", 3.0e6))})
    _saved(results, "cpu-pennant-gpu", kind="cpu", bench="pennant", size="gpu", cpus=12, args=["-npieces", "12"],
           throughput=1.0e6, throughput_unit="zones/s", time_s=1.0)
    _saved(results, "limit-copybw", kind="limit", gpu="NVIDIA H200", copy_gbs=400.0, fp32_peak_gflops=6.0e7,
           fp32_peak_source="a test's")
    text = write_report(results, tmp_path / "report.md", notes={})
    limits = text[text.index("## Physical limits"):text.index("## Tuning")]
    assert "| pennant | ci | expert | 3.000e+06 zones/s | no ceiling: 3.0x a 12-CPU run (1.000e+06 zones/s) | |" \
        in limits, limits
    assert "(`-npieces 12`), 1.000e+06 zones/s over 1.00 s timed" in limits, limits
    assert "| circuit | ci | expert | 3.000e+06 GFLOP/s | 5.0% of FP32 peak 60,000,000 GFLOP/s | |" in limits, limits
    assert "zone-cycles/s" not in limits, limits


def test_run_refuses_up_front_on_a_machine_without_a_gpu(tmp_path, monkeypatch, capsys):
    """On a machine without an NVIDIA driver, `run` recorded each GPU unit as failed (14 on a new folder: a later GPU
    run skipped them without --retry-failed) and exited 0. A plan that measures on a GPU is refused before anything
    is written, saying what is missing and how to go on; a GPU-free plan (--gpus 0) still runs."""
    monkeypatch.setattr(evaluate, "this_gpu", lambda: None)
    fresh = tmp_path / "my-eval"
    assert evaluate.main(["run", "--results", str(fresh), "--benchmarks", "stencil", "--sizes", "ci"]) == 2
    err = capsys.readouterr().err
    assert "error: no NVIDIA GPU on this machine (nvidia-smi is missing, or finds no driver or GPU)" in err, err
    assert "nothing was run and no unit was recorded" in err, err
    assert "hint: run it on a machine with an NVIDIA GPU and its driver" in err, err
    assert "python3 benchmarks/gpu/evaluate.py report --results" in err, err
    # a folder not made yet has no plan: the refusal says so, and names the plan `run` would start there
    assert f"the plan `run` would start in {fresh} (a folder that does not exist yet) measures on one" in err, err
    assert "the plan of" not in err, err
    assert not fresh.exists()
    # a folder measured already: its own page can be written from what is there
    measured = tmp_path / "h200-eval"
    _reference_folder(measured, 1, expert=[100.0], default=[90.0], gpu="NVIDIA H200", gpus=None)
    before = {p: p.read_bytes() for p in measured.rglob("*") if p.is_file()}
    assert evaluate.main(["run", "--results", str(measured)]) == 2
    err = capsys.readouterr().err
    assert f"python3 benchmarks/gpu/evaluate.py report --results {measured}" in err, err
    assert {p: p.read_bytes() for p in measured.rglob("*") if p.is_file()} == before
    # --check says the same and runs nothing; where nothing is refused it exits 0 and writes nothing
    assert evaluate.main(["run", "--results", str(measured), "--check"]) == 2
    assert "no NVIDIA GPU on this machine" in capsys.readouterr().err
    monkeypatch.setattr(evaluate, "this_gpu", lambda: "NVIDIA H200")
    assert evaluate.main(["run", "--results", str(measured), "--check"]) == 0
    assert {p: p.read_bytes() for p in measured.rglob("*") if p.is_file()} == before
    monkeypatch.setattr(evaluate, "this_gpu", lambda: None)
    cpu = tmp_path / "cpu-eval"
    assert evaluate.main(["run", "--results", str(cpu), "--benchmarks", "stencil", "--sizes", "ci", "--gpus", "0",
                          "--stop-after", "0"]) == 0
    assert (cpu / "plan.json").exists()


def _off_divisor_folder(results: Path, first: float, best: float = 100.4,
                        expert: Sequence[float] = (99.0, 100.0, 101.0),
                        default: Sequence[float] = (90.0, 91.0, 92.0)) -> None:
    """Stencil `ci`: a reference unit of one round per value of `expert` and `default` (by default 3 rounds: expert
    99-101, Legion's default mapper 90-92: noise 2.2 %), guided's one run whose best (`best`) was measured by the unit
    that measured the comparison's first execution of the expert (`first`)."""
    _reference_folder(results, len(expert), expert=list(expert), default=list(default))
    _tuned_as(results, "guided", 0, best=best, first=first, walls=[30.0] * 10)


def _off_divisor_report(results: Path, report: Path) -> tuple[str, str, str]:
    """The report of `results` written to `report`: its text, its summary and its Stencil `ci` tuning table."""
    text = write_report(results, report, notes={})
    return (text, text[text.index("## Summary"):text.index("## Physical limits")],
            text[text.index("### stencil, size `ci`"):text.index("## Best mapper found")])


def test_a_headline_over_an_off_divisor_is_marked_not_read_as_a_gain(tmp_path):
    """The H100 summary led Stencil `tight` with guided's 1.09, over the comparison's first execution of the expert,
    which measured 8.1 % below the reference unit's (noise 1.6 %): over the reference unit's expert it is 1.00,
    within noise. A figure over a divisor further from the reference unit's expert than the noise is marked, the
    summary and the tuning table alike, wherever it stands in a cell (Johnson `gpu`'s 0.99 was marked in its table,
    not in the summary's brackets), and the note under each says in plain words which figure to read."""
    results = tmp_path / "eval"
    _off_divisor_folder(results, first=92.0)  # 8.0 % below the reference unit's expert (100)
    text, summary, table = _off_divisor_report(results, tmp_path / "report.md")
    assert "| 1.09‡ (reference unit: 1.00, within noise) |" in summary, summary
    # Legion's default mapper leads over the expert measured with it; its figure over the off divisor, bracketed
    assert "| 0.91 (comparison's first: 0.99‡) |" in summary, summary
    below = summary[summary.index("| provisional |"):]
    assert ("‡ the figure's divisor, the expert's first execution in the comparison, measured further from the "
            "reference unit's expert than the noise (stencil `ci`: -8.0 %, noise 2.2 %): read the cell's other "
            "figure, over the reference unit's expert; the two share their numerator and differ by the divisor "
            "alone.") in below, below
    assert "| guided | 10 | 1 of 2 | 1.09 | n/a | 1.09 | 1.09 | 1.09‡ |" in table, table
    assert "| Legion default mapper | - | 1 | 0.99‡ |" in table, table
    assert ("‡ the divisor, the expert's first execution in the comparison (92 GFLOP/s), measured -8.0 % from the "
            "reference unit's expert, more than the noise (2.2 %): read the figure over the reference unit's "
            "expert, in the last column.") in table, table
    assert "‡" not in "".join(summary.splitlines()[:5]) and text.count("‡ the") == 2

    # a divisor within the noise of the reference unit's expert: nothing marked
    close = tmp_path / "close"
    _off_divisor_folder(close, first=99.5)
    text = write_report(close, tmp_path / "close.md", notes={})
    assert "‡" not in text, text


def test_a_headline_over_an_off_divisor_is_marked_where_no_noise_was_measured(tmp_path):
    """H200 Stencil `tight` led with guided's 1.07 over a first execution of the expert 4.6 % below the reference
    unit's (1.02 over that), unmarked: with no noise measured (no mapper executed twice in one session) the rule,
    further than the noise, could not fire. There any difference of the divisor is marked, and the note says that no
    noise was measured."""
    results = tmp_path / "eval"
    _off_divisor_folder(results, first=96.0, best=101.0, expert=[100.0], default=[95.0])
    _, summary, table = _off_divisor_report(results, tmp_path / "report.md")
    assert "| 1.05‡ (reference unit: 1.01) |" in summary, summary
    assert "| 0.95 (comparison's first: 0.99‡) |" in summary, summary
    assert ("‡ the figure's divisor, the expert's first execution in the comparison, measured further from the "
            "reference unit's expert than the noise, or differed from it where no noise was measured (stencil `ci`: "
            "-4.0 %, no noise measured): read the cell's other figure") in summary, summary
    assert "| guided | 10 | 1 of 2 | 1.05 | n/a | 1.05 | 1.05 | 1.05‡ |" in table, table
    assert ("‡ the divisor, the expert's first execution in the comparison (96 GFLOP/s), measured -4.0 % from the "
            "reference unit's expert, where no noise was measured: read the figure over the reference unit's "
            "expert, in the last column.") in table, table
    # the same execution as the reference unit's: nothing to mark
    same = tmp_path / "same"
    _off_divisor_folder(same, first=100.0, best=101.0, expert=[100.0], default=[95.0])
    assert "‡" not in write_report(same, tmp_path / "same.md", notes={})


def test_the_unmarked_ratio_sentence_is_said_of_ratios_across_sessions_only(tmp_path):
    """"An unmarked ratio is not shown to differ from 1" read as general, but was argued only for ratios over an
    execution of the expert from another session: Legion's default mapper over the expert measured together with it,
    unmarked, differs from 1 by more than the noise."""
    results = tmp_path / "eval"
    _reference_folder(results, 3, expert=[99.0, 100.0, 101.0], default=[90.0, 91.0, 92.0])
    header = write_report(results, tmp_path / "report.md", notes={})
    header = header[:header.index("## Physical limits")]
    assert "An unmarked ratio is not shown to differ from 1" not in header, header
    assert ("An unmarked ratio of two executions of one session (Legion's default mapper over the expert measured "
            "together with it; a final score) differs from 1 by more than the noise (where it rounds to 1.00, its cell "
            "gives by how much). An unmarked provisional score, "
            "or any other ratio over an execution of the expert from another session, is not shown to differ from "
            "1:") in header, header


def test_the_page_says_how_to_find_a_tuning_iterations_stored_measurement():
    """The page pointed to "the comparison's `evaluations/<key>.json`", but history.csv's `key` names that file only
    for guided's rows (30 of 40 rows of a comparison had none): a baseline's run keys its programs without the task
    profile it skips, the comparison's store with it. What the page says instead, that each stored outcome names in
    `run_dir` the iteration that measured it (the row's own, or its `cached_from`), holds for every measured row of
    the committed H100 comparisons."""
    results = Path(__file__).resolve().parents[2] / "reports" / "h100-eval"
    page = (results.parent / "h100-evaluation.md").read_text()
    assert "`evaluations/<key>.json`" not in page
    assert ("each outcome in the comparison's `evaluations/` names in `run_dir` the run and iteration that measured "
            "it (a `history.csv` row's own iteration, `<run>/iter-NNN`, or its `cached_from`)") in page, page
    checked = 0
    # (the H200's are of an earlier version, whose history.csv has no `cached_from`)
    for stored in sorted(results.glob("work/*/compare-*/evaluations")):
        measured = {json.loads(p.read_text()).get("run_dir") for p in stored.glob("*.json")}
        for history in stored.parent.glob("*-*/history.csv"):
            for row in csv.DictReader(history.open()):
                if row["status"] != "ok" or row["cached"] == "True":
                    continue
                where = row["cached_from"] or f"{history.parent.name}/iter-{int(row['iter']):03d}"
                assert where in measured, (history, row["iter"], where)
                checked += 1
    assert checked > 50, checked


def test_the_limits_table_marks_a_reference_of_another_session_than_its_ceiling(tmp_path):
    """The H200's COSMA, Johnson, Solomonik, Circuit and Pennant reference units were measured again on 2026-12-03,
    its ceilings on 2026-12-02, and the table said "Ceilings measured 2026-12-02" with no row flagged: a row whose
    reference unit was measured in another session (another call; without a record of the calls, 30 minutes or more
    apart) than the ceiling it is divided by is marked, and the mark explained under the table."""
    results = tmp_path / "eval"
    plan = default_plan(benchmarks=["circuit", "cannon", "pennant"], sizes=["ci", "gpu"], optimizers=["random"],
                        iters=1, seeds=1, long_iters=0)
    results.mkdir()
    (results / "plan.json").write_text(json.dumps(plan))

    def base(bench: str, size: str, started: str) -> None:
        one = {"values": [50.0], "value": 50.0, "low": 50.0, "high": 50.0, "spread": 0.0}
        _saved(results, f"base-{bench}-{size}", kind="base", rounds=1, wall_s=10.0, started=started, mappers={
            name: {"estimate": one, "reason": None, "unit": "GFLOPS", "printed": {}} for name in ("default", "expert")})
    _saved(results, "limit-copybw", kind="limit", gpu="NVIDIA H200", copy_gbs=400.0, fp32_peak_gflops=100.0,
           fp32_peak_source="a test's", started="2026-12-02T03:30:00Z")
    _saved(results, "limit-dgemm", kind="limit", dgemm_gflops={"4096": 60.0}, started="2026-12-02T03:30:05Z")
    _saved(results, "cpu-pennant-gpu", kind="cpu", bench="pennant", size="gpu", cpus=12, args=["-npieces", "12"],
           throughput=10.0, throughput_unit="GFLOPS", time_s=1.0, started="2026-12-02T03:35:00Z")
    base("circuit", "ci", "2026-12-03T10:22:00Z")  # another day
    base("cannon", "gpu", "2026-12-02T03:31:00Z")  # the same session as the ceilings
    base("pennant", "gpu", "2026-12-02T06:40:00Z")  # the same day, three hours later
    text = write_report(results, tmp_path / "report.md", notes={})
    limits = text[text.index("## Physical limits"):text.index("## Tuning")]
    rows = {line.split(" | ")[0] + line.split(" | ")[2]: line for line in limits.splitlines()
            if line.startswith("| ") and " | expert | " in line}
    assert rows["| circuitexpert"].endswith("50.0% of FP32 peak 100 GFLOP/s § | |"), rows
    assert "§" not in rows["| cannonexpert"], rows
    assert "5.0x a 12-CPU run (10 GFLOP/s) §" in rows["| pennantexpert"], rows
    assert ("§ the reference unit was measured in another device call than the ceiling it is divided by: circuit `ci` "
            "(2026-12-03 10:22 UTC; FP32 peak 2026-12-02 03:30 UTC), pennant `gpu` (2026-12-02 06:40 UTC; CPU run "
            "2026-12-02 03:35 UTC)") in limits, limits
    # where the calls are recorded, they tell the sessions apart: two calls a few minutes apart are two sessions
    (results / "calls.jsonl").write_text("".join(json.dumps(c) + "\n" for c in (
        {"start": "2026-12-02T03:29:00Z", "end": "2026-12-02T03:30:30Z"},
        {"start": "2026-12-02T03:30:40Z", "end": "2026-12-02T03:39:00Z"})))
    # (the report's own table of calls needs their other fields; the sessions need their times only)
    assert evaluate._same_session("2026-12-02T03:30:00Z", "2026-12-02T03:31:00Z",
                                  evaluate._call_windows(results)) is False
    assert evaluate._same_session("2026-12-02T03:31:00Z", "2026-12-02T03:35:00Z",
                                  evaluate._call_windows(results)) is True


def test_the_rule_for_the_first_figure_names_the_marks_only_where_the_page_has_them(tmp_path):
    """The H100 page said "a listed change (the marks above)" with no marks and no changes.json."""
    results = tmp_path / "eval"
    _reference_folder(results, 1, expert=[100.0], default=[95.0])
    _tuned_as(results, "guided", 0, best=101.0, first=96.0, walls=[30.0] * 10)
    text = write_report(results, tmp_path / "report.md", notes={})
    assert "listed change" not in text and "the marks above" not in text, text
    assert "An optimizer's best: over the comparison's first execution of the expert" in text, text
    _started(results, "tune-stencil-ci-guided-i10-s0", "2026-12-02T09:00:00Z")
    (results / "changes.json").write_text(json.dumps([
        {"mark": "a", "from": "2026-12-02T06:00:00Z", "benchmarks": ["stencil"], "dsl": True, "what": "FIX-TEXT"}]))
    text = write_report(results, tmp_path / "report.md", notes={})
    assert "a listed change (the marks above) came between" in text, text


def test_the_page_says_what_beside_the_results_folder_it_reads(tmp_path):
    """The table of the device time left reads the other cards' results folders beside --results; the page's
    reproduction steps did not say so (a copy written without them gives other estimates)."""
    results = tmp_path / "eval"
    _reference_folder(results, 1, expert=[100.0], default=[90.0])
    _tuned_as(results, "guided", 0, best=110.0, first=100.0, walls=[30.0] * 10)
    text = write_report(results, tmp_path / "report.md", notes={})
    how = text[text.index("## How it was run"):]
    assert ("[Device time of what is left](#device-time-of-what-is-left) also reads the other cards' results "
            "folders beside the one `--results` names") in how, how


def test_lock_files_are_not_committed_and_stay_ignored():
    """302 empty `.evaluating/<key>.lock` files (filelock's, recreated when a program is evaluated) were committed
    with the results folders: noise in every diff. They are ignored, and nothing else of a results folder is but the
    plain journals, committed as their .xz (tests/benchmarks/test_evaluate_journals.py)."""
    root = Path(__file__).resolve().parents[2]
    tracked = subprocess.run(["git", "ls-files", "reports"], cwd=root, capture_output=True, text=True,
                             check=True).stdout.split()
    assert not [p for p in tracked if "/.evaluating/" in p]
    comparison = Path("reports", "h100-eval", "work", "stencil", "compare-0123456789")
    probe = [str(comparison / ".evaluating" / "0f4bc0b9302a015c.lock"),
             str(comparison / "evaluations" / "0f4bc0b9302a015c.json"),
             str(comparison / "guided-1" / "state.jsonl.xz"),
             "reports/h100-eval/units/limit-copybw.json", "gpu-out/h100-eval.tar.gz"]
    ignored = subprocess.run(["git", "check-ignore", "--no-index", *probe], cwd=root, capture_output=True,
                             text=True).stdout.split()
    assert ignored == [probe[0], probe[4]], ignored


def test_the_summary_tells_none_found_from_not_run_yet(tmp_path):
    """Solomonik's "others' best" said "none ran": OpenTuner had run its 10 evaluations and found nothing that
    finished, Optuna and random had not run. The cell names the optimizers that ran and found nothing and those not
    run yet, and the legend says what "none found" counts: evaluations that timed out are no mappers that do not
    run, only none that finished within the timeout."""
    results = tmp_path / "eval"
    _reference_folder(results, 1, expert=[100.0], default=[95.0],
                      optimizers=["guided", "opentuner", "optuna", "random"])
    _tuned_as(results, "guided", 0, best=0.0, first=96.0, walls=[30.0] * 10)
    _tuned_as(results, "opentuner", 0, best=0.0, first=96.0, walls=[30.0] * 10)
    text = write_report(results, tmp_path / "report.md", notes={})
    summary = text[text.index("## Summary"):text.index("## Physical limits")]
    assert "| none found | none found (opentuner; optuna, random not run yet) |" in summary, summary
    assert "none ran" not in text and "a mapper that runs" not in text, summary
    assert ("\"none found\": the runs that ended (the optimizers named in brackets) found no mapper that finished "
            "within the timeout (each of their evaluations failed or timed out)") in summary, summary
    # every baseline ran: none is "not run yet"
    _tuned_as(results, "optuna", 0, best=0.0, first=96.0, walls=[30.0] * 10)
    _tuned_as(results, "random", 0, best=0.0, first=96.0, walls=[30.0] * 10)
    summary = write_report(results, tmp_path / "report.md", notes={})
    assert "| none found (opentuner, optuna, random) |" in summary, summary


def test_a_within_noise_mark_names_its_divisor_where_the_two_figures_round_alike(tmp_path):
    """PUMMA's "1.00 (random; within noise)": random's best over the comparison's first execution of the expert
    (0.995) and over the reference unit's (0.9996) both round to 1.00, but only the second is judged against the
    noise. The cell says which figure the mark belongs to."""
    results = tmp_path / "eval"
    _reference_folder(results, 1, expert=[100.0], default=[95.0])
    _repeated(results)  # noise 4.2 %
    _tuned_as(results, "guided", 0, best=100.2, first=100.3, walls=[30.0] * 10)
    _tuned_as(results, "random", 0, best=100.2, first=100.3, walls=[30.0] * 10)
    summary = write_report(results, tmp_path / "report.md", notes={})
    summary = summary[summary.index("## Summary"):summary.index("## Physical limits")]
    assert ("| 1.00 (reference unit: 1.00, within noise) | 1.00 (random; reference unit: 1.00, within noise) |"
            in summary), summary
    # a figure of one session, the only one judged: the mark stays beside it
    assert "| 0.99 (within noise) |" in summary, summary


def test_a_same_session_ratio_just_beyond_the_noise_shows_its_margin(tmp_path):
    """COSMA's default / expert, 1.0014 against a noise of 0.13 %, was printed "1.00" unmarked, which by the page's
    rule claims a difference: the cell gives the margin beside the noise, so a reader sees how thin it is."""
    results = tmp_path / "eval"
    _reference_folder(results, 3, expert=[99.95, 100.0, 100.08], default=[100.12, 100.14, 100.16])
    summary = write_report(results, tmp_path / "report.md", notes={})
    summary = summary[summary.index("## Summary"):summary.index("## Physical limits")]
    assert "| 1.00 (+0.14 %, noise 0.13 %) |" in summary, summary
    _tuned_as(results, "guided", 0, best=100.5, first=100.0, walls=[30.0] * 10)
    text = write_report(results, tmp_path / "report.md", notes={})
    assert "measured together with the expert: 1.00 (+0.14 %, noise 0.13 %) |" in text, text
    assert "(+0.14 %, noise 0.13 %; " not in text  # the figure over the comparison's first reads alike: not shown
    # a ratio beyond the noise that does not round to 1.00 needs no margin; nor one within it
    other = tmp_path / "other"
    _reference_folder(other, 3, expert=[99.95, 100.0, 100.08], default=[95.0, 95.0, 95.0])
    assert "noise 0.13 %)" not in write_report(other, tmp_path / "other.md", notes={})


def _history(results: Path, run: str, rows: list[tuple[int, str, float | None, str]]) -> None:
    """A run's history.csv in the comparison `_tuned_as` names: (iteration, status, throughput, note) per row."""
    folder = results / "work" / "stencil" / "compare-x" / run
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "history.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["iter", "status", "throughput", "note"])
        writer.writerows([i, s, "" if t is None else t, n] for i, s, t, n in rows)


def test_the_best_over_legions_default_mapper_is_also_given_within_its_comparison(tmp_path):
    """COSMA's heading said "1.01x Legion's default mapper (its reference unit's ...)": the run's single execution
    (one day) over the reference unit of another day, with no caveat, while guided measured the default mapper's
    behaviour in the same comparison (0.19 % below the best). The heading gives the best over that too, and says
    that ratios over another session's reference unit are not shown to differ."""
    results = tmp_path / "eval"
    _reference_folder(results, 3, expert=[99.9, 100.0, 100.1], default=[99.5, 99.6, 99.7])
    _started(results, "base-stencil-ci", "2026-12-01T03:30:00Z")  # another day
    _tuned_as(results, "guided", 0, best=100.8, first=100.0, walls=[30.0] * 10)
    _tuned_as(results, "random", 0, best=101.4, first=100.0, walls=[30.0] * 10)
    _tuned_as(results, "guided", 1, best=90.0, first=97.0, walls=[30.0] * 10)  # a divisor 3.0 % from the expert
    _history(results, "guided-1", [(1, "failed", None, "start program"),
                                   (2, "ok", 100.8, "the default mapper's behaviour (nothing has succeeded yet)"),
                                   (3, "ok", 100.2, "toward the default from the best, iteration 2: x")])
    text = write_report(results, tmp_path / "report.md", notes={})
    heading = text[text.index("### stencil, size `ci`: best mapper found"):]
    heading = heading.splitlines()[2]
    assert ("1.02x Legion's default mapper (its reference unit's 99.6 GFLOP/s; its 3 executions here 99.5-99.7), "
            "+0.60 % over the default mapper's behaviour written in the DSL and measured in this comparison (guided, "
            "seed 0, iteration 2: 101 GFLOP/s; single executions), 1.01x the expert in its reference unit (1.01x its "
            "first execution in the comparison); 1.02x and 1.01x are over a reference unit of another session: not "
            "shown to differ (the expert's first execution in this comparison measured the same as its reference "
            "unit's, and up to 3.0 % elsewhere on this page).") == heading, heading
    # the caveat gives the comparison's own drift first: the H100 page's GEMM headings gave only the page's largest,
    # Stencil `tight`'s 8.1 %, which read as the GEMM's own
    _tuned_as(results, "random", 0, best=101.4, first=100.4, walls=[30.0] * 10)
    heading = write_report(results, tmp_path / "report.md", notes={})
    heading = heading[heading.index("### stencil, size `ci`: best mapper found"):].splitlines()[2]
    assert heading.endswith("1.02x and 1.01x are over a reference unit of another session: not shown to differ (the "
                            "expert's first execution in this comparison measured +0.4 % from its reference unit's, "
                            "and up to 3.0 % elsewhere on this page)."), heading
    # where it is the page's largest, it says so
    _tuned_as(results, "random", 0, best=101.4, first=96.5, walls=[30.0] * 10)
    heading = write_report(results, tmp_path / "report.md", notes={})
    heading = heading[heading.index("### stencil, size `ci`: best mapper found"):].splitlines()[2]
    assert heading.endswith("not shown to differ (the expert's first execution in this comparison measured -3.5 % "
                            "from its reference unit's, the most on this page)."), heading
    _tuned_as(results, "random", 0, best=101.4, first=100.0, walls=[30.0] * 10)
    # a fix of the DSL runtime came between guided's execution of the default mapper's choices and the best's: that
    # ratio compares two runtimes, and is left out
    _started(results, "tune-stencil-ci-random-i10-s0", "2026-12-03T03:30:00Z")
    (results / "changes.json").write_text(json.dumps([
        {"mark": "a", "from": "2026-12-02T12:00:00Z", "benchmarks": ["stencil"], "dsl": True, "what": "FIX"}]))
    text = write_report(results, tmp_path / "report.md", notes={})
    heading = text[text.index("### stencil, size `ci`: best mapper found"):].splitlines()[2]
    assert "behaviour" not in heading and "another session" in heading, heading
    (results / "changes.json").unlink()
    # a ratio further from 1 than two sessions' executions of the expert differ: no caveat
    _tuned_as(results, "random", 0, best=110.0, first=100.0, walls=[30.0] * 10)
    text = write_report(results, tmp_path / "report.md", notes={})
    heading = text[text.index("### stencil, size `ci`: best mapper found"):].splitlines()[2]
    assert "another session" not in heading, heading
    # the best is that program itself; the reference unit of the same session: no caveat
    _tuned_as(results, "random", 0, best=100.0, first=100.0, walls=[30.0] * 10)
    _started(results, "base-stencil-ci", "2026-12-02T03:30:00Z")
    text = write_report(results, tmp_path / "report.md", notes={})
    heading = text[text.index("### stencil, size `ci`: best mapper found"):].splitlines()[2]
    assert ("1.01x Legion's default mapper (its reference unit's 99.6 GFLOP/s; its 3 executions here 99.5-99.7), "
            "which is the default mapper's behaviour written in the DSL (guided, seed 0, iteration 2), 1.01x the "
            "expert in its reference unit (1.01x its first execution in the comparison).") == heading, heading


def test_the_page_cites_repeats_only_where_the_folder_has_them_and_says_what_runs_csv_holds(tmp_path):
    """The H100 page cited `units/repeats/`, which its folder does not have; and a reader sent to a comparison's
    runs.csv found one optimizer in it: each tuning unit runs the comparison with its own optimizer only, and the
    comparison's report files hold what the last command ran."""
    results = tmp_path / "eval"
    _reference_folder(results, 3, expert=[99.0, 100.0, 101.0], default=[90.0, 91.0, 92.0])
    text = write_report(results, tmp_path / "report.md", notes={})
    assert "units/repeats" not in text and "no reference unit was repeated" in text, text
    assert ("its `runs.csv`, `summary.csv`, `summary.json`, `table.md` and `compare.png` hold only the optimizers of "
            "the last command that ran the comparison") in text, text
    repeated = tmp_path / "repeated"
    _reference_folder(repeated, 1, expert=[100.0], default=[95.0])
    _repeated(repeated)
    text = write_report(repeated, tmp_path / "repeated.md", notes={})
    assert "the reference unit's rounds and its repeat in `units/repeats/`" in text, text


def test_a_statement_change_marks_only_a_statement_on_a_task_of_the_timed_loop():
    """The H200's summary marked "measured before the fix of `InstanceLimit` in a traced loop" on Stencil OpenTuner's
    0.99, whose only limit is on `check`, run once outside the timed loop (and on Circuit random's, limited only on
    its set-up tasks), which the fix does not concern. Where the benchmark's timed loop is known, an `InstanceLimit`
    change marks a mapper only where a limit names a loop task, or every task; elsewhere wherever the mapper has one."""
    change = {"mark": "e", "from": "2026-12-03T15:47:30Z", "benchmarks": "*", "dsl": True,
              "statement": "InstanceLimit", "what": "W"}

    def marks(b: str, dsl: str) -> list[str]:
        return evaluate.change_marks([change], b, "gpu", [evaluate.Execution("2026-12-03T10:00:00Z", dsl)])
    assert marks("stencil", "Task * GPU,CPU;\nInstanceLimit check 4;\n") == []
    assert marks("circuit", "InstanceLimit init_piece 4;\nInstanceLimit init_pointers 4;\n") == []
    assert marks("stencil", "InstanceLimit check 4;\nInstanceLimit stencil 1;\n") == ["e"]
    assert marks("circuit", "InstanceLimit init_piece,update_voltages 2;\n") == ["e"]
    assert marks("stencil", "InstanceLimit * 1;\n") == ["e"]
    assert marks("cannon", "InstanceLimit taco_validate 1;\n") == ["e"]  # a loop not listed: any limit
    assert marks("stencil", "Task * GPU,CPU;\n") == []
    # benchmarks/gpu/timeouts.py counts the loop's limits with the same list
    assert evaluate.TIMED_LOOP["stencil"] == ("stencil", "increment")


def test_the_sessions_footnote_says_which_rule_told_them_apart_and_a_folder_without_calls_says_so(tmp_path):
    """The H200's limits footnote said "measured in another session" while its How it was run numbered sessions of
    several calls, and it named `calls.jsonl`, which that folder does not have (its calls ran before
    benchmarks/gpu/evaluate.sh kept one). The footnote speaks of device calls and says which rule applied; the page
    of a folder without the file says so where the calls are listed."""
    results = tmp_path / "eval"
    plan = default_plan(benchmarks=["circuit"], sizes=["ci"], optimizers=["random"], iters=1, seeds=1, long_iters=0)
    results.mkdir()
    (results / "plan.json").write_text(json.dumps(plan))
    one = {"values": [50.0], "value": 50.0, "low": 50.0, "high": 50.0, "spread": 0.0}
    _saved(results, "base-circuit-ci", kind="base", rounds=1, wall_s=10.0, started="2026-12-03T10:22:00Z", mappers={
        name: {"estimate": one, "reason": None, "unit": "GFLOPS", "printed": {}} for name in ("default", "expert")})
    _saved(results, "limit-copybw", kind="limit", gpu="NVIDIA H200", copy_gbs=400.0, fp32_peak_gflops=100.0,
           fp32_peak_source="a test's", started="2026-12-02T03:30:00Z")
    text = write_report(results, tmp_path / "report.md", notes={})
    assert ("§ the reference unit was measured in another device call than the ceiling it is divided by: circuit "
            "`ci` (2026-12-03 10:22 UTC; FP32 peak 2026-12-02 03:30 UTC)") in text, text
    assert ("this results folder has no `calls.jsonl`, so calls are told apart by the units' start times: 30 "
            "minutes or more apart") in text, text
    assert "No `calls.jsonl` in this results folder" in text, text
    (results / "calls.jsonl").write_text(json.dumps(
        {"start": "2026-12-02T03:29:00Z", "end": "2026-12-02T03:39:00Z", "stop_after_s": 500, "build_s": 20,
         "builds_failed": [], "gpu": "NVIDIA H200", "units_finished": ["limit-copybw"], "exit_status": 0}) + "\n")
    text = write_report(results, tmp_path / "report.md", notes={})
    assert "calls: those `calls.jsonl` records, else units started 30 minutes or more apart" in text, text
    assert "No `calls.jsonl`" not in text and "Calls of `benchmarks/gpu/evaluate.sh` as it records them" in text


def test_the_tables_continue_command_names_the_card_the_folder_records(tmp_path):
    """Each table said "`python3 benchmarks/gpu/evaluate.py run --results reports/h200-eval` continues", which `run`
    refuses on any card but the one the folder records (an H100 was given for an H200 in the twelfth session)."""
    results = tmp_path / "eval"
    _reference_folder(results, 1, expert=[100.0], default=[95.0], gpu="NVIDIA H200")
    text = write_report(results, tmp_path / "report.md", notes={})
    assert (f"`python3 benchmarks/gpu/evaluate.py run --results {results}` continues, on an H200 only (the card "
            "this folder records: `run` refuses another; see [How it was run](#how-it-was-run))") in text, text


def test_the_reference_paragraph_gives_the_pages_own_drift_between_sessions(tmp_path):
    """The paragraph on reference units said that the expert's executions in two sessions "differed by up to 8 %"
    on every page, whatever its comparisons measured: it gives the page's largest distance between a comparison's
    first execution of the expert and its reference unit's (as the headings' caveat does), and says where no
    comparison has measured one yet."""
    results = tmp_path / "eval"
    _reference_folder(results, 3, expert=[99.9, 100.0, 100.1], default=[99.5, 99.6, 99.7])

    def paragraph() -> str:
        text = write_report(results, tmp_path / "report.md", notes={})
        return next(line for line in text.splitlines() if line.startswith("Reference units"))

    assert "differed by up to" not in paragraph() and "8 %" not in paragraph(), paragraph()
    assert "no tuning comparison has executed the expert here yet" in paragraph(), paragraph()
    _tuned_as(results, "guided", 0, best=100.8, first=97.0, walls=[30.0] * 10)  # 3.0 % below its reference unit's
    assert "the expert's executions in two sessions differed by up to 3.0 % (each table's header" in paragraph()
    _tuned_as(results, "random", 0, best=100.8, first=94.5, walls=[30.0] * 10)  # 5.5 %: the largest
    assert "differed by up to 5.5 % (each table's header" in paragraph(), paragraph()


def test_the_page_opens_with_what_an_outsider_reads_first(tmp_path):
    """A reader checking the paper met a ~400-word paragraph under the table, with the caveats (provisional scores,
    how much was run, what was not run) buried in the notes: a short list comes first, computed from the units."""
    results = tmp_path / "eval"
    _reference_folder(results, 1, expert=[100.0], default=[90.0])
    _tuned_as(results, "guided", 0, best=130.0, first=100.0, walls=[30.0] * 10)
    _tuned_as(results, "random", 0, best=80.0, first=100.0, walls=[30.0] * 10)
    text = write_report(results, tmp_path / "report.md", notes={"paper": "**Against the paper**: PAPER-TEXT"})
    glance = text[text.index("## What ran and what it shows"):text.index("Work list: ")]
    assert text.index("## What ran and what it shows") < text.index("## Summary") and len(glance) < 3000, glance
    todo = work_list(default_plan(benchmarks=["stencil"], sizes=["ci"], gpus=0, optimizers=["random", "guided"],
                                  iters=10, seeds=2, long_iters=0, base_rounds=1))
    assert f"- **Done**: 3 of the work list's {len(todo)} units (a unit is one piece of work: " in glance, glance
    assert "tuning runs of 10 iterations: 2 of 4 (seeds done per benchmark, size and optimizer: 1 of 2)" in glance
    assert "- **Final or provisional**: every tuning score is provisional (no `final` unit has run)" in glance
    assert "- **Not run**: trace, because it proposes with a language model" in glance, glance
    # guided's 1.30 is beyond the noise (none measured) and the sessions' drift (0 %); random's 0.80 is not faster
    assert ("faster than the expert beyond the noise on stencil `ci` (guided 1.30x; Legion's default mapper, "
            "measured together with the expert, is 0.90x it there)") in glance, glance
    assert glance.rstrip().endswith("- **Against the paper**: PAPER-TEXT"), glance
    # a run within the sessions' drift is no headline: the expert's first execution here measured 10 % off
    _tuned_as(results, "guided", 0, best=108.0, first=90.0, walls=[30.0] * 10)
    text = write_report(results, tmp_path / "report.md", notes={})
    assert "no optimizer's best is shown faster than the expert beyond the noise (stencil `ci`)" in text, text
    assert "by more than the 10.0 % the expert's own executions differed between sessions" in text, text


def test_the_headline_says_how_many_seeds_found_the_gain_and_that_it_is_not_measured_with_the_expert(tmp_path):
    """An outsider read the headline's "guided 4.46x ... beyond the noise" as a finding of the optimizer, while one of
    its two seeds measured 0.93x and no score had been measured together with the expert: it says both."""
    results = tmp_path / "eval"
    _reference_folder(results, 1, expert=[100.0], default=[90.0])
    _tuned_as(results, "guided", 0, best=95.0, first=100.0, walls=[30.0] * 10)
    _tuned_as(results, "guided", 1, best=130.0, first=100.0, walls=[30.0] * 10)
    text = write_report(results, tmp_path / "report.md", notes={})
    glance = text[text.index("## What ran and what it shows"):text.index("Work list: ")]
    assert "on stencil `ci` (guided 1.30x in 1 of 2 seeds, the other 0.95x; Legion's default mapper" in glance, glance
    assert ("Provisional: each a single execution of a run's best, not yet measured together with the expert (the "
            "`final` units do).") in glance, glance
    # both seeds beyond the noise: said so
    _tuned_as(results, "guided", 0, best=120.0, first=100.0, walls=[30.0] * 10)
    text = write_report(results, tmp_path / "report.md", notes={})
    assert "(guided 1.30x, 1.20-1.30x in both seeds; Legion's default mapper" in text, text


def test_the_page_says_up_front_why_one_gpu_gemms_read_one(tmp_path):
    """The six GEMM rows showed 1.00 everywhere, explained only under Physical limits: on one GPU their mappers can
    hardly differ."""
    results = tmp_path / "eval"
    plan = default_plan(benchmarks=["cannon"], sizes=["gpu"], optimizers=["guided"], iters=10, seeds=1, long_iters=0,
                        base_rounds=1)
    results.mkdir()
    (results / "plan.json").write_text(json.dumps(plan))
    _saved(results, "limit-dgemm", kind="limit", dgemm_gflops={"16384": 100.0})
    _saved(results, "limit-copybw", kind="limit", copy_gbs=3000.0)
    _saved(results, "base-cannon-gpu", kind="base", gpus=1, rounds=1, mappers={
        name: {"estimate": {"values": [v], "value": v}, "reason": None, "unit": "GFLOPS", "printed": {}}
        for name, v in (("default", 98.0), ("expert", 99.0))})
    text = write_report(results, tmp_path / "report.md", notes={})
    glance = text[text.index("## What ran and what it shows"):text.index("Work list: ")]
    assert ("- **The 1 GEMM rows** (cannon) read about 1.00 by their setting, not as a finding: each runs on one GPU"
            in glance), glance
    assert "already run them at 98-99 % of cuBLAS DGEMM" in glance, glance
    # on two GPUs the mappers can differ: no such line
    _saved(results, "base-cannon-gpu", **{**json.loads((results / "units" / "base-cannon-gpu.json").read_text()),
                                          "gpus": 2})
    assert "GEMM rows" not in write_report(results, tmp_path / "report.md", notes={})


def test_the_protocol_names_what_the_command_line_can_and_cannot_ask_for(tmp_path):
    """The page called the evaluation's protocol `mapperopt compare`'s, but compare's defaults measure 3-7
    executions and retry a timeout: the page says what differs, and its command uses options compare has."""
    from click.testing import CliRunner

    from mapperopt.cli import cli

    text = _one_run_report(tmp_path, best=101.0)
    protocol = text[text.index("Protocol: "):text.index("Scores: ")]
    assert "`--repeats 1 --max-repeats 1`" in protocol and "which the command line does not offer" in protocol
    assert "--only '^tune-circuit-gpu-opentuner-i10-s0$'" in protocol, protocol
    command = re.search(r"`(mapperopt compare circuit [^`]+)`", protocol)[1]
    help_text = CliRunner().invoke(cli, ["compare", "--help"], terminal_width=200).output
    for option in re.findall(r"--[a-z-]+", command):
        assert re.search(rf"\s{option}\b", help_text), option
    assert "--dedicated" not in help_text


def _in_short(text: str) -> dict[str, str]:
    """The page's opening summary, {bold label: its line}, where guided is said once what it is."""
    top = text[text.index("## In short"):text.index("## What ran and what it shows")]
    assert top.count(evaluate.GUIDED_IS) == ("guided" in top), top
    return {m[1]: m[0] for m in re.finditer(r"^- \*\*([^*]+)\*\*.*$", top, re.M)}


def test_the_page_opens_with_a_few_short_lines_whose_figures_are_the_tables(tmp_path):
    """A Legion user new to the page needed ten minutes to pull out what worked from its first list (7 bullets of
    60-250 words in the page's own terms): at most five short lines come first, in the field's words, computed from
    the same units as the Summary table, and they change with the data."""
    results = tmp_path / "eval"
    plan = _reference_folder(results, 1, expert=[100.0], default=[90.0])
    _tuned_as(results, "guided", 0, best=130.0, first=100.0, walls=[30.0] * 10)
    _tuned_as(results, "random", 0, best=80.0, first=100.0, walls=[30.0] * 10)
    text = write_report(results, tmp_path / "report.md", notes={})
    assert re.match(r"# Evaluation on one [^\n]+\n\n## In short\n\n- ", text), text[:200]
    assert text.index("## In short") < text.index("## What ran and what it shows") < text.index("## Summary")
    short = _in_short(text)
    assert 3 <= len(short) <= 5 and all(len(line.split()) <= 32 for line in short.values()), short
    # how far: the jobs of the work list done, in its own count
    units = load_units(results)
    todo = work_list(plan)
    done = sum(evaluate.is_done(u, units.get(u.id)) for u in todo)
    assert f"{done} of {len(todo)} planned units done" in short["Progress"], short
    # the winner against the expert: the Summary's guided figure, the best run's throughput over the expert's
    expert, default = 100.0, 90.0
    best = units["tune-stencil-ci-guided-i10-s0"]["best_throughput"]
    row = next(line for line in text.splitlines() if line.startswith("| stencil | `ci` |"))
    assert row.split(" | ")[5] == f"{best / expert:.2f}", row
    assert f"{evaluate.GUIDED_IS} {best / expert:.2f}x on stencil `ci`" in short["Faster than the expert mapper"], short
    assert "random search" not in short["Faster than the expert mapper"], short
    # and against Legion's default mapper, over its execution in the same reference unit
    assert f"guided {best / default:.2f}x on stencil `ci`" in short["Against Legion's default mapper"], short
    assert "No gain beyond noise" not in short, short
    assert "provisional" in short["Caveat"] and "trace" in short["Caveat"], short
    # the expert's first execution in the comparison 10 % below its reference unit's: a gain of 8 % over the expert
    # is within what sessions differ by, 20 % over the default mapper is not
    _tuned_as(results, "guided", 0, best=108.0, first=90.0, walls=[30.0] * 10)
    text = write_report(results, tmp_path / "report.md", notes={})
    short = _in_short(text)
    assert 3 <= len(short) <= 5 and all(len(line.split()) <= 32 for line in short.values()), short
    assert "nowhere" in short["Faster than the expert mapper"], short
    assert "stencil `ci`" in short["No gain beyond noise"], short
    assert f"{evaluate.GUIDED_IS} {108.0 / default:.2f}x on stencil `ci`" in short["Against Legion's default mapper"], \
        short
    assert "10.0 %" in short["Caveat"], short


def _card_results(tmp_path: Path, card: str) -> Path:
    """A copy in tmp_path of the evaluation's own results folder of `card` (skips where the checkout has none)."""
    source = Path(__file__).parents[2] / "reports" / f"{card}-eval"
    if not (source / "plan.json").exists():
        pytest.skip(f"no {source.name} results here")
    shutil.copytree(source, tmp_path / source.name)
    return tmp_path / source.name


@pytest.mark.parametrize("card", ["h200", "h100"])
def test_the_pages_short_lines_read_the_summary_tables_figures(tmp_path, card):
    """On the evaluation's own results: the first lines stay short, and each gain they name is the Summary's figure
    over the reference unit's expert (the one the Headline judges), its gain over Legion's default mapper that figure
    over the row's default / expert."""
    results = _card_results(tmp_path, card)
    text = write_report(results, tmp_path / "report.md")
    short = _in_short(text)
    assert 3 <= len(short) <= 5 and all(len(line.split()) <= 32 for line in short.values()), short
    rows = {(c[1], c[2].strip("`")): c for line in text.splitlines() if line.startswith("| ")
            for c in [[x.strip() for x in line.split("|")]] if len(c) == 12 and c[2].startswith("`")}
    sizes = {"": "gpu", " (tight memory": "tight"}

    names = {"guided": "guided", "OpenTuner": "opentuner", "Optuna": "optuna", "random search": "random"}

    def gains(line: str):
        for o, figures in re.findall(r"(guided|OpenTuner|Optuna|random search)(?: \([^)]*\))? ((?:\d+\.\d\dx on \w+"
                                     r"(?: \(tight memory[^)]*\))?(?: \(\d of \d seeds\))?(?:, )?)+)", line):
            for x, b, s in re.findall(r"(\d+\.\d\d)x on (\w+)( \(tight memory)?", figures):
                yield names[o], float(x), rows[b, sizes[s]]
    def over_expert(o: str, row: list[str]) -> float:
        """The Summary's best of `o` over the reference unit's expert: in brackets where the other figure leads."""
        cell = row[6] if o == "guided" else row[7]
        assert o == "guided" or f"({o}" in cell, (o, cell)  # the others' column: the best of the optimizer named
        return float(re.search(r"reference unit: (\d+\.\d\d)", cell)[1] if "reference unit:" in cell
                     else re.match(r"\d+\.\d\d", cell)[0])
    for o, x, row in gains(short["Faster than the expert mapper"]):
        assert x == over_expert(o, row), (o, x, row)
    # which of a cell's two figures they are, where the Summary gives the comparison's first: a reader took 1.47x
    # for a typo of the 1.44 the cell opens with
    if "reference unit:" in "".join(c for row in rows.values() for c in row[6:8]):
        assert "over the reference unit's expert" in short["Caveat"], short
    against = short["Against Legion's default mapper"]
    for o, x, row in gains(re.split("; within noise|; not shown to differ", against)[0]):
        default = float(re.match(r"\d+\.\d\d", row[5])[0])  # the default mapper over the expert, one session
        assert abs(over_expert(o, row) / default - x) <= 0.01 * x, (o, x, row)


def test_a_gain_over_the_default_mapper_of_another_session_is_within_noise_only_within_one_sessions_noise(tmp_path):
    """The first lines called guided's 1.04x over Legion's default mapper "within noise" where the row's noise (one
    session) was 3.8 %: by the page's own rule a ratio over an execution of another session, beyond that noise but
    within what sessions differ by, is "not shown to differ". Computed from the unit files."""
    results = tmp_path / "eval"
    _reference_folder(results, 3, expert=[100.0, 101.0, 102.0], default=[140.0, 141.0, 142.0])  # noise 1.4 %
    units = load_units(results)
    noise = evaluate.spread(units, results, "stencil", "ci")
    # the expert's first execution in the comparison 5 % below the reference unit's: sessions differ by 5 %
    _tuned_as(results, "guided", 0, best=145.0, first=96.0, walls=[30.0] * 10)
    over_default = 145.0 / 141.0
    assert noise < over_default - 1 < 0.05
    short = _in_short(write_report(results, tmp_path / "report.md", notes={}))
    line = short["Against Legion's default mapper"]
    assert f"not shown to differ on stencil `ci` (guided {over_default:.2f}x)" in line, line
    assert "within noise" not in line, line
    _tuned_as(results, "guided", 0, best=142.0, first=96.0, walls=[30.0] * 10)
    assert 142.0 / 141.0 - 1 <= noise
    line = _in_short(write_report(results, tmp_path / "report.md", notes={}))["Against Legion's default mapper"]
    assert f"within noise on stencil `ci` (guided {142.0 / 141.0:.2f}x)" in line, line
    assert "not shown to differ" not in line, line


@pytest.mark.parametrize("card", ["h200", "h100"])
def test_the_pages_first_lines_say_units_name_the_failing_mapper_and_define_tight(tmp_path, card):
    """A new reader met "jobs" where the rest of the page says units, "it fails" after guided's figure (meaning
    Legion's default mapper), `tight` undefined until dozens of lines later, the one-GPU GEMMs' excuse after stencil
    and pennant, and a "What ran" bullet that gave the plan (5 seeds, 100 iterations) where 1-2 seeds had run."""
    results = _card_results(tmp_path, card)
    text = write_report(results, tmp_path / "report.md")
    top = text[:text.index("## Summary")]
    short = _in_short(text)
    units = load_units(results)
    plan = json.loads((results / "plan.json").read_text())
    todo = work_list(plan)
    assert f"{sum(evaluate.is_done(u, units.get(u.id)) for u in todo)} of {len(todo)} planned units done" \
        in short["Progress"], short
    assert "jobs" not in top and "; it fails" not in top, top
    assert "; the default mapper fails on circuit, stencil and pennant (tight memory)" in \
        short["Against Legion's default mapper"], short
    # `tight` said once, where first used
    first = min(top.index(w) for w in ("(tight memory", "`tight`"))
    assert top[first:].startswith(evaluate.TIGHT_IS.strip()), top[first:first + 200]
    assert top[:top.index("## What ran")].count(evaluate.TIGHT_IS.strip()) == 1, top
    # the excuse of the one-GPU GEMMs follows them, first in their list
    assert re.search(r"\*\*No gain beyond noise\*\* over the expert: the 6 GEMMs \(on one GPU their mappers can "
                     r"hardly differ\)(,| and) stencil", top), top
    # a line of several sizes names each, `gpu` too: "... and stencil; stencil and pennant (tight memory)" read as a
    # typo
    groups = short["No gain beyond noise"].split(" over the expert: ")[1].rstrip(".").split("; ")
    assert len(groups) > 1, groups  # the premise
    assert all(g.endswith((" (`gpu`)", " (tight memory)")) for g in groups), groups
    assert "- **Planned**: on one " in top and "**What ran**" not in top, top


@pytest.mark.parametrize("card", ["h200", "h100"])
def test_a_run_that_list_shows_started_is_not_said_not_run(tmp_path, card):
    """The tables said "not run yet" of runs that `evaluate.py list` shows as started: OpenTuner's 100-iteration runs
    holding their 10-iteration runs' 10 iterations, and on the H100 OpenTuner's Pennant run stopped after 4 of 10.
    They say how many iterations the journals hold, read as `list` reads them."""
    results = _card_results(tmp_path, card)
    evaluate.restore_journals(results)
    plan = json.loads((results / "plan.json").read_text())
    units = load_units(results)
    started = {u: n for u in work_list(plan) if u.kind == "tune" and u.id not in units
               for n in [evaluate.iterations_done(results, u)] if n}
    assert started, "the folder holds no started unit"
    text = write_report(results, tmp_path / "report.md")
    for u, n in started.items():
        section = text[text.index(f"### {u.bench}, size `{u.size}`\n"):]
        row = next(line for line in section.splitlines() if line.startswith(f"| {u.optimizer} | {u.iters} |"))
        assert "not run yet" not in row, row
        seeds = re.search(rf"started: (?:[^|]*; )?seeds? ((?:\d+(?:, | and )?)+) at {n} of {u.iters} iterations", row)
        assert seeds and str(u.seed) in re.findall(r"\d+", seeds[1]), row
        if u.iters == plan["long_iters"] and n == plan["iters"]:
            assert f"the {plan['iters']}-iteration run" in row, row
    long = [u for u in started if u.iters == plan["long_iters"]]
    done = text[text.index("- **Done**"):].split("\n")[0]
    assert f"{len(long)} started" in done, done


def test_the_largest_drift_between_sessions_says_where_the_comparison_ran_another_protocol(tmp_path):
    """The page's largest distance between the expert's executions in two sessions (the threshold of every
    provisional "beyond noise") was Pennant's, whose comparison times fewer cycles (plan.json `tune_args`) than its
    reference unit: read as session-to-session noise. Where the largest comes from such a row, the page says so,
    with the two argument lists (the comparison's, the size's own from configs/)."""
    from mapperopt.benchmarks import load_config

    flag = load_config("stencil").iterations_flag
    own = load_config("stencil").sizes["ci"].args[flag]
    results = tmp_path / "eval"
    _reference_folder(results, 1, expert=[100.0], default=[90.0], tune_args={"stencil-ci": [flag, "3"]})
    _tuned_as(results, "guided", 0, best=130.0, first=92.0, walls=[30.0] * 10)  # 8.0 % below its reference unit's
    text = write_report(results, tmp_path / "report.md", notes={})
    said = (f"the largest, stencil `ci`'s, is between protocols too: `{flag} 3` in the comparison, `{flag} {own}` in "
            "the reference unit")
    glance = text[text.index("## What ran and what it shows"):text.index("## Summary")]
    assert glance.count(said) == 2, glance  # the Final-or-provisional and Headline bullets
    assert "over the reference unit's expert (another session or protocol: up to 8.0 % apart)" in \
        _in_short(text)["Caveat"], text
    assert f"stencil `ci`: -8.0 %, no noise measured, `{flag} 3` against the reference unit's `{flag} {own}`" in text
    header = text[:text.index("## Physical limits")]
    assert f"differed by up to 8.0 % ({said}; each table's header" in header, header
    table = text[text.index("### stencil, size `ci`\n"):]
    assert (f"(-8.0% against the reference unit's). The comparison ran `{flag} 3`, the reference unit "
            f"`{flag} {own}`.\n") in table, table[:600]
    # the same comparison without other arguments: between sessions only
    _reference_folder(tmp_path / "plain", 1, expert=[100.0], default=[90.0], tune_args={})
    _tuned_as(tmp_path / "plain", "guided", 0, best=130.0, first=92.0, walls=[30.0] * 10)
    text = write_report(tmp_path / "plain", tmp_path / "plain.md", notes={})
    assert "protocol" not in text[:text.index("## Physical limits")], text


def test_the_page_says_how_to_read_a_committed_comparison_without_a_gpu(tmp_path, capsys):
    """A reader without a GPU followed the page's `compare --resume <folder>` and got "no GPU on this machine"; with
    --report-only alone, the table of the one optimizer the folder's last command tuned. The page gives the command
    that reads every optimizer's runs; run on a committed comparison (its journals restored as the page says), it
    prints them all and measures nothing."""
    from mapperopt.cli import main

    results = _card_results(tmp_path, "h200")
    text = write_report(results, tmp_path / "report.md", shown=Path("reports/h200-eval"))
    plan = json.loads((results / "plan.json").read_text())
    optimizers = ",".join(evaluate.usable_optimizers(plan)[0])
    command = (f"mapperopt compare <benchmark> --resume <folder> --report-only --optimizers {optimizers}")
    tuning = text[text.index("## Tuning"):text.index("### ")]
    assert f"`{command}`" in tuning, tuning
    assert ("on a copy of the comparison's folder (the command leaves its lock file there) made once `python3 "
            "benchmarks/gpu/evaluate.py list --results reports/h200-eval` has restored") in tuning, tuning
    evaluate.restore_journals(results)  # what `list` does first
    [made] = [f.parent for f in (results / "work" / "circuit").glob("compare-*/settings.json")
              if json.loads(f.read_text())["size"] == "gpu"]
    folder = tmp_path / "copy"
    shutil.copytree(made, folder)
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert main(command.replace("<benchmark>", "circuit").replace("<folder>", str(folder)).split()[1:]) == 0
    out = capsys.readouterr().out
    for name in optimizers.split(","):
        assert re.search(rf"│ {name} +│ \d", out), out
    locks = ("owner.json", "tune.lock")  # the command's lock, as any of its runs takes it
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file() and p.name not in locks} == before
