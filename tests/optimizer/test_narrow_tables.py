"""tune's final table at 80 columns (COLUMNS=80, as output that is not a terminal gets): each mapper one row, and a
reason every row shares said once under the table. It repeated "1 execution: no spread" and "(one execution each: no
interval)" on every row, each wrapped over three lines, and its header over three more. A real tune of Circuit."""

from __future__ import annotations

import json

from mapperopt.cli import main


def test_tunes_final_table_fits_80_columns_and_says_a_shared_reason_once(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    runs = tmp_path / "runs"
    assert main(["tune", "circuit", "--size", "ci", "--iters", "2", "--start", "default", "--repeats", "1",
                 "--max-repeats", "1", "--min-time", "0.05", "--final-rounds", "1", "--runs-dir", str(runs)]) == 0
    out = capsys.readouterr().out
    [folder] = (runs / "circuit").iterdir()
    measured = json.loads((folder / "summary.json").read_text())["measured"]
    final = out[out.index("Measured together"):]
    table = [line for line in final.splitlines() if line[:1] in "┏┃┡│└"]
    assert table and all(len(line) <= 80 for line in table), final
    rows = [line for line in table if line.startswith("│")]
    assert len(rows) == len(measured), final  # none wrapped onto a second line
    assert not any("execution" in line or "interval" in line for line in rows), final
    assert final.count("Best vs it: one execution each: no interval.") == 1, final
    assert final.count("No interval (-) from fewer than 3 executions; no spread (-) from one.") == 1, final
