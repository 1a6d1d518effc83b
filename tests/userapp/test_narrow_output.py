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


def test_tunes_final_table_of_a_time_metric_fits_80_columns(timed_exe, tmp_path, capsys, monkeypatch):
    """tune's final table ("Measured together") of a program with a time metric of some 600 ms was 83 columns wide
    at COLUMNS=80: each time and interval cell carried its throughput too (`0.001559-0.001916` / `1/ms)`), so every
    row wrapped on an 80-column terminal. The iterations table, run's and compare's fit. Its cells give the time
    alone, as the iterations table does."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["tune", "--app", f"{timed_exe} -scale 20", "--metric", r"elapsed: (\S+) ms", "--unit", "ms",
                 "--iters", "2", "--repeats", "1", "--max-repeats", "1", "--final-rounds", "3",
                 "--runs-dir", "runs"]) == 0
    out = capsys.readouterr().out
    final = out[out.index("Measured together"):]
    table = [line for line in final.splitlines() if line[:1] in "┏┃┡│└"]
    assert table and all(len(line) <= 80 for line in table), final
    rows = [line.split("│") for line in table if line.startswith("│") and line.split("│")[2].strip()]
    assert rows and all(r[2].strip().endswith(" ms") and r[3].strip().endswith(" ms") for r in rows), final


def test_tunes_notes_are_wrapped_at_80_columns_as_runs_are(timed_exe, tmp_path, capsys, monkeypatch):
    """`run` wraps its notes at COLUMNS (never inside a command, a pattern or a quoted text); tune printed its notes
    ("Baselines: ...", 560 characters; "Layouts are not searched: ...", "No spread estimate: ...", "More processors than
    cores: ...") as lines of 300-600 characters. A line that holds a command or a path stays whole."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["tune", "--app", f"{timed_exe} -scale 20", "--metric", r"elapsed: (\S+) ms", "--unit", "ms",
                 "--cpus", "2", "--iters", "1", "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1",
                 "--runs-dir", "runs"]) == 0
    out = capsys.readouterr().out
    flat = " ".join(out.split())
    for said in ("Baselines: default ", "Layouts are not searched", "More processors than cores"):
        assert said in flat, out
    # the program prints no check of its own: its default baseline showed it
    assert "Layouts are not searched: nothing verifies this application's results beyond its exit status" in flat
    # a line with a command or a path stays whole
    long = [line for line in out.splitlines() if len(line) > 80 and "mapperopt " not in line and "runs/" not in line]
    assert not long, long
    _progress_line_wraps_indented(out, "  iter 1/1  ")


def test_compares_notes_are_wrapped_at_80_columns_as_runs_are(timed_exe, tmp_path, capsys, monkeypatch):
    """compare printed its notes ("Layouts are not searched: ...", the noise of its measurements, ...) as lines of
    300-600 characters, where `run` wraps them at COLUMNS. A line that holds a command or a path stays whole."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["compare", "--app", f"{timed_exe} -scale 20", "--metric", r"elapsed: (\S+) ms", "--unit", "ms",
                 "--optimizers", "random", "--runs", "1", "--iters", "1", "--repeats", "1", "--max-repeats", "1",
                 "--final-rounds", "1", "--runs-dir", "runs"]) == 0
    out = capsys.readouterr().out
    assert "Layouts are not searched" in out, out
    # a progress line of the final measurement ("Measuring ...") is one line; a line with a command or a path stays
    # whole
    long = [line for line in out.splitlines() if len(line) > 80 and "mapperopt " not in line and "runs/" not in line
            and not line.startswith("Measuring ")]
    assert not long, long
    _progress_line_wraps_indented(out, "  random #1 iter 1/1: ")


def _progress_line_wraps_indented(out: str, start: str) -> None:
    """The iteration's progress line, which starts with `start`, was one line of 100-200 characters at COLUMNS=80
    (the terminal broke it anywhere): it is within 80, its later lines indented under its figures."""
    lines = out.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith(start))
    after = lines[first + 1]
    assert len(lines[first]) <= 80 and after.startswith(" " * len(start)) and after.strip(), lines[first:first + 3]
    assert "best " in " ".join(lines[first:first + 3]), lines[first:first + 3]


def test_progress_lines_stay_whole_when_piped_without_columns(timed_exe, tmp_path, capsys, monkeypatch):
    """Piped output without COLUMNS keeps each line whole (for grep and logs): tune's and compare's progress lines
    too."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)
    app = ["--app", f"{timed_exe} -scale 20", "--metric", r"elapsed: (\S+) ms", "--unit", "ms", "--iters", "1",
           "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1", "--runs-dir", "runs"]
    assert main(["tune", *app, "--baseline", "none"]) == 0
    assert main(["compare", *app, "--optimizers", "random", "--runs", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for start in ("  iter 1/1  ", "  random #1 iter 1/1: "):
        line = next(line for line in lines if line.startswith(start))
        assert len(line) > 80 and "best " in line, line  # whole, on one line
