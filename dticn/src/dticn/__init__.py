"""DT-ICN: delay-tolerant Information-Centric Networking over DSME on the LoRa PHY."""

__version__ = "0.1.0"
