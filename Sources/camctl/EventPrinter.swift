import CameraAppExample
import CameraControlCapture
import CameraControlControls
import CameraControlGestures
import CameraControlHost
import CameraControlWire
import Foundation

/// Host microseconds on the clock the host pipeline reads (never goes back).
func hostMicros() -> UInt64 { HostClock.monotonic.nowMicros() }

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

    init(quiet: Bool = false, verbose: Bool = true) {
        self.quiet = quiet
        self.verbose = verbose
    }

    /// The latest device time printed: lines about something with no timestamp of its own (an overlay
    /// change, a photo, a delegate call) take it.
    private var latestMicros: UInt64?

    /// Prints a line stamped with `deviceMicros`, or with the latest device time when nil (and a blank
    /// stamp before any, or when `stamped` is false).
    private func emit(_ deviceMicros: UInt64?, _ category: String, _ text: String, stamped: Bool = true) {
        lock.lock()
        defer { lock.unlock() }
        var stamp = "           "
        if deviceMicros != nil { latestMicros = deviceMicros }
        if stamped, let deviceMicros = deviceMicros ?? latestMicros {
            if originMicros == nil { originMicros = deviceMicros }
            let relative = Double(Int64(bitPattern: deviceMicros &- originMicros!)) / 1000
            stamp = String(format: "%9.1f ms", relative)
        }
        // Nothing is kept: a monitor runs for hours with flat memory.
        guard !quiet else { return }
        let line = "\(stamp)  \(category.padding(toLength: 8, withPad: " ", startingAt: 0)) \(text)"
        if let sink { sink(line) } else { print(line) }
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
        if !verbose, case .slideChanged = gesture.kind {
            // Not printed, but what it causes (value changes) is stamped with its time.
            lock.withLock { latestMicros = gesture.timestampMicros }
            return
        }
        emit(gesture.timestampMicros, "gesture", "\(Self.name(gesture.kind)) \(gesture.source)")
    }

    /// Times count from the next event again (a new device, or a restarted one, has a new clock).
    func resetOrigin() {
        lock.lock()
        originMicros = nil
        latestMicros = nil
        lock.unlock()
    }

    /// Sets the host-minus-device clock offset used for press-to-handler latencies.
    func setClockOffset(_ offset: Int64) {
        lock.lock()
        clockOffsetMicros = offset
        lock.unlock()
    }

    /// Where the host's clock offset is read from (the host's estimate), when set.
    var offsetSource: (@Sendable () -> Int64?)?
    /// Where lines go instead of stdout (the monitor's full-screen event log), when set.
    var sink: ((String) -> Void)?
    /// Where host time is read from for latencies (a replay's recorded time); the monotonic clock when nil.
    var nowSource: (() -> UInt64)?

    /// Host time now minus the host time of device timestamp `micros`, in milliseconds.
    private func latencyMillis(sinceDeviceMicros micros: UInt64) -> Double? {
        lock.lock()
        let offset = offsetSource?() ?? clockOffsetMicros
        lock.unlock()
        guard let offset else { return nil }
        let now = nowSource?() ?? hostMicros()
        return Double(Int64(bitPattern: now &- micros) &- offset) / 1000
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

    func overlay(_ effect: OverlayEffect, atDeviceMicros micros: UInt64?) {
        if case .haptic(let haptic, let at) = effect {
            emit(at, "haptic", "\(haptic) → device")
        } else {
            emit(micros, "overlay", effect.description)
        }
    }

    func note(_ text: String) { emit(nil, "note", text, stamped: false) }

    /// Prints one host effect (inputs only when verbose, as slide samples are many).
    func effect(_ effect: HostEffect) {
        switch effect {
        case .input(let event):
            if verbose { input(event, latencyMillis: latencyMillis(sinceDeviceMicros: event.timestampMicros) ?? 0) }
        case .gesture(let gesture): self.gesture(gesture)
        case .overlay(let overlayEffect): overlay(overlayEffect, atDeviceMicros: overlayTime(overlayEffect))
        case .connected, .deviceLost: break
        }
    }

    /// Remembers the latest device time seen, for overlay effects that carry none.
    private func overlayTime(_ effect: OverlayEffect) -> UInt64? {
        if case .haptic(_, let at) = effect { return at }
        return nil
    }

    /// Prints what the example app did: capture events (with their role), photos, actions, delegate calls.
    func app(_ event: CameraApp.Event) {
        switch event {
        case .capture(let captureEvent, let role): capture(captureEvent, role: role.rawValue)
        case .photo(let photo, _):
            emit(nil, "photo", String(format: "#%d zoom %.2f× bias %+.2f EV", photo.sequenceNumber, photo.zoomFactor, photo.exposureBias))
        case .action(let id, let value):
            // One per slide sample: only with --verbose (the summary has the final values).
            if verbose { emit(nil, "action", "\(id) \(value)") }
        case .delegate(let call): emit(nil, "delegate", call)
        }
    }

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
