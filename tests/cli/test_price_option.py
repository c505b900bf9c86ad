"""``report --price`` takes prices from 0 to a dollar a token; a larger one is refused in
one usage line, never costed as ``$inf`` (nor written as a JSON ``Infinity``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentproc.analysis.measures.tokens import MAX_PRICE, Tokens, check_price
from agentproc.errors import ConfigError
from tests.helpers import cli

RUN = Path(__file__).resolve().parents[2] / "scenarios" / "recorded" / "local-smollm2.jsonl"


@pytest.mark.parametrize("price", ["1e308,1e308", "1e7,1", "3,1000001", "1e300,0"])
def test_an_absurd_price_is_refused_in_one_line(capsys, price):
    code, out, err = cli(capsys, "report", RUN, "--price", price)
    assert code == 2 and out == ""
    assert "--price" in err and "from 0 to 1,000,000" in err
    assert len(err.strip().splitlines()) == 1


def test_the_highest_price_is_costed_finitely_in_text_and_json(capsys):
    code, out, _ = cli(capsys, "report", RUN, "--price", f"{MAX_PRICE:g},{MAX_PRICE:g}")
    assert code == 0 and "cost $63389.0000 at" in out and "$inf" not in out
    code, out, _ = cli(capsys, "report", RUN, "--json", "--price", "1e6,1e6")
    assert code == 0
    json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))


def test_the_library_check_refuses_what_the_option_refuses():
    assert check_price((0.0, MAX_PRICE)) == (0.0, MAX_PRICE)
    for bad in ((1e308, 1.0), (float("nan"), 1.0), (-1.0, 1.0), (1.0, float("inf"))):
        with pytest.raises(ConfigError, match="USD per million tokens"):
            check_price(bad)
    assert Tokens(10**12, 10**12, 1).cost((MAX_PRICE, MAX_PRICE)) < float("inf")
