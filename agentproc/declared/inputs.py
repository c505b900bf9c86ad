"""A declared workflow's inputs as the file gives them (:class:`InputSpec`: a number, a
category, a boolean, an id, a date or a list, and how each is drawn), with the limits every
part of a workflow file keeps."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentproc.declared import formula
from agentproc.declared.dates import parse_date
from agentproc.declared.formula_types import Kind
from agentproc.declared.id_pattern import PatternError, parse_pattern

MAX_INPUTS = 50
"""Inputs a workflow may declare."""
MAX_WORKFLOW_STEPS = 200
"""Steps a workflow may declare (as many as a generated procedure)."""
MAX_FIELDS = 8
"""Fields a multi-field answer may list."""
MAX_CHOICES = 1000
"""Values a list of choices may hold."""
MAX_DECIMALS = 3
"""Decimals a value may have: values are held in thousandths."""
MAX_MAGNITUDE = 10**6
"""Every bound and choice of an input lies within ``[-1e6, 1e6]``."""
MAX_TEXT = 4000
"""Characters of a description."""
MAX_FILE_BYTES = 1 << 20
"""A workflow file larger than this is refused before it is read."""
RESERVED_TOOLS = frozenset({"add", "sub", "mul", "div"})
"""The calculator tool set's names, which no step or finish tool may take."""
NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
"""A variable name: a letter or ``_``, then letters, digits or ``_`` (64 at most)."""
TOOL = r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$"
"""A tool name as the chat-completions API accepts it (64 characters at most)."""
_NAME = re.compile(NAME)

_CONFIG = ConfigDict(extra="forbid", allow_inf_nan=False)
"""No unknown field; no infinite or NaN number (TOML writes ``inf``, ``nan``, and both
TOML and JSON read ``1e999`` as infinity)."""


def _unset(v: object) -> bool:
    return v is None


class InputSpec(BaseModel):
    """One input and how it is drawn: a number gives exactly one of ``range``,
    ``integers``, ``choices``; a category its ``choices`` (names); a boolean its
    ``p_true`` (format 2)."""

    model_config = _CONFIG
    description: str = Field(default="", max_length=MAX_TEXT)
    """What the input is, as the agent is told."""
    type: Kind | Literal["list"] | None = Field(default=None, exclude_if=_unset)
    """``number`` (the default), ``category``, ``boolean``, ``string`` or ``date`` (format
    2); ``list``: a list of distinct names drawn from ``choices``
    (:mod:`agentproc.declared.loops`)."""
    range: tuple[float, float] | tuple[str, str] | None = None
    """Drawn uniformly from ``[low, high]`` on the grid of ``decimals``; a date's: two
    ISO dates, drawn uniformly over the days between them (both included)."""
    decimals: int = Field(default=2, ge=0, le=MAX_DECIMALS)
    """Decimals of a ``range`` draw."""
    integers: tuple[int, int] | None = None
    """Drawn uniformly among the whole numbers of ``[low, high]``."""
    choices: list[float | str] | None = Field(default=None, min_length=1, max_length=MAX_CHOICES)
    """Drawn from these values (at most 3 decimals each), uniformly unless ``weights``
    are given; a category's: its names."""
    weights: list[float] | None = Field(default=None, exclude_if=_unset)
    """The relative weight of each of ``choices`` (format 2; default: all equal)."""
    p_true: float | None = Field(default=None, gt=0, lt=1, exclude_if=_unset)
    """A boolean input's chance of ``true`` (format 2; default 0.5)."""
    pattern: str | None = Field(default=None, max_length=64, exclude_if=_unset)
    """A string's (an id's) pattern, drawn per instance: literal characters, classes
    ``[A-Z]``, ``[a-z]``, ``[0-9]`` (or together, ``[A-Z0-9]``), a repeat ``{n}``."""
    key_of: str | None = Field(default=None, pattern=NAME, exclude_if=_unset)
    """A string's table: drawn among the keys of that table's records on the instance."""
    count: tuple[int, int] | None = Field(default=None, exclude_if=_unset)
    """A list input's: how many items it holds, ``[low, high]``, drawn for every
    instance (its items drawn from ``choices`` without replacement, in the order drawn)."""

    @property
    def kind(self) -> Kind:
        """Its type: ``number`` unless given (a list's items are categories)."""
        return "category" if self.type == "list" else self.type or "number"

    @property
    def is_list(self) -> bool:
        """Whether this is a list input (``type = "list"``)."""
        return self.type == "list"

    @model_validator(mode="after")
    def _one_way(self) -> InputSpec:
        if self.is_list or self.count is not None:
            _list_count(self)
        if self.weights is not None:
            _weights(self.weights, self.choices)
        if self.kind in ("string", "date"):
            return check_text_input(self)
        if self.kind != "number":
            return _typed_input(self)
        if self.p_true is not None:
            raise ValueError('p_true is for a boolean input (type = "boolean")')
        if self.pattern is not None or self.key_of is not None:
            raise ValueError('pattern and key_of are for a string input (type = "string")')
        given = [k for k in ("range", "integers", "choices") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of range, integers, choices "
                f"(not {' and '.join(given) or 'none'})"
            )
        dated = self.range
        if dated is not None and (isinstance(dated[0], str) or isinstance(dated[1], str)):
            raise ValueError('range: dates are for a date input (type = "date")')
        bounds = (float(dated[0]), float(dated[1])) if dated is not None else self.integers
        if bounds is not None:
            if bounds[0] > bounds[1]:
                raise ValueError(f"{given[0]}: low {bounds[0]} is above high {bounds[1]}")
            values: list[float] = list(bounds)
        else:
            if any(isinstance(v, str) for v in self.choices or []):
                raise ValueError('choices: names are for a category input (type = "category")')
            values = [float(v) for v in self.choices or []]
            for v in values:
                if Fraction(repr(v)) * 10**MAX_DECIMALS % 1:
                    raise ValueError(f"choices: {v} has more than {MAX_DECIMALS} decimals")
        if any(abs(v) > MAX_MAGNITUDE for v in values):
            raise ValueError(f"{given[0]}: values must lie within [-1e6, 1e6]")
        return self


def _weights(weights: list[float], choices: list[Any] | None) -> None:
    if choices is None or len(weights) != len(choices):
        raise ValueError("weights: give one weight for each of choices")
    if any(w < 0 for w in weights) or not sum(weights) > 0:
        raise ValueError("weights: each at least 0, and not all 0")


MAX_ITEMS = 20
"""Items a list input may hold."""


def _list_count(spec: InputSpec) -> None:
    """A list's ``count``: within its distinct choices (items are drawn without
    replacement), given only on a list."""
    if not spec.is_list:
        raise ValueError('count is for a list input (type = "list")')
    if spec.count is None:
        raise ValueError("a list input gives its count = [low, high]")
    if spec.weights is not None:
        raise ValueError("weights: a list's items are drawn uniformly")
    low, high = spec.count
    names = len(spec.choices or ())
    if not 1 <= low <= high <= min(names, MAX_ITEMS):
        raise ValueError(
            f"count: expected 1 <= low <= high <= {min(names, MAX_ITEMS)} (its "
            f"{names} choices, at most {MAX_ITEMS}; not [{low}, {high}])"
        )


def _typed_input(spec: InputSpec) -> InputSpec:
    """A category's or boolean's own fields, and none of a number's."""
    kind = spec.kind
    extra = [k for k in ("range", "integers", "pattern", "key_of") if getattr(spec, k) is not None]
    if kind == "boolean" and spec.choices is not None:
        extra.append("choices")
    if kind == "category" and spec.p_true is not None:
        extra.append("p_true")
    if extra:
        raise ValueError(f"a {kind} input takes no {' or '.join(extra)}")
    if kind == "category":
        names = spec.choices or []
        if not names or not all(isinstance(n, str) for n in names):
            raise ValueError("choices: a category input lists its names (strings)")
        for n in names:
            if not 0 < len(str(n)) <= formula.MAX_CATEGORY:
                raise ValueError(f"choices: {n!r} is not 1 to {formula.MAX_CATEGORY} characters")
        if len(set(names)) != len(names):
            raise ValueError("choices: a name is listed twice")
    return spec


def check_text_input(spec: InputSpec) -> InputSpec:
    """A string's fields (a ``pattern`` or a ``key_of``, not both) or a date's (a
    ``range`` of two ISO dates), and none of another kind's."""
    kind = spec.kind
    own = ("pattern", "key_of") if kind == "string" else ("range",)
    others = ("range", "integers", "choices", "weights", "p_true", "pattern", "key_of")
    extra = [k for k in others if k not in own and getattr(spec, k) is not None]
    if extra:
        raise ValueError(f"a {kind} input takes no {' or '.join(extra)}")
    if kind == "string":
        if (spec.pattern is None) == (spec.key_of is None):
            raise ValueError("a string input gives exactly one of pattern, key_of")
        if spec.pattern is not None:
            try:
                parse_pattern(spec.pattern)
            except PatternError as exc:
                raise ValueError(f"pattern: {exc}") from None
        return spec
    if spec.range is None:
        raise ValueError('a date input gives its range: ["2026-01-01", "2026-12-31"]')
    days = [parse_date(v) for v in spec.range]
    for v, d in zip(spec.range, days, strict=True):
        if d is None:
            raise ValueError(f"range: {v!r} is not an ISO date (YYYY-MM-DD)")
    if days[0] > days[1]:  # type: ignore[operator]
        raise ValueError(f"range: {spec.range[0]} is after {spec.range[1]}")
    return spec
