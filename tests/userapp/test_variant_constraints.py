"""A user's program whose task variant registers layout constraints (tests/app/constrained.cc: `norm` reads (re, im)
pairs through a pointer, valid because its variant asks for exactly those two fields, contiguous and in order, AOS;
its output must be in system memory) runs under a DSL mapper through `mapperopt run --app` as it runs under Legion's
default mapper: the instances follow every constraint of the variant that no Layout statement sets, and a memory the
variant forbids is skipped like an absent one."""

from __future__ import annotations

import json
import re
import subprocess

from mapperopt.benchmarks.userapp import app_from_command, legion_command, shim_env
from mapperopt.cli import main
from mapperopt.compiler import compile_program


def run(tmp_path, exe, mapper_text: str | None, *app_args: str, name: str = "run") -> tuple[int, str, str]:
    """(exit status, the program's stdout, its stderr) of `mapperopt run --app EXE --once [--mapper] -- -n 400 ...`."""
    out = tmp_path / name
    mapper = []
    if mapper_text is not None:
        path = tmp_path / f"{name}.dsl"
        path.write_text(mapper_text)
        mapper = ["--mapper", str(path)]
    code = main(["run", "--app", str(exe), *mapper, "--once", "--out", str(out), "--", "-n", "400", *app_args])
    texts = [(out / f).read_text() if (out / f).exists() else "" for f in ("stdout.txt", "stderr.txt")]
    return code, *texts


def test_a_simple_dsl_mapper_honours_the_variants_field_constraint(tmp_path, monkeypatch, constrained_exe):
    monkeypatch.chdir(tmp_path)
    code, stdout, _ = run(tmp_path, constrained_exe, None, name="default")
    assert code == 0 and "checksum 106267000.0 OK" in stdout  # Legion's default mapper
    code, stdout, stderr = run(tmp_path, constrained_exe, "Task * CPU;\n", "-lg:safe_mapper", name="dsl")
    assert code == 0 and "checksum 106267000.0 OK" in stdout, stdout + stderr[-3000:]


def test_a_memory_the_variant_forbids_is_skipped(tmp_path, monkeypatch, constrained_exe, capsys):
    monkeypatch.chdir(tmp_path)
    # RDMEM (-ll:rsize) is there, but norm's output must be in system memory: the list falls back to SYSMEM.
    code, stdout, stderr = run(tmp_path, constrained_exe, "Task * CPU;\nRegion * * CPU RDMEM,SYSMEM;\n",
                               "-ll:rsize", "16", "-lg:safe_mapper", name="fallback")
    assert code == 0 and "checksum 106267000.0 OK" in stdout, stdout + stderr[-3000:]
    assert ("note R452: requirement 1 (pieces, numbers) of task 'norm': RDMEM skipped (the variant's layout "
            "constraint needs SYSMEM), using SYSMEM") in stderr, stderr[-3000:]
    # No memory of the list is allowed: `run` refuses the mapper before running (check's E222) ...
    capsys.readouterr()
    code, _, _ = run(tmp_path, constrained_exe, "Task * CPU;\nRegion norm * CPU RDMEM;\n", "-ll:rsize", "16",
                     name="none")
    assert code == 1 and "failed at stage check" in capsys.readouterr().out
    # ... and the mapper itself, loaded without that check, stops with an error naming the task, the requirement
    # and the constraint.
    mapper = compile_program("Task * CPU;\nRegion norm * CPU RDMEM;\n", "mapper.dsl")
    app = app_from_command(f"{constrained_exe} -n 400")
    done = subprocess.run(legion_command(app, "ci", 1, 0, ["-ll:rsize", "16"]), env=shim_env(app, mapper.so_path),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "checksum" not in done.stdout
    assert re.search(r"error R403: no memory of the list RDMEM can hold requirement 1 \(pieces, numbers\) of task "
                     r"'norm': RDMEM: the variant's layout constraint needs SYSMEM; processor CPU", done.stderr), \
        done.stderr[-3000:]


def test_check_knows_the_interleaving_the_variant_fixes(tmp_path, constrained_exe, capsys):
    """Discovery records that norm's variant needs AOS pairs: `check` passes a mapper that leaves it to the variant and
    rejects one whose Layout statement gives them SOA (E223), before any run."""
    app = f"{constrained_exe} -n 400"
    (tmp_path / "ok.dsl").write_text("Task * CPU;\n")
    assert main(["check", str(tmp_path / "ok.dsl"), "--app", app]) == 0
    assert "error" not in capsys.readouterr().out
    (tmp_path / "soa.dsl").write_text("Task * CPU;\nLayout * * * SOA;\n")
    assert main(["check", str(tmp_path / "soa.dsl"), "--app", app]) == 1
    out = capsys.readouterr().out
    assert "soa.dsl:2:1: error[E223]: the application's variants need AOS instances" in out, out
    assert "requirement 0 (pieces) of norm" in out and "hint: " in out


def test_check_knows_the_memory_the_variant_requires(tmp_path, constrained_exe, capsys):
    """Discovery records that norm's output must be in system memory: on a machine with RDMEM, `check` rejects a
    Region statement that leaves it only RDMEM (E222, the run's R403) and passes one that falls back to SYSMEM."""
    (tmp_path / "mapperopt.yaml").write_text(f"""
app: constrained
executable: {constrained_exe}
sizes:
  ci: {{args: ["-n", "400"], cpus: 1, legion_flags: ["-ll:rsize", "16"]}}
""")
    app = str(tmp_path / "mapperopt.yaml")
    (tmp_path / "rd.dsl").write_text("Task * CPU;\nRegion norm * CPU RDMEM;\n")
    assert main(["check", str(tmp_path / "rd.dsl"), "--app", app]) == 1
    out = capsys.readouterr().out
    assert ("rd.dsl:2:1: error[E222]: no memory of the list RDMEM can hold requirement 1 (pieces, numbers) of task "
            "'norm': RDMEM: the variant's layout constraint needs SYSMEM") in out, out
    assert "hint: add SYSMEM, which the variant's layout constraint requires, after the others" in out
    (tmp_path / "ok.dsl").write_text("Task * CPU;\nRegion * * CPU RDMEM,SYSMEM;\n")
    assert main(["check", str(tmp_path / "ok.dsl"), "--app", app]) == 0
    capsys.readouterr()
    assert main(["explain", str(tmp_path / "ok.dsl"), "--app", app]) == 0
    assert re.search(r"\n +0 +pieces +RDMEM \(then SYSMEM\) +AOS F_order .*\n +1 +pieces +SYSMEM ",
                     capsys.readouterr().out)


def test_tune_starts_from_the_layout_the_variant_needs(tmp_path, constrained_exe, capsys):
    """Verified (so that layouts are searched), `tune --app` starts from Legion's default mapper as the DSL writes it:
    SOA, but norm's pairs AOS as its variant needs. The start program passes `check` and computes the right numbers
    (it was `Layout * * * SOA F_order;`: E223 at every iteration; AOS for every task breaks the struct cast)."""
    runs = tmp_path / "runs"
    assert main(["tune", "--app", f"{constrained_exe} -n 400", "--verify-pattern", "checksum 106267000.0 OK",
                 "--iters", "1", "--baseline", "none", "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1",
                 "--runs-dir", str(runs)]) == 0, capsys.readouterr().out
    (start,) = runs.glob("*/tune-*/iter-001/mapper.dsl")
    assert "Layout * * * SOA F_order;\nLayout norm 0 * AOS;\n" in start.read_text()


def test_check_knows_the_alignment_the_variant_requires(tmp_path, constrained_exe, capsys):
    """With -align, norm's variant asks for its output aligned to at least 128 bytes: discovery records it, `check`
    rejects a Layout statement that gives it 16 (E223; Legion's -lg:safe_mapper stops such a run) and passes one that
    leaves the alignment to the variant or gives enough."""
    app = f"{constrained_exe} -n 400 -align"
    (tmp_path / "a16.dsl").write_text("Task * CPU;\nLayout * * * Align==16;\n")
    assert main(["check", str(tmp_path / "a16.dsl"), "--app", app]) == 1
    out = capsys.readouterr().out
    assert ("a16.dsl:2:1: error[E223]: the application's variants need Align>=128 instances, but this mapper gives "
            "Align==16 to requirement 1 (pieces) of norm") in out, out
    assert "hint: write `Layout * * * Align>=128;` instead" in out
    # `run` refuses it; AutoGuide says what the variant needs and drops the Align constraint.
    assert main(["run", "--app", app, "--mapper", str(tmp_path / "a16.dsl"), "--once", "--out",
                 str(tmp_path / "a16")]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "failed at stage check" in out and "the variants they run need Align>=128" in out, out
    feedback = json.loads((tmp_path / "a16" / "feedback.json").read_text())
    assert feedback["rule"] == "dsl-e223-rejected-layout", feedback
    assert {"op": "drop_layout_constraint", "constraint": "Align"} in feedback["edits"], feedback
    for ok in ("Task * CPU;\n", "Task * CPU;\nLayout * * * No_Align;\n", "Task * CPU;\nLayout * * * Align==256;\n"):
        (tmp_path / "ok.dsl").write_text(ok)
        assert main(["check", str(tmp_path / "ok.dsl"), "--app", app]) == 0, ok
        assert "error" not in capsys.readouterr().out


def test_a_layout_rejection_says_what_the_variant_needs(tmp_path, constrained_exe):
    """A mapper loaded without `check` that gives norm's pairs SOA is rejected by Legion's safe-mapper check; AutoGuide
    says the layout norm's variant needs (AOS, from the discovered description), not Legion's default SOA F_order."""
    from mapperopt.autoguide import apply_edits_to_text, explain
    from mapperopt.benchmarks.apps import describe_app
    from mapperopt.records import RunResult

    dsl = "Task * CPU;\nLayout * * * SOA;\n"
    mapper = compile_program(dsl, "mapper.dsl")
    app = app_from_command(f"{constrained_exe} -n 400")
    cmd = legion_command(app, "ci", 1, 0, ["-lg:safe_mapper"])
    done = subprocess.run(cmd, env=shim_env(app, mapper.so_path), capture_output=True, text=True, timeout=120)
    assert done.returncode != 0, done.stdout
    description = tmp_path / "description.json"
    description.write_text(json.dumps(describe_app(app, "ci")))
    result = RunResult(app=str(constrained_exe), mapper="mapper.dsl", status="failed", stage="run",
                       reason="aborted", log=done.stderr, dsl=dsl,
                       settings={"command": " ".join(cmd), "description": str(description)})
    fb = explain(result)
    assert fb.rule == "legion-layout-constraint", fb.raw_excerpt
    assert "its 'norm' variant needs AOS instances for requirement 0" in fb.suggestion, fb.suggestion
    assert "SOA F_order" not in fb.suggestion
    # Its edit moves toward that layout (it dropped C_order and AOS, the stencil's fix): the SOA goes, the pairs
    # get the variant's AOS, and the run passes the same check.
    assert [e.to_json() for e in fb.edits] == [{"op": "drop_layout_constraint", "constraint": "SOA"}], fb.edits
    fixed = compile_program(apply_edits_to_text(dsl, fb.edits), "fixed.dsl")
    done = subprocess.run(cmd, env=shim_env(app, fixed.so_path), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "checksum 106267000.0 OK" in done.stdout, done.stderr[-3000:]


def test_a_check_rejection_edits_toward_the_layout_the_variant_needs(tmp_path, constrained_exe, capsys):
    """E223's edits (AutoGuide's dsl-e223-rejected-layout) move toward the layout the rejected requirement needs:
    they drop the interleaving opposite to the one it needs (SOA for norm's AOS pairs), and only that; an alignment
    rejection drops the Align constraint and keeps the AOS the pairs need. The edited mapper passes `check`."""
    from mapperopt.autoguide import apply_edits_to_text

    cases = (("-n 400", "Task * CPU;\nLayout * * * SOA;\n", [{"op": "drop_layout_constraint", "constraint": "SOA"}]),
             ("-n 400 -align", "Task * CPU;\nLayout * * * AOS Align==16;\n",
              [{"op": "drop_layout_constraint", "constraint": "Align"}]))
    for i, (args, dsl, edits) in enumerate(cases):
        app = f"{constrained_exe} {args}"
        (tmp_path / f"m{i}.dsl").write_text(dsl)
        assert main(["run", "--app", app, "--mapper", str(tmp_path / f"m{i}.dsl"), "--once", "--out",
                     str(tmp_path / f"m{i}")]) == 1
        assert "failed at stage check" in capsys.readouterr().out
        feedback = json.loads((tmp_path / f"m{i}" / "feedback.json").read_text())
        assert feedback["rule"] == "dsl-e223-rejected-layout" and feedback["edits"] == edits, feedback
        (tmp_path / f"f{i}.dsl").write_text(apply_edits_to_text(dsl, feedback["edits"]))
        assert main(["check", str(tmp_path / f"f{i}.dsl"), "--app", app]) == 0, capsys.readouterr().out
        capsys.readouterr()


def test_layout_advice_for_a_program_nothing_verifies_says_to_verify_first(tmp_path, histogram_exe, capsys):
    """`run --profile` of a program whose output nothing checks (histogram's "HIST OK" line unread) proposed Layout
    statements as is; a layout its kernel does not expect can make it compute wrong numbers without a crash (which
    is why tune does not search layouts there): the advice says to give it a verification first, and only then."""
    (tmp_path / "m.dsl").write_text("Task * CPU;\nRegion * * CPU SYSMEM;\n")
    first = "give it a verification first (`verify:` in its application file, or --verify-pattern, --verify-cmd"
    for verify, out_dir in (([], "plain"), (["--verify-pattern", "HIST OK"], "verified")):
        assert main(["run", "--app", f"{histogram_exe} -n 100000 -reps 4", *verify, "--mapper",
                     str(tmp_path / "m.dsl"), "--profile", "--once", "--cpus", "1", "--out",
                     str(tmp_path / out_dir)]) == 0
        suggestion = " ".join(capsys.readouterr().out.split()).split("suggestion: ", 1)[1]
        assert "`Layout histogram * * Align==64;`" in suggestion, suggestion
        assert (first in suggestion) == (not verify), suggestion


def test_the_suggested_default_mapper_passes_check(tmp_path, constrained_exe, capsys):
    """After a run without --mapper, AutoGuide suggests a DSL mapper that "maps as Legion's default mapper does": it
    keeps what norm's variant needs (AOS pairs, output aligned with -align), so `check` passes it (it was
    `Layout * * * SOA F_order;` for every requirement: E223)."""
    for extra in ((), ("-align",)):
        out = tmp_path / f"default{len(extra)}"
        assert main(["run", "--app", f"{constrained_exe} -n 400 {' '.join(extra)}", "--once", "--out", str(out)]) == 0
        capsys.readouterr()
        suggestion = json.loads((out / "feedback.json").read_text())["suggestion"]
        (dsl,) = re.findall(r"to write in start\.dsl: `([^`]*)`", suggestion)
        (tmp_path / "start.dsl").write_text(dsl + "\n")
        code = main(["check", str(tmp_path / "start.dsl"), "--app", f"{constrained_exe} -n 400 {' '.join(extra)}"])
        assert code == 0, (dsl, capsys.readouterr().out)


def test_the_rdmem_hint_says_where_an_application_file_sizes_it(tmp_path, constrained_exe, capsys):
    """An application file has no `rsize` key: the hint names the two places that size RDMEM (the size's
    `legion_flags`, or the run's flags after `--`), and each of them, done as it says, makes RDMEM exist."""
    yaml = tmp_path / "mapperopt.yaml"
    plain = f"app: constrained\nexecutable: {constrained_exe}\nsizes:\n  ci: {{args: [\"-n\", \"400\"], cpus: 1}}\n"
    yaml.write_text(plain)
    dsl = tmp_path / "rd.dsl"
    dsl.write_text("Task * CPU;\nRegion * * CPU RDMEM,SYSMEM;\n")
    assert main(["check", str(dsl), "--app", str(yaml)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "warning[W302]: memory kind 'RDMEM' does not exist on this machine" in out, out
    assert ("hint: RDMEM exists only when the run sizes it (-ll:rsize MiB): give the run's flags after `--`, e.g. "
            "`-- -ll:rsize 64`, or in an application file the size's "
            "`legion_flags: [\"-ll:rsize\", \"64\"]`") in out, out
    assert main(["check", str(dsl), "--app", str(yaml), "--", "-ll:rsize", "64"]) == 0
    out = capsys.readouterr().out
    assert out.strip() == f"{dsl}: ok", out  # RDMEM exists: no W302
    yaml.write_text(plain.replace("cpus: 1}", "cpus: 1, legion_flags: [\"-ll:rsize\", \"64\"]}"))
    assert main(["check", str(dsl), "--app", str(yaml)]) == 0
    out = capsys.readouterr().out
    assert out.strip() == f"{dsl}: ok", out  # RDMEM exists: no W302
