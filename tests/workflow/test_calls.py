"""Supplied arguments as the mock tools read them."""

from __future__ import annotations

import pytest

from agentproc.workflow.calls import as_text, parse_arguments


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, ""), ('{"a": 1}', '{"a": 1}'), ([1, 2], "[1,2]"), (3.5, "3.5"), ({1j}, "{1j}")],
)
def test_what_was_sent_is_kept_as_text_whatever_its_json_type(value, text):
    assert as_text(value) == text


def test_arguments_that_are_a_list_are_kept_as_json_text_and_refused():
    assert parse_arguments([1, 2]) == ("[1,2]", None, "the arguments must be a JSON object")  # type: ignore[arg-type]
