import CameraControlDevice
import CameraControlTools
import CameraControlWire
import Foundation

/// The registrations of the recording tools (record, replay, decode, plot) and of the relay: their help,
/// examples and arguments; the work is done in CameraControlTools.
extension Record {
    static let command = Command(
        name: "record", summary: "be the session's host and write every frame both ways, timestamped, as pcapng",
        usage: "PORT -o FILE.pcapng [--seconds N] [--scenario FILE] [--no-raw] [--quiet] [--json]",
        details: """
              -o FILE          the pcapng file (link type USER0; tools/wireshark/cameracontrol.lua dissects it);
                               complete after every frame, so Ctrl-C leaves a whole file
              --seconds N      stop after N seconds (default: until Ctrl-C)
              --scenario FILE  play a scenario through this session (a simulator) and stop after it
              --no-raw         do not open the raw-sample stream
              --quiet          do not print the events
              --json           the events as one object per line, as `monitor --json` prints them: first
                               {"type": "connected", "identity", "sessionId"}, then {"type": "input"|"gesture"|
                               "capture"|"overlay"|"haptic"|"note", "tMs", "deviceTimeUs", …} (README, "JSON")
            """,
        examples: [
            "record /dev/ttyACM0 -o session.pcapng --seconds 30",
            "record /tmp/camctl0 -o demo.pcapng --scenario Firmware-sim/scenarios/full-click.scenario",
        ],
        run: run)
}

extension Replay {
    static let command = Command(
        name: "replay", summary: "drive the host pipeline from a recording, deterministically, and print its events",
        usage: "FILE [--json]",
        details: """
              FILE     a recording of camctl record
              --json   the events as one object per line, as `record --json` printed them live ({"type":
                       "connected", …} at each handshake, then the events; not record's own notes, such as a
                       scenario's length), and last {"type": "summary", "frames"}
            """,
        examples: ["replay session.pcapng", "replay session.pcapng --json | jq -c 'select(.type==\"capture\")'"], run: run)
}

extension Decode {
    static let command = Command(
        name: "decode", summary: "decode a recording's frames, or hex frames on stdin",
        usage: "FILE|- [--json]",
        details: """
            Payloads are decoded with the schema compiled in and shown in protobuf's JSON mapping (as `camctl call`).
              FILE     a recording of camctl record; - reads hex frames (one per line) from stdin
              --json   one object per frame: {"tMs", "direction" ("toDevice"|"fromDevice"|"unknown"), "bytes", "ok": true,
                       "type", "sequence", "reliable", "callId", "method"?, "messageType"?, "message"?, "streamOpen"?,
                       "status"?, "statusMessage"?, "ackedSequence"?}, or {"tMs", "direction", "bytes", "ok": false,
                       "error", "reason"} for a frame that does not decode
            """,
        examples: [
            "decode session.pcapng", "decode -   # hex frames on stdin, e.g. echo '03 08 05 01 03 f3 ea 00' | camctl decode -",
            "decode session.pcapng --json | jq -c 'select(.method==\"InputService/StreamInputEvents\") | .message'",
        ],
        run: parseAndRun)

    static func parseAndRun(_ argv: [String]) async throws {
        let args = try Arguments(argv, valued: [], switches: ["json"])
        let source = try args.required(0, "FILE (a recording) or - (hex on stdin)")
        guard args.positional.count == 1 else { throw Arguments.Failure(description: "decode takes one FILE or -") }
        try run(source: source, json: args.flag("json"))
    }
}

extension Plot {
    static let command = Command(
        name: "plot", summary: "force and slide over time, thresholds, gestures and capture events, as SVG or PNG",
        usage: "FILE -o trace.svg|trace.png [--raw] [--width W] [--height H] [--json]",
        details: """
              -o FILE     trace.svg, or trace.png (through rsvg-convert)
              --raw       FILE holds text lines `time_us force_mn position touch` instead of a recording
              --width W, --height H   the image's size in pixels
              --json      what was drawn: {"type": "mark", "kind": "gesture"|"capture", "deviceTimeUs", "label"} per
                          mark, then {"type": "plot", "output", "width", "height", "samples", "startDeviceTimeUs",
                          "endDeviceTimeUs", "thresholds"?}
            """,
        examples: ["plot session.pcapng -o trace.svg", "plot samples.txt --raw -o trace.png"], run: parseAndRun)

    static func parseAndRun(_ argv: [String]) async throws {
        let args = try Arguments(
            argv.map { $0 == "-o" ? "--output" : $0 }, valued: ["output", "width", "height"], switches: ["raw", "json"])
        let path = try args.required(0, "FILE (a recording, or a raw-sample capture with --raw)")
        guard args.positional.count == 1 else { throw Arguments.Failure(description: "plot takes one FILE") }
        guard let output = args.value("output") else { throw Arguments.Failure(description: "missing -o trace.svg|trace.png") }
        let width = try args.integer("width", default: 1200)
        let height = try args.integer("height", default: 600)
        guard (200...10000).contains(width), (150...10000).contains(height) else {
            throw Arguments.Failure(description: "--width and --height are 200…10000 and 150…10000 pixels")
        }
        guard output.hasSuffix(".png") || output.hasSuffix(".svg") else {
            throw Arguments.Failure(description: "-o wants a .svg or .png file, not \(output)")
        }
        try Arguments.refuseOverwriting(output, option: "-o", inputs: [path], what: "the recording")
        try run(path: path, raw: args.flag("raw"), output: output, width: width, height: height, json: args.flag("json"))
    }
}

extension Relay {
    static let command = Command(
        name: "relay", summary: "carry bytes between a host side and a device, injecting faults, logging each",
        usage: "A B [--faults SPEC] [--link PATH] [--seconds N] [--quiet]",
        details: """
              A                 the host's side: a port, or `pty` (a new pseudo-terminal, printed first)
              B                 the device's side: any port (camctl-sim's pty, a board's serial port)
              --faults SPEC     e.g. corrupt=1%,drop-frame=1%,dup=1%,garbage=0.5%:64,stall=1%:200ms,unplug=10s:1s
                                (docs/RELIABILITY.md lists every fault). corrupt and drop are per byte: at 1 % a
                                166-byte handshake answer comes whole 1 time in 5, and a handshake may fail
              --link PATH       a symlink to A's pty (removed while "unplugged")
              --seconds N       stop after N seconds
            """,
        examples: ["relay pty /dev/ttyACM0 --link /tmp/flaky --faults corrupt=1%,dup=1%"],
        run: parseAndRun)

    static func parseAndRun(_ argv: [String]) async throws {
        let arguments = try Arguments(argv, valued: ["faults", "link", "seconds"], switches: ["quiet"])
        let hostSide = try arguments.required(0, "host side A (a port, or `pty`)")
        let deviceSide = try arguments.required(1, "device side B (a port)")
        let faults: LinkFaults
        do {
            faults = try LinkFaults(spec: arguments.value("faults") ?? "")
        } catch {
            throw Arguments.Failure(description: error.description)
        }
        if faults.resetEveryMicros != nil {
            throw Arguments.Failure(description: "--faults reset=… needs the device's help: use camctl-sim --faults")
        }
        let seconds = try arguments.seconds()
        if let link = arguments.value("link") { Interrupts.removeOnExit(link, kind: .symbolicLink) }
        // Ctrl-C ends the relay as its --seconds would: its counts printed, its link removed.
        let stop = StopRequest()
        Interrupts.onInterrupt { stop.request() }
        try await run(
            hostSide: hostSide, deviceSide: deviceSide, faults: faults, linkPath: arguments.value("link"), seconds: seconds,
            quiet: arguments.flag("quiet"), stop: stop)
    }
}

/// `camctl replay FILE`: the recording's session through the host pipeline, printed as `camctl record`
/// and `camctl monitor` print it live.
enum Replay {
    static func run(_ argv: [String]) async throws {
        let args = try Arguments(argv, valued: [], switches: ["json"])
        let path = try args.required(0, "FILE (a recording from `camctl record`)")
        guard args.positional.count == 1 else { throw Arguments.Failure(description: "replay takes one FILE") }
        let contents = try PcapngReader.contents(path: path)
        let frames = contents.frames
        let engine = ReplayEngine()
        let json = args.flag("json")
        let printer = EventPrinter(json: json)
        printer.nowSource = { [unowned engine] in engine.nowMicros }
        // Latencies as the live host saw them: the recording's receive times minus the estimated offset.
        let syncOffset = { [unowned engine] in
            if let offset = engine.core.clock.offsetMicros(atHostMicros: engine.nowMicros) { printer.setClockOffset(offset) }
        }
        engine.onHandshake = { response in
            if let info = try? DeviceInfo(handshake: response, hostVersion: DeviceSession.hostVersion) {
                print(json ? Monitor.connectedJSON(info) : info.summary + "\n")
            }
        }
        engine.onCapture = {
            syncOffset()
            printer.capture($0, role: $1)
        }
        engine.core.observer = { effect in
            if case .connected = effect { printer.resetOrigin() }
            syncOffset()
            printer.effect(effect)
        }
        engine.run(frames)
        if json {
            print(JSONValue.object([JSONMember("type", .string("summary")), JSONMember("frames", .integer(frames.count))]).compactText)
        } else {
            printer.note("replayed \(frames.count) frames")
        }
        if let truncation = contents.truncation { throw truncation }
    }
}

/// `camctl export FILE.pcapng --vcd OUT.vcd`: the recording's timeline for logic-analyzer tools (the work is
/// CameraControlTools' ``VCDExport``); `camctl export FILE --samples OUT`: the recording's (or a CSV trace's)
/// input as the replay sample file `camctl-sim --replay` reads (``RecordedInput/sampleFile()``).
enum Export {
    static let command = Command(
        name: "export", summary: "a recording as VCD (PulseView, GTKWave, sigrok), or its input as camctl-sim's replay samples",
        usage: "FILE.pcapng --vcd OUT.vcd | FILE.pcapng|FILE.csv --samples OUT",
        details: """
            --vcd replays the recording through the host pipeline and writes a Value Change Dump, times in device
            microseconds: force_mn and slide (`real` variables, from the raw samples: analog traces in GTKWave and
            PulseView; sigrok-cli skips them), touch, light_press and full_press (the firmware's stages), volume_up,
            volume_down, action_button, remote_click, and under `gestures` a 1 ms pulse per recognised gesture, one
            wire per kind. force_mn and slide need raw samples (camctl record without --no-raw): a recording without
            them has neither, and its touch comes from the touch events. Read it with
            `sigrok-cli -I vcd -i OUT.vcd`, PulseView or GTKWave (docs/SIMULATOR.md §8).
            --samples writes the input a replay feeds the firmware (the raw samples' force before the firmware's
            filter, position and touch, the button levels, the remote clicks; from a recording, or from a CSV trace
            as `camctl test --replay` reads it) as the sample file camctl-sim reads; `camctl-sim --replay FILE` runs
            this itself (docs/SIMULATOR.md, "Replay").
              --vcd OUT.vcd    the VCD file to write
              --samples OUT    the replay sample file to write
            """,
        examples: [
            "export session.pcapng --vcd session.vcd", "export session.pcapng --vcd s.vcd && sigrok-cli -I vcd -i s.vcd --show",
            "export session.pcapng --samples session.samples",
        ],
        run: run)

    static func run(_ argv: [String]) async throws {
        let args = try Arguments(argv, valued: ["vcd", "samples"], switches: [])
        let input = try args.required(0, "FILE.pcapng")
        guard args.positional.count == 1 else { throw Arguments.Failure(description: "export takes one FILE") }
        for option in ["vcd", "samples"] {
            try Arguments.refuseOverwriting(args.value(option), option: "--\(option)", inputs: [input], what: "the recording")
        }
        switch (args.value("vcd"), args.value("samples")) {
        case (let output?, nil):
            // A recording cut short: the whole frames before the cut are exported, then the cut is the error.
            // Streamed: the recording is read in passes and the dump written as it goes (docs/SIMULATOR.md).
            let passes = try RecordingPasses(path: input)
            let descriptor = try BoundedFiles.create(output)
            defer { _ = close(descriptor) }
            var failure: RecordingError?
            let counts = try VCDExport.write(recording: passes) { text in
                guard failure == nil else { return }
                do throws(RecordingError) {
                    try BoundedFiles.write(Array(text.utf8), to: descriptor, path: output)
                } catch {
                    failure = error
                }
            }
            if let failure { throw failure }
            StandardStreams.error("camctl: \(counts.signals) signals, \(counts.changes) changes to \(output)")
            if let truncation = passes.truncation { throw truncation }
        case (nil, let output?):
            let recorded = try RecordedInput(path: input)
            try BoundedFiles.write(Array(recorded.sampleFile().utf8), to: output)
            if let truncation = recorded.truncation { throw truncation }
        default:
            throw Arguments.Failure(description: "export needs one of --vcd OUT.vcd and --samples OUT")
        }
    }
}
