"""Two small workflows whose steps share their tools' and outputs' names but not their
formulas: what a cache kept per workflow must not confuse."""

from __future__ import annotations

import tomllib

from agentproc.declared.file import workflow_from_json
from agentproc.workflow.declared.suite import workflow_scenarios
from agentproc.workflow.scenario import Scenario

TWO = """\
description = "Two steps."
answer = "total"
finish_tool = "submit_total"

[inputs.a]
description = "A."
integers = [1, 40]

[inputs.b]
description = "B."
integers = [1, 40]

[[steps]]
tool = "first"
description = "The first."
output = "middle"
formula = "{first}"

[[steps]]
tool = "second"
description = "The total."
output = "total"
formula = "{second}"
"""

FORMULAS = (("a + b", "middle * 2"), ("a * b", "middle - a"))
"""Each workflow's two formulas: the second steps read different variables."""


def shared_name_scenarios(count: int = 1) -> list[list[Scenario]]:
    """``count`` instances of each of the two workflows."""
    made = []
    for first, second in FORMULAS:
        wf = workflow_from_json(tomllib.loads(TWO.format(first=first, second=second)), "two")
        made.append(list(workflow_scenarios(wf, "two", count, 0)))
    return made
