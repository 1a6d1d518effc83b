"""Helpers of the user-application tests."""

from __future__ import annotations

import os
import subprocess
import sys
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
