"""Differential tests: the compiled mapper in real Legion against the Python evaluator of the DSL, on CPU machines of
several shapes (-ll:cpu 1..4). Every decision of the placement trace must equal the evaluator's record for the same
task and point, and the load phase's prints (expression semantics, machine models) must print the same lines."""

from __future__ import annotations

import pytest

from compiler_support import app_description, expected_records, machine, run_policy
from mapperopt.dsl import Evaluator, parse

# Machine-model transformations (dsl-reference.md §9.4) and their inverses (§9.6), on Machine(CPU) = (1, n).
TRANSFORMS = """
m = Machine(CPU);
flat = m.merge(0, 1);
grid2 = flat.balance_split(0, 2);
def merged(Task task) { return flat[task.ipoint[0] % flat.size[0]]; }
def balanced(Task task) {
    i = task.ipoint[0];
    return grid2[i % grid2.size[0], i / grid2.size[0] % grid2.size[1]];
}
def swapped(Task task) { return m.swap(0, 1)[(task.ipoint[0] + 1) % m.size[1], 0]; }
def reversed(Task task) { return m.reverse(1)[0, task.ipoint[0] % m.size[1]]; }
def sliced(Task task) {
    s = m.slice(1, m.size[1] / 2, m.size[1] - 1);
    return s[0, task.ipoint[0] % s.size[1]];
}
def auto2d(Task task) {
    g = flat.auto_split(0, task.ispace);
    return g[*tuple(task.ipoint[d] * g.size[d] / task.ispace[d] for d in (0, 1))];
}
def greedy2d(Task task) {
    g = flat.greedy_split(0, task.ispace);
    return g[*tuple(task.ipoint[d] % g.size[d] for d in (0, 1))];
}
def parent_split(Task task) {
    s = flat.split(0, 1);
    return s[*task.parent.processor(s)];
}
def second_half(Task task) { return m[0, m.size[1] - 1 - m.size[1] / 2]; }
IndexTaskMap init merged;
IndexTaskMap step balanced;
IndexTaskMap reduce_sum swapped;
IndexTaskMap left_work reversed;
IndexTaskMap tile auto2d;
SingleTaskMap spawn second_half;
SingleTaskMap child parent_split;
"""

# Arithmetic (floor division, negative operands), booleans, ternaries, tuples, slices, comprehensions, calls.
EXPRESSIONS = """
m = Machine(CPU);
def wrap(int x, int n) { return (x % n + n) % n; }
def twisted(Task task) {
    i = task.ipoint[0];
    j = (0 - i - 1) % m.size[1];
    k = -i / 2 + wrap(i * 3, m.size[1]);
    return m[0, (i > 1 && !(i == 3)) || m.volume == 1 ? j : wrap(k, m.size[1])];
}
def tuples(Task task) {
    t = tuple(x * 2 + 1 for x in task.ispace);
    s = (*t, *task.ipoint, 9)[-3:][:2];
    u = (s + (1, 1)) * 3 % (7, 5);
    return m[0, (u.volume + u.len + (u == (0, 0) ? 1 : 0)) % m.size[1]];
}
def nested(Task task) {
    v = tuple(tuple(a + b for a in (1, 2, 3))[b % 3] for b in task.ipoint);
    return m[0, v[0] * (task.ispace[1] > 1 ? v[1] : 1) % m.size[1]];
}
IndexTaskMap step,init twisted;
IndexTaskMap tile nested;
IndexTaskMap left_work,reduce_sum tuples;
"""

# Layouts, memories and collections resolved by precedence (dsl-reference.md §6), with aspects merged (§7.3).
PRECEDENCE = """
Task * IO,CPU;
Region * * * SYSMEM;
Region step * IO RDMEM,SYSMEM;
Layout * * * AOS;
Layout * * SYSMEM F_order Align==64;
Layout * blocks * SOA No_Align;
Layout step 0 * C_order;
Layout * * IO Compact;
Layout tile tiles * Exact;
Layout tile mat CPU AOS C_order;
CollectMemory * *;
InstanceLimit step 2;
InstanceLimit step IO 3;
InstanceLimit check CPU 1;
"""

PRINTS = """
m = Machine(CPU);
print("{} {} {} {} {} {}", -7 / 2, -7 % 2, 7 / -2, 7 % -2, -7 / -2, -7 % -2);
print("{} {} {} {}", (4, 2, 3)[:-1], (4, 2, 3)[1:], (4, 2, 3)[-1], (4, 2, 3)[0:0]);
print("{} {} {} {}", (4, 2) / (2, 1), (4, 2) * 2, (4, 2).volume, (4, 2).len);
print("{} {} {}", tuple(i * 2 for i in (0, 1, 2)), (*(1, 2), 3), (5,));
print("{} {}", False ? 1 : True ? 3 : 4, True ? 1 : False ? 3 : 4);
print("{} {} {}", m, m.size, m.volume);
print("{} {}", m.merge(0, 1), m.merge(1, 0).size);
print("{} {}", m.merge(0, 1).balance_split(0, 2), m.merge(0, 1).auto_split(0, (6, 4)).size);
print("{} {}", m.swap(0, 1).reverse(0), m[0, *]);
print("{} {}", m[0, m.size[1] - 1], m.has(SYSMEM));
print("{}", m.merge(0, 1).greedy_split(0, (3, 5, 7)).size);
"""

SHAPES = [("-ll:cpu", str(n)) for n in (1, 2, 3, 4)]


@pytest.mark.parametrize("legion", SHAPES, ids=lambda f: f"cpu{f[1]}")
@pytest.mark.parametrize("name,dsl", [("transforms", TRANSFORMS), ("expressions", EXPRESSIONS)])
def test_placements_match_the_evaluator(name, dsl, legion, tmp_path):
    result = run_policy(dsl, tmp_path, legion=legion, app_flags=("-report",))
    assert result.ok(), result.stderr
    assert len(result.trace) >= 30
    assert result.trace == expected_records(dsl, result, legion)
    # ... and the application ran every placed point where the trace says.
    placed = {(r["task"], tuple(r["point"] or ())): r["proc"]["index"] for r in result.trace
              if r["placed_by"] == "map"}
    for report in result.reports:
        key = (report["task"], tuple(report["point"] or ()))
        if key in placed:
            assert report["proc"]["index"] == placed[key], key


@pytest.mark.parametrize("legion", [("-ll:cpu", "2", "-ll:io", "2"), ("-ll:cpu", "3", "-ll:io", "0")],
                         ids=["cpu2-io2", "cpu3-io0"])
def test_statement_precedence_matches_the_evaluator(legion, tmp_path):
    result = run_policy(PRECEDENCE, tmp_path, legion=legion)
    assert result.ok(), result.stderr
    assert result.trace == expected_records(PRECEDENCE, result, legion)


@pytest.mark.parametrize("legion", [SHAPES[1], SHAPES[3]], ids=["cpu2", "cpu4"])
def test_load_phase_prints_match_the_evaluator(legion, tmp_path):
    result = run_policy(PRINTS, tmp_path, legion=legion, app_flags=())
    assert result.ok(), result.stderr
    ev = Evaluator(parse(PRINTS, "policy.dsl"), machine(*legion), app_description())
    printed = [ln for ln in result.stderr.splitlines() if not ln.startswith("[")]
    assert printed == ev.printed
