"""A long prompt template is stored once per run file, and every reader still gets it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentproc.cli import main
from agentproc.runs import specs
from agentproc.runs.specs import REF, resolve_messages
from tests.helpers import cli

TEMPLATE = 5 * 1024 * 1024  # characters of a system prompt template


@pytest.fixture(scope="module")
def long_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("long")
    assert main(["generate", "--steps", "3", "--count", "4", "--out", str(root / "suite")]) == 0
    system = "Follow the procedure. " + "x" * TEMPLATE
    (root / "long.json").write_text(json.dumps({"prompt": {"system": system}}))
    argv = [
        "run",
        str(root / "suite"),
        "--agent",
        "sim:oracle",
        "--variant",
        str(root / "long.json"),
    ]
    assert main([*argv, "--out", str(root / "r.jsonl")]) == 0
    return root


def test_a_long_template_is_stored_once_per_run_file(long_run: Path):
    run = long_run / "r.jsonl"
    lines = [json.loads(line) for line in run.read_text().splitlines()]
    assert len(lines) == 4
    assert "variant_spec" in lines[0] and all("variant_spec" not in r for r in lines[1:])
    assert len({r[REF] for r in lines}) == 1
    # The template once per file (in the spec; every system message refers to it),
    # whatever the number of records.
    assert TEMPLATE < run.stat().st_size < 1.1 * TEMPLATE
    assert all(r["bulk"]["messages"][0]["content"] is None for r in lines)


def test_the_prompt_messages_are_given_back_whole(long_run: Path):
    run = long_run / "r.jsonl"
    lines = [json.loads(line) for line in run.read_text().splitlines()]
    first, last = (resolve_messages(run, r["bulk"]["messages"]) for r in (lines[0], lines[-1]))
    assert last[0]["content"] == first[0]["content"] and len(first[0]["content"]) > TEMPLATE
    assert lines[-1]["bulk"]["messages"][0]["content"] is None  # stored by its digest


def test_replay_and_relabel_find_the_template_by_its_digest(capsys, long_run: Path, tmp_path):
    run = long_run / "r.jsonl"
    code, out, err = cli(capsys, "replay", run)
    assert code == 0, err
    assert "4 episodes replayed; 0 differ" in out
    code, out, err = cli(capsys, "relabel", run, "--out", tmp_path / "again.jsonl")
    assert code == 0 and "relabelled 4 episodes: 0 changed" in out, err
    assert (tmp_path / "again.jsonl").stat().st_size < 2.2 * TEMPLATE


def test_the_html_report_of_a_long_template_run(capsys, long_run: Path, tmp_path):
    code, _, err = cli(capsys, "report", long_run / "r.jsonl", "--html", tmp_path / "r.html")
    assert code == 0, err


def test_a_digest_no_line_holds_is_bad_input(capsys, long_run: Path, tmp_path, monkeypatch):
    monkeypatch.setattr(specs, "_found", {})  # nothing found in the other files
    lines = (long_run / "r.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "cut.jsonl").write_text("".join(lines[1:]))  # the line with the spec is gone
    code, _, err = cli(capsys, "replay", tmp_path / "cut.jsonl")
    assert code == 2 and "cut.jsonl" in err and REF in err and "Traceback" not in err


def test_a_message_that_is_the_specs_prompt_refers_to_it_unless_redaction_would_change_it():
    from agentproc.runs.specs import CONTENT_REF, SharedSpecs

    plain = "Follow the procedure. " + "x" * specs.LONG_SPEC
    secret = plain + " sk-abcdefghijklmnopqrstuvwxyz"
    for text, kept in ((plain, False), (secret, True)):
        messages = [{"role": "system", "content": text}, {"role": "user", "content": "S1 = 2"}]
        rec = {"variant_spec": {"prompt": {"system": text}}, "messages": messages}
        first = SharedSpecs().share(rec)
        assert first["variant_spec"] == rec["variant_spec"]
        message = first["messages"][0]
        assert (message["content"] == text) is kept and isinstance(message[CONTENT_REF], str)
