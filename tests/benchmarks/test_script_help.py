"""Every script under benchmarks/ that runs as a command: its `--help` describes it in whole sentences."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "benchmarks").rglob("*.py")
                 if 'if __name__ == "__main__":' in p.read_text())


def test_the_scripts_are_found():
    assert {"benchmarks/fuzz_dsl.py", "benchmarks/bench_compile.py", "benchmarks/pressure.py"} <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_scripts_help_ends_its_description_with_a_sentence(script):
    """`python benchmarks/fuzz_dsl.py --help` ended its description at a comma, bench_compile.py's inside a
    parenthesis: they gave the docstring's first line, not its first paragraph."""
    done = subprocess.run([sys.executable, script, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "80"})
    assert done.returncode == 0, done.stdout + done.stderr
    description = " ".join(done.stdout.split("\n\n")[1].split())  # after the usage lines (argparse's or click's)
    assert re.search(r"[.:?!]\)?$", description), description
    for opening, closing in ("()", "[]"):
        assert description.count(opening) == description.count(closing), description
    assert description.count("`") % 2 == 0, description
