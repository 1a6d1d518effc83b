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


def test_a_duplicated_optimizer_is_refused(tmp_path, capsys):
    assert main(compare_args(tmp_path / "runs", "--optimizers", "random,optuna,random")) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "--optimizers names random twice" in err, err
    assert not (tmp_path / "runs").exists()  # refused before anything was measured


def test_an_interrupted_new_comparison_says_how_to_resume_it(tmp_path, monkeypatch, capsys):
    runs = tmp_path / "runs"
    args = compare_args(runs, "--iters", "1", "--final-rounds", "1")
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
