"""Which agent a stored episode is reported as: the one identity ``report``, ``check``,
the tables and the HTML report group episodes by.

An agent is its name (``run --name``, else its agent spec), what ran it (the agent spec
recorded in the run file), its mode and its variant: two run files of two variants are
two agents, as they are two arms in ``compare``, and a run named after another agent
(``run --name sim:oracle --agent sim:decay``) is never pooled with that agent's episodes.

The name an agent is shown under is its name, `` / VARIANT`` for a variant other than
``default`` and `` [text]`` in text mode; only when two agents of a report share a name
is what ran each shown beside it (``sim:oracle (sim:decay)``), with a one-line note, so
the tables of runs whose names are distinct read as before.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from agentproc.runs import record_agent, record_mode, record_setup, record_variant


class AgentId(NamedTuple):
    """What identifies the agent of an episode in a report."""

    name: str
    """The run's name, else its agent spec."""
    spec: str
    """The agent spec that ran it."""
    mode: str
    """``tools`` or ``text``."""
    variant: str
    """The variant it ran under."""
    setup: str = ""
    """What its run was set up with that changes what the agent sees or does, as the
    options that set it (:func:`~agentproc.runs.keys.setup_text`; empty: the defaults)."""


def agent_id(rec: Mapping[str, Any]) -> AgentId:
    """The agent identity of a stored episode.

    >>> agent_id({"agent": "sim:decay", "name": "sim:oracle", "variant": "terse"})
    AgentId(name='sim:oracle', spec='sim:decay', mode='tools', variant='terse', setup='')
    """
    return AgentId(
        record_agent(rec),
        str(rec["agent"]),
        record_mode(rec),  # type: ignore[arg-type]
        record_variant(rec),
        record_setup(rec),
    )


def shown_name(agent: AgentId, with_spec: bool = False, label: str | None = None) -> str:
    """The name ``agent`` is shown under: ``label`` (:func:`agent_labels`), else its name
    (with what ran it when ``with_spec``), then its variant and mode.

    >>> shown_name(AgentId("v2", "openai:m", "text", "terse"), with_spec=True)
    'v2 (openai:m) / terse [text]'
    """
    name = label or (f"{agent.name} ({agent.spec})" if with_spec else agent.name)
    if agent.variant != "default":
        name = f"{name} / {agent.variant}"
    return f"{name} [text]" if agent.mode == "text" else name


def agent_key(rec: Mapping[str, Any]) -> str:
    """The name one episode is shown under, alone (see :func:`agent_names` for a
    report's agents, where two agents sharing a name are told apart)."""
    return shown_name(agent_id(rec))


def _shared(agents: list[AgentId]) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Per name, the specs that ran its agents and their setups."""
    specs: defaultdict[str, set[str]] = defaultdict(set)
    setups: defaultdict[str, set[str]] = defaultdict(set)
    for a in agents:
        specs[a.name].add(a.spec)
        setups[a.name].add(a.setup)
    return specs, setups


def agent_labels(agents: Iterable[AgentId]) -> dict[AgentId, str]:
    """Each agent's name alone (no variant, no mode), told apart from another agent of
    ``agents`` that shares the name: by what ran it when their specs differ and the name
    is not its own spec, and by its setup when theirs differ (:func:`agent_names`' rule):
    ``compare`` names arms from it.

    >>> sorted(agent_labels(
    ...     [AgentId("sim:oracle", "sim:oracle", "tools", "default"),
    ...      AgentId("sim:oracle", "sim:decay", "tools", "terse")]).values())
    ['sim:oracle', 'sim:oracle (sim:decay)']
    >>> sorted(agent_labels(
    ...     [AgentId("local", "local", "tools", "default"),
    ...      AgentId("local", "local", "tools", "default", "--tool-choice auto")]).values())
    ['local', 'local (--tool-choice auto)']
    """
    agents = list(dict.fromkeys(agents))
    specs, setups = _shared(agents)
    labels = {}
    for a in agents:
        what = [a.spec] if len(specs[a.name]) > 1 and a.spec != a.name else []
        if len(setups[a.name]) > 1 and a.setup:
            what.append(a.setup)
        labels[a] = f"{a.name} ({'; '.join(what)})" if what else a.name
    return labels


def agent_names(agents: Iterable[AgentId]) -> tuple[dict[AgentId, str], list[str]]:
    """Each agent's shown name, distinct across ``agents``, and a one-line note per name
    that agents run by different specs, or set up otherwise, share (the agent whose name
    is its own spec keeps the bare name, and so does one set up with the defaults; every
    other is shown with what ran it or its setup), naming what tells them apart.

    >>> names, notes = agent_names(
    ...     [AgentId("sim:oracle", "sim:oracle", "tools", "default"),
    ...      AgentId("sim:oracle", "sim:decay", "tools", "default")])
    >>> sorted(names.values())
    ['sim:oracle', 'sim:oracle (sim:decay)']
    """
    agents = list(dict.fromkeys(agents))
    labels = agent_labels(agents)
    specs, setups = _shared(agents)
    names = {a: shown_name(a, label=labels[a]) for a in agents}
    notes = []
    for name in sorted(specs):
        apart = []
        if len(specs[name]) > 1:
            apart.append(f"run by {', '.join(sorted(specs[name]))}")
        if len(setups[name]) > 1:
            shown = sorted(s or "the defaults" for s in setups[name])
            apart.append(f"set up with {' / '.join(shown)}")
        if apart:
            n = len({(a.spec, a.setup) for a in agents if a.name == name})
            notes.append(
                f"note: {n} agents are named {name!r} ({'; '.join(apart)}): shown apart; "
                "run --name names each run"
            )
    return names, notes
