"""The call-by-call timeline of a replay, as printed to a terminal."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path

from helpers import ORACLE, step, submit, tiny_scenario
from rich.cells import cell_len
from rich.console import Console

from agentproc.agents.sim import run_sim_episode
from agentproc.analysis import Replay, replay_calls, replay_record
from agentproc.analysis.render.timeline import describe, render_timeline
from agentproc.labelling import Label, LabelKind
from agentproc.runs import EpisodeSession, episode_record, scenario_of_record

K = LabelKind


GOLDEN = Path(__file__).parents[2] / "golden"


def render(replay: Replay, width: int = 120) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    render_timeline(replay, console)
    return console.file.getvalue()  # type: ignore[attr-defined]


def row(text: str, start: str) -> str:
    """The first table row whose '#' cell starts with ``start``."""
    return next(line for line in text.splitlines() if line.lstrip("│ ").startswith(start))


def recorded_replay(rec: dict) -> Replay:
    rec = json.loads(json.dumps(rec))
    return replay_record(rec, scenario_of_record("run.jsonl", 1, rec), "run.jsonl")


def oracle_replay() -> Replay:
    return recorded_replay(episode_record(run_sim_episode(tiny_scenario(), "sim:oracle")))


def text_replay(output: str) -> Replay:
    session = EpisodeSession(tiny_scenario(), "mine", mode="text")
    session.read_text(output)
    return recorded_replay(episode_record(session.finish("answer")))


# -- tool mode -----------------------------------------------------------------


def test_oracle_replay_shows_verdict_faithful_and_that_the_replay_matches():
    out = render(oracle_replay())
    assert "verdict: faithful" in out
    assert "replay matches the recording" in out
    assert "first divergence" not in out and "▶" not in out


def test_timeline_has_a_row_per_call_with_its_result():
    out = render(oracle_replay())
    for index, result in enumerate(["S3 = 5.000", "S4 = 15.000", "S5 = 12.000", "S6 = 3.000"]):
        assert result in row(out, str(index))
    assert "Answer recorded: 3." in row(out, "4")


def test_timeline_title_names_the_scenario_and_agent():
    assert render(oracle_replay()).splitlines()[0].strip() == "tiny  (sim:oracle)"


def test_timeline_without_a_recording_says_nothing_about_matching():
    out = render(replay_calls(tiny_scenario(), ORACLE))
    assert "verdict: faithful" in out
    assert "replay matches" not in out and "difference" not in out


def test_skipped_step_shows_the_first_divergence_and_marks_the_diverging_call():
    out = render(replay_calls(tiny_scenario(), [step(1), step(2), step(4), submit()]))
    assert "first divergence: call 2 at step 3: skipped_step" in out
    assert "step_4" in row(out, "▶ 2")
    assert [line for line in out.splitlines() if "▶" in line] == [row(out, "▶ 2")]
    assert "episode: skipped_step (skipped steps: 3)" in out


def test_divergence_at_the_answer_names_the_answer():
    out = render(replay_calls(tiny_scenario(), ORACLE[:4]))
    assert "first divergence: call 4 at the answer: missing_answer" in out
    assert "verdict: no_answer" in out


def test_timeline_summary_line_has_answers_steps_progress_and_prefix():
    calls = [step(1), step(2, S3=3), step(4, S4=9), submit(1.8)]
    out = render(replay_calls(tiny_scenario(), calls))
    assert (
        "answer: 1.8 (first), 1.8 (final); expected 3.0; steps executed 3/4; "
        "progress 0.25; correct prefix 1"
    ) in out


def test_a_call_row_shows_its_labels():
    out = render(replay_calls(tiny_scenario(), [step(1), ("step_9", {}), *ORACLE[1:]]))
    assert "hallucinated_call" in row(out, "▶ 1")


def test_differences_from_the_recording_are_listed():
    rec = episode_record(run_sim_episode(tiny_scenario(), "sim:oracle"))
    rec = json.loads(json.dumps(rec))
    rec["calls"][0]["result"] = "S3 = 6.000"
    out = render(recorded_replay(rec))
    assert "1 difference(s) from the recording:" in out
    assert "  - call 0: result was 'S3 = 6.000', replay gives 'S3 = 5.000'" in out
    assert "replay matches" not in out


# -- describe ------------------------------------------------------------------


def test_describe_a_propagated_wrong_argument():
    label = Label(K.WRONG_ARGUMENT, 3, 4, cause="propagated", argument="S3", expected=5.0, got=4.5)
    assert describe(label) == "wrong_argument(S3=4.5, expected 5.0, propagated)"


def test_describe_a_confused_wrong_argument_names_the_variable():
    label = Label(
        K.WRONG_ARGUMENT,
        1,
        2,
        cause="lookback_confusion",
        argument="S3",
        expected=5.0,
        got=3,
        confused_with="S2",
    )
    assert describe(label) == "wrong_argument(S3=3, expected 5.0, lookback_confusion, as S2)"


def test_describe_a_label_without_attributes_is_its_kind():
    assert describe(Label(K.HALLUCINATED_CALL, 2)) == "hallucinated_call"
    assert describe(Label(K.SKIPPED_STEP, None, 3, live=False)) == "skipped_step"


def test_describe_shows_self_correction_dependency_missing_steps_and_refusal():
    assert describe(Label(K.REPEATED_STEP, 2, 1, self_correction=True)) == (
        "repeated_step(self-correction)"
    )
    assert describe(Label(K.REPEATED_STEP, 2, 1, self_correction=False)) == "repeated_step"
    assert describe(Label(K.REORDERED, 0, 2, breaks_dependency=True, refused=True)) == (
        "reordered(breaks dependency, refused)"
    )
    assert describe(Label(K.PREMATURE_FINISH, 3, missing_steps=2)) == "premature_finish(2 missing)"


def test_describe_a_wrong_answer_shows_its_cause():
    label = Label(K.WRONG_ANSWER, 4, cause="propagated", expected=3.0, got=1.8)
    assert describe(label) == "wrong_answer(propagated)"


# -- text mode -----------------------------------------------------------------


def test_text_replay_has_a_text_row_per_parsed_line():
    reply = "Working:\nS3 = 5.000\nS4 = 15.000\nS5 = 12.000\nS6 = 3.000\nAnswer: 3"
    out = render(text_replay(reply))
    for index, line in enumerate(["S3 = 5.000", "S4 = 15.000", "S5 = 12.000", "S6 = 3.000"]):
        cells = re.split(r"\s{2,}", row(out, str(index)).strip())
        assert cells[1:3] == ["text", line]
    assert "Working:" not in out
    assert "verdict: faithful" in out and "replay matches the recording" in out


def test_text_replay_marks_the_diverging_line_with_its_label():
    out = render(text_replay("S3 = 5.000\nS4 = 16.000\nS5 = 12.000\nS6 = 3.000\nAnswer: 3"))
    marked = row(out, "▶ 1")
    assert "S4 = 16.000" in marked and "wrong_argument(S4=16.0, expected 15.0" in marked
    assert "first divergence: call 1 at step 2: wrong_argument" in out


# -- compact at 80 and 120 columns ---------------------------------------------

MIXED = [step(1), step(2, S3=3), ("step_9", {}), step(4, S4=9, S3=5), submit(1.8)]


def check_golden(text: str, name: str) -> None:
    """Compare with ``tests/golden/<name>``; ``AGENTPROC_UPDATE_GOLDEN=1`` rewrites it."""
    if os.environ.get("AGENTPROC_UPDATE_GOLDEN"):
        (GOLDEN / name).write_text(text)
    assert text == (GOLDEN / name).read_text()


def test_timeline_at_80_columns_matches_golden():
    check_golden(render(replay_calls(tiny_scenario(), MIXED), 80), "timeline_tiny_80.txt")


def test_timeline_at_120_columns_matches_golden():
    check_golden(render(replay_calls(tiny_scenario(), MIXED), 120), "timeline_tiny.txt")


def test_no_line_is_wider_than_the_console():
    replay = replay_calls(tiny_scenario(), MIXED)
    for width in (80, 120):
        assert max(len(line) for line in render(replay, width).splitlines()) <= width


def test_at_120_columns_every_call_is_one_line():
    out = render(replay_calls(tiny_scenario(), MIXED), 120)
    assert "↳" not in out
    assert "wrong_argument(S3=3, expected 5.0, lookback_confusion, as S2)" in row(out, "▶ 1")


def test_at_80_columns_a_long_label_takes_one_continuation_line():
    lines = render(replay_calls(tiny_scenario(), MIXED), 80).splitlines()
    at = lines.index(row("\n".join(lines), "▶ 1"))
    assert (
        lines[at + 1].strip() == "↳ wrong_argument(S3=3, expected 5.0, lookback_confusion, as S2)"
    )
    assert lines[at + 2].lstrip().startswith("2  step_9")
    assert "hallucinated_call" in lines[at + 2]


def test_repeated_identical_calls_fold_into_one_line_with_their_count():
    calls = [step(1), step(2), step(3), *[step(3)] * 12, step(4), submit()]
    out = render(replay_calls(tiny_scenario(), calls), 80)
    folded = row(out, "▶ 3")
    assert "step_3 \u00d7 12" in folded and "repeated_step" in out
    assert not any(line.lstrip().startswith(("4 ", "14 ")) for line in out.splitlines())
    assert row(out, "15").split()[1] == "step_4"


def test_the_repeat_note_is_shortened_to_the_value_it_replaced():
    out = render(replay_calls(tiny_scenario(), [step(1), step(1), *ORACLE[1:]]))
    assert "S3 = 5.000 (again, was 5.000)" in row(out, "▶ 1")
    assert "had already been executed" not in out


def test_a_megabyte_of_arguments_shows_its_ends_and_how_much_lies_between():
    text = '{"S1": 2, "S2": 3, "pad": "' + "x" * 1_000_000 + '"}'
    out = render(replay_calls(tiny_scenario(), [("step_1", text), *ORACLE]), 80)
    assert len(out) < 8000 and "…" not in out
    assert '{"S1"' in row(out, "▶ 0")
    flat = "".join(out.split())
    assert "[999,629charactersmore]" in flat and 'x"}' in flat


def test_long_arguments_and_results_wrap_whole_within_the_width():
    args = {f"S{i}": 1000 + i / 1000 for i in range(1, 9)}
    out = render(replay_calls(tiny_scenario(), [("step_1", args), *ORACLE]), 80)
    assert "…" not in out and max(cell_len(line) for line in out.splitlines()) <= 80
    flat = "".join(out.split())
    assert all(f'"S{i}":{1000 + i / 1000}' in flat for i in range(1, 9))


def test_control_characters_in_arguments_stay_on_the_line():
    out = render(replay_calls(tiny_scenario(), [("step_1", '{"S1": 2,\n"S2": 3}'), *ORACLE[1:]]))
    assert '\\n"S2"' in row(out, "0")


def test_each_label_kind_has_its_colour_and_the_divergence_is_marked():
    console = Console(file=io.StringIO(), width=120, color_system="standard", force_terminal=True)
    calls = [step(1), step(1), ("step_9", {}), step(2, S3=4), step(3), step(4), submit()]
    render_timeline(replay_calls(tiny_scenario(), calls), console)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    styles = {}
    for kind in ("repeated_step", "hallucinated_call", "wrong_argument"):
        at = out.index(kind)
        styles[kind] = out[out.rindex("\x1b[", 0, at) : at]
    assert len(set(styles.values())) == 3


def test_label_lines_wrap_within_the_width_on_the_command_lines_soft_wrap_console():
    # the command line's console soft-wraps (leaves long lines to the terminal): label
    # lines must still keep within its width, every label whole
    console = Console(file=io.StringIO(), width=60, soft_wrap=True, color_system=None)
    render_timeline(replay_calls(tiny_scenario(), MIXED), console)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert [line for line in text.splitlines() if cell_len(line) > 60] == []
    flat = " ".join(text.split())
    assert "wrong_argument(S3=3, expected 5.0, lookback_confusion, as S2)" in flat
