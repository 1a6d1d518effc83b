"""Helpers of the compiler tests: the test applications (tests/app), the probe, and running an application
with a compiled mapper, collecting its placement trace (docs/compiler.md) and its -report lines."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from mapperopt import toolchain
from mapperopt.compiler import compile_program
from mapperopt.compiler.build import abi_dir
from mapperopt.descriptions import AppDescription, MachineDescription
from mapperopt.dsl import Evaluator, parse

ROOT = Path(__file__).resolve().parents[2]
APP_DIR = ROOT / "tests" / "app"
EXAMPLES = ROOT / "tests" / "dsl" / "examples"
# Legion flags of every test run: mapper output checked by Legion, logs on stderr (§5.2).
BASE_FLAGS = ("-ll:util", "1", "-ll:csize", "128", "-logfile", "stderr", "-lg:safe_mapper")
TIMEOUT_S = 120


@lru_cache(maxsize=None)
def build_testapp() -> Path:
    return toolchain.build("testapp", [APP_DIR / "testapp.cc"], include_dirs=[abi_dir()])


@lru_cache(maxsize=None)
def plainapp() -> Path:
    return toolchain.build("plainapp", [APP_DIR / "plain.cc"])


@lru_cache(maxsize=None)
def _probe() -> Path:
    return toolchain.build("probe", [ROOT / "benchmarks" / "legion" / "probe" / "probe.cc"])


@lru_cache(maxsize=None)
def machine(*legion_flags: str) -> MachineDescription:
    """The machine Legion sees with these resource flags (the probe's description, docs/dsl-reference.md §12)."""
    out = subprocess.run([str(_probe()), *legion_flags, "-ll:util", "1", "-logfile", "stderr"], capture_output=True,
                         text=True, env=toolchain.runtime_env(), timeout=TIMEOUT_S, check=True)
    return MachineDescription.from_json(out.stdout.strip().splitlines()[-1])


@lru_cache(maxsize=None)
def app_description(*app_flags: str) -> AppDescription:
    out = subprocess.run([str(build_testapp()), "--describe", *app_flags], capture_output=True, text=True, check=True,
                         env=toolchain.runtime_env())
    return AppDescription.from_json(out.stdout)


@dataclass
class Run:
    """One execution of an application: exit status, output, and the parsed trace and report lines."""

    returncode: int
    stdout: str
    stderr: str
    trace: list[dict] = field(default_factory=list)
    reports: list[dict] = field(default_factory=list)

    def mapper_errors(self) -> list[str]:
        return [ln for ln in self.stderr.splitlines() if ln.startswith("[mapperopt] ")]

    def aborted(self) -> bool:
        """Killed by abort() (exit status 134 from a shell)."""
        return self.returncode in (134, -6)

    def ok(self) -> bool:
        return self.returncode == 0 and '"verified": true' in self.stdout


def run(exe: Path, so: Path | None, tmp_path: Path, *, legion: tuple[str, ...] = ("-ll:cpu", "2"),
        app_flags: tuple[str, ...] = (), trace: bool = True, env: dict | None = None) -> Run:
    """Run `exe` with mapper library `so` (None: Legion's default mapper), returning its trace and -report lines."""
    trace_path = tmp_path / f"trace-{len(list(tmp_path.glob('trace-*')))}.jsonl"
    cmd = [str(exe), *legion, *BASE_FLAGS, *app_flags]
    if so is not None:
        cmd += ["-mapper", str(so)]
        if trace:
            cmd += ["-mapper-trace", str(trace_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env or toolchain.runtime_env(), timeout=TIMEOUT_S)
    result = Run(proc.returncode, proc.stdout, proc.stderr)
    if trace_path.exists():
        result.trace = [json.loads(ln) for ln in trace_path.read_text().splitlines()]
    result.reports = [json.loads(ln.split(" ", 1)[1]) for ln in proc.stdout.splitlines()
                      if ln.startswith("TESTAPP_RUN ")]
    return result


def run_policy(dsl: str, tmp_path: Path, *, legion=("-ll:cpu", "2"), app_flags=("-report",), **kw) -> Run:
    """Compile `dsl` and run the test application with it."""
    cm = compile_program(dsl, "policy.dsl")
    return run(build_testapp(), cm.so_path, tmp_path, legion=legion, app_flags=app_flags, **kw)


def expected_records(dsl: str, result: Run, legion: tuple[str, ...], app_flags: tuple[str, ...] = ()) -> list[dict]:
    """What the Python evaluator decides for every decision in `result.trace`, in the same order. Where Legion's
    default mapping placed a task (`placed_by` "default"), the evaluator leaves the processor open: its node, index
    and the candidates Legion chose among are taken from the trace (the kind is still the evaluator's)."""
    ev = Evaluator(parse(dsl, "policy.dsl"), machine(*legion), app_description(*app_flags))
    spawn = [r["proc"] for r in result.trace if r["task"] == "spawn"]
    out = []
    for rec in result.trace:
        parent = spawn[0] if rec["task"] == "child" and spawn and spawn[0]["index"] is not None else None
        point = tuple(rec["point"]) if rec["point"] is not None else None
        domain = tuple(rec["domain"]) if rec["domain"] is not None else None
        decided = ev.decide(rec["task"], point, domain, parent)
        if decided["placed_by"] == "default":
            decided["proc"] = {**decided["proc"], "node": rec["proc"]["node"], "index": rec["proc"]["index"]}
            decided["candidates"] = rec["candidates"]
        out.append(decided)
    return out


def by_task(records: list[dict], task: str) -> list[dict]:
    return [r for r in records if r["task"] == task]
