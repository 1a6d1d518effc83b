"""tune's first measurement of the baselines printed nothing for minutes on a slow program (compare says that it is
still measuring): it says so too, with compare's heartbeat."""

from __future__ import annotations

import re

from mapperopt.cli import main


def test_tune_says_it_is_still_measuring_the_baseline(tmp_path, foreign_exe, offline_optimizer, capsys,
                                                       monkeypatch):
    from mapperopt.optimizer import compare

    monkeypatch.setattr(compare, "HEARTBEAT_S", 0.2)
    assert main(["tune", "--app", f"{foreign_exe} -n 1000 -steps 1", "--cpus", "2", "--baseline", "default",
                 "--iters", "1", "--repeats", "3", "--max-repeats", "3", "--final-rounds", "1", "--runs-dir",
                 str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    before = out[:out.index("iter 1/1")]  # while the baseline was measured, before the first iteration
    beats = re.findall(r"\.\.\. still measuring: (\d+) s since the last line, (\d+) executions? started since", before)
    assert beats, out
    assert any(int(n) > 0 for _, n in beats), beats  # the baseline's executions, in the tuning folder
