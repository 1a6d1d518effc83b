"""Toolchain commands: `mapperopt build`, `mapperopt machine`, `mapperopt doctor`, and the machine probe they share."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import click

from mapperopt import toolchain
from mapperopt.errors import MapperoptError, ToolchainError

PROBE_TIMEOUT_S = 120


def probe_json(cpus: int | None = None, gpus: int | None = None, legion: toolchain.Legion | None = None) -> dict:
    """Run the `probe` Legion program and return the machine description it prints (interfaces.md §6).

    Args:
        cpus: CPU processors to ask Realm for (`-ll:cpu`; default: Realm's, 1).
        gpus: GPUs to ask Realm for (`-ll:gpu`; default 0).

    Raises:
        MapperoptError: GPUs requested on a machine without an NVIDIA driver, or fewer GPUs than requested.
        ToolchainError, BuildError: Legion or a compiler is missing or the probe does not build.
    """
    legion = legion or toolchain.find_legion()
    if gpus and not toolchain.has_cuda_driver():
        raise MapperoptError(f"--gpus {gpus} requested, but this machine has no NVIDIA driver (no GPU)",
                             hint="drop --gpus, or run on a machine with NVIDIA GPUs")
    source = resources.files("mapperopt.benchmarks") / "legion" / "probe" / "probe.cc"
    with resources.as_file(source) as path:
        exe = toolchain.build("probe", [Path(path)], legion=legion)
    cmd = [str(exe), "-logfile", "stderr", "-ll:util", "1"]
    if cpus is not None:
        cmd += ["-ll:cpu", str(cpus)]
    if gpus:
        cmd += ["-ll:gpu", str(gpus)]
    result = subprocess.run(cmd, capture_output=True, text=True, env=toolchain.runtime_env(legion),
                            timeout=PROBE_TIMEOUT_S)
    if result.returncode != 0:
        gpu_lines = [line for line in result.stderr.splitlines() if "GPUs requested" in line]
        what = gpu_lines[0].split(": ", 1)[-1] if gpu_lines else f"exit status {result.returncode}"
        raise MapperoptError(f"the Legion machine probe failed ({what}): {' '.join(cmd)}\n{result.stderr[-2000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def probe_machine(cpus: int | None = None, gpus: int | None = None):
    """The real machine as a `mapperopt.descriptions.MachineDescription` (see `probe_json`)."""
    from mapperopt.descriptions import MachineDescription

    return MachineDescription.from_json(probe_json(cpus, gpus))


def _format_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


@click.command()
@click.option("--cpus", type=click.IntRange(min=1), default=None, help="CPU processors per node (-ll:cpu) [default: 1].")
@click.option("--gpus", type=click.IntRange(min=0), default=None, help="GPUs per node (-ll:gpu) [default: 0].")
@click.option("--json", "as_json", is_flag=True, help="Print the machine description JSON instead of tables.")
def machine(cpus, gpus, as_json):
    """Show the machine as Legion sees it: processors and memories per node.

    Runs a real Legion program (`probe`). The JSON (`--json`) is the machine description used by
    `mapperopt check/explain` and the optimizer.
    """
    from rich.console import Console
    from rich.table import Table

    data = probe_json(cpus, gpus)
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    console = Console()
    title = f"Processors per node ({data['nodes']} node{'s' if data['nodes'] != 1 else ''})"
    procs = Table(title=title, min_width=len(title) + 4)
    procs.add_column("kind")
    procs.add_column("count per node", justify="right")
    for kind, counts in data["processors"].items():
        procs.add_row(kind, ", ".join(map(str, counts)))
    mems = Table(title="Memories")
    for column in ("kind", "node", "capacity", "processors with affinity"):
        mems.add_column(column)
    for mem in data["memories"]:
        affinity = "; ".join(f"{k} {','.join(map(str, v))}" for k, v in mem["procs"].items())
        mems.add_row(mem["kind"], str(mem["node"]), _format_bytes(mem["capacity"]), affinity)
    console.print(procs)
    console.print(mems)


@click.command()
@click.argument("benches", nargs=-1)
@click.option("--cuda", type=click.Choice(["on", "off", "auto"]), default="auto", show_default=True,
              help="Build CUDA variants: on, off, or auto (when nvcc is found).")
def build(benches, cuda):
    """Build benchmark applications (all when none is named). Builds are cached and incremental."""
    from mapperopt.benchmarks import build_app, known_benchmarks

    for name in benches or known_benchmarks():
        click.echo(f"{name}: {build_app(name, cuda=cuda)}")


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True


PYTHON_PACKAGES = [("lark", "lark"), ("jinja2", "jinja2"), ("numpy", "numpy"), ("click", "click"),
                   ("yaml", "pyyaml"), ("rich", "rich"), ("matplotlib", "matplotlib"), ("filelock", "filelock"),
                   ("opentuner", "opentuner")]
LLM_PACKAGES = [("openai", "openai"), ("opto", "trace-opt")]  # the `llm` extra: only the trace optimizer needs them


def _version(cmd: list[str], line: int = 0) -> str:
    """One line (`line`: its index, -1 for the last) of what `cmd` prints."""
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"({exc})"
    lines = (out.stdout or out.stderr).strip().splitlines()
    return lines[line] if lines else ""


def run_checks(legion_prefix: str | None = None) -> list[Check]:
    """Check everything mapperopt needs; each failed check says what to do."""
    checks = []
    missing = [pip for module, pip in PYTHON_PACKAGES if importlib.util.find_spec(module) is None]
    checks.append(Check("Python packages", not missing,
                        "all present" if not missing else "missing: " + ", ".join(missing),
                        f"pip install {' '.join(missing)}" if missing else ""))
    missing = [pip for module, pip in LLM_PACKAGES if importlib.util.find_spec(module) is None]
    checks.append(Check("LLM optimizer packages", not missing,
                        "all present" if not missing else "missing: " + ", ".join(missing) + " (only --optimizer "
                        "trace needs them)", "pip install 'mapperopt[llm]'" if missing else "", required=False))
    legion = None
    try:
        legion = toolchain.find_legion(legion_prefix)
        checks.append(Check("Legion", True, f"{legion.version} (Realm {legion.realm_version}) at {legion.prefix}"))
    except ToolchainError as exc:
        checks.append(Check("Legion", False, exc.message, exc.hint or ""))
    try:
        compiler = toolchain.cxx()
        checks.append(Check("C++ compiler", True, f"{compiler}: {_version([compiler, '--version'])}"))
    except ToolchainError as exc:
        checks.append(Check("C++ compiler", False, exc.message, exc.hint or ""))
    nvcc = toolchain.nvcc()
    checks.append(Check("nvcc (CUDA variants)", nvcc is not None,
                        f"{nvcc}: {_version([nvcc, '--version'], line=-2)}" if nvcc else "not found",
                        "install the CUDA toolkit or set CUDA_HOME (only needed for GPU runs)", required=False))
    if toolchain.has_cuda_driver():
        gpus = _version(["nvidia-smi", "-L"])
        checks.append(Check("GPUs and driver", True, f"NVIDIA driver found; {gpus}", required=False))
    else:
        checks.append(Check("GPUs and driver", False, "no NVIDIA driver: Legion will run on CPUs only",
                            "GPU runs need a machine with NVIDIA GPUs and their driver", required=False))
        try:
            checks.append(Check("libcuda.so.1 stand-in", True, f"built in {toolchain.cuda_stub_dir()}"))
        except ToolchainError as exc:
            checks.append(Check("libcuda.so.1 stand-in", False, exc.message, exc.hint or ""))
    if legion is not None and all(c.ok for c in checks if c.required):
        try:
            data = probe_json(legion=legion)
            checks.append(Check("Legion run (probe)", True, f"{data['nodes']} node(s), CPUs {data['processors']['CPU']}"))
        except MapperoptError as exc:
            checks.append(Check("Legion run (probe)", False, exc.message.splitlines()[0],
                                "run `mapperopt machine` to see the full error"))
    endpoint = os.environ.get("MAPPEROPT_LLM_BASE_URL")
    checks.append(Check("LLM endpoint", bool(endpoint),
                        endpoint or "none configured: `mapperopt tune` uses the offline rule-based search",
                        "set MAPPEROPT_LLM_BASE_URL, MAPPEROPT_LLM_MODEL and MAPPEROPT_LLM_API_KEY to use a model",
                        required=False))
    return checks


@click.command()
@click.option("--legion", "legion_prefix", default=None, metavar="PREFIX",
              help=f"Check a user-built Legion install instead of the legate wheel (also ${toolchain.PREFIX_ENV}).")
def doctor(legion_prefix):
    """Check that everything mapperopt needs is installed, and say how to fix what is missing."""
    from rich.console import Console
    from rich.table import Table

    checks = run_checks(legion_prefix)
    table = Table(title="mapperopt doctor")
    for column in ("check", "status", "detail", "what to do"):
        table.add_column(column, overflow="fold")
    for c in checks:
        status = "[green]ok[/]" if c.ok else ("[red]MISSING[/]" if c.required else "[yellow]optional[/]")
        table.add_row(c.name, status, c.detail, "" if c.ok else c.fix)
    Console(width=160).print(table)
    failed = [c.name for c in checks if c.required and not c.ok]
    if failed:
        raise MapperoptError("missing: " + ", ".join(failed))
