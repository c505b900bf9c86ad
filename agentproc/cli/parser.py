"""The command line's grammar: every command, its options and their types.

:func:`build_parser` is all :mod:`agentproc.cli.main` needs; the option types turn a
bad value into argparse's one-line usage error.
"""

from __future__ import annotations

import argparse
import math
import sys
import urllib.parse
from pathlib import Path
from typing import Any, NoReturn

from agentproc.cli.check import add_check_parser
from agentproc.cli.examples import SIM_AGENTS, examples
from agentproc.cli.export import add_export_parser
from agentproc.cli.help import HelpFormatter, grouped
from agentproc.cli.import_traces import add_import_traces_parser
from agentproc.cli.output import EXIT_BAD_INPUT, brief, count, guard, label, number, seed, words
from agentproc.cli.serve_demo import add_serve_demo_parser
from agentproc.cli.serve_mcp import add_serve_mcp_parser


def _ints(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, not {text!r}"
        ) from None


def _ranges(text: str) -> list[tuple[float, float]]:
    out = []
    for part in text.split(","):
        try:
            lo, hi = (float(x) for x in part.split(":"))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"a range is LOW:HIGH, e.g. 1:10 (not {part!r})"
            ) from None
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise argparse.ArgumentTypeError(f"a range needs finite numbers (not {part!r})")
        out.append((lo, hi))
    return out


_seconds = number(
    float,
    "a number of seconds",
    lambda v: math.isfinite(v) and v > 0,
    "must be a number of seconds above 0",
)
"""An argparse type: a finite number of seconds above zero."""


def _url(text: str) -> str:
    """An argparse type: an http(s) URL with a host (and a valid port if it has one)."""
    from agentproc.runs.redact import redact_data

    shown = redact_data(text)  # a refused URL is echoed without its credentials
    try:
        parts = urllib.parse.urlsplit(text)
        port = parts.port  # raises for a port that is not a number in range
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a valid URL ({exc}): {shown!r}") from None
    bad = any(c in text for c in "\r\n\t ")
    if parts.scheme not in ("http", "https") or not parts.hostname or bad:
        raise argparse.ArgumentTypeError(
            f"expected an http:// or https:// URL with a host, e.g. http://127.0.0.1:8000/v1 "
            f"(not {shown!r})"
        )
    del port
    return text


CACHE_DEFAULT = Path("\0default")
"""``--cache`` without a folder: the user's cache folder (looked up when the run starts)."""


def _cache_folder(text: str) -> Path:
    """An argparse type: a response cache's folder (an empty path, which would be the
    current folder, is refused)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "an empty path: give a folder, or --cache alone for the user's cache folder"
        )
    return Path(text)


def _price(text: str) -> tuple[float, float]:
    """An argparse type: ``IN,OUT``, two finite prices of at least 0."""
    parts = text.split(",")
    try:
        prices = tuple(float(p) for p in parts)
    except ValueError:
        prices = ()
    if len(prices) != 2 or not all(math.isfinite(p) and p >= 0 for p in prices):
        raise argparse.ArgumentTypeError(
            f"expected IN,OUT: USD per million input and output tokens, e.g. 3,15 (not {text!r})"
        )
    from agentproc.analysis.tokens import check_price
    from agentproc.errors import ConfigError

    try:
        return check_price((prices[0], prices[1]))
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


AGENT_HELP = (
    "local (the embedded model, default); local:PATH.gguf (your own weights, same engine); "
    "openai:MODEL; your own agent as "
    "module.path:factory or path/to/file.py:factory (the factory gets the mock tools as "
    "LangChain tools and returns a runnable); or a simulated agent: " + ", ".join(SIM_AGENTS)
)
"""The agent kinds, as ``--help`` lists them for every command that runs episodes."""


RUN_GROUPS: dict[str, tuple[str, ...]] = {
    "the run": (
        "limit",
        "per_cell",
        "shard",
        "trials",
        "seed",
        "mode",
        "order",
        "guard",
        "budget",
        "continue_after_answer",
        "concurrency",
        "workers",
        "backend",
        "address",
    ),
    "the agent": (
        "agent",
        "name",
        "base_url",
        "timeout",
        "retries",
        "max_tokens",
        "cache",
        "cache_mode",
    ),
    "the variant": ("variant",),
    "output": ("out", "resume", "overwrite", "self_contained"),
}
"""``run --help``'s option groups (option dests); an option named in none stays under
``options``."""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (naming the option) and exit 2, and
    whose help keeps within the terminal and shows defaults (:class:`HelpFormatter`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(
            EXIT_BAD_INPUT, f"{self.prog}: error: {brief(message)} (see '{self.prog} --help')\n"
        )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``agentproc``."""
    p = _Parser(
        prog="agentproc",
        description="Does a tool-using agent execute a procedure faithfully?",
    )
    p.add_argument("--version", action=_VersionAction, help="show the version and exit")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    episodes = _episode_options()

    g = sub.add_parser("generate", help="generate a suite of procedures", **examples("generate"))
    g.add_argument("--preset", help="a shipped preset (quick, reference) or a preset file")
    g.add_argument("--steps", type=_ints, help="lengths N, e.g. 5,25,95")
    g.add_argument("--lookback", type=_ints, help="look-backs L, e.g. 1,7")
    g.add_argument(
        "--range", dest="ranges", type=_ranges, help="input ranges, e.g. 0:1,1:10,10:100"
    )
    g.add_argument("--ops", type=words, help="op mixes: mixed, add, sub, mul, div or e.g. add+sub")
    g.add_argument("--mode", dest="modes", type=words, help="numeric modes: decimal, integer")
    g.add_argument("--count", type=count(1), help="procedures per cell")
    g.add_argument("--seed", type=seed, help="generator seed")
    g.add_argument(
        "--out",
        type=Path,
        help="suite folder to write (default: suites/NAME for a preset, suites/custom-HASH for "
        "a grid; reused when it already holds the same suite)",
    )
    g.add_argument("--overwrite", action="store_true", help="replace a suite already in --out")
    g.add_argument(
        "--workflow",
        type=Path,
        help="a declared workflow file (.toml or .json): draw --count instances of it "
        "(with --seed) into the suite folder --out",
    )

    s = sub.add_parser(
        "scenario",
        help="print the full scenario JSON of one procedure of a suite",
        **examples("scenario"),
    )
    s.add_argument("suite", type=Path)
    s.add_argument("--id", dest="scenario_id", help="scenario id (default: the first)")

    r = sub.add_parser(
        "run",
        help="run an agent over a suite and write a run file",
        parents=[episodes],
        **examples("run"),
    )
    r.add_argument(
        "suite", type=Path, help="a suite folder, a scenario .json or a .jsonl of scenarios"
    )
    r.add_argument(
        "--mode",
        default="tools",
        choices=["tools", "text"],
        help="tools: the compiled workflow; text: the procedure in the prompt, answer in text",
    )
    r.add_argument(
        "--continue-after-answer",
        action="store_true",
        help="do not end an episode at submit_answer (to study answer revision)",
    )
    r.add_argument("--out", type=Path, required=True, help="run file (JSON lines) to write")
    r.add_argument(
        "--name",
        type=label,
        metavar="LABEL",
        help="the agent's name in report, compare and the HTML report (default: the --agent "
        "value); two runs of one endpoint, e.g. model v1 and v2 served under one name",
    )
    r.add_argument(
        "--self-contained",
        action="store_true",
        help="store each scenario in the run file (as its compact procedure) instead of "
        "referring to the suite: for sharing one file",
    )
    r.add_argument(
        "--order",
        choices=["listed", "dependency"],
        default="listed",
        help="the order calls are held to: listed (default) or dependency (steps whose "
        "inputs are available may come in any order, several in one message)",
    )
    r.add_argument(
        "--variant",
        default="default",
        help="how the workflow is presented: a shipped variant (agentproc variants) or a "
        ".toml/.json file",
    )
    r.add_argument(
        "--per-cell",
        type=count(1),
        metavar="K",
        help="run only the first K scenarios of each grid cell (a run spread over the suite)",
    )
    r.add_argument(
        "--shard", help="run only shard i of n, e.g. 1/4 (or shards i to j: i-j/n, e.g. 1-2/8)"
    )
    r.add_argument(
        "--cache",
        type=_cache_folder,
        nargs="?",
        const=CACHE_DEFAULT,
        metavar="DIR",
        help="serve model replies to requests made before from a response cache in DIR "
        "(default: $XDG_CACHE_HOME/agentproc or ~/.cache/agentproc); keyed on the exact "
        "request and the trial, never on a key",
    )
    r.add_argument(
        "--cache-mode",
        choices=["read", "write", "readwrite", "off"],
        help="read: serve hits, store nothing; write: store replies, serve none; readwrite "
        "(the default with --cache); off",
    )
    grouped(r, RUN_GROUPS)

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
        type=_price,
        metavar="IN,OUT",
        help="USD per million input and output tokens: each agent's token cost, e.g. 3,15",
    )
    rep.add_argument(
        "--by",
        type=words,
        default="length,lookback",
        help="knobs to group by, in order: length, lookback, range, ops, mode "
        "(default length,lookback)",
    )

    _compare_parsers(sub, episodes)
    add_check_parser(sub)
    add_serve_mcp_parser(sub)
    add_import_traces_parser(sub)
    add_export_parser(sub)

    sc = sub.add_parser(
        "selfcheck", help="prove the monitor against injected faults", **examples("selfcheck")
    )
    sc.add_argument(
        "--count",
        type=count(1),
        default=5,
        help="procedures per cell (240 cells x 11 injectors); with --suite, scenarios per "
        "cell; with --workflow, instances",
    )
    sc.add_argument("--seed", type=seed, default=0, help="seed of the injected faults")
    sc.add_argument(
        "--variant", default="default", help="check under a variant (calculator: the aligner)"
    )
    sc.add_argument(
        "--order",
        choices=["listed", "dependency"],
        default="listed",
        help="the order policy the monitor holds the calls to",
    )
    sc.add_argument("--json", action="store_true", help="print the scores as JSON")
    on = sc.add_mutually_exclusive_group()
    on.add_argument(
        "--suite", type=Path, help="check on a suite's scenarios instead of the grid's procedures"
    )
    on.add_argument(
        "--workflow",
        type=Path,
        metavar="FILE",
        help="check on instances of a declared workflow file (drawn with --seed)",
    )
    on.add_argument(
        "--selfcond",
        nargs="?",
        const=50,
        type=count(1),
        metavar="N",
        help="instead: check that the induced self-conditioning measure recovers sim:selfcond's "
        "parameters (clean and half-wrong pre-fills of N procedures a cell, default 50)",
    )

    va = sub.add_parser("variants", help="list the shipped variants and what each changes")
    va.add_argument("--json", action="store_true", help="print them as JSON")
    add_serve_demo_parser(sub)
    return p


def _episode_options() -> _Parser:
    """The options of every command that runs episodes (``run``, ``compare``, ``stress``),
    defined once: a parent parser (``parents=[...]``) each of them takes in."""
    p = _Parser(add_help=False)
    p.add_argument("--agent", default="local", help=AGENT_HELP)
    p.add_argument(
        "--base-url",
        type=_url,
        help="OpenAI-compatible server for openai:MODEL (key from OPENAI_API_KEY)",
    )
    p.add_argument("--concurrency", type=count(1), default=1, help="episodes in flight at once")
    p.add_argument("--timeout", type=_seconds, default=120.0, help="seconds per model call")
    p.add_argument(
        "--retries", type=count(0), default=4, help="retries per model call (429, 5xx, timeouts)"
    )
    p.add_argument(
        "--budget", type=count(1), help="tool calls per episode (default 2 x (steps + 1) + 5)"
    )
    p.add_argument("--max-tokens", type=count(1), help="cap on tokens per model reply")
    p.add_argument(
        "--tool-choice",
        choices=["auto", "any"],
        help="local only: any (default) makes every reply a tool call; auto allows text",
    )
    p.add_argument(
        "--guard", type=guard, default="observe", help="observe (default), enforce or feedback"
    )
    p.add_argument(
        "--seed",
        type=seed,
        default=0,
        help="seed of the agent's randomness (simulated faults, model sampling); "
        "same seed, same run",
    )
    p.add_argument("--limit", type=count(1), help="run at most this many scenarios")
    p.add_argument(
        "--trials", type=count(1), default=1, help="run each scenario this many times (trials)"
    )
    p.add_argument("--resume", action="store_true", help="skip episodes already in --out")
    p.add_argument("--overwrite", action="store_true", help="replace what --out holds")
    p.add_argument(
        "--workers",
        type=count(1),
        default=1,
        help="run the suite as this many shards in parallel processes, merged into --out",
    )
    p.add_argument(
        "--backend",
        choices=["processes", "ray"],
        default="processes",
        help="where the shards run: local processes (default) or a Ray cluster",
    )
    p.add_argument(
        "--address", help="with --backend ray: the cluster to join (default: start one here)"
    )
    p.add_argument(
        "--debug",
        action="store_true",
        help="stop at the first harness error with its full traceback",
    )
    return p


def _compare_parsers(sub: argparse._SubParsersAction[_Parser], episodes: _Parser) -> None:
    cp = sub.add_parser(
        "compare",
        help="did a change help? paired comparison of variants or agents",
        parents=[episodes],
    )
    cp.add_argument(
        "inputs", type=Path, nargs="+", help="run files to compare, or one SUITE with --variants"
    )
    cp.add_argument(
        "--variants",
        type=words,
        help="run SUITE under these variants (names or files; the first is the baseline)",
    )
    cp.add_argument("--baseline", help="the arm the others are compared with (default: the first)")
    cp.add_argument(
        "--html",
        type=Path,
        metavar="OUT.html",
        help="also write the comparison as one self-contained page (verdicts, arms side by "
        "side, differences per label and cell, the discordant scenarios' episodes)",
    )
    st = sub.add_parser(
        "stress",
        help="sweep prompt styles, renderings and tool sets for one agent",
        parents=[episodes],
    )
    st.add_argument("inputs", type=Path, nargs=1, help="a suite folder (keep it small)")
    st.add_argument(
        "--variants", type=words, help="the variants to sweep (default: every shipped one)"
    )
    st.add_argument(
        "--threshold",
        type=float,
        default=0.5,
        help="faithful accuracy a breaking point stays at or above (default 0.5)",
    )
    st.add_argument(
        "--grid",
        action="store_true",
        help="every combination of one prompt style, one rendering and one tool set; over "
        "pre-fill variants only, the agent's own error rate against their share of wrong steps",
    )
    for q in (cp, st):
        q.add_argument("--out", type=Path, help="with a suite: folder for one run file per variant")
        q.add_argument("--json", action="store_true", help="print the result as JSON")
        q.set_defaults(mode="tools", continue_after_answer=False)


class _VersionAction(argparse.Action):
    """``--version``: the installed version, looked up only when asked for (reading the
    package metadata costs every start 10-20 ms)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)  # type: ignore[arg-type]

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> NoReturn:
        parser._print_message(f"agentproc {_version()}\n", sys.stdout)  # as argparse's own
        parser.exit()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agentproc")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree
        return "unknown"
