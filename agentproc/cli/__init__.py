"""The command line: parse, call one library function, render."""

from agentproc.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
