"""Where tensors handed to collectives must live, so one code path serves gloo and NCCL.

Why: NCCL only moves CUDA tensors, gloo moves CPU tensors (and CUDA ones through host
copies). Small control collectives (mask fingerprints, the policy's agreed numbers, the
stop flag of an evaluation) are built here on the group's device instead of on the CPU.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist


def collective_device(process_group: Any = None) -> torch.device:
    """CUDA (the current device) for an NCCL group, else the CPU."""
    if dist.is_available() and dist.is_initialized() \
            and dist.get_backend(process_group) == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")
