"""`compare` of a program of the user's (--app) ends, as a benchmark's comparison does, with its best mapper's file and,
where the Next line says to use it, the `mapperopt run` command that runs it: that command gives the program as the
comparison did (--app, its metric and its own arguments after `--`), and runs as printed; its Next says first that
executions too short to conclude from need more work, as tune's does. A best not shown better than Legion's default
mapper is said to be so, with no command: "run it with" read as the advice while the Next line said to keep the
default mapper; so is a gain that the final measurement does not establish (executions warned of as short or noisy,
or a best that maps as the default mapper does: its score is the noise). tests/app/timed.cc."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

from mapperopt.cli import main


def test_compare_of_an_own_program_gives_the_run_command_of_its_best_mapper(timed_exe, tmp_path, capsys, monkeypatch,
                                                                           final_measured_as):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)  # the Best mapper line whole, as piped
    app = ["--app", str(timed_exe), "--metric", r"elapsed: (\S+) ms", "--unit", "ms"]
    assert main(["compare", *app, "--optimizers", "random", "--runs", "1", "--iters", "2", "--repeats", "1",
                 "--max-repeats", "1", "--final-rounds", "1", "--runs-dir", "runs", "--", "-reps", "2"]) == 0
    out = capsys.readouterr().out
    [folder] = (tmp_path / "runs").glob("*/compare-*")
    best = max(json.loads((folder / "summary.json").read_text())["runs"], key=lambda r: r["normalized"])
    path = folder.relative_to(tmp_path) / best["folder"] / "best.dsl"  # as --runs-dir was given: relative
    # one final round: no interval, so the best is not shown better than the default mapper, which Next keeps
    [line] = [line for line in out.splitlines() if line.startswith("Best mapper")]
    assert line.startswith(f"Best mapper found: iteration {best['best_iter']} of random-1 (random, run 1), "), out
    assert line.endswith(f"({best['normalized']:.2f}, Legion's default mapper's = 1), but not shown better than "
                         f"Legion's default mapper (see Next); its file, to inspect: {path}"), out
    assert "run it with" not in line, line
    [step] = [line for line in out.splitlines() if line.startswith("Next:")]
    # executions of a few ms: said first, as tune's Next says it, before which mapper to keep
    assert "Short measurement in the final measurement: " in out, out
    assert step.startswith("Next: the final measurement's executions were too short to conclude: compare again as "
                           "Short measurement in the final measurement above says; keep Legion's default mapper (run "
                           "without --mapper): "), out
    # measured twice the default mapper's throughput in 3 rounds, but by executions of a few ms: the interval lies
    # above 1, yet the gain is not established ("use it" read as the advice beside the Short measurement warning)
    shown = tmp_path / "shown"
    shutil.copytree(folder, shown / folder.name)
    report = ["compare", *app, "--resume", str(shown / folder.name), "--report-only", "--final-rounds", "3", "--",
              "-reps", "2"]
    final_measured_as(shown / folder.name, 2.0)
    assert main(report) == 0
    out = capsys.readouterr().out
    best = max(json.loads((shown / folder.name / "summary.json").read_text())["runs"],
               key=lambda r: r["normalized"])
    path = shown / folder.name / best["folder"] / "best.dsl"
    [line] = [line for line in out.splitlines() if line.startswith("Best mapper")]
    assert line.endswith("(2.00, Legion's default mapper's = 1), but its gain is not established (see Next); its "
                         f"file, to inspect: {path}"), out
    [step] = [line for line in out.splitlines() if line.startswith("Next:")]
    assert step.startswith("Next: its score's 90 % interval, 1.9"), step
    assert ("lies above Legion's default mapper's 1, but the gain is not established: the final measurement's "
            "executions were too short to conclude: compare again as Short measurement in the final measurement "
            "above says; keep Legion's default mapper (run without --mapper) until a measurement shows the gain. "
            in step), step
    # the same figures from noisy executions of a second each: the noise warning is the evidence
    final_measured_as(shown / folder.name, 2.0, spread=0.2, time_s=1.0)
    assert main(report) == 0
    out = capsys.readouterr().out
    assert "Noisy measurement in the final measurement: " in out and "Short measurement in the final" not in out, out
    [step] = [line for line in out.splitlines() if line.startswith("Next:")]
    assert ("but the gain is not established: the final measurement's executions were too noisy to conclude: compare "
            "again as Noisy measurement in the final measurement above says; keep Legion's default mapper" in step), out
    assert "use it" not in step and "run it with" not in out, out
    # ...and from executions long and steady enough: the line gives the command that runs it
    final_measured_as(shown / folder.name, 2.0, time_s=1.0)
    assert main(report) == 0
    out = capsys.readouterr().out
    command = shlex.join(["mapperopt", "run", *app, "--mapper", str(path), "--", "-reps", "2"])
    [line] = [line for line in out.splitlines() if line.startswith("Best mapper")]
    assert line.endswith(f": {path}; run it with: {command}"), out
    [step] = [line for line in out.splitlines() if line.startswith("Next:")]
    assert step.startswith(f"Next: use it ({command}): its score's 90 % interval, "), out
    assert "(random, run 1)" in line and "(2.00, Legion's default mapper's = 1)" in line, out
    assert main(shlex.split(command)[1:]) == 0
    ran = " ".join(capsys.readouterr().out.split())
    assert "timed with the best.dsl mapper" in ran and "│ status │ ok │" in ran, ran


def _compare_scored(score: float, timed_exe, tmp_path, capsys, monkeypatch, final_measured_as) -> tuple[Path, str]:
    """A comparison of timed.cc by random search from Legion's default mapping (--iters 1: its best maps as the
    default mapper does), its final figures set to `score` times the default mapper's, from steady executions of a
    second each, then reported again: its folder and the report's standard output."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)
    app = ["--app", str(timed_exe), "--metric", r"elapsed: (\S+) ms", "--unit", "ms"]
    assert main(["compare", *app, "--optimizers", "random", "--runs", "1", "--iters", "1", "--start", "default",
                 "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1", "--runs-dir", "runs", "--",
                 "-reps", "2"]) == 0
    capsys.readouterr()
    [folder] = (tmp_path / "runs").glob("*/compare-*")
    final_measured_as(folder, score, time_s=1.0)
    assert main(["compare", *app, "--resume", str(folder), "--report-only", "--final-rounds", "3", "--",
                 "-reps", "2"]) == 0
    out = capsys.readouterr().out
    return folder, out


def test_compare_does_not_recommend_a_gain_that_a_mapper_mapping_as_the_default_one_measured(timed_exe, tmp_path,
                                                                                             capsys, monkeypatch,
                                                                                             final_measured_as):
    """A comparison whose best maps exactly as Legion's default mapper (`Task * CPU; Region * * CPU SYSMEM;`) said
    "Next: use it" for its score of 1.18 with an interval above 1: a mapper with the reference's mapping measures
    the machine's noise, not a gain. Its runs start from Legion's default mapping and stop there (--iters 1); their
    final figures are set to 1.3x the default mapper's, from steady executions of a second each."""
    folder, out = _compare_scored(1.3, timed_exe, tmp_path, capsys, monkeypatch, final_measured_as)
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["same_as_reference"] == ["random-1"], summary
    [interval] = summary["score_intervals"].values()
    assert interval[1] > 1, interval  # a significant gain, which the mapping cannot have made
    path = folder / "random-1" / "best.dsl"  # as --resume named the folder
    [line] = [line for line in out.splitlines() if line.startswith("Best mapper")]
    assert line.endswith("(1.30, Legion's default mapper's = 1), but its gain is not established (see Next); its file, "
                         f"to inspect: {path}"), out
    [step] = [line for line in out.splitlines() if line.startswith("Next:")]
    assert step == (f"Next: its score's 90 % interval, {interval[1]:.2f}-{interval[2]:.2f}, lies above Legion's "
                    "default mapper's 1, but the gain is not established: it maps as Legion's default mapper does, so "
                    f"its score, 1.30 ({interval[1]:.2f}-{interval[2]:.2f}), is the machine's noise; compare again "
                    "with a higher --final-rounds (now 3), on a quieter machine; keep Legion's default mapper (run "
                    "without --mapper) until a measurement shows the gain. To search further, give the same command a "
                    "larger --iters (it extends this comparison)."), out


def test_compare_says_plainly_that_a_best_not_shown_better_maps_as_the_default_mapper(timed_exe, tmp_path, capsys,
                                                                                      monkeypatch,
                                                                                      final_measured_as):
    """A comparison whose best maps exactly as Legion's default mapper, with a score not shown above 1, said only
    "not shown better than Legion's default mapper": a user takes its best.dsl for a mapping of its own. The line
    says it is the default mapper's own mapping."""
    folder, out = _compare_scored(0.95, timed_exe, tmp_path, capsys, monkeypatch, final_measured_as)
    assert json.loads((folder / "summary.json").read_text())["same_as_reference"] == ["random-1"]
    [line] = [line for line in out.splitlines() if line.startswith("Best mapper")]
    assert line.endswith("(0.95, Legion's default mapper's = 1), but not shown better than Legion's default mapper "
                         "(see Next); it maps as Legion's default mapper does (the same mapping: its score is the "
                         "machine's noise or the two mappers' own overhead); its file, to inspect: "
                         f"{folder / 'random-1' / 'best.dsl'}"), out
