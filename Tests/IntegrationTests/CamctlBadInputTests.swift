import CameraControlPosixTransport
import CameraControlTestSupport
import CameraControlTools
import CameraControlWire
import Foundation
import Synchronization
import Testing

/// Bad input given to camctl from outside: each gets a bounded, clear answer (one sentence, a non-zero
/// exit), never unbounded memory, a hang or a Foundation error dump. No timing is asserted: a hang or
/// an unbounded read shows as runTool's timeout.
@Suite("camctl bad input")
struct CamctlBadInputTests {
    /// A temporary folder, removed after `body`.
    private func inFolder(_ body: (String) async throws -> Void) async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await body(folder)
    }

    /// A file of `size` zero bytes (sparse: nothing is written).
    private func zeros(_ path: String, size: UInt64) throws {
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: size)
        try handle.close()
    }

    @Test("monitor --camera and -o need --http (and -o a --camera), a camera that does not exist is one line: exit 2, 1")
    func monitorCameraArguments() async throws {
        for (arguments, says) in [
            (["--camera", "test"], "--camera and -o go with --http"),
            (["-o", "/tmp"], "--camera and -o go with --http"),
            (["--http", "0", "-o", "/tmp"], "-o goes with --camera"),
        ] {
            let run = try await runTool("camctl", ["monitor", "/dev/null"] + arguments)
            #expect(run.status == 2, "\(arguments): \(run.standardError)")
            #expect(run.standardError.contains(says), "\(arguments): \(run.standardError)")
        }
        let missing = try await runTool("camctl", ["monitor", "/dev/null", "--http", "0", "--camera", "/dev/video99"])
        #expect(missing.status == 1, "\(missing.standardError)")
        #expect(missing.standardError.contains("/dev/video99"), "\(missing.standardError)")
        #expect(missing.standardError.split(separator: "\n").count == 1, "\(missing.standardError)")
    }

    @Test("conformance on a port where nothing answers: the first two cases fail, the rest are not run, exit 3")
    func conformanceOnASilentPort() async throws {
        let silent = try PseudoTerminalPair.open()
        defer {
            silent.master.close()
            silent.subordinate.close()
        }
        // Each case would wait out its own handshake (minutes in all): the run stops after the first.
        let run = try await runTool("camctl", ["conformance", silent.subordinatePath, "--json"], timeout: .seconds(60))
        #expect(run.status == 3, "\(run.standardOutput)\(run.standardError)")
        #expect(run.standardError.contains("nothing answered on \(silent.subordinatePath)"), "\(run.standardError)")
        #expect(run.standardError.contains("115200 baud"), "the baud-rate hint: \(run.standardError)")
        let lines = run.standardOutput.split(separator: "\n")
        #expect(lines.filter { $0.contains("\"FAIL\"") }.count == 2, "the first two cases: \(run.standardOutput)")
        #expect(!lines.contains { $0.contains("\"PASS\"") }, "\(run.standardOutput)")
        #expect(lines.filter { $0.contains("\"SKIP\"") && $0.contains("not run: nothing answered") }.count >= 50)
    }

    @Test("decode - < /dev/zero stops at the first byte: not hex, exit 1")
    func decodeZeros() async throws {
        let zero = try #require(FileHandle(forReadingAtPath: "/dev/zero"))
        let run = try await runTool("camctl", ["decode", "-"], standardInput: zero)
        #expect(run.status == 1)
        #expect(run.standardError.contains("stdin: byte 0 of the hex text is 0x00, not a hex digit"), "\(run.standardError)")
    }

    @Test("decode, replay, plot and export of a recording cut short: the whole frames before the cut, then the cut, exit 1")
    func decodeTruncated() async throws {
        try await inFolder { folder in
            let path = folder + "/cut.pcapng"
            let writer = try PcapngWriter(path: path, interfaceName: "test")
            writer.write(RecordedFrame(timeMicros: 1_000, direction: .toDevice, bytes: [0x03, 0x08, 0x05, 0x01, 0x03, 0xF3, 0xEA, 0x00]))
            writer.write(RecordedFrame(timeMicros: 2_000, direction: .fromDevice, bytes: [0x02, 0x01, 0x00]))
            writer.close()
            let whole = try BoundedFiles.read(path, maxBytes: 1 << 20, what: "a recording")
            // Cut 4 bytes into the second frame's block (within its first 8 bytes), then 20 bytes into it.
            let secondBlock = Self.blockStarts(whole)[3]
            for depth in [4, 20] {
                try BoundedFiles.write(Array(whole[..<(secondBlock + depth)]), to: path)
                let decode = try await runTool("camctl", ["decode", path])
                #expect(decode.status == 1, "cut \(depth) bytes in")
                #expect(decode.standardOutput.split(separator: "\n").count == 1, "\(decode.standardOutput)")
                #expect(decode.standardOutput.contains("host→device"), "\(decode.standardOutput)")
                #expect(decode.standardError.contains("cut short"), "\(decode.standardError)")
                #expect(decode.standardError.contains("after 1 whole frames"), "\(decode.standardError)")
                let replay = try await runTool("camctl", ["replay", path])
                #expect(replay.status == 1)
                #expect(replay.standardError.contains("after 1 whole frames"), "\(replay.standardError)")
                try? FileManager.default.removeItem(atPath: folder + "/trace.svg")
                let plot = try await runTool("camctl", ["plot", path, "-o", folder + "/trace.svg"])
                #expect(plot.status == 1)
                #expect(plot.standardError.contains("cut short"), "\(plot.standardError)")
                let drawn = (try? BoundedFiles.read(folder + "/trace.svg", maxBytes: 1 << 22, what: "the plot")) ?? []
                #expect(String(decoding: drawn, as: UTF8.self).contains("<svg"), "the frames before the cut are drawn")
                try? FileManager.default.removeItem(atPath: folder + "/cut.vcd")
                let export = try await runTool("camctl", ["export", path, "--vcd", folder + "/cut.vcd"])
                #expect(export.status == 1)
                #expect(export.standardError.contains("cut short"), "\(export.standardError)")
                let dump = (try? BoundedFiles.read(folder + "/cut.vcd", maxBytes: 1 << 22, what: "the dump")) ?? []
                #expect(String(decoding: dump, as: UTF8.self).contains("$enddefinitions"), "the frames before the cut are exported")
            }
        }
    }

    /// Where each block of a pcapng file starts.
    static func blockStarts(_ bytes: [UInt8]) -> [Int] {
        var starts: [Int] = []
        var offset = 0
        while offset + 8 <= bytes.count {
            starts.append(offset)
            offset += Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8
        }
        return starts
    }

    @Test("plot and record: an output path that cannot be written is one sentence with the reason")
    func outputPaths() async throws {
        try await inFolder { folder in
            let input = folder + "/in.pcapng"
            let writer = try PcapngWriter(path: input, interfaceName: "test")
            writer.close()
            for output in [folder + "/missing/trace.svg", folder + "/missing/trace.png"] {
                let plot = try await runTool("camctl", ["plot", input, "-o", output])
                #expect(plot.status == 1)
                #expect(plot.standardError.contains("cannot create \(output): No such file or directory"), "\(plot.standardError)")
                #expect(!plot.standardError.contains("NSCocoaErrorDomain"))
            }
            let record = try await runTool("camctl", ["record", "/dev/null", "-o", folder])
            #expect(record.status == 1)
            #expect(record.standardError.contains("cannot create \(folder): Is a directory"), "\(record.standardError)")
        }
    }

    @Test("record into a file that fills up: it stops with the reason, the frames before are whole, exit 1")
    func recordIntoAFullFile() async throws {
        try await inFolder { folder in
            let simulator = try SimulatorProcess()
            defer { simulator.kill() }
            // /dev/full takes nothing: the headers fail, before the session starts.
            let full = try await runTool("camctl", ["record", simulator.ptyPath, "-o", "/dev/full"])
            #expect(full.status == 1)
            #expect(full.standardError.contains("cannot write /dev/full: No space left on device"), "\(full.standardError)")
            #expect(!full.standardError.contains("Fatal error"))
            // A file limited to 4 KB (ulimit -f in 512-byte blocks; SIGXFSZ ignored, so the write fails as on a
            // full disk) fills during the session. No --seconds: only the failed write can end the recording
            // before runTool's timeout kills it.
            let output = folder + "/cut.pcapng"
            let run = try await runTool(
                "/bin/sh",
                [
                    "-c", "trap '' XFSZ; ulimit -f 8; exec \"$0\" record \"$1\" -o \"$2\"", try BuiltProducts.executable("camctl"),
                    simulator.ptyPath, output,
                ])
            #expect(run.status == 1, "\(run.standardError)")
            #expect(run.standardError.contains("cannot write \(output): File too large"), "\(run.standardError)")
            #expect(!run.standardError.contains("Fatal error"))
            let frames = try PcapngReader.frames(path: output)
            #expect(!frames.isEmpty)
            #expect(run.standardError.contains("recorded \(frames.count) frames to \(output)"), "\(run.standardError)")
        }
    }

    @Test("a message to a standard error that takes nothing (/dev/full) is dropped: the exit status stays, no crash")
    func standardErrorFull() async throws {
        let camctl = try BuiltProducts.executable("camctl")
        for (arguments, status) in [(["no-such-command"], 2), (["info", "/nonexistent-camctl-port"], 1)] {
            let run = try await runTool("/bin/sh", ["-c", "exec \"$@\" 2>/dev/full", "sh", camctl] + arguments)
            #expect(run.status == Int32(status), "\(arguments): \(run.standardOutput)")
        }
    }

    @Test("output that cannot be written (stdout on /dev/full) is a runtime failure, said on stderr: exit 1")
    func standardOutputFull() async throws {
        let camctl = try BuiltProducts.executable("camctl")
        let run = try await runTool("/bin/sh", ["-c", "exec \"$@\" >/dev/full", "sh", camctl, "describe"])
        #expect(run.status == 1, "\(run.standardError)")
        #expect(run.standardError.contains("camctl: cannot write standard output"), "\(run.standardError)")
    }

    @Test("--junit, relay --link and serve --socket: written in place through a symlink, refused in one sentence where they cannot be")
    func reportAndLinkPaths() async throws {
        let scenario = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Firmware-sim/scenarios/buttons.scenario").path
        try await inFolder { folder in
            // A report through a symlink goes where it points; the link stays a link (no file renamed over it).
            let target = folder + "/report.xml"
            let link = folder + "/report-link"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
            let written = try await runTool("camctl", ["test", scenario, "--quiet", "--junit", link])
            #expect(written.status == 0, "\(written.standardError)")
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
            #expect(try String(contentsOfFile: target, encoding: .utf8).contains("<testsuites"))

            for arguments in [
                ["test", scenario, "--quiet", "--junit", folder], ["conformance", "--sim", "--case", "handshake", "--junit", folder],
            ] {
                let run = try await runTool("camctl", arguments)
                #expect(run.status == 1, "\(arguments): \(run.standardError)")
                #expect(run.standardError.contains("cannot create \(folder): Is a directory"), "\(arguments): \(run.standardError)")
                #expect(!run.standardError.contains("NSCocoaErrorDomain"), "\(arguments): \(run.standardError)")
            }

            let simulator = try SimulatorProcess()
            defer { simulator.kill() }
            // serve's --socket: a path that is not a socket is never replaced, and the reason says so.
            let notSocket = folder + "/not-a-socket.txt"
            #expect(FileManager.default.createFile(atPath: notSocket, contents: Data("keep".utf8)))
            for (path, says) in [(notSocket, "a file that is not a socket"), (folder, "a directory")] {
                let serve = try await runTool("camctl", ["serve", simulator.ptyPath, "--socket", path, "--seconds", "5"])
                #expect(serve.status == 1, "\(path): \(serve.standardError)")
                #expect(serve.standardError.contains("cannot listen at \(path): it is \(says)"), "\(serve.standardError)")
            }
            #expect(try String(contentsOfFile: notSocket, encoding: .utf8) == "keep")
            let file = folder + "/regular.txt"
            #expect(FileManager.default.createFile(atPath: file, contents: Data("keep".utf8)))
            for (path, says) in [
                (file, "cannot make the link \(file): it exists and is not a symbolic link"),
                (folder + "/missing/link", "cannot make the link \(folder)/missing/link: No such file or directory"),
            ] {
                let relay = try await runTool("camctl", ["relay", "pty", simulator.ptyPath, "--link", path, "--quiet"])
                #expect(relay.status == 1, "\(path): \(relay.standardError)")
                #expect(relay.standardError.contains(says), "\(path): \(relay.standardError)")
                #expect(!relay.standardError.contains("NSCocoaErrorDomain"), "\(path): \(relay.standardError)")
            }
            #expect(try String(contentsOfFile: file, encoding: .utf8) == "keep")
        }
    }

    @Test("an --http port already taken is a runtime failure (exit 1, the reason), not a usage error")
    func httpPortTaken() async throws {
        // A listening socket on a free port of 127.0.0.1.
        let taken = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(taken >= 0)
        defer { close(taken) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(taken, $0, length) == 0 && listen(taken, 1) == 0 && getsockname(taken, $0, &length) == 0
            }
        }
        #expect(bound)
        let port = String(UInt16(bigEndian: address.sin_port))
        try await inFolder { folder in
            let simulator = try SimulatorProcess()
            defer { simulator.kill() }
            for arguments in [
                ["monitor", simulator.ptyPath, "--http", port, "--seconds", "5"],
                ["serve", simulator.ptyPath, "--socket", folder + "/serve.sock", "--http", port, "--seconds", "5"],
            ] {
                let run = try await runTool("camctl", arguments)
                #expect(run.status == 1, "\(arguments): \(run.standardError)")
                #expect(
                    run.standardError.contains("--http: cannot listen on 127.0.0.1:\(port): Address already in use"), "\(run.standardError)"
                )
                #expect(!run.standardError.contains("usage"), "\(arguments): \(run.standardError)")
            }
        }
    }

    @Test("camctl ports shows a long port name whole: each line's name is one a PORT argument takes")
    func longPortNames() async throws {
        let long = "/tmp/camctl-a-port-name-longer-than-the-column"
        let run = try await runTool("camctl", ["ports"], environment: ["CAMCTL_PORTS": long])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.split(separator: "\n").contains { $0.hasPrefix(long + "  CAMCTL_PORTS") }, "\(run.standardOutput)")
    }

    @Test("camctl conformance --help, as camctl help conformance: --sim with its options, all in the usage line, one exit status")
    func conformanceHelp() async throws {
        for arguments in [["conformance", "--help"], ["help", "conformance"]] {
            let run = try await runTool("camctl", arguments)
            #expect(run.status == 0)
            #expect(run.standardOutput.contains("\n  --sim             start camctl-sim and test it"), "\(run.standardOutput)")
            // One exit-status paragraph (its own), and a usage line with every option the help explains.
            #expect(run.standardOutput.components(separatedBy: "exit status").count == 2, "\(run.standardOutput)")
            #expect(run.standardOutput.contains("3 when nothing answered on the port"), "\(run.standardOutput)")
            let usage = String(run.standardOutput.prefix { $0 != "\n" })
            let options = Set(
                run.standardOutput.split(whereSeparator: { " ,()\n".contains($0) })
                    .filter { $0.hasPrefix("--") && $0.count > 2 && $0.dropFirst(2).allSatisfy { $0.isLetter || $0 == "-" } }
                    .map(String.init)
            ).subtracting(["--help", "--break"])
            #expect(options.count >= 11, "\(options.sorted())")
            for option in options.sorted() { #expect(usage.contains(option), "\(option) not in \(usage)") }
        }
    }

    @Test(
        "numbers out of range and arguments that go unused are usage errors (exit 2), before anything runs",
        arguments: [
            (["monitor", "/dev/null", "--seconds", "0"], "--seconds wants at least 1, not 0"),
            (["record", "/dev/null", "-o", "/nonexistent-camctl/x.pcapng", "--seconds", "-1"], "--seconds wants at least 1, not -1"),
            (["serve", "/dev/null", "--seconds", "0"], "--seconds wants at least 1, not 0"),
            (["relay", "pty", "/dev/null", "--seconds", "-2"], "--seconds wants at least 1, not -2"),
            (["test", "x.scenario", "--settle-ms", "99999999999999999"], "--settle-ms wants 0…600000, not 99999999999999999"),
            (["test", "x.scenario", "--seed", "-1"], "--seed wants 0 or more, not -1"),
            (["demo", "--seed", "-1"], "--seed wants 0 or more, not -1"),
            (["test", "--replay", "x.pcapng", "--port", "/dev/null"], "--replay takes no --port"),
            (["test", "--replay", "trace.csv", "--junit", "out.xml"], "--junit needs a recording to compare with"),
            (["conformance", "--sim", "/dev/null", "--case", "handshake"], "--sim takes no PORT"),
            (["conformance", "--sim", "--decision", "nope"], "no decision 'nope' (decisions: R1, R2"),
            (["monitor", "/dev/null", "--json", "--http", "0"], "--json and --http exclude each other"),
            (["describe", "ConfigService/Nope"], "no method 'Nope' in ConfigService (its methods: "),
            (["describe", "ConfigService/GetConfg"], "no method 'GetConfg' in ConfigService; did you mean 'ConfigService/GetConfig'?"),
        ])
    func numbersOutOfRange(arguments: [String], says: String) async throws {
        let run = try await runTool("camctl", arguments)
        #expect(run.status == 2, "\(arguments): \(run.standardError)")
        #expect(run.standardError.contains(says), "\(arguments): \(run.standardError)")
    }

    @Test("a simulator that refuses its arguments: camctl says it ended, after its own message, at once")
    func simulatorRefusesItsArguments() async throws {
        let run = try await runTool("camctl", ["conformance", "--sim", "--sim-arg", "--break=no-such-rule", "--case", "handshake"])
        #expect(run.status == 1, "\(run.standardError)")
        #expect(run.standardError.contains("camctl-sim: no rule breaker named no-such-rule"), "\(run.standardError)")
        #expect(run.standardError.contains("camctl-sim ended (exit status 2) before printing its pty path"), "\(run.standardError)")
    }

    @Test("test --replay of a trace spanning days is refused at once, not played for hours; a minute's is played")
    func replaySpan() async throws {
        try await inFolder { folder in
            let days = folder + "/days.csv"
            try BoundedFiles.write(Array("0,0,0.5,0\n9000000000000,0,0.5,0\n".utf8), to: days)
            let refused = try await runTool("camctl", ["test", "--replay", days])
            #expect(refused.status == 1, "\(refused.standardError)")
            #expect(
                refused.standardError.contains("the samples span 9000000 s of device time; a replay plays at most 3600 s"),
                "\(refused.standardError)")
            let minute = folder + "/minute.csv"
            try BoundedFiles.write(Array("0,0,0.5,0\n60000000,0,0.5,0\n".utf8), to: minute)
            let played = try await runTool("camctl", ["test", "--replay", minute])
            #expect(played.status == 0, "\(played.standardError)")
            #expect(played.standardOutput.contains("2 samples replayed"), "\(played.standardOutput)")
        }
    }

    @Test("a scenario too long for one RunScenario: the file, its size and the device's bound, and what to do")
    func scenarioTooLongForOneFrame() async throws {
        try await inFolder { folder in
            let long = folder + "/long.scenario"
            let text = String(repeating: "light-press hold=120ms\npause 80ms\n", count: 60)
            try BoundedFiles.write(Array(text.utf8), to: long)
            let check = try await runTool("camctl", ["scenario", "--check", long])
            #expect(check.status == 0, "\(check.standardError)")  // within the steps' limit: only too long for a frame
            let simulator = try SimulatorProcess()
            defer { simulator.kill() }
            let run = try await runTool("camctl", ["scenario", simulator.ptyPath, long])
            #expect(run.status == 1, "\(run.standardError)")
            #expect(run.standardError.contains("\(long): its steps are"), "\(run.standardError)")
            #expect(run.standardError.contains("more than one RunScenario takes on this device (1024-byte frames)"), "\(run.standardError)")
            // It names only what plays it: demo sends pieces; test --port needs one piece for its expectations.
            #expect(run.standardError.contains("camctl demo --port PORT --scenario \(long)`"), "\(run.standardError)")
            #expect(!run.standardError.contains("test --port"), "\(run.standardError)")
            #expect(!run.standardError.contains("RESOURCE_EXHAUSTED"), "\(run.standardError)")
        }
    }

    @Test("a 50 MB scenario file, or one of too many steps, is refused while reading")
    func scenarioBounds() async throws {
        try await inFolder { folder in
            let huge = folder + "/huge.scenario"
            try zeros(huge, size: 50_000_000)
            let run = try await runTool("camctl", ["scenario", "--check", huge])
            #expect(run.status == 1)
            #expect(run.standardError.contains("not read further"), "\(run.standardError)")
            let long = folder + "/long.scenario"
            try BoundedFiles.write(Array(String(repeating: "# a comment\nhold 1ms\n", count: 200).utf8), to: long)
            let steps = try await runTool("camctl", ["scenario", "--check", long])
            #expect(steps.status == 1)
            #expect(steps.standardError.contains("long.scenario:258: too many steps (at most 128)"), "\(steps.standardError)")
        }
    }

    @Test("test and scenario --check on a FIFO: refused at once (exit 1, one line), not read like cat while nothing writes")
    func scenarioFIFORefused() async throws {
        try await inFolder { folder in
            let fifo = folder + "/steps.scenario"
            #expect(mkfifo(fifo, 0o600) == 0)
            // Nobody opens the other end: opening it to read would block until somebody did (runTool's timeout).
            for arguments in [["test", fifo], ["scenario", "--check", fifo]] {
                let run = try await runTool("camctl", arguments)
                #expect(run.status == 1, "\(arguments): \(run.status) \(run.standardError)")
                #expect(
                    run.standardError.contains("\(fifo) is a FIFO (named pipe), not a scenario file"), "\(arguments): \(run.standardError)")
                #expect(run.standardError.contains("give - and connect it to stdin"), "\(run.standardError)")
            }
        }
    }

    @Test("call … - with more JSON than any message is refused before it is parsed: bad JSON, exit 2 as on the command line")
    func callJSONBound() async throws {
        try await inFolder { folder in
            let path = folder + "/big.json"
            let text = #"{"scenario": ""# + String(repeating: #"a\n"#, count: 400_000) + #""}"#
            try BoundedFiles.write(Array(text.utf8), to: path)
            let input = try #require(FileHandle(forReadingAtPath: path))
            let run = try await runTool("camctl", ["call", "/nonexistent", "RunScenario", "-"], standardInput: input)
            #expect(run.status == 2)
            #expect(run.standardError.contains("stdin is larger than 1024 KiB"), "\(run.standardError)")
        }
    }
}

extension OverRealPTY {
    /// A device that answers the handshake and then only sends heartbeats (alive, but answering no call),
    /// on a pty camctl opens.
    @Suite("camctl and a device that goes quiet after the handshake")
    struct QuietAfterHandshake {
        /// When the device first answered a handshake, shared with the fake device's responder.
        final class FirstAnswer: Sendable {
            let at = Mutex<ContinuousClock.Instant?>(nil)
        }

        /// Runs `body` with the path of a device that sends heartbeats and answers handshakes, all of
        /// them, or with `firstSessionOnly` only those in the second after its first answer (a repeated
        /// handshake request is answered again, however the host treats the first answer), and nothing else.
        private func withQuietDevice(firstSessionOnly: Bool = false, _ body: (String) async throws -> Void) async throws {
            try await withSoleReaderPTY { pair, path in
                let version = ProtocolVersion(major: 1, minor: 1)
                let response = HandshakeResponse(
                    deviceVersion: version, negotiatedVersion: version, identity: DeviceIdentity(model: "quiet"),
                    capabilities: Capabilities(maxFrameBytes: 1024, maxConcurrentCalls: 4, heartbeatIntervalMillis: 50))
                let first = FirstAnswer()
                let device = FakeDevice(transport: pair.master) { packet in
                    guard packet.type == .request, packet.address == .deviceHandshake else { return [] }
                    let now = ContinuousClock.now
                    let answeredFirst = first.at.withLock { at in
                        if at == nil { at = now }
                        return at!
                    }
                    if firstSessionOnly, now - answeredFirst > .seconds(1) { return [] }
                    return [Packet(type: .response, isReliable: true, callID: packet.callID, payload: response.serializedBytes())]
                }
                await device.start()
                // Alive, but answering nothing: a heartbeat every 50 ms keeps the link from being declared dead.
                let heartbeats = Task {
                    while !Task.isCancelled {
                        await device.send([Packet(type: .heartbeat, callID: 0)])
                        try? await Task.sleep(for: .milliseconds(50))
                    }
                }
                defer { heartbeats.cancel() }
                try await body(path)
            }
        }

        /// The first session's handshakes are answered, nothing after them (the clock sync's pings, the
        /// reconnect's handshakes). Depending on how far the host got when the device went quiet, the
        /// monitor has a session (the deadline stops it: exit 0) or is still connecting (it ends once the
        /// first handshake's own time, CommandDeadline.handshakeTime, has passed too: exit 3). Either way
        /// it ends; before, a monitor still connecting never started counting and never ended.
        @Test("monitor --seconds 3 counts from the start: a device quiet after its first session's handshake ends it")
        func monitorSecondsFromStart() async throws {
            try await withQuietDevice(firstSessionOnly: true) { path in
                let run = try await runTool("camctl", ["monitor", path, "--seconds", "3", "--plain"], timeout: .seconds(60))
                #expect(run.status == 0 || run.status == 3, "\(run.standardOutput)\n\(run.standardError)")
                if run.status == 3 {
                    #expect(run.standardError.contains("has not finished connecting"), "\(run.standardError)")
                }
                #expect(!run.standardError.contains("wrong baud") && !run.standardError.contains("115200"), "\(run.standardError)")
            }
        }

        /// The device never answers the first session's clock pings: the deadline ends the monitor while its
        /// first connect waits for them (exit 0), or, when the machine is slow enough for that wait to run out
        /// first, the connect fails with the hint that fits (exit 3). Either way it ends, and says why.
        @Test("monitor --seconds 3 against a device that answers every handshake and nothing else: it ends")
        func monitorSecondsWhileReconnecting() async throws {
            try await withQuietDevice { path in
                let run = try await runTool("camctl", ["monitor", path, "--seconds", "3", "--plain"], timeout: .seconds(60))
                #expect(run.status == 0 || run.status == 3, "\(run.standardError)")
                if run.status == 3 {
                    #expect(run.standardError.contains("answered the handshake, then went quiet"), "\(run.standardError)")
                }
            }
        }

        @Test("a call unanswered after a good handshake: exit 3, and no wrong-baud-rate hint")
        func unansweredCallHint() async throws {
            try await withQuietDevice { path in
                let run = try await runTool("camctl", ["call", path, "Ping", "{}"], timeout: .seconds(60))
                #expect(run.status == 3, "\(run.standardError)")
                #expect(!run.standardError.contains("wrong baud") && !run.standardError.contains("115200"), "\(run.standardError)")
                #expect(run.standardError.contains("answered the handshake"), "\(run.standardError)")
            }
        }
    }
}
