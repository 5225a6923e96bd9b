"""Signed registration commands: python-ndn's own signers (DigestSha256, ECDSA, HMAC) in
both command forms, checked against trust anchors in the files an operator would give."""

from __future__ import annotations

import base64
import logging
import struct
import time
from pathlib import Path

import pytest
from Cryptodome.PublicKey import ECC
from ndn.app_support import nfd_mgmt
from ndn.app_support.security_v2 import self_sign
from ndn.encoding import Component, InterestParam, Name, SignatureInfo, Signer, make_interest
from ndn.security import DigestSha256Signer, HmacSha256Signer, Sha256WithEcdsaSigner

from dticn.forwarder.face import FaceScope, RecordingFace
from dticn.forwarder.forwarder import Forwarder
from dticn.mgmt.command_auth import CommandAuthenticator, CommandRefused
from dticn.mgmt.nfd import NfdManagement
from dticn.mgmt.trust import TrustAnchorError, load_trust_anchor
from dticn.packets import Data, decode_packet, name_from_str
from dticn.packets.tlv import encode_tlv
from dticn.sim.kernel import EventKernel

KEY_NAME = "/operator/KEY/k1"


def _setup(anchors: list[str] = (), clock=time.time):  # type: ignore[assignment]
    kernel = EventKernel()
    fw = Forwarder(kernel)
    auth = CommandAuthenticator([load_trust_anchor(a) for a in anchors], wall_clock=clock)
    NfdManagement(fw, wall_clock=clock, authenticator=auth)
    app = RecordingFace(scope=FaceScope.LOCAL)
    fw.add_face(app)
    return kernel, fw, app


def _reply(kernel: EventKernel, app: RecordingFace) -> dict:
    kernel.run(until=kernel.now() + 0.01)
    [wire] = app.take()
    data = decode_packet(wire)
    assert isinstance(data, Data)
    return nfd_mgmt.parse_response(data.content)


def v03(prefix: str, signer: Signer | None, nonce: int = 1) -> bytes:
    """The signed-Interest form (what make_command_v2 plus a signer send)."""
    name = nfd_mgmt.make_command_v2("rib", "register", None, name=prefix)
    return bytes(make_interest(name, InterestParam(nonce=nonce, lifetime=1000),
                               app_param=b"" if signer else None, signer=signer))


def v02(prefix: str, signer: Signer, timestamp_ms: int | None = None,
        nonce: bytes = b"\x00" * 7 + b"\x01") -> bytes:
    """The command-Interest form, as python-ndn's make_command builds it, with any signer."""
    name = nfd_mgmt.make_command_v2("rib", "register", None, name=prefix)
    stamp = int(time.time() * 1000) if timestamp_ms is None else timestamp_ms
    name += [Component.from_bytes(struct.pack("!Q", stamp)), Component.from_bytes(nonce)]
    info = SignatureInfo()
    signer.write_signature_info(info)
    name.append(Component.from_bytes(encode_tlv(0x16, bytes(info.encode()))))
    value = bytearray(signer.get_signature_value_size())
    size = signer.write_signature_value(memoryview(value), name)
    name.append(Component.from_bytes(encode_tlv(0x17, bytes(value[:size]))))
    return bytes(make_interest(name, InterestParam(nonce=7, lifetime=1000)))


def _ecdsa() -> tuple[Sha256WithEcdsaSigner, ECC.EccKey]:
    key = ECC.generate(curve="P-256")
    return Sha256WithEcdsaSigner(KEY_NAME, key.export_key(format="DER")), key


def _certificate_file(tmp_path: Path, signer: Signer, key: ECC.EccKey) -> str:
    _, wire = self_sign(KEY_NAME, key.public_key().export_key(format="DER"), signer)
    path = tmp_path / "operator.ndncert"
    path.write_text(base64.encodebytes(bytes(wire)).decode())  # as ndnsec cert-dump
    return str(path)


class Corrupting(Signer):
    """Signs as ``inner`` does, then flips one bit of the signature (a wrong value)."""

    def __init__(self, inner: Signer) -> None:
        self.inner = inner

    def write_signature_info(self, signature_info: SignatureInfo) -> None:
        self.inner.write_signature_info(signature_info)

    def get_signature_value_size(self) -> int:
        return self.inner.get_signature_value_size()

    def write_signature_value(self, wire, contents) -> int:  # type: ignore[no-untyped-def]
        size = self.inner.write_signature_value(wire, contents)
        wire[0] ^= 1
        return size


@pytest.mark.parametrize("form", ["v0.2", "v0.3"])
def test_digest_signature_is_verified(form: str) -> None:
    kernel, fw, app = _setup()
    build = v02 if form == "v0.2" else v03
    app.deliver(build("/good", DigestSha256Signer(for_interest=form == "v0.3")))
    assert _reply(kernel, app)["status_code"] == 200
    app.deliver(build("/bad", Corrupting(DigestSha256Signer(for_interest=form == "v0.3"))))
    resp = _reply(kernel, app)
    assert resp["status_code"] == 403 and "DigestSha256" in resp["status_text"]
    assert fw.counters.drops["command_bad_signature"] == 1
    assert fw.fib.find_exact(name_from_str("/bad")) is None


def test_python_ndn_make_command_is_accepted_and_a_replay_refused() -> None:
    """A replayed command is refused once it reaches management; while the first reply
    is in the Content Store, the CS answers the replay with it (as in NFD) and nothing runs
    twice either way."""
    kernel, _fw, app = _setup()
    wire = bytes(make_interest(nfd_mgmt.make_command("rib", "register", None, name="/r"),
                               InterestParam(nonce=3, lifetime=1000)))
    app.deliver(wire)
    assert _reply(kernel, app)["status_code"] == 200
    auth = CommandAuthenticator()
    interest = decode_packet(wire)
    auth.check(interest, app.face_id)
    with pytest.raises(CommandRefused, match="replayed") as refused:
        auth.check(interest, app.face_id)
    assert refused.value.reason == "command_replayed"


def test_same_millisecond_commands_with_new_nonces_pass_older_ones_do_not() -> None:
    kernel, _fw, app = _setup()
    now = int(time.time() * 1000)
    codes = []
    for k, stamp in enumerate((now, now, now - 5)):
        app.deliver(v02(f"/n{k}", DigestSha256Signer(), stamp, nonce=bytes([k]) * 8))
        codes.append(_reply(kernel, app)["status_code"])
    assert codes == [200, 200, 403]


def test_stale_timestamp_is_refused() -> None:
    kernel, fw, app = _setup(clock=lambda: time.time() + 3600)
    app.deliver(v02("/late", DigestSha256Signer()))
    resp = _reply(kernel, app)
    assert resp["status_code"] == 403 and "clock" in resp["status_text"]
    assert fw.counters.drops["command_stale"] == 1


def test_key_signatures_without_anchor_follow_nfd_localhost_default(
    caplog: pytest.LogCaptureFixture,
) -> None:
    kernel, _, app = _setup()
    signer, _ = _ecdsa()
    with caplog.at_level(logging.DEBUG, logger="dticn.mgmt.command_auth"):
        app.deliver(v03("/e", signer))
        assert _reply(kernel, app)["status_code"] == 200
    assert "accepted unverified (no trust anchor)" in caplog.text
    assert all(r.levelno == logging.DEBUG for r in caplog.records)


@pytest.mark.parametrize("form", ["v0.2", "v0.3"])
def test_ecdsa_against_a_certificate_anchor(tmp_path: Path, form: str) -> None:
    signer, key = _ecdsa()
    kernel, fw, app = _setup([_certificate_file(tmp_path, signer, key)])
    build = v02 if form == "v0.2" else v03
    app.deliver(build("/ok", signer))
    assert _reply(kernel, app)["status_code"] == 200
    stranger, _ = _ecdsa()  # same key name, another key
    app.deliver(build("/intruder", stranger, nonce=b"\x02" * 8) if form == "v0.2"
                else build("/intruder", stranger, nonce=2))
    resp = _reply(kernel, app)
    assert resp["status_code"] == 403 and "trust anchor" in resp["status_text"]
    assert fw.counters.drops["command_untrusted"] == 1
    assert fw.fib.find_exact(name_from_str("/intruder")) is None


def test_anchors_refuse_digest_and_unsigned_commands(tmp_path: Path) -> None:
    signer, key = _ecdsa()
    kernel, fw, app = _setup([_certificate_file(tmp_path, signer, key)])
    app.deliver(v02("/d", DigestSha256Signer()))
    assert "not who signed" in _reply(kernel, app)["status_text"]
    app.deliver(v03("/u", None))
    resp = _reply(kernel, app)
    assert resp["status_code"] == 403 and "Unsigned" in resp["status_text"]
    assert fw.counters.drops["command_untrusted"] == 1
    assert fw.counters.drops["command_unsigned"] == 1


def test_pem_public_key_and_hmac_anchors(tmp_path: Path) -> None:
    signer, key = _ecdsa()
    pem = tmp_path / "operator.pem"
    pem.write_text(key.public_key().export_key(format="PEM"))
    secret = tmp_path / "secret"
    secret.write_bytes(b"shared secret of the site")
    kernel, _, app = _setup([str(pem), f"hmac:{secret}"])
    app.deliver(v03("/pem", signer))
    assert _reply(kernel, app)["status_code"] == 200
    app.deliver(v03("/hmac", HmacSha256Signer("/site/hmac", secret.read_bytes()), nonce=2))
    assert _reply(kernel, app)["status_code"] == 200
    app.deliver(v03("/wrong", HmacSha256Signer("/site/hmac", b"guess"), nonce=3))
    assert _reply(kernel, app)["status_code"] == 403


def test_malformed_v02_signature_components_are_refused() -> None:
    kernel, fw, app = _setup()
    name = nfd_mgmt.make_command_v2("rib", "register", None, name="/m")
    name += [Component.from_bytes(b"\x00" * 8), Component.from_bytes(b"n"),
             Component.from_bytes(b"not a SignatureInfo"), Component.from_bytes(b"x")]
    app.deliver(bytes(make_interest(name, InterestParam(nonce=9, lifetime=1000))))
    resp = _reply(kernel, app)
    assert resp["status_code"] == 403 and "Malformed" in resp["status_text"]
    assert fw.counters.drops["command_bad_signature"] == 1


def test_trust_anchor_files_that_cannot_be_used(tmp_path: Path) -> None:
    private = tmp_path / "private.pem"
    private.write_text(ECC.generate(curve="P-256").export_key(format="PEM"))
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"\x01\x02 not a key")
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    for spec, words in ((str(tmp_path / "missing"), "cannot read"),
                        (str(private), "private key"), (str(garbage), "not an NDN certificate"),
                        (f"hmac:{empty}", "empty")):
        with pytest.raises(TrustAnchorError, match=words):
            load_trust_anchor(spec)


def test_certificate_anchor_key_name_must_match(tmp_path: Path) -> None:
    signer, key = _ecdsa()
    kernel, _, app = _setup([_certificate_file(tmp_path, signer, key)])
    renamed = Sha256WithEcdsaSigner("/someone/else/KEY/k1", key.export_key(format="DER"))
    app.deliver(v03("/x", renamed))
    assert _reply(kernel, app)["status_code"] == 403
    assert Name.to_str(Name.from_str(KEY_NAME)) == KEY_NAME
