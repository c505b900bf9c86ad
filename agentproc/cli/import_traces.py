"""``agentproc import-traces``: label the tool calls of OpenTelemetry GenAI traces and
write them as a run file (one episode per trace)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from agentproc.cli.output import EXIT_OK, guard, say
from agentproc.errors import counted

SHOWN = 5
"""Differing calls noted one by one; the rest are counted in one line."""
NOTE_CHARS = 400
"""The longest note (a tool result may be long): cut past it."""


def add_import_traces_parser(sub: Any) -> None:
    """The ``import-traces`` command's options."""
    p = sub.add_parser(
        "import-traces",
        help="label the tool calls of OpenTelemetry GenAI traces (OTLP JSON) as a run file",
    )
    p.add_argument(
        "file", type=Path, help="OTLP JSON traces, or JSON Lines of them (GenAI, OpenInference)"
    )
    p.add_argument("--scenario", type=Path, required=True, help="the scenario the agent ran")
    p.add_argument("--out", type=Path, required=True, help="run file (JSON lines) to write")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    p.add_argument(
        "--guard", type=guard, default="observe", help="observe (default), enforce or feedback"
    )
    p.add_argument("--order", choices=["listed", "dependency"], default="listed")


def import_traces_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    from agentproc.integrations.imported import import_traces
    from agentproc.integrations.otel_traces import read_traces
    from agentproc.outputs import check_output
    from agentproc.workflow import load_scenario

    check_output(args.out, inputs=[args.file, args.scenario], overwrite=args.overwrite)
    scenario = load_scenario(args.scenario)
    traces = read_traces(args.file)
    done = import_traces(
        scenario,
        traces,
        args.out,
        args.file,
        args.guard,
        args.order,
        note=lambda line: say(err, f"agentproc: {line}"),
    )
    notes = [(item.trace.trace_id, d) for item in done for d in item.differences]
    for trace_id, d in notes[:SHOWN]:
        note = f"agentproc: trace {trace_id}: {d}"
        say(err, note if len(note) <= NOTE_CHARS else note[: NOTE_CHARS - 3] + "...")
    if len(notes) > SHOWN:
        differing = len({trace_id for trace_id, _ in notes})
        say(
            err,
            f"agentproc: {len(notes):,} calls in {differing:,} of {len(done):,} traces: the tool "
            f"result the trace recorded differs from the replay's (the first {SHOWN} above)",
        )
    verdicts = ", ".join(item.episode.metrics["verdict"] for item in done)
    wrote = f"wrote {counted(len(done), 'episode')} to {args.out}"
    out.print(f"{wrote} (verdicts: {verdicts})", highlight=False)
    return EXIT_OK
