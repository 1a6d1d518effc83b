"""Parser of the mapping DSL: text -> `Program` (dsl/ast.py), or `DslSyntaxError` with a §11.2 code.

The grammar (grammar.lark) is LALR(1) and uses Lark's basic lexer, in which every keyword and operator is its own
string terminal; a reserved word is therefore never an IDENT token, and a reserved word where a name is expected is a
parse error that this module reports as E109.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import hashlib
import itertools
import re
import threading
import unicodedata
from importlib import resources

import lark
from lark import Token
from lark.exceptions import UnexpectedCharacters, UnexpectedInput

from mapperopt.dsl import ast as A
from mapperopt.dsl.errors import Diagnostic, DslSyntaxError, source_lines
from mapperopt.errors import MapperoptError
from mapperopt.files import NotUtf8, decode_utf8, read_capped

INT_MAX = 2**63 - 1
# Stated limit: an expression (or statement) nests at most this many levels (operators, calls, brackets,
# comprehensions); deeper input is E110. It bounds the recursion of every later stage.
MAX_NESTING = 100
# Stated limit: a DSL file has at most this many bytes, and no more is read (a device such as /dev/zero would take all
# memory). Mappers are tens of lines (the largest the tuners wrote are about 10 kB; a model-written program may have
# 100 000 characters): this is ten times that, while `check` of a 1 MiB file already takes seconds and compiling one
# tens of GB of memory.
MAX_SOURCE_BYTES = 1 << 20


_LOCK = threading.Lock()
_LONE_CR = re.compile(r"\r(?!\n)")


@functools.cache
def _lark() -> lark.Lark:
    """The parser; it builds the AST while parsing (an inline transformer is much faster than a parse tree).

    Lark's tables are cached on disk (in the build cache, keyed by Lark from the grammar and options): building them
    costs about 0.3 s of every command that parses."""
    grammar = resources.files("mapperopt.dsl").joinpath("grammar.lark").read_text(encoding="utf-8")
    options = dict(parser="lalr", lexer="basic", keep_all_tokens=True, maybe_placeholders=True, transformer=_ToAst())
    try:
        from mapperopt.toolchain import cache_dir

        folder = cache_dir() / "lark"
        folder.mkdir(exist_ok=True)
        digest = hashlib.sha256(f"{lark.__version__}\0{grammar}".encode()).hexdigest()[:16]
        return lark.Lark(grammar, cache=str(folder / f"dsl-{digest}.lark"), **options)
    except OSError:  # no writable cache: build the tables in memory
        return lark.Lark(grammar, **options)


def require_utf8_name(filename: str) -> None:
    """Refuses a DSL file name that is not UTF-8 (undecodable bytes, which Python holds as surrogates): messages,
    cache keys and the compiled library cite it as UTF-8.

    Raises:
        MapperoptError: naming it.
    """
    try:
        filename.encode()
    except UnicodeEncodeError:
        raise MapperoptError(f"the file name {filename!r} is not valid UTF-8",
                             hint="rename the file with a UTF-8 name") from None


def read_source(path) -> str:
    """The text of the DSL file `path` (a str or Path), as every command reads one: UTF-8, a leading byte order mark
    kept (`parse` skips it; `fmt` writes none).

    Raises:
        MapperoptError: the file cannot be read, has more than MAX_SOURCE_BYTES (read no further), or its name is not
            UTF-8.
        DslSyntaxError: E112, it is not UTF-8 text: at the line and column (in characters) of its first bad byte,
            the line shown with that byte as U+FFFD.
    """
    require_utf8_name(str(path))
    try:
        data = read_capped(path, MAX_SOURCE_BYTES, "a DSL file",
                           "a mapper needs few statements (`*` and functions select many tasks at once): is this the "
                           "file you meant?")
    except OSError as exc:
        raise MapperoptError(f"cannot read '{path}': {exc.strerror}") from None
    try:
        return decode_utf8(data)
    except NotUtf8 as exc:
        diag = Diagnostic("E112", "error", str(exc), A.Loc(str(path), exc.line, exc.column),
                          ("a DSL file is UTF-8 text: save it as UTF-8 (e.g. iconv -f latin1 -t utf-8)",))
        raise DslSyntaxError(diag, data.decode("utf-8", "replace"), None) from None


def parse(text: str, filename: str = "<string>") -> A.Program:
    """Parse a policy.

    Args:
        text: the DSL source.
        filename: the name used in locations and messages.
    Returns:
        the `Program`; every node carries its `Loc` in `filename`, and `Program.comments` holds the comments.
    Raises:
        DslSyntaxError: the first syntax error (E100-E110), with location, offending token and expected tokens.
    """
    text = text.removeprefix("\ufeff")  # a byte order mark that an editor put first is no part of the program
    # A lone CR ends a line (old-Mac files, as Python's universal newlines read them); one character for one keeps
    # every offset, and a CRLF stays as it is.
    text = _LONE_CR.sub("\n", text)
    parser = _lark()
    with _LOCK:  # the transformer holds the file name of the parse in progress
        _ToAst.file = filename
        try:
            program = parser.parse(text)
        except UnexpectedInput as exc:
            raise _translate(exc, text, filename) from None
        except _AstError as exc:
            raise exc.to_syntax_error(text) from None
        finally:
            _ToAst.depth = {}
            _ToAst.raw = ()
    return A.Program(program.statements, comments=tuple(_comments(text, filename)), source=text, loc=program.loc)


# A string (which may contain '#') or a comment; strings cannot span lines, so this finds exactly the lexer's comments
# of a text that parsed.
_COMMENT_OR_STRING = re.compile(r'"[^"\n]*"|(?:#|//)[^\n]*')


def _comments(text: str, filename: str) -> list[A.Comment]:
    out = []
    line, line_start, scanned = 1, 0, 0
    for m in _COMMENT_OR_STRING.finditer(text):
        if m.group().startswith('"'):
            continue
        line += text.count("\n", scanned, m.start())
        line_start = text.rfind("\n", 0, m.start()) + 1
        scanned = m.start()
        out.append(A.Comment(m.group().rstrip("\r"), loc=A.Loc(filename, line, m.start() - line_start + 1)))
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


# Tokens that only separate or introduce (kept by `keep_all_tokens` for their positions, then dropped).
_PUNCTUATION = frozenset(
    "SEMICOLON COMMA LPAR RPAR LBRACE RBRACE LSQB RSQB DOT COLON QMARK EQUAL REGION LAYOUT INSTANCELIMIT "
    "COLLECTMEMORY INDEXTASKMAP SINGLETASKMAP CONTROLREPLICATE DEF RETURN PRINT MACHINE TUPLE FOR IN".split()
)


# Rules that add no level of nesting (E110): statements, and the argument list of a call (the call is the level).
_FLAT_RULES = frozenset(
    "empty_stmt task_stmt region_stmt layout_stmt limit_stmt collect_stmt index_map_stmt single_map_stmt "
    "replicate_stmt tunable_stmt func_def param param_type return_stmt assign_stmt print_stmt arg_list".split()
)


def _abridged(text: str, keep: int = 24) -> str:
    return text if len(text) <= keep else f"{text[:keep]}... ({len(text)} characters)"


def abridged(name: str, longest: int = 80) -> str:
    """A name as a message shows it: whole up to `longest` characters, else cut short as E100 shows a literal."""
    return name if len(name) <= longest else _abridged(name)


def _unquote(tok: Token) -> str:
    """A selector name: an IDENT as is, a STRING without its quotes."""
    return str(tok)[1:-1] if tok.type == "STRING" else str(tok)


def _start(x) -> A.Loc:
    """Start position of a child: a token's, or a node's first token's (a Binary's `loc` is its operator)."""
    while isinstance(x, A.Binary):
        x = x.left
    return x.loc


def _rule(method):
    """Adapt a rule callback: it receives the rule's location (from its first to its last token) and the children
    without punctuation."""
    flat = method.__name__ in _FLAT_RULES

    def callback(self, raw):
        present = [c for c in raw if c is not None]
        if not present:  # an empty program
            return method(self, A.Loc(self.file, 1, 1), [])
        first, last = present[0], present[-1]
        if isinstance(first, Token):
            loc = A.Loc(self.file, first.line, first.column)
        else:
            loc = _start(first)
        if isinstance(last, Token):
            loc = A.Loc(loc.file, loc.line, loc.col, last.end_line, last.end_column)
        children = [c for c in raw if not (isinstance(c, Token) and c.type in _PUNCTUATION)]
        self.raw = raw
        # A level is an expression node with a sub-expression (an operator, a call, a bracket, a comprehension): a
        # literal or name adds none, and neither do statements nor a call's argument list.
        inner = [self.depth.get(id(c), (0, None)) for c in present if not isinstance(c, Token)]
        below = max((d for d, _ in inner), default=0)
        level = not flat and bool(inner)
        # Each level is marked at its token (an operator of a chain, a bracket, a unary minus, a call's name); each
        # node keeps the last mark, as read, on its deepest nesting, where E110 points: the level read past the
        # limit (the innermost bracket, minus or call, a chain's 101st operator), not the expression's start.
        marks = [last for d, last in inner if d == below and last is not None]
        if level:
            at = next((t for t in present[1:] if isinstance(t, Token)), None) if not isinstance(first, Token) else None
            marks.append(self._tloc(at) if at is not None else loc)
        last = max(marks, key=lambda m: (m.line, m.col), default=None)
        depth = below + level
        if depth > MAX_NESTING:
            # The operators of the chain being read (`a + b + c` nests to the left), while each one is the level
            # that makes the depth (not a bracketed sub-chain, nor a deeper right operand); `base` is the levels
            # of the chain's first operand (`task.ipoint[0]` has 2), which the chain's operators add to.
            chain, x, base = 0, None, depth
            if method.__name__ == "binary":
                chain, x, base = 1, first, depth - 1
                while isinstance(x, A.Binary) and self.depth.get(id(x), (0, None))[0] == base and base > 0:
                    chain, x, base = chain + 1, x.left, base - 1
            if x is not None and self.depth.get(id(x), (0, None))[0] == base and chain > base:
                hint = ("split the chain with intermediate variables (s = a + b + ...; x = s + ...)",)
                if base == 0:
                    raise _AstError("E110", f"more than {MAX_NESTING} operators in one chain: each operator of a "
                                            "chain such as a + b + c counts as one level of nesting, and at most "
                                            f"{MAX_NESTING} levels are allowed", last or loc, None, hint)
                raise _AstError("E110", f"more than {MAX_NESTING - base} operators in one chain: each operator of a "
                                        f"chain such as a + b + c counts as one level, on top of the {base} "
                                        f"level{'s' if base > 1 else ''} of its first operand; at most {MAX_NESTING} "
                                        "levels are allowed", last or loc, None, hint)
            raise _AstError("E110", f"too deeply nested: more than {MAX_NESTING} levels of operators, calls, brackets "
                                    "or comprehensions (each operator of a chain such as a + b + c counts as one)",
                            last or loc, None, ("split the expression with intermediate variables",))
        node = method(self, loc, children)
        if node is not None:
            self.depth[id(node)] = (depth, last)
        return node

    return callback


class _ToAst:
    """Callbacks run by the parser at each reduction; each returns an AST node (or a list/tuple of them)."""

    file = "<string>"
    # id(node) -> (nesting depth, E110's place in it), during one parse (the nodes stay alive meanwhile)
    depth: dict[int, tuple[int, A.Loc | None]] = {}
    raw: tuple = ()

    def _tloc(self, tok: Token) -> A.Loc:
        return A.Loc(self.file, tok.line, tok.column, tok.end_line, tok.end_column)

    def _int(self, tok: Token, limit: int = INT_MAX, expected: str = "a value below 2^63") -> int:
        # Length first: int() of a huge literal is slow, and refused beyond 4300 digits.
        value = limit + 1 if len(tok.lstrip("0")) > len(str(limit)) else int(tok)
        if value > limit:
            raise _AstError(
                "E100", f"integer literal '{_abridged(tok)}' is out of range; expected {expected}",
                self._tloc(tok), _abridged(tok))
        return value

    # ---- program and selectors
    def statements(self, children):
        if not children:
            return []
        out, stmt = children
        if stmt is not None:
            out.append(stmt)
        return out

    def start(self, children):
        (stmts,) = children
        first = stmts[0].loc if stmts else A.Loc(self.file, 1, 1)
        return A.Program(tuple(stmts), loc=A.Loc(self.file, first.line, first.col))

    @_rule
    def empty_stmt(self, loc, children):
        return None

    @_rule
    def task_sel(self, loc, children):
        if children[0].type == "STAR":
            return A.TaskSel(None, loc=loc)
        return A.TaskSel(tuple(A.Ident(_unquote(t), loc=self._tloc(t)) for t in children), loc=loc)

    @_rule
    def map_sel(self, loc, children):
        (sel,) = children
        return A.TaskSel(None, sel.name, loc=loc) if isinstance(sel, A.Kind) else sel

    @_rule
    def region_sel(self, loc, children):
        (tok,) = children
        loc = loc
        if tok.type == "STAR":
            return A.RegionSel(loc=loc)
        if tok.type == "INT":
            return A.RegionSel(index=self._int(tok), loc=loc)
        return A.RegionSel(name=_unquote(tok), loc=loc)

    @_rule
    def _kind(self, loc, children):
        (tok,) = children
        return A.Kind(str(tok), loc=self._tloc(tok))

    proc_kind = mem_kind = _kind

    @_rule
    def _third(self, loc, children):
        (x,) = children
        return A.Star(loc=self._tloc(x)) if isinstance(x, Token) else x

    third_proc = third_any = _third

    @_rule
    def constraint(self, loc, children):
        (tok,) = children
        return A.Constraint(str(tok), loc=self._tloc(tok))

    @_rule
    def align(self, loc, children):
        _, op, value = children
        return A.Constraint("Align", str(op), self._int(value), loc=loc, value_loc=self._tloc(value))

    # ---- mapping statements
    @_rule
    def task_stmt(self, loc, children):
        _, tasks, *kinds = children  # the 'Task' keyword is not punctuation: it is also a parameter type
        return A.TaskStmt(tasks, tuple(kinds), loc=loc)

    @_rule
    def region_stmt(self, loc, children):
        tasks, region, proc, *mems = children
        return A.RegionStmt(tasks, region, proc, tuple(mems), loc=loc)

    @_rule
    def layout_stmt(self, loc, children):
        tasks, region, target, *cons = children
        return A.LayoutStmt(tasks, region, target, tuple(cons), loc=loc)

    @_rule
    def limit_stmt(self, loc, children):
        proc = children[1] if len(children) == 3 else None
        return A.InstanceLimitStmt(children[0], proc, self._int(children[-1]), loc=loc,
                                   count_loc=self._tloc(children[-1]))

    @_rule
    def collect_stmt(self, loc, children):
        return A.CollectMemoryStmt(children[0], children[1], loc=loc)

    @_rule
    def index_map_stmt(self, loc, children):
        tasks, *names = children
        idents = [A.Ident(str(t), loc=self._tloc(t)) for t in names]
        machine = idents[0] if len(idents) == 2 else None
        return A.IndexTaskMapStmt(tasks, idents[-1], machine, loc=loc)

    @_rule
    def single_map_stmt(self, loc, children):
        tasks, name = children
        return A.SingleTaskMapStmt(tasks, A.Ident(str(name), loc=self._tloc(name)), loc=loc)

    @_rule
    def replicate_stmt(self, loc, children):
        return A.ControlReplicateStmt(children[0], loc=loc)

    @_rule
    def tunable_stmt(self, loc, children):
        children = [c for c in children if c.type in ("INT", "MINUS", "TRUE", "FALSE", "IDENT", "BOOL_T")]
        ident, *value, typ = children if children[-1].type in ("IDENT", "BOOL_T") else (*children, None)
        boolean = value[-1].type in ("TRUE", "FALSE")
        if typ is not None and boolean != (typ.type == "BOOL_T"):  # no implicit conversions (reference §4)
            raise _AstError("E100", f"unexpected '{typ}': True and False are answered as bool, not {typ}"
                            if boolean else "unexpected 'bool': an integer is answered as an integer type "
                            "(int8 ... uint64); True and False as bool", self._tloc(typ), str(typ))
        if boolean:
            number, default = int(value[-1].type == "TRUE"), "bool"
        else:
            # A Tunable answer spans every type it may have: int64's smallest to uint64's largest.
            number = (-self._int(value[-1], 2**63, "a value of -2^63 or more") if len(value) == 2 else
                      self._int(value[-1], 2**64 - 1, "a value below 2^64"))
            default = "int64"
        value_loc = self._tloc(value[0])
        return A.TunableStmt(self._int(ident), number, str(typ) if typ is not None else default, loc=loc,
                             value_loc=value_loc, type_loc=self._tloc(typ) if typ is not None else value_loc)

    # ---- definitions
    @_rule
    def func_def(self, loc, children):
        name, *rest = children
        params = tuple(c for c in rest if isinstance(c, A.Param))
        body = [c for c in rest if isinstance(c, (A.Assign, A.Print, A.Return))]
        returns = [i for i, s in enumerate(body) if isinstance(s, A.Return)]
        if not returns:
            end = A.Loc(self.file, loc.end_line, loc.end_col - 1)
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
                "'return' must be the last statement of a function body; this statement follows the 'return' of "
                f"'{name}'",
                after.loc,
                None,
                ("move the 'return' to the end of the body",),
            )
        brace = next(t for t in self.raw if isinstance(t, Token) and t.type == "LBRACE")
        return A.FuncDef(str(name), params, tuple(body[:-1]), body[-1], loc=loc, brace_line=brace.line)

    @_rule
    def param(self, loc, children):
        ptype, name = children
        return A.Param(str(ptype), str(name), loc=loc)

    @_rule
    def param_type(self, loc, children):
        return children[0]

    @_rule
    def return_stmt(self, loc, children):
        return A.Return(children[0], loc=loc)

    @_rule
    def assign_stmt(self, loc, children):
        name, value = children
        return A.Assign(str(name), value, loc=loc)

    @_rule
    def print_stmt(self, loc, children):
        fmt, *args = children
        return A.Print(str(fmt)[1:-1], tuple(args), loc=loc)

    # ---- expressions
    @_rule
    def ternary(self, loc, children):
        cond, then, orelse = children
        return A.Ternary(cond, then, orelse, loc=loc)

    @_rule
    def binary(self, loc, children):
        left, op, right = children
        return A.Binary(str(op), left, right, loc=self._tloc(op))

    @_rule
    def unary(self, loc, children):
        op, operand = children
        return A.Unary(str(op), operand, loc=self._tloc(op))

    @_rule
    def member(self, loc, children):
        obj, name = children
        return A.Member(obj, str(name), loc=loc)

    @_rule
    def method_call(self, loc, children):
        obj, name, args = children
        return A.MethodCall(obj, str(name), args or (), loc=loc)

    @_rule
    def slice(self, loc, children):
        obj, lo, hi = children
        return A.Slice(obj, lo, hi, loc=loc)

    @_rule
    def index(self, loc, children):
        return A.Index(children[0], tuple(children[1:]), loc=loc)

    @_rule
    def wildcard(self, loc, children):
        return A.Wildcard(loc=loc)

    @_rule
    def unpack(self, loc, children):
        return A.Unpack(children[1], loc=loc)

    @_rule
    def int_lit(self, loc, children):
        return A.IntLit(self._int(children[0]), loc=loc)

    @_rule
    def true_lit(self, loc, children):
        return A.BoolLit(True, loc=loc)

    @_rule
    def false_lit(self, loc, children):
        return A.BoolLit(False, loc=loc)

    @_rule
    def kind_lit(self, loc, children):
        return A.KindLit(children[0].name, loc=loc)

    @_rule
    def name(self, loc, children):
        return A.Name(str(children[0]), loc=loc)

    @_rule
    def call(self, loc, children):
        name, args = children
        return A.Call(str(name), args or (), loc=loc)

    @_rule
    def machine(self, loc, children):
        return A.MachineLit(children[0].name, loc=loc)

    @_rule
    def comprehension(self, loc, children):
        expr, var, iterable = children
        return A.Comprehension(expr, str(var), iterable, loc=loc)

    @_rule
    def tuple_lit(self, loc, children):
        return A.TupleLit(tuple(c for c in children if c is not None), loc=loc)

    @_rule
    def primary(self, loc, children):  # a parenthesised expression: no node of its own, a pair more on its child
        return dataclasses.replace(children[0], parens=children[0].parens + 1)

    @_rule
    def arg_list(self, loc, children):
        return tuple(children)


# ---------------------------------------------------------------------------------------------------- syntax errors

_NAMED = {"IDENT": "a name", "INT": "an integer", "STRING": "a string", "$END": "end of input"}
_STATEMENT_WORDS = {
    "Task", "Region", "Layout", "InstanceLimit", "CollectMemory", "IndexTaskMap", "SingleTaskMap", "ControlReplicate",
    "Tunable",
    "def", "print",
}
# The tokens that start a mapping statement's first argument: a task selector, a kind selector, a tunable's number.
_ARGUMENT_STARTS = {"IDENT", "STRING", "STAR", "INT", *A.PROC_KINDS}
_BODY_WORDS = ("return", "print")  # the keywords that start a statement of a function body
_KEYWORDS_BY_CASE = {w.lower(): w for w in _STATEMENT_WORDS}  # `task * GPU;` is an assignment to `task` that fails
# Statement names of other mapping systems, with the DSL's statement that does the same.
_OTHER_NAMES = {"GarbageCollect": "CollectMemory"}
# Statements of other languages that the DSL does not have, with what to write instead.
_CONDITIONAL = "choose between values with the conditional expression c ? a : b, e.g. x = c ? a : b;"
_NO_EARLY_RETURN = ("there is no early 'return' either (a function body is assignments and prints, then one "
                    "'return'): return c ? a : b;")
_NO_LOOPS = "there are no loops: build a tuple with tuple(e for x in t), or choose with c ? a : b"
# Python's logical operators, lexed as names where an operator is expected, and the DSL's.
_PYTHON_OPERATORS = {"and": "logical and is '&&'", "or": "logical or is '||'",
                     "is": "compare with '==' ('is not': '!=')"}
_CONTROL_WORDS = {"if": (_CONDITIONAL, _NO_EARLY_RETURN), "else": (_CONDITIONAL, _NO_EARLY_RETURN),
                  "while": (_NO_LOOPS,), "for": (_NO_LOOPS,)}
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


# Where the operand of Python's `not` ends: it binds looser than comparisons and arithmetic, tighter than and/or.
_NOT_OPERAND_ENDS = {";", ",", ")", "]", "}", "?", ":", "&&", "||", "and", "or", "=", "{"}


def _not_operand(text: str, first: Token) -> str:
    """The operand of a Python `not` that starts at `first`, as `!` takes it: one token or one parenthesised group
    as written, else in parentheses (`not x > 2` is `!(x > 2)`; `!x > 2` would negate x alone)."""
    tokens = [t for t in _previous_tokens(text, None) if t.start_pos >= first.start_pos]
    depth, taken = 0, []
    for tok in tokens:
        if depth == 0 and tok.value in _NOT_OPERAND_ENDS:
            break
        depth += (tok.value in ("(", "[")) - (tok.value in (")", "]"))
        taken.append(tok)
    if not taken:
        return str(first)
    operand = " ".join(text[taken[0].start_pos:taken[-1].end_pos].split())
    if len(taken) == 1 or (taken[0].value == "(" and _closing(taken) == len(taken) - 1):
        return operand
    return f"({operand})"


def _closing(tokens: list[Token]) -> int:
    """The index of the token that closes the bracket `tokens[0]` opens (len(tokens) if none does)."""
    depth = 0
    for i, tok in enumerate(tokens):
        depth += (tok.value in ("(", "[")) - (tok.value in (")", "]"))
        if depth == 0:
            return i
    return len(tokens)


def _line_has_comment_after(text: str, tok: Token) -> bool:
    line = source_lines(text)[tok.end_line - 1]
    return "//" in line[tok.end_column - 1 :]


# Names of the control characters, which have none in Unicode's character database (their aliases, as C names them).
_CONTROL_NAMES = {"\0": "NULL", "\a": "BELL", "\b": "BACKSPACE", "\v": "VERTICAL TAB", "\f": "FORM FEED",
                  "\x1b": "ESCAPE", "\x7f": "DELETE"}


def _unclosed_function(text: str, tokens: list[Token], token: Token, at_eof: bool) -> tuple[str, str] | None:
    """For an error where a statement of a function body starts (`tokens`: those read before `token`), when the
    function's '}' is missing: (what is wrong, naming the function and where its '{' is; where to add the '}'). It is
    missing when the body's return was read (a return ends a body), at the end of the input, or when `token` is a
    statement that goes at top level only and no '}' follows to close the body; else None."""
    if not tokens or tokens[-1].type not in ("SEMICOLON", "LBRACE"):
        return None
    brace = name = ret = None
    for i, tok in enumerate(tokens):
        if tok.type == "LBRACE":
            brace = tok
            name = next((tokens[j + 1] for j in range(i - 1, -1, -1) if tokens[j].type == "DEF"), None)
            ret = None
        elif tok.type == "RBRACE":
            brace = None
        elif tok.type == "RETURN" and brace is not None:
            ret = [tok]
        elif ret is not None and len(ret) == 1 and tok.type == "SEMICOLON":
            ret.append(tok)
    if brace is None or name is None:
        return None
    if ret is None or len(ret) < 2:
        if not at_eof and not (token.value in _STATEMENT_WORDS - {"print"} or token.type == "DEF"):
            return None
        depth = 0
        for tok in [] if at_eof else _previous_tokens(text, None):
            if tok.start_pos <= token.start_pos:
                continue
            if tok.type == "RBRACE" and depth == 0:
                return None  # a '}' closes the body later: the statement is misplaced, not the brace missing
            depth += (tok.type == "LBRACE") - (tok.type == "RBRACE")
    message = f"function '{name}' (its '{{' at line {brace.line}, column {brace.column}) is not closed"
    if ret is None or len(ret) < 2:
        where = "at the end of the input" if at_eof else f"before line {token.line}"
        return message, (f"add '}}' {where}, after the return that ends the body of '{name}' (a function body holds "
                         "only assignments, print and return; mapping statements and def are written at top level)")
    first, semi = ret
    line = text.split("\n")[semi.end_line - 1]
    statement = text[first.start_pos:semi.end_pos]
    if "#" in line[semi.end_column - 1:] or "//" in line[semi.end_column - 1:]:  # a '}' there would be a comment
        return message, f"add '}}' after its return, on a line after line {semi.end_line}"
    shown = f": {statement} }}" if "\n" not in statement and len(statement) <= 80 else ""
    return message, f"add '}}' after its return, at the end of line {semi.end_line}{shown}"


_CLOSER = {"(": ")", "[": "]"}


def _unclosed_brackets(text: str, tokens: list[Token], token: Token, at_eof: bool) -> tuple[str, str] | None:
    """For an error where an expression's '(' or '[' is still open (`tokens`: those read before `token`) and
    `token` cannot go on inside it (';', '}', a closer of the other kind, a statement that starts, the end of the
    input): (what is wrong, naming each bracket left open and where; where to add the closers), else None."""
    stack: list[Token] = []
    for tok in tokens:
        if tok.value in ("(", "[", "{"):
            stack.append(tok)
        elif tok.value in (")", "]", "}") and stack:
            stack.pop()
    open_ = list(itertools.takewhile(lambda t: t.value != "{", reversed(stack)))[::-1]  # this statement's
    if not open_:
        return None
    # a statement that starts on a later line: a keyword, or a name assigned to
    starts = not at_eof and token.line > tokens[-1].end_line and (
        token.value in _STATEMENT_WORDS or token.type in ("DEF", "RETURN")
        or (token.type == "IDENT" and re.match(r"\s*=(?!=)", text[token.end_pos:]) is not None))
    mismatched = token.value in (")", "]") and token.value != _CLOSER[open_[-1].value]
    if not (at_eof or token.type in ("SEMICOLON", "RBRACE") or mismatched or starts):
        return None
    outer = next((i for i in range(len(open_) - 1, -1, -1) if _CLOSER[open_[i].value] == token.value), None)
    if mismatched and outer is not None:  # `f(m[0, 1);`: the ')' closes an outer bracket, the inner ones are open
        open_ = open_[outer + 1:]
    named = " and ".join(f"the '{t}' at line {t.line}, column {t.column}" for t in open_)
    message = f"{named} {'is' if len(open_) == 1 else 'are'} not closed"
    closers = "".join(_CLOSER[t.value] for t in reversed(open_))
    if mismatched and outer is None:  # `m[0, 1)`: the closer mistyped
        return message, f"close it with '{closers[0]}' instead of '{token}'"
    prev = tokens[-1]
    where = (f"at the end of line {prev.end_line}" if at_eof or token.line > prev.end_line
             else f"before '{token}'")
    return message, f"add '{closers}' {where}"


def _current_statement(tokens: list[Token]) -> list[Token]:
    """The tokens of the statement being read: those after the last ';', '{' or '}'."""
    start = max((i + 1 for i, t in enumerate(tokens) if t.type in ("SEMICOLON", "LBRACE", "RBRACE")), default=0)
    return tokens[start:]


def _ended_hint(text: str, tokens: list[Token]) -> str | None:
    """E102's hint: the statement that lacks its ';' with it, where it is short and on one line without a comment."""
    statement = _current_statement(tokens)
    if not statement:
        return None
    source = text[statement[0].start_pos:statement[-1].end_pos]
    if "\n" in source or "\r" in source or "#" in source or "//" in source or len(source) > 80:
        return None
    return f"end the statement with ';': {source};"


def _join_tokens(tokens: list[Token]) -> str:
    """Source-like text of a token sequence: a space after commas and between two words."""
    out = ""
    for tok in tokens:
        word = tok.value[:1].isalnum() or tok.value[:1] == "_"
        if out and (out.endswith(",") or (word and (out[-1].isalnum() or out[-1] == "_"))):
            out += " "
        out += tok.value
    return out


def _closest(word: str, options, cutoff: float = 0.5) -> str | None:
    """The option most like `word`, case ignored (`sysmem` is SYSMEM), or None (difflib's ratio below `cutoff`)."""
    by_upper = {o.upper(): o for o in options}
    close = difflib.get_close_matches(word.upper(), list(by_upper), n=1, cutoff=cutoff)
    return by_upper[close[0]] if close else None


_STATEMENT_FORMS = {"Task": "Task TASK PROCESSOR_KINDS;",
                    "Region": "Region TASK REGION PROCESSOR_KIND MEMORY_KINDS;",
                    "Layout": "Layout TASK REGION KIND CONSTRAINTS;",
                    "InstanceLimit": "InstanceLimit TASK [PROCESSOR_KIND] N;",
                    "CollectMemory": "CollectMemory TASK REGION;"}
_SELECTOR_TOKENS = ("IDENT", "INT", "STRING", "STAR")


def _statement_text(tokens) -> str:
    """A statement's tokens as `fmt` writes them: a space between two, none around a comma nor in `Align==N`."""
    return re.sub(r"\bAlign (\S+) ", r"Align\1", " ".join(str(t) for t in tokens).replace(" , ", ",")) + ";"


def _task_list(rest: list[Token]) -> int:
    """The number of tokens of `rest` that a task list of names (`t1,t2`) takes at its start; 0 if none does."""
    n = 0
    while n < len(rest) and rest[n].type in ("IDENT", "STRING"):
        n += 1
        if n == len(rest) or rest[n].type != "COMMA":
            return n
        n += 1
    return 0


def _more_kinds(rest: list[Token], kinds) -> int:
    """The number of tokens of `rest` that `,KIND` pairs take at its start (kinds of `kinds`)."""
    i = 0
    while i + 1 < len(rest) and rest[i].type == "COMMA" and rest[i + 1].value in kinds:
        i += 2
    return i


def _kind_moved(stmt: str, token: Token, rest: list[Token]) -> list | None:
    """The tokens after the keyword of an InstanceLimit, Region or Layout statement written with kind `token` before
    its task list (`rest`: what follows the kind, up to the ';'), the kind in its place; None where `rest` does not
    read as the rest of that statement."""
    n = _task_list(rest) or (1 if rest and rest[0].type == "STAR" and stmt != "InstanceLimit" else 0)
    if stmt == "InstanceLimit":  # `InstanceLimit CPU t 2;` (`*` would be E220)
        return [*rest[:n], token, *rest[n:]] if n and [t.type for t in rest[n:]] == ["INT"] else None
    if (n and len(rest) >= n + 2 and rest[n].type in _SELECTOR_TOKENS
            and rest[n + 1].value in (A.MEM_KINDS if stmt == "Region" else A.CONSTRAINT_WORDS)):
        return [*rest[:n + 1], token, *rest[n + 1:]]  # `Region CPU t r SYSMEM;`: the kind after the region
    if len(rest) >= 2 and rest[1].value in ("*", token.value):
        return ["*", rest[0], token, *rest[2:]]  # `Layout CPU * CPU SOA;`: every task on the kind
    return None


def _swapped_kind_hint(text: str, before: list[Token], token: Token) -> str | None:
    """For a kind written out of its place in a Task, Region, Layout, InstanceLimit or CollectMemory statement: where
    the region goes, after the task list or `*` (`Region t CPU r SYSMEM;`, `Region t SYSMEM r CPU;`, any kind in a
    CollectMemory, which takes none), or where the task goes (`Task CPU t;`, `Layout CPU * * SOA;`,
    `InstanceLimit CPU t 2;`): the statement's form and, where the rest of it reads as that statement with the kind
    moved, that statement; for a processor kind after a name in a task list (`IndexTaskMap t,CPU f;`), what a task
    list holds, with no statement (a kind selector or the names may be meant); else None."""
    start = max((i + 1 for i, t in enumerate(before) if t.type in ("SEMICOLON", "RBRACE")), default=0)
    head = before[start:]
    if not head:
        return None
    stmt, memory = head[0].value, token.value in A.MEM_KINDS
    if head[-1].type == "COMMA" and len(head) > 2 and token.value in A.PROC_KINDS:  # `Region t1,CPU ...`
        if stmt in ("IndexTaskMap", "SingleTaskMap"):
            return f"a kind selector stands alone ({stmt} {token} f;); otherwise list the task names (a task list " \
                   "holds names only)"
        if stmt in _STATEMENT_FORMS:
            return "a task list holds task names only (a processor kind selects tasks only in IndexTaskMap and " \
                   "SingleTaskMap): list the task names, or give * for every task"
        return None
    if stmt not in _STATEMENT_FORMS:
        return None
    tasks = _task_list(head[1:]) or (1 if len(head) == 2 and head[1].type == "STAR" else 0)
    where_task, where_region = len(head) == 1, len(head) > 1 and tasks == len(head) - 1
    if not (where_task or where_region and stmt in ("Region", "Layout", "CollectMemory")):
        return None
    # A memory kind is out of place where the task goes in a Layout statement, where the region goes in a Region,
    # Layout or CollectMemory statement (a Region statement's memories written before the region).
    if token.value not in A.PROC_KINDS and not (memory and (stmt == "Layout" or
                                                            stmt in ("Region", "CollectMemory") and where_region)):
        return None
    rest = [t for t in _previous_tokens(text, None) if t.start_pos > token.start_pos]
    end = next((i for i, t in enumerate(rest) if t.type == "SEMICOLON"), None)
    rest = rest[:end] if end is not None else None
    form = f"{'an' if stmt == 'InstanceLimit' else 'a'} {stmt} statement is `{_STATEMENT_FORMS[stmt]}`"
    if where_task:
        names = "task names" if stmt == "InstanceLimit" else "a task name or *"
        form += f" ({names})" if memory else \
            f" ({names}; a processor kind selects tasks only in IndexTaskMap and SingleTaskMap)"
        if rest is None:
            return form
        # The task list (or `*`) after the kind, and how many tokens it takes.
        n = _task_list(rest) or (1 if rest and rest[0].type == "STAR" and stmt != "InstanceLimit" else 0)
        if stmt == "Task":  # `Task GPU,CPU t1,t2;`: the kinds, then the tasks
            i = _more_kinds(rest, A.PROC_KINDS)
            tail = rest[i:]
            n = _task_list(tail) or (1 if [t.type for t in tail] == ["STAR"] else 0)
            fixed = [*tail, token, *rest[:i]] if n and n == len(tail) else None
        elif i := _more_kinds(rest, A.PROC_KINDS + (A.MEM_KINDS if stmt == "Layout" else ())):
            # `InstanceLimit GPU,CPU t 2;`, `Layout SYSMEM,ZCMEM t * AOS;`, `Region GPU,CPU t r FBMEM;`: one statement
            # per kind; `CollectMemory GPU,CPU t r;`: none of them.
            if stmt == "CollectMemory":
                return _swapped_kind_hint(text, before, rest[i - 1])
            each = [_kind_moved(stmt, kind, rest[i:]) for kind in [token, *rest[1:i:2]]]
            if stmt in ("InstanceLimit", "Layout", "Region") and all(each):
                one = "one processor kind" if stmt == "Region" else "one kind"
                return f"{form}; it takes {one}, so one statement per kind: write " + \
                    " ".join(_statement_text([head[0], *f]) for f in each)
            return form
        elif stmt == "InstanceLimit":  # `InstanceLimit CPU t 2;` (`*` would be E220)
            fixed = _kind_moved(stmt, token, rest)
        elif stmt == "CollectMemory":  # `CollectMemory CPU t r;`: it takes no kind
            form += "; it takes no kind"
            fixed = rest if n and len(rest) == n + 1 and rest[n].type in _SELECTOR_TOKENS else None
        else:
            fixed = _kind_moved(stmt, token, rest)
        return f"{form}: write {_statement_text([head[0], *fixed])}" if fixed else form
    if stmt == "CollectMemory":
        form += " (it takes no kind)"
        if rest is None or [t.type for t in rest] not in (["IDENT"], ["INT"], ["STRING"], ["STAR"]):
            return form
        return f"{form}: write {_statement_text([*head, *rest])}"
    if rest is None or not rest:
        return form
    if stmt == "Region" and memory:  # `Region t SYSMEM,ZCMEM r CPU;`: the memories before the region and the kind
        i = _more_kinds(rest, A.MEM_KINDS)
        tail = rest[i:]
        if len(tail) == 2 and tail[0].type in _SELECTOR_TOKENS and (tail[1].value in A.PROC_KINDS or
                                                                   tail[1].type == "STAR"):
            return f"{form}: write {_statement_text([*head, tail[0], tail[1], token, *rest[:i]])}"
        return form
    if rest[0].type not in _SELECTOR_TOKENS:
        return form
    return f"{form}: write {_statement_text([*head, rest[0], token, *rest[1:]])}"


def _map_kind_hint(text: str, before: list[Token], token: Token) -> str | None:
    """For a processor kind beside the function of an IndexTaskMap or SingleTaskMap statement that names its tasks
    (`IndexTaskMap t GPU f;`, `IndexTaskMap t f GPU;`): the statement's form, that a kind stands alone as the
    selector and the Task statement picks the tasks' kind, and the statement without the kind, up to its ';'; else
    None."""
    head, rest = _statement_tokens(text, before, token)
    if not head or head[0].type not in ("INDEXTASKMAP", "SINGLETASKMAP") or token.value not in A.PROC_KINDS:
        return None
    n = _task_list(head[1:]) or (1 if len(head) > 1 and head[1].type == "STAR" else 0)
    if not n or len(head) - 1 - n > 1 or rest is None:  # the tasks, then the function or not yet
        return None
    names = [*head[1 + n:], *rest[1:]]
    stmt = head[0].value
    said = (f"{'an' if stmt == 'IndexTaskMap' else 'a'} {stmt} statement is `{stmt} TASKS FUNCTION;`: a processor "
            f"kind stands alone in place of the tasks ({stmt} {token} f; maps the tasks that run on {token}); the "
            f"Task statement picks the tasks' kind (Task {_statement_text(head[1:1 + n])[:-1]} {token};)")
    if len(names) != 1 or names[0].type != "IDENT":
        return said
    return f"{said}: write {_statement_text([*head[:1 + n], names[0]])}"


def _definition_name_hint(before: list[Token], word: str, assigned: bool) -> str | None:
    """For a reserved word naming a function (after `def`), a parameter (in a `def`'s parameter list), a variable
    (assigned where a statement starts: `assigned`, the word followed by '=') or a comprehension's variable (after
    `for`): another name, its lowercase where that is free; else None."""
    defs = [i for i, t in enumerate(before) if t.type == "DEF"]
    if defs and not any(t.type == "LBRACE" for t in before[defs[-1]:]):
        what = "function" if before[-1].type == "DEF" else "parameter"
    elif (assigned and (not before or before[-1].type in ("SEMICOLON", "LBRACE", "RBRACE"))) or (
            before and before[-1].type == "FOR"):
        what = "variable"
    else:
        return None
    free = word.lower() if word.lower() not in A.RESERVED else f"{word}_"
    return f"name the {what} otherwise, e.g. '{free}'"


def _region_list_hint(text: str, before: list[Token], token: Token) -> str | None:
    """For a ',' after the region selector of a Region, Layout or CollectMemory statement (`Region t r1,r2 GPU
    FBMEM;`): that the selector is one region, unlike the task selector, with the statement written once per region
    where the rest of it parses as names and tokens up to a ';'; else None."""
    start = max((i + 1 for i, t in enumerate(before) if t.type in ("SEMICOLON", "RBRACE")), default=0)
    head = before[start:]
    names = ("IDENT", "STRING", "INT")
    if (token.type != "COMMA" or len(head) < 3 or head[0].value not in ("Region", "Layout", "CollectMemory")
            or head[-1].type not in names or head[-2].type == "COMMA"):
        return None
    said = f"a {head[0]} statement names one region (or '*' for all), not a list as for tasks"
    rest = [t for t in _previous_tokens(text, None) if t.start_pos > token.start_pos]
    regions, i = [head[-1]], 0
    while i < len(rest) and rest[i].type in names:
        regions.append(rest[i])
        i += 1
        if i == len(rest) or rest[i].type != "COMMA":
            break
        i += 1
    end = next((j for j in range(i, len(rest)) if rest[j].type == "SEMICOLON"), None)
    if len(regions) < 2 or end is None:
        return said
    written = " ".join(" ".join(t.value for t in [*head[:-1], r, *rest[i:end]]).replace(" , ", ",") + ";"
                       for r in regions)
    return f"{said}: write one statement per region, {written}"


def _region_path_hint(text: str, before: list[Token], token: Token) -> str | None:
    """For a '.', '/' or '::' right after the task or region selector of a Region, Layout or CollectMemory statement
    (`Region t temperature.halo CPU SYSMEM;`: a C++ member, a file path, a scoped name): that a region is selected
    by one name or its index, with the statement written with the path's last name as the region where what follows
    the path is the rest of the statement (up to a ';'); else None."""
    start = max((i + 1 for i, t in enumerate(before) if t.type in ("SEMICOLON", "RBRACE")), default=0)
    head = before[start:]
    if (token.value not in "./:" or len(head) < 2 or head[0].value not in ("Region", "Layout", "CollectMemory")
            or head[-1].type not in ("IDENT", "STRING") or head[-1].end_pos != token.start_pos
            or (len(head) > 2 and head[-2].type == "COMMA")):
        return None
    seq = [token, *(t for t in _previous_tokens(text, None) if t.start_pos > token.start_pos)]
    names, i = [head[-1]], 0
    while i < len(seq) and seq[i].value in "./:" and seq[i].start_pos == names[-1].end_pos:
        step = 2 if seq[i].value == ":" else 1  # `::`, two tokens
        if step == 2 and (i + 1 >= len(seq) or seq[i + 1].value != ":"):
            break
        if i + step >= len(seq) or seq[i + step].type not in ("IDENT", "STRING"):
            break
        names.append(seq[i + step])
        i += step + 1
    if len(names) < 2:
        return None
    task_field = len(head) == 2  # the path in the task field: its first name taken for the task
    said = ("the task and the region are separate fields; " if task_field else "") + (
        "a region is selected by one name (one the program attached, as Legion knows it: `explain` lists them) or "
        "by its argument index, not by a path")
    string = f"(a name that holds '{token}{':' if token == ':' else ''}' itself is written as a string)"
    end = next((j for j in range(i, len(seq)) if seq[j].type == "SEMICOLON"), None)
    if end is None or (task_field and seq[i].type in ("IDENT", "STRING", "INT", "STAR")):  # a region follows it
        return f"{said} {string}"
    words = [*head[:-1], *(names[:1] if task_field else ()), names[-1], *seq[i:end]]
    written = " ".join(t.value for t in words).replace(" , ", ",") + ";"
    how = "write" if task_field else "any name along the argument's region tree selects it, such as the nearest,"
    if task_field or any(n.type != "IDENT" for n in names):
        return f"{said}: {how} `{written}` {string}"
    # The path may be one name the program attached ("grid.ghost"), which the parser cannot know: its string first.
    joined = text[names[0].start_pos:names[-1].end_pos]
    whole = " ".join([*(t.value for t in head[:-1]), f'"{joined}"', *(t.value for t in seq[i:end])]).replace(
        " , ", ",") + ";"
    return f"{said}: where the program attached '{joined}' as one name, write it as a string, `{whole}`; else {how} " \
           f"`{written}`"


def _statement_tokens(text: str, before: list[Token], token: Token) -> tuple[list[Token], list[Token] | None]:
    """The tokens of the statement around `token` (`before`: the tokens read before it): (those before it in the
    statement, `token` and those after it up to the ';', or None where no ';' follows)."""
    start = max((i + 1 for i, t in enumerate(before) if t.type in ("SEMICOLON", "RBRACE")), default=0)
    rest = [t for t in _previous_tokens(text, None) if t.start_pos >= token.start_pos]
    end = next((i for i, t in enumerate(rest) if t.type == "SEMICOLON"), None)
    return before[start:], None if end is None else rest[:end]


def _kinds_comma_hint(text: str, before: list[Token], token: Token, accepts) -> str | None:
    """For a kind after a kind of the same sort where a ',' may follow the first (`Task * CPU GPU;`): the statement
    with a comma between each two such kinds, up to its ';' (that the kinds are separated by commas alone where more
    than such kinds follow: the statement would be wrong still); else None."""
    same = lambda a, b: any(a.value in k and b.value in k for k in (A.PROC_KINDS, A.MEM_KINDS))  # noqa: E731
    if "COMMA" not in accepts or not before or not same(before[-1], token):
        return None
    head, rest = _statement_tokens(text, before, token)
    if rest is None or not head or head[0].value not in _STATEMENT_FORMS:
        return None
    if not all(same(t, token) for t in rest):  # `Task t CPU GPU FBMEM;`: wrong beyond the comma, no statement
        return "kinds are separated by commas"
    written: list = []
    for t in [*head, *rest]:
        if written and same(written[-1], t):
            written.append(",")
        written.append(t)
    return f"kinds are separated by commas: `{_statement_text(written)}`"


def _trailing_comma_hint(text: str, before: list[Token], token: Token) -> str | None:
    """For a ';' right after a kind list's ',' (`Task * CPU,;`): the statement without the ','; else None (after a
    name, `Task a,;`, the statement lacks more than a ',')."""
    if (token.type != "SEMICOLON" or len(before) < 2 or before[-1].type != "COMMA"
            or before[-2].value not in (*A.PROC_KINDS, *A.MEM_KINDS)):
        return None
    head, _ = _statement_tokens(text, before, token)
    return f"remove the trailing ',': `{_statement_text(head[:-1])}`"


def _limit_kinds_hint(text: str, before: list[Token], token: Token) -> str | None:
    """For a processor kind after the processor kind of an InstanceLimit statement (`InstanceLimit t GPU CPU 2;`),
    which takes one: the statement written once per kind, up to its ';'; else None."""
    head, rest = _statement_tokens(text, before, token)
    if (len(head) < 3 or head[0].value != "InstanceLimit" or head[-1].value not in A.PROC_KINDS
            or token.value not in A.PROC_KINDS):
        return None
    said = "an InstanceLimit statement names one processor kind (or '*' for all)"
    if rest is None or len(rest) != 2 or rest[1].type != "INT":  # `GPU CPU 2;`: else the statement is not clear
        return said
    written = " ".join(_statement_text([*head[:-1], k, rest[1]]) for k in (head[-1], token))
    return f"{said}: write one statement per kind, {written}"


def _limit_kind_at_end_hint(text: str, before: list[Token], token: Token) -> str | None:
    """For a processor kind (or `*`) after the number of an InstanceLimit statement (`InstanceLimit t 2 CPU;`): the
    statement's form, where the kind goes, and the statement with the kind before the number (one statement per kind
    for a list of kinds, as an InstanceLimit takes one), up to its ';'; else None."""
    head, rest = _statement_tokens(text, before, token)
    if (len(head) < 3 or head[0].value != "InstanceLimit" or head[-1].type != "INT"
            or _task_list(head[1:-1]) != len(head) - 2 or not (token.value in A.PROC_KINDS or token.type == "STAR")):
        return None
    said = f"an InstanceLimit statement is `{_STATEMENT_FORMS['InstanceLimit']}`: the processor kind goes before " \
           "the number"
    if rest is None:
        return said
    i = 1 if token.type == "STAR" else 1 + _more_kinds(rest[1:], A.PROC_KINDS)
    if i != len(rest):
        return said
    written = " ".join(_statement_text([*head[:-1], k, head[-1]]) for k in rest[::2])
    return f"{said}{'' if i == 1 else '; it takes one kind, so one statement per kind'}: write {written}"


def _layout_kind_hint(text: str, before: list[Token], token: Token) -> str | None:
    """For a layout constraint where the kind of a Layout statement goes (`Layout t r SOA GPU;`): the statement's
    form, that the kind goes before the constraints, and the statement with its kind there (the kind written last,
    else `*`), up to its ';'; else None."""
    head, rest = _statement_tokens(text, before, token)
    if (len(head) < 3 or head[0].value != "Layout" or token.value not in A.CONSTRAINT_WORDS
            or head[-1].type not in _SELECTOR_TOKENS
            or not (_task_list(head[1:-1]) == len(head) - 2 or [t.type for t in head[1:-1]] == ["STAR"])):
        return None
    said = f"a Layout statement is `{_STATEMENT_FORMS['Layout']}`: the kind goes before the constraints"
    if rest is None:
        return said
    kinds = [i for i, t in enumerate(rest) if t.value in A.PROC_KINDS + A.MEM_KINDS or t.type == "STAR"]
    if kinds and kinds != [len(rest) - 1]:  # kinds amid the constraints, or several: not clear
        return said
    kind, constraints = (rest[-1], rest[:-1]) if kinds else ("*", rest)
    return f"{said}: write {_statement_text([*head, kind, *constraints])}"


def _collect_kind_hint(text: str, before: list[Token], token: Token) -> str | None:
    """For a kind after the region of a CollectMemory statement (`CollectMemory t r GPU;`), which takes none: the
    statement's form and, where only kinds follow up to its ';', the statement without them; else None."""
    head, rest = _statement_tokens(text, before, token)
    kinds = A.PROC_KINDS + A.MEM_KINDS
    if (len(head) < 3 or head[0].value != "CollectMemory" or token.value not in kinds
            or head[-1].type not in _SELECTOR_TOKENS
            or not (_task_list(head[1:-1]) == len(head) - 2 or [t.type for t in head[1:-1]] == ["STAR"])):
        return None
    said = f"a CollectMemory statement is `{_STATEMENT_FORMS['CollectMemory']}` (it takes no kind)"
    if rest is None or 1 + _more_kinds(rest[1:], kinds) != len(rest):
        return said
    return f"{said}: write {_statement_text(head)}"


def _wrong_sort_of_kind(word: str, accepts: set[str]) -> tuple[str, str] | None:
    """E107 message and hint for a memory kind where only processor kinds fit, or the reverse; None otherwise."""
    texts = _texts(accepts)
    procs = bool({f"'{k}'" for k in A.PROC_KINDS} & texts)
    mems = bool({f"'{k}'" for k in A.MEM_KINDS} & texts)
    if word in A.MEM_KINDS and procs and not mems:
        proc = "GPU" if word in ("FBMEM", "ZCMEM") else "CPU"
        return (f"'{word}' is a memory kind; expected a processor kind ({', '.join(A.PROC_KINDS)})",
                f"memories are chosen by Region statements, after the processor kind: Region * * {proc} {word};")
    if word in A.PROC_KINDS and mems and not procs:
        return (f"'{word}' is a processor kind; expected a memory kind ({', '.join(A.MEM_KINDS)})",
                f"a Region statement names one processor kind, then the memories: `{_STATEMENT_FORMS['Region']}`, "
                "e.g. Region * * GPU FBMEM,ZCMEM;")
    return None


def _memories_seen(before: list[Token]) -> tuple[str, ...] | None:
    """In a Region statement's memory list, the memory kinds its processor kind has affinity to on Legion's machines
    (those `--machine` describes, with the flag-sized RDMEM and SOCKMEM, as W302 judges them), and VIRTUAL; None
    elsewhere or for a kind those machines lack."""
    from mapperopt.descriptions import parse_machine_spec

    start = max((i + 1 for i, t in enumerate(before) if t.type in ("SEMICOLON", "RBRACE")), default=0)
    head = before[start:]
    if len(head) < 4 or head[0].value != "Region" or head[3].value not in A.PROC_KINDS:
        return None
    machine = parse_machine_spec("1x1", ("-ll:rsize", "1", "-ll:nsize", "1"))
    seen = [m.kind for m in machine.memories if any(k == head[3].value for k, _ in m.procs)]
    return (*dict.fromkeys(seen), "VIRTUAL") if seen else None


_FLAG_SIZED_NAMES = {"RDMEM": "the registered (RDMA) memory", "SOCKMEM": "the NUMA socket memory"}


def _flag_sized_hint(kind: str, seen, before: list[Token]) -> str:
    """What to do for `kind`, a memory that only the run's flags create (RDMEM, SOCKMEM): the flag and where it goes,
    and for runs without it the statement (or list) with a memory that always exists after it."""
    from mapperopt.dsl.checker import FLAG_SIZED_MEMORIES

    flag = FLAG_SIZED_MEMORIES[kind]
    fallback = next((m for m in seen or () if m not in FLAG_SIZED_MEMORIES and m != "VIRTUAL"), "SYSMEM")
    start = max((i + 1 for i, t in enumerate(before) if t.type in ("SEMICOLON", "RBRACE")), default=0)
    head = before[start:]
    listed = f"{kind},{fallback}"
    instead = "write " + (_statement_text([*head, listed]) if len(head) == 4 and head[0].value == "Region"
                          else listed)
    if any(t.value == fallback for t in head):
        instead = f"the {fallback} listed before it is used"
    return (f"{kind}, {_FLAG_SIZED_NAMES[kind]}, exists only when the run sizes it with {flag} (MiB): write {kind} "
            f"and give the run's flags after `--`, e.g. `-- {flag} 64`, or in an application file the size's "
            f"`legion_flags: [\"{flag}\", \"64\"]`; for runs without it, {instead}")


def _kinds_hint(accepts: set[str]) -> str:
    """The kinds that go where `accepts` expects kinds, each with Legion's name, for a word like none of them."""
    texts = _texts(accepts)
    said = []
    for sort, kinds in (("processor", A.PROC_KINDS), ("memory", A.MEM_KINDS)):
        if {f"'{k}'" for k in kinds} & texts:
            named = [f"{k} ({'' if i else 'Legion' + chr(39) + 's '}{A.LEGION_NAMES[k]})" if k in A.LEGION_NAMES
                     else k for i, k in enumerate(kinds)]
            said.append(f"the DSL's {sort} kinds: {', '.join(named)}")
    return "; ".join(said)


def _kind_message(word: str, accepts: set[str], before: list[Token]) -> tuple[str, str | None] | None:
    """E107 message and hint for a name `word` where only kinds (and `*`) are acceptable (`before`: the tokens before
    it); None otherwise. A memory kind's near-miss is first sought among those the statement's processor kind sees."""
    from mapperopt.dsl.checker import FLAG_SIZED_MEMORIES

    texts = _texts(accepts)
    procs = {f"'{k}'" for k in A.PROC_KINDS} & texts
    mems = {f"'{k}'" for k in A.MEM_KINDS} & texts
    if not (procs or mems) or texts - procs - mems - {"'*'"}:
        return None
    candidates = (A.PROC_KINDS if procs else ()) + (A.MEM_KINDS if mems else ())
    seen = _memories_seen(before) if mems and not procs else None
    close = (word.upper() if word.upper() in candidates else None) or (seen and _closest(word, seen)) \
        or _closest(word, candidates)
    sized = f" {_flag_sized_hint(close, seen, before)}" if close in FLAG_SIZED_MEMORIES else ""
    hint = A.legion_kind_hint(word, candidates) or (f"did you mean '{close}'?{sized}" if close else None)
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

    def error(code, message, line, col, token, hints=(), expected=(), notes=()):
        diag = Diagnostic(code, "error", message, A.Loc(filename, line, col), tuple(h for h in hints if h),
                          tuple(n for n in notes if n))
        return DslSyntaxError(diag, text, token, expected)

    if isinstance(exc, UnexpectedCharacters):
        char = text[exc.pos_in_stream]
        if char == '"':
            return error("E103", "unterminated string literal", exc.line, exc.column, char,
                         ("a string ends with '\"' on the same line",))
        if char == "\ufeff":  # skipped only as the first character (`parse`); elsewhere, e.g. where files were joined
            return error("E104", f"unrecognized character: a byte order mark (U+FEFF) at line {exc.line}, column "
                                 f"{exc.column}, invisible in most editors", exc.line, exc.column, char,
                         ("remove it: only the first character of a file may be a byte order mark",))
        if not char.isprintable() or char.isspace():  # invisible, or looks like a space: named by its code point
            name = unicodedata.name(char, "") or _CONTROL_NAMES.get(char, "")
            return error("E104", f"unrecognized character U+{ord(char):04X}{f' ({name})' if name else ''}", exc.line,
                         exc.column, char, ("remove it, or replace it with a space",
                                            "whitespace is spaces, tabs and line breaks (\\n, \\r\\n or \\r); a form "
                                            "feed or vertical tab is not" if char in "\f\v" else None))
        # quotes a word processor or chat turned curly (pasted from a document)
        curly = {q: "strings use straight double quotes: \"...\"" for q in "\u201c\u201d\u201e\u2018\u2019"}
        hints = {**curly, "&": "logical and is '&&'", "|": "logical or is '||'", "'": "strings use double quotes",
                 "^": "there is no '^' operator: for a power multiply (x * x) or write the value; for the "
                      "exclusive or of two bools write a != b"}
        if char.isalnum():  # `café`: a letter, but not one of a name's
            hints[char] = "names are written with ASCII letters, digits and '_' (a string may hold any character)"
        return error("E104", f"unrecognized character '{char}'", exc.line, exc.column, char, (hints.get(char),))

    accepts = set(exc.accepts or exc.expected)
    token = exc.token
    at_eof = token.type == "$END"
    tokens = _previous_tokens(text, None if at_eof else token.start_pos)
    prev = tokens[-1] if tokens else None
    expected = _expected_list(accepts)
    semicolon_ok = "SEMICOLON" in accepts

    comment_after = prev is not None and _line_has_comment_after(text, prev)
    slash_hint = "'//' starts a comment; integer division is '/'" if comment_after else None
    slash_note = (f"the rest of line {prev.end_line} after '//' is a comment" if comment_after else None)

    # E102: a statement ends without ';' (at a line break, or at the end of input after a '//' comment), when the
    # previous statement is incomplete without it: a token after a complete statement (after ';' or a function's
    # '}') that cannot start one is E100 at that token.
    if semicolon_ok and prev is not None and prev.type not in ("SEMICOLON", "RBRACE"):
        # Also a body's last statement before its '}' on the same line (`return x }`).
        if ((not at_eof and (token.line > prev.end_line or token.type == "RBRACE")) or (at_eof and comment_after)):
            return error("E102", f"missing ';' after '{prev}'", prev.end_line, prev.end_column, str(prev),
                         (slash_hint, _ended_hint(text, tokens)), expected)

    # A '(' or '[' left open where the statement (or the input) ends: the bracket is named, as an unclosed '{' is.
    brackets = None if comment_after else _unclosed_brackets(text, tokens, token, at_eof)  # not a '//' cut
    if brackets is not None:
        message, hint = brackets
        if at_eof:
            return error("E105", f"unexpected end of input: {message}; expected {describe_expected(accepts)}",
                         prev.end_line, prev.end_column, None, (hint,), expected)
        return error("E100", f"unexpected '{token}': {message}; expected {describe_expected(accepts)}", token.line,
                     token.column, str(token), (hint,), expected)

    # A function whose '}' is missing: where the next statement starts, its return read (after which the body must
    # end), or a statement that only goes at top level with no '}' after it, or the end of the input.
    unclosed = _unclosed_function(text, tokens, token, at_eof)
    if unclosed is not None:
        what = "end of input" if at_eof else f"'{token}'"
        message, hint = unclosed
        if at_eof:
            return error("E105", f"unexpected end of input: {message}", prev.end_line, prev.end_column, None,
                         (hint,), expected)
        return error("E100", f"unexpected {what}: {message}", token.line, token.column, str(token), (hint,),
                     expected)

    if at_eof:
        line, col = (prev.end_line, prev.end_column) if prev is not None else (1, 1)
        ended = _ended_hint(text, tokens) if semicolon_ok else None
        return error("E105", f"unexpected end of input; expected {describe_expected(accepts)}", line, col, None,
                     (slash_hint, ended or "the file ends inside a statement: complete it, or remove it"), expected,
                     (slash_note,))

    tok_text = str(token)
    line, col = token.line, token.column

    # A C-style comment: '/' then '*' (at the '/', or at the '*' where '/' was an operator).
    if text.startswith("/*", token.start_pos) or (text.startswith("*", token.start_pos) and prev is not None
                                                   and prev.type == "SLASH" and prev.end_pos == token.start_pos):
        return error("E100", f"unexpected '{tok_text}'; expected {describe_expected(accepts)}", line, col, tok_text,
                     ("'/*' does not start a comment: comments run from '#' (or '//') to the end of the line",),
                     expected)

    rest = text[token.end_pos :].lstrip()
    assigned = rest.startswith("=") and not rest.startswith("==")

    # An `if`, `else` or `while` statement: lexed as a name that starts an assignment, so the token after it is
    # unexpected. A `for` statement: the reserved word where a statement starts.
    starts = [t.type in ("SEMICOLON", "LBRACE", "RBRACE") for t in tokens[-2:]]
    word = (prev if prev is not None and prev.type == "IDENT" and (len(tokens) < 2 or starts[0])
            else token if token.type == "FOR" and not assigned and (not tokens or starts[-1]) else None)
    if word is not None and word.value in _CONTROL_WORDS:
        in_body = sum(t.type == "LBRACE" for t in tokens) > sum(t.type == "RBRACE" for t in tokens)
        return error("E100", f"the DSL has no '{word}' statement", word.line, word.column, str(word),
                     [h for h in _CONTROL_WORDS[word.value] if in_body or h != _NO_EARLY_RETURN], expected)
    # `lin = if c then a else b;`: an `if` where an expression starts, lexed as a name.
    if prev is not None and prev.type == "IDENT" and prev.value == "if" and word is None:
        return error("E100", "the DSL has no 'if' expression", prev.line, prev.column, str(prev), (_CONDITIONAL,),
                     expected)
    keyword = _KEYWORDS_BY_CASE.get(word.value.lower()) if word is not None else None
    keyword_hint = f"keywords are case-sensitive: did you mean '{keyword}'?" if keyword else None
    # `CollectMemeory t r;`, `Layuot * * * SOA;`: an unknown word then what a statement keyword takes first, where a
    # top-level statement starts, lexed as an assignment to the word (no '=' follows it: no assignment); at the
    # word, the statement keyword it stands for (a misspelling, or another system's name).
    top_level = sum(t.type == "LBRACE" for t in tokens) == sum(t.type == "RBRACE" for t in tokens)
    # `task * CPU;`: a keyword in the wrong case, not an assignment (no '=' follows it): at the word, as a misspelling.
    if keyword and word is prev and top_level and token.type != "EQUAL":
        return error("E100", f"unknown statement '{word}'", word.line, word.column, str(word), (keyword_hint,),
                     expected)
    if word is not None and word is prev and not keyword and top_level:
        mapping = sorted(_STATEMENT_WORDS - {"def", "print"})
        meant = (_OTHER_NAMES.get(word.value) or _closest(word.value, mapping)
                 if token.type in _ARGUMENT_STARTS else None)
        if meant is None and token.type in ("IDENT", "LPAR"):  # `deff f(...)`, `prnit(...)`: short words, nearer
            meant = _closest(word.value, ["def" if token.type == "IDENT" else "print"], cutoff=0.7)
        if meant is not None:
            return error("E100", f"unknown statement '{word}'", word.line, word.column, str(word),
                         (f"did you mean '{meant}'?",), expected)
    # `retrun x;` in a function body: likewise, for the body's keywords, where the word is clearly one misspelt
    # (`result x;` is not).
    if word is not None and word is prev and not top_level and token.type != "EQUAL":
        lower = word.value.lower()
        meant = lower if lower in _BODY_WORDS else _closest(word.value, _BODY_WORDS, cutoff=0.7)
        if meant is not None:
            case = "keywords are case-sensitive: " if meant == lower else ""
            return error("E100", f"unknown statement '{word}'", word.line, word.column, str(word),
                         (f"{case}did you mean '{meant}'?",), expected)

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

    # `def f(Task task)` then the body without its '{' (a Python habit): the brace is what is missing.
    if _texts(accepts) == {"'{'"} and prev is not None and prev.type == "RPAR":
        def_at = max((i for i, t in enumerate(tokens) if t.type == "DEF"), default=None)
        if def_at is not None:
            header = f"def {tokens[def_at + 1]}{_join_tokens(tokens[def_at + 2:])}"
            # a comment after the ')' would swallow a '{' added at the end of the line
            rest = source_lines(text)[prev.end_line - 1][prev.end_column - 1:].strip()
            where = ("after the parameter list" if token.line == prev.end_line else
                     f"after the ')' of line {prev.end_line}" if rest else f"at the end of line {prev.end_line}")
            return error("E100", f"unexpected '{tok_text}'; expected '{{'", line, col, tok_text,
                         (f"a function body is enclosed in '{{' ... '}}': add '{{' {where}: {header} {{",), expected)

    # E109: a processor kind inside the task list of a map statement (a kind selector stands alone).
    if (token.type == "COMMA" and prev is not None and prev.value in A.PROC_KINDS and len(tokens) >= 2
            and tokens[-2].type in ("INDEXTASKMAP", "SINGLETASKMAP")):
        return error("E109", f"reserved word '{prev}' cannot be used as a name in a task list", prev.line,
                     prev.column, str(prev), (f"a kind selector stands alone ({tokens[-2]} {prev} f;); "
                                              "otherwise list the task names",), expected)

    # E109: a reserved word where a name is expected. A statement keyword where a statement starts (`return` at top
    # level, a `Region` statement inside a function) is a misplaced statement, E100, unless it is being assigned to;
    # elsewhere (`def Task(`, a parameter) it is a name chosen.
    misplaced = (tok_text in _STATEMENT_WORDS | {"return"} and not assigned
                 and (prev is None or prev.type in ("SEMICOLON", "LBRACE", "RBRACE")))
    if "IDENT" in accepts and tok_text in A.RESERVED and not misplaced:
        return error("E109", f"reserved word '{tok_text}' cannot be used as a name", line, col, tok_text,
                     (_swapped_kind_hint(text, tokens, token) or _map_kind_hint(text, tokens, token)
                      or _definition_name_hint(tokens, tok_text, assigned),), expected)

    # E107: a memory kind where only processor kinds fit, or the reverse (`Task t FBMEM;`, `Region * * CPU GPU;`).
    wrong_sort = _wrong_sort_of_kind(tok_text, accepts)
    if wrong_sort is not None:
        return error("E107", wrong_sort[0], line, col, tok_text, (wrong_sort[1],), expected)

    # E107: a name where a kind is expected.
    if token.type == "IDENT":
        kind = _kind_message(tok_text, accepts, tokens)
        if kind is not None:
            # `Region * particle fields CPU`: a name with a space, unquoted, its second word read as the kind (not
            # an uppercase word, as kinds are written: `Task t1,t2 PROC;` means a kind)
            quote = (f'a name that is not an identifier is written as a string: "{prev} {tok_text}"'
                     if kind[1] is None and prev is not None and prev.type == "IDENT" and not tok_text.isupper()
                     else None)
            return error("E107", kind[0], line, col, tok_text, (kind[1] or quote or _kinds_hint(accepts),),
                         expected)

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
        elif token.type == "IDENT" and _closest(tok_text, A.CONSTRAINT_WORDS):
            hint = f"did you mean '{_closest(tok_text, A.CONSTRAINT_WORDS)}'?"
        return error(
            "E108",
            f"malformed layout constraint near '{tok_text}'; expected SOA, AOS, C_order, F_order, Align==N, "
            "No_Align, Exact, Compact",
            line, col, tok_text, (hint,), expected,
        )

    hints = [_region_list_hint(text, tokens, token), _region_path_hint(text, tokens, token),
             _kinds_comma_hint(text, tokens, token, accepts), _trailing_comma_hint(text, tokens, token),
             _limit_kinds_hint(text, tokens, token), _limit_kind_at_end_hint(text, tokens, token),
             _layout_kind_hint(text, tokens, token), _collect_kind_hint(text, tokens, token)]
    texts = _texts(accepts)
    if token.type == "IDENT" and {f"'{t}'" for t in A.PARAM_TYPES} <= texts:
        types = f"types: {', '.join(A.PARAM_TYPES)}"
        after = [t for t in _previous_tokens(text, None) if t.start_pos > token.start_pos][:1]
        if after and after[0].type == "IDENT":  # `Int a`: a misspelt type, not a parameter without its type
            close = _closest(tok_text, A.PARAM_TYPES)
            hints += [f"did you mean '{close}'?", types] if close else [types]
        else:
            hints.append(f"parameters are typed: write 'Task {tok_text}' ({types})")
    statement = _current_statement(tokens)
    if token.type == "SEMICOLON" and "IDENT" in accepts and statement and \
            statement[0].type in ("INDEXTASKMAP", "SINGLETASKMAP"):  # `IndexTaskMap t;`: the function is missing
        kw, tasks = statement[0].value, text[statement[1].start_pos:prev.end_pos] if len(statement) > 1 else "T"
        hints.append(f"{kw} names the mapping function after the tasks: `{kw} {tasks} f;` with "
                     "def f(Task task) { ... }")
    if token.type == "EQUAL" and prev is not None and prev.value in _STATEMENT_WORDS and (
            len(tokens) < 2 or tokens[-2].type in ("SEMICOLON", "LBRACE", "RBRACE")):  # `Region = 3;`
        hints.append(f"'{prev}' is a statement keyword, not a name: "
                     f"{_definition_name_hint(tokens[:-1], str(prev), assigned=True)}")
    if token.type == "RETURN":
        hints.append("'return' is only allowed as the last statement of a function body")
    elif tok_text in _STATEMENT_WORDS and "IDENT" in accepts:
        hints.append("a function body holds only assignments, print and return; mapping statements and def are "
                     "written at top level")
    if token.type == "IDENT" and tok_text in _PYTHON_OPERATORS:  # `a and b`: lexed as a name after an operand
        hints.append(_PYTHON_OPERATORS[tok_text])
    elif prev is not None and prev.type == "IDENT" and prev.value == "not":  # `not x`: a name, then the operand
        hints.append(f"logical not is '!': write !{_not_operand(text, token)}")
    elif token.type == "GT" and prev is not None and prev.type == "LT" and prev.end_pos == token.start_pos:
        hints.append("not equal is '!='")
    elif token.type == "STAR" and prev is not None and prev.type == "STAR" and prev.end_pos == token.start_pos:
        hints.append("there is no power operator '**': multiply (x * x), or write the value")
    if token.type == "IDENT" and tok_text in _CONTROL_WORDS:
        hints.append("there are no if/while statements; use the conditional expression c ? a : b")
    later_line = slash_hint is not None and token.line > prev.end_line
    if later_line:
        hints.append(slash_hint)
    hints.append(keyword_hint)
    return error("E100", f"unexpected '{tok_text}'; expected {describe_expected(accepts)}", line, col, tok_text,
                 tuple(hints), expected, (slash_note if later_line else None,))
