import Foundation
import Synchronization

/// The processes `serve` launched (`--launch`, `--hold`): ended with it, so that an app it started does
/// not go on alone against a socket that is gone. A command runs under `sh -c`, which does not always
/// `exec` it, so the whole tree below the shell is ended: its descendants are found in `/proc` (by their
/// parent's process id) and each is sent `SIGTERM`.
enum LaunchedProcesses {
    private static let launched = Mutex<Set<pid_t>>([])

    /// `processID` was launched by this process (a child of it).
    static func add(_ processID: pid_t) {
        launched.withLock { _ = $0.insert(processID) }
    }

    /// `processID` has exited (its termination handler ran): it is not ended again.
    static func remove(_ processID: pid_t) {
        launched.withLock { _ = $0.remove(processID) }
    }

    /// Sends `SIGTERM` to every launched process still running and to its descendants (from `serve`'s end
    /// and from the interrupt thread of ``Interrupts``, which is no signal handler; no lock is held while
    /// signalling).
    static func terminateAll() {
        let roots = launched.withLock { $0 }
        guard !roots.isEmpty else { return }
        let parents = parentsByProcess()
        for root in roots where parents[root] == getpid() {  // still our child (not a reused id)
            for processID in descendants(of: root, parents: parents) { kill(processID, SIGTERM) }
            kill(root, SIGTERM)
        }
    }

    /// Every process below `root`, deepest last.
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

    /// Each process's parent, from `/proc/PID/stat` (empty where there is no `/proc`).
    static func parentsByProcess() -> [pid_t: pid_t] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [:] }
        var parents: [pid_t: pid_t] = [:]
        for entry in entries {
            guard let processID = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")  // the command name may hold spaces and parentheses
            else { continue }
            // After the name: the state, then the parent's id.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, let parent = pid_t(fields[1]) { parents[processID] = parent }
        }
        return parents
    }
}
