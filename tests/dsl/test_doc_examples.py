"""The DSL examples of the documentation pass `mapperopt check` on this machine as `run` probes it (CPUs only where
the tests run: the machine a reader starts on) and on one node of four GPUs, so that the docs cannot drift from the
language. A DSL example is fenced ```` ```dsl BENCH ```` (checked against that benchmark's tasks and launches) or
```` ```dsl ```` (a program of the reader's own: no names to check); a deliberately wrong one would be fenced
```` ```text ````. An unmarked block that parses as a mapper fails: it would escape the check."""

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from mapperopt.cli import cli
from mapperopt.dsl.errors import DslSyntaxError
from mapperopt.dsl.parser import parse

ROOT = Path(__file__).resolve().parents[2]
DOCS = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```", re.S | re.M)


def blocks():
    """(file, line, info string, text) of every fenced block of the docs."""
    for path in DOCS:
        text = path.read_text()
        for m in FENCE.finditer(text):
            yield path, text.count("\n", 0, m.start()) + 1, m[1].split(), m[2]


EXAMPLES = [pytest.param(path, line, info[1:], body, id=f"{path.name}:{line}")
            for path, line, info, body in blocks() if info[:1] == ["dsl"]]


def test_the_guide_has_examples():
    assert {p.values[0].name for p in EXAMPLES} >= {"dsl-guide.md", "dsl-reference.md"}


@pytest.mark.parametrize("path,line,bench,body", EXAMPLES)
@pytest.mark.parametrize("machine", [None, "1x4"], ids=["this-machine", "1x4"])
def test_each_example_passes_check(tmp_path, path, line, bench, body, machine):
    dsl = tmp_path / f"{path.stem}-{line}.dsl"
    dsl.write_text(body)
    args = ["check", str(dsl), *(["--bench", *bench] if bench else []), *(["--machine", machine] if machine else [])]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, f"{path.name}:{line}: mapperopt {' '.join(args)}\n{result.output}"


def test_no_mapper_escapes_the_check():
    for path, line, info, body in blocks():
        if info:
            continue
        try:
            program = parse(body)
        except DslSyntaxError:
            continue  # a command line, a grammar, ...: not a mapper
        assert not program.statements, f"{path.name}:{line}: a mapper in an unmarked block: fence it ```dsl BENCH"


def test_the_guide_names_the_codes_of_a_missing_semicolon_as_the_parser_gives_them():
    """A `;` missing at a line break and one missing at the end of the file are different errors; the guide's
    Errors section names each with the parser's code."""
    guide = (ROOT / "docs" / "dsl-guide.md").read_text()
    errors = guide[guide.index("\n## Errors"):].split("\n## ")[1]
    for source, where in (("Task * GPU\nTask * CPU;\n", "at a line break"), ("Task * GPU", "at the end of the file")):
        with pytest.raises(DslSyntaxError) as info:
            parse(source)
        assert re.search(rf"{info.value.code}: (?:(?!E\d\d\d)[^)])*{where}", errors), (info.value.code, where)
