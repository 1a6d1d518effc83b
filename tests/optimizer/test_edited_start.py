"""The same `tune --start FILE` command after FILE was edited is another run (the request records the file's
contents): it starts a new folder, and says which unfinished folder the old version of the file started and the
`--resume` that continues it. With FILE removed, the error names that `--resume` too. One small real tuning run of
Stencil (ci size)."""

from __future__ import annotations

import shlex

from mapperopt.cli import main

QUICK = ["--size", "ci", "--repeats", "1", "--max-repeats", "1", "--min-time", "0.05", "--final-rounds", "1",
         "--baseline", "none"]


def flat(text: str) -> str:
    return " ".join(text.split())


def test_an_edited_start_file_names_the_unfinished_run_it_started(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    start = tmp_path / "s.dsl"
    start.write_text("Task * CPU;\n")
    tune = ["tune", "stencil", "--start", "s.dsl", *QUICK, "--runs-dir", "runs"]
    assert main([*tune, "--iters", "1"]) == 0
    (first,) = (tmp_path / "runs" / "stencil").glob("tune-*")
    # Two iterations asked: the first folder (finished at 1) would be extended, but its start file changed.
    start.write_text("# edited\nTask * CPU;\n")
    capsys.readouterr()
    assert main([*tune, "--iters", "2"]) == 0
    out = flat(capsys.readouterr().out)
    second = next(p for p in (tmp_path / "runs" / "stencil").glob("tune-*") if p != first)
    resume = shlex.join(["mapperopt", "tune", "--resume", str(first.relative_to(tmp_path)), "--iters", "2"])
    assert (f"Note: {first.relative_to(tmp_path)} holds a finished tuning of stencil (1 iteration; a larger "
            f"--iters extends it) that started from another version of s.dsl (the file was edited since); it is "
            f"left alone, and this command tunes in "
            f"{second.relative_to(tmp_path)}. To continue that one (from its own copy of the start program): "
            f"{resume}") in out, out
    # Removed: the error offers the same --resume (the second folder finished its 2 iterations).
    start.unlink()
    assert main([*tune, "--iters", "2"]) == 1
    err = flat(capsys.readouterr().err)
    assert "error: start program s.dsl not found" in err, err
    assert (f"continue the unfinished run that s.dsl started, {first.relative_to(tmp_path)} (it keeps its own copy "
            f"of the start program): {resume}") in err, err
    # What it says works: the first folder goes on from its own copy of the start program.
    assert main(shlex.split(resume)[1:]) == 0, capsys.readouterr().err
    assert (first / "iter-002" / "result.json").is_file()
