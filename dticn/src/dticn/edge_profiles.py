"""Profiles: the artifact as it ran, and our own model, as data (issue 13).

A profile is every setting in which the published artifact (inetrg/ACM-ICN-LoRa-ICN-2022,
HEAD ed8dbb1; RIOT, CCN-lite, openDSME) and our model of a deployable DT-ICN edge differ.
Every result names the profile that produced it. ``artifact`` reproduces the artifact as it
ran; ``model`` is ours (ETSI duty cycle, first-fit schedule, NFD semantics, signed Data). A
profile with one field switched (:meth:`Profile.with_`) shows what that one difference
moves (``dticn reproduce --sensitivity``).

Sources of the ``artifact`` values (files of the artifact repository unless said otherwise):

* ``allocator="artifact"``: experiments/ccn_exp_template.sh lines 377-383, ``gts <node> 1 0 0 0``
  on the gateway (downlink: superframe 0, GTS 0, channel 0) and ``gts <gw> 1 0 1 0`` on the
  node (uplink: superframe 0, GTS 1, channel 0); GTS index = slot - 9 with
  ``CAP_REDUCTION=0`` (external_modules/makefiles/board.mk line 32), so slots 9 and 10.
* ``enforce_duty_cycle=False``: openDSME at the artifact's submodule commit 9fb3fcb
  (inetrg/openDSME, "changes for acm icn 2022") has no duty-cycle code (no match for
  "duty", "off time" or "ETSI" in the tree); the gateway's and the node's radios send
  whenever their slot comes.
* ``cap_rx=False``: the listen policy is a setting of ours (issue 13 item 3); openDSME's
  ``macRxOnWhenIdle`` defaults to false (mac_services/pib/MAC_PIB.h line 158 at 9fb3fcb),
  but CAP reception is a platform hook (``isRxEnabledOnCap``, MessageDispatcher.cc line 445)
  whose RIOT implementation is not public, so both profiles listen only in their slots and
  the lifetime is reported under both policies.
* ``hint_s=32.0``: external_modules/ccn-lite-helpers/include/ccn-lite-helpers.h lines 70-74,
  ``WAITTIME = PWRTWO(MO - SO) * SF_DURATION`` with ``SF_DURATION (8) // actually 7.68, but
  we are conservative``; sent as ``WAIT+32`` (ccn-lite-helpers.c line 395).
* ``static_routes=True``: experiments/ccn_exp_template.sh ``set_fibs_downlink`` (lines 95-104:
  ``ccnl_fib add /xid`` on every hop, the gateway's toward the node) in every experiment but
  push; only ``init_push_case`` sends ``reg`` (line 268).
* ``item_payload_bytes=4`` and ``item_empty_signature=True``: ccn-lite-helpers.c line 356-361
  (``char buffer[4]``, ``"%03d"`` and its NUL, ``sizeof(buffer)`` bytes of content) and
  CCN-lite's Data builder, which writes SignatureType DigestSha256 with an empty
  SignatureValue (cn-uofbasel/ccn-lite src/ccnl-pkt/src/ccnl-pkt-ndntlv.c, around line 590:
  the artifact's fork commit cb711b0 is not public, upstream shown). FreshnessPeriod is
  kept (our RICE consumers ask with MustBeFresh and the gateway serves them from its CS).
* ``reflexive_lifetime_s=4.0``: experiments/ccn_exp_template.sh ``init_push_case``,
  ``params 4 1000 4`` on the gateway, forwarder and consumer (lines 257-261): the ``/RNP``
  Interest and the state it leaves live 4 s.
* ``energy_profile="dsme-lora"``: the artifact ran RIOT and openDSME on SX1276 nodes, the
  platform whose per-event energy DSME-LoRa measured (Alamos et al., ACM TOSN 2022, arXiv
  2206.14077, Table 4; :mod:`dticn.energy.profiles`): its lifetimes are the measured
  platform's. ``model`` keeps ``optimised``, our datasheet model of the behaviour
  DSME-LoRa proposes but did not measure (issue 16).
* ``forward_retransmissions=False``: CCN-lite appends an Interest for a name with a live PIT
  entry to that entry and propagates only new entries (cn-uofbasel/ccn-lite
  src/ccnl-fwd/src/ccnl-fwd.c, ``ccnl_fwd_handleInterest``: ``propagate = 1`` only when no
  entry matched); ``USE_DUP_CHECK`` is not set in external_modules/makefiles/common.mk.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any


@dataclass(frozen=True)
class Profile:
    """Every setting in which the artifact and our model differ (see the module docstring).

    Args:
        name / description: registry key and one line for tables.
        allocator: GTS allocator (``first-fit``: ours, uplinks first; ``artifact``: each
            node's downlink GTS right before its uplink GTS in the same superframe).
        enforce_duty_cycle: ETSI EN 300 220 limits on the gateway's and the nodes' radios.
        cap_rx: the node listens through every CAP (its listen policy, shown in results).
        hint_s: RICE's static wait hint; None: one multisuperframe (30.72 s).
        static_routes: the gateway's FIB holds every node's prefix from the start; nodes
            register (``/reg``, in the CAP) only in push configurations.
        item_payload_bytes / item_empty_signature: the node's item Data (content bytes;
            DigestSha256 with an empty SignatureValue instead of the 32-byte digest).
        reflexive_lifetime_s: lifetime of ``/RNP`` Interests and the reflexive state.
        forward_retransmissions: a downstream retransmission onto a live PIT entry goes
            upstream again (NFD); False: it is only appended to the entry (CCN-lite).
        energy_profile: how the node's activity becomes energy (``optimised``: ours;
            ``dsme-lora``: DSME-LoRa's measurements), see :mod:`dticn.energy.profiles`.
    """

    name: str
    description: str
    allocator: str = "first-fit"
    enforce_duty_cycle: bool = True
    cap_rx: bool = False
    hint_s: float | None = None
    static_routes: bool = False
    item_payload_bytes: int = 8
    item_empty_signature: bool = False
    reflexive_lifetime_s: float = 10.0
    forward_retransmissions: bool = True
    energy_profile: str = "optimised"

    def with_(self, **changes: Any) -> Profile:
        """A copy with ``changes`` (unknown fields raise)."""
        return replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def differences(self, other: Profile) -> list[str]:
        """Field names whose values differ from ``other``'s (name and description aside)."""
        return [f.name for f in fields(self) if f.name not in ("name", "description")
                and getattr(self, f.name) != getattr(other, f.name)]


MODEL = Profile(
    name="model", description="our model: ETSI duty cycle, first-fit GTS, NFD retransmission "
    "forwarding, registration, signed 8-byte items, one-multisuperframe hint")
ARTIFACT = Profile(
    name="artifact", description="the artifact as it ran: its GTS placement, no duty cycle, "
    "CCN-lite PIT aggregation, WAIT+32, static FIB, 4-byte items, /RNP 4 s, measured energy",
    allocator="artifact", enforce_duty_cycle=False, hint_s=32.0, static_routes=True,
    item_payload_bytes=4, item_empty_signature=True, reflexive_lifetime_s=4.0,
    forward_retransmissions=False, energy_profile="dsme-lora")
PROFILES: dict[str, Profile] = {p.name: p for p in (MODEL, ARTIFACT)}


def get_profile(name: str | Profile) -> Profile:
    """The profile called ``name`` (a Profile passes through); the error lists the known."""
    if isinstance(name, Profile):
        return name
    try:
        return PROFILES[name]
    except KeyError:
        raise KeyError(f"unknown profile {name!r}; known: {', '.join(PROFILES)}") from None
