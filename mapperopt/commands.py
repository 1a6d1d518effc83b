"""Toolchain commands: `mapperopt build`, `mapperopt machine`, `mapperopt doctor`."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import click

from mapperopt import toolchain
from mapperopt.errors import MapperoptError, ToolchainError, UsageError, install_extra
from mapperopt.files import refused_write
from mapperopt.options import ListsBenchmarks, errors_as_json
from mapperopt.optimizer.base import OPTIMIZERS
from mapperopt.probe import probe_flags, probe_json


def _format_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


# The Legion flags of a run that change its machine (`mapperopt machine -- FLAGS`).
MACHINE_FLAGS = {"-ll:cpu", "-ll:gpu", "-ll:io", "-ll:py", "-ll:omp", "-ll:util", "-ll:csize", "-ll:fsize",
                 "-ll:zsize", "-ll:rsize", "-ll:nsize"}


@click.command()
@click.option("--cpus", type=click.IntRange(min=1), default=None,
              help="CPU processors per node (-ll:cpu) [default: 1].")
@click.option("--gpus", type=click.IntRange(min=0), default=None, help="GPUs per node (-ll:gpu) [default: 0].")
@click.option("--json", "as_json", is_flag=True, help="Print the machine description JSON instead of tables.")
@click.argument("flags", nargs=-1, type=click.UNPROCESSED, metavar="[-- FLAGS]")
def machine(cpus, gpus, as_json, flags):
    """Show the machine as Legion sees it: processors and memories per node.

    Runs a real Legion program (`probe`). The JSON (`--json`) is the machine description used by
    `mapperopt check/explain` and the optimizer. FLAGS after `--` are a run's Legion flags that shape its machine,
    as check and explain take them: processor counts (-ll:cpu, -ll:gpu, -ll:io, -ll:py, -ll:util) and
    memory sizes in MiB (-ll:csize, -ll:fsize, -ll:zsize, -ll:rsize, -ll:nsize); -ll:cpu and -ll:gpu there must
    agree with --cpus and --gpus where both are given, as in `run`. -ll:omp only with a Legion built with OpenMP
    (MAPPEROPT_LEGION_PREFIX): the legate wheel's has no OMP processors.
    """
    from rich.console import Console
    from rich.table import Table

    from mapperopt.benchmarks.apps import processor_counts, require_one_value

    flags = [str(f) for f in flags]
    with errors_as_json(as_json, indent=2):  # an error: on stdout too, as one object
        for flag, value in zip(flags[::2], flags[1::2] + [None]):
            if flag not in MACHINE_FLAGS:
                own = flag.split("=", 1)[0] if flag.startswith("--") else flag  # `--gpus=1`
                raise UsageError(f"`{flag}` after `--` does not change the machine: `machine` takes only "
                                 f"{', '.join(sorted(MACHINE_FLAGS))}, each with a value",
                                 hint=f"give {own} before `--`" if own in ("--cpus", "--gpus", "--json")
                                 else "give the other flags to `mapperopt run`")
            if value is None or not value.isdigit():
                raise UsageError(f"`{flag}` after `--` needs a whole number, got {value!r}")
        require_one_value(None, flags, cpus=cpus, gpus=gpus)  # an option and a flag that contradict it: as in a run
        cpus, gpus = processor_counts(cpus, gpus, flags)
        rest = tuple(a for kv in zip(flags[::2], flags[1::2]) if kv[0] not in ("-ll:cpu", "-ll:gpu") for a in kv)
        data = probe_json(cpus, gpus, machine_flags=rest)
    flags = probe_flags(cpus, gpus, rest)
    if as_json:
        click.echo(json.dumps({**data, "legion_flags": flags}, indent=2))
        return
    console = Console()
    title = f"Processors per node ({data['nodes']} node{'s' if data['nodes'] != 1 else ''})"
    procs = Table(title=title, min_width=len(title) + 4)
    procs.add_column("kind")
    procs.add_column("count per node", justify="right")
    for kind, counts in data["processors"].items():
        procs.add_row(kind, ", ".join(map(str, counts)))
    mems = Table(title="Memories")
    for column in ("kind", "node", "capacity", "processors with affinity"):
        mems.add_column(column)
    for mem in data["memories"]:
        affinity = "; ".join(f"{k} {','.join(map(str, v))}" for k, v in mem["procs"].items())
        mems.add_row(mem["kind"], str(mem["node"]), _format_bytes(mem["capacity"]), affinity)
    console.print(procs)
    console.print(mems)
    console.print(_sizes_note(flags, gpus), markup=False, highlight=False)


# A memory size's Legion flag -> the memory it sizes (`machine` names those it leaves to Legion's defaults).
SIZE_FLAGS = {"-ll:csize": "SYSMEM", "-ll:fsize": "FBMEM", "-ll:zsize": "ZCMEM"}


def _sizes_note(flags: list[str], gpus: int | None) -> str:
    """What `machine` says under its tables: the Legion flags it probed with (`flags`), the memories whose sizes are
    Legion's defaults (FBMEM and ZCMEM only with GPUs), and that a benchmark's run sets its size's: the memories
    `check --bench` counts may differ from those shown."""
    unset = [flag for flag in SIZE_FLAGS if flag not in flags and (gpus or flag == "-ll:csize")]
    kinds, names = ", ".join(SIZE_FLAGS[f] for f in unset), ", ".join(unset)
    default = (f"; {kinds} at Legion's default size{'s' * (len(unset) > 1)} (no {names} given)" if unset else "")
    return (f"Legion flags: {' '.join(flags)}{default}. A benchmark's run asks for its size's memory sizes (run's "
            f"--csize, --fsize and --zsize change them): `{toolchain.invoked_as()} check FILE --bench NAME` names the "
            "machine that run sees.")


@click.command(cls=ListsBenchmarks)
@click.argument("benches", nargs=-1)
@click.option("--cuda", type=click.Choice(["on", "off", "auto"]), default="auto", show_default=True,
              help="Build CUDA variants: on, off, or auto (when nvcc is found).")
def build(benches, cuda):
    """Build benchmark applications (all when none is named). Builds are cached and incremental."""
    from mapperopt.benchmarks import build_app, known_benchmarks, require_app
    from mapperopt.benchmarks.apps import LAYERS

    for name in benches:  # all names first: a typo is not found only after the builds before it
        require_app(name)
    for name in benches or known_benchmarks():
        click.echo(f"{name}: {build_app(name, cuda=cuda)}")
        # (--cuda on refuses it) the GEMMs' GPU leaf calls cuBLAS: without it they get no CUDA variant
        if name in LAYERS and cuda == "auto" and toolchain.cuda_enabled(cuda) and toolchain.find_cublas() is None:
            click.echo(f"note: {name}: built without CUDA variants: the CUDA toolkit of {toolchain.nvcc()} has no "
                       f"cuBLAS (`{toolchain.command('doctor')}`)", err=True)


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True
    present: bool = False  # there (installed, configured) but failing: FAILED, not MISSING


PYTHON_PACKAGES = [("lark", "lark"), ("jinja2", "jinja2"), ("numpy", "numpy"), ("click", "click"),
                   ("yaml", "pyyaml"), ("rich", "rich"), ("matplotlib", "matplotlib"), ("filelock", "filelock")]


def _version(cmd: list[str], line: int = 0) -> str:
    """One line (`line`: its index, -1 for the last) of what `cmd` prints."""
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"({exc})"
    lines = (out.stdout or out.stderr).strip().splitlines()
    return lines[max(line, -len(lines))] if lines else ""  # a tool that says less: its first line


def _as_error(exc: Exception) -> MapperoptError:
    """`exc` as the command line would show it (a write the file system refused names the file and the cache)."""
    if isinstance(exc, MapperoptError):
        return exc
    return refused_write(exc) or MapperoptError(f"{exc.filename or 'a file'}: {exc.strerror or exc}")


def _cache_check() -> Check:
    """Whether the build cache can be written to (every build and probe writes there)."""
    try:
        with tempfile.NamedTemporaryFile(dir=toolchain.cache_dir(), prefix=".doctor-"):
            return Check("build cache", True, f"writable: {toolchain.cache_path()}")
    except (MapperoptError, OSError) as exc:
        error = _as_error(exc)
        return Check("build cache", False, error.message, error.hint or "", present=True)


def run_checks(legion_prefix: str | None = None) -> list[Check]:
    """Check everything mapperopt needs; each failed check says what to do."""
    checks = []
    missing = [pip for module, pip in PYTHON_PACKAGES if importlib.util.find_spec(module) is None]
    checks.append(Check("Python packages", not missing,
                        "all present" if not missing else "missing: " + ", ".join(missing),
                        f"pip install {' '.join(missing)}" if missing else ""))
    extras: dict[str, tuple[list[str], list[str]]] = {}  # pip extra -> (its optimizers, its missing packages)
    for name, spec in OPTIMIZERS.items():
        if not spec.extra:
            continue
        optimizers, missing = extras.setdefault(spec.extra, ([], []))
        optimizers.append(name)
        missing += [pip for module, pip in spec.packages
                    if pip not in missing and importlib.util.find_spec(module) is None]
    for extra, (optimizers, missing) in extras.items():
        checks.append(Check(f"Optimizer packages ('{extra}' extra)", not missing,
                            "all present" if not missing else f"missing: {', '.join(missing)} (only --optimizer "
                            f"{' and '.join(optimizers)} need{'s' * (len(optimizers) == 1)} them)",
                            install_extra(extra) if missing else "", required=False))
    checks.append(_cache_check())
    legion = None
    try:
        legion = toolchain.find_legion(legion_prefix)
        checks.append(Check("Legion", True, f"{legion.version} (Realm {legion.realm_version}) at {legion.prefix}"))
    except ToolchainError as exc:
        checks.append(Check("Legion", False, exc.message, exc.hint or ""))
    try:
        compiler = toolchain.cxx()
    except ToolchainError as exc:
        checks.append(Check("C++ compiler", False, exc.message, exc.hint or ""))
    else:
        try:
            version = toolchain.tool_version(compiler).splitlines()
            checks.append(Check("C++ compiler", True, f"{compiler}: {version[0] if version else ''}"))
        except ToolchainError as exc:  # there, but it fails or hangs
            checks.append(Check("C++ compiler", False, exc.message, exc.hint or "", present=True))
    nvcc = toolchain.nvcc()
    checks.append(Check("nvcc (CUDA variants)", nvcc is not None,
                        f"{nvcc}: {_version([nvcc, '--version'], line=-2)}" if nvcc else "not found",
                        "install the CUDA toolkit or set CUDA_HOME (only needed for GPU runs)", required=False))
    if nvcc is not None:  # the GEMMs' GPU leaf calls cuBLAS: without it `build` (--cuda auto) leaves their CUDA out
        from mapperopt.benchmarks.apps import LAYERS

        gemms = list(LAYERS)
        name = "cuBLAS (the GEMMs' CUDA variants)"
        try:
            cublas = toolchain.find_cublas()
        except ToolchainError as exc:  # nvcc does not name its libraries (e.g. TMPDIR missing): say why, go on
            checks.append(Check(name, False, exc.message, exc.hint or "", required=False, present=True))
        else:
            checks.append(Check(name, cublas is not None,
                                f"{cublas[1]}" if cublas else f"not in the CUDA toolkit of {nvcc}: "
                                f"{', '.join(gemms[:-1])} and {gemms[-1]} are built with CPU variants only",
                                "install the toolkit's cuBLAS (cublas_v2.h, libcublas.so), or set CUDA_HOME to a "
                                "toolkit that has it (only needed for the GEMMs' GPU runs)", required=False))
    if toolchain.has_cuda_driver():
        gpus = _version(["nvidia-smi", "-L"])
        checks.append(Check("GPUs and driver", True, f"NVIDIA driver found; {gpus}", required=False))
    else:
        checks.append(Check("GPUs and driver", False, "no NVIDIA driver: Legion will run on CPUs only",
                            "GPU runs need a machine with NVIDIA GPUs and their driver", required=False))
        try:
            checks.append(Check("libcuda.so.1 stand-in", True, f"built in {toolchain.cuda_stub_dir()}"))
        except (MapperoptError, OSError) as exc:  # no C compiler, or a build cache it cannot be written to
            error = _as_error(exc)
            checks.append(Check("libcuda.so.1 stand-in", False, error.message, error.hint or ""))
    if legion is not None and all(c.ok for c in checks if c.required):
        try:
            data = probe_json(legion=legion)
            cores = len(os.sched_getaffinity(0))
            # the probe's count is Realm's default (no -ll:cpu), not this machine's: said, with what runs take
            checks.append(Check("Legion run (probe)", True,
                                f"{data['nodes']} node(s), CPUs {data['processors']['CPU']} (the probe asks for "
                                "Realm's default, 1 CPU processor, and 1 utility processor; this machine gives runs "
                                f"{cores} core{'s' * (cores != 1)}: `run` takes a size's count or --cpus N, `tune` "
                                "and `compare` of a benchmark on CPUs every core less the utility processor's)"))
        except MapperoptError as exc:
            checks.append(Check("Legion run (probe)", False, exc.message.splitlines()[0],
                                f"run `{toolchain.command('machine')}` to see the full error", present=True))
    checks.append(llm_check())
    return checks


def llm_check() -> Check:
    """The language-model endpoint of the environment, asked for one token (with `tune`'s timeout,
    MAPPEROPT_LLM_TIMEOUT, no retry), as `tune` would reach it. Optional while none is configured; a configured one that
    fails is a failed check (`tune` would stop at once)."""
    from mapperopt.optimizer.llm import CONFIGURE, ENV, ChatModel, LLMConfig, ask_one_token, fault_hint

    try:
        config = LLMConfig.from_env()
    except MapperoptError as exc:  # a bad timeout, retry count or cap: `tune` would refuse it too
        return Check("LLM endpoint", False, exc.message, exc.hint or "", present=True)
    if not config.configured:
        return Check("LLM endpoint", False, "none configured: `mapperopt tune` uses the offline rule-based search",
                     f"to use a model, set {CONFIGURE}", required=False)
    if importlib.util.find_spec("openai") is None:
        return Check("LLM endpoint", False, f"{config.base_url or 'the OpenAI API'}: not asked (openai is missing)",
                     install_extra("llm"))
    import openai

    model = ChatModel(dataclasses.replace(config, max_retries=0))
    where = str(model.client.base_url).rstrip("/")
    try:
        ask_one_token(model)
        return Check("LLM endpoint", True, f"{where}: the model {model.model_name} answers ({config.key_note})")
    except MapperoptError as exc:  # ModelError: its hint says what to fix, here without tune's retries
        return Check("LLM endpoint", False, model.calls[-1]["error"],
                     fault_hint(exc.__cause__, doctor=True, config=config) if exc.__cause__ else exc.hint or "",
                     present=True)
    except openai.APIStatusError:  # e.g. 400: the server takes no such request
        return Check("LLM endpoint", False, model.calls[-1]["error"],
                     f"check {ENV['base_url']} (it usually ends in /v1) and {ENV['model']}", present=True)
    finally:
        model.close()


@click.command()
@click.option("--legion", "legion_prefix", default=None, metavar="PREFIX",
              help=f"Check a user-built Legion install instead of the legate wheel (also ${toolchain.PREFIX_ENV}).")
def doctor(legion_prefix):
    """Check that everything mapperopt needs is installed, and say how to fix what is missing."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    checks = run_checks(legion_prefix)
    # The terminal's width, or COLUMNS, as the other commands take it; piped without COLUMNS, wide enough for each
    # check on a line or two (for grep and logs).
    console = Console()
    if not console.is_terminal and not os.environ.get("COLUMNS"):
        console = Console(width=160)
    narrow = console.width < 120  # a fourth column would leave each a few words a line: the fix goes under the detail
    table = Table(title="mapperopt doctor")
    for column in ("check", "status", "detail (→ what to do)") if narrow else ("check", "status", "detail",
                                                                               "what to do"):
        # narrow: the check's name on two lines rather than the detail on twice as many
        table.add_column(column, overflow="fold", max_width=20 if narrow and column == "check" else None)
    for c in checks:
        status = ("[green]ok[/]" if c.ok else "[yellow]optional[/]" if not c.required
                  else "[red]FAILED[/]" if c.present else "[red]MISSING[/]")
        # Escaped: rich would take `[llm]` in `pip install 'mapperopt[llm]'` for markup and drop it.
        detail, fix = escape(c.detail), "" if c.ok else escape(c.fix)
        if narrow:
            table.add_row(escape(c.name), status, f"{detail}\n[bold]→[/] {fix}" if fix else detail)
        else:
            table.add_row(escape(c.name), status, detail, fix)
    console.print(table)
    missing = [c.name for c in checks if c.required and not c.ok and not c.present]
    failed = [c.name for c in checks if c.required and not c.ok and c.present]
    if missing or failed:
        raise MapperoptError("; ".join(f"{word}: {', '.join(names)}"
                                       for word, names in (("missing", missing), ("failed", failed)) if names))


def build_flags(legion: toolchain.Legion) -> tuple[list[str], list[str]]:
    """(compiler flags, linker flags) for building a program of one's own against `legion`, pkg-config style; the
    include folders are Legion's and its mappers' (`default_mapper.h`, which a program's own mapper includes)."""
    cflags = ["-std=c++17", f"-I{legion.include_dir}", f"-I{legion.include_dir / 'mappers'}"]
    libs = toolchain.link_flags(legion)
    stub = toolchain.cuda_stub_dir()
    if stub is not None:  # Legion's library needs libcuda.so.1; without a driver the stand-in resolves it
        libs.append(f"-Wl,-rpath-link,{stub}")
    return cflags, libs


def cmake_snippet(legion: toolchain.Legion) -> str:
    """CMake lines defining the target `mapperopt::legion` (link a program to it to build against `legion`)."""
    cflags, libs = build_flags(legion)
    lib_files = " ".join(f'"{legion.lib_dir}/lib{name}.so"' for name in legion.libs)
    options = " ".join(f'"{flag}"' for flag in libs if flag.startswith("-Wl,"))
    return "\n".join([
        "# The Legion that mapperopt uses (from `mapperopt toolchain --cmake`). Save it beside your CMakeLists.txt",
        f"# (`{toolchain.command('toolchain', '--cmake')} > mapperopt.cmake`; again after reinstalling mapperopt) and, "
        "after project():",
        "#   include(mapperopt.cmake)",
        "#   target_link_libraries(my_app PRIVATE mapperopt::legion)",
        *([f"#   to run the program: {toolchain.env_eval()} first (it puts the libcuda.so.1 stand-in "
           "that Legion's library needs on LD_LIBRARY_PATH)"] if toolchain.cuda_stub_dir() is not None else []),
        "add_library(mapperopt_legion INTERFACE)",
        "add_library(mapperopt::legion ALIAS mapperopt_legion)",
        "target_compile_features(mapperopt_legion INTERFACE cxx_std_17)",
        "target_include_directories(mapperopt_legion INTERFACE "
        + " ".join(f'"{flag[2:]}"' for flag in cflags if flag.startswith("-I")) + ")",
        f"target_link_libraries(mapperopt_legion INTERFACE {lib_files} dl pthread)",
        f"target_link_options(mapperopt_legion INTERFACE {options})",
    ])


def run_environment(legion: toolchain.Legion, mapper_so: Path | None) -> list[tuple[str, str]]:
    """(variable, value) pairs for running a program by hand: Legion's libraries and the libcuda stand-in on
    LD_LIBRARY_PATH, the LD_PRELOAD shim's path in MAPPEROPT_PRELOAD (preload it for the program only, never for the
    whole shell) and the mapper library in MAPPEROPT_MAPPER (None: a placeholder)."""
    from mapperopt.compiler.build import preload_library

    paths = [str(legion.lib_dir)] + ([str(toolchain.cuda_stub_dir())] if toolchain.cuda_stub_dir() else [])
    return [("LD_LIBRARY_PATH", ":".join(paths) + "${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"),
            ("MAPPEROPT_PRELOAD", str(preload_library())),
            ("MAPPEROPT_MAPPER", str(mapper_so) if mapper_so else "<the .so that `mapperopt compile MAPPER.dsl` "
                                                                  "prints>")]


RUN_HINT = ("# run: LD_PRELOAD=$MAPPEROPT_PRELOAD ./my_app ARGS -logfile stderr   (without -logfile stderr a Legion "
            "abort prints nothing; optional: MAPPEROPT_TRACE=trace.jsonl MAPPEROPT_PROFILE=1 "
            "MAPPEROPT_KEEP_APP_MAPPER=1)")


@click.command("toolchain")
@click.option("--cflags", is_flag=True, help="Print only the compiler flags.")
@click.option("--libs", is_flag=True, help="Print only the linker flags.")
@click.option("--cmake", is_flag=True, help="Print only a CMake snippet defining the target mapperopt::legion.")
@click.option("--env", "env_only", is_flag=True, help="Print only the environment for running a program by hand.")
@click.option("--mapper", type=click.Path(exists=True, dir_okay=False), default=None,
              help="With --env (or alone): compile this DSL mapper and name its library in MAPPEROPT_MAPPER.")
def toolchain_cmd(cflags, libs, cmake, env_only, mapper):
    """Build and run your own Legion program against the Legion mapperopt uses.

    `g++ my_app.cc $(mapperopt toolchain --cflags) $(mapperopt toolchain --libs) -o my_app` builds it;
    `eval "$(mapperopt toolchain --env --mapper my.dsl)"` then `LD_PRELOAD=$MAPPEROPT_PRELOAD ./my_app ARGS -logfile
    stderr` runs it with a DSL mapper (without `-logfile stderr` a Legion abort prints nothing). Without options,
    prints everything.
    """
    legion = toolchain.find_legion()
    compiler_flags, linker_flags = build_flags(legion)
    mapper_so = None
    if mapper:
        from mapperopt.compiler.commands import compile_or_exit
        from mapperopt.dsl.commands import exit_on_syntax_error
        from mapperopt.dsl.parser import read_source

        with exit_on_syntax_error(mapper):
            text = read_source(mapper)
        mapper_so, _, messages = compile_or_exit(text, mapper)
        if messages:  # warnings: stderr, as `compile` prints them (stdout is eval'd)
            click.echo(messages, err=True)
    env_lines = [f'export {name}="{value}"' if not value.startswith("<") else f"# export {name}={value}"
                 for name, value in run_environment(legion, mapper_so)]
    if cflags or libs:
        click.echo(" ".join((compiler_flags if cflags else []) + (linker_flags if libs else [])))
    elif cmake:
        click.echo(cmake_snippet(legion))
    elif env_only:
        click.echo("\n".join([*env_lines, RUN_HINT]))
    else:
        click.echo(f"# Legion {legion.version} at {legion.prefix}\n# compiler flags:\n{' '.join(compiler_flags)}\n"
                   f"# linker flags:\n{' '.join(linker_flags)}\n# CMake:\n{cmake_snippet(legion)}\n"
                   "# running by hand:\n" + "\n".join([*env_lines, RUN_HINT]))
