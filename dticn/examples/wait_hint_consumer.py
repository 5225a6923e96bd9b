"""An unmodified python-ndn (0.5) consumer for a DT-ICN gateway: follows RICE wait hints
and answers reflexive push notifications. It imports nothing from dticn on purpose: this is
what a researcher's own NDN application has to do, and nothing more.

Signalling (docs/dticn-schemes.md):

* wait hint: Data with MetaInfo ContentType 1024 whose Content is a WaitTime TLV (type
  0xC8) holding a nonNegativeInteger of milliseconds: ask again (MustBeFresh) after it.
* NACK: Data with ContentType 3: no node behind the gateway owns the name.
* push: the gateway sends an Interest ``/RNP/<gw>/<item name>`` to a consumer that
  registered ``/RNP``; the consumer fetches ``/RPT/<gw>/<item name>`` (or, in the draft
  variant, ``<reflexive prefix>/<item name>`` with the prefix from the ReflexiveNamePrefix
  TLV 0xC9 in ApplicationParameters), gets the node's Data wrapped in the Content, then
  answers the notification with an empty Data (the ACK).

Times on the wire are the gateway's (virtual) seconds. An emulated gateway running at
``--time-scale k`` says so in its status (``/localhost/dticn/status``, JSON); this consumer
asks for it and sleeps ``hint / k`` wall seconds (a real gateway has no status: k = 1; a
gateway run with ``--wire-time wall`` reports ``wire_time_scale`` 1: hints are wall seconds).

Usage::

    python wait_hint_consumer.py [--transport tcp://127.0.0.1:6363] get /node1/0 /node2/0@90
    python wait_hint_consumer.py push --count 3

``NAME@T`` starts that fetch at the gateway's virtual time T. Output, one line per item:
``DATA <name> ttc=<virtual s> hints=<n> start=<virtual s> late=<virtual s> content=<hex>``
or ``ITEM <name> at=<virtual s> notified=<virtual s> content=<hex>`` (``late``: how much
longer than asked this process slept; ``notified``: when the ``/RNP`` Interest arrived).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time

from ndn.app import NDNApp
from ndn.client_conf import default_face
from ndn.encoding import Name, parse_data, parse_tl_num
from ndn.security import KeychainDigest
from ndn.types import InterestNack, InterestTimeout

CONTENT_TYPE_NACK = 3
CONTENT_TYPE_WAIT = 1024
TLV_WAIT_TIME = 0xC8
TLV_REFLEXIVE_NAME_PREFIX = 0xC9
STATUS_NAME = "/localhost/dticn/status"


class GatewayClock:
    """The gateway's virtual clock seen from here (identity for a real gateway)."""

    def __init__(self, time_scale: float = 1.0, wall_epoch: float | None = None,
                 wire_scale: float | None = None) -> None:
        self.time_scale = time_scale
        self.wall_epoch = time.time() if wall_epoch is None else wall_epoch
        self.wire_scale = time_scale if wire_scale is None else wire_scale

    def from_wire(self, seconds: float) -> float:
        """Gateway (virtual) seconds of a time read from a packet (``--wire-time wall``
        gateways put wall seconds on the wire)."""
        return seconds * self.time_scale / self.wire_scale

    def now(self) -> float:
        """Virtual seconds now."""
        return (time.time() - self.wall_epoch) * self.time_scale

    def wall(self, virtual_s: float) -> float:
        """Wall seconds that ``virtual_s`` of gateway time take."""
        return virtual_s / self.time_scale

    @classmethod
    async def ask(cls, app: NDNApp) -> GatewayClock:
        """Read the gateway's time scale and epoch from its status (else real time)."""
        try:
            _n, _m, content = await app.express_interest(
                STATUS_NAME, must_be_fresh=True, can_be_prefix=True, lifetime=1000)
            status = json.loads(bytes(content or b"{}"))
            return cls(float(status["time_scale"]), float(status["wall_epoch"]),
                       float(status.get("wire_time_scale", status["time_scale"])))
        except (InterestNack, InterestTimeout, ValueError, KeyError):
            return cls()


def read_tlv_uint(content: bytes, tlv_type: int) -> int | None:
    """The nonNegativeInteger in the first ``tlv_type`` element of ``content``."""
    pos = 0
    while pos < len(content):
        typ, n = parse_tl_num(content, pos)
        pos += n
        length, n = parse_tl_num(content, pos)
        pos += n
        if typ == tlv_type:
            return int.from_bytes(content[pos:pos + length], "big")
        pos += length
    return None


async def fetch(app: NDNApp, name: str, clock: GatewayClock, *, deadline_s: float = 150.0,
                lifetime_ms: int = 4000) -> tuple[bytes, float, int, float]:
    """Fetch ``name`` following wait hints; return (content, virtual seconds to content,
    hints, seconds this process overslept: scheduling noise of the host, not the network)."""
    start = clock.now()
    hints = 0
    late = 0.0
    while True:
        _name, meta, content = await app.express_interest(
            name, must_be_fresh=True, can_be_prefix=False, lifetime=lifetime_ms)
        content = bytes(content or b"")
        if meta.content_type == CONTENT_TYPE_NACK:
            raise LookupError(f"{name}: the gateway has no node for this name (NACK)")
        if meta.content_type != CONTENT_TYPE_WAIT:
            return content, clock.now() - start, hints, late
        wait_ms = read_tlv_uint(content, TLV_WAIT_TIME)
        if wait_ms is None:
            raise ValueError(f"{name}: wait hint without a WaitTime TLV (0xC8)")
        hints += 1
        wait_s = clock.from_wire(wait_ms / 1000)
        if clock.now() + wait_s - start > deadline_s:
            raise TimeoutError(f"{name}: the next hint ({wait_s:.2f} s) passes the deadline")
        slept_from = clock.now()
        await asyncio.sleep(clock.wall(wait_s))
        late += clock.now() - slept_from - wait_s


def serve_push(app: NDNApp, clock: GatewayClock, on_item, *, lifetime_ms: int = 4000) -> None:
    """Answer ``/RNP`` notifications: fetch the reflexive name, hand the item to
    ``on_item(name, content, virtual time now, virtual time of the notification)``, then
    ACK the notification."""
    seen: set[str] = set()
    tasks: set[asyncio.Task] = set()         # keep references until each task is done

    async def handle(notify_name, app_param) -> None:
        notified = clock.now()
        key = Name.to_str(notify_name)
        if key in seen:
            return                           # a retransmitted notification
        seen.add(key)
        item = [c for c in notify_name[2:] if c[0] != 0x02]   # drop the params digest
        prefix = Name.normalize("/RPT") + list(notify_name[1:2])
        if app_param:
            typ, n = parse_tl_num(app_param, 0)
            length, m = parse_tl_num(app_param, n)
            if typ == TLV_REFLEXIVE_NAME_PREFIX:
                prefix = Name.from_bytes(bytes(app_param[n + m:n + m + length]))
        try:
            _n, _m, wrapped = await app.express_interest(
                prefix + item, must_be_fresh=False, can_be_prefix=False, lifetime=lifetime_ms)
        except (InterestNack, InterestTimeout):
            seen.discard(key)
            return
        inner_name, _meta, inner_content, _sig = parse_data(bytes(wrapped or b""))
        on_item(Name.to_str(inner_name), bytes(inner_content or b""), clock.now(), notified)
        app.put_data(notify_name, b"", freshness_period=0)

    @app.route("/RNP")
    def on_notification(name, _param, app_param):
        task = asyncio.ensure_future(handle(name, app_param))
        tasks.add(task)
        task.add_done_callback(tasks.discard)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transport", default="tcp://127.0.0.1:6363")
    sub = parser.add_subparsers(dest="mode", required=True)
    g = sub.add_parser("get", help="fetch names, following wait hints")
    g.add_argument("names", nargs="+", help="NAME or NAME@VIRTUAL_START_S")
    g.add_argument("--deadline", type=float, default=150.0)
    p = sub.add_parser("push", help="receive pushed items")
    p.add_argument("--count", type=int, default=1, help="exit after this many items")
    args = parser.parse_args(argv)

    app = NDNApp(face=default_face(args.transport), keychain=KeychainDigest())
    status = {"code": 0}

    async def get_all() -> None:
        clock = await GatewayClock.ask(app)

        async def one(spec: str) -> None:
            name, _, at = spec.partition("@")
            if at:
                await asyncio.sleep(max(clock.wall(float(at) - clock.now()), 0.0))
            start = clock.now()
            try:
                content, ttc, hints, late = await fetch(app, name, clock,
                                                        deadline_s=args.deadline)
                print(f"DATA {name} ttc={ttc:.3f} hints={hints} start={start:.3f} "
                      f"late={late:.3f} content={content.hex()}", flush=True)
            except (LookupError, TimeoutError, ValueError, InterestNack,
                    InterestTimeout) as exc:
                print(f"FAIL {name} {type(exc).__name__}: {exc}", flush=True)
                status["code"] = 1

        try:
            await asyncio.gather(*(one(s) for s in args.names))
        finally:
            app.shutdown()

    async def push() -> None:
        clock = await GatewayClock.ask(app)
        done = asyncio.Event()
        got: list[str] = []

        def on_item(name: str, content: bytes, at: float, notified: float) -> None:
            got.append(name)
            print(f"ITEM {name} at={at:.3f} notified={notified:.3f} content={content.hex()}",
                  flush=True)
            if len(got) >= args.count:
                done.set()

        serve_push(app, clock, on_item)
        print("LISTENING /RNP", flush=True)
        await done.wait()
        await asyncio.sleep(0.2)                 # let the last ACK leave
        app.shutdown()

    app.run_forever(after_start=get_all() if args.mode == "get" else push())
    return status["code"]


if __name__ == "__main__":
    sys.exit(main())
