"""A program's own check in its MAPPEROPT_RESULT lines (docs/own-app.md) is read fail-safe: a "verified": false in any
such line fails the execution at stage verify, and a line that cannot be read fails it too, naming the line and why,
rather than leaving an unverified "ok" that tune and compare would score."""
import json

import pytest

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


@pytest.mark.parametrize("prefix", ["  ", "\t", "[1,0]<stdout>:", "[1,12]<stdout>: "])
def test_an_indented_or_mpirun_tagged_line_is_read(tmp_path, prefix):
    """An indented line, or one that mpirun --tag-output prefixed with the rank ("[1,0]<stdout>:"), was ignored: its
    "verified": false left an "ok" run whose output nothing checked."""
    line = f"printf '%s\\n' '{prefix}MAPPEROPT_RESULT "
    (tmp_path / "false").mkdir()
    rc, result = run(tmp_path / "false", line + """{"verified": false, "check": {"rank": 0}}'""")
    assert (rc, result["status"], result["stage"]) == (1, "failed", "verify"), result
    assert '{"rank": 0}' in result["reason"], result["reason"]
    (tmp_path / "true").mkdir()
    rc, result = run(tmp_path / "true", line + """{"verified": true}'""")
    assert (rc, result["status"]) == (0, "ok"), result
    assert all(a["result"]["own_check"] for a in result["attempts"]), result
    (tmp_path / "cut").mkdir()
    rc, result = run(tmp_path / "cut", line + """{"verified": tru'""")
    assert (rc, result["stage"]) == (1, "verify"), result
    assert "line 2 of the standard output" in result["reason"] and "not valid JSON" in result["reason"], result


def test_a_false_check_without_a_check_object_says_so(tmp_path):
    """A line `{"verified": false}` with no "check": the reason ended in ": null", as if the program had reported
    the JSON value null; it says that the line gives no "check" object."""
    rc, result = run(tmp_path, """echo 'MAPPEROPT_RESULT {"verified": false}'""")
    assert (rc, result["status"], result["stage"]) == (1, "failed", "verify"), result
    assert result["reason"] == ('the correctness check failed (exit status 0): its MAPPEROPT_RESULT line says '
                                '"verified": false and gives no "check" object'), result["reason"]
