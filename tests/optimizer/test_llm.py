"""Language-model access through a stand-in OpenAI-compatible server on 127.0.0.1: settings, token accounting, and
every way a request can fail: endpoint faults are retried with back-off without using up iterations, a per-iteration
cap bounds the wait, and what cannot be overcome stops the run with a clear message."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from optimizer_support import PlacementEvaluator, code_names, rewrite

from mapperopt.optimizer.agent import TraceOptimizer, get_code
from mapperopt.optimizer.llm import ChatModel, LLMConfig, ModelError
from mapperopt.optimizer.loop import tune
from mapperopt.optimizer.space import SearchSpace
from mapperopt.optimizer.store import TuneStore

pytestmark = pytest.mark.usefixtures("unplotted")  # conftest.py: why


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


@pytest.mark.parametrize("var", ["MAPPEROPT_LLM_TIMEOUT", "MAPPEROPT_LLM_CAP"])
def test_a_time_setting_that_is_not_finite_is_refused(monkeypatch, var):
    """--llm-timeout and --llm-cap refuse nan and inf; their variables let them through to every request."""
    from mapperopt.errors import MapperoptError

    for value in ("nan", "inf"):
        monkeypatch.setenv(var, value)
        with pytest.raises(MapperoptError, match=f"{var}={value} is not a positive, finite number of seconds"):
            LLMConfig.from_env()


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


def test_a_timeout_a_refused_connection_and_an_html_page_are_named(llm_server, refused_url):
    server = llm_server([("sleep", 3), ("html", "<!DOCTYPE html><html><body>Sign in to the proxy</body></html>")])
    slow = LLMConfig(base_url=server.base_url, model="m", timeout_s=0.5, max_retries=1)
    with pytest.raises(ModelError) as failed:
        ChatModel(slow)(messages=[{"role": "user", "content": "hi"}])
    message = str(failed.value)
    assert "failed 2 time(s) in a row" in message
    # The last fault is named: a 200 whose body is a web page, not "'str' object has no attribute 'choices'".
    assert f"the model endpoint {server.base_url} answered with an HTML page, not a chat completion" in message
    assert "Sign in to the proxy" in message and "ends in /v1" in message
    model = ChatModel(LLMConfig(base_url=refused_url, model="m", timeout_s=2, max_retries=0))
    with pytest.raises(ModelError, match=f"cannot connect to the model endpoint {refused_url}"):
        model(messages=[{"role": "user", "content": "hi"}])
    assert model.calls[0]["error"].startswith("cannot connect")


def test_the_model_time_of_an_iteration_is_capped(llm_server):
    server = llm_server([("sleep", 5)] * 5)
    model = ChatModel(LLMConfig(base_url=server.base_url, model="m", timeout_s=60, max_retries=5, max_model_s=1.5))
    start = time.monotonic()
    with pytest.raises(ModelError, match="cap of 1.5 s of model time per iteration is used up") as failed:
        model(messages=[{"role": "user", "content": "hi"}])
    assert "did not answer within 1.5 s (timeout)" in str(failed.value)  # the timeout used, not --llm-timeout's 60
    assert time.monotonic() - start < 4 and len(server.requests) == 1  # not 5 x 60 s


@pytest.mark.parametrize("limit", ["timeout", "cap"])
def test_an_answer_that_trickles_in_is_cut_at_the_deadline(llm_server, limit):
    """A server (or a proxy) that sends a byte of its answer every 0.5 s, so that no single read waits long: the
    request's timeout and the iteration's cap still bound the whole request, with the same words as for a server
    that sends nothing, and the abandoned request leaves nothing behind: its connection is closed at once and the
    process ends without closing the model. Run in a child process, so that a request that is not cut cannot
    hold the test (the whole answer would take minutes)."""
    server = llm_server([("drip", 0.5)] * 2)
    settings = "timeout_s=1, max_retries=0" if limit == "timeout" else "timeout_s=60, max_retries=3, max_model_s=1.5"
    client = textwrap.dedent(f"""
        import time
        from mapperopt.optimizer.llm import ChatModel, LLMConfig, ModelError
        model = ChatModel(LLMConfig(base_url={server.base_url!r}, model="m", {settings}))
        start = time.monotonic()
        try:
            model(messages=[{{"role": "user", "content": "hi"}}])
        except ModelError as exc:
            print(time.monotonic() - start, time.time(), exc, sep="\\n", flush=True)
        time.sleep(2)  # the abandoned request's connection must be closed before the process ends
        """)
    start = time.monotonic()
    try:
        seen = subprocess.run([sys.executable, "-c", client], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("the request was not cut at its deadline: the client still waited after 60 s")
    assert seen.returncode == 0, seen.stderr
    seconds, gave_up, message = seen.stdout.split("\n", 2)
    if limit == "timeout":
        assert message.startswith(f"the language model failed 1 time(s) in a row: the model at {server.base_url} "
                                  "did not answer within 1 s (timeout)")
    else:
        assert "the cap of 1.5 s of model time per iteration is used up" in message
        assert "did not answer within 1.5 s (timeout)" in message and len(server.requests) == 1
    assert float(seconds) < 3 and time.monotonic() - start < 20
    assert server.hung_up and server.hung_up[0] - float(gave_up) < 1.5  # closed by the deadline, not by the exit


def test_endpoint_faults_do_not_use_up_iterations(tmp_path, llm_server, circuit_app, cpu2, monkeypatch):
    monkeypatch.setattr("mapperopt.optimizer.llm.BACKOFF_S", 0.1)
    space = SearchSpace(circuit_app, cpu2)
    start = space.render(space.default_point())
    server = llm_server([
        lambda messages: "I think you should use more processors.",                     # not JSON: an answer
        ("sleep", 8),                                                                   # timeout: retried
        ("status", 503),                                                                # server error: retried
        ("html", "<html><body>502 Bad Gateway</body></html>"),                          # a proxy's page: retried
        rewrite("layout_decision", ["Layout * * * AOS C_order;"]),                     # a good answer
        ("status", 503), ("status", 503), ("status", 503), ("status", 503),             # down for good
    ])
    # A generous timeout: only the sleeping answer may reach it, even on a loaded machine.
    config = LLMConfig(base_url=server.base_url, model="scripted", timeout_s=2, max_retries=3)
    store = TuneStore.create(tmp_path, "circuit", {})
    evaluator = PlacementEvaluator(circuit_app, cpu2)
    stopped = TraceOptimizer(space, start, llm=config)
    with pytest.raises(ModelError, match="failed 4 time"):
        tune(store, stopped, evaluator, iters=5)
    assert stopped.model.client.is_closed()  # the loop closed the optimizer, and with it its model client
    notes = [r.note for r in store.records]
    assert len(notes) == 3  # the endpoint's faults used up no iteration
    assert notes[1].startswith("LLM answer not used: the answer is not JSON: 'I think you should")
    assert notes[2].startswith("LLM step: rewrote layout_decision (after 3 failed request(s), retried: ")
    assert [r.cached for r in store.records] == [False, True, False]
    assert "Layout * * * AOS C_order;" in store.records[2].dsl and len(evaluator.calls) == 2
    assert [(r.llm or {}).get("total_tokens") for r in store.records] == [0, 120, 120]
    # The same run continues once the endpoint answers again, from where it stopped.
    store.unlock()
    server.script[:] = [rewrite("layout_decision", ["Layout * * * SOA;"])] * 2
    resumed = TuneStore.open(store.root)
    finished = TraceOptimizer(space, start, llm=config)
    tune(resumed, finished, PlacementEvaluator(circuit_app, cpu2), iters=4)
    assert [r.iter for r in resumed.records] == [1, 2, 3, 4] and resumed.records[3].note.startswith("LLM step")
    assert finished.model.client.is_closed()


@pytest.mark.parametrize("confinement", ["bubblewrap", "landlock", "limits"])
def test_model_code_runs_confined(tmp_path, llm_server, circuit_app, cpu2, monkeypatch, confinement):
    """A method that never returns fails its iteration, not the run; a method runs without the key or other
    secrets, in an empty temporary folder, and cannot write data into a file; with bubblewrap (where it works),
    also on a read-only filesystem, and with Landlock (where bubblewrap is not used) it writes no file at all."""
    from mapperopt.optimizer import confine

    if confinement == "bubblewrap" and not confine.sandbox():
        pytest.skip("bubblewrap is not installed or does not work here")
    if confinement == "landlock" and not confine.landlock():
        pytest.skip("this kernel has no Landlock (or it is disabled)")
    if confinement != "bubblewrap":
        monkeypatch.setattr(confine, "sandbox", lambda: ())
    if confinement == "limits":
        monkeypatch.setattr(confine, "landlock", lambda: 0)
    monkeypatch.setattr(confine, "WALL_S", 2.0)
    monkeypatch.setenv("MAPPEROPT_LLM_API_KEY", "sk-from-the-environment")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
    target = tmp_path / "written.txt"
    nosy = ("    import os\n"
            f"    with open({str(target)!r}, 'a') as f:\n"
            "        f.write('data')\n")
    probe = ("    import os, json\n"
             "    raise RuntimeError(json.dumps([os.getcwd(), os.listdir('.'), sorted(os.environ)]))\n")

    def method(body: str):
        def answer(messages):
            name = code_names(messages[-1]["content"])["task_decision"]
            code = f"def task_decision(self, tasks):\n{body}    return ['Task * CPU;']\n"
            return json.dumps({"reasoning": "", "answer": "", "suggestion": {name: code}})
        return answer

    server = llm_server([method("    while True:\n        pass\n"), method(nosy), method(probe)])
    space = SearchSpace(circuit_app, cpu2)
    config = LLMConfig(base_url=server.base_url, model="scripted", api_key="sk-option", timeout_s=10, max_retries=0)
    store = TuneStore.create(tmp_path / "runs", "circuit", {})
    tune(store, TraceOptimizer(space, space.render(space.default_point()), llm=config),
         PlacementEvaluator(circuit_app, cpu2), iters=4)
    hang, write, seen = store.records[1:]
    assert (hang.status, hang.stage) == ("failed", "generate")
    assert "task_decision did not return within 2 s" in hang.feedback_text
    assert (write.status, write.stage) == ("failed", "generate")
    if confinement == "bubblewrap":  # the filesystem is read-only, and /tmp a private, empty one
        assert "Read-only file system" in write.feedback_text or "No such file" in write.feedback_text
        assert not target.exists()
    elif confinement == "landlock":
        assert "Permission denied" in write.feedback_text and not target.exists()
    else:  # the file may be created, but no data is written into it
        assert "File too large" in write.feedback_text and target.read_text() == ""
    (cwd, listing, env), _ = json.JSONDecoder().raw_decode(seen.feedback_text.split("RuntimeError: ", 1)[1])
    assert listing == [] and cwd.startswith(tempfile.gettempdir())
    assert set(env) <= {"PATH", "LANG", "LC_CTYPE", "PWD"}  # bubblewrap sets PWD


def test_a_cut_off_body_is_an_endpoint_fault(llm_server):
    server = llm_server([("json", '{"id": "x", "choices": [ {"mess'), lambda messages: "fine"])
    model = ChatModel(LLMConfig(base_url=server.base_url, model="m", timeout_s=5, max_retries=1))
    assert model(messages=[{"role": "user", "content": "hi"}]).choices[0].message.content == "fine"
    assert model.calls[0]["error"] == (f"the model endpoint {server.base_url} answered with JSON that is cut off or "
                                       "broken, not a chat completion (it begins: "
                                       """'{"id": "x", "choices": [ {"mess')""")


def test_the_endpoint_is_asked_by_doctor(llm_server, refused_url, monkeypatch):
    from mapperopt.commands import llm_check

    server = llm_server([lambda messages: "OK", ("status", 401), ("status", 404), lambda messages: "OK"])
    monkeypatch.setenv("MAPPEROPT_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("MAPPEROPT_LLM_MODEL", "scripted")
    monkeypatch.delenv("MAPPEROPT_LLM_API_KEY", raising=False)
    # OPENAI_API_KEY is sent to whatever endpoint is configured: the row says whose key goes out, never the key
    monkeypatch.setenv("OPENAI_API_KEY", "sk-only-for-this-test")
    check = llm_check()
    assert check.ok and check.detail == f"{server.base_url}: the model scripted answers (key from OPENAI_API_KEY)"
    assert "sk-only" not in check.detail + check.fix
    monkeypatch.delenv("OPENAI_API_KEY")
    assert server.requests[0]["max_tokens"] == 1 and server.requests[0]["model"] == "scripted"
    bad_key, unknown = llm_check(), llm_check()
    assert not bad_key.ok and f"{server.base_url} answered HTTP 401" in bad_key.detail
    assert "MAPPEROPT_LLM_API_KEY" in bad_key.fix
    assert not unknown.ok and "HTTP 404" in unknown.detail and "MAPPEROPT_LLM_MODEL" in unknown.fix
    monkeypatch.setenv("MAPPEROPT_LLM_BASE_URL", refused_url)
    down = llm_check()
    assert not down.ok and f"cannot connect to the model endpoint {refused_url}" in down.detail
    assert "MAPPEROPT_LLM_BASE_URL" in down.fix
    # Configured but failing: a failed check (doctor exits non-zero), as `tune` would stop at once.
    assert bad_key.required and unknown.required and down.required
    # A model alone is configured: tune would use OpenAI's API (here the openai client's own variable redirects it).
    monkeypatch.delenv("MAPPEROPT_LLM_BASE_URL")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    check = llm_check()
    assert check.ok and check.detail == f"{server.base_url}: the model scripted answers (no key: a placeholder is sent)"
    assert len(server.requests) == 4
    monkeypatch.delenv("MAPPEROPT_LLM_MODEL")
    check = llm_check()
    assert not check.ok and not check.required and check.detail.startswith("none configured")


def test_doctors_hint_for_a_failing_server_is_no_runs(llm_server, monkeypatch):
    """doctor runs nothing to continue and has no --llm-retries: its hint for a server error or a rate limit says to
    try again (the environment's variable where one applies), not tune's "continue the run"."""
    from mapperopt.commands import llm_check

    server = llm_server([("status", 500), ("status", 429)])
    monkeypatch.setenv("MAPPEROPT_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("MAPPEROPT_LLM_MODEL", "scripted")
    failed, limited = llm_check(), llm_check()
    assert not failed.ok and "HTTP 500" in failed.detail
    assert failed.fix == "the server failed: check its log, then run doctor again"
    assert limited.fix == "the endpoint limits the request rate: wait, then run doctor again"


def test_doctor_waits_as_long_as_tune_would(llm_server, monkeypatch):
    """A model that takes its time (a local server loading it on the first request) is not reported as down: doctor
    waits the configured timeout, and names it when that runs out."""
    from mapperopt.commands import llm_check

    server = llm_server([("sleep", 11), ("sleep", 4)])
    monkeypatch.setenv("MAPPEROPT_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("MAPPEROPT_LLM_MODEL", "scripted")
    monkeypatch.setenv("MAPPEROPT_LLM_TIMEOUT", "30")
    check = llm_check()
    assert check.ok, check.detail
    monkeypatch.setenv("MAPPEROPT_LLM_TIMEOUT", "2")
    check = llm_check()
    assert not check.ok and check.detail == f"the model at {server.base_url} did not answer within 2 s (timeout)"


@pytest.mark.parametrize("status, setting", [(401, "MAPPEROPT_LLM_API_KEY"), (404, "MAPPEROPT_LLM_MODEL")])
def test_a_refused_key_or_an_unknown_model_stops_the_run(tmp_path, llm_server, circuit_app, cpu2, status, setting):
    server = llm_server([("status", status)] * 4)
    space = SearchSpace(circuit_app, cpu2)
    config = LLMConfig(base_url=server.base_url, model="scripted", timeout_s=5, max_retries=3)
    store = TuneStore.create(tmp_path, "circuit", {})
    with pytest.raises(ModelError) as stopped:
        tune(store, TraceOptimizer(space, space.render(space.default_point()), llm=config),
             PlacementEvaluator(circuit_app, cpu2), iters=3)
    assert f"{server.base_url} answered HTTP {status}" in stopped.value.message and setting in stopped.value.hint
    assert len(store.records) == 1 and len(server.requests) == 1  # no iteration used up; it cannot get better


def suggest(method: str, code: str):
    """A scripted answer that gives `method`'s variable the code `code`."""
    def answer(messages):
        name = code_names(messages[-1]["content"])[method]
        return json.dumps({"reasoning": "", "answer": "", "suggestion": {name: code}})
    return answer


def scripted_tune(folder: Path, server, circuit_app, cpu2, iters: int) -> TuneStore:
    """A tune of circuit on `cpu2` by TraceOptimizer from Legion's default mapper, asking `server` (one try per
    request), each program scored by PlacementEvaluator; its store in `folder`."""
    space = SearchSpace(circuit_app, cpu2)
    config = LLMConfig(base_url=server.base_url, model="scripted", timeout_s=5, max_retries=0)
    store = TuneStore.create(folder, "circuit", {})
    tune(store, TraceOptimizer(space, space.render(space.default_point()), llm=config),
         PlacementEvaluator(circuit_app, cpu2), iters=iters)
    return store


def test_the_method_is_called_by_its_name_and_a_huge_answer_is_refused(tmp_path, llm_server, circuit_app, cpu2):
    huge = "def task_decision(self, tasks):\n" + "    x = 1\n" * 20000 + "    return ['Task * CPU;']\n"
    server = llm_server([
        suggest("task_decision", "def region_decision(self, regions):\n    return ['CollectMemory * *;']\n"),
        suggest("task_decision", huge),
        suggest("task_decision", "def helper(self, tasks):\n    return ['CollectMemory * *;']\n\n"
                                 "def task_decision(self, tasks):\n    return ['Task * CPU;']\n"),
    ])
    store = scripted_tune(tmp_path, server, circuit_app, cpu2, iters=4)
    misnamed, big, helper = store.records[1:]
    assert misnamed.note == ("LLM answer not used: the code for task_decision defines region_decision, not "
                             "task_decision; mapper unchanged") and misnamed.cached
    assert helper.ok and "Task * CPU;" in helper.dsl and "CollectMemory" not in helper.dsl
    assert re.fullmatch(r"LLM answer not used: the answer has \d{6} characters, more than the 50000 one may have; "
                        r"mapper unchanged", big.note), big.note


def test_a_program_too_large_is_refused_before_it_is_parsed(tmp_path, llm_server, circuit_app, cpu2):
    """A short method may return any number of statements; parsing and compiling them have no time limit, so a
    program beyond MAX_PROGRAM_CHARS fails its iteration unparsed, and the model is told the limit."""
    server = llm_server([
        suggest("layout_decision", "def layout_decision(self, regions):\n    return ['Layout * * * SOA Align==%d;' "
                                   "% (8 * i) for i in range(1, 4001)]\n"),
        rewrite("layout_decision", ["Layout * * * AOS C_order;"]),
    ])
    space = SearchSpace(circuit_app, cpu2)
    config = LLMConfig(base_url=server.base_url, model="scripted", timeout_s=5, max_retries=0)
    store = TuneStore.create(tmp_path, "circuit", {})
    evaluator = PlacementEvaluator(circuit_app, cpu2)
    tune(store, TraceOptimizer(space, space.render(space.default_point()), llm=config), evaluator, iters=3)
    big, after = store.records[1:]
    assert (big.status, big.stage) == ("failed", "generate") and len(evaluator.calls) == 2
    limit = (r"the methods returned \d{6} characters of DSL statements \(layout_decision: \d{6}\), more than the "
             r"100000 a mapper may have")
    assert re.search(limit, big.feedback_text), big.feedback_text
    assert re.search(limit, server.requests[1]["messages"][-1]["content"])
    assert after.ok and "Layout * * * AOS C_order;" in after.dsl


def test_a_bad_request_and_an_unchanged_answer_use_the_iteration(tmp_path, llm_server, circuit_app, cpu2):
    """HTTP 400 is sent once more without JSON mode (servers that lack it answer 400), then fails the step; an
    answer that repeats the current code and one that is not Python are told apart."""
    def unchanged(messages):
        current = next(code for code in get_code(optimizer.agent).values() if code.startswith("def task_decision"))
        return suggest("task_decision", current)(messages)

    server = llm_server([("status", 400), ("status", 400), ("status", 400), unchanged,
                         suggest("task_decision", "def task_decision(self, tasks:\n    return []\n")])
    space = SearchSpace(circuit_app, cpu2)
    optimizer = TraceOptimizer(space, space.render(space.default_point()),
                               llm=LLMConfig(base_url=server.base_url, model="scripted", timeout_s=5, max_retries=3))
    store = TuneStore.create(tmp_path, "circuit", {})
    tune(store, optimizer, PlacementEvaluator(circuit_app, cpu2), iters=4)
    rejected, same, broken = (r.note for r in store.records[1:])
    assert rejected.startswith("LLM step failed: the model endpoint") and "answered HTTP 400" in rejected
    assert [("response_format" in r) for r in server.requests] == [True, False, True, False, True]
    assert same.startswith("LLM answer not used: the suggested code equals the current code; mapper unchanged")
    assert "HTTP 400" in same  # the failed request is named
    assert broken.startswith("LLM answer not used: the suggested code is not valid Python (line 1: ")


@pytest.mark.parametrize("var, value", [("MAPPEROPT_LLM_TIMEOUT", "-5"), ("MAPPEROPT_LLM_TIMEOUT", "0"),
                                        ("MAPPEROPT_LLM_CAP", "-1"), ("MAPPEROPT_LLM_RETRIES", "-1"),
                                        ("MAPPEROPT_LLM_RETRIES", "abc")])
def test_a_setting_out_of_range_is_refused_naming_it(monkeypatch, var, value):
    """A negative timeout reached the socket (ValueError on every request, every iteration used up); a negative
    retry count sent no request at all. Each is refused where the settings are read, naming the variable."""
    from mapperopt.errors import MapperoptError

    monkeypatch.setenv(var, value)
    with pytest.raises(MapperoptError, match=f"{var}={value}") as refused:
        LLMConfig.from_env()
    assert var in refused.value.hint


def test_doctor_names_a_bad_setting(monkeypatch):
    """doctor, the command meant to diagnose the settings, neither crashes nor calls the endpoint unreachable."""
    from mapperopt.commands import llm_check

    monkeypatch.setenv("MAPPEROPT_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MAPPEROPT_LLM_TIMEOUT", "-5")
    check = llm_check()
    assert not check.ok and check.required and "MAPPEROPT_LLM_TIMEOUT=-5" in check.detail
    assert "connect" not in check.detail and "MAPPEROPT_LLM_TIMEOUT" in check.fix


@pytest.mark.parametrize("url", ["not-a-url", "localhost:8000/v1", "ftp://host/v1", "http://"])
def test_a_base_url_that_is_not_a_url_is_named(url, tmp_path, capsys, monkeypatch):
    """doctor called an endpoint without http:// "connection refused or unreachable"; it and tune say what is wrong
    with the setting, before any request."""
    from mapperopt.cli import main
    from mapperopt.commands import llm_check

    monkeypatch.setenv("MAPPEROPT_LLM_BASE_URL", url)
    monkeypatch.setenv("MAPPEROPT_LLM_MODEL", "x")
    check = llm_check()
    assert not check.ok and check.required and "connect" not in check.detail
    assert check.detail.startswith(f"bad language-model setting: MAPPEROPT_LLM_BASE_URL={url} is not a")
    assert ("is not a URL (no http:// or https://)" in check.detail) == ("://" not in url)
    assert "http://localhost:8000/v1" in check.fix and "--llm-base-url" in check.fix
    monkeypatch.delenv("MAPPEROPT_LLM_BASE_URL")
    assert main(["tune", "circuit", "--optimizer", "trace", "--llm-base-url", url, "--runs-dir", str(tmp_path)]) == 1
    assert f"--llm-base-url={url} is not a" in capsys.readouterr().err and not any(tmp_path.iterdir())


def test_a_negative_retry_option_is_refused(tmp_path, capsys, monkeypatch):
    """--llm-retries -1 sent no request and stopped tuning with a hint to check a working endpoint; a negative
    MAPPEROPT_LLM_TIMEOUT used up every iteration and exited 0. Both are refused before anything runs."""
    from mapperopt.cli import main

    tune = ["tune", "circuit", "--optimizer", "trace", "--llm-base-url", "http://127.0.0.1:9/v1",
            "--runs-dir", str(tmp_path)]
    assert main([*tune, "--llm-retries", "-1"]) == 2
    assert "--llm-retries" in capsys.readouterr().err and not any(tmp_path.iterdir())
    monkeypatch.setenv("MAPPEROPT_LLM_TIMEOUT", "-5")
    assert main(tune) == 1
    assert "MAPPEROPT_LLM_TIMEOUT=-5" in capsys.readouterr().err and not any(tmp_path.iterdir())


def test_the_hint_fits_the_fault(llm_server, refused_url, monkeypatch):
    """A rate limit, a timeout and the per-iteration cap are not fixed by checking the endpoint and the model name:
    each hint names the setting that helps."""
    monkeypatch.setattr("mapperopt.optimizer.llm.BACKOFF_S", 0.01)
    hints = {}
    for fault, config in (("status 429", dict(timeout_s=5)), ("status 503", dict(timeout_s=5)),
                          ("timeout", dict(timeout_s=0.5)), ("cap", dict(timeout_s=60, max_model_s=0.5))):
        kind, _, arg = fault.partition(" ")
        server = llm_server([("status", int(arg))] * 2 if kind == "status" else [("sleep", 2)] * 2)
        with pytest.raises(ModelError) as failed:
            ChatModel(LLMConfig(base_url=server.base_url, model="m", max_retries=1, **config))(
                messages=[{"role": "user", "content": "hi"}])
        hints[fault] = failed.value.hint
    with pytest.raises(ModelError) as failed:
        ChatModel(LLMConfig(base_url=refused_url, model="m", timeout_s=2, max_retries=0))(
            messages=[{"role": "user", "content": "hi"}])
    hints["refused"] = failed.value.hint
    assert "MAPPEROPT_LLM_RETRIES" in hints["status 429"] and "rate" in hints["status 429"]
    assert "MAPPEROPT_LLM_TIMEOUT" in hints["timeout"] and "--llm-timeout" in hints["timeout"]
    assert "MAPPEROPT_LLM_CAP" in hints["cap"] and "--llm-cap" in hints["cap"]
    assert "MAPPEROPT_LLM_RETRIES" in hints["status 503"]
    assert "MAPPEROPT_LLM_BASE_URL" in hints["refused"]
    assert all("MAPPEROPT_LLM_BASE_URL" not in hints[f] for f in ("status 429", "timeout", "cap"))


def test_the_openai_api_is_named_in_a_sentence():
    import httpx
    import openai
    from mapperopt.optimizer.llm import describe_error

    error = openai.APIConnectionError(request=httpx.Request("POST", "https://api.openai.com/v1"))
    assert describe_error(error, LLMConfig(model="gpt-4o")) == (
        "cannot connect to the OpenAI API (connection refused or unreachable)")


def test_doctor_calls_a_failing_endpoint_failed_not_missing(llm_server, monkeypatch, capsys):
    """A configured endpoint that answers HTTP 500 is there: its row and the last line say it failed."""
    from mapperopt import commands
    from mapperopt.cli import main

    server = llm_server([("status", 500)])
    monkeypatch.setenv("MAPPEROPT_LLM_BASE_URL", server.base_url)
    monkeypatch.setattr(commands, "run_checks", lambda legion: [commands.llm_check()])
    assert main(["doctor"]) == 1
    out = capsys.readouterr()
    assert "FAILED" in out.out and "MISSING" not in out.out
    assert "failed: LLM endpoint" in out.err and "missing" not in out.err


def test_a_bad_return_value_is_blamed_on_the_method_that_returned_it(tmp_path, llm_server, circuit_app, cpu2):
    """A method returning a str, or too many statements, fails in the fixed code that joins the program: the feedback
    names the method and what to return, never "the mapper generator" (which the model must not change) nor
    mapperopt's own `raise` line."""
    server = llm_server([
        suggest("layout_decision", "def layout_decision(self, regions):\n    return ['Layout * * * SOA;'] * 9000\n"),
        suggest("task_decision", "def task_decision(self, tasks):\n    return 'Task * CPU;'\n"),
    ])
    store = scripted_tune(tmp_path, server, circuit_app, cpu2, iters=3)
    big, text = store.records[1:]
    assert (text.stage, big.stage) == ("generate", "generate")
    for record, method, what in ((text, "task_decision", "a list"), (big, "layout_decision", "fewer")):
        suggestion = record.feedback_text.split("\nSuggest: ")[1]
        assert method in suggestion and what in suggestion, record.feedback_text
        assert "mapper generator" not in record.feedback_text and "raise " not in record.feedback_text


def test_the_model_is_told_why_its_answer_was_not_used(tmp_path, llm_server, circuit_app, cpu2):
    """An answer that is not JSON, or whose suggestion is not code, uses its iteration: the next prompt says why,
    so a model that mis-formats can correct itself; a non-string code value gets a diagnosis, not a Python error."""
    def number(messages):
        name = code_names(messages[-1]["content"])["task_decision"]
        return json.dumps({"reasoning": "", "answer": "", "suggestion": {name: 42}})

    server = llm_server([lambda messages: "I would use more processors.", number,
                         rewrite("layout_decision", ["Layout * * * AOS C_order;"])])
    store = scripted_tune(tmp_path, server, circuit_app, cpu2, iters=4)
    garbage, nonstring, used = (r.note for r in store.records[1:])
    assert garbage.startswith("LLM answer not used: the answer is not JSON")
    assert re.match(r"LLM answer not used: the suggested value for __code\d+ \(task_decision\) is not code \(a "
                    r"string\) but int: 42; mapper unchanged", nonstring), nonstring
    assert used.startswith("LLM step: rewrote layout_decision")
    prompts = [r["messages"][-1]["content"] for r in server.requests]
    assert "the answer is not JSON" in prompts[1] and "is not code (a string)" in prompts[2]
    assert "not used" not in prompts[0]


def test_an_agent_error_file_says_what_ended_the_method(tmp_path, llm_server, circuit_app, cpu2, monkeypatch):
    """A method the confined child's SIGKILL ended (it killed itself, or the system did) or one stopped at its time
    limit did not raise: its iteration's agent_error.txt (the model's feedback) said under that line that the code
    "raised an exception". Each file says what happened; a method that raises is still said to have raised."""
    from mapperopt.optimizer import confine

    monkeypatch.setattr(confine, "WALL_S", 2.0)
    server = llm_server([
        suggest("task_decision", "def task_decision(self, tasks):\n    import os, signal\n"
                                 "    os.kill(os.getpid(), signal.SIGKILL)\n"),
        suggest("task_decision", "def task_decision(self, tasks):\n    while True:\n        pass\n"),
        suggest("task_decision", "def task_decision(self, tasks):\n    raise ValueError('no tasks')\n"),
    ])
    store = scripted_tune(tmp_path, server, circuit_app, cpu2, iters=4)
    killed, hung, raised = ((store.iter_dir(r.iter) / "agent_error.txt").read_text() for r in store.records[1:])
    assert "task_decision was ended by signal SIGKILL" in killed, killed
    assert "raised" not in killed and "was killed (SIGKILL) before it returned" in killed, killed
    assert "task_decision did not return within 2 s" in hung, hung
    assert "raised" not in hung and "was stopped at its time limit before it returned" in hung, hung
    assert "ValueError" in raised and "raised an exception" in raised, raised
    for text in (killed, hung, raised):
        assert "so no mapper was compiled or run" in text and "Suggest: " in text, text


def test_the_openai_key_is_used_when_mapperopt_has_none(llm_server, monkeypatch):
    """OPENAI_API_KEY (the openai library's own variable) was ignored: a placeholder key went to every endpoint, and
    OpenAI's API answered 401 with a hint that the key was refused. MAPPEROPT_LLM_API_KEY wins over it; with neither,
    the placeholder goes to a keyless local server, and a 401 says that no key was set and where to set one."""
    from mapperopt.commands import llm_check

    server = llm_server([lambda messages: "OK", lambda messages: "OK", lambda messages: "OK",
                         ("status", 401), ("status", 401)])
    monkeypatch.setenv("MAPPEROPT_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("MAPPEROPT_LLM_MODEL", "scripted")
    monkeypatch.delenv("MAPPEROPT_LLM_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    assert llm_check().ok and LLMConfig.from_env().api_key == "sk-openai"
    monkeypatch.setenv("MAPPEROPT_LLM_API_KEY", "sk-mapperopt")
    assert llm_check().ok
    monkeypatch.delenv("MAPPEROPT_LLM_API_KEY")
    monkeypatch.delenv("OPENAI_API_KEY")
    assert llm_check().ok
    assert server.keys[:3] == ["Bearer sk-openai", "Bearer sk-mapperopt", "Bearer not-needed"]
    unset = llm_check()
    assert not unset.ok and "HTTP 401" in unset.detail
    assert unset.fix.startswith("no key was set") and "refused" not in unset.fix
    assert "MAPPEROPT_LLM_API_KEY" in unset.fix and "OPENAI_API_KEY" in unset.fix
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    refused = llm_check()
    assert refused.fix.startswith("the endpoint refused the key of OPENAI_API_KEY"), refused.fix
    assert "MAPPEROPT_LLM_API_KEY" in refused.fix


def test_the_hint_for_an_unreachable_openai_api_fits_the_settings():
    """With a model alone (OpenAI's API), "cannot connect" came with a hint to check MAPPEROPT_LLM_BASE_URL, which
    the user had not set: the hint says what was reached, and names the variable as the way to another endpoint."""
    import httpx
    import openai
    from mapperopt.optimizer.llm import fault_hint

    error = openai.APIConnectionError(request=httpx.Request("POST", "https://api.openai.com/v1"))
    hint = fault_hint(error, config=LLMConfig(model="gpt-4o"))
    assert hint.startswith("check the network connection to the OpenAI API"), hint
    assert "set MAPPEROPT_LLM_BASE_URL" in hint and "check the endpoint (MAPPEROPT_LLM_BASE_URL" not in hint
    local = fault_hint(error, config=LLMConfig(base_url="http://127.0.0.1:9/v1", model="m"))
    assert "MAPPEROPT_LLM_BASE_URL usually ends in /v1" in local, local
