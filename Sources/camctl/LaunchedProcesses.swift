import CameraControlTools
import Foundation
import Synchronization

/// The processes `serve` launched (`--launch`, `--hold`): ended with it, so that an app it started does
/// not go on alone against a socket that is gone.
///
/// A command runs under `sh -c`, which does not always `exec` it, and may start processes of its own
/// (`app &`) that outlive the shell. Foundation's `Process` starts the shell as the leader of a process
/// group of its own, so the whole group gets `SIGTERM` (background jobs and orphans included), and so do
/// the shell's descendants that left the group (found in `/proc` by their parent's id). The `Process`
/// objects are kept, not bare ids: while one is running Foundation has not reaped it, so its id and its
/// group's cannot have been reused. Launching and ending share one lock: a launch that races the end
/// (an interrupt, `--seconds`) is either ended with the others or not made at all.
enum LaunchedProcesses {
    private struct State {
        var launched: [Process] = []
        /// ``terminateAll()`` ran: nothing is launched any more.
        var closed = false
    }

    private static let state = Mutex(State())

    /// Launches `process` (with no signal blocked: ``Process/runWithDefaultSignals()``) unless the end has
    /// come. Returns false when it was not launched for that reason.
    ///
    /// - Throws: what the launch throws.
    static func launch(_ process: Process) throws -> Bool {
        try state.withLock { state in
            guard !state.closed else { return false }
            try process.runWithDefaultSignals()
            state.launched.removeAll { !$0.isRunning }
            state.launched.append(process)
            return true
        }
    }

    /// Sends `SIGTERM` to every launched process still running: its process group, and its descendants
    /// outside it. From then on nothing is launched. Called at `serve`'s end and from the interrupt thread of
    /// ``Interrupts`` (no signal handler).
    static func terminateAll() {
        let running = state.withLock { state in
            state.closed = true
            return state.launched.filter(\.isRunning).map(\.processIdentifier)
        }
        guard !running.isEmpty else { return }
        let parents = parentsByProcess()
        for root in running {
            for processID in descendants(of: root, parents: parents) { kill(processID, SIGTERM) }
            killpg(root, SIGTERM)
            kill(root, SIGTERM)
        }
    }

    /// Every process below `root`.
    static func descendants(of root: pid_t, parents: [pid_t: pid_t]) -> [pid_t] {
        var children: [pid_t: [pid_t]] = [:]
        for (child, parent) in parents { children[parent, default: []].append(child) }
        var found: [pid_t] = []
        var frontier = [root]
        while let next = frontier.popLast(), found.count < 4096 {
            for child in children[next] ?? [] where child != root {
                found.append(child)
                frontier.append(child)
            }
        }
        return found
    }

    /// Each process's parent, from `/proc/PID/stat` (empty where there is no `/proc`). The command name in
    /// it may hold spaces, parentheses and bytes that are not UTF-8 (a name cut at 15 bytes): the fields are
    /// read after its last `)`.
    static func parentsByProcess() -> [pid_t: pid_t] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [:] }
        var parents: [pid_t: pid_t] = [:]
        for entry in entries {
            guard let processID = pid_t(entry), let data = FileManager.default.contents(atPath: "/proc/\(entry)/stat"),
                let close = data.lastIndex(of: UInt8(ascii: ")"))
            else { continue }
            // After the name: the state, then the parent's id.
            let fields = String(decoding: data[data.index(after: close)...], as: UTF8.self).split(separator: " ")
            if fields.count > 1, let parent = pid_t(fields[1]) { parents[processID] = parent }
        }
        return parents
    }
}
