"""Every rule of the catalog against real output: each captured failing run gets the rule it was captured for, and
every rule is the answer to at least one captured run (fallback rules: with the specific rule taken out)."""

from __future__ import annotations

import dataclasses
import re

import pytest

from mapperopt.autoguide import apply_edits_to_text, explain, feedback_text, load_catalog
from mapperopt.benchmarks.autoguide_coverage import BAD_MAPPERS, DIRECTIVES, REPO, read_bad_mapper, run_bad_mapper
from captured_runs import captures, load

# Fallback rules answer output that a specific rule normally takes: (capture, specific rules removed).
FALLBACKS = {
    "assertion-failed": ("probe-huge-rsize", ["realm-registered-memory"]),
    "legion-other-exception": ("probe-too-many-cpus", ["legion-too-many-processors"]),
    "legion-mapper-exception": ("stencil-gpu_variant_on_cpu", ["legion-variant-processor"]),
    "mapper-runtime-other": ("circuit-r406_grandparent", ["mapper-r406-no-parent"]),
}


FAILED = [p for p in captures() if load(p)[1].status == "failed"]


@pytest.mark.parametrize("path", FAILED, ids=lambda p: p.stem)
def test_captured_run_gets_its_rule(path):
    record, result = load(path)
    assert record["command"].startswith(".venv/bin/python tests/autoguide/capture.py ")
    assert record["app_command"]
    fb = explain(result)
    assert fb.rule == record["expect"], fb.raw_excerpt
    assert fb.status == "failed" and fb.stage == result.stage
    assert fb.raw_excerpt and fb.explanation and fb.suggestion
    rule = load_catalog().rule(fb.rule)
    assert fb.category == rule.category
    text = feedback_text(fb, result)
    head = "Compile Error: " if result.stage in ("parse", "check", "compile") else "Execution Error: "
    assert text.startswith("Execution: " + head)
    assert "\nExplain: " in text and "\nSuggest: " in text


def test_every_rule_has_a_capture():
    expected = {load(p)[0]["expect"] for p in FAILED}
    missing = [r.id for r in load_catalog().rules if r.id not in expected and r.id not in FALLBACKS]
    assert missing == []


@pytest.mark.parametrize("rule_id", FALLBACKS)
def test_fallback_rule_answers_when_the_specific_rule_is_absent(rule_id):
    name, removed = FALLBACKS[rule_id]
    catalog = load_catalog()
    reduced = dataclasses.replace(catalog, rules=tuple(r for r in catalog.rules if r.id not in removed))
    _, result = load(name)
    fb = explain(result, catalog=reduced)
    assert fb.rule == rule_id
    assert not reduced.rule(rule_id).specific


# The bad mapper that fails in a real execution runs live, so that a change of message format in the generated
# mapper or Legion shows up here even before the captures are regenerated (capture.py); those check rejects are
# re-checked by test_bad_mapper_rejected_before_execution_expects_that_rule, and the timeouts are left to captures.
LIVE = ["stencil-r403_tiny_memory"]


@pytest.mark.parametrize("name", LIVE)
def test_live_run_of_a_bad_mapper_gets_its_rule(name, tmp_path):
    bench, _, stem = name.partition("-")
    bad = read_bad_mapper(BAD_MAPPERS / bench / f"{stem}.dsl")
    result = run_bad_mapper(bad, tmp_path)
    assert explain(result).rule == bad.expect, result.log[-2000:]


def test_e209_of_several_tasks_names_them_all_and_gets_its_rule(tmp_path):
    """`Task * GPU;` on a machine without GPUs: one E209 for the six tasks it leaves without a kind, whose headline
    named only the first; the rule reads them all from it."""
    result = run_bad_mapper(read_bad_mapper(BAD_MAPPERS / "circuit" / "e209_gpu_only.dsl"), tmp_path)
    assert result.stage == "check" and result.reason.count("error[E209]") == 1, result.reason
    fb = explain(result)
    assert fb.rule == "dsl-e209-kind-unusable", result.reason
    assert fb.explanation.startswith(
        "No kind of the list GPU can run 'init_piece', 'init_pointers', 'calculate_new_currents', "
        "'distribute_charge', 'update_voltages' and 'check_circuit' here"), fb.explanation


def _bad_mapper_file(path):
    bench, _, stem = path.stem.partition("-")
    return BAD_MAPPERS / bench / f"{stem}.dsl"


# Captured bad mappers that parse or check rejects: re-running them costs no execution.
REJECTED = [p for p in FAILED if load(p)[1].stage in ("parse", "check") and _bad_mapper_file(p).is_file()]


@pytest.mark.parametrize("path", REJECTED, ids=lambda p: p.stem)
def test_captured_rejection_is_what_the_checker_says_now(path, tmp_path):
    """A capture of a rejected bad mapper holds today's diagnostic, its hints and notes included (a changed code,
    message or note needs capture.py run again), and a bad mapper named after a code (e205_...) gets that code."""
    _, captured = load(path)
    now = run_bad_mapper(read_bad_mapper(_bad_mapper_file(path)), tmp_path)
    assert (now.stage, now.reason.replace(str(REPO), "<repo>")) == (captured.stage, captured.reason)
    assert now.log.replace(str(REPO), "<repo>") == captured.log
    named = re.match(r"([ew]\d{3})_", _bad_mapper_file(path).stem)
    assert named is None or f"[{named[1].upper()}]" in now.reason, now.reason


def test_the_layout_notes_quote_what_legion_prints():
    """The note of E223 and W312 quotes Legion's rejection of a layout (-lg:safe_mapper) as captured real runs show
    Legion printing it, for the dimension order and interleaving (the stencil) and the alignment (a user's program)."""
    from mapperopt.dsl.checker import _layout_at_run_time
    from mapperopt.dsl.commands import load_app

    for name, constraint in (("stencil-layout_aos", "Ordering"), ("constrained-align_16", "Alignment")):
        quoted = re.search(r"`Invalid mapper output \.\.\. (.*?)`",
                           _layout_at_run_time([constraint], load_app("stencil"), ["stencil"]))[1]
        assert quoted in load(name)[1].log, quoted


class _AcceptedStatically(Exception):
    """Raised instead of building a mapper that parsed and checked: no build, no execution."""


def _header(bad) -> str:
    """The leading comment of a bad mapper without its directives."""
    lines = []
    for line in bad.path.read_text().splitlines():
        if not line.startswith("#"):
            break
        key, sep, _ = line[1:].strip().partition(":")
        if not (sep and key.strip() in DIRECTIVES):
            lines.append(line[1:].strip())
    return " ".join(lines)


ALL_BAD = sorted(BAD_MAPPERS.glob("*/*.dsl"))


@pytest.mark.parametrize("path", ALL_BAD, ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_bad_mapper_rejected_before_execution_expects_that_rule(path, tmp_path, monkeypatch):
    """A bad mapper that a run rejects before executing (parse or check, as `run` checks it: the benchmark's
    description and machine at the mapper's size and arguments) expects the rule AutoGuide gives for that rejection,
    and its header says check finds it rather than a run-time failure (a sample named after its code, e205_..., says
    it by its name). One accepted statically expects a rule of a run-time stage and has its captured run, which
    covers that rule."""
    import mapperopt.compiler.build as build

    def accepted(*_args, **_kwargs):
        raise _AcceptedStatically

    # The harness's own path (what `mapperopt run` does) up to the mapper's build, which stops it.
    monkeypatch.setattr(build, "build_program", accepted)
    bad = read_bad_mapper(path)
    try:
        result = run_bad_mapper(bad, tmp_path)
    except _AcceptedStatically:
        stages = set(load_catalog().rule(bad.expect).stages)
        assert stages - {"parse", "check"}, f"check accepts {bad.name} now; it cannot get {bad.expect}"
        assert load(bad.name)[0]["expect"] == bad.expect
        return
    assert result.stage in ("parse", "check"), result.reason
    assert explain(result).rule == bad.expect, result.reason
    if result.stage == "check" and not re.match(r"e\d{3}_", path.stem):
        assert re.search(r"\bcheck (finds|rejects) it\b", _header(bad)), f"{bad.name}: say check finds it"
    # AutoGuide's edits take the mapper past what stopped it (the same code does not come back)
    feedback = explain(result)
    if feedback.edits:
        fixed = tmp_path / "fixed.dsl"
        fixed.write_text(apply_edits_to_text(result.dsl, feedback.edits))
        code = re.search(r"error\[(E\d{3})\]", result.reason)
        try:
            again = run_bad_mapper(dataclasses.replace(bad, path=fixed), tmp_path / "fixed")
        except _AcceptedStatically:
            return
        assert not (code and f"[{code[1]}]" in again.reason), (bad.name, again.reason)


@pytest.mark.parametrize("path", [p for p in FAILED if load(p)[1].dsl is None], ids=lambda p: p.stem)
def test_a_run_without_a_dsl_mapper_is_not_blamed_on_a_mapping(path):
    """Under Legion's default mapper a wrong result (`cannon -- -test-skip-step`, `pennant -- -test-corrupt`) was
    explained as "a mapping decision broke a kernel's assumptions", and Pennant's suggestion was to run the same size
    with `--mapper default`, which that run already did."""
    _, result = load(path)
    fb = explain(result)
    explanation, suggestion = (" ".join(t.split()) for t in (fb.explanation, fb.suggestion))
    assert "mapping decision" not in explanation and "a mapper alone" not in explanation, explanation
    assert "--mapper default" not in suggestion and "undo" not in suggestion.lower(), suggestion
