import CameraControlTestSupport
import Foundation
import Testing

/// `camctl shoot` against `camctl-sim` with the test camera: a scenario's clicks write real photos, its
/// click and hold a video; and `camctl-bench shutter` prints shutter lag (a smoke run).
@Suite("camctl shoot", .serialized)
struct ShootTests {
    static let scenario = """
        full-click
        pause 300ms
        click-and-hold 1200ms
        pause 300ms
        button volume-down
        pause 300ms
        """

    @Test func aScenariosClicksWritePhotosAndItsHoldAVideo() async throws {
        let directory = NSTemporaryDirectory() + "camctl-shoot-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let scenario = directory + "/shoot.scenario"
        try Self.scenario.write(toFile: scenario, atomically: true, encoding: .utf8)
        let simulator = try SimulatorProcess(seed: 7)
        defer { simulator.kill() }
        let run = try await runTool(
            "camctl",
            [
                "shoot", simulator.ptyPath, "--camera", "test", "-o", directory + "/out", "--scenario", scenario,
                "--width", "320", "--height", "240",
            ],
            timeout: .seconds(60))
        #expect(run.status == 0, "stderr: \(run.standardError)")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory + "/out").sorted()
        #expect(files.filter { $0.hasSuffix(".jpg") }.count == 2, "\(files)")
        #expect(files.filter { $0.hasSuffix(".mkv") }.count == 1, "\(files)")
        #expect(files.filter { $0.hasSuffix(".json") }.count == 3, "\(files)")
        for file in files where !file.hasSuffix(".json") {
            #expect(run.standardOutput.contains("\(directory)/out/\(file)"), "the file written is printed: \(file)")
        }
    }

    @Test func theBenchmarkPrintsShutterLag() async throws {
        let run = try await runTool("camctl-bench", ["shutter", "--smoke"], timeout: .seconds(60))
        #expect(run.status == 0, "stderr: \(run.standardError)")
        #expect(run.standardOutput.contains("|shutter lag| 30 fps"))
        #expect(run.standardOutput.contains("|shutter lag| 60 fps"))
    }
}
