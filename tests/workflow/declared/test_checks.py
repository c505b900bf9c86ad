"""A declared scenario's steps checked once per structure: every instance that has a
problem is refused with it, and each workflow keeps its own variable index."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agentproc.workflow.scenario import Scenario
from tests.workflow.shared_names import shared_name_scenarios


def test_each_instance_with_a_problem_is_refused_with_it_and_a_sound_one_is_not():
    for scenario in shared_name_scenarios(3)[0]:
        data = scenario.model_dump(mode="json")
        data["steps"][1]["expected_call"]["name"] = data["steps"][0]["expected_call"]["name"]
        with pytest.raises(ValidationError, match=r"steps\[1\].expected_call.name: 'first'"):
            Scenario.model_validate(data)
        assert Scenario.model_validate(scenario.model_dump(mode="json")) == scenario


def test_workflows_whose_steps_share_names_each_index_their_own_variables():
    for scenarios in shared_name_scenarios(2):
        for scenario in scenarios:
            index = {name: i for i, name in enumerate(scenario.variables, 1)}
            for step in scenario.steps:
                assert step.target == index[step.output]
                assert step.operand_vars == tuple(index[v] for v in step.operands)
                assert step.var_indexes == index
