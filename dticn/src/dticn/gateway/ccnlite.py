"""The forwarder every simulated host runs: the project's forwarder core with NFD's
same-face retransmission rule.

CCN-lite's retransmission (the paper's V1-V3 "INR" configurations) re-sends the pending
Interest's wire, nonce included. The next hop therefore sees the same nonce again on the
same face. NFD (``Forwarder::onIncomingInterest``) treats a duplicate nonce from the *same*
point-to-point face as a retransmission, even when the entry already went upstream with
that nonce; the core's ``_is_loop`` reports a loop in that case and Nacks Duplicate, which
would end every transaction at its first retransmission. This subclass applies NFD's rule.

Second NFD rule: a PIT entry that was *satisfied* puts its nonces into the dead nonce list
only when its Interest had MustBeFresh (``Forwarder::insertDeadNonceList``). The core inserts
them for every finished entry, so a consumer retransmission arriving just after the Data
(same nonce) was Nacked Duplicate instead of being answered from the Content Store.

Everything else is the unchanged core (both rules are reported upstream as suggested fixes).
"""

from __future__ import annotations

from dticn.forwarder.face import Face, LinkType
from dticn.forwarder.forwarder import Forwarder
from dticn.forwarder.pit import PitEntry
from dticn.packets import Interest


class CcnLiteForwarder(Forwarder):
    """:class:`~dticn.forwarder.forwarder.Forwarder` with NFD's duplicate-nonce rule."""

    def _is_loop(self, in_face: Face, interest: Interest, entry: PitEntry) -> bool:
        nonce = interest.nonce
        rec = entry.in_records.get(in_face.face_id)
        if (rec is not None and rec.nonce == nonce
                and in_face.link_type is LinkType.POINT_TO_POINT):
            return False          # DUPLICATE_NONCE_IN_SAME on a p2p face: a retransmission
        return super()._is_loop(in_face, interest, entry)

    def _finish(self, entry: PitEntry) -> None:
        if entry.satisfied and not entry.key[2]:
            self.pit.erase(entry)            # satisfied, not MustBeFresh: no DNL insert
            return
        super()._finish(entry)
