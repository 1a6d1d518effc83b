"""The DSL -> Legion mapper compiler.

    cpp = generate(program)                              # C++ of one mapper library (a checked Program)
    cm = compile_program(text, filename, app, machine)   # parse, check, generate, build (cached) -> CompiledMapper

A compiled mapper is a small shared library over the support library `libmapperopt_dslrt.so` (the DefaultMapper
subclass `mapperopt::dsl::DslMapper`, built once per Legion version). Applications load it with `-mapper PATH.so`;
unmodified applications with the LD_PRELOAD shim (`preload_library()`, docs/compiler.md).
"""

import importlib

__all__ = ["generate", "compile_program", "CompiledMapper", "CheckError", "support_library", "preload_library"]
_HOME = {"generate": "codegen"} | {name: "build" for name in __all__ if name != "generate"}


def __getattr__(name: str):
    # Imported on first use: `mapperopt compile` of a cached program needs neither the parser nor the generator.
    if name in _HOME:
        return getattr(importlib.import_module(f"mapperopt.compiler.{_HOME[name]}"), name)
    raise AttributeError(f"module 'mapperopt.compiler' has no attribute {name!r}")
