// Placeholder until the transport layer lands.
