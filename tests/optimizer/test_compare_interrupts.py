"""A final measurement made again (`--remeasure`, another `--final-rounds`) and cut short (Ctrl-C) loses nothing: the
groups it would replace stay in use until the new one ends, and `--report-only` never passes the tuning runs' own
figures off as the final measurement's. One small real comparison on Circuit (ci size)."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from mapperopt.benchmarks import protocol
from mapperopt.errors import MapperoptError
from mapperopt.optimizer.compare import run_compare


def opts(runs_dir: Path, **extra) -> dict:
    # One execution per mapper of at least 0.05 s, two final rounds: the protocol, cheaply.
    return {"optimizers": ["random"], "iters": 1, "repeats": 2, "size": "ci", "cpus": None, "gpus": None,
            "seed": 0, "start": "random", "memory": {}, "executions": 1, "max_executions": 1, "min_time_s": 0.05,
            "timeout_s": None, "final_rounds": 2, "runs_dir": runs_dir, "new": False, "app_args": (), **extra}


def test_an_interrupted_measurement_keeps_the_groups_it_would_replace(tmp_path, monkeypatch):
    runs_dir, said = tmp_path / "runs", []
    summary = run_compare("circuit", opts(runs_dir), say=said.append)
    folder = Path(summary["folder"])
    measured = (folder / "final.json").read_text()
    scores = [r["final_throughput"] for r in summary["runs"]]
    real = protocol.measure_together

    def interrupted(bench, mappers, rounds, out_dir, **kw):  # Ctrl-C once the new group's folder exists
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "expert").mkdir()
        raise KeyboardInterrupt

    monkeypatch.setattr(protocol, "measure_together", interrupted)
    for extra in ({"remeasure": [1]}, {"final_rounds": 3}):
        with pytest.raises(KeyboardInterrupt):
            run_compare("circuit", opts(runs_dir, **extra), say=said.append)
        stored = json.loads((folder / "final.json").read_text())
        assert stored["groups"] == json.loads(measured)["groups"] and stored["rounds"] == 2, stored
        assert "replaced" not in stored, stored
    monkeypatch.setattr(protocol, "measure_together", real)

    # The measurement made is still reported, with its own figures.
    report = run_compare("circuit", opts(runs_dir, tune=False), say=said.append)
    assert [r["final_throughput"] for r in report["runs"]] == scores

    # A final.json whose groups were all set aside (as an earlier version left it after such a Ctrl-C): refused,
    # nothing written, rather than reporting the tuning runs' figures as the table's.
    stored = json.loads(measured)
    (folder / "final.json").write_text(json.dumps({**stored, "groups": [], "replaced": stored["groups"]}))
    before = (folder / "summary.json").read_text()
    with pytest.raises(MapperoptError, match="no group of the final measurement"):
        run_compare("circuit", opts(runs_dir, tune=False), say=said.append)
    assert (folder / "summary.json").read_text() == before


def test_a_resumed_comparison_keeps_its_own_runs_iterations_and_jobs(tmp_path, capfd):
    from mapperopt.cli import main

    runs_dir = tmp_path / "runs"
    args = ["compare", "circuit", "--size", "ci", "--iters", "2", "--runs", "2", "--optimizers", "random",
            "--repeats", "1", "--max-repeats", "1", "--min-time", "0.05", "--final-rounds", "2",
            "--runs-dir", str(runs_dir)]
    assert main([*args, "--jobs", "2", "--cpus-per-job", "1"]) == 0
    [folder] = (runs_dir / "circuit").iterdir()
    capfd.readouterr()

    # --report-only without --jobs describes the runs as they were measured: two at a time
    assert main([*args, "--report-only"]) == 0
    summary = json.loads((folder / "summary.json").read_text())
    assert (summary["jobs"], summary["cores_per_job"]) == (2, 1), summary
    assert "2 runs at a time, each on its own 1 core" in (folder / "table.md").read_text()

    # BENCH other than the folder's: ignored, with a note; --repeats: ignored, with no note that it makes --runs
    assert main(["compare", "stencil", "--resume", str(folder), "--repeats", "5", "--report-only"]) == 0
    out, err = (" ".join(t.split()) for t in capfd.readouterr())
    assert f"Note: stencil: ignored; {folder} compares circuit" in out, out
    assert "this makes --runs" not in err, err

    # --remeasure is checked against the comparison's 2 runs, not --runs' default 5
    assert main(["compare", "--resume", str(folder), "--remeasure", "3"]) == 2
    err = " ".join(capfd.readouterr().err.split())
    assert "expected run numbers from 1 to 2" in err and "e.g. --remeasure 1,2" in err, err

    # progress lines count to the folder's --iters
    journal = folder / "random-2" / "state.jsonl"
    journal.write_text(journal.read_text().splitlines(keepends=True)[0])
    assert main(["compare", "--resume", str(folder), "--jobs", "2", "--cpus-per-job", "1"]) == 0
    capfd.readouterr()
    journal.write_text(journal.read_text().splitlines(keepends=True)[0])
    assert main(["compare", "--resume", str(folder)]) == 0
    out = capfd.readouterr().out
    assert "random #2 iter 2/2" in out and "/10" not in out, out


def test_parallel_jobs_measure_a_shared_start_program_once(tmp_path):
    """With --jobs 2 the optimizers of one repeat start from the same program at the same time: it is measured once
    per comparison, the other run waiting for that measurement (each used to measure it on its own)."""
    summary = run_compare("circuit", opts(tmp_path / "runs", optimizers=["random", "optuna"], repeats=1, jobs=2,
                                          cpus_per_job=1))
    folder = Path(summary["folder"])
    shared = [run for run in ("random-1", "optuna-1") if (folder / run / "iter-001" / "shared.json").exists()]
    assert len(shared) == 1, shared


def test_a_refused_report_names_every_run_whose_best_differs(tmp_path, capsys):
    from mapperopt.cli import main
    from mapperopt.optimizer.compare import _program
    from mapperopt.optimizer.store import TuneStore

    summary = run_compare("circuit", opts(tmp_path / "runs", iters=2))
    folder = Path(summary["folder"])
    records = {r: TuneStore.open(folder / r).records for r in ("random-1", "random-2")}
    changed = sorted(r for r, rec in records.items() if rec[0].best_iter == 1 and rec[1].best_iter == 2)
    if not changed:
        pytest.skip("no run's best changed at its second iteration")
    # the group measured each changed run's first best too (as another run's best would be): still not its best
    final = json.loads((folder / "final.json").read_text())
    [group] = final["groups"]
    for run in changed:
        group["measured"][_program(records[run][0])] = group["measured"]["expert"]
    (folder / "final.json").write_text(json.dumps(final))
    capsys.readouterr()
    assert main(["compare", "--resume", str(folder), "--iters", "1", "--report-only"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"the best programs of {', '.join(changed)} after 1 iteration are not those" in err, err


def test_a_new_best_its_group_measured_already_is_said(tmp_path):
    """A larger --iters whose new best is a program the run's group measured already (another run's best) keeps that
    figure, and says so (it used to score it silently from the other run's measurement). The report before names the
    earlier best; here it is rewritten to another iteration, as such a report would name it."""
    said = []
    summary = run_compare("circuit", opts(tmp_path / "runs"), say=said.append)
    folder = Path(summary["folder"])
    report = json.loads((folder / "summary.json").read_text())
    run = next(r for r in report["runs"] if r["best_iter"])
    run["best_iter"] += 1
    (folder / "summary.json").write_text(json.dumps(report))
    said.clear()
    run_compare("circuit", opts(tmp_path / "runs"), say=said.append)
    assert any(line.startswith(f"Note: the best program of {run['folder']} changed") for line in said), said


def test_an_iteration_interrupted_after_its_measurement_keeps_its_files_on_resume(tmp_path, monkeypatch):
    """Ctrl-C after an iteration's measurement was stored in evaluations/ (while deciding whether it becomes the best,
    e.g. re-measuring): the resumed run reuses that measurement, keeps the files the stored outcome points to and
    does not say it was measured in another iteration (it was measured in this one)."""
    from mapperopt.optimizer import loop

    runs_dir, said = tmp_path / "runs", []
    real = loop._becomes_best

    def interrupted(*args, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(loop, "_becomes_best", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_compare("circuit", opts(runs_dir, final_rounds=1), say=said.append)
    monkeypatch.setattr(loop, "_becomes_best", real)
    [folder] = (runs_dir / "circuit").iterdir()
    iter_dir = folder / "random-1" / "iter-001"
    [stored] = [json.loads(p.read_text()) for p in (folder / "evaluations").glob("*.json")]
    assert stored["run_dir"] == "random-1/iter-001", stored
    measured = sorted(p.name for p in iter_dir.iterdir())
    assert {"mapper.dsl", "result.json"} <= set(measured), measured

    said.clear()
    run_compare("circuit", opts(runs_dir, final_rounds=1), say=said.append)
    kept = sorted(p.name for p in iter_dir.iterdir())
    assert set(measured) <= set(kept) and "shared.json" not in kept, kept
    assert not any("measured in random-1/iter-001" in line for line in map(str, said)), said
    [record] = [json.loads(line) for line in (folder / "random-1" / "state.jsonl").read_text().splitlines()]
    assert record["cached_from"] is None, record


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_stop_parallel_runs_as_ctrl_c_does(tmp_path, signum):
    """`kill PID` of a `compare --jobs 2` ended it without a word (exit 143, its workers killed with it), and so did
    SIGHUP (a closed terminal); it now stops its workers as Ctrl-C does, waits for them and says how to continue,
    with the signal's exit status; every iteration a run journaled stays, and the workers are gone."""
    import os
    import subprocess
    import sys
    import time

    from mapperopt.optimizer.store import TuneStore

    runs = tmp_path / "runs"
    proc = subprocess.Popen([sys.executable, "-m", "mapperopt.cli", "compare", "circuit", "--size", "ci", "--iters",
                             "30", "--runs", "2", "--optimizers", "random", "--repeats", "1", "--max-repeats", "1",
                             "--min-time", "0.05", "--jobs", "2", "--cpus-per-job", "1", "--runs-dir", str(runs)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None and not any(
            p.read_text().strip() for p in runs.glob("circuit/compare-*/random-*/state.jsonl")):
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()[0]
    workers = {int(w): Path(f"/proc/{w}/cmdline").read_text() for t in Path(f"/proc/{proc.pid}/task").iterdir()
               for w in (t / "children").read_text().split()}
    assert len(workers) >= 2, workers
    os.kill(proc.pid, signum)
    out, _ = proc.communicate(timeout=180)
    assert proc.returncode == 128 + signum, out
    [folder] = runs.glob("circuit/compare-*")
    assert (f"Interrupted. What it did is kept in {folder} " in out and "The same command continues; or: mapperopt "
            f"compare --resume {folder} --optimizers random --runs 2 --iters 30 --jobs 2 --cpus-per-job 1." in out), out
    time.sleep(5)  # the multiprocessing resource tracker ends once it sees the end of its pipe
    for pid, command in workers.items():
        alive = Path(f"/proc/{pid}/cmdline").exists() and Path(f"/proc/{pid}/cmdline").read_text() == command
        assert not alive, (command, out)
    for root in runs.glob("circuit/compare-*/random-*"):
        records = TuneStore.open(root).records
        assert [r.iter for r in records] == list(range(1, len(records) + 1)), root


def test_a_terminal_that_hung_up_leaves_sighups_exit_status(tmp_path):
    """After a real hang-up, writing the "Interrupted." line to the terminal, which is gone, failed (EIO): `compare`
    ended with status 1 instead of SIGHUP's, 129. Every iteration a run journaled stays."""
    from optimizer_support import hung_up

    from mapperopt.optimizer.store import TuneStore

    runs = tmp_path / "runs"
    proc, out = hung_up(["compare", "circuit", "--size", "ci", "--iters", "30", "--runs", "1", "--optimizers",
                         "random", "--repeats", "1", "--max-repeats", "1", "--min-time", "0.05", "--runs-dir",
                         str(runs)],
                        lambda: any(p.read_text().strip() for p in runs.glob("circuit/compare-*/random-*/state.jsonl")))
    assert proc.returncode == 128 + signal.SIGHUP, out
    [root] = runs.glob("circuit/compare-*/random-1")
    records = TuneStore.open(root).records
    assert records and [r.iter for r in records] == list(range(1, len(records) + 1))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_an_idle_worker_of_compare_jobs_stops_quietly_on_sigterm(capfd, signum):
    """SIGTERM of `compare --jobs 2` while one worker waited for work (its run finished): the interrupted `compare`
    sends its workers SIGTERM, and the idle one printed its Python traceback (KeyboardInterrupt in the pool's
    queue) before the "Interrupted" line. SIGHUP (a closed terminal reaches every process of the job) likewise."""
    import multiprocessing
    import os
    import time
    from concurrent.futures import ProcessPoolExecutor

    from mapperopt.optimizer.compare import _die_with

    pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_die_with, initargs=(os.getpid(),))
    try:
        worker = pool.submit(os.getpid).result()
        # idle once it blocks reading the pool's queue (system call 0, read): a signal a moment earlier, while the
        # result is sent back, is the next test's case
        syscall = Path(f"/proc/{worker}/syscall")
        deadline = time.monotonic() + 60
        while syscall.read_text().split()[0] != "0" and time.monotonic() < deadline:
            time.sleep(0.01)
        [process] = [p for p in multiprocessing.active_children() if p.pid == worker]
        os.kill(worker, signum)
    finally:
        pool.shutdown(wait=True)  # it also ends a worker the signal did not (exit status 0)
    assert process.exitcode == 128 + signum, process.exitcode
    err = capfd.readouterr().err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err


def test_a_worker_takes_no_task_after_a_sigterm_the_pool_caught():
    """SIGTERM that reached an idle worker while the pool itself ran (sending the last result back) raised SystemExit
    there, which the pool caught and sent back as that task's exception: the worker went on waiting (the idle-worker
    test above then failed under load). Here the signal arrives while the worker runs a function outside
    `_call_pinned`, as the pool's own code is: the worker must take no further task."""
    import multiprocessing
    import os
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from mapperopt.optimizer.compare import _call_pinned, _die_with

    pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_die_with, initargs=(os.getpid(),))
    try:
        worker = pool.submit(os.getpid).result()
        [process] = [p for p in multiprocessing.active_children() if p.pid == worker]
        with pytest.raises(SystemExit):
            pool.submit(signal.raise_signal, signal.SIGTERM).result(timeout=60)
        with pytest.raises(BrokenProcessPool):
            pool.submit(_call_pinned, None, os.getpid, ()).result(timeout=60)
    finally:
        pool.shutdown(wait=True)
    assert process.exitcode == 128 + signal.SIGTERM, process.exitcode


def test_sigterm_ends_parallel_jobs_while_one_worker_is_idle_and_one_busy(tmp_path):
    """SIGTERM of `compare --jobs 2` while one run had ended (its worker idle, waiting for work) and the other ran:
    the idle worker ended at once, holding the pool's queue lock it waits under, and the busy one, its task
    interrupted, then waited on that lock for good, and `compare` with it."""
    import subprocess
    import sys
    import textwrap
    import time

    script = tmp_path / "jobs.py"
    script.write_text(textwrap.dedent("""
        import os, sys, time
        from mapperopt import interrupts
        from mapperopt.optimizer.compare import _in_parallel

        if __name__ == "__main__":
            interrupts.sigterm_as_ctrl_c()
            try:
                _in_parallel([None, None], [("quick", os.getpid, (), ()), ("long", time.sleep, (120,), ())],
                             on_done=lambda i, result: print("done", i, flush=True))
            except KeyboardInterrupt:
                print("interrupted", flush=True)
                sys.exit(143)
    """))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        assert proc.stdout.readline() == "done 0\n"
        time.sleep(1)  # the quick task's worker back in the pool's queue
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 143 and "interrupted" in out, out
    assert "Traceback" not in out, out
