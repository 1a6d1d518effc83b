"""Canonical text of a `Program`: `parse(format_program(p)) == p` for every program.

Layout rules: one statement per line; lists in selectors as `a,b` (no spaces); functions as `def f(T x) {`, one body
statement per line indented by four spaces, `}` alone; binary operators surrounded by spaces; parentheses where the
author wrote them (as many pairs as written: fmt changes how an expression reads only in its spaces) and where
precedence needs them (`A.without_parens` drops the written ones). The author's layout (from `Program.source`) is kept
where it does not contradict these: a function written on one line stays on one line, a statement (or function header)
written over several lines keeps its line breaks and continuation indentation when its tokens are the canonical ones,
but for written parentheses dropped (otherwise it is joined into one line), and a trailing comment keeps its column
where the code leaves two spaces before it, comments of consecutive lines aligned in one column staying aligned (of a
statement split off a line that held another before it, the column is that line's: the comment goes two spaces after the
code). Comments are kept: a comment on its own line stays before the statement that follows it, a comment at the end of
a line stays at the end of that line (a comment on an earlier line of a statement joined into one line goes on its own
line just before it), and one blank line is kept where the source had at least one. Every comment keeps its place: after
the same statements and before the same statements, and at the end of the same line or on its own line.
"""

from __future__ import annotations

import dataclasses
import re

from mapperopt.dsl import ast as A

INDENT = "    "

# Precedence levels (dsl-reference.md §8.1), loosest first; an operand is parenthesised when its level is below the
# slot's.
_TERNARY, _POSTFIX, _PRIMARY = 1, 9, 10
_UNARY = 8
_BINARY_LEVEL = {op: i + 2 for i, ops in enumerate(A.BINARY_LEVELS) for op in ops}


def format_program(program: A.Program) -> str:
    """The canonical text of `program`, ending with a newline (empty string for an empty program). The author's layout
    is kept from `program.source` (none for a built program): line breaks, one-line functions, comment columns."""
    rows: list[_Row] = []
    comments = sorted(program.comments, key=lambda c: (c.loc.line, c.loc.col))
    src = program.source.split("\n") if program.source else None
    _emit_sequence(rows, list(program.statements), comments, 0, None, src)
    return "".join(line + "\n" for line in _render(rows, src is not None))


def format_statement(stmt: A.Statement) -> str:
    """One statement in canonical form, without comments (a function spans several lines)."""
    rows: list[_Row] = []
    _emit_statement(rows, stmt, 0, [], None)
    return "\n".join(code for code, _ in rows)


def format_expr(expr: A.Expr) -> str:
    """One expression in canonical form."""
    return _expr(expr, 0)


# ---------------------------------------------------------------------------------------------------- statements

# An output line: its code (indented; a comment on a line of its own is code) and the comment that ends it, if any.
_Row = tuple[str, A.Comment | None]

# A token of one source line; a comment ends the line's code (strings cannot span lines, so a line scans alone).
_TOKEN = re.compile(r'"[^"\n]*"|(?:#|//)|[A-Za-z0-9_]+|\S')


def _render(rows: list[_Row], keep_columns: bool) -> list[str]:
    """The lines of `rows`. With `keep_columns`, a trailing comment stays at its source column when the code leaves
    two spaces before it, and comments of consecutive lines written in one column stay in one column (moved right
    together where a line's code reaches it); otherwise, and without `keep_columns`, two spaces after the code."""
    out: list[str] = []
    i = 0
    while i < len(rows):
        code, comment = rows[i]
        if comment is None:
            out.append(code)
            i += 1
            continue
        j = i + 1
        while keep_columns and j < len(rows) and rows[j][1] is not None and rows[j][1].loc.col == comment.loc.col:
            j += 1
        col = max((comment.loc.col - 1) if keep_columns else 0, *(len(c) + 2 for c, _ in rows[i:j]))
        out.extend(c.ljust(col) + t.text for c, t in rows[i:j])
        i = j
    return out


def _start(node) -> int:
    return node.loc.line


def _start_pos(node) -> tuple[int, int]:
    return node.loc.line, node.loc.col


def _end(node) -> int:
    return node.loc.end_line or node.loc.line


def _emit_sequence(rows: list[_Row], items: list, comments: list[A.Comment], depth: int, last_line: int | None,
                   src: list[str] | None):
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
    blank: _Row = ("", None)
    prev_end = last_line
    for item, lead, within in zip(items, leading, inside):
        start, end = _start(item), _end(item)
        first = lead[0].loc.line if lead else start
        if prev_end and first and first > prev_end + 1 and rows and rows[-1][0].strip():
            rows.append(blank)
        for i, c in enumerate(lead):
            if i and c.loc.line > lead[i - 1].loc.line + 1:
                rows.append(blank)
            rows.append((pad + c.text, None))
        if lead and start > lead[-1].loc.line + 1:
            rows.append(blank)
        n = len(rows)
        _emit_statement(rows, item, depth, within, src)
        if prev_end and start == prev_end:
            # split off a line it shared with the statement (or function header) before it: the column of a comment
            # on that line is the shared line's, so it goes two spaces after the code (`_render`, column 0)
            rows[n:] = [(code, dataclasses.replace(c, loc=dataclasses.replace(c.loc, col=0)))
                        if c is not None and c.loc.line == start else (code, c) for code, c in rows[n:]]
        prev_end = end or prev_end
    if tail and prev_end and tail[0].loc.line > prev_end + 1 and rows:
        rows.append(blank)
    for i, c in enumerate(tail):
        if i and c.loc.line > tail[i - 1].loc.line + 1:
            rows.append(blank)
        rows.append((pad + c.text, None))


def _emit_line(rows: list[_Row], text: str, comments: list[A.Comment], last_line: int, pad: str):
    """`text`, one line, from source lines up to `last_line` holding `comments`: the comment on `last_line` (at most
    one: a comment runs to the end of its line) stays at the end of the line; the others go on their own lines before
    it (after it they would read as comments on the next statement)."""
    rows.extend((pad + c.text, None) for c in comments if c.loc.line != last_line)
    rows.append((pad + text, next((c for c in comments if c.loc.line == last_line), None)))


def _source_lines(text: str, node, src: list[str] | None) -> list[tuple[int, int, str]] | None:
    """How the author broke `text` (the canonical one-line text of what starts at `node`) over source lines: for each
    line holding its tokens, (line, indentation relative to the first line, the part of `text` on it). None when it
    is on one line, has other tokens than `text` (the formatter changed them; but for parentheses it dropped, which
    are skipped), or breaks before a '{' (the brace joins its header)."""
    line, col = node.loc.line, node.loc.col
    if src is None or not line or len(src) < line:
        return None
    want = list(_TOKEN.finditer(text))
    out = []
    i, n = 0, line
    while i < len(want):
        if n > len(src):
            return None
        source = src[n - 1].rstrip("\r")
        first = i
        for tok in _TOKEN.finditer(source, col - 1 if n == line else 0):
            if tok.group() in ("#", "//") or i == len(want):
                break
            if tok.group() != want[i].group():
                if tok.group() in "()":  # parentheses the text drops (`without_parens`): the rest still lines up
                    continue
                return None
            i += 1
        if i > first:
            # Continuation lines are indented as written relative to the first; one written further left by INDENT.
            indent = 0 if n == line else len(source) - len(source.lstrip()) - (col - 1)
            indent = indent if n == line or indent > 0 else len(INDENT)
            out.append((n, indent, text[want[first].start() : want[i - 1].end()]))
        n += 1
    if len(out) < 2 or any(part.startswith("{") for _, _, part in out[1:]):
        return None
    return out


def _emit_span(rows: list[_Row], text: str, node, comments: list[A.Comment], last_line: int, pad: str,
               src: list[str] | None):
    """`text` (canonical, one line) as the author broke it over lines, with each comment at the end of the line it
    ends (a comment on a line of its own in between stays so, indented as written); on one line (`_emit_line`) where
    the author's lines cannot be kept."""
    lines = _source_lines(text, node, src)
    if lines is None or lines[-1][0] != last_line:
        _emit_line(rows, text, comments, last_line, pad)
        return
    moved: list[A.Comment] = []
    joined = lines[-1][2] == ";"
    if joined:
        # A last line that held only the `;` and parentheses dropped (`e = ((a\n));`): the `;` joins the line before,
        # rather than standing alone. A comment at the end of that line or on a line of its own before the `;` goes
        # on its own line just before the joined line (at the end of it, it would end the statement's last line,
        # another place); one on the `;` line ends the joined line, the statement's last line as before.
        (n, indent, part), semi = lines[-2], last_line
        lines = [*lines[:-2], (n, indent, part + ";")]
        moved = [c for c in comments if n <= c.loc.line < semi]
        if len(lines) < 2:
            _emit_line(rows, text, comments, semi, pad)
            return
        comments = [c for c in comments if not n <= c.loc.line < semi]
    ending = {c.loc.line: c for c in comments}
    if joined:  # the `;` line's comment, if any, ends the joined line
        ending[lines[-1][0]] = ending.pop(last_line, None)
        last_line = lines[-1][0]
    parts = {n: (indent, part) for n, indent, part in lines}
    for n in range(lines[0][0], last_line + 1):
        if n in parts:
            indent, part = parts[n]
            if n == last_line:
                rows.extend((pad + " " * indent + c.text, None) for c in moved)
            rows.append((pad + " " * indent + part, ending.get(n)))
        elif n in ending:
            indent = ending[n].loc.col - node.loc.col
            rows.append((pad + " " * (indent if indent > 0 else len(INDENT)) + ending[n].text, None))


def _emit_statement(rows: list[_Row], stmt: A.Statement, depth: int, comments: list[A.Comment],
                    src: list[str] | None):
    pad = INDENT * depth
    if not isinstance(stmt, A.FuncDef):
        _emit_span(rows, _simple_statement(stmt), stmt, comments, _end(stmt), pad, src)
        return
    params = ", ".join(f"{p.type} {p.name}" for p in stmt.params)
    header = f"def {stmt.name}({params}) {{"
    body = [*stmt.body, stmt.ret]
    if src is not None and stmt.loc.line and _end(stmt) == stmt.loc.line:  # written on one line: kept so
        _emit_line(rows, " ".join([header, *map(_simple_statement, body), "}"]), comments, stmt.loc.line, pad)
        return
    brace = stmt.brace_line or stmt.loc.line
    first = _start_pos(body[0])
    # Before the first body statement, up to the '{' line: with the header. On the closing '}' line (when it is not
    # the 'return' line): on that line. Everything else stays with the body statements.
    head = [c for c in comments if (c.loc.line, c.loc.col) < first and c.loc.line <= brace]
    footer = [c for c in comments if _end(stmt.ret) < c.loc.line == _end(stmt)]
    inner = comments[len(head) : len(comments) - len(footer)]
    _emit_span(rows, header, stmt, head, brace, pad, src)
    _emit_sequence(rows, body, inner, depth + 1, brace, src)
    _emit_line(rows, "}", footer, _end(stmt), pad)


def selector_name(name: str) -> str:
    """A task or region name as written in a selector: quoted unless it is an identifier (`"Initialize Nodes"`)."""
    return name if re.fullmatch(r"[_A-Za-z][_A-Za-z0-9]*", name) and name not in A.RESERVED else f'"{name}"'


def meant(name: str) -> str:
    """The "did you mean" hint for a task or region name: `'stencil'` for an identifier, the DSL's string
    (`"fill particles"`) for another name, so that what the hint shows can be pasted."""
    written = selector_name(name)
    return "did you mean " + (written if written != name else f"'{name}'") + "?"


def tunable_value(value: int, type_: str) -> str:
    """A Tunable statement's value as the DSL writes it: True or False for a bool, else the integer."""
    return ("True" if value else "False") if type_ == "bool" else str(value)


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
            typ = f" {s.type}" if s.type not in ("int64", "bool") else ""
            return f"Tunable {s.id} = {tunable_value(s.value, s.type)}{typ};"
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
    # The pairs the author wrote, as many as written; else one where precedence needs it.
    pairs = e.parens or int(_level(e) < min_level)
    return "(" * pairs + _expr_text(e) + ")" * pairs


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
            nested = not e.operand.parens and (
                isinstance(e.operand, A.Unary) or (isinstance(e.operand, A.IntLit) and e.operand.value < 0))
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
