import Testing

/// Every test that talks to a real `camctl-sim`, run one after another: simulators run in real time with
/// 200 ms liveness timeouts, and a machine with few cores is better not crowded with them.
@Suite("Over a real pseudo-terminal", .serialized)
struct OverRealPTY {}
