"""What the PHY tests share: a receiver that hears everything (the medium's Listener)."""

from dticn.phy.medium import Transmission


class Ear:
    """A receiver that always listens and records what it got."""

    def __init__(self) -> None:
        self.got: list[int] = []

    def listening(self, channel: int, sf: int, start: float) -> bool:
        return True

    def preamble(self, tx: Transmission) -> None:
        pass

    def deliver(self, tx: Transmission, rssi: float, margin: float) -> None:
        self.got.append(tx.sender)
