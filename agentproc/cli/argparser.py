"""The parser every command's grammar is built of: one-line usage errors with exit 2,
help within the terminal; and ``--version``, looked up only when asked for."""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Sequence
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

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """As argparse parses, but an unknown option is said by the command it was given
        to, with the option it nearly spells (``--agnet``: did you mean ``--agent``?)."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            command = self._command(parsed)
            message = f"unrecognized arguments: {' '.join(extras)}"
            command.error(message + did_you_mean(extras, command))
        return parsed

    def _command(self, parsed: argparse.Namespace) -> argparse.ArgumentParser:
        """The subcommand's parser ``parsed`` went through (this one when none)."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = getattr(parsed, action.dest or "", None)
                return action.choices.get(chosen, self) if chosen else self  # type: ignore[no-any-return]
        return self


def did_you_mean(extras: Sequence[str], parser: argparse.ArgumentParser) -> str:
    """``; did you mean --agent?`` for the first of ``extras`` that nearly spells an option
    of ``parser`` (:mod:`difflib`, as a typo is a letter or two wrong); else nothing.

    >>> p = argparse.ArgumentParser()
    >>> _ = p.add_argument("--agent")
    >>> did_you_mean(["--agnet", "sim:decay"], p), did_you_mean(["--zzz"], p)
    ('; did you mean --agent?', '')
    """
    options = [o for o in parser._option_string_actions if o.startswith("--")]
    for word in extras:
        if word.startswith("--"):
            near = difflib.get_close_matches(word.split("=", 1)[0], options, n=1, cutoff=0.7)
            if near:
                return f"; did you mean {near[0]}?"
    return ""


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
