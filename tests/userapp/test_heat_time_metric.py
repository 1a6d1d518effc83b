"""A new user's heat stencil (tests/app/heat.cc), whose result line reports a time in ms (lower is better) and its own
check in a MAPPEROPT_RESULT line: what `run`, `tune` and `compare` print of it."""

from __future__ import annotations

import json

from mapperopt.cli import main

METRIC = ["--metric", r"time: (\S+) ms", "--unit", "ms"]
ONCE = ["--repeats", "1", "--max-repeats", "1"]


def flat(text: str) -> str:
    return " ".join(text.split())


def printed_check(stdout: str) -> tuple[int, str]:
    """The number of the MAPPEROPT_RESULT line of `stdout` (from 1) and its "check" object as heat printed it (its
    line's last field)."""
    (number, line), = [(n, x) for n, x in enumerate(stdout.split("\n"), 1) if x.startswith("MAPPEROPT_RESULT ")]
    return number, line[line.index('"check": ') + len('"check": '):-1]


def test_compare_gives_a_time_metrics_reference_as_a_time(heat_exe, tmp_path, offline_optimizer, capsys):
    """compare gave the reference of a time metric as a throughput, "its best program's throughput / the default
    mapper's (0.0006885 1/ms)" and "measured 0.0006885 1/ms in the final measurement, 0.68x its 0.001011 1/ms before
    tuning", where `run` and `tune` print "1452 ms": it gives the times as they do, the score still a ratio where
    higher is better, said once."""
    from mapperopt.optimizer.compare import compare_figure, format_table

    runs = tmp_path / "runs"
    assert main(["compare", "--app", f"{heat_exe} -steps 20", *METRIC, "--optimizers", "guided", "--runs", "1",
                 "--iters", "2", *ONCE, "--final-rounds", "1", "--runs-dir", str(runs)]) == 0
    out = flat(capsys.readouterr().out)
    (folder,) = runs.glob("heat/compare-*")
    summary = json.loads((folder / "summary.json").read_text())
    reference = summary["reference_throughput"]
    assert summary["unit"] == "1/ms", summary["unit"]
    said = ("Score of a run (higher is better): the default mapper's time / its best program's time, both measured "
            f"together at the end in 1 interleaved round, where the default mapper measured {1 / reference:.4g} ms "
            f"(throughput {reference:.4g} 1/ms); 0 when nothing worked or the best failed there.")
    for text in (out, flat((folder / "table.md").read_text())):
        assert said in text, text
        assert "throughput /" not in text and f"({reference:.4g} 1/ms)" not in text, text
    assert out.count("higher is better") == 1, out
    assert compare_figure(summary).axes[0].get_ylabel() == "default mapper's time / time"
    # The reference took half the time before tuning (its measured throughput, twice the final one): the line
    # under the table gives both times, and how many times longer the final one took.
    summary["reference_first_throughput"] = 2 * reference
    first = 2 * reference
    line = flat(format_table(summary))
    assert (f"The default mapper took {1 / reference:.4g} ms (throughput {reference:.4g} 1/ms) in the final "
            f"measurement, 2.00x the {1 / first:.4g} ms (throughput {first:.4g} 1/ms) it took before tuning, which "
            "the curves divide by") in line, line


def test_a_failed_own_check_is_quoted_as_the_program_printed_it(heat_exe, tmp_path, capsys):
    """heat -leak prints `MAPPEROPT_RESULT {"verified": false, "check": {"total": 2995.851771, "expected":
    2997.000000}}`; the reason quoted it re-serialised, `{"expected": 2997.0, "total": 2995.851771}` (keys sorted,
    numbers reformatted). It quotes the check as printed, naming its line of the standard output, and so do
    AutoGuide's explanation and tune's hint."""
    out_dir = tmp_path / "run"
    assert main(["run", "--app", f"{heat_exe} -leak", "--mapper", "default", *METRIC, *ONCE,
                 "--out", str(out_dir)]) == 1
    result = json.loads((out_dir / "result.json").read_text())
    number, check = printed_check((out_dir / result["attempts"][-1]["stdout"]).read_text())
    assert check.startswith('{"total": ') and ".000000" in check, check  # the premise: not as json.dumps writes it
    assert result["reason"] == (f"the correctness check failed (exit status 0; its MAPPEROPT_RESULT line is line "
                                f"{number} of the standard output): {check}"), result["reason"]
    feedback = json.loads((out_dir / "feedback.json").read_text())
    assert f"It reported: {check}." in feedback["explanation"], feedback
    assert main(["tune", "--app", f"{heat_exe} -leak", *METRIC, "--iters", "1", *ONCE, "--final-rounds", "1",
                 "--runs-dir", str(tmp_path / "runs")]) == 1
    err = flat(capsys.readouterr().err)
    assert (f'hint: its own check (its MAPPEROPT_RESULT line says "verified": false) reported {check}: fix the '
            "program or its arguments") in err, err


def test_run_with_the_default_mapper_says_so_whether_the_check_fails_or_not(heat_exe, tmp_path, capsys, monkeypatch):
    """`run --mapper default` titled a program whose own check failed "heat with its own mapper or Legion's default
    (not discovered yet; ...)" and one that passed "heat with Legion's default mapper": it runs Legion's default
    mapper unless the program registers its own, which a failed run has not discovered; the title says both."""
    from mapperopt.benchmarks import userapp

    monkeypatch.setenv("COLUMNS", "400")  # the title on one line
    # discoveries cached in the test's own folder: none of an earlier test's
    cached = userapp.discovery_path
    (tmp_path / "discovered").mkdir()
    monkeypatch.setattr(userapp, "discovery_path", lambda app, cmd: tmp_path / "discovered" / cached(app, cmd).name)
    assert main(["run", "--app", f"{heat_exe} -leak", "--mapper", "default", *METRIC, *ONCE,
                 "--out", str(tmp_path / "failed")]) == 1
    assert ("heat with Legion's default mapper, or the program's own if it registers one (which one is not known: "
            "the program has not been discovered; size ci") in capsys.readouterr().out
    assert main(["run", "--app", str(heat_exe), "--mapper", "default", *METRIC, *ONCE,
                 "--out", str(tmp_path / "ok")]) == 0
    assert "heat with Legion's default mapper (size ci" in capsys.readouterr().out


def test_tunes_verdict_names_its_one_reference_in_the_singular(heat_exe, tmp_path, offline_optimizer, capsys):
    """With Legion's default mapper the only reference, the verdict said "no mapper beat the references". From the
    default start, the best is the default mapping itself, which beats nothing."""
    assert main(["tune", "--app", str(heat_exe), *METRIC, "--start", "default", "--iters", "1", *ONCE,
                 "--final-rounds", "3", "--runs-dir", str(tmp_path / "runs")]) == 0
    out = flat(capsys.readouterr().out)
    assert "Verdict: no mapper beat the reference; the best (iter-1) measured " in out, out


def test_compare_without_a_final_measurement_gives_a_time_metrics_reference_as_a_time(heat_exe, tmp_path,
                                                                                      offline_optimizer):
    """A comparison of tuning runs alone (benchmarks/evaluate.py's tuning units) said "Score of a run: best program's
    throughput as its run measured it / the default mapper's first measurement": the Score sentence gives the time
    as the final one does; summary.json keeps its `normalization` text as written (evaluate copies it)."""
    from mapperopt.benchmarks.userapp import Metric, app_from_command
    from mapperopt.optimizer.compare import describe, run_compare

    app = app_from_command(f"{heat_exe} -steps 20", metric=Metric(r"time: (\S+) ms", "ms"))
    opts = {"optimizers": ["guided"], "iters": 1, "repeats": 1, "size": "ci", "cpus": None, "gpus": None, "seed": 0,
            "start": "default", "memory": {}, "executions": 1, "max_executions": 1, "min_time_s": None,
            "timeout_s": None, "final_rounds": 1, "runs_dir": tmp_path / "runs", "new": False, "app_args": (),
            "final": False}
    summary = run_compare(app, opts, say=lambda text: None)
    reference = summary["reference_throughput"]
    text = flat(" ".join(describe(summary)))
    assert ("Score of a run (higher is better): the default mapper's time / its best program's time, the best's as "
            f"its run measured it, where the default mapper measured {1 / reference:.4g} ms (throughput "
            f"{reference:.4g} 1/ms) before tuning (no final measurement yet); 0 when nothing worked.") in text, text
    assert "throughput /" not in text, text
    assert summary["normalization"] == ("best program's throughput as its run measured it / the default mapper's "
                                        "first measurement (no final measurement yet); failures count 0")
