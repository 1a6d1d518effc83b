"""Structured edits on the DSL AST: each op's effect, and its errors.

That each op, applied as AutoGuide suggests it, removes the failure it was suggested for is shown on real captured
failures in test_fixes.py.
"""

from __future__ import annotations

import pytest

from mapperopt.autoguide import EDIT_OPS, apply_edits, apply_edits_to_text
from mapperopt.dsl import parse
from mapperopt.dsl.formatter import format_program
from mapperopt.errors import MapperoptError
from mapperopt.records import Edit


def edited(text: str, *edits: Edit) -> str:
    """The formatted program after `edits`, without blank lines (the formatter keeps a blank line where a removed
    statement leaves a gap in the source lines)."""
    out = format_program(apply_edits(parse(text, "t.dsl"), list(edits)))
    return "".join(line + "\n" for line in out.splitlines() if line.strip())


def test_set_task_kinds_replaces_the_statement_with_that_selector_in_place():
    text = "# keep me\nTask * GPU;\nTask a,b CPU;\nTask * OMP;\n"
    assert edited(text, Edit("set_task_kinds", {"task": "*", "kinds": ["GPU", "CPU"]})) == (
        "# keep me\nTask a,b CPU;\nTask * GPU,CPU;\n")
    assert edited(text, Edit("set_task_kinds", {"task": "a", "kinds": ["GPU"]})) == (
        "# keep me\nTask * GPU;\nTask b CPU;\nTask a GPU;\nTask * OMP;\n")


def test_set_task_kinds_appends_when_no_statement_has_the_selector():
    assert edited("Task * CPU;\n", Edit("set_task_kinds", {"task": "stencil", "kinds": ["GPU", "CPU"]})) == (
        "Task * CPU;\nTask stencil GPU,CPU;\n")


def test_set_task_kinds_takes_the_task_out_of_maps_of_another_kind():
    text = ("c = Machine(CPU);\ng = Machine(GPU);\n"
            "def fc(Task task) { return c[0, task.ipoint[0] % c.size[1]]; }\n"
            "def fg(Task task) { return g[0, 0]; }\n"
            "def either(Task task) { return task.ipoint[0] > 0 ? c[0, 0] : g[0, 0]; }\n"
            "def old(IPoint p, ISpace s, MSpace m) { return (0, 0); }\n"
            "IndexTaskMap a,b fc;  # keep me\nSingleTaskMap a fc;\nIndexTaskMap a c old;\n"
            "IndexTaskMap a fg;\nIndexTaskMap a either;\nIndexTaskMap * fc;\nIndexTaskMap CPU fc;\n")
    notes: list[str] = []
    program = apply_edits(parse(text, "t.dsl"), [Edit("set_task_kinds", {"task": "a", "kinds": ["GPU", "CPU"]})],
                          notes)
    maps = [line for line in format_program(program).splitlines() if "Map " in line]
    # a GPU map and a map whose kind is unknown stay; `*` and the kind selector cannot leave a out
    assert maps == ["IndexTaskMap b fc;  # keep me", "IndexTaskMap a fg;", "IndexTaskMap a either;",
                    "IndexTaskMap * fc;", "IndexTaskMap CPU fc;"]
    assert notes == ["took a out of the IndexTaskMap statement of fc (its processors are CPUs)",
                     "dropped SingleTaskMap a fc (its processors are CPUs)",
                     "dropped IndexTaskMap a c old (its processors are CPUs)"]
    # moved to the CPU: out of the GPU map; `*` names no task, so the maps stay
    notes = []
    apply_edits(parse(text, "t.dsl"), [Edit("set_task_kinds", {"task": "a", "kinds": ["CPU"]})], notes)
    assert notes == ["dropped IndexTaskMap a fg (its processors are GPUs)"]
    assert edited(text, Edit("set_task_kinds", {"task": "*", "kinds": ["GPU"]})) == edited(text) + "Task * GPU;\n"


def test_set_region_memory():
    text = "Region * * GPU FBMEM;\nRegion a,b 0 CPU SYSMEM;\n"
    assert edited(text, Edit("set_region_memory", {"task": "*", "region": "*", "proc": "GPU",
                                                   "memories": ["ZCMEM", "SYSMEM"]})) == (
        "Region * * GPU ZCMEM,SYSMEM;\nRegion a,b 0 CPU SYSMEM;\n")
    assert edited(text, Edit("set_region_memory", {"task": "b", "region": 0, "proc": "CPU", "memories": ["RDMEM"]})) \
        == "Region * * GPU FBMEM;\nRegion a 0 CPU SYSMEM;\nRegion b 0 CPU RDMEM;\n"
    assert edited(text, Edit("set_region_memory", {"task": "*", "region": "*", "proc": "*", "memories": ["SYSMEM"]})) \
        == text + "Region * * * SYSMEM;\n"


def test_drop_layout_constraint():
    text = "Layout * * * AOS C_order;\nLayout a 0 FBMEM C_order;\nLayout b * * SOA;\n"
    assert edited(text, Edit("drop_layout_constraint", {"constraint": "C_order"})) == (
        "Layout * * * AOS;\nLayout b * * SOA;\n")
    assert edited(text, Edit("drop_layout_constraint", {"constraint": "C_order", "task": "a"})) == (
        "Layout * * * AOS C_order;\nLayout b * * SOA;\n")
    assert edited("Layout * * * Align==64 SOA;\n", Edit("drop_layout_constraint", {"constraint": "Align"})) == (
        "Layout * * * SOA;\n")


def test_set_layout_order():
    text = "Layout * * * SOA F_order;\nLayout task_4 0 FBMEM F_order Align==64;\n"
    assert edited(text, Edit("set_layout_order", {"order": "C_order"})) == (
        "Layout * * * SOA C_order;\nLayout task_4 0 FBMEM C_order Align==64;\n")
    # no statement gives every instance the order (the compiled mapper's default is F_order): one is added
    assert edited("Layout task_4 * * SOA;\n", Edit("set_layout_order", {"order": "C_order"})) == (
        "Layout task_4 * * SOA;\nLayout * * * C_order;\n")
    with pytest.raises(MapperoptError, match="already has C_order"):
        edited("Layout * * * C_order;\n", Edit("set_layout_order", {"order": "C_order"}))
    with pytest.raises(MapperoptError, match="order must be one of"):
        edited("Layout * * * C_order;\n", Edit("set_layout_order", {"order": "SOA"}))


def test_drop_instance_limit():
    text = "InstanceLimit a,b 2;\nInstanceLimit c CPU 1;\n"
    assert edited(text, Edit("drop_instance_limit", {})) == ""
    assert edited(text, Edit("drop_instance_limit", {"task": "a"})) == "InstanceLimit b 2;\nInstanceLimit c CPU 1;\n"


def test_wrap_index_modulo_reduces_every_machine_index():
    text = ("m = Machine(CPU);\n"
            "def f(Task task) {\n    n = m.merge(0, 1);\n    t = task.ipoint;\n    return n[t[0] + 1];\n}\n"
            "def g(Task task) {\n    return m[*task.ipoint];\n}\n"
            "def h(Task task) {\n    return task.ipoint[0] > 0 ? m[0, task.ipoint[0] % m.size[1]] : m[0, *];\n}\n")
    out = edited(text, Edit("wrap_index_modulo", {"function": "f"}), Edit("wrap_index_modulo", {"function": "g"}))
    assert "return n[(t[0] + 1) % n.size[0]];" in out
    assert "t = task.ipoint;" in out  # a tuple index is not a machine index
    assert "return m[*(task.ipoint % m.size)];" in out
    # already wrapped and wildcard items stay; nothing left to wrap is an error
    with pytest.raises(MapperoptError, match="edit #1 .* does not apply"):
        edited(text, Edit("wrap_index_modulo", {"function": "nope"}))
    assert "m[0, task.ipoint[0] % m.size[1]] : m[0, *]" in edited(text, Edit("wrap_index_modulo", {"function": "h"}))


def test_replace_index_map():
    text = ("m = Machine(CPU);\ndef f(Task task) {\n    return m[0, 0];\n}\n"
            "IndexTaskMap a,b f;\nIndexTaskMap c f;\n")
    assert edited(text, Edit("replace_index_map", {"old": "f", "new": None})).endswith("}\n")
    source = "def g(Task task) { return m[0, task.ipoint[0] % m.size[1]]; }"
    out = edited(text, Edit("replace_index_map", {"old": "f", "new": "g", "source": source}))
    assert out.endswith("def g(Task task) {\n    return m[0, task.ipoint[0] % m.size[1]];\n}\n"
                        "IndexTaskMap a,b g;\nIndexTaskMap c g;\n")
    with pytest.raises(MapperoptError, match="not defined before"):
        edited(text, Edit("replace_index_map", {"old": "f", "new": "g"}))
    with pytest.raises(MapperoptError, match="already defined"):
        edited(text, Edit("replace_index_map",
                          {"old": "f", "new": "f", "source": "def f(Task task) { return m[0,0]; }"}))


def test_define_machine_and_renames():
    text = "def f(Task task) {\n    return mg[0, 0];\n}\nTask calc CPU;\nRegion calc rp_shard CPU SYSMEM;\n"
    out = edited(text, Edit("define_machine", {"name": "mg", "kind": "GPU"}),
                 Edit("rename_task", {"old": "calc", "new": "calculate"}),
                 Edit("rename_region", {"old": "rp_shard", "new": "rp_shared"}))
    assert out.startswith("mg = Machine(GPU);\n")
    assert "Task calculate CPU;\nRegion calculate rp_shared CPU SYSMEM;" in out


def test_every_op_is_documented():
    doc = (__import__("pathlib").Path(__file__).parents[2] / "docs" / "autoguide.md").read_text()
    assert [op for op in EDIT_OPS if f"| `{op}` |" not in doc] == []


@pytest.mark.parametrize("edit, message", [
    (Edit("frobnicate", {}), "unknown op 'frobnicate'"),
    (Edit("set_task_kinds", {"task": "*"}), "bad arguments"),
    (Edit("set_task_kinds", {"task": "*", "kinds": []}), "empty kind list"),
    (Edit("drop_layout_constraint", {"constraint": "C_order"}), "no Layout statement"),
    (Edit("drop_instance_limit", {}), "no InstanceLimit statement"),
    (Edit("rename_task", {"old": "x", "new": "y"}), "nothing to rename"),
    (Edit("define_machine", {"name": "m", "kind": "CPU"}), "already assigned"),
])
def test_an_edit_that_cannot_apply_raises_naming_it(edit, message):
    with pytest.raises(MapperoptError, match=message) as err:
        apply_edits(parse("m = Machine(CPU);\nTask * CPU;\n", "t.dsl"), [Edit("set_task_kinds", {"task": "*",
                                                                                             "kinds": ["CPU"]}), edit])
    assert str(err.value).startswith(f"edit #2 {{'op': '{edit.op}'")


def test_the_input_program_is_not_changed():
    program = parse("Task * GPU;\n", "t.dsl")
    apply_edits(program, [Edit("set_task_kinds", {"task": "*", "kinds": ["CPU"]})])
    assert format_program(program) == "Task * GPU;\n"


def test_apply_edits_to_text_takes_feedback_json():
    text = "Task * GPU;\nLayout * * * C_order;\n"
    edits = [{"op": "set_task_kinds", "task": "*", "kinds": ["GPU", "CPU"]},
             Edit("drop_layout_constraint", {"constraint": "C_order"})]
    assert apply_edits_to_text(text, edits) == "Task * GPU,CPU;\n"
