"""Redaction: secrets never reach a run file, a log or a report, in any form."""

from __future__ import annotations

import base64
import importlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentproc.runs import redact
from agentproc.runs.redact import (
    _SUSPECT,
    REDACTED,
    _suspect,
    current_secrets,
    needs_redaction,
    redact_arguments,
    redact_data,
    redact_values,
    secret_env,
    secret_url,
    secret_value,
)


@pytest.fixture(autouse=True)
def no_secrets_from_other_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials other tests registered (``ann``, say) are redacted whatever their
    length: each test here starts with none."""
    module = importlib.import_module("agentproc.runs.redact")  # the package has redact()
    monkeypatch.setattr(module, "_values", set())
    monkeypatch.setattr(module, "_key_envs", set())


def test_a_key_echoed_without_its_vendor_prefix_is_redacted(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET123")
    text = "invalid key test-SECRET123 (sent sk-test-SECRET123)"
    assert redact(text) == f"invalid key {REDACTED} (sent {REDACTED})"


def test_a_short_remainder_of_a_prefix_is_left_alone(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-abcdefgh12")
    assert redact("sk-abcdefgh12 abcdefgh12") == f"{REDACTED} {REDACTED}"
    assert redact("the word abc") == "the word abc"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Basic YW5uOmh1bnRlcjI=", f"Authorization: {REDACTED}"),
        ('{"authorization": "raw-token-value"}', f'{{"authorization": "{REDACTED}"}}'),
        ("{'Authorization': 'Token abcdefgh'}", f"{{'Authorization': '{REDACTED}'}}"),
        ("GET http://ann:pw@127.0.0.1:8/v1 failed", f"GET http://{REDACTED}@127.0.0.1:8/v1 failed"),
        ("https://tok@host/v1", f"https://{REDACTED}@host/v1"),
        ("mail ann@example.org", "mail ann@example.org"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
    ],
)
def test_authorization_values_and_url_credentials_are_redacted(text: str, expected: str):
    assert redact(text) == expected


def test_a_known_credential_of_any_length_is_redacted_in_every_form():
    secret_url("http://ab:pw7char@127.0.0.1:9/v1")
    b64 = base64.b64encode(b"pw7char").decode()
    pair = base64.b64encode(b"ab:pw7char").decode()
    forms = ["pw7char", b64, b64.rstrip("="), pair, "ab%3Apw7char", '"ab:pw7char"']
    out = redact(" ".join(f"<{f}>" for f in forms))
    assert out == " ".join(["<[REDACTED]>"] * 5 + ['<"[REDACTED]">']), out


def test_a_short_value_guessed_from_a_variable_name_is_left_alone(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "true")
    assert redact("it is true") == "it is true"


def test_url_credentials_are_secrets_in_every_form_a_client_sends():
    secret_url("http://bob:s3cret%2Fpass@127.0.0.1:9/v1")
    basic = base64.b64encode(b"bob:s3cret/pass").decode()
    leaked = f"user bob:s3cret/pass, header {basic}, password s3cret/pass, raw s3cret%2Fpass"
    out = redact(leaked)
    for secret in ("s3cret/pass", basic, "s3cret%2Fpass"):
        assert secret not in out


def test_redact_values_reaches_free_text_and_calls_but_never_field_names(monkeypatch):
    # Field names are the file's structure (a key "e" must not turn "name" into
    # "nam[REDACTED]"); a long secret goes from a call's name and arguments too (the
    # session cut it before the call ran, so replay re-executes what is stored).
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-0123456789")
    rec = {
        "calls": [{"name": "tok-0123456789", "arguments": "tok-0123456789", "result": "x"}],
        "messages": [{"content": ["x tok-0123456789"], "tool_calls": [
            {"id": "tok-0123456789", "function": {"name": "f", "arguments": "tok-0123456789"}}
        ]}],
        "tok-0123456789": 1,
        "n": 5,
        "name": "tok-0123456789",
    }  # fmt: skip
    got = redact_values(rec)
    assert got["messages"][0]["content"] == [f"x {REDACTED}"]
    assert got["messages"][0]["tool_calls"][0]["id"] == REDACTED
    assert got["messages"][0]["tool_calls"][0]["function"]["arguments"] == REDACTED
    assert got["calls"] == [{"name": REDACTED, "arguments": REDACTED, "result": "x"}]
    assert got["tok-0123456789"] == 1 and got["n"] == 5
    assert got["name"] == rec["name"]  # the run's own name (``run --name``) is ours


_PIECES = st.sampled_from(
    ["authorization", "Bearer", "BASIC", "basic", "sk-", "SK-", "://", ":/", "bear", "bas",
     "auth", "author\u0130zation", "bas\u0131c", "ba\u017fic", "\u212a", " ", '"', "x",
     "\u00e9", "-", "dXNlcjpwYXNzd29yZA==", "abcdefgh12", "plan", "\t", "=", ":"]
)  # fmt: skip


@given(st.lists(_PIECES, max_size=8).map("".join))
def test_the_fast_check_says_maybe_wherever_a_token_pattern_could_match(text: str):
    # The words the token patterns need, in any case and beside the look-alike letters
    # that the expression's case folding matches, and tokens after them: the check a
    # writer makes for every line never says "no" where redaction would change the line,
    # and says "no" wherever none of the words is.
    if not _suspect(text):
        assert redact_data(text, secrets=()) == text
    if _SUSPECT.search(text) is None:
        assert not _suspect(text)


_QUERY_PIECES = st.sampled_from(
    ["key", "KEY", "api", "x-", "_", "-", "=", "==", " ", '"', "token", "access", "sig",
     "nature", "secret", "client", "code", "pass", "word", "auth", "s", "a"]
)  # fmt: skip


@given(st.lists(_QUERY_PIECES, max_size=10).map("".join))
def test_a_query_word_is_suspect_exactly_where_the_expression_finds_it(text: str):
    # The query words (``key=``, ``x-api-key=``) are looked for back from each ``=`` sign
    # of the text, not by a search of the whole text for each: the same answer.
    assert _suspect(text) == (_SUSPECT.search(text) is not None)


def test_a_basic_plan_is_data_and_a_basic_credential_is_suspect():
    # "basic" and "bearer" are common in data (a workflow's plan names one): a line is
    # suspect only where a token follows them, as the patterns that remove it need.
    assert not needs_redaction('{"result": "plan = basic", "args": {"plan": "basic"}}')
    assert not needs_redaction('{"content": "a basic arithmetic step; the bearer of it"}')
    assert needs_redaction('{"content": "Authorization: Basic dXNlcjpwYXNzd29yZA=="}')
    assert needs_redaction('{"content": "sent basic dXNlcjpwYXNzd29yZA== back"}')
    assert needs_redaction('{"content": "basic plan, then Bearer abcdefgh12"}')


def test_a_token_word_in_a_long_line_or_beside_other_letters_is_found():
    line = '{"x": "' + "a" * 50_000 + '", "y": "AUTHORIZATION: raw"}'
    assert needs_redaction(line)
    assert not needs_redaction(line.replace("AUTHORIZATION", "AUTHORISATION"))
    assert needs_redaction("author\u0130zation = raw")  # İ: the expression's folding


def test_a_short_secret_never_leaves_data_but_leaves_error_text(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "ok")
    secret_env("OPENAI_API_KEY")
    assert redact_data("ok, S1 = 1") == "ok, S1 = 1"
    assert redact("Incorrect API key provided: ok.") == f"Incorrect API key provided: {REDACTED}."
    assert redact("token expired") == "token expired"  # inside a word: not the key


def test_a_secret_is_never_one_side_of_a_decimal_point():
    assert redact("got 4.1 and 1.5 from 127.0.0.1, attempt 1", ["1"]) == (
        f"got 4.1 and 1.5 from 127.0.0.1, attempt {REDACTED}"
    )


def test_a_middle_length_secret_goes_from_data_as_a_whole_word_and_a_long_one_anywhere():
    assert redact_data("k3yAB7x; xk3yAB7xx", ["k3yAB7x"]) == f"{REDACTED}; xk3yAB7xx"
    long = "k3y-0123456789abcdef"
    assert redact_data(f"x{long}y", [long]) == f"x{REDACTED}y"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("GET /v1?api_key=abc&n=1", f"GET /v1?api_key={REDACTED}&n=1"),
        ("http://h/v1?a=1&SIG=x%2Fy#f", f"http://h/v1?a=1&SIG={REDACTED}#f"),
        ("?access_token=t0k", f"?access_token={REDACTED}"),
        ("/v1?keyboard=1&monkey=2", "/v1?keyboard=1&monkey=2"),
        ("a basic arithmetic procedure", "a basic arithmetic procedure"),
    ],
)
def test_query_credentials_go_and_look_alikes_stay(text: str, expected: str):
    assert redact_data(text, []) == expected


def test_a_query_credential_of_the_base_url_is_a_secret_wherever_it_is_quoted():
    secret_url("http://127.0.0.1:9/v1?api-version=2&sig=s1g")
    assert redact("signature s1g refused; version 2") == f"signature {REDACTED} refused; version 2"


def test_a_key_that_spells_a_verdict_or_a_kind_changes_no_field_of_a_record():
    rec = {
        "verdict": "faithful",
        "labels": [{"kind": "skipped_step", "argument": "S1"}],
        "error": {"kind": "endpoint", "message": "endpoint said faithful", "attempts": 1},
    }
    got = redact_values(rec, ["faithful", "endpoint", "skipped_step", "S1"])
    assert got["verdict"] == "faithful" and got["labels"] == rec["labels"]
    assert got["error"] == {**rec["error"], "message": f"{REDACTED} said {REDACTED}"}


def test_redacting_twice_changes_nothing_more():
    # An error is redacted when it is recorded and again when its line is written.
    text = "headers: {'authorization': 'Basic dTpw', 'api-key': 'k'} GET http://u:p@h/?sig=s"
    once = redact(text)
    assert redact(once) == once and "]]" not in once


LONG_KEY = "k3y-0123456789abcdef"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f'{{"S1": 2, "note": "key {LONG_KEY}"}}', '{"S1": 2, "note": "key [REDACTED]"}'),
        (f'{{"{LONG_KEY}": 1}}', '{"[REDACTED]": 1}'),  # a key is a string too
        ('{"S1": 5551234567890123, "S2": 1.5}', '{"S1": "[REDACTED]", "S2": 1.5}'),
        ('{"S1": 4.5551234567890123}', '{"S1": "[REDACTED]"}'),
        ('{"note": "p\\u00e4ss\\/w0rd-Long"}', '{"note": "[REDACTED]"}'),  # escapes read
        (f'{{"S1": 2, "note": "{LONG_KEY}', f'{{"S1": 2, "note": "{REDACTED}'),  # no JSON
        ('{"note": "Bearer abcdefgh12"}', '{"note": "Bearer [REDACTED]"}'),  # a shape
    ],
    ids=["string", "key", "number", "decimals", "escaped", "not-json", "shape"],
)
def test_a_long_credential_goes_from_a_calls_arguments_wherever_it_is(text, expected):
    secrets = [LONG_KEY, "5551234567890123", "päss/w0rd-Long"]
    assert redact_arguments(text, secrets) == expected
    assert redact_arguments(expected, secrets) == expected  # once is enough


@pytest.mark.parametrize(
    "text",
    [
        '{"S1": 1, "S2": 12345678, "note": "ok 12345678 1.0"}',
        '{"S1": 2.000, "S2": -3}',
        '{"S1" :  1 ,"S2":2}',  # spacing as sent
        "not json, 1 and ok",
    ],
)
def test_a_short_or_numeric_middle_length_key_leaves_arguments_as_they_came(text):
    assert redact_arguments(text, ["1", "ok", "2.000", "12345678", "-3"]) == text


def test_a_middle_length_key_goes_from_an_arguments_string_as_a_whole_word():
    text = '{"S1": 1, "note": "k3yAB7x, xk3yAB7xx"}'
    assert redact_arguments(text, ["k3yAB7x"]) == '{"S1": 1, "note": "[REDACTED], xk3yAB7xx"}'


def test_a_numeric_middle_length_secret_stays_in_data_but_not_in_error_text():
    assert redact_data("S3 = 12345678", ["12345678"]) == "S3 = 12345678"
    assert redact("refused 12345678", ["12345678"]) == f"refused {REDACTED}"


def test_the_secrets_follow_the_environment_and_are_found_once_for_each(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-0123456789")
    first = current_secrets()
    assert "tok-0123456789" in first and current_secrets() is first  # found once
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-9876543210")
    assert "tok-9876543210" in current_secrets() and "tok-0123456789" not in current_secrets()
    monkeypatch.delenv("MY_SERVICE_TOKEN")
    monkeypatch.setenv("OTHER_API_KEY", "other-0123456789")
    assert "tok-9876543210" not in current_secrets()
    assert redact_data("other-0123456789") == REDACTED
    secret_value("given-0123456789")
    assert redact_data("given-0123456789") == REDACTED
    monkeypatch.setenv("KEY_VAR", "var-0123456789")
    secret_env("KEY_VAR")
    assert redact_data("var-0123456789") == REDACTED
    monkeypatch.setenv("KEY_VAR", "var-9876543210")
    assert redact_data("var-0123456789 var-9876543210") == f"var-0123456789 {REDACTED}"
