"""Experiments: run one agent under several variants, then compare and rank what it did."""

from agentproc.experiments.run import Ran, SuiteRun, compare_suite, stress_suite
from agentproc.experiments.stress import (
    Breaking,
    Ranked,
    StressResult,
    axis_of,
    breaking_point,
    combine,
    preset_variants,
    stress_result,
)

__all__ = [
    "Breaking",
    "Ran",
    "Ranked",
    "StressResult",
    "SuiteRun",
    "axis_of",
    "breaking_point",
    "combine",
    "compare_suite",
    "preset_variants",
    "stress_result",
    "stress_suite",
]
