"""Any Legion program as an application mapperopt can run, map and tune: the application file `mapperopt.yaml`, the
`--app 'CMD ARGS'` form, discovery of the application description, and runs through the LD_PRELOAD shim.

A `UserApp` stands where a benchmark name stands: `run_benchmark`, `load_config` and `describe_app` accept one, so
every command that runs a benchmark (run, tune, compare, check, explain) runs a user's program the same way. The
program is never modified: the DSL mapper enters through the shim (`LD_PRELOAD`), the trace and profile through
environment variables, and the figure of merit and the correctness check come from the application file instead of
a result line. docs/own-app.md documents the file, with an example of every key in its section 3.

The optimizer maximises `throughput`: for a metric where lower is better (wall time by default) it is 1/value, in
"1/<unit>"; `time_s` is the wall time of the execution (the measured time that tune's summary and the Short
measurement warning give is the metric's instead, when it is a time: `protocol.measured_time`).
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import math
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from mapperopt import toolchain
from mapperopt.benchmarks import protocol
from mapperopt.benchmarks.apps import (RESOURCE_FLAGS, _app_args, _override_flags, known_benchmarks, processor_counts,
                                       require_app, require_gpu_driver)
from mapperopt.descriptions import APP_FIELDS
from mapperopt.errors import MapperoptError, UsageError, closest, signal_name
from mapperopt.files import NotUtf8, decode_utf8, read_capped, read_json, write_atomically, writing_in
from mapperopt.records import Feedback, RunResult

APP_FILE = "mapperopt.yaml"
DISCOVERY_TIMEOUT_S = 300
DISCOVERY_FORMAT = "discovery/13"  # part of the cache key: change it when the discovered description changes
VERIFY_TIMEOUT_S = 120
_SIZE_KEYS = {"args", "cpus", "util", "gpus", "csize", "fsize", "zsize", "legion_flags", "timeout_s"}
TUNABLE_TYPE_OF_BYTES = {1: "int8", 2: "int16", 4: "int32", 8: "int64"}
_SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".C")  # a program's source, told apart from the program
_TOP_KEYS = {"app", "executable", "args", "sizes", "metric", "verify", "keep_app_mapper", "env"}


@dataclass(frozen=True)
class Metric:
    """The figure of merit. `regex` None: the wall time of the execution (seconds, lower is better). Otherwise the
    first group of the last match of `regex` in the standard output, a number in `unit` ("": a number without one)."""

    regex: str | None = None
    unit: str = "s"
    higher_is_better: bool = False

    def describe(self) -> str:
        what = "wall time" if self.regex is None else f"/{self.regex}/"
        unit = f" in {self.unit}" if self.unit else " (no unit)"
        return f"{what}{unit}, {'higher' if self.higher_is_better else 'lower'} is better"

    @property
    def throughput_unit(self) -> str:
        """The unit of the figure of merit mapperopt maximises: the metric's, or its inverse when lower is better
        ("1/metric" for a metric without a unit)."""
        if self.higher_is_better:
            return self.unit
        return f"1/{self.unit or 'metric'}"


@dataclass(frozen=True)
class Verify:
    """How a run is judged correct, besides exiting with status 0: `pattern` must occur in the standard output;
    `command` (a shell command, run in `folder`, that of the application file or of the --verify-cmd option, so that
    its relative paths mean what they mean there, with MAPPEROPT_STDOUT, MAPPEROPT_STDERR and MAPPEROPT_RUN_DIR set)
    must exit 0; the lines of the standard output that match `reference_lines` must equal those of the file
    `reference`."""

    pattern: str | None = None
    command: str | None = None
    reference: str | None = None
    reference_lines: str | None = None
    folder: str | None = None

    @property
    def checks_output(self) -> bool:
        """True when something beyond the exit status checks the results."""
        return bool(self.pattern or self.command or self.reference)

    def describe(self) -> str:
        parts = ["exit status 0"]
        if self.pattern:
            parts.append(f"output matches /{self.pattern}/")
        if self.command:
            parts.append(f"`{self.command}` exits 0")
        if self.reference:
            parts.append(f"output equals {self.reference}")
        return ", ".join(parts)


def output_checked(result: RunResult) -> bool:
    """Whether something beyond the exit status checked the output of a run: always for a benchmark;
    for a user's program, its verification or, in every execution, its own check (its result line's "verified":
    true)."""
    s = result.settings or {}
    own = all(a.result and a.result.get("own_check") for a in result.attempts)
    return not s.get("metric") or s["verify"] != Verify().describe() or own


def own_check_seen(result: dict | None) -> bool | None:
    """Whether a user's program prints its own check (`MAPPEROPT_RESULT` lines with "verified", docs/own-app.md), as
    its run `result` (a result.json's data) shows: True where one of its executions passed that check, or it failed
    at stage verify because a line said "verified": false or could not be read; False where the run passed and no
    execution printed one; None where it is not known (no run, or one that failed otherwise)."""
    from mapperopt.benchmarks.harness import UNREAD_OWN_CHECK

    if not result:
        return None
    lines = [a.get("result") or {} for a in result.get("attempts") or []]
    if result.get("stage") == "verify":
        failed = bool(lines) and lines[-1].get("verified") is False
        return True if failed or UNREAD_OWN_CHECK in (result.get("reason") or "") else None
    if result.get("status") != "ok":
        return None
    return any(line.get("own_check") for line in lines)


def pattern_reads_own_check(verify: Verify, run_dir: Path) -> str | None:
    """A note (to follow "Note: ") where `verify` searches layouts on the strength of the program's own check alone: its
    pattern (the only verification given) matches, in the last execution of the run in `run_dir` (its result.json), only
    MAPPEROPT_RESULT lines, on its standard output or, where it occurs nowhere there, its standard error, as the
    verification reads them; None otherwise, or where that output cannot be read."""
    from mapperopt.benchmarks.harness import OWN_RESULT_LINE, pattern_text

    if not verify.pattern or verify.command or verify.reference or not (run_dir / "result.json").is_file():
        return None
    try:
        attempt = (json.loads((run_dir / "result.json").read_text()).get("attempts") or [])[-1]
        outputs = [pattern_text(run_dir / attempt[name]) for name in ("stdout", "stderr")]
    except (OSError, ValueError, IndexError, KeyError, TypeError):  # nothing to tell from
        return None
    for text in outputs:
        starts = {text.rfind("\n", 0, m.start()) + 1 for m in re.finditer(verify.pattern, text, re.MULTILINE)}
        if starts:
            lines = [text[at:].partition("\n")[0] for at in starts]
            if not all(OWN_RESULT_LINE.match(line) for line in lines):
                return None
            return (f"the verify pattern /{verify.pattern}/ matches only the program's own MAPPEROPT_RESULT "
                    "line: layouts are searched on the strength of the program's own check, which must compare "
                    "values that a wrong layout would change.")
    return None


def unsearched_layouts(own_check: bool | None, how: bool = True) -> str:
    """Why layouts are not searched for a user's program without a verification (`Verify.checks_output`: only that
    counts for layouts), one clause to follow a colon, without a final period: as `own_check_seen` found (None: not
    known, which the text allows for); with `how`, ending with how to have them searched."""
    why = {True: "this application's own check (its MAPPEROPT_RESULT lines) is read in every execution but does not "
                 "count for layouts: it may not notice a layout the kernels do not expect, which can make a program "
                 "compute wrong numbers silently",
           False: "nothing verifies this application's results beyond its exit status, and a layout can make a "
                  "program compute wrong numbers silently",
           None: "only a verification counts for layouts, and this application has none: its exit status, and its "
                 "own check where it prints one (MAPPEROPT_RESULT lines, read in every execution), may not notice a "
                 "layout the kernels do not expect, which can make a program compute wrong numbers silently"}
    return why[own_check] + ("; give the application a verification (verify: in its application file, or "
                             "--verify-pattern, --verify-cmd, --reference) to search layouts" if how else "")


@dataclass(frozen=True, eq=False)
class UserApp:
    """A user's Legion program (hashable by identity, so that the benchmark caches accept it).

    Attributes:
        name: the name used for run folders (`runs/<name>/`).
        exe: the executable.
        args: the program's arguments per size (after the executable, before Legion's flags).
        config: the sizes as the harness reads them (`BenchConfig`; no expert mapper, no iterations flag).
        metric, verify: see `Metric`, `Verify`.
        keep_app_mapper: keep the program's own mapper for the tasks the DSL does not name.
        env: extra environment variables for the program.
        path: the application file, or None for `--app 'CMD ARGS'`.
        refuse_layouts: a mapper with Layout statements fails at stage "check" (tuning a program without a
            verification: a layout can make it compute wrong numbers silently, `unsearched_layouts`).
        given: which of `metric`, `verify` and `keep_app_mapper` command-line options set over the application
            file's (`resolve_app`), so that the command printed to run it again gives them too; `unit` where
            --unit or --higher-is-better changed only the unit or direction of the file's metric pattern.
    """

    name: str
    exe: Path
    args: dict[str, tuple[str, ...]]
    config: object
    metric: Metric = Metric()
    verify: Verify = Verify()
    keep_app_mapper: bool = False
    env: dict[str, str] = field(default_factory=dict)
    path: str | None = None
    refuse_layouts: bool = False
    given: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.name


def _where(path: str | None) -> str:
    return path or "--app"


def _split(text: str, what: str, error: type[MapperoptError] = MapperoptError) -> list[str]:
    """`text` split into words as the shell does. Raises `error` (UsageError for an option's value) naming `what` for
    an unclosed quote."""
    try:
        return shlex.split(text)
    except ValueError as exc:  # "No closing quotation", "No escaped character"
        raise error(f"{what}: cannot split {text!r} into words: {exc}") from None


def _str_list(value, what: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(_split(value, what))
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value):
        return tuple(str(v) for v in value)
    raise MapperoptError(f"{what} must be a string or a list of strings, got {value!r}")


def _reject_unknown(where: str, data: dict, known: set[str]) -> None:
    """Raises MapperoptError naming the keys of `data` not in `known`, each with the known key it is close to."""
    unknown = sorted(map(str, set(data) - known))
    if not unknown:
        return
    close = {k: closest(k, sorted(known)) for k in unknown}
    hint = ", ".join(f"'{m}' for '{k}'" for k, m in close.items() if m)
    raise MapperoptError(f"{where}: unknown key{'s' if len(unknown) > 1 else ''} "
                         f"{', '.join(repr(k) for k in unknown)}; known: {', '.join(sorted(known))}",
                         hint=f"did you mean {hint}?" if hint else None)


# A number in exponent form without a dot (`1e-9`), a string to YAML 1.1; not nan or inf, which have their own words.
_EXPONENT_FORM = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")


def _size(name: str, data: dict, where: str, problems: list[MapperoptError]):
    """(the size `name`'s `SizeConfig`, its arguments), or None with every problem of its body added to
    `problems`."""
    from mapperopt.benchmarks.apps import SizeConfig
    from mapperopt.benchmarks.protocol import SHORTEST_TIMEOUT_S

    where = f"{where}: size '{name}'"
    if not isinstance(data, dict):
        problems.append(MapperoptError(f"{where} must be a mapping"))
        return None
    found = len(problems)
    _checked(problems, _reject_unknown, where, data, _SIZE_KEYS)

    def number(key, default, least, kind=int):
        """The value of `key`, at least `least` (a float: finite too)."""
        value = data.get(key)
        if value is None:  # left out, or `cpus:` with nothing after it
            return default
        if kind is float and isinstance(value, str) and _EXPONENT_FORM.fullmatch(value):
            value = float(value)  # YAML 1.1 reads `1e-9`, without a dot, as a string
        if not isinstance(value, (int, float) if kind is float else int) or isinstance(value, bool):
            problems.append(MapperoptError(f"{where}: '{key}' must be a number, got {value!r}"))
            return default
        if value < least or kind is float and not math.isfinite(value):
            problems.append(MapperoptError(f"{where}: '{key}' must be "
                                           f"{'a finite number ' if kind is float else ''}>= {least}, got {value!r}"))
            return default
        return value

    size = SizeConfig(name=name, args={}, cpus=number("cpus", 1, 1), util=number("util", 1, 0),
                      gpus=number("gpus", 0, 0), csize=number("csize", None, 1), fsize=number("fsize", None, 1),
                      zsize=number("zsize", None, 1),
                      legion_flags=_checked(problems, _str_list, data.get("legion_flags", []),
                                            f"{where}: 'legion_flags'", default=()),
                      timeout_s=float(number("timeout_s", 300, SHORTEST_TIMEOUT_S, float)), min_time_s=0.0)
    args = _checked(problems, _str_list, data.get("args", []), f"{where}: 'args'")
    _resource_flags(args or (), "args", where, problems)
    _resource_flags(size.legion_flags, "legion_flags", where, problems)
    return None if len(problems) > found else (size, args)


def _resource_flags(words, what: str, where: str, problems: list[MapperoptError]) -> None:
    """A problem for each of Legion's resource flags among an application file's `args` or `legion_flags` (`what`):
    mapperopt sets them from the size's keys, after the program's arguments (so that one there has no effect) and
    before the legion_flags (so that one there wins, unseen by check, explain and AutoGuide, which use the keys)."""
    effect = ("after the program's arguments, so that this one has no effect" if what == "args" else
              "and models the machine from that key, while the run would take this one")
    for key, flag in RESOURCE_FLAGS.items():
        if flag in words:
            problems.append(MapperoptError(f"{where}: '{what}' sets {flag}, which mapperopt sets from the size's "
                                           f"'{key}' key ({effect})", hint=f"give `{key}: N` in the size instead"))


def _checked(problems: list[MapperoptError], read, *args, default=None):
    """`read(*args)`, or `default` with its error added to `problems`: an application file's keys are checked
    independently, so that every problem is reported at once."""
    try:
        return read(*args)
    except MapperoptError as exc:
        problems.extend(getattr(exc, "problems", [exc]))  # those of an application file one by one
        return default


def raise_together(problems: list[MapperoptError], where: str) -> None:
    """Raises the one problem of `problems`, or one MapperoptError listing them all under `where`, each with its hint
    (its `problems` attribute holds them; a UsageError when all of them are); returns when there are none."""
    if len(problems) == 1:
        raise problems[0]
    if problems:
        said = ["  - " + str(p).replace("\n", "\n    ") for p in problems]  # each with its hint below it
        usage = all(isinstance(p, UsageError) for p in problems)
        error = (UsageError if usage else MapperoptError)(f"{where} has {len(problems)} problems:\n" + "\n".join(said))
        error.problems = problems
        raise error


_STRING_KEYS = {("metric", "regex"): "a regular expression", ("metric", "unit"): "",
                ("verify", "pattern"): "a regular expression", ("verify", "command"): "a shell command",
                ("verify", "reference_lines"): "a regular expression"}


def _strings(section: str, data: dict, where: str, problems: list[MapperoptError], marks: dict) -> dict:
    """`data` (the mapping `section`) with each of its keys that must be a string (`_STRING_KEYS`) but is another
    value (a number, `pattern: 3`, or a list) reported in `problems`, with its line, and left out."""
    kept = dict(data)
    for (of, key), what in _STRING_KEYS.items():
        value = data.get(key)
        if of != section or value is None or isinstance(value, str):
            continue
        line, written = marks.get((section, key)) or (None, None)
        on = f" on line {line}" if line else ""
        hint = (f"quote it: {key}: '{written}'" if written is not None and not isinstance(value, (list, dict))
                else None)
        problems.append(MapperoptError(f"{where}: {section}: {key!r}{on} must be a string"
                                       f"{f' ({what})' if what else ''}, got {value!r}", hint=hint))
        del kept[key]
    return kept


def _metric(data, where: str, problems: list[MapperoptError], marks: dict | None = None) -> Metric | None:
    """The metric, or None with its problems (a bad `better` and a bad regex alike) added to `problems`."""
    if data is None or data == "wall":
        return Metric()
    if not isinstance(data, dict):
        problems.append(MapperoptError(f"{where}: 'metric' must be `wall` or a mapping with regex, unit and better "
                                       f"(higher or lower), got {data!r}"))
        return None
    found = len(problems)
    # an unknown key (a typo) is one problem among those of the known keys' values: all said at once
    _checked(problems, _reject_unknown, f"{where}: metric", data, {"regex", "unit", "better"})
    data = _strings("metric", data, where, problems, marks or {})
    if data.get("better", "lower") not in ("higher", "lower"):
        problems.append(MapperoptError(f"{where}: metric 'better' must be `higher` or `lower`, "
                                       f"got {data['better']!r}"))
    metric = _checked(problems, make_metric, data.get("regex"), data.get("unit"), data.get("better") == "higher",
                      where)
    return None if len(problems) > found else metric


_TIME_WORDS = "|".join(sorted({*protocol.TIME_UNITS, *protocol.TIME_SPELLINGS}, key=len, reverse=True))
# A number's pattern in a metric regex (`[0-9.]+`, `\d+`, `[-+0-9.e]*`), for the example of a regex without a group.
_NUMBER = re.compile(r"\[[^\]]*0-9[^\]]*\][+*]|\\d[+*](?:\\.\\d[+*])?")


def make_metric(regex: str | None, unit: str | None, higher: bool, where: str = "--metric") -> Metric:
    """A `Metric`, checking that `regex` compiles and has a group (the number); a time `unit` spelt out
    (`millisecond`, `protocol.TIME_SPELLINGS`) becomes its short form (`ms`), which is read as a time. Raises
    MapperoptError naming `where`."""
    unit = protocol.TIME_SPELLINGS.get((unit or "").lower(), unit)
    if regex is None:
        return Metric(unit=unit or "s", higher_is_better=higher)
    try:
        groups = re.compile(regex).groups
    except re.error as exc:
        raise MapperoptError(f"{where}: the metric regex {regex!r} is invalid: {exc}") from None
    if not groups:  # the whole match ("ELAPSED 12.5 ms") is rarely a number alone
        number = _NUMBER.search(regex)  # the pattern of the number, if it has one: that goes in the parentheses
        example = (f"{regex[:number.start()]}({number.group(0)}){regex[number.end():]}" if number
                   else f"{regex}[^0-9]*([0-9.]+)")  # else the first number after the pattern's own words
        raise MapperoptError(f"{where}: the metric regex {regex!r} has no group: mapperopt reads the number from its "
                             "first group", hint=f"put parentheses around the number, e.g. {example!r}")
    return Metric(regex, unit or "", higher)


def _after_group(regex: str) -> str:
    """The text of `regex` after its first capturing group ("" where it has none or it does not parse)."""
    opened, k, in_class = [], 0, False  # opened: whether each open group is the first capturing one
    while k < len(regex):
        c = regex[k]
        if c == "\\":
            k += 2
            continue
        if in_class or c == "[":
            in_class = c != "]" if in_class else True
            k += 2 if c == "[" and regex.startswith(("[]", "[^]"), k) else 1
            continue
        if c == "(":
            capturing = not regex.startswith("(?", k) or regex.startswith("(?P<", k)
            opened.append(capturing and not any(opened))
        elif c == ")" and opened and opened.pop():
            return regex[k + 1:]
        k += 1
    return ""


def pattern_unit(metric: Metric) -> tuple[str, str] | None:
    """The time unit the metric's pattern reads, where the word after its group (`([0-9.]+) seconds`) is one and
    its unit (`metric.unit`, None: none given) is another time unit or none, as (the word, the unit it spells: "s");
    None where they agree or the pattern shows no unit: the figures would be off by a factor of 1000, or not read
    as a time."""
    if metric.regex is None:
        return None
    m = re.match(rf"(?:\\s[*+?]?|\\? [*+?]?)*({_TIME_WORDS})(?![A-Za-z/])", _after_group(metric.regex))
    unit = m and protocol.TIME_SPELLINGS.get(m.group(1).lower(), m.group(1))
    if not unit or unit == metric.unit or protocol.TIME_UNITS.get(unit) == protocol.TIME_UNITS.get(metric.unit):
        return None
    return m.group(1), unit


def unit_mismatch(metric: Metric, fix: str = "--unit {unit}") -> str | None:
    """The warning for a metric pattern whose group is followed by a time unit (`([0-9.]+) us`) that its unit
    contradicts, or that has no unit (`pattern_unit`), or None. `fix`: how the user gives the unit, "{unit}" in it
    replaced by the pattern's."""
    if not (found := pattern_unit(metric)):
        return None
    word, unit = found
    has = f"its unit is {metric.unit}" if metric.unit else "no unit is given"
    return (f"the metric pattern /{metric.regex}/ reads a number followed by {word!r}, but {has}: did you "
            f"mean {fix.format(unit=unit)}?")


def make_verify(pattern: str | None = None, command: str | None = None, reference: str | None = None,
                reference_lines: str | None = None, where: str | None = None, folder: str | None = None,
                problems: list[MapperoptError] | None = None) -> Verify | None:
    """A `Verify`, checking its regular expressions and that the reference file exists. Each problem names `where`
    (default: the option that gives the value) and is added to `problems` (None is returned then); without
    `problems`, they are raised together (MapperoptError)."""
    found: list[MapperoptError] = []
    for what, option, regex in (("pattern", "--verify-pattern", pattern),
                                ("reference_lines", "reference_lines", reference_lines)):
        if regex is not None:
            try:
                re.compile(regex)
            except re.error as exc:
                found.append(MapperoptError(f"{where or option}: the verify {what} {regex!r} is invalid: {exc}"))
    if reference is not None and not Path(reference).is_file():
        found.append(MapperoptError(f"{where or '--reference'}: the reference output {reference} does not exist"))
    if problems is None:
        raise_together(found, "the verification")
    else:
        problems.extend(found)
    return None if found else Verify(pattern, command, reference, reference_lines, folder)


def _verify(data, where: str, base: Path, problems: list[MapperoptError], marks: dict | None = None) -> Verify | None:
    """The verification, or None with its problems added to `problems`."""
    if data is None:
        return Verify()
    if not isinstance(data, dict):
        problems.append(MapperoptError(f"{where}: 'verify' must be a mapping with pattern, command, reference and "
                                       f"reference_lines, got {data!r}"))
        return None
    before = len(problems)
    # an unknown key (a typo, said with the key it is close to) and the known keys' problems: all at once
    _checked(problems, _reject_unknown, f"{where}: verify", data,
             {"pattern", "command", "reference", "reference_lines"})
    data = _strings("verify", data, where, problems, marks or {})
    reference = data.get("reference")
    if reference is not None:
        reference = str((base / str(reference)).resolve())
    if data.get("reference_lines") is not None and reference is None:  # it selects lines that nothing compares
        problems.append(MapperoptError(f"{where}: verify: 'reference_lines' chooses the lines compared with "
                                       "'reference', which is not given",
                                       hint="add `reference: FILE` (the expected output), or remove reference_lines"))
    verify = make_verify(data.get("pattern"), data.get("command"), reference, data.get("reference_lines"),
                         where, str(base.resolve()), problems)
    return None if len(problems) > before else verify


def _config(name: str, sizes: dict, where: str):
    from mapperopt.benchmarks.apps import BenchConfig

    return BenchConfig(app=name, expert="", description="", metric="throughput", unit="", iterations_flag="",
                       sizes=sizes, path=where)


def _require_executable(exe: Path, where: str) -> None:
    """Raises MapperoptError naming `where` and `exe` unless `exe` is an executable file: missing, a folder or not
    executable are told apart."""
    if not exe.exists():
        raise MapperoptError(f"{where}: the executable {exe} does not exist",
                             hint=f"build the program first (`{toolchain.command('toolchain', '--help')}` prints "
                                  "the flags)")
    if not exe.is_file():
        raise MapperoptError(f"{where}: {exe} is {'a folder' if exe.is_dir() else 'not a regular file'}, not a program",
                             hint="name the program's executable itself")
    if not os.access(exe, os.X_OK):
        if exe.suffix in _SOURCE_SUFFIXES:  # the program's source, named instead of the program built from it
            built = shlex.quote(str(exe.with_suffix("")))
            me = toolchain.invoked_as()
            hint = (f"it is C++ source: build the program first, e.g. g++ {shlex.quote(str(exe))} "
                    f"$({me} toolchain --cflags) $({me} toolchain --libs) -o {built}")
        else:
            hint = f"chmod +x {shlex.quote(str(exe))}"
        raise MapperoptError(f"{where}: {exe} is not executable", hint=hint)


def _read_yaml(text: str, name: str = "<string>", marks: dict | None = None) -> tuple[
        object, list[tuple[tuple[str, ...], list[int]]]]:
    """(the YAML document `text`, the keys given more than once in one of its mappings: each as (the keys leading to
    it, the key itself last), the lines it is given on)). YAML lets the later of two equal keys replace the earlier
    silently; a merge key's (`<<: *base`) keys, which the mapping's own keys override, are not counted. `name` (the
    file's) is what a syntax error names; `marks`, where given, gets each key's (the keys leading to it, the key
    last) line and, for a plain value, its text as written (`no`, which YAML reads as false).

    Raises:
        yaml.YAMLError: `text` is not valid YAML.
    """
    import yaml

    class Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        def construct_document(self, node):  # the document's nodes, before they become Python values
            found.extend(_duplicate_keys(node, (), set()))
            if marks is not None:
                _key_marks(node, (), marks, set())
            return super().construct_document(node)

    found: list[tuple[tuple[str, ...], list[int]]] = []
    stream = io.StringIO(text)
    stream.name = name  # a syntax error's "in NAME, line L, column C" (not "<unicode string>")
    return yaml.load(stream, Loader=Loader), found


def _tab_hint(text: str, exc) -> str | None:
    """The hint for the YAML syntax error `exc` in `text` where the character it stops at is a tab (YAML does not
    indent with tabs, and PyYAML's message does not say so); None otherwise."""
    mark = getattr(exc, "problem_mark", None)
    lines = text.splitlines()
    if mark is None or mark.line >= len(lines) or lines[mark.line][mark.column:mark.column + 1] != "\t":
        return None
    return f"line {mark.line + 1}, column {mark.column + 1} is a tab: YAML indents with spaces, never tabs"


def _key_marks(node, at: tuple[str, ...], marks: dict, seen: set[int]) -> None:
    """`_read_yaml`'s marks under the YAML mapping node `node`, reached through the keys `at`."""
    import yaml

    if id(node) in seen or not isinstance(node, yaml.MappingNode):
        return
    seen.add(id(node))
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode):
            plain = value.value if isinstance(value, yaml.ScalarNode) and not value.style else None
            marks[(*at, key.value)] = (key.start_mark.line + 1, plain)
            _key_marks(value, (*at, key.value), marks, seen)


def _duplicate_keys(node, at: tuple[str, ...], seen: set[int]):
    """`_read_yaml`'s duplicates under the YAML node `node`, reached through the keys `at`; `seen`: the nodes already
    looked at (an alias, `*base`, is its anchor's node again, and may hold itself)."""
    import yaml

    if id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from _duplicate_keys(item, at, seen)
    if not isinstance(node, yaml.MappingNode):
        return
    lines: dict[str, list[int]] = {}
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
            lines.setdefault(key.value, []).append(key.start_mark.line + 1)
            yield from _duplicate_keys(value, (*at, key.value), seen)
    for key, where in lines.items():
        if len(where) > 1:
            yield (*at, key), where


def _duplicate_problem(where: str, keys: tuple[str, ...], lines: list[int]) -> MapperoptError:
    """The problem of `keys` (`_read_yaml`) given on each of `lines` of the application file `where`."""
    times = {2: "twice", 3: "three times"}.get(len(lines), f"{len(lines)} times")
    if len(set(lines)) == 1:
        on = f"on line {lines[0]}"
    else:
        on = f"on lines {', '.join(map(str, lines[:-1]))} and {lines[-1]}"
    return MapperoptError(f"{where}: {': '.join(repr(k) for k in keys)} is given {times}, {on} (the later would "
                          "replace the earlier)", hint="keep one of them")


# Stated limit: an application file has at most this many bytes, and no more is read. Such a file is tens of lines;
# the DSL file's limit (parser.MAX_SOURCE_BYTES), far above that, already keeps the YAML parse under a second.
MAX_APP_FILE_BYTES = 1 << 20


def read_app_file(path: str | os.PathLike) -> bytes:
    """The bytes of the application file `path`: a regular file of at most MAX_APP_FILE_BYTES (a device such as
    /dev/zero would take all memory, a FIFO wait for a writer).

    Raises:
        OSError: it cannot be read.
        MapperoptError: it is not a regular file, or is over the limit.
    """
    return read_capped(path, MAX_APP_FILE_BYTES, "an application file", "an application file is tens of lines: is "
                       "this the file you meant?", regular_only=True)


def load_app_file(path: str | os.PathLike) -> UserApp:
    """Read an application file (`mapperopt.yaml`).

    Raises:
        MapperoptError: the file is missing or malformed (the message names the key), or the executable is missing;
            every problem of a readable file at once (each with its hint), not one per attempt.
    """
    import yaml  # here, not at the top: `check` and `explain` import this module for their --app option

    path = Path(path)
    where = str(path)
    try:
        marks: dict = {}
        text = decode_utf8(read_app_file(path))
        data, duplicates = _read_yaml(text, where, marks)
    except OSError as exc:
        raise MapperoptError(f"cannot read the application file {path}: {exc.strerror}") from None
    except NotUtf8 as exc:
        raise MapperoptError(f"{where}:{exc.line}:{exc.column}: {exc}",
                             hint="an application file is UTF-8 text: save it as UTF-8 (e.g. iconv -f latin1 -t "
                                  "utf-8)") from None
    except yaml.YAMLError as exc:
        raise MapperoptError(f"{where} is not valid YAML: {exc}", hint=_tab_hint(text, exc)) from None
    if not isinstance(data, dict):
        raise MapperoptError(f"{where} must be a mapping")
    # every problem, each key checked independently (`_checked`); a key given twice first, whose later value is read
    problems: list[MapperoptError] = [_duplicate_problem(where, keys, lines) for keys, lines in duplicates]
    _checked(problems, _reject_unknown, where, data, _TOP_KEYS)
    if "executable" not in data:
        problems.append(MapperoptError(f"{where}: 'executable' is missing",
                                       hint="the path of the program, relative to this file"))
    exe = (path.parent / str(data.get("executable", ""))).resolve()
    words = str(data.get("executable", "")).split()
    if "executable" in data and not exe.exists() and len(words) > 1 and (path.parent / words[0]).is_file():
        # a command line, as --app takes one: its program is built, its arguments go elsewhere
        try:
            words = shlex.split(str(data["executable"]))
        except ValueError:
            pass
        exe = (path.parent / words[0]).resolve()  # the program, whose name names the run folders
        problems.append(MapperoptError(
            f"{where}: 'executable': {str(data['executable'])!r} is the program and its arguments: {exe} exists, "
            "but 'executable' names the program alone",
            hint=f"give `executable: {words[0]}` and the arguments in `args: {json.dumps(words[1:])}` (of every "
                 "size, or in a size's own `args`)"))
    elif "executable" in data:
        _checked(problems, _require_executable, exe, f"{where}: 'executable'")
    name = str(data.get("app") or exe.name)
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        problems.append(MapperoptError(f"{where}: 'app' must be a plain name (letters, digits, _ . -), got {name!r}"))
    common = _checked(problems, _str_list, data.get("args", []), f"{where}: 'args'", default=())
    _resource_flags(common, "args", where, problems)
    raw_sizes = data.get("sizes") or {}
    if not raw_sizes:  # the documentation asks for one; none ran as a size `ci` of 1 CPU that the file never asked for
        problems.append(MapperoptError(f"{where}: 'sizes' {'has no size' if 'sizes' in data else 'is missing'}: "
                                       "give at least one size",
                                       hint="e.g. `sizes: {ci: {cpus: 1}}` (ci is the size every command runs by "
                                            "default)"))
    elif not isinstance(raw_sizes, dict):
        problems.append(MapperoptError(f"{where}: 'sizes' must be a mapping of size names"))
        raw_sizes = {}
    sizes, args = {}, {}
    for size_name, body in raw_sizes.items():
        read = _size(str(size_name), body or {}, where, problems)
        if read is not None:
            sizes[str(size_name)], args[str(size_name)] = read[0], common + read[1]
    keep = data.get("keep_app_mapper", False)
    if not isinstance(keep, bool):
        problems.append(MapperoptError(f"{where}: 'keep_app_mapper' must be true or false, got {keep!r}"))
    env = data.get("env") or {}
    if not isinstance(env, dict):
        problems.append(MapperoptError(f"{where}: 'env' must be a mapping of variable names to values"))
        env = {}
    for variable, value in env.items():  # a list or a mapping reached the program as its Python text ("[1, 2]")
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            # YAML reads `yes`, `on` and `true` as true, which reached the program as "True"
            written = (marks.get(("env", variable)) or (0, None))[1] or ("yes" if value else "no")
            hint = f'quote it to pass it as written: {variable}: "{written}"' if isinstance(value, bool) else None
            problems.append(MapperoptError(f"{where}: env: the value of '{variable}' must be a string or a number, "
                                           f"got {'nothing' if value is None else repr(value)}", hint=hint))
    metric = _metric(data.get("metric"), where, problems, marks)
    verify = _verify(data.get("verify"), where, path.parent, problems, marks)
    raise_together(problems, where)
    return UserApp(name=name, exe=exe, args=args, config=_config(name, sizes, where), metric=metric, verify=verify,
                   keep_app_mapper=keep, env={str(k): str(v) for k, v in env.items()}, path=where)


def app_from_command(command: str, metric: Metric = Metric(), verify: Verify = Verify(), cpus: int = 1,
                     timeout_s: float = 300, keep_app_mapper: bool = False) -> UserApp:
    """The application `--app 'CMD ARGS'`: one size, `ci`, with those arguments.

    Raises:
        UsageError: an empty command, an unclosed quote, or a shell's NAME=value before the program.
        MapperoptError: a program that is missing (not on PATH), a folder or not executable.
    """
    from mapperopt.benchmarks.apps import SizeConfig

    words = _split(command, "--app", UsageError)
    if not words:
        raise UsageError("--app needs a command, e.g. --app './myapp -n 100'")
    assigned = list(itertools.takewhile(lambda w: re.match(r"[A-Za-z_][A-Za-z0-9_]*=", w), words))
    if assigned:  # a shell's `NAME=value ./prog`
        rest = shlex.join(words[len(assigned):]) or "./PROGRAM ARGS"
        env = ", ".join(f"{w.split('=', 1)[0]}: {json.dumps(w.split('=', 1)[1])}" for w in assigned)
        what, it = ("an environment variable", "it") if len(assigned) == 1 else ("environment variables", "them")
        program = words[len(assigned)] if len(words) > len(assigned) else "PROGRAM"
        raise UsageError(f"--app: {' '.join(assigned)} sets {what}; --app takes the program's command line only",
                             hint=f"give {it} in the application file ({APP_FILE}): `env: {{{env}}}` with "
                                  f"`executable: {program}`; or export {it} before mapperopt (`export "
                                  f"{shlex.join(assigned)}`), whose environment the program gets, and give --app "
                                  f"{shlex.quote(rest)}")
    exe = Path(words[0])
    if "/" not in words[0]:
        found = shutil.which(words[0])
        if not found and not exe.exists():
            raise MapperoptError(f"--app: no program {words[0]} on PATH or in this folder",
                                 hint=f"give its path, e.g. --app './{words[0]} ...'")
        exe = Path(found) if found else exe
    if exe.is_dir():
        raise MapperoptError(f"--app: {words[0]} is a folder without {APP_FILE}",
                             hint=f"give the program's command line, or write its {APP_FILE} (docs/own-app.md)")
    exe = exe.resolve()
    _require_executable(exe, "--app")
    # Legion's resource flags in the command line (`-ll:cpu 2`, as the program is run by hand) are the size's: the
    # run and its checks see that machine, and mapperopt's own flags, after the program's, repeat them.
    flags = {flag: key for key, flag in RESOURCE_FLAGS.items()}
    given = {"cpus": cpus, "util": 1, "gpus": 0, "csize": None, "fsize": None, "zsize": None}
    for flag, value in zip(words[1:], words[2:]):
        if flag in flags:
            if not value.isdigit():
                raise UsageError(f"--app: {flag} needs a whole number, got {value!r}")
            given[flags[flag]] = int(value)
    size = SizeConfig(name="ci", args={}, **given, legion_flags=(), timeout_s=float(timeout_s), min_time_s=0.0)
    return UserApp(name=exe.name, exe=exe, args={"ci": tuple(words[1:])}, config=_config(exe.name, {"ci": size},
                                                                                         "--app"),
                   metric=metric, verify=verify, keep_app_mapper=keep_app_mapper)


def resolve_app(spec: str, *, metric: Metric | None = None, verify: Verify | None = None,
                keep_app_mapper: bool | None = None) -> UserApp:
    """`--app SPEC`: an application file (a path to an existing `.yaml`/`.yml` file or a folder holding
    `mapperopt.yaml`), else a command line. `metric`, `verify` and `keep_app_mapper` override the file's.

    Raises:
        MapperoptError: see `load_app_file` and `app_from_command`.
    """
    path = Path(spec)
    if path.is_dir() and (path / APP_FILE).is_file():
        path = path / APP_FILE
    if path.suffix in (".yaml", ".yml") and " " not in spec:
        app = load_app_file(path)
        changes = {k: v for k, v in (("metric", metric), ("verify", verify), ("keep_app_mapper", keep_app_mapper))
                   if v is not None}
        if not changes:
            return app
        fields = {k: getattr(app, k) for k in UserApp.__dataclass_fields__}
        return UserApp(**{**fields, **changes, "given": tuple(changes)})
    return app_from_command(spec, metric or Metric(), verify or Verify(), keep_app_mapper=bool(keep_app_mapper))


def identity(app: UserApp) -> dict:
    """What makes `app` the program a tuning folder tunes (part of its recorded request, `mapperopt tune`), as
    JSON: its application file (absolute) or None, executable, arguments per size, metric, verification, own mapper
    and environment."""
    verify = asdict(app.verify)
    if not app.verify.command:
        verify["folder"] = None  # only a verification command runs there
    return {"file": str(Path(app.path).resolve()) if app.path else None, "executable": str(app.exe),
            "args": {size: list(args) for size, args in app.args.items()}, "metric": asdict(app.metric),
            "verify": verify, "keep_app_mapper": app.keep_app_mapper, "env": dict(app.env)}


# The LD_PRELOAD shim's note, in a DSL run's standard error, that the program registers a mapper of its own.
OWN_MAPPER_NOTE = re.compile(r"^\[mapperopt\] note: the application (.+?) its own mapper \('([^']*)'\)", re.M)


def own_mapper(run_dirs) -> str | None:
    """What the program does with a mapper of its own, as the shim said in the standard error of the DSL runs in
    `run_dirs` ("adds, as mapper 7, its own mapper ('m')"); None when none says it (the program has none)."""
    for run_dir in run_dirs:
        for path in sorted(Path(run_dir).glob("stderr*.txt")):
            found = OWN_MAPPER_NOTE.search(path.read_text(errors="replace"))
            if found:
                return f"{found.group(1)} its own mapper ('{found.group(2)}')"
    return None


def executable_digest(app: UserApp) -> str:
    """The SHA-256 (hex) of `app`'s executable's contents: another build of the same program has another one."""
    return file_digest(app.exe)


def file_digest(path: Path) -> str:
    """The SHA-256 (hex) of the file `path`'s contents."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


_PATH_WORD = re.compile(r"[\w.+~/-]+")


def wrapped_programs(app: UserApp) -> list[Path]:
    """The programs (ELF executables and shared objects) that `app`'s executable, a script (`is_script`), names by
    an absolute path or by one relative to the script's own folder (`exec "$(dirname "$0")/build/app"`): every
    word of its text after the `#!` line that names such a file, read as it is and from each of its slashes on
    (`$DIR/build/app`: `/build/app`, then `build/app` in the script's folder). A rebuild replaces them while the
    script's bytes stay the same. Each as the script names it (a symbolic link that a build points elsewhere is
    read where it points then). [] for a program (not a script) or a script that names none; programs found
    through PATH or a variable set outside the script are not seen."""
    if not is_script(app.exe):
        return []
    try:
        with open(app.exe, "rb") as f:
            text = f.read(1 << 16).decode(errors="replace")
    except OSError:
        return []
    folder, found = app.exe.resolve().parent, {}
    for word in _PATH_WORD.findall(text.partition("\n")[2]):
        tails = [word] + [word[i:] for i, c in enumerate(word) if c == "/" and i]
        for tail in tails:
            for path in ([Path(tail)] if tail.startswith("/") else []) + [folder / tail.lstrip("/")]:
                try:
                    if path.is_file() and path.resolve() != app.exe.resolve():
                        with open(path, "rb") as f:
                            if f.read(4) == b"\x7fELF":
                                found.setdefault(path.resolve(), Path(os.path.normpath(path)))
                except OSError:
                    continue
    return sorted(set(found.values()))


def build_record(app: UserApp) -> dict:
    """What a tuning or comparison folder records of `app`'s build, to notice a rebuild (`build_change`): its
    executable's SHA-256 and, for a script, those of the programs it runs (`wrapped_programs`)."""
    record: dict = {"executable_sha256": executable_digest(app)}
    if wrapped := wrapped_programs(app):
        record["wrapped_sha256"] = {str(p): file_digest(p) for p in wrapped}
    return record


def build_change(app: UserApp, settings: dict) -> tuple[Path, str, str | None] | None:
    """The first file of `app`'s build whose contents differ from what the folder's `settings` recorded
    (`build_record`): (the file, its SHA-256 recorded, its SHA-256 now or None where it cannot be read); None where
    none differs or the folder recorded none (made before the contents were recorded)."""
    recorded = [(app.exe, settings.get("executable_sha256"))] + [
        (Path(p), d) for p, d in (settings.get("wrapped_sha256") or {}).items()]
    for path, digest in recorded:
        if digest is None:
            continue
        try:
            now = file_digest(path)
        except OSError:
            now = None
        if now != digest:
            return path, digest, now
    return None


def is_script(exe: Path) -> bool:
    """`exe` starts with `#!`: a wrapper, whose bytes stay the same when the program it runs is rebuilt."""
    try:
        with open(exe, "rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return False


def unseen_rebuild_note(app, settings: dict | None = None) -> str | None:
    """What a tune or comparison of `app` (`--app ./wrap.sh`) is told when `app` is a script whose programs go
    unchecked: it names none that mapperopt finds (`wrapped_programs`), or the folder being continued (its
    `settings`) was made before they were recorded (no `wrapped_sha256`). The folder then compares only the
    script's bytes, so a rebuild of the program it runs goes unseen. None for a program, a benchmark or a script
    whose programs are checked."""
    if not isinstance(app, UserApp) or not is_script(app.exe):
        return None
    said = f"--app names a script, {app.exe}: the folder compares only its bytes, so a rebuild of the program it runs"
    if not wrapped_programs(app):
        return (f"{said} is not noticed (mapperopt checks the programs a script names by an absolute path or one "
                "relative to the script's folder, and this one names none; give --new after a rebuild)")
    if settings is not None and settings.get("executable_sha256") and not settings.get("wrapped_sha256"):
        return (f"{said} is not noticed (the folder was made before mapperopt recorded the programs a script runs; "
                "give --new to record them)")
    return None


def app_from_identity(recorded: dict) -> UserApp:
    """The program an `identity` records, read again: its application file or its command line, with the recorded
    metric, verification and own-mapper choice where they differ from the file's (options given over it).

    Raises:
        MapperoptError: see `load_app_file` and `app_from_command` (a file or program no longer there).
    """
    if recorded["file"]:
        app = load_app_file(recorded["file"])
    else:
        app = app_from_command(shlex.join([recorded["executable"], *recorded["args"]["ci"]]))
    now = identity(app)
    given = tuple(k for k in ("metric", "verify", "keep_app_mapper") if now[k] != recorded[k])
    kept = {"metric": Metric(**recorded["metric"]), "verify": Verify(**recorded["verify"]),
            "keep_app_mapper": recorded["keep_app_mapper"]}
    same_pattern = recorded["file"] and now["metric"]["regex"] == recorded["metric"]["regex"]
    return replace(app, **{k: kept[k] for k in given},
                   given=tuple("unit" if k == "metric" and same_pattern else k for k in given))


def identity_differences(recorded: dict, other: dict, other_name: str) -> list[str]:
    """What differs between two `identity`s, one line each: "WHAT: X in the folder, Y OTHER_NAME"."""
    def args(values) -> str:
        return shlex.join(values) if values else "none"

    def shown(key: str, value) -> str:
        return (Metric(**value).describe() if key == "metric" else Verify(**value).describe() if key == "verify"
                else "none" if value in (None, {}) else str(value))

    lines = []
    for key, what in (("file", "application file"), ("executable", "program"), ("metric", "metric"),
                      ("verify", "verification"), ("keep_app_mapper", "keeps the program's own mapper"),
                      ("env", "environment")):
        if recorded[key] != other[key]:
            lines.append(f"{what}: {shown(key, recorded[key])} in the folder, {shown(key, other[key])} {other_name}")
    for size in dict.fromkeys([*recorded["args"], *other["args"]]):
        mine, theirs = recorded["args"].get(size), other["args"].get(size)
        if mine != theirs:
            lines.append(f"arguments at size {size}: "
                         f"{args(mine) if mine is not None else '(no such size)'} in the folder, "
                         f"{args(theirs) if theirs is not None else '(no such size)'} {other_name}")
    return lines


# ---------------------------------------------------------------------------------------------------- running


def has_logfile(args) -> bool:
    """True when the arguments already choose where Legion logs (`-logfile`)."""
    return "-logfile" in args


def legion_command(app: UserApp, size: str, cpus: int, gpus: int, extra_args=(), sz=None) -> list[str]:
    """The command line of one execution: the program, its arguments, then Legion's resources and flags, and
    `-logfile stderr` unless the user chose a log file (a Legion abort prints nothing otherwise). `sz`: the size's
    `SizeConfig` with its memory sizes changed, if they are. A resource flag among `extra_args` (`-ll:cpu 4`)
    replaces the size's value, as in the machine the mapper is checked against (`probe.run_probe_json`)."""
    args, flags = _command_parts(app, size, cpus, gpus, extra_args, sz or app.config.size(size))
    return [str(app.exe), *args, *flags]


def _command_parts(app: UserApp, size: str, cpus: int, gpus: int, extra_args, sz) -> tuple[list[str], list[str]]:
    """(the program's arguments, Legion's resources and flags) of `legion_command`."""
    resources, extra = _override_flags(sz.resource_flags(cpus, gpus), [str(a) for a in extra_args])
    # Resource flags in an `--app` command line set the size's keys (`app_from_command`): given once, in `resources`.
    _, own = _app_args(dict(zip(resources[::2], resources[1::2])), app.args[size])
    args = [*own, *extra]
    flags = [*resources, *sz.legion_flags]
    if not has_logfile(args) and not has_logfile(flags):
        flags += ["-logfile", "stderr"]
    return args, flags


# The LD_PRELOAD shim's variables: each execution sets its own (`shim_env`), none from this environment.
SHIM_VARIABLES = ("LD_PRELOAD", "MAPPEROPT_MAPPER", "MAPPEROPT_TRACE", "MAPPEROPT_PROFILE", "MAPPEROPT_RECORD",
                  "MAPPEROPT_KEEP_APP_MAPPER")


def shim_env(app: UserApp, mapper_so: Path | None, trace_path: Path | None = None, profile: bool = False,
             record_path: Path | None = None, keep: bool | None = None) -> dict[str, str]:
    """The environment of one execution: Legion's libraries and the libcuda stand-in, the application's own
    variables and, for a DSL mapper, the shim and its settings."""
    from mapperopt.compiler.build import preload_library

    env = toolchain.runtime_env()
    env.update(app.env)
    for name in SHIM_VARIABLES:
        env.pop(name, None)
    if mapper_so is not None:
        env["LD_PRELOAD"] = str(preload_library())
        env["MAPPEROPT_MAPPER"] = str(mapper_so)
        if trace_path is not None:
            env["MAPPEROPT_TRACE"] = str(trace_path)
        if profile:
            env["MAPPEROPT_PROFILE"] = "1"
        if record_path is not None:
            env["MAPPEROPT_RECORD"] = str(record_path)
        if app.keep_app_mapper if keep is None else keep:
            env["MAPPEROPT_KEEP_APP_MAPPER"] = "1"
    return env


# A line of output that reports a failed check ("CHECK FAILED", "wrong result", "error: solver diverged"); not one
# that only names a check ("CHECK OK", "checksum 12"), says that nothing failed ("0 failures", "mismatches: 0"), or
# measures an error ("max error 1.2e-15", "error count 0", "residual error 3.1e-9 (tolerance 1e-6)"): a scientific
# code's self-check prints those when it passes.
_FAILURE_WORD = r"(fail\w*|wrong|mismatch\w*|incorrect|abort\w*)"
_LOOKS_FAILED = re.compile(rf"(?i)\b{_FAILURE_WORD}\b")
_NONE_FAILED = re.compile(rf"(?i)\b(no|0|zero)\s+{_FAILURE_WORD}\b|\b{_FAILURE_WORD}\s*[:=]?\s*0(?:\.0*)?(?![.\w])")
# an error message: "error: cannot open file", "Error: solver diverged" (not "error: 0", "errors: none")
_ERROR_MESSAGE = re.compile(r"(?i)\berror\w*\s*:\s*(?!none\b|no\b)[a-z]")


def _looks_failed(line: str) -> bool:
    return bool(_LOOKS_FAILED.search(line)) and not _NONE_FAILED.search(line) or bool(_ERROR_MESSAGE.search(line))


# A line that shouts a failure (`spmv: err 6.5e-01: FAIL`, `ERROR: diverged`, `check: WRONG`), in capitals, as a
# program's own check prints it; not one that says none failed (`FAILED: 0`, `0 ERRORS`).
_SHOUTED = r"(FAIL(?:ED|S|URE|URES)?|ERRORS?|WRONG)"
_SHOUTED_FAILURE = re.compile(rf"\b{_SHOUTED}\b")
_NONE_SHOUTED = re.compile(rf"(?i)\b(no|0|zero)\s+{_SHOUTED}\b|\b{_SHOUTED}\s*[:=]?\s*0(?:\.0*)?(?![.\w])")


def unchecked_failure(result) -> tuple[str, str] | None:
    """For a run of a user's program that nothing but the exit status checked (`output_checked`), the last line of
    its executions' standard output that shouts a failure (FAIL, FAILED, ERROR, WRONG, in capitals) and the file it is
    in (relative to the run folder); None where there is none, or the output was checked."""
    found = None
    for stdout, lines in _unchecked_outputs(result):
        shouted = [line.strip() for line in lines if _SHOUTED_FAILURE.search(line) and not _NONE_SHOUTED.search(line)]
        if shouted:
            found = (shouted[-1][:120], stdout)
    return found


def _unchecked_outputs(result):
    """For a run of a user's program that nothing but the exit status checked (`output_checked`), each execution's
    standard output file (relative to the run folder) and its lines, in order; nothing where the output was checked
    or cannot be read."""
    if not result.run_dir or not (result.settings or {}).get("metric") or output_checked(result):
        return
    for attempt in result.attempts:
        try:
            text = (Path(result.run_dir) / attempt.stdout).read_text(errors="replace") if attempt.stdout else ""
        except OSError:
            continue
        yield attempt.stdout, text.splitlines()


# OK and PASS only in capitals and not before a number (`PASS 2` counts passes of an algorithm).
_SUCCESS = re.compile(r"(?i:\b(passed|success|successful|correct)\b)|\b(OK|PASS)\b(?!\s*#?[0-9])")


def unchecked_success(result) -> tuple[str, str, str] | None:
    """For a run of a user's program that nothing but the exit status checked (`output_checked`), the last line of
    its executions' standard output that says the result is right (PASSED, SUCCESS, correct, in any case; OK or PASS
    in capitals, as a check prints its result: `RESULT OK`; not negated nor beside a failure), the verify pattern to
    offer (`success_pattern`) and the file it is in (relative to the run folder); None where there is none, or the
    output was checked."""
    found = None
    for stdout, lines in _unchecked_outputs(result):
        for line in lines:
            m, up = _SUCCESS.search(line), line.upper()
            before = [w.lower() for w in line[:m.start()].split()[-2:]] if m else []
            negated = any(w in ("not", "no", "never") or w.endswith("n't") for w in before)
            if m and not negated and not (_SHOUTED_FAILURE.search(up) and not _NONE_SHOUTED.search(up)):
                found = (line.strip()[:120], success_pattern(line), stdout)
    return found


def success_pattern(line: str) -> str | None:
    """The verify pattern to offer for `line`, a line of output that says the result is right (`_SUCCESS`): its
    word as printed (`PASSED`); OK and PASS, too short alone, with the words before them on the line from the first
    letter after its last digit (a step number varies from line to line: `RESULT OK`, `tests PASS` of `all 4 tests
    PASS`), or, where only a value stands between those words and it, the words and `.*` in the value's place
    (`checksum .* OK` of `checksum 12.0 OK`); regex characters in the words escaped. None: `line` has no such
    word."""
    if not (m := _SUCCESS.search(line)):
        return None
    if not m.group(2):
        return m.group(0)
    head = line[:m.start()]
    if label := re.search(r"[A-Za-z][^0-9]*$", head):
        return _literal(label.group(0)) + m.group(2)
    if valued := re.search(r"([A-Za-z][^0-9]*)\S*[0-9]\S*(\W*)$", head):
        return f"{_literal(valued.group(1))}.*{_literal(valued.group(2))}{m.group(2)}"
    return m.group(2)


def _spacing(regex: str) -> str:
    """What the whitespace of `regex` is where a text that folds runs of whitespace into one space (a wrapped
    explanation) hides it: " (2 spaces after 'CHECK')", a tab, a space at its end; "" for single spaces between
    words."""
    said = []
    for run in re.finditer(r"\s+", regex):
        if run.group(0) == " " and 0 < run.start() and run.end() < len(regex):
            continue
        what = run.group(0)
        what = ("a space" if what == " " else f"{len(what)} spaces" if set(what) == {" "} else f"whitespace {what!r}")
        before = regex[:run.start()].split()
        where = ("at its end" if run.end() == len(regex) else f"after {before[-1]!r}" if before else "at its start")
        said.append(f"{what} {where}")
    return f" ({', '.join(said)})" if said else ""


def _near_miss(regex: str, stdout: str) -> str:
    """What the output shows instead of a line `regex` matches: the last line holding the regex's leading words
    (`elapsed` of `elapsed (\\d+) ms`), so that the user sees why the pattern failed; else the last line holding them
    spaced or written otherwise (`CHECK OK` for `CHECK  OK`: a typo in the pattern); that it is empty; else ""."""
    if not stdout.strip():
        return " (the standard output is empty)"
    words = re.match(r"[A-Za-z][A-Za-z _:=-]*", regex)
    key = words.group(0).strip() if words else ""
    lines = [line.strip() for line in stdout.splitlines() if key and key in line]
    if lines:
        return f"; its last line with {key!r}: {lines[-1][:120]!r}"
    folded = " ".join(key.split())
    near = [line.strip() for line in stdout.splitlines() if key and folded.lower() in " ".join(line.split()).lower()]
    if not near:
        return ""
    differs = ("case" if key.lower() in near[-1].lower() else "spacing" if folded in " ".join(near[-1].split())
               else "case and spacing")
    return f"; its line {near[-1][:120]!r} differs from the pattern only in {differs}"


# How a failed verification's reason says that a line holds the verify pattern's words apart (`_verify_miss`): the
# pattern, not the mapper, is the likely cause (AutoGuide says so first).
WORDS_APART = "with other text between them"


def _verify_miss(pattern: str, stdout: str) -> str:
    """`_near_miss` for a verify pattern, else the last line that holds a pattern of words only (`residual OK`) with
    other text between them (`final residual 4.48e-02 OK`), else the last line that looks like a failed check, else
    the last line."""
    said = _near_miss(pattern, stdout)
    if said:
        return said
    words = pattern.split() if re.fullmatch(r"[A-Za-z][A-Za-z _:=-]*", pattern) else []
    apart = re.compile(".+?".join(re.escape(w) for w in words))
    held = [line.strip() for line in stdout.splitlines() if len(words) > 1 and apart.search(line)]
    if held:
        named = ", ".join(f"{w!r}" for w in words[:-1]) + f" and {words[-1]!r}"
        return f"; its line {held[-1][:120]!r} holds the pattern's words {named} {WORDS_APART}"
    lines = [line.strip() for line in stdout.splitlines() if line.strip()]
    failed = [line for line in lines if _looks_failed(line)]
    return (f"; its last line that looks like a failure: {failed[-1][:120]!r}" if failed
            else f"; its last line: {lines[-1][:120]!r}")


_NO_MESSAGE = " and no error message"  # the end of the harness's reason for a failure that said nothing on stderr


def _quiet_failure(app: UserApp, reason: str, stdout_path: Path, stderr_path: Path) -> str:
    """`reason` (an exit status "and no error message") for a program that said nothing on standard error but printed
    on its standard output (a program's own check printing FAIL): the end of that output, and that the application
    file's verify pattern did not match it either, where there is one."""
    from mapperopt.benchmarks.harness import pattern_text

    stdout = pattern_text(stdout_path)
    lines = [line.strip() for line in stdout.splitlines() if line.strip()]
    if not lines:
        return reason
    failed = [line for line in lines if _looks_failed(line)]
    said = (f"its standard output's last line that looks like a failure: {failed[-1][:120]!r}" if failed
            else f"its standard output ends with: {lines[-1][:120]!r}")
    text = f"{reason[:-len(_NO_MESSAGE)]} and printed nothing on standard error; {said}"
    pattern = app.verify.pattern
    if pattern and not re.search(pattern, stdout, re.MULTILINE) and not re.search(
            pattern, pattern_text(stderr_path), re.MULTILINE):
        text += f"; the verify pattern /{pattern}/ does not match its output either"
    return text


_GOES_ON = re.compile(r"[eE][+-]?[0-9]+|[0-9]+")  # what, right after a number, belongs to it
_WHOLE_NUMBER = "[0-9.]+(?:[eE][+-]?[0-9]+)?"


def _first_group(regex: str) -> tuple[int, int] | None:
    """The span of the first capturing group's contents in the pattern `regex` (after its `(` or `(?P<name>`, up
    to its `)`), or None where it cannot be told."""
    stack, i, in_class = [], 0, False
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            i += 1 + (regex.startswith("^", i + 1)) + (regex.startswith("]", i + 1 + regex.startswith("^", i + 1)))
            continue
        elif c == "(":
            named = re.match(r"\(\?P<\w+>", regex[i:])
            capturing = not regex.startswith("(?", i) or named
            stack.append((i + (named.end() if named else 1), bool(capturing)))
        elif c == ")" and stack:
            start, capturing = stack.pop()
            if capturing:
                return start, i
        i += 1
    return None


def _cut_number(regex: str, match: re.Match) -> str | None:
    """Why the metric cannot be read where the text right after the pattern's group goes on with the number it
    captured (an exponent, `2.53` of `2.530000e-01`, or more digits): the line quoted, and a pattern that captures
    the whole number where one can be made. None where the number ends with the group."""
    source, end = match.string, match.end(1)
    goes_on = _GOES_ON.match(source, end)
    if not goes_on:
        return None
    line = source[source.rfind("\n", 0, match.start(1)) + 1:].split("\n", 1)[0].strip()
    text = (f"the metric /{regex}/ read {match.group(1)!r} from the line {line[:120]!r}, but the number goes on "
            f"after it ({goes_on.group(0)!r}): read so, the metric would be wrong")
    span = _first_group(regex)
    if span:
        fixed = regex[:span[0]] + _WHOLE_NUMBER + regex[span[1]:]
        try:
            read = re.search(fixed, line)
            if read and float(read.group(1)) and not _GOES_ON.match(line, read.end(1)):
                return f"{text}; a pattern that captures the whole number: /{fixed}/"
        except (re.error, ValueError, IndexError):
            pass
    return f"{text}; capture the whole number, e.g. with ({_WHOLE_NUMBER})"


def measure(app: UserApp, stdout: str, wall_s: float, stderr: str = "") -> tuple[dict | None, str | None]:
    """(result dict in the shape of a result line, None) or (None, why the metric could not be read). The metric is
    the last match in `stdout`, else in `stderr` (then "metric_from" is "stderr": a Realm logger's lines go there
    under `-logfile stderr`); "verify_from" is "stderr" where only `stderr` matches the verify pattern, as
    `check_output` allows. Its "own_check" is True where the program's `MAPPEROPT_RESULT` lines, on `stdout` or
    `stderr`, say "verified": true (one that says false, or cannot be read, failed the execution at stage verify:
    `harness.own_check`); their other fields are not read: the metric is the app's."""
    found_in = {}
    if app.metric.regex is None:
        value = wall_s
    else:
        matches = list(re.finditer(app.metric.regex, stdout, re.MULTILINE))
        if not matches and (matches := list(re.finditer(app.metric.regex, stderr, re.MULTILINE))):
            found_in = {"metric_from": "stderr"}
        if not matches:
            near = _near_miss(app.metric.regex, stdout)
            # no line of the pattern's words (the docs' example pattern, say): the time the program prints, if any,
            # as `run` without --metric offers it
            own = None if near else printed_time(stdout)
            return None, (f"the metric /{app.metric.regex}/{_spacing(app.metric.regex)} does not occur in the "
                          "standard output or standard error" + near
                          + (f"; the program prints a time of its own ({own[0]!r}): to read it, give "
                             + metric_given(own[1], own[2], app.path if "metric" not in app.given else None)
                             if own else ""))
        text = matches[-1].group(1) or ""  # an optional group that took part in no match
        if text and (cut := _cut_number(app.metric.regex, matches[-1])):
            return None, cut
        try:
            value = float(text)
        except ValueError:
            return None, f"the metric /{app.metric.regex}/ matched {text!r}, which is not a number"
        if not math.isfinite(value):  # nan defeats every comparison of a tuner; inf gives a throughput of 0 or inf
            return None, f"the metric /{app.metric.regex}/ matched {text!r}, which is {value}: not a finite number"
    if app.metric.higher_is_better:
        throughput = value
    else:
        if value <= 0:
            return None, f"the metric is {f'{value:g} {app.metric.unit}'.rstrip()}; it must be positive when lower " \
                         "is better"
        throughput = 1.0 / value
        if not math.isfinite(throughput):  # a subnormal metric: an inf throughput would win every comparison
            return None, (f"the metric is {f'{value:g} {app.metric.unit}'.rstrip()}, which gives a throughput "
                          f"1/metric of {throughput}: not a finite number")
    from mapperopt.benchmarks.harness import own_check

    if app.verify.pattern and not re.search(app.verify.pattern, stdout, re.MULTILINE):
        found_in["verify_from"] = "stderr"
    own = own_check(stdout, stderr).passed
    return {"schema": "mapperopt.result/1", "app": app.name, "time_s": wall_s, "throughput": throughput,
            "unit": app.metric.throughput_unit, "metric": value, "verified": app.verify.checks_output or own or None,
            **({"own_check": True} if own else {}), **found_in}, None


_NOTES = re.compile(r"^\[mapperopt\] (note R45[359]: .*)$", re.MULTILINE)
_NO_TASK = re.compile(r"no task named '(.*)' was mapped$")
_NO_REGION = re.compile(r"no region requirement(?: of task '(.*)')? has '(.*)' among its names$")


def mapper_notes(result) -> list[str]:
    """The DSL mapper's notes R453 (a statement that matched nothing), R455 (a must-epoch launch overrode a
    statement) and R459 (an InstanceLimit on a launch Legion maps collectively) of the run's last execution, from its
    standard error; R453's with "did you mean": where the mapper had
    no close name for it, the task the name likely means as check says it (`likely_task`, and the note on a C++ enum
    name), or the close region name of the task's requirements (of every task's, for `*`), from the discovered
    description (`settings["description"]`). Empty without a run folder."""
    from mapperopt.descriptions import AppDescription
    from mapperopt.dsl.checker import enum_named, enum_note, likely_task
    from mapperopt.dsl.formatter import meant

    if not result.run_dir or not result.attempts:
        return []
    try:
        notes = _NOTES.findall((Path(result.run_dir) / result.attempts[-1].stderr).read_text(errors="replace"))
        described = (result.settings or {}).get("description")
        tasks = AppDescription.from_json(json.loads(Path(described).read_text())).tasks \
            if described and notes else ()
    except (OSError, ValueError, MapperoptError):
        return []
    out = []
    for note in notes:
        task, region = _NO_TASK.search(note), _NO_REGION.search(note)
        said = ""
        if task:
            names = [t.name for t in tasks]
            near = likely_task(task.group(1), names)
            if enum_named(task.group(1), names):
                said = f" ({enum_note(task.group(1))})"
        elif region:
            names = sorted({n for t in tasks if region.group(1) in (None, t.name) for r in t.regions for n in r.names})
            near = closest(region.group(2), names) if region.group(2) not in names else None
            # The region is there, but only inner tasks have it: the mapper maps their regions virtually, never by
            # the statement, so it says no requirement has the name (check's W305).
            holders = [t for t in tasks if region.group(1) in (None, t.name)
                       and any(region.group(2) in r.names for r in t.regions)]
            if holders and all(t.inner for t in holders):
                inner = ", ".join(f"'{t.name}'" for t in holders)
                note = note[:region.start()] + (
                    f"{inner} {'is an inner task' if len(holders) == 1 else 'are inner tasks'} with region "
                    f"'{region.group(2)}', and an inner task's regions are mapped virtually (no instance): the "
                    "statement has no effect")
        else:
            near = None
        out.append(note + (f"; {meant(near)}" if near else "") + said)
    return out


_SKIPPED = re.compile(r"^\[mapperopt\] note R452: requirement (\d+)(?: \(([^,)]*)[^)]*\))? of task '(.*)': (\w+) "
                      r"skipped \((.*)\), using (\w+)$", re.MULTILINE)
_BYTES = re.compile(r"^allocation of \d+ bytes failed")
MAX_FALLBACK_KINDS, MAX_FALLBACK_NAMES = 3, 4  # the lines, and the requirements named in each, of `memory_fallbacks`


def memory_fallbacks(result) -> list[str]:
    """The DSL mapper's notes R452 (a memory of a requirement's list skipped, a later one used) of every execution of
    the run, summed up in a few lines: how many requirements, then one line for each skipped kind, its reason and the
    kind used instead, naming the first requirements. Empty where no execution noted one, or without a run folder."""
    if not result.run_dir:
        return []
    seen: dict[tuple, dict[tuple[str, int], str]] = {}  # (skipped, reason, used) -> {(task, index): region}
    files = []
    for attempt in result.attempts:
        try:
            text = (Path(result.run_dir) / attempt.stderr).read_text(errors="replace") if attempt.stderr else ""
        except OSError:
            continue
        notes = _SKIPPED.findall(text)
        if notes:
            files.append(Path(attempt.stderr).name)
        for index, region, task, skipped, reason, used in notes:
            key = (skipped, _BYTES.sub("allocation failed", reason), used)
            seen.setdefault(key, {}).setdefault((task, int(index)), region)
    if not seen:
        return []
    count = len({req for reqs in seen.values() for req in reqs})
    where = (f"the run folder's {files[0]} has each note" if len(files) == 1
             else f"the run folder's {files[0]} ... {files[-1]} have each note")
    lines = [f"note R452: for {count} requirement{'s' if count > 1 else ''} the mapper's first memory was skipped and "
             f"a later one of its list used; {where}:"]
    for (skipped, reason, used), reqs in list(seen.items())[:MAX_FALLBACK_KINDS]:
        named = [f"{task} requirement {index}" + (f" ({region})" if region else "")
                 for (task, index), region in list(reqs.items())[:MAX_FALLBACK_NAMES]]
        more = f", and {len(reqs) - len(named)} more" if len(reqs) > len(named) else ""
        lines.append(f"  {skipped} -> {used} ({reason}): {', '.join(named)}{more}")
    if len(seen) > MAX_FALLBACK_KINDS:
        lines.append(f"  and {len(seen) - MAX_FALLBACK_KINDS} more kinds skipped")
    return lines


@dataclass(frozen=True)
class RunNote:
    """One note that `mapperopt run` gives after its table and `run --json` in its `notes` (docs/running.md).

    Attributes:
        kind: what it is about, a stable name: "unchecked_failure" (the output says a check failed, and nothing but
            the exit status checks it), "unchecked_success" (the output says a check passed, and nothing but the
            exit status checks it), "unread_time" (the metric is the wall time, though the output prints a time
            that --metric can read), "memory_fallback" (R452), "unmatched_statement" (R453),
            "must_epoch_override" (R455), "instance_limit_collective" (R459), "measured_elsewhere" (a tuning or
            comparison measured the mapper at other settings, `mapperopt.optimizer.measured_at`).
        code: the mapper's note code ("R452", "R453", "R455", "R459"), or None for a note of mapperopt's own.
        text: the words, one line or several (R452's: a summary line, then one line for each skipped kind).
        title: the heading the table's output prints before `text`, or None (`text` alone).
    """

    kind: str
    code: str | None
    text: str
    title: str | None = None

    def to_json(self) -> dict:
        return {"kind": self.kind, "code": self.code, "text": self.text}


_NOTE_KINDS = {"R453": "unmatched_statement", "R455": "must_epoch_override", "R459": "instance_limit_collective"}


def metric_over_wall(result) -> str | None:
    """For a user's program whose metric is a time: the words that an execution's metric is longer than that
    execution's wall time (Legion's start-up included), which no time of the run can be: a number the pattern read
    wrongly, or not this run's time. None otherwise."""
    from mapperopt.benchmarks.protocol import TIME_UNITS

    s = result.settings or {}
    unit = (result.unit or "").removeprefix("1/")
    scale = TIME_UNITS.get(unit) if s.get("metric") and (result.unit or "").startswith("1/") else None
    longer = [a for a in result.attempts if scale and a.result and a.result.get("time_s")
              and a.result["metric"] * scale > a.result["time_s"]]
    if not longer:
        return None
    many = f" (in {len(longer)} of {len(result.attempts)} executions)" if len(result.attempts) > 1 else ""
    output = Path(result.run_dir or "") / (longer[0].stdout or "stdout.txt")
    return (f"the metric, {longer[0].result['metric']:g} {unit}, is longer than the whole execution that printed it "
            f"({longer[0].result['time_s']:.3g} s of wall time, Legion's start-up included){many}: the pattern "
            f"({s['metric']}) may read the wrong number, or a part of one, or a number in another unit than {unit}, or "
            "the program prints a time that is not "
            f"this execution's; compare it with the program's output, {output}")


# A time the program prints (`ELAPSED TIME = 284.0 ms`, `time: 0.41 s`): a word that says so, then a number and a
# time unit, for the metric pattern `run` suggests where none was given.
_PRINTED_TIME = re.compile(r"(?i)\b(?:elapsed|time|took|runtime|duration)\b[^0-9\n]{0,40}?(?<![\w.])"
                           rf"([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)( ?)({_TIME_WORDS})(?![\w/])")


def _literal(text: str) -> str:
    """`text` as a regular expression that matches it, escaping only what a regex reads otherwise (re.escape
    escapes spaces too, which a pattern to paste need not)."""
    return re.sub(r"([.^$*+?{}\[\]\\|()])", r"\\\1", text)


def printed_time(text: str) -> tuple[str, str, str] | None:
    """The last time the output `text` prints of its own (`_PRINTED_TIME`), as (how it reads, the number replaced:
    'elapsed: <number> ms'; the metric pattern that reads it; its unit); None where it prints none."""
    if not (found := list(_PRINTED_TIME.finditer(text))):
        return None
    m = found[-1]
    # The whole label as printed (`loop time: `, not `time: `), less likely to match another line: from its first
    # letter after the line's last digit before it (a rank or step number varies from line to line).
    line = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
    before = re.search(r"[A-Za-z][^0-9]*$", line)
    label = text[m.start() - (len(line) - before.start() if before else 0):m.start(1)]
    number = _WHOLE_NUMBER if re.search("[eE]", m.group(1)) else "[0-9.]+"
    regex = f"{_literal(label)}({number}){m.group(2)}{_literal(m.group(3))}"
    return (f"{label}<number>{m.group(2)}{m.group(3)}", regex,
            protocol.TIME_SPELLINGS.get(m.group(3).lower(), m.group(3)))


def metric_given(regex: str, unit: str, app_file: str | None) -> str:
    """How the user gives the metric pattern `regex` in `unit`: the application file `app_file`'s `metric:` line
    (None: the --metric and --unit options)."""
    quoted = regex.replace("'", "''")  # YAML's single quotes take a quote doubled
    return (f"`metric: {{regex: '{quoted}', unit: {unit}}}` in {app_file}" if app_file else
            f"--metric {shlex.quote(regex)} --unit {unit}")


def unread_time(result) -> str | None:
    """For a run of a user's program whose metric is the wall time (no metric pattern), the words that its output
    prints a time of its own (`printed_time`, the first execution's output that does), with the --metric and
    --unit (or the application file's `metric:`) that read it; None otherwise."""
    from mapperopt.benchmarks.harness import pattern_text

    s = result.settings or {}
    if not result.run_dir or not s.get("metric", "").startswith("wall time"):
        return None
    for attempt in result.attempts:
        try:
            text = pattern_text(Path(result.run_dir) / attempt.stdout) if attempt.stdout else ""
        except OSError:
            continue
        if not (found := printed_time(text)):
            continue
        shown, regex, unit = found
        return (f"the figure of merit is the process's wall time, Legion's start-up and the program's set-up included, "
                f"though the program prints a time of its own ({shown!r}, {attempt.stdout} in the run folder); to "
                f"tune that time, give {metric_given(regex, unit, s.get('app_file'))}")
    return None


def run_notes(result) -> list[RunNote]:
    """What a run's status does not say, in the order `run` prints them: a failure its output shows that nothing
    checked (`unchecked_failure`, a run that went "ok" only), the mapper's notes R453, R455 and R459
    (`mapper_notes`) and its skipped memories (R452, `memory_fallbacks`). Empty where there is none."""
    notes = []
    if result.ok and (failure := unchecked_failure(result)):
        line, where = failure
        s = result.settings or {}
        how = (f"`verify: {{pattern: REGEX}}` in {s['app_file']} (or `command:`, a check of your own)"
               if s.get("app_file") else "`--verify-pattern REGEX` (or a check of your own, `--verify-cmd CMD`)")
        notes.append(RunNote("unchecked_failure", None, (
            f"nothing checks the output but the exit status, and the program printed {line!r} ({where} in the "
            f"run folder); to fail a run whose output says so, give a pattern that only a correct output "
            f"matches: {how}"), title="Output not checked"))
    elif result.ok and (success := unchecked_success(result)):
        line, word, where = success
        s = result.settings or {}
        how = (f"`verify: {{pattern: {shlex.quote(word)}}}` in {s['app_file']}" if s.get("app_file") else
               f"`--verify-pattern {shlex.quote(word)}`")
        notes.append(RunNote("unchecked_success", None, (
            f"nothing checks the output but the exit status, though the program printed {line!r} ({where} in the "
            f"run folder); so that a run with wrong results fails, give the pattern a correct output prints: {how}"),
            title="Output not checked"))
    if result.ok and (unread := unread_time(result)):
        notes.append(RunNote("unread_time", None, unread, title="Metric not read"))
    if result.ok and (longer := metric_over_wall(result)):
        notes.append(RunNote("metric_over_wall", None, longer, title="Metric longer than the execution"))
    for text in mapper_notes(result):
        code = text.split(":", 1)[0].removeprefix("note ")
        notes.append(RunNote(_NOTE_KINDS[code], code, text))
    if fallbacks := memory_fallbacks(result):
        notes.append(RunNote("memory_fallback", "R452", "\n".join(fallbacks)))
    return notes


_UNMAPPED = re.compile(r"no task named '(.*?)' was mapped")


def stale_description(app: UserApp, result, description: dict) -> str | None:
    """The R453 note's words (`no task named 'X' was mapped`) of `result`'s run (`mapper_notes`) for a task X that
    `app`'s `description` (as discovered) has, or None: the program changed since its discovery, e.g. rebuilt
    behind a wrapper script, whose bytes alone key the description. Not with `keep_app_mapper`: the program's own
    mapper may have mapped X (a launch with its mapper's ID)."""
    if app.keep_app_mapper:
        return None
    known = {t["name"] for t in description.get("tasks", ())}
    found = (_UNMAPPED.search(note) for note in mapper_notes(result))
    return next((m.group(0) for m in found if m and m.group(1) in known), None)


# How each reason `check_output` gives starts -> the option of `--app 'CMD ARGS'` that sets that check (one table
# for both, so that a stored reason always names its option).
_PATTERN, _REFERENCE, _COMMAND = ("the output does not match the verify pattern",
                                  "the output differs from the reference", "the verify command")
_VERIFY_REASONS = {_PATTERN: "--verify-pattern", _REFERENCE: "--reference", _COMMAND: "--verify-cmd"}


def intermittent(reason: str) -> bool:
    """Whether `reason`, a failed verification's, says that earlier executions of the same run passed the check
    (`_intermittent`)."""
    return _AFTER_PASSES.match(reason) is not None


def verify_option(reason: str) -> str | None:
    """The option (`--verify-pattern`, `--verify-cmd` or `--reference`) of the check whose failure `check_output`
    gave as `reason`, or None for another reason."""
    reason = reason[m.end():] if (m := _AFTER_PASSES.match(reason)) else reason  # `_intermittent`'s
    return next((option for start, option in _VERIFY_REASONS.items() if reason.startswith(start)), None)


# What makes a program's output vary from run to run, as its failures' reasons and hints say it. An access outside a
# requirement reads whichever instance holds the point, so a mapping that moves instances can make it fail sometimes.
VARYING_OUTPUT_CAUSES = ("a race, e.g. a missing privilege or an unsynchronised access, or an access outside a task's "
                         "region requirement, which a build with -DLEGION_BOUNDS_CHECKS reports")


def _intermittent(failed: int, reason: str) -> str:
    """`reason`, the failed verification of execution `failed` (from 1), after the executions before it passed the
    same check: said first (AutoGuide's explanation cuts a long reason), that the output varies from run to run,
    which a mistake in the check cannot do."""
    passed = ("execution 1" if failed == 2 else "executions 1 and 2" if failed == 3
              else f"executions 1 to {failed - 1}")
    check = _CHECKS.get(verify_option(reason), "the check itself")
    return (f"{passed} passed this check, execution {failed} failed it: an output that varies from run to run "
            f"points at the program ({VARYING_OUTPUT_CAUSES}) or at the mapping, not at {check}: {reason}")


_CHECKS = {"--verify-pattern": "the verify pattern", "--verify-cmd": "the verify command",
           "--reference": "the reference output"}
_AFTER_PASSES = re.compile(rf"(?:execution 1|executions 1 (?:and|to) \d+) passed this check, execution \d+ failed "
                           rf"it: .*?, not at (?:{'|'.join(_CHECKS.values())}|the check itself): ")


def check_output(app: UserApp, run_dir: Path, stdout_name: str, stderr_name: str) -> str | None:
    """Why the results of an execution that exited 0 are wrong by the application file's checks, or None. The verify
    pattern is looked for in the standard output, else in standard error."""
    from mapperopt.benchmarks.harness import pattern_text

    v = app.verify
    stdout = pattern_text(run_dir / stdout_name)
    if v.pattern and not re.search(v.pattern, stdout, re.MULTILINE) and not re.search(
            v.pattern, pattern_text(run_dir / stderr_name), re.MULTILINE):  # as the metric (`measure`)
        return f"{_PATTERN} /{v.pattern}/{_spacing(v.pattern)}" + _verify_miss(v.pattern, stdout)
    if v.reference:
        keep = (lambda line: re.search(v.reference_lines, line)) if v.reference_lines else (lambda line: True)
        got = [line for line in stdout.splitlines() if keep(line)]
        want = [line for line in Path(v.reference).read_text().splitlines() if keep(line)]
        if got != want:
            diff = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
            shown = got[diff] if diff < len(got) else "<end of output>"
            return f"{_REFERENCE} {v.reference} at compared line {diff + 1}: {shown!r}"
    if v.command:
        env = dict(os.environ, MAPPEROPT_STDOUT=str((run_dir / stdout_name).resolve()),
                   MAPPEROPT_STDERR=str((run_dir / stderr_name).resolve()), MAPPEROPT_RUN_DIR=str(run_dir.resolve()))
        from mapperopt.benchmarks.harness import run_in_group

        try:
            done = run_in_group(v.command, VERIFY_TIMEOUT_S, shell=True, cwd=v.folder, env=env)
        except subprocess.TimeoutExpired:
            return f"{_COMMAND} `{v.command}` did not finish within {VERIFY_TIMEOUT_S} s"
        if done.returncode != 0:
            said = (done.stdout + done.stderr).strip().splitlines()
            return f"{_COMMAND} `{v.command}` exited {done.returncode}" + (f": {said[-1]}" if said else "")
    return None


# ---------------------------------------------------------------------------------------------------- discovery


# Legion's flags that size the memories (not part of the discovery cache's key, `discovery_path`).
MEMORY_FLAGS = tuple(RESOURCE_FLAGS[k] for k in ("csize", "fsize", "zsize"))


def discovery_command(app: UserApp, size: str, cpus: int | None = None, gpus: int | None = None,
                      extra_args=(), memory: dict[str, int] | None = None) -> list[str]:
    """The command line discovery runs: that of the run of `app` at `size` on `cpus` CPU and `gpus` GPU processors
    (default: the size's) with `extra_args` (the run's flags after `--`), whose tasks, launch domains and tunables
    may all follow those flags (`legion_command`), and the run's `memory` sizes in MiB by "csize", "fsize", "zsize"
    (default: the size's), without which a program that needs more memory than Legion's default fails."""
    sz = replace(app.config.size(size), **(memory or {}))
    return legion_command(app, size, sz.cpus if cpus is None else cpus, sz.gpus if gpus is None else gpus, extra_args,
                          sz)


def load_command(app: UserApp, so: Path, size: str = "ci", extra_args=(), cpus: int | None = None,
                 gpus: int | None = None) -> str:
    """The shell command that runs `app` as `mapperopt run --app ... --size SIZE --cpus CPUS --gpus GPUS --
    EXTRA_ARGS` does (counts None: the size's), with the compiled mapper library `so` loaded through the LD_PRELOAD
    shim, to paste."""
    env = {**app.env, "MAPPEROPT_MAPPER": str(so.resolve()),
           **({"MAPPEROPT_KEEP_APP_MAPPER": "1"} if app.keep_app_mapper else {})}
    words = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    return (f"{toolchain.env_eval()} && {words} LD_PRELOAD=$MAPPEROPT_PRELOAD "
            f"{shlex.join(discovery_command(app, size, cpus, gpus, extra_args=extra_args))}")


def discovered_as(app: UserApp, size: str, extra_args=()) -> str:
    """`discovery_command` as a person reads it: the program's name, its own arguments and the run's flags after
    `--` (`extra_args`), which decide which tasks it launches, without the resources and flags for Legion that the
    size adds (`check` prints the machine apart)."""
    return shlex.join([app.exe.name, *app.args[size], *map(str, extra_args)])


def discovery_path(app: UserApp, cmd: list[str]) -> Path:
    """Where the discovered description of `app` run as `cmd` (`discovery_command`) is cached: keyed by the
    executable's bytes (and, for a script, those of the programs it names, `wrapped_programs`, so that a rebuild
    behind it is discovered again), the command line and the application's environment. The memory sizes aside
    (`-ll:csize`, `-ll:fsize`, `-ll:zsize` and their values): they decide whether the program has room to run, not
    which tasks it launches, so that a description discovered with `--csize 2048` serves the commands that do not
    give it (`check`, a run's compile)."""
    h = hashlib.sha256(DISCOVERY_FORMAT.encode())
    with open(app.exe, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    for program in wrapped_programs(app):
        try:
            h.update(f"\0{program}\0{file_digest(program)}".encode())
        except OSError:  # gone meanwhile: discovery says so when it runs
            h.update(f"\0{program}\0".encode())
    words, key = list(map(str, cmd[1:])), []
    while words:
        word = words.pop(0)
        if word in MEMORY_FLAGS and words:
            words.pop(0)
        else:
            key.append(word)
    h.update(json.dumps([key, sorted(app.env.items())]).encode())
    return toolchain.cache_dir() / "discovered" / f"{app.name}-{h.hexdigest()[:24]}.json"


def describe_from_record(name: str, lines: list[dict]) -> dict:
    """The application description (`mapperopt.app/1`) from the discovery record: one JSON object per task and
    launch kind, as the DSL mapper writes them with MAPPEROPT_RECORD (of each task's first launch of each kind only;
    `discover` adds how many there were and which used other regions, `launch_summary`).

    Raises:
        ValueError: an object lacks a field the DSL mapper writes, or holds a value of another type.
    """
    try:
        return _describe_records(name, lines)
    except KeyError as exc:
        raise ValueError(f"a line has no field {exc}") from None
    except (TypeError, AttributeError) as exc:
        raise ValueError(f"a line holds a value of another type than the recording mapper writes ({exc})") from None


def _describe_records(name: str, lines: list[dict]) -> dict:
    """`describe_from_record`, whose malformed records raise KeyError, TypeError or AttributeError."""
    tasks: dict[str, dict] = {}
    tree: dict[str, dict] = {}
    tunables: dict[int, dict] = {}
    # Lines arrive in the order tasks are first mapped, which varies from run to run (tasks without a dependence
    # between them map on several processors at once): merged in an order of their own, so that the first line of
    # a task, tunable or name is the same in every run. The program's own tunable answers before Legion's; a task's
    # index launch before its single one.
    for rec in sorted(lines, key=lambda r: (0, r["tunable"], bool(r.get("legion")), r["value"]) if "tunable" in r
                      else (1, r["task_id"], r["task"], r["launch"] != "index")):
        if "tunable" in rec:  # the program's own mapper, or Legion's default one (`legion`), answered a tunable
            tunables.setdefault(rec["tunable"], {"id": rec["tunable"], "value": rec["value"],
                                                 "type": TUNABLE_TYPE_OF_BYTES[rec["bytes"]],
                                                 **({"legion": True} if rec.get("legion") else {})})
            continue
        regions = []
        for req in rec["regions"]:
            chain = req["chain"]
            entry = {"index": req["index"], "names": [c["name"] for c in chain], "privilege": req["privilege"],
                     "fields": req["fields"], "field_sizes": req["field_sizes"]}
            if "redop" in req:
                entry["redop"] = req["redop"]
            # The dimension order and the interleaving the variants' layout constraints fix (per processor kind),
            # when they agree; both for the same kinds (`layout_kinds` is theirs).
            kinds = None
            for key, field in (("orders", "layout"), ("interleaves", "interleave")):
                fixed = req.get(key, {})
                if len(set(fixed.values())) == 1 and kinds in (None, set(fixed)):
                    entry[field], kinds = next(iter(fixed.values())), set(fixed)
            if kinds is not None and kinds != set(rec["variants"]):
                entry["layout_kinds"] = [k for k in rec["variants"] if k in kinds]
            if req.get("memories"):  # the memory kind each processor kind's variant requires
                entry["required_memory"] = req["memories"]
            if req.get("alignments"):  # the alignment each processor kind's variant requires
                entry["required_align"] = req["alignments"]
            # Of a kind with several variants (Legion's default mapper picks the one that runs): which of them fix
            # these (older records: none).
            several = {k for k, names in rec.get("variant_names", {}).items() if len(names) > 1}
            if by := {k: v for k, v in req.get("constrained_by", {}).items() if k in several}:
                entry["constrained_by"] = by
            if req.get("collective"):
                entry["collective"] = True
            regions.append(entry)
            # Field spaces stand beside the tree: no parent. Every other name's parent is the next one up.
            path = [c for c in chain if c["kind"] != "field_space"]
            for k, c in enumerate(path):
                parent = path[k + 1]["name"] if k + 1 < len(path) else None
                tree.setdefault(c["name"], {"name": c["name"], "kind": c["kind"], "parent": parent})
            for c in chain[len(path):] if chain and chain[-1]["kind"] == "field_space" else ():
                tree.setdefault(c["name"], {"name": c["name"], "kind": c["kind"], "parent": None})
        task = tasks.get(rec["task"])
        if task is None:
            tasks[rec["task"]] = {"name": rec["task"], "task_id": rec["task_id"], "variants": rec["variants"],
                                  "launch": rec["launch"], "inner": rec["inner"], "leaf": rec["leaf"],
                                  "parent": rec["parent"], "domain": rec["domain"], "regions": regions}
            if several := {k: v for k, v in rec.get("variant_names", {}).items() if len(v) > 1}:
                tasks[rec["task"]]["variant_names"] = several
                # the one Legion's default mapper ran in discovery, of a kind with several
                if runs := {k: v for k, v in rec.get("runs", {}).items() if k in several}:
                    tasks[rec["task"]]["variant_ran"] = runs
        elif task["launch"] != rec["launch"]:
            task["launch"] = "both"
    depth = {n: _depth(n, tasks) for n in tasks}
    return {"schema": "mapperopt.app/1", "app": name, "discovered": True,
            "tasks": sorted(tasks.values(), key=lambda t: depth[t["name"]]),  # parents first, then by task ID
            "region_tree": list(tree.values()), "tunables": sorted(tunables.values(), key=lambda t: t["id"])}


# How many groups of launches on other regions than the shown one a description lists (`launch_summary`): a program
# that creates a region per step would otherwise list every launch.
LISTED_GROUPS = 8


def launch_summary(trace: Iterable[dict], shown: dict[str, dict[int, str | None]]) -> dict[str, dict]:
    """Per task name, from a placement trace (one object per task mapped: `task`, `point` and `domain`, null for a
    single launch, and `regions`, each argument's `index` and nearest `name`): "launches", its launches by kind
    ({"index": 2, "single": 1}), and "other_regions", those of its launches whose arguments are on other regions than
    the launch a description shows (its first index launch, else its first single launch), as
    {"groups": [{"kind", "launches": [[first, last, step], ...], "args": [{"index", "regions"}]}], "unlisted": n}.
    `shown`: per task, the nearest region name of each argument (by index; None: unnamed) of the launch the
    description shows, as the discovery record has it: the first launch of its kind in the trace that has them (the
    record is written as a launch starts mapping, the trace as it ends: two launches mapped at once may swap).
    A group's launches are numbered by kind in the order they were first mapped (1: the first); its args are those
    that differ, each with the names of the regions its points use (sorted; null: unnamed; []: the launch has no such
    argument); at most `LISTED_GROUPS` groups are listed, and "unlisted" counts the launches of the others.
    A single launch is mapped once; an index launch maps each of its points once, so the launches over one domain are
    as many as the times its most mapped point was mapped, the point's n-th mapping being that of the n-th launch. A
    launch Legion replays from a trace is not mapped: not counted.

    Raises:
        ValueError: an object lacks those fields or holds values of another type.
    """
    try:
        return _launch_summary(trace, shown)
    except KeyError as exc:
        raise ValueError(f"a line has no field {exc}") from None
    except (TypeError, AttributeError) as exc:
        raise ValueError(f"a line holds a value of another type than the DSL mapper writes ({exc})") from None


def _launch_summary(trace: Iterable[dict], shown_names: dict[str, dict[int, str | None]]) -> dict[str, dict]:
    """`launch_summary`, whose malformed objects raise KeyError, TypeError or AttributeError."""
    mapped: dict[tuple, int] = {}  # (task, domain, point) -> times mapped
    # (task, kind, key) -> [line of its first mapped point, {arg: region names}]; key: (domain, n) or the line
    launches: dict[tuple, list] = {}
    for line, rec in enumerate(trace):
        if rec["point"] is None:
            key = (rec["task"], "single", line)
        else:
            where = (rec["task"], tuple(rec["domain"]), tuple(rec["point"]))
            mapped[where] = mapped.get(where, 0) + 1
            key = (rec["task"], "index", (where[1], mapped[where]))
        names = launches.setdefault(key, [line, {}])[1]
        for region in rec["regions"]:
            names.setdefault(region["index"], set()).add(region["name"])
    by_task: dict[str, dict[str, list]] = {}  # task -> kind -> each launch's {arg: sorted names}, in mapping order
    for (task, kind, _), (_, names) in sorted(launches.items(), key=lambda item: item[1][0]):
        by_task.setdefault(task, {}).setdefault(kind, []).append(
            {arg: sorted(n, key=lambda s: (s is not None, s or "")) for arg, n in names.items()})
    summary = {}
    for task, kinds in by_task.items():
        record = shown_names.get(task, {})
        same = [args for args in kinds.get("index") or kinds["single"]
                if set(args) == set(record) and all(name in args[arg] for arg, name in record.items())]
        shown = same[0] if same else (kinds.get("index") or kinds["single"])[0]
        groups: dict[tuple, dict] = {}
        for kind, each in sorted(kinds.items()):
            for number, args in enumerate(each, 1):
                differ = tuple((arg, tuple(args.get(arg, ()))) for arg in sorted({*shown, *args})
                               if args.get(arg, []) != shown.get(arg, []))
                if differ:
                    group = groups.setdefault((kind, differ), {"kind": kind, "launches": [], "args": [
                        {"index": arg, "regions": list(regions)} for arg, regions in differ]})
                    group["launches"].append(number)
        listed = list(groups.values())[:LISTED_GROUPS]
        unlisted = sum(len(g["launches"]) for g in list(groups.values())[LISTED_GROUPS:])
        for group in listed:
            group["launches"] = _progressions(group["launches"])
        summary[task] = {"launches": {kind: len(each) for kind, each in sorted(kinds.items())},
                         "other_regions": {"groups": listed, "unlisted": unlisted}}
    return summary


def _progressions(numbers: list[int]) -> list[list[int]]:
    """Increasing `numbers` as runs of equal steps, [first, last, step] each: [2, 4, 6, 9] -> [[2, 6, 2], [9, 9, 1]]
    (a ping-pong program's every second launch stays one run however many steps it takes)."""
    runs: list[list[int]] = []
    k = 0
    while k < len(numbers):
        step = numbers[k + 1] - numbers[k] if k + 1 < len(numbers) else 1
        last = k
        while last + 1 < len(numbers) and numbers[last + 1] - numbers[last] == step:
            last += 1
        runs.append([numbers[k], numbers[last], step])
        k = last + 1
    return runs


def _depth(task: str, tasks: dict[str, dict]) -> int:
    """How many of `tasks` (name -> task) stand above `task` along its parents (0: the top-level task)."""
    seen = {task}
    while (parent := tasks[task]["parent"]) in tasks and parent not in seen:
        seen.add(parent)
        task = parent
    return len(seen) - 1


def discover(app: UserApp, size: str = "ci", cpus: int | None = None, gpus: int | None = None, extra_args=(),
             refresh: bool = False, timeout_s: float | None = None, keep_failed: bool = True,
             tunables: str = "", memory: dict[str, int] | None = None) -> dict:
    """The application description of `app` as `mapperopt run --app ... --size SIZE -- EXTRA_ARGS` on `cpus` CPU and
    `gpus` GPU processors (default: the size's) runs it, found by running that command once under a recording DSL
    mapper that maps like Legion's default mapper (and keeps the program's own mapper, so that its tunables are
    answered), killed after `timeout_s` seconds (default: the size's `timeout_s`, at most `DISCOVERY_TIMEOUT_S`);
    `own_mapper` names the mapper the program registers itself, if any (the shim's note). Cached by the
    executable's contents and the command line (`discovery_path`). A failed discovery keeps its folder unless
    `keep_failed` is False (its caller goes on without the description). `tunables`: DSL `Tunable` statements the
    recording mapper answers with (a mapper's other answers; part of the cache's key): the program runs, and
    launches, with them, and the description lists only the tunables that mapper left to others. `memory`: the
    run's memory sizes in MiB by "csize", "fsize", "zsize" (`run --csize`...; default: the size's), which the
    discovery run gets too (not part of the cache's key, `discovery_path`).

    Raises:
        MapperoptError: GPUs on a machine without an NVIDIA driver, or the program timed out, failed, ran no
            Legion task under the recording mapper or left its record malformed (`_discovery_failed`: what happened,
            the folder its output is kept in, what to try).
    """
    from mapperopt.compiler.build import compile_program

    sz = app.config.size(size)
    gpus = sz.gpus if gpus is None else gpus
    cmd = discovery_command(app, size, cpus, gpus, extra_args, memory)
    cache = discovery_path(app, [*cmd, *([tunables] if tunables else [])])
    if cache.is_file() and not refresh:
        try:  # a cache: a record a crash or a hand damaged is discovered again, not a traceback on every command
            return read_json(cache, fields=APP_FIELDS)  # as its readers (`AppDescription`) need it
        except MapperoptError as exc:
            print(f"note: {str(exc).splitlines()[0]}; discovering the program again", file=sys.stderr, flush=True)
    if cache.parent.exists() and not cache.parent.is_dir():  # said before the run, which could not be kept
        raise MapperoptError(f"{cache.parent} is a file, where mapperopt keeps a folder",
                             hint="remove or rename it, then run the same command again")
    if cache.is_dir():  # likewise
        raise MapperoptError(f"{cache} is a folder, where mapperopt keeps a file",
                             hint="remove or rename it, then run the same command again")
    require_gpu_driver(gpus, size, sz.gpus, extra_args)
    # A minute or so the first time (the mapper and shim builds, one run): say why nothing else shows.
    print(f"discovering {app.name} (first run, cached afterwards)…", file=sys.stderr, flush=True)
    mapper = compile_program(tunables, "discovery.dsl")
    # The program's working folder, kept with its output when it fails: the error says where.
    _remove_old_discovery_folders()
    folder = Path(tempfile.mkdtemp(prefix=f"mapperopt-discover-{app.name}-"))
    record, trace = folder / "record.jsonl", folder / "trace.jsonl"  # the trace counts each task's launches
    env = shim_env(app, mapper.so_path, trace_path=trace, record_path=record, keep=True)
    limit = min(sz.timeout_s, DISCOVERY_TIMEOUT_S) if timeout_s is None else timeout_s
    from mapperopt.benchmarks.harness import run_in_group

    try:
        done = run_in_group(cmd, limit, cwd=folder, env=env)
        out, err, code = done.stdout, done.stderr, done.returncode
    except subprocess.TimeoutExpired as exc:
        out, err, code = exc.stdout or "", exc.stderr or "", None
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    # Read only after a clean exit: a program killed while the mapper wrote leaves a line cut short.
    desc = malformed = None
    if code == 0 and record.is_file():
        written = record  # the file being read
        try:
            lines = list(_json_lines(record))
            desc = describe_from_record(app.name, lines) if lines else None
            if desc is not None:  # the record has each task's first launch only: the trace has every launch's
                written = trace
                shown = {t["name"]: {r["index"]: (r["names"] or [None])[0] for r in t["regions"]}
                         for t in desc["tasks"]}
                summary = launch_summary(_json_lines(trace), shown) if trace.is_file() else {}
                for task in desc["tasks"]:
                    task.update(summary.get(task["name"], {"launches": {}}))
            own = OWN_MAPPER_NOTE.search(err)
            if desc is not None and own:  # the shim's note: without --keep-app-mapper, a DSL mapper displaces it
                desc["own_mapper"] = own.group(2)
        except ValueError as exc:  # the program wrote into the file, or it was cut short
            desc, malformed = None, (written.name, str(exc))
    if desc is None:
        if not keep_failed:
            shutil.rmtree(folder, ignore_errors=True)
            if code == 0 and malformed is None:  # not a Legion program: said, by its message alone (nothing kept)
                raise NoLegionTask(_discovery_failed(app, cmd, folder, out, err, code, limit, malformed, gpus,
                                                     extra_args).message)
            raise MapperoptError(f"discovering {app.name} failed")
        (folder / "stdout.txt").write_text(out)
        (folder / "stderr.txt").write_text(err)
        raise _discovery_failed(app, cmd, folder, out, err, code, limit, malformed, gpus, extra_args)
    shutil.rmtree(folder, ignore_errors=True)
    cache.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(cache, json.dumps(desc, indent=1) + "\n")
    return desc


# How long the folder of a failed discovery is kept (its error points to it) before a later discovery removes it.
KEPT_DISCOVERY_DAYS = 7


def _remove_old_discovery_folders() -> None:
    """Removes this user's folders of failed discoveries in the temporary folder that are older than
    `KEPT_DISCOVERY_DAYS`: read by then, or never, they would otherwise pile up there."""
    limit = time.time() - KEPT_DISCOVERY_DAYS * 24 * 3600
    for folder in Path(tempfile.gettempdir()).glob("mapperopt-discover-*"):
        try:
            info = folder.lstat()
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and info.st_mtime < limit:
            shutil.rmtree(folder, ignore_errors=True)


def _json_lines(path: Path) -> Iterator[dict]:
    """The objects of the discovery record or placement trace at `path`, one a line (`describe_from_record`,
    `launch_summary`), read as they are used (a long run's trace has a line per task mapped).

    Raises:
        ValueError: a line is not a JSON object (which line, and what is wrong with it).
    """
    with open(path, errors="replace") as f:
        for number, line in enumerate(f, 1):
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"line {number} is not JSON ({exc.msg}: column {exc.colno})") from None
            if not isinstance(value, dict):
                raise ValueError(f"line {number} is not a JSON object") from None
            yield value


def relative_paths_note(words, folder) -> str | None:
    """Why a program run in `folder` (discovery's or its run folder) may not find what its arguments `words` name:
    those that name a file or folder relative to the current folder and not to `folder`; None when none does."""
    here = [w for w in map(str, words) if w and not w.startswith("-") and not os.path.isabs(w)
            and os.path.exists(w) and not (Path(folder) / w).exists()]
    if not here:
        return None
    one = len(here) == 1
    return (f"the program runs in {folder}, not in the current folder, where its argument{'' if one else 's'} "
            f"{', '.join(here)} name{'s' if one else ''} a file: give {'it' if one else 'them'} as an absolute "
            f"path{'' if one else 's'}, {', '.join(str(Path(w).resolve()) for w in here)}")


# A shell's "not found" for a relative path a script runs: `sh: 2: exec: ./daxpy: not found`, `bash: ./daxpy: No such
# file or directory`.
_NOT_FOUND = re.compile(r"(?:^|[\s:])((?:\.{1,2}/)?[^\s:/'\"][^\s:'\"]*): (?:not found|No such file or directory)",
                        re.MULTILINE)


def script_paths_note(app: UserApp, code: int | None, err: str) -> str | None:
    """Why a wrapper script (`app`'s executable) that exited `code` saying `err` may not find its program: it runs
    in a temporary folder (discovery's, the run folder), where a path relative to the current folder inside it
    leads nowhere; None when it is no script, or it did not exit 127 (a shell's "not found")."""
    if code != 127 or not is_script(app.exe):  # 127: the shell's "command not found"
        return None
    found = [m for m in _NOT_FOUND.finditer(err) if not os.path.isabs(m.group(1))]
    path = found[-1].group(1) if found else None
    name = path[2:] if path and path.startswith("./") else path or "PROGRAM"
    return (f"{app.exe} is a script: it runs in a temporary folder, not in the current folder, so a relative path "
            f"inside it{f' (`{path}`)' if path else ''} is not found; make the paths inside the script absolute, or "
            f'relative to the script: "$(dirname "$0")/{name}"')


class NoLegionTask(MapperoptError):
    """Discovery's error for a program that exited 0 but ran no Legion task: not a Legion program (or not one built
    against mapperopt's Legion), whatever mapper runs it."""


# AutoGuide's advice for a full memory that a size option or flag sizes (`autoguide.capacity`), up to its end.
_SIZE_ADVICE = re.compile(r".*?(?:Raise \S+ to \d+ MiB \([^)]*\)\.|use a smaller problem size or a machine with more "
                          r"memory\.)", re.S)


def _memory_advice(app: UserApp, cmd: list[str], err: str, gpus: int, extra_args) -> str | None:
    """For a discovery run (`cmd`, on `gpus` GPUs, with the flags `extra_args` after `--`) that stopped saying
    `err`: AutoGuide's advice when a memory was too small for the program (R403 or Legion's out-of-memory error),
    which names the option or flag that sizes it (`--csize 2048`, as for `run`); None for any other failure."""
    import click

    from mapperopt.autoguide import explain

    settings = {"command": shlex.join(cmd), "gpus": gpus, "extra_args": [str(a) for a in extra_args],
                "app_file": app.path, "app_options": shlex.join(spec_words(app))}
    # Under a command without --csize (`check`, `compile`), the advice names Legion's flag after that command's `--`.
    ctx = click.get_current_context(silent=True)
    if ctx is not None and not any(p.name == "csize" for p in ctx.command.params):
        settings["command_without_sizes"] = ctx.info_name
    result = RunResult(app=app.name, mapper="discovery", status="failed", stage="run", reason="", log=err,
                       settings=settings)
    return size_advice(explain(result))


def size_advice(feedback: Feedback) -> str | None:
    """AutoGuide's `feedback` on a run whose memory was too small for the program (R403 or Legion's out-of-memory
    error), up to the option or flag that raises it (`--csize 2048`) or that this machine has too little memory for
    it; None for any other failure. What follows is about a mapper's statements, which a run without a DSL mapper
    (discovery's recording mapper, Legion's default mapper) has none of; advice to spill to another memory likewise."""
    found = _SIZE_ADVICE.match(feedback.suggestion or "") if feedback.category.startswith("memory.") else None
    return found[0] if found else None


# The files discovery's recording mapper writes in the program's folder: what each holds, the variable naming it.
DISCOVERY_FILES = {"record.jsonl": ("the record of its tasks", "MAPPEROPT_RECORD"),
                   "trace.jsonl": ("the trace of the tasks it mapped", "MAPPEROPT_TRACE")}


def _discovery_failed(app: UserApp, cmd: list[str], folder: Path, out: str, err: str, code: int | None,
                      limit: float, malformed: tuple[str, str] | None = None, gpus: int = 0, extra_args=()
                      ) -> MapperoptError:
    """The error for a discovery run of `app` (`cmd`, in `folder`, which holds its stdout.txt and stderr.txt) that
    timed out after `limit` seconds (`code` None), failed (`code`: its exit status), exited 0 without running a
    Legion task, or exited 0 leaving a file of `DISCOVERY_FILES` in `folder` `malformed` (its name, and what is wrong
    with it): what happened to the program, where its output is, and what to try."""
    from mapperopt.benchmarks.harness import failure_line, stderr_lines

    # The program's last words, without the lines the libcuda stand-in causes (stderr.txt keeps them).
    said = ("\n".join(stderr_lines(err)) or out.strip())[-1500:] or (
        "no line beyond the usual start-up lines (stderr.txt keeps them)" if err.strip() else "(nothing)")
    where = f"its output is in {folder}/stdout.txt and stderr.txt"
    # In a shell as the user has it: with the environment discovery gave the program (Legion's libraries, the libcuda
    # stand-in on a machine without GPUs, the application file's `env`), without the recording mapper. The shim's
    # variables that this environment or the file set, which discovery took out, are taken out there too.
    env = "".join(f"{k}={shlex.quote(v)} " for k, v in app.env.items() if k not in SHIM_VARIABLES)
    if unset := [k for k in SHIM_VARIABLES if k in os.environ or k in app.env]:
        env = f"{shlex.join(['env', *(w for k in unset for w in ('-u', k))])} {env}"
    # Where it ran (its output beside): a relative path among its arguments means there what it meant there.
    by_hand = (f"run it by hand where it ran: cd {shlex.quote(str(folder))} && {toolchain.env_eval()} "
               f"&& {env}{shlex.join(cmd)}")
    moved = relative_paths_note(cmd[1:], folder) or script_paths_note(app, code, err)
    moved = (f"\nNote: {moved}" if moved else "") + (f"\nThe folder {folder} is kept for you to read; a later "
                                                     f"discovery removes it after {KEPT_DISCOVERY_DAYS} days.")
    if malformed is not None:
        name, why = malformed
        what, variable = DISCOVERY_FILES[name]
        return MapperoptError(f"discovering {app.name}: your program exited 0, but {what} that the recording mapper "
                              f"wrote, {folder}/{name}, is malformed: {why}",
                              hint=f"{where}; it ends with:\n{said}\nThe recording mapper writes one JSON object "
                                   f"a line to the file {variable} names: does the program write to that file "
                                   f"too? To see what it does, {by_hand}{moved}")
    if code == 0:  # e.g. not a Legion program, or one that exits before starting Legion's runtime
        return NoLegionTask(f"discovering {app.name}: the program exited 0 but ran no Legion task under the "
                            f"recording mapper: is {app.exe} a Legion program built against mapperopt's Legion "
                            "(`mapperopt toolchain`), and do its arguments make it run?",
                            hint=f"{where}; it ends with:\n{said}\nTo see what it does, {by_hand}{moved}")
    detail = ""
    if code is None:
        what = f"did not finish within {limit:g} s and was stopped"
        advice = ("If it only needs longer, give a larger --timeout or smaller problem arguments after `--`; to see "
                  f"whether it also hangs without mapperopt, {by_hand}")
        if not out.strip():  # not a sign that it stopped before printing: killed, it lost what it had not flushed
            from mapperopt.autoguide.explain import lost_output_note

            advice += "\n" + lost_output_note("stdout.txt")
    else:
        if code < 0:
            what = f"was killed by signal {-code} ({signal_name(-code)})"
        elif code > 128 and not signal_name(code - 128).startswith("signal "):  # a shell reporting its child's signal
            what = f"exited with code {code} (128 + {code - 128}: a program it started was killed by " \
                   f"{signal_name(code - 128)})"
        else:
            what = f"exited with code {code}"
        detail = failure_line(err) or ""
        memory = _memory_advice(app, cmd, err, gpus, extra_args) if code != 0 else None
        if memory:  # the program needs more memory than the run gives it: which option raises it, as for `run`
            return MapperoptError(f"discovering {app.name}: your program {what} in its first run, which records its "
                                  f"tasks for mapperopt" + (f": {detail}" if detail else ""),
                                  hint=f"{where}. {memory}{moved}")
        advice = ("The recording mapper maps as Legion's default mapper does; to tell the program from mapperopt, "
                  f"{by_hand} (without mapperopt). If it fails there too, its arguments (after `--`) or the program "
                  "are the cause")
    return MapperoptError(f"discovering {app.name}: your program {what} in its first run, which records its tasks "
                          f"for mapperopt" + (f": {detail}" if detail else ""),
                          hint=f"{where}; it ends with:\n{said}\n{advice}{moved}")


def _has_layout(dsl: str) -> bool:
    """True when the DSL program has a Layout statement (False when it does not parse: the compiler says why)."""
    from mapperopt.dsl import ast as A
    from mapperopt.dsl import parse

    try:
        return any(isinstance(s, A.LayoutStmt) for s in parse(dsl).statements)
    except MapperoptError:
        return False


def run_user_app(app: UserApp, mapper, *, size: str = "ci", cpus: int | None = None, gpus: int | None = None,
                 repeats: int = 1, max_repeats: int | None = None, out_dir=None, timeout_s: float | None = None,
                 trace: bool = False, profile: bool = False, extra_args=(), csize: int | None = None,
                 fsize: int | None = None, zsize: int | None = None):
    """`run_benchmark` for a user's program (same arguments, same `RunResult` and run folder): the DSL mapper enters
    through the shim, each execution must exit 0 and pass the application file's checks (else stage "run" or
    "verify"), and the metric gives `throughput` (see the module's docstring). No calibration (`min_time_s` does not
    apply): the program's own arguments fix its amount of work."""
    from mapperopt.benchmarks import harness as H
    from mapperopt.benchmarks.protocol import enough

    memory = {k: v for k, v in (("csize", csize), ("fsize", fsize), ("zsize", zsize)) if v is not None}
    sz = replace(app.config.size(size), **memory)
    max_repeats = repeats if max_repeats is None else max_repeats
    # the counts given (not the size's): advice's commands carry them, to run on the same machine
    given = {k: v for k, v in (("cpus", cpus), ("gpus", gpus)) if v is not None}
    cpus, gpus = processor_counts(sz.cpus if cpus is None else cpus, sz.gpus if gpus is None else gpus, extra_args)
    given_timeout, timeout_s = timeout_s, sz.timeout_s if timeout_s is None else timeout_s
    if cpus < 1 or gpus < 0 or repeats < 1 or max_repeats < repeats or timeout_s <= 0:
        raise MapperoptError("need cpus >= 1, gpus >= 0, 1 <= repeats <= max_repeats and timeout_s > 0")
    require_gpu_driver(gpus, size, sz.gpus, extra_args)
    if mapper == "expert":
        raise MapperoptError(f"{app.name} has no expert mapper", hint="use `default` or a DSL file")
    name, dsl, filename = H._resolve_mapper(app.config, mapper)
    if (trace or profile) and dsl is None:
        raise MapperoptError("trace and profile need a DSL mapper (Legion's default mapper writes neither): "
                             + dsl_mapper_hint(gpus))
    run_dir, made = H._new_run_dir(app.name, out_dir)
    with H.named_if_interrupted(run_dir), writing_in(run_dir):  # a full disk names the run folder
        settings = {"size": size, "cpus": cpus, "gpus": gpus, "util": sz.util, "repeats": repeats,
                    "max_repeats": max_repeats, **memory, "given": given, "timeout_s": timeout_s,
                    "min_time_s": 0.0, "iterations_flag": "", "iterations": None,
                    "extra_args": [str(a) for a in extra_args], "exe": str(app.exe), "app_file": app.path,
                    "app_options": shlex.join(spec_words(app)),
                    "metric": app.metric.describe(), "verify": app.verify.describe(),
                    "keep_app_mapper": app.keep_app_mapper,
                    **({"mapper_file": filename} if filename.endswith(".dsl") else {})}  # for advice to paste back

        def finish(**fields) -> RunResult:
            result = RunResult(app=app.name, mapper=name, run_dir=str(run_dir), dsl=dsl, settings=settings, **fields)
            (run_dir / "result.json").write_text(json.dumps(result.to_json(), indent=2) + "\n")
            H._write_feedback(result, run_dir)
            return result

        if dsl is None:  # what maps it: its own mapper, where its discovery (cached, not run now) found one
            cached = discovery_path(app, discovery_command(app, size, cpus, gpus, extra_args))
            try:
                found = read_json(cached) if cached.is_file() else None
            except MapperoptError:  # a damaged cache: discovered again where a run needs it
                found = None
            if isinstance(found, dict):  # it says what maps the program (its own mapper, or Legion's default)
                settings["description"] = str(cached)
                if found.get("own_mapper"):
                    settings["own_mapper"] = found["own_mapper"]
        so = None
        if dsl is not None and app.refuse_layouts and _has_layout(dsl):
            (run_dir / "mapper.dsl").write_text(dsl)
            return finish(status="failed", stage="check",
                          reason="Layout statements are refused while tuning this application: "
                                 + unsearched_layouts(None), log="")
        if dsl is not None:
            with H.removed_if_failed(made):  # discovery, which may fail; under the run's own timeout
                discover(app, size, cpus, gpus, tuple(map(str, extra_args)), timeout_s=given_timeout, memory=memory)
                so, stage, reason, log = H._compile(dsl, filename, app, size, cpus, gpus, run_dir, memory,
                                                    tuple(map(str, extra_args)))
            # The description the compile discovered: AutoGuide's advice reads the program's tasks from it.
            settings["description"] = str(discovery_path(app, discovery_command(app, size, cpus, gpus, extra_args)))
            if so is None:
                return finish(status="failed", stage=stage, reason=reason, log=log)
        attempts, commands = [], []
        untraced = H.no_replay_flags(dsl) if dsl is not None else []

        def done() -> bool:  # the harness's rule: at least `repeats`, more while the estimate is loose
            values = [a.result["throughput"] for a in attempts]
            return len(values) >= max_repeats or (len(values) >= repeats and enough(values, repeats, max_repeats))

        while not done():
            label = f"-{len(attempts) + 1}"
            trace_path = (run_dir / f"trace{label}.jsonl").resolve() if trace else None
            env = shim_env(app, so, trace_path)
            cmd = [*legion_command(app, size, cpus, gpus, extra_args, sz), *untraced]
            # The variables the run sets beyond this process's own (the shim's, the app file's `env:`), so that each
            # line reproduces its execution.
            added = {k: v for k, v in env.items() if os.environ.get(k) != v}
            commands.append(shlex.join(["env", *[f"{k}={v}" for k, v in added.items()], *cmd]))
            (run_dir / "command.txt").write_text(f"# run in {run_dir.resolve()}\n" + "\n".join(commands) + "\n")
            run = H.execute(cmd, run_dir, label, timeout_s, env, expect_result=False, dsl_mapper=dsl is not None)
            attempt, stage, reason = run.attempt, run.stage, run.reason
            if reason and reason.endswith(_NO_MESSAGE):
                reason = _quiet_failure(app, reason, run_dir / attempt.stdout, run_dir / attempt.stderr)
            if stage in ("start", "run") and attempt.exit_code is not None and attempt.exit_code > 0 and (
                    note := script_paths_note(app, attempt.exit_code,
                                              (run_dir / attempt.stderr).read_text(errors="replace"))):
                reason = f"{reason}; {note}"
            if stage is None:
                reason = check_output(app, run_dir, attempt.stdout, attempt.stderr)
                stage = "verify" if reason else None
            if stage is None:
                stdout, stderr = (H.pattern_text(run_dir / name) for name in (attempt.stdout, attempt.stderr))
                result, reason = measure(app, stdout, attempt.wall_s, stderr)
                stage = "run" if result is None else None
                attempt = replace(attempt, result=result)
            attempts.append(attempt)
            if stage == "verify" and len(attempts) > 1:  # the same check passed before: not the check's mistake
                reason = _intermittent(len(attempts), reason)
            if stage is not None:
                settings["command"] = commands[-1]
                log = run.log or (f"--- stderr ---\n{(run_dir / attempt.stderr).read_text(errors='replace')}\n"
                                  f"--- stdout ---\n{(run_dir / attempt.stdout).read_text(errors='replace')}")
                return finish(status="failed", stage=stage, reason=reason, log=log,
                              attempts=tuple(H._number_files(run_dir, attempts)))
        attempts = H._number_files(run_dir, attempts)
        settings.update(calibration_runs=0, retried=0, measured_runs=len(attempts), min_time_met=True,
                        command=commands[-1])
        task_profile = None
        # as the harness does: one more, untraced execution, after the measured ones (its timed loop unknown)
        if profile:
            env = shim_env(app, so, None, True)
            cmd = [*legion_command(app, size, cpus, gpus, extra_args, sz), *H.no_replay_flags(dsl, profile=True)]
            added = {k: v for k, v in env.items() if os.environ.get(k) != v}
            (run_dir / "command.txt").write_text((run_dir / "command.txt").read_text() + "# profile\n" + shlex.join(
                ["env", *[f"{k}={v}" for k, v in added.items()], *cmd]) + "\n")
            run = H.execute(cmd, run_dir, "-profile", timeout_s, env, expect_result=False)
            task_profile = run.attempt.profile if H.profiled(run, settings) else None
        # it mapped with its own mapper, where it has one (discovery, cached, says): named by the advice
        if dsl is None:
            try:
                own = discover(app, size, cpus, gpus, tuple(map(str, extra_args)), timeout_s=given_timeout,
                               keep_failed=False, memory=memory)
            except NoLegionTask as exc:  # not a Legion program: said with the result, as check says it
                own = None
                settings["no_legion_task"] = exc.message
            except MapperoptError:  # the measurement stands; only which mapper ran is unknown
                own = None
            if own is not None:
                settings["description"] = str(discovery_path(app, discovery_command(app, size, cpus, gpus,
                                                                                    extra_args)))
                if own.get("own_mapper"):
                    settings["own_mapper"] = own["own_mapper"]
        return finish(status="ok", unit=attempts[0].result["unit"], attempts=tuple(attempts), profile=task_profile,
                      **H._summary(attempts))


# ---------------------------------------------------------------------------------------------------- command line


def app_option(command):
    """`--app FILE|'CMD ARGS'`: a user's program instead of a benchmark name (check, explain, compile)."""
    import click

    def given(ctx, param, value):  # an empty --app (an unset shell variable) is no program, not none
        if value is not None and not value.strip():
            raise click.BadParameter("needs an application file or a command line, e.g. --app './myapp -n 100'")
        return value

    return click.option("--app", "app_spec", metavar="FILE|'CMD ARGS'", default=None, callback=given,
                        help="Your own Legion program instead of a benchmark: its application file or its "
                             "command line in quotes (docs/own-app.md).")(command)


def discovery_options(command):
    """`--app` with the options of the program's run that decide what discovery sees (check, explain, compile):
    --keep-app-mapper (its own mapper answers the tunables the DSL does not), --timeout (of the discovery run) and
    --rediscover (run it again: a rebuild behind a wrapper script that names its program in a way mapperopt does
    not follow leaves the cache's key unchanged)."""
    import click

    from mapperopt.benchmarks.protocol import SHORTEST_TIMEOUT_S
    from mapperopt.options import FiniteFloatRange

    options = [
        click.option("--keep-app-mapper", is_flag=True, default=False,
                     help="With --app: the runs keep the program's own mapper for the tasks the DSL does not name "
                          "(as `run --keep-app-mapper`)."),
        click.option("--timeout", "timeout_s", type=FiniteFloatRange(min=SHORTEST_TIMEOUT_S), default=None,
                     metavar="SECONDS", help="With --app: stop the discovery run after SECONDS [default: the "
                                             "size's timeout_s, at most 300]."),
        click.option("--rediscover", is_flag=True, default=False,
                     help="With --app: discover the program again, not from the cache (after rebuilding a program "
                          "that a wrapper script runs through PATH or a variable: mapperopt cannot check it)."),
    ]
    for option in reversed(options):
        command = option(command)
    return app_option(command)


def app_words(app_spec: str, metric_regex=None, unit=None, higher_is_better=False, verify_pattern=None,
              verify_cmd=None, reference=None, keep_app_mapper=False) -> list[str]:
    """`--app` and the `app_options` given (their values as `app_options` passes them), as words of a command line to
    print for pasting (`shlex.join`)."""
    words = ["--app", app_spec]
    for option, value in (("--metric", metric_regex), ("--unit", unit), ("--verify-pattern", verify_pattern),
                          ("--verify-cmd", verify_cmd), ("--reference", reference)):
        words += [option, value] if value is not None else []
    return words + ["--higher-is-better"] * bool(higher_is_better) + ["--keep-app-mapper"] * bool(keep_app_mapper)


def spec_words(app: UserApp) -> list[str]:
    """The words that give `app` to a mapperopt command (`app_words`): its application file or its command line,
    with the metric and verification options it was given (over the file's: `UserApp.given`)."""
    def option(key: str) -> bool:
        return app.path is None or key in app.given

    m, v = app.metric, app.verify
    metric = (m.regex, m.unit if m.unit != ("s" if m.regex is None else "") else None, m.higher_is_better)
    if not option("metric"):  # the file's pattern, with --unit or --higher-is-better (`given` "unit") or alone
        metric = (None, m.unit or None, m.higher_is_better) if "unit" in app.given else (None, None, False)
    return app_words(app.path if app.path is not None else shlex.join([str(app.exe), *app.args["ci"]]),
                     *metric,
                     *((v.pattern, v.command, v.reference) if option("verify") else (None, None, None)),
                     app.keep_app_mapper and option("keep_app_mapper"))


def dsl_mapper_hint(gpus: int | None) -> str:
    """Where a run of a user's program needs a DSL mapper (--trace, --profile): the one to write, which maps as
    Legion's default mapper does on `gpus` GPUs (a user's program has no expert mapper)."""
    first = ("Task * GPU,CPU; Region * * GPU FBMEM; Region * * CPU SYSMEM;" if gpus else
             "Task * CPU; Region * * CPU SYSMEM;")
    return (f"give one with --mapper, e.g. --mapper start.dsl, with in start.dsl a DSL mapper that maps as Legion's "
            f"default mapper does: `{first} Layout * * * SOA F_order;`")


def check_words(app: UserApp, size: str, extra_args=()) -> tuple[str, ...]:
    """The options that give `app` at `size`, with a run's own flags `extra_args`, to `mapperopt check`
    (`AppDescription.given_as`)."""
    spec = app.path if app.path is not None else shlex.join([str(app.exe), *app.args["ci"]])
    return ("--app", spec, *(("--size", size) if size != "ci" else ()),
            *(("--keep-app-mapper",) if app.keep_app_mapper else ()),
            *(("--", *map(str, extra_args)) if extra_args else ()))


def built_as(app: UserApp) -> str:
    """`app`'s executable (relative to the working directory, if in it) and the local time it was last written:
    "the executable build/diffuse is dated 2026-12-07 12:45" (`AppDescription.built`)."""
    exe = app.exe.resolve()
    shown = exe.relative_to(Path.cwd()) if exe.is_relative_to(Path.cwd()) else exe
    return f"the executable {shown} is dated {time.strftime('%Y-%m-%d %H:%M', time.localtime(exe.stat().st_mtime))}"


def app_options(command):
    """`--app` and the metric and verification flags of `--app 'CMD ARGS'` (run, tune, compare)."""
    import click

    options = [
        click.option("--metric", "metric_regex", metavar="REGEX", default=None,
                     help="With --app: the figure of merit is the number REGEX captures (docs/own-app.md) "
                          "[default: the run's wall time, in s]."),
        click.option("--unit", default=None,
                     help="The metric's unit, with a metric pattern (--metric or the application file's)."),
        click.option("--higher-is-better", is_flag=True, default=False,
                     help="Larger metric values are better, with a metric pattern [default: lower is better]."),
        click.option("--verify-pattern", metavar="REGEX", default=None,
                     help="With --app: a run is correct only when its standard output (else its standard error) "
                          "matches REGEX (and it exits 0)."),
        click.option("--verify-cmd", metavar="CMD", default=None,
                     help="With --app: a run is correct only when the shell command CMD exits 0 (run in the current "
                          "folder; its variables: docs/own-app.md)."),
        click.option("--reference", metavar="FILE", default=None,
                     help="With --app: a run is correct only when its output equals FILE."),
        click.option("--keep-app-mapper", is_flag=True, default=False,
                     help="With --app: keep the program's own mapper for the tasks the DSL does not name."),
    ]
    for option in reversed(options):
        command = option(command)
    return app_option(command)


def app_from_options(bench: str | None, app_args: tuple, app_spec: str | None, metric_regex=None, unit=None,
                     higher_is_better=False, verify_pattern=None, verify_cmd=None, reference=None,
                     keep_app_mapper=False, min_time_s: float | None = None) -> tuple[str | UserApp, tuple]:
    """(what to run, application arguments) from a command's BENCH argument, its `app_options` and its --min-time
    (`min_time_s`, None when not given).

    With --app, BENCH holds the first of the program's flags after `--` (click fills it first; `BenchCommand` refuses
    one given before `--`).

    Raises:
        MapperoptError: neither BENCH nor --app, an unknown benchmark (before the command prints anything), --app
            flags without --app, --min-time with --app, or --unit or --higher-is-better without a metric pattern
            (from --metric or the application file); the problems of the options and the program all at once.
    """
    flags = {"--metric": metric_regex, "--unit": unit, "--higher-is-better": higher_is_better or None,
             "--verify-pattern": verify_pattern, "--verify-cmd": verify_cmd, "--reference": reference,
             "--keep-app-mapper": keep_app_mapper or None}
    if app_spec is None:
        given = [k for k, v in flags.items() if v is not None]
        if given:
            names = " and ".join(filter(None, (", ".join(given[:-1]), given[-1])))
            raise UsageError(f"{names} {'applies' if len(given) == 1 else 'apply'} only to --app")
        if not bench:
            raise UsageError("name a benchmark (BENCH) or give --app FILE|'CMD ARGS'",
                             hint=f"the benchmarks: {', '.join(known_benchmarks())}")
        require_app(bench)
        return bench, app_args
    problems: list[MapperoptError] = []  # every problem of the options and the program at once (`_checked`)
    if min_time_s is not None:  # accepted silently, it would change nothing: an execution is never calibrated
        problems.append(UsageError(f"--min-time {min_time_s:g} does not apply to --app: mapperopt never "
                                   "calibrates your program, whose arguments alone fix the work of an execution",
                                   hint=f"leave --min-time out; for longer executions give {protocol.USER_WORK}"))
    metric = _checked(problems, make_metric, metric_regex, unit, higher_is_better) if metric_regex else None
    verify = None
    if verify_pattern or verify_cmd or reference:
        verify = make_verify(verify_pattern, verify_cmd, str(Path(reference).resolve()) if reference else None,
                             folder=str(Path.cwd()), problems=problems)
    try:
        app = resolve_app(app_spec, verify=verify, keep_app_mapper=keep_app_mapper or None)
    except MapperoptError as exc:
        if not problems:  # the application file's alone: its own error
            raise
        problems.extend(getattr(exc, "problems", [exc]))
    raise_together(problems, "the command line")
    if metric is not None:
        if unit is None and app.path is not None and app.metric.regex is not None:
            metric = replace(metric, unit=app.metric.unit)  # a new pattern for the file's number, in its unit
        app = replace(app, metric=metric, given=tuple(dict.fromkeys((*app.given, "metric"))))
    elif unit is not None or higher_is_better:
        app = _metric_changed(app, unit, higher_is_better)
    # said once the pattern and unit are settled, whichever of the file and the options gave them
    fix = "--unit {unit}" if app.path is None or unit is not None or metric_regex else f"`unit: {{unit}}` in {app.path}"
    if said := unit_mismatch(app.metric, fix):
        import click

        click.secho(f"warning: {said}", fg="yellow", err=True)
    return app, ((bench,) if bench else ()) + tuple(app_args)


def _metric_changed(app: UserApp, unit: str | None, higher_is_better: bool) -> UserApp:
    """`app` with its metric's unit and direction changed by --unit and --higher-is-better given without --metric:
    its pattern (the application file's) is kept.

    Raises:
        MapperoptError: the metric has no pattern: it is the wall time, in seconds and lower is better, which these
            options would mislabel.
    """
    given = [f"--unit {unit}"] * (unit is not None) + ["--higher-is-better"] * bool(higher_is_better)
    if app.metric.regex is None:
        raise MapperoptError(f"{' and '.join(given)} need{'s' * (len(given) == 1)} a metric pattern: without one the "
                             "figure of merit is the wall time of the run, in seconds, lower is better",
                             hint="give --metric 'REGEX' too, the number in the output as its first group, e.g. "
                                  "--metric 'solve took ([0-9.]+) ms' --unit ms (or `metric: {regex: ...}` in the "
                                  "application file)")
    unit = app.metric.unit if unit is None else protocol.TIME_SPELLINGS.get(unit.lower(), unit)
    metric = replace(app.metric, unit=unit, higher_is_better=app.metric.higher_is_better or higher_is_better)
    return replace(app, metric=metric, given=tuple(dict.fromkeys((*app.given, "unit"))))
