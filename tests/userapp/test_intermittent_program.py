"""A program that fails intermittently: the mappers that ran without failure in the search fail in tune's final
comparison. tune says that the program fails intermittently, that best.dsl is not shown to work, and exits non-zero;
its Verdict reads as a sentence. Where none of the candidates ran there, tune's end, as compare's, claims no best
mapper and says what to do."""

from __future__ import annotations

import json
from pathlib import Path

from mapperopt.cli import main

FLAKED = "exited with status 7: flaked"


def final_flaky(tmp_path: Path, exe: Path, runs: str = "*/final/*") -> Path:
    """Runs every execution but those of the final comparison (`runs`, a pattern of their run folders: tune's are
    under `final/`, `final/iter-*` those of its candidates and start; compare's best programs' `final-N/p-*`), which
    fail after the program ran: what a program that fails at random does when the draw turns against it there."""
    wrapper = tmp_path / "flaky"
    wrapper.write_text(f'#!/bin/sh\ncase "$PWD" in {runs}) {exe} "$@"; echo flaked >&2; exit 7;; esac\n'
                       f'exec {exe} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def ends_with_no_pick(out: str, root: Path, best: str) -> str:
    """Asserts that tune's output `out` (whitespace folded) ends as it must where every candidate and the start
    failed in the final comparison (of the tuning folder `root`; `best`: the search's pick): no best mapper is
    claimed nor given a command, the line above best.dsl says that none of them ran there, and the Next line names
    the pick's run folder there. Returns that Next line's words after the folder."""
    assert "run it with" not in out and "Best mapper" not in out, out
    assert ("No mapper of this tune ran in the final comparison: every candidate and the start failed there (why: the "
            "failures under its table above; the Next line names the pick's run folder), so none is shown to work and "
            f"none is recommended. {root}/best.dsl holds the search's pick, iteration {best[5:]}, printed below to "
            "inspect") in out, out
    (step,) = out.split("Next: ")[1:]
    head = (f"read why the pick ({best}) failed (run: {FLAKED}; its run's output and AutoGuide's feedback on it: "
            f"{root}/final/{best}/round-1/stderr.txt, feedback.json); ")
    assert step.startswith(head), step
    assert (root / "final" / best / "round-1" / "stderr.txt").read_text().strip().endswith("flaked")  # it is there
    return step[len(head):]


def flaky_tune(foreign_exe, tmp_path, capsys, monkeypatch, *failing) -> tuple[str, Path]:
    """A 2-iteration tune of `final_flaky`'s wrapper of foreign (`failing`: its folder pattern), which exits 1: its
    output, whitespace made single spaces (prose whole, as piped), and its folder."""
    monkeypatch.delenv("COLUMNS", raising=False)  # pytest-xdist sets COLUMNS
    args = ["tune", "--app", f"{final_flaky(tmp_path, foreign_exe, *failing)} -n 400 -steps 2", "--cpus", "2",
            "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1", "--iters", "2",
            "--runs-dir", str(tmp_path / "runs")]
    assert main(args) == 1
    (root,) = (tmp_path / "runs" / "flaky").glob("tune-*")
    return " ".join(capsys.readouterr().out.split()), root


def test_a_pick_that_fails_its_final_comparison_is_said_intermittent(foreign_exe, tmp_path, capsys, monkeypatch):
    out, root = flaky_tune(foreign_exe, tmp_path, capsys, monkeypatch)
    best = json.loads((root / "summary.json").read_text())["best"]  # the search's pick, either iteration
    (verdict,) = out.split("Verdict: ")[1:]
    assert "not compared" not in verdict, verdict
    assert verdict.startswith(f"nothing was compared: the best ({best}) failed in the final comparison, and so did "
                              "the program's own mapper."), verdict
    assert "The program fails intermittently, whatever the mapper: iter-" in out, out
    assert (f"ran without failure in the search but failed in the final comparison (run: {FLAKED})") in out, out
    assert "; the program's own mapper failed in it too." in out, out  # foreign registers a mapper of its own
    assert "So best.dsl (the search's pick) is not shown to work" in out, out
    rest = ends_with_no_pick(out.split(" The program fails intermittently")[0], root, best)
    assert rest.startswith("the program's own mapper failed there too, so the program fails whatever the mapper: make "
                           "it run without --mapper first."), rest


def test_a_tune_none_of_whose_mappers_ran_in_its_final_comparison_keeps_the_reference(foreign_exe, tmp_path, capsys,
                                                                                     monkeypatch):
    """Every candidate and the start failed in the final comparison, where the program's own mapper ran: the end
    said "Best mapper: ... run it with: mapperopt run ..." of a mapper that never ran there, and had no Next line.
    It says that no mapper of the tune ran there, where to read why, and to keep the mapper that ran."""
    out, root = flaky_tune(foreign_exe, tmp_path, capsys, monkeypatch, "*/final/iter-*")
    summary = json.loads((root / "summary.json").read_text())
    assert summary["measured"]["default"]["estimate"] and not summary["measured"][summary["best"]]["estimate"]
    rest = ends_with_no_pick(out.split(" The program fails intermittently")[0], root, summary["best"])
    assert rest.startswith("keep the program's own mapper (run without --mapper), which ran in the final "
                           "comparison. To search further"), rest


def test_a_static_check_failure_in_the_final_comparison_is_not_called_intermittent(tmp_path, capsys, monkeypatch):
    """A candidate that ran in the search but failed the final comparison's static check (here its journal record's
    text was edited to map to a GPU this machine lacks) failed for a reason that does not vary from run to run: tune
    said "The program fails intermittently" and advised running best.dsl several times."""
    monkeypatch.delenv("COLUMNS", raising=False)  # prose whole, as piped (pytest-xdist sets COLUMNS)
    args = ["tune", "circuit", "--final-rounds", "1", "--repeats", "1", "--max-repeats", "1",
            "--runs-dir", str(tmp_path / "runs")]
    assert main([*args, "--iters", "2"]) == 0
    (root,) = (tmp_path / "runs" / "circuit").glob("tune-*")
    journal = root / "state.jsonl"
    lines = journal.read_text().splitlines()
    lines[1] = json.dumps({**json.loads(lines[1]), "dsl": "Task * GPU;\n"})
    journal.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main([*args, "--iters", "3"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "iter-2 failed: check: " in out, out
    assert "intermittent" not in out, out
    assert ("iter-2 ran without failure in the search but failed the final comparison's static check (check: "
            in out), out
    assert ("a static check gives the same answer every time: the mapper compared there is not the text the search "
            f"measured (see {root}/iter-002/mapper.dsl)") in out, out


def test_a_comparison_none_of_whose_best_programs_ran_at_the_end_keeps_the_reference(foreign_exe, tmp_path, capsys,
                                                                                      monkeypatch):
    """compare, as tune: every run's best program failed in the final measurement, where the reference ran. Its end
    said nothing after the files' line: it says that no mapper of the comparison ran, claims no best, names where
    to read why and says to keep the reference."""
    monkeypatch.delenv("COLUMNS", raising=False)  # prose whole, as piped (pytest-xdist sets COLUMNS)
    assert main(["compare", "--app", f"{final_flaky(tmp_path, foreign_exe, '*/final-*/p-*')} -n 400 -steps 2",
                 "--cpus", "2", "--optimizers", "random", "--runs", "1", "--iters", "2", "--repeats", "1",
                 "--max-repeats", "1", "--final-rounds", "1", "--runs-dir", str(tmp_path / "runs")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    (folder,) = (tmp_path / "runs" / "flaky").glob("compare-*")
    (row,) = json.loads((folder / "summary.json").read_text())["runs"]
    assert row["best_iter"] and row["final_failure"], row  # the premise: its best ran in tuning, failed at the end
    assert "Best mapper" not in out and "run it with" not in out, out
    end = out.split(f"plot: {folder}/compare.png ")[1]
    run_dir = folder / row["final_failure"]["run_dir"]
    assert end == ("No mapper this comparison found ran in the final measurement: every run's best program failed "
                   "there (why: the lines under the table and its failed evaluations column), so none is shown to work "
                   "and none is recommended. Next: read why random-1's best program failed in the final measurement "
                   f"(its run's output and AutoGuide's feedback on it: {run_dir}/stderr.txt, feedback.json); keep the "
                   "program's own mapper (run without --mapper): no mapper of this comparison is shown to work. To "
                   "search further, give the same command a larger --iters (it extends this comparison)."), end
    assert (run_dir / "stderr.txt").read_text().strip().endswith("flaked")
