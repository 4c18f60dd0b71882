import CameraControlWire

/// The user's settings (v1.2, `ConfigService/GetSettings` and `SetSettings`; docs/PROTOCOL.md §7, "Settings").
///
/// Each case leaves the settings as it found them. That settings survive a reset of the device is not a
/// case (the suite cannot reset a device): `SettingsPersistenceTests` restarts `camctl-sim --settings`.
enum SettingsCases {
    /// The light-press "on" threshold of each Light-Press Force (config.proto).
    static func lightPressOn(_ force: LightPressForce) -> UInt32? {
        switch force {
        case .lighter: 600
        case .default: 800
        case .firmer: 1100
        case .unspecified: nil
        }
    }

    /// Reads the settings; fails unless the answer is a `SettingsResponse` with every field set.
    static func get(_ c: CaseContext) async throws -> SettingsResponse {
        let (sent, reply) = try await c.probe.call(.configGetSettings, GetSettingsRequest().serializedBytes())
        let packet = try c.expect(reply, .response, callID: Probe.callIDOf(sent), sent: sent, "GetSettings")
        let response = try SettingsResponse(serializedBytes: packet.payload)
        try complete(c, response, sent: sent, seen: reply?.wire)
        return response
    }

    /// Sets `settings`; fails unless the answer is a complete `SettingsResponse`.
    @discardableResult
    static func set(_ c: CaseContext, _ settings: Settings) async throws -> SettingsResponse {
        let (sent, reply) = try await c.probe.call(.configSetSettings, SetSettingsRequest(settings: settings).serializedBytes())
        let packet = try c.expect(reply, .response, callID: Probe.callIDOf(sent), sent: sent, "SetSettings")
        let response = try SettingsResponse(serializedBytes: packet.payload)
        try complete(c, response, sent: sent, seen: reply?.wire)
        return response
    }

    static func complete(_ c: CaseContext, _ response: SettingsResponse, sent: [UInt8], seen: [UInt8]?) throws {
        let s = response.settings ?? Settings()
        try c.require(
            s.lightPressForce != .unspecified && s.doubleLightPressSpeed != .unspecified && s.cameraControl != .unspecified
                && s.cameraAdjustments != .unspecified && response.origin != .unspecified,
            "settings \(s.lightPressForce), \(s.doubleLightPressSpeed), \(s.cameraControl), \(s.cameraAdjustments), origin \(response.origin)",
            sent: sent, seen: seen, expected: "every field of settings set, and origin")
    }

    static let all: [ConformanceCase] = [
        ConformanceCase(
            "settings-get-set", "PROTOCOL.md §7",
            "GetSettings answers every field; SetSettings changes the fields it sets, keeps the others, and its Light-Press Force moves the light-press threshold in GetConfig (v1.2).",
            requires: .settings, changesDeviceState: true
        ) { c in
            let original = try await get(c).settings ?? Settings()
            let force: LightPressForce = original.lightPressForce == .firmer ? .lighter : .firmer
            let adjustments: SettingSwitch = original.cameraAdjustments == .on ? .off : .on
            let changed = try await set(c, Settings(lightPressForce: force, cameraAdjustments: adjustments)).settings ?? Settings()
            let expected = Settings(
                lightPressForce: force, doubleLightPressSpeed: original.doubleLightPressSpeed, cameraControl: original.cameraControl,
                cameraAdjustments: adjustments)
            let again = try await get(c).settings ?? Settings()
            let (sent, reply) = try await c.probe.call(.configGetConfig)
            let config = try Config(
                serializedBytes: try c.expect(reply, .response, callID: Probe.callIDOf(sent), sent: sent, "GetConfig").payload)
            try await set(c, original)
            try c.require(
                changed == expected && again == expected, "SetSettings answered \(changed), GetSettings then \(again)",
                expected: "\(expected): the fields set replaced, the others kept")
            try c.require(
                config.thresholds?.lightPressOnMillinewtons == lightPressOn(force),
                "light_press_on_mn \(config.thresholds?.lightPressOnMillinewtons ?? 0) with Light-Press Force \(force)",
                sent: sent, seen: reply?.wire, expected: "\(lightPressOn(force) ?? 0) mN")
        },
        ConformanceCase(
            "settings-invalid", "PROTOCOL.md §7",
            "SetSettings with a Light-Press Force outside its enum gets INVALID_ARGUMENT (invalid_arguments counts it) and changes nothing (v1.2).",
            requires: .settings, changesDeviceState: true
        ) { c in
            let before = try await get(c)
            let counters = try await c.probe.counters()
            // settings { light_press_force: 9 camera_control: SETTING_SWITCH_OFF }: written by hand, no enum has 9
            let bad: [UInt8] = [0x0A, 0x04, 0x08, 0x09, 0x18, 0x02]
            let (sent, reply) = try await c.probe.call(.configSetSettings, bad)
            try c.expect(reply, .error, status: .invalidArgument, callID: Probe.callIDOf(sent), sent: sent, "light_press_force 9")
            let after = try await c.probe.counters()
            try c.expectDelta("invalid_arguments", \.invalidArguments, counters, after, 1, sent: sent)
            let now = try await get(c)
            try c.require(
                now.settings == before.settings && now.writes == before.writes, "the settings became \(now.settings ?? Settings())",
                sent: sent, expected: "unchanged: \(before.settings ?? Settings())")
        },
        ConformanceCase(
            "settings-camera-control-off", "PROTOCOL.md §7",
            "With Camera Control off a full click sends no event of the Camera Control while a button still does; with Camera Adjustments off only the full press remains (v1.2).",
            requires: .simulatorService, changesDeviceState: true
        ) { c in
            try c.require(c.capabilities.hasSettings, "has_settings is false", expected: "a simulator of v1.2 serves the settings")
            let original = try await get(c).settings ?? Settings()
            try await set(c, Settings(cameraControl: .off, cameraAdjustments: .on))
            let off = try await c.inputEvents(of: "full-click\nbutton volume-up\n")
            try await set(c, Settings(cameraControl: .on, cameraAdjustments: .off))
            let noAdjust = try await c.inputEvents(of: "light-press\nfull-click\n")
            try await set(c, original)
            let offKinds = off.map(\.event.kind)
            try c.require(
                offKinds == [.buttonDown, .buttonUp], "events \(offKinds)", seen: off.first?.frame.wire,
                expected: "the button's down and up only")
            let kinds = noAdjust.map(\.event.kind)
            try c.require(
                kinds == [.fullPressDown, .fullPressUp], "events \(kinds)", seen: noAdjust.first?.frame.wire,
                expected: "the full press's down and up only")
        },
    ]
}
