"""Building mapper libraries: the support library (once per Legion version), one small library per DSL program
(content-addressed cache), and the LD_PRELOAD shim for unmodified applications.

Cache layout, under `toolchain.cache_dir()/<legion key>/mappers/<key>/`: `mapper.dsl` (the user's text),
`mapper.cc` (the generated C++, kept for inspection), `libmapperopt_mapper.so` and its size and digest
(`libmapperopt_mapper.so.sha256`, checked at every reuse: `toolchain.sealed`). The key covers the DSL text and
its file name (run-time messages cite the user's file and line, so both are part of the library), the Legion
version, the C++ compiler, the flags and the sources of this compiler (generator, template, support library), so
the same mapper is never compiled twice. Builds take a file lock per key and publish with an atomic
rename, so concurrent compiles of the same program (several processes) build it once and never see a partial file.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

from mapperopt import toolchain
from mapperopt.compiler.codegen import CODEGEN_VERSION, comment_text, generate
from mapperopt.dsl import ast as A
from mapperopt.dsl import check, parse
from mapperopt.dsl.parser import require_utf8_name
from mapperopt.dsl.errors import CheckError
from mapperopt.errors import BuildError
from mapperopt.files import write_atomically

RUNTIME_DIR = Path(__file__).parent / "runtime"
TEMPLATE = Path(__file__).parent / "templates" / "mapper.cc.j2"
RUNTIME_SOURCES = ("dsl_values.cc", "dsl_mapper.cc")
# The generated file is small straight-line code over the support library: -O1 compiles faster than the
# toolchain's -O2 and runs as fast (the evaluation is dominated by the library's Value operations).
MAPPER_CXX = ["-O1"]
SO_NAME = "libmapperopt_mapper.so"


@dataclass(frozen=True)
class CompiledMapper:
    """A mapper library ready to load with `-mapper so_path`.

    Attributes:
        so_path: the shared library (in the cache; do not modify).
        cpp_path: the generated C++ it was built from.
        dsl_text: the DSL text it was generated from (the user's, as given); positions in its run-time messages and
            its placement trace are lines and columns of this text, in the file name given to `compile_program`.
        diagnostics: the checker's warnings and notes (no errors).
    """

    so_path: Path
    cpp_path: Path
    dsl_text: str
    diagnostics: list = field(default_factory=list)


def abi_dir() -> Path:
    """The folder holding `mapperopt_abi.h` (shared with the benchmark applications)."""
    return Path(str(resources.files("mapperopt.benchmarks") / "legion" / "common"))


@lru_cache(maxsize=1)
def _legion() -> toolchain.Legion:
    return toolchain.find_legion()


@lru_cache(maxsize=1)
def _implementation_digest() -> str:
    """Digest of everything besides the DSL that decides a mapper library's bytes (computed once per process)."""
    h = hashlib.sha256(CODEGEN_VERSION.encode())
    for path in (Path(__file__).parent / "codegen.py", TEMPLATE, RUNTIME_DIR / "mapperopt_dsl.h",
                 *(RUNTIME_DIR / s for s in RUNTIME_SOURCES), abi_dir() / "mapperopt_abi.h"):
        h.update(path.read_bytes())
    compiler = Path(toolchain.cxx()).resolve()
    stat = compiler.stat()
    legion = _legion()
    h.update(f"{compiler}|{stat.st_size}|{stat.st_mtime_ns}|{legion.key}|{legion.version}|".encode())
    h.update(" ".join(toolchain.cxx_flags(legion, [RUNTIME_DIR, abi_dir()]) + MAPPER_CXX).encode())
    return h.hexdigest()


def support_library() -> Path:
    """The support library `libmapperopt_dslrt.so` (DslMapper, values, machine models), built on first use.

    Raises:
        ToolchainError, BuildError: see `toolchain.build`.
    """
    return toolchain.build("mapperopt_dslrt", [RUNTIME_DIR / s for s in RUNTIME_SOURCES], shared=True,
                           include_dirs=[RUNTIME_DIR], legion=_legion())


def preload_library() -> Path:
    """The LD_PRELOAD shim `libmapperopt_preload.so`: run an unmodified Legion application with
    `LD_PRELOAD=<shim> MAPPEROPT_MAPPER=<mapper.so>` to use a compiled mapper (docs/compiler.md)."""
    return toolchain.build("mapperopt_preload", [RUNTIME_DIR / "preload.cc"], shared=True,
                           include_dirs=[abi_dir()], legion=_legion())


def _dsl_line(cpp: str, cpp_line: int, filename: str) -> int | None:
    """The DSL line cited by the nearest `// <file>:N:` comment at or above C++ line `cpp_line`."""
    lines = cpp.splitlines()
    cite = re.compile(rf"^\s*// {re.escape(comment_text(filename))}:(\d+):")
    for k in range(min(cpp_line, len(lines)) - 1, -1, -1):
        m = cite.search(lines[k])
        if m:
            return int(m.group(1))
    return None


def _build_error(err: BuildError, cpp_path: Path, cpp: str, dsl: str, filename: str) -> BuildError:
    """A failed build of generated code is a bug of this compiler: name the DSL line and keep the file."""
    first = next((ln for ln in err.log.splitlines() if re.search(r":\d+:\d+: error", ln)), "")
    m = re.search(r"mapper\.cc:(\d+):\d+: error", first)
    dsl_line = _dsl_line(cpp, int(m.group(1)), filename) if m else None
    where = f"line {dsl_line} of the DSL ({dsl.splitlines()[dsl_line - 1].strip()!r})" if dsl_line else "the DSL"
    return BuildError(
        f"internal compiler error: the C++ generated for {where} does not compile: {first or err.message}",
        log=err.log, kept=[str(cpp_path)],
        hint=f"this is a bug of mapperopt's compiler; the generated file is kept at {cpp_path}",
    )


def build_program(program: A.Program, dsl: str, filename: str) -> tuple[Path, Path]:
    """Build (or find in the cache) the library of `program`, parsed from `dsl` as `filename`; returns (so path,
    C++ path).

    Raises:
        BuildError: the generated C++ did not compile (a bug of ours; the file is kept).
        ToolchainError: the support library did not build, or the build failed for a reason of its environment.
    """
    legion = _legion()
    key = hashlib.sha256(f"{_implementation_digest()}\0{filename}\0{dsl}".encode()).hexdigest()[:24]
    folder = toolchain.cache_dir() / legion.key / "mappers" / key
    so_path, cpp_path = folder / SO_NAME, folder / "mapper.cc"
    if toolchain.sealed(so_path):
        return so_path, cpp_path
    with toolchain.locked(so_path):
        if toolchain.sealed(so_path, say=True):  # built by another process while we waited
            return so_path, cpp_path
        cpp = generate(program)
        write_atomically(folder / "mapper.dsl", dsl)
        write_atomically(cpp_path, cpp)
        try:
            runtime = support_library()
        except BuildError as err:  # the same for every mapper: not this mapper's failure
            raise toolchain.ToolchainError(f"mapperopt's DSL support library does not build: {err.message}",
                                           hint="this is a bug of mapperopt, or of this C++ compiler") from None
        try:
            built = toolchain.build("mapperopt_mapper", [cpp_path], shared=True,
                                    include_dirs=[RUNTIME_DIR, abi_dir()], extra_cxx=MAPPER_CXX,
                                    extra_link=[str(runtime), f"-Wl,-rpath,{runtime.parent}"], legion=legion,
                                    announce=False)  # seconds, once per mapper: tune would print two lines each
        except BuildError as err:
            raise _build_error(err, cpp_path, cpp, dsl, filename) from None
        toolchain.write_sealed(so_path, built.read_bytes())
    return so_path, cpp_path


def compile_program(text: str, filename: str = "<string>", app=None, machine=None) -> CompiledMapper:
    """Parse, check and compile a DSL program into a mapper library.

    Args:
        text: the DSL source.
        filename: its name in diagnostics.
        app: an `AppDescription` (or None) for the checker.
        machine: a `MachineDescription` (or None) for the checker.
    Returns:
        the `CompiledMapper` (from the cache when this text was compiled under this file name before).
    Raises:
        DslSyntaxError: a syntax error.
        CheckError: check errors (`diagnostics` has them all).
        BuildError: the generated C++ did not compile (a bug of ours; the file is kept).
        ToolchainError: no compiler or no Legion, or the build failed for a reason of its environment.
        MapperoptError: `filename` is not valid UTF-8.
    """
    require_utf8_name(filename)  # the library cites it in its messages, as UTF-8
    program = parse(text, filename)
    diagnostics = check(program, app, machine)
    if any(d.is_error for d in diagnostics):
        raise CheckError(diagnostics, text)
    so_path, cpp_path = build_program(program, text, filename)
    return CompiledMapper(so_path, cpp_path, text, [d for d in diagnostics if not d.is_error])
