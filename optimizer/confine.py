"""Running Python that a language model wrote (the Trace agent's method bodies) outside the tuner.

    value = run_confined(source, "task_decision", [tasks])   # -> the method's return value (plain data)

Each call starts a fresh `python -I -S` child that defines the one function from `source` and calls it with
`self=None` and the JSON-encoded arguments; the return value comes back as JSON. The child always runs:

* with resource limits (`resource.setrlimit`): `CPU_S` seconds of CPU, `MEMORY_BYTES` of address space, no file
  may grow (`RLIMIT_FSIZE` 0: that stops writing past a file's end, not emptying a file or overwriting it in place
  through `mmap`), `OPEN_FILES` descriptors, and, outside bubblewrap, no new process (`RLIMIT_NPROC` 0; a child
  that stays root is exempt);
* outside bubblewrap, as the user `NOBODY` when the tuner is root (`unprivileged()`): Landlock does not cover a
  file's owner, mode, times or extended attributes;
* under a wall-clock limit `WALL_S` enforced by the parent: then the child, its process group and every process
  holding its output pipes (one it started in a session of its own) are killed and the call ends, waiting on
  nothing else;
* with what it leaves running in its process group killed when the call ends, and a parent-death signal (it dies
  with the tuner; what it starts does not inherit that);
* with its reply on a pipe of its own, and its stdout and stderr on one other pipe, of which the tuner keeps at most
  the last `OUTPUT_BYTES` each;
* in a new, empty temporary working folder, removed afterwards;
* in a new, empty session keyring (`KEYCTL`), not the tuner's;
* with an environment of `PATH` and `LANG` only;
* in its own session (no terminal), with Python's isolated mode (no user site-packages, no PYTHON* variables);

and under the first of these that works here (each tried once):

* bubblewrap (`bwrap`, `sandbox()`): the whole filesystem read-only, a private empty /tmp as working folder, no
  network, its own process, IPC and host-name namespaces (so the tuner's /proc entries are out of sight); it can
  read what the user can. It cannot be combined with Landlock, which forbids the mounts it makes.
* Landlock (`landlock()`: the ABI version), enforced between fork and exec: no file or folder written, made or
  removed (truncating by path: ABI >= 3); reading only the interpreter's prefixes, the system libraries and its
  working folder (not /proc, the home or the tuning folder); executing only the interpreter; no TCP (ABI >= 4);
  signals and abstract unix sockets scoped to it (ABI >= 6). All else stays open: file status, owner, mode, times
  and attributes, UDP (before ABI 10), netlink, named unix sockets (before ABI 9), System V IPC, its user's
  keyrings.
* neither: the limits only. The child can then read whatever the user can, the tuner's /proc/<pid>/environ and
  cmdline (the API key) included, and empty, overwrite, delete or rename files, and reach the network.

The limits keep a runaway or careless method from hanging the tuner or exhausting memory, and with bubblewrap or
Landlock from writing files or seeing the tuner's secrets; none of this is a sandbox against hostile code.
docs/tuning.md says exactly what holds in each case.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import platform
import resource
import select
import selectors
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from functools import lru_cache
from typing import Any, BinaryIO, Sequence

import landlockpy

from mapperopt.errors import exit_status

WALL_S = 10.0                  # wall-clock seconds one method call may take
CPU_S = 10                     # CPU seconds
MEMORY_BYTES = 1 << 30         # address space (1 GiB)
OPEN_FILES = 32
OUTPUT_BYTES = 1 << 24         # the most of each of its output streams the tuner keeps (16 MiB: the end)
KEPT_ENV = ("PATH", "LANG")    # the only variables the child sees
NOBODY = 65534                 # the user and group a child of root runs as, where it can (see `unprivileged`)
# Under Landlock, what the child may read besides the interpreter's prefixes: the dynamic loader's folders and cache.
SYSTEM_LIBRARIES = ("/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib", "/etc/ld.so.cache")
# keyctl(2)'s number (Python has no wrapper): the child joins a new, empty session keyring, out of reach of the keys
# and tokens in the tuner's. None on other architectures: the child keeps the tuner's session keyring there.
KEYCTL = {"x86_64": 250, "aarch64": 219}.get(platform.machine())
KEYCTL_JOIN_SESSION_KEYRING = 1

# The child: reads {"source", "name", "args"} from stdin, writes {"value": ...} or {"error": {...}} to the reply
# pipe (its descriptor is the argument): what the method writes to its stdout cannot corrupt the reply.
# A method that started a process (os.fork, where the limits let it) fails, whichever copy gets to reply: both may.
CHILD = r"""
import json, os, sys, traceback
request = json.loads(sys.stdin.read())
out = os.fdopen(int(sys.argv[1]), "w")
pid, forks = os.getpid(), []
os.register_at_fork(before=lambda: forks.append(1))
def forked():  # this is a copy, or a fork made a child (one that failed calls the hook too)
    if os.getpid() != pid:
        return True
    if not forks:
        return False
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:  # no child
        return False
    return True
def error(kind, message, line=None):
    return {"error": {"type": kind, "message": message[:500], "line": line}}
NOT_ALLOWED = " a process (os.fork), which is not allowed"
try:
    namespace = {}
    exec(compile(request["source"], "<method>", "exec"), namespace)
    reply = {"value": namespace[request["name"]](None, *request["args"])}
except BaseException as exc:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<method>"]
    message = str(exc)
    if forks and isinstance(exc, OSError):
        message = request["name"] + " tried to start" + NOT_ALLOWED + " (" + message + ")"
    reply = error(type(exc).__name__, message, frames[-1].lineno if frames else None)
if forked():
    reply = error("MethodError", request["name"] + " started" + NOT_ALLOWED
                  + ": a method only computes and returns its statements")
try:
    text = json.dumps(reply)
except BaseException as exc:  # not plain data
    text = json.dumps(error(type(exc).__name__, str(exc)))
out.write(text + "\n")  # the end of the reply: a process the method started may hold the pipe
out.flush()
"""


class ConfinedError(Exception):
    """The method raised, returned something that is not plain data, or broke a limit.

    Attributes:
        type: the exception's class name in the child ("ZeroDivisionError"), or "Timeout", "MemoryError", ...
        message: its message.
        line: the line of `source` (1-based) where it was raised, when known.
    """

    def __init__(self, type_: str, message: str, line: int | None = None):
        super().__init__(f"{type_}: {message}" if message else type_)
        self.type = type_
        self.message = message
        self.line = line


def _preexec(ruleset: landlockpy.Ruleset | None = None, forks: bool = True):
    """The child's `preexec_fn`: resource limits, SIGXFSZ ignored (a write to a file then fails with an error
    instead of killing it), death with the parent (Linux), no new processes unless `forks` (bubblewrap must fork;
    root is exempt), a new, empty session keyring (`KEYCTL`; it fails the start where one cannot be made, but not
    where the kernel has no keyrings or a seccomp filter refuses keyctl: the child cannot reach them then either),
    and then `ruleset` enforced (with no_new_privs; the Landlock domain is kept across exec). Built in the parent:
    nothing is imported after the fork."""
    from mapperopt.benchmarks.harness import PR_SET_PDEATHSIG, _prctl

    prctl = _prctl()
    syscall = ctypes.CDLL(None, use_errno=True).syscall if KEYCTL is not None else None
    limits = [(resource.RLIMIT_CPU, CPU_S), (resource.RLIMIT_AS, MEMORY_BYTES), (resource.RLIMIT_FSIZE, 0),
              (resource.RLIMIT_NOFILE, OPEN_FILES), *([] if forks else [(resource.RLIMIT_NPROC, 0)])]

    def preexec() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        for which, value in limits:
            resource.setrlimit(which, (value, value))
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if (syscall is not None and syscall(ctypes.c_long(KEYCTL), ctypes.c_long(KEYCTL_JOIN_SESSION_KEYRING),
                                            ctypes.c_void_p(None)) < 0
                and ctypes.get_errno() not in (errno.ENOSYS, errno.EPERM)):
            raise OSError(ctypes.get_errno(), "no session keyring of its own for the method's child")
        if ruleset is not None:
            ruleset.restrict()
    return preexec


def _elf_interpreter(path: str) -> str | None:
    """The dynamic loader an ELF executable names (PT_INTERP), or None (none, or not ELF): under Landlock the
    kernel needs the right to execute it too."""
    with open(path, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF":
            return None
        order = "<" if head[5] == 1 else ">"
        wide = head[4] == 2
        phoff, phentsize, phnum = (struct.unpack_from(order + "Q14xHH", head, 32) if wide
                                   else struct.unpack_from(order + "I10xHH", head, 28))
        for i in range(phnum):
            f.seek(phoff + i * phentsize)
            entry = f.read(phentsize)
            if struct.unpack_from(order + "I", entry)[0] == 3:  # PT_INTERP
                offset, size = (struct.unpack_from(order + "Q16xQ", entry, 8) if wide
                                else struct.unpack_from(order + "I8xI", entry, 4))
                f.seek(offset)
                return f.read(size).rstrip(b"\0").decode()
    return None


def _ruleset(cwd: str) -> landlockpy.Ruleset:
    """The Landlock ruleset of a child working in `cwd`: every right this kernel's Landlock knows is handled (denied)
    but reading the interpreter's prefixes, the system libraries and `cwd`, and executing the interpreter; signals
    and abstract unix sockets are scoped to the child (best effort: what this kernel's ABI lacks is left out)."""
    ruleset = landlockpy.Ruleset(scoped=landlockpy.Scope.SIGNAL | landlockpy.Scope.ABSTRACT_UNIX_SOCKET)
    read = landlockpy.AccessFS.READ_FILE | landlockpy.AccessFS.READ_DIR
    for path in {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix, *SYSTEM_LIBRARIES, cwd}:
        if os.path.exists(path):
            ruleset.allow_path(path, read if os.path.isdir(path) else landlockpy.AccessFS.READ_FILE)
    for program in (sys.executable, _elf_interpreter(sys.executable)):
        if program:
            ruleset.allow_path(program, landlockpy.AccessFS.EXECUTE | landlockpy.AccessFS.READ_FILE)
    return ruleset


@contextlib.contextmanager
def _working_folder(user: int | None):
    """A new, empty temporary folder, owned by `user` (None: the tuner's), removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="mapperopt-method-") as cwd:
        if user is not None:
            os.chown(cwd, user, user)
        yield cwd


def _probe(cwd: str, user: int | None, preexec) -> subprocess.CompletedProcess:
    """Starts the interpreter in `cwd` as `user` (None: the tuner's) the way a method's child starts, printing ok."""
    return subprocess.run([sys.executable, "-I", "-S", "-c", "import json, traceback; print('ok')"],
                          capture_output=True, text=True, timeout=WALL_S, env={}, cwd=cwd, preexec_fn=preexec,
                          **_as_user(user))


def _as_user(user: int | None) -> dict[str, Any]:
    """`subprocess.Popen`'s arguments that run the child as `user` and group `user` alone (None: the tuner's)."""
    return {} if user is None else {"user": user, "group": user, "extra_groups": []}


@lru_cache(maxsize=None)
def unprivileged() -> int | None:
    """`NOBODY` where the tuner runs as root and the interpreter starts as that user here, else None: tried once.
    Landlock does not cover a file's owner, mode, times or extended attributes, and root may chown and chmod any
    file and is exempt from `RLIMIT_NPROC`; nobody owns nothing and has no capabilities. It cannot start a Python
    installed where only root can read (pyenv's under /root): the child then stays root."""
    if os.geteuid() != 0:
        return None
    with _working_folder(NOBODY) as cwd:
        try:
            probe = _probe(cwd, NOBODY, _preexec(forks=False))
        except (OSError, subprocess.SubprocessError):
            return None
    return NOBODY if probe.returncode == 0 and probe.stdout.strip() == "ok" else None


@lru_cache(maxsize=None)
def landlock() -> int:
    """The Landlock ABI version the child is confined with where bubblewrap is not used, or 0 where the kernel has
    no Landlock (or it is disabled) or Python does not start under the ruleset here: tried once."""
    with _working_folder(unprivileged()) as cwd:
        try:
            if landlockpy.abi_version() == 0:
                return 0
            with _ruleset(cwd) as ruleset:
                probe = _probe(cwd, unprivileged(), _preexec(ruleset, forks=False))
        except (OSError, subprocess.SubprocessError):  # e.g. a seccomp filter that refuses Landlock's calls
            return 0
    return landlockpy.abi_version() if probe.returncode == 0 and probe.stdout.strip() == "ok" else 0


@lru_cache(maxsize=None)
def sandbox() -> tuple[str, ...]:
    """The bubblewrap command line the child runs under, or () where `bwrap` is missing or does not work here
    (e.g. unprivileged user namespaces disabled): tried once with the child's own limits."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return ()
    # The home folder stays visible (read-only): Python itself often lives there (pyenv, conda, a venv).
    cmd = (bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--unshare-all",
           "--die-with-parent", "--new-session", "--chdir", "/tmp")
    try:
        probe = subprocess.run([*cmd, sys.executable, "-I", "-S", "-c", "print('ok')"], capture_output=True,
                               text=True, timeout=WALL_S, env={}, preexec_fn=_preexec())
    except (OSError, subprocess.SubprocessError):
        return ()
    return cmd if probe.returncode == 0 and probe.stdout.strip() == "ok" else ()


def _reap(proc: subprocess.Popen, deadline: float) -> float | None:
    """As `proc.wait()` until `deadline` (a `time.monotonic()` time), but returning the CPU time, in seconds, that
    the child used (with the processes it waited for, e.g. bubblewrap's): None where it was reaped elsewhere.

    Raises:
        subprocess.TimeoutExpired: it has not exited by `deadline`.
    """
    pause = 0.001
    while True:
        try:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        except ChildProcessError:  # reaped already
            proc.wait(max(0.0, deadline - time.monotonic()))
            return None
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return usage.ru_utime + usage.ru_stime
        if time.monotonic() >= deadline:
            raise subprocess.TimeoutExpired(proc.args, WALL_S)
        time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
        pause = min(pause * 2, 0.05)


def _exchange(proc: subprocess.Popen, reply: BinaryIO, request: bytes) -> tuple[bytes, bytes, float | None]:
    """As `proc.communicate(request, timeout=WALL_S)` with the reply pipe read too, but keeping only the last
    `OUTPUT_BYTES` of the reply and of the output: a method that floods its output must not fill the tuner's memory.

    Returns:
        (reply, output: its stdout and stderr, the CPU time the child used in seconds or None: see `_reap`), once
        the reply is whole (or its pipe ended), the output's pipe ended and the child has exited.

    Raises:
        subprocess.TimeoutExpired: not all of that within `WALL_S`.
    """
    deadline = time.monotonic() + WALL_S
    streams = (reply.fileno(), proc.stdout.fileno())
    kept = {fd: bytearray() for fd in streams}
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdin, selectors.EVENT_WRITE)
        for fd in kept:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            if time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(proc.args, WALL_S)
            for key, _ in selector.select(deadline - time.monotonic()):
                if key.fileobj is proc.stdin:
                    try:
                        request = request[os.write(key.fd, request[:select.PIPE_BUF]):]
                    except BrokenPipeError:  # it ended without reading it all
                        request = b""
                    if not request:
                        selector.unregister(proc.stdin)
                        proc.stdin.close()
                elif chunk := os.read(key.fd, 1 << 16):
                    kept[key.fd] += chunk
                    del kept[key.fd][:-OUTPUT_BYTES]
                    if key.fd == reply.fileno() and b"\n" in chunk:  # the whole reply (see CHILD)
                        selector.unregister(key.fd)
                else:
                    selector.unregister(key.fd)
    out, err = (bytes(kept[fd]) for fd in streams)
    reply.close()
    proc.stdout.close()
    return out, err, _reap(proc, deadline)


def _stop(proc: subprocess.Popen, reply: BinaryIO) -> None:
    """Kills the child, its process group and every other process holding its output pipes (one that the method
    started in a session of its own), and reaps the child, waiting on nothing else."""
    from mapperopt.benchmarks.harness import kill_holders

    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    kill_holders([p for p in (reply, proc.stdout) if not p.closed])
    proc.wait()
    for pipe in (proc.stdin, proc.stdout, reply):
        pipe.close()


def run_confined(source: str, name: str, args: Sequence[Any]) -> Any:
    """Calls function `name` defined by `source` as `name(None, *args)` in a confined child (see the module).

    Args:
        source: Python source defining the function (and nothing needed from the tuner's globals).
        name: the function's name.
        args: its arguments after `self`, JSON-encodable.

    Returns:
        the function's return value (after a JSON round trip).

    Raises:
        ConfinedError: the function raised (its type, message and line), returned a value that is not JSON, ran
            past `WALL_S` ("Timeout") or `CPU_S`, ran out of memory, started a process (`os.fork`), ended its own
            or was killed (SIGKILL).
    """
    request = json.dumps({"source": source, "name": name, "args": list(args)})
    env = {k: os.environ[k] for k in KEPT_ENV if k in os.environ}
    wrapper = sandbox()
    user = None if wrapper else unprivileged()
    with _working_folder(user) as cwd:
        read_end, write_end = os.pipe()
        reply_pipe = open(read_end, "rb", buffering=0)
        with _ruleset(cwd) if not wrapper and landlock() else contextlib.nullcontext() as ruleset, \
                contextlib.closing(os.fdopen(write_end, "wb")):
            proc = subprocess.Popen([*wrapper, sys.executable, "-I", "-S", "-c", CHILD, str(write_end)],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    pass_fds=(write_end,), cwd=cwd, env=env, start_new_session=True,
                                    preexec_fn=_preexec(ruleset, forks=bool(wrapper)), **_as_user(user))
        try:
            replied, output, cpu_s = _exchange(proc, reply_pipe, request.encode())
        except subprocess.TimeoutExpired:
            ended = proc.poll() is not None  # then a process it started holds its output
            _stop(proc, reply_pipe)
            what = ("ended, but a process it started still held its output after" if ended
                    else "did not return within")
            raise ConfinedError("Timeout", f"{name} {what} {WALL_S:g} s (it was stopped)") from None
        finally:
            if proc.poll() is None:
                _stop(proc, reply_pipe)
            else:  # what the method started in its process group and left running
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
    # the CPU limit ends the child with SIGKILL (its soft and hard limits are equal; SIGXCPU where they are not):
    # so does the method itself, or the system (out of memory); the CPU time it used tells them apart (half the
    # limit: on a loaded virtual machine the time the child is charged with can fall short of what the limit saw)
    if proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        if proc.returncode == -signal.SIGXCPU or cpu_s is None or cpu_s >= 0.5 * CPU_S:
            raise ConfinedError("Timeout", f"{name} used more than {CPU_S} s of CPU time (it was stopped)")
        raise ConfinedError("MethodError", f"{name} was ended by signal SIGKILL (it killed itself, or the system "
                                           "did, e.g. out of memory)")
    try:
        reply = json.loads(replied.split(b"\n", 1)[0].decode() or "null")  # a forked copy may have replied too
    except ValueError:
        reply = None
    if not isinstance(reply, dict):
        tail = output.decode(errors="replace").strip().splitlines()[-1:]
        if tail:
            raise ConfinedError("MethodError", f"{name} ended without a reply ({tail[0][:300]})")
        cause = (": it ended its own process (os._exit, os.exec*) instead of returning, which is not allowed"
                 if proc.returncode >= 0 else "")
        raise ConfinedError("MethodError", f"{name} ended without a reply ({exit_status(proc.returncode)}){cause}")
    if "error" in reply:
        e = reply["error"]
        message = e["message"]
        if e["type"] == "TypeError" and "JSON serializable" in message:
            message = f"{name} must return plain data (a list of strings), not: {message}"
        raise ConfinedError(e["type"], message, e.get("line"))
    return reply["value"]


__all__ = ["CPU_S", "ConfinedError", "MEMORY_BYTES", "WALL_S", "landlock", "run_confined", "sandbox", "unprivileged"]
