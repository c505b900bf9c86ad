"""The errors module's one-line display of text a file or a model supplies."""

from __future__ import annotations

import pytest

from agentproc.errors import one_line


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("line 3: steps", "line 3: steps"),
        ("a\nb", "a\\nb"),
        ("tab\there", "tab\\there"),
        ("del\x7f", "del\\x7f"),
        ("c1\x85", "c1\\x85"),
        ("sep\u2028par\u2029", "sep\\u2028par\\u2029"),
        ("émoji 🙂 and 中文", "émoji 🙂 and 中文"),
    ],
)
def test_one_line_escapes_control_characters_and_line_separators_only(text: str, shown: str):
    assert one_line(text) == shown
    assert len(one_line(text).splitlines()) <= 1
