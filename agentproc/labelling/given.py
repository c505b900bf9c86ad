"""The metrics of an episode that opened with pre-filled steps, made the agent's own.

A variant's ``[prefill]`` (:mod:`agentproc.workflow.prefill`) opens an episode with the
first ``k`` steps already called and answered. The labelling core takes those calls as
given (:meth:`~agentproc.labelling.core.LabelCore.give`): never labelled, part of the
correct prefix; the agent is judged against the state they left. :func:`own_metrics`
then leaves them out of every count of the agent's.
"""

from __future__ import annotations

from agentproc.labelling.labels import Metrics
from agentproc.workflow import Workflow


def own_metrics(metrics: Metrics, given: int, last_value: dict[int, int], wf: Workflow) -> None:
    """The metrics of an episode that opened with ``given`` pre-filled steps, made the
    agent's own: its calls, the steps after the pre-fill (executed, right, matched in order
    before the first divergence), and ``given_steps``."""
    own = wf.n_steps - given
    right = sum(
        last_value.get(step) == wf.correct[step + wf.n_inputs]
        for step in range(given + 1, wf.n_steps + 1)
    )
    metrics["calls"] -= given
    metrics["executed_steps"] = sum(step > given for step in last_value)
    metrics["total_steps"] = own
    metrics["progress_rate"] = round(right / own, 6)
    metrics["longest_correct_prefix"] = max(0, metrics["longest_correct_prefix"] - given)
    metrics["given_steps"] = given
