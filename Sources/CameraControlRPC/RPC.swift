// Placeholder until the RPC layer lands.
