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
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: The datasheet requires low-data-rate optimisation above this symbol time (seconds).
LOW_DATA_RATE_SYMBOL_S = 16e-3
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

    def __post_init__(self) -> None:
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


def airtime(params: LoRaParams, payload_bytes: int) -> Airtime:
    """Symbols and time on air of one frame of ``payload_bytes`` (see module docstring)."""
    return Airtime(
        preamble_symbols=params.preamble + 4.25,
        payload_symbols=payload_symbol_count(params, payload_bytes),
        symbol_s=params.symbol_s,
    )


def time_on_air(params: LoRaParams, payload_bytes: int) -> float:
    """Time on air in seconds of one frame of ``payload_bytes``."""
    return airtime(params, payload_bytes).seconds
