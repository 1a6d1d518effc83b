"""A finished comparison's report files (summary.json, summary.csv, table.md, runs.csv) are never replaced by a
partial or provisional report, whichever of them is lost or damaged: `compare --resume DIR --report-only` learns from
every one of them (and final.json, the final-N folders) what the finished report had. A comparison folder that lost
its settings.json is named as such. One small real comparison on Circuit (ci size), copied for each case."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mapperopt.cli import main

REPORTS = ("summary.json", "summary.csv", "table.md", "runs.csv")


@pytest.fixture(scope="module")
def comparison(tmp_path_factory) -> Path:
    runs = tmp_path_factory.mktemp("made") / "runs"
    assert main(["compare", "circuit", "--size", "ci", "--optimizers", "random", "--iters", "2", "--runs", "2",
                 "--repeats", "1", "--max-repeats", "1", "--min-time", "0.05", "--final-rounds", "2",
                 "--runs-dir", str(runs)]) == 0
    [folder] = (runs / "circuit").iterdir()
    return folder


def copied(comparison: Path, tmp_path: Path) -> Path:
    folder = tmp_path / comparison.name
    shutil.copytree(comparison, folder)
    return folder


def reports(folder: Path) -> dict:
    """The report files' contents and modification times (a write of the same bytes is a write too)."""
    return {name: ((folder / name).read_bytes(), (folder / name).stat().st_mtime_ns) for name in REPORTS
            if (folder / name).is_file()}


def tear(folder: Path, run: str) -> None:
    """Cuts the last line of the run's journal short, as a call killed while appending it leaves it."""
    journal = folder / run / "state.jsonl"
    journal.write_bytes(journal.read_bytes()[:-40])


@pytest.mark.parametrize("summary", [None, "{", json.dumps({"runs": 5}), "and runs.csv lost"])
def test_a_torn_run_leaves_the_finished_report_whatever_became_of_summary_json(comparison, tmp_path, capsys,
                                                                                 summary):
    """The report files are kept when the run left out is named by any of them, not only by summary.json: deleted,
    torn or of a wrong shape, it let the other three be replaced by a report without the run. With runs.csv lost
    too, final.json's group names it."""
    folder = copied(comparison, tmp_path)
    tear(folder, "random-2")
    if summary in (None, "and runs.csv lost"):
        (folder / "summary.json").unlink()
        if summary:
            (folder / "runs.csv").unlink()
    else:
        (folder / "summary.json").write_text(summary)
    before = reports(folder)
    capsys.readouterr()

    assert main(["compare", "--resume", str(folder), "--report-only"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Left out, not tuned to 2 iterations yet: random-2." in out, out
    assert "Not written: the comparison's report files (summary.json, ...) include random-2" in out, out
    assert reports(folder) == before


@pytest.mark.parametrize("torn", [False, True])
def test_a_folder_in_place_of_a_report_file_is_named_before_any_is_written(comparison, tmp_path, capsys, torn):
    folder = copied(comparison, tmp_path)
    if torn:
        tear(folder, "random-2")
    (folder / "summary.json").unlink()
    (folder / "summary.json").mkdir()
    before = reports(folder)
    capsys.readouterr()

    assert main(["compare", "--resume", str(folder), "--report-only"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"error: {folder / 'summary.json'} is a folder, where mapperopt keeps a file" in err, err
    assert reports(folder) == before  # runs.csv and summary.csv were written before the error


def test_a_lost_final_json_leaves_the_final_scores_of_the_report(comparison, tmp_path, capsys):
    """Without final.json the report is the tuning runs' own figures; those never replace the final measurement's
    scores of the report files (they did, silently, with final-1/ there)."""
    folder = copied(comparison, tmp_path)
    (folder / "final.json").unlink()
    before = reports(folder)
    capsys.readouterr()

    assert main(["compare", "--resume", str(folder), "--report-only"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "No final measurement yet" in out, out
    assert (f"Not written: {folder / 'final.json'} is missing, but final-1 is there: the comparison's report files "
            "(summary.json, ...) hold its final measurement's scores") in out, out
    assert reports(folder) == before
    # ...nor with its final-N folders lost too: summary.json says the report had final scores
    shutil.rmtree(folder / "final-1")
    assert main(["compare", "--resume", str(folder), "--report-only"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (f"Not written: {folder / 'final.json'} is missing, but the comparison's report files (summary.json, ...) "
            "hold its final measurement's scores") in out, out
    assert reports(folder) == before


@pytest.mark.parametrize("args", [["--report-only"], []])
def test_a_comparison_without_its_settings_file_is_named_with_what_it_holds(comparison, tmp_path, capsys, args):
    folder = copied(comparison, tmp_path)
    (folder / "settings.json").unlink()
    before = {p.relative_to(folder) for p in folder.rglob("*")}
    capsys.readouterr()

    assert main(["compare", "--resume", str(folder), *args]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "not a comparison folder" not in err, err
    assert (f"error: {folder} has no settings.json, but expert.json, final.json, summary.json, baseline-expert, "
            "final-1, random-1, random-2 are there: the comparison cannot be continued nor reported on without it; "
            "nothing was changed") in err, err
    assert ("hint: restore settings.json from a copy; or leave this folder as it is and start a new comparison: "
            "the command that made it, with --new") in err, err
    assert {p.relative_to(folder) for p in folder.rglob("*")} == before
