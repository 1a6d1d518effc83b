"""AutoGuide's rule catalog: loading `rules.yaml` and matching a failed run's output against it.

The catalog is data (`rules.yaml`, schema `mapperopt.autoguide-rules/1`); this module only validates and applies it.
A rule says: in the output of these stages (and, optionally, with these exit codes, or for a mapper whose DSL text
matches a pattern), a line matching `match` means `category`, explained by `explain` and fixed by `suggest` and
`edits`. Rules are tried in file order and the first that matches wins, so specific rules come before generic ones.

Templates (`explain`, `suggest`, and the string values of `edits`) use `{name}` fields, filled from the named groups
of `match` and of `also` and from the run's context (`stage`, `exit_code`, `timeout_s`, `app`, `without`, `command`). A
template field that no group of the rule and no context variable can supply is an error when the catalog is loaded.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from mapperopt.errors import MapperoptError
from mapperopt.records import STAGES

SCHEMA = "mapperopt.autoguide-rules/1"
# {without}: the mapper a run without --mapper uses, "Legion's default mapper" or the program's own (by name);
# {command}: the `mapperopt run` command of that run, with the options that shaped this one (and its --timeout after
# a timeout), to copy.
CONTEXT_FIELDS = ("stage", "exit_code", "timeout_s", "app", "without", "command")
# Fields that AutoGuide computes from the run for a rule that `needs` them (the rule applies only when they are set):
# {costly}: after a timeout, the mapper's mapping functions whose one evaluation makes more calls than check's
# static evaluation allows (`explain._costly_functions`).
COMPUTED_FIELDS = ("costly",)
# Texts outside the rules, and the fields each may use.
GENERIC_FIELDS = {"explain": CONTEXT_FIELDS, "suggest": CONTEXT_FIELDS}
PERFORMANCE_FIELDS = {
    "versus": ("ratio", "baseline", "noise"), "versus_range": ("low", "high", "within", "intervals"),
    "versus_best": ("ratio", "best", "unit"), "new_best": ("ratio", "best", "unit"),
    "hot_task": ("task", "kind", "count", "total_s", "share", "scope"), "heavy_on_cpu": ("task", "task_sel"),
    "heavy_on_cpu_maps": ("changes",),
    "placement_narrow": ("task", "kind", "count", "total_s", "share", "statement", "line", "on", "used", "procs"),
    "placement": ("task", "kind", "count", "total_s", "share", "procs", "statement"),
    "other_memories": ("task", "task_sel", "kind", "other", "where"), "memories": ("task", "kind", "memories"),
    "layout_departs": ("task", "statements", "replacements"),
    "machine_fixed": ("task", "kind", "where", "options", "procs"), "nothing_left": ("task", "kind", "where", "procs"),
    "unverified_layouts": (), "aos_shared": ("statement", "task", "others", "regions"), "aos_together": ("statement",),
    "aos_kernels": (), "own_time": ("task",),
    "no_profile": ("machine",), "no_profile_app": ("machine", "command"),
    "not_profiled": (), "profile_dsl": ("command",), "default_as_dsl": ("mapper", "dsl", "command"),
    "default_as_dsl_kept": ("mapper", "dsl", "command"),
    "not_profiled_own": ("mapper", "file", "command"),
    "no_legion_task": (),
    "runtime_overhead": ("task_ms", "loop_ms", "busy"),
    "runtime_overhead_suggest": ("task_ms", "loop_ms", "busy", "remedies"),
    "overhead_larger_tasks": (), "overhead_replay": (), "overhead_local": (), "before_timer": (),
    "overhead_limit_explain": ("limits", "lets"), "overhead_limit": ("limits",),
    "counted": ("counted_s", "wall_s", "share", "covered"), "not_counted": ("others",),
    "counted_little": ("covered", "task"),
    "changed_task": ("task", "total_s", "best_s", "ratio", "kinds"), "no_task_changed": ("ratio", "share"),
}
# Texts for a wrong result that Legion's default mapper gives too (the application's or the size's problem).
APPLICATION_FIELDS = {"explain": ("reason", "app"), "suggest": ("app",)}
# Texts for a user's program whose output fails verification: the application file's or the --verify-* options'
# (`explain`, `suggest`), or the program's own check, its result line saying `"verified": false` (`own_*`; {check}:
# the line's "check" object, {status}: how the program exited, {line}: the line, with its number and output;
# {output}: the file of that output to read, with the line's number); `*suggest` after a DSL mapper ran,
# `*suggest_no_mapper` after Legion's default mapper (or the program's own), `*suggest_default_failed` after a DSL
# mapper when Legion's default mapper failed verification too, as the baseline ({default_reason}: how; {reference}:
# that mapper, or the program's own, which the baseline ran); `*_intermittent` when earlier executions of the run passed
# the same check (the output varies: no mistake in the check is the cause).
APP_VERIFY_FIELDS = {"explain": ("reason", "app", "where"), "suggest": ("where", "stdout", "without"),
                     "suggest_no_mapper": ("where", "stdout"),
                     "own_explain": ("app", "check", "status", "line"),
                     "suggest_pattern": ("where", "without"),
                     "suggest_intermittent": ("where", "stdout", "without"),
                     "suggest_no_mapper_intermittent": ("where", "stdout"),
                     "own_suggest": ("stdout", "output", "without"),
                     "own_suggest_no_mapper": ("stdout", "output", "without"),
                     "suggest_default_failed": ("where", "stdout", "default_reason", "reference"),
                     "own_suggest_default_failed": ("stdout", "output", "default_reason", "reference"),
                     "own_unread_explain": ("app", "reason", "status"), "own_unread_suggest": ("stdout",)}
# Texts for a user's program that exited 0 but whose figure of merit could not be read: the metric pattern matched
# nothing, or no number. {metric}: the metric as the run describes it; {output}: the end of the standard output.
APP_METRIC_FIELDS = {"explain": ("app", "reason", "output"), "suggest": ("metric", "where", "stdout"),
                     "suggest_logfile": ("metric", "logfile", "path")}
# Texts added to the feedback on a finished or timed-out run of a mapper with an InstanceLimit, which mapperopt runs
# with Legion's -lg:no_physical_tracing (harness.no_replay_flags): {limits} names the statements.
UNTRACED_FIELDS = {"explain": ("limits",), "explain_unknown": ("limits", "program"), "suggest": ("limits",)}
# The suggestion after a run without a DSL mapper, for a failure no rule matches or a rule whose advice is a mapper
# change (`mapper_advice`): no mapper change can be the cause; `default_failed`, after a DSL mapper's run that
# failed at the stage Legion's default mapper failed at as the baseline ({default_reason}: how; {reference}: that
# mapper, or the program's own, which the baseline ran).
NO_MAPPER_FIELDS = {"suggest": CONTEXT_FIELDS, "default_failed": (*CONTEXT_FIELDS, "default_reason", "reference")}
# The texts that name a DSL mapper's Layout statements taking instances away from the program's natural layout (AOS,
# C_order, an Align no variant needs) as a suspect, after a wrong answer (`*_verify`), a crash (`*_crash`: an abort, a
# failed assertion, a signal, a Legion error) or a timeout (`*_timeout`): {statements} names them (with their lines),
# {replacements} says which statement to try in place of each. After a crash: `reduction` where such a statement
# selects a reduction requirement ({selects}: which), `in_copies`/`in_runtime` where the failing line is in Realm's
# data-movement code or elsewhere in Realm ({path}: its file and line), `intermittent` (and `intermittent_suggest`,
# after a layout suspect's suggestion) where earlier executions of the run ran to the end ({passed} of them,
# {executions}: "execution" or "executions", {execution}: the failed one's number). `default_crash`: the suggestion
# after a crash (a signal without a message) where the mapper's Layout and Region statements give every instance what
# Legion's default mapper gives ({data}: which layout and memories, "SOA F_order in SYSMEM"; {without}: as the rules').
# `own_assert*`: after a failed assertion in the program's own source (rules.yaml says which text goes where).
# `killed*`: after a SIGKILL that no rule explains (rules.yaml says which text goes where).
LAYOUT_FIELDS = {"suspect_verify": ("statements",), "try_verify": ("replacements",),
                 "suspect_crash": ("statements",), "try_crash": ("replacements",),
                 "suspect_timeout": ("statements",), "try_timeout": ("replacements",),
                 "reduction": ("selects",), "in_copies": ("path",), "in_runtime": ("path",),
                 "intermittent": ("passed", "executions", "execution"), "intermittent_suggest": (),
                 "default_crash": ("without", "data"),
                 "own_assert": ("where", "function", "without"),
                 "own_assert_no_mapper": ("where", "function", "without"),
                 "own_assert_suggest_no_mapper": ("where", "function", "without"),
                 "own_assert_first": ("without", "command"), "own_assert_no_data": (), "own_assert_default": ("data",),
                 "killed": ("exit_code",), "killed_oom": ("exit_code",), "killed_suggest": ("without",),
                 "killed_oom_suggest": ("without",)}
# The texts for a timeout of a DSL mapper that already places as a fast mapping does (every index launch over all the
# processors of its kind, more than one; every instance in the memory closest to its processor), where placement
# advice would repeat what it does: {spread} says what it does; after the suggestion, the `trace` text, or `trace_ran`
# where the run left a trace ({file}: its name, {count}: its task mappings, {task} and {point}: the last one's);
# `unflushed`, after any timeout whose standard output ({file}) is empty.
HANG_FIELDS = {"explain": ("timeout_s", "spread"), "suggest": ("without", "command"),
               "suggest_baseline_finished": ("without",), "trace": (),
               "trace_ran": ("file", "count", "task", "point"), "unflushed": ("file",)}
# Every text section of a catalog beside its rules, with the keys the code fills and the fields each may use.
TEXT_SECTIONS = {"generic": GENERIC_FIELDS, "performance": PERFORMANCE_FIELDS, "application": APPLICATION_FIELDS,
                 "app_verify": APP_VERIFY_FIELDS, "no_mapper": NO_MAPPER_FIELDS, "app_metric": APP_METRIC_FIELDS,
                 "untraced": UNTRACED_FIELDS, "layout": LAYOUT_FIELDS, "hang": HANG_FIELDS}
RULE_KEYS = {"id", "stages", "match", "also", "maybe", "exit_codes", "dsl", "absent", "needs", "category",
             "app_category", "specific", "execution", "explain", "suggest", "edits", "context", "mapper_advice",
             "explain_no_mapper", "suggest_no_mapper", "suggest_displaced", "suggest_no_data",
             "suggest_no_position", "suggest_baseline_finished"}


@dataclass(frozen=True)
class Rule:
    """One catalog entry.

    Attributes:
        id: unique, stable name (reported in `Feedback.rule`).
        stages: the failure stages the rule applies to (subset of `records.STAGES`).
        match: regex searched in each line of the cleaned output; None to match without a line (then `exit_codes`,
            `dsl` or the stage alone decide). Its named groups become template fields.
        also: regexes that must each match one of the `context` lines after the matched one (else the rule does
            not match there); their named groups become template fields too.
        maybe: like `also`, but optional: groups of a pattern that is not found stay unset.
        exit_codes: the failing execution's exit status must be one of these (None: any).
        dsl: regex the mapper's DSL text must contain (None: no condition); its named groups are fields too.
        absent: regex that must match no line of the cleaned output (None: no condition).
        needs: `COMPUTED_FIELDS` that must be set (non-empty) in the context; they are template fields too.
        category: dotted class of the failure, e.g. "memory.oom".
        app_category: the class for a user's program (`--app`) in place of `category`; None: `category`.
        specific: False for the catalog's fallbacks (a generic Legion exception, an unknown assertion); coverage
            counts only specific rules as explained.
        execution: for a rule without `match`, the text of the feedback's "Execution Error:" line (template).
        explain: what happened (template; "N/A" where the raw text says it all).
        suggest: what to change (template).
        edits: edit templates (`{"op": ..., **args}`), see `autoguide.edits`.
        context: how many lines after the matched one belong to it in the excerpt (default 8).
        mapper_advice: True when `suggest` is a change to the DSL mapper: after a run without one (Legion's default
            mapper, the program's own) the catalog's `no_mapper` suggestion replaces it.
        explain_no_mapper, suggest_no_mapper: the rule's own texts for a run without a DSL mapper (templates), in
            place of `explain` and of `suggest` (or of the `no_mapper` suggestion); None: not given.
        suggest_displaced: the rule's own suggestion after a DSL mapper that took the place of the program's own
            mapper for every task (the shim's note; {own}: that mapper's name); None: not given.
        suggest_no_position: the rule's own suggestion where the matched DSL diagnostic has no file position (it is
            about the whole file, `file: error[E224]: ...`): the fix is a statement to add, not one to change.
        suggest_no_data: the rule's own suggestion after a DSL mapper without Region and Layout statements, which
            leaves every memory and layout to Legion's defaults (so neither is the cause); None: not given.
        suggest_baseline_finished: the rule's own suggestion after a DSL mapper's run when the search's `default`
            reference (Legion's default mapper, or the program's own) ran the same program and settings and
            finished; None: not given.
    """

    id: str
    stages: tuple[str, ...]
    match: re.Pattern | None
    category: str
    explain: str
    suggest: str
    app_category: str | None = None
    also: tuple[re.Pattern, ...] = ()
    maybe: tuple[re.Pattern, ...] = ()
    exit_codes: tuple[int, ...] | None = None
    dsl: re.Pattern | None = None
    absent: re.Pattern | None = None
    needs: tuple[str, ...] = ()
    specific: bool = True
    execution: str | None = None
    edits: tuple[dict, ...] = ()
    context: int = 8
    mapper_advice: bool = False
    explain_no_mapper: str | None = None
    suggest_no_mapper: str | None = None
    suggest_displaced: str | None = None
    suggest_no_data: str | None = None
    suggest_baseline_finished: str | None = None
    suggest_no_position: str | None = None

    def fields(self) -> set[str]:
        """Names a template of this rule may use."""
        names = set(CONTEXT_FIELDS) | set(self.needs)
        for pattern in (self.match, *self.also, *self.maybe, self.dsl):
            if pattern is not None:
                names |= set(pattern.groupindex)
        return names


@dataclass(frozen=True)
class Match:
    """A rule that matched: the rule, the index of the matched line in the cleaned lines (None for a rule without
    `match`), and the template fields (groups and context)."""

    rule: Rule
    line: int | None
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Catalog:
    """The loaded `rules.yaml`.

    Attributes:
        rules: in priority order.
        noise: regexes of harmless lines that are never taken as the error and are left out of excerpts, beyond
            the harness's (`harness.is_harmless`), which are noise under every catalog.
        performance: texts for performance feedback (see `autoguide.explain`), keyed as in `PERFORMANCE_FIELDS`;
            empty for a catalog that serves failures only (finished runs then get the packaged texts).
        generic: texts for a failure no rule matches (`explain`, `suggest`).
        application: texts for a wrong result that Legion's default mapper gives too, keyed as in
            `APPLICATION_FIELDS`; empty for a catalog without them (the packaged texts are used).
        app_verify, app_metric, untraced, no_mapper, layout, hang: likewise, keyed as in `APP_VERIFY_FIELDS`,
            `APP_METRIC_FIELDS`, `UNTRACED_FIELDS`, `NO_MAPPER_FIELDS`, `LAYOUT_FIELDS` and `HANG_FIELDS`.
    """

    rules: tuple[Rule, ...]
    noise: tuple[re.Pattern, ...]
    performance: dict[str, str]
    generic: dict[str, str]
    application: dict[str, str] = field(default_factory=dict)
    app_verify: dict[str, str] = field(default_factory=dict)
    no_mapper: dict[str, str] = field(default_factory=dict)
    app_metric: dict[str, str] = field(default_factory=dict)
    untraced: dict[str, str] = field(default_factory=dict)
    layout: dict[str, str] = field(default_factory=dict)
    hang: dict[str, str] = field(default_factory=dict)

    def rule(self, rule_id: str) -> Rule | None:
        return next((r for r in self.rules if r.id == rule_id), None)

    def is_noise(self, line: str) -> bool:
        """Whether `line` (Realm's prefix removed) is harmless: the harness's harmless lines, or the catalog's."""
        from mapperopt.benchmarks.harness import is_harmless  # lazily: the harness imports much of the package

        return is_harmless(line) or any(p.search(line) for p in self.noise)

    def match(self, lines: list[str], *, stage: str, exit_code: int | None, dsl: str | None,
              context: dict[str, Any]) -> Match | None:
        """The first rule that applies.

        Args:
            lines: the cleaned output (see `excerpt.clean`), noise already removed.
            stage: the failing stage.
            exit_code: the failing execution's exit status, or None.
            dsl: the mapper's DSL text, or None.
            context: values of `CONTEXT_FIELDS` for templates, and of the `COMPUTED_FIELDS` known for the run.
        """
        for rule in self.rules:
            if stage not in rule.stages:
                continue
            if rule.exit_codes is not None and exit_code not in rule.exit_codes:
                continue
            if not all(context.get(name) for name in rule.needs):
                continue
            in_dsl = rule.dsl.search(dsl) if rule.dsl is not None and dsl else None
            if rule.dsl is not None and not in_dsl:
                continue
            if in_dsl:
                context = {**context, **{k: v for k, v in in_dsl.groupdict().items() if v is not None}}
            if rule.absent is not None and any(rule.absent.search(line) for line in lines):
                continue
            if rule.match is None:
                return Match(rule, None, dict(context))
            for i, line in enumerate(lines):
                found = rule.match.search(line)
                if not found:
                    continue
                after = lines[i + 1: i + 1 + rule.context]
                extras = [_search(p, after) for p in rule.also]
                if None in extras:
                    continue
                fields = dict(context)
                for extra in [*extras, *(_search(p, after) for p in rule.maybe)]:
                    if extra is not None:
                        fields.update({k: v for k, v in extra.groupdict().items() if v is not None})
                fields.update({k: v for k, v in found.groupdict().items() if v is not None})
                return Match(rule, i, fields)
        return None


def _search(pattern: re.Pattern, lines: list[str]) -> re.Match | None:
    return next((m for m in map(pattern.search, lines) if m), None)


def _compile(pattern: Any, where: str) -> re.Pattern:
    if not isinstance(pattern, str):
        raise MapperoptError(f"{where}: a pattern must be a string, not {type(pattern).__name__}")
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise MapperoptError(f"{where}: invalid regular expression {pattern!r}: {exc}") from exc


def template_fields(value: Any) -> set[str]:
    """The `{name}` fields used in a template string, or in every string of a list/dict of them."""
    if isinstance(value, str):
        return {name for _, name, _, _ in string.Formatter().parse(value) if name}
    if isinstance(value, (list, tuple)):
        return set().union(*(template_fields(v) for v in value)) if value else set()
    if isinstance(value, dict):
        return set().union(*(template_fields(v) for v in value.values())) if value else set()
    return set()


def _rule(data: dict, where: str) -> Rule:
    from mapperopt.autoguide.edits import EDIT_OPS

    unknown = set(data) - RULE_KEYS
    if unknown:
        raise MapperoptError(f"{where}: unknown key(s) {sorted(unknown)}; allowed: {sorted(RULE_KEYS)}")
    for key in ("id", "stages", "category", "explain", "suggest"):
        if key not in data:
            raise MapperoptError(f"{where}: missing key '{key}'")
    stages = tuple(data["stages"])
    bad = [s for s in stages if s not in STAGES]
    if bad:
        raise MapperoptError(f"{where}: unknown stage(s) {bad}; stages are {list(STAGES)}")
    edits = tuple(dict(e) for e in data.get("edits", ()))
    needs = tuple(data.get("needs", ()))
    if set(needs) - set(COMPUTED_FIELDS):
        raise MapperoptError(f"{where}: 'needs' names {sorted(set(needs) - set(COMPUTED_FIELDS))}; computed fields "
                             f"are {list(COMPUTED_FIELDS)}")
    for edit in edits:
        if edit.get("op") not in EDIT_OPS:
            raise MapperoptError(f"{where}: unknown edit op {edit.get('op')!r}; ops are {sorted(EDIT_OPS)}")
    rule = Rule(
        id=str(data["id"]),
        stages=stages,
        match=_compile(data["match"], where) if data.get("match") is not None else None,
        also=tuple(_compile(p, where) for p in data.get("also", ())),
        maybe=tuple(_compile(p, where) for p in data.get("maybe", ())),
        exit_codes=tuple(data["exit_codes"]) if "exit_codes" in data else None,
        dsl=_compile(data["dsl"], where) if "dsl" in data else None,
        absent=_compile(data["absent"], where) if "absent" in data else None,
        needs=needs,
        category=str(data["category"]),
        app_category=str(data["app_category"]) if "app_category" in data else None,
        specific=bool(data.get("specific", True)),
        explain=str(data["explain"]).strip(),
        suggest=str(data["suggest"]).strip(),
        execution=str(data["execution"]).strip() if "execution" in data else None,
        edits=edits,
        context=int(data.get("context", 8)),
        mapper_advice=bool(data.get("mapper_advice", False)),
        explain_no_mapper=str(data["explain_no_mapper"]).strip() if "explain_no_mapper" in data else None,
        suggest_no_mapper=str(data["suggest_no_mapper"]).strip() if "suggest_no_mapper" in data else None,
        suggest_displaced=str(data["suggest_displaced"]).strip() if "suggest_displaced" in data else None,
        suggest_no_data=str(data["suggest_no_data"]).strip() if "suggest_no_data" in data else None,
        suggest_no_position=str(data["suggest_no_position"]).strip() if "suggest_no_position" in data else None,
        suggest_baseline_finished=(str(data["suggest_baseline_finished"]).strip()
                                   if "suggest_baseline_finished" in data else None),
    )
    try:
        used = template_fields([rule.explain, rule.suggest, rule.execution or "", rule.explain_no_mapper or "",
                                rule.suggest_no_mapper or "", rule.suggest_no_data or "",
                                rule.suggest_no_position or "", rule.suggest_baseline_finished or "", *edits])
        used |= template_fields(rule.suggest_displaced or "") - {"own"}  # {own}: the displaced mapper's name
    except ValueError as exc:  # a lone brace; literal braces are written {{ and }}
        raise MapperoptError(f"{where}: bad template ({exc})") from None
    missing = used - rule.fields()
    if missing:
        raise MapperoptError(f"{where}: template field(s) {sorted(missing)} are not groups of 'match'/'also' "
                             f"nor context fields {list(CONTEXT_FIELDS)}")
    return rule


def load_catalog(path: str | Path | None = None) -> Catalog:
    """Load and validate a rule catalog.

    Args:
        path: a YAML file; default: the packaged `rules.yaml`.

    Raises:
        MapperoptError: the file is malformed (the message names the rule and the problem).
    """
    if path is None:
        return _default_catalog()
    return _parse(Path(path).read_text(), str(path))


@lru_cache(maxsize=1)
def _default_catalog() -> Catalog:
    text = (resources.files("mapperopt.autoguide") / "rules.yaml").read_text()
    return _parse(text, "rules.yaml")


def _parse(text: str, name: str) -> Catalog:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise MapperoptError(f"{name}: not valid YAML: {exc}") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise MapperoptError(f"{name}: not a rule catalog (expected schema {SCHEMA!r})")
    rules = []
    seen = set()
    for i, entry in enumerate(data.get("rules", ())):
        rule = _rule(entry, f"{name}: rule #{i + 1} ({entry.get('id', '?')})")
        if rule.id in seen:
            raise MapperoptError(f"{name}: rule id {rule.id!r} is used twice")
        seen.add(rule.id)
        rules.append(rule)
    noise = tuple(_compile(p, f"{name}: noise") for p in data.get("noise", ()))
    performance = {str(k): str(v).strip() for k, v in (data.get("performance") or {}).items()}
    generic = {str(k): str(v).strip() for k, v in (data.get("generic") or {}).items()}
    application = {str(k): str(v).strip() for k, v in (data.get("application") or {}).items()}
    app_verify, no_mapper, app_metric, untraced, layout, hang = (
        {str(k): str(v).strip() for k, v in (data.get(key) or {}).items()}
        for key in ("app_verify", "no_mapper", "app_metric", "untraced", "layout", "hang"))
    sections = {"generic": generic, "performance": performance, "application": application, "app_verify": app_verify,
                "no_mapper": no_mapper, "app_metric": app_metric, "untraced": untraced, "layout": layout,
                "hang": hang}
    for section, fields in TEXT_SECTIONS.items():
        texts = sections[section]
        for key, allowed in fields.items():
            if section != "generic" and not texts:
                break  # a catalog without these texts serves failures only; the packaged ones are used
            if key not in texts:
                raise MapperoptError(f"{name}: '{section}' needs a '{key}' text")
            try:
                unknown = template_fields(texts[key]) - set(allowed)
            except ValueError as exc:
                raise MapperoptError(f"{name}: {section}.{key}: bad template ({exc})") from None
            if unknown:
                raise MapperoptError(f"{name}: {section}.{key} uses {sorted(unknown)}; it may use {list(allowed)}")
    return Catalog(tuple(rules), noise, performance, generic, application, app_verify, no_mapper, app_metric, untraced,
                   layout, hang)
