"""Agent regression tests in pytest: run an agent over a suite, assert it follows the
procedure, compare it with a golden run scenario by scenario.

:mod:`agentproc.pytest_plugin` hands these out as fixtures (``agentproc_suite``,
``agentproc_run``, ``agentproc_golden``); they work without pytest too::

    result = run_agent("sim:oracle", suite, trials=2)
    assert_follows_procedure(result, min_faithful=0.9, forbid=("hallucinated_call",))

A run is ``agentproc run`` itself (the same options, the same run file), so what a
test sees is what the command line would have written.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentproc.analysis.measures.step_names import StepNames

SHOWN = 3
"""Worst episodes a failure message shows."""
AROUND = 2
"""Calls shown before and after an episode's first divergence."""
_SEVERITY = {"wrong": 0, "no_answer": 0, "unfaithful_correct": 1, "faithful": 2}


@dataclass(frozen=True)
class AgentprocResult:
    """What one run of an agent over a suite did."""

    path: Path
    """The run file."""
    episodes: list[dict[str, Any]]
    """Every episode's record, as run-file readers see it (errored ones included)."""

    @property
    def scored(self) -> list[dict[str, Any]]:
        """The episodes that ran (an errored one counts in no figure)."""
        return [e for e in self.episodes if "error" not in e]

    @property
    def errored(self) -> list[dict[str, Any]]:
        """The episodes an infrastructure failure ended."""
        return [e for e in self.episodes if "error" in e]

    @property
    def faithful_accuracy(self) -> float:
        """Share of the scored episodes with a correct first answer and no label."""
        scored = self.scored
        return sum(e["verdict"] == "faithful" for e in scored) / len(scored) if scored else 0.0

    @property
    def labels(self) -> dict[str, int]:
        """Label kind -> scored episodes that carry it."""
        tally = Counter(kind for e in self.scored for kind in {lab["kind"] for lab in e["labels"]})
        return dict(sorted(tally.items()))


def _command(argv: list[str]) -> tuple[int, str]:
    """Run one ``agentproc`` command in process: its status and what it said."""
    from rich.console import Console

    from agentproc.cli.main import COMMANDS
    from agentproc.cli.parser import build_parser

    args = build_parser().parse_args(argv)
    said = io.StringIO()
    console = Console(file=said, width=200, soft_wrap=True, emoji=False)
    return COMMANDS[args.command](args, console, console), said.getvalue()


def _flag(name: str, value: Any) -> list[str]:
    flag = "--" + name.replace("_", "-")
    if value is True:
        return [flag]
    if value is False or value is None:
        return []
    if isinstance(value, list | tuple):
        return [flag, ",".join(map(str, value))]
    return [flag, str(value)]


def make_suite(folder: Path, **grid: Any) -> Path:
    """A suite generated into ``folder`` (reused when the same grid was asked for before):
    ``preset`` or ``steps``, ``lookback``, ``range``, ``ops``, ``mode``, ``count``, ``seed``,
    as ``agentproc generate`` takes them; or ``workflow`` (a declared workflow file) with
    ``count`` and ``seed``."""
    if "workflow" in grid:
        grid = {"count": 2, "seed": 0} | grid
        grid["workflow"] = str(Path(grid["workflow"]).resolve())
    else:
        grid = {"steps": (5,), "lookback": (1,), "count": 2, "seed": 0} | grid
    if "preset" in grid:
        grid = {"preset": grid["preset"]}
    name = hashlib.sha256(json.dumps(grid, sort_keys=True, default=str).encode()).hexdigest()
    out = Path(folder) / f"suite-{name[:16]}"
    if (out / "suite.json").exists():
        return out
    argv = ["generate", *(x for k, v in grid.items() for x in _flag(k, v)), "--out", str(out)]
    code, said = _command(argv)
    if code != 0:
        raise RuntimeError(f"agentproc generate failed ({code}): {said}")
    return out


def run_agent(agent: str, suite: Path | str, out: Path, **options: Any) -> AgentprocResult:
    """Run ``agent`` over ``suite`` into the run file ``out``; ``options`` are those of
    ``agentproc run`` (``trials=3``, ``base_url=...``, ``variant="calculator"``, ...).

    Raises:
        AgentprocError: bad input, as ``agentproc run`` refuses it.
        RuntimeError: the run stopped (the endpoint failed on its first episodes).
    """
    from agentproc.cli.output import EXIT_ERRORED, EXIT_OK
    from agentproc.runs import read_run
    from agentproc.runs.names import agent_name

    if options.get("name") is not None:
        agent_name(str(options["name"]))  # refused as run --name refuses it, without the usage
    argv = ["run", str(suite), "--agent", agent, "--out", str(out)]
    argv += [x for k, v in options.items() for x in _flag(k, v)]
    code, said = _command(argv)
    if code not in (EXIT_OK, EXIT_ERRORED) or not Path(out).exists():
        raise RuntimeError(f"agentproc run stopped ({code}): {said.strip()}")
    return AgentprocResult(Path(out), [dict(rec) for _, rec in read_run(Path(out))])


def _where(step: int | None, names: StepNames | None = None) -> str:
    from agentproc.analysis.measures.step_names import step_text

    return "the answer" if step is None else step_text(step, names or {})


def _divergence(episode: Mapping[str, Any], names: StepNames | None = None) -> str:
    div = episode["metrics"].get("first_divergence")
    if not div:
        return "no divergence"
    return f"{div['label']} at {_where(div.get('step'), names)} (call {div['call_index']})"


def _worst(episodes: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    def rank(e: dict[str, Any]) -> tuple[int, int, int]:
        div = e["metrics"].get("first_divergence") or {}
        return (_SEVERITY.get(e["verdict"], 0), -len(e["labels"]), div.get("call_index", 0))

    return sorted((e for e in episodes if e["verdict"] != "faithful"), key=rank)


def timeline(
    episode: Mapping[str, Any],
    around: int = AROUND,
    width: int = 100,
    names: StepNames | None = None,
) -> str:
    """The calls around an episode's first divergence, one line each, the divergence
    marked ``▶`` and each call's labels beside it; a declared workflow's steps named by
    ``names`` (by default, as the episode's scenario names them: ``step 4 (discount)``)."""
    from agentproc.analysis.measures.step_names import WorkflowNames
    from agentproc.analysis.render.timeline import elide

    if names is None:
        known = WorkflowNames()
        known.learn("", None, episode)  # the scenario the record keeps or refers to
        names = known.of_record(episode)

    head = (
        f"{episode['scenario_id']} (trial {episode.get('trial', 0)}): {episode['verdict']}; "
        f"first divergence: {_divergence(episode, names)}"
    )
    div = episode["metrics"].get("first_divergence")
    calls = episode.get("calls") or []
    at = div["call_index"] if div else len(calls)
    labels: dict[int, list[str]] = {}
    for lab in episode["labels"]:
        if lab.get("call_index") is not None:
            step = lab.get("step")
            name = lab["kind"] + (f"({_where(step, names)})" if step is not None else "")
            labels.setdefault(lab["call_index"], []).append(name)
    lines = [head]
    first = max(0, at - around)
    if first:
        lines.append(f"      … {first} call{'' if first == 1 else 's'} before")
    for c in calls[first : at + around + 1]:
        i = c["index"]
        call = elide(f"{c['name']}({c['arguments']})", width // 2)
        line = f"  {'▶' if i == at else ' '} {i:>3}  {call} -> {elide(str(c['result']), 30)}"
        lines.append(line + (f"  [{', '.join(labels[i])}]" if i in labels else ""))
    if at >= len(calls):
        lines.append(f"  ▶ {len(calls):>3}  (the episode ended: {_divergence(episode, names)})")
    ends = [lab["kind"] for lab in episode["labels"] if lab.get("call_index") is None]
    if ends:
        lines.append(f"      episode: {', '.join(sorted(set(ends)))}")
    return "\n".join(lines)


def assert_follows_procedure(
    result: AgentprocResult,
    min_faithful: float = 1.0,
    forbid: Sequence[str] = ("hallucinated_call",),
) -> None:
    """Fail unless no episode errored, faithful accuracy is at least ``min_faithful`` and
    no episode carries a label of ``forbid``; the message shows the first divergence of
    the worst episodes as a compact timeline.

    Raises:
        AssertionError: what failed, then the worst episodes' timelines.
    """
    __tracebackhide__ = True
    problems = []
    if result.errored:
        ids = ", ".join(sorted({e["scenario_id"] for e in result.errored}))
        problems.append(f"{len(result.errored)} episodes errored (errors are not passes): {ids}")
    acc, n = result.faithful_accuracy, len(result.scored)
    if not n or acc < min_faithful:
        problems.append(
            f"faithful accuracy {acc:.1%} of {n} episodes is below min_faithful {min_faithful:.1%}"
        )
    for kind in forbid:
        carrying = [e for e in result.scored if any(lab["kind"] == kind for lab in e["labels"])]
        if carrying:
            ids = ", ".join(sorted({e["scenario_id"] for e in carrying}))
            problems.append(f"{kind} (forbidden) in {len(carrying)} episodes: {ids}")
    if not problems:
        return
    worst = _worst(result.scored)
    shown = "\n\n".join(timeline(e) for e in worst[:SHOWN])
    more = f"\n\n({len(worst) - SHOWN} more unfaithful episodes)" if len(worst) > SHOWN else ""
    head = "agentproc: the agent does not follow the procedure:\n- " + "\n- ".join(problems)
    raise AssertionError(head + ("\n\nworst episodes:\n" + shown + more if shown else ""))


def _by_episode(episodes: Iterable[Mapping[str, Any]]) -> dict[tuple[str, int], Mapping[str, Any]]:
    return {(str(e["scenario_id"]), int(e.get("trial", 0))): e for e in episodes}


def _kinds(e: Mapping[str, Any]) -> list[str]:
    return sorted({lab["kind"] for lab in e["labels"]})


def golden_differences(result: AgentprocResult, golden: Path) -> list[str]:
    """Scenario by scenario (and trial), what changed against the golden run: the verdict,
    the first divergence, the label kinds; and episodes only one of them has."""
    from agentproc.runs import read_run

    before = _by_episode(dict(rec) for _, rec in read_run(golden))
    now = _by_episode(result.episodes)
    out = []
    for key in sorted(before.keys() | now.keys()):
        name = f"{key[0]} (trial {key[1]})"
        if key not in now:
            out.append(f"{name}: in the golden run, not in this one")
            continue
        if key not in before:
            out.append(f"{name}: not in the golden run")
            continue
        b, n = before[key], now[key]
        changes = []
        if ("error" in b) != ("error" in n) or b["verdict"] != n["verdict"]:
            changes.append(f"verdict {_verdict(b)} -> {_verdict(n)}")
        if _divergence(b) != _divergence(n):
            changes.append(f"first divergence {_divergence(b)} -> {_divergence(n)}")
        if _kinds(b) != _kinds(n):
            changes.append(f"labels {_kinds(b) or 'none'} -> {_kinds(n) or 'none'}")
        if changes:
            out.append(f"{name}: " + "; ".join(changes))
    return out


def _verdict(e: Mapping[str, Any]) -> str:
    return "errored" if "error" in e else str(e["verdict"])


def check_golden(result: AgentprocResult, golden: Path, update: bool = False) -> None:
    """With ``update``, record ``result`` as the golden run; else fail, naming each
    scenario that changed, unless it matches the golden run scenario by scenario.

    Raises:
        AssertionError: no golden run yet, or scenarios that changed.
    """
    golden = Path(golden)
    if update:
        golden.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(result.path, golden)
        return
    if not golden.exists():
        raise AssertionError(
            f"agentproc: no golden run at {golden}: record one with --agentproc-update-golden"
        )
    changed = golden_differences(result, golden)
    if changed:
        raise AssertionError(
            f"agentproc: {len(changed)} episodes differ from the golden run {golden}:\n- "
            + "\n- ".join(changed)
        )
