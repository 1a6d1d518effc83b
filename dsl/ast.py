"""Typed syntax tree of the mapping DSL (dsl-reference.md §3).

Every node is a frozen dataclass. Its last field, `loc`, is the source position of the node's first token; it is
keyword-only and excluded from equality, so two programs compare equal when they have the same structure whatever
their layout (`parse(format_program(p)) == p`). Names of tasks, regions, kinds and types are plain strings exactly as
written. Grouping parentheses leave no node.

Node overview:

* `Program` holds `Statement`s (`;` on its own leaves no node) and the comments of the file.
* Mapping statements: `TaskStmt`, `RegionStmt`, `LayoutStmt`, `InstanceLimitStmt`, `CollectMemoryStmt`,
  `IndexTaskMapStmt`, `SingleTaskMapStmt`, `ControlReplicateStmt`. Their task field is a `TaskSel`; the region field a
  `RegionSel`; kinds are `Kind`.
* Definitions: `FuncDef` (with `Param`s, body `Assign`/`Print` statements and a `Return`), `Assign`, `Print`.
* Expressions (`Expr`): `IntLit`, `BoolLit`, `KindLit`, `Name`, `Call`, `MachineLit`, `TupleLit`, `Comprehension`,
  `Unary`, `Binary`, `Ternary`, `Member`, `MethodCall`, `Index`, `Slice`; and, only as items of `TupleLit`/`Index`,
  `Unpack` (`*e`) and `Wildcard` (a lone `*` in a machine index). Each `Expr` counts in `parens` the pairs of
  parentheses written around it, for the formatter only (equality and hashing ignore it).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Union

PROC_KINDS = ("CPU", "GPU", "OMP", "IO", "PY")
MEM_KINDS = ("SYSMEM", "FBMEM", "ZCMEM", "RDMEM", "SOCKMEM", "VIRTUAL")
# Legion's names of the DSL's kinds, and the names a Legion user may write for them (Legion's, near ones) -> the
# DSL's kind (None: UTIL_PROC, which has none). A hint names the kind meant, which an edit-distance guess can miss
# (`GPU_MEM` is nearer ZCMEM than FBMEM).
LEGION_NAMES = {"GPU": "TOC_PROC", "CPU": "LOC_PROC", "OMP": "OMP_PROC", "IO": "IO_PROC", "PY": "PY_PROC",
                "SYSMEM": "SYSTEM_MEM", "FBMEM": "GPU_FB_MEM", "ZCMEM": "Z_COPY_MEM", "RDMEM": "REGDMA_MEM",
                "SOCKMEM": "SOCKET_MEM"}
LEGION_KINDS = {**{legion: kind for kind, legion in LEGION_NAMES.items()}, "UTIL_PROC": None,
                "GPU_MEM": "FBMEM", "FB_MEM": "FBMEM", "SYS_MEM": "SYSMEM", "ZC_MEM": "ZCMEM", "ZERO_COPY_MEM": "ZCMEM",
                **{f"{kind}_PROC": kind for kind in PROC_KINDS}}
# Legion's processor kinds without `_PROC` (`LOC`, `TOC`, `UTIL`), as a C++ user shortens them: only in capitals,
# as Legion writes them (`loc` is a variable's name as likely).
LEGION_SHORT = {**{LEGION_NAMES[kind].removesuffix("_PROC"): kind for kind in PROC_KINDS}, "UTIL": None}


def legion_kind_hint(word: str, expected=PROC_KINDS + MEM_KINDS) -> str | None:
    """The hint for `word`, a name of `LEGION_KINDS` (any case) or `LEGION_SHORT` where one of the kinds `expected`
    goes: the DSL's kind it means (`TOC_PROC`, `TOC`: "did you mean 'GPU'? ..."); None for another word."""
    name = word.upper()
    if word in LEGION_SHORT and word not in PROC_KINDS:
        name = f"{word}_PROC"
    if name not in LEGION_KINDS:
        return None
    kind = LEGION_KINDS[name]
    if kind is None:
        return (f"Legion's {name} processors do the runtime's own work, never tasks: the DSL has no kind for them; "
                f"tasks run on {', '.join(PROC_KINDS)}")
    said = f"Legion's {LEGION_NAMES[kind]} is the DSL's {kind}"
    if kind in expected:
        return f"did you mean '{kind}'? ({said})"
    return f"{said}, a {'processor' if kind in PROC_KINDS else 'memory'} kind, which does not go here"


CONSTRAINT_WORDS = ("SOA", "AOS", "C_order", "F_order", "Align", "No_Align", "Exact", "Compact")
ALIGN_OPS = ("==", "!=", "<", "<=", ">", ">=")
# Value types of a Tunable answer -> (bytes, smallest value, largest value).
TUNABLE_TYPES = {
    "int8": (1, -2**7, 2**7 - 1), "int16": (2, -2**15, 2**15 - 1), "int32": (4, -2**31, 2**31 - 1),
    "int64": (8, -2**63, 2**63 - 1), "uint8": (1, 0, 2**8 - 1), "uint16": (2, 0, 2**16 - 1),
    "uint32": (4, 0, 2**32 - 1), "uint64": (8, 0, 2**64 - 1), "bool": (1, 0, 1),
}
PARAM_TYPES = ("Task", "int", "bool", "IPoint", "ISpace", "MSpace")
RESERVED = frozenset(
    (
        "Task Region Layout InstanceLimit CollectMemory IndexTaskMap SingleTaskMap ControlReplicate Tunable def "
        "return print "
        "int bool IPoint ISpace MSpace Machine tuple for in True False"
    ).split()
    + list(PROC_KINDS)
    + list(MEM_KINDS)
    + list(CONSTRAINT_WORDS)
)
# Binary operators by precedence level (dsl-reference.md §8.1), loosest first.
BINARY_LEVELS = (("||",), ("&&",), ("==", "!="), ("<", "<=", ">", ">="), ("+", "-"), ("*", "/", "%"))


@dataclass(frozen=True)
class Loc:
    """A source position: 1-based `line` and `col` of a token in `file`; `line` 0 (with `col` 0) is the whole file,
    for what no line of it holds.

    `end_line`/`end_col` (1-based, exclusive column) give the end of the node's last token when known; they are used to
    keep comments next to their statement when formatting.
    """

    file: str
    line: int
    col: int
    end_line: int | None = None
    end_col: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}" if self.line else self.file


NOLOC = Loc("<none>", 0, 0)


def _loc() -> Loc:
    return field(default=NOLOC, compare=False, repr=False, kw_only=True)


def _parens() -> int:
    # The pairs of parentheses written around an expression (`((a))`: 2), so that the formatter keeps them. Not part
    # of equality or hashing: `(a) + 1` and `a + 1` are one program (one generated mapper, one point of a search).
    return field(default=0, compare=False, repr=False, kw_only=True)


# ---------------------------------------------------------------------------------------------------- selectors


@dataclass(frozen=True)
class Star:
    """The wildcard `*` in a selector field (task, region or third field)."""

    loc: Loc = _loc()


@dataclass(frozen=True)
class Ident:
    """A name in a selector: a task name, a region name, or a function/machine name of a map statement."""

    name: str
    loc: Loc = _loc()


@dataclass(frozen=True)
class Kind:
    """A processor kind (`CPU GPU OMP IO PY`) or memory kind (`SYSMEM FBMEM ZCMEM RDMEM SOCKMEM VIRTUAL`)."""

    name: str
    loc: Loc = _loc()

    @property
    def is_memory(self) -> bool:
        return self.name in MEM_KINDS


@dataclass(frozen=True)
class TaskSel:
    """Task field: `names` is None for `*`, else the listed task names (non-empty, in source order). `kind` is set
    (with `names` None) for the kind selector of `IndexTaskMap`/`SingleTaskMap` (`IndexTaskMap GPU f;`): the tasks
    whose chosen processor kind is `kind`."""

    names: tuple[Ident, ...] | None
    kind: str | None = None
    loc: Loc = _loc()

    @property
    def is_wildcard(self) -> bool:
        return self.names is None and self.kind is None


@dataclass(frozen=True)
class RegionSel:
    """Region field: exactly one of `name` (a region name) and `index` (0-based requirement index) is set, or neither
    for `*`."""

    name: str | None = None
    index: int | None = None
    loc: Loc = _loc()

    @property
    def is_wildcard(self) -> bool:
        return self.name is None and self.index is None


@dataclass(frozen=True)
class Constraint:
    """One layout constraint: `name` in `CONSTRAINT_WORDS`; for `Align`, `op` in `ALIGN_OPS` and `value` in bytes."""

    name: str
    op: str | None = None
    value: int | None = None
    loc: Loc = _loc()
    value_loc: Loc = _loc()  # of the Align value, where a diagnostic about it points


# ---------------------------------------------------------------------------------------------------- expressions


@dataclass(frozen=True)
class IntLit:
    """An integer literal (non-negative; `-3` is `Unary('-', IntLit(3))`)."""

    value: int
    loc: Loc = _loc()
    parens: int = _parens()


@dataclass(frozen=True)
class BoolLit:
    """`True` or `False`."""

    value: bool
    loc: Loc = _loc()
    parens: int = _parens()


@dataclass(frozen=True)
class KindLit:
    """A processor or memory kind used as a value (argument of `has`)."""

    kind: str
    loc: Loc = _loc()
    parens: int = _parens()


@dataclass(frozen=True)
class Name:
    """A variable reference (local, parameter or global)."""

    name: str
    loc: Loc = _loc()
    parens: int = _parens()


@dataclass(frozen=True)
class Call:
    """A call of a user function `func(args...)`."""

    func: str
    args: tuple[Expr, ...]
    loc: Loc = _loc()
    parens: int = _parens()


@dataclass(frozen=True)
class MachineLit:
    """`Machine(K)`: the 2-D model (nodes, processors per node) of the processors of kind `kind`."""

    kind: str
    loc: Loc = _loc()
    parens: int = _parens()


@dataclass(frozen=True)
class Unpack:
    """`*value`: splices a tuple into a tuple literal or a machine index."""

    value: Expr
    loc: Loc = _loc()


@dataclass(frozen=True)
class Wildcard:
    """A lone `*` in a machine index: every index of that dimension."""

    loc: Loc = _loc()


@dataclass(frozen=True)
class TupleLit:
    """A tuple literal `(a, b)` / `(a,)`; `items` is non-empty, items may be `Unpack`."""

    items: tuple[Expr | Unpack, ...]
    loc: Loc = _loc()
    parens: int = _parens()


@dataclass(frozen=True)
class Comprehension:
    """`tuple(expr for var in iterable)`."""

    expr: Expr
    var: str
    iterable: Expr
    loc: Loc = _loc()
    parens: int = _parens()


@dataclass(frozen=True)
class Unary:
    """Prefix `-` (int or tuple) or `!` (bool)."""

    op: str
    operand: Expr
    loc: Loc = _loc()
    parens: int = _parens()


@dataclass(frozen=True)
class Binary:
    """A binary operation; `op` is one of the operators of `BINARY_LEVELS` (`&&`/`||` short-circuit)."""

    op: str
    left: Expr
    right: Expr
    loc: Loc = _loc()
    parens: int = _parens()


@dataclass(frozen=True)
class Ternary:
    """`cond ? then : orelse` (right-associative; only the chosen branch is evaluated)."""

    cond: Expr
    then: Expr
    orelse: Expr
    loc: Loc = _loc()
    parens: int = _parens()


@dataclass(frozen=True)
class Member:
    """A property `obj.name` (e.g. `size`, `volume`, `ipoint`, `parent`)."""

    obj: Expr
    name: str
    loc: Loc = _loc()
    parens: int = _parens()


@dataclass(frozen=True)
class MethodCall:
    """A method call `obj.name(args...)` (e.g. `merge`, `has`, `processor`)."""

    obj: Expr
    name: str
    args: tuple[Expr, ...]
    loc: Loc = _loc()
    parens: int = _parens()


@dataclass(frozen=True)
class Index:
    """Subscript `obj[i0, i1, ...]`: a tuple element or a machine processor/processor set. `items` is non-empty;
    items may be `Unpack` or `Wildcard`."""

    obj: Expr
    items: tuple[Expr | Unpack | Wildcard, ...]
    loc: Loc = _loc()
    parens: int = _parens()


@dataclass(frozen=True)
class Slice:
    """Slice `obj[lo:hi]` with Python semantics; `lo`/`hi` are None when omitted."""

    obj: Expr
    lo: Expr | None
    hi: Expr | None
    loc: Loc = _loc()
    parens: int = _parens()


Expr = Union[
    IntLit, BoolLit, KindLit, Name, Call, MachineLit, TupleLit, Comprehension, Unary, Binary, Ternary, Member,
    MethodCall, Index, Slice,
]


# ---------------------------------------------------------------------------------------------------- statements


@dataclass(frozen=True)
class TaskStmt:
    """`Task <tasks> K1,K2,...;` — processor-kind preference (§7.1)."""

    tasks: TaskSel
    kinds: tuple[Kind, ...]
    loc: Loc = _loc()


@dataclass(frozen=True)
class RegionStmt:
    """`Region <tasks> <region> <proc|*> M1,M2,...;` — memory placement (§7.2). `proc` is a `Kind` or `Star`."""

    tasks: TaskSel
    region: RegionSel
    proc: Kind | Star
    memories: tuple[Kind, ...]
    loc: Loc = _loc()


@dataclass(frozen=True)
class LayoutStmt:
    """`Layout <tasks> <region> <proc|mem|*> C1 C2 ...;` — instance layout (§7.3). `target` is a `Kind` (processor
    or memory) or `Star`."""

    tasks: TaskSel
    region: RegionSel
    target: Kind | Star
    constraints: tuple[Constraint, ...]
    loc: Loc = _loc()


@dataclass(frozen=True)
class InstanceLimitStmt:
    """`InstanceLimit <tasks> [<proc>|*] N;` (§7.4). `proc` is None when omitted."""

    tasks: TaskSel
    proc: Kind | Star | None
    count: int
    loc: Loc = _loc()
    count_loc: Loc = _loc()  # of the count, where a diagnostic about it points


@dataclass(frozen=True)
class CollectMemoryStmt:
    """`CollectMemory <tasks> <region>;` (§7.5)."""

    tasks: TaskSel
    region: RegionSel
    loc: Loc = _loc()


@dataclass(frozen=True)
class IndexTaskMapStmt:
    """`IndexTaskMap <tasks> f;`, or the older `IndexTaskMap <tasks> m f;` (§7.6); `machine` is None in the first
    form."""

    tasks: TaskSel
    func: Ident
    machine: Ident | None = None
    loc: Loc = _loc()


@dataclass(frozen=True)
class SingleTaskMapStmt:
    """`SingleTaskMap <tasks> f;` (§7.7)."""

    tasks: TaskSel
    func: Ident
    loc: Loc = _loc()


@dataclass(frozen=True)
class ControlReplicateStmt:
    """`ControlReplicate <tasks>;` (§7.8)."""

    tasks: TaskSel
    loc: Loc = _loc()


@dataclass(frozen=True)
class TunableStmt:
    """`Tunable <id> = <value> [<type>];` — the answer to the application's request for tunable `id`. `type` is a
    key of `TUNABLE_TYPES` (default int64; bool for True/False), `value` an int (1/0 for True/False)."""

    id: int
    value: int
    type: str
    loc: Loc = _loc()
    value_loc: Loc = _loc()  # of the value (its sign included), where E226 points
    type_loc: Loc = _loc()  # of the type as written, else the value's


@dataclass(frozen=True)
class Assign:
    """`name = value;` — a global assignment at top level, a local one in a function body."""

    name: str
    value: Expr
    loc: Loc = _loc()


@dataclass(frozen=True)
class Print:
    """`print("fmt", args...);` — `fmt` is the string without quotes; each `{}` takes the next argument."""

    fmt: str
    args: tuple[Expr, ...]
    loc: Loc = _loc()


@dataclass(frozen=True)
class Param:
    """A function parameter `type name`; `type` in `PARAM_TYPES`."""

    type: str
    name: str
    loc: Loc = _loc()


@dataclass(frozen=True)
class Return:
    """`return value;` — the last statement of every function body."""

    value: Expr
    loc: Loc = _loc()


@dataclass(frozen=True)
class FuncDef:
    """`def name(params) { body... return ...; }`; `body` holds the `Assign`/`Print` statements before `ret`."""

    name: str
    params: tuple[Param, ...]
    body: tuple[Assign | Print, ...]
    ret: Return
    loc: Loc = _loc()
    # The line of the opening `{` (0 when unknown), so that the formatter keeps comments and blank lines in place.
    brace_line: int = field(default=0, compare=False, repr=False, kw_only=True)


Statement = Union[
    TaskStmt, RegionStmt, LayoutStmt, InstanceLimitStmt, CollectMemoryStmt, IndexTaskMapStmt, SingleTaskMapStmt,
    ControlReplicateStmt, TunableStmt, FuncDef, Assign, Print,
]
MAPPING_STATEMENTS = (
    TaskStmt, RegionStmt, LayoutStmt, InstanceLimitStmt, CollectMemoryStmt, IndexTaskMapStmt, SingleTaskMapStmt,
    ControlReplicateStmt,
)


@dataclass(frozen=True)
class Comment:
    """A source comment; `text` includes its `#` or `//` marker, without the line break."""

    text: str
    loc: Loc = _loc()


@dataclass(frozen=True)
class Program:
    """A parsed policy file: its statements in source order. `comments` (not part of equality) lets the formatter
    keep them; `source` is the text it was parsed from (empty for built programs)."""

    statements: tuple[Statement, ...]
    comments: tuple[Comment, ...] = field(default=(), compare=False, repr=False)
    source: str = field(default="", compare=False, repr=False)
    loc: Loc = _loc()

    def named_tasks(self) -> set[str]:
        """The task names the statements list (a `*` or a kind selector names none): with the program's own
        mapper kept, the compiled mapper maps these tasks and hands that mapper every other one."""
        return {i.name for s in self.statements for i in (getattr(s, "tasks", None) and s.tasks.names or ())}

    def functions(self) -> dict[str, FuncDef]:
        """Function definitions by name (the first one where a name is defined twice)."""
        out: dict[str, FuncDef] = {}
        for s in self.statements:
            if isinstance(s, FuncDef):
                out.setdefault(s.name, s)
        return out


def without_parens(node):
    """`node` (a `Program`, a statement, an expression, or a tuple of them) with no parentheses written (`parens` 0
    throughout): formatted, it has only those precedence needs, as in a key of identity (the cache's, the compiled
    mapper's sha) that written parentheses must not change."""
    if isinstance(node, tuple):
        return tuple(without_parens(n) for n in node)
    if not dataclasses.is_dataclass(node) or isinstance(node, (Loc, Comment, type)):
        return node
    changes = {f.name: without_parens(getattr(node, f.name)) for f in dataclasses.fields(node)
               if f.init and f.name not in ("loc", "comments", "source", "parens")}
    return dataclasses.replace(node, **changes, **({"parens": 0} if hasattr(node, "parens") else {}))
