"""The baseline optimizers: random search, Optuna (TPE) and OpenTuner over the one search space (`space.py`).

All three propose points of `SearchSpace`, rendered through `SearchSpace.render` (the same code path as the guided
optimizer), and share these rules (`SpaceSearch`):

* Iteration 1 evaluates the start program, like every optimizer of `mapperopt tune`; its point (given, or the
  projection of the program into the space) is told to the search library as its first trial.
* A *configuration* is the program a point renders to (after `SearchSpace.semantic`, so that two points which map
  every task alike are one configuration). A configuration is never proposed twice: when a library asks for one that
  was evaluated already, it is answered from the optimizer's own table of outcomes and the library is asked again.
  After `ASK_TRIES` such answers in a row, a random unevaluated point is injected instead (Optuna: `enqueue_trial`,
  OpenTuner: a seed configuration), and when none is left the best program is proposed again (the loop's cache then
  answers it).
* A failure is scored as the worst value: a failed trial for Optuna (`TrialState.FAIL`), a penalty time
  `FAILURE_TIME` for OpenTuner, whose objective minimises time (time = 1 / throughput for a success).
* Every random choice is seeded from `seed`; the same seed and the same outcomes give the same proposals, so `resume`
  rebuilds the state by replaying the journal (the default `Optimizer.resume`).

Optuna and OpenTuner are optional dependencies (the `baselines` extra: `pip install '.[baselines]'` in the checkout); a
clear error says so when they are missing, with the command for the copy that runs.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import random
import warnings
from pathlib import Path
from typing import Any, Iterator, Sequence

from mapperopt.errors import MapperoptError, install_extra
from mapperopt.optimizer.base import IterationRecord, Optimizer, Proposal, normalize_dsl, start_note

ASK_TRIES = 20  # library answers to already evaluated configurations before a random new point is injected
RANDOM_TRIES = 200  # random draws looking for an unevaluated configuration before the space counts as exhausted
OPENTUNER_TRIES = 5  # generations OpenTuner may spend on duplicates it answers itself before it counts as stuck
FAILURE_TIME = 1e9  # OpenTuner's "time" of a failed configuration: worse than any real one (1 / throughput)
OPTUNA_STARTUP_TRIALS = 4  # Optuna's default (10) would make a 10-iteration run pure random search


def _require(module: str) -> Any:
    """Imports an optional dependency of the baselines.

    Raises:
        MapperoptError: it is not installed.
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise MapperoptError(f"the {module} optimizer needs the optional package '{module}', which is not installed",
                             hint=install_extra("baselines")) from None


def _label(value: Any) -> str:
    """The string a choice is shown as to the libraries ("GPU,CPU" for a kind list, "True", "64")."""
    return ",".join(value) if isinstance(value, tuple) else str(value)


class SpaceSearch(Optimizer):
    """Base of the baselines: turns a library's ask/tell loop over encoded points into the `Optimizer` protocol.

    Subclasses implement `_ask() -> (point, handle)` ((None, None) when the library has nothing to propose),
    `_tell(handle, score)` (score: throughput, None for a failure; handle None: nothing to tell) and
    `_inject(point)` (make the library's next `_ask` return `point`).

    Args:
        space: the SearchSpace.
        start: the program of iteration 1.
        seed: seed of every random choice.
        start_point: the start program's point when it was rendered from one (else it is projected).
        workdir: a folder for the library's files (OpenTuner's database); None keeps them in memory.
    """

    library = ""

    def __init__(self, space: Any, start: str, seed: int = 0, start_point: dict | None = None,
                 workdir: Path | None = None, **options: Any):
        super().__init__(space, start, seed, **options)
        self.start_point = space.normalize(start_point) if start_point is not None else space.project(start)
        self.start_note = start_note(space, start, start_point)
        self.workdir = Path(workdir) if workdir is not None else None
        self.labels = {d.name: {_label(c): c for c in d.choices} for d in space.decisions}
        self.rng = random.Random(f"{self.name}:{seed}")
        self.outcomes: dict[str, float | None] = {}  # configuration (normalised program) -> score, None = failed
        self.pending: tuple[Any, str] | None = None  # (library handle, configuration) of the last proposal
        self.best: IterationRecord | None = None
        self.duplicates = 0  # library requests answered from `outcomes` (shown in notes)

    # ------------------------------------------------------------------------------------------------ protocol

    def propose(self, history: Sequence[IterationRecord]) -> Proposal:
        if not history:
            self._inject(self.start_point)
            point, handle = self._ask()
            self.pending = (handle, normalize_dsl(self.start))
            return Proposal(self.start, note=self.start_note)
        for _ in range(ASK_TRIES):
            point, handle = self._ask()
            if point is None:
                break  # the library has nothing new to offer
            dsl = self.space.render(self.space.semantic(point))
            key = normalize_dsl(dsl)
            if key in self.outcomes:
                self.duplicates += 1
                self._tell(handle, self.outcomes[key])  # answered from the table, never run again
                continue
            self.pending = (handle, key)
            return Proposal(dsl, note=f"{self.library} proposal")
        fresh = self._random_unevaluated()
        if fresh is not None:
            dsl = self.space.render(fresh)
            self._inject(fresh)
            point, handle = self._ask()
            if point is None or self.space.render(self.space.semantic(point)) != dsl:
                handle = None  # the library did not take the injected point: it learns nothing of this one
            self.pending = (handle, normalize_dsl(dsl))
            return Proposal(dsl, note=f"random point ({self.library} kept asking for evaluated configurations)")
        self.pending = None
        return Proposal(self.best.dsl if self.best else self.start, note="search space exhausted: best program again")

    def observe(self, record: IterationRecord) -> None:
        score = record.score if record.ok and record.throughput is not None else None
        if record.ok and (self.best is None or record.score > self.best.score):
            self.best = record
        if self.pending is None:
            return
        handle, key = self.pending
        self.pending = None
        self.outcomes[key] = score
        self._tell(handle, score)

    def _random_unevaluated(self) -> dict | None:
        for _ in range(RANDOM_TRIES):
            point = self.space.semantic(self.space.random_point(self.rng))
            if normalize_dsl(self.space.render(point)) not in self.outcomes:
                return point
        return None

    def _encode(self, point: dict) -> dict[str, str]:
        return {name: _label(value) for name, value in self.space.normalize(point).items()}

    def _decode(self, params: dict[str, str]) -> dict:
        return {name: self.labels[name][label] for name, label in params.items()}

    # ------------------------------------------------------------------------------------------------ library

    def _ask(self) -> tuple[dict, Any]:
        raise NotImplementedError

    def _tell(self, handle: Any, score: float | None) -> None:
        raise NotImplementedError

    def _inject(self, point: dict) -> None:
        raise NotImplementedError


class RandomSearch(SpaceSearch):
    """Uniform random points of the space (every decision drawn independently), never one configuration twice."""

    name = "random"
    library = "random"

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.queued: list[dict] = []

    def describe(self) -> str:
        return "random — uniform random points of the search space"

    def _ask(self) -> tuple[dict, Any]:
        return (self.queued.pop(0) if self.queued else self.space.random_point(self.rng)), None

    def _tell(self, handle: Any, score: float | None) -> None:
        pass

    def _inject(self, point: dict) -> None:
        self.queued.append(point)


class OptunaSearch(SpaceSearch):
    """Optuna's TPE sampler (seeded) over one categorical parameter per decision, through ask-and-tell; failed
    evaluations are told as failed trials."""

    name = "optuna"
    library = "Optuna TPE"

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        optuna = _require("optuna")
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        sampler = optuna.samplers.TPESampler(seed=self.seed, n_startup_trials=OPTUNA_STARTUP_TRIALS)
        self.study = optuna.create_study(direction="maximize", sampler=sampler)  # in memory; resume replays
        self.distributions = {d.name: optuna.distributions.CategoricalDistribution(list(self.labels[d.name]))
                              for d in self.space.decisions}
        self.TrialState = optuna.trial.TrialState

    def describe(self) -> str:
        return f"optuna — Optuna TPE (seed {self.seed}), ask-and-tell"

    def _ask(self) -> tuple[dict, Any]:
        trial = self.study.ask(self.distributions)
        return self._decode(trial.params), trial

    def _tell(self, handle: Any, score: float | None) -> None:
        if handle is None:
            return
        if score is None:
            self.study.tell(handle, state=self.TrialState.FAIL)
        else:
            self.study.tell(handle, score)

    def _inject(self, point: dict) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.study.enqueue_trial(self._encode(point), skip_if_exists=False)


class OpenTunerSearch(SpaceSearch):
    """OpenTuner's default search (the AUC bandit over its techniques) through its programmatic interface
    (`TuningRunManager`): one `EnumParameter` per decision, time = 1 / throughput, failures `FAILURE_TIME`.

    Its SQLite database is `workdir/opentuner.db` (in memory without a workdir), never in the working directory,
    open until `close`; OpenTuner's own log file and logging set-up are disabled. Under SQLAlchemy 2 OpenTuner's
    duplicate detection is broken (new desired results are no longer attached to the session through the `TuningRun`
    backref, so every duplicate looks new); `_attach_desired_results` restores it. OpenTuner draws from Python's and
    numpy's global random generators: they are swapped for this optimizer's own seeded states around every call.
    """

    name = "opentuner"
    library = "OpenTuner"

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        import numpy as np

        _require("opentuner")
        self._py_state = random.Random(f"opentuner:{self.seed}").getstate()
        self._np_state = np.random.RandomState(self.seed % 2**32).get_state()
        with self._library():
            self.api = self._start()

    def describe(self) -> str:
        return f"opentuner — OpenTuner's default bandit of techniques (seed {self.seed})"

    def close(self) -> None:
        """Closes the database: its session and its engine's connections, which otherwise stay open with the file
        after the run (the database is working state only: a resumed run rebuilds it from the journal)."""
        self.api.session.close()
        self.api.engine.dispose()

    @contextlib.contextmanager
    def _library(self) -> Iterator[None]:
        """OpenTuner's calls run with this optimizer's random states and without its warnings."""
        import numpy as np

        saved = random.getstate(), np.random.get_state()
        random.setstate(self._py_state)
        np.random.set_state(self._np_state)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                yield
        finally:
            self._py_state, self._np_state = random.getstate(), np.random.get_state()
            random.setstate(saved[0])
            np.random.set_state(saved[1])

    def _start(self) -> Any:
        import opentuner
        from opentuner import tuningrunmain
        from opentuner.api import TuningRunManager
        from opentuner.measurement import MeasurementInterface
        from opentuner.search.manipulator import ConfigurationManipulator, EnumParameter

        tuningrunmain.init_logging = lambda: None  # it would write ./opentuner.log and reconfigure logging
        logging.getLogger("opentuner").setLevel(logging.ERROR)  # e.g. "only 1 point in simplex" on every run
        args = argparse.ArgumentParser(parents=opentuner.argparsers()).parse_args([])
        if self.workdir is not None:
            db = self.workdir / "opentuner.db"
            db.unlink(missing_ok=True)  # resume replays the journal into a fresh database
            args.database = f"sqlite:///{db}"
        else:
            args.database = "sqlite://"
        args.parallelism = 1  # one configuration per generation: mapperopt evaluates one per iteration
        args.no_dups = True  # duplicates are handled here; OpenTuner would only log them
        args.label = f"mapperopt-{self.seed}"
        manipulator = ConfigurationManipulator()
        for d in self.space.decisions:
            manipulator.add_parameter(EnumParameter(_ot_name(d.name), list(self.labels[d.name])))

        class Interface(MeasurementInterface):
            def run(self, desired_result, input, limit):  # pragma: no cover - ask/tell never calls it
                raise RuntimeError("mapperopt evaluates configurations itself")

            def save_final_config(self, configuration):
                pass  # the default prints it

        api = TuningRunManager(Interface(args=args, manipulator=manipulator, project_name="mapperopt",
                                         program_name="mapper"), args)
        _attach_desired_results(api.session)
        return api

    def _ask(self) -> tuple[dict | None, Any]:
        with self._library():
            for _ in range(OPENTUNER_TRIES):
                dr = self.api.get_next_desired_result()
                if dr is not None:
                    return self._from_config(dr.configuration.data), dr
                # every request of that generation was a duplicate that OpenTuner answered itself
        return None, None

    def _tell(self, handle: Any, score: float | None) -> None:
        from opentuner.resultsdb.models import Result

        if handle is None:
            return
        time = FAILURE_TIME if score is None or score <= 0 else 1.0 / score
        with self._library():
            self.api.report_result(handle, Result(time=time))

    def _inject(self, point: dict) -> None:
        self.api.search_driver.seed_cfgs.append({_ot_name(k): v for k, v in self._encode(point).items()})

    def _from_config(self, data: dict) -> dict:
        names = {_ot_name(d.name): d.name for d in self.space.decisions}
        return self._decode({names[k]: v for k, v in data.items()})


def _ot_name(decision: str) -> str:
    """A decision's parameter name for OpenTuner, which reads "/" in a name as a path into nested configurations."""
    return decision.replace("/", ":")


def _attach_desired_results(session: Any) -> None:
    """Restores OpenTuner's duplicate detection under SQLAlchemy 2: before each flush, every desired result of a
    tuning run that is not in the session yet is added to it (SQLAlchemy 1.x did that through the backref cascade
    that 2.0 removed), so that its configuration id is known when the driver looks for duplicates."""
    from opentuner.resultsdb.models import TuningRun
    from sqlalchemy import event

    @event.listens_for(session, "before_flush")
    def attach(sess: Any, context: Any, instances: Any) -> None:
        runs = [o for o in (*sess.identity_map.values(), *sess.new) if isinstance(o, TuningRun)]
        for run in runs:
            for dr in run.desired_results:
                if dr not in sess:
                    sess.add(dr)


__all__ = ["FAILURE_TIME", "OpenTunerSearch", "OptunaSearch", "RandomSearch", "SpaceSearch"]
