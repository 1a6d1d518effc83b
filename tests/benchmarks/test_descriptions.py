"""The applications' `--describe` output agrees with the copies in `configs/` and with every task and region name the
expert mappers use (docs/dsl-reference.md §12, docs/running.md and §2.2)."""

from __future__ import annotations

import pytest

from mapperopt import toolchain
from mapperopt.benchmarks import describe_app, load_config
from mapperopt.descriptions import AppDescription
from mapperopt.dsl import parse

APPS = ["circuit", "stencil", "pennant"]


def _without_gpu_variants(desc: dict) -> dict:
    return {**desc, "tasks": [{**t, "variants": [v for v in t["variants"] if v != "GPU"]} for t in desc["tasks"]]}


@pytest.mark.parametrize("app", APPS)
def test_describe_matches_the_stored_copy(app):
    cfg = load_config(app)
    live = describe_app(app, "ci")
    stored = cfg.stored_description()
    assert live["app"] == app
    AppDescription.from_json(live)   # well-formed
    # The copy lists the variants of a CUDA build; a build without nvcc registers only the CPU ones.
    if not toolchain.cuda_enabled("auto"):
        stored = _without_gpu_variants(stored)
    assert live == stored


@pytest.mark.parametrize("app", APPS)
def test_describe_follows_the_size(app):
    # Launch domains are those of the size described: the `gpu` size has a different number of pieces/tiles.
    ci, gpu = describe_app(app, "ci"), describe_app(app, "gpu")
    assert [t["name"] for t in ci["tasks"]] == [t["name"] for t in gpu["tasks"]]
    assert any(a["domain"] != b["domain"] for a, b in zip(ci["tasks"], gpu["tasks"]))


@pytest.mark.parametrize("app", APPS)
def test_expert_mapper_names_exist(app):
    cfg = load_config(app)
    desc = AppDescription.from_json(describe_app(app, "ci"))
    program = parse(cfg.expert_dsl(), cfg.expert)
    tasks, regions = set(), set()
    for stmt in program.statements:
        sel = getattr(stmt, "tasks", None)
        if sel is not None and not sel.is_wildcard:
            tasks.update(ident.name for ident in sel.names)
        region = getattr(stmt, "region", None)
        if region is not None and region.name is not None:
            regions.add(region.name)
    assert tasks, "the expert mapper names no task"
    assert tasks <= set(desc.task_names), f"unknown tasks: {tasks - set(desc.task_names)}"
    assert regions <= set(desc.region_names), f"unknown regions: {regions - set(desc.region_names)}"


def test_a_failed_describe_names_the_program_and_the_reason():
    """The application's own error is the message, under the program's name, not its whole stderr after the cached
    executable's path; the command is the hint."""
    from mapperopt.errors import MapperoptError

    with pytest.raises(MapperoptError) as info:
        describe_app("circuit", "ci", extra_args=("-p", "0"))
    err = info.value
    assert err.message == ("circuit could not describe the run (`circuit ... --describe` failed, exit status 1): "
                           "circuit: error: -p must be at least 1"), err.message
    assert err.hint.startswith("its command: ") and "-p 0" in err.hint and "--describe" in err.hint
