"""explain() and feedback_text() on real captured runs: levels, trimming, unknown output, performance feedback."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from captured_runs import captures, load

from mapperopt.autoguide import explain, feedback_text, load_catalog
from mapperopt.autoguide import excerpt as X
from mapperopt.autoguide.edits import apply_edits_to_text
from mapperopt.autoguide.explain import task_profile
from mapperopt.descriptions import parse_machine_spec
from mapperopt.dsl import check, parse
from mapperopt.dsl.commands import load_app
from mapperopt.errors import MapperoptError
from mapperopt.records import Attempt, Feedback, RunResult


def test_levels_add_explanation_then_suggestion_and_edits():
    _, result = load("stencil-stride_c_order")
    raw, expl, full = (explain(result, level=lv) for lv in ("raw", "explain", "suggest"))
    assert raw.raw_excerpt == expl.raw_excerpt == full.raw_excerpt
    assert (raw.explanation, raw.suggestion, raw.edits) == ("", "", ())
    assert expl.explanation == full.explanation != "" and (expl.suggestion, expl.edits) == ("", ())
    assert full.suggestion and full.edits
    assert {f.rule for f in (raw, expl, full)} == {"stencil-stride-assertion"}
    assert feedback_text(raw, result).count("\n") == feedback_text(raw, result).count("\n  ")  # Execution only
    assert "\nExplain: " in feedback_text(expl, result) and "Suggest:" not in feedback_text(expl, result)
    with pytest.raises(MapperoptError, match="unknown feedback level"):
        explain(result, level="verbose")


def test_excerpt_keeps_the_error_and_its_context_but_no_backtrace():
    _, result = load("probe-unknown-lg-flag")
    assert "Backtrace:" in result.log and "\x1b[" in result.log
    fb = explain(result)
    assert fb.raw_excerpt == ("{5}{legion}: LEGION STARTUP EXCEPTION: Detected unknown Legion option '-lg:foo' in "
                              "command line arguments.")


def test_excerpt_respects_its_budget():
    _, result = load("cxx-compile-error")
    lines = X.clean(result.log, load_catalog().is_noise)
    text = X.trim(lines, budget=300)
    assert len(text) <= 300 + X.MAX_LINE and text.splitlines()[-1].startswith("[... ")
    assert all(len(line) <= X.MAX_LINE for line in X.trim(lines).splitlines())


@pytest.mark.parametrize("path", [p for p in captures() if load(p)[1].status == "failed"], ids=lambda p: p.stem)
def test_unknown_output_gets_honest_generic_feedback(path, tmp_path):
    """With a catalog that knows nothing, every real failure still gets feedback that says it is not recognised."""
    empty = tmp_path / "rules.yaml"
    empty.write_text("schema: mapperopt.autoguide-rules/1\nrules: []\n"
                     "generic: {explain: \"failed at '{stage}' (exit {exit_code}); no rule recognises it\", "
                     "suggest: undo}\n")
    _, result = load(path)
    fb = explain(result, catalog=load_catalog(empty))
    assert (fb.rule, fb.category, fb.edits) == ("generic", "unknown", ())
    assert f"failed at '{result.stage}'" in fb.explanation
    assert fb.raw_excerpt or not result.log.strip()


def test_packaged_generic_texts_say_nothing_was_recognised():
    generic = load_catalog().generic
    assert "no rule" in generic["explain"]


def test_feedback_round_trips_through_json():
    _, result = load("stencil-stride_c_order")
    fb = explain(result)
    data = json.loads(json.dumps(fb.to_json()))
    assert data["schema"] == "mapperopt.feedback/1" and data["edits"][0]["op"] == "drop_layout_constraint"
    assert Feedback.from_json(data) == fb


def test_compile_errors_show_at_most_three_errors_with_their_hints(tmp_path):
    from mapperopt.benchmarks import run_benchmark

    # Four E209 errors, one per Task statement (a `Task *` statement gets one for all the tasks it leaves so).
    dsl = "".join(f"Task {t} GPU;\n" for t in ("init_piece", "init_pointers", "check_circuit", "update_voltages"))
    result = run_benchmark("circuit", dsl, out_dir=tmp_path)
    assert result.stage == "check" and result.log.count("error[E209]") == 4, result.log
    text = feedback_text(explain(result), result)
    execution = text.split("\nExplain: ")[0]
    assert execution.count("error[E209]") == 3
    assert execution.count("hint: ") == 3


def test_timeout_feedback_names_the_timeout():
    _, result = load("stencil-timeout_slow")
    assert feedback_text(explain(result), result).startswith(
        f"Execution: Execution Error: timeout after {result.settings['timeout_s']:g} s")


def test_timeout_feedback_names_the_limit_as_a_cause():
    """`tune --timeout 1.2`: every iteration, Legion's default mapping too, timed out, and the feedback said only
    that the mapping was slow and to spread the index launches (on a one-CPU machine): it names the limit too."""
    _, result = load("stencil-timeout_slow")
    fb = explain(result)
    assert fb.rule == "timeout" and "the limit is too short for this program whatever the mapping" in fb.explanation
    assert "Where the machine has more than one processor, spread" in fb.suggestion, fb.suggestion
    assert fb.suggestion.endswith("the limit is the cause: give a larger --timeout, or none."), fb.suggestion


def test_a_timeout_under_an_instance_limit_names_the_limit():
    """A limit holds instances back (a hang where what runs waits for one): the timeout's feedback names the
    statement, not only placement; a mapper without one keeps the generic timeout advice."""
    _, result = load("stencil-timeout_limit")
    fb = explain(result)
    assert fb.rule == "timeout-instance-limit" and fb.category == "timeout"
    assert ("and the mapper has `InstanceLimit stencil 1;` (line 7 of the mapper): the limit keeps"
            in fb.explanation), fb.explanation
    assert fb.suggestion.startswith("Run the mapper once without `InstanceLimit stencil 1;`"), fb.suggestion
    # The statement after a comment and on a line with another one; a commented-out one is no statement.
    for dsl, limit in (("Task * CPU;  # why\nInstanceLimit stencil GPU 2;\n", "InstanceLimit stencil GPU 2;"),
                       ("Task * CPU; InstanceLimit a,b 3;", "InstanceLimit a,b 3;")):
        assert f"`{limit}`" in explain(dataclasses.replace(result, dsl=dsl)).explanation
    assert explain(dataclasses.replace(result, dsl="# InstanceLimit stencil 1;\nTask * CPU;\n")).rule == "timeout"


def test_a_timeout_with_costly_mapping_functions_names_them():
    """Calls that multiply (W310 at check) make mapping itself outlast the run: the timeout's feedback names the
    mapping function and what one evaluation costs, with no edit (none is mechanical); a cheap function does not."""
    _, result = load("circuit-timeout_costly_function")
    fb = explain(result)
    assert fb.rule == "timeout-costly-functions" and fb.category == "timeout" and fb.edits == ()
    named = "'place' (defined at line 32, of IndexTaskMap calculate_new_currents): about 4.2e+11 calls"
    assert named in fb.explanation, fb.explanation
    cheap = result.dsl.replace("m[0, f24(t) % m.size[1]]", "m[0, f2(t) % m.size[1]]")
    assert explain(dataclasses.replace(result, dsl=cheap)).rule == "timeout"


def test_silent_abort_is_reported_as_such():
    _, result = load("stencil-unmapped_requirement")
    fb = explain(result)
    assert fb.rule == "silent-abort"
    assert feedback_text(fb, result).startswith(
        "Execution: Execution Error: silent abort (exit -6, SIGABRT): nothing was printed before it")


def test_performance_feedback_compares_and_names_the_heaviest_leaf_task():
    _, expert = load("circuit-expert_profiled")
    _, default = load("circuit-default_mapper")
    baselines = {"default": default.throughput, "expert": expert.throughput}
    fb = explain(default, best=expert.throughput, baselines=baselines)
    assert (fb.status, fb.category, fb.rule, fb.edits) == ("ok", "performance", "performance", ())
    text = feedback_text(fb, default)
    ratio = default.throughput / expert.throughput
    assert text.startswith(f"Execution: Performance Metric: Execution time is {default.time_s:.3g}s. Achieved "
                           f"throughput = {default.throughput:.4g} GFLOPS. Normalised throughput = {ratio:.2f}x of "
                           f"the expert as measured before tuning (best so far 1.00x; measured apart, at another time "
                           "and load: only roughly comparable).\nExplain: ")
    assert (f"this one {ratio:.2f}x of it" if ratio <= 1 else f"{ratio:.2f}x the best mapper so far") in fb.explanation
    # With the profile: the heaviest leaf task (never the top-level task, whose time includes its children's).
    fb = explain(expert, best=default.throughput, baselines=baselines)
    assert "best mapper so far" in fb.explanation and "default mapper" in fb.explanation
    assert "'main'" not in fb.explanation and "task main" not in fb.raw_excerpt
    top = max((e for e in expert.attempts[-1].profile["tasks"] if e["task"] != "main"), key=lambda e: e["total_s"])
    assert fb.raw_excerpt.splitlines()[1].startswith(f"task {top['task']} on CPU: {top['count']} runs")
    assert f"'{top['task']}'" in fb.suggestion
    assert explain(expert, level="raw").explanation == ""


def test_performance_feedback_quotes_the_trimmed_mean_the_search_records():
    """With five executions the trimmed mean (what history.csv, the iteration line and the best so far hold) is not
    the median: the metric line and the comparison with the best quote the trimmed mean, both sides alike."""
    _, expert = load("circuit-expert_profiled")
    _, default = load("circuit-default_mapper")
    five = dataclasses.replace(default, throughput=default.throughput, trimmed_mean=0.9 * default.throughput)
    best, value = expert.trimmed_mean, five.trimmed_mean
    fb = explain(five, best=best, baselines={"expert": best, "default": value})
    assert f"Achieved throughput = {value:.4g} GFLOPS. Normalised throughput = {value / best:.2f}x of the expert as " \
           f"measured before tuning (best so far 1.00x; measured apart, at another time and load: only roughly " \
           "comparable)." in feedback_text(fb, five)
    ratio = value / best
    assert (f"this one {ratio:.2f}x of it" if ratio <= 1 else f"{ratio:.2f}x the best mapper so far") in fb.explanation
    assert "1.00x that of the default mapper" in fb.explanation
    # AutoGuide's own failure keeps the same figure.
    assert explain(dataclasses.replace(five, profile={"tasks": 1}), best=best).raw_excerpt == \
        f"Performance Metric: Achieved throughput = {value:.4g} GFLOPS."


def test_a_heavy_task_left_on_the_cpu_of_a_gpu_run_is_moved_to_the_gpu():
    """The real profile of a CPU run, read as if the run had a GPU (what `settings` says for a GPU run)."""
    _, expert = load("stencil-expert_profiled")
    gpu_run = dataclasses.replace(expert, settings={**expert.settings, "gpus": 1})
    fb = explain(gpu_run)
    assert fb.suggestion == ("Move 'init_tile' to the GPU with `Task init_tile GPU,CPU;`: it takes a large share of "
                             "the time and still runs on the CPU.")
    assert all(e.op == "set_task_kinds" and e.args["kinds"] == ["GPU", "CPU"] for e in fb.edits) and fb.edits
    # A map statement placing the task on CPUs: the suggestion says that the edit takes it out (check's E209).
    mapped = gpu_run.dsl.replace("IndexTaskMap check cpu_node_block;", "IndexTaskMap init_tile,check cpu_node_block;")
    assert mapped != gpu_run.dsl
    assert explain(dataclasses.replace(gpu_run, dsl=mapped)).suggestion == fb.suggestion + (
        " A map statement whose function returns processors of another kind than the task's first fails check "
        "(E209), so the edit also took init_tile out of the IndexTaskMap statement of cpu_node_block (its processors "
        "are CPUs).")


def _on_gpu(result):
    """`result` read as if its profiled tasks had run on the run's one GPU (a GPU run's profile, from a CPU run's)."""
    last = result.attempts[-1]
    profile = {**last.profile, "tasks": [{**e, "kind": "GPU"} for e in last.profile["tasks"]]}
    return dataclasses.replace(result, settings={**result.settings, "gpus": 1},
                               attempts=(*result.attempts[:-1], dataclasses.replace(last, profile=profile)))


def test_the_suggestion_names_the_statement_to_try_for_the_heaviest_task():
    """Where this machine leaves a choice for the heaviest task, the suggestion names the statement that makes it:
    the map statement of its launch over several processors, or another memory its kind can use (saying where its
    instances are now); the statements it quotes pass `check`."""
    _, expert = load("circuit-expert_profiled")
    top = task_profile(expert)[0]["task"]
    two_cpus = dataclasses.replace(expert, settings={**expert.settings, "cpus": 2})
    # The expert mapper places the task with an IndexTaskMap already: never proposed again (it was, as for SUMMA's
    # task_4 with its expert mapper); the suggestion says where it is placed and turns to the rest.
    (line,) = [i for i, text in enumerate(expert.dsl.splitlines(), 1)
               if text.startswith("IndexTaskMap") and top in text]
    suggestion = explain(two_cpus).suggestion
    assert "IndexTaskMap statement for" not in suggestion
    assert (f"On this machine '{top}' has 2 CPU processors, over which the mapper's IndexTaskMap statement at line "
            f"{line} already places it, and its instances are in SYSMEM") in suggestion
    unplaced = "\n".join(t for t in expert.dsl.splitlines() if not t.startswith("IndexTaskMap"))
    suggestion = explain(dataclasses.replace(two_cpus, dsl=unplaced)).suggestion
    assert f"Try an IndexTaskMap statement for '{top}'" in suggestion and "over the 2 CPU processors" in suggestion
    # Without a Region statement a GPU task's instances are in the framebuffer; zero-copy memory is the other one.
    on_gpu = dataclasses.replace(_on_gpu(expert), dsl="Task * GPU,CPU;\n")
    suggestion = explain(on_gpu).suggestion
    assert suggestion.startswith("Its instances are in FBMEM; GPU tasks of this machine can also use ZCMEM: ")
    (statement,) = re.findall(r"`([^`]+)`", suggestion)
    assert statement == f"Region {top} * GPU ZCMEM;"
    # The expert mapper already uses both: the suggestion says where each requirement is and turns to the layout.
    suggestion = explain(_on_gpu(expert)).suggestion
    assert "its instances are in FBMEM (rp_private, rp_wires), ZCMEM (rp_shared, rp_ghost)" in suggestion
    # A program without a description: where its instances are is unknown, so only the choice is named.
    unknown = dataclasses.replace(_on_gpu(expert), app="my_program")
    assert explain(unknown).suggestion.startswith("GPU tasks of this machine can use FBMEM, ZCMEM: try a Region "
                                                  "statement for '")
    app = load_app("circuit")
    for statement in re.findall(r"`([^`]+)`", suggestion):
        diags = check(parse(expert.dsl + statement + "\n", "<m>"), app, parse_machine_spec("1x1"))
        assert not [d for d in diags if d.is_error], (statement, diags)


def test_no_parent_advice_names_the_statement_kind_that_failed(tmp_path):
    """R406 of a SingleTaskMap function (the top-level task has no parent) is not advised as an IndexTaskMap's:
    neither where check finds it before the run, nor where the run finds it."""
    from mapperopt.benchmarks.harness import run_benchmark

    near = "m = Machine(CPU);\ndef near(Task task) { return m[*task.parent.processor(m)]; }\nSingleTaskMap * near;\n"
    checked = run_benchmark("circuit", near, out_dir=tmp_path / "run")
    assert checked.stage == "check" and "task 'main' has no parent" in checked.reason
    fb = explain(checked)
    assert fb.rule == "dsl-mapping-function-fails" and fb.explanation.startswith("SingleTaskMap statements cause")
    assert "drop its SingleTaskMap statements" in fb.suggestion and "IndexTaskMap" not in fb.suggestion
    _, result = load("circuit-r406_grandparent")
    fb = explain(result)
    assert fb.rule == "mapper-r406-no-parent" and "drop the IndexTaskMap statements" in fb.suggestion
    assert [e.op for e in fb.edits] == ["replace_index_map"]
    # The line the generated mapper printed in a run of `SingleTaskMap * near;` on circuit.
    line = ("[mapperopt] error R406: task 'main' has no parent (it is the top-level task); in function 'near' at "
            "near.dsl:3:33, SingleTaskMap of task 'main'; machine Machine(CPU) (1, 1)")
    single = dataclasses.replace(result, dsl="Task * CPU;\nm = Machine(CPU);\ndef near(Task task) { return "
                                 "m[*task.parent.processor(m)]; }\nSingleTaskMap * near;\n",
                                 log=f"--- stderr ---\n{line}\n--- stdout ---\n", reason=line)
    fb = explain(single)
    assert fb.rule == "mapper-r406-no-parent" and "drop the SingleTaskMap statements" in fb.suggestion
    assert "IndexTaskMap" not in fb.suggestion and "name the tasks instead" in fb.suggestion


def test_tunable_size_abort_names_the_tunable(tmp_path):
    """Legion's "Future size mismatch" from a tunable does not say which: the explanation names the mapper's Tunable
    statement of the size Legion got, or a tunable the program reads (its description) that the mapper leaves to
    Legion's default mapper (which answers its own IDs, below 11, with 8 bytes)."""
    _, result = load("foreign-tunable_int64")
    fb = explain(result)
    assert fb.rule == "legion-tunable-size" and fb.category == "tunable.size"
    assert fb.explanation == (
        'Legion aborted the run ("Future size mismatch"): the program asked the mapper for a tunable value and '
        'reads it '
        "as 4-byte data, but the mapper answered with 8-byte data, a value of the wrong type. The 8-byte answer comes "
        "from "
        "`Tunable 11 = 2;` at line 1 of the mapper, which answers tunable 11 as an int64.")
    assert fb.edits == ()  # no edit: the optimizers' proposals do not change
    assert "4-byte data: bool for 1, int32 for 4, int64 for 8" in fb.suggestion, fb.suggestion
    desc = tmp_path / "foreign.json"
    desc.write_text(json.dumps({"schema": "mapperopt.app/1", "app": "foreign", "tasks": [],
                                "tunables": [{"id": 7, "value": 3, "type": "int32"}]}))
    unanswered = dataclasses.replace(result, dsl="Task * CPU;\n", settings={**result.settings,
                                                                             "description": str(desc)})
    assert explain(unanswered).explanation.endswith(
        "The 8-byte answer comes from Legion's default mapper, which answers tunable 7 as an int64 because the mapper "
        "has no `Tunable 7` statement (the program reads it as int32).")
    # A bool answer (1 byte) is quoted as the mapper writes it: `Tunable 11 = 1 bool;` would not parse.
    line = result.reason.replace("type of 8 bytes", "type of 1 bytes")
    boolean = dataclasses.replace(result, dsl="Tunable 11 = True;\n", reason=line,
                                  log=result.log.replace("type of 8 bytes", "type of 1 bytes"))
    assert explain(boolean).explanation.endswith(
        "The 1-byte answer comes from `Tunable 11 = True;` at line 1 of the mapper, which answers tunable 11 as a "
        "bool."), explain(boolean).explanation
    assert "1 bytes" not in explain(boolean).explanation + explain(boolean).suggestion  # one byte: said as such
    assert "the mapper answered with 1-byte data" in explain(boolean).explanation, explain(boolean).explanation


def test_advice_to_change_the_mapper_needs_a_dsl_mapper():
    _, result = load("circuit-crashing_mapper")  # a C++ mapper: no DSL mapper ran
    assert result.dsl is None
    assert explain(result).suggestion == load_catalog().no_mapper["suggest"]
    exact = "Task * CPU;\nLayout * * * SOA F_order Exact;\n"  # a layout of its own: its statements are suspects
    assert explain(dataclasses.replace(result, dsl=exact)).suggestion == " ".join(
        load_catalog().rule("crash-signal").suggest.replace("{without}", "Legion's default mapper").split())
    # Without Layout and Region statements every instance is as Legion's default mapper makes it: not their doing.
    default_like = explain(dataclasses.replace(result, dsl="Task * CPU;\n")).suggestion
    assert default_like.startswith("Run the same command without --mapper (Legion's default mapper): if it crashes "
                                   "there too, the program or its arguments are the cause."), default_like
    assert "usual cause" not in default_like, default_like
    # A rule's own texts for a run without a DSL mapper replace its explanation too: a timeout under Legion's default
    # mapping is the program's (it was explained as a slow mapping).
    _, slow = load("circuit-timeout_slow")
    rule = load_catalog().rule("timeout")
    said = " ".join(rule.suggest.replace("{without}", "Legion's default mapper").split())
    # the run without --mapper to copy, with the run's time limit and its arguments
    said = said.replace("{command}", "mapperopt run circuit --timeout 8 -- -l 100000")
    assert slow.dsl is not None and explain(slow).suggestion == said
    assert explain(slow).explanation.startswith("The run did not finish within")
    default = explain(dataclasses.replace(slow, dsl=None))
    assert default.explanation.startswith(f"The program did not finish within {slow.settings['timeout_s']:g} s under "
                                          "Legion's default mapper (no DSL mapper ran)")
    assert default.suggestion == " ".join(rule.suggest_no_mapper.split())


def test_advice_to_undo_a_mapper_change_is_not_given_when_the_default_mapper_failed_there_too():
    """tune's default baseline failed at the run's stage too: a DSL mapper's failure there is said to be no mapper
    change's doing (the advice was to undo it, or to run without --mapper, which tune had done); the edits stay."""
    _, crashed = load("circuit-crashing_mapper")
    crashed = dataclasses.replace(crashed, dsl="Task * CPU;\n")
    alone = explain(crashed)
    fb = explain(crashed, default_failure={"stage": crashed.stage, "reason": "exit status 139, SIGSEGV"})
    assert fb.suggestion.startswith(f"Legion's default mapper, measured as the baseline with the same program and "
                                    f"settings, failed at stage '{crashed.stage}' too (exit status 139, SIGSEGV), so "
                                    "no mapper change is the cause"), fb.suggestion
    assert (fb.rule, fb.category, fb.explanation, fb.edits) == (alone.rule, alone.category, alone.explanation,
                                                                alone.edits)
    other = "verify" if crashed.stage != "verify" else "run"
    assert explain(crashed, default_failure={"stage": other, "reason": "x"}).suggestion == alone.suggestion


def test_an_abort_with_a_message_quotes_it_and_is_not_called_silent():
    """A program that printed why before it aborted: the reason quotes its message, and so does the explanation
    (it said "aborted without any message", contradicting the reason); a silent abort still says so."""
    _, result = load("circuit-aborting_mapper")
    fb = explain(result)
    assert result.reason.endswith(": abort_mapper: giving up on task init_piece")
    assert fb.rule == "program-abort" and "without any message" not in fb.explanation, fb.explanation
    assert '"abort_mapper: giving up on task init_piece"' in fb.explanation, fb.explanation
    _, silent = load("stencil-unmapped_requirement")
    assert "without any message" in explain(silent).explanation


def test_the_shims_notes_are_no_message_of_the_programs():
    """The LD_PRELOAD shim's notes (it loaded the DSL mapper; the program's own mapper gives way to it) are ours:
    a program that aborts silently after them is a silent abort, not one whose message is the note."""
    _, captured = load("foreign-tunable_int64")  # a program with its own mapper, through the shim
    lines = captured.log.splitlines()
    note = next(i for i, line in enumerate(lines) if "replaces the default mapper with its own mapper" in line)
    log = "\n".join([*lines[:note + 1], "[mapperopt] note: the LD_PRELOAD shim loaded the DSL mapper /x/m.so",
                      "--- stdout ---", ""])
    aborted = dataclasses.replace(captured, log=log, attempts=(dataclasses.replace(captured.attempts[-1],
                                                                                   exit_code=-6),))
    fb = explain(aborted)
    assert fb.rule == "silent-abort" and "[mapperopt] note" not in fb.raw_excerpt, (fb.rule, fb.raw_excerpt)


def test_a_legion_error_after_the_programs_own_mapper_was_displaced_suggests_keeping_it():
    """A DSL mapper that displaced the program's own mapper (the shim's note) and a Legion error: the advice says so
    and suggests --keep-app-mapper (Legion's circuit example needs its mapper's colocation); it said "undo the most
    recent change ... if the error persists with the default mapper", which names no change and no mapper that ran."""
    _, captured = load("foreign-tunable_int64")  # a program with its own mapper, displaced, through the shim
    error = ("{5}{legion}: LEGION PROGRAMMING MODEL EXCEPTION: Illegal implicit mapping of a virtual mapped region "
             "in task update_voltages(UID: 134).")
    lines = captured.log.splitlines()
    note = next(i for i, line in enumerate(lines) if "replaces the default mapper with its own mapper" in line)
    log = "\n".join([*lines[:note + 1], error, "--- stdout ---", ""])
    fb = explain(dataclasses.replace(captured, log=log, reason=error))
    assert fb.rule == "legion-other-exception", fb.rule
    assert fb.suggestion == (
        "The DSL mapper took the place of the program's own mapper ('first_cpu_mapper') for every task: if the "
        "program needs it, keep it with --keep-app-mapper (MAPPEROPT_KEEP_APP_MAPPER=1 by hand) and write statements "
        "naming only the tasks to change; else, where this mapper is an edit of one that ran, undo that edit, or "
        "change one statement at a time."), fb.suggestion
    kept = log.replace("takes its place for every task", "takes its place and hands it the tasks the DSL does not name")
    assert explain(dataclasses.replace(captured, log=kept, reason=error)).suggestion.startswith(
        "Where this mapper is an edit of one that ran, undo that edit")


def test_the_run_commands_profile_table_says_when_its_rounded_shares_do_not_add_up_to_100(capsys, monkeypatch):
    """The real profile of Stencil's expert mapper: its shares (61, 20, 12, 6 %) add up to 99 %; the table says they
    are rounded rather than leave the reader to wonder where a percent went."""
    from mapperopt.benchmarks.commands import _print

    monkeypatch.setenv("COLUMNS", "400")  # one line each
    _, result = load("stencil-expert_profiled")
    result = dataclasses.replace(result, run_dir="runs/stencil/x")
    rows = [r for r in task_profile(result) if r["timed"]]
    total = sum(r["total_s"] for r in rows)
    shown = sum(round(100 * r["total_s"] / total) for r in rows)
    assert shown == 99  # the premise
    capsys.readouterr()
    _print(result, explain(result))
    out = capsys.readouterr().out
    assert "share: of the leaf tasks' total" in out, out
    assert "each rounded to a whole percent: they add up to 99 %" in out, out


def test_a_benchmarks_layout_rejection_keeps_its_edits():
    """Legion's rejection of an instance against the layout constraint of the CPU stencil variant (SOA F_order, as
    the stencil's description records it): the edits drop the opposite order and interleaving, C_order then AOS,
    exactly as feedback.json has written them for every benchmark (a guided optimizer applies them)."""
    _, result = load("stencil-layout_aos")
    for dsl, edits in (("Task * CPU;\nLayout * * * AOS;\n", '[{"op": "drop_layout_constraint", "constraint": "AOS"}]'),
                       ("Task * CPU;\nLayout * * * AOS C_order;\n",
                        '[{"op": "drop_layout_constraint", "constraint": "C_order"}, '
                        '{"op": "drop_layout_constraint", "constraint": "AOS"}]')):
        fb = explain(dataclasses.replace(result, dsl=dsl))
        assert fb.rule == "legion-layout-constraint" and json.dumps([e.to_json() for e in fb.edits]) == edits, fb


def test_a_benchmarks_check_rejection_keeps_its_edits():
    """check's E223 for the stencil, whose CPU variant needs SOA F_order: the edits drop AOS, then set F_order, those
    that apply, exactly as feedback.json has written them for every benchmark (a guided optimizer applies them)."""
    _, result = load("stencil-e223_rejected_layout")
    drop_aos = {"op": "drop_layout_constraint", "constraint": "AOS"}
    f_order = {"op": "set_layout_order", "order": "F_order"}
    for layout, edits in (("SOA C_order", [f_order]), ("AOS C_order", [drop_aos, f_order]),
                          ("AOS", [drop_aos, f_order]), ("AOS F_order", [drop_aos])):
        fb = explain(dataclasses.replace(result, dsl=f"Task * GPU,CPU;\nTask stencil CPU;\nLayout * * * {layout};\n"))
        assert fb.rule == "dsl-e223-rejected-layout", fb
        assert json.dumps([e.to_json() for e in fb.edits]) == json.dumps(edits), (layout, fb.edits)


def test_a_faster_run_is_a_candidate_not_yet_the_best():
    """The search decides after the feedback (beyond the noise, else re-measured together): the feedback must not
    call a run the best mapper so far before that decision."""
    _, expert = load("circuit-expert_profiled")
    fb = explain(expert, best=expert.throughput / 2)
    assert "This is the best mapper so far" not in fb.explanation
    assert "2.00x the best mapper so far" in fb.explanation and "beyond the noise" in fb.explanation


def _as_user_app(result, **settings):
    return dataclasses.replace(result, settings={**result.settings, "app_file": "mapperopt.yaml",
                                                 "app_options": "--app mapperopt.yaml", **settings})


def test_a_user_programs_time_is_called_its_wall_time():
    """A user's program's `time_s` is the process's wall time, not its metric: the feedback says which it is."""
    _, default = load("circuit-default_mapper")
    text = feedback_text(explain(_as_user_app(default)), default)
    assert "Execution time is" not in text and f"Wall time of the process is {default.time_s:.3g}s" in text


def test_a_tuning_iterations_advice_names_its_own_mapper_file(tmp_path):
    _, default = load("circuit-default_mapper")
    (tmp_path / "mapper.dsl").write_text("Task * CPU;\n")
    run = dataclasses.replace(_as_user_app(default), dsl="Task * CPU;\n", run_dir=str(tmp_path), profile=None,
                              attempts=[dataclasses.replace(a, profile=None) for a in default.attempts])
    fb = explain(run)
    assert "my.dsl" not in fb.suggestion and f"--mapper {tmp_path / 'mapper.dsl'} --profile" in fb.suggestion


def test_the_default_mappers_advice_says_how_to_get_a_dsl_file_that_maps_as_it():
    _, default = load("circuit-default_mapper")
    fb = explain(_as_user_app(default, gpus=0))
    assert "my.dsl" not in fb.suggestion
    assert "--mapper start.dsl --profile" in fb.suggestion
    assert "default.dsl" not in fb.suggestion  # read as Legion's default mapper shipped as a file (`--mapper default`)
    assert "Task * CPU; Region * * CPU SYSMEM; Layout * * * SOA F_order;" in fb.suggestion


def test_out_of_range_advice_names_the_mappers_machine_model_and_what_the_edit_wraps():
    _, r400 = load("circuit-r400_single_task_map")
    dsl = ("mcpu = Machine(CPU);\ndef next_cpu(Task task) { q = task.parent.processor(mcpu); "
           "return mcpu[0, q[1] + 1]; }\nSingleTaskMap check_circuit next_cpu;\n")
    fb = explain(dataclasses.replace(r400, dsl=dsl))
    assert [e.op for e in fb.edits] == ["wrap_index_modulo"]
    assert "m.size" not in fb.suggestion.replace("mcpu.size", "")
    assert "return mcpu[0, (q[1] + 1) % mcpu.size[1]];" in fb.suggestion


def test_texts_naming_the_mapper_used_without_mapper_say_legions_default_mapper_for_a_benchmark():
    """A benchmark registers no mapper of its own: without --mapper Legion's default mapper maps it, and every text
    that names the mapper a run without --mapper uses says so; a program with its own mapper (the shim's note in its
    output) gets that one named instead (tests/userapp/test_foreign_app.py runs such a program)."""
    _, slow = load("circuit-timeout_slow")
    said = " ".join(explain(slow).suggestion.split())
    assert ("past the limit without --mapper too (Legion's default mapper: `mapperopt run circuit --timeout 8 -- -l "
            "100000`), the limit is the cause") in said, said
    said = " ".join(explain(dataclasses.replace(slow, dsl=None)).explanation.split())
    assert "under Legion's default mapper (no DSL mapper ran)" in said, said
    _, aborted = load("circuit-aborting_mapper")
    said = explain(dataclasses.replace(aborted, dsl="Task * CPU;\n")).suggestion
    assert ("if the program runs without --mapper (Legion's default mapper), the mapper is the cause (where it is an "
            "edit of one that ran, undo that edit; otherwise change one statement at a time)") in said, said
    _, captured = load("foreign-tunable_int64")  # the shim's note: the program replaces the default mapper
    error = "{5}{legion}: LEGION PROGRAMMING MODEL EXCEPTION: Illegal implicit mapping of a virtual mapped region."
    lines = captured.log.splitlines()
    note = next(i for i, line in enumerate(lines) if "replaces the default mapper with its own mapper" in line)
    log = "\n".join([*lines[:note + 1], error, "--- stdout ---", ""]).replace(
        "takes its place for every task", "takes its place and hands it the tasks the DSL does not name")
    said = explain(dataclasses.replace(captured, log=log, reason=error)).suggestion
    assert said == ("Where this mapper is an edit of one that ran, undo that edit; otherwise change one statement at "
                    "a time to find the one that causes it. If the error persists without --mapper (the program's own "
                    "mapper, 'first_cpu_mapper'), it is not a mapper problem."), said
    catalog = load_catalog()  # Legion's error of a benchmark, which only the generic rule answers without its own
    generic = dataclasses.replace(catalog, rules=tuple(r for r in catalog.rules
                                                       if r.id != "legion-too-many-processors"))
    fb = explain(dataclasses.replace(load("probe-too-many-cpus")[1], dsl="Task * CPU;\n"), catalog=generic)
    assert fb.rule == "legion-other-exception" and fb.suggestion == (
        "Where this mapper is an edit of one that ran, undo that edit; otherwise change one statement at a time to "
        "find the one that causes it. If the error persists without --mapper (Legion's default mapper), it is not a "
        "mapper problem."), fb.suggestion


# A real run (`mapperopt run --app './flagwrap.sh -n 1000' --mapper my.dsl --once`, a tutorial-style daxpy whose task
# calls abort() in one point, with a DSL mapper that places everything in system memory): SIGABRT, nothing printed.
SILENT_LOG = ("--- stderr ---\n[0 - 7fc2b087a000]    0.000000 {4}{gpu}: cuInit(0) returned 100 (CUDA_ERROR_NO_DEVICE): "
              "no CUDA-capable device is detected (mapperopt libcuda stand-in), resource discovery failed\n"
              "[0 - 7fc2b087a000]    0.000000 {5}{gpu}: We are not able to discover the CUDA resources.\n"
              "[mapperopt] note: the LD_PRELOAD shim loaded the DSL mapper /x/libmapperopt_mapper.so\n\n"
              "--- stdout ---\n")
MY_DSL = ("Task * CPU;\nRegion * input_lr CPU SYSMEM;\nRegion daxpy output_lr CPU SYSMEM;\nLayout * * * SOA F_order;\n"
          "mcpu = Machine(CPU);\ndef cyclic(Task task) { return mcpu[0, task.ipoint[0] % mcpu.size[1]]; }\n"
          "IndexTaskMap init_field,daxpy cyclic;\n")
SILENT_RUN = RunResult(app="flagwrap.sh", mapper="my.dsl", status="failed", stage="run", reason="aborted", dsl=MY_DSL,
                       log=SILENT_LOG, attempts=(Attempt(-6, 0.379, stdout="stdout.txt", stderr="stderr.txt"),),
                       settings={"cpus": 1, "gpus": 0, "app_file": None, "timeout_s": 300.0,
                                 "app_options": "--app '/a/prog/flagwrap.sh -n 1000'",
                                 "command": "env LD_PRELOAD=/x/p.so /a/prog/flagwrap.sh -n 1000 -logfile stderr"})


def test_a_silent_abort_under_a_dsl_mapper_is_not_blamed_on_memory_and_says_how_to_tell():
    """A DSL mapper that cannot place an instance says so (R403): a silent abort under one is more likely the
    program's own abort() or assertion. The feedback says so and gives the one step that tells the two apart, a run
    without --mapper; without a DSL mapper (a C++ mapper, Legion's default) the unmapped requirement stays possible."""
    result = SILENT_RUN
    fb = explain(result)
    text = feedback_text(fb, result)
    assert fb.rule == "silent-abort"
    assert "probably a region requirement left unmapped" not in text and "memory ran out" not in text, text
    assert "R403" in fb.explanation and "abort()" in fb.explanation, fb.explanation
    assert "without --mapper" in fb.suggestion and "List a larger memory kind after the small one" not in fb.suggestion
    _, unmapped = load("stencil-unmapped_requirement")  # a C++ mapper that leaves a requirement unmapped
    assert "left without an instance" in explain(unmapped).explanation


def test_a_silent_abort_of_a_users_program_is_not_filed_as_out_of_memory():
    """tune's table and history.csv file a failure under its category: a user's program's silent abort, more likely
    its own abort() (the explanation says so), was filed `memory.oom`. A benchmark's stays `memory.oom`, as the
    guided search's memory fallback keys on it; the edits are the same either way."""
    result = SILENT_RUN
    own = explain(result)
    assert own.rule == "silent-abort" and own.category == "crash.abort", own
    bench = explain(dataclasses.replace(result, settings={k: v for k, v in result.settings.items()
                                                          if k not in ("app_file", "app_options")}))
    assert bench.rule == "silent-abort" and bench.category == "memory.oom", bench
    assert own.edits == bench.edits != ()
    _, unmapped = load("stencil-unmapped_requirement")
    assert explain(unmapped).category == "memory.oom"


# A real profiled run (iteration 1 of `mapperopt tune --app './tree -ll:cpu 2 -fib 14' --verify-pattern OK`): a
# recursive `fibonacci` task tree with futures (no region requirements), an inner task `fill` that index-launches
# `leaf` over 4 pieces of region `data`; the profile's MAPPEROPT_PROFILE line and the discovered description.
TREE_PROFILE = {"schema": "mapperopt.profile/1", "tasks": [
    {"task": "fibonacci", "kind": "CPU", "count": 1219, "points": 1, "total_s": 83.1815221, "max_s": 0.332643063},
    {"task": "fill", "kind": "CPU", "count": 1, "points": 1, "total_s": 0.000191377, "max_s": 0.000191377},
    {"task": "leaf", "kind": "CPU", "count": 4, "points": 4, "total_s": 9.849e-05, "max_s": 6.4307e-05},
    {"task": "sum", "kind": "CPU", "count": 609, "points": 1, "total_s": 0.002583757, "max_s": 0.000192133},
    {"task": "top_level", "kind": "CPU", "count": 1, "points": 1, "total_s": 0.473493281, "max_s": 0.473493281}]}
TREE_TASKS = [
    {"name": "top_level", "variants": ["CPU"], "launch": "single", "leaf": False, "regions": []},
    {"name": "fibonacci", "variants": ["CPU"], "launch": "single", "leaf": False, "parent": "top_level",
     "regions": []},
    {"name": "fill", "variants": ["CPU"], "launch": "single", "inner": True, "leaf": False, "parent": "top_level",
     "regions": [{"index": 0, "names": ["data"], "privilege": "read_write", "fields": ["V"], "field_sizes": [4]}]},
    {"name": "sum", "variants": ["CPU"], "launch": "single", "parent": "fibonacci", "regions": []},
    {"name": "leaf", "variants": ["CPU"], "launch": "index", "parent": "fill", "domain": [4], "regions": [
        {"index": 0, "names": ["pieces", "data"], "privilege": "write_discard", "fields": ["V"], "field_sizes": [4]}]}]


def _tree_run(tmp_path) -> RunResult:
    described = tmp_path / "tree.json"
    described.write_text(json.dumps({"schema": "mapperopt.app/1", "app": "tree", "discovered": True,
                                     "region_tree": [], "tasks": TREE_TASKS}))
    return RunResult(app="tree", mapper="mapper.dsl", status="ok", throughput=1.14, unit="1/s", time_s=0.879,
                     trimmed_mean=1.207, dsl="Task * CPU;\nRegion * * CPU SYSMEM;\nLayout * * * SOA F_order;\n",
                     profile=TREE_PROFILE, settings={
                         "cpus": 2, "gpus": 0, "app_file": None, "description": str(described),
                         "app_options": "--app '/a/tree -ll:cpu 2 -fib 14' --verify-pattern OK",
                         "command": "env LD_PRELOAD=/x/p.so /a/tree -ll:cpu 2 -fib 14 -ll:cpu 2 -ll:util 1"})


def test_a_profile_that_counts_a_negligible_part_of_the_wall_time_says_so(tmp_path):
    """The profile counts leaf tasks with region requirements only: of a task tree of futures it counts 0.1 ms of a
    0.88 s run. The feedback says what share of the wall time the counted tasks cover, names the tasks it leaves
    out, and warns that a change for the heaviest counted one can win back little. The share leads: the heaviest
    task's "100 %" (of the counted tasks' time) came first and read as all of the run's time."""
    result = _tree_run(tmp_path)
    fb = explain(result, baselines={"default": 1.27})
    share = fb.explanation.find("0.011% of the process's 0.879 s wall time")
    hot = fb.explanation.find("'leaf' on CPU takes 100% of the counted tasks' time (4 executions")
    assert -1 < share < hot, fb.explanation
    # nor the top-level task, whose time is its children's
    assert "wall time. Not counted: fibonacci, sum, fill." in fb.explanation, fb.explanation
    assert "can win back little" in fb.suggestion, fb.suggestion
    busy = dataclasses.replace(result, time_s=0.0002)  # the counted task fills the run: no warning
    fb = explain(busy)
    assert "can win back little" not in fb.suggestion and "49% of the process's" in fb.explanation, fb.explanation
    assert fb.explanation.find("'leaf' on CPU takes 100% of the measured task time") < fb.explanation.find("49%")
    # A profile that leaves out no task but the top-level one: no "not counted: none." at the end
    alone = dataclasses.replace(busy, profile={**TREE_PROFILE, "tasks": [t for t in TREE_PROFILE["tasks"]
                                                                         if t["task"] in ("leaf", "top_level")]})
    fb = explain(alone)
    assert fb.explanation.endswith("of the process's 0.0002 s wall time."), fb.explanation
    assert "not counted" not in fb.explanation.lower(), fb.explanation


def test_a_ratio_to_a_reference_within_the_noise_says_so(tmp_path):
    """Iterations 1 and 3 of a real `tune --app app.yaml` (a daxpy, 1/ms): iteration 1 maps as Legion's default
    mapper and measured 1.17x of it, iteration 3 measured 1.95x. With the 90 % intervals of the run and of the
    reference (its run folder beside the iteration's) the ratio gets its range, and "within the noise" where that
    includes 1; with the run's interval only, its range by that; with neither, the bare ratio."""
    tune = tmp_path / "tune"
    (tune / "baseline-default").mkdir(parents=True)
    default = RunResult("daxpy", "default", "ok", throughput=0.000574209, unit="1/ms", trimmed_mean=0.0005742087,
                        interval=[0.0005569079, 0.0009711029], run_dir=str(tune / "baseline-default"))
    (tune / "baseline-default" / "result.json").write_text(json.dumps(default.to_json()))
    baselines = {"default": default.trimmed_mean}

    def run(n: int, value: float, interval: list[float] | None) -> RunResult:
        return RunResult("daxpy", "mapper.dsl", "ok", throughput=value, unit="1/ms", trimmed_mean=value,
                         interval=interval, run_dir=str(tune / f"iter-00{n}"), dsl="Task * CPU;\n",
                         settings={"app_file": "app.yaml", "cpus": 2})

    first = explain(run(1, 0.0006706225, [0.0005232546, 0.0009391006]), baselines=baselines).explanation
    # The reference was measured before tuning, in a run of its own: the ratio is qualified as only roughly
    # comparable, its interval or not.
    assert ("Throughput is 1.17x that of the default mapper as measured before tuning (within the noise: 0.54-1.69x "
            "by the 90 % intervals of this run and of that mapper's); measured apart, at another time and load, the "
            "two compare only roughly (the final comparison measures them together).") in first, first
    third = explain(run(3, 0.0011215380, [0.0010086550, 0.0011615693]), baselines=baselines).explanation
    assert "1.95x that of the default mapper as measured before tuning (1.04-2.09x by the 90 % intervals of this" \
           " run and of" in third, third
    other = explain(run(3, 0.0011215380, [0.0010086550, 0.0011615693]), baselines={"default": 0.0006}).explanation
    assert "1.87x that of the default mapper as measured before tuning (1.68-1.94x by this run's 90 % interval); " \
           "measured apart" in other, other
    bare = explain(run(3, 0.0011215380, None), baselines={"default": 0.0006}).explanation
    assert ("Throughput is 1.87x that of the default mapper as measured before tuning; measured apart, at another "
            "time and load, the two compare only roughly (the final comparison measures them together).") in bare, bare


def test_an_undefined_function_called_in_a_defined_function_is_named(tmp_path):
    """`machine(CPU)` called inside a function that is defined: the advice names the call and the compiler's hint,
    not the definition of an IndexTaskMap function, which is there."""
    from mapperopt.benchmarks import run_benchmark

    dsl = "def crash(Task task) { return machine(CPU)[0]; }\nIndexTaskMap * crash;\n"
    result = run_benchmark("circuit", dsl, out_dir=tmp_path / "call")
    assert result.stage == "check" and "undefined function 'machine'" in result.reason, result.log
    fb = explain(result)
    assert "'machine'" in fb.explanation and "did you mean 'Machine'?" in fb.suggestion
    assert "IndexTaskMap function first" not in fb.suggestion
    later = run_benchmark("circuit", "IndexTaskMap * f;\ndef f(Task task) { return Machine(CPU)[0]; }\n",
                          out_dir=tmp_path / "later")
    fb = explain(later)
    assert "'f'" in fb.explanation and "def f(Task task)" in fb.suggestion and "before" in fb.suggestion


def test_a_timeout_names_a_layout_away_from_the_natural_one_but_keeps_what_a_variant_needs():
    """The captured timeout with a mapper that asks for AOS C_order: the Layout is named as a suspect and the
    statement to try has the natural SOA F_order; for a program whose variants register C_order (summa's
    description), only AOS is swapped, and a Layout asking only for what a variant needs is no suspect."""
    _, result = load("stencil-timeout_limit")
    dsl = "Task * CPU;\nLayout * * * AOS C_order;\n"
    fb = explain(dataclasses.replace(result, dsl=dsl))
    assert "A suspect is the mapper's `Layout * * * AOS C_order;` (line 2 of the mapper)" in fb.explanation, fb
    assert "`Layout * * * SOA F_order;` in place of `Layout * * * AOS C_order;`" in fb.suggestion, fb.suggestion
    summa = explain(dataclasses.replace(result, app="summa", dsl=dsl))
    assert "`Layout * * * SOA C_order;` in place of `Layout * * * AOS C_order;`" in summa.suggestion, summa.suggestion
    plain = explain(dataclasses.replace(result, app="summa", dsl="Task * CPU;\nLayout * * * C_order;\n"))
    assert "suspect" not in plain.explanation and "set back to Legion" not in plain.suggestion, plain


def test_an_abort_in_realms_copies_under_an_aos_align_layout_names_the_layout_and_where_it_came_from():
    """A real run (tests/app/graph.cc): `Layout spmv 2 * AOS F_order Align==64;` on spmv's sum reduction makes Realm's
    copy engine assert (realm/transfer/address_list.cc) while `check` passes the mapper. The advice names that
    statement and the natural one to try, says the abort is in Realm's data movement and not in a kernel, and does
    not speak of a "most recent change" (a random proposal or a hand-written mapper has none); the edits and the
    category are those of any failed assertion."""
    _, result = load("graph-aos_align_reduction")
    fb = explain(result)
    assert (fb.rule, fb.category, fb.edits) == ("assertion-failed", "crash.assertion", ())
    assert "Realm's data-movement code (realm/transfer/address_list.cc:152)" in fb.explanation, fb.explanation
    assert "not in a kernel of the program" in fb.explanation, fb.explanation
    assert "known bug there (fixed upstream in StanfordLegion/realm#436)" in fb.explanation, fb.explanation
    assert ("A suspect is the mapper's `Layout spmv 2 * AOS F_order Align==64;` (line 2 of the mapper)"
            in fb.explanation), fb.explanation
    assert fb.suggestion.startswith("Run the mapper once with `Layout spmv 2 * SOA F_order;` in place of "
                                    "`Layout spmv 2 * AOS F_order Align==64;`"), fb.suggestion
    assert "most recent" not in fb.suggestion, fb.suggestion
    assert "intermittent" not in fb.explanation  # its only execution failed

    # The same abort after two executions that ran to the end: intermittent, which the advice says.
    ok = dataclasses.replace(result.attempts[0], exit_code=0)
    again = explain(dataclasses.replace(result, attempts=(ok, ok, result.attempts[0])))
    assert "ran 2 executions to the end before this one (execution 3), so the failure is intermittent" in \
        again.explanation, again.explanation
    assert "at least as many executions (--repeats)" in again.suggestion, again.suggestion
    # Only Align: the natural statement drops it (`No_Align` where nothing else would remain).
    aligned = explain(dataclasses.replace(result, dsl="Task * CPU;\nLayout spmv * * Align==64;\n"))
    assert "`Layout spmv * * No_Align;` in place of `Layout spmv * * Align==64;`" in aligned.suggestion, \
        aligned.suggestion
    # No layout statement: no suspect named, and the advice still fits a mapper that is no edit.
    plain = explain(dataclasses.replace(result, dsl="Task * CPU;\nRegion * * CPU SYSMEM;\n"))
    assert "A suspect" not in plain.explanation and "most recent" not in plain.suggestion, plain


@pytest.mark.parametrize("path", [p for p in captures() if load(p)[1].status == "failed"], ids=lambda p: p.stem)
def test_no_advice_speaks_of_a_most_recent_change(path):
    """A random proposal, a search's start program or a hand-written mapper is no edit of an earlier one: the advice
    says what to do in both cases instead."""
    _, result = load(path)
    for dsl in (result.dsl, "Task * CPU;\nLayout * * * AOS;\n"):
        fb = explain(dataclasses.replace(result, dsl=dsl))
        assert "most recent change" not in fb.suggestion, fb.suggestion


@pytest.mark.parametrize("layout", ["Layout * * * AOS C_order Align==64;", "Layout * C_tiles * Align==64 AOS C_order;",
                                    "Layout * * * AOS C_order Align>=16;"])
def test_w327_hint_is_the_edit_autoguide_makes_when_the_blas_leaf_aborts(layout):
    """The padding `check` warns of (W327) aborts a GEMM run in its BLAS leaf (captured: `DGEMM parameter number N
    had an illegal value`); the checker's hint writes the mapper as AutoGuide's edits for that failure leave it."""
    _, result = load("dgemm-bad-lda")
    dsl = f"Task * CPU;\n{layout}\n"
    (d,) = [d for d in check(parse(dsl), load_app("cannon"), parse_machine_spec("1x0x1")) if d.code == "W327"]
    fb = explain(dataclasses.replace(result, dsl=dsl))
    assert fb.rule == "dgemm-illegal-parameter" and fb.edits, fb
    edited = apply_edits_to_text(dsl, fb.edits).splitlines()[1]
    assert d.hints[0].startswith(f"drop the Align: write `{edited}` instead"), (d.hints, edited)


def test_a_slower_run_names_the_task_whose_time_rose_most_against_the_best():
    """The explanation of a run slower than the best compares its task profile with the best's (`best_result`): the
    task whose time rose most (of those that took 1.1x or more, by 5 % of the best's task time at least), with both
    times; none such: it says so. Not said of a run as fast as the best or faster, nor without the best's run."""
    _, best = load("circuit-expert_profiled")
    profile = best.attempts[-1].profile
    assert profile and not best.profile
    slower_tasks = [{**e, "total_s": 3 * e["total_s"]} if e["task"] == "calculate_new_currents" else e
                    for e in profile["tasks"]]
    base = next(e["total_s"] for e in profile["tasks"] if e["task"] == "calculate_new_currents")
    slow = dataclasses.replace(best, throughput=0.8 * best.throughput, trimmed_mean=None,
                               attempts=(*best.attempts[:-1], dataclasses.replace(
                                   best.attempts[-1], profile={**profile, "tasks": slower_tasks})))
    text = " ".join(explain(slow, best=best.recorded_throughput, best_result=best).explanation.split())
    assert (f"Against the best's task profile, 'calculate_new_currents' took {3 * base:.3g} s here and {base:.3g} s "
            "under the best (3.00x): of the profiled tasks, its time rose most.") in text, text
    # the same profile as the best's: no task took longer
    same = dataclasses.replace(slow, attempts=best.attempts)
    text = " ".join(explain(same, best=best.recorded_throughput, best_result=best).explanation.split())
    assert ("Against the best's task profile, no profiled task took 1.10x its time under the best, and 5% of the "
            "best's task time more, or over") in text, text
    # a task of 2% of the best's task time, tripled: not the cause to name
    tiny = [{**e, "total_s": 3 * e["total_s"]} if e["task"] == "distribute_charge" else e for e in profile["tasks"]]
    tiny_run = dataclasses.replace(slow, attempts=(*best.attempts[:-1], dataclasses.replace(
        best.attempts[-1], profile={**profile, "tasks": tiny})))
    text = " ".join(explain(tiny_run, best=best.recorded_throughput, best_result=best).explanation.split())
    assert "no profiled task took 1.10x" in text and "'distribute_charge' took" not in text, text
    assert "best's task profile" not in explain(slow, best=best.recorded_throughput).explanation
    # what the search passes: the best iteration's run as its journal keeps it; none for a cached iteration
    from mapperopt.optimizer.base import IterationRecord
    from mapperopt.optimizer.loop import best_run

    record = IterationRecord(iter=1, dsl=best.dsl, key="k", status="ok", stage=None, category="performance",
                             throughput=best.recorded_throughput, unit=best.unit,
                             best_throughput=best.recorded_throughput, result=json.loads(json.dumps(best.to_json())))
    assert task_profile(best_run(record)) == task_profile(best)
    assert best_run(dataclasses.replace(record, result=None, cached=True)) is None and best_run(None) is None
    assert "best's task profile" not in explain(best, best=0.9 * best.recorded_throughput,
                                                best_result=slow).explanation
