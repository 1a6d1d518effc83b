"""A tuning folder belongs to one program: `tune --app` offers to extend, continues or resumes only a folder made
for the same program (its arguments, metric and verification too), and `--resume DIR` never mixes the folder's
settings with another command's (it used to run the new command's program against the old folder's journal and
overwrite its summary)."""

from __future__ import annotations

import json
import re
import shlex
import shutil

import pytest

from mapperopt.cli import main

from test_unknown_benchmarks import QUICK, VERIFIED, command


def contents(root) -> dict:
    """Every file of a tuning folder with its bytes (the lock file aside: an OS lock, never written)."""
    return {p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
            and p.name != "tune.lock"}


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """(runs folder, tuning folder, --app spec) of a finished one-iteration run of Stencil as a user's program,
    verified by its output."""
    runs = tmp_path_factory.mktemp("runs")
    spec = command("stencil")
    assert main(["tune", "--app", spec, "--verify-pattern", VERIFIED, "--iters", "1", *QUICK,
                 "--runs-dir", str(runs)]) == 0
    (root,) = runs.glob("stencil/tune-*")
    return runs, root, spec


def one_iteration_of_stencil(tmp_path, monkeypatch, size: str = "", options: tuple = ()) -> tuple:
    """A tune of stencil, described in tmp_path/mapperopt.yaml (its size ci with `size`'s lines added), with
    `options` too, stopped after 1 iteration: (the application file, stencil's arguments, the tune command without
    --iters, the folder)."""
    exe, *args = command("stencil").split()
    app_file = tmp_path / "mapperopt.yaml"
    app_file.write_text(f"executable: {exe}\nsizes:\n  ci:\n    args: {json.dumps(args)}\n{size}"
                        f"verify:\n  pattern: '{VERIFIED}'\n")
    monkeypatch.chdir(tmp_path)
    runs = [] if "--runs-dir" in options else ["--runs-dir", str(tmp_path / "runs")]
    tune = ["tune", "--app", "mapperopt.yaml", *QUICK, *runs, *options]
    assert main([*tune, "--iters", "1"]) == 0
    (root,) = tmp_path.glob("*/stencil/tune-*")  # in `options`' --runs-dir, if given
    return app_file, args, tune, root


def test_a_finished_run_is_offered_only_to_the_same_program(finished, capsys):
    """The same program with other arguments and no verification is another tune: it starts its own folder without
    offering to extend the first (it said "The run of this command in ... finished ... --resume")."""
    runs, root, spec = finished
    capsys.readouterr()
    other = spec.replace("-tsteps 4", "-tsteps 3")
    assert other != spec
    assert main(["tune", "--app", other, "--iters", "1", *QUICK, "--runs-dir", str(runs)]) == 0
    out = flat(capsys.readouterr().out)
    assert "The run of this command" not in out and f"Continuing {root}" not in out, out
    assert len(list(runs.glob("stencil/tune-*"))) == 2


def test_resume_with_another_programs_command_is_refused_and_keeps_the_folder(finished, capsys):
    """--resume DIR with a command whose arguments and verification differ from the folder's stops before running
    anything, says what differs and how to continue the folder with its own settings; no file of the folder
    changes (iterations and the final comparison ran with the new command's verification and metric, and
    summary.json was overwritten)."""
    runs, root, spec = finished
    before = contents(root)
    other = spec.replace("-tsteps 4", "-tsteps 3")
    capsys.readouterr()
    assert main(["tune", "--app", other, "--resume", str(root), "--iters", "2", *QUICK]) == 1
    err = flat(capsys.readouterr().err)
    assert f"{root} tunes stencil with other settings than this command" in err, err
    assert "-tsteps 4" in err and "-tsteps 3" in err, err  # the arguments, the folder's and this command's
    assert VERIFIED in err and "exit status 0" in err, err  # the verification, both
    assert f"mapperopt tune --resume {root} --iters 2" in err, err
    assert contents(root) == before


def test_plain_resume_continues_with_the_folders_own_program(finished, capsys):
    """`mapperopt tune --resume DIR --iters N`, no program named: the folder's program, arguments, metric and
    verification apply (the verification is the folder's: layouts stay searched, nothing is refused); the final
    comparison takes the command's --final-rounds, and the program says so."""
    runs, root, spec = finished
    kept = root.parent / "kept"
    shutil.copytree(root, kept)  # a copy: the other tests read the finished folder
    capsys.readouterr()
    assert QUICK[-2:] == ["--final-rounds", "1"]  # replaced: an option is given once
    assert main(["tune", "--resume", str(kept), "--iters", "2", *QUICK[:-2], "--final-rounds", "2"]) == 0
    out = flat(capsys.readouterr().out)
    assert (f"Continuing {kept}: 1 of 2 iterations done (the run's own settings apply; the final comparison takes "
            "this command's --final-rounds, 2)") in out, out
    assert json.loads((kept / "summary.json").read_text())["rounds"] == 2  # honoured, as said
    assert "Layouts are not searched" not in out, out
    records = [json.loads(line) for line in (kept / "state.jsonl").read_text().splitlines()]
    assert [r["iter"] for r in records] == [1, 2]
    # The final comparison ran again, with the folder's program: its arguments and its verification.
    results = [json.loads(p.read_text()) for p in kept.glob("final/*/round-*/result.json")]
    assert results and all(r["status"] == "ok" and VERIFIED in r["settings"]["verify"]
                           and "-tsteps 4" in r["settings"]["app_options"] for r in results), results


def test_a_programs_identity_counts_its_file_and_metric_and_reads_back(tmp_path, monkeypatch):
    """The identity a tuning folder records tells apart the same executable given by an application file or by
    its command line, and with another metric; read back (`--resume DIR` alone), it gives the same program, with
    the options given over the file kept."""
    from mapperopt.benchmarks.userapp import app_from_identity, app_from_options, identity, identity_differences

    spec = command("stencil")
    exe, *args = spec.split()
    (tmp_path / "mapperopt.yaml").write_text(f"executable: {exe}\nsizes:\n  ci:\n    args: {json.dumps(args)}\n"
                                             f"verify:\n  pattern: '{VERIFIED}'\n")
    monkeypatch.chdir(tmp_path)
    walled = app_from_options(None, (), spec, verify_pattern=VERIFIED)[0]
    timed = app_from_options(None, (), spec, metric_regex="took ([0-9.]+) ms", unit="ms", verify_pattern=VERIFIED)[0]
    filed = app_from_options(None, (), "mapperopt.yaml", metric_regex="took ([0-9.]+) ms", unit="ms")[0]
    assert identity_differences(identity(walled), identity(timed), "here") == [
        "metric: wall time in s, lower is better in the folder, /took ([0-9.]+) ms/ in ms, lower is better here"]
    assert identity_differences(identity(timed), identity(filed), "here") == [
        f"application file: none in the folder, {tmp_path / 'mapperopt.yaml'} here"]
    for app in (walled, timed, filed):
        assert identity(app_from_identity(identity(app))) == identity(app)
    assert app_from_identity(identity(filed)).given == ("metric",)


def test_a_rebuilt_program_does_not_continue_the_folder_of_the_old_build(tmp_path, capsys):
    """A tuning folder records its executable's contents: after a rebuild, the same command (or `--resume DIR`)
    stops before running anything, says that the executable changed and that --new tunes the new build; no file of
    the folder changes. It continued silently, the old build's iterations and baselines in one search with the new
    build's."""
    exe, *args = command("stencil").split()
    mine = tmp_path / "stencil"
    shutil.copy2(exe, mine)
    spec = " ".join([str(mine), *args])
    runs = tmp_path / "runs"
    tune = ["tune", "--app", spec, "--verify-pattern", VERIFIED, *QUICK, "--runs-dir", str(runs)]
    assert main([*tune, "--iters", "1"]) == 0
    (root,) = runs.glob("stencil/tune-*")
    with open(mine, "ab") as f:  # another build: other bytes, the same program
        f.write(b"\0rebuilt")
    before = contents(root)
    capsys.readouterr()
    for command_line in ([*tune, "--iters", "2"], ["tune", "--resume", str(root), "--iters", "2", "--final-rounds",
                                                   "1"]):
        assert main(command_line) == 1
        err = flat(capsys.readouterr().err)
        assert f"{root} was made with another build of {mine}" in err, err
        assert "--new" in err, err
        assert contents(root) == before


@pytest.mark.parametrize("how", ["verify", "crash"])
def test_a_program_that_fails_under_the_default_mapper_stops_before_the_first_iteration(how, tmp_path, capsys):
    """When Legion's default mapper (the default baseline) fails the program's verification (a broken verify command)
    or crashes, no mapper can fix it: tune stopped only after running every iteration, each failing the same way.
    It now stops before the first iteration with an error naming the stage, the reason and the fix, and keeps the
    folder (its baseline's run, and a note of why it stopped); the same command stops again without running."""
    runs = tmp_path / "runs"
    if how == "verify":
        spec, options = command("stencil"), ["--verify-cmd", "python3 no_such_check.py"]
    else:  # a wrapper whose program runs under discovery only, and crashes when measured
        wrapper = tmp_path / "crashy"
        wrapper.write_text(f'#!/bin/sh\n[ -n "$MAPPEROPT_RECORD" ] && exec {command("stencil")} "$@"\n'
                           "kill -SEGV $$\n")
        wrapper.chmod(0o755)
        spec, options = str(wrapper), []
    argv = ["tune", "--app", spec, *options, "--baseline", "default", "--repeats", "1", "--max-repeats", "1",
            "--final-rounds", "1", "--iters", "3", "--runs-dir", str(runs)]
    assert main(argv) == 1
    out, err = capsys.readouterr()
    err = flat(err)
    stage = "verify" if how == "verify" else "run"
    assert f"Legion's default mapper, measured as the baseline, failed at stage {stage}" in err, err
    assert ("no_such_check.py" if how == "verify" else "SIGSEGV") in err, err
    assert "nothing was tuned" in err, err
    # what is known, not more: the failure may depend on the mapping (a kernel that needs a layout), and --start
    # FILE tunes from another mapper
    assert "no mapper can fix it" not in err and "most likely" in err, err
    assert "--start FILE" in err, err
    assert ("--verify-cmd" if how == "verify" else "the program") in err, err
    assert "iter 1/3" not in out, out
    (root,) = runs.glob("*/tune-*")
    assert not list(root.glob("iter-*")), sorted(root.iterdir())
    assert json.loads((root / "baseline-default" / "result.json").read_text())["stage"] == stage
    assert f"failed at stage {stage}" in flat((root / "stopped.txt").read_text())
    # the same command: the same stop, nothing run
    assert main(argv) == 1
    assert "nothing was tuned" in flat(capsys.readouterr().err)
    assert not list(root.glob("iter-*")) and len(list(runs.glob("*/tune-*"))) == 1
    # the stop is about the default start: from a mapper of the user's own (--start FILE), the iterations run
    start = tmp_path / "start.dsl"
    start.write_text("Task * CPU;\n")
    main([*argv[:argv.index("--iters")], "--iters", "1", "--runs-dir", str(tmp_path / "started"),
          "--start", str(start)])
    out, err = capsys.readouterr()
    assert "nothing was tuned" not in flat(err) and "iter 1/1" in out, (out, err)


def test_a_rebuilt_program_does_not_continue_the_comparison_of_the_old_build(tmp_path, capsys):
    """`compare --app` too: the same command after a rebuild finds the comparison of the old build (its folder is
    named by the command, not the build) and stops before measuring anything, naming the change and --new."""
    exe, *args = command("stencil").split()
    mine = tmp_path / "stencil"
    shutil.copy2(exe, mine)
    runs = tmp_path / "runs"
    compare = ["compare", "--app", " ".join([str(mine), *args]), "--iters", "1", "--runs", "1", "--optimizers",
               "random", "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1", "--runs-dir", str(runs)]
    assert main(compare) == 0
    (folder,) = runs.glob("stencil/compare-*")
    with open(mine, "ab") as f:
        f.write(b"\0rebuilt")
    before = contents(folder)
    capsys.readouterr()
    assert main([*compare[:4], "2", *compare[5:]]) == 1  # --iters 2
    err = flat(capsys.readouterr().err)
    assert f"{folder} was made with another build of {mine}" in err and "--new" in err, err
    assert contents(folder) == before


def test_a_resumed_tune_of_a_rebuilt_program_names_a_command_that_starts_afresh(tmp_path, capsys, monkeypatch):
    """`tune --resume DIR` after a rebuild: --resume ignores --new, so the hint names the tune command that measures
    the new build in a folder of its own, with the folder's settings (it said "give the command --new", which
    resumed nothing and started nothing); that command, run as written, does so."""
    exe, *args = command("stencil").split()
    mine = tmp_path / "stencil"
    shutil.copy2(exe, mine)
    monkeypatch.chdir(tmp_path)
    runs = tmp_path / "tuned"  # not ./runs, the default
    assert main(["tune", "--app", " ".join([str(mine), *args]), "--verify-pattern", VERIFIED, "--iters", "1", *QUICK,
                 "--seed", "4", "--runs-dir", str(runs)]) == 0
    (root,) = runs.glob("stencil/tune-*")
    with open(mine, "ab") as f:
        f.write(b"\0rebuilt")
    before = contents(root)
    capsys.readouterr()
    assert main(["tune", "--resume", str(root), "--iters", "2", "--final-rounds", "1"]) == 1
    err = flat(capsys.readouterr().err)
    assert f"{root} was made with another build of {mine}" in err, err
    hinted = re.search(r"to measure the new build, start a new run: `([^`]*)`", err)
    assert hinted, err
    words = shlex.split(hinted.group(1))
    assert words[:2] == ["mapperopt", "tune"] and "--new" in words and "--resume" not in words, words
    assert main(words[1:]) == 0
    assert contents(root) == before
    (made,) = set(runs.glob("stencil/tune-*")) - {root}
    request, now = (json.loads((r / "settings.json").read_text())["request"] for r in (root, made))
    assert now == {**request, "program": now["program"]} and now["seed"] == 4, now
    assert json.loads((made / "summary.json").read_text())["rounds"] == 1  # this command's --final-rounds


def test_a_folder_made_for_other_processor_counts_is_not_continued(tmp_path, capsys, monkeypatch):
    """The folder's machine is not part of its identity: after the program's processor counts change (its size's
    `cpus` in the application file; `--app './prog -ll:cpu 2'`, which ran with 1 CPU before mapperopt read the flag),
    the same command (or `--resume DIR`) stops before running anything, naming the recorded and the current counts
    and sizes and --new; no file of the folder changes. It continued, mixing measurements of two machines."""
    app_file, _, tune, root = one_iteration_of_stencil(tmp_path, monkeypatch, "    cpus: 1\n",
                                                       ("--seed", "3", "--start", "random", "--runs-dir",
                                                        str(tmp_path / "tuned")))
    app_file.write_text(app_file.read_text().replace("cpus: 1", "cpus: 2\n    util: 2\n    csize: 256"))
    before = contents(root)
    capsys.readouterr()
    for command_line in ([*tune, "--iters", "2"], ["tune", "--resume", str(root), "--iters", "2", "--final-rounds",
                                                   "1"]):
        assert main(command_line) == 1
        err = flat(capsys.readouterr().err)
        assert f"{root} was measured with 1 CPU and 1 utility processor per node, SYSMEM of 512 MiB" in err, err
        assert "this command runs with 2 CPU and 2 utility processors per node, SYSMEM of 256 MiB" in err, err
        assert "--new" in err, err
        # the edit is named as one of the file (it read as a hardware change: "give the program the machine ...")
        named = "mapperopt.yaml" if "--app" in command_line else app_file  # as the command names it, else in full
        assert (f"size ci in {named} changed since (cpus: 1, util: 1, csize: 512 in the folder; cpus: 2, "
                "util: 2, csize: 256 now)") in err, err
        assert f"to continue this folder, give size ci in {named} back cpus: 1, util: 1, csize: 512" in err, err
        assert "another machine" not in err, err
        assert contents(root) == before
        if "--resume" in command_line:  # --new is ignored there: the hint names a command that starts afresh
            new = re.search(r"to measure the new size, start a new run: `([^`]*)`", err)
            assert new, err
    # the command it names works as written: it tunes with the folder's settings (seed, start, measurement), in a
    # folder next to it (it named none of them: the new run went to ./runs with the defaults)
    words = shlex.split(new.group(1))
    assert words[:2] == ["mapperopt", "tune"] and "--new" in words and "--resume" not in words, words
    assert main(words[1:]) == 0
    assert contents(root) == before
    (made,) = set((tmp_path / "tuned").glob("stencil/tune-*")) - {root}
    request, now = (json.loads((r / "settings.json").read_text())["request"] for r in (root, made))
    assert {k: now[k] for k in request if k != "program"} == {k: v for k, v in request.items() if k != "program"}
    assert now["seed"] == 3 and now["start"] == "random" and now["repeats"] == 1, now
    assert json.loads((made / "summary.json").read_text())["rounds"] == 1  # this command's --final-rounds


def test_a_comparison_made_for_another_machine_is_not_continued(tmp_path, capsys, monkeypatch):
    """`compare --app` too: its folder is named by its processor counts, not its utility processors or memory sizes
    (the program's size in its application file): after those change, the same command stops before measuring
    anything, naming them and --new."""
    exe, *args = command("stencil").split()
    app_file = tmp_path / "mapperopt.yaml"
    app_file.write_text(f"executable: {exe}\nsizes:\n  ci:\n    args: {json.dumps(args)}\n    cpus: 1\n")
    monkeypatch.chdir(tmp_path)
    runs = tmp_path / "compared"  # not ./runs, the default
    compare = ["compare", "--app", "mapperopt.yaml", "--iters", "1", "--runs", "1", "--optimizers", "random",
               "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1", "--runs-dir", str(runs),
               "--seed", "5", "--start", "default"]
    assert main(compare) == 0
    (folder,) = runs.glob("stencil/compare-*")
    app_file.write_text(app_file.read_text().replace("cpus: 1", "cpus: 1\n    util: 2\n    csize: 256"))
    before = contents(folder)
    capsys.readouterr()
    assert main([*compare[:4], "2", *compare[5:]]) == 1  # --iters 2
    err = flat(capsys.readouterr().err)
    assert (f"{folder} was measured with 1 utility processor per node, SYSMEM of 512 MiB, and this command runs "
            "with 2 utility processors per node, SYSMEM of 256 MiB") in err and "--new" in err, err
    assert ("size ci in mapperopt.yaml changed since (util: 1, csize: 512 in the folder; util: 2, csize: 256 now)"
            in err), err
    assert contents(folder) == before
    # --resume DIR ignores --new: its hint names a command that starts afresh, and that command works
    assert main(["compare", "--resume", str(folder), "--app", "mapperopt.yaml"]) == 1
    err = flat(capsys.readouterr().err)
    assert "size ci in mapperopt.yaml changed since" in err, err
    hinted = re.search(r"to measure the new size, start a new run: `([^`]*)`", err)
    assert hinted, err
    words = shlex.split(hinted.group(1))
    assert words[:2] == ["mapperopt", "compare"] and "--new" in words and "--resume" not in words, words
    # as written: the folder's settings (seed, start, measurement), in a folder next to it (it named none of them:
    # the new comparison went to ./runs with the defaults)
    assert main(words[1:]) == 0
    assert contents(folder) == before
    (made,) = set(runs.glob("stencil/compare-*")) - {folder}
    was, now = (json.loads((f / "settings.json").read_text()) for f in (folder, made))
    for key in ("seed", "start", "executions", "max_executions", "iters", "repeats", "optimizers", "cpus", "gpus"):
        assert now[key] == was[key], (key, was[key], now[key])
    assert json.loads((made / "final.json").read_text())["rounds"] == 1


def test_a_program_rebuilt_behind_a_wrapper_script_is_noticed_by_a_resumed_tune(tmp_path, pieces_exe, timed_exe,
                                                                                capsys):
    """`--app` naming a wrapper script whose program mapperopt cannot find in it (its path put together from
    parts): the folder records the script's bytes, so a rebuild of the program it runs goes unseen. The tune says so,
    at its start and when resumed, and a candidate's run that maps no task of a name the description has (R453, in
    the run's stderr only) is said to mean a stale description; it continued silently, mixing builds."""
    prog, wrapper = tmp_path / "bin" / "prog", tmp_path / "wrap.sh"
    prog.parent.mkdir()
    shutil.copy2(pieces_exe, prog)
    wrapper.write_text('#!/bin/sh\nexec "$(dirname "$0")/bin/""prog" "$@"\n')
    wrapper.chmod(0o755)
    (tmp_path / "start.dsl").write_text("Task fill CPU;\n")
    runs = tmp_path / "runs"
    assert main(["tune", "--app", str(wrapper), "--iters", "1", "--start", str(tmp_path / "start.dsl"), *QUICK,
                 "--runs-dir", str(runs)]) == 0
    (root,) = runs.glob("*/tune-*")
    out = flat(capsys.readouterr().out)
    said = (f"Note: --app names a script, {wrapper}: the folder compares only its bytes, so a rebuild of the "
            "program it runs is not noticed (mapperopt checks the programs a script names by an absolute path or "
            "one relative to the script's folder, and this one names none; give --new after a rebuild).")
    assert said in out and "stale" not in out, out
    shutil.copy2(timed_exe, prog)  # the "rebuild": its tasks are top and work; fill is gone
    assert main(["tune", "--resume", str(root), "--iters", "2", "--final-rounds", "1"]) == 0
    out = flat(capsys.readouterr().out)
    assert said in out, out
    assert ("no task named 'fill' was mapped, a task that the program's description (its discovery) has: the "
            "program changed since it was discovered") in out, out


def test_a_tune_of_a_wrapper_script_made_before_its_programs_were_recorded_says_a_rebuild_goes_unnoticed(
        tmp_path, pieces_exe, capsys):
    """A tuning folder made before the programs a script runs were recorded (no `wrapped_sha256`) checks only the
    script's bytes: continued, it says so, though the script names its program (the note was left out for any
    script that names one)."""
    prog, wrapper = tmp_path / "prog", tmp_path / "wrap.sh"
    shutil.copy2(pieces_exe, prog)
    wrapper.write_text(f'#!/bin/sh\nexec {prog} "$@"\n')
    wrapper.chmod(0o755)
    (tmp_path / "start.dsl").write_text("Task fill CPU;\n")
    runs = tmp_path / "runs"
    assert main(["tune", "--app", str(wrapper), "--iters", "1", "--start", str(tmp_path / "start.dsl"), *QUICK,
                 "--runs-dir", str(runs)]) == 0
    (root,) = runs.glob("*/tune-*")
    assert "script" not in flat(capsys.readouterr().out)
    settings = json.loads((root / "settings.json").read_text())
    assert list(settings.pop("wrapped_sha256")) == [str(prog)]
    (root / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")  # as an older mapperopt wrote it
    assert main(["tune", "--resume", str(root), "--iters", "2", "--final-rounds", "1"]) == 0
    out = flat(capsys.readouterr().out)
    assert (f"Note: --app names a script, {wrapper}: the folder compares only its bytes, so a rebuild of the "
            "program it runs is not noticed (the folder was made before mapperopt recorded the programs a script "
            "runs; give --new to record them).") in out, out


def test_a_comparison_of_a_wrapper_script_is_not_continued_after_a_rebuild_of_its_program(tmp_path, pieces_exe,
                                                                                          timed_exe, capsys):
    """`compare --app ./wrap.sh --resume DIR`: the folder recorded only the script's bytes, so a rebuild of the
    program it runs went unseen and the comparison mixed builds. It records the program the script names too, and
    stops before measuring, naming it."""
    prog, wrapper = tmp_path / "prog", tmp_path / "wrap.sh"
    shutil.copy2(pieces_exe, prog)
    wrapper.write_text(f'#!/bin/sh\nexec {prog} "$@"\n')
    wrapper.chmod(0o755)
    runs = tmp_path / "runs"
    compare = ["compare", "--app", str(wrapper), "--iters", "1", "--runs", "1", "--optimizers", "random",
               "--start", "default", "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1", "--runs-dir",
               str(runs)]
    assert main(compare) == 0
    (folder,) = runs.glob("*/compare-*")
    assert "names a script" not in flat(capsys.readouterr().out)
    shutil.copy2(timed_exe, prog)  # the rebuild
    before = contents(folder)
    assert main(["compare", "--app", str(wrapper), "--resume", str(folder), "--iters", "2", "--final-rounds",
                 "1"]) == 1
    err = flat(capsys.readouterr().err)
    assert f"{folder} was made with another build of {prog}: its contents changed since" in err, err
    assert contents(folder) == before



def test_the_same_command_after_an_edit_of_the_programs_arguments_names_the_unfinished_folder(tmp_path, capsys,
                                                                                           monkeypatch):
    """After the application file's arguments change, the same tune command is another tune and starts a folder of
    its own: it says that the unfinished one, with the old arguments, was left alone and how to continue it (it
    started the new folder without a word, and a user who edited the file by accident did not notice)."""
    # 1 of the 2 iterations the command below asks for: unfinished
    app_file, args, tune, root = one_iteration_of_stencil(tmp_path, monkeypatch)
    runs = tmp_path / "runs"
    assert "-tsteps 4" in command("stencil")
    app_file.write_text(app_file.read_text().replace('"-tsteps", "4"', '"-tsteps", "3"'))
    before = contents(root)
    capsys.readouterr()
    assert main([*tune, "--iters", "2"]) == 0
    out = flat(capsys.readouterr().out)
    (new,) = set(runs.glob("stencil/tune-*")) - {root}
    old, now = shlex.join(args), shlex.join(args).replace("-tsteps 4", "-tsteps 3")
    assert (f"Note: {root} holds a finished tuning of stencil (1 iteration; a larger --iters extends it) with "
            f"other settings (arguments at size ci: {old} in the folder, {now} here); it is left alone, and this "
            f"command tunes in {new}. To continue that one, "
            f"first give mapperopt.yaml back the settings it was made with (those 'in the folder' above), then: "
            f"mapperopt tune --resume {root} --iters 2") in out, out
    assert contents(root) == before
    # The note's way works (`--resume DIR` alone, with the file as it reads now, was refused): restore, resume.
    assert main(["tune", "--resume", str(root), "--iters", "2"]) != 0
    app_file.write_text(app_file.read_text().replace('"-tsteps", "3"', '"-tsteps", "4"'))
    capsys.readouterr()
    assert main(["tune", "--resume", str(root), "--iters", "2"]) == 0, capsys.readouterr()
    assert len((root / "state.jsonl").read_text().splitlines()) == 2


def test_a_default_baseline_whose_own_check_fails_names_that_check(tmp_path, capsys):
    """Circuit, whose own check fails under Legion's default mapper (-test-corrupt: its MAPPEROPT_RESULT line says
    "verified": false), tuned with no --verify-* option: the stop's hint said "fix the verification (the
    --verify-pattern, --verify-cmd or --reference option)", none given; it names the program's own check and quotes
    what that check reported."""
    wrapper = tmp_path / "corrupt"  # its own check passes under discovery, and fails when measured
    wrapper.write_text(f'#!/bin/sh\n[ -n "$MAPPEROPT_RECORD" ] && exec {command("circuit")} "$@"\n'
                       f'exec {command("circuit")} -test-corrupt "$@"\n')
    wrapper.chmod(0o755)
    argv = ["tune", "--app", str(wrapper), "--baseline", "default", "--repeats", "1", "--max-repeats", "1",
            "--final-rounds", "1", "--iters", "2", "--runs-dir", str(tmp_path / "runs")]
    assert main(argv) == 1
    err = flat(capsys.readouterr().err)
    (root,) = (tmp_path / "runs").glob("*/tune-*")
    attempt = json.loads((root / "baseline-default" / "result.json").read_text())["attempts"][-1]
    check = attempt["result"]["check"]
    assert check["kind"] == "reference", check  # what the program's line reported
    stdout = (root / "baseline-default" / attempt["stdout"]).read_text().split("\n")
    ((line, printed),) = [(n, text) for n, text in enumerate(stdout, 1) if text.startswith("MAPPEROPT_RESULT ")]
    # its "check" object as Circuit printed it, the last field of its line
    reported = flat(printed[printed.index('"check": ') + len('"check": '):].removesuffix("}"))
    assert ("failed at stage verify (the correctness check failed (exit status 2; its MAPPEROPT_RESULT line is line "
            f"{line} of the standard output): {reported}): most likely the program or its arguments are the cause"
            ) in err, err
    assert (f'hint: its own check (its MAPPEROPT_RESULT line says "verified": false) reported {reported}: fix the '
            "program or its arguments") in err, err
    assert "--verify" not in err and "verification settings" not in err, err


@pytest.mark.parametrize("failing", [2, 3])
def test_a_default_baseline_whose_verification_fails_only_sometimes_is_said_to_vary(tmp_path, capsys, failing):
    """A program whose third execution under Legion's default mapper failed the check its first two passed (a race)
    stopped tune with "most likely the program or its verification settings are the cause, and every iteration from
    the default start would fail the same way": neither the verification nor "every iteration" is what the run
    showed."""
    count = tmp_path / "count"  # measured executions: the third prints no result line
    count.write_text("0")
    wrapper = tmp_path / "racy"
    wrapper.write_text(f'#!/bin/sh\n[ -n "$MAPPEROPT_RECORD" ] && exec {command("stencil")} "$@"\n'
                       f'n=$(($(cat {count}) + 1)); echo $n > {count}\n'
                       f'[ $n -eq {failing} ] && exit 0\nexec {command("stencil")} "$@"\n')
    wrapper.chmod(0o755)
    argv = ["tune", "--app", str(wrapper), "--verify-pattern", VERIFIED, "--baseline", "default", "--repeats", "3",
            "--max-repeats", "3", "--final-rounds", "1", "--iters", "2", "--runs-dir", str(tmp_path / "runs")]
    assert main(argv) == 1
    err = flat(capsys.readouterr().err)
    passed = "executions 1 and 2" if failing == 3 else "execution 1"  # (execution 2's was not recognised)
    assert (f"failed at stage verify ({passed} passed this check, execution {failing} failed it: an output that "
            "varies from run to run points at the program") in err, err
    assert ("most likely the program is the cause: its output varies from run to run, so tuning it would rank "
            "mappers by chance; nothing was tuned") in err, err
    assert "every iteration from the default start would fail the same way" not in err, err
    assert "verification settings" not in err and "fix the verification" not in err, err
    assert ("hint: fix the program (a race, e.g. a missing privilege or an unsynchronised access, or an access "
            "outside a task's region requirement, which a build with -DLEGION_BOUNDS_CHECKS reports)"
            ) in " ".join(err.split()), err
