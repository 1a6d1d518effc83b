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
