"""The LoRa edge behind one gateway (what both drivers run)."""

from __future__ import annotations

import json

from dticn.emulation.edge_scenario import EdgeScenario
from dticn.emulation.emulated_edge import Edge


def test_push_nodes_keep_producing_and_status_fits_one_packet() -> None:
    edge = Edge(EdgeScenario(scheme="push", nodes=3, seed=5))
    edge.start()
    edge.kernel.run(until=6000.0)
    status = edge.status()
    assert edge.all_registered and status["registered"] == ["/node1", "/node2", "/node3"]
    produced = status["produced"]
    assert produced["items"] == len(edge.log.items) > 3 * 80   # about one per minute each
    assert len(produced["recent"]) == 10
    assert status["scheme_counters"]["pushed"] >= produced["items"] - 3
    # no consumer registered /RNP: every pinned item was released after its lifetime
    assert status["temporary_state"]["pinned_items"] <= 3
    assert len(json.dumps(status)) < 4000                        # an NDN packet is 8800


def test_one_pending_item_per_push_node() -> None:
    edge = Edge(EdgeScenario(scheme="push", nodes=4, seed=1))
    scheduled: list[float] = []
    call_at = edge.kernel.call_at

    def counting_call_at(when, callback, *args, **kwargs):  # type: ignore[no-untyped-def]
        if getattr(callback, "__name__", "") == "produce":
            scheduled.append(when)
        return call_at(when, callback, *args, **kwargs)

    edge.kernel.call_at = counting_call_at  # type: ignore[method-assign]
    edge.start()
    assert len(scheduled) == 4                    # not 4 x 1000 entries up front
    edge.kernel.run(until=max(scheduled) + 1.0)
    assert len(scheduled) >= 8                    # each item scheduled the next


def test_custom_names_register() -> None:
    edge = Edge(EdgeScenario(scheme="rice", nodes=2, prefixes=("/garden", "/cellar")))
    edge.start()
    edge.kernel.run(until=60.0)
    assert edge.registered() == ["/cellar", "/garden"]
