"""Structured edits: AutoGuide's suggestions as mechanical changes to a DSL program (docs/autoguide.md lists them).

An edit is data, `Edit(op, args)`; `apply_edits(program, edits)` applies a sequence of them to a `mapperopt.dsl`
AST and returns the new `Program`. Each op either changes the program or raises `MapperoptError` naming the edit,
so that an optimizer never believes a no-op was applied.

Selectors in edit arguments are written as in the DSL: a task is a name or "*", a region a name, an index (int)
or "*", a processor kind a kind or "*". "The statement with this selector" means, as in dsl-reference.md §6.4, a
statement with identical selector fields after splitting task lists (`Task a,b CPU;` is `Task a CPU;` plus
`Task b CPU;`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from mapperopt.dsl import ast as A
from mapperopt.errors import MapperoptError
from mapperopt.records import Edit

MACHINE_METHODS = ("merge", "split", "swap", "slice", "reverse", "balance_split", "auto_split", "greedy_split")


class _Skip(Exception):
    """Raised by an op that finds nothing to change."""


class Also(NamedTuple):
    """What an op returns when it changed other statements than the one its arguments name: the new statements, and
    one line per such change (for the notes of `apply_edits`)."""

    statements: list
    notes: tuple[str, ...]


# ------------------------------------------------------------------------------------------------------ selectors


def _task_sel(task: str) -> A.TaskSel:
    return A.TaskSel(None) if task == "*" else A.TaskSel((A.Ident(task),))


def _region_sel(region: str | int) -> A.RegionSel:
    if region == "*":
        return A.RegionSel()
    if isinstance(region, int) or (isinstance(region, str) and region.isdigit()):
        return A.RegionSel(index=int(region))
    return A.RegionSel(name=region)


def _kind_or_star(kind: str) -> A.Kind | A.Star:
    return A.Star() if kind == "*" else A.Kind(kind)


def _field_text(value: A.Kind | A.Star | A.RegionSel | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, A.Star):
        return "*"
    if isinstance(value, A.Kind):
        return value.name
    if value.is_wildcard:
        return "*"
    return value.name if value.name is not None else str(value.index)


def _names_task(stmt: Any, task: str | None) -> bool:
    """Whether the task field of `stmt` is `*` (task "*") or lists `task` (a name); any field for None."""
    if task is None:
        return True
    names = stmt.tasks.names
    return names is None if task == "*" else names is not None and task in [n.name for n in names]


def _split_out(statements: list, cls: type, task: str, same: Callable[[Any], bool]) -> tuple[list, list[int]]:
    """Separate `task` from the task lists of `cls` statements for which `same(stmt)` holds.

    Returns the new statement list and the positions of the statements whose selector is now exactly `task` (a
    list `Task a,b` becomes `Task b` plus, at the same position, `Task a`)."""
    out: list = []
    exact: list[int] = []
    for stmt in statements:
        if not isinstance(stmt, cls) or not same(stmt):
            out.append(stmt)
            continue
        names = stmt.tasks.names
        if task == "*":
            if names is None:
                exact.append(len(out))
            out.append(stmt)
            continue
        if names is None or task not in [n.name for n in names]:
            out.append(stmt)
            continue
        rest = tuple(n for n in names if n.name != task)
        if rest:
            out.append(dataclasses.replace(stmt, tasks=A.TaskSel(rest)))
        exact.append(len(out))
        out.append(dataclasses.replace(stmt, tasks=_task_sel(task)))
    return out, exact


def _set_exact(statements: list, exact: list[int], new: Any) -> list:
    """Replace the last statement at `exact` positions by `new` and drop the others (they were overridden or are
    replaced); append `new` when there is none."""
    if not exact:
        return statements + [new]
    keep = exact[-1]
    new = dataclasses.replace(new, loc=statements[keep].loc)  # comments stay with the replaced statement
    return [new if i == keep else s for i, s in enumerate(statements) if i == keep or i not in exact]


def _no_locs(node: Any) -> Any:
    """`node` with every position reset to `NOLOC` (for statements parsed from an edit's text, whose lines mean
    nothing in the program)."""
    if isinstance(node, tuple):
        return tuple(_no_locs(n) for n in node)
    if not dataclasses.is_dataclass(node) or isinstance(node, (A.Loc, type)):
        return node
    changes = {f.name: _no_locs(getattr(node, f.name)) for f in dataclasses.fields(node) if f.name != "loc"}
    return dataclasses.replace(node, **changes, loc=A.NOLOC)


# -------------------------------------------------------------------------------------------------------- the ops


def set_task_kinds(statements: list, task: str, kinds: Sequence[str]) -> list | Also:
    """Make `Task <task> <kinds>;` the only Task statement with that selector (replacing the last such statement in
    place, or appending one).

    A named task is also taken out of the IndexTaskMap and SingleTaskMap statements that name it and whose function
    returns processors of another kind than `kinds[0]` (check's E209 otherwise: the task now runs there first), and
    a statement left without tasks is dropped; the task gets Legion's default placement, or a map statement with `*`
    or its new kind as the selector. For `*`, which kind each task then runs on depends on its own Task statements
    and variants: the map statements are left as they are."""
    if not kinds:
        raise MapperoptError("an empty kind list")
    statements, exact = _split_out(statements, A.TaskStmt, task, lambda s: True)
    statements = _set_exact(statements, exact, A.TaskStmt(_task_sel(task), tuple(A.Kind(k) for k in kinds)))
    if task == "*":
        return statements
    from mapperopt.dsl.checker import map_kinds
    from mapperopt.dsl.formatter import format_statement

    out, notes = [], []
    for stmt, kind in zip(statements, map_kinds(A.Program(tuple(statements)))):
        if kind is None or kind == kinds[0] or not _names_task(stmt, task):  # only map statements have a kind
            out.append(stmt)
            continue
        rest = tuple(n for n in stmt.tasks.names if n.name != task)
        text = format_statement(stmt).rstrip(";")
        if rest:
            out.append(dataclasses.replace(stmt, tasks=A.TaskSel(rest)))
            text = f"the {text.split()[0]} statement of {stmt.func.name}"  # its task list may be long
        notes.append(f"{f'took {task} out of' if rest else 'dropped'} {text} (its processors are {kind}s)")
    return Also(out, tuple(notes)) if notes else out


def set_region_memory(statements: list, task: str, region: str | int, proc: str, memories: Sequence[str]) -> list:
    """Make `Region <task> <region> <proc> <memories>;` the only Region statement with that selector."""
    if not memories:
        raise MapperoptError("an empty memory list")
    region_text, proc_text = str(region), str(proc)
    statements, exact = _split_out(
        statements, A.RegionStmt, task,
        lambda s: _field_text(s.region) == region_text and _field_text(s.proc) == proc_text)
    new = A.RegionStmt(_task_sel(task), _region_sel(region), _kind_or_star(proc), tuple(A.Kind(m) for m in memories))
    return _set_exact(statements, exact, new)


def drop_layout_constraint(statements: list, constraint: str, task: str | None = None,
                           region: str | int | None = None, target: str | None = None) -> list:
    """Remove the constraint `constraint` (a word such as "C_order"; "Align" removes any alignment) from every
    Layout statement whose fields equal the given `task`/`region`/`target` (omitted: any). A statement left without
    constraints is removed."""
    out = []
    changed = False
    for stmt in statements:
        if (not isinstance(stmt, A.LayoutStmt) or not _names_task(stmt, task)
                or (region is not None and _field_text(stmt.region) != str(region))
                or (target is not None and _field_text(stmt.target) != target)):
            out.append(stmt)
            continue
        kept = tuple(c for c in stmt.constraints if c.name != constraint)
        changed |= len(kept) != len(stmt.constraints)
        if kept:
            out.append(dataclasses.replace(stmt, constraints=kept))
    if not changed:
        raise _Skip(f"no Layout statement with constraint {constraint!r} matches")
    return out


def set_layout_order(statements: list, order: str) -> list:
    """Make `order` ("C_order" or "F_order") every instance's dimension order: the other order becomes `order` in
    every Layout statement, and `Layout * * * <order>;` is appended unless a statement with selector `* * *` names
    `order` already (a mapper without any order gets F_order from the compiled mapper)."""
    orders = ("C_order", "F_order")
    if order not in orders:
        raise MapperoptError(f"order must be one of {', '.join(orders)}, got {order!r}")
    other = orders[order == "C_order"]
    out, changed, covered = [], False, False
    for stmt in statements:
        if isinstance(stmt, A.LayoutStmt):
            if any(c.name == other for c in stmt.constraints):
                stmt = dataclasses.replace(stmt, constraints=tuple(
                    A.Constraint(order) if c.name == other else c for c in stmt.constraints))
                changed = True
            covered |= (stmt.tasks.is_wildcard and _field_text(stmt.region) == "*"
                        and _field_text(stmt.target) == "*" and any(c.name == order for c in stmt.constraints))
        out.append(stmt)
    if not covered:
        out.append(A.LayoutStmt(A.TaskSel(None), A.RegionSel(), A.Star(), (A.Constraint(order),)))
        changed = True
    if not changed:
        raise _Skip(f"every instance already has {order}")
    return out


def drop_instance_limit(statements: list, task: str | None = None) -> list:
    """Remove the InstanceLimit statements of `task` (the task from a statement's list), or all of them."""
    out = []
    for stmt in statements:
        if not isinstance(stmt, A.InstanceLimitStmt):
            out.append(stmt)
        elif task is not None and stmt.tasks.names is not None and len(stmt.tasks.names) > 1:
            rest = tuple(n for n in stmt.tasks.names if n.name != task)
            out.append(dataclasses.replace(stmt, tasks=A.TaskSel(rest)))
        elif not _names_task(stmt, task):
            out.append(stmt)
    if out == statements:
        raise _Skip(f"no InstanceLimit statement{'' if task is None else f' for {task!r}'}")
    return out


def _machine_names(assigns: Sequence[A.Assign]) -> set[str]:
    names: set[str] = set()
    for a in assigns:
        if _is_machine(a.value, names):
            names.add(a.name)
    return names


def _is_machine(expr: Any, names: set[str]) -> bool:
    """Whether `expr` is a machine model: `Machine(K)`, a name bound to one, a transformation of one, or a ternary
    of two."""
    if isinstance(expr, A.MachineLit):
        return True
    if isinstance(expr, A.Name):
        return expr.name in names
    if isinstance(expr, A.MethodCall):
        return expr.name in MACHINE_METHODS and _is_machine(expr.obj, names)
    if isinstance(expr, A.Ternary):
        return _is_machine(expr.then, names) and _is_machine(expr.orelse, names)
    return False


def _is_wrapped(item: Any, obj: Any, dim: int | None) -> bool:
    if not (isinstance(item, A.Binary) and item.op == "%"):
        return False
    size = A.Member(obj, "size")
    return item.right == (size if dim is None else A.Index(size, (A.IntLit(dim),)))


def _wrap_index(node: A.Index) -> A.Index:
    items = node.items
    if len(items) == 1 and isinstance(items[0], A.Unpack):
        # m[*t] -> m[*(t % m.size)] (tuple % tuple is element-wise)
        if _is_wrapped(items[0].value, node.obj, None):
            return node
        return dataclasses.replace(node, items=(A.Unpack(A.Binary("%", items[0].value, A.Member(node.obj, "size"))),))
    if any(isinstance(i, A.Unpack) for i in items):
        raise MapperoptError("cannot wrap a machine index that mixes '*t' unpacking with other items")
    new = []
    for d, item in enumerate(items):
        if isinstance(item, A.Wildcard) or item == A.IntLit(0) or _is_wrapped(item, node.obj, d):
            new.append(item)
        else:
            new.append(A.Binary("%", item, A.Index(A.Member(node.obj, "size"), (A.IntLit(d),))))
    return dataclasses.replace(node, items=tuple(new))


def _rewrite(expr: Any, machines: set[str], count: list[int]) -> Any:
    """`expr` with every machine index wrapped; `count[0]` counts the indices rewritten."""
    if not dataclasses.is_dataclass(expr) or isinstance(expr, (A.Loc, type)):
        return expr
    changes = {}
    for f in dataclasses.fields(expr):
        if f.name == "loc":
            continue
        value = getattr(expr, f.name)
        if isinstance(value, tuple):
            new = tuple(_rewrite(v, machines, count) for v in value)
        else:
            new = _rewrite(value, machines, count)
        if new is not value:
            changes[f.name] = new
    expr = dataclasses.replace(expr, **changes) if changes else expr
    if isinstance(expr, A.Index) and _is_machine(expr.obj, machines):
        count[0] += 1
        return _wrap_index(expr)
    return expr


def wrap_index_modulo(statements: list, function: str) -> list:
    """In function `function`, reduce every machine index modulo the machine's size in that dimension:
    `m[e0, e1]` becomes `m[e0 % m.size[0], e1 % m.size[1]]` and `m[*t]` becomes `m[*(t % m.size)]`, so that no
    index can be out of range (R400). Wildcards, the literal 0 and indices already reduced this way are kept."""
    globals_ = _machine_names([s for s in statements if isinstance(s, A.Assign)])
    out = []
    found = False
    for stmt in statements:
        if isinstance(stmt, A.FuncDef) and stmt.name == function and not found:
            found = True
            machines = set(globals_)
            count = [0]
            body = []
            for b in stmt.body:
                if isinstance(b, A.Assign):
                    b = dataclasses.replace(b, value=_rewrite(b.value, machines, count))
                    if _is_machine(b.value, machines):
                        machines.add(b.name)
                    else:
                        machines.discard(b.name)
                body.append(b)
            ret = dataclasses.replace(stmt.ret, value=_rewrite(stmt.ret.value, machines, count))
            if not count[0]:
                raise _Skip(f"function {function!r} indexes no machine model")
            stmt = dataclasses.replace(stmt, body=tuple(body), ret=ret)
        out.append(stmt)
    if not found:
        raise MapperoptError(f"no function {function!r}")
    return out


def replace_index_map(statements: list, old: str, new: str | None, source: str | None = None) -> list:
    """Replace the index-mapping function `old` by `new` in every IndexTaskMap statement that uses it; `source`, the
    text of one `def new(...)`, is inserted before the first of them. `new` None removes those statements instead,
    leaving Legion's default placement for their tasks."""
    from mapperopt.dsl import parse

    uses = [i for i, s in enumerate(statements) if isinstance(s, A.IndexTaskMapStmt) and s.func.name == old]
    if not uses:
        raise _Skip(f"no IndexTaskMap statement uses {old!r}")
    if new is None:
        return [s for i, s in enumerate(statements) if i not in uses]
    statements = [dataclasses.replace(s, func=A.Ident(new), machine=None) if i in uses else s
                  for i, s in enumerate(statements)]
    defined = [i for i, s in enumerate(statements) if isinstance(s, A.FuncDef) and s.name == new]
    if source is not None:
        defs = [_no_locs(s) for s in parse(source, "<edit>").statements if isinstance(s, A.FuncDef)]
        if [d.name for d in defs] != [new]:
            raise MapperoptError(f"'source' must define exactly the function {new!r}")
        if defined:
            raise MapperoptError(f"function {new!r} is already defined")
        statements.insert(uses[0], defs[0])
    elif not defined or defined[0] > uses[0]:
        raise MapperoptError(f"function {new!r} is not defined before the first IndexTaskMap statement using {old!r}")
    return statements


def define_machine(statements: list, name: str, kind: str) -> list:
    """Insert the global `name = Machine(kind);` before the first statement."""
    if any(isinstance(s, A.Assign) and s.name == name for s in statements):
        raise _Skip(f"{name!r} is already assigned")
    return [A.Assign(name, A.MachineLit(kind))] + statements


def _rename(statements: list, fix: Callable[[Any], Any]) -> list:
    out = [fix(s) for s in statements]
    if out == statements:
        raise _Skip("nothing to rename")
    return out


def rename_task(statements: list, old: str, new: str) -> list:
    """Rename task `old` to `new` in every task selector."""

    def fix(stmt):
        names = getattr(getattr(stmt, "tasks", None), "names", None)
        if not names or old not in [n.name for n in names]:
            return stmt
        return dataclasses.replace(stmt, tasks=A.TaskSel(tuple(A.Ident(new) if n.name == old else n for n in names)))

    return _rename(statements, fix)


def rename_region(statements: list, old: str, new: str) -> list:
    """Rename region `old` to `new` in every region selector."""

    def fix(stmt):
        region = getattr(stmt, "region", None)
        if region is None or region.name != old:
            return stmt
        return dataclasses.replace(stmt, region=A.RegionSel(name=new))

    return _rename(statements, fix)


EDIT_OPS: dict[str, Callable[..., list]] = {
    "set_task_kinds": set_task_kinds,
    "set_region_memory": set_region_memory,
    "drop_layout_constraint": drop_layout_constraint,
    "set_layout_order": set_layout_order,
    "drop_instance_limit": drop_instance_limit,
    "wrap_index_modulo": wrap_index_modulo,
    "replace_index_map": replace_index_map,
    "define_machine": define_machine,
    "rename_task": rename_task,
    "rename_region": rename_region,
}


# Edits of the run's settings, not of the program (autoguide/capacity.py): `set_memory_size` {"option": "csize",
# "fsize" or "zsize", "mb": N} asks for the run's system, framebuffer or zero-copy memory to be N MiB.
SETTING_OPS = ("set_memory_size",)
MEMORY_OPTIONS = ("csize", "fsize", "zsize")


def program_edits(edits: Sequence[Edit]) -> list[Edit]:
    """The edits of `edits` that change the program (those `apply_edits` applies)."""
    return [e for e in edits if e.op not in SETTING_OPS]


def memory_settings(edits: Sequence[Edit]) -> dict[str, int]:
    """The memory sizes in MiB that the `set_memory_size` edits of `edits` ask for, by option ("csize", "fsize",
    "zsize"); the last edit for an option wins.

    Raises:
        MapperoptError: an edit names another option or a size that is not a whole number of MiB of at least 1.
    """
    out: dict[str, int] = {}
    for edit in edits:
        if edit.op != "set_memory_size":
            continue
        option, mb = edit.args.get("option"), edit.args.get("mb")
        if option not in MEMORY_OPTIONS or not isinstance(mb, int) or isinstance(mb, bool) or mb < 1:
            raise MapperoptError(f"edit {edit.to_json()}: needs option one of {', '.join(MEMORY_OPTIONS)} and mb a "
                                 f"whole number >= 1")
        out[option] = mb
    return out


def apply_edits(program: A.Program, edits: Sequence[Edit], notes: list[str] | None = None) -> A.Program:
    """Apply `edits` in order to `program`; `notes`, when given, gets one line per change an edit made beyond the
    statement its arguments name (e.g. "took t out of the IndexTaskMap statement of f (its processors are CPUs)"
    for `set_task_kinds`).

    Returns:
        a new `Program` (the input is not changed); comments are kept, `source` is emptied (the text no longer
        corresponds).

    Raises:
        MapperoptError: an edit has an unknown op or bad arguments, or cannot apply (e.g. names a function that
            does not exist, or changes nothing); the message names the edit.
    """
    statements = list(program.statements)
    for i, edit in enumerate(edits):
        op = EDIT_OPS.get(edit.op)
        where = f"edit #{i + 1} {edit.to_json()}"
        if edit.op in SETTING_OPS:
            raise MapperoptError(f"{where} changes a setting of the run, not the program",
                                 hint=f"run again with --{edit.args.get('option')} {edit.args.get('mb')}")
        if op is None:
            raise MapperoptError(f"{where}: unknown op {edit.op!r}", hint=f"ops are {', '.join(sorted(EDIT_OPS))}")
        try:
            out = op(statements, **edit.args)
        except _Skip as exc:
            raise MapperoptError(f"{where} does not apply: {exc}") from None
        except TypeError as exc:
            raise MapperoptError(f"{where}: bad arguments ({exc})") from None
        except MapperoptError as exc:
            raise MapperoptError(f"{where} does not apply: {exc.message}") from None
        if isinstance(out, Also):
            out, also = out
            if notes is not None:
                notes.extend(also)
        statements = out
    return dataclasses.replace(program, statements=tuple(statements), source="")


def apply_edits_to_text(text: str, edits: Sequence[Edit | dict], filename: str = "mapper.dsl") -> str:
    """The DSL text of `text` with `edits` applied, in canonical format (for previews, e.g. `mapperopt explain
    MAPPER.dsl --apply FEEDBACK.json`).

    Args:
        text: the mapper's DSL source.
        edits: `Edit`s, or their JSON form as in `feedback.json` (`{"op": ..., **args}`); edits of the run's
            settings (`SETTING_OPS`) are left out.
        filename: the name used in syntax errors.

    Raises:
        DslSyntaxError: `text` does not parse.
        MapperoptError: an edit cannot apply (named as in `apply_edits`).
    """
    from mapperopt.dsl import parse
    from mapperopt.dsl.formatter import format_program

    edits = [e if isinstance(e, Edit) else Edit.from_json(e) for e in edits]
    return format_program(apply_edits(parse(text, filename), program_edits(edits)))
