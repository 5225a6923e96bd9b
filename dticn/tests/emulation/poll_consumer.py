"""A plain python-ndn consumer that knows nothing of DT-ICN: it asks for each name again and
again with the NDN flags given for it, until it gets Data that is not a gateway signal
(used by ``test_gateway_any_consumer.py``).

A name is given as ``NAME[,mbf][,cbp][,period=WALL_S][,lifetime=MS]``: MustBeFresh,
CanBePrefix, the wall seconds between polls (default 1) and the InterestLifetime (default
4000 ms). Output: ``DATA <name> polls=<n> signals=<n> content=<hex>`` or ``FAIL <name>
polls=<n>``; with ``--status`` a last line ``STATUS <json>`` (the gateway's status).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from ndn.app import NDNApp
from ndn.client_conf import default_face
from ndn.security import KeychainDigest
from ndn.types import InterestNack, InterestTimeout

SIGNAL_CONTENT_TYPES = (3, 1024)          # NACK, wait hint (docs/dticn-schemes.md)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", required=True)
    parser.add_argument("--max-polls", type=int, default=400)
    parser.add_argument("--status", action="store_true")
    parser.add_argument("names", nargs="+")
    args = parser.parse_args(argv)
    app = NDNApp(face=default_face(args.transport), keychain=KeychainDigest())
    status = {"code": 0}

    async def poll(spec: str) -> None:
        name, *flags = spec.split(",")
        opts = dict(f.partition("=")[::2] for f in flags)
        period = float(opts.get("period", 1.0))
        lifetime = int(opts.get("lifetime", 4000))
        signals = 0
        for polls in range(1, args.max_polls + 1):
            try:
                _n, meta, content = await app.express_interest(
                    name, must_be_fresh="mbf" in opts, can_be_prefix="cbp" in opts,
                    lifetime=lifetime, validator=lambda *_a, **_k: _true())
            except (InterestNack, InterestTimeout):
                await asyncio.sleep(period)
                continue
            if meta.content_type in SIGNAL_CONTENT_TYPES:
                signals += 1
                await asyncio.sleep(period)
                continue
            print(f"DATA {name} polls={polls} signals={signals} "
                  f"content={bytes(content or b'').hex()}", flush=True)
            return
        print(f"FAIL {name} polls={args.max_polls}", flush=True)
        status["code"] = 1

    async def run() -> None:
        try:
            await asyncio.gather(*(poll(n) for n in args.names))
            if args.status:
                _n, _m, content = await app.express_interest(
                    "/localhost/dticn/status", must_be_fresh=True, can_be_prefix=True,
                    lifetime=2000, validator=lambda *_a, **_k: _true())
                print(f"STATUS {bytes(content or b'').decode()}", flush=True)
        finally:
            app.shutdown()

    app.run_forever(after_start=run())
    return status["code"]


async def _true() -> bool:
    return True


if __name__ == "__main__":
    sys.exit(main())
