"""tune's progress line ends an uncategorised failure with its run's reason: a program that fails the same way
whatever the mapping repeated the whole reason on every line. It is said in full once, then named by the iteration
that said it; the iterations' own records keep it in full."""

from __future__ import annotations

import json
from pathlib import Path

from mapperopt.cli import main

REASON = "exited with status 7: scratch space full"


def failing_wrapper(tmp_path: Path, exe: Path) -> Path:
    """A program that runs (its discovery, which records its tasks, passes) but fails every mapped run with a
    message no feedback rule knows."""
    wrapper = tmp_path / "wrapped"
    wrapper.write_text(f'#!/bin/sh\nif [ -z "$MAPPEROPT_RECORD" ]; then echo "scratch space full" >&2; exit 7; fi\n'
                       f'exec {exe} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def iteration_lines(out: str) -> dict[int, str]:
    lines = [" ".join(line.split()) for line in out.splitlines() if line.lstrip().startswith("iter ")]
    return {int(line.split()[1].split("/")[0]): line for line in lines}


def test_a_repeated_failure_reason_is_said_in_full_once(foreign_exe, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)  # each progress line whole, as piped (pytest-xdist sets COLUMNS)
    args = ["tune", "--app", f"{failing_wrapper(tmp_path, foreign_exe)} -n 400 -steps 2", "--cpus", "2",
            "--baseline", "none", "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1",
            "--runs-dir", str(tmp_path / "runs")]
    assert main([*args, "--iters", "3"]) == 1
    lines = iteration_lines(capsys.readouterr().out)
    assert sorted(lines) == [1, 2, 3], lines
    assert lines[1].endswith(f"(failed: {REASON}; see iter-001/feedback.txt)"), lines
    for i in (2, 3):
        assert lines[i].endswith("(failed: same reason as iteration 1)") and REASON not in lines[i], lines
    # continued: the journal's lines and the new one say it the same way
    assert main([*args, "--iters", "4"]) == 1
    lines = iteration_lines(capsys.readouterr().out)
    assert sorted(lines) == [1, 2, 3, 4], lines
    assert lines[1].endswith(f"(failed: {REASON}; see iter-001/feedback.txt) (from the journal)"), lines
    assert lines[4].endswith("(failed: same reason as iteration 1)"), lines
    # nothing lost: every iteration's record keeps its own reason in full
    (root,) = (tmp_path / "runs" / "wrapped").glob("tune-*")
    for i in (1, 2, 3, 4):
        assert json.loads((root / f"iter-{i:03d}" / "result.json").read_text())["reason"] == REASON, i
