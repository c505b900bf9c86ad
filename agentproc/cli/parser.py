"""The command line's grammar: every command, its options and their types.

:func:`build_parser` is all :mod:`agentproc.cli.main` needs; each command group's options
are in its own module (``parse_suites``, ``parse_runs``, ``parse_stored``, or beside the
command), the option types in :mod:`agentproc.cli.option_types`.
"""

from __future__ import annotations

import argparse

from agentproc.cli.argparser import Parser, VersionAction
from agentproc.cli.check import add_check_parser
from agentproc.cli.export import add_export_parser
from agentproc.cli.import_traces import add_import_traces_parser
from agentproc.cli.option_types import CACHE_DEFAULT
from agentproc.cli.parse_runs import (
    AGENT_HELP,
    RUN_GROUPS,
    add_run_parser,
    add_sweep_parsers,
    episode_options,
)
from agentproc.cli.parse_stored import add_stored_parsers
from agentproc.cli.parse_suites import add_selfcheck_parsers, add_suite_parsers
from agentproc.cli.serve_demo import add_serve_demo_parser
from agentproc.cli.serve_mcp import add_serve_mcp_parser

__all__ = ["AGENT_HELP", "CACHE_DEFAULT", "RUN_GROUPS", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``agentproc``."""
    p = Parser(
        prog="agentproc",
        description="Does a tool-using agent execute a procedure faithfully?",
    )
    p.add_argument("--version", action=VersionAction, help="show the version and exit")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    episodes = episode_options()
    add_suite_parsers(sub)
    add_run_parser(sub)
    add_stored_parsers(sub)
    add_sweep_parsers(sub, episodes)
    add_check_parser(sub)
    add_serve_mcp_parser(sub)
    add_import_traces_parser(sub)
    add_export_parser(sub)
    add_selfcheck_parsers(sub)
    add_serve_demo_parser(sub)
    return p
