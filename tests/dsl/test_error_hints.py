"""Every error code of dsl-reference.md §11.2 and §11.3 comes with a hint: an input that triggers each code, and the
check that its message has at least one `hint:` line (the guide promises one with each error)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from mapperopt.descriptions import TunableInfo, parse_machine_spec
from mapperopt.dsl import DslSyntaxError, check, parse
from mapperopt.dsl.commands import load_app
from mapperopt.dsl.parser import read_source

REFERENCE = Path(__file__).parents[2] / "docs" / "dsl-reference.md"


def _documented_codes() -> list[str]:
    text = REFERENCE.read_text()
    tables = text[text.index("**11.2 Syntax errors**"):text.index("**11.4 Warnings and notes**")]
    return sorted(set(re.findall(r"^\| (E\d{3}) \|", tables, re.M)))


def _chain(n: int) -> str:
    """`n` functions, each calling the next (E111 past 300 levels through calls)."""
    defs = [f"def f{i}(int x) {{ return f{i + 1}(x); }}" for i in range(n)]
    return "\n".join([*defs, f"def f{n}(int x) {{ return x; }}", "y = f0(1);"]) + "\n"


# code -> (source, application, machine): an input each code is reported for. `app`: a benchmark's name, or a
# function of the loaded benchmarks giving the description; `machine`: a --machine spec.
TRIGGERS = {
    "E100": ("Task * CPU;\nIndexTaskMpa GPU f;\n", None, None),
    "E101": ("def f(Task t): return 1;\n", None, None),
    "E102": ("x = 3 // 2;\n", None, None),
    "E103": ('print("abc);\n', None, None),
    "E104": ("x = 1 & 2;\n", None, None),
    "E105": ("Task * GPU", None, None),
    "E106": ("def f(Task t) { x = 2; }\n", None, None),
    "E107": ("Task * LOC;\n", None, None),
    "E108": ("Layout * * * Align=64;\n", None, None),
    "E109": ("Task CPU t;\n", None, None),
    "E110": ("x = " + "(" * 120 + "1" + ")" * 120 + ";\n", None, None),
    "E111": (_chain(320), None, None),
    "E112": (b"Task * CPU;\nTask t GPU; # caf\xe9\n", None, None),
    "E200": ("IndexTaskMap calculate_new_currents f;\ndef f(Task t) { return Machine(GPU)[0, 0]; }\n", "circuit",
             None),
    "E201": ("def f(Task t) { return mgpu[0, 0]; }\nIndexTaskMap calculate_new_currents f;\n", "circuit", None),
    "E202": ("Task main CPU;\n", "circuit", "2x4"),
    "E203": ("Region stencil pxm CPU SYSMEM;\n", "stencil", None),
    "E204": ("Region distribute_charge 7 GPU ZCMEM;\n", "circuit", None),
    "E205": ("m = Machine(GPU);\ndef f(Task task) { return m[task.ipoint[0], 0]; }\n"
             "IndexTaskMap calculate_new_currents f;\n", "circuit", "1x4"),
    "E206": ("x = Machine(GPU) / 2;\n", None, None),
    "E207": ("m = Machine(GPU);\nx = m.merge(0);\n", None, None),
    "E208": ("def f(int i) { return Machine(GPU)[0, 0]; }\nIndexTaskMap calculate_new_currents f;\n", "circuit",
             None),
    "E209": ("Task check_circuit GPU;\n", "circuit", "1x4"),
    "E210": ("def f(Task t) { return 1; }\ndef f(Task t) { return 2; }\n", None, None),
    "E211": ("f = 1;\ndef f(Task t) { return 1; }\n", None, None),
    "E212": ("def g(Task t) { return g(t); }\n", None, None),
    "E213": ("m = Machine(GPU);\nx = m.sizes;\n", None, None),
    "E214": ("Layout * * * SOA AOS;\n", None, None),
    "E215": ("InstanceLimit calculate_new_currents 0;\n", "circuit", None),
    "E216": ('print("{} {}", 1);\n', None, None),
    "E217": ("m = Machine(GPU);\nx = m.split(1, 3);\n", None, "1x4"),
    "E218": ("x = (1, *2);\n", None, None),
    "E219": ("x = 1 / 0;\n", None, None),
    "E220": ("InstanceLimit * 2;\n", None, None),
    "E221": ("Task * CPU;\nRegion * * CPU RDMEM;\n", "circuit", "1x0x1"),
    "E222": ("Task * CPU;\nRegion calculate_new_currents 3 CPU VIRTUAL;\n", "circuit", "1x0x1"),
    "E223": ("Task * CPU;\n", "cannon", "1x0x2"),
    "E224": ("Task * CPU;\nTunable 11 = False;\n",
             lambda apps: replace(apps["circuit"], tunables=(TunableInfo(11, 0, "int32"),), discovered_as="prog -x"),
             None),
    "E225": ("Task stencil GPU;\nIndexTaskMap increment,stencil f;\ndef f(Task t) { return Machine(GPU)[0, 0]; }\n",
             lambda apps: replace(apps["circuit"], discovered_as="circuit -steps 0"), None),
    "E226": ("Tunable 7 = 3 foo;\n", None, None),
    "E227": ("Layout * * * AOS Align==4611686018427387904;\n", None, None),
}


# More inputs for codes reported in several places (each place has its own hint).
MORE = [
    ("E100", "Region = 3;\n", None, None),
    ("E100", "Task * CPU,;\n", None, None),
    ("E104", "print(\u201cx {}\u201d, 1);\n", None, None),
    ("E109", "CPU = 3;\n", None, None),
    ("E205", "Task * CPU;\nmc = Machine(CPU);\ndef f(Task task) { return mc[*, 0]; }\nIndexTaskMap stencil f;\n",
     "stencil", "2x0x1"),
    ("E206", "mc = Machine(CPU);\ndef f(Task task) { return mc[0, task.ipoint]; }\n", None, None),
    ("E206", "x = (1, True);\n", None, None),
    ("E206", "x = tuple(y for y in 3);\n", None, None),
    ("E206", "x = tuple(y > 0 for y in (1, 2));\n", None, None),
    ("E206", "x = !3;\n", None, None),
    ("E206", "x = -True;\n", None, None),
    ("E206", "x = 3 ? 1 : 2;\n", None, None),
    ("E206", "x = (1, 2)[True:2];\n", None, None),
    ("E206", "x = 3[0:1];\n", None, None),
    ("E206", "def g(int a) { return a; }\nx = g(True);\n", None, None),
    ("E206", "x = (1, 2) + (1, 2, 3);\n", None, None),
    ("E206", "x = (1, 2)[0, 1];\n", None, None),
    ("E206", "x = 3[0];\n", None, None),
    ("E206", "x = True && 1;\n", None, None),
    ("E206", "x = True < 1;\n", None, None),
    ("E206", "m = Machine(GPU);\nx = m.has(3);\n", None, None),
    ("E206", "m = 3;\ndef f(IPoint p, ISpace s, MSpace n) { return n[0, 0]; }\nIndexTaskMap t m f;\n", None, None),
    ("E207", "m = Machine(GPU);\nx = m.merge;\n", None, None),
    ("E210", "def f(Task t) { return 1; }\ndef f(Task t) { return 2; }\n", None, None),
    ("E211", "def f(Task t, int t) { return 1; }\n", None, None),
    ("E211", "def f(Task t) { return 1; }\ndef g(Task t) { f = 2; return f; }\n", None, None),
    ("E216", 'print("{}", 1, 2);\n', None, None),
    ("E217", "m = Machine(GPU);\nx = m.merge(0, 0);\n", None, None),
    ("E217", "m = Machine(GPU);\nx = m.split(0, 0);\n", None, None),
    ("E218", "m = Machine(GPU);\nx = (1, 2)[*];\n", None, None),
    ("E219", "x = 7 % 0;\n", None, None),
    ("E226", "Tunable 7 = 300 int8;\n", None, None),
]


def test_every_documented_error_code_has_a_trigger_here():
    """A new code in the reference's tables needs an input here, so that its hint is checked too."""
    assert sorted(TRIGGERS) == _documented_codes()


@pytest.fixture(scope="module")
def apps():
    return {name: load_app(name) for name in ("circuit", "stencil", "cannon")}


@pytest.mark.parametrize("code,source,app,machine", [(c, *TRIGGERS[c]) for c in sorted(TRIGGERS)] + MORE,
                         ids=[*sorted(TRIGGERS), *(f"{c}:{s[:30]}" for c, s, *_ in MORE)])
def test_each_error_code_comes_with_a_hint(code, source, app, machine, apps, tmp_path):
    if isinstance(source, bytes):
        path = tmp_path / "p.dsl"
        path.write_bytes(source)
        with pytest.raises(DslSyntaxError) as info:
            read_source(path)
        found = [info.value.diagnostic]
    else:
        try:
            program = parse(source, "p.dsl")
        except DslSyntaxError as exc:
            found = [exc.diagnostic]
        else:
            desc = app(apps) if callable(app) else apps[app] if app else None
            found = [d for d in check(program, desc, parse_machine_spec(machine) if machine else None)]
    mine = [d for d in found if d.code == code]
    assert mine, [(d.code, d.message) for d in found]
    assert all(d.hints for d in mine), "\n".join(d.render(source if isinstance(source, str) else None)
                                                 for d in mine if not d.hints)
