"""Applications on top of forwarders: the consumer, the LoRa node's producer, and the
local endpoint both (and the gateway schemes) use to talk to their forwarder."""
