"""Saying when a comparison cannot show a prompt's effect: simulated agents do not read.

A ``sim:`` agent works from the step graph, never from the prompt or the tool
descriptions, so a variant that changes only that wording gives it the very same
episodes as the baseline. A comparison of such variants with such an agent says so in
one line, with what each variant changed (:meth:`Variant.changes`), rather than reading
as evidence that the wording made no difference.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentproc.workflow.variant import Variant

WORDING = frozenset({"prompt", "descriptions"})
"""The variant knobs that change only wording: the prompt templates and whether tools
carry descriptions (the rendering is not among them: ``sim:decay`` reads it)."""


def wording_only(variant: Variant, baseline: Variant) -> bool:
    """Whether ``variant`` differs from ``baseline`` in wording and in nothing else.

    >>> from agentproc.workflow.variant import DEFAULT_VARIANT, load_variant
    >>> [wording_only(load_variant(n), DEFAULT_VARIANT) for n in ("terse", "prose")]
    [True, False]
    """
    unused = {"name", "description"}
    rest = variant.model_dump(mode="json", exclude=unused | WORDING)
    if rest != baseline.model_dump(mode="json", exclude=unused | WORDING):
        return False
    return any(getattr(variant, k) != getattr(baseline, k) for k in WORDING)


def prompt_blind_note(agent: str, variants: Sequence[Variant], baseline: str) -> str | None:
    """The line saying ``agent`` cannot tell these variants apart, or ``None`` when it can
    (a model or a factory agent, or a variant that changes more than wording)."""
    if not agent.startswith("sim:"):
        return None
    base = next((v for v in variants if v.name == baseline), variants[0])
    blind = [v for v in variants if v is not base and wording_only(v, base)]
    if not blind:
        return None
    what = ", ".join(f"{v.name} ({', '.join(v.changes())})" for v in blind)
    verb = "changes" if len(blind) == 1 else "change"
    return (
        f"note: {agent} does not read wording (simulated agents ignore the prompt and the "
        f"tool descriptions), and {what} {verb} only wording: no difference can show "
        "here; a model agent (local, openai:MODEL or your own factory) reads it"
    )
