import CameraControlTestSupport
import Foundation
import Testing

/// `camctl serve` over a real pty: a click launches the camera command, which gets the device (it opens
/// the port itself), a click-and-hold the hold command, and serve takes the device back in between.
extension OverRealPTY {
    @Suite("camctl serve")
    struct Serve {
        @Test("a click launches the camera command, which opens the port itself; a click-and-hold the hold command")
        func launchOnClick() async throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("camctl-serve-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            // The click 0.5 s after serve's handshake; the hold 4 s later, room for the launched command to
            // open the port, handshake, exit, and for serve to take the device back on a loaded machine.
            let scenario = folder.appendingPathComponent("serve.scenario")
            try "pause 500ms\nfull-click\npause 4000ms\nclick-and-hold 1000ms\npause 500ms\n"
                .write(to: scenario, atomically: true, encoding: .utf8)
            let log = folder.appendingPathComponent("launched.log").path
            let info = folder.appendingPathComponent("info.txt").path
            let camctl = try BuiltProducts.executable("camctl")
            try await withSimulator(seed: 91, extraArguments: ["--scenario", scenario.path]) { simulator in
                let run = try await runTool(
                    "camctl",
                    [
                        "serve", simulator.ptyPath,
                        "--launch", "'\(camctl)' info \"$CAMCTL_PORT\" > '\(info)' 2>&1; echo camera $? >> '\(log)'",
                        "--hold", "echo hold >> '\(log)'", "--seconds", "12",
                    ], timeout: .seconds(40))
                #expect(run.status == 0, "\(run.standardError)")
                let launched = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                #expect(launched == "camera 0\nhold\n", "serve said:\n\(run.standardOutput)")
                let infoText = (try? String(contentsOfFile: info, encoding: .utf8)) ?? ""
                #expect(infoText.contains("SIM-"), "the launched command had the device: \(infoText)")
                #expect(run.standardOutput.contains("taking the device back"))
            }
        }

        @Test("the systemd unit and the launchd plist in tools/ start camctl serve with arguments it accepts")
        func serviceFiles() async throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            // systemd: ExecStart with the unit's Environment= defaults, as systemd substitutes them (`${NAME}`:
            // the value as one argument).
            let unit = try String(contentsOf: root.appendingPathComponent("tools/systemd/camctl-serve.service"), encoding: .utf8)
            var environment: [String: String] = [:]
            var execStart: String?
            for line in unit.split(separator: "\n") {
                if line.hasPrefix("Environment=") {
                    var assignment = line.dropFirst("Environment=".count)
                    if assignment.hasPrefix("\""), assignment.hasSuffix("\"") {
                        assignment = assignment.dropFirst().dropLast()
                    }
                    let unquoted = assignment.replacingOccurrences(of: "\\\"", with: "\"")
                    guard let equals = unquoted.firstIndex(of: "=") else { continue }
                    environment[String(unquoted[..<equals])] = String(unquoted[unquoted.index(after: equals)...])
                } else if line.hasPrefix("ExecStart=") {
                    execStart = String(line.dropFirst("ExecStart=".count))
                }
            }
            let systemd = try #require(execStart, "the unit has an ExecStart").split(separator: " ").map { word in
                guard word.hasPrefix("${"), word.hasSuffix("}") else { return String(word) }
                return environment[String(word.dropFirst(2).dropLast())] ?? "<unset \(word)>"
            }
            #expect(systemd.prefix(3) == ["/usr/local/bin/camctl", "serve", "auto"], "\(systemd)")
            #expect(systemd.contains("/usr/local/bin/camera-app \"$CAMCTL_PORT\""), "\(systemd)")
            #expect(unit.contains("Restart=always") && unit.contains("StartLimitIntervalSec=0"))
            // launchd: ProgramArguments.
            let plist = try Data(contentsOf: root.appendingPathComponent("tools/launchd/org.cameracontrol.camctl-serve.plist"))
            let agent = try #require(try PropertyListSerialization.propertyList(from: plist, format: nil) as? [String: Any])
            let launchd = try #require(agent["ProgramArguments"] as? [String], "the plist has ProgramArguments")
            #expect(agent["KeepAlive"] as? Bool == true && agent["RunAtLoad"] as? Bool == true)
            #expect(launchd == systemd, "the two start serve alike")
            // Both command lines, with the built camctl and camctl-sim's pty for `auto`, for 2 seconds: serve
            // accepts them and holds the device.
            for arguments in [systemd, launchd] {
                try await withSimulator(seed: 92) { simulator in
                    let run = try await runTool(
                        "camctl", arguments.dropFirst().map { $0 == "auto" ? simulator.ptyPath : $0 } + ["--seconds", "2"],
                        timeout: .seconds(30))
                    #expect(run.status == 0, "\(arguments): \(run.standardError)")
                }
            }
        }

        @Test("usage errors exit 2 with what to fix: no --launch, an unknown trigger, a window out of range")
        func usageErrors() async throws {
            let missing = try await runTool("camctl", ["serve", "/dev/null"])
            #expect(missing.status == 2)
            #expect(missing.standardError.contains("--launch"), "\(missing.standardError)")
            let trigger = try await runTool("camctl", ["serve", "/dev/null", "--launch", "true", "--launch-on", "triple"])
            #expect(trigger.status == 2)
            #expect(trigger.standardError.contains("click or double-click"), "\(trigger.standardError)")
            let window = try await runTool(
                "camctl", ["serve", "/dev/null", "--launch", "true", "--launch-on", "double-click", "--double-click-ms", "5"])
            #expect(window.status == 2)
            #expect(window.standardError.contains("50 to 2000"), "\(window.standardError)")
        }
    }
}
