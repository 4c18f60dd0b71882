// Placeholder until the embedded device lands.
