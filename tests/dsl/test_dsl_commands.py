"""`mapperopt check`, `fmt` and `explain` through the real command line entry point."""

import errno
import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from mapperopt.cli import cli
from mapperopt.descriptions import parse_machine_spec

EXAMPLES = Path(__file__).parent / "examples"

CONFIGS = EXAMPLES.parent.parent.parent / "configs"


def run(*args):
    return CliRunner().invoke(cli, list(args), standalone_mode=True)


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.dsl")), ids=lambda p: p.name)
def test_check_every_example(path):
    bench = {"e1_circuit.dsl": "circuit", "e2_stencil.dsl": "stencil"}.get(
        path.name, "circuit" if path.name.startswith(("s", "fig")) else None)
    result = run("check", str(path), *(["--bench", bench] if bench else []), "--machine", "1x4")
    assert result.exit_code == 0, result.output
    assert any(line.endswith(("ok", "warning(s)", "note(s)")) for line in result.output.splitlines())
    assert "machine: --machine 1x4, 1 node of 1 CPU and 4 GPUs" in result.output
    assert ("task and region names" in result.output) == (bench is None)


FB_ONLY = "Region * * CPU FBMEM;\n"


def test_check_without_machine_checks_this_machine(tmp_path):
    """A mapper that `run` refuses on this machine (no framebuffer without a GPU: E221) is refused by `check` too,
    and `check` says which machine it checked: the one `run` probes, with the run's memory flags."""
    path = tmp_path / "fb.dsl"
    path.write_text(FB_ONLY)
    for extra in ((), ("--bench", "circuit")):
        result = run("check", str(path), *extra)
        assert result.exit_code == 1 and "error[E221]" in result.output, result.output
        assert "machine: this one (" in result.output and "1 node of 1 CPU (memories SYSMEM" in result.output
    assert "as `mapperopt run circuit --size ci` sees it), 1 node of 1 CPU (memories SYSMEM 256 MiB)" in result.output
    path.write_text("Region * * CPU RDMEM;\n")  # RDMEM exists only when the run sizes it
    assert run("check", str(path), "--bench", "circuit").exit_code == 1
    result = run("check", str(path), "--bench", "circuit", "--", "-ll:rsize", "16")
    assert result.exit_code == 0 and "RDMEM 16 MiB" in result.output, result.output
    assert run("check", str(path), "--", "-p", "8").exit_code != 0  # a run's flags need a benchmark


def test_check_warns_of_a_memory_kind_the_machine_lacks_before_one_it_has(tmp_path):
    """`Region * * CPU FBMEM,SYSMEM;` checked on a machine without GPUs said nothing, while the mapper skips FBMEM at
    every mapping there (SYSMEM is used): W302 at FBMEM, on this machine as `run` probes it and on --machine's, with
    no error. With GPUs, FBMEM exists but no CPU sees it: W302 says that instead."""
    path = tmp_path / "fb-first.dsl"
    path.write_text("Region * * CPU FBMEM,SYSMEM;\n")
    for extra, here in (((), "this machine"), (("--machine", "1x0x2"), "--machine 1x0x2")):
        absent = (f"{path}:1:16: warning[W302]: memory kind 'FBMEM' does not exist on {here}, and CPU processors "
                  "never see it on any machine (FBMEM is a GPU's memory); it is skipped")
        result = run("check", str(path), "--bench", "circuit", *extra)
        assert result.exit_code == 0 and absent in result.output, result.output
        assert f"{path}: 0 error(s), 1 warning(s)" in result.output, result.output
    assert "machine: this one (" in run("check", str(path), "--bench", "circuit").output  # the premise: probed
    result = run("check", str(path), "--bench", "circuit", "--machine", "1x4")
    assert result.exit_code == 0, result.output
    assert (f"{path}:1:16: warning[W302]: memory kind 'FBMEM' is not visible from CPU processors on --machine 1x4; "
            "it is skipped") in result.output, result.output
    path.write_text("Region * * GPU FBMEM,SYSMEM;\n")  # GPUs see both: nothing to say
    assert run("check", str(path), "--bench", "circuit", "--machine", "1x4").output.startswith(f"{path}: ok")


IO_MAPPER = """mio = Machine(IO);
mc = Machine(CPU);
def on_io(Task task) {
    return mio.volume > 0 ? mio[task.ipoint[0] % mio.size[0], 0] : mc[0, 0];
}
IndexTaskMap check on_io;
"""


def test_check_without_machine_takes_the_runs_processor_flags(tmp_path):
    """`check -- -ll:io N` (as E205's hint and dsl-reference §12 say) checked a machine without IO processors, so a
    mapper sending a CPU task to an IO processor when there is one passed, and the run failed R402: the machine
    checked has the run's IO, Python and utility processors."""
    path = tmp_path / "io.dsl"
    path.write_text(IO_MAPPER)
    assert run("check", str(path), "--bench", "stencil").exit_code == 0  # no IO processor: the CPU fallback
    result = run("check", str(path), "--bench", "stencil", "--", "-ll:io", "2")
    assert result.exit_code == 1 and "error[E209]" in result.output and "IO" in result.output, result.output
    path.write_text("mu = Machine(UTIL);\nmp = Machine(PY);\n"
                    "def f(Task task) { return mu.size[1] == 2 && mp.size[1] == 1 ? mp[0, 0] : mu[9, 9]; }\n"
                    "IndexTaskMap check f;\n")
    result = run("explain", str(path), "--bench", "stencil", "--", "-ll:util", "2", "-ll:py", "1")
    assert "E205" not in result.output and "PY" in result.output, result.output


def test_machine_option_with_a_size_takes_the_size_memories(tmp_path):
    """`--size gpu --machine 1x1` gave --machine's default memories (FBMEM 16 GiB) although `--size` gives the run's
    memories (docs/dsl-guide.md): pennant's gpu size asks csize 16384, fsize 40960, zsize 2048 (MiB). The run's
    flags after `--` still win, as in the run; check, explain and compile read the same machine."""
    path = tmp_path / "p.dsl"
    path.write_text("Task * GPU,CPU;\n")
    base = ("--bench", "pennant", "--size", "gpu", "--machine", "1x1")
    result = run("check", str(path), *base)
    assert "(memories SYSMEM 16 GiB, FBMEM 40 GiB, ZCMEM 2 GiB)" in result.output, result.output
    result = run("check", str(path), *base, "--", "-ll:fsize", "1000")
    assert "(memories SYSMEM 16 GiB, FBMEM 1000 MiB, ZCMEM 2 GiB)" in result.output, result.output
    result = run("explain", str(path), *base)
    assert "machine: 1 node of 1 CPU and 1 GPU (memories SYSMEM 16 GiB, FBMEM 40 GiB, ZCMEM 2 GiB)" in result.output
    compiled = run("compile", str(path), *base, "-o", str(tmp_path / "p.so"))
    assert compiled.exit_code == 0, compiled.output


def test_machine_option_takes_the_run_memory_flags(tmp_path):
    """--machine with the run's flags after `--`: `-ll:rsize`/`-ll:nsize` give each node RDMEM/SOCKMEM, as a run with
    them has (E221 only without them), and `-ll:csize`/`-ll:fsize`/`-ll:zsize` size the memories (`-ll:zsize 0`: no
    zero-copy memory); explain and compile read them too."""
    path = tmp_path / "rd.dsl"
    path.write_text("Task * CPU;\nRegion * * CPU RDMEM;\n")
    base = ("--bench", "circuit", "--machine", "1x0x2")
    assert run("check", str(path), *base).exit_code == 1
    result = run("check", str(path), *base, "--", "-ll:rsize", "64")
    assert result.exit_code == 0, result.output
    assert "1 node of 2 CPUs (memories SYSMEM 256 MiB, RDMEM 64 MiB)" in result.output  # circuit ci's csize 256
    assert run("explain", str(path), *base, "--", "-ll:rsize", "64").exit_code == 0
    assert run("compile", str(path), *base, "-o", str(tmp_path / "m.so"), "--", "-ll:rsize", "64"
               ).exit_code == 0
    path.write_text("Task * CPU;\nRegion * * CPU SOCKMEM;\n")
    assert run("check", str(path), *base, "--", "-ll:nsize", "32").exit_code == 0
    path.write_text("Region * * GPU ZCMEM;\n")
    result = run("check", str(path), "--bench", "circuit", "--machine", "1x2", "--", "-ll:fsize", "1024",
                 "-ll:zsize", "0", "-ll:csize", "2048")
    assert result.exit_code == 1 and "error[E221]" in result.output, result.output
    assert "(memories SYSMEM 2 GiB, FBMEM 1 GiB)" in result.output


def test_a_second_mapper_file_is_refused_not_taken_as_a_run_flag(tmp_path):
    """`check f1.dsl e1.dsl --bench circuit` once passed e1.dsl (with a syntax error) to the run as a flag, unchecked,
    and said ok: anything left over before `--` is refused, naming it."""
    good, bad = tmp_path / "f1.dsl", tmp_path / "e1.dsl"
    good.write_text("Task * CPU;\n")
    bad.write_text("Task * CPU\n")
    for command in ("check", "explain", "compile"):
        result = run(command, str(good), str(bad), "--bench", "circuit", "--machine", "1x4")
        assert result.exit_code == 2, result.output
        assert (f"unexpected argument '{bad}': {command} takes one mapper file; flags for the run go after `--`"
                in result.output)


def test_check_refuses_a_layout_the_run_is_certain_to_reject(tmp_path):
    """AOS instances for stencil, listed GPU,CPU: on a machine without GPUs its CPU kernel runs and rejects them, so
    `check` says error (E223) and exits 1, as `run` refuses it; with GPUs the GPU variant takes them."""
    path = tmp_path / "aos.dsl"
    path.write_text("Task * GPU,CPU;\nLayout * * * AOS;\n")
    result = run("check", str(path), "--bench", "stencil", "--machine", "1x0x2")
    assert result.exit_code == 1, result.output
    assert f"{path}:2:1: error[E223]: the application's variants need SOA F_order instances" in result.output
    assert "hint: write `Layout * * * SOA;` instead" in result.output
    assert run("check", str(path), "--bench", "stencil", "--machine", "1x2").exit_code == 0


def test_the_gemm_docs_say_which_layouts_check_refuses_and_which_reach_dgemm(tmp_path):
    """docs/gemm.md said an F_order mapper stops the run in DGEMM, and reports/gemm-h200.md gave such a mapper as the
    way to see that message, but `check` (and so `run`) refuses F_order first (E223); only AOS padding (W327) passes
    check and reaches task_4's stride check. The docs' account is what check does."""
    forder, padded = tmp_path / "forder.dsl", tmp_path / "padded.dsl"
    forder.write_text("Task * CPU;\nLayout * * * SOA F_order;\n")
    padded.write_text("Task * CPU;\nLayout * * * AOS C_order Align==128;\n")
    result = run("check", str(forder), "--bench", "summa", "--machine", "1x0x2")
    assert result.exit_code == 1 and "error[E223]" in result.output, result.output
    result = run("check", str(padded), "--bench", "summa", "--machine", "1x0x2")
    assert result.exit_code == 0 and "warning[W327]" in result.output, result.output
    root = Path(__file__).resolve().parents[2]
    section = (root / "docs" / "gemm.md").read_text().split("\n## The BLAS and the layout\n")[1].split("\n## ")[0]
    reaches = section.split("** On entry to DGEMM")[0]
    reaches = reaches.split("E223")[-1]  # what the doc says gets past check to the BLAS
    assert "F_order" not in reaches and "Align" in reaches, reaches
    assert "E223" in section and "W327" in section, section
    report = (root / "reports" / "gemm-h200.md").read_text().split("\n## Layout check on the GPU")[1].split("\n## ")[0]
    assert "E223" in report, report  # the F_order mapper it measured is refused at check now


def test_machine_spec_says_what_it_means(tmp_path):
    """`1x1` is one node with one GPU (and one CPU); labelled counts say so themselves; check prints the machine."""
    path = tmp_path / "fb.dsl"
    path.write_text(FB_ONLY)
    result = run("check", str(path), "--machine", "1x1")
    assert result.exit_code == 0 and "machine: --machine 1x1, 1 node of 1 CPU and 1 GPU" in result.output
    for spec, words in (("4gpu", "1 node of 1 CPU and 4 GPUs"), ("2cpu", "1 node of 2 CPUs"),
                        ("2nodes,4gpus,2cpus", "2 nodes of 2 CPUs and 4 GPUs each"),
                        ("2n4g", "2 nodes of 1 CPU and 4 GPUs each"),
                        ("2nodes x 4gpus", "2 nodes of 1 CPU and 4 GPUs each"),
                        ("4g+2c", "1 node of 2 CPUs and 4 GPUs")):
        assert parse_machine_spec(spec).counts() == words
    assert run("check", str(path), "--machine", "1cpu").exit_code == 1  # no GPU, so no framebuffer
    for bad in ("2gpu4gpu", "gpu4", "1x"):
        result = run("check", str(path), "--machine", bad)
        assert result.exit_code == 1 and "labelled: 4gpu, 2cpu" in result.exception.hint, result.output
    for junk in ("4gpux", "x4gpu", "4gpu,"):  # separators only between counts: no typo read as 4 GPUs
        result = run("check", str(path), "--machine", junk)
        assert result.exit_code == 1, result.output
        assert f"machine '{junk}' is neither of the form NODESxGPUS[xCPUS]" in str(result.exception)
        assert "labelled: 4gpu, 2cpu" in result.exception.hint


# Divides by zero at launch point 3: circuit's ci size launches 2 points (-p 4 -pps 2), `-p 8` launches 4.
POINT_3_FAILS = """m = Machine(CPU);
def f(Task task) {
    return m[0, (task.ipoint[0] / (3 - task.ipoint[0])) % m.size[1]];
}
IndexTaskMap calculate_new_currents f;
"""


def test_check_sees_the_launch_domains_of_the_run_flags(tmp_path):
    path = tmp_path / "p3.dsl"
    path.write_text(POINT_3_FAILS)
    result = run("check", str(path), "--bench", "circuit", "--machine", "1x0")
    assert result.exit_code == 0, result.output
    assert "launch domains: those of `mapperopt run circuit --size ci`" in result.output
    result = run("check", str(path), "--bench", "circuit", "--machine", "1x0", "--", "-p", "8")
    assert result.exit_code == 1 and "error[E219]" in result.output and "launch domain (4,)" in result.output
    assert "launch domains: those of `mapperopt run circuit --size ci -- -p 8`" in result.output


def test_explain_and_compile_take_the_run_size_and_flags_as_check_does(tmp_path):
    """`explain` and `compile` see the launch domains of the run that --size and the flags after `--` describe."""
    path = tmp_path / "p3.dsl"
    path.write_text(POINT_3_FAILS)
    for command in ("explain", "compile"):
        result = run(command, str(path), "--bench", "circuit", "--machine", "1x0")
        assert result.exit_code == 0, result.output
        result = run(command, str(path), "--bench", "circuit", "--machine", "1x0", "--", "-p", "8")
        assert result.exit_code == 1 and "error[E219]" in result.output, (command, result.output)
        assert "launch domain (4,)" in result.output
        assert run(command, str(path), "--", "-p", "8").exit_code != 0  # a run's flags need a benchmark
    result = run("explain", str(CONFIGS / "circuit.dsl"), "--bench", "circuit", "--machine", "1x0", "--", "-p", "8")
    assert result.exit_code == 0 and "calculate_new_currents (index launch over (4,))" in result.output
    for command in ("check", "explain", "compile"):  # a size without a program to size is refused, not ignored
        result = run(command, str(path), "--size", "small")
        assert result.exit_code == 1 and "--size small needs --bench NAME" in str(result.exception)


def test_check_reports_errors_and_exits_1(tmp_path):
    bad = tmp_path / "bad.dsl"
    bad.write_text("Task calc_new_currents GPU;\nRegion * rp_shard GPU ZCMEM;\n")
    result = run("check", str(bad), "--bench", "circuit", "--machine", "1x4")
    assert result.exit_code == 1
    assert f"{bad}:1:6: error[E202]: unknown task 'calc_new_currents'" in result.output
    assert "hint: did you mean 'calculate_new_currents'?" in result.output
    assert f"{bad}:2:10: error[E203]" in result.output
    assert "2 error(s), 0 warning(s)" in result.output


def test_check_without_a_program_says_both_ways_to_give_one(tmp_path):
    """A task name no program has passes without --bench/--app: the note names both, a user's program (--app) too."""
    path = tmp_path / "t.dsl"
    path.write_text("Task * CPU;\nTask jacobi CPU;\n")
    result = run("check", str(path), "--machine", "1x0x1")
    assert result.exit_code == 0
    assert ("note: not checked: task and region names (give --bench NAME, or --app for your own program)"
            in result.output), result.output


def test_check_and_compile_name_the_file_alone_for_a_diagnostic_about_the_whole_file(tmp_path):
    """W314 is about no line: the file is named without a line past its end, and no source excerpt follows."""
    path = tmp_path / "w.dsl"
    path.write_text("Task * CPU;\nInstanceLimit update_voltages 0;\n")
    for command in ("check", "compile"):
        result = run(command, str(path), "--bench", "circuit", "--machine", "1x4")
        assert result.exit_code == 1
        assert (f"    |{' ' * 31}^\n  hint: give a count of 1 or more (the most instances of the task mapped and "
                "unfinished per processor), e.g. `InstanceLimit update_voltages 1;`, or remove the statement to leave "
                f"them unlimited\n{path}: note[W314]: static evaluation skipped because of the errors above: once "
                "they are fixed, check evaluates the load phase, every mapping function at every launch point and the "
                "instance each requirement gets (E205, E209, E217, E219, E222, E223)\n\n"
                f"{path}: 1 error(s), 0 warning(s), 1 note(s)\n") in result.output, result.output


def test_check_summary_counts_notes_apart_from_warnings(tmp_path):
    """W304 (an unused machine model) is a note: the summary counts it as one, not as a warning."""
    path = tmp_path / "n.dsl"
    path.write_text("Task * GPU;\nm = Machine(CPU);\n")
    result = run("check", str(path), "--machine", "1x0x1")
    assert "warning[W303]" in result.output and "note[W304]" in result.output, result.output
    assert f"{path}: 0 error(s), 1 warning(s), 1 note(s)\n" in result.output, result.output
    path.write_text("Task * GPU;\n")
    assert f"{path}: 0 error(s), 1 warning(s)\n" in run("check", str(path), "--machine", "1x0x1").output


def test_check_names_the_machine_in_one_wording(tmp_path):
    """The diagnostics, the summary's machine line and explain say the machine in the same words (W303 said "1x0x1",
    the summary "1 node of 1 CPU"); with --machine, as the summary names it, not "this machine" (the one a run sees)."""
    path = tmp_path / "g.dsl"
    path.write_text("ControlReplicate calc;\nTask * GPU;\n")
    result = run("check", str(path), "--machine", "1x0x1")
    assert "processor kind 'GPU' has no processors on --machine 1x0x1 (1 node of 1 CPU); it is skipped" in \
        result.output, result.output
    assert "ControlReplicate has no effect on --machine 1x0x1 (1 node of 1 CPU)" in result.output, result.output
    assert "this machine" not in result.output, result.output
    assert "machine: --machine 1x0x1, 1 node of 1 CPU (memories SYSMEM 512 MiB)" in result.output
    assert "1x0x1" not in result.output.replace("--machine 1x0x1", "")
    # explain too (it said "1 node(s), per node CPU 1")
    path.write_text("Task * CPU;\n")
    result = run("explain", str(path), "--bench", "circuit", "--machine", "1x0x1")
    assert result.output.startswith("machine: 1 node of 1 CPU (memories SYSMEM 256 MiB)\n"), result.output


def test_check_with_machine_names_it_in_notes_and_advises_no_machine(tmp_path):
    """With --machine, the static evaluation's notes and W320 said "this machine", and W320 advised to "describe the
    machine meant with --machine", which was given: they name --machine's machine, and W320 advises the spread
    alone. Without --machine (the checker's own use), the advice stays."""
    path = tmp_path / "one-node.dsl"
    path.write_text("Task * CPU;\nmc = Machine(CPU);\ndef f(Task task) { return mc[0, 0]; }\nIndexTaskMap stencil f;\n")
    result = run("check", str(path), "--bench", "stencil", "--machine", "4node,1cpu")
    assert result.exit_code == 0, result.output
    assert "nodes 1-3 of --machine 4node,1cpu get none of them" in result.output, result.output
    hints = [line for line in result.output.splitlines() if line.startswith("  hint:")]
    assert hints and not any("--machine" in h for h in hints), hints
    path.write_text("Task * CPU;\nmc = Machine(CPU);\n"  # one CPU a node: the divisor is 0
                    "def f(Task task) { return mc[0, task.ipoint[0] / (mc.size[1] - 1)]; }\nIndexTaskMap stencil f;\n")
    result = run("check", str(path), "--bench", "stencil", "--machine", "2x4")
    assert result.exit_code == 1, result.output
    assert ("note: static evaluation of task 'stencil' on --machine 2x4 (2 nodes of 1 CPU and 4 GPUs each); at run "
            "time: R401") in result.output, result.output
    assert "this machine" not in result.output, result.output


def test_check_syntax_error(tmp_path):
    bad = tmp_path / "bad.dsl"
    bad.write_text("def cyclic(Task task):\n    return 1;\n")
    result = run("check", str(bad))
    assert result.exit_code == 1
    assert f"{bad}:1:22: error[E101]" in result.output
    assert "    |                      ^" in result.output
    # The same summary line as for the checker's errors, from every command that parses.
    # After an empty line: the summary starts with the file's name, as a diagnostic does, here just after a hint.
    assert result.output.endswith("  hint: write def cyclic(Task task) { ...; return <expr>; }\n\n"
                                  f"{bad}: 1 error(s), 0 warning(s) (parsing stops at the first syntax error)\n")
    for command in (("fmt",), ("explain", "--bench", "circuit", "--machine", "1x0"), ("compile",)):
        result = run(*command[:1], str(bad), *command[1:])
        assert result.exit_code == 1 and f"{bad}: 1 error(s), 0 warning(s)" in result.output, (command, result.output)
    bad.write_text("Task nope CPU;\n")
    result = run("compile", str(bad), "--bench", "circuit")
    assert result.exit_code == 1 and f"{bad}: 1 error(s), 0 warning(s)" in result.output, result.output


def test_check_refuses_a_virtual_leaf_region_on_this_machine(tmp_path):
    """`Region * * CPU VIRTUAL;` fails at run time (R403: a leaf task needs an instance); check, on the machine
    `run` probes, reports it as E222 with what to write instead."""
    path = tmp_path / "virtual.dsl"
    path.write_text("Task * CPU;\nRegion * * CPU VIRTUAL;\n")
    result = run("check", str(path), "--bench", "circuit")
    assert result.exit_code == 1, result.output
    assert f"{path}:2:1: error[E222]: no memory of the list VIRTUAL can hold requirement 0" in result.output
    assert ("hint: a leaf task needs a physical instance: list a memory instead of VIRTUAL, e.g. "
            "`Region * * CPU SYSMEM;`") in result.output


def test_check_with_machine_evaluates_mappings(tmp_path):
    result = run("check", str(EXAMPLES / "e1_circuit.dsl"), "--bench", "circuit", "--machine", "1x0x2")
    assert result.exit_code == 1 and "error[E219]" in result.output
    assert run("check", str(CONFIGS / "circuit.dsl"), "--bench", "circuit", "--machine", "1x0x2").exit_code == 0


def test_check_unknown_bench(tmp_path):
    result = run("check", str(EXAMPLES / "s01.dsl"), "--bench", "nope")
    assert result.exit_code != 0
    assert "unknown benchmark 'nope'; known: " in str(result.exception or result.output)


def test_fmt_prints_and_writes(tmp_path):
    path = tmp_path / "m.dsl"
    path.write_text("Task *   GPU ,CPU ;  # c\nx=1+2*3;\n")
    result = run("fmt", str(path))
    assert result.exit_code == 0
    assert result.output == "Task * GPU,CPU;      # c\nx = 1 + 2 * 3;\n"  # the comment keeps its column
    assert run("fmt", str(path), "--write").exit_code == 0
    assert path.read_text() == "Task * GPU,CPU;      # c\nx = 1 + 2 * 3;\n"


def test_fmt_write_formats_a_link_s_target_keeps_the_mode_and_refuses_a_read_only_file(tmp_path):
    """A mapper kept as a symbolic link is formatted where it lives (the link stays a link), its mode is kept, and a
    read-only file is left alone with an error naming it."""
    messy, tidy = "Task *   GPU ,CPU ;\n", "Task * GPU,CPU;\n"
    target, link = tmp_path / "shared.dsl", tmp_path / "link.dsl"
    target.write_text(messy)
    target.chmod(0o750)
    link.symlink_to(target.name)
    assert run("fmt", "--write", str(link)).exit_code == 0
    assert link.is_symlink() and target.read_text() == tidy and (target.stat().st_mode & 0o777) == 0o750
    frozen = tmp_path / "frozen.dsl"
    frozen.write_text(messy)
    frozen.chmod(0o444)
    result = run("fmt", "--write", str(frozen))
    assert result.exit_code == 1 and f"{frozen} is read-only" in str(result.exception)
    assert frozen.read_text() == messy and (frozen.stat().st_mode & 0o777) == 0o444


def test_fmt_write_keeps_a_hard_link_one_file(tmp_path, monkeypatch):
    """A mapper with two names (a hard link) stays one file: both names read the formatted text; a full disk leaves
    it as it was."""
    first, second = tmp_path / "a.dsl", tmp_path / "b.dsl"
    first.write_text("Task *   GPU ,CPU ;\n")
    second.hardlink_to(first)
    inode = first.stat().st_ino
    assert run("fmt", "--write", str(second)).exit_code == 0
    assert first.read_text() == second.read_text() == "Task * GPU,CPU;\n"
    assert first.stat().st_ino == second.stat().st_ino == inode and first.stat().st_nlink == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.dsl", "b.dsl"]
    first.write_text("x=1;\n" * 50)

    def full(self, text, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Path, "write_text", full)
    assert run("fmt", "--write", str(first)).exit_code == 1
    monkeypatch.undo()
    assert second.read_text() == "x=1;\n" * 50
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.dsl", "b.dsl"]


@pytest.mark.parametrize("code", [errno.EBUSY, errno.EXDEV])
def test_fmt_write_on_a_file_mounted_alone_writes_it_in_place(tmp_path, monkeypatch, code):
    """A file bind-mounted alone (Docker `-v my.dsl:/w/my.dsl`) cannot be replaced by a rename: EBUSY (or EXDEV) was a
    traceback. It is written in place instead, its text first written beside it whole, and nothing is left beside."""
    path = tmp_path / "m.dsl"
    path.write_text("Task *   GPU ,CPU ;\n")
    inode = path.stat().st_ino

    def mount_point(source, target):
        raise OSError(code, os.strerror(code), str(source), str(target))

    monkeypatch.setattr(os, "replace", mount_point)
    result = run("fmt", "--write", str(path))
    assert result.exit_code == 0, result.output + str(result.exception)
    assert path.read_text() == "Task * GPU,CPU;\n" and path.stat().st_ino == inode
    assert [p.name for p in tmp_path.iterdir()] == ["m.dsl"]


def test_fmt_write_on_a_full_disk_keeps_the_file_and_names_it(tmp_path, monkeypatch, capsys):
    import errno
    import os

    from mapperopt.cli import main

    path = tmp_path / "m.dsl"
    path.write_text("Task *   GPU ,CPU ;\n" * 50)
    original = path.read_text()
    real_write_text = Path.write_text

    def full(self, text, *args, **kwargs):  # as a nearly full disk does: part written, then ENOSPC naming no file
        real_write_text(self, text[: len(text) // 3], *args, **kwargs)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Path, "write_text", full)
    assert main(["fmt", str(path), "--write"]) == 1
    monkeypatch.undo()
    assert path.read_text() == original
    assert [p.name for p in tmp_path.iterdir()] == ["m.dsl"]  # no partial copy left beside it
    assert f"cannot write {path}: no space left on device" in capsys.readouterr().err


def test_fmt_check_lists_the_files_it_would_change_and_changes_none(tmp_path):
    messy, tidy = tmp_path / "messy.dsl", tmp_path / "tidy.dsl"
    messy.write_text("Task *   GPU ,CPU ;\n")
    tidy.write_text("Task * GPU,CPU;\n")
    result = run("fmt", "--check", str(messy), str(tidy))
    assert result.exit_code == 1 and result.output == f"would reformat {messy}\n"
    assert messy.read_text() == "Task *   GPU ,CPU ;\n"
    assert run("fmt", "--check", str(tidy)).exit_code == 0
    for args, words in ((("--check", "--write", str(tidy)), "give one of them"),
                        ((str(messy), str(tidy)), "2 files given: print one at a time, or give --write or --check")):
        result = run("fmt", *args)
        assert result.exit_code == 2 and words in result.output, result.output


def test_fmt_check_exits_2_on_a_file_it_cannot_read_or_parse_and_1_on_one_not_formatted(tmp_path, capsys):
    """`fmt --check` exited 1 both for a file not formatted and for one it could not read or parse, so a CI step could
    not tell "run fmt --write" from "the file is broken": an error is exit status 2, `would reformat` alone is 1."""
    from mapperopt.cli import main

    messy, broken, binary = tmp_path / "messy.dsl", tmp_path / "broken.dsl", tmp_path / "latin1.dsl"
    messy.write_text("Task *   GPU ,CPU ;\n")
    broken.write_text("Task * CPU\n")
    binary.write_bytes(b"Task t GPU; # caf\xe9\n")
    assert main(["fmt", "--check", str(messy)]) == 1
    assert capsys.readouterr().out == f"would reformat {messy}\n"
    for bad, code in ((broken, "E105"), (binary, "E112"), (tmp_path / "missing.dsl", "cannot read")):
        assert main(["fmt", "--check", str(messy), str(bad)]) == 2, bad
        out, err = capsys.readouterr()
        assert code in err, err
    assert "cannot be read or parsed exits 2" in " ".join(CliRunner().invoke(cli, ["fmt", "--help"]).output.split())
    # without --check, a file that does not parse is an input error as in every other command: exit status 1
    assert main(["fmt", str(broken)]) == 1


def test_fmt_keeps_config_mappers_unchanged(tmp_path):
    result = run("fmt", "--check", *map(str, sorted(CONFIGS.glob("*.dsl"))))
    assert result.exit_code == 0, result.output


def test_explain_circuit_on_m14():
    result = run("explain", str(EXAMPLES / "e1_circuit.dsl"), "--bench", "circuit", "--machine", "1x4", "--domain", "8")
    assert result.exit_code == 0, result.output
    out = result.output
    section = out[out.index("calculate_new_currents (index launch over (8,))"):out.index("distribute_charge (")]
    assert "processor kind: GPU" in section
    assert "1  rp_shared   ZCMEM (then FBMEM)  SOA C_order" in section  # its effective list (§7.2)
    assert "0  rp_private  FBMEM               SOA C_order" in section
    assert "point     0    1    2    3    4    5    6    7" in section
    assert "proc    0.0  0.0  0.1  0.1  0.2  0.2  0.3  0.3" in section
    assert "check_circuit (single launch)" in out
    assert "processor: CPU (Legion default)" in out


def test_explain_shows_collect_memory_and_instance_limit(tmp_path):
    """Every decision the mapper makes, these two too: a user who follows the advice `CollectMemory T *;` sees it."""
    base = "Task * CPU;\nRegion * * CPU SYSMEM;\n"
    plain, tuned = tmp_path / "plain.dsl", tmp_path / "tuned.dsl"
    plain.write_text(base)
    tuned.write_text(base + "CollectMemory calculate_new_currents *;\nInstanceLimit distribute_charge 2;\n")
    outs = [run("explain", str(p), "--bench", "circuit", "--machine", "1x0x1") for p in (plain, tuned)]
    assert [r.exit_code for r in outs] == [0, 0], outs[1].output
    assert "CollectMemory" not in outs[0].output and "InstanceLimit" not in outs[0].output
    out = outs[1].output
    section = out[out.index("calculate_new_currents ("):out.index("distribute_charge (")]
    assert "collected after use (CollectMemory): arg " in section
    # InstanceLimit is back-pressure on tasks, not a limit on instances (it said "instances mapped ahead at most")
    assert ("tasks mapped but not finished, per processor, at most (InstanceLimit: back-pressure): 2"
            in out[out.index("distribute_charge ("):]), out
    assert "instances mapped ahead" not in out


def test_explain_says_which_collected_requirements_stay_tracked(tmp_path):
    """Johnson's task_4 reduces into A, so CollectMemory leaves task_1's read of A tracked (note R457): explain says
    so, with the reducer, instead of leaving the argument out; task_4's own reads of B and C are collected."""
    path = tmp_path / "j.dsl"
    path.write_text("Task * CPU;\nLayout * * * C_order;\nCollectMemory task_1 *;\nCollectMemory task_4 *;\n")
    result = run("explain", str(path), "--bench", "johnson", "--machine", "1x0x1")
    assert result.exit_code == 0, result.output
    out = result.output
    section = out[out.index("\ntask_1 ("):out.index("\ntask_2 (")]
    assert "  kept tracked despite CollectMemory: arg 0 ('task_4' reduces into its fields, R457)" in section
    assert "collected after use" not in section
    section = out[out.index("\ntask_4 ("):]
    assert "collected after use (CollectMemory): arg 1, 2" in section and "kept tracked" not in section
    path.write_text("Task * CPU;\nCollectMemory adv_pos_full 2;\n")  # two tasks reduce into its fields: both named
    result = run("explain", str(path), "--bench", "pennant", "--machine", "1x0x1")
    assert ("  kept tracked despite CollectMemory: arg 2 ('sum_point_mass' and 'sum_point_force' reduce into its "
            "fields, R457)") in result.output, result.output


def test_explain_table_header_lines_up_with_short_region_names():
    """A user's program names a region `tiles`, shorter than the header's "region"."""
    from mapperopt.dsl import parse
    from mapperopt.dsl.commands import _explanation_text, explain_decisions, load_app

    machine = parse_machine_spec("1x0x1")
    entries = explain_decisions(parse("Task * CPU;\n"), load_app("circuit"), machine)
    for entry in entries:
        entry["regions"] = [{**r, "name": "t"} for r in entry["regions"]]
    lines = _explanation_text(entries, machine).splitlines()
    headers = [i for i, line in enumerate(lines) if line.startswith("  arg  region")]
    assert headers
    for i in headers:
        assert lines[i + 1].index("SYSMEM") == lines[i].index("memory"), lines[i:i + 2]


def test_explain_writes_a_region_name_that_is_no_identifier_as_a_selector_writes_it():
    """A program that attaches "grid.ghost" to a partition: explain showed it bare, and copied into a statement it
    is a syntax error (E100); shown as the DSL's string, the statement written from it checks clean."""
    from mapperopt.descriptions import AppDescription
    from mapperopt.dsl import parse
    from mapperopt.dsl.checker import check
    from mapperopt.dsl.commands import _explanation_text, explain_decisions

    app = AppDescription.from_json({"schema": "mapperopt.app/1", "app": "heat", "discovered": True, "tasks": [
        {"name": "stencil", "task_id": 2, "variants": ["CPU"], "launch": "index", "leaf": True, "domain": [4],
         "regions": [{"index": 0, "names": ["grid.ghost", "grid"], "privilege": "read_only", "fields": ["u"],
                      "field_sizes": [8]},
                     {"index": 1, "names": ["owned", "grid"], "privilege": "read_write", "fields": ["u_new"],
                      "field_sizes": [8]}]}],
        "region_tree": [{"name": "grid", "kind": "region", "parent": None},
                        {"name": "grid.ghost", "kind": "partition", "parent": "grid"},
                        {"name": "owned", "kind": "partition", "parent": "grid"}]})
    machine = parse_machine_spec("1x0x1")
    lines = _explanation_text(explain_decisions(parse("Task * CPU;\n"), app, machine), machine).splitlines()
    rows = {line.split()[1]: line for line in lines if line.startswith(("    0 ", "    1 "))}
    assert set(rows) == {'"grid.ghost"', "owned"}, lines  # an identifier stays bare
    assert check(parse('Region stencil "grid.ghost" CPU SYSMEM;\n'), app, machine) == []  # as shown


def test_explain_reports_runtime_errors_per_point():
    result = run("explain", str(EXAMPLES / "s01.dsl"), "--bench", "circuit", "--machine", "1x4", "--domain", "6")
    assert result.exit_code == 1  # the mapper has errors: some of its points fail
    assert "proc    0.0  0.1  0.2  0.3 R400 R400" in result.output
    assert "[mapperopt] error R400: processor index out of bound" in result.output


def test_explain_shows_the_top_level_task(tmp_path):
    """SingleTaskMap and Task statements map the top-level task too (the compiled mapper's trace has it): explain
    shows it first, with its processor or set, and its JSON record is the one the trace has."""
    import json

    dsl = tmp_path / "top.dsl"
    dsl.write_text("Task * CPU;\nmc = Machine(CPU);\ndef one(Task task) { return mc[0, 1]; }\n"
                   "def anycpu(Task task) { return mc[0, *]; }\nSingleTaskMap * one;\n")
    result = run("explain", str(dsl), "--bench", "stencil", "--machine", "1x0x4")
    assert result.exit_code == 0, result.output
    assert "\nmain (top-level task)\n  processor kind: CPU\n  processor: CPU[node 0, proc 1]\n" in result.output
    assert result.output.index("main (top-level task)") < result.output.index("init_tile (index launch")
    dsl.write_text(dsl.read_text().replace("SingleTaskMap * one;", "SingleTaskMap * anycpu;"))
    out = run("explain", str(dsl), "--bench", "stencil", "--machine", "1x0x4", "--json")
    first = json.loads(out.output.splitlines()[0])
    assert first["task"] == "main" and first["placed_by"] == "map" and first["proc"]["index"] is None, first
    assert [p["index"] for p in first["set"]] == [0, 1, 2, 3], first


FAILING_POINTS = """Task * CPU;
mc = Machine(CPU);
def f(Task task) { return mc[0, task.ipoint[0] / 2]; }
IndexTaskMap calculate_new_currents f;
"""


@pytest.mark.parametrize("how", [("--", "-p", "8"), ("--domain", "4")], ids=["run-domains", "domain-option"])
def test_explain_shows_failing_points_whichever_way_the_domain_is_given(tmp_path, how):
    """The same 4-point launch, from the run's flags (where check's static evaluation finds the failing points) or
    from --domain (where only explain's evaluation does): the placement table with the failing points, and exit
    status 1; with the run's domains check's error follows the table, and an error check finds without evaluating
    a point still stops explain before any table."""
    dsl = tmp_path / "rt.dsl"
    dsl.write_text(FAILING_POINTS)
    args = ["explain", str(dsl), "--bench", "circuit", "--machine", "1x0x1"]
    result = run(*args, *how)
    assert result.exit_code == 1, result.output
    assert "calculate_new_currents (index launch over (4,))" in result.output, result.output
    assert "  proc    0.0  0.0 R400 R400\n" in result.output, result.output
    assert "not counted: 2 failing" in result.output, result.output
    if how[0] == "--":
        assert result.output.index("error[E205]: processor index out of bound") > result.output.index("  proc    0.0")
        assert "rt.dsl: 1 error(s), 0 warning(s)" in result.output
    # --json: the records as without failing points, a failing point's with the same `task`, `point` and `domain`
    # keys and its error (docs/running.md, docs/dsl.md), then the balance record counting it; exit status 1.
    result = CliRunner().invoke(cli, [*args, "--json", *how])
    assert result.exit_code == 1, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    failing = [r for r in records if "error" in r]
    assert [(r["task"], r["point"], r["domain"]) for r in failing] == [("calculate_new_currents", [2], [4]),
                                                                       ("calculate_new_currents", [3], [4])], failing
    assert "R400" in failing[0]["error"], failing
    assert any(r.get("balance", {}).get("failing") == 2 for r in records), records
    dsl.write_text(FAILING_POINTS + "Region * no_such_region CPU SYSMEM;\n")
    result = run(*args, *how)
    assert result.exit_code == 1 and "error[E203]" in result.output, result.output
    assert "(index launch over" not in result.output, result.output


def test_explain_2d_domain_and_png(tmp_path):
    png = tmp_path / "out.png"
    result = run("explain", str(CONFIGS / "stencil.dsl"), "--bench", "stencil", "--machine", "2x2", "--domain", "2x2",
                 "--png", str(png))
    assert result.exit_code == 0, result.output
    assert "i0 \\ i1" in result.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_explain_png_draws_the_3d_index_launches_too(tmp_path):
    """Johnson's task_4 (2x2x2) was left out of the PNG without a word, only taco_validate (2-D) drawn: a 3-D launch
    is drawn one row per (ipoint[0], ipoint[1]), and the command names every launch it drew."""
    from mapperopt.dsl import parse
    from mapperopt.dsl.commands import _placement_figure, explain_decisions, load_app

    png = tmp_path / "j.png"
    result = run("explain", str(CONFIGS / "johnson.dsl"), "--bench", "johnson", "--machine", "2x4", "--png", str(png))
    assert result.exit_code == 0, result.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    drew = result.stderr.split(f"wrote {png}: ")[1].splitlines()[0]
    assert "task_4 (2x2x2)" in drew and "taco_validate (2x2)" in drew, drew
    machine = parse_machine_spec("2x4")
    entries = explain_decisions(parse((CONFIGS / "johnson.dsl").read_text()), load_app("johnson"), machine)
    axes = {ax.get_title().split(":")[0]: ax for ax in _placement_figure(entries, machine).axes}
    grid = axes["task_4"].get_images()[0].get_array()
    assert grid.shape == (4, 2)  # rows (i0, i1), columns i2
    assert [t.get_text() for t in axes["task_4"].get_yticklabels()] == ["0,0", "0,1", "1,0", "1,1"]
    assert axes["task_4"].get_ylabel() == "ipoint[0],ipoint[1]" and axes["task_4"].get_xlabel() == "ipoint[2]"


def test_explain_json_lines():
    import json

    result = run("explain", str(CONFIGS / "circuit.dsl"), "--bench", "circuit", "--machine", "1x0x2", "--json")
    records = [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]
    cnc = [r for r in records if r["task"] == "calculate_new_currents" and "balance" not in r]
    assert [r["proc"] for r in cnc] == [{"kind": "CPU", "node": 0, "index": i} for i in range(2)]


def test_explain_refuses_a_program_with_errors(tmp_path):
    bad = tmp_path / "bad.dsl"
    bad.write_text("Task nope GPU;\n")
    result = run("explain", str(bad), "--bench", "circuit", "--machine", "1x4")
    assert result.exit_code == 1 and "error[E202]" in result.output


@pytest.mark.skipif(shutil.which("mpicc") is None and shutil.which("c++") is None, reason="no compiler")
def test_explain_without_machine_probes_or_explains_why():
    result = run("explain", str(CONFIGS / "circuit.dsl"), "--bench", "circuit")
    if result.exit_code == 0:
        assert "machine: 1 node of " in result.output
    else:
        assert "--machine NODESxGPUS[xCPUS]" in str(result.exception) + result.output


SET_MAPPER = """Task * GPU,CPU;
Layout * * * SOA C_order;
m = Machine(GPU);
def anyg(Task task) { return m[0, *]; }
def one(Task task) { return m[0, 0]; }
IndexTaskMap task_4 anyg;
"""


def test_explain_shows_a_processor_set_as_a_set(tmp_path):
    """A mapping function returning `m[0, *]` is not `m[0, 0]`: the grid says `0.*`, the legend says the runtime
    picks the least loaded member, the JSON lists the members and its `proc` names no member (the index is unknown
    until the runtime maps the point), the PNG differs."""
    import json

    dsl = tmp_path / "set.dsl"
    dsl.write_text(SET_MAPPER)
    base = ("--bench", "cannon", "--machine", "1x4", "--domain", "2x2")
    text = run("explain", str(dsl), *base)
    assert text.exit_code == 0, text.output
    assert "  0          0.*  0.*" in text.output and "least loaded" in text.output
    # the runtime's load of a member (`least_loaded`): the legend said only the points of the same launch, and a user
    # expected the points spread one per member where another launch's unfinished tasks were counted too
    legend = " ".join(text.output.split())
    for term in ("the fewest tasks placed on it through a set that are mapped and not yet finished (of any launch)",
                 "single tasks given it through a set and not yet mapped",
                 "points of the same launch placed on it before this one", "the first in the set's order on a tie"):
        assert term in legend, (term, legend)
    out = run("explain", str(dsl), *base, "--json")
    rec = next(json.loads(line) for line in out.output.splitlines() if '"task_4"' in line)
    assert rec["proc"] == {"kind": "GPU", "node": 0, "index": None}
    assert rec["set"] == [{"kind": "GPU", "node": 0, "index": i} for i in range(4)]
    single = tmp_path / "one.dsl"
    single.write_text(SET_MAPPER.replace("task_4 anyg", "task_4 one"))
    out = run("explain", str(single), *base, "--json")
    assert "set" not in next(json.loads(line) for line in out.output.splitlines() if '"task_4"' in line)
    pngs = [tmp_path / "set.png", tmp_path / "one.png"]
    for f, png in zip((dsl, single), pngs):
        assert run("explain", str(f), *base, "--png", str(png)).exit_code == 0
    assert pngs[0].read_bytes() != pngs[1].read_bytes()


def test_explain_refusing_a_program_counts_its_warnings_as_check_does(tmp_path):
    """explain refuses a program with errors and prints what check prints for it: the same diagnostics, warnings
    and notes too, and the same summary line."""
    bad = tmp_path / "bad.dsl"
    bad.write_text("Task * GPU,CPU;\nRegion check * CPU FBMEM;\nLayout * * ZCMEM SOA Align==48;\n"
                   "CollectMemory stencil 0;\nm = Machine(CPU);\n")
    args = (str(bad), "--bench", "stencil", "--machine", "1x1")
    checked, explained = run("check", *args), run("explain", *args)
    assert checked.exit_code == explained.exit_code == 1
    summary = f"{bad}: 1 error(s), 2 warning(s), 1 note(s)\n"
    assert summary in checked.output and summary in explained.output, explained.output
    for code in ("error[E222]", "warning[W306]", "warning[W305]", "note[W304]"):
        assert code in explained.output, explained.output


def test_check_and_explain_show_what_the_mapper_prints(tmp_path):
    """The lines the mapper's print statements write while check and explain evaluate it are shown on stderr under
    a header, in the order evaluated (load phase first), the first 50 of them; none, no header."""
    path = tmp_path / "p.dsl"
    path.write_text("Task * CPU;\nm = Machine(CPU);\nprint(\"size {}\", m.size);\n"
                    "def f(Task task) { print(\"point {}\", task.ipoint); return m[0, 0]; }\n"
                    "IndexTaskMap update_voltages f;\n")
    checked = run("check", str(path), "--bench", "circuit", "--machine", "1x0x2")
    assert checked.exit_code == 0, checked.output
    assert ("print output of the static evaluation, 3 line(s) (load phase, then each task's launch points; a run "
            "prints them to stderr):\n  size (1, 2)\n  point (0,)\n  point (1,)\n") in checked.output, checked.output
    explained = run("explain", str(path), "--bench", "circuit", "--machine", "1x0x2", "--domain", "60")
    assert "print output of the evaluation, 61 line(s)" in explained.output, explained.output
    assert "  point (48,)\n  ... 11 more line(s)\n" in explained.output and "point (49,)" not in explained.output
    path.write_text("Task * CPU;\n")
    assert "print output" not in run("check", str(path), "--bench", "circuit", "--machine", "1x0x2").output


def test_empty_machine_option_is_refused_not_this_machine(tmp_path):
    """`--machine ""` probed this machine, silently: an empty machine is an error, as any malformed one."""
    path = tmp_path / "m.dsl"
    path.write_text("Task * CPU;\n")
    for command in ("check", "explain", "compile"):
        result = run(command, str(path), "--bench", "circuit", "--machine", "")
        assert result.exit_code == 1, (command, result.output)
        assert "machine '' is neither of the form" in str(result.exception), (command, result.output)


def test_explain_says_how_many_points_each_node_and_processor_gets():
    """On a machine of several nodes, each index launch has a line saying the points per node and the fewest and
    most per processor (the table shows only the first 256 points); --json has it as the launch's `balance` record,
    after its points. With 12 CPUs per node, a cell pads the processor index (`0.01`, never `0.1` beside `0.10`)."""
    import json

    args = ("explain", str(CONFIGS / "circuit.dsl"), "--bench", "circuit", "--machine", "2x0x12", "--domain", "24")
    result = run(*args)
    assert result.exit_code == 0, result.output
    out = result.output
    # calculate_new_currents: one point per CPU; init_piece: a node's 12 points all on its CPU 0.
    assert "  points per node: 12 12; per CPU: 1 to 1 (24 of 24 CPUs used)" in out, out
    assert "  points per node: 12 12; per CPU: 0 to 12 (2 of 24 CPUs used)" in out, out
    assert "proc   0.00 0.01 0.02 0.03 0.04 0.05 0.06 0.07 0.08 0.09 0.10 0.11" in out, out
    assert "proc   1.00 1.00" in out and " 0.1 " not in out, out
    records = [json.loads(line) for line in run(*args, "--json").output.splitlines() if line.startswith("{")]
    balance = {r["task"]: r["balance"] for r in records if "balance" in r}
    assert balance["calculate_new_currents"] == {"kind": "CPU", "per_node": [12, 12],
                                                 "per_processor": [[1] * 12, [1] * 12], "default": 0, "sets": 0,
                                                 "failing": 0, "own": 0}
    assert balance["init_piece"]["per_processor"] == [[12] + [0] * 11] * 2
    assert [r["task"] for r in records].index("init_pointers") > [r["task"] for r in records].index("init_piece")
    # every point placed by the expert's functions: no `dflt` cell, so no `dflt` legend (a beginner looked for them)
    headers = [line for line in out.splitlines() if line.startswith("  placement (point")]
    assert headers and all("dflt" not in h for h in headers), headers
    assert all(h.startswith("  placement (point -> CPU node.index):") for h in headers), headers


def test_explain_png_has_integer_ticks_and_names_both_axes(tmp_path):
    """The placement grid's axes are launch-point coordinates: whole numbers only, and each axis names its one."""
    from mapperopt.dsl import parse
    from mapperopt.dsl.commands import _placement_figure, explain_decisions, load_app

    machine = parse_machine_spec("2x2")
    fig = _placement_figure(explain_decisions(parse((CONFIGS / "stencil.dsl").read_text()), load_app("stencil"),
                                              machine, (2, 3)), machine)
    assert fig.axes
    for ax in fig.axes:  # stencil's launches over (2, 3)
        assert ax.get_xlabel() == "ipoint[1]" and ax.get_ylabel() == "ipoint[0]"
        for ticks, (low, high), want in ((ax.get_xticks(), ax.get_xlim(), [0, 1, 2]),
                                         (ax.get_yticks(), sorted(ax.get_ylim()), [0, 1])):
            assert [t for t in ticks if low <= t <= high] == want, ticks



def test_explain_png_titles_and_legend_fit_in_the_image():
    """A launch left to Legion's default mapper has the legend of its `(n.i)` cells: one line, wider than the image,
    cut at both ends. Every title, and the legend below the grids, fits within the figure."""
    from mapperopt.dsl import parse
    from mapperopt.dsl.commands import _placement_figure, explain_decisions, load_app

    machine = parse_machine_spec("2x0x2")
    fig = _placement_figure(explain_decisions(parse("Task * CPU;\n"), load_app("stencil"), machine, (2, 3)),
                            machine)
    fig.canvas.draw()
    renderer, width = fig.canvas.get_renderer(), fig.bbox.width
    texts = [ax.title for ax in fig.axes] + fig.texts
    assert any("Legion's default mapper slices" in t.get_text() for t in fig.texts), [t.get_text() for t in texts]
    for text in texts:
        box = text.get_window_extent(renderer)
        assert 0 <= box.x0 and box.x1 <= width and 0 <= box.y0, (text.get_text(), box, width)


def test_explain_says_the_long_legends_once_after_the_tables_and_below_the_grids(tmp_path):
    """The legend of processor sets (about 400 characters) and that of Legion's default slicing were said in the
    header of every table that used them (three times for three launches), and in the title of every PNG panel:
    each table names its notations in short, and each legend is said once, after the last table and below the
    grids."""
    from mapperopt.dsl import parse
    from mapperopt.dsl.commands import DEFAULT_LEGEND, SET_LEGEND, _placement_figure, explain_decisions, load_app

    text = ("Task * CPU;\ndef anycpu(Task task) { return Machine(CPU)[task.ipoint[0] % Machine(CPU).size[0], *]; }\n"
            "IndexTaskMap init_piece,init_pointers,calculate_new_currents anycpu;\n")
    path = tmp_path / "sets.dsl"
    path.write_text(text)
    result = run("explain", str(path), "--bench", "circuit", "--machine", "2x0x4")
    assert result.exit_code == 0, result.output
    out = result.stdout
    headers = [line for line in out.splitlines() if line.startswith("  placement (")]
    sets = [h for h in headers if "n.* = a processor set; legend below" in h]
    default = [h for h in headers if "(n.i) = Legion's default mapper's slicing" in h]
    assert len(sets) == 3 and default, headers  # the premise: three launches on sets, others left to Legion
    assert out.count("least loaded member") == 1 and out.count("blocks dealt to the processors") == 1, out
    assert out.index("legend of the placement tables:") > out.rindex("  placement ("), out
    assert f"  {DEFAULT_LEGEND}" in out.splitlines() and f"  {SET_LEGEND}" in out.splitlines(), out
    machine = parse_machine_spec("2x0x4")
    fig = _placement_figure(explain_decisions(parse(text), load_app("circuit"), machine), machine)
    titles = [ax.get_title() for ax in fig.axes]
    assert sum("hatched: a processor set" in t for t in titles) == 3 and not any("least" in t for t in titles)
    [legend] = [" ".join(t.get_text().split()) for t in fig.texts]
    assert legend.count("least loaded member") == 1 and legend.count("blocks dealt to the processors") == 1, legend


@pytest.mark.parametrize("statements, kinds", [
    ("Task * GPU,CPU;\nTask calculate_new_currents CPU;\n",
     {"calculate_new_currents": "CPU (kind list CPU, GPU: the first with a variant and processors)",
      "update_voltages": "GPU (kind list GPU, CPU: the first with a variant and processors)",
      "check_circuit": "CPU (kind list GPU, CPU: the first with a variant and processors)"}),
    ("Task * CPU;\n", {"calculate_new_currents": "CPU", "check_circuit": "CPU"}),
], ids=["lists", "one-kind"])
def test_explain_shows_each_tasks_processor_kind_list_as_memories_show_theirs(tmp_path, statements, kinds):
    """explain showed only the kind a task runs on, though a task's list is the lists of all its Task statements
    concatenated (`CPU, GPU` for a task named by its own statement after `Task * GPU,CPU;`): with more than one kind,
    the whole list is shown after the kind it picks."""
    path = tmp_path / "kinds.dsl"
    path.write_text(statements)
    result = run("explain", str(path), "--bench", "circuit", "--machine", "1x4")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    for task, shown in kinds.items():
        at = next(i for i, line in enumerate(lines) if line.startswith(f"{task} ("))
        assert lines[at + 1] == f"  processor kind: {shown}", lines[at:at + 2]


def test_explain_balance_line_names_the_points_it_does_not_count(tmp_path):
    """Points on a processor set count for their node only; failing ones nowhere (those left to Legion's default
    where its slicing puts them: test_explain_says_where_legions_default_slicing_puts_the_points_left_to_it)."""
    result = run("explain", str(EXAMPLES / "s01.dsl"), "--bench", "circuit", "--machine", "1x4", "--domain", "6")
    assert "  points per node: 4; per GPU: 1 to 1 (4 of 4 GPUs used); not counted: 2 failing\n" in result.output
    dsl = tmp_path / "set.dsl"
    dsl.write_text(SET_MAPPER)
    result = run("explain", str(dsl), "--bench", "cannon", "--machine", "1x4", "--domain", "2x2")
    assert "  points per node: 4; 4 on processor sets, counted per node only\n" in result.output, result.output


def test_explain_says_where_legions_default_slicing_puts_the_points_left_to_it(tmp_path):
    """An index launch no IndexTaskMap maps is sliced by Legion's default mapper: blocks of the domain (as many as
    the machine has processors of the kind, split over the dimensions as greedy_split does, the first dimension's
    blocks first) dealt to every processor of the kind, node by node, empty blocks skipped. A GPU point runs on its
    slice's GPU; a CPU point on the first free CPU of its slice's node. The cells say which processor (or node) that
    gives each point, in parentheses; the balance line counts them there; --json has it as `default_proc`, and every
    region record names its memory's node."""
    import json

    dsl = tmp_path / "dflt.dsl"
    dsl.write_text("Task * GPU,CPU;\nLayout * * * C_order;\n")
    args = ("explain", str(dsl), "--bench", "circuit", "--machine", "2x2")
    out = run(*args, "--domain", "4").output
    section = out[out.index("calculate_new_currents ("):out.index("distribute_charge (")]
    assert "proc   (0.0) (0.1) (1.0) (1.1)" in section, section
    assert ("  points per node: 2 2; per GPU: 1 to 1 (4 of 4 GPUs used); 4 left to Legion's default mapper, counted "
            "where its slicing puts them\n") in section, section
    out = run(*args, "--domain", "2").output  # two points, four blocks: the two non-empty ones go to node 0
    section = out[out.index("calculate_new_currents ("):out.index("distribute_charge (")]
    assert "proc   (0.0) (0.1)" in section and "  points per node: 2 0;" in section, section
    out = run("explain", str(dsl), "--bench", "cannon", "--machine", "2x2", "--domain", "2x3").output
    section = out[out.index("task_4 ("):]
    assert "  0         (0.0) (1.0) (1.0)" in section and "  1         (0.1) (1.1) (1.1)" in section, section
    out = run("explain", str(dsl), "--bench", "circuit", "--machine", "2x0x2", "--domain", "4").output
    section = out[out.index("calculate_new_currents ("):out.index("distribute_charge (")]
    assert "proc   (0.*) (0.*) (1.*) (1.*)" in section, section
    assert ("  points per node: 2 2; 4 left to Legion's default mapper, counted where its slicing puts them (per node "
            "only: the first free CPU of the node runs each)\n") in section, section
    records = [json.loads(line) for line in run(*args, "--domain", "4", "--json").output.splitlines()
               if line.startswith("{")]
    cnc = [r for r in records if r["task"] == "calculate_new_currents" and "balance" not in r]
    assert [r["default_proc"] for r in cnc] == [{"kind": "GPU", "node": n, "index": i} for n in (0, 1) for i in (0, 1)]
    assert [r["proc"] for r in cnc][0] == {"kind": "GPU", "node": None, "index": None}
    assert [[reg["node"] for reg in r["regions"]] for r in cnc][3] == [1] * len(cnc[3]["regions"])
    single = next(r for r in records if r["task"] == "check_circuit")
    assert "default_proc" not in single and {reg["node"] for reg in single["regions"]} == {None}


def test_explain_json_region_records_name_their_memorys_node():
    """A region record says which node's memory holds the instance: the node of the point's processor."""
    import json

    result = run("explain", str(CONFIGS / "circuit.dsl"), "--bench", "circuit", "--machine", "2x0x2", "--domain", "4",
                 "--json")
    records = [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]
    placed = [r for r in records if "balance" not in r and r["proc"]["node"] is not None and r["regions"]]
    assert placed and all(reg["node"] == r["proc"]["node"] for r in placed for reg in r["regions"]
                          if reg["memory"] != "VIRTUAL")
    assert {r["proc"]["node"] for r in placed} == {0, 1}


def test_explain_predicts_no_default_slicing_for_a_program_that_keeps_its_own_mapper():
    """A program that keeps its own mapper (keep_app_mapper) slices the launches the DSL leaves alone itself: no
    `default_proc` there, the cell stays `dflt`."""
    from dataclasses import replace

    from mapperopt.dsl import parse
    from mapperopt.dsl.commands import explain_decisions, load_app

    app = replace(load_app("circuit"), keep_app_mapper=True)
    entries = explain_decisions(parse("Task * CPU;\n"), app, parse_machine_spec("2x0x2"), (4,))
    points = [rec for e in entries if e["domain"] for _, rec in e["points"]]
    assert points and not any("default_proc" in rec for rec in points)
    entries = explain_decisions(parse("Task * CPU;\n"), load_app("circuit"), parse_machine_spec("2x0x2"), (4,))
    assert all("default_proc" in rec for e in entries if e["domain"] for _, rec in e["points"])


def test_explain_shows_legions_default_mapping_for_the_tasks_a_kept_program_mapper_maps():
    """A task no statement names is mapped by the program's kept mapper: explain says its rows are Legion's default
    mapping, and they are (a `Layout * * * AOS` or a `CollectMemory * *` do not show there); the task a statement
    names gets the mapper's decisions. The kept tasks showed `AOS`."""
    from dataclasses import replace

    from mapperopt.dsl import parse
    from mapperopt.dsl.commands import explain_decisions, load_app

    app, machine = replace(load_app("circuit"), keep_app_mapper=True), parse_machine_spec("1x0x2")
    program = parse("Task * CPU;\nLayout * * * AOS;\nCollectMemory * *;\nInstanceLimit update_voltages 2;\n")
    entries = {e["task"]: e for e in explain_decisions(program, app, machine, (4,))}
    kept = [e for e in entries.values() if e["app_mapper"] and not e["top_level"]]  # main: no regions
    assert kept and "update_voltages" not in {e["task"] for e in kept}
    for e in kept:
        assert {r["layout"]["order"] for _, rec in e["points"] for r in rec["regions"]} == {"SOA"}, e["task"]
        assert e["collected"] == [] and e["instance_limit"] is None, e
    mapped = entries["update_voltages"]
    assert {r["layout"]["order"] for _, rec in mapped["points"] for r in rec["regions"]} == {"AOS"}
    assert mapped["instance_limit"] == 2 and mapped["collected"], mapped


def test_explain_evaluates_a_parent_reading_function_with_the_discovered_parent_where_it_placed_it():
    """A recursive task tree (docs: a user's program): `sum` is launched by `fibonacci`, which explain places on
    CPU 1; a SingleTaskMap of `sum` that follows its parent's processor goes to CPU 1 too, and the text says which
    parent it assumed, where. It evaluated every task as if its parent were the top-level task on CPU 0, and said
    nothing."""
    from mapperopt.descriptions import AppDescription
    from mapperopt.dsl import parse
    from mapperopt.dsl.commands import _explanation_text, explain_decisions

    def task(name, parent):
        return {"name": name, "variants": ["CPU"], "launch": "single", "parent": parent, "regions": []}

    tasks = [task("top_level", None), task("fibonacci", "top_level"), task("sum", "fibonacci")]
    app = AppDescription.from_json({"schema": "mapperopt.app/1", "app": "tree", "tasks": tasks,
                                    "discovered_as": "tree"})
    machine = parse_machine_spec("1x0x2")
    program = parse("m = Machine(CPU);\ndef near(Task task) { return m[*task.parent.processor(m)]; }\n"
                    "def other(Task task) { p = task.parent.processor(m); return m[p[0], (p[1] + 1) % m.size[1]]; }\n"
                    "SingleTaskMap fibonacci other;\nSingleTaskMap sum near;\n")
    entries = explain_decisions(program, app, machine)
    procs = {e["task"]: e["points"][0][1]["proc"]["index"] for e in entries}
    assert procs["fibonacci"] == 1 and procs["sum"] == 1, procs
    text = _explanation_text(entries, machine)
    section = text[text.index("sum (single launch)"):]
    assert ("its mapping function reads task.parent: evaluated with the parent of its first launch in discovery, "
            "'fibonacci', on CPU[node 0, proc 1], as placed above; launched by another task, it follows that task's "
            "processor") in " ".join(section.split()), text
    assert ("evaluated with the parent of its first launch in discovery, 'top_level', on CPU[node 0, proc 0], where "
            "Legion's default mapper runs the top-level task") in " ".join(text.split()), text


def test_explain_of_cosma_on_a_machine_has_the_grid_of_its_processor_count():
    """COSMA's grid follows the processor count without a flag (docs/gemm.md): at size ci on 4 GPUs it is the run's
    (1, 2, 2), not the 1-CPU (1, 1, 1) of the stored description."""
    result = run("explain", str(CONFIGS / "cosma.dsl"), "--bench", "cosma", "--machine", "1x4")
    assert result.exit_code == 0, result.output
    assert "task_4 (index launch over (1, 2, 2))" in result.output, result.output
    assert "launch domains: those of `mapperopt run cosma --size ci` on the 4 GPUs of --machine" in result.output


def test_explain_of_a_3d_gemm_says_which_taco_fill_launches_it_leaves_out():
    """taco_fill fills each matrix on its face, one launch each; the description (one launch domain per task) has A's:
    explain says so, and where B's and C's are shown."""
    result = run("explain", str(CONFIGS / "johnson.dsl"), "--bench", "johnson", "--machine", "1x4")
    assert result.exit_code == 0, result.output
    assert "taco_fill (index launch over (2, 2, 1))" in result.output
    assert "note: taco_fill is shown on A's face only; it fills B and C on theirs, the launch domains of task_2 and " \
           "task_3" in result.output, result.output


def test_explain_counts_a_kept_mappers_points_as_not_predicted():
    """The points of a launch the kept program's mapper maps are its, not Legion's default mapper's: the summary line
    says they are not predicted (it said "points per node: 0 ... 4 left to Legion's default mapper, counted where its
    slicing puts them"), and the legend does not call the cells Legion's default."""
    from dataclasses import replace

    from mapperopt.dsl import parse
    from mapperopt.dsl.commands import _explanation_text, explain_decisions, load_app

    app, machine = replace(load_app("circuit"), keep_app_mapper=True), parse_machine_spec("1x0x2")
    text = _explanation_text(explain_decisions(parse("Task * CPU;\n"), app, machine, (4,)), machine)
    assert "  points per node: not predicted (4 points mapped by the program's own mapper)" in text, text
    assert "Legion's default mapper, counted" not in text and "dflt = the program's own mapper" in text, text


def test_check_prints_every_diagnostic_on_stdout_and_the_summary_on_stderr(tmp_path):
    """`mapperopt check f.dsl > report.txt` keeps a syntax error (E1xx) as it keeps a checker's error (E2xx): both on
    stdout, as docs/dsl.md says; the summary line goes to stderr either way."""
    syntax = tmp_path / "syntax.dsl"
    syntax.write_text("Task * GPU\n")
    semantic = tmp_path / "semantic.dsl"
    semantic.write_text("x = 1 / 0;\n")
    for path, code in ((syntax, "E105"), (semantic, "E219")):
        result = run("check", str(path), "--machine", "1x0x1")
        assert result.exit_code == 1
        assert f"error[{code}]" in result.stdout and f"error[{code}]" not in result.stderr, (code, result.stderr)
        assert f"{path}: 1 error(s)" in result.stderr and f"{path}: 1 error(s)" not in result.stdout, code


def test_check_says_how_many_errors_it_did_not_show(tmp_path):
    """25 undefined variables: the first 20 errors are shown, and the summary counts all 25 and says so."""
    path = tmp_path / "many.dsl"
    path.write_text("".join(f"x{i} = y{i};\n" for i in range(25)))
    result = run("check", str(path))
    assert result.exit_code == 1 and result.output.count("error[E201]:") == 20
    assert f"{path}: 25 error(s) (the first 20 shown), 0 warning(s)" in result.output, result.output
    assert f"{path}: ... and 5 more error[E201] like this" in result.output, result.output
    path.write_text("x = y;\n")
    assert f"{path}: 1 error(s), 0 warning(s)" in run("check", str(path)).output


def test_check_error_cap_hides_no_other_code(tmp_path):
    """25 errors of one code, then an error of another code: the other code is shown too (its first error), the
    repeats past the cap are counted per code, and the summary counts all of them."""
    path = tmp_path / "many.dsl"
    path.write_text("".join(f"x{i} = y{i};\n" for i in range(25))
                    + "InstanceLimit t1 0;\nInstanceLimit t2 0;\nz = w;\n")
    result = run("check", str(path), "--machine", "1x0x1")
    assert result.exit_code == 1
    assert result.stdout.count("error[E201]:") == 20 and result.stdout.count("error[E215]:") == 1, result.stdout
    assert f"{path}: ... and 6 more error[E201] like this" in result.stdout, result.stdout
    assert f"{path}: ... and 1 more error[E215] like this" in result.stdout, result.stdout
    assert f"{path}: 28 error(s) (21 shown: the first 20, then the first of each other code), 0 warning(s)" \
        in result.stderr, result.stderr


def test_explain_png_into_a_missing_folder_is_a_clear_error_before_the_work(tmp_path, capsys):
    """`--png DIR/x.png` with no folder DIR once printed the whole explanation and then ended in a FileNotFoundError
    traceback: it is refused first, with `compile -o`'s one-line error, and creates nothing."""
    from mapperopt.cli import main

    target = tmp_path / "nosuch" / "x.png"
    assert main(["explain", str(CONFIGS / "circuit.dsl"), "--bench", "circuit", "--machine", "1x4",
                 "--png", str(target)]) == 1
    out, err = capsys.readouterr()
    assert err.splitlines()[-1] == f"error: cannot write {target}: No such file or directory", err
    assert out == "" and not target.parent.exists()


@pytest.mark.skipif(not Path("/proc/self").exists(), reason="needs Linux's /proc")
def test_explain_png_into_a_folder_nothing_can_be_created_in_is_refused_before_the_work(capsys):
    """`--png /proc/x.png`: the folder exists and passes access(2) for root, but no file can be created there; the
    whole explanation was printed before the error. The check before the work tries to create a file there."""
    from mapperopt.cli import main

    assert main(["explain", str(CONFIGS / "circuit.dsl"), "--bench", "circuit", "--machine", "1x4",
                 "--png", "/proc/x.png"]) == 1
    out, err = capsys.readouterr()
    assert err.splitlines()[-1].startswith("error: cannot write /proc/x.png: "), err
    assert out == "", out


@pytest.mark.parametrize("args", [["--domain", "100000"], ["--", "-p", "1000000"]], ids=["domain", "flags"])
def test_explain_refuses_a_launch_too_large_to_evaluate_at_once(args):
    """`explain --domain 100000` (or a run's `-p 1000000`) ran for minutes with no output: a launch of more points
    than explain evaluates (MAX_EXPLAIN_POINTS) is refused before any evaluation, naming the task, its points, the
    limit and a smaller --domain; exit status 1."""
    import subprocess
    import sys

    from mapperopt.dsl.checker import MAX_EXPLAIN_POINTS

    done = subprocess.run([sys.executable, "-m", "mapperopt.cli", "explain", str(CONFIGS / "circuit.dsl"), "--bench",
                           "circuit", "--machine", "1x4", *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == "", done.stderr[-2000:]
    assert f"points, more than explain evaluates at once ({MAX_EXPLAIN_POINTS})" in done.stderr, done.stderr
    assert "index launch of '" in done.stderr and "hint: explain a smaller launch of the same tasks" in done.stderr


def test_explain_refusal_of_a_large_2d_launch_suggests_a_2d_domain(capsys):
    """`--domain 200x200` was refused with the example `--domain 64`, a launch of another dimensionality."""
    from mapperopt.cli import main

    assert main(["explain", str(CONFIGS / "circuit.dsl"), "--bench", "circuit", "--machine", "1x4",
                 "--domain", "200x200"]) == 1
    err = capsys.readouterr().err
    assert "(e.g. --domain 8x8)" in err, err


def test_explain_shows_the_fallbacks_of_a_memory_list(tmp_path):
    """`Region * * GPU FBMEM,ZCMEM;`: the memory the instance goes to, then the kinds of the list after it (tried
    where it does not fit), so the user sees the whole list was understood; a list of one kind shows that kind only."""
    path = tmp_path / "m.dsl"
    path.write_text("Task * GPU,CPU;\nRegion * * GPU FBMEM,ZCMEM;\nRegion * * CPU SYSMEM;\n")
    result = run("explain", str(path), "--bench", "circuit", "--machine", "1x2")
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if "FBMEM" in line and "memories" not in line]
    assert lines and all("FBMEM (then ZCMEM)" in line for line in lines), lines
    out = result.output.splitlines()
    header = next(line for line in reversed(out[:out.index(lines[0])]) if line.startswith("  arg  region"))
    assert lines[0].index("FBMEM") == header.index("memory") and lines[0].index("SOA") == header.index("layout"), \
        (header, lines[0])
    path.write_text("Task * GPU,CPU;\nRegion * * GPU FBMEM;\n")
    assert "(then" not in run("explain", str(path), "--bench", "circuit", "--machine", "1x2").output


def test_check_summary_writes_counts_as_the_capped_lines_do(tmp_path):
    """A generated file with thousands of one diagnostic: "... and 2,989 more note[W304] like this" above a summary
    of "2999 note(s)". Both write a count with the same thousands separator."""
    from mapperopt.dsl.errors import REPEATS
    n = 1000 + REPEATS + 5
    path = tmp_path / "many.dsl"
    path.write_text("Task * CPU;\n" + "".join(f"def f{i}(Task t) {{ return 0; }}\n" for i in range(n)))
    result = run("check", str(path), "--machine", "1x0x1")
    assert f"{path}: ... and 1,005 more note[W304] like this" in result.output, result.output[-500:]
    assert f"{path}: 0 error(s), 0 warning(s), {n:,} note(s)\n" in result.output, result.output[-500:]


@pytest.mark.parametrize("typo", ["RDMM", "RDMEN"])
def test_check_near_miss_of_rdmem_says_which_flag_creates_it_and_what_to_write(tmp_path, typo):
    """A mistyped RDMEM (E107): the hint names the memory to write, the flag that creates it with where to give that
    flag, and the memory to write instead for a run without it; the corrected statement then checks with that flag."""
    path = tmp_path / "rd.dsl"
    path.write_text(f"Task * CPU;\nRegion * * CPU {typo};\n")
    result = run("check", str(path), "--machine", "1x0")
    assert result.exit_code == 1 and "error[E107]" in result.output, result.output
    hint = " ".join(line.strip() for line in result.output.split("hint: ", 1)[1].splitlines()[:4])
    assert "did you mean 'RDMEM'" in hint and "registered" in hint, hint
    assert "-- -ll:rsize 64" in hint and "legion_flags" in hint, hint
    assert "Region * * CPU RDMEM,SYSMEM;" in hint, hint  # the fix for a run without the flag
    path.write_text("Task * CPU;\nRegion * * CPU RDMEM,SYSMEM;\n")
    assert run("check", str(path), "--machine", "1x0").exit_code == 0
    path.write_text("Task * CPU;\nRegion * * CPU RDMEM;\n")
    assert run("check", str(path), "--bench", "circuit", "--machine", "1x0", "--", "-ll:rsize", "64").exit_code == 0


@pytest.mark.parametrize(("first", "levels"), [("task.ipoint[0]", 2), ("task.ipoint", 1), ("1", 0)])
def test_check_says_a_long_flat_chain_has_too_many_operators_whatever_its_first_operand(tmp_path, first, levels):
    """`task.ipoint[0] + 1 + ... + 1` (150 operators): E110 says how many operators one chain may have (its first
    operand's levels count towards the 100), as for a chain of literals, never "too deeply nested"."""
    path = tmp_path / "chain.dsl"
    path.write_text("Task t GPU,CPU;\ndef f(Task task) { return " + first + " + 1" * 150 + "; }\n")
    result = run("check", str(path))
    assert result.exit_code == 1 and "error[E110]" in result.output, result.output
    assert f"more than {100 - levels} operators in one chain" in result.output, result.output
    assert "too deeply nested" not in result.output
    path.write_text("Task t GPU,CPU;\ndef f(Task task) { return " + first + " + 1" * (100 - levels) + "; }\n")
    assert "E110" not in run("check", str(path)).output


def test_explain_of_a_mapper_with_errors_says_it_stops_at_them(tmp_path):
    """`explain` of a mapper with a check error printed the errors alone: nothing said that it shows no decisions
    because of them, nor how to go on. Its last line says so."""
    path = tmp_path / "fb.dsl"
    path.write_text("Task * CPU;\n" + FB_ONLY)
    result = run("explain", str(path), "--bench", "circuit", "--machine", "1x0")
    assert result.exit_code == 1 and "error[E221]" in result.output, result.output
    assert result.output.rstrip("\n").splitlines()[-1] == (
        "explain stops at errors: it shows no decisions of a mapper with any; fix them as the hints say, or remove "
        "(or comment out) the statements they name, then explain again"), result.output


# One CPU per launch point of circuit's index launches (two at size ci).
PER_POINT = ("m = Machine(CPU);\ndef per_point(Task task) { return m[0, task.ipoint[0]]; }\n"
             "IndexTaskMap calculate_new_currents,distribute_charge,update_voltages per_point;\n")


def test_check_explain_and_compile_take_the_runs_cpus_and_gpus(tmp_path, capsys):
    """`check prog.dsl --cpus 2` was refused (only --machine described another machine), while `run --cpus 2` runs
    the program on 2 CPUs of this machine: --cpus and --gpus mean in check and compile what they mean in `run`, the
    run's processors on this machine, as `-- -ll:cpu 2` does; a count --machine or the run's flags contradict is
    refused."""
    from mapperopt.cli import main

    path = tmp_path / "per_point.dsl"
    path.write_text(PER_POINT)
    for command in ("check", "compile"):
        result = run(command, str(path), "--bench", "circuit")
        assert result.exit_code == 1 and "error[E205]" in result.output, result.output  # one CPU: index 1 too far
        result = run(command, str(path), "--bench", "circuit", "--cpus", "2")
        assert result.exit_code == 0, result.output
        capsys.readouterr()
        assert main([command, str(path), "--bench", "circuit", "--cpus", "2", "--machine", "1x0x2"]) == 2
        assert "--cpus and --machine describe two machines" in capsys.readouterr().err
        assert main([command, str(path), "--bench", "circuit", "--cpus", "1", "--", "-ll:cpu", "2"]) == 2
        assert "--cpus 1 and `-ll:cpu 2` after `--` ask for different CPU counts" in capsys.readouterr().err
    # explain too: the placement over the run's 2 CPUs (it refused --cpus, pointing to --machine)
    result = run("explain", str(path), "--bench", "circuit")
    assert result.exit_code == 1 and "error[E205]" in result.output, result.output
    result = run("explain", str(path), "--bench", "circuit", "--cpus", "2")
    assert result.exit_code == 0 and "machine: 1 node of 2 CPUs" in result.output, result.output
    assert "points per node: 2; per CPU: 1 to 1 (2 of 2 CPUs used)" in result.output, result.output
    capsys.readouterr()
    assert main(["explain", str(path), "--bench", "circuit", "--gpus", "0", "--machine", "1x0x2"]) == 2
    assert "--gpus and --machine describe two machines" in capsys.readouterr().err
    result = run("check", str(path), "--bench", "circuit", "--cpus", "2")
    assert "machine: this one (as `mapperopt run circuit --size ci --cpus 2` sees it), 1 node of 2 CPUs" \
        in result.output, result.output
    flagged = run("check", str(path), "--bench", "circuit", "--", "-ll:cpu", "2").output
    said = [line for line in flagged.splitlines() if not line.startswith("[mapperopt] buil")]  # a first build's
    assert result.output.replace("--cpus 2", "-- -ll:cpu 2").splitlines() == said
    result = run("check", str(path), "--cpus", "3")  # no program: this machine with the run's processors
    assert "machine: this one (Legion's default with --cpus 3), 1 node of 3 CPUs" in result.output, result.output
    # COSMA's grid follows the run's processor count: at size ci on 4 CPUs the run's (1, 2, 2)
    path.write_text('m = Machine(CPU);\ndef f(Task task) { print("{}", task.ispace); return m[0, 0]; }\n'
                    "IndexTaskMap task_4 f;\nLayout * * * C_order;\n")
    result = run("check", str(path), "--bench", "cosma", "--cpus", "4")
    assert result.exit_code == 0 and "(1, 2, 2)" in result.output, result.output
    assert "launch domains: those of `mapperopt run cosma --size ci --cpus 4`" in result.output
