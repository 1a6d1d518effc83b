"""Application and machine descriptions (docs/dsl-reference.md §12 `mapperopt.app/1` and §6 `mapperopt.machine/1`).

Both are frozen dataclasses built with `from_json` (a parsed JSON object or its text) and written back with
`to_json` (a JSON-ready dict). `parse_machine_spec("2x4")` builds a synthetic machine for `--machine`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from mapperopt.errors import MapperoptError, UsageError
from mapperopt.files import AtLeast, OneOf

APP_SCHEMA = "mapperopt.app/1"
MACHINE_SCHEMA = "mapperopt.machine/1"
PRIVILEGES = ("read_only", "read_write", "write_discard", "reduce", "no_access")
LAUNCHES = ("index", "single", "both")
# The fields of a stored application and machine description (a tuning or comparison folder's settings.json keeps
# both; `to_json` writes them; discovery's cache keeps the first) that `from_json` and the search space read, as
# `mapperopt.files.read_json` checks them.
APP_FIELDS = {
    "schema": str, "app": str,
    "tasks": [{"name": str, "variants": [str], "launch": str, "inner?": bool, "leaf?": bool, "parent?": (str, None),
               "domain?": ([int], None), "variant_names?": {str: [str]}, "variant_ran?": {str: str},
               "launches?": {str: int},
               "other_regions?": {"groups": [{"kind": str, "launches": [[int]],
                                              "args": [{"index": int, "regions": [(str, None)]}]}], "unlisted": int},
               "regions?": [{"index?": int, "names?": [str], "privilege": str, "fields?": [str], "field_sizes?": [int],
                             "redop?": (str, None), "layout?": (str, None), "interleave?": (str, None),
                             "layout_kinds?": [str],
                             "required_memory?": {str: str}, "collective?": bool,
                             "required_align?": {str: {"op": str, "bytes": int}},
                             "constrained_by?": {str: [str]}}]}],
    "region_tree?": [{"name": str, "kind": str, "parent?": (str, None)}],
    "tunables?": [{"id": int, "value": int, "type": str, "legion?": bool}],
    "keep_app_mapper?": bool, "discovered_as?": (str, None), "own_mapper?": (str, None)}
_COUNT = AtLeast(0, integer=True)  # of processors, a node's number, an index, bytes
# The memory kinds a machine description lists: Realm's that the DSL names (the probe leaves out internal ones).
MEMORY_KINDS = ("SYSMEM", "FBMEM", "ZCMEM", "RDMEM", "SOCKMEM")
MACHINE_FIELDS = {"schema?": str, "nodes": AtLeast(1, integer=True), "processors": {str: (_COUNT, [_COUNT])},
                  "memories?": [{"kind": OneOf(MEMORY_KINDS), "node": _COUNT, "capacity?": _COUNT,
                                 "procs?": {str: [_COUNT]}}]}
PROC_KINDS = ("CPU", "GPU", "UTIL", "IO", "PY", "OMP")

# Capacities of the synthetic machines of `parse_machine_spec` (Realm's defaults for -ll:csize and -ll:zsize; a
# framebuffer of 16 GiB): they only matter to tools that report sizes.
SYNTHETIC_SYSMEM = 512 << 20
SYNTHETIC_ZCMEM = 64 << 20
SYNTHETIC_FBMEM = 16 << 30
# Realm's flags that size (RDMEM, SOCKMEM: create) a memory kind, in MiB.
SIZE_FLAGS = {"-ll:csize": "SYSMEM", "-ll:fsize": "FBMEM", "-ll:zsize": "ZCMEM", "-ll:rsize": "RDMEM",
              "-ll:nsize": "SOCKMEM"}


class DescriptionError(MapperoptError):
    """A description is not valid JSON of its schema."""


class MachineSpecError(DescriptionError, UsageError):
    """--machine's text is no machine, or a run's flag contradicts it (`parse_machine_spec`): a usage error."""


def _load(data: dict | str, what: str) -> dict:
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            raise DescriptionError(f"{what} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise DescriptionError(f"{what} must be a JSON object, not {type(data).__name__}")
    return data


def _get(obj: dict, key: str, what: str, default=KeyError):
    if key in obj:
        return obj[key]
    if default is KeyError:
        raise DescriptionError(f"{what} has no '{key}'")
    return default


# ---------------------------------------------------------------------------------------------------- application


def _names_by_kind(obj: dict, key: str, what: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """`obj[key]`, an object of variant names by processor kind ({"CPU": ["axpy", "axpy_raw"]}), as pairs."""
    names = obj.get(key, {})
    if not isinstance(names, dict) or not all(isinstance(v, list) and all(isinstance(n, str) for n in v)
                                              for v in names.values()):
        raise DescriptionError(f"{what} has {key} {names!r}; expected an object of variant names by processor kind, "
                               "e.g. {\"CPU\": [\"axpy\", \"axpy_raw\"]}")
    return tuple((k, tuple(v)) for k, v in names.items())


def _field_sizes(r: dict) -> tuple[int, ...]:
    """A requirement's `field_sizes` (bytes, one per field); () where absent or not one positive integer per field
    (the sizes only inform warnings: a description that lacks them stays usable)."""
    sizes = r.get("field_sizes")
    if not isinstance(sizes, list) or len(sizes) != len(r.get("fields", ())) or not all(
            isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in sizes):
        return ()
    return tuple(sizes)


def _launches(t: dict, what: str) -> tuple[tuple[str, int], ...]:
    """A task's `launches` ({"index": 2, "single": 1}) as pairs; () where absent (an older description)."""
    launches = t.get("launches", {})
    if not isinstance(launches, dict) or not all(
            k in ("index", "single") and isinstance(n, int) and not isinstance(n, bool) and n >= 0
            for k, n in launches.items()):
        raise DescriptionError(f"{what} has launches {launches!r}; expected an object of launch counts by launch "
                               "kind, e.g. {\"index\": 2, \"single\": 1}")
    return tuple(launches.items())


def _other_regions(t: dict, what: str) -> tuple[tuple[OtherRegions, ...] | None, int]:
    """A task's `other_regions` ({"groups": [...], "unlisted": n}) as (groups, unlisted); (None, 0) where absent (a
    description discovered before launches were compared)."""
    other = t.get("other_regions")
    if other is None:
        return None, 0

    def is_count(n) -> bool:
        return isinstance(n, int) and not isinstance(n, bool) and n >= 0

    try:
        groups = tuple(OtherRegions(
            g["kind"], tuple((a, b, c) for a, b, c in g["launches"]),
            tuple((a["index"], tuple(a["regions"])) for a in g["args"])) for g in other["groups"])
        valid = is_count(other["unlisted"]) and all(
            g.kind in ("index", "single") and g.launches and g.args
            and all(is_count(n) for run in g.launches for n in run)
            and all(is_count(i) and all(n is None or isinstance(n, str) for n in names) for i, names in g.args)
            for g in groups)
    except (KeyError, TypeError, ValueError):
        valid = False
    if not valid:
        raise DescriptionError(f"{what} has other_regions {other!r}; expected an object of launch groups, e.g. "
                               "{\"groups\": [{\"kind\": \"index\", \"launches\": [[2, 6, 2]], "
                               "\"args\": [{\"index\": 0, \"regions\": [\"next\"]}]}], \"unlisted\": 0}")
    return groups, other["unlisted"]


@dataclass(frozen=True)
class RegionArg:
    """One region requirement of a task.

    Attributes:
        index: position in the task's requirements (0-based).
        names: the name chain, nearest name first, ancestors after (dsl-reference.md §6.2); may be empty.
        privilege: one of PRIVILEGES.
        fields: field names.
        redop: reduction operator name (e.g. "sum_f32") for `reduce`, else None.
        layout: "C_order" or "F_order" when the task's variants require instances with that dimension order (a
            BLAS kernel that needs row-major tiles), else None.
        interleave: "SOA" when the variants reject AOS instances (a kernel that walks one field with unit stride),
            "AOS" when they reject SOA ones (a kernel that reads each element's fields as one struct), else None.
        layout_kinds: the processor kinds whose variants have these requirements (the CPU stencil kernel; its GPU
            variant takes any layout); empty: every kind.
        required_memory: (processor kind, memory kind) pairs: the memory kind the variant for that processor kind
            requires (its layout constraint's memory constraint); empty: any.
        required_align: (processor kind, operator, bytes) triples: the alignment the variant for that processor kind
            requires of the requirement's fields (its layout constraint's alignment constraint, e.g. ("CPU", ">=",
            128)); empty: any.
        field_sizes: the size in bytes of each field of `fields`, in order, where discovery saw them (a user's
            program); empty where unknown (a benchmark's description).
        constrained_by: (processor kind, variant names) pairs, for a kind with several variants: those of its
            variants whose layout constraints set `layout`, `interleave`, `required_memory` or `required_align` (the
            first variant that fixes an aspect sets it; Legion's default mapper picks the variant that runs).
        collective: Legion maps it with every point of the task's index launch together (each point reads or
            reduces into this one region, or it has collective coherence; dsl-reference.md §7.4).
    """

    index: int
    names: tuple[str, ...]
    privilege: str
    fields: tuple[str, ...] = ()
    redop: str | None = None
    layout: str | None = None
    interleave: str | None = None
    layout_kinds: tuple[str, ...] = ()
    required_memory: tuple[tuple[str, str], ...] = ()
    collective: bool = False
    required_align: tuple[tuple[str, str, int], ...] = ()
    field_sizes: tuple[int, ...] = field(default=(), compare=False)
    constrained_by: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def name(self) -> str | None:
        """The nearest name, or None for an unnamed region."""
        return self.names[0] if self.names else None

    def to_json(self) -> dict:
        out = {"index": self.index, "names": list(self.names), "privilege": self.privilege, "fields": list(self.fields)}
        if self.redop is not None:
            out["redop"] = self.redop
        if self.layout is not None:
            out["layout"] = self.layout
        if self.interleave is not None:
            out["interleave"] = self.interleave
        if self.layout_kinds:
            out["layout_kinds"] = list(self.layout_kinds)
        if self.required_memory:
            out["required_memory"] = dict(self.required_memory)
        if self.collective:
            out["collective"] = True
        if self.required_align:
            out["required_align"] = {k: {"op": op, "bytes": n} for k, op, n in self.required_align}
        if self.field_sizes:
            out["field_sizes"] = list(self.field_sizes)
        if self.constrained_by:
            out["constrained_by"] = {k: list(v) for k, v in self.constrained_by}
        return out


@dataclass(frozen=True)
class OtherRegions:
    """Launches of a task, of one kind, whose arguments are on other regions than those of the launch its
    description shows (its first index launch, else its first single launch).

    Attributes:
        kind: "index" or "single".
        launches: their numbers among the task's launches of `kind` in discovery (1: the first mapped), as runs of
            equal steps (first, last, step): (2, 40, 2) is every second launch from 2 to 40.
        args: (argument index, the names of the regions its points use: sorted, None for an unnamed one, () where
            these launches have no such argument) for each argument that differs.
    """

    kind: str
    launches: tuple[tuple[int, int, int], ...]
    args: tuple[tuple[int, tuple[str | None, ...]], ...]

    def to_json(self) -> dict:
        return {"kind": self.kind, "launches": [list(run) for run in self.launches],
                "args": [{"index": i, "regions": list(names)} for i, names in self.args]}


@dataclass(frozen=True)
class TaskInfo:
    """One task of an application.

    Attributes:
        name: registered task name.
        variants: processor kinds with a registered variant ("CPU", "GPU", ...).
        launch: "index", "single" or "both".
        inner: the variant is an inner task (maps its regions virtually).
        leaf: the variant is a leaf task.
        parent: name of the task that launches it, or None for the top-level task.
        domain: extents of its index launches at the described size, or None.
        regions: its region requirements in order.
        variant_names: (processor kind, variant names) pairs for the kinds with several variants (discovered;
            Legion's default mapper picks the one that runs).
        variant_ran: (processor kind, variant name) pairs: of those kinds, the variant discovery's run ran.
        launches: (launch kind, count) pairs: how many "index" and "single" launches of the task discovery's run
            mapped (a launch Legion replays from a trace is not mapped, so not counted); `regions` are the first
            launch's only, and a later one may use other regions, fields or privileges. Empty where not known (a
            benchmark's description, or one discovered before launches were counted).
        other_regions: the launches whose arguments are on other regions than those of `regions` (discovery's trace
            records every launch's region names, not its fields or privileges), the first few groups where many
            differ; () where every launch is on the same regions, None where not known (as for `launches`, or
            discovered before launches were compared).
        other_unlisted: how many more launches are on other regions, in groups `other_regions` does not list.
    """

    name: str
    variants: tuple[str, ...]
    launch: str
    inner: bool = False
    leaf: bool = True
    parent: str | None = None
    domain: tuple[int, ...] | None = None
    regions: tuple[RegionArg, ...] = ()
    variant_names: tuple[tuple[str, tuple[str, ...]], ...] = ()
    variant_ran: tuple[tuple[str, str], ...] = ()
    launches: tuple[tuple[str, int], ...] = field(default=(), compare=False)
    other_regions: tuple[OtherRegions, ...] | None = field(default=None, compare=False)
    other_unlisted: int = field(default=0, compare=False)

    @property
    def index_launched(self) -> bool:
        return self.launch in ("index", "both")

    @property
    def single_launched(self) -> bool:
        return self.launch in ("single", "both")

    def to_json(self) -> dict:
        return {
            "name": self.name, "variants": list(self.variants), "launch": self.launch, "inner": self.inner,
            "leaf": self.leaf, "parent": self.parent, "domain": None if self.domain is None else list(self.domain),
            "regions": [r.to_json() for r in self.regions],
            **({"variant_names": {k: list(v) for k, v in self.variant_names}} if self.variant_names else {}),
            **({"variant_ran": dict(self.variant_ran)} if self.variant_ran else {}),
            **({"launches": dict(self.launches)} if self.launches else {}),
            **({"other_regions": {"groups": [g.to_json() for g in self.other_regions],
                                  "unlisted": self.other_unlisted}} if self.other_regions is not None else {}),
        }


@dataclass(frozen=True)
class RegionNode:
    """A named logical region or partition: `kind` is "region" or "partition"; `parent` None for a root."""

    name: str
    kind: str
    parent: str | None = None

    def to_json(self) -> dict:
        return {"name": self.name, "kind": self.kind, "parent": self.parent}


@dataclass(frozen=True)
class TunableInfo:
    """A tunable the application asks its mapper for, as discovery saw it answered: `id`, `value`, `type` ("int8",
    "int16", "int32" or "int64": the size of the answer the program reads), and `legion`: True when Legion's default
    mapper answered it (one of its IDs, 0-10, in a program without a mapper of its own), not the program's mapper."""

    id: int
    value: int
    type: str
    legion: bool = False

    def to_json(self) -> dict:
        return {"id": self.id, "value": self.value, "type": self.type, **({"legion": True} if self.legion else {})}


@dataclass(frozen=True)
class AppDescription:
    """What an application prints with `--describe` (docs/dsl-reference.md §12).

    Attributes:
        app: benchmark name.
        tasks: every task the mapper may see, in the application's order.
        region_tree: every named region and partition.
        tunables: the tunables the program asked for in discovery (a benchmark asks for none).
        keep_app_mapper: the run keeps the program's own mapper, which answers the tunables the DSL does not
            (the application file's `keep_app_mapper`; not part of what the program describes).
        discovered_as: for a user's program, the command line discovery ran it with: its tasks are those that run
            launched, and other flags may launch others; None for a benchmark's description, which lists them all.
        own_mapper: the name of the mapper the program registers itself (replace_default_mapper, add_mapper),
            which a DSL mapper displaces unless the run keeps it (`keep_app_mapper`); None: none, or not known.
        given_as: the options that gave this program to the command that checks a mapper against it (`--app X`,
            `--size S`, then `--` and the flags after it, if any), for hints to paste back; empty where unknown (not
            part of what the program describes).
        built: a user's program's executable and when it was last written (`userapp.built_as`), for a hint that
            names the program's missing region names: an executable older than its sources lacks names added since;
            empty where unknown (not part of what the program describes).
    """

    app: str
    tasks: tuple[TaskInfo, ...]
    region_tree: tuple[RegionNode, ...] = ()
    tunables: tuple[TunableInfo, ...] = ()
    keep_app_mapper: bool = False
    discovered_as: str | None = None
    own_mapper: str | None = None
    given_as: tuple[str, ...] = field(default=(), compare=False)
    built: str = field(default="", compare=False)

    def task(self, name: str) -> TaskInfo | None:
        """The task named `name`, or None."""
        for t in self.tasks:
            if t.name == name:
                return t
        return None

    @property
    def task_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tasks)

    @cached_property
    def top_level(self) -> TaskInfo | None:
        """The top-level task (it has no parent): the listed task without a parent that launches listed tasks (a
        discovered description lists it), else, when the tasks name a parent that is not listed (a benchmark's
        `--describe` leaves it out), that parent, as a single-launched CPU task without requirements. None when
        neither is known."""
        names = set(self.task_names)
        parents = [t.parent for t in self.tasks if t.parent is not None]
        listed = [t for t in self.tasks if t.parent is None and t.name in parents]
        if listed:
            return listed[0]
        unlisted = [p for p in parents if p not in names]
        return TaskInfo(unlisted[0], ("CPU",), "single", leaf=False) if unlisted else None

    @property
    def region_names(self) -> tuple[str, ...]:
        """Every region and partition name that appears in a requirement's chain or in the tree, sorted."""
        names = {n.name for n in self.region_tree}
        for t in self.tasks:
            for r in t.regions:
                names.update(r.names)
        return tuple(sorted(names))

    def point_subregion(self, task: TaskInfo, arg: RegionArg) -> tuple[tuple[str, ...], str | None]:
        """For requirement `arg` of `task`, discovered: (the names of its chain that name the subregion itself, its
        region and index space, and the next name up, of its partition or parent region) when the task is index
        launched and the region is a subregion of another, one point's (discovery records the first point it maps of
        each task's first launch; a launch over the partition gives each point its own subregion, which may have a
        name of its own), else ((), None)."""
        if not self.discovered_as or not task.index_launched:
            return (), None
        kinds = {n.name: n.kind for n in self.region_tree}
        own: list[str] = []
        for k, name in enumerate(arg.names):
            kind = kinds.get(name)
            if kind in ("partition", "index_partition") or (kind == "region" and k > 0):
                return (tuple(own), name) if own else ((), None)
            if kind not in ("region", "index_space"):
                break
            own.append(name)
        return (), None

    def other_launch_chains(self, task: TaskInfo, group: OtherRegions) -> dict[int, tuple[str, ...]]:
        """{argument index: name chain} of the arguments of `group`'s launches of `task` on one region each, from its
        nearest name (discovery's trace records that name only): a requirement's chain from that name where one has
        it, else the name, its parents in the region tree and the field space of the first launch's argument. Where
        these hold no region, the first launch's chain of the argument with that name for its nearest and, for its
        root region, the one root region of the first launch that no argument of these launches is under (a
        ping-pong's swap), its other regions and partitions left out (not known). () for an unnamed region."""
        kinds = {n.name: n.kind for n in self.region_tree}
        parents = {n.name: n.parent for n in self.region_tree}
        first = {r.index: r.names for r in task.regions}

        def root(chain) -> str | None:
            return next((n for n in reversed(chain) if kinds.get(n) == "region"), None)

        out: dict[int, tuple[str, ...]] = {}
        for i, names in group.args:
            if names == (None,):
                out[i] = ()
            elif len(names) == 1:
                chain = next((r.names[r.names.index(names[0]):] for t in self.tasks for r in t.regions
                              if names[0] in r.names), None)
                if chain is None:
                    walk = [names[0]]
                    while (up := parents.get(walk[-1])) is not None and up not in walk:
                        walk.append(up)
                    chain = (*walk, *(n for n in first.get(i, ()) if kinds.get(n) == "field_space"))
                out[i] = chain
        # the root regions of the first launch that no argument of these launches is under: one is the swap's
        used = {root(c) for c in out.values()} | {root(c) for i, c in first.items() if i not in out}
        left = {root(c) for c in first.values()} - used - {None}
        partner = left.pop() if len(left) == 1 else None
        for i, chain in out.items():
            if chain and root(chain) is None and i in first:
                was = root(first[i])
                out[i] = (chain[0], *(partner if n == was else n for n in first[i][1:]
                                      if (n == was and partner) or kinds.get(n) not in ("region", "partition")))
        return out

    @classmethod
    def from_json(cls, data: dict | str) -> AppDescription:
        """Build from the parsed JSON object (or its text). Raises DescriptionError when it is malformed."""
        obj = _load(data, "the application description")
        schema = obj.get("schema")
        if schema != APP_SCHEMA:
            raise DescriptionError(f"the application description has schema {schema!r}; expected {APP_SCHEMA!r}")
        tasks = []
        for t in _get(obj, "tasks", "the application description"):
            what = f"task {t.get('name', '?')!r}"
            launch = _get(t, "launch", what)
            if launch not in LAUNCHES:
                raise DescriptionError(f"{what} has launch {launch!r}; expected one of {', '.join(LAUNCHES)}")
            regions = []
            for i, r in enumerate(_get(t, "regions", what, [])):
                privilege = _get(r, "privilege", f"requirement {i} of {what}")
                if privilege not in PRIVILEGES:
                    raise DescriptionError(f"requirement {i} of {what} has privilege {privilege!r}")
                if r.get("layout") not in (None, "C_order", "F_order"):
                    raise DescriptionError(f"requirement {i} of {what} has layout {r['layout']!r}; expected C_order "
                                           "or F_order")
                if r.get("interleave") not in (None, "SOA", "AOS"):
                    raise DescriptionError(f"requirement {i} of {what} has interleave {r['interleave']!r}; expected "
                                           "SOA or AOS")
                required = r.get("required_memory", {})
                if not isinstance(required, dict) or not all(isinstance(v, str) for v in required.values()):
                    raise DescriptionError(f"requirement {i} of {what} has required_memory {required!r}; expected an "
                                           "object of memory kinds by processor kind, e.g. {\"CPU\": \"SYSMEM\"}")
                align = r.get("required_align", {})
                if not isinstance(align, dict) or not all(
                        isinstance(v, dict) and v.get("op") in ("==", "!=", "<", "<=", ">", ">=")
                        and isinstance(v.get("bytes"), int)
                        for v in align.values()):
                    raise DescriptionError(f"requirement {i} of {what} has required_align {align!r}; expected an "
                                           "object of alignments by processor kind, e.g. "
                                           "{\"CPU\": {\"op\": \">=\", \"bytes\": 128}}")
                regions.append(RegionArg(int(r.get("index", i)), tuple(r.get("names", ())), privilege,
                                         tuple(r.get("fields", ())), r.get("redop"), r.get("layout"),
                                         r.get("interleave"), tuple(r.get("layout_kinds", ())),
                                         tuple(required.items()), bool(r.get("collective", False)),
                                         tuple((k, v["op"], v["bytes"]) for k, v in align.items()),
                                         _field_sizes(r), _names_by_kind(r, "constrained_by", what)))
            domain = t.get("domain")
            other, unlisted = _other_regions(t, what)
            tasks.append(TaskInfo(
                name=_get(t, "name", "a task"), variants=tuple(_get(t, "variants", what)), launch=launch,
                inner=bool(t.get("inner", False)), leaf=bool(t.get("leaf", True)), parent=t.get("parent") or None,
                domain=None if not domain else tuple(int(x) for x in domain), regions=tuple(regions),
                variant_names=_names_by_kind(t, "variant_names", what),
                variant_ran=tuple((k, str(v)) for k, v in t.get("variant_ran", {}).items()),
                launches=_launches(t, what),
                other_regions=other, other_unlisted=unlisted,
            ))
        tree = tuple(RegionNode(n["name"], n["kind"], n.get("parent")) for n in obj.get("region_tree", ()))
        tunables = []
        for t in obj.get("tunables", ()):
            what = f"tunable {t.get('id', '?')!r}"
            tunables.append(TunableInfo(int(_get(t, "id", what)), int(_get(t, "value", what)), _get(t, "type", what),
                                        bool(t.get("legion", False))))
        return cls(_get(obj, "app", "the application description"), tuple(tasks), tree, tuple(tunables),
                   bool(obj.get("keep_app_mapper", False)), obj.get("discovered_as"), obj.get("own_mapper"))

    def to_json(self) -> dict:
        out = {"schema": APP_SCHEMA, "app": self.app, "tasks": [t.to_json() for t in self.tasks],
               "region_tree": [n.to_json() for n in self.region_tree]}
        if self.tunables:
            out["tunables"] = [t.to_json() for t in self.tunables]
        if self.keep_app_mapper:
            out["keep_app_mapper"] = True
        if self.discovered_as:
            out["discovered_as"] = self.discovered_as
        if self.own_mapper:
            out["own_mapper"] = self.own_mapper
        return out


# ---------------------------------------------------------------------------------------------------- machine


@dataclass(frozen=True)
class MemoryInfo:
    """One memory: `kind` (one of `MEMORY_KINDS`), `node`, `capacity` in bytes, and `procs`, per
    processor kind, the indices (within the node, Realm order) of the processors with affinity to it."""

    kind: str
    node: int
    capacity: int
    procs: tuple[tuple[str, tuple[int, ...]], ...] = ()

    def visible_from(self, proc_kind: str, index: int) -> bool:
        """Whether processor `index` of kind `proc_kind` on this memory's node has affinity to it."""
        return any(k == proc_kind and index in ids for k, ids in self.procs)

    def to_json(self) -> dict:
        return {"kind": self.kind, "node": self.node, "capacity": self.capacity,
                "procs": {k: list(ids) for k, ids in self.procs}}


@dataclass(frozen=True)
class MachineDescription:
    """Processors and memories of a machine (docs/dsl-reference.md §12).

    Attributes:
        nodes: number of nodes (Legion address spaces).
        processors: per kind, the processor count of each node (`counts[node]`).
        memories: every memory, in Realm's order.
        given_as: the option that described this machine to the command checking a mapper on it (`--machine 2x4`),
            as its messages name it; empty for the machine a run sees ("this machine").
    """

    nodes: int
    processors: tuple[tuple[str, tuple[int, ...]], ...]
    memories: tuple[MemoryInfo, ...] = ()
    given_as: str = field(default="", compare=False)

    def count(self, kind: str, node: int = 0) -> int:
        """Processors of `kind` on `node` (0 for a kind the description does not list)."""
        for k, counts in self.processors:
            if k == kind:
                return counts[node] if node < len(counts) else 0
        return 0

    def per_node(self, kind: str) -> int:
        """Processors of `kind` per node. Raises DescriptionError when the nodes differ (dsl-reference.md §9.1)."""
        counts = {self.count(kind, n) for n in range(self.nodes)}
        if len(counts) > 1:
            raise DescriptionError(f"the nodes have different numbers of {kind} processors: {sorted(counts)}")
        return counts.pop() if counts else 0

    def memories_of(self, kind: str, node: int | None = None) -> list[MemoryInfo]:
        """Memories of `kind`, on `node` when given."""
        return [m for m in self.memories if m.kind == kind and (node is None or m.node == node)]

    def visible(self, mem_kind: str, proc_kind: str, node: int, index: int) -> list[MemoryInfo]:
        """Memories of `mem_kind` with affinity to processor `index` of `proc_kind` on `node`."""
        return [m for m in self.memories_of(mem_kind, node) if m.visible_from(proc_kind, index)]

    @classmethod
    def from_json(cls, data: dict | str) -> MachineDescription:
        """Build from the parsed JSON object (or its text). Raises DescriptionError when it is malformed."""
        obj = _load(data, "the machine description")
        schema = obj.get("schema", MACHINE_SCHEMA)
        if schema != MACHINE_SCHEMA:
            raise DescriptionError(f"the machine description has schema {schema!r}; expected {MACHINE_SCHEMA!r}")
        nodes = int(_get(obj, "nodes", "the machine description"))
        procs = []
        for kind, counts in _get(obj, "processors", "the machine description").items():
            counts = [counts] * nodes if isinstance(counts, int) else list(counts)
            if len(counts) != nodes:
                raise DescriptionError(f"processors[{kind!r}] lists {len(counts)} node{'s' * (len(counts) != 1)}; "
                                       f"the machine has {nodes}")
            procs.append((kind, tuple(int(c) for c in counts)))
        mems = tuple(
            MemoryInfo(m["kind"], int(m["node"]), int(m.get("capacity", 0)),
                       tuple((k, tuple(int(i) for i in ids)) for k, ids in m.get("procs", {}).items()))
            for m in obj.get("memories", ())
        )
        machine = cls(nodes, tuple(procs), mems)
        for i, m in enumerate(mems):  # a memory of a node or with affinity to a processor that is not there
            if m.node >= nodes:
                raise DescriptionError(f"memories[{i}].node is {m.node}, but the machine has {nodes} "
                                       f"node{'s' * (nodes != 1)}")
            for kind, ids in m.procs:
                n = machine.count(kind, m.node)
                bad = next((j for j, index in enumerate(ids) if index >= n), None)
                if bad is not None:
                    raise DescriptionError(f"memories[{i}].procs.{kind}[{bad}] is {ids[bad]}, but node {m.node} has "
                                           f"{n} {kind} processor{'s' * (n != 1)}")
        return machine

    def to_json(self) -> dict:
        return {"schema": MACHINE_SCHEMA, "nodes": self.nodes,
                "processors": {k: list(c) for k, c in self.processors},
                "memories": [m.to_json() for m in self.memories]}

    def describe(self) -> str:
        """The machine in words, e.g. "1 node of 1 CPU and 1 GPU (memories SYSMEM 512 MiB, FBMEM 16 GiB, ZCMEM 64 MiB)".
        Counts and memories are those of node 0."""
        def size(n: int) -> str:
            return f"{n >> 30} GiB" if n >= 1 << 30 and not n % (1 << 30) else f"{n / (1 << 20):.0f} MiB"

        mems = ", ".join(f"{m.kind} {size(m.capacity)}" for m in self.memories_of("SYSMEM", 0)[:1]
                         + self.memories_of("FBMEM", 0)[:1] + self.memories_of("ZCMEM", 0)[:1]
                         + self.memories_of("RDMEM", 0)[:1] + self.memories_of("SOCKMEM", 0)[:1])
        return self.counts() + (f" (memories {mems})" if mems else "")

    def counts(self) -> str:
        """The machine's shape in words, as every message names it: "1 node of 1 CPU", "2 nodes of 1 CPU and 4 GPUs
        each", "1 node of 1 CPU and 2 IO" (per-node counts of node 0; OMP, IO and PY processors where the run's
        flags create them, utility processors never)."""
        words = [f"{self.count(k)} {k}{'s' if self.count(k) != 1 and k in ('CPU', 'GPU') else ''}"
                 for k in ("CPU", "GPU", "OMP", "IO", "PY") if k == "CPU" or self.count(k)]
        procs = ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else words[0]
        nodes = f"{self.nodes} node{'s' if self.nodes != 1 else ''}"
        return f"{nodes} of {procs}" + (" each" if self.nodes > 1 else "")


MACHINE_SPEC = "NODESxGPUS[xCPUS]"
# The labelled form names each count, so that "1 GPU" cannot be read as "1 CPU": `1node,4gpu`, `2cpu`, `2n4g2c`.
_PART = r"(\d+)\s*(nodes?|n|gpus?|g|cpus?|c)"
_LABELLED_PART = re.compile(_PART, re.IGNORECASE)
# Separators only between counts: a trailing `x` (`4gpux`) is a typo, not 4 GPUs.
_LABELLED_SPEC = re.compile(rf"\s*{_PART}(?:[\s,x+]*{_PART})*\s*", re.IGNORECASE)
# Counts of kinds Legion has that the synthetic machine leaves out (OMP, IO, PY; UTIL is one per node).
_OTHER_KIND = re.compile(r"\d+\s*(omps?|ios?|pys?|utils?)\b", re.IGNORECASE)
# Realm's size arguments: a number with an optional unit (k, m, g, t: powers of 1024; b: bytes) and an optional
# trailing b (`80GB`), any case; without a unit, the flag's own (MiB for the memory flags).
_REALM_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)(?:([kmgt])b?|(b))?\s*", re.IGNORECASE)
_REALM_UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "b": 1}
SIZE_HINT = "a number of MiB or one with a unit, as Realm takes it: e.g. 64, 512m, 80G, 1.5g"


def realm_size(value: str, default_unit: str = "m") -> int | None:
    """The bytes a Realm size argument gives (`-ll:fsize 80G`: 80 GiB; `-ll:csize 64`: 64 MiB with `default_unit`
    "m"), as Realm's command-line parser reads it; None when it is not one."""
    m = _REALM_SIZE.fullmatch(str(value))
    if not m:
        return None
    unit = (m[2] or m[3] or default_unit).lower()
    return int(float(m[1]) * _REALM_UNITS[unit])


def parse_machine_spec(spec: str, run_flags: Sequence[str] = ()) -> MachineDescription:
    """A synthetic machine from `NODESxGPUS[xCPUS]` (CPUS defaults to 1; e.g. "2x4", "1x0x4") or from labelled counts
    in any order (`4gpu`, `2cpu`, `2nodes,4gpus,2cpus`, `2n4g2c`; unnamed: 1 node, 0 GPU, 1 CPU per node).

    Each node has one UTIL processor, a SYSMEM with affinity to all its CPUs and GPUs, one FBMEM per GPU (affinity to
    that GPU), and, when it has GPUs, one ZCMEM with affinity to its CPUs and GPUs. Among `run_flags` (a run's
    command line), the memory flags apply as Realm applies them, sizes as Realm reads them (`realm_size`: MiB
    without a unit, `80G`): `-ll:csize`, `-ll:fsize`, `-ll:zsize`
    size those memories (`-ll:zsize 0`: no ZCMEM; without GPUs, none either), `-ll:rsize` and `-ll:nsize` add an RDMEM
    and a SOCKMEM per node with affinity to its CPUs; `-ll:cpu N` and `-ll:gpu N` must agree with the machine's counts
    per node (the machine gives them); other flags are ignored.

    Raises:
        MachineSpecError (a DescriptionError and a UsageError): the text is of neither form, names a count twice,
            or a count is out of range (nodes >= 1, CPUs >= 1, at most 2^20 processors of one kind in all, as the
            DSL's machine models allow); a memory flag's size is not a size; `-ll:cpu` or `-ll:gpu` contradicts the
            machine.
    """
    from mapperopt.dsl.machine import MAX_PROCS

    hint = ("e.g. --machine 2x4 (2 nodes of 4 GPUs and 1 CPU), 1x0x2 (1 node of 2 CPUs), or labelled: 4gpu, 2cpu, "
            "2node,4gpu")
    m = re.fullmatch(r"\s*(\d+)x(\d+)(?:x(\d+))?\s*", spec)
    if m:
        nodes, gpus, cpus = int(m[1]), int(m[2]), int(m[3]) if m[3] else 1
    else:
        counts: dict[str, int] = {}
        other = _OTHER_KIND.search(spec)
        if other:  # a kind Legion has but the synthetic machine does not describe
            kind = other[1].upper()
            comes = ("every node has one UTIL processor" if kind == "UTIL" else
                     "mapperopt's Legion has no OpenMP processors" if kind == "OMP" else
                     f"a run gets them with Realm's -ll:{kind.lower()} N; without --machine, the machine checked "
                     f"is this one as that run sees it: `-- -ll:{kind.lower()} N`")
            raise MachineSpecError(f"machine '{spec}': --machine describes nodes, GPUs and CPUs only, not {kind} "
                                   f"processors ({comes})", hint=hint)
        if not _LABELLED_SPEC.fullmatch(spec):
            raise MachineSpecError(f"machine '{spec}' is neither of the form {MACHINE_SPEC} (numbers only, e.g. "
                                   "4x4x32) nor labelled counts (a unit on every count, e.g. 4n4g32c or "
                                   "4node,4gpu,32cpu)", hint=hint)
        for value, unit in _LABELLED_PART.findall(spec):
            key = unit[0].lower()
            if key in counts:
                what = {"n": "node", "g": "GPU", "c": "CPU"}[key]
                raise MachineSpecError(f"machine '{spec}' gives the {what} count twice", hint=hint)
            counts[key] = int(value)
        nodes, gpus, cpus = counts.get("n", 1), counts.get("g", 0), counts.get("c", 1)
    if nodes < 1 or cpus < 1:
        raise MachineSpecError(f"machine '{spec}' needs at least one node and one CPU per node", hint=hint)
    # every node has one UTIL processor: the node count is a processor count too
    for kind, total in (("node", nodes), ("GPU", nodes * gpus), ("CPU", nodes * cpus)):
        if total > MAX_PROCS:
            raise MachineSpecError(f"machine '{spec}' has {total} {kind}s{' in all' if kind != 'node' else ''}: at "
                                   f"most {MAX_PROCS} processors of one kind in all are supported (each node has one "
                                   "UTIL processor)", hint=hint)
    counts = {"CPU": cpus, "GPU": gpus, "UTIL": 1, "IO": 0, "PY": 0, "OMP": 0}
    both = (("CPU", tuple(range(cpus))),) + ((("GPU", tuple(range(gpus))),) if gpus else ())
    sizes = {"SYSMEM": SYNTHETIC_SYSMEM, "FBMEM": SYNTHETIC_FBMEM, "ZCMEM": SYNTHETIC_ZCMEM}
    for k, flag in enumerate(run_flags):
        value = str(run_flags[k + 1]) if k + 1 < len(run_flags) else ""
        if flag in SIZE_FLAGS:
            size = realm_size(value)
            if size is None:
                raise MachineSpecError(f"{flag} {value!r}: not a size", hint=SIZE_HINT)
            sizes[SIZE_FLAGS[flag]] = size
        elif flag in ("-ll:cpu", "-ll:gpu") and value != str(counts[flag[4:].upper()]):
            per_node = counts[flag[4:].upper()]
            raise MachineSpecError(
                f"`{flag} {value}` after `--` contradicts --machine {spec} ({per_node} {flag[4:].upper()}"
                f"{'s' if per_node != 1 else ''} per node): --machine gives the processor counts",
                hint=f"drop `{flag} {value}`, or give the counts in --machine")
    cpu_only = (("CPU", tuple(range(cpus))),)
    mems = []
    for n in range(nodes):
        mems.append(MemoryInfo("SYSMEM", n, sizes["SYSMEM"], both))
        mems += [MemoryInfo("FBMEM", n, sizes["FBMEM"], (("GPU", (g,)),)) for g in range(gpus)]
        mems += [MemoryInfo(kind, n, sizes[kind], both if kind == "ZCMEM" else cpu_only)
                 for kind in ("ZCMEM", "RDMEM", "SOCKMEM") if sizes.get(kind) and (gpus or kind != "ZCMEM")]
    return MachineDescription(nodes, tuple((k, (c,) * nodes) for k, c in counts.items()), tuple(mems))
