"""The benchmark applications and the harness that runs them (`mapperopt run`).

`load_config(app)` reads `configs/<app>.yaml`; `build_app(app)` builds `benchmarks/legion/<app>/`; `describe_app`
returns what the application prints with `--describe`; `run_benchmark(app, mapper)` runs and measures it and
returns a `mapperopt.records.RunResult` (a failure of the mapper or the application is a failed result, never an
exception). docs/running.md explains the configuration fields and the run folder.
"""

import importlib

# name -> module: imported on first use, so that a command needing one light module of this package (the `--app`
# option of `check`) does not pay for the harness and its dependencies.
_EXPORTS = {"BenchConfig": "apps", "SizeConfig": "apps", "build_app": "apps", "describe_app": "apps",
            "known_benchmarks": "apps", "load_config": "apps", "require_app": "apps", "run_benchmark": "harness"}
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
