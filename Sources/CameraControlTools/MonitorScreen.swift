import CSystemShim
import CameraControlControls
import CameraControlHost
import CameraControlWire
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The full-screen view of `camctl monitor` on a terminal: a force bar with the light and full
/// thresholds, the slide position and touch, the overlay (state, active control, its value), link health
/// (RTT, retransmissions, check errors) and a scrolling log of the latest events.
///
/// Memory is flat: the log keeps as many lines as the screen has rows (at most ``logCapacity``), nothing
/// else grows. The screen is redrawn at most every 50 ms, in place (cursor home, each line cleared), on
/// the terminal's alternate screen, which is left again by ``restore()``.
package final class MonitorScreen: @unchecked Sendable {
    /// The most log lines kept, whatever the terminal's height.
    package static let logCapacity = 200

    private let lock = NSLock()

    /// A screen with nothing drawn yet (``enter()`` takes over the terminal).
    package init() {}
    private var header = "camctl monitor"
    private var force: UInt32 = 0
    private var peakForce: UInt32 = 0
    private var forceMax: UInt32 = 4000
    private var thresholds: Thresholds?
    private var slidePosition: Double?
    private var touching = false
    private var overlayState = "hidden"
    private var activeControl: String?
    private var values: [String: String] = [:]
    private var rttMillis: Double?
    private var deviceCounters: Counters?
    private var hostCheckErrors: UInt64 = 0
    private var hostGaps: UInt64 = 0
    private var log: [String] = []
    private var logStart = 0
    private var dirty = true
    private var savedTerminal: termios?

    // MARK: State

    /// The device line at the top.
    package func setHeader(_ text: String) { update { header = text } }

    /// The device's capabilities and configuration: force range and thresholds.
    package func setDevice(_ capabilities: Capabilities, config: Config?) {
        update {
            forceMax = max(1, capabilities.forceMaxMillinewtons)
            thresholds = config?.thresholds ?? capabilities.thresholds
            if let full = thresholds?.fullPressOnMillinewtons, full > 0 { forceMax = min(forceMax, full * 8 / 5) }
        }
    }

    /// A raw sample: force, position (0…1), touch.
    package func sample(force: UInt32, position: Double, touch: Bool) {
        update {
            self.force = force
            peakForce = max(peakForce, force)
            touching = touch
            if touch { slidePosition = position }
        }
    }

    /// One host effect: input events move the bars, overlay effects the overlay line.
    package func effect(_ effect: HostEffect, slideResolution: UInt32) {
        update {
            switch effect {
            case .input(let event):
                switch event.kind {
                case .touchDown: touching = true
                case .touchUp: touching = false
                case .slide: slidePosition = Double(event.position) / Double(max(1, slideResolution))
                default: break
                }
                if event.forceMillinewtons > 0 { force = event.forceMillinewtons }
                if event.kind == .lightPressUp || event.kind == .touchUp { force = 0 }
            case .overlay(let overlay, _):
                switch overlay {
                case .overlayShown(let id):
                    overlayState = "showing"
                    activeControl = "\(id)"
                case .overlayHidden:
                    overlayState = "hidden"
                case .enteredFullscreen: overlayState = "adjusting"
                case .exitedFullscreen: overlayState = "showing"
                case .valueChanged(let id, let value, _):
                    values["\(id)"] = "\(value)"
                    activeControl = "\(id)"
                case .pickerOpened: overlayState = "picking"
                case .pickerMoved: break
                case .controlSelected(let id):
                    overlayState = "showing"
                    activeControl = "\(id)"
                case .haptic: break
                }
            case .deviceLost:
                overlayState = "hidden"
                touching = false
                force = 0
            default: break
            }
        }
    }

    /// Link health: the latest round trip, the device's counters and the host's.
    package func link(rttMillis: Double?, device: Counters?, hostCheckErrors: UInt64, hostSequenceGaps: UInt64) {
        update {
            if let rttMillis { self.rttMillis = rttMillis }
            if let device { deviceCounters = device }
            self.hostCheckErrors = hostCheckErrors
            hostGaps = hostSequenceGaps
        }
    }

    /// Adds a line to the event log (the oldest goes once the log is full).
    package func append(_ line: String) {
        update {
            if log.count < Self.logCapacity {
                log.append(line)
            } else {
                log[logStart] = line
                logStart = (logStart + 1) % Self.logCapacity
            }
        }
    }

    private func update(_ body: () -> Void) {
        lock.lock()
        body()
        dirty = true
        lock.unlock()
    }

    // MARK: Terminal

    /// Enters the alternate screen, hides the cursor and reads keys one at a time (Ctrl-C still signals).
    package func enter() {
        var settings = termios()
        if tcgetattr(0, &settings) == 0 {
            savedTerminal = settings
            settings.c_lflag &= ~tcflag_t(ICANON | ECHO)
            _ = tcsetattr(0, TCSANOW, &settings)
        }
        write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[2J")
    }

    /// Leaves the alternate screen and restores the terminal.
    package func restore() {
        write("\u{1B}[?25h\u{1B}[?1049l")
        if var saved = savedTerminal { _ = tcsetattr(0, TCSANOW, &saved) }
    }

    /// Redraws when something changed since the last redraw.
    package func redrawIfNeeded() {
        lock.lock()
        guard dirty else {
            lock.unlock()
            return
        }
        dirty = false
        let (columns, rows) = Self.terminalSize()
        let text = render(columns: columns, rows: rows)
        lock.unlock()
        write(text)
    }

    /// The screen as text for a terminal of `columns` × `rows` (call with the lock held; internal for
    /// the unit tests, which have nothing else to lock against).
    func render(columns: Int, rows: Int) -> String {
        let width = max(40, columns)
        var lines: [String] = [header, ""]
        // Force bar, with the thresholds marked on it: l/L light off/on, f/F full off/on.
        let barWidth = max(10, width - 24)
        var bar = [Character](repeating: " ", count: barWidth)
        let filled = min(barWidth, Int(Double(force) / Double(forceMax) * Double(barWidth)))
        for index in 0..<filled { bar[index] = "#" }
        func mark(_ value: UInt32?, _ symbol: Character) {
            guard let value, value > 0 else { return }
            let at = min(barWidth - 1, Int(Double(value) / Double(forceMax) * Double(barWidth)))
            bar[at] = symbol
        }
        mark(thresholds?.lightPressOffMillinewtons, "l")
        mark(thresholds?.lightPressOnMillinewtons, "L")
        mark(thresholds?.fullPressOffMillinewtons, "f")
        mark(thresholds?.fullPressOnMillinewtons, "F")
        lines.append(String(format: "force  %5u mN ", force) + "[" + String(bar) + "]")
        if let t = thresholds {
            lines.append(
                "       light \(t.lightPressOnMillinewtons)/\(t.lightPressOffMillinewtons) mN (L/l)   full \(t.fullPressOnMillinewtons)/\(t.fullPressOffMillinewtons) mN (F/f)   peak \(peakForce) mN"
            )
        } else {
            lines.append("       peak \(peakForce) mN")
        }
        var slide = [Character](repeating: "-", count: barWidth)
        if let slidePosition {
            slide[min(barWidth - 1, max(0, Int(slidePosition * Double(barWidth - 1))))] = touching ? "O" : "o"
        }
        let position = slidePosition.map { String(format: "%.2f", $0) } ?? " -  "
        lines.append("slide  \(position)     [" + String(slide) + "]")
        lines.append("touch  \(touching ? "yes" : "no")")
        let active = activeControl ?? "-"
        let value = activeControl.flatMap { values[$0] } ?? "-"
        lines.append("overlay \(overlayState)   control \(active)   value \(value)")
        let rtt = rttMillis.map { String(format: "%.2f ms", $0) } ?? "-"
        let device =
            deviceCounters.map { "retransmissions \($0.retransmissions)   check errors \($0.checkErrors)" }
            ?? "retransmissions -   check errors -"
        lines.append("link   RTT \(rtt)   device: \(device)   host: check errors \(hostCheckErrors), lost \(hostGaps)")
        lines.append(String(repeating: "─", count: min(width, 100)))
        lines.append("events (q quits)")
        let room = max(1, rows - lines.count - 1)
        let ordered = Array(log[logStart...] + log[..<logStart])
        lines += ordered.suffix(room)
        var out = "\u{1B}[H"
        for (index, line) in lines.prefix(rows).enumerated() {
            out += String(line.prefix(width)) + "\u{1B}[K" + (index + 1 < min(rows, lines.count) ? "\r\n" : "")
        }
        return out + "\u{1B}[J"
    }

    private func write(_ text: String) {
        StandardStreams.output(text)
    }

    /// The terminal's size, 80 × 24 when it cannot be read.
    package static func terminalSize() -> (columns: Int, rows: Int) {
        var size = winsize()
        guard ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return (80, 24) }
        return (Int(size.ws_col), Int(size.ws_row))
    }
}
