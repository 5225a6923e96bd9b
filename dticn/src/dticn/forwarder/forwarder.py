"""The sans-IO NDN forwarder: tables, pipelines, strategies, hooks.

Shape follows NFD: the forwarder owns the face table, FIB, PIT, CS, dead nonce list and
strategy choice; each pipeline is one named method, a straight sequence of steps; every
drop goes through ``counters.drop(reason)``. No sockets and no clock of its own: bytes
come in through :meth:`Forwarder.receive` (faces call it), go out through
``face.send``, and time and timers come from the injected :class:`dticn.clock.Clock`
(the EventKernel in simulation, :class:`dticn.net.asyncio_clock.AsyncioClock` in real time).
Randomness (nonces) comes from an injected ``random.Random``.

Pipelines: receive -> on_incoming_interest -> (on_interest_loop | on_content_store_hit |
on_content_store_miss -> hooks / strategy -> on_outgoing_interest) ; receive ->
on_incoming_data -> (on_data_unsolicited | satisfy -> on_outgoing_data) ; receive ->
on_incoming_nack -> strategy -> on_outgoing_nack ; timers: on_interest_expiry,
on_retransmission_timer.
"""

from __future__ import annotations

import itertools
import logging
import random

from dticn.clock import Clock
from dticn.forwarder.counters import ForwarderCounters
from dticn.forwarder.cs import ContentStore
from dticn.forwarder.dead_nonce import DeadNonceList
from dticn.forwarder.errors import InternalErrorLog
from dticn.forwarder.face import (
    KIND_DATA,
    KIND_INTEREST,
    KIND_NACK,
    Face,
    FaceScope,
    LinkType,
    Tap,
)
from dticn.forwarder.fib import Fib
from dticn.forwarder.hooks import ForwarderHooks, UnsolicitedDataVerdict
from dticn.forwarder.name_table import NameTable
from dticn.forwarder.pit import InRecord, OutRecord, Pit, PitEntry
from dticn.forwarder.retx import RetxTable
from dticn.forwarder.settings import ForwarderConfig
from dticn.forwarder.strategy import Strategy, StrategyRegistry, default_strategy_registry
from dticn.packets import (
    Data,
    DecodeError,
    Interest,
    LpPacket,
    NackReason,
    NameTooLong,
    encode_nack,
    name_to_str,
)
from dticn.packets.decode import decode_packet
from dticn.packets.lp import LpPacket as _Lp
from dticn.packets.name import Name, name_from_str

log = logging.getLogger(__name__)

LOCALHOST: Name = name_from_str("/localhost")
_LOCALHOST_COMPONENT = LOCALHOST[0]
FIRST_FACE_ID = 256
"""Face ids below this are reserved for internal faces (NFD convention)."""


class Forwarder:
    """An NDN forwarder core. See the module docstring for the pipelines."""

    def __init__(
        self,
        clock: Clock,
        config: ForwarderConfig | None = None,
        *,
        rng: random.Random | None = None,
        hooks: ForwarderHooks | None = None,
        strategies: StrategyRegistry | None = None,
    ) -> None:
        self.clock = clock
        self.config = config or ForwarderConfig()
        self.rng = rng or random.Random(0)
        self.hooks = hooks or ForwarderHooks()
        self.strategies = strategies or default_strategy_registry()
        self.faces: dict[int, Face] = {}
        self.fib = Fib(self.config.fib_capacity)
        self.pit = Pit(self.config.pit_capacity)
        self.counters = ForwarderCounters()
        self.cs = ContentStore(
            self.config.cs_capacity, self.config.cs_pinned_capacity,
            self.config.cs_face_quota(), evictions=self.counters.cs_evictions,
        )
        self.dead_nonces = DeadNonceList(self.config.dead_nonce_lifetime)
        self.retx = RetxTable(self.config.default_retx)
        self.internal_errors = InternalErrorLog(clock.now)
        """Where faces report a packet whose processing raised (rate-limited log)."""
        self._strategy_choice: NameTable[Strategy] = NameTable()
        self._root_strategy = self.strategies.create(self.config.default_strategy, self)
        self._strategy_choice.insert((), self._root_strategy)
        self._reflexive: NameTable[bool] = NameTable()
        self._face_ids = itertools.count(FIRST_FACE_ID)
        self.face_taps: list[Tap] = []
        """Installed on every face added from now on (a pcap writer's ``tap``)."""

    # ------------------------------------------------------------------ faces
    def add_face(self, face: Face, face_id: int | None = None) -> int:
        """Register a face, wire its receiver to :meth:`receive`, return its id."""
        fid = next(self._face_ids) if face_id is None else face_id
        if fid in self.faces:
            raise ValueError(f"face id {fid} already in use; let the forwarder assign one")
        face.face_id = fid
        face.taps.extend(self.face_taps)
        self.faces[fid] = face
        face.set_receiver(self.receive)
        face.add_close_callback(self.remove_face)
        log.debug("face %d added %s (local=%s mtu=%s)", fid, face.uri, face.is_local, face.mtu)
        return fid

    def remove_face(self, face: Face) -> None:
        """Forget a face: its routes and its PIT in-records go with it."""
        if self.faces.get(face.face_id) is not face:
            return
        del self.faces[face.face_id]
        face.set_receiver(None)
        self.fib.remove_face(face.face_id)
        pit = self.pit
        for entry in pit.entries_of_face(face.face_id):
            pit.remove_in_record(entry, face.face_id)
            pit.remove_out_record(entry, face.face_id)
            if not entry.in_records and not entry.satisfied:
                pit.erase(entry)
        log.debug("face %d removed %s", face.face_id, face.uri)

    def scope_allows(self, face: Face, name: Name) -> bool:
        """``/localhost`` names only cross local faces."""
        return face.scope is FaceScope.LOCAL or not name or name[0] != _LOCALHOST_COMPONENT

    # ------------------------------------------------------- configuration
    def set_strategy(self, prefix: Name, strategy_name: str) -> None:
        """Choose the strategy for ``prefix`` (longest match wins)."""
        strategy = self.strategies.create(strategy_name, self)
        self._strategy_choice.insert(prefix, strategy)
        if prefix == ():
            self._root_strategy = strategy

    def find_strategy(self, name: Name) -> Strategy:
        """The strategy responsible for ``name``."""
        if self._strategy_choice.size == 1:
            return self._root_strategy
        hit = self._strategy_choice.longest_prefix_match(name)
        assert hit is not None  # the root always has one
        return hit[1]

    def add_route(self, prefix: Name, face_id: int, cost: int = 0) -> None:
        """FIB insert (what ``/localhost/nfd/rib/register`` ends up doing)."""
        self.fib.insert(prefix, face_id, cost)

    def add_reflexive_prefix(self, prefix: Name) -> None:
        """Interests under ``prefix`` go to ``hooks.on_reflexive_interest`` first."""
        self._reflexive.insert(prefix, True)

    def remove_reflexive_prefix(self, prefix: Name) -> None:
        """Undo :meth:`add_reflexive_prefix`."""
        self._reflexive.erase(prefix)

    # ---------------------------------------------------------------- input
    def receive(self, face: Face, wire: bytes, _depth: int = 0) -> None:
        """Entry point for every frame a face received: decoded once, by the reader that
        reads its outer type (:func:`dticn.packets.decode_packet`), and dispatched on what
        that decoder returned, so no packet reaches a pipeline of another kind."""
        try:
            packet = decode_packet(wire, self.config.max_name_bytes)
        except NameTooLong:
            self.counters.drop("name_too_long")
            return
        except DecodeError as exc:
            self.counters.drop("malformed")
            if log.isEnabledFor(logging.DEBUG):
                log.debug("face %d drop malformed (%d bytes): %s", face.face_id, len(wire), exc)
            return
        kind = type(packet)
        if kind is Interest:
            self.on_incoming_interest(face, packet)  # type: ignore[arg-type]
        elif kind is Data:
            self.on_incoming_data(face, packet)  # type: ignore[arg-type]
        else:
            self._on_incoming_lp(face, packet, _depth)  # type: ignore[arg-type]

    def _on_incoming_lp(self, face: Face, lp: LpPacket, depth: int) -> None:
        if lp.is_fragmented:
            try:
                whole = face.reassembler.add(lp, self.clock.now())
            except DecodeError as exc:
                self.counters.drop("reassembly_error")
                log.debug("face %d drop bad fragment: %s", face.face_id, exc)
                return
            if whole is None:
                return
            if depth >= self.config.max_lp_nesting:
                self.counters.drop("lp_nesting")
                return
            self.receive(face, whole, depth + 1)
            return
        if lp.fragment is None:
            self.counters.drop("lp_idle")  # IDLE/ACK-only packets carry nothing for us
            return
        try:
            inner = decode_packet(lp.fragment, self.config.max_name_bytes)
        except NameTooLong:
            self.counters.drop("name_too_long")
            return
        except DecodeError as exc:
            self.counters.drop("malformed")
            log.debug("face %d drop malformed LP fragment: %s", face.face_id, exc)
            return
        if isinstance(inner, _Lp):
            self.counters.drop("lp_nesting")
            return
        if lp.nack_reason is not None:
            if not isinstance(inner, Interest):
                self.counters.drop("nack_without_interest")
                return
            self.on_incoming_nack(face, inner, lp.nack_reason)
        elif isinstance(inner, Interest):
            self.on_incoming_interest(face, inner)
        else:
            self.on_incoming_data(face, inner)

    # ------------------------------------------------------------- Interest
    def on_incoming_interest(self, in_face: Face, interest: Interest) -> None:
        """Scope and hop-limit checks, loop detection, PIT insert, CS lookup."""
        self.counters.in_interests += 1
        in_face.counters.in_interests += 1
        if log.isEnabledFor(logging.DEBUG):
            log.debug(
                "face %d in Interest %s nonce=%s lifetime=%s", in_face.face_id,
                name_to_str(interest.name), interest.nonce, interest.lifetime_ms,
            )
        if not self.name_within_limits(interest.name):
            return
        if not self.scope_allows(in_face, interest.name):
            self.counters.drop("localhost_violation")
            return
        if interest.hop_limit is not None and not in_face.is_local:
            if interest.hop_limit == 0:
                self.counters.drop("hop_limit_zero")
                return
            interest = interest.with_hop_limit(interest.hop_limit - 1)
        if interest.nonce is None:
            interest = self.renonce(interest)
        assert interest.nonce is not None  # renonce sets one
        now = self.clock.now()
        if self.dead_nonces.find(interest.name, interest.nonce, now):
            self.on_interest_loop(in_face, interest)
            return
        if (
            self._reflexive.size
            and self._reflexive.longest_prefix_match(interest.name)
            and self.hooks.on_reflexive_interest(self, in_face, interest)
        ):
            return
        if not self._within_face_quota(in_face, interest):
            self.counters.drop("pit_face_quota")
            self._send_nack_wire(in_face, interest.wire, NackReason.CONGESTION)
            return
        entry, is_new = self.pit.insert(interest, now)
        if entry is None:
            self.counters.drop("pit_full")
            in_face.send(encode_nack(interest.wire, NackReason.CONGESTION), KIND_NACK)
            self.counters.out_nacks += 1
            return
        if not is_new and self._is_loop(in_face, interest, entry):
            self.on_interest_loop(in_face, interest)
            return
        if not entry.in_records and not entry.out_records:
            data = self.cs.find(interest, now)
            if data is not None:
                self.on_content_store_hit(in_face, entry, interest, data)
                return
            self.counters.cs_misses += 1
        self.on_content_store_miss(in_face, entry, interest)

    def name_within_limits(self, name: Name) -> bool:
        """``max_name_components`` / ``max_name_bytes``; a longer name is dropped and
        counted (``name_too_long``) before any table sees it. (Received packets already
        had their byte length checked while decoding; packets handed in by hooks and
        in-process apps are checked here.)"""
        cfg = self.config
        if len(name) <= cfg.max_name_components and (
            sum(map(len, name)) <= cfg.max_name_bytes
        ):
            return True
        self.counters.drop("name_too_long")
        return False

    def _within_face_quota(self, in_face: Face, interest: Interest) -> bool:
        """False when ``in_face`` already waits on ``pit_face_quota`` entries and this
        Interest would add one more (a retransmission into its own entry is fine)."""
        quota = self.config.pit_face_quota
        if quota is None or self.pit.in_record_count(in_face.face_id) < quota:
            return True
        entry = self.pit.find(interest)
        return entry is not None and in_face.face_id in entry.in_records

    def _is_loop(self, in_face: Face, interest: Interest, entry: PitEntry) -> bool:
        """Duplicate-nonce check of NFD's ``Forwarder::onIncomingInterest``.

        A nonce seen before in this entry (downstream or upstream) is a loop, except when
        it comes again from the *same* point-to-point face: that is a retransmission
        (CCN-lite's in-network retransmission re-sends the pending wire, nonce included),
        not a loop, even though the entry already went upstream with that nonce.
        """
        nonce = interest.nonce
        rec = entry.in_records.get(in_face.face_id)
        if (rec is not None and rec.nonce == nonce
                and in_face.link_type is LinkType.POINT_TO_POINT):
            return False
        if any(r.nonce == nonce for r in entry.in_records.values()):
            return True
        return any(r.nonce == nonce for r in entry.out_records.values())

    def on_interest_loop(self, in_face: Face, interest: Interest) -> None:
        """Duplicate nonce: Nack Duplicate on point-to-point faces, else drop."""
        self.counters.drop("loop")
        if in_face.link_type is LinkType.POINT_TO_POINT:
            self._send_nack_wire(in_face, interest.wire, NackReason.DUPLICATE)

    def renonce(self, interest: Interest) -> Interest:
        """A copy of ``interest`` with a fresh random nonce (re-encoded; Interest
        signatures do not cover the nonce, so they stay valid)."""
        out = decode_packet(interest.encode())
        assert isinstance(out, Interest)
        out.nonce = self.rng.getrandbits(32)
        out.wire = b""
        out.encode()
        return out

    def on_content_store_hit(
        self, in_face: Face, entry: PitEntry, interest: Interest, data: Data
    ) -> None:
        """Reply from the cache; the fresh PIT entry is no longer needed."""
        self.counters.cs_hits += 1
        entry.satisfied = True
        self.pit.erase(entry)
        self.on_outgoing_data(in_face, data)

    def on_content_store_miss(self, in_face: Face, entry: PitEntry, interest: Interest) -> None:
        """Record the downstream, (re)arm expiry, let hooks or the strategy forward."""
        now = self.clock.now()
        entry.downstream_retx = in_face.face_id in entry.in_records
        lifetime = interest.lifetime
        cap = self.config.max_interest_lifetime_ms
        if cap is not None and lifetime * 1000.0 > cap:
            lifetime = cap / 1000.0
            self.counters.lifetimes_capped += 1
        self.pit.add_in_record(
            entry, InRecord(in_face.face_id, interest.nonce or 0, now + lifetime, interest)
        )
        entry.interest = interest
        if entry.retx_policy is None:
            prefix_policy = self.retx.find(entry.name) if len(self.retx) else None
            entry.retx_from_prefix = prefix_policy is not None
            entry.retx_policy = prefix_policy or self.retx.default
        self._arm_expiry(entry)
        if self.hooks.on_interest_propagate(self, in_face, interest, entry):
            return
        self.find_strategy(entry.name).after_receive_interest(in_face, interest, entry)

    def _arm_expiry(self, entry: PitEntry) -> None:
        policy = entry.retx_policy
        now = self.clock.now()
        if policy is not None and policy.pit_lifetime is not None:
            expiry = max(entry.expiry, now + policy.pit_lifetime) if entry.expiry_timer else (
                now + policy.pit_lifetime
            )
            if self.config.pit_covers_in_records:
                expiry = max([expiry, *(rec.expiry for rec in entry.in_records.values())])
        elif len(entry.in_records) == 1:
            expiry = next(iter(entry.in_records.values())).expiry
        else:
            expiry = max(rec.expiry for rec in entry.in_records.values())
        if entry.expiry_timer is not None and expiry == entry.expiry:
            return
        if entry.expiry_timer is not None:
            entry.expiry_timer.cancel()
        entry.expiry = expiry
        entry.expiry_timer = self.clock.call_later(
            max(0.0, expiry - now), self.on_interest_expiry, entry
        )

    def send_interest(
        self, entry: PitEntry, out_face: Face, interest: Interest, *, retransmission: bool = False
    ) -> None:
        """Strategy action: forward ``interest`` for ``entry`` out of ``out_face``."""
        self.on_outgoing_interest(entry, out_face, interest, retransmission=retransmission)

    def on_outgoing_interest(
        self, entry: PitEntry, out_face: Face, interest: Interest, *, retransmission: bool = False
    ) -> None:
        """Write the out-record, send, and start the CCN-lite retransmission timer."""
        now = self.clock.now()
        if not retransmission or out_face.face_id not in entry.out_records:
            self.pit.add_out_record(entry, OutRecord(out_face.face_id, interest.nonce or 0, now))
        else:
            record = entry.out_records[out_face.face_id]
            record.last_sent = now
            record.nonce = interest.nonce or 0
        self.counters.out_interests += 1
        if retransmission:
            self.counters.retransmissions += 1
        if log.isEnabledFor(logging.DEBUG):
            log.debug(
                "face %d out Interest %s nonce=%s%s", out_face.face_id,
                name_to_str(interest.name), interest.nonce, " (retx)" if retransmission else "",
            )
        face_policy = out_face.retx_policy
        if (
            face_policy is not None
            and not entry.retx_from_prefix
            and face_policy is not entry.retx_policy
        ):
            entry.retx_policy = face_policy
            self._arm_expiry(entry)
        if out_face.wants_incoming_face_id:
            out_face.send(
                _Lp(fragment=interest.wire, incoming_face_id=_in_face_of(entry, interest)).encode(),
                KIND_INTEREST, interest,
            )
        else:
            out_face.send(interest.wire, KIND_INTEREST, interest)
        if (
            entry.retx_policy is not None
            and entry.retx_policy.in_network
            and entry.retx_timer is None
            and entry.retx_count < entry.retx_policy.max_retx
        ):
            entry.retx_timer = self.clock.call_later(
                entry.retx_policy.retx_interval, self.on_retransmission_timer, entry
            )

    def on_retransmission_timer(self, entry: PitEntry) -> None:
        """CCN-lite INR: the forwarder re-sends the pending Interest itself."""
        entry.retx_timer = None
        if entry.erased or entry.satisfied or entry.retx_policy is None:
            return
        if entry.retx_count >= entry.retx_policy.max_retx:
            return
        entry.retx_count += 1
        self.find_strategy(entry.name).after_retransmission_timer(entry)
        if not entry.retx_armed and entry.retx_count < entry.retx_policy.max_retx:
            entry.retx_timer = self.clock.call_later(
                entry.retx_policy.retx_interval, self.on_retransmission_timer, entry
            )

    def on_interest_expiry(self, entry: PitEntry) -> None:
        """No Data in time: remember the nonces, forget the entry."""
        entry.expiry_timer = None
        if entry.erased:
            return
        if not entry.satisfied:
            self.counters.unsatisfied_interests += 1
        if log.isEnabledFor(logging.DEBUG):
            log.debug("PIT expiry %s", name_to_str(entry.name))
        self._finish(entry)

    def _finish(self, entry: PitEntry) -> None:
        """Erase ``entry``; record its upstream nonces in the dead nonce list when needed.

        As NFD's ``insertDeadNonceList``: an entry that expired or was rejected always
        records them (a late copy would otherwise loop); a satisfied entry only when its
        Interest had MustBeFresh (otherwise a retransmission with the same nonce, arriving
        just after the Data, is answered from the Content Store instead of Nacked).
        """
        if not entry.satisfied or entry.must_be_fresh:
            now = self.clock.now()
            for rec in entry.out_records.values():
                self.dead_nonces.insert(entry.name, rec.nonce, now)
        self.pit.erase(entry)

    def reject_pending_interest(self, entry: PitEntry) -> None:
        """Strategy action: give up on ``entry`` now."""
        self._finish(entry)

    def answer_interest(self, entry: PitEntry, data: Data, *, cache: bool = False) -> None:
        """Hook action: satisfy every downstream of ``entry`` with ``data`` (e.g. a
        gateway's wait hint), optionally caching it, and finish the entry."""
        if cache:
            self.cs.insert(data, self.clock.now())
        entry.satisfied = True
        faces = [self.faces.get(fid) for fid in entry.in_records]
        self._finish(entry)
        for face in faces:
            if face is not None:
                self.on_outgoing_data(face, data)

    def answer_in_record(self, entry: PitEntry, face_id: int, data: Data) -> None:
        """Hook action: answer one downstream of ``entry`` with ``data`` (never cached) and
        drop its in-record; the entry stays pending for its other downstreams (a gateway's
        own request for the same name keeps waiting for the content). An entry left with no
        downstream is finished."""
        rec = self.pit.remove_in_record(entry, face_id)
        face = self.faces.get(face_id)
        if not entry.in_records:
            self._finish(entry)
        if rec is not None and face is not None:
            self.on_outgoing_data(face, data)

    # ------------------------------------------------------------------ Data
    def on_incoming_data(self, in_face: Face, data: Data) -> None:
        """Match the PIT, cache, and send to every waiting downstream."""
        self.counters.in_data += 1
        in_face.counters.in_data += 1
        if not self.name_within_limits(data.name):
            return
        if log.isEnabledFor(logging.DEBUG):
            log.debug("face %d in Data %s", in_face.face_id, name_to_str(data.name))
        if not self.scope_allows(in_face, data.name):
            self.counters.drop("localhost_violation")
            return
        entries = self.pit.find_all_data_matches(data)
        if not entries:
            self.on_data_unsolicited(in_face, data)
            return
        now = self.clock.now()
        if data.content_type not in self.config.uncached_content_types:
            self.cs.insert(data, now, face_id=in_face.face_id)
        downstream: dict[int, Face] = {}
        for entry in entries:
            self.find_strategy(entry.name).before_satisfy_interest(entry, in_face, data)
            for fid, rec in entry.in_records.items():
                face = self.faces.get(fid)
                if face is not None and rec.expiry >= now and (
                    face is not in_face or face.link_type is LinkType.MULTI_ACCESS
                ):
                    downstream[fid] = face
            entry.satisfied = True
            self.counters.satisfied_interests += 1
            self._finish(entry)
        for face in downstream.values():
            self.on_outgoing_data(face, data)

    def on_data_unsolicited(self, in_face: Face, data: Data) -> None:
        """Drop, unless a hook (push scheme) admits it into the CS."""
        verdict = self.hooks.on_unsolicited_data(self, in_face, data)
        if verdict == UnsolicitedDataVerdict.DROP:
            self.counters.drop("unsolicited_data")
            return
        pinned = verdict == UnsolicitedDataVerdict.CACHE_PINNED
        if not self.cs.insert(data, self.clock.now(), pinned=pinned, face_id=in_face.face_id):
            self.counters.drop("cs_pinned_full")

    def on_outgoing_data(self, out_face: Face, data: Data) -> None:
        """Send a Data downstream (scope enforced)."""
        if not self.scope_allows(out_face, data.name):
            self.counters.drop("localhost_violation")
            return
        self.counters.out_data += 1
        if log.isEnabledFor(logging.DEBUG):
            log.debug("face %d out Data %s", out_face.face_id, name_to_str(data.name))
        out_face.send(data.encode(), KIND_DATA, data)

    def inject_data(self, data: Data, *, pinned: bool = False) -> None:
        """Put locally produced Data into the CS (gateway push, prefetch)."""
        self.cs.insert(data, self.clock.now(), pinned=pinned)

    # ------------------------------------------------------------------ Nack
    def on_incoming_nack(self, in_face: Face, interest: Interest, reason: int) -> None:
        """Mark the out-record Nacked and let the strategy decide."""
        self.counters.in_nacks += 1
        in_face.counters.in_nacks += 1
        if not self.name_within_limits(interest.name):
            return
        if log.isEnabledFor(logging.DEBUG):
            log.debug(
                "face %d in Nack %s reason=%d", in_face.face_id,
                name_to_str(interest.name), reason,
            )
        entry = self.pit.find(interest)
        if entry is None:
            self.counters.drop("nack_no_pit_entry")
            return
        out = entry.out_records.get(in_face.face_id)
        if out is None or out.nonce != interest.nonce:
            self.counters.drop("nack_nonce_mismatch")
            return
        out.nack_reason = reason
        self.find_strategy(entry.name).after_receive_nack(in_face, reason, entry)

    def send_nack(self, entry: PitEntry, face_id: int, reason: int) -> None:
        """Strategy action: Nack the downstream ``face_id`` of ``entry``."""
        self.on_outgoing_nack(entry, face_id, reason)

    def on_outgoing_nack(self, entry: PitEntry, face_id: int, reason: int) -> None:
        """Nack the in-record's own Interest (its nonce) and drop that in-record."""
        rec = self.pit.remove_in_record(entry, face_id)
        face = self.faces.get(face_id)
        if rec is None or face is None:
            return
        self._send_nack_wire(face, rec.interest.wire, reason)

    def _send_nack_wire(self, face: Face, interest_wire: bytes, reason: int) -> None:
        self.counters.out_nacks += 1
        if log.isEnabledFor(logging.DEBUG):
            log.debug("face %d out Nack reason=%d", face.face_id, reason)
        face.send(encode_nack(interest_wire, reason), KIND_NACK)


def _in_face_of(entry: PitEntry, interest: Interest) -> int:
    """The downstream that sent ``interest`` (for the IncomingFaceId header)."""
    for face_id, rec in entry.in_records.items():
        if rec.interest is interest:
            return face_id
    return next(iter(entry.in_records), 0)
