"""Helpers of the user-application tests."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

APP_DIR = Path(__file__).resolve().parents[1] / "app"


def mapperopt(*args: str, cwd: Path) -> str:
    """What the `mapperopt` command (of this Python environment) prints."""
    exe = Path(sys.executable).with_name("mapperopt")
    return subprocess.run([str(exe), *args], capture_output=True, text=True, cwd=cwd, check=True).stdout


def running(argv: list[str]) -> list[int]:
    """The processes whose command line is `argv` (Linux /proc)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if f.read().split(b"\0")[:-1] == [a.encode() for a in argv]:
                    found.append(int(pid))
        except OSError:
            continue
    return found


def quick_tune_args(app: str, runs: Path, *, iters: int, final_rounds: int = 1) -> list[str]:
    """`mapperopt tune --app APP`'s arguments for a quick tune of a test program: 2 CPUs, no baselines, one run per
    measurement, its folders under `runs`."""
    return ["tune", "--app", app, "--cpus", "2", "--baseline", "none", "--iters", str(iters), "--repeats", "1",
            "--max-repeats", "1", "--final-rounds", str(final_rounds), "--runs-dir", str(runs)]


@contextlib.contextmanager
def tuning(args: list[str], runs: Path, stdout=subprocess.DEVNULL, journal: str = "*/tune-*/state.jsonl"
           ) -> Iterator[subprocess.Popen]:
    """Starts `mapperopt ARGS`, a tune whose runs folder is `runs`, as a process of its own, and yields it once an
    iteration is journaled (its stderr is a pipe); kills it on the way out. `journal`: where, under `runs`, the
    journal is (a comparison's: "*/compare-*/random-1/state.jsonl")."""
    proc = subprocess.Popen([sys.executable, "-m", "mapperopt.cli", *args], stdout=stdout, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 300
        while not any(p.read_text().strip() for p in runs.glob(journal)):
            assert proc.poll() is None, f"tune exited {proc.returncode} first: {proc.stderr.read()}"
            assert time.monotonic() < deadline, "no iteration was journaled"
            time.sleep(0.05)
        yield proc
    finally:
        proc.kill()
        proc.wait()
