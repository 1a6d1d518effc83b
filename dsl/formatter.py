"""Canonical text of a `Program`: `parse(format_program(p)) == p` for every program.

Layout rules: one statement per line; lists in selectors as `a,b` (no spaces); functions as `def f(T x) {`, one body
statement per line indented by four spaces, `}` alone; binary operators surrounded by spaces; parentheses only where
precedence needs them. Comments are kept: a comment on its own line stays before the statement that follows it, a
comment on the last line of a statement (for a function: of its header, up to '{', or its '}') follows it on that line,
a comment on an earlier line of a statement written over several lines goes on its own line just before it, and one
blank line is kept where the source had at least one. Every comment keeps its place: after the same statements and
before the same statements, and at the end of the same line or on its own line.
"""

from __future__ import annotations

import re

from mapperopt.dsl import ast as A

INDENT = "    "

# Precedence levels (dsl-reference.md §8.1), loosest first; an operand is parenthesised when its level is below the slot's.
_TERNARY, _POSTFIX, _PRIMARY = 1, 9, 10
_UNARY = 8
_BINARY_LEVEL = {op: i + 2 for i, ops in enumerate(A.BINARY_LEVELS) for op in ops}


def format_program(program: A.Program) -> str:
    """The canonical text of `program`, ending with a newline (empty string for an empty program)."""
    lines: list[str] = []
    comments = sorted(program.comments, key=lambda c: (c.loc.line, c.loc.col))
    _emit_sequence(lines, list(program.statements), comments, 0, None)
    return "\n".join(lines) + ("\n" if lines else "")


def format_statement(stmt: A.Statement) -> str:
    """One statement in canonical form, without comments (a function spans several lines)."""
    lines: list[str] = []
    _emit_statement(lines, stmt, 0, [])
    return "\n".join(lines)


def format_expr(expr: A.Expr) -> str:
    """One expression in canonical form."""
    return _expr(expr, 0)


# ---------------------------------------------------------------------------------------------------- statements


def _start(node) -> int:
    return node.loc.line


def _start_pos(node) -> tuple[int, int]:
    return node.loc.line, node.loc.col


def _end(node) -> int:
    return node.loc.end_line or node.loc.line


def _emit_sequence(lines: list[str], items: list, comments: list[A.Comment], depth: int, last_line: int | None):
    """Emit `items` (statements) at `depth` with `comments` (sorted by position). A comment belongs to the last item
    that starts before it: on that item's lines it follows the item on its (last) line; on a later line it goes
    before the next item (or after the last one). Linear in items + comments. `last_line` is the source line just
    before the sequence, for blank lines."""
    pad = INDENT * depth
    leading: list[list[A.Comment]] = [[] for _ in items]
    inside: list[list[A.Comment]] = [[] for _ in items]
    tail: list[A.Comment] = []
    owner = -1
    for c in comments:
        pos = (c.loc.line, c.loc.col)
        while owner + 1 < len(items) and _start_pos(items[owner + 1]) < pos:
            owner += 1
        if owner >= 0 and c.loc.line <= _end(items[owner]):
            inside[owner].append(c)
        elif owner + 1 < len(items):
            leading[owner + 1].append(c)
        else:
            tail.append(c)
    prev_end = last_line
    for item, lead, within in zip(items, leading, inside):
        start, end = _start(item), _end(item)
        first = lead[0].loc.line if lead else start
        if prev_end and first and first > prev_end + 1 and lines and lines[-1].strip():
            lines.append("")
        for i, c in enumerate(lead):
            if i and c.loc.line > lead[i - 1].loc.line + 1:
                lines.append("")
            lines.append(pad + c.text)
        if lead and start > lead[-1].loc.line + 1:
            lines.append("")
        _emit_statement(lines, item, depth, within)
        prev_end = end or prev_end
    if tail and prev_end and tail[0].loc.line > prev_end + 1 and lines:
        lines.append("")
    for i, c in enumerate(tail):
        if i and c.loc.line > tail[i - 1].loc.line + 1:
            lines.append("")
        lines.append(pad + c.text)


def _emit_line(lines: list[str], text: str, comments: list[A.Comment], last_line: int, pad: str):
    """`text`, one line, from source lines up to `last_line` holding `comments`: the comment on `last_line` (at most
    one: a comment runs to the end of its line) stays at the end of the line; the others go on their own lines before
    it (after it they would read as comments on the next statement)."""
    trailing = [c for c in comments if c.loc.line == last_line]
    lines.extend(pad + c.text for c in comments if c.loc.line != last_line)
    lines.append(pad + text + "".join("  " + c.text for c in trailing))


def _emit_statement(lines: list[str], stmt: A.Statement, depth: int, comments: list[A.Comment]):
    pad = INDENT * depth
    if not isinstance(stmt, A.FuncDef):
        _emit_line(lines, _simple_statement(stmt), comments, _end(stmt), pad)
        return
    params = ", ".join(f"{p.type} {p.name}" for p in stmt.params)
    body = [*stmt.body, stmt.ret]
    brace = stmt.brace_line or stmt.loc.line
    first = _start_pos(body[0])
    # Before the first body statement, up to the '{' line: on the header line. On the closing '}' line (when it is
    # not the 'return' line): on that line. Everything else stays with the body statements.
    header = [c for c in comments if (c.loc.line, c.loc.col) < first and c.loc.line <= brace]
    footer = [c for c in comments if _end(stmt.ret) < c.loc.line == _end(stmt)]
    inner = comments[len(header) : len(comments) - len(footer)]
    _emit_line(lines, f"def {stmt.name}({params}) {{", header, brace, pad)
    _emit_sequence(lines, body, inner, depth + 1, brace)
    _emit_line(lines, "}", footer, _end(stmt), pad)


def selector_name(name: str) -> str:
    """A task or region name as written in a selector: quoted unless it is an identifier (`"Initialize Nodes"`)."""
    return name if re.fullmatch(r"[_A-Za-z][_A-Za-z0-9]*", name) and name not in A.RESERVED else f'"{name}"'


def _tasks(sel: A.TaskSel) -> str:
    if sel.kind is not None:
        return sel.kind
    return "*" if sel.names is None else ",".join(selector_name(i.name) for i in sel.names)


def _region(sel: A.RegionSel) -> str:
    if sel.name is not None:
        return selector_name(sel.name)
    if sel.index is not None:
        return str(sel.index)
    return "*"


def _third(x: A.Kind | A.Star) -> str:
    return "*" if isinstance(x, A.Star) else x.name


def _constraint(c: A.Constraint) -> str:
    return f"Align{c.op}{c.value}" if c.name == "Align" else c.name


def _simple_statement(s) -> str:
    kinds = lambda ks: ",".join(k.name for k in ks)  # noqa: E731
    match s:
        case A.TaskStmt():
            return f"Task {_tasks(s.tasks)} {kinds(s.kinds)};"
        case A.RegionStmt():
            return f"Region {_tasks(s.tasks)} {_region(s.region)} {_third(s.proc)} {kinds(s.memories)};"
        case A.LayoutStmt():
            cons = " ".join(_constraint(c) for c in s.constraints)
            return f"Layout {_tasks(s.tasks)} {_region(s.region)} {_third(s.target)} {cons};"
        case A.InstanceLimitStmt():
            proc = "" if s.proc is None else f" {_third(s.proc)}"
            return f"InstanceLimit {_tasks(s.tasks)}{proc} {s.count};"
        case A.CollectMemoryStmt():
            return f"CollectMemory {_tasks(s.tasks)} {_region(s.region)};"
        case A.IndexTaskMapStmt():
            machine = "" if s.machine is None else f" {s.machine.name}"
            return f"IndexTaskMap {_tasks(s.tasks)}{machine} {s.func.name};"
        case A.SingleTaskMapStmt():
            return f"SingleTaskMap {_tasks(s.tasks)} {s.func.name};"
        case A.ControlReplicateStmt():
            return f"ControlReplicate {_tasks(s.tasks)};"
        case A.TunableStmt():
            value = ("True" if s.value else "False") if s.type == "bool" else str(s.value)
            typ = f" {s.type}" if s.type not in ("int64", "bool") else ""
            return f"Tunable {s.id} = {value}{typ};"
        case A.Assign():
            return f"{s.name} = {_expr(s.value, 0)};"
        case A.Print():
            return "print(" + ", ".join([f'"{s.fmt}"'] + [_expr(a, 0) for a in s.args]) + ");"
        case A.Return():
            return f"return {_expr(s.value, 0)};"
    raise TypeError(f"not a statement: {s!r}")


# ---------------------------------------------------------------------------------------------------- expressions


def _level(e) -> int:
    match e:
        case A.Ternary():
            return _TERNARY
        case A.Binary():
            return _BINARY_LEVEL[e.op]
        case A.Unary():
            return _UNARY
        case A.IntLit() if e.value < 0:
            return _UNARY
        case A.Member() | A.MethodCall() | A.Index() | A.Slice():
            return _POSTFIX
    return _PRIMARY


def _expr(e, min_level: int) -> str:
    text = _expr_text(e)
    return f"({text})" if _level(e) < min_level else text


def _items(items) -> str:
    return ", ".join(_item(i) for i in items)


def _item(i) -> str:
    if isinstance(i, A.Wildcard):
        return "*"
    if isinstance(i, A.Unpack):
        return "*" + _expr(i.value, _UNARY)
    return _expr(i, 0)


def _expr_text(e) -> str:
    match e:
        case A.IntLit():
            return str(e.value)
        case A.BoolLit():
            return "True" if e.value else "False"
        case A.KindLit():
            return e.kind
        case A.Name():
            return e.name
        case A.MachineLit():
            return f"Machine({e.kind})"
        case A.Call():
            return f"{e.func}({', '.join(_expr(a, 0) for a in e.args)})"
        case A.TupleLit():
            inner = _items(e.items)
            return f"({inner},)" if len(e.items) == 1 else f"({inner})"
        case A.Comprehension():
            return f"tuple({_expr(e.expr, 0)} for {e.var} in {_expr(e.iterable, 0)})"
        case A.Unary():
            # `-(-3)` rather than `--3`: same tree, easier to read.
            nested = isinstance(e.operand, A.Unary) or (isinstance(e.operand, A.IntLit) and e.operand.value < 0)
            return e.op + (f"({_expr(e.operand, 0)})" if nested else _expr(e.operand, _UNARY))
        case A.Binary():
            level = _BINARY_LEVEL[e.op]
            return f"{_expr(e.left, level)} {e.op} {_expr(e.right, level + 1)}"
        case A.Ternary():
            return f"{_expr(e.cond, _TERNARY + 1)} ? {_expr(e.then, 0)} : {_expr(e.orelse, 0)}"
        case A.Member():
            return f"{_expr(e.obj, _POSTFIX)}.{e.name}"
        case A.MethodCall():
            return f"{_expr(e.obj, _POSTFIX)}.{e.name}({', '.join(_expr(a, 0) for a in e.args)})"
        case A.Index():
            return f"{_expr(e.obj, _POSTFIX)}[{_items(e.items)}]"
        case A.Slice():
            lo = "" if e.lo is None else _expr(e.lo, 0)
            hi = "" if e.hi is None else _expr(e.hi, 0)
            return f"{_expr(e.obj, _POSTFIX)}[{lo}:{hi}]"
    raise TypeError(f"not an expression: {e!r}")
