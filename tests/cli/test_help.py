"""Every ``--help`` within 80 and 120 columns, nothing cut; ``run --help`` in groups
with its defaults shown."""

from __future__ import annotations

import argparse
import re

import pytest

from agentproc.cli import main
from agentproc.cli.help import Option
from agentproc.cli.parse_runs import EPISODE_OPTIONS, RUN_GROUPS, RUN_OPTIONS
from agentproc.cli.parser import build_parser

PARSERS = next(
    a.choices for a in build_parser()._actions if isinstance(getattr(a, "choices", None), dict)
)
COMMANDS = sorted(PARSERS)


def help_text(capsys, monkeypatch: pytest.MonkeyPatch, width: int, *argv: str) -> str:
    monkeypatch.setenv("COLUMNS", str(width))
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    return capsys.readouterr().out


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_every_help_keeps_within_the_width_and_cuts_nothing(
    command: str, width: int, capsys, monkeypatch
):
    text = help_text(capsys, monkeypatch, width, *([command] if command else []))
    assert [line for line in text.splitlines() if len(line) > width] == []
    assert "…" not in text


def sections(text: str) -> dict[str, str]:
    """The help's sections by title (``the run``, ``output``, ...)."""
    parts = re.split(r"^(\S[^\n]*):\n", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_run_help_groups_its_options():
    got = sections(PARSERS["run"].format_help())
    assert list(got)[-5:] == ["the run", "the agent", "the variant", "output", "examples"]
    for title, options in {
        "the run": ("--limit", "--trials", "--concurrency", "--workers", "--seed"),
        "the agent": ("--agent", "--name", "--base-url", "--timeout", "--retries"),
        "the variant": ("--variant",),
        "output": ("--out", "--resume", "--overwrite", "--self-contained"),
    }.items():
        for option in options:
            assert re.search(rf"^  {option}\b", got[title], re.MULTILINE), (title, option)


def test_run_help_lists_each_groups_options_in_the_declared_order():
    got = sections(PARSERS["run"].format_help())
    for title, dests in RUN_GROUPS.items():
        flags = re.findall(r"^  (--[a-z-]+)", got[title], re.MULTILINE)
        assert flags == ["--" + d.replace("_", "-") for d in dests], title


def test_run_usage_lists_the_options_in_the_order_the_help_explains_them():
    text = PARSERS["run"].format_help()
    usage, body = text.split("\n\n", 1)
    explained = [f for f in re.findall(r"^  (--[a-z-]+)", body, re.MULTILINE) if f != "--help"]
    assert re.findall(r"(--[a-z-]+)", usage) == explained


@pytest.mark.parametrize("options", [EPISODE_OPTIONS, RUN_OPTIONS])
def test_each_shared_option_is_keyed_by_its_dest(options: dict[str, Option]):
    parser = argparse.ArgumentParser()
    assert {dest: opt.add_to(parser).dest for dest, opt in options.items()} == {
        dest: dest for dest in options
    }


def test_compare_and_stress_take_every_episode_option_and_run_groups_them():
    for command in ("compare", "stress", "run"):
        dests = {a.dest for a in PARSERS[command]._actions}
        assert set(EPISODE_OPTIONS) <= dests, command
    assert {d for ds in RUN_GROUPS.values() for d in ds} <= set(EPISODE_OPTIONS) | set(RUN_OPTIONS)


def test_run_help_shows_the_defaults(capsys, monkeypatch):
    text = " ".join(help_text(capsys, monkeypatch, 80, "run").split())
    assert "--concurrency CONCURRENCY episodes in flight at once (default: 1)" in text
    assert "--timeout TIMEOUT seconds per model call (default: 120.0)" in text
    assert "--retries RETRIES retries per model call (429, 5xx, timeouts) (default: 4)" in text
    assert "(default: default)" in text and "(default: tools)" in text
    assert "(default: default: " not in text  # a help that states its default is left alone


def test_check_help_examples_are_whole_commands_at_80_columns(capsys, monkeypatch):
    text = help_text(capsys, monkeypatch, 80, "check")
    examples = text.split("examples:\n", 1)[1]
    joined = examples.replace("\\\n", " ")
    assert " ".join(joined.split()).count("agentproc check ") == 2
    assert "--junit check.xml" in joined
