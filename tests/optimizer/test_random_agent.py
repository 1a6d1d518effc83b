"""The paper's initial agent for Trace: methods that make seeded random decisions over the search space."""

from __future__ import annotations

from optimizer_support import PlacementEvaluator, rewrite

from mapperopt.descriptions import AppDescription, parse_machine_spec
from mapperopt.dsl.checker import check
from mapperopt.dsl.parser import parse
from mapperopt.optimizer.agent import TraceOptimizer
from mapperopt.optimizer.llm import LLMConfig
from mapperopt.optimizer.loop import tune
from mapperopt.optimizer.space import SearchSpace
from mapperopt.optimizer.store import TuneStore


def test_random_agents_differ_by_seed_check_and_are_trained_by_the_model(tmp_path, llm_server, circuit_app):
    machine = parse_machine_spec("1x2x2")  # GPUs too: the map functions must follow the kinds drawn for a task
    space = SearchSpace(circuit_app, machine)
    start = space.render(space.default_point())
    server = llm_server([rewrite("layout_decision", ["Layout * * * AOS;"])])
    config = LLMConfig(base_url=server.base_url, model="scripted", timeout_s=30, max_retries=0)
    programs = []
    for seed in range(2):
        opt = TraceOptimizer(space, start, seed=seed, llm=config, init="random")
        first = opt.propose([])
        assert first.note == f"initial agent (random decisions, seed {seed})"
        assert "random.Random" in first.state["code"]["region_decision"]  # a program, not a constant list
        assert not [d for d in check(parse(first.dsl, "<agent>"), AppDescription.from_json(circuit_app), machine)
                    if d.is_error]
        programs.append(first.dsl)
    assert len(set(programs)) == 2 and start not in programs
    # The model rewrites a method of the random agent like any other.
    store = TuneStore.create(tmp_path, "circuit", {})
    tune(store, TraceOptimizer(space, start, seed=0, llm=config, init="random"),
         PlacementEvaluator(circuit_app, machine), iters=2)
    assert store.records[0].dsl == programs[0]  # the same seed, the same program
    assert store.records[1].note.startswith("LLM step: rewrote layout_decision")
    assert "Layout * * * AOS;" in store.records[1].dsl and "random.Random" in store.records[1].optimizer_state[
        "code"]["region_decision"]
