"""The order in which pytest-xdist hands out the test files (pyproject.toml: `--dist loadfile
--no-loadscope-reorder`): longest first, so that no long file starts last while the other workers sit idle.

Each file is one unit of work (its module fixtures and builds run once), except the files of `ONE_WORKER`, which form
one unit: they import trace-opt (about 6 CPU-s with LiteLLM), once on one worker rather than once on each.
`LONGEST_FIRST` comes from measured CPU times; a file missing from it only starts later, in collection order. Serial
runs (`-n 0`) follow the same order.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest

# Test files in decreasing CPU time of a run with a warm build cache (benchmarks/suite_time.py; 2026-12-02).
LONGEST_FIRST = [
    "tests/optimizer/test_tune_cli.py",
    "tests/optimizer/test_loop.py",
    "tests/optimizer/test_compare.py",
    "tests/compiler/test_generated.py",
    "tests/benchmarks/test_harness.py",
    "tests/optimizer/test_registry.py",
    "tests/optimizer/test_random_starts.py",
    "tests/userapp/test_unknown_benchmarks.py",
    "tests/benchmarks/test_gemm3d_apps.py",
    "tests/compiler/test_statements.py",
    "tests/benchmarks/test_any_count.py",
    "tests/autoguide/test_fixes.py",
    "tests/compiler/test_examples.py",
    "tests/benchmarks/test_evaluate.py",
    "tests/benchmarks/test_gemm_apps.py",
    "tests/toolchain/test_toolchain.py",
    "tests/compiler/test_differential.py",
    "tests/optimizer/test_baselines.py",
    "tests/dsl/test_formatter.py",
    "tests/benchmarks/test_run_cli.py",
    "tests/compiler/test_fidelity.py",
    "tests/optimizer/test_pressure.py",
    "tests/optimizer/test_llm.py",
    "tests/compiler/test_errors.py",
    "tests/dsl/test_fuzz.py",
    "tests/compiler/test_build.py",
    "tests/userapp/test_foreign_app.py",
    "tests/optimizer/test_random_agent.py",
]

# The test files that run the Trace optimizer (they import trace-opt).
ONE_WORKER = {
    "tests/optimizer/test_loop.py",
    "tests/optimizer/test_tune_cli.py",
    "tests/optimizer/test_llm.py",
    "tests/optimizer/test_random_agent.py",
}


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadfile":  # another --dist given on the command line: xdist's own
        return None
    from xdist.scheduler import LoadFileScheduling

    class Scheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return "trace-opt" if path in ONE_WORKER else path

    return Scheduling(config, log)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))  # stable: the rest keep their order


@pytest.fixture(autouse=True)
def sighup_as_a_terminal_leaves_it():
    """SIGHUP with its default action, as a terminal session gives it: the suite started under `nohup` (which ignores
    it, and mapperopt then leaves it ignored, as it should) would otherwise fail the tests of SIGHUP's handling."""
    import signal

    before = signal.signal(signal.SIGHUP, signal.SIG_DFL)
    yield
    signal.signal(signal.SIGHUP, before)


@pytest.fixture
def final_measured_as() -> Callable[..., None]:
    """A function that rewrites the final.json of a finished comparison folder as a measurement in 3 rounds (which
    give each score an interval) where every best program measured a given factor times the reference's throughput,
    the rounds `spread` (a fraction; default 1 %) apart; with `time_s`, every mapper measured that many seconds per
    execution (the protocol's minimum or more: no "Short measurement"); `compare --resume FOLDER --report-only
    --final-rounds 3` then reports it."""
    from mapperopt.benchmarks import protocol

    def rewrite(folder: Path, factor: float, spread: float = 0.01, time_s: float | None = None) -> None:
        path = folder / "final.json"
        final = json.loads(path.read_text())
        for group in final["groups"]:
            reference = next(n for n in ("expert", "default") if n in group["measured"])
            base = group["reference"]
            for name, measured in group["measured"].items():
                scale = 1.0 if name == reference else factor
                measured["estimate"] = protocol.estimate([base * scale * k for k in (1 - spread, 1.0, 1 + spread)]
                                                         ).to_json()
                if time_s is not None:
                    measured["time_s"] = time_s
            group["reference"] = group["measured"][reference]["estimate"]["value"]
        path.write_text(json.dumps({**final, "rounds": 3}))

    return rewrite
