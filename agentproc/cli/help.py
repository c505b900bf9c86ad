"""How ``--help`` reads: within the terminal's width, every option's default shown, and
``run``'s many options in named groups (:func:`add_grouped`: each group declared with its
options, the options shared with other commands kept as :class:`Option` values).

argparse's own formatters either wrap everything (examples lose their lines) or nothing
(a long description runs past the width): :class:`HelpFormatter` keeps each line as
written when it fits and wraps only those that do not, with a hanging indent.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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


@dataclass(frozen=True)
class Option:
    """An option as ``add_argument`` takes it, kept so that each parser can add it where it
    belongs there: commands that share options add them in a group of their own help."""

    flags: tuple[str, ...]
    kwargs: dict[str, Any]

    def add_to(self, container: argparse._ActionsContainer) -> argparse.Action:
        """Add the option to a parser or to one of its argument groups."""
        return container.add_argument(*self.flags, **self.kwargs)


def option(*flags: str, **kwargs: Any) -> Option:
    """An :class:`Option`, written as the ``add_argument`` call it stands for."""
    return Option(flags, kwargs)


def add_grouped(
    parser: argparse.ArgumentParser,
    options: Mapping[str, Option],
    groups: Mapping[str, Sequence[str]],
) -> None:
    """Add ``options`` (dest -> option) to ``parser``: those no group names first, under
    ``options``, then each group (title -> dests, in order) as an argument group declared
    with its options; usage lists them in that order too."""
    named = {dest for dests in groups.values() for dest in dests}
    for dest, opt in options.items():
        if dest not in named:
            opt.add_to(parser)
    for title, dests in groups.items():
        group = parser.add_argument_group(title)
        for dest in dests:
            options[dest].add_to(group)
