"""What the commands know of an optimizer comes from its registry entry (`base.OPTIMIZERS`), never from its name: a
new optimizer that needs a language model, registered here under a name no command knows, is treated as such by
`tune`, `compare`, `doctor` and the evaluation's plan."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from mapperopt.benchmarks.evaluate import missing_endpoint
from mapperopt.cli import main
from mapperopt.commands import run_checks
from mapperopt.errors import install_extra
from mapperopt.optimizer import commands, compare
from mapperopt.optimizer.base import OPTIMIZERS, OptimizerSpec
from mapperopt.optimizer.store import TuneStore

# Short runs: where a command ignored the registry it would run instead of stopping, and the test fails soon.
FAST = ["--min-time", "0.05", "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1"]
TUNE = ["tune", "circuit", "--cpus", "2", "--baseline", "none", "--iters", "1", *FAST]
COMPARE = ["compare", "circuit", "--size", "ci", "--iters", "1", "--runs", "1", "--start", "default", *FAST]


@pytest.fixture
def register(monkeypatch):
    """Registers `fake`, an optimizer that needs a language model and reads the profile (random search under another
    name: what it proposes does not matter here), with more `OptimizerSpec` fields as given, and offers it to `tune
    --optimizer` (whose choices are fixed when the command is defined)."""

    def fake(**fields) -> None:
        # compare's DEFAULT_OPTIMIZERS is fixed when it is first imported: it must not take `fake` along
        assert "fake" not in compare.DEFAULT_OPTIMIZERS
        spec = OptimizerSpec("mapperopt.optimizer.baselines:RandomSearch", needs_model=True, reads_profile=True,
                             **fields)
        monkeypatch.setitem(OPTIMIZERS, "fake", spec)
        param = next(p for p in commands.tune.params if p.name == "optimizer")
        monkeypatch.setattr(param.type, "choices", (*param.type.choices, "fake"))

    return fake


@pytest.fixture
def offline(monkeypatch):
    for var in ("MAPPEROPT_LLM_BASE_URL", "MAPPEROPT_LLM_MODEL", "MAPPEROPT_LLM_API_KEY"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def endpoint(monkeypatch, llm_server):
    """An endpoint configured that answers each request (the check before a new run; random search never calls
    it)."""
    monkeypatch.setenv("MAPPEROPT_LLM_BASE_URL", llm_server([lambda messages: "OK"] * 4).base_url)
    monkeypatch.setenv("MAPPEROPT_LLM_MODEL", "scripted")
    monkeypatch.setenv("MAPPEROPT_LLM_RETRIES", "0")


def test_without_an_endpoint_it_is_refused_or_left_out(tmp_path, register, offline, capsys):
    register()
    runs = tmp_path / "runs"
    assert main([*TUNE, "--optimizer", "fake", "--runs-dir", str(runs)]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "the fake optimizer needs a language-model endpoint" in err and "--optimizer guided" in err, err
    either = "MAPPEROPT_LLM_BASE_URL or MAPPEROPT_LLM_MODEL"  # either one configures an endpoint (docs/tuning.md)
    assert either in err, err
    # the endpoint's variables in one parenthesis, at the end of a clause
    configure = ("MAPPEROPT_LLM_BASE_URL or MAPPEROPT_LLM_MODEL (either will do: a model alone means OpenAI's API)")
    assert (f"hint: give --llm-base-url or --llm-model, or set {configure}; or use --optimizer guided") in err, err
    # a run made with it is not continued without one
    store = TuneStore.create(tmp_path / "old", "circuit", {"optimizer": "fake", "iters": 1, "iterations": None,
                                                          "size": "ci"})
    store.unlock()
    assert main(["tune", "circuit", "--resume", str(store.root)]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"{store.root} was tuned with the fake optimizer, which needs a language-model endpoint" in err, err
    assert f"hint: set the endpoint again: {configure}" in err, err
    # compare leaves it out
    assert main([*COMPARE, "--optimizers", "fake", "--runs-dir", str(runs)]) == 1
    out = capsys.readouterr()
    assert (f"Skipping fake: it needs a language-model endpoint; set {configure}.") in " ".join(out.out.split())
    from mapperopt.commands import llm_check
    assert llm_check().fix == f"to use a model, set {configure}"
    assert "no optimizer left to compare" in out.err and "fake" not in out.err.split("name at least one of")[1]
    # the evaluation's plan: `run` refuses one that names it (its work list is the plan's, wherever it is read)
    assert missing_endpoint({"optimizers": ["guided", "fake"]}) == ["fake"]
    assert not runs.exists()  # nothing was measured


def test_its_packages_are_checked_with_its_extra(tmp_path, register, endpoint, capsys):
    register(extra="fake-extra", packages=(("mapperopt_no_such_module", "no-such-package"),))
    assert main([*COMPARE, "--optimizers", "fake", "--runs-dir", str(tmp_path / "runs")]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "the fake optimizer needs the optional package 'no-such-package'" in err
    assert install_extra("fake-extra") in err  # as mapperopt was installed (tests/optimizer/test_cli_notes.py)
    [check] = [c for c in run_checks() if c.name == "Optimizer packages ('fake-extra' extra)"]
    assert not check.ok and "no-such-package" in check.detail and "--optimizer fake" in check.detail
    assert not (tmp_path / "runs").exists()


def test_with_an_endpoint_tune_picks_it_records_the_endpoint_and_compare_profiles_it(tmp_path, register, endpoint,
                                                                                       monkeypatch):
    # the default of `tune` with an endpoint configured, in place of trace
    register(default=True)
    monkeypatch.setitem(OPTIMIZERS, "trace", replace(OPTIMIZERS["trace"], default=False))
    runs = tmp_path / "runs"
    assert main([*TUNE, "--runs-dir", str(runs)]) == 0
    [root] = (runs / "circuit").iterdir()
    settings = TuneStore.open(root).settings
    assert settings["optimizer"] == "fake"
    assert settings["llm"]["model"] == "scripted" and settings["request"]["llm"] == settings["llm"]
    # compare evaluates its programs with the profile it reads
    assert main([*COMPARE, "--optimizers", "fake", "--runs-dir", str(runs)]) == 0
    [folder] = (runs / "circuit").glob("compare-*")
    assert (folder / "fake-1" / "state.jsonl").read_text().strip()
    [evaluation] = (folder / "evaluations").iterdir()
    result = json.loads(evaluation.read_text())
    assert result["status"] == "ok" and result["profile"], result
