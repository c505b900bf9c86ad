"""The option types only the command line's grammar takes: integer and range lists,
seconds, an endpoint's URL, a response cache's folder and a token price; each turns a bad
value into argparse's one-line usage error."""

from __future__ import annotations

import argparse
import math
import re
import urllib.parse
from pathlib import Path

from agentproc.cli.output import number


def ints(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, not {text!r}"
        ) from None


def ranges(text: str) -> list[tuple[float, float]]:
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


seconds = number(
    float,
    "a number of seconds",
    lambda v: math.isfinite(v) and v > 0,
    "must be a number of seconds above 0",
)
"""An argparse type: a finite number of seconds above zero."""


_USERINFO = re.compile(r"://.*@", re.DOTALL)


def url(text: str) -> str:
    """An argparse type: an http(s) URL with a host (and a valid port if it has one)."""
    from agentproc.runs.redact import redact_data

    # A refused URL is echoed without its credentials, even one that does not parse (a
    # password with a "/" in it): everything from "://" to the last "@" goes.
    shown = _USERINFO.sub("://[REDACTED]@", redact_data(text))
    try:
        parts = urllib.parse.urlsplit(text)
        port = parts.port  # raises for a port that is not a number in range
    except ValueError as exc:
        why = "" if shown != text else f" ({exc})"  # the reason may quote the password
        raise argparse.ArgumentTypeError(f"not a valid URL{why}: {shown!r}") from None
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


def cache_folder(text: str) -> Path:
    """An argparse type: a response cache's folder (an empty path, which would be the
    current folder, is refused)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "an empty path: give a folder, or --cache alone for the user's cache folder"
        )
    return Path(text)


def price(text: str) -> tuple[float, float]:
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
    from agentproc.analysis.measures.tokens import check_price
    from agentproc.errors import ConfigError

    try:
        return check_price((prices[0], prices[1]))
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
