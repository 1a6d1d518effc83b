"""Helpers of the user-application tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

APP_DIR = Path(__file__).resolve().parents[1] / "app"


def mapperopt(*args: str, cwd: Path) -> str:
    """What the `mapperopt` command (of this Python environment) prints."""
    exe = Path(sys.executable).with_name("mapperopt")
    return subprocess.run([str(exe), *args], capture_output=True, text=True, cwd=cwd, check=True).stdout
