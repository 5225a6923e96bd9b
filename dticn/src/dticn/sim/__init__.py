"""Discrete-event simulation of the LoRa/DSME edge."""
