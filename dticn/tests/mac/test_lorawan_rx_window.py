"""The one LoRaWAN receive window (RX1, RX2, beacon, ping slots) alone, on a fake radio."""

from __future__ import annotations

from dticn.mac.lorawan.rx_window import ReceiveWindow
from dticn.sim.kernel import EventKernel


class FakeRadio:
    """Records what the window asks of the radio; ``receiving_until`` set by the test."""

    def __init__(self, kernel: EventKernel) -> None:
        self.kernel = kernel
        self.sf = 7
        self.calls: list[str] = []
        self.receiving_until = -1.0

    def wake(self) -> None:
        self.calls.append("wake")

    def start_rx(self, channel: int) -> None:
        self.calls.append(f"rx{channel}@SF{self.sf}")

    def receiving(self) -> bool:
        return self.receiving_until > self.kernel.now()

    def idle(self) -> None:
        self.calls.append("idle")

    def sleep(self) -> None:
        self.calls.append("sleep")


def _window() -> tuple[EventKernel, FakeRadio, ReceiveWindow, list[float]]:
    kernel = EventKernel()
    radio = FakeRadio(kernel)
    window = ReceiveWindow(kernel, radio, home_sf=7)  # type: ignore[arg-type]
    return kernel, radio, window, []


def test_window_closes_after_its_timeout_and_returns_the_radio_to_its_sf() -> None:
    kernel, radio, window, listened = _window()
    kernel.call_at(1.0, window.open, 3, 12, 0.2, listened.append)
    kernel.run()
    assert radio.calls == ["wake", "rx3@SF12", "idle", "sleep"]
    assert radio.sf == 7 and kernel.now() == 1.2
    assert listened == [kernel.now() - 1.0]
    assert window.open_until == 1.0 + 0.2


def test_a_frame_arriving_holds_the_window_open_to_its_end() -> None:
    kernel, radio, window, listened = _window()
    window.open(0, 9, 0.03, listened.append)
    radio.receiving_until = 0.5            # a preamble caught inside the window
    kernel.run()
    assert listened == [0.5] and window.open_until == 0.5
    assert radio.calls[-2:] == ["idle", "sleep"]
