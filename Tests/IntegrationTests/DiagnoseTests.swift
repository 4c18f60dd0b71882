import CameraControlTestSupport
import CameraControlWire
import Foundation
import Testing

/// `camctl diagnose` against a real `camctl-sim`: the simulator announces its capability, so diagnose plays
/// every step itself and the check runs unattended. A sound simulator passes every step, each event from
/// the input asked for; one that reports volume-down under VOLUME_UP fails exactly that step.
extension OverRealPTY {
    @Suite("camctl diagnose", .serialized)
    struct DiagnoseTests {
        /// The steps a simulator announces inputs for, in diagnose's order, with the source each must come from.
        static let simulatorSteps: [(step: String, source: String)] = [
            ("volume-up", "volume-up"), ("volume-down", "volume-down"), ("action-button", "action-button"),
            ("remote-click", "remote"), ("light-press", "camera-control"), ("click", "camera-control"),
            ("double-light-press", "camera-control"), ("touch", "camera-control"), ("slide-to-top", "camera-control"),
        ]

        /// Runs diagnose on a fresh simulator (with `simulatorArguments`), once: a link that dies on the way
        /// fails the test (diagnose says the device went away), as it would fail a user's check. (It was run
        /// again when it said so; the test step beside a busy core saw no host silence over 80 ms, and a link
        /// dies after 200 ms.)
        func diagnose(_ arguments: [String], seed: UInt64, simulatorArguments: [String] = []) async throws -> ToolRun {
            try await withSimulator(seed: seed, extraArguments: simulatorArguments) { simulator in
                try await runTool("camctl", ["diagnose", simulator.ptyPath] + arguments, timeout: .seconds(90))
            }
        }

        /// The `"type": "step"` objects of a `--json` run.
        func steps(_ output: String) throws -> [JSONValue] {
            try output.split(separator: "\n").map { try JSONValue(parsing: String($0)) }.filter { $0["type"] == .string("step") }
        }

        @Test("every announced input passes, each event attributed to the input asked for")
        func aSoundSimulatorPassesEveryStep() async throws {
            let run = try await diagnose(["--json"], seed: 81)
            #expect(run.status == 0, "stderr: \(run.standardError)\nstdout: \(run.standardOutput)")
            let steps = try steps(run.standardOutput)
            #expect(steps.map { $0["step"] } == Self.simulatorSteps.map { .string($0.step) })
            for (step, expected) in zip(steps, Self.simulatorSteps) {
                #expect(step["result"] == .string("pass"), "\(step)")
                #expect(step["expectedSource"] == .string(expected.source))
                #expect(
                    step["seen"]?["source"] == .string(expected.source),
                    "\(expected.step) attributed to \(String(describing: step["seen"]))")
                #expect(step["sources"] == .array([.string(expected.source)]), "\(expected.step): other inputs made events")
                #expect(step["simulated"] == .bool(true))
            }
            let summary = try run.standardOutput.split(separator: "\n").map { try JSONValue(parsing: String($0)) }.last
            #expect(summary?["type"] == .string("summary"))
            #expect(summary?["failed"] == .number("0"))

            // The text form: one PASS row per step in the table, and the count.
            let text = try await diagnose([], seed: 82)
            #expect(text.status == 0, "stderr: \(text.standardError)")
            let rows = text.standardOutput.split(separator: "\n").filter { $0.hasSuffix("PASS") && !$0.hasPrefix(" ") }
            #expect(rows.count == Self.simulatorSteps.count, "\(text.standardOutput)")
            #expect(rows.contains { $0.hasPrefix("volume-down ") && $0.contains("press-began from volume-down") })
            #expect(text.standardOutput.contains("\(Self.simulatorSteps.count) of \(Self.simulatorSteps.count) steps passed"))
        }

        @Test("with a person asked (--ask) and nobody acting, each step prompts, waits --timeout and fails; exit 1")
        func nobodyActingFailsEveryStepInTime() async throws {
            let run = try await diagnose(["--ask", "--timeout", "1", "--json"], seed: 85)
            #expect(run.status == 1, "stderr: \(run.standardError)")
            let steps = try steps(run.standardOutput)
            #expect(steps.map { $0["step"] } == Self.simulatorSteps.map { .string($0.step) })
            for step in steps {
                #expect(step["result"] == .string("fail"), "\(step)")
                #expect(step["simulated"] == .bool(false))
                #expect(step["seen"] == nil)
                #expect(step["reason"].map { $0.description.contains("within 1 s") } == true, "\(step)")
            }
            // The prompts go to stderr with --json, one per step, naming the action and the time allowed.
            #expect(run.standardError.contains(">>> step 1/\(Self.simulatorSteps.count): press volume up (1 s)"), "\(run.standardError)")
            #expect(run.standardError.contains("slide your finger along the Camera Control to the top"))
            #expect(run.standardError.contains("\(Self.simulatorSteps.count) of \(Self.simulatorSteps.count) steps failed"))
        }

        @Test("a simulator that reports volume-down as volume-up fails that step, and only that one; exit 1")
        func aWrongButtonSourceFailsItsStep() async throws {
            let run = try await diagnose(["--json"], seed: 83, simulatorArguments: ["--break", "wrong-button-source"])
            #expect(run.status == 1, "stderr: \(run.standardError)")
            #expect(run.standardError.contains("1 of \(Self.simulatorSteps.count) steps failed: volume-down"), "\(run.standardError)")
            let steps = try steps(run.standardOutput)
            #expect(steps.count == Self.simulatorSteps.count)
            for step in steps {
                if step["step"] == .string("volume-down") {
                    #expect(step["result"] == .string("fail"))
                    #expect(step["seen"]?["event"] == .string("press-began"))
                    #expect(step["seen"]?["source"] == .string("volume-up"), "\(step)")
                    #expect(step["reason"] == .string("press-began came from volume-up, expected volume-down"))
                } else {
                    #expect(step["result"] == .string("pass"), "\(step)")
                }
            }

            let text = try await diagnose([], seed: 84, simulatorArguments: ["--break", "wrong-button-source"])
            #expect(text.status == 1)
            let row = text.standardOutput.split(separator: "\n").first { $0.hasPrefix("volume-down ") }
            #expect(row?.hasSuffix("FAIL") == true, "\(text.standardOutput)")
            #expect(row?.contains("press-began from volume-up") == true)
        }
    }
}
