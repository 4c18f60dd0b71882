import CameraControlTestSupport
import CameraControlWire
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The tools around a session, against a real `camctl-sim`: `camctl record` (as the session's host),
/// `replay`, `decode`, `plot`, the Wireshark dissector under Debian's `tshark`, and the full-screen
/// `camctl monitor` under `tmux`.
extension OverRealPTY {
    @Suite("camctl record, replay, decode, plot; tshark; monitor under tmux", .serialized)
    struct ToolsTests {
        static let root = "/" + String(#filePath).split(separator: "/").dropLast(3).joined(separator: "/")

        @Test func aRecordedDemoSessionReplaysDecodesDissectsAndPlots() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let recording = directory + "/demo.pcapng"
            func record() async throws -> ToolRun {
                try await withSimulator(seed: 7) { simulator in
                    try await runTool(
                        "camctl",
                        ["record", simulator.ptyPath, "-o", recording, "--scenario", Self.root + "/Firmware-sim/scenarios/demo.scenario"],
                        timeout: .seconds(60))
                }
            }
            var live = try await record()
            // On a starved machine the simulator (real time, 200 ms liveness) can drop the link; camctl record
            // then says so and exits 1. That is the machine, not the tools: record again (up to 3 more times).
            for _ in 0..<3 where live.status == 1 && live.standardError.contains("the device went away") {
                live = try await record()
            }
            #expect(live.status == 0, "stderr: \(live.standardError)")
            #expect(live.standardError.contains("recorded "), "\(live.standardError)")
            #expect(live.standardOutput.contains("capture  ended     primary   camera-control"))

            // Replay: the same events as the live run (numbers aside: latencies and timer-driven times
            // differ by scheduling), and the very same output every time.
            let replay = try await runTool("camctl", ["replay", recording])
            let again = try await runTool("camctl", ["replay", recording])
            #expect(replay.status == 0, "stderr: \(replay.standardError)")
            #expect(replay.standardOutput == again.standardOutput, "a replay is not deterministic")
            let liveEvents = Self.events(live.standardOutput)
            let replayedEvents = Self.events(replay.standardOutput)
            #expect(liveEvents.count > 50, "the live run printed \(liveEvents.count) events")
            // The same events; where a live timer (an idle slide ending) raced an event under load, the two
            // may be in another order, so the events are compared as a whole and the captures in order.
            #expect(liveEvents.sorted() == replayedEvents.sorted(), "first difference: \(Self.firstDifference(liveEvents, replayedEvents))")
            #expect(
                liveEvents.filter { $0.contains(" capture ") } == replayedEvents.filter { $0.contains(" capture ") },
                "the captures differ")
            #expect(replay.standardOutput.contains("device      CameraControl Simulator"))

            // Decode: every frame, answers matched to their calls, payloads decoded with the schema.
            let decoded = try await runTool("camctl", ["decode", recording])
            #expect(decoded.status == 0, "stderr: \(decoded.standardError)")
            // A process's first handshake has one of 16 call ids (1, 9, … 121, docs/PROTOCOL.md §9), the same
            // on its request and its response.
            let handshakeCall = try #require(Self.handshakeCallID(decoded.standardOutput), "\(decoded.standardOutput.prefix(400))")
            #expect(handshakeCall % 8 == 1 && handshakeCall <= 121, "the first handshake on call \(handshakeCall)")
            for text in [
                // Payloads in protobuf's JSON mapping (as `camctl call` prints them), not a Swift dump.
                "host→device  REQUEST seq 0 reliable call \(handshakeCall) DeviceService/Handshake cameracontrol.v1.HandshakeRequest {\"hostVersion\":{\"major\":1,\"minor\":2},\"hostName\":\"camctl record\"}",
                "device→host  RESPONSE seq 0 reliable call \(handshakeCall) DeviceService/Handshake cameracontrol.v1.HandshakeResponse {\"deviceVersion\":",
                "InputService/StreamInputEvents stream open (confirmed",
                "ConfigService/GetConfig cameracontrol.v1.Config {\"thresholds\":{\"lightPressOnMn\":800",
                "InputService/StreamInputEvents cameracontrol.v1.InputEvent {\"timestampUs\":",
                "\"kind\":\"INPUT_EVENT_KIND_",
                "InputService/StreamRawSamples cameracontrol.v1.RawSampleBatch {\"firstTimestampUs\":",
            ] {
                #expect(decoded.standardOutput.contains(text), "decode lacks '\(text)'")
            }
            #expect(!decoded.standardOutput.contains("MALFORMED"))
            let hex = try await runTool(
                "/bin/sh",
                ["-c", "printf '03 08 05 01 03 f3 ea 00 03 08 05 01 03 f3 eb 00' | \(try BuiltProducts.executable("camctl")) decode -"])
            #expect(hex.standardOutput.contains("HEARTBEAT seq 5 call 0"), "\(hex.standardOutput)")
            #expect(
                hex.standardOutput.contains("MALFORMED bad-check: check 0xEBF3 does not match the computed 0xEAF3"), "\(hex.standardOutput)"
            )

            try await dissect(recording, handshakeCall: handshakeCall, in: directory)
            try await plot(recording, in: directory)
        }

        /// tshark with our dissector: the fields of a demo session, and a corrupted frame marked.
        func dissect(_ recording: String, handshakeCall: Int, in directory: String) async throws {
            let tshark = "/usr/bin/tshark"
            try #require(
                FileManager.default.isExecutableFile(atPath: tshark), "tshark is missing: scripts/install-deps --test installs it")
            func pdml(_ file: String) async throws -> [String] {
                let run = try await runTool(
                    tshark,
                    [
                        "-n", "-X", "lua_script:\(Self.root)/tools/wireshark/cameracontrol.lua",
                        "-o", "uat:protobuf_search_paths:\"\(Self.root)/Proto\",\"TRUE\"", "-o", "protobuf.pbf_as_hf:TRUE",
                        "-r", file, "-T", "pdml",
                    ], timeout: .seconds(60))
                #expect(run.status == 0, "tshark: \(run.standardError)")
                return run.standardOutput.components(separatedBy: "<packet>").dropFirst().map { $0 }
            }
            let packets = try await pdml(recording)
            #expect(packets.count > 500, "tshark saw \(packets.count) packets")
            #expect(packets.allSatisfy { $0.contains("name=\"cameracontrol.check.status\" showname=\"Check status: good\"") })
            let handshake = packets[0]
            for field in [
                "name=\"cameracontrol.type\" showname=\".... 0001 = Type: REQUEST (1)\"",
                "name=\"cameracontrol.call_id\" showname=\"Call id: \(handshakeCall)\"",
                "name=\"cameracontrol.method\" showname=\"Method: DeviceService/Handshake\"",
                "name=\"cameracontrol.message_type\" showname=\"Message type: cameracontrol.v1.HandshakeRequest\"",
                "name=\"pbf.cameracontrol.v1.HandshakeRequest.host_name\" showname=\"host_name: camctl record\"",
            ] {
                #expect(handshake.contains(field), "the handshake request lacks \(field)")
            }
            // v1.1: the handshake's ACK, then its (reliable) response.
            let response = try #require(packets.firstIndex { $0.contains("showname=\".... 0010 = Type: RESPONSE (2)\"") })
            #expect(
                packets[response].contains("name=\"pbf.cameracontrol.v1.Thresholds.full_press_on_mn\" showname=\"full_press_on_mn: 2500\""))
            // (The stream's first RESPONSE is its empty open confirmation; the events are stream messages.)
            let event = try #require(
                packets.first { $0.contains("Message type: cameracontrol.v1.InputEvent") && $0.contains("STREAM_MESSAGE (3)") })
            #expect(event.contains("Method: InputService/StreamInputEvents"))
            #expect(event.contains("name=\"pbf.cameracontrol.v1.InputEvent.kind\""))

            // The handshake response with one byte changed: marked as a bad check, the rest still good.
            let corrupted = directory + "/corrupted.pcapng"
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: recording)))
            let offset = try #require(Self.packetDataOffset(bytes, packet: response))
            bytes[offset + 20] = bytes[offset + 20] == 0x01 ? 0x02 : bytes[offset + 20] ^ 0x01
            try Data(bytes).write(to: URL(fileURLWithPath: corrupted))
            let marked = try await pdml(corrupted)
            #expect(marked.count == packets.count)
            #expect(marked[response].contains("showname=\"Check status: bad\""))
            #expect(marked[response].contains("cameracontrol.check.bad"), "no expert info on the corrupted frame")
            #expect(marked[0].contains("Check status: good") && marked[response + 1].contains("Check status: good"))
            let decoded = try await runTool("camctl", ["decode", corrupted])
            #expect(decoded.standardOutput.split(separator: "\n")[response].contains("MALFORMED bad-check"))
        }

        /// The plot of the recording: SVG with the thresholds, traces and marks; PNG of the asked size.
        func plot(_ recording: String, in directory: String) async throws {
            let svgPath = directory + "/trace.svg"
            let svgRun = try await runTool("camctl", ["plot", recording, "-o", svgPath, "--width", "1000", "--height", "500"])
            #expect(svgRun.status == 0, "stderr: \(svgRun.standardError)")
            let svg = try String(contentsOfFile: svgPath, encoding: .utf8)
            #expect(svg.contains("width=\"1000\" height=\"500\""))
            for element in [
                "id=\"force\"", "id=\"slide\"", "id=\"light-on\"", "id=\"light-off\"", "id=\"light-hysteresis\"", "id=\"full-on\"",
                "id=\"full-hysteresis\"", ">light on 800 mN<", ">full on 2500 mN<", ">full off 1800 mN (hysteresis 700 mN)<",
                ">light-press-began<", ">double-light-press<", ">capture ended camera-control<", ">capture began volume-up<",
                "class=\"touch\"",
            ] {
                #expect(svg.contains(element), "the plot lacks \(element)")
            }
            // The force trace has the raw samples (1 kHz for ~10 s), not just the events.
            let points =
                svg.components(separatedBy: "id=\"force\"").last?.components(separatedBy: "points=\"").last?
                .prefix { $0 != "\"" }.split(separator: " ").count ?? 0
            #expect(points > 5000, "the force trace has \(points) points")

            // A raw-sample capture (time_us force_mn position touch): a press past the full threshold.
            let rawPath = directory + "/press.raw"
            let rawLines = (0..<200).map { i in "\(i * 1000) \(i < 50 ? i * 60 : max(0, 3000 - (i - 50) * 30)) 0.5 \(i < 190 ? 1 : 0)" }
            try ("# time_us force_mn position touch\n" + rawLines.joined(separator: "\n") + "\n").write(
                toFile: rawPath, atomically: true, encoding: .utf8)
            let rawRun = try await runTool("camctl", ["plot", "--raw", rawPath, "-o", directory + "/raw.svg"])
            #expect(rawRun.status == 0, "stderr: \(rawRun.standardError)")
            let rawSVG = (try? String(contentsOfFile: directory + "/raw.svg", encoding: .utf8)) ?? ""
            #expect(rawSVG.contains(">full on 2500 mN<") && rawSVG.contains("id=\"force\""))
            let badRun = try await runTool("camctl", ["plot", "--raw", recording, "-o", directory + "/bad.svg"])
            #expect(badRun.status == 1 && badRun.standardError.contains("is not a raw-sample capture"))

            let pngPath = directory + "/trace.png"
            let pngRun = try await runTool("camctl", ["plot", recording, "-o", pngPath, "--width", "800", "--height", "400"])
            #expect(pngRun.status == 0, "stderr: \(pngRun.standardError)")
            let png = [UInt8](try Data(contentsOf: URL(fileURLWithPath: pngPath)))
            #expect(png.count > 10_000 && Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            func u32(_ at: Int) -> Int { Int(png[at]) << 24 | Int(png[at + 1]) << 16 | Int(png[at + 2]) << 8 | Int(png[at + 3]) }
            #expect(png.count > 24 && (u32(16), u32(20)) == (800, 400), "the PNG is not 800 × 400")
        }

        @Test("record, replay, decode and plot --json: one object per line, the documented fields")
        func theRecordingToolsSpeakJSON() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let recording = directory + "/click.pcapng"
            func lines(_ text: String) throws -> [JSONValue] {
                try text.split(separator: "\n").map { line in
                    let value = try JSONValue(parsing: String(line))
                    guard case .object = value else { throw ChildProcessFailure(description: "not an object: \(line)") }
                    return value
                }
            }
            func record() async throws -> ToolRun {
                try await withSimulator(seed: 17) { simulator in
                    try await runTool(
                        "camctl",
                        [
                            "record", simulator.ptyPath, "-o", recording, "--json", "--scenario",
                            Self.root + "/Firmware-sim/scenarios/full-click.scenario",
                        ], timeout: .seconds(60))
                }
            }
            var live = try await record()
            for _ in 0..<3 where live.status == 1 && live.standardError.contains("the device went away") {
                live = try await record()
            }
            #expect(live.status == 0, "stderr: \(live.standardError)")
            let liveLines = try lines(live.standardOutput)
            #expect(liveLines.first?["type"] == .string("connected"))
            #expect(liveLines.first?["identity"]?["model"] == .string("Simulator"))
            #expect(
                liveLines.contains {
                    $0["type"] == .string("capture") && $0["phase"] == .string("ended") && $0["source"] == .string("camera-control")
                        && $0["captured"] == .bool(true)
                })
            #expect(liveLines.contains { $0["type"] == .string("gesture") && $0["kind"] == .string("press-ended") })

            // Replay: the same events (kinds, sources, and the device's own times of input events; a live
            // timer may stamp a gesture otherwise under load), then a summary.
            let replay = try await runTool("camctl", ["replay", recording, "--json"])
            #expect(replay.status == 0, "stderr: \(replay.standardError)")
            let replayLines = try lines(replay.standardOutput)
            #expect(replayLines.first?["type"] == .string("connected"))
            #expect(replayLines.last?["type"] == .string("summary"))
            #expect(replayLines.last?["frames"].map { $0 != .number("0") } == true)
            func events(_ lines: [JSONValue]) -> [String] {
                lines.filter { [.string("input"), .string("gesture"), .string("capture")].contains($0["type"]) }.map { line in
                    (line["type"] == .string("input") ? ["type", "kind", "source", "deviceTimeUs"] : ["type", "kind", "phase", "source"])
                        .map { line[$0]?.description ?? "-" }.joined(separator: " ")
                }.sorted()
            }
            #expect(events(liveLines) == events(replayLines), "the replay's events differ from the live run's")

            // Decode: one object per frame, payloads in protobuf's JSON mapping.
            let decoded = try await runTool("camctl", ["decode", recording, "--json"])
            #expect(decoded.status == 0, "stderr: \(decoded.standardError)")
            let frames = try lines(decoded.standardOutput)
            #expect(frames.count > 20)
            #expect(frames.allSatisfy { $0["ok"] == .bool(true) && $0["direction"] != nil && $0["tMs"] != nil })
            let handshake = try #require(frames.first)
            #expect(handshake["direction"] == .string("toDevice"))
            #expect(handshake["type"] == .string("REQUEST"))
            #expect(handshake["method"] == .string("DeviceService/Handshake"))
            #expect(handshake["messageType"] == .string("cameracontrol.v1.HandshakeRequest"))
            #expect(handshake["message"]?["hostName"] == .string("camctl record"))
            #expect(
                frames.contains {
                    $0["method"] == .string("InputService/StreamInputEvents") && $0["type"] == .string("STREAM_MESSAGE")
                        && $0["message"]?["source"] == .string("INPUT_SOURCE_CAMERA_CONTROL")
                })
            #expect(frames.contains { $0["type"] == .string("ACK") && $0["ackedSequence"] != nil })
            let hex = try await runTool(
                "/bin/sh", ["-c", "printf '03 08 05 01 03 f3 eb 00' | \(try BuiltProducts.executable("camctl")) decode - --json"])
            let bad = try lines(hex.standardOutput)
            #expect(
                bad.count == 1 && bad.first?["ok"] == .bool(false) && bad.first?["error"] == .string("bad-check"), "\(hex.standardOutput)")

            // Plot: a mark per gesture and capture event, then what was drawn.
            let plot = try await runTool("camctl", ["plot", recording, "-o", directory + "/click.svg", "--json"])
            #expect(plot.status == 0, "stderr: \(plot.standardError)")
            let drawn = try lines(plot.standardOutput)
            #expect(drawn.contains { $0["type"] == .string("mark") && $0["label"] == .string("capture ended camera-control") })
            let summary = try #require(drawn.last)
            #expect(summary["type"] == .string("plot") && summary["width"] == .number("1200") && summary["height"] == .number("600"))
            #expect(summary["thresholds"]?["fullPressOnMn"] == .number("2500"))
            #expect(FileManager.default.fileExists(atPath: directory + "/click.svg"))
        }

        @Test func ctrlCEndsARecordingWithACompleteFile() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let recording = directory + "/interrupted.pcapng"
            try await withSimulator(seed: 8) { simulator in
                let process = Process()
                process.executableURL = URL(fileURLWithPath: try BuiltProducts.executable("camctl"))
                process.arguments = ["record", simulator.ptyPath, "-o", recording, "--quiet"]
                let err = Pipe()
                process.standardInput = FileHandle.nullDevice
                process.standardOutput = FileHandle.nullDevice
                process.standardError = err
                try process.run()
                let errors = PipeCollector(err.fileHandleForReading)
                defer { if process.isRunning { signalProcess(process.processIdentifier, SIGKILL) } }
                // Heartbeats and raw samples flow while nothing is pressed: wait for a few hundred frames.
                let recorded = await eventually(within: .seconds(20)) {
                    ((try? FileManager.default.attributesOfItem(atPath: recording)[.size] as? Int) ?? 0) > 20_000
                }
                #expect(recorded, "the recording did not grow")
                signalProcess(process.processIdentifier, SIGINT)
                let exited = await eventually(within: .seconds(10)) { !process.isRunning }
                #expect(exited, "camctl record did not stop on SIGINT")
                if !exited { signalProcess(process.processIdentifier, SIGKILL) }
                process.waitUntilExit()
                #expect(process.terminationReason == .exit && process.terminationStatus == 0, "stderr: \(errors.text)")
                _ = await eventually(within: .seconds(5)) { errors.isEnded }
                let decoded = try await runTool("camctl", ["decode", recording])
                #expect(decoded.status == 0, "stderr: \(decoded.standardError)")
                let lines = decoded.standardOutput.split(separator: "\n")
                #expect(errors.text.contains("recorded \(lines.count) frames"), "stderr: \(errors.text); decoded \(lines.count)")
                #expect(lines.first?.contains("DeviceService/Handshake") == true)
                #expect(!decoded.standardOutput.contains("MALFORMED"))
            }
        }

        @Test func theFullScreenMonitorUnderTmux() async throws {
            let tmux = "/usr/bin/tmux"
            try #require(FileManager.default.isExecutableFile(atPath: tmux), "tmux is missing: scripts/install-deps --test installs it")
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let scenario = directory + "/monitor.scenario"
            try """
            touch at=0.3 hold=60ms
            light-press force=1200mN hold=150ms
            slide to=0.7 over=300ms
            release
            pause 300ms
            full-click force=3500mN hold=80ms
            pause 300ms
            """.write(toFile: scenario, atomically: true, encoding: .utf8)
            // A server of its own (-L), so that no one else's tmux is touched; killed at the end.
            let socket = "camctl-test-\(getpid())"
            func tmuxRun(_ arguments: [String]) async throws -> ToolRun {
                try await Self.tmuxRun(tmux, server: socket, arguments)
            }
            defer { _ = try? Process.run(URL(fileURLWithPath: tmux), arguments: ["-L", socket, "kill-server"]).waitUntilExit() }
            try await withSimulator(seed: 9) { simulator in
                let camctl = try BuiltProducts.executable("camctl")
                let command = "\(camctl) monitor \(simulator.ptyPath) --scenario \(scenario) --seconds 60; echo MONITOR-EXIT-$?; sleep 60"
                let started = try await tmuxRun(["new-session", "-d", "-s", "monitor", "-x", "120", "-y", "60", command])
                #expect(started.status == 0, "tmux: \(started.standardError)")
                var screen = ""
                let shown = try await eventually(within: .seconds(20)) {
                    screen = try await tmuxRun(["capture-pane", "-p", "-t", "monitor"]).standardOutput
                    return screen.contains("capture  ended") && screen.contains("RTT 0.")
                }
                #expect(shown, "the monitor's screen: \(screen)")
                for text in [
                    "CameraControl Simulator  serial SIM-", "force ", "light 800/500 mN (L/l)   full 2500/1800 mN (F/f)", "slide ",
                    "touch ",
                    "overlay ", "control zoom", "link   RTT ", "device: retransmissions ", "check errors 0", "events (q quits)",
                    "gesture  light-press-began camera-control", "capture  began     primary   camera-control",
                ] {
                    #expect(screen.contains(text), "the monitor's screen lacks '\(text)': \(screen)")
                }
                let bar = screen.split(separator: "\n").first { $0.hasPrefix("force ") } ?? ""
                #expect(bar.contains("L") && bar.contains("F") && bar.contains("l") && bar.contains("f"), "force bar: \(bar)")
                // The log never scrolls past the screen: the screen is 60 rows, whatever was logged.
                #expect(screen.split(separator: "\n", omittingEmptySubsequences: false).count <= 61)

                _ = try await tmuxRun(["send-keys", "-t", "monitor", "q"])
                let quit = try await eventually(within: .seconds(10)) {
                    screen = try await tmuxRun(["capture-pane", "-p", "-t", "monitor"]).standardOutput
                    return screen.contains("MONITOR-EXIT-")
                }
                #expect(quit && screen.contains("MONITOR-EXIT-0"), "after q: \(screen)")
                #expect(!screen.contains("events (q quits)"), "the terminal was not restored: \(screen)")
            }
        }

        /// The full-screen monitor on a pty by its own path whose simulator is killed: a pty never comes back,
        /// so the host stops reconnecting; the screen is restored and the one line says why, exit 1 (it was 0,
        /// and before the host gave up, it waited until --seconds or claimed the next pty on that number).
        #if os(Linux)  // devpts makes a pty's node anew: its number's next pty is told apart
            @Test("the full-screen monitor under tmux: the simulator killed, the terminal restored, one line 'gone for good', exit 1")
            func theFullScreenMonitorGivesUpOnAPtyThatClosed() async throws {
                let tmux = "/usr/bin/tmux"
                try #require(FileManager.default.isExecutableFile(atPath: tmux), "tmux is missing: scripts/install-deps --test installs it")
                let socket = "camctl-test-gone-\(getpid())"
                func tmuxRun(_ arguments: [String]) async throws -> ToolRun {
                    try await Self.tmuxRun(tmux, server: socket, arguments)
                }
                defer { _ = try? Process.run(URL(fileURLWithPath: tmux), arguments: ["-L", socket, "kill-server"]).waitUntilExit() }
                let simulator = try SimulatorProcess(seed: 19)
                defer { simulator.kill() }
                let camctl = try BuiltProducts.executable("camctl")
                let command = "\(camctl) monitor \(simulator.ptyPath) --seconds 120; echo MONITOR-EXIT-$?; sleep 60"
                let started = try await tmuxRun(["new-session", "-d", "-s", "gone", "-x", "160", "-y", "40", command])
                #expect(started.status == 0, "tmux: \(started.standardError)")
                var screen = ""
                // The link line's RTT: connected, its clock estimated, the screen drawn.
                let shown = try await eventually(within: .seconds(20)) {
                    screen = try await tmuxRun(["capture-pane", "-p", "-t", "gone"]).standardOutput
                    return screen.contains("RTT ")
                }
                try #require(shown, "the monitor's screen: \(screen)")
                simulator.kill()
                let ended = try await eventually(within: .seconds(60)) {
                    screen = try await tmuxRun(["capture-pane", "-p", "-t", "gone"]).standardOutput
                    return screen.contains("MONITOR-EXIT-")
                }
                #expect(ended && screen.contains("MONITOR-EXIT-1"), "\(screen)")
                #expect(screen.contains("camctl monitor: the device is gone for good"), "\(screen)")
                #expect(!screen.contains("events (q quits)"), "the terminal was not restored: \(screen)")
            }
        #endif

        /// The event lines of a run (input, gesture, capture, overlay, haptic), in the shape DemoTests
        /// compares: numbers replaced.
        static func events(_ output: String) -> [String] {
            output.split(separator: "\n").map(String.init)
                .filter { line in
                    let category = line.dropFirst(12).trimmingCharacters(in: .whitespaces)
                    return ["input ", "gesture ", "capture ", "overlay ", "haptic "].contains { category.hasPrefix($0) }
                }
                .map { DemoTests.shape($0) }
        }

        /// The call id of the first handshake `REQUEST` in `camctl decode`'s output.
        static func handshakeCallID(_ output: String) -> Int? {
            let marker = "REQUEST seq 0 reliable call "
            guard let line = output.split(separator: "\n").first(where: { $0.contains(marker) && $0.contains("DeviceService/Handshake") }),
                let range = line.range(of: marker)
            else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }

        static func firstDifference(_ a: [String], _ b: [String]) -> String {
            for (index, (x, y)) in zip(a, b).enumerated() where x != y { return "line \(index): '\(x)' vs '\(y)'" }
            return "lengths \(a.count) and \(b.count)"
        }

        /// Where the data of Enhanced Packet Block number `packet` (0-based) starts in a pcapng file.
        static func packetDataOffset(_ bytes: [UInt8], packet: Int) -> Int? {
            func u32(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24 }
            var offset = 0
            var seen = 0
            while offset + 12 <= bytes.count {
                if u32(offset) == 6 {
                    if seen == packet { return offset + 28 }
                    seen += 1
                }
                offset += max(12, u32(offset + 4))
            }
            return nil
        }

        func temporaryDirectory() throws -> String {
            let path = NSTemporaryDirectory() + "camctl-tools-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            return path
        }
    }
}

extension OverRealPTY.ToolsTests {
    /// `tmux -L SERVER ARGUMENTS` (a server of the test's own), through a wrapper that clears the signal mask
    /// this process's children inherit (tmux waits for signals from its server) and its ignored signals, and
    /// names a terminal type.
    static func tmuxRun(_ tmux: String, server: String, _ arguments: [String]) async throws -> ToolRun {
        let unblocked = """
            import os, signal, subprocess, sys
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            for number in signal.valid_signals():
                try: signal.signal(number, signal.SIG_DFL)
                except (OSError, ValueError): pass
            os.environ['TERM'] = 'xterm'
            os.environ.pop('TMUX', None)
            sys.exit(subprocess.call(sys.argv[1:]))
            """
        return try await runTool("/usr/bin/python3", ["-c", unblocked, tmux, "-L", server] + arguments)
    }
}

extension OverRealPTY.ToolsTests {
    @Test("camctl export --help calls force_mn and slide what the VCD declares them: reals, not vectors")
    func exportHelpNamesTheVariableTypes() async throws {
        let help = try await runTool("camctl", ["export", "--help"])
        #expect(help.status == 0, "\(help.standardError)")
        // The VCD says `$var real 64 A force_mn` (exportedVCDOpensInSigrok): the help must not say vectors.
        #expect(help.standardOutput.contains("force_mn and slide (`real` variables"), "\(help.standardOutput)")
        #expect(!help.standardOutput.contains("vector"), "\(help.standardOutput)")
    }

    @Test("camctl export --vcd: a session recorded from camctl-sim opens in sigrok-cli with its signals and gestures")
    func exportedVCDOpensInSigrok() async throws {
        let sigrok = "/usr/bin/sigrok-cli"
        try #require(FileManager.default.isExecutableFile(atPath: sigrok), "sigrok-cli missing: scripts/install-deps --test")
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let recording = directory + "/session.pcapng"
        let vcd = directory + "/session.vcd"
        let scenario = directory + "/session.scenario"
        try "full-click\npause 100ms\nbutton volume-up\ndouble-light-press\npause 300ms\n"
            .write(toFile: scenario, atomically: true, encoding: .utf8)
        // A starved machine can drop the real-time link: record again (up to 3 times), as above.
        var attempt: ToolRun?
        for _ in 0..<3 {
            let run = try await withSimulator(seed: 8) { simulator in
                try await runTool("camctl", ["record", simulator.ptyPath, "-o", recording, "--scenario", scenario, "--quiet"])
            }
            attempt = run
            if run.status != 1 || !run.standardError.contains("the device went away") { break }
        }
        let live = try #require(attempt)
        #expect(live.status == 0, "\(live.standardError)")
        let export = try await runTool("camctl", ["export", recording, "--vcd", vcd])
        #expect(export.status == 0, "\(export.standardError)")
        let text = try String(contentsOfFile: vcd, encoding: .utf8)
        #expect(text.contains("$var real 64 A force_mn $end") && text.contains("$var real 64 B slide $end"))

        let show = try await runTool(sigrok, ["-I", "vcd", "-i", vcd, "--show"])
        #expect(show.status == 0, "\(show.standardError)")
        for channel in [
            "touch", "light_press", "full_press", "volume_up", "volume_up_raw", "press_began", "press_ended", "double_light_press",
        ] {
            #expect(show.standardOutput.contains("- \(channel): logic"), "\(channel) in \(show.standardOutput)")
        }
        // The samples sigrok reads back: touch, the full press, volume up and the double light press are high
        // for as long as they were (in µs at 1 MHz).
        let channels = ["touch", "full_press", "volume_up", "double_light_press", "volume_up_raw"]
        // Every 10th sample (100 kHz): 10 µs a line is fine enough, and a tenth of the lines to read.
        let csv = try await runTool(
            sigrok, ["-I", "vcd:downsample=10", "-i", vcd, "-C", channels.joined(separator: ","), "-O", "csv"])
        #expect(csv.status == 0, "\(csv.standardError)")
        // Read on a thread of its own: some 300,000 lines would hold a thread of the cooperative pool (and with
        // it the real-time tests running alongside) for seconds.
        let levels = try await onOwnThread { Self.sigrokLevels(csv.standardOutput, channels: channels) }
        let (column, high, firstHigh, rises) = (levels.column, levels.highMicros, levels.firstHighMicros, levels.rises)
        #expect(column.count == channels.count, "sigrok's channel line names \(column.count) of \(channels)")
        #expect(high[0] > 300_000, "touched for the click, the double press and in between: \(high)")
        #expect((100_000...130_000).contains(high[1]), "a full click's full press lasts 113–116 ms: \(high)")
        #expect((95_000...105_000).contains(high[2]), "volume up held 100 ms (debounced): \(high)")
        #expect(high[3] == Int(1_000), "one double light press, a 1 ms pulse: \(high)")
        // The buttons' raw levels (RawSampleBatch.button_levels): down for the 100 ms press give or take the
        // contacts' 1–4 ms of chatter at each edge, and down before the debounced level by at least the 5 ms
        // debounce (counted from the last bounce).
        #expect((92_000...108_000).contains(high[4]), "volume up's raw level down for 100 ms ± its bounce: \(high)")
        #expect(rises[4] >= 1, "volume up's raw level rises: \(rises)")
        if let raw = firstHigh[4], let debounced = firstHigh[2] {
            #expect(debounced - raw >= 5_000, "the raw level went down at \(raw) µs, the debounced one at \(debounced) µs")
        } else {
            Issue.record("volume up's raw or debounced level never went down: \(firstHigh)")
        }
    }
}

extension OverRealPTY.ToolsTests {
    /// What sigrok-cli's CSV says of `channels`, each by name (sigrok orders the columns as the VCD declares
    /// them, and says so: `; Channels (5/9): touch, full_press, …`): how long each was high, when it first
    /// went high and how often it rose, in µs from `META samplerate`.
    static func sigrokLevels(
        _ csv: String, channels: [String]
    ) -> (column: [Int], highMicros: [Int], firstHighMicros: [Int?], rises: [Int]) {
        var high = [Int](repeating: 0, count: channels.count)
        var firstHigh = [Int?](repeating: nil, count: channels.count)
        var rises = [Int](repeating: 0, count: channels.count)
        var previous = [Bool](repeating: false, count: channels.count)
        var column: [Int] = []
        var microsPerSample = 1
        var sample = 0
        for line in csv.split(separator: "\n") {
            if line.hasPrefix(";") || line.hasPrefix("META") {
                if line.hasPrefix("; Channels"), let colon = line.range(of: "): ") {
                    column = line[colon.upperBound...].split(separator: ",").compactMap { name in
                        channels.firstIndex(of: name.trimmingCharacters(in: .whitespaces))
                    }
                } else if line.hasPrefix("META samplerate: "), let rate = Int(line.dropFirst("META samplerate: ".count)), rate > 0 {
                    microsPerSample = max(1, 1_000_000 / rate)
                }
                continue
            }
            let fields = line.split(separator: ",")
            guard column.count == channels.count, fields.count == channels.count, fields.allSatisfy({ $0 == "0" || $0 == "1" })
            else { continue }
            for (at, field) in fields.enumerated() {
                let index = column[at]
                let isHigh = field == "1"
                if isHigh {
                    high[index] += microsPerSample
                    if firstHigh[index] == nil { firstHigh[index] = sample * microsPerSample }
                    if !previous[index] { rises[index] += 1 }
                }
                previous[index] = isHigh
            }
            sample += 1
        }
        return (column, high, firstHigh, rises)
    }
}

extension OverRealPTY.ToolsTests {
    @Test(
        "a session recorded from camctl-sim replays into the firmware (camctl test --replay, and camctl-sim --replay on its pty): the same gestures and captures; a CSV trace too"
    )
    func recordingReplaysIntoTheFirmware() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let recording = directory + "/session.pcapng"
        let scenario = directory + "/session.scenario"
        try """
        full-click
        pause 100ms
        button volume-up
        touch at=0.3 hold=50ms
        light-press hold=100ms
        slide to=0.7 over=300ms
        release
        remote-click
        double-light-press
        pause 300ms

        """.write(toFile: scenario, atomically: true, encoding: .utf8)
        // A starved machine can drop the real-time link: record again (up to 3 times), as above.
        var attempt: ToolRun?
        for _ in 0..<3 {
            let run = try await withSimulator(seed: 9) { simulator in
                try await runTool("camctl", ["record", simulator.ptyPath, "-o", recording, "--scenario", scenario, "--quiet"])
            }
            attempt = run
            if run.status != 1 || !run.standardError.contains("the device went away") { break }
        }
        let live = try #require(attempt)
        #expect(live.status == 0, "\(live.standardError)")
        try await Self.replayInCamctlSim(recording, directory: directory)
        let junit = directory + "/replay.xml"
        let replay = try await runTool("camctl", ["test", "--replay", recording, "--junit", junit])
        #expect(replay.status == 0, "\(replay.standardOutput)\(replay.standardError)")
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(xml.contains("tests=\"2\" failures=\"0\""), "\(xml)")
        #expect(xml.contains("name=\"gestures\"/>") && xml.contains("name=\"captures\"/>"), "\(xml)")
        #expect(replay.standardOutput.contains("PASS \(recording): the same 6 captures"), "\(replay.standardOutput)")
        let gestures = replay.standardOutput.split(separator: "\n").first { $0.contains("gestures") }.map(String.init) ?? ""
        let count = Int(gestures.split(separator: " ").dropFirst(4).first ?? "") ?? 0
        #expect(gestures.hasPrefix("PASS ") && count > 20, "\(replay.standardOutput)")

        // A hand-made CSV trace (another tool's): a full click, volume up, a remote click.
        var csv = "# time_us,force_mn,position,touch[,buttons[,remote_clicks]]\n"
        for ms in 0..<400 {
            let force = ms < 20 ? 0 : ms < 100 ? (ms - 20) * 45 : ms < 200 ? 3_600 : max(0, 3_600 - (ms - 200) * 90)
            csv += "\(ms * 1000),\(force),0.5,\(ms >= 15 && ms < 280 ? 1 : 0)\n"
        }
        csv += "400000,0,0.5,0,1\n500000,0,0.5,0,0,1\n600000,0,0.5,0\n"
        try csv.write(toFile: directory + "/click.csv", atomically: true, encoding: .utf8)
        let trace = try await runTool("camctl", ["test", "--replay", directory + "/click.csv"])
        #expect(trace.status == 0, "\(trace.standardError)")
        for line in ["capture ended primary camera-control", "capture ended secondary volume-up", "capture ended primary remote"] {
            #expect(trace.standardOutput.contains(line), "\(trace.standardOutput)")
        }
        try "0,0,0.5,1\n5,abc,0.5,1\n".write(toFile: directory + "/bad.csv", atomically: true, encoding: .utf8)
        let bad = try await runTool("camctl", ["test", "--replay", directory + "/bad.csv"])
        #expect(
            bad.status == 1 && bad.standardError.contains("bad.csv:2: force_mn 'abc' is not a whole number of mN"), "\(bad.standardError)")
    }

    /// `camctl-sim --replay FILE` on its pty, a host (`camctl record`) connected to it: the replay starts at the
    /// host's handshake and the host sees the recording's captures, in order, with the same click lengths. Real
    /// time, but device time passes every sample boundary however late camctl-sim wakes, so the firmware reads
    /// each replayed sample at its recorded time and a loaded machine changes only the latencies (a stall past
    /// the 200 ms liveness timeout drops the link: recorded again, as above).
    static func replayInCamctlSim(_ recording: String, directory: String) async throws {
        func captures(_ file: String) async throws -> [String] {
            let run = try await runTool("camctl", ["replay", file])
            #expect(run.status == 0, "\(run.standardError)")
            // `capture ended primary camera-control force 1766 mN click 115 ms …`: phase, role, source, click.
            return run.standardOutput.split(separator: "\n").compactMap { line in
                let words = line.split(separator: " ")
                guard let at = words.firstIndex(of: "capture"), at + 3 < words.count else { return nil }
                let click = words.firstIndex(of: "click").map { " click " + words[$0 + 1] } ?? ""
                return words[at + 1...at + 3].joined(separator: " ") + click
            }
        }
        let replayed = directory + "/replayed.pcapng"
        var attempt: ToolRun?
        for _ in 0..<3 {
            let run = try await withSimulator(seed: 5, extraArguments: ["--replay", recording]) { simulator in
                try await runTool("camctl", ["record", simulator.ptyPath, "-o", replayed, "--seconds", "5", "--quiet"])
            }
            attempt = run
            if run.status != 1 || !run.standardError.contains("the device went away") { break }
        }
        let host = try #require(attempt)
        #expect(host.status == 0, "\(host.standardError)")
        let recorded = try await captures(recording)
        #expect(recorded.count == 6, "\(recorded)")
        let seen = try await captures(replayed)
        #expect(seen == recorded, "camctl-sim --replay gave other captures")
    }

    @Test("camctl-sim --replay refuses a bad file with camctl's reason, exit 2; a bad sample file too")
    func camctlSimReplayRefusesBadFiles() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func sim(_ arguments: [String]) async throws -> ToolRun {
            try await runTool("camctl-sim", ["--quiet"] + arguments, timeout: .seconds(60))
        }
        // A recording cut short, one that is not pcapng, one whose first block claims 2 GiB, a missing file.
        let header: [UInt8] = [0x0A, 0x0D, 0x0D, 0x0A, 0xF0, 0xFF, 0xFF, 0x7F, 0x4D, 0x3C, 0x2B, 0x1A, 1, 0, 0, 0]
        let cases: [(name: String, bytes: [UInt8]?, says: String)] = [
            ("short.pcapng", Array(header.prefix(10)), "is cut short: 10 bytes"),
            ("text.pcapng", Array("full-click\n".utf8), "is not a little-endian pcapng file"),
            ("absurd.pcapng", header + [UInt8](repeating: 0, count: 48), "(2147483632 bytes)"),
            ("missing.pcapng", nil, "cannot read"),
            ("bad.csv", Array("0,0,0.5,1\n5,abc,0.5,1\n".utf8), "bad.csv:2: force_mn 'abc' is not a whole number of mN"),
        ]
        for (name, bytes, says) in cases {
            let path = directory + "/" + name
            if let bytes { try Data(bytes).write(to: URL(fileURLWithPath: path)) }
            let run = try await sim(["--replay", path])
            #expect(run.status == 2, "\(name): \(run.status) \(run.standardError)")
            #expect(run.standardError.hasPrefix("camctl-sim: --replay \(path): "), "\(name): \(run.standardError)")
            #expect(run.standardError.contains(says), "\(name): \(run.standardError)")
            #expect(run.standardOutput.isEmpty, "no pty for a bad file")
        }
        // A FIFO nobody writes to would block the read for ever; a directory is no recording either.
        let fifo = directory + "/fifo.pcapng"
        #expect(mkfifo(fifo, 0o600) == 0)
        for path in [fifo, directory] {
            let run = try await sim(["--replay", path])
            #expect(run.status == 2, "\(path): \(run.status) \(run.standardError)")
            #expect(run.standardError.contains("--replay \(path): is not a regular file"), "\(run.standardError)")
        }

        // The sample file camctl writes, damaged (a stand-in camctl writes it: `camctl export FILE --samples OUT`, OUT its $4): camctl-sim names the line.
        let header1 = "# camctl-sim replay samples v1: t_us force_mn position touched buttons remote_clicks\n"
        let samples: [(text: String, says: String)] = [
            ("", "empty"),
            ("# something else\n0 0 0 0 0 0\n", "line 1: not a replay sample file"),
            (header1, "no samples"),
            (header1 + "0 0 512 0 0 0\n1000 0 512 2 0 0\n", "line 3: field 4: want touched 0 or 1"),
            (header1 + "0 99999999999 512 0 0 0\n", "line 2: field 2"),
            (header1 + "0 0 512 0 0\n", "line 2: field 5"),
            (header1 + "5 0 512 0 0 0\n4 0 512 0 0 0\n", "line 3: t_us goes back"),
            (header1 + "0 0 512 0 0 0 " + String(repeating: "7", count: 200) + "\n", "line 2: longer than 128 bytes"),
        ]
        let fake = directory + "/fake-camctl"
        for (index, sample) in samples.enumerated() {
            let file = directory + "/samples-\(index)"
            try sample.text.write(toFile: file, atomically: true, encoding: .utf8)
            try "#!/bin/sh\ncat '\(file)' > \"$4\"\n".write(toFile: fake, atomically: true, encoding: .utf8)
            _ = chmod(fake, 0o755)
            let run = try await sim(["--replay", directory + "/any.pcapng", "--camctl", fake])
            #expect(run.status == 2 && run.standardError.contains(sample.says), "#\(index): \(run.standardError)")
        }
        // More samples than camctl-sim replays (a million: about 16 minutes at 1 kHz).
        try "#!/bin/sh\n{ echo '\(header1.dropLast())'; seq 0 1000000 | sed 's/$/ 0 512 0 0 0/'; } > \"$4\"\n".write(
            toFile: fake, atomically: true, encoding: .utf8)
        _ = chmod(fake, 0o755)
        let many = try await sim(["--replay", directory + "/any.pcapng", "--camctl", fake])
        #expect(many.status == 2 && many.standardError.contains("line 1000002: more than 1000000 samples"), "\(many.standardError)")
        let none = try await sim(["--replay", directory + "/any.pcapng", "--camctl", directory + "/no-camctl"])
        #expect(none.status == 2 && none.standardError.contains("pass --camctl PATH"), "\(none.standardError)")
    }
}
