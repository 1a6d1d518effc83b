"""A program that needs more system memory than Legion's default (tests/app/histogram.cc with 140 M values, 560 MB
in one region; SYSMEM is 512 MiB unless -ll:csize says otherwise): `tune --csize N` and `run --csize N` discover it
with that memory (discovery ran without it and failed, so it could be tuned only with `-- -ll:csize N`), and a
discovery that fails for lack of memory says which option gives it more."""

from __future__ import annotations

import json
import re
import tempfile

from mapperopt.benchmarks.userapp import discovery_command, discovery_path, load_app_file
from mapperopt.cli import main

QUICK = ["--baseline", "none", "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1"]


def test_tune_and_run_discover_with_the_runs_memory_size(tmp_path, monkeypatch, capsys, histogram_exe):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # discovery's kept folder: under the test's own
    (tmp_path / "mapperopt.yaml").write_text(
        f"executable: {histogram_exe}\nsizes:\n  big:\n    args: [-n, '140000000', -p, '2', -reps, '1']\n"
        "    timeout_s: 120\nverify:\n  pattern: 'HIST OK'\n")
    app = load_app_file(tmp_path / "mapperopt.yaml")
    # Discovered by an earlier session (cached by the executable and its arguments): this test discovers it again.
    discovery_path(app, discovery_command(app, "big")).unlink(missing_ok=True)
    tune = ["tune", "--app", "mapperopt.yaml", "--size", "big", *QUICK, "--iters", "1", "--runs-dir", "runs"]
    # Without more memory: discovery fails, and its hint names the option that gives the run more.
    assert main(tune) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "discovering histogram" in err and "R403" in err, err
    assert re.search(r"Raise --csize to \d+ MiB \(Legion's -ll:csize; mapperopt run/tune --csize \d+\)\.", err), err
    assert "Layout" not in err, err  # a mapper's statements: discovery's recording mapper has none
    assert not (tmp_path / "runs").exists()
    # With it: discovered with -ll:csize, then tuned.
    assert main([*tune, "--csize", "1024"]) == 0, capsys.readouterr().err
    (root,) = (tmp_path / "runs").glob("histogram/tune-*")
    assert (root / "iter-001").is_dir()
    assert "-ll:csize 1024" in (root / "iter-001" / "command.txt").read_text()
    # `run` with a DSL mapper discovers first, with its memory too (cached: the memory size is not in the key).
    (tmp_path / "m.dsl").write_text("Task * CPU;\n")
    capsys.readouterr()
    assert main(["run", "--app", "mapperopt.yaml", "--size", "big", "--csize", "1024", "--mapper", "m.dsl",
                 "--once", "--out", "r"]) == 0, capsys.readouterr().err
    assert "discovering" not in capsys.readouterr().err
    # `check` (no memory option) reads the same description: its tasks are the program's at every memory size.
    assert main(["check", "m.dsl", "--app", "mapperopt.yaml", "--size", "big"]) == 0
    assert "discovering" not in capsys.readouterr().err


def test_tune_whose_default_baseline_runs_out_of_memory_says_to_raise_it(tmp_path, monkeypatch, capsys,
                                                                        histogram_exe):
    """Discovered with more memory (cached), then tuned without it: Legion's default mapper, measured as the baseline,
    fails its allocation; the error says which option gives the run more memory, not to fix the program, and its
    check command keeps the run's options."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    (tmp_path / "mapperopt.yaml").write_text(
        f"executable: {histogram_exe}\nsizes:\n  big:\n    args: [-n, '140000000', -p, '2', -reps, '1']\n"
        "    timeout_s: 120\nverify:\n  pattern: 'HIST OK'\n")
    tune = ["tune", "--app", "mapperopt.yaml", "--size", "big", "--repeats", "1", "--max-repeats", "1",
            "--final-rounds", "1", "--iters", "1", "--runs-dir", "runs", "--baseline", "default"]
    app = load_app_file(tmp_path / "mapperopt.yaml")
    if not discovery_path(app, discovery_command(app, "big")).is_file():  # discovered once with the memory it needs
        assert main(["run", "--app", "mapperopt.yaml", "--size", "big", "--csize", "1024", "--once",
                     "--out", "r"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert main(tune) == 1
    err = " ".join("".join(capsys.readouterr()).split())
    assert "Legion's default mapper, measured as the baseline, failed" in err, err
    assert re.search(r"Raise --csize to \d+ MiB \(Legion's -ll:csize; mapperopt run/tune --csize \d+\)\.", err), err
    assert "fix the program" not in err and "the program itself is the cause" not in err, err
    assert re.search(r"\(\d+ MiB\) does not fit in its default size\.", err), err  # Legion's message: no capacity
    assert "`mapperopt run --app mapperopt.yaml --size big" in err, err
    # Legion's message is longer than a reason keeps: cut at a word's end, and said so.
    reason = re.search(r"No baseline of the default mapper \(failed at stage run: aborted: (.*?…)\)\. ", err)[1]
    (root,) = (tmp_path / "runs").glob("histogram/tune-*")
    said = " ".join(json.loads((root / "baseline-default" / "result.json").read_text())["log"].split())
    assert said.find(reason[:-1]) >= 0, (reason, said)
    assert not said[said.find(reason[:-1]) + len(reason) - 1].isalnum(), reason  # not mid-word


def test_check_whose_discovery_runs_out_of_memory_names_the_flag_after_dashes(tmp_path, monkeypatch, capsys,
                                                                             histogram_exe):
    """`check` has no --csize: a discovery that fails for lack of system memory under `check` says to give Legion's
    flag after `--` of the check command (it said to raise --csize, which check refuses); the flag it names works."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    # 150 M values (600 MB in one region): arguments of this test's own, so that its discovery is its own.
    (tmp_path / "mapperopt.yaml").write_text(
        f"executable: {histogram_exe}\nsizes:\n  big:\n    args: [-n, '150000000', -p, '2', -reps, '1']\n"
        "    timeout_s: 120\nverify:\n  pattern: 'HIST OK'\n")
    (tmp_path / "m.dsl").write_text("Task * CPU;\n")
    app = load_app_file(tmp_path / "mapperopt.yaml")
    discovery_path(app, discovery_command(app, "big")).unlink(missing_ok=True)
    check = ["check", "m.dsl", "--app", "mapperopt.yaml", "--size", "big"]
    assert main(check) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "discovering histogram" in err and "R403" in err, err
    found = re.search(r"Raise -ll:csize to (\d+) MiB \(`-- -ll:csize (\d+)` at the end of the mapperopt check "
                      r"command\)\.", err)
    assert found and found[1] == found[2], err
    assert "--csize" not in err.replace("-- -ll:csize", ""), err
    # What it names works: check with that flag after `--` discovers the program and checks the mapper.
    assert main([*check, "--", "-ll:csize", found[1]]) == 0, capsys.readouterr().err
