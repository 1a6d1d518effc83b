"""What `mapperopt run` says after its table about a run that went "ok" but not as the user may believe: memories of
the mapper's lists that the run skipped (the mapper's notes R452, tests/app/graph.cc with RDMEM too small for its
regions), an output that nothing checks although it prints a failure (a wrapper script around tests/app/timed.cc),
and the note on traced-loop replays only for a program that may trace a loop."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mapperopt.cli import main

_R452 = re.compile(r"^\[mapperopt\] note R452: requirement (\d+) (?:\(.*?\) )?of task '(.*)': (\w+) skipped",
                   re.MULTILINE)


def _run_json(capsys, *args: str) -> tuple[int, dict]:
    code = main(["run", "--json", *args])
    return code, json.loads(capsys.readouterr().out)


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["run", *args])
    out = capsys.readouterr()
    return code, " ".join(out.out.split()), " ".join(out.err.split())


def test_run_summarizes_the_memories_the_mapper_skipped(graph_exe, tmp_path, capsys, monkeypatch):
    """RDMEM first in the list, sized 1 MiB, is too small for graph's regions of 1.2 MB: the run used SYSMEM for
    them (R452 in its stderr file) and `run` said only "ok". A leaf task's VIRTUAL is skipped the same way (and
    `check`, run first, warns of it: W329)."""
    monkeypatch.chdir(tmp_path)
    Path("m.dsl").write_text("Task * CPU;\nRegion spmv ghost CPU VIRTUAL;\nRegion * * CPU RDMEM,SYSMEM;\n")
    code, out, err = _run(capsys, "--app", f"{graph_exe} -steps 1 -n 50000 -e 60000 -p 2", "--mapper", "m.dsl",
                          "--once", "--out", "run", "--", "-ll:rsize", "1")
    assert code == 0 and "│ status │ ok │" in out, out + err
    assert "warning[W329]: a leaf task cannot use a virtual instance" in err, err
    notes = _R452.findall((tmp_path / "run" / "stderr.txt").read_text())
    skipped = {(task, int(index)) for index, task, _ in notes}
    assert ("init_nodes", 0) in skipped and ("spmv", 2) in skipped, notes
    [header] = re.findall(r"note R452: for (\d+) requirements? the mapper's first memory was skipped", out)
    assert int(header) == len(skipped), (out, notes)
    assert "RDMEM -> SYSMEM (allocation failed (capacity 1048576 bytes; -ll:rsize sizes it))" in out, out
    assert "init_nodes requirement 0 (nodes)" in out, out
    assert "VIRTUAL -> " in out and "(the variant is a leaf task)" in out and "spmv requirement 2 (ghost)" in out, out
    assert "the run folder's stderr.txt has each note" in out, out
    # a mapper whose first memories fit says nothing of R452
    Path("fit.dsl").write_text("Task * CPU;\nRegion * * CPU SYSMEM;\n")
    code, out, err = _run(capsys, "--app", f"{graph_exe} -steps 1 -n 50000 -e 60000 -p 2", "--mapper", "fit.dsl",
                          "--once", "--out", "fit", "--", "-ll:rsize", "1")
    assert code == 0 and "R452" not in out, out + err


def test_run_hints_at_an_unchecked_failure_and_notes_replays_only_for_a_tracing_program(timed_exe, tmp_path, capsys,
                                                                                         monkeypatch):
    """A run that checks only the exit status, of a program whose output says FAIL, was "ok" with no word of it;
    `--trace` explained begin_trace/end_trace replays for a program that never calls begin_trace."""
    monkeypatch.chdir(tmp_path)
    Path("m.dsl").write_text("Task * CPU;\n")
    script = tmp_path / "check.sh"
    script.write_text(f'#!/bin/sh\n"{timed_exe}" "$@" || exit $?\necho "max rel err 6.5e-01: FAIL"\n')
    script.chmod(0o755)
    metric = ["--metric", r"elapsed: (\S+) ms", "--unit", "ms"]
    code, out, err = _run(capsys, "--app", "./check.sh", *metric, "--mapper", "m.dsl", "--once", "--trace",
                          "--out", "script")
    assert code == 0 and "│ status │ ok │" in out, out + err
    assert "'max rel err 6.5e-01: FAIL'" in out and "nothing checks the output" in out, out
    assert "Output not checked:" in out and "a correct output matches: `--verify-pattern REGEX`" in out, out
    # a script: the program it names is read, and it never calls begin_trace
    assert "begin_trace" not in out, out
    # with a verify pattern the output is checked: no hint
    code, out, err = _run(capsys, "--app", "./check.sh", *metric, "--verify-pattern", "elapsed", "--mapper", "m.dsl",
                          "--once", "--out", "checked")
    assert code == 0 and "│ verified │ yes" in out and "Output not checked" not in out, out + err
    # the program itself: no begin_trace among its symbols, no failure in its output
    code, out, err = _run(capsys, "--app", str(timed_exe), *metric, "--mapper", "m.dsl", "--once", "--trace",
                          "--out", "plain")
    assert code == 0 and "trace.jsonl" in out, out + err
    assert "begin_trace" not in out and "nothing checks the output" in out and "Output not checked" not in out, out
    # an application file without a verify key: the hint names the key
    Path("app.yaml").write_text("executable: ./check.sh\nsizes: {ci: {cpus: 1}}\n"
                                "metric: {regex: 'elapsed: (\\S+) ms', unit: ms}\n")
    code, out, err = _run(capsys, "--app", "app.yaml", "--mapper", "m.dsl", "--once", "--out", "file")
    assert code == 0 and "'max rel err 6.5e-01: FAIL'" in out, out + err
    assert "`verify: {pattern: REGEX}` in app.yaml" in out, out


def test_run_json_carries_the_notes_on_skipped_memories(graph_exe, tmp_path, capsys, monkeypatch):
    """`run --json` printed result.json alone: a script reading it never learnt that the mapper's first memories were
    skipped (R452), which `run` says after its table. Its `notes` hold the same words, with a stable kind and code;
    none where the first memories fit."""
    monkeypatch.chdir(tmp_path)
    Path("m.dsl").write_text("Task * CPU;\nRegion * * CPU RDMEM,SYSMEM;\n")
    app = ["--app", f"{graph_exe} -steps 1 -n 50000 -e 60000 -p 2", "--once"]
    code, result = _run_json(capsys, *app, "--mapper", "m.dsl", "--out", "run", "--", "-ll:rsize", "1")
    assert code == 0 and result["status"] == "ok", result
    [note] = [n for n in result["notes"] if n["kind"] == "memory_fallback"]
    assert note["code"] == "R452", note
    assert note["text"].startswith("note R452: for "), note
    assert "RDMEM -> SYSMEM (allocation failed (capacity 1048576 bytes; -ll:rsize sizes it))" in note["text"], note
    assert "init_nodes requirement 0 (nodes)" in note["text"], note
    # the table's notes are these: the human output prints the same text
    code, out, err = _run(capsys, *app, "--mapper", "m.dsl", "--out", "human", "--", "-ll:rsize", "1")
    assert code == 0 and " ".join(note["text"].split()) in out, (note, out)
    Path("fit.dsl").write_text("Task * CPU;\nRegion * * CPU SYSMEM;\n")
    code, result = _run_json(capsys, *app, "--mapper", "fit.dsl", "--out", "fit", "--", "-ll:rsize", "1")
    # the notes left: the program prints its check's result (`check: OK`) that nothing reads, and a time (`solve
    # took ... ms`) that no --metric reads
    assert code == 0 and [n["kind"] for n in result["notes"]] == ["unchecked_success", "unread_time"], result


def test_run_json_carries_the_note_on_an_unchecked_failure(timed_exe, tmp_path, capsys, monkeypatch):
    """`run --json` of a program that printed FAIL with nothing but the exit status checking it said "ok" with no
    word of the failure that `run` prints as "Output not checked": its `notes` carry it, and none where a verify
    pattern checks the output."""
    monkeypatch.chdir(tmp_path)
    Path("m.dsl").write_text("Task * CPU;\n")
    script = tmp_path / "check.sh"
    script.write_text(f'#!/bin/sh\n"{timed_exe}" "$@" || exit $?\necho "max rel err 6.5e-01: FAIL"\n')
    script.chmod(0o755)
    metric = ["--metric", r"elapsed: (\S+) ms", "--unit", "ms", "--mapper", "m.dsl", "--once"]
    code, result = _run_json(capsys, "--app", "./check.sh", *metric, "--out", "script")
    assert code == 0 and result["status"] == "ok", result
    [note] = result["notes"]
    assert note["kind"] == "unchecked_failure" and note["code"] is None, note
    assert "'max rel err 6.5e-01: FAIL'" in note["text"] and "--verify-pattern REGEX" in note["text"], note
    assert "stdout.txt in the run folder" in note["text"], note
    code, result = _run_json(capsys, "--app", "./check.sh", *metric, "--verify-pattern", "elapsed", "--out", "checked")
    assert code == 0 and result["notes"] == [], result


def test_tune_says_each_note_of_its_runs_once_in_runs_words(graph_exe, tmp_path, capsys, monkeypatch):
    """`tune` never said what `run` notes after its table (an output that says FAIL with nothing checking it, the
    memories the mapper skipped): each note is said after the line of the iteration whose run first gave it, in
    `run`'s words (`run --json`'s `notes`), and not again for a later iteration with the same note."""
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "check.sh"
    script.write_text(f'#!/bin/sh\n"{graph_exe}" "$@" || exit $?\necho "max rel err 6.5e-01: FAIL"\n')
    script.chmod(0o755)
    Path("start.dsl").write_text("Task * CPU;\nRegion * * CPU RDMEM,SYSMEM;\n")
    app = ["--app", "./check.sh -steps 1 -n 50000 -e 60000 -p 2"]
    code, result = _run_json(capsys, *app, "--mapper", "start.dsl", "--once", "--out", "run", "--", "-ll:rsize", "1")
    assert code == 0 and {n["kind"] for n in result["notes"]} == {"unchecked_failure", "unread_time",
                                                                   "memory_fallback"}, result
    code = main(["tune", *app, "--start", "start.dsl", "--iters", "3", "--baseline", "none", "--repeats", "1",
                 "--max-repeats", "1", "--final-rounds", "1", "--runs-dir", "runs", "--", "-ll:rsize", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    flat = " ".join(out.split())
    first = flat.index("iter 1/3")
    for note in result["notes"]:  # iteration 1 runs the start program: the same notes as `run`'s
        text = " ".join(note["text"].split())
        assert flat.count(text) == 1 and first < flat.index(text) < flat.index("iter 2/3"), (text, out)
    assert flat.count("Output not checked:") == 1 and flat.count("nothing checks the output") == 1, out
    assert "iteration 1's run" in flat, out


def test_compare_says_each_note_of_its_runs_once_in_runs_words(timed_exe, tmp_path, capsys, monkeypatch):
    """`compare` too: an output that says FAIL with nothing checking it is said once, after the progress line of the
    first iteration whose run gave it, in `run`'s words."""
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "check.sh"
    script.write_text(f'#!/bin/sh\n"{timed_exe}" "$@" || exit $?\necho "max rel err 6.5e-01: FAIL"\n')
    script.chmod(0o755)
    Path("start.dsl").write_text("Task * CPU;\n")
    app = ["--app", "./check.sh", "--metric", r"elapsed: (\S+) ms", "--unit", "ms"]
    code, result = _run_json(capsys, *app, "--mapper", "start.dsl", "--once", "--out", "run")
    [note] = result["notes"]
    assert code == 0 and note["kind"] == "unchecked_failure", result
    code = main(["compare", *app, "--start", "start.dsl", "--optimizers", "random", "--runs", "1", "--iters", "2",
                 "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1", "--runs-dir", "runs"])
    out = capsys.readouterr().out
    assert code == 0, out
    flat = " ".join(out.split())
    text = " ".join(note["text"].split())
    assert flat.count(text) == 1 and flat.index("random #1 iter 1/2") < flat.index(text), (text, out)
    assert flat.index(text) < flat.index("random #1 iter 2/2"), out
    assert flat.count("Output not checked:") == 1, out


def test_run_and_tune_offer_the_verify_pattern_a_passing_output_prints(timed_exe, tmp_path, capsys, monkeypatch):
    """A program that prints `Result: PASSED` with nothing but its exit status checked: a mapper that made it compute
    wrong numbers would still run "ok", and nothing said that the line it prints could catch that. `run` (and `run
    --json`'s notes) and `tune` offer it as the verify pattern, the application file's key for a file; not where a
    pattern checks the output, nor for a line that says the check did not pass."""
    monkeypatch.chdir(tmp_path)
    Path("m.dsl").write_text("Task * CPU;\n")
    for name, line in (("passes.sh", "Result: PASSED"), ("negated.sh", "result not correct")):
        script = tmp_path / name
        script.write_text(f'#!/bin/sh\n"{timed_exe}" "$@" || exit $?\necho "{line}"\n')
        script.chmod(0o755)
    metric = ["--metric", r"elapsed: (\S+) ms", "--unit", "ms"]
    code, out, err = _run(capsys, "--app", "./passes.sh", *metric, "--mapper", "m.dsl", "--once", "--out", "script")
    assert code == 0 and "│ status │ ok │" in out, out + err
    assert ("Output not checked: nothing checks the output but the exit status, though the program printed "
            "'Result: PASSED' (stdout.txt in the run folder); so that a run with wrong results fails, give the "
            "pattern a correct output prints: `--verify-pattern PASSED`") in out, out
    code, result = _run_json(capsys, "--app", "./passes.sh", *metric, "--mapper", "m.dsl", "--once", "--out", "json")
    assert code == 0 and [n["kind"] for n in result["notes"]] == ["unchecked_success"], result
    # the pattern offered checks it: given, the output is checked and nothing more is said
    code, out, err = _run(capsys, "--app", "./passes.sh", *metric, "--verify-pattern", "PASSED", "--mapper", "m.dsl",
                          "--once", "--out", "checked")
    assert code == 0 and "│ verified │ yes" in out and "Output not checked" not in out, out + err
    code, out, err = _run(capsys, "--app", "./negated.sh", *metric, "--mapper", "m.dsl", "--once", "--out", "negated")
    assert code == 0 and "Output not checked" not in out, out + err
    # an application file without a verify key: its key
    Path("app.yaml").write_text("executable: ./passes.sh\nsizes: {ci: {cpus: 1}}\n"
                                "metric: {regex: 'elapsed: (\\S+) ms', unit: ms}\n")
    code, out, err = _run(capsys, "--app", "app.yaml", "--mapper", "m.dsl", "--once", "--out", "file")
    assert code == 0 and "`verify: {pattern: PASSED}` in app.yaml" in out, out + err
    # tune says it once, after the iteration whose run first printed it
    assert main(["tune", "--app", "./passes.sh", *metric, "--start", "m.dsl", "--iters", "2", "--baseline", "none",
                 "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1", "--runs-dir", "runs"]) == 0
    flat = " ".join(capsys.readouterr().out.split())
    assert flat.count("`--verify-pattern PASSED`") == 1 and flat.index("iter 1/2") < flat.index("PASSED'"), flat


def test_trace_note_reads_the_program_a_script_runs_and_is_a_condition_where_unknown(timed_exe, tmp_path, capsys,
                                                                                    monkeypatch):
    """`run --trace` of `./run.sh` (`exec "$(dirname "$0")/build/app" "$@"`), whose program never calls begin_trace,
    said that "the iterations Legion replays from a loop the program traces ... have no lines", and at 80 columns
    broke `-- -lg:no_physical_tracing` across two lines. The program the script names is read (no note); for a
    script whose program cannot be found the note is a condition, the flag whole on one line."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    Path("m.dsl").write_text("Task * CPU;\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "timed").symlink_to(timed_exe)
    Path("run.sh").write_text('#!/bin/sh\nexec "$(dirname "$0")/build/timed" "$@"\n')
    Path("hidden.sh").write_text('#!/bin/sh\nexec "$TIMED_PROGRAM" "$@"\n')  # named outside the script
    for name in ("run.sh", "hidden.sh"):
        Path(name).chmod(0o755)
    metric = ["--metric", r"elapsed: (\S+) ms", "--unit", "ms", "--mapper", "m.dsl", "--once", "--trace"]
    code, out, err = _run(capsys, "--app", "./run.sh", *metric, "--out", "named")
    assert code == 0 and "trace.jsonl" in out, out + err
    assert "begin_trace" not in out and "replays" not in out, out
    monkeypatch.setenv("TIMED_PROGRAM", str(timed_exe))
    assert main(["run", "--app", "./hidden.sh", *metric, "--out", "hidden"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("│")]  # the table's
    assert all(len(line) <= 80 for line in lines), lines
    flat = " ".join(" ".join(line.strip("│ ") for line in lines).split())
    assert ("if the program traces a loop (begin_trace/end_trace), the iterations Legion replays from it ask no "
            "mapper and have no lines") in flat, flat
    assert any("`-- -lg:no_physical_tracing`" in line for line in lines), lines


def _next_word(text: str) -> str:
    """The start of `text` that a wrap keeps whole: a backquoted command (after a parenthesis) or a word."""
    quoted = re.match(r"\(?`[^`]*`\S*", text)
    return quoted.group(0) if quoted else text.split(" ", 1)[0]


@pytest.mark.parametrize("columns", [80, 100, 140])  # 100: a width this note's lines came out too long at
def test_trace_note_wraps_once_at_the_value_columns_width(timed_exe, tmp_path, capsys, monkeypatch, columns):
    """A measured run's table has keys wider than "run folder" ("90 % interval"): the note on traced-loop replays,
    wrapped for a value column that wide, was wrapped again by the table, leaving a word alone on a line ("they").
    Each of its lines but the last is now full: the next line's first word would not have fitted on it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.setenv("TIMED_PROGRAM", str(timed_exe))
    Path("m.dsl").write_text("Task * CPU;\n")
    Path("hidden.sh").write_text('#!/bin/sh\nexec "$TIMED_PROGRAM" "$@"\n')  # its program unknown: the note's
    Path("hidden.sh").chmod(0o755)                                            # longer, conditional form
    assert main(["run", "--app", "./hidden.sh", "--metric", r"elapsed: (\S+) ms", "--unit", "ms", "--mapper",
                 "m.dsl", "--trace", "--repeats", "3", "--max-repeats", "3", "--out", "traced"]) == 0
    rows = [line.split("│") for line in capsys.readouterr().out.splitlines() if line.startswith("│")]
    assert "90 % interval" in [row[1].strip() for row in rows], rows
    assert all(len("│".join(row)) <= columns for row in rows), rows
    width = len(rows[0][2]) - 2  # the value column, less its padding
    values = [row[2].strip() for row in rows]
    first = next(i for i, value in enumerate(values) if value.startswith("if the program traces a loop"))
    note = values[first:]
    assert " ".join(note).endswith("(`-- -lg:no_physical_tracing` maps and traces every one)"), note
    assert len(note) > 1 and all(len(line) + 1 + len(_next_word(after)) > width
                                 for line, after in zip(note, note[1:])), (width, note)


def test_a_continued_tune_does_not_say_its_journals_notes_again(timed_exe, tmp_path, capsys, monkeypatch):
    """"Output not checked: ..." was said after iteration 1 and again when the same command, with a larger --iters,
    continued the tune (iteration 1 replayed "from the journal"): each note is said once per tuning folder."""
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "check.sh"
    script.write_text(f'#!/bin/sh\n"{timed_exe}" "$@" || exit $?\necho "max rel err 6.5e-01: FAIL"\n')
    script.chmod(0o755)
    tune = ["tune", "--app", "./check.sh", "--metric", r"elapsed: (\S+) ms", "--unit", "ms", "--baseline", "none",
            "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1", "--runs-dir", "runs"]
    assert main([*tune, "--iters", "1"]) == 0
    assert " ".join(capsys.readouterr().out.split()).count("Output not checked:") == 1
    assert main([*tune, "--iters", "2"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "iter 1/2" in out and "(from the journal)" in out and "iter 2/2" in out, out
    assert "Output not checked:" not in out, out


def test_a_continued_comparison_does_not_say_its_journals_notes_again(timed_exe, tmp_path, capsys, monkeypatch):
    """`compare`, continued by the same command with a larger --iters, said "Output not checked: ..." again after
    its run's next iteration: the notes its runs' journaled iterations said were not counted as said. Each note is
    said once per tuning run, as `tune` says it once per folder."""
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "check.sh"
    script.write_text(f'#!/bin/sh\n"{timed_exe}" "$@" || exit $?\necho "max rel err 6.5e-01: FAIL"\n')
    script.chmod(0o755)
    Path("start.dsl").write_text("Task * CPU;\n")
    compare = ["compare", "--app", "./check.sh", "--metric", r"elapsed: (\S+) ms", "--unit", "ms", "--start",
               "start.dsl", "--optimizers", "random", "--runs", "1", "--repeats", "1", "--max-repeats", "1",
               "--final-rounds", "1", "--runs-dir", "runs"]
    assert main([*compare, "--iters", "1"]) == 0
    assert " ".join(capsys.readouterr().out.split()).count("Output not checked:") == 1
    assert main([*compare, "--iters", "2"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Resuming" in out and "random #1 iter 2/2" in out, out
    assert "Output not checked:" not in out, out


@pytest.mark.parametrize("line, pattern", [
    ("RESULT OK", "RESULT OK"), ("step 3: RESULT OK", "RESULT OK"), ("checksum 12.0 OK", "checksum .* OK"),
    ("sum(x) = 1.5e-3 OK", r"sum\(x\) = .* OK"), ("check: OK", "check: OK"), ("PASS", "PASS"),
    ("all 4 tests PASS", "tests PASS"), ("Verification PASSED", "PASSED")])
def test_the_verify_pattern_offered_for_a_success_line_matches_it_and_lines_like_it(line, pattern):
    """The pattern offered for a program's success line (`Output not checked`) matches that line, and for OK or
    PASS keeps the words before it: `checksum 12.0 OK` gave just `OK`, which any other OK matches."""
    from mapperopt.benchmarks.userapp import success_pattern

    offered = success_pattern(line)
    assert offered == pattern and re.search(offered, line), (line, offered)
    if offered not in ("PASS", "PASSED"):  # a word alone: nothing before it to ask for
        assert not re.search(offered, offered.split()[-1]), offered
