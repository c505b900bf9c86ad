"""agentproc.jsonio: fast JSON reading that keeps integers beyond 64 bits exact."""

from __future__ import annotations

import pytest

from agentproc.errors import InputError
from agentproc.jsonio import json_lines, loads, plain_object
from agentproc.workflow.calls import stored_arguments

LONG = 12345678901234567890123  # beyond 64 bits: orjson alone would read a float


@pytest.mark.parametrize("as_bytes", [False, True])
@pytest.mark.parametrize("padding", [0, 600])  # short text (a call's arguments) and long
def test_a_long_integer_is_read_exactly_in_short_and_long_text(as_bytes: bool, padding: int):
    text = '{"pad": "' + "x" * padding + '", "S3": ' + str(LONG) + ', "S4": -' + str(LONG) + "}"
    got = loads(text.encode() if as_bytes else text)
    assert got["S3"] == LONG and isinstance(got["S3"], int)
    assert got["S4"] == -LONG


@pytest.mark.parametrize("padding", [0, 600])
def test_ordinary_numbers_read_as_orjson_reads_them(padding: int):
    text = '{"pad": "' + "x" * padding + '", "a": 12.345, "b": 18446744073709551615}'
    got = loads(text)
    assert got["a"] == 12.345 and got["b"] == 18446744073709551615


@pytest.mark.parametrize("padding", [0, 600])
def test_a_lone_surrogate_beside_digits_does_not_hide_a_long_integer(padding: int):
    text = '["' + "x" * padding + '\ud800", ' + str(LONG) + "]"
    assert loads(text) == ["x" * padding + "\ud800", LONG]


def test_not_json_is_a_value_error_with_where():
    with pytest.raises(ValueError, match="line 1, column"):
        loads('{"a": ')
    with pytest.raises(ValueError, match="not a JSON number"):
        loads("[NaN]")


@pytest.mark.parametrize(
    "text",
    [
        '{"S3": 12345678901234567890123, "S4": 1.5}',  # beyond 64 bits, exact
        '{"S3": -9223372036854775809}',  # just below the 64-bit range
        '{"S3": 18446744073709551616}',  # just above it
        '{"S3": 18446744073709551615, "S4": -9223372036854775808}',  # the range's ends
        '{"S3": 1e300, "S4": -2.5e19}',  # large floats, as written
        '{"S3": [12345678901234567890123], "S4": {"x": 12345678901234567890123}}',  # nested
        '{"S3": "12345678901234567890123", "S4": true, "S5": null}',
        "[1, 2]",
        "12345678901234567890123",
        '"text"',
        "{}",
    ],
)
def test_stored_arguments_read_what_loads_reads(text: str):
    want = loads(text)
    if not isinstance(want, dict):
        with pytest.raises(ValueError, match="not a JSON object"):
            stored_arguments(text, None)
        return
    got = stored_arguments(text, None)
    assert got == want
    assert [type(v) for v in _values(got)] == [type(v) for v in _values(want)]


@pytest.mark.parametrize(
    ("text", "fast"),
    [
        ('{"S3": 1.5, "S4": -2, "S5": "x", "S6": true, "S7": null}', True),
        ('{"S3": 18446744073709551615, "S4": -9223372036854775808}', True),
        ("{}", True),
        ('{"S3": 12345678901234567890123}', False),  # landed as a float: read exactly
        ('{"S3": 1e300}', False),
        ('{"S3": [1]}', False),
        ('{"S3": {"x": 1}}', False),
        ("[1, 2]", False),
        ('{"a": ', False),
        ('{"a": NaN}', False),
    ],
)
def test_plain_object_reads_a_flat_object_or_leaves_it_to_loads(text: str, fast: bool):
    got = plain_object(text)
    if not fast:
        assert got is None
        return
    want = loads(text)
    assert got == want and [type(v) for v in _values(got)] == [type(v) for v in _values(want)]


def _values(obj: object) -> list[object]:
    if isinstance(obj, dict):
        return [x for v in obj.values() for x in _values(v)]
    if isinstance(obj, list):
        return [x for v in obj for x in _values(v)]
    return [obj]


@pytest.mark.parametrize("text", ['{"a": ', '{"a": NaN}', '{"a": 1} x'])
def test_stored_arguments_refuse_what_loads_refuses(text: str):
    with pytest.raises(ValueError):
        loads(text)
    with pytest.raises(ValueError, match="not a JSON object"):
        stored_arguments(text, None)


def test_json_lines_numbers_every_line_and_skips_blank_ones(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": 1}\n\n   \n[2]\n' + str(LONG).encode())
    assert list(json_lines(path)) == [(1, {"a": 1}), (4, [2]), (5, LONG)]


@pytest.mark.parametrize(
    ("content", "said", "line"),
    [
        (b'{"a": 1}\n\n{"a": \n', "not valid JSON", "line 3"),
        (b"[1]\n\xff\xfe\n", "not UTF-8 text", "line 2"),
    ],
)
def test_json_lines_names_the_file_and_the_line_it_cannot_read(tmp_path, content, said, line):
    path = tmp_path / "x.jsonl"
    path.write_bytes(content)
    with pytest.raises(InputError, match=said) as caught:
        list(json_lines(path))
    assert str(path) in str(caught.value) and line in str(caught.value)


def test_json_lines_of_a_missing_file_or_a_folder_is_one_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        list(json_lines(tmp_path / "absent.jsonl"))
    with pytest.raises(InputError, match="folder"):
        list(json_lines(tmp_path))
