import CameraAppExample
import CameraControlCapture
import CameraControlControls
import CameraControlGestures
import CameraControlHost
import CameraControlWire
import Foundation

/// Host microseconds on the clock the host pipeline reads (never goes back).
package func hostMicros() -> UInt64 { HostClock.monotonic.nowMicros() }

/// Prints the session as aligned lines, device time relative to the first event.
package final class EventPrinter: @unchecked Sendable {
    private let lock = NSLock()
    private var originMicros: UInt64?
    /// Host minus device clock, microseconds, when known: turns a device timestamp into a latency.
    private var clockOffsetMicros: Int64?
    package let quiet: Bool
    /// When false, the many slide samples (input events and slide-changed gestures) are not printed;
    /// the values they produce still are.
    package let verbose: Bool
    /// When true, each line is a JSON object instead (README, "JSON"): `type` (the category), `tMs`
    /// (device time since the first event, when stamped), `deviceTimeUs`, and the type's fields.
    package let json: Bool

    package init(quiet: Bool = false, verbose: Bool = true, json: Bool = false) {
        self.quiet = quiet
        self.verbose = verbose
        self.json = json
    }

    /// The capture interactions whose ignored presses are printed (``watch(_:)``), each with the count of
    /// presses it had ignored when last looked at. Guarded by `watchLock`, not the printer's lock: reading an
    /// interaction takes its lock, and a capture handler holding neither may print meanwhile.
    private var watched: [(interaction: CaptureEventInteraction, seen: UInt64)] = []
    private let watchLock = NSLock()

    /// Prints the presses `interaction` ignores (a press on a handler busy with another: one press per
    /// handler, docs/CAPTURE.md), as `ignored` lines: Apple's stack drops them silently, and a monitor that
    /// showed the press's gestures with no capture would leave its user guessing. They print with the next
    /// effect after the press began (the interaction decides after the host reported the gesture).
    package func watch(_ interaction: CaptureEventInteraction) {
        watchLock.lock()
        defer { watchLock.unlock() }
        watched.append((interaction, interaction.ignoredPressCount))
    }

    /// The ignored presses since the last look, oldest first. One look at a time (`watchLock`), and the count
    /// only grows, so nothing is printed twice by two looks. The count and the list are read in one look
    /// (``CaptureEventInteraction/ignoredPresses``): a press ignored between two reads would be in the list
    /// and not the count, and taken in place of an older one, then again at the next look (the interaction
    /// may be fed on another thread than the one printing).
    private func newlyIgnored() -> [CaptureDiagnostic] {
        watchLock.lock()
        defer { watchLock.unlock() }
        var found: [CaptureDiagnostic] = []
        for index in watched.indices {
            let (count, diagnostics) = watched[index].interaction.ignoredPresses
            guard count > watched[index].seen else { continue }
            let ignored = diagnostics.filter { if case .overlappingPressIgnored = $0 { true } else { false } }
            // The newest of the (bounded) list: older ones may have left it.
            found += ignored.suffix(Int(min(count - watched[index].seen, UInt64(ignored.count))))
            watched[index].seen = count
        }
        return found
    }

    private func printIgnored() {
        for diagnostic in newlyIgnored() {
            guard case .overlappingPressIgnored(let source, let role, let active, let micros) = diagnostic else { continue }
            emit(
                micros, "ignored",
                "\(source) press: the \(role.rawValue) handler is busy with \(active) (one press per handler)",
                fields: [
                    JSONMember("source", .string("\(source)")), JSONMember("role", .string(role.rawValue)),
                    JSONMember("busyWith", .string("\(active)")),
                ])
        }
    }

    /// The latest device time printed: lines about something with no timestamp of its own (a photo, a
    /// delegate call, an action) take it. The host reports an overlay effect before the delegate calls and
    /// actions it causes, so those lines carry the effect's time.
    private var latestMicros: UInt64?

    /// Prints a line stamped with `deviceMicros`, or with the latest device time when nil (and a blank
    /// stamp before any, or when `stamped` is false).
    private func emit(
        _ deviceMicros: UInt64?, _ category: String, _ text: String, stamped: Bool = true, fields: [JSONMember] = []
    ) {
        lock.lock()
        defer { lock.unlock() }
        var stamp = "           "
        var relative: Double?
        if deviceMicros != nil { latestMicros = deviceMicros }
        let stampMicros = stamped ? deviceMicros ?? latestMicros : nil
        if let stampMicros {
            if originMicros == nil { originMicros = stampMicros }
            relative = Double(Int64(bitPattern: stampMicros &- originMicros!)) / 1000
            stamp = String(format: "%9.1f ms", relative!)
        }
        // Nothing is kept: a monitor runs for hours with flat memory.
        if quiet { return }
        if json {
            var members = [JSONMember("type", .string(category))]
            if let relative, let stampMicros {
                members.append(JSONMember("tMs", .number(String(format: "%.3f", relative))))
                members.append(JSONMember("deviceTimeUs", stampMicros.jsonValue))
            }
            let line = JSONValue.object(members + (fields.isEmpty ? [JSONMember("text", .string(text))] : fields)).compactText
            if let sink { sink(line) } else { print(line) }
        } else {
            let line = "\(stamp)  \(category.padding(toLength: 8, withPad: " ", startingAt: 0)) \(text)"
            if let sink { sink(line) } else { print(line) }
        }
    }

    private static func millis(_ value: Double) -> JSONValue { .number(String(format: "%.3f", value)) }

    package func input(_ event: InputEvent, latencyMillis: Double) {
        if !verbose && event.kind == .slide { return }
        var text = "\(event.kind.description.padding(toLength: 17, withPad: " ", startingAt: 0)) \(event.source)"
        if event.kind == .slide { text += "  position \(event.position)" }
        if event.forceMillinewtons > 0 { text += "  force \(event.forceMillinewtons) mN" }
        if event.peakForceMillinewtons > 0 { text += "  peak \(event.peakForceMillinewtons) mN" }
        text += String(format: "  latency %.2f ms", latencyMillis)
        emit(
            event.timestampMicros, "input", text,
            fields: [
                JSONMember("kind", .string(event.kind.description)), JSONMember("source", .string(event.source.description)),
                JSONMember("position", .integer(event.position)), JSONMember("forceMn", .integer(event.forceMillinewtons)),
                JSONMember("peakForceMn", .integer(event.peakForceMillinewtons)),
                JSONMember("eventNumber", .integer(event.eventNumber)), JSONMember("latencyMs", Self.millis(latencyMillis)),
            ])
    }

    package func gesture(_ gesture: Gesture) {
        if !verbose, case .slideChanged = gesture.kind {
            // Not printed, but what it causes (value changes) is stamped with its time.
            lock.withLock { latestMicros = gesture.timestampMicros }
            return
        }
        emit(
            gesture.timestampMicros, "gesture", "\(Self.name(gesture.kind)) \(gesture.source)",
            fields: [JSONMember("source", .string(gesture.source.description))] + Self.fields(gesture.kind))
    }

    /// Times count from the next event again (a new device, or a restarted one, has a new clock).
    package func resetOrigin() {
        lock.lock()
        originMicros = nil
        latestMicros = nil
        lock.unlock()
    }

    /// Sets the host-minus-device clock offset used for press-to-handler latencies.
    package func setClockOffset(_ offset: Int64) {
        lock.lock()
        clockOffsetMicros = offset
        lock.unlock()
    }

    /// Where the host's clock offset is read from (the host's estimate), when set.
    package var offsetSource: (@Sendable () -> Int64?)?
    /// Where lines (or JSON objects) go instead of stdout (the monitor's full-screen event log, the live
    /// page), when set.
    package var sink: ((String) -> Void)?
    /// Where host time is read from for latencies (a replay's recorded time); the monotonic clock when nil.
    package var nowSource: (() -> UInt64)?

    /// Host time now minus the host time of device timestamp `micros`, in milliseconds.
    private func latencyMillis(sinceDeviceMicros micros: UInt64) -> Double? {
        lock.lock()
        let offset = offsetSource?() ?? clockOffsetMicros
        lock.unlock()
        guard let offset else { return nil }
        let now = nowSource?() ?? hostMicros()
        return Double(Int64(bitPattern: now &- micros) &- offset) / 1000
    }

    package func capture(_ event: CaptureEvent, role: String) {
        let latency = latencyMillis(sinceDeviceMicros: event.deviceTimestampMicros)
        var text =
            "\(event.phase.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)) \(role.padding(toLength: 9, withPad: " ", startingAt: 0)) \(event.source)"
        if event.forceMillinewtons > 0 { text += "  force \(event.forceMillinewtons) mN" }
        if let duration = event.pressDurationMicros {
            text += String(format: "  %@ %.0f ms", event.isLongPress ? "hold" : "click", Double(duration) / 1000)
        }
        if let latency { text += String(format: "  latency %.2f ms", latency) }
        if event.phase == .ended { text += "  → CAPTURE" }
        var fields = [
            JSONMember("phase", .string(event.phase.rawValue)), JSONMember("role", .string(role)),
            JSONMember("source", .string(event.source.description)), JSONMember("forceMn", .integer(event.forceMillinewtons)),
        ]
        if let duration = event.pressDurationMicros {
            fields.append(JSONMember("pressDurationMs", Self.millis(Double(duration) / 1000)))
            fields.append(JSONMember("isLongPress", .bool(event.isLongPress)))
        }
        if let latency { fields.append(JSONMember("latencyMs", Self.millis(latency))) }
        fields.append(JSONMember("captured", .bool(event.phase == .ended)))
        emit(event.deviceTimestampMicros, "capture", text, fields: fields)
    }

    package func overlay(_ effect: OverlayEffect, atDeviceMicros micros: UInt64?) {
        if case .haptic(let haptic, let at) = effect {
            emit(at, "haptic", "\(haptic) → device", fields: [JSONMember("pattern", .string("\(haptic)"))])
        } else {
            emit(micros, "overlay", effect.description, fields: [JSONMember("effect", .string(effect.description))])
        }
    }

    package func note(_ text: String) { emit(nil, "note", text, stamped: false, fields: [JSONMember("text", .string(text))]) }

    /// Prints one host effect (inputs only when verbose, as slide samples are many).
    package func effect(_ effect: HostEffect) {
        printIgnored()
        switch effect {
        case .input(let event):
            if verbose { input(event, latencyMillis: latencyMillis(sinceDeviceMicros: event.timestampMicros) ?? 0) }
        case .gesture(let gesture): self.gesture(gesture)
        case .overlay(let overlayEffect, let at): overlay(overlayEffect, atDeviceMicros: at)
        case .focusExposureLock(let event):
            emit(event.atMicros, "lock", "\(event)", fields: [JSONMember("event", .string("\(event)"))])
        case .connected, .deviceLost: break
        }
    }

    /// Prints what the example app did: capture events (with their role), photos, actions, delegate calls.
    package func app(_ event: CameraApp.Event) {
        switch event {
        case .capture(let captureEvent, let role): capture(captureEvent, role: role.rawValue)
        case .photo(let photo, _):
            emit(
                nil, "photo",
                (photo.isVideo ? "video " : "")
                    + String(format: "#%d zoom %.2f× bias %+.2f EV", photo.sequenceNumber, photo.zoomFactor, photo.exposureBias)
                    + (photo.focusExposureLock.isEmpty ? "" : " \(photo.focusExposureLock) locked"),
                fields: [
                    JSONMember("isVideo", .bool(photo.isVideo)),
                    JSONMember("focusExposureLock", .string("\(photo.focusExposureLock)")),
                    JSONMember("sequenceNumber", .integer(photo.sequenceNumber)),
                    JSONMember("zoomFactor", .number(String(format: "%.3f", photo.zoomFactor))),
                    JSONMember("exposureBias", .number(String(format: "%.3f", photo.exposureBias))),
                ])
        case .action(let id, let value):
            // One per slide sample: only with --verbose (the summary has the final values).
            if verbose {
                emit(
                    nil, "action", "\(id) \(value)", fields: [JSONMember("id", .string("\(id)")), JSONMember("value", .string("\(value)"))])
            }
        case .delegate(let call): emit(nil, "delegate", call, fields: [JSONMember("call", .string(call))])
        case .ownControls(let visible):
            emit(
                nil, "ui", visible ? "own controls shown" : "own controls hidden (clean preview)",
                fields: [JSONMember("ownControlsVisible", .bool(visible))])
        case .cameraFailed(let error, let captureEvent):
            emit(
                nil, "camera", "\(captureEvent.id) failed: \(error)",
                fields: [JSONMember("event", .string("\(captureEvent.id)")), JSONMember("error", .string("\(error)"))])
        }
    }

    /// A gesture's kind and details as JSON members (`kind` is the name the text lines print).
    package static func fields(_ kind: GestureKind) -> [JSONMember] {
        func number(_ value: Double) -> JSONValue { .number(String(format: "%.4f", value)) }
        let name = JSONMember("kind", .string(kind.name))
        switch kind {
        case .slideBegan(let m), .slideChanged(let m), .slideEnded(let m):
            return [
                name, JSONMember("position", number(m.position)), JSONMember("delta", number(m.delta)),
                JSONMember("velocity", number(m.velocity)),
            ]
        case .longPressBegan(let held):
            return [name, JSONMember("heldMs", .number(String(format: "%.3f", Double(held) / 1000)))]
        case .pressEnded(let s):
            return [
                name, JSONMember("isLongPress", .bool(s.isLongPress)),
                JSONMember("durationMs", .number(String(format: "%.3f", Double(s.durationMicros) / 1000))),
                JSONMember("peakForceMn", .integer(s.peakForceMillinewtons)),
            ]
        default:
            return [name]
        }
    }

    /// The gesture as text lines print it (``GestureKind/description``).
    package static func name(_ kind: GestureKind) -> String { kind.description }
}
