"""Rebuilding the program while `tune --app` runs mixed two builds without a word (a continued run refuses a
folder whose executable changed; a running tune did not notice): the tune checks the executable before each
iteration and before its final comparison, and stops at a change, naming which iterations measured which build and
how to go on; every iteration already measured stays in the folder."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time

from userapp_support import quick_tune_args, tuning

from mapperopt.optimizer.store import TuneStore


def flat(text: str) -> str:
    return " ".join(text.split())


def test_a_rebuild_during_the_tune_stops_it_and_keeps_what_it_measured(tmp_path, foreign_exe, offline_optimizer):
    exe = tmp_path / "build" / "foreign"
    exe.parent.mkdir()
    shutil.copy2(foreign_exe, exe)
    runs = tmp_path / "runs"
    with tuning(quick_tune_args(f"{exe} -n 1000 -steps 1", runs, iters=6), runs, stdout=subprocess.PIPE) as proc:
        rebuilt = exe.with_name("foreign.new")  # another build, moved into place as a build does
        shutil.copy2(exe, rebuilt)
        with open(rebuilt, "ab") as f:
            f.write(b"\0rebuilt")
        os.replace(rebuilt, exe)
        out, err = proc.communicate(timeout=300)
    (root,) = runs.glob("*/tune-*")
    done = len(TuneStore.open(root).records)
    err = flat(err)
    assert proc.returncode == 1, (out, err)
    assert f"error: {exe} changed while this tune ran (SHA-256 " in err, err
    assert f"iteration {done} ran while it was replaced and may have measured either build" in err, err
    if done > 1:
        earlier = "iteration 1" if done == 2 else f"iterations 1-{done - 1}"
        assert f"{earlier} measured the build {root} was made with" in err, err
    assert "--new" in err and f"{done} iteration" in err, err
    # the new run's command keeps the user's own options (it dropped --iters, --cpus, --repeats...)
    new = err[err.index("start a new run: `") + len("start a new run: `"):].split("`")[0]
    assert all(w in new for w in ("--cpus 2", "--baseline none", "--repeats 1", "--max-repeats 1",
                                  f"--runs-dir {runs}", "--new", "--iters 6")), new
    assert 1 <= done < 6 and (root / "best.dsl").exists()  # kept
    assert not (root / "summary.json").exists()  # no final comparison of two builds


def test_after_a_rebuild_and_a_finished_new_run_the_same_command_starts_afresh(tmp_path, foreign_exe,
                                                                                offline_optimizer, capsys):
    """After a tune stopped by a rebuild, its hint's `--new` run of the new build finished; the same command then
    picked the older, unfinished folder of the old build and refused it ("made with another build"), where a
    finished run's command starts a new one."""
    from mapperopt.cli import main

    exe = tmp_path / "build" / "foreign"
    exe.parent.mkdir()
    shutil.copy2(foreign_exe, exe)
    runs = tmp_path / "runs"
    args = quick_tune_args(f"{exe} -n 1000 -steps 1", runs, iters=2)
    with tuning(args, runs):
        pass  # killed after its first iteration: an unfinished folder of this build
    (old,) = runs.glob("*/tune-*")
    with open(exe, "ab") as f:  # another build
        f.write(b"\0rebuilt")
    assert main([*args, "--new"]) == 0
    capsys.readouterr()
    assert main(args) == 0, flat(capsys.readouterr().err)
    out = flat(capsys.readouterr().out)
    assert "finished (2 iterations); starting a new one" in out, out
    assert len(list(runs.glob("*/tune-*"))) == 3 and old.exists()


def test_an_iteration_that_failed_with_no_category_says_its_reason_on_its_line(tmp_path):
    """The iteration that ran while g++ rewrote the executable printed `iter 3/4  failed (start)  -  best ...
    unknown  ...`: neither the stage nor the category told why; result.json's reason ("cannot start ...: not found
    or not executable") was shown nowhere. The line ends with it."""
    from mapperopt.optimizer import commands
    from mapperopt.optimizer.base import IterationRecord

    reason = f"cannot start {tmp_path / 'daxpy'}: not found or not executable"
    r = IterationRecord(iter=3, dsl="Task * CPU;\n", key="k3", status="failed", stage="start", category="unknown",
                        throughput=None, unit="s", best_throughput=1.6, best_iter=1,
                        note="neighbour of the best, iteration 1", result={"reason": reason, "stage": "start"})
    line = flat(commands._line(r, 4, "s"))
    assert line.endswith(f"neighbour of the best, iteration 1 (failed: {reason})"), line


def _comparison(tmp_path, foreign_exe, *extra: str):
    """A copy of the program under tmp_path/build, the runs folder, and the arguments of a small random comparison of
    it (6 iterations, one execution each) with `extra` at the end."""
    exe = tmp_path / "build" / "foreign"
    exe.parent.mkdir()
    shutil.copy2(foreign_exe, exe)
    runs = tmp_path / "runs"
    return exe, runs, ["compare", "--app", f"{exe} -n 1000 -steps 1", "--cpus", "2", "--optimizers", "random",
                       "--runs", "1", "--iters", "6", "--start", "default", "--repeats", "1", "--max-repeats", "1",
                       "--final-rounds", "1", "--runs-dir", str(runs), *extra]


def test_a_rebuild_during_a_comparison_stops_it_and_the_old_build_continues_it(tmp_path, foreign_exe,
                                                                               offline_optimizer, capsys):
    """`compare --app` did not check the executable while it ran: a rebuild mid-comparison mixed two builds in its
    runs and final measurement without a word. It stops, naming the run and which iterations measured which build;
    what it measured is kept, and with the old build back the same command continues it."""
    from mapperopt.cli import main

    exe, runs, args = _comparison(tmp_path, foreign_exe)
    journal = "*/compare-*/random-1/state.jsonl"
    with tuning(args, runs, stdout=subprocess.PIPE, journal=journal) as proc:
        rebuilt = exe.with_name("foreign.new")
        shutil.copy2(exe, rebuilt)
        with open(rebuilt, "ab") as f:
            f.write(b"\0rebuilt")
        os.replace(rebuilt, exe)
        out, err = proc.communicate(timeout=300)
    (folder,) = runs.glob("*/compare-*")
    run = folder / "random-1"
    done = len(TuneStore.open(run).records)
    err = flat(err)
    assert proc.returncode == 1, (out, err)
    assert f"error: {exe} changed while this comparison ran (SHA-256 " in err, err
    assert f"random-1: iteration {done} ran while it was replaced and may have measured either build" in err, err
    if done > 1:
        earlier = "iteration 1" if done == 2 else f"iterations 1-{done - 1}"
        assert f"{earlier} measured the build {run} was made with" in err, err
    assert f"nothing measured is lost: {folder} keeps" in err and "--new" in err, err
    assert 1 <= done < 6
    assert not (folder / "summary.json").exists()  # no final measurement of two builds
    kept = (run / "state.jsonl").read_text()
    shutil.copy2(foreign_exe, exe)  # the old build back: the same command continues the comparison
    assert main(args) == 0, flat(capsys.readouterr().err)
    assert (run / "state.jsonl").read_text().startswith(kept)
    assert len(TuneStore.open(run).records) == 6 and (folder / "summary.json").exists()


def test_a_rebuild_of_the_program_a_wrapper_script_runs_stops_the_tune(tmp_path, foreign_exe, offline_optimizer):
    """`--app ./run.sh`, a script that execs the program: only the script's bytes were checked, so a rebuild of
    the program it runs went unseen. The programs the script names (by absolute path, or relative to its folder)
    are checked too."""
    exe = tmp_path / "build" / "foreign"
    exe.parent.mkdir()
    shutil.copy2(foreign_exe, exe)
    wrapper = tmp_path / "run.sh"
    wrapper.write_text('#!/bin/sh\nexec "$(dirname "$0")/build/foreign" "$@"\n')
    wrapper.chmod(0o755)
    runs = tmp_path / "runs"
    with tuning(quick_tune_args(f"{wrapper} -n 1000 -steps 1", runs, iters=6), runs, stdout=subprocess.PIPE) as proc:
        rebuilt = exe.with_name("foreign.new")
        shutil.copy2(exe, rebuilt)
        with open(rebuilt, "ab") as f:
            f.write(b"\0rebuilt")
        os.replace(rebuilt, exe)
        out, err = proc.communicate(timeout=300)
    (root,) = runs.glob("*/tune-*")
    err = flat(err)
    assert proc.returncode == 1, (out, err)
    assert f"error: {exe} changed while this tune ran (SHA-256 " in err, err


def _rebuild(exe) -> None:
    """Another build of `exe`, moved into place as a build does."""
    rebuilt = exe.with_name(exe.name + ".new")
    shutil.copy2(exe, rebuilt)
    with open(rebuilt, "ab") as f:
        f.write(b"\0rebuilt")
    os.replace(rebuilt, exe)


def _when(pattern: str, runs, proc) -> None:
    """Waits until a file matching `pattern` is under `runs` (while `proc` runs)."""
    deadline = time.monotonic() + 300
    while not list(runs.glob(pattern)):
        assert proc.poll() is None, f"exited {proc.returncode} first: {proc.stderr.read()}"
        assert time.monotonic() < deadline, f"no {pattern}"
        time.sleep(0.05)

def _rebuilt_when(pattern: str, args: list[str], runs, exe):
    """Runs mapperopt with `args` in a process, rebuilds `exe` once a file matching `pattern` exists under `runs`, and
    returns the ended process with its standard output and error."""
    proc = subprocess.Popen([sys.executable, "-m", "mapperopt.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        _when(pattern, runs, proc)
        _rebuild(exe)
        out, err = proc.communicate(timeout=300)
    finally:
        proc.kill()
        proc.wait()
    return proc, out, err



def test_a_rebuild_during_the_final_comparison_of_a_tune_writes_no_summary(tmp_path, foreign_exe, offline_optimizer,
                                                                            capsys):
    """The build was checked before the final comparison but not after it: a rebuild while the final comparison ran
    mixed two builds in the reported scores (7 executions of the old build, 8 of the new) without a word. The tune
    checks after each round of it, stops without writing a summary, says which rounds measured which build, keeps
    what it measured, and with the old build back the same command measures the final comparison again."""
    from mapperopt.cli import main

    exe = tmp_path / "build" / "foreign"
    exe.parent.mkdir()
    shutil.copy2(foreign_exe, exe)
    runs = tmp_path / "runs"
    args = quick_tune_args(f"{exe} -n 1000 -steps 1", runs, iters=2, final_rounds=4)
    proc, out, err = _rebuilt_when("*/tune-*/final/*/round-1/result.json", args, runs, exe)
    (root,) = runs.glob("*/tune-*")
    err, out = flat(err), flat(out)
    assert proc.returncode == 1, (out, err)
    assert f"error: {exe} changed while this tune ran (SHA-256 " in err, err
    assert "iterations 1-2 measured the build" in err, err
    assert "of the final comparison" in err and "ran while it was replaced and may have measured either build" in err
    assert "used by no score or verdict" in err, err
    assert not (root / "summary.json").exists()  # no scores of two builds
    assert "Verdict" not in out and "Best (" not in out, out
    rounds = sorted(p.name for p in (root / "final").glob("*/round-*"))
    assert rounds and len(rounds) < 4 * len(list((root / "final").iterdir())), rounds  # stopped, kept
    shutil.copy2(foreign_exe, exe)  # the old build back: the same command measures the final comparison again
    assert main(args) == 0, flat(capsys.readouterr().err)
    summary = json.loads((root / "summary.json").read_text())
    assert [g["folder"] for g in summary["interrupted"]] == ["final-1"], summary.get("interrupted")
    assert all(len(m["run_dirs"]) == 4 for m in summary["measured"].values()), summary["measured"]


def test_a_rebuild_during_a_comparisons_final_measurement_writes_no_scores(tmp_path, foreign_exe, offline_optimizer,
                                                                            capsys):
    """`compare --app` checked the build before its final measurement, not after: a rebuild while it ran reported
    scores of two builds as one. It stops without scores, says which rounds measured which build, and with the old
    build back the same command measures it again."""
    from mapperopt.cli import main

    exe = tmp_path / "build" / "foreign"
    exe.parent.mkdir()
    shutil.copy2(foreign_exe, exe)
    runs = tmp_path / "runs"
    args = ["compare", "--app", f"{exe} -n 1000 -steps 1", "--cpus", "2", "--optimizers", "random", "--runs", "1",
            "--iters", "2", "--start", "default", "--repeats", "1", "--max-repeats", "1", "--final-rounds", "4",
            "--runs-dir", str(runs)]
    proc, out, err = _rebuilt_when("*/compare-*/final-*/*/round-1/result.json", args, runs, exe)
    (folder,) = runs.glob("*/compare-*")
    err, out = flat(err), flat(out)
    assert proc.returncode == 1, (out, err)
    assert f"error: {exe} changed while this comparison ran (SHA-256 " in err, err
    assert "final measurement final-1: " in err and "of final-1 ran while it was replaced" in err, err
    assert "used by no score or verdict" in err, err
    assert not (folder / "summary.json").exists()
    assert not json.loads((folder / "final.json").read_text()).get("groups") if (folder / "final.json").exists() \
        else True
    shutil.copy2(foreign_exe, exe)  # the old build back: the same command measures it again
    assert main(args) == 0, flat(capsys.readouterr().err)
    finals = json.loads((folder / "final.json").read_text())
    assert [g["folder"] for g in finals["interrupted"]] == ["final-1"], finals
    assert [g["folder"] for g in finals["groups"]] == ["final-2"], finals
    assert (folder / "summary.json").exists()


def test_the_stale_description_warning_says_what_was_missed_and_a_command_that_works(tmp_path, foreign_exe, capsys):
    """A tune whose iteration left a task of the program's description unmapped said "a rebuild behind a wrapper
    script is not noticed" although the tune checks the program a script names, and told to run `mapperopt check
    FILE ... --rediscover` with a placeholder for FILE. The words depend on whether the script's program is
    checked, and the command names a file that exists and runs."""
    from mapperopt.benchmarks.userapp import app_from_command
    from mapperopt.cli import main
    from mapperopt.optimizer.commands import stale_warning

    (tmp_path / "build").mkdir()
    shutil.copy2(foreign_exe, tmp_path / "build" / "foreign")
    checked = tmp_path / "run.sh"
    checked.write_text('#!/bin/sh\nexec "$(dirname "$0")/build/foreign" "$@"\n')
    unchecked = tmp_path / "var.sh"
    unchecked.write_text(f'#!/bin/sh\nP={tmp_path / "build"}\nexec "$P/"foreign "$@"\n')
    root = tmp_path / "runs" / "foreign" / "tune-1"
    (root / "iter-002").mkdir(parents=True)
    (root / "iter-002" / "mapper.dsl").write_text("Task * CPU;\n")
    for script in (checked, unchecked):
        script.chmod(0o755)
        app = app_from_command(f"{script} -n 1000 -steps 1 -ll:cpu 2")
        text = flat(stale_warning(app, 2, "no task named 'fill' was mapped", root))
        assert "FILE" not in text and "may mix two builds" in text if script == unchecked else (
            "not noticed" not in text and "an earlier build" in text), text
        command = text[text.index("(`mapperopt ") + 2:].split("`")[0]
        words = shlex.split(command)
        assert words[:2] == ["mapperopt", "check"] and words[-1] == "--rediscover", words
        capsys.readouterr()
        code = main(words[1:])  # it runs: discovers the program again and checks the mapper (no usage error)
        said = flat(" ".join(capsys.readouterr()))
        assert code in (0, 1) and "discovering" in said and "launch domains" in said, (command, said)


def test_the_iteration_that_ran_while_the_program_was_rebuilt_is_marked_when_the_tune_goes_on(
        tmp_path, foreign_exe, offline_optimizer, capsys):
    """The stop said that an iteration "may have measured either build"; continued with the old build back, that
    iteration was shown and journaled like any other (history.csv's not_comparable empty). It is marked as not
    comparable, as an iteration measured at another iteration count is."""
    import csv

    from mapperopt.cli import main

    exe = tmp_path / "build" / "foreign"
    exe.parent.mkdir()
    shutil.copy2(foreign_exe, exe)
    runs = tmp_path / "runs"
    args = quick_tune_args(f"{exe} -n 1000 -steps 1", runs, iters=4)
    with tuning(args, runs, stdout=subprocess.PIPE) as proc:
        _rebuild(exe)
        out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, flat(err)
    (root,) = runs.glob("*/tune-*")
    done = len(TuneStore.open(root).records)
    assert f"iteration {done} ran while it was replaced" in flat(err), flat(err)
    shutil.copy2(foreign_exe, exe)
    assert main(args) == 0, flat(capsys.readouterr().err)
    out = flat(capsys.readouterr().out)
    with open(root / "history.csv", newline="") as f:
        rows = {int(row["iter"]): row["not_comparable"] for row in csv.DictReader(f)}
    assert "rebuilt" in rows[done] and not any(rows[i] for i in rows if i != done), rows
    assert f"iteration {done} ran while {exe} was rebuilt" in out, out


def test_a_finished_run_is_not_called_interrupted(tmp_path, foreign_exe, offline_optimizer,
                                                                       capsys):
    """A finished 1-iteration run was counted among the "interrupted runs of this command" by a later command with
    a larger --iters (which would extend it). It is said to be finished; its --resume extends it."""
    from mapperopt.cli import main

    exe = tmp_path / "build" / "foreign"
    exe.parent.mkdir()
    shutil.copy2(foreign_exe, exe)
    runs = tmp_path / "runs"
    args = quick_tune_args(f"{exe} -n 1000 -steps 1", runs, iters=1)
    assert main(args) == 0, flat(capsys.readouterr().err)  # finished
    args = quick_tune_args(f"{exe} -n 1000 -steps 1", runs, iters=2)
    (finished,) = runs.glob("*/tune-*")
    proc = subprocess.Popen([sys.executable, "-m", "mapperopt.cli", *args, "--new"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:  # killed after its first iteration: unfinished
        deadline = time.monotonic() + 300
        while sum(1 for p in runs.glob("*/tune-*/state.jsonl") if p.read_text().strip()) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait()
    capsys.readouterr()
    assert main(quick_tune_args(f"{exe} -n 1000 -steps 1", runs, iters=3)) == 0, flat(capsys.readouterr().err)
    out = flat(capsys.readouterr().out)
    assert "interrupted runs" not in out, out
    assert f"--resume {finished} --iters 3 (finished tuning (1 iteration; a larger --iters extends it))" in out, out


def test_a_rebuild_during_a_new_comparison_names_the_command_that_continues_it_and_marks_the_iteration(
        tmp_path, foreign_exe, offline_optimizer, capsys, monkeypatch):
    """A comparison started with --new and stopped by a rebuild said to "give the same command", which would start
    yet another comparison; it names its --resume command, as `tune` does. Continued so, with the old build back,
    the iteration that ran during the rebuild was marked as not comparable only in its run's history.csv: the
    comparison's printed notes, table.md and the run's progress.png say it too, as tune's table does."""
    from mapperopt.cli import main
    from mapperopt.optimizer import store as store_module

    exe, runs, args = _comparison(tmp_path, foreign_exe, "--new")
    with tuning(args, runs, stdout=subprocess.PIPE, journal="*/compare-*/random-1/state.jsonl") as proc:
        _rebuild(exe)
        out, err = proc.communicate(timeout=300)
    (folder,) = runs.glob("*/compare-*")
    done = len(TuneStore.open(folder / "random-1").records)
    err = flat(err)
    assert proc.returncode == 1, (out, err)
    assert "give the same command" not in err, err
    again = err[err.index("put back the build it was made with and give `") + 47:].split("`")[0]
    assert f"--resume {folder}" in again and "--new" not in again, again
    shutil.copy2(foreign_exe, exe)
    labels: list[str] = []

    def figure(*a, **k):
        fig = real(*a, **k)
        labels.extend(t.get_text() for t in fig.axes[0].get_legend().get_texts())
        return fig

    real = store_module.progress_figure
    monkeypatch.setattr(store_module, "progress_figure", figure)
    capsys.readouterr()
    assert main(shlex.split(again)[1:]) == 0, flat(capsys.readouterr().err)
    out = flat(capsys.readouterr().out)
    assert list(runs.glob("*/compare-*")) == [folder]  # continued, not another comparison
    mark = f"random-1: iteration {done} ran while {exe} was rebuilt and may have measured either build"
    assert mark in out, out
    assert mark in flat((folder / "table.md").read_text())
    assert any("rebuilt" in label and "not comparable" in label for label in labels), labels


def test_a_finished_tune_of_another_build_is_named_when_the_same_command_starts_afresh(tmp_path, foreign_exe,
                                                                                      offline_optimizer, capsys):
    """After a finished tune, a rebuild (or the application file repointed to another executable) made the same
    command, with a larger --iters, start a new run without a word, where the user expected it to extend the
    finished one; without a larger --iters it offered `--resume` of that run, which is refused for another build.
    It says which folder it does not extend, which executable changed (old and new), and how to extend it."""
    from mapperopt.cli import main

    exe = tmp_path / "build" / "foreign"
    exe.parent.mkdir()
    shutil.copy2(foreign_exe, exe)
    app_file = tmp_path / "mapperopt.yaml"
    app_file.write_text(f"executable: {exe}\nargs: [-n, '1000', -steps, '1']\nsizes: {{ci: {{cpus: 2}}}}\n")
    runs = tmp_path / "runs"
    args = quick_tune_args(str(app_file), runs, iters=1)
    assert main(args) == 0
    (first,) = runs.glob("*/tune-*")
    old = TuneStore.open(first).settings["executable_sha256"]
    capsys.readouterr()
    with open(exe, "ab") as f:  # rebuilt in place
        f.write(b"\0rebuilt")
    assert main(args) == 0, flat(capsys.readouterr().err)
    out = flat(capsys.readouterr().out)
    second = next(p for p in runs.glob("*/tune-*") if p != first)
    new = TuneStore.open(second).settings["executable_sha256"]
    assert (f"Note: {first} holds a tuning of foreign (1 iteration) made with another executable: {exe} (SHA-256 "
            f"{old[:12]}...) there, {exe} ({new[:12]}...) here") in out, out
    assert f"this command starts a new run, in {second}" in out, out
    assert f"first put back the executable it was made with, then: mapperopt tune --resume {first} --iters 2" in out
    assert "To extend that run instead" not in out, out  # its --resume would be refused
    # the application file repointed to another build (CMake's, say), with a larger --iters
    other = tmp_path / "cmake" / "foreign"
    other.parent.mkdir()
    shutil.copy2(foreign_exe, other)
    with open(other, "ab") as f:  # a build of its own: neither folder's
        f.write(b"\0cmake")
    app_file.write_text(app_file.read_text().replace(str(exe), str(other)))
    assert main([*args[:args.index("--iters")], "--iters", "2", *args[args.index("--iters") + 2:]]) == 0
    out = flat(capsys.readouterr().out)
    third = next(p for p in runs.glob("*/tune-*") if p not in (first, second))
    assert (f"Note: {second} holds a tuning of foreign (1 iteration) made with another executable: {exe} (SHA-256 "
            f"{new[:12]}...) there, {other} (") in out, out
    assert f"starts a new run, in {third}" in out and f"--resume {second} --iters 3" in out, out
