"""Tables that fit or are stacked, and prose wrapped within the console's width."""

from __future__ import annotations

import io
import re

from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table

from agentproc.analysis.render.console_fit import _INTERVAL, print_table, print_wrapped

ID = "n95-L7-r1_1000-mixed-decimal-0999"


def _console(width: int) -> Console:
    # soft_wrap as the command line's console has it: wrapping must not rely on rich's
    return Console(file=io.StringIO(), width=width, soft_wrap=True, color_system=None)


def _table() -> Table:
    t = Table("episode", "agent", "verdict", title="replayed episodes", caption="a caption")
    t.add_row(ID, "my_agents/react.py:make_agent", "unfaithful_correct")
    return t


def test_a_table_that_fits_is_printed_as_a_table_between_its_title_and_caption():
    console = _console(120)
    print_table(console, _table())
    lines = console.file.getvalue().splitlines()
    assert lines[0] == "replayed episodes" and lines[-1] == "a caption"
    assert any(ID in line and "┃" not in line and "│" in line for line in lines)


def test_a_table_too_wide_is_stacked_with_every_value_whole_and_within_the_width():
    console = _console(60)
    print_table(console, _table())
    assert console.file.getvalue().splitlines() == [
        "replayed episodes",
        f"episode: {ID}",
        "  agent: my_agents/react.py:make_agent",
        "  verdict: unfaithful_correct",
        "a caption",
    ]


def test_stacked_cells_keep_an_interval_beside_its_value_and_join_other_lines():
    t = Table("N", "rate", "walks")
    t.add_row("5", "0.800\n[0.58-0.92]", "L 1: holds\nL 2: breaks")
    console = _console(20)
    print_table(console, t)
    assert console.file.getvalue().splitlines() == [
        "N: 5",
        "  rate: 0.800",
        "    [0.58-0.92]",
        "  walks: L 1: holds;",
        "    L 2: breaks",
    ]


def test_a_long_line_wraps_within_the_width_with_a_hanging_indent():
    console = _console(40)
    words = " ".join(f"word{i}" for i in range(30))
    print_wrapped(console, f"  {words}")
    lines = console.file.getvalue().splitlines()
    assert len(lines) > 3 and all(cell_len(line) <= 40 for line in lines)
    assert lines[0].startswith("  word0") and all(line.startswith("    w") for line in lines[1:])
    assert " ".join(" ".join(lines).split()) == words


def test_a_cell_of_one_long_word_is_folded_whole_within_the_width():
    value = "x" * 50_000 + "END"
    t = Table("episode", "agent")
    t.add_row(ID, value)
    console = _console(80)
    print_table(console, t)
    lines = console.file.getvalue().splitlines()
    assert lines[0] == f"episode: {ID}" and lines[1] == "  agent:"
    assert all(cell_len(line) <= 80 and line.startswith("    x") for line in lines[2:])
    assert "".join(line.strip() for line in lines[2:]) == value


def test_a_figure_and_its_interval_stay_together_after_a_long_word():
    console = _console(40)
    print_wrapped(console, "y" * 30_000 + " rate 0.800 [0.58-0.92] end")
    lines = console.file.getvalue().splitlines()
    assert all(cell_len(line) <= 40 for line in lines)
    assert [line for line in lines if "0.800" in line] == ["  0.800 [0.58-0.92] end"]
    assert "".join(lines).count("y") == 30_000 and "".join(lines[1:]).startswith("  y")


@given(st.text(alphabet="a1.- [](\n\té", max_size=200))
def test_a_figure_and_its_interval_are_found_as_the_unanchored_pattern_finds_them(text: str):
    # The pattern before it was anchored at a word's start (quadratic in a long word).
    unanchored = re.compile(r"[^\s\[\]]+ \[[^\[\]\n]{0,40}\]")
    assert [m.span() for m in _INTERVAL.finditer(text)] == [
        m.span() for m in unanchored.finditer(text)
    ]
