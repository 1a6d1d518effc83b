"""Every benchmark and mapper on any processor count, not only one or two (docs/running.md, "On N GPUs of one
node"): the expert mappers' index maps evaluated on machines of 1-8 GPUs and 2 x 4 GPUs, the index-mapping library
on 3, 8 and 2 x 4 (each point on a processor of the machine; the experts' GPU launches on min(points, processors)
GPUs with at most ceil(points / processors) points each), launch domains that follow the processor count, and real
ci-size runs on 3 and 4 CPUs standing in for GPUs, whose checks pass and whose compiled placements match the
evaluator's."""

from __future__ import annotations

import itertools
import json
import math
import re

import pytest

from mapperopt import toolchain
from mapperopt.benchmarks import describe_app, known_benchmarks, load_config, run_benchmark
from mapperopt.descriptions import parse_machine_spec
from mapperopt.dsl.commands import load_app
from mapperopt.dsl.evaluator import Evaluator
from mapperopt.dsl.parser import parse
from mapperopt.optimizer.space import INDEX_PATTERNS, SearchSpace

APPS = ["cannon", "circuit", "cosma", "johnson", "pennant", "pumma", "solomonik", "stencil", "summa"]
SHAPES = ["1x1", "1x2", "1x3", "1x4", "1x5", "1x6", "1x7", "1x8", "2x4"]
# Launch domains tried besides each task's own at ci size: per rank, shapes that do and do not divide evenly.
DOMAINS = {1: [(1,), (3,), (20,)], 2: [(4, 4), (6, 4)], 3: [(2, 2, 2), (3, 3, 2)]}
# The experts' placement of the input tiles (the GEMM papers' own): round-robin over a linearisation that is not
# dense on every face, so it is checked for range only.
UNBALANCED_BY_DESIGN = {"place_faces", "place_grid"}
# Library patterns that spread points evenly by construction (the others group points by design).
BALANCED_PATTERNS = {"block", "cyclic", "cyclic_linear", "block_colmajor"}


def index_maps(dsl: str, tasks) -> dict[str, str]:
    """Task -> the function its IndexTaskMap names (a later statement wins, as in the DSL)."""
    out = {}
    for names, fn in re.findall(r"^IndexTaskMap ([\w,*]+) (\w+);", dsl, re.M):
        out.update(dict.fromkeys(tasks if names == "*" else names.split(","), fn))
    return out


def check_spread(placed: list, machine, kind: str, balanced: bool, what: str) -> None:
    procs = [(p.kind, p.node, p.index) for p in placed]
    total = machine.nodes * machine.count(kind, 0)
    assert all(k == kind and 0 <= n < machine.nodes and 0 <= i < machine.count(kind, 0) for k, n, i in procs), what
    if balanced:
        loads = [procs.count(p) for p in set(procs)]
        assert len(loads) == min(len(procs), total), f"{what}: {len(loads)} of {total} processors used"
        assert max(loads) == math.ceil(len(procs) / total), f"{what}: up to {max(loads)} points on one"


def test_every_benchmark_is_audited():
    assert sorted(known_benchmarks()) == APPS


@pytest.mark.parametrize("app", APPS)
def test_expert_index_maps_spread_over_any_gpu_count(app):
    cfg = load_config(app)
    dsl = cfg.expert_dsl()
    program, desc = parse(dsl, cfg.expert), load_app(app)
    maps = index_maps(dsl, [t.name for t in desc.tasks])
    # One task per function and domain rank: the tasks a function maps are placed alike.
    tasks = {(maps[t.name], len(t.domain)): t for t in desc.tasks
             if t.index_launched and "GPU" in t.variants and t.name in maps}
    assert tasks
    for shape in SHAPES:
        machine = parse_machine_spec(shape)
        ev = Evaluator(program, machine, desc)
        for (fn, _), task in tasks.items():
            for domain in {tuple(task.domain), *DOMAINS[len(task.domain)]}:
                points = itertools.product(*(range(d) for d in domain))
                placed = [ev.place(task.name, p, domain) for p in points]
                check_spread(placed, machine, "GPU", fn not in UNBALANCED_BY_DESIGN,
                             f"{app} {task.name} ({fn}) on {shape} over {domain}")


@pytest.mark.parametrize("cpus, gpus", [(2, 1), (2, 4), (3, 0)])
def test_launch_domains_follow_the_processor_count(cpus, gpus):
    """`{procs}` in a size's arguments and COSMA's grid give launches for the run's processors (GPUs, else CPUs)."""
    procs = gpus or cpus
    assert load_config("pennant").size("gpu").app_args(cpus, gpus)["-npieces"] == str(procs)
    domains = {t["name"]: t["domain"] for t in describe_app("pennant", "gpu", cpus, gpus)["tasks"]}
    assert domains["calc_centers"] == [procs]
    domains = {t["name"]: t["domain"] for t in describe_app("stencil", "gpu", cpus, gpus)["tasks"]}
    assert domains["stencil"] == [2 * procs]
    cosma = {t["name"]: t["domain"] for t in describe_app("cosma", "ci", cpus, gpus)["tasks"]}
    assert math.prod(cosma["task_4"]) == procs  # COSMA's grid for that many processors (ci sets no -procs)


# Stencil's `stencil` task on processor i of node 0 for launch point i: in range on two processors for the gpu
# size's one GPU ({procs} = 1: two tiles), out of range for three ({procs} = 3: six tiles).
POINT_PER_PROCESSOR = """Task * GPU,CPU;
m = Machine(KIND);
def f(Task task) { return m[0, task.ipoint[0]]; }
IndexTaskMap stencil f;
"""


@pytest.mark.parametrize("counts", [("-ll:gpu", "3"), ("-ll:cpu", "3", "-ll:gpu", "0")])
def test_check_and_explain_take_the_processor_counts_after_the_double_dash(counts, tmp_path, capsys):
    """`-- -ll:gpu N` (`-ll:cpu N` with no GPU) is the run's processor count, `{procs}` in the size's arguments:
    check and explain took the size's count for the launch domains, while run, tune and compare took N. With
    --machine, the machine gives the counts: a flag that agrees with it is taken, one that contradicts it refused."""
    from mapperopt.cli import main

    mapper = tmp_path / "m.dsl"
    mapper.write_text(POINT_PER_PROCESSOR.replace("KIND", "GPU" if counts[0] == "-ll:gpu" else "CPU"))
    def machine(n: int) -> list[str]:
        return ["--machine", f"1x{n}" if counts[0] == "-ll:gpu" else f"1x0x{n}"]

    domains = {t["name"]: t["domain"] for t in describe_app("stencil", "gpu", extra_args=counts)["tasks"]}
    assert domains["stencil"] == [6]
    size = ["--bench", "stencil", "--size", "gpu"]
    assert main(["check", str(mapper), *size, "--", *counts]) in (0, 1)  # this machine (probed, if it can be)
    assert "launch domains: those of `mapperopt run stencil --size gpu -- " in capsys.readouterr().err
    anywhere = tmp_path / "any.dsl"
    anywhere.write_text("Task * CPU;\n")
    for flags in (counts, ()):
        assert main(["explain", str(anywhere), *size, *machine(3), "--json", "--", *flags]) == 0
        points = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert len([p for p in points if p["task"] == "stencil" and "balance" not in p]) == 6
    assert main(["check", str(mapper), *size, *machine(3)]) == 1  # six tiles on three processors: 3-5 fail
    assert "launch domain (6,)" in capsys.readouterr().out
    assert main(["check", str(mapper), *size, *machine(2), "--", *counts]) == 2  # a usage error
    assert f"`{counts[0]} {counts[1]}` after `--` contradicts --machine" in capsys.readouterr().err


@pytest.mark.parametrize("spec, total", [("4x4x32", 16), ("2x0x3", 6)])
def test_launch_domains_follow_the_machine_option(spec, total, tmp_path, capsys):
    """{procs} in a size's arguments is the processors of the machine --machine describes, in all (its GPUs, else
    its CPUs): stencil's gpu size launches 2 tiles per GPU, so 2 x 16 on 4 nodes of 4 GPUs; it gave 2 (one node's
    size count)."""
    from mapperopt.cli import main

    mapper = tmp_path / "m.dsl"
    mapper.write_text("Task * CPU;\n")
    assert main(["explain", str(mapper), "--bench", "stencil", "--size", "gpu", "--machine", spec, "--json"]) == 0
    points = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len([p for p in points if p["task"] == "stencil" and "balance" not in p]) == 2 * total
    assert main(["check", str(mapper), "--bench", "stencil", "--size", "gpu", "--machine", spec]) == 0
    kind = "GPUs" if spec == "4x4x32" else "CPUs"
    assert f"launch domains: those of `mapperopt run stencil --size gpu` on the {total} {kind} of --machine" \
        in capsys.readouterr().err


@pytest.mark.skipif(toolchain.has_cuda_driver(), reason="the refusal of GPUs is that of a machine without any")
def test_check_probes_the_gpus_after_the_double_dash(tmp_path, capsys):
    """`-- -ll:gpu 1` on a size without GPUs: the run asks for a GPU, but check probed the machine without one (the
    size's count) and checked the mapper against that."""
    from mapperopt.cli import main

    mapper = tmp_path / "m.dsl"
    mapper.write_text("Task * GPU,CPU;\n")
    assert main(["check", str(mapper), "--bench", "circuit", "--", "-ll:gpu", "1"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "this machine could not be probed: no GPU on this machine: `-ll:gpu 1` after `--` asks for 1 GPU" in err, err

# Odd, the most GPUs, and more nodes than some launch extents (a node grid larger than the launch).
@pytest.mark.parametrize("shape", ["1x3", "1x8", "2x4"])
def test_index_mapping_library_stays_in_range(shape):
    machine = parse_machine_spec(shape)
    space = SearchSpace(load_app("stencil"), machine)
    for pattern, dims in itertools.product(INDEX_PATTERNS, DOMAINS):
        for domain in DOMAINS[dims]:
            placed = space._library_placements(pattern, "GPU", domain, "index_map")
            assert len(placed) == math.prod(domain), f"{pattern} fails on {shape} over {domain}"
            check_spread(placed, machine, "GPU", pattern in BALANCED_PATTERNS, f"{pattern} on {shape} over {domain}")


# Odd and even counts; the expert on 3 CPUs takes the GEMM experts' path for grids that do not divide. The GEMM
# tests run Legion's default mapper on 1, 2, 4 and 8 CPUs already.
@pytest.mark.parametrize("app, mapper, cpus", [*[(app, "expert", 3) for app in APPS],
                                               *[(app, "default", 4) for app in ("circuit", "pennant", "stencil")]])
def test_ci_size_on_several_cpus(app, mapper, cpus, tmp_path):
    result = run_benchmark(app, mapper, cpus=cpus, min_time_s=0, trace=mapper == "expert", out_dir=tmp_path)
    assert result.ok, f"{result.stage}: {result.reason}\n{result.log[-3000:]}"
    assert result.attempts[-1].result["verified"] is True
    if mapper == "default":
        return
    # The compiled mapper places every point where the evaluator says, on this machine and the launch domains of
    # this run (COSMA's grid follows the processor count).
    cfg = load_config(app)
    machine = parse_machine_spec(f"1x0x{cpus}")
    ev = Evaluator(parse(cfg.expert_dsl(), cfg.expert), machine, load_app(app))
    maps = index_maps(cfg.expert_dsl(), [t.name for t in load_app(app).tasks])
    launches: dict[tuple, list] = {}
    for rec in map(json.loads, (tmp_path / "trace.jsonl").read_text().splitlines()):
        if rec["point"] is None:
            continue
        expected = ev.decide(rec["task"], tuple(rec["point"]), tuple(rec["domain"]))["proc"]
        if rec["placed_by"] == "default":  # Legion's default mapping's pick, which the evaluator leaves open
            expected = {**expected, "node": rec["proc"]["node"], "index": rec["proc"]["index"]}
        assert rec["proc"] == expected, rec
        launches.setdefault((rec["task"], tuple(rec["domain"])), []).append(ev.place(rec["task"], rec["point"],
                                                                                    tuple(rec["domain"])))
    spread = [(task, domain) for task, domain in launches
              if maps.get(task) and maps[task] not in UNBALANCED_BY_DESIGN and "cpu" not in maps[task]]
    assert spread, f"no index launch of {app} placed by the expert"
    for task, domain in spread:
        placed = launches[(task, domain)][:math.prod(domain)]
        check_spread(placed, machine, "CPU", True, f"{app} {task} over {domain}")


@pytest.mark.parametrize("app, mapper, extra", [("cannon", "gemm2d.dsl", ["--size", "small"]),
                                                ("solomonik", "solomonik.dsl", ["--", "-n", "512"])])
def test_machine_with_gpus_keeps_the_gpu_variants_of_a_build_without_cuda(app, mapper, extra, capsys):
    """At a size other than ci (or with a run's flags) the application describes itself, and a build without CUDA
    (no cuBLAS here) registers no GPU variant: the GEMM experts then failed check on --machine 4x4x32 with E209
    ('taco_fill' runs on CPU), while they pass at size ci. The variants are the committed description's (a CUDA
    build's), and check says so."""
    from mapperopt.cli import main

    config = str(load_config(app).expert_path.with_name(mapper))
    assert main(["check", config, "--bench", app, "--machine", "4x4x32", *extra]) == 0, capsys.readouterr()
    err = capsys.readouterr().err
    local = describe_app(app, "small" if "small" in extra else "ci", extra_args=tuple(extra[1:]) if "--" in extra
                         else ())
    cuda_build = any("GPU" in t["variants"] for t in local["tasks"])
    assert (f"this build of {app} has no CUDA" in err) == (not cuda_build), err


def test_check_says_what_this_legion_build_supports(tmp_path, capsys):
    """`-- -ll:py 2` aborts Realm with this Legion build: check's note says what the build supports and how to
    change the flags, not only to give --machine."""
    from mapperopt.cli import main

    mapper = tmp_path / "m.dsl"
    mapper.write_text("Task * CPU;\n")
    assert main(["check", str(mapper), "--bench", "circuit", "--", "-ll:py", "2"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "this Legion build supports at most one Python processor per node" in err, err
    assert "give `-ll:py 1`" in err and "give --machine" not in err, err
