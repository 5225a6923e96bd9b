"""The shaped link as gloo's collectives see it: alpha and beta of an all-reduce and of an
all-gather, timed by the workers in the bench's namespaces.

Why: a link's nominal rate is not what a collective gets. TCP/IP and Ethernet headers
(about 5% at a 1,500-byte MTU), acknowledgements sharing the shaped links and TCP's pacing
through the token bucket take their part, and not the same part for gloo's ring
all-reduce as for its all-gather: on fashion-cnn at 10 Mbit/s, 2 workers, the nominal rate
predicted 0.81x of the measured dense step and 0.60x of top-k's all-gather
(docs/pactrain-estimate.md). ``pactrain estimate --probe-link`` and the check script fit
both here, as the adaptive policy fits its own link at start-up
(:func:`pactrain.policy.probe_link`).

Run as root (it shapes the bench's namespaces); one process per worker runs this module's
``__main__`` inside its namespace.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from pactrain.bench.network import BenchNetwork
from pactrain.costs import LinkModel, ring_factor
from pactrain.policy import fit_alpha_beta
from pactrain.rates import parse_rate

#: Port of the probe's rendezvous inside the namespaces (their own port space).
PROBE_PORT = 29_511

#: Seconds the large message of a probe should take at the nominal rate.
LARGE_MESSAGE_S = 0.5


@dataclass(frozen=True)
class ProbedLink:
    """What the collectives measured: the all-reduce's link model and the all-gather's."""

    ring: LinkModel
    gather: LinkModel

    def efficiency(self, bits_per_s: int) -> tuple[float, float]:
        """Nominal seconds per byte over the measured, for the all-reduce and the
        all-gather (1.0: the collective gets the whole rate)."""
        nominal = 8.0 / bits_per_s
        return nominal / self.ring.beta_s_per_byte, nominal / self.gather.beta_s_per_byte


def large_entries(bits_per_s: int, workers: int) -> int:
    """fp32 entries of the large message: about :data:`LARGE_MESSAGE_S` of the ring's
    traffic at the nominal rate, at least 64 Ki."""
    seconds_per_entry = 4 * ring_factor(workers) * 8.0 / bits_per_s
    return max(65_536, int(LARGE_MESSAGE_S / seconds_per_entry))


def probe_shaped_link(network: BenchNetwork, workers: int, bandwidth: str,
                      repeats: int = 3, timeout_s: float = 300.0) -> ProbedLink:
    """Shape ``network`` to ``bandwidth`` and fit both collectives' alpha and beta.

    Raises:
        RuntimeError: the network is not throttled (not root), or a probe process failed
            (its stderr is in the message).
    """
    if not network.throttled or network.prefix is None:
        raise RuntimeError(f"probing a shaped link needs the bench's namespaces (root): "
                           f"{network.reason}")
    network.shape(bandwidth)
    large = large_entries(parse_rate(bandwidth), workers)
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "probe.json"
        procs = [subprocess.Popen(
            [*network.prefix(rank), sys.executable, "-m", "pactrain.bench.link_probe",
             str(rank), str(workers), network.master_addr, str(PROBE_PORT), str(large),
             str(repeats), str(out)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for rank in range(workers)]
        failures = []
        for rank, proc in enumerate(procs):
            try:
                _, err = proc.communicate(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                for other in procs:
                    other.kill()
                raise RuntimeError(f"the link probe took over {timeout_s:.0f} s") from None
            if proc.returncode != 0:
                failures.append(f"rank {rank}: {err.strip()[-500:]}")
        if failures:
            raise RuntimeError("the link probe failed: " + "; ".join(failures))
        fitted = json.loads(out.read_text())
    return ProbedLink(LinkModel(*fitted["ring"]), LinkModel(*fitted["gather"]))


def _probe(rank: int, workers: int, master: str, port: int, large: int, repeats: int,
           out: str) -> None:
    import torch
    import torch.distributed as dist

    from pactrain.compression.communicator import Communicator

    dist.init_process_group("gloo", init_method=f"tcp://{master}:{port}", rank=rank,
                            world_size=workers)
    comm = Communicator()
    try:
        small = 64

        def timed(run: object, n: int) -> float:
            tensor = torch.ones(n)
            gathered = [torch.empty(n) for _ in range(workers)]

            def once() -> None:
                comm.control_barrier()
                start = time.perf_counter()
                if run == "ring":
                    comm.control_all_reduce(tensor, name="probe")
                else:
                    comm.all_gather(gathered, tensor, name="probe").wait()
                samples.append(time.perf_counter() - start)

            samples: list[float] = []
            once()
            samples.clear()
            for _ in range(repeats):
                once()
            return statistics.median(samples)

        ring = fit_alpha_beta(timed("ring", small), timed("ring", large), small, large,
                    ring_factor(workers))
        gather = fit_alpha_beta(timed("gather", small), timed("gather", large), small, large,
                      float(workers - 1))
        if rank == 0:
            Path(out).write_text(json.dumps({"ring": ring, "gather": gather}))
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    _rank, _workers, _master, _port, _large, _repeats, _out = sys.argv[1:8]
    _probe(int(_rank), int(_workers), _master, int(_port), int(_large), int(_repeats), _out)
