"""Guided search from random starts: the start's statements that no run needs (memory-pressure remedies) and
those that break the kernels go first, and a failed start's first repair is a working mapper without them."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mapperopt.cli import main
from mapperopt.descriptions import parse_machine_spec
from mapperopt.optimizer.base import IterationRecord
from mapperopt.optimizer.commands import start_program
from mapperopt.optimizer.guided import GuidedOptimizer
from mapperopt.optimizer.space import SearchSpace
from mapperopt.optimizer.store import TuneStore

REMEDIES = ("InstanceLimit", "CollectMemory")


def record(i: int, dsl: str, ok: bool, category: str = "performance", throughput: float = 1.0) -> IterationRecord:
    return IterationRecord(iter=i, dsl=dsl, key=str(i), status="ok" if ok else "failed",
                           stage=None if ok else "run", category=category if not ok else "performance",
                           throughput=throughput if ok else None, unit="GFLOPS", best_throughput=0.0,
                           best_iter=i if ok else None, feedback={"category": category, "edits": []})


def test_the_start_loses_its_memory_pressure_remedies_before_any_single_decision_moves(circuit_app):
    space = SearchSpace(circuit_app, parse_machine_spec("1x0x1"))
    for seed in range(5):
        start, point = start_program("random", space, seed)
        search = GuidedOptimizer(space, start, seed=seed, start_point=point)
        history = [record(1, start, True)]
        search.observe(history[0])
        proposal = search.propose(history)
        if not any(word in start for word in REMEDIES):
            continue
        assert not any(word in proposal.dsl for word in REMEDIES), (seed, proposal.dsl)
        assert "memory-pressure remedies" in proposal.note
        # Only the remedies changed: the layout stays the start's.
        layout = [line for line in start.splitlines() if line.startswith("Layout")]
        assert layout == [line for line in proposal.dsl.splitlines() if line.startswith("Layout")]


def test_after_running_out_of_memory_the_remedies_stay(circuit_app):
    space = SearchSpace(circuit_app, parse_machine_spec("1x0x1"))
    point = {**space.default_point(), "limit/calculate_new_currents": 1, "collect/update_voltages": True}
    start = space.render(point)
    search = GuidedOptimizer(space, start, start_point=point)
    history = [record(1, space.render(space.default_point()), False, "memory.oom"), record(2, start, True)]
    for r in history:
        search.observe(r)
    for _ in range(6):
        proposal = search.propose(history)
        assert "memory-pressure remedies" not in proposal.note
        changed = space.project(proposal.dsl)
        assert changed["limit/calculate_new_currents"] == 1 or changed["collect/update_voltages"], proposal.note
        history.append(record(len(history) + 1, proposal.dsl, True, throughput=0.5))
        search.observe(history[-1])


def test_toward_default_moves_are_new_mappings_heaviest_task_first(circuit_app):
    space = SearchSpace(circuit_app, parse_machine_spec("1x0x2"))
    rng = random.Random(7)
    weights = {"calculate_new_currents": 2.0, "distribute_charge": 1.0, "update_voltages": 0.5}
    for _ in range(10):
        point = space.random_point(rng)
        moves = list(space.toward_default(point, weights=weights))
        keys = [space._key(space.apply(point, m)) for m in moves]
        assert len(set(keys)) == len(keys) and space._key(point) not in keys
        tasks = [m.label.split(" of ")[1].split(" back")[0] for m in moves if m.label.startswith("every decision")]
        assert tasks == sorted(tasks, key=lambda t: -weights[t])  # only timed-loop tasks, heaviest first


# The words by which a move's label names the decisions of a group it changes for every task.
GROUP_WORDS = {"memory": "memories", "limit": "instance limit", "collect": "collected", "layout": "the layout"}
SPACES: dict[str, SearchSpace] = {}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(machine=st.sampled_from(["1x0x1", "1x0x2", "1x2x2", "2x4x1"]), seed=st.integers(0, 2**32 - 1),
       pressure=st.booleans(), weighted=st.booleans())
def test_every_decision_a_move_toward_the_default_changes_is_named_in_its_label(circuit_app, machine, seed, pressure,
                                                                                weighted):
    """A user read `toward the default from the best: the default memories, no instance limit, nothing collected`
    and found the layout changed too: each decision that differs between a point and a move's result, as the guided
    search applies it, is named by the label, by its task ("every decision of T") or by its group's words."""
    space = SPACES.setdefault(machine, SearchSpace(circuit_app, parse_machine_spec(machine)))
    point = space.random_point(random.Random(seed))
    weights = {"calculate_new_currents": 2.0, "update_voltages": 0.5} if weighted else None
    for move in space.toward_default(point, weights=weights, pressure=pressure):
        after = space.apply(point, move)
        changed = [space.by_name[n] for n in point if after[n] != point[n]]
        assert changed, move
        for d in changed:
            assert f"every decision of {d.task} " in move.label or GROUP_WORDS.get(d.group, "\0") in move.label, \
                (d.name, point[d.name], after[d.name], move.label)


@pytest.mark.parametrize("bench,seed", [("stencil", 1), ("circuit", 0)])
def test_tuning_from_a_random_start_drops_what_it_does_not_need_first(tmp_path, bench, seed, monkeypatch):
    """Real runs at the ci size: the seed's random start carries instance limits and collected requirements (for
    the stencil never a layout its CPU kernel rejects: the space has SOA F_order only). The second iteration works
    and has none of them."""
    for var in ("MAPPEROPT_LLM_BASE_URL", "MAPPEROPT_LLM_MODEL", "MAPPEROPT_LLM_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    runs = tmp_path / "runs"
    assert main(["tune", bench, "--size", "ci", "--start", "random", "--seed", str(seed), "--iters", "2", "--gpus", "0",
                 "--cpus", "1", "--baseline", "none", "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1",
                 "--min-time", "0.05", "--runs-dir", str(runs)]) == 0
    (folder,) = (runs / bench).iterdir()
    first, second = TuneStore.open(folder).records
    assert all(word in first.dsl for word in REMEDIES)
    assert second.ok, second.feedback_text
    assert not any(word in second.dsl for word in REMEDIES), second.dsl
    if bench == "stencil":
        assert "Layout * * * SOA F_order" in first.dsl and not first.category.startswith("layout."), first.category
    assert json.loads((folder / "summary.json").read_text())["best_iter"] == 2 or first.ok
