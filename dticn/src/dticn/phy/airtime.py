"""LoRa time on air by the Semtech formula.

Source: Semtech AN1200.13 "LoRa Modem Designer's Guide" (rev. 1, 2013), section 4, and
the SX1276/77/78/79 datasheet (rev. 7, 2020), section 4.1.1.7 "Time on air":

    T_sym      = 2^SF / BW
    T_preamble = (n_preamble + 4.25) T_sym
    n_payload  = 8 + max(ceil((8 PL - 4 SF + 28 + 16 CRC - 20 IH) / (4 (SF - 2 DE))) (CR + 4), 0)
    ToA        = T_preamble + n_payload T_sym

with PL the payload in bytes, CRC = 1 when the payload CRC is on, IH = 1 for implicit
header mode, DE = 1 when low-data-rate optimisation is on (mandated by the datasheet when
T_sym exceeds 16 ms) and CR in 1..4 for coding rates 4/5..4/8.

A second rule, ``flora``, is the frame duration of DSME-LoRa's OMNeT++ simulation
(inetrg/dsme_lora e94c7e5, ``src/LoRaDSMETransmitter.cc``, ``createTransmission``; the same
code as inetrg/flora 3f835bb ``src/LoRaPhy/LoRaTransmitter.cc``), kept to compare with their
Fig. 22 (``LoRaParams.rule``)::

    T_preamble     = (8 + 4.25) T_sym                         (n_preamble fixed at 8)
    payloadSymbNb  = 8 + trunc((8 PL - 4 SF + 28 + 16) / (4 SF)) (CR + 4), at least 8
    duration       = T_preamble + (8 + payloadSymbNb) T_sym   (Theader + Tpayload)

with C++ integer division (truncation, where Semtech rounds up), CRC on, explicit header and
no low-data-rate term, and PL the whole packet INET hands the radio: the MAC frame plus
FLoRa's 1-byte ``LoRaMacFrame`` chunk (their ``DSMEPlatform.cc``, ``sendNow``:
``setChunkLength(B(1))``) and its 16-bit ``LoRaPhyPreamble`` chunk (inetrg/flora
``src/LoRa/LoRaRadio.cc``: ``setChunkLength(b(16))``). Beside Semtech's it adds 8 symbols and
drops up to 5 (CR 4/5) by truncating: 3 to 8 symbols more in all.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

#: The datasheet requires low-data-rate optimisation above this symbol time (seconds).
LOW_DATA_RATE_SYMBOL_S = 16e-3
#: Bytes FLoRa's chunks add to the MAC frame in the ``flora`` rule (LoRaMacFrame 1 B,
#: LoRaPhyPreamble 16 bits; see the module docstring).
FLORA_CHUNK_BYTES = 3
_VALID_BW_HZ = (7_800, 10_400, 15_600, 20_800, 31_250, 41_700, 62_500, 125_000, 250_000, 500_000)


def parse_coding_rate(text: str | int) -> int:
    """Turn ``"4/5"``..``"4/8"`` (or 1..4, or 5..8) into the CR index 1..4 of the formula."""
    if isinstance(text, int):
        value = text
    else:
        value_text = text.strip()
        if "/" in value_text:
            num, _, den = value_text.partition("/")
            if num.strip() != "4":
                raise ValueError(f"coding rate {text!r}: LoRa coding rates are 4/5..4/8")
            value = int(den)
        else:
            value = int(value_text)
    if 5 <= value <= 8:
        value -= 4
    if not 1 <= value <= 4:
        raise ValueError(f"coding rate {text!r}: use 4/5, 4/6, 4/7 or 4/8 (CR index 1..4)")
    return value


@dataclass(frozen=True)
class LoRaParams:
    """Modulation settings of one LoRa transmission.

    ``low_data_rate=None`` applies the datasheet rule (on when T_sym > 16 ms), which is
    what radios and airtime calculators do; force it with ``True``/``False``.
    """

    sf: int = 7
    bw_hz: float = 125_000.0
    cr: int = 1
    preamble: int = 8
    explicit_header: bool = True
    crc: bool = True
    low_data_rate: bool | None = None
    #: How a frame's duration is computed: ``semtech`` (the datasheet) or ``flora`` (DSME-LoRa's
    #: simulation, see the module docstring); a registry key of :data:`AIRTIME_RULES`.
    rule: str = "semtech"

    def __post_init__(self) -> None:
        if self.rule not in AIRTIME_RULES:
            raise ValueError(f"airtime rule {self.rule!r}: use one of {', '.join(AIRTIME_RULES)}")
        if not 6 <= self.sf <= 12:
            raise ValueError(f"spreading factor {self.sf}: LoRa supports SF6..SF12 (use 7..12)")
        if int(self.bw_hz) not in _VALID_BW_HZ:
            raise ValueError(
                f"bandwidth {self.bw_hz} Hz is not a LoRa bandwidth; use one of {_VALID_BW_HZ}"
            )
        if not 1 <= self.cr <= 4:
            raise ValueError(f"coding rate index {self.cr}: use 1..4 (4/5..4/8)")
        if self.preamble < 0:
            raise ValueError(f"preamble {self.preamble}: must be >= 0 symbols (default 8)")

    @property
    def symbol_s(self) -> float:
        """T_sym = 2^SF / BW, seconds."""
        return (1 << self.sf) / self.bw_hz

    @property
    def de(self) -> int:
        """1 when low-data-rate optimisation is on (explicitly or by the T_sym > 16 ms rule)."""
        if self.low_data_rate is None:
            return int(self.symbol_s > LOW_DATA_RATE_SYMBOL_S)
        return int(self.low_data_rate)


@dataclass(frozen=True)
class Airtime:
    """A frame's time on air and its symbol counts."""

    preamble_symbols: float
    payload_symbols: int
    symbol_s: float

    @property
    def symbols(self) -> float:
        """All symbols on air: preamble (with its 4.25 sync symbols) plus payload."""
        return self.preamble_symbols + self.payload_symbols

    @property
    def preamble_s(self) -> float:
        return self.preamble_symbols * self.symbol_s

    @property
    def payload_s(self) -> float:
        return self.payload_symbols * self.symbol_s

    @property
    def seconds(self) -> float:
        return self.symbols * self.symbol_s


def payload_symbol_count(params: LoRaParams, payload_bytes: int) -> int:
    """n_payload of AN1200.13 (header, payload and CRC symbols)."""
    if payload_bytes < 0 or payload_bytes > 255:
        raise ValueError(f"payload {payload_bytes} bytes: a LoRa payload is 0..255 bytes")
    numerator = (
        8 * payload_bytes
        - 4 * params.sf
        + 28
        + 16 * int(params.crc)
        - 20 * int(not params.explicit_header)
    )
    denominator = 4 * (params.sf - 2 * params.de)
    return 8 + max(math.ceil(numerator / denominator) * (params.cr + 4), 0)


def _semtech_airtime(params: LoRaParams, payload_bytes: int) -> Airtime:
    return Airtime(
        preamble_symbols=params.preamble + 4.25,
        payload_symbols=payload_symbol_count(params, payload_bytes),
        symbol_s=params.symbol_s,
    )


def flora_payload_symbols(params: LoRaParams, payload_bytes: int) -> int:
    """Symbols after the preamble in DSME-LoRa's simulation: ``8 + payloadSymbNb`` of
    ``LoRaDSMETransmitter::createTransmission`` for a MAC frame of ``payload_bytes``."""
    if payload_bytes < 0 or payload_bytes > 255:
        raise ValueError(f"payload {payload_bytes} bytes: a LoRa payload is 0..255 bytes")
    packet = payload_bytes + FLORA_CHUNK_BYTES
    numerator = 8 * packet - 4 * params.sf + 28 + 16
    denominator = 4 * params.sf
    quotient = abs(numerator) // denominator * (1 if numerator >= 0 else -1)  # C++ int division
    symbols = max(8 + quotient * (params.cr + 4), 8)
    return 8 + symbols


def _flora_airtime(params: LoRaParams, payload_bytes: int) -> Airtime:
    return Airtime(
        preamble_symbols=8 + 4.25,
        payload_symbols=flora_payload_symbols(params, payload_bytes),
        symbol_s=params.symbol_s,
    )


#: Frame-duration rules by name (``LoRaParams.rule``).
AIRTIME_RULES: dict[str, Callable[[LoRaParams, int], Airtime]] = {
    "semtech": _semtech_airtime,
    "flora": _flora_airtime,
}


def airtime(params: LoRaParams, payload_bytes: int) -> Airtime:
    """Symbols and time on air of one frame of ``payload_bytes`` (see module docstring),
    by the params' rule (Semtech's unless ``rule="flora"``)."""
    return AIRTIME_RULES[params.rule](params, payload_bytes)


def time_on_air(params: LoRaParams, payload_bytes: int) -> float:
    """Time on air in seconds of one frame of ``payload_bytes``."""
    return airtime(params, payload_bytes).seconds
