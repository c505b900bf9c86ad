"""Variants: named, documented, combinable changes to how a workflow is presented.

A variant changes what the agent is shown and offered, never the procedure
itself: the prompt (templates with ``{procedure}``, ``{inputs}``, ``{tools}`` and
``{answer_variable}``), the rendering of the steps, the variable names, the
listed order of the steps, the tool set (per-step tools or a calculator),
distractor tools, scrambled tool names, tool descriptions, tool faults and the
guard mode. A variant is a TOML or JSON file (``schemas/variant.schema.json``)
or the name of one shipped in ``scenarios/variants/``.

>>> load_variant("default").is_default
True
>>> load_variant("prose").rendering
'prose'
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agentproc.errors import ConfigError, InputError, unknown_key
from agentproc.jsonio import invalid, loads, unreadable
from agentproc.resources import folder
from agentproc.workflow.variant_prefill import Prefill

Rendering = Literal["numbered", "prose", "pseudocode", "json"]
"""How the steps are written in the prompt."""
Naming = Literal["none", "descriptive", "random"]
"""Variable names: ``S7`` as generated, ``product_5`` from the operation, or seeded random."""
Order = Literal["listed", "shuffled"]
"""The listed order: as generated, or a seeded dependency-valid shuffle (answer step last)."""
ToolSet = Literal["per_step", "calculator"]
"""One tool per step, or generic ``add``/``sub``/``mul``/``div`` plus the finish tool."""
GuardMode = Literal["observe", "enforce", "feedback"]
"""``observe`` executes what it can; ``enforce`` refuses broken dependencies and early
answers; ``feedback`` refuses the same and names the step expected next."""

PLACEHOLDERS = ("procedure", "inputs", "tools", "answer_variable")
"""What a prompt template may contain, each written ``{name}``."""
_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")
DEFAULT = "default"
"""The variant of today's workflow: nothing changed."""
MAX_DISTRACTORS = 8
"""Distractor tools available (see :data:`agentproc.workflow.present.DISTRACTORS`)."""

_CONFIG = ConfigDict(extra="forbid")
"""Without pydantic's ``use_attribute_docstrings``: it reads the source of every model at
import (about 30 ms of every process's start); :func:`variant_schema` reads the field
docstrings itself, when a schema is written."""


class PromptTemplate(BaseModel):
    """The system and user prompt of a tool-mode episode (unset: the built-in ones)."""

    model_config = _CONFIG
    system: str | None = None
    """The system message, inline."""
    user: str | None = None
    """The user message, inline; it must contain ``{procedure}``."""
    system_file: str | None = None
    """A file holding the system message (relative to the variant file); read on load."""
    user_file: str | None = None
    """A file holding the user message (relative to the variant file); read on load."""

    @model_validator(mode="after")
    def _one_source(self) -> PromptTemplate:
        for part in ("system", "user"):
            if getattr(self, part) is not None and getattr(self, f"{part}_file") is not None:
                raise ValueError(f"prompt: give {part} or {part}_file, not both")
        if self.user is not None and "{procedure}" not in self.user:
            raise ValueError("prompt.user: the template must contain {procedure}")
        return self


class ToolFaults(BaseModel):
    """Faults of the step tools (and calculator tools); the finish tool never fails."""

    model_config = _CONFIG
    transient: float = Field(default=0.0, ge=0.0, lt=1.0)
    """Probability that a call fails transiently (executes nothing, says to try again)."""
    slow_seconds: float = Field(default=0.0, ge=0.0, le=30.0)
    """Seconds every step-tool call takes before it answers."""


class Variant(BaseModel):
    """One way of presenting the workflow. Every knob's default is today's behaviour."""

    model_config = _CONFIG
    name: str = Field(default="custom", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")
    """Recorded with every episode (``variant``); a file's name defaults to its stem."""
    description: str = ""
    """What it changes, in a line."""
    prompt: PromptTemplate = Field(default_factory=PromptTemplate)
    """Prompt templates."""
    rendering: Rendering = "numbered"
    """How the steps are written."""
    names: Naming = "none"
    """Variable renaming."""
    order: Order = "listed"
    """Step order; the monitor follows the listed order."""
    tools: ToolSet = "per_step"
    """The tool set."""
    distractors: int = Field(default=0, ge=0, le=MAX_DISTRACTORS)
    """Extra tools that have nothing to do with the procedure."""
    scramble_names: bool = False
    """Step (and calculator) tools get seeded random names."""
    descriptions: bool = True
    """Whether tools and their parameters carry descriptions."""
    faults: ToolFaults = Field(default_factory=ToolFaults)
    """Tool faults."""
    guard: GuardMode | None = None
    """The guard mode; unset: the run's ``--guard``."""
    seed: int = Field(default=0, ge=0)
    """Seed of random names, shuffles and faults (each also keyed by the scenario)."""
    prefill: Prefill | None = None
    """The steps every episode opens with, already executed (some wrong); unset: none."""

    @model_validator(mode="after")
    def _consistent(self) -> Variant:
        if self.tools == "calculator" and self.guard in ("enforce", "feedback"):
            raise ValueError("guard: enforce and feedback need per-step tools (not the calculator)")
        if self.tools == "calculator" and self.prefill is not None:
            raise ValueError(
                "prefill: the pre-filled calls need per-step tools (not the calculator)"
            )
        return self

    @property
    def is_default(self) -> bool:
        """Whether it changes nothing (whatever its name)."""
        knobs = self.model_dump(exclude={"name", "description"})
        return knobs == Variant(name=DEFAULT).model_dump(exclude={"name", "description"})

    def with_guard(self, guard: str) -> GuardMode:
        """The guard an episode runs under: the variant's, else the run's."""
        return self.guard if self.guard is not None else guard  # type: ignore[return-value]

    def check(self, mode: str, guard: str) -> GuardMode:
        """The guard a run under this variant uses, or a :class:`ConfigError` when the
        variant cannot run in ``mode`` or with ``guard``."""
        effective = self.with_guard(guard)
        if self.is_default:
            return effective
        if mode == "text":
            raise ConfigError(
                f"variant {self.name!r} changes the tool workflow; text mode takes only "
                "variants that change nothing"
            )
        if self.tools == "calculator" and effective != "observe":
            raise ConfigError(
                f"guard {effective!r} needs per-step tools; variant {self.name!r} offers the "
                "calculator (use --guard observe)"
            )
        return effective

    def spec(self) -> dict[str, Any]:
        """The JSON that rebuilds the variant (stored with every episode it ran)."""
        return self.model_dump(mode="json", exclude_defaults=True) | {"name": self.name}

    @property
    def digest(self) -> str:
        """A short hash of what it changes (the name and description excluded)."""
        unset = {"prefill"} if self.prefill is None else set()  # digests from before it
        knobs = self.model_dump(mode="json", exclude={"name", "description", *unset})
        text = json.dumps(knobs, sort_keys=True, separators=(",", ":"))
        return hashlib.blake2b(text.encode(), digest_size=6).hexdigest()

    def changes(self) -> list[str]:
        """What it changes, one short phrase per knob (empty for the default)."""
        out = []
        if self.prompt.system is not None:
            out.append("system prompt")
        if self.prompt.user is not None:
            out.append("user prompt")
        base = Variant(name=DEFAULT)
        for knob in ("rendering", "names", "order", "tools", "guard", "seed"):
            value = getattr(self, knob)
            if value != getattr(base, knob):
                out.append(f"{knob}={value}")
        if self.distractors:
            out.append(f"distractors={self.distractors}")
        if self.scramble_names:
            out.append("scrambled tool names")
        if not self.descriptions:
            out.append("no tool descriptions")
        if self.faults.transient:
            out.append(f"transient faults p={self.faults.transient:g}")
        if self.faults.slow_seconds:
            out.append(f"slow tools {self.faults.slow_seconds:g}s")
        if self.prefill is not None:
            out.append(prefill_phrase(self.prefill))
        return out


DEFAULT_VARIANT = Variant(name=DEFAULT, description="Today's workflow: nothing changed.")


def prefill_phrase(prefill: Prefill) -> str:
    """What a ``[prefill]`` table changes, in a phrase."""
    steps, fraction = prefill.steps, prefill.fraction
    length = f"{steps} steps" if steps is not None else f"{fraction or 0:.0%} of the steps"
    return f"pre-filled {length} ({prefill.wrong_share:.0%} wrong)"


def fill_template(template: str, values: dict[str, str]) -> str:
    """Substitute the four placeholders; every other brace is left as written."""
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def shipped_variants() -> dict[str, Path]:
    """Shipped variant files by name."""
    found = folder("variants")
    return {p.stem: p for p in sorted([*found.glob("*.toml"), *found.glob("*.json")])}


def load_variant(name_or_path: str | Path) -> Variant:
    """A shipped variant by name, or a variant file (``.toml`` or ``.json``) by path.

    Prompt files named by ``system_file``/``user_file`` are read (relative to the
    variant file) into the variant, so the variant alone rebuilds every prompt.

    Raises:
        ConfigError: an unknown name (the message lists the shipped ones).
        InputError: a file that cannot be read or is not a valid variant (naming the field).
    """
    text = str(name_or_path)
    if text == DEFAULT:
        return DEFAULT_VARIANT
    if isinstance(name_or_path, Path) or text.endswith((".toml", ".json")) or "/" in text:
        return read_variant(Path(text))
    known = shipped_variants()
    if text not in known:
        raise unknown_key("variant", text, [DEFAULT, *known])
    return read_variant(known[text])


def read_variant(path: Path) -> Variant:
    """A variant file."""
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise unreadable(path, exc) from None
    data: Any
    try:
        if path.suffix == ".toml":
            import tomllib  # here: only a TOML variant file needs it

            data = tomllib.loads(raw)
        else:
            data = loads(raw)
    except ValueError as exc:  # tomllib.TOMLDecodeError is one
        kind = "TOML" if path.suffix == ".toml" else "JSON"
        raise InputError(path, f"not valid {kind} ({exc})") from None
    except RecursionError:  # tomllib recurses once per level, JSON's reader does not
        raise InputError(path, "not valid TOML (nested too deeply)") from None
    if isinstance(data, dict):
        data.setdefault("name", path.stem)
        prompt = data.get("prompt")
        if isinstance(prompt, dict):
            data["prompt"] = _read_prompt_files(path, prompt)
    return variant_from_json(data, path)


def variant_from_json(data: Any, where: object = "variant") -> Variant:
    """A variant from parsed JSON (a file, or the spec stored in a run file)."""
    try:
        return Variant.model_validate(data)
    except ValidationError as exc:
        raise invalid(where, exc) from None


def _read_prompt_files(path: Path, prompt: dict[str, Any]) -> dict[str, Any]:
    out = dict(prompt)
    for part in ("system", "user"):
        name = out.get(f"{part}_file")
        if not isinstance(name, str) or out.get(part) is not None:
            continue
        target = path.parent / name
        try:
            out[part] = target.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            err = unreadable(target, exc)
            raise InputError(
                path, f"{target}: {str(err).split(': ', 1)[-1]}", f"prompt.{part}_file"
            ) from None
        del out[f"{part}_file"]
    return out


def variant_schema() -> dict[str, Any]:
    """The JSON Schema of a variant file, generated from :class:`Variant`, each field
    described by the docstring written under it."""
    schema = Variant.model_json_schema()
    for model in (Variant, PromptTemplate, ToolFaults, Prefill):
        where = schema if model is Variant else schema["$defs"][model.__name__]
        for name, doc in field_docstrings(model).items():
            where["properties"][name].setdefault("description", doc)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def field_docstrings(cls: type) -> dict[str, str]:
    """The docstrings written under a class's fields (``name: type`` then a string), read
    from its source.

    >>> field_docstrings(ToolFaults)["slow_seconds"]
    'Seconds every step-tool call takes before it answers.'
    """
    import ast
    import inspect
    import textwrap

    body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0].body  # type: ignore[attr-defined]
    return {
        node.target.id: inspect.cleandoc(after.value.value)
        for node, after in itertools.pairwise(body)
        if isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and isinstance(after, ast.Expr)
        and isinstance(after.value, ast.Constant)
        and isinstance(after.value.value, str)
    }


if __name__ == "__main__":  # pragma: no cover
    print(json.dumps(variant_schema(), indent=2))
