"""Two runs of one optimizer that propose the same programs (guided from the same start: its search is
deterministic) are one sample, not two: the table's std 0.00 looked like a stable optimizer. The note under the
table says which run repeated which, and how many distinct runs the row has."""

from __future__ import annotations

from mapperopt.cli import main


def flat(text: str) -> str:
    return " ".join(text.split())


def test_a_run_that_repeats_another_is_named_under_the_table(tmp_path, foreign_exe, offline_optimizer, capsys):
    runs = tmp_path / "runs"
    assert main(["compare", "--app", f"{foreign_exe} -n 1000 -steps 1", "--cpus", "2", "--optimizers", "guided",
                 "--runs", "2", "--iters", "3", "--start", "default", "--repeats", "1", "--max-repeats", "1",
                 "--final-rounds", "1", "--runs-dir", str(runs)]) == 0
    said = ("guided-2 repeated guided-1 (the same program in every iteration): guided has 1 distinct run of 2, so "
            "its std, worst and median do not show how much its runs vary.")
    assert said in flat(capsys.readouterr().out)
    (folder,) = runs.glob("*/compare-*")
    assert said in flat((folder / "table.md").read_text())


def test_a_failing_start_program_is_shown_in_each_optimizers_own_folder_and_said_shared(tmp_path, layoutdep_exe,
                                                                                       offline_optimizer, capsys,
                                                                                       monkeypatch):
    """Every optimizer's run starts from the same program; when it fails (here C_order under a kernel that assumes
    x-fastest instances: wrong numbers, caught by the verification), each optimizer's failed evaluations count it,
    as the failure rate counts every evaluated program of a run, but random's line gave guided-1/iter-001 as its
    example, where the shared outcome was measured. The example is in the optimizer's own folder, and the line says
    the failure is the shared start's."""
    monkeypatch.setenv("LAYOUTDEP_BUG", "wrong")
    start = tmp_path / "start.dsl"
    start.write_text("Task * CPU;\nLayout * * * C_order;\n")
    runs = tmp_path / "runs"
    assert main(["compare", "--app", f"{layoutdep_exe} -n 64", "--cpus", "2", "--optimizers", "guided,random",
                 "--runs", "1", "--iters", "2", "--start", str(start), "--verify-pattern", "check: OK",
                 "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1", "--runs-dir", str(runs)]) == 0
    out = flat(capsys.readouterr().out)
    (folder,) = runs.glob("*/compare-*")
    for name in ("guided", "random"):
        line = next(x for x in out.split("Failed evaluations of ")[1:] if x.startswith(name))
        line = line[:line.index(" figure.") + 8]
        assert f"e.g. {name}-1/iter-001" in line and ("guided-1" not in line if name == "random" else True), line
        assert ("1 of them the start program (iteration 1), which every optimizer's run of a repeat shares: it "
                "counts in each optimizer's figure") in line, line
        assert (folder / f"{name}-1" / "iter-001").is_dir()
