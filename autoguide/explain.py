"""`explain`: turn a `RunResult` into `Feedback`; `feedback_text`: the optimizer's feedback string.

A failed run is matched against the rule catalog (`rules.yaml`, see `catalog.py`); a finished run gets performance
feedback from its result line, the comparison with the best mapper so far and the baselines, and its per-task
profile (interfaces.md §5). Three levels serve the paper's ablation (optimizer.md §2.1):

* "raw": only the trimmed output (`raw_excerpt`); `explanation` and `suggestion` are empty, no edits;
* "explain": plus the explanation;
* "suggest": plus the suggestion and its structured edits (the full AutoGuide).

An empty `explanation`/`suggestion` means "not given at this level"; "N/A" means "nothing to say".
"""

from __future__ import annotations

import json
import string
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from mapperopt.autoguide import excerpt as X
from mapperopt.autoguide.catalog import Catalog, Match, load_catalog
from mapperopt.errors import MapperoptError
from mapperopt.records import Edit, Feedback, RunResult

LEVELS = ("raw", "explain", "suggest")
DSL_STAGES = ("parse", "check", "compile")
MAX_COMPILE_ERRORS = 3
TOP_TASKS = 3  # tasks listed in performance feedback
MAX_FIELD = 240  # characters of one matched value in a text


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


def _edits(match: Match, dsl: str | None) -> tuple[Edit, ...]:
    """The rule's edits, filled in, kept only if together they apply to the mapper (a mapper that does not parse
    gets edits only when the rule is for syntax errors, where nothing can be checked)."""
    if not match.rule.edits or dsl is None:
        return ()
    try:
        edits = tuple(Edit.from_json(_fill(e, match.fields)) for e in match.rule.edits)
    except _Missing:
        return ()
    from mapperopt.autoguide.edits import apply_edits
    from mapperopt.dsl import DslSyntaxError, parse

    try:
        program = parse(dsl, "<mapper>")
    except DslSyntaxError:
        return ()
    try:
        apply_edits(program, edits)
    except MapperoptError:
        return ()
    return edits


def _failure(result: RunResult, level: str, catalog: Catalog) -> Feedback:
    lines = X.clean(result.log, catalog.is_noise)
    exit_code = _exit_code(result)
    context = {"stage": result.stage, "exit_code": exit_code, "app": result.app,
               "timeout_s": result.settings.get("timeout_s")}
    match = catalog.match(lines, stage=result.stage, exit_code=exit_code, dsl=result.dsl, context=context)
    if match is not None and match.line is not None:
        picked = X.block(lines, match.line, match.rule.context)
    else:
        start = X.first_error(lines)
        picked = X.block(lines, start, 8) if start is not None else lines[-8:]
    raw = X.trim(picked)
    if match is None:
        explanation = _text(catalog.generic["explain"], context)
        suggestion = _text(catalog.generic["suggest"], context)
        category, rule, edits = "unknown", "generic", ()
    else:
        explanation = _text(match.rule.explain, match.fields)
        suggestion = _text(match.rule.suggest, match.fields)
        category, rule, edits = match.rule.category, match.rule.id, _edits(match, result.dsl)
    return _at_level(Feedback(result.status, result.stage, category, explanation, suggestion, edits, raw, rule), level)


def _text(template: str, fields: Mapping[str, Any]) -> str:
    """A text template filled in; a field of a `maybe` pattern that was not found is left empty, and each value is
    cut to `MAX_FIELD` characters (a C++ type can fill a screen)."""
    short = {k: (v[: MAX_FIELD - 1] + "…" if isinstance(v, str) and len(v) > MAX_FIELD else v)
             for k, v in fields.items()}
    return " ".join(template.format_map(defaultdict(str, short)).split())


def _at_level(fb: Feedback, level: str) -> Feedback:
    if level == "raw":
        return Feedback(fb.status, fb.stage, fb.category, "", "", (), fb.raw_excerpt, fb.rule)
    if level == "explain":
        return Feedback(fb.status, fb.stage, fb.category, fb.explanation, "", (), fb.raw_excerpt, fb.rule)
    return fb


# ----------------------------------------------------------------------------------------------------- performance


def _profile(result: RunResult) -> list[dict]:
    """Per (task, kind) totals of the last attempt that has a profile, heaviest first."""
    profile = next((a.profile for a in reversed(result.attempts) if a.profile), None)
    if not profile:
        return []
    totals: dict[tuple[str, str], dict] = {}
    for entry in profile.get("tasks", ()):
        key = (entry["task"], entry["kind"])
        row = totals.setdefault(key, {"task": key[0], "kind": key[1], "count": 0, "total_s": 0.0})
        row["count"] += entry.get("count", 0)
        row["total_s"] += entry.get("total_s", 0.0)
    return sorted(totals.values(), key=lambda r: -r["total_s"])


def _ratio(value: float, base: float | None) -> float | None:
    return value / base if base else None


def _performance(result: RunResult, level: str, best: float | None, baselines: Mapping[str, float],
                 catalog: Catalog) -> Feedback:
    texts = catalog.performance
    unit = result.unit or ""
    value = result.throughput
    rows = _profile(result)
    task_total = sum(r["total_s"] for r in rows)
    raw_lines = [f"MAPPEROPT_RESULT " + json.dumps(a.result) for a in result.attempts[-1:] if a.result]
    for r in rows[:TOP_TASKS]:
        share = 100 * r["total_s"] / task_total if task_total else 0
        raw_lines.append(f"task {r['task']} on {r['kind']}: {r['count']} runs, {r['total_s']:.3g} s ({share:.0f}% "
                         f"of task time)")
    # Explanation: how this mapper compares, and where the time goes.
    parts = []
    for name in ("expert", "default"):
        ratio = _ratio(value, baselines.get(name))
        if ratio is not None:
            parts.append(texts["versus"].format(ratio=ratio, baseline=name))
    ratio = _ratio(value, best)
    if ratio is not None:
        parts.append(texts["new_best" if ratio > 1 else "versus_best"].format(ratio=ratio, best=best, unit=unit))
    if rows:
        top = rows[0]
        parts.append(texts["hot_task"].format(task=top["task"], kind=top["kind"], count=top["count"],
                                              share=100 * top["total_s"] / task_total if task_total else 0))
    explanation = " ".join(parts) or "N/A"
    # Suggestion: a heavy task on the CPU while GPUs exist; otherwise placement of the heaviest task.
    gpus = result.settings.get("gpus") or 0
    edits: tuple[Edit, ...] = ()
    on_cpu = [r for r in rows if r["kind"] == "CPU" and r["total_s"] >= 0.25 * task_total] if task_total else []
    if gpus and on_cpu:
        suggestion = texts["heavy_on_cpu"].format(task=on_cpu[0]["task"])
        edits = tuple(Edit("set_task_kinds", {"task": r["task"], "kinds": ["GPU", "CPU"]}) for r in on_cpu)
        if result.dsl is None:
            edits = ()
    elif rows:
        suggestion = texts["placement"].format(task=rows[0]["task"], kind=rows[0]["kind"])
    else:
        suggestion = texts["no_profile"]
    return _at_level(Feedback(result.status, None, "performance", explanation, suggestion, edits,
                              "\n".join(raw_lines), "performance"), level)


# ----------------------------------------------------------------------------------------------------- public API


def explain(result: RunResult, *, level: str = "suggest", best: float | None = None,
            baselines: Mapping[str, float] | None = None, catalog: Catalog | None = None) -> Feedback:
    """AutoGuide's feedback on one run.

    Args:
        result: the run (`RunResult.log` is read for a failure; result line and profile for a success).
        level: "raw", "explain" or "suggest" (see the module docstring).
        best: the best throughput seen so far in this search (same unit), if any.
        baselines: throughputs of reference mappers, e.g. {"default": 1.2, "expert": 2.3}.
        catalog: the rule catalog (default: the packaged `rules.yaml`).

    Returns:
        `Feedback` (interfaces.md §8). Never raises for any content of `result`.

    Raises:
        MapperoptError: unknown `level`.
    """
    if level not in LEVELS:
        raise MapperoptError(f"unknown feedback level {level!r}", hint=f"levels are {', '.join(LEVELS)}")
    catalog = catalog or load_catalog()
    if result.ok:
        return _performance(result, level, best, baselines or {}, catalog)
    return _failure(result, level, catalog)


def _execution(fb: Feedback, result: RunResult) -> str:
    """The `Execution:` part of the feedback string (optimizer.md §2.2)."""
    if result.ok:
        t = f"Execution time is {result.time_s:.3g}s. " if result.time_s is not None else ""
        line = f"Performance Metric: {t}Achieved throughput = {result.throughput:.4g} {result.unit or ''}".rstrip()
        return line + "." + "".join("\n  " + x for x in fb.raw_excerpt.splitlines()[1:])
    lines = fb.raw_excerpt.splitlines()
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
    if result.stage == "timeout":
        head = f"Execution Error: timeout after {result.settings.get('timeout_s', '?')} s"
        return head + "".join("\n  " + x for x in lines)
    if not lines:
        return f"Execution Error: {result.reason or 'failed without any output'}"
    return "Execution Error: " + lines[0].strip() + "".join("\n  " + x for x in lines[1:])


def feedback_text(fb: Feedback, result: RunResult) -> str:
    """The feedback string the optimizer reads (optimizer.md §2.2):

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
