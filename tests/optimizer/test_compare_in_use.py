"""`compare --report-only` of a comparison that another `compare` is extending (it holds the folder's lock): it said
"--iters N: the best programs ... are not those the final measurement measured" or "no tuning run has N iterations
yet" with a hint read from the files the extension is rewriting (an --iters, "run without --report-only"). It names
that process instead, found without taking the lock. One small real comparison on Stencil (ci size)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from mapperopt.cli import main

FAST = ["--size", "ci", "--runs", "1", "--start", "default", "--repeats", "1", "--max-repeats", "1", "--min-time",
        "0.05", "--final-rounds", "1"]


def test_a_report_of_a_comparison_being_extended_names_the_process_and_no_iters(tmp_path, capsys):
    runs = tmp_path / "runs"
    command = ["compare", "stencil", "--optimizers", "random", *FAST, "--runs-dir", str(runs)]
    assert main([*command, "--iters", "1"]) == 0
    [folder] = (runs / "stencil").iterdir()
    journal = folder / "random-1" / "state.jsonl"
    extension = subprocess.Popen([sys.executable, "-m", "mapperopt.cli", *command, "--iters", "3"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and extension.poll() is None and len(journal.read_text().splitlines()) < 2:
        time.sleep(0.02)
    os.kill(extension.pid, signal.SIGSTOP)  # stopped while it extends the comparison, its lock held
    try:
        assert extension.poll() is None, extension.communicate()[0]
        capsys.readouterr()
        assert main([*command, "--iters", "3", "--report-only"]) == 1
        err = " ".join(capsys.readouterr().err.split())
        assert f"error: {folder} is in use by process {extension.pid} (" in err, err
        assert "which is tuning or measuring it: its report waits until that process ends; nothing was written" in err
        assert err.split("hint: ")[1] == "wait for it to finish, then run this command again", err
    finally:
        os.kill(extension.pid, signal.SIGCONT)
        out = extension.communicate(timeout=300)[0]
    assert extension.returncode == 0, out  # looked at, its lock was not taken from it
    assert main([*command, "--iters", "3", "--report-only"]) == 0
