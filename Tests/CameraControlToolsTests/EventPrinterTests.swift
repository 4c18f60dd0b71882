import CameraAppExample
import CameraControlCapture
import CameraControlControls
import CameraControlGestures
import CameraControlWire
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
