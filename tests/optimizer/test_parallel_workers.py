"""compare's worker processes die with it: a SIGKILL of `compare` leaves no tuning run behind."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc")

PARENT = """
import time
from mapperopt.optimizer.compare import _in_parallel
_in_parallel([None, None], [("a", time.sleep, (120,), ()), ("b", time.sleep, (120,), ())])
"""


def children(pid: int) -> set[int]:
    out = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        out.update(int(c) for c in (task / "children").read_text().split())
    return out


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_a_killed_compare_leaves_no_worker():
    parent = subprocess.Popen([sys.executable, "-c", PARENT])
    try:
        deadline = time.monotonic() + 60
        while len(workers := {w for w in children(parent.pid) if alive(w)}) < 2:
            assert time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.2)
        time.sleep(2)  # each worker has armed its parent-death signal (its initializer ran before the task)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 10
        while any(alive(w) for w in workers):
            assert time.monotonic() < deadline, f"workers {sorted(w for w in workers if alive(w))} outlived compare"
            time.sleep(0.2)
    finally:
        parent.kill()


STOPPED = """
import sys, time
from pathlib import Path
from mapperopt.optimizer.commands import BuildChanged
from mapperopt.optimizer.compare import _in_parallel, _Rebuilt

def rebuilt():
    raise BuildChanged("app changed", path="/x/app", digests="SHA-256 a..., b... now", measured="iteration 2 ran")

def later(path):
    Path(path).write_text("ran")

if __name__ == "__main__":
    try:
        _in_parallel([None, None], [("run a-1", rebuilt, (), ()), ("run b-1", time.sleep, (2,), ()),
                                    ("run c-1", later, (sys.argv[1],), ())])
    except _Rebuilt as e:
        print([(label, err.path, err.measured) for label, err in e.changed])
"""


def test_a_rebuild_a_worker_sees_starts_no_other_task_and_is_reported_with_its_run(tmp_path):
    """`compare --app --jobs N`: a run that found the program rebuilt stops the comparison; a task waiting for a
    worker (another run, a final measurement) does not start and measure the new build, and the running ones end
    (each stops at its own next check)."""
    script, marker = tmp_path / "jobs.py", tmp_path / "c-ran"
    script.write_text(STOPPED)
    out = subprocess.run([sys.executable, str(script), str(marker)], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "[('run a-1', '/x/app', 'iteration 2 ran')]", (out.stdout, out.stderr)
    assert not marker.exists()
