"""The grammar of the commands that make and read suites and check the monitor:
``generate``, ``scenario``, ``selfcheck`` and ``variants``."""

from __future__ import annotations

import argparse
from pathlib import Path

from agentproc.cli.argparser import Parser
from agentproc.cli.examples import examples
from agentproc.cli.option_types import ints, ranges
from agentproc.cli.output import count, seed, words


def add_suite_parsers(sub: argparse._SubParsersAction[Parser]) -> None:
    """``generate`` and ``scenario``, in that order."""
    g = sub.add_parser("generate", help="generate a suite of procedures", **examples("generate"))
    g.add_argument(
        "--preset",
        help="a shipped preset (quick, reference; sop: the shipped branched workflows, "
        "one suite) or a preset file",
    )
    g.add_argument("--steps", type=ints, help="lengths N, e.g. 5,25,95")
    g.add_argument("--lookback", type=ints, help="look-backs L, e.g. 1,7")
    g.add_argument("--range", dest="ranges", type=ranges, help="input ranges, e.g. 0:1,1:10,10:100")
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
        action="append",
        help="a declared workflow file (.toml or .json): draw --count instances of it "
        "(with --seed) into the suite folder --out; give it again for a suite of several "
        "workflows (--count instances of each)",
    )
    g.add_argument(
        "--balance",
        choices=["paths"],
        help="with --workflow: spread the instances evenly over the workflow's paths (each "
        "branch and exit taken as often), so that rare branches are measured",
    )

    s = sub.add_parser(
        "scenario",
        help="print the full scenario JSON of one procedure of a suite",
        **examples("scenario"),
    )
    s.add_argument("suite", type=Path)
    s.add_argument("--id", dest="scenario_id", help="scenario id (default: the first)")


def add_selfcheck_parsers(sub: argparse._SubParsersAction[Parser]) -> None:
    """``selfcheck`` and ``variants``, in that order."""
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
