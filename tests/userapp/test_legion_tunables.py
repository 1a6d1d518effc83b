"""A program without a mapper of its own that asks Legion's default mapper for one of its tunables (tests/app/plain.cc
reads DEFAULT_TUNABLE_LOCAL_CPUS, ID 1, as 8 bytes): discovery records the tunable, so `check` finds a DSL answer of
another size before the run aborts on it, without warning about the tunables the mapper leaves to Legion, and warns
about a DSL answer to one of Legion's IDs the program does not ask for."""

from __future__ import annotations

from userapp_support import APP_DIR

from mapperopt import toolchain
from mapperopt.benchmarks import describe_app
from mapperopt.benchmarks.harness import run_benchmark
from mapperopt.benchmarks.userapp import app_from_command
from mapperopt.cli import main
from mapperopt.optimizer.space import SearchSpace
from mapperopt.probe import probe_json


def test_a_tunable_legions_default_mapper_answers_is_discovered_and_checked(tmp_path, capsys):
    app = app_from_command(str(toolchain.build("plainapp", [APP_DIR / "plain.cc"])))
    desc = describe_app(app, "ci")
    assert desc["tunables"] == [{"id": 1, "value": 1, "type": "int64", "legion": True}]
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Tunable 1 = 2 int32;\nTask * CPU;\n")
    assert main(["check", str(mapper), "--app", str(app.exe), "--machine", "1x0x1"]) == 1
    assert ("error[E224]: tunable 1 is answered as int32 (4 bytes), but the application reads it as int64 (8 bytes)"
            in capsys.readouterr().out)
    mapper.write_text("Task * CPU;\n")  # left to Legion's default mapper, which answered it in discovery too
    assert main(["check", str(mapper), "--app", str(app.exe), "--machine", "1x0x1"]) == 0
    assert "W313" not in capsys.readouterr().out
    # Discovery lists Legion's IDs the program asks for: one of them it never asked for is no exception.
    mapper.write_text("Tunable 1 = 1;\nTunable 2 = 1;\nTask * CPU;\n")
    assert main(["check", str(mapper), "--app", str(app.exe), "--machine", "1x0x1"]) == 0
    out = capsys.readouterr().out
    assert out.count("W313") == 1 and (f"{mapper}:2:1: warning[W313]: {app.name} did not ask for tunable 2 in "
                                       f"discovery (`{app.exe.name}`)\n") in out, out
    assert "  hint: it asks for: 1\n" in out
    # tuning leaves it to Legion's default mapper, as before
    assert not any(line.startswith("Tunable") for line in SearchSpace(desc, probe_json(cached=True)).prelude())
    result = run_benchmark(app, "Tunable 1 = 3;\nTask * CPU;\n", out_dir=tmp_path / "run")  # the hint's type runs
    assert result.ok, result.reason
    assert "PLAIN_CPUS 3" in (tmp_path / "run" / "stdout.txt").read_text()
