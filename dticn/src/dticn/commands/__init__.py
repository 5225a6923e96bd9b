"""Subcommands of the `dticn` CLI, one module each (see `dticn.cli`)."""
