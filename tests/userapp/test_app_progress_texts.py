"""Progress texts for a user's program say what mapperopt does with it: `run` discovers it (it never builds a user's
program: "building the application" was false), and compare's still-measuring line does not blame calibration,
which a user's program never gets. tests/app/timed.cc, real runs."""

from __future__ import annotations

import re
from pathlib import Path

from mapperopt.cli import main


def test_run_says_it_discovers_a_users_program_not_that_it_builds_it(timed_exe, tmp_path, capsys, monkeypatch):
    """On an 80-column console the line fits whole; a longer one breaks at a space, leaving none at a line's end (it
    broke inside its parenthesis with a trailing space)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    Path("m.dsl").write_text("Task * CPU;\n")
    assert main(["run", "--app", str(timed_exe), "--mapper", "m.dsl", "--once", "--out", "run"]) == 0
    raw = capsys.readouterr().err
    assert "Running timed (a discovery run and the mapper's build first, if needed)...\n" in raw, raw
    assert "building the application" not in raw, raw
    assert not [line for line in raw.splitlines() if line.endswith(" ")], raw


def test_compares_still_measuring_line_does_not_name_calibration_for_a_users_program(timed_exe, tmp_path, capsys,
                                                                                      monkeypatch):
    from mapperopt.optimizer import compare

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(compare, "HEARTBEAT_S", 0.2)
    assert main(["compare", "--app", f"{timed_exe} -scale 20", "--metric", r"elapsed: (\S+) ms", "--unit", "ms",
                 "--optimizers", "random", "--runs", "1", "--iters", "1", "--repeats", "1", "--max-repeats", "1",
                 "--final-rounds", "1", "--runs-dir", "runs"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    beats = re.findall(r"\.\.\. still measuring: [^(]*\(([^)]*)\)", out)
    assert beats, out
    assert all(why == "your program is not calibrated: each execution takes as long as a candidate's mapping makes "
               "it, and a run measures several" for why in beats), beats
