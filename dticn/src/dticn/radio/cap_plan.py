"""Where beacons and the CAP go and how a node's CAP traffic is bounded (issue 16, item 2).

Two plans, one registry (:data:`CAP_PLANS`); a scenario names its plan (``cap_plan``):

* ``model`` (ours): beacons and the CAP on channel 0 of the 16-channel grid (865.1 MHz,
  sub-band h1.4, 1%); a node keeps the ETSI limit by staying silent for ``T/dc`` after each
  frame of airtime ``T`` (off-time rule); the CAP queue is bounded only by ``queue_limit``
  of ``dsme.toml``.
* ``dsme-lora``: beacons and the CAP on a channel of the 10% sub-band (h1.7, 869.40-869.65
  MHz; DSME-LoRa, Alamos et al., ACM TOSN 2022, arXiv 2206.14077, as summarised in issue 16
  and docs/dticn-facts.md), with the duty cycle kept as an hourly budget by every radio
  (ETSI EN 300 220-1 measures it over one hour); the CAP queue holds 8 frames and drops
  what overflows (RIOT pkg/opendsme/include/opendsme/opendsme.h,
  ``CONFIG_OPENDSME_CAP_QUEUE_SIZE`` default 8). The centre frequency 869.525 MHz is ours:
  the one 125 kHz channel centred in h1.7 (the paper's exact frequency is not in our notes).
  GTS stay on the 16-channel grid.
* ``dsme-lora-sim``: ``dsme-lora`` with the CSMA/CA settings of DSME-LoRa's own large-scale
  simulation (their Fig. 22): macMinBE 7, macMaxBE 8, macMaxCSMABackoffs 5 ("high BE",
  their Section 5.1 and 5.3; inetrg/dsme_lora e94c7e5, ``simulations/common.ini``),
  macMaxFrameRetries 3 (the default of that simulator's ``src/DSME.ned``), and the CAP
  timing of the openDSME it ran (inetrg/openDSME de04814, the dsme_lora submodule):
  ``CAPLayer`` channel access (one CCA, no backoff boundaries, ``random(0 .. 2^BE - 1) + 1``
  unit periods counted in usable CAP time and carried over: ``cap_access="opendsme"``),
  aTurnaroundTime 12 symbols of 1 ms (``dsme_phy_constants.h``; symbol 1 ms in their
  ``DSMEPlatform.cc``) and macAckWaitDuration 54 ms (``PIBHelper::getAckWaitDuration``:
  aUnitBackoffPeriod 20 + aTurnaroundTime 12 + phySHRDuration 10 + 6 x 2 symbols per octet).
  Used by ``dticn validate`` to measure what these settings change
  (docs/dticn-validation.md).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CapPlan:
    """Beacon/CAP channel, the nodes' duty-cycle rule and the CAP queue limit.

    Args:
        cap_channel_hz: centre of an extra channel for beacons and the CAP; None: channel 0.
        node_duty_rule: ``off-time`` (silent T/dc after each frame) or ``window`` (hourly
            budget), see :class:`~dticn.phy.dutycycle.DutyCycleTracker`.
        cap_queue_limit: frames a node's CAP queue holds (the one in transmission
            included); more are dropped and counted (``queue_drops``). None: no limit.
        csma: CSMA/CA settings that replace ``dsme.toml``'s (``min_be``, ``max_be``,
            ``max_backoffs``, ``max_frame_retries``, ``contention_window``,
            ``backoff_offset``); empty: the file's.
        mac: other MAC settings that replace the file's (``cap_access``, ``turnaround_s``,
            ``ack_wait_s``); empty: the file's.
    """

    name: str
    cap_channel_hz: float | None = None
    node_duty_rule: str = "off-time"
    cap_queue_limit: int | None = None
    csma: tuple[tuple[str, int], ...] = ()
    mac: tuple[tuple[str, float | str], ...] = ()


CAP_PLANS: dict[str, CapPlan] = {p.name: p for p in (
    CapPlan("model"),
    CapPlan("dsme-lora", cap_channel_hz=869.525e6, node_duty_rule="window", cap_queue_limit=8),
    CapPlan("dsme-lora-sim", cap_channel_hz=869.525e6, node_duty_rule="window",
            cap_queue_limit=8,
            csma=(("min_be", 7), ("max_be", 8), ("max_backoffs", 5), ("max_frame_retries", 3),
                  ("contention_window", 1), ("backoff_offset", 1)),
            mac=(("cap_access", "opendsme"), ("turnaround_s", 0.012), ("ack_wait_s", 0.054))),
)}


def get_cap_plan(name: str) -> CapPlan:
    try:
        return CAP_PLANS[name]
    except KeyError:
        raise ValueError(f"unknown CAP plan {name!r}; known: {', '.join(CAP_PLANS)}") from None
