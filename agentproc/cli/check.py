"""``agentproc check``: gate a build on a run (thresholds, and no regression against a
baseline); one line per condition, JSON, JUnit XML."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from agentproc.cli.help import HelpFormatter
from agentproc.cli.output import EXIT_FAILED, EXIT_OK, number, print_json, say, seed, words
from agentproc.errors import ConfigError, InputError

EPILOG = """\
conditions (each one line; a failed one names its scenarios and first
divergences):
  errored       no episode errored (errors count in no figure: they are not
                passes)
  min_faithful  with --min-faithful F: faithful accuracy at least F (0 to 1)
  label:KIND    with --labels: no episode carries KIND
  min_horizon   with --min-horizon STEPS: the lower bound of the 95% interval
                of the 50% faithful procedure horizon, as the line prints it
                (and report gives it), is at least STEPS; a horizon below the
                shortest length tested, or an interval open below, fails; a
                run where success is not shown to fall with length, or of one
                length, has no horizon and fails
  regression    with --baseline: fails only when faithful accuracy dropped by
                more than --max-drop points AND the drop is significant
                (one-sided p < 0.05) by compare's paired test: episodes paired
                with the baseline's by scenario and trial, the scenario as the
                unit (exact McNemar with one trial per scenario, the exact
                sign-flip test with several); the line gives the smallest drop
                the design could detect, and says when it cannot fail; a run
                whose every episode errored fails it

exit status: 0 every condition holds, 1 a condition failed, 2 bad input

examples:
  agentproc check runs/today.jsonl --min-faithful 0.9 \\
      --labels hallucinated_call
  agentproc check runs/today.jsonl --baseline runs/golden.jsonl --max-drop 5 \\
      --junit check.xml
"""


_fraction = number(
    float, "a fraction from 0 to 1", lambda v: 0 <= v <= 1, "expected a fraction from 0 to 1"
)
_steps = number(
    float, "a number of steps", lambda v: 0 < v < float("inf"), "expected a number of steps above 0"
)
_points = number(
    float, "a number of points", lambda v: 0 <= v <= 100, "expected points from 0 to 100"
)


def add_check_parser(sub: Any) -> None:
    """The ``check`` command's options."""
    p = sub.add_parser(
        "check",
        help="gate a build: thresholds, and no regression against a baseline run",
        description="Exit 0 when the run meets its thresholds and does not regress against "
        "the baseline, 1 otherwise (2: bad input).",
        epilog=EPILOG,
        formatter_class=HelpFormatter,
    )
    p.add_argument("run", type=Path, help="run file (JSON lines) to check")
    p.add_argument("--baseline", type=Path, help="a run of the same scenarios to compare with")
    p.add_argument(
        "--min-faithful", type=_fraction, metavar="F", help="least faithful accuracy (0 to 1)"
    )
    p.add_argument(
        "--min-horizon",
        type=_steps,
        metavar="STEPS",
        help="least procedure length at which faithful accuracy is still 50%%: the lower bound "
        "of the 50%% faithful horizon's 95%% interval (see report)",
    )
    p.add_argument(
        "--max-drop",
        type=_points,
        default=5.0,
        metavar="POINTS",
        help="with --baseline: the largest drop of faithful accuracy, in points, that passes "
        "even when significant (default 5)",
    )
    p.add_argument(
        "--labels",
        type=words,
        default=[],
        metavar="KIND,...",
        help="label kinds no episode may carry, e.g. skipped_step,hallucinated_call",
    )
    p.add_argument(
        "--seed", type=seed, default=0, help=argparse.SUPPRESS
    )  # kept for scripts: the sign-flip test is exact and takes no seed
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--junit", type=Path, metavar="FILE", help="also write JUnit XML here")


def check_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    from agentproc.analysis.gate.conditions import check_files
    from agentproc.outputs import check_output

    inputs = [args.run] + ([args.baseline] if args.baseline is not None else [])
    if args.junit is not None:
        check_output(args.junit, inputs=inputs, overwrite=True, option="--junit")
    try:
        result = check_files(
            args.run,
            args.baseline,
            min_faithful=args.min_faithful,
            max_drop=args.max_drop,
            labels=args.labels,
            min_horizon=args.min_horizon,
        )
    except (InputError, ConfigError) as exc:
        if args.junit is not None:  # an earlier build's passing report must not stand
            write_junit_error(exc, args.junit)
        raise
    say(err, *result.warnings)
    if args.junit is not None:
        write_junit(result, args.junit)
    if args.json:
        print_json(out, result.to_json())
    else:
        from agentproc.analysis.render.console_fit import print_wrapped

        for c in result.conditions:  # one line each, wrapped within the width
            print_wrapped(out, Text(f"{'ok  ' if c.passed else 'FAIL'} {c.name}: {c.message}"))
        failed, total = len(result.failed), len(result.conditions)
        verdict = f"check failed: {failed} of {total}" if failed else f"check passed: {total}"
        say(out, f"{verdict} conditions")
    return EXIT_OK if result.passed else EXIT_FAILED


def write_junit(result: Any, path: Path) -> None:
    """JUnit XML: one test suite, one test case per condition, a failure for each failed one."""
    import xml.etree.ElementTree as ET

    suite = _suite(len(result.conditions), failures=len(result.failed))
    for c in result.conditions:
        case = ET.SubElement(suite, "testcase", classname="agentproc.check", name=c.name)
        if not c.passed:
            failure = ET.SubElement(case, "failure", message=c.message, type="check")
            failure.text = c.message
        else:
            ET.SubElement(case, "system-out").text = c.message
    _write(suite, path)


ERROR_CASE = "input"
"""The one test case of the report of a check that could not run (bad input)."""


def write_junit_error(exc: Exception, path: Path) -> None:
    """JUnit XML for a check that could not run: one test case, :data:`ERROR_CASE`, with
    an ``error`` naming the problem (as pytest reports a collection error), so that no
    earlier build's report is read as this one's."""
    import xml.etree.ElementTree as ET

    suite = _suite(1, errors=1)
    case = ET.SubElement(suite, "testcase", classname="agentproc.check", name=ERROR_CASE)
    error = ET.SubElement(case, "error", message=str(exc), type=type(exc).__name__)
    error.text = str(exc)
    _write(suite, path)


def _suite(tests: int, failures: int = 0, errors: int = 0) -> Any:
    import xml.etree.ElementTree as ET

    return ET.Element(
        "testsuite",
        name="agentproc check",
        tests=str(tests),
        failures=str(failures),
        errors=str(errors),
    )


def _write(suite: Any, path: Path) -> None:
    import xml.etree.ElementTree as ET

    from agentproc.outputs import replacing

    root = ET.Element("testsuites")
    root.append(suite)
    with replacing(path) as tmp:
        ET.ElementTree(root).write(tmp, encoding="utf-8", xml_declaration=True)
