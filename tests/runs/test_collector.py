"""Reading a run with the cyclic collector paused: off inside, as it was after."""

from __future__ import annotations

import gc

import pytest

from agentproc.runs import collector


@pytest.mark.parametrize("enabled", [True, False])
def test_paused_turns_the_collector_off_and_restores_it_even_after_a_failure(enabled: bool):
    (gc.enable if enabled else gc.disable)()
    try:
        with collector.paused():
            assert not gc.isenabled()
        assert gc.isenabled() is enabled
        with pytest.raises(RuntimeError), collector.paused():
            raise RuntimeError("boom")
        assert gc.isenabled() is enabled
    finally:
        gc.enable()


def test_now_and_then_collects_every_nth_record_only_while_paused(
    monkeypatch: pytest.MonkeyPatch,
):
    calls: list[int] = []
    monkeypatch.setattr(collector, "COLLECT_EVERY", 3)
    monkeypatch.setattr(collector.gc, "collect", lambda *a: calls.append(1) or 0)
    with collector.paused():
        for n in range(1, 10):
            collector.now_and_then(n)
    assert len(calls) == 3  # records 3, 6, 9
    for n in range(1, 10):
        collector.now_and_then(n)  # the collector runs by itself: nothing to add
    assert len(calls) == 3
