import CameraControlEmbedded
import CameraControlWire

extension ScenarioScript {
    /// Plays the scenario on a fresh ``VirtualControlsRig`` (the C firmware, its finger model, the host
    /// pipeline and the example app in one virtual time line), taking its ``hostSteps`` at their times, and
    /// collects what the host produced, then the firmware's counters (before and after the scenario).
    ///
    /// - Parameters:
    ///   - seed: the device's seed (the scenario's `seed N` reseeds the noise only).
    ///   - settleMicros: virtual time run after the scenario ends (2.6 s: the overlay dismisses itself).
    /// - Throws: ``VirtualControlsRigError`` when the rig does not connect, ``ScenarioError`` when the text
    ///   does not parse, ``ControlError`` when a host step's format is not the camera's.
    public func runVirtual(seed: UInt64 = 1, settleMicros: UInt64 = 2_600_000) throws -> ScenarioRun {
        let rig = try VirtualControlsRig(seed: seed)
        let start = max(rig.device.nowMicros, EmbeddedDevice.bootSettleMicros)
        let countersAtStart = rig.device.counters.counters
        try rig.play(scenario: text)
        for step in hostSteps {
            if start + step.atMicros > rig.nowMicros { rig.run(forMicros: start + step.atMicros - rig.nowMicros) }
            try rig.apply(step)
        }
        rig.runUntilScenarioEnds(settleMicros: settleMicros)
        return ScenarioRun(
            events: rig.observedEvents, counters: rig.device.counters.counters, countersAtStart: countersAtStart,
            scenarioStartMicros: start, endMicros: rig.nowMicros)
    }

}

extension VirtualControlsRig {
    /// A fresh rig whose device replays recorded input (``EmbeddedDevice/replay(_:)``: a session recorded on a
    /// board, sample for sample, in place of the finger model), run until the replay ended and
    /// `settleMicros` more.
    ///
    /// - Throws: ``VirtualControlsRigError`` when the rig does not connect.
    public static func replaying(
        _ samples: [ReplaySample], seed: UInt64 = 1, settleMicros: UInt64 = 1_000_000
    ) throws(VirtualControlsRigError) -> VirtualControlsRig {
        let rig = try VirtualControlsRig(seed: seed)
        rig.device.replay(samples)
        let length = (samples.last?.micros ?? 0) + 1_000_000
        rig.captureRig.run(timeoutMicros: length) { !rig.device.isReplaying }
        rig.run(forMicros: settleMicros)
        return rig
    }
}
