"""The native toolchain: where Legion is, how to build against it, and how to launch what was built.

Legion comes from the installed `legate` wheel (found through Python's import machinery, never a fixed path) or,
for clusters that need GASNet or UCX networking, from a user-built install named by `MAPPEROPT_LEGION_PREFIX`.
Builds are content-addressed: an output's cache key covers its sources, the headers they can see, the flags, the
compiler and the Legion build (`Legion.key`), so the same thing is never built twice and a change rebuilds only what
it touches. The cache lives in `MAPPEROPT_CACHE` (default `~/.cache/mapperopt`) and is safe for concurrent builds (a
file lock per output, atomic renames).
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import importlib.util
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from mapperopt.errors import BuildError, MapperoptError, ToolchainError, exit_status, signal_name
from mapperopt.files import creation_error, write_atomically

PREFIX_ENV = "MAPPEROPT_LEGION_PREFIX"
CACHE_ENV = "MAPPEROPT_CACHE"
CUDA_ARCH_ENV = "MAPPEROPT_CUDA_ARCH"
DEFAULT_CUDA_ARCH = "sm_90"  # the H200s we report on
# Generous limits (seconds) past which a compiler is taken to hang: the longest compile, a CUDA application's, takes
# a few minutes on a busy machine.
VERSION_TIMEOUT_S = 60
COMPILE_TIMEOUT_S = 1800


@dataclass(frozen=True)
class Legion:
    """One Legion installation.

    Attributes:
        prefix: the install root (the `legate` package folder for the wheel).
        include_dir: folder holding `legion.h`, `realm.h` and `mappers/default_mapper.h`.
        lib_dir: folder holding the Legion and Realm shared libraries.
        cmake_dir: folder holding `LegionConfig.cmake`, or None if the install has none.
        libs: linker names of the Legion and Realm libraries (`legion-legate`, `realm-legate` for the wheel).
        version: `LEGION_VERSION` from `legion_defines.h`.
        realm_version: `REALM_VERSION` from `realm_defines.h`.
        cuda: whether this Legion was built with CUDA (`LEGION_USE_CUDA`).
        build: digest of this build: both defines headers and the size and modification time of both libraries.
    """

    prefix: Path
    include_dir: Path
    lib_dir: Path
    cmake_dir: Path | None
    libs: tuple[str, str]
    version: str
    realm_version: str
    cuda: bool
    build: str

    @property
    def key(self) -> str:
        """A short stable name for this Legion build, used to separate build caches."""
        return hashlib.sha256(f"{self.prefix}|{self.version}|{self.realm_version}|{self.build}".encode()
                              ).hexdigest()[:12]


def _define(header: Path, name: str) -> str | None:
    """The value of the `#define name` in `header`: a string's text without its quotes (`"legion-25.12"`), a
    number's digits (`64`), "" for a define without a value; None where the header does not define it."""
    match = re.search(rf'#define[ \t]+{name}\b(?:[ \t]+(?:"([^"]*)"|(\S+)))?', header.read_text(errors="replace"))
    return None if match is None else match[1] if match[1] is not None else match[2] or ""


def max_procs_per_node(legion: Legion | None = None) -> int | None:
    """The most processors (of all kinds, the utility ones included) that this Legion build runs on one node: its
    `LEGION_MAX_NUM_PROCS` in `legion_defines.h` (a run with more stops as it starts, "exceeds compile-time maximum");
    None where Legion or the define is not found."""
    try:
        legion = legion or find_legion()
        value = _define(legion.include_dir / "legion_defines.h", "LEGION_MAX_NUM_PROCS")
    except (ToolchainError, OSError):
        return None
    return int(value) if value and value.isdigit() else None


def _legion_at(prefix: Path, include_dir: Path, lib_dir: Path, cmake_dir: Path | None, source: str) -> Legion:
    defines = include_dir / "legion_defines.h"
    realm_defines = include_dir / "realm_defines.h"
    for needed in (include_dir / "legion.h", defines, realm_defines, include_dir / "mappers" / "default_mapper.h"):
        if not needed.is_file():
            raise ToolchainError(
                f"Legion at {prefix} ({source}) is incomplete: {needed} is missing",
                hint="reinstall it (`pip install --force-reinstall legate`) or point "
                f"{PREFIX_ENV} at a complete Legion install",
            )
    libs = None
    for legion_lib, realm_lib in (("legion-legate", "realm-legate"), ("legion", "realm")):
        if (lib_dir / f"lib{legion_lib}.so").exists() and (lib_dir / f"lib{realm_lib}.so").exists():
            libs = (legion_lib, realm_lib)
            break
    if libs is None:
        raise ToolchainError(
            f"no Legion/Realm shared libraries in {lib_dir} ({source})",
            hint="Legion must be built with shared libraries (BUILD_SHARED_LIBS=ON)",
        )
    version = _define(defines, "LEGION_VERSION") or "unknown"
    realm_version = _define(realm_defines, "REALM_VERSION") or "unknown"
    cuda = _define(defines, "LEGION_USE_CUDA") is not None
    # The versions name a commit (the wheel's is `git describe`, `-dirty` when patched), not a build: another wheel
    # or a rebuild at the same path may carry the same ones. Its configuration (the defines) and its libraries'
    # size and time, which a reinstall or a rebuild changes, tell builds apart for the cost of two stat calls.
    h = hashlib.sha256(defines.read_bytes() + b"\0" + realm_defines.read_bytes())
    for lib in libs:
        stat = (lib_dir / f"lib{lib}.so").stat()
        h.update(f"|{lib}|{stat.st_size}|{stat.st_mtime_ns}".encode())
    return Legion(prefix, include_dir, lib_dir, cmake_dir, libs, version, realm_version, cuda, h.hexdigest()[:16])


def find_legion(prefix: str | os.PathLike | None = None) -> Legion:
    """Locate Legion.

    Args:
        prefix: a user-built Legion install root (with `include/`, `lib/` or `lib64/`); defaults to the
            `MAPPEROPT_LEGION_PREFIX` environment variable, then to the installed `legate` wheel.

    Raises:
        ToolchainError: nothing found, or the install is incomplete.
    """
    prefix = prefix or os.environ.get(PREFIX_ENV)
    if prefix:
        root = Path(prefix).expanduser()
        if not root.is_dir():
            raise ToolchainError(f"Legion prefix {root} (from {PREFIX_ENV} or --legion) does not exist",
                                 hint=f"unset {PREFIX_ENV} to use the legate wheel, or name a Legion install prefix")
        lib_dir = next((root / d for d in ("lib64", "lib") if (root / d).is_dir()), root / "lib")
        cmake_dir = next((p.parent for p in root.glob("**/LegionConfig.cmake")), None)
        return _legion_at(root, root / "include", lib_dir, cmake_dir, f"from {PREFIX_ENV}")
    spec = importlib.util.find_spec("legate")
    if spec is None or not spec.submodule_search_locations:
        raise ToolchainError(
            "Legion not found: the Python package `legate` (which ships Legion) is not installed",
            hint=f"`pip install legate`, or set {PREFIX_ENV} to a Legion install prefix",
        )
    root = Path(list(spec.submodule_search_locations)[0])
    cmake_dir = root / "share" / "Legion" / "cmake"
    return _legion_at(
        root, root / "include" / "legate" / "deps", root / "lib64", cmake_dir if cmake_dir.is_dir() else None,
        "the legate wheel",
    )


def cache_path() -> Path:
    """The per-user build cache's folder (`MAPPEROPT_CACHE`, default `~/.cache/mapperopt`), which may not exist."""
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "mapperopt")


def invoked_as() -> str:
    """How a printed command names mapperopt: `mapperopt` where that is on PATH and this one, else this one as it was
    started, by its absolute path (shell-quoted): a virtual environment not activated (`.venv/bin/mapperopt`), whose
    pasted command would find another mapperopt or none ("mapperopt: command not found")."""
    started = Path(sys.argv[0]) if sys.argv and Path(sys.argv[0]).name == "mapperopt" else None
    on_path = shutil.which("mapperopt")
    if started is None or (on_path is not None and Path(on_path).resolve() == started.resolve()):
        return "mapperopt"
    return shlex.quote(str(started.absolute()))


def command(*words: object) -> str:
    """The command line `mapperopt WORDS...` to print for a user to paste into a shell: mapperopt named as
    `invoked_as` says, each word (its `str`) shell-quoted."""
    return " ".join([invoked_as(), *(shlex.quote(str(w)) for w in words)])


def env_eval() -> str:
    """`eval "$(mapperopt toolchain --env)"`, the shell command that sets the environment for running a program by
    hand, as printed commands give it: mapperopt named as `invoked_as` says, with this process's MAPPEROPT_CACHE
    where it is set, so that the LD_PRELOAD shim it builds is in the cache of the mapper library a command names."""
    cache = f"{CACHE_ENV}={shlex.quote(str(Path(os.environ[CACHE_ENV]).absolute()))} " \
        if os.environ.get(CACHE_ENV) else ""
    return f'eval "$({cache}{command("toolchain", "--env")})"'


def cache_dir() -> Path:
    """The per-user build cache (`cache_path`), created if needed.

    Raises:
        MapperoptError: it cannot be created (a file is there, a read-only file system, ...).
    """
    path = cache_path()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        why = "a file is there, not a folder" if isinstance(exc, FileExistsError) else exc.strerror
        raise MapperoptError(f"{CACHE_ENV}={path} cannot be used as the build cache ({why})",
                             hint=f"set {CACHE_ENV} to a writable folder (default ~/.cache/mapperopt)") from None
    return path


@lru_cache(maxsize=1)
def has_cuda_driver() -> bool:
    """True when a real NVIDIA driver library (`libcuda.so.1`) can be loaded by this process."""
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


def cxx() -> str:
    """The C++ compiler (`CXX`, else g++, else c++).

    Raises:
        ToolchainError: none found.
    """
    for name in filter(None, (os.environ.get("CXX"), "g++", "c++")):
        found = shutil.which(name)
        if found:
            return found
    raise ToolchainError(
        "no C++ compiler found (looked for $CXX, g++, c++)",
        hint="install one, e.g. `apt-get install g++` (C++17 is required)",
    )


def nvcc() -> str | None:
    """The CUDA compiler (`$CUDA_HOME/bin/nvcc` or `nvcc` on PATH), or None."""
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home and (Path(home) / "bin" / "nvcc").is_file():
        return str(Path(home) / "bin" / "nvcc")
    return shutil.which("nvcc")


@lru_cache(maxsize=1)
def cuda_lib_dir() -> Path:
    """The folder of the CUDA runtime libraries of the toolkit that `nvcc` belongs to, as nvcc itself reports it
    (nvcc may be a wrapper script outside the toolkit).

    Raises:
        ToolchainError: nvcc is missing or does not say.
    """
    tool = nvcc()
    if tool is None:
        raise ToolchainError("nvcc was not found", hint="install the CUDA toolkit or set CUDA_HOME")
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty.cu"
        empty.write_text("")
        out = subprocess.run([tool, "--dryrun", str(empty), "-o", str(Path(tmp) / "empty")], capture_output=True,
                             text=True)
    dirs = [Path(d) for d in re.findall(r'"-L([^"]+)"', out.stdout + out.stderr) if not d.rstrip("/").endswith("stubs")]
    if not dirs:
        said = _tail(out.stderr + out.stdout)
        tmp = os.environ.get("TMPDIR")
        if tmp and (not Path(tmp).is_dir() or creation_error(tmp)):  # Python and g++ fall back to /tmp; nvcc fails
            why = "is not writable" if Path(tmp).is_dir() else "does not exist"
            raise ToolchainError(f"TMPDIR={tmp} {why}, and {tool} needs it for its temporary files; "
                                 f"it said:{said}", hint="set TMPDIR to a writable folder, or unset it")
        raise ToolchainError(f"{tool} --dryrun did not name its library folder; it said:{said or ' nothing'}",
                             hint="set CUDA_HOME")
    return dirs[-1].resolve()


def cuda_enabled(mode: str, legion: Legion | None = None) -> bool:
    """Whether to build CUDA variants.

    Args:
        mode: "on", "off" or "auto" (on when nvcc is found and Legion was built with CUDA).

    Raises:
        ToolchainError: mode "on" without nvcc or with a Legion built without CUDA.
    """
    legion = legion or find_legion()
    if mode == "off":
        return False
    if mode == "on":
        if nvcc() is None:
            raise ToolchainError("--cuda on, but nvcc was not found", hint="install the CUDA toolkit or set CUDA_HOME")
        if not legion.cuda:
            raise ToolchainError(f"--cuda on, but Legion at {legion.prefix} was built without CUDA")
        return True
    return nvcc() is not None and legion.cuda


def _digest(*parts: bytes | str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() if isinstance(part, str) else part)
        h.update(b"\0")
    return h.hexdigest()[:16]


@lru_cache(maxsize=None)
def tool_version(tool: str) -> str:
    """What the compiler `tool --version` prints (part of the build keys).

    Raises:
        ToolchainError: it hangs (`VERSION_TIMEOUT_S`) or fails.
    """
    # a group of its own, killed whole at the timeout: what a hung wrapper script started would hold the pipes open.
    # Not the harness's run_in_group: importing the harness (and the DSL with it) would triple a cached compile's time
    proc = subprocess.Popen([tool, "--version"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, errors="replace", start_new_session=True)
    try:
        out, err = proc.communicate(timeout=VERSION_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise ToolchainError(f"{tool} --version did not answer in {VERSION_TIMEOUT_S} s",
                             hint="this compiler hangs: fix it, or name another with CXX") from None
    if proc.returncode != 0:
        raise ToolchainError(f"{tool} --version failed ({exit_status(proc.returncode)})" + _tail(err + out),
                             hint="this compiler is broken: fix it, or name another with CXX")
    return out.strip()


@contextmanager
def locked(path: Path):
    """Hold an exclusive lock on `path` (through `path.lock` beside it) for the `with` block: one process at a time
    builds it. A process that has to wait says so on stderr (else a silent pause)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"[mapperopt] waiting for another process's build of {path}...", file=sys.stderr, flush=True)
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _cached(path: Path, say: bool = False) -> bool:
    """Whether the build cache holds the object, library or executable `path`. One that is there but no ELF file
    (emptied or overwritten by hand or a failing disk: the build writes whole files) would fail every run as the
    program's fault: it is not held, and with `say` a note on stderr says that it is built again."""
    try:
        with open(path, "rb") as f:
            if f.read(4) == b"\x7fELF":
                return True
    except FileNotFoundError:
        return False
    except IsADirectoryError:  # named where it is used
        return True
    if say:
        print(f"note: {path} in the build cache is damaged (not an ELF file): building it again", file=sys.stderr,
              flush=True)
    return False


def _seal_path(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def write_sealed(path: Path, data: bytes) -> None:
    """Publish `data` at `path` (atomically) with its size and digest beside it, in `path.sha256`, for `sealed`."""
    write_atomically(path, data)
    write_atomically(_seal_path(path), f"{len(data)} {hashlib.sha256(data).hexdigest()}\n")


def sealed(path: Path, say: bool = False) -> bool:
    """Whether `path`, written by `write_sealed`, is whole and the one written (its size and digest match): a file
    damaged on disk or copied over by another would otherwise be reused for ever. With `say`, a note on stderr says
    when one that fails the check is built again (none for one without a digest, from an older mapperopt)."""
    try:
        size, digest = _seal_path(path).read_text().split()
        data = path.read_bytes()
    except (OSError, ValueError):
        return False
    if len(data) == int(size) and hashlib.sha256(data).hexdigest() == digest:
        return True
    if say:
        print(f"note: {path} in the build cache is damaged (not the library built for it): building it again",
              file=sys.stderr, flush=True)
    return False


def _tail(log: str, lines: int = 12) -> str:
    """The last `lines` lines of a compiler's output, indented under an error message ("" for none)."""
    kept = log.strip().splitlines()[-lines:]
    return "".join(f"\n    {line}" for line in kept)


def _environment_cause(log: str, returncode: int) -> str | None:
    """Why a compiler run failed for a reason outside the sources it was given (its environment: disk, TMPDIR,
    memory, a crash or kill of the compiler), from its output and exit status; None when the output may be a
    diagnostic of the sources."""
    if "Cannot create temporary file" in log:
        return (f"the C++ compiler cannot create temporary files in TMPDIR={os.environ.get('TMPDIR') or '/tmp'}"
                " (set TMPDIR to a writable folder)")
    for words, cause in _ENVIRONMENT_WORDS:
        if words in log.lower():
            if words in _DISK_WORDS:  # the compiler writes in these two places
                cause += (f" where the compiler writes: the build cache ({CACHE_ENV}={cache_path()}) or TMPDIR "
                          f"({os.environ.get('TMPDIR') or '/tmp'})")
            return cause
    if returncode < 0:
        return f"the compiler was killed by {signal_name(-returncode)}"
    return None


# Compiler output that names an environment failure, lower case -> the cause as said to the user.
_ENVIRONMENT_WORDS = [("no space left on device", "no space left on device"),
                      ("disk quota exceeded", "disk quota exceeded"),
                      ("read-only file system", "read-only file system"),
                      ("internal compiler error", "internal compiler error (a crash of the C++ compiler itself)"),
                      ("killed signal terminated program", "the compiler was killed (out of memory?)"),
                      ("virtual memory exhausted", "the compiler ran out of memory"),
                      ("cannot allocate memory", "the compiler ran out of memory")]
_DISK_WORDS = ("no space left on device", "disk quota exceeded", "read-only file system")


def _run_compiler(cmd: list[str], what: str, sources: list[Path]) -> None:
    """Run one compile or link step `cmd` of `what`.

    Raises:
        BuildError: it failed, perhaps for a diagnostic of the sources (`log`: its output, whose tail ends the
            message).
        ToolchainError: it failed for a reason of the environment (`_environment_cause`) or ran past
            `COMPILE_TIMEOUT_S`: not the sources' failure, so a tune stops rather than record it as the program's.
    """
    from mapperopt.benchmarks.harness import run_in_group  # a long build must not outlive a killed mapperopt

    try:
        result = run_in_group(cmd, COMPILE_TIMEOUT_S)
    except KeyboardInterrupt as exc:  # a Ctrl-C: the command line's handler names the build it stopped
        exc.building = what
        raise
    except subprocess.TimeoutExpired as exc:
        raise ToolchainError(f"building {what} did not finish in {COMPILE_TIMEOUT_S} s: {cmd[0]} hangs"
                             + _tail(exc.stderr or ""),
                             hint="check the compiler (or set CXX to another), then run the same command again"
                             ) from None
    if result.returncode != 0:
        log = result.stderr + result.stdout
        cause = _environment_cause(log, result.returncode)
        if cause is not None:
            raise ToolchainError(f"building {what} failed ({exit_status(result.returncode)}): {cause}; the "
                                 f"compiler said:{_tail(log) or ' nothing'}",
                                 hint="fix this, then run the same command again (`tune` and `compare` continue "
                                 "where they stopped)")
        raise BuildError(
            f"building {what} failed ({exit_status(result.returncode)}): {' '.join(cmd)}{_tail(log)}",
            log=log,
            kept=[str(s) for s in sources],
        )


def cuda_stub_dir() -> Path | None:
    """A folder holding the `libcuda.so.1` stand-in, built on first use; None where a real driver exists.

    Raises:
        ToolchainError: no C compiler to build it with.
    """
    if has_cuda_driver():
        return None
    source = resources.files("mapperopt") / "native" / "cuda_stub.c"
    text = source.read_bytes()
    out = cache_dir() / "cuda-stub" / _digest(text) / "libcuda.so.1"
    if out.exists():
        return out.parent
    cc = next((shutil.which(n) for n in (os.environ.get("CC") or "", "gcc", "cc") if n and shutil.which(n)), None)
    if cc is None:
        raise ToolchainError("no C compiler to build the libcuda.so.1 stand-in", hint="install gcc")
    with locked(out):
        if not out.exists():
            with tempfile.TemporaryDirectory(dir=out.parent.parent) as tmp:
                src = Path(tmp) / "cuda_stub.c"
                src.write_bytes(text)
                built = Path(tmp) / "libcuda.so.1"
                _run_compiler([cc, "-shared", "-fPIC", "-O2", "-Wl,-soname,libcuda.so.1", str(src), "-o", str(built)],
                              "the libcuda.so.1 stand-in", [src])
                os.replace(built, out)
    return out.parent


def runtime_env(legion: Legion | None = None, base: dict | None = None) -> dict[str, str]:
    """The environment for launching a Legion program we built: Legion's libraries, plus the `libcuda.so.1`
    stand-in on machines without an NVIDIA driver, on `LD_LIBRARY_PATH`.

    Args:
        base: the environment to extend (default: this process's).
    """
    legion = legion or find_legion()
    env = dict(os.environ if base is None else base)
    paths = [str(legion.lib_dir)]
    stub = cuda_stub_dir()
    if stub is not None:
        paths.append(str(stub))
    if env.get("LD_LIBRARY_PATH"):
        paths.append(env["LD_LIBRARY_PATH"])
    env["LD_LIBRARY_PATH"] = os.pathsep.join(paths)
    return env


def cxx_flags(legion: Legion, include_dirs: list[Path] = ()) -> list[str]:
    """Flags to compile C++ against `legion` (C++17, position independent, optimised)."""
    return ["-std=c++17", "-O2", "-fPIC", f"-I{legion.include_dir}", *[f"-I{d}" for d in include_dirs]]


def link_flags(legion: Legion) -> list[str]:
    """Flags to link against `legion`, with an rpath so the result finds Legion without LD_LIBRARY_PATH.

    `libcuda.so.1` is a dependency of Legion's library that may be absent at link time (no driver): it is
    resolved at run time, through the real driver or the stand-in (see `runtime_env`).
    """
    return [f"-L{legion.lib_dir}", f"-Wl,-rpath,{legion.lib_dir}", "-Wl,--allow-shlib-undefined",
            *[f"-l{lib}" for lib in legion.libs], "-ldl", "-lpthread"]


def _headers_digest(dirs: list[Path]) -> str:
    parts = []
    for d in dirs:
        for header in sorted(list(d.glob("*.h")) + list(d.glob("*.cuh")) + list(d.glob("*.inl"))):
            parts.append(header.name)
            parts.append(header.read_bytes())
    return _digest(*parts)


class _Announcer:
    """Says on stderr when a build starts and when it ends, unless both stdout and stderr are terminals: piped to a
    file, a first build (a minute for an application) would otherwise be a silent pause. On a terminal, the commands
    show their own progress."""

    def __init__(self, name: str, sources: int, enabled: bool):
        self.name, self.sources, self.started = name, sources, None
        self.enabled = enabled and not (sys.stdout.isatty() and sys.stderr.isatty())

    def start(self) -> None:
        if self.started is None:
            self.started = time.monotonic()
            if self.enabled:
                print(f"[mapperopt] building {self.name} ({self.sources} source file{'s' * (self.sources != 1)})...",
                      file=sys.stderr, flush=True)

    def end(self, out: Path) -> None:
        if self.started is not None and self.enabled:
            print(f"[mapperopt] built {self.name} in {time.monotonic() - self.started:.0f} s: {out}", file=sys.stderr,
                  flush=True)


def build(name: str, sources: list[Path], *, shared: bool = False, include_dirs: list[Path] = (),
          cuda: bool = False, extra_cxx: list[str] = (), extra_link: list[str] = (),
          legion: Legion | None = None, announce: bool = True) -> Path:
    """Build an executable or shared library from C++ (`.cc`) and, with `cuda`, CUDA (`.cu`) sources.

    Each source becomes an object cached by its content, the headers in `include_dirs` and in the sources' folders,
    the flags and the compiler; the output is cached by its objects and link flags. Returns the cached output's path.
    With `announce`, a build that compiles or links anything prints one line on stderr when it starts and one when
    it ends, unless stdout and stderr are both terminals (`_Announcer`).

    Raises:
        ToolchainError: a compiler is missing.
        BuildError: a compile or link step failed (`log` has the compiler output).
    """
    legion = legion or find_legion()
    compiler = cxx()
    include_dirs = [Path(d) for d in include_dirs]
    flags = cxx_flags(legion, include_dirs) + list(extra_cxx) + (["-DMAPPEROPT_USE_CUDA"] if cuda else [])
    # A source's own folder is searched for its quoted includes, so its headers count too.
    headers = _headers_digest(list(dict.fromkeys(include_dirs + [Path(s).parent for s in sources])))
    root = cache_dir() / legion.key
    objects = []
    progress = _Announcer(name, len(sources), announce)
    for src in sources:
        src = Path(src)
        if src.suffix == ".cu":
            if not cuda:
                continue
            tool = nvcc()
            arch = os.environ.get(CUDA_ARCH_ENV, DEFAULT_CUDA_ARCH)
            cmd_flags = ["-std=c++17", "-O3", f"-arch={arch}", "-Xcompiler", "-fPIC", f"-I{legion.include_dir}",
                         *[f"-I{d}" for d in include_dirs], "-DMAPPEROPT_USE_CUDA", *extra_cxx]
        else:
            tool, cmd_flags = compiler, flags
        key = _digest(src.read_bytes(), headers, tool, tool_version(tool), *cmd_flags, legion.version)
        obj = root / "obj" / f"{src.stem}-{key}.o"
        if not _cached(obj):
            progress.start()  # before the lock: waiting for another process's build of it is part of the pause
            with locked(obj):
                if not _cached(obj, say=True):
                    tmp = obj.with_name(f"{obj.name}.{os.getpid()}.tmp")
                    _run_compiler([tool, *cmd_flags, "-c", str(src), "-o", str(tmp)], f"{name} ({src.name})",
                                  [src])
                    os.replace(tmp, obj)
        objects.append(obj)
    link = link_flags(legion) + list(extra_link) + (["-lcudart_static", "-lrt"] if cuda else [])
    if cuda:
        link = [f"-L{cuda_lib_dir()}"] + link
    key = _digest(*[o.name for o in objects], *link, str(shared))
    out = root / ("lib" if shared else "bin") / f"{name}-{key}" / (f"lib{name}.so" if shared else name)
    if not _cached(out):
        progress.start()
        with locked(out):
            if not _cached(out, say=True):
                tmp = out.with_name(f"{out.name}.{os.getpid()}.tmp")
                _run_compiler([compiler, *(["-shared"] if shared else []), *map(str, objects), "-o", str(tmp), *link],
                              f"{name} (link)", [Path(s) for s in sources])
                os.replace(tmp, out)
    progress.end(out)
    return out


@dataclass(frozen=True)
class Blas:
    """The CPU BLAS the matrix-multiply benchmarks link: OpenBLAS from the `scipy-openblas32` wheel (a project
    dependency; 32-bit integers, symbols prefixed `scipy_`).

    Attributes:
        include_dir: folder holding `cblas.h`.
        lib_dir: folder holding the shared library.
        lib: its linker name (`scipy_openblas`).
        version: the wheel's version.
    """

    include_dir: Path
    lib_dir: Path
    lib: str
    version: str

    def cxx_flags(self) -> list[str]:
        """Compile flags; the version is part of them so that a BLAS upgrade rebuilds."""
        return [f"-I{self.include_dir}", f'-DMAPPEROPT_BLAS_VERSION="{self.version}"']

    def link_flags(self) -> list[str]:
        """Link flags, with an rpath so the program finds the library without LD_LIBRARY_PATH."""
        return [f"-L{self.lib_dir}", f"-Wl,-rpath,{self.lib_dir}", f"-l{self.lib}"]


@lru_cache(maxsize=1)
def find_blas() -> Blas:
    """Locate OpenBLAS through the installed `scipy_openblas32` package (like Legion through `legate`).

    Raises:
        ToolchainError: the package is missing or incomplete.
    """
    try:
        import scipy_openblas32 as pkg
    except ImportError:
        raise ToolchainError("the BLAS for the matrix-multiply benchmarks is missing: the Python package "
                             "`scipy-openblas32` is not installed",
                             hint="`pip install scipy-openblas32` (mapperopt depends on it)") from None
    include_dir, lib_dir = Path(pkg.get_include_dir()), Path(pkg.get_lib_dir())
    lib = pkg.get_library()
    if not (include_dir / "cblas.h").is_file() or not (lib_dir / f"lib{lib}.so").exists():
        raise ToolchainError(f"scipy-openblas32 at {include_dir.parent} is incomplete (cblas.h or lib{lib}.so "
                             "missing)", hint="`pip install --force-reinstall scipy-openblas32`")
    return Blas(include_dir, lib_dir, lib, pkg.__version__)


def find_cublas() -> tuple[Path, Path] | None:
    """The include and library folders of cuBLAS in the CUDA toolkit that `nvcc` belongs to, or None when that
    toolkit has no cuBLAS (`cublas_v2.h` and `libcublas.so`)."""
    if nvcc() is None:
        return None
    lib_dir = cuda_lib_dir()
    for include_dir in (lib_dir.parent / "include", lib_dir.parent.parent / "include"):
        if (include_dir / "cublas_v2.h").is_file() and (lib_dir / "libcublas.so").exists():
            return include_dir, lib_dir
    return None
