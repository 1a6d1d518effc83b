"""Each structured edit, applied as AutoGuide suggests it for a real captured failure, removes that failure: the
edited mapper runs through the harness (a user's test program: through the LD_PRELOAD shim), exactly as the bad
mapper did, and succeeds. Every edit op is shown at least once."""

from __future__ import annotations

import subprocess

import pytest
from capture import USERAPP
from captured_runs import captures, load

from mapperopt import toolchain
from mapperopt.autoguide import EDIT_OPS, apply_edits, explain
from mapperopt.benchmarks.autoguide_coverage import BAD_MAPPERS, REPO, read_bad_mapper
from mapperopt.benchmarks.harness import run_benchmark
from mapperopt.dsl import parse
from mapperopt.dsl.formatter import format_program


def suggested() -> list[tuple[str, tuple]]:
    """(capture name, edits) for every captured bad mapper whose feedback carries edits."""
    out = []
    for path in captures():
        record, result = load(path)
        fb = explain(result)
        if fb.edits and result.dsl is not None:
            out.append((record["name"], fb.edits))
    return out


SUGGESTED = suggested()


def test_every_edit_op_is_suggested_for_some_captured_failure():
    used = {e.op for _, edits in SUGGESTED for e in edits}
    assert sorted(set(EDIT_OPS) - used) == []


@pytest.mark.parametrize("name, edits", SUGGESTED, ids=[name for name, _ in SUGGESTED])
def test_applied_edits_remove_the_failure(name, edits, tmp_path):
    record, result = load(name)
    bench, _, stem = name.partition("-")
    fixed = format_program(apply_edits(parse(result.dsl, f"{stem}.dsl"), edits))
    if name in USERAPP:
        from mapperopt.benchmarks.userapp import app_from_command, legion_command, shim_env
        from mapperopt.compiler import compile_program

        program, args, _, _, cpus = USERAPP[name]
        exe = toolchain.build(program, [REPO / "tests" / "app" / f"{program}.cc"])
        app = app_from_command(f"{exe} {args}")
        mapper = compile_program(fixed, "fixed.dsl")
        done = subprocess.run(legion_command(app, "ci", cpus, 0), env=shim_env(app, mapper.so_path),
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"{[e.to_json() for e in edits]} left: {done.stderr[-2000:]}\n{fixed}"
        return
    bad = read_bad_mapper(BAD_MAPPERS / bench / f"{stem}.dsl")
    # One execution (no calibration): whether it succeeds is the question, not how fast.
    run = run_benchmark(bench, fixed, size=bad.size, extra_args=bad.args, min_time_s=0, out_dir=tmp_path / "run")
    assert run.ok, f"{[e.to_json() for e in edits]} left {run.stage}: {run.reason}\n{fixed}"
