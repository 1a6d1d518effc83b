"""mapperopt's own files read and written with errors that name them: a damaged JSON file (cut short by a full disk
or a crash, or edited), and a write the file system refuses (full, read-only, not permitted)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
from pathlib import Path
from typing import Any, Iterator

from mapperopt.errors import MapperoptError

# The write failures a user fixes outside mapperopt, by what they mean.
_REFUSED = {errno.ENOSPC: "no space left on device", errno.EDQUOT: "disk quota exceeded",
            errno.EROFS: "read-only file system", errno.EACCES: "permission denied", errno.EPERM: "not permitted"}


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


def write_atomically(path: Path, text: str | bytes) -> None:
    """Writes `text` (str or bytes) to a temporary file beside `path`, then renames it: readers see the old or the
    new file, and a failed write (a full disk) leaves the old one as it was.

    Raises:
        OSError: the write failed, naming `path`; no temporary file is left behind.
    """
    path = Path(path)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        if isinstance(text, bytes):
            partial.write_bytes(text)
        else:
            partial.write_text(text)
        os.replace(partial, path)
    except OSError as exc:
        with contextlib.suppress(OSError):  # a later process has another pid: nothing would ever remove it
            partial.unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror, str(path)) from None


@contextlib.contextmanager
def writing_in(folder: Path) -> Iterator[None]:
    """Names `folder` in a full disk's `OSError` raised inside the block without a file name (a short write's
    ENOSPC names none), so that the error says which file system is full."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None or exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        raise OSError(exc.errno, exc.strerror, str(folder)) from None


def refused_write(exc: OSError) -> MapperoptError | None:
    """The error to show for `exc` when it is a write the file system refused, naming the file (and the build cache,
    MAPPEROPT_CACHE, when the file is in it) and what to do; None for any other `OSError`."""
    from mapperopt.toolchain import CACHE_ENV, cache_path

    full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
    if exc.errno not in _REFUSED or not (exc.filename or full):  # a full disk, even where the writer names no file
        return None
    what, path, cache = _REFUSED[exc.errno], Path(exc.filename or "a file"), cache_path()
    if exc.filename and path.absolute().is_relative_to(cache.absolute()):
        return MapperoptError(f"{CACHE_ENV}={cache} is not writable ({what}): cannot write {path}",
                              hint=("free space there, or " if full else "") + f"set {CACHE_ENV} to a writable "
                                   "folder (default ~/.cache/mapperopt)")
    return MapperoptError(f"cannot write {path}: {what}",
                          hint=("free space there" if full else "make it writable, or work in a writable folder")
                               + ", then run the same command again (`tune` and `compare` continue where they "
                                 "stopped)")
