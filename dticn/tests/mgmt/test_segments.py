"""Dataset segmentation: NFD's segment size, later segments kept, bounded memory."""

from __future__ import annotations

from dticn.mgmt.segments import SEGMENT_PAYLOAD, DatasetPublisher, segment_component
from dticn.packets import name_from_str

DATASET = name_from_str("/localhost/nfd/fib/list")


def test_segments_are_found_by_exact_name_and_versions_only_increase() -> None:
    pub = DatasetPublisher()
    content = bytes(range(256)) * 70  # 17,920 bytes: three segments
    first = pub.publish(DATASET, content, now_ms=1000)
    second = pub.publish(DATASET, b"small", now_ms=1000)  # same millisecond
    assert first.name[-2] != second.name[-2]  # distinct versions
    assert first.final_block_id == segment_component(2) and len(first.content) == SEGMENT_PAYLOAD
    prefix = first.name[:-1]
    parts = [pub.find((*prefix, segment_component(k))) for k in range(3)]
    assert all(p is not None for p in parts)
    assert b"".join(p.content for p in parts) == content  # type: ignore[union-attr]
    assert pub.find((*prefix, segment_component(3))) is None
    assert second.final_block_id == segment_component(0)


def test_store_is_bounded_in_bytes_newest_version_kept() -> None:
    pub = DatasetPublisher(store_bytes=3 * SEGMENT_PAYLOAD)
    names = [pub.publish(DATASET, b"x" * (2 * SEGMENT_PAYLOAD), now_ms=k).name[:-1]
             for k in range(3)]
    assert pub.find((*names[0], segment_component(1))) is None
    assert pub.find((*names[1], segment_component(1))) is None
    assert pub.find((*names[2], segment_component(1))) is not None


def test_a_slow_dataset_is_not_rebuilt_for_every_request() -> None:
    from dticn.mgmt.segments import Snapshots

    now = [0.0]
    builds = []

    def build() -> bytes:
        builds.append(now[0])
        now[0] += 0.5  # the build takes 0.5 s
        return b"snapshot %d" % len(builds)

    snaps = Snapshots(lambda: now[0], duty=0.1)
    assert snaps.content(DATASET, build) == b"snapshot 1"
    now[0] += 4.0  # 4 s after: still within 9 x 0.5 s
    assert snaps.content(DATASET, build) == b"snapshot 1"
    now[0] += 0.6
    assert snaps.content(DATASET, build) == b"snapshot 2"
    assert len(builds) == 2
