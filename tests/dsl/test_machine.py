"""Machine models: every worked example of dsl-reference.md §9, on M24 (2 nodes x 4 GPUs, 1 CPU each)."""

import pytest

from mapperopt.descriptions import parse_machine_spec
from mapperopt.dsl import DslRuntimeError, Evaluator, parse
from mapperopt.dsl.machine import Proc, ProcSet, auto_factors, balance_factors, greedy_factors


def P(n, g):
    return Proc("GPU", n, g)


@pytest.fixture
def ev(m24):
    """Evaluates a DSL expression on M24 with `m = Machine(GPU)` and `m1 = m.merge(0, 1)` defined."""
    program = parse("m = Machine(GPU); m1 = m.merge(0, 1); x = 0;")
    evaluator = Evaluator(program, m24)

    def run(src):
        return evaluator.evaluate(parse(f"x = {src};").statements[0].value)

    return run


def test_properties(ev):
    assert ev("m.size") == (2, 4)
    assert ev("m.volume") == 8
    assert ev("m.len") == 2
    assert ev("Machine(OMP).size") == (2, 0)
    assert ev("Machine(CPU).size") == (2, 1)
    assert ev("m[:-1]") == (2,)


def test_has(ev):
    assert ev("m.has(FBMEM)") is True
    assert ev("m.has(ZCMEM)") is True
    assert ev("Machine(CPU).has(FBMEM)") is False
    assert ev("Machine(CPU).has(SYSMEM)") is True
    assert ev("Machine(OMP).has(SYSMEM)") is False  # an empty model
    assert ev("m[1, 2].has(FBMEM)") is True


def test_merge_table(ev):
    assert ev("m1.size") == (8,)
    assert [ev(f"m.merge(0, 1)[{i}]") for i in range(8)] == [P(i // 4, i % 4) for i in range(8)]
    assert [ev(f"m.merge(1, 0)[{i}]") for i in range(8)] == [P(i % 2, i // 2) for i in range(8)]


def test_split(ev):
    assert ev("m.split(1, 2).size") == (2, 2, 2)
    assert ev("m.split(1, 2)[0, 1, 0]") == P(0, 1)
    assert ev("m.split(1, 2)[0, 0, 1]") == P(0, 2)
    assert ev("m.split(1, 2)[1, 1, 1]") == P(1, 3)
    # split undoes merge only up to a swap
    for a in range(4):
        for b in range(2):
            assert ev(f"m.merge(0, 1).split(0, 4)[{a}, {b}]") == P(b, a) == ev(f"m.swap(0, 1)[{a}, {b}]")


def test_swap_slice_reverse(ev):
    assert ev("m.swap(0, 1).size") == (4, 2)
    assert ev("m.swap(0, 1)[3, 1]") == P(1, 3)
    assert ev("m.slice(1, 1, 2).size") == (2, 2)
    assert [ev(f"m.slice(1, 1, 2)[{a}, {b}]") for a in range(2) for b in range(2)] == [P(0, 1), P(0, 2), P(1, 1),
                                                                                        P(1, 2)]
    assert [ev(f"m.reverse(1)[1, {g}]") for g in range(4)] == [P(1, 3 - g) for g in range(4)]


def test_balance_split(ev):
    assert ev("m.balance_split(1, 2).size") == (2, 2, 2)
    assert ev("m.balance_split(1, 2)[1, 1, 1]") == P(1, 3)
    assert ev("m1.balance_split(0, 3).size") == (2, 2, 2)
    for a in range(2):
        for b in range(2):
            for c in range(2):
                assert ev(f"m1.balance_split(0, 3)[{a}, {b}, {c}]") == P(c, a + 2 * b)
    assert balance_factors(6, 2) == (3, 2)
    assert balance_factors(8, 2) == (4, 2)
    assert balance_factors(8, 3) == (2, 2, 2)
    assert balance_factors(12, 2) == (6, 2)


def test_auto_split_two_levels(ev):
    """The "auto2d" idiom of §9.5 for launch domain (4, 2)."""
    assert ev("m.auto_split(0, (4, 2)).size") == (2, 1, 4)
    assert ev("m.auto_split(0, (4, 2))[1, 0, 3]") == P(1, 3)
    b = "m.auto_split(0, (4, 2)).auto_split(2, (4, 2) / m.auto_split(0, (4, 2))[:-1])"
    assert ev(f"{b}.size") == (2, 1, 2, 2)
    expected = {(0, 0): P(0, 0), (1, 0): P(0, 1), (2, 0): P(1, 0), (3, 0): P(1, 1),
                (0, 1): P(0, 2), (1, 1): P(0, 3), (2, 1): P(1, 2), (3, 1): P(1, 3)}
    for (i0, i1), proc in expected.items():
        assert ev(f"{b}[{i0} * 2 / 4, {i1} * 1 / 2, {i0} % 2, {i1} % 2]") == proc


def test_greedy_versus_auto_split(ev):
    assert ev("m.greedy_split(0, (4, 2)).size") == (2, 1, 4)
    assert ev("m1.auto_split(0, (4, 2)).size") == (4, 2) == ev("m1.greedy_split(0, (4, 2)).size")
    assert greedy_factors(12, (6, 4)) == (6, 2)
    assert auto_factors(12, (6, 4)) == (4, 3)
    assert auto_factors(2, (4, 2)) == (2, 1)
    assert auto_factors(4, (2, 2)) == (2, 2)


def test_wildcards(ev):
    assert ev("m[0, *]") == ProcSet((P(0, 0), P(0, 1), P(0, 2), P(0, 3)))
    with pytest.raises(DslRuntimeError) as info:
        ev("m[*, 0]")
    assert info.value.code == "R405"


@pytest.mark.parametrize("src,code", [
    ("m[2, 0]", "R400"), ("m[0, -1]", "R400"), ("Machine(OMP)[0, 0]", "R400"), ("m[0]", "R408"),
    ("m[0, 0, 0]", "R408"), ("m.split(1, 3)", "R409"), ("m.merge(0, 0)", "R409"), ("m.merge(0, 2)", "R409"),
    ("m.slice(1, 2, 1)", "R409"), ("m.slice(1, 0, 4)", "R409"), ("m.balance_split(1, 1)", "R409"),
    ("m.auto_split(0, (0, 2))", "R409"), ("Machine(OMP).auto_split(1, (2,))", "R409"),
])
def test_errors(ev, src, code):
    with pytest.raises(DslRuntimeError) as info:
        ev(src)
    assert info.value.code == code
    assert str(info.value).startswith(f"[mapperopt] error {code}: ")


def test_index_error_message(ev):
    with pytest.raises(DslRuntimeError) as info:
        ev("m[2, 0]")
    assert "processor index out of bound: index 2 >= size 2 in dimension 0 of Machine(GPU) (2, 4)" in str(info.value)


def test_processor_coordinates(m24):
    """§9.6: the parent runs on P(1, 2)."""
    ev = Evaluator(parse("m = Machine(GPU); c = Machine(CPU);"), m24)
    m = ev.globals["m"]
    p = P(1, 2)
    assert m.coords_of(p) == (1, 2)
    assert m.merge(0, 1).coords_of(p) == (6,)
    assert m.merge(1, 0).coords_of(p) == (5,)
    assert m.split(1, 2).coords_of(p) == (1, 0, 1)
    assert m.swap(0, 1).coords_of(p) == (2, 1)
    assert m.slice(1, 1, 2).coords_of(p) == (1, 1)
    assert m.reverse(1).coords_of(p) == (1, 1)
    for model in (m.merge(1, 0), m.auto_split(0, (4, 2)).auto_split(2, (2, 2)), m.balance_split(1, 2)):
        assert model.proc_at(model.coords_of(p)) == p
    for bad in (m.slice(1, 0, 1), ev.globals["c"]):
        with pytest.raises(DslRuntimeError) as info:
            bad.coords_of(p)
        assert info.value.code == "R406"


def test_uneven_nodes_are_a_load_error():
    from mapperopt.descriptions import MachineDescription

    uneven = MachineDescription(2, (("CPU", (1, 1)), ("GPU", (4, 2))))
    with pytest.raises(DslRuntimeError) as info:
        Evaluator(parse("m = Machine(GPU);"), uneven)
    assert info.value.code == "R409"
    assert Evaluator(parse("m = Machine(CPU);"), uneven).globals["m"].size == (2, 1)


def test_synthetic_machine_shapes():
    assert parse_machine_spec("1x0x4").count("CPU") == 4
