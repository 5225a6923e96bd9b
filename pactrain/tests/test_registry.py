"""Registry and payload accounting: the contracts every method and model relies on."""

import pytest

from pactrain.accounting import PayloadCounter
from pactrain.registry import Registry


def test_registry_returns_factory_and_lists_choices_on_unknown() -> None:
    registry: Registry[object] = Registry("method")

    @registry.register("dense")
    def make_dense() -> str:
        return "dense"

    assert registry.get("dense") is make_dense
    assert "dense" in registry and registry.names() == ["dense"]
    with pytest.raises(KeyError, match="unknown method 'nope'; choose one of: dense"):
        registry.get("nope")
    with pytest.raises(ValueError, match="already registered"):
        registry.register("dense")(make_dense)


def test_payload_counter_averages_over_completed_steps() -> None:
    counter = PayloadCounter()
    assert counter.bytes_per_step() == 0.0
    counter.add(100)
    counter.add(20, "all_gather")
    counter.end_step()
    counter.add(60)
    counter.end_step()
    assert counter.total_bytes == 180
    assert counter.bytes_per_step() == 90.0
    assert counter.by_collective == {"all_reduce": 160, "all_gather": 20}
    with pytest.raises(ValueError):
        counter.add(-1)
