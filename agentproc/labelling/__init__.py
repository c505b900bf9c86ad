"""Labelling: one core holds the taxonomy's state and rules; tool and text mode adapt to it.

Each name is imported from its module on first use (:data:`_EXPORTS`), so labelling
recorded tool calls does not load text mode's parser. The ``TYPE_CHECKING`` block shows
IDEs and type checkers the same names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentproc.lazy import lazy_exports

if TYPE_CHECKING:  # the same names, for IDEs and type checkers (``X as X`` re-exports)
    from agentproc.labelling.core import LabelCore as LabelCore
    from agentproc.labelling.labels import VERDICTS as VERDICTS
    from agentproc.labelling.labels import Divergence as Divergence
    from agentproc.labelling.labels import Label as Label
    from agentproc.labelling.labels import LabelKind as LabelKind
    from agentproc.labelling.labels import Metrics as Metrics
    from agentproc.labelling.labels import Verdict as Verdict
    from agentproc.labelling.labels import shown_label as shown_label
    from agentproc.labelling.text import MISREAD as MISREAD
    from agentproc.labelling.text import TextLabeller as TextLabeller
    from agentproc.labelling.text import label_text as label_text
    from agentproc.labelling.text import run_text_episode as run_text_episode
    from agentproc.labelling.text_parse import TextEntry as TextEntry
    from agentproc.labelling.text_parse import TextTrace as TextTrace
    from agentproc.labelling.text_parse import parse_text as parse_text
    from agentproc.labelling.tools import Monitor as Monitor
    from agentproc.labelling.tools import label_calls as label_calls

_EXPORTS: dict[str, str] = {
    "Divergence": "agentproc.labelling.labels",
    "Label": "agentproc.labelling.labels",
    "LabelCore": "agentproc.labelling.core",
    "LabelKind": "agentproc.labelling.labels",
    "MISREAD": "agentproc.labelling.text",
    "Metrics": "agentproc.labelling.labels",
    "Monitor": "agentproc.labelling.tools",
    "TextEntry": "agentproc.labelling.text_parse",
    "TextLabeller": "agentproc.labelling.text",
    "TextTrace": "agentproc.labelling.text_parse",
    "VERDICTS": "agentproc.labelling.labels",
    "Verdict": "agentproc.labelling.labels",
    "label_calls": "agentproc.labelling.tools",
    "label_text": "agentproc.labelling.text",
    "parse_text": "agentproc.labelling.text_parse",
    "run_text_episode": "agentproc.labelling.text",
    "shown_label": "agentproc.labelling.labels",
}
"""Public name -> the module that defines it."""

__all__ = sorted([*_EXPORTS])


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
