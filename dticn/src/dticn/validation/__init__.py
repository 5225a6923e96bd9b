"""Our radio model beside DSME-LoRa's published numbers (issue 16, item 3; issue 24).

DSME-LoRa: J. Alamos, P. Kietzmann, T. C. Schmidt, M. Wählisch, "DSME-LoRa: Seamless Long
Range Communication Between Arbitrary Nodes in the Constrained IoT", ACM TOSN 2022,
arXiv 2206.14077. Every check names its table or figure. The package sits above the
engines it reports on (the radio simulator, the experiments' ``Difference`` records):

* :mod:`~dticn.validation.paper`: their numbers and their simulation's settings, sourced;
* :mod:`~dticn.validation.opendsme_cap`: their CAP setting by setting beside ours;
* :mod:`~dticn.validation.checks`: one number of theirs beside ours, its tolerance, the plan;
* :mod:`~dticn.validation.dsme_tables` (Tables 5, 7, 8, Fig. 23b) and
  :mod:`~dticn.validation.fig22` (Fig. 22 and the link budget): the computations;
* :mod:`~dticn.validation.cap_gap`: the one-setting-at-a-time rows, ``Difference``
  records with ids;
* :mod:`~dticn.validation.assemble`: the sections in order, the JSON, re-running a part;
* :mod:`~dticn.validation.markdown` and :mod:`~dticn.validation.figures`: the page and the
  PNGs, from the JSON alone.

``dticn validate`` drives it, shows progress and writes the JSON, the page and the figures.
"""

from __future__ import annotations

from dticn.validation.assemble import RERUN_PARTS, Report, rerun, step_count, validate
from dticn.validation.markdown import markdown

__all__ = ["RERUN_PARTS", "Report", "markdown", "rerun", "step_count", "validate"]
