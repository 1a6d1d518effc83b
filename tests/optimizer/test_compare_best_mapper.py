"""What `compare` ends with: the best mapper it found (the run, its iteration, the .dsl file), then a `Next:` line as
tune's summary has; where the Next line says to use it, the `mapperopt run` command that runs it as the comparison
did. Once it said only where its table and plot were, so the mapper a user was after had to be looked for in
summary.json and the run folders. A real comparison of two optimizers on Circuit (ci size), its printed command run
as printed."""

from __future__ import annotations

import json
import shlex
import shutil

from mapperopt.cli import main

FAST = ["--size", "ci", "--repeats", "1", "--max-repeats", "1", "--min-time", "0.05", "--final-rounds", "1"]


def _lines(text: str, head: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(head)]


def test_compare_names_the_best_mapper_its_file_and_the_command_that_runs_it(tmp_path, capsys, monkeypatch,
                                                                             final_measured_as):
    monkeypatch.delenv("COLUMNS", raising=False)  # each line whole, as piped (pytest-xdist's workers set COLUMNS)
    runs = tmp_path / "runs"
    assert main(["compare", "circuit", "--optimizers", "guided,random", "--iters", "2", "--runs", "1", *FAST,
                 "--runs-dir", str(runs)]) == 0
    out = capsys.readouterr().out
    [folder] = (runs / "circuit").iterdir()
    summary = json.loads((folder / "summary.json").read_text())
    best = max(summary["runs"], key=lambda r: r["normalized"])  # the table's `best` column: the highest score
    path = folder / best["folder"] / "best.dsl"
    # the file is the program the final measurement scored: that iteration's mapper, as its journal record keeps it
    # (an iteration measured by another run, as random's first is where it starts from guided's, has no folder here)
    records = [json.loads(line) for line in (folder / best["folder"] / "state.jsonl").read_text().splitlines()]
    [record] = [r for r in records if r["iter"] == best["best_iter"]]
    assert path.read_text() == record["dsl"]
    measured = folder / best["folder"] / f"iter-{best['best_iter']:03d}" / "mapper.dsl"
    assert not measured.is_file() or measured.read_text() == record["dsl"]
    # one final round gives no interval: no gain is shown, so the reference is the one to keep, as tune says it; the
    # best is named as not shown better than it, with no command to run it (it read as the advice, the Next line
    # after it said to keep the reference)
    [line] = _lines(out, "Best mapper")
    assert line == (f"Best mapper found: iteration {best['best_iter']} of {best['folder']} ({best['optimizer']}, run "
                    f"1), the highest score in the final measurement ({best['normalized']:.2f}, the expert mapper's "
                    f"= 1), but not shown better than the expert mapper (see Next); its file, to inspect: {path}"), out
    assert "mapperopt run" not in line, line
    [step] = _lines(out, "Next:")
    # the ci size's executions (under 0.1 s): said first, as tune's Next says it
    assert "Short measurement in the final measurement: " in out, out
    assert step == ("Next: the final measurement's executions were too short to conclude: compare again as Short "
                    "measurement in the final measurement above says; use the expert mapper (--mapper expert): the "
                    "best mapper "
                    "found is not shown faster than it: its score has no 90 % interval, which takes --final-rounds 3 "
                    "or more. To search further, give the same command a larger --iters (it extends this "
                    "comparison)."), out
    assert out.splitlines()[-2:] == [line, step], out  # the last words, after the file names
    # a report of the finished comparison ends the same way
    assert main(["compare", "--resume", str(folder), "--report-only"]) == 0
    again = capsys.readouterr().out
    assert _lines(again, "Best mapper") == [line] and _lines(again, "Next:") == [step], again
    # the best programs measured twice the expert's throughput in 3 rounds of steady executions of a second each: the
    # Next line says to use it, and the Best mapper line gives the command, which runs that file on the comparison's
    # processors
    shown = tmp_path / "shown" / folder.name
    shutil.copytree(folder, shown)
    final_measured_as(shown, 2.0, time_s=1.0)
    assert main(["compare", "--resume", str(shown), "--report-only", "--final-rounds", "3"]) == 0
    faster = capsys.readouterr().out
    best = max(json.loads((shown / "summary.json").read_text())["runs"], key=lambda r: r["normalized"])
    path = shown / best["folder"] / "best.dsl"
    command = f"mapperopt run circuit --mapper {path}"
    [line] = _lines(faster, "Best mapper")
    assert line == (f"Best mapper: iteration {best['best_iter']} of {best['folder']} ({best['optimizer']}, run 1), "
                    f"the highest score in the final measurement (2.00, the expert mapper's = 1): {path}; run it "
                    f"with: {command}"), faster
    [step] = _lines(faster, "Next:")
    assert step.startswith(f"Next: use it ({command}): its score's 90 % interval, "), faster
    assert main(shlex.split(command)[1:]) == 0
    ran = " ".join(capsys.readouterr().out.split())
    assert "│ status │ ok │" in ran and f"(size ci, {summary['settings']['cpus']} CPU, 0 GPU)" in ran, ran
    # at 80 columns, the prose is wrapped and the command, whole, gets a line of its own; the line without one is
    # wrapped too
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["compare", "--resume", str(shown), "--report-only", "--final-rounds", "3"]) == 0
    wrapped = capsys.readouterr().out
    lines = wrapped[wrapped.index("Best mapper:"):wrapped.index("Next:")].splitlines()
    assert lines[-1] == command and " ".join(lines) == line, wrapped
    assert all(len(row) <= 80 or str(path) in row for row in lines[:-1]), wrapped
    assert main(["compare", "--resume", str(folder), "--report-only"]) == 0
    wrapped = capsys.readouterr().out
    lines = wrapped[wrapped.index("Best mapper found:"):wrapped.index("Next:")].splitlines()
    assert " ".join(lines) == _lines(out, "Best mapper")[0], wrapped
    assert all(len(row) <= 80 or str(folder) in row for row in lines), wrapped


def test_a_report_before_the_final_measurement_does_not_call_its_best_the_final_measurements(tmp_path, capsys,
                                                                                            monkeypatch):
    """A report of tuning runs whose final measurement has not run (--report-only of a comparison whose final
    measurement was never made, as the GPU evaluation's folders are until their `final` units) named its best mapper
    "the highest score in the final measurement" and asked for more final rounds: it says the scores are the runs'
    own, and that the final measurement, which the command without --report-only makes, is what tells."""
    import shutil

    monkeypatch.delenv("COLUMNS", raising=False)
    runs = tmp_path / "runs"
    assert main(["compare", "circuit", "--optimizers", "guided", "--iters", "2", "--runs", "1", *FAST,
                 "--runs-dir", str(runs)]) == 0
    capsys.readouterr()
    [folder] = (runs / "circuit").iterdir()
    for made in ("final-1", "final.json", "summary.json", "summary.csv", "table.md", "runs.csv"):  # as never made
        shutil.rmtree(folder / made) if (folder / made).is_dir() else (folder / made).unlink()
    assert main(["compare", "--resume", str(folder), "--report-only"]) == 0
    out = capsys.readouterr().out
    assert "No final measurement yet" in out, out
    [line] = _lines(out, "Best mapper")
    assert "score in the final measurement" not in line and "the highest of the runs' own scores" in line, line
    [step] = _lines(out, "Next:")
    assert "--final-rounds" not in step and "without --report-only" in step, step
