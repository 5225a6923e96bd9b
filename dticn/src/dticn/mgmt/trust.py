"""Trust anchors for signed management commands (``dticn forwarder --trust-anchor``).

An anchor is a key that may sign ``rib/register`` and ``rib/unregister``. Three file
forms are read:

* an NDN certificate: a Data packet whose name is ``<key name>/<issuer>/<version>`` and
  whose Content is the public key (SubjectPublicKeyInfo DER), as ``ndnsec cert-dump``
  prints it (base64) or as binary TLV. Only signatures whose KeyLocator names this key
  (or a certificate of it) match, as in python-ndn's ``KnownChecker``.
* a PEM public key (``-----BEGIN PUBLIC KEY-----``; ECDSA P-256, RSA or Ed25519): any
  KeyLocator matches; the signature decides.
* ``hmac:PATH``: the file's bytes are a shared HMAC-SHA256 secret; any KeyLocator matches.

Verification uses python-ndn's checkers (``ndn.security.validator.known_key_validator``).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ndn.encoding import Name as NdnName
from ndn.encoding import SignaturePtrs, SignatureType

FORMS = ("an NDN certificate (ndnsec cert-dump), a PEM public key, or hmac:SECRET_FILE")


class TrustAnchorError(ValueError):
    """A trust anchor file could not be used; the message names the file and the fix."""


@dataclass(frozen=True)
class TrustAnchor:
    """One key allowed to sign management commands."""

    source: str
    signature_type: int
    key: Any
    """The imported public key (pycryptodome) or, for HMAC, the secret bytes."""
    key_name: tuple[bytes, ...] | None = None

    def matches(self, sig_ptrs: SignaturePtrs) -> bool:
        """True when ``sig_ptrs`` is signed with this key (type, KeyLocator, signature)."""
        from ndn.security.validator.known_key_validator import (
            verify_ecdsa,
            verify_ed25519,
            verify_hmac,
            verify_rsa,
        )

        info = sig_ptrs.signature_info
        if info is None or info.signature_type != self.signature_type:
            return False
        if self.key_name is not None:
            locator = info.key_locator.name if info.key_locator is not None else None
            if not locator or not NdnName.is_prefix(list(self.key_name), locator):
                return False
        verify = {
            SignatureType.SHA256_WITH_ECDSA: verify_ecdsa,
            SignatureType.SHA256_WITH_RSA: verify_rsa,
            SignatureType.ED25519: verify_ed25519,
            SignatureType.HMAC_WITH_SHA256: verify_hmac,
        }[self.signature_type]
        return bool(verify(self.key, sig_ptrs))


def load_trust_anchor(spec: str) -> TrustAnchor:
    """Read one ``--trust-anchor`` value; raise :class:`TrustAnchorError` saying why not."""
    if spec.startswith("hmac:"):
        secret = _read(spec[5:], spec)
        if not secret:
            raise TrustAnchorError(f"--trust-anchor {spec}: the secret file is empty; put the "
                                   "shared HMAC key's bytes in it")
        return TrustAnchor(spec, SignatureType.HMAC_WITH_SHA256, secret)
    raw = _read(spec, spec)
    if raw.lstrip().startswith(b"-----BEGIN"):
        sig_type, key = _import_public_key(raw, spec)
        return TrustAnchor(spec, sig_type, key)
    wire = _certificate_bytes(raw)
    if wire is None:
        raise TrustAnchorError(f"--trust-anchor {spec}: not {FORMS}")
    from ndn.app_support.security_v2 import parse_certificate

    try:
        cert = parse_certificate(wire)
    except Exception as exc:  # python-ndn raises bare Exceptions on bad TLV
        raise TrustAnchorError(f"--trust-anchor {spec}: not a readable NDN certificate "
                               f"({exc}); export it with ndnsec cert-dump") from None
    if cert.name is None or len(cert.name) < 4 or not cert.content:
        raise TrustAnchorError(f"--trust-anchor {spec}: a certificate needs a name "
                               "/<identity>/KEY/<key-id>/<issuer>/<version> and a public key")
    sig_type, key = _import_public_key(bytes(cert.content), spec)
    return TrustAnchor(spec, sig_type, key, tuple(bytes(c) for c in cert.name[:-2]))


def load_trust_anchors(specs: list[str]) -> list[TrustAnchor]:
    """Every ``--trust-anchor`` value, in order."""
    return [load_trust_anchor(spec) for spec in specs]


def _read(path: str, spec: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise TrustAnchorError(f"--trust-anchor {spec}: cannot read {path} "
                               f"({exc.strerror}); give {FORMS}") from None


def _certificate_bytes(raw: bytes) -> bytes | None:
    """The certificate's TLV, from binary or base64 text; None when neither."""
    if raw[:1] == b"\x06":
        return raw
    try:
        wire = base64.b64decode(b"".join(raw.split()), validate=True)
    except (binascii.Error, ValueError):
        return None
    return wire if wire[:1] == b"\x06" else None


def _import_public_key(der_or_pem: bytes, spec: str) -> tuple[int, Any]:
    from Cryptodome.PublicKey import ECC, RSA

    try:
        key = ECC.import_key(der_or_pem)
    except (ValueError, IndexError, TypeError):
        try:
            key = RSA.import_key(der_or_pem)
        except (ValueError, IndexError, TypeError):
            raise TrustAnchorError(f"--trust-anchor {spec}: holds no ECDSA, RSA or Ed25519 "
                                   f"public key; give {FORMS}") from None
    if key.has_private():
        raise TrustAnchorError(f"--trust-anchor {spec}: is a private key; give the public "
                               "key or certificate (keep the private key with the signer)")
    if isinstance(key, RSA.RsaKey):
        return SignatureType.SHA256_WITH_RSA, key
    if key.curve.lower() in ("ed25519", "ed448"):
        return SignatureType.ED25519, key
    return SignatureType.SHA256_WITH_ECDSA, key
