import CameraControlPosixTransport
import CameraControlSerialTransport
import CameraControlTransport
import CameraControlWire
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `camctl relay A B [--faults SPEC] [--link PATH] [--seconds N] [--quiet]`: carries bytes between a
/// host side A and a device side B, damaging them as `SPEC` says (``LinkFaults``), and logs every
/// fault it injects on stderr.
///
/// A is a port the host already has open on the other end, or `pty`: the relay makes a pseudo-terminal
/// and prints its path (and places a symlink at `--link PATH`), so `camctl monitor PATH` connects
/// through the relay. B is any port: `camctl-sim`'s pty, a real board's serial port. `unplug=D:U`
/// cuts both directions for U, D after the start and after each return (and removes the `--link` symlink meanwhile); `reset=` needs
/// the device's cooperation and is refused here (`camctl-sim --faults reset=…` does it).
///
/// Both sides run on one event loop (``RelayEngine``): what one side reads goes through its direction's
/// ``FaultInjector`` and out of the other side in the same wake-up, and the loop wakes again only when
/// the injectors or the cable have something due (a stall's end, a held frame, a replug).
package enum Relay {
    /// Carries bytes between `hostSide` (a port, or `pty`) and `deviceSide` through `faults`, until either
    /// side ends, `seconds` (0: no limit) pass or `stop` is requested (Ctrl-C); `linkPath` is a symlink to a
    /// `pty` host side. Then it prints what it carried and injected.
    package static func run(
        hostSide: String, deviceSide: String, faults: LinkFaults, linkPath requestedLink: String?, seconds: Int, quiet: Bool,
        stop: StopRequest? = nil
    ) async throws {
        let log = RelayLog(quiet: quiet)

        let device = try Transports.open(path: deviceSide)
        let host: any EventLoopTransport
        var keepAlive: PseudoTerminalPair?
        var holder: Int32 = -1
        var linkPath: String?
        if hostSide == "pty" {
            let pair = try PseudoTerminalPair.open()
            // Hold the subordinate open with a descriptor nobody reads (so the master sees no hang-up
            // between hosts), and close the pair's own subordinate transport.
            holder = open(pair.subordinatePath, O_RDWR | O_NOCTTY)
            pair.subordinate.close()
            keepAlive = pair
            host = pair.master
            if let path = requestedLink {
                try placeLink(path, to: pair.subordinatePath)
                linkPath = path
            }
            print("relay: host side at \(pair.subordinatePath)\(linkPath.map { " (\($0))" } ?? ""), device side \(device.name)")
        } else {
            host = try Transports.open(path: hostSide)
            print("relay: \(host.name) ⇄ \(device.name)")
        }
        print("relay: faults \(faults.isEmpty ? "none" : faults.description)")
        let loop = try PollEventLoop(name: "cc-relay")
        defer { loop.shutdown() }
        let engine = RelayEngine(
            faults: faults, log: log, loop: loop, linkPath: linkPath, linkTarget: keepAlive?.subordinatePath)
        try engine.start(host: host, device: device)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await engine.firstEnding() }
            if seconds > 0 {
                group.addTask { try? await Task.sleep(for: .seconds(seconds)) }
            }
            if let stop { group.addTask { await stop.wait() } }
            await group.next()
            group.cancelAll()
            // Closing ends both sides, and so the wait for the first ending; the relay's own close is no
            // side's ending worth a note.
            engine.stopping()
            host.close()
            device.close()
        }
        let (up, down) = engine.counts
        print("relay: host→device \(summary(up)); device→host \(summary(down))")
        if let linkPath { try? FileManager.default.removeItem(atPath: linkPath) }
        withExtendedLifetime(keepAlive) {}
        if holder >= 0 { _ = Glibc.close(holder) }
    }

    package static func summary(_ counts: FaultInjector.Counts) -> String {
        "\(counts.bytes) bytes in \(counts.frames) frames; corrupted \(counts.corruptedBytes), dropped \(counts.droppedBytes) bytes + "
            + "\(counts.droppedFrames) frames, duplicated \(counts.duplicatedFrames), reordered \(counts.reorderedFrames), "
            + "garbage \(counts.garbageBursts) bursts, stalls \(counts.stalls), baud-damaged \(counts.baudDamagedBytes)"
    }

    /// Points the symbolic link `path` at `target`, replacing a link already there (never a file).
    ///
    /// - Throws: ``RecordingError`` in one sentence: "cannot make the link PATH: it exists and is not a
    ///   symbolic link", or with the system's reason ("No such file or directory").
    package static func placeLink(_ path: String, to target: String) throws(RecordingError) {
        var existing = stat()
        if lstat(path, &existing) == 0 {
            guard existing.st_mode & S_IFMT == S_IFLNK else {
                throw RecordingError(description: "cannot make the link \(path): it exists and is not a symbolic link")
            }
            _ = unlink(path)
        }
        guard symlink(target, path) == 0 else {
            throw RecordingError(description: "cannot make the link \(path): \(BoundedFiles.reason(errno))")
        }
    }

    /// Microseconds since the relay started.
    package static let start = ContinuousClock.now
    package static var nowMicros: UInt64 {
        let elapsed = start.duration(to: .now).components
        return UInt64(max(0, elapsed.seconds * 1_000_000 + elapsed.attoseconds / 1_000_000_000_000))
    }
}

/// The relay on its event loop: both sides' reads, the two directions' injectors, the cable's plugs and
/// unplugs and the one timer for whatever falls due next. Everything runs on the loop's thread, under one
/// lock (the counts are read from elsewhere once the relay ends).
package final class RelayEngine: Sendable {
    /// One direction: its injector and where its bytes go.
    private struct Direction {
        let name: String
        var injector: FaultInjector
        var out: (any EventLoopControl)?
    }

    private struct State {
        var toDevice: Direction
        var toHost: Direction
        var unpluggedUntil: UInt64?
        var nextUnplug: UInt64?
        var timer: LoopTimer?
        var ended = false
        var stopping = false
        var endWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let faults: LinkFaults
    private let log: RelayLog
    private let loop: PollEventLoop
    private let linkPath: String?
    private let linkTarget: String?
    private let state: Mutex<State>

    package init(faults: LinkFaults, log: RelayLog, loop: PollEventLoop, linkPath: String?, linkTarget: String?) {
        self.faults = faults
        self.log = log
        self.loop = loop
        self.linkPath = linkPath
        self.linkTarget = linkTarget
        state = Mutex(
            State(
                toDevice: Direction(
                    name: "host→device", injector: FaultInjector(faults: faults, stream: 1, keepsRecords: true)),
                toHost: Direction(
                    name: "device→host", injector: FaultInjector(faults: faults, stream: 2, keepsRecords: true)),
                nextUnplug: faults.unplugEveryMicros.map { Relay.nowMicros + $0 }))
    }

    /// Runs both sides on the engine's loop. Under the engine's lock: what a side reads at once waits
    /// until both outputs are in place. Neither side runs when the other cannot (both are closed then).
    package func start(host: any EventLoopTransport, device: any EventLoopTransport) throws {
        let started = state.withLock { state -> Bool in
            guard let hostControl = host.startEventLoop(delegate: Side(engine: self, name: host.name, toDevice: true), on: loop),
                let deviceControl = device.startEventLoop(
                    delegate: Side(engine: self, name: device.name, toDevice: false), on: loop)
            else { return false }
            state.toDevice.out = deviceControl
            state.toHost.out = hostControl
            armLocked(&state)
            return true
        }
        guard started else {
            host.close()
            device.close()
            throw TransportError(code: .openFailed, message: "cannot run \(host.name) and \(device.name) on the relay's loop")
        }
    }

    /// Returns once either side has ended.
    package func firstEnding() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ended = state.withLock { state -> Bool in
                if !state.ended { state.endWaiters.append(continuation) }
                return state.ended
            }
            if ended { continuation.resume() }
        }
    }

    /// What each direction carried and damaged.
    package var counts: (toDevice: FaultInjector.Counts, toHost: FaultInjector.Counts) {
        state.withLock { ($0.toDevice.injector.counts, $0.toHost.injector.counts) }
    }

    fileprivate func received(_ bytes: UnsafeRawBufferPointer, toDevice: Bool) {
        state.withLock { state in
            let now = Relay.nowMicros
            if toDevice {
                carryLocked(&state.toDevice, Array(bytes), unplugged: state.unpluggedUntil != nil, now: now)
            } else {
                carryLocked(&state.toHost, Array(bytes), unplugged: state.unpluggedUntil != nil, now: now)
            }
            armLocked(&state)
        }
    }

    /// The relay is about to close both sides itself (`--seconds` passed, or a stop was asked for): their
    /// endings are not reported as if a side had gone.
    package func stopping() {
        state.withLock { $0.stopping = true }
    }

    fileprivate func sideEnded(_ name: String, toDevice: Bool, _ error: TransportError) {
        let (waiters, stopping) = state.withLock { state -> ([CheckedContinuation<Void, Never>], Bool) in
            state.timer?.cancel()
            state.ended = true
            defer { state.endWaiters = [] }
            return (state.endWaiters, state.stopping)
        }
        if !stopping { log.note("\(toDevice ? "host→device" : "device→host"): \(name) ended: \(error)") }
        for waiter in waiters { waiter.resume() }
    }

    /// The timer: plugs or unplugs the cable and releases what the injectors held back.
    private func tick() {
        let note: String? = state.withLock { state in
            let now = Relay.nowMicros
            var note: String?
            if let until = state.unpluggedUntil, now >= until {
                state.unpluggedUntil = nil
                if let linkPath, let linkTarget { try? Relay.placeLink(linkPath, to: linkTarget) }
                note = "replug after \(faults.unplugForMicros / 1000) ms"
            } else if let next = state.nextUnplug, now >= next, state.unpluggedUntil == nil {
                state.unpluggedUntil = now + faults.unplugForMicros
                state.nextUnplug = now + (faults.unplugEveryMicros ?? 0) + faults.unplugForMicros
                if let linkPath { try? FileManager.default.removeItem(atPath: linkPath) }
                note = "unplug for \(faults.unplugForMicros / 1000) ms"
            }
            let unplugged = state.unpluggedUntil != nil
            flushDueLocked(&state.toDevice, unplugged: unplugged, now: now)
            flushDueLocked(&state.toHost, unplugged: unplugged, now: now)
            armLocked(&state)
            return note
        }
        if let note { log.note(note) }
    }

    private func carryLocked(_ direction: inout Direction, _ bytes: [UInt8], unplugged: Bool, now: UInt64) {
        if unplugged {
            direction.injector.flush()
            return
        }
        direction.injector.feed(bytes, atMicros: now)
        flushDueLocked(&direction, unplugged: unplugged, now: now)
    }

    private func flushDueLocked(_ direction: inout Direction, unplugged: Bool, now: UInt64) {
        for record in direction.injector.takeRecords() { log.note("\(direction.name) \(record)", atMicros: record.atMicros) }
        if unplugged {
            direction.injector.flush()
            return
        }
        let bytes = direction.injector.take(atMicros: now)
        guard !bytes.isEmpty, let out = direction.out else { return }
        bytes.withUnsafeBytes { out.write($0) }
    }

    /// Sets the one timer for the earliest of what falls due (nothing due: no timer).
    private func armLocked(_ state: inout State) {
        state.timer?.cancel()
        state.timer = nil
        guard !state.ended else { return }
        let due = [
            state.toDevice.injector.nextDueMicros, state.toHost.injector.nextDueMicros, state.unpluggedUntil,
            state.unpluggedUntil == nil ? state.nextUnplug : nil,
        ].compactMap { $0 }.min()
        guard let due else { return }
        let delay = Duration.microseconds(Int64(due) - Int64(Relay.nowMicros))
        state.timer = loop.schedule(after: max(delay, .zero)) { [weak self] in self?.tick() }
    }
}

/// One side of the relay: its reads go into its direction.
private final class Side: EventLoopDelegate {
    let engine: RelayEngine
    let name: String
    let toDevice: Bool

    init(engine: RelayEngine, name: String, toDevice: Bool) {
        self.engine = engine
        self.name = name
        self.toDevice = toDevice
    }

    func eventLoopReceived(_ bytes: UnsafeRawBufferPointer) { engine.received(bytes, toDevice: toDevice) }

    func eventLoopTimerFired() {}

    func eventLoopEnded(_ error: TransportError) { engine.sideEnded(name, toDevice: toDevice, error) }
}

/// The relay's log on stderr: `  12.345678 host→device drop-frame frame 12, 30 bytes`.
package struct RelayLog: Sendable {
    package let quiet: Bool

    /// A log that notes on standard error, or not at all when `quiet`.
    package init(quiet: Bool) {
        self.quiet = quiet
    }

    package func note(_ text: String, atMicros micros: UInt64 = Relay.nowMicros) {
        guard !quiet else { return }
        let line = String(format: "%10.6f ", Double(micros) / 1_000_000) + text + "\n"
        StandardStreams.write(line, to: 2)
    }
}

/// A request to stop a long-running tool (its Ctrl-C), made from any thread, awaited by the tool.
package final class StopRequest: Sendable {
    private let state = Mutex<(requested: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    package init() {}

    /// Asks the tool to stop (once; later requests change nothing).
    package func request() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.requested = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Returns once ``request()`` was called, or when the task is cancelled.
    package func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.requested || Task.isCancelled { return true }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }?.resume()
        }
    }
}
