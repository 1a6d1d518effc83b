"""The front end on inputs found by fuzzing and by real mapping files: every input gets a result or a project error,
quickly; fmt keeps every comment in its place; the kind selector; what check must reject on a given machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from mapperopt.benchmarks.fuzz_dsl import comment_places
from mapperopt.descriptions import parse_machine_spec
from mapperopt.dsl import DslRuntimeError, DslSyntaxError, Evaluator, check, format_program, parse
from mapperopt.dsl.commands import load_app
from mapperopt.dsl.errors import render_all
from mapperopt.errors import MapperoptError

M24 = parse_machine_spec("2x4")
CPU_ONLY = parse_machine_spec("1x0x2")


def codes(text: str, machine=None) -> list[str]:
    return [d.code for d in check(parse(text, "t.dsl"), None, machine)]


# ---------------------------------------------------------------------------------------------------- fmt


FMT_CASES = [
    "# nodes * processors\nTask * CPU;\n# nodes * processors\nTask a GPU;\n",
    "def f(Task task)\n{\n    return 1;\n}\n",
    "def f(Task t) { return 1; } # c\nx = 1; y = 2; # d\n",
    "def f(Task t) # h\n{ # h2\n  # lead\n\n  x = 1; # x\n  return x; # r\n  # after\n} # foot\n# end\n",
    "Task a, # inside a list\n  b CPU;\n# x\n# x\nx = (1 + # in an expression\n 2);\n",
    "Region * * GPU FBMEM,   # memory first\n   ZCMEM;   # then zero copy\nRegion * * CPU SYSMEM;\n",
]


@pytest.mark.parametrize("text", FMT_CASES)
def test_fmt_keeps_every_comment_in_place(text):
    out = format_program(parse(text))
    assert parse(out) == parse(text)
    assert comment_places(parse(out)) == comment_places(parse(text))
    assert format_program(parse(out)) == out


def test_fmt_adds_no_blank_line_after_a_brace_on_its_own_line():
    assert format_program(parse("def f(Task task)\n{\n    return 1;\n}\n")) == "def f(Task task) {\n    return 1;\n}\n"


# ---------------------------------------------------------------------------------------------------- kind selector


def test_kind_selector_precedence():
    text = ("mc = Machine(CPU);\nmg = Machine(GPU);\n"
            "def g0(Task task) { return mg[0, 0]; }\ndef g1(Task task) { return mg[0, 1]; }\n"
            "def c0(Task task) { return mc[0, 0]; }\n"
            "Task * GPU,CPU;\nTask only_cpu CPU;\n"
            "IndexTaskMap * c0;\nIndexTaskMap GPU g1;\nIndexTaskMap named g0;\nSingleTaskMap GPU g1;\n")
    program = parse(text)
    assert format_program(program).count("IndexTaskMap GPU g1;") == 1
    assert not [d for d in check(program) if d.is_error]
    ev = Evaluator(program, parse_machine_spec("1x4"))
    assert ev.place("other", (0,), (1,)).index == 1  # GPU kind beats *
    assert ev.place("named", (0,), (1,)).index == 0  # a name beats a kind
    assert ev.place("only_cpu", (0,), (1,)).kind == "CPU"  # the GPU selector does not apply to a CPU task
    assert ev.place("other", None, None).index == 1
    assert "W300" in codes(text + "IndexTaskMap GPU g0;\n")


# ---------------------------------------------------------------------------------------------------- static rules


def test_a_global_read_before_its_assignment_is_rejected():
    text = 'def f(int k) { return y; }\nx = f(1);\nprint("x = {}", x);\ny = 2;\n'
    [d] = [d for d in check(parse(text, "t.dsl")) if d.is_error]
    assert d.code == "E201" and d.loc.line == 2 and "'y' before its assignment" in d.message
    with pytest.raises(DslRuntimeError):
        Evaluator(parse(text), M24)
    # Through a chain of calls, and fine once the global comes first.
    assert "E201" in codes("def g(int k) { return y; }\ndef f(int k) { return g(k); }\nx = f(1);\ny = 2;\n")
    assert "E201" not in codes("y = 2;\ndef f(int k) { return y; }\nx = f(1);\n")
    assert "E201" not in codes("def f(int k) { return y; }\ny = 1;\nx = f(1);\n")


def test_a_memory_kind_the_machine_lacks_as_the_only_choice_is_an_error():
    assert "E221" in codes("Region * * CPU FBMEM;\n", CPU_ONLY)
    assert "E221" in codes("Region * * * FBMEM,ZCMEM;\n", CPU_ONLY)
    assert "E221" not in codes("Region * * CPU SYSMEM;\nRegion * * CPU FBMEM;\n", CPU_ONLY)  # a fallback exists
    assert codes("Region * * CPU FBMEM,SYSMEM;\n", CPU_ONLY) == ["W302"]  # FBMEM skipped for SYSMEM: said, no error
    assert "E221" not in codes("Region * * GPU FBMEM;\n", CPU_ONLY)  # never applies: no GPU
    assert "E221" not in codes("Region * * CPU FBMEM;\n")  # no machine given
    # RDMEM is decided from the machine's memories like any kind; the hint names the flag that creates it.
    (d,) = check(parse("Region * * CPU RDMEM;\n", "t.dsl"), None, CPU_ONLY)
    assert d.code == "E221" and any(h.startswith("RDMEM exists only when the run sizes it (-ll:rsize MiB): ")
                                    for h in d.hints), d.hints


def test_rdmem_is_on_the_machine_probed_with_the_runs_rsize():
    """The harness probes the machine a mapper is checked against with the run's -ll:rsize/-ll:nsize, so an
    RDMEM-only mapper is an error exactly when the run has no RDMEM."""
    from mapperopt.benchmarks.apps import _machine_flags
    from mapperopt.probe import probe_machine

    assert _machine_flags(["-ll:cpu", "2", "-ll:rsize", "1", "-ll:nsize", "2", "-ll:rsize"]) == (
        "-ll:rsize", "1", "-ll:nsize", "2")
    sized = probe_machine(1, None, _machine_flags(["-ll:rsize", "1"]))
    assert [m.capacity for m in sized.memories if m.kind == "RDMEM"] == [2**20]
    assert codes("Region * * CPU RDMEM;\n", sized) == []
    assert codes("Region * * CPU RDMEM;\n", probe_machine(1, None)) == ["E221"]


def test_an_empty_file_gets_a_warning():
    assert codes("") == ["W311"]
    assert codes("# only a comment\n") == ["W311"]


# ---------------------------------------------------------------------------------------------------- fuzz findings


def chain(n: int) -> str:
    return ("".join(f"def f{i}(int k) {{ return f{i + 1}(k) + 1; }}\n" for i in range(n))
            + f"def f{n}(int k) {{ return k; }}\n")


def fibonacci(n: int) -> str:
    return ("def f0(int k) { return k; }\ndef f1(int k) { return k; }\n"
            + "".join(f"def f{i}(int k) {{ return f{i - 1}(k) + f{i - 2}(k); }}\n" for i in range(2, n))
            + f"x = f{n - 1}(1);\n")


@pytest.mark.parametrize("text,code", [
    ("x = " + "1" * 5000 + ";", "E100"),
    ("x = " + "+".join(["1"] * 8000) + ";", "E110"),
    ("x = " + "-" * 1000 + "1;", "E110"),
    ("x = " + "tuple(" * 1000 + "1" + " for i in t)" * 1000 + ";", "E110"),
    ("x = " + "(" * 5000 + "1" + ")" * 5000 + ";", "E110"),
])
def test_limits_of_the_parser(text, code):
    with pytest.raises(DslSyntaxError) as err:
        parse(text)
    assert err.value.code == code and len(err.value.diagnostic.message) < 200


def test_e110_on_a_flat_chain_points_at_the_operator_past_the_limit():
    """`1 + 1 + ... + 1` is nested to the evaluator (one level per operator): the message says an operator counts,
    and the caret is at the operator that passes the limit, not at the expression's start."""
    parse("x = " + " + ".join(["1"] * 101) + ";")  # 100 operators: at the limit
    with pytest.raises(DslSyntaxError) as err:
        parse("x = " + " + ".join(["1"] * 102) + ";")
    d = err.value.diagnostic
    assert d.code == "E110" and (d.loc.line, d.loc.col) == (1, 4 * 101 + 3), str(err.value)  # the 101st +
    assert "each operator of a chain such as a + b + c counts as one" in d.message
    # a chain longer than the limit by itself: said as such, not only as nesting
    assert d.message.startswith("more than 100 operators in one chain"), d.message
    assert d.hints == ("split the chain with intermediate variables (s = a + b + ...; x = s + ...)",), d.hints
    with pytest.raises(DslSyntaxError) as err:  # 50 brackets around 51 operators: nesting, not a long chain
        parse("x = " + "(" * 50 + " + ".join(["1"] * 52) + ")" * 50 + ";")
    assert err.value.diagnostic.message.startswith("too deeply nested"), err.value.diagnostic.message


@pytest.mark.parametrize("first", ["task.ipoint[0]", "m.size[1]", "f(1)", "t[0][1]", "-a"])
def test_e110_on_a_flat_chain_says_chain_whatever_its_first_operand(first):
    """A chain such as `task.ipoint[0] + 1 + 1 + ...` (5,000 terms) passes the limit a few operators early, as its
    first operand has levels of its own: it is still said to be a chain, with the chain's hint, not "too deeply
    nested"."""
    text = ("m = Machine(CPU);\ndef f(int a) { return a; }\ndef g(Task task, int a) {\n  t = ((1, 2), (3, 4));\n  x = "
            + first + " + 1" * 5000 + ";\n  return x;\n}\n")
    with pytest.raises(DslSyntaxError) as err:
        parse(text)
    d = err.value.diagnostic
    assert d.code == "E110" and "in one chain" in d.message, d.message
    assert "on top of the" in d.message and "of its first operand" in d.message, d.message
    assert d.hints == ("split the chain with intermediate variables (s = a + b + ...; x = s + ...)",), d.hints
    assert d.loc.line == 5 and len(d.message) < 200


def test_e110_deep_first_operand_with_a_short_chain_is_nesting():
    """A deeply nested first operand followed by a few operators is nesting, not a long chain."""
    with pytest.raises(DslSyntaxError) as err:
        parse("x = " + "(" * 99 + "1" + ")" * 99 + " + 1 + 1 + 1;")
    assert err.value.diagnostic.message.startswith("too deeply nested"), err.value.diagnostic.message


@pytest.mark.parametrize("make,caret", [
    (lambda n: "x = " + "(" * n + "1" + ")" * n + ";", (1, 105)),
    (lambda n: "x = " + "-" * n + "1;", (1, 105)),
    (lambda n: "def f(int a) { return a; }\nx = " + "f(" * n + "1" + ")" * n + ";", (2, 205)),
    (lambda n: "def g(Task t) { return " + "(" * n + "1" + ")" * n + "; }", (1, 124)),
    (lambda n: 'print("{}", ' + "(" * n + "1" + ")" * n + ");", (1, 113)),
    # Levels of several sorts: 50 brackets around a chain of 51 operators; the last operator is the 101st level.
    (lambda n: "x = " + "(" * 50 + " + ".join(["1"] * (n - 49)) + ")" * 50 + ";", (1, 55 + 4 * 50 + 2)),
], ids=["brackets", "unary", "calls", "in-def", "print", "mixed"])
def test_e110_allows_exactly_100_levels_and_points_at_the_101st(make, caret):
    """The message says "more than 100 levels": 100 brackets, unary operators or calls pass, wherever the
    expression stands; the 101st is refused, with the caret at that level as read from the left (the innermost
    bracket, minus or call), where the limit is crossed, as for a chain of operators; not at the outermost one."""
    parse(make(100))
    with pytest.raises(DslSyntaxError) as err:
        parse(make(101))
    d = err.value.diagnostic
    assert d.code == "E110" and (d.loc.line, d.loc.col) == caret, str(err.value)


@pytest.mark.parametrize("src,caret", [
    ("x = " + "(" * 150 + "1" + ")" * 150 + ";", (1, 4 + 150)),  # the innermost bracket
    ("x = " + "-" * 150 + "1;", (1, 4 + 150)),  # the innermost minus
    ("def f(int a) { return a; }\nx = " + "f(" * 150 + "1" + ")" * 150 + ";", (2, 3 + 2 * 150)),  # innermost call
    ("x = " + " + ".join(["1"] * 150) + ";", (1, 4 * 101 + 3)),  # a chain's 101st operator
    # 60 brackets around a chain of 60 operators: the chain's last operator, the innermost level
    ("x = " + "(" * 60 + " + ".join(["1"] * 61) + ")" * 60 + ";", (1, 4 + 60 + 4 * 60 - 1)),
], ids=["brackets", "unary", "calls", "chain", "brackets-around-chain"])
def test_e110_past_101_levels_points_where_docs_say(src, caret):
    """Deeper than 101 levels, the caret is where dsl-reference's E110 entry says: the innermost bracket, unary minus
    or call (the last level read on the deepest nesting), a chain's 101st operator."""
    with pytest.raises(DslSyntaxError) as err:
        parse(src)
    d = err.value.diagnostic
    assert d.code == "E110" and (d.loc.line, d.loc.col) == caret, str(err.value)
    text = (Path(__file__).parents[2] / "docs" / "dsl-reference.md").read_text()
    entry = " ".join(text.split("\n**E110** ", 1)[1].split("\n**", 1)[0].split())  # below the table, to the next
    assert "the innermost bracket, unary minus or call" in entry and "a chain's 101st operator" in entry, entry


@pytest.mark.parametrize("text,machine,code", [
    ("Layout * * * SOA SOA;", None, "W308"),
    (chain(250), None, "E111"),
    (fibonacci(29), None, None),
    (fibonacci(29), M24, "W310"),
    ("m = Machine(CPU).balance_split(0, 4611686018427387904);\nx = m[0];", None, "E217"),
    ("m = Machine(CPU).balance_split(0, 4611686018427387904);\nx = m[0];", M24, "E217"),
    ("m = Machine(GPU).auto_split(1, (" + ", ".join(["2"] * 100) + "));\n", M24, "E217"),
    ("m = Machine(GPU);\nv = (" + ", ".join(["2"] * 100) + ");\nx = m.auto_split(1, v);\n", M24, "E217"),
    ("t = (1, 2);\n" + "t = (*t, *t);\n" * 40, M24, "E206"),
    ("m = Machine(GPU).merge(0, 1);\nx = m.auto_split(0, (2, 2, 2, 2));\ny = m.auto_split(0, (3, 5, 7, 2));\n",
     M24, None),
])
def test_limits_of_the_checker(text, machine, code):
    found = codes(text, machine)
    assert code in found if code else not [c for c in found if c.startswith("E")], found


def test_the_stopped_static_evaluation_is_about_the_whole_file():
    """W310 is not about the first statement (where the evaluation started) but about every one left."""
    text = fibonacci(29)
    (d,) = [d for d in check(parse(text, "t.dsl"), None, M24) if d.code == "W310"]
    assert d.render(text).startswith("t.dsl: warning[W310]: static evaluation stopped after 100000 steps; the "
                                     "remaining launch points and statements were not evaluated\n  hint: ")


def test_w310_of_a_long_file_without_functions_says_its_length_took_the_steps():
    """Thousands of plain assignments were told that "calls that multiply" made evaluation slow: it has no call."""
    text = "Task * CPU;\n" + "".join(f"x{i} = {i} + 1;\n" for i in range(40_000))
    (d,) = [d for d in check(parse(text, "t.dsl"), None, M24) if d.code == "W310"]
    assert d.hints == ("the file's 40,001 statements took the steps, one after another: a mapper needs few "
                       "(`*` and functions select many tasks at once)",), d.hints


def test_w310_names_the_mapping_functions_whose_calls_multiply():
    """Each function calling the one before three times: W310 names the mapping function and its calls per evaluation
    (AutoGuide's timeout feedback names it in the same words); a cheap one is not named."""
    text = ("m = Machine(GPU);\ndef f0(Task t) { return 1; }\n"
            + "".join(f"def f{i}(Task t) {{ return f{i - 1}(t) + f{i - 1}(t) - f{i - 1}(t); }}\n" for i in range(1, 25))
            + "def place(Task t) { return m[0, f24(t) % m.size[1]]; }\ndef cheap(Task t) { return m[0, 0]; }\n"
            + "IndexTaskMap calculate_new_currents place;\nIndexTaskMap distribute_charge cheap;\n")
    (d,) = [d for d in check(parse(text, "t.dsl"), load_app("circuit"), M24) if d.code == "W310"]
    assert ("hint: mapping functions whose calls multiply: 'place' (defined at line 27, of IndexTaskMap "
            "calculate_new_currents): about "
            "4.2e+11 calls") in d.render(text), d.render(text)
    assert "cheap" not in d.render(text)


def test_many_diagnostics_render_in_linear_time():
    text = "".join(f"x{i} = undefined{i};\n" for i in range(20000))
    diags = check(parse(text))
    out = render_all(diags, text)
    assert out.count("error[E201]:") == 20 and out.endswith("... and 19,980 more error[E201] like this"), out[-200:]


def test_auto_split_of_a_large_dimension():
    m = Evaluator(parse("m = Machine(GPU).merge(0, 1);\n"), parse_machine_spec("16x64")).globals["m"]
    assert m.auto_split(0, tuple(range(1, 9))).size[0] == 1
    assert m.auto_split(0, (1024, 1)).size == (1024, 1)
