"""`mapperopt toolchain`: a program built with the printed flags (the `foreign_exe` fixture) runs with the printed
environment and a DSL mapper, as a user would do it by hand."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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
    # saved and included as the header says (docs/own-app.md §2 does it: the test below), mapperopt named so that the
    # shell it ran from finds it: by its path where the `mapperopt` on PATH is not this one
    exe, on_path = Path(sys.executable).with_name("mapperopt"), shutil.which("mapperopt")
    me = "mapperopt" if on_path and Path(on_path).resolve() == exe.resolve() else shlex.quote(str(exe))
    assert f"`{me} toolchain --cmake > mapperopt.cmake`" in cmake and "#   include(mapperopt.cmake)\n" in cmake
    include = cmake.split('target_include_directories(mapperopt_legion INTERFACE "')[1].split('"')[0]
    assert (Path(include) / "legion.h").is_file()
    libs = cmake.split("target_link_libraries(mapperopt_legion INTERFACE ")[1].split(")")[0]
    assert all(Path(p.strip('"')).is_file() for p in libs.split() if p.startswith('"'))
    from mapperopt import toolchain

    if toolchain.cuda_stub_dir() is not None:  # no NVIDIA driver: a program built so starts only after the eval
        said = re.search(r"^#   to run the program: (eval .*) first \(", cmake, re.M)
        assert said is not None, cmake
        # in the shell it was printed in, the line puts the stand-in on LD_LIBRARY_PATH
        done = subprocess.run(["bash", "-c", f'{said[1]} && echo "$LD_LIBRARY_PATH"'], capture_output=True,
                              text=True, timeout=120)
        assert str(toolchain.cuda_stub_dir()) in done.stdout.strip().split(":"), (said[1], done.stderr)


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


@pytest.mark.parametrize("cpus", [["--", "-ll:cpu", "2"], ["--cpus", "2"]])
def test_compile_for_a_program_prints_how_to_load_the_library_into_it(tmp_path, foreign_exe, cpus):
    """`compile --app PROG -o my.so` prints, besides the path, the command that loads the library into that program
    (the LD_PRELOAD shim), and that command, pasted, runs the program with the DSL mapper. It printed only the path,
    and the docs said to load it with `-mapper my.so`, a flag of mapperopt's benchmarks that the program ignored.
    The run's two CPUs, given as `run` takes them (`--cpus 2`, refused before) or after `--`, are the command's."""
    (tmp_path / "my.dsl").write_text(MAPPER)
    exe = Path(sys.executable).with_name("mapperopt")
    done = subprocess.run([str(exe), "compile", "my.dsl", "--app", f"{foreign_exe} -n 300", "-o", "my.so", *cpus],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0 and done.stdout == "my.so\n", (done.stdout, done.stderr)
    said = done.stderr.split("to load it into foreign (not with -mapper, a flag of mapperopt's benchmarks only), "
                             "run:\n")
    assert len(said) == 2, done.stderr
    command = said[1].splitlines()[0]
    assert f"MAPPEROPT_MAPPER={tmp_path / 'my.so'}" in command, command
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}
    env["PATH"] = f"{exe.parent}:{env['PATH']}"
    ran = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env, timeout=120, cwd="/")
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert [line.split()[-2] for line in ran.stdout.splitlines() if line.startswith("RAN Initialize Nodes")] == \
        ["1", "1", "1"]  # every point on CPU 1, as the DSL mapper says


def test_the_printed_load_command_names_this_mapperopt_and_its_cache(tmp_path, foreign_exe):
    """A virtual environment not activated (`.venv/bin/mapperopt compile ...`): the printed command said `mapperopt
    toolchain --env`, which a shell without mapperopt on its PATH answers "mapperopt: command not found"; and a shell
    without MAPPEROPT_CACHE built the LD_PRELOAD shim in another cache than the mapper library's. It names this
    mapperopt by its path and carries the cache, and runs so; where `mapperopt` on PATH is this one, it says
    `mapperopt`."""
    (tmp_path / "my.dsl").write_text(MAPPER)
    exe = Path(sys.executable).with_name("mapperopt")
    cache = os.environ.get("MAPPEROPT_CACHE") or str(Path.home() / ".cache" / "mapperopt")
    bare = ":".join(p for p in os.environ["PATH"].split(":") if p and Path(p).resolve() != exe.parent.resolve())
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}

    def printed(path: str) -> str:
        done = subprocess.run([str(exe), "compile", "my.dsl", "--app", f"{foreign_exe} -n 300", "-o", "my.so",
                               "--cpus", "2"], capture_output=True, text=True, cwd=tmp_path, timeout=300,
                              env={**env, "PATH": path, "MAPPEROPT_CACHE": cache})
        assert done.returncode == 0, done.stderr
        return done.stderr.split(", run:\n")[1].splitlines()[0]

    command = printed(bare)
    assert command.startswith(f'eval "$(MAPPEROPT_CACHE={shlex.quote(cache)} {shlex.quote(str(exe))} toolchain '
                              '--env)" && '), command
    home = tmp_path / "home"  # a fresh shell's default cache would be under it
    shell = {"PATH": "/usr/bin:/bin", "HOME": str(home)}
    ran = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=shell, timeout=120, cwd="/")
    assert ran.returncode == 0, (command, ran.stderr[-2000:])
    assert [line.split()[-2] for line in ran.stdout.splitlines() if line.startswith("RAN Initialize Nodes")] == \
        ["1", "1", "1"]  # the DSL mapper's placement: the shim loaded it
    assert not (home / ".cache").exists()
    command = printed(f"{exe.parent}:{bare}")
    assert command.startswith(f'eval "$(MAPPEROPT_CACHE={shlex.quote(cache)} mapperopt toolchain --env)" && '), command


def test_the_cmake_build_docs_own_app_gives_builds_and_runs_a_program(tmp_path):
    """docs/own-app.md §2's CMake path, pasted as written: its shell block (save the snippet, build, run) with the
    CMakeLists.txt that includes the snippet builds a Legion program (tests/app/timed.cc as the docs' my_app.cc)
    that runs. The docs said only `mapperopt toolchain --cmake  # or: a CMake target`, not to save and include it."""
    if shutil.which("cmake") is None:
        pytest.skip("no cmake on this machine")
    doc = (Path(__file__).resolve().parents[2] / "docs" / "own-app.md").read_text()
    section = doc[doc.index("## 2."):doc.index("## 3.")]
    blocks = re.findall(r"^```(\w*)\n(.*?)^```$", section, re.M | re.S)
    lists = [text for lang, text in blocks if lang == "cmake"]
    shell = [text for lang, text in blocks if lang == "sh" and "toolchain --cmake >" in text]
    assert len(lists) == 1 and len(shell) == 1, blocks
    (tmp_path / "CMakeLists.txt").write_text(lists[0])
    shutil.copy(Path(__file__).resolve().parents[1] / "app" / "timed.cc", tmp_path / "my_app.cc")
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    done = subprocess.run(["bash", "-ec", shell[0]], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=600)
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    assert "elapsed:" in done.stdout, done.stdout[-2000:]
    # built optimised (a Release build) though the shell block names no build type: a tune measures this build
    rules = [p for p in (tmp_path / "build").rglob("*") if p.name in ("flags.make", "build.ninja")]
    assert any(re.search(r"-O[23]\b", p.read_text()) for p in rules), rules


def test_the_cmake_configure_line_docs_own_app_gives_keeps_asserts(tmp_path):
    """docs/own-app.md §2 says that CMake's Release build removes asserts (NDEBUG), which the g++ line keeps, and
    gives the configure line that keeps them: a user's raw-pointer kernel guarded by an assert on its layout computed
    wrong numbers silently in the Release build. With the docs' CMakeLists.txt, a program whose assert fails runs to
    its end in the plain build and stops at the assert in the one the docs' line configures."""
    if shutil.which("cmake") is None:
        pytest.skip("no cmake on this machine")
    doc = (Path(__file__).resolve().parents[2] / "docs" / "own-app.md").read_text()
    section = doc[doc.index("## 2."):doc.index("## 3.")]
    [lists] = [text for lang, text in re.findall(r"^```(\w*)\n(.*?)^```$", section, re.M | re.S) if lang == "cmake"]
    [configure] = re.findall(r"`(cmake -S \. -B build -D[^`]*)`", section)
    (tmp_path / "CMakeLists.txt").write_text(lists)
    (tmp_path / "my_app.cc").write_text('#include <cassert>\n#include <cstdio>\n'
                                        'int main() { assert(!"layout"); std::puts("ran to its end"); }\n')
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"

    def built_and_run(configure: str) -> subprocess.CompletedProcess:
        folder = shlex.split(configure)[4]
        script = (f"mapperopt toolchain --cmake > mapperopt.cmake && {configure} && cmake --build {folder} && "
                  f'eval "$(mapperopt toolchain --env)" && ./{folder}/my_app')
        return subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path,
                              timeout=600)

    plain = built_and_run("cmake -S . -B plain")
    assert plain.returncode == 0 and "ran to its end" in plain.stdout, (plain.stdout[-2000:], plain.stderr[-2000:])
    kept = built_and_run(configure)
    assert kept.returncode != 0 and "Assertion" in kept.stderr, (kept.stdout[-2000:], kept.stderr[-2000:])


def test_the_docs_build_lines_optimise():
    """Every compile line the docs give with the printed flags builds an optimised program: `--cflags` has no -O, and
    the quick path's -O0 build ran the user's timed loop 1.75x slower, so a tune measured the wrong bottleneck."""
    root = Path(__file__).resolve().parents[2]
    lines = [line for doc in [root / "README.md", *sorted((root / "docs").glob("*.md"))]
             for line in doc.read_text().splitlines() if "toolchain --cflags)" in line]
    assert lines and all(re.search(r"\b(g\+\+|nvcc) -O2 ", line) for line in lines), lines
