"""Management protocols spoken by the forwarder (a subset of NFD's)."""
