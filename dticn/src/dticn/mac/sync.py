"""A device's association and beacon tracking (IEEE 802.15.4-2015, 6.3 and 6.4).

The synchronisation and GTS transition tables of :mod:`dticn.mac.states`, driven by what the
node hears: a beacon found while scanning leads to an association request in the CAP; the
coordinator's response (with the GTS it allocated) is acknowledged and the node starts
tracking; while tracking, ``max_lost_beacons`` beacon windows in a row without a beacon
lose synchronisation and the node scans (receiver on, beacon channel) until one arrives.
A pre-associated node (``association="static"``, as in the artifact) starts tracking at once.

The owner (the device) is told through three callbacks: ``install(cells)`` when the
response gives GTS, ``tracking()`` once the node may use its slots, ``resumed()`` when it
regained synchronisation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dticn.clock import TimerHandle
from dticn.mac.cap import CapAccess
from dticn.mac.dsme_config import MacConfig
from dticn.mac.frames import Frame, FrameKind
from dticn.mac.gts import Gts
from dticn.mac.platform import Platform, Status
from dticn.mac.receive_windows import BeaconWindow
from dticn.mac.states import (
    GTS_TRANSITIONS,
    SYNC_TRANSITIONS,
    GtsEvent,
    GtsState,
    SyncEvent,
    SyncState,
)
from dticn.phy.medium import Transmission
from dticn.phy.radio_states import RadioState, fire


class SyncTracker:
    """Association handshake and beacon tracking of one end device."""

    def __init__(self, platform: Platform, config: MacConfig, cap: CapAccess, *,
                 address: int, coordinator: int, directions: tuple[str, ...],
                 beacon_s: float, ack_s: float, emit: Callable[..., None],
                 next_seq: Callable[[], int], send_ack: Callable[[Frame, int], None],
                 install: Callable[[list[Gts]], None], tracking: Callable[[], None],
                 resumed: Callable[[], None]) -> None:
        self.p = platform
        self.cfg = config
        self.cap = cap
        self.address = address
        self.coordinator = coordinator
        self.directions = directions       # what the association request asks for
        self.ack_s = ack_s
        self.state = SyncState.UNASSOCIATED
        self.gts_state = GtsState.NONE
        self.missed_beacons = 0            # in a row, since the last beacon heard
        self.lost_beacons = 0
        self.sync_losses = 0
        self.beacons = BeaconWindow(platform, config, beacon_s, on_missed=self._missed)
        self._emit = emit
        self._next_seq = next_seq
        self._send_ack = send_ack
        self._install = install
        self._tracking = tracking
        self._resumed = resumed
        self._response_timer: TimerHandle | None = None

    @property
    def tracking_beacons(self) -> bool:
        """Associated and synchronised: the node may use its GTS and the CAP."""
        return self.state is SyncState.TRACKING

    def _fire(self, event: SyncEvent) -> None:
        self.state = fire(SYNC_TRANSITIONS, self.state, event)

    def _fire_gts(self, event: GtsEvent) -> None:
        self.gts_state = fire(GTS_TRANSITIONS, self.gts_state, event)

    def start_static(self) -> None:
        """Pre-associated with its GTS configured (the artifact): tracking from now."""
        self._fire(SyncEvent.STATIC)
        self._fire_gts(GtsEvent.STATIC)
        self._tracking()

    def scan(self) -> None:
        """Receiver on, on the beacon channel, until a beacon arrives."""
        radio = self.p.radio
        if radio.state is RadioState.SLEEP:
            radio.wake()
        elif radio.state is not RadioState.STANDBY:
            radio.idle()
        radio.start_rx(self.cfg.beacon_channel)

    # -- beacons --------------------------------------------------------------------------
    def on_beacon(self) -> None:
        """A beacon arrived."""
        if self.state is SyncState.TRACKING:
            if not self.beacons.heard():
                return                           # heard outside a window (scan overlap)
            self.p.radio.sleep()
            self.missed_beacons = 0
            self._fire(SyncEvent.BEACON_FOUND)
            self.beacons.follow(self.p.clock.now())
        elif self.state is SyncState.LOST:
            self.p.radio.sleep()
            self.missed_beacons = 0
            self._fire(SyncEvent.BEACON_FOUND)
            self._emit("resynchronised")
            self.beacons.follow(self.p.clock.now())
            self._resumed()
        elif self.state is SyncState.UNASSOCIATED:
            self.p.radio.sleep()
            self._fire(SyncEvent.BEACON_FOUND)
            self._request_association()

    def _missed(self) -> bool:
        """A beacon window closed empty; False when synchronisation is lost (scanning)."""
        self.missed_beacons += 1
        self.lost_beacons += 1
        self._emit("beacon_lost", missed=self.missed_beacons)
        if self.missed_beacons >= self.cfg.max_lost_beacons:
            self._fire(SyncEvent.SYNC_LOST)
            self.sync_losses += 1
            self._emit("sync_lost")
            self.scan()
            return False
        self._fire(SyncEvent.BEACON_LOST)
        return True

    # -- association handshake ------------------------------------------------------------
    def _request_association(self) -> None:
        frame = Frame(FrameKind.ASSOCIATION_REQUEST, self.address, self.coordinator,
                      self._next_seq(), self.cfg.association_request_bytes, ack_request=True,
                      info={"directions": list(self.directions)})
        self._fire(SyncEvent.ASSOCIATION_REQUESTED)
        self._fire_gts(GtsEvent.REQUEST)
        self.cap.submit(frame)

    def request_sent(self, status: Status) -> None:
        """The CAP finished the association request: wait for the response, or scan again."""
        if status is Status.DELIVERED:
            self.p.radio.wake()
            self.p.radio.start_rx(self.cfg.cap_channel)
            self._response_timer = self.p.clock.call_later(self.cfg.response_wait_s,
                                                           self._no_response)
        else:
            self._fire(SyncEvent.ASSOCIATION_FAILED)
            self._fire_gts(GtsEvent.TIMEOUT)
            self.scan()

    def _no_response(self) -> None:
        self._response_timer = None
        if self.p.radio.state is not RadioState.SLEEP:
            self.p.radio.sleep()
        self._fire(SyncEvent.ASSOCIATION_FAILED)
        self._fire_gts(GtsEvent.TIMEOUT)
        self._emit("association_failed")
        self.scan()

    def on_response(self, frame: Frame, tx: Transmission) -> None:
        """The coordinator's association response (with the GTS it gave, maybe none)."""
        if self.state is not SyncState.ASSOCIATING or self._response_timer is None:
            return
        self._response_timer.cancel()
        self._response_timer = None
        self._send_ack(frame, tx.channel)
        cells: list[Any] = frame.info.get("gts", [])
        self._fire_gts(GtsEvent.RESPONSE_OK if cells else GtsEvent.RESPONSE_DENIED)
        self._install(cells)
        self._fire(SyncEvent.ASSOCIATED)
        self._emit("associated", cells=len(cells))
        # Start tracking once the ACK of the response is out (the radio is busy until then).
        self.p.clock.call_later(2 * self.cfg.turnaround_s + self.ack_s, self._tracking)
