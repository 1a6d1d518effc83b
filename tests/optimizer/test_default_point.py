"""The search's default point (the `--start default` program, Legion's default mapper in the DSL) is a mapper that
works on every benchmark: it passes `check` against the benchmark and this machine, and it runs at size `ci`.

The GEMMs' BLAS leaf rejects tiles that are not row-major; their descriptions say so (`"layout": "C_order"` on each
tile requirement), and the search keeps that order instead of rendering Legion's F_order.
"""

from __future__ import annotations

import pytest

from mapperopt.benchmarks import describe_app, known_benchmarks, run_benchmark
from mapperopt.descriptions import AppDescription
from mapperopt.dsl.checker import check as check_program
from mapperopt.dsl.commands import run_machine
from mapperopt.dsl.parser import parse
from mapperopt.optimizer.space import SearchSpace

GEMMS = ("cannon", "summa", "pumma", "johnson", "solomonik", "cosma")


def default_program(bench: str):
    app, machine = describe_app(bench, "ci"), run_machine(bench, "ci", ())
    space = SearchSpace(app, machine.to_json())
    return space, space.render(space.default_point()), AppDescription.from_json(app), machine


@pytest.mark.parametrize("bench", known_benchmarks())
def test_the_default_point_passes_check(bench):
    space, dsl, app, machine = default_program(bench)
    errors = [d for d in check_program(parse(dsl, "<default>"), app, machine) if d.is_error]
    assert not errors, (dsl, errors)
    if bench in GEMMS:
        assert "Layout * * * SOA C_order;" in dsl and "layout/order" not in space.by_name


@pytest.mark.parametrize("bench", ["cannon", "summa", "pumma", "circuit"])
def test_the_default_point_runs(bench, tmp_path):
    _, dsl, _, _ = default_program(bench)
    result = run_benchmark(bench, dsl, out_dir=tmp_path, min_time_s=0)
    assert result.ok, (dsl, result.stage, result.reason)


def test_check_rejects_a_mapper_that_gives_the_gemm_tiles_the_wrong_order(tmp_path):
    """Without a Layout statement instances are F_order, which the BLAS leaf rejects on every processor kind: on this
    machine the run is certain to fail, so `check` says so as an error (E223) naming the tasks; the expert's
    `Layout * * * SOA C_order;` passes, a later F_order for one task does not."""
    _, _, app, machine = default_program("summa")

    def e223(text: str) -> list[str]:
        return [d.message for d in check_program(parse(text, "<m>"), app, machine) if d.code == "E223"]

    (message,) = e223("Task * CPU;\n")
    assert ("need C_order instances, but this mapper gives F_order to requirements 0 (A_tiles), 1 (B_tiles), "
            "2 (C_tiles) of taco_fill;") in message
    assert not e223("Task * CPU;\nLayout * * * SOA C_order;\n")
    (message,) = e223("Task * CPU;\nLayout * * * SOA C_order;\nLayout task_4 * * F_order;\n")
    assert "F_order to requirements 0 (A_tiles), 1 (B_tiles), 2 (C_tiles) of task_4:" in message
    assert "task_1" not in message
