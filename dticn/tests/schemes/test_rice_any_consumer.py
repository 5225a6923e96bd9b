"""RICE in the simulator with consumers that are not RICE-aware (issue 13, item 2): without
MustBeFresh, with CanBePrefix, polling every second instead of following the hint. Each
item is delivered and costs exactly one LoRa Interest; no hint ever reaches the gateway's
own request and nothing the node sent is dropped as unsolicited."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dticn.experiments.params import Experiment
from dticn.experiments.world import World
from dticn.packets import Data, Interest
from dticn.packets.name import Name
from dticn.schemes import get
from dticn.schemes.base import ConsumerHost
from dticn.schemes.rice import RiceConsumer
from dticn.schemes.signalling import read_wait_hint


def consumer(mbf: bool, cbp: bool, poll_s: float | None) -> type[RiceConsumer]:
    class Consumer(RiceConsumer):
        must_be_fresh = mbf

        def interest(self, host: ConsumerHost, name: Name) -> Interest:
            return Interest(name, must_be_fresh=mbf, can_be_prefix=cbp,
                            lifetime_ms=host.lifetime_ms)

        def on_data(self, host: ConsumerHost, data: Data, started: float) -> None:
            if poll_s is not None and read_wait_hint(data) is not None:
                host.kernel.call_later(poll_s, host.ask, data.name, started)
                return
            super().on_data(host, data, started)

    return Consumer


@pytest.mark.parametrize(("mbf", "cbp", "poll_s"), [
    (False, False, None), (True, False, None), (False, True, None), (True, True, None),
    (False, False, 1.0), (True, False, 1.0),
])
@pytest.mark.parametrize("config", ["rice", "rice-schedule"])
def test_each_item_delivered_for_one_lora_interest(config: str, mbf: bool, cbp: bool,
                                                   poll_s: float | None) -> None:
    cfg = replace(get(config), consumer_behaviour=consumer(mbf, cbp, poll_s))
    world = World(Experiment(config=config, seed=3, duration_s=600.0), cfg)
    world.run()
    items = list(world.log.items.values())
    assert items and all(it.outcome == "delivered" for it in items), items
    assert world.counter.total(link="lora", direction="down", kind="interest") == len(items)
    assert world.scheme.signals_for_own_request == 0          # type: ignore[attr-defined]
    assert "unsolicited_data" not in world.gateway_fw.counters.drops
