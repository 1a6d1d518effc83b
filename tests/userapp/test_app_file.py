"""The application file, `--app 'CMD ARGS'`, metrics, verification and the discovery record (no Legion runs)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from mapperopt.benchmarks.userapp import (
    app_from_command, app_from_options, check_output, describe_from_record, legion_command, load_app_file,
    make_metric, make_verify, measure, resolve_app,
)
from mapperopt.errors import MapperoptError


@pytest.fixture
def exe(tmp_path: Path) -> Path:
    path = tmp_path / "myapp"
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mapperopt.yaml"
    path.write_text(text)
    return path


def test_app_file_fields(tmp_path, exe):
    (tmp_path / "expected.txt").write_text("sum 10\n")
    app = load_app_file(write(tmp_path, """
app: mine
executable: ./myapp
args: ["-steps", 3]
sizes:
  ci: {args: "-n 100", cpus: 2, csize: 256, timeout_s: 30}
  small: {args: ["-n", "10000"], legion_flags: ["-lg:safe_mapper"]}
metric: {regex: 'took ([0-9.]+) ms', unit: ms}
verify: {pattern: 'OK', reference: expected.txt, reference_lines: '^sum'}
keep_app_mapper: true
"""))
    assert app.name == "mine" and app.exe == exe.resolve() and app.keep_app_mapper
    assert app.args == {"ci": ("-steps", "3", "-n", "100"), "small": ("-steps", "3", "-n", "10000")}
    assert app.config.size("ci").cpus == 2 and app.config.size("ci").timeout_s == 30
    assert app.metric.regex and app.metric.unit == "ms" and not app.metric.higher_is_better
    assert app.verify.reference == str((tmp_path / "expected.txt").resolve())
    cmd = legion_command(app, "ci", 2, 0)
    assert cmd[:5] == [str(exe.resolve()), "-steps", "3", "-n", "100"]
    assert cmd[-2:] == ["-logfile", "stderr"] and "-ll:cpu" in cmd and "-ll:csize" in cmd
    # A log file the user chose is kept.
    assert "stderr" not in legion_command(app, "small", 1, 0, ["-logfile", "log_%.txt"])[-2:]


@pytest.mark.parametrize("text, words", [
    ("executable: ./missing\n", ["missing", "does not exist"]),
    ("executable: ./myapp\nsizes: {ci: {cpu: 2}}\n",
     ["size 'ci': unknown key 'cpu'", "did you mean 'cpus' for 'cpu'?"]),
    ("executable: ./myapp\nsize: {ci: {cpus: 2}}\n", ["unknown key 'size'; known: app, args", "did you mean 'sizes'"]),
    ("executable: ./myapp\nmetric: {regex: '(unclosed'}\n", ["metric regex", "invalid"]),
    ("executable: ./myapp\nmetric: {regex: 'ELAPSED [0-9.]+ ms'}\n", ["mapperopt.yaml", "metric regex", "no group",
                                                                   "parentheses"]),
    ("executable: ./myapp\nmetric: {regex: 'x', better: faster}\n", ["better", "faster"]),
    ("executable: ./myapp\nverify: {reference: nothere.txt}\n", ["reference output", "nothere.txt"]),
    ("executable: ./myapp\nverify: {patern: x}\n", ["verify: unknown key 'patern'; known: command, pattern",
                                                     "did you mean 'pattern' for 'patern'?"]),
    ("executable: ./myapp\nverify: checksum\n", ["'verify' must be a mapping with pattern", "got 'checksum'"]),
    ("executable: ./myapp\nbogus: 1\nverfy: 2\n",
     ["unknown keys 'bogus', 'verfy'", "did you mean 'verify' for 'verfy'?"]),
    ("app: [1]\n", ["executable", "missing"]),
])
def test_app_file_errors_name_the_key(tmp_path, exe, text, words):
    with pytest.raises(MapperoptError) as info:
        load_app_file(write(tmp_path, text))
    message = str(info.value) + str(info.value.hint or "")
    assert all(w in message for w in words), message


def test_app_file_errors_are_reported_together(tmp_path):
    """Three independent mistakes took three runs to find, one error each: all are reported at once, each naming its
    key, with its own hint."""
    with pytest.raises(MapperoptError) as info:
        load_app_file(write(tmp_path, "executable: ./missing\nmetrc: {regex: 'x ([0-9]+)'}\n"
                                      "sizes: {ci: {cpu: 2}, small: {cpus: 4}}\nverify: {pattern: '(unclosed'}\n"))
    message = str(info.value)
    where = str(tmp_path / "mapperopt.yaml")
    assert message.startswith(f"{where} has 4 problems:\n"), message
    for part in (f"  - {where}: unknown key 'metrc'", "      hint: did you mean 'metric' for 'metrc'?",
                 f"  - {where}: 'executable': the executable {tmp_path / 'missing'} does not exist",
                 "      hint: build the program first",
                 f"  - {where}: size 'ci': unknown key 'cpu'", "      hint: did you mean 'cpus' for 'cpu'?",
                 f"  - {where}: the verify pattern '(unclosed' is invalid"):
        assert "\n" + part in message, (part, message)


def test_errors_within_a_size_or_the_metric_are_reported_together(tmp_path, exe):
    """An unknown key in a size hid that size's bad values, and a bad `better:` hid the metric's invalid regex: each
    took another run to find. All are reported at once."""
    with pytest.raises(MapperoptError) as info:
        load_app_file(write(tmp_path, "executable: ./myapp\nsizes: {ci: {cpus: zero, timeout: 60}}\n"
                                      "metric: {regex: 'took ([0-9.]+ ms', better: smaller}\n"))
    message = str(info.value)
    where = str(tmp_path / "mapperopt.yaml")
    assert message.startswith(f"{where} has 4 problems:\n"), message
    for part in (f"  - {where}: size 'ci': unknown key 'timeout'",
                 "      hint: did you mean 'timeout_s' for 'timeout'?",
                 f"  - {where}: size 'ci': 'cpus' must be a number, got 'zero'",
                 f"  - {where}: metric 'better' must be `higher` or `lower`, got 'smaller'",
                 f"  - {where}: the metric regex 'took ([0-9.]+ ms' is invalid"):
        assert "\n" + part in message, (part, message)
    # A value of the right type out of its range is one more problem of the same size.
    with pytest.raises(MapperoptError) as info:
        load_app_file(write(tmp_path, "executable: ./myapp\nsizes: {ci: {cpus: 0, timeout: 60}}\n"))
    assert "has 2 problems" in str(info.value) and "size 'ci': 'cpus' must be >= 1, got 0" in str(info.value), \
        info.value


def test_a_misspelt_metric_key_is_named_with_the_key_it_is_close_to(tmp_path, exe):
    """A size's misspelt key got "did you mean"; the metric's (`regx`) only "must be `wall` or a mapping"."""
    with pytest.raises(MapperoptError) as info:
        load_app_file(write(tmp_path, "executable: ./myapp\nsizes: {ci: {}}\n"
                                      "metric: {regx: 'took ([0-9.]+) ms', unit: ms}\n"))
    where = str(tmp_path / "mapperopt.yaml")
    assert str(info.value).startswith(f"{where}: metric: unknown key 'regx'; known: better, regex, unit"), info.value
    assert info.value.hint == "did you mean 'regex' for 'regx'?", info.value.hint


def test_command_form_and_flags(tmp_path, exe):
    app, args = app_from_options(None, ("-x",), f"{exe} -n 5", metric_regex=r"t=(\d+)", unit="ms",
                                 higher_is_better=True, verify_pattern="OK")
    assert app.args == {"ci": ("-n", "5")} and args == ("-x",)
    assert app.metric.higher_is_better and app.verify.pattern == "OK"
    # A folder holding mapperopt.yaml is an application file; flags override the file's settings.
    write(tmp_path, "executable: ./myapp\nsizes: {ci: {}}\nverify: {pattern: 'A'}\n")
    assert resolve_app(str(tmp_path), verify=make_verify("B")).verify.pattern == "B"
    with pytest.raises(MapperoptError, match="^--verify-pattern applies only to --app$"):  # it said "only apply"
        app_from_options("circuit", (), None, verify_pattern="OK")
    with pytest.raises(MapperoptError, match="^--metric and --unit apply only to --app$"):
        app_from_options("circuit", (), None, metric_regex="t=(.*)", unit="ms")
    with pytest.raises(MapperoptError, match="BENCH"):
        app_from_options(None, (), None)
    with pytest.raises(MapperoptError, match="does not exist"):
        app_from_command("./no-such-program -n 1")


def test_a_metric_without_a_group_gets_an_example_built_from_its_own_words():
    """The hint's example keeps every word of the pattern (it dropped "TIME" of `ELAPSED TIME`) and reads the
    number the program prints after them; a number the pattern matches already gets the parentheses."""
    for regex, line, example in (("ELAPSED TIME", "ELAPSED TIME =   1.2 ms", "ELAPSED TIME[^0-9]*([0-9.]+)"),
                                 ("took [0-9.]+ ms", "took 3.5 ms", "took ([0-9.]+) ms")):
        with pytest.raises(MapperoptError) as info:
            make_metric(regex, "ms", False)
        assert f"e.g. {example!r}" in info.value.hint, info.value.hint
        assert re.search(example, line).group(1) == line.split()[-2]


def test_metric_and_verification(tmp_path, exe):
    wall = app_from_command(str(exe))
    result, why = measure(wall, "anything", 2.0)
    assert why is None and result["throughput"] == 0.5 and result["unit"] == "1/s" and result["time_s"] == 2.0
    rate = app_from_command(str(exe), metric=make_metric(r"rate ([0-9.]+)", "GB/s", True))
    assert measure(rate, "rate 1.0\nrate 3.5\n", 9.0)[0]["throughput"] == 3.5  # the last match
    assert "does not occur" in measure(rate, "no rate here", 1.0)[1]
    # What the output holds instead: the line the pattern missed (an integer group for `12.5`), or nothing at all.
    missed = measure(app_from_command(str(exe), metric=make_metric(r"elapsed (\d+) ms", "ms", False)),
                     "start\nelapsed 12.5 ms\ncheck PASS\n", 1.0)[1]
    assert missed == ("the metric /elapsed (\\d+) ms/ does not occur in the standard output or standard error; its "
                      "last line with 'elapsed': 'elapsed 12.5 ms'"), missed
    assert measure(rate, "", 1.0)[1].endswith("(the standard output is empty)")
    assert measure(rate, "", 1.0, "{3}{app}: rate 2.5\n")[0]["metric_from"] == "stderr"  # a Realm logger's line
    (tmp_path / "ref.txt").write_text("sum 6\nline\n")
    checked = app_from_command(str(exe), verify=make_verify("OK", "grep -q sum \"$MAPPEROPT_STDOUT\"",
                                                            str(tmp_path / "ref.txt"), "^sum"))
    (tmp_path / "out.txt").write_text("time 3\nsum 6\nOK\n")
    (tmp_path / "err.txt").write_text("")
    assert check_output(checked, tmp_path, "out.txt", "err.txt") is None
    (tmp_path / "out.txt").write_text("sum 7\nOK\n")
    assert "differs from the reference" in check_output(checked, tmp_path, "out.txt", "err.txt")
    (tmp_path / "out.txt").write_text("sum 6\n")
    assert "verify pattern" in check_output(checked, tmp_path, "out.txt", "err.txt")
    # What the output shows instead, as for a metric: the line that looks like the failed check, else its last line.
    pattern = app_from_command(str(exe), verify=make_verify("CHECK OK"))
    (tmp_path / "out.txt").write_text("steps took 3 ms\nCHECK FAILED: alive 7, reference 6\nalive cells: 7\n")
    assert check_output(pattern, tmp_path, "out.txt", "err.txt") == (
        "the output does not match the verify pattern /CHECK OK/; its last line that looks like a failure: "
        "'CHECK FAILED: alive 7, reference 6'")
    (tmp_path / "out.txt").write_text("steps took 3 ms\nalive cells: 7\n")
    assert check_output(pattern, tmp_path, "out.txt", "err.txt").endswith("; its last line: 'alive cells: 7'")
    (tmp_path / "out.txt").write_text("")
    assert check_output(pattern, tmp_path, "out.txt", "err.txt").endswith("(the standard output is empty)")
    failing = app_from_command(str(exe), verify=make_verify(command="echo bad numbers; exit 3"))
    assert "exited 3: bad numbers" in check_output(failing, tmp_path, "out.txt", "err.txt")


def test_description_from_record():
    region = {"index": 0, "chain": [{"name": "pieces", "kind": "index_partition"},
                                    {"name": "node space", "kind": "index_space"},
                                    {"name": "fields", "kind": "field_space"}],
              "privilege": "reduce", "redop": "sum_f64", "fields": ["v"], "field_sizes": [8]}
    lines = [
        {"task": "top", "task_id": 1, "launch": "single", "variants": ["CPU"], "inner": False, "leaf": False,
         "parent": None, "domain": None, "must_epoch": False, "regions": []},
        {"tunable": 11, "bytes": 4, "value": -2},
        {"task": "work", "task_id": 2, "launch": "index", "variants": ["CPU", "GPU"], "inner": False, "leaf": True,
         "parent": "top", "domain": [4], "must_epoch": False, "regions": [region]},
        {"task": "work", "task_id": 2, "launch": "single", "variants": ["CPU", "GPU"], "inner": False, "leaf": True,
         "parent": "top", "domain": None, "must_epoch": False, "regions": [region]},
    ]
    desc = describe_from_record("mine", lines)
    work = desc["tasks"][1]
    assert work["launch"] == "both" and work["domain"] == [4]
    assert work["regions"][0]["names"] == ["pieces", "node space", "fields"]
    assert work["regions"][0]["redop"] == "sum_f64"
    assert {"name": "pieces", "kind": "index_partition", "parent": "node space"} in desc["region_tree"]
    assert {"name": "fields", "kind": "field_space", "parent": None} in desc["region_tree"]
    assert desc["tunables"] == [{"id": 11, "value": -2, "type": "int32"}]


def test_description_does_not_depend_on_the_order_records_arrive_in():
    """The recording mapper writes a task's line when its first point is mapped, on whichever processor maps it
    first, so lines arrive in another order from run to run: the description must be the same in every order."""
    def chain(*names):
        return [{"name": n, "kind": k} for n, k in zip(names, ("partition", "region", "field_space")[-len(names):])]

    def task(name, task_id, launch, parent, names, domain=None):
        return {"task": name, "task_id": task_id, "launch": launch, "variants": ["CPU"], "inner": False,
                "leaf": parent is not None, "parent": parent, "domain": domain, "must_epoch": False,
                "regions": [{"index": 0, "chain": chain(*names), "privilege": "read_write", "fields": ["v"],
                             "field_sizes": [8]}] if names else []}

    lines = [task("main", 7, "single", None, ()), {"tunable": 3, "bytes": 4, "value": 2},
             # launched both ways: over a partition's subregions and over the whole region
             task("work", 9, "index", "main", ("pieces", "grid", "fs"), [2]),
             task("work", 9, "single", "main", ("grid", "fs")),
             task("reset", 8, "single", "main", ("other", "fs"))]
    descs = [describe_from_record("mine", order) for order in (lines, lines[::-1], lines[2:] + lines[:2])]
    assert descs[0] == descs[1] == descs[2]
    # Parents first, then by task ID; a task launched both ways has its index launch's domain and region names.
    assert [t["name"] for t in descs[0]["tasks"]] == ["main", "reset", "work"]
    work = descs[0]["tasks"][2]
    assert work["launch"] == "both" and work["domain"] == [2]
    assert work["regions"][0]["names"] == ["pieces", "grid", "fs"]


def test_documented_example_is_valid(tmp_path):
    """The application file shown in docs/own-app.md loads (with its executable and reference file present)."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "own-app.md").read_text()
    example = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "build").mkdir()
    program = tmp_path / "build" / "heat"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    (tmp_path / "expected.txt").write_text("result 1\n")
    app = load_app_file(write(tmp_path, example))
    assert app.name == "heat" and set(app.config.sizes) == {"ci", "small"}
    assert app.metric.unit == "ms" and app.verify.checks_output and app.env == {"OMP_NUM_THREADS": "1"}


def test_layouts_refused_when_tuning_an_unverified_program(tmp_path, exe):
    import dataclasses

    from mapperopt.benchmarks.harness import run_benchmark

    app = dataclasses.replace(app_from_command(str(exe)), refuse_layouts=True)
    result = run_benchmark(app, "Task * CPU;\nLayout * * * AOS;\n", out_dir=tmp_path / "run")
    assert result.stage == "check" and "Layout statements are refused" in result.reason
    # not known here whether the program prints a check of its own, which would not count: said either way
    assert "only a verification counts for layouts" in result.reason, result.reason
    assert "its own check where it prints one" in result.reason and "nothing verifies" not in result.reason
    assert (tmp_path / "run" / "feedback.json").is_file()


def test_a_crashing_program_under_the_default_mapper(tmp_path):
    """The program's own abort is reported with what it said, and command.txt reproduces the run with its `env:`."""
    from mapperopt.benchmarks.userapp import run_user_app

    script = tmp_path / "crash.sh"
    script.write_text("#!/bin/sh\necho \"K=$K\"\necho 'deliberate crash' >&2\nkill -ABRT $$\n")
    script.chmod(0o755)
    app = load_app_file(write(tmp_path, "executable: ./crash.sh\nsizes: {ci: {}}\nenv: {K: 'a b'}\n"))
    result = run_user_app(app, "default", out_dir=tmp_path / "run")
    assert result.status == "failed" and result.reason == "the program aborted (SIGABRT): deliberate crash"
    line = (tmp_path / "run" / "command.txt").read_text().splitlines()[-1]
    assert line.startswith("env ") and "'K=a b'" in line
    done = subprocess.run(line, shell=True, capture_output=True, text=True, cwd=tmp_path / "run")
    assert "K=a b" in done.stdout and "deliberate crash" in done.stderr


def test_a_verify_command_runs_where_its_relative_paths_point(tmp_path, monkeypatch):
    """In the application file's folder (as its `executable` and `reference` are read), or where --verify-cmd was
    given: never in the run folder, where a script beside the file is out of reach."""
    from mapperopt.cli import main

    app_dir, elsewhere = tmp_path / "heat", tmp_path / "elsewhere"
    app_dir.mkdir()
    elsewhere.mkdir()
    (app_dir / "prog").write_text("#!/bin/sh\necho 'checksum 42'\n")
    (app_dir / "prog").chmod(0o755)
    (app_dir / "check.sh").write_text('grep -q "checksum 42" "$1"\n')
    path = write(app_dir, "app: heat\nexecutable: ./prog\nsizes: {ci: {}}\n"
                          "verify: {command: 'sh check.sh \"$MAPPEROPT_STDOUT\"'}\n")
    monkeypatch.chdir(elsewhere)
    assert main(["run", "--app", str(path), "--out", str(tmp_path / "run1")]) == 0
    monkeypatch.chdir(app_dir)
    assert main(["run", "--app", "./prog", "--verify-cmd", 'sh check.sh "$MAPPEROPT_STDOUT" && pwd > where.txt',
                 "--out", str(tmp_path / "run2")]) == 0
    assert (app_dir / "where.txt").read_text().strip() == str(app_dir)
    # The options' help says the same folder (it said "the run folder")
    from click.testing import CliRunner

    from mapperopt.cli import cli

    for command in ("run", "tune", "compare"):
        text = " ".join(CliRunner().invoke(cli, [command, "--help"], terminal_width=400).output.split())
        assert "CMD exits 0 (run in the current folder" in text and "run folder," not in text, (command, text)


def test_an_unknown_size_of_a_program_says_where_sizes_come_from(tmp_path, exe):
    """A size the application file lacks goes into that file; `--app 'CMD ARGS'` has only `ci`: its arguments are
    the command's (there is no file to add a size to)."""
    with pytest.raises(MapperoptError, match="no size 'big'") as info:
        load_app_file(write(tmp_path, "executable: ./myapp\nsizes: {ci: {}}\n")).config.size("big")
    assert info.value.hint == f"add it to the application file {tmp_path / 'mapperopt.yaml'}", info.value.hint
    with pytest.raises(MapperoptError, match="no size 'big'") as info:
        app_from_command(f"{exe} -n 10").config.size("big")
    assert "after `--`" in info.value.hint and "application file" in info.value.hint, info.value.hint


def test_a_time_unit_spelt_out_is_a_time(tmp_path, capsys):
    """`unit: millisecond` (or `--unit seconds`) is a time, as `ms` is: run prints the time first (it printed
    `throughput 0.4036 1/millisecond` and no time)."""
    from mapperopt.cli import main

    exe = tmp_path / "prog"
    exe.write_text("#!/bin/sh\necho 'took 2.5 ms'\n")
    exe.chmod(0o755)
    (tmp_path / "mapperopt.yaml").write_text(f"executable: {exe}\nsizes: {{ci: {{}}}}\n"
                                             "metric: {regex: 'took ([0-9.]+)', "
                                             "unit: millisecond}\n")
    assert load_app_file(tmp_path / "mapperopt.yaml").metric.unit == "ms"
    for spelt, unit in (("Milliseconds", "ms"), ("sec", "s"), ("microseconds", "us"), ("nanosecond", "ns"),
                        ("cycles", "cycles")):
        assert make_metric("took ([0-9.]+)", spelt, False).unit == unit
    assert main(["run", "--app", str(tmp_path / "mapperopt.yaml"), "--once", "--out", str(tmp_path / "r")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "time │ 2.5 ms (throughput 0.4 1/ms)" in out, out


def test_a_key_given_twice_is_reported_with_both_lines(tmp_path, exe):
    """Two `ci:` sizes and two `verify:` blocks (a copy-paste mistake) were accepted without a word, the later one
    replacing the earlier: the check the user believed in was dropped. Each duplicate is a problem naming the key,
    where it is and both lines, reported with the file's other problems."""
    path = write(tmp_path, "app: heat\nexecutable: ./myapp\nsizes:\n  ci: {cpus: 2, args: '-n 4000'}\n"
                           "  ci: {cpus: 1, args: '-n 8000', cpus: 4}\nverify: {pattern: 'CHECK OK'}\n"
                           "verify: {pattern: 'XYZ'}\nmetrc: wall\n")
    with pytest.raises(MapperoptError) as info:
        load_app_file(path)
    message = str(info.value)
    where = str(path)
    assert message.startswith(f"{where} has 4 problems:\n"), message
    for part in (f"  - {where}: 'sizes': 'ci' is given twice, on lines 4 and 5 (the later would replace the "
                 "earlier)",
                 f"  - {where}: 'sizes': 'ci': 'cpus' is given twice, on line 5 (the later would replace the "
                 "earlier)",
                 f"  - {where}: 'verify' is given twice, on lines 6 and 7 (the later would replace the earlier)",
                 "      hint: keep one of them",
                 f"  - {where}: unknown key 'metrc'"):
        assert "\n" + part in message, (part, message)
    # A merge key (`<<: *base`) overridden by the mapping's own key is no duplicate.
    app = load_app_file(write(tmp_path, "executable: ./myapp\nsizes:\n  ci: &b {cpus: 2, args: '-n 1'}\n"
                                        "  small: {<<: *b, cpus: 4}\n"))
    assert app.config.size("small").cpus == 4 and app.args["small"] == ("-n", "1")


@pytest.mark.parametrize("sizes", ["", "sizes:\n", "sizes: {}\n"])
def test_a_missing_or_empty_sizes_is_reported(tmp_path, exe, sizes):
    """The documentation says `sizes:` needs at least one size; a file without one ran with a size `ci` of 1 CPU
    that it never asked for, without a word."""
    with pytest.raises(MapperoptError) as info:
        load_app_file(write(tmp_path, f"executable: ./myapp\n{sizes}"))
    said = "is missing" if not sizes else "has no size"
    assert info.value.message == f"{tmp_path / 'mapperopt.yaml'}: 'sizes' {said}: give at least one size", info.value
    assert info.value.hint == "e.g. `sizes: {ci: {cpus: 1}}` (ci is the size every command runs by default)", \
        info.value.hint


def test_arguments_in_the_executable_are_said_to_belong_in_args(tmp_path, exe):
    """`executable: ./myapp -n 5000` (as --app takes a command line) was "does not exist / build the program first",
    although ./myapp is built."""
    with pytest.raises(MapperoptError) as info:
        load_app_file(write(tmp_path, "executable: ./myapp -n 5000\nsizes: {ci: {}}\n"))
    assert info.value.message == (f"{tmp_path / 'mapperopt.yaml'}: 'executable': './myapp -n 5000' is the program and "
                               f"its arguments: {exe} exists, but 'executable' names the program alone"), info.value
    assert info.value.hint == 'give `executable: ./myapp` and the arguments in `args: ["-n", "5000"]` (of every ' \
                              "size, or in a size's own `args`)", info.value.hint
    with pytest.raises(MapperoptError, match="does not exist") as info:  # no such program either: build it
        load_app_file(write(tmp_path, "executable: ./other -n 5000\nsizes: {ci: {}}\n"))
    assert "hint: build the program first" in str(info.value), info.value


def test_a_list_as_an_env_value_and_reference_lines_without_reference_are_reported(tmp_path, exe):
    """`env: {FOO: [1, 2]}` reached the program as FOO='[1, 2]', and `reference_lines` without `reference` selected
    lines that nothing compared: both ran without a word."""
    with pytest.raises(MapperoptError) as info:
        load_app_file(write(tmp_path, "executable: ./myapp\nsizes: {ci: {}}\n"
                                      "env: {OMP_NUM_THREADS: 1, FOO: [1, 2], BAR: , DEBUG: yes, X: 0.5}\n"
                                      "verify: {pattern: 'CHECK OK', reference_lines: '^CHECK'}\n"))
    message = str(info.value)
    where = str(tmp_path / "mapperopt.yaml")
    assert message.startswith(f"{where} has 4 problems:\n"), message
    for part in (f"  - {where}: env: the value of 'FOO' must be a string or a number, got [1, 2]",
                 f"  - {where}: env: the value of 'BAR' must be a string or a number, got nothing",
                 f"  - {where}: env: the value of 'DEBUG' must be a string or a number, got True",
                 "      hint: quote it to pass it as written: DEBUG: \"yes\"",
                 f"  - {where}: verify: 'reference_lines' chooses the lines compared with 'reference', which is "
                 "not given",
                 "      hint: add `reference: FILE` (the expected output), or remove reference_lines"):
        assert "\n" + part in message, (part, message)
    app = load_app_file(write(tmp_path, "executable: ./myapp\nsizes: {ci: {}}\nenv: {N: 1, X: 0.5, S: 'a b'}\n"))
    assert app.env == {"N": "1", "X": "0.5", "S": "a b"}


def test_whitespace_a_folded_explanation_hides_is_spelt_out_after_a_metric_pattern(tmp_path, exe):
    """AutoGuide's explanation folds runs of spaces: `solve  took (...)` read as `solve took (...)`, the line it
    missed, so the typo could not be seen."""
    app = app_from_command(str(exe), metric=make_metric("solve  took ([0-9.]+) ms\t", "ms", False))
    why = measure(app, "solve took 3 ms\n", 1.0)[1]
    assert why.startswith("the metric /solve  took ([0-9.]+) ms\t/ (2 spaces after 'solve', whitespace '\\t' at its "
                          "end) does not occur in the standard output or standard error; its line 'solve took 3 ms' "
                          "differs from the pattern only in spacing"), why


def test_a_number_or_list_where_a_pattern_unit_or_command_is_expected_is_one_problem_among_all(tmp_path, exe):
    """`verify: {pattern: 3}`, `pattern: [a]`, `reference_lines: 5`, `metric: {regex: 5}` and `unit: 5` ended in a
    Python traceback that hid the file's other problems, and `verify: {command: 3}` was accepted: each is now a
    problem of the list, naming the key and its line."""
    (tmp_path / "exp.txt").write_text("CHECK OK\n")
    where = str(tmp_path / "mapperopt.yaml")
    with pytest.raises(MapperoptError) as info:
        load_app_file(write(tmp_path, "executable: ./myapp\nsizes: {ci: {}}\n"
                                      "env: {Z: no}\n"
                                      "verify:\n  pattern: 3\n  command: 3\n"
                                      "  reference: exp.txt\n  reference_lines: [a]\n"
                                      "metric:\n  regex: 5\n  unit: 5\n"))
    message = str(info.value)
    assert message.startswith(f"{where} has 6 problems:\n"), message
    for part in (f"  - {where}: env: the value of 'Z' must be a string or a number, got False",
                 "      hint: quote it to pass it as written: Z: \"no\"",
                 f"  - {where}: metric: 'regex' on line 10 must be a string (a regular expression), got 5",
                 "      hint: quote it: regex: '5'",
                 f"  - {where}: metric: 'unit' on line 11 must be a string, got 5",
                 f"  - {where}: verify: 'pattern' on line 5 must be a string (a regular expression), got 3",
                 "      hint: quote it: pattern: '3'",
                 f"  - {where}: verify: 'command' on line 6 must be a string (a shell command), got 3",
                 f"  - {where}: verify: 'reference_lines' on line 8 must be a string (a regular expression), "
                 "got ['a']"):
        assert "\n" + part in message, (part, message)
    assert "Traceback" not in message
    # A list alone for the pattern: reported too (it was `TypeError: unhashable type: 'list'`).
    with pytest.raises(MapperoptError, match=r"verify: 'pattern' on line 3 must be a string \(a regular "
                                             r"expression\), got \['a'\]"):
        load_app_file(write(tmp_path, "executable: ./myapp\nsizes: {ci: {}}\nverify: {pattern: [a]}\n"))
    app = load_app_file(write(tmp_path, "executable: ./myapp\nsizes: {ci: {}}\nverify: {pattern: '3'}\n"
                                        "env: {Z: 'no'}\n"))
    assert app.verify.pattern == "3" and app.env == {"Z": "no"}


def test_a_yaml_syntax_error_names_the_file(tmp_path, exe):
    """A YAML syntax error said `in "<unicode string>", line 3, column 8` instead of the file's name."""
    path = write(tmp_path, "executable: ./myapp\nsizes: {ci: {cpus: 2}\n")
    with pytest.raises(MapperoptError) as info:
        load_app_file(path)
    message = str(info.value)
    assert message.startswith(f"{path} is not valid YAML") and "<unicode string>" not in message, message
    assert f'in "{path}", line 2' in message, message


@pytest.mark.parametrize("text, line, column", [
    ("executable: ./myapp\nsizes:\n  ci:\n\targs: '-n 1000'\n", 4, 1),  # a tab indenting a key
    ("executable: ./myapp\nsizes:\n  ci:\n    cpus: 2\n  \t  gpus: 0\n", 5, 3),  # one among spaces
])
def test_a_tab_in_an_app_file_gets_a_hint_that_yaml_indents_with_spaces(tmp_path, exe, text, line, column):
    """A tab indenting the file was PyYAML's message alone ("found character that cannot start any token"): the hint
    names the tab's line and column and says that YAML indents with spaces; a syntax error at no tab has no hint."""
    with pytest.raises(MapperoptError) as info:
        load_app_file(write(tmp_path, text))
    assert str(info.value).startswith(f"{tmp_path / 'mapperopt.yaml'} is not valid YAML"), info.value
    assert info.value.hint == f"line {line}, column {column} is a tab: YAML indents with spaces, never tabs"
    with pytest.raises(MapperoptError) as info:
        load_app_file(write(tmp_path, text.replace("\t", "    ").replace("sizes:", "sizes: {")))
    assert info.value.hint is None, info.value.hint


@pytest.mark.parametrize("args", [["run", "--once", "--app"], ["check", "--app"], ["tune", "--iters", "1", "--app"],
                                  ["compare", "--iters", "1", "--app"]])
def test_an_app_file_that_is_not_utf8_is_one_error_at_its_first_bad_byte(tmp_path, args, capsys, monkeypatch):
    """A latin-1 application file was a UnicodeDecodeError traceback in every command: the error names the file, the
    line and column (in characters) of its first bad byte and the byte, as a DSL file's E112 does."""
    from mapperopt.cli import main

    monkeypatch.chdir(tmp_path)  # tune and compare: their runs/ folder
    (tmp_path / "a.dsl").write_text("Task * CPU;\n")
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"app: demo\n# \xc3\xa9t\xc3\xa9: caf\xe9\nexecutable: ./plain\nsizes: {ci: {}}\n")
    assert main([*args, str(path)] if args[0] != "check" else ["check", "a.dsl", *args[1:], str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}:2:11: not UTF-8 text (byte 0xe9)\n"), err
    assert "hint: an application file is UTF-8 text: save it as UTF-8 (e.g. iconv -f latin1 -t utf-8)" in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize("args", [["run", "--once", "--app"], ["check", "a.dsl", "--app"]])
@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_an_app_file_that_is_not_a_regular_file_is_refused_unread(tmp_path, args, kind):
    """/dev/zero behind a .yaml name was read whole (all the memory, then a MemoryError traceback) and a FIFO hung
    for a writer: both are refused, unread, naming the kind of file. In a child under a 1 GiB address space limit and
    a timeout, as the bug took the memory or never returned."""
    import resource
    import sys

    path = tmp_path / "app.yaml"
    if kind == "device":
        path.symlink_to("/dev/zero")
    else:
        os.mkfifo(path)
    (tmp_path / "a.dsl").write_text("Task * CPU;\n")
    done = subprocess.run([str(Path(sys.executable).with_name("mapperopt")), *args, str(path)], capture_output=True,
                          text=True, timeout=60, cwd=tmp_path,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)))
    assert done.returncode == 1, done.stderr
    what = "a character device" if kind == "device" else "a FIFO"
    assert done.stderr.startswith(f"error: {path} is not a regular file ({what}): an application file is a file of "
                                  "text"), done.stderr
    assert "Traceback" not in done.stderr


def test_an_app_file_over_the_size_limit_is_refused_with_its_size(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("app: demo\n" + "#" * (1 << 20) + "\nexecutable: ./plain\nsizes: {ci: {}}\n")
    with pytest.raises(MapperoptError) as info:
        load_app_file(path)
    assert str(info.value).startswith(f"{path} has {path.stat().st_size:,} bytes: an application file has at most "
                                      "1 MiB (1,048,576 bytes)\n  hint: an application file is tens of lines"), \
        info.value
