"""`compare` starts every run from a random program by default (the same per seed for every optimizer), but neither
its printed report nor table.md said so or gave that program's score: a guided run scoring 0.44 from a start about
half as fast as Legion's default mapper read as "guided makes it worse". A line under the table says where the runs
began and what the start scored in each run, and how to start from Legion's default mapping. tests/app/timed.cc,
real runs."""

from __future__ import annotations

import csv
import json

from mapperopt.cli import main


def test_compare_says_where_its_runs_started_and_what_the_start_scored(timed_exe, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)  # each line whole, as piped
    assert main(["compare", "--app", f"{timed_exe} -scale 20", "--metric", r"elapsed: (\S+) ms", "--unit", "ms",
                 "--optimizers", "guided,random", "--runs", "1", "--iters", "2", "--repeats", "1",
                 "--max-repeats", "1", "--final-rounds", "3", "--runs-dir", "runs"]) == 0
    out = capsys.readouterr().out
    [folder] = (tmp_path / "runs").glob("*/compare-*")
    runs = list(csv.DictReader((folder / "runs.csv").open()))
    # the start's score: where it stayed a run's best, that run's score (the final measurement's); else its tuning
    # measurement (iteration 1, shared by both optimizers' runs) over the default mapper's first
    kept = [r for r in runs if r["best_iter"] == "1"]
    with (folder / "guided-1" / "history.csv").open() as f:
        first = next(row for row in csv.DictReader(f) if row["iter"] == "1")
    with (folder / "random-1" / "history.csv").open() as f:
        assert next(row for row in csv.DictReader(f) if row["iter"] == "1")["throughput"] == first["throughput"]
    reference = json.loads((folder / "default.json").read_text())["throughput"]
    said = (f"{float(kept[0]['normalized']):.2f} in run 1 (the best of {kept[0]['folder']}: that run's score)" if kept
            else f"{float(first['throughput']) / reference:.2f} in run 1 (iteration 1's measurement / the default "
                 "mapper's first)")
    line = (f"Start: each run began from a random program drawn from its seed (the same for every optimizer), which "
            f"scored {said}; --start default starts from Legion's default mapping.")
    assert line in out.splitlines(), out
    assert out.index(line) < out.index("Runs whose best is their start program"), out  # under the table
    assert line in (folder / "table.md").read_text().splitlines(), (folder / "table.md").read_text()


def test_a_random_start_that_makes_most_failures_is_said_with_start_default(layoutdep_exe, tmp_path, capsys,
                                                                            monkeypatch, offline_optimizer):
    """A user's first `compare --app ... --iters 2` began from a random program that their kernel's layout check
    failed: each optimizer showed 50 % failed evaluations, all of them that shared start, and the Start line only
    said that --start default starts elsewhere. Where the random start's failures are at least half of them, the line
    says so and to give --start default for a short comparison; which a run from the default start then needs not
    (tests/app/layoutdep.cc with LAYOUTDEP_BUG=wrong: wrong numbers under a layout that is not x-fastest, caught by
    its verify pattern)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)  # each line whole, as piped
    monkeypatch.setenv("LAYOUTDEP_BUG", "wrong")
    compare = ["compare", "--app", f"{layoutdep_exe} -n 64", "--cpus", "2", "--verify-pattern", "check: OK",
               "--optimizers", "guided,random", "--runs", "1", "--iters", "2", "--repeats", "1", "--max-repeats", "1",
               "--final-rounds", "1"]
    # seed 3: a random start with `Layout * * * SOA C_order ...;`, which the kernel computes wrong under
    assert main([*compare, "--seed", "3", "--runs-dir", "random"]) == 0
    out = capsys.readouterr().out
    [folder] = (tmp_path / "random").glob("*/compare-*")
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["start_scores"]["1"]["score"] is None, summary["start_scores"]  # the random start failed
    failed = sum(k["count"] for kinds in summary["failures"].values() for k in kinds)
    [line] = [x for x in out.splitlines() if x.startswith("Start: ")]
    assert line == ("Start: each run began from a random program drawn from its seed (the same for every optimizer), "
                    "which scored 0 in run 1 (it failed in iteration 1): that failed start is 2 of the "
                    f"{failed} failed evaluations below, in every optimizer's figure alike; for a short comparison, "
                    "give --start default, which starts every run from Legion's default mapping."), out
    assert line in (folder / "table.md").read_text().splitlines()
    assert main([*compare, "--start", "default", "--runs-dir", "default"]) == 0
    [line] = [x for x in capsys.readouterr().out.splitlines() if x.startswith("Start: ")]
    assert "Legion's default mapping written in the DSL (--start default)" in line and "give --start" not in line, line
