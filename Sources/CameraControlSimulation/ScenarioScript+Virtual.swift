import CameraControlEmbedded
import CameraControlWire

extension ScenarioScript {
    /// Plays the scenario on a fresh ``VirtualControlsRig`` (the C firmware, its finger model, the host
    /// pipeline and the example app in one virtual time line) and collects what the host produced, then the
    /// firmware's counters.
    ///
    /// - Parameters:
    ///   - seed: the device's seed (the scenario's `seed N` reseeds the noise only).
    ///   - settleMicros: virtual time run after the scenario ends (2.6 s: the overlay dismisses itself).
    /// - Throws: ``VirtualControlsRigError`` when the rig does not connect, ``ScenarioError`` when the text
    ///   does not parse.
    public func runVirtual(seed: UInt64 = 1, settleMicros: UInt64 = 2_600_000) throws -> ScenarioRun {
        let rig = try VirtualControlsRig(seed: seed)
        let start = max(rig.device.nowMicros, EmbeddedDevice.bootSettleMicros)
        try rig.play(scenario: text)
        rig.runUntilScenarioEnds(settleMicros: settleMicros)
        return ScenarioRun(
            events: rig.observedEvents, counters: rig.device.counters.counters, scenarioStartMicros: start,
            endMicros: rig.nowMicros)
    }

}
