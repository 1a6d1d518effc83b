"""AutoGuide: feedback on a mapper evaluation that an optimizer, or a person, can act on (docs/autoguide.md).

    fb = explain(result, level="suggest", best=None, baselines={"default": 1.2, "expert": 2.3})   # Feedback
    text = feedback_text(fb, result)            # "Execution: ...\\nExplain: ...\\nSuggest: ..."
    program = apply_edits(program, fb.edits)    # the suggestion applied to the DSL AST
    text = apply_edits_to_text(dsl_text, feedback_json["edits"])   # the same on text, for previews
    sizes = memory_settings(fb.edits)           # {"csize": MiB, ...}: the run settings the edits ask for

Failures are matched against the rule catalog `rules.yaml` (data; `load_catalog`); finished runs get performance
feedback from the result line, the baselines and the per-task profile.
"""

from mapperopt.autoguide.catalog import Catalog, Rule, load_catalog
from mapperopt.autoguide.edits import (EDIT_OPS, SETTING_OPS, apply_edits, apply_edits_to_text, memory_settings,
                                       program_edits)
from mapperopt.autoguide.explain import LEVELS, explain, feedback_text

__all__ = ["explain", "feedback_text", "apply_edits", "apply_edits_to_text", "load_catalog", "Catalog", "Rule",
           "EDIT_OPS", "LEVELS", "SETTING_OPS", "memory_settings", "program_edits"]
