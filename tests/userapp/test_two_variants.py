"""A task with two variants for one processor kind (tests/app/twovariants.cc: `axpy` reads through generic
accessors, `axpy_raw` walks raw pointers and registers an SOA layout constraint): Legion's default mapper picks the
variant that runs, so `check` holds a Layout statement against the constraints of every variant of that kind, in
either registration order, names the variant in E223, and discovery and `explain` show both variants."""

from __future__ import annotations

import pytest

from mapperopt.cli import main

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
