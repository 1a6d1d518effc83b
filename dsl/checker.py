"""Semantic checker (dsl-reference.md §11.3-§11.6, §12): scoping, typing, statement rules, and, given the descriptions,
names, kinds and a static evaluation of the mapping functions over the application's launch domains.

`check(program, app=None, machine=None)` returns every finding as a `Diagnostic`, errors capped at 20, in source
order. Without an application description the name checks (E202-E204, E209, W305) are skipped; without a machine
description, W302/W303 (except for OMP, which never exists) and the static evaluation are skipped.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import itertools
import math
import operator
import re
import shlex
from dataclasses import dataclass
from typing import TextIO

from mapperopt import toolchain
from mapperopt.descriptions import AppDescription, MachineDescription, OtherRegions
from mapperopt.dsl import ast as A
from mapperopt.dsl.errors import MAX_ERRORS, Diagnostic, DslRuntimeError
from mapperopt.dsl.evaluator import (ABSENT_KINDS, DEFAULT_KIND_RANKING, EvaluationLimit, Evaluator, article,
                                     by_precedence, costly_functions, int_op, quoted_names, region_matches,
                                     task_matches)
from mapperopt.dsl.formatter import format_expr, format_statement, meant, selector_name, tunable_value
from mapperopt.dsl.machine import MAX_DIMS, MachineModel, Proc, ProcSet, balance_factors, fmt_tuple
from mapperopt.dsl.parser import abridged
from mapperopt.errors import MapperoptError, closest, extended

BLAS_ELEMENT_BYTES = 8  # the benchmarks' BLAS element (every GEMM is DGEMM: one double field): W327
# Errors that leave the static evaluation's results unchanged (tunables take no part in it): it still runs.
INERT_ERRORS = frozenset({"E224"})
# Tunable IDs 0-10 are Legion's default mapper's own (node and processor counts), answered with 8 bytes.
LEGION_TUNABLES = 11
# Legion's default mapper's tunables (DefaultMapper::DefaultTunables), by ID: DEFAULT_TUNABLE_<name>.
LEGION_TUNABLE_NAMES = ("NODE_COUNT", "LOCAL_CPUS", "LOCAL_GPUS", "LOCAL_IOS", "LOCAL_OMPS", "LOCAL_PYS",
                        "GLOBAL_CPUS", "GLOBAL_GPUS", "GLOBAL_IOS", "GLOBAL_OMPS", "GLOBAL_PYS")


def legion_tunable_on(tid: int, machine: MachineDescription) -> int | None:
    """What Legion's default mapper answers tunable `tid` (0-10) with on `machine` (its node count, or the processors
    of a kind on one node or on all), or None for another ID."""
    if not 0 <= tid < LEGION_TUNABLES:
        return None
    name = LEGION_TUNABLE_NAMES[tid]
    if name == "NODE_COUNT":
        return machine.nodes
    scope, kind = name.split("_")
    per_node = machine.per_node(kind[:-1])
    return per_node * machine.nodes if scope == "GLOBAL" else per_node
# Legion's flags for the processor kinds that --machine does not describe (OMP: ABSENT_KINDS)
LEGION_PROC_FLAGS = {"IO": "-ll:io", "PY": "-ll:py", "UTIL": "-ll:util"}
# Stated limit: expression nesting counted through chains of calls (each call adds the callee's nesting), which
# bounds the depth of evaluation (E111).
MAX_EVAL_NESTING = 300
# memory kinds that exist only when the run sizes them -> the flag
FLAG_SIZED_MEMORIES = {"RDMEM": "-ll:rsize", "SOCKMEM": "-ll:nsize"}
# Stated limit: the largest alignment a Layout may ask for (E227). Legion pads each field (AOS: each element) to it, so
# one far above any page (2^62) makes instance sizes wrap around 2^64 and the run crash; 1 GiB is a huge page's size.
MAX_ALIGN = 1 << 30
MAX_STATIC_POINTS = 4096  # launch points evaluated per task by the static evaluation
MAX_STATIC_STEPS = 100_000  # expression evaluations of the whole static evaluation (about 1 s)
MAX_EXPLAIN_POINTS = 16_384  # launch points `explain` evaluates per index launch (circuit's three: about 10 s)
# Run-time codes found by static evaluation -> the checker's codes (§11.6).
STATIC_CODES = {"R400": "E205", "R405": "E205", "R401": "E219", "R409": "E217", "R402": "E209", "R404": "E209"}

_MEMBERS = {
    "MSpace": ("size", "volume", "len", "has", "merge", "split", "swap", "slice", "reverse", "balance_split",
               "auto_split", "greedy_split"),
    "tuple": ("len", "volume", "size"),
    "Task": ("ipoint", "ispace", "parent", "processor"),
    "processor": ("has",),
}
_METHOD_ARGS = {  # receiver, method -> argument types
    ("MSpace", "merge"): ("int", "int"), ("MSpace", "split"): ("int", "int"), ("MSpace", "swap"): ("int", "int"),
    ("MSpace", "slice"): ("int", "int", "int"), ("MSpace", "reverse"): ("int",),
    ("MSpace", "balance_split"): ("int", "int"), ("MSpace", "auto_split"): ("int", "tuple"),
    ("MSpace", "greedy_split"): ("int", "tuple"), ("MSpace", "has"): ("kind",), ("processor", "has"): ("kind",),
    ("Task", "processor"): ("MSpace",),
}
_PARAM_TYPE = {"Task": "Task", "int": "int", "bool": "bool", "IPoint": "tuple", "ISpace": "tuple", "MSpace": "MSpace"}


# What a benchmark's own code does with instances of another dimension order than its variant's constraint, by task
# (E223's note names it only for a benchmark whose requirements of that task get them).
_ORDER_FAILURES = {("stencil", "stencil"): "the CPU stencil kernel's stride assertion aborts",
                   **{(gemm, "task_4"): "task_4's BLAS call aborts with `DGEMM parameter number N had an illegal value`"
                      for gemm in ("cannon", "summa", "pumma", "johnson", "solomonik", "cosma")}}


def _layout_at_run_time(constraints: list[str], app: AppDescription, tasks) -> str:
    """What a layout against a variant's layout constraint does at run time (E223, W312), `constraints` being those
    of Legion's names it conflicts with, "Ordering" (a dimension order, SOA or AOS) and "Alignment", for the
    requirements of `tasks` (names) of `app`: Legion checks a mapper's instances against the variant only with
    -lg:safe_mapper (release builds), naming the constraint failed; otherwise the task runs on them as they are. For a
    benchmark, at which sizes `mapperopt run` passes that flag (its configuration) and what the code of those tasks
    does (`_ORDER_FAILURES`); for a user's program, where the flag would go."""
    failed = " or ".join(f"`Invalid mapper output ... fails to satisfy the corresponding {c} layout constraint`"
                         for c in constraints)
    stops = f"Legion stops the run when the task is mapped ({failed})"
    own = [_ORDER_FAILURES[app.app, t] for t in dict.fromkeys(tasks)
           if "Ordering" in constraints and not app.discovered_as and (app.app, t) in _ORDER_FAILURES]
    code = []
    if "Ordering" in constraints:
        code.append("one that checks its strides aborts, one that reads through the strides works, one that assumes "
                    "the order computes wrong numbers")
    if "Alignment" in constraints:
        code.append("one that assumes the alignment (aligned vector loads) may crash or compute wrong numbers")
    decides = f"the task runs on these instances and its own code decides: {'; '.join(code)}" + (
        f" (here {' and '.join(own)})" if own else "")
    safe = None
    if not app.discovered_as:
        from mapperopt.benchmarks.apps import known_benchmarks, load_config

        if app.app in known_benchmarks():
            sizes = load_config(app.app).sizes
            safe = [s for s, c in sizes.items() if "-lg:safe_mapper" in c.legion_flags]
            others = [s for s in sizes if s not in safe]
    if safe is None:
        return ("at run time: Legion checks instances against a variant's layout constraints only when the run's flags "
                "include -lg:safe_mapper (`legion_flags` in the application file, or after `--`), which stops the "
                f"run when the task is mapped ({failed}); without it {decides}")
    if not safe:
        return (f"at run time: `mapperopt run {app.app}` passes no -lg:safe_mapper, so {decides}; with it (given after "
                f"`--`), {stops}")
    return (f"at run time: `mapperopt run {app.app}` passes -lg:safe_mapper at size{'s' if len(safe) > 1 else ''} "
            f"{_and(safe)}, where {stops}" + (
                f"; at size{'s' if len(others) > 1 else ''} {_and(others)}, without it, {decides}" if others else ""))


def _never_seen(mem: str, proc: str | None) -> str | None:
    """Why processors of kind `proc` never see memory kind `mem` on any machine (a GPU's framebuffer is its own), or
    None."""
    return f"{mem} is a GPU's memory" if mem == "FBMEM" and proc not in (None, "GPU") else None


def _sized_hints(kinds) -> tuple[str, ...]:
    """The hint of W302 and E221 for each memory kind of `kinds` (names) that exists only when the run sizes it."""
    return tuple(f"{k} exists only when the run sizes it ({FLAG_SIZED_MEMORIES[k]} MiB): give the run's flags after "
                 f"`--`, e.g. `-- {FLAG_SIZED_MEMORIES[k]} 64`, or in an application file the size's "
                 f"`legion_flags: [\"{FLAG_SIZED_MEMORIES[k]}\", \"64\"]`"
                 for k in kinds if k in FLAG_SIZED_MEMORIES)


@dataclass(frozen=True)
class T:
    """Static type of an expression: `name` (int, bool, tuple, MSpace, processor, processor set, Task, kind) or
    None when unknown; `n` is a tuple's length or a model's number of dimensions, `kind` a model's processor kind,
    `const` an int's or bool's value, when known; `spread` the operation that made a tuple from an int and a tuple
    (element-wise: `i / t`) and its tuple operand, for messages where an int was meant; `split` the `split` call that
    made a model, for messages where it is indexed as the model it split."""

    name: str | None
    n: int | None = None
    kind: str | None = None
    const: int | bool | None = None
    spread: tuple[A.Binary, A.Expr] | None = dataclasses.field(default=None, compare=False)
    split: A.MethodCall | None = dataclasses.field(default=None, compare=False)


UNKNOWN = T(None)
# Python's built-in functions a DSL author may call, and the DSL's way to write each (E200's hint).
_PYTHON_BUILTINS = {"len": "a tuple's length is ",
                    "min": "write it with the conditional expression, e.g. a < b ? a : b",
                    "max": "write it with the conditional expression, e.g. a > b ? a : b",
                    "abs": "write it with the conditional expression, e.g. x < 0 ? -x : x"}


class Diagnostics(list):
    """The diagnostics `check` returns: the first MAX_ERRORS errors, then the first error of each other code;
    `omitted` counts the errors left out, `left_out` them per (file, code)."""

    omitted: int = 0
    left_out: dict[tuple[str, str], int]

    def __init__(self, *args):
        super().__init__(*args)
        self.left_out = {}


def check(program: A.Program, app: AppDescription | None = None,
          machine: MachineDescription | None = None, stream: TextIO | None = None) -> Diagnostics:
    """All diagnostics of `program` (errors, warnings and notes), sorted by position: the first 20 errors, then the
    first of each other code (the number of the others in the result's `omitted`, per file and code in `left_out`).

    Args:
        program: the parsed policy.
        app: the application description, for name, kind and launch checks and static evaluation.
        machine: the machine description, for W302/W303 and static evaluation.
        stream: where the `print` output of the static evaluation goes, one line per print (None: nowhere).
    """
    return _Checker(program, app, machine, stream).run()


def unused_definitions(program: A.Program) -> list[A.FuncDef | A.Assign]:
    """The functions and machine models (`m = Machine(KIND);` at top level) of `program` that nothing uses: no map
    statement, no other top-level statement and no function that is itself used. In source order. Dropping them
    leaves the mapping unchanged: a function only runs when called, and a machine model has no effect of its own."""
    return _unused_and_references(program)[0]


def _unused_and_references(program: A.Program, models: frozenset[str] = frozenset()
                           ) -> tuple[list, dict[int, set[str]]]:
    """`unused_definitions(program)`, and the names each statement it read reads (by `id` of the statement); with
    `models`, the global names of these machine models count too (`grid = m.auto_split(0, (2, 2));`: W304 reports
    them, but dropping one could drop an error its transformation raises at load). Each statement is walked at
    most once, so the whole is linear in the program's size."""
    removable = [s for s in program.statements
                 if isinstance(s, A.FuncDef) or (isinstance(s, A.Assign)
                                                 and (isinstance(s.value, A.MachineLit) or s.name in models))]
    definitions: dict[str, list] = {}
    for s in removable:
        definitions.setdefault(s.name, []).append(s)
    ids = {id(s) for s in removable}
    refs: dict[int, set[str]] = {}

    def references(s) -> set[str]:
        if id(s) not in refs:
            refs[id(s)] = _references(s)
        return refs[id(s)]

    pending = [n for s in program.statements if id(s) not in ids for n in references(s)]
    live: set[str] = set()
    while pending:
        name = pending.pop()
        if name not in live:
            live.add(name)
            pending.extend(n for s in definitions.get(name, ()) for n in references(s))
    return [s for s in removable if s.name not in live], refs


def map_kinds(program: A.Program) -> list[str | None]:
    """For each statement of `program`, in order: for an IndexTaskMap or SingleTaskMap statement, the processor kind
    its function returns processors of, where the types tell (`m[i, 0]` with `m = Machine(GPU)` is a GPU; in the
    older form `IndexTaskMap t m f;`, the kind of `m`); None for any other statement, or where the kind is unknown (a
    ternary of two kinds, a program with errors that hide it)."""
    checker = _Checker(program, None, None)
    checker._scopes()
    checker._recursion()
    if any(d.code == "E111" for d in checker.diags):  # typing would nest as deep
        return [None] * len(program.statements)
    checker._types()
    out: list[str | None] = []
    for s in program.statements:
        t = UNKNOWN
        if isinstance(s, A.IndexTaskMapStmt) and s.machine is not None:
            t = checker.global_types.get(s.machine.name, UNKNOWN)
            t = t if t.name == "MSpace" else UNKNOWN
        elif isinstance(s, (A.IndexTaskMapStmt, A.SingleTaskMapStmt)):
            t = checker.return_types.get(s.func.name, UNKNOWN)
            t = t if t.name in ("processor", "processor set") else UNKNOWN
        out.append(t.kind)
    return out


def launch_counts_text(launches: dict[str, int]) -> str:
    """A task's launches in discovery (`TaskInfo.launches`), e.g. `40 index launches and 1 single launch`."""
    return " and ".join(f"{n} {kind} launch{'es' if n != 1 else ''}" for kind, n in launches.items())


def launch_groups_text(other: tuple[OtherRegions, ...], unlisted: int, by_kind: bool) -> list[str]:
    """Which launches differ from the one a description shows in which arguments (`other`, `unlisted`:
    `TaskInfo.other_regions`, `TaskInfo.other_unlisted`), a phrase per group: `launches 2, 4, ..., 40 differ in arg
    0 (region next_ghost) and arg 1 (region cur_blocks)`, then `3 other launches on other regions` where some are
    unlisted; launches numbered by kind (`index launches ...`) where `by_kind`, for a task with both kinds."""
    groups = []
    for group in other:
        numbers, n = launch_numbers(group, by_kind)
        groups.append(f"{numbers} differ{'s' if n == 1 else ''} in "
                      + " and ".join(f"arg {i} ({_regions_text(names)})" for i, names in group.args))
    if unlisted:
        groups.append(f"{unlisted} other launch{'es' if unlisted != 1 else ''} on other regions")
    return groups


def launch_numbers(group: OtherRegions, by_kind: bool) -> tuple[str, int]:
    """`group`'s launches as explain names them, `launches 2, 4, ..., 40` (`index launches ...`
    where `by_kind`: the task has launches of both kinds, numbered by kind), and how many they are."""
    parts, count = [], 0
    for first, last, step in group.launches:
        n = (last - first) // step + 1
        count += n
        parts.append(f"{first}-{last}" if step == 1 and n > 2 else f"{first}, {first + step}, ..., {last}" if n > 3
                     else ", ".join(map(str, range(first, last + 1, step))))
    return f"{group.kind + ' ' if by_kind else ''}launch{'es' if count > 1 else ''} {', '.join(parts)}", count


SHOWN_NAMES = 3  # of the regions an argument's points use on other launches: a launch over many named blocks has many


def _regions_text(names: tuple[str | None, ...]) -> str:
    """The regions an argument of other launches is on (`OtherRegions.args`), as a statement selects them:
    `region next_ghost`, `regions block_4, block_5, block_6 and 5 more`, `an unnamed region`, `none` (no such
    argument)."""
    if not names:
        return "none"
    if names == (None,):
        return "an unnamed region"
    shown = [selector_name(n) if n is not None else "an unnamed one" for n in names[:SHOWN_NAMES]]
    more = f" and {len(names) - SHOWN_NAMES} more" if len(names) > SHOWN_NAMES else ""
    return f"region{'s' if len(names) > 1 else ''} {', '.join(shown)}{more}"


def _references(s) -> set[str]:
    """The function and variable names statement `s` reads (shadowing ignored: a local of the same name counts)."""
    if isinstance(s, (A.IndexTaskMapStmt, A.SingleTaskMapStmt)):
        return {s.func.name, *([s.machine.name] if getattr(s, "machine", None) else [])}
    return {n.func if isinstance(n, A.Call) else n.name for n in _walk_stmt(s) if isinstance(n, (A.Call, A.Name))}


def _expr_text(e: A.Expr) -> str:
    """`e` as a hint writes it: without the parentheses written around its parts, as hints compose new expressions
    around it and add the pairs these need (`(a + 1) % m.size[1]`): a written pair would double one."""
    return format_expr(A.without_parens(e))


def _plural(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _dims_hint(m: str, n: int, coords: list[str], task: str | None) -> str:
    """A hint for `m[<coords>]`, an `n`-dimensional model `m` given another count of index values: merge dimensions
    (fewer values) or, where they are the coordinates of `task`'s point, combine coordinates (more). Each index is
    reduced modulo its dimension's size, so the example is valid as written."""
    k = len(coords)
    coords = [c if re.fullmatch(r"[\w.\[\]]+", c) else f"({c})" for c in coords]  # `%` binds tighter than `+`
    if k < n:
        merged = m + ".merge(0, 1)" * (n - k)
        sizes = [f"{m}.volume"] if k == 1 else [f"{merged}.size[{j}]" for j in range(k)]
        return f"merge dimensions: {merged}[{', '.join(f'{c} % {z}' for c, z in zip(coords, sizes))}]"
    if task is None:
        return f"give one index per dimension ({n})"
    lin = coords[0]
    for j in range(1, k - n + 1):  # the first k - n + 1 coordinates as one, row-major
        lin = f"{lin} * {task}.ispace[{j}] + {coords[j]}"
    merged = [f"({lin})"] + coords[k - n + 1 :]
    return f"combine coordinates: {m}[{', '.join(f'{c} % {m}.size[{d}]' for d, c in enumerate(merged))}]"


_ONE_NAME = "a name is either a variable or a function: rename one of them (and where it is read or called)"
_UNPACK_HINT = "'*' spreads a tuple's elements, as in (*t, 1): write an int without it"
_ZERO_HINT = "the divisor is 0 here: divide by a value that cannot be 0 (e.g. a machine model's size, m.size[0])"


def _operator_hint(op: str, names: tuple[str, str]) -> str:
    """E206's hint for a binary operator applied to values it does not take: what it applies to."""
    if op in ("&&", "||"):
        return f"'{op}' joins two bools, such as comparisons: a > 0 {op} b > 0"
    if op in ("==", "!="):
        return f"'{op}' compares two values of one type (int, bool or tuple)"
    if op in ("<", "<=", ">", ">="):
        return f"'{op}' compares two ints"
    said = f"'{op}' applies to ints, and element-wise to tuples of ints"
    if "MSpace" in names:
        return (f"{said}; a machine model is reshaped with its methods (m.split, m.merge, ...), its extents are "
                "m.size")
    return said


# What C++ enum names of task IDs add to a task's name (UPDATE_TASK_ID, TID_UPDATE): stripped to find the task.
_TASK_ID_AFFIXES = re.compile(r"^(?:tid|task)_|_(?:task_id|task|tid|id)$", re.IGNORECASE)


def enum_named(word: str, tasks) -> str | None:
    """The task `word`, a name like a C++ enum value of a task ID (capitals, or a task ID's prefix or suffix), most
    likely means: the longest of `tasks` (of 3 characters or more) that its stem contains, case-insensitively; None
    where none does or `word` is no such name."""
    stem = word
    while (shorter := _TASK_ID_AFFIXES.sub("", stem, count=1)) != stem:
        stem = shorter
    if stem == word and word != word.upper():
        return None
    found = [t for t in tasks if len(t) >= 3 and t != word and t.lower() in stem.lower()]
    return max(found, key=len) if found else None


# The name discovery (and so explain) gives a field that has no name: field_ and its field ID.
_UNNAMED_FIELD = re.compile(r"field_(\d+)")


def enum_note(word: str, field: bool = False) -> str:
    """The note on a task name like a C++ enum value of a task ID (`enum_named`): check's (W315, E202, E225) and, at
    the end of a run, the mapper's R453 as `run` prints it; with `field`, on a region name like a field ID's
    (`field_id_named`, E203), or explain's name of an unnamed field (field_0)."""
    if not field:
        return (f"'{abridged(word)}' looks like a C++ enum value (a task ID): Legion knows a task by the name it is "
                "registered with, not by C++ names")
    unnamed = _UNNAMED_FIELD.fullmatch(word)
    what = (f"is the name explain gives field ID {unnamed[1]}, which has no name" if unnamed else
            "looks like a C++ enum value (a field ID)")
    return (f"'{abridged(word)}' {what}: a statement selects a task's region argument by its region's name or its "
            "index, never by a field")


# What C++ enum names of field IDs add to a field's name (FID_X, X_FIELD): such a name where a region goes is a field's.
_FIELD_ID_AFFIXES = re.compile(r"^(?:fid|field)_|_(?:fid|field|field_id)$", re.IGNORECASE)


def field_id_named(word: str) -> bool:
    """Whether a region name `word` looks like a C++ enum value of a field ID (FID_X, TEMP_FIELD)."""
    return bool(_FIELD_ID_AFFIXES.search(word))


def likely_task(word: str, tasks) -> str | None:
    """The task of `tasks` that a name no spelling near-miss of one (`closest`) most likely means, or None: the one it
    begins (`init` for `init_field`, likely cut short), else the task a C++ enum name contains (`enum_named`)."""
    return extended(word, tasks) or enum_named(word, tasks)


def _top_level_hint(s, kind: str, regions: bool = True) -> str:
    """E202's fix for statement `s` naming the top-level task (which runs on `kind`; `regions`: it has region
    arguments): what reaches it instead; for a statement of regions where it has none, that none applies."""
    func = s.func.name if isinstance(s, (A.SingleTaskMapStmt, A.IndexTaskMapStmt)) else "f"
    single = f"`SingleTaskMap {kind} {func};` maps it with the tasks launched one at a time on {kind}s"
    if isinstance(s, A.SingleTaskMapStmt) and len(s.tasks.names) == 1:
        return single
    what = "remove it from the task list" if len(s.tasks.names) > 1 else "remove the statement"
    if isinstance(s, (A.SingleTaskMapStmt, A.IndexTaskMapStmt)):
        return f"{what}: {single}"
    if isinstance(s, A.TaskStmt):
        return f"{what}: `Task * {','.join(k.name for k in s.kinds)};` chooses its kind with every other task's"
    if isinstance(s, A.InstanceLimitStmt):
        return f"{what}: the top-level task runs once, so no limit applies to it"
    if getattr(s, "region", None) is not None and not regions:
        return (f"{what}: the top-level task has no region arguments, so no "
                f"{type(s).__name__.removesuffix('Stmt')} statement applies to it")
    star = format_statement(dataclasses.replace(s, tasks=A.TaskSel(None)))
    return f"{what}: `{star}` applies to it with every other task"


# The region arguments E203's hint lists one by one (privilege, fields, the statement selecting each); explain lists
# them all.
MAX_ARGUMENTS_LISTED = 4


class _Checker:
    def __init__(self, program: A.Program, app: AppDescription | None, machine: MachineDescription | None,
                 stream: TextIO | None = None):
        self.program = program
        self._placing: Evaluator | None = None  # the static evaluation of the points, once it ran
        self.stream = stream
        self.app = app
        self.machine = machine
        # how messages name the machine: the one a run sees, or the one --machine describes
        self.here = (machine.given_as if machine is not None else "") or "this machine"
        # the region tree's nodes by name (a program's description; the ping-pong checks look names up often)
        self.tree = {n.name: n for n in app.region_tree} if app is not None else {}
        self.diags: list[Diagnostic] = []
        self.errors = 0
        self.functions = program.functions()
        self.global_names = {s.name for s in program.statements if isinstance(s, A.Assign)}
        self.global_types: dict[str, T] = {}
        self.return_types: dict[str, T] = {}
        self._typing: set[str] = set()
        self._globals_typed = False
        self._absent_only: set[int] = set()  # ids of the Region statements reported as E221
        self._unseen_only: list[tuple[A.RegionStmt, str, list[A.Kind]]] = []  # no memory seen from the kind: W302?
        self._inaccessible: set[int] | None = None  # ids of the Region statements reported as E222, once checked
        self._applied: set[int] = set()  # ids of the Region statements that apply to a requirement where it runs
        self._called_variables: list[tuple[str, A.Loc, object]] = []  # (name, where, map statement or None)
        self._function: A.FuncDef | None = None  # the function whose body is being scoped
        self._typed: A.FuncDef | None = None  # the function whose body is being typed
        self._proposed: set[str] = set()  # the function names W309's rewrites propose

    def add(self, code: str, message: str, loc: A.Loc, hints=(), notes=(), severity: str | None = None,
            at_point: bool = False):
        sev = severity or ("error" if code.startswith("E") else "warning")
        self.errors += sev == "error"
        self.diags.append(Diagnostic(code, sev, message, loc, tuple(h for h in hints if h), tuple(notes), at_point))

    def run(self) -> list[Diagnostic]:
        self._scopes()
        self._recursion()
        if any(d.code == "E111" for d in self.diags):  # typing and evaluation would nest as deep: stop here
            return self._sorted()
        if not any(d.code == "E212" for d in self.diags):
            self._load_order()
        if not self.program.statements:
            own = self.app.own_mapper if self.app is not None else None
            decides = ("every decision is Legion's default mapper's" if not own else
                       f"the program's own mapper ('{own}') makes every decision (--keep-app-mapper)"
                       if self.app.keep_app_mapper else
                       f"the program's own mapper ('{own}') is replaced, and every decision is Legion's default "
                       "mapper's")
            self.add("W311", f"the mapper is empty: {decides}", self._whole_file(),
                     ("start from a Task statement, e.g. Task * GPU,CPU;",))
        self._types()
        self._variables_called()
        self._statements()
        self._overrides()
        if self.app is not None:
            self._app_names()
            self._app_replication()
            self._app_kinds()
            self._app_launches()
            self._app_limits()
            self._app_tunables()
            self._app_kept_mapper()
        if self.machine is not None:
            self._machine_kinds()
            self._one_node()
            if not any(d.is_error and d.code not in INERT_ERRORS for d in self.diags):
                self._static_evaluation()
                self._unseen_statements()
            elif self.app is not None or any(isinstance(s, (A.Assign, A.Print)) for s in self.program.statements):
                # Evaluating a program with errors would report their consequences; say what waits for the fix.
                # An E209 above came from the Task statements, which need no evaluation: only a mapping
                # function's result still waits.
                e209 = ("E209 for a kind a mapping function returns" if any(d.code == "E209" for d in self.diags)
                        else "E209")
                what = ("the load phase, every mapping function at every launch point and the instance each "
                        f"requirement gets (E205, {e209}, E217, E219, E222, E223)" if self.app is not None else
                        "the load phase (E205, E217, E219)")
                self.add("W314", f"static evaluation skipped because of the errors above: once they are fixed, "
                                 f"check evaluates {what}", self._whole_file(), severity="note")
        elif self.app is not None:
            ev = Evaluator(self.program, None, self.app)
            self._required_layouts(ev)
            self._layout_copies(ev)
        return self._sorted()

    def _whole_file(self) -> A.Loc:
        """The location of a diagnostic about the whole file (a statement it lacks, a check not made), which no
        line holds: line 0, sorted after those of the statements."""
        return A.Loc(self.program.loc.file, 0, 0)

    def _sorted(self) -> Diagnostics:
        # Past the first MAX_ERRORS errors, the first error of a code not shown yet is still shown: a cap on
        # repeats of one code must not hide another error; the others are counted per code.
        seen, out, errors, codes = set(), Diagnostics(), 0, set()
        for d in sorted(self.diags, key=lambda d: (d.loc.line < 1, d.loc.line, d.loc.col)):
            key = (d.code, d.loc.line, d.loc.col, d.message)
            if key in seen:
                continue
            seen.add(key)
            if d.is_error:
                errors += 1
                if errors > MAX_ERRORS and d.code in codes:
                    out.omitted += 1
                    where = (d.loc.file, d.code)
                    out.left_out[where] = out.left_out.get(where, 0) + 1
                    continue
                codes.add(d.code)
            out.append(d)
        return out

    # ------------------------------------------------------------------------------------------------ scoping

    def _undefined_variable(self, name: str, loc: A.Loc, visible, top_level: bool):
        if name == "task" and top_level:
            self.add("E201", "undefined variable 'task' at top level", loc,
                     ("global assignments run once at start, before any task exists; use 'task' inside "
                      "def f(Task task) { ... }",))
            return
        later = next((s for s in self.program.statements if isinstance(s, A.Assign) and s.name == name), None)
        # assigned further down (not by the statement that reads it): the load phase runs in textual order
        if top_level and later is not None and (later.loc.line, later.loc.col) > (loc.line, loc.col):
            shown = abridged(name)
            self.add("E201", f"variable '{shown}' is read before its assignment", loc,
                     (f"assign '{shown}' before this statement (top-level statements run from top to bottom): "
                      f"its first assignment, `{abridged(format_statement(later))}`, comes after it, on line "
                      f"{later.loc.line}",), (f"'{shown}' is assigned at {later.loc}",))
            return
        # Past the reported errors, skip the (costly) search for a close name.
        close = closest(name, visible) if self.errors <= MAX_ERRORS else None
        tasks = [p.name for p in self._function.params if p.type == "Task"] if self._function and not top_level else []
        if name == "task" and len(tasks) == 1 and tasks[0] in visible:  # `def f(Task t)` read as `task`
            hint = f"did you mean '{tasks[0]}'? (the Task parameter of '{self._function.name}')"
        elif name.upper() in A.PROC_KINDS + A.MEM_KINDS:  # a kind in lower case (`cpu`), before a close name (`mcpu`)
            hint = f"did you mean '{name.upper()}'? (kinds are written in capitals)"
        elif A.legion_kind_hint(name):  # `TOC_PROC`, before a close name
            hint = A.legion_kind_hint(name)
        elif name in ("true", "false"):  # Python's spelling is the DSL's: True, False
            hint = f"did you mean '{name.capitalize()}'?"
        elif name == "None":
            hint = "the DSL has no None (no null value): give a value of the type meant, or leave the assignment out"
        elif close:
            hint = f"did you mean '{close}'?"
        elif re.fullmatch(r"m\w*", name) and (len(name) <= 4 or "_" in name or re.search("gpu|cpu", name)):
            kind = self._model_kind(name)
            hint = f"add '{abridged(name)} = Machine({kind});' at top level"
            if kind != "CPU" and self.machine is not None and self.machine.count(kind, 0) == 0:
                # an empty model: its first index would be E205; the portable definition falls back to CPUs
                what = "GPUs" if kind == "GPU" else f"{kind} processors"
                hint = (f"add '{abridged(name)} = Machine({kind}).volume > 0 ? Machine({kind}) : Machine(CPU);' at "
                        f"top level ({self.here} has no {what}: Machine({kind}) alone is empty here)")
        else:
            hint = None
        self.add("E201", f"undefined variable '{abridged(name)}'", loc, (hint,))

    def _model_kind(self, name: str) -> str:
        """The processor kind of the machine model a hint defines as `name`: the one its name says, else GPU where
        the program's tasks may run on GPUs (a Task statement lists GPU, or none is given and the machine, if
        known, has GPUs), else CPU."""
        for kind in ("cpu", "gpu"):
            if kind in name:
                return kind.upper()
        listed = {k.name for s in self.program.statements if isinstance(s, A.TaskStmt) for k in s.kinds}
        if listed:
            return "GPU" if "GPU" in listed else "CPU"
        return "GPU" if self.machine is None or self.machine.count("GPU", 0) > 0 else "CPU"

    def _scope_expr(self, e, names: set[str], funcs: set[str], top_level: bool):
        """E200/E201/E206 for names in `e`; `names` are the visible variables, `funcs` the callable functions."""
        for node in _walk(e):
            if isinstance(node, A.Name):
                if node.name in names:
                    continue
                if node.name in self.functions:
                    self.add("E206", f"'{node.name}' is a function, not a value", node.loc,
                             (f"call it: {node.name}(...)",))
                else:
                    self._undefined_variable(node.name, node.loc, names, top_level)
            elif isinstance(node, A.Call) and node.func not in funcs:
                if node.func in names or node.func in self.global_names:  # a variable called
                    self._called_variables.append((node.func, node.loc, None))
                else:
                    self._undefined_function(node.func, node.loc, called=True, args=node.args)
            elif isinstance(node, A.Comprehension):
                inner = names | {node.var}
                self._scope_expr(node.expr, inner, funcs, top_level)
                self._scope_expr(node.iterable, names, funcs, top_level)

    def _undefined_function(self, name: str, loc: A.Loc, called: bool = False, args: tuple = (),
                            three_operand: bool = False):
        """E200 for `name`, called in an expression with `args` (`called`: the built-in `Machine` is a candidate) or
        named by a mapping statement (`three_operand`: the older IndexTaskMap, whose function maps a launch
        point)."""
        params = "IPoint p, ISpace s, MSpace m" if three_operand else "Task task"
        if called and name == "not" and len(args) == 1:  # Python's `not (x)`, read as a call
            self.add("E200", f"undefined function '{name}'", loc,
                     (f"logical not is '!': write !({_expr_text(args[0])})",))
            return
        if called and name in _PYTHON_BUILTINS:  # a Python habit: the DSL's spelling, not a definition to write
            what = _PYTHON_BUILTINS[name]
            if name == "len":
                what += args[0].name if len(args) == 1 and isinstance(args[0], A.Name) else "t"
                what += ".len"
            self.add("E200", f"undefined function '{name}'", loc, (f"the DSL has no {name}(): {what}",))
            return
        later = self.functions.get(name)
        shown = abridged(name)  # a name of thousands of characters: its start and its length
        if later is not None:
            self.add("E200", f"function '{shown}' is used before its definition", loc,
                     (f"define it before this statement: def {shown}({params}) {{ ... }}",),
                     (f"'{name}' is defined at {later.loc}",))
            return
        # Case ignored (`machine(GPU)`, `B` for `def b`); a close name is the likely fix, so it alone is hinted.
        by_lower = {f.lower(): f for f in (*self.functions, *(("Machine",) if called else ()))}
        close = closest(name.lower(), by_lower)
        if called:
            params = ", ".join(f"TYPE {chr(ord('a') + i)}" for i in range(len(args)))
        define = (f"define it before this statement, with {_plural(len(args), 'parameter')} as called here: "
                  f"def {shown}({params}) {{ ... }} (types: {', '.join(A.PARAM_TYPES)})" if called
                  else f"define it before this statement: def {shown}({params}) {{ ... }}")
        self.add("E200", f"undefined function '{shown}'", loc,
                 (f"did you mean '{by_lower[close]}'?" if close else define,))

    def _variables_called(self):
        """E206 for a variable used as a function (`IndexTaskMap t mcpu;` with `mcpu = Machine(CPU);`): said after
        typing, which knows what a global holds."""
        for name, loc, stmt in self._called_variables:
            t = self.global_types.get(name, UNKNOWN)
            what = "a machine model" if t.name == "MSpace" else article(t.name) if t.name else None
            index = f"{name}[{', '.join(f'i{k}' for k in range(t.n)) if t.n else '...'}]"
            if stmt is not None:
                keyword = "IndexTaskMap" if isinstance(stmt, A.IndexTaskMapStmt) else "SingleTaskMap"
                # Valid as written: the launch point's first coordinate spread over the first dimension.
                first = f"task.ipoint[0] % {name}.size[0]"
                ret = (f"{name}[{', '.join([first] + ['0'] * (t.n - 1))}]" if t.name == "MSpace" and t.n else
                       index if t.name == "MSpace" else "...")
                taken = {*self.functions, *self.global_names}
                fname = next(n for n in ("f", *(f"f{k}" for k in range(1, len(taken) + 1))) if n not in taken)
                hint = f"{keyword} needs a function taking a Task, e.g. def {fname}(Task task) {{ return {ret}; }}"
            else:
                hint = f"index it instead: {index}" if t.name == "MSpace" else None
            self.add("E206", f"'{name}' is {f'{what} (a variable)' if what else 'a variable'}, not a function", loc,
                     (hint,))

    def _scopes(self):
        globals_so_far: set[str] = set()
        funcs_so_far: set[str] = set()
        first_def: dict[str, A.FuncDef] = {}
        for s in self.program.statements:
            if isinstance(s, A.FuncDef):
                if s.name in first_def:
                    self.add("E210", f"function '{s.name}' is defined twice", s.loc,
                             ("a function is defined once: remove one definition, or rename one (and the statements "
                              "and calls that mean it)",), (f"first definition at {first_def[s.name].loc}",))
                else:
                    first_def[s.name] = s
                if s.name in self.global_names:
                    self.add("E211", f"'{s.name}' is both a variable and a function", s.loc, (_ONE_NAME,))
                self._scope_function(s)
                funcs_so_far.add(s.name)
            elif isinstance(s, A.Assign):
                self._scope_expr(s.value, globals_so_far, funcs_so_far, True)
                globals_so_far.add(s.name)
            elif isinstance(s, A.Print):
                for a in s.args:
                    self._scope_expr(a, globals_so_far, funcs_so_far, True)
            elif isinstance(s, (A.IndexTaskMapStmt, A.SingleTaskMapStmt)):
                machine = getattr(s, "machine", None)
                # `IndexTaskMap t f g;`: a function where the model goes; mapped alone, a function of a Task is the
                # likely intent, and the name after it a stray one (not reported as well).
                model_func = (self.functions.get(machine.name) if machine is not None
                              and machine.name in funcs_so_far and machine.name not in globals_so_far else None)
                alone = model_func is not None and [p.type for p in model_func.params] == ["Task"]
                if model_func is not None:
                    self.add("E206", f"'{machine.name}' is a function, not a machine model", machine.loc,
                             ("the three-operand form `IndexTaskMap TASKS MODEL FUNC;` takes a machine model here"
                              + (f"; a function of a Task is mapped alone: IndexTaskMap {_tasks_text(s.tasks)} "
                                 f"{machine.name};" if alone else ""),))
                if s.func.name in self.global_names and s.func.name not in self.functions:
                    self._called_variables.append((s.func.name, s.func.loc, s))
                elif s.func.name not in funcs_so_far and not alone:
                    self._undefined_function(s.func.name, s.func.loc, three_operand=machine is not None)
                if model_func is not None:
                    continue
                f = self.functions.get(s.func.name)
                # With a function of a Task, the fix is to drop the machine model (E208), not to define it.
                if machine is not None and machine.name not in globals_so_far and not (
                        f is not None and [p.type for p in f.params] == ["Task"]):
                    self._undefined_variable(machine.name, machine.loc, globals_so_far, True)

    def _load_order(self):
        """E201 for a global that a function called in the load phase reads (directly or through its calls) before
        the global's first assignment: the load phase runs in textual order (the evaluator and the compiled mapper
        would both fail there)."""
        sites = self._call_sites()
        reads: dict[str, set[str]] = {}
        for name in _post_order(self.functions, sites):
            f = self.functions[name]
            got = set(_free_names(f)) & self.global_names
            for call in sites[name]:
                got |= reads.get(call.func, set())
            reads[name] = got
        first: dict[str, A.Assign] = {}
        for s in self.program.statements:
            if isinstance(s, A.Assign):
                first.setdefault(s.name, s)
        assigned: set[str] = set()
        for s in self.program.statements:
            if not isinstance(s, (A.Assign, A.Print)):
                continue
            for call in (n for x in _stmt_exprs(s) for n in _walk_all(x) if isinstance(n, A.Call)):
                early = sorted(reads.get(call.func, set()) - assigned)
                if early:
                    g = early[0]
                    self.add("E201", f"'{call.func}' reads the global variable '{g}' before its assignment", call.loc,
                             (f"assign '{g}' before this statement (its first assignment is at {first[g].loc})",))
            if isinstance(s, A.Assign):
                assigned.add(s.name)

    def _scope_function(self, f: A.FuncDef):
        self._function = f
        params: set[str] = set()
        for p in f.params:
            if p.name in params:
                self.add("E211", f"parameter '{p.name}' of '{f.name}' is declared twice", p.loc,
                         ("rename one of the two parameters (and where the body reads it)",))
            params.add(p.name)
        visible = params | self.global_names
        funcs = set(self.functions)
        local: set[str] = set()
        for s in (*f.body, f.ret):
            if isinstance(s, A.Print):
                for a in s.args:
                    self._scope_expr(a, visible, funcs, False)
                continue
            self._scope_expr(s.value, visible, funcs, False)
            if isinstance(s, A.Assign):
                if s.name in self.global_names and s.name not in params and s.name not in local:
                    self.add("W307", f"local variable '{s.name}' shadows the global variable '{s.name}'", s.loc,
                             ("the global keeps its value; rename the local to avoid confusion",))
                if s.name in self.functions:
                    self.add("E211", f"'{s.name}' is both a variable and a function", s.loc, (_ONE_NAME,))
                local.add(s.name)
                visible = visible | {s.name}
        self._function = None

    def _call_sites(self) -> dict[str, list[A.Call]]:
        """Calls made by each function (with their positions), in source order."""
        return {name: [n for s in (*f.body, f.ret) for n in _walk_stmt(s) if isinstance(n, A.Call)]
                for name, f in self.functions.items()}

    def _recursion(self):
        """E212 for each call that closes a cycle of calls (iterative depth-first search: linear in the calls);
        E111 when expressions nest deeper than MAX_EVAL_NESTING levels through chains of calls."""
        sites = self._call_sites()
        state: dict[str, int] = {}  # 1: on the current path, 2: done
        nesting: dict[str, int] = {}  # expression nesting of a call of the function, its callees included
        cyclic = False
        for root in self.functions:
            if root in state:
                continue
            path, stack = [root], [(root, iter(sites[root]))]
            state[root] = 1
            while stack:
                name, calls = stack[-1]
                call = next(calls, None)
                if call is None:
                    stack.pop()
                    path.pop()
                    state[name] = 2
                    f = self.functions[name]
                    nesting[name] = max(_nesting(s, nesting) for s in (*f.body, f.ret))
                    continue
                callee = call.func
                if callee not in self.functions:
                    continue
                if state.get(callee) == 1:
                    cyclic = True
                    cycle = path[path.index(callee):] + [callee]
                    self.add("E212", f"recursive call: {' -> '.join(cycle)}", call.loc,
                             ("functions cannot call themselves, directly or indirectly; a mapping function "
                              "must always terminate",))
                elif callee not in state:
                    state[callee] = 1
                    path.append(callee)
                    stack.append((callee, iter(sites[callee])))
        if cyclic:
            return
        deepest = max(nesting, key=nesting.get, default=None)
        for name, depth in [(deepest, nesting[deepest])] if deepest is not None else ():
            if depth > MAX_EVAL_NESTING:
                f = self.functions[name]
                self.add("E111", f"a call of '{name}' nests {depth} levels of expressions through its calls; the "
                                 f"limit is {MAX_EVAL_NESTING}", f.loc,
                         ("flatten the chain of calls, or compute parts in intermediate variables",))

    # ------------------------------------------------------------------------------------------------ typing

    def _types(self):
        # Globals first, with calls typed by their arguments only: function bodies see the final globals (§5.2).
        env: dict[str, T] = {}
        conflicts: set[str] = set()
        for s in self.program.statements:
            if isinstance(s, A.Assign):
                t = self._infer(s.value, env, top_level=True)
                if s.name in env and env[s.name].name != t.name:
                    conflicts.add(s.name)
                env[s.name] = t
            elif isinstance(s, A.Print):
                self._check_print(s, env, top_level=True)
        self.global_types = {k: UNKNOWN if k in conflicts else v for k, v in env.items()}
        self._globals_typed = True
        for s in self.program.statements:
            if isinstance(s, A.FuncDef):
                if s is self.functions[s.name]:
                    self._function_type(s)
                else:
                    self._body_type(s)

    def _check_print(self, s: A.Print, env: dict[str, T], top_level: bool):
        holes = s.fmt.count("{}")
        if holes != len(s.args):
            self.add("E216", f"print has {_plural(holes, 'placeholder')} '{{}}' but {_plural(len(s.args), 'argument')}",
                     s.loc, (f"give one argument after the string for each '{{}}' in it: "
                             f"{'add' if holes > len(s.args) else 'remove'} {abs(holes - len(s.args))} "
                             f"argument{'s' if abs(holes - len(s.args)) > 1 else ''}, or "
                             f"{'remove' if holes > len(s.args) else 'add'} as many '{{}}'",))
        for a in s.args:
            self._infer(a, env, top_level)

    def _function_type(self, f: A.FuncDef) -> T:
        """The return type of `f`, its body checked once."""
        if not self._globals_typed or f.name in self._typing:
            return UNKNOWN
        if f.name not in self.return_types:
            self._typing.add(f.name)
            self.return_types[f.name] = self._body_type(f)
            self._typing.discard(f.name)
        return self.return_types[f.name]

    def _body_type(self, f: A.FuncDef) -> T:
        outer, self._typed = self._typed, f
        env = {p.name: T(_PARAM_TYPE[p.type]) for p in f.params}
        for s in f.body:
            if isinstance(s, A.Assign):
                env[s.name] = self._infer(s.value, env, False)
            else:
                self._check_print(s, env, False)
        ret = self._infer(f.ret.value, env, False)
        self._typed = outer
        return ret

    def _point_dims(self) -> set[int] | None:
        """The dimensions of the launch points of the function being typed, from the tasks its mapping statements
        select (a single task's point is `(0,)`); None where unknown (no description, or not a mapping function)."""
        if self.app is None or self._typed is None:
            return None
        dims = set()
        for s in self.program.statements:
            if isinstance(s, (A.IndexTaskMapStmt, A.SingleTaskMapStmt)) and s.func.name == self._typed.name:
                for info in self.app.tasks:
                    if task_matches(s.tasks, info.name, "CPU") or task_matches(s.tasks, info.name, "GPU"):
                        dims.add(len(info.domain) if isinstance(s, A.IndexTaskMapStmt) and info.domain else 1)
        return dims or None

    def _type_error(self, msg: str, loc: A.Loc, hint: str | None = None, note: str | None = None) -> T:
        self.add("E206", msg, loc, (hint,), (note,) if note else ())
        return UNKNOWN

    @staticmethod
    def _spread_hint(e, t: T) -> tuple[str | None, str | None]:
        """(hint, note) for a tuple `e` where an int was meant, made by an int and a tuple element-wise (`i / t`):
        the note names that operation when it is not `e` itself (it may be lines before)."""
        if t.spread is None:
            return None, None
        op, side = t.spread
        what = f"'{e.name}'" if isinstance(e, A.Name) else "it"
        hint = (f"for one element of {_expr_text(side)}, index it: {_expr_text(side)}[0]"
                if isinstance(side, (A.Name, A.Member)) else None)
        return hint, (None if e is op else f"{what} is a tuple because '{op.op}' at {op.loc} combines an int with "
                                            f"the tuple {_expr_text(side)} element by element")

    def _infer(self, e, env: dict[str, T], top_level: bool) -> T:
        match e:
            case A.IntLit():
                return T("int", const=e.value)
            case A.BoolLit():
                return T("bool", const=e.value)
            case A.KindLit():
                return T("kind", kind=e.kind)
            case A.MachineLit():
                return T("MSpace", n=2, kind=e.kind)
            case A.Name():
                if e.name in env:
                    return env[e.name]
                return UNKNOWN if top_level else self.global_types.get(e.name, UNKNOWN)
            case A.Call():
                return self._infer_call(e, env, top_level)
            case A.TupleLit():
                n: int | None = 0
                for item in e.items:
                    if isinstance(item, A.Unpack):
                        t = self._infer(item.value, env, top_level)
                        if t.name not in (None, "tuple"):
                            self.add("E218", f"'*' unpacks a tuple, not {article(t.name)}", item.loc,
                                     (_UNPACK_HINT,))
                        n = None if n is None or t.n is None or t.name != "tuple" else n + t.n
                    else:
                        t = self._infer(item, env, top_level)
                        if t.name not in (None, "int"):
                            self._type_error(f"a tuple element must be an int, not {article(t.name)}", item.loc,
                                             "a tuple holds ints only, e.g. (task.ipoint[0], 0)")
                        n = None if n is None else n + 1
                return T("tuple", n=n)
            case A.Comprehension():
                it = self._infer(e.iterable, env, top_level)
                if it.name not in (None, "tuple"):
                    self._type_error(f"'for {e.var} in' needs a tuple, not {article(it.name)}", e.iterable.loc,
                                     f"iterate over a tuple, e.g. tuple({e.var} * 2 for {e.var} in task.ipoint)")
                t = self._infer(e.expr, {**env, e.var: T("int")}, top_level)
                if t.name not in (None, "int"):
                    self._type_error(f"a tuple comprehension must produce ints, not {article(t.name)}", e.expr.loc,
                                     f"the expression before 'for' gives each element, an int: "
                                     f"tuple({e.var} % 2 for {e.var} in ...)")
                return T("tuple", n=it.n if it.name == "tuple" else None)
            case A.Unary():
                t = self._infer(e.operand, env, top_level)
                if e.op == "!":
                    if t.name not in (None, "bool"):
                        return self._type_error(f"operator '!' cannot be applied to {t.name}", e.loc,
                                                "'!' negates a bool, such as a comparison: !(x > 0)")
                    return T("bool", const=None if t.const is None else not t.const)
                if t.name not in (None, "int", "tuple"):
                    return self._type_error(f"operator '-' cannot be applied to {t.name}", e.loc,
                                            "'-' negates an int, or a tuple of ints element-wise")
                if t.name == "int" and t.const is not None:
                    return T("int", const=-t.const)
                return T(t.name, n=t.n) if t.name else UNKNOWN
            case A.Binary():
                return self._infer_binary(e, env, top_level)
            case A.Ternary():
                c = self._infer(e.cond, env, top_level)
                if c.name not in (None, "bool"):
                    self._type_error(f"the condition of '?' must be a bool, not {article(c.name)}", e.cond.loc,
                                     "write a comparison, e.g. x != 0 ? a : b")
                a = self._infer(e.then, env, top_level)
                b = self._infer(e.orelse, env, top_level)
                if a.name != b.name or a.name is None:
                    return UNKNOWN
                return T(a.name, n=a.n if a.n == b.n else None, kind=a.kind if a.kind == b.kind else None)
            case A.Member():
                return self._infer_member(e, env, top_level)
            case A.MethodCall():
                return self._infer_method(e, env, top_level)
            case A.Index():
                return self._infer_index(e, env, top_level)
            case A.Slice():
                t = self._infer(e.obj, env, top_level)
                for b in (e.lo, e.hi):
                    if b is not None:
                        bt = self._infer(b, env, top_level)
                        if bt.name not in (None, "int"):
                            self._type_error(f"a slice bound must be an int, not {article(bt.name)}", b.loc,
                                             "a slice's bounds are ints, e.g. t[1:3]")
                if t.name not in (None, "tuple", "MSpace"):
                    return self._type_error(f"{article(t.name)} cannot be sliced", e.loc,
                                            "a tuple or a machine model is sliced, e.g. t[1:3]")
                return T("tuple")
        raise TypeError(f"not an expression: {e!r}")

    def _infer_call(self, e: A.Call, env, top_level) -> T:
        args = [self._infer(a, env, top_level) for a in e.args]
        f = self.functions.get(e.func)
        if f is None:
            return UNKNOWN
        if len(args) != len(f.params):
            sig = ", ".join(f"{p.type} {p.name}" for p in f.params)
            self.add("E207", f"'{f.name}' takes {_plural(len(f.params), 'argument')}, {len(args)} given", e.loc,
                     (f"the signature is def {f.name}({sig})",))
        for p, a, node in zip(f.params, args, e.args):
            want = _PARAM_TYPE[p.type]
            if a.name is not None and a.name != want:
                sig = ", ".join(f"{q.type} {q.name}" for q in f.params)
                self._type_error(f"argument '{p.name}' of '{f.name}' must be {p.type}, not {article(a.name)}", node.loc,
                                 f"the signature is def {f.name}({sig})")
        return self._function_type(f)

    def _infer_binary(self, e: A.Binary, env, top_level) -> T:
        a = self._infer(e.left, env, top_level)
        b = self._infer(e.right, env, top_level)
        op = e.op
        bad = lambda: self._type_error(  # noqa: E731
            f"operator '{op}' cannot be applied to {a.name} and {b.name}", e.loc,
            "chained comparisons are not allowed: write a < b && b < c" if op in "<<=>>=" and "bool" in
            (a.name, b.name) else _operator_hint(op, (a.name, b.name)))
        if None in (a.name, b.name):
            if op in ("&&", "||", "==", "!=", "<", "<=", ">", ">="):
                return T("bool")
            if op in "/%" and b.const == 0 and b.name == "int":
                self.add("E219", f"{'division' if op == '/' else 'remainder'} by zero", e.loc, (_ZERO_HINT,))
            return T(a.name or b.name) if (a.name or b.name) == "tuple" else UNKNOWN
        if op in ("&&", "||"):
            return T("bool") if a.name == b.name == "bool" else bad()
        if op in ("==", "!="):
            return T("bool") if a.name == b.name and a.name in ("int", "bool", "tuple") else bad()
        if op in ("<", "<=", ">", ">="):
            return T("bool") if a.name == b.name == "int" else bad()
        if a.name not in ("int", "tuple") or b.name not in ("int", "tuple"):
            return bad()
        if op in "/%" and b.name == "int" and b.const == 0:
            self.add("E219", f"{'division' if op == '/' else 'remainder'} by zero", e.loc, (_ZERO_HINT,))
            return T(a.name, n=a.n)
        if a.name == b.name == "tuple":
            if a.n is not None and b.n is not None and a.n != b.n:
                return self._type_error(f"operator '{op}' needs tuples of equal length, not {a.n} and {b.n}", e.loc,
                                        "slice the longer one to the other's length (t[0:2]), or build the tuple "
                                        "wanted")
            return T("tuple", n=a.n if a.n is not None else b.n)
        if "tuple" in (a.name, b.name):
            return T("tuple", n=a.n if a.name == "tuple" else b.n, spread=(e, e.left if a.name == "tuple" else e.right))
        if a.const is not None and b.const is not None:
            try:
                return T("int", const=int_op(op, a.const, b.const))
            except DslRuntimeError:
                return T("int")
        return T("int")

    def _member_error(self, recv: str, name: str, loc: A.Loc) -> T:
        valid = _MEMBERS.get(recv, ())
        hint = f"{article(recv)} has: {', '.join(valid)}" if valid else f"{article(recv)} has no properties or methods"
        close = closest(name, valid)
        self.add("E213", f"unknown property or method '{abridged(name)}' of {article(recv)}", loc,
                 ((f"did you mean '{close}'?" if close else None), hint))
        return UNKNOWN

    def _infer_member(self, e: A.Member, env, top_level) -> T:
        t = self._infer(e.obj, env, top_level)
        name = e.name
        if t.name is None:
            return UNKNOWN
        if t.name in ("MSpace", "tuple") and name in ("size", "volume", "len"):
            if name == "size":
                return T("tuple", n=t.n)
            return T("int", const=t.n if name == "len" else None)
        if t.name == "Task" and name in ("ipoint", "ispace"):
            return T("tuple")
        if t.name == "Task" and name == "parent":
            return T("Task")
        if name in _MEMBERS.get(t.name, ()):
            self.add("E207", f"'{name}' of {article(t.name)} is a method; call it with arguments", e.loc,
                     (f"call it: {_expr_text(e.obj)}.{name}(...)",))
            return UNKNOWN
        return self._member_error(t.name, name, e.loc)

    def _infer_method(self, e: A.MethodCall, env, top_level) -> T:
        t = self._infer(e.obj, env, top_level)
        args = [self._infer(a, env, top_level) for a in e.args]
        name = e.name
        if t.name is None:
            return UNKNOWN
        sig = _METHOD_ARGS.get((t.name, name))
        if sig is None:
            if name in _MEMBERS.get(t.name, ()):
                self.add("E207", f"'{name}' of {article(t.name)} is a property, not a method", e.loc,
                         (f"write .{name} without parentheses",))
                return UNKNOWN
            return self._member_error(t.name, name, e.loc)
        if len(args) != len(sig):
            self.add("E207", f"'{name}' takes {_plural(len(sig), 'argument')}, {len(args)} given", e.loc,
                     (f"the signature is {name}({', '.join(sig)})",))
            return UNKNOWN
        for a, want, node in zip(args, sig, e.args):
            if a.name is not None and a.name != want:
                self._type_error(f"argument of '{name}' must be {'a memory kind' if want == 'kind' else want}, "
                                 f"not {article(a.name)}", node.loc,
                                 f"give {'a memory kind' if want == 'kind' else article(want)} there"
                                 f"{', e.g. SYSMEM' if want == 'kind' else ''}")
        if name == "has":
            return T("bool")
        if name == "processor":
            return T("tuple", n=args[0].n)
        return self._machine_transform(e, t, args)

    def _machine_transform(self, e: A.MethodCall, t: T, args: list[T]) -> T:
        """Result type of a machine transformation; E217 for arguments invalid whatever the machine."""
        n, consts = t.n, [a.const for a in args]
        name = e.name

        def bad(msg):
            self.add("E217", f"invalid {name}: {msg}", e.loc,
                     (f"give {name} arguments that fit the model (its dimensions are numbered from 0; its extents "
                      f"are {_expr_text(e.obj)}.size)",))
            return UNKNOWN

        dims = [c for c in consts[: {"merge": 2, "swap": 2}.get(name, 1)]]
        if n is not None:
            for d in dims:
                if d is not None and not 0 <= d < n:
                    return bad(f"dimension {d} is out of range for a {n}-dimensional model (0..{n - 1})")
        if name in ("merge", "swap") and None not in dims and dims[0] == dims[1]:
            return bad(f"the two dimensions must differ, both are {dims[0]}")
        if name == "split" and consts[1] is not None and consts[1] < 1:
            return bad(f"the factor {consts[1]} must be >= 1")
        if name == "slice" and None not in consts[1:] and not 0 <= consts[1] <= consts[2]:
            return bad(f"the bounds need 0 <= lo <= hi, not lo={consts[1]}, hi={consts[2]}")
        if name == "balance_split" and consts[1] is not None and consts[1] < 2:
            return bad(f"the number of factors {consts[1]} must be >= 2")
        grow = {"merge": -1, "split": 1, "balance_split": None if consts[-1] is None else consts[-1] - 1,
                "auto_split": None if args[-1].n is None else args[-1].n - 1,
                "greedy_split": None if args[-1].n is None else args[-1].n - 1}.get(name, 0)
        ndims = None if n is None or grow is None else n + grow
        if ndims is not None and ndims > MAX_DIMS:
            return bad(f"the result would have {ndims} dimensions; a machine model has at most {MAX_DIMS}")
        return T("MSpace", n=ndims, kind=t.kind, split=e if name == "split" else None)

    def _infer_index(self, e: A.Index, env, top_level) -> T:
        t = self._infer(e.obj, env, top_level)
        count: int | None = 0
        wildcard = False
        for item in e.items:
            if isinstance(item, A.Wildcard):
                wildcard = True
                if t.name not in (None, "MSpace"):
                    self.add("E218", "a lone '*' is only allowed in a machine index", item.loc,
                             ("a lone '*' stands for every index of a machine model's dimension, as in m[*, 0]; "
                              "elsewhere write the indices",))
                count = None if count is None else count + 1
            elif isinstance(item, A.Unpack):
                u = self._infer(item.value, env, top_level)
                if u.name not in (None, "tuple"):
                    self.add("E218", f"'*' unpacks a tuple, not {article(u.name)}", item.loc, (_UNPACK_HINT,))
                count = None if count is None or u.n is None else count + u.n
            else:
                it = self._infer(item, env, top_level)
                if it.name not in (None, "int"):
                    hint, note = self._spread_hint(item, it)
                    if (t.name == "MSpace" and it.name == "tuple" and hint is None and len(e.items) == 1
                            and isinstance(item, (A.Name, A.Member))):
                        dims = self._point_dims() if isinstance(item, A.Member) and item.name == "ipoint" else None
                        if dims is None or t.n is None or dims == {t.n}:
                            hint = f"unpack it, one index per dimension: {_expr_text(e.obj)}[*{_expr_text(item)}]"
                        elif len(dims) == 1 and isinstance(item.obj, A.Name):
                            p = item.obj.name
                            coords = [f"{p}.ipoint[{j}]" for j in range(dims.pop())]
                            hint = _dims_hint(_expr_text(e.obj), t.n, coords, p)
                        count = None  # its length is the count meant: no second error for the count
                    if (hint is None and t.name == "MSpace" and it.name == "tuple"
                            and isinstance(item, (A.Name, A.Member))):  # `m[0, task.ipoint]`: a point, a shape
                        hint = f"take one element of it, e.g. {_expr_text(item)}[0]"
                        if it.n is None or t.n is None or len(e.items) - 1 + it.n == t.n:  # the count may fit
                            spread = dataclasses.replace(e, items=tuple(A.Unpack(x, loc=x.loc) if x is item else x
                                                                        for x in e.items))
                            hint += f", or unpack it, one index per element: {_expr_text(spread)}"
                    self._type_error(f"an index must be an int, not {article(it.name)}", item.loc, hint, note)
                if t.name == "MSpace" and it.const is not None and it.const < 0:
                    self.add("E205", f"machine index {it.const} is negative; machine models have no negative "
                                     "indexing", item.loc, ("reduce the index modulo the model's size",))
                count = None if count is None else count + 1
        if t.name == "MSpace":
            if count is not None and t.n is not None and count != t.n:
                indices = ", ".join(f"i{d}" for d in range(t.n))
                m = _expr_text(e.obj)
                task = next((k for k, v in env.items() if v.name == "Task"), None)  # a function's Task parameter
                dims = self._point_dims()
                plain = 0 < count < t.n and not any(isinstance(i, (A.Unpack, A.Wildcard)) for i in e.items)
                if t.split is not None and count == t.n - 1:  # indexed as the model it split: say so, not a merge
                    split, src = _expr_text(t.split), _expr_text(t.split.obj)
                    d, f = (_expr_text(a) for a in t.split.args)
                    last = (f"{'`' + m + '` is ' if m != split else ''}`{split}`: the split made dimension {d} of "
                            f"`{src}` two, of sizes {f} and {src}.size[{d}] / {f}; `{src}` itself takes {count} index "
                            "values")
                else:
                    last = _dims_hint(m, t.n, [_expr_text(i) for i in e.items], None) if plain else None
                self.add("E206", f"{_plural(count, 'index value')} for a {t.n}-dimensional machine model", e.loc,
                         (f"give one index per dimension: {m}[{indices}]"
                          + (f", or a point's coordinates: {m}[*{task}.ipoint]" if task and dims in (None, {t.n})
                             else ""), last))
                return UNKNOWN
            return T("processor set" if wildcard else "processor", kind=t.kind)
        if t.name == "tuple":
            if count is not None and count != 1:
                return self._type_error(f"a tuple takes exactly one index, {count} given", e.loc,
                                        "index a tuple once, t[0] (a machine model takes one index per dimension)")
            return T("int")
        if t.name is not None:
            return self._type_error(f"{article(t.name)} cannot be indexed", e.loc,
                                    "index a tuple, t[0], or a machine model, m[0, 0]")
        return UNKNOWN

    # ------------------------------------------------------------------------------------------------ statements

    def _statements(self):
        absent_seen: set[str] = set()
        for s in self.program.statements:
            if isinstance(s, (A.IndexTaskMapStmt, A.SingleTaskMapStmt)):
                self._map_function(s)
            if isinstance(s, (A.TaskStmt, A.RegionStmt)):
                kinds = s.kinds if isinstance(s, A.TaskStmt) else s.memories
                seen: set[str] = set()
                for k in kinds:
                    if k.name in seen:
                        self.add("W308", f"kind '{k.name}' is listed twice", k.loc, ("remove the repetition",))
                    seen.add(k.name)
            if isinstance(s, A.RegionStmt):
                names = [m.name for m in s.memories]
                if "VIRTUAL" in names[:-1]:
                    after = names[names.index("VIRTUAL") + 1 :]
                    self.add("W301", f"{', '.join(after)} after VIRTUAL can only be used by leaf variants", s.loc,
                             ("VIRTUAL succeeds for every non-leaf variant, so later kinds apply only to leaf tasks",))
            if isinstance(s, A.LayoutStmt):
                self._layout(s)
            if isinstance(s, (A.InstanceLimitStmt, A.ControlReplicateStmt)) and s.tasks.is_wildcard:
                what = "InstanceLimit" if isinstance(s, A.InstanceLimitStmt) else "ControlReplicate"
                self.add("E220", f"'*' is not allowed as the task of {what}", s.tasks.loc, ("list the task names",))
            if isinstance(s, A.InstanceLimitStmt) and s.count < 1:
                self.add("E215", f"InstanceLimit count {s.count} must be at least 1", s.count_loc,
                         ("give a count of 1 or more (the most instances of the task mapped and unfinished per "
                          f"processor), e.g. `{format_statement(dataclasses.replace(s, count=1))}`, or remove the "
                          "statement to leave them unlimited",))
            if isinstance(s, A.TunableStmt):
                self._tunable(s)
            for k in _kinds_of(s):
                if k.name in ABSENT_KINDS and k.name not in absent_seen:
                    absent_seen.add(k.name)
                    self.add("W303", f"processor kind '{k.name}' does not exist in mapperopt's Legion build; it is "
                                     "skipped", k.loc)
        # A misspelt name (E200, E201) leaves what it meant unread: "never used" would precede and hide the cause.
        misspelt = any(d.code in ("E200", "E201") for d in self.diags)
        models = frozenset(n for n, t in self.global_types.items() if t.name == "MSpace")
        unused, refs = ([], {}) if misspelt else _unused_and_references(self.program, models)
        users_of: dict[str, list] = {}  # name -> the unused definitions that read it, in source order (one pass)
        for u in unused:
            if id(u) not in refs:
                refs[id(u)] = _references(u)
            for name in refs[id(u)]:
                users_of.setdefault(name, []).append(u)
        for d in unused:
            what = f"{'function' if isinstance(d, A.FuncDef) else 'machine model'} '{d.name}'"
            # Named only by other unused definitions: "never used" would contradict the call the user sees.
            users = [u.name for u in users_of.get(d.name, ()) if u is not d]
            self.add("W304", f"{what} is used only by {', '.join(repr(u) for u in users)}, which nothing uses"
                     if users else f"{what} is defined but never used", d.loc, severity="note")

    def _tunable(self, s: A.TunableStmt):
        """E226: a Tunable answer of an unknown type or out of its type's range."""
        if s.type not in A.TUNABLE_TYPES:
            types = f"types: {', '.join(A.TUNABLE_TYPES)} (the C++ type the program reads the tunable as)"
            spelled = s.type.lower() if s.type.lower() in A.TUNABLE_TYPES else None
            self.add("E226", f"unknown tunable type '{s.type}'", s.type_loc,
                     (f"did you mean '{spelled}'?", types) if spelled else (types,))
            return
        _, low, high = A.TUNABLE_TYPES[s.type]
        if not low <= s.value <= high:
            self.add("E226", f"tunable value {s.value} does not fit in {s.type} ({low} to {high})", s.value_loc,
                     (f"give a value from {low} to {high}, or the type the application reads it as (int8 ... "
                      "uint64)",))

    def _layout(self, s: A.LayoutStmt):
        groups = (("SOA", "AOS"), ("C_order", "F_order"), ("Align", "No_Align"))
        names = [c.name for c in s.constraints]
        for group in groups:
            present = [n for n in names if n in group]
            if len(present) > 1:
                first = present[0]
                second = next((n for n in present[1:] if n != first or n == "Align"), None)
                if second is None:  # the same word again: harmless
                    self.add("W308", f"constraint '{first}' is listed twice", s.loc, ("remove the repetition",))
                    continue
                msg = (f"contradictory layout constraints '{first}' and '{second}'" if first != second
                       else "two Align constraints in one Layout statement")
                # at the constraint that contradicts an earlier one
                where = [c for c in s.constraints if c.name in group][1:]
                self.add("E214", msg, next(c for c in where if c.name == second).loc, ("keep one of them",))
        for name in dict.fromkeys(names):  # the flags outside the groups above: a repetition is harmless
            if name in ("Exact", "Compact") and names.count(name) > 1:
                self.add("W308", f"constraint '{name}' is listed twice", s.loc, ("remove the repetition",))
        for c in s.constraints:
            if c.name == "Align":
                # An alignment is a power of two, at least 1 byte: judge the constraint, not the number alone.
                said = f"Align{c.op}{c.value}"
                if (c.op, c.value) in (("==", 0), ("<=", 0)) or (c.op == "<" and c.value <= 1):
                    self.add("E215", f"{said} can never hold: an alignment is at least 1 byte", c.value_loc,
                             ("give the alignment wanted, e.g. Align==64, or drop the constraint",))
                elif c.value == 0 or (c.op, c.value) == (">=", 1):  # != 0, >= 0, > 0, >= 1: every alignment
                    self.add("E215", f"{said} holds for every alignment (at least 1 byte): it constrains nothing",
                             c.value_loc, ("drop it",))
                elif c.value + (c.op == ">") > MAX_ALIGN and c.op in ("==", ">=", ">"):
                    self.add("E227", f"{said} asks for an alignment above {MAX_ALIGN >> 30} GiB ({MAX_ALIGN:,} "
                                     "bytes), the most a Layout may ask for", c.value_loc,
                             ("give the alignment wanted, e.g. Align==64 (a cache line) or Align==4096 (a page)",))
                elif c.value & (c.value - 1):
                    self.add("W306", f"Align value {c.value} is not a power of two", c.value_loc)

    def _map_function(self, s):
        f = self.functions.get(s.func.name)
        if f is None:
            return
        machine = getattr(s, "machine", None)
        if machine is not None:
            types = tuple(p.type for p in f.params)
            if types != ("IPoint", "ISpace", "MSpace"):
                drop = (f"a function of a Task is mapped without a machine model: drop '{machine.name}', "
                        f"IndexTaskMap {_tasks_text(s.tasks)} {f.name};" if types == ("Task",) else None)
                self.add("E208", f"'{f.name}' has parameters ({', '.join(types)}); the three-operand IndexTaskMap "
                                 "needs (IPoint, ISpace, MSpace)", s.func.loc,
                         (drop, f"the three-operand form needs def {f.name}(IPoint p, ISpace s, MSpace m)"))
                return
            mt = self.global_types.get(machine.name, UNKNOWN)
            if mt.name not in (None, "MSpace"):
                self._type_error(f"'{machine.name}' is {article(mt.name)}, not a machine model", machine.loc,
                                 "name a machine model there, e.g. m = Machine(GPU); "
                                 f"IndexTaskMap {_tasks_text(s.tasks)} m {s.func.name};")
            # free names, the function's not one an earlier note proposes: following every note defines each once;
            # the parameter and the local neither shadow a global (W307) nor take a function's name (E211)
            taken = set(self.functions) | set(self.global_types) | self._proposed

            def free(base: str) -> str:
                name = next(n for n in itertools.chain([base], (f"{base}{i}" for i in itertools.count(2)))
                            if n not in taken)
                taken.add(name)
                return name

            g, task, r = free("g"), free("task"), free("r")
            self._proposed.add(g)
            # an int indexes the model as it is; `*` unpacks a tuple
            returns_int = self._function_type(f).name == "int"
            index = r if returns_int else f"*{r}"
            call = f"{r} = {f.name}({task}.ipoint, {task}.ispace, {machine.name});"
            if returns_int and mt.name == "MSpace" and mt.n not in (None, 1):
                # One index for a model of several dimensions (R408 at run time): the rewrite merges the model.
                merged = machine.name + ".merge(0, 1)" * (mt.n - 1)
                self._type_error(
                    f"'{f.name}' returns an int, one index, but the three-operand form indexes the {mt.n}-dimensional "
                    f"machine model '{machine.name}' with it: {machine.name}[{f.name}(...)] needs {mt.n}",
                    s.func.loc,
                    f"index the model merged into one dimension: IndexTaskMap {_tasks_text(s.tasks)} {g}; with "
                    f"def {g}(Task {task}) {{ {call} return {merged}[{r}]; }}")
                return
            rewritten = f"def {g}(Task {task}) {{ {call} return {machine.name}[{index}]; }}"
            self.add("W309", "older three-operand form; equivalent to IndexTaskMap "
                             f"{_tasks_text(s.tasks)} {g}; with {rewritten}", s.loc, severity="note")
            return
        if len(f.params) != 1 or f.params[0].type != "Task":
            self.add("E208", f"mapping function '{f.name}' must take exactly one Task parameter", s.func.loc,
                     ("mapping functions have the form def f(Task task) { ... }",),
                     (f"'{f.name}' is defined at {f.loc}",))
            return
        rt = self.return_types.get(f.name, UNKNOWN)
        if rt.name not in (None, "processor", "processor set"):
            self._type_error(f"mapping function '{f.name}' returns {article(rt.name)}; expected a processor m[i, j] "
                             "or a processor set m[i, *]", f.ret.loc, self._return_hint(f, rt))

    def _return_hint(self, f: A.FuncDef, rt: T) -> str:
        """How `f`, whose return has type `rt` (not a processor), returns a processor: index a machine model of the
        program (node 0, the int or the point it returned as the processor's index)."""
        ret, task = f.ret.value, f.params[0].name
        if rt.name == "MSpace" and isinstance(ret, A.Name):
            m, n = ret.name, rt.n
        else:
            m, n = next(((k, t.n) for k, t in self.global_types.items() if t.name == "MSpace"), ("m", 2))
        # Reduced modulo the dimension's size, so that the example is valid for any number of points.
        value = f"{task}.ipoint[0]" if rt.name != "int" else _expr_text(ret) if isinstance(
            ret, (A.Name, A.Index, A.Member, A.IntLit, A.Call, A.MethodCall)) else f"({_expr_text(ret)})"
        last = f"{value} % {m}.size[{max((n or 2) - 1, 0)}]"
        index = f"*{_expr_text(ret)}" if rt.name == "tuple" else ", ".join(["0"] * ((n or 2) - 1) + [last])
        define = "" if m in self.global_types else f", with `{m} = Machine(CPU);`"
        return (f"index a machine model to return one of its processors, e.g. `return {m}[{index}];`{define}"
                + (" (node, then processor)" if (n or 2) == 2 and rt.name != "tuple" else ""))

    def _overrides(self):
        """W300: a statement whose selector a later statement repeats (§6.4)."""
        latest: dict[tuple, A.Statement] = {}
        for s in reversed(self.program.statements):
            # A Tunable's ID is its selector; the compiled mapper answers with the latest statement of one ID.
            keys = [("TunableStmt", str(s.id))] if isinstance(s, A.TunableStmt) else selector_keys(s)
            over = [k for k in keys if k in latest]
            if over:
                key, later = over[0], latest[over[0]]
                # a list of tasks of which only some are repeated later keeps applying to the others
                kept = [_key_text(k) for k in keys if k not in latest]
                scope = f" for {', '.join(_key_text(k) for k in over)} (it still applies to {', '.join(kept)})" \
                    if kept else f" with the same selector ({_key_text(key)})"
                self.add("W300", f"this {type(s).__name__.removesuffix('Stmt')} statement is overridden by a "
                                 f"later one{scope}", s.loc, (),
                         (f"overridden by {later.loc}: {format_statement(later)}",))
            for key in keys:
                latest[key] = s

    # ------------------------------------------------------------------------------------------------ app checks

    def _app_names(self):
        app = self.app
        known = app.task_names
        listing = ", ".join(known[:12]) + (", ..." if len(known) > 12 else "")
        named = list(dict.fromkeys(ident.name for s in self.program.statements
                                   for ident in (getattr(s, "tasks", None) and s.tasks.names or ())))
        # E225: no task name ran (nor is a spelling near-miss of one that did, E202): the mapper selects nothing of
        # this program by name, whatever other flags may launch. With no name like a task that ran (`likely_task`):
        # another program's mapper, one error instead of a W315 per name; else each name's W315 says which it means.
        given = shlex.join(app.given_as) if app.given_as else "--app ..."  # the options to paste back, if known
        more = "FLAGS" if "--" in app.given_as else "-- FLAGS"  # after the flags given, if any
        missing = bool(app.discovered_as) and bool(named) and all(
            app.task(n) is None and not closest(n, known) for n in named)
        likely = {n: t for n in named if (t := likely_task(n, known))} if missing else {}
        foreign = missing and not likely
        nameless = [n for n in known if re.fullmatch(r"unnamed_task_\d+", n)]
        no_names = ("the program's tasks have no names" if len(nameless) == len(known) else
                    f"{len(nameless)} of the program's {len(known)} tasks "
                    f"{'has no name' if len(nameless) == 1 else 'have no names'} ({quoted_names(nameless, 6)})"
                    if nameless else "")

        def unknown_notes(name: str | None) -> tuple[str, ...]:
            """The notes on the task `name` (None: several, E225) that did not run in discovery."""
            said: tuple[str, ...] = ()
            if app.discovered_as:  # a Legion user may write a variant's name, which discovery does not record
                which = f"'{name}' is a variant's name" if name else "these are variants' names"
                said = (f"if {which} (TaskVariantRegistrar's), name {'its task' if name else 'their tasks'}: "
                        "statements name tasks (discovery does not see variant names)",)
            if nameless:  # Legion's own name for a task registered without one (variant names only)
                said += (f"{no_names}: Legion calls a task registered without one "
                         "unnamed_task_<its task ID>, a name statements may use "
                         f"(`Task {min(nameless, key=lambda n: int(n[13:]))} CPU;`); to "
                         "name a task, give its name as the second argument of `Runtime::preregister_task_variant` "
                         "(TaskVariantRegistrar's is the variant's)",)
            return said

        if missing:
            these = "these tasks" if len(named) > 1 else "this task"
            check = (f"if your runs do launch {these}, check with their flags after `--`: "
                     f"`{toolchain.command('check', self.program.loc.file)} {given} {more}`")
            meant_all = " and ".join(f"{meant(t).removeprefix('did you mean ').removesuffix('?')} for '{abridged(n)}'"
                                     for n, t in likely.items())
            self.add("E225", (f"none of the {len(named)} tasks this mapper names ran" if len(named) > 1 else
                              "the one task this mapper names did not run")
                     + f" in discovery (`{app.discovered_as}`): {quoted_names(named, 6)}; "
                     + ("it looks like the mapper of another program" if foreign and len(named) > 1 else
                        "its statements that name tasks select nothing in this program"), self._whole_file(),
                     (f"give the mapper written for this program, or, {check}",) if foreign else
                     (f"did you mean {meant_all}?", check),
                     (f"tasks that ran: {listing}", *(enum_note(n) for n in named if enum_named(n, known)),
                      *unknown_notes(None if len(named) > 1 else named[0])))
        for s in self.program.statements:
            sel = getattr(s, "tasks", None)
            if sel is None:
                continue
            tasks = []
            for ident in sel.names or ():
                info = app.task(ident.name)
                if info is None and isinstance(s, A.ControlReplicateStmt) and app.top_level is not None \
                        and ident.name == app.top_level.name:
                    continue  # the top-level task, known as its tasks' parent (W319 says what replicates it)
                # The top-level task, whether a benchmark's description names it only as its tasks' parent or a
                # program's discovery lists it: the same rule for both.
                if app.top_level is not None and ident.name == app.top_level.name and (
                        info is None or not isinstance(s, A.ControlReplicateStmt)):
                    kind = app.top_level.variants[0] if app.top_level.variants else "CPU"
                    self.add("E202", f"task '{abridged(ident.name)}' is the top-level task: a statement names it "
                                     "only in ControlReplicate; the others reach it through `*` or a kind selector",
                             ident.loc, (_top_level_hint(s, kind, bool(app.top_level.regions)),))
                    continue
                if info is None:
                    close = closest(ident.name, known)
                    if foreign:
                        continue
                    notes = unknown_notes(ident.name)
                    enum = enum_named(ident.name, known)  # `UPDATE_TASK_ID` for `update`: its ID's C++ name
                    if enum:
                        notes = (enum_note(ident.name), *notes)
                    if app.discovered_as and not close:  # other flags may launch it: no typo of a task that ran
                        longer = likely_task(ident.name, known)
                        self.add("W315", f"task '{abridged(ident.name)}' did not run in discovery "
                                         f"(`{app.discovered_as}`): this statement applies only to runs that launch it",
                                 ident.loc,
                                 ((meant(longer) if longer else None),
                                  "if your runs launch it, check with their flags after `--`: "
                                  f"`{toolchain.command('check', ident.loc.file)} {given} {more}`"),
                                 (f"tasks that ran: {listing}", *notes))
                        continue
                    self.add("E202", f"unknown task '{abridged(ident.name)}' (application '{app.app}')", ident.loc,
                             ((meant(close or enum) if close or enum else None), f"tasks: {listing}"), notes)
                else:
                    tasks.append(info)
            region = getattr(s, "region", None)
            if region is None or region.is_wildcard:
                continue
            scope = tasks if sel.names is not None else list(app.tasks)
            if sel.names is not None and not scope:
                continue
            if region.name is not None:
                chains = {n for t in scope for r in t.regions for n in r.names}
                if region.name not in chains:
                    used = self._other_launch_use(s, region.name, scope)
                    if used is not None:  # discovery saw it on later launches: a warning, as for a partner's name
                        t, what, hint = used
                        self.add("W322", f"region '{region.name}' is not among the names of the first launch of task "
                                         f"'{t.name}' ({', '.join(sorted(chains))}), but discovery saw it on others: "
                                         f"{what}", region.loc, (hint,))
                        continue
                    pair = self._other_launch_region(region.name, scope)
                    if pair is not None:
                        t, seen, why = pair
                        self.add("W322", f"region '{region.name}' is not among the names of task '{t.name}' that "
                                         f"discovery saw ({', '.join(sorted(chains))}): discovery records the first "
                                         f"launch of each task only, and {why}", region.loc,
                                 (f"if no launch of '{t.name}' uses '{region.name}', the statement matches nothing "
                                  "(the run's note R453 says so)",))
                        continue
                    # a ping-pong partner's name discovery never saw comes first: the name of another argument
                    # of the task (the one a later launch writes, say) would be the wrong fix
                    partners = sorted(self._partner_names(scope)) if app.discovered_as else []
                    # then the arguments' own names, which explain shows, before a parent's name that also selects
                    # other arguments (`pxm` is `pxm_in`, not its parent `xm`) unless the parent's is clearly closer
                    # (`node spaces` is the parent `node space`, not the argument `node pieces`)
                    own = sorted({r.name for t in scope for r in t.regions if r.name})
                    begun = [n for n in own if n.startswith(region.name)]
                    close = closest(region.name, partners) or closest(region.name, begun, 0)
                    if not close:
                        mine, parent = closest(region.name, own), closest(region.name, sorted(chains))
                        likeness = [difflib.SequenceMatcher(None, region.name, n).ratio() if n else 0
                                    for n in (mine, parent)]
                        close = parent if likeness[1] > likeness[0] + 0.1 else mine
                    point = self._other_point_subregion(region.name, scope)
                    if point is not None:  # another point's subregion, which the run matches at that point
                        t, above, kind, seen = point
                        self.add("W325", f"region '{region.name}' is not a name discovery saw for task '{t.name}': "
                                         "it records one point of each index launch, whose subregion of "
                                         f"{kind} '{above}' is '{seen}'; if '{region.name}' names another point's "
                                         "subregion, this statement applies to that point only", region.loc,
                                 (self._every_point_hint(s, above),))
                        continue
                    whose = f"task '{scope[0].name}'" if len(scope) == 1 else (
                        "any task" if sel.names is None else "these tasks")
                    # close to one point's subregion: the partition, for every point (that name is W325's)
                    each = self._point_subregion(close, scope) if close else None
                    hint = self._field_hint(s, region.name, scope) or (
                        f"{self._every_point_hint(s, each[1])} (a point's own subregion, such as '{close}', applies "
                        "to that point only)" if each else meant(close) if close else (
                            self._named_hint(s, scope, whose, chains) if chains else
                            self._unnamed_hint(s, scope, whose)))
                    # a user's program: where the listed names come from, for a C++ variable's name, say
                    notes = (self._attached_note(s, scope),) if chains and not close and app.discovered_as else (
                        self._arguments_note(s, scope[0]) if close and app.discovered_as and len(scope) == 1 else ())
                    if field_id_named(region.name):
                        notes = (enum_note(region.name, field=True), *notes)
                    self.add("E203", f"unknown region '{abridged(region.name)}' for {whose}", region.loc, (hint,),
                             notes)
                    continue
                self._alternating(s, region.name, scope)
                point = self._point_subregion(region.name, scope)
                if point is not None:
                    t, above, kind = point
                    self.add("W325", f"region '{region.name}' is the subregion of {kind} '{above}' that one point of "
                                     f"the index launch of '{t.name}' uses (discovery records the first point it "
                                     "maps): where each point's subregion has a name of its own, this statement "
                                     "applies to that point only", region.loc, (self._every_point_hint(s, above),))
            elif region.index is not None and sel.names is None:  # `*`: every task
                t = max(scope, key=lambda t: len(t.regions))
                k = len(t.regions)
                if region.index >= k:
                    self.add("E204", f"region index {region.index} is out of range for every task: no task has a "
                                     f"region requirement {region.index}", region.loc,
                             (f"the most region requirements of a task is {k}"
                              f"{f' (0..{k - 1}), of {t.name!r}' if k else ''}",))
            elif region.index is not None:
                for t in scope:
                    if region.index >= len(t.regions):
                        k = len(t.regions)
                        self.add("E204", f"region index {region.index} is out of range for task '{t.name}'",
                                 region.loc, (f"task '{t.name}' has {_plural(k, 'region requirement')}"
                                              f"{f' (0..{k - 1})' if k else ''}",))

    def _point_subregion(self, name: str, scope) -> tuple | None:
        """(task, name, "partition" or "region") when `name` names the subregion one point of an index launch of a
        task of `scope` uses (`AppDescription.point_subregion`): the name above it, every point's, and its kind;
        else None."""
        for t in scope:
            for r in t.regions:
                own, above = self.app.point_subregion(t, r)
                if name in own:
                    kind = next(n.kind for n in self.app.region_tree if n.name == above)
                    return t, above, "region" if kind == "region" else "partition"
        return None

    def _other_point_subregion(self, name: str, scope) -> tuple | None:
        """(task, the name above, its kind as `_point_subregion` gives them, and the point subregion's name discovery
        saw) when `name`, which no chain of `scope` has, may name another point's subregion of an index launch of a
        task of `scope`: a subregion of the launch's partition in discovery's region tree (another launch used it),
        or the name discovery saw with other numbers, each below the launch's largest extent (`block_3` for the
        `block_0` of a launch of 4 points; a program that names its subregions names them by their color). Else
        None: a name only close to one point's (`block_7`, `block_x`) names no subregion of the launch."""
        tree = self.tree
        for t in scope:
            for r in t.regions:
                own, above = self.app.point_subregion(t, r)
                if above is None:  # not one point's subregion (a root of the tree has no parent either)
                    continue
                # a child of the partition; not of a region above (an unnamed partition's), which may be any region
                # of it, not one point's
                sibling = name in tree and tree[name].parent == above and tree[above].kind != "region"
                for seen in own:
                    numbers = re.fullmatch(re.sub(r"\d+", r"(\\d+)", re.escape(seen)), name)
                    if sibling or (numbers and numbers.groups() and t.domain and all(
                            int(n) < max(t.domain) for n in numbers.groups())):
                        return (*self._point_subregion(seen, [t]), seen)
        return None

    @classmethod
    def _by_index(cls, stmt, scope):
        """`stmt` selecting, by its index, the first argument without a name of `scope`'s tasks, else argument 0 of
        the first with a region argument (the task named where `stmt` selects `*` or several tasks), and that task;
        (None, None) where none has one. An unnamed argument first: the one a name the program never attached
        most likely means."""
        unnamed = cls._unnamed_args(scope)
        t, index = unnamed[0] if unnamed else (next((t for t in scope if t.regions), None), 0)
        if t is None:
            return None, None
        by_index = dataclasses.replace(stmt, region=A.RegionSel(index=index))
        if stmt.tasks.names is None or len(scope) > 1:
            by_index = dataclasses.replace(by_index, tasks=A.TaskSel((A.Ident(t.name),)))
        return by_index, t

    @staticmethod
    def _unnamed_args(scope) -> list[tuple]:
        """(task, index) of each region argument of `scope`'s tasks that has no name (explain shows '-')."""
        return [(t, r.index) for t in scope for r in t.regions if not r.names]

    @classmethod
    def _named_hint(cls, stmt, scope, whose: str, chains) -> str:
        """E203's hint listing the names of `scope`'s arguments, and those without a name by index (privilege,
        fields) with the statement that selects the first: a task may mix named and unnamed arguments."""
        hint = f"region names of {whose}: {', '.join(sorted(chains))}"
        unnamed = cls._unnamed_args(scope)
        if not unnamed:
            return hint
        shown = [f"argument {i} of '{t.name}' ({cls._argument_text(t.regions[i])})" for t, i in unnamed[:3]]
        more = f" and {len(unnamed) - 3} more" if len(unnamed) > 3 else ""
        by_index, _ = cls._by_index(stmt, scope)
        return (f"{hint}; {'; '.join(shown)}{more} {'has' if len(unnamed) == 1 else 'have'} no name (explain shows "
                f"'-'): `{format_statement(by_index)}` selects {'it' if len(unnamed) == 1 else 'the first'}")

    @staticmethod
    def _argument_text(r) -> str:
        """What tells a region argument `r` from the others of its task where it has no name: its privilege (with its
        reduction operator) and fields, e.g. "reduce sum_f64; field field_2"."""
        fields = f"; field{'s' if len(r.fields) > 1 else ''} {', '.join(r.fields)}" if r.fields else ""
        return f"{r.privilege}{f' {r.redop}' if r.redop else ''}{fields}"

    @staticmethod
    def _arguments_note(stmt, t) -> tuple[str, ...]:
        """E203's note, beside a user's program's `did you mean`, for a task `t` of 4 region arguments or fewer: each
        argument's names (with those later launches use, `TaskInfo.other_regions`) and the index selector, which a
        name close to the wrong argument's misleads from; () for more arguments (explain lists them)."""
        if not t.regions or len(t.regions) > 4:
            return ()
        later = {}
        for g in t.other_regions or ():
            for i, names in g.args:
                for n in names:
                    if n:
                        later.setdefault(i, {}).setdefault(n, launch_numbers(g, len(t.launches) > 1)[0])
        args = []
        for r in t.regions:
            names = ", ".join(r.names) if r.names else "no name"
            others = "; ".join(f"{n} on {where}" for n, where in later.get(r.index, {}).items())
            args.append(f"{r.index} ({names}{f'; {others}' if others else ''})")
        by_index = dataclasses.replace(stmt, region=A.RegionSel(index=0))
        if stmt.tasks.names is None:
            by_index = dataclasses.replace(by_index, tasks=A.TaskSel((A.Ident(t.name),)))
        return (f"arguments of '{t.name}': {', '.join(args)}; a statement also selects an argument by its index, "
                f"`{format_statement(by_index)}`",)

    @classmethod
    def _attached_note(cls, stmt, scope) -> str:
        """E203's note for a user's program whose names match none: where the names come from, and the index."""
        by_index, _ = cls._by_index(stmt, scope)
        return ("these are the names the program attached (runtime->attach_name(...) on a region, a partition, their "
                "index spaces or the field space), never C++ variable names; an argument is also selected by its "
                f"index, `{format_statement(by_index)}`")

    def _unnamed_hint(self, stmt, scope, whose: str) -> str:
        """E203's hint where no region argument of the selected tasks has a name (a program that attaches none, as
        most Legion tutorials): that Legion sees only attached names, and the statement that selects an argument by
        its index instead, for the first task with one; for a user's program, to rebuild one whose sources attach
        names already (`AppDescription.built`)."""
        by_index, t = self._by_index(stmt, scope)
        if t is None:
            return {"any task": "no task has a region argument",
                    "these tasks": "these tasks have no region argument"}.get(whose, f"{whose} has no region argument")
        # a program built before its attach_name calls were added has none either: only the user knows its sources
        rebuild = f"; if the program attaches names already, rebuild it ({self.app.built})" if self.app.built else ""
        if len(t.regions) == 1:
            select = f"select the argument by its index, `{format_statement(by_index)}` (task '{t.name}' has one)"
        else:  # no index is the likely one: each argument with what tells it apart, and its statement
            shown = t.regions[:MAX_ARGUMENTS_LISTED]
            more = len(t.regions) - len(shown)
            select = (f"select the argument you mean by its index (task '{t.name}' has {len(t.regions)}): " + "; ".join(
                f"argument {r.index} ({self._argument_text(r)}), "
                f"`{format_statement(dataclasses.replace(by_index, region=A.RegionSel(index=r.index)))}`"
                for r in shown) + (f"; and {more} more (explain lists them)" if more else ""))
        return (f"no region argument of {whose} has a name (explain shows '-'): Legion knows a region only by a name "
                f"the program attaches to it, never by C++ variable names; {select}; or name its region or partition "
                f'in the program: runtime->attach_name(region, "name"){rebuild}')

    @staticmethod
    def _every_point_hint(stmt, above: str) -> str:
        """W325's hint: statement `stmt` naming `above`, which every point's chain has."""
        return f"`{format_statement(dataclasses.replace(stmt, region=A.RegionSel(name=above)))}` applies to every point"

    @staticmethod
    def _other_launch_use(stmt, name: str, scope) -> tuple | None:
        """(task, what the statement selects on which launches, a hint selecting by index) where discovery recorded
        `name` for an argument of later launches of a task of `scope` (`TaskInfo.other_regions`), else None."""
        for t in scope:
            groups = [g for g in t.other_regions or () if any(name in names for _, names in g.args)]
            if not groups:
                continue
            args = sorted({i for g in groups for i, names in g.args if name in names})
            launches = "; ".join(launch_numbers(g, len(t.launches) > 1)[0] for g in groups)
            which = f"argument {args[0]}" if len(args) == 1 else f"arguments {', '.join(map(str, args))}"
            one = sum((last - first) // step + 1 for g in groups for first, last, step in g.launches) == 1
            what = (f"{launches} {'has' if one else 'have'} {which} in '{name}', so this statement selects {which} on "
                    "those launches only (none on the others)")
            index = A.RegionSel(index=args[0])
            hint = (f"`{format_statement(dataclasses.replace(stmt, region=index))}` selects argument {args[0]} on "
                    "every launch" if stmt.tasks.names is not None and len(scope) == 1 else
                    f"a statement for task '{t.name}' alone can select argument {args[0]} by its index on every launch")
            return t, what, hint
        return None

    def _other_launch_region(self, name: str, scope) -> tuple | None:
        """(task, the name of its requirement's chain, and what makes `name` another launch's: "'X' is a region with
        the same index space 'S' as 'Y'") when `name` is a region of the tree that shares with a region in the chain
        of one of `scope`'s requirements its index space (its parent in the tree, when named) or, both roots of the
        tree, their field space (unnamed: their fields), or a partition that shares with a partition in such a
        chain its index partition (or whose region is such a pair), or, not in the tree, the name of a partition in
        such a chain with its region's name replaced by its partner's (`next_ghost` for `cur_ghost` of `cur`):
        another launch of the task may name it (discovery records each task's first launch, and the tree only the
        names it saw); else None. Only for a discovered description: a benchmark's lists all its launches."""
        tree = self.tree
        other = tree.get(name)
        if not self.app.discovered_as:
            return None
        if other is None:
            partner = self._partner_names(scope).get(name)
            if partner is None:
                return None
            t, seen, region, pair, space = partner
            return t, seen, (f"'{name}' is named like '{seen}' with '{pair}' for '{region}', and '{pair}' is a region "
                             f"with the same {space} as '{region}', which a later launch may use instead (a ping-pong "
                             "pair)")
        if other.kind not in ("region", "partition"):
            return None
        for t in scope:
            for r in t.regions:
                for n in r.names:
                    what = self._shared(n, name)
                    if what is not None:
                        return t, n, (f"'{name}' is a {other.kind} with the same {what} as '{n}', which a later launch "
                                      "may use instead (a ping-pong pair)")
        return None

    def _shared(self, n: str, name: str) -> str | None:
        """What `n` shares with `name` (two regions or two partitions of the region tree) that makes them a ping-pong
        pair: "index space 'X'", "field space 'Y'", "fields (a, b)" (roots of unnamed spaces), "index partition 'Z'",
        or None."""
        tree = self.tree
        node, other = tree.get(n), tree.get(name)
        if node is None or other is None or node.kind != other.kind or n == name:
            return None
        parent = tree.get(node.parent) if node.parent is not None else None
        if node.kind == "partition":
            if node.parent == other.parent:  # the partitions of two regions by one (named) index partition
                return f"index partition '{node.parent}'" if parent and parent.kind == "index_partition" else None
            # no named index partition between: partitions of a ping-pong pair of regions
            return self._shared(node.parent, other.parent) if parent and parent.kind == "region" else None
        if node.kind != "region" or node.parent != other.parent:
            return None
        if node.parent is not None:
            return f"index space '{node.parent}'" if parent and parent.kind == "index_space" else None
        spaces = {r.names[-1] for t in self.app.tasks for r in t.regions
                  if r.names and (n in r.names or name in r.names)
                  and getattr(tree.get(r.names[-1]), "kind", None) == "field_space"}
        if spaces:
            return f"field space '{spaces.pop()}'" if len(spaces) == 1 else None
        # an unnamed field space: the fields (and their sizes) of the requirements on each
        fields = [{f for t in self.app.tasks for r in t.regions if x in r.names for f in r.fields} for x in (n, name)]
        return f"fields ({', '.join(sorted(fields[0]))})" if fields[0] and fields[0] == fields[1] else None

    def _region_of(self, name: str) -> str | None:
        """The region of the region tree that partition (or region) `name` belongs to, else None."""
        tree = self.tree
        node = tree.get(name)
        while node is not None and node.kind != "region":
            node = tree.get(node.parent) if node.parent is not None else None
        return node.name if node is not None else None

    def _partner_names(self, scope) -> dict[str, tuple]:
        """Names discovery cannot have seen, of a later launch of a ping-pong task of `scope`: for each partition in
        a requirement's chain whose name holds its region's name (`cur_ghost` of `cur`), and each region that is a
        ping-pong pair with that region (`next`), that name with the partner's in place of the region's
        (`next_ghost`), not in the tree -> (task, the partition's name, its region, the partner, what they share)."""
        tree = self.tree
        regions = [x.name for x in self.app.region_tree if x.kind == "region"]
        out: dict[str, tuple] = {}
        for t in scope:
            for r in t.regions:
                for n in r.names:
                    region = self._region_of(n) if getattr(tree.get(n), "kind", None) == "partition" else None
                    if region is None or region not in n:
                        continue
                    for pair in regions:
                        space = self._shared(region, pair)
                        derived = n.replace(region, pair, 1)
                        if space is not None and derived not in tree:
                            out.setdefault(derived, (t, n, region, pair, space))
        return out

    def _alternating(self, s, name: str, scope) -> None:
        """W328: statement `s` selects by `name` a requirement (at or below region R) of a task of `scope` that also
        has a requirement on R's ping-pong partner: a launch that swaps them has `name` in the other argument's chain,
        so the statement covers some of the launches only. Which of discovery's launches differ in the two arguments
        is said where the description compared them (`TaskInfo.other_regions`), else that it is not known."""
        if not self.app.discovered_as:
            return
        tree = self.tree
        if getattr(tree.get(name), "kind", None) not in ("region", "partition"):
            return
        for t in scope:
            mine = [r for r in t.regions if name in r.names]
            if len(mine) != 1:
                continue
            r = mine[0]
            region = self._region_of(name)
            for q in t.regions:
                partner = next((x for x in q.names if getattr(tree.get(x), "kind", None) == "region"), None)
                if q is r or partner is None or region is None or self._shared(region, partner) is None:
                    continue
                hint = (f"`{format_statement(dataclasses.replace(s, region=A.RegionSel(index=r.index)))}` selects "
                        f"argument {r.index} on every launch" if s.tasks.names is not None and len(scope) == 1 else
                        f"a statement for task '{t.name}' alone can select argument {r.index} by its index on every "
                        "launch")
                # One name for each thing: the name selected (a partition: with its region), the partner region.
                what = f"region '{region}'" if name == region else f"'{name}' (a partition of region '{region}')"
                # swapped, the other argument is under `region` but in the partition it uses then, not `name`'s
                there = f"argument {q.index} on it" if name == region else (
                    f"argument {q.index} on it only where that argument is in '{name}' itself (on the first launch "
                    f"it is in '{q.names[0]}'), else no argument")
                known = self._swaps_known(t, (r.index, q.index), name, there)
                self.add("W328", f"{what} selects argument {r.index} of task '{t.name}'; argument {q.index} is on "
                                 f"region '{partner}', a possible ping-pong partner of '{region}' (the same "
                                 f"{self._shared(region, partner)}): {known}", s.region.loc, (hint,))
                return

    @staticmethod
    def _swaps_known(t, args: tuple[int, int], name: str, there: str) -> str:
        """What W328 knows of the launches of task `t` that swap its arguments `args`, where `name` then selects
        `there`: which of discovery's launches differ in them (as explain says), that none does, or, for a
        description that did not compare its launches, that it is not known."""
        if t.other_regions is None:
            return (f"if a later launch swaps them, '{name}' selects {there}; discovery records each task's first "
                    "launch only, so it cannot tell whether any launch swaps them")
        differ = tuple(g for g in t.other_regions if any(i in args for i, _ in g.args))
        if differ or t.other_unlisted:
            # an unlisted launch may differ in any argument: counted with them
            groups = launch_groups_text(differ, t.other_unlisted, len(t.launches) > 1)
            return f"in discovery, {'; '.join(groups)}: where a launch swaps them, '{name}' selects {there}"
        counts = launch_counts_text(dict(t.launches))
        same = (f"discovery's {counts} of '{t.name}' are all on the same regions in arguments {args[0]} and "
                f"{args[1]}, so '{name}' selects argument {args[0]} on each" if sum(dict(t.launches).values()) > 1 else
                f"discovery mapped {counts} of '{t.name}', so '{name}' selects argument {args[0]} on it")
        return f"{same}; if a launch swaps them in a run with other input, '{name}' selects {there}"

    @staticmethod
    def _field_hint(s, name: str, scope) -> str | None:
        """For a region selector that names a field of the selected tasks' requirements: which requirements hold
        it, and the statement that selects one of them (a statement maps a whole requirement, all its fields)."""
        holders = [(t, r) for t in scope for r in t.regions if name in r.fields]
        if not holders:
            return None
        where = [f"argument {r.index}{f' ({r.name})' if r.name else ''} of '{t.name}'" for t, r in holders]
        where = ", ".join(where[:3]) + (f" and {len(where) - 3} more" if len(where) > 3 else "")
        t, r = holders[0]
        # an index means another requirement in each task: only for a statement of one task
        by_index = [A.RegionSel(index=r.index)] if s.tasks.names is not None and len(scope) == 1 else []
        # the name selects every argument of the task whose region tree has it: said, and the index first where it
        # is offered
        also = [(t, q) for q in t.regions if r.name and r.name in q.names and q.index != r.index]
        ways = ([A.RegionSel(name=r.name)] if r.name else []) + by_index
        if also and by_index:
            ways.reverse()
        said = ", ".join(f"argument {q.index}" + ("" if o is t and len(scope) == 1 else f" of '{o.name}'")
                         for o, q in also[:3]) + (f" and {len(also) - 3} more" if len(also) > 3 else "")
        examples = " or ".join(f"`{format_statement(dataclasses.replace(s, region=w))}`"
                               + (f" (which also selects {said})" if also and w.name is not None else "")
                               for w in ways)
        kind = type(s).__name__.removesuffix("Stmt")
        return (f"'{name}' is a field of {where}: a {kind} statement applies to a whole region argument, all its "
                f"fields, selected by a name of its region tree or by its index" + (f", e.g. {examples}" if examples
                                                                                   else ""))

    def _app_kinds(self):
        """E209: a task whose Task statements list no kind it can run on; one error for all the tasks a `Task *`
        statement leaves so (its fix is one statement), where a kind of their variants would do."""
        stmts = [(pos, s) for pos, s in enumerate(self.program.statements) if isinstance(s, A.TaskStmt)]
        runs = lambda k: k not in ABSENT_KINDS and (self.machine is None or self.machine.count(k, 0) > 0)  # noqa: E731
        every: dict[int, tuple] = {}  # id of a `Task *` statement -> (statement, kinds listed, [tasks it leaves])
        for info in self.app.tasks:
            cands = [((rank,), (tok,), pos, s) for pos, s in stmts for rank, tok in task_matches(s.tasks, info.name)]
            ordered = by_precedence(cands)
            if not ordered:
                continue
            listed = list(dict.fromkeys(k.name for s in ordered for k in s.kinds))
            if any(runs(k) and k in info.variants for k in listed):
                continue
            if ordered[0].tasks.is_wildcard and any(map(runs, info.variants)):
                every.setdefault(id(ordered[0]), (ordered[0], listed, []))[2].append(info)
                continue
            procs = "" if self.machine is None else "; processors per node: " + ", ".join(
                f"{k} {self.machine.count(k, 0)}" for k in listed)
            self.add("E209", f"task '{info.name}' cannot run on any kind of its list {', '.join(listed)}",
                     ordered[0].loc, (f"add a kind it has a variant for, e.g. Task {info.name} "
                                      f"{','.join([k for k in info.variants if runs(k)] or info.variants)};",),
                     (f"variants of '{info.name}': {', '.join(info.variants)}{procs}",))
        for s, listed, infos in every.values():
            # The message names every task (AutoGuide's rule reads them and the list from it).
            extra = [k for k in dict.fromkeys(k for t in infos for k in t.variants) if runs(k) and k not in listed]
            fixed = A.TaskStmt(s.tasks, (*s.kinds, *(A.Kind(k) for k in extra)))
            procs = "" if self.machine is None else "; processors per node: " + ", ".join(
                f"{k} {self.machine.count(k, 0)}" for k in listed)
            variants = ", ".join(dict.fromkeys(v for t in infos for v in t.variants))
            names = [f"'{t.name}'" for t in infos]
            who = "task " + names[0] if len(names) == 1 else f"tasks {', '.join(names[:-1])} and {names[-1]}"
            self.add("E209", f"{who} cannot run on any kind of {'its' if len(names) == 1 else 'their'} list "
                     f"{', '.join(listed)}", s.loc,
                     (f"list a kind {'it has' if len(names) == 1 else 'these tasks have'} a variant for after the "
                      f"others: `{format_statement(fixed)}`",),
                     (f"variants{'' if infos[1:] else f' of {infos[0].name!r}'}: {variants}{procs}",))

    def _app_launches(self):
        """W305: statements that can have no effect given the application description."""
        ev = None  # built for the first CollectMemory statement only
        for s in self.program.statements:
            sel = getattr(s, "tasks", None)
            if sel is None or sel.names is None:
                continue
            top = self.app.top_level
            # not the top-level task, which a statement names only in ControlReplicate (E202)
            infos = [self.app.task(i.name) for i in sel.names
                     if self.app.task(i.name) is not None and (top is None or i.name != top.name)]
            if not infos:
                continue
            if (isinstance(s, (A.RegionStmt, A.InstanceLimitStmt, A.LayoutStmt))
                    and not (isinstance(s, A.RegionStmt) and all(t.inner for t in infos))):
                self._kind_without_variant(s, infos)
            if isinstance(s, A.TaskStmt):
                self._task_without_variant(s, infos)
            elif isinstance(s, A.IndexTaskMapStmt):
                never = [t.name for t in infos if not t.index_launched]
                if never:
                    self.add("W305", f"IndexTaskMap has no effect on {', '.join(never)}: never index-launched", s.loc,
                             ("use SingleTaskMap for tasks launched individually",))
            elif isinstance(s, A.SingleTaskMapStmt):
                never = [t.name for t in infos if not t.single_launched]
                if never:
                    self.add("W305", f"SingleTaskMap has no effect on {', '.join(never)}: only index-launched",
                             s.loc, ("use IndexTaskMap for index launches",))
            elif isinstance(s, A.RegionStmt) and all(t.inner for t in infos):
                self.add("W305", "Region has no effect: the tasks are inner tasks, whose regions are mapped "
                                 "virtually", s.loc)
            if isinstance(s, (A.RegionStmt, A.LayoutStmt)) and (bare := [t.name for t in infos if not t.regions]):
                seen = " (as launched in discovery)" if self.app.discovered_as else ""
                plural = len(bare) > 1
                self.add("W305", f"{type(s).__name__.removesuffix('Stmt')} has no effect on {_and(bare)}: "
                                 f"{'they have' if plural else 'it has'} no region arguments{seen}", s.loc,
                         ("remove the statement" if len(bare) == len(sel.names) else
                          f"remove {_and(bare)} from its task list",))
            elif isinstance(s, A.CollectMemoryStmt):
                selected = [(t, r) for t in infos for r in t.regions if s.region.is_wildcard or (
                    s.region.index == r.index if s.region.index is not None else s.region.name in r.names)]
                read = [(t, r) for t, r in selected if r.privilege == "read_only"]
                written = [(t, r) for t, r in selected if r.privilege != "read_only"]
                if written and not s.region.is_wildcard:  # the run ignores each of them (warning R450)
                    which = [f"requirement {r.index} of '{t.name}'{f' ({r.name})' if r.name else ''} is "
                             f"{r.privilege.replace('_', '-')}" for t, r in written]
                    which = which[:3] + ([f"{len(which) - 3} more"] if len(which) > 3 else [])
                    self.add("W305", ("CollectMemory has no effect: the selected requirements are not read-only ("
                                      if not read else "CollectMemory ignores the selected requirements that are not "
                                      "read-only (") + f"{'; '.join(which)})", s.loc,
                             ("CollectMemory only releases read-only instances" + ("" if not read else "; select the "
                              "read-only ones by index: " + ", ".join(f"CollectMemory {t.name} {r.index};"
                                                                    for t, r in read[:3])),))
                    if not read:
                        continue
                # Readers of fields a task reduces into stay tracked (note R457): with only those, nothing is freed.
                ev = ev or Evaluator(self.program, None, self.app)
                reducers = [ev.reducers(t.name, r.index) for t, r in read]
                if read and all(reducers):
                    names = list(dict.fromkeys(n for rs in reducers for n in rs))
                    self.add("W305", "CollectMemory has no effect: the selected requirements stay tracked, as "
                                     f"{quoted_names(names)} {'reduces' if len(names) == 1 else 'reduce'} into their "
                                     "fields (note R457)", s.loc)

    def _task_without_variant(self, s: A.TaskStmt, infos):
        """W305: a Task statement for named tasks none of whose kinds the task has a variant for (`Task check IO;`
        where 'check' runs on CPUs only) applies on no machine; where no statement for the task lists a kind it has
        a variant for, E209 says it instead."""
        kinds = [k.name for k in s.kinds]
        never = []
        for info in infos:
            if set(kinds) & set(info.variants):
                continue
            listed = {k.name for o in self.program.statements if isinstance(o, A.TaskStmt)
                      and task_matches(o.tasks, info.name) for k in o.kinds}
            if listed & set(info.variants):
                never.append(info)
        if not never:
            return
        self.add("W305", _without_variant(s, infos, never, " or ".join(kinds)), s.loc,
                 (f"drop it, or list a kind {quoted_names([t.name for t in never])} "
                  f"{'has' if len(never) == 1 else 'have'} a variant for",))

    def _kind_without_variant(self, s: A.RegionStmt | A.InstanceLimitStmt | A.LayoutStmt, infos):
        """W305: a Region, InstanceLimit or Layout statement for a processor kind that named tasks have no variant for
        (`Region check * GPU FBMEM;` where 'check' runs on CPUs only), or a Layout statement for FBMEM, the memory of
        a GPU alone, for tasks without a GPU variant: it never applies to them, on any machine."""
        kind = s.target if isinstance(s, A.LayoutStmt) else s.proc
        if not isinstance(kind, A.Kind) or kind.name not in (*A.PROC_KINDS, "FBMEM"):
            return
        proc = "GPU" if kind.name == "FBMEM" else kind.name
        never = [t for t in infos if proc not in t.variants]
        if not never:
            return
        names = quoted_names([t.name for t in never])
        what = _without_variant(s, infos, never, proc, "FBMEM is a GPU's memory, and " if kind.name == "FBMEM" else "")
        kinds = [k for k in never[0].variants if all(k in t.variants for t in never)]
        # The statement for those tasks on a kind they have a variant for (a memory of the list that kind reaches:
        # `Region check * CPU FBMEM;` would be E222), written out, so that the hint applied checks clean.
        has = None if self.machine is None else lambda k: k == "VIRTUAL" or bool(self.machine.memories_of(k))
        instead = _for_kind(s, never, kinds[0], has) if kinds else None
        if len(never) < len(infos):
            kept = A.TaskSel(tuple(i for i in s.tasks.names if i.name not in {t.name for t in never}))
            hint = f"take {names} out of it: `{format_statement(dataclasses.replace(s, tasks=kept))}`"
            if instead is not None:
                hint += f"; for {names}, write one for a kind {'it has' if len(never) == 1 else 'they have'} a " \
                        f"variant for, e.g. `{instead}`"
        elif kind.name == "FBMEM":
            hint = f"drop it, or name a memory {names} can use: `{instead}`"
        elif instead is not None:
            hint = f"drop it, or write it for a kind {names} {'has' if len(never) == 1 else 'have'} a variant for: " \
                   f"`{instead}`"
        else:
            hint = "drop it"
        self.add("W305", what, s.loc, (hint,))

    def _app_limits(self):
        """W317 for an InstanceLimit on a task whose index launch has a requirement Legion maps with all its points
        together: under any limit of the task, whatever its count (the points of two launches in flight could share
        its slots), the mapper maps it per point instead, or with collective coherence holds back no point (the
        run's note R459)."""
        for s in self.program.statements:
            if not isinstance(s, A.InstanceLimitStmt) or s.tasks.names is None:
                continue
            for ident in s.tasks.names:
                info = self.app.task(ident.name)
                if info is None or not info.index_launched:
                    continue
                if isinstance(s.proc, A.Kind) and s.proc.name not in info.variants:
                    continue
                together = [r for r in info.regions if r.collective]
                if not together:
                    continue
                points = f" ({math.prod(info.domain)} points)" if info.domain else ""
                which = "; ".join(f"requirement {r.index}{f' ({r.name})' if r.name else ''}, which every point "
                                  f"{'reduces into' if r.privilege == 'reduce' else 'reads'}" for r in together)
                self.add("W317", f"InstanceLimit {s.count} applies to the index launch of '{info.name}'{points}: "
                                 f"Legion maps its {which}, with all points together; under an InstanceLimit of any "
                                 "count the mapper maps it per point instead, or, with collective coherence, holds "
                                 "back no point of the launch (note R459)", ident.loc,
                         (f"without an InstanceLimit on '{info.name}', Legion maps it collectively again",))

    def _app_tunables(self):
        """The Tunable statements against the tunables discovery saw the program ask for (`app.tunables`).

        E224 where the run is certain to abort: a tunable the mapper leaves unanswered (about the whole file, which
        lacks the statement; Legion's default mapper answers its own IDs, 0-10, with 8 bytes, and the
        mapper dies on the others, R456), unless the run keeps the program's own mapper (`keep_app_mapper`); or one
        answered with another size than the program reads (Legion's "Future size mismatch").
        W313: an ID of 0-10 read as 8 bytes that the program's mapper answered and this mapper leaves to Legion's
        default mapper (the size fits, the meaning may not); a Tunable statement for an ID the program never asks
        for, Legion's own IDs included: discovery records the tunables Legion's default mapper answers too
        (`legion`), and the benchmarks ask for none."""
        answers = {s.id: s for s in self.program.statements
                   if isinstance(s, A.TunableStmt) and s.type in A.TUNABLE_TYPES}  # the latest of an ID wins
        asked = {t.id: t for t in self.app.tunables}
        whole = self._whole_file()
        for t in self.app.tunables:
            size = A.TUNABLE_TYPES[t.type][0] if t.type in A.TUNABLE_TYPES else None
            answer = f"`Tunable {t.id} = {t.value}{'' if t.type == 'int64' else ' ' + t.type};`"
            s = answers.get(t.id)
            if s is None and not self.app.keep_app_mapper and not t.legion:
                if t.id >= LEGION_TUNABLES or size != 8:
                    fails = ("the run aborts (R456)" if t.id >= LEGION_TUNABLES else
                             "Legion's default mapper answers it with 8 bytes and the run aborts (Future size "
                             "mismatch)")
                    self.add("E224", f"the application asks for tunable {t.id} (read as {t.type}), which this "
                                     f"mapper does not answer: {fails}", whole,
                             (f"add {answer} (the answer of the program's own mapper in discovery)",))
                else:
                    self.add("W313", f"the application asks for tunable {t.id}, which this mapper does not "
                                     "answer: Legion's default mapper answers it with its own meaning of that ID, "
                                     f"not as the program's mapper did ({t.value})", whole,
                             (f"add {answer} to keep the program's answer",))
            elif s is not None and size is not None and A.TUNABLE_TYPES[s.type][0] != size:
                given = _plural(A.TUNABLE_TYPES[s.type][0], "byte")
                self.add("E224", f"tunable {t.id} is answered as {s.type} ({given}), but the application reads it as "
                                 f"{t.type} ({_plural(size, 'byte')}): the run aborts (Future size mismatch)", s.loc,
                         (f"write `Tunable {t.id} = {s.value} {t.type};`",))
            elif s is not None and s.value != t.value and self.app.discovered_as:
                self.add("W323", f"tunable {t.id} is answered {tunable_value(s.value, s.type)} here, but "
                                 f"{tunable_value(t.value, t.type)} in discovery (`{self.app.discovered_as}`): the "
                                 "launch domains checked are discovery's, and a launch the program sizes from this "
                                 "tunable has other points in the run", s.loc,
                         ("`mapperopt explain` shows discovery's domains too: compare them with the run's trace "
                          "(`mapperopt run ... --trace`)",),
                         (f"the program's own mapper, kept for the tasks no statement names, answered {t.value} in "
                          "discovery: its decisions may assume that value, not this one",) * self.app.keep_app_mapper)
            elif s is None and t.legion and self.app.discovered_as and self.machine is not None:
                here = legion_tunable_on(t.id, self.machine)
                if here is not None and here != t.value:
                    kind = LEGION_TUNABLE_NAMES[t.id]
                    flag = {"CPUS": "-ll:cpu", "GPUS": "-ll:gpu"}.get(kind.rsplit("_", 1)[-1])
                    per = self.machine.per_node(kind.rsplit("_", 1)[-1][:-1]) if flag else None
                    self.add("W324", f"the program asked Legion's default mapper for tunable {t.id} "
                                     f"(DEFAULT_TUNABLE_{kind}), answered {t.value} in discovery; on {self.here} it "
                                     f"is {here}: the launch domains checked are discovery's, and a launch the "
                                     "program sizes from this tunable has other points here", whole,
                             ((f"check the launches of a run on these processors with `-- {flag} {per}` after the "
                               "other options" if flag and self.machine.nodes == 1 else None),))
        for tid, s in answers.items():
            if tid not in asked:
                known = ", ".join(str(i) for i in asked)
                # Like W315, a user's program may ask for it with other flags than discovery's.
                never = (f"{self.app.app} did not ask for tunable {tid} in discovery (`{self.app.discovered_as}`)"
                         if self.app.discovered_as else f"the application never asks for tunable {tid}")
                self.add("W313", never, s.loc, (f"it asks for: {known}" if known else "it asks for no tunable",))

    def _app_kept_mapper(self):
        """W326: the program's own mapper is kept (`keep_app_mapper`) and no statement names a task: that mapper maps
        every task, since a `*` names none, and the mapper changes nothing but the tunables it answers. W332 (note):
        the run would keep a mapper that the program, as discovered, does not register: the option changes nothing
        (read otherwise as keeping Legion's default mapper for the tasks no statement names)."""
        if self.app.keep_app_mapper and self.app.discovered_as and not self.app.own_mapper:
            self.add("W332", "--keep-app-mapper keeps nothing here: the program registers no mapper of its own "
                             "(discovery saw none), so this mapper maps every task, as without the option",
                     self._whole_file(), ("run without --keep-app-mapper: it is for a program that registers its "
                                          "own mapper (replace_default_mapper, add_mapper)",), severity="note")
        if not (self.app.keep_app_mapper and self.app.own_mapper and self.program.statements):
            return
        if self.program.named_tasks():
            return
        tunables = any(isinstance(s, A.TunableStmt) for s in self.program.statements)
        tasks = [t.name for t in self.app.tasks if t.parent is not None]
        example = f"Task {','.join(map(selector_name, tasks))} CPU;" if tasks else None
        self.add("W326", "no statement names a task, and a `*` names none when the program's own mapper is kept "
                         f"(--keep-app-mapper): '{self.app.own_mapper}' maps every task; this mapper "
                         + ("only answers tunables" if tunables else "changes nothing"), self._whole_file(),
                 (f"name the tasks it is for, e.g. `{example}` (the `*` statements then apply to them), or run "
                  "without --keep-app-mapper" if example else None,))

    # ------------------------------------------------------------------------------------------------ machine checks

    def _machine_kinds(self):
        """W303/W302 for kinds the machine lacks where a statement applies here: W303 once per kind (at its first
        use), W302 at each statement (each is to be fixed). W303 not for a processor kind in a list that names one the
        machine has (the fallback a portable mapper writes, `Task * GPU,CPU;`; a Task statement's list goes on with
        those of the `Task *` statements); W302 for every memory kind the machine lacks, in any list (the mapper skips
        it there at every mapping, a memory only the run's flags create, RDMEM or SOCKMEM, for a missing flag).
        Neither in a statement for tasks on a processor kind without processors (it never applies here)."""
        m = self.machine
        procs = lambda k: k not in ABSENT_KINDS and m.count(k, 0) > 0  # noqa: E731 (ABSENT_KINDS: _statements)
        every_task = [k.name for s in self.program.statements if isinstance(s, A.TaskStmt) and s.tasks.is_wildcard
                      for k in s.kinds]
        seen: set[str] = set()
        for s in self.program.statements:
            kinds = _kinds_of(s)
            if isinstance(s, A.TaskStmt):
                if any(procs(k.name) for k in kinds):
                    continue
                if any(procs(k) for k in every_task):
                    # Its tasks go on with the `Task *` list: said, except for GPU (the portable fallback).
                    if not s.tasks.is_wildcard:
                        self._skipped_task_kinds(s, kinds, every_task, seen)
                    continue
                for k in kinds:
                    if k.name not in ABSENT_KINDS and k.name not in seen:
                        seen.add(k.name)
                        self.add("W303", f"processor kind '{k.name}' has no processors on {self.here} "
                                         f"({m.counts()}); it is skipped", k.loc,
                                 ("no other kind of the list has processors here either; list one every machine has "
                                  "after it, e.g. `Task * GPU,CPU;`",))
            elif kinds and not procs(kinds[0].name):
                continue  # for tasks on a kind this machine has no processors of: never applies here
            if isinstance(s, A.RegionStmt):
                if self._only_absent_memories(s):
                    continue
                proc = s.proc.name if isinstance(s.proc, A.Kind) else None
                for k in s.memories:
                    if k.name != "VIRTUAL" and not m.memories_of(k.name):
                        # Said where the kind is of no use to the processor kind on a machine that has it either.
                        never = _never_seen(k.name, proc)
                        never = f", and {proc} processors never see it on any machine ({never})" if never else ""
                        self.add("W302", f"memory kind '{k.name}' does not exist on {self.here}{never}; it is skipped",
                                 k.loc, _sized_hints([k.name]))
                # A kind the machine has that the statement's processor kind never sees (FBMEM for CPUs) is as dead.
                if proc is not None and procs(proc):
                    unseen = [k for k in s.memories if k.name != "VIRTUAL" and m.memories_of(k.name)
                              and not m.visible(k.name, proc, 0, 0)]
                    if unseen and len(unseen) < len(s.memories):
                        for k in unseen:
                            self.add("W302", f"memory kind '{k.name}' is not visible from {proc} processors on "
                                             f"{self.here}; it is skipped", k.loc)
                    elif unseen:
                        # None seen: E222 where the requirements have no later memory to go on to, else W302, which
                        # waits for static evaluation to tell (`_unseen_statements`).
                        self._unseen_only.append((s, proc, unseen))

    def _unseen_statements(self):
        """W302 for each kind of a Region statement none of whose memories its processor kind sees, where the
        requirements it selects go on to another statement's list (E222 where none does): the statement does nothing.
        With an application, only where a task it selects runs on that kind here (else it never applies, as for a
        kind without processors); without one, E222 is not checked: W302. Not where evaluation stopped before E222."""
        if self.app is not None and self._inaccessible is None:
            return
        for s, proc, unseen in self._unseen_only:
            if self.app is not None and (id(s) in self._inaccessible or id(s) not in self._applied):
                continue
            usable = "FBMEM or ZCMEM" if proc == "GPU" else "SYSMEM"
            hint = (f"no memory of this statement is visible from {proc} processors, so the statement places no "
                    f"instance: list one they see, e.g. {usable}")
            if proc != "GPU" and all(k.name == "FBMEM" for k in unseen):
                hint += f", or write it for GPU tasks: `{format_statement(dataclasses.replace(s, proc=A.Kind('GPU')))}`"
            for k in unseen:
                self.add("W302", f"memory kind '{k.name}' is not visible from {proc} processors on {self.here}; it is "
                                 "skipped", k.loc, (hint,))

    def _app_replication(self):
        """W319 for each task of a ControlReplicate statement that Legion cannot replicate: an index-launched one
        (Legion replicates only tasks launched one at a time), or in a benchmark any one (none registers a replicable
        variant, which Legion needs; the top-level task's replication is Legion's default mapper's, which needs one
        too)."""
        from mapperopt.benchmarks.apps import known_benchmarks

        benchmark = not self.app.discovered_as and self.app.app in known_benchmarks()
        top = self.app.top_level
        for s in self.program.statements:
            if not isinstance(s, A.ControlReplicateStmt):
                continue
            for ident in s.tasks.names or ():
                info = self.app.task(ident.name) or (top if top is not None and top.name == ident.name else None)
                if info is None:
                    continue  # E202
                if not info.single_launched:
                    self.add("W319", f"ControlReplicate cannot replicate '{info.name}': it is index-launched, and "
                                     "Legion replicates only tasks launched one at a time; the statement has no "
                                     "effect", ident.loc,
                             ("to spread its points over the nodes, map them with an IndexTaskMap statement (a "
                              "point runs on the node of its function's result)",))
                elif benchmark:
                    who = "the top-level task" if info is top else "a task launched one at a time"
                    self.add("W319", f"ControlReplicate cannot replicate '{info.name}' ({who}): Legion replicates "
                                     f"only a variant registered as replicable, and benchmark '{self.app.app}' "
                                     "registers none; it runs unreplicated", ident.loc,
                             ("without replication, IndexTaskMap statements still place each point on any node "
                              "(the unreplicated parent launches them from node 0)",))

    def _one_node(self):
        """W316 (note) for each ControlReplicate statement on a machine of one node, where it has no effect (the
        run's note R451, said here before any run)."""
        if self.machine.nodes != 1:
            return
        for s in self.program.statements:
            if isinstance(s, A.ControlReplicateStmt):
                self.add("W316", f"ControlReplicate has no effect on {self.here} ({self.machine.counts()}): it "
                                 "makes one shard per node, and there is one node", s.loc, severity="note")

    def _only_absent_memories(self, s: A.RegionStmt) -> bool:
        """E221 when every kind of `s` is absent on the machine and no other Region statement that applies wherever
        `s` does lists a kind that exists: the mapper is certain to fail (R403) for what `s` selects."""
        exists = lambda k: k == "VIRTUAL" or bool(self.machine.memories_of(k))  # noqa: E731
        # RDMEM and SOCKMEM are decided like the others, from the machine's memories: a probed machine has them when
        # probed with the run's -ll:rsize/-ll:nsize (the harness does so), a synthetic one never.
        if any(exists(k.name) for k in s.memories):
            return False
        tasks = None if s.tasks.names is None else {i.name for i in s.tasks.names}
        for o in self.program.statements:
            if o is s or not isinstance(o, A.RegionStmt) or not any(exists(k.name) for k in o.memories):
                continue
            task_ok = o.tasks.names is None or (tasks is not None and tasks <= {i.name for i in o.tasks.names})
            region_ok = o.region.is_wildcard or o.region == s.region
            proc_ok = isinstance(o.proc, A.Star) or (isinstance(s.proc, A.Kind) and o.proc.name == s.proc.name)
            if task_ok and region_ok and proc_ok:
                return False
        self._absent_only.add(id(s))
        kinds = ", ".join(k.name for k in s.memories)
        self.add("E221", f"no memory kind of this statement exists on {self.here} ({kinds}); every instance it "
                         f"places would fail (R403)", s.loc,
                 ("add a kind the machine has, e.g. FBMEM (the GPUs' framebuffer), after the others"
                  if isinstance(s.proc, A.Kind) and s.proc.name == "GPU" and exists("FBMEM") else
                  "add a kind the machine has, e.g. SYSMEM, after the others",
                  *_sized_hints(k.name for k in s.memories)),
                 (f"machine: {self.machine.counts()}",
                  *(f"{s.proc.name} processors never see {k.name} on any machine ({_never_seen(k.name, s.proc.name)})"
                    for k in s.memories if isinstance(s.proc, A.Kind) and _never_seen(k.name, s.proc.name))))
        return True

    def _static_evaluation(self):
        """Evaluate the load phase and, given launch domains, every mapping function at every launch point."""
        try:
            ev = Evaluator(self.program, self.machine, self.app, stream=self.stream, budget=MAX_STATIC_STEPS)
            self._evaluate_points(ev)
            self._memory_choices(ev)
            self._required_layouts(ev)
            self._padded_elements(ev)
            self._layout_copies(ev)
        except EvaluationLimit:
            costly = costly_functions(self.program, MAX_STATIC_STEPS)  # AutoGuide names them after a timeout too
            count = len(self.program.statements)
            # a long file of plain statements (a generated one) spends the steps without a call that multiplies
            why = (f"the file's {count:,} statements took the steps, one after another: a mapper needs few (`*` and "
                   "functions select many tasks at once)") if not costly and count >= MAX_STATIC_STEPS // 10 else \
                "calls that multiply (each function calling others several times) make evaluation slow"
            self.add("W310", f"static evaluation stopped after {MAX_STATIC_STEPS} steps; the remaining launch points "
                             "and statements were not evaluated", self._whole_file(),
                     (why, *([f"mapping functions whose calls multiply: {'; '.join(costly)}"] if costly else [])))
        except DslRuntimeError as err:
            self._runtime_diag(err, "at load", None)
            return
        except MapperoptError as err:
            self.add("E206", err.message, self._whole_file(), (err.hint,))

    def _placed_requirements(self, ev: Evaluator):
        """(task, the processor kind it runs on, requirement) for every requirement of a task whose kind evaluates on
        this machine (a task whose kind does not is reported as E209)."""
        for info in self.app.tasks:
            try:
                kind = ev.task_kind(info.name)
            except DslRuntimeError:
                continue
            for req in info.regions:
                yield info, kind, req

    def _memory_choices(self, ev: Evaluator):
        """E222 when no memory of a requirement's effective list can be used where its task runs: VIRTUAL alone for a
        leaf task (a leaf task needs a physical instance), or only memories that its processor kind cannot reach
        (FBMEM for a CPU task). The mapper would fail with R403 at the task's first launch. Memory visibility is
        that of the first processor of the task's kind on node 0 (the nodes of a machine are alike). Reported once
        per Region statement, at the one of highest precedence; a statement already reported as E221 is skipped."""
        if self.app is None:
            return
        failing: dict[int, tuple[A.RegionStmt, DslRuntimeError, str, list[str]]] = {}
        self._applied = set()
        for info, kind, req in self._placed_requirements(ev):
            if self._unseen_only:
                self._applied.update(id(s) for s in ev.region_statements(info.name, req.index, kind))
            try:
                ev.memory(info.name, req.index, Proc(kind, 0, 0))
            except DslRuntimeError as err:
                stmt = ev.region_statements(info.name, req.index, kind)[0]
                if id(stmt) not in self._absent_only:
                    failing.setdefault(id(stmt), (stmt, err, kind, []))[3].append(f"'{info.name}' {req.index}")
        self._inaccessible = set(failing)
        for stmt, err, kind, where in failing.values():
            listed = [m.name for m in stmt.memories]
            hints = []
            if "VIRTUAL: the variant is a leaf task" in err.detail:
                # A memory instead of VIRTUAL: after it, it would draw W301 (kinds after VIRTUAL).
                usable = "FBMEM" if kind == "GPU" else "SYSMEM"
                memories = [m for m in listed if m != "VIRTUAL"] + ([usable] if usable not in listed else [])
                fixed = dataclasses.replace(stmt, memories=tuple(A.Kind(m) for m in memories))
                hints.append(f"a leaf task needs a physical instance: list a memory instead of VIRTUAL, e.g. "
                             f"`{format_statement(fixed)}`; VIRTUAL suits a statement that selects only inner tasks")
            needs = re.search(r"the variant's layout constraint needs (\w+)", err.detail)
            if needs:
                hints.append(f"add {needs[1]}, which the variant's layout constraint requires, after the others")
            elif "not visible from" in err.detail or "absent" in err.detail:
                usable = "FBMEM or ZCMEM" if kind == "GPU" else "SYSMEM"
                hints.append(f"add a memory that {kind} processors can use, e.g. {usable}, after the others")
            more = (f" (and {len(where) - 1} more requirement(s): {', '.join(where[1:4])}"
                    f"{', ...' if len(where) > 4 else ''})" if len(where) > 1 else "")
            self.add("E222", err.detail + more, stmt.loc, hints,
                     (f"static evaluation on {self.here} ({self.machine.counts()}); at run time: R403 when the task "
                      "is mapped",))
        self._virtual_for_leaves(ev, set(failing))

    def _virtual_for_leaves(self, ev: Evaluator, reported: set[int]):
        """W329 for a Region statement whose list has VIRTUAL and that selects requirements of leaf tasks only (none
        of a task that can map virtually), where the effective list has a memory the task can use (else E222, whose
        statements are `reported`): a leaf task needs a physical instance, so the run skips VIRTUAL (note R452) and
        uses another memory of the list. Reported once per statement, naming the first requirement and the memory
        used."""
        leaves: dict[int, tuple[A.RegionStmt, list[tuple[str, int, tuple[str, ...], str, bool]]]] = {}
        virtual_ok: set[int] = set()  # statements that select a requirement of a task that is not a leaf
        for info, kind, req in self._placed_requirements(ev):
            stmts = [st for st in ev.region_statements(info.name, req.index, kind)
                     if any(m.name == "VIRTUAL" for m in st.memories)]
            if not stmts:
                continue
            if info.inner or not info.leaf:
                virtual_ok.update(id(st) for st in stmts)
                continue
            try:
                used = ev.memory(info.name, req.index, Proc(kind, 0, 0))
            except DslRuntimeError:
                continue  # E222
            listed = ev.memories(info.name, req.index, kind)
            after = listed.index(used) > listed.index("VIRTUAL")
            leaves.setdefault(id(stmts[0]), (stmts[0], []))[1].append(
                (info.name, req.index, req.names, used, after))
        for key, (stmt, where) in leaves.items():
            if key in reported or key in virtual_ok:
                continue
            task, index, names, used, after = where[0]
            what = f"requirement {index}{' (' + ', '.join(names) + ')' if names else ''} of task '{task}'"
            then = (f"the run skips VIRTUAL (note R452) and uses {used}, the next memory of the list" if after else
                    f"the run uses {used}, listed before VIRTUAL")
            more = (f" (and {len(where) - 1} more requirement(s) of leaf tasks: "
                    f"{', '.join(f'{t!r} {i}' for t, i, *_ in where[1:4])}{', ...' if len(where) > 4 else ''})"
                    if len(where) > 1 else "")
            kept = [m for m in stmt.memories if m.name != "VIRTUAL"] or [A.Kind(used)]
            fixed = dataclasses.replace(stmt, memories=tuple(kept))
            self.add("W329", f"a leaf task cannot use a virtual instance: VIRTUAL in this statement cannot map {what}; "
                             f"{then}{more}", stmt.loc,
                     (f"write the memory the task should use instead of VIRTUAL, e.g. `{format_statement(fixed)}`, or "
                      "remove the statement; VIRTUAL suits a statement that selects inner tasks (their regions are "
                      "mapped without an instance)",))

    def _required_layouts(self, ev: Evaluator):
        """E223 when requirements whose variants need one dimension order (the description's `layout`, e.g. a BLAS
        kernel's row-major tiles), or SOA instances (`interleave`), on the processor kinds the requirement concerns
        (`layout_kinds`, all if absent) are certain to get another layout, against the variant's layout constraint
        (what the run then does: `_layout_at_run_time`). Certain as for E222: with a machine (`ev.machine`), where the
        task runs there (its kind, the memory the first processor of that kind on node 0 gets); without one, on every
        kind the task can run on (its Task list and variants, up to CPU, which every machine has) and every memory
        listed for it there. W312 when, without a machine, only some of those reject it: whether the run fails depends
        on the machine (e.g. a task listed `GPU,CPU` whose CPU variant constrains the layout fails on a machine without
        GPUs)."""
        if self.app is None:
            return
        # (code, deciding statements, needed, given, why) -> (statements deciding each wrong aspect (None: the
        # default) and those aspects, ["task (requirements)", ...], [a statement for just that requirement, ...])
        found: dict[tuple, tuple] = {}
        # (id of the deciding statement (that of None: the default), aspect) -> what the requirements it decides need
        wants: dict[tuple, set] = {}
        for info in self.app.tasks:
            if info.inner:
                continue  # mapped virtually: no instance
            reqs: dict[tuple, tuple] = {}
            chosen: dict[tuple, dict] = {}  # key -> (processor kind, its number of variants) -> variant names
            for r in info.regions:
                if r.layout is None and r.interleave is None and not r.required_align:
                    continue
                try:
                    places = self._instance_places(ev, info, r.index)
                except DslRuntimeError:
                    break  # reported by the other checks (E209, E221, E222)
                rejected = []
                for kind, memory in places:
                    got, by = ev.layout_sources(info.name, r.index, kind, memory)
                    fixed = not r.layout_kinds or kind in r.layout_kinds
                    align = next((f"Align{op}{n}" for k, op, n in r.required_align if k == kind), None)
                    wanted = {"dims": fixed and r.layout, "order": fixed and r.interleave, "align": align}
                    for a, value in wanted.items():
                        if value:
                            wants.setdefault((id(by.get(a)), a), set()).add(value)
                    checks = (("dims", not fixed or r.layout in (None, f"{got['dims']}_order")),
                              ("order", not fixed or r.interleave in (None, got["order"])),
                              ("align", align is None or _aligned(got["align"], align)))
                    bad = [a for a, ok in checks if not ok]
                    if bad:
                        rejected.append((kind, memory, got, {a: by.get(a) for a in bad}, align, wanted))
                if not rejected:
                    continue
                kind, memory, got, deciders, align, wanted = rejected[0]
                given_align = got["align"] and f"Align{got['align']['op']}{got['align']['bytes']}"
                need = " ".join(x for x in (r.interleave, r.layout, align) if x)
                given = " ".join(x for x in (r.interleave and got["order"], r.layout and f"{got['dims']}_order",
                                             align and (given_align or "no alignment")) if x)
                certain = len(rejected) == len(places)
                why = self._layout_why(places, kind, memory, certain)
                key = ("E223" if certain else "W312", tuple(id(d) for d in deciders.values()), need, given, why)
                # A statement for this very requirement takes precedence over the deciding ones: for its memory if one
                # of them names a memory (a memory ranks above a processor kind), else for its processor kind.
                memory_stmt = any(isinstance(d, A.LayoutStmt) and isinstance(d.target, A.Kind) and d.target.is_memory
                                  for d in deciders.values())
                entry = reqs.setdefault(key, (deciders, [], [], wanted))
                # The variants of that kind whose constraints these are, where the kind has several (Legion's default
                # mapper picks the one that runs: any of them may get the layout).
                by = dict(r.constrained_by).get(kind, ())
                every = dict(info.variant_names).get(kind, ())
                if by:
                    chosen.setdefault(key, {}).setdefault((kind, len(every)), {}).update(dict.fromkeys(by))
                # Message and hint name a requirement alike: its index (what a Layout statement names) and region.
                entry[1].append(f"{r.index} ({r.name})" if r.name else str(r.index))
                entry[2].append((f"Layout {info.name} {r.index} {memory if memory_stmt else kind} {need};",
                                 f"requirement {entry[1][-1]} of {info.name}", info, r.index))
            for key, (deciders, names, fixes, wanted) in reqs.items():
                entry = found.setdefault(key, (deciders, [], [], wanted))
                variants = "".join(
                    f" ({kind} variant{'s' if len(by) > 1 else ''} {', '.join(repr(v) for v in by)}: the task has {n} "
                    f"{kind} variants, {', '.join(dict(info.variant_names)[kind])}, and Legion's default mapper picks "
                    "the one that runs)"
                    for (kind, n), by in chosen.get(key, {}).items())
                entry[1].append(f"requirement{'s' if len(names) > 1 else ''} {', '.join(names)} of {info.name}"
                                f"{variants}")
                entry[2].extend(fixes)
        for (code, _, need, given, why), (deciders, tasks, fixes, wanted) in found.items():
            stmts = sorted(dict.fromkeys(d for d in deciders.values() if d is not None), key=lambda x: x.loc.line)
            several = len(stmts) + (None in deciders.values()) > 1
            # Rewriting a deciding statement (or adding `Layout * * *` for the default) would give another
            # requirement it decides a layout that requirement's variant rejects: the next check would say so.
            broken = any(wants[id(d), a] - {wanted[a]} for a, d in deciders.items())
            hints = []
            for stmt in stmts if not broken else ():
                fixed = format_statement(_with_constraints(stmt, need, [a for a, d in deciders.items() if d is stmt]))
                hints.append(f"write `{fixed}` instead" + (f" of line {stmt.loc.line}" if several else ""))
            if None in deciders.values() and not broken:
                hints.append(f"add `Layout * * * {need};` (without a Layout statement, instances are SOA F_order)")
            others = (self._layout_others(stmts, {(f[2].name, f[3]) for f in fixes})
                      if stmts and (broken or len(fixes) == 1) else None)
            adds = " and ".join(f"`{f[0]}`" for f in fixes) + (f" for {fixes[0][1]}" if len(fixes) == 1 else "")
            if others:  # the statements apply elsewhere too: kept there, with one for each requirement after them
                lines = " and ".join(str(x.loc.line) for x in stmts)
                hints.append(f"{'or ' if hints else ''}keep line{'s' if len(stmts) > 1 else ''} {lines} for {others} "
                             f"and add {adds} after {'them' if len(stmts) > 1 else 'it'}")
            elif broken:  # one statement for each requirement, after those that decide it now
                lines = " and ".join(str(x.loc.line) for x in stmts)
                hints.append(f"add {adds}" + (f" after line{'s' if len(stmts) > 1 else ''} {lines}" if stmts else ""))
            failed = ["Ordering"] * bool({"dims", "order"} & deciders.keys()) + ["Alignment"] * ("align" in deciders)
            self.add(code, f"the application's variants need {need} instances, but this mapper gives {given} to "
                           f"{'; '.join(tasks)}: {why}", stmts[0].loc if stmts else self._whole_file(), hints,
                     (_layout_at_run_time(failed, self.app, [f[2].name for f in fixes]),))

    def _padded_elements(self, ev: Evaluator):
        """W327 when a benchmark's requirement whose BLAS leaf needs row-major tiles (the description's `layout`,
        where its variants run: `layout_kinds`) gets an AOS instance aligned above `BLAS_ELEMENT_BYTES`: AOS aligns
        each field of every element, so the tile's elements are that far apart and the leaf's unit-stride check
        aborts the run. A warning (the description gives no field sizes); not for a user's program, whose `layout`
        is an ordering constraint, not a BLAS leaf."""
        if self.app is None or self.app.discovered_as:
            return
        found: dict[int, tuple] = {}  # id of the deciding statement -> (statement, alignment, [requirement])
        for info in self.app.tasks:
            if info.inner:
                continue
            for r in info.regions:
                if r.layout is None or r.interleave is not None:  # an interleaving needed: AOS itself is E223
                    continue
                try:
                    places = self._instance_places(ev, info, r.index)
                except DslRuntimeError:
                    break  # reported by the other checks
                for kind, memory in places:
                    got, by = ev.layout_sources(info.name, r.index, kind, memory)
                    align = got["align"]
                    if ((not r.layout_kinds or kind in r.layout_kinds) and got["order"] == "AOS" and align
                            and align["op"] in ("==", ">=") and align["bytes"] > BLAS_ELEMENT_BYTES
                            and by.get("align") is not None):
                        entry = found.setdefault(id(by["align"]), (by["align"], align["bytes"], []))
                        entry[2].append(f"requirement {r.index}{f' ({r.name})' if r.name else ''} of {info.name}")
                        break
        for stmt, size, reqs in found.values():
            kept = tuple(c for c in stmt.constraints if c.name != "Align")
            fix = (f"drop the Align: write `{format_statement(dataclasses.replace(stmt, constraints=kept))}` instead"
                   if kept else f"drop the Align: remove `{format_statement(stmt)}`")
            more = f" and {len(reqs) - 3} more" if len(reqs) > 3 else ""
            self.add("W327", f"AOS with an alignment of {size} bytes pads each element of {', '.join(reqs[:3])}{more} "
                             f"to {size} bytes (AOS aligns each field of every element), but their variants need "
                             "row-major tiles with unit stride (a BLAS kernel's): the run aborts where the kernel "
                             "checks its tiles (`the tile of C ... is not row-major`)", stmt.loc,
                     (f"{fix} (without it AOS packs the elements; SOA C_order, which aligns only the start of each "
                      "field, works too)",),
                     (f"the GEMMs' element is an {BLAS_ELEMENT_BYTES}-byte double",))

    def _layout_copies(self, ev: Evaluator):
        """W330 where a Layout statement gives a requirement an AOS instance whose element stride is not its field's
        size (mapperopt's instances hold every field of the field space, so AOS of 2 or more fields; or an Align above
        the field's size) while another requirement on the same fields of that region tree gets another layout (SOA,
        AOS of another stride, a reduction instance of its reduced fields alone): Realm copies between the two, and
        the installed Realm can crash on such copies over a sparse domain. Also AOS with a padding Align on a reduction
        requirement (its instance's fill). Not between two requirements on the same region or partition (the copy
        stays within one subregion). Where each task runs: with a machine, there; without one, on a machine with GPUs
        and on one without (each task on the first kind of its list it has a variant for)."""
        if self.app is None:
            return
        parents = {n.name: n.parent for n in self.app.region_tree}
        kinds = {n.name: n.kind for n in self.app.region_tree}

        def top(task: str, r) -> str | tuple[str, int]:
            """The root region of requirement `r`'s name chain (nearest name first): its last region (a discovered
            chain goes on to the index and field spaces), else the root of the tree; for a region without a name,
            (task, index): discovery does not record which tree it is in, so it shares its root with no other
            requirement (a reduction's fill needs none)."""
            regions = [n for n in r.names if kinds.get(n) == "region"]
            root = regions[-1] if regions else Evaluator._root(r.names, parents)
            return (task, r.index) if root is None else root

        # root region -> its fields (those requirements name) -> bytes
        space: dict[str | tuple[str, int], dict[str, int | None]] = {}
        for t in self.app.tasks:
            for r in t.regions:
                root = top(t.name, r)
                for f, n in zip(r.fields, r.field_sizes or (None,) * len(r.fields)):
                    if space.setdefault(root, {}).get(f) is None:
                        space[root][f] = n
        found: dict[tuple, tuple] = {}  # (id of the statement, "copy" or "fill") -> (statement, {A}, {B}, roots)
        for excluded in ((),) if ev.machine is not None else ((), ("GPU",)):
            by_root: dict[str | tuple[str, int], list] = {}
            for info in self.app.tasks:
                if info.inner:
                    continue
                for r in info.regions:
                    root = top(info.name, r)
                    if not r.fields or r.privilege == "no_access":
                        continue
                    try:
                        place = self._copy_place(ev, info, r.index, excluded)
                    except (DslRuntimeError, MapperoptError):
                        break  # reported by the other checks
                    if place is None:
                        continue
                    got, by = ev.layout_sources(info.name, r.index, *place)
                    held = ({f: space[root].get(f) for f in r.fields} if r.privilege == "reduce" else space[root])
                    by_root.setdefault(root, []).append((info, r, got, by, _element_stride(got, held), held, place))
            for root, entries in by_root.items():
                for info, r, got, by, stride, held, _ in entries:
                    if stride is None:  # the field's own size: like SOA
                        continue
                    stmt = by.get("order") or by.get("align")
                    if stmt is None:
                        continue
                    what = f"argument {r.index}{f' ({r.name})' if r.name else ''} of {info.name}"
                    if r.privilege == "reduce" and stride[2]:  # padded by the Align: the fill of its instance
                        found.setdefault((id(stmt), "fill"), (stmt, {}, {}, {}, {}))[1].setdefault(
                            what, (stride, got, held, root, r, by.get("align")))
                        continue  # its copies too, but the fill comes first, and the fix is the same
                    # A reduction instance holds its reduced fields alone: beside it, only another interleaving or
                    # alignment is another layout (the same statement for every task leaves none to copy between).
                    # Not beside a requirement on the same region or partition: a copy within one subregion (a
                    # block partition's dense block) ran well (a user's SpMV: AOS on `nnz_blocks` for one task, SOA
                    # for the task that wrote it); one from another partition's (an image's sparse subset) crashed.
                    copied = [(q_info, q, q_got, q_place) for q_info, q, q_got, _, q_stride, _, q_place in entries
                              if q is not r and set(q.fields) & set(r.fields)
                              and (_layout_words(q_got) != _layout_words(got)
                                   if "reduce" in (q.privilege, r.privilege) else q_stride != stride)]
                    others = [c for c in copied if not (r.name and c[1].name == r.name)]
                    if others:
                        entry = found.setdefault((id(stmt), "copy"), (stmt, {}, {}, {}, {}))
                        entry[1].setdefault(what, (stride, got, held, root, r, by.get("align")))
                        for q_info, q, q_got, q_place in others:
                            layout = _layout_words(q_got) + (" (a reduction instance)" if q.privilege == "reduce"
                                                             else "")
                            entry[2].setdefault(layout, {}).setdefault(q_info.name, {})[q.index] = (q_info, q,
                                                                                                    q_place)
                        entry[3][root] = None
                        # those left out for the same region or partition, which the note names (they copy too)
                        for q_info, q, q_got, _ in copied:
                            if r.name and q.name == r.name:
                                entry[4].setdefault(r.name, {}).setdefault(_layout_words(q_got), {}).setdefault(
                                    q_info.name, set()).add(q.index)
        for (_, case), (stmt, padded, others, roots, alike) in found.items():
            self._w330(ev, stmt, case, padded, others, roots, alike)

    def _copy_place(self, ev: Evaluator, info, index: int, excluded: tuple[str, ...]) -> tuple[str, str] | None:
        """(processor kind, memory kind) where requirement `index` of `info` gets its instance (W330): with a machine,
        where it runs; without one, on the first kind of its list (not `excluded`) it has a variant for, in the first
        memory listed; None where it gets none (VIRTUAL, no kind)."""
        if ev.machine is not None:
            places = self._instance_places(ev, info, index)
            return places[0] if places else None
        for kind in ev.task_kinds(info.name) or DEFAULT_KIND_RANKING:
            if kind in ABSENT_KINDS or kind in excluded or kind not in info.variants:
                continue
            listed = ev.memories(info.name, index, kind)
            memory = listed[0] if listed else "FBMEM" if kind == "GPU" else "SYSMEM"
            return None if memory == "VIRTUAL" else (kind, memory)
        return None

    def _w330(self, ev: Evaluator, stmt: A.LayoutStmt, case: str, padded: dict, others: dict, roots: dict,
              alike: dict):
        """W330 at `stmt` for the requirements `padded` (what -> (stride, layout, held fields, root, requirement, the
        statement that gives the Align or None)) it gives an AOS stride other than their field's size; `others`
        (layout words -> task -> {argument: (task info, requirement, where it gets its instance)}) keep another
        layout on those fields (case "copy"; `roots`: the region trees; `alike`: region or partition -> layout words
        -> task -> its arguments that keep another layout through the same region or partition as `padded`'s, which
        do not count), or the requirements are reductions whose fill can crash (case "fill"). `ev` finds the
        statements that would keep the others' layout over the hint's."""
        strides: dict[str, list[str]] = {}  # "an element stride of N bytes" -> the requirements
        reasons: dict[str, None] = {}
        for what, ((size, pad, by_align), got, held, root, r, _) in padded.items():
            stride = f"an element stride of {size} bytes" if size else "an element stride other than the field's size"
            strides.setdefault(stride, []).append(what)
            sizes = {held[f] for f in r.fields}
            field_size = f"{next(iter(sizes))}-byte " if len(sizes) == 1 and None not in sizes else ""
            # past three fields, the first three and the count, as explain lists them: the message stays readable
            fields = (_and(list(held)) if len(held) <= 3 else
                      f"{', '.join(list(held)[:3])}, ... ({len(held)} fields)")
            reasons[f"{_layout_words(got)} pads each {field_size}field to {pad} bytes" if by_align else
                    f"each instance holds {f'all {len(held)}' if len(held) <= 3 else 'every'} field"
                    f"{'s' if len(held) <= 3 else ''} of '{root}': {fields}"] = None
        gives = "; ".join(f"{_and(whats[:3] + ([f'{len(whats) - 3} more'] if len(whats) > 3 else []))} AOS "
                          f"instances with {stride}" for stride, whats in strides.items())
        fixed = "a Realm bug fixed upstream in StanfordLegion/realm#436, not in the legate wheel"
        crash = ("SIGFPE, `address_list.cc:152 ... Assertion 'read_pointer == max_entries' failed` or heap corruption "
                 "(`malloc(): invalid size`)")
        what = f"line {stmt.loc.line}'s `{format_statement(stmt)}` gives {gives} ({'; '.join(reasons)})"
        # The Realm issue goes to a note, so that the message's line says what and where.
        if case == "fill":
            message = (f"{what}, for a reduction: Realm fills a reduction instance with the reduction's identity, and "
                       "in the installed Realm such fills can crash")
            notes = [f"fills of an instance whose element stride is not its field's size can crash with {crash}: "
                     f"{fixed}"]
        else:
            kept = []
            for layout, tasks in others.items():
                names = [f"{t} (argument{'s' if len(ix) > 1 else ''} {_and([str(i) for i in sorted(ix)])})"
                         for t, ix in tasks.items()]
                names = names[:4] + ([f"{len(names) - 4} more"] if len(names) > 4 else [])
                kept.append(f"{_and(names)} keep{'s' if len(tasks) == 1 else ''} {layout}")
            # Whether a partition is sparse or aliased, neither discovery nor a benchmark's description records.
            source = "discovery does" if self.app.discovered_as else "the benchmark's description does"
            message = (f"{what}, but {'; '.join(kept)} on these fields, so Realm copies between the two layouts, "
                       "which can crash over a sparse or aliased partition")
            notes = ["a risk, not a certainty: the installed Realm's copies between two layouts crash only over a "
                     "sparse or aliased partition (an image, a preimage), not over an equal or block one, and "
                     f"{source} not record which partition this is; {fixed}"]
            notes.extend(self._same_part_note(alike))
        hints = []
        aligned = all(by_align for (_, _, by_align), *_ in padded.values())
        if case == "copy":
            # AOS said where the variant's interleaving gave it (the statement gives only the Align): the others
            # would stay SOA otherwise
            order = () if any(c.name in ("SOA", "AOS") for c in stmt.constraints) else (A.Constraint("AOS"),)
            same = [dataclasses.replace(stmt, tasks=A.TaskSel(None), region=A.RegionSel(name=root), target=A.Star(),
                                        constraints=order + tuple(stmt.constraints))
                    for root in roots]
            # The statements that would still give the others their layout with `same` added (nearer names, a
            # processor or memory kind): following a hint of `same` alone would not change them.
            trial = copy.copy(ev)
            trial._stmts = ev._stmts + [(len(ev._stmts) + 10 ** 6 + i, x) for i, x in enumerate(same)]
            keeping: dict[int, A.LayoutStmt] = {}
            reductions: dict[int, dict[str, list[int]]] = {}  # id of a keeping statement -> its reduction arguments
            changed = False  # some of the others would follow `same`
            for tasks in others.values():
                for ixs in tasks.values():
                    for q_info, q, q_place in ixs.values():
                        if q_place is None:
                            continue
                        _, q_by = trial.layout_sources(q_info.name, q.index, *q_place)
                        kept = False
                        for aspect in ("order", "align") if aligned else ("order",):
                            keep = q_by.get(aspect)
                            if keep is not None and all(keep is not x for x in same) and keep is not stmt:
                                kept = True
                                keeping[id(keep)] = keep
                                if q.privilege == "reduce":
                                    reductions.setdefault(id(keep), {}).setdefault(q_info.name, []).append(q.index)
                        changed = changed or not kept
            shown = format_statement(stmt)
            if keeping:
                ordered = sorted(keeping.values(), key=lambda x: x.loc.line)
                lines = _and([str(x.loc.line) for x in ordered])
                plural = len(ordered) > 1
                kept_by = (f"line{'s' if plural else ''} {lines} (nearer names) keep{'' if plural else 's'} "
                           f"{'SOA' if all(k.startswith('SOA') for k in others) else 'another layout'} on these "
                           "fields")
                if changed and all(format_statement(x) != shown for x in same):
                    kept_by = ("give every task that uses these fields the same layout: add "
                               + " and ".join(f"`{format_statement(x)}`" for x in same) + f"; {kept_by}")
                blocked: dict[str, list[int]] = {}  # reduction arguments a padded AOS cannot be given
                for key, tasks in reductions.items():
                    for t, ix in tasks.items():
                        blocked.setdefault(t, []).extend(ix)
                if aligned and blocked:
                    names = _and([f"{t} (argument{'s' if len(set(ix)) > 1 else ''} "
                                  f"{_and([str(i) for i in sorted(set(ix))])})" for t, ix in blocked.items()])
                    hints.append(f"{kept_by}, and the reduction instances of {names} cannot take an AOS layout "
                                 "padded by an Align (Realm's fill of such an instance crashes), so removing or "
                                 "rewriting those lines does not help")
                else:
                    them = "them" if plural else "it"
                    hints.append(f"{kept_by}: remove {them} or give {them} the same layout: " + " and ".join(
                        f"`{format_statement(dataclasses.replace(x, constraints=stmt.constraints))}`"
                        for x in ordered))
            elif all(format_statement(x) != shown for x in same):
                hints.append("give every task that uses these fields the same layout, e.g. "
                             + " and ".join(f"`{format_statement(x)}`" for x in same))
        # Without the Align, AOS of two or more fields still interleaves them (each field's stride is the element's):
        # dropping it clears the warning only where every requirement it matched holds one field.
        unpadded = all(_element_stride({**got, "align": None}, held) is None for _, got, held, *_ in padded.values())
        if aligned and unpadded:
            # the statement that gives the Align (another than the one that gives AOS, where it says no interleaving)
            align_stmt = next(iter(padded.values()))[5] or stmt
            kept_constraints = tuple(c for c in align_stmt.constraints if c.name != "Align")
            fix = (f"write `{format_statement(dataclasses.replace(align_stmt, constraints=kept_constraints))}` "
                   "instead" if kept_constraints else f"remove `{format_statement(align_stmt)}`")
            fix += f" (line {align_stmt.loc.line})" if align_stmt is not stmt else ""
            hints.append(f"{'or ' if hints else ''}drop the Align: {fix}")
        elif any(c.name == "AOS" for c in stmt.constraints):  # not where the AOS is the variant's own
            soa = tuple(dataclasses.replace(c, name="SOA") if c.name == "AOS" else c for c in stmt.constraints)
            these = "this argument" if len(padded) == 1 else "these arguments"
            hints.append(f"{'or ' if hints else ''}keep {these} SOA: write "
                         f"`{format_statement(dataclasses.replace(stmt, constraints=soa))}` instead")
        self.add("W330", message, stmt.loc, hints, tuple(notes))

    @staticmethod
    def _same_part_note(alike: dict) -> list[str]:
        """W330's note on the tasks of `alike` (region or partition -> layout words -> task -> its arguments) that keep
        another layout on the fields through the region or partition of the AOS argument: Realm copies for them too,
        but within one subregion, which is no risk of the crash (the tasks a run's advice names beside the others)."""
        same, count = [], 0
        for part, layouts in alike.items():
            for layout, tasks in layouts.items():
                names = [f"{t} (argument{'s' if len(ix) > 1 else ''} {_and([str(i) for i in sorted(ix)])})"
                         for t, ix in tasks.items()]
                same.append(f"{_and(names)} keep{'s' if len(tasks) == 1 else ''} {layout} on these fields through "
                            f"'{part}'")
                count += len(tasks)
        if not same:
            return []
        return [f"{'; '.join(same)}, as the AOS argument{'s do' if len(alike) > 1 else ' does'}: Realm copies between "
                "the layouts there too, but within one subregion, which has not crashed, so "
                f"{'it is' if count == 1 else 'they are'} not named above"]

    def _layout_others(self, stmts: list, reqs: set[tuple[str, int]]) -> str | None:
        """What the Layout statements `stmts` apply to besides the requirements `reqs` ((task name, index)): "the
        other tasks", "the other requirements of TASK", or None (those requirements alone)."""
        tasks = sorted({name for name, _ in reqs})
        if any(task_matches(s.tasks, t.name) for s in stmts for t in self.app.tasks if t.name not in tasks):
            return "the other tasks"
        if any(task_matches(s.tasks, t.name) and region_matches(s.region, r.index, r.names)
               for s in stmts for t in self.app.tasks if t.name in tasks for r in t.regions
               if (t.name, r.index) not in reqs):
            return f"the other requirements of {' and '.join(tasks)}"
        return None

    def _instance_places(self, ev: Evaluator, info, req_index: int) -> list[tuple[str, str]]:
        """(processor kind, memory kind) of every place requirement `req_index` of task `info` may get an instance:
        with a machine the one place it gets (raises DslRuntimeError where the task cannot run or the requirement has
        no usable memory); without one, every kind of the task's list it has a variant for, up to CPU (every machine
        has CPUs, so the kinds after it are never used), with every memory listed for it there."""
        if ev.machine is not None:
            kind = ev.task_kind(info.name)
            memory = ev.memory(info.name, req_index, Proc(kind, 0, 0))
            return [] if memory == "VIRTUAL" else [(kind, memory)]
        places = []
        for kind in ev.task_kinds(info.name) or DEFAULT_KIND_RANKING:
            if kind in ABSENT_KINDS or kind not in info.variants:
                continue
            listed = [m for m in ev.memories(info.name, req_index, kind) if m != "VIRTUAL"]
            places += [(kind, m) for m in listed or ["FBMEM" if kind == "GPU" else "SYSMEM"]]
            if kind == "CPU":
                break
        return places

    def _layout_why(self, places: list[tuple[str, str]], kind: str, memory: str, certain: bool) -> str:
        """Why the layout a requirement gets at (`kind`, `memory`) fails: where its task runs (`places`: every place
        its instance may go, `_instance_places`)."""
        against = f"against the layout constraint their {kind} variant registers"
        if self.machine is not None:
            return (f"on {self.here} ({self.machine.counts()}) they run on {kind} (instances in {memory}), {against}")
        kinds = _dedup_kinds(places)
        if certain:
            return f"they can run only on {', '.join(kinds)}, {against}"
        before = kinds[:kinds.index(kind)]  # tried first: the task runs on `kind` where the machine has none of them
        where = f"on a machine without {' or '.join(before)}" if before else f"with their instances in {memory}"
        return f"they run on {kind} {where}, {against}"

    def _evaluate_points(self, ev: Evaluator):
        if self.app is None:
            return
        self._placing = ev  # its machine models, which W320's and W321's hints index
        # A function reading `task.parent` sees the discovered parent on the first CPU of node 0 (`explain` puts it
        # where it explains the parent to run).
        parent_users = reads_parent(self.functions)
        reported: set[tuple] = set()  # one diagnostic per failing expression, even when several tasks share it
        top = self.app.top_level
        replicated = self._replicated() if self.machine.nodes > 1 else {}
        one_node: dict[tuple, tuple] = {}  # (statement, node) -> (statement, [launch]): W320 once per pair
        idle: dict[int, tuple] = {}  # id of a statement -> (statement, [launch]): W331 once per statement
        # The top-level task is mapped too (a benchmark's description names it only as its tasks' parent).
        for info in [*self.app.tasks, *([top] if top is not None and top not in self.app.tasks else [])]:
            try:
                ev.task_kind(info.name)
            except DslRuntimeError:
                continue  # reported as E209 by _app_kinds
            jobs = []
            if info.index_launched and info.domain:
                jobs.append((True, info.domain))
            if info.single_launched:
                jobs.append((False, None))
            for index_launch, domain in jobs:
                stmt = ev.map_statement(info.name, index_launch)
                if stmt is None:
                    continue
                if index_launch and stmt.func.name in parent_users and info.parent in replicated:
                    self._sharded_parent(stmt, info, replicated[info.parent])
                points = _points(domain) if index_launch else [None]
                nodes, count, used = set(), 0, set()
                for point in points:
                    try:
                        placed = ev.place(info.name, point, domain)
                    except DslRuntimeError as err:
                        if (err.code, err.loc) not in reported:
                            reported.add((err.code, err.loc))
                            if err.code == "R400" and err.dims:
                                # the other points' dimensions out of range at that index too: one hint for all
                                err.dims = _out_of_range_dims(ev, info.name, err, points, domain)
                            self._runtime_diag(err, f"of task '{info.name}'", stmt, stmt.func.name in parent_users,
                                               top_level=info == top)
                        break
                    if placed is not None:
                        nodes.update(p.node for p in (placed.procs if isinstance(placed, ProcSet) else (placed,)))
                        # processors used, as `explain` counts them (a set counts per node only: not here)
                        used.add(placed if isinstance(placed, Proc) else None)
                    count += 1
                else:
                    if index_launch and math.prod(domain) > MAX_STATIC_POINTS:
                        self._points_left(info.name, domain, point, stmt)
                    kind = ev.task_kind(info.name)
                    if (index_launch and len(nodes) == 1 and self.machine.nodes > 1
                            and count > self.machine.count(kind, min(nodes))):
                        node = nodes.pop()
                        n = self.machine.count(kind, node)
                        one_node.setdefault((id(stmt), node), (stmt, []))[1].append(
                            (info.name, count, node, f"{n} {kind}{'s' * (n != 1)}"))
                    elif index_launch and None not in used and math.prod(domain) <= MAX_STATIC_POINTS:
                        total = sum(self.machine.count(kind, n) for n in range(self.machine.nodes))
                        if total > 1 and count >= total and 2 * len(used) < total:
                            idle.setdefault(id(stmt), (stmt, []))[1].append((info.name, count, len(used), total,
                                                                             kind))
        for stmt, launches in one_node.values():
            self._one_node_launches(stmt, launches)
        for stmt, launches in idle.values():
            self._idle_processors(stmt, launches)

    def _idle_processors(self, stmt, launches: list[tuple[str, int, int, int, str]]):
        """W331 (note): every point of each index launch of `launches` ((task, points, processors used, processors
        of the task's kind on the machine, the kind)) that statement `stmt` places runs on fewer than half the
        processors of its kind, though it has at least as many points as there are (a hard-coded modulus or index,
        say); not where the points run on one node of several (W320)."""
        counts = sorted({c for _, c, _, _, _ in launches})
        each = f"{counts[0]} points{' each' if len(launches) > 1 else ''}" if len(counts) == 1 else \
            f"{counts[0]} to {counts[-1]} points"
        shapes = {(u, t, k) for _, _, u, t, k in launches}
        if len(shapes) == 1:
            used, total, kind = shapes.pop()
            runs = f"run{'s' if len(launches) == 1 else ''} on {used} of the {total} {kind}s of {self.here}: the " \
                   f"other {total - used} get none of {'its' if len(launches) == 1 else 'their'} points"
        else:
            runs = f"each run on fewer than half the processors of their kind on {self.here}: " + ", ".join(
                f"'{t}' on {u} of {n} {k}s" for t, _, u, n, k in launches)
        launch = "launch" if len(launches) == 1 else "launches"
        f = self.functions.get(stmt.func.name)
        model = next((n.obj.name for n in (_walk_stmt(f) if f is not None else ())
                      if isinstance(n, A.Index) and isinstance(n.obj, A.Name)), "m")
        value = self._placing.globals.get(model) if self._placing is not None else None
        dims = len(value.size) if isinstance(value, MachineModel) else 2
        sizes = ", ".join(f"`{model}.size[{d}]`" for d in range(dims))
        self.add("W331", f"the index {launch} of {quoted_names([t for t, *_ in launches])} ({each}) {runs}",
                 stmt.loc,
                 (f"spread the points over every processor from every dimension of the launch point, with the "
                  f"model's own size{'s' if dims > 1 else ''} ({sizes}) rather than constants, or leave it if the "
                  "others are meant to stay free (`mapperopt explain` shows where each point runs)",),
                 severity="note")

    def _replicated(self) -> dict[str, str]:
        """{task: how it comes to be control-replicated} for the tasks of a user's program that may be replicated on
        a machine of several nodes (a benchmark registers no replicable variant: W319): those a ControlReplicate
        statement names that are launched one at a time, and the top-level task, which Legion's default mapper
        replicates when its variant is registered replicable."""
        if not self.app.discovered_as:
            return {}
        out = {}
        top = self.app.top_level
        if top is not None:
            out[top.name] = ("Legion's default mapper replicates the top-level task on several nodes when its variant "
                             "is registered replicable")
        for s in self.program.statements:
            if isinstance(s, A.ControlReplicateStmt):
                for ident in s.tasks.names or ():
                    info = self.app.task(ident.name)
                    if info is not None and info.single_launched:
                        out[info.name] = "ControlReplicate"
        return out

    def _sharded_parent(self, stmt, info, how: str):
        """W321: the function of IndexTaskMap statement `stmt` reads task.parent, and places the points of `info`,
        launched by a task that may be control-replicated (`how`): Legion's sharding of the launch then calls it
        with no parent (the compiled mapper's sharding functor knows only the point and the domain), R406."""
        point = self._point_name(stmt)
        example, model = self._spread_example(stmt)
        self.add("W321", f"function '{stmt.func.name}' reads task.parent, but it places the points of '{info.name}', "
                         f"which '{info.parent}' launches: when '{info.parent}' is control-replicated ({how}), "
                         "Legion's sharding of the launch calls the function without a parent, and the run stops "
                         "there (R406)", stmt.func.loc,
                 (f"choose the node from {point} and {point[:-len('ipoint')]}ispace alone, "
                  + (f"e.g. `{example}`" if example else _through_model(model)),))

    def _spread_example(self, stmt) -> tuple[str | None, str]:
        """What the function of IndexTaskMap statement `stmt` can return to spread the points over the nodes, in its
        own names: `M[task.ipoint[0] % M.size[0], ...]` with `task` its parameter and M the machine model it reads (a
        global, indexed with as many values as it has dimensions: `M[task.ipoint[0] % M.size[0]]` for a merged
        one; no example where it reads none); in the three-operand form, where it returns the index into the model
        passed as its MSpace `m` from its IPoint `p`, `(p[0] % m.size[0], ...)`, or `p[0] % m.size[0]` where it
        returns an int. The index is of the model's dimension that runs over the nodes
        (1 after `swap(0, 1)`: `M[..., task.ipoint[0] % M.size[1]]`). Second, where no dimension of the model runs
        over several nodes (no index then spreads them; the example is None), what it reaches."""
        f = self.functions.get(stmt.func.name)
        if f is not None and getattr(stmt, "machine", None) is not None and len(f.params) == 3 \
                and f.params[0].type == "IPoint" and f.params[2].type == "MSpace":
            p, m = f.params[0].name, f.params[2].name
            dim, reach = self._node_dimension(stmt.machine.name)
            if dim is None:
                return None, f"'{stmt.machine.name}' reaches {reach} only"
            index = _index_at(f"{p}[0] % {m}.size[{dim[0]}]", *dim)
            return (index, "") if self._function_type(f).name == "int" and dim[1] == 1 else (f"({index})", "")
        names = list(_free_names(f)) if f is not None else []
        m = next((n for n in reversed(names) if self.global_types.get(n, UNKNOWN).name == "MSpace"), None)
        if m is None:  # the model is not a global the function reads (a helper's): no name to offer
            return None, ""
        task = f.params[0].name if f is not None and len(f.params) == 1 else "task"
        dim, reach = self._node_dimension(m)
        if dim is None:
            return None, f"'{m}' reaches {reach} only"
        return f"{m}[{_index_at(f'{task}.ipoint[0] % {m}.size[{dim[0]}]', *dim)}]", ""

    def _node_dimension(self, model: str) -> tuple[tuple[int, int] | None, str]:
        """(the dimension of global machine model `model` whose index runs over the most nodes, its dimensions),
        as the static evaluation has it; (0, 2) where it has no such model; None and the node it reaches where no
        dimension runs over more than one."""
        value = self._placing.globals.get(model) if self._placing is not None else None
        if not isinstance(value, MachineModel):
            return (0, 2), ""
        size, best, nodes = value.size, None, set()
        for d, n in enumerate(size):
            reached = set()
            for i in range(min(n, MAX_STATIC_POINTS)):
                try:
                    reached.add(value.proc_at(tuple(i if k == d else 0 for k in range(len(size)))).node)
                except DslRuntimeError:
                    break
            if best is None or len(reached) > len(nodes):
                best, nodes = d, reached
        if len(nodes) <= 1:
            return None, f"node {min(nodes)}" if nodes else "no processor"
        return (best, len(size)), ""

    def _one_node_launches(self, stmt, launches: list[tuple[str, int, int, str]]):
        """W320: every evaluated point of each index launch of `launches` ((task, points, node, the node's
        processors of the task's kind: "4 GPUs"), all on one node) that statement `stmt` places runs on that node
        of a machine of several, more points than it has processors of the kind (fewer may be meant: one node's
        processors, near their data); the other nodes get none of them."""
        node = launches[0][2]
        idle = [n for n in range(self.machine.nodes) if n != node]
        counts = sorted({c for _, c, _, _ in launches})
        procs = {p for _, _, _, p in launches}
        procs = f"its {procs.pop()}" if len(procs) == 1 else "its processors of their kinds"
        each = f"{counts[0]} points{' each' if len(launches) > 1 else ''}" if len(counts) == 1 else \
            f"{counts[0]} to {counts[-1]} points"
        launch = "launch" if len(launches) == 1 else "launches"
        example, model = self._spread_example(stmt)
        self.add("W320", f"every point of the index {launch} of {quoted_names([t for t, _, _, _ in launches])} "
                         f"({each}) runs on node {node}, more points than {procs}: "
                         f"{_node_range(idle)} of {self.here} {'gets' if len(idle) == 1 else 'get'} none of them",
                 stmt.loc,
                 (f"spread the points over the nodes from {self._point_name(stmt)}, "
                  + (f"e.g. {'' if stmt.machine is None else f'with {stmt.func.name!r} returning '}`{example}`"
                     if example else _through_model(model))
                  + ("" if self.machine.given_as else ", or describe the machine meant with --machine"),))

    def _point_name(self, stmt) -> str:
        """How the function of IndexTaskMap statement `stmt` names the launch point: `task.ipoint` (its Task
        parameter's name), or its IPoint parameter in the three-operand form."""
        f = self.functions.get(stmt.func.name)
        if f is None or not f.params:
            return "task.ipoint"
        return f.params[0].name if f.params[0].type == "IPoint" else f"{f.params[0].name}.ipoint"

    def _points_left(self, task: str, domain: tuple[int, ...], last: tuple[int, ...], stmt):
        """W318 (note): the index launch of `task` over `domain` has more points than the static evaluation evaluates
        (MAX_STATIC_POINTS, the first in row-major order, up to `last`), and none of those failed: the others are
        not checked."""
        self.add("W318", f"static evaluation checked the first {MAX_STATIC_POINTS} points of the index launch of "
                         f"'{task}' over {fmt_tuple(domain)} (up to point {fmt_tuple(last)}); its other "
                         f"{math.prod(domain) - MAX_STATIC_POINTS} points were not evaluated", stmt.loc,
                 ("`mapperopt explain` with the same options evaluates every point and names the run-time errors of "
                  "any that fail" if math.prod(domain) <= MAX_EXPLAIN_POINTS else
                  f"`mapperopt explain` evaluates a smaller launch of the same task, --domain with at most "
                  f"{MAX_EXPLAIN_POINTS} points, and names the run-time errors of any that fail",), severity="note")

    def _runtime_diag(self, err: DslRuntimeError, what: str, stmt, reads_parent: bool = False,
                      top_level: bool = False):
        """The diagnostic of a run-time error `err` found by static evaluation (`what`: of what, "at load" or "of task
        't'"); `top_level`: of the top-level task, which has no parent."""
        code = STATIC_CODES.get(err.code, "E206")
        if err.code == "R408" and re.match(r"tuple index -?\d+ out of range", err.detail):
            code = "E205"  # an index out of range, as for a machine model's (R408 covers type errors too)
        loc = err.loc or (stmt.loc if stmt is not None else self._whole_file())
        hints = []
        m = re.search(r"in dimension (\d+) of (\S+)", err.detail)
        empty = self._empty_kinds(err)
        if empty:  # no index fits a model of no processors, and its size divides nothing: fall back instead
            hints += [self._empty_hint(kind) for kind in empty]
        elif code == "E205" and m and err.code == "R400":
            hints.append(self._modulo_hint(err, int(m[1]), err.dims))
        elif err.code == "R405":
            hints.append(self._one_node_hint(err, stmt))
        elif code == "E205" and (shown := re.match(r"tuple index -?\d+ out of range for (\(.*?\))", err.detail)):
            indexed = next((n.obj for s in self.program.statements for n in _walk_stmt(s)
                            if isinstance(n, A.Index) and n.loc == err.loc), None)
            if isinstance(indexed, A.Member) and indexed.name == "ipoint":  # past the launch's dimensions
                k = shown[1].count(",") + (not shown[1].endswith(",)"))  # "(0,)": 1, "(0, 0)": 2
                hints.append(f"{_expr_text(indexed)} has {k} dimension{'s' if k > 1 else ''}, one per dimension of "
                             f"the launch domain: index it with {'0' if k == 1 else f'0 to {k - 1}'}")
        split = re.match(r"split\((\d+), (\d+)\): the factor must be >= 1 and divide the size (\d+)", err.detail)
        if code == "E217" and split and int(split[2]) >= 1:
            d, f, size = map(int, split.groups())
            call = next((n for s in self.program.statements for n in _walk_stmt(s) if isinstance(n, A.MethodCall)
                         and n.name == "split" and n.loc == err.loc), None)
            model = _expr_text(call.obj) if call is not None else "m"
            factors = balance_factors(size, 2)
            hints.append(f"{f} does not divide {size}: `{model}.balance_split({d}, 2)` splits dimension {d} in two, "
                         f"as split does, whatever its size (here {factors[0]} and {factors[1]}), or give split a "
                         f"factor of {size}")
        counts = re.match(r"(\d+) index value\(s\) for the (\d+)-dimensional model", err.detail)
        index = next((n for s in self.program.statements for n in _walk_stmt(s)
                      if isinstance(n, A.Index) and n.loc == err.loc), None) if counts else None
        if index is not None:
            point = index.items[0].value if len(index.items) == 1 and isinstance(index.items[0], A.Unpack) else None
            task = (point.obj.name if isinstance(point, A.Member) and point.name == "ipoint"
                    and isinstance(point.obj, A.Name) else None)
            k = int(counts[1])
            coords = ([f"{task}.ipoint[{j}]" for j in range(k)] if task else
                      None if any(isinstance(i, (A.Unpack, A.Wildcard)) for i in index.items) else
                      [_expr_text(i) for i in index.items])
            if coords is not None:
                hints.append(_dims_hint(_expr_text(index.obj), int(counts[2]), coords, task))
        wrong_kind = re.search(r"a (\w+) processor, but task '([^']+)' runs on (\w+)", err.detail)
        if err.code == "R402" and wrong_kind:
            got, task, kind = wrong_kind.groups()
            info = self.app.task(task) if self.app is not None else None
            # running it on the returned kind is a fix only where the task has a variant for that kind
            other = f", or run it on {got}: Task {task} {got};" if info is None or got in info.variants else ""
            hints.append(f"return a processor of Machine({kind}), where '{task}' runs{other}")
        notes = [f"static evaluation {what} on {self.here} ({self.machine.counts()}); at run time: {err.code}"]
        if stmt is not None:
            notes.append(f"mapping statement at {stmt.loc}: {format_statement(stmt)}")
        if top_level and err.code == "R406" and stmt is not None and stmt.tasks.names is None:
            hints.append(f"`{format_statement(stmt)}` selects the top-level task too: name the tasks it is for")
        elif reads_parent and not top_level:
            notes.append("task.parent was the top-level task on the first CPU of node 0 (as `explain` shows it)")
        self.add(code, err.detail, loc, hints, notes, at_point=stmt is not None)

    def _one_node_hint(self, err: DslRuntimeError, stmt) -> str:
        """The hint for a processor set that spans nodes (R405) at `err.loc`, of mapping statement `stmt` (None at
        load): for a model as Machine(K) makes it (dimension 0 the node), the set of one node's processors."""
        index = next((n for s in self.program.statements for n in _walk_stmt(s)
                      if isinstance(n, A.Index) and n.loc == err.loc), None)
        model = _expr_text(index.obj) if index is not None else "m"
        if re.search(r" in Machine\(\w+\) \(", err.detail):  # not transformed
            node = (f"{self._point_name(stmt)}[0] % {model}.size[0]" if isinstance(stmt, A.IndexTaskMapStmt)
                    else "0")
            return f"index the node with one value and its processors with '*', e.g. `{model}[{node}, *]`"
        return (f"index the dimensions of `{model}` that span nodes with one value each, leaving '*' only where the "
                "processors of one node differ")

    def _modulo_hint(self, err: DslRuntimeError, dim: int, dims: tuple[int, ...] = ()) -> str:
        """The hint for an index out of range (R400) in dimension `dim`: the indexing at `err.loc` with that index,
        and those of the other dimensions `dims` out of range at some launch point, reduced modulo the model's size,
        in the mapper's own names; a generic example where it cannot be rewritten (`m[*t]`)."""
        index = next((n for s in self.program.statements for n in _walk_stmt(s)
                      if isinstance(n, A.Index) and n.loc == err.loc), None)
        model = _expr_text(index.obj) if index is not None else "m"
        items = list(index.items) if index is not None else []
        if dim < len(items) and not any(isinstance(i, (A.Unpack, A.Wildcard)) for i in items):
            coords = [_expr_text(i) for i in items]
            wrap = sorted({dim, *(d for d in dims if d < len(items))})
            moduli = []  # hard-coded moduli replaced: (modulus, dimension)
            for d in wrap:
                it = items[d]
                if isinstance(it, A.Binary) and it.op == "%" and isinstance(it.right, A.IntLit):  # `% 2`, hard-coded
                    left = _expr_text(it.left)
                    left = left if re.fullmatch(r"[\w.\[\]]+", left) or isinstance(it.left, A.Binary) and \
                        it.left.op in ("*", "/", "%") else f"({left})"
                    coords[d] = f"{left} % {model}.size[{d}]"
                    moduli.append((it.right.value, d))
                    continue
                c = coords[d] if re.fullmatch(r"[\w.\[\]]+", coords[d]) else f"({coords[d]})"  # `%` binds tighter
                coords[d] = f"{c} % {model}.size[{d}]"
            rewritten = f"`{model}[{', '.join(coords)}]`"
            if moduli and len(moduli) == len(wrap):
                said = "; ".join(f"the modulus {v} is not the size of dimension {d}" for v, d in moduli)
                return f"{said} on {self.here}: use the model's size, {rewritten}"
            if len(wrap) > 1:
                return f"reduce the indices modulo the sizes of those dimensions: {rewritten}"
            return f"reduce the index modulo the size of that dimension: {rewritten}"
        return (f"reduce the index modulo the size of that dimension, e.g. `i % {model}.size[{dim}]` for the machine "
                f"model `{model}` being indexed")

    def _skipped_task_kinds(self, s: A.TaskStmt, kinds, every_task: list[str], seen: set[str]):
        """W303 for the kinds other than GPU of a Task statement for named tasks none of whose kinds has processors
        here (`Task check IO;`): its tasks go on with the kinds of the `Task *` statements (`every_task`)."""
        names = ", ".join(f"'{n.name}'" for n in s.tasks.names)
        goes = "goes" if len(s.tasks.names) == 1 else "go"
        tasks = [t for t in (self.app.task(n.name) for n in s.tasks.names) if t is not None] if self.app else []
        for k in kinds:
            if k.name not in ABSENT_KINDS and k.name != "GPU" and k.name not in seen:
                seen.add(k.name)
                self.add("W303", f"processor kind '{k.name}' has no processors on {self.here} "
                                 f"({self.machine.counts()}); it is skipped: {names} {goes} on with the kinds of the "
                                 f"`Task *` statements ({', '.join(dict.fromkeys(every_task))})", k.loc,
                         (f"it applies on a machine with {k.name} processors; --machine describes nodes, GPUs and "
                          "CPUs only" if not tasks or any(k.name in t.variants for t in tasks) else
                          f"{names} {'has' if len(tasks) == 1 else 'have'} no {k.name} variant: the statement "
                          "applies on no machine (W305)",))

    def _empty_kinds(self, err: DslRuntimeError) -> list[str]:
        """The processor kinds without processors on this machine whose machine model `err` comes from: the model
        indexed (R400) or one whose size or volume is the divisor (R401)."""
        if err.code == "R400":
            kinds = re.findall(r" of Machine\((\w+)\)", err.detail)
        elif err.code == "R401" and err.loc is not None:
            divisors = [n.right for s in self.program.statements for n in _walk_stmt(s)
                        if isinstance(n, A.Binary) and n.op in ("/", "%") and n.loc == err.loc]
            kinds = [n.kind if isinstance(n, A.MachineLit) else self.global_types[n.name].kind
                     for d in divisors for n in _walk_all(d)
                     if isinstance(n, A.MachineLit) or (isinstance(n, A.Name) and n.name in self.global_types
                                                        and self.global_types[n.name].name == "MSpace")]
        else:
            return []
        return [k for k in dict.fromkeys(kinds) if k is not None and self.machine.count(k, 0) == 0]

    def _empty_hint(self, kind: str) -> str:
        """What to do about a machine model of `kind`, which has no processors on this machine."""
        what = "GPUs" if kind == "GPU" else f"{kind} processors"
        other = ("check against the machine the mapper is meant for with --machine (e.g. --machine 1x4: one node of 4 "
                 "GPUs)" if kind == "GPU" else
                 f"check on a machine with {what} (a run with Legion's {LEGION_PROC_FLAGS[kind]} N; --machine "
                 "describes nodes, GPUs and CPUs only, and one UTIL processor per node)" if kind in LEGION_PROC_FLAGS
                 else f"{kind} does not exist in mapperopt's Legion build")
        return (f"{self.here} ({self.machine.counts()}) has no {what}, so Machine({kind}) is empty: fall "
                f"back where it is, `Machine({kind}).volume > 0 ? Machine({kind}) : Machine(CPU)`, or {other}")


# ---------------------------------------------------------------------------------------------------- helpers


def _dedup_kinds(places: list[tuple[str, str]]) -> list[str]:
    """The processor kinds of `places`, in order, once each."""
    return list(dict.fromkeys(k for k, _ in places))


def _and(items: list[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)


def _layout_words(got: dict) -> str:
    """A layout record's interleaving and alignment as a statement writes them: "SOA", "AOS Align==64"."""
    align = got["align"]
    return got["order"] + (f" Align{align['op']}{align['bytes']}" if align else "")


def _element_stride(got: dict, held: dict[str, int | None]) -> tuple[int | None, int, bool] | None:
    """For an instance of layout `got` holding the fields `held` (name -> bytes, None where unknown: taken as
    `BLAS_ELEMENT_BYTES`), None where each field's element stride is its size (SOA; AOS of one field not padded),
    else (the element stride in bytes, None where a size is unknown; the alignment each field is padded to (its size
    without an Align); whether the Align pads, not the number of fields): AOS places each element's fields side by
    side, each at an offset aligned as the Align asks (`==` and `>=`)."""
    if got["order"] != "AOS":
        return None
    align = got["align"]
    pad = align["bytes"] if align and align["op"] in ("==", ">=") else 0
    sizes = [n or BLAS_ELEMENT_BYTES for n in held.values()]
    by_align = any(pad > n for n in sizes)
    if len(sizes) < 2 and not by_align:
        return None
    stride = sum(-(-n // pad) * pad if pad else n for n in sizes)
    return (stride if all(held.values()) else None), (pad if by_align else max(sizes)), by_align


def _with_constraints(stmt: A.LayoutStmt, need: str, aspects: list[str]) -> A.LayoutStmt:
    """`stmt` with its constraints of the `aspects` ("dims", "order", "align") replaced by those of `need`
    ("SOA F_order Align>=128")."""
    words = {"dims": ("C_order", "F_order"), "order": ("SOA", "AOS"), "align": ("Align", "No_Align")}
    wanted = {a: w for a in aspects for w in need.split() if w in words[a] or (a == "align" and w.startswith("Align"))}
    out = []
    for c in stmt.constraints:
        aspect = next((a for a, ws in words.items() if c.name in ws), None)
        if aspect == "align" and aspect in wanted:
            op, value = re.fullmatch(r"Align([=!<>]+)(\d+)", wanted[aspect]).groups()
            out.append(A.Constraint("Align", op, int(value), loc=c.loc))
        else:
            out.append(A.Constraint(wanted[aspect], loc=c.loc) if aspect in wanted else c)
    return dataclasses.replace(stmt, constraints=tuple(out))


def _aligned(given: dict | None, need: str) -> bool:
    """Whether an instance aligned as `given` ({"op": "==", "bytes": 16}; None: no alignment) is certain to meet
    `need` ("Align>=128"), as Legion's check of a variant's alignment constraint requires: every alignment the first
    allows, the second allows too (tested at the bounds of both, where the answer can change)."""
    op, n = re.fullmatch(r"Align([=!<>]+)(\d+)", need).groups()
    if given is None:
        return False
    holds = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
             ">=": operator.ge}
    a, b = given["bytes"], int(n)
    return all(holds[op](x, b) for x in {a - 1, a, a + 1, b - 1, b, b + 1, max(a, b) + 2} - {0, -1}
               if holds[given["op"]](x, a))


def _walk(e):
    """`e` and every sub-expression, pre-order."""
    stack = [e]
    while stack:
        node = stack.pop()
        yield node
        match node:
            case A.Call() | A.TupleLit():
                stack.extend(reversed(node.args if isinstance(node, A.Call) else node.items))
            case A.Comprehension():
                continue  # scoping visits its parts with the comprehension variable bound
            case A.Unary() | A.Unpack():
                stack.append(node.operand if isinstance(node, A.Unary) else node.value)
            case A.Binary():
                stack.extend((node.right, node.left))
            case A.Ternary():
                stack.extend((node.orelse, node.then, node.cond))
            case A.Member():
                stack.append(node.obj)
            case A.MethodCall():
                stack.extend(reversed(node.args))
                stack.append(node.obj)
            case A.Index():
                stack.extend(reversed(node.items))
                stack.append(node.obj)
            case A.Slice():
                stack.extend(x for x in (node.hi, node.lo) if x is not None)
                stack.append(node.obj)


def _nesting(s, nesting: dict[str, int]) -> int:
    """Nesting depth of the expressions of statement `s`, a call counting the nesting of its callee (`nesting`, 0
    when unknown). Iterative, one pass."""
    best = 0
    stack = [(x, 1) for x in _stmt_exprs(s)]
    while stack:
        node, d = stack.pop()
        best = max(best, d + (nesting.get(node.func, 0) if isinstance(node, A.Call) else 0))
        stack.extend((c, d + 1) for c in _children(node))
    return best


def _post_order(functions: dict[str, A.FuncDef], sites: dict[str, list[A.Call]]) -> list[str]:
    """Function names, each after every function it calls (the call graph has no cycle); iterative."""
    out, seen = [], set()
    for root in functions:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(sites[root]))]
        while stack:
            name, calls = stack[-1]
            call = next(calls, None)
            if call is None:
                stack.pop()
                out.append(name)
            elif call.func in functions and call.func not in seen:
                seen.add(call.func)
                stack.append((call.func, iter(sites[call.func])))
    return out


def _free_names(f: A.FuncDef):
    """Names `f` reads that are neither parameters, nor locals assigned before, nor comprehension variables."""
    bound = {p.name for p in f.params}
    for s in (*f.body, f.ret):
        stack = [(x, frozenset()) for x in _stmt_exprs(s)]
        while stack:
            node, local = stack.pop()
            if isinstance(node, A.Name) and node.name not in bound and node.name not in local:
                yield node.name
            elif isinstance(node, A.Comprehension):
                stack.append((node.iterable, local))
                stack.append((node.expr, local | {node.var}))
                continue
            stack.extend((c, local) for c in _children(node))
        if isinstance(s, A.Assign):
            bound.add(s.name)


def _stmt_exprs(s) -> list:
    if isinstance(s, (A.Assign, A.Return)):
        return [s.value]
    if isinstance(s, A.Print):
        return list(s.args)
    return []


def _children(node) -> list:
    match node:
        case A.Call():
            return list(node.args)
        case A.TupleLit():
            return list(node.items)
        case A.Comprehension():
            return [node.expr, node.iterable]
        case A.Unary():
            return [node.operand]
        case A.Unpack():
            return [node.value]
        case A.Binary():
            return [node.left, node.right]
        case A.Ternary():
            return [node.cond, node.then, node.orelse]
        case A.Member():
            return [node.obj]
        case A.MethodCall():
            return [node.obj, *node.args]
        case A.Index():
            return [node.obj, *node.items]
        case A.Slice():
            return [x for x in (node.obj, node.lo, node.hi) if x is not None]
    return []


def _walk_all(e):
    """Like `_walk`, but also inside comprehensions."""
    for node in _walk(e):
        yield node
        if isinstance(node, A.Comprehension):
            yield from _walk_all(node.expr)
            yield from _walk_all(node.iterable)


def _walk_stmt(s):
    if isinstance(s, A.FuncDef):
        for b in (*s.body, s.ret):
            yield from _walk_stmt(b)
    elif isinstance(s, (A.Assign, A.Return)):
        yield from _walk_all(s.value)
    elif isinstance(s, A.Print):
        for a in s.args:
            yield from _walk_all(a)


def reads_parent(functions: dict[str, A.FuncDef]) -> set[str]:
    """Functions that read `parent`, directly or through the functions they call (linear in the calls)."""
    callers: dict[str, set[str]] = {}
    users = []
    for name, f in functions.items():
        direct = False
        for n in _walk_stmt(f):
            if isinstance(n, A.Member) and n.name == "parent":
                direct = True
            elif isinstance(n, A.Call):
                callers.setdefault(n.func, set()).add(name)
        if direct:
            users.append(name)
    seen = set(users)
    while users:
        for caller in callers.get(users.pop(), ()):
            if caller not in seen:
                seen.add(caller)
                users.append(caller)
    return seen


def _kinds_of(s) -> list[A.Kind]:
    """The processor kinds a mapping statement lists."""
    if isinstance(s, A.TaskStmt):
        return list(s.kinds)
    third = getattr(s, "proc", None) or getattr(s, "target", None)
    return [third] if isinstance(third, A.Kind) and not third.is_memory else []


def _tok(x) -> str:
    if x is None or isinstance(x, A.Star):
        return "*"
    return x.name


def _region_tok(r: A.RegionSel) -> str:
    return "*" if r.is_wildcard else (r.name if r.name is not None else str(r.index))


def selector_keys(s) -> list[tuple]:
    """Selector tokens after list expansion, for the statements with precedence (§6.4): a later statement with one of
    `s`'s keys overrides `s` for it (W300); [] for other statements."""
    if type(s) not in _PRECEDENCE:
        return []
    tasks = [s.tasks.kind or "*"] if s.tasks.names is None else [i.name for i in s.tasks.names]
    match s:
        case A.TaskStmt() | A.IndexTaskMapStmt() | A.SingleTaskMapStmt():
            return [(type(s).__name__, t) for t in tasks]
        case A.RegionStmt():
            return [("RegionStmt", t, _region_tok(s.region), _tok(s.proc)) for t in tasks]
        case A.LayoutStmt():
            return [("LayoutStmt", t, _region_tok(s.region), _tok(s.target)) for t in tasks]
        case A.InstanceLimitStmt():
            return [("InstanceLimitStmt", t, _tok(s.proc)) for t in tasks]
    return []


_PRECEDENCE = {A.TaskStmt, A.IndexTaskMapStmt, A.SingleTaskMapStmt, A.RegionStmt, A.LayoutStmt, A.InstanceLimitStmt}


def _key_text(key: tuple) -> str:
    return " ".join(key[1:])


def _for_kind(s: A.RegionStmt | A.InstanceLimitStmt | A.LayoutStmt, tasks, proc: str, has=None) -> str:
    """Statement `s` for `tasks` alone on processor kind `proc` (a Layout statement for FBMEM: for SYSMEM), keeping
    the memories of a Region statement's list that `proc` reaches (FBMEM only a GPU) and, `has` given (whether the
    machine checked has a memory kind), that the machine has (none left: SYSMEM, or FBMEM for a GPU)."""
    sel = A.TaskSel(tuple(A.Ident(t.name) for t in tasks))
    if isinstance(s, A.LayoutStmt):
        target = A.Kind("SYSMEM" if s.target.name == "FBMEM" else proc)
        return format_statement(dataclasses.replace(s, tasks=sel, target=target))
    if isinstance(s, A.InstanceLimitStmt):
        return format_statement(dataclasses.replace(s, tasks=sel, proc=A.Kind(proc)))
    gpu = ("FBMEM", "ZCMEM", "VIRTUAL")
    memories = tuple(k for k in s.memories if ((k.name in gpu) == (proc == "GPU") or k.name in ("ZCMEM", "VIRTUAL"))
                     and (has is None or has(k.name)))
    memories = memories or (A.Kind("FBMEM" if proc == "GPU" else "SYSMEM"),)
    return format_statement(dataclasses.replace(s, tasks=sel, proc=A.Kind(proc), memories=memories))


def _through_model(model: str) -> str:
    """W320's and W321's hint where no example is offered: what the model the function reads reaches, if known."""
    return f"through a model of several nodes ({model})" if model else "through a model of several nodes"


def _index_at(index: str, dim: int, dims: int) -> str:
    """`index` at dimension `dim` of an index of `dims` values, the others `...` (the function's own)."""
    return ", ".join(([] if dim == 0 else ["..."]) + [index] + ([] if dim == dims - 1 else ["..."]))


def _without_variant(s, infos, never, kind: str, why: str = "") -> str:
    """W305's message for statement `s`, naming the tasks `infos`, of which `never` have no variant for `kind`
    (`why` before it, for a memory of that kind)."""
    if len(never) == 1:
        what = f"task '{never[0].name}' has no {kind} variant (variants: {', '.join(never[0].variants)})"
    else:
        what = f"tasks {quoted_names([t.name for t in never])} have no {kind} variant"
    effect = "has no effect" if len(never) == len(infos) else \
        f"has no effect on {quoted_names([t.name for t in never])}"
    return f"{format_statement(s)} {effect}: {why}{what}"


def _tasks_text(sel: A.TaskSel) -> str:
    if sel.kind is not None:
        return sel.kind
    return "*" if sel.names is None else ",".join(i.name for i in sel.names)


def _node_range(nodes: list[int]) -> str:
    """`node 2`, `nodes 1-3` (consecutive), `nodes 1, 3` (ascending `nodes`, at least one)."""
    if len(nodes) == 1:
        return f"node {nodes[0]}"
    if nodes[-1] - nodes[0] == len(nodes) - 1:
        return f"nodes {nodes[0]}-{nodes[-1]}"
    return "nodes " + ", ".join(map(str, nodes))


def _out_of_range_dims(ev: Evaluator, task: str, err: DslRuntimeError, points, domain) -> tuple[int, ...]:
    """The dimensions out of range at the machine-model index of R400 `err` for the launch points `points` (those
    after the failing one) besides the failing one's own."""
    dims = set(err.dims)
    for point in points:
        try:
            ev.place(task, point, domain)
        except DslRuntimeError as other:
            if other.code == "R400" and other.loc == err.loc:
                dims.update(other.dims)
    return tuple(sorted(dims))


def _points(domain: tuple[int, ...]):
    """Launch points of `domain` (row-major, the first dimension slowest), at most MAX_STATIC_POINTS."""
    return itertools.islice(itertools.product(*(range(d) for d in domain)), MAX_STATIC_POINTS)


