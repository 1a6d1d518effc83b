"""The CPU stencil kernel needs SOA F_order instances of its private tile (requirement 0 of `stencil`; its GPU
variant takes any layout): the description says so (`layout`, `interleave`, `layout_kinds`), `check` warns (W312)
about a mapper that gives it AOS or C_order, and the search space never renders such a Layout line."""

from __future__ import annotations

import random

from mapperopt.descriptions import parse_machine_spec
from mapperopt.dsl import check, parse
from mapperopt.dsl.commands import load_app
from mapperopt.optimizer.space import SearchSpace


def w312(text: str, machine: str = "1x0x2") -> list[str]:
    return [d.message for d in check(parse(text, "<m>"), load_app("stencil"), parse_machine_spec(machine))
            if d.code == "W312"]


def test_check_flags_aos_and_c_order_for_the_cpu_stencil_kernel():
    (aos,) = w312("Task * CPU;\nLayout * * * AOS;\n")
    assert "need SOA F_order instances, but this mapper gives AOS F_order to stencil (private)" in aos
    (c_order,) = w312("Layout * * * SOA C_order;\n")
    assert "gives SOA C_order to stencil (private)" in c_order
    assert not w312("Task * CPU;\nLayout * * * SOA F_order;\n")
    assert not w312("Task * CPU;\n")  # Legion's default: SOA F_order
    assert not w312("Task * CPU;\nLayout init_tile * * AOS C_order;\n")  # other tasks take any layout


def test_check_does_not_flag_the_gpu_variant():
    assert not w312("Task * GPU,CPU;\nLayout * * * AOS C_order;\n", "1x2x2")
    (message,) = w312("Task * GPU,CPU;\nTask stencil CPU;\nLayout * * * AOS;\n", "1x2x2")
    assert "stencil (private)" in message


def test_the_stencil_space_has_no_rejected_layout():
    for machine in ("1x0x2", "1x2x2"):
        space = SearchSpace(load_app("stencil"), parse_machine_spec(machine).to_json())
        assert "layout/interleave" not in space.by_name and "layout/order" not in space.by_name
        rng = random.Random(0)
        points = [space.default_point(), *(space.random_point(rng) for _ in range(20))]
        points += [space.apply(points[0], m) for m in space.neighbours(points[0], rng=rng)]
        for point in points:
            dsl = space.render(point)
            assert "AOS" not in dsl and "C_order" not in dsl
            assert "Layout * * * SOA F_order" in dsl


def test_the_stencil_binary_describes_the_requirement():
    """`tune` reads the description from `stencil --describe`: it carries the same requirement as the config."""
    from mapperopt.benchmarks import describe_app

    (task,) = [t for t in describe_app("stencil", "ci")["tasks"] if t["name"] == "stencil"]
    req = task["regions"][0]
    assert (req["layout"], req["interleave"], req["layout_kinds"]) == ("F_order", "SOA", ["CPU"])
    assert not any("layout" in r for r in task["regions"][1:])
