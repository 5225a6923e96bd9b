"""`pactrain estimate`: will compression pay for this job? Each method's predicted step.

From the cost model the adaptive policy decides with (an alpha-beta link,
:class:`pactrain.costs.LinkModel`, and the tiers' declared prices), extended to the peers:
a job (:mod:`pactrain.estimate.job`: the gradient's tensors in DDP's buckets, and the
compute per step), each method's price per bucket (:mod:`pactrain.estimate.prices`), and
the walk that says how much of the transfer the backward pass hides
(:mod:`pactrain.estimate.step`). :mod:`pactrain.estimate.calibrate` measures the inputs
on this machine.
"""

from pactrain.estimate.job import Job, Tensor, job_of_count, job_of_model
from pactrain.estimate.prices import Context, LocalCosts, Options
from pactrain.estimate.step import METHODS, StepEstimate, estimate

__all__ = ["METHODS", "Context", "Job", "LocalCosts", "Options", "StepEstimate", "Tensor",
           "estimate", "job_of_count", "job_of_model"]
