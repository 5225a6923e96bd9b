"""Simulated links that carry NDN frames between forwarders on one EventKernel.

* :mod:`dticn.links.internet`: point-to-point Internet links (fixed delay, seeded
  Bernoulli loss), two in-memory faces per link.
* :mod:`dticn.links.lora`: the LoRa link, a face onto the DSME MAC of the radio simulator
  (node side: :class:`~dticn.mac.device.DsmeDevice`; gateway side: one face per node onto the
  :class:`~dticn.mac.coordinator.DsmeCoordinator`).
* :mod:`dticn.links.observer`: counts packets per link, direction and type (metrics are
  gathered here, never by scheme code).
"""
