"""Capture real failing runs for AutoGuide's tests: writes `tests/autoguide/captured/<name>.json`.

    .venv/bin/python tests/autoguide/capture.py [NAME ...]      # default: every recipe
    .venv/bin/python tests/autoguide/capture.py --list

Recipes:

* every bad mapper `tests/autoguide/bad_mappers/<bench>/<stem>.dsl` (name `<bench>-<stem>`), run through the
  harness exactly as `mapperopt run` does (benchmarks/autoguide_coverage.py reads its directives);
* `PROBE`: the Legion `probe` program with bad Legion/Realm flags, run through the harness's `execute`;
* `CXX`: C++ sources under `tests/autoguide/programs/` built with mapperopt's toolchain, as the compiler builds
  a generated mapper (they must fail to compile);
* `APPS`: a benchmark run through the harness with Legion's default mapper, or with a deliberately broken C++
  mapper from `tests/autoguide/programs/` loaded with `-mapper`, plus extra arguments;
* `FINISHED`: successful runs (the expert mapper with its per-task profile, the default mapper), for performance
  feedback;
* `USERAPP`: a test program of tests/app/ (foreign.cc, constrained.cc, shards.cc, graph.cc) with a DSL mapper,
  through the LD_PRELOAD shim, without `check` (the run itself must fail);
* `BLAS`: C programs under `tests/autoguide/programs/` linked with the OpenBLAS that numpy ships and run through
  the harness's `execute` (BLAS errors of GEMM leaf tasks).

Each captured file holds the `RunResult` (paths made relative), the command that reproduces it, the command line
of the failing execution, the rule expected to match, and the Legion version.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

from mapperopt import toolchain
from mapperopt.benchmarks.autoguide_coverage import REPO, BAD_MAPPERS, bad_mappers, run_bad_mapper
from mapperopt.errors import BuildError
from mapperopt.records import RunResult

HERE = Path(__file__).resolve().parent
CAPTURED = HERE / "captured"
PROGRAMS = HERE / "programs"

# name -> (probe arguments, expected rule)
PROBE = {
    "probe-unknown-lg-flag": (["-lg:foo"], "legion-unknown-option"),
    "probe-unknown-ll-flag": (["-ll:ocpu", "1"], "realm-unknown-option"),
    "probe-prof-without-logfile": (["-lg:prof", "1"], "legion-prof-logfile"),
    "probe-too-many-cpus": (["-ll:cpu", "200"], "legion-too-many-processors"),
    "probe-huge-rsize": (["-ll:rsize", "100000000"], "realm-registered-memory"),
}
# name -> (C++ source under programs/, expected rule)
CXX = {
    "cxx-compile-error": ("compile_error_mapper.cc", "cxx-compile-error"),
}
# name -> (benchmark, C++ mapper under programs/ or None for the default mapper, extra arguments, expected rule)
APPS = {
    "stencil-default_out_of_memory": ("stencil", None, ["-nx", "8004", "-ny", "8004"],
                                      "default-mapper-failed-allocation"),
    "stencil-missing_mapper_library": ("stencil", None, ["-mapper", "/nonexistent/libmapper.so"], "app-mapper-load"),
    "stencil-unmapped_requirement": ("stencil", "unmapped_mapper.cc", [], "silent-abort"),
    "stencil-gpu_variant_on_cpu": ("stencil", "gpu_variant_mapper.cc", [], "legion-variant-processor"),
    "circuit-held_back_tasks": ("circuit", "no_deferral_mapper.cc", [], "legion-select-tasks-to-map"),
    "circuit-corrupted_result": ("circuit", None, ["-test-corrupt"], "verification-failed"),
    "circuit-crashing_mapper": ("circuit", "crash_mapper.cc", [], "crash-signal"),
    "circuit-aborting_mapper": ("circuit", "abort_mapper.cc", [], "program-abort"),
    "pennant-missing_deck": ("pennant", None, ["-deck", "/nonexistent/deck.pnt"], "app-usage-error"),
    # The GEMMs' own usage errors (`error: -FLAG ...`, no program name) exit before any task runs, at stage start.
    "cosma-grid_flag_alone": ("cosma", None, ["-gx", "2"], "app-usage-error"),
    "summa-n_below_g": ("summa", None, ["-n", "100", "-g", "200"], "app-usage-error"),
    "pennant-corrupted_result": ("pennant", None, ["-test-corrupt"], "pennant-verification"),
    "pennant-sedov_energy_tolerance": ("pennant", None, ["-deck", "benchmarks/legion/pennant/decks/sedov.pnt"],
                                       "pennant-energy-tolerance"),
}
# name -> (benchmark, mapper, collect the per-task profile); these runs must succeed
FINISHED = {
    "circuit-expert_profiled": ("circuit", "expert", True),
    "circuit-default_mapper": ("circuit", "default", False),
    "stencil-expert_profiled": ("stencil", "expert", True),
}
# name -> (DSL mapper, expected rule): the foreign program (tests/app/foreign.cc, which reads tunable 11 as an int)
# with that mapper, compiled without the program's description (unchecked), through the LD_PRELOAD shim
USERAPP = {  # name -> (test program under tests/app/, its arguments and Legion's, DSL mapper, expected rule, CPUs)
    "foreign-tunable_int64": ("foreign", "-n 400 -steps 2", "Tunable 11 = 2;\n", "legion-tunable-size", 1),
    "constrained-align_16": ("constrained", "-n 400 -align -lg:safe_mapper", "Task * CPU;\nLayout * * * Align==16;\n",
                             "legion-alignment-constraint", 1),
    "shards-shared_no_access": ("shards", "-s 2", "Task * CPU;\n", "default-mapper-must-epoch-no-access", 2),
    # AOS with Align==64 on spmv's sum reduction into the image partition: Realm's copy engine asserts (this Legion)
    "graph-aos_align_reduction": ("graph", "-steps 5 -n 4000 -e 16000 -p 4",
                                  "Task * CPU;\nLayout spmv 2 * AOS F_order Align==64;\n", "assertion-failed", 2),
}
# name -> (C source under programs/, expected rule)
BLAS = {
    "dgemm-bad-lda": ("dgemm_bad_lda.c", "dgemm-illegal-parameter"),
}


def _scrub(text: str) -> str:
    """Text with machine-specific paths replaced by stable placeholders."""
    for path, name in ((str(REPO), "<repo>"), (str(toolchain.cache_dir()), "<cache>"), (str(Path.home()), "<home>")):
        text = text.replace(path, name)
    return re.sub(re.escape(tempfile.gettempdir()) + r"/tmp\w+", "<tmp>", text)


def _execute(app: str, cmd: list[str]) -> tuple[RunResult, str]:
    """Run `cmd` as the harness runs an application; the execution must fail."""
    from mapperopt.benchmarks.harness import execute

    with tempfile.TemporaryDirectory() as tmp:
        run = execute(cmd, Path(tmp), "", 60, toolchain.runtime_env())
    if run.stage is None:
        raise SystemExit(f"{shlex.join(cmd)} succeeded; it must fail")
    result = RunResult(app=app, mapper="default", status="failed", stage=run.stage, reason=run.reason,
                       attempts=(run.attempt,), log=run.log, settings={"timeout_s": 60, "command": shlex.join(cmd)})
    return result, shlex.join(cmd)


def _probe(args: list[str]) -> tuple[RunResult, str]:
    exe = toolchain.build("probe", [REPO / "benchmarks" / "legion" / "probe" / "probe.cc"])
    return _execute("probe", [str(exe), *args, "-logfile", "stderr"])


def _app(bench: str, mapper: str | None, args: list[str]) -> tuple[RunResult, str]:
    from mapperopt.benchmarks.harness import run_benchmark

    if mapper is not None:
        lib = toolchain.build(f"autoguide-{Path(mapper).stem}", [PROGRAMS / mapper], shared=True,
                              include_dirs=[REPO / "benchmarks" / "legion" / "common"])
        args = ["-mapper", str(lib), *args]
    with tempfile.TemporaryDirectory() as tmp:
        result = run_benchmark(bench, "default", extra_args=args, out_dir=Path(tmp) / "run")
    if result.ok:
        raise SystemExit(f"{bench} with {mapper or 'the default mapper'} {args} succeeded; it must fail")
    return result, result.settings.get("command", "")


def _finished(bench: str, mapper: str, profile: bool) -> tuple[RunResult, str]:
    from mapperopt.benchmarks.harness import run_benchmark

    with tempfile.TemporaryDirectory() as tmp:
        result = run_benchmark(bench, mapper, profile=profile, out_dir=Path(tmp) / "run")
    if not result.ok:
        raise SystemExit(f"{bench} with the {mapper} mapper failed ({result.reason}); it must succeed")
    return result, result.settings["command"]


def _blas(source: str) -> tuple[RunResult, str]:
    import numpy

    lib = next((Path(numpy.__file__).parent.parent / "numpy.libs").glob("libscipy_openblas*.so"))
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / Path(source).stem
        subprocess.run(["gcc", str(PROGRAMS / source), str(lib), f"-Wl,-rpath,{lib.parent}", "-o", str(exe)],
                       check=True)
        return _execute(Path(source).stem, [str(exe)])


def _user_app(program: str, args: str, dsl: str, cpus: int) -> tuple[RunResult, str]:
    from mapperopt.benchmarks.harness import execute
    from mapperopt.benchmarks.userapp import app_from_command, legion_command, shim_env
    from mapperopt.compiler import compile_program

    exe = toolchain.build(program, [REPO / "tests" / "app" / f"{program}.cc"])
    app = app_from_command(f"{exe} {args}")
    mapper = compile_program(dsl, "mapper.dsl")
    cmd = legion_command(app, "ci", cpus, 0)
    with tempfile.TemporaryDirectory() as tmp:
        run = execute(cmd, Path(tmp), "", 60, shim_env(app, Path(mapper.so_path)), expect_result=False)
    if run.stage is None:
        raise SystemExit(f"{program} with {dsl!r} succeeded; it must fail")
    result = RunResult(app=program, mapper="mapper.dsl", status="failed", stage=run.stage, reason=run.reason,
                       attempts=(run.attempt,), log=run.log, dsl=dsl,
                       settings={"timeout_s": 60, "command": shlex.join(cmd)})
    return result, shlex.join(cmd)


def _cxx(source: str) -> tuple[RunResult, str]:
    path = PROGRAMS / source
    legion = toolchain.find_legion()
    try:
        toolchain.build(f"autoguide-{path.stem}", [path], shared=True, legion=legion)
    except BuildError as exc:
        result = RunResult(app="mapper", mapper=source, status="failed", stage="compile",
                           reason=exc.message.splitlines()[0], log=exc.log)
        return result, exc.message.split(": ", 1)[-1]
    raise SystemExit(f"{source} built without error; it must fail")


def capture(name: str) -> Path:
    """Run recipe `name` and write its captured file; returns the file."""
    if name in PROBE:
        args, expect = PROBE[name]
        result, app_command = _probe(args)
    elif name in CXX:
        source, expect = CXX[name]
        result, app_command = _cxx(source)
    elif name in APPS:
        bench, mapper, args, expect = APPS[name]
        result, app_command = _app(bench, mapper, args)
    elif name in FINISHED:
        result, app_command = _finished(*FINISHED[name])
        expect = "performance"
    elif name in BLAS:
        source, expect = BLAS[name]
        result, app_command = _blas(source)
    elif name in USERAPP:
        program, args, dsl, expect, cpus = USERAPP[name]
        result, app_command = _user_app(program, args, dsl, cpus)
    else:
        bench, _, stem = name.partition("-")
        bad = next((b for b in bad_mappers(bench) if b.path.stem == stem), None)
        if bad is None:
            raise SystemExit(f"unknown recipe {name!r}; see --list")
        with tempfile.TemporaryDirectory() as tmp:
            result = run_bad_mapper(bad, Path(tmp))
        if result.ok:
            raise SystemExit(f"{name}: the bad mapper ran without failing; it must fail")
        expect, app_command = bad.expect, result.settings.get("command") or bad.command()
    data = result.to_json()
    data["run_dir"] = None
    record = {
        "name": name,
        "command": f".venv/bin/python tests/autoguide/capture.py {name}",
        "app_command": app_command,
        "expect": expect,
        "legion": toolchain.find_legion().version,
        "captured": date.today().isoformat(),
        "result": data,
    }
    out = CAPTURED / f"{name}.json"
    out.write_text(_scrub(json.dumps(record, indent=1)) + "\n")
    return out


def recipes() -> list[str]:
    benches = sorted(p.name for p in BAD_MAPPERS.iterdir() if p.is_dir())
    return [*PROBE, *CXX, *BLAS, *USERAPP, *APPS, *FINISHED, *[b.name for bench in benches for b in bad_mappers(bench)]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Capture real failing runs for AutoGuide's tests.")
    parser.add_argument("names", nargs="*", help="recipes (default: all)")
    parser.add_argument("--list", action="store_true", help="list the recipes")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(recipes()))
        return 0
    os.chdir(REPO)
    for name in args.names or recipes():
        out = capture(name)
        record = json.loads(out.read_text())
        print(f"{name}: {record['result']['status']}, stage {record['result']['stage']}, exit "
              f"{[a['exit_code'] for a in record['result']['attempts']]} -> {out.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
