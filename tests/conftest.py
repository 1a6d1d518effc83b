"""The order in which pytest-xdist hands out the test files (pyproject.toml: `--dist loadfile
--no-loadscope-reorder`): longest first, so that no long file starts last while the other workers sit idle.

Each file is one unit of work (its module fixtures and builds run once). `LONGEST_FIRST` comes from measured CPU
times; a file missing from it only starts later, in collection order. Serial runs (`-n 0`) follow the same order.
"""

from __future__ import annotations

import pytest

# Test files in decreasing CPU time of a run with a warm build cache (benchmarks/suite_time.py).
LONGEST_FIRST = [
    "tests/optimizer/test_loop.py",
    "tests/optimizer/test_tune_cli.py",
    "tests/optimizer/test_compare.py",
    "tests/userapp/test_unknown_benchmarks.py",
    "tests/benchmarks/test_harness.py",
    "tests/autoguide/test_fixes.py",
    "tests/benchmarks/test_any_count.py",
    "tests/benchmarks/test_gemm3d_apps.py",
    "tests/benchmarks/test_gemm_apps.py",
    "tests/benchmarks/test_evaluate.py",
    "tests/optimizer/test_default_point.py",
    "tests/compiler/test_statements.py",
    "tests/compiler/test_examples.py",
    "tests/optimizer/test_random_agent.py",
    "tests/optimizer/test_baselines.py",
    "tests/userapp/test_foreign_app.py",
    "tests/compiler/test_differential.py",
    "tests/compiler/test_fidelity.py",
    "tests/compiler/test_errors.py",
    "tests/compiler/test_build.py",
    "tests/autoguide/test_rules.py",
    "tests/toolchain/test_toolchain.py",
    "tests/optimizer/test_llm.py",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))  # stable: the rest keep their order
