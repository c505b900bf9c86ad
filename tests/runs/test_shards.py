"""Merging shard files: the merge made while workers still write gives, line for line,
what merging the complete files gives; a line being written is never taken; the run file
is not touched until the merge is installed."""

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
    MERGING,
    ShardMerge,
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
@given(
    shards=st.lists(st.tuples(shard_st, st.booleans()), min_size=1, max_size=4),
    cuts=st.lists(st.integers(0, 150), max_size=30),
    ends=st.lists(st.integers(0, 3), max_size=30),
)
def test_the_merge_made_as_files_grow_is_the_merge_of_the_complete_files(
    tmp_path_factory, shards, cuts, ends
):
    """Shards written a piece at a time (mid-line too, torn tails left by a killed worker,
    lines out of suite order, an episode twice), merged at every step, with workers
    ending in any order: the result is the merge of the complete files."""
    folder = tmp_path_factory.mktemp("shards")
    contents = [data + (b'{"scenario_id": "s1", "ag' if torn else b"") for data, torn in shards]
    paths = files(folder, len(contents))
    written = [0] * len(contents)
    merge = ShardMerge(folder, paths, ORDER)
    finished: set[int] = set()
    for step, cut in enumerate(cuts):
        k = step % len(contents)
        if k in finished:
            continue
        upto = min(len(contents[k]), written[k] + cut)
        with open(paths[k], "ab") as fh:
            fh.write(contents[k][written[k] : upto])
        written[k] = upto
        ended = ends[step] if step < len(ends) else len(contents)
        if ended < len(contents) and written[ended] == len(contents[ended]):
            finished.add(ended)  # a worker ends once its whole file is written
        merge.advance(finished)
    for k, data in enumerate(contents):  # every worker ends
        with open(paths[k], "ab") as fh:
            fh.write(data[written[k] :])
    assert merge.advance(range(len(contents)))
    run = folder.parent / f"{folder.name}.jsonl"
    with RunWriter(run) as writer:
        n = merge.install(writer)
    expected = reference(contents)
    assert run.read_bytes() == expected
    assert n == expected.count(b"\n")
    last = {}
    for raw in expected.splitlines():
        rec = json.loads(raw)
        last[(rec["scenario_id"], rec["trial"])] = rec["verdict"]
    assert {(k[0], k[4]): r["verdict"] for k, r in merge.latest.items()} == last
    assert not folder.exists()


def test_a_shard_still_running_holds_back_whatever_its_next_line_could_precede(tmp_path):
    a, b = files(tmp_path, 2)
    a.write_bytes(rec_line("s0") + rec_line("s2") + rec_line("s4"))
    b.write_bytes(rec_line("s1"))
    merge = ShardMerge(tmp_path, [a, b], ORDER)
    assert merge.advance({0}) is False  # b's next line, not written yet, may go before s2

    def merged() -> bytes:
        merge.out.flush()
        return (tmp_path / MERGING).read_bytes()

    assert merged() == rec_line("s0") + rec_line("s1")
    with open(b, "ab") as fh:
        fh.write(rec_line("s3") + b'{"scenario_id": "s5"')  # s5 is being written
    assert merge.advance({0}) is False
    assert merged() == b"".join(rec_line(s) for s in ["s0", "s1", "s2", "s3"])
    with open(b, "ab") as fh:
        fh.write(b', "agent": "sim:a", "trial": 0, "verdict": "wrong"}\n')
    assert merge.advance({0, 1}) is True
    assert merged() == b"".join(rec_line(s) for s in ["s0", "s1", "s2", "s3", "s4"]) + (
        rec_line("s5", verdict="wrong")
    )
    assert merge.written == 6
    assert merge.latest[("s5", "sim:a", "tools", "default", 0)]["verdict"] == "wrong"


def test_the_run_file_is_untouched_until_the_merge_is_installed(tmp_path):
    run = tmp_path / "run.jsonl"
    run.write_bytes(rec_line("s0") + rec_line("s1"))
    folder = tmp_path / "run.jsonl.shards-2"
    folder.mkdir()
    a, b, *_ = shard_files(folder, plan(2))  # the files of a run over two workers
    a.write_bytes(rec_line("s0") + rec_line("s2"))
    b.write_bytes(rec_line("s1"))
    with RunWriter(run, append=True) as writer:
        merge = ShardMerge(folder, [a, b], ORDER)
        merge.advance({0})
        merge.close()  # a worker failed: the run stops here
        assert run.read_bytes() == rec_line("s0") + rec_line("s1")
        assert a.exists() and b.exists()
        assert merge_shards(folder, plan(2), writer, ORDER) == 3
    assert run.read_bytes() == rec_line("s0") + rec_line("s1") + rec_line("s2")
    assert not folder.exists()


@pytest.mark.parametrize(
    ("line", "says"),
    [
        (b"{not json\n", "not valid JSON"),
        (b'{"agent": "sim:a"}\n', "not an episode record"),
        (b"[1, 2]\n", "not an episode record"),
    ],
)
def test_a_shard_line_that_does_not_read_names_its_file_and_line(tmp_path, line, says):
    a, b = files(tmp_path, 2)
    a.write_bytes(rec_line("s0") + line)
    b.write_bytes(b"")
    merge = ShardMerge(tmp_path, [a, b], ORDER)
    with pytest.raises(InputError) as err:
        merge.advance({0, 1})
    assert str(a) in str(err.value) and "line 2" in str(err.value) and says in str(err.value)


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
