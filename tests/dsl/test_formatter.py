"""Formatter: canonical text, parse(format(p)) == p for generated programs, idempotence, comments kept."""

import dataclasses
import random
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mapperopt.benchmarks.fuzz_dsl import comment_places
from mapperopt.cli import cli
from mapperopt.compiler import generate
from mapperopt.dsl import ast as A
from mapperopt.dsl import format_program, parse
from mapperopt.dsl.formatter import format_expr
from mapperopt.optimizer.base import normalize_dsl

EXAMPLES = Path(__file__).parent / "examples"
CONFIGS = Path(__file__).parents[2] / "configs"
MAPPERS = [*sorted(CONFIGS.glob("*.dsl")), *sorted(EXAMPLES.glob("*.dsl"))]

# ---------------------------------------------------------------------------------------------------- generators

idents = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True).filter(lambda s: s not in A.RESERVED)
proc_kinds = st.sampled_from(A.PROC_KINDS)
mem_kinds = st.sampled_from(A.MEM_KINDS)
ints = st.integers(min_value=0, max_value=2**63 - 1)

leaves = st.one_of(
    st.builds(A.IntLit, ints),
    st.builds(A.BoolLit, st.booleans()),
    st.builds(A.KindLit, st.one_of(proc_kinds, mem_kinds)),
    st.builds(A.Name, idents),
    st.builds(A.MachineLit, proc_kinds),
)


def _compound(children):
    small = st.lists(children, min_size=0, max_size=3).map(tuple)
    items = st.lists(st.one_of(children, st.builds(A.Unpack, children)), min_size=1, max_size=3).map(tuple)
    index_items = st.lists(st.one_of(children, st.builds(A.Unpack, children), st.builds(A.Wildcard)),
                           min_size=1, max_size=3).map(tuple)
    binary_ops = st.sampled_from([op for level in A.BINARY_LEVELS for op in level])
    return st.one_of(
        st.builds(A.Call, idents, small),
        st.builds(A.TupleLit, items),
        st.builds(A.Comprehension, children, idents, children),
        st.builds(A.Unary, st.sampled_from(["-", "!"]), children),
        st.builds(A.Binary, binary_ops, children, children),
        st.builds(A.Ternary, children, children, children),
        st.builds(A.Member, children, idents),
        st.builds(A.MethodCall, children, idents, small),
        st.builds(A.Index, children, index_items),
        st.builds(A.Slice, children, st.none() | children, st.none() | children),
    )


exprs = st.recursive(leaves, _compound, max_leaves=12)

task_sels = st.one_of(st.just(A.TaskSel(None)),
                      st.lists(st.builds(A.Ident, idents), min_size=1, max_size=3).map(lambda x: A.TaskSel(tuple(x))))
region_sels = st.one_of(st.just(A.RegionSel()), st.builds(A.RegionSel, name=idents),
                        st.builds(A.RegionSel, index=st.integers(0, 99)))
stars = st.builds(A.Star)
constraints = st.one_of(
    st.builds(A.Constraint, st.sampled_from([c for c in A.CONSTRAINT_WORDS if c != "Align"])),
    st.builds(A.Constraint, st.just("Align"), st.sampled_from(A.ALIGN_OPS), st.integers(0, 4096)),
)
kinds_of = lambda s: st.lists(st.builds(A.Kind, s), min_size=1, max_size=3).map(tuple)  # noqa: E731
fmt_strings = st.text(alphabet="ab {}#/:;", max_size=12)
prints = st.builds(A.Print, fmt_strings, st.lists(exprs, max_size=2).map(tuple))
assigns = st.builds(A.Assign, idents, exprs)
params = st.lists(st.builds(A.Param, st.sampled_from(A.PARAM_TYPES), idents), max_size=3).map(tuple)
# `Tunable ID = V TYPE;`: a value its type holds (True/False for bool, 1/0 in the tree)
tunables = st.sampled_from(sorted(A.TUNABLE_TYPES)).flatmap(
    lambda t: st.builds(A.TunableStmt, st.integers(0, 2**31), st.integers(*A.TUNABLE_TYPES[t][1:]), st.just(t)))

statements = st.one_of(
    st.builds(A.TaskStmt, task_sels, kinds_of(proc_kinds)),
    st.builds(A.RegionStmt, task_sels, region_sels, st.one_of(stars, st.builds(A.Kind, proc_kinds)),
              kinds_of(mem_kinds)),
    st.builds(A.LayoutStmt, task_sels, region_sels,
              st.one_of(stars, st.builds(A.Kind, proc_kinds), st.builds(A.Kind, mem_kinds)),
              st.lists(constraints, min_size=1, max_size=4).map(tuple)),
    st.builds(A.InstanceLimitStmt, task_sels, st.none() | stars | st.builds(A.Kind, proc_kinds), st.integers(0, 99)),
    st.builds(A.CollectMemoryStmt, task_sels, region_sels),
    st.builds(A.IndexTaskMapStmt, task_sels, st.builds(A.Ident, idents), st.none() | st.builds(A.Ident, idents)),
    st.builds(A.SingleTaskMapStmt, task_sels, st.builds(A.Ident, idents)),
    st.builds(A.ControlReplicateStmt, task_sels),
    tunables,
    st.builds(A.FuncDef, idents, params, st.lists(st.one_of(assigns, prints), max_size=3).map(tuple),
              st.builds(A.Return, exprs)),
    assigns,
    prints,
)
programs = st.lists(statements, max_size=6).map(lambda s: A.Program(tuple(s)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs)
def test_round_trip_of_generated_programs(program):
    text = format_program(program)
    reparsed = parse(text)
    assert reparsed == program, text
    assert format_program(reparsed) == text


def test_tunable_answers_at_the_ends_of_their_types_come_back():
    """The smallest int64 and the largest uint64 answers: fmt writes them as literals the parser reads back (it
    refused both: a literal's limit was 2^63 - 1 whatever its sign and type). Found by the round trip above."""
    for source in ("Tunable 0 = -9223372036854775808;\n", "Tunable 1 = 18446744073709551615 uint64;\n"):
        program = parse(source)
        assert format_program(program) == source and parse(format_program(program)) == program


def test_a_boolean_tunable_is_written_in_the_dsls_spelling():
    """A bool answer is stored as 1 or 0: fmt writes it back as the DSL writes it, True/False (`1 bool` does not
    parse), and the same statement comes back."""
    program = parse("Tunable 3 = True;\nTunable 4 = False bool;\nTunable 5 = 1 uint8;\n")
    text = format_program(program)
    assert text == "Tunable 3 = True;\nTunable 4 = False;\nTunable 5 = 1 uint8;\n"
    assert parse(text) == program


@settings(max_examples=300, deadline=None)
@given(exprs)
def test_round_trip_of_generated_expressions(e):
    text = format_expr(e)
    assert parse(f"x = {text};").statements[0].value == e, text


# ---------------------------------------------------------------------------------------------------- examples


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.dsl")), ids=lambda p: p.name)
def test_examples_round_trip_and_keep_comments(path):
    source = path.read_text()
    program = parse(source)
    text = format_program(program)
    assert parse(text) == program
    assert format_program(parse(text)) == text
    assert [c.text for c in parse(text).comments] == [c.text for c in program.comments]


def test_canonical_layout():
    src = """Task   calculate_new_currents ,update_voltages   GPU , CPU ;
Layout * * * Align == 64   F_order;   IndexTaskMap a , b  mgpu f;
def f( Task task ,int n ) {
x = ( 1 , ) ; return task.ipoint[0]+n*(2-3)-(-1) ; }
"""
    assert format_program(parse(src)) == """Task calculate_new_currents,update_voltages GPU,CPU;
Layout * * * Align==64 F_order;
IndexTaskMap a,b mgpu f;
def f(Task task, int n) {
    x = (1,);
    return task.ipoint[0] + n * (2 - 3) - (-1);
}
"""


def test_parentheses_precedence_needs_are_added_to_a_built_program():
    """A program built (by tune, by an edit) has no parentheses written: fmt writes only those precedence needs."""
    cases = {
        "(a + b) * c": "(a + b) * c", "a - (b - c)": "a - (b - c)", "(a - b) - c": "a - b - c",
        "(a ? b : c) ? d : e": "(a ? b : c) ? d : e", "a ? b : (c ? d : e)": "a ? b : c ? d : e",
        "-(a + b)": "-(a + b)", "(-a).len": "(-a).len", "(m[0]).has(FBMEM)": "m[0].has(FBMEM)",
        "!(a && b)": "!(a && b)", "- - 3": "-(-3)", "(1 < 2) == (3 < 4)": "1 < 2 == 3 < 4",
    }
    for src, want in cases.items():
        assert format_expr(A.without_parens(parse(f"x = {src};").statements[0].value)) == want


@pytest.mark.parametrize("src", [
    "1 + (2 * 3)", "(a - b) - c", "(1 < 2) == (3 < 4)",  # operands of binary operators
    "(a > 1) ? (a) : (2)", "a ? b : (c ? d : e)",  # of a conditional
    "-(a)", "!(b)", "-(-3)", "-(t.size)[0]",  # of unary operators
    "f((a), (1 + 2))", "m.has((FBMEM))", "tuple((i) for i in (t))",  # call and method arguments, a comprehension
    "t[(0)]", "m[(i + 1), *(u)]", "t[(0):(n)]", "(m[0]).has(FBMEM)",  # indices, slices, a postfix's object
    "((a))", "(((a + b)) * c)", "((1, 2))",  # nested pairs: as many as written
])
def test_written_parentheses_are_kept(src):
    assert format_expr(parse(f"x = {src};").statements[0].value) == src
    assert format_program(parse(f"x = {src};")) == f"x = {src};\n"


def test_fmt_keeps_the_parentheses_of_a_file(tmp_path):
    path = tmp_path / "par.dsl"
    path.write_text("Task * GPU,CPU;\na = 4;\ny = 1 + (2 * 3);\nz = (a > 1) ? (a) : 2;\nw = (a + 1);\n"
                    "def f(Task task) {\n    print(\"{}\", (a));\n    return m[(task.ipoint[0]) % 2, 0];\n}\n")
    result = CliRunner().invoke(cli, ["fmt", str(path)])
    assert result.exit_code == 0 and result.output == path.read_text(), result.output
    assert CliRunner().invoke(cli, ["fmt", "--check", str(path)]).exit_code == 0


def _with_parens(node, pairs):
    """`node` with `pairs()` pairs of parentheses written around each expression in it."""
    if isinstance(node, tuple):
        return tuple(_with_parens(n, pairs) for n in node)
    if not dataclasses.is_dataclass(node) or isinstance(node, (A.Loc, A.Comment)):
        return node
    changes = {f.name: _with_parens(getattr(node, f.name), pairs) for f in dataclasses.fields(node)
               if f.init and f.name not in ("loc", "parens", "comments", "source")}
    return dataclasses.replace(node, **changes, **({"parens": pairs()} if hasattr(node, "parens") else {}))


@settings(max_examples=200, deadline=None)
@given(exprs, st.randoms(use_true_random=False))
def test_written_parentheses_come_back_and_change_nothing_else(e, rnd):
    """Pairs written anywhere (none, one or two): the same expression parses back (equality ignores them), fmt
    writes every pair again, and without them it is the text of the expression written without them."""
    text = format_expr(_with_parens(e, lambda: rnd.randint(0, 2)))
    back = parse(f"x = {text};").statements[0].value
    assert back == e and hash(back) == hash(e), text
    assert format_expr(back) == text
    assert format_expr(A.without_parens(back)) == format_expr(e)


@pytest.mark.parametrize("path", MAPPERS, ids=lambda p: p.name)
def test_written_parentheses_reach_neither_the_generated_cpp_nor_the_cache_key(path):
    """The project's mappers with a pair more around every expression: the same C++ (the compiled mapper's
    canonical sha256 included) and the same program for tune's cache as written."""
    program = parse(path.read_text(), path.name)
    wrapped = _with_parens(program, lambda: 1)
    assert wrapped == program
    if any(isinstance(s, (A.Assign, A.FuncDef, A.Print)) for s in program.statements):
        assert format_program(wrapped) != format_program(program)
    assert generate(wrapped) == generate(program)
    assert normalize_dsl(format_program(wrapped)) == normalize_dsl(path.read_text())


def test_comments_and_blank_lines_are_kept():
    src = """# header

Task * GPU; # trailing
def f(Task task) {  # on the def line
    # before the return
    return m[0, 0];  # on the return
    # before the brace
}  # after the brace


# tail
"""
    assert format_program(parse(src)) == """# header

Task * GPU;  # trailing
def f(Task task) {  # on the def line
    # before the return
    return m[0, 0];  # on the return
    # before the brace
}  # after the brace

# tail
"""


def test_comments_of_a_statement_over_several_lines():
    # A statement over several lines keeps them, each comment at the end of its line (at its column). A '{'
    # joins its header: the comment of the header's line goes just before it (after it, on a line of its own, it
    # would read as a comment on the next statement).
    src = """x = (1 +  # one
     2);  # two
def f(Task task)  # params
{  # body
    return 1;
}
"""
    want = """x = (1 +  # one
     2);  # two
# params
def f(Task task) {  # body
    return 1;
}
"""
    assert format_program(parse(src)) == want
    assert format_program(parse(want)) == want


def test_line_breaks_of_a_statement_and_comments_at_their_ends_are_kept():
    # As mapper authors break long statements: each line formatted, continuation lines indented as written relative
    # to the statement, every comment at the end of the line it ends.
    src = """Region * * GPU FBMEM,   # memory first
             ZCMEM;     # then zero copy
def f(Task task,  # params
      int n) {    # body
    even = n % 2 == 0 &&
           n>2;  # wrapped
  return m[task.ipoint[0],  # first
           0];
}
"""
    want = """Region * * GPU FBMEM,   # memory first
             ZCMEM;     # then zero copy
def f(Task task,  # params
      int n) {    # body
    even = n % 2 == 0 &&
           n > 2;  # wrapped
    return m[task.ipoint[0],  # first
             0];
}
"""
    assert format_program(parse(src)) == want
    assert format_program(parse(want)) == want


def test_aligned_trailing_comments_stay_aligned():
    # Comments of consecutive lines written in one column stay in one column (moved right together when a line's
    # formatted code reaches it); any other trailing comment keeps its column when the code leaves two spaces before it.
    src = """Task * GPU,CPU;            # kinds
Layout * * * SOA C_order;  # layout
CollectMemory task_4 *;    # collect
a=1+2;  # grows
bb = 2; # same column
z = 3; # one space
def f(Task task) {        # far from the code
  x = 1;          # body, aligned
  yy = x + 1;     # body, aligned
  return yy;  # not aligned
}
"""
    want = """Task * GPU,CPU;            # kinds
Layout * * * SOA C_order;  # layout
CollectMemory task_4 *;    # collect
a = 1 + 2;  # grows
bb = 2;     # same column
z = 3;  # one space
def f(Task task) {        # far from the code
    x = 1;        # body, aligned
    yy = x + 1;   # body, aligned
    return yy;  # not aligned
}
"""
    assert format_program(parse(src)) == want
    assert format_program(parse(want)) == want


def test_one_line_functions_stay_on_one_line():
    src = """def blk(IPoint p, MSpace m, int d) {return p[d]*m.size[d];}  # block
def g(Task task) { x = 1;  y = x; return y; }
def h(Task task) { x = 1;
    return x; }
"""
    want = """def blk(IPoint p, MSpace m, int d) { return p[d] * m.size[d]; }  # block
def g(Task task) { x = 1; y = x; return y; }
def h(Task task) {
    x = 1;
    return x;
}
"""
    assert format_program(parse(src)) == want
    assert format_program(parse(want)) == want


def test_comment_blocks_around_and_inside_functions():
    src = """# Block before the function,
# two lines.
def f(Task task) {
    # before the first statement

    # after a blank line
    x = 1;
    # between statements
    y = x;  # on y

    return y;
    # after the last statement
}
# right after the function

# after a blank line, at the end
"""
    assert format_program(parse(src)) == src


def test_empty_program_formats_to_nothing():
    assert format_program(parse("")) == ""
    assert format_program(parse("# c\n")) == "# c\n"


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.dsl")), ids=lambda p: p.name)
def test_config_mappers_are_formatted(path):
    assert format_program(parse(path.read_text())) == path.read_text()


def _relayout(text: str, rng: random.Random) -> str:
    """`text` laid out as another author might: spaces between tokens widened or turned into line breaks (indented
    or not), blank lines added; strings and comments untouched."""
    pieces = re.split(r'("[^"\n]*"|(?:#|//)[^\n]*)', text)  # code at even indices, strings and comments odd
    space = (" ", " ", " ", " ", "   ", "\n", "\n      ")
    newline = ("\n", "\n", "\n", "\n\n", "\n  ")
    for k in range(0, len(pieces), 2):
        pieces[k] = re.sub(r"[ \n]", lambda m: rng.choice(space if m.group() == " " else newline), pieces[k])
    return "".join(pieces)


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(MAPPERS), st.integers(0, 2**32))
def test_fmt_of_relaid_mappers_keeps_meaning_and_comments_and_is_idempotent(path, seed):
    text = _relayout(path.read_text(), random.Random(seed))
    program = parse(text, "m.dsl")
    out = format_program(program)
    again = parse(out, "m.dsl")
    assert again == program, out
    assert format_program(again) == out, out
    assert [c.text for c in again.comments] == [c.text for c in program.comments]
    assert comment_places(again) == comment_places(program), out


def test_a_comment_inside_redundant_parentheses_stays_at_the_end_of_its_line():
    """Parentheses dropped (`without_parens`, as the compiled mapper's sha reads a program) do not move the comment
    inside them above the statement: it stays where it was, as in the same statement written without them. fmt keeps
    them, and the comment with them."""
    src = """def f(Task task) {
    q = (task.ipoint[0] # inside parens
         + 1);
    r = ((task.ipoint[0]))  # doubled
        % 2;
    return m[0, q % m.size[1]];
}
"""
    want = """def f(Task task) {
    q = task.ipoint[0]  # inside parens
         + 1;
    r = task.ipoint[0]      # doubled
        % 2;
    return m[0, q % m.size[1]];
}
"""
    assert format_program(A.without_parens(parse(src))) == want
    assert format_program(parse(src)) == src.replace("[0] # inside", "[0]  # inside")
    assert format_program(parse(want)) == want
    assert parse(format_program(parse(src))).statements == parse(src).statements



def test_no_lone_semicolon_line_where_dropped_parentheses_close():
    """`e = ((a\n  ));` without its parentheses (`without_parens`, as the compiled mapper's sha reads a program): the
    last line holds only parentheses dropped and the `;`; the `;` joins the line before, not a line of its own. A
    comment that ends the line before or stands in between goes on its own line just before the joined line (it stays
    before the statement's last line); one on the `;` line ends the joined line. fmt keeps the parentheses and lines."""
    src = """def f(Task task) {
    a = task.ipoint[0];
    e = ((a
          ));
    g = (a +
         1
        );
    h = (a # c5 double parens
         );
    k = (a # c6
         # c7
         ); # c8
    return m[0, e % m.size[1]];
}
"""
    assert format_program(parse(src)) == src.replace("(a # c", "(a  # c").replace("); # c8", ");  # c8")
    out = format_program(A.without_parens(parse(src)))
    assert "    e = a;\n    g = a +\n         1;\n    # c5 double parens\n    h = a;\n" in out, out
    assert "    # c6\n    # c7\n    k = a;  # c8\n" in out, out
    assert format_program(parse(out)) == out
    program = parse(src)
    assert parse(out) == program and comment_places(parse(out)) == comment_places(program)


def test_the_comment_of_a_statement_split_off_a_shared_line_goes_two_spaces_after_it():
    """Two statements on one line go on two lines; the second one's trailing comment kept its column on the shared
    line (56 here), far to the right of the statement alone: it goes two spaces after the code, as where no column is
    kept. Comments of lines not split keep theirs; the result is formatted (idempotent)."""
    src = """Task   *   CPU ;  # trailing
Region * *  CPU   SYSMEM;Layout * * CPU SOA   F_order; // two on one line
Region * * GPU FBMEM;           # b
def f(Task task) { x = 1;   # split from the header
    return x;
}
"""
    want = """Task * CPU;       # trailing
Region * * CPU SYSMEM;
Layout * * CPU SOA F_order;  // two on one line
Region * * GPU FBMEM;           # b
def f(Task task) {
    x = 1;  # split from the header
    return x;
}
"""
    assert format_program(parse(src)) == want
    assert format_program(parse(want)) == want
    assert sorted(c.text for c in parse(want).comments) == sorted(c.text for c in parse(src).comments)
