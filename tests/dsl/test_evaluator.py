"""Evaluator: expressions, the decisions of the ten strategies (tests/dsl/examples/s*.dsl), the experts (e*.dsl) and
Fig. A5 (fig_a5.dsl), and the run-time errors of dsl-reference.md §11.5."""

import io
from dataclasses import replace
from pathlib import Path

import pytest

from mapperopt.descriptions import parse_machine_spec
from mapperopt.dsl import DslRuntimeError, DslSyntaxError, Evaluator, parse
from mapperopt.dsl.commands import load_app
from mapperopt.dsl.machine import Proc

EXAMPLES = Path(__file__).parent / "examples"

MAIN = ("calculate_new_currents", "distribute_charge", "update_voltages")


def gpu(node, index):
    return {"kind": "GPU", "node": node, "index": index}


def example(name, machine, app=None):
    path = EXAMPLES / name
    return Evaluator(parse(path.read_text(), path.name), machine, app)


def value(src, machine=None):
    ev = Evaluator(parse("x = 0;"), machine or parse_machine_spec("2x4"))
    return ev.evaluate(parse(f"x = {src};").statements[0].value)


@pytest.mark.parametrize("src,want", [
    ("7 / 2", 3), ("7 % 2", 1), ("-7 / 2", -4), ("-7 % 2", 1), ("7 / -2", -4), ("7 % -2", -1), ("-7 / -2", 3),
    ("-7 % -2", -1), ("(4, 2, 3)[:-1]", (4, 2)), ("(4, 2, 3)[1:]", (2, 3)), ("(4, 2, 3)[-1]", 3),
    ("(4, 2, 3)[0:0]", ()), ("(4, 2) / (2, 1)", (2, 2)), ("(4, 2) * 2", (8, 4)), ("2 - (4, 2)", (-2, 0)),
    ("(4, 2).volume", 8), ("(4, 2).len", 2), ("(4, 2).size", (4, 2)), ("(4, 2)[:0].volume", 1),
    ("tuple(i * 2 for i in (0, 1, 2))", (0, 2, 4)), ("(*(1, 2), 3)", (1, 2, 3)), ("(1,)", (1,)),
    ("False ? 1 : True ? 3 : 4", 3), ("True ? 1 : False ? 3 : 4", 1), ("-(1, 2)", (-1, -2)),
    ("1 < 2 && 2 <= 2 && 3 > 2 && 3 >= 4 == False", True), ("(1, 2) == (1, 2) && (1, 2) != (2, 1)", True),
    ("!True || False", False), ("False && 1 / 0 == 0", False), ("True || 1 / 0 == 0", True),
    ("True ? 1 : 1 / 0", 1),
])
def test_expressions(src, want):
    got = value(src)
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize("src,code", [
    ("1 / 0", "R401"), ("1 % 0", "R401"), ("9223372036854775807 + 1", "R407"), ("-9223372036854775807 - 2", "R407"),
    ("(1, 2) + (1, 2, 3)", "R408"), ("(1, 2)[2]", "R408"), ("1 < 2 < 3", "R408"), ("1 ? 2 : 3", "R408"),
    ("!1", "R408"), ("1 == True", "R408"), ("Machine(GPU) / 2", "R408"), ("(1, 2).foo", "R408"),
    ("tuple(Machine(GPU) for i in (1,))", "R408"), ("(*1, 2)", "R408"),
])
def test_expression_errors(src, code):
    with pytest.raises(DslRuntimeError) as info:
        value(src)
    assert info.value.code == code


# ---------------------------------------------------------------------------------------------------- strategies


def test_common_expectations_of_all_strategies(circuit, m14):
    """M14: the main Circuit tasks run on GPUs, their requirements in framebuffer (unless a strategy overrides)."""
    for path in sorted(EXAMPLES.glob("s*.dsl")):
        ev = example(path.name, m14, circuit)
        for task in MAIN:
            if path.name == "s06.dsl" and task == "calculate_new_currents":
                continue
            rec = ev.decide(task, (0,), (4,))
            assert rec["proc"]["kind"] == "GPU", path.name
            for r in rec["regions"]:
                zero_copy = (path.name == "s02.dsl" and r["name"] in ("rp_shared", "rp_ghost")) or (
                    path.name == "s09.dsl" and task == "distribute_charge" and r["index"] == 1)
                assert r["memory"] == ("ZCMEM" if zero_copy else "FBMEM"), (path, r)
                if path.name not in ("s03.dsl", "s04.dsl", "s05.dsl"):
                    assert (r["layout"]["order"], r["layout"]["dims"]) == ("SOA", "C")


def test_s1_linear_block(circuit, m14, m24):
    ev = example("s01.dsl", m14, circuit)
    assert [ev.decide("calculate_new_currents", (i,), (4,))["proc"] for i in range(4)] == [gpu(0, i) for i in range(4)]
    ev24 = example("s01.dsl", m24, circuit)
    assert [ev24.decide("update_voltages", (i,), (8,))["proc"] for i in range(8)] == [
        gpu(i // 4, i % 4) for i in range(8)]
    for i in range(4):
        assert ev.decide("distribute_charge", (i,), (8,))["proc"] == gpu(0, i)
    for i in range(4, 8):
        with pytest.raises(DslRuntimeError) as info:
            ev.decide("calculate_new_currents", (i,), (8,))
        assert info.value.code == "R400"
    line = (EXAMPLES / "s01.dsl").read_text().splitlines().index(
        next(x for x in (EXAMPLES / "s01.dsl").read_text().splitlines() if x.startswith("def linearblock"))) + 1
    assert str(info.value) == (
        "[mapperopt] error R400: processor index out of bound: index 1 >= size 1 in dimension 0 of Machine(GPU) "
        f"(1, 4); in function 'linearblock' at s01.dsl:{line}:37, IndexTaskMap of task 'calculate_new_currents', "
        "point (7,), launch domain (8,)")


def test_s2_zero_copy_for_shared_and_ghost(circuit, m14):
    ev = example("s02.dsl", m14, circuit)
    for task in ("distribute_charge", "calculate_new_currents"):
        memories = [r["memory"] for r in ev.decide(task, (0,), (4,))["regions"]]
        assert memories[1:3] == ["ZCMEM", "ZCMEM"]
    assert ev.memories("calculate_new_currents", 1, "GPU") == ["ZCMEM", "FBMEM"]
    assert ev.memories("calculate_new_currents", 0, "GPU") == ["FBMEM"]
    assert ev.memories("calculate_new_currents", 1, "CPU") == ["SYSMEM"]


@pytest.mark.parametrize("name,order,dims,align", [
    ("s03.dsl", "AOS", "F", None), ("s04.dsl", "SOA", "F", None), ("s05.dsl", "SOA", "F", {"op": "==", "bytes": 64}),
])
def test_s3_s4_s5_layouts(circuit, m14, name, order, dims, align):
    ev = example(name, m14, circuit)
    for task in ("init_piece", *MAIN):
        for r in ev.decide(task, (1,), (4,))["regions"]:
            assert r["layout"] == {"order": order, "dims": dims, "align": align, "exact": False, "compact": False}


def test_s6_calculate_new_currents_on_cpu(circuit, m14):
    ev = example("s06.dsl", m14, circuit)
    assert ev.task_kinds("calculate_new_currents") == ["CPU", "GPU"]
    rec = ev.decide("calculate_new_currents", (2,), (4,))
    assert rec["proc"] == {"kind": "CPU", "node": None, "index": None}
    assert {r["memory"] for r in rec["regions"]} == {"SYSMEM"}
    assert ev.task_kind("distribute_charge") == ev.task_kind("update_voltages") == "GPU"


def test_s7_collect_memory(circuit, m14):
    ev = example("s07.dsl", m14, circuit)
    assert ev.decide("calculate_new_currents", (0,), (4,))["collect"] == [0, 1, 2, 3]
    assert ev.decide("distribute_charge", (0,), (4,))["collect"] == []


def test_s8_instance_limit(circuit, m14):
    ev = example("s08.dsl", m14, circuit)
    assert ev.decide("calculate_new_currents", (0,), (4,))["limited"] is True
    assert ev.instance_limit("calculate_new_currents", "GPU") == 4
    assert ev.decide("update_voltages", (0,), (4,))["limited"] is False


def test_s9_one_requirement_in_zero_copy(circuit, m14):
    ev = example("s09.dsl", m14, circuit)
    assert [r["memory"] for r in ev.decide("distribute_charge", (0,), (4,))["regions"]] == [
        "FBMEM", "ZCMEM", "FBMEM", "FBMEM"]
    assert {r["memory"] for r in ev.decide("calculate_new_currents", (0,), (4,))["regions"]} == {"FBMEM"}


def test_s10_cyclic(circuit, m14, m24):
    ev = example("s10.dsl", m24, circuit)
    want = [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2), (0, 3), (1, 3)]
    assert [ev.decide("calculate_new_currents", (i,), (8,))["proc"] for i in range(8)] == [gpu(*p) for p in want]
    ev14 = example("s10.dsl", m14, circuit)
    assert [ev14.decide("update_voltages", (i,), (4,))["proc"] for i in range(4)] == [gpu(0, i) for i in range(4)]
    for n in (1, 3, 16, 33):  # never out of range
        for i in range(n):
            ev14.decide("update_voltages", (i,), (n,))


def test_trace_record_shape(circuit, m14):
    rec = example("s01.dsl", m14, circuit).decide("calculate_new_currents", (3,), (4,))
    assert rec == {
        "task": "calculate_new_currents", "point": [3], "domain": [4], "proc": gpu(0, 3),
        "regions": [{"index": i, "name": name, "memory": "FBMEM",
                     "layout": {"order": "SOA", "dims": "C", "align": None, "exact": False, "compact": False}}
                    for i, name in enumerate(["rp_private", "rp_shared", "rp_ghost", "rp_wires", "rp_wires"])],
        "collect": [], "limited": False, "placed_by": "map",
    }
    single = example("s01.dsl", m14, circuit).decide("check_circuit", None, None)
    assert single["point"] is None and single["domain"] is None
    assert single["proc"] == {"kind": "CPU", "node": None, "index": None} and single["placed_by"] == "default"


# ---------------------------------------------------------------------------------------------------- experts


def test_e1_circuit_block(circuit, m14):
    ev = example("e1_circuit.dsl", m14, circuit)
    assert [ev.decide("calculate_new_currents", (i,), (4,))["proc"] for i in range(4)] == [gpu(0, i) for i in range(4)]
    for i in range(4):
        assert ev.decide("distribute_charge", (2 * i,), (8,))["proc"] == gpu(0, i)
        assert ev.decide("distribute_charge", (2 * i + 1,), (8,))["proc"] == gpu(0, i)
    assert ev.decide("init_piece", (3,), (4,))["proc"] == {"kind": "CPU", "node": 0, "index": 0}


def test_e2_stencil(stencil, m24):
    ev = example("e2_stencil.dsl", m24, stencil)
    assert [ev.decide("stencil", (i,), (8,))["proc"] for i in range(8)] == [gpu(i // 4, i % 4) for i in range(8)]
    assert ev.decide("check", (3,), (4,))["proc"] == {"kind": "CPU", "node": 1, "index": 0}
    assert ev.decide("increment", (0,), (4,))["regions"][0]["layout"]["dims"] == "F"


def test_e4_tiles2d(m14, m24):
    ev = example("e4_cannon.dsl", m24)
    want = {(0, 0): (0, 0), (1, 0): (0, 1), (2, 0): (1, 0), (3, 0): (1, 1),
            (0, 1): (0, 2), (1, 1): (0, 3), (2, 1): (1, 2), (3, 1): (1, 3)}
    for point, proc in want.items():
        assert ev.decide("task_1", point, (4, 2))["proc"] == gpu(*proc)
    ev14 = example("e4_cannon.dsl", m14)
    want14 = {(0, 0): (0, 0), (1, 0): (0, 1), (0, 1): (0, 2), (1, 1): (0, 3)}
    for point, proc in want14.items():
        assert ev14.decide("taco_fill", point, (2, 2))["proc"] == gpu(*proc)
    assert ev14.decide("task_4", None, None, parent_proc=gpu(0, 2))["proc"] == gpu(0, 2)
    assert ev14.decide("init_cublas", (5,), (8,))["proc"] == gpu(0, 1)
    rec = ev14.decide("task_4", None, None, parent_proc=gpu(0, 1))
    assert rec["limited"] is True


def test_e7_e8_e9_place_every_point(m14, m24):
    for name, task, domain in (("e7_johnson.dsl", "task_1", (2, 2, 2)), ("e8_cosma.dsl", "task_2", (2, 2, 2)),
                               ("e9_solomonik.dsl", "task_5", (2, 2, 2)), ("e9_solomonik.dsl", "task_1", (2, 2, 1)),
                               ("e7_johnson.dsl", "task_4", (2, 2, 2))):
        for machine in (m14, m24):
            ev = example(name, machine)
            procs = {tuple(ev.decide(task, (a, b, c), domain)["proc"].values())
                     for a in range(domain[0]) for b in range(domain[1]) for c in range(domain[2])}
            assert all(kind == "GPU" for kind, _, _ in procs)


def test_fig_a5_decisions(circuit, m14):
    ev = example("fig_a5.dsl", m14, circuit)
    for task in MAIN:
        rec = ev.decide(task, (0,), (4,))
        assert rec["proc"] == {"kind": "GPU", "node": None, "index": None}
        for r in rec["regions"]:
            assert r["memory"] == "FBMEM"
            assert r["layout"] == {"order": "AOS", "dims": "C", "align": {"op": "==", "bytes": 128},
                                   "exact": False, "compact": False}
    assert ev.task_kind("init_piece") == "CPU"  # OMP is skipped, no GPU variant


def test_portable_prelude_on_a_cpu_only_machine(circuit):
    machine = parse_machine_spec("1x0x2")
    ev = Evaluator(parse((EXAMPLES.parent.parent.parent / "configs" / "circuit.dsl").read_text()), machine, circuit)
    recs = [ev.decide("calculate_new_currents", (i,), (2,)) for i in range(2)]
    assert [r["proc"] for r in recs] == [{"kind": "CPU", "node": 0, "index": i} for i in range(2)]
    assert {r["memory"] for rec in recs for r in rec["regions"]} == {"SYSMEM"}


# ---------------------------------------------------------------------------------------------------- precedence


def test_precedence_rules(circuit, m14):
    src = """
Region * * GPU FBMEM;
Region * rp_shared GPU ZCMEM;
Region * all_shared GPU SYSMEM;
Region calculate_new_currents * GPU SYSMEM;
Region calculate_new_currents 2 * ZCMEM;
Layout * * * AOS Align==64;
Layout * * FBMEM F_order No_Align;
Layout * * GPU C_order SOA Exact;
Layout calculate_new_currents * * Compact;
Layout * * GPU C_order Align<=16;
"""
    ev = Evaluator(parse(src), m14, circuit)
    # task name first; then an index beats a name; then a nearer name beats an ancestor's; '*' last
    assert ev.memories("calculate_new_currents", 2, "GPU") == ["ZCMEM", "SYSMEM", "FBMEM"]
    assert ev.memories("calculate_new_currents", 1, "GPU") == ["SYSMEM", "ZCMEM", "FBMEM"]
    assert ev.memories("distribute_charge", 1, "GPU") == ["ZCMEM", "SYSMEM", "FBMEM"]
    # aspect by aspect: a memory kind beats a processor kind beats '*'; the later of two identical selectors
    # replaces the earlier entirely (its SOA and Exact are gone)
    assert ev.layout("distribute_charge", 0, "GPU", "FBMEM") == {
        "order": "AOS", "dims": "F", "align": None, "exact": False, "compact": False}
    assert ev.layout("distribute_charge", 0, "GPU", "ZCMEM") == {
        "order": "AOS", "dims": "C", "align": {"op": "<=", "bytes": 16}, "exact": False, "compact": False}
    assert ev.layout("update_voltages", 0, "CPU", "SYSMEM") == {
        "order": "AOS", "dims": "F", "align": {"op": "==", "bytes": 64}, "exact": False, "compact": False}
    assert ev.layout("calculate_new_currents", 0, "CPU", "SYSMEM")["compact"] is True


def test_identical_selectors_later_wins_and_task_lists_concatenate(circuit, m14):
    ev = Evaluator(parse("Task * GPU,CPU; Task * CPU; Task update_voltages GPU;"
                         "Region * * GPU FBMEM; Region * * GPU ZCMEM;"
                         "InstanceLimit update_voltages 3; InstanceLimit update_voltages GPU 5;"
                         "InstanceLimit update_voltages * 7;"), m14, circuit)
    assert ev.task_kinds("distribute_charge") == ["CPU"]
    assert ev.task_kinds("update_voltages") == ["GPU", "CPU"]
    assert ev.memories("update_voltages", 0, "GPU") == ["ZCMEM"]
    assert ev.instance_limit("update_voltages", "GPU") == 5
    assert ev.instance_limit("update_voltages", "CPU") == 7
    assert ev.instance_limit("distribute_charge", "GPU") is None


# ---------------------------------------------------------------------------------------------------- errors


def test_kind_mismatch_and_bad_results(circuit, m14):
    src = """mcpu = Machine(CPU); mgpu = Machine(GPU);
def on_cpu(Task task) { return mcpu[0, 0]; }
def number(Task task) { return 3; }
def node_set(Task task) { return mgpu[0, *]; }
IndexTaskMap calculate_new_currents on_cpu;
IndexTaskMap distribute_charge number;
IndexTaskMap update_voltages node_set;
"""
    ev = Evaluator(parse(src, "p.dsl"), m14, circuit)
    with pytest.raises(DslRuntimeError) as info:
        ev.decide("calculate_new_currents", (0,), (4,))
    assert info.value.code == "R402" and "runs on GPU" in str(info.value)
    with pytest.raises(DslRuntimeError) as info:
        ev.decide("distribute_charge", (0,), (4,))
    assert info.value.code == "R410" and "returned an int" in str(info.value)
    assert ev.decide("update_voltages", (1,), (4,))["proc"] == gpu(0, 0)  # a set resolves to its first processor


def test_no_usable_kind_and_no_memory(circuit, m14):
    ev = Evaluator(parse("Task * GPU; Region * * GPU RDMEM,SOCKMEM; Region * rp_wires GPU VIRTUAL;"), m14, circuit)
    with pytest.raises(DslRuntimeError) as info:
        ev.task_kind("init_piece")
    assert info.value.code == "R404"
    assert "variants CPU" in str(info.value)
    with pytest.raises(DslRuntimeError) as info:
        ev.decide("calculate_new_currents", (0,), (4,))
    assert info.value.code == "R403"
    assert "RDMEM: absent; SOCKMEM: absent" in str(info.value)
    with pytest.raises(DslRuntimeError) as info:
        ev.memory("calculate_new_currents", 3, Proc("GPU", 0, 0))
    assert "VIRTUAL: the variant is a leaf task; RDMEM: absent" in str(info.value)
    ev = Evaluator(parse("Region * * CPU FBMEM,SYSMEM;"), m14, circuit)
    assert ev.memory("init_piece", 0, Proc("CPU", 0, 0)) == "SYSMEM"  # FBMEM exists but no CPU sees it


def test_virtual_mappings(circuit, m14):
    inner = replace(circuit, tasks=tuple(replace(t, inner=True, leaf=False) if t.name == "update_voltages" else
                                         replace(t, leaf=False) if t.name == "distribute_charge" else t
                                         for t in circuit.tasks))
    ev = Evaluator(parse("Region * * GPU VIRTUAL,FBMEM;"), m14, inner)
    assert {r["memory"] for r in ev.decide("update_voltages", (0,), (4,))["regions"]} == {"VIRTUAL"}
    assert ev.decide("distribute_charge", (0,), (4,))["regions"][0] == {
        "index": 0, "name": "rp_private", "memory": "VIRTUAL", "layout": None}
    assert ev.decide("calculate_new_currents", (0,), (4,))["regions"][0]["memory"] == "FBMEM"


def test_parent_processor_and_prints(m14):
    src = """m = Machine(GPU);
print("load {} {}", m, (1,));
def same(Task task) { print("at {} {}", task, task.parent.processor(m)); return m[*task.parent.processor(m)]; }
def grand(Task task) { return m[*task.parent.parent.processor(m)]; }
def self_proc(Task task) { return m[*task.processor(m)]; }
SingleTaskMap t same; SingleTaskMap g grand; SingleTaskMap s self_proc;
"""
    stream = io.StringIO()
    ev = Evaluator(parse(src), m14, stream=stream)
    assert ev.decide("t", None, None, parent_proc=gpu(0, 3))["proc"] == gpu(0, 3)
    assert ev.printed == ["load Machine(GPU) (1, 4) (1,)", "at t (0,) (0, 3)"]
    assert stream.getvalue().splitlines() == ev.printed
    for task, message in (("g", "has no parent"), ("s", "has no processor yet")):
        with pytest.raises(DslRuntimeError) as info:
            ev.decide(task, None, None, parent_proc=gpu(0, 1))
        assert info.value.code == "R406" and message in str(info.value)
    with pytest.raises(DslRuntimeError) as info:
        ev.decide("t", None, None)  # default parent: the top-level task on CPU 0
    assert info.value.code == "R406"


def test_three_operand_form(m24):
    src = """mgpu = Machine(GPU);
def lin(IPoint p, ISpace s, MSpace m) { return p[0] % m.volume; }
def two(IPoint p, ISpace s, MSpace m) { return (p[0] / 4, p[0] % 4); }
IndexTaskMap a mgpu.merge(0, 1) lin;
"""
    with pytest.raises(DslSyntaxError):
        parse(src)  # the machine operand is a name, not an expression
    ev = Evaluator(parse(src.replace("mgpu.merge(0, 1) lin", "mall lin").replace(
        "mgpu = Machine(GPU);", "mgpu = Machine(GPU); mall = mgpu.merge(0, 1);") + "IndexTaskMap b mgpu two;"), m24)
    assert [ev.decide("a", (i,), (8,))["proc"] for i in (0, 5, 9)] == [gpu(0, 0), gpu(1, 1), gpu(0, 1)]
    assert ev.decide("b", (6,), (8,))["proc"] == gpu(1, 2)


def test_three_operand_form_with_an_int_on_a_model_of_two_dimensions(m24):
    """R408 says the int returned as the user wrote it, and why it does not fit: not "returned (0,); expected an
    int"."""
    ev = Evaluator(parse("mgpu = Machine(GPU);\ndef lin(IPoint p, ISpace s, MSpace m) { return p[0] % 2; }\n"
                         "IndexTaskMap a mgpu lin;\n"), m24)
    with pytest.raises(DslRuntimeError) as info:
        ev.decide("a", (2,), (8,))
    assert info.value.code == "R408"
    assert ("'lin' returned the int 0: one index for the 2-dimensional machine model 'mgpu' (size (2, 4)), which "
            "needs 2") in str(info.value), str(info.value)


def test_load_phase_error_is_raised_at_construction(m14):
    with pytest.raises(DslRuntimeError) as info:
        Evaluator(parse("x = 1;\ny = x / (x - 1);", "p.dsl"), m14)
    assert info.value.code == "R401"
    assert "at top level at p.dsl:2:7" in str(info.value)


def test_unknown_task_is_a_user_error(m14):
    from mapperopt.errors import MapperoptError

    with pytest.raises(MapperoptError, match="no task 'nope'"):
        Evaluator(parse("Task * GPU;"), m14, load_app("circuit")).decide("nope", None, None)


def test_collect_memory_leaves_the_readers_of_reduced_fields_tracked():
    """As the mapper (note R457): Legion folds task_4's partial sums of A into task_1's read-only instance, so that
    requirement is never collected, though selected (what the search space and AutoGuide read); circuit reduces
    only `charge`, which no read-only requirement reads."""
    johnson = Evaluator(parse("CollectMemory * *;"), None, load_app("johnson"))
    tasks = ("task_1", "task_2", "task_4", "taco_validate")
    assert {t: johnson.collected(t) for t in tasks} == {"task_1": [], "task_2": [0], "task_4": [1, 2],
                                                         "taco_validate": []}
    assert {t: johnson.collect(t) for t in tasks} == {"task_1": [0], "task_2": [0], "task_4": [1, 2],
                                                       "taco_validate": [0]}
    circuit = Evaluator(parse("CollectMemory * *;"), None, load_app("circuit"))
    assert circuit.collected("calculate_new_currents") == [0, 1, 2, 3]
