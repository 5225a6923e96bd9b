"""The CAP as DSME-LoRa's Fig. 22 simulation ran it, setting by setting, beside ours.

Read from their sources (issue 16): inetrg/dsme_lora e94c7e5 (``DSME``) and the openDSME it
pins as a submodule, inetrg/openDSME de04814 (``OD``). ``dticn validate`` prints this table
on docs/dticn-validation.md; the ``dsme-lora-sim`` CAP plan (:mod:`dticn.radio.cap_plan`)
takes over the rows marked ``in_plan``. Kept as data so the page and the plan cite the same
files.
"""

from __future__ import annotations

from typing import NamedTuple

DSME = "inetrg/dsme_lora e94c7e5"
OD = "inetrg/openDSME de04814"


class Setting(NamedTuple):
    """One CAP setting: theirs (with the file), ours (with the file), and whether the
    ``dsme-lora-sim`` plan now runs theirs."""

    name: str
    theirs: str
    ours: str
    in_plan: str


COMPARISON: tuple[Setting, ...] = (
    Setting("symbol (MAC time unit)",
            f"1 ms ({DSME}, src/DSMEPlatform.cc: symbolDuration)",
            "1 ms (mac/dsme.toml: symbol_s)", "same"),
    Setting("aUnitBackoffPeriod",
            f"20 symbols = aTurnaroundTime + aCcaTime ({OD}, "
            "mac_services/pib/dsme_mac_constants.h)",
            "20 symbols (mac/dsme.toml: unit_backoff_symbols)", "same"),
    Setting("CCA",
            f"8 symbols; idle when no reception state change in them and none in progress; "
            f"CADEff = 1 ({DSME}, src/DSMEPlatform.cc: startCCA, ccaTimer; "
            "simulations/common.ini), but their INET radio tracks only frames begun while it "
            "was receiving, so a frame begun while the node transmitted is not sensed "
            "(inetrg/inet 6498d24, Radio.cc: startReception)",
            "CAD of 8 symbols, ideal (mac/dsme.toml: cca_symbols; mac/cap.py); theirs as "
            "`cad_rule=\"inet\"` (phy/medium.py)",
            "no (the sensitivity rows \"CAD as their INET radio\" run theirs)"),
    Setting("CCAs before sending",
            f"one (CAPLayer::stateCCA -> stateSending; {OD}, dsmeLayer/capLayer/CAPLayer.cc)",
            "two on backoff boundaries (CW = 2, mac/csma.py)",
            "yes (contention_window 1)"),
    Setting("backoff draw",
            f"aUnitBackoffPeriod x (random(0 .. 2^BE - 1) + 1) ({OD}, CAPLayer.cc: "
            "actionStartBackoffTimer)",
            "random(0 .. 2^BE - 1) periods (mac/csma.py)", "yes (backoff_offset 1)"),
    Setting("backoff timing",
            f"unslotted: counts usable CAP time from now, pauses outside it, carries into the "
            f"next CAP ({OD}, CAPLayer.cc: actionStartBackoffTimer)",
            "slotted: boundaries from the superframe start, pauses outside the CAP "
            "(mac/timing.py: cap_advance)", "yes (cap_access opendsme)"),
    Setting("transaction that does not fit before the CAP ends",
            f"cannot happen: a CAP's usable part ends CCA 8 + frame (2 symbols per byte + 12) "
            f"+ macAckWaitDuration + 10 + PRE_EVENT_SHIFT 12 symbols before its end; no "
            f"further draw ({OD}, CAPLayer.cc: symbolsRequired; {DSME}, src/dsme_settings.h, "
            "src/DSMEMessage.cc: getTotalSymbols)",
            "waits for the next CAP, then a further random backoff (mac/cap.py: "
            "_transmit_at)", "yes (cap_access opendsme)"),
    Setting("BE, NB",
            f"macMinBE 7, macMaxBE 8, macMaxCSMABackoffs 5; BE = min(macMinBE + NB, macMaxBE) "
            f"({DSME}, simulations/common.ini; {OD}, CAPLayer.cc)",
            "3 / 5 / 4, BE + 1 per busy CCA (mac/dsme.toml, mac/csma.py)",
            "yes (earlier: min_be 7, max_be 8, max_backoffs 5)"),
    Setting("aTurnaroundTime (ACK after the frame)",
            f"12 symbols = 12 ms ({OD}, mac_services/pib/dsme_phy_constants.h; {DSME}, "
            "src/DSMEPlatform.cc: sendDelayedAck)",
            "1 ms (mac/dsme.toml: turnaround_s)", "yes (turnaround_s 0.012)"),
    Setting("macAckWaitDuration",
            f"54 symbols = 54 ms from the end of the frame: 20 + 12 + phySHRDuration 10 + 6 x "
            f"2 ({OD}, mac_services/pib/PIBHelper.cc: getAckWaitDuration, PHY_PIB.h)",
            "2 x turnaround + ACK airtime = 33 ms, kept open while a frame arrives "
            "(mac/ack.py)", "yes (ack_wait_s 0.054)"),
    Setting("macMaxFrameRetries; a retry",
            f"3 (src/DSME.ned default); the frame stays at the head of the queue, NB = 0, BE = "
            f"macMinBE ({OD}, CAPLayer.cc: stateSending)",
            "3; the frame stays in hand, a fresh CSMA/CA (mac/cap.py: _ack_timeout)", "same"),
    Setting("ACK request",
            f"ackReq = false: unconfirmed ({DSME}, simulations/common.ini); the paper says "
            "confirmed (Section 7.2)",
            "confirmed (the issue's reading); unconfirmed rows in the table below",
            "no (a scenario setting, cap_ack)"),
    Setting("CAP queue",
            f"CAP_QUEUE_SIZE 8, a frame that finds it full is dropped ({DSME}, "
            f"src/dsme_settings.h; {OD}, CAPLayer.cc: pushMessage)",
            "8, overflow dropped and counted (radio/cap_plan.py)", "same"),
    Setting("traffic",
            f"exponential intervals (40 / 80 s), one start time, 6000 s warm-up of uncounted "
            f"frames, 300 counted frames per source, uncounted frames after them until the "
            f"end ({DSME}, simulations/common.ini, src/applications/generic/PRRTrafGen.cc)",
            "Poisson from t = 0, every frame counted (radio/traffic.py)", "same load"),
    Setting("delivery ratio",
            f"counted frames received at their sink (duplicates removed) / counted frames "
            f"sent, queue drops included; 2000 s cool-down after the last counted frame "
            f"({DSME}, PRRTrafGen.ned: PRR, PRRTrafGen.cc)",
            "delivered / generated over the run, queue drops included (validation/fig22.py)",
            "same definition"),
    Setting("other CAP traffic",
            f"GPSR beacons, every host every 1250 s ({DSME}, "
            "simulations/IEEE802154ExampleHost.ned)",
            "none (about 4% of their 100 nodes / 40 s load)", "no"),
)
