"""A program that needs more system memory than Legion's default (tests/app/histogram.cc with 140 M values, 560 MB
in one region; SYSMEM is 512 MiB unless -ll:csize says otherwise): `tune --csize N` and `run --csize N` discover it
with that memory (discovery ran without it and failed, so it could be tuned only with `-- -ll:csize N`), and a
discovery that fails for lack of memory says which option gives it more."""

from __future__ import annotations

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
