"""Moves that can change the mapping on this machine, the timed loop's tasks first; no layout the kernels
rejected is proposed again."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from mapperopt.autoguide import explain, feedback_text
from mapperopt.descriptions import parse_machine_spec
from mapperopt.optimizer.base import make_optimizer
from mapperopt.optimizer.loop import Evaluation, tune
from mapperopt.optimizer.space import SearchSpace
from mapperopt.optimizer.store import TuneStore
from mapperopt.records import RunResult

pytestmark = pytest.mark.usefixtures("unplotted")  # conftest.py: why

STRIDE = "stencil: stencil.cc:120: Assertion failed: stride does not match expected value\n"


def test_on_one_cpu_every_neighbour_changes_what_the_mapper_decides(circuit_app):
    space = SearchSpace(circuit_app, parse_machine_spec("1x0x1"))
    rng = random.Random(3)
    for point in [space.default_point(), *(space.random_point(rng) for _ in range(5))]:
        moves = list(space.neighbours(point, rng=rng))
        assert moves
        # Nothing to place (one processor) and nothing to choose (one memory kind, one processor kind).
        assert not [m for m in moves if any(n.split("/")[0] in ("index_map", "single_map", "memory", "kinds")
                                            for n in m.changes)]
        here = space.render(point)
        assert not [m.label for m in moves if space.same_mapping(here, space.render(space.apply(point, m)))]


def test_tasks_outside_the_timed_loop_come_after_every_move_of_the_loops_tasks(circuit_app):
    space = SearchSpace(circuit_app, parse_machine_spec("1x0x2"))
    weights = {"calculate_new_currents": 2.0, "distribute_charge": 1.0, "update_voltages": 0.5, "init_piece": 0.0}
    labels = [m.label for m in space.neighbours(space.default_point(), weights=weights)]
    singles = [lb for lb in labels if "/" in lb.split(" = ")[0]]
    first_cold = next(i for i, lb in enumerate(singles) if "init_p" in lb or "check_circuit" in lb)
    assert all("init_p" in lb or "check_circuit" in lb or lb.startswith("layout/") for lb in singles[first_cold:])
    assert singles[0].startswith("index_map/calculate_new_currents")


class _StrideKernel:
    """A stand-in application whose kernels reject a C-ordered layout (the stencil's CPU kernel does) and run
    faster with 64-byte alignment, so that the search moves away from where the rejection happened."""

    settings = {"model": "stride", "version": 1}

    def evaluate(self, dsl: str, out_dir: Path, best) -> Evaluation:
        base = {"app": "circuit", "mapper": "inline", "dsl": dsl, "run_dir": str(out_dir), "settings": {"cpus": 2}}
        if "C_order" in dsl:
            result = RunResult(status="failed", stage="run", reason="exit -6", log=STRIDE, **base)
        else:
            speed = 2.0 if "Align==64" in dsl else 1.0
            result = RunResult(status="ok", throughput=speed, trimmed_mean=speed, unit="GFLOPS", **base)
        feedback = explain(result)
        return Evaluation(result, feedback, feedback_text(feedback, result))


def test_a_layout_the_kernels_rejected_is_not_proposed_again(tmp_path, circuit_app):
    space = SearchSpace(circuit_app, parse_machine_spec("1x0x1"))  # layouts are among the first moves
    point = {**space.default_point(), "layout/order": "C_order"}
    store = TuneStore.create(tmp_path, "circuit", {"optimizer": "guided"})
    tune(store, make_optimizer("guided", space=space, start=space.render(point)), _StrideKernel(), 8)
    assert store.records[0].category == "layout.stride"
    assert "Align==64" in store.best().dsl  # C_order next to it is a new mapping, and still not proposed
    assert not [r.iter for r in store.records[1:] if "C_order" in r.dsl]


def test_a_layout_value_that_worked_is_not_rejected_with_a_failing_neighbour(tmp_path, circuit_app):
    # The start (Align==64) is the best; its neighbour with C_order fails. Only C_order is the culprit: Align==64 ran,
    # so the best's other neighbours (which keep Align==64) are still proposed, not random restarts.
    space = SearchSpace(circuit_app, parse_machine_spec("1x0x1"))
    store = TuneStore.create(tmp_path, "circuit", {"optimizer": "guided"})
    start = space.render({**space.default_point(), "layout/align": 64})
    tune(store, make_optimizer("guided", space=space, start=start, seed=1), _StrideKernel(), 10)
    failed = [r.iter for r in store.records if r.category == "layout.stride"]
    assert failed and failed[0] < 10 and "Align==64" in store.records[failed[0] - 1].dsl
    notes = [r.note for r in store.records[failed[0]:]]
    assert notes and all(n.startswith("neighbour of the best, iteration 1") for n in notes), notes
