"""Two runs of one optimizer that propose the same programs (guided from the same start: its search is
deterministic) are one sample, not two: the table's std 0.00 looked like a stable optimizer. The note under the
table says which run repeated which, and how many distinct runs the row has."""

from __future__ import annotations

from mapperopt.cli import main


def flat(text: str) -> str:
    return " ".join(text.split())


def test_a_run_that_repeats_another_is_named_under_the_table(tmp_path, foreign_exe, offline_optimizer, capsys):
    runs = tmp_path / "runs"
    assert main(["compare", "--app", f"{foreign_exe} -n 1000 -steps 1", "--cpus", "2", "--optimizers", "guided",
                 "--runs", "2", "--iters", "3", "--start", "default", "--repeats", "1", "--max-repeats", "1",
                 "--final-rounds", "1", "--runs-dir", str(runs)]) == 0
    said = ("guided-2 repeated guided-1 (the same program in every iteration): guided has 1 distinct run of 2, so "
            "its std, worst and median do not show how much its runs vary.")
    assert said in flat(capsys.readouterr().out)
    (folder,) = runs.glob("*/compare-*")
    assert said in flat((folder / "table.md").read_text())
