"""Code generation: a DSL `Program` -> the C++ source of one mapper library.

The generated file is small on purpose: it holds the statement tables of the policy and its functions as C++
functions over the dynamic `Value` of `runtime/mapperopt_dsl.h`; the Legion mapper that carries them out is the
support library (`runtime/dsl_mapper.cc`), built once. Name resolution follows dsl-reference.md §5.2 statically
(function bodies are straight-line code), selectors are expanded one task name per row, and of statements with identical
selectors only the latest is kept (§6.4). The output is deterministic: the same program gives the same text.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

import jinja2

from mapperopt.dsl import ast as A
from mapperopt.dsl.formatter import format_program, format_statement
from mapperopt.errors import MapperoptError

CODEGEN_VERSION = "1"

_MEMBERS = {"size": "SIZE", "volume": "VOLUME", "len": "LEN", "ipoint": "IPOINT", "ispace": "ISPACE",
            "parent": "PARENT"}
_METHODS = {"has": "HAS", "merge": "MERGE", "split": "SPLIT", "swap": "SWAP", "slice": "SLICE", "reverse": "REVERSE",
            "balance_split": "BALANCE_SPLIT", "auto_split": "AUTO_SPLIT", "greedy_split": "GREEDY_SPLIT",
            "processor": "PROCESSOR"}
_BINARY = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod", "<": "lt", "<=": "le", ">": "gt",
           ">=": "ge", "==": "eq", "!=": "ne"}
_PARAM_TYPES = {"Task": "TASK", "int": "INT", "bool": "BOOL", "IPoint": "TUPLE", "ISpace": "TUPLE",
                "MSpace": "MODEL"}


class CodegenError(MapperoptError):
    """The program cannot be translated (it did not pass `check`)."""


@lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    # Jinja's compiled template is cached on disk (keyed by Jinja from the template's source): compiling it took
    # about a tenth of a cold `mapperopt compile`.
    try:
        from mapperopt.toolchain import cache_dir

        folder = cache_dir() / "jinja"
        folder.mkdir(exist_ok=True)
        bytecode_cache = jinja2.FileSystemBytecodeCache(str(folder))
    except OSError:  # no writable cache: compile it in memory
        bytecode_cache = None
    env = jinja2.Environment(loader=jinja2.PackageLoader("mapperopt.compiler", "templates"), trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
                             bytecode_cache=bytecode_cache)
    return env.get_template("mapper.cc.j2")


def c_string(text: str) -> str:
    """`text` as a C++ string literal (printable ASCII kept, everything else escaped)."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif " " <= ch <= "~" and ch != "?":  # no '?': avoids trigraph-like sequences in any dialect
            out.append(ch)
        else:
            out.extend(f"\\{b:03o}" for b in ch.encode())
    return '"' + "".join(out) + '"'


def comment_text(text: str) -> str:
    """`text` made safe inside a C++ `//` comment: only printable ASCII other than `\\` is kept (each other character
    becomes `.`) and `??` becomes `?.`, so no backslash (nor the trigraph `??/`) can splice the next line into the
    comment, wherever a cut falls."""
    return "".join(ch if " " <= ch <= "~" and ch != "\\" else "." for ch in text).replace("??", "?.")


def _site(func: str | None, loc: A.Loc) -> str:
    return f"Site{{{'F' if func else 'nullptr'}, {loc.line}, {loc.col}}}"


class _Scope:
    """Names visible while translating one function body (or the load phase when `func` is None)."""

    def __init__(self, gen: _Generator, func: str | None, params: tuple[A.Param, ...] = ()):
        self.gen = gen
        self.func = func
        self.params = {p.name for p in params}
        self.locals: set[str] = set()
        self.comprehensions: list[tuple[str, str]] = []  # (DSL name, C++ name), innermost last

    def site(self, node) -> str:
        return _site(self.func, node.loc)

    def name(self, e: A.Name) -> str:
        for var, cname in reversed(self.comprehensions):
            if var == e.name:
                return cname
        if self.func is not None and e.name in self.locals:
            return f"v_{e.name}"
        if e.name in self.params:
            return f"p_{e.name}"
        if e.name in self.gen.global_names:
            return f"cx.globals[G_{e.name}]"
        return self._fail(408, f"'{e.name}' is undefined")

    def _fail(self, code: int, message: str, node=None) -> str:
        """A run-time error in place of a value; without `node` it carries no position (as the evaluator's lookup
        errors)."""
        site = self.site(node) if node is not None else "Site{nullptr, 0, 0}"
        return f"(fail({code}, {c_string(message)}, {site}), Value())"

    # ---- expressions

    def expr(self, e) -> str:
        method = getattr(self, "_" + type(e).__name__, None)
        if method is None:
            raise CodegenError(f"{e.loc}: cannot translate a {type(e).__name__}")
        return method(e)

    def _IntLit(self, e: A.IntLit) -> str:
        return f"Value::integer({e.value}LL)"

    def _BoolLit(self, e: A.BoolLit) -> str:
        return f"Value::boolean({'true' if e.value else 'false'})"

    def _KindLit(self, e: A.KindLit) -> str:
        return f"Value::kind({e.kind})"

    def _Name(self, e: A.Name) -> str:
        return self.name(e)

    def _MachineLit(self, e: A.MachineLit) -> str:
        return f"machine(cx, {e.kind}, {self.site(e)})"

    def _Call(self, e: A.Call) -> str:
        if e.func not in self.gen.functions:
            return self._fail(408, f"undefined function '{e.func}'")
        return f"fn_{e.func}(cx, {{{', '.join(self.expr(a) for a in e.args)}}})"

    def _item(self, item) -> str:
        if isinstance(item, A.Unpack):
            return f"unpack({self.expr(item.value)})"
        if isinstance(item, A.Wildcard):
            return "wildcard()"
        return self.expr(item)

    def _TupleLit(self, e: A.TupleLit) -> str:
        return f"make_tuple({{{', '.join(self._item(i) for i in e.items)}}}, {self.site(e)})"

    def _Comprehension(self, e: A.Comprehension) -> str:
        iterable = self.expr(e.iterable)
        cname = f"c_{e.var}_{len(self.comprehensions)}"
        self.comprehensions.append((e.var, cname))
        body = self.expr(e.expr)
        self.comprehensions.pop()
        lambda_ = f"[&](const Value &{cname}) -> Value {{ return {body}; }}"
        return f"comprehension({iterable}, {c_string(e.var)}, {lambda_}, {self.site(e)})"

    def _Unary(self, e: A.Unary) -> str:
        return f"{'neg' if e.op == '-' else 'lnot'}({self.expr(e.operand)}, {self.site(e)})"

    def _Binary(self, e: A.Binary) -> str:
        left, right, site = self.expr(e.left), self.expr(e.right), self.site(e)
        if e.op in ("&&", "||"):
            return f'Value::boolean(truth({left}, "{e.op}", {site}) {e.op} truth({right}, "{e.op}", {site}))'
        return f"{_BINARY[e.op]}({{{left}, {right}}}, {site})"

    def _Ternary(self, e: A.Ternary) -> str:
        return f'(truth({self.expr(e.cond)}, "?", {self.site(e)}) ? {self.expr(e.then)} : {self.expr(e.orelse)})'

    def _Member(self, e: A.Member) -> str:
        if e.name not in _MEMBERS:
            return self._fail(408, f"type error: unknown property '{e.name}'", e)
        return f"member({self.expr(e.obj)}, Member::{_MEMBERS[e.name]}, {self.site(e)})"

    def _MethodCall(self, e: A.MethodCall) -> str:
        if e.name not in _METHODS:
            return self._fail(408, f"type error: unknown method '{e.name}'", e)
        values = ", ".join(self.expr(x) for x in (e.obj, *e.args))
        return f"method(cx, Method::{_METHODS[e.name]}, {{{values}}}, {self.site(e)})"

    def _Index(self, e: A.Index) -> str:
        items = ", ".join([self.expr(e.obj)] + [self._item(i) for i in e.items])
        return f"index({{{items}}}, {self.site(e)})"

    def _Slice(self, e: A.Slice) -> str:
        bounds = [self.expr(b) if b is not None else "Value()" for b in (e.lo, e.hi)]
        return f"slice({{{self.expr(e.obj)}, {bounds[0]}, {bounds[1]}}}, {self.site(e)})"

    # ---- statements

    def assign(self, s: A.Assign) -> str:
        value = self.expr(s.value)  # before the name becomes a local: `x = x + 1` reads the outer x
        if self.func is None:
            return f"cx.globals[G_{s.name}] = {value};"
        if s.name in self.locals:
            return f"v_{s.name} = {value};"
        self.locals.add(s.name)
        return f"Value v_{s.name} = {value};"

    def print(self, s: A.Print) -> str:
        pieces = ", ".join(c_string(p) for p in s.fmt.split("{}"))
        return f"print({{{pieces}}}, {{{', '.join(self.expr(a) for a in s.args)}}});"


class _Generator:
    def __init__(self, program: A.Program):
        self.program = program
        self.lines = program.source.splitlines()
        self.source_name = next((s.loc.file for s in program.statements), "<string>")
        # The global variables in order of first assignment; a dict (ordered, hashed) keeps lookups linear in
        # the number of assignments.
        self.globals: list[str] = list(dict.fromkeys(s.name for s in program.statements if isinstance(s, A.Assign)))
        self.global_names: frozenset[str] = frozenset(self.globals)
        self.functions = program.functions()

    def cite(self, node) -> str:
        """`file:line: <the DSL line>` for the comment above a generated block."""
        line = node.loc.line
        if 1 <= line <= len(self.lines):
            text = self.lines[line - 1].strip()
        else:
            text = format_statement(node).splitlines()[0] if not isinstance(node, A.Return) else "return ...;"
        return f"{comment_text(self.source_name)}:{line}: {comment_text(text)[:110]}"

    def function(self, f: A.FuncDef) -> dict:
        scope = _Scope(self, f.name, f.params)
        lines = [f"const Value *a = arguments(args, {len(f.params)}, F);"]
        for k, p in enumerate(f.params):
            lines.append(f'const Value &p_{p.name} = param(a[{k}], Value::{_PARAM_TYPES[p.type]}, "{p.type}", '
                         f'"{p.name}", F);')
        if not f.params:
            lines[0] = "arguments(args, 0, F);"
        for s in f.body:
            lines.append(f"// {self.cite(s)}")
            lines.append(scope.assign(s) if isinstance(s, A.Assign) else scope.print(s))
        lines.append(f"// {self.cite(f.ret)}")
        lines.append(f"return {scope.expr(f.ret.value)};")
        return {"name": f.name, "cite": self.cite(f), "lines": lines}

    def load(self) -> list[str]:
        scope = _Scope(self, None)
        lines = []
        for s in self.program.statements:
            if isinstance(s, (A.Assign, A.Print)):
                lines.append(f"// {self.cite(s)}")
                lines.append(scope.assign(s) if isinstance(s, A.Assign) else scope.print(s))
        return lines

    # ---- tables

    def _rows(self, kind, key, code) -> list[dict]:
        """One row per (statement of type `kind`, task name), keeping only the latest of identical selectors.

        `key(stmt, task)` gives the selector tokens; `code(pos, stmt, task)` the C++ initializer."""
        latest: dict[tuple, tuple[int, object, str | None]] = {}
        for pos, s in enumerate(self.program.statements):
            if not isinstance(s, kind):
                continue
            for task in (None,) if s.tasks.names is None else [i.name for i in s.tasks.names]:
                latest[key(s, task)] = (pos, s, task)
        rows = sorted(latest.values(), key=lambda r: (r[0], r[2] or ""))
        return [{"cite": self.cite(s), "code": code(pos, s, task)} for pos, s, task in rows]

    @staticmethod
    def _task(task: str | None) -> str:
        return "nullptr" if task is None else c_string(task)

    @staticmethod
    def _region(sel: A.RegionSel) -> str:
        if sel.index is not None:
            return f"RegionSel{{RegionSel::INDEX, nullptr, {sel.index}LL}}"
        if sel.name is not None:
            return f"RegionSel{{RegionSel::NAME, {c_string(sel.name)}, 0}}"
        return "RegionSel{RegionSel::ANY, nullptr, 0}"

    @staticmethod
    def _token(x) -> str:
        return "*" if x is None or isinstance(x, A.Star) else x.name

    @staticmethod
    def _region_token(sel: A.RegionSel) -> str:
        return "*" if sel.is_wildcard else str(sel.index) if sel.index is not None else sel.name

    @staticmethod
    def _layout(constraints) -> str:
        order = dims = align = -1
        op, nbytes, exact, compact = "==", 0, False, False
        for c in constraints:
            if c.name in ("SOA", "AOS"):
                order = int(c.name == "AOS")
            elif c.name in ("F_order", "C_order"):
                dims = int(c.name == "C_order")
            elif c.name == "No_Align":
                align = 0
            elif c.name == "Align":
                align, op, nbytes = 1, c.op, c.value
            elif c.name == "Exact":
                exact = True
            elif c.name == "Compact":
                compact = True
        return (f"LayoutSpec{{{order}, {dims}, {align}, {c_string(op)}, {nbytes}LL, {str(exact).lower()}, "
                f"{str(compact).lower()}}}")

    def tables(self) -> tuple[list[dict], list[dict]]:
        def line(s):
            return s.loc.line

        def kinds(items):
            return "{" + ", ".join(k.name for k in items) + "}"

        wrappers: dict[tuple[str, str], dict] = {}

        def map_fn(pos, s, task):
            if s.func.name not in self.functions:
                raise CodegenError(f"{s.loc}: mapping function '{s.func.name}' is not defined")
            if isinstance(s, A.IndexTaskMapStmt) and s.machine is not None:
                if s.machine.name not in self.global_names:
                    raise CodegenError(f"{s.loc}: machine '{s.machine.name}' is not a global variable")
                # One wrapper per (function, machine), numbered: names built from the two DSL names could clash.
                key = (s.func.name, s.machine.name)
                if key not in wrappers:
                    wrappers[key] = {"name": f"map3_{len(wrappers)}", "func": s.func.name,
                                     "machine": s.machine.name, "cite": self.cite(s), "site": _site(None, s.func.loc)}
                fn = wrappers[key]["name"]
            else:
                fn = f"fn_{s.func.name}"
            kind = f", {s.tasks.kind}" if s.tasks.kind else ""
            return f"MapRule{{{pos}, {line(s)}, {self._task(task)}, {fn}, {c_string(s.func.name)}{kind}}}"

        tables = [
            ("Task: processor kinds (dsl-reference.md §7.1)", self._rows(
                A.TaskStmt, lambda s, t: (t,),
                lambda p, s, t: f"TaskRule{{{p}, {line(s)}, {self._task(t)}, {kinds(s.kinds)}}}")),
            ("Region: memory kinds (§7.2)", self._rows(
                A.RegionStmt, lambda s, t: (t, self._region_token(s.region), self._token(s.proc)),
                lambda p, s, t: f"RegionRule{{{p}, {line(s)}, {self._task(t)}, {self._region(s.region)}, "
                                f"{'ANY' if isinstance(s.proc, A.Star) else s.proc.name}, {kinds(s.memories)}}}")),
            ("Layout: instance layouts (§7.3)", self._rows(
                A.LayoutStmt, lambda s, t: (t, self._region_token(s.region), self._token(s.target)),
                lambda p, s, t: f"LayoutRule{{{p}, {line(s)}, {self._task(t)}, {self._region(s.region)}, "
                                f"{'ANY' if isinstance(s.target, A.Star) else s.target.name}, "
                                f"{self._layout(s.constraints)}}}")),
            ("InstanceLimit (§7.4)", self._rows(
                A.InstanceLimitStmt, lambda s, t: (t, self._token(s.proc)),
                lambda p, s, t: f"LimitRule{{{p}, {line(s)}, {self._task(t)}, "
                                f"{'ANY' if not isinstance(s.proc, A.Kind) else s.proc.name}, {s.count}LL}}")),
            ("CollectMemory (§7.5)", self._rows(
                A.CollectMemoryStmt, lambda s, t: (t, self._region_token(s.region), id(s)),
                lambda p, s, t: f"CollectRule{{{p}, {line(s)}, {self._task(t)}, {self._region(s.region)}}}")),
            ("IndexTaskMap (§7.6)", self._rows(A.IndexTaskMapStmt, lambda s, t: (t, s.tasks.kind), map_fn)),
            ("SingleTaskMap (§7.7)", self._rows(A.SingleTaskMapStmt, lambda s, t: (t, s.tasks.kind), map_fn)),
            ("ControlReplicate (§7.8)", self._rows(
                A.ControlReplicateStmt, lambda s, t: (t,),
                lambda p, s, t: f"ReplicateRule{{{p}, {line(s)}, {self._task(t)}}}")),
            ("Tunable: answers to the application's tunables", self._tunables()),
        ]
        return [{"title": title, "rows": rows} for title, rows in tables], list(wrappers.values())

    def _tunables(self) -> list[dict]:
        """One row per Tunable statement (the run-time takes the latest of one ID)."""
        rows = []
        for pos, s in enumerate(self.program.statements):
            if isinstance(s, A.TunableStmt):
                size = A.TUNABLE_TYPES[s.type][0]
                # The bit pattern of the value, so that uint64 values above INT64_MAX keep their bytes.
                bits = s.value & (2**64 - 1)
                rows.append({"cite": self.cite(s), "code": f"TunableRule{{{pos}, {s.loc.line}, {s.id}LL, "
                                                           f"static_cast<int64_t>({bits}ULL), {size}}}"})
        return rows


def dsl_sha256(program: A.Program) -> str:
    """The sha256 of the canonical text of `program` (hex), parentheses written or not."""
    return hashlib.sha256(format_program(A.without_parens(program)).encode()).hexdigest()


def generate(program: A.Program) -> str:
    """The C++ source of the mapper library for `program` (which should have passed `mapperopt.dsl.check`).

    Positions in the generated code (and in the run-time messages of the mapper) are those of `program`'s nodes.

    Raises:
        CodegenError: a node the generator does not know (an unchecked or malformed program).
    """
    gen = _Generator(program)
    functions = [gen.function(f) for f in program.statements if isinstance(f, A.FuncDef)
                 and gen.functions.get(f.name) is f]
    tables, wrappers = gen.tables()
    return _template().render(
        version=CODEGEN_VERSION, source_name=gen.source_name, source_name_c=c_string(gen.source_name),
        sha=dsl_sha256(program),
        globals=gen.globals, functions=functions, wrappers=wrappers, load=gen.load(), tables=tables,
    )
