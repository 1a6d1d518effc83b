"""A run whose best program fails in the final measurement (after passing in tuning and in the rounds before): the
table, table.md, the console and summary.json say which run, in which round, why, and where its output is, and the
line of score intervals names it rather than leaving it out. A small real comparison on Circuit (ci size), in which
one round of one best program runs with a timeout it cannot meet, so that it really fails there."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mapperopt.benchmarks import harness
from mapperopt.cli import main


def test_a_best_that_fails_in_the_final_measurement_is_said_everywhere(tmp_path, capsys, monkeypatch):
    real = harness.run_benchmark
    failing: list[str] = []

    def one_round_times_out(app, mapper="default", **kw):
        out = Path(kw.get("out_dir") or ".")
        # round 3 of the first best program measured at the end (not the reference): killed at once, no retry
        if re.fullmatch(r"final-\d+", out.parent.parent.name) and out.parent.name.startswith("p-") \
                and out.name == "round-3" and (not failing or failing[0] == out.parent.name):
            failing.append(out.parent.name)
            kw.update(timeout_s=0.05, retries=0)
        return real(app, mapper, **kw)

    monkeypatch.setattr(harness, "run_benchmark", one_round_times_out)
    runs = tmp_path / "runs"
    assert main(["compare", "circuit", "--size", "ci", "--optimizers", "random", "--iters", "2", "--runs", "2",
                 "--repeats", "1", "--max-repeats", "1", "--min-time", "0.05", "--final-rounds", "3",
                 "--runs-dir", str(runs)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    [folder] = (runs / "circuit").iterdir()
    [group] = json.loads((folder / "final.json").read_text())["groups"]
    program = failing[0]
    assert group["measured"][program]["estimate"] is None and "timeout" in group["measured"][program]["reason"]
    summary = json.loads((folder / "summary.json").read_text())
    failed = [r for r in summary["runs"] if r["final_throughput"] is None]
    assert failed, summary["runs"]
    table = " ".join((folder / "table.md").read_text().split())
    for row in failed:
        run = row["folder"]
        assert row["final_failure"]["round"] == 3 and row["final_failure"]["run_dir"] == f"final-1/{program}/round-3"
        assert "timeout" in row["final_failure"]["reason"], row
        said = (f"{run}: its best program (iteration {row['best_iter']}) failed in round 3 of 3 of the final "
                f"measurement, after passing in the rounds before (timeout: ")
        for text in (table, out):
            assert said in text, text
            assert f"see final-1/{program}/round-3" in text or f"{folder}/final-1/{program}/round-3" in text, text
            assert "it scores 0 (failures count 0)" in text, text
    # the row says it next to the score, and the failed evaluations say it too
    assert re.search(r"\| random \| 2 \| [^|]+\| [^|]+\| [^|]+\| [^|]+\| [^|]+\| \d+% of 4; best failed at the end in "
                     rf"{len(failed)} of 2 runs \|", table), table
    # the scores' interval line names the failed run instead of leaving it out
    if "Scores with the 90 % interval" in table:
        line = table.split("Scores with the 90 % interval")[1].split("Noise:")[0]
        for row in failed:
            assert f"{row['folder']} 0 (failed in the final measurement)" in line, line
