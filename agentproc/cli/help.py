"""How ``--help`` reads: within the terminal's width, every option's default shown, and
``run``'s many options in named groups.

argparse's own formatters either wrap everything (examples lose their lines) or nothing
(a long description runs past the width): :class:`HelpFormatter` keeps each line as
written when it fits and wraps only those that do not, with a hanging indent.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Mapping, Sequence

HANG = 4
"""How much further than its line a wrapped continuation of an indented line (an
example, a table's row) is indented; wrapped prose stays flush left."""

_NO_DEFAULT: tuple[object, ...] = (None, False, "", [], argparse.SUPPRESS)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs line by line as written, a line wider than the terminal
    wrapped; each option's default after its help, unless the help says it."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out: list[str] = []
        for line in text.splitlines():
            if len(indent + line) <= width or not line.strip():
                out.append(indent + line)
                continue
            lead = indent + " " * (len(line) - len(line.lstrip()))
            hang = lead + " " * HANG if line[:1] == " " else lead  # prose: flush left
            out += textwrap.wrap(
                line.strip(),
                max(width, len(hang) + 20),
                initial_indent=lead,
                subsequent_indent=hang,
                break_on_hyphens=False,
                break_long_words=False,
            )
        return "\n".join(out)

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help
        if (
            text is None
            or text == argparse.SUPPRESS
            or "default" in text
            or not action.option_strings
            or any(action.default is d or action.default == d for d in _NO_DEFAULT)
        ):
            return text
        return f"{text} (default: %(default)s)"


def grouped(parser: argparse.ArgumentParser, groups: Mapping[str, Sequence[str]]) -> None:
    """Show ``parser``'s options under ``groups`` (title -> option dests, in order); any
    option not named stays where it was (``options``)."""
    actions = {a.dest: a for a in parser._actions}
    for title, dests in groups.items():
        group = parser.add_argument_group(title)
        for dest in dests:
            action = actions[dest]
            for other in parser._action_groups:
                if action in other._group_actions:
                    other._group_actions.remove(action)
            group._group_actions.append(action)
