"""The foreign test program (tests/app/foreign.cc), built once per session the way a user builds a program of their
own: with the flags `mapperopt toolchain --cflags --libs` prints."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from mapperopt import toolchain

APP_DIR = Path(__file__).resolve().parents[1] / "app"


def mapperopt(*args: str, cwd: Path) -> str:
    """What the `mapperopt` command (of this Python environment) prints."""
    exe = Path(sys.executable).with_name("mapperopt")
    return subprocess.run([str(exe), *args], capture_output=True, text=True, cwd=cwd, check=True).stdout


@pytest.fixture(scope="session")
def foreign_exe(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("foreign")
    flags = shlex.split(mapperopt("toolchain", "--cflags", "--libs", cwd=folder))
    exe = folder / "foreign"
    subprocess.run([toolchain.cxx(), str(APP_DIR / "foreign.cc"), *flags, "-o", str(exe)], check=True)
    return exe
