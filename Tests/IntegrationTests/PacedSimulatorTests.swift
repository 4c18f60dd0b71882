import CameraControlDevice
import CameraControlPorts
import CameraControlRPC
import CameraControlTestSupport
import CameraControlWire
import Foundation
import Testing

/// `camctl-sim --baud N` (a UART-speed line between the firmware and the pty), and the `camctl-bench`
/// subcommands built on it and on many simulated devices (`paced`, `scale`), in their smoke modes. No
/// assertion here is about speed: figures come from release runs (docs/PERFORMANCE.md).
@Suite("paced simulator and scale bench", .serialized)
struct PacedSimulatorTests {
    @Test(arguments: ["0", "-5", "fast", "100000001"])
    func aBaudThatIsNotABitRateIsRefused(_ value: String) async throws {
        let run = try await runTool("camctl-sim", ["--baud", value])
        #expect(run.status == 2)
        #expect(run.standardError.contains("--baud"), "stderr: \(run.standardError)")
    }

    @Test(arguments: ["-1", "fast", "1001"])
    func aSpinThatIsNotAMicrosecondCountIsRefused(_ value: String) async throws {
        let run = try await runTool("camctl-sim", ["--spin-us", value])
        #expect(run.status == 2)
        #expect(run.standardError.contains("--spin-us"), "stderr: \(run.standardError)")
    }

    /// A byte reaches the other side only once the modelled line has sent it, both ways: a ping of 200 bytes
    /// each way over 115200 baud cannot come back sooner than those 400 bytes' time on the wire (34.7 ms), however
    /// precisely the simulator wakes up (`--spin-us`). A lower bound only: no assertion about speed.
    @Test func aPingTakesAtLeastItsTimeOnTheWire() async throws {
        let simulator = try SimulatorProcess(seed: 6, extraArguments: ["--baud", "115200", "--spin-us", "50"])
        defer { simulator.kill() }
        let session = try await DeviceSession.open(path: simulator.ptyPath, hostName: "paced-test")
        let payload = (0..<200).map { UInt8($0 % 251 + 1) }
        let start = ContinuousClock.now
        let reply = try await session.ping(payload)
        let elapsed = ContinuousClock.now - start
        #expect(reply.payload == payload)
        #expect(elapsed >= .microseconds(400 * 10 * 1_000_000 / 115_200), "round trip \(elapsed)")
        await session.close()
    }

    @Test func aSessionRunsOverA115200BaudLine() async throws {
        let simulator = try SimulatorProcess(seed: 3, extraArguments: ["--baud", "115200"])
        defer { simulator.kill() }
        let session = try await DeviceSession.open(path: simulator.ptyPath, hostName: "paced-test")
        let reply = try await session.ping([1, 2, 3, 4, 5, 6, 7, 8])
        #expect(reply.payload == [1, 2, 3, 4, 5, 6, 7, 8])
        await session.close()
    }

    /// At 9600 baud the simulator's HandshakeResponse (about 330 bytes) takes 344 ms on the wire, longer than
    /// the first handshake attempt's 100 ms and than the device's 200 ms dead timeout. The device
    /// acknowledges the request at once, so the host waits for the response instead of re-handshaking
    /// (§9, v1.2), and the device counts the host's silence from when its response left (§8, v1.2): the
    /// first attempt opens a session that answers calls.
    @Test func aHandshakeOverA9600BaudLineSucceedsAtItsFirstAttempt() async throws {
        let simulator = try SimulatorProcess(seed: 7, extraArguments: ["--baud", "9600"])
        defer { simulator.kill() }
        let session = try await DeviceSession.open(path: simulator.ptyPath, hostName: "paced-test")
        let counters = session.client.counters
        #expect(counters.callsStarted == 1, "handshake attempts: \(counters.callsStarted)")
        #expect(counters.deadlinesExceeded == 0)
        let reply = try await session.ping([4, 2])
        #expect(reply.payload == [4, 2])
        await session.close()
    }

    /// A 1 kHz raw stream needs about 4.7 KB/s as 1.1's records, and still more than 1 KB/s delta-coded (v1.2)
    /// with the finger resting (at 19200 baud a resting sensor's stream fits); a 9600-baud line carries
    /// 0.96 KB/s. The firmware must drop
    /// batches on the device and say so in a later batch's `dropped_before`, while the session (its
    /// heartbeats and replies go first) stays up.
    @Test func aRawStreamThatDoesNotFitTheLineCountsItsDrops() async throws {
        // One attempt: a session lost here is a miss to understand, not to retry away.
        let run = try await Self.rawStreamDrops(baud: 9_600, seed: 4)
        #expect(run.dropped > 0, "\(run.batches) batches, none reported dropped samples")
    }

    /// Streams raw samples from a `camctl-sim --baud baud` until some were reported dropped (or 400
    /// batches), then checks the session still answers a ping.
    static func rawStreamDrops(baud: Int, seed: UInt64) async throws -> (batches: Int, dropped: UInt64) {
        let simulator = try SimulatorProcess(seed: seed, extraArguments: ["--baud", "\(baud)"])
        defer { simulator.kill() }
        let session = try await DeviceSession.open(path: simulator.ptyPath, hostName: "paced-test")
        let stream = try await session.rawSamples()
        var batches = 0
        var dropped: UInt64 = 0
        for try await batch in stream {
            batches += 1
            dropped += UInt64(batch.droppedBefore)
            if batches >= 20 && dropped > 0 { break }
            if batches >= 400 { break }
        }
        let reply = try await session.ping([9])
        #expect(reply.payload == [9])
        await session.close()
        return (batches, dropped)
    }

    @Test func pacedLatencyPrintsEachPacingAndWritesThePlot() async throws {
        let svg = NSTemporaryDirectory() + "camctl-paced-\(UUID().uuidString).svg"
        defer { try? FileManager.default.removeItem(atPath: svg) }
        let run = try await runTool("camctl-bench", ["paced", "--smoke", "--svg", svg], timeout: .seconds(90))
        #expect(run.status == 0, "stderr: \(run.standardError)")
        for pacing in ["unpaced", "1 Mbaud", "115200 baud"] {
            #expect(run.standardOutput.contains("press → capture handler, \(pacing)"), "\(run.standardOutput)")
        }
        let text = try String(contentsOfFile: svg, encoding: .utf8)
        #expect(text.hasPrefix("<svg "))
        #expect(text.components(separatedBy: "<polyline").count - 1 == 3)
        #expect(text.hasSuffix("</svg>\n"))
    }

    @Test("latency prints the handler called during the read and camctl monitor's own path, with their baselines")
    func latencyPrintsTheHandlerAndMonitorRows() async throws {
        let run = try await runTool("camctl-bench", ["latency", "--smoke", "--json"], timeout: .seconds(120))
        #expect(run.status == 0, "stderr: \(run.standardError)")
        let rows = run.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let byName = Dictionary(rows.compactMap { row in (row["name"] as? String).map { ($0, row) } }) { first, _ in first }
        let handler = try #require(byName["  same, handler called during the read (deliveringOn, no task)"], "\(byName.keys)")
        #expect(handler["baseline"] as? String == "C reader woken by the write")
        let monitor = try #require(byName["camctl monitor --json: press → its capture line read (0 hops)"], "\(byName.keys)")
        #expect(monitor["baseline"] as? String == "the library's capture handler")
        // A latency from the press's device time to a line read: positive, and under the run's 10 s bound.
        let median = try #require(monitor["median"] as? Double)
        #expect(median > 0 && median < 10_000_000)
    }

    @Test func scalePrintsBothHostsFigures() async throws {
        let run = try await runTool("camctl-bench", ["scale", "--smoke", "--json"], timeout: .seconds(90))
        #expect(run.status == 0, "stderr: \(run.standardError)")
        let rows = run.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let names = rows.compactMap { $0["name"] as? String }
        #expect(names.contains("a 1 kHz raw stream, one device"), "\(names)")
        #expect(names.contains { $0.hasPrefix("devices held at 1 kHz") }, "\(names)")
        #expect(rows.allSatisfy { $0["baseline"] as? String == nil || ($0["baseline"] as? String)?.hasPrefix("minimal C host") == true })
    }
}
