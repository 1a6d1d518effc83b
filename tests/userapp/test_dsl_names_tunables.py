"""DSL additions for users' programs: task and region names as string literals, `Tunable`, and the search space
for programs whose names are not identifiers or whose results nothing verifies."""

from __future__ import annotations

import pytest

from mapperopt.descriptions import AppDescription
from mapperopt.dsl import Evaluator, check, format_program, parse
from mapperopt.dsl.errors import DslSyntaxError
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
            'Layout * node_fields * AOS;\nTask top, "Region" CPU;\n')
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
    diags = check(parse('Task "Initialise Nodes" CPU;\nRegion * "no such space" CPU SYSMEM;\n'),
                  AppDescription.from_json(APP))
    codes = sorted(d.code for d in diags if d.is_error)
    assert codes == ["E202", "E203"], diags


@pytest.mark.parametrize("text, canonical", [
    ("Tunable 11 = 4;", "Tunable 11 = 4;"),
    ("Tunable 11=-4 int32 ;", "Tunable 11 = -4 int32;"),
    ("Tunable 3 = True;", "Tunable 3 = True;"),
    ("Tunable 3 = 1 uint8;", "Tunable 3 = 1 uint8;"),
])
def test_tunable_statement(text, canonical):
    program = parse(text)
    assert format_program(program).strip() == canonical
    assert parse(canonical) == program
    assert not check(program)


@pytest.mark.parametrize("text, words", [
    ("Tunable 11 = 4 float;", ["E221", "unknown tunable type 'float'"]),
    ("Tunable 11 = 300 int8;", ["E221", "does not fit in int8"]),
    ("Tunable 11 = -1 uint32;", ["E221", "does not fit in uint32"]),
])
def test_tunable_errors(text, words):
    diags = check(parse(text))
    message = " ".join(f"{d.code} {d.message}" for d in diags)
    assert all(w in message for w in words), message


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
