import CSystemShim
import Foundation

extension Process {
    /// Runs the process with no signal blocked. A child starts with the signal mask of the thread that
    /// spawns it, and the threads of Swift's concurrency pool (and Dispatch's) block nearly every signal:
    /// `Process.run()` called from one made a child that `SIGINT` and `SIGTERM` could not reach (`camctl
    /// serve`'s launched camera app ignored them, and outlived serve). The spawn is made from a thread of
    /// its own whose mask is empty; the caller waits for it.
    ///
    /// - Parameter keepingSpawnerUntilExit: the spawning thread lives until the child exits (blocked, using no
    ///   CPU). A child that asks for a parent-death signal (`setpriv --pdeathsig`, `PR_SET_PDEATHSIG`) gets it
    ///   when the *thread* that spawned it ends, not the process: by default that thread ends at once, and on a
    ///   loaded machine it ended after the child had asked, which killed it (camctl-bench's idle monitor,
    ///   `SIGTERM` in a CI run).
    /// - Throws: what `run()` throws.
    public func runWithDefaultSignals(keepingSpawnerUntilExit: Bool = false) throws {
        let outcome = SpawnOutcome()
        let exited = DispatchSemaphore(value: 0)
        if keepingSpawnerUntilExit {
            let previous = terminationHandler
            terminationHandler = { process in
                previous?(process)
                exited.signal()
            }
        }
        let thread = Thread { [self] in
            _ = cc_shim_unblock_all_signals()
            _ = cc_shim_set_thread_name("spawn")  // named as the thread that spawns (seen in /proc)
            var started = true
            do {
                try run()
            } catch {
                outcome.error = error
                started = false
            }
            outcome.done.signal()
            if keepingSpawnerUntilExit && started { exited.wait() }
        }
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
