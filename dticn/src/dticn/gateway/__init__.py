"""The delay-tolerant gateway: a forwarder whose hooks run one retrieval scheme
(:mod:`dticn.schemes`), the NDN signalling those schemes use, and the CCN-lite flavoured
forwarder every simulated host runs."""
