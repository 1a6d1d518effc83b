"""One meaning per flag name across the command line: `--repeats` counts the executions of each mapper wherever it
appears; compare's tuning runs per optimizer are `--runs` (its old `--repeats` still works, with a warning)."""

from __future__ import annotations

import click
from click.testing import CliRunner

from mapperopt.cli import COMMANDS, cli


def _options(name: str) -> dict[str, click.Option]:
    command = cli.get_command(click.Context(cli), name)
    return {opt: p for p in command.params if isinstance(p, click.Option) and not p.hidden for opt in p.opts}


def test_repeats_means_executions_in_every_command():
    having = {name: _options(name)["--repeats"] for name in COMMANDS if "--repeats" in _options(name)}
    assert sorted(having) == ["run", "tune"]
    assert all("executions" in opt.help for opt in having.values())
    runs = _options("compare")["--runs"]
    assert "Tuning runs per optimizer" in runs.help


def test_compare_old_repeats_is_runs_with_a_warning(tmp_path):
    base = ["compare", "circuit", "--optimizers", "random", "--report-only", "--runs-dir", str(tmp_path)]
    result = CliRunner().invoke(cli, [*base, "--repeats", "2"])
    assert "warning: compare's --repeats is deprecated: say --runs 2 (tuning runs per optimizer)" in result.output
    assert "no comparison of circuit" in str(result.exception)  # then it goes on as --runs 2 would
    result = CliRunner().invoke(cli, [*base, "--repeats", "2", "--runs", "3"])
    assert "--runs 3 and --repeats 2 disagree" in str(result.exception)
