"""A declared step's value as its tool computes it: each workflow's own formula, even
where two workflows' steps share their names."""

from __future__ import annotations

from agentproc.arith import SCALE, from_number
from tests.workflow.shared_names import shared_name_scenarios


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
