"""A user's program whose task variant registers layout constraints (tests/app/constrained.cc: `norm` reads (re, im)
pairs through a pointer, valid because its variant asks for exactly those two fields, contiguous and in order, AOS;
its output must be in system memory) runs under a DSL mapper through `mapperopt run --app` as it runs under Legion's
default mapper: the instances follow every constraint of the variant that no Layout statement sets, and a memory the
variant forbids is skipped like an absent one."""

from __future__ import annotations

import re

from mapperopt.cli import main


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


def test_a_memory_the_variant_forbids_is_skipped(tmp_path, monkeypatch, constrained_exe):
    monkeypatch.chdir(tmp_path)
    # RDMEM (-ll:rsize) is there, but norm's output must be in system memory: the list falls back to SYSMEM.
    code, stdout, stderr = run(tmp_path, constrained_exe, "Task * CPU;\nRegion * * CPU RDMEM,SYSMEM;\n",
                               "-ll:rsize", "16", "-lg:safe_mapper", name="fallback")
    assert code == 0 and "checksum 106267000.0 OK" in stdout, stdout + stderr[-3000:]
    assert ("note R452: requirement 1 (pieces, numbers) of task 'norm': RDMEM skipped (the variant's layout "
            "constraint needs SYSMEM), using SYSMEM") in stderr, stderr[-3000:]
    # No memory of the list is allowed: the error names the task, the requirement and the constraint.
    code, stdout, stderr = run(tmp_path, constrained_exe, "Task * CPU;\nRegion norm * CPU RDMEM;\n",
                               "-ll:rsize", "16", name="none")
    assert code != 0 and "checksum" not in stdout
    assert re.search(r"error R403: no memory of the list RDMEM can hold requirement 1 \(pieces, numbers\) of task "
                     r"'norm': RDMEM: the variant's layout constraint needs SYSMEM; processor CPU", stderr), stderr[-3000:]


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
