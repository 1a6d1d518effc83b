"""Shared fixtures of the DSL tests: the example programs of dsl-reference.md §14, the Circuit and Stencil descriptions,
and the machines M14 (1 node, 1 CPU, 4 GPUs) and M24 (2 such nodes) of §14."""

from dataclasses import replace

import pytest

from mapperopt.descriptions import parse_machine_spec
from mapperopt.dsl.commands import load_app


@pytest.fixture(scope="session")
def circuit():
    return load_app("circuit")


@pytest.fixture(scope="session")
def stencil():
    return load_app("stencil")


@pytest.fixture(scope="session")
def m14():
    return parse_machine_spec("1x4")


@pytest.fixture(scope="session")
def m24():
    return parse_machine_spec("2x4")


@pytest.fixture
def with_domain():
    """`with_domain(app, (8,))`: the description with every index launch over that domain."""

    def make(app, domain):
        tasks = tuple(replace(t, domain=tuple(domain)) if t.index_launched else t for t in app.tasks)
        return replace(app, tasks=tasks)

    return make
