"""The CPU stencil kernel needs SOA F_order instances of its private tile (requirement 0 of `stencil`; its GPU
variant takes any layout): the description says so (`layout`, `interleave`, `layout_kinds`), `check` rejects a mapper
that gives it AOS or C_order where the run is certain to fail (E223) and warns (W312) where that depends on the
machine, and the search space never renders such a Layout line."""

from __future__ import annotations

import random
import re
from pathlib import Path

from mapperopt.descriptions import parse_machine_spec
from mapperopt.dsl import check, parse
from mapperopt.dsl.commands import load_app
from mapperopt.optimizer.space import SearchSpace


def layout_diags(text: str, machine: str | None = "1x0x2") -> list[tuple[str, str]]:
    """(code, message) of the layout findings of `text` for stencil on `machine` (None: no machine given)."""
    spec = parse_machine_spec(machine) if machine else None
    return [(d.code, d.message) for d in check(parse(text, "<m>"), load_app("stencil"), spec)
            if d.code in ("E223", "W312")]


def test_check_rejects_aos_and_c_order_for_the_cpu_stencil_kernel():
    ((code, aos),) = layout_diags("Task * CPU;\nLayout * * * AOS;\n")
    assert code == "E223"
    assert "need SOA F_order instances, but this mapper gives AOS F_order to requirement 0 (private) of stencil" in aos
    assert "on this machine (1 node of 2 CPUs) they run on CPU (instances in SYSMEM)" in aos
    ((code, c_order),) = layout_diags("Layout * * * SOA C_order;\n")
    assert code == "E223" and "gives SOA C_order to requirement 0 (private) of stencil:" in c_order
    assert not layout_diags("Task * CPU;\nLayout * * * SOA F_order;\n")
    assert not layout_diags("Task * CPU;\n")  # Legion's default: SOA F_order
    assert not layout_diags("Task * CPU;\nLayout init_tile * * AOS C_order;\n")  # other tasks take any layout


def test_the_error_names_the_statement_and_what_to_write_instead():
    """The message and the hint name the requirement alike: its index, which the statement written uses, and its
    region."""
    (d,) = [d for d in check(parse("Task * CPU;\nLayout * * * AOS;\n", "<m>"), load_app("stencil"),
                             parse_machine_spec("1x0x2")) if d.code == "E223"]
    assert d.is_error and d.loc.line == 2
    assert d.hints == ("write `Layout * * * SOA;` instead",
                       "or keep line 2 for the other tasks and add `Layout stencil 0 CPU SOA F_order;` for requirement "
                       "0 (private) of stencil after it")
    assert "to requirement 0 (private) of stencil:" in d.message
    # The statement the hint writes passes the check.
    assert not layout_diags("Task * CPU;\nLayout * * * SOA;\n")
    assert not layout_diags("Task * CPU;\nLayout * * * AOS;\nLayout stencil 0 CPU SOA F_order;\n")
    # A statement for the memory: the second hint names that memory, so that it takes precedence.
    (d,) = [d for d in check(parse("Task * CPU;\nLayout * * SYSMEM AOS;\n", "<m>"), load_app("stencil"),
                             parse_machine_spec("1x0x2")) if d.code == "E223"]
    assert "add `Layout stencil 0 SYSMEM SOA F_order;` for requirement 0 (private) of stencil after it" in d.hints[1]
    assert not layout_diags("Task * CPU;\nLayout * * SYSMEM AOS;\nLayout stencil 0 SYSMEM SOA F_order;\n")
    # AOS from one statement, C_order from another: one error, a rewrite of each, or one statement after both.
    (d,) = [d for d in check(parse("Task * CPU;\nLayout * * * AOS;\nLayout * * CPU C_order;\n", "<m>"),
                             load_app("stencil"), parse_machine_spec("1x0x2")) if d.code == "E223"]
    assert d.hints == (
        "write `Layout * * * SOA;` instead of line 2", "write `Layout * * CPU F_order;` instead of line 3",
        "or keep lines 2 and 3 for the other tasks and add `Layout stencil 0 CPU SOA F_order;` for requirement 0 "
        "(private) of stencil after them")
    assert not layout_diags("Task * CPU;\nLayout * * * SOA;\nLayout * * CPU F_order;\n")
    assert not layout_diags("Task * CPU;\nLayout * * * AOS;\nLayout * * CPU C_order;\n"
                            "Layout stencil 0 CPU SOA F_order;\n")


def test_the_second_hint_keeps_the_statement_only_for_what_else_it_applies_to():
    """A Layout statement that names only the offending task: the hint said to keep it "for the other tasks", which
    it does not apply to. Kept for the task's other requirements where it names them too; where it applies to this
    requirement alone, rewriting it (the first hint) is the fix, and no second hint is given."""
    def hints(text: str) -> tuple[str, ...]:
        (d,) = [d for d in check(parse(text, "<m>"), load_app("stencil"), parse_machine_spec("1x0x2"))
                if d.code == "E223"]
        return d.hints

    add = "and add `Layout stencil 0 CPU SOA F_order;` for requirement 0 (private) of stencil after it"
    assert hints("Task * CPU;\nLayout stencil,init_tile * * AOS;\n")[1] == f"or keep line 2 for the other tasks {add}"
    assert hints("Task * CPU;\nLayout stencil * * AOS;\n") == (
        "write `Layout stencil * * SOA;` instead", f"or keep line 2 for the other requirements of stencil {add}")
    assert hints("Task * CPU;\nLayout stencil 0 * AOS;\n") == ("write `Layout stencil 0 * SOA;` instead",)
    assert hints("Task * CPU;\nLayout stencil private * AOS;\n") == ("write `Layout stencil private * SOA;` instead",)


def test_the_docs_and_rules_name_the_layout_the_description_requires():
    """The user's guide and AutoGuide's stride rule say what the CPU stencil kernel needs: the description's
    interleave and dimension order both (F_order alone still lets AOS through)."""
    root = Path(__file__).parents[2]
    req = load_app("stencil").task("stencil").regions[0]
    texts = [*(root / "docs").glob("*.md"), root / "autoguide" / "rules.yaml"]
    named = [m.group(1) for p in texts
             for m in re.finditer(r"CPU stencil kernel needs `?((?:SOA |AOS )?[CF]_order)", p.read_text())]
    assert len(named) >= 2 and set(named) == {f"{req.interleave} {req.layout}"}


def test_check_does_not_flag_the_gpu_variant():
    assert not layout_diags("Task * GPU,CPU;\nLayout * * * AOS C_order;\n", "1x2x2")
    ((code, message),) = layout_diags("Task * GPU,CPU;\nTask stencil CPU;\nLayout * * * AOS;\n", "1x2x2")
    assert code == "E223" and "requirement 0 (private) of stencil" in message


def test_without_a_machine_only_a_certain_failure_is_an_error():
    """Without a machine (compile --bench without --machine), a task mapped only to CPUs fails on every machine
    (E223); one listed GPU,CPU fails only on a machine without GPUs (W312)."""
    ((code, message),) = layout_diags("Task * CPU;\nLayout * * * AOS;\n", None)
    assert code == "E223" and message.endswith(
        "they can run only on CPU, against the layout constraint their CPU variant registers")
    ((code, message),) = layout_diags("Task * GPU,CPU;\nLayout * * * AOS;\n", None)
    assert code == "W312" and ("they run on CPU on a machine without GPU, against the layout constraint their CPU "
                               "variant registers") in message
    # CPU instances only in ZCMEM get AOS: whether they go there depends on the machine too.
    ((code, message),) = layout_diags("Task stencil CPU;\nRegion * * CPU ZCMEM,SYSMEM;\nLayout * * ZCMEM AOS;\n",
                                      None)
    assert code == "W312" and "with their instances in ZCMEM" in message
    assert not layout_diags("Task * GPU,CPU;\nLayout * * GPU AOS;\n", None)


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
            assert not layout_diags(dsl, machine) and not layout_diags(dsl, None)


def test_the_stencil_binary_describes_the_requirement():
    """`tune` reads the description from `stencil --describe`: it carries the same requirement as the config."""
    from mapperopt.benchmarks import describe_app

    (task,) = [t for t in describe_app("stencil", "ci")["tasks"] if t["name"] == "stencil"]
    req = task["regions"][0]
    assert (req["layout"], req["interleave"], req["layout_kinds"]) == ("F_order", "SOA", ["CPU"])
    assert not any("layout" in r for r in task["regions"][1:])
