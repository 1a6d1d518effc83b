"""A user's program (tests/app/timed.cc) that prints a metric of nan or inf."""

from __future__ import annotations

import json

import pytest

from mapperopt.cli import main


@pytest.mark.parametrize(("metric", "options", "value"), [
    ("elapsed: (\\S+) ms", ["--unit", "ms"], "nan"),
    ("bandwidth: (\\S+) MB/s", ["--unit", "MB/s", "--higher-is-better"], "inf")])
def test_a_metric_of_nan_or_inf_fails_the_run(metric, options, value, timed_exe, tmp_path, capsys):
    """It was a successful measurement (throughput 0 or nan, which every comparison of a tuner gets wrong)."""
    out_dir = tmp_path / "run"
    assert main(["run", "--app", f"{timed_exe} -reps 0", "--metric", metric, *options, "--repeats", "1",
                 "--out", str(out_dir)]) == 1
    result = json.loads((out_dir / "result.json").read_text())
    assert result["stage"] == "run" and len(result["attempts"]) == 1, result
    assert f"the metric /{metric}/ matched " in result["reason"] and value in result["reason"], result["reason"]
    assert "not a finite number" in result["reason"], result["reason"]

