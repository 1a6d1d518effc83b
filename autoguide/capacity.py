"""Advice for a capacity failure (an instance that does not fit in a memory) that can work on the run's machine.

The machine is read from the run's command line: GPUs (`-ll:gpu`), and the system, framebuffer and zero-copy sizes
(`-ll:csize`, `-ll:fsize`, `-ll:zsize`, MiB). The advice, in this order of preference:

0. A Layout statement of the failed task with AOS and an Align above 16 bytes (AOS pads each field of every element
   to the alignment), or with an Align of at least 1/16 of the failed instance (each field's block starts on it):
   the layout, not the memory, is the likely cause, and the text names only that statement; the edits stay the
   memory's (those the guided search's recorded tuning runs were made with).
1. A framebuffer that is full while zero-copy memory exists: every region framebuffer first with zero-copy memory as
   its fallback (`Region * * GPU FBMEM,ZCMEM;`). The regions the GPU tasks map first keep the framebuffer, the rest
   spills; a Region statement listing ZCMEM first for a big, rarely touched region chooses what spills instead.
2. Any other full memory (system memory on a machine whose CPUs have no other memory, zero-copy memory already
   used as the fallback): the size flag to raise, as the edit `set_memory_size` (a run setting, not a change of the
   program: `mapperopt run ... --csize N` applies it), unless the machine does not have that much memory.
3. A full RDMEM or SOCKMEM, which only the run's Legion flags size (`-ll:rsize`, `-ll:nsize`): a fallback memory
   after it or that flag raised, in words; the rule's own edits stand.

A memory kind is never suggested where the machine does not have it.
"""

from __future__ import annotations

import math
import os
import re
import shlex
from collections.abc import Mapping
from typing import Any

from mapperopt.descriptions import realm_size
from mapperopt.records import Edit, RunResult

# Legion's memory kinds as the default mapper and Realm name them, and the DSL's names.
REALM_KINDS = {"SYSTEM_MEM": "SYSMEM", "GPU_FB_MEM": "FBMEM", "Z_COPY_MEM": "ZCMEM", "REGDMA_MEM": "RDMEM",
               "SOCKET_MEM": "SOCKMEM"}
# The harness option (and Realm flag) that sizes each memory kind, in MiB (Realm's unit: 2**20 bytes).
SIZE_OPTIONS = {"SYSMEM": "csize", "FBMEM": "fsize", "ZCMEM": "zsize"}
# The Realm flag that sizes each memory kind (RDMEM and SOCKMEM have no harness option: the run's flags set them).
LEGION_FLAGS = {"SYSMEM": "-ll:csize", "FBMEM": "-ll:fsize", "ZCMEM": "-ll:zsize", "RDMEM": "-ll:rsize",
                "SOCKMEM": "-ll:nsize"}
MIB = 1 << 20
# The rule categories (rules.yaml) whose matches may name a failed allocation.
CATEGORIES = ("memory.oom", "memory.placement")

_FAILED = re.compile(r"(?P<kind>[A-Z]+): allocation of (?P<bytes>\d+) bytes failed \(capacity (?P<capacity>\d+) bytes")


def memory_sizes(result: RunResult) -> dict[str, int]:
    """The run's memory sizes in MiB by option ("csize", "fsize", "zsize") as its command line set them (a memory
    that the command line does not size has Legion's default, unknown here)."""
    command = str(result.settings.get("command", ""))
    found = ((m.group(1), realm_size(m.group(2))) for m in re.finditer(r"-ll:(csize|fsize|zsize) (\S+)", command))
    return {option: size >> 20 for option, size in found if size is not None}


def machine_memories(result: RunResult) -> set[str]:
    """Memory kinds of the run's machine: SYSMEM always; FBMEM and ZCMEM with GPUs (ZCMEM unless sized 0)."""
    kinds = {"SYSMEM"}
    if result.settings.get("gpus"):
        kinds.add("FBMEM")
        if memory_sizes(result).get("zsize", 1) > 0:
            kinds.add("ZCMEM")
    return kinds


def _physical_mb() -> int | None:
    """This machine's memory in MiB (the runs happen here), None when unknown."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // MIB
    except (ValueError, OSError, AttributeError):
        return None


def failed_allocations(fields: Mapping[str, Any]) -> list[tuple[str, int, int | None]]:
    """(memory kind, bytes asked, capacity in bytes or None) of each failed allocation a matched rule names: the
    `reasons` of R403 (one per listed memory), or the default mapper's `bytes` and `memory`."""
    if fields.get("reasons"):
        return [(m["kind"], int(m["bytes"]), int(m["capacity"])) for m in _FAILED.finditer(fields["reasons"])]
    if fields.get("bytes") and fields.get("memory"):
        return [(REALM_KINDS.get(fields["memory"], fields["memory"]), int(fields["bytes"]), None)]
    return []


def raised_size(current_mb: int | None, capacity: int | None, asked: int) -> int:
    """A size in MiB that holds what was there and twice the instance that failed, rounded up to 256 MiB. The
    current size is the command line's, else the capacity the failure reported, else 0."""
    base = current_mb if current_mb is not None else (capacity // MIB if capacity else 0)
    return 256 * math.ceil((base + 2 * math.ceil(asked / MIB)) / 256)


def advise(fields: Mapping[str, Any], result: RunResult) -> tuple[str, tuple[Edit, ...] | None] | None:
    """The suggestion and edits for a capacity failure, or None when the matched output names no failed
    allocation (then the rule's own texts stand). Edits None: the rule's own edits stand (a full RDMEM or SOCKMEM,
    which only the run's Legion flags size: the suggestion names the flag). A Layout statement whose alignment
    likely made the failed instance that large is named instead, as the cause; the edits stay the memory's, which
    the guided search's recorded tuning runs were made with.

    Args:
        fields: the named groups of the matched rule (R403's `memories`, `index`, `task`, `reasons`, or the default
            mapper's `bytes`, `memory`, `index`, `task`).
        result: the failed run (its command line tells the machine).
    """
    advice = _memory_advice(fields, result)
    failed = failed_allocations(fields)
    padding = _padding(result, str(fields.get("task", "")), failed[-1][1] if failed else 0)
    if advice is not None and padding is None and failed and not _fits_alone(failed[-1][1], None, failed[-1][2]):
        advice = advice[0] + _whole_region(fields, result, failed[-1][0], failed[-1][1]), advice[1]
    if advice is None or padding is None:
        return advice
    # Only the statement: a mapper's author (a language model under `trace`) can change it, not a run setting.
    return padding, advice[1]


def _memory_advice(fields: Mapping[str, Any], result: RunResult) -> tuple[str, tuple[Edit, ...] | None] | None:
    """`advise` without the alignment's sentence."""
    failed = failed_allocations(fields)
    if not failed:
        return None
    kinds = machine_memories(result)
    sizes = memory_sizes(result)
    full = {kind for kind, _, _ in failed}
    kind, asked, capacity = failed[-1]  # the last memory tried: what a fallback or a larger size must absorb
    where = f"requirement {fields.get('index', '?')} of '{fields.get('task', '?')}' ({asked / MIB:.0f} MiB)"
    if "FBMEM" in full and "ZCMEM" in kinds and "ZCMEM" not in full:
        # A benchmark's timed loop is known; a user's program's is not (a profiled run shows where its time goes).
        own = "app_file" in (result.settings or {})
        least = "the program's tasks touch least" if own else "the timed loop touches least"
        suggestion = (
            f"The framebuffer is full: keep in it what fits and spill the rest to zero-copy memory, with "
            f"'Region * * GPU FBMEM,ZCMEM;' (every region framebuffer first; {where} is the first to spill). To choose "
            f"what spills, list ZCMEM first for the biggest regions that {least} "
            f"('Region * <region> GPU ZCMEM,FBMEM;') and keep the small, hot ones in FBMEM; or raise "
            + (f"-ll:fsize {given} (now " if (given := _given_at(result, "-ll:fsize")) else
               f"-ll:fsize (after `--` of the {_command(result)} command; now " if _without_size_options(result)
               else "--fsize (Legion's -ll:fsize; now ")
            + f"{_mb(sizes.get('fsize'), capacity if kind == 'FBMEM' else None)}) if the GPU has more memory."
            + (" A run with --profile shows which of its tasks take the time." if own else "")
            + (_extra_instances(result) if _fits_alone(asked, sizes.get("fsize"), capacity) else ""))
        return suggestion, (Edit("set_region_memory", {"task": "*", "region": "*", "proc": "GPU",
                                                       "memories": ["FBMEM", "ZCMEM"]}),)
    option = SIZE_OPTIONS.get(kind)
    if option is None:
        return _flag_advice(kind, where, asked, capacity, result)
    only = " and the only memory of the CPUs" if kind == "SYSMEM" and kinds == {"SYSMEM"} else ""
    new = raised_size(sizes.get(option), capacity, asked)
    physical = _physical_mb()
    head = (f"{kind} is the full memory{only}: {where} does not fit in its "
            f"{_mb(sizes.get(option), capacity)}.")
    if _fits_alone(asked, sizes.get(option), capacity):
        head = (f"{kind} is the full memory{only}: {where} would fit in its {_mb(sizes.get(option), capacity)} "
                f"alone, but other instances fill it.{_extra_instances(result)}")
    flag = LEGION_FLAGS[kind]
    given = _given_at(result, flag)
    if given is None and _without_size_options(result):  # `check`: only Legion's flag after `--` sizes the memory
        given = "at the end"
    name = flag if given else f"--{option}"
    if kind in ("SYSMEM", "ZCMEM") and physical is not None and new > physical:
        return (f"{head} Raising {name} to {new} MiB would exceed this machine's {physical} MiB: use a smaller "
                f"problem size or a machine with more memory."), ()
    other = " No other memory can take it on this machine." if only else ""
    how = {None: f"Legion's {flag}; mapperopt run/tune --{option} {new}",
           "after `--`": f"`-- {flag} {new}` in the {_command(result)} command",
           "at the end": f"`-- {flag} {new}` at the end of the {_command(result)} command"}.get(
        given, f"{given}: `{flag} {new}`")
    return (f"{head}{other} Raise {name} to {new} MiB ({how}).",
            (Edit("set_memory_size", {"option": option, "mb": new}),))


# Memory kinds in which an instance of a subregion covers the whole top-level region on one node (Legion's
# DefaultMapper and the DSL mapper's default_policy_select_instance_region; FBMEM and ZCMEM get the subregion).
_WHOLE_REGION_KINDS = ("SYSMEM", "RDMEM", "SOCKMEM")


def _whole_region(fields: Mapping[str, Any], result: RunResult, kind: str, asked: int) -> str:
    """The sentence for a failed instance (larger than the memory) of a requirement on a piece (a subregion) in
    `kind`: without `Exact`, on one node the instance covers the whole top-level region, so `asked` bytes are the
    region's, not the piece's; `Layout <task> <region> * Exact;` makes each instance cover only its piece (the
    pieces in one memory at once still take the region's size together). Said as a fact where the application's
    description shows a partition in the requirement's name chain, conditionally where the chain's kinds are
    unknown; "" for a reduction (its instance is the subregion's), a memory that gets the subregion, a root region,
    or a mapper whose Layout statements already give the requirement Exact."""
    task, index = str(fields.get("task", "")), fields.get("index")
    if kind not in _WHOLE_REGION_KINDS or index is None or _has_exact(result, task, int(index)):
        return ""
    chain = re.search(rf"error R403: .*? can hold requirement {index} \((?P<names>[^)]*)\) of task '{re.escape(task)}'",
                      result.log or "")
    names = chain.group("names").split(", ") if chain else []
    from mapperopt.autoguide.explain import _description  # explain imports this module

    desc = _description(result)
    info = desc.task(task) if desc is not None else None
    arg = next((r for r in info.regions if r.index == int(index)), None) if info is not None else None
    if arg is not None and (arg.privilege == "reduce" or arg.redop is not None):
        return ""
    names = list(arg.names) if arg is not None and arg.names else names
    kinds = {n.name: n.kind for n in desc.region_tree} if desc is not None else {}
    piece = next((n for k, n in enumerate(names) if kinds.get(n) in ("partition", "index_partition")
                  or (kinds.get(n) == "region" and k > 0)), None)
    roots = [n for n in names if kinds.get(n) == "region"]
    if kinds and names and piece is None:
        return ""  # the description knows the chain: a top-level region, whose instance is its own
    region = names[0] if names and re.fullmatch(r"[A-Za-z_]\w*", names[0]) else "*"
    exact = f"`Layout {task} {region} * Exact;`"
    size = f"{asked / MIB:.0f} MiB" if asked >= MIB else f"{asked // 1024} KiB"  # as `where` gives it
    if piece is not None:
        whole = f"the whole region '{roots[-1]}'" if roots else "the whole top-level region"
        return (f" The {size} are those of {whole}, not of the piece of '{piece}' that requirement {index} names: on "
                f"one node an instance in {kind} of a subregion covers the whole top-level region (shared by the "
                f"tasks that map its other pieces there), as in Legion's default mapper. {exact} makes each instance "
                f"cover only its piece (an R403 then names the piece's size), but the pieces that stay in {kind} at "
                f"once still need about the region's size together: it fits where fewer of them go there.")
    return (f" If requirement {index} is a piece of a partitioned region, the {size} may be the whole top-level "
            f"region's: on one node an instance in {kind} of a subregion covers the whole top-level region, as in "
            f"Legion's default mapper. {exact} makes each instance cover only its piece (the pieces that stay in "
            f"{kind} at once still need about the region's size together).")


def _has_exact(result: RunResult, task: str, index: int) -> bool:
    """Whether a Layout statement of the mapper with `Exact` may apply to requirement `index` of `task` (its task
    selector names the task or is `*`); True for a mapper that does not parse (nothing is said then)."""
    from mapperopt.dsl import DslSyntaxError, parse
    from mapperopt.dsl import ast as A

    try:
        statements = parse(result.dsl, "<mapper>").statements if result.dsl is not None else []
    except DslSyntaxError:
        return True
    return any(isinstance(s, A.LayoutStmt) and any(c.name == "Exact" for c in s.constraints)
               and (s.tasks.names is None or task in [n.name for n in s.tasks.names])
               and s.region.index in (None, index) for s in statements)


def _without_size_options(result: RunResult) -> bool:
    """Whether the run was made under a mapperopt command without --csize, --fsize and --zsize (discovery's run
    under `check` or `compile`; settings' "command_without_sizes" names it): only Legion's flags after `--` size
    its memories."""
    return bool((result.settings or {}).get("command_without_sizes"))


def _command(result: RunResult) -> str:
    """The mapperopt command whose flags after `--` size the run's memories, as the advice names it: the command
    without size options that made the run (`mapperopt check`), else `mapperopt run/tune`."""
    return f"mapperopt {(result.settings or {}).get('command_without_sizes') or 'run/tune'}"


def _given_at(result: RunResult, flag: str) -> str | None:
    """Where the user gave the run's memory size `flag` (`-ll:fsize`) itself: "after `--`" or "in --app's command"
    (a program given as a command line); None where mapperopt's option or the size set it. Next to such a flag,
    mapperopt refuses its option with another value (`apps.require_one_value`): the flag is the one to raise."""
    settings = result.settings or {}
    if flag in settings.get("extra_args", ()):
        return "after `--`"
    words = shlex.split(settings.get("app_options") or "")  # `--app 'CMD ARGS'` for a program given so
    given_as_command = "app_file" in settings and settings["app_file"] is None and words[:1] == ["--app"]
    return "in --app's command" if given_as_command and flag in shlex.split(" ".join(words[1:2])) else None


def _flag_advice(kind: str, where: str, asked: int, capacity: int | None,
                 result: RunResult) -> tuple[str, None] | None:
    """The suggestion for a full memory that only a Legion flag of the run sizes (RDMEM: -ll:rsize, SOCKMEM:
    -ll:nsize): a fallback memory after it, or a larger size (where this machine has the memory for it)."""
    flag = LEGION_FLAGS.get(kind)
    if flag is None:
        return None
    given = re.search(rf"{flag} (\S+)", str(result.settings.get("command", "")))
    size = realm_size(given.group(1)) if given else None
    current = None if size is None else size >> 20
    new = raised_size(current, capacity, asked)
    physical = _physical_mb()
    text = (f"{kind} is the full memory: {where} does not fit in its {_mb(current, capacity)} (Legion's {flag} sizes "
            f"it). List a memory kind that can hold it after {kind} in the Region statements, e.g. '{kind},SYSMEM'")
    if physical is not None and new > physical:
        return f"{text}; this machine's {physical} MiB cannot take a {flag} of {new} MiB.", None
    return f"{text}, or raise its size: `-- {flag} {new}` at the end of the {_command(result)} command.", None


def _fits_alone(asked: int, size_mb: int | None, capacity: int | None) -> bool:
    """Whether an allocation of `asked` bytes fits in the empty memory (its size in MiB from the command line, else
    the capacity the failure reported): then other instances filled it."""
    total = size_mb * MIB if size_mb is not None else capacity
    return total is not None and asked <= total


def _extra_instances(result: RunResult) -> str:
    """A sentence naming the mapper's Layout statements that name tasks (with their lines): each gives those tasks'
    instances a layout that the other tasks', the producers' above all, need not have, so that the same data gets
    a second instance; "" for none (or a mapper that does not parse)."""
    from mapperopt.dsl import DslSyntaxError, parse
    from mapperopt.dsl import ast as A
    from mapperopt.dsl.formatter import format_statement

    try:
        statements = parse(result.dsl, "<mapper>").statements if result.dsl is not None else []
    except DslSyntaxError:
        return ""
    named = [f"line {s.loc.line}: `{format_statement(s)}`" for s in statements
             if isinstance(s, A.LayoutStmt) and s.tasks.names is not None]
    if not named:
        return ""
    return (" A Layout statement for some tasks only makes a second instance of data that other tasks (the ones "
            f"that wrote it) laid out otherwise: {'; '.join(named)}; dropping it lets them share one instance.")


# An alignment above the largest scalar field (16 bytes: a complex double) pads an AOS element's fields.
_FIELD_BYTES = 16
# An alignment of at least this share of the failed instance can make it alone: SOA starts each field's block on it.
_ALIGN_SHARE = 1 / 16


def _padding(result: RunResult, task: str, asked: int) -> str | None:
    """The sentence naming the mapper's Layout statements that may apply to `task` with an Align that likely made
    the failed instance (`asked` bytes) that large: with AOS, one above `_FIELD_BYTES` (AOS aligns each field of
    every element, so each element grows to a multiple of the alignment); with any layout, one of at least
    `_ALIGN_SHARE` of the instance (each field's block starts on it); None for none (or a mapper that does not
    parse)."""
    from mapperopt.dsl import DslSyntaxError, parse
    from mapperopt.dsl import ast as A
    from mapperopt.dsl.formatter import format_statement

    try:
        statements = parse(result.dsl, "<mapper>").statements if result.dsl is not None else []
    except DslSyntaxError:
        return None

    def inflates(s: A.LayoutStmt) -> bool:
        aos = any(c.name == "AOS" for c in s.constraints)
        return any(c.name == "Align" and c.op in ("==", ">=")
                   and (c.value > _FIELD_BYTES if aos else asked and c.value >= asked * _ALIGN_SHARE)
                   for c in s.constraints)

    padded = [s for s in statements if isinstance(s, A.LayoutStmt)
              and (s.tasks.names is None or task in [n.name for n in s.tasks.names]) and inflates(s)]
    if not padded:
        return None
    named = "; ".join(f"line {s.loc.line}: `{format_statement(s)}`" for s in padded)
    return (f"The instance is likely that large because of the alignment, not the data: AOS pads each field of every "
            f"element to it (an 8-byte field of an Align==1024 instance takes 1024 bytes), and any layout starts "
            f"each field's block on it: {named}. Drop the Align (or lower it) in that Layout statement first.")


def _mb(mb: int | None, capacity: int | None) -> str:
    if mb is not None:
        return f"{mb} MiB"
    return f"{capacity / MIB:.0f} MiB" if capacity else "default size"


def fit_edits(edits: tuple[Edit, ...], result: RunResult) -> tuple[Edit, ...]:
    """`edits` with the memory kinds that the run's machine does not have taken out of each memory list (a list
    left empty drops its edit)."""
    kinds = machine_memories(result)
    out = []
    for edit in edits:
        if edit.op == "set_region_memory":
            memories = [m for m in edit.args.get("memories", ()) if m in kinds]
            if not memories:
                continue
            edit = Edit(edit.op, {**edit.args, "memories": memories})
        out.append(edit)
    return tuple(out)
