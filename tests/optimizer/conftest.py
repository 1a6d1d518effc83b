"""Fixtures of the optimizer tests; the helpers themselves live in optimizer_support.py."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Callable

import pytest
from optimizer_support import CONFIGS, PlacementEvaluator, ScriptedLLMServer

from mapperopt.descriptions import parse_machine_spec
from mapperopt.optimizer import store


@pytest.fixture(scope="session")
def circuit_app() -> dict:
    return json.loads((CONFIGS / "circuit.app.json").read_text())


@pytest.fixture(scope="session")
def cpu2():
    return parse_machine_spec("1x0x2")


@pytest.fixture
def placement_evaluator(circuit_app, cpu2) -> PlacementEvaluator:
    return PlacementEvaluator(circuit_app, cpu2)


@pytest.fixture
def llm_server() -> Callable[[list], ScriptedLLMServer]:
    servers: list[ScriptedLLMServer] = []

    def start(script: list) -> ScriptedLLMServer:
        servers.append(ScriptedLLMServer(script))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


@pytest.fixture
def unplotted(monkeypatch):
    """progress.png as an empty file. The tests of the loop's decisions run hundreds of iterations in-process, and
    the plot, redrawn after each, costs about 0.3 CPU-s a time; tests of `mapperopt tune` and `compare` draw and
    check the real one."""
    monkeypatch.setattr(store, "plot_progress", lambda records, path, **kw: Path(path).touch())


@pytest.fixture
def refused_url() -> str:
    """A loopback URL on which nothing listens (connections are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
