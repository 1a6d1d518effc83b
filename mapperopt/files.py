"""mapperopt's own files read and written with errors that name them: a damaged JSON file (cut short by a full disk
or a crash, or edited), and a write the file system refuses (full, read-only, not permitted)."""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, Collection, Iterator, Mapping

from mapperopt.errors import MapperoptError

# The write failures a user fixes outside mapperopt, by what they mean.
_REFUSED = {errno.ENOSPC: "no space left on device", errno.EDQUOT: "disk quota exceeded",
            errno.EROFS: "read-only file system", errno.EACCES: "permission denied", errno.EPERM: "not permitted"}


def read_json(path: Path, hint: str | None = None, fields: Mapping[str, Any] | None = None) -> dict:
    """The JSON object stored in the file `path`, with its fields' types checked.

    Args:
        hint: how to recover when the file is damaged; default: restore it from a copy.
        fields: the fields the reader uses: name -> its kind; a name that ends in "?" may be missing, and the name
            `str` (the type) stands for every field. A kind is a type (`float` takes an integer too, None a null),
            `Positive` (a finite number above 0: a throughput), a list of one kind (a list of such items), a dict
            like `fields` (an object with such fields), `AtLeast` or `OneOf` (the values of a JSON type that a
            setting allows), or a tuple of kinds (any of them).

    Raises:
        FileNotFoundError: there is no such file.
        MapperoptError: the file cannot be read (a folder in its place: `wrong_kind`'s error), is not valid JSON
            (its line and column in the message), is not a JSON object, or a field of `fields`, at any depth, is
            missing or of another kind (named by its path, e.g. 'groups[0].runs').
    """
    def damaged(why: str) -> MapperoptError:
        return MapperoptError(f"{path} is damaged: {why}", hint=hint or "restore it from a copy")

    try:
        value = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise wrong_kind(exc) or MapperoptError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except json.JSONDecodeError as exc:
        raise damaged(f"not valid JSON ({exc.msg}, line {exc.lineno} column {exc.colno})") from None
    except ValueError as exc:  # not UTF-8
        raise damaged(f"not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise damaged(f"not a JSON object ({_json_kind(value)})")
    why = _wrong_fields(value, fields or {}, "")
    if why:
        raise damaged(why)
    return value


class Positive:
    """The kind (`read_json`'s `fields`) of a finite number above 0, e.g. a throughput: a figure of 0, below or
    NaN is damage, never a measurement."""


class AtLeast:
    """The kind (`read_json`'s `fields`) of a finite number (an integer when `integer`) at least `low`: a count or a
    number of seconds that its option takes (--cpus >= 1, --timeout >= protocol.SHORTEST_TIMEOUT_S)."""

    def __init__(self, low: float, integer: bool = False):
        self.low, self.base = low, int if integer else float

    def admits(self, value: Any) -> bool:
        return _is(value, self.base) and math.isfinite(value) and value >= self.low

    def __str__(self) -> str:
        return f"{_KINDS[self.base]} >= {self.low:g}"


class OneOf:
    """The kind (`read_json`'s `fields`) of a string among `values`: a choice (a feedback level, a status). `values`
    is kept, not copied: a registry (the optimizers') admits what is registered when a file is read."""

    base = str

    def __init__(self, values: Collection[str]):
        self.values = values

    def admits(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.values

    def __str__(self) -> str:
        return f"one of {', '.join(map(repr, self.values))}"


def wrong_fields(value: dict, fields: Mapping[Any, Any]) -> str | None:
    """Why the JSON object `value` (e.g. a journal's record) lacks a field of `fields` (as `read_json` takes them)
    or has one of another kind, naming the field by its path; None when it has neither."""
    return _wrong_fields(value, fields, "")


def _wrong_fields(value: dict, fields: Mapping[Any, Any], prefix: str) -> str | None:
    """Why the object `value`, at the field path `prefix` ("" or "groups[0]."), lacks a field of `fields` or has one
    of another kind; None when it has neither."""
    for name, kind in fields.items():
        if name is str:
            items = list(value.items())
        elif name.rstrip("?") in value:
            items = [(name.rstrip("?"), value[name.rstrip("?")])]
        elif name.endswith("?"):
            continue
        else:
            return f"its field '{prefix}{name}' is missing"
        for key, item in items:
            why = _wrong(item, kind, f"{prefix}{key}")
            if why:
                return why
    return None


def _wrong(value: Any, kind: Any, where: str) -> str | None:
    """Why `value`, the field at path `where`, is not of `kind` (see `read_json`); None when it is."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    outer = [list if isinstance(k, list) else dict if isinstance(k, dict) else k for k in kinds]
    shaped = [k for k, o in zip(kinds, outer) if _is(value, o)]
    if not shaped:
        # a value of the right JSON type that is not allowed (an impossible number, an unknown choice) is shown itself
        allowed = [o.base for o in outer if isinstance(o, (AtLeast, OneOf))] + [float] * (Positive in outer)
        shown = repr(value) if any(_is(value, b) for b in allowed) else _json_kind(value)
        return f"its field '{where}' is {shown}, not " + " or ".join(map(_json_kind, outer))
    if isinstance(shaped[0], list):
        return next((why for i, item in enumerate(value) if (why := _wrong(item, shaped[0][0], f"{where}[{i}]"))),
                    None)
    return _wrong_fields(value, shaped[0], f"{where}.") if isinstance(shaped[0], dict) else None


# JSON's names of the types `json.loads` gives
_KINDS = {dict: "an object", list: "a list", str: "a string", float: "a number", int: "an integer", bool: "true or "
          "false", None: "null", Positive: "a positive number"}


def _is(value: Any, kind: Any) -> bool:
    if kind is None:
        return value is None
    if isinstance(value, bool):  # an int to Python, not to JSON
        return kind is bool
    if kind is Positive:
        return isinstance(value, (int, float)) and math.isfinite(value) and value > 0
    if isinstance(kind, (AtLeast, OneOf)):
        return kind.admits(value)
    return isinstance(value, (int, float) if kind is float else kind)


def _json_kind(value: Any) -> str:
    """`value`'s kind in JSON's terms ("a list"); of a type in `_KINDS`, that type's; of an `AtLeast` or a `OneOf`,
    the values it allows."""
    if isinstance(value, (AtLeast, OneOf)):
        return str(value)
    if value is None or isinstance(value, type):
        return _KINDS.get(value, str(value))
    return "a number" if is_number(value) else _KINDS.get(type(value), type(value).__name__)


def is_number(value: Any) -> bool:
    """Whether `value` is a JSON number (an int or a float, not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class NotUtf8(ValueError):
    """Bytes that are not UTF-8 text: where the first bad one is, as an editor counts (line and column in characters,
    from 1), and its value."""

    def __init__(self, line: int, column: int, byte: int):
        super().__init__(f"not UTF-8 text (byte 0x{byte:02x})")
        self.line, self.column, self.byte = line, column, byte


def decode_utf8(data: bytes) -> str:
    """`data` as UTF-8 text, the way a file the user wrote (a DSL file, an application file) is read.

    Raises:
        NotUtf8: at its first bad byte.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        column = len(before[before.rfind(b"\n") + 1 :].decode("utf-8")) + 1  # valid up to the bad byte
        raise NotUtf8(before.count(b"\n") + 1, column, data[exc.start]) from None


# What `read_capped` calls a file of each kind that is not a regular file.
_NOT_REGULAR = {stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device", stat.S_IFIFO: "a FIFO",
                stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a folder"}


def read_capped(path: str | Path, limit: int, what: str, hint: str, regular_only: bool = False) -> bytes:
    """The bytes of the file `path` that the user gave (`what`: "a DSL file"), read no further than `limit` bytes:
    a device such as /dev/zero, or a huge file, would take all memory.

    Args:
        hint: what to check when the file is over the limit.
        regular_only: refuse, unopened, what is not a regular file (a FIFO would wait for a writer).

    Raises:
        OSError: the file cannot be opened or read.
        MapperoptError: it has more than `limit` bytes (its size, or "more than" the limit for a device), or, with
            `regular_only`, it is not a regular file.
    """
    if regular_only:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            kind = _NOT_REGULAR.get(stat.S_IFMT(mode), "a special file")
            raise MapperoptError(f"{path} is not a regular file ({kind}): {what} is a file of text",
                                 hint="is this the file you meant?")
    with open(path, "rb") as f:
        data = f.read(limit + 1)
        info = os.fstat(f.fileno())
    if len(data) > limit:
        size = f"{info.st_size:,}" if stat.S_ISREG(info.st_mode) else f"more than {limit:,}"
        raise MapperoptError(f"{path} has {size} bytes: {what} has at most {limit >> 20} MiB ({limit:,} bytes)",
                             hint=hint)
    return data


def restore_hint(kind: str) -> str:
    """The hint for a damaged file of a folder that `tune` or `compare` made (`kind`: "tuning", "comparison")."""
    return f"restore the {kind} folder from a copy, or start a new one with `--new`"


def write_atomically(path: Path, text: str | bytes) -> None:
    """Writes `text` (str or bytes) to a temporary file beside `path`, then renames it: readers see the old or the
    new file, and a failed write (a full disk) leaves the old one as it was. A symbolic link is written through (its
    target gets the text; the link stays), and an existing file keeps its mode.

    Raises:
        OSError: the write failed, naming `path`; no temporary file is left behind.
    """
    given = Path(path)
    path = Path(os.path.realpath(given))
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        mode = path.stat().st_mode & 0o7777 if path.exists() else None
        if isinstance(text, bytes):
            partial.write_bytes(text)
        else:
            partial.write_text(text)
        if mode is not None:
            partial.chmod(mode)
        os.replace(partial, path)
    except OSError as exc:
        with contextlib.suppress(OSError):  # a later process has another pid: nothing would ever remove it
            partial.unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror, str(given)) from None


def rewrite(path: Path, text: str) -> None:
    """Writes `text` to the file `path` names, as `write_atomically` does; a file with more than one hard link, or one
    that a rename cannot replace (a file bind-mounted alone, as Docker's `-v my.dsl:/w/my.dsl` does: EBUSY or EXDEV),
    is written in place instead, so that all its names keep reading one file (a rename would leave the others the old
    text). Its text is first written beside it whole, so that a full disk stops the write before the file changes.

    Raises:
        OSError: the write failed, naming `path`.
    """
    real = Path(os.path.realpath(path))
    if not real.exists() or real.stat().st_nlink < 2:
        try:
            write_atomically(path, text)
            return
        except OSError as exc:
            if exc.errno not in (errno.EBUSY, errno.EXDEV):
                raise
    trial = real.with_name(f".{real.name}.{os.getpid()}")
    try:
        try:
            trial.write_text(text)
        finally:
            trial.unlink(missing_ok=True)  # frees its room for the file itself
        with real.open("w") as out:
            out.write(text)
    except OSError as exc:
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


def wrong_kind(exc: OSError) -> MapperoptError | None:
    """The error to show for `exc` when a folder is where mapperopt keeps a file of its own (a journal, a lock) or a
    file where it keeps a folder, naming the path and what to do; None for any other `OSError`."""
    if exc.filename is None or exc.errno not in (errno.EISDIR, errno.ENOTDIR):
        return None
    what = "is a folder, where mapperopt keeps a file" if exc.errno == errno.EISDIR else \
        "cannot be used: part of this path is a file where a folder belongs"
    return MapperoptError(f"{exc.filename} {what}", hint="remove or rename it, then run the same command again")


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


def cannot_write(path: str | Path, exc: OSError) -> MapperoptError:
    """The error for an output file the user named (`compile -o`, `explain --png`) that cannot be written: like a C
    compiler's, one line naming the file and why; the folder is the user's to make."""
    return MapperoptError(f"cannot write {path}: {exc.strerror}")


def check_writable(path: str | Path) -> None:
    """Refuses, before the work whose result goes there, an output file whose folder is missing, not a folder or not
    writable.

    Raises:
        MapperoptError: `cannot_write`'s error.
    """
    folder = Path(path).absolute().parent
    if not folder.exists() or not folder.is_dir():
        why = errno.ENOENT if not folder.exists() else errno.ENOTDIR
        raise cannot_write(path, OSError(why, os.strerror(why)))
    exc = creation_error(folder)
    if exc is not None:
        raise cannot_write(path, exc)


def creation_error(folder: str | Path) -> OSError | None:
    """The error creating a file in the existing `folder` gives (None: a file can be created there). Creating one is
    the only sure test: access(2) passes /proc for root, and says EACCES for a read-only mount."""
    try:
        fd, scratch = tempfile.mkstemp(dir=folder, prefix=".mapperopt-")
    except OSError as exc:
        return exc
    os.close(fd)
    os.unlink(scratch)
    return None
