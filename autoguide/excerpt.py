"""Trimming raw output to the lines that matter, within a size budget.

A Legion failure log is mostly noise for an optimizer: start-up warnings, backtraces with dozens of frames, colour
codes. The excerpt keeps the error line, the lines that belong to it (a DSL diagnostic's source line, caret, hint;
a Legion exception's provenance and task tree trace; the lines a C++ compiler prints after an error) and nothing of
the backtrace.
"""

from __future__ import annotations

import re
from collections.abc import Callable

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# A Realm logger record: "[0 - 7f4694e76000]    0.105983 {5}{legion}: text".
REALM_PREFIX = re.compile(r"^\[\d+ - [0-9a-f]+\]\s+[\d.]+\s+(?=\{\d\}\{)")
NEW_RECORD = re.compile(r"^(\{\d\}\{[\w-]+\}): ")
STOP = re.compile(r"^(Backtrace:|stack trace: \d+ frames|0x[0-9a-f]+ (at|in) )")
SEPARATOR = re.compile(r"^-{10,}$")
SECTION = re.compile(r"^--- (stderr|stdout) ---$")  # the harness's labels between an execution's stderr and stdout
LOOKS_LIKE_ERROR = re.compile(r"(?i)\b(error|exception|fatal|assert\w*|abort\w*|fail\w*|terminate\w*)\b")

DEFAULT_BUDGET = 1500  # characters
MAX_LINE = 400  # characters of one line kept
MAX_LINES = 16


def clean(text: str, is_noise: Callable[[str], bool]) -> list[str]:
    """The output as lines without colour codes, trailing blanks, Realm's `[node - thread] time` prefix, empty lines
    and noise lines."""
    out = []
    for line in ANSI.sub("", text).splitlines():
        line = REALM_PREFIX.sub("", line.rstrip())
        if line.strip() and not is_noise(line):
            out.append(line)
    return out


def _cut(line: str) -> str:
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…"


def block(lines: list[str], start: int, context: int) -> list[str]:
    """The matched line `lines[start]` and up to `context` lines after it that belong to it: it stops at a
    backtrace, at the harness's stdout/stderr label, and at a new logger record unless the matched line is a record
    of the same level and category. Separator lines of Legion's appended blocks are dropped."""
    out = [lines[start]]
    head = NEW_RECORD.match(lines[start])
    for line in lines[start + 1: start + 1 + context]:
        if STOP.match(line) or SECTION.match(line):
            break
        record = NEW_RECORD.match(line)
        if record and not (head and record.group(1) == head.group(1)):
            break
        if SEPARATOR.match(line):
            continue
        out.append(line)
    return out


def trim(lines: list[str], budget: int = DEFAULT_BUDGET) -> str:
    """Join `lines` (each cut to `MAX_LINE` characters, at most `MAX_LINES`) within `budget` characters; what is
    left out is counted in a final `[... N more lines]` line."""
    kept: list[str] = []
    used = 0
    for line in lines[:MAX_LINES]:
        line = _cut(line)
        if used + len(line) + 1 > budget and kept:
            break
        kept.append(line)
        used += len(line) + 1
    if len(kept) < len(lines):
        kept.append(f"[... {len(lines) - len(kept)} more lines]")
    return "\n".join(kept)


def tail(lines: list[str], count: int = 8) -> list[str]:
    """The last `count` lines of output, without the harness's labels."""
    return [line for line in lines if not SECTION.match(line)][-count:]


def first_error(lines: list[str]) -> int | None:
    """Index of the first line that looks like an error (for output no rule recognises), or None."""
    return next((i for i, line in enumerate(lines) if LOOKS_LIKE_ERROR.search(line)), None)
