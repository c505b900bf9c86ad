"""agentproc.lazy: a package's names imported from their modules on first use."""

from __future__ import annotations

import importlib
import subprocess
import sys
import types

import pytest

from agentproc.lazy import lazy_exports


@pytest.fixture
def package(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    pkg = types.ModuleType("lazy_demo")
    pkg.__getattr__, pkg.__dir__ = lazy_exports(  # type: ignore[method-assign]
        "lazy_demo", {"Fraction": "fractions", "dedent": "textwrap"}, also=("own",)
    )
    monkeypatch.setitem(sys.modules, "lazy_demo", pkg)
    return pkg


def test_a_name_is_imported_from_its_module_and_kept(package: types.ModuleType):
    from fractions import Fraction

    assert package.Fraction is Fraction
    assert vars(package)["Fraction"] is Fraction  # later look-ups skip __getattr__


def test_an_unknown_name_is_an_attribute_error_naming_the_package(package: types.ModuleType):
    with pytest.raises(AttributeError, match="module 'lazy_demo' has no attribute 'nope'"):
        package.nope  # noqa: B018


def test_dir_lists_the_exports_and_the_packages_own_names(package: types.ModuleType):
    assert dir(package) == ["Fraction", "dedent", "own"]


def test_importing_a_lazy_package_loads_none_of_its_modules():
    code = "import sys, agentproc.labelling; print('agentproc.labelling.core' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


LAZY = ("agentproc.analysis", "agentproc.labelling", "agentproc.runs")
"""The packages whose names :func:`lazy_exports` imports on first use."""


@pytest.mark.parametrize(
    ("package", "name"),
    [(p, n) for p in LAZY for n in importlib.import_module(p).__all__],
)
def test_every_public_name_of_a_lazy_package_is_its_modules(package: str, name: str):
    pkg = importlib.import_module(package)
    value = getattr(pkg, name)
    module = pkg._EXPORTS.get(name, f"{package}.{name}")
    assert getattr(importlib.import_module(module), name) is value
    assert name in dir(pkg)


@pytest.mark.parametrize("package", LAZY)
def test_an_unknown_name_of_a_lazy_package_is_an_attribute_error(package: str):
    pkg = importlib.import_module(package)
    with pytest.raises(AttributeError, match=rf"'{package}' has no attribute 'nope'"):
        pkg.nope  # noqa: B018
