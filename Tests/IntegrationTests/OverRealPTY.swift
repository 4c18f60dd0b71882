import CameraControlPosixTransport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Every test that talks to a real `camctl-sim`, run one after another: simulators run in real time with
/// 200 ms liveness timeouts, and a machine with few cores is better not crowded with them.
@Suite("Over a real pseudo-terminal", .serialized)
struct OverRealPTY {}

/// Runs `body` with a new pseudo-terminal pair and its subordinate's path, which only the tool under test
/// reads: a second reader (the pair's own subordinate transport) takes bytes from under it, and a raw
/// read that finds them gone returns 0, which camctl rightly takes for end of file. So the subordinate is
/// held open by a descriptor nobody reads (the master side then never sees a hang-up), and the pair's
/// reader is closed; the test plays the device on `pair.master`.
func withSoleReaderPTY(_ body: (_ pair: PseudoTerminalPair, _ path: String) async throws -> Void) async throws {
    let pair = try PseudoTerminalPair.open()
    let path = pair.subordinatePath
    let holder = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
    try #require(holder >= 0, "cannot open \(path): errno \(errno)")
    pair.subordinate.close()
    defer {
        pair.master.close()
        close(holder)
    }
    try await body(pair, path)
}
