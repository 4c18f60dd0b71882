import Foundation
import Synchronization

/// `camctl monitor`'s own path, for `camctl-bench latency`: `camctl-sim --print-clock-origin` plays
/// volume-down clicks, `camctl monitor --json PORT` (next to this executable, or `--camctl PATH`) runs in a
/// process of its own with its standard output on a pipe, and a thread of the bench reads the pipe. A
/// press's latency is `CLOCK_MONOTONIC` when its `capture` line with `"phase":"began"` has been read, minus
/// the press's device timestamp (the line's `deviceTimeUs`, a string) placed on that clock: the device, the pty, the
/// monitor's host (port → RPC core → `DeviceConnection` → capture pipeline → the printer, all on its
/// event loop's thread, no hop) and the pipe to whoever reads the lines.
enum MonitorLatency {
    /// Each press's latency, µs, in the order read (fewer than `clicks` when the run times out).
    static func presses(_ options: BenchOptions, clicks: Int) throws -> [Double] {
        let simulator = try BenchSimulator(options, clicks: clicks, arguments: ["--print-clock-origin"])
        defer { simulator.stop() }
        let origin = try simulator.clockOrigin()
        let camctl = options.values["camctl"] ?? BenchSimulator.siblingExecutable("camctl")
        let pipe = Pipe()
        let monitor = try IdleBench.MonitorProcess(
            camctl: camctl, arguments: ["monitor", "--json", simulator.port], standardOutput: pipe)
        defer { monitor.stop() }
        let reader = pipe.fileHandleForReading.fileDescriptor
        let deadline = ContinuousClock.now + .seconds(Double(clicks) * 0.2 + 10)
        var latencies: [Double] = []
        var line: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while latencies.count < clicks, ContinuousClock.now < deadline {
            var descriptor = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 200) >= 0 else { break }
            guard descriptor.revents != 0 else { continue }
            let got = buffer.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
            guard got > 0 else { break }  // the monitor ended
            let readAt = PacedLatencyBench.monotonicMicros()
            for byte in buffer[0..<got] {
                guard byte == 10 else {
                    line.append(byte)
                    continue
                }
                if let device = beganDeviceMicros(line) { latencies.append(Double(readAt - (origin + device))) }
                line.removeAll(keepingCapacity: true)
            }
        }
        guard !latencies.isEmpty else {
            try monitor.checkRunning()
            throw BenchSimulator.Failure(description: "\(camctl) monitor --json printed no capture line in time")
        }
        return latencies
    }

    /// The device timestamp of a `capture` line whose phase is `began`, nil for any other line.
    static func beganDeviceMicros(_ line: [UInt8]) -> Int64? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
            object["type"] as? String == "capture", object["phase"] as? String == "began",
            let stamp = object["deviceTimeUs"]
        else { return nil }
        // A 64-bit value: the printer writes it as a string (JSON numbers lose precision past 2^53).
        if let text = stamp as? String { return Int64(text) }
        return (stamp as? NSNumber)?.int64Value
    }
}
