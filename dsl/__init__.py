"""The mapping DSL: parser, checker, formatter and reference evaluator (docs/dsl-reference.md is the language reference;
§ numbers in this package cite it).

    program = parse(text, filename)             # Program, or DslSyntaxError
    diags = check(program, app, machine)       # list[Diagnostic]
    text = format_program(program)             # canonical text; parse(text) == program
    Evaluator(program, machine, app).decide(task, point, domain)   # the placement-trace record of one decision
"""

import sys

from mapperopt.dsl.checker import check
from mapperopt.dsl.errors import CheckError, Diagnostic, DslRuntimeError, DslSyntaxError
from mapperopt.dsl.evaluator import Evaluator
from mapperopt.dsl.formatter import format_program
from mapperopt.dsl.parser import parse

__all__ = ["parse", "check", "format_program", "Evaluator", "Diagnostic", "DslSyntaxError", "DslRuntimeError",
           "CheckError"]

# Evaluation and typing recurse once per level of nesting; the stated limits (parser.MAX_NESTING,
# checker.MAX_EVAL_NESTING) keep that below this bound, with room for the callers' frames.
sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
