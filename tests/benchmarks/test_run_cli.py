"""`mapperopt run` measures with tune's protocol by default (calibrated executions of at least
`protocol.MIN_TIME_S`, `MIN_REPEATS` to `MAX_REPEATS` of them, the trimmed mean and its interval); `--once` gives
one raw execution at the size's own iteration count (real Circuit runs)."""

from __future__ import annotations

import json

from mapperopt.benchmarks import load_config, protocol
from mapperopt.benchmarks.commands import run
from mapperopt.cli import main


def run_json(capsys, *args: str) -> dict:
    capsys.readouterr()
    assert main(["run", "circuit", "--cpus", "2", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_run_measures_with_the_protocol_by_default(tmp_path, capsys):
    defaults = {p.name: p.default for p in run.params}
    assert (defaults["repeats"], defaults["max_repeats"]) == (protocol.MIN_REPEATS, protocol.MAX_REPEATS)
    # Capped at the minimum so that the test stays short; the repeats' default is checked above.
    res = run_json(capsys, "--max-repeats", str(protocol.MIN_REPEATS), "--out", str(tmp_path / "run"))
    s = res["settings"]
    assert s["min_time_s"] == max(load_config("circuit").size("ci").min_time_s, protocol.MIN_TIME_S)
    assert s["repeats"] == protocol.MIN_REPEATS
    # The ci size's 3 loops measure far less than MIN_TIME_S: calibration grew them until an execution met it.
    assert s["min_time_met"] and s["calibration_runs"] >= 1 and s["iterations"] > 3
    assert s["measured_runs"] == protocol.MIN_REPEATS
    assert len(res["attempts"]) == s["calibration_runs"] + s["measured_runs"] + s["retried"]
    values = [a["result"]["throughput"] for a in res["attempts"][-s["measured_runs"]:]]
    assert res["trimmed_mean"] == protocol.estimate(values).value


def test_run_once_is_one_raw_execution(tmp_path, capsys):
    res = run_json(capsys, "--once", "--out", str(tmp_path / "run"))
    s = res["settings"]
    assert (s["repeats"], s["max_repeats"], s["min_time_s"]) == (1, 1, 0.0)
    assert s["calibration_runs"] == 0 and s["measured_runs"] == 1 and len(res["attempts"]) == 1
    assert s["iterations"] == 3  # the ci size's own `-l 3`
