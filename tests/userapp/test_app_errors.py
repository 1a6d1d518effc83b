"""Bad `--app` input on every command that takes it: each error names what is wrong and where, a failed discovery
is never cached, and words before `--` are refused where they would have become the program's flags."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import tempfile
import time
from pathlib import Path

import pytest
from userapp_support import running

from mapperopt import toolchain
from mapperopt.benchmarks import commands as run_commands
from mapperopt.benchmarks.userapp import app_from_command, discovery_command, discovery_path, load_app_file
from mapperopt.cli import main
from mapperopt.errors import MapperoptError

COMMANDS = ["check", "explain", "compile", "run", "tune", "compare"]


def argv(command: str, mapper, spec: str, *rest: str) -> list[str]:
    """`command` on the program `spec`: check, explain and compile also take the mapper file."""
    mapper_file = [str(mapper)] if command in ("check", "explain", "compile") else []
    return [command, *mapper_file, "--app", spec, *rest]


def script(tmp_path, name: str, body: str):
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def mapper(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # run, tune and compare would write their folders here
    path = tmp_path / "m.dsl"
    path.write_text("Task * CPU;\n")
    return path


@pytest.mark.parametrize("command", COMMANDS)
def test_a_program_that_cannot_start_is_named(command, tmp_path, mapper, capsys):
    (tmp_path / "folder").mkdir()
    (tmp_path / "plain").write_text("not a program\n")
    (tmp_path / "heat.cc").write_text("int main() {}\n")
    (tmp_path / "folder.yaml").write_text("executable: ./folder\nsizes: {ci: {}}\n")
    cases = {
        "./missing -n 1": f"--app: the executable {tmp_path / 'missing'} does not exist",
        "no-such-program-here -n 1": "--app: no program no-such-program-here on PATH or in this folder",
        "./folder": "--app: ./folder is a folder without mapperopt.yaml",
        "./plain -n 1": f"--app: {tmp_path / 'plain'} is not executable",
        "./heat.cc -n 1": f"hint: it is C++ source: build the program first, e.g. g++ {tmp_path / 'heat.cc'} "
                          f"$(mapperopt toolchain --cflags) $(mapperopt toolchain --libs) -o {tmp_path / 'heat'}",
        "./plain -n 'unclosed": "--app: cannot split \"./plain -n 'unclosed\" into words: No closing quotation",
        "folder.yaml": f"folder.yaml: 'executable': {tmp_path / 'folder'} is a folder, not a program",
        " ": "Invalid value for '--app': needs an application file or a command line",
        # a shell's environment assignment before the program: said so (the hint was --app './OMP_NUM_THREADS=1 ...')
        "OMP_NUM_THREADS=1 ./plain -n 1": "--app: OMP_NUM_THREADS=1 sets an environment variable; --app takes the "
                                          "program's command line only hint: give it in the application file "
                                          "(mapperopt.yaml): `env: {OMP_NUM_THREADS: \"1\"}` with `executable: "
                                          "./plain`; or export it before mapperopt (`export OMP_NUM_THREADS=1`), "
                                          "whose environment the program gets, and give --app './plain -n 1'",
    }
    for spec, message in cases.items():
        assert main(argv(command, mapper, spec)) != 0, spec
        out, err = capsys.readouterr()
        assert message in " ".join(err.split()) and "Traceback" not in err, (spec, out, err)
    assert not (tmp_path / "runs").exists()


def test_the_build_command_for_a_source_file_names_this_mapperopt(tmp_path, mapper, capsys, monkeypatch):
    """Started as `.venv/bin/mapperopt` (a virtual environment not activated), the hint's build command said
    `$(mapperopt toolchain --cflags)`, which a shell without mapperopt on its PATH cannot run: it names that one."""
    import sys

    exe = Path(sys.executable).with_name("mapperopt")
    monkeypatch.setattr(sys, "argv", [str(exe)])
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    (tmp_path / "heat.cc").write_text("int main() {}\n")
    assert main(["check", str(mapper), "--app", "./heat.cc -n 1"]) != 0
    err = " ".join(capsys.readouterr().err.split())
    me = shlex.quote(str(exe))
    assert (f"hint: it is C++ source: build the program first, e.g. g++ {tmp_path / 'heat.cc'} $({me} toolchain "
            f"--cflags) $({me} toolchain --libs) -o {tmp_path / 'heat'}") in err, err


@pytest.mark.parametrize("command", COMMANDS)
def test_a_command_line_that_cannot_be_read_is_a_usage_error(command, tmp_path, mapper, capsys):
    """An unclosed quote, or a shell's NAME=value before the program, in --app is a wrong command line: exit status 2,
    as `--app ''` and click's own usage errors (it was 1, the status of a run that failed)."""
    (tmp_path / "plain").write_text("#!/bin/sh\n")
    (tmp_path / "plain").chmod(0o755)
    for spec in ("'./plain", "OMP_NUM_THREADS=1 ./plain", ""):
        assert main(argv(command, mapper, spec)) == 2, (spec, capsys.readouterr())
    assert "Traceback" not in capsys.readouterr().err


DISCOVERY_FAILURES = {  # program (a shell script), the flags after `--`, the error
    "quiet": ("exit 0", (), "discovering quiet: the program exited 0 but ran no Legion task under the recording "
                            "mapper: is {exe} a Legion program"),  # as /bin/true: no Legion, no task
    "picky": ('for a in "$@"; do [ "$a" = -bogus ] && echo "picky: unknown option $a" >&2 && exit 2; done; exit 0',
              ("-bogus",), "discovering picky: your program exited with code 2 in its first run, which records its "
                           "tasks for mapperopt: picky: unknown option -bogus"),
    # killed while the mapper was writing: its record ends in a line cut short
    "cut": ('echo "cut: writing" >&2; printf \'{"task": "a", "regi\' > "$MAPPEROPT_RECORD"; kill -SEGV $$', (),
            "discovering cut: your program was killed by signal 11 (SIGSEGV) in its first run"),
    # exits 0, but its record is garbled: cut short, or lines that are not the recording mapper's
    "garbled": ('echo "garbled: writing" >&2; printf \'{"task": "a", "regi\' > "$MAPPEROPT_RECORD"; exit 0', (),
                "discovering garbled: your program exited 0, but the record of its tasks that the recording mapper "
                "wrote, {folder}/record.jsonl, is malformed: line 1 is not JSON (Unterminated string"),
    "alien": ('echo "alien: writing" >&2; echo 7 > "$MAPPEROPT_RECORD"; echo \'{"note": 1}\' >> "$MAPPEROPT_RECORD"',
              (), "{folder}/record.jsonl, is malformed: line 1 is not a JSON object"),
    "fieldless": ('echo "fieldless: writing" >&2; echo \'{"note": 1}\' > "$MAPPEROPT_RECORD"', (),
                  "{folder}/record.jsonl, is malformed: a line has no field 'task_id'"),
    # a record discovery reads, beside a placement trace (which counts each task's launches) that is not the mapper's
    "untraced": ('echo "untraced: writing" >&2; echo \'{"task": "a", "task_id": 1, "launch": "single", "variants": '
                 '["CPU"], "inner": false, "leaf": true, "parent": null, "domain": null, "regions": []}\' > '
                 '"$MAPPEROPT_RECORD"; echo \'{"task": "a"}\' > "$MAPPEROPT_TRACE"', (),
                 "discovering untraced: your program exited 0, but the trace of the tasks it mapped that the recording "
                 "mapper wrote, {folder}/trace.jsonl, is malformed: a line has no field 'point'"),
    # a wrapper script whose program crashed: the shell's exit code 128 + the signal
    "wrapped": ('echo "wrapped: starting" >&2; sh -c \'kill -SEGV $$\'', (),
                "discovering wrapped: your program exited with code 139 (128 + 11: a program it started was killed "
                "by SIGSEGV) in its first run"),
}


@pytest.mark.parametrize("name", DISCOVERY_FAILURES)
def test_a_failed_discovery_says_why_and_is_not_cached(name, tmp_path, mapper, capsys, monkeypatch):
    """Not a Legion program (exits 0, runs no task), flags the program rejects, a crash that cuts the record short,
    a clean exit that leaves the record malformed (it was a JSON error's traceback), a wrapper script whose program
    crashed: each is an error that says what happened to the program (not as if
    mapperopt's recorder had failed), where its output is and what to try; none leaves a description in the
    discovery cache, nor a half-made run or comparison folder."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the kept output folders: under the test's own
    body, flags, message = DISCOVERY_FAILURES[name]
    exe = script(tmp_path, name, body)
    app = app_from_command(str(exe))
    cache = discovery_path(app, discovery_command(app, "ci", extra_args=flags))
    rests = {"check": ("--machine", "1x0x1"), "run": ("--mapper", str(mapper), "--once"),
             "compare": ("--optimizers", "random", "--iters", "1", "--runs", "1")}
    for command, rest in rests.items():
        assert main(argv(command, mapper, str(exe), *rest, *(("--", *flags) if flags else ()))) == 1
        err = capsys.readouterr().err
        kept = re.search(r"its output is in (\S+)/stdout\.txt and stderr\.txt", err)
        folder = kept[1] if kept else None
        assert message.format(exe=exe, folder=folder) in " ".join(err.split()) and "Traceback" not in err, err
        assert not cache.exists()
        assert not (tmp_path / "runs").exists(), (command, sorted((tmp_path / "runs").rglob("*")))
        if name != "quiet":
            assert kept and (Path(kept[1]) / "stderr.txt").read_text().startswith(f"{name}: "), err
            assert "run it by hand where it ran: cd " in err, err
            assert shlex.join([str(exe), *discovery_command(app, "ci", extra_args=flags)[1:]]) in err, err
    # A run folder the user names is theirs: kept, and nothing written in it.
    (tmp_path / "mine").mkdir()
    assert main(argv("run", mapper, str(exe), *rests["run"], "--out", "mine", *(("--", *flags) if flags else ()))) == 1
    assert list((tmp_path / "mine").iterdir()) == []


@pytest.mark.parametrize("command", ["run", "tune", "compare"])
def test_words_before_dashdash_are_refused_not_passed_to_the_program(command, tmp_path, mapper, capsys):
    """`run --app FILE circuit` once ran the program with `circuit` as its first flag; check, explain and compile
    already refused words before `--`."""
    app = script(tmp_path, "app", "exit 0")
    for words, bad, takes in [(["--app", str(app), "circuit"], "circuit", "no BENCH with --app"),
                              (["--app", str(app), "circuit", "--", "-n", "1"], "circuit", "no BENCH with --app"),
                              (["circuit", "stencil"], "stencil", "one benchmark"),
                              (["circuit", "8"], "8", "one benchmark")]:
        assert main([command, *words]) == 2
        err = capsys.readouterr().err
        assert f"error: unexpected argument '{bad}': {command} takes {takes}; flags for the program go after `--`" \
            in err, (words, err)
    # A mapper file given without its option: the option named (it only said the command takes no BENCH).
    option = "--mapper" if command == "run" else "--start"
    for words in (["--app", str(app), "my.dsl"], ["circuit", "my.dsl"]):
        assert main([command, *words]) == 2
        err = " ".join(capsys.readouterr().err.split())
        assert f"error: unexpected argument 'my.dsl': {command} takes" in err, (words, err)
        assert f"did you mean `{option} my.dsl`?" in err, (words, err)
    assert main([command, "my.dsl"]) == 2  # taken for a benchmark: the hint names the options, not --app
    err = " ".join(capsys.readouterr().err.split())
    assert "unknown benchmark 'my.dsl'" in err and "hint: my.dsl is a mapper file: give it with `--mapper my.dsl` " \
        "(run) or `--start my.dsl` (tune, compare)" in err, err
    # An option the command does not know is not passed on either; click's suggestion stays.
    for words, bad in [(["circuit", "-p", "8"], "-p"), (["--repeat", "3", "circuit"], "--repeat")]:
        assert main([command, *words]) == 2
        err = capsys.readouterr().err
        assert f"error: No such option '{bad}': flags for the program go after `--`." in err, (words, err)
    assert "Did you mean" in err and "'--repeats'" in err
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("command", ["run", "tune", "compare"])
def test_min_time_with_app_is_refused_not_ignored(command, tmp_path, mapper, capsys):
    """`--min-time` with --app was accepted and did nothing (a user's program is never calibrated): refused, with
    what to do instead, before anything runs; a program given by its application file likewise."""
    app = script(tmp_path, "app", "exit 0")
    (tmp_path / "mapperopt.yaml").write_text("executable: ./app\nsizes: {ci: {}}\n")
    for spec in (str(app), "mapperopt.yaml"):
        assert main([command, "--app", spec, "--min-time", "2"]) == 2
        err = capsys.readouterr().err
        assert "--min-time 2 does not apply to --app: mapperopt never calibrates your program" in err, err
        assert ("leave --min-time out; for longer executions give larger size arguments (in --app's quoted command "
                "line, or the application file's `sizes`)") in " ".join(err.split()), err
    assert not (tmp_path / "runs").exists()


BAD_APP_FILE = """
app: "jacobi bad/name"
executable: ./jacobi_missing
args: -steps 10
sizes:
  ci: {args: ["-n", 384], cpus: two, timeout_s: -5, legion_flag: ["-lg:safe_mapper"]}
  small: {util: -1, csize: 0}
metric: {regex: 'took [0-9.]+ ms', unit: ms, better: faster}
verify: {pattern: 'checksum ([0-9.]+', reference: nothere.txt}
keep_app_mapper: yes please
extra_key: 3
"""


@pytest.mark.parametrize("command", ["run", "check", "tune"])
def test_every_problem_of_an_application_file_in_one_run(command, tmp_path, mapper, capsys):
    """A new user's file showed its problems in three rounds (a bad value of a size, a regex without a group and a
    missing reference file only once the others were fixed; `timeout_s: -5` as "needs cpus >= 1, util >= 0, gpus >= 0
    and timeout_s > 0"): all in one run, each naming its key."""
    (tmp_path / "mapperopt.yaml").write_text(BAD_APP_FILE)
    assert main(argv(command, mapper, "mapperopt.yaml")) == 1
    err = capsys.readouterr().err
    where = "mapperopt.yaml"
    assert f"error: {where} has 13 problems:\n" in err, err
    for part in (f"{where}: unknown key 'extra_key'",
                 f"{where}: 'executable': the executable {tmp_path / 'jacobi_missing'} does not exist",
                 f"{where}: 'app' must be a plain name (letters, digits, _ . -), got 'jacobi bad/name'",
                 f"{where}: size 'ci': unknown key 'legion_flag'",
                 f"{where}: size 'ci': 'cpus' must be a number, got 'two'",
                 f"{where}: size 'ci': 'timeout_s' must be a finite number >= 0.1, got -5",
                 f"{where}: size 'small': 'util' must be >= 0, got -1",
                 f"{where}: size 'small': 'csize' must be >= 1, got 0",
                 f"{where}: 'keep_app_mapper' must be true or false, got 'yes please'",
                 f"{where}: metric 'better' must be `higher` or `lower`, got 'faster'",
                 f"{where}: the metric regex 'took [0-9.]+ ms' has no group",
                 f"{where}: the verify pattern 'checksum ([0-9.]+' is invalid",
                 f"{where}: the reference output {tmp_path / 'nothere.txt'} does not exist"):
        assert "\n  - " + part in err, (part, err)
    assert "\n      hint: did you mean 'legion_flags' for 'legion_flag'?" in err, err


def test_every_problem_of_the_app_options_in_one_run(tmp_path, mapper, capsys):
    """The options of `--app` stopped at their first problem: all are reported at once, and with the application
    file's."""
    assert main(["run", "--app", "./missing -n 1", "--metric", "took [0-9.]+ ms", "--verify-pattern", "(unclosed",
                 "--reference", "nothere.txt", "--min-time", "1"]) == 1
    err = capsys.readouterr().err
    assert "error: the command line has 5 problems:\n" in err, err
    for part in ("--min-time 1 does not apply to --app", "--metric: the metric regex 'took [0-9.]+ ms' has no group",
                 "--verify-pattern: the verify pattern '(unclosed' is invalid",
                 f"--reference: the reference output {tmp_path / 'nothere.txt'} does not exist",
                 f"--app: the executable {tmp_path / 'missing'} does not exist"):
        assert "\n  - " + part in err, (part, err)
    (tmp_path / "mapperopt.yaml").write_text(BAD_APP_FILE)
    assert main(["run", "--app", "mapperopt.yaml", "--verify-pattern", "(unclosed"]) == 1
    err = capsys.readouterr().err
    assert "error: the command line has 14 problems:\n" in err, err
    assert "\n  - --verify-pattern: the verify pattern" in err and "\n  - mapperopt.yaml: size 'ci': 'timeout_s'" in err


def test_run_still_passes_the_flags_after_dashdash(tmp_path, mapper, monkeypatch):
    """With --app the first word after `--` lands in BENCH (click fills it first): it is still the program's."""
    seen = []

    def stop(bench, mapper, **kw):
        seen.append((str(bench), kw["extra_args"]))
        raise MapperoptError("stopped before running")

    monkeypatch.setattr(run_commands, "run_benchmark", stop)
    app = script(tmp_path, "app", "exit 0")
    assert main(["run", "--app", str(app), "--once", "--", "-n", "1"]) == 1
    assert main(["run", "circuit", "--once", "--", "-p", "8"]) == 1
    assert main(["run", "--once", "--", "circuit"]) == 1
    assert seen == [("app", ("-n", "1")), ("circuit", ("-p", "8")), ("circuit", ())]


def test_a_missing_mapper_file_offers_no_expert_for_a_program_without_one(tmp_path, mapper, capsys):
    """A user's program has no expert mapper: `--mapper exprt` gets no 'did you mean --mapper expert?', and the hint
    lists what --mapper takes for it (a benchmark's hint names expert: tests/benchmarks/test_harness.py)."""
    app = script(tmp_path, "app", "exit 0")
    assert main(["run", "--app", str(app), "--mapper", "exprt"]) == 1
    err = capsys.readouterr().err
    assert "error: mapper file exprt not found\n  hint: --mapper takes default (Legion's default mapper) or a DSL " \
           "file" in err, err
    assert "expert" not in err.replace("exprt", ""), err


def test_compare_whose_reference_fails_says_what_failed_and_how_to_run_it(tmp_path, mapper, foreign_exe, capsys):
    """A program that runs under discovery but fails when measured: compare names the program's own last line (not
    'no error message') and the `run` command to try, with --app and the flags after `--` as given (it said
    `mapperopt run flaky --mapper default`, an unknown benchmark)."""
    flaky = script(tmp_path, "flaky", f'[ -n "$MAPPEROPT_RECORD" ] && exec {foreign_exe} "$@"\n'
                                      'echo "flaky: refusing to run" >&2; exit 3')
    assert main(["compare", "--app", str(flaky), "--optimizers", "random", "--iters", "1", "--runs", "1", "--cpus", "2",
                 "--", "-n", "100"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "the default mapper of flaky could not be measured: failed at stage run: exited with status 3: flaky: " \
           "refusing to run" in err, err
    assert f"check `mapperopt run --app {flaky} --mapper default -- -n 100`" in err, err


@pytest.mark.parametrize(("body", "stage", "rule", "text"), [
    # what a program's own failed assert prints, then the abort it raises: the program fails on its own
    ("echo \"heat: heat.cc:37: double step(int): Assertion \\`n > 0' failed.\" >&2; kill -ABRT $$", "run",
     "assertion-failed", "No DSL mapper ran (Legion's default mapper, or the program's own where it registers one), "
                         "so the program fails on its own: look at its code at heat.cc:37 (in step)"),
    # one in Legion's source, as a program's inlined accessor fails it
    ("echo \"heat: /opt/include/legion/legion.inl:99: T Legion::FieldAccessor<T>::read() const: Assertion \\`b' "
     "failed.\" >&2; kill -ABRT $$", "run", "assertion-failed", None),
    ("kill -SEGV $$", "run", "crash-signal", None),
], ids=["assertion", "legion-assertion", "signal"])
def test_a_failure_without_a_dsl_mapper_blames_no_mapper_change(body, stage, rule, text, tmp_path, capsys):
    from mapperopt.autoguide import load_catalog

    exe, out_dir = script(tmp_path, "prog", body), tmp_path / "run"
    assert main(["run", "--app", str(exe), "--timeout", "2", "--out", str(out_dir)]) == 1
    feedback = json.loads((out_dir / "feedback.json").read_text())
    assert (feedback["stage"], feedback["rule"]) == (stage, rule)
    if text is None:
        assert feedback["suggestion"] == " ".join(load_catalog().no_mapper["suggest"].split())
    else:
        assert feedback["suggestion"].startswith(text), feedback["suggestion"]
    assert f"suggestion: {feedback['suggestion'][:30]}" in " ".join(capsys.readouterr().out.split())


def test_a_timeout_without_a_dsl_mapper_is_the_programs_own(tmp_path, capsys):
    """A program that does not finish within --timeout without a DSL mapper: AutoGuide says the program
    itself took too long and suggests more time or a smaller problem (it explained it as a slow mapping)."""
    exe, out_dir = script(tmp_path, "prog", "sleep 30"), tmp_path / "run"
    assert main(["run", "--app", str(exe), "--timeout", "2", "--out", str(out_dir)]) == 1
    feedback = json.loads((out_dir / "feedback.json").read_text())
    assert (feedback["stage"], feedback["rule"]) == ("timeout", "timeout")
    # not discovered (no DSL mapper ran): whether the program registers a mapper of its own is unknown
    assert feedback["explanation"].startswith("The program did not finish within 2 s under Legion's default mapper, "
                                              "or the program's own where it registers one (no DSL mapper ran)")
    assert "No mapper change is the cause" in feedback["explanation"]
    assert feedback["suggestion"].startswith("Give it more time (--timeout, in seconds) or a smaller problem")
    assert "mapping is much slower" not in feedback["explanation"] and "IndexTaskMap" not in feedback["suggestion"]
    assert "under Legion's default mapper, or the program's own" in " ".join(capsys.readouterr().out.split())


def test_a_metric_and_verify_pattern_printed_on_standard_error_are_read_there(tmp_path, capsys, monkeypatch):
    """A Realm logger (`log_app.print()`) prints on standard error under mapperopt's `-logfile stderr`: a metric and
    a verify pattern that the standard output lacks are read from standard error, and the table says so (the run
    failed: "does not occur in the standard output")."""
    monkeypatch.setenv("COLUMNS", "250")  # rows unwrapped
    exe = script(tmp_path, "prog", "echo 'setup done'; echo '{3}{heat}: ELAPSED TIME =   12.5 ms' 1>&2\n"
                                   "echo '{3}{heat}: checksum 6 OK' 1>&2")
    out_dir = tmp_path / "run"
    assert main(["run", "--app", str(exe), "--metric", "ELAPSED TIME = +([0-9.]+) ms", "--unit", "ms",
                 "--verify-pattern", "checksum [0-9]+ OK", "--repeats", "1", "--max-repeats", "1",
                 "--out", str(out_dir)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "time │ 12.5 ms" in out, out
    assert "read from standard error" in out, out
    result = json.loads((out_dir / "result.json").read_text())
    assert result["attempts"][0]["result"]["metric"] == 12.5


def test_a_verify_pattern_found_only_on_standard_error_is_said_so(tmp_path, capsys, monkeypatch):
    """A verify pattern that only standard error matches passes, as the metric read there does: the table's verified
    row says where it was found (it said nothing, where the metric's row did)."""
    monkeypatch.setenv("COLUMNS", "250")  # rows unwrapped
    exe = script(tmp_path, "prog", "echo 'ELAPSED TIME = 12.5 ms'; echo '{3}{heat}: checksum 6 OK' 1>&2")
    assert main(["run", "--app", str(exe), "--metric", "ELAPSED TIME = +([0-9.]+) ms", "--unit", "ms",
                 "--verify-pattern", "checksum [0-9]+ OK", "--repeats", "1", "--max-repeats", "1",
                 "--out", str(tmp_path / "run")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "output matches /checksum [0-9]+ OK/; found on standard error only" in out, out
    assert "metric │ 12.5 (/ELAPSED TIME = +([0-9.]+) ms/ in ms, lower is better) │" in out, out  # on stdout


def test_legion_resource_flags_in_the_app_command_line_are_the_runs(tmp_path, capsys):
    """`--app './prog -ll:cpu 2 ...'` (as the program is run by hand): the run has 2 CPUs, as its title and settings
    say, not mapperopt's default of 1 appended after them (which Legion took, silently); --cpus that agrees is
    accepted (one that does not is refused, as a conflict). The flags reach the program once (they were given twice:
    the command line's, then mapperopt's)."""
    exe = script(tmp_path, "prog", "printf '%s ' \"$@\"")  # echo would take `-n` as its own
    assert main(["run", "--app", f"{exe} -ll:cpu 2 -ll:csize 64 -n 5", "--once", "--out", str(tmp_path / "a")]) == 0
    assert "size ci, 2 CPU, 0 GPU)" in " ".join(capsys.readouterr().out.split())  # as the terminal wraps it
    result = json.loads((tmp_path / "a" / "result.json").read_text())
    assert result["settings"]["cpus"] == 2
    words = (tmp_path / "a" / "stdout.txt").read_text().split()
    assert words[words.index("-ll:cpu", words.index("-n")) + 1] == "2", words  # mapperopt's own flag agrees
    assert words[words.index("-ll:csize", words.index("-n")) + 1] == "64", words
    assert words.count("-ll:cpu") == words.count("-ll:csize") == 1, words  # once, not the program's and the size's
    assert main(["run", "--app", f"{exe} -ll:cpu 2 -n 5", "--cpus", "2", "--once", "--out", str(tmp_path / "b")]) == 0
    assert json.loads((tmp_path / "b" / "result.json").read_text())["settings"]["cpus"] == 2
    with pytest.raises(MapperoptError, match="-ll:cpu needs a whole number"):
        app_from_command(f"{exe} -ll:cpu two")


@pytest.mark.parametrize("key", ["args", "legion_flags"])
def test_legion_resource_flags_in_an_application_files_args_are_refused(key, tmp_path):
    """In an application file the size's keys set them: `-ll:cpu` among its args was overridden silently, and among
    its legion_flags it won silently (the run had 2 CPUs, check, explain and AutoGuide modelled the size's 1)."""
    exe = script(tmp_path, "prog", "echo hi")
    (tmp_path / "mapperopt.yaml").write_text(f"executable: {exe}\nsizes:\n  ci: {{{key}: ['-ll:cpu', '2', "
                                             "'-ll:util', '2'], cpus: 1}\n")
    with pytest.raises(MapperoptError) as error:
        load_app_file(tmp_path / "mapperopt.yaml")
    said = str(error.value)
    for flag, size_key in (("-ll:cpu", "cpus"), ("-ll:util", "util")):
        assert f"size 'ci': '{key}' sets {flag}, which mapperopt sets from the size's '{size_key}' key" in said, said
        assert f"hint: give `{size_key}: N` in the size instead" in said, said


def test_a_metric_pattern_that_matches_nothing_is_named_with_the_output(tmp_path, capsys):
    """`--metric` whose pattern the program's output does not contain: AutoGuide names the pattern, what the output
    ended with and the option to correct (it gave the feedback for output it has no rule for, and after a DSL
    mapper advised undoing the mapper's last change)."""
    import dataclasses

    from mapperopt.autoguide import explain
    from mapperopt.records import RunResult

    exe, out_dir = script(tmp_path, "prog", "echo 'setup done'; echo 'elapsed: 12.5 ms'"), tmp_path / "run"
    assert main(["run", "--app", f"{exe} -n 4", "--metric", "time: ([0-9.]+)", "--unit", "ms",
                 "--out", str(out_dir)]) == 1
    feedback = json.loads((out_dir / "feedback.json").read_text())
    assert (feedback["stage"], feedback["category"], feedback["rule"]) == ("run", "metric", "metric-app-pattern")
    assert feedback["explanation"] == ("prog exited normally, but its figure of merit could not be read: the metric "
                                       "/time: ([0-9.]+)/ does not occur in the standard output or standard error; "
                                       "the program prints a time of its own ('elapsed: <number> ms'): to read it, "
                                       "give --metric 'elapsed: ([0-9.]+) ms' --unit ms. Its standard output ends "
                                       "with: 'setup done' / 'elapsed: 12.5 ms'.")
    assert feedback["suggestion"].startswith("The metric pattern (/time: ([0-9.]+)/ in ms, lower is better), not the "
                                             "mapper, is the cause: correct it in the --metric option")
    assert str(out_dir / "stdout.txt") in feedback["suggestion"]
    # After a DSL mapper too: the pattern, not the mapper.
    result = RunResult.from_json(json.loads((out_dir / "result.json").read_text()))
    mapped = explain(dataclasses.replace(result, dsl="Task * CPU;\n"))
    assert mapped.suggestion == feedback["suggestion"] and "Undo" not in mapped.suggestion


def legion_stand_in(tmp_path, name: str, body: str):
    """A stand-in that discovery finds running a Legion task (its top-level task in the recording mapper's record),
    as a Legion program would, then runs `body`: a program that runs none gets no advice to run a DSL mapper,
    which cannot run it either."""
    top = json.dumps({"task": "top", "task_id": 1, "launch": "single", "variants": ["CPU"], "inner": False,
                      "leaf": False, "parent": None, "domain": None, "must_epoch": False, "regions": []})
    return script(tmp_path, name, f'[ -n "$MAPPEROPT_RECORD" ] && echo {shlex.quote(top)} > "$MAPPEROPT_RECORD"\n'
                                  f"{body}")


def test_the_profiling_advice_prints_the_programs_own_command(tmp_path, capsys):
    """After Legion's default mapper, the advice to profile a DSL mapper prints the run's own --app command, its
    metric and the flags after `--` (it printed `--app 'PROGRAM ARGS'` with a literal ARGS)."""
    exe, out_dir = legion_stand_in(tmp_path, "prog", "echo 'elapsed: 12.5 ms'"), tmp_path / "run"
    assert main(["run", "--app", f"{exe} -n 4", "--metric", "elapsed: ([0-9.]+)", "--unit", "ms", "--repeats", "1",
                 "--max-repeats", "1", "--out", str(out_dir), "--", "-steps", "2"]) == 0
    suggestion = json.loads((out_dir / "feedback.json").read_text())["suggestion"]
    command = shlex.join(["mapperopt", "run", "--app", f"{exe} -n 4", "--metric", "elapsed: ([0-9.]+)", "--unit", "ms",
                          "--mapper", "start.dsl", "--profile", "--", "-steps", "2"])
    assert f"`{command}`" in suggestion and "ARGS" not in suggestion



def test_a_time_metric_is_shown_as_a_time_before_its_throughput(tmp_path, capsys):
    """A metric in ms, lower is better, is measured as a throughput in 1/ms: "0.08 1/ms" alone is hard to read, so
    the run's table gives the time first (it gave "0.08 1/ms (12.5 ms)")."""
    exe = script(tmp_path, "prog", "echo 'elapsed: 12.5 ms'")
    assert main(["run", "--app", str(exe), "--metric", "elapsed: ([0-9.]+)", "--unit", "ms", "--repeats", "1",
                 "--max-repeats", "1", "--out", str(tmp_path / "run")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "time │ 12.5 ms (throughput 0.08 1/ms)" in out, out
    assert json.loads((tmp_path / "run" / "result.json").read_text())["throughput"] == 0.08  # stored as it was


def test_the_time_beside_a_trimmed_mean_says_it_is_the_reciprocal_of_the_throughputs_one(tmp_path, capsys,
                                                                                           monkeypatch):
    """The statistics are those of the throughputs (1/time): the time the table prints beside their trimmed mean is
    1 / (trimmed mean of 1/t), not the trimmed mean of the times the program printed, and the row says so."""
    monkeypatch.setenv("COLUMNS", "250")  # rows unwrapped
    count = tmp_path / "count"
    exe = script(tmp_path, "prog", f"n=$(cat {count} 2>/dev/null || echo 0); echo $((n + 1)) > {count}\n"
                                   "case $n in 0) t=100;; 1) t=300;; 2) t=200;; 3) t=400;; *) t=150;; esac\n"
                                   "echo \"elapsed: $t ms\"")
    assert main(["run", "--app", str(exe), "--metric", "elapsed: ([0-9.]+)", "--unit", "ms", "--repeats", "5",
                 "--max-repeats", "5", "--out", str(tmp_path / "run")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert len(result["attempts"]) == 5
    shown = f"{1 / result['trimmed_mean']:.4g} ms"
    assert (f"trimmed mean │ {shown} (throughput {result['trimmed_mean']:.4g} 1/ms): the time is 1 / the trimmed "
            "mean of the throughputs (1/time), not the trimmed mean of the times") in out, out


def test_an_interval_whose_ends_print_alike_is_one_value(tmp_path, capsys, monkeypatch):
    """Executions that all measure the same: the interval row said "0.000564-0.000564 1/ms (1773-1773 ms)"; it says
    the value once. An interval that is one keeps both ends, the times first."""
    monkeypatch.setenv("COLUMNS", "200")  # rows unwrapped
    exe = script(tmp_path, "prog", "echo 'elapsed: 1773 ms'")
    assert main(["run", "--app", str(exe), "--metric", "elapsed: ([0-9.]+)", "--unit", "ms", "--repeats", "3",
                 "--max-repeats", "3", "--out", str(tmp_path / "run")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "median │ 1773 ms (throughput 0.000564 1/ms)" in out, out
    assert "90 % interval │ 1773 ms (throughput 0.000564 1/ms), bootstrap of the trimmed mean" in out, out
    assert "0.000564-0.000564" not in out and "1773-1773" not in out
    from mapperopt.benchmarks import protocol

    assert protocol.figure("1/ms", 0.00055, 0.00058) == "1724-1818 ms (throughput 0.00055-0.00058 1/ms)"
    assert protocol.figure("GFLOP/s", 12.01, 12.02) == "12.01-12.02 GFLOP/s"
    assert protocol.figure("GFLOP/s", 12.0001, 12.0002) == "12 GFLOP/s"

def test_a_metric_without_a_unit_reads_sanely(tmp_path, capsys, monkeypatch):
    """`--metric` without `--unit`: the table said "0.08 1/" and "/.../ in , lower is better", an empty unit."""
    monkeypatch.setenv("COLUMNS", "200")  # rows unwrapped
    exe = script(tmp_path, "prog", "echo 'elapsed: 12.5 ms'")
    assert main(["run", "--app", str(exe), "--metric", "elapsed: ([0-9.]+)", "--repeats", "3", "--max-repeats", "3",
                 "--out", str(tmp_path / "run")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "median │ 0.08 1/metric " in out, out
    assert "(median; /elapsed: ([0-9.]+)/ (no unit), lower is better)" in out, out
    assert "1/ " not in out and " in ," not in out, out
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert (result["unit"], result["settings"]["metric"]) == ("1/metric", "/elapsed: ([0-9.]+)/ (no unit), lower is "
                                                                          "better")
    assert main(["run", "--app", str(exe), "--metric", "elapsed: ([0-9.]+)", "--higher-is-better", "--once",
                 "--out", str(tmp_path / "higher")]) == 0
    assert "throughput │ 12.5 │" in " ".join(capsys.readouterr().out.split())


def test_a_metric_pattern_over_the_files_keeps_its_unit_and_names_its_option(tmp_path, capsys, monkeypatch):
    """`--app FILE --metric REGEX` without --unit: the file's unit was dropped (an empty unit); and when that pattern
    never matched, AutoGuide said to correct it in the file, which does not hold it."""
    monkeypatch.chdir(tmp_path)
    script(tmp_path, "prog", "echo 'elapsed: 12.5 ms'")
    (tmp_path / "mapperopt.yaml").write_text("executable: ./prog\nsizes: {ci: {}}\n"
                                             "metric: {regex: 'took ([0-9.]+)', unit: ms}\n")
    assert main(["run", "--app", "mapperopt.yaml", "--metric", "elapsed: ([0-9.]+)", "--once", "--out", "ms"]) == 0
    result = json.loads((tmp_path / "ms" / "result.json").read_text())
    assert (result["unit"], result["settings"]["metric"]) == ("1/ms", "/elapsed: ([0-9.]+)/ in ms, lower is better")
    assert main(["run", "--app", "mapperopt.yaml", "--metric", "time: ([0-9.]+)", "--once", "--out", "option"]) == 1
    suggestion = json.loads((tmp_path / "option" / "feedback.json").read_text())["suggestion"]
    assert "correct it in the --metric option" in suggestion, suggestion
    # The file's pattern, with only its unit changed on the command line: the file is where to correct it.
    assert main(["run", "--app", "mapperopt.yaml", "--unit", "s", "--once", "--out", "file"]) == 1
    result = json.loads((tmp_path / "file" / "result.json").read_text())
    assert "correct it in mapperopt.yaml" in json.loads((tmp_path / "file" / "feedback.json").read_text())["suggestion"]
    assert result["settings"]["app_options"] == "--app mapperopt.yaml --unit s"
    from mapperopt.benchmarks.userapp import app_from_identity, app_from_options, identity, spec_words

    app = app_from_identity(identity(app_from_options(None, (), "mapperopt.yaml", unit="s")[0]))  # `tune --resume`
    assert spec_words(app) == ["--app", str(tmp_path / "mapperopt.yaml"), "--unit", "s"]


def test_a_run_with_more_processors_than_cores_says_so_once(tmp_path, capsys, monkeypatch):
    """`-- -ll:cpu 4` (or `-ll:util 2`) on a machine that gives the run 2 cores: the notes said only that the
    measurement was noisy, not that the processors share cores."""
    monkeypatch.setenv("COLUMNS", "400")  # one line each
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    exe = script(tmp_path, "prog", "echo 'elapsed: 12.5 ms'")
    for flags, counts in ((["-ll:cpu", "4"], "4 CPU and 1 utility processor, 5 in all"),
                          (["-ll:util", "2"], "1 CPU and 2 utility processors, 3 in all")):
        assert main(["run", "--app", str(exe), "--once", "--out", str(tmp_path / flags[0][4:]), "--", *flags]) == 0
        out = capsys.readouterr().out
        assert out.count("More processors than cores: ") == 1, out
        assert f"More processors than cores: {counts}, on the 2 cores this machine gives the run" in out, out
        assert "ask for fewer (--cpus, or -ll:cpu and -ll:util after `--`)" in out, out
    # given in the --app command line: the advice names that place (it said "after `--`", where there was none)
    for i, (command, advice) in enumerate((
            # not "with --cpus": a count other than the command line's is refused
            ("-ll:cpu 4", "lower -ll:cpu in --app's quoted command line, which gives it (or override it with "
                          "-ll:cpu after `--`)"),
            ("-ll:cpu 2 -ll:util 2", "lower -ll:cpu and -ll:util in --app's quoted command line, which gives them "
                                     "(or override them with -ll:cpu and -ll:util after `--`)"),
            ("-ll:util 3", "lower -ll:util in --app's quoted command line, which gives it (or override it with "
                           "-ll:util after `--`)"))):
        assert main(["run", "--app", f"{exe} {command}", "--once", "--out", str(tmp_path / f"command{i}")]) == 0
        out = " ".join(capsys.readouterr().out.split())
        assert f"to measure, ask for fewer: {advice}." in out, out
    # overridden after `--`: that is where to change it
    assert main(["run", "--app", f"{exe} -ll:cpu 1", "--once", "--out", str(tmp_path / "over"), "--", "-ll:cpu",
                 "4"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "ask for fewer (--cpus, or -ll:cpu and -ll:util after `--`)" in out, out
    assert main(["run", "--app", str(exe), "--once", "--out", str(tmp_path / "fits")]) == 0  # 1 CPU and 1 utility
    assert "More processors than cores" not in capsys.readouterr().out


def test_the_profiling_advice_keeps_the_options_given_over_the_application_file(tmp_path, capsys, monkeypatch):
    """`--app FILE` with --metric and --verify-pattern over the file's: the command to run it again gave only
    `--app FILE`, which measures and verifies by the file's settings instead."""
    monkeypatch.chdir(tmp_path)
    legion_stand_in(tmp_path, "prog", "echo 'elapsed: 12.5 ms'; echo 'check OK'")
    (tmp_path / "mapperopt.yaml").write_text("executable: ./prog\nsizes: {ci: {}}\nmetric: {regex: 'took ([0-9.]+)'}\n"
                                             "verify: {pattern: 'PASSED'}\n")
    assert main(["run", "--app", "mapperopt.yaml", "--metric", "elapsed: ([0-9.]+)", "--unit", "ms",
                 "--verify-pattern", "OK", "--repeats", "1", "--max-repeats", "1", "--out", "run"]) == 0
    suggestion = json.loads((tmp_path / "run" / "feedback.json").read_text())["suggestion"]
    command = shlex.join(["mapperopt", "run", "--app", "mapperopt.yaml", "--metric", "elapsed: ([0-9.]+)", "--unit",
                          "ms", "--verify-pattern", "OK", "--mapper", "start.dsl", "--profile"])
    assert f"`{command}`" in suggestion, suggestion


@pytest.mark.parametrize(("options", "named"), [
    (["--verify-pattern", "PASSED"], "the --verify-pattern option"),
    (["--verify-cmd", "exit 1"], "the --verify-cmd option"),
    (["--reference", "expected.txt"], "the --reference option"),
    (["--verify-pattern", "result", "--verify-cmd", "exit 1"], "the --verify-cmd option"),  # the check that failed
])
@pytest.mark.parametrize("spec", ["command", "file"])
def test_a_failed_verification_names_the_option_given(options, named, spec, tmp_path, monkeypatch):
    """AutoGuide named "the --verify-pattern, --verify-cmd or --reference option" whichever was given (and the
    application file when an option set the check over the file's)."""
    monkeypatch.chdir(tmp_path)
    exe = script(tmp_path, "prog", "echo 'result 42'")
    (tmp_path / "expected.txt").write_text("result 41\n")
    (tmp_path / "mapperopt.yaml").write_text("executable: ./prog\nsizes: {ci: {}}\nverify: {pattern: 'result'}\n")
    app = str(exe) if spec == "command" else "mapperopt.yaml"
    assert main(["run", "--app", app, *options, "--repeats", "1", "--max-repeats", "1", "--out", "run"]) == 1
    feedback = json.loads((tmp_path / "run" / "feedback.json").read_text())
    assert feedback["stage"] == "verify", feedback
    assert f"fails the verification that {named} gives: " in feedback["explanation"], feedback["explanation"]
    assert f"correct the verification in {named} " in feedback["suggestion"], feedback["suggestion"]
    assert "--verify-pattern, --verify-cmd or --reference" not in feedback["explanation"] + feedback["suggestion"]


def test_a_failed_verification_of_the_application_file_names_the_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script(tmp_path, "prog", "echo 'result 42'")
    (tmp_path / "mapperopt.yaml").write_text("executable: ./prog\nsizes: {ci: {}}\nverify: {pattern: 'PASSED'}\n")
    assert main(["run", "--app", "mapperopt.yaml", "--repeats", "1", "--max-repeats", "1", "--out", "run"]) == 1
    feedback = json.loads((tmp_path / "run" / "feedback.json").read_text())
    assert "fails the verification that mapperopt.yaml gives: the output does not match the verify pattern " \
           "/PASSED/" in feedback["explanation"], feedback["explanation"]


def test_a_program_that_hangs_in_discovery_is_stopped_at_the_runs_timeout_with_all_it_started(tmp_path, mapper,
                                                                                                 capsys, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the kept output folder: under the test's own
    hang = ["sleep", str(100000 + os.getpid() % 100000)]  # what the program's wrapper script started
    exe = script(tmp_path, "prog", f"echo 'prog: reached step 3' >&2\n{shlex.join(hang)}")
    start = time.monotonic()
    try:
        assert main(["run", "--app", str(exe), "--mapper", str(mapper), "--timeout", "2"]) == 1
        assert time.monotonic() - start < 60  # the run's --timeout, not the default 300 s of a command line
        err = " ".join(capsys.readouterr().err.split())
        # What happened to the program, where its output is, what to try (it read as a bare timeout of mapperopt's).
        assert "discovering prog: your program did not finish within 2 s and was stopped in its first run" in err
        kept = re.search(r"its output is in (\S+)/stdout\.txt and stderr\.txt", err)
        assert kept and (Path(kept[1]) / "stderr.txt").read_text() == "prog: reached step 3\n", err
        assert "stderr.txt; it ends with: prog: reached step 3" in err
        assert "If it only needs longer, give a larger --timeout" in err and "run it by hand" in err
        assert not running(hang)
    finally:
        for pid in running(hang):
            os.kill(pid, signal.SIGKILL)


def test_a_discovery_failure_whose_stderr_has_only_start_up_lines_says_so(tmp_path, mapper, capsys, monkeypatch):
    """It said "it ends with: (nothing)" although stderr.txt had lines: only the known start-up ones, left out."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    exe = script(tmp_path, "prog", "echo 'cuInit(0) returned 100' >&2\nkill -FPE $$")
    assert main(["run", "--app", str(exe), "--mapper", str(mapper)]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "your program was killed by signal 8 (SIGFPE)" in err, err
    assert "(nothing)" not in err and "it ends with: no line beyond the usual start-up lines (stderr.txt keeps " \
                                       "them)" in err, err


def test_a_verify_command_that_hangs_is_stopped_with_all_it_started(tmp_path, foreign_exe, monkeypatch, capsys):
    from mapperopt.benchmarks import userapp

    monkeypatch.setattr(userapp, "VERIFY_TIMEOUT_S", 2)
    hang = ["sleep", str(200000 + os.getpid() % 100000)]
    out_dir = tmp_path / "run"
    try:
        assert main(["run", "--app", f"{foreign_exe} -n 1000 -steps 1", "--cpus", "2",
                     "--verify-cmd", f"{shlex.join(hang)}; true",
                     "--out", str(out_dir)]) == 1
        assert "did not finish within 2 s" in json.loads((out_dir / "result.json").read_text())["reason"]
        assert not running(hang)
    finally:
        for pid in running(hang):
            os.kill(pid, signal.SIGKILL)


def test_a_program_that_times_out_is_not_run_again(tmp_path, mapper):
    # docs/running.md: unlike a benchmark's, an execution of your own program that times out fails the run at once.
    from mapperopt.benchmarks import run_benchmark

    exe = script(tmp_path, "prog", f"echo started >> {tmp_path / 'starts'}\nexec sleep 60")
    result = run_benchmark(app_from_command(str(exe)), "default", timeout_s=1, out_dir=tmp_path / "r")
    assert result.stage == "timeout" and len(result.attempts) == 1
    assert (tmp_path / "starts").read_text() == "started\n"


@pytest.mark.parametrize("command", ["run", "tune", "compare"])
@pytest.mark.parametrize(("options", "named"), [(["--unit", "ms"], "--unit ms"),
                                                (["--higher-is-better"], "--higher-is-better"),
                                                (["--unit", "GB/s", "--higher-is-better"],
                                                 "--unit GB/s and --higher-is-better")])
@pytest.mark.parametrize("spec", ["command", "file"])
def test_a_unit_without_a_metric_pattern_is_refused(command, options, named, spec, tmp_path, mapper, capsys):
    """--unit or --higher-is-better with no metric pattern (neither --metric nor the application file's): the wall
    time, in seconds, was measured and labelled in the unit given (or maximised), which falsified the figures."""
    exe = script(tmp_path, "prog", "echo 'elapsed: 12.5 ms'")
    (tmp_path / "mapperopt.yaml").write_text("executable: ./prog\nsizes: {ci: {}}\n")
    app = str(exe) if spec == "command" else "mapperopt.yaml"
    iters = ["--iters", "1"] if command != "run" else []
    assert main(argv(command, mapper, app, *options, *iters)) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"error: {named} need{'s' if ' and ' not in named else ''} a metric pattern" in err, err
    assert "hint: give --metric 'REGEX'" in err, err
    assert not (tmp_path / "runs").exists()  # refused before anything ran


def test_unit_and_higher_is_better_change_only_those_of_the_files_metric(tmp_path, monkeypatch):
    """An application file's metric with --unit or --higher-is-better on the command line: the file's pattern is
    kept (it was dropped, and the wall time labelled in the unit given was measured instead)."""
    monkeypatch.chdir(tmp_path)
    script(tmp_path, "prog", "echo 'elapsed: 12.5 ms'")
    (tmp_path / "mapperopt.yaml").write_text("executable: ./prog\nsizes: {ci: {}}\n"
                                             "metric: {regex: 'elapsed: ([0-9.]+)', unit: s}\n")
    once = ["--repeats", "1", "--max-repeats", "1"]
    assert main(["run", "--app", "mapperopt.yaml", "--unit", "ms", *once, "--out", "ms"]) == 0
    result = json.loads((tmp_path / "ms" / "result.json").read_text())
    assert (result["throughput"], result["unit"]) == (0.08, "1/ms")
    assert result["settings"]["metric"] == "/elapsed: ([0-9.]+)/ in ms, lower is better"
    assert main(["run", "--app", "mapperopt.yaml", "--higher-is-better", *once, "--out", "higher"]) == 0
    result = json.loads((tmp_path / "higher" / "result.json").read_text())
    assert (result["throughput"], result["unit"]) == (12.5, "s")
    assert result["settings"]["metric"] == "/elapsed: ([0-9.]+)/ in s, higher is better"
    # The command printed to run it again gives the metric the run measured, as given: over the file's pattern.
    assert result["settings"]["app_options"] == shlex.join(["--app", "mapperopt.yaml", "--unit", "s",
                                                            "--higher-is-better"])


@pytest.mark.skipif(toolchain.has_cuda_driver(), reason="the refusal of GPUs is that of a machine without any")
@pytest.mark.parametrize("command", ["check", "explain", "run", "tune"])
def test_gpus_after_the_double_dash_are_named_where_refused(command, tmp_path, mapper, foreign_exe, capsys):
    """`-- -ll:gpu 1` is the run's GPU count: on a machine without GPUs, discovery (check, explain, tune) and the run
    refuse it naming that flag and what to remove (they said "--gpus 1 requested", an option the user never gave)."""
    rest = {"run": ("--mapper", str(mapper), "--once"), "tune": ("--iters", "1")}.get(command, ("--machine", "1x1"))
    assert main(argv(command, mapper, f"{foreign_exe} -n 100 -steps 1", *rest, "--", "-ll:gpu", "1")) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "no GPU on this machine: `-ll:gpu 1` after `--` asks for 1 GPU, but no NVIDIA driver was found" in err, err
    assert "hint: remove `-ll:gpu 1` after `--` (or give `-ll:gpu 0`)" in err and "--gpus" not in err, err


@pytest.mark.parametrize("activated", [True, False])
def test_a_failed_discoverys_command_to_run_by_hand_starts_as_printed(tmp_path, mapper, foreign_exe, capsys,
                                                                      monkeypatch, activated):
    """The command a failed discovery says to run by hand, pasted into a shell that has only mapperopt on its PATH,
    runs the program as discovery did (it lacked the environment `mapperopt toolchain --env` sets: on a machine
    without GPUs, `libcuda.so.1: cannot open shared object file`). Started as `.venv/bin/mapperopt` (a virtual
    environment not activated), it names that mapperopt: pasted into a shell without it, `mapperopt: command not
    found` was all it did."""
    import subprocess
    import sys

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    if not activated:
        exe = Path(sys.executable).with_name("mapperopt")
        monkeypatch.setattr(sys, "argv", [str(exe)])
        monkeypatch.setenv("PATH", ":".join(p for p in os.environ["PATH"].split(":")
                                            if p and Path(p).resolve() != exe.parent.resolve()))
    # On one CPU the program's must-epoch launch of two tasks cannot be mapped: Legion's default mapper aborts.
    assert main(argv("check", mapper, f"{foreign_exe} -n 100 -steps 1", "--machine", "1x1")) == 1
    err = " ".join(capsys.readouterr().err.split())
    command = re.search(r"run it by hand where it ran: (.*) \(without mapperopt\)", err)[1]
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin" if activated else "/usr/bin:/bin",
           "HOME": os.environ.get("HOME", str(tmp_path))}
    done = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True, timeout=120)
    assert "cannot open shared object file" not in done.stderr, (command, done.stderr)
    assert "Not enough procs of kind 2 for must epoch launch" in done.stderr, (command, done.stderr)


def test_a_failed_discoverys_command_to_run_by_hand_gives_the_program_the_environment_discovery_gave(
        tmp_path, mapper, foreign_exe, capsys, monkeypatch):
    """The command to run by hand, run in the shell mapperopt ran from, gives the program the environment discovery
    gave it (Legion's libraries, the application file's `env`), less the recording mapper's variables alone. A
    variable of the shim that this shell exports, which discovery takes out (`shim_env`), stayed in by hand."""
    import subprocess
    import sys

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:{os.environ['PATH']}")  # the shell finds mapperopt
    monkeypatch.setenv("MAPPEROPT_TRACE", str(tmp_path / "trace.jsonl"))  # exported, as the toolchain hint shows it
    # The program's environment, then the program: on one CPU its must-epoch launch of two tasks cannot be mapped.
    script(tmp_path, "prog", f'env -0 > env.txt\nexec {foreign_exe} "$@"')
    (tmp_path / "mapperopt.yaml").write_text("executable: ./prog\nargs: [-n, '100', -steps, '1']\nsizes: {ci: {}}\n"
                                             "env: {OMP_NUM_THREADS: 1, MY_LABEL: 'two words'}\n")
    assert main(argv("check", mapper, "mapperopt.yaml", "--machine", "1x1")) == 1
    err = " ".join(capsys.readouterr().err.split())
    command = re.search(r"run it by hand where it ran: (.*) \(without mapperopt\)", err)[1]
    folder = Path(shlex.split(command)[1])

    def environment() -> dict[str, str]:  # without what a shell sets of its own (bash: LINES, COLUMNS too)
        pairs = (entry.split("=", 1) for entry in (folder / "env.txt").read_text().split("\0") if entry)
        return {k: v for k, v in pairs if k not in ("PWD", "OLDPWD", "SHLVL", "_", "LINES", "COLUMNS")}

    discovered = environment()
    assert discovered["OMP_NUM_THREADS"] == "1" and discovered["MY_LABEL"] == "two words"
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120)
    assert "Not enough procs of kind 2 for must epoch launch" in done.stderr, (command, done.stderr)
    by_hand = environment()
    differ = {k for k in {*discovered, *by_hand} if discovered.get(k) != by_hand.get(k)}
    # discovery's trace (its own file, not the exported one) counts the launches
    recording = {"LD_PRELOAD", "MAPPEROPT_MAPPER", "MAPPEROPT_RECORD", "MAPPEROPT_TRACE", "MAPPEROPT_KEEP_APP_MAPPER"}
    assert differ == recording | {"MAPPEROPT_PRELOAD"}, (command, {k: (discovered.get(k), by_hand.get(k))
                                                                   for k in differ})
    assert recording.isdisjoint(by_hand) and "MAPPEROPT_PRELOAD" not in discovered  # the eval's, which preloads nothing


@pytest.mark.skipif(toolchain.has_cuda_driver(), reason="the lines of the libcuda stand-in, on a machine without GPU")
def test_a_failed_discovery_quotes_no_line_of_the_libcuda_stand_in(tmp_path, mapper, foreign_exe, capsys, monkeypatch):
    """The program's own error is quoted; the two harmless lines the libcuda stand-in makes Realm print are not
    (they stay in the kept stderr.txt), as in a failed run's reason."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    # On one CPU the program's must-epoch launch of two tasks cannot be mapped: Legion's default mapper aborts.
    assert main(argv("check", mapper, f"{foreign_exe} -n 100 -steps 1", "--machine", "1x1")) == 1
    err = capsys.readouterr().err
    assert "Not enough procs of kind 2 for must epoch launch" in err.split("hint:", 1)[1], err
    assert "cuInit(0) returned" not in err and "not able to discover the CUDA resources" not in err, err
    kept = re.search(r"its output is in (\S+)/stdout\.txt", err)
    assert "(mapperopt libcuda stand-in)" in (Path(kept[1]) / "stderr.txt").read_text()


def test_a_failed_own_check_without_details_says_so(tmp_path):
    """A result line that says "verified": false and nothing else: AutoGuide says the program's own check failed
    and that it gave no "check" object, rather than quoting `null`."""
    exe = script(tmp_path, "prog", "echo 'MAPPEROPT_RESULT {\"verified\": false}'")
    assert main(["run", "--app", str(exe), "--repeats", "1", "--max-repeats", "1", "--out", str(tmp_path / "run")]) == 1
    feedback = json.loads((tmp_path / "run" / "feedback.json").read_text())
    assert (feedback["stage"], feedback["rule"]) == ("verify", "verification-app-own-check"), feedback
    assert feedback["explanation"] == ('prog ran, but its own correctness check failed (its MAPPEROPT_RESULT line, '
                                       'line 1 of the standard output, says "verified": false; exit status 0). It '
                                       'reported: nothing more (the line has no "check" object).')


def test_a_failed_describe_and_a_failed_discovery_quote_the_same_reason(tmp_path, mapper, capsys, monkeypatch):
    """A program that fails without a line that reads as an error: the benchmark path (`--describe`) and a user's
    program's discovery both name the program and quote its last line that says something, as a failed run's
    reason does; not the stand-in's harmless lines, nor (for `--describe`) the first lines joined."""
    from mapperopt.benchmarks.apps import _describe

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the kept output folder: under the test's own
    exe = script(tmp_path, "picky", 'echo "cuInit(0) returned 100 (CUDA_ERROR_NO_DEVICE)" >&2; '
                                    'echo "picky: starting" >&2; echo "picky: -n wants a number" >&2; exit 2')
    with pytest.raises(MapperoptError) as info:
        _describe("picky", str(exe), ())
    assert info.value.message.endswith("failed, exit status 2): picky: -n wants a number"), info.value.message
    assert main(argv("check", mapper, str(exe), "--machine", "1x0x1")) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert ("discovering picky: your program exited with code 2 in its first run, which records its tasks for "
            "mapperopt: picky: -n wants a number") in err, err


def test_a_metric_in_the_logfile_the_arguments_chose_is_said_not_blamed_on_the_pattern(tmp_path):
    """`-logfile applog.txt` among the program's arguments: a Realm logger's metric line goes to that file, which
    the metric is not read from; the pattern is right, and AutoGuide says where the line went."""
    exe = script(tmp_path, "prog", "echo 'setup done'; while [ $# -gt 0 ]; do "
                                   "[ \"$1\" = -logfile ] && echo '{3}{app}: elapsed 12.5 ms' > \"$2\"; shift; done")
    out_dir = tmp_path / "run"
    assert main(["run", "--app", str(exe), "--metric", "elapsed ([0-9.]+) ms", "--unit", "ms", "--out", str(out_dir),
                 "--", "-logfile", "applog.txt"]) == 1
    feedback = json.loads((out_dir / "feedback.json").read_text())
    assert (feedback["stage"], feedback["category"]) == ("run", "metric")
    assert "correct it" not in feedback["suggestion"]
    assert "-logfile applog.txt" in feedback["suggestion"] and str(out_dir / "applog.txt") in feedback["suggestion"]


def test_a_logfile_with_a_percent_names_the_file_legion_wrote(tmp_path):
    """`-logfile heat_%.log`: Legion replaces `%` by the node number, so the file is heat_0.log; the suggestion
    named heat_%.log, which does not exist."""
    exe = script(tmp_path, "prog", "while [ $# -gt 0 ]; do [ \"$1\" = -logfile ] && "
                                   "echo '{3}{app}: elapsed 12.5 ms' > \"$(echo \"$2\" | sed 's/%/0/')\"; shift; done")
    out_dir = tmp_path / "run"
    assert main(["run", "--app", str(exe), "--metric", "elapsed ([0-9.]+) ms", "--unit", "ms", "--out", str(out_dir),
                 "--", "-logfile", "heat_%.log"]) == 1
    assert (out_dir / "heat_0.log").exists()
    suggestion = json.loads((out_dir / "feedback.json").read_text())["suggestion"]
    assert f"went to {out_dir / 'heat_0.log'} (Legion replaces % by the node number)" in suggestion, suggestion
    assert "-logfile heat_%.log" in suggestion, suggestion


@pytest.mark.parametrize("value", [".nan", ".inf"])
def test_a_timeout_in_an_application_file_that_is_not_a_finite_number_is_refused(value, tmp_path):
    """`timeout_s: .nan` passed the check (every comparison with nan is false) and reached coreutils' `timeout`."""
    exe = script(tmp_path, "prog", "echo hi")
    (tmp_path / "mapperopt.yaml").write_text(f"executable: {exe}\nsizes:\n  ci: {{timeout_s: {value}}}\n")
    with pytest.raises(MapperoptError, match=r"size 'ci': 'timeout_s' must be a finite number >= 0.1, got (nan|inf)"):
        load_app_file(tmp_path / "mapperopt.yaml")


@pytest.mark.parametrize("value, seconds", [("5e-1", 0.5), ("2E+2", 200.0), ("1e308", 1e308)])
def test_a_timeout_in_an_application_file_in_exponent_form_is_a_number(value, seconds, tmp_path):
    """YAML 1.1 (PyYAML) reads `5e-1`, without a dot, as a string: it said "'timeout_s' must be a number, got
    '5e-1'" of what is one."""
    exe = script(tmp_path, "prog", "echo hi")
    (tmp_path / "mapperopt.yaml").write_text(f"executable: {exe}\nsizes:\n  ci: {{timeout_s: {value}}}\n")
    assert load_app_file(tmp_path / "mapperopt.yaml").config.size("ci").timeout_s == seconds


@pytest.mark.parametrize("value", ["nan", "'inf'", "1e", "1e-9s"])
def test_a_timeout_in_an_application_file_that_is_a_string_is_refused(value, tmp_path):
    exe = script(tmp_path, "prog", "echo hi")
    (tmp_path / "mapperopt.yaml").write_text(f"executable: {exe}\nsizes:\n  ci: {{timeout_s: {value}}}\n")
    with pytest.raises(MapperoptError, match=r"size 'ci': 'timeout_s' must be a number, got '"):
        load_app_file(tmp_path / "mapperopt.yaml")


def test_a_timeout_no_program_run_can_meet_is_refused_in_the_file_as_on_the_command_line(tmp_path, capsys):
    """`timeout_s: 1e-9` in an application file was taken: every execution then failed at stage timeout. One rule
    for the file and --timeout, before anything runs: at least 0.1 s (Legion's start-up alone takes longer)."""
    exe = script(tmp_path, "prog", "echo hi")
    (tmp_path / "mapperopt.yaml").write_text(f"executable: {exe}\nsizes:\n  ci: {{timeout_s: 1e-9}}\n")
    with pytest.raises(MapperoptError, match=r"size 'ci': 'timeout_s' must be a finite number >= 0.1, got 1e-09"):
        load_app_file(tmp_path / "mapperopt.yaml")
    out_dir = tmp_path / "out"
    assert main(["run", "--app", str(exe), "--timeout", "1e-9", "--out", str(out_dir)]) == 2
    assert "1e-09 is not in the range x>=0.1" in " ".join(capsys.readouterr().err.split())
    assert not out_dir.exists()  # nothing ran


@pytest.mark.parametrize("command", ["check", "run"])
def test_an_input_file_named_relative_to_the_current_folder_is_said_to_need_an_absolute_path(command, tmp_path,
                                                                                               mapper, capsys):
    """The program runs in discovery's folder or its run folder, not in the current one: an argument naming a file
    here (`-input in.txt`) is not found there. The error says so with the absolute path, and the command to run it
    by hand runs it where it failed (it ran it here, where it succeeded, blaming mapperopt)."""
    exe = script(tmp_path, "prog", 'test -f "$2" || { echo "cannot open input file $2" >&2; exit 2; }')
    (tmp_path / "in.txt").write_text("5000\n")
    assert main(argv(command, mapper, f"{exe} -input in.txt", *(["--once"] if command == "run" else []))) == 1
    captured = capsys.readouterr()
    said = re.sub(r"\s+", " ", captured.out + captured.err)
    found = re.search(r"the program runs in (\S+), not in the current folder, where its argument in\.txt names a "
                      rf"file: give it as an absolute path, {re.escape(str(tmp_path / 'in.txt'))}", said)
    assert found, said
    if command == "check":  # discovery's folder, kept: the command by hand goes there first
        assert f"run it by hand where it ran: cd {found.group(1)} && eval" in said, said


def test_check_describes_the_memory_that_the_flags_after_the_separator_size(tmp_path, mapper, pieces_exe, capsys):
    """`check --app PROG -- -ll:csize 64` checks the machine of that run: SYSMEM of 64 MiB (it said 512 MiB,
    Legion's default, while naming the run with those flags)."""
    assert main(["check", str(mapper), "--app", str(pieces_exe), "--", "-ll:csize", "64"]) == 0
    captured = capsys.readouterr()
    said = re.sub(r"\s+", " ", captured.out + captured.err)
    assert "(memories SYSMEM 64 MiB)" in said, said


@pytest.mark.parametrize("command", ["run", "tune", "compare"])
def test_a_program_given_as_the_benchmark_is_said_to_need_app(command, tmp_path, mapper, capsys):
    """`mapperopt run ./prog` (--app forgotten): the unknown benchmark's error says to give the program with --app."""
    script(tmp_path, "prog", "echo hi")
    (tmp_path / "mapperopt.yaml").write_text("executable: ./prog\nsizes: {ci: {}}\n")
    # with an application file beside the program (its verification and metric), that file first
    beside = ("`--app mapperopt.yaml`, the application file beside it, which keeps its verification and metric; "
              "or the program alone, `--app ./prog`")
    for given, how in (("./prog", beside + "; with its arguments in quotes: `--app './prog -n 100'`"),
                       ("mapperopt.yaml", "`--app mapperopt.yaml`")):
        assert main([command, given]) == 2
        err = re.sub(r"\s+", " ", capsys.readouterr().err)
        assert f"unknown benchmark '{given}'" in err, err
        assert f"hint: {given} is a file here: give your own program with --app ({how})" in err, err
    (tmp_path / "mapperopt.yaml").unlink()
    assert main([command, "./prog"]) == 2
    assert "(`--app ./prog`; with its arguments" in re.sub(r"\s+", " ", capsys.readouterr().err)


@pytest.mark.parametrize("command", ["run", "tune", "compare", "check", "compile"])
def test_a_resource_option_and_a_flag_after_the_separator_or_in_the_command_that_disagree_are_refused(
        command, tmp_path, mapper, capsys):
    """`--cpus 1 -- -ll:cpu 2` and `--csize 256 -- -ll:csize 64`: which one the run takes was said nowhere (the flag
    won, silently); `--app './prog -ll:cpu 2' --cpus 1`: the program's own flag was dropped, silently. check and
    compile, which check a mapper against that run, refuse the same counts."""
    exe = str(script(tmp_path, "prog", "echo hi"))
    cases = [
        ([exe, "--cpus", "1", "--", "-ll:cpu", "2"],
         "--cpus 1 and `-ll:cpu 2` after `--` ask for different CPU counts",
         "give one of them (the flag after `--` would win: 2 CPUs per node)"),
        ([exe, "--csize", "256", "--", "-ll:csize", "64"],
         "--csize 256 and `-ll:csize 64` after `--` ask for different system memory sizes",
         "give one of them (the flag after `--` would win: 64 MiB)"),
        ([exe, "--fsize", "1024", "--", "-ll:fsize", "2g"],
         "--fsize 1024 and `-ll:fsize 2g` after `--` ask for different framebuffer memory sizes", None),
        ([exe, "--zsize", "16", "--", "-ll:zsize", "32"],
         "--zsize 16 and `-ll:zsize 32` after `--` ask for different zero-copy memory sizes", None),
        ([f"{exe} -n 1000 -ll:cpu 2", "--cpus", "1"],
         "--cpus 1 and `-ll:cpu 2` in --app's command ask for different CPU counts",
         "give one of them (--cpus would win: 1 CPU per node)"),
        ([f"{exe} -ll:csize 64", "--csize", "256"],
         "--csize 256 and `-ll:csize 64` in --app's command ask for different system memory sizes",
         "give one of them (--csize would win: 256 MiB)"),
    ]
    for args, said, hint in cases:
        if command in ("check", "compile") and "--cpus" not in args:
            continue  # of the resource options, they take the processor counts only
        assert main(argv(command, mapper, *args)) == 2, args
        err = re.sub(r"\s+", " ", capsys.readouterr().err)
        assert said in err and f"hint: {hint or 'give one of them'}" in err, (args, err)
    assert not list(tmp_path.glob("runs")), "refused before anything ran"


def test_a_failure_with_an_empty_stderr_quotes_the_end_of_the_standard_output(tmp_path, monkeypatch):
    """A program that checks its own results, prints FAIL on its standard output and exits 2 was reported as "exited
    with status 2 and no error message": the reason quotes the end of the standard output, and says that the
    application file's verify pattern did not match either."""
    monkeypatch.chdir(tmp_path)
    script(tmp_path, "prog", "echo 'step 1 done'; echo 'sum = inf expected 4e11 FAIL'; echo 'bye'; exit 2")
    (tmp_path / "mapperopt.yaml").write_text("executable: ./prog\nsizes: {ci: {}}\nverify: {pattern: 'PASS'}\n")
    assert main(["run", "--app", "mapperopt.yaml", "--repeats", "1", "--max-repeats", "1", "--out", "run"]) == 1
    feedback = json.loads((tmp_path / "run" / "feedback.json").read_text())
    reason = json.loads((tmp_path / "run" / "result.json").read_text())["reason"]
    assert "no error message" not in reason, reason
    assert reason.startswith("exited with status 2 and printed nothing on standard error; its standard output's "
                             "last line that looks like a failure: 'sum = inf expected 4e11 FAIL'"), reason
    assert reason.endswith("; the verify pattern /PASS/ does not match its output either"), reason
    assert feedback["stage"] == "run" and "sum = inf expected 4e11 FAIL" in feedback["raw_excerpt"], feedback
    # a verify pattern that matches, or none: not said
    (tmp_path / "mapperopt.yaml").write_text("executable: ./prog\nsizes: {ci: {}}\n")
    assert main(["run", "--app", "mapperopt.yaml", "--repeats", "1", "--max-repeats", "1", "--out", "run2"]) == 1
    reason = json.loads((tmp_path / "run2" / "result.json").read_text())["reason"]
    assert "FAIL" in reason and "verify pattern" not in reason, reason


def test_a_bad_value_beside_an_unknown_key_of_the_metric_or_verify_is_reported_with_it(tmp_path, mapper, capsys):
    """An unknown key in `metric:` (or `verify:`) hid the bad values beside it (`better: lowr`, an invalid pattern),
    which came only in the next run, once the key was fixed: all at once, as the file's other problems."""
    script(tmp_path, "prog", "exit 0")
    (tmp_path / "mapperopt.yaml").write_text("executable: ./prog\nsizes: {ci: {}}\n"
                                             "metric: {regexp: 'took ([0-9.]+) ms', unit: ms, "
                                             "better: lowr}\nverify: {patern: x, pattern: '(unclosed'}\n")
    assert main(["run", "--app", "mapperopt.yaml"]) == 1
    err = capsys.readouterr().err
    assert "error: mapperopt.yaml has 4 problems:\n" in err, err
    for part in ("mapperopt.yaml: metric: unknown key 'regexp'", "mapperopt.yaml: metric 'better' must be `higher` "
                 "or `lower`, got 'lowr'", "mapperopt.yaml: verify: unknown key 'patern'",
                 "mapperopt.yaml: the verify pattern '(unclosed' is invalid"):
        assert "\n  - " + part in err, (part, err)


def test_a_program_that_is_not_a_legion_program_is_said_without_a_mapper_too(tmp_path, mapper, capsys,
                                                                               monkeypatch):
    """`run --app ./notlegion` (exits 0, runs no Legion task) without --mapper said "ok" and nothing else: its
    discovery's failure was swallowed. The measurement stands (a stand-in script is measured as a program), and a
    warning says what check says."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the kept output folders: under the test's own
    exe = script(tmp_path, "notlegion", "exit 0")
    assert main(["run", "--app", str(exe), "--once", "--out", "run"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (f"Warning: discovering notlegion: the program exited 0 but ran no Legion task under the recording mapper: "
            f"is {exe} a Legion program") in out, out
    assert "no mapper takes part in such a run" in out, out
    # discovered, with no task found: no mapper took part (the title said "not discovered yet")
    assert "notlegion with no mapper (no Legion task ran; size ci" in out, out
    # What to do instead, and no suggestion of a DSL-mapper run, which fails the same way.
    assert "build it with `mapperopt toolchain`'s flags" in out, out
    assert "--mapper start.dsl" not in out and "--profile" not in out, out
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert "ran no Legion task" in result["settings"]["no_legion_task"], result


def test_a_wrapper_script_whose_relative_path_is_not_found_is_said_to_run_in_another_folder(tmp_path, mapper, capsys,
                                                                                               monkeypatch):
    """A wrapper script with `exec ./daxpy "$@"` failed with exit status 127 "not found" and no word of why: the
    program runs in a temporary folder (discovery's, the run folder), where a path relative to the current folder
    inside the script does not lead to the program."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the kept output folders: under the test's own
    script(tmp_path, "daxpy", "exit 0")
    wrapper = script(tmp_path, "wrap.sh", 'exec ./daxpy "$@"')
    assert main(["check", str(mapper), "--app", str(wrapper), "--machine", "1x0x1"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "exited with code 127" in err, err
    assert (f"{wrapper} is a script: it runs in a temporary folder, not in the current folder, so a relative path "
            "inside it (`./daxpy`) is not found; make the paths inside the script absolute, or relative to the "
            "script: \"$(dirname \"$0\")/daxpy\"") in err, err
    assert main(["run", "--app", str(wrapper), "--once", "--out", "run"]) == 1
    reason = json.loads((tmp_path / "run" / "result.json").read_text())["reason"]
    assert "exited with status 127" in reason and f"{wrapper} is a script: it runs in a temporary folder" in reason, \
        reason


def test_a_typo_in_the_verify_pattern_is_quoted_exactly_and_the_passing_line_is_not_called_a_failure(
        tmp_path, monkeypatch, capsys):
    """`pattern: 'CHECK  OK'` (two spaces) against a program that prints `CHECK OK`: the reason called that passing
    line "its last line that looks like a failure", and the explanation folded the two spaces, so that the pattern it
    quoted read exactly as the line and the typo could not be seen."""
    monkeypatch.chdir(tmp_path)
    script(tmp_path, "prog", "echo 'solve took 3 ms'; echo 'CHECK OK'; echo 'checksum 1234'")
    (tmp_path / "mapperopt.yaml").write_text("executable: ./prog\nsizes: {ci: {}}\nverify: {pattern: 'CHECK  OK'}\n")
    assert main(["run", "--app", "mapperopt.yaml", "--repeats", "1", "--max-repeats", "1", "--out", "run"]) == 1
    reason = json.loads((tmp_path / "run" / "result.json").read_text())["reason"]
    assert reason == ("the output does not match the verify pattern /CHECK  OK/ (2 spaces after 'CHECK'); its line "
                      "'CHECK OK' differs from the pattern only in spacing"), reason
    feedback = json.loads((tmp_path / "run" / "feedback.json").read_text())
    # quoted exactly in the feedback too (its two spaces were folded into one there, as if the pattern were right)
    assert "/CHECK  OK/ (2 spaces after 'CHECK'); its line 'CHECK OK' differs from the pattern only in spacing" in \
        feedback["explanation"], feedback["explanation"]
    out = " ".join(capsys.readouterr().out.split())
    assert "(2 spaces after 'CHECK')" in out and "looks like a failure" not in out, out
    # No line like the pattern: a line with a word of a check that did not pass, never one that passed.
    (tmp_path / "mapperopt.yaml").write_text("executable: ./prog\nsizes: {ci: {}}\nverify: {pattern: 'RESULT OK'}\n")
    assert main(["run", "--app", "mapperopt.yaml", "--repeats", "1", "--max-repeats", "1", "--out", "run2"]) == 1
    reason = json.loads((tmp_path / "run2" / "result.json").read_text())["reason"]
    assert reason.endswith("/RESULT OK/; its last line: 'checksum 1234'"), reason
    script(tmp_path, "prog", "echo 'CHECK FAILED: 3 wrong cells'; echo 'CHECK OK: 0 errors'")
    assert main(["run", "--app", "mapperopt.yaml", "--repeats", "1", "--max-repeats", "1", "--out", "run3"]) == 1
    reason = json.loads((tmp_path / "run3" / "result.json").read_text())["reason"]
    assert reason.endswith("; its last line that looks like a failure: 'CHECK FAILED: 3 wrong cells'"), reason


def test_a_verification_that_fails_after_passing_says_the_output_varies_from_run_to_run(tmp_path, monkeypatch):
    """A program whose third execution printed CHECK FAILED after two that printed CHECK OK (a race in a Legion
    program does this) was explained as a failed verification whose pattern may have a typo: that the same check
    had passed twice was not said."""
    monkeypatch.chdir(tmp_path)
    count = tmp_path / "count"  # of the program's executions
    script(tmp_path, "prog", f'n=$(($(cat {count}) + 1)); echo $n > {count}\n'
                             'if [ $n -eq 3 ]; then echo "CHECK  FAILED"; else echo "CHECK OK"; fi')
    (tmp_path / "mapperopt.yaml").write_text("executable: ./prog\nsizes: {ci: {}}\nverify: {pattern: 'CHECK OK'}\n")
    count.write_text("0")
    assert main(["run", "--app", "mapperopt.yaml", "--repeats", "3", "--max-repeats", "3", "--out", "run"]) == 1
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert result["stage"] == "verify" and len(result["attempts"]) == 3, result
    said = ("executions 1 and 2 passed this check, execution 3 failed it: an output that varies from run to run "
            "points at the program (a race, e.g. a missing privilege or an unsynchronised access, or an access "
            "outside a task's region requirement, which a build with -DLEGION_BOUNDS_CHECKS reports) or at the "
            "mapping, not at the verify pattern")
    assert result["reason"] == (f"{said}: the output does not match the verify pattern /CHECK OK/; its last line "
                                "that looks like a failure: 'CHECK  FAILED'"), result["reason"]
    feedback = json.loads((tmp_path / "run" / "feedback.json").read_text())
    assert f"fails the verification that mapperopt.yaml gives: {said}" in feedback["explanation"], feedback
    # The whole reason, the failing line as printed (two spaces) at its end: not cut at 240 characters, not folded.
    assert feedback["explanation"].endswith(f"gives: {result['reason']}."), feedback["explanation"]
    # The file, still named, but not as what to correct: no typo in a pattern makes an output vary.
    assert "the check that mapperopt.yaml gives passed in earlier executions" in feedback["suggestion"], feedback
    assert "typo" not in feedback["suggestion"] and "correct the verification" not in feedback["suggestion"], feedback
    count.write_text("0")  # and the option that set the check, where one did
    assert main(["run", "--app", "mapperopt.yaml", "--verify-cmd", "grep -q 'CHECK OK' \"$MAPPEROPT_STDOUT\"",
                 "--repeats", "3", "--max-repeats", "3", "--out", "run-cmd"]) == 1
    feedback = json.loads((tmp_path / "run-cmd" / "feedback.json").read_text())
    reason = json.loads((tmp_path / "run-cmd" / "result.json").read_text())["reason"]
    assert "not at the verify command: the verify command `grep" in reason, reason
    assert "the check that the --verify-cmd option gives passed" in feedback["suggestion"], feedback
    # A failure in the first execution says nothing of the kind.
    count.write_text("2")
    assert main(["run", "--app", "mapperopt.yaml", "--repeats", "3", "--max-repeats", "3", "--out", "run2"]) == 1
    reason = json.loads((tmp_path / "run2" / "result.json").read_text())["reason"]
    assert "passed" not in reason and "varies" not in reason, reason


@pytest.mark.parametrize("failing", [2, 3, 4])
def test_a_verification_failing_at_any_later_execution_is_said_to_vary(tmp_path, monkeypatch, failing):
    """A failure at execution 2 after execution 1 passed ("execution 1 passed this check") was not recognised as
    one that varies from run to run (only "executions 1 and 2" and "executions 1 to 3" were): `tune` then blamed the
    verification settings, and `run` named the application file instead of the --verify-pattern option."""
    from mapperopt.benchmarks.userapp import intermittent, verify_option

    monkeypatch.chdir(tmp_path)
    count = tmp_path / "count"
    script(tmp_path, "prog", f'n=$(($(cat {count}) + 1)); echo $n > {count}\n'
                             f'if [ $n -eq {failing} ]; then echo "CHECK FAILED"; else echo "CHECK OK"; fi')
    (tmp_path / "mapperopt.yaml").write_text("executable: ./prog\nsizes: {ci: {}}\nverify: {pattern: 'CHECK'}\n")
    count.write_text("0")
    assert main(["run", "--app", "mapperopt.yaml", "--verify-pattern", "CHECK OK", "--repeats", "4",
                 "--max-repeats", "4", "--out", "run"]) == 1
    reason = json.loads((tmp_path / "run" / "result.json").read_text())["reason"]
    passed = {2: "execution 1", 3: "executions 1 and 2", 4: "executions 1 to 3"}[failing]
    assert reason.startswith(f"{passed} passed this check, execution {failing} failed it: an output that "
                             "varies"), reason
    assert intermittent(reason) and verify_option(reason) == "--verify-pattern", reason
    feedback = json.loads((tmp_path / "run" / "feedback.json").read_text())
    assert "fails the verification that the --verify-pattern option gives" in feedback["explanation"], feedback


def test_a_line_saying_error_0_is_not_called_a_failure(tmp_path, monkeypatch):
    """With a letter typo in the pattern (`CHEK OK`), the passing lines `max error 0, energy 5.99997e+08`,
    `max error 1.2e-15`, `error count 0` and `residual error 3.1e-9 (tolerance 1e-6)` were quoted as "its last line
    that looks like a failure": an error followed by a number is a measurement, printed by a check that passed."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mapperopt.yaml").write_text("executable: ./prog\nsizes: {ci: {}}\nverify: {pattern: 'CHEK OK'}\n")
    for n, passing in enumerate(["max error 0, energy 5.99997e+08", "relative error = 0.0", "max error 1.2e-15",
                                 "error count 0", "residual error 3.1e-9 (tolerance 1e-6)", "max error 0.5",
                                 "errors: none"]):
        script(tmp_path, "prog", f"echo '{passing}'; echo 'solve took 3 ms'; echo 'CHECK OK'")
        assert main(["run", "--app", "mapperopt.yaml", "--repeats", "1", "--max-repeats", "1", "--out", f"r{n}"]) == 1
        reason = json.loads((tmp_path / f"r{n}" / "result.json").read_text())["reason"]
        assert reason == "the output does not match the verify pattern /CHEK OK/; its last line: 'CHECK OK'", reason
    for n, failing in enumerate(["Error: solver diverged at step 3", "result WRONG in cell 4", "3 mismatches",
                                 "aborting: NaN in field"]):  # true failures are still quoted
        script(tmp_path, "prog", f"echo '{failing}'; echo 'CHECK OK'")
        assert main(["run", "--app", "mapperopt.yaml", "--repeats", "1", "--max-repeats", "1", "--out", f"f{n}"]) == 1
        reason = json.loads((tmp_path / f"f{n}" / "result.json").read_text())["reason"]
        assert reason.endswith(f"; its last line that looks like a failure: {failing!r}"), reason


def test_profile_without_a_dsl_mapper_suggests_a_mapper_the_program_has(timed_exe, tmp_path, capsys, monkeypatch):
    """`run --app ... --profile` without a DSL mapper: the hint named `--mapper expert`, which a user's program does
    not have (`error: timed has no expert mapper`); it gives the DSL mapper to write instead, and that one runs."""
    monkeypatch.chdir(tmp_path)
    app = ["run", "--app", f"{timed_exe} -reps 2", "--once"]
    assert main([*app, "--profile"]) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert "error: --profile needs a DSL mapper" in said and "expert" not in said, said
    written = re.search(r"--mapper start\.dsl, with in start\.dsl a DSL mapper that maps as Legion's default mapper "
                        r"does: `([^`]+)`", said)
    assert written, said
    Path("start.dsl").write_text(written[1].replace("; ", ";\n") + "\n")
    assert main([*app, "--mapper", "start.dsl", "--profile", "--out", "run"]) == 0
    assert json.loads(Path("run", "result.json").read_text())["profile"], capsys.readouterr()


def test_a_verify_pattern_missing_a_number_between_its_words_is_blamed_not_the_mapper(timed_exe, tmp_path, capsys,
                                                                                       monkeypatch):
    """`--verify-pattern 'residual OK'` against a program that prints `final residual 4.486084e-02 OK`: the reason
    quoted the output's last line, and the advice named the mapper's Layout statement first, as the metric pattern's
    typo is not: the line with the pattern's words is quoted, and the pattern is said to be the likely cause."""
    monkeypatch.chdir(tmp_path)
    wrapper = tmp_path / "prog.sh"
    wrapper.write_text(f'#!/bin/sh\n"{timed_exe}" "$@" || exit $?\necho "final residual 4.486084e-02 OK"\n'
                       'echo "time per step: 20.334 ms"\n')
    wrapper.chmod(0o755)
    Path("m.dsl").write_text("Task * CPU;\nRegion * * CPU SYSMEM;\nLayout * * * SOA C_order;\n")
    assert main(["run", "--app", f"{wrapper} -reps 2", "--mapper", "m.dsl", "--verify-pattern", "residual OK",
                 "--once", "--out", "run"]) == 1
    capsys.readouterr()
    reason = json.loads(Path("run", "result.json").read_text())["reason"]
    assert reason == ("the output does not match the verify pattern /residual OK/; its line 'final residual "
                      "4.486084e-02 OK' holds the pattern's words 'residual' and 'OK' with other text between them"), \
        reason
    feedback = json.loads(Path("run", "feedback.json").read_text())
    assert "A suspect is the mapper's" not in feedback["explanation"], feedback
    assert feedback["suggestion"].startswith("The verify pattern, not the mapper, is likely the cause"), feedback
