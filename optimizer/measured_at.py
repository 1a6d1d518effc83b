"""What `mapperopt run` says of a mapper file that a tuning or a comparison measured (its best.dsl, or an iteration's
mapper.dsl): the settings the search measured it at, read from the folder, where the run's differ. A figure measured
at another iteration count (run calibrates to its own --min-time), problem size, processors, memories or program
arguments is not comparable with the search's."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mapperopt.errors import MapperoptError
from mapperopt.records import RunResult

if TYPE_CHECKING:
    from mapperopt.benchmarks.userapp import RunNote

TUNE_SETTINGS = "mapperopt.tune.settings/1"  # a tuning folder's, and each of a comparison's runs'


def _read(path: Path) -> dict:
    """A JSON object from `path`; empty where it is missing or damaged (the run's result stands without it)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _without(args: list, flag: str) -> list[str]:
    """`args` without `flag` and its value: the search gives its calibrated count so, after the program's own. What
    the run's merge of flags (`apps._app_args`) passes through beside a size that sets `flag`."""
    from mapperopt.benchmarks.apps import _app_args

    return _app_args({flag: ""}, args)[1]


def _measurement(path: Path, folder: Path, settings: dict) -> dict:
    """The settings of the harness's result that measured `path` in the search folder `folder`: best.dsl's final
    measurement (tune's summary.json, a comparison's final.json), an iteration's own run; empty where none is kept
    (an unfinished search's best, an iteration answered from another's result)."""
    if path.name != "best.dsl":
        return _read(path.parent / "result.json").get("settings") or {}
    root, entry = folder, None
    if isinstance(settings.get("compare"), str):  # a run of a comparison: its final measurement is the comparison's
        from mapperopt.optimizer.base import cache_key, normalize_dsl

        root = folder / settings["compare"]
        try:
            program = "p-" + cache_key(normalize_dsl(path.read_text()), {})
        except (OSError, ValueError):
            return {}
        groups = _read(root / "final.json").get("groups") or []
        entry = next((g["measured"].get(program) for g in groups if isinstance(g, dict)
                      and folder.name in g.get("runs", ()) and isinstance(g.get("measured"), dict)), None)
    else:
        summary = _read(folder / "summary.json")
        entry = (summary.get("measured") or {}).get(summary.get("best"))
    run_dirs = (entry or {}).get("run_dirs") or []
    return _read(root / run_dirs[0] / "result.json").get("settings") or {} if run_dirs else {}


def measured_elsewhere(bench: Any, mapper: str, result: RunResult) -> RunNote | None:
    """The note `run` prints after the result of `mapper` (the --mapper given) on the benchmark `bench`, and `run
    --json` gives last in its `notes`, where that file lies in a tuning or comparison folder that measured it at other
    settings than `result`'s (iteration count, size, processors, memories, program arguments): what differs and the
    command that measures as the search did (at its iteration count, uncalibrated: `--min-time 0`). None where they
    agree, or for another file."""
    path = Path(mapper)
    folder = path.parent if path.name == "best.dsl" else \
        path.parent.parent if path.name == "mapper.dsl" and re.fullmatch(r"iter-\d+", path.parent.name) else None
    if not isinstance(bench, str) or not result.ok or folder is None:
        return None
    settings = _read(folder / "settings.json")
    if settings.get("schema") != TUNE_SETTINGS or settings.get("app") != result.app:
        return None
    from mapperopt.benchmarks.apps import load_config
    from mapperopt.optimizer.commands import best_run_command
    from mapperopt.optimizer.store import joined_names

    ours = result.settings
    flag = ours["iterations_flag"]
    measured = _measurement(path, folder, settings)
    count = measured.get("iterations", settings.get("iterations"))
    theirs_said, ours_said = [], []

    def differ(theirs: Any, mine: Any, said: str, said_mine: str) -> None:
        if theirs != mine:
            theirs_said.append(said)
            ours_said.append(said_mine)

    if isinstance(count, int):
        min_time = measured.get("min_time_s", settings.get("min_time_s"))
        why = min_time is not None and min_time != ours.get("min_time_s")
        differ(count, ours.get("iterations"), f"{flag} {count}" + (f" (--min-time {min_time:g})" if why else ""),
               f"{flag} {ours.get('iterations')}" + (f" (--min-time {ours.get('min_time_s'):g})" if why else ""))

    def memory(size: str, given: dict) -> dict:
        try:
            sz = load_config(bench).size(size)
        except MapperoptError:  # a size the configuration no longer has: as given
            return dict(given)
        return {k: given.get(k) or getattr(sz, k) for k in ("csize", "fsize", "zsize")}

    differ(settings.get("size"), ours.get("size"), f"--size {settings.get('size')}", f"--size {ours.get('size')}")
    for kind in ("cpus", "gpus"):
        differ(settings.get(kind), ours.get(kind), f"--{kind} {settings.get(kind)}", f"--{kind} {ours.get(kind)}")
    # the memories given as this mapper was measured (tune raises them after a capacity failure), else the folder's
    given = {k: measured[k] for k in ("csize", "fsize", "zsize") if k in measured} if measured else \
        settings.get("memory") or {}
    theirs_memory = memory(settings.get("size"), given)
    ours_memory = memory(ours.get("size"), ours)
    for k in ("csize", "fsize", "zsize"):
        differ(theirs_memory.get(k), ours_memory.get(k), f"--{k} {theirs_memory.get(k)}",
               f"--{k} {ours_memory.get(k)}")
    args = _without(settings.get("app_args") or [], flag)
    mine = _without(ours.get("extra_args") or [], flag)
    differ(args, mine, f"the program's arguments {shlex.join(args)}" if args else "no program arguments",
           f"the program's arguments {shlex.join(mine)}" if mine else "no program arguments")
    if not theirs_said:
        return None
    fixed = [flag, str(count)] if isinstance(count, int) else []
    words = shlex.split(best_run_command(bench, {**settings, "memory": given, "app_args": [*args, *fixed]}, path))
    at = words.index("--") if "--" in words else len(words)
    if fixed:  # at the search's count as it is: no calibration from it
        words[at:at] = ["--min-time", "0"]
    search = "comparison" if isinstance(settings.get("compare"), str) else "tuning"
    from mapperopt.benchmarks.userapp import RunNote

    return RunNote("measured_elsewhere", None, (
        f"the {search} measured this mapper with {joined_names(theirs_said)}, this run with "
        f"{joined_names(ours_said)}: their figures are not comparable; to measure as it did: {shlex.join(words)}"),
        title="Note")
