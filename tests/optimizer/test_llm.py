"""Language-model access through a local OpenAI-compatible server: settings, token accounting, and every way a
request can fail, each turned into a clear note while the tuning loop goes on."""

from __future__ import annotations

import json

import openai
import pytest
from optimizer_support import PlacementEvaluator, rewrite

from mapperopt.optimizer.agent import TraceOptimizer
from mapperopt.optimizer.llm import ChatModel, LLMConfig, describe_error
from mapperopt.optimizer.loop import tune
from mapperopt.optimizer.space import SearchSpace
from mapperopt.optimizer.store import TuneStore


def test_options_win_over_the_environment(monkeypatch):
    monkeypatch.setenv("MAPPEROPT_LLM_BASE_URL", "http://env:1/v1")
    monkeypatch.setenv("MAPPEROPT_LLM_MODEL", "env-model")
    monkeypatch.setenv("MAPPEROPT_LLM_API_KEY", "secret")
    monkeypatch.setenv("MAPPEROPT_LLM_TIMEOUT", "7")
    config = LLMConfig.from_env(model="option-model")
    assert (config.base_url, config.model, config.api_key, config.timeout_s) == (
        "http://env:1/v1", "option-model", "secret", 7.0)
    assert config.configured
    assert "secret" not in json.dumps(config.public())


def test_nothing_configured_means_offline(monkeypatch):
    for var in ("MAPPEROPT_LLM_BASE_URL", "MAPPEROPT_LLM_MODEL", "MAPPEROPT_LLM_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    assert not LLMConfig.from_env().configured


def test_calls_record_tokens(llm_server):
    server = llm_server([lambda messages: '{"ok": 1}'] * 2)
    model = ChatModel(LLMConfig(base_url=server.base_url, model="m1", timeout_s=5, max_retries=0))
    reply = model(messages=[{"role": "user", "content": "hi"}], response_format={"type": "json_object"})
    model(messages=[{"role": "user", "content": "again"}])
    assert reply.choices[0].message.content == '{"ok": 1}'
    assert server.requests[0]["model"] == "m1" and server.requests[0]["response_format"] == {"type": "json_object"}
    assert model.usage_since(0)["total_tokens"] == 240 and len(model.usage_since(1)["calls"]) == 1


def test_failed_requests_are_retried(llm_server):
    server = llm_server([("status", 503), lambda messages: "fine"])
    model = ChatModel(LLMConfig(base_url=server.base_url, model="m", timeout_s=5, max_retries=1))
    assert model(messages=[{"role": "user", "content": "hi"}]).choices[0].message.content == "fine"
    assert len(server.requests) == 2


def test_a_timeout_and_a_refused_connection_are_named(llm_server, refused_url):
    server = llm_server([("sleep", 3)])
    slow = LLMConfig(base_url=server.base_url, model="m", timeout_s=0.5, max_retries=0)
    with pytest.raises(openai.APITimeoutError) as timeout:
        ChatModel(slow)(messages=[{"role": "user", "content": "hi"}])
    expected = f"the model at {server.base_url} did not answer within 0.5 s (timeout)"
    assert describe_error(timeout.value, slow) == expected
    closed = LLMConfig(base_url=refused_url, model="m", timeout_s=2, max_retries=0)
    model = ChatModel(closed)
    with pytest.raises(openai.APIConnectionError) as refused:
        model(messages=[{"role": "user", "content": "hi"}])
    assert describe_error(refused.value, closed).startswith(f"cannot connect to the model endpoint {refused_url}")
    assert model.calls[0]["error"].startswith("cannot connect")


def test_trace_loop_survives_bad_answers_timeouts_and_http_errors(tmp_path, llm_server, circuit_app, cpu2):
    space = SearchSpace(circuit_app, cpu2)
    start = space.render(space.default_point())
    server = llm_server([
        lambda messages: "I think you should use more processors.",                     # not JSON
        ("sleep", 8),                                                                   # timeout
        ("status", 503),                                                                # server error
        rewrite("layout_decision", ["Layout * * * AOS C_order;"]),                     # a good answer
    ])
    # A generous timeout: only the sleeping answer may reach it, even on a loaded machine.
    config = LLMConfig(base_url=server.base_url, model="scripted", timeout_s=2, max_retries=0)
    store = TuneStore.create(tmp_path, "circuit", {})
    evaluator = PlacementEvaluator(circuit_app, cpu2)
    tune(store, TraceOptimizer(space, start, llm=config), evaluator, iters=5)
    notes = [r.note for r in store.records]
    assert notes[1].startswith("LLM answer not used: the answer is not JSON: 'I think you should")
    assert notes[2] == f"LLM step failed: the model at {server.base_url} did not answer within 2 s (timeout); " \
                       "mapper unchanged"
    assert notes[3].startswith(f"LLM step failed: the model endpoint {server.base_url} answered HTTP 503")
    assert notes[4] == "LLM step: rewrote layout_decision"
    assert [r.cached for r in store.records] == [False, True, True, True, False]
    assert "Layout * * * AOS C_order;" in store.records[4].dsl and len(evaluator.calls) == 2
    assert [(r.llm or {}).get("total_tokens") for r in store.records] == [0, 120, 0, 0, 120]
