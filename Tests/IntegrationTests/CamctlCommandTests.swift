import CameraControlDevice
import CameraControlPorts
import CameraControlPosixTransport
import CameraControlTestSupport
import CameraControlWire
import Foundation
import Testing

/// camctl's commands as a user runs them, against `camctl-sim` over a real pty: describe and call (every
/// unary method, Configure included), PORT as `auto` and a serial number, ports --probe, --json output,
/// the exit statuses, and scenario files checked offline.
extension OverRealPTY {
    @Suite("camctl commands")
    struct CamctlCommands {
        static let scenarios = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Firmware-sim/scenarios")

        /// Each line of `text` as a JSON object.
        private func jsonLines(_ text: String) throws -> [JSONValue] {
            try text.split(separator: "\n").map { line in
                let value = try JSONValue(parsing: String(line))
                guard case .object = value else { throw ChildProcessFailure(description: "not an object: \(line)") }
                return value
            }
        }

        @Test("describe lists every method of the schema, offline, as text and as JSON")
        func describeListsTheSchema() async throws {
            let text = try await runTool("camctl", ["describe"])
            #expect(text.status == 0, "\(text.standardError)")
            for method in MethodInfo.allV1 {
                #expect(text.standardOutput.contains("rpc \(method.methodName)("), "\(method.name) missing")
            }
            #expect(text.standardOutput.contains("lightPressOnMn: uint32 = 1"))
            let json = try await runTool("camctl", ["describe", "--json"])
            let lines = try jsonLines(json.standardOutput)
            #expect(lines.compactMap { $0["method"] } == MethodInfo.allV1.map { .string($0.name) })
        }

        @Test("call reaches every unary method with protobuf JSON, Configure included; bad input exits 2")
        func callEveryUnaryMethod() async throws {
            try await withSimulator(seed: 71) { simulator in
                let port = simulator.ptyPath
                // Requests the device accepts; `{}` for the others.
                let requests: [MethodID: String] = [
                    .deviceHandshake: #"{"hostVersion": {"major": 1}, "hostName": "camctl test"}"#,
                    .feedbackPlayHaptic: #"{"pattern": "HAPTIC_PATTERN_CLICK", "intensityPercent": 50}"#,
                    .feedbackPlaySound: #"{"sound": "SOUND_SHUTTER"}"#,
                    .simulatorRunScenario: #"{"scenario": "pause 10ms\n"}"#,
                ]
                for method in MethodInfo.allV1 where !method.isServerStreaming && method.id != .configConfigure {
                    let run = try await runTool("camctl", ["call", port, method.name, requests[method.id] ?? "{}", "--json"])
                    #expect(run.status == 0, "\(method.name): \(run.standardError)")
                    let type = try #require(method.responseType as? any ProtoJSONMessage.Type)
                    #expect(throws: Never.self, "\(method.name): \(run.standardOutput)") {
                        _ = try type.init(jsonText: run.standardOutput)
                    }
                }
                // Configure: read, change one field, send back, read again.
                let read = try await runTool("camctl", ["call", port, "ConfigService/GetConfig", "--json"])
                var config = try Config(jsonText: read.standardOutput)
                config.slideIntervalMillis += 7
                let request = ConfigureRequest(config: config).jsonText()
                let configure = try await runTool("camctl", ["call", port, "ConfigService/Configure", request])
                #expect(configure.status == 0, "\(configure.standardError)")
                #expect(try Config(jsonText: configure.standardOutput) == config)
                let again = try await runTool("camctl", ["call", port, "GetConfig", "--json"])
                #expect(try Config(jsonText: again.standardOutput) == config)
                // A scenario through RunScenario.
                let scenario = try await runTool("camctl", ["call", port, "RunScenario", #"{"scenario": "full-click\n"}"#, "--json"])
                #expect(try RunScenarioResponse(jsonText: scenario.standardOutput).steps == 1)
                // Shorthand pairs.
                let haptic = try await runTool("camctl", ["call", port, "PlayHaptic", "pattern=detent"])
                #expect(haptic.status == 0, "\(haptic.standardError)")
                // A misspelt field, bad JSON, an unknown method: usage errors with what to fix.
                let misspelt = try await runTool(
                    "camctl", ["call", port, "FeedbackService/PlayHaptic", #"{"patern": "HAPTIC_PATTERN_DETENT"}"#])
                #expect(misspelt.status == 2)
                #expect(misspelt.standardError.contains("did you mean 'pattern'?"), "\(misspelt.standardError)")
                let badJSON = try await runTool("camctl", ["call", port, "PlayHaptic", #"{"pattern": }"#])
                #expect(badJSON.status == 2)
                #expect(badJSON.standardError.contains("bad JSON at line 1, column 13"), "\(badJSON.standardError)")
                let stream = try await runTool("camctl", ["call", port, "StreamInputEvents"])
                #expect(stream.status == 2)
                #expect(stream.standardError.contains("camctl monitor"))
                // The device refusing a value is a runtime failure.
                let refused = try await runTool("camctl", ["call", port, "Configure", #"{"config": {}}"#])
                #expect(refused.status == 1)
                #expect(refused.standardError.contains("INVALID_ARGUMENT"))
            }
        }

        @Test("PORT can be auto or a serial number; ports --probe shows who answers; a name that is no port exits 1, a silent device 3")
        func portsAutoAndSerialNumbers() async throws {
            try await withSimulator(seed: 72) { simulator in
                let environment = ["CAMCTL_PORTS": simulator.ptyPath]
                let auto = try await runTool("camctl", ["info", "auto", "--json"], environment: environment)
                #expect(auto.status == 0, "\(auto.standardError)")
                let info = try JSONValue(parsing: auto.standardOutput)
                #expect(info["identity"]?["serialNumber"] == .string("SIM-00000048"))  // the seed in hex
                let bySerial = try await runTool("camctl", ["ping", "SIM-00000048", "--count", "2", "--json"], environment: environment)
                #expect(bySerial.status == 0, "\(bySerial.standardError)")
                let pings = try jsonLines(bySerial.standardOutput)
                #expect(pings.map { $0["type"] } == [.string("ping"), .string("ping"), .string("summary")])
                // The summary's members as README's JSON table and `camctl help ping` name them.
                #expect(pings.last?["sent"] == .integer(2))
                #expect(pings.last?["received"] == .integer(2))
                #expect(pings.last?["lost"] == .integer(0))
                #expect(pings.last?["medianMs"] != nil)
                let probe = try await runTool("camctl", ["ports", "--probe", "--json"], environment: environment)
                let ports = try jsonLines(probe.standardOutput)
                let ours = try #require(ports.first { $0["port"] == .string(simulator.ptyPath) })
                #expect(ours["probe"]?["answered"] == .bool(true))
                #expect(ours["probe"]?["serialNumber"] == .string("SIM-00000048"))
                // A name that is no port (no device has that serial number, nothing under /dev has that name) is
                // a port not found: exit 1, whether it looks like a serial number or a bare device name.
                for name in ["SIM-99999999", "ttyNOSUCH9"] {
                    let unknown = try await runTool("camctl", ["info", name], environment: environment)
                    #expect(unknown.status == 1, "\(unknown.standardError)")
                    #expect(unknown.standardError.contains("no port '\(name)': not a path, not /dev/\(name)"), "\(unknown.standardError)")
                }
                let counters = try await runTool("camctl", ["counters", simulator.ptyPath, "--json"])
                #expect(try Counters(jsonText: counters.standardOutput).framesReceived > 0)
                // A busy port names who holds it.
                let holder = try await DeviceSession.open(path: simulator.ptyPath)
                let busy = try await runTool("camctl", ["info", simulator.ptyPath])
                await holder.close()
                #expect(busy.status == 1)
                #expect(busy.standardError.contains("in use"), "\(busy.standardError)")
                #expect(busy.standardError.contains("hint: process \(getpid())"), "\(busy.standardError)")
                // A device that does not answer (stopped): exit status 3 with a hint.
                simulator.send(signal: SIGSTOP)
                defer { simulator.send(signal: SIGCONT) }
                let silent = try await runTool("camctl", ["info", simulator.ptyPath])
                #expect(silent.status == 3, "\(silent.standardError)")
                #expect(silent.standardError.contains("hint: "))
                #expect(silent.standardError.contains("115200"))
            }
        }

        @Test("a port that sends bytes but no frames: info and monitor exit 3 and suggest the baud rate")
        func noisyPortHintsAtTheBaudRate() async throws {
            try await withSoleReaderPTY { pair, path in
                // Line noise, as a board at another baud rate sends: bytes, but never a frame (no delimiter).
                let noise = Task {
                    while !Task.isCancelled {
                        try? await pair.master.send([UInt8](repeating: 0x55, count: 32))
                        try? await Task.sleep(for: .milliseconds(10))
                    }
                }
                let drain = Task {
                    while !Task.isCancelled {
                        guard (try? await pair.master.receive()) != nil else { return }
                    }
                }
                defer {
                    noise.cancel()
                    drain.cancel()
                }
                for command in [["info", path], ["monitor", path, "--seconds", "1", "--no-reconnect"]] {
                    let run = try await runTool("camctl", command, timeout: .seconds(60))
                    #expect(run.status == 3, "\(command[0]): \(run.standardError)")
                    #expect(run.standardError.contains("bytes came back, but no frame"), "\(command[0]): \(run.standardError)")
                    #expect(run.standardError.contains("the wrong baud rate?"), "\(command[0])")
                }
            }
        }

        @Test("monitor --json prints one event object per line, the example app's too: overlay, AE/AF lock, photo")
        func monitorJSON() async throws {
            try await withSimulator(seed: 73) { simulator in
                // A light press held past 400 ms (the overlay shows, AE/AF locks), then the full press shoots.
                let file = Self.scenarios.appendingPathComponent("ae-af-lock.scenario").path
                let run = try await runTool("camctl", ["monitor", simulator.ptyPath, "--scenario", file, "--json"])
                #expect(run.status == 0, "\(run.standardError)")
                let events = try jsonLines(run.standardOutput)
                #expect(events.first?["type"] == .string("connected"))
                // It stopped itself after the scenario: that is no "device lost" (one in the middle, with a
                // new session after it, is a real link drop on a starved machine).
                let last = try #require(events.last)
                #expect(last["text"].map { $0.description.contains("device lost") } != true, "\(run.standardOutput.suffix(600))")
                #expect(events.contains { $0["type"] == .string("gesture") && $0["kind"] == .string("press-ended") })
                #expect(
                    events.contains {
                        $0["type"] == .string("capture") && $0["phase"] == .string("ended") && $0["captured"] == .bool(true)
                    })
                // What the example app adds (a monitor with a bare capture interaction printed none of it).
                #expect(events.contains { $0["type"] == .string("overlay") }, "\(run.standardOutput.suffix(1200))")
                #expect(
                    events.contains { $0["type"] == .string("lock") && $0["event"]?.description.contains("locked AE/AF") == true },
                    "\(run.standardOutput.suffix(1200))")
                #expect(
                    events.contains { $0["type"] == .string("photo") && $0["focusExposureLock"] == .string("AE/AF") },
                    "\(run.standardOutput.suffix(1200))")
            }
        }

        @Test("scenario --check works offline: the scenarios pass, errors name FILE:LINE:COLUMN and the token")
        func scenarioCheck() async throws {
            let files = try FileManager.default.contentsOfDirectory(atPath: Self.scenarios.path).filter { $0.hasSuffix(".scenario") }
                .map { Self.scenarios.appendingPathComponent($0).path }
            let good = try await runTool("camctl", ["scenario", "--check"] + files)
            #expect(good.status == 0, "\(good.standardError)")
            #expect(good.standardOutput.split(separator: "\n").count == files.count)

            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let bad = folder + "/bad.scenario"
            try "# a comment\n\nfull-click\nlite-press force=2N\n".write(toFile: bad, atomically: true, encoding: .utf8)
            let check = try await runTool("camctl", ["scenario", "--check", bad])
            #expect(check.status == 1)
            #expect(check.standardError.contains("\(bad):4:1: unknown step, found 'lite-press'"), "\(check.standardError)")
            #expect(check.standardError.contains("did you mean 'light-press'?"))
            let json = try await runTool("camctl", ["scenario", "--check", bad, "--json"])
            let result = try JSONValue(parsing: json.standardOutput)
            #expect(result["line"] == .number("4") && result["column"] == .number("1") && result["token"] == .string("lite-press"))
            // demo --scenario reports the file's own line (comments count), before starting anything.
            let demo = try await runTool("camctl", ["demo", "--scenario", bad])
            #expect(demo.status == 1)
            #expect(demo.standardError.contains("\(bad):4:1: unknown step"), "\(demo.standardError)")
            // A missing file is a plain message.
            let missing = try await runTool("camctl", ["scenario", "--check", folder + "/nope.scenario"])
            #expect(missing.status == 1)
            #expect(missing.standardError.contains("no such scenario file"))
            #expect(!missing.standardError.contains("NSCocoaErrorDomain"))
            // The working folder is named for a relative path only: an absolute one does not depend on it.
            #expect(missing.standardError.contains("hint: check the path\n"), "\(missing.standardError)")
            #expect(!missing.standardError.contains("relative to"), "\(missing.standardError)")
            let relative = try await runTool("camctl", ["test", "camctl-no-such-folder/nope.scenario"])
            #expect(relative.status == 1)
            #expect(
                relative.standardError.contains("hint: check the path (relative to \(FileManager.default.currentDirectoryPath))"),
                "\(relative.standardError)")
        }
    }
}
