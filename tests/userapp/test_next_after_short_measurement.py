"""A tune of a program whose executions measure far under the protocol's 0.5 s (tests/app/timed.cc: a few ms) warned
"Short measurement" mid-screen, but its last line, Next, said only which mapper to keep and how to search further:
the advice that decides whether anything can be concluded (give each execution more work) was buried. Next now
says it first, in the options the program takes, and one too noisy to conclude says so too."""

from __future__ import annotations

import copy
import json

from userapp_support import quick_tune_args

from mapperopt.benchmarks import protocol
from mapperopt.cli import main
from mapperopt.optimizer import commands

TIME = ["--metric", "elapsed: ([0-9.]+) ms", "--unit", "ms"]


def test_next_says_first_that_short_executions_cannot_conclude(timed_exe, tmp_path, capsys, monkeypatch,
                                                                offline_optimizer):
    monkeypatch.delenv("COLUMNS", raising=False)
    runs = tmp_path / "runs"
    assert main([*quick_tune_args(f"{timed_exe} -reps 3", runs, iters=1, final_rounds=3), *TIME]) == 0
    out = capsys.readouterr().out
    flat = " ".join(out.split())
    assert "Short measurement: " in flat, out
    last = " ".join(out.strip().splitlines()[-1].split())
    assert last.startswith("Next: the final comparison's measurements were too short") and (
        "to conclude (Short measurement" in last), last
    # the options that give a user's program more work: its own arguments (it is never calibrated)
    assert f"give each execution more work, with {protocol.USER_WORK}, and tune again" in last, last
    # noisy too on a loaded machine: said with it
    assert ("too short and too noisy" in last) == ("Noisy measurement: " in flat), out
    # then what to keep, as before: the Verdict's answer, not another one
    assert "; keep Legion's default mapper (run without --mapper): tuning found nothing faster." in last, last
    assert "Verdict: " in flat, out
    (root,) = runs.glob("*/tune-*")
    summary = json.loads((root / "summary.json").read_text())

    def step(summary: dict, titles: list[str], **kw) -> str:
        said = commands.measure_more(titles, calibrated=False, larger="", min_time_s=0)
        return commands.next_step(summary, default_start=True, unsure=said, **kw) or ""

    # too noisy (an interval far wider than the target) as well as short: both said, and how to narrow them
    noisy = copy.deepcopy(summary)
    best = noisy["measured"][noisy["best"]]["estimate"]
    best["values"] = [v * f for v, f in zip(best["values"], (0.5, 1.0, 1.6))]
    best.update(protocol.estimate(best["values"]).to_json())
    text = " ".join(step(noisy, ["Noisy measurement", "Short measurement"]).split())
    assert text.startswith("Next: the final comparison's measurements were too short and too noisy to conclude "
                           "(Short measurement and Noisy measurement above): give each execution more work"), text
    assert "(more --final-rounds or a quieter machine also narrows the intervals)" in text, text
    only_noisy = " ".join(step(noisy, ["Noisy measurement"]).split())
    assert only_noisy.startswith("Next: the final comparison's measurements were too noisy to conclude (Noisy "
                                 "measurement above): tune again with more --final-rounds, "), only_noisy
    # nothing of the kind where nothing was warned of: the line starts with what to keep, as before
    assert step(summary, []).startswith("Next: keep Legion's default mapper"), step(summary, [])
    # a benchmark, which calibration lengthens: its larger sizes and --min-time
    said = commands.measure_more(["Short measurement"], calibrated=True, larger="a larger --size (medium)",
                                 min_time_s=0.5)
    assert "with a larger --size (medium) or --min-time 1, and tune again" in said, said
