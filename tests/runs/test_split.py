"""Shards by scenario id: ``i/n`` and spans ``i-j/n``, the same cut on any machine."""

from __future__ import annotations

import pytest

from agentproc.errors import ConfigError
from agentproc.runs.split import in_shard, parse_shard, shard_spec

IDS = [f"n5-L1-r0_1-mixed-decimal-{i:04d}" for i in range(400)]


@pytest.mark.parametrize(
    ("text", "shard"), [("2/4", (2, 2, 4)), ("1-3/8", (1, 3, 8)), ("4-4/4", (4, 4, 4))]
)
def test_a_shard_or_a_span_of_shards_reads_as_first_last_count(text, shard):
    assert parse_shard(text) == shard
    assert parse_shard(shard_spec(shard)) == shard


@pytest.mark.parametrize(
    "text", ["", "3/2", "0/2", "2-1/4", "0-1/4", "1-5/4", "1-/4", "a-b/4", "1/2/3"]
)
def test_a_shard_that_does_not_read_is_refused_naming_it(text):
    with pytest.raises(ConfigError, match="--shard"):
        parse_shard(text)


def test_the_shards_of_n_cut_the_ids_once_each_and_a_span_is_their_union():
    owners = [[k for k in range(1, 9) if in_shard(i, (k, 8))] for i in IDS]
    assert all(len(o) == 1 for o in owners)  # each id in exactly one shard
    assert len({o[0] for o in owners}) == 8  # and every shard gets some
    for i, (k,) in zip(IDS, owners, strict=True):
        assert in_shard(i, (k, k, 8)) and in_shard(i, (1, 8, 8))
        assert in_shard(i, (3, 5, 8)) == (3 <= k <= 5)
    assert in_shard(IDS[0], None)
