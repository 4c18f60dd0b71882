import CSystemShim
import Foundation

extension Process {
    /// Runs the process with no signal blocked. A child starts with the signal mask of the thread that
    /// spawns it, and the threads of Swift's concurrency pool (and Dispatch's) block nearly every signal:
    /// `Process.run()` called from one made a child that `SIGINT` and `SIGTERM` could not reach (`camctl
    /// serve`'s launched camera app ignored them, and outlived serve). The spawn is made from a thread of
    /// its own whose mask is empty; the caller waits for it.
    ///
    /// - Throws: what `run()` throws.
    public func runWithDefaultSignals() throws {
        let outcome = SpawnOutcome()
        let thread = Thread { [self] in
            _ = cc_shim_unblock_all_signals()
            do {
                try run()
            } catch {
                outcome.error = error
            }
            outcome.done.signal()
        }
        thread.name = "spawn"
        thread.start()
        outcome.done.wait()
        if let error = outcome.error { throw error }
    }
}

/// What the spawning thread hands back (written before `done` is signalled, read after it).
private final class SpawnOutcome: @unchecked Sendable {
    let done = DispatchSemaphore(value: 0)
    var error: (any Error)?
}
