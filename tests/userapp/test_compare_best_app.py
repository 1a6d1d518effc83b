"""`compare` of a program of the user's (--app) ends, as a benchmark's comparison does, with its best mapper's file and,
where the Next line says to use it, the `mapperopt run` command that runs it: that command gives the program as the
comparison did (--app, its metric and its own arguments after `--`), and runs as printed; its Next says first that
executions too short to conclude from need more work, as tune's does. A best not shown better than Legion's default
mapper is said to be so, with no command: "run it with" read as the advice while the Next line said to keep the
default mapper. tests/app/timed.cc."""

from __future__ import annotations

import json
import shlex
import shutil

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
    # measured twice the default mapper's throughput in 3 rounds: the line gives the command that runs it
    shown = tmp_path / "shown"
    shutil.copytree(folder, shown / folder.name)
    final_measured_as(shown / folder.name, 2.0)
    assert main(["compare", *app, "--resume", str(shown / folder.name), "--report-only", "--final-rounds", "3", "--",
                 "-reps", "2"]) == 0
    out = capsys.readouterr().out
    best = max(json.loads((shown / folder.name / "summary.json").read_text())["runs"],
               key=lambda r: r["normalized"])
    path = shown / folder.name / best["folder"] / "best.dsl"
    command = shlex.join(["mapperopt", "run", *app, "--mapper", str(path), "--", "-reps", "2"])
    [line] = [line for line in out.splitlines() if line.startswith("Best mapper")]
    assert line.endswith(f": {path}; run it with: {command}"), out
    assert "(random, run 1)" in line and "(2.00, Legion's default mapper's = 1)" in line, out
    assert main(shlex.split(command)[1:]) == 0
    ran = " ".join(capsys.readouterr().out.split())
    assert "timed with the best.dsl mapper" in ran and "│ status │ ok │" in ran, ran
