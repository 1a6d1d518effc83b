"""A program's own check in its MAPPEROPT_RESULT lines (docs/own-app.md), on its standard output or standard error, is
read fail-safe: a "verified": false in any such line fails the execution at stage verify, and a line that cannot be
read fails it too, naming the line and why, rather than leaving an unverified "ok" that tune and compare would score."""
import json

import pytest

from mapperopt.benchmarks.harness import own_check
from mapperopt.cli import main


def script(tmp_path, body: str):
    path = tmp_path / "prog"
    path.write_text(f"#!/bin/sh\necho 'computing'\n{body}\n")
    path.chmod(0o755)
    return path


def run(tmp_path, body: str) -> tuple[int, dict]:
    exe = script(tmp_path, body)
    rc = main(["run", "--app", str(exe), "--repeats", "1", "--max-repeats", "1", "--out", str(tmp_path / "run")])
    return rc, json.loads((tmp_path / "run" / "result.json").read_text())


def test_a_false_check_in_a_second_line_fails_the_run(tmp_path):
    """One line per phase: the second phase's failed check fails the run, and AutoGuide quotes that line's check."""
    rc, result = run(tmp_path, """echo 'MAPPEROPT_RESULT {"verified": true}'
echo 'MAPPEROPT_RESULT {"verified": false, "check": {"phase": 2}}'""")
    assert (rc, result["status"], result["stage"]) == (1, "failed", "verify"), result
    feedback = json.loads((tmp_path / "run" / "feedback.json").read_text())
    assert feedback["rule"] == "verification-app-own-check", feedback
    assert '{"phase": 2}' in feedback["explanation"], feedback


@pytest.mark.parametrize("line, why", [
    ('{"verified": tru', "not valid JSON"),
    ('{"verified": "yes"}', 'says "verified": "yes", which is neither true nor false'),
    ('[true]', "not a JSON object"),
])
def test_a_line_that_cannot_be_read_fails_verification_naming_it(tmp_path, capsys, line, why):
    rc, result = run(tmp_path, f"echo 'MAPPEROPT_RESULT {line}'")
    assert (rc, result["status"], result["stage"]) == (1, "failed", "verify"), result
    assert "line 2 of the standard output" in result["reason"] and why in result["reason"], result["reason"]
    feedback = json.loads((tmp_path / "run" / "feedback.json").read_text())
    assert feedback["rule"] == "verification-app-own-check", feedback
    said = " ".join(f"{feedback['explanation']} {feedback['suggestion']}".split())
    assert "cannot be read" in said and "docs/own-app.md" in said and "--verify-pattern" not in said, feedback


def test_every_line_true_is_a_passed_own_check(tmp_path):
    rc, result = run(tmp_path, """echo 'MAPPEROPT_RESULT {"verified": true}'
echo 'MAPPEROPT_RESULT {"verified": true}'""")
    assert (rc, result["status"]) == (0, "ok"), result
    assert all(a["result"]["own_check"] for a in result["attempts"]), result


def test_a_line_without_verified_is_no_check(tmp_path):
    """Only "verified" is read: a line of other fields neither fails nor passes a check."""
    rc, result = run(tmp_path, """echo 'MAPPEROPT_RESULT {"time_s": 1.5}'""")
    assert (rc, result["status"]) == (0, "ok"), result
    assert not any(a["result"].get("own_check") for a in result["attempts"]), result


def false_fails_true_passes(tmp_path, false: str, true: str, check: str) -> None:
    """The program whose script is `false` fails at stage verify, its reason quoting `check`; that of `true` passes,
    its own check read in every execution (each run in a folder of its own under `tmp_path`)."""
    (tmp_path / "false").mkdir()
    rc, result = run(tmp_path / "false", false)
    assert (rc, result["status"], result["stage"]) == (1, "failed", "verify"), result
    assert check in result["reason"], result["reason"]
    (tmp_path / "true").mkdir()
    rc, result = run(tmp_path / "true", true)
    assert (rc, result["status"]) == (0, "ok"), result
    assert all(a["result"]["own_check"] for a in result["attempts"]), result


@pytest.mark.parametrize("prefix", ["  ", "\t", "[1,0]<stdout>:", "[1,12]<stdout>: "])
def test_an_indented_or_mpirun_tagged_line_is_read(tmp_path, prefix):
    """An indented line, or one that mpirun --tag-output prefixed with the rank ("[1,0]<stdout>:"), was ignored: its
    "verified": false left an "ok" run whose output nothing checked."""
    line = f"printf '%s\\n' '{prefix}MAPPEROPT_RESULT "
    false_fails_true_passes(tmp_path, line + """{"verified": false, "check": {"rank": 0}}'""",
                            line + """{"verified": true}'""", '{"rank": 0}')
    (tmp_path / "cut").mkdir()
    rc, result = run(tmp_path / "cut", line + """{"verified": tru'""")
    assert (rc, result["stage"]) == (1, "verify"), result
    assert "line 2 of the standard output" in result["reason"] and "not valid JSON" in result["reason"], result


def test_a_false_check_without_a_check_object_says_so(tmp_path):
    """A line `{"verified": false}` with no "check": the reason ended in ": null", as if the program had reported
    the JSON value null; it says that the line gives no "check" object."""
    rc, result = run(tmp_path, """echo 'MAPPEROPT_RESULT {"verified": false}'""")
    assert (rc, result["status"], result["stage"]) == (1, "failed", "verify"), result
    assert result["reason"] == ('the correctness check failed (exit status 0; its MAPPEROPT_RESULT line is line 2 of '
                                'the standard output): its MAPPEROPT_RESULT line says "verified": false and gives no '
                                '"check" object'), result["reason"]


def test_a_line_that_repeats_verified_cannot_be_read(tmp_path):
    """`{"verified": false, "verified": true}`: a JSON reader keeps the last value, so the run passed on a line whose
    first "verified" said false. Repeated, the key makes the line unreadable (whatever its values): it fails."""
    rc, result = run(tmp_path, """echo 'MAPPEROPT_RESULT {"verified": false, "verified": true}'""")
    assert (rc, result["status"], result["stage"]) == (1, "failed", "verify"), result
    assert "line 2 of the standard output" in result["reason"], result["reason"]
    assert '"verified" occurs twice in it' in result["reason"], result["reason"]
    feedback = json.loads((tmp_path / "run" / "feedback.json").read_text())
    assert feedback["rule"] == "verification-app-own-check" and "cannot be read" in feedback["explanation"], feedback


@pytest.mark.parametrize("line, why", [
    ('{"verified": true, "verified": true}', '"verified" occurs twice in it'),
    ('{"verified": true, "check": {}, "verified": false, "verified": true}', '"verified" occurs 3 times in it'),
])
def test_a_repeated_verified_is_unread_whatever_its_values(line, why):
    check = own_check(f"MAPPEROPT_RESULT {line}\n", "")
    assert (check.failed, check.passed) == (None, False) and why in check.unread, check


def test_only_the_lines_own_verified_counts_as_repeated():
    """A "verified" in a nested object (the check's details) is not the line's: no repeat, the line passes."""
    line = 'MAPPEROPT_RESULT {"check": {"verified": 1, "verified": 2}, "verified": true}'
    assert own_check(line, "") == (None, None, None, None, True)


@pytest.mark.parametrize("gap", ["", "\\t", "  \\t "])
def test_a_line_without_a_space_after_the_tag_is_read(tmp_path, gap):
    """`MAPPEROPT_RESULT{"verified": false}` (or a tab after the tag) was no result line, so its failed check
    passed unseen."""
    line = f"printf 'MAPPEROPT_RESULT{gap}%s\\n' "
    false_fails_true_passes(tmp_path, line + """'{"verified": false, "check": {"gap": 1}}'""",
                            line + """'{"verified": true}'""", '{"gap": 1}')


def test_a_broken_line_without_a_space_names_its_column(tmp_path):
    rc, result = run(tmp_path, """echo 'MAPPEROPT_RESULT{"verified": tru'""")
    assert (rc, result["stage"]) == (1, "verify"), result
    # the column counts from the line's start: the tag's 16 characters, then the JSON's 13 up to the cut
    assert "not valid JSON (Expecting value at column 30)" in result["reason"], result["reason"]


@pytest.mark.parametrize("line", ["MAPPEROPT_RESULTS are below", "MAPPEROPT_RESULT_FILE=out.json",
                                  "see MAPPEROPT_RESULT {\"verified\": false}"])
def test_a_word_that_starts_with_the_tag_is_no_result_line(tmp_path, line):
    """Only the tag itself, followed by whitespace, `{` or the line's end, makes a result line; a longer word
    (or the tag inside a sentence) is the program's own text."""
    rc, result = run(tmp_path, f"echo '{line}'")
    assert (rc, result["status"]) == (0, "ok"), result


def test_a_bare_tag_cannot_be_read(tmp_path):
    """The tag alone on its line (the JSON went to the next line, say) was meant as a result line."""
    rc, result = run(tmp_path, """printf 'MAPPEROPT_RESULT\\n{"verified": false}\\n'""")
    assert (rc, result["stage"]) == (1, "verify"), result
    assert "line 2 of the standard output, 'MAPPEROPT_RESULT': it is not valid JSON" in result["reason"], result


def test_a_false_check_on_standard_error_fails_the_run(tmp_path):
    """A program that prints its check with fprintf(stderr, ...): the line was not read, so its failed check passed
    unseen. It fails at stage verify, the reason and AutoGuide naming the line of the standard error."""
    rc, result = run(tmp_path, """echo 'MAPPEROPT_RESULT {"verified": false, "check": {"err": 1}}' >&2""")
    assert (rc, result["status"], result["stage"]) == (1, "failed", "verify"), result
    assert result["reason"] == ('the correctness check failed (exit status 0; its MAPPEROPT_RESULT line is line 1 of '
                                'the standard error): {"err": 1}'), result["reason"]
    feedback = json.loads((tmp_path / "run" / "feedback.json").read_text())
    assert feedback["rule"] == "verification-app-own-check", feedback
    assert feedback["explanation"] == ('prog ran, but its own correctness check failed (its MAPPEROPT_RESULT line, '
                                       'line 1 of the standard error, says "verified": false; exit status 0). It '
                                       'reported: {"err": 1}.'), feedback
    # the file to read is the standard error's, where the line is (the standard output holds only "computing")
    stderr = tmp_path / "run" / result["attempts"][-1]["stderr"]
    assert stderr.read_text().splitlines()[0].startswith("MAPPEROPT_RESULT "), stderr.read_text()
    assert feedback["suggestion"].endswith(f"Its standard error, with that line (line 1), is in {stderr}."), feedback
    assert "stdout" not in feedback["suggestion"], feedback


def test_a_false_check_on_standard_output_names_its_line_and_file(tmp_path):
    """As on the standard error: the reason and AutoGuide name the line's number, and the file to read."""
    rc, result = run(tmp_path, """echo 'MAPPEROPT_RESULT {"verified": false, "check": {"out": 1}}'""")
    assert (rc, result["stage"]) == (1, "verify"), result
    assert result["reason"] == ('the correctness check failed (exit status 0; its MAPPEROPT_RESULT line is line 2 of '
                                'the standard output): {"out": 1}'), result["reason"]
    stdout = tmp_path / "run" / result["attempts"][-1]["stdout"]
    assert stdout.read_text().splitlines()[1].startswith("MAPPEROPT_RESULT "), stdout.read_text()
    feedback = json.loads((tmp_path / "run" / "feedback.json").read_text())
    assert "its MAPPEROPT_RESULT line, line 2 of the standard output, says" in feedback["explanation"], feedback
    assert feedback["suggestion"].endswith(f"Its standard output, with that line (line 2), is in {stdout}."), feedback


def test_a_true_check_on_standard_error_is_a_passed_own_check(tmp_path):
    rc, result = run(tmp_path, """echo '[1,0]<stderr>:MAPPEROPT_RESULT {"verified": true}' >&2""")
    assert (rc, result["status"]) == (0, "ok"), result
    assert all(a["result"]["own_check"] for a in result["attempts"]), result


def test_an_unreadable_line_on_standard_error_names_it(tmp_path):
    rc, result = run(tmp_path, """echo 'MAPPEROPT_RESULT {"verified": true}'
echo 'warming up' >&2
echo 'MAPPEROPT_RESULT {"verified": 1}' >&2""")
    assert (rc, result["stage"]) == (1, "verify"), result
    assert "line 2 of the standard error, 'MAPPEROPT_RESULT {\"verified\": 1}'" in result["reason"], result["reason"]


def test_a_false_check_on_standard_output_is_quoted_before_one_on_standard_error():
    """The first failed line is the standard output's, then the standard error's."""
    check = own_check('MAPPEROPT_RESULT {"verified": false, "check": "out"}',
                      'MAPPEROPT_RESULT {"verified": false, "check": "err"}')
    assert check == ({"verified": False, "check": "out"}, "line 1 of the standard output", '"out"', None, False)
    assert own_check("", 'x\nMAPPEROPT_RESULT {"verified": false}').failed_at == "line 2 of the standard error"


def test_realm_log_lines_on_standard_error_are_no_result_lines():
    """Realm's and Legion's log lines (`-logfile stderr`) start with `[node - thread]`: a message that quotes the
    tag is not a result line, nor is an mpirun tag of another form."""
    stderr = ('[0 - 7f3a2c1fe740]    0.000123 {3}{app}: MAPPEROPT_RESULT {"verified": false}\n'
              '[0 - 7f3a2c1fe740]    0.000200 {4}{runtime}: MAPPEROPT_RESULT\n')
    assert own_check("", stderr) == (None, None, None, None, False)


def test_a_legion_programs_failed_check_on_standard_error_fails_the_run(tmp_path):
    """Circuit, whose own check fails (-test-corrupt), its standard output sent to the standard error, where Realm's
    and Legion's log lines go too (`-logfile stderr`, info level): the run fails at stage verify, naming that line and
    quoting the check; Circuit's check passing there counts as its own check."""
    from mapperopt.benchmarks import build_app, load_config

    args = " ".join(f"{k} {v}" for k, v in load_config("circuit").size("ci").args.items())
    wrapper = tmp_path / "circuit-err"
    wrapper.write_text(f'#!/bin/sh\nexec {build_app("circuit")} {args} -level 2 "$@" >&2\n')
    wrapper.chmod(0o755)
    out = tmp_path / "corrupt"
    assert main(["run", "--app", f"{wrapper} -test-corrupt", "--repeats", "1", "--max-repeats", "1",
                 "--out", str(out)]) == 1
    result = json.loads((out / "result.json").read_text())
    stderr = (out / result["attempts"][-1]["stderr"]).read_text().split("\n")
    (number,) = [n for n, line in enumerate(stderr, 1) if line.startswith("MAPPEROPT_RESULT ")]
    assert sum(line.startswith("[0 - ") for line in stderr) > 10, stderr  # Realm's log lines are there
    assert result["stage"] == "verify", result
    assert result["reason"].startswith(f"the correctness check failed (exit status 2; its MAPPEROPT_RESULT line is "
                                       f'line {number} of the standard error): {{"kind": "reference", '), result
    feedback = json.loads((out / "feedback.json").read_text())
    assert feedback["rule"] == "verification-app-own-check", feedback
    assert f"line {number} of the standard error, says \"verified\": false" in feedback["explanation"], feedback
    assert main(["run", "--app", str(wrapper), "--repeats", "1", "--max-repeats", "1", "--out", str(tmp_path / "ok")]
                ) == 0
    result = json.loads((tmp_path / "ok" / "result.json").read_text())
    assert all(a["result"]["own_check"] for a in result["attempts"]), result


def test_a_line_that_a_carriage_return_rewrites_is_read_and_numbered_as_an_editor_numbers_it(tmp_path):
    """Progress output rewritten in place (`step 40/40\\rMAPPEROPT_RESULT {...}`): the result line is read as a
    terminal shows it, on line 2 of the standard output, which was named line 3 (Python's text files end a line at
    a carriage return); the metric is read from such a line too."""
    (tmp_path / "false").mkdir()
    rc, result = run(tmp_path / "false", r"""printf 'step 40/40\rMAPPEROPT_RESULT {"verified": false}\n'""")
    assert (rc, result["status"], result["stage"]) == (1, "failed", "verify"), result
    assert "line 2 of the standard output" in result["reason"], result["reason"]
    exe = script(tmp_path, r"""printf 'step 1/2\rstep 2/2\relapsed: 12.5 ms\n'
printf 'step 40/40\rMAPPEROPT_RESULT {"verified": true}\n'""")
    assert main(["run", "--app", str(exe), "--metric", "^elapsed: ([0-9.]+) ms$", "--unit", "ms", "--repeats", "1",
                 "--max-repeats", "1", "--out", str(tmp_path / "run")]) == 0
    (attempt,) = json.loads((tmp_path / "run" / "result.json").read_text())["attempts"]
    assert (attempt["result"]["metric"], attempt["result"]["own_check"]) == (12.5, True), attempt


def test_own_check_reads_the_parts_of_a_line_a_carriage_return_rewrites():
    """As the text of a pipe (`run_in_group`) gives them: a carriage return alone does not end the line."""
    assert own_check('computing\nstep 40/40\rMAPPEROPT_RESULT {"verified": true}\n', "").passed
    check = own_check('step 1\rMAPPEROPT_RESULT {"verified": false}\r\n', "")
    assert (check.failed, check.failed_at) == ({"verified": False}, "line 1 of the standard output"), check
