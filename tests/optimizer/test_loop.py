"""The tuning loop with the deterministic placement model: the optimizer contract, the cache, agent failures as
feedback, and resume after an interruption."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from optimizer_support import PlacementEvaluator, code_names

from mapperopt.descriptions import AppDescription
from mapperopt.dsl.checker import check
from mapperopt.dsl.parser import parse
from mapperopt.optimizer.agent import TraceOptimizer
from mapperopt.optimizer.base import make_optimizer
from mapperopt.optimizer.loop import tune
from mapperopt.optimizer.space import INDEX_PATTERNS, SearchSpace
from mapperopt.optimizer.store import TuneStore

pytestmark = pytest.mark.usefixtures("unplotted")  # conftest.py: why

POOR = ("Task * CPU;\nmcpu = Machine(CPU);\ndef first_cpu(Task task) {\n    return mcpu[0, 0];\n}\n"
        "IndexTaskMap * first_cpu;\n")


class _Reply:
    """The response shape OptoPrime reads: `.choices[0].message.content`."""

    def __init__(self, content: str):
        self.choices = [type("Choice", (), {"message": type("Message", (), {"content": content})()})()]


class PatternLLM:
    """An in-process model stand-in: each call rewrites index_task_map_decision so that calculate_new_currents uses
    the library pattern after the one the prompt shows (deterministic and stateless, so a resumed run gets the same
    answers; the contract test needs a second optimizer kind, not a real model)."""

    def __init__(self, space: SearchSpace):
        self.space = space

    def __call__(self, messages, **kwargs):
        prompt = messages[-1]["content"]
        patterns = list(INDEX_PATTERNS)
        shown = re.search(r"def (\w+)_cpu1d\(Task task\)", prompt)
        pattern = patterns[(patterns.index(shown.group(1)) + 1) % len(patterns)] if shown else patterns[0]
        lines = self.space.sections({"index_map/calculate_new_currents": pattern})["index_task_map"]
        body = "".join(f"        {json.dumps(s)},\n" for s in lines)
        name = code_names(prompt)["index_task_map_decision"]
        code = f"def index_task_map_decision(self, index_tasks):\n    return [\n{body}    ]\n"
        return _Reply(json.dumps({"reasoning": "next pattern", "answer": "", "suggestion": {name: code}}))


def make(name: str, space: SearchSpace, start: str, seed: int = 0):
    if name == "trace":
        return TraceOptimizer(space, start, seed=seed, llm=PatternLLM(space))
    return make_optimizer(name, space=space, start=start, seed=seed)


def run(tmp_path, name, circuit_app, cpu2, iters, start=POOR, seed=0):
    space = SearchSpace(circuit_app, cpu2)
    store = TuneStore.create(tmp_path, "circuit", {"optimizer": name})
    evaluator = PlacementEvaluator(circuit_app, cpu2)
    tune(store, make(name, space, start, seed), evaluator, iters)
    return store, evaluator


@pytest.mark.parametrize("name", ["guided", "trace", "opentuner", "optuna", "random"])
def test_optimizer_contract(tmp_path, name, circuit_app, cpu2):
    """Within budget, same seed same proposals, every proposal passes the checker."""
    first, _ = run(tmp_path / "a", name, circuit_app, cpu2, iters=5)
    second, _ = run(tmp_path / "b", name, circuit_app, cpu2, iters=5)
    assert [r.iter for r in first.records] == [1, 2, 3, 4, 5]
    assert [r.dsl for r in first.records] == [r.dsl for r in second.records]
    app = AppDescription.from_json(circuit_app)
    for r in first.records:
        assert [d for d in check(parse(r.dsl), app, cpu2) if d.is_error] == [], r.dsl
    assert first.best().throughput > first.records[0].throughput  # the poor start is beaten


def test_guided_never_proposes_a_mapping_it_has_measured(tmp_path, circuit_app, cpu2):
    store, _ = run(tmp_path, "guided", circuit_app, cpu2, iters=8)
    space = SearchSpace(circuit_app, cpu2)
    for i, later in enumerate(store.records):
        assert not any(space.same_mapping(later.dsl, earlier.dsl) for earlier in store.records[:i]), later.note


def test_guided_explains_itself_and_follows_the_best(tmp_path, circuit_app, cpu2):
    store, _ = run(tmp_path, "guided", circuit_app, cpu2, iters=3)
    notes = [r.note for r in store.records]
    assert notes[0] == "start program"
    # the start's statements back toward the default first, then its neighbours: each from the best so far
    assert notes[1].startswith(("toward the default from the best, iteration 1: ",
                                "neighbour of the best, iteration 1: "))
    assert make("guided", SearchSpace(circuit_app, cpu2), POOR).describe().endswith("not a language model")
    assert (store.root / "best.dsl").read_text() == store.best().dsl


def test_the_same_program_is_never_evaluated_twice(tmp_path, circuit_app, cpu2):
    space = SearchSpace(circuit_app, cpu2)
    start = space.render(space.default_point())
    store = TuneStore.create(tmp_path, "circuit", {})
    evaluator = PlacementEvaluator(circuit_app, cpu2)
    # A model that always answers TERMINATE: the program never changes.
    opt = TraceOptimizer(space, start, llm=lambda messages, **kw: _Reply("TERMINATE"))
    tune(store, opt, evaluator, iters=3)
    assert len(evaluator.calls) == 1
    assert [(r.cached, r.cached_from) for r in store.records] == [(False, None), (True, 1), (True, 1)]
    assert store.records[1].throughput == store.records[0].throughput
    assert "answered TERMINATE" in store.records[1].note
    assert "identical to the one of iteration 1" in store.records[1].feedback_text
    assert json.loads((store.root / "iter-002" / "cached.json").read_text())["cached_from"] == 1


def test_an_agent_exception_is_feedback_on_the_failing_method(tmp_path, circuit_app, cpu2):
    space = SearchSpace(circuit_app, cpu2)
    prompts = []
    answers = [
        ("layout_decision", "def layout_decision(self, regions):\n    return [1 / 0]\n"),
        ("layout_decision", 'def layout_decision(self, regions):\n    return ["Layout * * * AOS;"]\n'),
    ]

    def model(messages, **kwargs):
        prompts.append(messages[-1]["content"])
        method, code = answers.pop(0)
        name = code_names(messages[-1]["content"])[method]
        return _Reply(json.dumps({"reasoning": "", "answer": "", "suggestion": {name: code}}))

    store = TuneStore.create(tmp_path, "circuit", {})
    tune(store, TraceOptimizer(space, POOR, llm=model), PlacementEvaluator(circuit_app, cpu2), iters=3)
    failed = store.records[1]
    assert (failed.status, failed.stage, failed.category, failed.dsl) == ("failed", "generate", "agent.error", None)
    assert "ZeroDivisionError" in failed.feedback_text and "layout_decision" in failed.feedback_text
    assert "ZeroDivisionError" in (store.root / "iter-002" / "agent_error.txt").read_text()
    # The error went back to the model, which fixed the method; the loop went on.
    assert "ZeroDivisionError" in prompts[1]
    assert store.records[2].ok and "Layout * * * AOS;" in store.records[2].dsl


@pytest.mark.parametrize("name", ["guided", "trace", "opentuner", "optuna", "random"])
def test_resume_reproduces_the_history_without_rerunning(tmp_path, name, circuit_app, cpu2):
    whole, _ = run(tmp_path / "whole", name, circuit_app, cpu2, iters=5)

    space = SearchSpace(circuit_app, cpu2)
    store = TuneStore.create(tmp_path / "parts", "circuit", {"optimizer": name})
    evaluator = PlacementEvaluator(circuit_app, cpu2)
    real = evaluator.evaluate

    def interrupted(dsl, out_dir, best):
        if len(evaluator.calls) == 2:
            raise KeyboardInterrupt  # the user presses Ctrl-C during the third evaluation
        return real(dsl, out_dir, best)

    evaluator.evaluate = interrupted
    with pytest.raises(KeyboardInterrupt):
        tune(store, make(name, space, POOR), evaluator, iters=5)
    store.unlock()  # the interrupted process is gone, and its lock with it
    done = len(TuneStore.open(store.root).records)
    resumed = TuneStore.open(store.root)
    fresh = PlacementEvaluator(circuit_app, cpu2)
    tune(resumed, make(name, space, POOR), fresh, iters=5)

    def essence(records):
        return [(r.iter, r.dsl, r.status, r.throughput, r.cached, r.note) for r in records]

    assert essence(resumed.records) == essence(whole.records)
    new = [r for r in resumed.records[done:] if not r.cached]
    assert fresh.calls == [r.dsl for r in new]  # finished iterations were not run again


def test_heavy_libraries_are_imported_only_when_used():
    """trace-opt (about 4 s, LiteLLM), openai and matplotlib stay out of the offline path until needed."""
    code = ("import sys, mapperopt.optimizer.commands, mapperopt.optimizer.guided, mapperopt.optimizer.loop; "
            "print(sorted(m for m in ('opto', 'litellm', 'openai', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_verdict_measured_again_names_its_run_folders_relative_to_the_tuning_folder(tmp_path, monkeypatch):
    """A candidate that only looks faster is measured again with the best (real runs); best.json's run folders of
    that measurement are relative to the tuning folder (not to the working folder), which can then be moved."""
    import statistics

    from mapperopt.benchmarks.apps import load_config
    from mapperopt.optimizer.base import IterationRecord
    from mapperopt.optimizer.loop import BenchmarkEvaluator, _becomes_best

    monkeypatch.chdir(tmp_path)  # a relative --runs-dir, as `tune` is usually run
    store = TuneStore.create(Path("runs"), "circuit", {})
    dsl = load_config("circuit").expert_dsl()

    def measured(i: int, values: list[float]) -> IterationRecord:
        result = {"status": "ok", "settings": {},
                  "attempts": [{"exit_code": 0, "result": {"throughput": v}} for v in values]}
        return IterationRecord(iter=i, dsl=dsl, key=str(i), status="ok", stage=None, category="performance",
                               throughput=statistics.median(values), unit="GFLOPS", best_throughput=0.0,
                               result=result)

    out = store.iter_dir(2)
    _becomes_best(measured(2, [1.05, 0.95, 1.1]), measured(1, [1.0, 1.1, 0.9]),
                  BenchmarkEvaluator("circuit", size="ci", min_time_s=0), out, store.root)
    verdict = json.loads((out / "best.json").read_text())
    assert verdict["decided_by"] == "re-measured together", verdict
    dirs = [d for m in verdict["remeasured"].values() for d in m["run_dirs"]]
    assert dirs and all(d.startswith("iter-002/remeasure/") and (store.root / d / "result.json").exists()
                        for d in dirs), dirs


def test_a_full_disk_in_an_iteration_names_the_tuning_folder(tmp_path, circuit_app, cpu2, monkeypatch):
    """A short write's ENOSPC names no file; the error said only "cannot write a file ... free space there"."""
    import errno
    import os

    from mapperopt.files import refused_write

    real_write_text = Path.write_text

    def full(self, text, *args, **kwargs):
        if self.name == "feedback.txt" and self.parent.name == "iter-002":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write_text(self, text, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full)
    with pytest.raises(OSError) as raised:
        run(tmp_path, "random", circuit_app, cpu2, 3)
    [folder] = (tmp_path / "circuit").iterdir()  # the tuning folder
    assert f"cannot write {folder}: no space left on device" in str(refused_write(raised.value))


def test_guided_names_legions_default_where_the_program_has_its_own_mapper(tmp_path, circuit_app, cpu2):
    """For a program that registers its own mapper, the `default` reference runs that mapper; the guided search's
    notes said "toward the default ... back to the default", which meant Legion's default mapping (the DSL's), not
    that reference: they name Legion's default. A program without its own mapper keeps "the default"."""
    own = {**circuit_app, "own_mapper": "first_cpu_mapper"}
    store, _ = run(tmp_path, "guided", own, cpu2, iters=4)
    notes = [r.note for r in store.records]
    assert any(n.startswith("toward Legion's default from the best, iteration ") for n in notes), notes
    assert not any("the default" in n for n in notes), notes
    space, plain_space = SearchSpace(own, cpu2), SearchSpace(circuit_app, cpu2)
    moves = [m.label for m in space.toward_default(space.project(POOR))]
    assert moves and not any(m.endswith("back to the default") for m in moves), moves
    assert any(m.endswith("back to Legion's default") for m in moves), moves
    plain = [m.label for m in plain_space.toward_default(plain_space.project(POOR))]
    assert any(m.endswith("back to the default") for m in plain), plain
