"""Parser: every statement and expression form, locations, comments, and every syntax error class (dsl-reference.md
§11.2)."""

from pathlib import Path

import pytest

from mapperopt.dsl import DslSyntaxError, parse
from mapperopt.dsl import ast as A
from mapperopt.errors import MapperoptError

EXAMPLES = Path(__file__).parent / "examples"


def one(src):
    (stmt,) = parse(src).statements
    return stmt


def expr(src):
    return one(f"x = {src};").value


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.dsl")), ids=lambda p: p.name)
def test_every_example_parses(path):
    program = parse(path.read_text(), path.name)
    assert program.statements
    assert all(s.loc.file == path.name for s in program.statements)


def test_task_statement():
    s = one("Task calculate_new_currents,update_voltages GPU,CPU;")
    assert s == A.TaskStmt(A.TaskSel((A.Ident("calculate_new_currents"), A.Ident("update_voltages"))),
                           (A.Kind("GPU"), A.Kind("CPU")))
    assert one("Task * GPU;").tasks.is_wildcard


def test_region_statement_selectors():
    s = one("Region * rp_shared GPU ZCMEM,FBMEM;")
    assert s.region == A.RegionSel(name="rp_shared") and s.proc == A.Kind("GPU")
    assert [m.name for m in s.memories] == ["ZCMEM", "FBMEM"]
    s = one("Region distribute_charge 1 * VIRTUAL;")
    assert s.region == A.RegionSel(index=1) and isinstance(s.proc, A.Star)
    assert one("Region * * CPU SYSMEM;").region.is_wildcard


def test_layout_statement_constraints():
    s = one("Layout * * FBMEM C_order AOS Align==128 No_Align Exact Compact;")
    assert s.target == A.Kind("FBMEM") and s.target.is_memory
    assert s.constraints == (A.Constraint("C_order"), A.Constraint("AOS"), A.Constraint("Align", "==", 128),
                             A.Constraint("No_Align"), A.Constraint("Exact"), A.Constraint("Compact"))
    for op in ("==", "!=", "<", "<=", ">", ">="):
        assert one(f"Layout t * GPU Align{op}64;").constraints[0].op == op


def test_instance_limit_with_and_without_kind():
    assert one("InstanceLimit task_4 1;") == A.InstanceLimitStmt(A.TaskSel((A.Ident("task_4"),)), None, 1)
    assert one("InstanceLimit task_4 GPU 2;").proc == A.Kind("GPU")
    assert isinstance(one("InstanceLimit task_4 * 2;").proc, A.Star)


def test_other_mapping_statements():
    assert one("CollectMemory task_4 *;") == A.CollectMemoryStmt(A.TaskSel((A.Ident("task_4"),)), A.RegionSel())
    assert one("IndexTaskMap * f;") == A.IndexTaskMapStmt(A.TaskSel(None), A.Ident("f"))
    old = one("IndexTaskMap t1,t2 mgpu f;")
    assert old.machine == A.Ident("mgpu") and old.func == A.Ident("f")
    assert one("SingleTaskMap task_4 with_parent;").func.name == "with_parent"
    assert one("ControlReplicate a,b;") == A.ControlReplicateStmt(A.TaskSel((A.Ident("a"), A.Ident("b"))))


def test_function_definition_and_print():
    f = one('def f(Task task, int n, bool b, IPoint p, ISpace s, MSpace m) { x = 1; print("{}", x); return m[0]; }')
    assert [(p.type, p.name) for p in f.params] == [("Task", "task"), ("int", "n"), ("bool", "b"), ("IPoint", "p"),
                                                     ("ISpace", "s"), ("MSpace", "m")]
    assert f.body == (A.Assign("x", A.IntLit(1)), A.Print("{}", (A.Name("x"),)))
    assert f.ret == A.Return(A.Index(A.Name("m"), (A.IntLit(0),)))
    assert one("def g() { return 1; }").params == ()
    assert one('print("hello # not a comment");') == A.Print("hello # not a comment", ())


def test_empty_statements_leave_no_node():
    assert parse(";;Task * GPU;;").statements == (A.TaskStmt(A.TaskSel(None), (A.Kind("GPU"),)),)
    assert parse("").statements == ()
    assert parse("# only a comment\n").statements == ()


def test_precedence_and_associativity():
    B = A.Binary
    assert expr("1 + 2 * 3") == B("+", A.IntLit(1), B("*", A.IntLit(2), A.IntLit(3)))
    assert expr("1 - 2 - 3") == B("-", B("-", A.IntLit(1), A.IntLit(2)), A.IntLit(3))
    assert expr("(1 - 2) * 3") == B("*", B("-", A.IntLit(1), A.IntLit(2)), A.IntLit(3))
    assert expr("a || b && c == d") == B("||", A.Name("a"), B("&&", A.Name("b"), B("==", A.Name("c"), A.Name("d"))))
    assert expr("a < b == c >= d") == B("==", B("<", A.Name("a"), A.Name("b")), B(">=", A.Name("c"), A.Name("d")))
    assert expr("-a.b") == A.Unary("-", A.Member(A.Name("a"), "b"))
    assert expr("!!x") == A.Unary("!", A.Unary("!", A.Name("x")))
    assert expr("-3") == A.Unary("-", A.IntLit(3))


def test_ternary_is_right_associative():
    t = expr("a ? 1 : b ? 2 : 3")
    assert t == A.Ternary(A.Name("a"), A.IntLit(1), A.Ternary(A.Name("b"), A.IntLit(2), A.IntLit(3)))
    assert expr("Machine(GPU).volume > 0 ? Machine(GPU) : Machine(CPU)").then == A.MachineLit("GPU")


def test_tuples_unpacking_slicing_comprehension():
    assert expr("(1,)") == A.TupleLit((A.IntLit(1),))
    assert expr("(1)") == A.IntLit(1)
    assert expr("(1, 2,)") == A.TupleLit((A.IntLit(1), A.IntLit(2)))
    assert expr("(*t, 0)") == A.TupleLit((A.Unpack(A.Name("t")), A.IntLit(0)))
    assert expr("t[:-1]") == A.Slice(A.Name("t"), None, A.Unary("-", A.IntLit(1)))
    assert expr("t[1:]") == A.Slice(A.Name("t"), A.IntLit(1), None)
    assert expr("t[:]") == A.Slice(A.Name("t"), None, None)
    assert expr("t[0:0]") == A.Slice(A.Name("t"), A.IntLit(0), A.IntLit(0))
    assert expr("tuple(i * 2 for i in (0, 1))") == A.Comprehension(
        A.Binary("*", A.Name("i"), A.IntLit(2)), "i", A.TupleLit((A.IntLit(0), A.IntLit(1))))


def test_machine_models_and_task_properties():
    assert expr("m[*hi, *lo]") == A.Index(A.Name("m"), (A.Unpack(A.Name("hi")), A.Unpack(A.Name("lo"))))
    assert expr("m[0, *]") == A.Index(A.Name("m"), (A.IntLit(0), A.Wildcard()))
    assert expr("m.merge(0, 1).split(0, 2)") == A.MethodCall(
        A.MethodCall(A.Name("m"), "merge", (A.IntLit(0), A.IntLit(1))), "split", (A.IntLit(0), A.IntLit(2)))
    assert expr("task.parent.processor(m)") == A.MethodCall(A.Member(A.Name("task"), "parent"), "processor",
                                                            (A.Name("m"),))
    assert expr("m.has(FBMEM)") == A.MethodCall(A.Name("m"), "has", (A.KindLit("FBMEM"),))
    assert expr("f(1, True, False)") == A.Call("f", (A.IntLit(1), A.BoolLit(True), A.BoolLit(False)))
    assert expr("g()") == A.Call("g", ())


def test_locations():
    program = parse("Task * GPU;\n  mgpu = Machine(GPU);\ndef f(Task task) {\n  return a + b;\n}\n", "p.dsl")
    task, assign, f = program.statements
    assert (task.loc.file, task.loc.line, task.loc.col) == ("p.dsl", 1, 1)
    assert (assign.loc.line, assign.loc.col) == (2, 3)
    assert task.kinds[0].loc.col == 8
    assert (f.loc.line, f.loc.end_line) == (3, 5)
    assert (f.ret.value.loc.line, f.ret.value.loc.col) == (4, 12)  # a Binary is located at its operator
    assert str(task.loc) == "p.dsl:1:1"


def test_locations_do_not_affect_equality():
    assert parse("Task * GPU;") == parse("\n\n   Task   *\n GPU ;", "other.dsl")


def test_comments_are_collected():
    program = parse('# head\nx = 1; // tail\nprint("# no");  # after\n', "c.dsl")
    assert [(c.text, c.loc.line, c.loc.col) for c in program.comments] == [
        ("# head", 1, 1), ("// tail", 2, 8), ("# after", 3, 17)]


def test_lone_carriage_returns_end_lines():
    """A file saved with old-Mac line ends (CR only) was one comment from its first '#': an empty mapper with a
    warning only, and `fmt --write` wrote it as one line. A lone CR ends a line (as Python's universal newlines
    read it): the statements, comments, positions, errors and canonical print are those of the LF file."""
    from mapperopt.dsl import format_program

    lf = "# head\nTask * GPU; # tail\n  mgpu = Machine(GPU);\n"
    program = parse(lf.replace("\n", "\r"), "cr.dsl")
    assert program == parse(lf) and len(program.statements) == 2
    assert [(s.loc.line, s.loc.col) for s in program.statements] == [(2, 1), (3, 3)]
    assert [(c.text, c.loc.line, c.loc.col) for c in program.comments] == [("# head", 1, 1), ("# tail", 2, 13)]
    assert format_program(program) == format_program(parse(lf))
    with pytest.raises(DslSyntaxError) as err:
        parse("x = 1;\ry = 2\rz = 3;\r", "cr.dsl")
    assert str(err.value).startswith("cr.dsl:2:6: error[E102]: missing ';' after '2'"), str(err.value)


# ---------------------------------------------------------------------------------------------------- errors

ERRORS = [
    # source, code, line, column, message fragment, hint fragment
    ("def f(Task task): return mgpu[0,0];", "E101", 1, 17, "unexpected ':' after the parameter list of 'f'",
     "write def f(Task task) {"),
    ("def cyclic(Task task):\n    return 1", "E101", 1, 22, "expected '{'", "def cyclic(Task task) {"),
    ("Task * GPU", "E105", 1, 11, "unexpected end of input; expected ',' or ';'", None),
    ("Region * ghost_region GPU ZCMEM\nIndexTaskMap task4 cyclic;", "E102", 1, 32, "missing ';' after 'ZCMEM'", None),
    ("x = 3 // 2;", "E102", 1, 6, "missing ';' after '3'", "'//' starts a comment; integer division is '/'"),
    ("x = 3 // 2;\ny = 1;", "E102", 1, 6, "missing ';' after '3'", "integer division is '/'"),
    ('print("abc);', "E103", 1, 7, "unterminated string literal", None),
    ("x = 1 & 2;", "E104", 1, 7, "unrecognized character '&'", "'&&'"),
    ("x = 1 @ 2;", "E104", 1, 7, "unrecognized character '@'", None),
    ("def f(Task t) { return 1; x = 2; }", "E106", 1, 27, "'return' must be the last statement", None),
    ("def f(Task t) { x = 2; }", "E106", 1, 24, "'f' has no 'return'", "end the body of 'f'"),
    # a trailing ',' in a kind list: the statement without it
    ("Task * CPU,;", "E100", 1, 12, "unexpected ';'; expected a processor kind",
     "remove the trailing ',': `Task * CPU;`"),
    ("Region * * GPU FBMEM,ZCMEM,;", "E100", 1, 28, "expected a memory kind",
     "remove the trailing ',': `Region * * GPU FBMEM,ZCMEM;`"),
    ("Task * GPU,PROC;", "E107", 1, 12, "unknown processor kind 'PROC'; expected one of CPU, GPU, OMP, IO, PY", None),
    # a name with a space, unquoted: the second word is read as the kind
    ("Region * particle fields CPU SYSMEM;", "E107", 1, 19, "unknown processor kind 'fields'",
     'a name that is not an identifier is written as a string: "particle fields"'),
    ("Task fill particles CPU;", "E107", 1, 11, "unknown processor kind 'particles'", '"fill particles"'),
    ("Region * * GPU DRAM;", "E107", 1, 16, "unknown memory kind 'DRAM'", None),
    # Legion's short names of the processor kinds (LOC_PROC, TOC_PROC) and the kinds with `_PROC`: the DSL's kind
    ("Task * LOC;", "E107", 1, 8, "unknown processor kind 'LOC'",
     "did you mean 'CPU'? (Legion's LOC_PROC is the DSL's CPU)"),
    ("Task * TOC,LOC;", "E107", 1, 8, "unknown processor kind 'TOC'", "did you mean 'GPU'?"),
    ("Task * CPU_PROC;", "E107", 1, 8, "unknown processor kind 'CPU_PROC'", "did you mean 'CPU'?"),
    ("Task * GPU_PROC;", "E107", 1, 8, "unknown processor kind 'GPU_PROC'", "did you mean 'GPU'?"),
    ("m = Machine(TOC);", "E107", 1, 13, "unknown processor kind 'TOC'", "did you mean 'GPU'?"),
    ("Region * * LOC SYSMEM;", "E107", 1, 12, "unknown processor kind 'LOC'", "did you mean 'CPU'?"),
    ("Task * gpu;", "E107", 1, 8, "unknown processor kind 'gpu'", "did you mean 'GPU'?"),
    ("Task * UTIL;", "E107", 1, 8, "unknown processor kind 'UTIL'", "Legion's UTIL_PROC processors do the "
     "runtime's own work"),
    # a word like no kind: the kinds, with Legion's names
    ("Task * XYZ;", "E107", 1, 8, "unknown processor kind 'XYZ'",
     "the DSL's processor kinds: CPU (Legion's LOC_PROC), GPU (TOC_PROC), OMP (OMP_PROC), IO (IO_PROC), PY (PY_PROC)"),
    ("Region * * GPU DRAM;", "E107", 1, 16, "unknown memory kind 'DRAM'", "the DSL's memory kinds: SYSMEM (Legion's "
     "SYSTEM_MEM), FBMEM (GPU_FB_MEM)"),
    ("Region * * GUP FBMEM;", "E107", 1, 12, "unknown processor kind 'GUP'", "did you mean 'GPU'?"),
    # A memory kind's near-miss is one the statement's processor kind sees (FBMEM is a GPU's only), and one that only
    # the run's flags create says so.
    ("Region * * CPU FOOBAR_MEM;", "E107", 1, 16, "unknown memory kind 'FOOBAR_MEM'",
     "did you mean 'RDMEM'? RDMEM, the registered (RDMA) memory, exists only when the run sizes it with -ll:rsize "
     "(MiB): write RDMEM and give the run's flags after `--`, e.g. `-- -ll:rsize 64`"),
    ("Region * * GPU FOOBAR_MEM;", "E107", 1, 16, "unknown memory kind 'FOOBAR_MEM'", "did you mean 'FBMEM'?"),
    ("Region * * CPU SYSMEM,FBMEN;", "E107", 1, 23, "unknown memory kind 'FBMEN'", "did you mean 'FBMEM'?"),
    ("Region * * CPU fbmem;", "E107", 1, 16, "unknown memory kind 'fbmem'", "did you mean 'FBMEM'?"),
    # Kinds and constraints are case-sensitive: a lowercase one gets its spelling.
    ("Task * cpu;", "E107", 1, 8, "unknown processor kind 'cpu'", "did you mean 'CPU'?"),
    ("Region * * CPU sysmem;", "E107", 1, 16, "unknown memory kind 'sysmem'", "did you mean 'SYSMEM'?"),
    ("Layout * * Fbmem SOA;", "E107", 1, 12, "unknown kind 'Fbmem'", "did you mean 'FBMEM'?"),
    ("m = Machine(gpu);", "E107", 1, 13, "unknown processor kind 'gpu'", "did you mean 'GPU'?"),
    ("Layout * * * SOA f_order;", "E108", 1, 18, "near 'f_order'", "did you mean 'F_order'?"),
    ("Layout * * * Align=64;", "E108", 1, 19, "malformed layout constraint near '='", "write Align==64"),
    ("Layout * * * Align 64;", "E108", 1, 20, "malformed layout constraint near '64'", "write Align==64"),
    ("Layout * * * SOA, C_order;", "E108", 1, 17, "near ','", "constraints are separated by spaces"),
    ("Layout * * * SOA Fortran;", "E108", 1, 18, "near 'Fortran'", None),
    ("IndexTaskMap GPU,calc f;", "E109", 1, 14, "reserved word 'GPU' cannot be used as a name in a task list",
     "a kind selector stands alone"),
    ("IndexTaskMap calc,GPU f;", "E109", 1, 19, "reserved word 'GPU' cannot be used as a name", None),
    # A kind in a name's place or of the other sort: the statement's form, and the statement in that order.
    ("Region stencil CPU pxm_in SYSMEM;", "E109", 1, 16, "reserved word 'CPU'",
     "a Region statement is `Region TASK REGION PROCESSOR_KIND MEMORY_KINDS;`: "
     "write Region stencil pxm_in CPU SYSMEM;"),
    ('Region * GPU "pxm in" FBMEM , ZCMEM;', "E109", 1, 10, "reserved word 'GPU'",
     'write Region * "pxm in" GPU FBMEM,ZCMEM;'),
    ("Layout stencil CPU 0 SOA F_order;", "E109", 1, 16, "reserved word 'CPU'",
     "write Layout stencil 0 CPU SOA F_order;"),
    ("Layout calculate_new_currents SYSMEM rp_ghost AOS;", "E109", 1, 31, "reserved word 'SYSMEM'",
     "a Layout statement is `Layout TASK REGION KIND CONSTRAINTS;`: write Layout calculate_new_currents rp_ghost "
     "SYSMEM AOS;"),
    # A kind where the task goes: only the map statements take a kind selector.
    ("Layout CPU * * AOS C_order;", "E109", 1, 8, "reserved word 'CPU'",
     "a Layout statement is `Layout TASK REGION KIND CONSTRAINTS;` (a task name or *; a processor kind selects "
     "tasks only in IndexTaskMap and SingleTaskMap): write Layout * * CPU AOS C_order;"),
    ("Region GPU * GPU FBMEM;", "E109", 1, 8, "reserved word 'GPU'", "write Region * * GPU FBMEM;"),
    ("Task stencil FBMEM;", "E107", 1, 14, "'FBMEM' is a memory kind; expected a processor kind",
     "memories are chosen by Region statements, after the processor kind: Region * * GPU FBMEM;"),
    ("Task * GPU,SYSMEM;", "E107", 1, 12, "'SYSMEM' is a memory kind", "Region * * CPU SYSMEM;"),
    ("Region * * CPU GPU;", "E107", 1, 16, "'GPU' is a processor kind; expected a memory kind",
     "`Region TASK REGION PROCESSOR_KIND MEMORY_KINDS;`"),
    # A stray token after a complete statement is E100 at that token, not a missing ';' (E102) before it.
    ("Task * CPU;\n- Region * * CPU SYSMEM;", "E100", 2, 1, "unexpected '-'; expected a statement", None),
    ("Task * CPU;\n) x = 1;", "E100", 2, 1, "unexpected ')'", None),
    ("Task * CPU;\n;\n-x = 1;", "E100", 3, 1, "unexpected '-'", None),
    ("def f(Task t) { return 1; }\n+ x = 1;", "E100", 2, 1, "unexpected '+'", None),
    # '//' in the middle of a bracketed expression: the error comes later, with the hint.
    ("def f(Task task) {\n  return m[a // 2, 0];\n}\n", "E100", 3, 1, "unexpected '}'",
     "'//' starts a comment; integer division is '/'"),
    ("x = f(a // b);\n\ny = 1;", "E100", 3, 1, "unexpected 'y'", "integer division is '/'"),
    ("x = f(a // b);", "E105", 1, 8, "unexpected end of input", "integer division is '/'"),
    # A reserved word as a variable's name (assigned, or a comprehension's): another name.
    ("for = 1;", "E109", 1, 1, "reserved word 'for' cannot be used as a name",
     "name the variable otherwise, e.g. 'for_'"),
    ("CPU = 3;", "E109", 1, 1, "reserved word 'CPU'", "name the variable otherwise, e.g. 'cpu'"),
    ("def f(Task t) {\n  GPU = 1;\n  return 1;\n}", "E109", 2, 3, "reserved word 'GPU'",
     "name the variable otherwise, e.g. 'gpu'"),
    ("x = tuple(GPU for GPU in (1, 2));", "E109", 1, 19, "reserved word 'GPU'",
     "name the variable otherwise, e.g. 'gpu'"),
    ("def f(Task int) { return 1; }", "E109", 1, 12, "reserved word 'int'", None),
    # A statement keyword where a function or parameter is named is a name chosen, not a statement misplaced.
    ("def Task(Task t) { return 1; }", "E109", 1, 5, "reserved word 'Task' cannot be used as a name",
     "name the function otherwise, e.g. 'task'"),
    ("def Region(Task t) { return 1; }", "E109", 1, 5, "reserved word 'Region' cannot be used as a name",
     "name the function otherwise, e.g. 'region'"),
    ("def f(Task Tunable) { return 1; }", "E109", 1, 12, "reserved word 'Tunable' cannot be used as a name",
     "name the parameter otherwise, e.g. 'tunable'"),
    ("def f(Task t, int print) { return 1; }", "E109", 1, 19, "reserved word 'print'",
     "name the parameter otherwise, e.g. 'print_'"),
    ("Task * GPU; }", "E100", 1, 13, "unexpected '}'; expected a statement", None),
    ("x = (1 2);", "E100", 1, 8, "unexpected '2'; expected ')', ',', '.', '?', '[' or an operator", None),
    ("def f(task) { return 1; }", "E100", 1, 7, "unexpected 'task'", "parameters are typed: write 'Task task'"),
    # A misspelt type before the parameter's name: the type it is most like, as for a Tunable's type (E226).
    ("def f(Int a) { return a; }", "E100", 1, 7, "unexpected 'Int'", "did you mean 'int'?"),
    ("def f(Task t, Tsk u) { return 1; }", "E100", 1, 15, "unexpected 'Tsk'", "did you mean 'Task'?"),
    # A missing ';' before the '}' of a body, on the same line, is E102 like one at a line break.
    ("def f(Task t) { return 1 }", "E102", 1, 25, "missing ';' after '1'", None),
    ("def f(Task t) {\n  x = 1 }", "E102", 2, 8, "missing ';' after '1'", None),
    ("x = 99999999999999999999;", "E100", 1, 5, "out of range", None),
    ("return 1;", "E100", 1, 1, "unexpected 'return'", "only allowed as the last statement of a function body"),
    # Statements of other languages: an `if` is lexed as a name starting an assignment, the error comes after it.
    ("def f(Task task) {\n    if task.ipoint[0] > 0 {", "E100", 2, 5, "the DSL has no 'if' statement",
     "the conditional expression c ? a : b"),
    ("def f(Task task) {\n    x = 1;\n    if (x) {", "E100", 3, 5, "no 'if' statement", "no early 'return'"),
    ("Task * CPU;\nif (x) {", "E100", 2, 1, "no 'if' statement", "c ? a : b"),
    ("x = 1; while (x) {", "E100", 1, 8, "no 'while' statement", "tuple(e for x in t)"),
    ("def f(Task t) {\n  for x in t.ipoint {", "E100", 2, 3, "no 'for' statement", "tuple(e for x in t)"),
    ("x = 1 if y else 2;", "E100", 1, 7, "unexpected 'if'", "c ? a : b"),
    ("lin = if x then 1 else 0;", "E100", 1, 7, "the DSL has no 'if' expression", "c ? a : b"),
    # A keyword in the wrong case: at the word, as a misspelt one (it is no assignment: no '=' follows it).
    ("task * GPU,CPU;", "E100", 1, 1, "unknown statement 'task'", "keywords are case-sensitive: did you mean 'Task'?"),
    ("Task * CPU;\nindexTaskMap * f;", "E100", 2, 1, "unknown statement 'indexTaskMap'",
     "did you mean 'IndexTaskMap'?"),
    ("Instancelimit stencil 2;", "E100", 1, 1, "unknown statement 'Instancelimit'", "did you mean 'InstanceLimit'?"),
    # A statement keyword assigned to: another name.
    ("Region = 3;", "E100", 1, 8, "unexpected '='", "'Region' is a statement keyword, not a name: name the variable "
     "otherwise, e.g. 'region'"),
    # A '(' or '[' left open where the statement ends: named with where it is, as an unclosed '{' is.
    ("def f(Task task) {\n    return m[task.ipoint[0] % m.size[0];\n}", "E100", 2, 40,
     "unexpected ';': the '[' at line 2, column 13 is not closed; expected ',', ':' or ']'", "add ']' before ';'"),
    ("x = (1, 2;", "E100", 1, 10, "the '(' at line 1, column 5 is not closed", "add ')' before ';'"),
    ("x = f(m[0, 1);", "E100", 1, 13, "the '[' at line 1, column 8 is not closed", "add ']' before ')'"),
    ("x = m[0, 1);", "E100", 1, 11, "the '[' at line 1, column 6 is not closed", "close it with ']' instead of ')'"),
    ("x = (1, 2\ny = 3;", "E100", 2, 1, "the '(' at line 1, column 5 is not closed", "add ')' at the end of line 1"),
    ("x = (1, (2", "E105", 1, 11, "the '(' at line 1, column 5 and the '(' at line 1, column 9 are not closed",
     "add '))' at the end of line 1"),
    ("x = (1\n  2);", "E100", 2, 3, "unexpected '2'; expected ')'", None),  # a ',' missing, not a ')'
    # An unknown word then a name where a statement starts: the statement keyword it stands for, at the word.
    ("Task * CPU;\nCollectMemeory calculate_new_currents rp_wires;", "E100", 2, 1, "unknown statement "
     "'CollectMemeory'", "did you mean 'CollectMemory'?"),
    ("GarbageCollect calculate_new_currents rp_wires;", "E100", 1, 1, "unknown statement 'GarbageCollect'",
     "did you mean 'CollectMemory'?"),
    ("Task * CPU;\nIndexTskMap t f;", "E100", 2, 1, "unknown statement 'IndexTskMap'", "did you mean 'IndexTaskMap'?"),
    ("xyzzy t f;", "E100", 1, 7, "unexpected 't'", None),  # nothing like a keyword: as before
    # Whatever a statement's first argument is (a '*', a string, a number, a kind), not only a name; def and print
    # too, with their own next token. Not an assignment, which parses: `test_a_misspelt_keyword_assigned_to_parses`.
    ("Task * CPU;\nLayuot * * * SOA C_order;", "E100", 2, 1, "unknown statement 'Layuot'", "did you mean 'Layout'?"),
    ("Regoin * * GPU FBMEM;", "E100", 1, 1, "unknown statement 'Regoin'", "did you mean 'Region'?"),
    ('Taks "init" CPU;', "E100", 1, 1, "unknown statement 'Taks'", "did you mean 'Task'?"),
    ("Tunabel 3 = 4;", "E100", 1, 1, "unknown statement 'Tunabel'", "did you mean 'Tunable'?"),
    ("IndexTaskMpa GPU f;", "E100", 1, 1, "unknown statement 'IndexTaskMpa'", "did you mean 'IndexTaskMap'?"),
    ("SingleTaskMpa * f;", "E100", 1, 1, "unknown statement 'SingleTaskMpa'", "did you mean 'SingleTaskMap'?"),
    ("InstanceLimt * 1;", "E100", 1, 1, "unknown statement 'InstanceLimt'", "did you mean 'InstanceLimit'?"),
    ("CollectMemroy * *;", "E100", 1, 1, "unknown statement 'CollectMemroy'", "did you mean 'CollectMemory'?"),
    ("ControlReplicte *;", "E100", 1, 1, "unknown statement 'ControlReplicte'", "did you mean 'ControlReplicate'?"),
    ("deff f(Task t) { return 1; }", "E100", 1, 1, "unknown statement 'deff'", "did you mean 'def'?"),
    ('Task * CPU;\nprnit("a");', "E100", 2, 1, "unknown statement 'prnit'", "did you mean 'print'?"),
    ("xyzzy * * * SOA;", "E100", 1, 7, "unexpected '*'", None),  # nothing like a keyword: as before
    ("f(1);", "E100", 1, 2, "unexpected '('", None),
    # The same in a function body, for its keywords return and print.
    ("def f(Task t) {\n  x = 1;\n  retrun x;\n}", "E100", 3, 3, "unknown statement 'retrun'",
     "did you mean 'return'?"),
    ("def f(Task t) {\n  pritn(\"a\");\n  return 1;\n}", "E100", 2, 3, "unknown statement 'pritn'",
     "did you mean 'print'?"),
    ("def f(Task t) { Return 1; }", "E100", 1, 17, "unknown statement 'Return'",
     "keywords are case-sensitive: did you mean 'return'?"),
    ("def f(Task t) { result 1; }", "E100", 1, 24, "unexpected '1'", None),  # not clearly a misspelling
    # A byte order mark after the start of the file (e.g. where two files were joined): said what it is.
    ("Task * CPU;\nRegion * *\ufeff CPU SYSMEM;", "E104", 2, 11, "a byte order mark (U+FEFF) at line 2, column 11",
     "remove it"),
    ("x = 1;\u00a0y = 2;", "E104", 1, 7, "unrecognized character U+00A0 (NO-BREAK SPACE)", None),
    # quotes a document or chat turned curly
    ('print(\u201cmachine {}\u201d, 1);', "E104", 1, 7, "unrecognized character '\u201c'",
     'strings use straight double quotes: "..."'),
    ("print(\u2018a\u2019);", "E104", 1, 7, "unrecognized character '\u2018'", "strings use straight double quotes"),
    # control characters have no Unicode name: named as C does; a form feed or vertical tab is not whitespace here
    ("Task * CPU;\f\nx = 1;", "E104", 1, 12, "unrecognized character U+000C (FORM FEED)",
     "whitespace is spaces, tabs and line breaks"),
    ("Region\v* * CPU SYSMEM;", "E104", 1, 7, "unrecognized character U+000B (VERTICAL TAB)",
     "replace it with a space"),
    ("x = 1;\x07", "E104", 1, 7, "unrecognized character U+0007 (BELL)", None),
    # C-style comments.
    ("/* mapper */\nTask * CPU;", "E100", 1, 1, "unexpected '/'", "comments run from '#' (or '//') to the end"),
    ("Region * 0 CPU /* c-style */ SYSMEM;", "E100", 1, 16, "expected a memory kind", "'/*' does not start a comment"),
    ("x = 4 /* four */ + 1;", "E100", 1, 8, "unexpected '*'", "'/*' does not start a comment"),
    # A list where a region selector goes (a task selector takes one): one statement per region.
    ("Region stencil pxm_in,pxp_in GPU ZCMEM;", "E100", 1, 22, "unexpected ','",
     "a Region statement names one region (or '*' for all), not a list as for tasks: write one statement per "
     "region, Region stencil pxm_in GPU ZCMEM; Region stencil pxp_in GPU ZCMEM;"),
    ('Layout t1,t2 "a b", c * SOA F_order;', "E100", 1, 19, "unexpected ','",
     'write one statement per region, Layout t1,t2 "a b" * SOA F_order; Layout t1,t2 c * SOA F_order;'),
    ("CollectMemory * r1,r2;", "E100", 1, 19, "unexpected ','",
     "a CollectMemory statement names one region (or '*' for all), not a list as for tasks: write one statement "
     "per region, CollectMemory * r1; CollectMemory * r2;"),
    ("Region * r1,r2", "E100", 1, 12, "unexpected ','", "a Region statement names one region (or '*' for all)"),
    # a Python habit: the body's '{' left out (the hint is the brace, not where `return` may stand)
    ("mcpu = Machine(CPU);\ndef f(Task task)\n    return mcpu[0, 0];\n}\n", "E100", 3, 5, "expected '{'",
     "add '{' at the end of line 2: def f(Task task) {"),
    ("def f(Task task) x = 1; return x; }", "E100", 1, 18, "expected '{'", "add '{' after the parameter list"),
    # Python's spellings of the logical operators and the power, and a name's non-ASCII letter
    ("x = 1 > 0 and 2 > 1;", "E100", 1, 11, "unexpected 'and'", "logical and is '&&'"),
    ("x = 1 > 0 or 2 > 1;", "E100", 1, 11, "unexpected 'or'", "logical or is '||'"),
    ("x = not True;", "E100", 1, 9, "unexpected 'True'", "logical not is '!': write !True"),
    # Python's `not` binds looser than a comparison: the whole operand is negated
    ("x = 1;\ny = not x > 2;", "E100", 2, 9, "unexpected 'x'", "logical not is '!': write !(x > 2)"),
    ("def f(Task task) { return not task.ipoint[0] > 0 ? 1 : 2; }", "E100", 1, 31, "unexpected 'task'",
     "logical not is '!': write !(task.ipoint[0] > 0)"),
    ("x = not y and z;", "E100", 1, 9, "unexpected 'y'", "logical not is '!': write !y"),
    ("x = 2 ** 3;", "E100", 1, 8, "unexpected '*'", "there is no power operator '**'"),
    ("x = 2 ^ 3;", "E104", 1, 7, "unrecognized character '^'", "there is no '^' operator"),
    ("x = 1;\ny = x is 1;", "E100", 2, 7, "unexpected 'is'", "compare with '==' ('is not': '!=')"),
    ("x = 1 <> 2;", "E100", 1, 8, "unexpected '>'", "not equal is '!='"),
    # a comment ends the header's line: the brace goes after the ')', not at the end of the line (in the comment)
    ("def f(Task task) # c\n  return 1;\n}", "E100", 2, 3, "expected '{'",
     "add '{' after the ')' of line 1: def f(Task task) {"),
    ("def f(Task task) // c\n  return 1;\n}", "E100", 2, 3, "expected '{'", "add '{' after the ')' of line 1"),
    ("caf\u00e9 = 1;", "E104", 1, 4, "unrecognized character '\u00e9'", "names are written with ASCII letters"),
    # a map statement without its function: the hint shows the form, with the statement's own task
    ("IndexTaskMap calc_dt_hydro;", "E100", 1, 27, "unexpected ';'; expected a name",
     "IndexTaskMap names the mapping function after the tasks: `IndexTaskMap calc_dt_hydro f;` with "
     "def f(Task task) { ... }"),
    ("SingleTaskMap t1, t2;", "E100", 1, 21, "unexpected ';'", "`SingleTaskMap t1, t2 f;`"),
    # a missing ';': the hint shows the statement ended with it
    ("def f(Task task) { return m[0, 0] }", "E102", 1, 34, "missing ';' after ']'",
     "end the statement with ';': return m[0, 0];"),
    ("Region * ghost_region GPU ZCMEM\nTask * CPU;", "E102", 1, 32, "missing ';' after 'ZCMEM'",
     "end the statement with ';': Region * ghost_region GPU ZCMEM;"),
]


@pytest.mark.parametrize("src,code,line,col,message,hint", ERRORS, ids=[e[1] + ":" + e[0][:20] for e in ERRORS])
def test_syntax_error(src, code, line, col, message, hint):
    with pytest.raises(DslSyntaxError) as info:
        parse(src, "bad.dsl")
    err = info.value
    assert (err.code, err.loc.line, err.loc.col) == (code, line, col), str(err)
    assert message in err.diagnostic.message
    if hint is not None:
        assert any(hint in h for h in err.diagnostic.hints), err.diagnostic.hints


@pytest.mark.parametrize("src", ["def f(Int a) { return a; }", "def f(Xyzzy a) { return a; }"])
def test_a_misspelt_parameter_type_is_not_taken_for_an_untyped_parameter(src):
    """`def f(Int a)` was told "write 'Task Int'", as if `Int` were a parameter's name without its type."""
    with pytest.raises(DslSyntaxError) as info:
        parse(src, "bad.dsl")
    hints = info.value.diagnostic.hints
    assert not any("write 'Task" in h for h in hints), hints
    assert any("types: Task, int, bool, IPoint, ISpace, MSpace" in h for h in hints), hints


@pytest.mark.parametrize("src", ["def Task(Task t) { return 1; }", "def f(Task Tunable) { return 1; }"])
def test_a_keyword_as_a_definitions_name_is_not_told_about_function_bodies(src):
    """Top level, naming a function or a parameter: the hint of a statement misplaced in a body would mislead."""
    with pytest.raises(DslSyntaxError) as info:
        parse(src, "bad.dsl")
    assert not [h for h in info.value.diagnostic.hints if h and "function body" in h], info.value.diagnostic.hints


def test_a_misspelt_keyword_assigned_to_parses():
    """A name like a statement keyword that is assigned to is a name (the hint above is only for a line that is no
    assignment): these parse as assignments, as they always did."""
    for src in ("Layuot = 3 * 2;", "Taks = x;", "prnit = (1);", "deff = f(2);"):
        (stmt,) = parse(src).statements
        assert isinstance(stmt, A.Assign) and stmt.name == src.split()[0], src


# Legion's kind names (and near ones) name the DSL's kind they mean, not the nearest spelling (`GPU_MEM` is
# nearer ZCMEM).
@pytest.mark.parametrize("written,meant", [
    ("GPU_FB_MEM", "FBMEM"), ("GPU_MEM", "FBMEM"), ("fb_mem", "FBMEM"), ("SYSTEM_MEM", "SYSMEM"),
    ("Z_COPY_MEM", "ZCMEM"), ("REGDMA_MEM", "RDMEM"), ("SOCKET_MEM", "SOCKMEM")])
def test_legion_memory_kind_names(written, meant):
    with pytest.raises(DslSyntaxError) as info:
        parse(f"Region * * GPU {written};", "bad.dsl")
    assert info.value.diagnostic.hints == (
        f"did you mean '{meant}'? (Legion's {A.LEGION_NAMES[meant]} is the DSL's {meant})",)


@pytest.mark.parametrize("written,meant", [("TOC_PROC", "GPU"), ("LOC_PROC", "CPU"), ("IO_PROC", "IO"),
                                           ("OMP_PROC", "OMP"), ("toc_proc", "GPU")])
def test_legion_processor_kind_names(written, meant):
    for src in (f"Task * {written};", f"m = Machine({written});"):
        with pytest.raises(DslSyntaxError) as info:
            parse(src, "bad.dsl")
        assert info.value.diagnostic.hints == (
            f"did you mean '{meant}'? (Legion's {A.LEGION_NAMES[meant]} is the DSL's {meant})",)


def test_legion_kind_names_without_a_dsl_kind_here():
    with pytest.raises(DslSyntaxError) as info:
        parse("Task * UTIL_PROC;", "bad.dsl")
    assert "the DSL has no kind for them; tasks run on CPU, GPU, OMP, IO, PY" in info.value.diagnostic.hints[0]
    with pytest.raises(DslSyntaxError) as info:  # a processor kind where a memory kind goes: no "did you mean"
        parse("Region * * GPU TOC_PROC;", "bad.dsl")
    assert info.value.diagnostic.hints == ("Legion's TOC_PROC is the DSL's GPU, a processor kind, which does not go "
                                           "here",)


@pytest.mark.parametrize("src", ["Region stencil CPU pxm_in SYSMEM;", 'Region * GPU "pxm in" FBMEM , ZCMEM;',
                                 "Layout stencil CPU 0 SOA F_order;", "Task stencil FBMEM;", "Region * * CPU GPU;"])
def test_kind_hints_parse_as_written(src):
    # The statement a hint offers (after `write` or `e.g.`, else the last word sequence) parses as pasted.
    with pytest.raises(DslSyntaxError) as info:
        parse(src, "bad.dsl")
    (hint,) = info.value.diagnostic.hints
    offered = hint.rsplit("write ", 1)[-1] if "write " in hint else hint.rsplit("e.g. ", 1)[-1]
    if ": Region" in offered:
        offered = offered.rsplit(": ", 1)[-1]
    assert parse(offered).statements, hint


def test_syntax_error_rendering_and_attributes():
    with pytest.raises(DslSyntaxError) as info:
        parse("Task * GPU;\nTask * GPU,PROC;\n", "policy.map")
    err = info.value
    assert isinstance(err, MapperoptError)
    assert err.token == "PROC"
    assert "'CPU'" in err.expected
    assert str(err) == (
        "policy.map:2:12: error[E107]: unknown processor kind 'PROC'; expected one of CPU, GPU, OMP, IO, PY\n"
        "  2 | Task * GPU,PROC;\n"
        "    |            ^\n"
        "  hint: the DSL's processor kinds: CPU (Legion's LOC_PROC), GPU (TOC_PROC), OMP (OMP_PROC), IO (IO_PROC), "
        "PY (PY_PROC)"
    )


def test_end_of_input_error_has_no_token():
    with pytest.raises(DslSyntaxError) as info:
        parse("mgpu = Machine(")
    assert info.value.token is None and info.value.code == "E105"
    assert "a processor kind" in info.value.diagnostic.message


def _unclosed(src):
    with pytest.raises(DslSyntaxError) as info:
        parse(src, "bad.dsl")
    return info.value


def test_a_function_left_open_is_said_as_such_with_where_its_brace_goes():
    """A missing '}' closing a def was reported as `unexpected 'IndexTaskMap'` with the hint that mapping statements
    are written at top level, as if the statement had been put in the body on purpose: the function is named, with
    where its body opened, and the '}' goes after its return (once a return is read, the body must end)."""
    err = _unclosed("Task * CPU;\nmcpu = Machine(CPU);\ndef blk(Task task) {\n  return mcpu[0, 0];\n\n"
                    "IndexTaskMap stencil blk;\n")
    assert (err.code, err.loc.line, err.loc.col) == ("E100", 6, 1), str(err)
    assert "function 'blk' (its '{' at line 3, column 20) is not closed" in err.diagnostic.message, str(err)
    assert err.diagnostic.hints[0] == "add '}' after its return, at the end of line 4: return mcpu[0, 0]; }", str(err)
    assert not any("written at top level" in h for h in err.diagnostic.hints), str(err)
    # at the end of the file: the same, as E105
    err = _unclosed("def f(Task task) {\n  x = 1;\n  return x;  # done\n")
    assert (err.code, err.loc.line) == ("E105", 3), str(err)
    assert "function 'f' (its '{' at line 1, column 18) is not closed" in err.diagnostic.message, str(err)
    assert "add '}' after its return, on a line after line 3" in err.diagnostic.hints[0], str(err)
    # no return read yet, a mapping statement where the body goes and no '}' after it: the brace is due before it
    err = _unclosed("def f(Task task) {\n  x = 1;\nTask * CPU;\n")
    assert "function 'f' (its '{' at line 1, column 18) is not closed" in err.diagnostic.message, str(err)
    assert "add '}' before line 3" in err.diagnostic.hints[0] and "return" in err.diagnostic.hints[0], str(err)


def test_a_statement_put_in_a_function_body_that_closes_later_keeps_its_hint():
    err = _unclosed("def f(Task task) {\n  Task * CPU;\n  return 1;\n}\n")
    assert "not closed" not in err.diagnostic.message, str(err)
    assert any("written at top level" in h for h in err.diagnostic.hints), str(err)


def _mappers():
    root = Path(__file__).parents[2]
    return [p for p in (*sorted((root / "configs").glob("*.dsl")), *sorted(EXAMPLES.glob("*.dsl")))
            if "}" in p.read_text()]


@pytest.mark.parametrize("path", _mappers(), ids=lambda p: p.name)
def test_deleting_any_one_closing_brace_of_a_mapper_names_the_function_left_open(path):
    """Every valid mapper of the repository with any one function's '}' deleted: the error names that function and
    says it is not closed, with the line of its return, after which the '}' goes."""
    text = path.read_text()
    program = parse(text, path.name)
    funcs = [s for s in program.statements if isinstance(s, A.FuncDef)]
    lines = text.split("\n")
    for func in funcs:
        end = func.loc.end_line, func.loc.end_col - 1  # its '}'
        assert lines[end[0] - 1][end[1] - 1] == "}"
        line = lines[end[0] - 1]
        broken = "\n".join([*lines[:end[0] - 1], line[:end[1] - 1] + " " + line[end[1]:], *lines[end[0]:]])
        err = _unclosed(broken)
        message = err.diagnostic.message
        assert f"function '{func.name}' (its '{{' at line {func.brace_line}," in message, (func.name, str(err))
        assert "is not closed" in message, (func.name, str(err))
        assert f"line {func.ret.loc.end_line or func.ret.loc.line}" in err.diagnostic.hints[0], (func.name, str(err))


@pytest.mark.parametrize("src", ["Task stencil,increment LOC;", "Task stencil,increment PROC;",
                                 "Task stencil,increment CPU_PROC;"])
def test_a_kind_like_word_after_a_task_list_is_not_taken_for_a_name_with_a_space(src):
    """`Task stencil,increment LOC;` was told to quote "increment LOC", as if the task had that name: an uppercase
    word where the kind goes is a kind meant, and gets the kinds (or the one meant), not the string hint."""
    with pytest.raises(DslSyntaxError) as info:
        parse(src, "bad.dsl")
    hints = info.value.diagnostic.hints
    assert info.value.code == "E107" and hints, str(info.value)
    assert not any("written as a string" in h for h in hints), hints
    assert "CPU" in hints[0], hints
