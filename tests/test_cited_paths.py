"""The project's files that the sources' docstrings and comments, and the docs, cite exist: a reader sent to one finds
it. A doc may name a file that a design plans, marked as such ("to be added" before it in the same clause)."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The tracked top-level folders (not a build's, such as an egg-info).
TOP = "|".join(sorted({re.escape(f.split("/")[0]) for f in subprocess.run(
    ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split() if "/" in f}))
# `configs/circuit.yaml`, `tests/dsl/test_fuzz.py`; a placeholder such as configs/BENCH.yaml names no one file
CITED = re.compile(rf"(?<![\w./-])(?:{TOP})/[\w./-]*\w\.(?:yaml|md|json|dsl|py|cc|h|csv|lark)\b")
# A planned file: "to be added" earlier in the clause that cites it (no '.' or ';' in between).
PLANNED = re.compile(r"\bto be added\b[^.;]*$")


def _missing(name: str, text: str, planned_ok: bool = False) -> list[str]:
    return [f"{name}:{n}: {m.group()}" for n, line in enumerate(text.splitlines(), 1)
            for m in CITED.finditer(line)
            if not re.search(r"/[A-Z]+\.", m.group()) and not (ROOT / m.group()).exists()
            and not (planned_ok and PLANNED.search(line[: m.start()]))]


def test_every_project_file_a_python_source_cites_exists():
    sources = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    missing = [m for source in sources if not source.startswith("tests/")
               for m in _missing(source, (ROOT / source).read_text())]
    assert missing == [], missing


def test_every_project_file_the_docs_cite_exists_or_is_marked_planned():
    """docs/tuning.md's GEPA design cited `optimizer/gepa.py` as if it existed; only Python sources were checked."""
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    missing = [m for doc in docs for m in _missing(str(doc.relative_to(ROOT)), doc.read_text(), planned_ok=True)]
    assert missing == [], missing


def test_a_planned_file_is_allowed_only_where_marked():
    cited = "`GepaOptimizer` (`optimizer/gepa.py`)"
    assert _missing("x.md", cited, planned_ok=True) == ["x.md:1: optimizer/gepa.py"]
    assert _missing("x.md", "to be added. " + cited, planned_ok=True) == ["x.md:1: optimizer/gepa.py"]
    assert _missing("x.md", "(to be added in a new file `optimizer/gepa.py`)", planned_ok=True) == []
    assert _missing("x.py", "(to be added in a new file `optimizer/gepa.py`)") == ["x.py:1: optimizer/gepa.py"]
