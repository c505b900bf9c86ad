"""Labelling: one core holds the taxonomy's state and rules; tool and text mode adapt to it."""

from agentproc.labelling.core import LabelCore
from agentproc.labelling.labels import (
    VERDICTS,
    Divergence,
    Label,
    LabelKind,
    Metrics,
    Verdict,
    shown_label,
)
from agentproc.labelling.text import MISREAD, TextLabeller, label_text, run_text_episode
from agentproc.labelling.text_parse import TextEntry, TextTrace, parse_text
from agentproc.labelling.tools import Monitor, label_calls

__all__ = [
    "MISREAD",
    "VERDICTS",
    "Divergence",
    "Label",
    "LabelCore",
    "LabelKind",
    "Metrics",
    "Monitor",
    "TextEntry",
    "TextLabeller",
    "TextTrace",
    "Verdict",
    "label_calls",
    "label_text",
    "parse_text",
    "run_text_episode",
    "shown_label",
]
