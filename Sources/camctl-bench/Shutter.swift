import CameraControlCapture
import CameraControlGStreamer
import CameraControlWire
import Foundation

/// `camctl-bench shutter`: shutter lag of the GStreamer camera on `videotestsrc` at 30 and 60 fps: from
/// the press (its time on the host clock) to the timestamp of the frame saved, for presses whose event
/// reaches the host 5–60 ms late. Baseline: the newest frame when the event arrives (a camera without a
/// ring). Target: p99 |lag| ≤ one frame period (the zero-shutter-lag ring gets within half of one).
/// `--fps N` measures one rate only.
enum Shutter {
    static func run(_ options: BenchOptions) async throws -> [BenchRow] {
        let rates = try options.values["fps"] == nil ? [30, 60] : [options.integer("fps", default: 30)]
        var rows: [BenchRow] = []
        for fps in rates { rows.append(try await measure(fps: fps, rounds: options.rounds)) }
        return rows
    }

    static func measure(fps: Int, rounds: Int) async throws -> BenchRow {
        let clock = CaptureClock.continuous
        let directory = NSTemporaryDirectory() + "camctl-bench-shutter-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let camera = try GStreamerCamera(
            configuration: .init(
                source: .test(pattern: "ball"), width: 320, height: 240, framesPerSecond: fps, outputDirectory: directory,
                hostMicros: clock.nowMicros))
        defer { camera.stop() }
        try await Task.sleep(for: .milliseconds(300))  // the ring fills
        var generator = SplitMix(seed: 13)
        var lags: [Double] = []
        var baseline: [Double] = []
        for round in 0..<rounds {
            let latency = 5_000 + generator.next() % 55_000
            let arrival = clock.nowMicros()
            let press = arrival - latency
            let id = CaptureEventID(rawValue: UInt64(round + 1))
            let began = CaptureEvent(
                phase: .began, id: id, source: .cameraControl, deviceTimestampMicros: press, receivedAtHostMicros: arrival)
            _ = try camera.capture(began, hostMicros: press)
            let naive = try camera.capturePhoto()
            var ended = began
            ended.phase = .ended
            ended.pressDurationMicros = 0
            let photo = try camera.capture(ended, hostMicros: press)
            if let frame = photo?.frameHostMicros { lags.append(abs(Double(Int64(bitPattern: frame) - Int64(bitPattern: press))) / 1000) }
            if let frame = naive.frameHostMicros {
                baseline.append(abs(Double(Int64(bitPattern: frame) - Int64(bitPattern: press))) / 1000)
            }
            try await Task.sleep(for: .microseconds(20_000 + generator.next() % 40_000))
        }
        let period = 1000 / Double(fps)
        return BenchRow(
            name: String(format: "|shutter lag| %d fps (period %.1f ms)", fps, period), unit: "ms", project: Stats(lags),
            baseline: ("newest frame on arrival", Stats(baseline)))
    }
}

/// A small deterministic generator (the press latencies and gaps repeat from run to run).
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
