"""The package's shape: imports flow one way down the pipeline, with no cycles,
and the public API is one list that IDEs, type checkers and ``import`` all see."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import agentproc

PACKAGE = Path(agentproc.__file__).parent
LAYERS: dict[str, int] = {
    "arith": 0,
    "errors": 0,
    "resources": 0,
    "jsonio": 0,
    "lazy": 0,
    "outputs": 0,
    "procedures": 1,
    "declared": 2,
    "workflow": 3,
    "labelling": 4,
    "runs": 5,
    "agents": 6,
    "analysis": 6,
    "experiments": 7,
    "integrations": 7,
    "cli": 8,
    "testing": 9,
    "pytest_plugin": 10,
}
"""Top-level module or folder -> its place in the pipeline; imports only go down
(or stay within one folder; the base modules of place 0 may use each other).
``agents`` and ``analysis`` share a place and never import each other;
``experiments`` runs agents and analyses what they did."""
FACADES = {"agentproc", "agentproc.__main__", "agentproc._inspect_registry"}
"""The package's front doors, which may import anything."""


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every agentproc module a file imports, at the top or inside functions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("agentproc"))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("agentproc"):
            out.add(node.module or "")
    return out


def graph() -> dict[str, set[str]]:
    return {module_name(p): imports(p) for p in sorted(PACKAGE.rglob("*.py"))}


def room(module: str) -> str:
    return module.split(".")[1] if "." in module else ""


def test_every_module_belongs_to_a_layer():
    rooms = {room(m) for m in graph() if m not in FACADES}
    assert rooms <= set(LAYERS), rooms - set(LAYERS)


def test_imports_flow_down_the_pipeline():
    wrong = []
    for module, targets in graph().items():
        if module in FACADES:
            continue
        here = room(module)
        for target in targets:
            there = room(target)
            upward = target == "agentproc" or there not in LAYERS or LAYERS[there] > LAYERS[here]
            sideways = there != here and LAYERS.get(there) == LAYERS[here] > 0  # agents, analysis
            if upward or sideways:
                wrong.append(f"{module} -> {target}")
    assert wrong == []


def test_there_are_no_import_cycles():
    edges = graph()
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if nxt not in edges:
                continue
            if state.get(nxt) == 1:
                cycles.append([*trail[trail.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    assert cycles == []


def test_the_layering_check_sees_an_upward_import(tmp_path: Path):
    bad = tmp_path / "x.py"
    bad.write_text("def f():\n    from agentproc.cli import main\n", encoding="utf-8")
    assert imports(bad) == {"agentproc.cli"}


def type_checking_names() -> dict[str, str]:
    """Names the TYPE_CHECKING block of the package's ``__init__.py`` imports, and from where."""
    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    block = next(
        n for n in tree.body if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test)
    )
    return {
        alias.asname or alias.name: node.module or ""
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def test_public_api_is_one_list_that_type_checkers_see_too():
    assert type_checking_names() == agentproc._EXPORTS
    assert agentproc.__all__ == sorted(agentproc._EXPORTS)
    assert set(agentproc._EXPORTS) <= set(dir(agentproc))


@pytest.mark.parametrize("name", sorted(agentproc._EXPORTS))
def test_every_public_name_resolves_to_its_module(name: str):
    value = getattr(agentproc, name)
    assert getattr(importlib.import_module(agentproc._EXPORTS[name]), name) is value


def test_an_unknown_public_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="module 'agentproc' has no attribute 'nope'"):
        agentproc.nope  # noqa: B018


def test_a_public_name_shared_with_its_module_stays_the_name():
    # Importing ``agentproc.runs.redact`` sets the package's attribute to the module,
    # unless the function was bound after it.
    code = "import agentproc.runs.redact; from agentproc.runs import redact; print(type(redact).__name__)"  # noqa: E501
    assert fresh_python(code) == "function"


def test_help_loads_neither_the_core_nor_the_agents_nor_an_optional_extra():
    # The front door imports its names on first use: --help pays for the parser alone.
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "agentproc", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = {x.rsplit("|", 1)[-1].strip().split(".")[0] for x in out.stderr.splitlines()}
    assert "agentproc" in loaded
    assert not loaded & {
        "pydantic",
        "langchain_core", "langchain_openai", "langgraph", "openai", "ray", "pyarrow",
        "llama_cpp", "jsonschema", "aiohttp", "httpx",
    }  # fmt: skip


def test_jsonschema_is_loaded_only_for_a_call_that_fails_the_fast_check():
    code = (
        "import sys; from agentproc.agents.sim import run_sim_episode;"
        "from agentproc.procedures import Cell, generate_procedure;"
        "from agentproc.workflow import Toolkit, build_workflow, scenario_of;"
        "s = scenario_of(generate_procedure(Cell(steps=6, lookback=3), 0, 0));"
        "ep = run_sim_episode(s, 'sim:decay'); before = 'jsonschema' in sys.modules;"
        "rec = Toolkit(build_workflow(s)).call('step_1', {'S1': 'two'});"
        "print([before, 'jsonschema' in sys.modules, rec.refused, len(ep.calls) > 0])"
    )
    assert eval_list(fresh_python(code)) == [False, True, "invalid_arguments", True]


def fresh_python(code: str) -> str:
    """What ``code`` prints in a new interpreter (nothing imported beforehand)."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def eval_list(text: str) -> list[str]:
    return ast.literal_eval(text.strip())


def test_no_top_level_module_shadows_the_standard_library():
    # A module named like one of the standard library's (``agentproc/inspect.py`` was) is
    # imported in its place by any script run from inside the package directory.
    names = {room(module_name(p)) for p in PACKAGE.rglob("*.py")}
    assert sorted(names & sys.stdlib_module_names) == []


ANALYSIS: dict[str, int] = {
    "stats": 0,
    "measures": 1,
    "stored": 2,
    "render": 3,
    "compare": 4,
    "gate": 5,
    "html": 6,
}
"""``analysis/``'s sub-packages -> their place; imports only go down (or stay within one):
the pure statistics, what a group of episodes shows, stored runs read again, text and
files, the comparison (which prints its own tables), the ``check`` gate, the HTML pages."""


def analysis_upward(edges: dict[str, set[str]]) -> list[str]:
    """Imports inside ``agentproc.analysis`` that go up :data:`ANALYSIS` or reach its facade
    (``agentproc.analysis`` itself), and those of ``stats`` to anything but itself and the
    base modules of place 0."""
    wrong = []
    for module, targets in edges.items():
        parts = module.split(".")
        if parts[:2] != ["agentproc", "analysis"] or len(parts) < 3:
            continue
        here = ANALYSIS.get(parts[2], -1)
        for target in targets:
            there = target.split(".")
            if there[:2] == ["agentproc", "analysis"]:
                if len(there) < 3 or ANALYSIS.get(there[2], len(ANALYSIS)) > here:
                    wrong.append(f"{module} -> {target}")
            elif parts[2] == "stats" and LAYERS.get(room(target)) != 0:
                wrong.append(f"{module} -> {target}")
    return wrong


def test_analysis_is_sub_packages_by_idea_with_nothing_loose_at_its_top():
    loose = [m for m in graph() if m.startswith("agentproc.analysis.")]
    assert [m for m in loose if m.split(".")[2] not in ANALYSIS] == []


def test_imports_within_analysis_go_down_its_sub_packages():
    assert analysis_upward(graph()) == []


def test_the_analysis_layering_check_sees_an_import_up_or_out_of_stats():
    edges = {
        "agentproc.analysis.stats.binomial": {"agentproc.labelling", "agentproc.arith"},
        "agentproc.analysis.measures.cells": {"agentproc.analysis.compare.result"},
        "agentproc.analysis.render.formats": {"agentproc.analysis"},
        "agentproc.analysis.gate.places": {"agentproc.analysis.measures.step_names"},
    }
    assert analysis_upward(edges) == [
        "agentproc.analysis.stats.binomial -> agentproc.labelling",
        "agentproc.analysis.measures.cells -> agentproc.analysis.compare.result",
        "agentproc.analysis.render.formats -> agentproc.analysis",
    ]
