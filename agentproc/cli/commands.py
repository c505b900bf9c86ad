"""What each CLI command does: call the library, render the result.

The commands that make suites are in :mod:`agentproc.cli.suites`, ``run`` in
:mod:`agentproc.cli.run` (the agent its options name in :mod:`agentproc.cli.agent_options`),
``selfcheck`` in :mod:`agentproc.cli.selfcheck`; this module names them all.
"""

from __future__ import annotations

from agentproc.cli.agent_options import agent_spec, cache_config
from agentproc.cli.run import AHEAD, run_command
from agentproc.cli.selfcheck import selfcheck_command
from agentproc.cli.suites import generate_command, scenario_command, variants_command

__all__ = [
    "AHEAD",
    "agent_spec",
    "cache_config",
    "generate_command",
    "run_command",
    "scenario_command",
    "selfcheck_command",
    "variants_command",
]
