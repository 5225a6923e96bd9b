"""NFD's faces/list and fib/list from a real `dticn forwarder` process, read by an
unmodified python-ndn client (NDNApp, segment_fetcher, nfd_mgmt decoders), and printed
by `dticn status`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ndn.app_support.nfd_mgmt import (
    FaceLinkType,
    FacePersistency,
    FaceScope,
    FaceStatusMsg,
    FibStatus,
    GeneralStatus,
)
from ndn.app_support.segment_fetcher import segment_fetcher
from ndn.encoding import Name

from dticn.mgmt.segments import SEGMENT_PAYLOAD
from dticn.net.ndnapp import make_app

ROUTES = 600  # about 12 kB of FibEntry blocks: more than one segment


def _start(sock: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "dticn.cli", "forwarder", "--listen", f"unix://{sock}",
         "--routes-per-face", str(ROUTES + 10), "--status-interval", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    assert proc.stdout is not None
    while proc.stdout.readline().strip() not in ("READY", ""):
        pass
    return proc


def test_faces_and_fib_datasets_read_by_python_ndn(tmp_path: Path) -> None:
    sock = tmp_path / "fw.sock"
    proc = _start(sock)
    got: dict[str, object] = {}
    try:
        app = make_app(f"unix://{sock}")

        async def run() -> None:
            try:
                for k in range(ROUTES):
                    assert await app.register(f"/p/{k:04d}", None)
                for key in ("faces/list", "fib/list", "status/general"):
                    segments = [bytes(seg) async for seg in segment_fetcher(
                        app, f"/localhost/nfd/{key}", timeout=2000)]
                    got[key] = segments
            finally:
                app.shutdown()

        app.run_forever(after_start=run())
        text = subprocess.run(
            [sys.executable, "-m", "dticn.cli", "status", "--transport", f"unix://{sock}"],
            capture_output=True, text=True, timeout=30,
        )
    finally:
        proc.terminate()
        proc.wait(timeout=10)

    fib_segments = got["fib/list"]
    assert isinstance(fib_segments, list) and len(fib_segments) == 2
    assert len(fib_segments[0]) == SEGMENT_PAYLOAD
    fib = FibStatus.parse(b"".join(fib_segments))
    prefixes = {Name.to_str(e.name): e for e in fib.entries}
    assert {f"/p/{k:04d}" for k in range(ROUTES)} <= set(prefixes)
    app_face = prefixes["/p/0000"].next_hop_records[0].face_id
    assert all(prefixes[f"/p/{k:04d}"].next_hop_records[0].face_id == app_face
               for k in range(ROUTES))
    assert prefixes["/localhost/nfd"].next_hop_records[0].face_id == 1

    faces = {f.face_id: f for f in FaceStatusMsg.parse(b"".join(got["faces/list"])).face_status}
    internal, client = faces[1], faces[app_face]
    assert internal.uri == "internal://"
    assert internal.face_persistency == FacePersistency.PERMANENT
    assert client.face_scope == FaceScope.LOCAL
    assert client.face_persistency == FacePersistency.ON_DEMAND
    assert client.link_type == FaceLinkType.POINT_TO_POINT
    assert client.local_uri == f"unix://{sock}"
    # ROUTES registrations, plus the fetches of faces/list before this snapshot
    assert client.n_in_interests >= ROUTES + 1 and client.n_out_data >= ROUTES
    assert client.n_in_bytes > 0 and client.n_out_bytes > client.n_in_bytes / 10
    # every Interest of the client went to management, every reply came back from it
    assert internal.n_out_interests == client.n_in_interests
    assert internal.n_in_data == client.n_out_data

    general = GeneralStatus.parse(b"".join(got["status/general"]))
    assert general.n_fib_entries == len(fib.entries)

    assert text.returncode == 0, text.stderr
    assert "face 1 internal:// local=internal:// local permanent" in text.stdout
    assert "/localhost/nfd -> face 1 (cost 0)" in text.stdout
