"""python-ndn NDNApp plumbing shared by the CLI tools (`ping`, `get`, `put`)."""

from __future__ import annotations

import os
from typing import Any


def make_app(transport: str | None) -> Any:
    """An NDNApp on ``transport`` (else $NDN_CLIENT_TRANSPORT) signing with DigestSha256,
    so the tools need no keychain on disk."""
    from ndn.app import NDNApp
    from ndn.client_conf import default_face
    from ndn.security import KeychainDigest

    uri = transport or os.environ.get("NDN_CLIENT_TRANSPORT") or "tcp://127.0.0.1:6363"
    return NDNApp(face=default_face(uri), keychain=KeychainDigest())
