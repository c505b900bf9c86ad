"""Merging shard files: in suite order, each file's lines in file order; a torn tail is
never taken; the run file is not touched unless the whole merge is written."""

from __future__ import annotations

import heapq
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentproc.errors import InputError
from agentproc.runs import RunWriter
from agentproc.runs.shards import (
    merge_shards,
    plan,
    shard_file,
    shard_files,
    shard_spec,
)

IDS = [f"s{i}" for i in range(6)]
ORDER = {sid: i for i, sid in enumerate(IDS)}


def rec_line(sid: str, trial: int = 0, verdict: str = "faithful", **extra: object) -> bytes:
    rec = {"scenario_id": sid, "agent": "sim:a", "trial": trial, "verdict": verdict, **extra}
    return (json.dumps(rec) + "\n").encode()


def files(folder: Path, n: int) -> list[Path]:
    return [folder / f"shard-{k}.jsonl" for k in range(1, n + 1)]


def reference(parts: list[bytes]) -> bytes:
    """The complete files merged as the merge has always done: each file's complete lines
    in file order, the files merged by (suite position, trial, line number), a tie to the
    earlier shard."""

    def keyed(k: int, data: bytes):
        lines = data.splitlines(keepends=True)
        for lineno, raw in enumerate(lines, start=1):
            if not raw.endswith(b"\n") or raw.isspace():
                continue
            rec = json.loads(raw)
            yield (ORDER.get(rec["scenario_id"], len(ORDER)), rec["trial"], lineno), raw

    return b"".join(
        raw
        for _, raw in heapq.merge(*(keyed(k, d) for k, d in enumerate(parts)), key=lambda t: t[0])
    )


line_st = st.builds(
    rec_line, st.sampled_from([*IDS, "elsewhere"]), st.integers(0, 2), st.sampled_from(["a", "b"])
)
shard_st = st.lists(st.one_of(line_st, st.just(b"\n")), max_size=12).map(b"".join)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(shards=st.lists(st.tuples(shard_st, st.booleans()), min_size=1, max_size=4))
def test_the_merge_is_the_suite_ordered_merge_of_the_complete_lines(tmp_path_factory, shards):
    """Shards with torn tails left by a killed worker, lines out of suite order, an
    episode twice: the run file holds the complete lines merged by (suite position, trial,
    line number), and the latest record of each episode is told."""
    folder = tmp_path_factory.mktemp("run.jsonl.shards")
    spans = plan(len(shards), fine=False)
    contents = [data + (b'{"scenario_id": "s1", "ag' if torn else b"") for data, torn in shards]
    for path, data in zip(shard_files(folder, spans), contents, strict=True):
        path.write_bytes(data)
    run = folder.parent / f"{folder.name}.jsonl"
    with RunWriter(run) as writer:
        n, latest = merge_shards(folder, spans, writer, ORDER)
    expected = reference(contents)
    assert run.read_bytes() == expected
    assert n == expected.count(b"\n")
    last = {}
    for raw in expected.splitlines():
        rec = json.loads(raw)
        last[(rec["scenario_id"], rec["trial"])] = rec["verdict"]
    assert {(k[0], k[4]): r["verdict"] for k, r in latest.items()} == last
    assert not folder.exists()


@pytest.mark.parametrize(
    ("line", "says"),
    [
        (b"{not json\n", "not valid JSON"),
        (b'{"agent": "sim:a"}\n', "not an episode record"),
        (b"[1, 2]\n", "not an episode record"),
    ],
)
def test_a_shard_line_that_does_not_read_names_its_file_and_line_and_leaves_the_run_file(
    tmp_path, line, says
):
    run = tmp_path / "run.jsonl"
    run.write_bytes(rec_line("s0"))
    folder = tmp_path / "run.jsonl.shards-2"
    folder.mkdir()
    a, b = shard_files(folder, plan(2, fine=False))
    a.write_bytes(rec_line("s0") + line)
    b.write_bytes(rec_line("s1"))
    with RunWriter(run, append=True) as writer, pytest.raises(InputError) as err:
        merge_shards(folder, plan(2, fine=False), writer, ORDER)
    assert str(a) in str(err.value) and "line 2" in str(err.value) and says in str(err.value)
    assert run.read_bytes() == rec_line("s0") and a.exists() and b.exists()


@pytest.mark.parametrize("workers", [1, 2, 3, 4, 8, 16])
def test_the_plan_spans_every_shard_once_largest_first(workers):
    spans = plan(workers)
    count = spans[0][2]
    assert count == 32 * workers and all(c == count for _, _, c in spans)
    covered = [k for first, last, _ in spans for k in range(first, last + 1)]
    assert covered == list(range(1, count + 1))  # every shard once, in order
    sizes = [last - first + 1 for first, last, _ in spans]
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] == 1
    assert sizes[0] == count // (2 * workers)  # the first spans go out at once, one each
    assert len(spans) <= 10 * workers  # few enough that a span's start costs little


def test_a_plan_not_fine_is_a_span_per_worker():
    assert plan(3, fine=False) == [(1, 1, 3), (2, 2, 3), (3, 3, 3)]


def test_a_span_is_named_as_the_shard_option_gives_it(tmp_path):
    assert shard_spec((3, 3, 64)) == "3/64" and shard_spec((1, 16, 64)) == "1-16/64"
    assert shard_file(tmp_path, (1, 16, 64)).name == "shard-1-16-of-64.jsonl"
    assert shard_file(tmp_path, (3, 3, 64)).name == "shard-3-of-64.jsonl"
