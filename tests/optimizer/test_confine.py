"""The confined child that runs the model's methods (`optimizer/confine.py`), called directly with real child
processes: what Landlock stops, and that no process a method starts holds the tuner past the wall-clock limit."""

from __future__ import annotations

import errno
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid

import landlockpy
import pytest

from mapperopt.optimizer import confine
from mapperopt.optimizer.confine import ConfinedError, run_confined


def kernel_landlock() -> int:
    """The kernel's Landlock ABI version, 0 where it has none, it is disabled or a seccomp filter refuses it."""
    try:
        return landlockpy.abi_version()
    except OSError:
        return 0


NO_LANDLOCK = "this kernel has no Landlock (or it is disabled, or refused here)"
landlocked = pytest.mark.skipif(kernel_landlock() == 0, reason=NO_LANDLOCK)


def method(body: str) -> str:
    return "def probe(self, arg):\n" + "".join(f"    {line}\n" for line in body.splitlines())


@pytest.fixture
def no_bubblewrap(monkeypatch):
    """Landlock is used where bubblewrap is not (the two cannot be combined)."""
    monkeypatch.setattr(confine, "sandbox", lambda: ())


@pytest.mark.usefixtures("no_bubblewrap")
@pytest.mark.parametrize("fault", [errno.ENOSYS, errno.EOPNOTSUPP, errno.EPERM], ids=errno.errorcode.get)
def test_without_landlock_the_limits_alone_hold(monkeypatch, fault):
    """Landlock missing (ENOSYS), disabled at boot (EOPNOTSUPP) or refused by a seccomp filter (EPERM)."""
    def refused(*args):
        raise landlockpy.LandlockError(fault, os.strerror(fault))
    monkeypatch.setattr("landlockpy._syscall._call", refused)
    confine.landlock.cache_clear()
    try:
        assert confine.landlock() == 0
        assert run_confined(method("return arg * 2"), "probe", [21]) == 42
    finally:
        confine.landlock.cache_clear()


@landlocked
@pytest.mark.usefixtures("no_bubblewrap")
def test_a_method_still_runs_under_landlock(tmp_path):
    body = ("import json, re, math, collections, itertools, os\n"
            "return [os.listdir('.'), math.gcd(*arg), re.sub('a', 'b', 'aa')]")
    assert run_confined(method(body), "probe", [[12, 18]]) == [[], 6, "bb"]
    (tmp_path / "tuner.txt").write_text("the child is restricted, never the tuner")  # it is enforced after the fork


@landlocked
@pytest.mark.usefixtures("no_bubblewrap")
@pytest.mark.parametrize("body", [
    # in place through a shared mapping: no file grows, so RLIMIT_FSIZE does not stop it
    "import mmap, os\nm = mmap.mmap(os.open(arg, os.O_RDWR), 0)\nm[0:5] = b'XXXXX'\nm.flush()",
    "open(arg, 'w').close()",                                   # emptied
    "import os\nos.truncate(arg, 0)",
    "import os\nos.remove(arg)",
    "open(arg + '.new', 'x').close()",                           # an empty file made next to it
    "return open(arg).read()",                                   # the tuning folder is not readable
])
def test_landlock_keeps_the_method_off_the_users_files(tmp_path, body):
    victim = tmp_path / "history.csv"
    victim.write_text("important data")
    with pytest.raises(ConfinedError) as refused:
        run_confined(method(body), "probe", [str(victim)])
    assert refused.value.type == "PermissionError"
    assert victim.read_text() == "important data" and sorted(os.listdir(tmp_path)) == ["history.csv"]


@landlocked
@pytest.mark.usefixtures("no_bubblewrap")
def test_landlock_stops_tcp_and_signals_outside():
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        with pytest.raises(ConfinedError) as refused:
            run_confined(method(f"import socket\nsocket.create_connection(('127.0.0.1', {port}))"), "probe", [0])
        assert refused.value.type == "PermissionError"
    with pytest.raises(ConfinedError) as refused:
        run_confined(method("import os\nos.kill(os.getppid(), 0)"), "probe", [0])  # signal 0: only a check
    assert refused.value.type == "PermissionError"


@landlocked
def test_landlock_hides_the_tuners_key(tmp_path):
    """The tuner's environment and command line (/proc/<ppid>/environ, cmdline) hold the API key."""
    tuner = textwrap.dedent("""
        from mapperopt.optimizer import confine
        confine.sandbox = lambda: ()
        body = ("def probe(self, name):\\n"
                "    import os\\n"
                "    return open('/proc/%d/%s' % (os.getppid(), name), 'rb').read().decode(errors='replace')\\n")
        for name in ("environ", "cmdline"):
            try:
                print(name, repr(confine.run_confined(body, "probe", [name])))
            except confine.ConfinedError as e:
                print(name, e.type, e.message)
        """)
    env = {**os.environ, "MAPPEROPT_LLM_API_KEY": "sk-fake-from-env"}
    seen = subprocess.run([sys.executable, "-c", tuner, "--llm-api-key", "sk-fake-on-cmdline"], env=env,
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert seen.returncode == 0, seen.stderr
    assert "sk-fake" not in seen.stdout
    assert [line.split()[:2] for line in seen.stdout.splitlines()] == [["environ", "PermissionError"],
                                                                       ["cmdline", "PermissionError"]]


# keyctl(2) and add_key(2) by architecture: Python has no wrapper for them.
KEY_SYSCALLS = {"x86_64": (250, 248), "aarch64": (219, 217)}


@pytest.mark.skipif(platform.machine() not in KEY_SYSCALLS, reason="keyctl's number here is not known")
@pytest.mark.usefixtures("no_bubblewrap")
@pytest.mark.parametrize("sandboxed", ["none", "landlock"])
def test_the_method_cannot_read_the_tuners_session_keyring(tmp_path, sandboxed):
    """The kernel keyring of the tuner's session (where a login may keep keys and tokens): the child gets an empty one
    of its own."""
    if sandboxed == "landlock" and kernel_landlock() == 0:
        pytest.skip(NO_LANDLOCK)
    keyctl, add_key = KEY_SYSCALLS[platform.machine()]
    tuner = textwrap.dedent(f"""
        import ctypes
        from mapperopt.optimizer import confine
        confine.sandbox = lambda: ()
        if {sandboxed!r} == "none":
            confine.landlock = lambda: 0
        libc = ctypes.CDLL(None, use_errno=True)
        assert libc.syscall({keyctl}, 1, None) > 0  # KEYCTL_JOIN_SESSION_KEYRING: this test's own session keyring
        key = libc.syscall({add_key}, b"user", b"mapperopt-test", b"sk-fake-in-keyring", 18, -3)  # into it
        assert key > 0, ctypes.get_errno()
        body = ("def probe(self, key):\\n"
                "    import ctypes\\n"
                "    libc = ctypes.CDLL(None, use_errno=True)\\n"
                "    buf = ctypes.create_string_buffer(64)\\n"
                "    keys = libc.syscall({keyctl}, 11, -3, buf, 64)\\n"  # KEYCTL_READ of the session keyring
                "    payload = libc.syscall({keyctl}, 11, key, buf, 64)\\n"  # and of the key, by its id
                "    return [keys, payload, buf.raw[:max(payload, 0)].decode()]\\n")
        print(confine.run_confined(body, "probe", [key]))
        """)
    seen = subprocess.run([sys.executable, "-c", tuner], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert seen.returncode == 0, seen.stderr
    assert seen.stdout.strip() == "[0, -1, '']"  # an empty session keyring; the key is not the child's to read


def stays_root() -> bool:
    """Whether the child runs as root (the tuner is root and the user nobody cannot run its Python)."""
    return os.geteuid() == 0 and confine.unprivileged() is None


def _running(marker: str) -> list[int]:
    """The processes whose command line holds `marker`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


@pytest.mark.parametrize("sandboxed", ["none", "landlock"])
@pytest.mark.parametrize("returns", [True, False])
def test_a_process_the_method_leaves_behind_does_not_hold_the_tuner(monkeypatch, sandboxed, returns):
    """A process started in a session of its own (out of the method's process group, where a kill of the group does
    not reach it) keeps the method's output open: the call still ends within the wall-clock limit, says what
    happened and stops that process."""
    if sandboxed == "landlock" and kernel_landlock() == 0:
        pytest.skip(NO_LANDLOCK)
    monkeypatch.setattr(confine, "sandbox", lambda: ())
    if sandboxed == "none":
        monkeypatch.setattr(confine, "landlock", lambda: 0)
    monkeypatch.setattr(confine, "WALL_S", 1.0)
    marker = f"left-behind-{uuid.uuid4().hex}"
    body = ("import subprocess, sys\n"
            f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)  # {marker}'],\n"
            "                 start_new_session=True)\n"
            + ("return ['Task * CPU;']" if returns else "while True:\n    pass"))
    start = time.monotonic()
    with pytest.raises(ConfinedError) as stopped:
        run_confined(method(body), "probe", [0])
    assert time.monotonic() - start < 6  # not the 30 s the process sleeps
    if not stays_root():  # RLIMIT_NPROC 0 (root is exempt): the method cannot start a process at all
        assert stopped.value.type == "BlockingIOError" and not _running(marker)
        return
    expected = ("probe ended, but a process it started still held its output after 1 s (it was stopped)" if returns
                else "probe did not return within 1 s (it was stopped)")
    assert (stopped.value.type, stopped.value.message) == ("Timeout", expected)
    for _ in range(50):  # SIGKILL is delivered at once; the process may take a moment to go
        if not _running(marker):
            break
        time.sleep(0.1)
    assert not _running(marker)


@pytest.mark.usefixtures("no_bubblewrap")  # the pid a method sees in bubblewrap's namespace is not the tuner's
def test_a_process_left_in_the_methods_group_ends_with_the_call():
    """A process the method started and left running (its output closed) is stopped when the method returns (and
    the call fails: a method may not start a process)."""
    marker = f"left-in-group-{uuid.uuid4().hex}"
    body = ("import os, sys\n"
            "if os.fork() == 0:\n"
            "    os.close(1)\n"
            "    os.close(2)\n"
            "    os.close(int(sys.argv[1]))\n"
            f"    os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(30)  # {marker}'])\n"
            "return ['Task * CPU;']")
    if not stays_root():  # RLIMIT_NPROC 0 (root is exempt): the method cannot start a process at all
        with pytest.raises(ConfinedError, match="BlockingIOError"):
            run_confined(method(body), "probe", [0])
        return
    with pytest.raises(ConfinedError, match="probe started a process"):
        run_confined(method(body), "probe", [0])
    for _ in range(50):
        if not _running(marker):
            break
        time.sleep(0.1)
    assert not _running(marker)


def test_a_method_that_floods_its_output_does_not_fill_the_tuners_memory(tmp_path):
    """What a method prints goes to the tuner through a pipe: it keeps only a bounded part of it."""
    tuner = textwrap.dedent("""
        import re
        from mapperopt.optimizer import confine
        body = ("def probe(self, arg):\\n"
                "    line = 'x' * (1 << 20)\\n"
                "    for _ in range(600):\\n"
                "        print(line)\\n"
                "    return 'done'\\n")
        value = confine.run_confined(body, "probe", [0])
        # VmHWM, not ru_maxrss: that keeps the peak of the process it was started from (the test worker) across exec
        peak_kib = re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read()).group(1)
        print(value, int(peak_kib) >> 10)
        """)
    seen = subprocess.run([sys.executable, "-c", tuner], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert seen.returncode == 0, seen.stderr
    value, peak_mib = seen.stdout.split()
    assert value == "done" and int(peak_mib) < 300  # 600 MiB were printed


@pytest.fixture
def python_nobody_can_run(monkeypatch):
    """The tuner's interpreter, or else the system's, when the user nobody can run it: as root the child runs as
    nobody only then (a Python under /root, as pyenv puts it, is out of its reach)."""
    unprivileged, landlock = confine.unprivileged, confine.landlock  # the test may replace landlock
    landlock.cache_clear()
    for python in (sys.executable, "/usr/bin/python3"):
        monkeypatch.setattr(sys, "executable", python)
        confine.unprivileged.cache_clear()
        if os.path.exists(python) and confine.unprivileged() is not None:
            break
    else:
        pytest.skip("no Python here that the user nobody can run")
    yield python
    unprivileged.cache_clear()
    landlock.cache_clear()


@pytest.mark.skipif(os.geteuid() != 0, reason="a user's own files' modes and times stay open (the docs say so)")
@pytest.mark.usefixtures("no_bubblewrap", "python_nobody_can_run")
@pytest.mark.parametrize("sandboxed", ["none", "landlock"])
@pytest.mark.parametrize("body", [
    "import os\nos.chmod(arg, 0o666)",                           # exposed
    "import os\nos.chown(arg, 65534, 65534)",                    # given away
    "import os\nos.utime(arg, (0, 0))",
    "import os\nos.setxattr(arg, 'user.mark', b'1')",
    "import os\nos.fork()",                                       # root is exempt from RLIMIT_NPROC
])
def test_a_child_of_root_owns_nothing_and_cannot_fork(monkeypatch, sandboxed, body):
    """Landlock does not cover a file's owner, mode, times or extended attributes, nor root's processes: as root
    the child runs as the user nobody."""
    if sandboxed == "landlock" and kernel_landlock() == 0:
        pytest.skip(NO_LANDLOCK)
    if sandboxed == "none":
        monkeypatch.setattr(confine, "landlock", lambda: 0)
    folder = tempfile.mkdtemp()
    try:
        os.chmod(folder, 0o711)  # reachable by the path, as ~/.ssh/id_* is
        victim = os.path.join(folder, "secret_key.txt")
        with open(victim, "w") as f:
            f.write("secret")
        os.chmod(victim, 0o600)
        before = os.stat(victim)
        with pytest.raises(ConfinedError) as refused:
            run_confined(method(body), "probe", [victim])
        assert refused.value.type in ("PermissionError", "BlockingIOError")
        after = os.stat(victim)
        assert ((after.st_mode, after.st_uid, after.st_mtime_ns, os.listxattr(victim))
                == (before.st_mode, before.st_uid, before.st_mtime_ns, []))
    finally:
        shutil.rmtree(folder)


def test_what_a_method_writes_to_its_standard_output_does_not_spoil_its_reply():
    """The reply comes back on a pipe of its own: descriptor 1 (an extension's or a started program's output, or
    `os.write(1, ...)`) goes with the method's prints."""
    body = "import os\nos.write(1, b'{' * 4096)\nprint('printed')\nreturn ['Task * CPU;']"
    assert run_confined(method(body), "probe", [0]) == ["Task * CPU;"]
    with pytest.raises(ConfinedError) as failed:
        run_confined(method("import os, sys\nos.write(1, b'junk\\n')\nos._exit(3)"), "probe", [0])
    assert (failed.value.type, failed.value.message) == ("MethodError", "probe ended without a reply (junk)")


@pytest.mark.parametrize("sandboxed", ["none", "landlock"])
@pytest.mark.parametrize("body", [
    "import os\nos.fork()\nreturn ['Task * CPU;']",                       # both copies return
    "import os\nif os.fork() == 0:\n    os._exit(0)\nreturn ['Task * CPU;']",   # the copy ends at once
    "import os\nif os.fork() != 0:\n    os._exit(0)\nreturn ['Task * CPU;']",   # the method's own process ends
], ids=["both-return", "copy-ends", "method-ends"])
def test_a_method_that_starts_a_process_is_told_it_is_not_allowed(monkeypatch, sandboxed, body):
    """Where the limits let a method start a process (its child stays root, or in bubblewrap), `os.fork()` ended
    the call "without a reply (exit status 0)" (two copies replied, or the wrong one did), or returned, by chance;
    where they do not, with the OSError alone. The error now says why, every time."""
    if sandboxed == "landlock" and kernel_landlock() == 0:
        pytest.skip(NO_LANDLOCK)
    monkeypatch.setattr(confine, "sandbox", lambda: ())
    if sandboxed == "none":
        monkeypatch.setattr(confine, "landlock", lambda: 0)
    for _ in range(3):  # which copy replies first is chance
        with pytest.raises(ConfinedError) as refused:
            run_confined(method(body), "probe", [0])
        if stays_root():  # root is exempt from RLIMIT_NPROC: the process is started
            assert (refused.value.type, refused.value.message) == (
                "MethodError", "probe started a process (os.fork), which is not allowed: a method only computes and "
                               "returns its statements")
        else:
            assert refused.value.type == "BlockingIOError"
            assert refused.value.message.startswith("probe tried to start a process (os.fork), which is not allowed (")


def test_a_method_that_ends_its_process_is_told_so():
    with pytest.raises(ConfinedError) as ended:
        run_confined(method("import os\nos._exit(0)"), "probe", [0])
    assert (ended.value.type, ended.value.message) == (
        "MethodError", "probe ended without a reply (exit status 0): it ended its own process (os._exit, os.exec*) "
                       "instead of returning, which is not allowed")


def test_a_method_that_kills_itself_is_not_said_to_have_used_up_its_cpu_time():
    """`os.kill(os.getpid(), signal.SIGKILL)` ended the call with "used more than 10 s of CPU time" after 0.1 s: the
    CPU limit ends the child with SIGKILL too (its soft and hard limits are equal). The CPU time the child used
    tells the two apart."""
    with pytest.raises(ConfinedError) as killed:
        run_confined(method("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"), "probe", [0])
    assert (killed.value.type, killed.value.message) == (
        "MethodError", "probe was ended by signal SIGKILL (it killed itself, or the system did, e.g. out of memory)")


def test_a_method_that_uses_up_its_cpu_time_is_told_so(monkeypatch):
    monkeypatch.setattr(confine, "CPU_S", 1)
    with pytest.raises(ConfinedError) as stopped:
        run_confined(method("while True:\n    pass"), "probe", [0])
    assert (stopped.value.type, stopped.value.message) == (
        "Timeout", "probe used more than 1 s of CPU time (it was stopped)")
