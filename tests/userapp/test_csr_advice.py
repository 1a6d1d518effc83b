"""AutoGuide's advice on a user's CSR SpMV program (tests/app/csr.cc) under a mapper that already maps as a fast
mapping does (every index launch over both CPUs, every instance in system memory, Legion's default layout): a hang
(CSR_FAULT=hang) is said to be one, with the steps to find it, not explained by placement advice the mapper already
follows; a crash of the program's own code (CSR_FAULT=segv) gets the default mapper as its first step and is not
blamed on Layout and Region statements that give what the default gives; the profile's suggestion of AOS for the
task that reads x through an image partition says what it costs, as other tasks keep x in SOA instances (copies
between AOS and SOA instances of one field through a sparse partition can abort inside Realm in this Legion
build). Real runs through
`mapperopt run --app`."""

from __future__ import annotations

import dataclasses
import json
import shlex

from mapperopt.autoguide import explain
from mapperopt.cli import main
from mapperopt.records import RunResult

# The user's mapper: CPUs, system memory, the default layout, spmv and update blocked over the CPUs.
MAPPER = """Task * CPU;
Region * * CPU SYSMEM;
Layout * * * SOA F_order;
mcpu = Machine(CPU);
def block1d(Task task) {
    lin = task.ipoint[0] * mcpu.volume / task.ispace[0];
    return mcpu[lin / mcpu.size[1], lin % mcpu.size[1]];
}
IndexTaskMap spmv,update block1d;
"""


def run(tmp_path, exe, name: str, *options: str, args: str = "-n 20000 -s 4 -p 4") -> tuple[int, dict, RunResult]:
    """(exit status, feedback.json, result) of `mapperopt run --app 'EXE ARGS' --cpus 2 --mapper my.dsl --once`."""
    (tmp_path / "my.dsl").write_text(MAPPER)
    out = tmp_path / name
    code = main(["run", "--app", f"{exe} {args}", "--cpus", "2", "--mapper", str(tmp_path / "my.dsl"),
                 "--verify-pattern", "PASS", "--once", "--out", str(out), *options])
    result = RunResult.from_json(json.loads((out / "result.json").read_text()))
    return code, json.loads((out / "feedback.json").read_text()), result


def test_a_hang_under_a_mapper_that_spreads_everything_is_said_to_be_one(tmp_path, monkeypatch, csr_exe):
    monkeypatch.chdir(tmp_path)
    assert run(tmp_path, csr_exe, "ok")[0] == 0  # it runs (and is discovered, cached) before it hangs
    monkeypatch.setenv("CSR_FAULT", "hang")
    code, fb, result = run(tmp_path, csr_exe, "hung", "--timeout", "6", "--trace")
    assert code == 1 and (fb["stage"], fb["rule"], fb["category"]) == ("timeout", "timeout", "timeout"), fb
    text, suggestion = fb["explanation"], fb["suggestion"]
    assert "spread the index launches" not in suggestion and "IndexTaskMap functions" not in suggestion, suggestion
    assert ("already runs every index launch (init_rows, init_nnz, spmv, update) over all 2 CPU processors and "
            "keeps every instance in SYSMEM") in text, text
    assert "more likely hangs" in text, text
    # the command to copy: the run's options and time limit, without --mapper
    without = shlex.join(["mapperopt", "run", "--app", f"{csr_exe} -n 20000 -s 4 -p 4", "--verify-pattern", "PASS",
                          "--cpus", "2", "--timeout", "6"])
    assert suggestion.startswith(f"Run the same command once without --mapper (Legion's default mapper): "
                                 f"`{without}`"), suggestion
    # it ran with --trace: the trace says how far the mapping got, not which task hung (Legion maps ahead)
    assert "This run's trace, trace.jsonl, lists " in suggestion and "the last one the mapper placed is '" in \
        suggestion, suggestion
    assert "Legion maps tasks ahead of their execution" in suggestion, suggestion
    assert "never finished holds the program up" not in suggestion, suggestion
    # In a search, Legion's default mapper finished the same program as the baseline: then the step is done.
    searched = explain(result, baselines={"default": 0.5}).suggestion
    assert searched.startswith("The time limit is long enough for the program itself: Legion's default mapper "
                               "finished it as the baseline with the same settings, so the program hangs under this "
                               "mapper"), searched
    assert "spread the index launches" not in searched, searched
    # Everything on CPU 0: the placement advice stays.
    narrow = explain(dataclasses.replace(result, dsl=MAPPER.replace("lin / mcpu.size[1], lin % mcpu.size[1]",
                                                                      "0, 0")))
    assert "spread the index launches over all of them" in narrow.suggestion, narrow.suggestion


def test_a_crash_of_the_programs_own_code_under_a_default_like_mapper(tmp_path, monkeypatch, csr_exe):
    monkeypatch.chdir(tmp_path)
    assert run(tmp_path, csr_exe, "ok")[0] == 0
    monkeypatch.setenv("CSR_FAULT", "segv")
    code, fb, result = run(tmp_path, csr_exe, "crashed")
    assert code == 1 and (fb["stage"], fb["rule"]) == ("run", "crash-signal"), fb
    suggestion = fb["suggestion"]
    assert suggestion.startswith("Run the same command without --mapper (Legion's default mapper)"), suggestion
    assert ("This mapper's Layout and Region statements give every instance the layout and memory Legion's default "
            "mapper gives (SOA F_order in SYSMEM)") in suggestion, suggestion
    assert "usual cause" not in suggestion, suggestion
    # A mapper whose Layout statement differs from the default's (exact instances): the first step, then its
    # statements.
    exact = MAPPER.replace("Layout * * * SOA F_order;", "Layout * * * SOA F_order Exact;")
    other = explain(dataclasses.replace(result, dsl=exact)).suggestion
    assert other.startswith("Run the same command without --mapper (Legion's default mapper): if it runs to the end "
                            "there, a statement of this mapper is the cause"), other
    assert "Legion's default mapper gives (SOA F_order" not in other, other


def test_the_profiles_aos_suggestion_names_the_tasks_that_keep_the_field_in_soa(tmp_path, monkeypatch, csr_exe):
    monkeypatch.chdir(tmp_path)
    code, fb, result = run(tmp_path, csr_exe, "profiled", "--profile", args="-n 200000 -s 10 -p 4")
    assert code == 0 and fb["category"] == "performance", fb
    suggestion = fb["suggestion"]
    assert "`Layout spmv * * AOS;`" in suggestion, suggestion  # spmv is the heaviest task: it is the one advised
    assert ("`Layout spmv * * AOS;` alone would give spmv AOS instances of fields that init_rows, init_nnz and "
            "update keep in SOA instances (row_blocks, nnz_blocks, x_ghost, vec_blocks): Legion then copies between "
            "AOS and SOA instances of one field, and in this Legion build such copies can abort in Realm's data "
            "movement when they go through a sparse partition") in suggestion, suggestion
    assert "StanfordLegion/realm#436" in suggestion, suggestion
    # every task shares a field with spmv, or with one that does: AOS for all of them together, for kernels that
    # reach the fields through accessors; then that spmv's time is its own code's
    assert ("Give AOS to every task that shares those fields at once instead: `Layout * * * AOS;`. AOS suits only "
            "kernels that reach the fields through accessors") in suggestion, suggestion
    assert suggestion.endswith("only a change to that code speeds it up.") and "seconds for 'spmv' are its own code" \
        in suggestion, suggestion
    # A mapper that gives every task AOS already: no AOS to suggest, nothing to warn of; its departure from Legion's
    # default layout is named, with the statement to measure in its place
    every = explain(dataclasses.replace(result, dsl=MAPPER.replace("SOA F_order", "AOS"))).suggestion
    assert "`Layout spmv * * AOS;`" not in every and "realm#436" not in every, every
    assert every.startswith("Under the mapper's `Layout * * * AOS;`"), every
    assert "`Layout * * * SOA;` in place of `Layout * * * AOS;`" in every, every
