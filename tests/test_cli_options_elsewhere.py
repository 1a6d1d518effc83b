"""Another mapperopt command's option, or a mapperopt option after `--`, given where it does not belong: each place
says so the same way (real command lines through `main`; nothing runs a program)."""

from __future__ import annotations

import json

import pytest

from mapperopt.cli import main

DSL = "configs/circuit.dsl"


@pytest.mark.parametrize(("args", "said"), [
    (["fmt", DSL, "--", "--bench", "circuit"], "--bench is an option of `mapperopt check`"),
    (["fmt", DSL, "--", "--bench=circuit"], "--bench is an option of `mapperopt check`"),
    (["toolchain", "--cflags", "--", "--app", "x.yaml"], "--app is an option of `mapperopt check`"),
    (["doctor", "--", "--mapper", DSL], "--mapper is an option of `mapperopt toolchain` and `mapperopt run`"),
    (["build", "--", "--iters", "3"], "--iters is an option of `mapperopt tune` and `mapperopt compare`"),
])
def test_another_commands_option_after_the_separator_of_a_command_without_a_program(args, said, capsys):
    """fmt, toolchain, doctor and build said "3 files given", "Got unexpected extra arguments" or "unknown benchmark
    '--iters'" for another command's option after `--`; before `--` they named the command that takes it."""
    capsys.readouterr()
    assert main(args) == 2, args
    out, err = capsys.readouterr()
    assert said in err and f"not of {args[0]}" in err and "files given" not in err, err
    assert "unknown benchmark" not in err and "unexpected extra" not in err, err


@pytest.mark.parametrize(("args", "option"), [
    (["run", "circuit", "--once", "--json", "--iters", "3"], "--iters"),
    (["run", "circuit", "--once", "--json", "--iters=3"], "--iters"),
    (["run", "circuit", "--once", "--json", "--bench", "circuit"], "--bench"),
    (["explain", DSL, "--bench", "circuit", "--json", "--iters", "3"], "--iters"),
    (["machine", "--json", "--iters", "3"], "--iters"),
])
def test_json_error_object_for_another_commands_option_before_the_separator(args, option, capsys):
    """With --json, `-- --iters 3` printed the JSON error object, but `--iters 3` before `--` left stdout empty."""
    capsys.readouterr()
    assert main(args) == 2, args
    out, err = capsys.readouterr()
    made = json.loads(out)
    assert made["status"] == "error" and f"{option} is an option of" in made["reason"], made
    assert f"{option} is an option of" in err, err


@pytest.mark.parametrize("args", [["run", "circuit", "--once", "--json", "--mapperr", DSL],
                                  ["run", "circuit", "--json", "--once", "--mapper=x.dsl", "--itres=3"],
                                  ["run", "--app", "prog", "--json", "--once", "circuit"]])
def test_json_error_object_for_an_unknown_option_or_argument_of_run(args, capsys):
    """`run ... --json --mapperr c1.dsl` (a misspelt option) left stdout empty, while another command's option
    printed the JSON error object."""
    capsys.readouterr()
    assert main(args) == 2, args
    out, err = capsys.readouterr()
    made = json.loads(out)
    assert made["status"] == "error" and made["run_dir"] is None, made
    said = "No such option '--mapperr'" if "--mapperr" in args else "No such option '--itres=3'" \
        if "--itres=3" in args else "unexpected argument 'circuit'"
    assert said in made["reason"] and said in err, (made, err)


@pytest.mark.parametrize("args", [["machine", "--json", "--iterz", "3"],
                                  ["machine", "--json", "--iterz=3"],
                                  ["explain", DSL, "--bench", "circuit", "--json", "--iterz", "3"],
                                  ["explain", "--json", "--iterz", DSL, "--bench", "circuit"]])
def test_json_error_object_for_an_unknown_option_of_machine_or_explain(args, capsys):
    """`machine --json --iterz 3` (an option no command takes) left stdout empty, while run printed the JSON error
    object."""
    capsys.readouterr()
    assert main(args) == 2, args
    out, err = capsys.readouterr()
    made = json.loads(out)
    assert made["status"] == "error" and "No such option '--iterz" in made["reason"], made
    assert "No such option '--iterz" in err, err


def test_near_misses_get_a_pointer(capsys):
    for args, said in (
            (["check", DSL, "mapperopt.yaml"], "did you mean `--app mapperopt.yaml`?"),
            (["check", DSL, "stencl"], "did you mean `--bench stencil`?"),
            (["run", "circuit", "--start", DSL], "not of run: run measures one mapper, --mapper FILE"),
            (["tune", "circuit", "--runs=3"], "not of tune: tune makes one tuning run (--seed chooses it); compare "
                                              "makes several of each optimizer")):
        capsys.readouterr()
        assert main(args) == 2, args
        assert said in capsys.readouterr().err, args


@pytest.mark.parametrize("command", ["check", "explain", "compile"])
def test_bench_and_app_together_are_refused(command, tmp_path, capsys):
    """check, explain and compile used --app and ignored --bench silently; run refuses the two."""
    capsys.readouterr()
    assert main([command, DSL, "--bench", "stencil", "--app", str(tmp_path / "mapperopt.yaml")]) == 2
    assert "--bench and --app name two programs" in capsys.readouterr().err


def _app(tmp_path):
    spec = tmp_path / "mapperopt.yaml"
    spec.write_text("app: mine\nexecutable: ./nothere\nsizes:\n  ci: {cpus: 1}\n")
    return str(spec)


@pytest.mark.parametrize(("args", "said"), [
    (["compare", "--iters", "1", "--", "--optimizers", "guided"],
     "warning: --optimizers after `--` goes to the program of --app"),
    (["compare", "--iters", "1", "--", "--optimizer", "guided"],
     "--optimizer is an option of `mapperopt tune`, not of compare"),
    (["tune", "--", "--start=c1.dsl"], "warning: --start after `--` goes to the program of --app"),
    (["run", "--once", "--", "--iters", "3"], "--iters is an option of `mapperopt tune`"),
    (["check", DSL, "--", "--machine=2x4"], "warning: --machine after `--` goes to the program of --app"),
])
def test_a_mapperopt_option_after_the_separator_with_app_is_warned_about(args, said, tmp_path, capsys):
    """With --app the words after `--` are the user's program's, which may take `--iters`: not refused, but a
    mapperopt option there went to the program without a word (`compare -- --optimizer guided` started the full
    default comparison)."""
    capsys.readouterr()
    command, *rest = args
    main([command, *rest[:rest.index("--")], "--app", _app(tmp_path), *rest[rest.index("--"):]])
    err = capsys.readouterr().err
    assert said in err and "before `--`" in err, err
    assert err.count("warning:") == 1, err
