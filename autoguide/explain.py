"""`explain`: turn a `RunResult` into `Feedback`; `feedback_text`: the optimizer's feedback string.

A failed run is matched against the rule catalog (`rules.yaml`, see `catalog.py`); a finished run gets performance
feedback from its result line, the comparison with the best mapper so far and the baselines, and its per-task
profile (docs/compiler.md). Three levels serve the paper's ablation (docs/autoguide.md §2):

* "raw": only the trimmed output (`raw_excerpt`); `explanation` and `suggestion` are empty, no edits;
* "explain": plus the explanation;
* "suggest": plus the suggestion and its structured edits (the full AutoGuide).

An empty `explanation`/`suggestion` means "not given at this level"; "N/A" means "nothing to say".
"""

from __future__ import annotations

import dataclasses
import glob
import itertools
import json
import math
import re
import shlex
import signal
import string
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mapperopt import toolchain
from mapperopt.autoguide import capacity
from mapperopt.autoguide import excerpt as X
from mapperopt.autoguide.catalog import Catalog, Match, load_catalog
from mapperopt.autoguide.edits import SETTING_OPS
from mapperopt.dsl.formatter import selector_name
from mapperopt.errors import MapperoptError, signal_name
from mapperopt.records import LEVELS, Edit, Feedback, RunResult

DSL_STAGES = ("parse", "check", "compile")
MAX_COMPILE_ERRORS = 3
# A DSL diagnostic's file position, `file:LINE:COL: error[...]` (one about the whole file has none).
_POSITIONED = re.compile(r":\d+:\d+: (?:error|warning|note)\[")
DSL_CONTEXT = 24  # lines after a DSL diagnostic kept in the excerpt
TOP_TASKS = 3  # tasks listed in performance feedback
MAX_FIELD = 240  # characters of one matched value in a text
MAX_REASON = 1000  # characters of a run's reason in a text
_LINE_BREAK = re.compile(r"[ \t]*[\r\n]+\s*")
HEAVY_SHARE = 25.0  # percent of the measured task time from which a task on the CPU is worth moving to the GPU
MAX_POINTS = 4096  # points of an index launch evaluated to tell which processors its map statement uses
BUSY_SHARE = 50.0  # percent of a timed-loop iteration its tasks fill (summed) below which the runtime dominates
NEGLIGIBLE_SHARE = 10.0  # percent of a user's program's wall time its counted tasks fill below which advice is moot
CHANGED_RATIO = 1.1  # a task's time over its time under the best from which a slower run's explanation names it
CHANGED_SHARE = 5.0  # ... if it rose by this percent of the best's profiled task time at least (not a tiny task)


class _Missing(KeyError):
    """A template field the match did not provide."""


class _Fields(dict):
    def __missing__(self, key):
        raise _Missing(key)


def _fill(template: Any, fields: Mapping[str, Any]) -> Any:
    """Fill `{name}` fields in a template string, or in each string of a list/dict. A string that is exactly one
    field takes the field's value unchanged (so that a list or an int can be passed through).

    Raises:
        _Missing: a field has no value.
    """
    if isinstance(template, str):
        parsed = list(string.Formatter().parse(template))
        if len(parsed) == 1 and parsed[0][0] == "" and parsed[0][1] and not parsed[0][2] and not parsed[0][3]:
            return _Fields(fields)[parsed[0][1]]
        return template.format_map(_Fields(fields))
    if isinstance(template, list):
        return [_fill(t, fields) for t in template]
    if isinstance(template, dict):
        return {k: _fill(v, fields) for k, v in template.items()}
    return template


def _exit_code(result: RunResult) -> int | None:
    return result.attempts[-1].exit_code if result.attempts else None


def _edits(match: Match, dsl: str | None, templates: list | None = None) -> tuple[Edit, ...]:
    """The rule's edits (or `templates` in their place), filled in, that apply to the mapper, in order (each is tried
    on the program as the previous ones left it; one that does not apply is left out). None for a mapper that does
    not parse or a run without a DSL mapper."""
    templates = match.rule.edits if templates is None else templates
    if not templates or dsl is None:
        return ()
    from mapperopt.autoguide.edits import apply_edits
    from mapperopt.dsl import DslSyntaxError, parse

    try:
        program = parse(dsl, "<mapper>")
    except DslSyntaxError:
        return ()
    kept = []
    for template in templates:
        try:
            edit = Edit.from_json(_fill(template, match.fields))
            program = apply_edits(program, [edit])
        except (_Missing, MapperoptError):
            continue
        kept.append(edit)
    return tuple(kept)


def _edit_notes(dsl: str, edits: tuple[Edit, ...]) -> list[str]:
    """What `edits` change in the mapper `dsl` beyond the statements they name (`apply_edits`'s notes); none when
    it does not parse or they do not apply."""
    from mapperopt.autoguide.edits import apply_edits
    from mapperopt.dsl import DslSyntaxError, parse

    notes: list[str] = []
    try:
        apply_edits(parse(dsl, "<mapper>"), edits, notes)
    except (DslSyntaxError, MapperoptError):
        return []
    return notes


def _wrapped_text(dsl: str, edits: tuple[Edit, ...]) -> str | None:
    """What the `wrap_index_modulo` edit among `edits` makes of its function in the mapper `dsl`: the statements it
    changes, as they read after it (the mapper's own machine model names, only the indices it reduces); None when
    there is none or it does not apply."""
    from mapperopt.autoguide.edits import apply_edits
    from mapperopt.dsl import DslSyntaxError, parse
    from mapperopt.dsl import ast as A
    from mapperopt.dsl.formatter import format_statement

    wrap = [e for e in edits if e.op == "wrap_index_modulo"]
    if not wrap:
        return None
    function = wrap[0].args["function"]
    try:
        before = parse(dsl, "<mapper>").statements
        after = apply_edits(parse(dsl, "<mapper>"), wrap[:1], []).statements
    except (DslSyntaxError, MapperoptError):
        return None

    def lines(statements: list) -> list[str]:
        f = next((s for s in statements if isinstance(s, A.FuncDef) and s.name == function), None)
        return [format_statement(s) for s in (*f.body, f.ret)] if f else []

    changed = [new for old, new in zip(lines(before), lines(after)) if old != new]
    if not changed:
        return None
    return (f"Reduce the machine indices that can leave the range modulo that dimension's size in '{function}', as "
            f"the suggested edit does: `{' '.join(changed)}`.")


def _context(result: RunResult, own_mapper: str | None = None) -> dict[str, Any]:
    """The context fields of templates (catalog.CONTEXT_FIELDS); the exit status names the signal that killed the
    process ("-8, SIGFPE"); {without}: `_without`; {command}: `without_mapper_command`."""
    timeout, code = result.settings.get("timeout_s"), _exit_code(result)
    return {"stage": result.stage, "app": result.app,
            "exit_code": f"{code}, {signal_name(-code)}" if code is not None and code < 0 else code,
            "timeout_s": f"{timeout:g}" if isinstance(timeout, (int, float)) else "?",
            "without": _without(result, own_mapper), "command": without_mapper_command(result)}


def without_mapper_command(result: RunResult) -> str:
    """The `mapperopt run` command that runs the run's program without --mapper (`suggested_run_command`), with the
    run's --timeout after a timeout, so that a hang there too is stopped as this run was."""
    timeout = (result.settings or {}).get("timeout_s")
    limit = ("--timeout", f"{timeout:g}") if result.stage == "timeout" and isinstance(timeout, (int, float)) else ()
    return suggested_run_command(result, *limit)


def _without(result: RunResult, own_mapper: str | None = None) -> str:
    """The mapper that maps the run's program without --mapper, as the texts name it: the program's own, where the
    caller (`own_mapper`), the run (a run without a DSL mapper records it), the shim's note in its output or its
    discovered description names one; else Legion's default mapper, where the program is known to register none (a
    benchmark, a described program); else both, conditionally (a user's program that failed without a DSL mapper)."""
    from mapperopt.benchmarks.userapp import OWN_MAPPER_NOTE

    settings = result.settings or {}
    note = OWN_MAPPER_NOTE.search(result.log or "")
    described = _description(result) if settings.get("description") else None
    own = own_mapper or settings.get("own_mapper") or (note[2] if note else None) or (
        described.own_mapper if described is not None else None)
    if own:
        return f"the program's own mapper, '{own}'"
    if "app_file" not in settings or described is not None:
        return "Legion's default mapper"
    return "Legion's default mapper, or the program's own where it registers one"


# The LD_PRELOAD shim's note that the DSL mapper took the place of the program's own mapper for every task.
_DISPLACED = re.compile(r"^\[mapperopt\] note: the application .+? its own mapper \('([^']*)'\); the DSL mapper takes "
                        r"its place for every task", re.M)


def _reference(own_mapper: str | None) -> str:
    """The mapper the `default` baseline ran, as the texts name it: the program's own (`own_mapper`, its name)."""
    return f"The program's own mapper ('{own_mapper}')" if own_mapper else "Legion's default mapper"


def _failure(result: RunResult, level: str, catalog: Catalog, default_failure: Mapping[str, Any] | None = None,
             own_mapper: str | None = None, baseline_finished: bool = False) -> Feedback:
    """The feedback on a failed run; `baseline_finished`: the search's `default` reference ran the same program and
    settings and finished (its throughput is known)."""
    lines = X.clean(result.log, catalog.is_noise)
    context = _context(result, own_mapper)
    costly = _costly_functions(result.dsl) if result.stage == "timeout" and result.dsl else ""
    match = catalog.match(lines, stage=result.stage, exit_code=_exit_code(result), dsl=result.dsl,
                          context={**context, "costly": costly})
    if match is not None and match.line is not None:
        # DSL diagnostics span several lines each (source, caret, hints, notes); keep room for three of them.
        after = max(match.rule.context, DSL_CONTEXT) if result.stage in DSL_STAGES else match.rule.context
        picked = X.block(lines, match.line, after)
    else:
        start = X.first_error(lines)
        picked = X.block(lines, start, 8) if start is not None else X.tail(lines)
    raw = X.trim(picked)
    if match is None:
        explanation = _text(catalog.generic["explain"], context)
        no_mapper = result.dsl is None and (catalog.no_mapper or load_catalog().no_mapper)
        suggestion = _text(no_mapper["suggest"] if no_mapper else catalog.generic["suggest"], context)
        category, rule, edits = "unknown", "generic", ()
        if _exit_code(result) in (-signal.SIGKILL, 128 + signal.SIGKILL):  # its sender, as far as the reason knows it
            from mapperopt.benchmarks.harness import KILLED_BY_OOM

            oom = "_oom" if KILLED_BY_OOM in (result.reason or "") else ""
            explanation = _layout_text(catalog, f"killed{oom}", exit_code=str(context["exit_code"]))
            if not no_mapper:
                suggestion = _layout_text(catalog, f"killed{oom}_suggest", without=context["without"])
    else:
        explanation = _text(match.rule.explain, match.fields)
        if match.rule.category == "tunable.size":  # which tunable: from the mapper and the program's description
            explanation += _which_tunable(int(match.fields["given"]), int(match.fields["wanted"]), result)
        suggestion = _text(match.rule.suggest, match.fields)
        templates = None
        if match.rule.category == "layout.constraint" and "variant" in match.fields:  # Legion's rejection
            suggestion += _variant_layout(match.fields, result)
            if "constraint" in match.fields:  # of the order or interleaving: toward what the variant needs
                templates = _toward_variant(match.fields, result)
        elif match.rule.category == "layout.constraint" and "need" in match.fields:  # check's (E223)
            templates = _drop_opposite(match.fields.get("interleave")) + list(match.rule.edits)
        category, rule, edits = match.rule.category, match.rule.id, _edits(match, result.dsl, templates)
        if result.dsl is not None and baseline_finished and match.rule.suggest_baseline_finished:
            suggestion = _text(match.rule.suggest_baseline_finished, match.fields)
        if result.stage == "timeout" and result.dsl is not None and rule in ("timeout-instance-limit", "timeout"):
            explanation, suggestion = _timeout_suspects(result, match, catalog, explanation, suggestion,
                                                            baseline_finished)
        if category == "verification" and result.dsl is not None:
            explanation, suggestion = _layout_verify(result, explanation, suggestion, catalog)
        if category == "index_map.out_of_range" and result.dsl is not None:  # the edit's lines, in the mapper's names
            suggestion = _wrapped_text(result.dsl, edits) or suggestion
        if category in capacity.CATEGORIES:  # memory advice that fits the run's machine
            advice = capacity.advise(match.fields, result)
            if advice is not None:  # a failed allocation: what to spill, or the size to raise
                suggestion = advice[0]
                if advice[1] is not None:
                    edits = tuple(e for e in advice[1] if result.dsl is not None or e.op in SETTING_OPS)
            edits = capacity.fit_edits(edits, result)
        if result.dsl is None:  # no mapper change can be the cause
            if match.rule.explain_no_mapper:
                explanation = _text(match.rule.explain_no_mapper, match.fields)
            if match.rule.suggest_no_mapper:
                suggestion = _text(match.rule.suggest_no_mapper, match.fields)
            elif match.rule.mapper_advice:
                suggestion = _text((catalog.no_mapper or load_catalog().no_mapper)["suggest"], context)
        elif match.rule.suggest_displaced and (own := _DISPLACED.search(result.log or "")):
            suggestion = _text(match.rule.suggest_displaced, {**match.fields, "own": own.group(1)})
        elif match.rule.suggest_no_data and not _places_data(result.dsl):
            suggestion = _text(match.rule.suggest_no_data, match.fields)
        elif (match.rule.suggest_no_position and match.line is not None
              and not _POSITIONED.search(lines[match.line])):  # `file: error[E224]: ...`, about the whole file
            suggestion = _text(match.rule.suggest_no_position, match.fields)
        if match.rule.app_category and "app_file" in (result.settings or {}):  # a user's program
            category = match.rule.app_category
    if rule == "crash-signal" and result.dsl is not None and (data := _default_data(result)):
        suggestion = _layout_text(catalog, "default_crash", without=context["without"], data=data)
    if result.stage == "timeout" and (lost := _stdout_lost(result)):  # no sign of how far it got: say why
        suggestion = " ".join([suggestion, lost])
    own = _own_assertion(lines[match.line]) if rule == "assertion-failed" and match.line is not None else None
    if own:  # not Legion's or the mapper's: whether the program fails on its own is the first thing to know
        fields = {"where": own[0], "function": own[1], "without": context["without"]}
        explanation = _layout_text(catalog, "own_assert" if result.dsl is not None else "own_assert_no_mapper",
                                   **fields)
        if result.dsl is None:
            suggestion = _layout_text(catalog, "own_assert_suggest_no_mapper", **fields)
        elif not _places_data(result.dsl):
            suggestion = _layout_text(catalog, "own_assert_no_data")
        elif data := _default_data(result):
            suggestion = _layout_text(catalog, "own_assert_default", data=data)
    if rule in _CRASH_RULES and result.dsl is not None and result.stage in ("start", "run"):
        explanation, suggestion = _layout_crash(result, raw, explanation, suggestion, catalog)
    if own and result.dsl is not None:
        suggestion = " ".join([_layout_text(catalog, "own_assert_first", without=context["without"],
                                            command=suggested_run_command(result)), suggestion])
    if (result.dsl is not None and (match is None or match.rule.mapper_advice) and default_failure
            and default_failure.get("stage") == result.stage):  # undoing a mapper change cannot help either
        suggestion = _text((catalog.no_mapper or load_catalog().no_mapper)["default_failed"],
                           {**context, "default_reason": default_failure.get("reason") or "no reason given",
                            "reference": _reference(own_mapper)})
    return _at_level(Feedback(result.status, result.stage, category, explanation, suggestion, edits, raw, rule), level)


# The constraint words of a Layout statement that take an instance away from the layout Legion's default mapper gives
# (SOA, F_order: x fastest), which a kernel may assume without registering it, and the word of that layout.
_NATURAL = {"AOS": "SOA", "C_order": "F_order"}


def _stated(stmt, what: str = "the mapper") -> str:
    """A statement as the texts name it: "`<statement>` (line N of the mapper)"."""
    from mapperopt.dsl.formatter import format_statement

    return f"`{format_statement(stmt)}` (line {stmt.loc.line} of {what})"


def _layout_changes(result: RunResult, align: bool = False) -> list[tuple[Any, Any]]:
    """The mapper's Layout statements that ask for AOS or C_order where the program's description records no variant
    that needs it (the layout a kernel may assume without saying so is Legion's default, SOA F_order), each with the
    same statement asking for that natural layout instead: [(statement, natural statement)]; [] when the mapper does
    not parse. `align`: an `Align op N` no variant requires counts too (the natural statement leaves it out, or says
    `No_Align` where nothing else would remain): padding changes what Realm's copies and reductions walk."""
    from mapperopt.dsl import DslSyntaxError, parse
    from mapperopt.dsl import ast as A

    try:
        statements = parse(result.dsl or "", "<mapper>").statements
    except DslSyntaxError:
        return []
    desc = _description(result)
    regions = [r for t in (desc.tasks if desc else ()) for r in t.regions]
    needed = {w for r in regions for w in (r.layout, r.interleave) if w}
    if not align or any(r.required_align for r in regions):  # a variant's alignment stays
        needed.add("Align")
    out = []
    for s in statements:
        if isinstance(s, A.LayoutStmt) and any((c.name in _NATURAL or c.name == "Align") and c.name not in needed
                                               for c in s.constraints):
            swapped = {c.name for c in s.constraints if c.name in _NATURAL} - needed  # a variant's need stays
            natural = tuple(dataclasses.replace(c, name=_NATURAL[c.name]) if c.name in swapped else c
                            for c in s.constraints if c.name != "Align" or "Align" in needed)
            if not natural:
                natural = (A.Constraint("No_Align", loc=s.constraints[0].loc),)
            out.append((s, dataclasses.replace(s, constraints=natural)))
    return out


def _reductions_under(stmt, desc) -> list[str]:
    """The reduction requirements (by the program's description `desc`, an `AppDescription` or None) that Layout
    statement `stmt` selects, as the texts name them: ["spmv's argument 2 (reduce sum_f64)"]; [] without one."""
    from mapperopt.dsl.evaluator import region_matches, task_matches

    out = []
    for t in (desc.tasks if desc else ()):
        if not task_matches(stmt.tasks, t.name):
            continue
        for r in t.regions:
            if r.privilege == "reduce" and region_matches(stmt.region, r.index, r.names) is not None:
                name = f" '{r.name}'" if r.name else ""
                out.append(f"{t.name}'s argument {r.index}{name} (reduce{' ' + r.redop if r.redop else ''})")
    return out


# Where a failed assertion or Legion error comes from, by the source path in its line: Realm's data movement (copies,
# fills and reductions between instances, whose layouts the mapper chose) rather than a kernel of the program.
_RUNTIME_SOURCE = re.compile(r"(?P<path>(?:^|/)realm/(?P<part>transfer|dma)?[\w/]*\.(?:cc|h|inl)(?::\d+)?)")

# A failed assert()'s line as the C library prints it: `prog: FILE:LINE: FUNCTION: Assertion `EXPR' failed.`; and
# what marks FILE or FUNCTION as Legion's, Realm's or mapperopt's (its sources, headers, namespaces), not the program's.
_ASSERT_AT = re.compile(r"(?P<path>[^\s:]+):(?P<line>\d+): (?P<function>.+?): Assertion [`']")
_NOT_OWN = re.compile(r"(?:^|/)(?:legion|realm|legion-src|realm-src|mappers|mapperopt)/|\b(?:Legion|Realm|mapperopt)::")


def _own_assertion(line: str) -> tuple[str, str] | None:
    """(its FILE:LINE, its function's name) where `line` is a failed assertion in the program's own source, not in
    Legion, Realm or mapperopt's mapper; None otherwise (or where the line names no file)."""
    found = _ASSERT_AT.search(line)
    if not found:
        return None
    head = found["function"].split("(")[0].split()  # `double update_task` of `double update_task(const ...)`
    name = head[-1] if head else ""
    if not name or _NOT_OWN.search(found["path"]) or _NOT_OWN.search(name):
        return None
    return f"{found['path']}:{found['line']}", name


# The crash rules whose advice names the mapper's layout changes as suspects (a run that aborted or crashed).
_CRASH_RULES = ("assertion-failed", "program-abort", "crash-signal", "legion-other-exception", "silent-abort",
                "generic")


def _layout_text(catalog: Catalog, key: str, **fields: str) -> str:
    """The catalog's `layout` text `key` filled in (the packaged text where the catalog has none): the template's
    whitespace folded, each value as it is (a statement is never shortened)."""
    texts = catalog.layout or load_catalog().layout
    return " ".join(texts[key].split()).format_map(fields)


def _layout_crash(result: RunResult, raw: str, explanation: str, suggestion: str,
                  catalog: Catalog) -> tuple[str, str]:
    """A crash's (an abort, a failed assertion, a signal, a Legion error) explanation and suggestion with the mapper's
    Layout statements that take instances away from the natural layout (AOS, C_order, an Align no variant needs)
    named as suspects, those that select a reduction requirement first, the statement to try in place of each, and,
    when the failing line shows it, that the abort came from Realm's copies rather than the program's kernels (the
    catalog's `layout` texts)."""
    where = _RUNTIME_SOURCE.search(raw or "")
    notes = []
    if where:
        notes.append(_layout_text(catalog, "in_copies" if where.group("part") else "in_runtime",
                                  path=where.group("path").lstrip("/")))
    layouts = _layout_changes(result, align=True)
    if layouts:
        desc = _description(result)  # read once for all the statements
        reducing = [(s, n, _reductions_under(s, desc)) for s, n in layouts]
        reducing.sort(key=lambda x: not x[2])
        layouts = [(s, n) for s, n, _ in reducing]
        note, attempt = _layout_suspect(layouts, "crash", catalog)
        under = [f"{_stated(s)} selects {' and '.join(red)}" for s, _, red in reducing if red]
        if under:
            note += " " + _layout_text(catalog, "reduction", selects="; ".join(under))
        notes.append(note)
        suggestion = " ".join([attempt, suggestion])
    attempts = result.attempts or ()
    passed = sum(1 for a in attempts[:-1] if a.exit_code == 0)
    if passed and attempts and attempts[-1].exit_code not in (0, None):
        notes.append(_layout_text(catalog, "intermittent", passed=str(passed),
                                  executions="executions" if passed != 1 else "execution",
                                  execution=str(len(attempts))))
        if layouts:
            suggestion += " " + _layout_text(catalog, "intermittent_suggest")
    if notes:
        explanation = " ".join([explanation, *notes])
    return explanation, suggestion


def _layout_suspect(layouts: list[tuple[Any, Any]], after: str, catalog: Catalog) -> tuple[str, str]:
    """What to say of the Layout statements `_layout_changes` found, after a failure of kind `after` ("verify",
    "crash", "timeout"): (the catalog's `suspect_<after>` text naming them, its `try_<after>` text saying which
    statement to try in place of each)."""
    from mapperopt.dsl.formatter import format_statement

    note = _layout_text(catalog, f"suspect_{after}", statements=", ".join(_stated(s) for s, _ in layouts))
    attempt = _layout_text(catalog, f"try_{after}", replacements=" and ".join(
        f"`{format_statement(n)}` in place of `{format_statement(s)}`" for s, n in layouts))
    return note, attempt


def _layout_verify(result: RunResult, explanation: str, suggestion: str, catalog: Catalog) -> tuple[str, str]:
    """A failed verification's explanation and suggestion with the mapper's Layout statements that take instances
    away from the program's natural layout (`_layout_changes`) named as the likely cause, and the natural layout as
    the first thing to try."""
    layouts = _layout_changes(result)
    if not layouts:
        return explanation, suggestion
    note, attempt = _layout_suspect(layouts, "verify", catalog)
    return " ".join([explanation, note]), " ".join([attempt, suggestion])


def _limit_points(result: RunResult) -> dict[str, int | None] | None:
    """The most points of one launch of each task, by name, from the description discovery wrote for the run's
    program (run with its arguments: a benchmark's stored description may be of another size); None without one;
    a task's None: not known."""
    if not (result.settings or {}).get("description"):
        return None
    desc = _description(result)
    if desc is None:
        return None
    out: dict[str, int | None] = {}
    for t in desc.tasks:
        if t.index_launched:
            out[t.name] = None if not t.domain else max(1, math.prod(t.domain))
        else:
            out[t.name] = 1
    return out


def _limits(result: RunResult) -> tuple[list[Any], list[tuple[Any, str]]]:
    """The mapper's InstanceLimit statements split in two: those that can hold a task back, and those whose N covers
    every point of each launch of the tasks they name (by discovery's record), each with why: "the 4 points of
    fill's index launches"."""
    from mapperopt.dsl import DslSyntaxError, parse
    from mapperopt.dsl import ast as A

    try:
        limits = [s for s in parse(result.dsl or "", "<mapper>").statements if isinstance(s, A.InstanceLimitStmt)]
    except DslSyntaxError:
        return [], []
    points = _limit_points(result)
    holding, covered = [], []
    for s in limits:
        named = [(n.name, (points or {}).get(n.name)) for n in s.tasks.names]
        if points is None or not named or any(p is None or p > s.count for _, p in named):
            holding.append(s)
        else:
            covered.append((s, " and ".join(f"the {p} point{'s' * (p != 1)} of {t}'s "
                                            f"{'index launches' if p > 1 else 'launches'}" for t, p in named)))
    return holding, covered


def _timeout_suspects(result: RunResult, match: Match, catalog: Catalog, explanation: str, suggestion: str,
                      finished: bool = False) -> tuple[str, str]:
    """The explanation and suggestion of a timeout (rule `timeout-instance-limit` or `timeout`) of a DSL mapper: only
    the InstanceLimit statements that can hold a task back are named as its cause, those whose N covers every point
    are said to be ruled out, and a Layout statement that takes instances away from the program's natural layout
    (which a kernel may assume) is named as a suspect with the statement to try instead. `finished`: the search's
    `default` reference finished the same program (`_failure`'s `baseline_finished`)."""
    holding, covered = _limits(result)
    layouts = _layout_changes(result)
    fields = dict(match.fields)
    if match.rule.id == "timeout-instance-limit" and holding:
        from mapperopt.dsl.formatter import format_statement

        fields["limit"] = ", ".join(_stated(s) for s in holding)
        explanation = _text(match.rule.explain, fields)
        suggestion = _text(match.rule.suggest, {**fields, "limit": "`" + "` and `".join(
            format_statement(s) for s in holding) + "`"})
    elif match.rule.id == "timeout-instance-limit" and covered:  # every limit covers its launches: generic texts
        generic = next((r for r in catalog.rules if r.id == "timeout"), None)
        if generic is not None:
            explanation = _text(generic.explain, fields)
            suggestion = _text(generic.suggest_baseline_finished if finished and generic.suggest_baseline_finished
                               else generic.suggest, fields)
    elif match.rule.id == "timeout-instance-limit":  # no statement of the mapper read: the matched text
        fields["limit"] = f"`{fields['limit']}`"
        explanation, suggestion = _text(match.rule.explain, fields), _text(match.rule.suggest, fields)
    if not (match.rule.id == "timeout-instance-limit" and holding) and (spread := _spread_and_local(result)):
        texts = catalog.hang or load_catalog().hang  # placement advice would repeat what the mapper does
        explanation = " ".join(texts["explain"].split()).format_map({**fields, "spread": spread})
        suggestion = " ".join([_text(texts["suggest_baseline_finished" if finished else "suggest"], fields),
                               _trace_text(result, texts)])
    notes = []
    if covered:
        notes.append(" ".join(f"{_stated(s)} cannot hold any back: its N covers {why}, so it is not the cause."
                              for s, why in covered))
    tries = []
    if layouts:
        note, attempt = _layout_suspect(layouts, "timeout", catalog)
        notes.append(note)
        tries.append(attempt)
    if notes:
        explanation = " ".join([explanation, *notes])
    if tries:  # after the limits' own advice where one can hold a task back, else first
        suggestion = " ".join([suggestion, *tries] if holding and match.rule.id == "timeout-instance-limit"
                              else [*tries, suggestion])
    return explanation, suggestion


# The memory of each processor kind that is closest to it: where Legion's default mapper puts a task's instances.
_OWN_MEMORY = {"CPU": "SYSMEM", "GPU": "FBMEM"}


def _spread_and_local(result: RunResult) -> str | None:
    """What the run's DSL mapper does where it already places as a fast mapping does, as the `hang` texts say it
    ("runs every index launch (a, b) over all 2 CPU processors and keeps every instance in SYSMEM"): every index
    launch of the program's description runs over as many processors of its kind (more than one) as it has points,
    by the mapper's map statement or, where none applies, by Legion's default placement (which spreads the points over
    the kind's processors), and every requirement of its leaf tasks is in the memory closest to the task's processor;
    None otherwise, or where that is unknown (no description, a launch domain unknown or too large, a function that
    fails or returns a processor set)."""
    from mapperopt.descriptions import MachineDescription
    from mapperopt.dsl import Evaluator, parse
    from mapperopt.dsl.machine import Proc

    desc = _description(result) if result.dsl is not None else None
    if desc is None:
        return None
    machine = machine_of(result)
    launched, kinds, memories = [], {}, set()
    try:
        ev = Evaluator(parse(result.dsl, "<mapper>"),
                       MachineDescription(1, tuple((k, (v["procs"],)) for k, v in machine.items())), desc)
        for t in desc.tasks:
            if not t.regions or not (t.leaf or t.index_launched):
                continue
            kind = ev.task_kind(t.name)
            if kind not in machine or kind not in _OWN_MEMORY:
                return None
            for r in t.regions:
                memory = _memory_of(ev, t.name, r.index, kind, machine[kind]["memories"])
                if memory != _OWN_MEMORY[kind]:
                    return None
                memories.add(memory)
            if not t.index_launched:
                continue
            domain, procs = tuple(t.domain or ()), machine[kind]["procs"]
            if not domain or math.prod(domain) > MAX_POINTS or procs < 2:
                return None
            placed = [ev.place(t.name, point, domain) for point in itertools.product(*map(range, domain))]
            if any(p is not None for p in placed):  # a map statement places it (else Legion's default spreads it)
                if not all(isinstance(p, Proc) and p.kind == kind for p in placed) or \
                        len({p.index for p in placed}) < min(math.prod(domain), procs):
                    return None
            launched.append(t.name)
            kinds[kind] = procs
    except MapperoptError:  # DSL errors (syntax, runtime) are MapperoptErrors
        return None
    if not launched:
        return None
    over = " and ".join(f"{n} {k} processors" for k, n in kinds.items())
    return (f"runs every index launch ({', '.join(launched)}) over all {over} and keeps every instance in "
            f"{' and '.join(sorted(memories))}")


def _trace_text(result: RunResult, texts: Mapping[str, str]) -> str:
    """The `hang` texts' {trace}: how far the mapping got by the trace the run's last execution left (`trace_ran`),
    else how to see it (`trace`)."""
    attempts = result.attempts or ()
    if result.run_dir and attempts and attempts[-1].stdout:
        path = Path(result.run_dir) / re.sub(r"^stdout(.*)\.txt$", r"trace\1.jsonl", attempts[-1].stdout)
        count, ends = 0, []
        try:
            with path.open(errors="replace") as f:  # one line per mapping: a long run's trace is large
                for line in f:
                    if line.strip():
                        count, ends = count + 1, [*ends[-1:], line]
        except OSError:
            pass
        entry = None
        for line in reversed(ends):  # a run killed while the mapper wrote may have cut the last line short
            try:
                entry = json.loads(line)
                break
            except ValueError:
                count -= 1
        if isinstance(entry, dict) and entry.get("task"):
            point = entry.get("point")
            return " ".join(texts["trace_ran"].split()).format_map({
                "file": path.name, "count": count, "task": entry["task"],
                "point": f" point ({', '.join(map(str, point))})" if isinstance(point, list) else ""})
    return " ".join(texts["trace"].split())


def _stdout_lost(result: RunResult) -> str | None:
    """The `hang` text `unflushed` where the timed-out run's standard output is empty (its log's stdout part): a
    killed program loses what it printed and had not flushed, so that file shows nothing of how far it got; None
    where it printed something, or where the log does not say."""
    _, marker, stdout = (result.log or "").partition("--- stdout ---")
    if not marker or stdout.strip():
        return None
    last = result.attempts[-1] if result.attempts else None
    return lost_output_note(last.stdout if last and last.stdout else "stdout.txt")


def lost_output_note(file: str) -> str:
    """What an empty standard output `file` of a program killed at its time limit means, and how to see its progress
    (the `hang` text `unflushed`)."""
    return " ".join(load_catalog().hang["unflushed"].split()).format(file=file)


def _default_data(result: RunResult) -> str | None:
    """Where the run's DSL mapper gives every requirement of the program's tasks the layout and memory Legion's
    default mapper gives it (that of a mapper without statements, the variants' constraints included), on the kind
    each task runs on: which, as the texts say it ("SOA F_order in SYSMEM"); None otherwise or where that is unknown
    (no description, a mapper that does not parse or evaluate)."""
    from mapperopt.descriptions import MachineDescription
    from mapperopt.dsl import Evaluator, parse

    desc = _description(result) if result.dsl is not None else None
    if desc is None:
        return None
    machine = machine_of(result)
    counts = MachineDescription(1, tuple((k, (v["procs"],)) for k, v in machine.items()))
    said = set()
    try:
        ev, default = (Evaluator(parse(result.dsl, "<mapper>"), counts, desc),
                       Evaluator(parse("", "<default>"), counts, desc))
        for t in desc.tasks:
            if not t.regions:
                continue
            kind = ev.task_kind(t.name)
            have = machine.get(kind, {}).get("memories", {})
            for r in t.regions:
                memory = _memory_of(ev, t.name, r.index, kind, have)
                layout = ev.layout(t.name, r.index, kind, memory)
                if memory != _memory_of(default, t.name, r.index, kind, have) or \
                        layout != default.layout(t.name, r.index, kind, memory):
                    return None
                said.add(f"{layout['order']} {layout['dims']}_order in {memory}")
    except MapperoptError:
        return None
    return " and ".join(sorted(said)) or None


def _places_data(dsl: str) -> bool:
    """Whether the mapper `dsl` has a Region or Layout statement (True when it does not parse: it may)."""
    from mapperopt.dsl import DslSyntaxError, parse
    from mapperopt.dsl import ast as A

    try:
        return any(isinstance(s, (A.RegionStmt, A.LayoutStmt)) for s in parse(dsl, "<mapper>").statements)
    except DslSyntaxError:
        return True


def _costly_functions(dsl: str) -> str:
    """The mapping functions of the mapper `dsl` whose one evaluation makes more function calls than check's static
    evaluation takes steps (W310), as `costly_functions` names them, joined by "; "; "" for none."""
    from mapperopt.dsl import DslSyntaxError, parse
    from mapperopt.dsl.checker import MAX_STATIC_STEPS
    from mapperopt.dsl.evaluator import costly_functions

    try:
        return "; ".join(costly_functions(parse(dsl, "<mapper>"), MAX_STATIC_STEPS))
    except DslSyntaxError:
        return ""


def _which_tunable(given: int, wanted: int, result: RunResult) -> str:
    """A sentence naming the tunable(s) a "Future size mismatch" (the mapper answered `given` bytes, the program
    read `wanted`) can come from, or "": the mapper's Tunable statements answering with `given` bytes, and, for 8
    bytes, the tunables the description says the program reads as `wanted` bytes that no statement answers
    (Legion's default mapper answers those, with 8 bytes)."""
    from mapperopt.dsl import DslSyntaxError, parse
    from mapperopt.dsl import ast as A
    from mapperopt.dsl.evaluator import article
    from mapperopt.dsl.formatter import format_statement

    try:
        program = parse(result.dsl or "", "mapper.dsl")
    except DslSyntaxError:
        return ""
    answers = {s.id: s for s in program.statements if isinstance(s, A.TunableStmt) and s.type in A.TUNABLE_TYPES}
    named = [f"`{format_statement(s)}` at line {s.loc.line} of the "
             f"mapper, which answers tunable {i} as {article(s.type)}" for i, s in answers.items()
             if A.TUNABLE_TYPES[s.type][0] == given]
    desc = _description(result)
    if given == 8 and desc is not None:
        named += [f"Legion's default mapper, which answers tunable {t.id} as an int64 because the mapper has no "
                  f"`Tunable {t.id}` statement (the program reads it as {t.type})" for t in desc.tunables
                  if t.id not in answers and A.TUNABLE_TYPES.get(t.type, (0,))[0] == wanted]
    return f" The {given}-byte answer comes from {', or from '.join(named)}." if named else ""


def _variant_requirement(fields: Mapping[str, Any], result: RunResult):
    """The description's `RegionArg` of requirement `fields["index"]` of task `fields["task"]`, or None."""
    info = (_tasks(result) or {}).get(fields.get("task"))
    return next((r for r in info.regions if str(r.index) == fields.get("index")), None) if info else None


def _variant_layout(fields: Mapping[str, Any], result: RunResult) -> str:
    """A sentence saying the interleaving and dimension order that the description records for requirement
    `fields["index"]` of task `fields["task"]` (its variant's layout constraint), or "" when it records neither."""
    req = _variant_requirement(fields, result)
    needs = " ".join(x for x in (req.interleave, req.layout) if x) if req else ""
    if not needs:
        return ""
    on = f" (on {', '.join(req.layout_kinds)})" if req.layout_kinds else ""
    return (f" The application's description says its '{fields['variant']}' variant needs {needs} instances for "
            f"requirement {req.index}{on}.")


def _toward_variant(fields: Mapping[str, Any], result: RunResult) -> list[dict] | None:
    """The edits (templates) for Legion's rejection of the instance of requirement `fields["index"]` of task
    `fields["task"]`: drop the dimension order, then the interleaving, opposite to those the description records
    for it (for the stencil's SOA F_order, the rule's own C_order then AOS); None when it records neither (the
    rule's edits)."""
    req = _variant_requirement(fields, result)
    return (_drop_opposite(req.layout, req.interleave) if req else []) or None


# The dimension order or interleaving that excludes each (a Layout statement cannot name both of a pair: E214).
_OPPOSITE = {"C_order": "F_order", "F_order": "C_order", "SOA": "AOS", "AOS": "SOA"}


def _drop_opposite(*needed: str | None) -> list[dict]:
    """Edit templates dropping, in order, the constraint opposite to each dimension order or interleaving of
    `needed` (None: skipped) from the Layout statements: without it an instance follows the variant's constraints."""
    return [{"op": "drop_layout_constraint", "constraint": _OPPOSITE[x]} for x in needed if x]


def _text(template: str, fields: Mapping[str, Any]) -> str:
    """A text template filled in; a field of a `maybe` pattern that was not found is left empty. The template's
    whitespace is folded (a YAML block's line breaks), a value's only where it breaks a line: what a value quotes of
    the output keeps its spacing. A value longer than `MAX_FIELD` characters (`MAX_REASON` for a run's reason, which
    mapperopt writes and which ends with the line it quotes) keeps its start and end around a "…" (a C++ type can
    fill a screen)."""
    def short(key: str, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        value = _LINE_BREAK.sub(" ", value).strip()
        if key == "command":  # to copy: whole
            return value
        limit = MAX_REASON if key in ("reason", "default_reason") else MAX_FIELD
        if len(value) <= limit:
            return value
        from mapperopt.benchmarks.harness import clip, clip_start  # each in whole words

        return clip(value, limit // 2) + clip_start(value, limit - limit // 2)[1:]
    # Each non-empty text value stands in as a token while the filled template's whitespace is folded (around an
    # empty value too), then takes the token's place.
    values = {k: short(k, v) for k, v in fields.items()}
    tokens = {k: f"\x00{i}\x00" if isinstance(v, str) and v else v for i, (k, v) in enumerate(values.items())}
    text = " ".join(template.format_map(defaultdict(str, tokens)).split())
    return re.sub("\x00(\\d+)\x00", lambda m: list(values.values())[int(m[1])], text)


def _at_level(fb: Feedback, level: str) -> Feedback:
    if level == "raw":
        return Feedback(fb.status, fb.stage, fb.category, "", "", (), fb.raw_excerpt, fb.rule)
    if level == "explain":
        return Feedback(fb.status, fb.stage, fb.category, fb.explanation, "", (), fb.raw_excerpt, fb.rule)
    return fb


# ----------------------------------------------------------------------------------------------------- performance


def _description(result: RunResult):
    """The description of the run's application, an `AppDescription`: a benchmark's stored one (configs/), a user's
    program's discovered one (the file `settings["description"]` names); None if there is none."""
    import json
    from pathlib import Path

    from mapperopt.benchmarks.apps import load_config
    from mapperopt.descriptions import AppDescription

    discovered = (result.settings or {}).get("description")
    try:
        if discovered:
            return AppDescription.from_json(json.loads(Path(discovered).read_text()))
        return AppDescription.from_json(load_config(result.app).stored_description())
    except (MapperoptError, OSError, ValueError):
        return None


def _tasks(result: RunResult) -> dict | None:
    """The application's tasks by name from its description (`_description`), or None if there is none."""
    desc = _description(result)
    return None if desc is None else {t.name: t for t in desc.tasks}


def task_profile(result: RunResult) -> list[dict]:
    """Per (task, kind) rows of the run's task profile, the timed loop's tasks first, heaviest first.

    The profile is `result.profile` (the harness's profiling execution), else the last attempt that has one (a
    user's program). Each row: {"task", "kind", "count" (executions), "total_s" (seconds of execution), "timed"
    (whether the task runs in the timed loop), "variants"}. A task is in the timed loop when it ran at least once
    per timed iteration for each point of its largest launch (count / points >= the profile's "iterations"):
    set-up and check tasks run once per point whatever the iteration count. Without "iterations" (a user's
    program: its timed loop is unknown) every task counts as timed. Only leaf tasks with region requirements count
    when the application is described: an inner task's time (the top-level task's above all) includes waiting for
    its children, and a task without region requirements has no instance for the advice's statements to change."""
    profile = result.profile or next((a.profile for a in reversed(result.attempts) if a.profile), None)
    if not profile:
        return []
    tasks = _tasks(result)
    iterations = profile.get("iterations")
    totals: dict[tuple[str, str], dict] = {}
    for entry in profile.get("tasks", ()):
        info = tasks.get(entry["task"]) if tasks is not None else None
        if tasks is not None and (info is None or not info.leaf or not info.regions):
            continue
        key = (entry["task"], entry["kind"])
        row = totals.setdefault(key, {"task": key[0], "kind": key[1], "count": 0, "points": 1, "total_s": 0.0,
                                      "variants": tasks[key[0]].variants if tasks else ()})
        row["count"] += entry.get("count", 0)
        row["points"] = max(row["points"], entry.get("points", 1))
        row["total_s"] += entry.get("total_s", 0.0)
    for row in totals.values():
        row["timed"] = not iterations or row["count"] / row.pop("points") >= iterations
    return sorted(totals.values(), key=lambda r: (not r["timed"], -r["total_s"]))


def machine_of(result: RunResult) -> dict[str, dict]:
    """What the run had, by processor kind: {"CPU": {"procs": N, "memories": {"SYSMEM": MiB or None, ...}}, "GPU":
    ...}; only kinds with at least one processor, only memories a task of that kind can use (a CPU task: system
    memory, and zero-copy memory with GPUs; a GPU task: framebuffer and zero-copy memory). Sizes are those of the
    run's command line (`capacity.memory_sizes`; None: Legion's default size)."""
    settings = result.settings or {}
    sizes, have = capacity.memory_sizes(result), capacity.machine_memories(result)

    def memories(kinds: tuple[str, ...]) -> dict[str, int | None]:
        return {m: sizes.get(capacity.SIZE_OPTIONS[m]) for m in kinds if m in have}

    # The memories only the run's Legion flags create (`-ll:rsize`, `-ll:nsize` after `--`), which CPU tasks use.
    created = {m: size >> 20 for m in ("RDMEM", "SOCKMEM")
               if (size := _flag_size(settings.get("command") or "", capacity.LEGION_FLAGS[m]))}
    out = {"CPU": {"procs": settings.get("cpus") or 1, "memories": {**memories(("SYSMEM", "ZCMEM")), **created}}}
    if settings.get("gpus"):
        out["GPU"] = {"procs": settings["gpus"], "memories": memories(("FBMEM", "ZCMEM"))}
    return out


def _flag_size(command: str, flag: str) -> int | None:
    """The size in bytes the last `flag` of `command` gives (as Realm reads it), None where it gives none."""
    from mapperopt.descriptions import realm_size

    found = re.findall(rf"(?:^|\s){re.escape(flag)}(?:\s+|=)(\S+)", command)
    return realm_size(found[-1]) if found else None


def _memories_text(memories: Mapping[str, int | None]) -> str:
    return ", ".join(f"{m} ({size} MiB)" if size else m for m, size in memories.items())


def _machine_text(machine: Mapping[str, dict]) -> str:
    return "; ".join(f"{v['procs']} {k} processor{'s' if v['procs'] > 1 else ''} with {_memories_text(v['memories'])}"
                     for k, v in machine.items())


def _evaluator(result: RunResult, task: str):
    """The reference evaluator of the run's mapper and `task`'s description, or None without a DSL mapper that
    parses or a description of `task`."""
    from mapperopt.dsl import DslSyntaxError, Evaluator, parse

    desc = _description(result)
    if result.dsl is None or desc is None or desc.task(task) is None:
        return None
    try:
        return Evaluator(parse(result.dsl, "<mapper>"), None, desc), desc.task(task)
    except DslSyntaxError:
        return None


def _memory_of(ev, task: str, index: int, kind: str, have: Mapping[str, int | None]) -> str:
    """The memory kind the compiled mapper picks for requirement `index` of `task` on `kind`: the first of its list
    that the run's machine has (`have`)."""
    listed = [m for m in ev.memories(task, index, kind) if m in have or m == "VIRTUAL"]
    return (listed or ["FBMEM" if kind == "GPU" else "SYSMEM"])[0]


def _instances(found, task: str, kind: str, have: Mapping[str, int | None]) -> dict[str, list[str]]:
    """Where the run's mapper put the instances of `task` run on `kind`: memory kind -> the requirements (names, else
    indices) it holds (`_memory_of`); `found`: `_evaluator`'s answer. Empty without a DSL mapper or a description."""
    if found is None:
        return {}
    ev, info = found
    out: dict[str, list[str]] = {}
    for req in info.regions:
        out.setdefault(_memory_of(ev, task, req.index, kind, have), []).append(
            req.names[0] if req.names else str(req.index))
    return out


def _layout_options(found, info, task: str, kind: str, have: Mapping[str, int | None], result: RunResult
                    ) -> list[str]:
    """The Layout and CollectMemory statements for `task` on `kind` that change something: those its variants
    accept and whose setting the run's mapper does not already give to each of its instances (all of them where the
    mapper cannot be evaluated), AOS only where an instance not AOS holds several fields (of one field, AOS is SOA),
    CollectMemory not where every run reads its inputs again (`_inputs_reused`); `found`: `_evaluator`'s answer,
    `info`: the task's description or None."""
    layouts = ([found[0].layout(task, r.index, kind, _memory_of(found[0], task, r.index, kind, have))
                for r in info.regions] if found else [])
    options = []
    if not found or any(lay["align"] != {"op": "==", "bytes": 64} for lay in layouts):
        options.append(f"`Layout {selector_name(task)} * * Align==64;`")
    free = info is not None and not any((r.layout or r.interleave) and (not r.layout_kinds or kind in r.layout_kinds)
                                        for r in info.regions)  # its variant on this kind takes any interleaving
    if free and (not found or any(lay["order"] != "AOS" and len(_held_fields(result, r)) > 1
                                  for r, lay in zip(info.regions, layouts))):
        options.append(f"`Layout {selector_name(task)} * * AOS;`")
    read_only = [r.index for r in info.regions if r.privilege == "read_only"] if info is not None else [None]
    if read_only and not (found and set(read_only) <= set(found[0].collect(task))) and \
            not _inputs_reused(result, info):
        options.append(f"`CollectMemory {selector_name(task)} *;`")
    return options


def _held_fields(result: RunResult, req) -> set[str]:
    """The fields an instance mapperopt makes for requirement `req` holds: every field of its field space, those that
    the requirements of the run's tasks on its root (the last name of its chain) name; `req`'s own without a name or a
    description."""
    desc = _description(result)
    if not req.names or desc is None:
        return set(req.fields)
    return set(req.fields).union(*(r.fields for t in desc.tasks for r in t.regions
                                   if r.names and r.names[-1] == req.names[-1]))


def _inputs_reused(result: RunResult, info) -> bool:
    """Whether the task `info` (its description; None: unknown) runs more than once per point (the profile's count
    over its launch's points) and no task that runs at least as often writes a field of any of its read-only
    requirements (a write requirement sharing a name and a field): then every run reads the instances the previous
    one read, which collecting them after each would only make again."""
    profile = result.profile or next((a.profile for a in reversed(result.attempts) if a.profile), None) or {}
    per_point: dict[str, float] = {}
    for entry in profile.get("tasks", ()):
        per_point[entry["task"]] = per_point.get(entry["task"], 0.0) + entry.get("count", 0) / max(
            entry.get("points", 1), 1)
    desc = _description(result)
    if info is None or desc is None or per_point.get(info.name, 0.0) <= 1:
        return False
    inputs = [r for r in info.regions if r.privilege == "read_only"]
    return not any(per_point.get(t.name, 0.0) >= per_point[info.name] and w.privilege != "read_only"
                   and set(w.names) & set(r.names) and set(w.fields) & set(r.fields)
                   for t in desc.tasks for w in t.regions for r in inputs)


def _map_statement(found, dsl: str | None, task: str, index_launch: bool, kind: str):
    """The mapper's IndexTaskMap (`index_launch`) or SingleTaskMap statement that places `task`, which ran on `kind`
    (the profile's), or None (none, or no DSL mapper that parses); `found`: `_evaluator`'s answer, else the mapper is
    read without a description."""
    from mapperopt.dsl import DslSyntaxError, Evaluator, parse

    if found is None:
        try:
            found = (Evaluator(parse(dsl, "<mapper>"), None),) if dsl is not None else None
        except DslSyntaxError:
            return None
    return found[0].map_statement(task, index_launch, kind) if found else None


def _processors_used(result: RunResult, row: dict, info, machine: Mapping[str, dict]
                     ) -> tuple[int, list[int]] | None:
    """(the points of `row["task"]`'s index launch, the indices of the processors of the run's kind (`row["kind"]`)
    that the mapper's map statement puts them on), for the launch domain of `info` (the task's description),
    evaluated on the run's machine (one node); None where that is unknown: a single task, no domain, a processor
    set, a failing function, or a launch too large to evaluate here."""
    from mapperopt.descriptions import MachineDescription
    from mapperopt.dsl import Evaluator, parse
    from mapperopt.dsl.machine import Proc

    domain = tuple(info.domain or ()) if info.index_launched else ()
    volume = 1
    for extent in domain:
        volume *= extent
    if not domain or volume > MAX_POINTS:
        return None
    counts = tuple((k, (v["procs"],)) for k, v in machine.items())
    try:
        ev = Evaluator(parse(result.dsl, "<mapper>"), MachineDescription(1, counts), _description(result))
        placed = [ev.place(row["task"], point, domain) for point in itertools.product(*map(range, domain))]
    except MapperoptError:  # DSL errors (syntax, runtime) are MapperoptErrors
        return None
    if not all(isinstance(p, Proc) and p.kind == row["kind"] for p in placed):
        return None
    return volume, sorted({p.index for p in placed})


def _placement(texts: Mapping[str, str], row: dict, machine: Mapping[str, dict], result: RunResult) -> str:
    """The suggestion for the heaviest task: first, where the mapper's Layout statements take its instances away
    from Legion's default layout, to measure it with that layout (`_departing_layouts`); then only what this machine
    lets a mapper change for it, with statements its variants accept and that the mapper does not already say."""
    kind = machine.get(row["kind"], {"procs": 1, "memories": {}})
    found = _evaluator(result, row["task"])  # parsed and evaluated once for the helpers below
    rest = _placement_options(texts, row, kind, found, machine, result)
    layouts = _departing_layouts(found, row["task"], row["kind"], kind["memories"], result)
    if not layouts:
        return rest
    from mapperopt.dsl.formatter import format_statement

    back = texts["layout_departs"].format(task=row["task"], statements=", ".join(_stated(s) for s, _ in layouts),
                                          replacements=" and ".join(f"`{format_statement(n)}` in place of "
                                                                    f"`{format_statement(s)}`" for s, n in layouts))
    return f"{back} {rest}"


def _departing_layouts(found, task: str, kind: str, have: Mapping[str, int | None], result: RunResult
                       ) -> list[tuple[Any, Any]]:
    """The pairs of `_layout_changes` (an Align no variant needs included) whose statement decides the layout of
    an instance of `task` run on `kind` under the run's mapper; `found`: `_evaluator`'s answer ([] without)."""
    if found is None:
        return []
    ev, info = found
    deciding = {s.loc for r in info.regions
                for s in ev.layout_sources(task, r.index, kind, _memory_of(ev, task, r.index, kind, have))[1].values()}
    return [(s, n) for s, n in _layout_changes(result, align=True) if s.loc in deciding]


def _placement_options(texts: Mapping[str, str], row: dict, kind: dict, found, machine: Mapping[str, dict],
                       result: RunResult) -> str:
    """`_placement`'s advice after the layout: `kind`, the machine's processors and memories of the task's kind;
    `found`: `_evaluator`'s answer."""
    info = found[1] if found else (_tasks(result) or {}).get(row["task"])
    parts = []
    procs = f"one {row['kind']} processor"
    if kind["procs"] > 1:
        statement = "IndexTaskMap" if info is None or info.index_launched else "SingleTaskMap"
        procs = f"{kind['procs']} {row['kind']} processors"
        mapped = _map_statement(found, result.dsl, row["task"], statement == "IndexTaskMap", row["kind"])
        used = _processors_used(result, row, info, machine) if mapped is not None and info is not None else None
        if mapped is not None and used is not None and len(used[1]) < min(used[0], kind["procs"]):
            used = used[1]
            on = (f"every point of '{row['task']}' on {row['kind']} {used[0]}" if len(used) == 1 else
                  f"the points of '{row['task']}' on {row['kind']}s {', '.join(map(str, used))}")
            parts.append(texts["placement_narrow"].format(**row, statement=statement, line=mapped.loc.line,
                                                          on=on, used=len(used), procs=kind["procs"]))
        if mapped is None or parts:
            parts.append(texts["placement"].format(**row, statement=statement, procs=procs))
        else:  # never propose what the mapper already says
            procs += (f", over which the mapper's {statement} statement at line {mapped.loc.line} already places "
                      "it")
    placed = _instances(found, row["task"], row["kind"], kind["memories"])
    sized = {m: _memories_text({m: kind["memories"].get(m)}) for m in placed}
    where = (", ".join(f"{sized[m]} ({', '.join(dict.fromkeys(reqs))})" for m, reqs in placed.items())
             if len(placed) > 1 else next(iter(sized.values()), None) or _memories_text(kind["memories"]))
    others = [m for m in kind["memories"] if m not in placed]
    if placed and others:
        parts.append(texts["other_memories"].format(task=row["task"], task_sel=selector_name(row["task"]),
                                                    kind=row["kind"], other=others[0], where=where))
    elif not placed and len(kind["memories"]) > 1:  # where its instances are is unknown (no description)
        parts.append(texts["memories"].format(task=row["task"], kind=row["kind"],
                                              memories=_memories_text(kind["memories"])))
    if parts:
        return " ".join(parts)
    # One processor and every memory in use: the instances' layout and lifetime are left, as far as the variants
    # accept them and the mapper does not set them already.
    options = _layout_options(found, info, row["task"], row["kind"], kind["memories"], result)
    if not options:
        return texts["nothing_left"].format(task=row["task"], kind=row["kind"], where=where, procs=procs)
    from mapperopt.benchmarks.userapp import output_checked

    text = texts["machine_fixed"].format(task=row["task"], kind=row["kind"], where=where, procs=procs,
                                         options=", ".join(options[:-1]) + " or " + options[-1] if len(options) > 1
                                         else options[0])
    aos = f"`Layout {selector_name(row['task'])} * * AOS;`"
    if aos in options and (shared := _aos_shared(result, row["task"], row["kind"], machine)):
        others, regions, together = shared
        text += " " + " ".join(texts["aos_shared"].split()).format(
            statement=aos.strip("`"), task=row["task"], others=others, regions=regions)
        if together:
            text += " " + " ".join(texts["aos_together"].split()).format(statement=together)
    if aos in options:
        text += " " + texts["aos_kernels"]
    layouts = any(o.startswith("`Layout") for o in options)
    return f"{text} {texts['unverified_layouts']}" if layouts and not output_checked(result) else text


def _aos_shared(result: RunResult, task: str, kind: str, machine: Mapping[str, dict]
                ) -> tuple[str, str, str | None] | None:
    """Where `Layout TASK * * AOS;` would give `task` (run on `kind`) AOS instances of fields (of the same root
    region) that other tasks' requirements keep in SOA instances under the run's mapper, which makes Legion copy
    between AOS and SOA instances of one field: (those tasks, as the texts name them: "a, b and c"; `task`'s
    requirements that share their fields, by name; the statement that gives AOS to every task that shares fields with
    them, transitively, where each accepts it: `Layout * * * AOS;` where that is every task with requirements, else
    None); None where nothing is shared or it is unknown (no description, a mapper that does not evaluate)."""
    from mapperopt.descriptions import MachineDescription
    from mapperopt.dsl import Evaluator, parse

    desc = _description(result) if result.dsl is not None else None
    info = desc.task(task) if desc is not None else None
    if info is None:
        return None

    def fields(t) -> set[tuple[str, str]]:  # (root region, field) of each of a task's requirements
        return {(r.names[-1], f) for r in t.regions if r.names for f in r.fields}

    def soa(t, r) -> bool:  # its instance under the run's mapper is not AOS
        k = ev.task_kind(t.name)
        return ev.layout(t.name, r.index, k, _memory_of(ev, t.name, r.index, k, machine.get(k, {}).get(
            "memories", {})))["order"] != "AOS"

    try:
        ev = Evaluator(parse(result.dsl, "<mapper>"),
                       MachineDescription(1, tuple((k, (v["procs"],)) for k, v in machine.items())), desc)
        mine = fields(info)
        others = [t for t in desc.tasks if t.name != task and any(
            {(r.names[-1], f) for f in r.fields} & mine and soa(t, r) for r in t.regions if r.names)]
    except MapperoptError:  # DSL errors (syntax, runtime) are MapperoptErrors
        return None
    if not others:
        return None
    shared = set().union(*map(fields, others))
    regions = [r.names[0] for r in info.regions if r.names and {(r.names[-1], f) for f in r.fields} & shared]
    # every task that shares fields with those, transitively
    group, keys = {task}, set(mine)
    while more := [t for t in desc.tasks if t.name not in group and fields(t) & keys]:
        group |= {t.name for t in more}
        keys |= set().union(*map(fields, more))
    members = [t for t in desc.tasks if t.name in group]
    together = None
    if not any(r.interleave == "SOA" for t in members for r in t.regions):  # each accepts AOS
        users = [t.name for t in desc.tasks if t.regions]
        together = ("Layout * * * AOS;" if len(members) == len(users) else
                    f"Layout {','.join(selector_name(t.name) for t in members)} * * AOS;")
    names = [t.name for t in others]
    return (", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0],
            ", ".join(dict.fromkeys(regions)), together)


def loop_busy(result: RunResult, rows: list[dict]) -> dict | None:
    """How much of one iteration of the measured loop its tasks fill: {"task_ms": the timed loop's leaf tasks'
    milliseconds per iteration (the profile's, summed over the processors), "loop_ms": the measured executions'
    milliseconds per timed iteration, "busy": percent}; None where the profile does not tell the timed loop (a user's
    program), or where a loop task ran on a GPU (the profile times its body on the host, not its kernels)."""
    p = result.profile or {}
    ran = (p.get("warmup") or 0) + (p.get("timed") or p.get("iterations") or 0) + (p.get("after") or 0)
    timed = [r for r in rows if r["timed"]]
    done = next((a.result for a in reversed(result.attempts) if a.result), None)  # a measured execution's
    if not p.get("iterations") or not timed or any(r["kind"] == "GPU" for r in timed) or not result.time_s \
            or not (done or {}).get("iterations"):
        return None
    task_ms = 1e3 * sum(r["total_s"] for r in timed) / ran  # a loop task runs in every iteration the profile ran
    loop_ms = 1e3 * result.time_s / done["iterations"]
    return {"task_ms": task_ms, "loop_ms": loop_ms, "busy": 100 * task_ms / loop_ms}


def _reference_interval(result: RunResult, name: str, base: float) -> list[float] | None:
    """The 90 % interval of reference `name`'s measurement, from its run folder `baseline-<name>` beside the run's
    (a tuning iteration's) or its parent's (a comparison's), where that measured `base`; None where there is none."""
    if not result.run_dir:
        return None
    for folder in list(Path(result.run_dir).parents)[:2]:
        try:
            ref = RunResult.from_json(json.loads((folder / f"baseline-{name}" / "result.json").read_text()))
        except (OSError, ValueError, MapperoptError):
            continue
        if ref.recorded_throughput and abs(ref.recorded_throughput - base) <= 1e-9 * base and ref.interval:
            return ref.interval
    return None


def _ratio_range(texts: Mapping[str, str], result: RunResult, name: str, base: float) -> str:
    """`versus_range` for the ratio of the run to reference `name` (its throughput `base`): its range by the run's
    90 % interval and the reference's (`_reference_interval`) where known, "within the noise" where that includes 1;
    "" where neither is known."""
    ref = _reference_interval(result, name, base)
    if not result.interval and not ref:
        return ""
    lo, hi = result.interval or (result.recorded_throughput,) * 2
    ref_lo, ref_hi = ref or (base, base)
    low, high = lo / ref_hi, hi / ref_lo
    return " " + texts["versus_range"].format(
        low=low, high=high, within="within the noise: " if low <= 1 <= high else "",
        intervals="the 90 % intervals of this run and of that mapper's" if ref else "this run's 90 % interval")


def _counted(result: RunResult, rows: list[dict]) -> dict | None:
    """For a user's program (its timed loop unknown): {"counted_s": the seconds of the tasks `task_profile` counts,
    summed over the processors, "wall_s": the process's wall time, "share": the percent of it they fill, "covered":
    that percent as the text writes it, "others": the program's profiled tasks it leaves out (inner tasks, tasks
    without region requirements), heaviest first, "" for none: not the top-level task, whose time is its children's,
    nor the runtime's own tasks, which the program does not describe};
    None for a benchmark, without counted tasks or without a wall time."""
    if "app_file" not in (result.settings or {}) or not rows or not result.time_s:
        return None
    profile = result.profile or next((a.profile for a in reversed(result.attempts) if a.profile), None) or {}
    counted_s, names = sum(r["total_s"] for r in rows), {r["task"] for r in rows}
    tasks = _tasks(result) or {}
    left: dict[str, float] = {}
    for entry in profile.get("tasks", ()):
        info = tasks.get(entry["task"])
        if entry["task"] not in names and info is not None and info.parent is not None:
            left[entry["task"]] = left.get(entry["task"], 0.0) + entry.get("total_s", 0.0)
    covered = 100 * counted_s / result.time_s
    return {"counted_s": counted_s, "wall_s": result.time_s, "share": covered,
            "covered": f"{covered:.2g}" if covered < 10 else f"{covered:.0f}",
            "others": ", ".join(sorted(left, key=lambda t: -left[t]))}


def _mapper_file(result: RunResult) -> str:
    """The run's DSL file: the one it was given, else the `mapper.dsl` a tuning iteration's run folder holds, else
    `start.dsl` for Legion's default mapper (the advice says what to write in it; not `default.dsl`, which reads as
    a file of `--mapper default`) and `my.dsl` as a template."""
    settings = result.settings or {}
    if settings.get("mapper_file"):
        return settings["mapper_file"]
    if result.dsl is not None and result.run_dir and (Path(result.run_dir) / "mapper.dsl").is_file():
        return str(Path(result.run_dir) / "mapper.dsl")
    return "start.dsl" if result.dsl is None and not settings.get("own_mapper") else "my.dsl"


def _default_as_dsl(result: RunResult) -> str:
    """A DSL mapper that maps as Legion's default mapper does: GPUs first where the run has them, each kind's own
    memory, SOA F_order instances, except where a variant of a user's program constrains the layout (its discovered
    description's `interleave`, `layout`, `required_align`): a Layout statement for that requirement keeps it, as
    Legion's default mapper does. A run that keeps the program's own mapper (--keep-app-mapper), where a `*` names
    no task, gets a Task statement for each of the program's tasks (its discovered description's; `TASK` where
    there is none)."""
    from mapperopt.dsl.formatter import selector_name

    settings = result.settings or {}
    described = _description(result) if settings.get("description") else None
    tasks = ("*",) if not settings.get("keep_app_mapper") else (
        tuple(map(selector_name, described.task_names)) if described is not None else ("TASK",))
    if settings.get("gpus"):
        kinds, regions = "GPU,CPU", "Region * * GPU FBMEM; Region * * CPU SYSMEM;"
    else:
        kinds, regions = "CPU", "Region * * CPU SYSMEM;"
    kept = []  # the variants' layout constraints, which the global Layout line would override
    for info in described.tasks if described is not None else ():
        for r in info.regions:
            aligns = {k: f"Align{op}{n}" for k, op, n in r.required_align}
            for kind in r.layout_kinds or (("*",) if r.layout or r.interleave else ()):
                aspects = [a for a in (r.interleave, r.layout, aligns.pop(kind, None)) if a]
                kept.append(f"Layout {selector_name(info.name)} {r.index} {kind} {' '.join(aspects)};")
            kept += [f"Layout {selector_name(info.name)} {r.index} {k} {a};" for k, a in aligns.items()]
    return " ".join([*(f"Task {t} {kinds};" for t in tasks), regions, "Layout * * * SOA F_order;", *kept])


def suggested_run_command(result: RunResult, *options: str) -> str:
    """The `mapperopt run` command that runs the run's application as the run did, with `options` (`--mapper FILE
    --profile`; none: without a DSL mapper): the options that shaped the run (--size, the --cpus and --gpus given,
    --csize, --fsize, --zsize, the arguments after `--`) carried over, so that it runs on the same machine."""
    settings = result.settings or {}
    words = [*shlex.split(settings.get("app_options") or "")] if "app_file" in settings else [result.app]
    if "app_file" in settings and not words:  # a run recorded without `app_options`: an obvious template
        words = ["--app", settings["app_file"] or "PROGRAM ITS-ARGUMENTS"]
    if settings.get("size", "ci") != "ci":
        words += ["--size", str(settings["size"])]
    given = settings.get("given") or {}
    for option in ("cpus", "gpus", "csize", "fsize", "zsize"):
        value = given.get(option) if option in ("cpus", "gpus") else settings.get(option)
        if value is not None:
            words += [f"--{option}", str(value)]
    words += options
    if settings.get("extra_args"):
        words += ["--", *settings["extra_args"]]
    return toolchain.command("run", *words)  # every failure's texts have it: no value may stop them


def _profiled_command(result: RunResult) -> str:
    """The `mapperopt run` command that measures the run's application with a DSL mapper and profiles it."""
    settings = result.settings or {}
    if "app_file" in settings:  # a user's program: no expert mapper, and profiling is asked for
        keep = ["--keep-app-mapper"] if settings.get("own_mapper") and "--keep-app-mapper" not in \
            shlex.split(settings.get("app_options") or "") else []
        return suggested_run_command(result, "--mapper", _mapper_file(result), *keep, "--profile")
    return suggested_run_command(result, "--mapper", "expert")


def _overhead_remedies(result: RunResult, rows: list[dict], machine: Mapping[str, dict]) -> list[str]:
    """The remedies against the runtime's overhead (keys of the `performance` texts) that apply to the run's mapper:
    fewer, larger tasks always; the trace replayed where its InstanceLimit statements turned the replay off (the
    run's command has `-lg:no_physical_tracing`), else fewer tasks held back where it has InstanceLimit statements
    (a program that traces no loop); instances where their tasks run where the mapper puts some of the
    timed loop's tasks' elsewhere, or where that is unknown (a mapper without a description to evaluate it with)."""
    keys = ["overhead_larger_tasks"]
    command = shlex.split((result.settings or {}).get("command", ""))
    if result.dsl is not None and "-lg:no_physical_tracing" in command and program_traces(command) is not False:
        keys.append("overhead_replay")
    elif _instance_limits(result):  # no traced loop to replay: the limits hold tasks back all the same
        keys.append("overhead_limit")
    own = {"CPU": "SYSMEM", "GPU": "FBMEM"}  # the memory of each kind's processors
    for r in rows if result.dsl is not None else ():  # Legion's default mapper: where its tasks run
        if not r["timed"] or r["kind"] not in machine:
            continue
        found = _evaluator(result, r["task"])
        placed = _instances(found, r["task"], r["kind"], machine[r["kind"]]["memories"])
        if not placed or set(placed) - {own.get(r["kind"])}:
            keys.append("overhead_local")
            break
    return keys


def _own_metric(result: RunResult) -> str | None:
    """For a user's program measured by a metric pattern: the pattern and the median of the executions' metric,
    "/elapsed: ([0-9.]+) ms/ 12.5 ms"; None otherwise (the wall time is the metric)."""
    import statistics

    said = (result.settings or {}).get("metric") or ""  # `Metric.describe`: "/REGEX/ in ms, lower is better"
    values = [a.result["metric"] for a in result.attempts if a.result and "metric" in a.result]
    cut = max(said.rfind("/ in "), said.rfind("/ (no unit)"))
    if "app_file" not in (result.settings or {}) or not said.startswith("/") or cut < 0 or not values:
        return None
    unit = (result.unit or "").removeprefix("1/") if (result.unit or "") != "1/metric" else ""
    return f"{said[:cut + 1]} {statistics.median(values):.4g} {unit}".rstrip()


def _performance(result: RunResult, level: str, best: float | None, baselines: Mapping[str, float],
                 catalog: Catalog, own_mapper: str | None = None, best_result: RunResult | None = None) -> Feedback:
    from mapperopt.benchmarks.apps import BEFORE_TIMER
    from mapperopt.benchmarks.protocol import values_of

    texts = catalog.performance or load_catalog().performance
    unit = result.unit or ""
    value = result.recorded_throughput  # the figure the search records and compares with `best`
    rows = task_profile(result)
    # Shares of the timed loop's task time where the profile tells the timed loop's tasks from the set-up and check
    # tasks (the harness's profiling execution), else of all the task time measured.
    in_loop = bool((result.profile or {}).get("iterations"))
    scope = "the timed loop's task time" if in_loop else "the measured task time"
    timed_total = sum(r["total_s"] for r in rows if r["timed"])
    for r in rows:
        r["share"] = 100 * r["total_s"] / timed_total if r["timed"] and timed_total else 0.0
        r["scope"] = scope
    # Which statistic each figure is, when more than one execution was measured: the time is their median, the
    # throughput (the figure the search records) their trimmed mean.
    runs = len(values_of(result))
    median, trimmed = (f" (median of {runs} executions)", f" (trimmed mean of {runs} executions)") if runs > 1 \
        else ("", "")
    # A user's program's time is the process's wall time (Legion's start-up included), not its metric.
    timed = "Wall time of the process" if "app_file" in (result.settings or {}) else "Execution time"
    metric = (f"{timed} is {result.time_s:.3g}s{median}. " if result.time_s is not None else "") + \
        f"Achieved throughput = {value:.4g} {unit}".rstrip() + trimmed + "."
    if (own := _own_metric(result)) and result.time_s is not None:  # the figure tuned first, then the wall time
        metric = (f"{own}{median}; wall time of the process {result.time_s:.3g}s. Achieved throughput = "
                  f"{value:.4g} {unit}".rstrip() + trimmed + ".")
    expert = baselines.get("expert")
    if expert:
        # the expert's figure is its measurement before tuning, in a run of its own: said, as tune's baseline line
        # says it (only roughly comparable; the final comparison measures them together)
        metric += (f" Normalised throughput = {value / expert:.2f}x of the expert as measured before tuning ("
                   + (f"best so far {best / expert:.2f}x; " if best else "")
                   + "measured apart, at another time and load: only roughly comparable).")
    raw_lines = ["Performance Metric: " + metric]
    untimed = BEFORE_TIMER.get(result.app, ())
    raw_lines += [f"task {r['task']} on {r['kind']}: {r['count']} runs, {r['total_s']:.3g} s ("
                  + (f"{r['share']:.0f}% of {scope}" + ("; before the timer" if r["task"] in untimed else "") + ")"
                     if r["timed"] else "outside the timed loop)")
                  for r in rows[:TOP_TASKS]]
    # Explanation: how this mapper compares, and where the time goes.
    # the `default` reference of a program with its own mapper ran that one ("that of the program's own mapper")
    parts = [texts["versus"].format(ratio=value / base, noise=_ratio_range(texts, result, name, base),
                                    baseline="program's own" if name == "default" and own_mapper else name)
             for name, base in sorted(baselines.items()) if name != "expert" and base]
    if best:
        key = "new_best" if value > best else "versus_best"
        parts.append(texts[key].format(ratio=value / best, best=best, unit=unit))
        if value < best and best_result is not None and (
                changed := _changed_task(texts, rows, task_profile(best_result))):
            parts.append(changed)
    machine = machine_of(result)
    busy = loop_busy(result, rows)
    overhead = busy is not None and busy["busy"] < BUSY_SHARE
    limits = _instance_limits(result) if overhead else []
    if overhead:
        parts.append(texts["runtime_overhead"].format(**busy))
        if limits:  # they hold tasks back until others finish: the mapping is waited for (dsl-reference.md §7.4)
            parts.append(texts["overhead_limit_explain"].format(limits=", ".join(limits),
                                                                lets="lets" if len(limits) == 1 else "let"))
    counted = _counted(result, rows)
    # Counted tasks that fill a negligible part of the wall time: that leads, lest the heaviest one's share of them
    # read as a share of the run.
    little = counted is not None and counted["share"] < NEGLIGIBLE_SHARE
    counted_text = counted and " ".join([texts["counted"].format(**counted)]
                                        + [texts["not_counted"].format(**counted)] * bool(counted["others"]))
    if little:
        parts.append(counted_text)
    if rows:
        hot = {**rows[0], "scope": "the counted tasks' time"} if little else rows[0]
        parts.append(texts["hot_task"].format(**hot))
        if rows[0]["task"] in untimed:
            parts.append(texts["before_timer"])
    if counted is not None and not little:
        parts.append(counted_text)
    explanation = " ".join(parts) or "N/A"
    # Suggestion: a heavy task on the CPU that has a GPU variant, while the run has GPUs (its edit is what the guided
    # search applies, so it keeps precedence); else against the runtime's overhead where it takes most of the loop
    # (no task's placement can win more than the tasks' share); else placement.
    heavy = [r for r in rows if r["kind"] == "CPU" and "GPU" in r["variants"] and r["share"] >= HEAVY_SHARE]
    edits: tuple[Edit, ...] = ()
    if result.settings.get("gpus") and heavy:
        suggestion = texts["heavy_on_cpu"].format(task=heavy[0]["task"], task_sel=selector_name(heavy[0]["task"]))
        if result.dsl is not None:
            edits = tuple(Edit("set_task_kinds", {"task": r["task"], "kinds": ["GPU", "CPU"]}) for r in heavy)
            if changes := _edit_notes(result.dsl, edits):
                suggestion += " " + texts["heavy_on_cpu_maps"].format(changes="; ".join(changes))
    elif overhead:
        remedies = [texts[key].format(limits=", ".join(limits)) for key in _overhead_remedies(result, rows, machine)]
        suggestion = texts["runtime_overhead_suggest"].format(
            **busy, remedies="; ".join(remedies[:-1]) + "; and " + remedies[-1] if len(remedies) > 1 else remedies[0])
    elif rows:
        suggestion = _placement(texts, rows[0], machine, result)
        if little:
            suggestion = texts["counted_little"].format(**counted, task=rows[0]["task"]) + " " + suggestion
        else:
            suggestion += " " + texts["own_time"].format(task=rows[0]["task"])
    elif result.dsl is None and result.settings.get("own_mapper"):  # the program's own mapper, not Legion's default
        suggestion = texts["not_profiled_own"].format(mapper=result.settings["own_mapper"], file=_mapper_file(result),
                                                      command=_profiled_command(result))
    elif result.dsl is None and (result.settings or {}).get("no_legion_task"):  # no mapper takes part: none to try
        suggestion = texts["no_legion_task"]
    elif result.dsl is None:
        if "app_file" in (result.settings or {}):  # a user's program: how to get a DSL file that maps as the default
            key = "default_as_dsl_kept" if result.settings.get("keep_app_mapper") else "default_as_dsl"
            more = texts[key].format(mapper=_mapper_file(result), dsl=_default_as_dsl(result),
                                     command=_profiled_command(result))
        else:
            more = texts["profile_dsl"].format(command=_profiled_command(result))
        suggestion = texts["not_profiled"] + " " + more
    elif "app_file" in (result.settings or {}):  # a user's program: which tasks its metric times is unknown
        suggestion = texts["no_profile_app"].format(machine=_machine_text(machine), command=_profiled_command(result))
    else:
        suggestion = texts["no_profile"].format(machine=_machine_text(machine))
    return _at_level(Feedback(result.status, None, "performance", explanation, suggestion, edits,
                              "\n".join(raw_lines), "performance"), level)


def _changed_task(texts: Mapping[str, str], rows: list[dict], best_rows: list[dict]) -> str | None:
    """For a run slower than the best: of the timed tasks of its task profile `rows` (`task_profile`), the one whose
    time rose most (seconds) of those that took `CHANGED_RATIO` times their time under the best or more
    (`best_rows`, the best's profile) and `CHANGED_SHARE` percent of the best's task time, as `changed_task` says it,
    else `no_task_changed`; None where the two profiles share no task. Each task summed over the processor kinds it
    ran on."""
    def per_task(rs: list[dict]) -> dict[str, dict]:
        out: dict[str, dict] = {}
        for r in rs:
            if r["timed"]:
                entry = out.setdefault(r["task"], {"total_s": 0.0, "kinds": []})
                entry["total_s"] += r["total_s"]
                entry["kinds"].append(r["kind"])
        return out

    here, there = per_task(rows), per_task(best_rows)
    floor = CHANGED_SHARE / 100 * sum(t["total_s"] for t in there.values())
    rose = [t for t in here if t in there and there[t]["total_s"] > 0
            and here[t]["total_s"] >= CHANGED_RATIO * there[t]["total_s"]
            and here[t]["total_s"] - there[t]["total_s"] >= floor]
    if not rose:
        return (texts["no_task_changed"].format(ratio=CHANGED_RATIO, share=CHANGED_SHARE) if set(here) & set(there)
                else None)
    task = max(rose, key=lambda t: here[t]["total_s"] - there[t]["total_s"])
    now, before = here[task]["total_s"], there[task]["total_s"]
    kinds = ("" if sorted(here[task]["kinds"]) == sorted(there[task]["kinds"]) else
             f"; on {', '.join(sorted(here[task]['kinds']))} here, {', '.join(sorted(there[task]['kinds']))} under "
             "the best")
    return texts["changed_task"].format(task=task, total_s=now, best_s=before, ratio=now / before, kinds=kinds)


# ----------------------------------------------------------------------------------------------------- public API


def explain(result: RunResult, *, level: str = "suggest", best: float | None = None,
            baselines: Mapping[str, float] | None = None, catalog: Catalog | None = None,
            default_failure: Mapping[str, Any] | None = None, own_mapper: str | None = None,
            best_result: RunResult | None = None) -> Feedback:
    """AutoGuide's feedback on one run.

    Args:
        result: the run (`RunResult.log` is read for a failure; result line and profile for a success).
        level: "raw", "explain" or "suggest" (see the module docstring).
        best: the best throughput seen so far in this search (same unit), if any.
        baselines: throughputs of reference mappers, e.g. {"default": 1.2, "expert": 2.3}.
        catalog: the rule catalog (default: the packaged `rules.yaml`).
        default_failure: how Legion's default mapper failed as the baseline with the same program and settings
            (`{"stage": ..., "reason": ...}`, tune's default baseline); None when it worked or was not run. A DSL
            mapper's failure at that stage is then not advised to be undone.
        own_mapper: the name of the mapper a user's program registers itself, which its `default` reference ran
            (`baselines`, `default_failure`) in place of Legion's default mapper; None for none.
        best_result: the run of the best mapper so far (`best`'s), whose task profile the explanation of a slower
            run compares with its own; None: not compared.

    Returns:
        `Feedback` (docs/autoguide.md). Never raises for any content of `result`.

    Raises:
        MapperoptError: unknown `level`.
    """
    if level not in LEVELS:
        raise MapperoptError(f"unknown feedback level {level!r}", hint=f"levels are {', '.join(LEVELS)}")
    try:
        return _explain(result, level, best, baselines or {}, catalog or load_catalog(), default_failure, own_mapper,
                        best_result)
    except Exception as exc:  # a bug of AutoGuide's must not cost the run its summary and feedback.json
        return _at_level(_failed_feedback(result, exc), level)


def _failed_feedback(result: RunResult, exc: Exception) -> Feedback:
    """The feedback on `result` when AutoGuide itself failed with `exc`: what the run says (its throughput, or its
    failure's reason) and that AutoGuide failed, where, so that the failure can be reported."""
    frame = exc.__traceback__
    while frame is not None and frame.tb_next is not None:
        frame = frame.tb_next
    where = f" at {Path(frame.tb_frame.f_code.co_filename).name}:{frame.tb_lineno}" if frame is not None else ""
    explanation = (f"AutoGuide failed on this run ({type(exc).__name__}: {exc}{where}), a bug of mapperopt's: the "
                   "run's result stands, but there is no explanation or suggestion for it; please report it with the "
                   "run folder.")
    if result.ok and result.throughput is not None:
        raw = (f"Performance Metric: Achieved throughput = {result.recorded_throughput:.4g} {result.unit or ''}"
               .rstrip() + ".")
        return Feedback(result.status, None, "performance", explanation, "N/A", (), raw, "autoguide-failed")
    return Feedback(result.status, result.stage, "autoguide.failed", explanation, "N/A", (),
                    result.reason or "", "autoguide-failed")


def _explain(result: RunResult, level: str, best: float | None, baselines: Mapping[str, float],
             catalog: Catalog, default_failure: Mapping[str, Any] | None = None,
             own_mapper: str | None = None, best_result: RunResult | None = None) -> Feedback:
    if result.ok and result.throughput is not None:
        return _untraced(_performance(result, level, best, baselines, catalog, own_mapper, best_result), result,
                         level, catalog)
    fb = _failure(result, level, catalog, default_failure, own_mapper, bool(baselines.get("default")))
    if "app_file" in (result.settings or {}):  # a user's program
        fb = _app_failure(fb, result, level, catalog, default_failure, own_mapper)
    verdict = (result.settings or {}).get("default_mapper") or {}
    # The energy tolerance's rule names the flag to change, which the generic text below would not.
    if result.stage == "verify" and verdict.get("stage") == "verify" and fb.rule != "pennant-energy-tolerance":
        texts = catalog.application or load_catalog().application
        fields = {"reason": verdict.get("reason") or "verification failed", "app": result.app}
        fb = _at_level(Feedback(result.status, result.stage, "verification.application",
                                _text(texts["explain"], fields), _text(texts["suggest"], fields), (),
                                fb.raw_excerpt, "verification-default-mapper"), level)
    return _untraced(fb, result, level, catalog) if result.stage == "timeout" else fb


def _app_failure(fb: Feedback, result: RunResult, level: str, catalog: Catalog,
                 default_failure: Mapping[str, Any] | None = None, own_mapper: str | None = None) -> Feedback:
    """`fb` for a user's program (`--app`) that exited normally but failed: its output fails the verification of
    the application file or the --verify-* options, its own check (its result line says `"verified": false`), or its
    figure of merit cannot be read (stage "run" after exit status 0: the metric pattern); else `fb` unchanged."""
    settings = result.settings
    last = result.attempts[-1] if result.attempts else None
    stdout = str(Path(result.run_dir or ".") / last.stdout) if last else "(not kept)"
    no_mapper = ("_no_mapper" if result.dsl is None else "_default_failed"
                 if (default_failure or {}).get("stage") == result.stage == "verify" else "")
    if result.stage == "verify":
        from mapperopt.benchmarks.harness import OWN_LINE_IS, UNREAD_OWN_CHECK, reported_check
        from mapperopt.benchmarks.userapp import verify_option

        texts = catalog.app_verify or load_catalog().app_verify
        # The option that set the failed check, where the run was given it (`app_options`: --app and its options,
        # over the application file's too), else the file.
        option = verify_option(result.reason or "")
        given = option is not None and option in shlex.split(settings.get("app_options") or "")[2::2]
        fields = {"reason": result.reason or "verification failed", "app": result.app, "stdout": stdout,
                  "output": f"Its standard output is in {stdout}",
                  "default_reason": (default_failure or {}).get("reason") or "no reason given",
                  "reference": _reference(own_mapper),
                  "without": _without(result, own_mapper),
                  "where": f"the {option} option" if given else settings["app_file"]
                  or "the --verify-pattern, --verify-cmd or --reference option"}
        own = "own_" if last is not None and (last.result or {}).get("verified") is False else ""
        if UNREAD_OWN_CHECK in (result.reason or "") and last is not None:
            status = f"exit status {last.exit_code}"
            return _at_level(Feedback(result.status, result.stage, "verification",
                                      _text(texts["own_unread_explain"], {**fields, "status": status}),
                                      _text(texts["own_unread_suggest"], fields), (), fb.raw_excerpt,
                                      "verification-app-own-check"), level)
        if own:
            fields["check"] = reported_check(result.reason or "")
            fields["status"] = f"exit status {last.exit_code}"
            at = re.search(re.escape(OWN_LINE_IS) + r"(line (\d+) of the standard (output|error))\)",
                           result.reason or "")
            fields["line"] = f"its MAPPEROPT_RESULT line, {at[1]}," if at else "its MAPPEROPT_RESULT line"
            if at and at[3] == "error":  # the file that holds the failed line, where to read it
                stderr = str(Path(result.run_dir or ".") / last.stderr)
                fields["output"] = f"Its standard error, with that line (line {at[2]}), is in {stderr}"
            elif at:
                fields["output"] = f"Its standard output, with that line (line {at[2]}), is in {stdout}"
        from mapperopt.benchmarks.userapp import WORDS_APART, intermittent

        # Earlier executions passed the same check: the output varies, which no mistake in the check can make it do.
        varies = "_intermittent" if not own and intermittent(result.reason or "") else ""
        # the pattern's words apart in a line of the output: the pattern is the likely cause, before any statement
        typo = not (own or varies or no_mapper) and WORDS_APART in (result.reason or "")
        explanation = _text(texts[own + "explain"], fields)
        suggestion = _text(texts["suggest_pattern"] if typo else
                           texts[own + "suggest" + no_mapper + (varies if no_mapper != "_default_failed" else "")],
                           fields)
        if not no_mapper and not typo:
            explanation, suggestion = _layout_verify(result, explanation, suggestion, catalog)
        return _at_level(Feedback(result.status, result.stage, "verification", explanation, suggestion, (),
                                  fb.raw_excerpt, "verification-app-own-check" if own else "verification-app-check"),
                         level)
    if result.stage == "run" and last is not None and last.exit_code == 0:
        texts = catalog.app_metric or load_catalog().app_metric
        printed = (result.log or "").partition("--- stdout ---\n")[2].strip().splitlines()[-3:]
        # The --metric option where the run was given one (over the application file's too), else the file.
        given = "--metric" in shlex.split(settings.get("app_options") or "")[2::2]
        fields = {"app": result.app, "reason": result.reason or "no metric", "stdout": stdout,
                  "metric": settings.get("metric") or "?",
                  "where": "the --metric option" if given or not settings["app_file"] else settings["app_file"],
                  "output": " / ".join(repr(line.strip()) for line in printed) or "nothing (it is empty)"}
        # `-logfile FILE` among the program's arguments: a Realm logger's lines went to FILE, not searched.
        command = shlex.split(settings.get("command") or "")
        logfile = next((command[i + 1] for i in range(len(command) - 1) if command[i] == "-logfile"), "stderr")
        suggest = texts["suggest"]
        if logfile not in ("stderr", "stdout"):
            # Legion writes one file per node, `%` replaced by the node's number: name the files it wrote
            where = Path(result.run_dir or ".")
            path = str(where / logfile)
            if "%" in logfile:
                written = sorted(where.glob(glob.escape(logfile).replace("%", "*")))
                path = (", ".join(map(str, written)) if written else str(where / logfile.replace("%", "0"))) + \
                    " (Legion replaces % by the node number)"
            fields.update(logfile=logfile, path=path)
            suggest = texts["suggest_logfile"]
        return _at_level(Feedback(result.status, result.stage, "metric", _text(texts["explain"], fields),
                                  _text(suggest, fields), (), fb.raw_excerpt, "metric-app-pattern"), level)
    return fb


def _instance_limits(result: RunResult) -> list[str]:
    """The InstanceLimit statements of the run's DSL mapper as a text names them, "`InstanceLimit t 4;` (line 3 of
    the mapper)"; [] for none, no DSL mapper or one that does not parse."""
    from mapperopt.dsl import DslSyntaxError, parse
    from mapperopt.dsl import ast as A

    if result.dsl is None:
        return []
    try:
        limits = [s for s in parse(result.dsl, "<mapper>").statements if isinstance(s, A.InstanceLimitStmt)]
    except DslSyntaxError:
        return []

    def named(s: A.InstanceLimitStmt) -> str:
        tasks = ",".join(selector_name(n.name) for n in s.tasks.names) if s.tasks.names else "*"
        proc = "" if s.proc is None else " " + (s.proc.name if isinstance(s.proc, A.Kind) else "*")
        return f"`InstanceLimit {tasks}{proc} {s.count};` (line {s.loc.line} of the mapper)"
    return [named(s) for s in limits]


def _untraced(fb: Feedback, result: RunResult, level: str, catalog: Catalog) -> Feedback:
    """`fb` with the note that the mapper's InstanceLimit statements turned Legion's trace replay off (the run's
    command has `-lg:no_physical_tracing`, `harness.no_replay_flags`), for a finished or timed-out run."""
    command = shlex.split((result.settings or {}).get("command", ""))
    if result.dsl is None or "-lg:no_physical_tracing" not in command:
        return fb
    traces = program_traces(command)
    if traces is False:
        return fb
    limits = _instance_limits(result)
    if not limits:
        return fb
    texts, fields = catalog.untraced or load_catalog().untraced, {"limits": ", ".join(limits),
                                                                 "program": _program(command)}

    def add(text: str, note: str) -> str:
        return " ".join(t for t in (text, _text(note, fields)) if t and t != "N/A")

    explain_key = "explain" if traces else "explain_unknown"
    return _at_level(dataclasses.replace(fb, explanation=add(fb.explanation, texts[explain_key]),
                                         suggestion=add(fb.suggestion, texts["suggest"])), level)


def _program(command: list[str]) -> str:
    """The program of `command`: its first word after `env` and its VAR=value words ("" if none)."""
    words = command[1:] if command[:1] == ["env"] else command
    return next((w for w in words if "=" not in w), "")


def program_traces(command: list[str]) -> bool | None:
    """Whether the program of `command` (`_program`) calls Legion's begin_trace, the C++ or the C one. With
    -lg:no_physical_tracing Legion never asks the mapper about a traced operation, so the run prints nothing that
    tells a traced loop; the executable's symbols do. None (cannot tell) for a file that cannot be read or is no ELF
    executable, e.g. a wrapper script that starts the Legion program."""
    try:
        data = Path(_program(command)).read_bytes()
    except OSError:
        return None
    if not data.startswith(b"\x7fELF"):
        return None
    return b"Runtime11begin_trace" in data or b"legion_runtime_begin_trace" in data


def _execution(fb: Feedback, result: RunResult) -> str:
    """The `Execution:` part of the feedback string (docs/autoguide.md §2)."""
    lines = fb.raw_excerpt.splitlines()
    if fb.category == "performance":
        return lines[0] + "".join("\n  " + x for x in lines[1:])
    rule = load_catalog().rule(fb.rule)
    if rule is not None and rule.execution is not None:
        return "Execution Error: " + _text(rule.execution, _context(result)) + "".join("\n  " + x for x in lines)
    if result.stage in DSL_STAGES:
        # Error lines with their hints, for at most the first three errors.
        keep, errors = [], 0
        for line in lines:
            if "error[" in line or (result.stage == "compile" and "error" in line and not keep):
                errors += 1
                if errors > MAX_COMPILE_ERRORS:
                    break
                keep.append(line.strip())
            elif line.strip().startswith("hint:") and keep:
                keep.append(line.strip())
        keep = keep or lines[:1] or [result.reason or "failed"]
        return "Compile Error: " + keep[0] + "".join("\n  " + x for x in keep[1:])
    if fb.category in ("metric", "verification") and "app_file" in (result.settings or {}) and result.reason:
        # a user's program that ran to its end: why its output failed, not its first line
        return f"Execution Error: {result.reason}" + "".join("\n  " + x for x in lines)
    if result.stage == "timeout":
        head = f"Execution Error: timeout after {_context(result)['timeout_s']} s"
        return head + "".join("\n  " + x for x in lines)
    if not lines:
        return f"Execution Error: {result.reason or 'failed without any output'}"
    return "Execution Error: " + lines[0].strip() + "".join("\n  " + x for x in lines[1:])


def feedback_text(fb: Feedback, result: RunResult) -> str:
    """The feedback string the optimizer reads (docs/autoguide.md §2):

        Execution: <Compile Error: ... | Execution Error: ... | Performance Metric: ...>
        Explain: <text or N/A>          (absent at level "raw")
        Suggest: <text or N/A>          (absent at levels "raw" and "explain")

    The Execution part carries the trimmed raw output (`fb.raw_excerpt`), further lines indented by two spaces.
    """
    out = [f"Execution: {_execution(fb, result)}"]
    if fb.explanation:
        out.append(f"Explain: {fb.explanation}")
    if fb.suggestion:
        out.append(f"Suggest: {fb.suggestion}")
    return "\n".join(out)
