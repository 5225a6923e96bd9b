"""Unmodified python-ndn apps (NDNApp) run as subprocesses by the end-to-end tests.

Only python-ndn's public API is used; the forwarder is found through
``NDN_CLIENT_TRANSPORT`` exactly as for NFD. ``KeychainDigest`` avoids needing a
keychain on disk (DigestSha256 signatures).
"""

from __future__ import annotations

import json
import sys

from ndn.app import NDNApp
from ndn.encoding import Name
from ndn.security import KeychainDigest
from ndn.types import InterestNack, InterestTimeout


def producer(prefix: str) -> None:
    """Register ``prefix``; answer exact names with 'hello <name>', CanBePrefix
    Interests with a versioned child; print one line per served Interest."""
    app = NDNApp(keychain=KeychainDigest())

    @app.route(prefix)
    def on_interest(name, param, _ap):  # type: ignore[no-untyped-def]
        uri = Name.to_str(name)
        if param.can_be_prefix:
            app.put_data([*name, Name.Component.from_version(1)], b"versioned " + uri.encode(),
                         freshness_period=10_000)
        else:
            app.put_data(name, ("hello " + uri).encode(), freshness_period=10_000)
        print(f"served {uri}", flush=True)

    async def ready() -> None:
        print("READY", flush=True)

    app.run_forever(after_start=ready())


def consumer(requests_json: str) -> None:
    """Express each ``[name, can_be_prefix]`` in turn; print one JSON result per line."""
    app = NDNApp(keychain=KeychainDigest())

    async def run() -> None:
        try:
            for name, cbp in json.loads(requests_json):
                try:
                    data_name, _meta, content = await app.express_interest(
                        name, can_be_prefix=cbp, must_be_fresh=False, lifetime=8000
                    )
                    out = {"data": Name.to_str(data_name), "content": bytes(content).decode()}
                except InterestNack as exc:
                    out = {"nack": exc.reason}
                except InterestTimeout:
                    out = {"timeout": True}
                print(json.dumps(out), flush=True)
        finally:
            app.shutdown()

    app.run_forever(after_start=run())


if __name__ == "__main__":
    {"producer": producer, "consumer": consumer}[sys.argv[1]](sys.argv[2])
