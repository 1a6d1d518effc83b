"""The test programs tests/app/foreign.cc, constrained.cc, histogram.cc, features.cc, pieces.cc, timed.cc, layoutdep.cc,
graph.cc, csr.cc, twovariants.cc, blocksum.cc, shards.cc, twofields.cc, rotate.cc, heat.cc and deposit.cc, each built
once the way a user builds a program of their own: with the flags `mapperopt toolchain --cflags --libs` prints. The
executable is kept in the build cache under a key of the source, the compiler and those flags (locked, like the
project's own builds), so that pytest workers and later sessions share one build."""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
from pathlib import Path

import pytest
from userapp_support import APP_DIR, mapperopt

from mapperopt import toolchain


@pytest.fixture
def offline_optimizer(monkeypatch) -> None:
    """No MAPPEROPT_LLM_* setting, in this process and the ones it starts: tune's optimizer is the offline one."""
    for var in [v for v in os.environ if v.startswith("MAPPEROPT_LLM_")]:
        monkeypatch.delenv(var)


def _build(name: str, tmp_path_factory) -> Path:
    flags = shlex.split(mapperopt("toolchain", "--cflags", "--libs", cwd=tmp_path_factory.mktemp(name)))
    source = APP_DIR / f"{name}.cc"
    key = hashlib.sha256("\0".join([source.read_text(), toolchain.cxx(), *flags]).encode()).hexdigest()[:16]
    exe = toolchain.cache_dir() / "tests" / f"{name}-{key}" / name
    with toolchain.locked(exe):
        if not exe.exists():
            tmp = exe.with_name(f"{name}.{os.getpid()}.tmp")
            subprocess.run([toolchain.cxx(), str(source), *flags, "-o", str(tmp)], check=True)
            os.replace(tmp, exe)
    return exe


@pytest.fixture(scope="session")
def foreign_exe(tmp_path_factory) -> Path:
    return _build("foreign", tmp_path_factory)


@pytest.fixture(scope="session")
def constrained_exe(tmp_path_factory) -> Path:
    return _build("constrained", tmp_path_factory)


@pytest.fixture(scope="session")
def histogram_exe(tmp_path_factory) -> Path:
    return _build("histogram", tmp_path_factory)


@pytest.fixture(scope="session")
def features_exe(tmp_path_factory) -> Path:
    return _build("features", tmp_path_factory)


@pytest.fixture(scope="session")
def pieces_exe(tmp_path_factory) -> Path:
    return _build("pieces", tmp_path_factory)


@pytest.fixture(scope="session")
def timed_exe(tmp_path_factory) -> Path:
    return _build("timed", tmp_path_factory)


@pytest.fixture(scope="session")
def layoutdep_exe(tmp_path_factory) -> Path:
    return _build("layoutdep", tmp_path_factory)


@pytest.fixture(scope="session")
def graph_exe(tmp_path_factory) -> Path:
    return _build("graph", tmp_path_factory)


@pytest.fixture(scope="session")
def csr_exe(tmp_path_factory) -> Path:
    return _build("csr", tmp_path_factory)


@pytest.fixture(scope="session")
def twovariants_exe(tmp_path_factory) -> Path:
    return _build("twovariants", tmp_path_factory)


@pytest.fixture(scope="session")
def blocksum_exe(tmp_path_factory) -> Path:
    return _build("blocksum", tmp_path_factory)


@pytest.fixture(scope="session")
def shards_exe(tmp_path_factory) -> Path:
    return _build("shards", tmp_path_factory)


@pytest.fixture(scope="session")
def twofields_exe(tmp_path_factory) -> Path:
    return _build("twofields", tmp_path_factory)


@pytest.fixture(scope="session")
def rotate_exe(tmp_path_factory) -> Path:
    return _build("rotate", tmp_path_factory)


@pytest.fixture(scope="session")
def pingghost() -> str:
    """tests/app/pingghost.cc, built as the project builds its programs (toolchain.build)."""
    return str(toolchain.build("pingghost", [APP_DIR / "pingghost.cc"]))


@pytest.fixture(scope="session")
def heat_exe(tmp_path_factory) -> Path:
    return _build("heat", tmp_path_factory)


@pytest.fixture(scope="session")
def deposit_exe(tmp_path_factory) -> Path:
    return _build("deposit", tmp_path_factory)
