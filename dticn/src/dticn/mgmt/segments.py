"""Publishing a status dataset as NFD does: versioned, segmented, later segments kept.

A dataset Interest names the dataset (``/localhost/nfd/faces/list``, CanBePrefix). The
reply is ``<dataset>/v=<ms>/seg=0`` carrying at most :data:`SEGMENT_PAYLOAD` bytes of the
dataset, FinalBlockId the last segment's number; a requester (python-ndn's
``segment_fetcher``, ndn-cxx's ``SegmentFetcher`` in ``nfdc``) then asks for
``seg=1``, ``seg=2``, ... by exact name. ndn-cxx's dispatcher answers those from an
in-memory store (``Dispatcher`` and ``StatusDatasetContext`` in ndn-cxx/mgmt); so does
:class:`DatasetPublisher`, bounded in bytes so that asking for a huge FIB over and over
cannot grow memory. Versions only increase, so two requests in one millisecond never mix
segments of two different snapshots.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from dticn.packets import MAX_NDN_PACKET_SIZE, Data, Name
from dticn.packets.tlv import encode_tlv, encode_uint

TYPE_VERSION_COMPONENT = 0x36
TYPE_SEGMENT_COMPONENT = 0x32
SEGMENT_PAYLOAD = MAX_NDN_PACKET_SIZE - 800
"""Content bytes per segment: ndn-cxx's ``MAX_PAYLOAD_LENGTH`` in
ndn-cxx/mgmt/status-dataset-context.cpp (8800 - 800)."""
DATASET_FRESHNESS_MS = 1000
"""NFD's status datasets stay fresh for 1 s."""
BUILD_DUTY = 0.1
"""Most share of time spent building one dataset: a snapshot that took T to build is
served again for 9 T before the next build (a full FIB of 100,000 prefixes takes most
of a second: rebuilding it on every request would stop forwarding)."""
STORE_BYTES = 8 * 1024 * 1024
"""Most content bytes of multi-segment versions kept for their later segments."""


def segment_component(number: int) -> bytes:
    """A SegmentNameComponent (NDN naming conventions rev. 3)."""
    return encode_tlv(TYPE_SEGMENT_COMPONENT, encode_uint(number))


class DatasetPublisher:
    """Cuts dataset content into segments and keeps the later ones for a while."""

    def __init__(self, store_bytes: int = STORE_BYTES) -> None:
        self._store_bytes = store_bytes
        self._versions: OrderedDict[Name, tuple[dict[Name, Data], int]] = OrderedDict()
        self._stored = 0
        self._last_version = 0

    def publish(self, dataset: Name, content: bytes, now_ms: int) -> Data:
        """Segment ``content`` under a new version of ``dataset``; return segment 0."""
        version = max(now_ms, self._last_version + 1)
        self._last_version = version
        prefix = (*dataset, encode_tlv(TYPE_VERSION_COMPONENT, encode_uint(version)))
        chunks = [content[i:i + SEGMENT_PAYLOAD]
                  for i in range(0, len(content), SEGMENT_PAYLOAD)] or [b""]
        final = segment_component(len(chunks) - 1)
        segments = [Data(name=(*prefix, segment_component(k)), content=chunk,
                         freshness_ms=DATASET_FRESHNESS_MS, final_block_id=final)
                    for k, chunk in enumerate(chunks)]
        if len(segments) > 1:
            self._keep(prefix, segments, len(content))
        return segments[0]

    def find(self, name: Name) -> Data | None:
        """A kept segment named exactly ``name`` (``<dataset>/<version>/<segment>``)."""
        if len(name) < 2:
            return None
        kept = self._versions.get(name[:-1])
        if kept is None:
            return None
        return kept[0].get(name)

    def _keep(self, prefix: Name, segments: list[Data], size: int) -> None:
        self._versions[prefix] = ({data.name: data for data in segments}, size)
        self._stored += size
        while self._stored > self._store_bytes and len(self._versions) > 1:
            _, (_, dropped) = self._versions.popitem(last=False)
            self._stored -= dropped


class Snapshots:
    """The last content of each dataset, rebuilt only when older than ``(1/duty - 1)``
    times its build took, so requests cannot keep the forwarder building datasets.

    ``clock`` gives seconds (the manager's injected wall clock): with a clock that does
    not move, every request rebuilds.
    """

    def __init__(self, clock: Callable[[], float], duty: float = BUILD_DUTY) -> None:
        self._clock = clock
        self._hold = 1.0 / duty - 1.0
        self._last: dict[Name, tuple[float, float, bytes]] = {}

    def content(self, dataset: Name, build: Callable[[], bytes]) -> bytes:
        """The content of ``dataset``, from ``build()`` or the last snapshot."""
        start = self._clock()
        last = self._last.get(dataset)
        if last is not None and start - last[0] < last[1] * self._hold:
            return last[2]
        content = build()
        end = self._clock()
        self._last[dataset] = (end, end - start, content)
        return content
