"""NDN packet format v0.3 Interest and Data, as small typed dataclasses.

Decoding is a strict hand-written walk (see :mod:`dticn.packets.tlv` for why); encoding
writes the same bytes python-ndn's ``make_interest``/``make_data`` write for the same
fields (asserted byte for byte in ``tests/packets``). Every decoded packet keeps its
original ``wire`` so the forwarder relays exactly what it received (signed Interests
stay valid); only the HopLimit byte is patched in place when it is decremented.

Unknown critical elements (type <= 31 or odd), out-of-order or repeated known elements
raise :class:`DecodeError`; unknown non-critical elements are skipped.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from types import MappingProxyType

from dticn.packets.name import (
    TYPE_NAME,
    TYPE_PARAMS_SHA256,
    Name,
    decode_name_value,
    encode_name,
)
from dticn.packets.ndn_types import (
    DEFAULT_INTEREST_LIFETIME_MS,
    TYPE_APPLICATION_PARAMETERS,
    TYPE_CAN_BE_PREFIX,
    TYPE_CONTENT,
    TYPE_CONTENT_TYPE,
    TYPE_DATA,
    TYPE_FINAL_BLOCK_ID,
    TYPE_FORWARDING_HINT,
    TYPE_FRESHNESS_PERIOD,
    TYPE_HOP_LIMIT,
    TYPE_INTEREST,
    TYPE_INTEREST_LIFETIME,
    TYPE_INTEREST_SIGNATURE_INFO,
    TYPE_INTEREST_SIGNATURE_VALUE,
    TYPE_META_INFO,
    TYPE_MUST_BE_FRESH,
    TYPE_NONCE,
    TYPE_SIGNATURE_INFO,
    TYPE_SIGNATURE_TYPE,
    TYPE_SIGNATURE_VALUE,
    ContentType,
    SignatureType,
)
from dticn.packets.tlv import (
    MAX_NDN_PACKET_SIZE,
    DecodeError,
    decode_uint,
    encode_tlv,
    encode_uint,
    encode_var,
    is_critical,
    iter_elements,
    read_element,
    read_outer,
)

# Order in which Interest elements may appear (v0.3, section "Interest").
_INTEREST_ORDER = MappingProxyType({
    TYPE_NAME: 0,
    TYPE_CAN_BE_PREFIX: 1,
    TYPE_MUST_BE_FRESH: 2,
    TYPE_FORWARDING_HINT: 3,
    TYPE_NONCE: 4,
    TYPE_INTEREST_LIFETIME: 5,
    TYPE_HOP_LIMIT: 6,
    TYPE_APPLICATION_PARAMETERS: 7,
    TYPE_INTEREST_SIGNATURE_INFO: 8,
    TYPE_INTEREST_SIGNATURE_VALUE: 9,
})
_DATA_ORDER = MappingProxyType({
    TYPE_NAME: 0,
    TYPE_META_INFO: 1,
    TYPE_CONTENT: 2,
    TYPE_SIGNATURE_INFO: 3,
    TYPE_SIGNATURE_VALUE: 4,
})

_INTEREST_ORDER_FAST: dict[int, int] = dict(_INTEREST_ORDER)
_DATA_ORDER_FAST: dict[int, int] = dict(_DATA_ORDER)
"""Plain-dict copies for the decoders' inner loops (a dict lookup is cheaper than a
mappingproxy's); never mutated."""

_META_ORDER = MappingProxyType(
    {TYPE_CONTENT_TYPE: 0, TYPE_FRESHNESS_PERIOD: 1, TYPE_FINAL_BLOCK_ID: 2}
)


@dataclass(slots=True)
class Interest:
    """An Interest. ``lifetime_ms`` None means the default 4 s applies.

    ``hop_limit_offset`` is the offset of the HopLimit value byte in ``wire`` (set by
    the decoder) so a forwarder can decrement it without re-encoding.
    """

    name: Name
    can_be_prefix: bool = False
    must_be_fresh: bool = False
    nonce: int | None = None
    lifetime_ms: int | None = None
    hop_limit: int | None = None
    app_parameters: bytes | None = None
    forwarding_hint: bytes | None = None
    signature_info: bytes | None = None
    signature_value: bytes | None = None
    wire: bytes = field(default=b"", repr=False)
    hop_limit_offset: int = field(default=-1, repr=False)

    @property
    def lifetime(self) -> float:
        """InterestLifetime in seconds (default 4 s)."""
        ms = DEFAULT_INTEREST_LIFETIME_MS if self.lifetime_ms is None else self.lifetime_ms
        return ms / 1000.0

    def encode(self) -> bytes:
        """Encode (or return the cached wire); fills ``wire``."""
        if not self.wire:
            self.wire = encode_interest(self)
        return self.wire

    def with_hop_limit(self, hop_limit: int) -> Interest:
        """A copy whose wire carries ``hop_limit`` (patched in place, signatures intact)."""
        if self.hop_limit_offset < 0:
            raise ValueError("Interest has no HopLimit element to rewrite")
        wire = bytearray(self.encode())
        wire[self.hop_limit_offset] = hop_limit
        out = _copy_interest(self)
        out.hop_limit = hop_limit
        out.wire = bytes(wire)
        return out


def _copy_interest(i: Interest) -> Interest:
    return Interest(
        i.name, i.can_be_prefix, i.must_be_fresh, i.nonce, i.lifetime_ms, i.hop_limit,
        i.app_parameters, i.forwarding_hint, i.signature_info, i.signature_value, i.wire,
        i.hop_limit_offset,
    )


@dataclass(slots=True)
class Data:
    """A Data packet. ``freshness_ms`` None means "stale at once" for MustBeFresh."""

    name: Name
    content: bytes = b""
    content_type: int = ContentType.BLOB
    freshness_ms: int | None = None
    final_block_id: bytes | None = None
    signature_type: int | None = SignatureType.DIGEST_SHA256
    signature_value: bytes | None = None
    wire: bytes = field(default=b"", repr=False)
    empty_signature: bool = False
    """Encode SignatureType DigestSha256 with an empty SignatureValue (what CCN-lite writes;
    the artifact's items), not the 32-byte digest."""

    def encode(self) -> bytes:
        """Encode with a DigestSha256 signature (or return the cached wire)."""
        if not self.wire:
            self.wire = encode_data(self)
        return self.wire


def encode_interest(interest: Interest) -> bytes:
    """Encode an unsigned Interest exactly as python-ndn's ``make_interest`` does.

    With ApplicationParameters the ParametersSha256DigestComponent is appended to the
    name (replacing one already there), as the spec requires.
    """
    name = interest.name
    params = b""
    if interest.app_parameters is not None:
        params = encode_tlv(TYPE_APPLICATION_PARAMETERS, interest.app_parameters)
        if interest.signature_info is not None:
            params += encode_tlv(TYPE_INTEREST_SIGNATURE_INFO, interest.signature_info)
            params += encode_tlv(TYPE_INTEREST_SIGNATURE_VALUE, interest.signature_value or b"")
        digest = hashlib.sha256(params).digest()
        name = tuple(c for c in name if c[0] != TYPE_PARAMS_SHA256)
        name = (*name, bytes((TYPE_PARAMS_SHA256, 32)) + digest)
        interest.name = name
    parts = [encode_name(name)]
    if interest.can_be_prefix:
        parts.append(b"\x21\x00")
    if interest.must_be_fresh:
        parts.append(b"\x12\x00")
    if interest.forwarding_hint is not None:
        parts.append(encode_tlv(TYPE_FORWARDING_HINT, interest.forwarding_hint))
    if interest.nonce is not None:
        parts.append(b"\x0a\x04" + (interest.nonce & 0xFFFFFFFF).to_bytes(4, "big"))
    if interest.lifetime_ms is not None:
        parts.append(encode_tlv(TYPE_INTEREST_LIFETIME, encode_uint(interest.lifetime_ms)))
    hop_offset_in_value = -1
    if interest.hop_limit is not None:
        hop_offset_in_value = sum(len(p) for p in parts) + 2
        parts.append(b"\x22\x01" + bytes((interest.hop_limit,)))
    parts.append(params)
    value = b"".join(parts)
    header = encode_var(TYPE_INTEREST) + encode_var(len(value))
    if hop_offset_in_value >= 0:
        interest.hop_limit_offset = len(header) + hop_offset_in_value
    return header + value


def encode_data(data: Data) -> bytes:
    """Encode a Data signed with DigestSha256, as python-ndn's ``make_data`` does.

    python-ndn always writes ContentType inside MetaInfo (BLOB = 0 included); so do we.
    """
    meta = encode_tlv(TYPE_CONTENT_TYPE, encode_uint(data.content_type))
    if data.freshness_ms is not None:
        meta += encode_tlv(TYPE_FRESHNESS_PERIOD, encode_uint(data.freshness_ms))
    if data.final_block_id is not None:
        meta += encode_tlv(TYPE_FINAL_BLOCK_ID, data.final_block_id)
    signed = (
        encode_name(data.name)
        + encode_tlv(TYPE_META_INFO, meta)
        + encode_tlv(TYPE_CONTENT, data.content)
        + b"\x16\x03\x1b\x01\x00"
    )
    digest = b"" if data.empty_signature else hashlib.sha256(signed).digest()
    data.signature_type = SignatureType.DIGEST_SHA256
    data.signature_value = digest
    value = signed + encode_tlv(TYPE_SIGNATURE_VALUE, digest)
    return encode_var(TYPE_DATA) + encode_var(len(value)) + value


def check_size(wire: bytes | memoryview) -> None:
    """Refuse a network-layer packet over the 8800-byte limit."""
    if len(wire) > MAX_NDN_PACKET_SIZE:
        raise DecodeError(
            f"packet of {len(wire)} bytes exceeds the {MAX_NDN_PACKET_SIZE}-byte limit"
        )


def _unexpected(rank: int, typ: int, packet: str) -> None:
    """An element out of place (``rank`` -1: a type this packet does not know): skipped
    when unknown and non-critical, else :class:`DecodeError`."""
    if rank < 0:
        if is_critical(typ):
            raise DecodeError(f"unknown critical element type {typ} in {packet}")
        return
    raise DecodeError(f"element type {typ} repeated or out of order in {packet}")


def packet_value(wire: bytes, typ: int) -> tuple[bytes, int, int]:
    """``(buf, value_start, value_end)`` of a network-layer packet whose outer type must be
    ``typ`` and whose size must be within the packet limit."""
    buf = wire if type(wire) is bytes else bytes(wire)
    if len(buf) > MAX_NDN_PACKET_SIZE:
        check_size(buf)
    _, start, end = read_outer(buf, typ)
    return buf, start, end


def decode_interest(wire: bytes, max_name_bytes: int | None = None) -> Interest:
    """Decode an Interest TLV (outer type 5); raise :class:`DecodeError` if malformed
    (:class:`~dticn.packets.name.NameTooLong` past ``max_name_bytes``)."""
    buf, start, end = packet_value(wire, TYPE_INTEREST)
    return interest_from_value(buf, start, end, max_name_bytes)


def interest_from_value(buf: bytes, start: int, end: int,
                        max_name_bytes: int | None = None) -> Interest:
    """The Interest whose outer TLV-VALUE is ``buf[start:end]`` (and whose whole wire is
    ``buf``), for a caller that read the outer TLV already
    (:func:`dticn.packets.decode_packet`).

    One pass over the elements (:func:`~dticn.packets.tlv.read_element`); order,
    repetition and critical types are checked as the packet format says. Values the
    forwarder does not look at (ApplicationParameters, signature) are sliced, never
    parsed: ``buf`` is what gets relayed.
    """
    name: Name = ()
    can_be_prefix = must_be_fresh = False
    nonce = lifetime_ms = hop_limit = None
    params = hint = sig_info = sig_value = None
    hop_offset = -1
    last = -1
    order = _INTEREST_ORDER_FAST
    pos = start
    while pos < end:
        typ, s, e = read_element(buf, pos, end)
        pos = e
        rank = order.get(typ, -1)
        if rank <= last:
            _unexpected(rank, typ, "Interest")
            continue
        last = rank
        if typ == TYPE_NAME:
            name = decode_name_value(buf, s, e, max_name_bytes)
        elif typ == TYPE_NONCE:
            if e - s != 4:
                raise DecodeError(f"Nonce must be 4 bytes, got {e - s}")
            nonce = int.from_bytes(buf[s:e], "big")
        elif typ == TYPE_INTEREST_LIFETIME:
            lifetime_ms = decode_uint(buf[s:e])
        elif typ == TYPE_CAN_BE_PREFIX:
            can_be_prefix = True
        elif typ == TYPE_MUST_BE_FRESH:
            must_be_fresh = True
        elif typ == TYPE_HOP_LIMIT:
            if e - s != 1:
                raise DecodeError(f"HopLimit must be 1 byte, got {e - s}")
            hop_limit = buf[s]
            hop_offset = s
        elif typ == TYPE_FORWARDING_HINT:
            hint = buf[s:e]
        elif typ == TYPE_APPLICATION_PARAMETERS:
            params = buf[s:e]
        elif typ == TYPE_INTEREST_SIGNATURE_INFO:
            sig_info = buf[s:e]
        else:
            sig_value = buf[s:e]
    if not name:
        raise DecodeError("Interest without a non-empty Name")
    return Interest(
        name, can_be_prefix, must_be_fresh, nonce, lifetime_ms, hop_limit, params, hint,
        sig_info, sig_value, buf, hop_offset,
    )


def decode_data(wire: bytes, max_name_bytes: int | None = None) -> Data:
    """Decode a Data TLV (outer type 6); raise :class:`DecodeError` if malformed
    (:class:`~dticn.packets.name.NameTooLong` past ``max_name_bytes``)."""
    buf, start, end = packet_value(wire, TYPE_DATA)
    return data_from_value(buf, start, end, max_name_bytes)


def data_from_value(buf: bytes, start: int, end: int,
                    max_name_bytes: int | None = None) -> Data:
    """The Data whose outer TLV-VALUE is ``buf[start:end]``: the same single pass as
    :func:`interest_from_value`."""
    out = Data((), b"", ContentType.BLOB, None, None, None, None, buf)
    last = -1
    seen_name = False
    order = _DATA_ORDER_FAST
    pos = start
    while pos < end:
        typ, s, e = read_element(buf, pos, end)
        pos = e
        rank = order.get(typ, -1)
        if rank <= last:
            _unexpected(rank, typ, "Data")
            continue
        last = rank
        if typ == TYPE_NAME:
            out.name = decode_name_value(buf, s, e, max_name_bytes)
            seen_name = True
        elif typ == TYPE_META_INFO:
            if e - s == 3 and buf[s] == TYPE_CONTENT_TYPE and buf[s + 1] == 1:
                out.content_type = buf[s + 2]     # the usual MetaInfo: ContentType only
            else:
                _decode_meta_info(buf, s, e, out)
        elif typ == TYPE_CONTENT:
            out.content = buf[s:e]
        elif typ == TYPE_SIGNATURE_INFO:
            if e - s == 3 and buf[s] == TYPE_SIGNATURE_TYPE and buf[s + 1] == 1:
                out.signature_type = buf[s + 2]   # SignatureType only (DigestSha256)
            else:
                for t2, _es2, s2, e2 in iter_elements(buf, s, e):
                    if t2 == TYPE_SIGNATURE_TYPE:
                        out.signature_type = decode_uint(buf[s2:e2])
        else:
            out.signature_value = buf[s:e]
    if not seen_name:
        raise DecodeError("Data without a Name")
    return out


def _decode_meta_info(buf: bytes, start: int, end: int, out: Data) -> None:
    last = -1
    order = _META_ORDER
    for typ, _es, s, e in iter_elements(buf, start, end):
        rank = order.get(typ, -1)
        if rank <= last:
            _unexpected(rank, typ, "MetaInfo")
            continue
        last = rank
        if typ == TYPE_CONTENT_TYPE:
            out.content_type = decode_uint(buf[s:e])
        elif typ == TYPE_FRESHNESS_PERIOD:
            out.freshness_ms = decode_uint(buf[s:e])
        else:
            out.final_block_id = buf[s:e]
