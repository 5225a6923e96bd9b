"""IEEE 802.15.4e DSME MAC on the LoRa PHY (sans-IO cores plus the simulated node)."""
