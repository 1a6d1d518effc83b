"""The baselines (random, Optuna, OpenTuner): one configuration is never evaluated twice, failures are the worst
value, OpenTuner's files stay in the run folder and its duplicate detection works under SQLAlchemy 2."""

from __future__ import annotations

import gc
import hashlib
import os

import pytest

from mapperopt.benchmarks.apps import known_benchmarks
from mapperopt.descriptions import parse_machine_spec
from mapperopt.errors import MapperoptError, install_extra
from mapperopt.optimizer.base import make_optimizer, normalize_dsl
from mapperopt.optimizer.loop import Evaluation, tune
from mapperopt.optimizer.space import SearchSpace
from mapperopt.optimizer.store import TuneStore
from mapperopt.records import Attempt, RunResult

pytestmark = pytest.mark.usefixtures("unplotted")  # conftest.py: why

BASELINES = ["opentuner", "optuna", "random"]


@pytest.fixture(scope="module")
def tiny(circuit_app):
    """Circuit reduced to one single-launched task whose requirements are all written, on one CPU: 12 configurations,
    the layouts (every mapping pattern is the default placement on one processor)."""
    app = dict(circuit_app)
    task = next(t for t in circuit_app["tasks"] if t["name"] == "update_voltages")
    app["tasks"] = [{**task, "launch": "single", "domain": None,
                     "regions": [r for r in task["regions"] if r["privilege"] != "read_only"]}]
    machine = parse_machine_spec("1x0x1")
    return app, machine, SearchSpace(app, machine)


class FailingAOS:
    """A deterministic stand-in for the harness: a program's throughput is a hash of its text, and every program
    with an AOS layout fails at run time."""

    settings = {"model": "hash", "version": 1}

    def __init__(self):
        self.calls: list[str] = []

    def evaluate(self, dsl, out_dir, best) -> Evaluation:
        from mapperopt.autoguide import explain, feedback_text

        self.calls.append(dsl)
        base = {"app": "circuit", "mapper": "inline", "dsl": dsl, "run_dir": str(out_dir)}
        if " AOS" in dsl:
            reason = "Assertion failed: stride does not match expected value."
            result = RunResult(status="failed", stage="run", reason=reason, log=reason, **base)
        else:
            throughput = 1.0 + int(hashlib.sha256(dsl.encode()).hexdigest()[:4], 16) / 65536
            line = {"throughput": throughput, "unit": "GFLOPS", "time_s": 1.0 / throughput, "verified": True}
            result = RunResult(status="ok", throughput=throughput, unit="GFLOPS", time_s=line["time_s"],
                               attempts=(Attempt(0, 1.0, result=line),), **base)
        feedback = explain(result, best=best.throughput if best else None)
        return Evaluation(result, feedback, feedback_text(feedback, result))


@pytest.mark.parametrize("name", BASELINES)
def test_every_configuration_is_evaluated_once(tmp_path, tiny, name):
    """The whole space in as many iterations as it has configurations: the libraries ask for configurations they
    have seen (OpenTuner and TPE do on a small space); those are answered from the optimizer's table, never rerun."""
    app, machine, space = tiny
    evaluator = FailingAOS()
    store = TuneStore.create(tmp_path, "circuit", {})
    opt = make_optimizer(name, space=space, start=space.render(space.default_point()), seed=3, workdir=store.root)
    tune(store, opt, evaluator, iters=13)
    keys = [normalize_dsl(d) for d in evaluator.calls]
    assert len(keys) == 12 and len(set(keys)) == 12
    assert not any(r.cached for r in store.records[:12])  # the loop's cache had nothing to answer
    failed = [r for r in store.records if not r.ok]
    assert len(failed) == 6 and all(" AOS" in r.dsl for r in failed)
    assert all(r.score == 0.0 for r in failed)
    # the space is exhausted: the best program is proposed again, and the loop's cache answers it
    assert store.records[12].note.startswith("search space exhausted") and store.records[12].cached


def test_failures_are_the_worst_value_for_each_library(tmp_path, tiny):
    app, machine, space = tiny
    start = space.render(space.default_point())
    for name in ("optuna", "opentuner"):
        store = TuneStore.create(tmp_path / name, "circuit", {})
        opt = make_optimizer(name, space=space, start=start, seed=0, workdir=store.root)
        told = []  # OpenTuner's results as its database holds them after the last iteration (tune then closes it)

        def on_record(record):
            if name == "opentuner" and record.iter == 8:
                from opentuner.resultsdb.models import Result

                told.extend(r.time for r in opt.api.session.query(Result).all())

        tune(store, opt, FailingAOS(), iters=8, on_record=on_record)
        failed = sum(not r.ok for r in store.records)
        assert failed > 0
        if name == "optuna":
            from optuna.trial import TrialState

            states = [t.state for t in opt.study.trials]
            # trials answered from the table are told too, so there may be more trials than iterations
            assert states.count(TrialState.FAIL) >= failed
            assert all(t.value is None for t in opt.study.trials if t.state == TrialState.FAIL)
        else:
            from mapperopt.optimizer.baselines import FAILURE_TIME

            assert told.count(FAILURE_TIME) >= failed
            assert max(t for t in told if t != FAILURE_TIME) < FAILURE_TIME


def test_opentuner_keeps_its_files_in_the_run_folder(tmp_path, tiny, monkeypatch):
    app, machine, space = tiny
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    store = TuneStore.create(tmp_path / "runs", "circuit", {})
    opt = make_optimizer("opentuner", space=space, start=space.render(space.default_point()), seed=0,
                         workdir=store.root)
    tune(store, opt, FailingAOS(), iters=3)
    assert os.listdir(cwd) == []  # no opentuner.db/, no opentuner.log
    assert (store.root / "opentuner.db").stat().st_size > 0


def open_files(name: str) -> list[str]:
    """The paths ending in `name` that this process holds open."""
    paths = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            paths.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            pass  # the listing's own descriptor, closed by now
    return [p for p in paths if p.endswith(name)]


def collected() -> None:
    """Runs the garbage collector until it finds nothing more (freeing one cycle can free another)."""
    while gc.collect():
        pass


def test_opentuner_closes_its_database_when_the_run_ends_or_is_interrupted(tmp_path, tiny):
    """The loop closes the optimizer however the run ends: OpenTuner's SQLite connections would otherwise stay open
    with the file after the run, as long as the optimizer lives (here: this test holds it). One more connection,
    which OpenTuner's set-up opens and drops without closing, is left to the garbage collector (`collected`)."""
    app, machine, space = tiny
    start = space.render(space.default_point())
    store = TuneStore.create(tmp_path, "circuit", {})
    evaluator = FailingAOS()
    real = evaluator.evaluate

    def interrupted(dsl, out_dir, best):
        if len(evaluator.calls) == 2:
            raise KeyboardInterrupt  # Ctrl-C during the third evaluation
        return real(dsl, out_dir, best)

    evaluator.evaluate = interrupted
    first = make_optimizer("opentuner", space=space, start=start, seed=0, workdir=store.root)
    with pytest.raises(KeyboardInterrupt):
        tune(store, first, evaluator, iters=4)
    collected()
    assert len(store.records) == 2 and open_files("opentuner.db") == []
    store.unlock()  # the interrupted process is gone, and its lock with it
    resumed = TuneStore.open(store.root)
    second = make_optimizer("opentuner", space=space, start=start, seed=0, workdir=store.root)
    tune(resumed, second, FailingAOS(), iters=4)
    collected()
    assert len(resumed.records) == 4 and open_files("opentuner.db") == []


def test_opentuner_duplicate_detection_under_sqlalchemy_2():
    """OpenTuner 0.8.8 finds duplicates only through a backref cascade that SQLAlchemy 2 removed; with the fix a
    3-value space hands out 3 configurations, however often it is asked (without it: one per request)."""
    import argparse

    import opentuner
    from opentuner import tuningrunmain
    from opentuner.api import TuningRunManager
    from opentuner.measurement import MeasurementInterface
    from opentuner.resultsdb.models import Result
    from opentuner.search.manipulator import ConfigurationManipulator, EnumParameter

    from mapperopt.optimizer.baselines import _attach_desired_results

    class Interface(MeasurementInterface):
        def run(self, desired_result, input, limit):
            raise AssertionError("not called in ask/tell use")

    tuningrunmain.init_logging = lambda: None
    args = argparse.ArgumentParser(parents=opentuner.argparsers()).parse_args([])
    args.database, args.parallelism, args.no_dups = "sqlite://", 1, True
    manipulator = ConfigurationManipulator()
    manipulator.add_parameter(EnumParameter("x", ["a", "b", "c"]))
    api = TuningRunManager(Interface(args=args, manipulator=manipulator, project_name="t", program_name="t"), args)
    _attach_desired_results(api.session)
    handed = []
    for _ in range(20):
        dr = api.get_next_desired_result()
        if dr is None:
            continue
        handed.append(dr.configuration.data["x"])
        api.report_result(dr, Result(time={"a": 1.0, "b": 2.0, "c": 3.0}[dr.configuration.data["x"]]))
    assert sorted(handed) == ["a", "b", "c"]


def test_missing_library_is_named(monkeypatch, tiny):
    import sys

    monkeypatch.setitem(sys.modules, "optuna", None)
    _, _, space = tiny
    with pytest.raises(MapperoptError) as info:
        make_optimizer("optuna", space=space, start=space.render(space.default_point()))
    assert "optuna" in info.value.message and info.value.hint == install_extra("baselines")


def test_random_points_use_the_whole_index_mapping_library(circuit_app):
    """On a machine with several nodes and processors the library's patterns place points differently, and every
    pattern renders to a program the checker accepts for 1-, 2- and 3-D launches."""
    from mapperopt.descriptions import AppDescription
    from mapperopt.dsl.checker import check
    from mapperopt.dsl.parser import parse
    from mapperopt.optimizer.space import INDEX_PATTERNS

    machine = parse_machine_spec("2x0x4")
    task = next(t for t in circuit_app["tasks"] if t["name"] == "update_voltages")
    for domain in ([8], [4, 2], [2, 2, 2]):
        app = {**circuit_app, "tasks": [{**task, "domain": domain}]}
        space = SearchSpace(app, machine)
        placements = set()
        for pattern in INDEX_PATTERNS:
            point = {"index_map/update_voltages": pattern}
            text = space.render(point)
            assert [d for d in check(parse(text), AppDescription.from_json(app), machine) if d.is_error] == []
            placements.add(tuple(space._library_placements(pattern, "CPU", tuple(domain), "index_map")))
        assert len(placements) >= 4, domain  # the patterns are not all the same placement


@pytest.mark.parametrize("bench", known_benchmarks())
def test_every_benchmark_has_a_space_whose_points_check(bench):
    """`compare` builds the baselines' space from any benchmark's description: random points of every benchmark
    render to programs the checker accepts, on a CPU machine and on a GPU machine."""
    from mapperopt.benchmarks.apps import load_config
    from mapperopt.descriptions import AppDescription
    from mapperopt.dsl.checker import check
    from mapperopt.dsl.parser import parse

    app = load_config(bench).stored_description()
    for spec in ("1x0x2", "2x2x2"):
        machine = parse_machine_spec(spec)
        space = SearchSpace(app, machine)
        opt = make_optimizer("random", space=space, start=space.render(space.default_point()), seed=1)
        for _ in range(4):
            text = space.render(space.semantic(space.random_point(opt.rng)))
            errors = [d for d in check(parse(text), AppDescription.from_json(app), machine) if d.is_error]
            assert errors == [], (bench, spec, text)
