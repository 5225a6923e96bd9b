"""Status datasets of a running forwarder: what an operator asks while it runs.

Two names, both answered by :class:`dticn.mgmt.nfd.NfdManagement` from local faces only
(``/localhost`` scope):

* ``/localhost/nfd/status/general``: NFD's ForwarderStatus dataset (the TLV ``nfdc
  status`` and python-ndn's ``nfd_mgmt.GeneralStatus`` read), so NFD tools see the
  table sizes and packet counters.
* ``/localhost/nfd/status/dticn``: everything as JSON, including what NFD's dataset has
  no field for: drops by reason, ``lifetimes_capped``, the configured limits and, per face,
  its packet counters, pending Interests and routes. ``dticn status`` prints it.

Replies are versioned and segmented as NFD's (:mod:`dticn.mgmt.segments`); the
requester sends CanBePrefix and MustBeFresh and fetches further segments if any.
NFD's ``faces/list`` and ``fib/list`` are in :mod:`dticn.mgmt.listings`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable

from dticn.forwarder.forwarder import Forwarder


def forwarder_status(fw: Forwarder, started: float, now: float) -> dict[str, object]:
    """Every counter, table size, limit and face of ``fw`` as plain data (a face's
    counters include its packets by kind)."""
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


Dataset = Callable[[float], bytes]
"""Builds one dataset's content; the argument is the wall-clock time (epoch seconds)."""
