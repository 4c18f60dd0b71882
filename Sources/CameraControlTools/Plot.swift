import CameraControlCapture
import CameraControlGestures
import CameraControlHost
import CameraControlWire
import Foundation

/// `camctl plot FILE -o trace.svg|trace.png [--width W] [--height H]`: a recording (or, with `--raw`, a
/// raw-sample capture: lines of `time_us force_mn position touch`) drawn as force and slide position over
/// device time, with the light and full press thresholds and their hysteresis bands, and the gestures and
/// capture events the host pipeline recognised (a replay of the recording) marked where they happened:
/// enough to see at a glance why a press did or did not count. PNG goes through `rsvg-convert`
/// (Debian `librsvg2-bin`).
package enum Plot {
    /// Draws the recording (or, with `raw`, the raw-sample capture) at `path` into `output` (`.svg` or
    /// `.png`), and with `json` prints what was drawn.
    package static func run(path: String, raw: Bool, output: String, width: Int, height: Int, json: Bool) throws {
        guard output.hasSuffix(".png") || output.hasSuffix(".svg") else {
            throw RecordingError(description: "-o wants a .svg or .png file, not \(output)")
        }
        let trace = raw ? try Trace(rawCapture: path) : try Trace(recording: path)
        let svg = trace.svg(width: width, height: height, title: URL(fileURLWithPath: path).lastPathComponent)
        if output.hasSuffix(".png") {
            try writePNG(svg: svg, to: output, width: width, height: height)
        } else {
            try BoundedFiles.write(Array(svg.utf8), to: output)
        }
        if json {
            for line in trace.jsonLines(output: output, width: width, height: height) { print(line.compactText) }
        }
        // Drawn from the whole frames before a cut; the file is still not whole (exit 1).
        if let truncation = trace.truncation { throw truncation }
    }

    package static func writePNG(svg: String, to output: String, width: Int, height: Int) throws {
        _ = close(try BoundedFiles.create(output))  // the output's own error, not rsvg-convert's
        let temporary = NSTemporaryDirectory() + "camctl-plot-\(getpid()).svg"
        try BoundedFiles.write(Array(svg.utf8), to: temporary)
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        let tool = ["/usr/bin/rsvg-convert", "/usr/local/bin/rsvg-convert", "/opt/homebrew/bin/rsvg-convert"]
            .first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let tool else {
            throw RecordingError(
                description: "PNG needs rsvg-convert (Debian: apt-get install librsvg2-bin); -o trace.svg needs nothing")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["-w", "\(width)", "-h", "\(height)", "-b", "white", "-o", output, temporary]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw RecordingError(description: "rsvg-convert failed with status \(process.terminationStatus)")
        }
    }
}

/// What a plot shows: samples, thresholds and marks, in device time.
package struct Trace {
    /// One sample: device time, force, slide position (0…1) and touch.
    package struct Sample {
        var micros: UInt64
        var force: UInt32
        var position: Double?
        var touch: Bool
    }
    /// A gesture or capture event to mark.
    package struct Mark {
        var micros: UInt64
        var label: String
        var isCapture: Bool
    }

    package var samples: [Sample] = []
    package var marks: [Mark] = []
    package var thresholds: Thresholds?
    /// Where the recording is cut short, when it is: the trace is then its whole frames before the cut.
    package var truncation: RecordingError?

    /// A recording replayed through the host pipeline: raw samples when it has them (else the force and
    /// position its input events carry), the device's thresholds, gestures and capture events.
    package init(recording path: String) throws {
        let contents = try PcapngReader.framesBeforeAnyCut(path: path)
        let frames = contents.frames
        truncation = contents.truncation
        let engine = ReplayEngine()
        var raw: [Sample] = []
        var fromEvents: [Sample] = []
        var marks: [Mark] = []
        var resolution = 1024.0
        engine.onRawSamples = { batch in
            for (index, record) in batch.records.enumerated() {
                raw.append(
                    Sample(
                        micros: batch.firstTimestampMicros + UInt64(index) * UInt64(batch.sampleIntervalMicros),
                        force: record.force, position: Double(record.position) / resolution, touch: record.touch))
            }
        }
        engine.onCapture = { event, role in
            marks.append(
                Mark(micros: event.deviceTimestampMicros, label: "capture \(event.phase.rawValue) \(event.source)", isCapture: true))
            _ = role
        }
        engine.core.observer = { effect in
            switch effect {
            case .connected(let capabilities):
                resolution = Double(max(1, capabilities.slideResolution))
            case .input(let event):
                let position: Double? = event.kind == .slide ? Double(event.position) / resolution : nil
                fromEvents.append(
                    Sample(micros: event.timestampMicros, force: event.forceMillinewtons, position: position, touch: event.kind != .touchUp)
                )
            case .gesture(let gesture):
                if case .slideChanged = gesture.kind { return }
                marks.append(Mark(micros: gesture.timestampMicros, label: EventPrinter.name(gesture.kind), isCapture: false))
            default:
                break
            }
        }
        engine.run(frames)
        samples = raw.isEmpty ? fromEvents : raw
        self.marks = marks
        thresholds = engine.config?.thresholds ?? engine.capabilities?.thresholds
    }

    /// A raw-sample capture: one sample per line, `time_us force_mn position touch` (position 0…1,
    /// touch 0 or 1; `#` starts a comment). Thresholds are the firmware's defaults.
    package init(rawCapture path: String) throws {
        let data = try BoundedFiles.read(path, maxBytes: PcapngReader.maxFileBytes, what: "a raw-sample capture")
        guard let text = String(validating: data, as: UTF8.self), !text.contains("\0") else {
            throw RecordingError(
                description:
                    "\(path) is not a raw-sample capture (text lines of `time_us force_mn position touch`); a recording needs no --raw")
        }
        // Lines end at LF or CRLF (one `Character` to Swift, so `split(separator: "\n")` would miss it).
        for (number, line) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
            .enumerated()
        {
            let fields = line.prefix { $0 != "#" }.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" })
            if fields.isEmpty { continue }
            guard fields.count == 4, let time = UInt64(fields[0]), let force = UInt32(fields[1]), let position = Double(fields[2]),
                let touch = Int(fields[3])
            else {
                throw RecordingError(
                    description:
                        "\(path):\(number + 1): want `time_us force_mn position touch`, found '\(StandardStreams.visible(line.prefix(80)))'"
                )
            }
            samples.append(Sample(micros: time, force: force, position: position, touch: touch != 0))
        }
        thresholds = Thresholds(
            lightPressOnMillinewtons: 800, lightPressOffMillinewtons: 500, fullPressOnMillinewtons: 2500,
            fullPressOffMillinewtons: 1800, minStageGapMillinewtons: 1000)
    }

    /// What was drawn, for `plot --json`: one `{"type": "mark", "kind": "gesture"|"capture", "deviceTimeUs",
    /// "label"}` per mark, then `{"type": "plot", "output", "width", "height", "samples", "startDeviceTimeUs",
    /// "endDeviceTimeUs", "thresholds"?}` (the thresholds in protobuf's JSON mapping).
    package func jsonLines(output: String, width: Int, height: Int) -> [JSONValue] {
        var lines = marks.map { mark in
            JSONValue.object([
                JSONMember("type", .string("mark")), JSONMember("kind", .string(mark.isCapture ? "capture" : "gesture")),
                JSONMember("deviceTimeUs", mark.micros.jsonValue), JSONMember("label", .string(mark.label)),
            ])
        }
        var summary = [
            JSONMember("type", .string("plot")), JSONMember("output", .string(output)), JSONMember("width", .integer(width)),
            JSONMember("height", .integer(height)), JSONMember("samples", .integer(samples.count)),
        ]
        if let first = samples.first, let last = samples.last {
            summary.append(JSONMember("startDeviceTimeUs", first.micros.jsonValue))
            summary.append(JSONMember("endDeviceTimeUs", last.micros.jsonValue))
        }
        if let thresholds { summary.append(JSONMember("thresholds", thresholds.jsonValue(includingDefaults: true))) }
        lines.append(.object(summary))
        return lines
    }

    /// The plot as an SVG document of `width` × `height` pixels.
    package func svg(width: Int, height: Int, title: String) -> String {
        let left = 70.0
        let right = Double(width) - 20
        let top = 40.0
        let forceBottom = Double(height) * 0.62
        let slideTop = forceBottom + 30
        let bottom = Double(height) - 40
        let times = samples.map(\.micros) + marks.map(\.micros)
        let start = times.min() ?? 0
        let end = max((times.max() ?? 1), start + 1)
        let maxForce = Double(max(samples.map(\.force).max() ?? 0, (thresholds?.fullPressOnMillinewtons ?? 0) * 5 / 4, 100))
        func x(_ micros: UInt64) -> Double { left + (right - left) * Double(micros - start) / Double(end - start) }
        func yForce(_ force: Double) -> Double { forceBottom - (forceBottom - top) * force / maxForce }
        func ySlide(_ position: Double) -> Double { bottom - (bottom - slideTop) * min(max(position, 0), 1) }
        func f(_ value: Double) -> String { String(format: "%.1f", value) }

        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(height)" viewBox="0 0 \(width) \(height)" \
            font-family="sans-serif" font-size="11">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(f(left))" y="20" font-size="14" font-weight="bold">\(escape(title)): force and slide over device time</text>

            """
        // Thresholds: each stage's on and off forces, the band between them is its hysteresis.
        if let t = thresholds {
            for (stage, on, off, colour) in [
                ("light", t.lightPressOnMillinewtons, t.lightPressOffMillinewtons, "#e69f00"),
                ("full", t.fullPressOnMillinewtons, t.fullPressOffMillinewtons, "#d55e00"),
            ] {
                let yOn = yForce(Double(on))
                let yOff = yForce(Double(off))
                out += """
                    <rect id="\(stage)-hysteresis" x="\(f(left))" y="\(f(yOn))" width="\(f(right - left))" height="\(f(yOff - yOn))" \
                    fill="\(colour)" fill-opacity="0.12"/>
                    <line id="\(stage)-on" x1="\(f(left))" y1="\(f(yOn))" x2="\(f(right))" y2="\(f(yOn))" stroke="\(colour)"/>
                    <line id="\(stage)-off" x1="\(f(left))" y1="\(f(yOff))" x2="\(f(right))" y2="\(f(yOff))" stroke="\(colour)" stroke-dasharray="4 3"/>
                    <text x="\(f(right - 4))" y="\(f(yOn - 3))" text-anchor="end" fill="\(colour)">\(stage) on \(on) mN</text>
                    <text x="\(f(right - 4))" y="\(f(yOff + 11))" text-anchor="end" fill="\(colour)">\(stage) off \(off) mN (hysteresis \(on - off) mN)</text>

                    """
            }
        }
        // Axes.
        out += """
            <line x1="\(f(left))" y1="\(f(top))" x2="\(f(left))" y2="\(f(forceBottom))" stroke="black"/>
            <line x1="\(f(left))" y1="\(f(forceBottom))" x2="\(f(right))" y2="\(f(forceBottom))" stroke="black"/>
            <text x="12" y="\(f((top + forceBottom) / 2))" transform="rotate(-90 12 \(f((top + forceBottom) / 2)))" text-anchor="middle">force (mN)</text>
            <line x1="\(f(left))" y1="\(f(slideTop))" x2="\(f(left))" y2="\(f(bottom))" stroke="black"/>
            <line x1="\(f(left))" y1="\(f(bottom))" x2="\(f(right))" y2="\(f(bottom))" stroke="black"/>
            <text x="12" y="\(f((slideTop + bottom) / 2))" transform="rotate(-90 12 \(f((slideTop + bottom) / 2)))" text-anchor="middle">slide position</text>
            <text x="\(f((left + right) / 2))" y="\(height - 8)" text-anchor="middle">device time (s)</text>

            """
        for step in 0...4 {
            let force = maxForce * Double(step) / 4
            out += "<text x=\"\(f(left - 4))\" y=\"\(f(yForce(force) + 4))\" text-anchor=\"end\">\(Int(force))</text>\n"
        }
        for position in [0.0, 0.5, 1.0] {
            out += "<text x=\"\(f(left - 4))\" y=\"\(f(ySlide(position) + 4))\" text-anchor=\"end\">\(position)</text>\n"
        }
        let seconds = Double(end - start) / 1e6
        let tick = [0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600].first { seconds / $0 <= 12 } ?? 3600
        var at = 0.0
        while at <= seconds {
            let tx = left + (right - left) * at / seconds
            out += "<line x1=\"\(f(tx))\" y1=\"\(f(bottom))\" x2=\"\(f(tx))\" y2=\"\(f(bottom + 4))\" stroke=\"black\"/>"
            out += "<text x=\"\(f(tx))\" y=\"\(f(bottom + 15))\" text-anchor=\"middle\">\(String(format: "%g", at))</text>\n"
            at += tick
        }
        // Touch as shading under the slide trace, then the traces.
        var touchStart: UInt64?
        for sample in samples + [Sample(micros: end, force: 0, position: nil, touch: false)] {
            if sample.touch, touchStart == nil { touchStart = sample.micros }
            if !sample.touch, let began = touchStart {
                out +=
                    "<rect class=\"touch\" x=\"\(f(x(began)))\" y=\"\(f(slideTop))\" width=\"\(f(max(1, x(sample.micros) - x(began))))\" "
                out += "height=\"\(f(bottom - slideTop))\" fill=\"#56b4e9\" fill-opacity=\"0.15\"/>\n"
                touchStart = nil
            }
        }
        let forcePoints = samples.map { "\(f(x($0.micros))),\(f(yForce(Double($0.force))))" }
        out +=
            "<polyline id=\"force\" fill=\"none\" stroke=\"#0072b2\" stroke-width=\"1.2\" points=\"\(forcePoints.joined(separator: " "))\"/>\n"
        // The slide trace only while touched (the strip reads nothing without a finger).
        var slidePath = ""
        var drawing = false
        for sample in samples {
            guard sample.touch, let position = sample.position else {
                if !sample.touch { drawing = false }
                continue
            }
            slidePath += "\(drawing ? "L" : "M")\(f(x(sample.micros))),\(f(ySlide(position))) "
            drawing = true
        }
        out += "<path id=\"slide\" fill=\"none\" stroke=\"#009e73\" stroke-width=\"1.2\" d=\"\(slidePath)\"/>\n"
        out += "<text x=\"\(f(left + 6))\" y=\"\(f(slideTop + 12))\" fill=\"#56b4e9\">touch (shaded)</text>\n"
        // Gestures (grey, labels down from the top of the force panel) and capture events (red, labels down
        // from the top of the slide panel); labels of marks closer than a line are moved aside.
        var lastLabelX = [false: -1000.0, true: -1000.0]
        for mark in marks.sorted(by: { $0.micros < $1.micros }) {
            let mx = x(mark.micros)
            let colour = mark.isCapture ? "#cc0000" : "#555555"
            let kind = mark.isCapture ? "capture" : "gesture"
            out += "<line class=\"\(kind)\" x1=\"\(f(mx))\" y1=\"\(f(top))\" x2=\"\(f(mx))\" y2=\"\(f(bottom))\" stroke=\"\(colour)\" "
            out += "stroke-opacity=\"0.5\" stroke-dasharray=\"\(mark.isCapture ? "none" : "2 2")\"/>\n"
            let lx = max(mx + 3, lastLabelX[mark.isCapture]! + 11)
            lastLabelX[mark.isCapture] = lx
            let ly = mark.isCapture ? slideTop + 4 : top + 4
            out += "<text class=\"\(kind)-label\" x=\"\(f(lx))\" y=\"\(f(ly))\" transform=\"rotate(90 \(f(lx)) \(f(ly)))\" "
            out += "fill=\"\(colour)\">\(escape(mark.label))</text>\n"
        }
        out += "</svg>\n"
        return out
    }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(
            of: ">", with: "&gt;")
    }
}
