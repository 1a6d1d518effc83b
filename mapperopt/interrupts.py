"""A Ctrl-C that the interpreter drops is not lost; SIGTERM and SIGHUP can stop a command as Ctrl-C does.

Python raises KeyboardInterrupt in whatever Python code its main thread runs next when SIGINT arrives. When that
code is a callback the interpreter calls itself (a weakref callback, a `__del__` method, an at-fork hook such as
`logging`'s, which every `subprocess.Popen` with a `preexec_fn` runs around its fork), the interpreter prints
"Exception ignored in ..." and drops the exception: the program goes on as if Ctrl-C had not been pressed. A loaded
machine makes this likelier (a fork takes longer). `watch()` keeps such an interrupt instead, and `check()` raises it
where work starts (each benchmark execution).

    watch()    # once, at the start of a command (mapperopt.cli.main)
    check()    # raises KeyboardInterrupt if one was dropped since the last call
    sigterm_as_ctrl_c()  # in a command that says how to continue after Ctrl-C (tune, compare and its workers)
    terminated()  # the signal, SIGTERM or SIGHUP, that was the interrupt, else 0 (the exit status is 128 + it)
    with terminal_may_be_gone(): ...  # around the "Interrupted ..." line: a hung-up terminal loses only the text

C code run by an import may turn the KeyboardInterrupt into an ImportError instead (numpy's import of a C
interface, pybind11's "initialization failed"), and a class made by the import into a RuntimeError (Python 3.11's
`__set_name__`); `importing()` turns it back.
"""

from __future__ import annotations

import errno
import os
import signal
import sys
from contextlib import contextmanager, suppress

_dropped = False
_arrived = 0  # Ctrl-Cs (and SIGTERMs, SIGHUPs) seen by `_on_sigint`
_terminated = 0  # the first of `STOPPING` that arrived
# The signals that stop a command as Ctrl-C does: `kill`, `timeout`, a job system; a closed terminal, a dropped ssh
# connection.
STOPPING = (signal.SIGTERM, signal.SIGHUP)


def _on_sigint(signum, frame) -> None:
    """Python's own SIGINT handler (raises KeyboardInterrupt), counting for `importing`; that of `STOPPING` too."""
    global _arrived, _terminated
    _arrived += 1
    _terminated = _terminated or (signum if signum in STOPPING else 0)
    raise KeyboardInterrupt


def watch() -> None:
    """Makes the interpreter's hook for exceptions it cannot raise (`sys.unraisablehook`) keep a KeyboardInterrupt
    for `check` instead of printing it; every other exception still reaches the hook that was in place. Calling it
    again does nothing. Also counts Ctrl-Cs for `importing` where SIGINT has Python's own handler (not where it is
    ignored)."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)
    previous = sys.unraisablehook
    if getattr(previous, "keeps_interrupts", False):
        return

    def hook(unraisable) -> None:
        global _dropped
        if issubclass(unraisable.exc_type, KeyboardInterrupt):
            _dropped = True
        else:
            previous(unraisable)

    hook.keeps_interrupts = True
    sys.unraisablehook = hook


def check() -> None:
    """Raises the KeyboardInterrupt that the interpreter dropped since the last call, if any (see `watch`).

    Raises:
        KeyboardInterrupt: a Ctrl-C was dropped.
    """
    global _dropped
    if _dropped:
        _dropped = False
        raise KeyboardInterrupt


def sigterm_as_ctrl_c() -> None:
    """Makes SIGTERM (`kill`, `timeout`, a job system) and SIGHUP (a closed terminal, a dropped ssh connection),
    each where it has its default action (not under `nohup`), raise KeyboardInterrupt as Ctrl-C does: the command
    stops as after Ctrl-C, saying how to continue, instead of dying without a word (`tune`, `run`, `compare`, whose
    worker processes it stops in turn)."""
    for signum in STOPPING:
        if signal.getsignal(signum) is signal.SIG_DFL:
            signal.signal(signum, _on_sigint)


def terminated() -> int:
    """The signal of `STOPPING` that arrived since `sigterm_as_ctrl_c` (handled as a Ctrl-C), the first if several;
    0 if none."""
    return _terminated


@contextmanager
def importing():
    """Around an import that can take a while (matplotlib): an ImportError, or a RuntimeError (Python 3.11 wraps
    what a class's `__set_name__` raises in one), raised while a Ctrl-C arrived (counted since `watch`) is raised as
    the KeyboardInterrupt it stands for.

    Raises:
        KeyboardInterrupt: Ctrl-C during the import.
    """
    before = _arrived
    try:
        yield
    except (ImportError, RuntimeError):
        if _arrived == before:
            raise
        raise KeyboardInterrupt from None


@contextmanager
def terminal_may_be_gone():
    """Around what a stopped command prints last (its "Interrupted ..." line): where its terminal is gone (a hang-up,
    which sends SIGHUP: writes to it fail with EIO) or the pipe it writes to is (EPIPE, which rich turns into
    SystemExit(1)), only the text is lost, not the exit status (128 + SIGHUP) or what the command does next
    (`output_lost`).

    Raises:
        OSError, SystemExit: any other, as it was.
    """
    try:
        yield
    except (OSError, SystemExit) as exc:
        if not output_lost(exc.__context__ if isinstance(exc, SystemExit) else exc):
            raise


def output_lost(exc: BaseException | None) -> bool:
    """Whether `exc` is a write to a terminal that is gone (EIO) or to a pipe without reader (EPIPE); then stdout and
    stderr go to os.devnull, so that no later write (the interpreter's last flush) fails on them too."""
    if not isinstance(exc, OSError) or exc.errno not in (errno.EIO, errno.EPIPE) or exc.filename is not None:
        return False  # a file's error names the file: not the terminal's
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # a stream without a file descriptor (captured) keeps none
            os.dup2(devnull, stream.fileno())
    os.close(devnull)
    return True
