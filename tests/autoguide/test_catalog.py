"""Loading and checking rule catalogs; matching order and conditions on real captured output."""

from __future__ import annotations

import dataclasses
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
    ("- {id: a, stages: [run], match: 'x', category: c, explain: '{who}', suggest: s}",
     r"template field\(s\) \['who'\]"),
    ("- {id: a, stages: [run], match: 'x', category: c, explain: 'a } b', suggest: s}", "bad template"),
    ("- {id: a, stages: [run], match: 'x', category: c, explain: e, suggest: s, edits: [{op: paint}]}",
     "unknown edit op"),
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

def test_the_packaged_catalog_holds_every_text_the_code_has_and_the_docs_name_each_section():
    """Every text section the loader knows (`TEXT_SECTIONS`: the layout suspects' texts of a wrong answer, a crash or
    a timeout included) is in the packaged rules.yaml with exactly the keys the code fills, and docs/autoguide.md's
    catalog section names each section and key, so that a custom catalog can replace them."""
    import re
    from pathlib import Path

    import yaml

    from mapperopt.autoguide.catalog import TEXT_SECTIONS

    root = Path(__file__).resolve().parents[2]
    data = yaml.safe_load((root / "autoguide" / "rules.yaml").read_text())
    assert "layout" in TEXT_SECTIONS, sorted(TEXT_SECTIONS)
    for section, fields in TEXT_SECTIONS.items():
        keys = set(data.get(section) or {})
        assert keys == set(fields), (section, sorted(keys ^ set(fields)))
    doc = (root / "docs" / "autoguide.md").read_text().split("## 3. The rule catalog")[1].split("\n## ")[0]
    for section, fields in TEXT_SECTIONS.items():
        assert f"`{section}`" in doc, section
    for key in TEXT_SECTIONS["layout"]:
        assert re.search(rf"`{key}`", doc), key


def test_a_catalogs_layout_texts_replace_the_packaged_ones(tmp_path):
    """A custom catalog's `layout` texts are those a crash under a Layout change gets (the captured Realm abort under
    `Layout spmv 2 * AOS F_order Align==64;`); a section missing a key is refused, naming it."""
    from mapperopt.autoguide.catalog import TEXT_SECTIONS

    _, result = load("graph-aos_align_reduction")
    texts = {key: f"<{key}: " + " ".join(f"{{{f}}}" for f in fields) + ">"
             for key, fields in TEXT_SECTIONS["layout"].items()}
    path = tmp_path / "rules.yaml"
    path.write_text(HEAD.replace("rules:\n", "layout:\n") + "".join(f"  {k}: {v!r}\n" for k, v in texts.items())
                    + "rules:\n- {id: timeout, stages: [timeout], category: timeout, explain: t, suggest: s}\n")
    fb = explain(result, catalog=load_catalog(path))
    assert "<suspect_crash: `Layout spmv 2 * AOS F_order Align==64;` (line 2 of the mapper)>" in fb.explanation, fb
    assert "<in_copies: realm/transfer/address_list.cc:152>" in fb.explanation, fb.explanation
    assert fb.suggestion.startswith("<try_crash: `Layout spmv 2 * SOA F_order;` in place of "), fb.suggestion
    ok = dataclasses.replace(result.attempts[0], exit_code=0)
    fb = explain(dataclasses.replace(result, attempts=(ok, result.attempts[0])), catalog=load_catalog(path))
    assert "<intermittent: 1 execution 2>" in fb.explanation and "<intermittent_suggest: >" in fb.suggestion, fb
    _, timeout = load("stencil-timeout_limit")
    fb = explain(dataclasses.replace(timeout, dsl="Task * CPU;\nLayout * * * AOS C_order;\n"),
                 catalog=load_catalog(path))
    assert "<suspect_timeout: `Layout * * * AOS C_order;` (line 2 of the mapper)>" in fb.explanation, fb
    assert "<try_timeout: `Layout * * * SOA F_order;` in place of `Layout * * * AOS C_order;`>" in fb.suggestion, fb
    path.write_text(HEAD.replace("rules:\n", "layout:\n  suspect_crash: x\n") + "rules: []\n")
    with pytest.raises(MapperoptError, match="'layout' needs a 'suspect_verify' text"):
        load_catalog(path)
