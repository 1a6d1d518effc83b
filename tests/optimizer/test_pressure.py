"""Under memory pressure the guided search reaches the placement that keeps what fits in the framebuffer and spills
only the rest: the start program fails with a full framebuffer, AutoGuide's edit makes every region framebuffer-first
with zero-copy memory as the fallback, and the search goes on from that point without losing the fallback."""

from __future__ import annotations

import pytest

from mapperopt.autoguide import explain
from mapperopt.benchmarks import load_config
from mapperopt.benchmarks.apps import _config_text
from mapperopt.descriptions import AppDescription, parse_machine_spec
from mapperopt.dsl.checker import check
from mapperopt.dsl.evaluator import Evaluator
from mapperopt.dsl.parser import parse
from mapperopt.optimizer.base import IterationRecord
from mapperopt.optimizer.guided import GuidedOptimizer
from mapperopt.optimizer.space import SearchSpace
from mapperopt.records import RunResult

# What the compiled DSL mapper prints when the framebuffer is full (no GPU runs in CI).
FULL = ("[mapperopt] error R403: no memory of the list FBMEM can hold requirement 0 (private, points) of task "
        "'init_tile': FBMEM: allocation of 118226944 bytes failed (capacity 805306368 bytes; -ll:fsize sizes it); "
        "processor GPU[node 0, proc 0]")
COMMAND = "stencil -nx 7504 -ny 7504 -ll:gpu 1 -ll:csize 2048 -ll:fsize 768 -ll:zsize 1536 -logfile stderr"


def record(i: int, dsl: str, throughput: float | None, feedback: dict, best_iter: int | None) -> IterationRecord:
    return IterationRecord(iter=i, dsl=dsl, key=str(i), status="ok" if throughput else "failed",
                           stage=None if throughput else "run", category=feedback["category"],
                           throughput=throughput, unit="GFLOPS", best_throughput=100.0 if best_iter else 0.0,
                           best_iter=best_iter, feedback=feedback)


def test_guided_search_keeps_the_framebuffer_first_fallback_after_a_full_framebuffer():
    space = SearchSpace(load_config("stencil").stored_description(), parse_machine_spec("1x1x2"))
    start = space.render(space.default_point())
    search = GuidedOptimizer(space, start)
    failed = RunResult(app="stencil", mapper="start.dsl", status="failed", stage="run", reason="aborted", dsl=start,
                       log=FULL + "\n", settings={"gpus": 1, "command": COMMAND})
    history = [record(1, start, None, explain(failed).to_json(), None)]
    spill = search.propose(history).dsl
    assert "Region * * GPU FBMEM,ZCMEM;" in spill
    history.append(record(2, spill, 100.0, {"category": "performance", "edits": []}, 2))
    search.observe(history[-1])
    gpu = [d.name for d in space.decisions if d.group == "memory" and d.name.endswith("/GPU")]
    for i in range(3, 8):  # slower neighbours, each changing at most one requirement's memory; the rest spill alike
        proposal = search.propose(history).dsl
        point = space.project(proposal)
        assert sum(point[n] != ("FBMEM", "ZCMEM") for n in gpu) <= 1, proposal
        history.append(record(i, proposal, 50.0, {"category": "performance", "edits": []}, 2))
        search.observe(history[-1])


@pytest.mark.parametrize("app", ["circuit", "stencil"])
def test_the_all_zero_copy_reference_puts_every_gpu_requirement_in_zero_copy_memory(app):
    """configs/<app>-zerocopy.dsl, the reference of the tight size, checks cleanly and spills everything."""
    machine = parse_machine_spec("1x1x2")
    description = AppDescription.from_json(load_config(app).stored_description())
    program = parse(_config_text(f"{app}-zerocopy.dsl", "the all-zero-copy mapper"))
    assert [d for d in check(program, description, machine) if d.is_error] == []
    evaluator = Evaluator(program, machine, description)
    gpu_tasks = [t for t in description.tasks if "GPU" in t.variants]
    assert gpu_tasks
    for task in gpu_tasks:
        decision = evaluator.decide(task.name, (0,), tuple(task.domain) if task.domain else None)
        assert decision["proc"]["kind"] == "GPU"
        assert {r["memory"] for r in decision["regions"]} == {"ZCMEM"}, task.name


def test_tune_raises_a_memory_size_that_no_placement_can_avoid(tmp_path, monkeypatch):
    """On CPUs only, a system memory too small for the problem fails every mapper; AutoGuide's size edit is applied
    by `tune`, the next iteration runs with it, and the stored settings (resume, final comparison) keep it."""
    from mapperopt.cli import main
    from mapperopt.optimizer.store import TuneStore

    for var in ("MAPPEROPT_LLM_BASE_URL", "MAPPEROPT_LLM_MODEL", "MAPPEROPT_LLM_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    runs = tmp_path / "runs"
    args = ["tune", "stencil", "--cpus", "1", "--csize", "8", "--iters", "2", "--baseline", "none", "--runs-dir",
            str(runs), "--min-time", "0.05", "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1",
            "--", "-nx", "1004", "-ny", "1004"]
    assert main(args) == 0
    (root,) = (runs / "stencil").iterdir()
    store = TuneStore.open(root)
    first, second = store.records
    assert first.status == "failed" and first.category in ("memory.placement", "memory.oom")
    raised = store.settings["memory"]["csize"]
    assert raised > 8 and {"op": "set_memory_size", "option": "csize", "mb": raised} in first.feedback["edits"]
    assert second.ok, second.feedback_text
    assert f"-ll:csize {raised} " in second.result["settings"]["command"]
