"""A plain install (`pip install .`, not editable) used from the checkout's root: Python imports the checkout's
`mapperopt/` folder, not the installed package, and the layers beside it (`dsl/`, `benchmarks/`...) must come along,
or `python -m mapperopt.benchmarks.trace_limit` finds no `mapperopt.benchmarks`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_module_runs_from_the_checkout_root_after_a_plain_install(tmp_path):
    source = tmp_path / "source"  # built from a copy: pip leaves build/ and *.egg-info in the folder it builds
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".venv", ".git", "reports", "tests", "runs", "build",
                                                                 "*.egg-info", "__pycache__"))
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                    str(site), str(source)], check=True, capture_output=True, timeout=300)
    assert (site / "mapperopt" / "benchmarks" / "trace_limit.py").is_file()
    # -S: no .pth files, so not the editable install of this environment; its packages give the dependencies.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), sysconfig.get_paths()["purelib"]]))
    done = subprocess.run([sys.executable, "-S", "-m", "mapperopt.benchmarks.trace_limit", "--help"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "--steps" in done.stdout
