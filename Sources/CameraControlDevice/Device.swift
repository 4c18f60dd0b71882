// Placeholder until the device session lands.
