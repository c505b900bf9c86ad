"""What ``--resume`` goes on from: the episodes a run file holds, and the two things it
refuses, each in one line before an episode of it is run.

- **Another agent.** A run file is one agent's: ``--resume`` with another ``--agent``,
  ``--name`` or setup (:func:`~agentproc.runs.keys.setup_text`: an endpoint, a tool
  choice, a seed...) would add a second agent to it unseen, so it is refused, naming the
  agent the file holds. (More variants, modes and trials of the same agent are welcome.)
- **Another version of a scenario.** A suite regenerated or edited since the run holds
  other scenarios under the same ids. The episodes already run are of the old ones, so
  going on would mix two suites in one file and show the old episodes as the new
  suite's: the first scenario whose fingerprint
  (:func:`~agentproc.runs.records.scenario_digest`) differs from the one recorded is
  refused, naming it. ``replay`` and ``relabel`` refuse such a suite the same way (the
  digest its ``scenario_ref`` holds).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentproc.errors import ConfigError, InputError, counted
from agentproc.runs.keys import EpisodeKey, agent_identity, episode_key, setup_text
from agentproc.runs.lines import ReadReport
from agentproc.runs.records import is_error, scenario_digest
from agentproc.runs.runfile import read_lines, relabel_part_of
from agentproc.workflow import Scenario


@dataclass
class Held:
    """What a run file holds, as ``--resume`` reads it (its heads, in one pass)."""

    done: set[EpisodeKey] = field(default_factory=set)
    """Episodes whose last record is not an error: skipped."""
    digests: defaultdict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    """Scenario id -> the fingerprints its episodes were run on."""
    agents: dict[str, int] = field(default_factory=dict)
    """Agent identity (:func:`~agentproc.runs.keys.agent_identity`) -> its records."""


def held_in(path: Path) -> Held:
    """What the run file ``path`` holds (nothing when it does not exist)."""
    out = Held()
    if not Path(path).exists():
        return out
    last: dict[EpisodeKey, bool] = {}
    for line in read_lines(path, ReadReport(), "head"):
        rec = line.rec
        key = episode_key(rec)
        last[key] = not is_error(rec)  # type: ignore[arg-type]
        out.agents[key[1]] = out.agents.get(key[1], 0) + 1
        digest = rec.get("scenario_sha256")
        if not isinstance(digest, str):
            digest = _older_digest(line.raw)
        if digest is not None:
            out.digests[key[0]].add(digest)
    out.done = {key for key, ok in last.items() if ok}
    return out


def _older_digest(raw: bytes) -> str | None:
    """The fingerprint of a line written before ``scenario_sha256`` was: its reference's
    digest, or that of its compact procedure; ``None`` when it cannot be had cheaply (a
    scenario stored whole, a version-1 line)."""
    part = relabel_part_of(raw)
    if part is None:
        return None
    ref, procedure = part.get("scenario_ref"), part.get("procedure")
    if isinstance(ref, dict) and isinstance(ref.get("sha256"), str):
        return str(ref["sha256"])
    if isinstance(procedure, bytes):  # its text as written: the bytes its digest is of
        return hashlib.sha256(procedure).hexdigest()
    return None


def run_identity(agent: str, name: str | None, settings: Mapping[str, Any] | None) -> str:
    """The agent identity a run writes its records under."""
    return agent_identity(agent, name, setup_text(settings))


def check_agent(path: Path, holds: Held, identity: str) -> None:
    """Refuse to resume ``path`` as another agent than the one it holds."""
    others = sorted(a for a in holds.agents if a != identity)
    if not others:
        return
    other = others[0]
    raise ConfigError(
        f"{path} holds {counted(holds.agents[other], 'episode')} of another agent "
        f"({other}), not {identity}: --resume goes on with the same --agent, --name and "
        "settings; write another agent to another --out (report reads both)"
    )


def check_scenario(path: Path, holds: Held, scenario: Scenario) -> None:
    """Refuse to resume ``path`` over a scenario that changed since its episodes ran."""
    recorded = holds.digests.get(scenario.id)
    if not recorded or recorded == {scenario_digest(scenario)}:
        return
    suite = scenario._suite or "the suite"
    raise InputError(
        path,
        f"holds episodes of another version of scenario {scenario.id!r} than {suite} holds "
        "now (it changed since they ran): run into another --out, or --overwrite",
        "scenario_sha256",
    )
