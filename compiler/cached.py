"""The answer of a `mapperopt compile` that was done before, without click, the parser or the generator.

A compile that succeeded is recorded under the build cache by everything that decides its outcome (the text, its
file name, --bench, --machine or, with --bench alone, the probed machine, the sources of the DSL and compiler
packages, the C++ compiler and Legion). Most of a cached compile's time was imports (click, lark, the syntax tree,
jinja2): `mapperopt.cli.main` calls `answer` first, which imports only what the record's key needs and leaves every
other case (a miss, help, an unusual command line, an error to report) to the click command in
compiler/commands.py.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path

from mapperopt.errors import MapperoptError
from mapperopt.files import write_atomically

# the compile command's options that take a value -> its parameter name
_OPTIONS = {"-o": "output", "--emit-cpp": "emit_cpp", "--bench": "bench", "--machine": "machine_spec"}


def _package_digest(h, package: str) -> None:
    folder = Path(importlib.util.find_spec(package).submodule_search_locations[0])
    for path in sorted(p for p in folder.rglob("*")
                       if p.is_file() and p.suffix in (".py", ".lark", ".j2", ".cc", ".h")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())


def record_path(text: str, file: str, bench: str | None, machine_spec: str | None, described: str = "",
                machine: str = "") -> Path:
    """Where the outcome of this compile is recorded; `described`: the description of the run given by --size or
    the flags after `--` (JSON text), empty for the stored one of size ci; `machine`: the probed machine checked
    against (`machine_text`), empty when none was."""
    from mapperopt import toolchain

    legion = toolchain.find_legion()
    parts = [text, file, bench or "", machine_spec or "", legion.key, legion.version]
    h = hashlib.sha256("\0".join(parts + [described, machine] if described or machine else parts).encode())
    compiler = Path(toolchain.cxx()).resolve()
    stat = compiler.stat()
    h.update(f"{compiler}|{stat.st_size}|{stat.st_mtime_ns}".encode())
    for package in ("mapperopt.dsl", "mapperopt.compiler", "mapperopt.benchmarks"):
        if package == "mapperopt.benchmarks":  # the ABI header and, with --bench, the description
            h.update((Path(importlib.util.find_spec(package).submodule_search_locations[0]) / "legion" / "common"
                      / "mapperopt_abi.h").read_bytes())
        else:
            _package_digest(h, package)
    if bench:
        configs = Path(importlib.util.find_spec("mapperopt.configs").submodule_search_locations[0])
        app = configs / f"{bench}.app.json"
        h.update(app.read_bytes() if app.is_file() else b"")
    return toolchain.cache_dir() / legion.key / "compiles" / f"{h.hexdigest()[:32]}.json"


def read_record(record: Path) -> tuple[str, str, str]:
    """The mapper library's path, its C++ file's and the compiler's messages that the compile record `record` holds.

    Raises:
        OSError: it cannot be read (there is none).
        ValueError: it is damaged: not JSON, or not three strings (a cache: the caller compiles again).
    """
    value = json.loads(record.read_text())
    if not (isinstance(value, list) and len(value) == 3 and all(isinstance(v, str) for v in value)):
        raise ValueError(f"{record}: not a compile record")
    return tuple(value)


def machine_text(bench, size: str = "ci", app_args: tuple[str, ...] = (), cpus: int | None = None,
                 gpus: int | None = None) -> str:
    """The machine a compile with --bench (`bench`: its name) or --app (a `UserApp`) and without --machine is checked
    against, as it goes into the record's key: this machine as `mapperopt run BENCH --size SIZE --cpus CPUS --gpus
    GPUS -- APP_ARGS` sees it (the probe `check` uses, cached; counts None: not given), as JSON text. Raises
    MapperoptError when it cannot be probed."""
    from mapperopt.probe import run_probe_json

    return json.dumps(run_probe_json(bench, size, app_args, cpus, gpus), sort_keys=True)


def _arguments(args: list[str]) -> dict | None:
    """FILE and the options of `mapperopt compile ARGS`, or None for anything but the plain forms (click decides)."""
    found: dict = {}
    k = 0
    while k < len(args):
        word = args[k]
        name, eq, value = word.partition("=")
        if name in _OPTIONS and _OPTIONS[name] not in found and (eq or k + 1 < len(args)):
            if not eq:
                k += 1
                value = args[k]
            found[_OPTIONS[name]] = value
        elif word.startswith("-") or "file" in found:
            return None
        else:
            found["file"] = word
        k += 1
    return found if "file" in found else None


def answer(args: list[str]) -> int | None:
    """Answer `mapperopt compile ARGS` from its record: print the recorded messages (stderr) and the library's path,
    write -o and --emit-cpp copies; returns the exit status 0, or None when the record does not answer it (then
    nothing was written)."""
    found = _arguments(args)
    if found is None or found.get("machine_spec") == "":  # an empty --machine is an error, not none: click says so
        return None
    try:
        if not Path(found["file"]).is_file():  # a device (/dev/zero) is endless: the command reads up to its limit
            return None
        text = Path(found["file"]).read_text()
        bench, machine_spec = found.get("bench"), found.get("machine_spec")
        machine = machine_text(bench) if bench and not machine_spec else ""
        record = record_path(text, found["file"], bench, machine_spec, machine=machine)
        so_path, cpp_path, messages = read_record(record)
        from mapperopt import toolchain

        if not (toolchain.sealed(Path(so_path)) and Path(cpp_path).is_file()):  # gone or damaged: compile again
            return None
        for source, target in ((cpp_path, found.get("emit_cpp")), (so_path, found.get("output"))):
            if target:  # whole or not at all: a full disk leaves no file cut short
                write_atomically(Path(target), Path(source).read_bytes())
    except (OSError, ValueError, MapperoptError):
        return None  # the click command reports it, or compiles
    if messages:
        print(messages, file=sys.stderr)
    print(found.get("output") or so_path)
    return 0
