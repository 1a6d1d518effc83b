"""Error types shared by every layer.

Every error that reaches the command line derives from `MapperoptError`; the CLI prints its message (and its
`hint`, when there is one) and exits with status 1, never with a traceback.
"""

from __future__ import annotations


class MapperoptError(Exception):
    """Root of mapperopt's errors.

    Args:
        message: what went wrong, naming the thing and where.
        hint: how to fix it, or None.
    """

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"


class ToolchainError(MapperoptError):
    """Legion, a compiler or another native tool is missing or broken."""


class BuildError(MapperoptError):
    """A native build failed. `log` holds the compiler output, `kept` the files kept for inspection."""

    def __init__(self, message: str, log: str = "", kept: list[str] | None = None, hint: str | None = None):
        super().__init__(message, hint)
        self.log = log
        self.kept = kept or []
