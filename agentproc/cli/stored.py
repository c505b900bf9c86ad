"""The commands over stored runs: ``replay``, ``relabel`` and ``report`` (terminal,
JSON or HTML). None executes an agent; each reads a run with the cyclic collector
paused (:mod:`agentproc.runs.collector`)."""

from __future__ import annotations

import argparse
import itertools
from typing import Any

from rich.console import Console
from rich.table import Table

from agentproc.cli.output import EXIT_FAILED, EXIT_OK, print_json, say
from agentproc.errors import ConfigError, InputError, counted
from agentproc.outputs import check_output, input_files
from agentproc.runs import (
    ReadReport,
    ScenarioStore,
    collector,
    latest_records,
    scenario_of_record,
)


def replay_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.otel or args.messages or args.scenario:
        return _replay_given(args, out, err)
    if args.mode is not None or args.variant is not None:
        raise ConfigError(
            "replay --mode and --variant are for --messages: a run file records its own"
        )
    if args.run is None:
        raise ConfigError("replay needs a run file, or --scenario and --messages")
    with collector.paused():  # what the replay kept is freed on return, before it resumes
        return _replay_run(args, out, err)


def _replay_given(args: argparse.Namespace, out: Console, err: Console) -> int:
    """``replay --scenario S.json`` with ``--messages M.json`` (one conversation) or
    ``--otel TRACE.json`` (every trace in it): replayed and shown."""
    from agentproc.analysis import replay_messages
    from agentproc.analysis.render.timeline import render_timeline
    from agentproc.integrations.imported import replay_traces
    from agentproc.integrations.otel_traces import read_traces
    from agentproc.jsonio import read_json
    from agentproc.workflow import load_scenario

    if args.otel and (not args.scenario or args.run or args.messages):
        raise ConfigError(
            "replay --otel TRACE.json takes --scenario S.json (and no run file or --messages)"
        )
    if not args.otel and (not (args.messages and args.scenario) or args.run):
        raise ConfigError(
            "replay takes either RUN.jsonl, or --scenario S.json with --messages M.json"
        )
    if args.otel and (args.mode is not None or args.variant is not None):
        raise ConfigError("replay --mode and --variant are for --messages, not --otel")
    variant = _replay_variant(args)
    scenario = load_scenario(args.scenario)
    if args.otel:
        traces = read_traces(args.otel)
        results = replay_traces(
            scenario,
            traces,
            args.otel,
            args.guard,
            args.order or "listed",
            note=lambda line: say(err, f"agentproc: {line}"),
        )
    else:
        calls = read_json(args.messages)
        results = [
            replay_messages(
                scenario,
                calls,
                args.messages,
                args.guard,
                args.order or "listed",
                mode=args.mode or "tools",
                variant=variant,
            )
        ]
    for result in results:
        if args.json:
            print_json(out, result.to_json())
        else:
            render_timeline(result, out)
    return EXIT_FAILED if any(r.differences for r in results) else EXIT_OK


def _replay_variant(args: argparse.Namespace) -> Any:
    """The variant ``--messages`` is replayed under (``None``: the default); text mode
    has no tools to vary, so it takes none that changes them."""
    if args.variant is None:
        return None
    from agentproc.workflow.variant import load_variant

    variant = load_variant(args.variant)
    if args.mode == "text" and not variant.is_default:
        raise ConfigError(
            f"replay --mode text takes no --variant ({variant.name!r} changes the tools, "
            "and text mode has none)"
        )
    return None if variant.is_default else variant


def _replay_run(args: argparse.Namespace, out: Console, err: Console) -> int:
    from agentproc.analysis import replay_record
    from agentproc.analysis.render.console_fit import print_table
    from agentproc.analysis.render.timeline import render_timeline

    report = ReadReport()
    found = differ = 0
    summary = Table("episode", "agent", "verdict", "labels", "differences")
    store = ScenarioStore(args.suite)
    for n, (_, lineno, rec) in enumerate(latest_records([args.run], [report]), start=1):
        collector.now_and_then(n)
        if args.episode is not None and rec["scenario_id"] != args.episode:
            continue
        scenario = scenario_of_record(args.run, lineno, rec, store)
        result = replay_record(rec, scenario, f"{args.run}: line {lineno}", args.run, args.order)
        found += 1
        differ += bool(result.differences)
        if args.json:
            print_json(out, result.to_json())
        elif args.episode is not None:
            render_timeline(result, out)
        else:
            summary.add_row(
                scenario.id,
                result.agent,
                result.metrics["verdict"],
                str(len(result.labels)),
                str(len(result.differences)),
            )
    say(err, *report.warnings)
    if args.episode is not None and not found:
        raise InputError(args.run, f"no episode with scenario id {args.episode!r}", "scenario_id")
    if not args.json and args.episode is None:
        print_table(out, summary)
        differ_ = "differs" if differ == 1 else "differ"
        out.print(
            f"{counted(found, 'episode')} replayed; {differ} {differ_} from the recording",
            highlight=False,
        )
    return EXIT_FAILED if differ else EXIT_OK


def relabel_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    from agentproc.analysis import relabel_run

    if args.out is not None:
        inputs = [args.run, *([] if args.suite is None else input_files(args.suite))]
        check_output(args.out, inputs=inputs, overwrite=args.overwrite)
    result = relabel_run(args.run, args.out, args.suite, args.order)
    say(err, *result.warnings)
    where = f"; wrote {args.out}" if args.out is not None else ""
    out.print(
        f"relabelled {counted(result.episodes, 'episode')}: {result.changed_episodes} changed, "
        f"labels {result.labels_before} -> {result.labels_after} "
        f"({result.added} new, {result.removed} gone), "
        f"{result.verdicts_changed} verdicts changed{where}",
        highlight=False,
    )
    return EXIT_OK


def report_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    from agentproc.analysis import aggregate, report_json
    from agentproc.analysis.measures.report import KNOBS
    from agentproc.analysis.measures.step_names import WorkflowNames
    from agentproc.analysis.render.report_text import render_report
    from agentproc.runs.runfile import latest_lines

    by = args.by  # None: the knobs the suite varies (none on a workflow suite)
    for knob in by or ():
        if knob not in KNOBS:
            raise ConfigError(f"--by: unknown knob {knob!r} (expected one of: {', '.join(KNOBS)})")
    if by is not None and not by:
        raise ConfigError(f"--by needs at least one of: {', '.join(KNOBS)}")
    _check_report_outputs(args)
    if args.html is not None:
        _html_report(args, out, err)
        if not args.json and args.csv is None and args.parquet is None:
            return EXIT_OK
    reports = [ReadReport() for _ in args.runs]
    steps = WorkflowNames()  # a declared workflow's step names, read once per workflow
    records = steps.passing(latest_lines(args.runs, reports, view="head"))
    if args.csv is not None or args.parquet is not None:
        from agentproc.analysis.render.tables import Format, write_tables

        tables: list[tuple[Any, Format]] = [(args.csv, "csv"), (args.parquet, "parquet")]
        tables = [(d, f) for d, f in tables if d is not None]

        report = write_tables(
            records, tables, on_written=lambda p: err.print(f"wrote {p}", markup=False), steps=steps
        )
    else:
        report = aggregate(records, steps)
    for rr in reports:
        say(err, *rr.warnings)
    say(err, *steps.warnings())
    say(err, *report.notes)
    if report.errored:
        say(
            err,
            f"warning: {counted(report.errored, 'episode')} errored (endpoint, context or harness "
            "failures) and count in no figure; see the per-agent lines",
        )
    if args.json:
        print_json(out, report_json(report, args.price))
    else:
        render_report(report, out, by, args.price)
    return EXIT_OK


def _check_report_outputs(args: argparse.Namespace) -> None:
    """Every file ``report`` writes passes the output rule, before any run is read."""
    from agentproc.analysis.render.tables import Format, table_files

    if args.html is not None:
        check_output(args.html, inputs=args.runs, overwrite=args.overwrite, option="--html")
    tables: list[tuple[str, Any, Format]] = [
        ("--csv", args.csv, "csv"),
        ("--parquet", args.parquet, "parquet"),
    ]
    for option, folder, fmt in tables:
        if folder is None:
            continue
        check_output(folder, option=option, folder=True)
        for path in table_files(folder, fmt):
            check_output(path, inputs=args.runs, overwrite=args.overwrite, option=option)
    given = {"--html": args.html, "--csv": args.csv, "--parquet": args.parquet}
    named = [(o, p.resolve()) for o, p in given.items() if p is not None]
    for (a, pa), (b, pb) in itertools.permutations(named, 2):
        if (pa == pb or pa in pb.parents) and not {a, b} == {"--csv", "--parquet"}:
            raise ConfigError(f"{a} and {b} name the same place ({pa}): give each its own")
    if args.parquet is not None:  # without pyarrow, before any table is written
        from agentproc.analysis.render.tables import check_parquet

        check_parquet()


def _html_report(args: argparse.Namespace, out: Console, err: Console) -> None:
    from agentproc.analysis.html import write_html_report

    with collector.paused():
        result = write_html_report(args.runs, args.html, price=args.price)
    say(err, *result.warnings)
    say(
        err if args.json else out,
        f"wrote {args.html}: {counted(result.episodes, 'episode')}, "
        f"drill-down embedded for {result.detailed}",
    )
