import CameraAppExample
import CameraControlSimulation
import Foundation

/// `camctl-bench scenario`: what `camctl test --virtual` costs: the demo tour (about ten seconds of device
/// time, every gesture and input source) played on a fresh ``VirtualControlsRig`` (the C firmware, its
/// finger model, the host pipeline and the example app in one virtual time line) and its expectations
/// checked, next to the time the same scenario takes in real time (camctl-sim, a board).
enum ScenarioBench {
    static func run(_ options: BenchOptions) async throws -> [BenchRow] {
        let script = try ScenarioScript(CameraApp.demoScenario)
        let settle: UInt64 = 1_000_000
        var played: [Double] = []
        var checked: [Double] = []
        var deviceSeconds = 0.0
        for _ in 0..<options.rounds {
            let began = ContinuousClock.now
            let run = try script.runVirtual(seed: 1, settleMicros: settle)
            let ran = ContinuousClock.now
            let results = script.check(run)
            let done = ContinuousClock.now
            guard results.allSatisfy(\.passed) else {
                throw BenchSimulator.Failure(description: "the demo tour's expectations failed in virtual time (run `camctl test` on it)")
            }
            played.append(seconds(done - began))
            checked.append(seconds(done - ran) * 1e3)
            deviceSeconds = Double(run.endMicros - run.scenarioStartMicros) / 1e6
        }
        let label = String(format: "demo tour, %.1f s of device time", deviceSeconds)
        return [
            BenchRow(
                name: "camctl test --virtual: \(label)", unit: "s", project: Stats(played),
                baseline: ("the same in real time", Stats([deviceSeconds]))),
            BenchRow(
                name: "checking its \(script.expectations.count) expectations", unit: "ms", project: Stats(checked),
                baseline: nil),
        ]
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
