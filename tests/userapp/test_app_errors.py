"""Words before `--` are refused where they would have become the program's flags."""

from __future__ import annotations

import pytest

from mapperopt.benchmarks import commands as run_commands
from mapperopt.cli import main
from mapperopt.errors import MapperoptError

COMMANDS = ["check", "explain", "compile", "run", "tune", "compare"]


def argv(command: str, mapper, spec: str, *rest: str) -> list[str]:
    """`command` on the program `spec`: check, explain and compile also take the mapper file."""
    mapper_file = [str(mapper)] if command in ("check", "explain", "compile") else []
    return [command, *mapper_file, "--app", spec, *rest]


def script(tmp_path, name: str, body: str):
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def mapper(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # run, tune and compare would write their folders here
    path = tmp_path / "m.dsl"
    path.write_text("Task * CPU;\n")
    return path


@pytest.mark.parametrize("command", ["run", "tune", "compare"])
def test_words_before_dashdash_are_refused_not_passed_to_the_program(command, tmp_path, mapper, capsys):
    """`run --app FILE circuit` once ran the program with `circuit` as its first flag; check, explain and compile
    already refused words before `--`."""
    app = script(tmp_path, "app", "exit 0")
    for words, bad, takes in [(["--app", str(app), "circuit"], "circuit", "no BENCH with --app"),
                              (["--app", str(app), "circuit", "--", "-n", "1"], "circuit", "no BENCH with --app"),
                              (["circuit", "stencil"], "stencil", "one benchmark"),
                              (["circuit", "8"], "8", "one benchmark")]:
        assert main([command, *words]) == 2
        err = capsys.readouterr().err
        assert f"error: unexpected argument '{bad}': {command} takes {takes}; flags for the program go after `--`" \
            in err, (words, err)
    # An option the command does not know is not passed on either; click's suggestion stays.
    for words, bad in [(["circuit", "-p", "8"], "-p"), (["--repeat", "3", "circuit"], "--repeat")]:
        assert main([command, *words]) == 2
        err = capsys.readouterr().err
        assert f"error: No such option '{bad}': flags for the program go after `--`." in err, (words, err)
    assert "Did you mean" in err and "'--repeats'" in err
    assert not (tmp_path / "runs").exists()


def test_run_still_passes_the_flags_after_dashdash(tmp_path, mapper, monkeypatch):
    """With --app the first word after `--` lands in BENCH (click fills it first): it is still the program's."""
    seen = []

    def stop(bench, mapper, **kw):
        seen.append((str(bench), kw["extra_args"]))
        raise MapperoptError("stopped before running")

    monkeypatch.setattr(run_commands, "run_benchmark", stop)
    app = script(tmp_path, "app", "exit 0")
    assert main(["run", "--app", str(app), "--once", "--", "-n", "1"]) == 1
    assert main(["run", "circuit", "--once", "--", "-p", "8"]) == 1
    assert main(["run", "--once", "--", "circuit"]) == 1
    assert seen == [("app", ("-n", "1")), ("circuit", ("-p", "8")), ("circuit", ())]
