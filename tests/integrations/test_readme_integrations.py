"""The README's integration sections run as written: each ``bash`` block's commands, in
order, in a fresh folder (``agentproc`` is this checkout's; ``serve-mcp`` is driven by an
MCP client from the SDK; ``inspect`` runs offline, see :data:`INSPECT`)."""

from __future__ import annotations

import json
import os
import re
import shlex
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


INSPECT = """
import sys
import inspect_ai.model._model as m
# mockllm counts tokens with tiktoken, which downloads its encoding: not here.
async def offline(self, text): return max(1, len(text) // 4)
m.Model.count_text_tokens = offline
from inspect_ai._cli.main import main
sys.argv = ["inspect", *sys.argv[1:]]
main()
"""


def env(tmp_path: Path) -> dict[str, str]:
    # The package's Inspect entry point, as an install declares it.
    dist = tmp_path / "site" / "agentproc_entry-0.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: agentproc-entry\nVersion: 0\n")
    (dist / "entry_points.txt").write_text(
        "[inspect_ai]\nagentproc = agentproc._inspect_registry\n"
    )
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path / "site")])}


def shell(line: str, folder: Path, environ: dict[str, str]) -> subprocess.CompletedProcess[str]:
    prelude = (
        f'agentproc() {{ "{sys.executable}" -m agentproc "$@"; }}\n'
        f'inspect() {{ "{sys.executable}" -c {shlex.quote(INSPECT)} "$@"; }}\n'
    )
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
    pytest.importorskip("inspect_ai")
    environ = env(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    for title, lines in sections().items():
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
    assert list((work / "logs").glob("*.eval"))  # Inspect's log of the eval
