"""Redaction benchmark, run on demand (not a timed test):
``python benchmarks/bench_redact.py [--repeats 5] [--calls 20000]``.

Prints medians over ``--repeats`` rounds, with an API key and a URL's credentials set as a
run of an ``openai:`` model sets them:

- the secrets' lookup (:func:`agentproc.runs.redact.current_secrets`), found once per
  distinct environment, against finding every form of them again (what each record and
  each session paid before);
- a call's arguments without a credential (the fast path every call takes) and with one;
- ``EpisodeSession.call`` on the pinned 5-step scenario, per call, with and without a key
  in the environment (what the cut before each call costs a simulated agent's run).

Machines are shared, so read the figures as orders of magnitude.

Measured at load average 7.4 on two shared cores: the lookup 15.6 us cached against 88 us
found again (6x); a call's arguments 4.3 us without a credential, 71 us with one;
``EpisodeSession.call`` 102 us per call without a key, 86 us with one.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from agentproc.runs import EpisodeSession
from agentproc.runs.redact import current_secrets, redact_arguments, secret_env, secret_url
from agentproc.workflow import load_scenario

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "pinned" / "n5-L3-r1_10-mixed-decimal-0000.json"
KEY = "sk-live-Ab3dEf6hIj9kLm2nOp5qRs8tUv1w"


def per_call(fn: Callable[[], object], n: int, repeats: int) -> float:
    """Median microseconds of one call of ``fn`` over ``repeats`` rounds of ``n``."""
    rounds = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        rounds.append((time.perf_counter() - start) / n * 1e6)
    return statistics.median(rounds)


def session_calls(n: int) -> None:
    """``n`` calls of the pinned scenario's first step, in sessions of 10 calls each."""
    scenario = load_scenario(SCENARIO)
    for _ in range(n // 10):
        session = EpisodeSession(scenario, "bench", budget=20)
        for _ in range(10):
            session.call("step_1", '{"S1": 7.0, "S2": 3.0}')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    redact = importlib.import_module("agentproc.runs.redact")  # the package has redact()
    n, r = args.calls, args.repeats

    os.environ.pop("OPENAI_API_KEY", None)
    plain = per_call(lambda: session_calls(10), n // 10, r) / 10
    os.environ["OPENAI_API_KEY"] = KEY
    secret_env("OPENAI_API_KEY")
    secret_url("http://bob:correct-horse-battery@127.0.0.1:8000/v1")
    keyed = per_call(lambda: session_calls(10), n // 10, r) / 10

    cached = per_call(current_secrets, n, r)
    found = redact._found.__wrapped__  # the forms found again, as before the cache
    known = (("OPENAI_API_KEY", KEY),)
    values = frozenset(redact._values)
    uncached = per_call(lambda: found(known, known, values), n // 10, r)

    clean = '{"S1": 7.0, "S2": 3.0}'
    echoed = '{"S1": 7.0, "S2": 3.0, "note": "' + KEY + '"}'
    secrets = current_secrets()
    fast = per_call(lambda: redact_arguments(clean, secrets), n, r)
    cut = per_call(lambda: redact_arguments(echoed, secrets), n, r)

    print(f"secrets' lookup: {cached:.1f} us cached, {uncached:.1f} us found again "
          f"({uncached / cached:.0f}x)")  # fmt: skip
    print(f"a call's arguments: {fast:.1f} us without a credential, {cut:.1f} us with one")
    print(f"EpisodeSession.call: {plain:.1f} us per call without a key, {keyed:.1f} us with one "
          f"({keyed / plain:.2f}x)")  # fmt: skip


if __name__ == "__main__":
    main()
