"""Real-time drivers of the sans-IO forwarder: asyncio clock, socket faces, daemon."""
