"""A multi-field answer's first answer, field by field: one ``wrong_answer`` per wrong
field, carrying the field's name.

Each field's cause is the single answer's rule applied to that field: ``propagated`` when
the agent's own latest value of the field's variable gives it (for the last step's field,
when it never produced that variable, the value of the last step it executed), or when an
exit that fires on the agent's own values gives it; else ``unsupported``. A field left out
of the finish call is wrong, ``unsupported``, with no ``got``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentproc.labelling.labels import Label, LabelKind
from agentproc.workflow import Workflow

PROPAGATED = "propagated"
UNSUPPORTED = "unsupported"


def field_labels(
    wf: Workflow,
    index: int,
    answer: Mapping[str, Any],
    produced: Mapping[int, int],
    last_executed: int | None,
    own_exit: tuple[int, ...] | None,
) -> list[Label]:
    """The ``wrong_answer`` labels of a first answer (call ``index``): one per field
    that is wrong. ``own_exit``: the fields of the exit that fires on the agent's own
    values, if one does."""
    labels = []
    expected = wf.field_answers
    for k, ((field, var), right) in enumerate(zip(wf.answer_fields, expected, strict=True)):
        got = answer.get(field)
        if got is not None and wf.close(got, right):
            continue
        cause = UNSUPPORTED
        if got is not None:
            fallback = last_executed if var == wf.answer_index else None
            own = produced.get(var, fallback)
            if (own is not None and wf.close(got, own)) or (
                own_exit is not None and wf.close(got, own_exit[k])
            ):
                cause = PROPAGATED
        labels.append(
            Label(
                LabelKind.WRONG_ANSWER,
                index,
                cause=cause,
                expected=wf.to_number(right),
                got=got,
                field=field,
            )
        )
    return labels
