"""A compiled formula gives what the tree walk gives, one evaluator per text, and reads
the tables of the instance it is called for."""

from __future__ import annotations

import random
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from agentproc.arith import SCALE, from_number
from agentproc.procedures.formula import parse
from agentproc.procedures.formula_compiled import compiled
from agentproc.procedures.formula_values import bind, evaluate
from agentproc.procedures.workflow_file import read_workflow
from agentproc.resources import folder
from agentproc.workflow.declared_suite import workflow_scenarios
from agentproc.workflow.scenario import Scenario
from agentproc.workflow.scenario_types import grammar_value
from tests.workflow.shared_names import shared_name_scenarios

SHIPPED = sorted(folder("workflows").glob("*.toml"))


def _outcome(f: Callable[..., Any], *args: Any) -> tuple[str, Any]:
    """``f(*args)`` with its type, or the variable it lacked."""
    try:
        v = f(*args)
    except KeyError as exc:
        return "missing", exc.args[0]
    return type(v).__name__, v


def _env(scenario: Scenario, rng: random.Random | None) -> dict[str, Any]:
    """Every variable that has a value, as the grammar reads it; with ``rng``, each number
    moved by a random factor (so that other branches are taken) and some left out."""
    scale = SCALE[scenario.mode]
    values = {**scenario.inputs, **{s.output: s.value for s in scenario.steps}}
    env = {}
    for name, v in values.items():
        if v is None or (rng is not None and rng.random() < 0.1):
            continue
        x = grammar_value(from_number(v, scale), scale)
        if rng is not None and isinstance(x, Fraction):
            x *= Fraction(rng.choice([-3, 0, 1, 2, 7, 50]), rng.choice([1, 2, 10]))
        env[name] = x
    return env


def _scenarios(path: Path, count: int) -> list[Scenario]:
    return list(workflow_scenarios(read_workflow(path), path.stem, count, 3))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_a_compiled_formula_gives_the_tree_walks_value_on_every_shipped_workflow(path: Path):
    rng = random.Random(path.stem)
    for scenario in _scenarios(path, 20):
        texts = [*(s.formula for s in scenario.steps), *(s.when for s in scenario.steps)]
        texts += [e.when for e in scenario.exits or ()]
        tables = scenario.steps[0].lookup_tables
        for env in (_env(scenario, None), *(_env(scenario, rng) for _ in range(5))):
            for text in filter(None, texts):
                tree = parse(text, True)
                walked = tree if tables is None else bind(tree, tables)
                got = _outcome(compiled(text), env, tables)
                assert got == _outcome(evaluate, walked, env), text


def test_one_evaluator_is_made_per_formula_text():
    assert compiled("a * 2 + b") is compiled("a * 2 + b")
    assert compiled("a * 2 + b") is not compiled("a * 3 + b")


def test_a_lookup_reads_the_tables_given_at_each_call():
    f = compiled("lookup(rates, tier, 'rate') * amount")
    env = {"tier": "gold", "amount": Fraction(10)}
    first = {"rates": {"gold": {"rate": Fraction(1, 2)}}}
    second = {"rates": {"gold": {"rate": Fraction(3)}}}
    assert (f(env, first), f(env, second)) == (Fraction(5), Fraction(30))
    assert f({**env, "tier": "silver"}, first) is None  # no such record: no value


def test_workflows_whose_steps_share_names_each_compute_their_own_formulas():
    made = [scenarios[0] for scenarios in shared_name_scenarios()]
    for scenario in made:
        scale = SCALE[scenario.mode]
        units = {k: from_number(v, scale) for k, v in scenario.inputs.items()}
        middle, total = scenario.steps
        got = middle.compute(units, scale)
        assert got == from_number(middle.value, scale)
        given = {"middle": got, "a": units["a"]}
        assert total.compute(given, scale) == from_number(total.value, scale)
    assert made[0].steps[1].formula != made[1].steps[1].formula
