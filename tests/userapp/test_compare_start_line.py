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
