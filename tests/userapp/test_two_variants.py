"""A task with two variants for one processor kind (tests/app/twovariants.cc: `axpy` reads through generic
accessors, `axpy_raw` walks raw pointers and registers an SOA layout constraint): Legion's default mapper picks the
variant that runs, so `check` holds a Layout statement against the constraints of every variant of that kind, in
either registration order, names the variant in E223, and discovery and `explain` show both variants."""

from __future__ import annotations

import subprocess

import pytest

from mapperopt.benchmarks.userapp import app_from_command, legion_command, shim_env
from mapperopt.cli import main
from mapperopt.compiler import compile_program

AOS = "Task * CPU;\nLayout axpy 0 * AOS;\n"


@pytest.mark.parametrize("order", ["", " -raw-first"])
def test_check_holds_a_layout_against_every_variant_of_the_kind(tmp_path, twovariants_exe, capsys, order):
    app = f"{twovariants_exe} -n 400{order}"
    (tmp_path / "aos.dsl").write_text(AOS)
    assert main(["check", str(tmp_path / "aos.dsl"), "--app", app]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "aos.dsl:2:1: error[E223]: the application's variants need SOA instances, but this mapper gives AOS to " \
           "requirement 0 (pieces) of axpy" in out, out
    assert "variant 'axpy_raw'" in out, out
    # A layout both variants take passes.
    (tmp_path / "soa.dsl").write_text("Task * CPU;\nLayout axpy 0 * SOA;\n")
    assert main(["check", str(tmp_path / "soa.dsl"), "--app", app]) == 0, capsys.readouterr().out
    capsys.readouterr()


def test_explain_shows_the_variants_of_one_kind(tmp_path, twovariants_exe, capsys):
    """explain names both variants and the one discovery ran: with the generic variant registered first, Legion's
    default mapper ran axpy_raw, whose constraint discovery used to miss."""
    (tmp_path / "m.dsl").write_text("Task * CPU;\n")
    assert main(["explain", str(tmp_path / "m.dsl"), "--app", f"{twovariants_exe} -n 400"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("2 CPU variants (axpy, axpy_raw): Legion's default mapper picks the one that runs (in discovery: "
            "axpy_raw)") in out, out


def test_the_layout_check_refuses_is_one_that_computes_wrong_numbers(tmp_path, twovariants_exe):
    """Why E223 must hold the second variant's constraint too: loaded without `check`, the AOS mapper computes a wrong
    checksum (Legion's default mapper runs axpy_raw, registered second, on the AOS instance its constraint rejects;
    no Legion error), while the same program under the same mapper without the Layout statement is right."""
    app = app_from_command(f"{twovariants_exe} -n 400")
    cmd = legion_command(app, "ci", 1, 0, [])
    for dsl, expected in (("Task * CPU;\n", "checksum 399000.0 OK"), (AOS, "WRONG")):
        mapper = compile_program(dsl, "mapper.dsl")
        done = subprocess.run(cmd, env=shim_env(app, mapper.so_path), capture_output=True, text=True, timeout=120,
                              cwd=tmp_path)
        assert expected in done.stdout, (dsl, done.stdout, done.stderr[-3000:])
