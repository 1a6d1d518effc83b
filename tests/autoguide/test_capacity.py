"""Capacity failures get advice that can work on the run's machine: on CPUs only, the system-memory size to raise
(a real run fails, and the run with the suggested size succeeds); with GPUs, a framebuffer-first fallback list, or
the zero-copy size once zero-copy memory is full too; never a memory the machine does not have."""

from __future__ import annotations

import dataclasses

import pytest
from captured_runs import load

from mapperopt.autoguide import apply_edits_to_text, explain, memory_settings
from mapperopt.autoguide.capacity import raised_size
from mapperopt.benchmarks.harness import run_benchmark
from mapperopt.errors import MapperoptError
from mapperopt.records import Edit, RunResult

# Stencil at size ci with a 1004 x 1004 grid: two float64 fields, 16 MB, in an 8 MB system memory.
GRID = ["-nx", "1004", "-ny", "1004"]


def test_cpu_only_capacity_failure_gets_a_size_that_works_in_a_real_run(tmp_path):
    failed = run_benchmark("stencil", "expert", size="ci", csize=8, extra_args=GRID, out_dir=tmp_path / "tight")
    assert failed.status == "failed", failed.reason
    fb = explain(failed)
    assert fb.category in ("memory.placement", "memory.oom"), fb.raw_excerpt
    assert "ZCMEM" not in fb.suggestion and "FBMEM" not in fb.suggestion
    assert "SYSMEM is the full memory and the only memory of the CPUs" in fb.suggestion
    sizes = memory_settings(fb.edits)
    assert list(sizes) == ["csize"] and sizes["csize"] > 8
    assert f"--csize {sizes['csize']}" in fb.suggestion
    # The mapper itself is left alone: the edit is a run setting.
    assert apply_edits_to_text(failed.dsl, fb.edits) == apply_edits_to_text(failed.dsl, [])
    fixed = run_benchmark("stencil", "expert", size="ci", extra_args=GRID, min_time_s=0, out_dir=tmp_path / "fixed",
                          **sizes)
    assert fixed.ok, f"--csize {sizes['csize']} left {fixed.stage}: {fixed.reason}"
    assert fixed.attempts[-1].result["verified"] is True


def test_default_mapper_capacity_failure_names_the_size_to_raise():
    _, result = load("stencil-default_out_of_memory")  # 8004 x 8004 with 256 MiB of system memory
    fb = explain(result)
    assert fb.rule == "default-mapper-failed-allocation"
    new = raised_size(256, None, 1027074304)
    assert memory_settings(fb.edits) == {"csize": new}
    assert "ZCMEM" not in fb.suggestion
    # Realm's sizes are in MiB (2**20 bytes), and so are the advice's: the instance's 1027074304 bytes are 979 MiB.
    assert "(979 MiB) does not fit in its 256 MiB" in fb.suggestion and f"Raise --csize to {new} MiB" in fb.suggestion
    assert " MB" not in fb.suggestion, fb.suggestion


def test_full_memory_advice_names_the_legion_flag_that_sizes_it():
    """RDMEM has no mapperopt option: the advice names Legion's -ll:rsize with a size that holds the instance, and
    keeps the rule's edits (a fallback memory); the sizes mapperopt sets say their Legion flag too."""
    _, result = load("stencil-r403_tiny_memory")  # everything in a 1 MiB RDMEM (-ll:rsize 1)
    fb = explain(result)
    assert fb.rule == "mapper-r403-no-memory"
    assert "RDMEM is the full memory" in fb.suggestion and "its 1 MiB (Legion's -ll:rsize sizes it)" in fb.suggestion
    assert f"-- -ll:rsize {raised_size(1, None, 16386304)}" in fb.suggestion, fb.suggestion
    assert fb.edits == (Edit("set_region_memory", {"task": "*", "region": "*", "proc": "*", "memories": ["SYSMEM"]}),)
    fb = explain(load("stencil-default_out_of_memory")[1])
    assert "MiB (Legion's -ll:csize; mapperopt run/tune --csize" in fb.suggestion, fb.suggestion
    fb = explain(gpu_failure(R403.format(kinds="FBMEM", reasons=FB_FULL)))
    assert "raise --fsize (Legion's -ll:fsize; now 3072 MiB)" in fb.suggestion, fb.suggestion


def test_a_size_given_after_the_separator_is_raised_there():
    """A run whose command sets -ll:csize after `--`: mapperopt refuses --csize next to a different -ll:csize, so the
    advice says to raise the flag where it was given; the edit (a run setting) is the same as without it."""
    _, result = load("stencil-default_out_of_memory")
    plain = explain(result)
    settings = {**result.settings, "extra_args": [*result.settings["extra_args"], "-ll:csize", "256"]}
    fb = explain(dataclasses.replace(result, settings=settings))
    new = raised_size(256, None, 1027074304)
    assert f"Raise -ll:csize to {new} MiB (`-- -ll:csize {new}` in the mapperopt run/tune command)" in fb.suggestion
    assert "--csize" not in fb.suggestion, fb.suggestion
    assert fb.edits == plain.edits


def test_a_size_given_in_the_apps_command_is_raised_there():
    """`--app './prog -ll:csize 256'`: mapperopt refuses --csize next to a different -ll:csize there, as after `--`."""
    _, result = load("stencil-default_out_of_memory")
    settings = {**result.settings, "app_file": None, "app_options": "--app './stencil -ll:csize 256'"}
    fb = explain(dataclasses.replace(result, settings=settings))
    new = raised_size(256, None, 1027074304)
    assert f"Raise -ll:csize to {new} MiB (in --app's command: `-ll:csize {new}`)" in fb.suggestion, fb.suggestion
    assert "--csize" not in fb.suggestion, fb.suggestion


@pytest.mark.parametrize("settings,where", [({"extra_args": ["-ll:fsize", "3072"]}, "after `--`"),
                                            ({"app_file": None, "app_options": "--app './stencil -ll:fsize 3072'"},
                                             "in --app's command")])
def test_a_framebuffer_size_given_by_its_flag_is_raised_there(settings, where):
    """The spill advice said "raise --fsize" where -ll:fsize was given after `--` or in --app's command, next to
    which mapperopt refuses a different --fsize."""
    result = gpu_failure(R403.format(kinds="FBMEM", reasons=FB_FULL))
    fb = explain(dataclasses.replace(result, settings={**result.settings, **settings}))
    assert f"raise -ll:fsize {where} (now 3072 MiB)" in fb.suggestion, fb.suggestion
    assert "--fsize" not in fb.suggestion, fb.suggestion


def gpu_failure(line: str, zsize: int = 6144) -> RunResult:
    """A run on one GPU that failed with `line`, as the compiled DSL mapper prints it (no GPU runs in CI)."""
    command = f"stencil -nx 15004 -ll:gpu 1 -ll:csize 16384 -ll:fsize 3072 -ll:zsize {zsize} -logfile stderr"
    return RunResult(app="stencil", mapper="tune.dsl", status="failed", stage="run", reason="aborted",
                     dsl="Task * GPU,CPU;\nRegion * * GPU FBMEM;\nRegion * * CPU SYSMEM;\n", log=line + "\n",
                     settings={"gpus": 1, "command": command})


R403 = ("[mapperopt] error R403: no memory of the list {kinds} can hold requirement 0 (private, points) of task "
        "'init_tile': {reasons}; processor GPU[node 0, proc 0]")
FB_FULL = "FBMEM: allocation of 471859200 bytes failed (capacity 3221225472 bytes; -ll:fsize sizes it)"
ZC_FULL = "ZCMEM: allocation of 471859200 bytes failed (capacity 6442450944 bytes; -ll:zsize sizes it)"


def test_full_framebuffer_spills_to_zero_copy_framebuffer_first():
    result = gpu_failure(R403.format(kinds="FBMEM", reasons=FB_FULL))
    fb = explain(result)
    assert fb.edits == (Edit("set_region_memory", {"task": "*", "region": "*", "proc": "GPU",
                                                   "memories": ["FBMEM", "ZCMEM"]}),)
    assert "Region * * GPU FBMEM,ZCMEM;" in fb.suggestion and "requirement 0 of 'init_tile'" in fb.suggestion
    assert "Region * * GPU FBMEM,ZCMEM;" in apply_edits_to_text(result.dsl, fb.edits)


def test_full_framebuffer_advice_names_no_timed_loop_for_a_users_program():
    """A benchmark's timed loop is known; a user's program's is not: the advice on what to spill says what to look
    at instead."""
    bench = explain(gpu_failure(R403.format(kinds="FBMEM", reasons=FB_FULL)))
    assert "the timed loop touches least" in bench.suggestion
    result = gpu_failure(R403.format(kinds="FBMEM", reasons=FB_FULL))
    own = dataclasses.replace(result, app="./prog", settings={**result.settings, "app_file": None})
    fb = explain(own)
    assert "timed loop" not in fb.suggestion and "ZCMEM first for the biggest regions" in fb.suggestion, fb.suggestion


def test_full_zero_copy_fallback_raises_its_size():
    fb = explain(gpu_failure(R403.format(kinds="FBMEM, ZCMEM", reasons=f"{FB_FULL}; {ZC_FULL}")))
    assert memory_settings(fb.edits) == {"zsize": 6144 + 1024}
    assert "ZCMEM is the full memory" in fb.suggestion


def test_no_zero_copy_memory_is_never_suggested_where_there_is_none():
    fb = explain(gpu_failure(R403.format(kinds="FBMEM", reasons=FB_FULL), zsize=0))
    assert "ZCMEM" not in fb.suggestion and memory_settings(fb.edits) == {"fsize": 3072 + 1024}


def test_a_size_edit_is_checked_and_is_not_a_program_edit():
    from mapperopt.autoguide import apply_edits
    from mapperopt.dsl import parse

    with pytest.raises(MapperoptError, match="changes a setting of the run"):
        apply_edits(parse("Task * CPU;\n"), [Edit("set_memory_size", {"option": "csize", "mb": 64})])
    with pytest.raises(MapperoptError, match="needs option one of csize, fsize, zsize"):
        memory_settings([Edit("set_memory_size", {"option": "rsize", "mb": 64})])


def test_memory_sizes_read_realm_units():
    """`-ll:fsize 3g` after `--` is 3 GiB, as Realm reads it (one parser, `descriptions.realm_size`); it was read as
    3 MiB."""
    from mapperopt.autoguide.capacity import memory_sizes

    result = gpu_failure(R403.format(kinds="FBMEM", reasons=FB_FULL))
    command = result.settings["command"].replace("-ll:fsize 3072", "-ll:fsize 3g").replace("-ll:zsize 6144",
                                                                                          "-ll:zsize 6GB")
    result = dataclasses.replace(result, settings={**result.settings, "command": command})
    assert memory_sizes(result) == {"csize": 16384, "fsize": 3072, "zsize": 6144}
    assert "raise --fsize (Legion's -ll:fsize; now 3072 MiB)" in explain(result).suggestion


# A real run (`mapperopt run --app './daxpy -n 2000000 -i 2' --mapper aos.dsl --once -- -ll:csize 64`, a tutorial-style
# daxpy whose `init_field` writes X, Y (32 MB) and `daxpy` reads them and writes Z, 16 MB): the mapper's AOS layout for
# daxpy alone makes a second instance of X, Y beside the one init_field wrote (Legion's default mapper runs it in
# 64 MiB).
AOS_DSL = "Task * CPU;\nLayout daxpy input_lp * AOS;\n"
AOS_R403 = ("[mapperopt] error R403: no memory of the list SYSMEM can hold requirement 1 (output_lp, ip, output_lr, "
            "is, output_fs) of task 'daxpy': SYSMEM: allocation of 16000000 bytes failed (capacity 67108864 "
            "bytes; -ll:csize sizes it); processor CPU[node 0, proc 0]")


def test_an_allocation_that_fits_the_empty_memory_names_the_layouts_that_make_extra_instances():
    """The failed instance would fit in the empty memory: other instances fill it. The advice says so and names the
    mapper's Layout statements for some tasks only (each makes instances of data other tasks laid out otherwise),
    beside the size to raise (the edits stay the size); a mapper without such statements is not told of them, and
    an instance larger than the memory keeps the plain advice."""
    command = "daxpy -n 2000000 -i 2 -ll:csize 64 -ll:cpu 1 -ll:util 1 -logfile stderr"
    result = RunResult(app="daxpy", mapper="aos.dsl", status="failed", stage="run", reason="aborted", dsl=AOS_DSL,
                       log=AOS_R403 + "\n", settings={"cpus": 1, "gpus": 0, "command": command, "app_file": None})
    fb = explain(result)
    assert "does not fit in its 64 MiB" not in fb.suggestion, fb.suggestion
    assert "(15 MiB) would fit in its 64 MiB alone, but other instances fill it" in fb.suggestion, fb.suggestion
    assert "line 2: `Layout daxpy input_lp * AOS;`" in fb.suggestion, fb.suggestion
    assert "Raise --csize to" in fb.suggestion and memory_settings(fb.edits) == {"csize": 256}
    plain = explain(dataclasses.replace(result, dsl="Task * CPU;\nLayout * * * AOS;\n"))
    assert "other instances fill it" in plain.suggestion and "Layout" not in plain.suggestion, plain.suggestion
    big = explain(dataclasses.replace(result, log=AOS_R403.replace("16000000", "80000000") + "\n"))
    assert "does not fit in its 64 MiB" in big.suggestion and "line 2:" not in big.suggestion, big.suggestion
    # Larger than the memory, on a partition's piece: it may be the whole region's instance, which Exact narrows.
    assert "may be the whole top-level region's" in big.suggestion, big.suggestion
    assert "`Layout daxpy output_lp * Exact;`" in big.suggestion, big.suggestion


def test_a_layout_that_makes_a_second_instance_is_named_and_the_run_without_it_fits(tmp_path):
    """Stencil's 16 MB grid in 24 MiB: `Layout increment * * AOS;` makes increment an AOS instance beside the one
    init_tile wrote, which does not fit; the feedback names that statement, and the same run without it succeeds."""
    aos = "Task * CPU;\nLayout increment * * AOS;\n"
    failed = run_benchmark("stencil", aos, size="ci", csize=24, extra_args=GRID, min_time_s=0, out_dir=tmp_path / "a")
    assert failed.status == "failed" and "R403" in failed.reason, failed.reason
    fb = explain(failed)
    assert "alone, but other instances fill it" in fb.suggestion and "line 2: `Layout increment * * AOS;`" in \
        fb.suggestion, fb.suggestion
    fixed = run_benchmark("stencil", "Task * CPU;\n", size="ci", csize=24, extra_args=GRID, min_time_s=0,
                          out_dir=tmp_path / "b")
    assert fixed.ok, f"{fixed.stage}: {fixed.reason}"


def test_an_aos_alignment_that_inflates_the_instance_is_named_before_any_memory_size(tmp_path):
    """Circuit's 13 KB of nodes with `AOS Align==1048576` ask for 1600 MiB: the padding, not the memory, is the
    cause. The feedback names that Layout statement (its line) first; its edits stay the memory's (the guided
    search's); the run with the named Align dropped succeeds in the same memory."""
    padded = "Task * CPU;\nRegion * * CPU SYSMEM;\nLayout * * * AOS C_order Align==1048576;\n"
    failed = run_benchmark("circuit", padded, size="ci", min_time_s=0, out_dir=tmp_path / "a")
    assert failed.status == "failed" and "R403" in failed.reason, failed.reason
    fb = explain(failed)
    assert fb.suggestion.startswith("The instance is likely that large because of the alignment"), fb.suggestion
    assert "line 3: `Layout * * * AOS C_order Align==1048576;`. Drop the Align" in fb.suggestion, fb.suggestion
    assert fb.edits and fb.edits[0].op == "set_memory_size", fb.edits
    assert "csize" not in fb.suggestion, fb.suggestion  # the cause to remove, not a run setting
    dropped = Edit("drop_layout_constraint", {"constraint": "Align", "task": "*", "region": "*", "target": "*"})
    fixed = run_benchmark("circuit", apply_edits_to_text(padded, (dropped,)), size="ci", min_time_s=0,
                          out_dir=tmp_path / "b")
    assert fixed.ok, f"{fixed.stage}: {fixed.reason}"


def test_a_huge_soa_alignment_is_named_and_no_memory_size(tmp_path):
    """`SOA Align==134217728` starts each of a region's fields on a 128 MiB boundary: circuit's pieces ask for 384 MiB
    of a 256 MiB SYSMEM that holds them unaligned. The feedback (a language model's only signal; it cannot change a
    run setting) names the Layout statement, not a larger --csize; the edits stay the memory's."""
    padded = "Task * CPU;\nLayout * * * SOA F_order Align==134217728;\n"
    failed = run_benchmark("circuit", padded, size="ci", min_time_s=0, out_dir=tmp_path / "a")
    assert failed.status == "failed" and "R403" in failed.reason, failed.reason
    fb = explain(failed)
    assert "line 2: `Layout * * * SOA F_order Align==134217728;`" in fb.suggestion, fb.suggestion
    assert "Align" in fb.suggestion and "csize" not in fb.suggestion, fb.suggestion
    assert fb.edits and fb.edits[0].op == "set_memory_size", fb.edits
