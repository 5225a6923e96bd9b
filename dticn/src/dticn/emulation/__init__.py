"""Emulation: the simulated DSME/LoRa edge driven in real (scaled) time behind a gateway
whose Internet side is real sockets (see ``docs/dticn-emulation.md``)."""
