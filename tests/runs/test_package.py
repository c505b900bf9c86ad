"""agentproc.runs: its public names import on first use, each the object its module defines."""

from __future__ import annotations

import importlib

import pytest

import agentproc.runs as package


@pytest.mark.parametrize("name", package.__all__)
def test_every_public_name_is_its_modules(name: str):
    value = getattr(package, name)
    module = package._EXPORTS.get(name, f"agentproc.runs.{name}")
    assert getattr(importlib.import_module(module), name) is value
    assert name in dir(package)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match=r"has no attribute 'nope'"):
        package.nope  # noqa: B018
