"""The tree stays lint-, format- and type-clean: the checks run as tests, so CI keeps them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *argv], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_ruff_finds_nothing():
    done = run("ruff", "check", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_file_is_formatted():
    done = run("ruff", "format", "--check", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_finds_nothing_in_the_package():
    done = run("mypy")
    assert done.returncode == 0, done.stdout + done.stderr
