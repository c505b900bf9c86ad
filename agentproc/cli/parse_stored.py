"""The grammar of the commands over stored runs: ``replay``, ``relabel`` and ``report``."""

from __future__ import annotations

import argparse
from pathlib import Path

from agentproc.cli.argparser import Parser
from agentproc.cli.examples import examples
from agentproc.cli.option_types import price
from agentproc.cli.output import guard, words


def add_stored_parsers(sub: argparse._SubParsersAction[Parser]) -> None:
    """``replay``, ``relabel`` and ``report``, in that order."""
    rp = sub.add_parser(
        "replay",
        help="re-execute recorded calls, re-label them, show a timeline",
        **examples("replay"),
    )
    rp.add_argument("run", type=Path, nargs="?", help="run file (JSON lines)")
    rp.add_argument("--episode", help="scenario id of the episode to show")
    rp.add_argument("--scenario", type=Path, help="a scenario file, with --messages")
    rp.add_argument("--messages", type=Path, help="an OpenAI chat-completions message list (JSON)")
    rp.add_argument("--otel", type=Path, help="OpenTelemetry GenAI traces (OTLP JSON)")
    rp.add_argument("--guard", type=guard, default="observe", help="guard mode for --messages")
    rp.add_argument(
        "--mode",
        choices=["tools", "text"],
        help="how --messages is read: tools (its tool calls; the default) or text (its replies, "
        "as a text-mode run's)",
    )
    rp.add_argument(
        "--variant",
        help="the variant --messages ran under (a shipped name or a .toml/.json file; "
        "calculator: add/sub/mul/div calls)",
    )
    rp.add_argument(
        "--json", action="store_true", help="print JSON (one object per episode, per line)"
    )

    rl = sub.add_parser(
        "relabel",
        help="label a stored run again with the current monitor (runs nothing)",
        **examples("relabel"),
    )
    rl.add_argument("run", type=Path, help="run file (JSON lines)")
    rl.add_argument("--out", type=Path, help="write the relabelled run here (default: only count)")
    rl.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    for q, default in ((rp, "listed for --messages"), (rl, "written in --out")):
        q.add_argument(
            "--order",
            choices=["listed", "dependency"],
            help=f"label under this order policy (default: as recorded; {default})",
        )
        q.add_argument(
            "--suite", type=Path, help="where the suite the run refers to is now (if it moved)"
        )

    rep = sub.add_parser(
        "report", help="tables of accuracy, faithfulness and labels", **examples("report")
    )
    rep.add_argument("runs", type=Path, nargs="+", help="run files (shards are merged)")
    rep.add_argument(
        "--json",
        action="store_true",
        help="print the report as strict JSON: every group, every rate with its interval",
    )
    rep.add_argument(
        "--csv", type=Path, metavar="DIR", help="also write DIR/episodes.csv and DIR/cells.csv"
    )
    rep.add_argument(
        "--parquet",
        type=Path,
        metavar="DIR",
        help="also write DIR/episodes.parquet and DIR/cells.parquet (needs the parquet extra)",
    )
    rep.add_argument(
        "--html",
        type=Path,
        metavar="OUT.html",
        help="write a self-contained HTML report (figures, tables, episode drill-down)",
    )
    rep.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing --html file or --csv/--parquet tables",
    )
    rep.add_argument(
        "--price",
        type=price,
        metavar="IN,OUT",
        help="USD per million input and output tokens: each agent's token cost, e.g. 3,15",
    )
    rep.add_argument(
        "--by",
        type=words,
        default=None,
        help="knobs to group by, in order: length, lookback, range, ops, mode; a knob "
        "the suite does not vary gets no table (default: length,lookback; none on a "
        "suite of declared workflows, whose tables are by workflow and by path)",
    )
