"""Message sequences of one item through real forwarders, links and the DSME MAC.

Each test builds the artifact world (consumer, forwarder, gateway, one LoRa node), lets the
node register, runs exactly one transaction and counts, per link and direction, what
crossed the wire (the link observers), then checks that all temporary state expired.
"""

from __future__ import annotations

import pytest

from dticn.experiments.params import Experiment
from dticn.experiments.world import World, item_name, node_prefix
from dticn.packets import name_from_str
from dticn.schemes.signalling import RPT_PREFIX

START = 100.0


def one_item(config: str, *, until: float = 400.0) -> World:
    """A world with no scheduled traffic but one transaction at ``START``."""
    world = World(Experiment(config=config, duration_s=1e-3, warmup_s=START, tail_s=until))
    world.schedule()
    world.run(until=START - 1)
    assert world.nodes[1].registered_at is not None, "node did not register in the warm-up"
    name = item_name(node_prefix(1), 0)
    if world.config.pushes:
        world.kernel.call_at(START, world.nodes[1].push, name)
    else:
        world.kernel.call_at(START, world.consumer.request, name)
    world.run(until=until)
    return world


def counts(world: World) -> dict[str, int]:
    """Counts without the registration (one LoRa Interest up in the CAP, one ACK down)."""
    out = dict(world.counter.as_dict())
    out["lora:up:interest"] -= 1
    out["lora:down:data"] -= 1
    return {k: v for k, v in out.items() if v}


def outcome(world: World) -> str | None:
    [item] = world.log.items.values()
    return item.outcome


def test_registration_goes_in_the_cap_and_installs_the_route() -> None:
    world = World(Experiment(config="push", duration_s=1e-3, warmup_s=60.0))
    world.run(until=60.0)
    assert world.counter.as_dict() == {"lora:up:interest": 1, "lora:down:data": 1}
    assert world.scheme.registrations == 1
    assert world.gateway_fw.fib.find_exact(node_prefix(1)) is not None
    assert world.mac.frames == 2                  # one CAP frame up, one downlink GTS frame


@pytest.mark.parametrize("config", ["push", "push-draft"])
def test_push_one_lora_frame_no_lora_interest_and_state_expires(config: str) -> None:
    world = one_item(config)
    assert outcome(world) == "delivered"
    assert counts(world) == {
        "lora:up:data": 1,                                   # the pushed item, nothing else
        "forwarder-gateway:to_consumer:interest": 1,         # /RNP toward the consumer
        "consumer-forwarder:to_consumer:interest": 1,
        "consumer-forwarder:to_gateway:interest": 1,         # reflexive fetch
        "forwarder-gateway:to_gateway:interest": 1,
        "forwarder-gateway:to_consumer:data": 1,             # the wrapped item
        "consumer-forwarder:to_consumer:data": 1,
        "consumer-forwarder:to_gateway:data": 1,             # the final ACK
        "forwarder-gateway:to_gateway:data": 1,
    }
    assert world.scheme.acked == 1
    assert {k: v for k, v in world.temporary_state().items() if v} == {}
    assert not world.gateway_fw.cs._pinned               # the wrapped item was released


@pytest.mark.parametrize("config", ["push", "push-draft"])
def test_push_without_the_final_ack_still_expires(config: str) -> None:
    world = World(Experiment(config=config, duration_s=1e-3, warmup_s=START))
    world.consumer.endpoint.put = lambda data: None          # the consumer never ACKs
    world.schedule()
    world.run(until=START - 1)
    world.kernel.call_at(START, world.nodes[1].push, item_name(node_prefix(1), 0))
    world.run(until=START + 60)
    assert world.log.items[item_name(node_prefix(1), 0)].outcome == "delivered"
    assert world.scheme.acked == 0
    world.run(until=START + 200)                              # past every lifetime (64 s max)
    assert {k: v for k, v in world.temporary_state().items() if v} == {}
    assert not world.gateway_fw.cs._pinned


def test_push_artifact_uses_temporary_fib_routes_that_expire() -> None:
    world = World(Experiment(config="push", duration_s=1e-3, warmup_s=START))
    world.schedule()
    world.run(until=START - 1)
    world.kernel.call_at(START, world.nodes[1].push, item_name(node_prefix(1), 0))
    rpt = RPT_PREFIX + name_from_str("/gw")
    while not world.log.items or world.log.items[item_name(node_prefix(1), 0)].outcome is None:
        assert world.kernel.step()
    assert world.middle_fw.fib.find_exact(rpt) is not None   # reverse route while it lives
    world.run(until=START + 60 + world.context.reflexive_lifetime_s)
    assert world.middle_fw.fib.find_exact(rpt) is None
    assert world.consumer_fw.fib.find_exact(rpt) is None


def test_push_draft_changes_no_fib() -> None:
    before = World(Experiment(config="push-draft", duration_s=1e-3, warmup_s=START))
    sizes = {role: len(fw.fib) for role, fw in before.forwarders.items()}
    world = one_item("push-draft")
    assert {role: len(fw.fib) for role, fw in world.forwarders.items()} == {
        **sizes, "gateway": sizes["gateway"] + 1}              # + the registered node route
    assert world.middle_fw.counters.drops["reflexive_without_state"] == 0


@pytest.mark.parametrize("config", ["rice", "rice-schedule"])
def test_rice_one_lora_interest_one_data_two_consumer_interests(config: str) -> None:
    world = one_item(config)
    assert outcome(world) == "delivered"
    c = counts(world)
    assert c["lora:down:interest"] == 1 and c["lora:up:data"] == 1
    asks = c["consumer-forwarder:to_gateway:interest"]
    assert asks == (2 if config == "rice-schedule" else world.log.items[
        item_name(node_prefix(1), 0)].attempts) >= 2             # ask, then ask after hint
    assert c == {
        "lora:down:interest": 1, "lora:up:data": 1,
        "consumer-forwarder:to_gateway:interest": asks,
        "forwarder-gateway:to_gateway:interest": asks,
        "consumer-forwarder:to_consumer:data": asks,            # hints, then the content
        "forwarder-gateway:to_consumer:data": asks,
    }
    assert {k: v for k, v in world.temporary_state().items() if v} == {}


def test_rice_schedule_hint_is_exact_enough_for_two_interests() -> None:
    world = one_item("rice-schedule")
    [item] = world.log.items.values()
    assert item.attempts == 2
    assert world.scheme.hints == 1


def test_rice_unregistered_node_gets_a_nack_data() -> None:
    world = World(Experiment(config="rice", duration_s=1e-3, warmup_s=START))
    world.schedule()
    world.run(until=START)
    name = name_from_str("/nobody/1")
    world.consumer_fw.add_route(name[:1], world.links[0].a.face_id)
    world.middle_fw.add_route(name[:1], world.links[1].a.face_id)
    world.consumer.request(name)
    world.run(until=START + 10)
    assert world.log.items[name].outcome == "nack"
    assert world.scheme.nacks == 1
    assert world.counter.total(link="lora") == 2                # the registration only


def test_polling_v1_times_out_but_still_costs_lora_frames() -> None:
    world = one_item("v1-cr")
    assert outcome(world) == "timeout"
    c = counts(world)
    assert c["lora:down:interest"] == 1 and c["lora:up:data"] == 1
    assert c["consumer-forwarder:to_gateway:interest"] == 4   # 4/1000/4: sent + retx, 4 s


def test_polling_v3_cr_delivers_through_the_lora_round_trip() -> None:
    world = one_item("v3-cr")
    assert outcome(world) == "delivered"
    [item] = world.log.items.values()
    latency = item.done - item.started
    c = counts(world)
    assert c["consumer-forwarder:to_gateway:interest"] == 1 + int(latency // 15.0)
    assert c["lora:up:data"] == c["lora:down:interest"] >= 1
    assert {k: v for k, v in world.temporary_state().items() if v} == {}


def test_polling_inr_retransmits_in_the_network_cr_does_not() -> None:
    inr, cr = one_item("v2-inr"), one_item("v2-cr")
    assert (inr.counter.total(link="forwarder-gateway", kind="interest")
            > cr.counter.total(link="forwarder-gateway", kind="interest"))
    assert inr.middle_fw.counters.retransmissions > 0 == cr.middle_fw.counters.retransmissions


@pytest.mark.parametrize("config", ["rice-schedule", "push-draft"])
def test_delay_tolerant_schemes_ride_out_internet_loss(config: str) -> None:
    world = World(Experiment(config=config, loss=0.2, duration_s=900.0, warmup_s=90.0, seed=2))
    world.run()
    outcomes = {i.outcome for i in world.log.items.values()}
    assert world.links[0].lost + world.links[1].lost > 0
    assert outcomes == {"delivered"}
