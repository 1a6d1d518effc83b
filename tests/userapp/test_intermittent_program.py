"""A program that fails intermittently: the mappers that ran without failure in the search fail in tune's final
comparison. tune says that the program fails intermittently, that best.dsl is not shown to work, and exits non-zero;
its Verdict reads as a sentence."""

from __future__ import annotations

import json
from pathlib import Path

from mapperopt.cli import main

FLAKED = "exited with status 7: flaked"


def final_flaky(tmp_path: Path, exe: Path) -> Path:
    """Runs every execution but those of the final comparison (its run folders are under `final/`), which fail
    after the program ran: what a program that fails at random does when the draw turns against it there."""
    wrapper = tmp_path / "flaky"
    wrapper.write_text(f'#!/bin/sh\ncase "$PWD" in */final/*) {exe} "$@"; echo flaked >&2; exit 7;; esac\n'
                       f'exec {exe} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def test_a_pick_that_fails_its_final_comparison_is_said_intermittent(foreign_exe, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)  # prose whole, as piped (pytest-xdist sets COLUMNS)
    args = ["tune", "--app", f"{final_flaky(tmp_path, foreign_exe)} -n 400 -steps 2", "--cpus", "2",
            "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1", "--iters", "2",
            "--runs-dir", str(tmp_path / "runs")]
    assert main(args) == 1
    out = " ".join(capsys.readouterr().out.split())
    (root,) = (tmp_path / "runs" / "flaky").glob("tune-*")
    best = json.loads((root / "summary.json").read_text())["best"]  # the search's pick, either iteration
    (verdict,) = out.split("Verdict: ")[1:]
    assert "not compared" not in verdict, verdict
    assert verdict.startswith(f"nothing was compared: the best ({best}) failed in the final comparison, and so did "
                              "the program's own mapper."), verdict
    assert "The program fails intermittently, whatever the mapper: iter-" in out, out
    assert (f"ran without failure in the search but failed in the final comparison (run: {FLAKED})") in out, out
    assert "; the program's own mapper failed in it too." in out, out  # foreign registers a mapper of its own
    assert "So best.dsl (the search's pick) is not shown to work" in out, out


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
