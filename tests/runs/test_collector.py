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


def test_frozen_leaves_what_exists_out_of_collections_and_puts_it_back_after():
    assert gc.get_freeze_count() == 0
    before = object.__new__(type("Kept", (), {}))  # tracked, made before: frozen
    with collector.frozen():
        assert gc.get_freeze_count() > 0
        assert not any(o is before for g in range(3) for o in gc.get_objects(generation=g))
        with pytest.raises(RuntimeError), collector.frozen():
            raise RuntimeError("boom")
        assert gc.get_freeze_count() > 0  # an inner freeze leaves the outer one alone
    assert gc.get_freeze_count() == 0
    gc.freeze()  # frozen by someone else: left frozen
    try:
        with collector.frozen():
            pass
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_a_suite_runs_with_what_existed_before_it_frozen(tmp_path):
    from agentproc import Cell, generate_procedure, scenario_of
    from agentproc.agents.suite import sim_episodes
    from agentproc.runs import run_suite

    scenarios = [scenario_of(generate_procedure(Cell(steps=3, lookback=2), 0, i)) for i in range(3)]
    episode = sim_episodes("sim:oracle")
    frozen: list[int] = []

    async def watched(scenario, trial=0):
        frozen.append(gc.get_freeze_count())
        return await episode(scenario, trial)

    summary = run_suite(scenarios, "sim:oracle", watched, tmp_path / "r.jsonl")
    assert summary.verdicts == {"faithful": 3}
    assert len(frozen) == 3 and all(n > 0 for n in frozen)
    assert gc.get_freeze_count() == 0  # put back when the run ends
