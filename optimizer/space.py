"""The one search space of mapping decisions (docs/tuning.md).

A `SearchSpace` is built from an application description (docs/dsl-reference.md §12) and a machine description (§6). It
is a list of `Decision`s, each a named discrete choice; a *point* is a dict `{decision name: value}` holding one value
per decision. Every point renders to a DSL program (`SearchSpace.render`), grouped into the six sections of the paper's
agent (`SearchSpace.sections`): task kinds, region memories (with CollectMemory), layouts, instance limits, index-task
maps and single-task maps. The offline optimizer walks the space with `neighbours` and maps arbitrary programs (a user's
start program, AutoGuide's edited programs) back into it with `project`; OpenTuner and random search can use `decisions`
and `random_point`.

Decision names and values (all values are JSON-serialisable; lists come back as tuples):

| name | value | DSL it renders to |
|---|---|---|
| `kinds/<task>` | tuple of processor kinds, first one preferred | `Task <task> K1,K2;` |
| `memory/<task>/<req>/<kind>` | tuple of memory kinds | `Region <task> <name or req> <kind> M1,M2;` |
| `layout/interleave` | `"SOA"` or `"AOS"` (absent when the application needs SOA) | one `Layout * * * ...;` for all |
| `layout/order` | `"F_order"` or `"C_order"` (absent when the application requires one) | (same line) |
| (none) | what variants require and the line above does not give (AOS, needs that differ) | `Layout <task> ...;` |
| `layout/align` | 0 (none), 64 or 128 bytes | (same line) |
| `limit/<task>` | 0 (none) or N ≥ 1 | `InstanceLimit <task> N;` |
| `collect/<task>` | bool | `CollectMemory <task> *;` |
| `index_map/<task>` | a pattern of `INDEX_PATTERNS` or `"default"` | a function from the library + `IndexTaskMap` |
| `single_map/<task>` | a pattern of `SINGLE_PATTERNS` or `"default"` | a function + `SingleTaskMap` |

Only decisions with at least two values on this machine exist: on a CPU-only machine there are no processor-kind or
memory decisions, because there is nothing to choose.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import random
import re
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from mapperopt.errors import MapperoptError

# The DefaultMapper's processor ranking (dsl-reference.md §7.1), restricted to kinds mapperopt's Legion build has.
KIND_RANKING = ("GPU", "CPU")
# The memory the DefaultMapper picks for a task on each processor kind (dsl-reference.md §7.2).
DEFAULT_MEMORY = {"GPU": "FBMEM", "CPU": "SYSMEM"}
# Memory kinds a decision may use: VIRTUAL is left out because it fails for every leaf variant.
SEARCH_MEMORIES = ("FBMEM", "ZCMEM", "SYSMEM", "SOCKMEM", "RDMEM")
ALIGNMENTS = (0, 64, 128)
INSTANCE_LIMITS = (0, 1, 4)
SECTIONS = ("task", "region", "layout", "instance_limit", "index_task_map", "single_task_map")

# Index-mapping library (dsl-reference.md §9). `lin` is the row-major linear position of the point in its launch domain,
# `clin` the column-major one, and `n` the domain's volume; `{m}` is the machine model of the task's processor kind.
# Every function stays in range for any number of points and processors.
INDEX_PATTERNS = {
    # contiguous blocks of points over all processors, nodes first (the experts' gpu_block)
    "block": ("block over all processors, nodes first",
              "q = lin * {m}.volume / n;\n    return {m}[q / {m}.size[1], q % {m}.size[1]];"),
    # round-robin over nodes first, then over the processors of each node (paper strategy S10)
    "cyclic": ("round-robin over nodes, then processors",
               "return {m}[lin % {m}.size[0], lin / {m}.size[0] % {m}.size[1]];"),
    # hierarchical: block over nodes, round-robin over the node's processors
    "hier": ("block over nodes, round-robin within a node",
             "return {m}[lin * {m}.size[0] / n, lin % {m}.size[1]];"),
    # block over nodes, everything of a node on its first processor (the experts' cpu_node_block)
    "node_first": ("block over nodes, first processor of each node",
                   "return {m}[lin * {m}.size[0] / n, 0];"),
    # blocks of two consecutive points dealt round-robin over all processors, nodes first
    "block_cyclic": ("blocks of 2 points round-robin over all processors",
                     "q = lin / 2 % {m}.volume;\n    return {m}[q / {m}.size[1], q % {m}.size[1]];"),
    # round-robin with the processors numbered node by node (cyclic numbers them processor index first)
    "cyclic_linear": ("round-robin over all processors, node by node",
                      "q = lin % {m}.volume;\n    return {m}[q / {m}.size[1], q % {m}.size[1]];"),
    # block over the column-major linearisation of the launch (the first point dimension varies fastest)
    "block_colmajor": ("block over all processors, column-major points",
                       "q = clin * {m}.volume / n;\n    return {m}[q / {m}.size[1], q % {m}.size[1]];"),
    # a processor grid shaped like the launch domain (2-D for 2-D launches, 3-D for 3-D), blocks of points
    "grid_block": ("block over a processor grid shaped by auto_split",
                   "g = {m}.merge(0, 1).auto_split(0, task.ispace);\n"
                   "    return g[*(task.ipoint * g.size / task.ispace)];"),
    "grid_cyclic": ("round-robin over a processor grid shaped by auto_split",
                    "g = {m}.merge(0, 1).auto_split(0, task.ispace);\n    return g[*(task.ipoint % g.size)];"),
    "grid_greedy": ("block over a processor grid shaped by greedy_split (Legion's heuristic)",
                    "g = {m}.merge(0, 1).greedy_split(0, task.ispace);\n"
                    "    return g[*(task.ipoint * g.size / task.ispace)];"),
    # two levels (the auto2d idiom): a grid of nodes over the launch, then a grid of each node's processors over
    # the node's share (rounded up: a node grid larger than the launch leaves a share of one), round-robin
    "auto2d": ("auto_split over nodes (block), then over a node's processors (cyclic)",
               "a = {m}.auto_split(0, task.ispace);\n"
               "    b = a.auto_split(a.len - 1, (task.ispace + a.size[:-1] - 1) / a.size[:-1]);\n"
               "    return b[*(task.ipoint * a.size[:-1] / task.ispace), *(task.ipoint % b.size[a.len - 1:])];"),
}
SINGLE_PATTERNS = {
    "first_proc": ("first processor of the first node", "return {m}[0, 0];"),
    "parent_proc": ("the processor the parent task runs on", "return {m}[*task.parent.processor({m})];"),
}
MACHINE_VARS = {"CPU": "mcpu", "GPU": "mgpu"}


@dataclass(frozen=True)
class Decision:
    """One discrete choice of the space.

    Attributes:
        name: the key in a point, e.g. "index_map/calculate_new_currents" (see the module table).
        choices: the allowed values, the default first (the default mapper's behaviour).
        group: what kind of decision it is ("kinds", "memory", "layout", "limit", "collect", "index_map",
            "single_map"); the offline optimizer orders its moves by group.
        task: the task it concerns, or None for program-wide decisions.
    """

    name: str
    choices: tuple
    group: str
    task: str | None = None

    @property
    def default(self) -> Any:
        return self.choices[0]


@dataclass(frozen=True)
class Move:
    """A change to a point: `changes` maps decision names to new values; `label` says what it does in words."""

    label: str
    changes: Mapping[str, Any]


def _as_json(obj: Any) -> dict:
    """A description object (with `to_json`) or its JSON dict, as a dict."""
    return obj.to_json() if hasattr(obj, "to_json") else dict(obj)


def _freeze(value: Any) -> Any:
    return tuple(_freeze(v) for v in value) if isinstance(value, list) else value


def _default_is(value: Any) -> str:
    return f"Legion's default mapper: {value}"


def _proc(proc: dict) -> str:
    """A trace record's processor as text: "GPU 0.1" (node 0, processor 1), or "CPU" where Legion's default places."""
    return proc["kind"] if proc["node"] is None else f"{proc['kind']} {proc['node']}.{proc['index']}"


def _q(name: str) -> str:
    """A task or region name in a selector (quoted when it is not an identifier)."""
    from mapperopt.dsl.formatter import selector_name

    return selector_name(name)


class SearchSpace:
    """The discrete mapping decisions of one application on one machine.

    Args:
        app: the application description (`AppDescription` or its docs/dsl-reference.md §12 JSON dict).
        machine: the machine description (`MachineDescription` or its §6 JSON dict).
        layouts: include the layout decisions (False for a user's program without a verification: a layout
            can make a program compute wrong numbers silently).
        start: the start program's DSL text. Where the run keeps the program's own mapper (`keep_app_mapper`) and
            the start names only some of the tasks, the search decides for those alone (`scope`): the programs it
            writes name no other, which the program's own mapper keeps mapping.

    Raises:
        ValueError: the machine has neither CPUs nor GPUs on node 0.
    """

    def __init__(self, app: Any, machine: Any, layouts: bool = True, start: str | None = None):
        self.app = _as_json(app)
        self.layouts = layouts
        self.machine = _as_json(machine)
        self.kinds = tuple(k for k in KIND_RANKING if self._per_node(k) > 0)
        if not self.kinds:
            raise ValueError("the machine description lists no CPU or GPU processor on node 0")
        self.tasks = {t["name"]: t for t in self.app["tasks"]}
        self.scope = self._kept_scope(start)
        # What "the default" of the search's notes is: Legion's default mapper, which is not the `default` reference
        # of a program that registers its own mapper (that reference runs the program's own).
        self.default_label = "Legion's default" if self.app.get("own_mapper") else "the default"
        self.memories = {k: self._visible_memories(k) for k in self.kinds}
        # The dimension order the application's variants require (the GEMMs' BLAS leaf: row-major tiles), and SOA
        # (`interleave`: the stencil's kernel rejects AOS): when the variants agree, the one global Layout line keeps
        # it, since the kernels reject any other. Otherwise a Layout statement per task or requirement (`pinned`)
        # gives each what its variant needs; so does AOS (a user's kernel that reads each element's fields as a
        # struct), which the global line would give every task, while Legion's default mapper gives it only these.
        # A requirement limited to some processor kinds (`layout_kinds`: the stencil's CPU kernel) counts when the
        # task can run on one of them here.
        needs = [(t["name"], r) for t in self.app["tasks"] if self.in_scope(t["name"]) for r in t["regions"]
                 if not r.get("layout_kinds") or set(r["layout_kinds"]) & set(self.usable_kinds(t["name"]))]
        orders = {r["layout"] for _, r in needs if r.get("layout")}
        interleaves = {r["interleave"] for _, r in needs if r.get("interleave")}
        self.required_order = orders.pop() if len(orders) == 1 else None
        self.required_interleave = "SOA" if interleaves == {"SOA"} else None
        self.pinned = self._pinned(needs)
        self.decisions = self._build()
        self.by_name = {d.name: d for d in self.decisions}
        self._placements: dict[tuple, list] = {}  # library placements on this machine, computed on demand

    # ------------------------------------------------------------------------------------------- construction

    def _kept_scope(self, start: str | None) -> tuple[str, ...] | None:
        """The tasks the search decides for, where the run keeps the program's own mapper and the start program
        `start` names some of the tasks but not every one below the top-level task (a task no statement names is
        that mapper's, `Program.named_tasks`); None otherwise (a start that does not parse too): every task."""
        from mapperopt.dsl.parser import parse

        if not self.app.get("keep_app_mapper") or start is None:
            return None
        try:
            named = parse(start, "<start>").named_tasks()
        except MapperoptError:
            return None
        scope = tuple(n for n in self.tasks if n in named)
        below = [n for n in self.tasks if not self.is_top_level(n)]
        return scope if scope and not set(below) <= set(scope) else None

    def in_scope(self, task: str) -> bool:
        """Whether the search decides for `task` (`scope`)."""
        return self.scope is None or task in self.scope

    def _pinned(self, needs: list[tuple[str, dict]]) -> list[str]:
        """`Layout` statements for the requirements whose variants need an interleaving or dimension order that the
        global Layout line does not keep (`required_interleave`, `required_order`), or an alignment (a user's
        program's `required_align`: the searched one must not replace it): one per task and processor kind when its
        requirements all need the same, else one per requirement."""
        aspects: dict[tuple, list[str]] = {}  # (task, requirement, processor kind or "*") -> constraints
        for task, r in needs:
            for kind in [k for k in r.get("layout_kinds") or ["*"] if k == "*" or k in self.usable_kinds(task)]:
                aspects[task, r["index"], kind] = [a for a in (self.required_interleave is None and r.get("interleave"),
                                                               self.required_order is None and r.get("layout")) if a]
        for task in filter(self.in_scope, self.tasks):
            for r in self.tasks[task]["regions"]:
                for kind, align in (r.get("required_align") or {}).items():
                    if kind in self.usable_kinds(task):
                        aspects.setdefault((task, r["index"], kind), []).append(f"Align{align['op']}{align['bytes']}")
        wanted: dict[tuple, list[int]] = {}
        for (task, index, kind), constraints in aspects.items():
            if constraints:
                wanted.setdefault((task, kind, " ".join(constraints)), []).append(index)
        out = []
        for (task, kind, aspects), reqs in wanted.items():
            every = len(reqs) == len(self.tasks[task]["regions"])
            for selector in ["*"] if every else [self._region_selector(task, i) for i in reqs]:
                out.append(f"Layout {_q(task)} {selector} {kind} {aspects};")
        return out

    def _visible_memories(self, kind: str) -> tuple[str, ...]:
        """Memory kinds with affinity to node 0's processors of `kind`, in `SEARCH_MEMORIES` order."""
        seen = {m["kind"] for m in self.machine.get("memories", [])
                if m.get("node", 0) == 0 and m.get("procs", {}).get(kind)}
        return tuple(m for m in SEARCH_MEMORIES if m in seen)

    def _per_node(self, kind: str) -> int:
        return (self.machine.get("processors", {}).get(kind) or [0])[0]

    def usable_kinds(self, task: str) -> tuple[str, ...]:
        """Processor kinds `task` has a variant for and the machine has, in the default ranking."""
        variants = self.tasks[task]["variants"]
        return tuple(k for k in self.kinds if k in variants)

    def is_top_level(self, task: str) -> bool:
        return not self.tasks[task].get("parent")

    def index_tasks(self) -> list[str]:
        """Tasks launched as index launches with a known launch domain (the ones an `IndexTaskMap` can place)."""
        return [n for n, t in self.tasks.items() if t["launch"] in ("index", "both") and t.get("domain")]

    def single_tasks(self) -> list[str]:
        """Tasks launched individually that are not the top-level task."""
        return [n for n, t in self.tasks.items() if t["launch"] in ("single", "both") and not self.is_top_level(n)]

    def _build(self) -> list[Decision]:
        out: list[Decision] = []
        for name in self.tasks:
            usable = self.usable_kinds(name)
            if len(usable) > 1 and not self.is_top_level(name):
                # Each usable kind first, the others after as a fallback.
                out.append(Decision(f"kinds/{name}", tuple((k, *[o for o in usable if o != k]) for k in usable),
                                    "kinds", name))
        for name, task in self.tasks.items():
            for kind in self.usable_kinds(name):
                choices = self._memory_choices(kind)
                if len(choices) > 1 and not task.get("inner"):
                    for req in task["regions"]:
                        out.append(Decision(f"memory/{name}/{req['index']}/{kind}", choices, "memory", name))
        if self.layouts:
            if self.required_interleave is None:
                out.append(Decision("layout/interleave", ("SOA", "AOS"), "layout"))
            if self.required_order is None:
                out.append(Decision("layout/order", ("F_order", "C_order"), "layout"))
            out.append(Decision("layout/align", ALIGNMENTS, "layout"))
        for name in self.index_tasks():
            out.append(Decision(f"index_map/{name}", ("default", *INDEX_PATTERNS), "index_map", name))
        for name in self.single_tasks():
            out.append(Decision(f"single_map/{name}", ("default", *SINGLE_PATTERNS), "single_map", name))
        for name in self.index_tasks():
            out.append(Decision(f"limit/{name}", INSTANCE_LIMITS, "limit", name))
        for name, task in self.tasks.items():
            if not self.is_top_level(name) and any(r["privilege"] == "read_only" for r in task["regions"]):
                out.append(Decision(f"collect/{name}", (False, True), "collect", name))
        return [d for d in out if d.task is None or self.in_scope(d.task)]

    def _memory_choices(self, kind: str) -> tuple[tuple[str, ...], ...]:
        """Memory lists for a requirement of a task on `kind`: the default memory alone, then each other visible
        memory with the default as a fallback (so that a full small memory is not fatal, dsl-reference.md §7.2),
        then the default with each other memory as its fallback (under memory pressure: what fits stays in the
        default memory, usually the fastest, and only the rest spills)."""
        visible = self.memories[kind]
        default = DEFAULT_MEMORY.get(kind) if DEFAULT_MEMORY.get(kind) in visible else (visible[:1] or ("SYSMEM",))[0]
        others = [m for m in visible if m != default]
        return ((default,), *[(m, default) for m in others], *[(default, m) for m in others])

    # ------------------------------------------------------------------------------------------------ points

    def default_point(self) -> dict[str, Any]:
        """The point that expresses Legion's default mapper: GPU first, default memories, SOA F_order (the order the
        application's variants require, when they do), Legion's default slicing, no limits, nothing collected."""
        return {d.name: d.default for d in self.decisions}

    def random_point(self, rng: random.Random) -> dict[str, Any]:
        """A point with every decision drawn uniformly from its choices by `rng`."""
        return {d.name: rng.choice(d.choices) for d in self.decisions}

    def normalize(self, point: Mapping[str, Any]) -> dict[str, Any]:
        """A complete point: missing decisions take their default; JSON lists become tuples.

        Raises:
            ValueError: a key names no decision of this space, or a value is not one of its choices.
        """
        out = self.default_point()
        for key, value in point.items():
            if key not in self.by_name:
                raise ValueError(f"'{key}' is not a decision of this search space")
            value = _freeze(value)
            if value not in self.by_name[key].choices:
                raise ValueError(f"{value!r} is not a choice of '{key}' (choices: {self.by_name[key].choices})")
            out[key] = value
        return out

    def effective_kind(self, point: Mapping[str, Any], task: str) -> str:
        """The processor kind `task` runs on under `point` (the first of its list it has a variant for)."""
        usable = self.usable_kinds(task)
        kinds = point.get(f"kinds/{task}", usable)
        return next((k for k in kinds if k in usable), usable[0] if usable else self.kinds[-1])

    def relevant(self, point: Mapping[str, Any], decision: Decision) -> bool:
        """Whether changing `decision` can change the mapping under `point` (memory decisions for a kind the task
        does not run on cannot)."""
        if decision.group == "memory":
            return decision.name.rsplit("/", 1)[1] == self.effective_kind(point, decision.task)
        return True

    # ----------------------------------------------------------------------------------------------- rendering

    def sections(self, point: Mapping[str, Any]) -> dict[str, list[str]]:
        """The DSL statements of `point`, one list per section of `SECTIONS` (each item one statement; function
        definitions span several lines). Missing decisions take their defaults."""
        p = self.normalize(point)
        own = [d.task for d in self.decisions if d.group == "kinds" and p[d.name] != d.default]
        # With the program's own mapper kept, a `*` names no task and that mapper maps every task no statement
        # names: the first Task line names the tasks the search decides for (but those with a line of their own),
        # so that every statement applies to them: every task but the top-level one, or the start's (`scope`).
        keep = bool(self.app.get("keep_app_mapper"))
        named = [n for n in self.tasks if keep and (n in self.scope if self.scope else not self.is_top_level(n))
                 and n not in own]
        task_lines = [f"Task {','.join(map(_q, named)) or '*'} {','.join(self.kinds)};"]
        for d in self.decisions:
            if d.group == "kinds" and p[d.name] != d.default:
                task_lines.append(f"Task {_q(d.task)} {','.join(p[d.name])};")
        region_lines = [f"Region * * {k} {self._memory_choices(k)[0][0]};" for k in self.kinds]
        for d in self.decisions:
            if d.group == "memory" and p[d.name] != d.default:
                _, task, req, kind = d.name.split("/")
                region_lines.append(f"Region {_q(task)} {self._region_selector(task, int(req))} {kind} "
                                    f"{','.join(p[d.name])};")
        region_lines += [f"CollectMemory {_q(d.task)} *;" for d in self.decisions
                         if d.group == "collect" and p[d.name]]
        layout_lines = []
        if self.layouts:
            align = p["layout/align"]
            interleave, order = p.get("layout/interleave", self.required_interleave), p.get("layout/order",
                                                                                              self.required_order)
            layout_lines = [f"Layout * * * {interleave} {order}{f' Align=={align}' if align else ''};", *self.pinned]
        limit_lines = [f"InstanceLimit {_q(d.task)} {p[d.name]};"
                       for d in self.decisions if d.group == "limit" and p[d.name]]
        return {
            "task": task_lines,
            "region": region_lines,
            "layout": layout_lines,
            "instance_limit": limit_lines,
            "index_task_map": self._map_lines(p, "index_map", INDEX_PATTERNS, "IndexTaskMap"),
            "single_task_map": self._map_lines(p, "single_map", SINGLE_PATTERNS, "SingleTaskMap"),
        }

    def _region_selector(self, task: str, req: int) -> str:
        """The requirement's nearest name when no other requirement of the task has it in its name chain (a name
        selects every requirement whose chain contains it, dsl-reference.md §6.2), else its index."""
        regions = self.tasks[task]["regions"]
        names = regions[req].get("names") or []
        if names and sum(names[0] in (r.get("names") or []) for r in regions) == 1:
            return _q(names[0])
        return str(req)

    def _map_lines(self, p: Mapping[str, Any], group: str, library: dict, keyword: str) -> list[str]:
        """Function definitions (each once) followed by one map statement per function, listing its tasks."""
        users: dict[str, list[str]] = {}
        defs: dict[str, str] = {}
        for d in self.decisions:
            if d.group != group or p[d.name] == "default":
                continue
            kind = self.effective_kind(p, d.task)
            domain = self.tasks[d.task].get("domain") or [1]
            fname = f"{p[d.name]}_{kind.lower()}{len(domain) if group == 'index_map' else ''}"
            if group == "index_map":
                fname += "d"
            defs.setdefault(fname, self._function(fname, library[p[d.name]], kind, len(domain), group))
            users.setdefault(fname, []).append(d.task)
        return [*defs.values(), *[f"{keyword} {','.join(map(_q, tasks))} {f};" for f, tasks in users.items()]]

    @staticmethod
    def _function(fname: str, pattern: tuple[str, str], kind: str, dims: int, group: str) -> str:
        """The DSL definition of library function `pattern` for tasks on `kind` with `dims`-dimensional launches.
        Index-map bodies get, when they use them, the locals `lin` and `clin` (row-major and column-major position
        of the point) and `n` (the launch volume)."""
        comment, body = pattern
        body = body.format(m=MACHINE_VARS[kind])
        if group == "index_map":
            lin, clin = "task.ipoint[0]", f"task.ipoint[{dims - 1}]"
            for d in range(1, dims):
                lin = f"{'(' + lin + ')' if d > 1 else lin} * task.ispace[{d}] + task.ipoint[{d}]"
                c = dims - 1 - d
                clin = f"{'(' + clin + ')' if d > 1 else clin} * task.ispace[{c}] + task.ipoint[{c}]"
            locals_ = [f"{name} = {expr};" for name, expr in (("lin", lin), ("clin", clin))
                       if re.search(rf"\b{name}\b", body)]
            if re.search(r"\bn\b", body):
                locals_.append(f"n = {' * '.join(f'task.ispace[{d}]' for d in range(dims))};")
            body = "\n    ".join([*locals_, body])
        return f"def {fname}(Task task) {{    # {comment}\n    {body}\n}}"

    def prelude(self) -> list[str]:
        """Global machine models every section may use (`mcpu`, and `mgpu` when the machine has GPUs), after the
        answers to the application's tunables that discovery saw its own mapper give (`Tunable id = value;`; those
        Legion's default mapper answered are left to it)."""
        tunables = [f"Tunable {t['id']} = {t['value']}{'' if t['type'] == 'int64' else ' ' + t['type']};"
                    for t in self.app.get("tunables", ()) if not t.get("legion")]
        return [*tunables, *[f"{MACHINE_VARS[k]} = Machine({k});" for k in reversed(self.kinds)]]

    def render(self, point: Mapping[str, Any]) -> str:
        """The DSL program of `point`, canonically formatted."""
        return join_program(self.prelude(), self.sections(point))

    # ------------------------------------------------------------------------------------------- neighbourhood

    def neighbours(self, point: Mapping[str, Any], weights: Mapping[str, float] | None = None,
                   rng: random.Random | None = None) -> Iterator[Move]:
        """Moves to points near `point`, most promising first.

        Order: every task on the preferred kind (GPU), one index-mapping pattern for every launch; then
        single-decision moves by group (index maps, memories, layout, kinds, single-task maps, collect, limits),
        first for the tasks that take time in the timed loop, then (when `weights` say so) for those that take
        none; last, every task on the other kinds. Within a group, tasks with more measured time first (`weights`:
        seconds in the timed loop per task name, from the run's profile), then tasks with more variants (compute
        tasks have an accelerator variant, set-up tasks often only a CPU one), ties broken by `rng` (seeded, so the
        order is reproducible) or by description order.
        Moves that lead to the same mapping as `point` or as an earlier move (`semantic`) are left out.
        """
        p = self.semantic(point)
        seen = {self._key(p)}
        for move in self._moves(p, weights or {}, rng):
            key = self._key(self.apply(p, move))
            if key not in seen:
                seen.add(key)
                yield move

    def _key(self, point: Mapping[str, Any]) -> tuple:
        return tuple(sorted(self.semantic(point).items()))

    def semantic(self, point: Mapping[str, Any]) -> dict[str, Any]:
        """`point` with each mapping pattern replaced by the first pattern (in choice order) that places every
        point of the task's launch on the same processor on this machine, so that points which map identically
        render to the same program (on one node with as many processors as points, block, cyclic and hier
        coincide). With a single processor of the task's kind every pattern is Legion's default placement."""
        p = self.normalize(point)
        for d in self.decisions:
            if d.group in ("index_map", "single_map") and p[d.name] != "default":
                kind = self.effective_kind(p, d.task)
                if self.machine.get("nodes", 1) * self._per_node(kind) == 1:
                    p[d.name] = "default"
                    continue
                domain = tuple(self.tasks[d.task]["domain"]) if d.group == "index_map" else None
                mine = self._library_placements(p[d.name], kind, domain, d.group)
                p[d.name] = next(c for c in d.choices[1:]
                                 if self._library_placements(c, kind, domain, d.group) == mine)
        return p

    def _moves(self, p: dict[str, Any], weights: Mapping[str, float], rng: random.Random | None) -> Iterator[Move]:
        order = list(self.decisions)
        if rng is not None:
            rng.shuffle(order)
        # The tasks that take the most time in the timed loop first (`weights`), then compute tasks (those with an
        # accelerator variant) before set-up tasks.
        order.sort(key=lambda d: (-weights.get(d.task or "", 0.0),
                                  -len(self.tasks[d.task]["variants"]) if d.task else 0))
        # With a profile, the decisions of tasks that take no time in the timed loop come after every other move.
        cold = {d.name for d in order if d.task and any(weights.values()) and not weights.get(d.task)}
        kind_names = [d.name for d in self.decisions if d.group == "kinds"]

        def every_task_on(kind: str) -> Iterator[Move]:
            changes = {n: next(c for c in self.by_name[n].choices if c[0] == kind) for n in kind_names}
            if kind_names and any(p[n] != v for n, v in changes.items()):
                yield Move(f"every task on {kind} first", changes)

        # Accelerators first; moving all the work to CPUs is tried last (on a GPU problem size it can run for the
        # whole timeout).
        yield from every_task_on(self.kinds[0])
        index = [d for d in self.decisions if d.group == "index_map"]
        # Explicit patterns before Legion's default slicing: a start program is usually already the default.
        for pattern in (*INDEX_PATTERNS, "default"):
            changes = {d.name: pattern for d in index}
            if len(index) > 1 and any(p[n] != v for n, v in changes.items()):
                yield Move(f"every index launch mapped '{pattern}'", changes)
        for tier in (False, True):
            for group in ("index_map", "memory", "layout", "kinds", "single_map", "collect", "limit"):
                for d in order:
                    if d.group != group or (d.name in cold) != tier or not self.relevant(p, d):
                        continue
                    for value in d.choices:
                        # A move that only adds or drops a fallback memory changes nothing while the first one has
                        # room; fallbacks come from AutoGuide's edits after a failed allocation.
                        if d.group == "memory" and value[0] == p[d.name][0]:
                            continue
                        if value != p[d.name] and not self._fails(p, d, value):
                            yield Move(f"{d.name} = {_show(value)}", {d.name: value})
        for kind in self.kinds[1:]:
            yield from every_task_on(kind)

    def toward_default(self, point: Mapping[str, Any], weights: Mapping[str, float] | None = None,
                       pressure: bool = False) -> Iterator[Move]:
        """Moves that take statements of `point` back to Legion's default mapper, most expected effect first.

        1. Unless the runs ran out of memory (`pressure`), every memory-pressure remedy at once: instance limits,
           collected requirements and regions placed first in another memory than the default one (each lowers the
           footprint at a price: fewer tasks in flight, instances made again at every launch, a slower memory; with
           room to spare only the price is left).
        2. For each task that takes time in the timed loop (`weights`: seconds per task; every task when there is
           no profile), heaviest first: all its decisions back to the default (under `pressure`, all but its
           memories, limits and collected requirements).
        3. The layout back to the default (SOA, F_order, no alignment): the one the application's kernels are
           written for.

        Moves that change no mapping (`semantic`) or repeat an earlier one are left out.
        """
        p = self.semantic(point)
        seen = {self._key(p)}

        def reset(label: str, names: list[str]) -> Iterator[Move]:
            changes = {n: self.by_name[n].default for n in names if p[n] != self.by_name[n].default}
            key = self._key(self.apply(p, Move(label, changes)))
            if changes and key not in seen:
                seen.add(key)
                yield Move(label, changes)

        if not pressure and (move := self.drop_remedies(p)) is not None:
            yield from reset(move.label, list(move.changes))
        weights = weights or {}
        tasks = sorted((t for t in self.tasks if weights.get(t) or not any(weights.values())),
                       key=lambda t: -weights.get(t, 0.0))
        for task in tasks:  # under pressure, its memories, limits and collections stay: they may be what fits
            yield from reset(f"every decision of {task} back to {self.default_label}",
                             [d.name for d in self.decisions if d.task == task
                              and not (pressure and d.group in ("memory", "limit", "collect"))])
        yield from reset(f"the layout back to {self.default_label}",
                         [d.name for d in self.decisions if d.group == "layout"])

    def drop_remedies(self, point: Mapping[str, Any]) -> Move | None:
        """The move that drops every memory-pressure remedy of `point` (instance limits, collected requirements,
        regions placed first in another memory than the default one), or None when it has none."""
        p = self.normalize(point)
        changes = {d.name: d.default for d in self.decisions
                   if (d.group in ("limit", "collect") and p[d.name] != d.default)
                   or (d.group == "memory" and self.relevant(p, d) and p[d.name][0] != d.default[0])}
        return Move("the default memories, no instance limit, nothing collected (memory-pressure remedies; no run "
                    "ran out of memory)", changes) if changes else None

    def _fails(self, p: Mapping[str, Any], d: Decision, value: Any) -> bool:
        """Whether mapping pattern `value` is certain to fail for `d`'s task (e.g. `parent_proc` for a task on
        another kind than its parent: R406), so that no iteration is spent on it."""
        if d.group not in ("index_map", "single_map") or value == "default":
            return False
        domain = tuple(self.tasks[d.task]["domain"]) if d.group == "index_map" else None
        return not self._library_placements(value, self.effective_kind(p, d.task), domain, d.group)

    def apply(self, point: Mapping[str, Any], move: Move) -> dict[str, Any]:
        """`point` with `move`'s changes (a new dict)."""
        return self.normalize({**point, **move.changes})

    # ----------------------------------------------------------------------------------------------- projection

    def project(self, dsl: str) -> dict[str, Any]:
        """The point of this space closest to an arbitrary program, decided with the DSL's reference evaluator.

        Each decision takes the value whose effect matches the program's for that task/requirement: processor and
        memory lists by their first usable entry, layout aspects by the most common choice, limits by the nearest
        count, mapping functions by the library pattern that places the most points as the program does (Legion's
        default when the program has no map statement for the task). What the space cannot express (other
        functions, per-requirement layouts...) is approximated that way; a program that does not parse or whose
        load phase fails projects to the default point.
        """
        from mapperopt.descriptions import AppDescription, MachineDescription
        from mapperopt.dsl.evaluator import Evaluator
        from mapperopt.dsl.parser import parse

        try:
            ev = Evaluator(parse(dsl, "<project>"), MachineDescription.from_json(self.machine),
                           AppDescription.from_json(self.app))
        except MapperoptError:
            return self.default_point()
        point = self.default_point()
        for d in self.decisions:
            try:
                value = self._project_one(ev, point, d)
            except MapperoptError:  # a run-time error of the program for this decision: keep the default
                continue
            if value is not None:
                point[d.name] = value
        return point

    def left_out(self, dsl: str) -> str | None:
        """What the programs rendered from `dsl`'s projection leave out although `dsl` has it: the map statements of
        tasks that run where their kind has a single processor (`semantic` renders every pattern as Legion's default
        there, the same placement), as a clause for the start's note; None when there are none. A statement whose
        function fails is not counted: it does change the run."""
        from mapperopt.descriptions import AppDescription, MachineDescription
        from mapperopt.dsl.evaluator import Evaluator
        from mapperopt.dsl.parser import parse

        try:
            ev = Evaluator(parse(dsl, "<project>"), MachineDescription.from_json(self.machine),
                           AppDescription.from_json(self.app))
        except MapperoptError:
            return None
        point = self.project(dsl)
        statements, kinds = set(), set()
        for d in self.decisions:
            if d.group not in ("index_map", "single_map"):
                continue
            index, kind = d.group == "index_map", self.effective_kind(point, d.task)
            if self.machine.get("nodes", 1) * self._per_node(kind) != 1 or ev.map_statement(d.task, index) is None:
                continue
            domain = tuple(self.tasks[d.task]["domain"]) if index else None
            try:
                for p in (itertools.product(*(range(n) for n in domain)) if index else [None]):
                    ev.place(d.task, p, domain)
            except MapperoptError:
                continue
            statements.add("IndexTaskMap" if index else "SingleTaskMap")
            kinds.add(kind)
        if not statements:
            return None
        return (f"its {' and '.join(sorted(statements))} statements change nothing on this machine "
                f"({', '.join(f'1 {k}' for k in sorted(kinds))}) and are left out of the programs the search writes")

    def not_kept(self, dsl: str, name: str) -> str | None:
        """What of a user's start program `dsl` (its file `name`) the programs the search writes do not keep, as the
        note `--start FILE` prints first: they are new programs made from what `dsl` decides on this machine
        (`project`), not edits of it, so its comments, functions, map statements (`left_out` says when they
        change nothing here), what it says of kinds this machine lacks, and what its statements decide that no point
        of the space does (`decided_otherwise`) are gone. None when `dsl` has none of these, or does not parse (the
        first iteration reports why)."""
        from mapperopt.dsl import ast
        from mapperopt.dsl.parser import parse

        try:
            program = parse(dsl, name)
        except MapperoptError:
            return None
        have = set(self.kinds) | {m for k in self.kinds for m in self.memories[k]}
        lacked: set[str] = set()

        def walk(node: Any) -> None:
            if isinstance(node, (ast.Kind, ast.KindLit)) and getattr(node, "name", None) not in have:
                lacked.add(node.name)
            elif isinstance(node, tuple):
                for item in node:
                    walk(item)
            elif hasattr(node, "__dataclass_fields__"):
                for f in node.__dataclass_fields__:
                    walk(getattr(node, f))

        walk(program.statements)
        parts = ["its comments"] if program.comments else []
        functions = [s.name for s in program.statements if isinstance(s, ast.FuncDef)]
        if functions:
            parts.append(f"its functions ({', '.join(functions)})")
        maps = sorted({type(s).__name__[:-4] for s in program.statements
                       if isinstance(s, (ast.IndexTaskMapStmt, ast.SingleTaskMapStmt))})
        if maps:
            left_out = self.left_out(dsl)
            parts.append(f"its {' and '.join(maps)} statements as written ("
                         + ("they change nothing on this machine and are left out" if left_out else
                            "the search places points with its own library functions") + ")")
        if decided := self.decided_otherwise(dsl):
            parts.append(decided)
        absent = ""
        if lacked:
            example = next((s for s in program.statements
                            if isinstance(s, ast.TaskStmt) and {k.name for k in s.kinds} & lacked), None)
            if example is not None:
                tasks = "*" if example.tasks.names is None else ",".join(n.name for n in example.tasks.names)
                kinds = [k.name for k in example.kinds]
                example = (f" (`Task {tasks} {','.join(kinds)}` becomes "
                           f"`Task {tasks} {','.join(k for k in kinds if k not in lacked) or self.kinds[0]}`)")
            lacked_text = ", ".join(sorted(lacked, key=lambda k: (k in ast.MEM_KINDS, k)))  # processors first
            absent = (f" They say nothing of {lacked_text}{' either' if parts else ''}: this machine has none"
                      f"{example or ''}.")
        if not parts and not absent:
            return None
        here = ", ".join(f"{self.machine.get('nodes', 1) * self._per_node(k)} {k}" for k in self.kinds)
        keep = f", and they do not keep {'; '.join(parts)}" if parts else ""
        return (f"{name} is not edited: the search writes programs of its own from what the file decides on this "
                f"machine ({here}){keep}.{absent} Every other statement is rewritten as "
                "the search's statements for what it decides here. best.dsl is the file itself when it stays the "
                "best; else it is one of the search's programs, and best-from-start.dsl, beside it, is the file "
                "edited to map as best.dsl does here, where such an edit is sound.")

    def decided_otherwise(self, dsl: str) -> str | None:
        """What the statements of program `dsl` decide on this machine that the programs rendered from its projection
        (`project`) do not, as the clause "what these statements decide here: line N's `STATEMENT` (they write ...),
        ..." (statements in line order; consecutive ones with the same replacement in one item, joined by "and"), or
        None when there are none or `dsl` does not load. They are: a Layout for some requirements only (the search
        writes one Layout line for all, with the layout most requirements get), an InstanceLimit other than the search's
        counts or on a task the search limits nothing of, a CollectMemory of some requirements only, a Region list the
        search has no choice for, any Layout when the space searches no layout."""
        from mapperopt.dsl.formatter import format_statement

        try:
            ev = self._evaluator(dsl)
        except MapperoptError:
            return None
        point = self.project(dsl)
        sections = self.sections(point)
        ours = self._evaluator(self.render(point))
        # (line, column) of a statement of `dsl` -> it and what the search's programs write instead (statements
        # compare equal whatever their place, so their place is the key)
        found: dict[tuple[int, int], tuple[Any, str]] = {}
        spread: dict[str, list] = {}  # layout aspect -> the statements of `dsl` that decide it somewhere
        spread_to: set[str] = set()  # layout aspects the search gives requirements that `dsl` leaves undecided

        def note(stmt: Any, instead: str) -> None:
            if stmt is not None:
                found.setdefault((stmt.loc.line, stmt.loc.col), (stmt, instead))

        for name, task in self.tasks.items():
            if not self.in_scope(name):  # the program's own mapper maps it, under both programs
                continue
            kind = self.effective_kind(point, name)
            limit = ours.instance_limit_statement(name, kind)
            if ev.instance_limit(name, kind) != (limit.count if limit else None):
                note(ev.instance_limit_statement(name, kind), f"`{format_statement(limit)}`" if limit else "none")
            if ev.collect(name) != ours.collect(name):
                line = next((c for c in sections["region"] if c.startswith(f"CollectMemory {_q(name)} ")), None)
                for stmt in ev.collect_statements(name):
                    note(stmt, f"`{line}`" if line else "none")
            for req in task["regions"]:
                i = req["index"]
                listed, theirs = ([m for m in e.memories(name, i, kind) if m in self.memories.get(kind, ())]
                                  for e in (ev, ours))
                if listed and listed != theirs and not task.get("inner"):
                    stmts = ours.region_statements(name, i, kind)
                    note(ev.region_statements(name, i, kind)[0], f"`{format_statement(stmts[0])}`")
                memory = (listed or [DEFAULT_MEMORY.get(kind, "SYSMEM")])[0]
                (mine, deciders), theirs = ev.layout_sources(name, i, kind, memory), ours.layout(name, i, kind, memory)
                for aspect, stmt in deciders.items():
                    spread.setdefault(aspect, []).append(stmt)
                for aspect in (a for a in mine if mine[a] != theirs[a]):
                    if aspect in deciders:
                        note(deciders[aspect], "")
                    else:
                        spread_to.add(aspect)
        # The search gives the layout most requirements get to those `dsl` leaves undecided: the statements of `dsl`
        # that decide that aspect elsewhere are what it spreads.
        for aspect in spread_to:
            for stmt in spread.get(aspect, ()):
                note(stmt, "")
        # Without a searched layout (`layouts` False) the search's programs have no Layout statement at all.
        global_line = (f"`{sections['layout'][0]}` for every requirement, the layout most requirements get"
                       if self.layouts else "none: layouts are not searched")
        groups: list[tuple[list[str], str]] = []  # consecutive statements with the same replacement said once
        for _, (stmt, instead) in sorted(found.items()):
            said = f"line {stmt.loc.line}'s `{format_statement(stmt)}`"
            if groups and groups[-1][1] == (instead or global_line):
                groups[-1][0].append(said)
            else:
                groups.append(([said], instead or global_line))
        if not found:
            return None
        return (f"what {'this statement decides' if len(found) == 1 else 'these statements decide'} here: "
                + ", ".join(f"{' and '.join(said)} (they write {instead})" for said, instead in groups))

    def edit_of(self, start: str, best: str) -> str | None:
        """The best program `best` written as an edit of a user's start program `start`: `start` as it is (comments,
        functions, map statements, statements for other kinds) followed by the statements of `best`'s point that
        the point of `start` (`project`) renders otherwise, with the machine models they use that `start` does not
        define. A later statement with the same selector overrides an earlier one (dsl-reference.md §6.4): the
        statements of `start` that added ones override for every task they select are commented out (else `check`
        warns W300 on the edit), and those overridden for some tasks of their list only are commented out and written
        again for the others; one of `start` with a more specific selector outranks them: the edit is given only
        when it maps as `best` does on this machine (`_placed_alike`) and the checker finds no error in it; else
        None."""
        from mapperopt.dsl.checker import check
        from mapperopt.dsl.parser import parse
        from mapperopt.descriptions import AppDescription, MachineDescription

        edit = self._edit_text(start, best)
        if edit is None:
            return None
        try:
            errors = [d for d in check(parse(edit, "<edit>"), AppDescription.from_json(self.app),
                                       MachineDescription.from_json(self.machine)) if d.severity == "error"]
        except MapperoptError:
            return None
        return edit if not errors and self._placed_alike(edit) == self._placed_alike(best) else None

    def edit_blockers(self, start: str, best: str) -> list[str]:
        """Where `edit_of` gives no edit because the edited `start` maps otherwise than `best` on this machine: the
        statements of `start` (each "line N: `statement`") that decide, for the first task where they differ, the
        aspect that differs (processor, memory, layout, collected requirements, instance limit); empty when the
        edit maps as `best` does, or cannot be written."""
        from mapperopt.dsl import ast
        from mapperopt.dsl.evaluator import region_matches, task_matches
        from mapperopt.dsl.formatter import format_statement
        from mapperopt.dsl.parser import parse
        from mapperopt.descriptions import AppDescription

        edit = self._edit_text(start, best)
        if edit is None:
            return []
        ours, theirs = self._placed_alike(edit), self._placed_alike(best)
        differ = next(((a, b) for a, b in zip(ours, theirs) if a != b and isinstance(a, dict) and isinstance(b, dict)
                       and a.get("task") == b.get("task")), None)
        if differ is None:
            return []
        a, b = differ
        task = AppDescription.from_json(self.app).task(a["task"])
        kinds, indexes = [], set()
        if a.get("proc") != b.get("proc"):
            kinds += [ast.TaskStmt, ast.IndexTaskMapStmt, ast.SingleTaskMapStmt]
        deciding = set()  # the Layout statements of the edit that decide a layout that differs
        for ra, rb in zip(a.get("regions", ()), b.get("regions", ())):
            if ra.get("memory") != rb.get("memory"):
                kinds.append(ast.RegionStmt)
                indexes.add(ra["index"])
            if ra.get("layout") != rb.get("layout"):
                kinds.append(ast.LayoutStmt)
                indexes.add(ra["index"])
                _, by = self._evaluator(edit).layout_sources(task.name, ra["index"], a["proc"]["kind"], ra["memory"])
                deciding |= {format_statement(d) for aspect, d in by.items()
                             if ra["layout"].get(aspect) != rb["layout"].get(aspect)}
        kinds += [ast.CollectMemoryStmt] * (a.get("collect") != b.get("collect"))
        kinds += [ast.InstanceLimitStmt] * (a.get("limited") != b.get("limited"))
        # the start's statements the edit keeps (not those it comments out), before the best's added ones
        kept = {format_statement(st) for st in parse(edit.split(self._ADDED)[0], "<edit>").statements}
        out = []
        for st in parse(start, "<start>").statements:
            if (not isinstance(st, tuple(kinds)) or format_statement(st) not in kept
                    or not task_matches(st.tasks, task.name, st.tasks.kind)):
                continue
            region = getattr(st, "region", None)
            if isinstance(st, (ast.RegionStmt, ast.LayoutStmt)) and not any(
                    region_matches(region, r.index, r.names) for r in task.regions if r.index in indexes):
                continue
            if isinstance(st, ast.LayoutStmt) and deciding and format_statement(st) not in deciding:
                continue
            out.append(f"line {st.loc.line}: `{format_statement(st)}`")
        return out

    _ADDED = "\n# The best program of `mapperopt tune` (best.dsl):"  # heads the edit's added statements

    def _edit_text(self, start: str, best: str) -> str | None:
        """`edit_of`'s edit before it is checked and compared with `best`; None when `start` does not parse."""
        from mapperopt.dsl import ast
        from mapperopt.dsl.checker import selector_keys
        from mapperopt.dsl.formatter import format_statement
        from mapperopt.dsl.parser import parse

        try:
            statements = parse(start, "<start>").statements
        except MapperoptError:
            return None
        mine, theirs = self.semantic(self.project(start)), self.semantic(self.project(best))
        own = {line for lines in self.sections(mine).values() for line in lines}
        added = [line for lines in self.sections(theirs).values() for line in lines if line not in own]
        # What the best leaves at Legion's default cannot be said by a later statement: the file's statements that
        # set it for that task are commented out instead.
        kinds = {"limit": ast.InstanceLimitStmt, "collect": ast.CollectMemoryStmt, "index_map": ast.IndexTaskMapStmt,
                 "single_map": ast.SingleTaskMapStmt}
        undone = {(kinds[d.group], d.task) for d in self.decisions
                  if d.group in kinds and theirs[d.name] == d.default != mine[d.name]}
        try:
            overriding = {k for st in parse("\n".join(added), "<added>").statements for k in selector_keys(st)}
        except MapperoptError:
            return None
        lines = start.splitlines()
        spans = [range(st.loc.line, (st.loc.end_line or st.loc.line) + 1) for st in statements]
        for st, span in zip(statements, spans):
            keys, rest = selector_keys(st), None
            over = [n for n, k in zip(st.tasks.names or (), keys) if k in overriding] if keys else []
            if any(isinstance(st, k) and (st.tasks.names is None or task in [n.name for n in st.tasks.names])
                   for k, task in undone):
                why = "left at Legion's default here"
            elif not (keys and sum(bool(set(span) & set(other)) for other in spans) == 1):  # alone on its lines
                continue
            elif all(k in overriding for k in keys):
                why = "overridden below"
            elif over:  # overridden for some tasks of its list: written again for the others
                why = f"{', '.join(n.name for n in over)} overridden below"
                rest = format_statement(dataclasses.replace(
                    st, tasks=ast.TaskSel(tuple(n for n in st.tasks.names if n not in over))))
            else:
                continue
            for i in range(st.loc.line - 1, (st.loc.end_line or st.loc.line)):
                lines[i] = f"# (mapperopt tune: {why}) " + lines[i]
            if rest is not None:
                lines[span[-1] - 1] += "\n" + rest
        edit = "\n".join(lines) + "\n"
        if added:
            defined = {s.name for s in statements if isinstance(s, (ast.Assign, ast.FuncDef))}
            models = [m for m in self.prelude()
                      if (name := m.split(" = ")[0]) not in defined and re.search(rf"\b{name}\b", "\n".join(added))]
            edit += (self._ADDED + " its statements that differ from this file's on the machine it was tuned on.\n"
                     + "\n".join([*models, *added]) + "\n")
        return edit

    def _placed_alike(self, dsl: str) -> list:
        """`dsl`'s decisions (`_decisions`), where a kind with a single processor places every point alike: on it, a
        point placed by a map statement is on the same processor as one Legion's default places."""
        def here(record: Any) -> Any:
            if not isinstance(record, dict) or "proc" not in record:
                return record
            kind = record["proc"]["kind"]
            if self.machine.get("nodes", 1) * self._per_node(kind) != 1:
                return record
            return {**record, "proc": {"kind": kind}, "placed_by": None}

        try:
            return [here(r) for r in self._decisions(dsl)]
        except MapperoptError:
            return [dsl]  # fails to decide: alike only to itself

    def same_mapping(self, a: str, b: str) -> bool:
        """Whether programs `a` and `b` make the same decisions for every task and launch point of the application
        on this machine (processor, memories, layouts, collected requirements, instance limits), according to the
        DSL's reference evaluator. False when either does not parse or fails to decide."""
        try:
            return self._decisions(a) == self._decisions(b)
        except MapperoptError:
            return False

    def default_mapper_differences(self, dsl: str) -> list[str]:
        """Where program `dsl` maps otherwise than Legion's default mapper on this machine, according to the DSL's
        reference evaluator, one line per task at its first launch point that differs, e.g. "taco_validate:
        requirement 0 (A_tiles) SOA C_order (Legion's default mapper: SOA F_order)". Legion's default mapper is the
        program without statements (the default processor, memories and placement; nothing collected or limited)
        with the layouts it gives: the interleaving and dimension order the task's variant registers (the
        description's `interleave` and `layout`, on the kinds of its `layout_kinds`), else SOA F_order, and its
        alignment (`required_align`), else none. A task that the program's own mapper, kept, maps (`app_mapped`: no
        statement names it) is left out: `dsl` decides nothing for it. Empty: the same mapping.

        Raises:
            MapperoptError: `dsl` does not parse. DslRuntimeError: it fails to decide (R400-R410).
        """
        from mapperopt.dsl.evaluator import app_mapped

        ev, legion = self._evaluator(dsl), self._evaluator("")

        def layout(rec: dict, i: int, task: dict, default: bool) -> str | None:
            if rec["regions"][i]["layout"] is None:
                return None
            if default:
                req, kind = task["regions"][i], rec["proc"]["kind"]
                fixed = not req.get("layout_kinds") or kind in req["layout_kinds"]
                align = (req.get("required_align") or {}).get(kind)
                aligned = f" Align{align['op']}{align['bytes']}" if align else ""
                return f"{fixed and req.get('interleave') or 'SOA'} {fixed and req.get('layout') or 'F_order'}{aligned}"
            got = rec["regions"][i]["layout"]
            align = f" Align{got['align']['op']}{got['align']['bytes']}" if got.get("align") else ""
            return f"{got['order']} {got['dims']}_order{align}"

        out = []
        for name, launches in self._launches():
            if app_mapped(ev.app, ev.program, name):
                continue
            task = self.tasks[name]
            for p, domain in launches:
                a, b = ev.decide(name, p, domain), legion.decide(name, p, domain)
                diffs = [] if a["proc"] == b["proc"] else [f"on {_proc(a['proc'])} ({_default_is(_proc(b['proc']))})"]
                for i, req in enumerate(a["regions"]):
                    what = f"requirement {i}" + (f" ({req['name']})" if req.get("name") else "")
                    if req["memory"] != b["regions"][i]["memory"]:
                        diffs.append(f"{what} in {req['memory']} ({_default_is(b['regions'][i]['memory'])})")
                    mine, theirs = layout(a, i, task, False), layout(b, i, task, True)
                    if mine != theirs:
                        diffs.append(f"{what} {mine} ({_default_is(theirs)})")
                if a["collect"] != b["collect"] or a["limited"] != b["limited"]:
                    diffs.append("collected requirements or an instance limit (Legion's default mapper: none)")
                if diffs:
                    out.append(f"{name}: {'; '.join(diffs)}")
                    break
        return out

    def _evaluator(self, dsl: str) -> Any:
        """The DSL's reference evaluator of program `dsl` on this space's machine and application."""
        from mapperopt.descriptions import AppDescription, MachineDescription
        from mapperopt.dsl.evaluator import Evaluator
        from mapperopt.dsl.parser import parse

        return Evaluator(parse(dsl, "<compare>"), MachineDescription.from_json(self.machine),
                         AppDescription.from_json(self.app))

    def _launches(self) -> list[tuple[str, list]]:
        """Each task but the top-level one with its launches: (point, domain) pairs, (None, None) for a single
        launch."""
        out = []
        for name, task in self.tasks.items():
            if self.is_top_level(name):
                continue
            launches = [(None, None)] if task["launch"] in ("single", "both") else []
            if task["launch"] in ("index", "both") and task.get("domain"):
                launches += [(p, tuple(task["domain"]))
                             for p in itertools.product(*(range(n) for n in task["domain"]))]
            out.append((name, launches))
        return out

    def _decisions(self, dsl: str) -> list:
        ev = self._evaluator(dsl)
        out = []
        for name, launches in self._launches():
            out += [ev.decide(name, p, domain) for p, domain in launches]
            out.append(ev.instance_limit(name, ev.task_kind(name)))
        return out

    def _project_one(self, ev: Any, point: Mapping[str, Any], d: Decision) -> Any:
        if d.group == "kinds":
            first = ev.task_kind(d.task)
            return next((c for c in d.choices if c[0] == first), None)
        if d.group == "memory":
            _, task, req, kind = d.name.split("/")
            listed = [m for m in ev.memories(task, int(req), kind) if m in self.memories[kind]]
            # The list with the same first memory and the longest common start (a fallback is kept).
            same = [c for c in d.choices if listed and c[0] == listed[0]]
            return max(same, key=lambda c: len(os.path.commonprefix([c, tuple(listed)])), default=None)
        if d.group == "layout":
            return self._project_layout(ev, point, d)
        if d.group == "limit":
            n = ev.instance_limit(d.task, self.effective_kind(point, d.task)) or 0
            return min(d.choices, key=lambda c: (abs(c - n), c))
        if d.group == "collect":
            return bool(ev.collect(d.task))
        return self._project_map(ev, point, d)

    def _project_layout(self, ev: Any, point: Mapping[str, Any], d: Decision) -> Any:
        """The value of a global layout aspect that most requirements of the program get."""
        votes: dict[Any, int] = {}
        for name, task in self.tasks.items():
            kind = self.effective_kind(point, name)
            for req in task["regions"]:
                layout = ev.layout(name, req["index"], kind, DEFAULT_MEMORY.get(kind, "SYSMEM"))
                if d.name == "layout/interleave":
                    value = layout.get("order", "SOA")
                elif d.name == "layout/order":
                    value = "C_order" if layout.get("dims") == "C" else "F_order"
                else:
                    align = layout.get("align") or {}
                    value = min(ALIGNMENTS, key=lambda a: abs(a - int(align.get("bytes") or 0)))
                votes[value] = votes.get(value, 0) + 1
        return max(d.choices, key=lambda c: (votes.get(c, 0), c == d.default)) if votes else None

    def _project_map(self, ev: Any, point: Mapping[str, Any], d: Decision) -> Any:
        """The mapping pattern placing the most points of the task as the program does."""
        index = d.group == "index_map"
        if ev.map_statement(d.task, index) is None:
            return "default"
        domain = tuple(self.tasks[d.task].get("domain") or (1,)) if index else None
        points = list(itertools.product(*(range(n) for n in domain))) if index else [None]
        actual = [ev.place(d.task, p, domain) for p in points]
        kind = self.effective_kind(point, d.task)
        scores = {}
        for pattern in d.choices[1:]:
            placed = self._library_placements(pattern, kind, domain, d.group)
            scores[pattern] = sum(a == b for a, b in zip(actual, placed))
        best = max(scores, key=lambda k: scores[k]) if scores else None
        return best if best is not None and scores[best] > 0 else None

    def _library_placements(self, pattern: str, kind: str, domain: tuple[int, ...] | None, group: str) -> list:
        """Where library function `pattern` puts each point of `domain` (row-major order) on this machine."""
        from mapperopt.descriptions import MachineDescription
        from mapperopt.dsl.evaluator import Evaluator
        from mapperopt.dsl.parser import parse

        key = (pattern, kind, domain, group)
        if key not in self._placements:
            library = INDEX_PATTERNS if group == "index_map" else SINGLE_PATTERNS
            dims = len(domain) if domain else 1
            function = self._function("f", library[pattern], kind, dims, group)
            text = "\n".join([f"Task t {kind};", *self.prelude(), function,
                              f"{'IndexTaskMap' if group == 'index_map' else 'SingleTaskMap'} t f;"])
            ev = Evaluator(parse(text, "<library>"), MachineDescription.from_json(self.machine))
            points = list(itertools.product(*(range(n) for n in domain))) if domain else [None]
            try:
                self._placements[key] = [ev.place("t", p, domain) for p in points]
            except MapperoptError:
                self._placements[key] = []
        return self._placements[key]

def _show(value: Any) -> str:
    return ",".join(value) if isinstance(value, tuple) else str(value)


def join_program(prelude: list[str], sections: Mapping[str, list[str]]) -> str:
    """One DSL program from the fixed prelude and the six sections, canonically formatted.

    The order is fixed: task, region, layout and instance-limit statements, then the machine models, then the
    index-map and single-map sections (which define the functions they name, after the models they use).
    """
    parts = [*sections["task"], *sections["region"], *sections["layout"], *sections["instance_limit"],
             *prelude, *sections["index_task_map"], *sections["single_task_map"]]
    return canonical("\n".join(parts) + "\n")


def canonical(text: str) -> str:
    """`text` formatted by the DSL formatter, without blank lines and without the functions and machine models
    nothing uses (the prelude declares every model a section may use); unchanged when it does not parse (the checker
    reports why)."""
    from dataclasses import replace

    from mapperopt.dsl.checker import unused_definitions
    from mapperopt.dsl.formatter import format_program
    from mapperopt.dsl.parser import parse

    # Blank lines carry nothing in a generated program; without them, the only blank lines the formatter writes
    # mark where a dropped statement was.
    try:
        program = parse("".join(line for line in text.splitlines(keepends=True) if line.strip()), "<generated>")
    except MapperoptError:
        return text
    dropped = {id(s) for s in unused_definitions(program)}
    program = replace(program, source="")  # the canonical layout, not the one of the text (fmt keeps an author's)
    if dropped:
        program = replace(program, statements=tuple(s for s in program.statements if id(s) not in dropped),
                          comments=tuple(c for c in program.comments if id(_comment_owner(program, c)) not in dropped))
    return "".join(line for line in format_program(program).splitlines(keepends=True) if line.strip())


def _comment_owner(program: Any, comment: Any) -> Any:
    """The statement a comment is written on, by the formatter's rule (the last statement that starts before it,
    when the comment is on its lines), or None."""
    owner = next((s for s in reversed(program.statements)
                  if (s.loc.line, s.loc.col) < (comment.loc.line, comment.loc.col)), None)
    return owner if owner is not None and comment.loc.line <= (owner.loc.end_line or owner.loc.line) else None
