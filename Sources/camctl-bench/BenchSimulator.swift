import CameraControlCapture
import CameraControlHost
import CameraControlPorts
import CameraControlTools
import Foundation
import Synchronization

/// `camctl-sim` as a child process of a bench, the `CameraControlHost` connected to it, and the presses it
/// plays: what `latency`, `paced` and `idle` share.
///
/// The simulator is `--sim PATH`, or `camctl-sim` next to this executable (`swift build` puts them together);
/// it runs with `--quiet --exit-with-parent` (it ends with this process), the words of `--sim-args "ARGS"`
/// (split at spaces, e.g. `--sim-args "--spin-us 60"`: every simulator the bench starts gets them), the
/// caller's arguments and, when clicks are asked for, a scenario of that many volume-down clicks (300 ms of
/// rest, then a 60 ms press and 90 ms of rest each). It prints its pty's path first (``port``), then whatever
/// those arguments ask it to (``readLine()``). ``stop()`` (or the end of the object) terminates it and
/// removes the scenario.
final class BenchSimulator {
    /// A simulator that did not start as expected.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Values added from handlers on other threads, and one waiter for a count of them.
    final class Samples: Sendable {
        private struct State {
            var values: [Double] = []
            var wanted = Int.max
            var waiter: CheckedContinuation<Void, Never>?
        }
        private let state = Mutex(State())

        /// Adds one value (and resumes ``wait(forCount:)`` when this one makes its count).
        func add(_ value: Double) {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.values.append(value)
                guard state.values.count >= state.wanted else { return nil }
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }

        /// Every value so far, in the order added.
        var all: [Double] { state.withLock { $0.values } }

        /// How many values so far.
        var count: Int { state.withLock { $0.values.count } }

        /// Returns once `count` values are in, or when the task is cancelled. Asleep until then: nothing
        /// polls, so the host measured shares its machine with no timer of the bench's.
        func wait(forCount count: Int) async {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let ready = state.withLock { state -> Bool in
                        if state.values.count >= count || Task.isCancelled { return true }
                        state.wanted = count
                        state.waiter = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            } onCancel: {
                state.withLock { state -> CheckedContinuation<Void, Never>? in
                    defer { state.waiter = nil }
                    return state.waiter
                }?.resume()
            }
        }
    }

    /// The most clicks a scenario can hold (docs/SIMULATOR.md: 128 steps; a pause and two steps per click).
    static let maxClicks = 63

    /// The pseudo-terminal the simulator serves.
    let port: String
    private let process: Process
    private let output: FileHandle
    private let folder: URL?

    /// Starts the simulator with `arguments` (and a scenario of `clicks` clicks, if given) and reads its port.
    ///
    /// - Throws: when the scenario cannot be written, the simulator cannot be started or prints no port.
    init(_ options: BenchOptions, clicks: Int? = nil, arguments: [String] = []) throws {
        let simulator = options.values["sim"] ?? Self.siblingExecutable("camctl-sim")
        var scenarioArguments: [String] = []
        if let clicks {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("camctl-bench-\(getpid())-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let scenario = folder.appendingPathComponent("clicks.scenario")
            try Self.clickScenario(clicks).write(to: scenario, atomically: true, encoding: .utf8)
            scenarioArguments = ["--scenario", scenario.path]
            self.folder = folder
        } else {
            folder = nil
        }
        process = Process()
        process.executableURL = URL(fileURLWithPath: simulator)
        let passed = (options.values["sim-args"] ?? "").split(separator: " ").map(String.init)
        process.arguments = ["--quiet", "--exit-with-parent"] + passed + arguments + scenarioArguments
        let pipe = Pipe()
        process.standardOutput = pipe
        output = pipe.fileHandleForReading
        do {
            try process.runWithDefaultSignals()
            let line = try Self.readLine(from: output)
            guard !line.isEmpty else { throw Failure(description: "\(simulator) printed no port") }
            port = line
        } catch {
            if process.isRunning { process.terminate() }
            if let folder { try? FileManager.default.removeItem(at: folder) }
            throw error
        }
    }

    deinit { stop() }

    /// The next line the simulator prints (without its newline; empty at the end of its output).
    func readLine() throws -> String { try Self.readLine(from: output) }

    /// Device time 0 on `CLOCK_MONOTONIC`, µs: the line `--print-clock-origin` (which must be among the
    /// simulator's arguments) makes it print after its port, so device timestamps can be placed on that
    /// clock exactly, not through a host's estimate. Read it before any other line.
    ///
    /// - Throws: ``Failure`` when the next line is not the clock origin.
    func clockOrigin() throws -> Int64 {
        let line = try readLine()
        guard line.hasPrefix("clock-origin-us "), let origin = Int64(line.dropFirst("clock-origin-us ".count)) else {
            throw Failure(description: "camctl-sim did not print its clock origin: '\(line)'")
        }
        return origin
    }

    /// A `CameraControlHost` connected to the simulator's port (handshake done, clock estimated).
    func connect() async throws -> CameraControlHost {
        try await CameraControlHost.connect(to: port, hostName: "camctl-bench")
    }

    /// Attaches a capture interaction to `host` whose handler gets each press's `.began` event, waits until
    /// `samples` holds `count` values or the scenario's time plus 10 s has passed, then stops the host.
    func collectPresses(
        into host: CameraControlHost, count: Int, until samples: Samples, handler: @escaping CaptureEventInteraction.Handler
    ) async throws {
        let interaction = CaptureEventInteraction { event in
            guard event.phase == .began else { return }
            handler(event)
        }
        await host.attach(interaction)
        interaction.setSessionRunning(true)
        // One timer for the whole run, not a poll: the C host's run has none either.
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await samples.wait(forCount: count) }
            group.addTask { try? await Task.sleep(for: .seconds(Double(count) * 0.2 + 10)) }
            await group.next()
            group.cancelAll()
        }
        await host.stop()
    }

    /// Terminates the simulator and removes its scenario (again: nothing).
    func stop() {
        if process.isRunning { process.terminate() }
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }

    /// The scenario of `clicks` volume-down clicks.
    static func clickScenario(_ clicks: Int) -> String {
        let steps = ["pause 300ms"] + Array(repeating: ["button volume-down hold=60ms", "pause 90ms"], count: clicks).flatMap { $0 }
        return steps.joined(separator: "\n") + "\n"
    }

    /// The path of an executable next to this one.
    static func siblingExecutable(_ name: String) -> String {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent(name).path
    }

    private static func readLine(from handle: FileHandle) throws -> String {
        var line: [UInt8] = []
        while let byte = try handle.read(upToCount: 1)?.first, byte != 10 { line.append(byte) }
        return String(decoding: line, as: UTF8.self)
    }
}

extension BenchRow {
    /// A row of this project's `values` next to a baseline's `baselineValues`, each as statistics.
    static func compare(
        _ name: String, unit: String, _ values: [Double], against baseline: String, _ baselineValues: [Double]
    ) -> BenchRow {
        BenchRow(name: name, unit: unit, project: Stats(values), baseline: (baseline, Stats(baselineValues)))
    }
}
