/// The registrations of the recording tools (record, replay, decode, plot): their help and examples.
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
                       "connected", …} at each handshake, then the events), and last {"type": "summary", "frames"}
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
        run: run)
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
        examples: ["plot session.pcapng -o trace.svg", "plot samples.txt --raw -o trace.png"], run: run)
}
