"""A requirement on a piece of a partition whose instance does not fit (tests/app/histogram.cc, `fill` writing its
piece of `data`): on one node the DSL mapper's instance in system-side memory covers the whole top-level region, as
Legion's default mapper's does, so R403 names the piece but the whole region's size. AutoGuide says so and names
`Exact`, which makes the instance cover only the piece: with it R403 names the piece's size (the pieces still need
the region's size together)."""

from __future__ import annotations

import json

from mapperopt.cli import main



def run(tmp_path, exe, mapper_text: str, name: str) -> tuple[int, dict, str]:
    """(exit status, feedback.json or {}, the program's stderr) of one run with a 1 MiB RDMEM."""
    out = tmp_path / name
    path = tmp_path / f"{name}.dsl"
    path.write_text(mapper_text)
    code = main(["run", "--app", f"{exe} -n 1048576 -p 8 -reps 1 -ll:rsize 1", "--mapper", str(path),
                 "--verify-pattern", "HIST OK", "--once", "--timeout", "60", "--out", str(out)])
    feedback = out / "feedback.json"
    stderr = out / "stderr.txt"
    return (code, json.loads(feedback.read_text()) if feedback.exists() else {},
            stderr.read_text() if stderr.exists() else "")


def test_r403_on_a_piece_names_the_whole_region_instance_and_exact(tmp_path, monkeypatch, histogram_exe):
    monkeypatch.chdir(tmp_path)
    code, feedback, stderr = run(tmp_path, histogram_exe, "Task * CPU;\nRegion fill pieces CPU RDMEM;\n", "whole")
    assert code != 0 and "error R403" in stderr and "allocation of 4194304 bytes failed" in stderr, stderr
    suggestion = feedback["suggestion"]
    assert "whole top-level region" in suggestion and "`Layout fill pieces * Exact;`" in suggestion, suggestion
    assert "-ll:rsize" in suggestion  # the memory's own advice stays
    # What it says holds: with Exact each instance is a 512 KiB piece; the 8 pieces still need 4 MiB together.
    code, feedback, stderr = run(tmp_path, histogram_exe,
                                 "Task * CPU;\nRegion fill pieces CPU RDMEM;\nLayout fill pieces * Exact;\n", "exact")
    assert code != 0 and "allocation of 524288 bytes failed" in stderr, stderr
    assert "-ll:rsize" in feedback["suggestion"] and "Exact" not in feedback["suggestion"], feedback
