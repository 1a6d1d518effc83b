"""A SIGKILL of mapperopt (no handler, no `finally` runs) ends every program it started within seconds: the user's
program under discovery, a --verify-cmd, a compiler building a mapper. Each would otherwise run on, for minutes or
for ever, once the process that was to stop it is gone. And the folder of a killed `tune` is continued by the same
command."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from userapp_support import quick_tune_args, running, tuning

pytestmark = pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads /proc")

ENDED_WITHIN_S = 10   # the parent-death signal, then `timeout`'s SIGKILL 5 s after its SIGTERM


def script(path: Path, body: str) -> Path:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def kill_while_running(argv: list[str], hang: list[str], cwd: Path, env: dict | None = None) -> None:
    """Starts `mapperopt ARGV`, waits until it has started `hang` (a unique command line), SIGKILLs mapperopt and
    asserts that no process `hang` is left soon after."""
    proc = subprocess.Popen([sys.executable, "-m", "mapperopt.cli", *argv], cwd=cwd, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 600  # a first discovery or build on a loaded machine
        while not running(hang):
            assert proc.poll() is None, f"mapperopt exited {proc.returncode} first: {proc.stderr.read()}"
            assert time.monotonic() < deadline, f"{hang} never started"
            time.sleep(0.1)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + ENDED_WITHIN_S
        while running(hang):
            assert time.monotonic() < deadline, f"{hang} outlived the killed mapperopt"
            time.sleep(0.1)
    finally:
        proc.kill()
        proc.wait()
        for pid in running(hang):
            os.kill(pid, signal.SIGKILL)


def test_a_program_that_hangs_in_discovery(tmp_path):
    hang = ["sleep", str(300000 + os.getpid() % 100000)]  # what the program's wrapper script started
    script(tmp_path / "prog", " ".join(hang))
    (tmp_path / "m.dsl").write_text("Task * CPU;\n")
    kill_while_running(["run", "--app", "./prog", "--mapper", "m.dsl"], hang, tmp_path)


def test_a_verify_command_that_hangs(tmp_path, foreign_exe):
    hang = ["sleep", str(400000 + os.getpid() % 100000)]
    kill_while_running(["run", "--app", f"{foreign_exe} -n 1000 -steps 1", "--cpus", "2", "--repeats", "1",
                        "--max-repeats", "1", "--verify-cmd", f"{' '.join(hang)}; true"], hang, tmp_path)


def test_a_compiler_that_hangs(tmp_path):
    hang = ["sleep", str(500000 + os.getpid() % 100000)]  # what the compiler driver started (cc1plus, as, ld)
    cxx = script(tmp_path / "cxx", f'[ "$1" = --version ] && echo fake 1 && exit 0\n{" ".join(hang)}')
    (tmp_path / "m.dsl").write_text("Task * CPU;\n")
    env = dict(os.environ, CXX=str(cxx), MAPPEROPT_CACHE=str(tmp_path / "cache"))  # nothing built yet
    kill_while_running(["compile", "m.dsl"], hang, tmp_path, env)


def test_a_killed_tune_of_a_program_without_baselines_continues_with_the_same_command(tmp_path, foreign_exe,
                                                                                     offline_optimizer):
    """With --baseline none the set-up measures nothing and records no calibrated count (a user's program has none):
    the folder was taken for one whose set-up never finished, and the same command started afresh."""
    from mapperopt.cli import main
    from mapperopt.optimizer.store import TuneStore

    runs = tmp_path / "runs"
    args = quick_tune_args(f"{foreign_exe} -n 1000 -steps 1", runs, iters=3, final_rounds=2)
    with tuning(args, runs) as proc:
        os.kill(proc.pid, signal.SIGKILL)
    (root,) = runs.glob("*/tune-*")
    done = len(TuneStore.open(root).records)
    assert main(args) == 0
    assert list(runs.glob("*/tune-*")) == [root]
    assert [r.iter for r in TuneStore.open(root).records] == [1, 2, 3] and done < 3


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_sigterm_of_run_during_discovery_ends_the_program_and_removes_its_folder(tmp_path, timed_exe, signum):
    """A SIGTERM (`timeout`, `kill`) or SIGHUP (a closed terminal) killed `run` without a word, leaving discovery's
    folder behind."""
    reps = str(10**8 + os.getpid() % 100000)  # a long run: still in discovery when the signal comes
    (tmp_path / "m.dsl").write_text("Task * CPU;\n")
    proc = subprocess.Popen([sys.executable, "-m", "mapperopt.cli", "run", "--app", f"{timed_exe} -reps {reps}",
                             "--mapper", "m.dsl"], cwd=tmp_path, env=dict(os.environ, TMPDIR=str(tmp_path)),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 600
        while not [pid for pid in filter(str.isdigit, os.listdir("/proc")) if _has_word(pid, reps)]:
            assert proc.poll() is None, f"mapperopt exited {proc.returncode} first: {proc.stderr.read()}"
            assert time.monotonic() < deadline, "discovery never started"
            time.sleep(0.1)
        os.kill(proc.pid, signum)
        assert proc.wait(timeout=60) == 128 + signum
        assert not list(tmp_path.glob("mapperopt-discover-*"))
        assert not [pid for pid in filter(str.isdigit, os.listdir("/proc")) if _has_word(pid, reps)]
    finally:
        proc.kill()
        proc.wait()


def _has_word(pid: str, word: str) -> bool:
    """Whether process `pid`'s command line has the word `word`."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return word.encode() in f.read().split(b"\0")
    except OSError:
        return False
