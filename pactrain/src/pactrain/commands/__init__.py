"""Subcommands of the `pactrain` CLI, one module each (see `pactrain.cli`)."""
