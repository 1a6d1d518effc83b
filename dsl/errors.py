"""Diagnostics of the DSL: compile-time `Diagnostic`s, `DslSyntaxError`, `CheckError` and `DslRuntimeError`.

Compile-time diagnostics render in the dsl-reference.md §11.1 format:

    <file>:<line>:<col>: error[E101]: <message>
      <line> | <source line>
             |         ^
      hint: <hint>
      note: <note>

A diagnostic about the whole file (line 0: a statement it lacks, a check it could not make) is `<file>: error[E224]:
<message>`, without source line and caret.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from mapperopt.dsl.ast import Loc
from mapperopt.errors import MapperoptError

# Characters of a source line shown under a diagnostic: a longer line is cut to a window around the caret (`_window`).
SOURCE_WIDTH = 100
# Warnings and notes of one code printed in full (`render_all`); the others are counted in one line.
REPEATS = 10
# Semantic errors shown in full by `check`: the first MAX_ERRORS, then the first of each other code; the others
# are counted per code (`... and 5 more error[E203] like this`).
MAX_ERRORS = 20


@dataclass(frozen=True)
class Diagnostic:
    """One compile-time finding.

    Attributes:
        code: stable code, `Ennn` (error) or `Wnnn` (warning or note), dsl-reference.md §11.
        severity: "error", "warning" or "note" (W304 and W309 are notes).
        message: names the offending token and what was expected.
        loc: where; the caret points at `loc.col`; line 0 for the whole file.
        hints: concrete fixes, each printed as `hint: ...`.
        notes: related facts or positions, each printed as `note: ...`.
        at_point: a mapping function failed on a launch's point in static evaluation (the error `explain` shows at
            that point in its placement table).
    """

    code: str
    severity: str
    message: str
    loc: Loc
    hints: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    at_point: bool = field(default=False, compare=False)

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def render(self, source_text: str | list[str] | None = None) -> str:
        """The §11.1 text (no trailing newline); the source excerpt and caret appear when `source_text` (the text, or
        its lines) is given and holds the line."""
        label = "warning" if self.severity == "warning" else self.severity
        out = [f"{self.loc}: {label}[{self.code}]: {self.message}"]
        lines = source_text if isinstance(source_text, list) else source_lines(source_text) if source_text else []
        if 1 <= self.loc.line <= len(lines):
            text, at = _window(lines[self.loc.line - 1], max(self.loc.col - 1, 0))
            num = str(self.loc.line)
            shown = [_visible(c) for c in text]
            # Keep tabs in the caret's indentation so that it lines up under the same column.
            pad = "".join(c if c == "\t" else " " * len(c) for c in shown[:at])
            out.append(f"  {num} | {''.join(shown)}")
            out.append(f"  {' ' * len(num)} | {pad}^")
        out += [f"  hint: {h}" for h in self.hints]
        out += [f"  note: {n}" for n in self.notes]
        return "\n".join(out)


# The DSL's line breaks, as its lexer counts lines: not the others str.splitlines() knows (U+2028, NEL, form feed).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def source_lines(text: str) -> list[str]:
    """The lines of the DSL text `text`, as its lexer numbers them (without a last empty one after a final break)."""
    lines = _LINE_BREAK.split(text)
    return lines[:-1] if lines[-1] == "" else lines


def _visible(c: str) -> str:
    """The character `c` as a source line shows it: a control character other than a tab (a NUL of a binary file)
    as its escape, `\\x00`, never written raw to the terminal; a line or paragraph separator as `\\u2028`."""
    if c != "\t" and unicodedata.category(c) == "Cc":
        return f"\\x{ord(c):02x}"
    return f"\\u{ord(c):04x}" if unicodedata.category(c) in ("Zl", "Zp") else c  # a terminal would break the line


def _window(text: str, at: int) -> tuple[str, int]:
    """(`text`, `at`), or for a line longer than SOURCE_WIDTH its SOURCE_WIDTH characters around index `at` (the
    caret's), with "..." where it is cut, and the caret's index in that: a compiler's way of keeping the caret on
    screen. The caret gets 30 characters of the line after it where the line has them."""
    if len(text) <= SOURCE_WIDTH:
        return text, at
    start = max(0, min(at - (SOURCE_WIDTH - 30), len(text) - SOURCE_WIDTH))
    end = start + SOURCE_WIDTH
    before = "..." if start else ""
    return f"{before}{text[start:end]}{'...' if end < len(text) else ''}", at - start + len(before)


def error_count(shown: int, omitted: int) -> str:
    """`N error(s)`, and when the checker left some out (`omitted`), which were shown: the first MAX_ERRORS, then
    the first of each other code."""
    if not omitted:
        return f"{shown:,} error(s)"
    if shown <= MAX_ERRORS:
        return f"{shown + omitted:,} error(s) (the first {shown} shown)"
    return f"{shown + omitted:,} error(s) ({shown} shown: the first {MAX_ERRORS}, then the first of each other code)"


def render_all(diagnostics: list[Diagnostic], source_text: str | None, repeats: int = REPEATS,
               left_out: dict[tuple[str, str], int] | None = None) -> str:
    """All diagnostics, each in the §11.1 format, separated by newlines; of the warnings and notes of one code, the
    first `repeats` only, then a line per code that counts the others (`... and 25 more warning[W300] like this`):
    a generated file can have thousands. Errors are capped by the checker (the first MAX_ERRORS, then the first of
    each other code); the errors it left out, per (file, code) in `left_out` (by default the `left_out` of
    `diagnostics`, as `check` returns them), are counted in the same way, before the warnings."""
    if left_out is None:
        left_out = getattr(diagnostics, "left_out", {})
    lines = source_lines(source_text) if source_text else []  # split once: linear in the number of diagnostics
    shown: dict[str, int] = {}
    left: dict[tuple[str, str, str], int] = {}  # (file, severity, code) -> how many were not shown
    out = []
    for d in diagnostics:
        if not d.is_error:
            shown[d.code] = shown.get(d.code, 0) + 1
            if shown[d.code] > repeats:
                key = (d.loc.file, d.severity, d.code)
                left[key] = left.get(key, 0) + 1
                continue
        out.append(d.render(lines))
    out += [f"{file}: ... and {n:,} more error[{code}] like this" for (file, code), n in left_out.items()]
    out += [f"{file}: ... and {n:,} more {severity}[{code}] like this" for (file, severity, code), n in left.items()]
    return "\n".join(out)


class DslSyntaxError(MapperoptError):
    """A syntax error (E100-E110; E112 from `read_source`): the first one stops parsing.

    Attributes:
        code: "E1xx".
        loc: position of the offending token (for E102, just after the previous token).
        token: the offending token's text, or None at end of input.
        expected: human-readable descriptions of the acceptable tokens (may be empty).
        diagnostic: the same error as a `Diagnostic`.
    `str()` gives the §11.1 rendering with the source line and caret.
    """

    def __init__(self, diagnostic: Diagnostic, source_text: str, token: str | None, expected: tuple[str, ...] = ()):
        super().__init__(diagnostic.message, diagnostic.hints[0] if diagnostic.hints else None)
        self.diagnostic = diagnostic
        self.code = diagnostic.code
        self.loc = diagnostic.loc
        self.token = token
        self.expected = expected
        self.source_text = source_text

    def __str__(self) -> str:
        return self.diagnostic.render(self.source_text)


class CheckError(MapperoptError):
    """A program has semantic errors; `diagnostics` holds all findings (errors and warnings), `str()` renders them."""

    def __init__(self, diagnostics: list[Diagnostic], source_text: str | None):
        errors = [d for d in diagnostics if d.is_error]
        super().__init__(f"{len(errors)} error(s) in the mapper")
        self.diagnostics = diagnostics
        self.source_text = source_text

    def __str__(self) -> str:
        errors = [d for d in self.diagnostics if d.is_error]
        omitted = getattr(self.diagnostics, "omitted", 0)  # past the checker's cap: counted, as `check` counts them
        more = f"\n\n{error_count(len(errors), omitted)}" if omitted else ""
        return render_all(errors, self.source_text, left_out=getattr(self.diagnostics, "left_out", {})) + more


class DslRuntimeError(MapperoptError):
    """An error of a mapping decision at run time (R4xx), as the generated mapper would report it.

    Attributes:
        code: "R4xx".
        detail: the message without prefix, context included.
        loc: position of the innermost expression that failed, or None (e.g. R404, which no expression causes).
    `str()` is the one-line `[mapperopt] error Rnnn: ...` text of dsl-reference.md §11.1.
    """

    def __init__(self, code: str, detail: str, loc: Loc | None = None):
        super().__init__(f"[mapperopt] error {code}: {detail}")
        self.code = code
        self.detail = detail
        self.loc = loc
        self.dims: tuple[int, ...] = ()  # R400 of a machine model's index: every dimension out of range there

    def with_context(self, context: str, loc: Loc | None = None, sep: str = "; ") -> DslRuntimeError:
        """The same error with `<sep><context>` appended (and `loc` when it had none)."""
        err = DslRuntimeError(self.code, f"{self.detail}{sep}{context}", self.loc or loc)
        err.dims = self.dims
        return err

    def __str__(self) -> str:
        return self.message
