"""``agentproc export``: a run file's labelled episodes in another format (``--otel``:
OpenTelemetry GenAI spans as OTLP JSON, the labels as span events)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console

from agentproc.cli.output import EXIT_OK, say
from agentproc.errors import counted


def add_export_parser(sub: Any) -> None:
    """The ``export`` command's options."""
    p = sub.add_parser("export", help="write a run file's labelled episodes as OTLP JSON spans")
    p.add_argument("run", type=Path, help="run file (JSON lines)")
    p.add_argument("--otel", type=Path, required=True, help="OTLP JSON file to write (GenAI spans)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --otel file")


def export_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    from agentproc.integrations.otel_export import otlp_json
    from agentproc.outputs import check_output, replacing
    from agentproc.runs import ReadReport, latest_records

    check_output(args.otel, inputs=[args.run], overwrite=args.overwrite, option="--otel")
    report = ReadReport()
    records = [rec for _, _, rec in latest_records([args.run], [report])]
    data = otlp_json(records)
    # Written beside and renamed into place: a failed write leaves an old file as it was.
    with replacing(args.otel) as tmp:
        tmp.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    say(err, *report.warnings)
    out.print(f"wrote {counted(len(records), 'episode')} as traces to {args.otel}", highlight=False)
    return EXIT_OK
