"""`compare --resume DIR --report-only` without --optimizers reports the optimizers of the command that last ran the
comparison (its settings.json). A folder tuned one optimizer at a time (benchmarks/evaluate.py's) holds others' runs
too: a reader got random's table and a "use the expert" advice while guided's runs there scored 1.44. The report
names the runs it leaves out and the option that includes them. One small real comparison on Stencil (ci size)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mapperopt.cli import main

FAST = ["--size", "ci", "--iters", "1", "--runs", "1", "--start", "default", "--repeats", "1", "--max-repeats", "1",
        "--min-time", "0.05", "--final-rounds", "1"]


@pytest.fixture(scope="module")
def comparison(tmp_path_factory) -> Path:
    """A comparison tuned by guided, then by random alone (the last command: random)."""
    runs = tmp_path_factory.mktemp("made") / "runs"
    assert main(["compare", "stencil", "--optimizers", "guided", *FAST, "--runs-dir", str(runs)]) == 0
    [folder] = (runs / "stencil").iterdir()
    assert main(["compare", "--resume", str(folder), "--optimizers", "random"]) == 0
    assert (folder / "guided-1").is_dir() and (folder / "random-1").is_dir()
    return folder


def test_a_report_of_the_last_commands_optimizers_names_the_runs_it_leaves_out(comparison, capsys):
    capsys.readouterr()
    assert main(["compare", "--resume", str(comparison), "--report-only"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "│ random " in out and "│ guided " not in out, out  # which runs are reported is unchanged
    assert (f"Note: {comparison} also holds runs of guided, which this report of random leaves out; give "
            "--optimizers guided,random to include them.") in out, out
    # named: no note
    assert main(["compare", "--resume", str(comparison), "--report-only", "--optimizers", "guided,random"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "│ guided " in out and "also holds runs of" not in out, out
