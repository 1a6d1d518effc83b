"""What `tune --help` and `compare --help` say about resuming and the start program."""

from __future__ import annotations

from click.testing import CliRunner

from mapperopt.optimizer.commands import tune
from mapperopt.optimizer.compare import compare


def _help(command) -> str:
    result = CliRunner().invoke(command, ["--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def test_tune_help_says_resume_extends_a_finished_run():
    assert "a finished run is extended when --iters is larger than its total" in _help(tune)


def test_compare_help_says_it_starts_from_a_random_program():
    text = _help(compare)
    assert "starting from a random program by default" in text and "`tune` starts from the default mapping" in text
    assert "[default: random]" in text
