"""compile_program and its cache: the public API, normalisation, errors (syntax, check, C++ build), concurrent
compiles, and the refusal of a mapper library built for another Legion version."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from compiler_support import build_testapp, plainapp, run
from mapperopt import toolchain
from mapperopt.compiler import CheckError, CompiledMapper, compile_program, preload_library, support_library
from mapperopt.compiler import build as build_module
from mapperopt.compiler.build import abi_dir
from mapperopt.dsl import DslSyntaxError
from mapperopt.errors import BuildError

POLICY = ("Task * CPU;\nm = Machine(CPU);\ndef f(Task task) { return m[0, task.ipoint[0] % m.size[1]]; }\n"
          "IndexTaskMap step f;\n")


def unique(text: str) -> str:
    """`text` with a comment that makes it a program never compiled before (a cold compile)."""
    return f"# {uuid.uuid4().hex}\n{text}"


def test_compile_program_returns_a_loadable_library(tmp_path):
    cm = compile_program(POLICY, "p.dsl")
    assert isinstance(cm, CompiledMapper)
    assert cm.so_path.is_file() and cm.cpp_path.is_file()
    assert cm.dsl_text == POLICY
    assert cm.diagnostics == []
    assert (cm.so_path.parent / "mapper.dsl").read_text() == cm.dsl_text
    result = run(build_testapp(), cm.so_path, tmp_path)
    assert result.ok(), result.stderr
    assert any(r["task"] == "step" and r["placed_by"] == "map" for r in result.trace)


def test_same_program_is_compiled_once():
    text = unique(POLICY)
    first = compile_program(text)
    mtime = first.so_path.stat().st_mtime_ns
    start = time.perf_counter()
    again = compile_program(text)
    assert time.perf_counter() - start < 0.05
    assert again.so_path == first.so_path and again.so_path.stat().st_mtime_ns == mtime
    # The library cites the user's file and lines: another name or layout is another library.
    assert compile_program(text, "other.dsl").so_path != first.so_path
    spaced = text.replace("Task * CPU;", "Task   *   CPU ;").replace("def f", "def   f").replace("; }", ";}")
    assert compile_program(spaced).so_path != first.so_path


def test_syntax_error():
    with pytest.raises(DslSyntaxError) as err:
        compile_program("Task * GPU", "bad.dsl")
    assert err.value.code == "E105"


def test_check_errors_and_warnings():
    with pytest.raises(CheckError) as err:
        compile_program("def f(Task task) { return mgpu[0, 0]; }\nIndexTaskMap t f;\n")
    assert [d.code for d in err.value.diagnostics if d.is_error] == ["E201"]
    assert "error[E201]" in str(err.value)
    cm = compile_program("Region * * GPU FBMEM;\nRegion * * GPU ZCMEM;\n")
    assert [d.code for d in cm.diagnostics] == ["W300"]


def test_generated_code_that_does_not_compile_is_reported_with_the_dsl_line(monkeypatch):
    text = unique("Task * CPU;\nm = Machine(CPU);\n")
    broken = "// mapper.dsl:3: m = Machine(CPU);\nint broken( {\n"  # the user's line 3 (after the unique comment)
    monkeypatch.setattr(build_module, "generate", lambda program: broken)
    with pytest.raises(BuildError) as err:
        compile_program(text, "mapper.dsl")
    assert "line 3 of the DSL ('m = Machine(CPU);')" in err.value.message
    assert "error" in err.value.log
    [kept] = err.value.kept
    assert Path(kept).read_text() == broken
    assert not (Path(kept).parent / build_module.SO_NAME).exists()


def test_concurrent_compiles_build_once(tmp_path):
    text = unique(POLICY)
    script = ("import sys; from mapperopt.compiler import compile_program; "
              "print(compile_program(sys.stdin.read()).so_path)")
    procs = [subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True) for _ in range(3)]
    outs = [p.communicate(text, timeout=120)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert len(set(outs)) == 1
    folder = Path(outs[0]).parent
    assert sorted(p.name for p in folder.iterdir()) == ["libmapperopt_mapper.so", "libmapperopt_mapper.so.lock",
                                                        "libmapperopt_mapper.so.sha256",
                                                        "mapper.cc", "mapper.dsl"]


@pytest.fixture(scope="module")
def foreign_mapper() -> Path:
    """A mapper library that claims another Legion version."""
    source = Path(toolchain.cache_dir()) / "test-foreign-mapper.cc"
    source.write_text('#include "mapperopt_abi.h"\n'
                      'extern "C" int mapperopt_abi_version() { return MAPPEROPT_ABI_VERSION; }\n'
                      'extern "C" const char *mapperopt_legion_version() { return "legion-0.0.0"; }\n'
                      'extern "C" void mapperopt_register_mapper() {}\n')
    return toolchain.build("foreign_mapper", [source], shared=True, include_dirs=[abi_dir()])


def test_a_library_for_another_legion_is_refused(foreign_mapper, tmp_path):
    result = run(build_testapp(), foreign_mapper, tmp_path, trace=False)
    assert result.returncode == 1
    assert "built against Legion legion-0.0.0, this application runs legion-" in result.stderr


def test_the_preload_shim_refuses_it_too(foreign_mapper, tmp_path):
    env = toolchain.runtime_env()
    env.update(LD_PRELOAD=str(preload_library()), MAPPEROPT_MAPPER=str(foreign_mapper))
    proc = subprocess.run([str(plainapp()), "-ll:cpu", "1", "-logfile", "stderr"], capture_output=True, text=True,
                          env=env, timeout=60)
    assert proc.returncode == 1
    assert "was built against Legion legion-0.0.0" in proc.stderr


def test_support_library_is_built_once():
    first = support_library()
    assert support_library() == first and first.name == "libmapperopt_dslrt.so"
    # The generated libraries link it by path (rpath), never by copying its code.
    needed = subprocess.run(["readelf", "-d", str(compile_program(POLICY).so_path)], capture_output=True,
                            text=True).stdout
    assert "libmapperopt_dslrt.so" in needed and str(first.parent) in needed
    assert os.path.getsize(compile_program(POLICY).so_path) < 200_000


def test_a_mapper_the_cache_has_no_room_for_is_named_and_leaves_no_partial_file(monkeypatch):
    """A full MAPPEROPT_CACHE said "cannot write a file" and left mapper.dsl.<pid>.tmp behind for ever."""
    import errno

    real_write_text = Path.write_text
    written = []

    def full(self, text, *args, **kwargs):  # part written, then ENOSPC naming no file, as a full disk does
        if "mappers" not in self.parts:
            return real_write_text(self, text, *args, **kwargs)
        written.append(self.parent)
        real_write_text(self, text[:5], *args, **kwargs)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Path, "write_text", full)
    with pytest.raises(OSError) as raised:
        compile_program(f"# {uuid.uuid4().hex}\nTask * CPU;\n")
    monkeypatch.undo()
    assert raised.value.filename == str(written[0] / "mapper.dsl")
    assert [p.name for p in written[0].iterdir()] == ["libmapperopt_mapper.so.lock"]  # the build's lock only
    import shutil

    shutil.rmtree(written[0])


def test_a_mapper_build_the_environment_breaks_is_not_the_mappers_failure(monkeypatch):
    """g++ aborts when it cannot create its temporary files (TMPDIR=/proc): a ToolchainError naming TMPDIR, which
    stops the command (a tune resumes once it is fixed), not a BuildError (the mapper's failure, journalled)."""
    text = unique(POLICY)
    support_library()  # built before, with a usable TMPDIR
    monkeypatch.setenv("TMPDIR", "/proc")
    with pytest.raises(toolchain.ToolchainError) as err:
        compile_program(text, "p.dsl")
    assert not isinstance(err.value, BuildError)
    assert "cannot create temporary files in TMPDIR=/proc" in str(err.value)
    assert "Cannot create temporary file in /proc/" in str(err.value)  # g++'s own words
    monkeypatch.delenv("TMPDIR")
    assert compile_program(text, "p.dsl").so_path.is_file()  # the same command, once the environment is fixed


def _damaged(so: Path, how: str) -> None:
    if how == "garbage":
        so.write_bytes(b"garbage")
    elif how == "truncated":
        so.write_bytes(so.read_bytes()[:4000])
    else:  # another mapper's library
        so.write_bytes(compile_program(unique("Task * CPU;\nRegion * * CPU SYSMEM;\n")).so_path.read_bytes())


@pytest.mark.parametrize("how", ["garbage", "truncated", "swapped"])
def test_a_damaged_or_swapped_cached_mapper_library_is_built_again(how, capfd):
    text = unique(POLICY)
    good = compile_program(text, "p.dsl").so_path
    original = good.read_bytes()
    _damaged(good, how)
    capfd.readouterr()
    again = compile_program(text, "p.dsl").so_path
    assert again == good and again.read_bytes() == original
    assert f"note: {good} in the build cache is damaged" in " ".join(capfd.readouterr().err.split())


@pytest.mark.parametrize("how", ["garbage", "swapped"])
def test_compile_o_never_copies_a_damaged_cached_library(tmp_path, how):
    from mapperopt.cli import main
    from mapperopt.compiler.cached import answer

    dsl = tmp_path / "p.dsl"
    dsl.write_text(unique(POLICY))
    out = tmp_path / "my.so"
    assert main(["compile", str(dsl), "-o", str(out)]) == 0
    original = out.read_bytes()
    so = compile_program(dsl.read_text(), str(dsl)).so_path
    assert so.read_bytes() == original
    _damaged(so, how)
    out.unlink()
    assert answer([str(dsl), "-o", str(out)]) is None and not out.exists()  # the record does not answer it
    assert main(["compile", str(dsl), "-o", str(out)]) == 0
    assert out.read_bytes() == original


def test_a_dsl_file_name_that_is_not_utf8_is_a_clear_error():
    from mapperopt.errors import MapperoptError

    with pytest.raises(MapperoptError, match=r"the file name 'lat\\udce9.dsl' is not valid UTF-8"):
        compile_program(unique(POLICY), os.fsdecode(b"lat\xe9.dsl"))


@pytest.mark.parametrize("command", [["compile", "--bench", "circuit"], ["check", "--bench", "circuit"], ["fmt"]])
def test_every_command_refuses_a_dsl_file_name_that_is_not_utf8(tmp_path, monkeypatch, capsys, command):
    """`compile` of such a file raised UnicodeEncodeError from its cache key; every command that reads a DSL file
    says it once, as `run` does."""
    from mapperopt.cli import main

    monkeypatch.chdir(tmp_path)
    name = os.fsdecode(b"lat\xe9.dsl")
    Path(name).write_text("Task * CPU;\n")
    assert main([*command, name]) == 1
    err = capsys.readouterr().err
    assert "the file name 'lat\\udce9.dsl' is not valid UTF-8" in err and "Traceback" not in err, err


def test_a_support_library_that_does_not_build_is_not_the_mappers_failure(tmp_path, monkeypatch):
    """The support library is mapperopt's, the same for every mapper: its failure is no BuildError of the mapper
    (which a tune would journal as the mapper's), and the error quotes the compiler."""
    fake = tmp_path / "g++"
    fake.write_text('#!/bin/sh\ncase "$*" in *dsl_values.cc*) echo "dsl_values.cc:1:1: error: broken" >&2; exit 1;; '
                    'esac\nexec g++ "$@"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("CXX", str(fake))
    with pytest.raises(toolchain.ToolchainError) as err:
        compile_program(unique(POLICY), "p.dsl")
    assert not isinstance(err.value, BuildError)
    assert "support library" in str(err.value) and "dsl_values.cc:1:1: error: broken" in str(err.value)
