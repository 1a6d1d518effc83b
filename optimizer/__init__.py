"""Tuning mappers: the search space, the optimizers, the resumable tuning loop (docs/tuning.md).

    space = SearchSpace(app_description, machine_description)
    store = TuneStore.create(Path("runs"), "circuit", settings)
    optimizer = make_optimizer("guided", space=space, start=space.render(space.default_point()), seed=0)
    tune(store, optimizer, BenchmarkEvaluator("circuit", cpus=2), iters=10)

`make_optimizer` names: "guided" (offline, rule-based) and "trace" (OptoPrime with a language model; trace-opt is
imported only then).
"""

from mapperopt.optimizer.base import OPTIMIZERS, IterationRecord, Optimizer, Proposal, make_optimizer
from mapperopt.optimizer.llm import LLMConfig
from mapperopt.optimizer.loop import BenchmarkEvaluator, Evaluation, tune
from mapperopt.optimizer.space import SearchSpace
from mapperopt.optimizer.store import TuneStore

__all__ = ["BenchmarkEvaluator", "Evaluation", "IterationRecord", "LLMConfig", "OPTIMIZERS", "Optimizer",
           "Proposal", "SearchSpace", "TuneStore", "make_optimizer", "tune"]
