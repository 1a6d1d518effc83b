"""`mapperopt tune` end to end on the real Circuit application (2 CPU processors): the offline search measures,
decides the best and compares it with the start and the default mapper measured together; the Trace path compiles
exactly what a scripted model says; an interrupted run continues with the same command, one process at a time.

No test asserts that a mapper is faster: on a loaded machine no measured difference is certain
(benchmarks/tune_gain.py measures the gains). The tests shorten the protocol (`FAST`: 50 ms per execution, one or
two repeats, two final rounds) to stay fast; docs/tuning.md gives the real one.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from optimizer_support import code_names, hung_up, rewrite

from mapperopt.benchmarks import protocol
from mapperopt.cli import main
from mapperopt.errors import install_extra
from mapperopt.optimizer.base import IterationRecord, normalize_dsl
from mapperopt.optimizer import commands
from mapperopt.optimizer.commands import _latest
from mapperopt.optimizer.guided import GuidedOptimizer
from mapperopt.optimizer.space import SearchSpace
from mapperopt.optimizer.store import TuneStore

POOR = """\
# Deliberately poor: every point of every index launch on the first CPU.
Task * CPU;
mcpu = Machine(CPU);
def first_cpu(Task task) {
    return mcpu[0, 0];
}
IndexTaskMap * first_cpu;
"""
STEPS = ["--", "-i", "60"]  # an application flag after `--` replaces the size's value (ci: -i 50)
FAST = ["--min-time", "0.05", "--repeats", "1", "--max-repeats", "2", "--final-rounds", "2"]


@pytest.fixture
def poor(tmp_path) -> Path:
    path = tmp_path / "poor.dsl"
    path.write_text(POOR)
    return path


@pytest.fixture
def offline(monkeypatch):
    for var in ("MAPPEROPT_LLM_BASE_URL", "MAPPEROPT_LLM_MODEL", "MAPPEROPT_LLM_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def tune_args(runs: Path, *extra: str, baseline: str = "none") -> list[str]:
    return ["tune", "circuit", "--cpus", "2", "--baseline", baseline, "--runs-dir", str(runs), *FAST, *extra]


def start_tune(args: list[str]) -> subprocess.Popen:
    """`mapperopt tune` in a child process, whose output is read at its end, for a Ctrl-C (SIGINT) to interrupt.
    Ctrl-C gets its default action there also when this suite runs as a background job: a non-interactive shell
    starts those with SIGINT ignored, and Python then leaves it ignored (the tune would run to its end)."""
    return subprocess.Popen([sys.executable, "-m", "mapperopt.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def tune_interrupted(runs: Path, poor: Path, signum: int) -> tuple[subprocess.Popen, str]:
    """`mapperopt tune --new --iters 8` from `poor` in a child process, sent `signum` once an iteration is journaled;
    the process, ended, and its output."""
    proc = start_tune(tune_args(runs, "--iters", "8", "--new", "--start", str(poor), *STEPS))
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None and not any(
            p.read_text().strip() for p in runs.glob("circuit/tune-*/state.jsonl")):  # an iteration journaled
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()[0]
    os.kill(proc.pid, signum)
    out, _ = proc.communicate(timeout=180)
    return proc, out


def only_run(runs: Path) -> Path:
    (folder,) = (runs / "circuit").iterdir()
    return folder


def test_offline_tuning_measures_decides_and_compares(tmp_path, poor, offline, capsys, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)  # each line whole, as piped (pytest-xdist's workers set COLUMNS)
    args = tune_args(tmp_path / "runs", "--iters", "3", "--start", str(poor), *STEPS, "-ll:csize", "300",
                     baseline="default")
    assert main(args) == 0
    out = capsys.readouterr().out
    root = only_run(tmp_path / "runs")
    store = TuneStore.open(root)
    prose = " ".join(out.split())
    assert store.settings["optimizer"] == "guided" and "rule-based search" in prose and "not a language model" in prose
    assert re.search(r"iter 3/3 .* best [0-9.e+-]+ GFLOPS", prose), out  # each line has its unit
    for name in ("settings.json", "state.jsonl", "best.dsl", "history.csv", "progress.png", "summary.json"):
        assert (root / name).stat().st_size > 0, name
    for i in (1, 2, 3):
        assert (root / f"iter-{i:03d}" / "mapper.dsl").read_text() == store.records[i - 1].dsl
        result = json.loads((root / f"iter-{i:03d}" / "result.json").read_text())
        command = result["settings"]["command"]
        assert "-ll:csize 300 " in command and "-ll:csize 256" not in command and "-i 60 " in command
    # Every successful iteration names the best so far, and a change of best is justified in best.json.
    assert store.records[0].best_iter == 1
    for r in store.records[1:]:
        if r.best_iter == r.iter:
            verdict = json.loads((root / f"iter-{r.iter:03d}" / "best.json").read_text())
            assert verdict["becomes_best"] and verdict["decided_by"] in ("comparison", "re-measured together")
    # The final comparison: candidates, the start and the default mapper measured together, round by round.
    summary = json.loads((root / "summary.json").read_text())
    assert "default" in summary["measured"] and summary["start"] in summary["measured"]
    for name, m in summary["measured"].items():
        assert m["estimate"] is not None, (name, m["reason"])
        assert len(m["estimate"]["values"]) == 2 and len(m["run_dirs"]) == 2
        # relative to the tuning folder, which can be moved
        assert all(not Path(d).is_absolute() and (root / d / "result.json").exists() for d in m["run_dirs"]), m
        assert m["estimate"]["low"] <= m["estimate"]["value"] <= m["estimate"]["high"]
    # So is the run folder each result.json names: the baseline's, every round's (they kept the path the harness
    # was given, here absolute).
    results = list(root.rglob("result.json"))
    assert {p.parent.name for p in results} >= {"baseline-default", "round-1", "round-2"}, results
    for path in results:
        run_dir = json.loads(path.read_text())["run_dir"]
        assert not Path(run_dir).is_absolute() and root / run_dir == path.parent, (path, run_dir)
    best = summary["measured"][summary["best"]]["estimate"]["value"]
    candidates = [n for n in summary["measured"] if n.startswith("iter-")]  # the start (iter-1) competes
    assert summary["best"] in candidates
    assert best == max(summary["measured"][n]["estimate"]["value"] for n in candidates)
    assert (root / "best.dsl").read_text() == summary["best_dsl"] and summary["best_dsl"].splitlines()[0] in out
    for name in ("default", summary["start"]):
        if name != summary["best"]:
            vs = summary["vs"][name]
            assert vs["low"] <= vs["ratio"] <= vs["high"]
            shown = protocol.Comparison.from_json(vs)  # its decimals: 2, more near 1
            assert f"vs {name}: {vs['ratio']:.{shown.decimals()}f}x" in out
            # FAST's 2 rounds: too few for an interval, never significant (protocol.MIN_INTERVAL_VALUES)
            assert not vs["significant"] and f"vs {name}: {shown.describe()}." in out, out
    # Every figure with its unit, and the measurements' noise said: FAST's executions, calibrated to 0.05 s, are
    # short (those that ran longer, with an iteration count calibrated on a faster mapper or under load, are not).
    flat = " ".join(out.split())
    assert re.search(r"Baselines: default [0-9.e+-]+ GFLOPS", flat), out
    # Measured once, before the search, under that moment's load: the iterations' figures compare with them only
    # roughly (the best so far by the loop's rule, stated); the final comparison measures them together.
    assert re.search(r"Baselines: default [0-9.e+-]+ GFLOPS \(measured once, before the search: .* compare the "
                     r"iterations' figures with them only roughly; an iteration becomes the best so far only when .* "
                     r"re-measured together; the final comparison measures .* together\)", flat), out
    baseline = json.loads((root / "baseline-default" / "result.json").read_text())["time_s"]
    assert (f"Short measurement of the baselines: default {baseline:.2g} s measured per execution, less than the "
            "protocol's minimum of 0.5 s" in flat) == (baseline < 0.5), out
    times = {name: m["time_s"] for name, m in summary["measured"].items()}
    assert all(t > 0 for t in times.values()), times
    short = ", ".join(f"{n} {t:.2g} s" for n, t in times.items() if t < 0.5)
    assert (f"Short measurement: {short} measured per execution" in flat) if short else (
        "Short measurement: " not in flat), out
    assert "--min-time 0.05." not in flat  # the advice never asks for the value in use
    # The baselines, measured with exactly --repeats (1) execution: no spread estimate, said so.
    assert ("No spread estimate of the baselines: default measured by a single execution, which gives no interval: "
            "how much of the figure is the machine's noise is unknown; measure again with a higher --repeats."
            ) in flat, out
    # Last, the verdict of the final comparison (the iterations' table shows the loop's own figures), then, as it
    # ran at the tests' size, what the configuration says of it and of the size meant for tuning, with the start
    # program's share of the loop from its profile; then what to do next, where the pick is no clear gain.
    said = " ".join(commands.verdict(summary).split())
    after = flat[flat.index(said) + len(said):]
    assert after.startswith(" Note: size ci is the tests' size (configs/circuit.yaml: a few seconds on 2 CPU cores; "
                            "used by the tests), where a mapper can change little: the start program's tasks ran "), out
    assert re.search(r"tasks ran \d+ % of each timed iteration \(iteration 1's profile\), all a new mapping can win "
                     r"back\. Meant for tuning: --size small \(~1\.5 s measured per execution on 2 idle cores, for "
                     r"tuning and compare\)\.", after), after
    from mapperopt.benchmarks import load_config

    util = load_config("circuit").size("ci").util
    # led by the measurements too short or noisy to conclude, where the final comparison's were warned of
    warned = [title for title in ("Noisy measurement", "Short measurement") if f"{title}: " in flat]
    unsure = commands.measure_more(warned)
    step = commands.next_step(summary, start_file=str(poor),
                              processors=(store.settings["cpus"], store.settings["gpus"], util), unsure=unsure)
    assert ("Next: the final comparison's measurements were too short" in flat) == (bool(short) and bool(step)), out
    assert after.endswith(f" {' '.join(step.split())}" if step else "compare).")
    assert re.search(r"Verdict: (no mapper beat the references?|no mapper can be said to beat the references? "
                     r"without an interval \(an interval takes --final-rounds 3 or more\)|iter-\d+ beat the default "
                     r"mapper); the best", flat)


def test_the_default_start_is_not_a_gain_over_the_default_mapper(tmp_path, offline, capsys, monkeypatch):
    """`--start default` is Legion's default mapper written in the DSL: when the start stays the best, its
    comparison with the default mapper, however it measured, says that they are the same mapping. One iteration is
    said so, not "1 iterations" (the table's title, the finished run's note)."""
    args = tune_args(tmp_path / "runs", "--iters", "1", "--start", "default", baseline="default")
    assert main(args) == 0
    flat = " ".join(capsys.readouterr().out.split())
    summary = json.loads((only_run(tmp_path / "runs") / "summary.json").read_text())
    assert summary["best"] == summary["start"] == "iter-1"  # the premise: one iteration, the start's
    vs = summary["vs"]["default"]
    assert ("Best (iter-1) vs default: the same mapping (the start program is Legion's default mapper written in the "
            f"DSL, --start default), measured at "
            f"{protocol.Comparison.from_json(vs).describe()}") in flat
    assert "the two mappers' own overhead, not a gain." in flat
    assert " for 1 iteration with " in flat and "1 iterations" not in flat, flat
    assert "circuit: 1 iteration (guided)" in flat, flat

    class NewRun(Exception):
        pass

    def new_run(*_):
        raise NewRun

    monkeypatch.setattr(commands, "_new_run", new_run)
    with pytest.raises(NewRun):  # the same command again: the finished run is said
        main(args)
    assert "finished (1 iteration); starting a new one" in " ".join(capsys.readouterr().out.split())


def test_trace_compiles_what_the_model_says(tmp_path, monkeypatch, llm_server, capsys):
    spread = ["def spread(Task task) {\n    return mcpu[0, task.ipoint[0] % mcpu.size[1]];\n}",
              "IndexTaskMap calculate_new_currents,distribute_charge,update_voltages spread;"]
    server = llm_server([lambda messages: "OK",  # the endpoint's check before a new run
                         rewrite("index_task_map_decision", spread),
                         lambda messages: "```json\n{not json at all\n```",
                         ("sleep", 8), ("html", "<html><body>Bad gateway</body></html>")])
    monkeypatch.setenv("MAPPEROPT_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("MAPPEROPT_LLM_MODEL", "scripted")
    monkeypatch.setenv("MAPPEROPT_LLM_TIMEOUT", "2")
    monkeypatch.setenv("MAPPEROPT_LLM_RETRIES", "1")
    monkeypatch.setenv("MAPPEROPT_LLM_API_KEY", "sk-secret-key")
    assert main(tune_args(tmp_path / "runs", "--iters", "4", "--start", "default", "--new")) == 1
    captured = capsys.readouterr()
    assert "Stopped after 3 iterations" in captured.out and "no iteration was used up" in captured.out
    assert "answered with an HTML page, not a chat completion" in captured.err
    root = only_run(tmp_path / "runs")
    # After --new only --resume continues it; a transport setting (--llm-timeout) changed, the command continues it.
    assert f"To continue: mapperopt tune circuit --resume {root} --iters 4" in " ".join(captured.out.split())
    server.script[:] = [("status", 401)]
    assert main(tune_args(tmp_path / "runs", "--iters", "4", "--start", "default", "--llm-timeout", "3")) == 1
    captured = capsys.readouterr()
    assert f"Continuing {root}: 3 of 4 iterations done" in captured.out and only_run(tmp_path / "runs") == root
    assert "answered HTTP 401" in captured.err and "set MAPPEROPT_LLM_API_KEY" in captured.err
    store = TuneStore.open(root)
    assert store.settings["optimizer"] == "trace" and "MAPPEROPT" not in json.dumps(store.settings["llm"])
    assert "sk-secret-key" not in "".join(p.read_text() for p in root.glob("*.json*"))
    # The program the scripted answer implies is exactly the one compiled and run in iteration 2.
    space = SearchSpace(store.settings["app_description"], store.settings["machine"])
    sections = space.sections(space.default_point())
    expected = "\n".join([*sections["task"], *sections["region"], *sections["layout"], *space.prelude(),
                          *spread]) + "\n"
    run2 = root / "iter-002"
    assert normalize_dsl((run2 / "mapper.dsl").read_text()) == normalize_dsl(expected)
    assert "spread" in (run2 / "mapper.cc").read_text()
    assert store.records[1].ok and not store.records[1].cached
    notes = [r.note for r in store.records]
    assert notes[2].startswith("LLM answer not used: the answer is not JSON")
    assert [r.cached for r in store.records] == [False, False, True]
    assert [(r.llm or {}).get("total_tokens", 0) for r in store.records] == [0, 120, 120]


def test_finishing_a_trace_run_with_no_iteration_left_needs_no_endpoint(tmp_path, monkeypatch, llm_server, capsys):
    """An extension stopped by the model leaves the folder's iterations all done and its final comparison set aside:
    finishing it calls no model, but an endpoint setting (any, even a dead one) was required. Now none is."""
    server = llm_server([lambda messages: "OK", rewrite("layout_decision", ["Layout * * * AOS C_order;"])])
    monkeypatch.setenv("MAPPEROPT_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("MAPPEROPT_LLM_MODEL", "scripted")
    monkeypatch.setenv("MAPPEROPT_LLM_RETRIES", "0")
    monkeypatch.delenv("MAPPEROPT_LLM_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-only-for-this-test")  # sent to this endpoint: the opening line says so
    runs = tmp_path / "runs"
    assert main(tune_args(runs, "--iters", "2", "--optimizer", "trace", "--start", "default")) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"the language model scripted at {server.base_url} (key from OPENAI_API_KEY)." in out, out
    assert "sk-only" not in out
    monkeypatch.delenv("OPENAI_API_KEY")
    root = only_run(runs)
    server.script[:] = [("status", 500)]
    capsys.readouterr()
    assert main(["tune", "--resume", str(root), "--iters", "3"]) == 1
    assert not (root / "summary.json").exists() and len(TuneStore.open(root).records) == 2
    # the stop says where the summary it set aside went, and how to finish without the model
    assert (f"The final comparison of these 2 iterations is kept in {root / 'final-1'} (its summary.json); --iters 2 "
            "finishes the run without the model") in " ".join(capsys.readouterr().out.split())
    for var in ("MAPPEROPT_LLM_BASE_URL", "MAPPEROPT_LLM_MODEL", "MAPPEROPT_LLM_RETRIES"):
        monkeypatch.delenv(var)
    capsys.readouterr()
    requests = len(server.requests)
    assert main(["tune", "--resume", str(root), "--iters", "2"]) == 0, capsys.readouterr().err
    out = " ".join(capsys.readouterr().out.split())
    assert (root / "summary.json").exists() and len(server.requests) == requests
    # the model that proposed its iterations, as recorded, not gpt-4o at OpenAI's API
    assert f"with trace — OptoPrime with the language model scripted at {server.base_url}" in out, out
    # with an iteration left to propose, an endpoint is still required
    assert main(["tune", "--resume", str(root), "--iters", "3"]) == 1
    assert "which needs a language-model endpoint" in " ".join(capsys.readouterr().err.split())


def test_a_failed_iterations_line_says_why_and_where_its_feedback_is(tmp_path, monkeypatch, llm_server, capsys):
    """A failed iteration's line gave only its category (`failed (parse) ... dsl.syntax`): the error text was in its
    feedback file alone, which the line did not name. tune's line and compare's (the same records, any optimizer)
    give the first line of the error, clipped, and the file; a failure said before is named by its iteration."""
    from mapperopt.optimizer.compare import progress_line

    raises = ("def task_decision(self, tasks):\n    return tasks[999]\n")
    server = llm_server([lambda messages: "OK", rewrite("task_decision", ["Task calculate_new_currents TPU;"]),
                         lambda messages: json.dumps({"reasoning": "", "answer": "", "suggestion": {
                             code_names(messages[-1]["content"])["task_decision"]: raises}}),
                         rewrite("task_decision", ["Task calculate_new_currents TPU;"]),
                         lambda messages: "I would use the GPU."])
    monkeypatch.setenv("MAPPEROPT_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("MAPPEROPT_LLM_MODEL", "scripted")
    monkeypatch.setenv("MAPPEROPT_LLM_RETRIES", "0")
    monkeypatch.setenv("COLUMNS", "250")  # the table's rows on one line each
    assert main(tune_args(tmp_path / "runs", "--iters", "5", "--optimizer", "trace", "--start", "default")) == 0
    out = capsys.readouterr().out
    root = only_run(tmp_path / "runs")
    # a progress line longer than the width goes on in lines indented under its figures: read it whole
    flat = re.sub(r"\n {4,}(?=\S)", " ", out)
    lines = {int(m[1]): m[0] for m in re.finditer(r"^ *iter (\d+)/5 .*$", flat, re.M)}
    # the table: an unused answer's row (the unchanged, failing mapper served again) says that the model's answer
    # was not used, not only the earlier mapper's failure
    rows = {int(m[1]): m[0] for m in re.finditer(r"^│ (\d+) .*$", out, re.M)}
    assert "answer not used" in rows[5] and "answer not used" not in rows[4], (rows[4], rows[5])
    assert "unknown processor kind 'TPU'" in lines[2] and "see iter-002/feedback.txt" in lines[2], lines[2]
    assert "IndexError" in lines[3] and "see iter-003/agent_error.txt" in lines[3], lines[3]
    assert "same reason as iteration 2" in lines[4] and "TPU" not in lines[4], lines[4]
    assert all(len(lines[i]) < 400 for i in lines)
    # the model's program is located in the file it is kept in, not in `<mapper>`
    assert f"{root / 'iter-002' / 'mapper.dsl'}:1:" in (root / "iter-002" / "feedback.txt").read_text()
    store = TuneStore.open(root)
    line = progress_line("trace-1", store.records[1], 5, root=root)
    assert "unknown processor kind 'TPU'" in line and f"see {root.name}/iter-002/feedback.txt" in line, line


def test_an_unfinished_run_with_another_endpoint_is_named(tmp_path, monkeypatch, llm_server, capsys):
    """The endpoint is part of what finds a folder: after a local server moved to another port, the same command
    started afresh and named neither the unfinished run of the old endpoint nor how to continue it. It does."""
    old = llm_server([lambda messages: "OK", ("status", 500)])
    monkeypatch.setenv("MAPPEROPT_LLM_BASE_URL", old.base_url)
    monkeypatch.setenv("MAPPEROPT_LLM_MODEL", "scripted")
    monkeypatch.setenv("MAPPEROPT_LLM_RETRIES", "0")
    runs = tmp_path / "runs"
    command = tune_args(runs, "--iters", "3", "--optimizer", "trace", "--start", "default")
    assert main(command) == 1
    root = only_run(runs)
    moved = llm_server([("status", 401)])
    monkeypatch.setenv("MAPPEROPT_LLM_BASE_URL", moved.base_url)
    capsys.readouterr()
    assert main(command) == 1  # the new endpoint refuses the key: nothing is made
    out = " ".join(capsys.readouterr().out.split())
    assert (f"Note: {root} holds an unfinished tuning of circuit made with another language model or endpoint "
            f"(the model scripted at {old.base_url})") in out, out
    assert f"mapperopt tune --resume {root} --iters 3" in out, out
    assert only_run(runs) == root


def test_the_command_that_continues_keeps_the_model_options(tmp_path, monkeypatch, llm_server, capsys):
    """The stop's command to continue dropped the --llm-* options given: a continued run takes the command's model
    settings, so without --llm-base-url it had no endpoint. They are kept; the key, a secret, is not repeated."""
    server = llm_server([lambda messages: "OK", ("status", 500)])
    for var in ("MAPPEROPT_LLM_BASE_URL", "MAPPEROPT_LLM_MODEL", "MAPPEROPT_LLM_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    runs = tmp_path / "runs"
    assert main(tune_args(runs, "--iters", "2", "--optimizer", "trace", "--start", "default", "--new",
                          "--llm-base-url", server.base_url, "--llm-model", "scripted", "--llm-retries", "0",
                          "--llm-api-key", "sk-secret")) == 1
    out = " ".join(capsys.readouterr().out.split())
    root = only_run(runs)
    assert (f"To continue: mapperopt tune circuit --resume {root} --iters 2 --final-rounds 2 --llm-base-url "
            f"{server.base_url} --llm-model scripted --llm-retries 0") in out, out
    assert "sk-secret" not in out


@pytest.mark.parametrize("fault", ["refused", "401"])
def test_a_new_trace_run_checks_the_endpoint_before_measuring(tmp_path, monkeypatch, llm_server, refused_url, capsys,
                                                             fault):
    """A dead or misconfigured endpoint was found only after the build, the baselines and iteration 1 (minutes at a
    real size): a new run asks it for one token first, as doctor does, and stops before making a folder."""
    server = llm_server([("status", 401)])
    url = refused_url if fault == "refused" else server.base_url
    monkeypatch.setenv("MAPPEROPT_LLM_BASE_URL", url)
    monkeypatch.setenv("MAPPEROPT_LLM_MODEL", "scripted")
    monkeypatch.setenv("MAPPEROPT_LLM_RETRIES", "0")
    monkeypatch.delenv("MAPPEROPT_LLM_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    runs = tmp_path / "runs"
    assert main(tune_args(runs, "--iters", "2", "--optimizer", "trace", "--start", "default", "--new")) == 1
    captured = capsys.readouterr()
    err = " ".join(captured.err.split())
    if fault == "refused":
        assert f"cannot connect to the model endpoint {url}" in err, err
    else:
        assert f"{url} answered HTTP 401" in err and "no key was set" in err and len(server.requests) == 1, err
    assert "Measuring" not in captured.out and "iter 1" not in captured.out, captured.out
    assert "nothing was measured" in " ".join(captured.out.split()), captured.out
    assert not list(runs.glob("circuit/tune-*"))


def test_trace_without_the_llm_extra_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "opto" else real(name, *a))
    monkeypatch.setenv("MAPPEROPT_LLM_MODEL", "scripted")
    assert main(tune_args(tmp_path / "runs", "--iters", "1", "--optimizer", "trace")) == 1
    err = capsys.readouterr().err
    assert "the trace optimizer needs the optional package 'trace-opt'" in err
    assert install_extra("llm") in " ".join(err.split())
    assert not (tmp_path / "runs").exists()  # nothing was measured before the check
    # Neither an endpoint nor the package: both said at once (the package was named only once an endpoint was set).
    from mapperopt.optimizer.llm import ENV

    for var in ENV.values():
        monkeypatch.delenv(var, raising=False)
    assert main(tune_args(tmp_path / "runs", "--iters", "1", "--optimizer", "trace")) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "the trace optimizer needs a language-model endpoint, and the optional package 'trace-opt'" in err, err
    assert install_extra("llm") in err and "--llm-base-url" in err, err


def test_interrupted_tuning_continues_with_the_same_command(tmp_path, poor, offline, monkeypatch, capsys):
    runs = tmp_path / "runs"
    # 8 iterations: room for the Ctrl-C to land before the end on a fast machine
    args = tune_args(runs, "--iters", "8", "--start", str(poor), *STEPS)
    proc = start_tune(args)
    deadline = time.monotonic() + 600  # generous: a loaded machine makes calibration and iterations slow
    journal = None
    while time.monotonic() < deadline and proc.poll() is None:
        folders = list((runs / "circuit").glob("tune-*")) if (runs / "circuit").exists() else []
        journal = folders[0] / "state.jsonl" if folders else None
        if journal and journal.exists() and len(journal.read_text().splitlines()) >= 2:
            break
        time.sleep(0.05)
    assert journal is not None and len(journal.read_text().splitlines()) >= 2, proc.poll()
    root = journal.parent
    os.kill(proc.pid, signal.SIGINT)  # Ctrl-C during a later iteration (at once: a loaded machine is no race)
    out, _ = proc.communicate(timeout=180)  # seconds when idle (1.2 s measured)
    assert proc.returncode == 130 and "The same command continues" in out, out
    assert not re.search(r"^aborted$", out, re.M), out  # said once: no bare `aborted` after the message
    # Outputs are rewritten after every iteration, not only at the end.
    assert (root / "history.csv").exists() and (root / "progress.png").exists() and (root / "best.dsl").exists()
    # While another process holds the folder (here this one), a second tune of it stops at once, naming it.
    holder = TuneStore.open(root)
    holder.lock()
    try:
        second = subprocess.run([sys.executable, "-m", "mapperopt.cli", "tune", "circuit", "--resume", str(root)],
                                capture_output=True, text=True, timeout=120)
    finally:
        holder.unlock()
    assert second.returncode == 1 and f"is in use by process {os.getpid()}" in second.stderr, second.stderr
    before = journal.read_bytes()
    done = len(before.splitlines())
    assert 2 <= done < 8
    stamps = {p: p.stat().st_mtime_ns for i in range(1, done + 1) for p in (root / f"iter-{i:03d}").iterdir()}

    assert main(args) == 0  # the same command
    assert list((runs / "circuit").glob("tune-*")) == [root]
    store = TuneStore.open(root)
    assert [r.iter for r in store.records] == list(range(1, 9))
    assert journal.read_bytes().startswith(before)  # appended, never rewritten
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps  # finished iterations were not run again
    assert (root / "summary.json").exists()
    # The proposals are those an uninterrupted run makes after the same measurements.
    s = store.settings
    space = SearchSpace(s["app_description"], s["machine"])
    replay = GuidedOptimizer(space, s["start_dsl"], seed=s["seed"])
    for i, record in enumerate(store.records):
        assert replay.propose(store.records[:i]).dsl == record.dsl
        replay.observe(record)
    # Finished: the same command starts a new folder, saying so and how to extend the finished run instead.
    assert _latest(runs, "circuit", s["request"], None) == (None, root)

    class NewRun(Exception):
        pass

    def new_run(*_):
        raise NewRun

    monkeypatch.setattr(commands, "_new_run", new_run)
    capsys.readouterr()
    with pytest.raises(NewRun):
        main(args)
    out = " ".join(capsys.readouterr().out.split())
    assert f"The run of this command in {root} finished (8 iterations); starting a new one" in out, out
    assert f"--resume {root} --iters 16" in out
    with pytest.raises(NewRun):  # --new: no such message
        main([*args[:-len(STEPS)], "--new", *STEPS])
    assert "finished" not in capsys.readouterr().out


def test_interrupted_new_run_says_to_resume_its_folder(tmp_path, poor, offline):
    """With --new the same command would start another run: the message gives only the --resume command."""
    runs = tmp_path / "runs"
    proc, out = tune_interrupted(runs, poor, signal.SIGINT)
    root = only_run(runs)
    flat = " ".join(out.split())
    assert proc.returncode == 130 and "The same command continues" not in flat, out
    assert f"To continue: mapperopt tune circuit --resume {root} --iters 8" in flat, out
    n, noun = re.search(r"Interrupted after (\d+) (iterations?)\.", flat).groups()
    assert noun == ("iteration" if n == "1" else "iterations"), out


def test_an_interrupt_while_an_iteration_is_forced_to_disk_counts_it(tmp_path, poor, offline, capsys, monkeypatch):
    """A Ctrl-C or SIGTERM that lands while the journal's new record is forced to disk (fsync: long on a loaded
    machine) left it in the journal but not counted: "Interrupted after 0 iterations" with iteration 1 kept."""
    from mapperopt.optimizer import store as store_module

    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(store_module.os, "fsync", interrupted)
    assert main(tune_args(tmp_path / "runs", "--iters", "3", "--new", "--start", str(poor), *STEPS)) == 130
    root = only_run(tmp_path / "runs")
    assert [r.iter for r in TuneStore.open(root).records] == [1]
    assert "Interrupted after 1 iteration. To continue" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_interrupt_as_ctrl_c_does(tmp_path, poor, offline, signum):
    """`kill PID` (SIGTERM, as `timeout` and job systems stop a process) ended `tune` without a word, and so did
    SIGHUP (a closed terminal, a dropped ssh connection); it now stops as Ctrl-C does, saying how to continue, with
    the signal's exit status, and the journal keeps every finished iteration."""
    runs = tmp_path / "runs"
    proc, out = tune_interrupted(runs, poor, signum)
    root = only_run(runs)
    flat = " ".join(out.split())
    assert proc.returncode == 128 + signum, out
    n = int(re.search(r"Interrupted after (\d+) iterations?\. To continue: mapperopt tune circuit --resume "
                      rf"{re.escape(str(root))} --iters 8", flat)[1])
    assert [r.iter for r in TuneStore.open(root).records] == list(range(1, n + 1))


def test_a_terminal_that_hung_up_leaves_sighups_exit_status(tmp_path, poor, offline):
    """After a real hang-up, writing the "Interrupted ..." line to the terminal, which is gone, failed (EIO): `tune`
    ended with status 1 (and a traceback no one could read) instead of SIGHUP's, 129. Every finished iteration
    stays in the journal."""
    runs = tmp_path / "runs"
    proc, out = hung_up(tune_args(runs, "--iters", "8", "--new", "--start", str(poor), *STEPS),
                        lambda: any(p.read_text().strip() for p in runs.glob("circuit/tune-*/state.jsonl")))
    assert proc.returncode == 128 + signal.SIGHUP, out
    records = TuneStore.open(only_run(runs)).records
    assert records and [r.iter for r in records] == list(range(1, len(records) + 1))


# Run with `python -m`, as `start_tune` runs the CLI: a Ctrl-C lands while Python evaluates code given as a string,
# as a namedtuple or dataclass being made does (many of them during matplotlib's first import, after iteration 1).
CTRL_C_IN_STRING_CODE = """
import runpy
from mapperopt.optimizer import store

def plot_progress(*args, **kwargs):
    exec("import os, signal, time; os.kill(os.getpid(), signal.SIGINT); time.sleep(30)")

store.plot_progress = plot_progress
runpy.run_module("mapperopt.cli", run_name="__main__", alter_sys=True)
"""


def test_ctrl_c_inside_string_evaluated_code_still_exits_130(tmp_path, poor, offline):
    """The interpreter marks a KeyboardInterrupt that ends code evaluated from a string as unhandled, even when tune
    handles it, and `python -m` then ends the process by SIGINT after its exit status 130 (seen once, under load)."""
    (tmp_path / "ctrl_c_driver.py").write_text(CTRL_C_IN_STRING_CODE)
    runs = tmp_path / "runs"
    proc = subprocess.run([sys.executable, "-m", "ctrl_c_driver", *tune_args(runs, "--iters", "3", "--new", "--start",
                                                                            str(poor), *STEPS)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])},
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as `start_tune`
    root = only_run(runs)
    assert "Interrupted after 1 iteration." in proc.stdout and f"--resume {root}" in proc.stdout, proc.stdout
    assert proc.returncode == 130, proc.stdout


# A Ctrl-C while the plot's first import of matplotlib (and numpy) runs code in C that turns every error into an
# ImportError (numpy's import of datetime's C interface; pybind11's "initialization failed").
CTRL_C_IN_IMPORT = """
import os, signal, sys
from mapperopt import interrupts
from mapperopt.optimizer import store

interrupts.watch()  # as `mapperopt.cli.main`

class CtrlC:
    def find_spec(self, name, path, target=None):
        if name == "datetime":
            os.kill(os.getpid(), signal.SIGINT)

sys.meta_path.insert(0, CtrlC())
try:
    store.progress_figure([])
except KeyboardInterrupt:
    sys.exit(130)
"""


# The same Ctrl-C arriving while a class of matplotlib is made: Python 3.11 wraps what a descriptor's __set_name__
# raises into a RuntimeError ("Error calling __set_name__ ..."), as CI saw in matplotlib.scale.
CTRL_C_IN_SET_NAME = CTRL_C_IN_IMPORT.replace('"datetime"', '"matplotlib.scale"').replace(
    """            os.kill(os.getpid(), signal.SIGINT)
""", """            class Descriptor:
                def __set_name__(self, owner, attribute):
                    os.kill(os.getpid(), signal.SIGINT)
                    sum(range(1000))  # the handler raises here

            class Made:
                field = Descriptor()
""")


@pytest.mark.parametrize("script", [CTRL_C_IN_IMPORT, CTRL_C_IN_SET_NAME], ids=["import", "set_name"])
def test_ctrl_c_during_the_plots_first_import_stays_a_ctrl_c(script):
    """tune and compare say how to continue and exit 130 on a KeyboardInterrupt; this one used to escape as an
    ImportError (exit 1, a traceback). A fresh interpreter: the plot imports matplotlib, numpy and datetime first."""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as `start_tune`
    assert done.returncode == 130, done.stdout + done.stderr


def test_ctrl_c_while_setting_up_leaves_no_folder_and_says_what_to_do(tmp_path, offline):
    """Ctrl-C while tune describes the machine and measures the baselines: no half-made folder is left behind (the
    same command could never continue it) and the message says that the same command starts again."""
    runs = tmp_path / "runs"
    proc = start_tune(tune_args(runs, "--iters", "1", baseline="both"))
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None and not list(runs.glob("circuit/tune-*/settings.json")):
        time.sleep(0.02)
    assert proc.poll() is None, proc.communicate()[0]
    os.kill(proc.pid, signal.SIGINT)  # while the baselines are measured
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, out
    assert not re.search(r"^aborted$", out, re.M), out  # said once: no bare `aborted` after the message
    assert "Interrupted while setting up" in out and "The same command starts again." in " ".join(out.split())
    assert out.startswith("Describing circuit and the machine...\nMeasuring baselines...\n"), out  # piped: lines
    assert list(runs.glob("circuit/tune-*")) == []


def test_a_folder_whose_set_up_was_killed_is_not_continued_and_says_what_to_do(tmp_path, offline, capsys):
    """SIGKILL while tune measures the baselines leaves the folder (nothing can remove it): the same command starts
    a new one, and --resume of it stops with what to do (it used to tune on without the baselines and the
    calibrated iteration count that the run asked for)."""
    runs = tmp_path / "runs"
    args = tune_args(runs, "--iters", "1", baseline="default")
    proc = start_tune(args)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None and not list(runs.glob("circuit/tune-*/baseline-*")):
        time.sleep(0.02)
    assert proc.poll() is None, proc.communicate()[0]
    os.kill(proc.pid, signal.SIGKILL)  # while the baselines are measured
    proc.communicate(timeout=60)
    root = only_run(runs)
    capsys.readouterr()
    assert main(["tune", "circuit", "--resume", str(root)]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"error: {root}: its set-up (describing the application and the machine, measuring the baselines) " \
           "never finished, so it cannot be continued" in err, err
    assert "hint: the same tune command without --resume starts a new folder; this one can be deleted" in err, err
    assert not (root / "iter-001").exists()


def test_tuning_uses_the_cores_it_has(monkeypatch):
    """Without --cpus, tuning a benchmark on CPUs uses every core less the utility processors (a user's program:
    its size's count, tested with the application file)."""
    from mapperopt.benchmarks import load_config
    from mapperopt.optimizer.commands import default_cpus

    ci = load_config("circuit").size("ci")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)))
    assert default_cpus(ci, gpus=0, bench="circuit") == 8 - ci.util
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert default_cpus(ci, gpus=0, bench="circuit") == 1
    gpu = load_config("circuit").size("gpu")
    assert default_cpus(gpu, gpus=1, bench="circuit") == gpu.cpus


def test_a_start_program_stopped_by_check_prints_its_diagnostic(tmp_path, offline, capsys):
    """Like `run`, tune prints the diagnostics of a start file that `check` refuses, source line, caret and hints:
    before anything is measured (tests/optimizer/test_cli_names.py has every error of a file named)."""
    start = tmp_path / "bad.dsl"
    start.write_text("Task * CPU;\nRegion * * CPU FBMEM;\n")
    assert main(tune_args(tmp_path / "runs", "--iters", "1", "--start", str(start))) == 1
    out, err = capsys.readouterr()
    assert re.search(r"^  2 \| Region \* \* CPU FBMEM;\n +\| +\^+", err, re.M), err
    assert re.search(r"^  hint: ", err, re.M), err
    assert f"{start}:2:" in err and "<mapper>" not in err, err  # the user's file, as check names it
    assert "iter 1/1" not in out and not (tmp_path / "runs").exists(), out
    # Nothing succeeded yet: no best, not "best 0" (in the line as in the table's best column).
    failed = IterationRecord(iter=1, dsl="Task * CPU;", key="k", status="failed", stage="check",
                             category="dsl.semantic", throughput=None, unit=None, best_throughput=0.0)
    line = " ".join(commands._line(failed, 1).split())
    assert line == "iter 1/1 [red]failed[/] (check) - best: none yet dsl.semantic", line
    assert commands._row(failed)[2:4] == ("-", "-")


def test_the_header_counts_executions_and_a_failed_line_gives_the_best_its_unit(tmp_path, offline, capsys):
    """`--repeats 2 --max-repeats 2` is two executions per mapper (not '2-2'); a failed iteration's line names the
    unit of the best so far, which comes from a working mapper (the failed one has none)."""
    args = tune_args(tmp_path / "runs", "--iters", "1", "--start", "default")
    args[args.index("--repeats") + 1] = "2"  # FAST's --max-repeats is 2: an option is given once
    main(args)
    out = capsys.readouterr().out
    # (not "2-2" anywhere: a folder's name, made of the time and a hash, may hold it)
    assert "Each mapper: 2 executions of at least 0.05 s measured" in out and "2-2 executions" not in out, out
    failed = IterationRecord(iter=2, dsl="Task * CPU;", key="k", status="failed", stage="timeout",
                             category="timeout", throughput=None, unit=None, best_throughput=0.1143)
    assert " ".join(commands._line(failed, 3, "GFLOPS").split()) == (
        "iter 2/3 [red]failed[/] (timeout) - best 0.1143 GFLOPS timeout")
    # A user's program whose metric is a time (lower is better): the time first, its throughput in 1/ms after, as
    # run's table gives them (it printed "0.0005639 1/ms (1773 ms)").
    timed = dataclasses.replace(failed, status="ok", stage=None, category="performance", throughput=0.0005639,
                                unit="1/ms", best_throughput=0.0005639)
    assert " ".join(commands._line(timed, 3).split()) == (
        "iter 2/3 [green]ok[/] 1773 ms (throughput 0.0005639 1/ms) best 1773 ms (throughput 0.0005639 1/ms) "
        "performance")


def test_resuming_a_finished_run_without_more_iterations_leaves_it_alone(tmp_path, offline, capsys):
    """`--resume DIR` of a finished run with no larger --iters has nothing to do: it says so and how to extend the
    run, and the folder stays as it was (it used to measure the final comparison again and rewrite summary.json).
    Options given with other values than the folder's own settings, which override them, are named, not silently
    ignored."""
    runs = tmp_path / "runs"
    assert main(tune_args(runs, "--iters", "1")) == 0
    root = only_run(runs)
    assert (root / "summary.json").exists()

    def snapshot() -> dict:
        return {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in root.rglob("*") if p.is_file()}

    before = snapshot()
    capsys.readouterr()
    # --repeats 1 is the folder's own: not named
    assert main(["tune", "--resume", str(root), "--iters", "1", "--seed", "7", "--cpus", "1", "--repeats", "1"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"{root} is finished with 1 iteration: nothing to do" in out, out
    assert f"mapperopt tune --resume {root} --iters 11" in out, out
    assert "Note: --cpus, --seed: ignored; a resumed run keeps its folder's settings" in out, out
    assert snapshot() == before
    assert main(["tune", "--resume", str(root)]) == 0  # its own count
    out = " ".join(capsys.readouterr().out.split())
    assert "nothing to do" in out and "ignored" not in out, out
    assert snapshot() == before
    # --final-rounds is this command's, not the folder's: here nothing is measured, and that is said
    assert main(["tune", "--resume", str(root), "--final-rounds", "3"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Note: --final-rounds 3: ignored; the final comparison of a finished run is not measured again" in out, out
    assert snapshot() == before


MINE = """\
# my circuit mapper
Task * GPU,CPU;                              # GPU first where there is one
Region * * GPU FBMEM;
InstanceLimit calculate_new_currents 1;
mcpu = Machine(CPU);
def spread(Task task) {
    return mcpu[0, task.ipoint[0] % mcpu.size[1]];
}
IndexTaskMap calculate_new_currents spread;
"""


def test_a_start_file_is_told_what_is_not_kept_and_gets_the_best_as_its_edit(tmp_path, offline, capsys):
    """`tune --start FILE` wrote a best.dsl of a few lines of the search's own (comments, functions, map and GPU
    statements gone, `Task * GPU,CPU` made `Task * CPU`) and said nothing. Now it says so first, and writes
    best-from-start.dsl beside best.dsl: the file kept, edited to map as best.dsl does on this machine."""
    start = tmp_path / "mine.dsl"
    start.write_text(MINE)
    assert main(tune_args(tmp_path / "runs", "--iters", "2", "--start", str(start), *STEPS)) == 0
    flat = " ".join(capsys.readouterr().out.split())
    assert (f"Note: {start} is not edited: the search writes programs of its own from what the file decides on "
            "this machine (2 CPU), and they do not keep its comments; its functions (spread); its IndexTaskMap "
            "statements as written") in flat, flat
    assert "best.dsl is the file itself when it stays the best" in flat, flat
    assert "`Task * GPU,CPU` becomes `Task * CPU`" in flat, flat
    root = only_run(tmp_path / "runs")
    edit = (root / "best-from-start.dsl").read_text()
    assert f"The same mapping as an edit of {start} (its comments, functions and statements for other machines " \
           f"kept): {root / 'best-from-start.dsl'}" in flat, flat
    for line in ("# my circuit mapper", "Task * GPU,CPU;", "Region * * GPU FBMEM;", "def spread(Task task) {"):
        assert line in edit, (line, edit)
    s = TuneStore.open(root).settings
    space = SearchSpace(s["app_description"], s["machine"])
    best = (root / "best.dsl").read_text()
    assert space._placed_alike(edit) == space._placed_alike(best), (edit, best)
    capsys.readouterr()
    main(["check", str(root / "best-from-start.dsl"), "--bench", "circuit", "--machine", "1x0x2"])
    assert "W300" not in capsys.readouterr().out  # no statement of the file that a later one overrides


def test_extending_a_finished_run_keeps_its_earlier_final_comparison(tmp_path, offline, capsys):
    """`--resume DIR --iters N` of a finished run measures a new final comparison; the earlier one (summary.json and
    its final/ executions) is moved to final-1/, and the new summary.json names it under `replaced` (it used to be
    deleted)."""
    runs = tmp_path / "runs"
    assert main(tune_args(runs, "--iters", "1")) == 0
    root = only_run(runs)
    first = json.loads((root / "summary.json").read_text())
    executions = sorted(p.relative_to(root / "final") for p in (root / "final").rglob("*") if p.is_file())
    assert executions
    assert main(["tune", "--resume", str(root), "--iters", "2", "--final-rounds", "1"]) == 0
    summary = json.loads((root / "summary.json").read_text())
    assert summary["rounds"] == 1 and summary["replaced"] == ["final-1"]
    kept = json.loads((root / "final-1" / "summary.json").read_text())
    assert {k: v for k, v in kept.items() if k != "measured"} == {k: v for k, v in first.items() if k != "measured"}
    assert [m["estimate"] for m in kept["measured"].values()] == [m["estimate"] for m in first["measured"].values()]
    # its executions moved with it, and the summary names them where they are now
    assert sorted(p.relative_to(root / "final-1") for p in (root / "final-1").rglob("*")
                  if p.is_file() and p.name != "summary.json") == executions
    assert all((root / d).is_dir() and Path(d).parts[0] == "final-1"  # relative to the folder, as every path in it
               for m in kept["measured"].values() for d in m["run_dirs"])


def test_a_smaller_iters_than_the_folder_holds_is_said_truthfully(tmp_path, offline, capsys, monkeypatch):
    """The same command with a smaller --iters than its unfinished folder holds (here 3 iterations, its final
    comparison never measured) printed "3 of 2 iterations done" and "iter 3/2": it says what the folder holds and
    that the final comparison covers all of it, and counts the lines over the folder's iterations."""
    monkeypatch.delenv("COLUMNS", raising=False)
    runs = tmp_path / "runs"
    assert main(tune_args(runs, "--iters", "3", "--start", "default")) == 0
    root = only_run(runs)
    (root / "summary.json").unlink()  # as a run killed in its final comparison leaves it
    capsys.readouterr()
    assert main(tune_args(runs, "--iters", "2", "--start", "default")) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"Continuing {root}: it already holds 3 iterations, more than --iters 2: no iteration is added, and " \
           "its final comparison covers all 3" in out, out
    assert "of 2 iterations done" not in out and "/2 " not in out and "iter 3/3" in out, out
    assert (root / "summary.json").exists()


def test_an_extended_run_records_its_iteration_count(tmp_path, offline, capsys):
    """settings.json kept the first command's --iters after the run was extended (4, with 6 iterations in the
    journal). It records the count the run was extended to, which is no part of what identifies a folder (its
    `request`): the same command still finds it, and without --iters it is finished with its own count."""
    runs = tmp_path / "runs"
    assert main(tune_args(runs, "--iters", "1")) == 0
    root = only_run(runs)
    first = TuneStore.open(root).settings
    assert first["iters"] == 1
    assert main(tune_args(runs, "--iters", "2")) == 0  # the same command with more iterations continues it
    assert list((runs / "circuit").glob("tune-*")) == [root]
    store = TuneStore.open(root)
    assert len(store.records) == 2 and store.settings["iters"] == 2
    assert {k: v for k, v in store.settings.items() if k != "iters"} == {k: v for k, v in first.items()
                                                                           if k != "iters"}
    assert _latest(runs, "circuit", first["request"], None) == (None, root)
    assert _latest(runs, "circuit", first["request"], 3) == (root, None)
    assert main(["tune", "--resume", str(root), "--iters", "3"]) == 0
    assert TuneStore.open(root).settings["iters"] == 3
    capsys.readouterr()
    assert main(["tune", "--resume", str(root)]) == 0
    assert f"{root} is finished with 3 iterations: nothing to do" in " ".join(capsys.readouterr().out.split())


def test_an_extension_that_dies_before_its_final_comparison_is_not_finished(tmp_path, offline, capsys, monkeypatch):
    """An extended run that dies after its last iteration but before its final comparison (a SIGKILL, or the pipe
    it prints to closed: Python raises BrokenPipeError at the next print) is not finished: the next command measures
    the final comparison of all its iterations. It was "finished with 2 iterations: nothing to do", with the
    summary.json of the run before the extension, which had not seen iteration 2."""
    runs = tmp_path / "runs"
    assert main(tune_args(runs, "--iters", "1")) == 0
    root = only_run(runs)

    def dies(*args, **kwargs):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(commands, "final_comparison", dies)
    with pytest.raises(SystemExit):  # click's exit on a closed pipe
        main(["tune", "--resume", str(root), "--iters", "2"])
    monkeypatch.undo()
    assert len(TuneStore.open(root).records) == 2
    capsys.readouterr()
    assert main(["tune", "--resume", str(root), "--iters", "2"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "nothing to do" not in out, out
    assert "Measured together" in out, out
    summary = json.loads((root / "summary.json").read_text())
    assert summary["replaced"] == ["final-1"]  # the run's first final comparison, kept


def test_the_hint_of_an_interrupted_final_comparison_keeps_its_rounds(tmp_path, offline, monkeypatch, capsys):
    """The command an interrupted final comparison suggests measures it in the rounds this command asked for (it
    used to drop --final-rounds, which is no setting of the folder, and so measure in the default 5). The message
    wraps where the output wraps, the command kept whole."""
    def interrupted(*a, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(commands, "final_comparison", interrupted)
    runs = tmp_path / "runs"
    monkeypatch.delenv("COLUMNS", raising=False)  # piped: the message on one line, for grep and logs
    assert main(tune_args(runs, "--iters", "1", "--final-rounds", "2")) == 130
    again = f"mapperopt tune circuit --resume {only_run(runs)} --iters 1 --final-rounds 2"
    piped = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("Interrupted in the final"))
    assert piped.endswith(f"The same command continues; or: {again}"), piped
    # At 80 columns (it was one line of about 300): the prose wrapped, the command whole on a line of its own.
    monkeypatch.setenv("COLUMNS", "80")
    assert main(tune_args(runs, "--iters", "1", "--final-rounds", "2")) == 130
    out = capsys.readouterr().out
    said = out[out.index("Interrupted in the final"):].splitlines()
    assert said[-1] == again and all(len(line) <= 80 for line in said[:-1]), out
    assert " ".join(said) == piped, out


def test_a_timeout_the_executions_do_not_fit_in_is_refused_after_the_baselines(tmp_path, capsys):
    """`--timeout 1.2 --min-time 0.5` passed the up-front rule (more than twice --min-time), but Legion's start-up
    and the application's set-up come on top of the measured time: every iteration, Legion's default mapping too,
    timed out, and the feedback blamed the mappings. Once the references have run, what an execution costs besides
    its measured time is known: the --timeout is refused then, naming it, and no folder is left."""
    runs = tmp_path / "runs"
    code = main(["tune", "stencil", "--size", "ci", "--iters", "1", "--min-time", "0.5", "--timeout", "1.1",
                 "--repeats", "1", "--runs-dir", str(runs)])
    out = capsys.readouterr()
    text = " ".join((out.out + out.err).split())
    assert code == 1, text
    assert "--timeout 1.1" in text and "nothing was tuned" in text, text
    assert ("each execution took here besides it (Legion's start-up and the application's set-up" in text
            or "ran past it" in text), text
    assert "iter 1/1" not in text and list(runs.glob("stencil/tune-*")) == [], text


def test_a_folder_with_a_damaged_settings_file_is_named(tmp_path, capsys):
    store = TuneStore.create(tmp_path, "circuit", {"optimizer": "guided", "iters": 3, "seed": 0})
    store.unlock()
    path = store.root / "settings.json"
    path.write_text(path.read_text()[:60])  # cut short, as a crash of the file system can leave it
    assert main(["tune", "--resume", str(store.root)]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"error: {path} is damaged: not valid JSON (" in err, err
    path.write_text("[]")  # valid JSON of the wrong shape: the same error
    assert main(["tune", "--resume", str(store.root)]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"error: {path} is damaged: not a JSON object (a list)" in err, err
    assert "hint: restore the tuning folder from a copy, or start a new one with `--new`" in err, err


def test_tuning_warns_once_of_more_processors_than_cores(tmp_path, offline, capsys, monkeypatch):
    """`--cpus 2` (2 CPU and 1 utility processor) on a machine that gives the run 2 cores: tuning decides on the
    timings that sharing cores slows and makes noisier, and said nothing of it (`run` did)."""
    monkeypatch.setenv("COLUMNS", "400")  # one line each
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert main(tune_args(tmp_path / "runs", "--iters", "1", "--start", "default")) == 0
    out = capsys.readouterr().out
    assert out.count("More processors than cores: ") == 1, out
    assert ("More processors than cores: 2 CPU and 1 utility processor, 3 in all, on the 2 cores this machine gives "
            "the run: they share cores") in out, out
    assert "no placement to tune" not in out, out  # 2 CPU processors: a placement to tune


def test_a_best_that_maps_as_the_default_mapper_is_not_a_gain_over_it(tmp_path, offline, capsys):
    """A start file that maps as Legion's default mapper, the best after one iteration: its comparison with the
    default mapper says that they are the same mapping, as for `--start default` (it reported a speed-up)."""
    start = tmp_path / "default.dsl"
    start.write_text("Task * CPU;\nRegion * * CPU SYSMEM;\nLayout * * * SOA F_order;\n")
    assert main(tune_args(tmp_path / "runs", "--iters", "1", "--start", str(start), baseline="default")) == 0
    flat = " ".join(capsys.readouterr().out.split())
    summary = json.loads((only_run(tmp_path / "runs") / "summary.json").read_text())
    assert summary["best"] == "iter-1" and summary["best_vs_default"] == [], summary
    vs = protocol.Comparison.from_json(summary["vs"]["default"]).describe()
    assert f"Best (iter-1) vs default: the same mapping (iter-1 maps as Legion's default mapper), measured at {vs}" \
        in flat, flat
    assert re.search(r"x the default mapper's throughput \((\d+ % (faster|slower), )?[^()]*the same mapping\)",
                     flat), flat  # the verdict's


def test_damaged_or_lost_outputs_of_a_finished_run_do_not_stop_its_extension(tmp_path, offline, capsys):
    """A damaged summary.json or baseline result.json stopped `tune --resume DIR --iters N` with "restore it from a
    copy", which a user rarely has: the summary is kept as it is beside the executions it summarised, a reference's
    result.json (its figure is in settings.json) is left out with a note, and the run goes on. A lost summary.json
    made the finished final comparison read as one cut short."""
    runs = tmp_path / "runs"
    assert main(tune_args(runs, "--iters", "1", baseline="default")) == 0
    root = only_run(runs)
    summary, result = root / "summary.json", root / "baseline-default" / "result.json"
    summary.write_text('{"x": [1,')
    result.write_text('{"a')
    capsys.readouterr()
    assert main(["tune", "--resume", str(root), "--iters", "2", "--final-rounds", "1"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"Note: {summary} is damaged: not valid JSON (" in out, out
    assert "it is kept as it is in final-1/ with the final comparison it summarised" in out, out
    assert f"Note: {result} is damaged: not valid JSON (" in out, out
    assert "its unit and noise are not shown (its figure is in settings.json)" in out, out
    assert (root / "final-1" / "summary.json").read_text() == '{"x": [1,'
    assert json.loads(summary.read_text())["replaced"] == ["final-1"]

    summary.unlink()  # lost: the folder is not finished, and its final comparison is measured again
    assert main(["tune", "--resume", str(root), "--final-rounds", "1"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Interrupted" not in out, out
    assert ("final-2, a final comparison without its summary.json (cut short before it ended, or its summary.json "
            "was lost; it holds runs of") in out, out


def test_a_folder_where_a_tuning_folder_keeps_a_file_is_named(tmp_path, capsys):
    store = TuneStore.create(tmp_path, "circuit", {"optimizer": "guided", "iters": 3, "seed": 0})
    store.unlock()
    path = store.root / "state.jsonl"
    path.unlink()
    path.mkdir()
    assert main(["tune", "--resume", str(store.root)]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"error: {path} is a folder, where mapperopt keeps a file" in err, err
    assert "hint: remove or rename it, then run the same command again" in err, err


def test_a_file_where_the_final_comparisons_folder_belongs_is_named_before_anything_moves(tmp_path, offline,
                                                                                         capsys):
    """A file named final (a stray `echo x > final`) where the final comparison's executions go: extending a
    finished run renamed it to final-1, then making final-1/ ended in a FileExistsError traceback; an unfinished run
    renamed it to a file final-1 at its final comparison. Both are refused, naming it, before anything moves or is
    measured."""
    runs = tmp_path / "runs"
    assert main(tune_args(runs, "--iters", "1")) == 0
    root = only_run(runs)
    shutil.rmtree(root / "final")
    (root / "final").write_text("x\n")
    for finished in (True, False):
        if not finished:  # its final comparison lost: measured at the next command
            (root / "summary.json").unlink()
        before = sorted(p.relative_to(root) for p in root.rglob("*") if p.name != "owner.json")
        capsys.readouterr()
        assert main(["tune", "--resume", str(root), "--iters", "2" if finished else "1"]) == 1, finished
        err = " ".join(capsys.readouterr().err.split())
        assert (f"error: {root / 'final'} cannot be used: part of this path is a file where a folder belongs"
                in err), err
        assert "hint: remove or rename it, then run the same command again" in err, err
        assert sorted(p.relative_to(root) for p in root.rglob("*") if p.name != "owner.json") == before, finished


def test_a_start_files_warnings_are_said_once_before_anything_is_measured(circuit_app, cpu2, tmp_path, capsys):
    """tune/compare --start FILE: the checker's warnings on the start file are printed as `check` (and `run
    --mapper`) print them, not only into the iterations' check.txt files."""
    start = tmp_path / "wrongmap.dsl"
    text = "m = Machine(CPU);\ndef f(Task task) { return m[0, 0]; }\nIndexTaskMap check_circuit f;\n"
    start.write_text(text)
    commands.check_start_file(str(start), text, ["--bench", "circuit"], circuit_app, cpu2.to_json())
    err = capsys.readouterr().err
    assert err.count("warning[W305]: IndexTaskMap has no effect on check_circuit") == 1, err
    assert f"{start}:3:" in err, err


def test_a_start_file_that_names_no_task_beside_the_programs_kept_mapper_is_warned_of(circuit_app, cpu2, tmp_path,
                                                                                      capsys):
    """tune --keep-app-mapper --start FILE: a start file whose statements name no task leaves every task to the
    program's own mapper (a `*` names none), so that every candidate made from it is that mapper: tune says so
    (W326, as `check` does) before it measures anything. It said nothing."""
    kept = {**circuit_app, "keep_app_mapper": True, "own_mapper": "my_mapper"}
    start = tmp_path / "start.dsl"
    for text, warned in (("Task * CPU;\nLayout * * * AOS;\n", True), ("Task update_voltages CPU;\n", False)):
        start.write_text(text)
        commands.check_start_file(str(start), text, ["--app", "prog", "--keep-app-mapper"], kept, cpu2.to_json())
        err = capsys.readouterr().err
        said = "warning[W326]: no statement names a task" in err and "'my_mapper' maps every task" in err
        assert said == warned, err


def test_llm_options_with_an_optimizer_without_a_model_get_a_note(tmp_path, offline, capsys):
    """`tune --optimizer guided --llm-base-url URL --llm-api-key KEY` ran with no word that the guided optimizer
    uses no language model, so that the options did nothing: a note names them, as --resume names the options it
    ignores."""
    assert main(["tune", "circuit", "--optimizer", "guided", "--llm-base-url", "http://127.0.0.1:9", "--llm-api-key",
                 "sk-x", "--iters", "1", "--cpus", "1", "--baseline", "none", "--runs-dir", str(tmp_path / "runs"),
                 "--min-time", "0.05", "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("Note: --llm-base-url, --llm-api-key: ignored; the guided optimizer proposes without a language model"
            in out), out


def test_the_readme_says_what_its_command_does_again_after_a_finished_run():
    """Run again after it finished, the README's tune command starts a new run (minutes), saying so and giving
    `--resume DIR --iters N` to extend the finished one instead; the README said only that the same command
    continues an interrupted run, and a reader who ran it again to see the summary waited for a new run."""
    readme = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text().split())
    start = readme.index("Run the same command again")
    said = readme[start:readme.index("## ", start)]  # to the next section
    assert "finished" in said and "starts a new" in said and "--resume DIR --iters N" in said, said


def test_a_tune_on_one_cpu_says_at_its_start_that_there_is_no_placement_to_tune(tmp_path, offline, capsys,
                                                                                monkeypatch):
    """On a 2-core machine a tune gets 1 CPU processor (the other core is the utility processor's) and no GPU: every
    task runs on that one processor, which the Next line said only after minutes of tuning. It is said before the
    first iteration, with what the search can still change there; the Next line refers to it rather than saying it
    all again, and refers to the Short measurement line rather than repeating its advice (each was said twice)."""
    monkeypatch.delenv("COLUMNS", raising=False)  # each line whole, as piped (pytest-xdist's workers set COLUMNS)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    args = tune_args(tmp_path / "runs", "--iters", "1", "--start", "default")
    args[args.index("--cpus") + 1] = "1"
    assert main(args) == 0
    out = capsys.readouterr().out
    start = ("Note: with 1 CPU processor and no GPU every task runs on that one processor, so there is no placement "
             "to tune: this machine gives the run 2 cores, 1 of them the utility processor's, so no more CPU "
             "processors fit here; on a machine with more cores, give --cpus N")
    assert start in out and out.index(start) < out.index("iter 1/1"), out
    note = next(line for line in out.splitlines() if line.startswith(start))
    settings = json.loads((only_run(tmp_path / "runs") / "settings.json").read_text())
    groups = {d.group for d in SearchSpace(settings["app_description"], settings["machine"]).decisions}
    assert {"layout", "limit", "index_map"} <= groups, groups  # the premise: placement is searched, to no effect
    assert "This tune can still change the " in note and "layouts" in note and "instance limits" in note, note
    assert ("memories" in note) == ("memory" in groups) and "not where tasks run" in note, note
    flat = " ".join(out.split())
    assert flat.count("every task runs on that one processor") == 1, out
    [step] = [line for line in out.splitlines() if line.startswith("Next: ")]
    assert "1 CPU processor and no GPU: no placement to tune (see the note at the start)" in step, step
    # the ci size's executions, calibrated to --min-time 0.05 s: short, and its advice said once, where it is warned of
    assert "Short measurement: " in out, out
    assert flat.count("--min-time 0.5") == 1, out
    assert step.startswith("Next: the final comparison's measurements were too short") and (
        "to conclude: tune again as Short measurement" in step), step


def test_the_readme_says_how_to_install_without_its_tune_and_how_to_stop_the_tune():
    """The README's one command installs and then tunes for a quarter of an hour or more: it says how to install
    without the tune (the command up to its install, written out) and that Ctrl-C stops the tune, which the same
    command continues."""
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    command = next(line for line in text.splitlines() if line.startswith("python3 -m venv .venv && "))
    install, tune = command.split(" && .venv/bin/mapperopt ")
    assert tune.startswith("tune "), command  # the premise: the main command tunes after installing
    readme = " ".join(text.split())
    said = readme[readme.index("## Install and tune"):readme.index("## Run the tests")]
    assert f"To install without tuning, run the command up to `pip install .` (`{install}`)" in said, said
    assert "Ctrl-C stops it safely" in said and "the same command continues it later" in said, said


def test_the_readme_says_that_its_command_on_2_cores_has_no_placement_to_tune():
    """The README's main command, timed on 2 cores, runs there on 1 CPU processor and no GPU, where tuning cannot
    change where tasks run; the README did not say so, and `tune` said it only at the end of the run."""
    readme = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text().split())
    start = readme.index("## Install and tune")
    said = readme[start:readme.index("## ", start + 3)]
    assert "The tune then takes 14-25 minutes on 2 shared cores" in said, said  # the premise: the command's machine
    assert "On 2 cores a run gets 1 CPU processor" in said and "not where tasks run" in said, said
    assert "`--cpus N` on a machine with more cores, or with GPUs" in said, said


def test_the_tests_size_note_wraps_as_the_summary_around_it(tmp_path, offline, capsys, monkeypatch):
    """At 80 columns the summary's Verdict and Next paragraphs were wrapped, but the note between them that size ci
    is the tests' size stayed one line of about 330 columns. That note came only at the end, after the minutes were
    spent (compare says it at its start): tune says it before the first iteration too. The `Best mapper:` line is
    wrapped there; the start stays the pick, which the Next line keeps (Legion's default mapper), so the line gives no
    command to run the pick (it read as the advice): the pick is printed to inspect. The sentence that ties the pick
    to the iterations' table is wrapped too."""
    monkeypatch.setenv("COLUMNS", "80")
    assert main(tune_args(tmp_path / "runs", "--iters", "1", "--start", "default")) == 0
    out = capsys.readouterr().out
    early = out.index("Note: size ci is the tests' size")
    assert early < out.index("iter 1/1"), out
    said = " ".join(out[early:out.index("Meant for tuning")].split())
    assert said.endswith("where a mapper can change little."), out  # no profile yet: compare's words
    note = out[out.index("Note: size ci is the tests' size", early + 1):out.index("Next: ")]
    assert "Meant for tuning: --size small" in " ".join(note.split()), out
    assert max(len(line) for line in note.splitlines()) <= 80, out
    root = only_run(tmp_path / "runs")
    tie = out[out.index("The pick is iteration 1"):out.index("Best mapper")]
    assert " ".join(tie.split()) == ("The pick is iteration 1, the iterations table's best, measured again in 2 "
                                     "rounds: its figure above is this measurement's, not its row's in that "
                                     "table."), out
    assert max(len(line) for line in tie.splitlines()) <= 80, out
    lines = out[out.index("Best mapper"):].splitlines()
    at = next(i for i, line in enumerate(lines) if line.endswith("printed below to inspect"))
    assert lines[at + 1] == (root / "best.dsl").read_text().splitlines()[0], out
    assert "run it with" not in " ".join(lines[:at + 1]), out
    assert all(len(line) <= 80 or str(root) in line for line in lines[:at + 1]), out
    step = " ".join(out[out.index("Next: "):].split())
    assert "keep Legion's default mapper (run without --mapper): tuning found nothing faster" in step, out


def test_a_journal_figure_its_iterations_result_disagrees_with_is_refused(tmp_path, offline, capsys):
    """A throughput edited in state.jsonl (valid JSON still) was replayed as measured: "iter 1/2 ok 99 GFLOPS" and
    kept in history.csv. The iteration's result.json, the measurement itself, is what it is checked against."""
    runs = tmp_path / "runs"
    assert main(tune_args(runs, "--iters", "1")) == 0
    root = only_run(runs)
    journal, result = root / "state.jsonl", root / "iter-001" / "result.json"
    measured = json.loads(result.read_text())["trimmed_mean"]
    journal.write_text(json.dumps({**json.loads(journal.read_text()), "throughput": 99.0}) + "\n")
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert main(["tune", "--resume", str(root), "--iters", "2", "--final-rounds", "1"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"error: {journal} line 1 is damaged: it records iteration 1's throughput as 99.0, but {result} " \
           f"measured {measured!r}" in err, err
    assert f"hint: set its 'throughput' back to {measured!r}" in err, err
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


def test_a_hand_edited_best_program_is_kept_aside_when_the_run_is_extended(tmp_path, offline, capsys, monkeypatch):
    """best.dsl, the file the docs tell users to take and edit, was written over without a word when its run was
    extended: the edit was lost."""
    monkeypatch.delenv("COLUMNS", raising=False)
    runs = tmp_path / "runs"
    assert main(tune_args(runs, "--iters", "1")) == 0
    root = only_run(runs)
    best = root / "best.dsl"
    edited = best.read_text() + "# my edit\n"
    best.write_text(edited)
    capsys.readouterr()
    assert main(["tune", "--resume", str(root), "--iters", "2", "--final-rounds", "1"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    (kept,) = root.glob("best-edited-*.dsl")
    assert kept.read_text() == edited
    assert f"Note: {best} is none of the programs this run recorded (an edit?): it is kept as {kept}, and best.dsl " \
           "is written anew" in out, out
    assert best.read_text() != edited


def test_a_runs_folder_that_cannot_be_written_is_found_before_anything_is_run(tmp_path, offline, capsys):
    """tune described the program and the machine (runs of the program) and said "Measuring baselines..." before it
    found that it could not write its folder; compare finds it at once."""
    (tmp_path / "file").write_text("")
    runs = tmp_path / "file" / "runs"
    assert main(tune_args(runs, "--iters", "1", baseline="default")) == 1
    captured = capsys.readouterr()
    assert "Describing" not in captured.out and "Measuring" not in captured.out, captured.out
    err = " ".join(captured.err.split())
    assert re.search(rf"error: {re.escape(str(runs))}/circuit/tune-\S+ cannot be used: part of this path is a file "
                     "where a folder belongs", err), err


def test_an_unfinished_run_with_other_measurement_options_is_named(tmp_path, offline, capsys, monkeypatch):
    """The same command with another --repeats (a typo-level difference) started a new folder without a word of the
    unfinished one, which only its own options continue."""
    monkeypatch.delenv("COLUMNS", raising=False)
    runs = tmp_path / "runs"
    assert main(tune_args(runs, "--iters", "1")) == 0
    old = only_run(runs)
    (old / "summary.json").unlink()  # as a run killed in its final comparison leaves it
    capsys.readouterr()
    again = tune_args(runs, "--iters", "1")
    again[again.index("--repeats") + 1] = "2"
    assert main(again) == 0
    out = " ".join(capsys.readouterr().out.split())
    (new,) = set((runs / "circuit").iterdir()) - {old}
    assert f"Note: {old} holds an unfinished tuning of circuit with other options (--repeats 1 there, 2 here); it " \
           f"is left alone, and this command tunes in {new}. To continue that one with its own options: mapperopt " \
           f"tune --resume {old} --iters 1" in out, out


def test_a_damaged_tuning_folder_is_skipped_with_a_note_only_where_the_command_may_have_meant_it(tmp_path, capsys):
    """A newer tuning folder of the program whose settings.json is damaged: the lookup of the command's own latest
    run (`_latest`) says it skips it and finds the older, unfinished one; the lookups of other runs
    (`_unfinished_tunes`) skip it without a word. A folder whose set-up never finished is no run to continue."""
    request = {"program": None, "size": "ci"}
    older = TuneStore.create(tmp_path, "circuit", {"iters": 5, "iterations": 10, "request": request},
                             root=tmp_path / "circuit" / "tune-20260101-000000-aaaa")
    older.unlock()
    unset = TuneStore.create(tmp_path, "circuit", {"iters": 5, "request": request},  # no calibrated count yet
                             root=tmp_path / "circuit" / "tune-20260102-000000-bbbb")
    unset.unlock()
    damaged = tmp_path / "circuit" / "tune-20260103-000000-cccc"
    damaged.mkdir()
    (damaged / "settings.json").write_text("{")
    assert _latest(tmp_path, "circuit", request, None) == (older.root, None)
    assert f"Note: {damaged / 'settings.json'} is damaged: not valid JSON" in capsys.readouterr().err
    assert [root for root, _ in commands._unfinished_tunes(tmp_path, "circuit", None)] == [older.root]
    assert capsys.readouterr().err == ""
