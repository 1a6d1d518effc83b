"""The DSL -> Legion mapper compiler.

    cpp = generate(program)                              # C++ of one mapper library (a checked Program)
    cm = compile_program(text, filename, app, machine)   # parse, check, generate, build (cached) -> CompiledMapper

A compiled mapper is a small shared library over the support library `libmapperopt_dslrt.so` (the DefaultMapper
subclass `mapperopt::dsl::DslMapper`, built once per Legion version). Applications load it with `-mapper PATH.so`;
unmodified applications with the LD_PRELOAD shim (`preload_library()`, docs/compiler.md).
"""

from mapperopt.compiler.build import CheckError, CompiledMapper, compile_program, preload_library, support_library
from mapperopt.compiler.codegen import generate

__all__ = ["generate", "compile_program", "CompiledMapper", "CheckError", "support_library", "preload_library"]
