"""Which Data answers which Interest: names, implicit digests, CanBePrefix."""

from __future__ import annotations

import hashlib

from dticn.packets.name import TYPE_IMPLICIT_SHA256, Name
from dticn.packets.ndn import Data, Interest


def implicit_digest(data: Data) -> bytes:
    """The ImplicitSha256DigestComponent of a Data: SHA-256 over its whole wire."""
    return b"\x01\x20" + hashlib.sha256(data.encode()).digest()


def full_name(data: Data) -> Name:
    """The Data's name with its implicit digest appended."""
    return (*data.name, implicit_digest(data))


def data_matches(interest: Interest, data: Data) -> bool:
    """Name match of a Data against an Interest: exact, prefix with CanBePrefix, and
    an Interest name ending in an implicit digest matches the Data's full name."""
    name = interest.name
    target = full_name(data) if name and name[-1][0] == TYPE_IMPLICIT_SHA256 else data.name
    if interest.can_be_prefix:
        n = len(name)
        return len(target) >= n and target[:n] == name
    return target == name
