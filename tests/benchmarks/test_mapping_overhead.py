"""benchmarks/mapping_overhead.py at a tiny size: it runs Stencil under Legion's default mapper and DSL mappers and
prints its figure lines (medians, spread, cost per task mapping and per region requirement). No timing is asserted:
the machine is shared."""

from __future__ import annotations

import re
import subprocess
import sys

NUMBER = r"[+-]?\d+\.\d"


def run(*args: str, cwd) -> str:
    done = subprocess.run([sys.executable, "-m", "mapperopt.benchmarks.mapping_overhead", "--steps", "3", "--tiles",
                           "2", "--rounds", "2", *args], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_script_prints_each_mappers_figures_and_the_cost_per_task_mapping(tmp_path):
    out = run(cwd=tmp_path)
    # 3 steps x 2 launches x 2x2 tiles
    assert re.search(r"^Stencil 34x34 in 2x2 tiles, 3 timed steps, .*: 24 task mappings timed per execution, "
                     r"5 region requirements each; "
                     rf"2 rounds; load average {NUMBER}\d before, {NUMBER}\d after$", out, re.M), out
    assert re.search(rf"^default +{NUMBER} ms +\d+-\d+ ms +{NUMBER}\d s  - +- +-$", out, re.M), out
    for name in ("empty.dsl", "start.dsl"):
        assert re.search(rf"^{re.escape(name)} +{NUMBER} ms +\d+-\d+ ms +{NUMBER}\d s  {NUMBER} ms \(-?\d+--?\d+ ms\) +"
                         rf"{NUMBER} us \({NUMBER}-{NUMBER} us\) +{NUMBER} us$", out, re.M), out


def test_the_script_measures_the_users_mapper_instead(tmp_path):
    (tmp_path / "mine.dsl").write_text("Task * CPU;\nRegion * * CPU SYSMEM;\nLayout * * * SOA F_order;\n")
    out = run("--mapper", "mine.dsl", cwd=tmp_path)
    names = [line.split()[0] for line in out.splitlines()[2:]]
    assert names == ["default", "mine.dsl"], out
