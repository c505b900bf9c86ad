"""A call-by-call timeline of a replayed episode, for the terminal."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentproc.analysis.replay import Replay
from agentproc.labelling import Divergence, Label

VERDICT_STYLE = {
    "faithful": "green",
    "unfaithful_correct": "yellow",
    "wrong": "red",
    "no_answer": "red",
}


def describe(label: Label) -> str:
    """A label in a few words: ``wrong_argument(S3, propagated)``."""
    value = f"{label.argument}={label.got}, expected {label.expected}" if label.argument else None
    attrs = [value, label.cause, label.confused_with and f"as {label.confused_with}"]
    if label.self_correction:
        attrs.append("self-correction")
    if label.breaks_dependency:
        attrs.append("breaks dependency")
    if label.missing_steps is not None:
        attrs.append(f"{label.missing_steps} missing")
    if label.refused:
        attrs.append("refused")
    shown = ", ".join(a for a in attrs if a)
    return f"{label.kind.value}({shown})" if shown else label.kind.value


def _text_rows(replay: Replay, table: Table, div: Divergence | None) -> None:
    """Text mode: one row per parsed line, in the call columns."""
    for i, line in enumerate(replay.text_entries or []):
        mark = div is not None and div["call_index"] == i
        labels = ", ".join(describe(lab) for lab in replay.labels_of(i))
        table.add_row(
            ("▶ " if mark else "") + str(i),
            "text",
            line,
            "",
            Text(labels, style="red" if labels else ""),
            style="bold" if mark else None,
        )


def render_timeline(replay: Replay, console: Console) -> None:
    """Print the timeline, the first divergence marked, then the episode's findings."""
    m = replay.metrics
    div = m["first_divergence"]
    table = Table(title=f"{replay.scenario.id}  ({replay.agent})", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("call")
    table.add_column("arguments", overflow="fold")
    table.add_column("result", overflow="fold")
    table.add_column("labels", overflow="fold")
    if replay.text_entries is not None:
        _text_rows(replay, table, div)
    for rec in replay.calls:
        mark = div is not None and div["call_index"] == rec.index
        labels = ", ".join(describe(lab) for lab in replay.labels_of(rec.index))
        table.add_row(
            ("▶ " if mark else "") + str(rec.index),
            rec.name,
            rec.arguments,
            rec.result,
            Text(labels, style="red" if labels else ""),
            style="bold" if mark else None,
        )
    console.print(table)
    episode = [describe(lab) for lab in replay.labels if lab.call_index is None]
    steps = ", ".join(str(lab.step) for lab in replay.labels if lab.kind.value == "skipped_step")
    verdict = m["verdict"]
    console.print(Text(f"verdict: {verdict}", style=VERDICT_STYLE.get(verdict, "")))
    console.print(
        f"answer: {m['first_answer']} (first), {m['final_answer']} (final); "
        f"expected {replay.scenario.answer}; "
        f"steps executed {m['executed_steps']}/{m['total_steps']}; "
        f"progress {m['progress_rate']:.2f}; correct prefix {m['longest_correct_prefix']}"
    )
    if div is not None:
        step = f"step {div['step']}" if div["step"] is not None else "the answer"
        console.print(f"first divergence: call {div['call_index']} at {step}: {div['label']}")
    if episode:
        skipped = f" (skipped steps: {steps})" if steps else ""
        console.print("episode: " + ", ".join(sorted(set(episode))) + skipped)
    if replay.differences:
        console.print(
            Text(f"{len(replay.differences)} difference(s) from the recording:", style="red")
        )
        for d in replay.differences:
            console.print(f"  - {d}")
    elif replay.compared:
        console.print("replay matches the recording")
