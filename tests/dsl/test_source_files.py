"""DSL files that are not UTF-8 text, or begin with a byte order mark, as every command reads them."""

import pytest
from click.testing import CliRunner

from mapperopt.cli import cli, main
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


@pytest.mark.parametrize("args", [["check"], ["toolchain", "--mapper"], ["tune", "circuit", "--iters", "1", "--start"],
                                  ["compare", "circuit", "--iters", "1", "--start"]])
@pytest.mark.parametrize("source, code", [(b"Task * CPU;\nTask t GPU; # caf\xe9\n", "E112"),
                                          (b"Task * CPU\n", "E105"), (b"IndexTaskMap t nofunc;\n", "E200")])
def test_a_dsl_error_reads_as_checks_in_every_command_that_reads_the_file(tmp_path, args, source, code, capsys,
                                                                           monkeypatch):
    """A DSL error of the file a command reads is printed as `check` prints it: the diagnostic first (no `error: `
    before it, as the generic error handler writes), then the summary line (toolchain: on stderr, its stdout is
    eval'd). `tune` and `compare` check a start file before they measure anything: after E112, which they say
    before any output, their error says so on its first line, then the diagnostics as `check` prints them."""
    monkeypatch.chdir(tmp_path)  # tune and compare: their runs/ folder
    path = tmp_path / "my.dsl"
    path.write_bytes(source)
    assert main([*args, str(path)]) == 1
    out, err = capsys.readouterr()
    err = out + err if args == ["check"] else err  # check reports a check error on stdout, as its result
    if args[0] in ("tune", "compare") and code != "E112":
        # checked against the benchmark, as `check --bench circuit` does: 't' is not one of its tasks (E202) too
        assert err.startswith("error: the start program has") and "nothing was measured" in err.splitlines()[0], err
        assert err.splitlines()[1].startswith(f"{path}:") and f"error[{code}]" in err, err
        assert f"\n{path}: {1 if code == 'E105' else 2} error(s)" in err, err
        assert f"`mapperopt check {path} --bench circuit` checks it alone" in err, err  # the command, to paste
        return
    assert err.startswith(f"{path}:") and f"error[{code}]" in err.splitlines()[0], err
    assert f"\n{path}: 1 error(s), 0 warning(s)" in err, err


@pytest.mark.parametrize("args", [["check"], ["explain"], ["compile"], ["fmt"], ["fmt", "--write"]])
def test_a_folder_where_a_dsl_file_goes_is_refused_with_its_dsl_files_named(tmp_path, args):
    """No command formats or checks a folder's files by itself: each says the argument is a folder and names the
    folder's DSL files to give instead (fmt: all of them at once, with a shell pattern)."""
    folder = tmp_path / "mappers"
    folder.mkdir()
    for name in ("b.dsl", "a.dsl", "notes.txt"):
        (folder / name).write_text("Task * CPU;\n")
    result = CliRunner().invoke(cli, [*args, str(folder)])
    assert result.exit_code == 2, result.output
    assert f"'{folder}' is a folder" in result.output and f"{folder / 'a.dsl'}, {folder / 'b.dsl'}" in result.output
    assert "notes.txt" not in result.output and "is a directory" not in result.output
    assert (f"mapperopt fmt --check {folder}/*.dsl" in result.output) == (args[0] == "fmt"), result.output
    # Given with a trailing slash (as a shell completes it): the pattern has one slash, not `mappers//*.dsl`.
    result = CliRunner().invoke(cli, [*args, f"{folder}/"])
    assert "//" not in result.output and (f"mapperopt fmt --check {folder}/*.dsl" in result.output) == \
        (args[0] == "fmt"), result.output
    for name in ("a.dsl", "b.dsl"):
        (folder / name).unlink()
    assert "it holds no .dsl file" in CliRunner().invoke(cli, [*args, str(folder)]).output


@pytest.mark.parametrize("args", [["check"], ["fmt"], ["compile"], ["run", "circuit", "--once", "--mapper"],
                                  ["tune", "circuit", "--iters", "1", "--start"],
                                  ["compare", "circuit", "--iters", "1", "--start"]])
def test_an_endless_file_is_read_only_up_to_the_size_limit(args, tmp_path):
    """/dev/zero was read whole: all the machine's memory, then a MemoryError traceback. Under a 1 GiB address space
    limit (far above what a bounded read needs, far below what /dev/zero would take) the command says the limit.
    `run --mapper` and `--start` said "not found" of this file that exists."""
    import resource
    import subprocess
    import sys
    from pathlib import Path

    def limit_memory():
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    exe = Path(sys.executable).with_name("mapperopt")
    done = subprocess.run([str(exe), *args, "/dev/zero"], capture_output=True, text=True, timeout=120,
                          preexec_fn=limit_memory, cwd=tmp_path)  # tune and compare: their runs/ folder
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("error: /dev/zero has more than 1,048,576 bytes: a DSL file has at most 1 MiB"), \
        done.stderr
    assert "Traceback" not in done.stderr


def test_a_file_over_the_size_limit_is_refused_with_its_size(tmp_path):
    path = tmp_path / "huge.dsl"
    path.write_text("Task * CPU;\n" + "".join(f"x{i} = {i} + 1;\n" for i in range(100_000)))
    size = path.stat().st_size
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 1, result.output
    assert result.exception.message == f"{path} has {size:,} bytes: a DSL file has at most 1 MiB (1,048,576 bytes)", \
        result.output
    assert "statements" in result.exception.hint


def test_control_characters_are_shown_escaped_in_the_source_line(tmp_path):
    """NUL bytes were written raw to the terminal in the source line under E104; each control character is shown as
    its escape, and the caret stays under the character it points at."""
    path = tmp_path / "nul.dsl"
    path.write_bytes(b"Task * CPU;\n\x01\x00Region * * CPU SYSMEM;\n")
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 1, result.output
    assert (f"{path}:2:1: error[E104]: unrecognized character U+0001\n"
            "  2 | \\x01\\x00Region * * CPU SYSMEM;\n"
            "    | ^\n") in result.output, result.output
    path.write_bytes(b"Task * CPU;\n\x07\tx = \x00\xe9;\n")  # E112 comes before parsing: its caret is after two
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert (f"{path}:2:8: error[E112]: not UTF-8 text (byte 0xe9)\n"
            "  2 | \\x07\tx = \\x00\ufffd;\n"
            "    |     \t        ^\n") in result.output, result.output


@pytest.mark.parametrize("command", ["tune", "compare"])
def test_a_folder_given_as_start_is_said_to_be_a_folder(tmp_path, command, capsys, monkeypatch):
    """--start of a folder said "not found" (it exists), and once devices were read as DSL files, "Is a directory"
    without a hint."""
    monkeypatch.chdir(tmp_path)  # their runs/ folder
    (tmp_path / "mappers").mkdir()
    assert main([command, "circuit", "--iters", "1", "--start", "mappers"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: --start mappers is a folder, not a DSL file\n  hint: use --start default, random "
                          "or a DSL file"), err


@pytest.mark.parametrize("brk", ["\u2028", "\u0085", "\x0c", "\x1e"])
def test_the_excerpt_shows_the_line_the_error_is_on_after_a_character_python_breaks_lines_at(tmp_path, brk):
    """A U+2028 (pasted from a web page), NEL, form feed or record separator in a comment ends no line of the DSL,
    but the excerpt split the text where Python's str.splitlines() does: it showed the comment's tail as line 2."""
    path = tmp_path / "breaks.dsl"
    path.write_text(f"Task * CPU; # a{brk} x\nRegion * * CPU SYSMEMM;\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 1, result.output
    assert f"{path}:2:16: error[E107]" in result.output, result.output
    assert "  2 | Region * * CPU SYSMEMM;\n    |                ^" in result.output, result.output
    # An error at such a character shows it escaped, as other control characters are, not the line cut there.
    path.write_text(f"Task * CPU;\nTask {brk} * CPU;\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", str(path)])
    shown = f"\\x{ord(brk):02x}" if ord(brk) < 0x100 else f"\\u{ord(brk):04x}"
    assert f"{path}:2:6: error[E104]" in result.output, result.output
    assert f"  2 | Task {shown} * CPU;\n    |      ^" in result.output, result.output


@pytest.mark.parametrize("brk", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_fmt_keeps_the_line_breaks_of_the_file(tmp_path, brk):
    """A formatted file with Windows (CRLF, as git's autocrlf checks it out) or old-Mac (CR) line breaks passes
    `fmt --check`, and `fmt` prints and `fmt --write` writes a file's text with its own line breaks (it wrote LF
    ones, so that `fmt --check` in CI failed on every file of such a checkout)."""
    canonical = "# placement\nTask * GPU,CPU;\n\ndef f(Task t) {\n    return 1;\n}\n"
    tidy, messy = tmp_path / "tidy.dsl", tmp_path / "messy.dsl"
    tidy.write_bytes(canonical.replace("\n", brk).encode())
    messy.write_bytes(canonical.replace("GPU,CPU;", "GPU ,  CPU ;").replace("\n", brk).encode())
    result = CliRunner().invoke(cli, ["fmt", "--check", str(tidy)])
    assert result.exit_code == 0 and result.output == "", result.output
    printed = CliRunner().invoke(cli, ["fmt", str(messy)]).stdout_bytes
    assert printed == tidy.read_bytes(), printed
    assert CliRunner().invoke(cli, ["fmt", "--write", str(messy)]).exit_code == 0
    assert messy.read_bytes() == tidy.read_bytes()
