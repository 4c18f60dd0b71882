import CameraControlDevice
import CameraControlRPC
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a child process of a test could not be used.
package struct ChildProcessFailure: Error, CustomStringConvertible {
    /// What went wrong.
    package var description: String

    /// A failure saying `description`.
    package init(description: String) { self.description = description }
}

/// The folder that holds the built executables (`camctl`, `camctl-sim`): SwiftPM puts the executables a
/// test target depends on next to the test bundle, which on Linux is the running binary itself.
package enum BuiltProducts {
    /// The products folder.
    package static let directory: URL = {
        if let me = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return URL(fileURLWithPath: me).deletingLastPathComponent()
        }
        // macOS: the .xctest bundle sits in the products folder.
        return Bundle.main.bundleURL.deletingLastPathComponent()
    }()

    /// The path of the executable `name` in the products folder.
    package static func executable(_ name: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw ChildProcessFailure(description: "\(name) is not built at \(path)")
        }
        return path
    }
}

/// `camctl-sim` as a child process of a test: started in `init`, its pty path read from the first line of
/// its stdout, and killed by ``kill()`` (or ``stop()``) — which every test must do on every path, with a
/// `defer` right after creating it. `deinit` kills it too, as a last resort.
///
/// The child gets `/dev/null` as stdin and stderr and a private pipe as stdout, so a child that somehow
/// outlived the test run could never hold the test runner's own output open.
package final class SimulatorProcess: @unchecked Sendable {
    /// The pty's subordinate path (`/dev/pts/N`), as printed by the simulator.
    package let ptyPath: String
    /// The `--link` path, when one was asked for.
    package let linkPath: String?
    /// The child's process id.
    package let pid: Int32

    private let process: Process
    private let stdoutPipe: Pipe

    /// Starts `camctl-sim --quiet --exit-with-parent --seed seed [--link linkPath] [extraArguments…]` and waits (up to
    /// `startupTimeout`) for its first line.
    ///
    /// - Throws: ``ChildProcessFailure`` when the executable is missing, does not start, or does not print a
    ///   path in time (the child is killed then).
    package init(
        seed: UInt64 = 1, linkPath: String? = nil, extraArguments: [String] = [],
        startupTimeout: Duration = .seconds(10)
    ) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try BuiltProducts.executable("camctl-sim"))
        // --exit-with-parent: should the test runner itself die, the simulator follows it.
        var arguments = ["--quiet", "--exit-with-parent", "--seed", "\(seed)"]
        if let linkPath { arguments += ["--link", linkPath] }
        process.arguments = arguments + extraArguments
        let stdoutPipe = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = stdoutPipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        self.stdoutPipe = stdoutPipe
        self.pid = process.processIdentifier
        self.linkPath = linkPath
        do {
            let line = try Self.readFirstLine(stdoutPipe.fileHandleForReading.fileDescriptor, timeout: startupTimeout)
            guard line.hasPrefix("/dev/") else {
                throw ChildProcessFailure(description: "camctl-sim printed '\(line)' instead of a pty path")
            }
            self.ptyPath = line
        } catch {
            Self.killAndReap(process)
            throw error
        }
    }

    deinit {
        kill()
    }

    /// True while the child runs.
    package var isRunning: Bool { process.isRunning }

    /// How the child ended, once it has (nil while it runs).
    package var termination: (reason: Process.TerminationReason, status: Int32)? {
        process.isRunning ? nil : (process.terminationReason, process.terminationStatus)
    }

    /// Kills the child with `SIGKILL` and reaps it. Idempotent; safe after the child exited by itself.
    package func kill() {
        Self.killAndReap(process)
    }

    /// Asks the child to stop with `SIGTERM` and waits up to `grace` for it; kills it if it did not exit.
    ///
    /// - Returns: true when it exited by itself within `grace`.
    @discardableResult
    package func stop(grace: Duration = .seconds(5)) -> Bool {
        guard process.isRunning else { return true }
        signalProcess(pid, SIGTERM)
        let exited = waitForExit(within: grace)
        if !exited { kill() }
        return exited
    }

    /// Sends `signal` to the child (e.g. `SIGSTOP`, `SIGCONT`).
    package func send(signal: Int32) {
        guard process.isRunning else { return }
        signalProcess(pid, signal)
    }

    /// Waits up to `timeout` for the child to exit; true when it has.
    package func waitForExit(within timeout: Duration) -> Bool {
        let clock = ContinuousClock()
        let end = clock.now + timeout
        while process.isRunning {
            if clock.now >= end { return false }
            usleep(2_000)
        }
        process.waitUntilExit()
        return true
    }

    /// The signals the child blocks (`SigBlk` of `/proc/PID/status`), nil when it cannot be read.
    package var blockedSignals: UInt64? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("SigBlk:") {
            return UInt64(line.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        }
        return nil
    }

    private static func killAndReap(_ process: Process) {
        guard process.isRunning else { return }
        signalProcess(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Reads bytes up to the first newline, giving up after `timeout` or at end of file.
    private static func readFirstLine(_ descriptor: Int32, timeout: Duration) throws -> String {
        let clock = ContinuousClock()
        let end = clock.now + timeout
        var line: [UInt8] = []
        while true {
            let left = clock.now.duration(to: end)
            guard left > .zero else {
                throw ChildProcessFailure(description: "camctl-sim printed no pty path within \(timeout)")
            }
            var pfd = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min(left.components.seconds * 1000 + 1, 1000))
            let ready = poll(&pfd, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            var byte: UInt8 = 0
            let n = read(descriptor, &byte, 1)
            if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            guard n == 1 else {
                throw ChildProcessFailure(description: "camctl-sim exited before printing its pty path")
            }
            if byte == UInt8(ascii: "\n") { break }
            line.append(byte)
            guard line.count < 4096 else {
                throw ChildProcessFailure(description: "camctl-sim's first line is too long")
            }
        }
        return String(decoding: line, as: UTF8.self)
    }
}

/// Sends `SIGTERM` to `process` and waits up to `grace` for it to exit; if it has not, kills it with
/// `SIGKILL`. Either way the child is reaped: a test never waits forever on a child that hangs.
///
/// - Returns: true when it exited by itself within `grace`.
@discardableResult
package func terminateChild(_ process: Process, grace: Duration = .seconds(10)) -> Bool {
    guard process.isRunning else { return true }
    signalProcess(process.processIdentifier, SIGTERM)
    let clock = ContinuousClock()
    let end = clock.now + grace
    while process.isRunning && clock.now < end {
        usleep(2_000)
    }
    let exited = !process.isRunning
    if !exited { signalProcess(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    return exited
}

/// Sends `signal` to the process `pid` (a free function: inside ``SimulatorProcess`` `kill` is a method).
package func signalProcess(_ pid: Int32, _ signal: Int32) {
    _ = kill(pid, signal)
}

/// Runs `body` with a fresh simulator and kills the simulator afterwards, whether `body` returns or throws.
package func withSimulator<Result>(
    seed: UInt64 = 1, linkPath: String? = nil, extraArguments: [String] = [],
    _ body: (SimulatorProcess) async throws -> Result
) async throws -> Result {
    let simulator = try SimulatorProcess(seed: seed, linkPath: linkPath, extraArguments: extraArguments)
    defer { simulator.kill() }
    return try await body(simulator)
}

/// The result of running a short-lived tool (`camctl …`) to its end.
package struct ToolRun: Sendable {
    /// The exit status (or the signal number when it was killed).
    package var status: Int32
    /// Everything it wrote to stdout.
    package var standardOutput: String
    /// Everything it wrote to stderr.
    package var standardError: String
    /// True when its stdout or stderr was still held open a while after it exited: a child of the tool
    /// (a simulator `camctl demo` started) outlived it.
    package var outputHeldOpen: Bool
}

/// Collects everything written to a pipe on a thread of its own, so that a reader never blocks a test:
/// a pipe that a leaked grandchild keeps open simply never reports its end.
package final class PipeCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    private var ended = false

    /// Starts reading `handle` until end of file.
    package init(_ handle: FileHandle) {
        let thread = Thread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                lock.withLock { data.append(chunk) }
            }
            lock.withLock { ended = true }
        }
        thread.start()
    }

    /// True once the pipe reached end of file (every writer closed it).
    package var isEnded: Bool { lock.withLock { ended } }

    /// What was read so far, as UTF-8.
    package var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }
}

/// Runs the built executable `name` (or the program at `name` when it is an absolute path) with `arguments` to its end and captures its output; kills it (and
/// fails) when it runs longer than `timeout` — a hang must fail the test, not stall it. `environment`
/// is added to the test runner's own.
package func runTool(
    _ name: String, _ arguments: [String], timeout: Duration = .seconds(20), environment: [String: String] = [:],
    standardInput: FileHandle? = nil
) async throws -> ToolRun {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: name.hasPrefix("/") ? name : try BuiltProducts.executable(name))
    process.arguments = arguments
    if !environment.isEmpty {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    }
    let out = Pipe()
    let err = Pipe()
    process.standardInput = standardInput ?? FileHandle.nullDevice
    process.standardOutput = out
    process.standardError = err
    try process.run()
    // Drain both pipes concurrently so a chatty tool never blocks on a full pipe.
    let outCollector = PipeCollector(out.fileHandleForReading)
    let errCollector = PipeCollector(err.fileHandleForReading)
    let clock = ContinuousClock()
    let end = clock.now + timeout
    while process.isRunning && clock.now < end {
        try? await Task.sleep(for: .milliseconds(5))
    }
    let timedOut = process.isRunning
    if timedOut {
        signalProcess(process.processIdentifier, SIGKILL)
    }
    process.waitUntilExit()
    let drained = await eventually(within: .seconds(5)) { outCollector.isEnded && errCollector.isEnded }
    if timedOut {
        throw ChildProcessFailure(
            description:
                "\(name) \(arguments.joined(separator: " ")) ran longer than \(timeout); killed. stderr: \(errCollector.text)"
        )
    }
    return ToolRun(
        status: process.terminationStatus, standardOutput: outCollector.text, standardError: errCollector.text,
        outputHeldOpen: !drained)
}

/// The ids of running `camctl-sim` processes from this build whose arguments include `--seed seed`.
package func simulatorProcesses(seed: UInt64) -> [Int32] {
    let simulator = BuiltProducts.directory.appendingPathComponent("camctl-sim").path
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { entry -> Int32? in
        guard let pid = Int32(entry),
            let raw = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline")
        else { return nil }
        let argv = raw.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        guard let first = argv.first, first == simulator || first.hasSuffix("/camctl-sim") else { return nil }
        guard let index = argv.firstIndex(of: "--seed"), index + 1 < argv.count, argv[index + 1] == "\(seed)" else {
            return nil
        }
        return pid
    }
}

/// Runs `body`, failing with ``ChildProcessFailure`` when it takes longer than `timeout` (the body is
/// cancelled then). A guard against hangs, not a timing assertion: timeouts are generous.
package func withTimeout<Result: Sendable>(
    _ timeout: Duration, _ what: String, _ body: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Result?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        while let next = try await group.next() {
            if let value = next { return value }
            throw ChildProcessFailure(description: "\(what) did not finish within \(timeout)")
        }
        throw ChildProcessFailure(description: "\(what): no result")
    }
}

/// A fresh, empty temporary folder for link paths; remove it with `FileManager.removeItem`.
package func makeTemporaryFolder() throws -> String {
    let path = NSTemporaryDirectory() + "camctl-pty-tests-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// The ``RPCError`` that `body` throws, or nil when it returns (any other error is wrapped as `UNKNOWN`).
package func rpcFailure(_ body: () async throws -> Void) async -> RPCError? {
    do {
        try await body()
        return nil
    } catch let error as RPCError {
        return error
    } catch {
        return RPCError(code: .unknown, message: "not an RPCError: \(error)")
    }
}

/// The ``DeviceError`` that `body` throws, or nil when it returns (any other error is wrapped).
package func deviceFailure(_ body: () async throws -> Void) async -> DeviceError? {
    do {
        try await body()
        return nil
    } catch let error as DeviceError {
        return error
    } catch {
        return DeviceError(.closed, "not a DeviceError: \(error)")
    }
}
