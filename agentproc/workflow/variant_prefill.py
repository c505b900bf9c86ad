"""The ``[prefill]`` table of a variant: how many steps every episode opens with, already
executed, and what share of them is wrong (:mod:`agentproc.workflow.prefill` draws and
runs them).

>>> Prefill(steps=4, wrong_share=0.5).wrong(4)
2
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Prefill(BaseModel):
    """The steps every episode opens with, already executed (``[prefill]`` of a variant)."""

    model_config = ConfigDict(extra="forbid")
    steps: int | None = Field(default=None, ge=1)
    """How many steps are pre-filled (at most the procedure's steps less one)."""
    fraction: float | None = Field(default=None, gt=0.0, lt=1.0)
    """Or the share of the procedure's steps pre-filled (rounded half up)."""
    wrong_share: float = Field(default=0.0, ge=0.0, le=1.0)
    """The share of the pre-filled calls that hold a slip of their own (rounded half up)."""

    @model_validator(mode="after")
    def _one_length(self) -> Prefill:
        if (self.steps is None) == (self.fraction is None):
            raise ValueError("prefill: give steps or fraction, one of them")
        return self

    def count(self, n_steps: int) -> int:
        """The steps pre-filled in a procedure of ``n_steps``: the agent always has one.

        >>> Prefill(fraction=0.5).count(5), Prefill(steps=9).count(5)
        (3, 4)
        """
        k = self.steps if self.steps is not None else _half_up((self.fraction or 0) * n_steps)
        return max(0, min(k, n_steps - 1))

    def wrong(self, k: int) -> int:
        """How many of ``k`` pre-filled calls are wrong.

        >>> Prefill(steps=4, wrong_share=0.5).wrong(4), Prefill(steps=1, wrong_share=0.5).wrong(1)
        (2, 1)
        """
        return _half_up(self.wrong_share * k)


def _half_up(x: float) -> int:
    return math.floor(x + 0.5 + 1e-9)
