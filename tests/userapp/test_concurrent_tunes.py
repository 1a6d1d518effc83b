"""Two tunes of one program in one runs folder at once measure on the same cores and disturb each other's timings:
the second is refused, naming the first (both used to start a new run without a word). And the same command, with
several interrupted runs of it there, continues the newest and names the others with their `--resume DIR`."""

from __future__ import annotations

import os
import shutil
import signal
import sys

from userapp_support import quick_tune_args, tuning

from mapperopt.cli import main
from mapperopt.optimizer.store import TuneStore, hold_program_folder


def flat(text: str) -> str:
    return " ".join(text.split())


def test_a_second_tune_of_the_same_program_is_refused_and_the_newest_interrupted_run_names_the_others(
        tmp_path, foreign_exe, offline_optimizer, capsys):
    runs = tmp_path / "runs"
    args = quick_tune_args(f"{foreign_exe} -n 1000 -steps 1", runs, iters=3)
    with tuning(args, runs) as proc:
        capsys.readouterr()
        assert main(args) == 1  # the same command, while the first runs
        err = flat(capsys.readouterr().err)
        assert f"foreign is being tuned or compared in {runs / 'foreign'}: process {proc.pid}" in err, err
        assert "disturb" in err and "--runs-dir" in err, err
        os.kill(proc.pid, signal.SIGKILL)
    (root,) = runs.glob("*/tune-*")
    older = root.with_name("tune-20000101-000000-abcdef")  # a second interrupted run of the same command
    shutil.copytree(root, older, ignore=shutil.ignore_patterns("tune.lock", "owner.json"))
    before = {p: p.read_bytes() for p in older.rglob("*") if p.is_file()}
    assert main(args) == 0
    out = flat(capsys.readouterr().out)
    assert f"Continuing {root}:" in out, out
    assert f"{older}" in out and f"mapperopt tune --resume {older} --iters 3" in out, out
    assert [r.iter for r in TuneStore.open(root).records] == [1, 2, 3]
    assert {p: p.read_bytes() for p in older.rglob("*") if p.is_file()} == before  # left alone


def test_a_benchmark_tune_while_another_runs_is_refused_before_measuring(tmp_path, capsys):
    """`mapperopt tune circuit` behaves as `tune --app`: refused at once, nothing created."""
    runs = tmp_path / "runs"
    held = hold_program_folder(runs / "circuit", "circuit")
    try:
        assert main(["tune", "circuit", "--iters", "1", "--runs-dir", str(runs)]) == 1
    finally:
        held.release()
    err = flat(capsys.readouterr().err)
    assert f"circuit is being tuned or compared in {runs / 'circuit'}: process {os.getpid()}" in err, err
    assert not runs.exists()  # refused before anything was made


def test_the_refusal_quotes_the_other_command_so_that_it_can_be_copied(tmp_path, capsys, monkeypatch):
    """The refusal quoted the running tune's command unquoted, `mapperopt tune --app ./daxpy -n 50000 --metric
    Elapsed: ([0-9.]+)`: not copyable, and where --app's value ends was unclear. It quotes it as a shell would."""
    runs = tmp_path / "runs"
    other = ["mapperopt", "tune", "--app", "./daxpy -n 50000", "--metric", "Elapsed: ([0-9.]+)", "--unit", "s"]
    monkeypatch.setattr(sys, "argv", other)
    held = hold_program_folder(runs / "circuit", "circuit")
    monkeypatch.undo()
    try:
        assert main(["tune", "circuit", "--iters", "1", "--runs-dir", str(runs)]) == 1
    finally:
        held.release()
    err = flat(capsys.readouterr().err)
    assert (f"process {os.getpid()} (mapperopt tune --app './daxpy -n 50000' --metric 'Elapsed: ([0-9.]+)' --unit s, "
            "since ") in err, err


def test_a_comparison_of_a_program_that_a_tune_is_tuning_is_refused(tmp_path, foreign_exe, offline_optimizer,
                                                                      capsys):
    """`compare --app` took no lock: a tune and a comparison of one program ran together on the same cores, each
    disturbing the other's timings. The comparison is refused before measuring, naming the tune."""
    runs = tmp_path / "runs"
    app = f"{foreign_exe} -n 1000 -steps 1"
    with tuning(quick_tune_args(app, runs, iters=3), runs) as proc:
        capsys.readouterr()
        assert main(["compare", "--app", app, "--cpus", "2", "--optimizers", "random", "--runs", "1", "--iters", "1",
                     "--start", "default", "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1",
                     "--runs-dir", str(runs)]) == 1
        err = flat(capsys.readouterr().err)
        assert f"foreign is being tuned or compared in {runs / 'foreign'}: process {proc.pid} (" in err, err
        assert " tune --app " in err, err  # the running command, as it was given
    assert not list(runs.glob("*/compare-*"))  # refused before anything was made


def test_a_tune_is_refused_while_another_runs_with_another_build_cache(tmp_path, capsys, monkeypatch):
    """The lock lived in the build cache: a second tune with another MAPPEROPT_CACHE did not see the first."""
    runs = tmp_path / "runs"
    monkeypatch.setenv("MAPPEROPT_CACHE", str(tmp_path / "cache-a"))
    held = hold_program_folder(runs / "circuit", "circuit")
    monkeypatch.setenv("MAPPEROPT_CACHE", str(tmp_path / "cache-b"))
    try:
        assert main(["tune", "circuit", "--iters", "1", "--runs-dir", str(runs)]) == 1
    finally:
        held.release()
    err = flat(capsys.readouterr().err)
    assert f"circuit is being tuned or compared in {runs / 'circuit'}: process {os.getpid()}" in err, err


def test_a_refused_comparison_says_the_refusal_first(tmp_path, foreign_exe, capsys):
    """A comparison refused because the program is being tuned printed two paragraphs first ("Layouts are not
    searched: ...", "More processors than cores: ..."), notices of a comparison that then did not run, and the
    refusal after them. The refusal comes first, alone."""
    runs = tmp_path / "runs"
    held = hold_program_folder(runs / "foreign", "foreign")
    try:
        assert main(["compare", "--app", f"{foreign_exe} -n 1000 -steps 1", "--cpus", "3", "--optimizers", "random",
                     "--runs", "1", "--iters", "1", "--runs-dir", str(runs)]) == 1
    finally:
        held.release()
    out, err = capsys.readouterr()
    assert f"foreign is being tuned or compared in {runs / 'foreign'}: process {os.getpid()}" in flat(err), err
    assert "Layouts are not searched" not in out + err and "More processors than cores" not in out + err, out + err


def test_the_refusal_of_a_resume_does_not_suggest_another_runs_dir(tmp_path, capsys):
    """A continued folder stays in its own runs folder: "give this one another --runs-dir" could not help `tune
    --resume DIR` (which refused it again). Its hint says what can."""
    runs = tmp_path / "runs"
    store = TuneStore.create(runs, "circuit", {"optimizer": "guided", "iters": 1, "iterations": None,
                                              "size": "ci"})
    store.unlock()
    held = hold_program_folder(runs / "circuit", "circuit")
    try:
        assert main(["tune", "circuit", "--resume", str(store.root), "--runs-dir", str(tmp_path / "other")]) == 1
        resumed = flat(capsys.readouterr().err)
        assert main(["tune", "circuit", "--iters", "1", "--runs-dir", str(runs)]) == 1
        new = flat(capsys.readouterr().err)
    finally:
        held.release()
    assert f"circuit is being tuned or compared in {runs / 'circuit'}" in resumed, resumed
    assert "--runs-dir" not in resumed and "wait for it to finish" in resumed, resumed
    assert "give this one another --runs-dir" in new, new
