"""What mapperopt says about a user's program's metric, run with tests/app/timed.cc (it prints `elapsed: <ms> ms`):
a printed time that `run` without --metric could read, a unit that the pattern contradicts, the metric figure in a
tune's feedback, a failed metric in tune's progress line, and program flags given unquoted after --app."""

from __future__ import annotations

import json
import re

from userapp_support import quick_tune_args

from mapperopt.cli import main

TIME = "elapsed: ([0-9.]+) ms"
ONCE = ["--repeats", "1", "--max-repeats", "1"]


def flat(text: str) -> str:
    return " ".join(text.split())


def test_run_without_a_metric_suggests_one_for_the_time_the_program_prints(timed_exe, tmp_path, capsys):
    """The quick path tuned the wall time, Legion's start-up included, while the program printed the time of its
    timed loop: `run` suggested a --verify-pattern from the output, never a --metric."""
    assert main(["run", "--app", f"{timed_exe} -reps 3", *ONCE, "--out", str(tmp_path / "run")]) == 0
    out = flat(capsys.readouterr().out)
    assert "Metric not read: " in out, out
    assert "the program prints a time of its own ('elapsed: <number> ms', stdout" in out, out
    assert f"to tune that time, give --metric '{TIME}' --unit ms" in out, out
    assert main(["run", "--app", f"{timed_exe} -reps 3", *ONCE, "--out", str(tmp_path / "json"), "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    (note,) = [n for n in notes if n["kind"] == "unread_time"]
    assert f"--metric '{TIME}' --unit ms" in note["text"], note
    # given a metric: nothing of the kind
    assert main(["run", "--app", f"{timed_exe} -reps 3", "--metric", TIME, "--unit", "ms", *ONCE,
                 "--out", str(tmp_path / "metric"), "--json"]) == 0
    assert not [n for n in json.loads(capsys.readouterr().out)["notes"] if n["kind"] == "unread_time"]


def test_the_suggested_metric_is_the_whole_printed_label(timed_exe, tmp_path, capsys):
    """For `loop time: 113.156 ms` the note offered `--metric 'time: ([0-9.]+) ms'`, which would match any other
    "time:" line the program prints too, and showed 'time: <number> ms'. The offer is built from the whole label as
    printed (from its first letter after the last digit before it: a rank or step number varies), its regular
    expression characters escaped, and it reads the figure it names."""
    script = tmp_path / "labelled.sh"
    script.write_text(f'#!/bin/sh\n"{timed_exe}" "$@" || exit $?\necho "[rank 0] step (avg) time: 12.5 ms"\n')
    script.chmod(0o755)
    assert main(["run", "--app", f"{script} -reps 1", *ONCE, "--out", str(tmp_path / "run"), "--json"]) == 0
    (note,) = [n for n in json.loads(capsys.readouterr().out)["notes"] if n["kind"] == "unread_time"]
    text = flat(note["text"])
    assert "the program prints a time of its own ('step (avg) time: <number> ms', stdout" in text, text
    label = r"step \(avg\) time: ([0-9.]+) ms"
    assert f"to tune that time, give --metric '{label}' --unit ms" in text, text
    # the offered pattern, as given: the figure of that line
    assert main(["run", "--app", f"{script} -reps 1", "--metric", label, "--unit", "ms", *ONCE,
                 "--out", str(tmp_path / "metric"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "ok" and result["throughput"] == 1 / 12.5, result
    assert not [n for n in result["notes"] if n["kind"] == "unread_time"], result


def test_the_suggested_metric_line_of_an_application_file_reads_as_given(timed_exe, tmp_path, capsys):
    """A label with an apostrophe (`solver's loop time: 12.5 ms`) in the application file's offered `metric:` line:
    YAML's single quotes take it doubled, or the file no longer reads."""
    script = tmp_path / "labelled.sh"
    script.write_text(f'#!/bin/sh\n"{timed_exe}" "$@" || exit $?\necho "solver\'s loop time: 12.5 ms"\n')
    script.chmod(0o755)
    app_file = tmp_path / "mapperopt.yaml"
    base = f"executable: {script}\nargs: [-reps, '1']\nsizes: {{ci: {{cpus: 1}}}}\n"
    app_file.write_text(base)
    assert main(["run", "--app", str(app_file), *ONCE, "--out", str(tmp_path / "run"), "--json"]) == 0
    (note,) = [n for n in json.loads(capsys.readouterr().out)["notes"] if n["kind"] == "unread_time"]
    offered = re.search(r"`(metric: .*)` in ", note["text"])
    assert offered and "solver''s loop time: " in offered[1], note
    app_file.write_text(base + offered[1] + "\n")
    assert main(["run", "--app", str(app_file), *ONCE, "--out", str(tmp_path / "metric"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "ok" and result["throughput"] == 1 / 12.5, result


def test_a_unit_the_pattern_contradicts_is_warned_about(timed_exe, tmp_path, capsys):
    """`--metric 'ELAPSED TIME = ([0-9.]+) us' --unit ms` read 329 s for a 0.5 s execution, and a pattern ending in
    ` ms` without --unit gave a metric "(no unit)": both silently. Warned (the run goes on), from the command line
    and from the application file alike."""
    command = f"{timed_exe} -reps 3"
    assert main(["run", "--app", command, "--metric", TIME, *ONCE, "--out", str(tmp_path / "none")]) == 0
    err = flat(capsys.readouterr().err)
    assert (f"warning: the metric pattern /{TIME}/ reads a number followed by 'ms', but no unit is given: did you "
            "mean --unit ms?") in err, err
    assert main(["run", "--app", command, "--metric", TIME, "--unit", "s", *ONCE,
                 "--out", str(tmp_path / "s")]) == 0
    err = flat(capsys.readouterr().err)
    assert (f"warning: the metric pattern /{TIME}/ reads a number followed by 'ms', but its unit is s: did you mean "
            "--unit ms?") in err, err
    assert main(["run", "--app", command, "--metric", TIME, "--unit", "milliseconds", *ONCE,
                 "--out", str(tmp_path / "ms")]) == 0
    assert "warning" not in capsys.readouterr().err
    app_file = tmp_path / "mapperopt.yaml"
    app_file.write_text(f"executable: {timed_exe}\nargs: [-reps, '3']\nsizes: {{ci: {{cpus: 1}}}}\n"
                        f"metric:\n  regex: '{TIME}'\n  unit: us\n")
    assert main(["run", "--app", str(app_file), *ONCE, "--out", str(tmp_path / "file")]) == 0
    err = flat(capsys.readouterr().err)
    assert "but its unit is us: did you mean `unit: ms` in " in err and str(app_file) in err, err


def test_tunes_progress_and_feedback_give_the_metric(timed_exe, tmp_path, capsys, monkeypatch, offline_optimizer):
    """A metric that does not occur was shown as "failed: Execution Error: <the program's first output line>", its
    normal output labelled an error; and a tune with --metric gave "Performance Metric: Wall time of the process
    ...", not the metric it tunes."""
    monkeypatch.delenv("COLUMNS", raising=False)  # each progress line whole
    missing = "ELAPSED TIME = ([0-9.]+) ms"
    args = quick_tune_args(f"{timed_exe} -reps 3", tmp_path / "runs", iters=1)
    main([*args, "--metric", missing, "--unit", "ms"])
    out = flat(capsys.readouterr().out)
    line = next(line for line in out.split("iter ")[1:] if line.startswith("1/1"))
    assert f"(failed: the metric /{missing}/ does not occur in the standard output or standard error" in line, out
    (root,) = (tmp_path / "runs" / "timed").glob("tune-*")
    feedback = (root / "iter-001" / "feedback.txt").read_text()
    assert feedback.startswith(f"Execution: Execution Error: the metric /{missing}/ does not occur"), feedback
    # a failed check likewise
    main([*quick_tune_args(f"{timed_exe} -reps 3", tmp_path / "verify", iters=1), "--verify-pattern", "PASSED"])
    out = flat(capsys.readouterr().out)
    line = next(line for line in out.split("iter ")[1:] if line.startswith("1/1"))
    assert "(failed: the output does not match the verify pattern /PASSED/" in line, out
    (root,) = (tmp_path / "verify" / "timed").glob("tune-*")
    feedback = (root / "iter-001" / "feedback.txt").read_text()
    assert feedback.startswith("Execution: Execution Error: the output does not match the verify pattern /PASSED/"), \
        feedback
    assert main([*quick_tune_args(f"{timed_exe} -reps 3", tmp_path / "ok", iters=1), "--metric", TIME,
                 "--unit", "ms"]) == 0
    capsys.readouterr()
    (root,) = (tmp_path / "ok" / "timed").glob("tune-*")
    feedback = (root / "iter-001" / "feedback.txt").read_text()
    metric = json.loads((root / "iter-001" / "result.json").read_text())["attempts"][0]["result"]["metric"]
    assert feedback.startswith(f"Execution: Performance Metric: /{TIME}/ {metric:.4g} ms; wall time of the process "
                               ), feedback


def test_program_flags_given_unquoted_after_app_are_told_to_be_quoted(timed_exe, capsys):
    assert main(["run", "--app", str(timed_exe), "-reps", "3"]) == 2
    err = flat(capsys.readouterr().err)
    assert f"quote the program's command line: --app '{timed_exe} -reps 3'" in err, err
    assert "or put its flags after `--`" in err, err


def test_a_metric_not_found_offers_the_time_the_program_prints(timed_exe, tmp_path, capsys):
    """The docs' example `--metric 'elapsed: ([0-9.]+) ms'` on a program printing `Elapsed time: 1.749 seconds`
    failed with "does not occur" and the output's last lines, while `run` without --metric offers the pattern that
    reads that line: the failure offers it too, as an option or as the application file's `metric:` line, and the
    offer reads the figure."""
    script = tmp_path / "seconds.sh"
    script.write_text(f'#!/bin/sh\n"{timed_exe}" "$@" > /dev/null || exit $?\necho "Elapsed time: 1.749 seconds"\n'
                      'echo "SUCCESS!"\n')
    script.chmod(0o755)
    assert main(["run", "--app", f"{script} -reps 1", "--metric", TIME, "--unit", "ms", *ONCE,
                 "--out", str(tmp_path / "run"), "--json"]) == 1
    reason = flat(json.loads(capsys.readouterr().out)["reason"])
    offered = r"Elapsed time: ([0-9.]+) seconds"
    assert reason.startswith(f"the metric /{TIME}/ does not occur in the standard output or standard error; the "
                             "program prints a time of its own ('Elapsed time: <number> seconds'): to read it, give "
                             f"--metric '{offered}' --unit s"), reason
    assert main(["run", "--app", f"{script} -reps 1", "--metric", offered, "--unit", "s", *ONCE,
                 "--out", str(tmp_path / "offered"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "ok" and result["throughput"] == 1 / 1.749, result
    # the application file's wrong pattern: its `metric:` line
    app_file = tmp_path / "mapperopt.yaml"
    app_file.write_text(f"executable: {script}\nargs: [-reps, '1']\nsizes: {{ci: {{cpus: 1}}}}\n"
                        f"metric: {{regex: '{TIME}', unit: ms}}\n")
    assert main(["run", "--app", str(app_file), *ONCE, "--out", str(tmp_path / "file"), "--json"]) == 1
    reason = flat(json.loads(capsys.readouterr().out)["reason"])
    assert f"to read it, give `metric: {{regex: '{offered}', unit: s}}` in {app_file}" in reason, reason


def test_a_short_measurement_in_a_doubted_unit_is_not_advised_as_fact(timed_exe, tmp_path, capsys):
    """With `unit: ms` for a program printing seconds, the unit warning fired, then the Short measurement note told
    the user to make a 2 s execution 250 times longer, from the unit warned of. Where the pattern's unit makes the
    execution long enough, the note says the unit is what to correct; where it is short in either unit, it says so."""
    script = tmp_path / "seconds.sh"
    app_file = tmp_path / "mapperopt.yaml"
    app_file.write_text(f"executable: {script}\nargs: [-reps, '1']\nsizes: {{ci: {{cpus: 1}}}}\n"
                        "metric: {regex: 'Elapsed time: ([0-9.]+) seconds', unit: ms}\n")
    for seconds, folder in (("2.0", "long"), ("0.2", "short")):
        script.write_text(f'#!/bin/sh\n"{timed_exe}" "$@" > /dev/null || exit $?\necho "Elapsed time: {seconds} '
                          'seconds"\n')
        script.chmod(0o755)
        assert main(["run", "--app", str(app_file), *ONCE, "--out", str(tmp_path / folder)]) == 0
        captured = capsys.readouterr()
        out = flat(captured.out)
        assert "but its unit is ms: did you mean `unit: s` in " in flat(captured.err), captured.err
        if seconds == "2.0":
            assert ("Short measurement only if the unit is right: 0.002 s measured per execution by the program's "
                    "time metric in ms, its unit as given; read in s, as the pattern's 'seconds' says (the warning "
                    "before the run), each execution measured 2 s, not less than the protocol's minimum of 0.5 s: "
                    "correct the unit first") in out, out
            assert "give each execution more work" not in out, out
        else:
            assert ("Short measurement: 0.0002 s measured per execution by the program's time metric" in out
                    and "give each execution more work" in out), out
            assert ("in either unit: read in s, as the pattern's 'seconds' says (the warning before the run), each "
                    "execution measured 0.2 s, less than that minimum too.") in out, out
