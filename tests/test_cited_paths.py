"""The project's files that the sources' docstrings and comments cite exist: a reader sent to one finds it."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOP = "|".join(sorted(p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")))
# `configs/circuit.yaml`, `tests/dsl/test_fuzz.py`; a placeholder such as configs/BENCH.yaml names no one file
CITED = re.compile(rf"(?<![\w./-])(?:{TOP})/[\w./-]*\w\.(?:yaml|md|json|dsl|py|cc|h|csv|lark)\b")


def test_every_project_file_a_python_source_cites_exists():
    sources = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    missing = [f"{source}:{n}: {path}" for source in sources if not source.startswith("tests/")
               for n, line in enumerate((ROOT / source).read_text().splitlines(), 1)
               for path in CITED.findall(line)
               if not re.search(r"/[A-Z]+\.", path) and not (ROOT / path).exists()]
    assert missing == [], missing
