"""A tune of a program whose executions measure far under the protocol's 0.5 s (tests/app/timed.cc: a few ms) warned
"Short measurement" mid-screen, but its last line, Next, said only which mapper to keep and how to search further:
the advice that decides whether anything can be concluded (give each execution more work) was buried. Next now
says it first, and one too noisy to conclude says so too; it points to the warning that gives the options, rather
than repeating them (they were said twice)."""

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
    assert last.startswith("Next: the final comparison's measurements were too short"), last
    # the options that give a user's program more work (its own arguments: it is never calibrated), said once: in
    # the warning, which Next points to
    assert flat.count(protocol.USER_WORK) == 1 + ("Noisy measurement: " in flat), out
    assert "to conclude: tune again as Short measurement" in last and protocol.USER_WORK not in last, last
    # noisy too on a loaded machine: said with it
    assert ("too short and too noisy" in last) == ("Noisy measurement: " in flat), out
    # then what to keep, as before: the Verdict's answer, not another one
    assert "; keep Legion's default mapper (run without --mapper): tuning found nothing faster." in last, last
    assert "Verdict: " in flat, out
    (root,) = runs.glob("*/tune-*")
    summary = json.loads((root / "summary.json").read_text())

    def step(summary: dict, titles: list[str], **kw) -> str:
        said = commands.measure_more(titles)
        return commands.next_step(summary, default_start=True, unsure=said, **kw) or ""

    # too noisy (an interval far wider than the target) as well as short: both said, and where they say how
    noisy = copy.deepcopy(summary)
    best = noisy["measured"][noisy["best"]]["estimate"]
    best["values"] = [v * f for v, f in zip(best["values"], (0.5, 1.0, 1.6))]
    best.update(protocol.estimate(best["values"]).to_json())
    text = " ".join(step(noisy, ["Noisy measurement", "Short measurement"]).split())
    assert text.startswith("Next: the final comparison's measurements were too short and too noisy to conclude: "
                           "tune again as Short measurement and Noisy measurement above say; keep "), text
    only_noisy = " ".join(step(noisy, ["Noisy measurement"]).split())
    assert only_noisy.startswith("Next: the final comparison's measurements were too noisy to conclude: tune again "
                                 "as Noisy measurement above says; keep "), only_noisy
    # nothing of the kind where nothing was warned of: the line starts with what to keep, as before
    assert step(summary, []).startswith("Next: keep Legion's default mapper"), step(summary, [])


def test_a_gain_from_short_executions_is_not_recommended(timed_exe, tmp_path, capsys, monkeypatch, offline_optimizer):
    """A pick measured significantly faster than everything else, but by executions the final comparison warned of
    as too short: the Best mapper line gave the command to run it and no Next line followed, while compare's Next
    for the same case says the gain is not established. The real tune's final comparison, with a pick added that
    measured twice the start's throughput, both steadily."""
    monkeypatch.delenv("COLUMNS", raising=False)
    runs = tmp_path / "runs"
    assert main([*quick_tune_args(f"{timed_exe} -reps 3", runs, iters=1, final_rounds=3), *TIME]) == 0
    capsys.readouterr()
    (root,) = runs.glob("*/tune-*")
    summary = json.loads((root / "summary.json").read_text())
    start = summary["start"]
    steady = [summary["measured"][start]["estimate"]["value"] * k for k in (0.99, 1.0, 1.01)]
    summary["measured"][start]["estimate"] = protocol.estimate(steady).to_json()
    pick = copy.deepcopy(summary["measured"][start])
    pick["estimate"] = protocol.estimate([2 * v for v in steady]).to_json()
    summary["measured"]["iter-2"] = pick
    summary["vs"] = {start: protocol.compare([2 * v for v in steady], steady, protocol.MIN_INTERVAL_VALUES).to_json()}
    summary.update(best="iter-2", best_iter=2)
    command = f"mapperopt run --app {timed_exe} --mapper {root / 'best.dsl'}"
    # measured otherwise alike: the command, and nothing to say next
    assert commands.next_step(summary, default_start=True, unsure=commands.measure_more([])) is None
    assert commands.best_mapper_line(summary, root / "best.dsl", default_start=True, command=command).endswith(
        f"printed below; run it with: {command}")
    unsure = commands.measure_more(["Short measurement"])
    step = commands.next_step(summary, default_start=True, unsure=unsure)
    assert step.startswith("Next: the final comparison's measurements were too short to conclude: tune again as "
                           "Short measurement above says; until then best.dsl's gain is not established (it is "
                           "printed above to inspect). "), step
    line = commands.best_mapper_line(summary, root / "best.dsl", default_start=True, command=command, unsure=unsure)
    assert line.endswith(", printed below to inspect") and "run it with" not in line, line
