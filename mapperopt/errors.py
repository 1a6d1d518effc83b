"""Error types shared by every layer.

Every error that reaches the command line derives from `MapperoptError`; the CLI prints its message (and its
`hint`, when there is one) and exits with its `exit_code`, never with a traceback: 1, or 2 for a `UsageError`.
"""

from __future__ import annotations

import difflib
import signal


def closest(word: str, options, cutoff: float = 0.6) -> str | None:
    """The option `word` is most likely a typo of, for a "did you mean" hint, or None (difflib's ratio >= `cutoff`)."""
    close = difflib.get_close_matches(word, list(options), n=1, cutoff=cutoff)
    return close[0] if close else None


def extended(word: str, options) -> str | None:
    """The one option that begins with `word` (`init` of `init_field`), for a "did you mean" hint where `closest`
    finds none (a short prefix is too unlike the whole name for its ratio), or None (none, or several)."""
    found = [o for o in dict.fromkeys(options) if o != word and o.startswith(word)]
    return found[0] if len(found) == 1 and word else None


def install_extra(extra: str, direct_url: dict | None = None) -> str:
    """The command that adds the optional packages of mapperopt's pip extra `extra`, as this copy was installed:
    from the checkout it came from (`pip install -e '<checkout>[extra]'` for an editable install), else from the
    package index by name; with this interpreter's pip, so that they land in the environment that runs mapperopt.
    `direct_url`: pip's record of where mapperopt came from (PEP 610), read from the installed copy when None."""
    import json
    import shlex
    import sys
    from importlib import metadata
    from pathlib import Path
    from urllib.parse import unquote, urlparse

    if direct_url is None:
        # the first copy that records it: run from a checkout, its build's mapperopt.egg-info comes first and does not
        records = (d.read_text("direct_url.json") for d in metadata.distributions(name="mapperopt"))
        try:
            direct_url = json.loads(next((r for r in records if r), "null"))
        except ValueError:
            direct_url = None
    spec, editable = f"mapperopt[{extra}]", False
    if isinstance(direct_url, dict) and isinstance(direct_url.get("dir_info"), dict):  # a folder, not an archive
        url = urlparse(str(direct_url.get("url", "")))
        checkout = Path(unquote(url.path))
        if url.scheme == "file" and (checkout / "pyproject.toml").is_file():
            spec, editable = f"{checkout}[{extra}]", bool(direct_url["dir_info"].get("editable"))
    return shlex.join([sys.executable, "-m", "pip", "install", *["-e"] * editable, spec])


class MapperoptError(Exception):
    """Root of mapperopt's errors.

    Args:
        message: what went wrong, naming the thing and where.
        hint: how to fix it, or None.
    """

    exit_code = 1  # the command line's exit status

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"


class UsageError(MapperoptError):
    """A command line that is wrong in itself, whatever the files and the machine: a missing argument, an option's
    value that no run could take, options that exclude each other. Exit status 2, as click's own usage errors."""

    exit_code = 2


class ToolchainError(MapperoptError):
    """Legion, a compiler or another native tool is missing or broken."""


class BuildError(MapperoptError):
    """A native build failed. `log` holds the compiler output, `kept` the files kept for inspection."""

    def __init__(self, message: str, log: str = "", kept: list[str] | None = None, hint: str | None = None):
        super().__init__(message, hint)
        self.log = log
        self.kept = kept or []


def signal_name(number: int) -> str:
    """The name of signal `number` ("SIGFPE" for 8), or "signal N" for a number this system does not name."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def exit_status(code: int | None) -> str:
    """"exit status N" for a process's exit status as `subprocess` reports it, naming the signal that killed it when
    N is negative: "exit status -8 (SIGFPE)"."""
    return f"exit status {code}" + (f" ({signal_name(-code)})" if code is not None and code < 0 else "")
