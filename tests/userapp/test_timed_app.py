"""A user's program (tests/app/timed.cc) that prints a metric of nan or inf, or starts a helper process that
detaches into a session of its own and keeps the program's standard output and error open."""

from __future__ import annotations

import json
import os
import signal
import tempfile
import time

import pytest

from mapperopt.cli import main


def _holding(token: str) -> list[int]:
    """The processes whose command line has the word `token` (the helper runs the program's own command line)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if token.encode() in f.read().split(b"\0"):
                    found.append(int(pid))
        except OSError:
            continue
    return found


@pytest.mark.parametrize(("metric", "options", "value"), [
    ("elapsed: (\\S+) ms", ["--unit", "ms"], "nan"),
    ("bandwidth: (\\S+) MB/s", ["--unit", "MB/s", "--higher-is-better"], "inf")])
def test_a_metric_of_nan_or_inf_fails_the_run(metric, options, value, timed_exe, tmp_path, capsys):
    """It was a successful measurement (throughput 0 or nan, which every comparison of a tuner gets wrong)."""
    out_dir = tmp_path / "run"
    assert main(["run", "--app", f"{timed_exe} -reps 0", "--metric", metric, *options, "--repeats", "1",
                 "--out", str(out_dir)]) == 1
    result = json.loads((out_dir / "result.json").read_text())
    assert result["stage"] == "run" and len(result["attempts"]) == 1, result
    assert f"the metric /{metric}/ matched " in result["reason"] and value in result["reason"], result["reason"]
    assert "not a finite number" in result["reason"], result["reason"]


def test_a_metric_whose_throughput_overflows_fails_the_run(timed_exe, tmp_path, capsys):
    """`elapsed: 1e-320 ms` (positive, finite) gave a throughput 1/metric of inf: "ok", and a tuner's summary
    held Infinity and NaN."""
    out_dir = tmp_path / "run"
    assert main(["run", "--app", f"{timed_exe} -scale 1e-320", "--metric", "elapsed: (\\S+) ms", "--unit", "ms",
                 "--repeats", "1", "--out", str(out_dir)]) == 1
    result = json.loads((out_dir / "result.json").read_text())
    assert result["stage"] == "run" and len(result["attempts"]) == 1, result
    assert "gives a throughput 1/metric of inf: not a finite number" in result["reason"], result["reason"]
    assert "e-3" in result["reason"], result["reason"]  # the value read


def test_a_helper_that_keeps_the_output_open_is_ended_and_named(timed_exe, tmp_path, capsys, monkeypatch):
    """Discovery waited for the end of the output forever (past --timeout, saying nothing, leaving its folder), and
    the helpers of the discovery and of the measured run lived on."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # discovery's folder: under the test's own
    (tmp_path / "m.dsl").write_text("Task * CPU;\n")
    token = str(1000 + os.getpid() % 100000)  # the helper's lifetime in seconds, unique to this test
    start = time.monotonic()
    try:
        code = main(["run", "--app", f"{timed_exe} -helper {token}", "--mapper", "m.dsl", "--metric",
                     "elapsed: (\\S+) ms", "--unit", "ms", "--repeats", "1", "--timeout", "60", "--out", "run"])
        err = " ".join(capsys.readouterr().err.split())
        assert code == 0, err
        assert time.monotonic() - start < 100
        note = "the program ended but a process it started kept its output open"
        assert err.count(note) == 2, err  # discovery's and the measured execution's
        assert err.count("note: timed: ") == 2 and "mapperopt killed pid " in err, err
        assert not _holding(token)
        assert not list(tmp_path.glob("mapperopt-discover-*"))
    finally:
        for pid in _holding(token):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("command", ["tune", "compare"])
def test_the_discovery_of_tune_and_compare_is_stopped_at_their_timeout(command, timed_exe, tmp_path, monkeypatch,
                                                                        capsys):
    """It ran under the default 300 s, whatever --timeout said."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    start = time.monotonic()
    assert main([command, "--app", f"{timed_exe} -reps 100000000", "--timeout", "3", "--iters", "1"]) == 1
    assert time.monotonic() - start < 100
    assert "discovering timed: your program did not finish within 3 s" in " ".join(capsys.readouterr().err.split())


def test_a_hung_programs_discovery_stopped_at_its_timeout_says_no_word_of_other_processes(timed_exe, tmp_path,
                                                                                          monkeypatch, capsys):
    """A Legion program stuck in its tasks, which starts no process: stopped at the timeout, it is said to have
    taken too long and nothing else (its threads, still exiting after the SIGKILL, held its output a moment, and
    that was reported as "a process it started kept its output open; it was not found to be killed")."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    (tmp_path / "m.dsl").write_text("Task * CPU;\n")
    for _ in range(3):  # the threads' exit races the read of the output
        assert main(["check", "m.dsl", "--app", f"{timed_exe} -reps 100000000", "--timeout", "2"]) == 1
        err = " ".join(capsys.readouterr().err.split())
        assert "discovering timed: your program did not finish within 2 s" in err, err
        assert "kept its output open" not in err, err


def test_an_assertion_of_the_programs_own_is_not_blamed_on_layouts(timed_exe, tmp_path, capsys, monkeypatch):
    """A mapper without Region or Layout statements cannot have given a kernel an unexpected layout or memory: the
    advice after the program's own failed assertion tells the user to run without --mapper to tell the program from
    the mapper, and names no layouts and memories (it said "layouts and memories ... are the usual cause")."""
    mapper = tmp_path / "t0.dsl"
    mapper.write_text("Task * CPU;\n")
    command = f"{timed_exe} -reps 1"
    assert main(["check", str(mapper), "--app", command]) == 0  # discovered (cached) before the program fails
    monkeypatch.setenv("TIMED_ASSERT", "1")
    assert main(["run", "--app", command, "--mapper", str(mapper), "--once", "--out", str(tmp_path / "run")]) == 1
    capsys.readouterr()
    feedback = json.loads((tmp_path / "run" / "feedback.json").read_text())
    assert feedback["category"] == "crash.assertion", feedback
    assert "without --mapper" in feedback["suggestion"], feedback
    assert "usual cause" not in feedback["suggestion"] and "no Region or Layout statement" in feedback["suggestion"]
