"""What `tune` and `compare` say around their work: the install command of a missing optional package, the unit of
the best figure after a failed iteration, a smaller comparison answered from a bigger finished one, and an unfinished
tuning with other settings left alone."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

from mapperopt.cli import main
from mapperopt.errors import install_extra
from mapperopt.optimizer.base import Proposal
from mapperopt.optimizer.baselines import RandomSearch

FAST = ["--min-time", "0.05", "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1"]


def test_the_best_after_a_failed_iteration_keeps_its_unit(tmp_path, monkeypatch, capsys):
    """The progress line of a failed iteration showed the best as a bare throughput ("best 0.0005728 (iter 1)") where
    every other line gave it with its unit."""
    propose = RandomSearch.propose

    def failing_second(self, history):
        if len(history) == 1:  # a program the checker refuses: iteration 2 fails without an execution
            return Proposal(dsl="Task nosuchtask CPU;\n", note="a broken program")
        return propose(self, history)

    monkeypatch.setattr(RandomSearch, "propose", failing_second)
    args = ["compare", "circuit", "--size", "ci", "--iters", "2", "--runs", "1", "--optimizers", "random",
            "--start", "default", *FAST, "--runs-dir", str(tmp_path / "runs")]
    assert main(args) == 0
    out = " ".join(capsys.readouterr().out.split())
    # under load the start may be measured at another iteration count, which its line notes in brackets
    best = re.search(r"random #1 iter 1/2: \S+ GFLOPS (?:\[[^]]*\] )?best (\S+ GFLOPS) \(this one\)", out)
    assert best and f"random #1 iter 2/2: failed (check) best {best[1]} (iter 1)" in out, out


def test_a_missing_optional_package_is_installed_as_mapperopt_was(tmp_path, monkeypatch, capsys):
    """The hint said `pip install 'mapperopt[baselines]'`, which asks the package index, to a user who installed
    from a checkout (`pip install .`, as the README says): it names the checkout, editable or not, and the
    interpreter that runs mapperopt; by name only for a copy that came from the index."""
    import importlib.util

    python = shlex.quote(sys.executable)
    # this copy: installed editable from this checkout (the README's test install)
    checkout = Path(__file__).resolve().parents[2]
    editable = f"{python} -m pip install -e {shlex.quote(f'{checkout}[baselines]')}"
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "optuna" else real(name, *a))
    assert main(["compare", "circuit", "--optimizers", "random,optuna", "--iters", "1", "--runs", "1",
                 "--runs-dir", str(tmp_path / "runs")]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"hint: {editable} (or the packages alone: {python} -m pip install optuna), or leave them out: " \
           "--optimizers random" in err, err
    assert not (tmp_path / "runs").exists()
    # `pip install .` from a clone; from the index; from a clone since deleted, or a wheel file: by name
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / "pyproject.toml").write_text("[project]\nname = 'mapperopt'\n")
    assert install_extra("llm", {"url": clone.as_uri(), "dir_info": {}}) == \
        f"{python} -m pip install {shlex.quote(f'{clone}[llm]')}"
    by_name = f"{python} -m pip install 'mapperopt[llm]'"
    assert install_extra("llm", {"url": (tmp_path / "gone").as_uri(), "dir_info": {}}) == by_name
    assert install_extra("llm", {"url": (tmp_path / "m.whl").as_uri(), "archive_info": {}}) == by_name


def test_a_smaller_compare_says_it_reports_from_a_bigger_finished_one(tmp_path, capsys, monkeypatch):
    """After a comparison of 2 optimizers x 2 iterations finished, the same command with --iters 1 and one of them
    printed "Resuming DIR." and at once a table, as if it had measured one: it says what the folder holds, that
    nothing new was measured, and how to start a separate comparison."""
    propose = RandomSearch.propose

    def failing_second(self, history):
        # random's best after 2 iterations is then its first (the final measurement measured the program that
        # --iters 1 asks about); a measured second one could win under load and be measured at the end instead
        if len(history) == 1:
            return Proposal(dsl="Task nosuchtask CPU;\n", note="a broken program")
        return propose(self, history)

    monkeypatch.setattr(RandomSearch, "propose", failing_second)
    runs = tmp_path / "runs"
    args = ["compare", "circuit", "--size", "ci", "--runs", "1", "--start", "default", *FAST, "--runs-dir", str(runs)]
    assert main([*args, "--iters", "2", "--optimizers", "random,optuna"]) == 0
    [folder] = (runs / "circuit").iterdir()
    out = " ".join(capsys.readouterr().out.split())
    assert "Note:" not in out or "already holds" not in out, out  # a new comparison: nothing to say
    evaluated = sorted(p.name for p in (folder / "evaluations").iterdir())
    final = (folder / "final.json").read_text()
    assert main([*args, "--iters", "1", "--optimizers", "random"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (f"Note: nothing new was measured: {folder} already holds a bigger comparison (tuning runs of optuna and "
            "random, 1 each, of 2 iterations); this table is of the first iteration of random (1 run) and its "
            "earlier final measurement. --new or another --runs-dir starts a separate comparison.") in out, out
    assert sorted(p.name for p in (folder / "evaluations").iterdir()) == evaluated
    assert (folder / "final.json").read_text() == final
    # the same command again as it was: an ordinary resume of what it made, said as before
    assert main([*args, "--iters", "2", "--optimizers", "random,optuna"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"Resuming {folder}." in out and "already holds" not in out, out


def test_a_compare_of_other_optimizers_keeps_the_earlier_comparisons_report(tmp_path, capsys):
    """A second compare of the same program with other --optimizers (and fewer --iters) resumed the first one's folder
    and rewrote its settings.json, summary.json and table.md with the new optimizer only: the earlier table was gone,
    unsaid. It makes a comparison of its own, naming the one it keeps and the command that adds to it; a command
    that names the earlier optimizers too still extends the earlier folder."""
    runs = tmp_path / "runs"
    args = ["compare", "circuit", "--size", "ci", "--runs", "1", "--start", "default", *FAST, "--runs-dir", str(runs)]
    assert main([*args, "--iters", "2", "--optimizers", "guided"]) == 0
    [first] = (runs / "circuit").iterdir()
    report = {name: (first / name).read_bytes() for name in ("settings.json", "summary.json", "table.md")}
    capsys.readouterr()
    assert main([*args, "--iters", "1", "--optimizers", "random"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert {name: (first / name).read_bytes() for name in report} == report
    second = runs / "circuit" / f"{first.name}-2"
    assert "| random |" in (second / "table.md").read_text()
    assert (f"Note: {first} holds a comparison of guided (2 iterations), which this command leaves out: it is kept "
            f"as it is, and this one is made in a new folder. mapperopt compare --resume {first} --optimizers "
            "guided,random adds random to it.") in out, out
    assert f"Comparison folder: {second}" in out, out
    # at the tests' size, the size meant for tuning is named once, from the configuration, after the folder
    assert (f"Comparison folder: {second} Note: size ci is the tests' size (configs/circuit.yaml: a few seconds on 2 "
            "CPU cores; used by the tests), where a mapper can change little. Meant for tuning: --size small (~1.5 s "
            "measured per execution on 2 idle cores, for tuning and compare).") in out, out
    # the same command again resumes its own folder; the earlier optimizer's command finds the earlier one
    assert main([*args, "--iters", "1", "--optimizers", "random"]) == 0
    assert f"Resuming {second}." in " ".join(capsys.readouterr().out.split())
    assert main([*args, "--iters", "2", "--optimizers", "guided"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"Resuming {first}." in out and "leaves out" not in out, out
    # --report-only finds the comparison that holds its runs, not merely the newest
    assert main([*args, "--iters", "2", "--optimizers", "guided", "--report-only"]) == 0
    assert f"Reporting on {first}." in " ".join(capsys.readouterr().out.split())
    assert main([*args, "--iters", "1", "--optimizers", "random", "--report-only"]) == 0
    assert f"Reporting on {second}." in " ".join(capsys.readouterr().out.split())
    # the --resume the note gave: one table of both optimizers in the earlier folder
    assert main(["compare", "--resume", str(first), "--optimizers", "guided,random", *FAST]) == 0
    table = (first / "table.md").read_text()
    assert "| guided |" in table and "| random |" in table, table


def test_compare_says_it_is_still_measuring_when_no_line_comes(tmp_path, capsys, monkeypatch):
    """A slow start program (an `InstanceLimit` turns the trace replay off: ~5 s an execution, and calibration runs
    several) left compare silent for minutes after "0 of 2 iterations done". After HEARTBEAT_S seconds without a
    line it says that it is still measuring, for how long and how many executions started since."""
    from mapperopt.optimizer import compare

    monkeypatch.setattr(compare, "HEARTBEAT_S", 0.2)
    runs = tmp_path / "runs"
    assert main(["compare", "circuit", "--size", "ci", "--runs", "1", "--start", "default", "--iters", "1",
                 "--optimizers", "random", *FAST, "--runs-dir", str(runs)]) == 0
    out = capsys.readouterr().out
    beats = re.findall(r"\.\.\. still measuring: (\d+) s since the last line, (\d+) executions? started since", out)
    assert beats, out
    assert any(int(n) > 0 for _, n in beats), beats  # the executions of the runs under the comparison's folder
