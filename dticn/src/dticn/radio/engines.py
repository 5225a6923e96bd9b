"""Which engine runs a scenario: the one it asks for, or the fastest that applies.

DSME: the batched engine (:mod:`dticn.radio.batch`, GTS in closed form) when it applies and
upkeep is in closed form, else the event engine (:mod:`dticn.radio.network`). LoRaWAN
(class A or B): its event engine (:mod:`dticn.radio.lorawan_network`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dticn.radio.batch import batch_supported, run_batch
from dticn.radio.context import RadioContext, build_context
from dticn.radio.lorawan_network import LorawanNetwork
from dticn.radio.network import RadioNetwork
from dticn.radio.results import RadioResult
from dticn.radio.scenario import Scenario


def run(s: Scenario, progress: Callable[[float], Any] | None = None,
        ctx: RadioContext | None = None) -> RadioResult:
    """Run a scenario with the engine it asks for ('auto': batched when it applies);
    ``ctx``: a DSME scenario's context when the caller built it already."""
    if s.mac != "dsme":
        if s.engine == "batch":
            raise ValueError(f"the batched engine is DSME's (GTS in closed form); "
                             f"mac={s.mac} runs on the event engine: use engine='events'")
        return LorawanNetwork(s).run(progress)
    ctx = ctx if ctx is not None else build_context(s)
    engine = s.engine
    if engine == "auto":
        engine = "batch" if batch_supported(s, ctx) is None and s.upkeep == "closed" else "events"
    if engine == "batch":
        return run_batch(s, ctx, progress)
    return RadioNetwork(s, ctx).run(progress)
