import CameraControlCapture
import CameraControlEmbedded
import CameraControlGestures
import CameraControlHost
import CameraControlRPC
import CameraControlWire
import Synchronization

/// One simulated Camera Control played random gestures through a faulty link, in virtual time, with
/// every capture event accounted for: the machinery of the fault-injection property test and of
/// `camctl-bench soak`.
///
/// The real firmware (``VirtualLink``), the real host pipeline (``HostCore`` and a
/// ``CaptureEventInteraction``), and ``VirtualLinkFaults`` between them. Unlike ``VirtualCaptureRig`` it
/// keeps no history: every count is updated as events happen, so memory stays flat however long it
/// runs. When the event stream fails (the link died) the host pipeline is told the device was lost and
/// the run reconnects, as `CameraControlHost` does.
///
/// ```swift
/// let run = ReliabilityRun(seed: 1, faults: try LinkFaults(spec: "corrupt=1%,drop-frame=1%,dup=1%"))
/// var generator = GestureGenerator(seed: 1)
/// run.connect()
/// run.play(generator.scenario(gestures: 20))
/// run.tally.phantomCaptures          // 0
/// ```
public final class ReliabilityRun {
    /// How the run connects and what it listens to.
    public struct Options: Sendable {
        /// Faults also while handshaking and opening streams (false: the link is clean until connected,
        /// for hosts that do not retry a handshake or confirm a stream).
        public var faultsWhileConnecting = true
        /// Also open a raw-sample stream and check that no batch is delivered twice.
        public var rawSamples = true
        /// Samples per raw batch (0: the device's choice, 25). Small batches survive byte corruption
        /// better: at 1 % a 25-sample batch (≈ 110 bytes framed) arrives intact a third of the time, and
        /// while it streams the device sends no heartbeats, so the host's 200 ms liveness timeout fires
        /// every second or so.
        public var samplesPerBatch: UInt32 = 0
        /// Time after each scenario for releases, windows and retransmissions to settle, µs.
        public var settleMicros: UInt64 = 500_000
        /// Virtual time per step, µs (the firmware still samples at 1 kHz within a step).
        public var stepMicros: UInt64 = 1_000
        /// Host time between reconnect attempts, µs.
        public var reconnectBackoffMicros: UInt64 = 100_000
        /// Defaults.
        public init() {}
    }

    /// The firmware and the host link.
    public let link: VirtualLink
    /// The faults on the link.
    public let faults: VirtualLinkFaults
    /// The host pipeline.
    public let core: HostCore
    /// The app's capture interaction (one handler: volume up goes to it too).
    public let interaction: CaptureEventInteraction
    /// The options in use.
    public let options: Options

    private let accounting = CaptureAccounting()
    private let time = SharedMicros()
    private var eventStream: CallID?
    private var rawStream: CallID?
    private var connected = false
    /// The host was disconnected at some time during the scenario being played.
    private var wasDisconnected = false
    private var nextConnectAttempt: UInt64 = 0
    private var rawTally = RawTally()
    private var counts = ReliabilityTally()
    /// Clicks the last scenario lost with no sign yet.
    private var unreported: (full: Int, other: Int)?

    /// A device booted with `seed`, behind `faults`.
    public init(seed: UInt64, faults: LinkFaults, options: Options = Options()) {
        link = VirtualLink(seed: seed)
        self.faults = VirtualLinkFaults(faults)
        self.options = options
        core = HostCore()
        let time = self.time
        interaction = CaptureEventInteraction(clock: CaptureClock { time.micros }, handler: { _ in })
        let accounting = self.accounting
        interaction.outputObserver = { accounting.observe($0) }
        core.attach(interaction)
        link.stepMicros = options.stepMicros
        self.faults.install(on: link)
        interaction.setSessionRunning(true)
    }

    /// Everything counted so far.
    public var tally: ReliabilityTally {
        var tally = counts
        accounting.fill(&tally)
        tally.rawBatches = rawTally.batches
        tally.rawDuplicates = rawTally.duplicates
        tally.faults = faults.counts
        tally.deviceReliableGivenUp = UInt64(link.device.counters.counters.reliableGivenUp)
        tally.deviceHeartbeatTimeouts = UInt64(link.device.counters.counters.heartbeatTimeouts)
        tally.deviceTxDropped = UInt64(link.device.counters.counters.txDropped)
        tally.hostSequenceGaps = link.connection.counters.sequenceGaps
        tally.hostDuplicatesDropped = link.connection.counters.duplicatesDropped
        return tally
    }

    /// Handshakes and opens the streams, retrying (after ``Options/reconnectBackoffMicros``) until
    /// connected or `timeoutMicros` passed; returns whether it is connected.
    @discardableResult
    public func connect(timeoutMicros: UInt64 = 10_000_000) -> Bool {
        let end = link.nowMicros + timeoutMicros
        while !connected && link.nowMicros < end {
            attemptConnect()
            if !connected { run(forMicros: options.reconnectBackoffMicros) }
        }
        return connected
    }

    /// Plays `scenario` (scenario text, see docs/SIMULATOR.md) to its end and lets it settle, then adds
    /// what it expected and what the app got to the tally.
    ///
    /// - Throws: ``ScenarioError`` when the text does not parse.
    public func play(_ scenario: GestureScenario) throws(ScenarioError) {
        let before = accounting.snapshot()
        let lossesBefore = counts.linkLosses
        let givenUpBefore = link.device.counters.counters.reliableGivenUp
        wasDisconnected = !connected
        try link.device.play(scenario: scenario.text)
        let end = link.nowMicros + 600_000_000
        while link.device.isScenarioRunning && link.nowMicros < end { step() }
        run(forMicros: options.settleMicros)
        // Events held for a reliable one the device still retransmits (or gave up) are part of this
        // scenario: wait for the host's reorder hold to end (at most its retransmission budget).
        let holdEnd = link.nowMicros + core.configuration.maximumReliableReorderHoldMicros
        while core.orderer.isHolding && link.nowMicros < holdEnd { step() }
        let after = accounting.snapshot()

        counts.scenarios += 1
        counts.gestures += scenario.gestures
        counts.fullClicks += scenario.fullClicks
        counts.otherClicks += scenario.otherClicks
        let full = after.endedFull - before.endedFull
        let other = after.endedOther - before.endedOther
        counts.phantomCaptures += max(0, full - scenario.fullClicks) + max(0, other - scenario.otherClicks)
        let lostFull = max(0, scenario.fullClicks - full)
        let lostOther = max(0, scenario.otherClicks - other)
        // A loss is reported when the app saw a cancel, the link went down or stayed down, or the device
        // gave up a reliable packet during this scenario.
        let cancels = after.cancelled - before.cancelled
        // A reconnect still failing is reported too: the app was told the device is gone.
        let reported =
            cancels > 0 || counts.linkLosses > lossesBefore || wasDisconnected
            || link.device.counters.counters.reliableGivenUp > givenUpBefore
        counts.lostFullClicks += lostFull
        counts.lostOtherClicks += lostOther
        // A link loss shows up to 200 ms (the liveness timeout) after the device stopped sending, which
        // may be in the next scenario: a loss is silent only when neither this scenario nor the next
        // showed a sign.
        if let previous = unreported {
            if reported {
                counts.reportedLosses += previous.full + previous.other
            } else {
                counts.silentLostFullClicks += previous.full
                counts.silentLostOtherClicks += previous.other
            }
            unreported = nil
        }
        if reported {
            counts.reportedLosses += lostFull + lostOther
        } else if lostFull + lostOther > 0 {
            unreported = (lostFull, lostOther)
        }
        if after.open > 0 { counts.pressesOpenAfterSettle += after.open }
    }

    /// Ends the run as an app would: the session stops (presses in flight are cancelled).
    public func finish() {
        if let previous = unreported {
            counts.silentLostFullClicks += previous.full
            counts.silentLostOtherClicks += previous.other
            unreported = nil
        }
        time.micros = link.nowMicros
        interaction.setSessionRunning(false)
        core.deviceLost(atHostMicros: link.nowMicros)
    }

    /// Steps for `micros` of virtual time.
    public func run(forMicros micros: UInt64) {
        let end = link.nowMicros + micros
        while link.nowMicros < end { step() }
    }

    /// One step: the link, the streams, the pipeline; a reconnect when the link went down.
    public func step() {
        link.step()
        let now = link.nowMicros
        time.micros = now
        _ = link.takeEvents()
        if let call = eventStream {
            for event in (try? link.takeStreamMessages(call, as: InputEvent.self)) ?? [] {
                counts.inputEvents += 1
                core.receive(event, atHostMicros: now)
            }
            if let ending = link.streamEnd(call) {
                let reason = ending.map { "\($0.code): \($0.message)" } ?? "OK"
                counts.linkLossReasons[reason, default: 0] += 1
                lost(now)
            }
        }
        if let call = rawStream {
            for batch in (try? link.takeStreamMessages(call, as: RawSampleBatch.self)) ?? [] { rawTally.add(batch) }
            if link.streamEnd(call) != nil { rawStream = nil }
        }
        core.advance(toHostMicros: now)
        if !connected {
            wasDisconnected = true
            if now >= nextConnectAttempt { attemptConnect() }
        }
    }

    private func lost(_ now: UInt64) {
        eventStream = nil
        if let call = rawStream { link.cancel(call) }
        rawStream = nil
        connected = false
        counts.linkLosses += 1
        core.deviceLost(atHostMicros: now)
        nextConnectAttempt = now + options.reconnectBackoffMicros
    }

    private func attemptConnect() {
        counts.connectAttempts += 1
        faults.isActive = options.faultsWhileConnecting
        defer { faults.isActive = true }
        do {
            let response = try link.handshake()
            core.connected(response.capabilities ?? Capabilities())
            eventStream = try link.openStream(.inputStreamInputEvents, StreamInputEventsRequest())
            if options.rawSamples {
                var request = StreamRawSamplesRequest()
                request.samplesPerBatch = options.samplesPerBatch
                rawStream = try link.openStream(.inputStreamRawSamples, request)
            }
            // Let the stream requests cross (still clean when faults are off while connecting).
            for _ in 0..<5 { link.step() }
            connected = true
        } catch {
            counts.connectFailures += 1
            nextConnectAttempt = link.nowMicros + options.reconnectBackoffMicros
        }
    }
}

/// What a ``ReliabilityRun`` expected and got, and what its faults did.
public struct ReliabilityTally: Sendable, Hashable, CustomStringConvertible {
    /// Scenarios played.
    public var scenarios = 0
    /// Gestures played (pauses not counted).
    public var gestures = 0
    /// Camera Control full clicks and click-and-holds played (each must capture once).
    public var fullClicks = 0
    /// Button presses and remote clicks played (each must capture once).
    public var otherClicks = 0
    /// Captures (`ended`) from the Camera Control.
    public var capturesFull = 0
    /// Captures from buttons and remote clicks.
    public var capturesOther = 0
    /// `began` events.
    public var began = 0
    /// `cancelled` events.
    public var cancelled = 0
    /// Captures beyond what a scenario played (must be 0).
    public var phantomCaptures = 0
    /// A `began` whose id began before, or an `ended`/`cancelled` for a press not open (must be 0).
    public var pairingViolations = 0
    /// Presses still open when a scenario had settled.
    public var pressesOpenAfterSettle = 0
    /// Presses open at the end of the run (after ``ReliabilityRun/finish()`` must be 0).
    public var pressesOpen = 0
    /// Full clicks that did not capture.
    public var lostFullClicks = 0
    /// Buttons and remote clicks that did not capture.
    public var lostOtherClicks = 0
    /// Lost clicks of scenarios in which the loss was visible: a cancel, a link loss, a reliable packet
    /// the device gave up.
    public var reportedLosses = 0
    /// Full clicks lost with no such sign.
    public var silentLostFullClicks = 0
    /// Buttons and remote clicks lost with no such sign.
    public var silentLostOtherClicks = 0
    /// Input events the host received.
    public var inputEvents = 0
    /// Raw sample batches the host received.
    public var rawBatches = 0
    /// Raw sample batches received a second time (same first timestamp).
    public var rawDuplicates = 0
    /// Event streams that failed (the link died, or the device ended the stream).
    public var linkLosses = 0
    /// Why they failed: status and message → count.
    public var linkLossReasons: [String: Int] = [:]
    /// Handshake + stream opening attempts, and how many failed.
    public var connectAttempts = 0
    /// Failed connect attempts.
    public var connectFailures = 0
    /// The device's `reliable_given_up` counter.
    public var deviceReliableGivenUp: UInt64 = 0
    /// The device's `heartbeat_timeouts` counter (it saw the host go silent).
    public var deviceHeartbeatTimeouts: UInt64 = 0
    /// The device's `tx_dropped` counter (best-effort messages its transmitter had no room for).
    public var deviceTxDropped: UInt64 = 0
    /// The host's sequence gaps.
    public var hostSequenceGaps: UInt64 = 0
    /// Duplicates the host dropped.
    public var hostDuplicatesDropped: UInt64 = 0
    /// What the faults did.
    public var faults = FaultInjector.Counts()

    /// A tally with everything zero.
    public init() {}

    /// Field-by-field sum (fault counts included; device and host counters added).
    public static func + (lhs: Self, rhs: Self) -> Self {
        var sum = lhs
        sum.scenarios += rhs.scenarios
        sum.gestures += rhs.gestures
        sum.fullClicks += rhs.fullClicks
        sum.otherClicks += rhs.otherClicks
        sum.capturesFull += rhs.capturesFull
        sum.capturesOther += rhs.capturesOther
        sum.began += rhs.began
        sum.cancelled += rhs.cancelled
        sum.phantomCaptures += rhs.phantomCaptures
        sum.pairingViolations += rhs.pairingViolations
        sum.pressesOpenAfterSettle += rhs.pressesOpenAfterSettle
        sum.pressesOpen += rhs.pressesOpen
        sum.lostFullClicks += rhs.lostFullClicks
        sum.lostOtherClicks += rhs.lostOtherClicks
        sum.reportedLosses += rhs.reportedLosses
        sum.silentLostFullClicks += rhs.silentLostFullClicks
        sum.silentLostOtherClicks += rhs.silentLostOtherClicks
        sum.inputEvents += rhs.inputEvents
        sum.rawBatches += rhs.rawBatches
        sum.rawDuplicates += rhs.rawDuplicates
        sum.linkLosses += rhs.linkLosses
        sum.linkLossReasons.merge(rhs.linkLossReasons, uniquingKeysWith: +)
        sum.connectAttempts += rhs.connectAttempts
        sum.connectFailures += rhs.connectFailures
        sum.deviceReliableGivenUp += rhs.deviceReliableGivenUp
        sum.deviceHeartbeatTimeouts += rhs.deviceHeartbeatTimeouts
        sum.deviceTxDropped += rhs.deviceTxDropped
        sum.hostSequenceGaps += rhs.hostSequenceGaps
        sum.hostDuplicatesDropped += rhs.hostDuplicatesDropped
        sum.faults = sum.faults + rhs.faults
        return sum
    }

    /// The counts, several lines.
    public var description: String {
        """
        gestures \(gestures) in \(scenarios) scenarios: \(fullClicks) full clicks, \(otherClicks) buttons/remote clicks
        captures: \(capturesFull) full + \(capturesOther) other; began \(began), cancelled \(cancelled)
        phantom captures \(phantomCaptures), pairing violations \(pairingViolations), presses open \(pressesOpen) \
        (after a scenario settled: \(pressesOpenAfterSettle))
        lost full clicks \(lostFullClicks) (silent \(silentLostFullClicks)), lost buttons/remote \(lostOtherClicks) \
        (silent \(silentLostOtherClicks)), lost with a loss report \(reportedLosses)
        input events \(inputEvents), raw batches \(rawBatches) (delivered twice: \(rawDuplicates))
        link losses \(linkLosses) \(linkLossReasons.sorted { $0.key < $1.key }.map { "\($0.value)× \($0.key)" }), connect attempts \(connectAttempts) (failed \(connectFailures)); device reliable_given_up \
        \(deviceReliableGivenUp), heartbeat_timeouts \(deviceHeartbeatTimeouts), tx_dropped \(deviceTxDropped); host sequence gaps \(hostSequenceGaps), duplicates dropped \(hostDuplicatesDropped)
        faults: \(faults.frames) frames, \(faults.bytes) bytes; corrupted \(faults.corruptedBytes) bytes, dropped \
        \(faults.droppedBytes) bytes + \(faults.droppedFrames) frames, duplicated \(faults.duplicatedFrames), reordered \
        \(faults.reorderedFrames), garbage \(faults.garbageBursts) bursts (\(faults.garbageBytes) bytes), stalls \(faults.stalls)
        """
    }
}

/// A scenario of random gestures and what it must capture.
public struct GestureScenario: Sendable, Hashable, CustomStringConvertible {
    /// The scenario text.
    public var text: String
    /// Gestures in it.
    public var gestures: Int
    /// Full clicks and click-and-holds (one capture each, from the Camera Control).
    public var fullClicks: Int
    /// Buttons and remote clicks (one capture each).
    public var otherClicks: Int

    /// The text.
    public var description: String { text }
}

/// Makes random gesture scenarios, each gesture followed by a pause so that its captures are its own.
public struct GestureGenerator: Sendable {
    private var random: UInt64

    /// A generator seeded with `seed`.
    public init(seed: UInt64) { random = seed &* 0x2545_F491_4F6C_DD1D | 1 }

    private mutating func next(_ range: ClosedRange<Int>) -> Int {
        random ^= random << 13
        random ^= random >> 7
        random ^= random << 17
        return range.lowerBound + Int(random % UInt64(range.count))
    }

    /// `gestures` random gestures (at most 60: a scenario has at most 128 steps).
    public mutating func scenario(gestures: Int) -> GestureScenario {
        var lines = ["seed \(next(1...1_000_000))"]
        var full = 0
        var other = 0
        let count = min(max(gestures, 1), 60)
        for _ in 0..<count {
            switch next(0...99) {
            case 0..<30:
                lines.append("full-click force=\(next(3000...5000))mN hold=\(next(20...250))ms")
                full += 1
            case 30..<38:
                lines.append("click-and-hold \(next(350...1000))ms")
                full += 1
            case 38..<54:
                lines.append("light-press force=\(next(950...2000))mN hold=\(next(40...400))ms")
            case 54..<64:
                lines.append("double-light-press gap=\(next(60...300))ms hold=\(next(40...150))ms")
            case 64..<80:
                let force = next(0...1) == 1 ? " force=\(next(950...2000))mN" : ""
                lines.append("slide from=0.\(next(10...45)) to=0.\(next(55...90)) over=\(next(100...500))ms\(force)")
            case 80..<90:
                lines.append("button \(["volume-up", "volume-down", "action"][next(0...2)]) hold=\(next(40...300))ms")
                other += 1
            default:
                lines.append("remote-click")
                other += 1
            }
            lines.append("pause \(next(200...350))ms")
        }
        return GestureScenario(text: lines.joined(separator: "\n"), gestures: count, fullClicks: full, otherClicks: other)
    }
}

/// Capture events counted as they are delivered (from the interaction's output observer), with the
/// pairing rules checked in bounded memory: ids count up, so an id at or below the highest that began
/// cannot begin again.
private final class CaptureAccounting: Sendable {
    struct State {
        var open: Set<CaptureEventID> = []
        var highestBegan: UInt64 = 0
        var began = 0
        var endedFull = 0
        var endedOther = 0
        var cancelled = 0
        var violations = 0
    }

    struct Snapshot {
        var endedFull: Int
        var endedOther: Int
        var cancelled: Int
        var open: Int
    }

    private let state = Mutex(State())

    func observe(_ output: CaptureRouterOutput) {
        guard case .event(let event, _) = output else { return }
        state.withLock { state in
            switch event.phase {
            case .began:
                if event.id.rawValue <= state.highestBegan { state.violations += 1 }
                state.highestBegan = max(state.highestBegan, event.id.rawValue)
                state.open.insert(event.id)
                state.began += 1
            case .ended, .cancelled:
                guard state.open.remove(event.id) != nil else {
                    state.violations += 1
                    return
                }
                if event.phase == .cancelled {
                    state.cancelled += 1
                } else if event.source == .cameraControl {
                    state.endedFull += 1
                } else {
                    state.endedOther += 1
                }
            }
        }
    }

    func snapshot() -> Snapshot {
        state.withLock { Snapshot(endedFull: $0.endedFull, endedOther: $0.endedOther, cancelled: $0.cancelled, open: $0.open.count) }
    }

    func fill(_ tally: inout ReliabilityTally) {
        state.withLock { state in
            tally.began = state.began
            tally.capturesFull = state.endedFull
            tally.capturesOther = state.endedOther
            tally.cancelled = state.cancelled
            tally.pairingViolations = state.violations
            tally.pressesOpen = state.open.count
        }
    }
}

/// Raw batches by first timestamp; the last 512 are remembered (the stream moves forward, so that
/// catches a duplicate in bounded memory).
private struct RawTally {
    var batches = 0
    var duplicates = 0
    private var recent: Set<UInt64> = []
    private var order: [UInt64] = []
    private var next = 0

    mutating func add(_ batch: RawSampleBatch) {
        batches += 1
        if recent.contains(batch.firstTimestampMicros) {
            duplicates += 1
            return
        }
        recent.insert(batch.firstTimestampMicros)
        if order.count < 512 {
            order.append(batch.firstTimestampMicros)
        } else {
            recent.remove(order[next])
            order[next] = batch.firstTimestampMicros
            next = (next + 1) % order.count
        }
    }
}

/// Virtual time for the interaction's clock.
private final class SharedMicros: Sendable {
    private let value = Atomic<UInt64>(0)
    var micros: UInt64 {
        get { value.load(ordering: .relaxed) }
        set { value.store(newValue, ordering: .relaxed) }
    }
}
