"""Token totals per agent, and their cost at a price."""

from __future__ import annotations

from agentproc.analysis.measures.report import aggregate
from agentproc.analysis.measures.tokens import NO_TOKENS, Tokens, tokens_json, tokens_text


def test_tokens_sum_over_episodes_that_recorded_usage_and_cost_per_million():
    tally = Tokens()
    for usage in (
        {"input_tokens": 1000, "output_tokens": 10},
        None,
        {"input_tokens": 500, "output_tokens": 5},
    ):
        tally.add({} if usage is None else {"usage": usage})
    tokens = tally.counted()
    assert tokens == Tokens(1500, 15, 2)
    assert tokens.cost((2.0, 10.0)) == (1500 * 2 + 15 * 10) / 1e6


def test_no_usage_is_no_token_counts_never_zero():
    assert Tokens().counted() is None
    assert tokens_text(None, (3.0, 15.0)) == NO_TOKENS == "no token counts"
    assert tokens_json(None, (3.0, 15.0)) is None


def test_the_cost_is_given_only_with_a_price():
    t = Tokens(2_000_000, 1_000_000, 4)
    assert tokens_text(t) == "tokens: 2,000,000 in, 1,000,000 out over 4 episodes"
    assert tokens_text(t, (0.5, 1.5)).endswith("; cost $2.5000 at $0.5/$1.5 per million in/out")
    assert "cost_usd" not in tokens_json(t)  # type: ignore[operator]
    assert tokens_json(t, (0.5, 1.5)) == {
        "input": 2_000_000,
        "output": 1_000_000,
        "episodes": 4,
        "cost_usd": 2.5,
        "price_per_million": {"input": 0.5, "output": 1.5},
    }


def _rec(agent: str, usage: dict[str, int] | None, error: bool = False) -> dict[str, object]:
    rec: dict[str, object] = {
        "scenario_id": "s0",
        "agent": agent,
        "cell": "c",
        "params": {"steps": 2, "lookback": 1},
        "verdict": "faithful",
        "metrics": {
            "verdict": "faithful",
            "total_steps": 2,
            "first_answer_correct": True,
            "final_answer_correct": True,
            "progress_rate": 1.0,
            "longest_correct_prefix": 2,
        },
        "labels": [],
    }
    if usage is not None:
        rec["usage"] = usage
    if error:
        rec["stop_reason"] = "error"
        rec["error"] = {"kind": "endpoint", "message": "down", "attempts": 1}
    return rec


def test_each_agent_has_its_own_totals_and_an_errored_episode_s_tokens_count():
    report = aggregate(
        [
            _rec("openai:m", {"input_tokens": 100, "output_tokens": 7}),
            _rec("openai:m", {"input_tokens": 50, "output_tokens": 3}, error=True),
            _rec("sim:decay", None),
        ]
    )
    assert report.agents["openai:m"].tokens == Tokens(150, 10, 2)
    assert report.agents["sim:decay"].tokens is None
