import CameraAppExample
import CameraControlCapture
import CameraControlControls
import CameraControlGestures
import CameraControlWire
import Foundation
import Synchronization
import Testing

@testable import CameraControlTools

/// The event printer behind monitor, record, replay and demo: stamps relative to the first event, a new
/// origin per session, slides only when verbose, and nothing at all when quiet.
@Suite struct EventPrinterTests {
    /// A printer whose text lines are collected instead of printed.
    final class Lines: @unchecked Sendable {
        var all: [String] = []
    }

    static func printer(verbose: Bool = true, quiet: Bool = false) -> (EventPrinter, Lines) {
        let printer = EventPrinter(quiet: quiet, verbose: verbose)
        let lines = Lines()
        printer.sink = { lines.all.append($0) }
        return (printer, lines)
    }

    @Test("lines are stamped in device time since the first event; a note is unstamped; resetOrigin starts over")
    func stamps() {
        let (printer, lines) = Self.printer()
        printer.input(InputEvent(timestampMicros: 1_000_000, kind: .touchDown), latencyMillis: 1)
        printer.input(InputEvent(timestampMicros: 1_002_500, kind: .touchUp), latencyMillis: 1)
        printer.note("hello")
        printer.resetOrigin()
        printer.input(InputEvent(timestampMicros: 7, kind: .touchDown), latencyMillis: 1)
        #expect(lines.all.count == 4)
        #expect(lines.all[0].hasPrefix("      0.0 ms  input"), "\(lines.all[0])")
        #expect(lines.all[1].hasPrefix("      2.5 ms  input"), "\(lines.all[1])")
        #expect(lines.all[2].hasPrefix("             note     hello"), "\(lines.all[2])")
        #expect(lines.all[3].hasPrefix("      0.0 ms  input"), "\(lines.all[3])")
    }

    @Test("a click-and-hold's recording is printed as a video, and its JSON says isVideo")
    func videoNamed() throws {
        let ended = CaptureEvent(
            phase: .ended, id: CaptureEventID(rawValue: 1), source: .cameraControl, deviceTimestampMicros: 5,
            receivedAtHostMicros: 5)
        let (printer, lines) = Self.printer()
        printer.app(.photo(CapturedPhoto(sequenceNumber: 2, zoomFactor: 1, exposureBias: 0, isVideo: true), ended))
        printer.app(.photo(CapturedPhoto(sequenceNumber: 3, zoomFactor: 1, exposureBias: 0), ended))
        #expect(lines.all.count == 2)
        #expect(lines.all[0].contains("photo    video #2 zoom"), "\(lines.all)")
        #expect(lines.all[1].contains("photo    #3 zoom"), "\(lines.all)")
        let json = EventPrinter(json: true)
        let jsonLines = Lines()
        json.sink = { jsonLines.all.append($0) }
        json.app(.photo(CapturedPhoto(sequenceNumber: 2, zoomFactor: 1, exposureBias: 0, isVideo: true), ended))
        json.app(.photo(CapturedPhoto(sequenceNumber: 3, zoomFactor: 1, exposureBias: 0), ended))
        #expect(jsonLines.all.count == 2)
        #expect(jsonLines.all[0].contains("\"isVideo\":true"), "\(jsonLines.all)")
        #expect(jsonLines.all[1].contains("\"isVideo\":false"), "\(jsonLines.all)")
    }

    @Test("a press the interaction ignores (its handler busy) is printed with the next effect, once")
    func ignoredPressPrinted() {
        let (printer, lines) = Self.printer()
        let interaction = CaptureEventInteraction { _ in }
        interaction.setSessionRunning(true)
        printer.watch(interaction)
        interaction.handle(Gesture(kind: .pressBegan, source: .cameraControl, timestampMicros: 1_000))
        interaction.handle(Gesture(kind: .pressBegan, source: .volumeDown, timestampMicros: 2_000))
        let ended = Gesture(
            kind: .pressEnded(PressSummary(durationMicros: 1, isLongPress: false, peakForceMillinewtons: 0)), source: .volumeDown,
            timestampMicros: 3_000)
        printer.effect(.gesture(ended))
        printer.effect(.gesture(ended))
        let ignored = lines.all.filter { $0.contains("ignored") }
        #expect(ignored.count == 1, "\(lines.all)")
        #expect(ignored.first?.contains("volume-down press: the primary handler is busy with press#") == true, "\(lines.all)")
    }

    /// The interaction fed on one thread, the printer looking on another (its next effect): each look reads
    /// the ignored count and the list together, so a press ignored during a look is printed once, at that look
    /// or the next, never in place of another. The feeder ignores presses in bursts of 16 (well inside the
    /// list's 64) and starts the next once a look has begun after the burst, so none leaves the list unseen.
    /// 1600 presses: a fraction of a second with the two threads busy.
    @Test("presses ignored while the printer looks from another thread: each printed once, in order, none in place of another")
    func ignoredPressesWhileLooking() async throws {
        // Not verbose: a look's own gesture (a slide sample) prints nothing, so the looks cost little.
        let printer = EventPrinter(verbose: false, json: true)
        let lines = Mutex<[String]>([])
        printer.sink = { line in lines.withLock { $0.append(line) } }
        let interaction = CaptureEventInteraction { _ in }
        interaction.setSessionRunning(true)
        printer.watch(interaction)
        interaction.handle(Gesture(kind: .pressBegan, source: .cameraControl, timestampMicros: 1))  // held: primary busy
        let bursts = 100
        let perBurst = 16
        // looksBegun counts the printer's looks; the feeder waits for one that began after its burst.
        let looksBegun = Mutex(0)
        let done = Mutex(false)
        let printing = Thread {
            let gesture = Gesture(
                kind: .slideChanged(SlideMotion(position: 0.5, delta: 0, velocity: 0)), source: .cameraControl, timestampMicros: 1)
            while !done.withLock({ $0 }) {
                looksBegun.withLock { $0 += 1 }
                printer.effect(.gesture(gesture))
            }
            printer.effect(.gesture(gesture))  // the last burst's
        }
        printing.start()
        var micros: UInt64 = 10_000
        for _ in 0..<bursts {
            for _ in 0..<perBurst {
                micros += 1
                interaction.handle(Gesture(kind: .pressBegan, source: .volumeDown, timestampMicros: micros))
                interaction.handle(
                    Gesture(
                        kind: .pressEnded(PressSummary(durationMicros: 1, isLongPress: false, peakForceMillinewtons: 0)),
                        source: .volumeDown, timestampMicros: micros))
            }
            let after = looksBegun.withLock { $0 }
            while looksBegun.withLock({ $0 }) < after + 2 { await Task.yield() }  // a whole look after the burst
        }
        done.withLock { $0 = true }
        while printing.isExecuting || !printing.isFinished { try await Task.sleep(for: .milliseconds(1)) }
        let printed = lines.withLock { $0 }.compactMap { line -> UInt64? in
            guard line.contains("\"type\":\"ignored\""), let value = try? JSONValue(parsing: line) else { return nil }
            guard case .string(let text)? = value["deviceTimeUs"] else { return nil }
            return UInt64(text)
        }
        #expect(interaction.ignoredPressCount == UInt64(bursts * perBurst))
        #expect(printed == Array(10_001...micros), "printed \(printed.count) of \(bursts * perBurst)")
    }

    @Test("slides are printed only when verbose; a quiet printer prints nothing")
    func verboseAndQuiet() {
        let slide = InputEvent(timestampMicros: 10, kind: .slide, position: 300)
        let (verbose, verboseLines) = Self.printer(verbose: true)
        verbose.input(slide, latencyMillis: 0.5)
        #expect(verboseLines.all.count == 1)
        #expect(verboseLines.all.first?.contains("position 300") == true)
        let (terse, terseLines) = Self.printer(verbose: false)
        terse.input(slide, latencyMillis: 0.5)
        #expect(terseLines.all.isEmpty)
        let (quiet, quietLines) = Self.printer(quiet: true)
        quiet.input(InputEvent(timestampMicros: 10, kind: .touchDown), latencyMillis: 0.5)
        quiet.note("nothing")
        #expect(quietLines.all.isEmpty)
    }
}
