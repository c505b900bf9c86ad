"""The command line: parse, call one library function, render.

This is the only place errors become messages and exit codes: 0 success,
1 a check that did not pass (a replay that differs, an imperfect self-check),
2 bad input or configuration (one line naming the file and the field).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import io
import sys
from collections.abc import Callable, Sequence

from rich.console import Console

from agentproc.cli.output import (
    EXIT_BAD_INPUT,
    EXIT_ERRORED,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    brief,
    say,
)
from agentproc.cli.parser import build_parser
from agentproc.errors import AgentFault, AgentprocError, OutputError, one_line


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``agentproc`` command."""
    _printable_streams()
    args = build_parser().parse_args(argv)
    out = Console(soft_wrap=True, emoji=False)
    err = Console(stderr=True, soft_wrap=True, emoji=False)
    try:
        return COMMANDS[args.command](args, out, err)
    except AgentFault as exc:  # --debug: the agent's own exception, whole but its secrets
        err.file.write(_redacted(exc.traceback))
        say(err, f"agentproc: error: {one_line(_redacted(str(exc)))}")
        return EXIT_ERRORED
    except OutputError as exc:  # the input was fine; writing the output failed
        say(err, f"agentproc: error: {brief(_shown(exc))}")
        return EXIT_FAILED
    except AgentprocError as exc:
        say(err, f"agentproc: error: {brief(_shown(exc))}")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt as exc:  # its message, if any, says what is kept
        err.print(f"agentproc: interrupted{f'; {exc}' if str(exc) else ''}", markup=False)
        return EXIT_INTERRUPTED
    finally:
        from agentproc.jsonio import forget_streams

        forget_streams()  # a FIFO named again in a later command is read anew


def _shown(exc: AgentprocError) -> str:
    """An error's one line, without credentials (a base URL's query key, say)."""
    from agentproc.runs.redact import redact_data

    return one_line(redact_data(str(exc)))


def _redacted(text: str) -> str:
    """Error text without credentials (an agent's exception may quote its key)."""
    from agentproc.runs.redact import redact

    return redact(text)


def _printable_streams() -> None:
    """Text a model or a file supplies may hold lone surrogates: print them escaped."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


Command = Callable[[argparse.Namespace, Console, Console], int]


def _lazy(name: str, module: str = "agentproc.cli.commands") -> Command:
    # The commands module imports the library; ``--help`` must not pay for it.
    def command(args: argparse.Namespace, out: Console, err: Console) -> int:
        # Without the cyclic collector: an import makes modules, classes and functions,
        # kept as long as the process, which a collection would scan and never free.
        was = gc.isenabled()
        gc.disable()
        try:
            commands = importlib.import_module(module)
        finally:
            if was:
                gc.enable()
        fn: Command = getattr(commands, f"{name}_command")
        return fn(args, out, err)

    return command


COMMANDS: dict[str, Command] = (
    {name: _lazy(name) for name in ("generate", "scenario", "run", "selfcheck", "variants")}
    | {name: _lazy(name, "agentproc.cli.stored") for name in ("replay", "relabel", "report")}
    | {name: _lazy(name, "agentproc.cli.sweeps") for name in ("compare", "stress")}
    | {"serve-demo": _lazy("serve_demo", "agentproc.cli.serve_demo")}
    | {"check": _lazy("check", "agentproc.cli.check")}
    | {"serve-mcp": _lazy("serve_mcp", "agentproc.cli.serve_mcp")}
    | {"import-traces": _lazy("import_traces", "agentproc.cli.import_traces")}
    | {"export": _lazy("export", "agentproc.cli.export")}
)
"""Command name -> the function that runs it."""


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
