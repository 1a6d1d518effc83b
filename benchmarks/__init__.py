"""The benchmark applications and the harness that runs them (`mapperopt run`).

`load_config(app)` reads `configs/<app>.yaml`; `build_app(app)` builds `benchmarks/legion/<app>/`; `describe_app`
returns what the application prints with `--describe`; `run_benchmark(app, mapper)` runs and measures it and
returns a `mapperopt.records.RunResult` (a failure of the mapper or the application is a failed result, never an
exception). docs/running.md explains the configuration fields and the run folder.
"""

from mapperopt.benchmarks.apps import BenchConfig, SizeConfig, build_app, describe_app, known_benchmarks, load_config
from mapperopt.benchmarks.harness import run_benchmark

__all__ = ["BenchConfig", "SizeConfig", "build_app", "describe_app", "known_benchmarks", "load_config",
           "run_benchmark"]
