"""What `mapperopt compare` measured is never lost nor replaced by other figures: `--report-only` with options that
differ from the measured comparison refuses and writes nothing; a new --final-rounds keeps the earlier final
measurement under `replaced`; a comparison's folders are not taken for `tune`'s; an interrupted `--new` comparison
says how to resume it. One small real comparison on Circuit (ci size) serves them all."""

from __future__ import annotations

import json
from pathlib import Path

from mapperopt.cli import main
from mapperopt.optimizer import compare as compare_module
from mapperopt.optimizer.store import TuneStore

# One execution per mapper of at least 0.05 s, two final rounds: the protocol, cheaply.
FAST = ["--size", "ci", "--repeats", "1", "--max-repeats", "1", "--min-time", "0.05"]


def compare_args(runs: Path, *extra: str) -> list[str]:
    return ["compare", "circuit", "--optimizers", "random", "--iters", "2", "--runs", "1", *FAST,
            "--runs-dir", str(runs), *extra]


def snapshot(folder: Path) -> dict:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file() and p.name not in ("tune.lock", "owner.json")}


def test_what_a_comparison_measured_is_kept(tmp_path, capsys):
    runs = tmp_path / "runs"
    assert main(compare_args(runs, "--final-rounds", "2")) == 0
    [folder] = (runs / "circuit").iterdir()
    measured = json.loads((folder / "final.json").read_text())
    [group] = measured["groups"]
    capsys.readouterr()

    # --report-only with another --final-rounds (the default, 5): refused, nothing written (it used to report the
    # tuning runs' own figures over the measured ones).
    before = snapshot(folder)
    assert main(compare_args(runs, "--report-only")) == 1
    captured = capsys.readouterr()
    err = " ".join(captured.err.split())
    assert "--final-rounds 5" in err and "2 rounds" in err and "give --final-rounds 2" in err, err
    assert snapshot(folder) == before
    # The same options report the measurement, without saying it resumes anything
    assert main(compare_args(runs, "--final-rounds", "2", "--report-only")) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Resuming" not in out and f"Reporting on {folder}" in out, out
    assert json.loads((folder / "summary.json").read_text())["final_rounds"] == 2

    # Another --final-rounds measures again; the earlier measurement stays, under `replaced`, with its rounds.
    assert main(compare_args(runs, "--final-rounds", "3")) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "the earlier one, in 2, is kept in final.json under `replaced`" in out, out
    again = json.loads((folder / "final.json").read_text())
    assert again["rounds"] == 3 and [g["folder"] for g in again["groups"]] == ["final-2"]
    assert again["replaced"] == [{**group, "rounds": 2}]
    assert (folder / group["folder"]).is_dir()
    capsys.readouterr()

    # `tune --resume` of the comparison's run, or of the comparison itself: refused, naming `mapperopt compare`.
    run = folder / "random-1"
    journal = (run / "state.jsonl").read_bytes()
    assert main(["tune", "--resume", str(run), "--iters", "3"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"{run} is the tuning run random-1 of the comparison {folder}" in err, err
    assert f"extend it with `mapperopt compare --resume {folder} --iters 3`" in err, err
    assert (run / "state.jsonl").read_bytes() == journal
    assert main(["tune", "--resume", str(folder)]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"{folder} is a comparison" in err and "earlier mapperopt" not in err, err
    assert f"extend it with `mapperopt compare --resume {folder}` and a larger --iters" in err, err
    settings = folder / "settings.json"  # a comparison of a user's program: its `app` is an object, not a name
    kept = settings.read_text()
    settings.write_text(json.dumps({**json.loads(kept), "app": {"exe": "/bin/true"}}))
    assert main(["tune", "--resume", str(folder)]) == 1
    assert f"{folder} is a comparison" in " ".join(capsys.readouterr().err.split())
    settings.write_text(kept)

    # A comparison in use by another process: the hint speaks of comparisons, not tuning folders.
    holder = TuneStore(folder, {}, [])
    holder.lock()
    try:
        assert main(compare_args(runs, "--final-rounds", "3", "--report-only")) == 1
    finally:
        holder.unlock()
    err = " ".join(capsys.readouterr().err.split())
    assert "`--new` starts a separate comparison" in err and "tuning folder" not in err, err

    # A damaged expert.json stopped the comparison ("restore it from a copy"): it is made again, with a note, from
    # what it is taken from, the reference's run folder.
    reference = folder / "expert.json"
    kept = json.loads(reference.read_text())
    reference.write_text('{"throughput": 1.')
    assert main(compare_args(runs, "--final-rounds", "3", "--report-only")) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"Note: {reference} is damaged: not valid JSON (" in out, out
    assert f"made again from {folder / 'baseline-expert' / 'result.json'}" in out, out
    assert json.loads(reference.read_text()) == kept
    # ...and so is a lost one, rather than measured again over that run folder: by --report-only too (it said "no
    # measurement yet" of the comparison).
    reference.unlink()
    assert main(compare_args(runs, "--final-rounds", "3", "--report-only")) == 0
    said = " ".join("".join(capsys.readouterr()).split())
    assert "no measurement yet" not in said and "Measuring the expert mapper" not in said, said
    assert json.loads(reference.read_text()) == kept
    reference.unlink()
    measured = snapshot(folder / "baseline-expert")
    assert main(compare_args(runs, "--final-rounds", "3")) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Measuring the expert mapper" not in out, out
    assert json.loads(reference.read_text()) == kept and snapshot(folder / "baseline-expert") == measured
    # A folder in its place: named, without the note that it is made again, which it cannot be over a folder.
    reference.unlink()
    reference.mkdir()
    assert main(compare_args(runs, "--final-rounds", "3", "--report-only")) == 1
    said = " ".join("".join(capsys.readouterr()).split())
    assert f"error: {reference} is a folder, where mapperopt keeps a file" in said, said
    assert "made again" not in said, said
    reference.rmdir()
    reference.write_text(json.dumps(kept))

    # A run whose journal's last line is torn: --report-only left it out as "not tuned" and said nothing of the
    # line. The line is skipped as `tune` skips it, and said.
    journal = run / "state.jsonl"
    whole = journal.read_bytes()
    journal.write_bytes(whole[:-200])
    assert main(compare_args(runs, "--final-rounds", "3", "--report-only")) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "Left out, not tuned to 2 iterations yet: random-1." in out, out
    assert f"Note: {journal} line 2 is damaged (not valid JSON: " in out, out
    assert (f"skipped, as an iteration that never finished; the journal's next record moves it to {journal}.damaged "
            "(the command without --report-only measures it again).") in out, out

    # An emptied journal: the comparison is not tuned again over the run's iterations.
    journal.write_bytes(b"")
    before = snapshot(folder)
    assert main(compare_args(runs, "--final-rounds", "3")) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"{journal} is empty, but iter-001, iter-002" in err, err
    assert snapshot(folder) == before


def test_a_duplicated_optimizer_is_refused(tmp_path, capsys):
    args = compare_args(tmp_path / "runs")
    args[args.index("--optimizers") + 1] = "random,optuna,random"  # in place: an option is given once
    assert main(args) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--optimizers names random twice" in err, err
    assert not (tmp_path / "runs").exists()  # refused before anything was measured


def test_an_interrupted_new_comparison_says_how_to_resume_it(tmp_path, monkeypatch, capsys):
    runs = tmp_path / "runs"
    args = compare_args(runs, "--final-rounds", "1")
    args[args.index("--iters") + 1] = "1"  # in place: an option is given once
    (runs / "circuit").mkdir(parents=True)
    shown = compare_module.progress_line

    def interrupt(*a, **kw):  # Ctrl-C after the first iteration
        raise KeyboardInterrupt

    monkeypatch.setattr(compare_module, "progress_line", interrupt)
    assert main([*args, "--new"]) == 130
    [folder] = (runs / "circuit").iterdir()
    out = " ".join(capsys.readouterr().out.split())
    assert f"Run the same command without --new to resume {folder}" in out, out
    monkeypatch.setattr(compare_module, "progress_line", shown)
    assert main(args) == 0  # that command resumes it
    out = " ".join(capsys.readouterr().out.split())
    assert f"Resuming {folder}." in out and [folder] == list((runs / "circuit").iterdir()), out


def test_final_json_the_disk_has_no_room_for_is_named_and_leaves_no_partial_file(tmp_path, monkeypatch):
    import errno
    import os

    import pytest

    (tmp_path / "final.json").write_text('{"rounds": 1}\n')
    real_write_text = Path.write_text

    def full(self, text, *args, **kwargs):  # half written, then ENOSPC naming no file, as a full disk does
        real_write_text(self, text[: len(text) // 2], *args, **kwargs)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Path, "write_text", full)
    with pytest.raises(OSError) as raised:
        compare_module._write_finals(tmp_path, {"rounds": 2})
    monkeypatch.undo()
    assert raised.value.filename == str(tmp_path / "final.json")
    assert [p.name for p in tmp_path.iterdir()] == ["final.json"]
    assert json.loads((tmp_path / "final.json").read_text()) == {"rounds": 1}


def test_a_run_without_its_settings_file_is_not_made_anew_over_its_iterations(tmp_path):
    """A comparison's run whose settings.json is gone was made anew: settings written, no record read, its
    iteration 1 run again over iter-001/ and appended after the journal's own lines. Its iterations are refused
    instead, and nothing is changed."""
    import pytest

    from mapperopt.errors import MapperoptError
    from mapperopt.optimizer.base import IterationRecord

    root = tmp_path / "random-1"
    store = compare_module._new_store(root, "circuit", {"iters": 2})
    (store.iter_dir(1) / "result.json").write_text("{}")
    store.append(IterationRecord(iter=1, dsl="Task * CPU;\n", key="k1", status="ok", stage=None,
                                 category="performance", throughput=2.0, unit="GFLOPS", best_throughput=2.0))
    store.unlock()
    (root / "settings.json").unlink()
    before = snapshot(root)
    with pytest.raises(MapperoptError) as raised:
        compare_module._new_store(root, "circuit", {"iters": 2})
    text = raised.value.message + " " + raised.value.hint
    assert f"{root} has no settings.json, but state.jsonl, iter-001 are there" in text, text
    assert "restore settings.json from a copy" in text, text
    assert snapshot(root) == before


def test_an_interrupted_comparison_names_its_folder_and_the_command_that_continues_it(tmp_path, monkeypatch, capsys):
    """As `tune` says it: the folder that keeps what was done, and a command to paste that continues it (`--resume`),
    which does."""
    import shlex

    runs = tmp_path / "runs"
    args = compare_args(runs, "--final-rounds", "1")
    shown = compare_module.progress_line

    def interrupt(*a, **kw):  # Ctrl-C after the first iteration
        raise KeyboardInterrupt

    monkeypatch.setattr(compare_module, "progress_line", interrupt)
    assert main(args) == 130
    [folder] = (runs / "circuit").iterdir()
    out = " ".join(capsys.readouterr().out.split())
    assert f"What it did is kept in {folder}" in out and "The same command continues; or: " in out, out
    command = out.split("The same command continues; or: ")[1].split(" (")[0].rstrip(".")
    assert command == (f"mapperopt compare --resume {folder} --optimizers random --runs 1 --iters 2 "
                       "--final-rounds 1"), out
    monkeypatch.setattr(compare_module, "progress_line", shown)
    assert main(shlex.split(command)[1:]) == 0  # that command continues it
    out = " ".join(capsys.readouterr().out.split())
    assert "iter 2/2" in out and [folder] == list((runs / "circuit").iterdir()), out
    assert (folder / "table.md").exists()
