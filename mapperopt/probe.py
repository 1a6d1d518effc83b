"""The machine probe: the machine description Legion reports (processors and memories per node), for a given
command line or as a benchmark's run sees it. `check`, `compile`, the run harness and the optimizers check mappers
against it; it imports no command-line code, so a cached `mapperopt compile --bench` can probe (from the cache)
before answering.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import os
import re
from importlib import resources
from pathlib import Path

from mapperopt import toolchain
from mapperopt.errors import MapperoptError, exit_status
from mapperopt.files import read_json, write_atomically

PROBE_TIMEOUT_S = 120
# Probes this process made or read from the cache: (probe key, allowed cores) -> the machine description's JSON. One
# machine, command line and set of cores gives one answer, so `tune` and `compare`, which describe the machine and then
# check mappers against it, run the probe once, not twice.
_PROBED: dict[tuple, str] = {}


def probe_json(cpus: int | None = None, gpus: int | None = None, legion: toolchain.Legion | None = None,
               machine_flags: tuple[str, ...] = (), cached: bool = False) -> dict:
    """Run the `probe` Legion program and return the machine description it prints (docs/dsl-reference.md §12).

    Args:
        cpus: CPU processors to ask Realm for (`-ll:cpu`; default: Realm's, 1).
        gpus: GPUs to ask Realm for (`-ll:gpu`; default 0).
        machine_flags: the run's flags that create memories or processors other than CPUs and GPUs, e.g.
            `("-ll:rsize", "64")` (RDMEM exists only then), `("-ll:io", "2")`.
        cached: answer from `toolchain.cache_dir()/machines/` when the same probe, command line, host, core count and
            GPU devices were probed before (a Legion run takes seconds; `check` probes on every call). Within one
            process the same probe runs once in any case.

    Raises:
        MapperoptError: GPUs requested on a machine without an NVIDIA driver, or fewer GPUs than requested.
        ToolchainError, BuildError: Legion or a compiler is missing or the probe does not build.
    """
    legion = legion or toolchain.find_legion()
    if gpus:
        from mapperopt.benchmarks.apps import require_gpu_driver

        require_gpu_driver(gpus, "", 0, ())  # in `run`'s words
    source = resources.files("mapperopt.benchmarks") / "legion" / "probe" / "probe.cc"
    with resources.as_file(source) as path:
        exe = toolchain.build("probe", [Path(path)], legion=legion)
    cmd = [str(exe), "-logfile", "stderr", *probe_flags(cpus, gpus, machine_flags)]
    key = hashlib.sha256(json.dumps([cmd, os.uname().nodename, os.cpu_count(), sorted(glob.glob("/dev/nvidia[0-9]*"))])
                         .encode()).hexdigest()[:16]
    path = toolchain.cache_dir() / "machines" / f"{key}.json"
    here = (key, tuple(sorted(os.sched_getaffinity(0))))
    if here in _PROBED:
        return json.loads(_PROBED[here])
    if cached and path.is_file():
        with contextlib.suppress(MapperoptError):  # a cache: a record a crash or a hand damaged is probed again
            data = read_json(path)
            _PROBED[here] = json.dumps(data)
            return data
    # run_in_group: a hung probe must not outlive a killed mapperopt
    from mapperopt.benchmarks.harness import run_in_group, stderr_lines

    result = run_in_group(cmd, PROBE_TIMEOUT_S, env=toolchain.runtime_env(legion))
    if result.returncode != 0:
        gpu_lines = [line for line in result.stderr.splitlines() if "GPUs requested" in line]
        what = gpu_lines[0].split(": ", 1)[-1] if gpu_lines else exit_status(result.returncode)
        said = "\n".join(stderr_lines(result.stderr))[-2000:]  # without the libcuda stand-in's lines
        unsupported = _unsupported(result.stderr, cmd)
        if unsupported:
            raise MapperoptError(f"the Legion machine probe failed: {unsupported[0]}: {' '.join(cmd)}\n{said}",
                                 hint=unsupported[1])
        raise MapperoptError(f"the Legion machine probe failed ({what}): {' '.join(cmd)}\n{said}")
    data = json.loads(result.stdout.strip().splitlines()[-1])
    _PROBED[here] = json.dumps(data)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, json.dumps(data) + "\n")  # a reader never sees half a file
    return data


def probe_flags(cpus: int | None = None, gpus: int | None = None, machine_flags: tuple[str, ...] = ()) -> list[str]:
    """The Legion flags `probe_json` runs the probe with (its arguments as there): a memory size they do not give
    is Legion's default."""
    return ["-ll:util", "1", *(("-ll:cpu", str(cpus)) if cpus is not None else ()),
            *(("-ll:gpu", str(gpus)) if gpus else ()), *machine_flags]


def _unsupported(stderr: str, cmd: list[str]) -> tuple[str, str] | None:
    """(what, hint) for a flag of `cmd` this Legion build does not support, which Realm aborts on (its `stderr`):
    more than one Python processor without USE_DLMOPEN, or an option it does not know (`-ll:omp` without OpenMP);
    None for another failure."""
    if "support for multiple Python CPUs is not available" in stderr:
        count = [v for f, v in zip(cmd, cmd[1:]) if f == "-ll:py"][-1:] or ["N"]  # the last one counts
        return (f"this Legion build supports at most one Python processor per node (`-ll:py {count[0]}` asks for "
                "more): its Realm was built without USE_DLMOPEN", "give `-ll:py 1` in the run's flags, or leave "
                "-ll:py out")
    unknown = re.search(r"unrecognized lowlevel option: (\S+)", stderr)
    if unknown:
        flag = unknown[1]
        why = " (it was built without OpenMP: no OMP processors)" if flag == "-ll:omp" else ""
        return f"this Legion build does not know `{flag}`{why}", f"drop `{flag}` from the run's flags"
    return None


def probe_machine(cpus: int | None = None, gpus: int | None = None, machine_flags: tuple[str, ...] = (),
                  cached: bool = False):
    """The real machine as a `mapperopt.descriptions.MachineDescription` (see `probe_json`)."""
    from mapperopt.descriptions import MachineDescription

    return MachineDescription.from_json(probe_json(cpus, gpus, machine_flags=machine_flags, cached=cached))


def run_probe_json(bench=None, size: str = "ci", app_args: tuple[str, ...] = (), cpus: int | None = None,
                   gpus: int | None = None, memory: dict[str, int] | None = None) -> dict:
    """The machine description (`probe_json`) of this machine as `mapperopt run BENCH --size SIZE -- APP_ARGS` sees
    it: the size's processor counts, memory sizes and the memories its flags create (`-ll:rsize` makes RDMEM);
    `bench` is a benchmark's name or a user's program (`userapp.UserApp`); without one, Legion's default of one CPU
    (or `cpus`, and `gpus`).
    `cpus`, `gpus` and `memory` (MiB by "csize", "fsize", "zsize") replace the size's, as `run --cpus`, `--gpus`,
    `--csize`... do. Probed with Legion once per machine and command line (cached): `check`, `compile --bench` and
    the run itself all ask here, so they check against one machine.

    Raises:
        MapperoptError: the size does not exist, or the probe failed (no Legion, or GPUs without a driver).
    """
    if not bench:
        return probe_json(cpus, gpus, cached=True)
    from dataclasses import replace

    from mapperopt.benchmarks.apps import (_app_args, _machine_flags, _override_flags, load_config, processor_counts,
                                           require_gpu_driver)

    sz = replace((load_config(bench) if isinstance(bench, str) else bench.config).size(size), **(memory or {}))
    # `-- -ll:gpu N` on a size without GPUs too: the counts the run gets, and with GPUs the GPU memories it sets.
    cpus, gpus = processor_counts(sz.cpus if cpus is None else cpus, sz.gpus if gpus is None else gpus, app_args)
    require_gpu_driver(gpus, size, sz.gpus, app_args)  # before probe_json, which knows only the count
    _, passthrough = _app_args(sz.app_args(cpus, gpus), app_args)
    pairs, passthrough = _override_flags(sz.resource_flags(cpus, gpus), passthrough)
    # A memory size the size leaves to Legion's default but the flags after `--` give (`-- -ll:csize 64`): theirs.
    given = {f: v for f, v in zip(passthrough, passthrough[1:]) if f in ("-ll:csize", "-ll:fsize", "-ll:zsize")}
    resources = {**given, **dict(zip(pairs[::2], pairs[1::2]))}
    sizes = tuple(a for flag in ("-ll:csize", "-ll:fsize", "-ll:zsize", "-ll:util") if flag in resources
                  for a in (flag, resources[flag]))
    # A user program's own arguments (`--app './prog -ll:rsize 16'`) reach Legion as the flags after `--` do.
    # Less the resource flags, which the size's keys hold and the run gives once (`userapp._command_parts`).
    own = () if isinstance(bench, str) else _app_args(dict(zip(pairs[::2], pairs[1::2])), bench.args.get(size, ()))[1]
    return probe_json(cpus, gpus, machine_flags=sizes + _machine_flags([*own, *sz.legion_flags, *passthrough]),
                      cached=True)
