"""`pactrain bench`: every method side by side, on real processes and real throttled links.

- :mod:`.config`: what a bench run is (:class:`BenchConfig`), and the order of its grid.
- :mod:`.network`: the throttled namespace topology, or loopback when that is impossible.
- :mod:`.runner`: one grid cell = one :func:`pactrain.train.launch.run_training` call; rows.
- :mod:`.report`: derived columns (speed-up, ratio to the ideal), the table, the JSON.
Plots live in :mod:`pactrain.plots`.
"""
