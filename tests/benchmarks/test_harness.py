"""The benchmark harness: configurations, execution and failure classification (with small real processes), and
real runs of Circuit and Stencil at size `ci` (docs/running.md)."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mapperopt import toolchain
from mapperopt.autoguide import explain, feedback_text
from mapperopt.benchmarks import known_benchmarks, load_config, run_benchmark
from mapperopt.benchmarks.apps import _app_args, _override_flags
from mapperopt.benchmarks.harness import _grown, execute, first_error
from mapperopt.errors import MapperoptError
from mapperopt.records import RunResult

APPS = ["circuit", "stencil"]
GOOD = ('MAPPEROPT_RESULT {"schema": "mapperopt.result/1", "app": "fake", "time_s": 0.5, "iterations": 3, '
        '"warmup": 1, "throughput": 2.0, "unit": "GFLOPS", "verified": true, "check": {"kind": "fake"}}')


# ------------------------------------------------------------------------------------------------ configurations

@pytest.mark.parametrize("app", APPS)
def test_config_has_the_three_sizes(app):
    cfg = load_config(app)
    assert {"ci", "small", "gpu"} <= set(cfg.sizes)
    assert cfg.metric == "throughput" and cfg.unit == "GFLOPS"
    ci, gpu = cfg.size("ci"), cfg.size("gpu")
    # CI runs on 2 cores: one CPU worker and one utility thread, no GPU.
    assert (ci.cpus, ci.util, ci.gpus) == (1, 1, 0)
    assert gpu.gpus == 1 and gpu.fsize and gpu.zsize
    assert all(cfg.iterations_flag in s.args for s in cfg.sizes.values())
    assert "-ll:gpu" not in ci.resource_flags(ci.cpus, 0)
    assert gpu.resource_flags(2, 2)[-6:] == ["-ll:gpu", "2", "-ll:fsize", str(gpu.fsize), "-ll:zsize", str(gpu.zsize)]


def test_known_benchmarks_and_misuse(tmp_path):
    assert set(APPS) <= set(known_benchmarks())
    with pytest.raises(MapperoptError, match="unknown benchmark 'nope'") as info:
        load_config("nope")
    assert info.value.hint is None
    with pytest.raises(MapperoptError, match="unknown benchmark 'circut'") as info:
        load_config("circut")
    assert info.value.hint == "did you mean 'circuit'?"
    with pytest.raises(MapperoptError, match="no size 'huge'"):
        load_config("circuit").size("huge")
    # Never "add it to" the installed package's configuration: a size that exists, or the flags after `--`.
    with pytest.raises(MapperoptError, match="no size 'huge'") as info:
        load_config("stencil").size("huge")
    assert "configs" not in info.value.hint and "--size small" in info.value.hint, info.value.hint
    assert "after `--`" in info.value.hint and "-nx 2004 -ny 2004" in info.value.hint, info.value.hint
    with pytest.raises(MapperoptError, match="unknown benchmark"):
        run_benchmark("nope")
    with pytest.raises(MapperoptError, match="no size"):
        run_benchmark("circuit", size="huge")
    with pytest.raises(MapperoptError, match="not found"):
        run_benchmark("circuit", mapper=Path("/nonexistent/m.dsl"))
    # `--mapper expertt` is a file name that does not exist: the hint names the keyword it is close to.
    with pytest.raises(MapperoptError, match="mapper file expertt not found") as info:
        run_benchmark("circuit", mapper=Path("expertt"))
    assert info.value.hint.startswith("did you mean --mapper expert? --mapper takes default"), info.value.hint
    with pytest.raises(MapperoptError, match="must be a whole number"):
        run_benchmark("circuit", extra_args=("-l", "many"), out_dir=tmp_path / "run")
    assert not (tmp_path / "run").exists()


@pytest.mark.skipif(toolchain.has_cuda_driver(), reason="this machine has a GPU")
def test_gpus_without_a_driver_fail_early(tmp_path):
    with pytest.raises(MapperoptError, match="no GPU on this machine"):
        run_benchmark("circuit", gpus=1, out_dir=tmp_path)
    assert not list(tmp_path.iterdir())


@pytest.mark.skipif(toolchain.has_cuda_driver(), reason="this machine has a GPU")
def test_gpus_without_a_driver_name_where_the_count_came_from():
    """The refusal names what asked for the GPUs (--gpus, the flag after `--`, or the size) and hints at that."""
    cases = [({"gpus": 2}, "--gpus 2 asks for 2 GPUs", "give --gpus 0"),
             ({"extra_args": ("-ll:gpu", "1")}, "`-ll:gpu 1` after `--` asks for 1 GPU",
             "remove `-ll:gpu 1` after `--`"),
             ({"size": "gpu"}, "size 'gpu' asks for 1 GPU", "give --gpus 0 or a size without GPUs")]
    for options, source, hint in cases:
        with pytest.raises(MapperoptError) as info:
            run_benchmark("circuit", **options)
        assert f"no GPU on this machine: {source}, but no NVIDIA driver was found" in info.value.message, options
        assert info.value.hint.startswith(hint), (options, info.value.hint)


def test_extra_args_replace_size_flags():
    args, rest = _app_args({"-l": "3", "-p": "4"}, ["-l", "9", "-lg:inorder", "-seed", "7"])
    assert args == {"-l": "9", "-p": "4"} and rest == ["-lg:inorder", "-seed", "7"]


def test_flags_after_the_double_dash_replace_the_harness_resources():
    pairs, rest = _override_flags(["-ll:cpu", "1", "-ll:csize", "256"], ["-ll:csize", "4096", "-lg:inorder"])
    assert pairs == ["-ll:cpu", "1", "-ll:csize", "4096"] and rest == ["-lg:inorder"]


def test_iterations_grow_towards_the_minimum_time():
    assert _grown(3, time_s=0.1, wall_s=1.0, min_time_s=1.0, timeout_s=60) == 45   # 3 * 1.5 * 10
    assert _grown(3, time_s=0.0001, wall_s=1.0, min_time_s=1.0, timeout_s=600) == 300   # at most 100x a step
    # The predicted wall time must stay within half the timeout: 1 + (5 - 4) / 0.5 = 3x at most.
    assert _grown(10, time_s=0.5, wall_s=4.0, min_time_s=10.0, timeout_s=10) == 30
    assert _grown(10, time_s=0.5, wall_s=6.0, min_time_s=10.0, timeout_s=10) == 10


def test_first_error_prefers_specific_messages():
    stderr = ("[0 - 7f0a]    0.000000 {5}{gpu}: We are not able to discover the CUDA resources.\n"
              "[0 - 7f0a]    0.100000 {4}{threads}: reservation cannot be satisfied\n"
              "prog: foo.cc:12: void f(): Assertion `x' failed.\n"
              "[0 - 7f0b]    0.200000 {5}{legion}: LEGION MAPPER EXCEPTION: Invalid mapper output.\n")
    assert first_error(stderr) == "{5}{legion}: LEGION MAPPER EXCEPTION: Invalid mapper output."
    assert first_error("[0 - 7f0a]    0.000000 {5}{gpu}: We are not able to discover the CUDA resources.\n") is None
    assert first_error("[mapperopt] error R400: processor index out of bound\n{6}{x}: y") \
        == "[mapperopt] error R400: processor index out of bound"


# ------------------------------------------------------------------------------ execution with small processes

def _script(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "app.sh"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return [str(path)]


def _run(tmp_path: Path, body: str, timeout_s: float = 30):
    run_dir = tmp_path / "run"
    run_dir.mkdir(exist_ok=True)
    return execute(_script(tmp_path, body), run_dir, "", timeout_s, dict(os.environ))


@pytest.mark.parametrize("damage", ['{"status": "o', "[]", '{"stage": 3}'])
def test_a_damaged_default_mapper_verdict_in_the_cache_is_made_again(tmp_path, damage):
    """The cached verdict of Legion's default mapper, cut short (a crash) or of the wrong shape, gave a traceback on
    every verification failure of that command line; it is a cache: the default mapper runs again."""
    import hashlib
    import shlex

    from mapperopt.benchmarks.harness import default_mapper_verdict

    cmd = _script(tmp_path, f"echo '{GOOD}'")
    (tmp_path / "run").mkdir()
    first = default_mapper_verdict(cmd, tmp_path / "run", 30, dict(os.environ))
    assert first["status"] == "ok"
    key = hashlib.sha256(shlex.join(cmd).encode()).hexdigest()[:16]  # one verdict per command line
    path = toolchain.cache_dir() / "default-verdicts" / f"{key}.json"
    path.write_text(damage)
    assert default_mapper_verdict(cmd, tmp_path / "run", 30, dict(os.environ)) == first
    assert json.loads(path.read_text()) == first


def test_a_good_run(tmp_path):
    run = _run(tmp_path, f"echo 'some output'\necho '{GOOD}'\necho '[0 - 1] 0.0 {{4}}{{x}}: a warning' >&2")
    assert run.stage is None and run.attempt.exit_code == 0
    assert run.attempt.result["throughput"] == 2.0
    assert (tmp_path / "run" / "stdout.txt").read_text().startswith("some output")
    assert "a warning" in (tmp_path / "run" / "stderr.txt").read_text()


def test_a_silent_abort_is_not_blamed_on_memory_alone(tmp_path):
    """A DSL mapper out of memory says so (R403) before it aborts: a silent abort is as likely the program's own."""
    run = _run(tmp_path, "kill -ABRT $$")
    assert "out of memory" not in run.reason and "abort() or failed assertion" in run.reason, run.reason


@pytest.mark.parametrize("body, stage, reason", [
    ("kill -ABRT $$", "run", "silent abort"),
    ("echo '[mapperopt] error R400: processor index out of bound: index 5 >= size 1' >&2; kill -ABRT $$",
     "run", "aborted: [mapperopt] error R400: processor index out of bound"),
    ("kill -SEGV $$", "run", "crashed with SIGSEGV"),
    ("kill -KILL $$", "run", "killed by SIGKILL, by the kernel's out-of-memory killer or by another process"),
    ("exit 134", "run", "silent abort"),   # as a launcher or shell in between reports SIGABRT
    # the shim's note that it loaded the DSL mapper is no message of the program's
    ("echo '[mapperopt] note: the LD_PRELOAD shim loaded the DSL mapper /x/m.so' >&2; kill -ABRT $$", "run",
     "silent abort"),
    ("echo '[mapperopt] note: the LD_PRELOAD shim loaded the DSL mapper /x/m.so' >&2; exit 3", "run",
     "exited with status 3 and no error message"),
    # ...nor its note that the program's own mapper gives way to the DSL mapper
    ("echo \"[mapperopt] note: the application replaces the default mapper with its own mapper ('m'); the DSL "
     "mapper takes its place for every task\" >&2; kill -ABRT $$", "run", "silent abort"),
    (f"echo '{GOOD.replace('true', 'false')}'; exit 2", "verify", "correctness check failed"),
    ("echo hello", "run", "without printing a MAPPEROPT_RESULT line"),
    (f"echo '{GOOD}'; echo '{GOOD}'", "run", "2 MAPPEROPT_RESULT lines"),
    ("echo 'MAPPEROPT_RESULT {oops'", "run", "not a JSON object"),
    (f"echo '{GOOD}'; exit 3", "run", "exited with status 3 and no error message"),
    # a line the harness does not know is the program's own reason (a flag it rejects)
    ("echo 'picky: unknown option -bogus' >&2; exit 2", "run", "exited with status 2: picky: unknown option -bogus"),
    ("echo \"[mapperopt] error: cannot load mapper library 'x.so': bad ABI\" >&2; exit 1", "start",
     "cannot load mapper library"),
    ("echo 'ERROR: unrecognized lowlevel option: -ll:ocpu' >&2; exit 1", "start", "unrecognized lowlevel option"),
    # a benchmark rejecting its command line (the GEMMs' `error: -FLAG ...`) never started its work
    ("echo 'error: -n must be at least -g (every tile needs a row and a column)' >&2; exit 1", "start",
     "exited with status 1: error: -n must be at least -g"),
    # Realm prints the option, then fails an assertion and aborts: the option is the reason.
    ("echo 'ERROR: unrecognized lowlevel option: -ll:ocpu' >&2; echo \"x.cc:1: f: Assertion '0' failed.\" >&2; "
     "kill -ABRT $$", "start", "aborted: ERROR: unrecognized lowlevel option: -ll:ocpu"),
])
def test_failures_are_classified(tmp_path, body, stage, reason):
    run = _run(tmp_path, body)
    assert run.stage == stage
    assert reason in run.reason
    assert "--- stderr ---" in run.log


def test_a_program_that_cannot_start(tmp_path):
    run = execute([str(tmp_path / "missing")], tmp_path, "", 5, dict(os.environ))
    assert run.stage == "start" and "cannot start" in run.reason


def test_a_hang_is_killed_with_its_children(tmp_path):
    # The child sleeps in the background: killing only the direct process would leave it running.
    run = _run(tmp_path, f"sleep 300 & echo $! > {tmp_path}/child.pid\nwait", timeout_s=1)
    assert run.stage == "timeout" and run.attempt.exit_code is None
    assert "did not finish within 1 s" in run.reason
    assert 1 <= run.attempt.wall_s < 10
    child = int((tmp_path / "child.pid").read_text())
    for _ in range(50):   # the child is reaped by init shortly after the kill
        if not Path(f"/proc/{child}").exists() or "Z" in Path(f"/proc/{child}/stat").read_text().split()[2]:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"child {child} of the timed-out program is still running")


# A harness process that runs a long program and waits; the test kills the harness with SIGKILL.
ORPHAN = """
import os, sys
from pathlib import Path
from mapperopt.benchmarks import harness
if sys.argv[3] == "own-timeout-only":
    harness._prctl = lambda: None         # as on a system without a parent-death signal
    harness.OWN_TIMEOUT_MARGIN_S = 0
harness.execute([sys.argv[1]], Path(sys.argv[2]), "", float(sys.argv[4]), dict(os.environ))
"""


def _gone(pid: int, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        stat_file = Path(f"/proc/{pid}/stat")
        try:
            if stat_file.read_text().split()[2] in "ZX":
                return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("mode, timeout_s, within_s", [("pdeathsig", 300, 10), ("own-timeout-only", 1, 12)])
def test_killing_the_harness_ends_its_benchmark(tmp_path, mode, timeout_s, within_s):
    script = _script(tmp_path, f"sleep 300 & echo $! > {tmp_path}/child.pid\nwait")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    harness = subprocess.Popen([sys.executable, "-c", ORPHAN, script[0], str(run_dir), mode, str(timeout_s)])
    pid_file = tmp_path / "child.pid"
    try:
        for _ in range(300):
            if pid_file.exists() and pid_file.read_text().strip():
                break
            time.sleep(0.05)
        child = int(pid_file.read_text())
        os.kill(harness.pid, signal.SIGKILL)  # no handler, no `finally`: only the kernel and `timeout` are left
        harness.wait()
        assert _gone(child, within_s), f"{mode}: the benchmark {child} outlived its harness"
    finally:
        harness.kill()
        if pid_file.exists() and not _gone(int(pid_file.read_text()), 0.1):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


# A Ctrl-C that lands while the harness forks the benchmark: Python raises KeyboardInterrupt inside an at-fork hook
# (here the script's own; on a loaded machine `logging`'s, after a slow fork) and drops it ("Exception ignored in").
CTRL_C_AT_FORK = """
import os, signal, sys
from mapperopt.cli import main
os.register_at_fork(before=lambda: signal.raise_signal(signal.SIGINT))
sys.exit(main(sys.argv[1:]))
"""

# Exceptions raised in `__del__`, which Python cannot raise either.
DROPPED = """
from mapperopt import interrupts
interrupts.watch()
class Raises:
    def __init__(self, exc): self.exc = exc
    def __del__(self): raise self.exc
Raises(ValueError("another error"))
Raises(KeyboardInterrupt())
try:
    interrupts.check()
except KeyboardInterrupt:
    print("raised")
interrupts.check()
print("once")
"""


def test_a_ctrl_c_that_python_drops_while_the_benchmark_starts_still_stops_the_run(tmp_path):
    """The run stops (it used to run to its end, exit status 0) and leaves no benchmark process behind."""
    run_dir = tmp_path / "run"
    done = subprocess.run([sys.executable, "-c", CTRL_C_AT_FORK, "run", "circuit", "--once", "--out", str(run_dir)],
                          capture_output=True, text=True, timeout=300,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as in a terminal
    assert done.returncode == 130 and f"Interrupted: {run_dir} keeps what ran so far" in done.stderr, \
        done.stdout + done.stderr
    assert not (run_dir / "result.json").exists() and not _processes_in(run_dir)


def test_only_a_dropped_ctrl_c_is_kept_and_only_once():
    done = subprocess.run([sys.executable, "-c", DROPPED], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.split() == ["raised", "once"], done.stdout + done.stderr
    assert "ValueError: another error" in done.stderr and "KeyboardInterrupt" not in done.stderr


# ------------------------------------------------------------------------------------ real runs at size ci

def _files(run_dir: Path) -> set[str]:
    return {p.name for p in run_dir.iterdir()}


def _processes_in(run_dir: Path) -> list[int]:
    """Processes whose working folder is `run_dir` (the applications run there)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and (proc / "cwd").resolve() == run_dir.resolve():
                found.append(int(proc.name))
        except OSError:
            continue   # gone, or not ours to inspect
    return found


@pytest.mark.parametrize("mapper", ["default", "expert"])
@pytest.mark.parametrize("app", APPS)
def test_default_and_expert_mappers_verify(app, mapper, tmp_path):
    result = run_benchmark(app, mapper, out_dir=tmp_path)
    assert result.ok, f"{result.stage}: {result.reason}\n{result.log[-3000:]}"
    assert result.mapper == mapper
    assert result.throughput > 0 and result.unit == load_config(app).unit
    # Size ci asks for 50 ms of measured time: the harness may first grow the iteration count.
    assert result.settings["min_time_met"]
    n = len(result.attempts)
    assert n == result.settings["calibration_runs"] + 1
    assert all(a.exit_code == 0 and a.result["verified"] is True for a in result.attempts)
    outputs = ["stdout.txt", "stderr.txt"] if n == 1 else [f"{f}-{i}.txt" for f in ("stdout", "stderr")
                                                             for i in range(1, n + 1)]
    files = {"command.txt", "result.json", "feedback.json", *outputs}
    command = (tmp_path / "command.txt").read_text().splitlines()[-1]
    assert command == result.settings["command"]
    assert "-ll:cpu 1 -ll:util 1" in command and "-logfile stderr" in command
    if mapper == "expert":
        assert result.dsl == load_config(app).expert_dsl()
        assert (tmp_path / "mapper.dsl").read_text() == result.dsl
        assert "mapperopt" in (tmp_path / "mapper.cc").read_text()
        assert "-mapper " in command
        files |= {"mapper.dsl", "mapper.cc"}
    else:
        assert result.dsl is None and "-mapper" not in command
    assert _files(tmp_path) == files
    assert RunResult.from_json(json.loads((tmp_path / "result.json").read_text())) == result
    assert json.loads((tmp_path / "feedback.json").read_text())["status"] == "ok"
    assert "MAPPEROPT_RESULT" in (tmp_path / outputs[n - 1]).read_text()


def test_a_stored_result_with_keys_of_a_newer_writer_is_read():
    """A result.json (a run folder's, a comparison's stored outcome) is read as a tuning journal's record is: keys a
    newer mapperopt writes, at its top or in an attempt, are ignored, not a TypeError."""
    stored = {"app": "circuit", "mapper": "default", "status": "ok", "throughput": 2.5, "energy_j": 7.0,
              "attempts": [{"exit_code": 0, "wall_s": 1.5, "stdout": "stdout.txt", "rank": 0}]}
    result = RunResult.from_json(stored)
    assert (result.throughput, result.attempts[0].wall_s, result.attempts[0].stdout) == (2.5, 1.5, "stdout.txt")


def test_repeats_minimum_time_and_statistics(tmp_path):
    # Stencil at size ci measures about a millisecond: a 50 ms minimum makes the harness grow -tsteps first.
    result = run_benchmark("stencil", "default", repeats=3, min_time_s=0.05, out_dir=tmp_path)
    assert result.ok, result.reason
    s = result.settings
    assert s["calibration_runs"] >= 1 and s["iterations"] > 4 and s["min_time_met"]
    assert len(result.attempts) == s["calibration_runs"] + 3
    measured = result.attempts[s["calibration_runs"]:]
    assert measured[0].result["time_s"] >= 0.05
    assert all(a.result["iterations"] == s["iterations"] for a in measured)
    values = sorted(a.result["throughput"] for a in measured)
    assert result.throughput == values[1] and result.trimmed_mean == values[1]
    assert result.spread == pytest.approx((values[2] - values[0]) / values[1])
    n = len(result.attempts)
    assert {f"{f}-{i}.txt" for f in ("stdout", "stderr") for i in range(1, n + 1)} <= _files(tmp_path)
    assert len((tmp_path / "command.txt").read_text().splitlines()) == n + 1
    assert f"-tsteps {s['iterations']} " in s["command"]
    # AutoGuide's metric line says which statistic each figure is: the time is the median, the throughput (the
    # figure tuning records) the trimmed mean.
    text = feedback_text(explain(result), result)
    assert text.startswith(f"Execution: Performance Metric: Execution time is {result.time_s:.3g}s (median of 3 "
                           f"executions). Achieved throughput = {result.trimmed_mean:.4g} {result.unit} (trimmed "
                           "mean of 3 executions)."), text


def test_a_hanging_run_is_killed_at_the_timeout(tmp_path):
    # A billion time steps: the application is really still running when the timeout strikes.
    start = time.monotonic()
    result = run_benchmark("stencil", "default", timeout_s=2, extra_args=("-tsteps", "1000000000"), out_dir=tmp_path)
    assert time.monotonic() - start < 30
    assert not result.ok and result.stage == "timeout"
    assert "did not finish within 2 s" in result.reason and result.throughput is None
    # A timeout may be the machine's fault: it is tried once more before it counts.
    assert [a.exit_code for a in result.attempts] == [None, None] and result.settings["retried"] == 1
    assert "-tsteps 1000000000" in result.settings["command"]
    assert _processes_in(tmp_path) == []
    assert json.loads((tmp_path / "feedback.json").read_text())["stage"] == "timeout"


def test_bad_legion_flag_fails_at_start(tmp_path):
    result = run_benchmark("circuit", "default", extra_args=("-ll:nonsense", "1"), out_dir=tmp_path)
    assert not result.ok and result.stage == "start"
    assert "-ll:nonsense" in result.reason and "-ll:nonsense" in result.log


# A placement function that asks for CPU 1, 2, ... of a machine with one CPU.
FAR_STATIC = """Task * CPU;
mcpu = Machine(CPU);
def far(Task task) {
    return mcpu[0, task.ipoint[0] + 1];
}
IndexTaskMap stencil far;
"""
# Out of range at run time only: the checker evaluates the first MAX_STATIC_POINTS (4096) launch points of each
# task, and these flags give calculate_new_currents 4097 (8194 tiny pieces, 2 per launch point).
FAR_RUNTIME = """Task * CPU;
m = Machine(CPU);
def far(Task task) { return m[0, task.ipoint[0] / 4096]; }
IndexTaskMap calculate_new_currents far;
"""
FAR_ARGS = ["-p", "8194", "-pps", "2", "-npp", "10", "-wpp", "20", "-l", "1", "-i", "1"]


def test_impossible_processor_is_caught_by_the_checker(tmp_path):
    result = run_benchmark("stencil", FAR_STATIC, out_dir=tmp_path)
    assert not result.ok and result.stage == "check" and result.mapper == "inline"
    assert "E205" in result.reason and "processor index out of bound" in result.reason
    assert result.attempts == () and "stdout.txt" not in _files(tmp_path)
    assert (tmp_path / "mapper.dsl").read_text() == FAR_STATIC


def test_run_checks_against_the_machine_check_probes(tmp_path, monkeypatch, capsys):
    """`run --csize 300` checks its mapper against the machine `check -- -ll:csize 300` probes: one probe command
    line (the run's memory sizes, so the capacities agree), from the probe cache. The run used to probe without the
    sizes and without the cache."""
    from mapperopt import probe
    from mapperopt.cli import main

    probes = []
    real = probe.probe_json

    def recorded(*args, **kwargs):  # the real probe; what each command asked for is kept
        probes.append((args, kwargs, real(*args, **kwargs)))
        return probes[-1][2]

    monkeypatch.setattr(probe, "probe_json", recorded)
    result = run_benchmark("stencil", FAR_STATIC, out_dir=tmp_path / "run", csize=300)
    assert result.stage == "check" and "E205" in result.reason
    (ran,) = probes
    probes.clear()
    (tmp_path / "far.dsl").write_text(FAR_STATIC)
    assert main(["check", str(tmp_path / "far.dsl"), "--bench", "stencil", "--", "-ll:csize", "300"]) == 1
    assert "memories SYSMEM 300 MiB" in capsys.readouterr().err
    assert probes == [ran] and ran[1]["cached"]
    assert [m["capacity"] for m in ran[2]["memories"] if m["kind"] == "SYSMEM"] == [300 * 2**20]


def test_impossible_processor_fails_the_run_with_its_reason(tmp_path):
    dsl = tmp_path / "far.dsl"
    dsl.write_text(FAR_RUNTIME)
    out = tmp_path / "run"
    result = run_benchmark("circuit", dsl, out_dir=out, extra_args=FAR_ARGS)
    assert not result.ok and result.stage == "run" and result.mapper == "far.dsl"
    assert result.reason.startswith("aborted: [mapperopt] error R400: processor index out of bound")
    assert result.throughput is None and result.attempts[0].exit_code == -6   # SIGABRT
    assert "R400" in result.log and "mapper.cc" in _files(out)
    feedback = json.loads((out / "feedback.json").read_text())
    assert feedback["status"] == "failed" and feedback["stage"] == "run"


def test_syntax_error_fails_at_parse(tmp_path):
    """A program given as text (a tuner's) is located in the run folder's mapper.dsl, where it is kept, not in
    `<mapper>`, a name no file has."""
    result = run_benchmark("circuit", "Task * GPU CPU;\n", out_dir=tmp_path)
    assert not result.ok and result.stage == "parse" and f"{tmp_path / 'mapper.dsl'}:1:" in result.reason
    assert result.attempts == () and "<mapper>" not in result.log
    checked = run_benchmark("circuit", "Task nosuchtask CPU;\n", out_dir=tmp_path / "check")
    assert checked.stage == "check" and f"{tmp_path / 'check' / 'mapper.dsl'}:1:" in checked.log, checked.log


def test_trace_and_profile(tmp_path):
    result = run_benchmark("stencil", "expert", trace=True, profile=True, min_time_s=0, out_dir=tmp_path)
    assert result.ok, result.reason
    decisions = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    assert {d["task"] for d in decisions} >= {"stencil", "increment"}
    assert all(d["proc"]["kind"] == "CPU" for d in decisions)
    profile = result.profile
    assert profile["schema"] == "mapperopt.profile/1"
    assert {t["task"] for t in profile["tasks"]} >= {"stencil", "increment"}
    with pytest.raises(MapperoptError, match="need a DSL mapper.*--mapper expert"):
        run_benchmark("stencil", "default", trace=True, out_dir=tmp_path / "x")


def test_the_run_command(tmp_path):
    from click.testing import CliRunner

    from mapperopt.benchmarks.commands import run

    # two executions of at least 0.05 s (the protocol's default, up to 7 of 0.5 s: tests/benchmarks/test_run_cli.py)
    ok = CliRunner().invoke(run, ["circuit", "--mapper", "expert", "--repeats", "2", "--max-repeats", "2",
                                  "--min-time", "0.05", "--csize", "300", "--out", str(tmp_path / "a"), "--",
                                  "-ll:util", "1", "-lg:inorder"])
    assert ok.exit_code == 0, ok.output
    command = (tmp_path / "a" / "command.txt").read_text().splitlines()[-1]
    assert "-ll:csize 300 " in command and "-ll:csize 256" not in command   # --csize replaces the size's
    assert command.count("-ll:util") == 1 and "-lg:inorder" in command    # a flag after -- is not doubled
    assert "circuit with the expert mapper" in ok.output and "GFLOPS" in ok.output and "suggestion:" in ok.output
    assert {"stdout-1.txt", "stdout-2.txt"} <= _files(tmp_path / "a")
    # two executions are too few for an interval (the note says so): the table quotes none
    flat = " ".join(ok.output.split())
    assert "Too few executions for an interval" in flat and "bootstrap of the trimmed mean" not in flat, ok.output
    dsl = tmp_path / "far.dsl"
    dsl.write_text(FAR_RUNTIME)
    failed = CliRunner().invoke(run, ["circuit", "--mapper", str(dsl), "--out", str(tmp_path / "b"), "--json", "--once",
                                      "--", *FAR_ARGS])
    assert failed.exit_code == 1
    assert json.loads(failed.stdout)["stage"] == "run"  # the checker's warnings go to standard error


def test_an_abort_that_says_something_or_has_no_dsl_mapper_is_the_programs(tmp_path):
    run = _run(tmp_path, "echo 'deliberate crash' >&2; kill -ABRT $$")
    assert run.reason == "the program aborted (SIGABRT): deliberate crash"
    # Realm's harmless line for a processor without a core of its own is no part of the program's message (it was
    # quoted first); stderr.txt keeps it.
    reserved = "[0 - 7ff1]    0.000053 {4}{threads}: reservation ('CPU proc 1d00000000000003') cannot be satisfied"
    run = _run(tmp_path, f"echo \"{reserved}\" >&2; echo 'deliberate crash' >&2; kill -ABRT $$")
    assert run.reason == "the program aborted (SIGABRT): deliberate crash"
    assert "cannot be satisfied" in (tmp_path / "run" / "stderr.txt").read_text()
    run = execute(_script(tmp_path, "kill -ABRT $$"), tmp_path, "", 30, dict(os.environ), dsl_mapper=False)
    assert run.reason == "the program aborted (SIGABRT) without a message"


def test_an_rdmem_only_mapper_fails_the_check_unless_the_run_sizes_rdmem(tmp_path):
    """The machine the mapper is checked against is probed with the run's -ll:rsize: without it an RDMEM-only
    mapper is refused at the check (E221) before anything runs; with it the run places data in RDMEM."""
    mapper = tmp_path / "rd.dsl"
    mapper.write_text("Task * CPU;\nRegion * * CPU RDMEM;\n")
    refused = run_benchmark("circuit", mapper, out_dir=tmp_path / "plain")
    assert refused.status == "failed" and refused.stage == "check" and "E221" in refused.reason
    sized = run_benchmark("circuit", mapper, out_dir=tmp_path / "sized", extra_args=("-ll:rsize", "64"))
    assert sized.status == "ok", sized.reason


def test_the_mapper_is_checked_against_the_launch_domains_of_the_run_flags(tmp_path):
    """`-- -p 8` doubles circuit's ci launch (2 points to 4): the mapper's function, which fails at point 3, is
    refused at the check of that run, not only after Legion starts."""
    mapper = tmp_path / "p3.dsl"
    mapper.write_text("m = Machine(CPU);\ndef f(Task task) {\n    return m[0, (task.ipoint[0] / (3 - task.ipoint[0])) "
                      "% m.size[1]];\n}\nIndexTaskMap calculate_new_currents f;\n")
    refused = run_benchmark("circuit", mapper, out_dir=tmp_path / "p8", extra_args=("-p", "8"), min_time_s=0)
    assert refused.status == "failed" and refused.stage == "check" and "E219" in refused.reason, refused.reason


def test_a_full_disk_in_a_run_names_its_run_folder(tmp_path, monkeypatch):
    """A short write's ENOSPC names no file; `run` said only "cannot write a file ... free space there"."""
    import errno

    real_write_text = Path.write_text

    def full(self, text, *args, **kwargs):
        if "result.json" in self.name:  # written atomically, through a temporary file beside it
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write_text(self, text, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full)
    with pytest.raises(OSError) as raised:
        run_benchmark("circuit", out_dir=tmp_path / "run", min_time_s=0)
    assert raised.value.filename.startswith(str(tmp_path / "run"))  # the file, or at least its folder


def test_a_full_disk_leaves_no_result_json_cut_short(tmp_path, monkeypatch):
    """A folder without figures has no result.json: a full disk wrote part of it and left it, unreadable."""
    import errno

    real_write_text = Path.write_text

    def full(self, text, *args, **kwargs):  # part written, then ENOSPC, as a full disk does
        if "result.json" in self.name:
            real_write_text(self, text[:5], *args, **kwargs)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write_text(self, text, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full)
    with pytest.raises(OSError):
        run_benchmark("circuit", out_dir=tmp_path / "run", min_time_s=0)
    assert not [p for p in (tmp_path / "run").rglob("*") if "result.json" in p.name]


def test_a_mapper_build_the_environment_breaks_stops_the_run_instead_of_failing_the_mapper(tmp_path, monkeypatch):
    """g++ aborts without a writable TMPDIR: not the mapper's compile failure (a tune would journal and reuse it)."""
    import uuid

    run_benchmark("circuit", out_dir=tmp_path / "warm", min_time_s=0)  # the application, built with a usable TMPDIR
    monkeypatch.setenv("TMPDIR", "/proc")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no nvcc: its own probe of TMPDIR is another error
    with pytest.raises(toolchain.ToolchainError, match="cannot create temporary files in TMPDIR=/proc"):
        run_benchmark("circuit", f"# {uuid.uuid4().hex}\nTask * CPU;\n", out_dir=tmp_path / "run", min_time_s=0)


def _words(text: str) -> set[str]:
    return set(text.split())


def test_a_message_cut_to_keep_its_end_starts_at_a_word():
    """The last line of a failed program's stderr, the message of one that aborted and a run's reason in AutoGuide's
    texts keep their end when they are too long: the kept end started mid-word ("…ement 3 of …"), where a cut
    that keeps the start ends at a word's end. Each now starts at a word, after a "…" that says it was cut."""
    from mapperopt.benchmarks.harness import REASON_CHARS, classify, failure_line

    words = [f"word{i:03d}x" for i in range(200)]  # 8 characters and a space each: a cut by count lands in one
    line = " ".join(words)
    for said in (failure_line(f"{line}\n"), classify(-signal.SIGABRT, "", f"{line}\n", 10)[1].split(": ", 1)[1]):
        assert said.startswith("…") and said.endswith(words[-1]) and len(said) <= REASON_CHARS, said
        assert _words(said[1:]) <= _words(line) and said[1] != " ", said  # whole words only
    # short enough: whole, without a mark
    assert failure_line("a short line\n") == "a short line"
    # a run's reason in a text: its start and its end, each in whole words, around one "…"
    reason = f"the program aborted (SIGABRT): {' '.join(words * 2)}"
    result = RunResult(app="myapp", mapper="m.dsl", status="failed", stage="verify", reason=reason,
                       settings={"app_file": "myapp.yaml", "app_options": ""})
    text = explain(result).explanation
    kept = text[text.index("the program aborted"):]
    head, tail = kept.split("…")
    assert _words(head) <= _words(reason) and head.endswith("x"), head
    assert _words(tail.rstrip(".")) <= _words(reason) and tail.startswith("word"), tail
