"""A declared workflow's file format as a JSON Schema (``schemas/workflow.schema.json``,
written by ``python -m agentproc.workflow.declared > schemas/workflow.schema.json``)."""

from __future__ import annotations

import json
from typing import Any

from agentproc.procedures.workflow_file import InputSpec, StepSpec, WorkflowSpec
from agentproc.workflow.variant import field_docstrings


def workflow_schema() -> dict[str, Any]:
    """The JSON Schema of a workflow file, generated from
    :class:`~agentproc.procedures.workflow_file.WorkflowSpec`, each field described by the
    docstring written under it."""
    schema = WorkflowSpec.model_json_schema()
    for model in (WorkflowSpec, InputSpec, StepSpec):
        at = schema if model is WorkflowSpec else schema["$defs"][model.__name__]
        for name, doc in field_docstrings(model).items():
            at["properties"][name].setdefault("description", doc)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


if __name__ == "__main__":  # pragma: no cover
    print(json.dumps(workflow_schema(), indent=2))
