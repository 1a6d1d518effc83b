"""What `tune` and `compare` say around their work: the install command of a missing optional package, the unit of
the best figure after a failed iteration, a smaller comparison answered from a bigger finished one, and an unfinished
tuning with other settings left alone."""

from __future__ import annotations

import re

from mapperopt.cli import main
from mapperopt.optimizer.base import Proposal
from mapperopt.optimizer.baselines import RandomSearch

FAST = ["--min-time", "0.05", "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1"]


def test_the_best_after_a_failed_iteration_keeps_its_unit(tmp_path, monkeypatch, capsys):
    """The progress line of a failed iteration showed the best as a bare throughput ("best 0.0005728 (iter 1)") where
    every other line gave it with its unit."""
    propose = RandomSearch.propose

    def failing_second(self, history):
        if len(history) == 1:  # a program the checker refuses: iteration 2 fails without an execution
            return Proposal(dsl="Task nosuchtask CPU;\n", note="a broken program")
        return propose(self, history)

    monkeypatch.setattr(RandomSearch, "propose", failing_second)
    args = ["compare", "circuit", "--size", "ci", "--iters", "2", "--runs", "1", "--optimizers", "random",
            "--start", "default", *FAST, "--runs-dir", str(tmp_path / "runs")]
    assert main(args) == 0
    out = " ".join(capsys.readouterr().out.split())
    best = re.search(r"random #1 iter 1/2: \S+ GFLOPS best (\S+ GFLOPS) \(this one\)", out)
    assert best and f"random #1 iter 2/2: failed (check) best {best[1]} (iter 1)" in out, out
