"""DSL files that are not UTF-8 text, or begin with a byte order mark, as every command reads them."""

import pytest
from click.testing import CliRunner

from mapperopt.cli import cli
from mapperopt.errors import MapperoptError


@pytest.mark.parametrize("args", [["check"], ["fmt"], ["compile"], ["tune", "circuit", "--iters", "1", "--start"],
                                  ["compare", "circuit", "--iters", "1", "--start"],
                                  ["run", "circuit", "--once", "--mapper"]])
def test_a_file_that_is_not_utf8_is_one_error_at_its_first_bad_byte(tmp_path, args, monkeypatch):
    """E112 with the line (its bad byte shown as U+FFFD) and a caret, as every syntax error, before any other
    output (`run` says it before its "Running" line)."""
    monkeypatch.chdir(tmp_path)  # tune and compare: their runs/ folder
    path = tmp_path / "latin1.dsl"
    path.write_bytes(b"Task * CPU;\nTask t GPU; # caf\xe9\n")
    result = CliRunner().invoke(cli, [*args, str(path)])
    assert result.exit_code == 1, result.output
    text = result.output + (str(result.exception) if isinstance(result.exception, MapperoptError) else "")
    assert text.lstrip().removeprefix("error: ").startswith(
        f"{path}:2:18: error[E112]: not UTF-8 text (byte 0xe9)\n"
        "  2 | Task t GPU; # caf\ufffd\n"
        "    |                  ^\n"
        "  hint: a DSL file is UTF-8 text: save it as UTF-8 (e.g. iconv -f latin1 -t utf-8)"), text


def test_a_leading_byte_order_mark_is_accepted_and_fmt_drops_it(tmp_path):
    path = tmp_path / "bom.dsl"
    path.write_bytes("\ufeffTask * CPU;\n".encode())
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 0 and "E104" not in result.output, result.output
    # fmt's canonical text has no byte order mark: --check lists the file, --write removes it
    assert CliRunner().invoke(cli, ["fmt", "--check", str(path)]).exit_code == 1
    assert CliRunner().invoke(cli, ["fmt", "--write", str(path)]).exit_code == 0
    assert path.read_bytes() == b"Task * CPU;\n"
