"""``agentproc import-traces``: label the tool calls of OpenTelemetry GenAI traces and
write them as a run file (one episode per trace)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from agentproc.cli.output import EXIT_OK, guard, say
from agentproc.errors import counted


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
    for item in done:
        for d in item.differences:
            say(err, f"agentproc: trace {item.trace.trace_id}: {d}")
    verdicts = ", ".join(item.episode.metrics["verdict"] for item in done)
    wrote = f"wrote {counted(len(done), 'episode')} to {args.out}"
    out.print(f"{wrote} (verdicts: {verdicts})", highlight=False)
    return EXIT_OK
