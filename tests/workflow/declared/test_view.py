"""A declared workflow's steps as a rendering shows them under their own names."""

from __future__ import annotations

import pytest

from agentproc.declared.file import read_workflow
from agentproc.resources import folder
from agentproc.workflow.declared.suite import workflow_scenarios
from agentproc.workflow.declared.view import own_names, render

SHIPPED = sorted(folder("workflows").glob("*.toml"))


@pytest.mark.parametrize("rendering", ["numbered", "prose", "pseudocode", "json"])
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_own_names_render_as_any_name_that_renames_nothing(path, rendering):
    for scenario in workflow_scenarios(read_workflow(path), path.stem, 3, 2):

        def tool(s):
            return s.name

        assert render(scenario, rendering, own_names, tool) == render(
            scenario, rendering, lambda v: None, tool
        )
