"""Test support for the optimizer (imported by conftest.py and the tests): a deterministic placement-model
evaluator, a local OpenAI-compatible HTTP server answering with scripted chat completions, and a command run on a
terminal that hangs up."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable

from mapperopt.descriptions import AppDescription
from mapperopt.optimizer.agent import METHOD_INPUTS, METHODS
from mapperopt.optimizer.loop import Evaluation
from mapperopt.records import Attempt, RunResult

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
ARGUMENTS = {METHODS[s]: METHOD_INPUTS[s] for s in METHODS}  # method name -> its parameter's name
# Relative cost of one point of each Circuit task in the placement model (calculate_new_currents dominates, as in
# the real application).
COSTS = {"calculate_new_currents": 10.0, "distribute_charge": 2.0, "update_voltages": 1.0}




class PlacementEvaluator:
    """A deterministic stand-in for the benchmark harness, for tests of the loop's mechanics (cache, journal,
    resume, optimizer contract) that must run in milliseconds and give the same numbers every time.

    A program is parsed and checked like the real harness does (`parse`/`check` failures give the same stages);
    its placement of every point of every index launch is decided by the DSL's reference evaluator; throughput is
    the total work divided by the busiest processor's work (Legion's default slicing counts as an even spread).
    """

    settings = {"model": "placement", "version": 1}

    def __init__(self, app: dict, machine):
        self.app = AppDescription.from_json(app)
        self.machine = machine
        self.calls: list[str] = []

    def evaluate(self, dsl: str, out_dir: Path, best) -> Evaluation:
        from mapperopt.autoguide import explain, feedback_text
        from mapperopt.dsl.checker import check
        from mapperopt.dsl.errors import render_all
        from mapperopt.dsl.evaluator import Evaluator
        from mapperopt.dsl.parser import parse
        from mapperopt.errors import MapperoptError

        self.calls.append(dsl)
        base = {"app": "circuit", "mapper": "inline", "dsl": dsl, "run_dir": str(out_dir),
                "settings": {"gpus": 0, "cpus": self.machine.count("CPU")}}
        try:
            program = parse(dsl, "<mapper>")
        except MapperoptError as exc:
            result = RunResult(status="failed", stage="parse", reason=str(exc).splitlines()[0], log=str(exc), **base)
        else:
            errors = [d for d in check(program, self.app, self.machine) if d.is_error]
            if errors:
                log = render_all(errors, dsl)
                result = RunResult(status="failed", stage="check", reason=log.splitlines()[0], log=log, **base)
            else:
                result = self._run(Evaluator(program, self.machine, self.app), base)
        feedback = explain(result, best=best.throughput if best else None)
        return Evaluation(result, feedback, feedback_text(feedback, result))

    def _run(self, ev, base: dict) -> RunResult:
        from mapperopt.errors import MapperoptError

        procs = self.machine.count("CPU")
        load: dict[tuple, float] = {}
        total = 0.0
        try:
            for task in self.app.tasks:
                if not task.index_launched or task.domain is None:
                    continue
                cost = COSTS.get(task.name, 0.5)
                points = [(i,) for i in range(task.domain[0])]
                for p in points:
                    placed = ev.place(task.name, p, task.domain)
                    where = (placed.kind, placed.node, placed.index) if placed is not None else ("even", p[0] % procs)
                    load[where] = load.get(where, 0.0) + cost
                    total += cost
        except MapperoptError as exc:
            log = f"[mapperopt] error {exc}"
            return RunResult(status="failed", stage="run", reason=log, log=log, **base)
        throughput = round(100.0 * total / max(load.values()), 6)
        line = {"throughput": throughput, "unit": "GFLOPS", "time_s": 1.0 / throughput, "verified": True}
        return RunResult(status="ok", throughput=throughput, unit="GFLOPS", time_s=line["time_s"],
                         attempts=(Attempt(0, 1.0, result=line),), **base)




# ----------------------------------------------------------------------------------------------- fake LLM server


def code_names(prompt: str) -> dict[str, str]:
    """Method name -> trace variable name (`__codeN`), read from the #Variables section of an OptoPrime prompt."""
    return {m: v for v, m in re.findall(r"\(code\) (__code\d+):def (\w+)\(", prompt)}


def completion(content: str, prompt_tokens: int = 100, completion_tokens: int = 20) -> dict:
    """A chat-completions response body with `content` and usage counts."""
    return {"id": "cmpl-test", "object": "chat.completion", "created": int(time.time()), "model": "scripted",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


class ScriptedLLMServer:
    """An OpenAI-compatible chat-completions server on 127.0.0.1 that answers each request with the next entry of
    `script`: a function of the request's messages returning the answer's content (str), or a tuple
    ("sleep", seconds) to answer only after that long, ("status", code) for an HTTP error, ("html", text) for a
    200 whose body is an HTML page (as a proxy's login or error page), ("json", text) for a 200 whose JSON body
    is `text` as it is (e.g. cut off), or ("drip", seconds) for a valid answer sent one byte every that many seconds
    (a slow server or proxy: each read gets a byte long before any per-read timeout).

    Attributes:
        base_url: the endpoint to configure (`http://127.0.0.1:<port>/v1`).
        requests: the JSON bodies received, in order.
        keys: each request's `Authorization` header (None when it had none), in order.
        hung_up: for each dripped answer the client gave up on, the `time.time()` its connection was found closed.
    """

    def __init__(self, script: list):
        self.script = list(script)
        self.requests: list[dict] = []
        self.keys: list[str | None] = []
        self.hung_up: list[float] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests.append(body)
                owner.keys.append(self.headers.get("Authorization"))
                action = owner.script.pop(0) if owner.script else ("status", 500)
                if isinstance(action, tuple) and action[0] == "sleep":
                    time.sleep(action[1])
                    action = lambda messages: "{}"  # noqa: E731 (the client has given up by now)
                if isinstance(action, tuple) and action[0] == "drip":
                    return self.drip(json.dumps(completion("{}")).encode(), action[1])
                kind = "application/json"
                if isinstance(action, tuple) and action[0] == "status":
                    payload, code = {"error": {"message": "scripted failure", "type": "server_error"}}, action[1]
                elif isinstance(action, tuple) and action[0] in ("html", "json"):
                    payload, code, kind = None, 200, "text/html" if action[0] == "html" else kind
                else:
                    payload, code = completion(action(body["messages"])), 200
                data = action[1].encode() if payload is None else json.dumps(payload).encode()
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", kind)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and closed the connection

            def drip(self, data: bytes, interval: float) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                for i in range(len(data)):
                    try:
                        self.wfile.write(data[i:i + 1])
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        owner.hung_up.append(time.time())
                        return
                    time.sleep(interval)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()




def rewrite(method: str, statements: list[str]) -> Callable[[list], str]:
    """A scripted answer that replaces `method` with one returning `statements`."""

    def answer(messages: list) -> str:
        name = code_names(messages[-1]["content"])[method]
        body = "".join(f"        {json.dumps(s)},\n" for s in statements)
        code = f"def {method}(self, {ARGUMENTS[method]}):\n    return [\n{body}    ]\n"
        return json.dumps({"reasoning": "scripted", "answer": "", "suggestion": {name: code}})

    return answer



def markers_clear_and_inside(fig) -> None:
    """Asserts that every marker drawn in `fig`'s axes (a line's markers, a scatter's points) lies inside the axes,
    marker included (not clipped at an edge), and that no legend covers any of them."""
    import numpy as np

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    frame = ax.get_window_extent(renderer)
    legends = [box.get_window_extent(renderer) for box in [ax.get_legend(), *fig.legends] if box is not None]
    points = []  # (x, y, radius) in pixels
    for line in ax.get_lines():
        if line.get_marker() not in (None, "None", "", " ") and len(line.get_xdata()):
            radius = line.get_markersize() * fig.dpi / 72 / 2
            xy = ax.transData.transform(np.column_stack([line.get_xdata(), line.get_ydata()]))
            points += [(x, y, radius, line.get_label()) for x, y in xy]
    for scatter in ax.collections:
        sizes = scatter.get_sizes() if hasattr(scatter, "get_sizes") else []
        offsets = scatter.get_offsets()
        if len(sizes) and len(offsets):
            radius = float(np.sqrt(max(sizes))) * fig.dpi / 72 / 2
            points += [(x, y, radius, scatter.get_label()) for x, y in ax.transData.transform(offsets)]
    assert points
    for x, y, r, label in points:
        assert y + r <= frame.y1 + 0.5, (label, y, r, frame.y1)  # the bottom edge is the axis failures are drawn on
        for box in legends:
            assert x + r < box.x0 or x - r > box.x1 or y + r < box.y0 or y - r > box.y1, (label, x, y, box)


def hung_up(args: list[str], started: Callable[[], bool]) -> tuple[subprocess.Popen, str]:
    """`mapperopt ARGS` in a child process whose terminal (a pseudo-terminal, its controlling one) hangs up once
    `started()`: its other side is closed, as a closed terminal window or a dropped ssh connection closes it, and the
    kernel sends the child SIGHUP; every later write to the terminal fails (EIO). The process, ended, and what it
    printed before."""
    import fcntl
    import select
    import termios

    master, slave = os.openpty()

    def on_terminal() -> None:  # a session of its own, whose controlling terminal is the pseudo-terminal
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        for signum in (signal.SIGINT, signal.SIGHUP):  # their default actions, also under a `nohup` test run
            signal.signal(signum, signal.SIG_DFL)

    proc = subprocess.Popen([sys.executable, "-m", "mapperopt.cli", *args], stdin=slave, stdout=slave, stderr=slave,
                            preexec_fn=on_terminal)
    os.close(slave)
    out, deadline = b"", time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None and not started():
        if select.select([master], [], [], 0.05)[0]:  # read, so that the terminal's buffer never fills up
            out += os.read(master, 1 << 16)
    assert proc.poll() is None, out.decode(errors="replace")
    os.close(master)  # the hang-up
    proc.wait(timeout=180)
    return proc, out.decode(errors="replace")[-3000:]
