"""agentproc.analysis: its public names import on first use, so one pure module loads
without the comparison, the report, relabelling, replay and export."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import agentproc.analysis as analysis

HEAVY = [
    "compare.arms",
    "compare.result",
    "measures.report",
    "stored.relabel",
    "stored.replay",
    "render.report_json",
]


def loaded_after(statement: str) -> list[str]:
    """Which of :data:`HEAVY` a new interpreter has loaded after ``statement``."""
    code = (
        f"import sys; {statement}; "
        f"print(' '.join(m for m in {HEAVY!r} if 'agentproc.analysis.' + m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_a_pure_module_loads_none_of_the_heavy_ones():
    assert loaded_after("from agentproc.analysis.stats.paired import signflip_test") == []
    assert (
        loaded_after("import agentproc.analysis.stats.exact, agentproc.analysis.stats.student_t")
        == []
    )


def fresh_modules(statement: str, names: list[str]) -> list[str]:
    """Which of ``names`` a new interpreter has in ``sys.modules`` after ``statement``."""
    code = f"import sys; {statement}; print(' '.join(m for m in {names!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_the_pure_statistics_load_neither_pydantic_nor_the_labelling():
    # stats/ is functions of numbers: what a model or a label needs imports it, never back.
    pure = Path(analysis.__file__).parent / "stats"
    every = "; ".join(f"import agentproc.analysis.stats.{p.stem}" for p in pure.glob("[!_]*.py"))
    heavy = ["pydantic", "agentproc.labelling"]
    assert fresh_modules("import agentproc.analysis.stats", heavy) == []
    assert fresh_modules(every, heavy) == []


def test_a_public_name_loads_its_module_on_first_use():
    assert loaded_after("from agentproc.analysis import relabel_run") == ["stored.relabel"]
