"""The benchmark applications: their configurations (`configs/<app>.yaml`), builds and descriptions.

A configuration names the expert mapper, the metric, the flag holding the timed iteration count and, per size
(`ci`, `small`, `gpu`; docs/running.md), the application's arguments, the Legion resources, the timeout and the
minimum measured time. docs/running.md describes the fields.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import yaml

from mapperopt import toolchain
from mapperopt.errors import MapperoptError, UsageError, closest, exit_status

# A size key -> the Legion flag it sets; memory sizes are in MiB.
RESOURCE_FLAGS = {"cpus": "-ll:cpu", "util": "-ll:util", "csize": "-ll:csize", "gpus": "-ll:gpu",
                  "fsize": "-ll:fsize", "zsize": "-ll:zsize"}
GPU_ONLY = ("fsize", "zsize")  # only passed when the run uses GPUs
DESCRIBE_TIMEOUT_S = 60
# Applications built on a shared layer in benchmarks/legion/<layer>/: its sources are compiled in, its folder is
# on the include path, and the GEMM layer links the BLAS (CPU) and cuBLAS (GPU).
LAYERS = {"cannon": "gemm", "summa": "gemm", "pumma": "gemm", "johnson": "gemm", "solomonik": "gemm", "cosma": "gemm"}


def _flags(values: str, switches: str = "") -> dict[str, bool]:
    """flag -> whether it takes a value, from the flags that do (`values`) and those that do not (`switches`)."""
    return {**dict.fromkeys(values.split(), True), **dict.fromkeys(switches.split(), False)}


# Each benchmark's own flags (the flag comment of its source; docs/gemm.md, docs/pennant.md, docs/running.md). The
# applications ignore a flag they do not know, so a misspelt one would measure another problem (`check_app_flags`).
_MAPPER_FLAGS = _flags("-mapper -mapper-trace", "-mapper-profile --describe")
_GEMM_FLAGS = _flags("-n -iters -warmup -check -seed", "-test-skip-step")
APP_FLAGS = {
    "circuit": _flags("-p -pps -npp -wpp -pct -l -i -prune -seed -warmup -reference", "-test-corrupt"),
    "stencil": _flags("-nx -ny -ntx -nty -tsteps -tprune", "-test-skip-halo"),
    "pennant": _flags("-deck -npieces -numpcx -numpcy -cstop -warmup -check -energy-tolerance", "-test-corrupt"),
    **{app: {**_GEMM_FLAGS, **_flags("-g", "-reduce")} for app in ("cannon", "summa", "pumma")},
    "johnson": {**_GEMM_FLAGS, **_flags("-gdim")},
    "solomonik": {**_GEMM_FLAGS, **_flags("-rpoc -c -rpoc3")},
    "cosma": {**_GEMM_FLAGS, **_flags("-gx -gy -gz -procs")},
}
# Flags whose value is a file (per benchmark): the application runs in its run folder (`absolute_paths`).
PATH_FLAGS = {"pennant": ("-deck",)}
# Benchmarks whose launch domains follow the processor count without a flag (COSMA's grid, docs/gemm.md): their stored
# description (size ci, one CPU) holds for no other machine.
COUNT_GRIDS = ("cosma",)
# Tasks that run in every iteration but before its timer (the GEMMs' fill and placement, once per product): the task
# profile, which tells the timed loop's tasks by their counts, counts them in; the texts that show it say so.
BEFORE_TIMER = dict.fromkeys(LAYERS, ("taco_fill", "task_1", "task_2", "task_3"))
# What a benchmark's description leaves out (it gives each task one launch domain), said under `explain`'s output.
UNDESCRIBED_LAUNCHES = dict.fromkeys(("johnson", "solomonik", "cosma"), (
    "taco_fill is shown on A's face only; it fills B and C on theirs, the launch domains of task_2 and task_3"))
# Realm's flags without a colon (its logging); Legion's and Realm's others have one (-ll:cpu, -lg:safe_mapper, -hl:*).
REALM_PLAIN_FLAGS = ("-level", "-logfile", "-cat", "-errlevel", "-logtime")


def absolute_paths(app: str, args) -> list[str]:
    """`args` with the file named by each of `app`'s `PATH_FLAGS` made absolute: a path relative to the current
    folder (which `--describe` reads) would be read relative to the run folder, where the application runs."""
    words = [str(a) for a in args]
    return [str(Path(w).resolve()) if k and words[k - 1] in PATH_FLAGS.get(app, ()) else w
            for k, w in enumerate(words)]


def check_app_flags(app: str, args, options=(), command: str | None = None, before=()) -> None:
    """Refuses a flag among a benchmark's arguments after `--` (`args`) that neither the application `app` takes
    (`APP_FLAGS`) nor Legion and Realm (a colon in its name, or `REALM_PLAIN_FLAGS`), and one of the mapperopt
    command's own `options` (`--mapper`, also as `--mapper=x`; `before`, the words before `--`, tell whether it was
    given there too), or another mapperopt command's (naming which, when `command` names this one): after `--` it
    would go to the application, which ignores it.

    Raises:
        MapperoptError: naming the flag, with the application's closest flag or where the option goes.
    """
    flags = {**APP_FLAGS[app], **_MAPPER_FLAGS}
    words = [str(a) for a in args]
    k = 0
    while k < len(words):
        word = words[k]
        k += 1 + flags.get(word, False)  # and its value
        if word in flags or ":" in word or word in REALM_PLAIN_FLAGS or not re.match(r"--?[A-Za-z]", word):
            continue
        name = word.split("=", 1)[0] if word.startswith("--") else word  # `--mapper=x`
        if name in options:
            twice = any(w == name or w.startswith(f"{name}=") for w in before)
            raise UsageError(f"{name} after `--` goes to {app}, not to mapperopt",
                             hint=f"drop the one after `--`: {name} is given before it too" if twice
                             else f"give {name} before `--`")
        near = closest(word, flags)
        if command is not None and word.startswith("--"):
            from mapperopt.options import elsewhere

            if (said := elsewhere(name, command)) is not None:  # `-- --mapper x` was "did you mean -mapper?"
                mean = f"; or did you mean {app}'s {near}?" if near in APP_FLAGS[app] else ""
                raise UsageError(f"{name} after `--` goes to {app}, not to mapperopt", hint=said + mean)
        # another benchmark's flag (`-reduce` to johnson) leaves the problem as it is; a misspelt one does not
        others = sorted(a for a, f in APP_FLAGS.items() if word in f)
        effect = f"(a flag of {', '.join(others)})" if others else "and run another problem"
        raise UsageError(f"{app} takes no flag {word} (after `--`): it would ignore it {effect}",
                         hint=(f"did you mean {near}? " if near else "")
                         + f"{app}'s flags: {' '.join(APP_FLAGS[app])}; Legion's and Realm's pass through")


@dataclass(frozen=True)
class SizeConfig:
    """One problem size of a benchmark.

    Attributes:
        name: "ci", "small", "gpu", ...
        args: the application's flags and values, in order, e.g. {"-p": "4", "-l": "3"}.
        cpus, util: CPU and utility processors (`-ll:cpu`, `-ll:util`).
        gpus: GPUs used when the caller does not say (`-ll:gpu`); 0 for CPU sizes.
        csize, fsize, zsize: system, framebuffer (per GPU) and zero-copy memory in MiB, or None for Legion's default.
        legion_flags: further Legion/Realm flags, e.g. ("-lg:safe_mapper",).
        timeout_s: wall-clock limit of one execution, seconds.
        min_time_s: minimum measured time of one execution, seconds (0: no minimum).
    """

    name: str
    args: dict[str, str]
    cpus: int
    util: int
    gpus: int
    csize: int | None
    fsize: int | None
    zsize: int | None
    legion_flags: tuple[str, ...]
    timeout_s: float
    min_time_s: float

    def resource_flags(self, cpus: int, gpus: int) -> list[str]:
        """The Legion resource flags for a run with `cpus` CPU and `gpus` GPU processors."""
        values = {"cpus": cpus, "util": self.util, "csize": self.csize, "gpus": gpus,
                  "fsize": self.fsize, "zsize": self.zsize}
        flags = []
        for key, flag in RESOURCE_FLAGS.items():
            if values[key] is None or (gpus == 0 and (key in GPU_ONLY or key == "gpus")):
                continue
            flags += [flag, str(values[key])]
        return flags

    def app_args(self, cpus: int, gpus: int) -> dict[str, str]:
        """The application's flags for a run with `cpus` CPU and `gpus` GPU processors: `{procs}` in a value
        becomes the processor count the tasks run on (`gpus`, or `cpus` when the run uses no GPU)."""
        procs = str(gpus or cpus)
        return {flag: value.replace(PROCS, procs) for flag, value in self.args.items()}


@dataclass(frozen=True)
class BenchConfig:
    """A benchmark's configuration, parsed from `configs/<app>.yaml`.

    Attributes:
        app: the benchmark's name, also the folder `benchmarks/legion/<app>/` and the binary's name.
        expert: file name of the expert mapper (DSL) in `configs/`.
        description: file name of the stored application description in `configs/`.
        metric: the result-line field that is the figure of merit (larger is better).
        unit: its unit, as the application prints it.
        iterations_flag: the application flag holding the timed iteration count (scaled to reach min_time_s).
        sizes: the sizes by name.
        path: the file it was read from.
    """

    app: str
    expert: str
    description: str
    metric: str
    unit: str
    iterations_flag: str
    sizes: dict[str, SizeConfig]
    path: str

    def size(self, name: str) -> SizeConfig:
        """The size called `name`.

        Raises:
            MapperoptError: no such size.
        """
        if name not in self.sizes:
            if self.path == "--app":  # `--app 'CMD ARGS'`: one size, whose arguments are the command's
                hint = ("the command's arguments are size ci's: change them, or give more after `--`; for sizes of "
                        "your own, write an application file (docs/own-app.md)")
            elif self.expert:  # a benchmark: its configuration belongs to the installed package, not to the user
                shown = self.sizes.get("small") or next(iter(self.sizes.values()))
                flags = " ".join(f"{k} {v}" for k, v in shown.args.items())
                hint = (f"pick one of them, e.g. --size {shown.name}; for another problem, give {self.app}'s flags "
                        f"after `--`, which replace the size's (size {shown.name}: {flags})")
            else:
                hint = f"add it to the application file {self.path}"
            raise UsageError(f"{self.app} has no size '{name}'; sizes: {', '.join(self.sizes)}", hint=hint)
        return self.sizes[name]

    @property
    def expert_path(self) -> Path:
        """The expert mapper's file, beside this configuration."""
        return Path(self.path).with_name(self.expert)

    def expert_dsl(self) -> str:
        """The expert mapper's DSL text.

        Raises:
            MapperoptError: the file is missing.
        """
        return _config_text(self.expert, f"the expert mapper of {self.app}")

    def stored_description(self) -> dict:
        """The application description kept in `configs/` (docs/dsl-reference.md §12).

        Raises:
            MapperoptError: the file is missing.
        """
        return json.loads(_config_text(self.description, f"the stored description of {self.app}"))


def _config_text(name: str, what: str) -> str:
    path = resources.files("mapperopt.configs") / name
    if not path.is_file():
        raise MapperoptError(f"{what} ({name}) is missing from the configs folder")
    return path.read_text()


def known_benchmarks() -> list[str]:
    """Names of the benchmarks that have a configuration, sorted."""
    return sorted(p.name[:-5] for p in resources.files("mapperopt.configs").iterdir() if p.name.endswith(".yaml"))


def _require(data: dict, key: str, kind: type | tuple, where: str):
    if key not in data:
        raise MapperoptError(f"{where}: '{key}' is missing")
    if not isinstance(data[key], kind) or isinstance(data[key], bool):
        raise MapperoptError(f"{where}: '{key}' must be {getattr(kind, '__name__', kind)}, got {data[key]!r}")
    return data[key]


def _optional_int(data: dict, key: str, where: str, default: int | None = None) -> int | None:
    return _require(data, key, int, where) if key in data else default


# In a size's argument values, this stands for the application's source folder (`benchmarks/legion/<app>`), so that
# input files shipped beside the sources (e.g. Pennant's decks) are found wherever the package is installed.
APP_DIR = "{app_dir}"
# In a size's argument values, this stands for the run's processor count (its GPUs, else its CPUs), so that a
# decomposition can follow the machine: one Pennant piece per GPU keeps every GPU busy on any count.
PROCS = "{procs}"


def _parse_size(name: str, data: dict, iterations_flag: str, where: str, app_dir: Path) -> SizeConfig:
    where = f"{where}: size '{name}'"
    if not isinstance(data, dict):
        raise MapperoptError(f"{where} must be a mapping")
    unknown = set(data) - {"args", "cpus", "util", "gpus", "csize", "fsize", "zsize", "legion_flags", "timeout_s",
                           "min_time_s"}
    if unknown:
        raise MapperoptError(f"{where}: unknown keys {sorted(unknown)}")
    args = _require(data, "args", dict, where)
    for flag in args:
        if not str(flag).startswith("-") or str(flag).startswith(("-ll:", "-lg:")):
            raise MapperoptError(f"{where}: '{flag}' is not an application flag (Legion flags go in legion_flags)")
    if iterations_flag not in args:
        raise MapperoptError(f"{where}: args must set the iterations flag '{iterations_flag}'")
    flags = data.get("legion_flags", [])
    if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
        raise MapperoptError(f"{where}: 'legion_flags' must be a list of strings")
    size = SizeConfig(
        name=name, args={str(k): str(v).replace(APP_DIR, str(app_dir)) for k, v in args.items()},
        cpus=_require(data, "cpus", int, where), util=_optional_int(data, "util", where, 1),
        gpus=_optional_int(data, "gpus", where, 0), csize=_optional_int(data, "csize", where),
        fsize=_optional_int(data, "fsize", where), zsize=_optional_int(data, "zsize", where),
        legion_flags=tuple(flags), timeout_s=float(_require(data, "timeout_s", (int, float), where)),
        min_time_s=float(_require(data, "min_time_s", (int, float), where)))
    if size.cpus < 1 or size.util < 0 or size.gpus < 0 or size.timeout_s <= 0 or size.min_time_s < 0:
        raise MapperoptError(f"{where}: needs cpus >= 1, util >= 0, gpus >= 0, timeout_s > 0 and min_time_s >= 0")
    return size


TESTS_SIZE = "ci"  # the sizes' default (`--size`), the one the tests run: tiny, a mapper changes little there


def size_descriptions(config: BenchConfig) -> dict[str, str]:
    """What `configs/<app>.yaml` says of each of its sizes: the comment on the size's own line (`  small:   # ...`),
    by size name; empty for a user's program or a file without such comments."""
    if config.path == "--app" or not Path(config.path).is_file():
        return {}
    found, inside = {}, False
    for line in Path(config.path).read_text().splitlines():
        if not line.startswith(" "):
            inside = line.split("#")[0].strip() == "sizes:"
        elif inside and (m := re.match(r"^  ([A-Za-z0-9_-]+):\s*#\s*(.+?)\s*$", line)):
            found[m.group(1)] = m.group(2)
    return found


def larger_size(app: object, size: str | None) -> str:
    """The advice "a larger --size (S, ...)" for more work per execution of benchmark `app` at `size`: the sizes after
    it in its configuration that run on this machine (a size with GPUs only where an NVIDIA driver is), "" where none
    does (then the advice names the other remedies alone); the plain advice for a program whose sizes are unknown."""
    if app is None:
        return "a larger --size"
    try:
        config = load_config(app)  # a user's program: its own (`UserApp`), or a name that is no benchmark's
    except MapperoptError:
        return "a larger --size"
    names = list(config.sizes)
    if size not in names:
        return "a larger --size"
    gpu = None
    here = []
    for name in names[names.index(size) + 1:]:
        if config.sizes[name].gpus:
            gpu = toolchain.has_cuda_driver() if gpu is None else gpu
            if not gpu:
                continue
        here.append(name)
    return f"a larger --size ({', '.join(here)})" if here else ""


@lru_cache(maxsize=None)
def load_config(app: str) -> BenchConfig:
    """Read and check `configs/<app>.yaml`.

    `app` may also be a user's program (`userapp.UserApp`): its sizes from the application file.

    Raises:
        MapperoptError: unknown benchmark, or a malformed configuration (the message names the key).
    """
    if not isinstance(app, str):  # a user's program; not imported to ask: a cached `compile --bench` calls this
        return app.config
    require_app(app)
    path = resources.files("mapperopt.configs") / f"{app}.yaml"
    where = f"configs/{app}.yaml"
    try:
        # libyaml's parser where PyYAML has it: a cached `compile --bench` reads this file before answering
        data = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise MapperoptError(f"{where} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise MapperoptError(f"{where} must be a mapping")
    if data.get("app") != app:
        raise MapperoptError(f"{where}: 'app' must be '{app}', got {data.get('app')!r}")
    iterations_flag = _require(data, "iterations_flag", str, where)
    sizes = _require(data, "sizes", dict, where)
    return BenchConfig(
        app=app, expert=_require(data, "expert", str, where), description=_require(data, "description", str, where),
        metric=_require(data, "metric", str, where), unit=_require(data, "unit", str, where),
        iterations_flag=iterations_flag,
        sizes={name: _parse_size(name, body, iterations_flag, where, _sources_dir(app))
               for name, body in sizes.items()},
        path=str(path))


def _sources_dir(name: str) -> Path:
    return Path(str(resources.files("mapperopt.benchmarks") / "legion" / name))


def require_app(name: str) -> None:
    """Raises MapperoptError naming the applications there are, unless `name` is one."""
    # Only configured benchmarks: other folders hold shared code (common, the GEMM layer) or mapperopt's own
    # machine probe, which are not applications.
    if name not in known_benchmarks():
        close = closest(name, known_benchmarks(), cutoff=0.7)
        hint = f"did you mean '{close}'?" if close else None
        if name.endswith(".dsl"):  # a mapper file, its option forgotten
            quoted = shlex.quote(name)
            hint = (f"{name} is a mapper file: give it with `--mapper {quoted}` (run) or `--start {quoted}` (tune, "
                    "compare), and the program as BENCH or with --app")
        elif os.path.isfile(name):  # --app forgotten
            quoted = shlex.quote(name)
            args = f"; with its arguments in quotes: `--app '{name} -n 100'`" if os.access(name, os.X_OK) else ""
            # the program's application file, beside it: the program alone is run unverified, by its wall time
            yaml = os.path.normpath(os.path.join(os.path.dirname(name), "mapperopt.yaml"))
            with_file = (f"`--app {shlex.quote(yaml)}`, the application file beside it, which keeps its verification "
                         f"and metric; or the program alone, " if os.path.isfile(yaml)
                         and not os.path.samefile(yaml, name) else "")
            hint = f"{name} is a file here: give your own program with --app ({with_file}`--app {quoted}`{args})"
        raise UsageError(f"unknown benchmark '{name}'; known: {', '.join(known_benchmarks()) or 'none'}",
                         hint=hint)


def build_app(name: str, cuda: str = "auto") -> Path:
    """Build (or find in the build cache) the application `benchmarks/legion/<name>/`: its `*.cc` (except test
    mappers, `*_mapper.cc`) and, with CUDA, `*.cu` files, with `benchmarks/legion/common` on the include path.

    Args:
        name: the application's folder name, e.g. "circuit".
        cuda: "on", "off" or "auto" (toolchain.cuda_enabled): whether to build the CUDA variants.

    Returns:
        The path of the executable.

    Raises:
        MapperoptError: no such benchmark (configs/<name>.yaml), or it has no sources.
        ToolchainError, BuildError: from the build (BuildError.log has the compiler output).
    """
    require_app(name)
    folder = _sources_dir(name)
    # `*_mapper.cc` files are test mappers that tests build as separate libraries, not part of the application.
    sources = sorted(p for p in folder.glob("*.cc") if not p.name.endswith("_mapper.cc")) + sorted(folder.glob("*.cu"))
    if not any(s.suffix == ".cc" for s in sources):
        raise MapperoptError(f"benchmarks/legion/{name} has no C++ sources")
    include_dirs = [_sources_dir("common")]
    use_cuda = toolchain.cuda_enabled(cuda)
    extra_cxx: list[str] = []
    extra_link: list[str] = []
    if name in LAYERS:
        layer = _sources_dir(LAYERS[name])
        sources += sorted(layer.glob("*.cc")) + sorted(layer.glob("*.cu"))
        include_dirs.append(layer)
        blas = toolchain.find_blas()
        extra_cxx, extra_link = blas.cxx_flags(), blas.link_flags()
        cublas = toolchain.find_cublas() if use_cuda else None
        if use_cuda and cublas is None:
            if cuda == "on":
                raise MapperoptError(f"--cuda on, but the CUDA toolkit of {toolchain.nvcc()} has no cuBLAS, which "
                                     f"{name}'s GPU leaf needs")
            use_cuda = False  # "auto": a toolkit without cuBLAS builds the CPU variants only
        if cublas is not None:
            extra_cxx += [f"-I{cublas[0]}"]
            extra_link += [f"-L{cublas[1]}", f"-Wl,-rpath,{cublas[1]}", "-lcublas"]
    return toolchain.build(name, sources, include_dirs=include_dirs, cuda=use_cuda, extra_cxx=extra_cxx,
                           extra_link=extra_link)


@lru_cache(maxsize=None)
def _describe(name: str, exe: str, args: tuple[str, ...]) -> str:
    """What `exe ARGS --describe` prints (application `name`).

    Raises:
        MapperoptError: it timed out or failed: the message names the application and gives why
            (`harness.failure_line`), the hint its command.
    """
    from mapperopt.benchmarks.harness import failure_line, run_in_group

    cmd = [exe, *args, "--describe"]
    hint = f"its command: {shlex.join(cmd)}"
    try:
        done = run_in_group(cmd, DESCRIBE_TIMEOUT_S, env=toolchain.runtime_env())  # a hang dies with mapperopt
    except subprocess.TimeoutExpired:
        raise MapperoptError(f"{name} could not describe the run (`{name} ... --describe` did not finish within "
                             f"{DESCRIBE_TIMEOUT_S} s)", hint=hint) from None
    if done.returncode != 0:
        reason = failure_line(done.stderr) or "nothing on its standard error"
        raise MapperoptError(f"{name} could not describe the run (`{name} ... --describe` failed, "
                             f"{exit_status(done.returncode)}): {reason}", hint=hint)
    return done.stdout


def describe_app(app: str, size: str = "ci", cpus: int | None = None, gpus: int | None = None,
                 extra_args: tuple[str, ...] = (), timeout_s: float | None = None, refresh: bool = False,
                 tunables: str = "", memory: dict[str, int] | None = None) -> dict:
    """The application description (docs/dsl-reference.md §12) that `<app> <size args> --describe` prints for a
    run on `cpus` CPU and `gpus` GPU processors (default: the size's; `-ll:cpu N` and `-ll:gpu N` among `extra_args`
    replace them, `processor_counts`): launch domains may follow the processor
    count (`{procs}` in the size's arguments, COSMA's grid) and the run's own flags (`extra_args`, what follows
    `--`: `-p 8` replaces the size's `-p`, as in the run).

    Builds the application if needed; cached per executable, size and counts within the process.

    For a user's program (`userapp.UserApp`), the description discovered by running it with the same counts and
    flags (`userapp.discover`, killed after `timeout_s`; with `refresh`, not from its cache; answering the
    `tunables` DSL statements give), with the run's `memory` sizes in MiB by "csize", "fsize", "zsize" (default: the
    size's).

    Raises:
        MapperoptError: unknown benchmark or size, or the application failed to describe itself.
    """
    from mapperopt.benchmarks.userapp import UserApp, discover, discovered_as

    sz = load_config(app).size(size)
    # `-- -ll:gpu N` is the run's count, as in the run itself (`processor_counts`): check and explain agree with it.
    cpus, gpus = processor_counts(sz.cpus if cpus is None else cpus, sz.gpus if gpus is None else gpus, extra_args)
    if isinstance(app, UserApp):
        # Which tasks ran may follow the flags: `check` names them for a task the program did not launch.
        desc = {**discover(app, size, cpus, gpus, extra_args, refresh=refresh, timeout_s=timeout_s,
                           tunables=tunables, memory=memory),
                "discovered_as": discovered_as(app, size, extra_args)}
        # The program's own mapper answers the tunables the DSL does not: `check` must know.
        return {**desc, "keep_app_mapper": True} if app.keep_app_mapper else desc
    exe = build_app(app)
    merged, rest = _app_args(sz.app_args(cpus, gpus), extra_args)
    args = [*(a for flag, value in merged.items() for a in (flag, value)), *rest]
    # The counts reach the application's own flag parser only: --describe prints and exits before Legion starts.
    counts = ("-ll:cpu", str(cpus), *(("-ll:gpu", str(gpus)) if gpus else ()))
    text = _describe(app, str(exe), (*args, *counts, "-ll:util", "1", "-logfile", "stderr"))
    try:
        desc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MapperoptError(f"{app} --describe printed no valid JSON ({exc}): {text[:200]!r}") from None
    if desc.get("schema") != "mapperopt.app/1":
        raise MapperoptError(f"{app} --describe printed schema {desc.get('schema')!r}, expected 'mapperopt.app/1'")
    return desc


def _machine_flags(flags: list[str]) -> tuple[str, ...]:
    """The flags among a run's that change its machine beyond the CPU and GPU counts and memory sizes: those that
    create RDMEM and SOCKMEM (`-ll:rsize N`, `-ll:nsize N`) and the IO, Python, OpenMP and utility processor counts
    (`-ll:io N`, `-ll:py N`, `-ll:omp N`, `-ll:util N`). The machine a mapper is checked against is probed with them,
    so that a mapper placing data or tasks only there is an error exactly when the run has none."""
    out: list[str] = []
    for k, flag in enumerate(flags[:-1]):
        if flag in ("-ll:rsize", "-ll:nsize", "-ll:io", "-ll:py", "-ll:omp", "-ll:util"):
            out += [flag, str(flags[k + 1])]
    return tuple(out)


def _app_args(size_args: dict[str, str], extra_args) -> tuple[dict[str, str], list[str]]:
    """Merge `extra_args` into the size's flags: a flag the size sets takes the new value; others pass through."""
    args, rest = dict(size_args), []
    extra = [str(a) for a in extra_args]
    i = 0
    while i < len(extra):
        if extra[i] in args and i + 1 < len(extra):
            args[extra[i]] = extra[i + 1]
            i += 2
        else:
            rest.append(extra[i])
            i += 1
    return args, rest


def processor_counts(cpus: int, gpus: int, extra_args) -> tuple[int, int]:
    """(CPU, GPU) processors per node a run gets: `cpus` and `gpus`, unless the flags after `--` (`extra_args`) set
    `-ll:cpu` or `-ll:gpu`, whose last value then takes their place on the command line (`_override_flags`). What
    the run records and prints is what Legion runs with.

    Raises:
        MapperoptError: such a flag's value is not a whole number.
    """
    extra = [str(a) for a in extra_args]
    counts = {"-ll:cpu": cpus, "-ll:gpu": gpus}
    for flag, value in zip(extra, extra[1:]):
        if flag in counts:
            if not value.isdigit():
                raise UsageError(f"{flag} after `--` needs a whole number of processors, got {value!r}")
            counts[flag] = int(value)
    return counts["-ll:cpu"], counts["-ll:gpu"]


# A resource option of run, tune and compare -> (its size key, what it sets, the unit of its value).
_RESOURCE_OPTIONS = {"--cpus": ("cpus", "CPU counts", "CPU"), "--gpus": ("gpus", "GPU counts", "GPU"),
                     "--csize": ("csize", "system memory sizes", "MiB"),
                     "--fsize": ("fsize", "framebuffer memory sizes", "MiB"),
                     "--zsize": ("zsize", "zero-copy memory sizes", "MiB")}


def require_one_value(bench, extra_args, **given: int | None) -> None:
    """Refuses a resource option (`given` by size key: cpus, gpus, csize, fsize, zsize; None: not given) that the
    Legion flag it sets (`RESOURCE_FLAGS`) contradicts where the option cannot show it:
    - among the flags after `--` (`extra_args`): the flag takes the option's place on the command line
      (`processor_counts`, `_override_flags`), unseen;
    - in the command line of a user's program (`bench`, a `userapp.UserApp`; `--app './prog -ll:cpu 2'`): the
      option replaces it, unseen.
    Memory sizes compare as Realm reads the flag (`-ll:fsize 2g` is --fsize 2048).

    Raises:
        MapperoptError: both values, and that one of them is to be given; a count flag after `--` that is not a
            whole number (`processor_counts`); `-ll:csize 0` or `-ll:cpu 0` there (their options take 1 or more);
            more processors than Realm numbers on a node, or more system memory than this machine has
            (`_within_realm`).
    """
    from mapperopt.benchmarks.userapp import UserApp
    from mapperopt.descriptions import realm_size

    processor_counts(-1, -1, extra_args)  # a count flag's value is a whole number
    words = [str(a) for a in extra_args]
    for flag, value in zip(words, words[1:]):  # held to --csize's and --cpus' ranges: Legion starts, the run fails
        if flag == RESOURCE_FLAGS["csize"] and realm_size(value) == 0:
            raise UsageError(f"`{flag} {value}` after `--` asks for no system memory: --csize takes 1 MiB or more",
                             hint="give 1 or more, or leave the flag out (the size's)")
        if flag == RESOURCE_FLAGS["cpus"] and int(value) == 0:
            raise UsageError(f"`{flag} {value}` after `--` asks for no CPU: --cpus takes 1 or more",
                             hint="give 1 or more, or leave the flag out (the size's)")
    places = [("after `--`", words)]
    if isinstance(bench, UserApp):
        places.append(("in --app's command", [str(a) for words in bench.args.values() for a in words]))
    for option, (key, what, unit) in _RESOURCE_OPTIONS.items():
        if given.get(key) is None:
            continue
        flag = RESOURCE_FLAGS[key]
        for where, words in places:
            values = [v for f, v in zip(words, words[1:]) if f == flag]
            if not values:
                continue
            amount = realm_size(values[-1]) if unit == "MiB" else int(values[-1])
            if amount is None or amount == (given[key] << 20 if unit == "MiB" else given[key]):
                continue  # not a size: Realm says so
            winner, value = ("the flag after `--`", values[-1]) if where == "after `--`" else (option, str(given[key]))
            if unit != "MiB":
                value = f"{value} {unit}{'s' * (value != '1')} per node"
            elif value.isdigit():
                value += " MiB"
            raise UsageError(f"{option} {given[key]} and `{flag} {values[-1]}` {where} ask for different {what}",
                             hint=f"give one of them ({winner} would win: {value})")
    _within_realm(given, words)


REALM_PROCS_PER_NODE = 4096  # a Realm processor ID numbers the processors of a node in 12 bits


def _within_realm(given: dict, words: list[str]) -> None:
    """Refuses processor counts (`given` options, or the flags after `--`, `words`) that Realm cannot number (it fails
    an assertion) and a system memory larger than this machine's (the run dies of a segmentation fault)."""
    from mapperopt.descriptions import realm_size

    cpus, gpus = processor_counts(given.get("cpus") or 0, given.get("gpus") or 0, words)
    if cpus + gpus + 1 > REALM_PROCS_PER_NODE:  # + the utility processor
        raise MapperoptError(f"{cpus} CPUs and {gpus} GPUs per node: Realm numbers at most {REALM_PROCS_PER_NODE} "
                             "processors on a node, the utility processor among them",
                             hint="give fewer (Legion would stop on an assertion)")
    from mapperopt.toolchain import max_procs_per_node

    utils = [int(v) for f, v in zip(words, words[1:]) if f == "-ll:util" and v.isdigit()]
    util = utils[-1] if utils else 1  # mapperopt's runs and probe give -ll:util 1
    limit = max_procs_per_node()
    if limit is not None and cpus + gpus + util > limit:
        raise MapperoptError(f"{cpus} CPUs and {gpus} GPUs per node: this Legion build runs at most {limit} processors "
                             f"on a node, the {util} utility processor{'s' * (util != 1)} among them (its "
                             "LEGION_MAX_NUM_PROCS, in legion_defines.h)",
                             hint=f"give at most {max(limit - util - gpus, 0)} CPUs with {gpus} GPUs (Legion would "
                                  "stop as it starts), or build Legion with a larger LEGION_MAX_NUM_PROCS")
    flag = RESOURCE_FLAGS["csize"]
    sizes = [(f"--csize {given['csize']} MiB", given["csize"] << 20)] if given.get("csize") else []
    sizes += [(f"{flag} {v} MiB" if v.isdigit() else f"{flag} {v}", realm_size(v) or 0)
              for f, v in zip(words, words[1:]) if f == flag]
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for said, size in sizes:
        if size > memory:
            raise MapperoptError(f"{said} is more than this machine's memory ({memory >> 20} MiB)",
                                 hint="give less (the run would crash as it starts)")


def require_gpu_driver(gpus: int, size: str, size_gpus: int, extra_args) -> None:
    """Refuse `gpus` > 0 GPU processors (`processor_counts`) on a machine without an NVIDIA driver, naming what asked
    for them: `-ll:gpu N` among `extra_args` (the flags after `--`), the size `size` (whose count is `size_gpus`) or
    --gpus, and hinting what to change there.

    Raises:
        MapperoptError: GPUs asked for and no NVIDIA driver found.
    """
    if not gpus or toolchain.has_cuda_driver():
        return
    extra = [str(a) for a in extra_args]
    if "-ll:gpu" in extra[:-1]:
        source, hint = f"`-ll:gpu {gpus}` after `--`", f"remove `-ll:gpu {gpus}` after `--` (or give `-ll:gpu 0`)"
    elif gpus == size_gpus:
        source, hint = f"size '{size}'", "give --gpus 0 or a size without GPUs"
    else:
        source, hint = f"--gpus {gpus}", "give --gpus 0"
    raise MapperoptError(f"no GPU on this machine: {source} asks for {gpus} GPU{'s' if gpus != 1 else ''}, but no "
                         "NVIDIA driver was found", hint=f"{hint}, or run on a machine with NVIDIA GPUs")


def _override_flags(pairs: list[str], passthrough: list[str]) -> tuple[list[str], list[str]]:
    """Flags given after `--` that the harness also sets as flag-value `pairs` (the resource flags, e.g.
    `-ll:csize 4096`) replace the harness's value instead of being overridden by it: returns (pairs, passthrough)
    with those flags moved into `pairs`."""
    values, rest = _app_args(dict(zip(pairs[::2], pairs[1::2])), passthrough)
    return [a for kv in values.items() for a in kv], rest
