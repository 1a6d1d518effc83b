"""The Legion toolchain: discovery through the legate wheel, the libcuda stand-in, real Legion runs, doctor, CLI."""

import errno
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mapperopt import toolchain
from mapperopt.cli import COMMANDS, main
from mapperopt.commands import run_checks
from mapperopt.descriptions import MachineDescription
from mapperopt.errors import MapperoptError, ToolchainError, install_extra
from mapperopt.probe import probe_json

CONFIGS = Path(__file__).parents[2] / "configs"


def test_find_legion_uses_the_legate_wheel():
    legion = toolchain.find_legion()
    assert "legate" in str(legion.prefix)
    assert (legion.include_dir / "legion.h").is_file()
    assert (legion.include_dir / "mappers" / "default_mapper.h").is_file()
    assert legion.version.startswith("legion-25.12")
    assert legion.realm_version.startswith("25.")
    assert legion.libs == ("legion-legate", "realm-legate")
    assert (legion.cmake_dir / "LegionConfig.cmake").is_file()


def test_bogus_prefix_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv(toolchain.PREFIX_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(ToolchainError, match="does not exist"):
        toolchain.find_legion()
    (tmp_path / "include").mkdir()
    with pytest.raises(ToolchainError, match="incomplete: .*legion.h is missing"):
        toolchain.find_legion(tmp_path)


def test_stub_is_built_only_without_a_driver():
    stub = toolchain.cuda_stub_dir()
    if toolchain.has_cuda_driver():
        assert stub is None
        return
    lib = stub / "libcuda.so.1"
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True).stdout
    for name in ("cuMemFree_v2", "cuMemFreeHost", "cuGetErrorName", "cuGetErrorString", "cuGetProcAddress",
                 "cuGetProcAddress_v2"):
        assert f" {name}\n" in symbols
    assert str(stub) in toolchain.runtime_env()["LD_LIBRARY_PATH"]


@pytest.mark.parametrize("cpus", [1, 2])
def test_probe_reports_the_cpus_legion_was_given(cpus):
    data = probe_json(cpus=cpus)
    assert data["schema"] == "mapperopt.machine/1"
    assert data["nodes"] == 1
    assert data["processors"]["CPU"] == [cpus]
    sysmem = [m for m in data["memories"] if m["kind"] == "SYSMEM"]
    assert len(sysmem) == 1 and sysmem[0]["capacity"] > 0
    assert sysmem[0]["procs"]["CPU"] == list(range(cpus))
    if not toolchain.has_cuda_driver():
        assert data["processors"]["GPU"] == [0]


def test_one_process_runs_the_same_probe_once(monkeypatch):
    """`tune` and `compare` describe the machine, then the harness checks each mapper against it: one Legion run."""
    from mapperopt import probe
    from mapperopt.benchmarks import harness

    monkeypatch.setattr(probe, "_PROBED", {})
    runs = []
    real = harness.run_in_group

    def run(cmd, *args, **kwargs):
        if cmd[0].endswith("/probe"):  # not a compiler's run, if the probe is built now
            runs.append(cmd)
        return real(cmd, *args, **kwargs)

    monkeypatch.setattr(harness, "run_in_group", run)
    first = probe_json(cpus=2)
    first["nodes"] = 99  # a caller's change to its copy is not seen by the next caller
    assert probe_json(cpus=2)["processors"]["CPU"] == [2] and probe_json(cpus=2)["nodes"] == 1
    assert len(runs) == 1
    probe_json(cpus=1)  # another command line is probed
    assert len(runs) == 2


@pytest.mark.parametrize("damage", ['{"processors": {"CPU', "[]"])
def test_a_damaged_machine_record_in_the_cache_is_probed_again(monkeypatch, damage):
    """A record of machines/ cut short (a crash, a hand) or of the wrong shape gave a JSONDecodeError traceback on
    every `compile --bench` of that machine; it is a cache: probed again and written anew."""
    from mapperopt import probe

    monkeypatch.setattr(probe, "_PROBED", {})
    written, real = [], probe.write_atomically
    monkeypatch.setattr(probe, "write_atomically", lambda path, text: (written.append(path), real(path, text)))
    first = probe_json(cpus=3)  # probed (no cached=True): its record written
    [record] = written
    record.write_text(damage)
    monkeypatch.setattr(probe, "_PROBED", {})
    assert probe_json(cpus=3, cached=True) == first
    assert json.loads(record.read_text()) == first and len(written) == 2


def test_a_probe_the_cache_has_no_room_for_is_named_and_leaves_no_partial_file(monkeypatch):
    from mapperopt import probe
    from mapperopt.files import refused_write

    monkeypatch.setattr(probe, "_PROBED", {})
    machines = toolchain.cache_dir() / "machines"
    before = set(machines.iterdir()) if machines.is_dir() else set()
    real_write_text = Path.write_text

    def full(self, text, *args, **kwargs):  # the disk fills up while the record is written: ENOSPC naming no file
        if self.parent != machines:
            return real_write_text(self, text, *args, **kwargs)
        real_write_text(self, text[:3], *args, **kwargs)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Path, "write_text", full)
    with pytest.raises(OSError) as raised:
        probe_json(cpus=1)
    monkeypatch.undo()
    assert Path(raised.value.filename).parent == machines and raised.value.filename.endswith(".json")
    assert f"cannot write {raised.value.filename}" in str(refused_write(raised.value))
    assert set(machines.iterdir()) <= before  # no temporary left behind


def test_gpus_without_a_driver_is_a_clear_error():
    """In `run`'s words, which docs/running.md quotes (`machine --gpus 1` said "--gpus 1 requested, but ...")."""
    if toolchain.has_cuda_driver():
        pytest.skip("this machine has a GPU driver")
    with pytest.raises(MapperoptError, match="^no GPU on this machine: --gpus 1 asks for 1 GPU, but no NVIDIA driver "
                                             "was found"):
        probe_json(gpus=1)


def test_a_failed_probe_quotes_realms_error_without_the_harmless_lines():
    """The probe's failure quotes its stderr through the harness's filter: Realm's error, not the lines the libcuda
    stand-in causes on a machine without GPU."""
    with pytest.raises(MapperoptError) as info:
        probe_json(machine_flags=("-ll:nosuchflag", "1"))
    message = info.value.message
    assert "the Legion machine probe failed" in message and "-ll:nosuchflag" in message.split("\n", 1)[1], message
    assert "cuInit" not in message and "We are not able to discover" not in message, message


def test_build_errors_keep_the_compiler_log(tmp_path):
    bad = tmp_path / "bad.cc"
    bad.write_text("int main() { return undefined_name; }\n")
    with pytest.raises(toolchain.BuildError) as info:
        toolchain.build("bad", [bad])
    assert "undefined_name" in info.value.log
    assert str(bad) in info.value.kept


def test_builds_are_cached(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(toolchain.CACHE_ENV, str(tmp_path / "cache"))
    src = tmp_path / "hello.cc"
    src.write_text('#include "legion.h"\nint main() { return 0; }\n')
    first = toolchain.build("hello", [src])
    # Output is not a terminal here: a build says when it starts and when it ends (a log would show a silent pause).
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "[mapperopt] building hello (1 source file)..." and len(lines) == 2
    assert re.fullmatch(rf"\[mapperopt\] built hello in \d+ s: {re.escape(str(first))}", lines[1])
    stamp = first.stat().st_mtime_ns
    assert toolchain.build("hello", [src]) == first and first.stat().st_mtime_ns == stamp
    assert capsys.readouterr().err == ""  # nothing built, nothing said
    src.write_text('#include "legion.h"\nint main() { return 1; }\n')
    second = toolchain.build("hello", [src])
    assert second != first
    assert subprocess.run([str(second)], env=toolchain.runtime_env()).returncode == 1


@pytest.mark.parametrize("damage", [b"", b"#!/bin/sh\nexit 0\n"])
def test_a_damaged_cached_build_is_built_again_with_a_note(tmp_path, monkeypatch, capsys, damage):
    """A cached executable or object that is no ELF file (emptied, overwritten) would be trusted for ever, and every
    run of it would fail as the program's fault: the build notices it, says so and builds it again."""
    monkeypatch.setenv(toolchain.CACHE_ENV, str(tmp_path / "cache"))
    src = tmp_path / "hello.cc"
    src.write_text('#include "legion.h"\nint main() { return 3; }\n')
    exe = toolchain.build("hello", [src])
    [obj] = (exe.parents[2] / "obj").glob("*.o")
    capsys.readouterr()
    for cached in (exe, obj):
        cached.write_bytes(damage)
        assert toolchain.build("hello", [src]) == exe
        err = " ".join(capsys.readouterr().err.split())
        assert f"note: {cached} in the build cache is damaged (not an ELF file): building it again" in err, err
        assert subprocess.run([str(exe)], env=toolchain.runtime_env()).returncode == 3


def test_doctor_reports_a_hidden_legion(tmp_path):
    checks = {c.name: c for c in run_checks(str(tmp_path / "bogus"))}
    assert not checks["Legion"].ok and "does not exist" in checks["Legion"].detail
    assert checks["Legion"].fix
    assert checks["C++ compiler"].ok
    assert main(["doctor", "--legion", str(tmp_path / "bogus")]) == 1


def test_doctor_says_when_the_gemms_get_no_gpu_variants_for_want_of_cublas(tmp_path, monkeypatch):
    """nvcc alone read as "CUDA variants: ok", though a toolkit without cuBLAS builds the six GEMMs with CPU variants
    only (`build --cuda auto`): cuBLAS is a row of its own, shown once nvcc is found."""
    monkeypatch.setattr(toolchain, "nvcc", lambda: "/opt/cuda/bin/nvcc")
    monkeypatch.setattr(toolchain, "find_cublas", lambda: None)
    checks = {c.name: c for c in run_checks(str(tmp_path / "bogus"))}  # a bogus Legion: no probe run
    cublas = checks["cuBLAS (the GEMMs' CUDA variants)"]
    assert not cublas.ok and not cublas.required, cublas
    assert "cannon, summa, pumma, johnson, solomonik and cosma are built with CPU variants only" in cublas.detail
    assert "cuBLAS" in cublas.fix
    monkeypatch.setattr(toolchain, "find_cublas", lambda: (tmp_path / "include", tmp_path / "lib64"))
    assert {c.name: c for c in run_checks(str(tmp_path / "bogus"))}["cuBLAS (the GEMMs' CUDA variants)"].ok
    monkeypatch.setattr(toolchain, "nvcc", lambda: None)  # said by the nvcc row alone
    assert "cuBLAS (the GEMMs' CUDA variants)" not in {c.name for c in run_checks(str(tmp_path / "bogus"))}


def test_build_says_when_a_gemm_is_built_without_its_cuda_variants(monkeypatch, capsys):
    """`build --cuda auto` with nvcc but no cuBLAS builds the GEMMs with CPU variants only: it says so."""
    import mapperopt.benchmarks as benchmarks

    monkeypatch.setattr(benchmarks, "build_app", lambda name, cuda: f"/cache/{name}")
    monkeypatch.setattr(toolchain, "cuda_enabled", lambda mode, legion=None: mode != "off")
    monkeypatch.setattr(toolchain, "nvcc", lambda: "/opt/cuda/bin/nvcc")
    monkeypatch.setattr(toolchain, "find_cublas", lambda: None)
    assert main(["build", "cannon", "circuit"]) == 0
    err = capsys.readouterr().err
    assert ("note: cannon: built without CUDA variants: the CUDA toolkit of /opt/cuda/bin/nvcc has no cuBLAS "
            "(`mapperopt doctor`)") in err, err
    assert "circuit: built without" not in err
    assert main(["build", "cannon", "--cuda", "off"]) == 0 and "note:" not in capsys.readouterr().err


def test_doctor_passes_here():
    """The probe's line said `CPUs [1]` on a 2-core machine with no word why 1: it says that the probe asks for
    Realm's default of 1 CPU processor (with 1 utility processor), and what runs ask for and this machine has."""
    import os

    checks = {c.name: c for c in run_checks()}
    assert checks["Legion"].ok and checks["Legion run (probe)"].ok
    cores = len(os.sched_getaffinity(0))
    detail = checks["Legion run (probe)"].detail
    assert (f"CPUs [1] (the probe asks for Realm's default, 1 CPU processor, and 1 utility processor; this machine "
            f"gives runs {cores} core{'s' * (cores != 1)}: `run` takes a size's count or --cpus N, `tune` and "
            "`compare` of a benchmark on CPUs every core less the utility processor's)") in detail, detail


def test_machine_help_offers_omp_only_for_a_legion_built_with_openmp():
    """The help listed -ll:omp among the processor counts, which this Legion (the legate wheel's) refuses."""
    from click.testing import CliRunner

    from mapperopt.cli import cli

    text = " ".join(CliRunner().invoke(cli, ["machine", "--help"]).output.split())
    assert "-ll:py, -ll:util)" in text and "-ll:omp only with a Legion built with OpenMP" in text, text


def test_machine_command_json(capsys):
    assert main(["machine", "--cpus", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["processors"]["CPU"] == [2]


def test_machine_command_takes_the_run_flags_that_shape_the_machine(capsys):
    """`mapperopt machine -- FLAGS` probes with the flags of a run that change its machine, as check and explain
    take them into their machine model; another flag, or one this Legion build does not support, is refused saying
    so (Realm's abort was reported as a failed probe, whose advice was to give --machine)."""
    assert main(["machine", "--json", "--", "-ll:io", "2", "-ll:cpu", "2"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["processors"]["IO"] == [2] and data["processors"]["CPU"] == [2]
    assert main(["machine", "--", "-steps", "4"]) == 2
    assert "`-steps` after `--` does not change the machine" in capsys.readouterr().err
    assert main(["machine", "--", "-ll:omp", "2"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "this Legion build does not know `-ll:omp`" in err and "drop `-ll:omp`" in err, err
    assert main(["machine", "--", "-ll:py", "2"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "this Legion build supports at most one Python processor per node (`-ll:py 2` asks for more)" in err, err
    assert "give `-ll:py 1`" in err and "SIGABRT" not in err, err


def test_machine_names_the_flags_it_probed_with(capsys):
    """`machine` showed SYSMEM 512 MiB and `check --bench circuit` 256 MiB for "this machine": both right for their
    flags (circuit's size gives -ll:csize 256), but `machine` did not say that its sizes were Legion's defaults. It
    names its Legion flags, the memories left at Legion's default sizes and that a benchmark's run sets its size's;
    its JSON gains `legion_flags` (the machine description's keys are kept)."""
    assert main(["machine", "--json", "--", "-ll:csize", "256"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["legion_flags"] == ["-ll:util", "1", "-ll:csize", "256"], data
    assert [m["capacity"] for m in data["memories"] if m["kind"] == "SYSMEM"] == [256 << 20], data
    assert MachineDescription.from_json(data).count("CPU", 0) == 1
    assert main(["machine"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "512.0 MiB" in text and ("Legion flags: -ll:util 1; SYSMEM at Legion's default size (no -ll:csize "
                                    "given).") in text, text
    assert ("A benchmark's run asks for its size's memory sizes (run's --csize, --fsize and --zsize change them): "
            "`mapperopt check FILE --bench NAME` names the machine that run sees.") in text, text
    assert main(["machine", "--cpus", "2", "--", "-ll:csize", "256"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "256.0 MiB" in text and "Legion flags: -ll:util 1 -ll:cpu 2 -ll:csize 256." in text, text
    assert "default size" not in text, text


def test_machine_refuses_a_processor_option_that_its_flag_contradicts(capsys):
    """`machine --cpus 1 -- -ll:cpu 2` probed 2 CPUs silently; run, tune and compare refuse the two values."""
    assert main(["machine", "--cpus", "1", "--json", "--", "-ll:cpu", "2"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--cpus 1 and `-ll:cpu 2` after `--` ask for different CPU counts" in err and "give one of them" in err, err
    assert main(["machine", "--cpus", "2", "--json", "--", "-ll:cpu", "2"]) == 0  # the same value twice is one
    assert json.loads(capsys.readouterr().out)["processors"]["CPU"] == [2]


@pytest.mark.parametrize("command", [[]] + [[name] for name in COMMANDS])
def test_help_renders(command):
    out = subprocess.run([sys.executable, "-m", "mapperopt.cli", *command, "--help"], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    assert "Usage:" in out.stdout


def test_usage_errors_and_mapperopt_errors_say_error_alike(tmp_path, capsys):
    """click's usage errors keep their usage line and help hint but say `error: `, as mapperopt's own errors do."""
    assert main(["check"]) == 2
    err = capsys.readouterr().err
    # (the program's name is pytest's here)
    assert re.match(r"Usage: \S+ check \[OPTIONS\] FILE", err) and re.search(r"Try '\S+ check --help' for help", err)
    assert err.splitlines()[-1] == "error: Missing argument 'FILE'." and "Error" not in err, err
    assert main(["check", str(tmp_path / "none.dsl")]) == 1
    assert capsys.readouterr().err.startswith(f"error: cannot read '{tmp_path / 'none.dsl'}'")
    # a usage error mapperopt raises itself (`explain` without --bench, reported as saying `Error:`): exit status 2,
    # as click's, and `error: `
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Task * CPU;\n")
    assert main(["explain", str(mapper)]) == 2
    assert capsys.readouterr().err == "error: explain needs --bench NAME or --app FILE|'CMD ARGS'\n"


def test_build_names_only_applications_a_user_can_name(capsys):
    """The shared GEMM layer and the machine probe have folders beside the applications but are no application:
    the list names only what `mapperopt build`, `run` and `tune` take (a benchmark with a configuration)."""
    from mapperopt.benchmarks import load_config

    def configured(name: str) -> bool:
        try:
            return load_config(name).app == name
        except MapperoptError:
            return False

    assert main(["build", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown benchmark 'nope'; known: " in err
    listed = [name.strip() for name in err.split("known: ")[1].split(",")]
    assert "circuit" in listed and [name for name in listed if not configured(name)] == []
    # one wording for one error: the commands that read the benchmark's configuration say the same
    for command in (["run", "nope"], ["check", str(CONFIGS / "circuit.dsl"), "--bench", "nope"]):
        assert main(command) == 2
        assert capsys.readouterr().err == err
    for part in ("gemm", "probe", "common"):
        assert main(["build", part]) == 2
        assert f"unknown benchmark '{part}'" in capsys.readouterr().err
    # every name is checked before anything is built: a typo after a long build is not found only at the end
    assert main(["build", "circuit", "nope"]) == 2
    out, err = capsys.readouterr()
    assert "unknown benchmark 'nope'" in err and "circuit:" not in out


def test_exit_status_of_a_failing_command_reaches_the_shell(tmp_path):
    bad = tmp_path / "bad.dsl"
    bad.write_text("def f(Task task): return 0;\n")
    out = subprocess.run([sys.executable, "-m", "mapperopt.cli", "check", str(bad)], capture_output=True, text=True)
    assert out.returncode == 1
    assert "error[E101]" in out.stdout  # a diagnostic, syntax error or not, on stdout (docs/dsl.md)


def test_doctor_lists_the_baseline_optimizers_as_optional(monkeypatch):
    """opentuner and optuna come with the `baselines` extra: without them doctor says how to add them, no error."""
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("opentuner", "optuna") else find_spec(name, *a))
    checks = {c.name: c for c in run_checks()}
    assert checks["Python packages"].ok
    optional = checks["Optimizer packages ('baselines' extra)"]
    assert not optional.ok and not optional.required and optional.fix == install_extra("baselines")


def test_doctor_prints_the_extras_in_brackets(monkeypatch, capsys):
    """rich markup would eat `[llm]` and `[baselines]`: the printed fix is the command to type."""
    import mapperopt.commands as commands

    monkeypatch.setattr(commands, "run_checks", lambda prefix=None: [
        commands.Check("Optimizer packages ('llm' extra)", False, "missing: openai [x]", "pip install 'mapperopt[llm]'",
                       required=False),
        commands.Check("Optimizer packages ('baselines' extra)", False, "missing: optuna",
                       "pip install 'mapperopt[baselines]'", required=False)])
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "pip install 'mapperopt[llm]'" in out and "pip install 'mapperopt[baselines]'" in out
    assert "openai [x]" in out


def test_a_legion_replaced_at_the_same_path_gets_its_own_builds(tmp_path, monkeypatch):
    """The cache is keyed by the Legion build, not by its path and version strings alone (the wheel's
    `legion-25.12.0-75-g7b770cff5-dirty` names a commit, not its patches or configuration): a library file replaced
    at the same path, as a reinstall or a rebuild does, gives new builds, linked against the new file."""
    real = toolchain.find_legion()
    root = tmp_path / "legion"
    (root / "lib").mkdir(parents=True)
    (root / "include").symlink_to(real.include_dir)
    for entry in real.lib_dir.iterdir():  # the libraries under every name they are linked and loaded by
        (root / "lib" / entry.name).symlink_to(entry)
    monkeypatch.setenv(toolchain.PREFIX_ENV, str(root))
    monkeypatch.setenv(toolchain.CACHE_ENV, str(tmp_path / "cache"))
    before = toolchain.find_legion()
    src = tmp_path / "hello.cc"
    src.write_text("int main() { return 0; }\n")
    first = toolchain.build("hello", [src])
    assert toolchain.build("hello", [src]) == first
    lib = root / "lib" / f"lib{real.libs[0]}.so"
    lib.unlink()
    shutil.copyfile(real.lib_dir / f"lib{real.libs[0]}.so", lib)  # a new file, as pip or `make install` writes it
    after = toolchain.find_legion()
    assert (after.prefix, after.version, after.realm_version) == (before.prefix, before.version, before.realm_version)
    assert after.key != before.key
    second = toolchain.build("hello", [src])
    assert second != first
    assert subprocess.run([str(second)], env=toolchain.runtime_env()).returncode == 0


def test_a_cache_that_names_a_file_is_a_clear_error(tmp_path, monkeypatch):
    cache = tmp_path / "cachefile"
    cache.write_text("")
    monkeypatch.setenv(toolchain.CACHE_ENV, str(cache))
    dsl = tmp_path / "m.dsl"
    dsl.write_text("Task * CPU;\n")
    # a process of its own: this one may hold what it built in memory
    out = subprocess.run([sys.executable, "-m", "mapperopt.cli", "check", str(dsl), "--bench", "circuit"],
                         capture_output=True, text=True)
    assert out.returncode == 1
    err = " ".join(out.stderr.split())
    assert f"error: MAPPEROPT_CACHE={cache} cannot be used as the build cache (a file is there, not a folder)" in err
    assert "hint: set MAPPEROPT_CACHE to a writable folder" in err


def test_a_write_the_cache_refuses_names_the_cache(tmp_path, monkeypatch):
    """A read-only cache (mounted so; root ignores permissions, so the error is made here as the kernel makes it)."""
    from mapperopt.files import refused_write

    monkeypatch.setenv(toolchain.CACHE_ENV, str(tmp_path / "cache"))
    written = tmp_path / "cache" / "machines" / "0123.42.tmp"
    error = refused_write(OSError(errno.EROFS, os.strerror(errno.EROFS), str(written)))
    assert str(error).startswith(f"MAPPEROPT_CACHE={tmp_path / 'cache'} is not writable (read-only file system): "
                                 f"cannot write {written}")
    assert refused_write(OSError(errno.ENOENT, os.strerror(errno.ENOENT), str(written))) is None  # not a refusal
    # a writer that names no file (a PNG's): still said, not a traceback
    assert str(refused_write(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))).startswith(
        "cannot write a file: no space left on device")


def _fake_cxx(tmp_path, monkeypatch, on_compile: str, on_version: str = 'echo "g++ (fake) 1.0"') -> Path:
    """A C++ compiler (`CXX`) that answers `--version` with `on_version` and runs `on_compile` for anything else."""
    fake = tmp_path / "bin" / "g++"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\nif [ "$1" = --version ]; then {on_version}; exit 0; fi\n{on_compile}\n')
    fake.chmod(0o755)
    monkeypatch.setenv("CXX", str(fake))
    monkeypatch.setenv(toolchain.CACHE_ENV, str(tmp_path / "cache"))
    src = tmp_path / "hello.cc"
    src.write_text("int main() { return 0; }\n")
    return src


@pytest.mark.parametrize("on_compile, cause", [
    ('echo "cc1plus: fatal error: hello.o: No space left on device" >&2; exit 1', "no space left on device"),
    ('echo "hello.cc:1:5: internal compiler error: Segmentation fault" >&2; exit 4', "internal compiler error"),
    ('echo "Cannot create temporary file in /proc/: No such file or directory" >&2; kill -ABRT $$',
     "cannot create temporary files"),
    ("kill -KILL $$", "killed by sigkill"),
])
def test_a_build_the_environment_breaks_is_no_build_error_and_shows_the_compilers_words(tmp_path, monkeypatch,
                                                                                        on_compile, cause):
    """A full disk, an unwritable TMPDIR, a crashing or killed compiler: not the sources' fault (a tune must not
    record the mapper as failed), so not a BuildError; the error names the cause and quotes the compiler."""
    src = _fake_cxx(tmp_path, monkeypatch, on_compile)
    with pytest.raises(ToolchainError) as info:
        toolchain.build("hello", [src])
    assert not isinstance(info.value, toolchain.BuildError)
    text = str(info.value)
    assert cause in text.lower(), text
    assert "hello (hello.cc)" in text
    if "echo" in on_compile:
        assert on_compile.split('"')[1] in text  # the compiler's own words
    if "space" in cause:  # where: the build cache or TMPDIR
        assert f"MAPPEROPT_CACHE={tmp_path / 'cache'}" in text


def test_a_failed_build_shows_the_tail_of_the_compilers_output(tmp_path, monkeypatch):
    src = _fake_cxx(tmp_path, monkeypatch, 'echo "g++: internal fake failure" >&2; exit 1')
    with pytest.raises(toolchain.BuildError) as info:
        toolchain.build("hello", [src])
    assert "g++: internal fake failure" in str(info.value)


def test_a_hung_compiler_is_stopped_with_a_clear_error(tmp_path, monkeypatch):
    src = _fake_cxx(tmp_path, monkeypatch, "sleep 60")
    monkeypatch.setattr(toolchain, "COMPILE_TIMEOUT_S", 2)
    with pytest.raises(ToolchainError, match=r"hello \(hello.cc\) did not finish in 2 s"):
        toolchain.build("hello", [src])


def test_a_compiler_that_hangs_on_version_is_named(tmp_path, monkeypatch):
    src = _fake_cxx(tmp_path, monkeypatch, "exit 1", on_version="sleep 60")
    monkeypatch.setattr(toolchain, "VERSION_TIMEOUT_S", 1)
    with pytest.raises(ToolchainError, match=rf"{re.escape(os.environ['CXX'])} --version did not answer in 1 s"):
        toolchain.build("hello", [src])


def test_doctor_does_not_call_a_compiler_that_fails_ok(tmp_path, monkeypatch):
    _fake_cxx(tmp_path, monkeypatch, "exit 1", on_version='echo "g++: internal fake failure" >&2; exit 1')
    row = {c.name: c for c in run_checks()}["C++ compiler"]
    assert not row.ok and "internal fake failure" in row.detail


def _nvcc_without_tmpdir(tmp_path: Path, monkeypatch, tmpdir: Path | None = None) -> None:
    """A fake nvcc in CUDA_HOME that fails as nvcc does when it cannot write in TMPDIR, and TMPDIR set to `tmpdir`
    (default: a missing folder)."""
    fake = tmp_path / "cuda" / "bin" / "nvcc"
    fake.parent.mkdir(parents=True)
    fake.write_text("#!/bin/sh\necho \"nvcc fatal   : Could not open output file '$TMPDIR/tmpxft_1'\" >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda"))
    monkeypatch.setenv("TMPDIR", str(tmpdir or tmp_path / "none"))


def _cuda_lib_dir_error() -> ToolchainError:
    """The error of `toolchain.cuda_lib_dir()` (uncached, for this test's environment)."""
    toolchain.cuda_lib_dir.cache_clear()
    try:
        with pytest.raises(ToolchainError) as info:
            toolchain.cuda_lib_dir()
    finally:
        toolchain.cuda_lib_dir.cache_clear()
    return info.value


def test_a_nonexistent_tmpdir_is_named_when_nvcc_cannot_use_it(tmp_path, monkeypatch):
    _nvcc_without_tmpdir(tmp_path, monkeypatch)
    text = str(_cuda_lib_dir_error())
    assert f"TMPDIR={tmp_path / 'none'} does not exist" in text and "Could not open output file" in text, text


@pytest.mark.skipif(not Path("/proc/self").exists(), reason="needs Linux's /proc")
def test_an_unwritable_tmpdir_is_named_when_nvcc_cannot_use_it(tmp_path, monkeypatch):
    """TMPDIR=/proc exists, but no file can be made there (not even by root): nvcc's failure was put down to
    CUDA_HOME."""
    _nvcc_without_tmpdir(tmp_path, monkeypatch, Path("/proc"))
    error = _cuda_lib_dir_error()
    assert "TMPDIR=/proc is not writable" in str(error), str(error)
    assert "TMPDIR" in error.hint and "CUDA_HOME" not in error.hint, error.hint


def test_the_grammar_is_read_as_utf8_whatever_the_locale(tmp_path):
    plain = tmp_path / "plain.dsl"
    plain.write_text("Task * CPU;\n")
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0"}
    out = subprocess.run([sys.executable, "-m", "mapperopt.cli", "check", str(plain)], capture_output=True,
                         text=True, env=env)
    assert out.returncode == 0, out.stderr


def test_a_process_waiting_for_anothers_build_says_so(tmp_path, capsys):
    target = tmp_path / "libx.so"
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'w'); "
                               "fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(2)",
                               str(tmp_path / "libx.so.lock")], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "held\n"
    with toolchain.locked(target):
        pass
    holder.wait()
    assert f"waiting for another process's build of {target}" in capsys.readouterr().err


def test_doctor_with_an_unusable_cache_prints_its_table_and_names_the_cache(tmp_path, monkeypatch, capsys):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv(toolchain.CACHE_ENV, str(tmp_path / "file" / "cache"))
    assert main(["doctor"]) == 1
    out = capsys.readouterr()
    assert "C++ compiler" in out.out and "build cache" in out.out  # the table, with the cache's row
    row = {c.name: c for c in run_checks()}["build cache"]
    assert not row.ok and row.detail.startswith(f"MAPPEROPT_CACHE={tmp_path / 'file' / 'cache'} cannot be used")


def test_doctor_reports_an_nvcc_that_cannot_use_tmpdir_as_a_row(tmp_path, monkeypatch):
    _nvcc_without_tmpdir(tmp_path, monkeypatch)
    toolchain.cuda_lib_dir.cache_clear()
    try:
        row = {c.name: c for c in run_checks(str(tmp_path / "bogus"))}["cuBLAS (the GEMMs' CUDA variants)"]
    finally:
        toolchain.cuda_lib_dir.cache_clear()
    assert not row.ok and f"TMPDIR={tmp_path / 'none'} does not exist" in row.detail


@pytest.mark.parametrize("build", ["probe", "mapperopt_dslrt"])
def test_ctrl_c_during_a_build_says_what_was_being_built_and_that_running_again_is_safe(tmp_path, build):
    """Ctrl-C (SIGINT to the foreground process group) while `compile` builds with an empty build cache: it printed
    only `aborted` (during the DSL runtime's build) or a traceback (during the machine probe's, which `compile`
    builds before its command line is read). It names the build it stopped and says that the same command builds it
    again."""
    import os
    import signal
    import sys
    import time

    mapper = tmp_path / "m.dsl"
    mapper.write_text("Task * CPU;\n")
    log = tmp_path / "out.txt"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "mapperopt.cli", "compile", str(mapper), "--bench", "circuit",
                                 "-o", str(tmp_path / "m.so")], stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                                env={**os.environ, toolchain.CACHE_ENV: str(tmp_path / "cache")})
        deadline = time.monotonic() + 120
        started = f"[mapperopt] building {build} "
        while time.monotonic() < deadline and proc.poll() is None and started not in log.read_text():
            time.sleep(0.05)
        time.sleep(1)  # inside the compiler
        assert proc.poll() is None, log.read_text()
        os.killpg(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=60) in (130, -signal.SIGINT)  # a shell shows both as 130
    text = log.read_text()
    said = " ".join(text.split())
    assert f"aborted: interrupted while building {build} (" in said and "Traceback" not in said, said
    assert "the build cache keeps only finished builds: the same command builds it again" in said, said


def test_one_reader_gives_the_defines_of_legions_headers(tmp_path):
    """`legion_defines.h` holds string defines (LEGION_VERSION), number defines (LEGION_MAX_NUM_PROCS) and bare ones
    (LEGION_USE_CUDA): one reader gives each, and the processor limit comes from it (the installed Legion's, then a
    header of other values, then one without it)."""
    import dataclasses

    legion = toolchain.find_legion()
    real = (legion.include_dir / "legion_defines.h").read_text()
    header = tmp_path / "legion_defines.h"
    header.write_text(real)
    assert toolchain._define(header, "LEGION_VERSION") == legion.version
    assert toolchain._define(header, "LEGION_MAX_NUM_PROCS") == str(toolchain.max_procs_per_node())
    assert (toolchain._define(header, "LEGION_USE_CUDA") is not None) == legion.cuda
    assert toolchain._define(header, "LEGION_NO_SUCH_DEFINE") is None
    here = dataclasses.replace(legion, include_dir=tmp_path)
    assert toolchain.max_procs_per_node(here) == toolchain.max_procs_per_node() == int(
        re.search(r"#define\s+LEGION_MAX_NUM_PROCS\s+(\d+)", real)[1])
    header.write_text("#define LEGION_USE_CUDA\n#define LEGION_MAX_NUM_PROCS 128 // per node\n")
    assert toolchain._define(header, "LEGION_USE_CUDA") == ""
    assert toolchain.max_procs_per_node(here) == 128
    header.write_text("#define LEGION_MAX_NUM_PROCS_X 128\n#define LEGION_MAX_NUM_PROCS\n")
    assert toolchain.max_procs_per_node(here) is None
    header.unlink()
    assert toolchain.max_procs_per_node(here) is None


def test_doctor_follows_the_terminal_width_and_stays_readable_at_80_columns(monkeypatch):
    """doctor printed its table 160 columns wide whatever the terminal: at 80 columns every row wrapped into box
    fragments. It takes the width as the other commands do (the terminal's, or COLUMNS), and at 80 columns each
    check's fix follows its detail, its words whole."""
    for var in ("MAPPEROPT_LLM_BASE_URL", "MAPPEROPT_LLM_MODEL"):  # the endpoint row: optional, with its fix
        monkeypatch.delenv(var, raising=False)

    def doctor(columns: str | None) -> list[str]:
        env = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | ({"COLUMNS": columns} if columns else {})
        done = subprocess.run([sys.executable, "-m", "mapperopt.cli", "doctor"], capture_output=True, text=True,
                              env=env, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout.splitlines()

    narrow = doctor("80")
    assert max(len(line) for line in narrow) <= 80, "\n".join(narrow)
    text = " ".join(" ".join(line.strip("│ ") for line in narrow).split())
    assert "to use a model, set MAPPEROPT_LLM_BASE_URL or MAPPEROPT_LLM_MODEL" in text, "\n".join(narrow)
    wide = doctor("200")
    assert 80 < max(len(line) for line in wide) <= 200, "\n".join(wide)


def test_a_printed_command_of_an_unactivated_mapperopt_names_it_by_its_path_and_runs(tmp_path):
    """`.venv/bin/mapperopt tune ...` in a shell whose PATH lacks the virtual environment: the command its error
    gives to paste said `mapperopt check ...`, which that shell answers "mapperopt: command not found" (exit status
    127). It names this mapperopt by its absolute path, and pasted there it runs: the check of the start file."""
    exe = Path(sys.executable).with_name("mapperopt")
    bare = ":".join(p for p in os.environ["PATH"].split(":") if p and Path(p).resolve() != exe.parent.resolve())
    env = {**os.environ, "PATH": bare}
    start = tmp_path / "my start.dsl"  # a space: the path is quoted in the command
    start.write_text("Task * CPU\n")  # E105: no `;`
    done = subprocess.run([str(exe), "tune", "circuit", "--iters", "1", "--start", str(start)], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 1, done.stderr
    command = re.search(r"`([^`]*)` checks it alone", " ".join(done.stderr.split()))[1]
    assert command.startswith(f"{shlex.quote(str(exe))} check "), command
    pasted = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env, cwd=tmp_path,
                            timeout=300)
    assert pasted.returncode == 1, (command, pasted.stderr)  # check's status for an error in the file, not 127
    assert "error[E105]" in pasted.stdout + pasted.stderr and f"{start}: 1 error(s)" in pasted.stdout + pasted.stderr, \
        (command, pasted.stdout, pasted.stderr)
