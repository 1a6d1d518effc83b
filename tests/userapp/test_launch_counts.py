"""A task launched several times on different fields (tests/app/twofields.cc: `scale` index launched over `blocks`
on field `a`, then on `b`, then single launched on `b` of `grid`; `total` single launched on `a`, then on `b`).
Discovery describes each task's first launch (of each kind) only: `explain` says how many launches discovery
mapped and that the regions and fields it shows are the first one's, instead of silently showing field `a` alone.
Descriptions stored before launches were counted still load, without the note."""

from __future__ import annotations

import re

import pytest

from mapperopt.benchmarks.userapp import app_from_command, discover
from mapperopt.cli import main
from mapperopt.descriptions import AppDescription, DescriptionError


def sections(out: str) -> dict[str, str]:
    """explain's text per task (the lines under `NAME (...)`), whitespace collapsed."""
    found = {}
    for block in out.split("\n\n"):
        head = re.match(r"(\w+) \(", block)
        if head:
            found[head.group(1)] = " ".join(block.split())
    return found


def test_explain_says_the_fields_shown_are_the_first_launchs(tmp_path, twofields_exe, capsys):
    (tmp_path / "m.dsl").write_text("Task * CPU;\n")
    assert main(["explain", str(tmp_path / "m.dsl"), "--app", str(twofields_exe)]) == 0
    by_task = sections(capsys.readouterr().out)
    # the first launches' field, `a`, as the table shows it
    assert re.search(r"0 blocks SYSMEM \S+ \S+ a ", by_task["scale"]), by_task["scale"]
    assert re.search(r"0 grid SYSMEM \S+ \S+ a ", by_task["total"]), by_task["total"]
    assert ("2 index launches and 1 single launch in discovery: the regions and fields above are its first index "
            "launch's; the same statements map the others, which may use other regions or fields (explain does not "
            "show them)") in by_task["scale"], by_task["scale"]
    assert ("2 single launches in discovery: the regions and fields above are its first launch's; the same "
            "statements map the others") in by_task["total"], by_task["total"]
    # launched once: nothing to say
    assert "in discovery:" not in by_task["top"], by_task["top"]


def test_a_description_without_launch_counts_still_loads(twofields_exe):
    """A description stored before discovery counted launches (a tuning folder's settings.json, the discovery cache
    of an older version) loads with the counts unknown; a new one keeps them through to_json."""
    desc = discover(app_from_command(str(twofields_exe)))
    app = AppDescription.from_json(desc)
    assert dict(app.task("scale").launches) == {"index": 2, "single": 1}
    assert dict(app.task("total").launches) == {"single": 2}
    assert AppDescription.from_json(app.to_json()).task("scale").launches == app.task("scale").launches
    old = {**desc, "tasks": [{k: v for k, v in t.items() if k != "launches"} for t in desc["tasks"]]}
    assert AppDescription.from_json(old).task("scale").launches == ()
    assert AppDescription.from_json(old) == app  # the same tasks, regions and fields
    bad = {**desc, "tasks": [{**t, "launches": {"index": "2"}} for t in desc["tasks"]]}
    with pytest.raises(DescriptionError, match=r"task 'top' has launches \{'index': '2'\}"):
        AppDescription.from_json(bad)
