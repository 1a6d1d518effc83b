"""Loading and checking rule catalogs; matching order and conditions on real captured output."""

from __future__ import annotations

import textwrap

import pytest
from captured_runs import load

from mapperopt.autoguide import explain, load_catalog
from mapperopt.errors import MapperoptError

HEAD = """\
schema: mapperopt.autoguide-rules/1
generic: {explain: "unknown ({stage})", suggest: "look"}
rules:
"""


def catalog(tmp_path, rules: str, noise: str = ""):
    path = tmp_path / "rules.yaml"
    path.write_text(noise + HEAD + textwrap.indent(textwrap.dedent(rules), "  "))
    return load_catalog(path)


def test_packaged_catalog_loads():
    c = load_catalog()
    assert len(c.rules) > 30
    assert len({r.id for r in c.rules}) == len(c.rules)


@pytest.mark.parametrize("rules, message", [
    ("- {id: a, stages: [run], match: 'x', category: c, explain: e, suggest: s, colour: red}", "unknown key"),
    ("- {id: a, stages: [running], match: 'x', category: c, explain: e, suggest: s}", "unknown stage"),
    ("- {id: a, stages: [run], match: '(', category: c, explain: e, suggest: s}", "invalid regular expression"),
    ("- {id: a, stages: [run], match: 'x', category: c, explain: '{who}', suggest: s}", r"template field\(s\) \['who'\]"),
    ("- {id: a, stages: [run], match: 'x', category: c, explain: 'a } b', suggest: s}", "bad template"),
    ("- {id: a, stages: [run], match: 'x', category: c, explain: e, suggest: s, edits: [{op: paint}]}", "unknown edit op"),
    ("- {id: a, stages: [run], category: c, explain: e}", "missing key 'suggest'"),
    ("- {id: a, stages: [timeout], needs: [slowness], category: c, explain: e, suggest: s}", "'needs' names"),
    ("- {id: a, stages: [run], category: c, explain: e, suggest: s}\n- {id: a, stages: [run], category: c, "
     "explain: e, suggest: s}", "used twice"),
])
def test_malformed_catalogs_are_rejected_naming_the_rule(tmp_path, rules, message):
    with pytest.raises(MapperoptError, match=message):
        catalog(tmp_path, rules)


def test_not_a_catalog(tmp_path):
    (tmp_path / "x.yaml").write_text("rules: [")
    with pytest.raises(MapperoptError, match="not valid YAML"):
        load_catalog(tmp_path / "x.yaml")
    (tmp_path / "y.yaml").write_text("rules: []\n")
    with pytest.raises(MapperoptError, match="not a rule catalog"):
        load_catalog(tmp_path / "y.yaml")


def test_first_matching_rule_wins_and_conditions_apply(tmp_path):
    _, result = load("probe-unknown-ll-flag")  # "ERROR: unrecognized lowlevel option" then an assertion, exit -6
    c = catalog(tmp_path, """\
        - {id: wrong-stage, stages: [timeout], match: 'Assertion', category: c, explain: e, suggest: s}
        - {id: wrong-exit, stages: [start, run], exit_codes: [139], match: 'Assertion', category: c, explain: e,
           suggest: s}
        - {id: needs-dsl, stages: [start, run], dsl: 'Task', match: 'Assertion', category: c, explain: e, suggest: s}
        - {id: absent, stages: [start, run], absent: 'lowlevel', match: 'Assertion', category: c, explain: e,
           suggest: s}
        - {id: missing-also, stages: [start, run], match: 'ERROR', also: ['nowhere'], category: c, explain: e,
           suggest: s}
        - {id: assertion, stages: [start, run], exit_codes: [-6], match: 'Assertion `(?P<expr>.*). failed',
           maybe: ['nowhere (?P<x>.*)'], category: crash, explain: "'{expr}'{x}", suggest: s}
        - {id: later, stages: [start, run], match: 'ERROR', category: c, explain: e, suggest: s}
        """)
    fb = explain(result, catalog=c)
    assert (fb.rule, fb.category, fb.explanation) == ("assertion", "crash", "'0'")


def test_noise_lines_are_never_the_error(tmp_path):
    """The lines the harness takes as no message of the program's (`harness.is_harmless`: here the libcuda
    stand-in's) are noise under any catalog, one without `noise` too; a catalog's `noise` adds its own."""
    _, result = load("probe-unknown-lg-flag")
    assert "We are not able to discover the CUDA resources" in result.log
    rule = "- {id: gpu, stages: [start, run], match: '\\{5\\}\\{gpu\\}', category: c, explain: e, suggest: s}"
    fb = explain(result, catalog=catalog(tmp_path, rule))
    assert fb.rule == "generic" and "CUDA" not in fb.raw_excerpt
    rule = "- {id: startup, stages: [start, run], match: 'STARTUP', category: c, explain: e, suggest: s}"
    assert explain(result, catalog=catalog(tmp_path, rule)).rule == "startup"
    quiet = catalog(tmp_path, rule, noise="noise: ['unknown Legion option']\n")
    fb = explain(result, catalog=quiet)
    assert fb.rule == "generic" and "-lg:foo" not in fb.raw_excerpt