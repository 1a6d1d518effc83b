"""Reference evaluator of a policy: the decisions the compiled mapper must make, computed in pure Python.

`Evaluator(program, machine, app)` runs the load phase (global assignments and prints, dsl-reference.md §5.1) on the
described machine; `decide(task, point, domain)` resolves the mapping statements (§6, §7) and calls the mapping
functions for one task or launch point, returning the placement-trace record of docs/compiler.md. The differential tests
of the compiler compare the generated mapper's trace lines with these records.

Errors are `DslRuntimeError`s with the R-codes of §11.5 and the one-line message the generated mapper prints.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from typing import Any, TextIO

from mapperopt.descriptions import AppDescription, MachineDescription, TaskInfo
from mapperopt.dsl import ast as A
from mapperopt.dsl.errors import DslRuntimeError
from mapperopt.dsl.machine import MAX_PROCS, KindValue, MachineModel, Proc, ProcSet, TaskValue, fmt_tuple
from mapperopt.errors import MapperoptError

INT_MIN, INT_MAX = -(2**63), 2**63 - 1
# Stated limit: a tuple has at most MAX_TUPLE elements (only unpacking makes tuples longer than the text).
MAX_TUPLE = 4096
# Kinds tried when no Task statement applies: the DefaultMapper's ranking without PROC_SET, which the DSL cannot name.
DEFAULT_KIND_RANKING = ("GPU", "OMP", "CPU", "IO", "PY")
# OMP processors do not exist in the Legion build mapperopt uses (§7.1): OMP entries are always skipped.
ABSENT_KINDS = ("OMP",)
DEFAULT_LAYOUT = {"order": "SOA", "dims": "F", "align": None, "exact": False, "compact": False}


def type_name(v: Any) -> str:
    """The DSL name of a value's type, for messages."""
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, tuple):
        return "tuple"
    return {MachineModel: "MSpace", Proc: "processor", ProcSet: "processor set", TaskValue: "Task",
            KindValue: "kind"}.get(type(v), type(v).__name__)


def article(name: str) -> str:
    """`name` with its indefinite article: "an int", "a tuple"."""
    return ("an " if name[:1] in "aeiouAEIMO" else "a ") + name


def quoted_names(names, most: int = 3) -> str:
    """One or more `names` quoted, in their order, for a message: "'a'", "'a' and 'b'", "'a', 'b' and 'c'"; past
    `most` names, the first `most` and how many more ("'a', 'b', 'c' and 2 more")."""
    quoted = [f"'{n}'" for n in names]
    if len(quoted) > most:
        return f"{', '.join(quoted[:most])} and {len(quoted) - most} more"
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} and {quoted[-1]}"


def show(v: Any) -> str:
    """The printed form of a value (§7.11)."""
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, tuple):
        return fmt_tuple(v)
    return str(v)


def _is_int(v) -> bool:
    return type(v) is int


def _fail(code: str, msg: str):
    raise DslRuntimeError(code, msg)


def _check_int(v: int) -> int:
    if not INT_MIN <= v <= INT_MAX:
        _fail("R407", f"integer overflow: {v} does not fit in 64 bits")
    return v


def int_op(op: str, a: int, b: int) -> int:
    if op in "/%" and b == 0:
        _fail("R401", f"{'division' if op == '/' else 'remainder'} by zero: {a} {op} 0")
    # Python's // and % are floor division and its remainder, the DSL's semantics (§8.2).
    result = {"+": a + b, "-": a - b, "*": a * b}[op] if op in "+-*" else (a // b if op == "/" else a % b)
    return _check_int(result)


_PARAM_CHECK = {
    "Task": lambda v: isinstance(v, TaskValue),
    "int": _is_int,
    "bool": lambda v: type(v) is bool,
    "IPoint": lambda v: isinstance(v, tuple),
    "ISpace": lambda v: isinstance(v, tuple),
    "MSpace": lambda v: isinstance(v, MachineModel),
}
_MACHINE_METHODS = {  # name -> argument types
    "merge": ("int", "int"), "split": ("int", "int"), "swap": ("int", "int"), "slice": ("int", "int", "int"),
    "reverse": ("int",), "balance_split": ("int", "int"), "auto_split": ("int", "tuple"),
    "greedy_split": ("int", "tuple"), "has": ("kind",),
}


@dataclass
class _Scope:
    """Variables of one function activation (parameters and locals) or of a comprehension."""

    names: dict[str, Any]


def task_matches(sel: A.TaskSel, task: str, kind: str | None = None) -> list[tuple[int, str]]:
    """(task rank, task token) for each way `sel` matches `task`, which runs on processor kind `kind` (needed only
    by a kind selector): a name ranks 2, a kind selector 1, `*` 0 (docs/dsl-reference.md, "Selectors")."""
    if sel.kind is not None:
        return [(1, sel.kind)] if sel.kind == kind else []
    if sel.names is None:
        return [(0, "*")]
    return [(2, task)] if any(i.name == task for i in sel.names) else []


def region_matches(sel: A.RegionSel, index: int, names: tuple[str, ...]) -> tuple[tuple[int, int], str] | None:
    """(region rank, region token) when `sel` matches requirement `index` with name chain `names` (§6.2)."""
    if sel.is_wildcard:
        return (0, 0), "*"
    if sel.index is not None:
        return ((2, 0), str(sel.index)) if sel.index == index else None
    if sel.name in names:
        return (1, -names.index(sel.name)), sel.name
    return None


def by_precedence(candidates: list[tuple[tuple, tuple, int, Any]]) -> list[Any]:
    """Statements ordered by precedence key, highest first, keeping only the latest of identical selectors (§6.4).

    Each candidate is (rank key, selector token tuple, source position, statement)."""
    latest: dict[tuple, tuple] = {}
    for cand in candidates:
        _, sel, pos, _ = cand
        if sel not in latest or latest[sel][2] < pos:
            latest[sel] = cand
    return [c[3] for c in sorted(latest.values(), key=lambda c: (c[0], c[2]), reverse=True)]


def _dedup(items) -> list[str]:
    out: list[str] = []
    for i in items:
        if i not in out:
            out.append(i)
    return out


class EvaluationLimit(MapperoptError):
    """An evaluation took more steps than the evaluator's budget (a program whose calls multiply, e.g. each function
    calling the previous one twice); not an error of the program, a limit of the evaluation."""


def calls_per_evaluation(program: A.Program) -> dict[str, int]:
    """Per function of `program`, the function calls that one call of it makes, itself included, counting each call
    site once (both arms of a conditional, a comprehension's body once). Calls nested in calls multiply: N functions
    that each call the one before three times make about 3^N. A function calls only functions defined before it
    (E200) or itself (E212, counted as one call)."""
    functions = program.functions()
    out: dict[str, int] = {}
    for name, f in functions.items():  # in source order: the callees' counts are known
        calls, stack = 0, [f.body, f.ret]
        while stack:
            node = stack.pop()
            if isinstance(node, A.Call):
                calls += out.get(node.func, 1)
            if isinstance(node, tuple):
                stack.extend(node)
            elif dataclasses.is_dataclass(node) and not isinstance(node, A.Loc):
                stack.extend(getattr(node, x.name) for x in dataclasses.fields(node))
        out[name] = 1 + calls
    return out


def costly_functions(program: A.Program, limit: int) -> list[str]:
    """The functions of `program`'s IndexTaskMap and SingleTaskMap statements one evaluation of which makes more than
    `limit` function calls (`calls_per_evaluation`), one text each, e.g. "'place' (defined at line 32, of
    IndexTaskMap t): about 4.2e+11 calls"; check's W310 and AutoGuide's timeout feedback name them so."""
    calls, functions = calls_per_evaluation(program), program.functions()
    out = []
    for s in program.statements:
        n = calls.get(s.func.name, 0) if isinstance(s, (A.IndexTaskMapStmt, A.SingleTaskMapStmt)) else 0
        if n > limit:
            tasks = ",".join(t.name for t in s.tasks.names) if s.tasks.names else s.tasks.kind or "*"
            count = f"about {n:.1e}" if n < 10**100 else "more than 1e+100"
            out.append(f"'{s.func.name}' (defined at line {functions[s.func.name].loc.line}, of "
                       f"{type(s).__name__.removesuffix('Stmt')} {tasks}): {count} calls")
    return out


def app_mapped(app: AppDescription, program: A.Program, task: str) -> bool:
    """Whether the program's own mapper, kept (`keep_app_mapper`), may map `task` under the DSL mapper `program`:
    the compiled mapper hands it every task no statement names (`Program.named_tasks`; a `*` names none). It maps
    them all where it replaced Legion's default mapper, else those launched with its mapper ID."""
    return bool(app.keep_app_mapper) and task not in program.named_tasks()


class Evaluator:
    """Evaluates a policy on a described machine (and application).

    Args:
        program: the parsed policy (it should pass `check`; the evaluator still reports what it meets at run time).
        machine: the machine the mapper runs on; None for the selections alone (`task_kinds`, `memories`,
            `layout`, `layout_sources`): the load phase needs a machine and is skipped.
        app: the application; without it, every task is assumed to have a variant of every kind and no region
            requirement is known.
        stream: where `print` output goes besides `printed` (None: nowhere).
        budget: the most expression evaluations in all (None: no limit); beyond it, EvaluationLimit.
    Raises:
        DslRuntimeError: an error of the load phase (a global assignment or top-level print).
        EvaluationLimit: the budget is spent.
    """

    def __init__(self, program: A.Program, machine: MachineDescription | None, app: AppDescription | None = None,
                 stream: TextIO | None = None, budget: int | None = None):
        self.steps_left = budget
        self.program = program
        self.machine = machine
        self.app = app
        self.stream = stream
        self.printed: list[str] = []
        self.functions = program.functions()
        self.globals: dict[str, Any] = {}
        self._frames: list[str] = []
        self._stmts = [(pos, s) for pos, s in enumerate(program.statements) if isinstance(s, A.MAPPING_STATEMENTS)]
        for s in program.statements if machine is not None else ():
            if isinstance(s, A.Assign):
                self.globals[s.name] = self._eval(s.value, None)
            elif isinstance(s, A.Print):
                self._print(s, None)

    # ------------------------------------------------------------------------------------------------ decisions

    def task_info(self, task: str) -> TaskInfo | None:
        """The application's description of `task` (None without an application description); for the top-level
        task that a benchmark's description names only as its tasks' parent, `AppDescription.top_level`.

        Raises MapperoptError for a task the application does not have."""
        if self.app is None:
            return None
        info = self.app.task(task)
        top = self.app.top_level
        if info is None and top is not None and top.name == task:
            return top  # a benchmark's description names it only as the parent of its tasks
        if info is None:
            raise MapperoptError(f"application '{self.app.app}' has no task '{task}'",
                                 hint="tasks: " + ", ".join(self.app.task_names))
        return info

    def task_kinds(self, task: str) -> list[str]:
        """The effective processor-kind list of `task` (§7.1); empty when no Task statement applies."""
        cands = []
        for pos, s in self._stmts:
            if isinstance(s, A.TaskStmt):
                for rank, tok in task_matches(s.tasks, task):
                    cands.append(((rank,), (tok,), pos, s))
        return _dedup(k.name for s in by_precedence(cands) for k in s.kinds)

    def task_kind(self, task: str) -> str:
        """The processor kind `task` runs on (§7.1). Raises DslRuntimeError R404 when no kind is usable."""
        info = self.task_info(task)
        listed = self.task_kinds(task)
        variants = info.variants if info is not None else None
        for kind in listed or DEFAULT_KIND_RANKING:
            if kind in ABSENT_KINDS or self.machine.count(kind, 0) == 0:
                continue
            if variants is None or kind in variants:
                return kind
        counts = ", ".join(f"{k} {self.machine.count(k, 0)}" for k in _dedup([*listed, *(variants or ())]))
        raise DslRuntimeError(
            "R404",
            f"no usable processor kind for task '{task}': tried {', '.join(listed or DEFAULT_KIND_RANKING)}; "
            f"variants {', '.join(variants) if variants else 'unknown'}; processors per node: {counts}",
        )

    def _region_candidates(self, stmt_type, task: str, req_index: int, names: tuple[str, ...], third):
        cands = []
        for pos, s in self._stmts:
            if not isinstance(s, stmt_type):
                continue
            region = region_matches(s.region, req_index, names)
            if region is None:
                continue
            third_rank = third(s)
            if third_rank is None:
                continue
            for rank, tok in task_matches(s.tasks, task):
                third_tok = "*" if isinstance(third_rank[1], A.Star) else third_rank[1].name
                cands.append(((rank, region[0], third_rank[0]), (tok, region[1], third_tok), pos, s))
        return by_precedence(cands)

    def _names(self, task: str, req_index: int) -> tuple[str, ...]:
        info = self.task_info(task)
        if info is None or req_index >= len(info.regions):
            return ()
        return info.regions[req_index].names

    def region_statements(self, task: str, req_index: int, proc_kind: str) -> list[A.RegionStmt]:
        """The Region statements that apply to requirement `req_index` of `task` run on `proc_kind`, highest
        precedence first (§6)."""
        names = self._names(task, req_index)

        def third(s):
            if isinstance(s.proc, A.Star):
                return 0, s.proc
            return (1, s.proc) if s.proc.name == proc_kind else None

        return self._region_candidates(A.RegionStmt, task, req_index, names, third)

    def memories(self, task: str, req_index: int, proc_kind: str) -> list[str]:
        """The effective memory-kind list of requirement `req_index` of `task` run on `proc_kind` (§7.2); empty when no
        Region statement applies (the default then applies: FBMEM on GPUs, SYSMEM otherwise)."""
        return _dedup(m.name for s in self.region_statements(task, req_index, proc_kind) for m in s.memories)

    def memory(self, task: str, req_index: int, proc: Proc) -> str:
        """The memory kind chosen for requirement `req_index` of `task` running on `proc` (§7.2): the first kind of the
        effective list that is visible from `proc` ("VIRTUAL" for a virtual mapping) and, in a discovered program,
        that the variant's layout constraint allows (the one it requires, with no Region statement). Raises R403 when
        none is."""
        info = self.task_info(task)
        if info is not None and info.inner:
            return "VIRTUAL"
        req = next((r for r in info.regions if r.index == req_index), None) if info else None
        needs = dict(req.required_memory).get(proc.kind) if req and self.app and self.app.discovered_as else None
        listed = self.memories(task, req_index, proc.kind)
        if not listed:
            return needs or ("FBMEM" if proc.kind == "GPU" else "SYSMEM")
        reasons = []
        for kind in listed:
            if kind == "VIRTUAL":
                if info is None or not info.leaf:
                    return kind
                reasons.append("VIRTUAL: the variant is a leaf task")
            elif needs and kind != needs:
                reasons.append(f"{kind}: the variant's layout constraint needs {needs}")
            elif self.machine.visible(kind, proc.kind, proc.node, proc.index):
                return kind
            elif not self.machine.memories_of(kind):
                reasons.append(f"{kind}: absent")
            else:
                reasons.append(f"{kind}: not visible from {proc}")
        names = self._names(task, req_index)
        raise DslRuntimeError(
            "R403",
            f"no memory of the list {', '.join(listed)} can hold requirement {req_index}"
            f"{' (' + ', '.join(names) + ')' if names else ''} of task '{task}': {'; '.join(reasons)}",
        )

    def layout(self, task: str, req_index: int, proc_kind: str, memory: str) -> dict:
        """The layout record (`order`, `dims`, `align`, `exact`, `compact`) of the instance of requirement `req_index`
        of `task` on `proc_kind` in `memory` (§7.3)."""
        return self.layout_sources(task, req_index, proc_kind, memory)[0]

    def layout_sources(self, task: str, req_index: int, proc_kind: str,
                       memory: str) -> tuple[dict, dict[str, A.LayoutStmt]]:
        """`layout(...)` and, for each aspect of it that a Layout statement decides (`order`, `dims`, ...), that
        statement; an aspect missing from the second dict has its default value (for a discovered program, the
        dimension order, interleaving and alignment its variant fixes, `RegionArg.layout`, `interleave` and
        `required_align`, where it fixes them)."""
        names = self._names(task, req_index)

        def third(s):
            if isinstance(s.target, A.Star):
                return 0, s.target
            if s.target.name == memory:
                return 2, s.target
            return (1, s.target) if s.target.name == proc_kind else None

        stmts = self._region_candidates(A.LayoutStmt, task, req_index, names, third)
        out = dict(DEFAULT_LAYOUT)
        decided: dict[str, A.LayoutStmt] = {}
        for s in stmts:
            for c in s.constraints:
                aspect, value = {
                    "SOA": ("order", "SOA"), "AOS": ("order", "AOS"), "C_order": ("dims", "C"),
                    "F_order": ("dims", "F"), "No_Align": ("align", None), "Exact": ("exact", True),
                    "Compact": ("compact", True),
                }.get(c.name, ("align", None))
                if c.name == "Align":
                    value = {"op": c.op, "bytes": c.value}
                if aspect not in decided:
                    decided[aspect] = s
                    out[aspect] = value
        # In a user's program (the LD_PRELOAD shim) an undecided dimension order or interleaving follows the variant's
        # constraints; so does the alignment unless a statement gives one (No_Align keeps the variant's).
        info = self.task_info(task) if self.app is not None and self.app.discovered_as else None
        req = next((r for r in info.regions if r.index == req_index), None) if info else None
        needed = [{"op": op, "bytes": n} for k, op, n in (req.required_align if req else ()) if k == proc_kind]
        if needed and out["align"] is None:
            out["align"] = needed[0]
        if req is not None and (not req.layout_kinds or proc_kind in req.layout_kinds):
            if "dims" not in decided and req.layout:
                out["dims"] = req.layout[0]
            if "order" not in decided and req.interleave:
                out["order"] = req.interleave
        return out, decided

    def collect(self, task: str) -> list[int]:
        """Read-only requirement indices of `task` selected by CollectMemory statements (§7.5)."""
        info = self.task_info(task)
        if info is None:
            return []
        out = set()
        for s in self.collect_statements(task):
            for r in info.regions:
                if r.privilege == "read_only" and region_matches(s.region, r.index, r.names) is not None:
                    out.add(r.index)
        return sorted(out)

    def collect_statements(self, task: str) -> list[A.CollectMemoryStmt]:
        """The CollectMemory statements whose task selector selects `task`, in program order."""
        return [s for _, s in self._stmts if isinstance(s, A.CollectMemoryStmt) and task_matches(s.tasks, task)]

    def collected(self, task: str) -> list[int]:
        """The indices of `collect(task)` that the mapper leaves untracked: not those on fields that a task of the
        application reduces into (note R457, §7.5)."""
        return [i for i in self.collect(task) if not self.reducers(task, i)]

    def reducers(self, task: str, index: int) -> tuple[str, ...]:
        """The tasks of the application, in its order, that reduce into fields of requirement `index` of `task` (the
        same root region), for which CollectMemory leaves that requirement tracked (note R457); () if none does."""
        r = self.task_info(task).regions[index]
        parents = {n.name: n.parent for n in self.app.region_tree} if self.app is not None else {}
        root = self._root(r.names, parents)
        return tuple(dict.fromkeys(t.name for t in self.app.tasks for q in t.regions if q.privilege == "reduce"
                                   and self._root(q.names, parents) == root and set(q.fields) & set(r.fields)))

    @staticmethod
    def _root(names: tuple[str, ...], parents: dict[str, str | None]) -> str | None:
        """The root region of a requirement's name chain in the region tree `parents` (child -> parent), or its last
        name where the tree does not describe it."""
        name = names[0] if names else None
        while name is not None and parents.get(name) is not None:
            name = parents[name]
        return name if name in parents else (names[-1] if names else None)

    def instance_limit(self, task: str, proc_kind: str) -> int | None:
        """The InstanceLimit N that applies to `task` on `proc_kind` (§7.4), or None."""
        stmt = self.instance_limit_statement(task, proc_kind)
        return stmt.count if stmt else None

    def instance_limit_statement(self, task: str, proc_kind: str) -> A.InstanceLimitStmt | None:
        """The InstanceLimit statement that applies to `task` on `proc_kind` (§7.4), or None."""
        cands = []
        for pos, s in self._stmts:
            if not isinstance(s, A.InstanceLimitStmt):
                continue
            kind = s.proc.name if isinstance(s.proc, A.Kind) else "*"
            if kind not in ("*", proc_kind):
                continue
            for rank, tok in task_matches(s.tasks, task):
                cands.append(((rank, int(kind != "*")), (tok, kind), pos, s))
        stmts = by_precedence(cands)
        return stmts[0] if stmts else None

    def map_statement(self, task: str, index_launch: bool,
                      kind: str | None = None) -> A.IndexTaskMapStmt | A.SingleTaskMapStmt | None:
        """The IndexTaskMap (index launch) or SingleTaskMap (single task) statement that places `task` (§7.6, §7.7).
        A kind selector (`IndexTaskMap GPU f;`) needs the kind `task` runs on: `kind` where the caller knows it (a
        run's profile; an evaluator without a machine cannot tell it), else `task_kind`."""
        stmt_type = A.IndexTaskMapStmt if index_launch else A.SingleTaskMapStmt
        if kind is None and any(isinstance(s, stmt_type) and s.tasks.kind for _, s in self._stmts):
            kind = self.task_kind(task)
        cands = [((rank,), (tok,), pos, s) for pos, s in self._stmts if isinstance(s, stmt_type)
                 for rank, tok in task_matches(s.tasks, task, kind)]
        stmts = by_precedence(cands)
        return stmts[0] if stmts else None

    def place(self, task: str, point: tuple[int, ...] | None, domain: tuple[int, ...] | None,
              parent_proc: dict | None = None) -> Proc | ProcSet | None:
        """Evaluate the mapping function for one point (index launch) or a single task (`point` None).

        Returns the processor or processor set the function returns, or None when no map statement applies.
        Raises DslRuntimeError (R400-R410) with the function, task and point in the message.
        """
        kind = self.task_kind(task)
        stmt = self.map_statement(task, point is not None)
        if stmt is None:
            return None
        ipoint, ispace = (tuple(point), tuple(domain)) if point is not None else ((0,), (1,))
        info = self.task_info(task)
        parent_name = info.parent if info is not None and info.parent else "parent"
        if parent_proc is None:
            # The top-level task runs on the first CPU of node 0.
            pproc = Proc("CPU", 0, 0)
        else:
            pproc = Proc(parent_proc["kind"], parent_proc["node"], parent_proc["index"])
        parent = TaskValue(parent_name, (0,), (1,), None, pproc)
        if info is not None and info == self.app.top_level:
            parent = None  # R406 where the function reads task.parent, as at run time
        tv = TaskValue(task, ipoint, ispace, parent, None)
        if point is not None:
            context = f"IndexTaskMap of task '{task}', point {fmt_tuple(ipoint)}, launch domain {fmt_tuple(ispace)}"
        else:
            context = f"SingleTaskMap of task '{task}'"
        try:
            result = self._map_call(stmt, tv)
        except DslRuntimeError as err:
            # "...; in function 'f' at p.dsl:3:5, IndexTaskMap of task ..." (dsl-reference.md §11.1)
            raise err.with_context(context, sep=", " if err.loc is not None else "; ") from None
        procs = result.procs if isinstance(result, ProcSet) else (result,) if isinstance(result, Proc) else None
        if procs is None:
            raise DslRuntimeError(
                "R410", f"mapping function '{stmt.func.name}' returned {article(type_name(result))} ({show(result)}), "
                        f"not a processor or processor set; {context}", stmt.loc)
        if procs[0].kind != kind:
            raise DslRuntimeError(
                "R402", f"mapping function '{stmt.func.name}' returned {show(result)}, a {procs[0].kind} processor, "
                        f"but task '{task}' runs on {kind}; {context}", stmt.loc)
        return result

    def _map_call(self, stmt, tv: TaskValue):
        if isinstance(stmt, A.IndexTaskMapStmt) and stmt.machine is not None:
            # The older three-operand form (§7.6): m[*f(task.ipoint, task.ispace, m)].
            model = self._lookup(stmt.machine.name, None, stmt.machine.loc)
            if not isinstance(model, MachineModel):
                raise DslRuntimeError(
                    "R408", f"'{stmt.machine.name}' is {article(type_name(model))}, not a machine model",
                    stmt.machine.loc)
            r = self._call(stmt.func.name, [tv.ipoint, tv.ispace, model], stmt.func.loc)
            n = len(model.size)
            if _is_int(r) and n != 1:
                raise DslRuntimeError("R408", f"'{stmt.func.name}' returned the int {r}: one index for the "
                                              f"{n}-dimensional machine model '{stmt.machine.name}' (size "
                                              f"{show(tuple(model.size))}), which needs {n}", stmt.func.loc)
            r = (r,) if _is_int(r) else r
            if not isinstance(r, tuple) or len(r) != n:
                raise DslRuntimeError("R408", f"'{stmt.func.name}' returned {show(r)}; expected "
                                              f"{'an int or ' if n == 1 else ''}a tuple of {n} ints", stmt.func.loc)
            return model.index(list(r))
        return self._call(stmt.func.name, [tv], stmt.func.loc)

    def decide(self, task: str, point: tuple[int, ...] | None, domain: tuple[int, ...] | None,
               parent_proc: dict | None = None) -> dict:
        """The placement-trace record (docs/compiler.md) of one decision.

        Args:
            task: task name.
            point: the launch point relative to the domain's lower corner, or None for a single task.
            domain: the launch domain's extents, or None for a single task.
            parent_proc: {"kind", "node", "index"} of the parent task's processor (default: CPU 0 of node 0).
        Returns:
            {"task", "point", "domain", "proc": {"kind", "node", "index"}, "regions": [{"index", "name", "memory",
            "layout"}], "collect": [indices], "limited": bool, "placed_by": "map"|"default"}. When no map statement
            applies (`placed_by` "default"), `proc.node`/`proc.index` are None: Legion's default mapping picks the
            processor when the task runs, which this evaluator cannot predict (the compiled mapper's trace lists the
            processors it offered, `candidates`). For a processor set, the set's first processor (the one the mapper
            picks for a task when none of the set is busy; the later points of a launch go to the next members).
            `layout` is None for a virtual mapping.
        Raises:
            DslRuntimeError: R400-R410 (see dsl-reference.md §11.5).
            MapperoptError: the application has no such task.
        """
        return self.record(task, point, domain, self.place(task, point, domain, parent_proc))

    def record(self, task: str, point: tuple[int, ...] | None, domain: tuple[int, ...] | None,
               placed: Proc | ProcSet | None) -> dict:
        """`decide`'s record of a decision whose mapping function returned `placed` (what `place` returns; None: no
        map statement applies). Raises as `decide`, R400-R410 aside."""
        kind = self.task_kind(task)
        if placed is None:
            proc_json = {"kind": kind, "node": None, "index": None}
            proc = Proc(kind, 0, 0)
        else:
            proc = placed.procs[0] if isinstance(placed, ProcSet) else placed
            proc_json = proc.to_json()
        info = self.task_info(task)
        regions = []
        for req in info.regions if info is not None else ():
            memory = self.memory(task, req.index, proc)
            layout = None if memory == "VIRTUAL" else self.layout(task, req.index, kind, memory)
            regions.append({"index": req.index, "name": req.name, "memory": memory, "layout": layout})
        return {
            "task": task,
            "point": None if point is None else list(point),
            "domain": None if domain is None else list(domain),
            "proc": proc_json,
            "regions": regions,
            "collect": self.collected(task),
            "limited": self.instance_limit(task, kind) is not None,
            "placed_by": "default" if placed is None else "map",
        }

    # ------------------------------------------------------------------------------------------------ expressions

    def evaluate(self, expr: A.Expr) -> Any:
        """Value of `expr` in the global scope (after the load phase): an int, bool, tuple, `MachineModel`, `Proc`,
        `ProcSet` or `KindValue`. Raises DslRuntimeError."""
        return self._eval(expr, None)

    def call(self, name: str, args: list) -> Any:
        """Call the user function `name` with DSL values (e.g. a `TaskValue`). Raises DslRuntimeError."""
        return self._call(name, args, None)

    def _call(self, name: str, args: list, loc: A.Loc | None) -> Any:
        fn = self.functions.get(name)
        if fn is None:
            raise DslRuntimeError("R408", f"undefined function '{name}'", loc)
        if name in self._frames:
            raise DslRuntimeError("R408", f"recursive call of '{name}'", loc)
        if len(args) != len(fn.params):
            raise DslRuntimeError("R408", f"'{name}' takes {len(fn.params)} argument(s), {len(args)} given", loc)
        for p, a in zip(fn.params, args):
            if not _PARAM_CHECK[p.type](a):
                raise DslRuntimeError("R408", f"type error: parameter '{p.name}' of '{name}' is {p.type}, the "
                                              f"argument is {article(type_name(a))} ({show(a)})", loc)
        scope = _Scope({p.name: a for p, a in zip(fn.params, args)})
        self._frames.append(name)
        try:
            for s in fn.body:
                if isinstance(s, A.Assign):
                    scope.names[s.name] = self._eval(s.value, scope)
                else:
                    self._print(s, scope)
            return self._eval(fn.ret.value, scope)
        finally:
            self._frames.pop()

    def _print(self, s: A.Print, scope: _Scope | None):
        values = [show(self._eval(a, scope)) for a in s.args]
        parts = s.fmt.split("{}")
        if len(parts) != len(values) + 1:
            raise DslRuntimeError("R408", f"print has {len(parts) - 1} '{{}}' but {len(values)} argument(s)", s.loc)
        text = parts[0] + "".join(v + p for v, p in zip(values, parts[1:]))
        self.printed.append(text)
        if self.stream is not None:
            print(text, file=self.stream, flush=True)

    def _lookup(self, name: str, scope: _Scope | None, loc: A.Loc) -> Any:
        if scope is not None and name in scope.names:
            return scope.names[name]
        if name in self.globals:
            return self.globals[name]
        what = "a function, not a value" if name in self.functions else "undefined"
        raise DslRuntimeError("R408", f"'{name}' is {what}", loc)

    def _eval(self, e, scope: _Scope | None) -> Any:
        if self.steps_left is not None:
            self.steps_left -= 1
            if self.steps_left < 0:
                raise EvaluationLimit("evaluation stopped: the step budget is spent (calls that multiply, e.g. "
                                      "functions that each call the previous one twice)")
        try:
            return _DISPATCH[type(e)](self, e, scope)
        except DslRuntimeError as err:
            if err.loc is not None:
                raise
            where = f"in function '{self._frames[-1]}'" if self._frames else "at top level"
            raise err.with_context(f"{where} at {e.loc}", e.loc) from None

    def _e_int(self, e: A.IntLit, scope):
        return e.value

    def _e_bool(self, e: A.BoolLit, scope):
        return e.value

    def _e_kind(self, e: A.KindLit, scope):
        return KindValue(e.kind)

    def _e_name(self, e: A.Name, scope):
        return self._lookup(e.name, scope, e.loc)

    def _e_call(self, e: A.Call, scope):
        return self._call(e.func, [self._eval(a, scope) for a in e.args], e.loc)

    def _e_machine(self, e: A.MachineLit, scope):
        try:
            per_node = self.machine.per_node(e.kind)
        except MapperoptError as err:
            _fail("R409", f"Machine({e.kind}): {err.message}")
        if self.machine.nodes * per_node > MAX_PROCS:
            _fail("R409", f"Machine({e.kind}): at most {MAX_PROCS} processors of one kind are supported, not "
                          f"{self.machine.nodes} x {per_node}")
        return MachineModel(e.kind, (self.machine.nodes, per_node))

    def _e_tuple(self, e: A.TupleLit, scope):
        out: list[int] = []
        for item in e.items:
            if isinstance(item, A.Unpack):
                out.extend(self._unpack(item, scope))
                if len(out) > MAX_TUPLE:
                    _fail("R408", f"a tuple has at most {MAX_TUPLE} elements, not {len(out)}")
            else:
                v = self._eval(item, scope)
                if not _is_int(v):
                    _fail("R408", f"type error: a tuple element must be an int, not {article(type_name(v))}")
                out.append(v)
        return tuple(out)

    def _unpack(self, item: A.Unpack, scope) -> tuple:
        v = self._eval(item.value, scope)
        if not isinstance(v, tuple):
            _fail("R408", f"type error: '*' unpacks a tuple, not {article(type_name(v))}")
        return v

    def _e_comprehension(self, e: A.Comprehension, scope):
        it = self._eval(e.iterable, scope)
        if not isinstance(it, tuple):
            _fail("R408", f"type error: 'for {e.var} in' needs a tuple, not {article(type_name(it))}")
        out = []
        for x in it:
            inner = _Scope({**(scope.names if scope else {}), e.var: x})
            v = self._eval(e.expr, inner)
            if not _is_int(v):
                _fail("R408", f"type error: a tuple comprehension must produce ints, not {article(type_name(v))}")
            out.append(v)
        return tuple(out)

    def _e_unary(self, e: A.Unary, scope):
        v = self._eval(e.operand, scope)
        if e.op == "!":
            if type(v) is not bool:
                _fail("R408", f"type error: operator '!' cannot be applied to {type_name(v)}")
            return not v
        if _is_int(v):
            return _check_int(-v)
        if isinstance(v, tuple):
            return tuple(_check_int(-x) for x in v)
        _fail("R408", f"type error: operator '-' cannot be applied to {type_name(v)}")

    def _e_binary(self, e: A.Binary, scope):
        op = e.op
        a = self._eval(e.left, scope)
        if op in ("&&", "||"):
            if type(a) is not bool:
                _fail("R408", f"type error: operator '{op}' cannot be applied to {type_name(a)}")
            if (op == "&&" and not a) or (op == "||" and a):
                return a
            b = self._eval(e.right, scope)
            if type(b) is not bool:
                _fail("R408", f"type error: operator '{op}' cannot be applied to {type_name(b)}")
            return b
        b = self._eval(e.right, scope)
        if op in ("==", "!="):
            if type_name(a) != type_name(b) or type_name(a) not in ("int", "bool", "tuple"):
                _fail("R408", f"type error: operator '{op}' cannot be applied to {type_name(a)} and {type_name(b)}")
            return (a == b) == (op == "==")
        if op in ("<", "<=", ">", ">="):
            if not (_is_int(a) and _is_int(b)):
                _fail("R408", f"type error: operator '{op}' cannot be applied to {type_name(a)} and {type_name(b)}")
            return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
        if _is_int(a) and _is_int(b):
            return int_op(op, a, b)
        if isinstance(a, tuple) and isinstance(b, tuple):
            if len(a) != len(b):
                _fail("R408", f"length mismatch: {show(a)} {op} {show(b)}")
            return tuple(int_op(op, x, y) for x, y in zip(a, b))
        if isinstance(a, tuple) and _is_int(b):
            return tuple(int_op(op, x, b) for x in a)
        if _is_int(a) and isinstance(b, tuple):
            return tuple(int_op(op, a, y) for y in b)
        _fail("R408", f"type error: operator '{op}' cannot be applied to {type_name(a)} and {type_name(b)}")

    def _e_ternary(self, e: A.Ternary, scope):
        c = self._eval(e.cond, scope)
        if type(c) is not bool:
            _fail("R408", f"type error: the condition of '?' must be a bool, not {article(type_name(c))}")
        return self._eval(e.then if c else e.orelse, scope)

    def _e_member(self, e: A.Member, scope):
        v = self._eval(e.obj, scope)
        name = e.name
        if isinstance(v, (tuple, MachineModel)) and name in ("size", "volume", "len"):
            size = v.size if isinstance(v, MachineModel) else v
            if name == "size":
                return size
            if name == "len":
                return len(size)
            vol = 1
            for s in size:
                vol = _check_int(vol * s)
            return vol
        if isinstance(v, TaskValue) and name in ("ipoint", "ispace"):
            return getattr(v, name)
        if isinstance(v, TaskValue) and name == "parent":
            if v.parent is None:
                _fail("R406", f"task '{v.name}' has no parent (it is the top-level task)")
            return v.parent
        _fail("R408", f"type error: {article(type_name(v))} has no property '{name}'")

    def _e_method(self, e: A.MethodCall, scope):
        v = self._eval(e.obj, scope)
        args = [self._eval(a, scope) for a in e.args]
        name = e.name
        if isinstance(v, TaskValue) and name == "processor":
            if len(args) != 1 or not isinstance(args[0], MachineModel):
                _fail("R408", "type error: processor(m) takes one machine model")
            if v.proc is None:
                _fail("R406", f"task '{v.name}' is being mapped and has no processor yet; "
                              "use task.parent.processor(m)")
            return args[0].coords_of(v.proc)
        if isinstance(v, Proc) and name == "has":
            return self._has(args, [v])
        if isinstance(v, MachineModel) and name in _MACHINE_METHODS:
            types = _MACHINE_METHODS[name]
            if len(args) != len(types) or any(type_name(a) != t for a, t in zip(args, types)):
                _fail("R408", f"type error: {name} takes ({', '.join(types)}), given "
                              f"({', '.join(type_name(a) for a in args)})")
            if name == "has":
                procs = [v.proc_at(idx) for idx in _all_indices(v.size)]
                return self._has(args, procs)
            return getattr(v, name)(*args)
        _fail("R408", f"type error: {article(type_name(v))} has no method '{name}'")

    def _has(self, args, procs: list[Proc]) -> bool:
        if len(args) != 1 or not isinstance(args[0], KindValue):
            _fail("R408", "type error: has(M) takes one memory kind")
        mem = args[0].name
        return bool(procs) and all(self.machine.visible(mem, p.kind, p.node, p.index) for p in procs)

    def _e_index(self, e: A.Index, scope):
        v = self._eval(e.obj, scope)
        items: list[int | None] = []
        for item in e.items:
            if isinstance(item, A.Wildcard):
                items.append(None)
            elif isinstance(item, A.Unpack):
                items.extend(self._unpack(item, scope))
            else:
                x = self._eval(item, scope)
                if not _is_int(x):
                    _fail("R408", f"type error: an index must be an int, not {article(type_name(x))}")
                items.append(x)
        if isinstance(v, MachineModel):
            return v.index(items)
        if isinstance(v, tuple):
            if len(items) != 1 or items[0] is None:
                _fail("R408", f"a tuple takes exactly one integer index, {len(items)} given")
            i = items[0]
            if not -len(v) <= i < len(v):
                _fail("R408", f"tuple index {i} out of range for {show(v)}")
            return v[i]
        _fail("R408", f"type error: {article(type_name(v))} cannot be indexed")

    def _e_slice(self, e: A.Slice, scope):
        v = self._eval(e.obj, scope)
        if isinstance(v, MachineModel):
            v = v.size
        if not isinstance(v, tuple):
            _fail("R408", f"type error: {article(type_name(v))} cannot be sliced")
        bounds = []
        for b in (e.lo, e.hi):
            x = None if b is None else self._eval(b, scope)
            if x is not None and not _is_int(x):
                _fail("R408", f"type error: a slice bound must be an int, not {article(type_name(x))}")
            bounds.append(x)
        return v[bounds[0] : bounds[1]]


def _all_indices(size: tuple[int, ...]):
    return itertools.product(*(range(s) for s in size))


_DISPATCH = {
    A.IntLit: Evaluator._e_int, A.BoolLit: Evaluator._e_bool, A.KindLit: Evaluator._e_kind,
    A.Name: Evaluator._e_name, A.Call: Evaluator._e_call, A.MachineLit: Evaluator._e_machine,
    A.TupleLit: Evaluator._e_tuple, A.Comprehension: Evaluator._e_comprehension, A.Unary: Evaluator._e_unary,
    A.Binary: Evaluator._e_binary, A.Ternary: Evaluator._e_ternary, A.Member: Evaluator._e_member,
    A.MethodCall: Evaluator._e_method, A.Index: Evaluator._e_index, A.Slice: Evaluator._e_slice,
}
