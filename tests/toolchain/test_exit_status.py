"""Exit statuses of the command line: 2 for a command line that is wrong in itself (click's convention for usage
errors), 1 for an error of the input (a file, a failed run), through the real entry point."""

from pathlib import Path

import pytest

from mapperopt.cli import main

CONFIGS = Path(__file__).parents[2] / "configs"
MAPPER = str(CONFIGS / "circuit.dsl")

# Each refused before anything is built, run or written; several exited 1, as an error of the input does.
USAGE_ERRORS = {
    "run-no-bench": ["run"],
    "tune-no-bench": ["tune"],
    "compare-no-bench": ["compare"],
    "run-unknown-bench": ["run", "circiut"],
    "build-unknown-bench": ["build", "circiut"],
    "run-unknown-size": ["run", "circuit", "--size", "huge"],
    "tune-unknown-size": ["tune", "circuit", "--size", "huge"],
    "once-with-repeats": ["run", "circuit", "--once", "--repeats", "3"],
    "repeats-above-max": ["run", "circuit", "--repeats", "5", "--max-repeats", "3"],
    "timeout-below-min-time": ["run", "circuit", "--timeout", "1", "--min-time", "5"],
    "app-option-without-app": ["run", "circuit", "--metric", "t=(.*)"],
    "min-time-with-app": ["run", "--app", "true", "--min-time", "1"],
    "unknown-flag-after-dashes": ["run", "circuit", "--", "-gdimm", "3"],
    "option-after-dashes": ["run", "circuit", "--", "--repeats", "3"],
    "count-flag-not-a-number": ["run", "circuit", "--", "-ll:cpu", "x"],
    "no-system-memory-flag": ["run", "circuit", "--", "-ll:csize", "0"],
    "option-and-flag-disagree": ["run", "circuit", "--cpus", "2", "--", "-ll:cpu", "3"],
    "unknown-optimizer": ["compare", "circuit", "--optimizers", "nosuch"],
    "optimizer-twice": ["compare", "circuit", "--optimizers", "random,random"],
    "remeasure-not-numbers": ["compare", "circuit", "--remeasure", "x"],
    "remeasure-report-only": ["compare", "circuit", "--remeasure", "1", "--report-only"],
    "check-size-without-bench": ["check", MAPPER, "--size", "ci"],
    "check-flags-without-bench": ["check", MAPPER, "--", "-p", "3"],
    "check-rediscover-without-app": ["check", MAPPER, "--bench", "circuit", "--rediscover"],
    "check-bad-machine": ["check", MAPPER, "--machine", "4x"],
    "explain-no-bench": ["explain", MAPPER],
    "explain-unknown-bench": ["explain", MAPPER, "--bench", "circiut"],
    "explain-bad-domain": ["explain", MAPPER, "--bench", "circuit", "--machine", "1x4", "--domain", "8y8"],
    "profile-default-mapper": ["run", "circuit", "--profile", "--once"],
    "trace-default-mapper": ["run", "circuit", "--trace", "--once"],
    "profile-default-mapper-app": ["run", "--app", "true", "--profile", "--once"],
    "machine-other-flag": ["machine", "--", "-steps", "4"],
    "machine-flag-not-a-number": ["machine", "--", "-ll:cpu", "x"],
    "machine-option-and-flag-disagree": ["machine", "--cpus", "1", "--", "-ll:cpu", "2"],
    # click's own: an unknown option, a bad value, a missing argument
    "unknown-option": ["check", MAPPER, "--nosuch"],
    "bad-value": ["run", "circuit", "--repeats", "0"],
    "missing-argument": ["fmt"],
}


@pytest.mark.parametrize("args", USAGE_ERRORS.values(), ids=USAGE_ERRORS.keys())
def test_a_usage_error_exits_2(args, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2, capsys.readouterr().err
    out, err = capsys.readouterr()
    assert "error: " in err, err
    assert list(tmp_path.iterdir()) == []  # refused before anything was made


def test_an_error_of_the_input_exits_1(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    broken = tmp_path / "broken.dsl"
    broken.write_text("Task * CPU\n")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    for args in (["check", str(broken)], ["fmt", str(broken)], ["compile", "missing.dsl"],
                 ["run", "circuit", "--mapper", "missing.dsl"], ["run", "circuit", "--out", "full"],
                 ["explain", MAPPER, "--bench", "circuit", "--machine", "1x4", "--png", "nosuch/x.png"]):
        assert main(args) == 1, (args, capsys.readouterr().err)
        assert "error" in capsys.readouterr().err


def test_the_exit_statuses_are_documented():
    running = " ".join((Path(__file__).parents[2] / "docs" / "running.md").read_text().split())
    assert "exits with status 1 on an error of its input (a file, a run, a folder) and with status 2 on a usage error" \
        in running


@pytest.mark.parametrize("args, said", [
    (["tune", "circuit", "--iters", "3", "--iters", "5"], "--iters given more than once (--iters 3, --iters 5)"),
    (["run", "circuit", "--size", "ci", "--once", "--size=small"],
     "--size given more than once (--size ci, --size small)"),
    (["compile", MAPPER, "-o", "a.so", "-ob.so"], "-o given more than once (-o a.so, -o b.so)"),
    (["explain", MAPPER, "--machine", "1x4", "--bench", "circuit", "--machine", "2x4", "--machine", "1x4"],
     "--machine given more than once (--machine 1x4, --machine 2x4, --machine 1x4)"),
    (["run", "circuit", "--once", "--no-profile", "--profile"],
     "--profile given more than once (--no-profile, --profile)"),
], ids=["tune", "run", "compile", "explain", "flag-both-ways"])
def test_an_option_given_twice_with_two_values_is_a_usage_error(args, said, tmp_path, monkeypatch, capsys):
    """`--iters 3 --iters 5` took the last value silently: an option that takes one value, given again with another,
    is refused naming both, before anything runs."""
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"error: {said}: give it once" in err, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", [
    ["machine", "--json", "--cpus", "2", "--cpus", "3"],
    ["explain", "--json", MAPPER, "--bench", "circuit", "--domain", "4", "--domain", "5"],
    ["run", "circuit", "--json", "--cpus", "2", "--cpus", "3"],
], ids=["machine", "explain", "run"])
def test_an_option_given_twice_under_json_prints_the_json_error_object(args, tmp_path, monkeypatch, capsys):
    """With --json, the refusal of an option given twice printed nothing on stdout, where every other usage error
    prints the command's JSON error object: a script got JSON for one usage error and nothing for the next."""
    import json

    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    out, err = capsys.readouterr()
    record = json.loads(out)
    assert record["status"] == "error" and "given more than once" in record["reason"], record
    assert "given more than once" in err, err
    assert list(tmp_path.iterdir()) == []


def test_an_option_given_twice_with_one_value_a_flag_twice_and_flags_after_the_dashes_pass(capsys):
    assert main(["tune", "--iters", "3", "--iters", "5", "--help"]) == 0  # the help, as click gives it first
    assert "Usage: " in capsys.readouterr().out
    assert main(["explain", MAPPER, "--bench", "circuit", "--machine", "1x4", "--machine", "1x4", "--domain", "4",
                 "--json", "--json"]) == 0
    assert main(["check", MAPPER, "--bench", "circuit", "--machine", "1x4", "--", "-ll:csize", "64", "-ll:csize",
                 "128"]) == 0, capsys.readouterr().err
