"""``agentproc serve-mcp``: serve a suite's scenarios to an MCP client, one at a time,
and write what it did as a run file."""

from __future__ import annotations

import argparse
import importlib
import itertools
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console

from agentproc.cli.output import EXIT_OK, count, guard, label, port, say
from agentproc.errors import ConfigError, InputError, counted

PORT = 8000
"""The HTTP transport's default port."""
EXTRA_MISSING = (
    "serve-mcp needs the MCP extra: pip install 'agentproc[mcp]' (the mcp package is not installed)"
)


def add_serve_mcp_parser(sub: Any) -> None:
    """The ``serve-mcp`` command's options."""
    p = sub.add_parser(
        "serve-mcp",
        help="serve a suite's scenarios as MCP tools, one at a time, and write a run file",
        description="Serve a suite's scenarios to an MCP client one at a time: the open "
        "scenario's tools, its procedure as the prompt 'procedure' and the resource "
        "agentproc://procedure, and a tool next_scenario that finishes the episode and opens "
        "the next. Every call is labelled as in 'run'; each episode is written to --out. Each "
        "MCP session has its own scenario stream and episodes; SIGINT or SIGTERM writes the "
        "open episodes (stop reason 'interrupted') and exits 0 (a signal repeated while it "
        "shuts down is ignored).",
    )
    p.add_argument("suite", type=Path, help="a suite folder, a scenario .json or a .jsonl")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--scenario", dest="scenario_id", help="serve only this scenario id")
    which.add_argument(
        "--per-cell", type=count(1), metavar="K", help="serve the first K scenarios of each cell"
    )
    p.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    p.add_argument("--port", type=port, help=f"http: port on 127.0.0.1 (default {PORT})")
    p.add_argument("--out", type=Path, required=True, help="run file (JSON lines) to write")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    p.add_argument("--name", type=label, help="the agent's name (default: the MCP client's name)")
    p.add_argument(
        "--guard", type=guard, default="observe", help="observe (default), enforce or feedback"
    )
    p.add_argument("--variant", default="default", help="a shipped variant or a variant file")
    p.add_argument("--order", choices=["listed", "dependency"], default="listed")
    p.add_argument("--budget", type=count(1), help="tool calls per episode (default as in run)")
    p.add_argument(
        "--self-contained", action="store_true", help="store each scenario in the run file"
    )


def serve_mcp_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Serve until the client leaves (stdio) or a signal stops the server (either
    transport); the open episodes are written first, and the exit status is 0."""
    import anyio

    from agentproc.integrations.shutdown import Shutdown

    try:
        mcp_server = importlib.import_module("agentproc.integrations.mcp_server")
    except ImportError:
        raise ConfigError(EXTRA_MISSING) from None
    runs = _served_runs(args)
    sock = None
    if args.transport == "http":
        try:  # bound before the run file is touched: a taken port leaves it as it was
            sock = mcp_server.listen(args.port)
        except OSError as exc:
            raise ConfigError(
                f"--port {args.port}: cannot listen on 127.0.0.1 ({exc.strerror or exc})"
            ) from None
    say(
        err,
        f"agentproc: serving {args.suite} over {args.transport}"
        + (
            f" on http://127.0.0.1:{args.port}/mcp"
            if sock is not None
            else ": waiting for an MCP client on stdin/stdout (an MCP client starts this "
            "command itself; see docs/integrations.md)"
        ),
    )
    # From before the run file is made until the command returns, the first SIGINT or
    # SIGTERM stops serving and any later one is ignored: the shutdown writes the open
    # episodes, and a repeated Ctrl-C must not cut it short.
    with Shutdown(lambda: setattr(runs, "stop", "interrupted")) as shutdown:
        try:
            runs.open()  # the transport is up (the port bound): the run file is made now
            if sock is not None:
                anyio.run(mcp_server.serve_http, runs, sock, shutdown)
            else:
                anyio.run(mcp_server.serve_stdio, runs, shutdown)
        finally:
            runs.close("no_tool_call" if shutdown.signal is None else "interrupted")
            if sock is not None:
                sock.close()
        stopped = shutdown.signal
        how = "" if stopped is None else f" (stopped by {signal.Signals(stopped).name})"
        say(err, f"agentproc: wrote {counted(runs.written, 'episode')} to {args.out}{how}")
    return EXIT_OK


def _served_runs(args: argparse.Namespace) -> Any:
    from agentproc.integrations.serving import ServedRuns
    from agentproc.outputs import check_output, input_files
    from agentproc.workflow.variant import load_variant

    if args.port is not None and args.transport != "http":
        raise ConfigError("--port goes with --transport http")
    args.port = PORT if args.port is None else args.port
    check_output(args.out, inputs=input_files(args.suite), overwrite=args.overwrite)
    variant = load_variant(args.variant)
    guard = variant.check("tools", args.guard)
    first = _scenarios(args)  # a bad suite or an unknown id is said before serving
    fresh = iter([first])
    return ServedRuns(
        lambda: next(fresh, None) or _scenarios(args),
        args.out,
        name=args.name,
        guard=guard,
        variant=variant,
        order=args.order,
        budget=args.budget,
        self_contained=args.self_contained,
    )


def _scenarios(args: argparse.Namespace) -> Iterator[Any]:
    from agentproc.workflow import load_scenarios, per_cell

    keep = None if args.scenario_id is None else args.scenario_id.__eq__
    scenarios = per_cell(load_scenarios(args.suite, keep), args.per_cell)
    first = next(scenarios, None)  # a bad suite or an unknown id is said before serving
    if first is None:
        what = f"no scenario with id {args.scenario_id!r}" if args.scenario_id else "no scenario"
        where = args.suite / "procedures.jsonl" if args.suite.is_dir() else args.suite
        raise InputError(where, f"holds {what}: nothing to serve", "id")
    return itertools.chain([first], scenarios)
