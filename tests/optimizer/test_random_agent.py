"""The paper's initial agent for Trace: methods that make seeded random decisions over the search space."""

from __future__ import annotations

import pytest
from optimizer_support import PlacementEvaluator, rewrite

from mapperopt.descriptions import AppDescription, parse_machine_spec
from mapperopt.dsl.checker import check
from mapperopt.dsl.parser import parse
from mapperopt.optimizer.agent import METHOD_INPUTS, METHODS, TraceOptimizer, _inputs, random_agent_sources
from mapperopt.optimizer.llm import LLMConfig
from mapperopt.optimizer.loop import tune
from mapperopt.optimizer.space import SECTIONS, SearchSpace, join_program
from mapperopt.optimizer.store import TuneStore

pytestmark = pytest.mark.usefixtures("unplotted")  # conftest.py: why


def _program(space: SearchSpace, sources: dict[str, str]) -> str:
    """The program the methods produce (run here: the sources are ours, not a model's)."""
    parts = {}
    for section in SECTIONS:
        scope: dict = {}
        exec(sources[METHODS[section]], scope)
        parts[section] = scope[METHODS[section]](None, _inputs(space)[METHOD_INPUTS[section]])
    return join_program(space.prelude(), parts)


def test_random_agents_differ_by_seed_check_and_are_trained_by_the_model(tmp_path, llm_server, circuit_app):
    machine = parse_machine_spec("1x2x2")  # GPUs too: the map functions must follow the kinds drawn for a task
    space = SearchSpace(circuit_app, machine)
    start = space.render(space.default_point())
    programs = [_program(space, random_agent_sources(space, seed)) for seed in range(4)]
    assert len(set(programs)) == 4 and start not in programs
    for program in programs:
        assert not [d for d in check(parse(program, "<agent>"), AppDescription.from_json(circuit_app), machine)
                    if d.is_error]
    # Through trace (its methods run confined), and the model rewrites a method of the random agent like any other.
    server = llm_server([rewrite("layout_decision", ["Layout * * * AOS;"])])
    config = LLMConfig(base_url=server.base_url, model="scripted", timeout_s=30, max_retries=0)
    store = TuneStore.create(tmp_path, "circuit", {})
    tune(store, TraceOptimizer(space, start, seed=0, llm=config, init="random"),
         PlacementEvaluator(circuit_app, machine), iters=2)
    first, second = store.records
    assert first.note == "initial agent (random decisions, seed 0)" and first.dsl == programs[0]
    assert "random.Random" in first.optimizer_state["code"]["region_decision"]  # a program, not a constant list
    assert second.note.startswith("LLM step: rewrote layout_decision") and "Layout * * * AOS;" in second.dsl
    assert "random.Random" in second.optimizer_state["code"]["region_decision"]
