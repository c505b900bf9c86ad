"""Terminal output that keeps within the console's width and never cuts a value.

A rich table wider than its console shrinks its columns: cells wrap onto three lines,
headers and ids are cut with an ellipsis. :func:`print_table` prints a table as it is
when its natural width fits, and otherwise *stacked*: one block per row, its key
columns on the block's first line and a ``header: value`` line for each other cell,
so no value is cut, wrapped inside or dropped. :func:`print_wrapped` wraps prose
within the width with a hanging indent, whatever the console's ``soft_wrap``.

The width is the console's: the terminal's, or ``COLUMNS`` (rich reads it).
"""

from __future__ import annotations

import re

from rich.console import Console, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

INDENT = 2
"""How far a stacked cell, or the continuation of a wrapped line, is indented."""


def fits(console: Console, table: Table) -> bool:
    """Whether ``table`` prints whole within the console's width: whether the width it
    takes when nothing in it wraps or is cut is within it."""
    natural = Measurement.get(console, console.options.update_width(1 << 16), table).maximum
    return natural <= console.width


def two_lines(text: str) -> str:
    """A figure over its interval or note, so that the column is as narrow as either."""
    for sep in (" [", " ("):
        if sep in text:
            head, tail = text.split(sep, 1)
            return f"{head}\n{sep.strip()}{tail}"
    return text


_KEEP = "\ue000"
"""Stands in for the space between a figure and its interval while a line is wrapped: one
cell wide and no whitespace, so the wrap never breaks there."""
_INTERVAL = re.compile(r"(?<![^\s\[\]])[^\s\[\]]+ \[[^\[\]\n]{0,40}\]")
"""A figure and its interval (``1.000 [0.44-1.00]``, ``-100.0 [-100.0, -35.7]``). The
figure starts where a word does (the look-behind): a match found from inside a word would
be found from its start, and without the anchor the search reads a long word again from
each of its characters, in time quadratic in its length."""


def print_wrapped(console: Console, text: str | Text) -> None:
    """Print ``text`` within the console's width; each line after the first is indented
    by :data:`INDENT` more than the text's own leading spaces. A figure and its interval
    (``1.000 [0.44-1.00]``) stay on one line."""
    t = (Text(text) if isinstance(text, str) else text).copy()
    lead = len(t.plain) - len(t.plain.lstrip(" "))
    width = max(console.width, lead + INDENT + 8)
    room = width - lead - INDENT  # a pair wider than a line may break, as any word
    t.plain = _INTERVAL.sub(
        lambda m: m[0].replace(" ", _KEEP) if len(m[0]) <= room else m[0], t.plain
    )
    lines = _hanging(console, t, width, lead + INDENT)
    for line in lines:
        line.plain = line.plain.replace(_KEEP, " ")
    # One print for all the lines: a print per line costs a write each.
    console.print(Text("\n").join(lines), soft_wrap=True, crop=False)


def _hanging(console: Console, t: Text, width: int, indent: int) -> list[Text]:
    lines = t.wrap(console, width, overflow="fold")
    if len(lines) <= 1:
        for line in lines:
            line.rstrip()
        return list(lines) or [Text("")]
    first = lines[0]
    first.rstrip()
    rest = t[len(first.plain) :]
    rest = rest[len(rest.plain) - len(rest.plain.lstrip()) :]
    out = [first]
    for line in rest.wrap(console, width - indent, overflow="fold"):
        line.rstrip()
        out.append(Text(" " * indent) + line)
    return out


def _plain(cell: RenderableType) -> str:
    """A cell on one line: an interval or a note (``[...]``, ``(...)``) follows its value,
    other lines are joined by ``; ``."""
    text = cell.plain if isinstance(cell, Text) else str(cell)
    out = ""
    for part in (p.strip() for p in text.splitlines()):
        if part:
            out += ("" if not out else " " if part.startswith(("[", "(")) else "; ") + part
    return out


def _header(column_header: RenderableType) -> str:
    text = column_header.plain if isinstance(column_header, Text) else str(column_header)
    return " ".join(text.split())


def print_table(console: Console, table: Table, keys: int = 1) -> None:
    """Print ``table``'s title, the table (or, when it is too wide, its rows stacked with
    the first ``keys`` columns heading each block), then its caption, wrapped."""
    title, caption = table.title, table.caption
    table.title = table.caption = None
    if title is not None:
        print_wrapped(console, _plain(title))
    if fits(console, table):
        console.print(table)
    else:
        stack(console, table, keys)
    table.title, table.caption = title, caption
    if caption is not None:
        print_wrapped(console, _plain(caption))


def _pair(header: str, value: str) -> str:
    return f"{header}: {value}" if header else value


def stack(console: Console, table: Table, keys: int = 1) -> None:
    """Print each row of ``table`` as a block of ``header: value`` lines."""
    headers = [_header(c.header) for c in table.columns]
    columns = [[_plain(cell) for cell in c.cells] for c in table.columns]
    for row in range(table.row_count):
        values = [col[row] for col in columns]
        head = ", ".join(_pair(h, v) for h, v in zip(headers[:keys], values[:keys], strict=True))
        print_wrapped(console, head)
        for h, v in zip(headers[keys:], values[keys:], strict=True):
            if v:
                print_wrapped(console, " " * INDENT + _pair(h, v))
