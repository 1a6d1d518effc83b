"""A tutorial-style particle-deposit program (tests/app/deposit.cc) that names no region: an index launch reading its
pieces and reducing into the whole `bins` region, a Future-returning `sum_bins`, "RESULT OK" and its own elapsed time.
What a Legion developer tuning it reads: `run`'s advice after one execution, its two medians of an even count, E203's
hint for a C++ variable's name, explain's privileges, note R459 and the verify pattern the output offers. Real
runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mapperopt.cli import main

METRIC = ["--metric", "elapsed: ([0-9.]+) ms", "--unit", "ms"]


def _run(capsys, *args: str) -> tuple[int, str]:
    code = main(["run", *args])
    out = capsys.readouterr()
    return code, out.out + out.err


def _cells(out: str) -> dict[str, str]:
    """`run`'s table as {key: value}, the value's wrapped lines joined."""
    cells: dict[str, str] = {}
    key = None
    for line in out.splitlines():
        if line.startswith("│"):
            left, value = (part.strip() for part in line.strip("│").split("│", 1))
            key = left or key
            cells[key] = f"{cells.get(key, '')} {value.strip(' │')}".strip()
    return cells


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_one_execution_is_said_to_need_more_repeats_not_a_higher_max(deposit_exe, tmp_path, capsys, monkeypatch):
    """`--repeats 1 --max-repeats 3` measures one execution (its interval has no width, which is within any target),
    and its note told the user to raise --max-repeats, which they had: it names --repeats 3 and says why."""
    monkeypatch.chdir(tmp_path)
    code, out = _run(capsys, "--app", str(deposit_exe), *METRIC, "--repeats", "1", "--max-repeats", "3",
                     "--out", "one")
    assert code == 0 and _cells(out)["repeats"] == "1", out
    flat = _flat(out)
    assert "No spread estimate: measured by a single execution" in flat, out
    assert ("measure again with --repeats 3 (executions are added beyond --repeats only while the 90 % interval is "
            "wider than ±5 %, and one execution's has no width: --repeats 1 measures one, whatever --max-repeats is)"
            ) in flat, out
    assert "a higher --max-repeats" not in flat, out
    # a --max-repeats below 3 is raised with it
    code, out = _run(capsys, "--app", str(deposit_exe), *METRIC, "--repeats", "1", "--max-repeats", "1",
                     "--out", "capped")
    assert code == 0 and "measure again with --repeats 3 --max-repeats 3 (" in _flat(out), out


def test_an_even_count_says_which_median_each_row_gives(deposit_exe, tmp_path, capsys, monkeypatch):
    """With 2 executions the table said `median 419.5 ms` and `metric 429.8 (median; ...)`: the median of the
    throughputs is the mean of the two middle ones, whose time is not the mean of the two times. Each row says which
    it is, with the values it comes from."""
    monkeypatch.chdir(tmp_path)
    code, out = _run(capsys, "--app", str(deposit_exe), *METRIC, "--repeats", "2", "--max-repeats", "2",
                     "--verify-pattern", "RESULT OK", "--out", "two")
    cells = _cells(out)
    assert code == 0 and cells["repeats"] == "2", out
    times = sorted(float(re.search(r"elapsed: ([0-9.]+) ms", (tmp_path / "two" / f"stdout-{k}.txt").read_text())
                         .group(1)) for k in (1, 2))
    assert cells["metric"].startswith(f"{sum(times) / 2:.4g} (median: the mean of the two middle values, "
                                      f"{times[0]:.4g} and {times[1]:.4g}; "), cells
    inverse = 2 / (1 / times[0] + 1 / times[1])
    assert cells["median"].startswith(f"{inverse:.4g} ms (throughput "), cells
    assert cells["median"].endswith(": the time is 1 / the mean of the two middle executions' throughputs, not the "
                                    "mean of their times"), cells
    # an odd count has one middle execution: one median, said plainly
    code, out = _run(capsys, "--app", str(deposit_exe), *METRIC, "--repeats", "3", "--max-repeats", "3",
                     "--out", "three")
    cells = _cells(out)
    assert code == 0 and "(median; /elapsed" in cells["metric"] and "middle" not in cells["median"], cells


def test_e203_for_a_cpp_variable_lists_each_argument_with_its_privilege(deposit_exe, tmp_path, capsys):
    """`Region deposit bins CPU SYSMEM;` (a C++ variable): the hint offered `Region deposit 0 CPU SYSMEM;`, the
    particles, not the reduction buffer the user meant. It lists each argument with its privilege and fields and the
    statement selecting it; each statement checks clean."""
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Region deposit bins CPU SYSMEM;\n")
    assert main(["check", str(mapper), "--app", str(deposit_exe)]) == 1
    out = _flat(capsys.readouterr().out)
    hint = out[out.index("hint:"):]
    assert ("select the argument you mean by its index (task 'deposit' has 2): argument 0 (read_only; field "
            "field_0), `Region deposit 0 CPU SYSMEM;`; argument 1 (reduce sum_i64; field field_1), "
            "`Region deposit 1 CPU SYSMEM;`; or name its region") in hint, hint
    for index in (0, 1):
        mapper.write_text(f"Region deposit {index} CPU SYSMEM;\n")
        assert main(["check", str(mapper), "--app", str(deposit_exe)]) == 0, capsys.readouterr().out
        capsys.readouterr()


def test_explain_shows_every_arguments_privilege(deposit_exe, tmp_path, capsys):
    """explain marked only the reduction; a Legion developer reads the privileges first. A column gives each."""
    (tmp_path / "empty.dsl").write_text("")
    assert main(["explain", str(tmp_path / "empty.dsl"), "--app", str(deposit_exe)]) == 0
    out = capsys.readouterr().out
    headers = [line for line in out.splitlines() if line.startswith("  arg  region")]
    assert len(headers) == 3 and all(h.split() == ["arg", "region", "memory", "layout", "privilege", "fields"]
                                     for h in headers), out
    rows = {}
    for block in out.split("\n\n"):
        task = block.split(" ", 1)[0]
        for line in block.splitlines():
            if re.match(r"^ +\d+  ", line):
                rows[(task, int(line.split()[0]))] = line
    assert rows[("init_particles", 0)].split()[5] == "write_discard", rows
    assert rows[("deposit", 0)].split()[5] == "read_only", rows
    line = rows[("deposit", 1)]
    assert line.split()[5:7] == ["reduce", "sum_i64"] and line.endswith(
        "field_1  (every point reduces into this one region)"), line
    assert rows[("sum_bins", 0)].split()[5] == "read_only", rows
    # each privilege under the column's header
    header = headers[1]
    assert all(rows[("deposit", i)].index(word) == header.index("privilege")
               for i, word in ((0, "read_only"), (1, "reduce"))), (header, rows)


def test_run_repeats_note_r459_after_its_table(deposit_exe, tmp_path, capsys, monkeypatch):
    """`InstanceLimit deposit 1;` on the launch that reduces into `bins`: the mapper's note R459 was only in the run
    folder's stderr.txt; `run` repeats it after its table, as R452, R453 and R455, and `run --json` in its notes."""
    monkeypatch.chdir(tmp_path)
    Path("lim.dsl").write_text("Task * CPU;\nRegion * * CPU SYSMEM;\nInstanceLimit deposit 1;\n")
    code, out = _run(capsys, "--app", str(deposit_exe), *METRIC, "--verify-pattern", "RESULT OK", "--mapper",
                     "lim.dsl", "--once", "--no-profile", "--out", "lim")
    note = ("note R459: task 'deposit' has an InstanceLimit: requirement 1, one region every point of its index launch "
            "reduces into, is mapped per point, not collectively")
    assert code == 0 and note in (tmp_path / "lim" / "stderr.txt").read_text(), out
    table_end = out.index("└")
    assert note in _flat(out[table_end:]), out
    assert main(["run", "--json", "--app", str(deposit_exe), *METRIC, "--verify-pattern", "RESULT OK", "--mapper",
                 "lim.dsl", "--once", "--no-profile", "--out", "json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert [(n["kind"], n["code"]) for n in notes] == [("instance_limit_collective", "R459")], notes
    assert notes[0]["text"].startswith(note), notes
    # without the limit: no note
    Path("free.dsl").write_text("Task * CPU;\nRegion * * CPU SYSMEM;\n")
    code, out = _run(capsys, "--app", str(deposit_exe), *METRIC, "--verify-pattern", "RESULT OK", "--mapper",
                     "free.dsl", "--once", "--no-profile", "--out", "free")
    assert code == 0 and "R459" not in out, out


def test_a_first_run_offers_the_result_line_as_the_verify_pattern(deposit_exe, tmp_path, capsys, monkeypatch):
    """The first plain `run` offered --metric for the program's `elapsed:` line but nothing for its `RESULT OK`:
    a mapper that made it compute wrong totals would still run "ok". The line is offered whole up to OK (`OK` alone
    would match too much), and the offered pattern passes."""
    monkeypatch.chdir(tmp_path)
    code, out = _run(capsys, "--app", str(deposit_exe), "--once", "--out", "plain")
    flat = _flat(out)
    assert code == 0 and "Metric not read:" in flat, out
    assert ("Output not checked: nothing checks the output but the exit status, though the program printed "
            "'RESULT OK' (stdout.txt in the run folder); so that a run with wrong results fails, give the pattern a "
            "correct output prints: `--verify-pattern 'RESULT OK'`") in flat, out
    code, out = _run(capsys, "--app", str(deposit_exe), "--once", "--verify-pattern", "RESULT OK", "--out", "checked")
    assert code == 0 and _cells(out)["verified"].startswith("yes") and "Output not checked" not in out, out
