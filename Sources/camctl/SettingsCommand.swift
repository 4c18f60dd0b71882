import CameraControlDevice
import CameraControlRPC
import CameraControlWire

/// `camctl settings`: reads and changes the device's user settings (v1.2; docs/CONTROLS.md, "Settings").
enum SettingsCommand {
    static let command = Command(
        name: "settings", summary: "read or change the device's Camera Control settings (kept across its reset)",
        usage: "PORT [NAME=VALUE]... [--json]",
        details: """
            With no NAME=VALUE, prints the settings; with some, changes those (the others stay) and prints the result.
              light-press-force=lighter|default|firmer       how hard a light press must be
              double-light-press-speed=default|slower|slowest how long the second press of a double may wait
              camera-control=on|off                           off: the Camera Control sends nothing
              camera-adjustments=on|off                       off: no overlay, no slider; the full click still captures
              --json    the SettingsResponse in protobuf's JSON mapping, every field printed
            A device older than protocol 1.2 has no settings: exit 1 with "UNIMPLEMENTED".
            """,
        examples: [
            "settings /dev/ttyACM0", "settings auto light-press-force=firmer camera-adjustments=off",
            "settings SIM-00000001 --json",
        ], run: run)

    /// The settings `pairs` (`NAME=VALUE`) ask for; throws a usage error naming what is wrong.
    static func parse(_ pairs: [String]) throws(Arguments.Failure) -> Settings {
        var settings = Settings()
        for pair in pairs {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else {
                throw Arguments.Failure(description: "\(pair): expected NAME=VALUE (e.g. light-press-force=firmer)")
            }
            let name = parts[0].replacingOccurrences(of: "_", with: "-").lowercased()
            let value = parts[1].lowercased()
            func pick<E: CaseIterable & CustomStringConvertible>(_: E.Type) throws(Arguments.Failure) -> E {
                let known = E.allCases.filter { $0.description != "unspecified" }
                guard let found = known.first(where: { $0.description == value }) else {
                    throw Arguments.Failure(
                        description: "\(name)=\(parts[1]): expected one of \(known.map(\.description).joined(separator: ", "))")
                }
                return found
            }
            switch name {
            case "light-press-force": settings.lightPressForce = try pick(LightPressForce.self)
            case "double-light-press-speed": settings.doubleLightPressSpeed = try pick(DoubleLightPressSpeed.self)
            case "camera-control": settings.cameraControl = try pick(SettingSwitch.self)
            case "camera-adjustments": settings.cameraAdjustments = try pick(SettingSwitch.self)
            default:
                throw Arguments.Failure(
                    description:
                        "unknown setting \(parts[0]) (light-press-force, double-light-press-speed, camera-control, camera-adjustments)")
            }
        }
        return settings
    }

    /// The settings in words, one per line.
    static func describe(_ response: SettingsResponse) -> String {
        let s = response.settings ?? Settings()
        let force: String
        switch s.lightPressForce {
        case .lighter: force = "lighter   (light press on at 600 mN, off at 400 mN)"
        case .default: force = "default   (light press on at 800 mN, off at 500 mN)"
        case .firmer: force = "firmer    (light press on at 1100 mN, off at 700 mN)"
        case .unspecified: force = "unspecified"
        }
        let speed: String
        switch s.doubleLightPressSpeed {
        case .default: speed = "default   (300 ms)"
        case .slower: speed = "slower    (450 ms)"
        case .slowest: speed = "slowest   (600 ms)"
        case .unspecified: speed = "unspecified"
        }
        let origin: String
        switch response.origin {
        case .loaded: origin = "loaded from the device's store"
        case .recovered: origin = "recovered: a damaged copy was skipped, the other one used"
        case .empty: origin = "nothing stored yet: the defaults"
        case .corrupt: origin = "every stored copy was damaged: the defaults"
        case .volatile: origin = "not kept across a reset of this device (no store)"
        case .unspecified: origin = "unspecified"
        }
        return """
            light-press-force         \(force)
            double-light-press-speed  \(speed)
            camera-control            \(s.cameraControl)
            camera-adjustments        \(s.cameraAdjustments)
            at boot                   \(origin); \(response.writes) written since
            """
    }

    static func run(_ argv: [String]) async throws {
        let args = try Arguments(argv, valued: [], switches: ["json"], positionals: ["PORT", "NAME=VALUE"], variadic: true)
        let port = try args.required(0, "PORT")
        let change = try parse(Array(args.positional.dropFirst()))
        let session = try await Ports.open(port)
        let response: SettingsResponse
        do {
            response = change == Settings() ? try await session.settings() : try await session.setSettings(change)
        } catch {
            await session.close()
            if error.code == .unimplemented {
                throw CLIFailure(
                    status: .failure, message: "the device has no settings (UNIMPLEMENTED): it speaks protocol 1.1 or older",
                    hint: "`camctl info \(port)` shows has_settings")
            }
            throw error
        }
        await session.close()
        print(args.flag("json") ? response.jsonText(includingDefaults: true) : describe(response))
    }
}
