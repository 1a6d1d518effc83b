"""At 80 columns (COLUMNS=80) `run` never breaks a regular expression it quotes across lines: its table's reason and
AutoGuide's explanation wrapped `/elapsed:  (\\S+) msx/` at its spaces, so the pattern read (and pasted) wrong. And
tune's iterations table of a program with a time metric gives each iteration one line: the time alone, which its
throughput beside it wrapped onto three. tests/app/timed.cc, real runs."""

from __future__ import annotations

from pathlib import Path

from mapperopt.cli import main


def test_run_keeps_a_quoted_pattern_on_one_line_at_80_columns(timed_exe, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    Path("m.dsl").write_text("Task * CPU;\n")
    pattern = r"elapsed:  (\S+) msx"
    assert main(["run", "--app", str(timed_exe), "--verify-pattern", pattern, "--mapper", "m.dsl", "--once",
                 "--out", "run"]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines), out
    table = [line for line in lines if line.startswith("│")]
    assert any(f"/{pattern}/" in line for line in table), out  # the reason's, whole
    below = [line for line in lines if not line.startswith(("│", "┌", "└"))]
    assert any(f"/{pattern}/" in line for line in below), out  # the explanation's, whole


def test_tunes_iterations_table_of_a_time_metric_gives_one_line_an_iteration(timed_exe, tmp_path, capsys,
                                                                             monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["tune", "--app", str(timed_exe), "--metric", r"elapsed: (\S+) ms", "--unit", "ms", "--iters", "2",
                 "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1", "--runs-dir", "runs"]) == 0
    out = capsys.readouterr().out
    table = out[out.index("timed: 2 iterations"):out.index("Measuring the top candidates")].splitlines()
    rows = [line for line in table if line.startswith("│")]
    assert len(rows) == 2 and all(len(line) <= 80 for line in table), out
    assert all(line.split("│")[3].strip().endswith(" ms") for line in rows), out  # the time, alone
