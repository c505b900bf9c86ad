"""The parser every command's grammar is built of: one-line usage errors with exit 2,
help within the terminal; and ``--version``, looked up only when asked for."""

from __future__ import annotations

import argparse
import sys
from typing import Any, NoReturn

from agentproc.cli.help import HelpFormatter
from agentproc.cli.output import EXIT_BAD_INPUT, brief


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (naming the option) and exit 2, and
    whose help keeps within the terminal and shows defaults (:class:`HelpFormatter`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(
            EXIT_BAD_INPUT, f"{self.prog}: error: {brief(message)} (see '{self.prog} --help')\n"
        )


class VersionAction(argparse.Action):
    """``--version``: the installed version, looked up only when asked for (reading the
    package metadata costs every start 10-20 ms)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)  # type: ignore[arg-type]

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> NoReturn:
        parser._print_message(f"agentproc {_version()}\n", sys.stdout)  # as argparse's own
        parser.exit()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agentproc")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree
        return "unknown"
