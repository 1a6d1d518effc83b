"""The foreign test program (tests/app/foreign.cc), built once per session the way a user builds a program of their
own: with the flags `mapperopt toolchain --cflags --libs` prints."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
from userapp_support import APP_DIR, mapperopt

from mapperopt import toolchain


@pytest.fixture(scope="session")
def foreign_exe(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("foreign")
    flags = shlex.split(mapperopt("toolchain", "--cflags", "--libs", cwd=folder))
    exe = folder / "foreign"
    subprocess.run([toolchain.cxx(), str(APP_DIR / "foreign.cc"), *flags, "-o", str(exe)], check=True)
    return exe
