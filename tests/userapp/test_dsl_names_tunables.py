"""DSL additions for users' programs: task and region names as string literals, `Tunable`, and the search space
for programs whose names are not identifiers or whose results nothing verifies."""

from __future__ import annotations

import pytest

from mapperopt.descriptions import AppDescription
from mapperopt.dsl import Evaluator, check, format_program, parse
from mapperopt.dsl.errors import DslSyntaxError, render_all
from mapperopt.optimizer.space import SearchSpace

APP = {
    "schema": "mapperopt.app/1", "app": "mine",
    "tasks": [
        {"name": "top", "variants": ["CPU"], "launch": "single", "inner": False, "leaf": False, "parent": None,
         "domain": None, "regions": []},
        {"name": "Initialize Nodes", "variants": ["CPU"], "launch": "index", "inner": False, "leaf": True,
         "parent": "top", "domain": [4],
         "regions": [{"index": 0, "names": ["node pieces", "node space", "node_fields"], "privilege": "read_write",
                      "fields": ["v"]}]},
    ],
    "region_tree": [], "tunables": [{"id": 11, "value": 4, "type": "int32"}],
}
MACHINE = {"schema": "mapperopt.machine/1", "nodes": 1, "processors": {"CPU": [2], "GPU": [0]},
           "memories": [{"kind": "SYSMEM", "node": 0, "capacity": 1 << 30, "procs": {"CPU": [0, 1]}}]}


def test_string_names_round_trip_and_select():
    text = ('Task "Initialize Nodes" CPU;\nRegion "Initialize Nodes" "node space" CPU SYSMEM;\n'
            'Layout * node_fields * AOS;\nTask top, "Region" CPU;\nTunable 11 = 4 int32;\n')
    program = parse(text)
    canonical = format_program(program)
    assert '"Initialize Nodes"' in canonical and '"Region"' in canonical  # a reserved word stays quoted
    assert 'node_fields' in canonical and '"node_fields"' not in canonical  # identifiers are not quoted
    assert parse(canonical) == program
    app = AppDescription.from_json(APP)
    assert not [d for d in check(program, app) if d.is_error and d.code != "E202"]
    from mapperopt.descriptions import MachineDescription

    ev = Evaluator(program, MachineDescription.from_json(MACHINE), app=app)
    assert ev.memories("Initialize Nodes", 0, "CPU") == ["SYSMEM"]
    assert ev.layout("Initialize Nodes", 0, "CPU", "SYSMEM")["order"] == "AOS"


def test_unknown_string_name_is_reported_statically():
    diags = check(parse('Task "Initialise Nodes" CPU;\nRegion * "no such space" CPU SYSMEM;\nTunable 11 = 4 int32;\n'),
                  AppDescription.from_json(APP))
    codes = sorted(d.code for d in diags if d.is_error)
    assert codes == ["E202", "E203"], diags


@pytest.mark.parametrize("text, canonical", [
    ("Tunable 11 = 4;", "Tunable 11 = 4;"),
    ("Tunable 11=-4 int32 ;", "Tunable 11 = -4 int32;"),
    ("Tunable 3 = True;", "Tunable 3 = True;"),
    ("Tunable 3 = 1 uint8;", "Tunable 3 = 1 uint8;"),
    ("Tunable 3 = False bool;", "Tunable 3 = False;"),  # the type the reference lists, written out
])
def test_tunable_statement(text, canonical):
    program = parse(text)
    assert format_program(program).strip() == canonical
    assert parse(canonical) == program
    assert not check(program)


@pytest.mark.parametrize("text, words", [
    ("Tunable 11 = 4 float;", ["E226", "unknown tunable type 'float'"]),
    ("Tunable 11 = 300 int8;", ["E226", "does not fit in int8"]),
    ("Tunable 11 = -1 uint32;", ["E226", "does not fit in uint32"]),
])
def test_tunable_errors(text, words):
    """A Tunable answer's own code, E226: E221 is a Region statement's memory kinds absent from the machine."""
    diags = check(parse(text))
    message = " ".join(f"{d.code} {d.message}" for d in diags)
    assert all(w in message for w in words), message
    assert "E221" not in message, message


def test_a_tunable_answered_twice_warns_on_the_first():
    """The compiled mapper answers with the later statement of one ID, as for any repeated selector: W300."""
    diags = check(parse("Tunable 7 = 1;\nTunable 8 = 1;\nTunable 7 = 2 int32;\n", "t.dsl"))
    assert [(d.code, d.loc.line) for d in diags] == [("W300", 1)], diags
    assert "overridden by a later one with the same selector (7)" in diags[0].message, diags[0].message
    assert "t.dsl:3:1: Tunable 7 = 2 int32;" in diags[0].notes[0], diags[0].notes


@pytest.mark.parametrize("text, col, words", [
    ("Tunable 7 = True int32;", 18, "True and False are answered as bool, not int32"),
    ("Tunable 7 = 1 bool;", 15, "an integer is answered as an integer type"),
])
def test_a_tunable_value_and_type_that_do_not_go_together_are_refused(text, col, words):
    """No implicit conversions (an int is not a bool): `True int32` was read as 1 without a word."""
    with pytest.raises(DslSyntaxError) as info:
        parse(text, "t.dsl")
    assert (info.value.code, info.value.loc.line, info.value.loc.col) == ("E100", 1, col), str(info.value)
    assert words in info.value.diagnostic.message, info.value.diagnostic.message


def test_tunable_needs_a_value():
    with pytest.raises(DslSyntaxError):
        parse("Tunable 11;")


def test_search_space_quotes_names_answers_tunables_and_can_leave_layouts_out():
    space = SearchSpace(APP, MACHINE)
    point = dict(space.default_point())
    point["index_map/Initialize Nodes"] = next(c for c in space.by_name["index_map/Initialize Nodes"].choices
                                               if c != "default")
    text = space.render(point)
    assert 'IndexTaskMap "Initialize Nodes"' in text and "Tunable 11 = 4 int32;" in text
    assert not [d for d in check(parse(text), AppDescription.from_json(APP)) if d.is_error]
    assert "Layout" in text
    no_layouts = SearchSpace(APP, MACHINE, layouts=False)
    assert not [d for d in no_layouts.decisions if d.group == "layout"]
    assert "Layout" not in no_layouts.render(no_layouts.default_point())


def test_autoguide_recognises_task_names_with_spaces():
    from mapperopt.autoguide import explain
    from mapperopt.records import RunResult

    line = ("[mapperopt] error R403: no memory of the list FBMEM can hold requirement 0 (node_pieces, node space) of "
            "task 'Initialize Nodes': FBMEM: absent; processor CPU[node 0, proc 1]")
    result = RunResult(app="foreign", mapper="m.dsl", status="failed", stage="run", reason=line,
                       log=f"--- stderr ---\n{line}\n--- stdout ---\n", dsl="Task * CPU;\n")
    feedback = explain(result)
    assert feedback.rule == "mapper-r403-no-memory" and "'Initialize Nodes'" in feedback.explanation


@pytest.mark.parametrize("text, code, where, words", [
    # Not answered: Legion's default mapper does not know tunable 11, the mapper dies (R456); about the whole file
    # (line 0), which lacks the statement.
    ("Task * CPU;\n", "E224", 0, ["asks for tunable 11 (read as int32)", "R456", "`Tunable 11 = 4 int32;`"]),
    # Answered with 8 bytes (int64, the default type) where the program reads 4.
    ("Task * CPU;\nTunable 11 = 4;\n", "E224", 2, ["answered as int64 (8 bytes)", "reads it as int32 (4 bytes)",
                                                   "`Tunable 11 = 4 int32;`"]),
    ("Tunable 11 = 4 int32;\nTunable 12 = 1 int32;\n", "W313", 2, ["never asks for tunable 12", "asks for: 11"]),
])
def test_tunables_are_checked_against_those_the_program_asks_for(text, code, where, words):
    found = [d for d in check(parse(text, "m.dsl"), AppDescription.from_json(APP)) if d.code in ("E224", "W313")]
    assert [(d.code, d.loc.line) for d in found] == [(code, where)], found
    message = " ".join([found[0].message, *found[0].hints])
    assert all(w in message for w in words), message


def test_an_unanswered_tunable_names_the_file_without_a_line_or_excerpt():
    text = "Task * CPU;\n"
    found = [d for d in check(parse(text, "m.dsl"), AppDescription.from_json(APP)) if d.code == "E224"]
    assert render_all(found, text) == (
        "m.dsl: error[E224]: the application asks for tunable 11 (read as int32), which this mapper does not answer: "
        "the run aborts (R456)\n"
        "  hint: add `Tunable 11 = 4 int32;` (the answer of the program's own mapper in discovery)")
    legion_id = AppDescription.from_json({**APP, "tunables": [{"id": 6, "value": 2, "type": "int64"}]})
    (w313,) = check(parse(text, "m.dsl"), legion_id)
    assert w313.render(text).startswith("m.dsl: warning[W313]: the application asks for tunable 6, which this mapper "
                                        "does not answer: Legion's default mapper answers it with its own meaning")
    assert "\n  hint: add `Tunable 6 = 2;`" in w313.render(text) and " | " not in w313.render(text)


def test_tunable_checks_follow_legion_ids_and_the_kept_program_mapper():
    app = AppDescription.from_json({**APP, "tunables": [{"id": 7, "value": 3, "type": "int32"},
                                                        {"id": 6, "value": 2, "type": "int64"}]})
    found = [d for d in check(parse("Task * CPU;\nTunable 3 = 1;\n"), app)]
    # Legion's default mapper answers 7 with 8 bytes: certain to abort; 6 is read as 8 bytes: only its meaning
    # differs; 3 is one of Legion's IDs, which discovery would have recorded had the program asked for it.
    e224, w313_6, w313_3 = sorted(found, key=lambda d: (d.code, d.loc.line))
    assert "tunable 7 (read as int32)" in e224.message and "Future size mismatch" in e224.message
    assert w313_6.code == "W313" and "tunable 6" in w313_6.message
    assert w313_3.message == "the application never asks for tunable 3" and w313_3.hints == ("it asks for: 7, 6",)
    kept = AppDescription.from_json({**app.to_json(), "keep_app_mapper": True})
    assert not [d for d in check(parse("Task * CPU;\n"), kept) if d.code in ("E224", "W313")]
    assert [d.code for d in check(parse("Tunable 7 = 3;\n"), kept)] == ["E224"]  # the DSL's answer still counts


def test_a_tunable_error_does_not_stop_the_static_evaluation():
    from mapperopt.descriptions import MachineDescription

    text = 'def f(Task task) { return Machine(CPU)[0, task.ipoint[0]]; }\nIndexTaskMap "Initialize Nodes" f;\n'
    found = check(parse(text), AppDescription.from_json(APP), MachineDescription.from_json(MACHINE))
    assert sorted(d.code for d in found) == ["E205", "E224"], found  # points 2 and 3 are past the 2 CPUs


@pytest.mark.parametrize("text, rule, fixed", [
    ('Task "Initialise Nodes" CPU;\nTunable 11 = 4 int32;\n', "dsl-e202-unknown-task", 'Task "Initialize Nodes" CPU;'),
    ('Region "Initialize Nodes" "node spaces" CPU SYSMEM;\nTunable 11 = 4 int32;\n', "dsl-e203-unknown-region",
     'Region "Initialize Nodes" "node space" CPU SYSMEM;'),
])
def test_autoguide_renames_a_misspelt_name_with_spaces(text, rule, fixed):
    """check's did-you-mean quotes a name that is no identifier ("node space"): AutoGuide still reads it and
    proposes the rename, which gives a mapper check accepts."""
    from mapperopt.autoguide import apply_edits, explain
    from mapperopt.records import RunResult

    app = AppDescription.from_json(APP)
    report = render_all([d for d in check(parse(text, "m.dsl"), app) if d.is_error], text)
    result = RunResult(app="mine", mapper="m.dsl", status="failed", stage="check", reason=report.splitlines()[0],
                       log=report, dsl=text)
    feedback = explain(result)
    assert feedback.rule == rule and feedback.edits, (report, feedback)
    program = apply_edits(parse(text), feedback.edits)
    assert fixed in format_program(program)
    assert not [d for d in check(program, app) if d.is_error]
