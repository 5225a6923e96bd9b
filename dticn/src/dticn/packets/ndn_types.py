"""NDN packet format v0.3 numbers: TLV types of Interest and Data elements, and the values
of ContentType and SignatureType (https://docs.named-data.net/NDN-packet-spec/current/)."""

from __future__ import annotations

from typing import Final

TYPE_INTEREST: Final = 0x05
TYPE_DATA: Final = 0x06
TYPE_CAN_BE_PREFIX: Final = 0x21
TYPE_MUST_BE_FRESH: Final = 0x12
TYPE_FORWARDING_HINT: Final = 0x1E
TYPE_NONCE: Final = 0x0A
TYPE_INTEREST_LIFETIME: Final = 0x0C
TYPE_HOP_LIMIT: Final = 0x22
TYPE_APPLICATION_PARAMETERS: Final = 0x24
TYPE_INTEREST_SIGNATURE_INFO: Final = 0x2C
TYPE_INTEREST_SIGNATURE_VALUE: Final = 0x2E
TYPE_META_INFO: Final = 0x14
TYPE_CONTENT_TYPE: Final = 0x18
TYPE_FRESHNESS_PERIOD: Final = 0x19
TYPE_FINAL_BLOCK_ID: Final = 0x1A
TYPE_CONTENT: Final = 0x15
TYPE_SIGNATURE_INFO: Final = 0x16
TYPE_SIGNATURE_VALUE: Final = 0x17
TYPE_SIGNATURE_TYPE: Final = 0x1B

DEFAULT_INTEREST_LIFETIME_MS = 4000


class ContentType:
    """MetaInfo ContentType values (NDN packet spec; NACK is the application-level one)."""

    BLOB: Final = 0
    LINK: Final = 1
    KEY: Final = 2
    NACK: Final = 3


class SignatureType:
    """SignatureInfo SignatureType values."""

    DIGEST_SHA256: Final = 0
    SHA256_WITH_RSA: Final = 1
    SHA256_WITH_ECDSA: Final = 3
    HMAC_WITH_SHA256: Final = 4
    ED25519: Final = 5
