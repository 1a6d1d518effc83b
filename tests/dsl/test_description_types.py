"""Application and machine descriptions (docs/dsl-reference.md §12, §6) and the synthetic machines of --machine."""

import json
from pathlib import Path

import pytest

from mapperopt.descriptions import AppDescription, DescriptionError, MachineDescription, parse_machine_spec

EXAMPLES = Path(__file__).parent / "examples"

CONFIGS = EXAMPLES.parent.parent.parent / "configs"


def test_parse_machine_spec_2x4():
    m = parse_machine_spec("2x4")
    assert (m.nodes, m.count("GPU"), m.count("CPU"), m.count("GPU", 1), m.count("OMP")) == (2, 4, 1, 4, 0)
    assert [(x.kind, x.node) for x in m.memories if x.node == 1] == [
        ("SYSMEM", 1), ("FBMEM", 1), ("FBMEM", 1), ("FBMEM", 1), ("FBMEM", 1), ("ZCMEM", 1)]
    assert [x.kind for x in m.visible("FBMEM", "GPU", 1, 2)] == ["FBMEM"]
    assert m.visible("FBMEM", "GPU", 1, 2)[0].procs == (("GPU", (2,)),)
    assert m.visible("FBMEM", "CPU", 0, 0) == []
    assert m.visible("SYSMEM", "GPU", 0, 3) and m.visible("ZCMEM", "CPU", 0, 0)
    assert m.counts() == "2 nodes of 1 CPU and 4 GPUs each"


def test_counts_name_the_io_omp_and_python_processors_a_run_creates():
    """A machine probed with `-ll:io 2` has IO processors: its summary says so ("1 node of 1 CPU and 2 IO"), not
    "1 node of 1 CPU"; utility processors are not counted."""
    m = MachineDescription(1, (("CPU", (1,)), ("UTIL", (1,)), ("IO", (2,))))
    assert m.counts() == "1 node of 1 CPU and 2 IO"
    m = MachineDescription(2, (("CPU", (2, 2)), ("GPU", (4, 4)), ("OMP", (1, 1)), ("PY", (1, 1))))
    assert m.counts() == "2 nodes of 2 CPUs, 4 GPUs, 1 OMP and 1 PY each"


def test_parse_machine_spec_cpu_only():
    m = parse_machine_spec("1x0x4")
    assert (m.nodes, m.count("GPU"), m.count("CPU")) == (1, 0, 4)
    assert [x.kind for x in m.memories] == ["SYSMEM"]
    assert m.memories[0].procs == (("CPU", (0, 1, 2, 3)),)


@pytest.mark.parametrize("spec", ["", "2", "2x", "x4", "2x4x0", "0x4", "2*4", "1x2x3x4"])
def test_parse_machine_spec_rejects(spec):
    with pytest.raises(DescriptionError):
        parse_machine_spec(spec)


def test_machine_json_round_trip():
    m = parse_machine_spec("2x2x3")
    data = m.to_json()
    assert data["schema"] == "mapperopt.machine/1"
    assert data["processors"]["GPU"] == [2, 2]
    assert MachineDescription.from_json(json.dumps(data)) == m
    probe_style = {"schema": "mapperopt.machine/1", "nodes": 1,
                   "processors": {"CPU": [2], "GPU": [2], "UTIL": [1], "IO": [0], "PY": [0], "OMP": [0]},
                   "memories": [{"kind": "SYSMEM", "node": 0, "capacity": 536870912, "procs": {"CPU": [0, 1]}}]}
    m = MachineDescription.from_json(probe_style)
    assert m.count("CPU") == 2 and m.memories[0].visible_from("CPU", 1)


def test_machine_description_errors():
    with pytest.raises(DescriptionError, match="schema"):
        MachineDescription.from_json({"schema": "other/1", "nodes": 1, "processors": {}})
    with pytest.raises(DescriptionError, match="lists 2 nodes"):
        MachineDescription.from_json({"nodes": 1, "processors": {"CPU": [1, 1]}})
    with pytest.raises(DescriptionError, match="different numbers of GPU"):
        MachineDescription(2, (("GPU", (1, 2)),)).per_node("GPU")
    with pytest.raises(DescriptionError, match="not valid JSON"):
        MachineDescription.from_json("{")


@pytest.mark.parametrize("name,tasks,domain", [
    ("circuit", ["init_piece", "init_pointers", "calculate_new_currents", "distribute_charge", "update_voltages",
                 "check_circuit"], (2,)),
    ("stencil", ["init_tile", "stencil", "increment", "check"], (4,)),
])
def test_config_descriptions(name, tasks, domain):
    text = (CONFIGS / f"{name}.app.json").read_text()
    app = AppDescription.from_json(text)
    assert app.app == name and list(app.task_names) == tasks
    assert {t.domain for t in app.tasks if t.index_launched} == {domain}
    assert AppDescription.from_json(app.to_json()) == app
    assert app.to_json() == json.loads(text)


def test_circuit_requirement_table():
    app = AppDescription.from_json((CONFIGS / "circuit.app.json").read_text())
    cnc = app.task("calculate_new_currents")
    assert [r.name for r in cnc.regions] == ["rp_private", "rp_shared", "rp_ghost", "rp_wires", "rp_wires"]
    assert [r.privilege for r in cnc.regions] == ["read_only"] * 4 + ["read_write"]
    assert cnc.regions[1].names == ("rp_shared", "all_shared", "rp_all_nodes", "all_nodes")
    dc = app.task("distribute_charge")
    assert [(r.privilege, r.redop) for r in dc.regions[1:3]] == [("reduce", "sum_f32")] * 2
    assert app.task("check_circuit").launch == "single" and app.task("check_circuit").domain is None
    assert app.task("init_piece").variants == ("CPU",)
    assert "rp_all_nodes" in app.region_names


def test_stencil_requirement_table():
    app = AppDescription.from_json((CONFIGS / "stencil.app.json").read_text())
    st = app.task("stencil")
    assert [r.names for r in st.regions] == [("private", "points"), ("pxm_in", "xm"), ("pxp_in", "xp"),
                                             ("pym_in", "ym"), ("pyp_in", "yp")]
    assert [r.name for r in app.task("increment").regions[1:]] == ["pxm_out", "pxp_out", "pym_out", "pyp_out"]


def test_app_description_errors():
    with pytest.raises(DescriptionError, match="schema"):
        AppDescription.from_json({"schema": "mapperopt.app/2", "app": "x", "tasks": []})
    bad_launch = {"schema": "mapperopt.app/1", "app": "x", "tasks": [{"name": "t", "variants": [], "launch": "both2"}]}
    with pytest.raises(DescriptionError, match="launch"):
        AppDescription.from_json(bad_launch)
    bad_priv = {"schema": "mapperopt.app/1", "app": "x", "tasks": [
        {"name": "t", "variants": ["CPU"], "launch": "single", "regions": [{"names": [], "privilege": "rw"}]}]}
    with pytest.raises(DescriptionError, match="privilege"):
        AppDescription.from_json(bad_priv)


@pytest.mark.parametrize("spec", ["99999999999x1", "100000000x1", "1x2000000", "1x0x2000000", "2000000node"])
def test_parse_machine_spec_refuses_more_than_2_20_processors_of_a_kind_at_once(spec):
    """An absurd count is refused at parse, with the stated limit (2^20 processors of one kind, dsl-reference.md §13),
    before a memory of every node is built."""
    with pytest.raises(DescriptionError, match=r"at most 1048576 processors of one kind"):
        parse_machine_spec(spec)
    m = parse_machine_spec("1024x1024")  # exactly at the limit
    assert m.nodes * m.count("GPU") == 2**20


@pytest.mark.parametrize("value, mib", [("64", 64), ("80G", 80 << 10), ("1g", 1 << 10), ("512m", 512),
                                        ("2GB", 2 << 10), ("1.5g", 1536), ("1t", 1 << 20), ("1048576k", 1024)])
def test_machine_memory_flags_take_realm_units(value, mib):
    """Realm's sizes: a number of MiB, or with a unit (k, m, g, t, an optional trailing b; any case), as a run takes
    them without --machine."""
    m = parse_machine_spec("1x1", ["-ll:fsize", value])
    assert m.memories_of("FBMEM")[0].capacity == mib << 20


@pytest.mark.parametrize("value", ["80X", "", "g", "-1", "1gg"])
def test_machine_memory_flag_bad_size_says_what_a_size_is(value):
    with pytest.raises(DescriptionError) as info:
        parse_machine_spec("1x1", ["-ll:fsize", value])
    assert "-ll:fsize" in info.value.message and "80G" in (info.value.hint or "")
    assert "--machine" not in (info.value.hint or "")  # no hint about the machine's forms: the machine was fine


@pytest.mark.parametrize("flags, word", [(["-ll:gpu", "8"], "-ll:gpu 8"), (["-ll:cpu", "2"], "-ll:cpu 2")])
def test_machine_refuses_processor_flags_that_contradict_it(flags, word):
    """--machine gives the processor counts; a run flag after `--` that says otherwise is refused, one that agrees
    is taken."""
    with pytest.raises(DescriptionError, match=f"{word}.*contradicts --machine 4x4x32"):
        parse_machine_spec("4x4x32", flags)
    assert parse_machine_spec("4x4x32", ["-ll:gpu", "4", "-ll:cpu", "32"]).count("GPU") == 4


def test_machine_spec_error_names_both_forms():
    """`4x4x32c` mixes the forms: the error says what each takes, so that `4x4x32` or `4n4g32c` follows."""
    with pytest.raises(DescriptionError) as info:
        parse_machine_spec("4x4x32c")
    text = info.value.message + " " + (info.value.hint or "")
    assert "numbers only" in text and "4n4g32c" in text and "4x4x32" in text


@pytest.mark.parametrize("spec,unit", [("2node,4gpu,2omp", "OMP"), ("4util", "UTIL"), ("1n2io", "IO"),
                                       ("2x4,1py", "PY")])
def test_machine_spec_names_the_processor_kinds_it_cannot_describe(spec, unit):
    """An OMP, IO, PY or UTIL count got the bare 'neither of the form' error, though the E205 hint for those kinds
    points at --machine: the error says --machine describes nodes, GPUs and CPUs only, and how those processors come."""
    with pytest.raises(DescriptionError) as info:
        parse_machine_spec(spec)
    message = info.value.message
    assert f"--machine describes nodes, GPUs and CPUs only, not {unit} processors" in message, message
    if unit == "UTIL":
        assert "every node has one UTIL processor" in message, message
    elif unit == "OMP":
        assert "mapperopt's Legion has no OpenMP processors" in message, message
    else:
        assert f"-ll:{unit.lower()}" in message, message
