"""NDN names as hashable tuples of encoded components.

A :data:`Name` is a ``tuple[bytes, ...]`` whose items are whole component TLVs (type,
length and value), so typed components (``seg=``, ``v=``, ``params-sha256=``) keep their
type, names hash and compare fast as dict keys (FIB, PIT, CS), and a prefix is a slice.
Parsing and printing the URI form is delegated to python-ndn so both sides agree on
escaping and typed-component syntax.
"""

from __future__ import annotations

from ndn.encoding import Name as _NdnName

from dticn.packets.tlv import MAX_NDN_PACKET_SIZE, DecodeError, encode_var, read_element

Name = tuple[bytes, ...]

TYPE_NAME = 0x07
TYPE_GENERIC = 0x08
TYPE_IMPLICIT_SHA256 = 0x01
TYPE_PARAMS_SHA256 = 0x02

MAX_NAME_BYTES = MAX_NDN_PACKET_SIZE - 8
"""The longest Name TLV-VALUE a valid packet holds: an 8800-byte Interest carrying only
its Name (outer and Name headers of a 1-byte TYPE and a 3-byte LENGTH each; Nonce and the
rest are optional in v0.3). A name that fits in a valid packet is a valid name."""
MAX_NAME_COMPONENTS = MAX_NAME_BYTES // 2
"""The most components such a name has (a component takes at least 2 bytes)."""


def name_from_str(uri: str) -> Name:
    """Parse an NDN URI (``/a/b/seg=3``) into a :data:`Name`."""
    return tuple(bytes(c) for c in _NdnName.from_str(uri))


def name_to_str(name: Name) -> str:
    """Render a :data:`Name` as an NDN URI."""
    return _NdnName.to_str(list(name))


def encode_name(name: Name) -> bytes:
    """The Name TLV."""
    value = b"".join(name)
    return encode_var(TYPE_NAME) + encode_var(len(value)) + value


class NameTooLong(DecodeError):
    """A Name longer than the reader's limit: refused before it is split, so a name of
    thousands of components costs one comparison, not one allocation per component."""


def decode_name_value(
    buf: bytes | memoryview, start: int, end: int, max_bytes: int | None = None
) -> Name:
    """Split a Name's TLV-VALUE into components, checking each component's shape.

    ``max_bytes`` bounds the TLV-VALUE (every component takes at least two bytes, so it
    bounds the component count too); a longer name raises :class:`NameTooLong` before
    it is split. The components are walked by the packets' one element reader
    (:func:`~dticn.packets.tlv.read_element`); every packet's name goes through here,
    so it does no more than check each type and slice each component out.
    """
    if max_bytes is not None and end - start > max_bytes:
        raise NameTooLong(f"name of {end - start} bytes exceeds the {max_bytes}-byte limit")
    if type(buf) is not bytes:
        buf = bytes(buf)
    comps: list[bytes] = []
    append = comps.append
    pos = start
    while pos < end:
        typ, s, e = read_element(buf, pos, end)
        if typ <= TYPE_PARAMS_SHA256:
            if typ == 0:
                raise DecodeError("name component type 0 outside 1..65535")
            if e - s != 32:
                raise DecodeError(f"digest component of type {typ} must be 32 bytes")
        elif typ > 0xFFFF:
            raise DecodeError(f"name component type {typ} outside 1..65535")
        append(buf[pos:e])
        pos = e
    return tuple(comps)


def is_prefix(prefix: Name, name: Name) -> bool:
    """True when ``prefix`` is a (non-strict) prefix of ``name``."""
    return len(prefix) <= len(name) and name[: len(prefix)] == prefix
