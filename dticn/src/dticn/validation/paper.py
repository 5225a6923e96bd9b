"""DSME-LoRa's published numbers and their simulation's settings, each with its source.

DSME-LoRa: J. Alamos, P. Kietzmann, T. C. Schmidt, M. Wählisch, "DSME-LoRa: Seamless Long
Range Communication Between Arbitrary Nodes in the Constrained IoT", ACM TOSN 2022,
arXiv 2206.14077. Their values are in :data:`PAPER` as printed ("~": read off a plot);
their simulation's (inetrg/dsme_lora e94c7e5 with inetrg/flora 3f835bb) channel and layout
below, each with the file it was read from. Data only: the checks are in
:mod:`dticn.validation.dsme_tables` and :mod:`dticn.validation.fig22`.
"""

from __future__ import annotations

from typing import Any

SOURCE = ("DSME-LoRa (Alamos, Kietzmann, Schmidt, Wählisch, ACM TOSN 2022, "
          "arXiv 2206.14077)")
SIM_SOURCE = "inetrg/dsme_lora e94c7e5 (their OMNeT++/FLoRa simulation)"
#: openDSME as their simulation pinned it: the CAP timing of the ``dsme-lora-sim`` plan.
CAP_SOURCE = ("inetrg/openDSME de04814, dsmeLayer/capLayer/CAPLayer.cc, "
              "mac_services/pib/{dsme_phy_constants.h,PIBHelper.cc}")

#: Their values, as printed (Tables) or read off a plot (Fig. 22, "~").
PAPER: dict[str, Any] = {
    # Table 5: mJ per 15.36 s beacon interval (SO 3, MO 3, BO 4), totals; and the active
    # parts, from which the frames per interval follow (active mJ / per-frame mJ).
    "table5": {"S1": 323.09, "S2": 40.66, "S3": 63.89},
    "table5_active": {"S1": 11.12, "S2": 16.91, "S3": 5.92},
    "table5_frame_mj": {"S1": 12.04, "S2": 11.27, "S3": 6.44},
    # Table 7: maximum GTS load, packets/h, model / simulation, by MO.
    "table7": {3: (401.24, 401.25), 4: (200.58, 200.62), 5: (100.29, 100.31),
               6: (50.15, 50.16)},
    # Table 8: GTS sender, BO 7, one frame per 15 min: delay s, power mW, lifetime years.
    "table8": {3: (3.87, 0.58, 1.82), 4: (7.81, 0.47, 2.24), 5: (15.9, 0.42, 2.53),
               6: (32.97, 0.39, 2.71), 7: (71.16, 0.38, 2.81)},
    # Fig. 22 (MO 5, confirmed): CAP delivery; GTS delivery and maximum delay.
    "fig22_cap_delivery": {(100, 80): 0.95, (100, 40): 0.60, (300, 80): 0.38,
                           (300, 40): 0.14},
    "fig22_gts_delivery": 1.0,
    "fig22_gts_max_delay_s": {80: 120.0, 40: 500.0},
    # Fig. 23b: GTS mean delay s, by (interval s, MO); MO 6 at 40 s is outside the model.
    "fig23": {(40, 3): 4.75, (40, 4): 12.47, (40, 5): 66.21,
              (80, 3): 4.25, (80, 4): 9.5, (80, 5): 24.94, (80, 6): 132.41,
              (160, 3): 4.03, (160, 4): 8.5, (160, 5): 19.01, (160, 6): 49.87,
              (320, 3): 3.93, (320, 4): 8.07, (320, 5): 16.99, (320, 6): 38.02},
}

BEACON_INTERVAL_S = 15.36        # Table 5: SO 3, BO 4
TABLE8_INTERVAL_S = 900.0        # Table 8: one frame per 15 min
TABLE8_BATTERY_MAH = 2800.0
#: Their simulation's payload (``packetLength = 16B``, simulations/common.ini) and layout:
#: hosts on concentric rings 10 m apart (INET StaticConcentricMobility), so 115 hosts
#: reach 60 m and 315 hosts 100 m from the centre.
FIG22_PAYLOAD = 16
FIG22_RING_RADIUS_M = {100: 60.0, 300: 100.0}
YEAR_DAYS = 365.25

#: Their channel in our terms: shadowing drawn per frame (our per-frame fading), none fixed
#: per link (FLoRa's LoRaLogNormalShadowing, sigma 3.57 dB).
THEIR_CHANNEL = {"shadowing": False, "fading_sigma_db": 3.57}


#: FLoRa's channel as their simulation used it (inetrg/flora 3f835bb, the dsme_lora
#: submodule): log-distance path loss PL(40 m) = 127.41 dB, exponent 2.08, log-normal
#: shadowing of 3.57 dB drawn per frame (src/LoRaPhy/LoRaLogNormalShadowing.{ned,cc}), SF7 /
#: 125 kHz sensitivity -124 dBm (src/LoRaPhy/LoRaReceiver.cc); 14 dBm (their DSMEPlatform.cc
#: sets the LoRa tag's power); 15 sinks on the outer ring (hosts N..N+14, N sources), each
#: source sending to a sink drawn at random (their s_<N>_a_15_aps_1.ini); macMaxFrameRetries
#: 3 (their DSME.ned default): four attempts.
FLORA_CHANNEL = {"pl_d0_db": 127.41, "d0_m": 40.0, "gamma": 2.08, "sigma_db": 3.57,
                 "sensitivity_dbm": -124.0, "tx_dbm": 14.0, "attempts": 4}
FIG22_SINKS = 15


FLORA_RX = "inetrg/flora 3f835bb, src/LoRaPhy/LoRaReceiver.{h,cc} (isPacketCollided)"
FLORA_TOA = "inetrg/dsme_lora e94c7e5, src/LoRaDSMETransmitter.cc (createTransmission)"
#: Their INET radio's CCA (``cad_rule="inet"``: a frame begun while the node was not
#: listening stays unseen): inetrg/dsme_lora e94c7e5 src/DSMEPlatform.cc ccaTimer and
#: receiveSignal, inetrg/inet 6498d24 Radio.cc startReception/updateTransceiverState.
INET_CAD = ("inetrg/dsme_lora e94c7e5, src/DSMEPlatform.cc (startCCA, ccaTimer, receiveSignal); "
            "inetrg/inet 6498d24, src/inet/physicallayer/wireless/common/radio/packetlevel/"
            "Radio.cc (startReception, updateTransceiverState)")
