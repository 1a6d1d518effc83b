"""`mapperopt toolchain`: a program built with the printed flags (the `foreign_exe` fixture) runs with the printed
environment and a DSL mapper, as a user would do it by hand."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from userapp_support import mapperopt

MAPPER = ('def last(Task task) { return Machine(CPU)[0, 1]; }\nIndexTaskMap "Initialize Nodes" last;\n'
          "Tunable 11 = 3 int32;\n")


def test_run_by_hand_with_the_printed_environment(tmp_path, foreign_exe):
    (tmp_path / "my.dsl").write_text(MAPPER)
    exports = mapperopt("toolchain", "--env", "--mapper", "my.dsl", cwd=tmp_path)
    script = f"{exports}\nLD_PRELOAD=$MAPPEROPT_PRELOAD {foreign_exe} -n 300 -ll:cpu 2 -logfile stderr\n"
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "pieces 3" in done.stdout and "OK" in done.stdout
    ran = [line.split()[-2] for line in done.stdout.splitlines() if line.startswith("RAN Initialize Nodes")]
    assert ran == ["1", "1", "1"]  # every point on CPU 1, as the DSL mapper says
    # One line on stderr says that the DSL mapper is in (nothing else would, when it maps as the default one does).
    said = [line for line in done.stderr.splitlines() if line.startswith("[mapperopt] note: the LD_PRELOAD")]
    so = shlex.split(exports.split("MAPPEROPT_MAPPER=")[1].splitlines()[0])[0]
    assert said == [f"[mapperopt] note: the LD_PRELOAD shim loaded the DSL mapper {so}"], done.stderr


def test_cmake_snippet_names_the_installed_legion(tmp_path):
    cmake = mapperopt("toolchain", "--cmake", cwd=tmp_path)
    assert "add_library(mapperopt::legion ALIAS mapperopt_legion)" in cmake
    include = cmake.split('target_include_directories(mapperopt_legion INTERFACE "')[1].split('"')[0]
    assert (Path(include) / "legion.h").is_file()
    libs = cmake.split("target_link_libraries(mapperopt_legion INTERFACE ")[1].split(")")[0]
    assert all(Path(p.strip('"')).is_file() for p in libs.split() if p.startswith('"'))


def test_the_printed_flags_find_legions_mapper_headers(tmp_path):
    """Every Legion program with a mapper of its own includes "default_mapper.h" (Legion's examples, tutorial 09),
    which Legion's own build finds in its mappers folder: `--cflags` and the CMake target give that folder too."""
    from mapperopt import toolchain

    source = tmp_path / "mine.cc"
    source.write_text('#include "legion.h"\n#include "default_mapper.h"\nint main() { return 0; }\n')
    flags = shlex.split(mapperopt("toolchain", "--cflags", cwd=tmp_path))
    done = subprocess.run([toolchain.cxx(), "-fsyntax-only", str(source), *flags], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    cmake = mapperopt("toolchain", "--cmake", cwd=tmp_path)
    include = cmake.split("target_include_directories(mapperopt_legion INTERFACE ")[1].split(")")[0]
    assert any((Path(d.strip('"')) / "default_mapper.h").is_file() for d in include.split()), include
