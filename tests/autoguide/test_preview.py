"""`mapperopt explain --apply`: a person previews AutoGuide's edits of a real failed run before taking them."""

from mapperopt.benchmarks import run_benchmark
from mapperopt.cli import main

BAD = """Task * CPU;
Region * * CPU SYSMEM;
Layout * * * SOA C_order;
"""


def test_preview_applies_the_suggested_layout_fix(tmp_path, capsys):
    mapper = tmp_path / "bad.dsl"
    mapper.write_text(BAD)
    result = run_benchmark("stencil", mapper, size="ci", out_dir=tmp_path / "run")
    assert result.stage == "check" and "error[E223]" in result.reason  # refused before any execution
    assert main(["explain", str(mapper), "--bench", "stencil", "--machine", "1x0x1", "--apply", result.run_dir]) == 0
    out = capsys.readouterr().out
    edited = out.split("\n\n")[0]
    assert "C_order" not in edited and "Layout" not in edited.replace("Layout * * * SOA F_order;", "")
    assert "stencil (index launch" in out
    fixed = tmp_path / "fixed.dsl"
    fixed.write_text(edited + "\n")
    assert run_benchmark("stencil", fixed, size="ci", min_time_s=0, out_dir=tmp_path / "run2").ok


def test_preview_without_edits_is_a_clear_error(tmp_path, capsys):
    mapper = tmp_path / "ok.dsl"
    mapper.write_text("Task * CPU;\n")
    feedback = tmp_path / "feedback.json"
    feedback.write_text('{"schema": "mapperopt.feedback/1", "edits": []}')
    assert main(["explain", str(mapper), "--bench", "stencil", "--machine", "1x0x1", "--apply", str(feedback)]) == 1
    assert "suggests no edit" in capsys.readouterr().err


def test_preview_of_a_memory_size_edit_names_the_size_the_mapper_keeps(tmp_path, capsys):
    """A capacity failure's edit sizes a memory of the run: the preview says so, with the option and its value, next
    to the (unchanged) mapper."""
    mapper = tmp_path / "ok.dsl"
    mapper.write_text("Task * CPU;\n")
    feedback = tmp_path / "feedback.json"
    feedback.write_text('{"schema": "mapperopt.feedback/1", '
                        '"edits": [{"op": "set_memory_size", "option": "csize", "mb": 3584}]}')
    assert main(["explain", str(mapper), "--bench", "stencil", "--machine", "1x0x1", "--apply", str(feedback)]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("Task * CPU;\n")
    assert ("the edit set_memory_size changes the run's memory size, not the mapper: run with --csize 3584 "
            "(Legion's -ll:csize 3584)") in captured.err, captured.err
