"""Running a benchmark with a mapper and measuring it: `run_benchmark`.

One run compiles the mapper, executes the application (repeatedly) in its own process group under a timeout with
`-logfile stderr`, captures all output into the run folder (docs/running.md, docs/tuning.md), parses the result
line (§3) and summarises the repeats. Every way a mapper can make a run fail (it does not parse, check or compile;
the application does not start, crashes, aborts, is killed, hangs, prints no result or fails its correctness
check) becomes a `RunResult` with `status="failed"`, a `stage` and a one-line `reason`; only misuse of the harness
raises.

Files in a run folder: `mapper.dsl`, `mapper.cc` (DSL mappers only), `command.txt` (one line per execution),
`stdout.txt`/`stderr.txt` (or `stdout-N.txt`/`stderr-N.txt`, N = 1, 2, ... when there was more than one execution),
`trace.jsonl`/`trace-N.jsonl` with `trace=True`, `result.json` (`RunResult.to_json()`) and `feedback.json`
(AutoGuide's `Feedback.to_json()`).
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import re
import secrets
import selectors
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from mapperopt.dsl import ast as A
from mapperopt.dsl.errors import DslSyntaxError
from mapperopt.dsl.parser import parse, read_source
from mapperopt import interrupts, toolchain
from mapperopt.benchmarks.apps import (_app_args, _override_flags, absolute_paths, build_app, describe_app, load_config,
                                       processor_counts, require_gpu_driver)
from mapperopt.benchmarks.userapp import UserApp, run_user_app
from mapperopt.errors import BuildError, MapperoptError, closest, signal_name
from mapperopt.files import read_json, write_atomically, writing_in
from mapperopt.records import Attempt, RunResult

RESULT_PREFIX = "MAPPEROPT_RESULT "
PROFILE_PREFIX = "MAPPEROPT_PROFILE "
RESULT_SCHEMA = "mapperopt.result/1"
MAX_RESCALES = 4          # calibration executions at most, before the repeats
MAX_GROWTH = 100.0        # at most this factor on the iteration count per calibration step
GROWTH_MARGIN = 1.5       # aim this much above the minimum, so that noisy repeats rarely fall below it
KILL_GRACE_S = 5.0        # after SIGKILL of the group, how long to wait for the process to be reaped
OUTPUT_GRACE_S = 2.0      # after a program's exit, how long a process it started may keep its output open
OWN_TIMEOUT_MARGIN_S = 10.0  # the benchmark's own timeout (`timeout`): this much after the harness's
# Timed iterations of the profiling execution at most: its per-task times need every task of the loop, not many
# loops (it runs untraced, after the measured executions, and is not measured).
PROFILE_ITERATIONS = 3
TRANSIENT_RETRIES = 1     # an execution that timed out or was killed is run again this many times before it counts
PR_SET_PDEATHSIG = 1      # prctl option (linux/prctl.h)
REASON_CHARS = 400

# Lines that are no message of the program's (docs/own-app.md): Realm reports that the libcuda stand-in has no GPU (a
# CPU-only run) and that a processor without a core of its own shares one (slower, still right); the LD_PRELOAD shim
# that it loaded the DSL mapper and that the program's own mapper gives way to it (a user's program). The one
# definition: AutoGuide's catalog takes them as noise too (`is_harmless`).
_HARMLESS = re.compile(r"We are not able to discover the CUDA resources|cuInit\(0\) returned"
                       r"|\{4\}\{threads\}: reservation .* cannot be satisfied"
                       r"|^\[mapperopt\] note: (the LD_PRELOAD shim loaded the DSL mapper |the application .* its own "
                       r"mapper \()")
# Most specific first: the first pattern that matches a stderr line gives the reason.
_ERROR_PATTERNS = [re.compile(p) for p in (
    r"\[mapperopt\] error",
    r"LEGION [A-Z ]*EXCEPTION: |LEGION INTERNAL FATAL ERROR",
    r"^ERROR: ",   # Realm's command-line errors, printed before the assertion that aborts
    r"\{[56]\}\{",
    r"Assertion .* failed",
    r"(?i)\berror\b",
)]
# Messages that mean the application stopped before it ran: bad flags or an unloadable mapper.
_START_PATTERNS = re.compile(
    r"(?m)cannot load mapper library|LEGION STARTUP EXCEPTION|unrecognized lowlevel option|"
    r"failure parsing command line options|expects an integer|^\w+: error: |^error: -[A-Za-z]")
_REALM_PREFIX = re.compile(r"^\[\d+ - [0-9a-f]+\]\s+[\d.]+\s+")


@dataclass(frozen=True)
class Execution:
    """One execution of an application and what the harness made of it.

    Attributes:
        attempt: the record kept in `RunResult.attempts`.
        stage: None when it succeeded (exit 0, one verified result line), else the failure's stage.
        reason: one line saying why it failed, else None.
        log: its stderr then stdout (labelled), for AutoGuide.
    """

    attempt: Attempt
    stage: str | None
    reason: str | None
    log: str


def is_harmless(line: str) -> bool:
    """Whether a line of an application's stderr (Realm's line prefix removed) is no message of the program's: one
    the libcuda stand-in causes on a machine without GPU, or a note of mapperopt's LD_PRELOAD shim."""
    return _HARMLESS.search(line) is not None


def stderr_lines(stderr: str) -> list[str]:
    """The lines of an application's stderr that say something: Realm's line prefix removed, without blank lines and
    harmless ones (`is_harmless`)."""
    lines = [_REALM_PREFIX.sub("", line).strip() for line in stderr.splitlines()]
    return [line for line in lines if line and not is_harmless(line)]


def printed_lines(dsl: str, stderr: str) -> list[str]:
    """The lines of an application's stderr that the print statements of the DSL mapper `dsl` (its text) wrote, in
    order. The runtime writes a print's text bare, with no prefix: a line is one when it matches the format of one of
    the mapper's print statements (each `{}` any text), and is neither Realm's (its line prefix) nor mapperopt's
    (`[mapperopt]`). Empty for a mapper without print statements, or a text that does not parse."""
    try:
        program = parse(dsl)
    except DslSyntaxError:  # a run reaches its processes only with a mapper that parsed
        return []
    statements = [s for top in program.statements
                  for s in (top.body if isinstance(top, A.FuncDef) else (top,)) if isinstance(s, A.Print)]
    if not statements:
        return []
    formats = re.compile("|".join(".*".join(map(re.escape, s.fmt.split("{}"))) for s in statements))
    return [line for line in stderr.splitlines() if formats.fullmatch(line) and not _REALM_PREFIX.match(line)
            and not line.startswith("[mapperopt]")]


def first_error(stderr: str) -> str | None:
    """The most informative error line of an application's stderr (`stderr_lines`), or None."""
    for pattern in _ERROR_PATTERNS:
        for line in stderr_lines(stderr):
            if pattern.search(line):
                return clip(line)
    return None


def clip(line: str, limit: int = REASON_CHARS) -> str:
    """`line` cut to at most `limit` characters at the end of a word, with "…" where it was cut."""
    if len(line) <= limit:
        return line
    cut = line[:limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip() + "…"


def clip_start(line: str, limit: int = REASON_CHARS) -> str:
    """`line` cut to at most `limit` characters keeping its end: from the start of a word, with "…" where it was cut
    (`clip` keeps the start)."""
    if len(line) <= limit:
        return line
    cut = line[len(line) - limit + 1:]
    space = -1 if line[-len(cut) - 1].isspace() else cut.find(" ")  # -1: the cut is at a word's start already
    return "…" + (cut[space + 1:] if space < limit // 2 else cut).lstrip()


def failure_line(stderr: str) -> str | None:
    """Why an application that failed stopped, from its stderr: its most informative error line (`first_error`),
    else its last line that says something (`stderr_lines`: a flag it rejects, say), at most REASON_CHARS
    characters; None when it said nothing."""
    said = stderr_lines(stderr)
    return first_error(stderr) or (clip_start(said[-1]) if said else None)


def parse_output(stdout: str) -> tuple[list[dict | None], dict | None]:
    """The result lines (docs/running.md; None for one that is not a JSON object) and the last profile line
    (§5; None if absent or malformed) printed on `stdout`."""
    results, profile = [], None
    for line in stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            results.append(_json_object(line[len(RESULT_PREFIX):]))
        elif line.startswith(PROFILE_PREFIX):
            profile = _json_object(line[len(PROFILE_PREFIX):])
    return results, profile


# What a SIGKILL's reason says of its sender (AutoGuide tells them apart): the out-of-memory killer where this cgroup
# counted a kill during the execution (`oom_kills`), else either it or another process, which only the kernel's log
# can tell apart.
KILLED_BY_OOM = (", by the kernel's out-of-memory killer (its memory cgroup counted an out-of-memory kill while it "
                 "ran)")
KILLED_BY_ANY = ", by the kernel's out-of-memory killer or by another process"
# How a reason that a user's program's MAPPEROPT_RESULT line could not be read begins (AutoGuide tells it apart).
UNREAD_OWN_CHECK = "the program's own check cannot be read: "
# How a failed check's reason begins (a benchmark's result line, or a user's program's own check); a user's program's
# names its line, on either output, and ends with the check as the program printed it (AutoGuide quotes both).
OWN_CHECK_FAILED = "the correctness check failed (exit status "
OWN_LINE_IS = "; its MAPPEROPT_RESULT line is "
# A failed own check's reason where the line has no "check" object.
NO_CHECK = 'its MAPPEROPT_RESULT line says "verified": false and gives no "check" object'


# A user's program's result line (docs/own-app.md), on its standard output or standard error: the tag at the line's
# start, after any whitespace or mpirun --tag-output's "[job,rank]<stdout>:" ("<stderr>:"), then whitespace, `{` or
# the line's end (a longer word, "MAPPEROPT_RESULTS", is text). A benchmark's line, `parse_output`'s, starts with
# RESULT_PREFIX itself. Realm's and Legion's log lines start with "[node - thread]": never a result line.
OWN_RESULT_LINE = re.compile(r"\s*(?:\[\d+,\d+\]<std(?:out|err)>:\s*)?" + re.escape(RESULT_PREFIX.strip())
                             + r"(?=[\s{]|$)")


def reported_check(reason: str) -> str:
    """What a failed own check reported, from the reason `classify` gave (`OWN_CHECK_FAILED`, anywhere in it): its
    "check" value as the program printed it, or that its line has none; the whole `reason` for another one."""
    found = re.search(re.escape(OWN_CHECK_FAILED) + r"[^)]*\): (.*)", reason, re.S)
    said = found[1] if found else reason
    return 'nothing more (the line has no "check" object)' if said == NO_CHECK else said


def _printed_check(text: str) -> str | None:
    """The text of the "check" value of `text`, one JSON object that `json.loads` read (its last "check", the one
    that read kept), as the program printed it (key order and numbers as they are: `%f`'s 449994.000000 too), else
    None."""
    decoder, found = json.JSONDecoder(), None
    at = text.index("{") + 1
    while (at := json.decoder.WHITESPACE.match(text, at).end()) < len(text) and text[at] != "}":
        key, at = json.decoder.scanstring(text, at + 1)  # after its opening quote
        start = json.decoder.WHITESPACE.match(text, json.decoder.WHITESPACE.match(text, at).end() + 1).end()
        _, at = decoder.raw_decode(text, start)
        if key == "check":
            found = text[start:at]
        at = json.decoder.WHITESPACE.match(text, at).end()
        at += text[at] == ","
    return found


class OwnCheck(NamedTuple):
    """A user's program's own check, as `own_check` read it.

    Attributes:
        failed: the first line that says "verified": false (the standard output's first), as a dict, else None.
        failed_at: where that line is, "line N of the standard output" (or "... error"), else None.
        printed: that line's "check" value as the program printed it (`_printed_check`), else None.
        unread: why a line cannot be read, naming it (UNREAD_OWN_CHECK first), else None.
        passed: whether at least one line says "verified": true and none fails or is unread.
    """

    failed: dict | None
    failed_at: str | None
    printed: str | None
    unread: str | None
    passed: bool


def own_check(stdout: str, stderr: str) -> OwnCheck:
    """A user's program's own check, read fail-safe from every `MAPPEROPT_RESULT` line (`OWN_RESULT_LINE`) of its
    `stdout` and `stderr` (docs/own-app.md). A line with no "verified" is no check; one whose object has "verified"
    more than once, or whose "verified" is neither true nor false, or that is no JSON object, is unread."""
    failed = failed_at = printed = unread = None
    passed = False
    for stream, text in (("output", stdout), ("error", stderr)):
        # Numbered as an editor numbers them; a line that a carriage return rewrites (progress output, `step
        # 40/40\rMAPPEROPT_RESULT {...}`) is read in parts, as a terminal shows each.
        lines = ((number, part) for number, whole in enumerate(text.split("\n"), 1) for part in whole.split("\r"))
        for number, line in lines:
            tagged = OWN_RESULT_LINE.match(line)
            if not tagged:
                continue
            where = f"line {number} of the standard {stream}"
            rest = line[tagged.end():]
            start = tagged.end() + len(rest) - len(rest.lstrip())  # where the JSON starts, for a column
            objects = []  # each object's (key, value) pairs, innermost first: the line's own object comes last
            why = None
            try:
                value = json.loads(rest.strip(), object_pairs_hook=lambda pairs: objects.append(pairs) or dict(pairs))
            except json.JSONDecodeError as exc:
                why = f"it is not valid JSON ({exc.msg} at column {exc.colno + start})"
            else:
                # A repeated "verified" makes the line unread whatever its values (which fails it, as a false
                # would): a line built with the key twice holds no one value that is surely the program's verdict.
                repeats = sum(key == "verified" for key, _ in objects[-1]) if isinstance(value, dict) else 0
                if not isinstance(value, dict):
                    why = "it is not a JSON object"
                elif repeats > 1:
                    why = f'"verified" occurs {"twice" if repeats == 2 else f"{repeats} times"} in it'
                elif "verified" in value and not isinstance(value["verified"], bool):
                    why = f'it says "verified": {json.dumps(value["verified"])}, which is neither true nor false'
                elif value.get("verified") is False and failed is None:
                    failed, failed_at, printed = value, where, _printed_check(rest)
                elif value.get("verified") is True:
                    passed = True
            if why and unread is None:
                unread = f"{UNREAD_OWN_CHECK}{where}, {clip(line, 120)!r}: {why}"
    return OwnCheck(failed, failed_at, printed, unread, passed and failed is None and unread is None)


def _json_object(text: str) -> dict | None:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def oom_kills() -> int | None:
    """How many processes of this process's memory cgroup the kernel's out-of-memory killer (any, the system's too)
    has killed so far: cgroup v2's memory.events or v1's memory.oom_control `oom_kill`; None where neither can be
    read. A SIGKILL of an execution with no new kill counted here came from another process, or from an
    out-of-memory kill this cgroup does not see."""
    try:
        paths = dict(line.split(":", 2)[1:] for line in Path("/proc/self/cgroup").read_text().splitlines())
    except (OSError, ValueError):
        return None
    root = Path("/sys/fs/cgroup")
    # under a cgroup namespace, or in a container, the process's own cgroup is the mount's root
    for file in (root / paths.get("", "/").lstrip("/") / "memory.events", root / "memory.events",
                 root / "memory" / paths.get("memory", "/").lstrip("/") / "memory.oom_control",
                 root / "memory" / "memory.oom_control"):
        try:
            found = re.search(r"^oom_kill (\d+)$", file.read_text(), re.MULTILINE)
        except OSError:
            continue
        if found:
            return int(found[1])
    return None


def classify(exit_code: int | None, stdout: str, stderr: str, timeout_s: float, expect_result: bool = True,
             dsl_mapper: bool = True, oom_killed: bool | None = None) -> tuple[str | None, str | None, dict | None]:
    """Decide whether one execution succeeded.

    Args:
        exit_code: the exit status (negative: killed by that signal, as `subprocess` reports it), or None when
            the harness killed it at the timeout.
        stdout, stderr: everything it printed.
        timeout_s: the timeout it ran under (for the reason).
        expect_result: False for a program that prints no result line (a user's application): exiting 0 succeeds.
        dsl_mapper: whether a DSL mapper mapped the run (only then can an abort be blamed on the mapper).
        oom_killed: whether the kernel's out-of-memory killer killed a process of this cgroup during the execution
            (`oom_kills`); None where that is not known.

    Returns:
        (stage, reason, result): stage and reason None on success; `result` is the parsed result line when there
        is exactly one well-formed line, else None.
    """
    results, _ = parse_output(stdout)
    result = results[0] if len(results) == 1 else None
    unread = failed_line = printed = None
    if not expect_result:  # a user's program: any line's "verified": false fails it (a benchmark prints one line)
        failed, failed_at, printed, unread, _ = own_check(stdout, stderr)
        result = failed or result
        # the failed line is named, to be found in its file (a benchmark prints one line, on its standard output)
        failed_line = failed_at if failed else None
    message = first_error(stderr)
    suffix = f": {message}" if message else ""
    if exit_code is None:
        return "timeout", f"did not finish within {timeout_s:g} s and was killed{suffix}", result
    # A shell or launcher in between reports death by signal N as exit status 128 + N (134 = SIGABRT).
    signum = -exit_code if exit_code < 0 else exit_code - 128 if 128 < exit_code < 160 else None
    stage = "start" if _START_PATTERNS.search(stderr) else "run"
    if signum == signal.SIGABRT and message is None:
        # An abort that printed something, or with no DSL mapper in use, is the program's own (abort(), a failed check).
        tail = stderr_lines(stderr)[-3:]
        if tail or not dsl_mapper:
            said = f": {clip_start(' / '.join(tail))}" if tail else " without a message"
            return stage, f"the program aborted (SIGABRT){said}", result
        return ("run", "aborted without any message (silent abort): the program's own abort() or failed assertion, "
                       "or a region requirement its mapper left without an instance", result)
    if signum == signal.SIGKILL:
        sender = KILLED_BY_OOM if oom_killed else KILLED_BY_ANY + (
            " (its memory cgroup counted no out-of-memory kill while it ran; `dmesg` lists the kernel's)"
            if oom_killed is False else " (`dmesg` lists the kernel's kills)")
        return "run", f"killed by SIGKILL{sender}{suffix}", result
    if signum is not None:
        what = "aborted" if signum == signal.SIGABRT else f"crashed with {signal_name(signum)}"
        return stage, f"{what}{suffix}", result
    if result is not None and result.get("verified") is False:
        # a user's program's check as it printed it; a benchmark's line (ours) re-serialised, keys sorted
        check = (NO_CHECK if result.get("check") is None else printed if failed_line
                 else json.dumps(result["check"], sort_keys=True))
        where = f"{OWN_LINE_IS}{failed_line}" if failed_line else ""
        return "verify", f"{OWN_CHECK_FAILED}{exit_code}{where}): {check}", result
    if exit_code != 0:
        said = failure_line(stderr)
        return stage, f"exited with status {exit_code}{f': {said}' if said else ' and no error message'}", result
    if not expect_result:
        return ("verify", unread, None) if unread else (None, None, None)
    if not results:
        return "run", "exited 0 without printing a MAPPEROPT_RESULT line", None
    if len(results) > 1:
        return "run", f"printed {len(results)} MAPPEROPT_RESULT lines; expected exactly one", None
    if result is None:
        return "run", "printed a MAPPEROPT_RESULT line that is not a JSON object", None
    missing = [k for k in ("time_s", "throughput", "verified") if k not in result]
    if result.get("schema") != RESULT_SCHEMA or missing:
        return "run", f"printed a result line of schema {result.get('schema')!r} missing {missing}", result
    if result["verified"] is not True:
        return "verify", f"the result line says verified={result['verified']!r}", result
    return None, None, result


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL to the execution's process group, then waits (at most KILL_GRACE_S) until every member is gone or
    a zombie: the benchmark, a child of `timeout`, is not reaped by us and takes a moment to exit its threads."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return  # the group is already gone
    deadline = time.monotonic() + KILL_GRACE_S
    while time.monotonic() < deadline and _live_members(proc.pid):
        time.sleep(0.02)


def output_text(data: bytes) -> str:
    """A program's output `data` as text: "\r\n" ends a line as "\n" does; a carriage return alone stays, so that
    lines are numbered as an editor numbers them (Python's text files would end a line at it too)."""
    return data.decode(errors="replace").replace("\r\n", "\n")


def pattern_text(path: Path) -> str:
    """A program's output file (`path`) as the metric and verify patterns read it: `output_text`'s text with each
    carriage return left in it a line break too, so that a line that progress output rewrites (`step 2/2\relapsed:
    12.5 ms\rstep 3/3`) is matched in parts, `^` and `$` (re.MULTILINE) at each, as a terminal shows them and as
    `own_check` reads them.

    Raises:
        OSError: the file cannot be read.
    """
    return output_text(path.read_bytes()).replace("\r", "\n")


def run_in_group(cmd, timeout_s: float | None, **popen) -> subprocess.CompletedProcess:
    """`subprocess.run(cmd, capture_output=True, text=True, stdin=DEVNULL, timeout=timeout_s, **popen)` (None: no
    limit), but in a process group of its own that is killed whole at the end, at the timeout, on an exception
    (Ctrl-C) or when this process dies, even by SIGKILL (`start_guarded`): a program that a wrapper script, a shell
    command or a compiler driver started does not outlive it. Its output is read until `timeout_s` seconds, or
    `OUTPUT_GRACE_S` after its end when a process it started outside its group (`setsid`) keeps the output open:
    that process is killed (`_end_holders`, which says so), not waited for.

    Raises:
        subprocess.TimeoutExpired: past `timeout_s` seconds; its `stdout` and `stderr` hold the output so far (str).
    """
    argv = ["/bin/sh", "-c", cmd] if popen.pop("shell", False) else cmd
    with start_guarded(argv, timeout_s, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                       **popen) as proc:
        output = {proc.stdout: bytearray(), proc.stderr: bytearray()}
        try:
            _read_output(proc, output, timeout_s)
        finally:  # also on success or Ctrl-C: nothing the program started may outlive it
            timed_out = proc.poll() is None
            _kill_group(proc)
            if held := _drain(list(output), output):  # still open: held by a process that left the group
                _end_holders(cmd, held, not timed_out, known=True)
                _drain(held, output)  # what it wrote before
        proc.wait(timeout=KILL_GRACE_S)
    out, err = (output_text(output[p]) for p in (proc.stdout, proc.stderr))
    if timed_out:
        raise subprocess.TimeoutExpired(cmd, timeout_s, out, err)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _read_output(proc: subprocess.Popen, output: dict, timeout_s: float | None) -> None:
    """Reads `proc`'s pipes into `output` (pipe: bytearray) until they end and `proc` has exited, `timeout_s`
    seconds pass (None: no limit), or `OUTPUT_GRACE_S` after `proc`'s exit."""
    deadline = math.inf if timeout_s is None else time.monotonic() + timeout_s
    with selectors.DefaultSelector() as selector:
        for pipe in output:
            selector.register(pipe, selectors.EVENT_READ)
        while (now := time.monotonic()) < deadline and (selector.get_map() or proc.poll() is None):
            if proc.poll() is not None:
                deadline = min(deadline, now + OUTPUT_GRACE_S)
            for key, _ in selector.select(min(deadline - now, 0.2)):  # 0.2 s: to notice the exit
                if chunk := os.read(key.fd, 1 << 16):
                    output[key.fileobj] += chunk
                else:
                    selector.unregister(key.fileobj)


def _drain(pipes: list, output: dict) -> list:
    """Reads what `pipes` hold now into `output` (pipe: bytearray), without waiting; returns those not at their end."""
    still_open = []
    for pipe in pipes:
        os.set_blocking(pipe.fileno(), False)
        try:
            while chunk := os.read(pipe.fileno(), 1 << 16):
                output[pipe] += chunk
        except BlockingIOError:
            still_open.append(pipe)
    return still_open


def _identity(file) -> tuple[int, int]:
    """(st_dev, st_ino) of `file`: a path, or an open file or pipe."""
    st = os.stat(file) if isinstance(file, (str, Path)) else os.fstat(file.fileno())
    return st.st_dev, st.st_ino


def kill_holders(files) -> list[str]:
    """Kills the processes other than this one that have one of `files` (paths, or open files or pipes) open: those
    a program started in a session of its own (`setsid`), which no kill of its process group reaches, found through
    Linux's /proc (only this user's; elsewhere none). Returns them as "pid N (name)"."""
    wanted = {_identity(f) for f in files}
    killed = []
    for pid in _pids():
        if pid == os.getpid() or not _holds(pid, wanted):
            continue
        try:
            name = Path(f"/proc/{pid}/comm").read_text().strip()
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue  # gone meanwhile
        killed.append(f"pid {pid} ({name})")
    return killed


def _end_holders(cmd, files, ended: bool, known: bool) -> None:
    """`kill_holders(files)` for the output `files` of the program `cmd` (a command line or its words), saying so on
    standard error when it kills one or, `known` (the output is known to be held), finds none to kill."""
    killed = kill_holders(files)
    if killed or known:
        program = Path(cmd.split()[0] if isinstance(cmd, str) else cmd[0]).name
        print(f"note: {program}: {'the program ended but ' if ended else ''}a process it started kept its output "
              "open; " + (f"mapperopt killed {', '.join(killed)}" if killed else "it was not found to be killed"),
              file=sys.stderr, flush=True)


def _pids() -> list[int]:
    """The processes' ids (Linux /proc; elsewhere none)."""
    try:
        return [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return []


def _holds(pid: int, wanted: set[tuple[int, int]]) -> bool:
    """Whether process `pid` has a file or pipe of `wanted` ((st_dev, st_ino) pairs) open (False: unreadable)."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False  # gone, or another user's
    for fd in fds:
        try:
            st = os.stat(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in wanted:
            return True
    return False


def _live_members(pgid: int) -> bool:
    """Whether process group `pgid` has a member that is not a zombie, or one whose other threads are still exiting
    (Linux /proc; elsewhere: False): a killed multi-threaded process's main thread turns zombie first, and its files
    (the output pipes) stay open until its last thread ends."""
    for pid in _pids():
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rpartition(")")[2].split()
            if int(fields[2]) == pgid and (fields[0] not in "ZX" or len(os.listdir(f"/proc/{pid}/task")) > 1):
                return True
        except OSError:
            continue  # gone meanwhile
    return False


@lru_cache(maxsize=None)
def _prctl():
    """libc's prctl, or None where there is none (not Linux)."""
    import ctypes
    import ctypes.util

    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _die_with_parent(signum: int):
    """A `preexec_fn` making the child receive `signum` when the process that started it dies (Linux's
    PR_SET_PDEATHSIG, kept across exec), so that even a SIGKILL of the tuner ends its benchmark."""
    prctl, parent = _prctl(), os.getpid()
    return lambda: arm_parent_death(prctl, parent, signum)


def arm_parent_death(prctl, parent: int, signum: int) -> None:
    """In a child of `parent`: receive `signum` when it dies (`prctl` from `_prctl()`, None: not Linux); exits at
    once if it died before the signal was armed."""
    if prctl is not None:
        prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def _guarded(cmd: list[str], timeout_s: float | None) -> tuple[list[str], int]:
    """`cmd` under coreutils' `timeout` when it exists, so that the command's own limit holds even if the
    harness dies: it sends SIGTERM `OWN_TIMEOUT_MARGIN_S` after the harness's timeout (never for None), SIGKILL 5 s
    later. Returns the command and the parent-death signal for its first process (SIGTERM for `timeout`, which
    passes it on to the command's whole process group and kills that 5 s later if need be; SIGKILL for the command
    itself)."""
    wrapper = shutil.which("timeout")
    if wrapper is None:
        return cmd, signal.SIGKILL
    limit = 0 if timeout_s is None else timeout_s + OWN_TIMEOUT_MARGIN_S  # 0: no limit of its own
    return [wrapper, "--kill-after=5", f"{limit:g}", *cmd], signal.SIGTERM


def start_guarded(cmd: list[str], timeout_s: float | None, **popen) -> subprocess.Popen:
    """`subprocess.Popen(cmd, **popen)` in a session (and process group) of its own that ends with this process:
    the parent-death signal (`_die_with_parent`) reaches `timeout` (`_guarded`), which ends the whole group, so
    that even a SIGKILL of mapperopt leaves nothing `cmd` started running for more than seconds. The caller still
    ends the group itself at `timeout_s` seconds (`_kill_group`); `timeout` does it `OWN_TIMEOUT_MARGIN_S` later.

    Raises:
        OSError: `cmd` cannot start (with `timeout`: only `timeout` itself; a missing program is exit status 127).
    """
    guarded, death_signal = _guarded(cmd, timeout_s)
    return subprocess.Popen(guarded, start_new_session=True, preexec_fn=_die_with_parent(death_signal), **popen)


def profiled(run: Execution, settings: dict) -> bool:
    """Whether the profiling execution `run` gave a task profile; if not, `settings["profile_failed"]` says why (the
    run table prints it: the advice then lacks the profile without saying so otherwise)."""
    if run.attempt.profile is not None:
        return True
    why = run.reason if run.stage is not None else "it printed no MAPPEROPT_PROFILE line"
    settings["profile_failed"] = f"{why} ({run.attempt.stderr} in the run folder)"
    return False


def execute(cmd: list[str], run_dir: Path, label: str, timeout_s: float, env: dict[str, str],
            expect_result: bool = True, dsl_mapper: bool = True) -> Execution:
    """Run `cmd` once in its own process group, in `run_dir`, killing the whole group at `timeout_s`.

    Output goes to `stdout{label}.txt` and `stderr{label}.txt` in `run_dir` (label "" or e.g. "-2").
    If the calling process dies (even by SIGKILL), the benchmark is ended within seconds (parent-death signal),
    and its own timeout (`_guarded`) ends it in any case.
    Never raises for a failure of the program, including one that cannot be started (stage "start").
    """
    out_name, err_name = f"stdout{label}.txt", f"stderr{label}.txt"
    oom_before = oom_kills()  # read before the execution's timing starts
    start = time.monotonic()
    timed_out = False
    with open(run_dir / out_name, "wb") as out, open(run_dir / err_name, "wb") as err:
        try:
            if shutil.which(cmd[0]) is None:  # under `timeout`, a missing program would be an exit status
                raise FileNotFoundError(errno.ENOENT, "not found or not executable", cmd[0])
            proc = start_guarded(cmd, timeout_s, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=run_dir,
                                 env=env)
        except OSError as exc:
            err.write(f"cannot start {cmd[0]}: {exc}\n".encode())
            attempt = Attempt(exit_code=None, wall_s=0.0, stdout=out_name, stderr=err_name)
            return Execution(attempt, "start", f"cannot start {cmd[0]}: {exc.strerror or exc}", str(exc))
        try:
            interrupts.check()  # a Ctrl-C that landed in the fork's at-fork hooks (or earlier) stops here
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        except BaseException:  # Ctrl-C: also what left the group (else after `wall`, untimed)
            _kill_group(proc)
            _end_holders(cmd, (out, err), False, known=False)
            raise
        finally:
            # Also on success or Ctrl-C: nothing the application started may outlive the execution.
            _kill_group(proc)
            proc.wait(timeout=KILL_GRACE_S)
    wall = time.monotonic() - start
    # Not timed: what the program started in a session of its own (setsid), which no kill of its group reaches.
    _end_holders(cmd, (run_dir / out_name, run_dir / err_name), not timed_out, known=False)
    stdout, stderr = (output_text((run_dir / name).read_bytes()) for name in (out_name, err_name))
    exit_code = None if timed_out else proc.returncode
    oom_after = oom_kills() if exit_code in (-signal.SIGKILL, 128 + signal.SIGKILL) else None
    stage, reason, result = classify(exit_code, stdout, stderr, timeout_s, expect_result, dsl_mapper,
                                     oom_killed=None if None in (oom_before, oom_after) else oom_after > oom_before)
    _, profile = parse_output(stdout)
    attempt = Attempt(exit_code=exit_code, wall_s=round(wall, 3), result=result, profile=profile,
                      stdout=out_name, stderr=err_name)
    log = f"--- stderr ---\n{stderr}\n--- stdout ---\n{stdout}" if stage else ""
    return Execution(attempt, stage, reason, log)


def default_mapper_verdict(cmd: list[str], run_dir: Path, timeout_s: float, env: dict[str, str]) -> dict:
    """How Legion's default mapper fares with application command `cmd` (no `-mapper` flag): {"status": "ok" or
    "failed", "stage": None or a stage of `records.STAGES`, "reason"}. A wrong result that the default mapper
    also gives belongs to the application or its problem size, not to the mapper (AutoGuide says so).

    The verdict is cached per command line (`toolchain.cache_dir()/default-verdicts/`), so a search that fails
    verification many times runs the default mapper once; the execution's files are `stdout-default.txt` and
    `stderr-default.txt` in `run_dir`.
    """
    key = hashlib.sha256(shlex.join(cmd).encode()).hexdigest()[:16]
    path = toolchain.cache_dir() / "default-verdicts" / f"{key}.json"
    if path.is_file():
        with suppress(MapperoptError):  # a cache: a verdict a crash or a hand damaged is made again
            return read_json(path, fields={"status": str, "stage": (str, None), "reason": (str, None)})
    run = execute(cmd, run_dir, "-default", timeout_s, env, dsl_mapper=False)
    verdict = {"status": "failed" if run.stage else "ok", "stage": run.stage, "reason": run.reason,
               "command": shlex.join(cmd)}
    if run.stage not in ("timeout", "start"):  # those may say more about the machine's load than the program
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, json.dumps(verdict) + "\n")
    return verdict


INLINE = "<mapper>"  # the file name of a mapper given as text, for the compiler


def _resolve_mapper(cfg, mapper) -> tuple[str, str | None, str]:
    """(name, DSL text or None for Legion's default mapper, file name for diagnostics)."""
    if isinstance(mapper, Path) or (isinstance(mapper, str) and mapper.endswith(".dsl") and "\n" not in mapper
                                    and ";" not in mapper):
        path = Path(mapper)
        if path.is_dir():  # not "not found": it exists
            files = sorted(str(f) for f in path.glob("*.dsl"))
            named = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
            raise MapperoptError(f"--mapper {mapper} is a folder, not a DSL file" + (
                f": its .dsl files are {named}" if files else ", and it holds no .dsl file"),
                hint="--mapper takes one DSL file (or default" + (", expert" if cfg.expert else "") + ")")
        if not path.exists():  # a device or a pipe (/dev/stdin) exists: `read_source` reads it up to its limit
            keywords = ["default", "expert"] if cfg.expert else ["default"]  # a user's program has no expert
            keyword = closest(str(path).lower(), keywords, cutoff=0.7)  # the keywords are lower case: DEFAULT too
            raise MapperoptError(f"mapper file {path} not found",
                                 hint=(f"did you mean --mapper {keyword}? " if keyword else "")
                                 + "--mapper takes default (Legion's default mapper)"
                                 + (", expert (the benchmark's expert mapper)" if cfg.expert else "")
                                 + " or a DSL file")
        return path.name, read_source(path), str(path)
    if mapper == "default":
        return "default", None, ""
    if mapper == "expert":
        return "expert", cfg.expert_dsl(), str(cfg.expert_path)
    if not isinstance(mapper, str):
        raise MapperoptError(f"mapper must be 'default', 'expert', a Path or DSL text, not {type(mapper).__name__}")
    return "inline", mapper, INLINE


def _new_run_dir(app: str, out_dir: str | Path | None) -> tuple[Path, list[Path]]:
    """The run folder, created: `out_dir`, else a new `runs/<app>/<YYYYMMDD-HHMMSS>-<6 hex>/`; and the folders this
    made, innermost first (`removed_if_failed`)."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    path = Path(out_dir) if out_dir is not None else Path("runs") / app / f"{stamp}-{secrets.token_hex(3)}"
    return path, new_folder(path, exist_ok=out_dir is not None)


def new_folder(path: Path, exist_ok: bool = False) -> list[Path]:
    """Creates the folder `path` and its missing parents; returns the folders this made, innermost first
    (`remove_made`)."""
    made = [p for p in (path, *path.parents) if not p.exists()]
    path.mkdir(parents=True, exist_ok=exist_ok)
    return made


def remove_made(folders: list[Path]) -> None:
    """Removes `folders` (innermost first) while they are empty: what a set-up that failed made, without what
    another process has put there since."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


class RunInterrupted(KeyboardInterrupt):
    """A Ctrl-C (or SIGTERM) during a run whose folder `run_dir` was made: the folder keeps what ran so far, without
    result.json."""

    def __init__(self, run_dir: Path):
        super().__init__(str(run_dir))
        self.run_dir = run_dir


@contextmanager
def named_if_interrupted(run_dir: Path):
    """Turns a Ctrl-C in the body into `RunInterrupted(run_dir)`, for the command to say what is kept where."""
    try:
        yield
    except RunInterrupted:
        raise
    except KeyboardInterrupt as exc:
        raise RunInterrupted(run_dir) from exc


@contextmanager
def removed_if_failed(made: list[Path]):
    """Removes the folders `made` (`remove_made`) when the body raises: a run whose set-up fails (a user's program
    that cannot be discovered) leaves no half-made run folder behind."""
    try:
        yield
    except BaseException:
        remove_made(made)
        raise


def _stored_description(app, size: str, cpus: int, gpus: int, extra_args: tuple[str, ...]):
    """The committed description of benchmark `app` (an `AppDescription`, a CUDA build's at size ci with the size's
    counts) where a run at `size` on `cpus` CPUs and `gpus` GPUs with `extra_args` would describe the same: size ci,
    its counts, no flags, and a build with the CUDA variants it lists (`build_app`: nvcc, and cuBLAS for a GEMM);
    else None, as for a user's program (a `UserApp`), which has none."""
    from mapperopt.benchmarks.apps import LAYERS
    from mapperopt.descriptions import AppDescription

    if not isinstance(app, str):
        return None
    cfg = load_config(app)
    sz = cfg.size(size)
    if size != "ci" or extra_args or (cpus, gpus) != (sz.cpus, sz.gpus):
        return None
    stored = cfg.stored_description()
    if any("GPU" in t["variants"] for t in stored["tasks"]) and not (
            toolchain.cuda_enabled("auto") and (app not in LAYERS or toolchain.find_cublas() is not None)):
        return None
    return AppDescription.from_json(json.dumps(stored))


def _compile(dsl: str, filename: str, app: str, size: str, cpus: int, gpus: int, run_dir: Path,
             memory: dict[str, int] | None = None, extra_args: tuple[str, ...] = ()
             ) -> tuple[Path | None, str | None, str | None, str]:
    """Compile a DSL mapper for this run, checked against the launch domains of the run's own flags (`extra_args`)
    and the machine `check` probes for them (`run_probe_json`: counts, `memory` sizes in MiB, cache). Returns
    (library, failed stage, reason, log); writes `mapper.dsl` once both are known (a discovery that fails writes
    nothing), copies the generated C++ to `mapper.cc` when there is one and, on success, replaces `mapper.dsl` by
    the canonical text compiled."""
    from mapperopt.compiler import CheckError, compile_program
    from mapperopt.descriptions import AppDescription, MachineDescription
    from mapperopt.dsl import DslSyntaxError, check, parse
    from mapperopt.probe import run_probe_json

    machine = MachineDescription.from_json(run_probe_json(app, size, extra_args, cpus, gpus, memory))
    # A program given as text is kept as the run folder's mapper.dsl: its diagnostics name that file. (The compiler
    # keeps `filename`, which the mapper's generated code cites.)
    shown = str(run_dir / "mapper.dsl") if filename == INLINE else filename

    def located(exc: Exception) -> tuple[str, str]:  # the diagnostic's first line, and the whole
        whole = str(exc).replace(f"{INLINE}:", f"{shown}:")
        return whole.splitlines()[0], whole

    try:
        # Checked before the build that describe_app needs, where the committed description is the one the build
        # would print: a mapper `check` refuses costs no build of the application.
        program = parse(dsl, shown)
        stored = _stored_description(app, size, cpus, gpus, extra_args)
        diagnostics = check(program, stored, machine) if stored is not None else []
        if any(d.is_error for d in diagnostics):
            raise CheckError(diagnostics, dsl)
    except (DslSyntaxError, CheckError) as exc:
        (run_dir / "mapper.dsl").write_text(dsl)
        return None, "parse" if isinstance(exc, DslSyntaxError) else "check", *located(exc)
    app_desc = AppDescription.from_json(describe_app(app, size, cpus, gpus, extra_args, memory=memory))
    if not isinstance(app, str):  # a user's program: E225's and W315's command to check with other flags gives it
        from mapperopt.benchmarks.userapp import built_as, check_words

        app_desc = replace(app_desc, given_as=check_words(app, size, extra_args), built=built_as(app))
    (run_dir / "mapper.dsl").write_text(dsl)
    try:
        compiled = compile_program(dsl, filename, app=app_desc, machine=machine)
    except DslSyntaxError as exc:
        return None, "parse", *located(exc)
    except CheckError as exc:
        return None, "check", *located(exc)
    except BuildError as exc:
        for kept in exc.kept:
            if kept.endswith(".cc"):
                shutil.copyfile(kept, run_dir / "mapper.cc")
        return None, "compile", exc.message.splitlines()[0], exc.log
    shutil.copyfile(compiled.cpp_path, run_dir / "mapper.cc")
    if compiled.diagnostics:  # warnings and notes, as `check` renders them: `run` prints them
        from mapperopt.dsl.errors import render_all

        (run_dir / "check.txt").write_text(render_all(compiled.diagnostics, compiled.dsl_text) + "\n")
    # The mapper's run-time messages cite lines of the text it was compiled from, under its file name.
    (run_dir / "mapper.dsl").write_text(compiled.dsl_text)
    return Path(compiled.so_path), None, None, ""


def no_replay_flags(dsl: str, profile: bool = False) -> list[str]:
    """Legion's `-lg:no_physical_tracing` for an execution of the DSL mapper `dsl` (text) that has an InstanceLimit
    or is profiled (`profile`), else []. Both need `map_task` for every task of every iteration, which a replayed
    trace skips, so the mapper refuses to memoize those tasks; with physical tracing on, Legion then records a traced
    loop again in every iteration and the execution's time grows with the square of its iterations (stencil at `ci`,
    InstanceLimit on `increment`: 2.3 s for 250 steps, 9.1 s for 500; `benchmarks/trace_limit.py`). Without
    physical tracing every iteration is mapped and the time stays linear."""
    limited = any(isinstance(s, A.InstanceLimitStmt) for s in parse(dsl).statements)
    return ["-lg:no_physical_tracing"] if limited or profile else []


def _grown(value: int, time_s: float, wall_s: float, min_time_s: float, timeout_s: float) -> int:
    """The iteration count for the next calibration execution, or `value` when it cannot grow.

    The flag's count includes no fixed part that does not scale, so multiplying it by r multiplies the measured
    time by at least r; the growth is capped so that the predicted wall time stays within half the timeout."""
    want = min(MAX_GROWTH, GROWTH_MARGIN * min_time_s / max(time_s, 1e-9))
    room = 1 + max(0.0, 0.5 * timeout_s - wall_s) / max(time_s, 1e-9)
    factor = min(want, room)
    return max(value, math.ceil(value * factor)) if factor > 1 else value


def _summary(measured: list[Attempt]) -> dict:
    from mapperopt.benchmarks.protocol import estimate

    values = [a.result["throughput"] for a in measured]
    est = estimate(values)
    # One execution: its spread 0 and interval [v, v] would read as no noise; none, and why.
    single = len(values) == 1
    return {"throughput": statistics.median(values), "trimmed_mean": est.value,
            "spread": None if single else est.spread, "interval": None if single else [est.low, est.high],
            "no_spread": "one measured execution: no estimate of the noise" if single else None,
            "time_s": statistics.median(a.result["time_s"] for a in measured)}


def _transient(run: Execution) -> bool:
    """A failure that may say more about the machine than the mapper: a timeout or a SIGKILL."""
    code = run.attempt.exit_code
    return run.stage == "timeout" or code in (-signal.SIGKILL, 128 + signal.SIGKILL)


def _number_files(run_dir: Path, attempts: list[Attempt]) -> list[Attempt]:
    """A lone execution's files lose their number: `stdout.txt` instead of `stdout-1.txt` (in command.txt too)."""
    if len(attempts) != 1:
        return attempts
    for name in ("stdout-1.txt", "stderr-1.txt", "trace-1.jsonl"):
        if (run_dir / name).exists():
            os.replace(run_dir / name, run_dir / name.replace("-1.", "."))
    command = run_dir / "command.txt"  # run again by hand, it writes the trace the folder holds
    if command.is_file():
        trace = str((run_dir / "trace-1.jsonl").resolve())
        command.write_text(command.read_text().replace(trace, trace.replace("trace-1.jsonl", "trace.jsonl")))
    return [replace(attempts[0], stdout="stdout.txt", stderr="stderr.txt")]


def _write_feedback(result: RunResult, run_dir: Path) -> None:
    from mapperopt.autoguide import explain

    (run_dir / "feedback.json").write_text(json.dumps(explain(result).to_json(), indent=2) + "\n")


def run_benchmark(app: str, mapper: str | Path = "default", *, size: str = "ci", cpus: int | None = None,
                  gpus: int | None = None, repeats: int = 1, max_repeats: int | None = None,
                  out_dir: str | Path | None = None, timeout_s: float | None = None, min_time_s: float | None = None,
                  trace: bool = False, profile: bool = False, extra_args=(), csize: int | None = None,
                  fsize: int | None = None, zsize: int | None = None, retries: int = TRANSIENT_RETRIES) -> RunResult:
    """Run benchmark `app` with a mapper and measure it.

    Args:
        app: benchmark name (a `configs/<app>.yaml` exists), or a user's program (`userapp.UserApp`; then
            `userapp.run_user_app` runs it, without calibration).
        mapper: "default" (Legion's default mapper), "expert" (the config's expert DSL), a `Path` to a DSL file,
            or DSL text (a str that is neither keyword nor a file name ending in `.dsl`).
        size: a size of the config ("ci", "small", "gpu").
        cpus: CPU processors (`-ll:cpu`); default: the size's.
        gpus: GPUs (`-ll:gpu`, plus the size's `-ll:fsize`/`-ll:zsize`); default: the size's.
        repeats: measured executions (at least, with `max_repeats`); `throughput` is their median,
            `trimmed_mean` and `interval` the measurement protocol's estimate (`mapperopt.benchmarks.protocol`).
        max_repeats: when above `repeats`, executions go on until the protocol's interval is tight
            (`protocol.enough`) or this many were measured (the adaptive R).
        out_dir: the run folder (created); default `runs/<app>/<YYYYMMDD-HHMMSS>-<6 hex>/` under the current folder.
        timeout_s: wall-clock limit per execution, seconds; default: the size's.
        min_time_s: minimum measured time per execution, seconds; default: the size's. While an execution measures
            less, the config's iterations flag is scaled up and the application run again (calibration); those
            executions come first in `attempts` and are counted in `settings["calibration_runs"]`;
            `settings["min_time_met"]` says whether the first measured execution reached the minimum (later
            repeats vary with the machine's noise).
        trace: write the mapper's placement trace (`-mapper-trace`; DSL mappers only).
        profile: collect per-task times: after the measured executions, one more execution of at most
            `PROFILE_ITERATIONS` timed iterations with `-mapper-profile` (DSL mappers only), which maps every
            execution afresh (no trace replay) so that each one is profiled; `RunResult.profile` holds its
            `MAPPEROPT_PROFILE` object plus `"iterations"`, or None when it failed. The measured executions keep
            Legion's tracing and are not profiled.
        extra_args: more application arguments; a flag the size or the harness already sets (e.g. `-i`,
            `-ll:csize`) takes the value given here.
        csize, fsize, zsize: system, framebuffer (per GPU) and zero-copy memory in MiB; default: the size's.

    An execution that times out or is killed by SIGKILL is run again (`retries` times, default
    `TRANSIENT_RETRIES`) before the run is recorded as failed: a loaded machine can cause either.

    Returns:
        The `RunResult`, also written to `result.json` in the run folder, with `feedback.json` beside it.
        Throughputs are in the application's unit (the config's `unit`), times in seconds.

    Raises:
        MapperoptError: unknown benchmark or size, bad counts, a missing mapper file, trace/profile with the
            default mapper, or GPUs asked for on a machine without an NVIDIA driver or an application built
            without CUDA.
        ToolchainError, BuildError: Legion, a compiler or the application's own build is broken.
    """
    if isinstance(app, UserApp):  # a user's program (`--app`): runs through the LD_PRELOAD shim
        return run_user_app(app, mapper, size=size, cpus=cpus, gpus=gpus, repeats=repeats, max_repeats=max_repeats,
                            out_dir=out_dir, timeout_s=timeout_s, trace=trace, profile=profile, extra_args=extra_args,
                            csize=csize, fsize=fsize, zsize=zsize)
    cfg = load_config(app)
    sz = cfg.size(size)
    # the counts given (not the size's): advice's commands carry them, to run on the same machine
    given = {k: v for k, v in (("cpus", cpus), ("gpus", gpus)) if v is not None}
    cpus, gpus = processor_counts(sz.cpus if cpus is None else cpus, sz.gpus if gpus is None else gpus, extra_args)
    timeout_s = sz.timeout_s if timeout_s is None else timeout_s
    min_time_s = sz.min_time_s if min_time_s is None else min_time_s
    max_repeats = repeats if max_repeats is None else max_repeats
    if cpus < 1 or gpus < 0 or repeats < 1 or max_repeats < repeats or timeout_s <= 0 or min_time_s < 0:
        raise MapperoptError("need cpus >= 1, gpus >= 0, 1 <= repeats <= max_repeats, timeout_s > 0 and "
                             "min_time_s >= 0")
    memory = {k: v for k, v in (("csize", csize), ("fsize", fsize), ("zsize", zsize)) if v is not None}
    if any(v < 1 for v in memory.values()):
        raise MapperoptError(f"memory sizes are in MiB and must be at least 1, got {memory}")
    sz = replace(sz, **memory)
    require_gpu_driver(gpus, size, sz.gpus, extra_args)
    if gpus and not toolchain.cuda_enabled("auto"):
        raise MapperoptError(f"{app} is built without CUDA variants (nvcc not found or Legion without CUDA), "
                             f"so it cannot use {gpus} GPU(s)", hint="install the CUDA toolkit or set CUDA_HOME")
    name, dsl, filename = _resolve_mapper(cfg, mapper)
    if (trace or profile) and dsl is None:
        raise MapperoptError("trace and profile need a DSL mapper (Legion's default mapper writes neither): "
                             "give one with --mapper, e.g. --mapper expert or --mapper my.dsl")
    args, passthrough = _app_args(sz.app_args(cpus, gpus), absolute_paths(app, extra_args))
    if not args[cfg.iterations_flag].isdigit():
        raise MapperoptError(f"{cfg.iterations_flag} must be a whole number, got {args[cfg.iterations_flag]!r}")
    run_dir, made = _new_run_dir(app, out_dir)
    with named_if_interrupted(run_dir), writing_in(run_dir):  # a full disk names the run folder
        settings = {"size": size, "cpus": cpus, "gpus": gpus, "util": sz.util, "repeats": repeats,
                    "max_repeats": max_repeats, **memory, "given": given, "timeout_s": timeout_s,
                    "min_time_s": min_time_s, "iterations_flag": cfg.iterations_flag,
                    "extra_args": [str(a) for a in extra_args]}

        def finish(**fields) -> RunResult:
            result = RunResult(app=app, mapper=name, run_dir=str(run_dir), dsl=dsl, settings=settings, **fields)
            # whole or not at all: a folder without figures has no result.json
            write_atomically(run_dir / "result.json", json.dumps(result.to_json(), indent=2) + "\n")
            _write_feedback(result, run_dir)
            return result

        mapper_flags = []
        if dsl is not None:
            with removed_if_failed(made):
                so, stage, reason, log = _compile(dsl, filename, app, size, cpus, gpus, run_dir, memory,
                                                  tuple(map(str, extra_args)))
            if so is None:
                return finish(status="failed", stage=stage, reason=reason, log=log)
            mapper_flags = ["-mapper", str(so)]
        with removed_if_failed(made):  # after the mapper's check, which may refuse it without this build
            exe = build_app(app)
        settings["exe"] = str(exe)
        untraced = no_replay_flags(dsl) if dsl is not None else []

        env = toolchain.runtime_env()
        resources, passthrough = _override_flags(sz.resource_flags(cpus, gpus), passthrough)
        # Logs on stderr (a Legion abort prints nothing otherwise), unless the user chose a log file.
        logfile = [] if "-logfile" in passthrough or "-logfile" in sz.legion_flags else ["-logfile", "stderr"]
        legion_flags = [*resources, *sz.legion_flags, *logfile]
        attempts: list[Attempt] = []
        measured: list[Attempt] = []
        commands: list[str] = []
        calibrating = min_time_s > 0
        allowed = retries

        def done() -> bool:
            from mapperopt.benchmarks.protocol import enough

            values = [a.result["throughput"] for a in measured]
            return len(values) >= max_repeats or (len(values) >= repeats and enough(values, repeats, max_repeats))

        while not done():
            label = f"-{len(attempts) + 1}"
            trace_flags = ["-mapper-trace", str((run_dir / f"trace{label}.jsonl").resolve())] if trace else []
            cmd = [str(exe), *[a for kv in args.items() for a in kv], *passthrough, *legion_flags, *mapper_flags,
                   *untraced, *trace_flags]
            commands.append(shlex.join(cmd))
            (run_dir / "command.txt").write_text(
                f"# run in {run_dir.resolve()} with LD_LIBRARY_PATH={env['LD_LIBRARY_PATH']}\n" + "\n".join(commands)
                + "\n")
            run = execute(cmd, run_dir, label, timeout_s, env)
            attempts.append(run.attempt)
            if run.stage is not None and _transient(run) and retries > 0:
                retries -= 1
                continue
            retried = allowed - retries
            if run.stage is not None:
                settings.update(iterations=int(args[cfg.iterations_flag]), retried=retried,
                                calibration_runs=len(attempts) - len(measured) - 1 - retried, command=commands[-1])
                if run.stage == "verify" and dsl is not None:
                    settings["default_mapper"] = default_mapper_verdict(
                        [str(exe), *[a for kv in args.items() for a in kv], *passthrough, *legion_flags], run_dir,
                        timeout_s, env)
                return finish(status="failed", stage=run.stage, reason=run.reason, log=run.log,
                              attempts=tuple(_number_files(run_dir, attempts)))
            if calibrating and run.attempt.result["time_s"] < min_time_s and len(attempts) <= MAX_RESCALES:
                value = int(args[cfg.iterations_flag])
                grown = _grown(value, run.attempt.result["time_s"], run.attempt.wall_s, min_time_s, timeout_s)
                if grown > value:
                    args[cfg.iterations_flag] = str(grown)
                    continue
            calibrating = False
            measured.append(run.attempt)

        attempts = _number_files(run_dir, attempts)
        measured = [a for a in attempts if a.exit_code == 0][-len(measured):]
        settings.update(iterations=int(args[cfg.iterations_flag]), retried=retried,
                        calibration_runs=len(attempts) - len(measured) - retried, measured_runs=len(measured),
                        min_time_met=measured[0].result["time_s"] >= min_time_s, command=commands[-1])
        task_profile = None
        if profile:
            iterations = min(int(args[cfg.iterations_flag]), PROFILE_ITERATIONS)
            cmd = [str(exe), *[a for kv in {**args, cfg.iterations_flag: str(iterations)}.items() for a in kv],
                   *passthrough, *legion_flags, *mapper_flags, *no_replay_flags(dsl, profile=True), "-mapper-profile"]
            (run_dir / "command.txt").write_text((run_dir / "command.txt").read_text()
                                                 + f"# profile\n{shlex.join(cmd)}\n")
            run = execute(cmd, run_dir, "-profile", timeout_s, env)
            if profiled(run, settings):
                done = run.attempt.result or {}  # what the application ran: warm-up, timed, untimed after
                task_profile = {**run.attempt.profile, "iterations": iterations, "warmup": done.get("warmup"),
                                "timed": done.get("iterations"), "after": done.get("after", 0)}
        return finish(status="ok", unit=measured[0].result.get("unit"), attempts=tuple(attempts), profile=task_profile,
                      **_summary(measured))
