"""A user's program that fails on its own (tests/app/timed.cc: TIMED_ASSERT makes its `work` task fail an assertion
of the program's source; -reps N keeps it looping past a --timeout): AutoGuide says the assertion is the program's,
and its first step is the command that runs without --mapper, carrying the options that shaped the run (--cpus, the
memory sizes, the arguments after `--`); a timed-out run whose standard output is empty is not said to show where it
stopped. Real runs through `mapperopt run --app` with real compiled mappers."""

from __future__ import annotations

import json
import shlex

import pytest

from userapp_support import APP_DIR

from mapperopt.cli import main

SOURCE = APP_DIR / "timed.cc"  # as the assertion quotes it: the program was built from this path


def _run(tmp_path, exe, name: str, dsl: str | None, *options: str) -> dict:
    """feedback.json of `mapperopt run --app 'EXE -reps 1' --cpus 2 --csize 700 [--mapper NAME.dsl] --once
    OPTIONS -- -scale 1` (the last: an argument of the program's own, after `--`)."""
    mapper = []
    if dsl is not None:
        (tmp_path / f"{name}.dsl").write_text(dsl)
        mapper = ["--mapper", str(tmp_path / f"{name}.dsl")]
    out = tmp_path / name
    main(["run", "--app", f"{exe} -reps 1", "--cpus", "2", "--csize", "700", *mapper, "--once", "--out", str(out),
          *options, "--", "-scale", "1"])
    return json.loads((out / "feedback.json").read_text())


@pytest.fixture
def failing(timed_exe, tmp_path, monkeypatch):
    """The timed program, discovered (cached) while it still runs, then failing its own assertion."""
    monkeypatch.chdir(tmp_path)
    assert _run(tmp_path, timed_exe, "ok", "Task * CPU;\n")["status"] == "ok"
    monkeypatch.setenv("TIMED_ASSERT", "1")
    return timed_exe


def test_an_assertion_in_the_programs_source_comes_with_the_run_without_the_mapper_first(failing, tmp_path):
    """Under a mapper whose Layout statement differs from Legion's default, the program's own assertion
    (timed.cc:24, in work_task) is said to be the program's, and the first step is the same command without
    --mapper, with --cpus, --csize and the arguments after `--` (the layout suspect comes after it)."""
    without = shlex.join(["mapperopt", "run", "--app", f"{failing} -reps 1", "--cpus", "2", "--csize", "700",
                          "--", "-scale", "1"])
    fb = _run(tmp_path, failing, "aos", "Task * CPU;\nLayout * * * AOS C_order;\n")
    assert (fb["rule"], fb["category"], fb["edits"]) == ("assertion-failed", "crash.assertion", []), fb
    text, suggestion = fb["explanation"], fb["suggestion"]
    assert text.startswith(f"An assertion of the program's own failed: {SOURCE}:24, in work_task, is in the "
                           "program's source"), text
    assert "A suspect is the mapper's `Layout * * * AOS C_order;`" in text, text
    assert suggestion.startswith(f"First run the same command without --mapper (Legion's default mapper): "
                                 f"`{without}`. If the assertion fails there too, the program fails on its own"), \
        suggestion
    assert suggestion.index(without) < suggestion.index("`Layout * * * SOA F_order;` in place of"), suggestion

    # A mapper that gives every instance what Legion's default mapper gives: it says so, and blames no statement.
    plain = _run(tmp_path, failing, "plain", "Task * CPU;\nRegion * * CPU SYSMEM;\n")["suggestion"]
    assert plain.startswith(f"First run the same command without --mapper (Legion's default mapper): `{without}`"), \
        plain
    assert ("This mapper's Layout and Region statements give every instance the layout and memory Legion's default "
            "mapper gives (SOA F_order in SYSMEM)") in plain, plain
    assert "one at a time" not in plain and "usual cause" not in plain, plain


def test_an_assertion_in_the_programs_source_without_a_mapper_is_the_programs_own(failing, tmp_path):
    fb = _run(tmp_path, failing, "default", None)
    assert (fb["rule"], fb["category"]) == ("assertion-failed", "crash.assertion"), fb
    assert fb["explanation"].startswith(f"An assertion of the program's own failed: {SOURCE}:24, in work_task"), fb
    assert fb["suggestion"].startswith("No DSL mapper ran (Legion's default mapper), so the program fails on its "
                                       f"own: look at its code at {SOURCE}:24"), fb["suggestion"]


def test_a_finished_runs_suggested_command_carries_the_runs_options(timed_exe, tmp_path, monkeypatch):
    """`run --app ... --cpus 2 --csize 700 --mapper m.dsl -- ARGS` suggested a profile without --cpus and --csize."""
    monkeypatch.chdir(tmp_path)
    fb = _run(tmp_path, timed_exe, "m", "Task * CPU;\n")
    assert fb["status"] == "ok", fb
    command = shlex.join(["mapperopt", "run", "--app", f"{timed_exe} -reps 1", "--cpus", "2", "--csize", "700",
                          "--mapper", str(tmp_path / "m.dsl"), "--profile", "--", "-scale", "1"])
    assert f"`{command}`" in fb["suggestion"], fb["suggestion"]


def test_a_timed_out_run_with_an_empty_standard_output_says_it_was_lost(timed_exe, tmp_path, monkeypatch):
    """A program killed at the time limit loses the standard output it had not flushed: the advice said that its
    output shows where it stopped, and an empty stdout.txt then suggested it stopped before printing anything."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "hung"
    assert main(["run", "--app", f"{timed_exe} -reps 100000000", "--timeout", "2", "--once", "--out", str(out)]) == 1
    fb = json.loads((out / "feedback.json").read_text())
    assert fb["stage"] == "timeout" and (out / "stdout.txt").read_text() == "", fb
    suggestion = fb["suggestion"]
    assert "shows where it stopped" not in suggestion, suggestion
    assert ("stdout.txt is empty: a program killed at the time limit loses the standard output it had not flushed "
            "yet") in suggestion, suggestion
    assert "stdbuf -oL" in suggestion and "fflush(stdout)" in suggestion, suggestion


def test_a_discovery_stopped_at_its_timeout_with_an_empty_standard_output_says_it_was_lost(timed_exe, tmp_path,
                                                                                             monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.dsl").write_text("Task * CPU;\n")
    assert main(["check", "m.dsl", "--app", f"{timed_exe} -reps 200000000", "--timeout", "2"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "your program did not finish within 2 s" in err, err
    assert ("stdout.txt is empty: a program killed at the time limit loses the standard output it had not flushed "
            "yet") in err, err
    assert "stdbuf -oL" in err, err
