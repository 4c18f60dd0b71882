// Placeholder until the controls land.
