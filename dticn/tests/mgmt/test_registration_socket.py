"""A real python-ndn client (NDNApp over a unix socket) registering with a forwarder
whose management has a trust anchor: its default DigestSha256 registration is refused
with the reason, an ECDSA-signed command of the anchor's key is accepted and routes."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

from Cryptodome.PublicKey import ECC
from ndn.app import NDNApp
from ndn.app_support import nfd_mgmt
from ndn.app_support.security_v2 import self_sign
from ndn.security import KeychainDigest, Sha256WithEcdsaSigner
from ndn.transport.stream_face import UnixFace

from dticn.forwarder.forwarder import Forwarder
from dticn.mgmt.command_auth import authenticator_from_files
from dticn.mgmt.nfd import NfdManagement
from dticn.net.asyncio_clock import AsyncioClock
from dticn.net.listen import ListenUri, open_listener
from dticn.packets import name_from_str

KEY = "/site/operator/KEY/k1"


def test_python_ndn_registration_against_a_trust_anchor(tmp_path: Path) -> None:
    key = ECC.generate(curve="P-256")
    signer = Sha256WithEcdsaSigner(KEY, key.export_key(format="DER"))
    _, cert = self_sign(KEY, key.public_key().export_key(format="DER"), signer)
    anchor = tmp_path / "operator.ndncert"
    anchor.write_text(base64.encodebytes(bytes(cert)).decode())
    sock = tmp_path / "fw.sock"
    seen: dict[str, object] = {}

    async def scenario() -> None:
        fw = Forwarder(AsyncioClock())
        NfdManagement(fw, authenticator=authenticator_from_files([str(anchor)]))
        _, close = await open_listener(fw, ListenUri.parse(f"unix://{sock}"))
        app = NDNApp(face=UnixFace(str(sock)), keychain=KeychainDigest())

        async def client() -> None:
            try:
                seen["digest"] = await app.register("/by-digest", None)
                command = nfd_mgmt.make_command_v2("rib", "register", None, name="/by-key")
                _, _, reply = await app.express_interest(command, app_param=b"",
                                                         signer=signer, lifetime=1000)
                seen["ecdsa"] = nfd_mgmt.parse_response(reply)
                seen["fib"] = {prefix: fw.fib.find_exact(name_from_str(prefix)) is not None
                               for prefix in ("/by-digest", "/by-key")}
            finally:
                app.shutdown()

        try:
            await asyncio.wait_for(app.main_loop(after_start=client()), timeout=20)
            seen["drops"] = dict(fw.counters.drops)
        finally:
            close()

    asyncio.run(scenario())
    assert seen["digest"] is False  # python-ndn logs the 403 and returns False
    ecdsa = seen["ecdsa"]
    assert isinstance(ecdsa, dict) and ecdsa["status_code"] == 200
    assert seen["fib"] == {"/by-digest": False, "/by-key": True}
    assert seen["drops"] == {"command_untrusted": 1}


def test_forwarder_command_takes_trust_anchors(tmp_path: Path) -> None:
    """`dticn forwarder --trust-anchor hmac:FILE` as a process: python-ndn's default
    DigestSha256 registration is refused, a command signed with the shared key routes, and
    the refusal is counted under its reason in `dticn status --json`."""
    import json
    import subprocess
    import sys

    from ndn.security import HmacSha256Signer

    secret = tmp_path / "ops.key"
    secret.write_bytes(b"0123456789abcdef0123456789abcdef")
    sock = tmp_path / "fw.sock"
    proc = subprocess.Popen(
        [sys.executable, "-m", "dticn.cli", "forwarder", "--listen", f"unix://{sock}",
         "--status-interval", "0", "--trust-anchor", f"hmac:{secret}"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    assert proc.stdout is not None
    seen: dict[str, object] = {}
    try:
        while proc.stdout.readline().strip() not in ("READY", ""):
            pass
        app = NDNApp(face=UnixFace(str(sock)), keychain=KeychainDigest())
        signer = HmacSha256Signer("/site/ops/KEY/hmac", secret.read_bytes())

        async def client() -> None:
            try:
                seen["digest"] = await app.register("/by-digest", None)
                command = nfd_mgmt.make_command_v2("rib", "register", None, name="/by-hmac")
                _, _, reply = await app.express_interest(command, app_param=b"",
                                                         signer=signer, lifetime=1000)
                seen["hmac"] = nfd_mgmt.parse_response(reply)
                for flags in (["--json"], []):  # while this app's face (and routes) live
                    seen[str(flags)] = await asyncio.to_thread(
                        subprocess.run, [sys.executable, "-m", "dticn.cli", "status", *flags,
                                         "--transport", f"unix://{sock}"],
                        capture_output=True, text=True, timeout=60)
            finally:
                app.shutdown()

        app.run_forever(after_start=client())
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert seen["digest"] is False
    hmac_reply = seen["hmac"]
    assert isinstance(hmac_reply, dict) and hmac_reply["status_code"] == 200
    status, listing = seen["['--json']"], seen["[]"]
    assert isinstance(status, subprocess.CompletedProcess)
    assert isinstance(listing, subprocess.CompletedProcess)
    assert status.returncode == 0 and listing.returncode == 0, status.stderr + listing.stderr
    assert json.loads(status.stdout)["counters"]["drops"] == {"command_untrusted": 1}
    assert "/by-hmac" in listing.stdout and "/by-digest" not in listing.stdout
