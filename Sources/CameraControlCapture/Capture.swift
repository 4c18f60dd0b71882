// Placeholder until the capture layer lands.
