"""mapperopt's own files read with errors that name them: a damaged JSON file (cut short by a full disk or a crash,
or edited)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mapperopt.errors import MapperoptError


def read_json(path: Path, hint: str | None = None) -> Any:
    """The JSON value stored in the file `path`.

    Args:
        hint: how to recover when the file is damaged; default: restore it from a copy.

    Raises:
        FileNotFoundError: there is no such file.
        MapperoptError: the file cannot be read, or is not valid JSON (its line and column in the message).
    """
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise MapperoptError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except json.JSONDecodeError as exc:
        raise MapperoptError(f"{path} is damaged: not valid JSON ({exc.msg}, line {exc.lineno} column {exc.colno})",
                             hint=hint or "restore it from a copy") from None
    except ValueError as exc:  # not UTF-8
        raise MapperoptError(f"{path} is damaged: not valid JSON ({exc})", hint=hint or "restore it from a copy") \
            from None

