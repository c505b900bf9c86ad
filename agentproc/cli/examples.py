"""Examples shown under each command's ``--help`` (plain text: ``--help`` imports nothing)."""

from __future__ import annotations

from typing import Any

from agentproc.cli.help import HelpFormatter

SIM_AGENTS = (
    "sim:oracle",
    "sim:batched",
    "sim:decay",
    "sim:selfcond",
    "sim:hallucinated_call",
    "sim:invalid_arguments",
    "sim:repeated_step",
    "sim:reordered",
    "sim:wrong_argument",
    "sim:skipped_step",
    "sim:premature_finish",
    "sim:missing_answer",
    "sim:wrong_answer",
    "sim:answer_revised",
    "sim:unreturned_value",
    "sim:wrong_branch",
    "sim:ignores_exit",
)
"""The simulated agents, as ``run --help`` lists them (a test keeps this list true)."""

EXAMPLES: dict[str, str] = {
    "generate": """\
  agentproc generate --preset quick        # suites/quick (reused if unchanged)
  agentproc generate --steps 5,25,95 --lookback 1,7 --count 100 --seed 0 \\
      --out suites/mine
  agentproc generate --workflow scenarios/workflows/refund_approval.toml \\
      --balance paths --count 50 --out suites/refunds""",
    "scenario": """\
  agentproc scenario suites/quick          # the first scenario, as JSON
  agentproc scenario suites/quick --id n5-L1-r1_10-mixed-decimal-0003""",
    "run": """\
  agentproc run suites/quick --agent sim:decay --out runs/decay.jsonl
  agentproc run suites/quick --per-cell 1 --out runs/local.jsonl --resume
  agentproc run suites/quick --agent openai:MODEL \\
      --base-url http://127.0.0.1:8000/v1 --concurrency 8 --out runs/model.jsonl
  agentproc run suites/quick --agent examples/react_agent.py:make_agent \\
      --out runs/mine.jsonl""",
    "replay": """\
  agentproc replay runs/decay.jsonl        # every episode, a summary table
  agentproc replay runs/decay.jsonl --episode n5-L1-r1_10-mixed-decimal-0000
  agentproc replay --scenario S.json --messages M.json --json
  agentproc replay --scenario S.json --messages M.json --mode text
  agentproc replay --scenario S.json --messages M.json --variant calculator""",
    "relabel": """\
  agentproc relabel runs/decay.jsonl       # count what the current monitor changes
  agentproc relabel runs/decay.jsonl --out runs/decay-relabelled.jsonl""",
    "report": """\
  agentproc report runs/local.jsonl runs/decay.jsonl   # agents side by side
  agentproc report runs/decay.jsonl --by range,ops --json
  agentproc report runs/decay.jsonl --csv tables/      # episodes.csv, cells.csv""",
    "selfcheck": """\
  agentproc selfcheck                      # 13,200 single-fault episodes
  agentproc selfcheck --count 1 --json""",
}
"""Command -> the examples printed at the end of its ``--help``, under ``examples:``."""


def examples(command: str) -> dict[str, Any]:
    """Keyword arguments of ``add_parser`` that print ``command``'s examples under its help."""
    epilog = "examples:\n" + EXAMPLES[command]
    return {"epilog": epilog, "formatter_class": HelpFormatter}
