/// Waits up to `timeout` for `condition` to hold, checking every few milliseconds; true when it did.
///
/// For tests against real time (ptys, threads, simulators): the timeout bounds a broken implementation,
/// it is not a speed assertion.
public func eventually(
    within timeout: Duration = .seconds(10), _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let clock = ContinuousClock()
    let end = clock.now + timeout
    while true {
        if try await condition() { return true }
        if clock.now >= end { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
}
