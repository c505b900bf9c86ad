"""``agentproc serve-demo``: an OpenAI-compatible endpoint with scripted behaviour.

Something to point ``--agent openai:demo --base-url URL`` at without a model: each
profile behaves in a known way (:mod:`agentproc.agents.demo.profiles`), the same way for
the same seed.
"""

from __future__ import annotations

import argparse
import signal
from typing import Any

from rich.console import Console

from agentproc.cli.help import HelpFormatter
from agentproc.cli.output import EXIT_OK, port, say, seed
from agentproc.errors import ConfigError

PROFILE_CHOICES = ("faithful", "skipper", "sloppy", "prompt-sensitive")
"""Kept beside the parser so ``--help`` imports nothing (a test checks it against
``agentproc.agents.demo.PROFILES``)."""


def add_serve_demo_parser(sub: Any) -> None:
    """The ``serve-demo`` command's options."""
    p = sub.add_parser(
        "serve-demo",
        help="serve a scripted OpenAI-compatible endpoint to try agentproc on",
        description="An OpenAI-compatible chat-completions server on 127.0.0.1 whose "
        "replies follow a scripted profile (no model): faithful follows the procedure; "
        "skipper leaves steps out; sloppy slips on arguments and sometimes answers early; "
        "prompt-sensitive is faithful only when its prompt says not to skip steps.",
        epilog="example:\n  agentproc serve-demo --profile skipper --port 8765 &\n"
        "  agentproc run suites/quick --agent openai:demo \\\n"
        "      --base-url http://127.0.0.1:8765/v1 --out runs/demo.jsonl",
        formatter_class=HelpFormatter,
    )
    p.add_argument(
        "--profile",
        choices=PROFILE_CHOICES,
        metavar="PROFILE",
        default="faithful",
        help=f"how the endpoint behaves: {', '.join(PROFILE_CHOICES)} (default faithful)",
    )
    p.add_argument(
        "--port", type=port, default=8765, help="port on 127.0.0.1 (default 8765; 0: any free)"
    )
    p.add_argument("--seed", type=seed, default=0, help="seed of its choices; same seed, same run")


def serve_demo_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    from agentproc.agents.demo import demo_server

    try:
        server = demo_server(args.profile, seed=args.seed, port=args.port)
    except OSError as exc:  # the port is taken, or not ours to bind
        raise ConfigError(
            f"--port {args.port}: cannot listen on 127.0.0.1 ({exc.strerror})"
        ) from None

    def _terminate(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    url = server.base_url
    lines = [
        f"demo endpoint ({args.profile}, seed {args.seed}) listening on {url}",
        f"use it: agentproc run SUITE --agent openai:demo --base-url {url} --out RUN.jsonl",
        "stop it with Ctrl-C",
    ]
    previous = signal.signal(signal.SIGTERM, _terminate)  # `kill` stops it as Ctrl-C does
    try:  # from here on, an interruption is the way it stops
        say(out, "\n".join(lines))
        out.file.flush()
        server.serve_forever()
    except KeyboardInterrupt:
        say(err, "demo endpoint stopped")
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.stop()
    return EXIT_OK
