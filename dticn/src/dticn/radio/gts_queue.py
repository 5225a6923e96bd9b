"""DSME-LoRa's Markov model of a GTS sender's MAC queue (Alamos et al., ACM TOSN 2022,
arXiv 2206.14077, Section 6): the analytical side of their Table 7, Table 8 (delay) and
Fig. 23, reimplemented from the paper's equations so our simulator can be checked against
both their numbers and their model.

Assumptions (theirs, Section 6.1): Poisson arrivals at rate ``lam``; one GTS per
multisuperframe of ``T`` seconds, which removes one frame from the queue at the end of the
slot; unlimited queue; unacknowledged frames, every one received; time on air neglected.
With ``rho = lam T``:

1. ``k_i = e^-rho rho^i / i!``: ``i`` arrivals in one multisuperframe.
2. The queue length ``L_n`` after slot ``n`` is a Markov chain with
   ``P[i, i-1] = k_0``, ``P[0, 0] = k_0 + k_1``, ``P[i, j] = k_{j-i+1}`` for ``j >= i``
   (their Eq. 1-3); its stationary vector ``pi`` on a chain clipped to ``size`` states
   (they clip to 100).
3. At an arbitrary time ``L(t) = L_n + N(S)`` with ``S`` uniform in ``[0, T)``:
   ``P(N = j) = P(Poisson(rho) > j) / rho`` (their Eq. 6, the regularised incomplete
   gamma function written as a Poisson tail), ``P(L(t) = i) = sum_j pi_{i-j} P(N = j)``.
4. Mean queue ``E[L(t)] = sum_i i pi_i + rho / 2`` (Eq. 7), mean delay by Little's law
   ``W = E[L(t)] / lam`` (Eq. 8).
5. Maximum load (their Table 7): the utilisation ``rho_max`` at which the 99.9% quantile
   of ``L(t)`` reaches openDSME's GTS queue of 22 frames; ``lam_max = rho_max / T``.
"""

from __future__ import annotations

import math

import numpy as np

#: openDSME's GTS (CFP) queue in frames: ``TOTAL_GTS_QUEUE_SIZE = 30 - CAP_QUEUE_SIZE``
#: (inetrg/dsme_lora, src/dsme_settings.h); DSME-LoRa Section 7.3 uses it for Table 7.
OPENDSME_GTS_QUEUE = 22
#: The confidence of their worst-case queue length (Section 7.3, Fig. 24).
WORST_CASE_QUANTILE = 0.999
#: States of the clipped chain (theirs: 100, Section 6.5).
CHAIN_SIZE = 100


def _check(rho: float) -> None:
    if not 0.0 < rho < 1.0:
        raise ValueError(f"utilisation rho={rho:g}: the model needs 0 < lam T < 1 (a stable "
                         "queue); use a longer interval or a shorter multisuperframe")


def arrivals_pmf(rho: float, n: int) -> np.ndarray:
    """``k_0 .. k_{n-1}``: arrivals in one multisuperframe (Poisson of mean ``rho``)."""
    i = np.arange(n)
    log_fact = np.array([math.lgamma(x + 1.0) for x in i])
    return np.exp(-rho + i * math.log(rho) - log_fact)


def stationary(rho: float, size: int = CHAIN_SIZE) -> np.ndarray:
    """Stationary queue length after a slot (step 2); the clipped tail goes to the last state."""
    _check(rho)
    k = arrivals_pmf(rho, size + 1)
    p = np.zeros((size, size))
    for i in range(size):
        lo = max(i - 1, 0)
        p[i, lo:] = k[: size - lo]
        if i == 0:
            p[0, 0] = k[0] + k[1]
            p[0, 1:] = k[2: size + 1]
        p[i, -1] += 1.0 - p[i].sum()
    a = p.T - np.eye(size)
    a[-1] = 1.0
    b = np.zeros(size)
    b[-1] = 1.0
    return np.linalg.solve(a, b)


def queue_length_pmf(rho: float, size: int = CHAIN_SIZE) -> np.ndarray:
    """``P(L(t) = i)`` at an arbitrary time (step 3)."""
    pi = stationary(rho, size)
    tail = 1.0 - np.cumsum(arrivals_pmf(rho, size + 1))[:size]
    return np.convolve(pi, tail / rho)[:size]


def mean_delay_s(multisuperframe_s: float, interval_s: float,
                 size: int = CHAIN_SIZE) -> float:
    """Mean transmission delay ``W`` (step 4) for one frame per ``interval_s`` on average."""
    rho = multisuperframe_s / interval_s
    pi = stationary(rho, size)
    mean_queue = float(np.arange(size) @ pi) + rho / 2.0
    return mean_queue * interval_s


def max_utilisation(queue_limit: int = OPENDSME_GTS_QUEUE,
                    quantile: float = WORST_CASE_QUANTILE, size: int = CHAIN_SIZE) -> float:
    """``rho_max`` (step 5), by bisection: ``P(L(t) <= queue_limit)`` falls with ``rho``."""
    lo, hi = 0.01, 0.999
    for _ in range(60):
        mid = (lo + hi) / 2.0
        if queue_length_pmf(mid, size)[: queue_limit + 1].sum() >= quantile:
            lo = mid
        else:
            hi = mid
    return lo


def max_load_per_hour(multisuperframe_s: float, rho_max: float | None = None) -> float:
    """Their Table 7: packets per hour one GTS per multisuperframe carries at ``rho_max``."""
    rho = max_utilisation() if rho_max is None else rho_max
    return rho * 3600.0 / multisuperframe_s
