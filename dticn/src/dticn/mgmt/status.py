"""Status datasets of a running forwarder: what an operator asks while it runs.

Two names, both answered by :class:`dticn.mgmt.nfd.NfdManagement` from local faces only
(``/localhost`` scope):

* ``/localhost/nfd/status/general``: NFD's ForwarderStatus dataset (the TLV ``nfdc
  status`` and python-ndn's ``nfd_mgmt.GeneralStatus`` read), so NFD tools see the
  table sizes and packet counters.
* ``/localhost/nfd/status/dticn``: everything as JSON, including what NFD's dataset has
  no field for: drops by reason, ``lifetimes_capped``, the configured limits and, per face,
  its packet counters, pending Interests and routes. ``dticn status`` prints it.

Replies are one segment under a version component (``<name>/v=<ms>/seg=0``, FinalBlockId
``seg=0``), as NFD's datasets are; the requester sends CanBePrefix and MustBeFresh.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable

from dticn.forwarder.forwarder import Forwarder
from dticn.packets import Data, Interest
from dticn.packets.tlv import encode_tlv, encode_uint

TYPE_VERSION_COMPONENT = 0x36
TYPE_SEGMENT_COMPONENT = 0x32
DATASET_FRESHNESS_MS = 1000
"""NFD's status datasets stay fresh for 1 s."""


def forwarder_status(fw: Forwarder, started: float, now: float) -> dict[str, object]:
    """Every counter, table size, limit and face of ``fw`` as plain data."""
    cfg = fw.config
    faces = []
    for face_id, face in sorted(fw.faces.items()):
        faces.append({
            "face_id": face_id, "uri": face.uri, "local_uri": face.local_uri,
            "local": face.is_local, "counters": dataclasses.asdict(face.counters),
            "pending_interests": fw.pit.in_record_count(face_id),
            "routes": fw.fib.route_count(face_id),
        })
    return {
        "uptime_s": round(now - started, 3),
        "tables": {"faces": len(fw.faces), "fib": len(fw.fib), "pit": len(fw.pit),
                   "cs": len(fw.cs), "dead_nonces": len(fw.dead_nonces)},
        "counters": fw.counters.status(),
        "limits": {
            "pit_capacity": cfg.pit_capacity, "pit_face_quota": cfg.pit_face_quota,
            "max_interest_lifetime_ms": cfg.max_interest_lifetime_ms,
            "max_name_components": cfg.max_name_components,
            "max_name_bytes": cfg.max_name_bytes, "fib_capacity": cfg.fib_capacity,
            "routes_per_face": cfg.routes_per_face, "cs_capacity": cfg.cs_capacity,
        },
        "faces": faces,
    }


def general_status(fw: Forwarder, started: float, now: float) -> bytes:
    """NFD's ForwarderStatus TLV (timestamps in ms since the epoch)."""
    from ndn.app_support.nfd_mgmt import GeneralStatus

    c = fw.counters
    st = GeneralStatus()
    st.nfd_version = "dticn"
    st.start_timestamp = int(started * 1000)
    st.current_timestamp = int(now * 1000)
    st.n_name_tree_entries = len(fw.fib) + len(fw.pit) + len(fw.cs)
    st.n_fib_entries = len(fw.fib)
    st.n_pit_entries = len(fw.pit)
    st.n_measurement_entries = 0
    st.n_cs_entries = len(fw.cs)
    st.n_in_interests, st.n_in_data, st.n_in_nacks = c.in_interests, c.in_data, c.in_nacks
    st.n_out_interests, st.n_out_data = c.out_interests, c.out_data
    st.n_out_nacks = c.out_nacks
    st.n_satisfied_interests = c.satisfied_interests
    st.n_unsatisfied_interests = c.unsatisfied_interests
    return bytes(st.encode())


def json_status(fw: Forwarder, started: float, now: float) -> bytes:
    """:func:`forwarder_status` as UTF-8 JSON."""
    return json.dumps(forwarder_status(fw, started, now), sort_keys=True).encode()


Dataset = Callable[[Forwarder, float, float], bytes]


def dataset_reply(interest: Interest, content: bytes, now: float) -> Data:
    """One-segment reply under a version component, as NFD's datasets."""
    version = encode_tlv(TYPE_VERSION_COMPONENT, encode_uint(int(now * 1000)))
    segment = encode_tlv(TYPE_SEGMENT_COMPONENT, b"\x00")
    return Data(name=(*interest.name, version, segment), content=content,
                freshness_ms=DATASET_FRESHNESS_MS, final_block_id=segment)
