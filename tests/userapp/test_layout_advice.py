"""AutoGuide's advice on a user's program (tests/app/layoutdep.cc) whose kernel assumes the layout Legion's default
mapper gives (SOA F_order) without registering it: under a mapper that changes the layout it hangs
(LAYOUTDEP_BUG=hang) or prints a wrong answer (LAYOUTDEP_BUG=wrong). Real runs through `mapperopt run --app`."""

from __future__ import annotations

import dataclasses
import json

from mapperopt.cli import main


def feedback(tmp_path, monkeypatch, exe, mapper_text: str, bug: str | None, *options: str, name: str = "run") -> dict:
    """feedback.json of `mapperopt run --app 'EXE -n 64' --mapper ... --once` with LAYOUTDEP_BUG=`bug` (None: unset,
    a correct program)."""
    monkeypatch.chdir(tmp_path)
    if bug is None:
        monkeypatch.delenv("LAYOUTDEP_BUG", raising=False)
    else:
        monkeypatch.setenv("LAYOUTDEP_BUG", bug)
    (tmp_path / f"{name}.dsl").write_text(mapper_text)
    out = tmp_path / name
    main(["run", "--app", f"{exe} -n 64", "--mapper", str(tmp_path / f"{name}.dsl"), "--verify-pattern", "check: OK",
          "--once", "--out", str(out), *options])
    return json.loads((out / "feedback.json").read_text())


def test_a_timeout_is_not_blamed_on_a_limit_that_covers_every_point_but_on_the_layout(tmp_path, monkeypatch,
                                                                                     layoutdep_exe):
    """`fill` is launched over 2x2 = 4 points: `InstanceLimit fill 4;` holds none back, so the Layout change is the
    suspect to name, and the statement to try the program's natural layout with."""
    mapper = "Task * CPU;\nRegion * * CPU SYSMEM;\nLayout * * * AOS C_order;\nInstanceLimit fill 4;\n"
    fb = feedback(tmp_path, monkeypatch, layoutdep_exe, mapper, "hang", "--timeout", "5", "--", "-ll:cpu", "2")
    assert fb["stage"] == "timeout", fb
    text = fb["explanation"]
    assert "the mapper has `InstanceLimit fill 4;`" not in text, text
    assert ("`InstanceLimit fill 4;` (line 4 of the mapper) cannot hold any back: its N covers the 4 points of "
            "fill's index launches") in text, text
    assert "`Layout * * * AOS C_order;` (line 3 of the mapper)" in text, text
    assert "without `InstanceLimit fill 4;`" not in fb["suggestion"], fb["suggestion"]
    assert "`Layout * * * SOA F_order;` in place of `Layout * * * AOS C_order;`" in fb["suggestion"], fb["suggestion"]

    # In a search, Legion's default mapper ran the same program as the baseline and finished: the time limit is not
    # too short for the program itself, which the advice then says instead of asking to find it out.
    from mapperopt.autoguide import explain
    from mapperopt.records import RunResult

    # `fill`'s points run over both CPUs (Legion's default placement) and every instance is in SYSMEM: after the
    # layout, the advice is that of a hang (run without --mapper), not to spread the launches.
    result = RunResult.from_json(json.loads((tmp_path / "run" / "result.json").read_text()))
    assert "Run the same command once without --mapper (Legion's default mapper)" in explain(result).suggestion
    assert "IndexTaskMap" not in explain(result).suggestion
    searched = explain(result, baselines={"default": 0.5}).suggestion
    assert ("The time limit is long enough for the program itself: Legion's default mapper finished it as the "
            "baseline with the same settings, so the program hangs under this mapper, or this mapper makes it far "
            "slower." in searched), searched
    assert "Run the same command once without --mapper" not in searched, searched


def test_a_timeout_names_each_limit_that_can_hold_points_back_and_the_layout_as_well(tmp_path, monkeypatch,
                                                                                    layoutdep_exe):
    mapper = ("Task * CPU;\nRegion * * CPU SYSMEM;\nLayout * * * AOS C_order;\nInstanceLimit fill 4;\n"
              "InstanceLimit fill 1;\n")
    fb = feedback(tmp_path, monkeypatch, layoutdep_exe, mapper, "hang", "--timeout", "5", "--", "-ll:cpu", "2")
    assert fb["stage"] == "timeout", fb
    text, suggestion = fb["explanation"], fb["suggestion"]
    assert "the mapper has `InstanceLimit fill 1;` (line 5 of the mapper)" in text, text
    assert "`InstanceLimit fill 4;` (line 4 of the mapper) cannot hold any back" in text, text
    assert "`Layout * * * AOS C_order;` (line 3 of the mapper)" in text, text
    assert "Run the mapper once without `InstanceLimit fill 1;`" in suggestion, suggestion
    assert "`Layout * * * SOA F_order;` in place of `Layout * * * AOS C_order;`" in suggestion, suggestion


def test_a_wrong_answer_under_a_layout_change_names_the_layout_and_the_natural_one(tmp_path, monkeypatch,
                                                                                  layoutdep_exe):
    """The verification fails only because `Layout` asks for C_order: the advice names that statement and the
    program's natural layout to try first, and does not speak of "the most recent change" (a random proposal, or
    the start program, is no edit of an earlier mapper)."""
    from mapperopt.autoguide import explain
    from mapperopt.benchmarks.userapp import _intermittent
    from mapperopt.records import RunResult

    mapper = "Task * CPU;\nRegion * * CPU SYSMEM;\nLayout * * * SOA C_order;\n"
    fb = feedback(tmp_path, monkeypatch, layoutdep_exe, mapper, "wrong")
    assert fb["stage"] == "verify", fb
    suggestion = fb["suggestion"]
    assert "A suspect is the mapper's `Layout * * * SOA C_order;` (line 3 of the mapper)" in fb["explanation"], fb
    assert suggestion.startswith("Run the mapper once with `Layout * * * SOA F_order;` in place of "
                                 "`Layout * * * SOA C_order;`"), suggestion
    assert "most recent" not in suggestion, suggestion
    assert "a typo in a pattern" in suggestion, suggestion  # the check itself may still be wrong

    # The same failure after earlier executions passed: the output varies, which no pattern can make it do.
    result = RunResult.from_json(json.loads((tmp_path / "run" / "result.json").read_text()))
    varied = explain(dataclasses.replace(result, reason=_intermittent(2, result.reason)))
    assert "typo" not in varied.suggestion and "correct the verification" not in varied.suggestion, \
        varied.suggestion
    assert "Run the mapper once with `Layout * * * SOA F_order;`" in varied.suggestion, varied.suggestion


def test_an_abort_in_realms_copies_names_the_layout_on_the_reduction(tmp_path, monkeypatch, graph_exe, capsys):
    """tests/app/graph.cc's `spmv` reduces (sum_f64) into the image partition 'ghost'; `Layout spmv 2 * AOS F_order
    Align==64;` makes Realm's copy engine assert (realm/transfer/address_list.cc): `check` warns of it (W330, the
    fill of a reduction instance padded by the Align). The advice names that statement and the reduction it selects
    (from discovery's description), the natural statement to try, and, where the failing line shows it, that the
    abort is in Realm's data movement, not the program's kernels."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "red.dsl").write_text("Task * CPU;\nLayout spmv 2 * AOS F_order Align==64;\n")
    app = f"{graph_exe} -steps 5 -n 4000 -e 16000 -p 4"
    assert main(["check", str(tmp_path / "red.dsl"), "--app", app, "--", "-ll:cpu", "2"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("red.dsl:2:1: warning[W330]: line 2's `Layout spmv 2 * AOS F_order Align==64;` gives argument 2 (ghost) "
            "of spmv AOS instances with an element stride of 64 bytes (AOS Align==64 pads each 8-byte field to 64 "
            "bytes), for a reduction") in out, out
    assert "hint: drop the Align: write `Layout spmv 2 * AOS F_order;` instead" in out, out
    main(["run", "--app", app, "--mapper", str(tmp_path / "red.dsl"),
          "--verify-pattern", "check: OK", "--once", "--out", str(tmp_path / "run"), "--", "-ll:cpu", "2"])
    fb = json.loads((tmp_path / "run" / "feedback.json").read_text())
    # The bad copies corrupt memory: most runs stop at Realm's assertion, some at the C library's heap check
    # (`malloc(): invalid next size`, a plain abort, with no source line to name).
    assert (fb["stage"], fb["edits"]) == ("run", []) and fb["category"] in ("crash.assertion", "crash.abort"), fb
    text, suggestion = fb["explanation"], fb["suggestion"]
    if fb["category"] == "crash.assertion":
        assert "Realm's data-movement code (realm/transfer/address_list.cc" in text, text
    assert ("`Layout spmv 2 * AOS F_order Align==64;` (line 2 of the mapper) selects spmv's argument 2 'ghost' "
            "(reduce sum_f64)") in text, text
    assert suggestion.startswith("Run the mapper once with `Layout spmv 2 * SOA F_order;` in place of "
                                 "`Layout spmv 2 * AOS F_order Align==64;`"), suggestion
    assert "most recent" not in suggestion, suggestion


def test_aos_of_several_fields_beside_soa_is_warned_of_and_crashes_realms_copies(tmp_path, monkeypatch, graph_exe,
                                                                                  capsys):
    """Each instance mapperopt makes holds every field of the field space: `Layout spmv * * AOS;` gives spmv's
    pieces of `nodes` (3 fields) and `edges` (3) an element stride of 24 bytes, while the tasks that write them keep
    SOA; the installed Realm's copies between the two over the by-field and preimage pieces assert
    (address_list.cc:152; fixed upstream in StanfordLegion/realm#436), every run. `check` warns (W330) and hints at
    the same layout for every task, with which the run works; that mapper draws no W330."""
    monkeypatch.chdir(tmp_path)
    app = f"{graph_exe} -steps 5 -n 4000 -e 16000 -p 4"
    runs = {}
    for name, mapper in (("mix", "Task * CPU;\nLayout spmv * * AOS;\n"),
                         ("same", "Task * CPU;\nLayout * nodes * AOS;\nLayout * edges * AOS;\n")):
        (tmp_path / f"{name}.dsl").write_text(mapper)
        assert main(["check", f"{name}.dsl", "--app", app, "--", "-ll:cpu", "2"]) == 0
        runs[name] = " ".join(capsys.readouterr().out.split())
        code = main(["run", "--app", app, "--mapper", f"{name}.dsl", "--verify-pattern", "check: OK", "--once",
                     "--out", name, "--", "-ll:cpu", "2"])
        runs[name] = (runs[name], code, json.loads((tmp_path / name / "feedback.json").read_text()))
    out, code, fb = runs["mix"]
    assert ("mix.dsl:2:1: warning[W330]: line 2's `Layout spmv * * AOS;` gives argument 0 (owned) of spmv and argument "
            "1 (edge_pieces) of spmv AOS instances with an element stride of 24 bytes (each instance holds all 3 "
            "fields of 'nodes': color, val and acc") in out, out
    assert "init_nodes (argument 0), total (argument 0) and init_edges (argument 0) keep SOA" in out, out
    assert ("hint: give every task that uses these fields the same layout, e.g. `Layout * nodes * AOS;` and "
            "`Layout * edges * AOS;`") in out, out
    assert code != 0 and fb["stage"] == "run" and fb["category"].startswith("crash."), fb
    out, code, fb = runs["same"]
    assert "W330" not in out and code == 0, (out, fb)


def test_w330_on_an_equal_partition_says_in_short_that_it_may_not_apply(tmp_path, monkeypatch, foreign_exe, capsys):
    """tests/app/foreign.cc splits its two-field region with create_equal_partition (dense pieces of a rectangle):
    `Layout "Update Values" 0 CPU AOS;` beside `sum`'s SOA of the whole region makes Realm copy between the two
    layouts, which the installed Realm runs well here; its crash needs a sparse or aliased partition, which discovery
    does not record. W330 says so in a few lines (it spelt out the crash's signatures and upstream fix in nine), the
    Realm issue in its note, and the run verifies."""
    monkeypatch.chdir(tmp_path)
    mapper = 'Task * CPU;\nTunable 11 = 2 int32;\nLayout "Update Values" 0 CPU AOS;\n'
    (tmp_path / "aos.dsl").write_text(mapper)
    app = f"{foreign_exe} -n 1000 -steps 1"
    assert main(["check", "aos.dsl", "--app", app, "--", "-ll:cpu", "2"]) == 0
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if "warning[W330]" in x]
    assert ("(each instance holds all 2 fields of 'node space': value and weight), but sum (argument 0) keeps SOA on "
            "these fields, so Realm copies between the two layouts, which can crash over a sparse or aliased "
            "partition") in line, line
    assert ("note: a risk, not a certainty: the installed Realm's copies between two layouts crash only over a sparse "
            "or aliased partition (an image, a preimage), not over an equal or block one, and discovery does not "
            "record which partition this is") in out, out
    assert "SIGFPE" not in out, out
    assert len(line) < 400, len(line)  # nearly three times as long before
    assert main(["run", "--app", app, "--mapper", "aos.dsl", "--verify-pattern", "checksum .* OK", "--once",
                 "--out", "run", "--", "-ll:cpu", "2"]) == 0


def test_the_statement_to_try_is_not_called_the_natural_layout_where_it_keeps_an_align(tmp_path, monkeypatch,
                                                                                       layoutdep_exe):
    """After a wrong answer the suspect is the C_order alone (an Align is no suspect there): the statement to try
    keeps `Align==64`, which the program's natural layout (Legion's default, no padding) has not, yet the advice
    called it "the program's natural layout". It says what the statement is: the suspected choice set back to
    Legion's default."""
    mapper = "Task * CPU;\nRegion * * CPU SYSMEM;\nLayout * * * SOA C_order Align==64;\n"
    fb = feedback(tmp_path, monkeypatch, layoutdep_exe, mapper, "wrong")
    assert fb["stage"] == "verify", fb
    suggestion = fb["suggestion"]
    assert suggestion.startswith("Run the mapper once with `Layout * * * SOA F_order Align==64;` in place of "
                                 "`Layout * * * SOA C_order Align==64;` (the suspected choices set back to Legion's "
                                 "default layout): if it then passes, the layout is the cause."), suggestion
    assert "natural layout" not in suggestion, suggestion


def test_the_profile_advice_first_names_the_mappers_departure_from_the_default_layout(tmp_path, monkeypatch,
                                                                                      layoutdep_exe):
    """A finished, profiled run under a mapper whose one departure from Legion's default mapping is C_order on the 2-D
    grid: the advice names that statement and the one to measure in its place before the generic Layout and
    CollectMemory options; a mapper with the default's layout gets the generic options alone."""
    mapper = "Task * CPU;\nRegion * * CPU SYSMEM;\nLayout * * * SOA C_order;\n"
    fb = feedback(tmp_path, monkeypatch, layoutdep_exe, mapper, None, "--profile", "--", "-ll:cpu", "1")
    assert fb["category"] == "performance", fb
    suggestion = fb["suggestion"]
    assert ("Under the mapper's `Layout * * * SOA C_order;` (line 3 of the mapper), '" in suggestion
            and "' has instances in another layout than Legion's default mapper gives (SOA F_order, x fastest, no "
            "padding), which its kernels may walk far more slowly: measure the mapper with `Layout * * * SOA F_order;` "
            "in place of `Layout * * * SOA C_order;` first." in suggestion), suggestion
    assert suggestion.index("SOA F_order;` in place of") < suggestion.index("Align==64"), suggestion
    fb = feedback(tmp_path, monkeypatch, layoutdep_exe, mapper.replace("C_order", "F_order"), None, "--profile",
                  "--", "-ll:cpu", "1", name="default")
    assert "Align==64" in fb["suggestion"] and "in place of" not in fb["suggestion"], fb["suggestion"]
