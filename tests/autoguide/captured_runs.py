"""Captured runs for AutoGuide's tests (tests/autoguide/captured/, written by capture.py)."""

from __future__ import annotations

import json
from pathlib import Path

from mapperopt.records import RunResult

CAPTURED = Path(__file__).parent / "captured"


def captures() -> list[Path]:
    return sorted(CAPTURED.glob("*.json"))


def load(name_or_path: str | Path) -> tuple[dict, RunResult]:
    """(the captured record, its RunResult)."""
    path = name_or_path if isinstance(name_or_path, Path) else CAPTURED / f"{name_or_path}.json"
    record = json.loads(path.read_text())
    return record, RunResult.from_json(record["result"])
