"""AutoGuide's "move the heavy task to the GPU" edit, applied by the guided search, leaves a mapper that passes
check: a task moved to the GPU is taken out of the IndexTaskMap statements whose function returns CPUs (they would
fail with E209), as the H200 evaluation of Pennant found (two of ten iterations lost)."""

from __future__ import annotations

from mapperopt.benchmarks import load_config
from mapperopt.descriptions import AppDescription, parse_machine_spec
from mapperopt.dsl.checker import check
from mapperopt.dsl.parser import parse
from mapperopt.optimizer.base import IterationRecord
from mapperopt.optimizer.guided import GuidedOptimizer
from mapperopt.optimizer.space import SearchSpace

START = """\
Task * CPU;
mcpu = Machine(CPU);
mgpu = Machine(GPU);
def block_cpu1d(Task task) {  # block over all processors
    q = task.ipoint[0] * mcpu.volume / task.ispace[0];
    return mcpu[q / mcpu.size[1], q % mcpu.size[1]];
}
def cyclic_gpu1d(Task task) {  # round-robin over the GPUs
    return mgpu[0, task.ipoint[0] % mgpu.size[1]];
}
IndexTaskMap calc_centers,qcs_vel_diff block_cpu1d;
IndexTaskMap qcs_corner_divergence block_cpu1d;  # all its tasks move
IndexTaskMap qcs_force cyclic_gpu1d;
Task qcs_force GPU;
"""


def test_moving_heavy_tasks_to_the_gpu_takes_them_out_of_cpu_index_maps():
    description = load_config("pennant").stored_description()
    machine = parse_machine_spec("1x1x2")  # the H200 evaluation's machine: one GPU, two CPUs
    app = AppDescription.from_json(description)
    assert [d for d in check(parse(START), app, machine) if d.is_error] == []
    search = GuidedOptimizer(SearchSpace(description, machine), START)
    # The performance feedback of a run where both tasks are heavy on the CPU (autoguide/explain.py).
    edits = [{"op": "set_task_kinds", "task": t, "kinds": ["GPU", "CPU"]}
             for t in ("qcs_vel_diff", "qcs_corner_divergence")]
    first = IterationRecord(iter=1, dsl=START, key="1", status="ok", stage=None, category="performance",
                            throughput=1.0, unit="zone-cycles/s", best_throughput=1.0, best_iter=1,
                            feedback={"category": "performance", "edits": edits})
    search.observe(first)
    proposal = search.propose([first])
    assert [d for d in check(parse(proposal.dsl), app, machine) if d.is_error] == [], proposal.dsl
    # The note says what happened to the maps.
    assert proposal.note == (
        "AutoGuide edits (set_task_kinds) on iteration 1's program; took qcs_vel_diff out of the IndexTaskMap "
        "statement of block_cpu1d (its processors are CPUs); dropped IndexTaskMap qcs_corner_divergence block_cpu1d "
        "(its processors are CPUs)")
    assert "Task qcs_vel_diff GPU,CPU;" in proposal.dsl and "Task qcs_corner_divergence GPU,CPU;" in proposal.dsl
    # calc_centers keeps its map, qcs_force (a GPU map) is untouched, and the emptied statement is dropped.
    assert "IndexTaskMap calc_centers block_cpu1d;" in proposal.dsl
    assert "IndexTaskMap qcs_force cyclic_gpu1d;" in proposal.dsl
    assert "qcs_corner_divergence block_cpu1d" not in proposal.dsl
