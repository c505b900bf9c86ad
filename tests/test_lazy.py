"""agentproc.lazy: a package's names imported from their modules on first use."""

from __future__ import annotations

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
