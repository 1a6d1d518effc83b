"""Pennant checked by energy conservation only (its `small` and `gpu` sizes; here `-check energy` at `ci`): `run` and
`compare` say that their results rest on that check alone, and tune's summary said nothing. One small real tuning
run."""

from __future__ import annotations

import json

from mapperopt.cli import main


def test_tune_says_its_results_were_checked_by_energy_conservation_only(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "300")
    runs = tmp_path / "runs"
    assert main(["tune", "pennant", "--size", "ci", "--iters", "1", "--start", "default", "--repeats", "1",
                 "--max-repeats", "1", "--min-time", "0.05", "--final-rounds", "1", "--baseline", "none",
                 "--runs-dir", str(runs), "--", "-check", "energy"]) == 0, capsys.readouterr().err
    out = " ".join(capsys.readouterr().out.split())
    [folder] = (runs / "pennant").iterdir()
    kinds = json.loads((folder / "summary.json").read_text())["check_kinds"]
    assert kinds.get("energy"), kinds
    how = ("checked by energy conservation only: the final state is not compared, so a mapping wrong from the start "
           "or wrong in a way that conserves energy passes.")
    said = (f"Every result was {how}" if set(kinds) == {"energy"} else
            f"{kinds['energy']} of {sum(kinds.values())} checked executions were {how}")
    assert said in out, (kinds, out)
