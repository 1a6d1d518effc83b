"""A user debugging a mapper with `print` in `tune`: the lines its print statements wrote are in each iteration's
run folder (the program's stderr), which `run` shows and `tune` did not mention. tune shows those of the first
iteration that printed (the start program), the first few of them, names that stderr file, and says it once. The
status line of its final comparison names one reference as one. One small real tuning run of Circuit (ci size)."""

from __future__ import annotations

from mapperopt.cli import main
from mapperopt.optimizer.store import TuneStore

QUICK = ["--size", "ci", "--repeats", "1", "--max-repeats", "1", "--min-time", "0.05", "--final-rounds", "1"]
START = ('Task * CPU;\nmc = Machine(CPU);\nprint("load phase: {}", mc.size);\n'
         'def f(Task task) {\n    print("point {} of {}", task.ipoint, task.ispace);\n'
         '    return mc[0, task.ipoint[0] % mc.size[1]];\n}\nIndexTaskMap calculate_new_currents f;\n')


def test_tune_shows_the_start_programs_print_lines_once_and_names_their_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("mapperopt.dsl.commands.MAX_PRINTED", 2)
    (tmp_path / "s.dsl").write_text(START)
    assert main(["tune", "circuit", "--start", "s.dsl", "--iters", "2", *QUICK, "--baseline", "default",
                 "--runs-dir", "runs"]) == 0
    captured = capsys.readouterr()
    err = captured.err.splitlines()
    (folder,) = (tmp_path / "runs" / "circuit").glob("tune-*")
    first = TuneStore.open(folder).records[0].result
    stderr = (folder / first["run_dir"] / first["attempts"][0]["stderr"]).relative_to(tmp_path)  # as tune names it
    printed = [line for line in stderr.read_text().splitlines() if line.startswith(("load phase: (", "point ("))]
    assert printed[0] == "load phase: (1, 1)" and len(printed) > 2, printed  # the premise: points printed too
    heads = [i for i, line in enumerate(err) if line.startswith("print output of")]
    assert len(heads) == 1, captured.err  # once per tune
    assert err[heads[0]].startswith(f"print output of iteration 1's mapper, {len(printed)} line(s) (from the "
                                    f"program's stderr, {stderr}; "), err
    assert err[heads[0]].endswith("; later iterations' are in their own folders' stderr files, not shown):"), err
    assert err[heads[0] + 1:heads[0] + 4] == ["  load phase: (1, 1)", f"  {printed[1]}",
                                              f"  ... {len(printed) - 2} more line(s) in {stderr}"], err
    # one reference measured (Legion's default): said as one
    out = " ".join(captured.out.split())
    assert "Measuring the top candidates, the start and the reference together (1 round)..." in out, out
