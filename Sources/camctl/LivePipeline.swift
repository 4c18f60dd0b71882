import CameraControlCapture
import CameraControlControls
import CameraControlDevice
import CameraControlGestures
import CameraControlRPC
import CameraControlWire
import Foundation

/// The host stack as a camera app runs it: device events → gesture recogniser → capture-event
/// interaction and controls overlay; overlay haptics go back to the device. Prints every step.
actor LivePipeline {
    let session: DeviceSession
    private var recognizer: GestureRecognizer
    /// Puts retransmitted events back in device order before the recogniser sees them.
    private var orderer = InputEventOrderer()
    let interaction: CaptureEventInteraction
    let controls: CaptureControlsSession?
    let printer: EventPrinter
    /// Host time minus device time, microseconds (estimated at the handshake, refined by
    /// ``synchroniseClocks()``).
    private var clockOffsetMicros: Int64
    private var hapticsSent = 0
    /// Haptics go out through one serial task, so a round trip never holds up gestures (nor lets the
    /// ticker interleave with a half-delivered batch of them).
    private let haptics: AsyncStream<HapticPattern>.Continuation
    private let hapticSender: Task<Void, Never>
    /// Set when the event stream ends, so the ticker stops too.
    private var readerFinished = false

    init(session: DeviceSession, interaction: CaptureEventInteraction, controls: CaptureControlsSession?, printer: EventPrinter) {
        self.session = session
        self.interaction = interaction
        self.controls = controls
        self.printer = printer
        var configuration = GestureRecognizer.Configuration()
        if session.info.capabilities.slideResolution > 0 {
            configuration.slideResolution = session.info.capabilities.slideResolution
        }
        recognizer = GestureRecognizer(configuration: configuration)
        let (hapticStream, haptics) = AsyncStream<HapticPattern>.makeStream(bufferingPolicy: .bufferingNewest(16))
        self.haptics = haptics
        hapticSender = Task { [session, printer] in
            for await pattern in hapticStream {
                do {
                    try await session.playHaptic(pattern)
                } catch {
                    printer.note("haptic \(pattern) failed: \(error)")
                }
            }
        }
        clockOffsetMicros = Int64(bitPattern: hostMicros() &- session.info.deviceTimeMicros)
        printer.setClockOffset(clockOffsetMicros)
    }

    /// Estimates the device clock from the fastest of a few pings (the NTP idea: the device read its
    /// clock halfway through the round trip).
    func synchroniseClocks() async {
        var best: (rtt: UInt64, offset: Int64)?
        for _ in 0..<5 {
            let sent = hostMicros()
            guard let reply = try? await session.ping() else { continue }
            let received = hostMicros()
            let rtt = received - sent
            let offset = Int64(bitPattern: (sent + rtt / 2) &- reply.deviceTimeMicros)
            if best == nil || rtt < best!.rtt { best = (rtt, offset) }
        }
        if let best { clockOffsetMicros = best.offset }
        printer.setClockOffset(clockOffsetMicros)
    }

    /// The device clock as the host estimates it now.
    func deviceNowMicros() -> UInt64 {
        // Device times are outside input: wrapping arithmetic, never a trap.
        let estimate = Int64(bitPattern: hostMicros()) &- clockOffsetMicros
        return estimate > 0 ? UInt64(estimate) : 0
    }

    /// Feeds one input event through the stack.
    func handle(_ event: InputEvent) async {
        let latency = Double(Int64(bitPattern: hostMicros() &- event.timestampMicros) &- clockOffsetMicros) / 1000
        printer.input(event, latencyMillis: latency)
        for ordered in orderer.accept(event, atMicros: hostMicros()) {
            await deliver(recognizer.handle(ordered))
        }
    }

    /// Moves time-driven state on (long presses, double-press windows, overlay dismissal, momentum).
    func tick() async {
        for ordered in orderer.release(atMicros: hostMicros()) {
            await deliver(recognizer.handle(ordered))
        }
        // While an earlier event is awaited, time must not run past it (a long press would fire early).
        guard !orderer.isHolding else { return }
        let now = max(deviceNowMicros(), recognizer.currentMicros ?? 0)
        await deliver(recognizer.advance(toMicros: now))
        if let controls {
            await apply(controls.advance(toMicros: now))
        }
    }

    /// The device went away: presses in flight are cancelled.
    func deviceLost() async {
        _ = orderer.reset()  // what never completed its order is not delivered after the device is gone
        await deliver(recognizer.reset(cancellingAtMicros: deviceNowMicros()))
        interaction.deviceLost()
    }

    private func deliver(_ gestures: [Gesture]) async {
        for gesture in gestures {
            printer.gesture(gesture)
            interaction.handle(gesture)
            if let controls { await apply(controls.handle(gesture)) }
        }
    }

    private func apply(_ effects: [OverlayEffect]) async {
        for effect in effects {
            printer.overlay(effect, atDeviceMicros: deviceNowMicros())
            if case .haptic(let pattern, _) = effect {
                hapticsSent += 1
                haptics.yield(pattern)
            }
        }
    }

    private func markReaderFinished() { readerFinished = true }

    /// Stops the haptic sender.
    func finish() {
        haptics.finish()
        hapticSender.cancel()
    }

    /// Reads the device's event stream until `stop` says so or the stream fails (thrown); ticks every
    /// 5 ms meanwhile.
    func run(until stop: @escaping @Sendable () async -> Bool) async throws(RPCError) {
        let events = try await session.inputEvents()
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(5))
                await self.tick()
                if self.readerFinished { break }
                if await stop() { break }
            }
        }
        let reader = Task { () -> RPCError? in
            do {
                for try await event in events {
                    await self.handle(event)
                }
                self.markReaderFinished()
                return RPCError(code: .unavailable, message: "the device ended the event stream")
            } catch let error as RPCError {
                self.markReaderFinished()
                return error
            } catch {
                self.markReaderFinished()
                return RPCError(code: .unknown, message: "\(error)")
            }
        }
        _ = await ticker.value
        reader.cancel()
        if let failure = await reader.value, failure.code != StatusCode.cancelled {
            throw failure
        }
    }
}

/// Host microseconds on the continuous clock (never goes back).
func hostMicros() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) * 1_000_000 + UInt64(spec.tv_nsec) / 1_000
}

/// Prints the session as aligned lines, device time relative to the first event.
final class EventPrinter: @unchecked Sendable {
    private let lock = NSLock()
    private var originMicros: UInt64?
    /// Host minus device clock, microseconds, when known: turns a device timestamp into a latency.
    private var clockOffsetMicros: Int64?
    let quiet: Bool
    /// When false, the many slide samples (input events and slide-changed gestures) are not printed;
    /// the values they produce still are.
    let verbose: Bool
    private(set) var lines: [String] = []

    init(quiet: Bool = false, verbose: Bool = true) {
        self.quiet = quiet
        self.verbose = verbose
    }

    private func emit(_ deviceMicros: UInt64?, _ category: String, _ text: String) {
        lock.lock()
        defer { lock.unlock() }
        var stamp = "           "
        if let deviceMicros {
            if originMicros == nil { originMicros = deviceMicros }
            let relative = Double(Int64(bitPattern: deviceMicros &- originMicros!)) / 1000
            stamp = String(format: "%9.1f ms", relative)
        }
        let line = "\(stamp)  \(category.padding(toLength: 8, withPad: " ", startingAt: 0)) \(text)"
        lines.append(line)
        if !quiet { print(line) }
    }

    func input(_ event: InputEvent, latencyMillis: Double) {
        if !verbose && event.kind == .slide { return }
        var text = "\(event.kind.description.padding(toLength: 17, withPad: " ", startingAt: 0)) \(event.source)"
        if event.kind == .slide { text += "  position \(event.position)" }
        if event.forceMillinewtons > 0 { text += "  force \(event.forceMillinewtons) mN" }
        if event.peakForceMillinewtons > 0 { text += "  peak \(event.peakForceMillinewtons) mN" }
        text += String(format: "  latency %.2f ms", latencyMillis)
        emit(event.timestampMicros, "input", text)
    }

    func gesture(_ gesture: Gesture) {
        if !verbose, case .slideChanged = gesture.kind { return }
        emit(gesture.timestampMicros, "gesture", "\(Self.name(gesture.kind)) \(gesture.source)")
    }

    /// Times count from the next event again (a new device, or a restarted one, has a new clock).
    func resetOrigin() {
        lock.lock()
        originMicros = nil
        lock.unlock()
    }

    /// Sets the host-minus-device clock offset used for press-to-handler latencies.
    func setClockOffset(_ offset: Int64) {
        lock.lock()
        clockOffsetMicros = offset
        lock.unlock()
    }

    /// Host time now minus the host time of device timestamp `micros`, in milliseconds.
    private func latencyMillis(sinceDeviceMicros micros: UInt64) -> Double? {
        lock.lock()
        let offset = clockOffsetMicros
        lock.unlock()
        guard let offset else { return nil }
        return Double(Int64(bitPattern: hostMicros() &- micros) &- offset) / 1000
    }

    func capture(_ event: CaptureEvent, role: String) {
        let latency = latencyMillis(sinceDeviceMicros: event.deviceTimestampMicros)
        var text =
            "\(event.phase.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)) \(role.padding(toLength: 9, withPad: " ", startingAt: 0)) \(event.source)"
        if event.forceMillinewtons > 0 { text += "  force \(event.forceMillinewtons) mN" }
        if let duration = event.pressDurationMicros {
            text += String(format: "  %@ %.0f ms", event.isLongPress ? "hold" : "click", Double(duration) / 1000)
        }
        if let latency { text += String(format: "  latency %.2f ms", latency) }
        if event.phase == .ended { text += "  → CAPTURE" }
        emit(event.deviceTimestampMicros, "capture", text)
    }

    func overlay(_ effect: OverlayEffect, atDeviceMicros micros: UInt64) {
        if case .haptic(let haptic, let at) = effect {
            emit(at, "haptic", "\(haptic) → device")
        } else {
            emit(micros, "overlay", effect.description)
        }
    }

    func note(_ text: String) { emit(nil, "note", text) }

    static func name(_ kind: GestureKind) -> String {
        switch kind {
        case .touchBegan: "touch-began"
        case .touchEnded: "touch-ended"
        case .lightPressBegan: "light-press-began"
        case .lightPressEnded: "light-press-ended"
        case .doubleLightPress: "double-light-press"
        case .slideBegan(let m): String(format: "slide-began      at %.2f", m.position)
        case .slideChanged(let m): String(format: "slide-changed    at %.2f Δ%+.3f v%+.2f/s", m.position, m.delta, m.velocity)
        case .slideEnded(let m): String(format: "slide-ended      at %.2f", m.position)
        case .pressBegan: "press-began"
        case .longPressBegan(let held): String(format: "long-press-began after %.0f ms", Double(held) / 1000)
        case .pressEnded(let s):
            String(
                format: "press-ended      %@ %.0f ms peak %u mN", s.isLongPress ? "hold" : "click", Double(s.durationMicros) / 1000,
                s.peakForceMillinewtons)
        case .pressCancelled: "press-cancelled"
        case .remoteClick: "remote-click"
        }
    }
}
