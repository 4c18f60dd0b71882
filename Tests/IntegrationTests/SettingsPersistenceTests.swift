import CameraControlHost
import CameraControlPorts
import CameraControlTestSupport
import CameraControlWire
import Foundation
import Testing

/// `camctl settings` against `camctl-sim --settings FILE`: the settings survive a restart of the simulator
/// (its reset), a damaged file boots with the defaults and says so (docs/CONTROLS.md, "Settings").
@Suite("Settings survive a reset of camctl-sim")
struct SettingsPersistenceTests {
    /// A fresh folder for one test's settings file (no two tests share one).
    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("camctl-settings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func read(_ port: String) async throws -> SettingsResponse {
        let run = try await runTool("camctl", ["settings", port, "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        return try SettingsResponse(jsonText: run.standardOutput)
    }

    @Test("set with camctl settings, restart camctl-sim on the same file, read them back")
    func surviveRestart() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("settings.bin").path
        let expected = Settings(lightPressForce: .firmer, doubleLightPressSpeed: .default, cameraControl: .on, cameraAdjustments: .off)
        try await withSimulator(seed: 81, extraArguments: ["--settings", file]) { simulator in
            #expect(try await Self.read(simulator.ptyPath).origin == .empty)
            let set = try await runTool(
                "camctl", ["settings", simulator.ptyPath, "light-press-force=firmer", "camera-adjustments=off"])
            #expect(set.status == 0, "\(set.standardError)")
            #expect(set.standardOutput.contains("firmer"), "\(set.standardOutput)")
        }
        try await withSimulator(seed: 81, extraArguments: ["--settings", file]) { simulator in
            let read = try await Self.read(simulator.ptyPath)
            #expect(read.settings == expected)
            #expect(read.origin == .loaded)
            let config = try await runTool("camctl", ["call", simulator.ptyPath, "GetConfig", "--json"])
            #expect(try Config(jsonText: config.standardOutput).thresholds?.lightPressOnMillinewtons == 1100)
        }
        // Without --settings every run starts empty: nothing leaks between simulators.
        try await withSimulator(seed: 81) { simulator in
            let read = try await Self.read(simulator.ptyPath)
            #expect(read.origin == .empty)
            #expect(read.settings?.lightPressForce == .default)
        }
    }

    @Test("CameraControlHost.setSettings stores them on the device; a host connecting after its restart adopts them")
    func hostAdoptsTheDevicesSettings() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("settings.bin").path
        let chosen = CameraControlSettings(
            lightPressForce: .lighter, doubleLightPressSpeed: .slowest, isCameraControlEnabled: true, areAdjustmentsEnabled: false)
        try await withSimulator(seed: 84, extraArguments: ["--settings", file]) {
            simulator in
            let host = try await CameraControlHost.connect(to: simulator.ptyPath)
            try await host.setSettings(chosen)
            await host.stop()
        }
        try await withSimulator(seed: 84, extraArguments: ["--settings", file]) { simulator in
            let host = try await CameraControlHost.connect(to: simulator.ptyPath)
            let adopted = await eventually(within: .seconds(10)) { await host.settings == chosen }
            let settings = await host.settings
            #expect(adopted, "the host's settings: \(settings)")
            await host.stop()
        }
    }

    @Test("a damaged settings file boots with the defaults and says so; a file too large is refused")
    func damagedFile() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("settings.bin")
        try Data(repeating: 0x5A, count: 32).write(to: file)
        try await withSimulator(seed: 82, extraArguments: ["--settings", file.path]) { simulator in
            let read = try await Self.read(simulator.ptyPath)
            #expect(read.origin == .corrupt)
            #expect(read.settings?.lightPressForce == .default)
        }
        try Data(repeating: 0, count: 33).write(to: file)
        let refused = try await runTool("camctl-sim", ["--settings", file.path])
        #expect(refused.status == 2)
        #expect(refused.standardError.contains("not a settings store"), "\(refused.standardError)")
    }

    @Test("camctl settings refuses an unknown setting or value with exit status 2")
    func badArguments() async throws {
        try await withSimulator(seed: 83) { simulator in
            for argument in ["light-press-force=hard", "sensitivity=firmer", "camera-control"] {
                let run = try await runTool("camctl", ["settings", simulator.ptyPath, argument])
                #expect(run.status == 2, "\(argument): \(run.standardError)")
            }
        }
    }
}
