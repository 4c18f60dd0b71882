import CameraControlEmbedded
import CameraControlWire
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The scenario format (docs/SIMULATOR.md): errors with line numbers, RunScenario over the link,
/// robustness against any input.
@Suite("Scenarios")
struct ScenarioTests {
    static let errors: [(text: String, line: Int, contains: String)] = [
        ("jump", 1, "unknown step"),
        ("# comment\n\nlight-press force=abc", 3, "force"),
        ("light-press hold=20parsecs", 1, "unit"),
        ("light-press colour=red", 1, "unknown parameter"),
        ("light-press force=1N force=2N", 1, "twice"),
        ("slide from=0.2 over=100ms", 1, "to="),
        ("slide to=1.5", 1, "0..1"),
        ("hold", 1, "missing duration"),
        ("pause 100ms\nbutton shutter", 2, "unknown button"),
        ("full-click force=25N", 1, "20000"),
        ("hold 700s", 1, "600s"),
        ("seed 1\nseed 2", 2, "twice"),
        ("seed -3", 1, "number"),
        ("touch\u{0007}", 1, "character"),
        ("remote-click count=0", 1, "count"),
        ("noise maybe", 1, "on or off"),
        ("light-press\n" + String(repeating: "x", count: 300), 2, "too long"),
        (String(repeating: "pause 1ms\n", count: 128) + "pause 1ms", 129, "too many steps"),
    ]

    @Test("parse errors name the line", arguments: errors)
    func parseErrors(text: String, line: Int, contains: String) {
        let device = EmbeddedDevice(seed: 1)
        #expect {
            try device.play(scenario: text)
        } throws: { error in
            guard let error = error as? ScenarioError else { return false }
            return error.line == line && error.message.hasPrefix("line \(line): ")
                && error.message.contains(contains)
        }
        #expect(!device.isScenarioRunning)
    }

    @Test("comments, blank lines, CRLF and units parse")
    func accepted() throws {
        let device = EmbeddedDevice(seed: 1)
        try device.play(scenario: "# a comment\r\n\r\nseed 42\r\nlight-press force=1.2N hold=0.2s # trailing\r\n  pause 500us\n")
        #expect(device.isScenarioRunning)
        // land 15 ms + rise 50 + hold 200 + fall 40 + lift 10 + off 10, then 0.5 ms
        #expect(device.scenarioDurationMicros == 325_500)
    }

    @Test("random input never crashes the parser")
    func fuzz() {
        let device = EmbeddedDevice(seed: 1)
        let words = [
            "light-press", "full-click", "slide", "from=", "to=0.5", "force=", "hold", "1200mN",
            "ms", "=", "#", "\n", " ", "0.", ".5", "99999999999999", "button", "volume-up",
            "seed", "noise", "on", "\t", "\r", "\u{0}", "é", "==",
        ]
        var state: UInt64 = 0x1234_5678
        func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
        var accepted = 0
        for _ in 0..<3000 {
            var text = ""
            for _ in 0..<(next() % 20) {
                if next() % 4 == 0 {
                    text.unicodeScalars.append(Unicode.Scalar(UInt8(truncatingIfNeeded: next())))
                } else {
                    text += words[Int(next() % UInt64(words.count))]
                }
            }
            do {
                try device.play(scenario: text)
                accepted += 1
            } catch {
                #expect(error.line >= 1)
                #expect(error.message.hasPrefix("line \(error.line): "))
            }
        }
        #expect(accepted > 0)
    }

    @Test("RunScenario over the link: steps, duration, then the events")
    func runScenarioRPC() throws {
        var host = HostHarness(seed: 1)
        try host.connect()
        let reply = try host.call(.simulatorRunScenario, RunScenarioRequest(scenario: "full-click\npause 100ms"))
        #expect(reply.type == .response)
        let response = try RunScenarioResponse(serializedBytes: reply.payload)
        #expect(response.steps == 2)
        // land 15 + rise 50 + hold 80 + fall 40 + lift 10 + off 10 + pause 100 (ms)
        #expect(response.durationMicros == 305_000)
        let status = try host.call(.simulatorGetSimulatorStatus, GetSimulatorStatusRequest())
        let running = try SimulatorStatus(serializedBytes: status.payload)
        #expect(running.isScenarioRunning)
        try host.run(millis: 400)
        #expect(host.events(.fullPressDown).count == 1)
        let after = try SimulatorStatus(
            serializedBytes: try host.call(
                .simulatorGetSimulatorStatus,
                GetSimulatorStatusRequest()
            ).payload)
        #expect(!after.isScenarioRunning)
        #expect(after.deviceTimeMicros == host.device.nowMicros)
    }

    @Test("RunScenario with a bad scenario answers INVALID_ARGUMENT with the line")
    func runScenarioError() throws {
        var host = HostHarness(seed: 1)
        try host.connect()
        let reply = try host.call(.simulatorRunScenario, RunScenarioRequest(scenario: "pause 10ms\nwobble"))
        #expect(reply.type == .error)
        #expect(reply.status == .invalidArgument)
        #expect(reply.statusMessage == "line 2: unknown step")
        #expect(reply.statusMessage?.hasPrefix("line 2:") == true)
    }

    /// Firmware-sim/scenarios, found from this file's path.
    static func exampleScenarios() -> [String] {
        let testsDir = String(#filePath).split(separator: "/").dropLast(3).joined(separator: "/")
        let dir = "/" + testsDir + "/Firmware-sim/scenarios"
        guard let handle = opendir(dir) else { return [] }
        defer { closedir(handle) }
        var paths: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasSuffix(".scenario") { paths.append(dir + "/" + name) }
        }
        return paths.sorted()
    }

    static func contents(of path: String) -> String? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("every example scenario parses and plays")
    func examples() throws {
        let paths = Self.exampleScenarios()
        #expect(paths.count >= 5)
        for path in paths {
            let text = try #require(Self.contents(of: path))
            var host = HostHarness(seed: 1)
            try host.connect()
            try host.play(text)
            #expect(!host.events.isEmpty, "\(path)")
            #expect(host.device.counters.inputQueueOverflows == 0)
        }
    }
}
