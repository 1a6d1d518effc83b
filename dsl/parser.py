"""Parser of the mapping DSL: text -> `Program` (dsl/ast.py), or `DslSyntaxError` with a §11.2 code.

The grammar (grammar.lark) is LALR(1) and uses Lark's basic lexer, in which every keyword and operator is its own
string terminal; a reserved word is therefore never an IDENT token, and a reserved word where a name is expected is a
parse error that this module reports as E109.
"""

from __future__ import annotations

import difflib
import functools
from importlib import resources

import lark
from lark import Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError

from mapperopt.dsl import ast as A
from mapperopt.dsl.errors import Diagnostic, DslSyntaxError

INT_MAX = 2**63 - 1


@functools.cache
def _lark() -> lark.Lark:
    grammar = resources.files("mapperopt.dsl").joinpath("grammar.lark").read_text()
    return lark.Lark(grammar, parser="lalr", lexer="basic", propagate_positions=True, maybe_placeholders=True)


def parse(text: str, filename: str = "<string>") -> A.Program:
    """Parse a policy.

    Args:
        text: the DSL source.
        filename: the name used in locations and messages.
    Returns:
        the `Program`; every node carries its `Loc` in `filename`, and `Program.comments` holds the comments.
    Raises:
        DslSyntaxError: the first syntax error (E100-E109), with location, offending token and expected tokens.
    """
    try:
        tree = _lark().parse(text)
    except UnexpectedInput as exc:
        raise _translate(exc, text, filename) from None
    try:
        program = _ToAst(filename).transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, _AstError):
            raise exc.orig_exc.to_syntax_error(text) from None
        raise
    comments = _comments(text, filename)
    return A.Program(program.statements, comments=tuple(comments), source=text, loc=program.loc)


def _comments(text: str, filename: str) -> list[A.Comment]:
    """The comments of `text`, found by re-lexing with comments kept (only the slow path of formatting needs them)."""
    if "#" not in text and "//" not in text:
        return []
    out = []
    for tok in _lark().lex(text, dont_ignore=True):
        if tok.type == "COMMENT":
            out.append(A.Comment(tok.value.rstrip("\r"), loc=A.Loc(filename, tok.line, tok.column)))
    return out


# ---------------------------------------------------------------------------------------------------- tree -> AST


class _AstError(Exception):
    """A syntax error found while building the AST (E100 for huge integers, E106); becomes a `DslSyntaxError`."""

    def __init__(self, code: str, message: str, loc: A.Loc, token: str | None, hints: tuple[str, ...] = ()):
        super().__init__(message)
        self.diagnostic = Diagnostic(code, "error", message, loc, hints)
        self.token = token

    def to_syntax_error(self, text: str) -> DslSyntaxError:
        return DslSyntaxError(self.diagnostic, text, self.token)


@v_args(meta=True)
class _ToAst(Transformer):
    def __init__(self, filename: str):
        super().__init__()
        self.file = filename

    def _loc(self, meta) -> A.Loc:
        if getattr(meta, "empty", True):
            return A.Loc(self.file, 0, 0)
        return A.Loc(self.file, meta.line, meta.column, meta.end_line, meta.end_column)

    def _tloc(self, tok: Token) -> A.Loc:
        return A.Loc(self.file, tok.line, tok.column, tok.end_line, tok.end_column)

    def _int(self, tok: Token) -> int:
        value = int(tok)
        if value > INT_MAX:
            raise _AstError(
                "E100", f"integer literal '{tok}' is out of range; expected a value below 2^63", self._tloc(tok), str(tok)
            )
        return value

    # ---- program and selectors
    def start(self, meta, children):
        return A.Program(tuple(c for c in children if c is not None), loc=self._loc(meta))

    def empty_stmt(self, meta, children):
        return None

    def task_sel(self, meta, children):
        if children[0].type == "STAR":
            return A.TaskSel(None, loc=self._loc(meta))
        return A.TaskSel(tuple(A.Ident(str(t), loc=self._tloc(t)) for t in children), loc=self._loc(meta))

    def region_sel(self, meta, children):
        (tok,) = children
        loc = self._loc(meta)
        if tok.type == "STAR":
            return A.RegionSel(loc=loc)
        if tok.type == "INT":
            return A.RegionSel(index=self._int(tok), loc=loc)
        return A.RegionSel(name=str(tok), loc=loc)

    def _kind(self, meta, children):
        (tok,) = children
        return A.Kind(str(tok), loc=self._tloc(tok))

    proc_kind = mem_kind = _kind

    def _third(self, meta, children):
        (x,) = children
        return A.Star(loc=self._tloc(x)) if isinstance(x, Token) else x

    third_proc = third_any = _third

    def constraint(self, meta, children):
        (tok,) = children
        return A.Constraint(str(tok), loc=self._tloc(tok))

    def align(self, meta, children):
        _, op, value = children
        return A.Constraint("Align", str(op), self._int(value), loc=self._loc(meta))

    # ---- mapping statements
    def task_stmt(self, meta, children):
        return A.TaskStmt(children[0], tuple(children[1:]), loc=self._loc(meta))

    def region_stmt(self, meta, children):
        tasks, region, proc, *mems = children
        return A.RegionStmt(tasks, region, proc, tuple(mems), loc=self._loc(meta))

    def layout_stmt(self, meta, children):
        tasks, region, target, *cons = children
        return A.LayoutStmt(tasks, region, target, tuple(cons), loc=self._loc(meta))

    def limit_stmt(self, meta, children):
        proc = children[1] if len(children) == 3 else None
        return A.InstanceLimitStmt(children[0], proc, self._int(children[-1]), loc=self._loc(meta))

    def collect_stmt(self, meta, children):
        return A.CollectMemoryStmt(children[0], children[1], loc=self._loc(meta))

    def index_map_stmt(self, meta, children):
        tasks, *names = children
        idents = [A.Ident(str(t), loc=self._tloc(t)) for t in names]
        machine = idents[0] if len(idents) == 2 else None
        return A.IndexTaskMapStmt(tasks, idents[-1], machine, loc=self._loc(meta))

    def single_map_stmt(self, meta, children):
        tasks, name = children
        return A.SingleTaskMapStmt(tasks, A.Ident(str(name), loc=self._tloc(name)), loc=self._loc(meta))

    def replicate_stmt(self, meta, children):
        return A.ControlReplicateStmt(children[0], loc=self._loc(meta))

    # ---- definitions
    def func_def(self, meta, children):
        name, *rest = children
        params = tuple(c for c in rest if isinstance(c, A.Param))
        body = [c for c in rest if isinstance(c, (A.Assign, A.Print, A.Return))]
        loc = self._loc(meta)
        returns = [i for i, s in enumerate(body) if isinstance(s, A.Return)]
        if not returns:
            end = A.Loc(self.file, meta.end_line, meta.end_column - 1)
            raise _AstError(
                "E106",
                f"'return' must be the last statement of a function body; '{name}' has no 'return'",
                end,
                "}",
                (f"end the body of '{name}' with 'return <expr>;'",),
            )
        if returns[0] != len(body) - 1:
            after = body[returns[0] + 1]
            raise _AstError(
                "E106",
                f"'return' must be the last statement of a function body; this statement follows the 'return' of '{name}'",
                after.loc,
                None,
                ("move the 'return' to the end of the body",),
            )
        return A.FuncDef(str(name), params, tuple(body[:-1]), body[-1], loc=loc)

    def param(self, meta, children):
        ptype, name = children
        return A.Param(ptype, str(name), loc=self._loc(meta))

    def param_type(self, meta, children):
        return str(children[0])

    def return_stmt(self, meta, children):
        return A.Return(children[0], loc=self._loc(meta))

    def assign_stmt(self, meta, children):
        name, value = children
        return A.Assign(str(name), value, loc=self._loc(meta))

    def print_stmt(self, meta, children):
        fmt, *args = children
        return A.Print(str(fmt)[1:-1], tuple(args), loc=self._loc(meta))

    # ---- expressions
    def ternary(self, meta, children):
        cond, then, orelse = children
        return A.Ternary(cond, then, orelse, loc=self._loc(meta))

    def binary(self, meta, children):
        left, op, right = children
        return A.Binary(str(op), left, right, loc=self._tloc(op))

    def unary(self, meta, children):
        op, operand = children
        return A.Unary(str(op), operand, loc=self._tloc(op))

    def member(self, meta, children):
        obj, name = children
        return A.Member(obj, str(name), loc=self._loc(meta))

    def method_call(self, meta, children):
        obj, name, args = children
        return A.MethodCall(obj, str(name), args or (), loc=self._loc(meta))

    def slice(self, meta, children):
        obj, lo, hi = children
        return A.Slice(obj, lo, hi, loc=self._loc(meta))

    def index(self, meta, children):
        return A.Index(children[0], tuple(children[1:]), loc=self._loc(meta))

    def wildcard(self, meta, children):
        return A.Wildcard(loc=self._loc(meta))

    def unpack(self, meta, children):
        return A.Unpack(children[1], loc=self._loc(meta))

    def int_lit(self, meta, children):
        return A.IntLit(self._int(children[0]), loc=self._loc(meta))

    def true_lit(self, meta, children):
        return A.BoolLit(True, loc=self._loc(meta))

    def false_lit(self, meta, children):
        return A.BoolLit(False, loc=self._loc(meta))

    def kind_lit(self, meta, children):
        return A.KindLit(children[0].name, loc=self._loc(meta))

    def name(self, meta, children):
        return A.Name(str(children[0]), loc=self._loc(meta))

    def call(self, meta, children):
        name, args = children
        return A.Call(str(name), args or (), loc=self._loc(meta))

    def machine(self, meta, children):
        return A.MachineLit(children[0].name, loc=self._loc(meta))

    def comprehension(self, meta, children):
        expr, var, iterable = children
        return A.Comprehension(expr, str(var), iterable, loc=self._loc(meta))

    def tuple_lit(self, meta, children):
        return A.TupleLit(tuple(c for c in children if c is not None), loc=self._loc(meta))

    def arg_list(self, meta, children):
        return tuple(children)


# ---------------------------------------------------------------------------------------------------- syntax errors

_NAMED = {"IDENT": "a name", "INT": "an integer", "STRING": "a string", "$END": "end of input"}
_STATEMENT_WORDS = {
    "Task", "Region", "Layout", "InstanceLimit", "CollectMemory", "IndexTaskMap", "SingleTaskMap", "ControlReplicate",
    "def", "print",
}
_EXPR_START = {"INT", "IDENT", "'True'", "'False'", "'Machine'", "'tuple'", "'('", "'-'", "'!'"}
_BINARY = {f"'{op}'" for level in A.BINARY_LEVELS for op in level}
_GROUPS = (  # (members, phrase), applied in order when every member is expected
    ({f"'{w}'" for w in _STATEMENT_WORDS} | {"IDENT", "';'"}, "a statement"),
    ({f"'{k}'" for k in A.PROC_KINDS + A.MEM_KINDS} | _EXPR_START, "an expression"),
    (_BINARY, "an operator"),
    ({f"'{k}'" for k in A.PROC_KINDS}, "a processor kind"),
    ({f"'{k}'" for k in A.MEM_KINDS}, "a memory kind"),
    ({f"'{c}'" for c in A.CONSTRAINT_WORDS}, "a layout constraint"),
    ({f"'{t}'" for t in A.PARAM_TYPES}, "a parameter type"),
)


@functools.cache
def _terminal_text() -> dict[str, str]:
    """Terminal name -> display form (`'x'` for keywords and punctuation, IDENT etc. by name)."""
    out = {}
    for term in _lark().terminals:
        if term.pattern.type == "str":
            out[term.name] = f"'{term.pattern.value}'"
        else:
            out[term.name] = term.name
    return out


def _texts(names) -> set[str]:
    table = _terminal_text()
    return {table.get(n, n) for n in names}


def describe_expected(names) -> str:
    """Human list of expected terminals, grouped (e.g. 'a processor kind') and cut to 6 entries."""
    items = _texts(names)
    phrases = []
    for members, phrase in _GROUPS:
        if members <= items:
            items -= members
            phrases.append(phrase)
    quoted = sorted(i for i in items if i.startswith("'"))
    rest = sorted(_NAMED.get(i, i.lower()) for i in items if not i.startswith("'"))
    listed = quoted + phrases + rest
    if len(listed) > 6:
        return ", ".join(listed[:6]) + ", ..."
    if len(listed) <= 1:
        return "".join(listed) or "nothing"
    return ", ".join(listed[:-1]) + " or " + listed[-1]


def _expected_list(names) -> tuple[str, ...]:
    return tuple(sorted(_texts(names)))


def _previous_tokens(text: str, pos: int | None) -> list[Token]:
    """The tokens of `text` that end at or before `pos` (all tokens when `pos` is None)."""
    out = []
    try:
        for tok in _lark().lex(text):
            if pos is not None and tok.start_pos >= pos:
                break
            out.append(tok)
    except UnexpectedCharacters:
        pass
    return out


def _line_has_comment_after(text: str, tok: Token) -> bool:
    line = text.splitlines()[tok.end_line - 1]
    return "//" in line[tok.end_column - 1 :]


def _join_tokens(tokens: list[Token]) -> str:
    """Source-like text of a token sequence: a space after commas and between two words."""
    out = ""
    for tok in tokens:
        word = tok.value[:1].isalnum() or tok.value[:1] == "_"
        if out and (out.endswith(",") or (word and (out[-1].isalnum() or out[-1] == "_"))):
            out += " "
        out += tok.value
    return out


def _kind_message(word: str, accepts: set[str]) -> tuple[str, str | None] | None:
    """E107 message and hint for a name `word` where only kinds (and `*`) are acceptable; None otherwise."""
    texts = _texts(accepts)
    procs = {f"'{k}'" for k in A.PROC_KINDS} & texts
    mems = {f"'{k}'" for k in A.MEM_KINDS} & texts
    if not (procs or mems) or texts - procs - mems - {"'*'"}:
        return None
    candidates = (A.PROC_KINDS if procs else ()) + (A.MEM_KINDS if mems else ())
    close = difflib.get_close_matches(word, candidates, n=1, cutoff=0.5)
    hint = f"did you mean '{close[0]}'?" if close else None
    if procs and mems:
        msg = (
            f"unknown kind '{word}'; expected a processor kind ({', '.join(A.PROC_KINDS)}), "
            f"a memory kind ({', '.join(A.MEM_KINDS)}) or '*'"
        )
    elif procs:
        msg = f"unknown processor kind '{word}'; expected one of {', '.join(A.PROC_KINDS)}"
    else:
        msg = f"unknown memory kind '{word}'; expected one of {', '.join(A.MEM_KINDS)}"
    return msg, hint


def _translate(exc: UnexpectedInput, text: str, filename: str) -> DslSyntaxError:
    """Turn Lark's exception into the §11.2 diagnostic."""

    def error(code, message, line, col, token, hints=(), expected=()):
        diag = Diagnostic(code, "error", message, A.Loc(filename, line, col), tuple(h for h in hints if h))
        return DslSyntaxError(diag, text, token, expected)

    if isinstance(exc, UnexpectedCharacters):
        char = text[exc.pos_in_stream]
        if char == '"':
            return error("E103", "unterminated string literal", exc.line, exc.column, char,
                         ("a string ends with '\"' on the same line",))
        hints = {"&": "logical and is '&&'", "|": "logical or is '||'", "'": "strings use double quotes"}
        return error("E104", f"unrecognized character '{char}'", exc.line, exc.column, char, (hints.get(char),))

    accepts = set(exc.accepts or exc.expected)
    token = exc.token
    at_eof = token.type == "$END"
    tokens = _previous_tokens(text, None if at_eof else token.start_pos)
    prev = tokens[-1] if tokens else None
    expected = _expected_list(accepts)
    semicolon_ok = "SEMICOLON" in accepts

    # E102: a statement ends without ';' (at a line break, or at the end of input after a '//' comment).
    if semicolon_ok and prev is not None:
        comment_after = _line_has_comment_after(text, prev)
        if (not at_eof and token.line > prev.end_line) or (at_eof and comment_after):
            hint = "'//' starts a comment; integer division is '/'" if comment_after else None
            return error("E102", f"missing ';' after '{prev}'", prev.end_line, prev.end_column, str(prev),
                         (hint,), expected)

    if at_eof:
        line, col = (prev.end_line, prev.end_column) if prev is not None else (1, 1)
        return error("E105", f"unexpected end of input; expected {describe_expected(accepts)}", line, col, None,
                     (), expected)

    tok_text = str(token)
    line, col = token.line, token.column

    # E101: Python-style ':' after the parameter list of a def.
    if token.type == "COLON" and _texts(accepts) == {"'{'"}:
        def_at = max((i for i, t in enumerate(tokens) if t.type == "DEF"), default=None)
        fname = str(tokens[def_at + 1]) if def_at is not None and def_at + 1 < len(tokens) else "f"
        params = _join_tokens(tokens[def_at + 2 :]) if def_at is not None else "(Task task)"
        return error(
            "E101",
            f"unexpected ':' after the parameter list of '{fname}'; expected '{{' "
            "(braces are required: a function body is enclosed in '{' ... '}')",
            line, col, tok_text,
            (f"write def {fname}{params} {{ ...; return <expr>; }}",),
            expected,
        )

    # E109: a reserved word where a name is expected.
    if "IDENT" in accepts and tok_text in A.RESERVED:
        hint = None
        if prev is not None and prev.type in ("INDEXTASKMAP", "SINGLETASKMAP") and tok_text in A.PROC_KINDS:
            hint = "list the task names or use *"
        return error("E109", f"reserved word '{tok_text}' cannot be used as a name", line, col, tok_text,
                     (hint,), expected)

    # E107: a name where a kind is expected.
    if token.type == "IDENT":
        kind = _kind_message(tok_text, accepts)
        if kind is not None:
            return error("E107", kind[0], line, col, tok_text, (kind[1],), expected)

    # E108: malformed layout constraint.
    constraint_texts = {f"'{c}'" for c in A.CONSTRAINT_WORDS}
    if _texts(accepts) & constraint_texts or (prev is not None and prev.type == "ALIGN"):
        hint = None
        if prev is not None and prev.type == "ALIGN":
            if token.type == "INT":
                hint = f"write Align=={tok_text}"
            elif token.type == "EQUAL":
                following = _previous_tokens(text, None)
                after = [t for t in following if t.start_pos > token.start_pos]
                value = str(after[0]) if after and after[0].type == "INT" else "N"
                hint = f"write Align=={value}"
        elif token.type == "COMMA":
            hint = "constraints are separated by spaces"
        return error(
            "E108",
            f"malformed layout constraint near '{tok_text}'; expected SOA, AOS, C_order, F_order, Align==N, "
            "No_Align, Exact, Compact",
            line, col, tok_text, (hint,), expected,
        )

    hints = []
    texts = _texts(accepts)
    if token.type == "IDENT" and {f"'{t}'" for t in A.PARAM_TYPES} <= texts:
        hints.append(f"parameters are typed: write 'Task {tok_text}' (types: {', '.join(A.PARAM_TYPES)})")
    if token.type == "RETURN":
        hints.append("'return' is only allowed as the last statement of a function body")
    if token.type == "IDENT" and tok_text in ("if", "else", "while"):
        hints.append("there are no if/while statements; use the ternary operator c ? a : b")
    return error("E100", f"unexpected '{tok_text}'; expected {describe_expected(accepts)}", line, col, tok_text,
                 tuple(hints), expected)
