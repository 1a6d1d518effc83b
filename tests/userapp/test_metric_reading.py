"""A metric pattern that stops inside the number it is to read: `Elapsed: ([0-9.]+)` on `Elapsed: 2.530000e-01 s`
(printf's %e, common in C codes) read the mantissa, 2.53 s for 0.253 s, with status ok. The run fails at stage run,
quoting the line and giving a pattern that captures the whole number. And a time metric longer than the execution
that printed it (a misread number, or not the time of this run) is noted after the table."""

from __future__ import annotations

import json

from test_app_errors import script

from mapperopt.cli import main


def flat(text: str) -> str:
    return " ".join(text.split())


def test_a_number_that_goes_on_after_the_group_fails_the_run_with_a_pattern_that_reads_it(tmp_path, capsys):
    exe = script(tmp_path, "prog", "echo 'set up'; echo 'Elapsed: 2.530000e-01 s'")
    once = ["--unit", "s", "--repeats", "1", "--max-repeats", "1"]
    assert main(["run", "--app", str(exe), "--metric", "Elapsed: ([0-9.]+)", *once,
                 "--out", str(tmp_path / "run")]) == 1
    reason = json.loads((tmp_path / "run" / "result.json").read_text())["reason"]
    assert ("the metric /Elapsed: ([0-9.]+)/ read '2.530000' from the line 'Elapsed: 2.530000e-01 s', but the number "
            "goes on after it ('e-01')") in reason, reason
    fixed = "Elapsed: ([0-9.]+(?:[eE][+-]?[0-9]+)?)"
    assert f"/{fixed}/" in reason, reason
    capsys.readouterr()
    assert main(["run", "--app", str(exe), "--metric", fixed, *once, "--out", str(tmp_path / "fixed")]) == 0
    assert json.loads((tmp_path / "fixed" / "result.json").read_text())["attempts"][0]["result"]["metric"] == 0.253
    # More digits after the group: the same.
    exe = script(tmp_path, "digits", "echo 'took 253 ms'")
    assert main(["run", "--app", str(exe), "--metric", r"took (\d)", "--unit", "ms", "--repeats", "1",
                 "--max-repeats", "1", "--out", str(tmp_path / "run-digits")]) == 1
    reason = json.loads((tmp_path / "run-digits" / "result.json").read_text())["reason"]
    assert "read '2' from the line 'took 253 ms', but the number goes on after it ('53')" in reason, reason


def test_a_time_metric_longer_than_the_execution_is_noted(tmp_path, capsys):
    exe = script(tmp_path, "prog", "echo 'elapsed: 5 s'")  # a few milliseconds of wall time
    assert main(["run", "--app", str(exe), "--metric", "elapsed: ([0-9.]+)", "--unit", "s", "--repeats", "1",
                 "--max-repeats", "1", "--out", str(tmp_path / "run"), "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    (note,) = [n for n in notes if n["kind"] == "metric_over_wall"]
    assert note["text"].startswith("the metric, 5 s, is longer than the whole execution that printed it ("), note
    assert "/elapsed: ([0-9.]+)/" in note["text"], note
    capsys.readouterr()
    assert main(["run", "--app", str(exe), "--metric", "elapsed: ([0-9.]+)", "--unit", "s", "--repeats", "1",
                 "--max-repeats", "1", "--out", str(tmp_path / "run2")]) == 0
    assert "Metric longer than the execution: the metric, 5 s," in flat(capsys.readouterr().out)
    short = script(tmp_path, "short", "sleep 0.2; echo 'elapsed: 150 ms'")
    assert main(["run", "--app", str(short), "--metric", "elapsed: ([0-9.]+)", "--unit", "ms", "--repeats", "1",
                 "--max-repeats", "1", "--out", str(tmp_path / "run3"), "--json"]) == 0
    assert not [n for n in json.loads(capsys.readouterr().out)["notes"] if n["kind"] == "metric_over_wall"]


def test_a_metric_and_a_check_on_lines_that_a_carriage_return_ends_are_read(tmp_path):
    """Progress output rewritten in place: the metric's line and the check's line each end with a carriage return,
    the next step printed over them (`elapsed: 12.5 ms\\rstep 3/3`). Each is read as a terminal shows it, the
    patterns' `^` and `$` at its ends, as the program's own check reads such lines."""
    exe = script(tmp_path, "prog", r"printf 'step 1/3\relapsed: 12.5 ms\rstep 3/3\n'; printf 'CHECK OK\rdone\n' >&2")
    assert main(["run", "--app", str(exe), "--metric", "^elapsed: ([0-9.]+) ms$", "--unit", "ms",
                 "--verify-pattern", "^CHECK OK$", "--repeats", "1", "--max-repeats", "1",
                 "--out", str(tmp_path / "run")]) == 0
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    (attempt,) = result["attempts"]
    assert (attempt["result"]["metric"], attempt["result"]["verify_from"]) == (12.5, "stderr"), result
