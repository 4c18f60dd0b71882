import CameraControlDevice
import CameraControlRPC
import CameraControlSerialTransport
import CameraControlTransport
import CameraControlWire
import Foundation

/// The simple commands: one session, one job.
enum Commands {
    static func info(_ argv: [String]) async throws {
        let args = try Arguments(argv, valued: [], switches: [])
        let port = try args.required(0, "PORT")
        let session = try await DeviceSession.open(path: port)
        print(session.info.summary)
        await session.close()
    }

    static func ping(_ argv: [String]) async throws {
        let args = try Arguments(argv, valued: ["count"], switches: [])
        let port = try args.required(0, "PORT")
        let count = try args.integer("count", default: 10)
        let session = try await DeviceSession.open(path: port)
        var times: [Double] = []
        let clock = ContinuousClock()
        let sent = max(1, count)
        for index in 0..<sent {
            let payload = (0..<8).map { UInt8(truncatingIfNeeded: $0 &+ index) }
            let start = clock.now
            let result: Result<PingResponse, RPCError>
            do {
                result = .success(try await session.ping(payload, deadline: .seconds(1)))
            } catch {
                result = .failure(error)
            }
            guard case .success(let reply) = result else {
                if case .failure(let error) = result, error.code != .deadlineExceeded { throw error }
                continue  // a lost round trip (after the retransmissions): counted, not fatal
            }
            let elapsed = start.duration(to: clock.now)
            guard reply.payload == payload else {
                throw RPCError(code: .dataLoss, message: "ping \(index): the echo differs from the payload")
            }
            times.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3)
        }
        let sorted = times.sorted()
        let summary = "\(sent) sent, \(times.count) received, \(sent - times.count) lost"
        if sorted.isEmpty {
            print(summary)
        } else {
            print(
                "\(summary); min \(format(sorted.first!)) ms, median \(format(sorted[sorted.count / 2])) ms, max \(format(sorted.last!)) ms"
            )
        }
        await session.close()
    }

    static func counters(_ argv: [String]) async throws {
        let args = try Arguments(argv, valued: [], switches: ["reset"])
        let port = try args.required(0, "PORT")
        let session = try await DeviceSession.open(path: port)
        let counters = args.flag("reset") ? try await session.resetCounters() : try await session.counters()
        print(describe(counters))
        await session.close()
    }

    static func scenario(_ argv: [String]) async throws {
        let args = try Arguments(argv, valued: [], switches: [])
        let port = try args.required(0, "PORT")
        let file = try args.required(1, "FILE")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let session = try await DeviceSession.open(path: port)
        let result = try await session.runScenario(text)
        print("playing \(result.steps) steps, \(format(Double(result.durationMicros) / 1000)) ms")
        await session.close()
    }

    static func ports(_ argv: [String]) throws {
        _ = try Arguments(argv, valued: [], switches: [])
        let ports = try SerialPorts.list()
        if ports.isEmpty { print("no serial ports") }
        for port in ports { print(port.description) }
    }

    static func call(_ argv: [String]) async throws {
        let args = try Arguments(argv, valued: [], switches: [])
        let port = try args.required(0, "PORT")
        let name = try args.required(1, "METHOD")
        let fields = try parseFields(Array(args.positional.dropFirst(2)))
        guard let method = MethodID.allV1.first(where: { $0.name == name || $0.name.hasSuffix("/\(name)") }) else {
            throw Arguments.Failure(
                description: "unknown method '\(name)'; known: \(MethodID.allV1.map(\.name).joined(separator: ", "))")
        }
        let session = try await DeviceSession.open(path: port)
        defer { Task { await session.close() } }
        let output: String
        switch method {
        case .devicePing:
            output = String(describing: try await session.ping(Array((fields["payload"] ?? "").utf8)))
        case .configGetConfig:
            output = String(describing: try await session.config())
        case .diagnosticsGetCounters:
            output = describe(try await session.counters())
        case .diagnosticsResetCounters:
            output = describe(try await session.resetCounters())
        case .feedbackPlayHaptic:
            let pattern = try enumField(fields, "pattern", HapticPattern.allCases, default: .detent)
            output = String(describing: try await session.playHaptic(pattern))
        case .feedbackPlaySound:
            let sound = try enumField(fields, "sound", Sound.allCases, default: .shutter)
            output = String(describing: try await session.playSound(sound))
        case .feedbackSetIndicator:
            let mode = try enumField(fields, "mode", IndicatorMode.allCases, default: .on)
            let rgb = UInt32(fields["rgb"] ?? "", radix: 16) ?? 0xFFFFFF
            output = String(describing: try await session.setIndicator(mode, rgb: rgb))
        case .simulatorGetSimulatorStatus:
            output = String(describing: try await session.simulatorStatus())
        case .deviceHandshake:
            output = session.info.summary
        default:
            throw Arguments.Failure(
                description: "\(method.name) is not callable from the command line (streams: use `camctl monitor`)")
        }
        print(output)
    }

    static func parseFields(_ items: [String]) throws(Arguments.Failure) -> [String: String] {
        var fields: [String: String] = [:]
        for item in items {
            guard let eq = item.firstIndex(of: "=") else {
                throw Arguments.Failure(description: "expected FIELD=VALUE, got '\(item)'")
            }
            fields[String(item[..<eq])] = String(item[item.index(after: eq)...])
        }
        return fields
    }

    static func enumField<E: CustomStringConvertible>(
        _ fields: [String: String], _ name: String, _ cases: [E], default defaultValue: E
    ) throws(Arguments.Failure) -> E {
        guard let text = fields[name] else { return defaultValue }
        guard let value = cases.first(where: { $0.description == text }) else {
            throw Arguments.Failure(
                description: "\(name)=\(text): expected one of \(cases.map(\.description).joined(separator: ", "))")
        }
        return value
    }

    static func describe(_ c: Counters) -> String {
        let rows = Counters.fields.map { ($0.name, $0.value(c)) }
        return rows.map { name, value in name.padding(toLength: 22, withPad: " ", startingAt: 0) + "\(value)" }
            .joined(separator: "\n")
    }

    static func format(_ value: Double) -> String {
        String(format: "%.3f", value)
    }
}
