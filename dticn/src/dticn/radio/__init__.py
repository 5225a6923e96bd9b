"""Simulation of the LoRa/DSME edge: scenarios, the network, engines, metrics, plots."""
