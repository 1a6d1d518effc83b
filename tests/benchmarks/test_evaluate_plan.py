"""benchmarks/evaluate.py and benchmarks/gpu/evaluate.sh: the plan alone makes the work list (an endpoint configured
where the script runs changed it: 339 units became 399, and the `final` units' needs with them), the committed
results folders resume and report the same with or without one, each call of evaluate.sh leaves a record in the
results folder and names a benchmark that failed to build, and every saved unit names itself."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mapperopt.benchmarks import evaluate
from mapperopt.benchmarks.evaluate import default_plan, load_plan, load_units, work_list, write_report

ENDPOINT = {"MAPPEROPT_LLM_BASE_URL": "http://127.0.0.1:9/v1", "MAPPEROPT_LLM_MODEL": "a-model"}
COMMITTED = ("reports/h200-eval", "reports/h100-eval")


def _endpoint(monkeypatch, configured: bool) -> None:
    for name, value in ENDPOINT.items():
        if configured:
            monkeypatch.setenv(name, value)
        else:
            monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("folder", COMMITTED)
def test_a_committed_folder_resumes_and_reports_the_same_with_or_without_an_endpoint(folder, tmp_path, monkeypatch,
                                                                                     capsys):
    # in a copy of the repository's layout: the page names its folder and itself relative to where it is written
    page = Path(folder).parent / f"{Path(folder).name.removesuffix('-eval')}-evaluation.md"
    committed = page.read_text()
    for each in COMMITTED:  # the time left on one card is estimated from the other's too
        shutil.copytree(each, tmp_path / each)
    (tmp_path / "docs").mkdir()  # the repository's docs/ the summary links to, beside reports/
    shutil.copy("docs/tuning.md", tmp_path / "docs" / "tuning.md")
    results = tmp_path / folder
    monkeypatch.chdir(tmp_path)
    seen = {}
    for configured in (False, True):
        _endpoint(monkeypatch, configured)
        units = work_list(load_plan(results))
        assert evaluate.main(["list", "--results", str(results)]) == 0
        text = write_report(results, tmp_path / page, shown=Path(folder))
        seen[configured] = ([u.id for u in units], capsys.readouterr().out, text)
        # the stored plan excludes the optimizers that need a model: the list its units were run from
        assert len(units) == 339 and not any("trace" in u.id for u in units)
        assert not any("trace" in n for u in units for n in u.needs)
    assert seen[False] == seen[True]
    # the committed page is this folder's report, whatever the environment it is written in
    assert seen[True][2] == committed
    text = seen[True][2]
    assert ("| trace | 10 | skipped: outside the plan: it proposes with a language model, and the GPU machine the "
            "evaluation runs on (no network) reaches no model endpoint |") in text
    assert "Outside the plan (plan.json `excluded`): no runs in the tables, no units in the work list" in text
    assert "`evaluate.py run --optimizers guided,trace,opentuner,optuna,random` with a new results folder" in text
    assert "not run yet | | | | | | | | |" not in next(line for line in text.splitlines() if line.startswith("| trace"))

    # a call with an endpoint configured resumes the same list, and stores the exclusion in the plan
    stored = load_plan(results)
    card = evaluate.measured_on(stored, load_units(results))
    monkeypatch.setattr(evaluate, "this_gpu", lambda: card)
    assert evaluate.main(["run", "--results", str(results), "--stop-after", "0"]) == 0
    capsys.readouterr()
    plan = json.loads((results / "plan.json").read_text())
    assert "trace" not in plan["optimizers"] and set(plan["excluded"]) == {"trace"}
    assert [u.id for u in work_list(load_plan(results))] == seen[True][0]
    assert evaluate.main(["list", "--results", str(results)]) == 0
    assert capsys.readouterr().out == seen[True][1]
    _endpoint(monkeypatch, False)
    assert write_report(results, tmp_path / page, shown=Path(folder)) == seen[True][2]


def test_trace_is_in_the_work_list_only_where_the_plan_names_it(tmp_path, monkeypatch, capsys):
    small = {"benchmarks": ["stencil"], "sizes": ["ci"], "gpus": 0, "iters": 1, "seeds": 1, "long_iters": 0}
    _endpoint(monkeypatch, True)
    plan = default_plan(**small)
    assert "trace" not in plan["optimizers"] and set(plan["excluded"]) == {"trace"}
    assert not any("trace" in u.id for u in work_list(plan))  # an endpoint here adds nothing
    named = default_plan(**small, optimizers=["guided", "trace"])
    assert named["excluded"] == {}
    for configured in (True, False):  # named, it is in the list wherever the list is read
        _endpoint(monkeypatch, configured)
        final = work_list(named)[-1]
        assert final.needs == ("tune-stencil-ci-guided-i1-s0", "tune-stencil-ci-trace-i1-s0")

    monkeypatch.setattr(evaluate, "this_gpu", lambda: None)
    options = ["--benchmarks", "stencil", "--sizes", "ci", "--gpus", "0", "--iters", "1", "--seeds", "1",
               "--long-iters", "0", "--stop-after", "0"]
    # a new folder whose plan names trace: refused where no endpoint is set, nothing written
    folder = tmp_path / "with-trace"
    assert evaluate.main(["run", "--results", str(folder), "--optimizers", "guided,trace", *options]) == 2
    err = capsys.readouterr().err
    assert "includes trace, which proposes with a language model, and no endpoint is configured here" in err, err
    assert "MAPPEROPT_LLM_BASE_URL and MAPPEROPT_LLM_MODEL" in err and not folder.exists()
    _endpoint(monkeypatch, True)
    assert evaluate.main(["run", "--results", str(folder), "--optimizers", "guided,trace", *options]) == 0
    stored = json.loads((folder / "plan.json").read_text())
    assert stored["optimizers"] == ["guided", "trace"] and stored["excluded"] == {}
    _endpoint(monkeypatch, False)
    capsys.readouterr()
    assert evaluate.main(["list", "--results", str(folder)]) == 0  # listing needs no endpoint
    assert "missing  tune-stencil-ci-trace-i1-s0" in capsys.readouterr().out
    text = write_report(folder, tmp_path / "with-trace.md", notes={})
    assert "| trace | 1 | 0 of 1 | not run yet |" in text and "Outside the plan" not in text

    # a new folder by default: trace stated as outside the plan
    plain = tmp_path / "plain"
    assert evaluate.main(["run", "--results", str(plain), *options]) == 0
    text = write_report(plain, tmp_path / "plain.md", notes={})
    assert "Outside the plan (plan.json `excluded`)" in text and "| trace | 1 | skipped: outside the plan: " in text


def test_every_saved_unit_names_itself():
    """A unit's file holds its id in `unit` and a throughput's unit in `throughput_unit` (the H200's CPU run of
    Pennant had its zone-cycles/s where its id belongs, and no `needs` or `throughput_unit`: as `run_unit` wrote
    before `_run_cpu` kept the application's unit apart)."""
    for folder in COMMITTED:
        for path in sorted(Path(folder, "units").rglob("*.json")):
            saved = json.loads(path.read_text())
            assert saved["unit"] == path.stem and saved["schema"] == evaluate.SCHEMA, path
    cpu = {folder: json.loads(Path(folder, "units", "cpu-pennant-gpu.json").read_text()) for folder in COMMITTED}
    assert [list(saved) for saved in cpu.values()] == [list(cpu[COMMITTED[1]])] * 2
    assert {saved["throughput_unit"] for saved in cpu.values()} == {"zone-cycles/s"}


def _stub(folder: Path, name: str, script: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)


def test_evaluate_sh_names_a_failed_build_and_records_each_call(tmp_path):
    """evaluate.sh ignored its builds' exit status (a failed build showed only in build.log), and a call's times
    were kept nowhere but in hand-written notes: it names the benchmark, goes on, and appends a line to the results
    folder's calls.jsonl, which travels with it and which the report summarises."""
    stubs = tmp_path / "bin"
    stubs.mkdir()
    _stub(stubs, "nvidia-smi", 'case "$*" in *-L*) echo "GPU 0: NVIDIA H200 (UUID: GPU-0)";; '
                               '*) echo "NVIDIA H200";; esac\n')
    # `mapperopt build --cuda on <benchmark>`: Circuit's build fails, the others succeed
    _stub(stubs, "mapperopt", 'echo "building $4"; [ "$4" != circuit ] || { echo "error: nvcc failed" >&2; exit 1; }\n')
    results = tmp_path / "reports" / "h200-eval"
    plan = default_plan(benchmarks=["stencil"], sizes=["ci"], gpus=0, optimizers=["random"], iters=1, seeds=1,
                        long_iters=0, base_rounds=1, final_rounds=1, min_time_s=0.05)
    results.mkdir(parents=True)
    (results / "plan.json").write_text(json.dumps(plan))
    env = {**os.environ, "PATH": f"{stubs}:{Path(sys.executable).parent}:{os.environ['PATH']}",
           "RESULTS": str(results), "OUT": str(tmp_path / "out"), "STOP_AFTER": "600", "EVAL_ARGS": "--only base-"}
    for name in ENDPOINT:
        env.pop(name, None)
    done = subprocess.run(["bash", "benchmarks/gpu/evaluate.sh"], env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "build failed: circuit (its log: " in done.stdout, done.stdout
    assert "build failed: stencil" not in done.stdout
    assert "base-stencil-ci: ok" in done.stdout, done.stdout
    calls = [json.loads(line) for line in (results / "calls.jsonl").read_text().splitlines()]
    assert len(calls) == 1
    call = calls[0]
    assert call["gpu"] == "NVIDIA H200" and call["stop_after_s"] == 600 and call["exit_status"] == 0
    assert call["builds_failed"] == ["circuit"] and call["units_finished"] == ["base-stencil-ci"]
    assert call["eval_args"] == "--only base-" and 0 <= call["build_s"] <= 60
    assert call["start"] <= call["end"] and call["end"].endswith("Z")
    # the record travels with the results folder
    listed = subprocess.run(["tar", "-tzf", str(tmp_path / "out" / "h200-eval.tar.gz")], capture_output=True,
                            text=True, check=True).stdout.split()
    assert "h200-eval/calls.jsonl" in listed

    # a second call with nothing left: another line, no unit finished
    env["STOP_AFTER"] = "0"
    assert subprocess.run(["bash", "benchmarks/gpu/evaluate.sh"], env=env, capture_output=True,
                          timeout=300).returncode == 0
    calls = [json.loads(line) for line in (results / "calls.jsonl").read_text().splitlines()]
    assert len(calls) == 2 and calls[1]["units_finished"] == [] and calls[1]["stop_after_s"] == 0

    text = write_report(results, tmp_path / "report.md", notes={})
    how = text[text.index("## How it was run"):]
    assert "2 calls," in how and "in `calls.jsonl` of the results folder" in how, how
    assert f"| {call['start']} | {call['end']} | " in how and " | 600 | " in how
    assert " | circuit | NVIDIA H200 | 1 | 0 |" in how


def test_the_report_gives_a_path_for_a_gpu_machine_of_ones_own(tmp_path):
    text = Path("reports/h200-evaluation.md").read_text()
    how = text[text.index("## How it was run"):]
    own = how.index("On a machine of your own")
    lent = how.index("On a lent H200 of the project")
    assert own < lent
    # a reader's own machine gets a folder of its own: continuing the project's would divide one machine's timings
    # by another's; the project's lent machines continue the committed folder (evaluate.sh's default)
    for needed in ("nvcc and cuBLAS", "pip install '.[baselines]'", "source .venv/bin/activate",
                   "    RESULTS=reports/my-eval bash benchmarks/gpu/evaluate.sh",
                   "evaluate.py list --results reports/my-eval", "evaluate.py report --results reports/my-eval"):
        assert needed in how[own:lent], needed
    assert "evaluate.py list --results reports/h200-eval" not in how[own:lent]
    assert "`bash benchmarks/gpu/pack.sh` (it needs network)" in how[lent:]
    assert "    source benchmarks/gpu/setup.sh; STOP_AFTER=500 bash benchmarks/gpu/evaluate.sh" in how[lent:]
    header = Path("benchmarks/gpu/evaluate.sh").read_text().split("\nset ")[0]
    assert "#     RESULTS=reports/my-eval bash benchmarks/gpu/evaluate.sh" in header, header
    # the script the page and evaluate.sh name is the one that runs
    assert "benchmarks/gpu/evaluate.py run" in Path("benchmarks/gpu/evaluate.sh").read_text()
    assert "(benchmarks/evaluate.py;" not in Path("benchmarks/gpu/evaluate.sh").read_text()


@pytest.mark.parametrize("script", ("benchmarks/gpu/evaluate.py", "benchmarks/gpu/timeouts.py"))
def test_a_script_run_without_mapperopt_says_which_python_to_use(script):
    """After the README's install (a .venv, not activated) `python3 benchmarks/gpu/evaluate.py report` ended in a
    bare ModuleNotFoundError."""
    root = Path(__file__).resolve().parents[2]
    # -S: no site-packages, as a Python mapperopt is not installed in
    done = subprocess.run([sys.executable, "-S", script, "report", "--results", "reports/h200-eval"], cwd=root,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done
    assert "Traceback" not in done.stderr, done.stderr
    assert f"error: {script} needs the mapperopt package" in done.stderr, done.stderr
    assert "No module named 'mapperopt'" in done.stderr, done.stderr
    assert f"`.venv/bin/python {script} report --results reports/h200-eval`" in done.stderr, done.stderr
    assert "`source .venv/bin/activate`" in done.stderr, done.stderr


@pytest.mark.parametrize("folder", COMMITTED)
def test_the_hand_written_notes_come_in_readable_paragraphs(folder):
    """The pages print notes.json's text as written: a reader met paragraphs of up to 5,900 characters, so a
    paragraph (or a list item, one a line) stays within 1,600."""
    notes = json.loads((Path(folder) / "notes.json").read_text())
    long = {key: len(line) for key, text in notes.items() for line in text.split("\n") if len(line) > 1600}
    assert not long, long


def test_evaluate_sh_refuses_up_front_without_a_gpu(tmp_path):
    """On a machine without an NVIDIA driver evaluate.sh printed `nvidia-smi: command not found`, built every
    benchmark, recorded 14 units as failed (a later GPU run skipped them) and exited 0, leaving `gpu-out/` behind. It
    stops before building, says what is missing and how to go on, records nothing and exits non-zero."""
    stubs = tmp_path / "bin"
    stubs.mkdir()
    # nvidia-smi as it answers where the driver is missing
    _stub(stubs, "nvidia-smi", 'echo "NVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA '
                               'driver." >&2; exit 9\n')
    built = tmp_path / "built"
    _stub(stubs, "mapperopt", f'touch "{built}"\n')
    results = tmp_path / "reports" / "my-eval"
    results.mkdir(parents=True)
    (results / "plan.json").write_text(json.dumps(default_plan(benchmarks=["stencil"], sizes=["gpu"])))
    env = {**os.environ, "PATH": f"{stubs}:{Path(sys.executable).parent}:{os.environ['PATH']}",
           "RESULTS": str(results), "OUT": str(tmp_path / "out")}
    for name in ENDPOINT:
        env.pop(name, None)
    done = subprocess.run(["bash", "benchmarks/gpu/evaluate.sh"], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "error: no NVIDIA GPU on this machine (nvidia-smi is missing, or finds no driver or GPU)" in done.stderr, \
        done.stderr
    assert f"python3 benchmarks/gpu/evaluate.py report --results {results}" in done.stderr, done.stderr
    assert "command not found" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not built.exists() and not (tmp_path / "out").exists()
    assert sorted(p.name for p in results.iterdir()) == ["plan.json"]  # no unit, no call recorded
