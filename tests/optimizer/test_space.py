"""The search space: decisions per machine, rendering through the formatter, checking, projection, neighbours."""

from __future__ import annotations

import json
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mapperopt.benchmarks import known_benchmarks
from mapperopt.descriptions import AppDescription, parse_machine_spec
from mapperopt.dsl.checker import check
from mapperopt.dsl.commands import load_app
from mapperopt.dsl.formatter import format_program
from mapperopt.dsl.parser import parse
from mapperopt.optimizer.space import SearchSpace, join_program

MACHINES = ["1x0x2", "1x2x2", "2x4x1"]


def test_cpu_only_machine_has_no_kind_or_memory_decisions(circuit_app, cpu2):
    space = SearchSpace(circuit_app, cpu2)
    groups = {d.group for d in space.decisions}
    assert groups == {"layout", "index_map", "single_map", "limit", "collect"}
    assert {d.task for d in space.decisions if d.group == "index_map"} == {
        "init_piece", "init_pointers", "calculate_new_currents", "distribute_charge", "update_voltages"}


def test_gpu_machine_adds_kind_and_memory_decisions(circuit_app):
    space = SearchSpace(circuit_app, parse_machine_spec("1x2x2"))
    kinds = {d.task: d.choices for d in space.decisions if d.group == "kinds"}
    assert kinds == {t: (("GPU", "CPU"), ("CPU", "GPU"))
                     for t in ("calculate_new_currents", "distribute_charge", "update_voltages")}
    memory = space.by_name["memory/calculate_new_currents/2/GPU"]
    assert memory.choices == (("FBMEM",), ("ZCMEM", "FBMEM"), ("SYSMEM", "FBMEM"), ("FBMEM", "ZCMEM"),
                              ("FBMEM", "SYSMEM"))


def test_default_point_is_the_default_mapper(circuit_app):
    space = SearchSpace(circuit_app, parse_machine_spec("1x2x2"))
    assert space.render(space.default_point()) == (
        "Task * GPU,CPU;\nRegion * * GPU FBMEM;\nRegion * * CPU SYSMEM;\nLayout * * * SOA F_order;\n")


def test_a_search_that_keeps_the_programs_mapper_names_the_tasks_it_maps(circuit_app, cpu2):
    """With the program's own mapper kept (--keep-app-mapper), a `*` names no task and that mapper maps every task
    no statement names: every program of the search names every task but the top-level one (so that what it decides
    applies), and the programs check and project back. Its programs were `Task * CPU; ...`, the program's own mapper
    for every task."""
    top = {"name": "top_level", "launch": "single", "variants": ["CPU"], "regions": [], "parent": None}
    kept = {**circuit_app, "tasks": [top, *circuit_app["tasks"]], "keep_app_mapper": True}
    space = SearchSpace(kept, cpu2)
    app = AppDescription.from_json(kept)
    tasks = {t["name"] for t in circuit_app["tasks"]}
    points = [space.default_point(), *(space.random_point(random.Random(seed)) for seed in range(6))]
    for point in points + [space.apply(points[1], m) for m in list(space.neighbours(points[1]))[:8]]:
        text = space.render(point)
        program = parse(text)
        assert program.named_tasks() == tasks, text
        assert [d for d in check(program, app, cpu2) if d.is_error] == []
        assert space.project(text) == space.semantic(point)
    # without it, the search's programs are what they were
    assert SearchSpace({**kept, "keep_app_mapper": False}, cpu2).render(points[0]).startswith("Task * CPU;\n")


def test_a_search_that_keeps_the_programs_mapper_keeps_to_the_tasks_its_start_names(circuit_app):
    """With the program's own mapper kept and a start program that names some tasks only, the search decides for
    those alone: none of its programs names another task (which would move it from the program's mapper to the DSL
    mapper). Its programs named every task but the top-level one from the second iteration on. Without
    --keep-app-mapper the start changes nothing of the space."""
    top = {"name": "top_level", "launch": "single", "variants": ["CPU"], "regions": [], "parent": None}
    kept = {**circuit_app, "tasks": [top, *circuit_app["tasks"]], "keep_app_mapper": True}
    machine = parse_machine_spec("1x2x2")
    start = "Task calculate_new_currents GPU;\nRegion calculate_new_currents * GPU FBMEM;\n"
    space = SearchSpace(kept, machine, start=start)
    app = AppDescription.from_json(kept)
    assert {d.task for d in space.decisions} - {None} == {"calculate_new_currents"}
    first = space.project(start)
    points = [first, *(space.random_point(random.Random(seed)) for seed in range(4))]
    for point in points + [space.apply(first, m) for m in space.neighbours(first)]:
        text = space.render(point)
        program = parse(text)
        assert program.named_tasks() == {"calculate_new_currents"}, text
        assert [d for d in check(program, app, machine) if d.is_error] == []
    # the default start names every task but the top-level one: the whole space, as without a start
    whole = SearchSpace(kept, machine)
    default = whole.render(whole.default_point())
    assert SearchSpace(kept, machine, start=default).decisions == whole.decisions
    unkept = {**kept, "keep_app_mapper": False}
    plain, started = SearchSpace(unkept, machine), SearchSpace(unkept, machine, start=start)
    assert started.decisions == plain.decisions
    assert [started.render(p) for p in points] == [plain.render(p) for p in points]


@pytest.mark.parametrize("spec", MACHINES)
def test_random_points_render_to_checked_programs_that_project_back(circuit_app, spec):
    machine = parse_machine_spec(spec)
    space = SearchSpace(circuit_app, machine)
    app = AppDescription.from_json(circuit_app)
    for seed in range(12):
        point = space.random_point(random.Random(seed))
        text = space.render(point)
        program = parse(text)
        assert format_program(program) == text  # rendered through the formatter
        assert [d for d in check(program, app, machine) if d.is_error] == []
        assert space.project(text) == space.semantic(point)


@pytest.mark.parametrize("bench", ["circuit", "stencil", "pennant", "cannon"])
@pytest.mark.parametrize("spec", MACHINES)
def test_rendered_programs_define_only_what_they_use(bench, spec):
    """A machine model or function nothing reads is dropped (a tuned stencil mapper kept `mcpu = Machine(CPU);`
    though no function read it); the program stays checked, formatted and maps as the full one does."""
    machine = parse_machine_spec(spec)
    app = load_app(bench)
    space = SearchSpace(app, machine)
    rng = random.Random(0)
    for point in [space.default_point(), *(space.random_point(rng) for _ in range(10))]:
        text = space.render(point)
        lines = text.splitlines()
        for i, line in enumerate(lines):
            defined = re.match(r"(\w+) = Machine\(\w+\);$|def (\w+)\(", line)
            if defined:
                name = defined.group(1) or defined.group(2)
                assert any(re.search(rf"\b{name}\b", other) for other in lines[:i] + lines[i + 1:]), (name, text)
        assert format_program(parse(text)) == text
        assert [d for d in check(parse(text), app, machine) if d.is_error] == []
        sections = space.sections(point)
        full = "\n".join([*sections["task"], *sections["region"], *sections["layout"], *sections["instance_limit"],
                          *space.prelude(), *sections["index_task_map"], *sections["single_task_map"]]) + "\n"
        assert space.same_mapping(text, full)


def test_an_agents_unused_helpers_are_dropped_with_their_comments(circuit_app, cpu2):
    space = SearchSpace(circuit_app, cpu2)
    sections = {**space.sections(space.default_point()), "index_task_map": [
        "def spare(Task task) {  # never mapped\n    return mcpu[0, 0];\n}",
        "def half(Task task) {\n    return mcpu[0, task.ipoint[0] % 2];\n}",
        "def spread(Task task) {  # every second CPU\n    return half(task);\n}",
        "IndexTaskMap update_voltages spread;"]}
    text = join_program(space.prelude(), sections)
    assert "spare" not in text and "never mapped" not in text
    assert "mcpu = Machine(CPU);\ndef half(Task task) {\n" in text and "spread(Task task) {  # every second CPU" in text


def test_sections_name_requirements_unambiguously(circuit_app):
    space = SearchSpace(circuit_app, parse_machine_spec("1x2x2"))
    point = {"memory/calculate_new_currents/2/GPU": ("ZCMEM", "FBMEM"),
             "memory/calculate_new_currents/4/GPU": ("SYSMEM", "FBMEM")}
    # Requirements 3 and 4 are both on rp_wires, so requirement 4 is named by its index.
    assert space.sections(point)["region"][2:] == ["Region calculate_new_currents rp_ghost GPU ZCMEM,FBMEM;",
                                                   "Region calculate_new_currents 4 GPU SYSMEM,FBMEM;"]


def test_index_maps_share_one_function_per_pattern(circuit_app, cpu2):
    space = SearchSpace(circuit_app, cpu2)
    point = {"index_map/calculate_new_currents": "node_first", "index_map/update_voltages": "node_first"}
    lines = space.sections(point)["index_task_map"]
    assert lines[0].startswith("def node_first_cpu1d(Task task) {")
    assert lines[1:] == ["IndexTaskMap calculate_new_currents,update_voltages node_first_cpu1d;"]


def test_project_reads_a_hand_written_program(circuit_app, cpu2):
    space = SearchSpace(circuit_app, cpu2)
    poor = ("Task * CPU;\nmcpu = Machine(CPU);\ndef first_cpu(Task task) { return mcpu[0, 0]; }\n"
            "IndexTaskMap * first_cpu;\nLayout * * * AOS;\nInstanceLimit update_voltages 3;\n")
    point = space.project(poor)
    assert {point[f"index_map/{t}"] for t in space.index_tasks()} == {"node_first"}
    assert point["layout/interleave"] == "AOS"
    assert point["limit/update_voltages"] == 4  # the nearest count of the space
    assert space.project("Task * CPU") == space.default_point()  # does not parse


def test_neighbours_change_the_mapping_and_never_repeat(circuit_app, cpu2):
    space = SearchSpace(circuit_app, cpu2)
    start = space.default_point()
    moves = list(space.neighbours(start, rng=random.Random(0)))
    keys = [tuple(sorted(space.semantic(space.apply(start, m)).items())) for m in moves]
    assert len(keys) == len(set(keys))
    assert tuple(sorted(space.semantic(start).items())) not in keys
    # On 2 CPUs and 2 points, block, cyclic and hier are one mapping: only block (and node_first) are tried.
    assert [m.label for m in moves[:2]] == ["every index launch mapped 'block'",
                                            "every index launch mapped 'node_first'"]


def test_neighbours_put_the_heaviest_task_first(circuit_app, cpu2):
    space = SearchSpace(circuit_app, cpu2)
    moves = [m.label for m in space.neighbours(space.default_point(), weights={"update_voltages": 3.0})]
    singles = [m for m in moves if m.startswith("index_map/")]
    assert singles[0].startswith("index_map/update_voltages")


def test_normalize_rejects_unknown_decisions_and_values(circuit_app, cpu2):
    space = SearchSpace(circuit_app, cpu2)
    with pytest.raises(ValueError, match="not a decision"):
        space.normalize({"kinds/calculate_new_currents": ["GPU", "CPU"]})
    with pytest.raises(ValueError, match="not a choice"):
        space.normalize({"layout/align": 32})
    assert space.normalize({"layout/order": "C_order"})["layout/order"] == "C_order"


def test_with_one_processor_every_placement_is_the_default(circuit_app):
    space = SearchSpace(circuit_app, parse_machine_spec("1x0x1"))
    point = space.semantic({f"index_map/{t}": "block" for t in space.index_tasks()})
    assert point == space.default_point()
    assert not [m for m in space.neighbours(space.default_point()) if "index" in m.label]


def test_a_framebuffer_first_fallback_survives_projection_and_no_move_only_adds_one(circuit_app):
    """AutoGuide's answer to a full framebuffer, `Region * * GPU FBMEM,ZCMEM;`, is a point of the space (so the
    search goes on from it without losing the fallback); neighbours never spend an iteration on a fallback alone."""
    space = SearchSpace(circuit_app, parse_machine_spec("1x2x2"))
    spill = "Task * GPU,CPU;\nRegion * * GPU FBMEM,ZCMEM;\nRegion * * CPU SYSMEM;\n"
    point = space.project(spill)
    assert {v for n, v in point.items() if n.startswith("memory/") and n.endswith("/GPU")} == {("FBMEM", "ZCMEM")}
    assert space.same_mapping(space.render(point), spill)
    for start in (space.default_point(), point):
        for move in space.neighbours(start):
            for name, value in move.changes.items():
                if name.startswith("memory/"):
                    assert value[0] != start[name][0], move.label


LAYOUT_BOUND = [b for b in known_benchmarks()
                if any(r.layout or r.interleave for t in load_app(b).tasks for r in t.regions)]


def _assert_no_rejected_layout(app: AppDescription, spec) -> SearchSpace:
    """Asserts that the points the search renders on machine `spec` (the default, random ones and a random one's
    neighbours) give no requirement a layout its task's variant rejects where it runs (E223), nor one that depends on
    the machine (W312, checked without one); returns the space."""
    space = SearchSpace(app, spec)
    rng = random.Random(0)
    points = [space.default_point(), *(space.random_point(rng) for _ in range(5))]
    points += [space.apply(points[1], m) for m in space.neighbours(points[1], rng=rng)][:10]
    for point in points:
        program = parse(space.render(point), "<point>")
        found = [d for m in (spec, None) for d in check(program, app, m) if d.code in ("E223", "W312")]
        assert not found, (spec, space.render(point), found)
    return space


@pytest.mark.parametrize("bench", LAYOUT_BOUND)
def test_the_search_never_proposes_a_layout_the_variants_reject(bench):
    """Points the search renders (the default, random ones and their neighbours) never give a requirement a layout
    its task's variant rejects where it runs (E223), nor one that depends on the machine (W312, checked without one)."""
    app = load_app(bench)
    for machine in ("1x0x2", "1x2x2"):  # the CPU variants decide, or the GPU ones where there are GPUs
        _assert_no_rejected_layout(app, parse_machine_spec(machine))


def _constrained(circuit_app: dict, needs: dict[str, dict]) -> AppDescription:
    """Circuit's description as discovery of a user's program writes it, with every requirement of each task of
    `needs` fixed as it says (e.g. AOS)."""
    app = {**json.loads(json.dumps(circuit_app)), "discovered_as": "circuit"}
    for task in app["tasks"]:
        for req in task["regions"]:
            req.update(needs.get(task["name"], {}))
    return AppDescription.from_json(app)


@pytest.mark.parametrize("needs", [
    {"calculate_new_currents": {"interleave": "AOS"}, "distribute_charge": {"interleave": "AOS"}},
    {"calculate_new_currents": {"interleave": "AOS"}, "distribute_charge": {"interleave": "SOA", "layout": "C_order"},
     "update_voltages": {"layout": "F_order", "layout_kinds": ["CPU"]}},
    {"distribute_charge": {"required_align": {"CPU": {"op": ">=", "bytes": 128}}}},
], ids=["aos", "mixed", "align"])
def test_the_search_keeps_the_layout_each_variant_requires(circuit_app, needs):
    """A user's program whose variants need AOS instances (discovery's `interleave`), or different interleavings and
    dimension orders for different tasks, or an alignment (`required_align`): the start program and every point the
    search renders give each requirement what its variant needs (no E223 or W312), and the aspects no variant fixes
    stay searched. The start program maps like Legion's default mapper: AOS only where a variant needs it."""
    app = _constrained(circuit_app, needs)
    for machine in ("1x0x2", "1x2x2"):
        space = _assert_no_rejected_layout(app, parse_machine_spec(machine))
        assert "layout/align" in space.by_name
        assert space.default_mapper_differences(space.render(space.default_point())) == []


@pytest.mark.parametrize("bench", known_benchmarks())
def test_the_benchmarks_layouts_stay_one_line(bench):
    """The benchmarks' variants agree on what they require (SOA, one dimension order; no alignment): their programs
    keep the one global Layout line, with no statement per task, so the search proposes what it always did."""
    for machine in MACHINES:
        space = SearchSpace(load_app(bench), parse_machine_spec(machine))
        assert space.pinned == [], (machine, space.pinned)
        assert space.render(space.default_point()).count("Layout ") == 1


LEFT_OUT = ("start program; its IndexTaskMap statements change nothing on this machine (1 CPU) and are left out of "
            "the programs the search writes")


@pytest.mark.parametrize("optimizer", ["guided", "random"])
def test_a_start_whose_map_statements_change_nothing_here_says_they_are_left_out(circuit_app, cpu2, optimizer):
    """`tune --start FILE` on one CPU: the programs after the start had no IndexTaskMap and nothing said why. On one
    processor every placement is the same, so the search's programs leave them out, and the start's note says so."""
    from optimizer_support import CONFIGS

    from mapperopt.optimizer.base import make_optimizer

    start = (CONFIGS / "circuit.dsl").read_text()
    one = SearchSpace(circuit_app, parse_machine_spec("1x0x1"))
    assert make_optimizer(optimizer, space=one, start=start, seed=0).propose([]).note == LEFT_OUT
    # What the note says: the search's version of the start has none.
    assert "IndexTaskMap" in start and "IndexTaskMap" not in one.render(one.semantic(one.project(start)))
    # Where they place points differently they are kept and nothing is said; nor of a start rendered from a point.
    assert make_optimizer(optimizer, space=SearchSpace(circuit_app, cpu2), start=start, seed=0).propose([]).note \
        == "start program"
    point = one.default_point()
    assert make_optimizer(optimizer, space=one, start=one.render(point), start_point=point,
                          seed=0).propose([]).note == "start program"


def test_a_map_statement_whose_function_fails_is_not_said_to_change_nothing(circuit_app):
    one = SearchSpace(circuit_app, parse_machine_spec("1x0x1"))
    failing = "m = Machine(CPU);\ndef f(Task t) { return m[0, 1]; }\nIndexTaskMap calculate_new_currents f;\n"
    assert one.left_out(failing) is None
    assert one.left_out(failing.replace("m[0, 1]", "m[0, 0]")).startswith("its IndexTaskMap statements")


USER_START = """\
# my circuit mapper
Task * GPU,CPU;                              # GPU variant when present
Region * * GPU FBMEM,ZCMEM;
Region * * CPU SYSMEM;
mcpu = Machine(CPU);
def spread(Task task) {
    return mcpu[0, task.ipoint[0] % mcpu.size[1]];
}
IndexTaskMap calculate_new_currents spread;
"""


def test_a_start_file_is_told_what_the_search_does_not_keep(circuit_app, cpu2):
    """`--start FILE` on a CPU-only machine: best.dsl came back as a few lines of the search's own, with the file's
    comments, functions, IndexTaskMap and GPU statements gone and nothing said. The start's note lists them."""
    space = SearchSpace(circuit_app, cpu2)
    note = space.not_kept(USER_START, "my.dsl")
    assert note.startswith("my.dsl is not edited: the search writes programs of its own"), note
    for part in ("its comments", "its functions (spread)", "its IndexTaskMap statements",
                 ". They say nothing of GPU, FBMEM, ZCMEM either: this machine has none (`Task * GPU,CPU` becomes "
                 "`Task * CPU`). Every other statement"):
        assert part in note, (part, note)
    # Only a kind the machine lacks: a whole sentence too (it read "...; what it says of FBMEM (this machine has
    # none).", a fragment).
    fbmem = space.not_kept("Task * CPU;\nRegion * * CPU FBMEM,SYSMEM;\n", "f.dsl")
    assert ("from what the file decides on this machine (2 CPU). They say nothing of FBMEM: this machine has none. "
            "Every other statement") in fbmem, fbmem
    # What the note says is so: the search's version of the start has none of them.
    searched = space.render(space.project(USER_START))
    assert not any(c in searched for c in ("my circuit mapper", "GPU variant", "spread", "GPU")), searched
    named = space.not_kept("Task calculate_new_currents GPU,CPU;\n", "n.dsl")
    assert "`Task calculate_new_currents GPU,CPU` becomes `Task calculate_new_currents CPU`" in named, named
    # A file with nothing to lose: no note.
    assert space.not_kept(space.render(space.default_point()), "s.dsl") is None


def test_a_start_files_statements_the_search_decides_otherwise_are_named(circuit_app):
    """`tune --start my.dsl` with `Layout daxpy input_blocks CPU AOS C_order;` (one requirement of one task) and
    `InstanceLimit daxpy 2;`: every program after the start had `Layout * * * SOA F_order;` and a limit of 1 or none,
    and no note said so. The search writes one Layout line for all requirements (the layout most of them get) and
    limits of 1 or 4; the start's note names each statement whose effect its programs do not have."""
    space = SearchSpace(circuit_app, parse_machine_spec("1x0x1"))
    start = ("Task * CPU;\nRegion * * CPU SYSMEM;\nLayout calculate_new_currents rp_wires CPU AOS C_order;\n"
             "InstanceLimit calculate_new_currents 2;\nInstanceLimit check_circuit 1;\n"
             "CollectMemory calculate_new_currents rp_wires;\n")
    searched = space.render(space.project(start))
    # What the note says is so: the search's version of the start has none of them as written.
    assert not any(s in searched for s in ("AOS", "C_order", "InstanceLimit calculate_new_currents 2",
                                           "check_circuit 1", "rp_wires")), searched
    note = space.not_kept(start, "my.dsl")
    assert note is not None
    for part in ("they do not keep what these statements decide here: line 3's `Layout calculate_new_currents "
                 "rp_wires CPU AOS C_order;` (they write `Layout * * * SOA F_order;` for every requirement, the layout "
                 "most requirements get)",
                 "line 4's `InstanceLimit calculate_new_currents 2;` (they write "
                 "`InstanceLimit calculate_new_currents 1;`)",
                 "line 5's `InstanceLimit check_circuit 1;` (they write none)",
                 "line 6's `CollectMemory calculate_new_currents rp_wires;` (they write "
                 "`CollectMemory calculate_new_currents *;`)"):
        assert part in note, (part, note)
    # Statements the search's programs do keep are not named.
    kept = "Task * CPU;\nLayout * * * AOS C_order;\nInstanceLimit calculate_new_currents 4;\n"
    assert space.not_kept(kept, "k.dsl") is None
    # A specific layout the majority overrides; and layouts the majority spreads to requirements they left undecided.
    assert space.decided_otherwise("Layout * * * AOS;\nLayout check_circuit * CPU SOA;\n") == (
        "what this statement decides here: line 2's `Layout check_circuit * CPU SOA;` (they write `Layout * * * AOS "
        "F_order;` for every requirement, the layout most requirements get)")
    spreading = "".join(f"Layout {t} * CPU AOS;\n" for t in ("init_piece", "calculate_new_currents", "update_voltages",
                                                              "distribute_charge"))
    assert "AOS" in space.render(space.project(spreading))
    assert space.decided_otherwise(spreading) == (
        "what these statements decide here: line 1's `Layout init_piece * CPU AOS;` and line 2's "
        "`Layout calculate_new_currents * CPU AOS;` and line 3's `Layout update_voltages * CPU AOS;` and line 4's "
        "`Layout distribute_charge * CPU AOS;` (they write "
        "`Layout * * * AOS F_order;` for every requirement, the layout most requirements get)")
    # Without searched layouts the search writes no Layout line; a fallback memory the search has no list for.
    unsearched = SearchSpace(circuit_app, parse_machine_spec("1x0x1"), layouts=False)
    assert unsearched.decided_otherwise("Layout * * * SOA F_order;\nLayout update_voltages * CPU AOS;\n") == (
        "what this statement decides here: line 2's `Layout update_voltages * CPU AOS;` (they write none: layouts are "
        "not searched)")
    gpus = SearchSpace(circuit_app, parse_machine_spec("1x2x2"))
    assert gpus.decided_otherwise("Task * GPU,CPU;\nRegion update_voltages 0 GPU ZCMEM,SYSMEM,FBMEM;\n") == (
        "what this statement decides here: line 2's `Region update_voltages 0 GPU ZCMEM,SYSMEM,FBMEM;` (they write "
        "`Region update_voltages 0 GPU ZCMEM,FBMEM;`)")
    assert gpus.decided_otherwise("Task * GPU,CPU;\nRegion * * GPU ZCMEM,FBMEM;\n") is None
    # The first iteration's note (history.csv) says it too.
    from mapperopt.optimizer.base import make_optimizer

    first = make_optimizer("guided", space=space, start=start, seed=0).propose([]).note
    assert first.startswith("start program; the search's programs do not keep what these statements decide here: "
                            "line 3's `Layout calculate_new_currents rp_wires CPU AOS C_order;`"), first


@settings(max_examples=30, deadline=None)
@given(bench=st.sampled_from(["circuit", "stencil", "pennant"]), machine=st.sampled_from(MACHINES + ["1x0x1"]),
       seed=st.integers(0, 2**32 - 1))
def test_a_program_of_the_search_is_never_said_to_be_decided_otherwise(bench, machine, seed):
    """The note names only what the search's programs lose: a program rendered from any point projects back to one
    that decides all it decides."""
    space = SearchSpace(load_app(bench), parse_machine_spec(machine))
    assert space.decided_otherwise(space.render(space.random_point(random.Random(seed)))) is None


def test_the_best_written_as_an_edit_of_the_start_file_keeps_it_and_maps_as_the_best(circuit_app, cpu2):
    """best.dsl is the search's own program; `edit_of` gives the user's file with the statements the search changed
    after its own, so that its comments, functions, map and GPU statements stay, and it maps here as the best does
    (the reference evaluator) and passes the checker. Where the file's own statements would outrank the search's
    (a more specific selector), no edit is given rather than a wrong one. A statement of the file that an added one
    overrides is commented out (`check` warned W300 on the edit)."""
    space = SearchSpace(circuit_app, cpu2)
    start = USER_START + "Layout * * * SOA F_order;\n"
    point = space.project(start)
    best = space.render({**point, "layout/order": "C_order", "limit/calculate_new_currents": 1})
    edit = space.edit_of(start, best)
    overridden = "# (mapperopt tune: overridden below) Layout * * * SOA F_order;\n"
    assert edit.startswith(USER_START + overridden), edit
    added = edit[len(USER_START + overridden):]
    assert "Layout * * * SOA C_order;" in added and "InstanceLimit calculate_new_currents 1;" in added, added
    # what the search did not change stays the file's
    assert "Task * CPU;" not in added and "Region" not in added, added
    assert space.same_mapping(edit, best) and not space.same_mapping(start, best)
    diags = check(parse(edit, "<edit>"), AppDescription.from_json(circuit_app), cpu2)
    assert not [d for d in diags if d.severity == "error" or d.code == "W300"], diags
    # ... unless another statement shares its line: that one stays the file's
    shared = USER_START + "Layout * * * SOA F_order; mine = Machine(CPU);\n"
    assert "\nLayout * * * SOA F_order; mine = Machine(CPU);\n" in space.edit_of(shared, best)
    # The file's own, more specific Layout outranks the search's line: no edit.
    specific = start + "Layout calculate_new_currents * * F_order;\n"
    assert space.edit_of(specific, best) is None
    line = specific.count("\n")  # said with its line, as what keeps the edit from mapping as the best
    assert space.edit_blockers(specific, best) == [f"line {line}: `Layout calculate_new_currents * * F_order;`"]
    assert space.edit_blockers(start, best) == []
    # The best is the file's own mapping: nothing to add, the file itself.
    assert space.edit_of(start, space.render(point)) == start


def test_a_start_statement_overridden_for_some_of_its_tasks_keeps_the_others(circuit_app):
    """A statement of the start file whose task list the best overrides for some tasks only (`Task a,b,c GPU;`, the
    best moving b) is commented out and written again for the others, so that `check` finds no W300 in the edit,
    which still maps as the best does (the reference evaluator)."""
    machine = parse_machine_spec("1x1x2")
    space = SearchSpace(circuit_app, machine)
    start = "Task * CPU;\nTask calculate_new_currents,distribute_charge,update_voltages GPU;  # mine\n"
    best = space.render({**space.project(start), "kinds/distribute_charge": ("CPU", "GPU")})
    edit = space.edit_of(start, best)
    assert edit.startswith("Task * CPU;\n# (mapperopt tune: distribute_charge overridden below) Task "
                           "calculate_new_currents,distribute_charge,update_voltages GPU;  # mine\n"
                           "Task calculate_new_currents,update_voltages GPU;\n"), edit
    assert "Task distribute_charge CPU,GPU;" in edit and space.same_mapping(edit, best), edit
    assert not [d for d in check(parse(edit, "<edit>"), AppDescription.from_json(circuit_app), machine)
                if d.severity == "error" or d.code == "W300"]


def test_a_start_without_layout_search_has_no_layout_line(circuit_app, cpu2):
    """docs/own-app.md §7 says the start has a `Layout * * *` line only where layouts are searched: without them (a
    program nothing verifies) the start program has no Layout statement at all."""
    searched = SearchSpace(circuit_app, cpu2).render(SearchSpace(circuit_app, cpu2).default_point())
    plain = SearchSpace(circuit_app, cpu2, layouts=False)
    start = plain.render(plain.default_point())
    assert "Layout * * *" in searched and "Layout" not in start, start
    assert start.startswith("Task * CPU;"), start
