import CameraControlEmbedded
import CameraControlWire
import Testing

/// The user's settings on the real firmware (ConfigService/GetSettings and SetSettings, v1.2): stored in the
/// device's settings store and read back after a reset of the board, in virtual time.
@Suite("User settings")
struct SettingsTests {
    static func settings(_ host: inout HostHarness) throws -> SettingsResponse {
        let reply = try host.call(.configGetSettings, GetSettingsRequest())
        guard reply.type == .response else { throw HarnessError.unexpected(reply) }
        return try SettingsResponse(serializedBytes: reply.payload)
    }

    @Test("settings set over the wire survive a reset of the board, and their force moves the light stage")
    func surviveReset() throws {
        var host = HostHarness(seed: 3)
        try host.connect()
        #expect(try Self.settings(&host).origin == .empty)
        let change = Settings(lightPressForce: .firmer, doubleLightPressSpeed: .slowest, cameraAdjustments: .off)
        let reply = try host.call(.configSetSettings, SetSettingsRequest(settings: change))
        #expect(reply.type == .response)
        let expected = Settings(lightPressForce: .firmer, doubleLightPressSpeed: .slowest, cameraControl: .on, cameraAdjustments: .off)
        #expect(try SettingsResponse(serializedBytes: reply.payload).settings == expected)
        #expect(host.device.inputConfiguration.lightPressOnMillinewtons == 1100)

        host.device.reset()
        var again = HostHarness(device: host.device)
        try again.connect()
        let read = try Self.settings(&again)
        #expect(read.settings == expected)
        #expect(read.origin == .loaded)
        #expect(again.device.inputConfiguration.lightPressOnMillinewtons == 1100)
        #expect(again.device.inputConfiguration.lightPressOffMillinewtons == 700)
    }

    @Test("a store image carried to a new device (a power cycle) gives the same settings; a corrupt one the defaults")
    func storeImage() throws {
        var host = HostHarness(seed: 4)
        try host.connect()
        _ = try host.call(.configSetSettings, SetSettingsRequest(settings: Settings(lightPressForce: .lighter)))
        let image = host.device.settingsStore
        #expect(image.count == EmbeddedDevice.settingsStoreByteCount)

        var powered = HostHarness(device: EmbeddedDevice(seed: 4, settingsStore: image))
        try powered.connect()
        #expect(try Self.settings(&powered).settings?.lightPressForce == .lighter)
        #expect(powered.device.inputConfiguration.lightPressOnMillinewtons == 600)

        var corrupt = HostHarness(device: EmbeddedDevice(seed: 4, settingsStore: image.map { $0 ^ 0x21 }))
        try corrupt.connect()
        let read = try Self.settings(&corrupt)
        #expect(read.origin == .corrupt)
        #expect(read.settings?.lightPressForce == .default)
        #expect(corrupt.device.inputConfiguration.lightPressOnMillinewtons == 800)
    }

    @Test("Camera Adjustments off on the device: a light press sends nothing, a full click only its full press")
    func adjustmentsOffOnTheDevice() throws {
        var host = HostHarness(seed: 5)
        try host.connect()
        _ = try host.call(.configSetSettings, SetSettingsRequest(settings: Settings(cameraAdjustments: .off)))
        try host.play("light-press\npause 100ms\nfull-click\n")
        #expect(host.events.map(\.kind) == [.fullPressDown, .fullPressUp])
    }
}
