"""Every protocol name and signal of the DT-ICN schemes, in one module.

Names (one component each, the artifact's):

=================  ==================================================================
prefix             use
=================  ==================================================================
``/reg``           ``/reg/<id>``: a node registers its prefix ``/<id>`` with the gateway
                   (sent in the CAP, :func:`registration_in_cap`)
``/RNP``           ``/RNP/<gw>/<item>``: the gateway notifies the consumer of a pushed
                   item (static route toward the consumer)
``/RPT``           ``/RPT/<gw>/<item>``: where the artifact's push keeps the wrapped item
``/rfx``           ``/rfx/<random>/<item>``: the draft's reflexive names
``/gw``            the gateway's own name component in ``/RNP`` and ``/RPT`` names
=================  ==================================================================

Signals, always in NDN fields (never in payload strings as the artifact does):

=====================  ==========================================================
signal                 encoding
=====================  ==========================================================
NACK (not registered)  Data, same name as the Interest, MetaInfo ContentType NACK (3),
                       FreshnessPeriod 0, empty Content
wait hint (RICE)       Data, same name, ContentType WAIT (:data:`CONTENT_TYPE_WAIT` =
                       1024, first value of the range the NDN spec leaves unassigned),
                       FreshnessPeriod 0, Content = WaitTime TLV (type
                       :data:`TLV_WAIT_TIME` = 0xC8) holding a nonNegativeInteger of
                       milliseconds after which the consumer should ask again
ACK (registration,     Data, same name, ContentType BLOB (0), empty Content
reflexive indication)
reflexive name prefix  ApplicationParameters of the first Interest = ReflexiveNamePrefix
(push-draft)           TLV (type :data:`TLV_REFLEXIVE_NAME_PREFIX` = 0xC9) holding a Name TLV
pushed item            Data ``/RPT/<gw>/<name>`` (artifact) or ``/<rnp>/<name>`` (draft)
                       whose Content is the producer's Data packet, unchanged (the
                       producer's signature survives the gateway)
=====================  ==========================================================

FreshnessPeriod 0 keeps hints and NACKs out of every answer to a MustBeFresh Interest, so a
consumer that asks again (RICE consumers always set MustBeFresh) is never served the hint a
forwarder cached on the way.
"""

from __future__ import annotations

from dticn.forwarder.face import PacketKind
from dticn.packets import ContentType, Data, DecodeError, Interest
from dticn.packets.name import TYPE_NAME, Name, decode_name_value, encode_name, name_from_str
from dticn.packets.tlv import decode_uint, encode_tlv, encode_uint, iter_elements

REGISTRATION_PREFIX = name_from_str("/reg")
RNP_PREFIX = name_from_str("/RNP")
RPT_PREFIX = name_from_str("/RPT")
RFX_PREFIX = name_from_str("/rfx")
GATEWAY_NAME = name_from_str("/gw")

CONTENT_TYPE_WAIT = 1024
TLV_WAIT_TIME = 0xC8
TLV_REFLEXIVE_NAME_PREFIX = 0xC9
SIGNAL_CONTENT_TYPES = frozenset({int(ContentType.NACK), CONTENT_TYPE_WAIT})
"""ContentTypes of the gateway's signals that answer one Interest: no forwarder of ours
caches them (``ForwarderConfig.uncached_content_types``), so a consumer without MustBeFresh
is never served a stale hint instead of the content."""


def is_signal(data: Data) -> bool:
    """True for a NACK or a wait hint (never the content itself)."""
    return data.content_type in SIGNAL_CONTENT_TYPES


def nack(name: Name) -> Data:
    """Application NACK: the gateway knows no registered node for ``name``."""
    return Data(name, b"", content_type=ContentType.NACK, freshness_ms=0)


def ack(name: Name) -> Data:
    """Positive acknowledgement (registration, reflexive indication)."""
    return Data(name, b"", content_type=ContentType.BLOB, freshness_ms=0)


def wait_hint(name: Name, wait_s: float) -> Data:
    """RICE-like answer: the content is on its way, ask again after ``wait_s``."""
    ms = max(0, round(wait_s * 1000))
    return Data(name, encode_tlv(TLV_WAIT_TIME, encode_uint(ms)),
                content_type=CONTENT_TYPE_WAIT, freshness_ms=0)


def read_wait_hint(data: Data) -> float | None:
    """Seconds of a wait hint, or None if ``data`` is not one."""
    if data.content_type != CONTENT_TYPE_WAIT:
        return None
    buf = memoryview(data.content)
    for typ, _es, s, e in iter_elements(buf, 0, len(buf)):
        if typ == TLV_WAIT_TIME:
            return decode_uint(buf[s:e]) / 1000.0
    raise DecodeError("wait-hint Data without a WaitTime TLV (type 0xC8) in its Content")


def reflexive_parameters(rnp: Name) -> bytes:
    """ApplicationParameters carrying a reflexive name prefix."""
    return encode_tlv(TLV_REFLEXIVE_NAME_PREFIX, encode_name(rnp))


def read_reflexive_prefix(app_parameters: bytes | None) -> Name | None:
    """The reflexive name prefix in ApplicationParameters, or None (absent or malformed)."""
    if not app_parameters:
        return None
    buf = memoryview(app_parameters)
    try:
        for typ, _es, s, e in iter_elements(buf, 0, len(buf)):
            if typ == TLV_REFLEXIVE_NAME_PREFIX:
                for t2, _es2, s2, e2 in iter_elements(buf, s, e):
                    if t2 == TYPE_NAME:
                        return decode_name_value(buf, s2, e2)
    except DecodeError:
        return None
    return None


def registration_in_cap(kind: PacketKind, packet: Interest | Data | None) -> str:
    """LoRa slot policy of a node (:data:`dticn.links.lora.SlotPolicy`): its registration
    Interests in the CAP (it has no route through the gateway before it registered),
    everything else (fragments too) in its uplink GTS."""
    if kind is PacketKind.INTEREST and packet is not None and (
            packet.name[:1] == REGISTRATION_PREFIX):
        return "cap"
    return "gts"
