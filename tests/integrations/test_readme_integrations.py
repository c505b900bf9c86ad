"""The README's integration sections run as written: each ``bash`` block's commands, in
order, in a fresh folder (``agentproc`` is this checkout's; ``serve-mcp`` is driven by an
MCP client from the SDK; the Inspect section runs as one script, with the ``inspect``
installed beside this Python, against the demo endpoint it starts)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import records

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```bash\n(.*?)^```", re.DOTALL | re.MULTILINE)


def sections() -> dict[str, list[str]]:
    """Each ``###`` section of the README's Integrations part -> its commands."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    part = text[text.index("\n## Integrations\n") :]
    out: dict[str, list[str]] = {}
    for chunk in part.split("\n### ")[1:]:
        title = chunk.splitlines()[0]
        out[title] = [line for m in BLOCK.finditer(chunk) for line in m[1].splitlines() if line]
    return out


INSPECT = "Inspect AI"
"""The Inspect section's title (before its install hint)."""


def env(tmp_path: Path) -> dict[str, str]:
    # The package's Inspect entry point, as an install declares it.
    dist = tmp_path / "site" / "agentproc_entry-0.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: agentproc-entry\nVersion: 0\n")
    (dist / "entry_points.txt").write_text(
        "[inspect_ai]\nagentproc = agentproc._inspect_registry\n"
    )
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path / "site")]),
        # The scripts installed beside this Python (``agentproc``, ``inspect``) come first.
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        # Inspect's cache of model replies kept to this test (see docs/integrations.md).
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }


def shell(line: str, folder: Path, environ: dict[str, str]) -> subprocess.CompletedProcess[str]:
    prelude = f'agentproc() {{ "{sys.executable}" -m agentproc "$@"; }}\n'
    return subprocess.run(
        ["bash", "-c", prelude + line],
        cwd=folder,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )


async def serve(line: str, folder: Path, environ: dict[str, str]) -> None:
    """Run a ``serve-mcp`` command as an MCP client would: move through every scenario."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    argv = shlex.split(line)[1:]
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "agentproc", *argv], env=environ, cwd=folder
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        while (
            not (await session.call_tool("next_scenario", {}))
            .content[0]
            .text.startswith("The run is complete")
        ):
            pass


def test_the_readme_has_one_section_per_integration():
    assert [t.split(" (")[0] for t in sections()] == [
        "MCP tool server",
        "OpenTelemetry traces",
        "Inspect AI",
    ]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
async def test_the_integration_sections_run_as_written(tmp_path: Path):
    pytest.importorskip("mcp")
    environ = env(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    for title, lines in sections().items():
        if title.startswith(INSPECT):  # its own test, below
            continue
        for line in lines:
            if line.startswith("agentproc serve-mcp"):
                await serve(line, work, environ)
                continue
            done = shell(line, work, environ)
            assert done.returncode == 0, f"{title}: {line}\n{done.stdout[-2000:]}{done.stderr}"
    assert [e["verdict"] for e in records(work / "mcp-run.jsonl")] == ["no_answer"]
    labels = [e["labels"] for e in records(work / "sim-run.jsonl")]
    assert [e["labels"] for e in records(work / "imported.jsonl")] == labels
    assert json.loads((work / "traces.json").read_text())["resourceSpans"]


def script(text: str, folder: Path, environ: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ``text`` with bash -e in its own process group, as pasted into one terminal;
    end whatever it left running (a demo endpoint whose ``kill`` was never reached)."""
    proc = subprocess.Popen(
        ["bash", "-e", "-c", text],
        cwd=folder,
        env={**environ, "COLUMNS": "100"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=600)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_the_inspect_section_runs_offline_as_written_and_prints_its_log_s_metrics(
    tmp_path: Path,
):
    pytest.importorskip("inspect_ai")
    from inspect_ai.log import read_eval_log

    environ = env(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    blocks = sections()
    made = [line for lines in blocks.values() for line in lines if line.startswith("agentproc gen")]
    (inspect,) = [lines for title, lines in blocks.items() if title.startswith(INSPECT)]
    done = script("\n".join([*made, *inspect]) + "\n", work, environ)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    printed = done.stdout + done.stderr
    assert "Unable to convert" not in printed and "interrupted" not in printed.lower()
    (path,) = (work / "logs").glob("*.eval")  # Inspect's log of the eval
    log = read_eval_log(str(path))
    assert log.status == "success" and log.samples
    verdicts = [s.scores["monitor"].metadata["verdict"] for s in log.samples]  # type: ignore[index]
    faithful = verdicts.count("faithful") / len(verdicts)
    first = sum(v in ("faithful", "unfaithful_correct") for v in verdicts) / len(verdicts)
    (score,) = log.results.scores  # type: ignore[union-attr]
    metrics = {name: m.value for name, m in score.metrics.items()}
    assert metrics == {
        "faithful_rate": faithful,
        "first_answer_rate": first,
        "unfaithful_correct_rate": first - faithful,
    }
    shown = " ".join(printed.split())  # what the user sees, as Inspect prints it
    for name, value in metrics.items():
        assert f"{name} {value:.3f}" in shown, shown[-2000:]
