"""pcap traces of the simulated LoRa medium: every MAC frame as IEEE 802.15.4, at its
simulated start time.

One record per transmission (not per receiver: a frame lost at the gateway is still on
air and still in the trace; retries are records of their own, same sequence number). The
timestamp is ``epoch + start`` in the kernel's virtual seconds (epoch 0 by default, so a
trace's times read as seconds into the run). Frames are encoded by
:func:`dticn.mac.ieee802154.encode_frame`; the LinkType is LINKTYPE_IEEE802_15_4_NOFCS
(230, tcpdump.org's LinkType list), which Wireshark's ``wpan`` dissector reads:
``tshark -r f.pcap -T fields -e wpan.frame_type -e wpan.seq_no -e wpan.dst16``.

Where the tap attaches: :meth:`LoRaTrace.attach` is an observer of the one medium every
radio sends through, recording each :class:`~dticn.phy.medium.Transmission` the medium
announces as ``"transmit"`` when it goes on air. Channel, SF and power are not in the
802.15.4 header; the trace has the MAC view only.
"""

from __future__ import annotations

from dticn.mac.frames import Frame
from dticn.mac.ieee802154 import DEFAULT_PAN_ID, SuperframeSpec, encode_frame
from dticn.net.pcap import PcapFile
from dticn.phy.medium import Medium, Transmission
from dticn.radio.network import RadioNetwork

LINKTYPE_IEEE802_15_4_NOFCS = 230


class LoRaTrace:
    """Writes every frame put on a medium to ``path`` (802.15.4 without FCS)."""

    def __init__(self, path: str, *, epoch: float = 0.0, pan_id: int = DEFAULT_PAN_ID,
                 superframe: SuperframeSpec | None = None) -> None:
        if epoch < 0:
            raise ValueError(f"epoch {epoch}: give 0 or a positive Unix time")
        self._pcap = PcapFile(path, LINKTYPE_IEEE802_15_4_NOFCS)
        self.epoch = epoch
        self.pan_id = pan_id
        self.superframe = superframe

    @property
    def frames(self) -> int:
        """Records written so far."""
        return self._pcap.records

    def record(self, tx: Transmission) -> None:
        """One transmission, stamped with its simulated start."""
        frame = tx.frame
        if not isinstance(frame, Frame):
            raise TypeError(f"the medium carried a {type(frame).__name__}, not a MAC Frame; "
                            "trace only media the DSME MAC sends on")
        self._pcap.write(self.epoch + tx.start,
                         encode_frame(frame, pan_id=self.pan_id, superframe=self.superframe))

    def attach(self, medium: Medium) -> None:
        """Record everything ``medium`` carries from now on (see the module docstring)."""

        def on_medium(what: str, tx: Transmission, _receiver: int) -> None:
            if what == "transmit":
                self.record(tx)

        medium.observers.append(on_medium)

    def flush(self) -> None:
        """Push buffered records to the file (a reader may open it while we run)."""
        self._pcap.flush()

    def close(self) -> None:
        """Flush and close the file."""
        self._pcap.close()


def trace_radio(network: RadioNetwork, path: str, *, epoch: float = 0.0) -> LoRaTrace:
    """Open ``path`` and trace ``network``'s medium; beacons announce the scenario's BO and
    SO and the CAP's last slot (slot 0 is the beacon, then ``cap_slots`` CAP slots:
    :class:`~dticn.mac.timing.DsmeTiming`)."""
    s = network.s
    spec = SuperframeSpec(beacon_order=s.bo, superframe_order=s.so,
                          final_cap_slot=network.ctx.mac.timing.cap_slots)
    trace = LoRaTrace(path, epoch=epoch, superframe=spec)
    trace.attach(network.medium)
    return trace


def lora_path(path: str) -> str:
    """Where the LoRa trace of a run traced to ``path`` goes: ``-lora`` before the suffix
    (``gw.pcap`` -> ``gw-lora.pcap``)."""
    stem, dot, suffix = path.rpartition(".")
    if not dot or "/" in suffix:
        return f"{path}-lora"
    return f"{stem}-lora.{suffix}"
