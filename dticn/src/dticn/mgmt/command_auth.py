"""Checking the signature of a management command Interest (NFD signed commands).

Two signed forms reach ``/localhost/nfd/rib/...``:

* **v0.2 (command Interest)**: ``<command>/<params>/<timestamp>/<nonce>/<SignatureInfo>/
  <SignatureValue>``; the signature covers the Name's TLV-VALUE without its last
  component (https://redmine.named-data.net/projects/ndn-cxx/wiki/CommandInterest).
  python-ndn's ``NDNApp.register`` sends this form, DigestSha256-signed.
* **v0.3 (signed Interest)**: InterestSignatureInfo/Value after ApplicationParameters,
  optional SignatureTime/SignatureNonce inside the SignatureInfo
  (https://docs.named-data.net/NDN-packet-spec/current/signed-interest.html).

Checks, in order (each refusal has a reason; NfdManagement answers 403 and counts it):

1. Well-formed: the signature components/fields decode, the ParametersSha256Digest
   matches, the SignatureType is known. A DigestSha256 signature is always verified
   (anyone can compute one, so a wrong one only means a damaged or forged packet).
2. Trusted: with no trust anchor configured, NFD's default for ``/localhost`` applies
   (its ``authorize { certfile any }`` and ``localhost_security { trust-anchor { type
   any } }`` in nfd.conf.sample): any well-formed command from a local face is accepted,
   unsigned ones too, and key signatures are accepted unverified (logged at DEBUG). With
   anchors, only a signature that verifies under one of them is accepted.
3. Fresh (replay protection, ndn-cxx's ValidationPolicyCommandInterest): the timestamp
   (v0.2 component or v0.3 SignatureTime) must lie within :data:`GRACE_MS` of our clock
   and not be older than the last accepted one of the same key; a repeated
   (timestamp, nonce) pair is refused. Unlike ndn-cxx, an equal timestamp with a new
   nonce passes: python-ndn's ``make_command`` stamps milliseconds and an app
   registering two prefixes in one millisecond must not be refused. DigestSha256 and
   unsigned commands are keyed by face (no key name to key them by).
"""

from __future__ import annotations

import hashlib
import logging
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ndn.encoding import SignaturePtrs, SignatureType

from dticn.mgmt.trust import TrustAnchor
from dticn.packets import Interest, name_to_str

log = logging.getLogger(__name__)

GRACE_MS = 120_000
"""ndn-cxx ValidationPolicyCommandInterest's default grace period (2 minutes)."""
MAX_KEY_RECORDS = 1000
"""Keys whose last timestamp is remembered (ndn-cxx's default maxRecords)."""
TYPE_SIGNATURE_INFO = 0x16
TYPE_SIGNATURE_VALUE = 0x17
TYPE_PARAMETERS_DIGEST = b"\x02"
_KEY_TYPES = frozenset({SignatureType.SHA256_WITH_RSA, SignatureType.SHA256_WITH_ECDSA,
                        SignatureType.HMAC_WITH_SHA256, SignatureType.ED25519})


class CommandRefused(Exception):
    """A command failed a check; ``reason`` is the drop counter, ``text`` the 403 text."""

    def __init__(self, reason: str, text: str) -> None:
        super().__init__(text)
        self.reason = reason
        self.text = text


@dataclass(slots=True)
class SignedCommand:
    """What the checks need from one command Interest."""

    sig_ptrs: SignaturePtrs | None
    """None: the command is not signed."""
    timestamp_ms: int | None = None
    nonce: bytes | None = None


@dataclass(slots=True)
class _KeyRecord:
    timestamp_ms: int
    nonces: set[bytes] = field(default_factory=set)


class CommandAuthenticator:
    """Checks command Interests (see the module docstring); one per forwarder.

    ``wall_clock`` gives epoch seconds (injected: the manager has no clock of its own).
    """

    def __init__(
        self, anchors: Sequence[TrustAnchor] = (), wall_clock: Callable[[], float] | None = None,
    ) -> None:
        import time

        self.anchors = tuple(anchors)
        self._wall_clock = wall_clock or time.time
        self._records: OrderedDict[object, _KeyRecord] = OrderedDict()

    def check(self, interest: Interest, in_face_id: int) -> None:
        """Return when ``interest`` may run; raise :class:`CommandRefused` otherwise."""
        command = parse_signed_command(interest)
        ptrs = command.sig_ptrs
        if ptrs is None:
            if self.anchors:
                raise CommandRefused("command_unsigned", "Unsigned command; this forwarder "
                                     "has trust anchors: sign with one of their keys")
            log.debug("management: unsigned command from face %d accepted (no trust anchor)",
                      in_face_id)
            self._check_fresh(("face", in_face_id), command)
            return
        sig_type = ptrs.signature_info.signature_type
        if sig_type == SignatureType.DIGEST_SHA256:
            digest = hashlib.sha256(b"".join(bytes(p) for p in ptrs.signature_covered_part))
            if digest.digest() != bytes(ptrs.signature_value_buf):
                raise CommandRefused("command_bad_signature",
                                     "DigestSha256 signature does not match the command")
            if self.anchors:
                raise CommandRefused("command_untrusted", "DigestSha256 proves integrity, "
                                     "not who signed; sign with a key of a trust anchor")
            self._check_fresh(("face", in_face_id), command)
            return
        if sig_type not in _KEY_TYPES:
            raise CommandRefused("command_bad_signature", f"Unknown SignatureType {sig_type}")
        locator = ptrs.signature_info.key_locator
        key_name = tuple(bytes(c) for c in locator.name) if locator and locator.name else None
        if self.anchors:
            if not any(anchor.matches(ptrs) for anchor in self.anchors):
                raise CommandRefused("command_untrusted", "Signature does not verify under "
                                     "any trust anchor; sign with an anchor's key or add its "
                                     "certificate with --trust-anchor")
        else:
            log.debug("management: command signed with SignatureType %d from face %d "
                      "accepted unverified (no trust anchor)", sig_type, in_face_id)
        self._check_fresh(("key", key_name) if key_name else ("face", in_face_id), command)

    def _check_fresh(self, key: object, command: SignedCommand) -> None:
        ts = command.timestamp_ms
        if ts is None:
            return
        now_ms = int(self._wall_clock() * 1000)
        if abs(ts - now_ms) > GRACE_MS:
            raise CommandRefused("command_stale", "Command timestamp is "
                                 f"{(ts - now_ms) / 1000:+.0f} s from this host's clock "
                                 f"(allowed ±{GRACE_MS // 1000} s); synchronise the clocks")
        record = self._records.get(key)
        nonce = command.nonce or b""
        if record is not None:
            if ts < record.timestamp_ms or (ts == record.timestamp_ms and nonce in record.nonces):
                raise CommandRefused("command_replayed", "Command is older than, or repeats, "
                                     "the last one of its key (replayed?); sign a new one")
            if ts == record.timestamp_ms:
                record.nonces.add(nonce)
                return
        self._records[key] = _KeyRecord(ts, {nonce})
        self._records.move_to_end(key)
        while len(self._records) > MAX_KEY_RECORDS:
            self._records.popitem(last=False)


def parse_signed_command(interest: Interest) -> SignedCommand:
    """The signature of a command Interest in either form; raise :class:`CommandRefused`
    when it is malformed."""
    if interest.signature_info is not None:
        return _parse_v03(interest)
    name = interest.name
    if len(name) <= 5 or (len(name) == 6 and name[-1][:1] == TYPE_PARAMETERS_DIGEST):
        return SignedCommand(None)
    if len(name) != 9:
        raise CommandRefused("command_bad_signature", f"Command name has {len(name)} "
                             "components; a signed command has 9 (v0.2) or a signature "
                             "after its ApplicationParameters (v0.3)")
    return _parse_v02(name)


def _parse_v02(name: Sequence[bytes]) -> SignedCommand:
    from ndn.encoding import SignatureInfo
    from ndn.encoding.tlv_var import parse_tl_num

    def inner(component: bytes, want: int) -> bytes:
        """Value of the TLV ``want`` that fills the value of ``component``."""
        value = _component_value(component)
        typ, p = parse_tl_num(value, 0)
        length, q = parse_tl_num(value, p)
        if typ != want or p + q + length != len(value):
            raise ValueError(f"expected TLV type {want:#x}")
        return value[p + q:]

    try:
        info = SignatureInfo.parse(inner(name[-2], TYPE_SIGNATURE_INFO))
        value = inner(name[-1], TYPE_SIGNATURE_VALUE)
        timestamp = int.from_bytes(_component_value(name[-4]), "big")
    except Exception as exc:  # python-ndn's parsers raise plain exceptions
        raise CommandRefused("command_bad_signature",
                             f"Malformed command signature: {exc}") from None
    if info.signature_type is None:
        raise CommandRefused("command_bad_signature", "SignatureInfo without SignatureType")
    ptrs = SignaturePtrs(signature_info=info, signature_covered_part=[b"".join(name[:-1])],
                         signature_value_buf=value)
    return SignedCommand(ptrs, timestamp, _component_value(name[-3]))


def _parse_v03(interest: Interest) -> SignedCommand:
    from ndn.encoding import parse_interest

    try:
        _, _, _, ptrs = parse_interest(interest.wire)
    except Exception as exc:
        raise CommandRefused("command_bad_signature",
                             f"Malformed signed Interest: {exc}") from None
    info = ptrs.signature_info
    if info is None or info.signature_type is None or ptrs.signature_value_buf is None:
        raise CommandRefused("command_bad_signature", "InterestSignatureInfo without "
                             "SignatureType or InterestSignatureValue")
    if ptrs.digest_value_buf is not None:
        digest = hashlib.sha256(b"".join(bytes(p) for p in ptrs.digest_covered_part or []))
        if digest.digest() != bytes(ptrs.digest_value_buf):
            raise CommandRefused("command_bad_signature", "ParametersSha256DigestComponent "
                                 "does not match the parameters and signature")
    nonce = info.signature_nonce  # python-ndn reads the spec's octets as an integer
    return SignedCommand(ptrs, info.signature_time,
                         None if nonce is None else int(nonce).to_bytes(8, "big"))


def _component_value(component: bytes) -> bytes:
    from ndn.encoding.tlv_var import parse_tl_num

    _, p = parse_tl_num(component, 0)
    length, q = parse_tl_num(component, p)
    return bytes(component[p + q:p + q + length])


def authenticator_from_files(
    specs: Sequence[str], wall_clock: Callable[[], float] | None = None
) -> CommandAuthenticator:
    """The authenticator for ``dticn forwarder --trust-anchor`` values (none: NFD's
    localhost default); raises :class:`dticn.mgmt.trust.TrustAnchorError` (a ValueError,
    one line on the command line) for a file that cannot be used."""
    from dticn.mgmt.trust import load_trust_anchors

    anchors = load_trust_anchors(list(specs))
    for anchor in anchors:
        log.info("trust anchor %s: %s", anchor.source, "any key name" if anchor.key_name is None
                 else "key " + name_to_str(anchor.key_name))
    return CommandAuthenticator(anchors, wall_clock)
