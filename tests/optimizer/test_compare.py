"""`mapperopt compare`: a small real comparison on Circuit (ci size) writes the table, CSV, JSON and plot, scores
failures 0 and resumes without rerunning; the table's statistics on made-up runs."""

from __future__ import annotations

import csv
import io
from dataclasses import replace
import json
import re
from pathlib import Path

import pytest
from optimizer_support import CONFIGS, markers_clear_and_inside

from mapperopt.benchmarks import protocol
from mapperopt.benchmarks.apps import known_benchmarks, load_config
from mapperopt.cli import main
from mapperopt.errors import install_extra
from mapperopt.optimizer.base import IterationRecord
from mapperopt.optimizer.compare import (RunOutcome, compare_figure, format_table, progress_line, summarize,
                                         write_outputs)
from mapperopt.optimizer.loop import MIN_TIMEOUT_S, TIMEOUT_FACTOR
from mapperopt.optimizer.store import TuneStore

def record(i: int, throughput: float | None, best: float) -> IterationRecord:
    return IterationRecord(iter=i, dsl=f"# {i}\n", key=str(i), status="ok" if throughput else "failed",
                           stage=None if throughput else "run", category="performance" if throughput else "x",
                           throughput=throughput, unit="GFLOPS", best_throughput=best)


def test_progress_lines_print_a_time_metric_as_a_time():
    """As `run` and `tune` print figures (`protocol.figure`): a user's program's time metric (throughput 0.5 1/ms)
    is its time first, 2 ms, not a bare throughput."""
    first = IterationRecord(iter=1, dsl="# 1\n", key="1", status="ok", stage=None, category="performance",
                            throughput=0.5, unit="1/ms", best_throughput=0.5, best_iter=1)
    line = progress_line("guided #1", first, 3)
    assert "iter 1/3: 2 ms (throughput 0.5 1/ms)" in line and "best 2 ms (throughput 0.5 1/ms) (this one)" in line, line
    plain = progress_line("guided #1", record(2, 1.5, 2.0), 3)
    assert "1.5 GFLOPS" in plain and "(throughput" not in plain, plain


def test_a_model_steps_progress_line_says_what_became_of_its_answer():
    """Without it, answers the model got wrong look exactly like answers that did not help."""
    common = dict(dsl="# 1\n", key="1", status="ok", stage=None, category="performance", throughput=1.0,
                  unit="GFLOPS", best_throughput=1.0, best_iter=1, cached=True)
    unused = IterationRecord(iter=2, note="LLM answer not used: the answer is not JSON: 'hi'; mapper unchanged",
                             llm={"total_tokens": 15}, **common)
    line = progress_line("trace #1", unused, 3)
    assert "LLM answer not used: the answer is not JSON" in line and "15 tokens" in line, line
    guided = IterationRecord(iter=2, note="neighbour: kinds/x", **common)
    # what another optimizer changed, as tune's line says it (compare's omitted it)
    assert progress_line("guided #1", guided, 3).endswith("(iter 1)  neighbour: kinds/x")


def test_the_plots_leave_no_figure_of_pyplots_open(tmp_path):
    """pyplot kept every figure a plot made until it was closed: one that a caller only reads (the GPU evaluation's
    plots, the tests) or whose file could not be written stayed open for the whole process, and past 20 matplotlib
    warned "More than 20 figures have been opened". The plots are drawn whole, and none is left open."""
    import matplotlib.pyplot as plt

    from mapperopt.benchmarks.evaluate import shares_figure
    from mapperopt.optimizer.compare import plot_compare
    from mapperopt.optimizer.store import plot_progress, progress_figure

    open_before = plt.get_fignums()
    runs = [RunOutcome("a", 1, 0, [record(1, 1.0, 1.0), r2 := record(2, 3.0, 3.0)], r2, 3.0, Path("a-1"))]
    summary = summarize(runs, expert=2.0)
    assert [line.get_label() for line in compare_figure(summary).axes[0].get_lines()][0] == "a (mean of 1)"
    assert len(progress_figure(runs[0].records).axes[0].collections) == 1  # the iterations' points
    assert len(shares_figure([("stencil gpu expert", 0.89, True)], "H100").axes[0].patches) == 1  # its bar
    plot_progress(runs[0].records, tmp_path / "progress.png")
    assert (tmp_path / "progress.png").read_bytes().startswith(b"\x89PNG")
    with pytest.raises(FileNotFoundError):  # its folder is gone
        plot_compare(summary, tmp_path / "gone" / "compare.png")
    assert plt.get_fignums() == open_before


def test_the_table_scores_failures_zero(tmp_path):
    runs = [
        RunOutcome("a", 1, 0, [record(1, 1.0, 1.0), r2 := record(2, 3.0, 3.0)], r2, 3.0, Path("a-1")),
        RunOutcome("a", 2, 1, [record(1, None, 0.0), r3 := record(2, 2.0, 2.0)], r3, 1.0, Path("a-2")),
        RunOutcome("b", 1, 0, [record(1, None, 0.0), record(2, None, 0.0)], None, None, Path("b-1")),
    ]
    summary = summarize(runs, expert=2.0)
    a, b = summary["optimizers"]["a"], summary["optimizers"]["b"]
    assert (a["mean"], a["worst"], a["median"], a["best"], a["std"]) == (1.0, 0.5, 1.0, 1.5, 0.5)
    assert a["failed_share"] == 0.25 and a["evaluations"] == 4
    assert (b["mean"], b["best"], b["failed_share"]) == (0.0, 0.0, 1.0)
    assert summary["curves"]["a"] == [[0.5, 1.5], [0.0, 1.0]]
    # of one run the worst and the median are its score, as the mean and best are; its std is no figure: n/a in the
    # table, empty in the CSV, null in the JSON
    assert (b["std"], b["worst"], b["median"]) == (None, 0.0, 0.0)
    assert "| b | 1 | 0.00 | n/a | 0.00 | 0.00 | 0.00 | 100% of 2 |" in format_table(summary)
    out = write_outputs(tmp_path, summary)
    with open(out["summary"]) as f:
        rows = {r["optimizer"]: r for r in csv.DictReader(f)}
    assert (rows["b"]["std"], rows["b"]["median"], rows["b"]["best"], rows["a"]["std"]) == ("", "0.0", "0.0", "0.5")
    assert json.loads(out["json"].read_text())["optimizers"]["b"]["std"] is None
    # The plot's curves end at the tuning-time best (a: mean 1.25) divided by the expert before tuning; the table's
    # scores (a: mean 1.0, worst 0.5, best 1.5) divide by the final one: the plot draws those at "final" and says so.
    fig = compare_figure(summary)
    ax = fig.axes[0]
    [curve] = [line for line in ax.get_lines() if line.get_label() == "a (mean of 2)"]
    assert list(curve.get_ydata()) == [0.25, 1.25]
    [final] = [line for line in ax.get_lines() if line.get_gid() == "final-a"]
    assert list(final.get_ydata()) == [1.0] and abs(final.get_xdata()[0] - 3) < 0.5
    [bar] = [c for c in ax.collections if c.get_gid() == "final-a"]
    assert [list(seg[:, 1]) for seg in bar.get_segments()] == [[0.5, 1.5]]
    assert [t.get_text() for t in ax.get_xticklabels()][-1] == "final"
    assert "final: the table's score" in ax.get_title() and ax.get_ylabel() == "throughput / expert mapper's"
    # The header names the size, the machine and how the figures were measured
    summary.update(bench="circuit", settings={"size": "small", "cpus": 1, "gpus": 0, "repeats": 2, "iters": 2,
                                              "executions": 3, "max_executions": 7, "min_time_s": 0.5},
                   reference="expert", reference_throughput=2.0, unit="GFLOPS", final_rounds=5, host_cores=2,
                   load_average=[3.5, 4.25])
    header = format_table(summary).split("\n\n")[0]
    for text in ("circuit at size small on 1 CPU processor(s) and 0 GPU(s) of a 2-core machine",
                 "load average 3.5 to 4.25", "3-7 executions of at least 0.5 s", "beyond the noise",
                 "Score of a run (higher is better): its best program's throughput / the expert mapper's",
                 "where the expert mapper measured 2 GFLOPS", "5 interleaved rounds", "2 run(s) x 2 iterations"):
        assert text in header, text


def test_a_single_runs_worst_and_median_are_its_score(tmp_path, capsys, monkeypatch):
    """With --runs 1 the table said `worst n/a` and `median n/a`, where one run's worst and median are its score, as
    its mean and best are: they are given, in the printed table, table.md, summary.csv and summary.json; its std
    (a spread of one score) stays n/a."""
    monkeypatch.delenv("COLUMNS", raising=False)  # the printed table's rows whole
    assert main(["compare", "circuit", "--size", "ci", "--iters", "1", "--runs", "1", "--optimizers", "random",
                 "--start", "default", "--min-time", "0.05", "--repeats", "1", "--max-repeats", "1",
                 "--final-rounds", "1", "--runs-dir", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    [folder] = (tmp_path / "runs" / "circuit").iterdir()
    summary = json.loads((folder / "summary.json").read_text())
    [run] = summary["runs"]
    row = summary["optimizers"]["random"]
    score = run["normalized"]
    assert score > 0 and (row["std"], row["worst"], row["median"], row["mean"], row["best"]) == \
        (None, score, score, score, score), row
    cells = f"{score:.2f}"
    table = (folder / "table.md").read_text()
    assert f"| random | 1 | {cells} | n/a | {cells} | {cells} | {cells} | 0% of 1 |" in table, table
    printed = [[c.strip() for c in line.strip("│ ").split("│")] for line in out.splitlines() if "│ random" in line]
    assert printed == [["random", "1", cells, "n/a", cells, cells, cells, "0% of 1"]], out
    with open(folder / "summary.csv") as f:
        [csv_row] = list(csv.DictReader(f))
    assert csv_row["std"] == "" and float(csv_row["worst"]) == float(csv_row["median"]) == round(score, 4), csv_row
    assert "std n/a for a single run" in out, out


def test_the_legend_covers_no_final_marker_and_the_top_one_is_not_clipped():
    """The final markers sit at the right edge, where a legend in the corner covered them (and a best run at 1.05,
    the top of the data, was drawn half outside the axes)."""
    runs = [RunOutcome(name, 1, 0, [record(1, 1.0, 1.0), r := record(2, 1.05, 1.05)], r, final, Path(f"{name}-1"))
            for name, final in (("guided", 1.05), ("opentuner", 0.93), ("optuna", 1.03), ("random", 1.03))]
    markers_clear_and_inside(compare_figure(summarize(runs, expert=1.0)))
    runs = [RunOutcome(name, 1, 0, [record(1, 1.1, 1.1), r := record(2, 2.7, 2.7)], r, final, Path(f"{name}-1"))
            for name, final in (("guided", 1.0), ("opentuner", 0.85), ("optuna", 0.85), ("random", 0.85))]
    markers_clear_and_inside(compare_figure(summarize(runs, expert=1.0)))


def test_a_reference_that_measured_far_higher_at_the_end_is_said_under_the_table_and_plot():
    """The curves divide by the expert before tuning (1.708), the scores by the expert measured at the end (3.705 and
    4.99 in two groups): a curve ending at 2.7x is then no score, and the table and the plot say so in one line."""
    runs = [RunOutcome("guided", r, r, [record(1, 1.9, 1.9), b := record(2, 4.6, 4.6)], b, 4.0, Path(f"guided-{r}"),
                       reference=ref) for r, ref in ((1, 3.705), (2, 4.99))]
    summary = summarize(runs, expert=4.3, curve_expert=1.708)
    summary.update(bench="circuit", reference="expert", unit="GFLOPS", reference_first_throughput=1.708,
                   reference_throughput=4.35, final_rounds=3,
                   final_groups=[{"runs": ["guided-1"], "reference": 3.705}, {"runs": ["guided-2"], "reference": 4.99}])
    line = ("The expert mapper measured 3.705 and 4.99 GFLOPS in the final measurement, 2.17x and 2.92x its "
            "1.708 GFLOPS before tuning, which the curves divide by")
    assert line in format_table(summary).split("\n")[-1]
    texts = " ".join(" ".join(t.get_text().split()) for t in compare_figure(summary).texts)
    assert line in texts, texts
    # within a fifth of the first measurement: nothing to say
    summary["final_groups"] = [{"runs": ["guided-1"], "reference": 1.9}, {"runs": ["guided-2"], "reference": 1.6}]
    assert "before tuning, which the curves" not in format_table(summary)
    assert not compare_figure(summary).texts


def test_the_noise_of_the_measurements_the_scores_rest_on_is_in_table_md(tmp_path):
    """compare prints what makes its figures unreliable (the noise of the expert's first measurement, of the final
    one's groups that the scores divide by); table.md, the file for a paper's table, left it out, so that scores of
    1.05 read as firm when they rested on measurements of ±14-21 %. It has the same lines now, under the rows; the
    header and the rows are as they were."""
    runs = [RunOutcome("guided", 1, 0, [record(1, 2.0, 2.0), b := record(2, 2.1, 2.1)], b, 2.1, Path("guided-1"))]
    summary = summarize(runs, expert=2.0)
    quiet = format_table(summary)
    warnings = [["Noisy measurement of the expert mapper's first measurement",
                 "the 90 % interval of the trimmed mean is ±14 % after 3 executions (spread 20 %), far from the "
                 "target"],
                ["Noisy measurement in the final measurement", "the 90 % interval of the trimmed mean is expert ±16 % "
                 "after 5 executions (spread 30 %), guided-1 ±21 % after 5 executions (spread 40 %)"]]
    table = write_outputs(tmp_path, {**summary, "noise_warnings": warnings})["table"].read_text()
    assert table.startswith(quiet + "\n"), table
    for title, text in warnings:
        assert f"\n\n{title}: {text}" in table, table
    assert json.loads((tmp_path / "summary.json").read_text())["noise_warnings"] == warnings


def test_small_compare_on_circuit(tmp_path, capsys):
    # One execution per mapper of at least 0.05 s, two final rounds: the protocol's statistics, cheaply. (A start
    # file that fails the checker is refused before anything is measured: tests/optimizer/test_cli_names.py.)
    args = ["compare", "circuit", "--size", "ci", "--iters", "2", "--runs", "2", "--optimizers",
            "guided,opentuner,optuna,random", "--start", "random", "--repeats", "1",
            "--max-repeats", "1", "--min-time", "0.05", "--final-rounds", "2", "--runs-dir", str(tmp_path / "runs")]
    assert main(args) == 0
    output = capsys.readouterr().out
    [folder] = (tmp_path / "runs" / "circuit").iterdir()
    summary = json.loads((folder / "summary.json").read_text())
    assert list(summary["optimizers"]) == ["guided", "opentuner", "optuna", "random"]
    assert summary["reference"] == "expert" and summary["reference_throughput"] > 0
    for name, row in summary["optimizers"].items():
        assert row["runs"] == 2 and row["evaluations"] == 4
        assert [len(c) for c in summary["curves"][name]] == [2, 2]
        mine = [r for r in summary["runs"] if r["optimizer"] == name]
        assert all(c == [0.0, 0.0] for c, r in zip(summary["curves"][name], mine) if r["failed"] == 2)  # scores 0
        assert row["worst"] <= row["median"] <= row["best"]
    with open(folder / "summary.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["optimizer"] for r in rows] == ["guided", "opentuner", "optuna", "random"]
    with open(folder / "runs.csv") as f:
        assert len(list(csv.DictReader(f))) == 8
    assert (folder / "compare.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| optimizer | runs | mean |" in (folder / "table.md").read_text()
    assert "failed evaluations" in output and "at size ci on 1 CPU processor(s)" in output
    # Its noise said as tune says it: the expert's first measurement (exactly --repeats: 1 execution) has no spread
    # estimate, and executions shorter than the protocol's minimum in the final measurement are named.
    flat = " ".join(output.split())
    assert ("No spread estimate of the expert mapper's first measurement: measured by a single execution, which "
            "gives no interval") in flat, output
    # 2 final rounds: too few for an interval, said so, none quoted
    assert "Too few executions for an interval in the final measurement: expert, " in flat, output
    assert "Noisy measurement in the final measurement" not in flat, output
    assert summary["noise_warnings"] and all(f"{title}: {' '.join(text.split())}" in flat
                                             for title, text in summary["noise_warnings"]), output
    final = json.loads((folder / "final.json").read_text())
    times = [m["time_s"] for g in final["groups"] for m in g["measured"].values() if m["time_s"] is not None]
    assert ("Short measurement in the final measurement: " in flat) == (min(times) < 0.5), output
    assert "best" in output and "(this one)" in output  # the progress lines say which iteration is the best
    # --repeats 1 --max-repeats 1: the loop's rule at one execution each (no interval, no joint re-measurement)
    assert ("With one execution per evaluation there is no interval: a candidate whose figure is higher than the "
            "best's becomes the run's best outright (nothing is re-measured).") in flat, output
    assert "beyond the noise" not in (folder / "table.md").read_text()
    # Circuit's results are compared with a reference: no energy-only note; each failure kind with a folder there
    assert "energy conservation only" not in flat and "energy" not in summary["check_kinds"], summary["check_kinds"]
    for name, kinds in summary["failures"].items():
        assert all((folder / k["example"]).is_dir() for k in kinds), kinds
        assert f"Failed evaluations of {name} " in flat, output
    # OpenTuner's database is in its run folder
    assert (folder / "opentuner-1" / "opentuner.db").exists()
    # The expert and the runs' best programs were measured together at the end
    [group] = json.loads((folder / "final.json").read_text())["groups"]
    assert "expert" in group["measured"] and len(group["measured"]) >= 2 and len(group["runs"]) == 8

    # Until a run has a success, an execution may take TIMEOUT_FACTOR times the expert's longest one (not the size's
    # whole timeout: a slow start at a GPU size would stall the comparison)
    wall = json.loads((folder / "expert.json").read_text())["wall_s"]
    assert wall > 0
    allowed = max(MIN_TIMEOUT_S, TIMEOUT_FACTOR * wall)
    timeouts = [json.loads(p.read_text())["settings"].get("timeout_s") for p in (folder / "evaluations").iterdir()]
    assert allowed in timeouts, (allowed, timeouts)

    # The same command resumes: nothing is evaluated again.
    evaluated = sorted(p.name for p in (folder / "evaluations").iterdir())
    assert main(args) == 0
    again = capsys.readouterr().out
    assert "Resuming" in again and "Measuring the expert" not in again
    assert sorted(p.name for p in (folder / "evaluations").iterdir()) == evaluated
    assert json.loads((folder / "summary.json").read_text())["optimizers"] == summary["optimizers"]

    # --report-only with other settings names the comparison that exists and the settings that differ.
    assert main([*args, "--seed", "7", "--report-only"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"no comparison of circuit with these settings under {tmp_path / 'runs'}; made with other settings: " \
           f"{folder} (--seed 0; this command: --seed 7)" in err, err


def test_a_measurement_of_another_run_is_named_and_paths_are_relative_to_the_folder(tmp_path, capsys):
    """Both runs start from the same program: the second re-reads the first's stored outcome, and its history and
    progress line say from where. Every path the folder's files record is relative to it, so that the folder,
    moved, resumes and extends its runs."""
    import shutil

    args = ["compare", "circuit", "--size", "ci", "--iters", "2", "--runs", "1", "--optimizers", "random,optuna",
            "--start", "default", "--repeats", "1", "--max-repeats", "1", "--min-time", "0.05",
            "--final-rounds", "1", "--runs-dir", str(tmp_path / "runs")]
    assert main(args) == 0
    output = " ".join(capsys.readouterr().out.split())
    [folder] = (tmp_path / "runs" / "circuit").iterdir()
    with open(folder / "optuna-1" / "history.csv") as f:
        first = next(csv.DictReader(f))
    assert (first["cached"], first["cached_from"]) == ("False", "random-1/iter-001"), first
    assert re.search(r"optuna #1 iter 1/2: [^#]* \(measured in random-1/iter-001\)", output), output

    def recorded(folder: Path) -> list[str]:
        paths = [json.loads(line)["result"]["run_dir"] for run in ("random-1", "optuna-1")
                 for line in (folder / run / "state.jsonl").read_text().splitlines()]
        paths += [json.loads(p.read_text())["run_dir"] for p in (folder / "evaluations").iterdir()]
        paths += [json.loads(p.read_text())["run_dir"] for p in folder.glob("*-1/iter-*/result.json")]
        # every other result.json: the reference's, each round of the final measurement (relative to the
        # comparison folder)
        for p in folder.rglob("result.json"):
            if not (folder / p.relative_to(folder).parts[0] / "state.jsonl").exists():  # not a run's
                paths.append(json.loads(p.read_text())["run_dir"])
                assert not Path(paths[-1]).is_absolute() and folder / paths[-1] == p.parent, p
        return paths

    paths = recorded(folder)
    assert paths[:3] == ["iter-001", "iter-002", "../random-1/iter-001"], paths
    assert all(not Path(p).is_absolute() and "runs" not in Path(p).parts for p in paths), paths
    moved = tmp_path / "elsewhere" / "circuit" / folder.name
    moved.parent.mkdir(parents=True)
    shutil.move(folder, moved)
    assert main([*args[:5], "3", *args[6:-1], str(tmp_path / "elsewhere")]) == 0
    again = " ".join(capsys.readouterr().out.split())
    assert "Resuming" in again and "iter 3/3" in again, again
    paths = recorded(moved)
    assert len(paths) > 6 and all(not Path(p).is_absolute() and "elsewhere" not in Path(p).parts for p in paths)


def test_paths_of_earlier_records_are_read_as_they_meant(tmp_path):
    """Records written before paths were relative to the folder: relative to the working folder of the process
    that wrote them, or absolute; the folder's name in them says where its part begins (it may have moved since)."""
    from mapperopt.optimizer.store import folder_path

    folder = Path("elsewhere/circuit/compare-504d3d0123")
    for stored in ("guided-1/iter-003", "runs/circuit/compare-504d3d0123/guided-1/iter-003",
                   str(tmp_path / "moved/circuit/compare-504d3d0123/guided-1/iter-003")):
        assert folder_path(stored, folder) == folder / "guided-1" / "iter-003", stored


def test_resume_continues_the_folder_given_with_its_own_settings(tmp_path, capsys):
    """Two comparisons with the same settings (`--new`): `--resume DIR` continues the older one, with the settings
    its folder records (BENCH and the options need not be given again), not the newest; options that
    identify a comparison are ignored, said so, and --optimizers, --runs, --iters and --final-rounds default to the
    folder's; a folder that is no comparison is refused, naming it."""
    runs = tmp_path / "runs"
    args = ["compare", "stencil", "--size", "ci", "--iters", "1", "--runs", "1", "--optimizers", "random",
            "--start", "default", "--repeats", "1", "--max-repeats", "1", "--min-time", "0.05", "--final-rounds", "1",
            "--runs-dir", str(runs)]
    assert main(args) == 0 and main([*args, "--new"]) == 0
    older, newer = sorted((runs / "stencil").iterdir())
    assert newer.name == f"{older.name}-2"
    capsys.readouterr()
    assert main(["compare", "--resume", str(older), "--iters", "2", "--size", "small"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"Resuming {older}." in out and "random #1 iter 2/2" in out, out
    assert "Note: --size: ignored; a resumed comparison keeps its folder's settings" in out, out
    # its final measurement's rounds too (its best, if new, is measured in 1 round)
    assert "made again" not in out and json.loads((older / "final.json").read_text())["rounds"] == 1, out
    assert len(TuneStore.open(older / "random-1").records) == 2 and len(TuneStore.open(newer / "random-1").records) == 1
    settings = json.loads((older / "settings.json").read_text())
    assert (settings["size"], settings["min_time_s"], settings["iters"]) == ("ci", 0.05, 2)
    assert main(["compare", "--resume", str(older / "random-1")]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"{older / 'random-1'} is the tuning run random-1 of a comparison, not a comparison folder" in err, err
    assert f"hint: give the comparison's: --resume {older}" in err, err
    # a damaged file of a comparison is named, not taken for another folder
    for name in ("final.json", "settings.json"):
        path = newer / name
        path.write_text(path.read_text()[:100])
        assert main(["compare", "--resume", str(newer), "--report-only"]) == 1
        err = " ".join(capsys.readouterr().err.split())
        assert f"error: {path} is damaged: not valid JSON (" in err, err
    # valid JSON of the wrong shape (a copy of another file, `echo '[]' >`): the same error, naming the file
    for name, text, why in (("final.json", "3", "not a JSON object (a number)"),
                            ("final.json", '{"groups": 3}', "its field 'groups' is a number, not a list"),
                            ("settings.json", "[]", "not a JSON object (a list)"),
                            ("settings.json", '{"schema": 7}', "its field 'schema' is a number, not a string")):
        path = older / name
        kept = path.read_text()
        path.write_text(text)
        assert main(["compare", "--resume", str(older), "--report-only"]) == 1, name
        err = " ".join(capsys.readouterr().err.split())
        assert f"error: {path} is damaged: {why}" in err, err
        # final.json, the final measurement's record, is measured again when deleted
        assert ("hint: restore final.json from a copy; or delete it: the command without --report-only then "
                "measures the final scores again" if name == "final.json" else
                "hint: restore the comparison folder from a copy, or start a new one with `--new`") in err, err
        path.write_text(kept)
    # expert.json holds what the reference's run folder holds: made again from it, with a note
    path = older / "expert.json"
    for text, why in (("[]", "not a JSON object (a list)"), ("{}", "its field 'throughput' is missing")):
        path.write_text(text)
        assert main(["compare", "--resume", str(older), "--report-only"]) == 0, text
        out = " ".join(capsys.readouterr().out.split())
        assert (f"Note: {path} is damaged: {why}: made again from "
                f"{older / 'baseline-expert' / 'result.json'}") in out, out
        assert json.loads(path.read_text())["throughput"] > 0
    # an impossible figure too (an edit): never copied into the report's scores
    made = json.loads(path.read_text())
    for figure in (-1, 0):
        path.write_text(json.dumps({**made, "throughput": figure}))
        assert main(["compare", "--resume", str(older), "--report-only"]) == 0, figure
        out = " ".join(capsys.readouterr().out.split())
        why = f"its field 'throughput' is {figure}, not a positive number"
        assert (f"Note: {path} is damaged: {why}: made again from "
                f"{older / 'baseline-expert' / 'result.json'}") in out, out
        assert json.loads(path.read_text())["throughput"] == made["throughput"]
        assert json.loads((older / "summary.json").read_text())["reference_first_throughput"] == made["throughput"]
    lock = older / "tune.lock"  # a folder where a file belongs: named too
    lock.unlink()
    lock.mkdir()
    assert main(["compare", "--resume", str(older), "--report-only"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"error: {lock} is a folder, where mapperopt keeps a file" in err, err
    assert "hint: remove or rename it, then run the same command again" in err, err


def test_report_only_without_a_comparison_says_to_run_one(tmp_path, capsys):
    args = ["compare", "stencil", "--optimizers", "random", "--runs-dir", str(tmp_path / "runs")]
    assert main([*args, "--report-only"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"no comparison of stencil under {tmp_path / 'runs'} to report on" in err, err
    assert "run the same command without --report-only first" in err
    assert not (tmp_path / "runs").exists()  # nothing made
    # a comparison made with other settings whose settings.json is damaged: named, not a traceback
    damaged = tmp_path / "runs" / "stencil" / "compare-0123456789" / "settings.json"
    damaged.parent.mkdir(parents=True)
    damaged.write_text('{"schema": "mapperopt.compare')
    assert main([*args, "--report-only"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"error: {damaged} is damaged: not valid JSON (" in err, err


def test_report_only_names_the_other_settings_by_their_options(tmp_path, capsys):
    """`--report-only` beside a comparison made with `--repeats 2 --max-repeats 3` said "executions 2, max_executions
    3; this command: executions 3, max_executions 7": settings.json's keys, not the options to give. It names the
    command line's options."""
    folder = tmp_path / "runs" / "stencil" / "compare-0123456789"
    folder.mkdir(parents=True)
    (folder / "settings.json").write_text(json.dumps({
        "schema": "mapperopt.compare/1", "bench": "stencil", "optimizers": ["random"], "iters": 2, "repeats": 1,
        "size": "ci", "seed": 0, "start": "random", "memory": {"csize": 300}, "executions": 2, "max_executions": 3,
        "min_time_s": 0.25, "timeout_s": None, "app_args": []}))
    assert main(["compare", "stencil", "--optimizers", "random", "--runs-dir", str(tmp_path / "runs"),
                 "--report-only"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"made with other settings: {folder} (" in err, err
    assert "--repeats 2, --max-repeats 3" in err and "--csize 300" in err and "--min-time 0.25" in err, err
    assert f"this command: " in err and f"--repeats {protocol.MIN_REPEATS}, --max-repeats {protocol.MAX_REPEATS}" \
        in err, err
    assert "executions" not in err and "min_time_s" not in err and "memory" not in err, err


def test_a_folder_in_place_of_a_comparisons_settings_file_is_named_with_what_to_do(tmp_path, capsys):
    """A comparison folder whose settings.json is a folder was "not a comparison folder"; it is named as a folder
    where mapperopt keeps a file, as in a tuning folder."""
    path = tmp_path / "compare-0123456789" / "settings.json"
    path.mkdir(parents=True)
    assert main(["compare", "--resume", str(path.parent)]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"error: {path} is a folder, where mapperopt keeps a file" in err, err
    assert "hint: remove or rename it, then run the same command again" in err, err


# One benchmark of each kind of configuration (circuit: the test above): Stencil, Pennant (its deck), a 2-D GEMM
# (Cannon, SUMMA and PUMMA share their configuration's form and expert) and COSMA (a 3-D GEMM whose grid follows the
# processor count). Every benchmark's expert runs and verifies in tests/benchmarks/test_any_count.py.
KINDS = ["stencil", "pennant", "summa", "cosma"]


def test_the_kinds_cover_every_configuration_form():
    """A benchmark with a new metric, unit or iterations flag gets its own compare run above."""
    form = {b: (cfg.metric, cfg.unit, cfg.iterations_flag) for b in known_benchmarks() for cfg in [load_config(b)]}
    assert set(form.values()) == {form[b] for b in [*KINDS, "circuit"]}


@pytest.mark.parametrize("bench", KINDS)
def test_compare_runs_on_every_kind_of_benchmark(bench, tmp_path):
    # The cheapest full path: the expert measured, one iteration (the start program: the expert's text, whose
    # compiled mapper is cached), the final measurement of both in one round, and every output written.
    start = CONFIGS / load_config(bench).expert
    args = ["compare", bench, "--size", "ci", "--iters", "1", "--runs", "1", "--optimizers", "random",
            "--start", str(start), "--repeats", "1", "--max-repeats", "1", "--min-time", "0.05",
            "--final-rounds", "1", "--runs-dir", str(tmp_path)]
    assert main(args) == 0
    [folder] = (tmp_path / bench).iterdir()
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["bench"] == bench and summary["reference"] == "expert" and summary["reference_throughput"] > 0
    [run] = summary["runs"]
    assert run["iterations"] == 1 and run["failed"] == 0, run
    assert run["final_throughput"] > 0 and run["normalized"] > 0  # measured with the expert at the end
    assert f"{bench} at size ci" in (folder / "table.md").read_text()
    assert (folder / "compare.png").exists() and (folder / "summary.csv").exists()


def test_runs_that_share_their_best_program_are_named_when_it_is_measured(tmp_path, capsys, monkeypatch):
    """Four runs gave "Measuring the expert mapper and 3 best program(s) of guided-1, opentuner-1, optuna-1,
    random-1": two of them kept the same program, which only the summary showed later. The line says which runs
    share one."""
    monkeypatch.delenv("COLUMNS", raising=False)  # each line whole, as piped (pytest-xdist's workers set COLUMNS)
    args = ["compare", "circuit", "--size", "ci", "--iters", "1", "--runs", "1", "--optimizers", "guided,random",
            "--start", "default", "--repeats", "1", "--max-repeats", "1", "--min-time", "0.05", "--final-rounds", "2",
            "--runs-dir", str(tmp_path / "runs")]
    assert main(args) == 0
    out = capsys.readouterr().out
    [folder] = (tmp_path / "runs" / "circuit").iterdir()
    [group] = json.loads((folder / "final.json").read_text())["groups"]
    assert len(group["runs"]) == 2 and len(group["measured"]) == 2, group  # the premise: one program for two runs
    assert ("Measuring the expert mapper and 1 best program of guided-1, random-1 together (2 rounds, final-1; "
            "guided-1 and random-1 share one)...") in out, out


@pytest.mark.parametrize("names", [",", " , ", ""])
def test_optimizers_naming_none_is_a_usage_error(names, tmp_path, capsys):
    """`--optimizers ,` exited 1 ("no optimizer left to compare"), the status of a comparison that failed; a wrong
    command line exits 2, as `--optimizers guided,bogus` does."""
    assert main(["compare", "circuit", "--optimizers", names, "--runs-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "error: --optimizers names no optimizer" in err and "choose from" in err, err
    assert not list(tmp_path.iterdir())


def test_runs_beyond_the_limit_are_a_usage_error_at_once(tmp_path, capsys):
    """`--runs 1000000000` spun silently for about an hour (set-up goes over every run) before doing anything: the
    count is bounded, said at once with the limit."""
    import time

    began = time.monotonic()
    assert main(["compare", "circuit", "--runs", "1000000000", "--runs-dir", str(tmp_path)]) == 2
    assert time.monotonic() - began < 5
    err = " ".join(capsys.readouterr().err.split())
    assert "Invalid value for '--runs': 1000000000 is not in the range 1<=x<=1000" in err, err
    assert not list(tmp_path.iterdir())


def test_model_optimizers_are_skipped_without_an_endpoint(tmp_path, monkeypatch, capsys):
    for var in ("MAPPEROPT_LLM_BASE_URL", "MAPPEROPT_LLM_MODEL", "MAPPEROPT_LLM_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    assert main(["compare", "circuit", "--optimizers", "trace", "--runs-dir", str(tmp_path)]) == 1
    out = capsys.readouterr()
    assert "Skipping trace: it needs a language-model endpoint" in out.out
    assert "no optimizer left to compare" in out.err
    assert "package" not in out.out, out.out  # the llm extra is installed here
    # Without the llm extra too, both are named, as `tune --optimizer trace` names them (compare named the endpoint
    # alone, and a user who set one was then told of the package).
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "opto" else real(name, *a))
    assert main(["compare", "circuit", "--optimizers", "trace", "--runs-dir", str(tmp_path)]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert ("Skipping trace: it needs a language-model endpoint and the optional package 'trace-opt', which is not "
            "installed (pip extra 'llm'). Set MAPPEROPT_LLM_BASE_URL or MAPPEROPT_LLM_MODEL") in out, out
    assert install_extra("llm") in out, out


def test_a_new_comparison_with_a_model_optimizer_checks_the_endpoint_before_measuring(tmp_path, monkeypatch,
                                                                                      refused_url, capsys):
    """A dead endpoint was found by compare only when the trace run reached its first proposal, after the build and
    the expert's measurement and whatever other runs came first: as tune, a new comparison asks it for one token
    first and stops before making a folder."""
    monkeypatch.setenv("MAPPEROPT_LLM_BASE_URL", refused_url)
    monkeypatch.setenv("MAPPEROPT_LLM_MODEL", "scripted")
    monkeypatch.setenv("MAPPEROPT_LLM_RETRIES", "0")
    runs = tmp_path / "runs"
    assert main(["compare", "circuit", "--optimizers", "random,trace", "--iters", "2", "--runs", "1",
                 "--runs-dir", str(runs)]) == 1
    captured = capsys.readouterr()
    assert f"cannot connect to the model endpoint {refused_url}" in " ".join(captured.err.split()), captured.err
    out = " ".join(captured.out.split())
    assert "Measuring" not in out and "iter 1" not in out and "nothing was measured" in out, out
    assert not list(runs.glob("circuit/compare-*"))


def test_report_only_without_a_comparison_says_its_error_alone(tmp_path, monkeypatch, capsys):
    # Nothing will run, so the notice that a model optimizer is skipped would only precede the error.
    for var in ("MAPPEROPT_LLM_BASE_URL", "MAPPEROPT_LLM_MODEL", "MAPPEROPT_LLM_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    assert main(["compare", "circuit", "--optimizers", "random,trace", "--report-only",
                 "--runs-dir", str(tmp_path)]) == 1
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.startswith(f"error: no comparison of circuit under {tmp_path} to report on")


def test_parallel_compare_pins_its_jobs_and_reports_what_finished(tmp_path, capfd):
    # Two jobs of one core each: each tuning run and each group of the final measurement in its own process,
    # confined to its core; every figure is kept relative to the comparison's folder.
    runs = tmp_path / "runs"
    args = ["compare", "circuit", "--size", "ci", "--iters", "2", "--runs", "2", "--optimizers", "random",
            "--repeats", "1", "--max-repeats", "1", "--min-time", "0.05", "--final-rounds", "2",
            "--jobs", "2", "--cpus-per-job", "1", "--runs-dir", str(runs)]
    assert main(args) == 0
    out = capfd.readouterr().out
    [folder] = (runs / "circuit").iterdir()
    assert "cores 0." in out and "cores 1." in out  # printed by each run as it starts, from its own affinity
    assert " GFLOPS  best " in out  # progress lines carry the unit
    groups = json.loads((folder / "final.json").read_text())["groups"]
    # one group per repeat, each measuring the expert with that repeat's best programs on one job's core
    assert sorted(sorted(g["runs"]) for g in groups) == [["random-1"], ["random-2"]]
    assert all(g["cores"] in ([0], [1]) for g in groups)
    summary = json.loads((folder / "summary.json").read_text())
    by_group = {r: g["reference"] for g in groups for r in g["runs"]}
    for run in summary["runs"]:
        assert run["reference_throughput"] == by_group[run["folder"]]  # each run scored against its own group
        if run["final_throughput"]:
            assert run["normalized"] == pytest.approx(run["final_throughput"] / by_group[run["folder"]])
    assert "2 runs at a time, each on its own 1 core" in (folder / "table.md").read_text()
    for name in ("summary.json", "runs.csv", "final.json", "random-1/settings.json"):
        assert str(tmp_path) not in (folder / name).read_text(), name

    # A run cut short (its last iteration lost when the call was killed): --report-only measures nothing and
    # reports the other runs, printed only: the report files, which include the run, are not replaced by a partial
    # report (they were); the same command then finishes it.
    journal = folder / "random-2" / "state.jsonl"
    journal.write_text(journal.read_text().splitlines(keepends=True)[0])
    before = sorted(p.name for p in folder.iterdir())
    reports = {name: (folder / name).read_bytes() for name in ("summary.json", "summary.csv", "table.md", "runs.csv")}
    assert main([*args, "--report-only"]) == 0
    out = " ".join(capfd.readouterr().out.split())
    assert "Left out, not tuned to 2 iterations yet: random-2" in out
    assert ("Not written: the comparison's report files (summary.json, ...) include random-2, which this "
            "--report-only leaves out: they are left as they are, and this report is printed only") in out, out
    assert sorted(p.name for p in folder.iterdir()) == before  # no new measurement folder
    assert {name: (folder / name).read_bytes() for name in reports} == reports
    assert main(args) == 0
    out = capfd.readouterr().out
    assert "random #2 iter 2/2" in out and "random #1 iter" not in out
    assert json.loads((folder / "summary.json").read_text())["optimizers"]["random"]["runs"] == 2

    # --remeasure: repeat 2's group is set aside (kept in final.json) and measured again, nothing tuned again; the
    # other group stays
    # the run finished again was measured again: its first group set aside, so that a run is in one group
    final = json.loads((folder / "final.json").read_text())
    groups, earlier = final["groups"], final["replaced"]
    old = [g for g in groups if "random-2" in g["runs"]]
    assert len(old) == 1 and [g["runs"] for g in earlier] == [["random-2"]]
    kept = [g for g in groups if "random-2" not in g["runs"]]
    evaluated = sorted(p.name for p in (folder / "evaluations").iterdir())
    assert main([*args, "--remeasure", "2"]) == 0
    out = capfd.readouterr().out
    assert "Measuring again: random-2" in out and " iter " not in out
    # one group
    assert f"(their group {old[0]['folder']} moves to `replaced` in final.json" in " ".join(out.split()), out
    final = json.loads((folder / "final.json").read_text())
    assert final["replaced"] == earlier + old
    [new] = [g for g in final["groups"] if "random-2" in g["runs"]]
    assert [g for g in final["groups"] if g is not new] == kept
    assert new["folder"] not in {g["folder"] for g in groups} and (folder / new["folder"]).is_dir()
    assert sorted(p.name for p in (folder / "evaluations").iterdir()) == evaluated
    run2 = next(r for r in json.loads((folder / "summary.json").read_text())["runs"] if r["folder"] == "random-2")
    assert run2["reference_throughput"] == new["reference"]
    assert main([*args, "--remeasure", "3"]) == 2  # no such run
    assert "expected run numbers from 1 to 2" in capfd.readouterr().err

def test_shared_evaluations_skip_the_unread_profile_and_keep_timeouts_on_a_dedicated_machine(tmp_path):
    from mapperopt.optimizer.compare import SharedEvaluations
    from mapperopt.optimizer.loop import BenchmarkEvaluator

    dsl = load_config("stencil").expert_dsl()
    shared = tmp_path / "evaluations"

    def evaluate(name: str, **options):
        out = tmp_path / name
        out.mkdir()
        evaluator = BenchmarkEvaluator("stencil", size="ci", min_time_s=0, **options)
        return SharedEvaluations(evaluator, shared).evaluate(dsl, out, None).result, (out / "shared.json").exists()

    # an optimizer that does not read the profile: one execution, no profiling one
    plain, reused = evaluate("plain", profile=False)
    assert plain.ok and plain.profile is None and len(plain.attempts) == 1 and not reused
    # one that reads it evaluates the program again, with its profile; from then on both reuse that
    profiled, reused = evaluate("profiled", profile=True)
    assert profiled.ok and profiled.profile is not None and not reused
    for name, profile in (("plain-again", False), ("profiled-again", True)):
        result, reused = evaluate(name, profile=profile)
        assert reused and result.profile == profiled.profile

    # a timeout on a dedicated machine is the program's own: not run again, and kept like any failure
    slow = {"timeout_s": 2, "extra_args": ("-tsteps", "1000000000"), "profile": False, "dedicated": True}
    result, reused = evaluate("slow", **slow)
    assert result.stage == "timeout" and len(result.attempts) == 1 and result.settings["retried"] == 0
    result, reused = evaluate("slow-again", **slow)
    assert reused and result.stage == "timeout"


def test_a_damaged_stored_outcome_is_measured_again_with_a_note(tmp_path):
    from mapperopt.optimizer.compare import SharedEvaluations
    from mapperopt.optimizer.loop import BenchmarkEvaluator

    dsl = load_config("stencil").expert_dsl()
    shared, notes = tmp_path / "evaluations", []

    def evaluate(name: str):
        out = tmp_path / name
        out.mkdir()
        evaluator = BenchmarkEvaluator("stencil", size="ci", min_time_s=0, profile=False)
        return SharedEvaluations(evaluator, shared, notes.append).evaluate(dsl, out, None).result

    assert evaluate("first").ok
    [stored] = shared.iterdir()
    stored.write_text(stored.read_text()[:200])  # cut short
    again = evaluate("again")
    assert again.ok and again.run_dir.endswith("again")  # measured again, not reused
    assert len(notes) == 1 and notes[0].startswith(f"Note: {stored} is damaged: not valid JSON"), notes
    assert json.loads(stored.read_text())["run_dir"] == "again"  # stored anew
    for text, why in (("[]", "not a JSON object (a list)"), ('{"run_dir": "x"}', "its field 'app' is missing")):
        stored.write_text(text)  # valid JSON of the wrong shape: the same
        notes.clear()
        assert evaluate(f"again-{len(text)}").ok
        assert notes == [f"Note: {stored} is damaged: {why}; its program is measured again."], notes


def test_missing_optional_packages_are_named_before_any_work(tmp_path, monkeypatch, capsys):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "optuna" else real(name, *a))
    args = ["compare", "circuit", "--optimizers", "guided,random,optuna", "--iters", "3", "--runs", "1",
            "--runs-dir", str(tmp_path / "runs")]
    assert main(args) == 1
    out = capsys.readouterr()
    assert "the optuna optimizer needs the optional package 'optuna'" in out.err
    assert install_extra("baselines") in " ".join(out.err.split())
    assert not (tmp_path / "runs").exists() and "Comparison folder" not in out.out  # nothing was measured


def test_compares_default_optimizers_missing_a_package_say_what_to_install_and_what_runs_without(
        tmp_path, monkeypatch, capsys):
    """Right after the README's install (no `baselines` extra), the default --optimizers fails: the hint names the
    exact packages for the interpreter that runs mapperopt (however mapperopt was installed) and the --optimizers
    that works without them."""
    import importlib.util
    import shlex
    import sys

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("optuna", "opentuner") else real(name, *a))
    monkeypatch.delenv("MAPPEROPT_LLM_BASE_URL", raising=False)
    assert main(["compare", "circuit", "--iters", "1", "--runs", "1", "--runs-dir", str(tmp_path / "runs")]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"{shlex.quote(sys.executable)} -m pip install opentuner optuna" in err, err
    assert "or leave them out: --optimizers guided,random" in err, err
    assert not (tmp_path / "runs").exists()


def test_a_failed_job_is_named_by_its_run(tmp_path, monkeypatch, capsys):
    # A package found but failing to import (a broken installation) passes the check up front: the run that
    # needs it fails, and the error names that run, not a task number.
    import sys

    from mapperopt.optimizer import compare

    monkeypatch.setattr(compare, "require_packages", lambda names: None)
    monkeypatch.setitem(sys.modules, "optuna", None)
    args = ["compare", "circuit", "--size", "ci", "--iters", "1", "--runs", "1", "--optimizers", "random,optuna",
            "--repeats", "1", "--max-repeats", "1", "--min-time", "0.05", "--final-rounds", "1",
            "--runs-dir", str(tmp_path / "runs")]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "1 job(s) of" in err and "failed: tuning run optuna-1: the optuna optimizer needs" in err, err
    assert "task " not in err


def test_jobs_sharing_cores_with_their_utility_processors_and_a_jobs_change_are_said(tmp_path, monkeypatch):
    """`--jobs 2 --cpus-per-job 1`: each job's CPU processor shared its one core with Legion's utility processor,
    which changes every figure, and nothing said so; a later command on the same comparison with another --jobs
    was neither said nor recorded. Both are said before anything is measured, naming the cores needed, and each
    command's jobs are recorded in settings.json (the comparison stays the same folder)."""
    import os

    from mapperopt.errors import MapperoptError
    from mapperopt.optimizer import compare as module

    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("two jobs need two cores")

    def stop(*args, **kw):
        raise MapperoptError("stopped before measuring")

    monkeypatch.setattr(module, "_reference", stop)
    said: list[str] = []
    opts = {"optimizers": ["random"], "iters": 1, "repeats": 2, "size": "ci", "cpus": None, "gpus": None, "seed": 0,
            "start": "random", "memory": {}, "executions": 1, "max_executions": 1, "min_time_s": 0.05,
            "timeout_s": None, "final_rounds": 2, "runs_dir": tmp_path / "runs", "new": False, "app_args": (),
            "jobs": 2, "cpus_per_job": 1}
    with pytest.raises(MapperoptError, match="stopped before measuring"):
        module.run_compare("circuit", opts, say=said.append)
    util = load_config("circuit").size("ci").util
    cores = len(os.sched_getaffinity(0))
    text = " ".join(said)
    assert (f"More processors than cores: 2 jobs x (1 CPU + {util} utility processor{'s' * (util != 1)}) need "
            f"{2 * (1 + util)} cores, each job {1 + util} on its own 1 core (--cpus-per-job 1); this process may use "
            f"{cores}") in text, said
    [folder] = (tmp_path / "runs" / "circuit").iterdir()
    assert json.loads((folder / "settings.json").read_text())["jobs_by_command"] == [{"jobs": 2, "cores_per_job": 1}]
    said.clear()
    with pytest.raises(MapperoptError, match="stopped before measuring"):
        module.run_compare("circuit", {**opts, "jobs": 1, "cpus_per_job": None}, say=said.append)
    assert [p.name for p in (tmp_path / "runs" / "circuit").iterdir()] == [folder.name]
    text = " ".join(said)
    assert ("--jobs 1 (no pinning): earlier commands on this comparison ran --jobs 2 (1 core each); the runs and "
            "final measurements they made keep their figures, measured on other cores under another load") in text, said
    assert "More processors than cores" not in text or cores < 1 + util, said
    assert json.loads((folder / "settings.json").read_text())["jobs_by_command"] == [
        {"jobs": 2, "cores_per_job": 1}, {"jobs": 1, "cores_per_job": None}]


def test_the_reference_first_measurement_lines_name_it_once(tmp_path):
    """The noise lines of the reference's first measurement named it in their title and again in their text
    ("... of the expert mapper's first measurement: expert measured by a single execution"): once, in the title.
    --size and --min-time identify a comparison: the advice to change them says it means a new one."""
    from mapperopt.optimizer.compare import _noise

    run = tmp_path / "baseline-expert"
    run.mkdir()
    (run / "result.json").write_text(json.dumps({
        "app": "circuit", "mapper": "expert", "status": "ok", "time_s": 0.083,
        "attempts": [{"exit_code": 0, "wall_s": 0.9, "result": {"throughput": 4.4, "time_s": 0.083}}],
        "settings": {"iterations_flag": "-l", "measured_runs": 1}}))
    ctx = {"reference": "expert", "folder": tmp_path, "min_time": 0.05, "bench": "circuit", "opts": {"timeout_s": None}}
    lines = _noise(ctx, [], [], {"groups": []})
    assert lines == [
        ["No spread estimate of the expert mapper's first measurement", "measured by a single execution, which gives "
         "no interval: how much of the figure is the machine's noise is unknown; measure again with a higher "
         "--repeats in a new comparison (--repeats is one of the settings that identify one)."],
        ["Short measurement of the expert mapper's first measurement", "0.083 s measured per execution, less than "
         "the protocol's minimum of 0.5 s, where timing noise weighs heavily; measure again with a larger --size or "
         "--min-time 0.5, in a new comparison (these are among the settings that identify one)."]], lines


def test_the_printed_table_has_table_md_columns(tmp_path, monkeypatch, capsys):
    """The printed table lacked table.md's `runs` column: the runs an optimizer's figures are over (fewer than
    --runs when some are not finished) were only in the files."""
    from mapperopt.optimizer import compare as module

    runs = [RunOutcome("a", 1, 0, [r2 := record(1, 3.0, 3.0)], r2, 3.0, Path("a-1")),
            RunOutcome("a", 2, 1, [r3 := record(1, 2.0, 2.0)], r3, 1.0, Path("a-2")),
            RunOutcome("b", 1, 0, [r4 := record(1, 2.0, 2.0)], r4, 2.0, Path("b-1"))]
    summary = {**summarize(runs, expert=2.0), "folder": str(tmp_path), "written": False, "bench": "circuit"}
    monkeypatch.setattr(module, "run_compare", lambda *args, **kw: summary)
    assert main(["compare", "circuit", "--runs-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "optimizer" in line and "mean" in line)
    assert [c.strip() for c in header.strip("┃ ").split("┃")][:3] == ["optimizer", "runs", "mean"], out
    rows = {cells[0]: cells[1] for line in out.splitlines() if line.startswith("│")
            for cells in [[c.strip() for c in line.strip("│ ").split("│")]]}
    assert rows == {"a": "2", "b": "1"}, out
    md = [line for line in format_table(summary).splitlines() if line.startswith("| optimizer")][0]
    assert [c.strip() for c in md.strip("| ").split("|")][:3] == ["optimizer", "runs", "mean"]


def test_unnamed_final_folders_are_said_once_each_with_what_they_hold(tmp_path):
    """The note on final-N/ folders that final.json did not name read "final-1, final-2: final measurement(s)
    final.json did not name (...)": one line names each folder once, with the mappers it holds runs of, as tune
    says of its own; a later command, which finds them recorded, says nothing."""
    from mapperopt.optimizer.compare import _record_interrupted

    for folder, mappers in (("final-1", ["expert"]), ("final-2", ["expert", "p-1"])):
        for name in mappers:
            (tmp_path / folder / name / "round-1").mkdir(parents=True)
    said: list[str] = []
    stored: dict = {"rounds": 2, "groups": []}
    _record_interrupted(tmp_path, stored, said.append)
    # in the user's terms: no mention of what final.json or earlier versions did
    assert said == ["Interrupted: final-1 (runs of expert), final-2 (runs of expert, p-1): final measurements cut "
                    "short (interrupted or killed); what they measured is not used (final.json lists them under "
                    "`interrupted`), and the runs they measured are measured again unless a finished measurement "
                    "has them."], said
    assert json.loads((tmp_path / "final.json").read_text())["interrupted"] == [
        {"folder": "final-1", "mappers": ["expert"]}, {"folder": "final-2", "mappers": ["expert", "p-1"]}]
    said.clear()
    _record_interrupted(tmp_path, json.loads((tmp_path / "final.json").read_text()), said.append)
    assert said == []


def test_the_core_sharing_warning_suggests_fewer_cpus_only_when_there_are_fewer():
    """The --jobs core-sharing warning said "or fewer processors (--cpus)" when each job had one CPU already, the
    least --cpus takes: it names --cpus only when a lower count exists, and then the count that fits."""
    from mapperopt.optimizer.compare import _shared_cores

    one = _shared_cores([[0], [1]], 1, 1, True)
    assert one is not None and "--cpus)" not in one and "fewer processors" not in one, one
    assert one.endswith("give each job 2 cores or more (a lower --jobs, --cpus-per-job)."), one
    three = _shared_cores([[0, 1], [2, 3]], 3, 1, True)
    assert three is not None and three.endswith("or fewer processors (--cpus 1)."), three


def test_a_timeout_the_executions_do_not_fit_in_is_refused_after_the_reference(tmp_path, capsys):
    """`compare --timeout 1.1 --min-time 0.5` passed the up-front rule (more than twice --min-time), but Legion's
    start-up and the application's set-up come on top of the measured time: every iteration would fall short of
    --min-time or time out. Once the reference has run, the --timeout is refused, naming it, before any run."""
    runs = tmp_path / "runs"
    code = main(["compare", "stencil", "--optimizers", "random", "--iters", "1", "--runs", "1", "--size", "ci",
                 "--min-time", "0.5", "--timeout", "1.1", "--final-rounds", "1", "--runs-dir", str(runs)])
    out = capsys.readouterr()
    text = " ".join((out.out + out.err).split())
    assert code == 1, text
    assert "--timeout 1.1" in text, text
    assert ("each execution took here besides it (Legion's start-up and the application's set-up" in text
            or "ran past --timeout 1.1" in text), text
    assert "iter 1/1" not in text and not list(runs.glob("stencil/compare-*/random-1/iter-*")), text


def test_a_gpu_size_without_a_gpu_is_refused_before_any_warning(tmp_path, capsys):
    """`compare pennant --size gpu` on a machine without an NVIDIA driver printed the core-count warning (pennant's
    gpu size asks 2 CPU + 2 utility processors) before the "no GPU" error, which alone matters: the comparison cannot
    run. run and tune print only the error."""
    from mapperopt import toolchain

    if toolchain.has_cuda_driver():
        pytest.skip("this machine has an NVIDIA driver")
    assert main(["compare", "pennant", "--size", "gpu", "--iters", "1", "--runs", "1", "--runs-dir",
                 str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert err.startswith("error: no GPU on this machine: size 'gpu' asks for 1 GPU"), err
    assert "More processors than cores" not in out + err, out + err
    assert not any(tmp_path.iterdir())


def test_the_table_says_which_runs_kept_their_start_and_how_much_the_reference_itself_varied(tmp_path):
    """A 2-iteration comparison printed "guided 1.42 / random 1.42" where both runs' best was the shared start program
    (iteration 1) and the reference moved ±10 % or more: nothing under the table said either. Now table.md (and the
    printed output) say, per optimizer, how many runs' best is their start, and how much the reference varied in the
    final measurement (final.json's groups), so that closer scores read as indistinguishable. The columns stay."""
    from statistics import median

    from mapperopt.optimizer.compare import reference_noise, under_table

    runs = [RunOutcome(name, 1, 0, [s := record(1, 1.42, 1.42), record(2, 1.1, 1.42)], s, 1.42, Path(f"{name}-1"),
                       reference=1.0) for name in ("guided", "random")]
    runs.append(RunOutcome("guided", 2, 1, [record(1, 1.0, 1.0), b := record(2, 1.3, 1.3)], b, 1.3,
                           Path("guided-2"), reference=1.1))
    summary = summarize(runs, expert=1.0)
    columns = [line for line in format_table(summary).splitlines() if line.startswith("|")]

    def group(values, runs):
        low, high = min(values), max(values)
        return {"runs": runs, "reference": sum(values) / len(values),
                "measured": {"expert": {"estimate": {"values": values, "value": sum(values) / len(values),
                                                     "low": low, "high": high,
                                                     "spread": (high - low) / median(values)}}}}

    groups = [group([0.9, 1.0, 1.1], ["guided-1", "random-1"]), group([1.05, 1.1, 1.15], ["guided-2"])]
    noise = reference_noise(groups, "expert")
    assert noise["half_width"] == pytest.approx(0.1) and noise["rounds"] == 3
    assert noise["between_groups"] == pytest.approx(0.05 / 1.05)
    summary.update(reference="expert", reference_noise=noise, final_rounds=3, final_groups=groups)
    table = write_outputs(tmp_path, summary)["table"].read_text()
    assert [line for line in table.splitlines() if line.startswith("|")] == columns  # the paper's table as it was
    lines = under_table(summary)
    start = next(line for line in lines if "start program" in line)
    assert "guided 1 of 2 runs" in start and "random 1 of 1 run" in start, start
    said = next(line for line in lines if line.startswith("Noise:"))
    assert "expert mapper" in said and "±10 %" in said and "not distinguishable" in said, said
    for line in (start, said):
        assert line in table
    # `--final-rounds 2` or 1: no interval, said as such with the rounds that give one, never as "beyond the
    # noise" (two rounds: their spread is the least a score must differ by, and no more is shown)
    two = reference_noise([group([0.85, 1.15], ["guided-1", "random-1", "guided-2"])], "expert")
    said = next(line for line in under_table({**summary, "reference_noise": two}) if line.startswith("Noise:"))
    assert said == ("Noise: the expert mapper was measured by 2 rounds in the final measurement, too few for a 90 % "
                    "interval (one takes --final-rounds 3 or more), so how much it varies is unknown; its rounds lie "
                    "30 % apart: optimizers whose scores differ by less than about 30 % of a score are not "
                    "distinguishable by this comparison, and no larger difference is shown to be real either."), said
    one = reference_noise([group([1.0], ["guided-1", "random-1", "guided-2"])], "expert")
    said = next(line for line in under_table({**summary, "reference_noise": one}) if line.startswith("Noise:"))
    assert said == ("Noise: the expert mapper was measured by a single round in the final measurement, which gives no "
                    "90 % interval (one takes --final-rounds 3 or more), so how much it varies is unknown: no "
                    "difference between the scores is shown to be real."), said
    assert "beyond the noise" not in said
    # without a final measurement, no reference noise is claimed; the start line stays
    del summary["reference_noise"]
    assert not any(line.startswith("Noise:") for line in under_table(summary))
    assert json.loads((tmp_path / "summary.json").read_text())["runs"][0]["best_iter"] == 1


def test_the_legend_covers_neither_the_axis_label_nor_the_drift_line():
    """compare.png put its legend at a fixed place under the axes: a legend of one column (labels too long for two)
    or of many rows covered the "iteration" label. It sits under the label whatever its height, and above the line
    that says the reference drifted."""
    long = "a name long enough that two columns of it are wider than the figure"
    for names in (("guided", "opentuner", "optuna", "random"), (f"{long} 1", f"{long} 2", f"{long} 3")):
        runs = [RunOutcome(name, r, r, [record(1, 1.9, 1.9), b := record(2, 4.6, 4.6)], b, 4.0,
                           Path(f"{name}-{r}"), reference=ref) for name in names for r, ref in ((1, 3.705), (2, 4.99))]
        summary = summarize(runs, expert=4.3, curve_expert=1.708)
        summary.update(bench="circuit", reference="expert", unit="GFLOPS", reference_first_throughput=1.708,
                       reference_throughput=4.35, final_rounds=3,
                       final_groups=[{"runs": [f"{n}-1" for n in names], "reference": 3.705},
                                     {"runs": [f"{n}-2" for n in names], "reference": 4.99}])
        fig = compare_figure(summary)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        [ax] = fig.axes
        label = ax.xaxis.label.get_window_extent(renderer)
        legend = ax.get_legend().get_window_extent(renderer)
        assert legend.y1 < label.y0, (names, legend, label)  # under the label, not over it
        [drift] = fig.texts
        assert drift.get_window_extent(renderer).y1 < legend.y0, names  # the drift line under the legend
        assert drift.get_window_extent(renderer).y0 >= 0 and legend.x0 >= 0 and legend.x1 <= fig.bbox.x1


def printed(line: str) -> str:
    """`line` as tune's Rich console shows it: markup rendered, so a bracketed note it did not escape is gone."""
    from rich.console import Console

    console = Console(record=True, width=400, file=io.StringIO())
    console.print(line)
    return console.export_text()


def test_progress_lines_say_what_changed_what_decided_and_what_is_not_comparable(tmp_path):
    """compare's progress lines omitted what each iteration changed (tune's say it); a candidate that looked faster
    but was not taken, then a slower one that was, read like a bug because the joint re-measurement that decided
    was not shown; and an iteration measured at another iteration count than the run's calibrated one (-iters 384
    instead of 59: an 8x 'gain' from load alone) looked like any other. Each line says them, naming which of the two
    re-measured figures is the candidate's and which the best's ("X against Y" read either way)."""
    from mapperopt.optimizer import commands

    common = dict(dsl="# 2\n", key="2", status="ok", stage=None, category="performance", unit="1/ms")
    kept_out = IterationRecord(iter=2, throughput=1 / 1029, best_throughput=1 / 1277, best_iter=1,
                               note="neighbour of the best, iteration 1: layout/align = 64", **common)
    taken = replace(kept_out, iter=3, throughput=1 / 1232, best_throughput=1 / 1232, best_iter=3, note="random")
    for i, candidate, best, wins in ((2, 1047.0, 951.0, False), (3, 1019.0, 1071.0, True)):
        (tmp_path / f"iter-{i:03d}").mkdir()
        (tmp_path / f"iter-{i:03d}" / "best.json").write_text(json.dumps({
            "best_before": 1, "decided_by": "re-measured together", "becomes_best": wins,
            "remeasured": {"candidate": {"estimate": {"value": 1 / candidate}, "unit": "1/ms"},
                           "best": {"estimate": {"value": 1 / best}, "unit": "1/ms"}}}))
    line = " ".join(progress_line("optuna #1", kept_out, 3, root=tmp_path).split())
    assert "neighbour of the best, iteration 1: layout/align = 64" in line, line
    assert "re-measured together with iter 1: this one 1047 ms, iter 1 951 ms" in line, line
    line = " ".join(progress_line("optuna #1", taken, 3, root=tmp_path).split())
    assert "(this one; re-measured together with iter 1: this one 1019 ms, iter 1 1071 ms)" in line, line
    tuned = " ".join(printed(commands._line(kept_out, 3, root=tmp_path)).split())
    assert "re-measured together with iteration 1: this one 1047 ms, iteration 1 951 ms" in tuned, tuned

    summa = dict(common, unit="GFLOPS", note="")
    calibrated = {"settings": {"iterations": 59, "iterations_flag": "-iters"}}
    grown = IterationRecord(iter=5, throughput=19.2, best_throughput=19.2, best_iter=5, **summa,
                            result={"settings": {"iterations": 384, "iterations_flag": "-iters"}})
    same = IterationRecord(iter=4, throughput=2.2, best_throughput=2.4, best_iter=2, **summa, result=calibrated)
    for text in (progress_line("guided #1", grown, 5, iterations=59), printed(commands._line(grown, 5, iterations=59))):
        assert "measured with -iters 384, not the run's 59: not comparable with the other iterations" in \
               " ".join(text.split()), text
    for text in (progress_line("guided #1", same, 5, iterations=59), commands._line(same, 5, iterations=59)):
        assert "not comparable" not in text, text


def test_each_score_has_its_interval_when_the_final_rounds_give_one():
    """The table printed `guided 1.44`, `optuna 0.67` with a separate noise line: the scores carried no interval,
    though the final measurement's rounds give one. Under the table, each run's score with the 90 % interval of
    the ratio of its best program's rounds to the reference's; none from fewer than 3 rounds."""
    from mapperopt.optimizer.compare import _program, score_intervals, under_table

    runs = [RunOutcome(name, 1, 0, [b := record(1, v, v)], b, v, Path(f"{name}-1"), reference=1.0)
            for name, v in (("guided", 1.44), ("optuna", 0.67))]
    runs[1] = replace(runs[1], best=replace(runs[1].best, dsl="Task * CPU;\n"))  # another program

    def estimate(values):
        return {"estimate": {"values": values, "value": sum(values) / len(values)}}

    group = {"runs": ["guided-1", "optuna-1"], "reference": 1.0,
             "measured": {"expert": estimate([0.95, 1.0, 1.05]), _program(runs[0].best): estimate([1.4, 1.44, 1.48]),
                          _program(runs[1].best): estimate([0.6, 0.67, 0.74])}}
    intervals = score_intervals(runs, [group], "expert")
    c = protocol.compare([1.4, 1.44, 1.48], [0.95, 1.0, 1.05])
    assert intervals["guided-1"] == pytest.approx([c.ratio, c.low, c.high])
    summary = {**summarize(runs, expert=1.0), "reference": "expert", "score_intervals": intervals}
    line = next(line for line in under_table(summary) if line.startswith("Scores with"))
    assert f"guided-1 {c.ratio:.2f} ({c.low:.2f}-{c.high:.2f})" in line and "optuna-1 0.67 (" in line, line
    two = {**group, "measured": {k: estimate(v["estimate"]["values"][:2]) for k, v in group["measured"].items()}}
    assert score_intervals(runs, [two], "expert") == {}


def _timed_out(i: int, limit: float) -> IterationRecord:
    """A failed iteration as compare's journal stores a timeout (state.jsonl of a real Pennant `small` comparison):
    stage and category `timeout`, the limit in the result's settings and reason."""
    result = {"status": "failed", "stage": "timeout", "reason": f"did not finish within {limit} s and was killed",
              "settings": {"timeout_s": limit}, "attempts": [{"exit_code": None, "result": None}] * 2,
              "run_dir": f"iter-{i:03d}"}
    return IterationRecord(iter=i, dsl=f"# {i}\n", key=f"t{i}", status="failed", stage="timeout", category="timeout",
                           throughput=None, unit=None, best_throughput=0.0, result=result)


def _blas(i: int, cached_from: int | str | None = None) -> IterationRecord:
    """A GEMM iteration whose padded AOS layout DGEMM rejected (a real cannon comparison's journal)."""
    result = None if isinstance(cached_from, int) else {
        "status": "failed", "stage": "run", "reason": "aborted: error: task_4: the tile of C (64 x 64) is not "
        "row-major: row stride 4096, column stride 16 elements", "settings": {"timeout_s": 120.0}, "attempts": []}
    return IterationRecord(iter=i, dsl=f"# b{i}\n", key=f"b{i}", status="failed", stage="run", category="layout.blas",
                           throughput=None, unit=None, best_throughput=1.0, result=result, cached_from=cached_from,
                           cached=isinstance(cached_from, int))


def _checked(i: int, throughput: float, kind: str) -> IterationRecord:
    """A successful iteration whose result lines say which check passed (Pennant: `energy` at `small`)."""
    result = {"status": "ok", "settings": {"timeout_s": 50.0, "measured_runs": 3},
              "attempts": [{"exit_code": 0, "result": {"throughput": throughput, "check": {"kind": kind}}}] * 3}
    return IterationRecord(iter=i, dsl=f"# {i}\n", key=str(i), status="ok", stage=None, category="performance",
                           throughput=throughput, unit="zone-cycles/s", best_throughput=throughput, best_iter=i,
                           result=result)


def test_the_failed_evaluations_are_said_by_kind_with_the_timeout_and_an_example(tmp_path):
    """A Pennant `small` comparison printed `opentuner | 0.00 | ... | 100% of 3` and nothing under it: its three
    proposals had all timed out (50.06 s), slow programs rather than wrong ones; on the GEMMs the baselines' failures
    were all one layout DGEMM rejects, which only history.csv said. Now one line per optimizer with failures gives
    their kinds, counts, the timeout that applied and one iteration folder each; summary.json has the same."""
    from mapperopt.optimizer.compare import under_table

    runs = [RunOutcome("opentuner", 1, 0, [_timed_out(1, 50.06), _timed_out(2, 50.06), _timed_out(3, 74.86)],
                       None, None, Path("opentuner-1")),
            RunOutcome("optuna", 1, 0, [_checked(1, 2.0, "sequential"), _blas(2), _blas(3, cached_from=2),
                                        _blas(4, cached_from="random-1/iter-002"), _timed_out(5, 50.06)],
                       None, None, Path("optuna-1")),
            RunOutcome("guided", 1, 0, [b := _checked(1, 2.0, "sequential")], b, 2.0, Path("guided-1"))]
    summary = summarize(runs, expert=2.0)
    failures = summary["failures"]
    assert set(failures) == {"opentuner", "optuna"}  # guided failed nothing: no entry, no line
    assert failures["opentuner"] == [{"kind": "timeout", "stage": "timeout", "count": 3,
                                      "example": "opentuner-1/iter-001", "timeout_s": [50.06, 74.86], "start": 1}]
    blas, timeout = failures["optuna"]
    # the example is in the run's own folder: the iteration's, or the earlier one whose outcome it reused
    assert blas == {"kind": "layout.blas", "stage": "run", "count": 3, "example": "optuna-1/iter-002",
                    "timeout_s": None, "start": 0}
    # an outcome reused from another run (the shared start program): the iteration's own folder, not the other run's
    shared = summarize([RunOutcome("optuna", 1, 0, [_blas(1, cached_from="random-1/iter-001")], None, None,
                                   Path("optuna-1"))], expert=2.0)["failures"]["optuna"]
    assert [(k["example"], k["start"]) for k in shared] == [("optuna-1/iter-001", 1)], shared
    assert timeout["count"] == 1 and timeout["timeout_s"] == [50.06, 50.06]
    lines = [line for line in under_table(summary) if line.startswith("Failed evaluations")]
    assert lines == [
        "Failed evaluations of opentuner (3 of 3): 3 timeout (killed after 50.06-74.86 s, the limit that applied: "
        "too slow or stuck, no result checked; e.g. opentuner-1/iter-001); 1 of them the start program (iteration "
        "1), which every optimizer's run of a repeat shares: it counts in each optimizer's figure.",
        "Failed evaluations of optuna (4 of 5): 3 layout.blas (at stage run; e.g. optuna-1/iter-002), 1 timeout "
        "(killed after 50.06 s, the limit that applied: too slow or stuck, no result checked; e.g. "
        "optuna-1/iter-005)."], lines
    table = write_outputs(tmp_path, summary)["table"].read_text()
    assert all(line in table for line in lines), table
    assert json.loads((tmp_path / "summary.json").read_text())["failures"] == failures


def test_scores_resting_on_the_energy_check_only_say_so_in_the_header():
    """Pennant at `small` verifies by energy conservation only (no sequential or reference check): `run` says so,
    compare's table said nothing, so its scores read as checked as at `ci`. The header now says it when any result
    line of the comparison says check kind `energy`, and how many of the checked executions that was."""
    from mapperopt.optimizer.compare import check_kinds, describe

    runs = [RunOutcome("guided", 1, 0, [b := _checked(1, 2.0, "energy"), _timed_out(2, 50.06)], b, 2.0,
                       Path("guided-1"))]
    summary = summarize(runs, expert=2.0)
    summary["check_kinds"] = check_kinds(runs, [{"attempts": [{"result": {"check": {"kind": "energy"}}}] * 4}])
    assert summary["check_kinds"] == {"energy": 7}
    header = " ".join(describe(summary))
    assert "Every result was checked by energy conservation only" in header, header
    mixed = check_kinds([*runs, RunOutcome("random", 1, 0, [s := _checked(1, 2.0, "sequential")], s, 2.0,
                                           Path("random-1"))], [])
    assert mixed == {"energy": 3, "sequential": 3}
    header = " ".join(describe({**summary, "check_kinds": mixed}))
    assert "3 of 6 checked executions were checked by energy conservation only" in header, header
    header = " ".join(describe({**summary, "check_kinds": {"sequential": 3}}))
    assert "energy" not in header, header


def test_the_noise_line_claims_no_more_than_the_runs_score_intervals_and_one_run_compares_no_optimizers():
    """A Pennant comparison said scores 6 % apart were distinguishable (the expert's ±6 %) while the runs' own
    intervals were ±15-20 % and overlapped; with --runs 1 its table of means read as a ranking of optimizers."""
    from mapperopt.optimizer.compare import under_table

    runs = [RunOutcome(name, 1, 0, [b := record(2, x, x)], b, x, Path(f"{name}-1"), reference=1.0)
            for name, x in (("guided", 1.09), ("optuna", 1.08), ("random", 0.92))]
    summary = summarize(runs, expert=1.0)
    summary.update(reference="expert", final_rounds=5,
                   reference_noise={"half_width": 0.06, "spread": 0.17, "rounds": 5, "groups": 1,
                                    "between_groups": 0.0},
                   score_intervals={"guided-1": [1.09, 0.87, 1.24], "optuna-1": [1.08, 0.77, 1.17],
                                    "random-1": [0.92, 0.77, 1.12]})
    lines = under_table(summary)
    said = next(line for line in lines if line.startswith("Noise:"))
    assert "±6 %" in said and "intervals up to ±19 % (random-1's, above)" in said, said
    assert "differ by less than about 19 % of a score are not distinguishable" in said, said
    assert "nor are runs whose score intervals overlap" in said, said
    assert ("One run per optimizer: each row is a single tuning run (one seed), so this table compares single runs, "
            "not the optimizers; that takes several runs each (--runs).") in lines, lines
    # the reference the noisiest: its own figure is the threshold, as before
    quiet = {**summary, "score_intervals": {"guided-1": [1.09, 1.05, 1.13]}}
    said = next(line for line in under_table(quiet) if line.startswith("Noise:"))
    assert "less than about 6 % of a score" in said, said
    several = summarize([*runs, replace(runs[0], repeat=2, folder=Path("guided-2"))], expert=1.0)
    lines = under_table({**summary, **several})
    assert not any(line.startswith("One run per optimizer") for line in lines), lines
    assert ("One run only of optuna, random: their rows are a single tuning run's score (one seed), not the "
            "optimizer's.") in lines, lines


@pytest.mark.parametrize("low,high,said", [
    (1, 1, "With one execution per evaluation there is no interval: a candidate whose figure is higher than the "
           "best's becomes the run's best outright (nothing is re-measured)."),
    (1, 3, "where both have a single execution, the higher figure decides alone (one execution has no interval)"),
    (3, 7, "A candidate becomes a run's best only when its figure is higher than the best's beyond the noise")])
def test_the_header_says_the_rule_that_decided_the_best_at_these_settings(low, high, said):
    """With --repeats 1 --max-repeats 1 the estimates alone decide (one execution has no interval), yet the header
    said a candidate became the best only beyond the noise or after a joint re-measurement."""
    from mapperopt.optimizer.compare import describe

    header = " ".join(describe({"settings": {"executions": low, "max_executions": high}, "optimizers": {}}))
    assert said in header, header
    if high == 1:
        assert "beyond the noise" not in header and "re-measured together" not in header, header


def test_curves_with_the_same_values_stay_distinguishable():
    """compare.png: opentuner's curve lay exactly under optuna's (the same values), so the legend listed four curves
    and three were visible. Each optimizer's curve has its own line style and marker, so one drawn over another
    with the same values still shows both."""
    runs = [RunOutcome(name, 1, 0, [record(1, 0.06, 0.06), r := record(2, 0.06, 0.06)], r, 0.06, Path(f"{name}-1"))
            for name in ("guided", "opentuner", "optuna", "random")]
    fig = compare_figure(summarize(runs, expert=1.0))
    curves = [line for line in fig.axes[0].get_lines() if "(mean of" in str(line.get_label())]
    assert len(curves) == 4, [line.get_label() for line in fig.axes[0].get_lines()]
    assert len({(line.get_linestyle(), line.get_marker()) for line in curves}) == 4
