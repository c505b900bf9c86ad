"""The grammar of the commands that run episodes: ``run``, ``compare`` and ``stress``,
and the options they share (:func:`episode_options`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from agentproc.cli.argparser import Parser
from agentproc.cli.examples import SIM_AGENTS, examples
from agentproc.cli.help import Option, add_grouped, option
from agentproc.cli.option_types import CACHE_DEFAULT, cache_folder, seconds, url
from agentproc.cli.output import count, guard, label, seed, words

AGENT_HELP = (
    "local (the embedded model, default); local:PATH.gguf (your own weights, same engine); "
    "openai:MODEL; your own agent as "
    "module.path:factory or path/to/file.py:factory (the factory gets the mock tools as "
    "LangChain tools and returns a runnable); or a simulated agent: "
    + ", ".join(SIM_AGENTS)
    + " (sim:oracle and sim:batched are faithful under either --order: sim:batched sends "
    "several steps in one message, the next ones in listed order whose inputs have come "
    "back, or under --order dependency every step whose inputs have)"
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
"""``run --help``'s option groups (option dests), each declared with its options; an
option named in none stays under ``options``."""


RUN_OPTIONS: dict[str, Option] = {
    "mode": option(
        "--mode",
        default="tools",
        choices=["tools", "text"],
        help="tools: the compiled workflow; text: the procedure in the prompt, answer in text",
    ),
    "continue_after_answer": option(
        "--continue-after-answer",
        action="store_true",
        help="do not end an episode at submit_answer (to study answer revision)",
    ),
    "out": option("--out", type=Path, required=True, help="run file (JSON lines) to write"),
    "name": option(
        "--name",
        type=label,
        metavar="LABEL",
        help="the agent's name in report, compare and the HTML report (default: the --agent "
        "value); two runs of one endpoint, e.g. model v1 and v2 served under one name",
    ),
    "self_contained": option(
        "--self-contained",
        action="store_true",
        help="store each scenario in the run file (as its compact procedure) instead of "
        "referring to the suite: for sharing one file",
    ),
    "order": option(
        "--order",
        choices=["listed", "dependency"],
        default="listed",
        help="the order calls are held to: listed (default) or dependency (steps whose "
        "inputs are available may come in any order, several in one message)",
    ),
    "variant": option(
        "--variant",
        default="default",
        help="how the workflow is presented: a shipped variant (agentproc variants) or a "
        ".toml/.json file",
    ),
    "per_cell": option(
        "--per-cell",
        type=count(1),
        metavar="K",
        help="run only the first K scenarios of each grid cell (a run spread over the suite)",
    ),
    "shard": option(
        "--shard", help="run only shard i of n, e.g. 1/4 (or shards i to j: i-j/n, e.g. 1-2/8)"
    ),
    "cache": option(
        "--cache",
        type=cache_folder,
        nargs="?",
        const=CACHE_DEFAULT,
        metavar="DIR",
        help="serve model replies to requests made before from a response cache in DIR "
        "(default: $XDG_CACHE_HOME/agentproc or ~/.cache/agentproc); keyed on the exact "
        "request and the trial, never on a key",
    ),
    "cache_mode": option(
        "--cache-mode",
        choices=["read", "write", "readwrite", "off"],
        help="read: serve hits, store nothing; write: store replies, serve none; readwrite "
        "(the default with --cache); off",
    ),
}
"""``run``'s own options (dest -> option), beside :data:`EPISODE_OPTIONS`."""


def add_run_parser(sub: argparse._SubParsersAction[Parser]) -> None:
    """``run``: an agent over a suite, into a run file; its options in :data:`RUN_GROUPS`."""
    r = sub.add_parser(
        "run", help="run an agent over a suite and write a run file", **examples("run")
    )
    r.add_argument(
        "suite", type=Path, help="a suite folder, a scenario .json or a .jsonl of scenarios"
    )
    add_grouped(r, EPISODE_OPTIONS | RUN_OPTIONS, RUN_GROUPS)


EPISODE_OPTIONS: dict[str, Option] = {
    "agent": option("--agent", default="local", help=AGENT_HELP),
    "base_url": option(
        "--base-url",
        type=url,
        help="OpenAI-compatible server for openai:MODEL (key from OPENAI_API_KEY)",
    ),
    "concurrency": option(
        "--concurrency", type=count(1), default=1, help="episodes in flight at once"
    ),
    "timeout": option("--timeout", type=seconds, default=120.0, help="seconds per model call"),
    "retries": option(
        "--retries", type=count(0), default=4, help="retries per model call (429, 5xx, timeouts)"
    ),
    "budget": option(
        "--budget", type=count(1), help="tool calls per episode (default 2 x (steps + 1) + 5)"
    ),
    "max_tokens": option("--max-tokens", type=count(1), help="cap on tokens per model reply"),
    "tool_choice": option(
        "--tool-choice",
        choices=["auto", "any"],
        help="local only: any (default) makes every reply a tool call; auto allows text",
    ),
    "guard": option(
        "--guard", type=guard, default="observe", help="observe (default), enforce or feedback"
    ),
    "seed": option(
        "--seed",
        type=seed,
        default=0,
        help="seed of the agent's randomness (simulated faults, model sampling); "
        "same seed, same run",
    ),
    "limit": option("--limit", type=count(1), help="run at most this many scenarios"),
    "trials": option(
        "--trials", type=count(1), default=1, help="run each scenario this many times (trials)"
    ),
    "resume": option("--resume", action="store_true", help="skip episodes already in --out"),
    "overwrite": option("--overwrite", action="store_true", help="replace what --out holds"),
    "workers": option(
        "--workers",
        type=count(1),
        default=1,
        help="run the suite as this many shards in parallel processes, merged into --out",
    ),
    "backend": option(
        "--backend",
        choices=["processes", "ray"],
        default="processes",
        help="where the shards run: local processes (default) or a Ray cluster",
    ),
    "address": option(
        "--address", help="with --backend ray: the cluster to join (default: start one here)"
    ),
    "debug": option(
        "--debug",
        action="store_true",
        help="stop at the first harness error with its full traceback",
    ),
}
"""The options of every command that runs episodes (``run``, ``compare``, ``stress``),
defined once (dest -> option)."""


def episode_options() -> Parser:
    """:data:`EPISODE_OPTIONS` as a parent parser (``parents=[...]``) that ``compare`` and
    ``stress`` take in."""
    p = Parser(add_help=False)
    for opt in EPISODE_OPTIONS.values():
        opt.add_to(p)
    return p


def add_sweep_parsers(sub: argparse._SubParsersAction[Parser], episodes: Parser) -> None:
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
