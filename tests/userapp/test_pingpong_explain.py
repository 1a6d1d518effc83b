"""`explain` of a ping-pong program (tests/app/pingghost.cc with -ab: `step` reads ghost_a and writes blocks_b, then
reads ghost_b and writes blocks_a) under a mapper that selects arguments by region name: the table is the first
launch's, and the launches on the other regions, which such statements map otherwise, get rows of their own, which
a real run's placement trace confirms; explain repeats check's W328. Statements that select by index or `*` map
every launch alike: no rows beside the table."""

from __future__ import annotations

import json
import re

import pytest

from mapperopt.cli import main

# Legion's default layout for the arguments no statement selects on the later launches
BY_NAME = ("Task * CPU;\nRegion * * CPU SYSMEM;\nLayout step ghost_a * SOA C_order;\n"
           "Layout step blocks_b * SOA C_order;\n")
# `next` is the root of ghost_b, which discovery never recorded above its nearest name (the swap's partner region)
BY_ROOT = "Task * CPU;\nRegion * * CPU SYSMEM;\nLayout step next * C_order;\nLayout step ghostip * AOS;\n"
BY_INDEX = "Task * CPU;\nRegion * * CPU SYSMEM;\nLayout step 0 * SOA C_order;\nLayout step 1 * SOA C_order;\n"
ROW = re.compile(r"^\s+(\d+)\s+(\w+)\s+(\w+)\s+(SOA|AOS) (C|F)_order\b")


def explain(tmp_path, capsys, pingghost, mapper: str) -> tuple[list[str], str]:
    """The lines of explain's section for `step` and its stderr."""
    (tmp_path / "m.dsl").write_text(mapper)
    assert main(["explain", str(tmp_path / "m.dsl"), "--app", pingghost, "--machine", "1x0x4", "--", "-ab"]) == 0
    out = capsys.readouterr()
    block = next(b for b in out.out.split("\n\n") if b.startswith("step ("))
    return block.splitlines(), out.err


def per_launch(lines: list[str]) -> dict[int, dict[int, tuple]]:
    """{launch: {arg: (region, memory, order, dims)}} of discovery's 4 launches of `step` as explain's rows say."""
    first: dict[int, tuple] = {}
    later: dict[int, dict[int, tuple]] = {}
    rows = first
    for line in lines:
        if head := re.match(r"\s+launches? ([\d, ]+) \(on other regions\) get:$", line):
            rows = {}
            for n in head.group(1).split(", "):
                later[int(n)] = rows
        elif m := ROW.match(line):
            rows[int(m.group(1))] = m.groups()[1:]
    return {n: {**first, **later.get(n, {})} for n in range(1, 5)}


def traced(run_dir) -> dict[int, dict[int, tuple]]:
    """The same from the placement trace of a real run: point 0's n-th mapping is launch n's."""
    out, n = {}, 0
    for line in (run_dir / "trace.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["task"] == "step" and rec["point"] == [0]:
            n += 1
            out[n] = {r["index"]: (r["name"], r["memory"], r["layout"]["order"], r["layout"]["dims"])
                      for r in rec["regions"]}
    return out


def test_explain_shows_the_rows_of_the_launches_a_name_selected_statement_maps_otherwise(tmp_path, pingghost, capsys):
    lines, err = explain(tmp_path, capsys, pingghost, BY_NAME)
    text = " ".join(" ".join(lines).split())
    assert "0 ghost_a SYSMEM SOA C_order" in text and "1 blocks_b SYSMEM SOA C_order" in text, text
    # no statement names ghost_b or blocks_a: Legion's default layout on launches 2 and 4
    assert ("launches 2, 4 (on other regions) get: 0 ghost_b SYSMEM SOA F_order 1 blocks_a SYSMEM SOA F_order 4 index "
            "launches in discovery;") in text, text
    assert "the rows of later launches above show the arguments it maps otherwise)" in text, text
    # as check says it, after the table
    assert "warning[W328]: 'ghost_a' (a partition of region 'cur') selects argument 0 of task 'step'" in err, err
    assert "`Layout step 0 * SOA C_order;` selects argument 0 on every launch" in err, err


@pytest.mark.parametrize("mapper", [BY_NAME, BY_ROOT], ids=["partitions", "partner root"])
def test_explains_rows_per_launch_are_those_of_a_real_run(tmp_path, pingghost, capsys, mapper):
    lines, _ = explain(tmp_path, capsys, pingghost, mapper)
    said = per_launch(lines)
    assert said[2] != said[1], lines  # the launches on the other regions get rows of their own
    (tmp_path / "m.dsl").write_text(mapper)
    main(["run", "--app", pingghost, "--mapper", str(tmp_path / "m.dsl"), "--trace", "--once", "--out",
          str(tmp_path / "run"), "--", "-ab"])
    capsys.readouterr()
    assert traced(tmp_path / "run") == said


@pytest.mark.parametrize("mapper", [BY_INDEX, "Task * CPU;\nLayout * * * SOA C_order;\n"], ids=["index", "wildcard"])
def test_statements_that_map_every_launch_alike_keep_the_short_line(tmp_path, pingghost, capsys, mapper):
    lines, err = explain(tmp_path, capsys, pingghost, mapper)
    text = " ".join(" ".join(lines).split())
    assert "get:" not in text and "W328" not in err, text
    assert ("the same statements map every launch (a statement that selects an argument by a region name, on the "
            "launches where it is in that region)") in text, text


def test_explain_json_has_the_rows_of_the_later_launches_the_text_shows(tmp_path, pingghost, capsys):
    lines, _ = explain(tmp_path, capsys, pingghost, BY_NAME)
    shown = {n: rows for n, rows in per_launch(lines).items() if n != 1}
    assert main(["explain", str(tmp_path / "m.dsl"), "--app", pingghost, "--machine", "1x0x4", "--json", "--",
                 "-ab"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    later = [r for r in records if r["task"] == "step" and "launches" in r]
    assert [r["launches"] for r in later] == ["launches 2, 4"], later
    group = later[0]
    assert group["other_regions"]["kind"] == "index" and group["other_regions"]["launches"] == [[2, 4, 2]], group
    first = next(r for r in records if r["task"] == "step" and "proc" in r)
    # launches 2 and 4: the first launch's rows with the JSON's in place of those they map otherwise, as the text's
    rows = {r["index"]: (r["name"], r["memory"], r["layout"]["order"], r["layout"]["dims"])
            for r in [*first["regions"], *group["regions"]]}
    assert rows == shown[2] == shown[4], (rows, shown)
    assert {r["index"] for r in group["regions"]} == {0, 1} and all(r["node"] == 0 for r in group["regions"]), group
