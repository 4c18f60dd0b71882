import CameraControlWire
import Foundation

/// `camctl decode FILE|-`: every frame of a recording (or of hex on stdin, e.g. bytes copied from a
/// logic analyser or `picocom --logfile`) decoded: time, direction, packet type, sequence, call id, the
/// method (answers are matched to their request's call id) and the payload decoded with the schema.
/// Frames that do not decode are shown with the reason (`bad check`, broken COBS, …).
package enum Decode {
    /// Prints every frame of `source` (a recording's path, or `-` for hex on stdin), as text or as JSON lines.
    package static func run(source: String, json: Bool) throws {
        let frames: [RecordedFrame]
        if source == "-" {
            let text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
            frames = splitFrames(try bytesFromHex(text))
        } else {
            frames = try PcapngReader.frames(path: source)
        }
        var decoder = FrameDescriber()
        let origin = frames.first?.timeMicros ?? 0
        for frame in frames {
            let relative = Double(Int64(bitPattern: frame.timeMicros &- origin)) / 1000
            let described = decoder.describe(frame)
            if json {
                let head = [
                    JSONMember("tMs", .number(String(format: "%.3f", relative))),
                    JSONMember("direction", .string(frame.direction.jsonName)), JSONMember("bytes", .integer(frame.bytes.count)),
                ]
                print(JSONValue.object(head + described.members).compactText)
            } else {
                let stamp = String(format: "%10.3f ms", relative)
                print("\(stamp)  \(frame.direction.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0))  \(described.text)")
            }
        }
    }

    /// Hex bytes cut into frames at each `0x00` (a trailing frame without its delimiter is kept).
    package static func splitFrames(_ bytes: [UInt8]) -> [RecordedFrame] {
        var frames: [RecordedFrame] = []
        var current: [UInt8] = []
        for byte in bytes {
            current.append(byte)
            if byte == WireFormat.delimiter {
                if current.count > 1 { frames.append(RecordedFrame(timeMicros: 0, direction: .unknown, bytes: current)) }
                current = []
            }
        }
        if !current.isEmpty { frames.append(RecordedFrame(timeMicros: 0, direction: .unknown, bytes: current)) }
        return frames
    }
}

/// Describes frames one by one, remembering which method each call id belongs to. Payloads are decoded
/// with the schema compiled in and shown in protobuf's JSON mapping (``ProtoJSONMessage``), the form
/// `camctl call` prints and takes.
package struct FrameDescriber {
    private var methods: [UInt32: MethodInfo] = [:]

    /// One frame: a line of text, and the same as JSON members (`camctl decode --json`).
    package struct Description {
        /// The line `camctl decode` prints (after the time and direction).
        var text: String
        /// `ok`, then the packet's fields, or the reason it does not decode.
        var members: [JSONMember]
    }

    /// `frame` described.
    package mutating func describe(_ frame: RecordedFrame) -> Description {
        let packet: Packet
        switch frame.decoded {
        case .failure(let error):
            return Description(
                text: "MALFORMED \(error.code): \(error.message)  [\(frame.bytes.count) bytes]",
                members: [
                    JSONMember("ok", .bool(false)), JSONMember("error", .string(error.code.description)),
                    JSONMember("reason", .string(error.message)),
                ])
        case .success(let decoded):
            packet = decoded
        }
        var text = "\(packet.type) seq \(packet.sequence)"
        if packet.isReliable { text += " reliable" }
        text += " call \(packet.callID)"
        var members = [
            JSONMember("ok", .bool(true)), JSONMember("type", .string(packet.type.description)),
            JSONMember("sequence", .integer(packet.sequence)), JSONMember("reliable", .bool(packet.isReliable)),
            JSONMember("callId", .integer(packet.callID)),
        ]
        func done(_ more: String, _ extra: [JSONMember] = []) -> Description {
            Description(text: text + more, members: members + extra)
        }
        func method(_ info: MethodInfo) -> JSONMember { JSONMember("method", .string(info.name)) }
        switch packet.type {
        case .request:
            guard let address = packet.address else { return done("") }
            guard let info = MethodInfo.allV1.first(where: { $0.id == address }) else {
                return done(
                    " method \(address.service)/\(address.method) (not in the v1 schema)",
                    [JSONMember("service", .integer(address.service)), JSONMember("methodNumber", .integer(address.method))])
            }
            methods[packet.callID] = info
            members.append(method(info))
            let payload = Self.message(info.requestType, packet.payload)
            return done(" \(info.name) " + payload.text, payload.members)
        case .response, .streamMessage:
            guard let info = methods[packet.callID] else {
                return done(
                    " (\(packet.payload.count) bytes of an unknown call)", [JSONMember("payloadBytes", .integer(packet.payload.count))])
            }
            members.append(method(info))
            if packet.type == .response, info.isServerStreaming, packet.payload.isEmpty {
                return done(" \(info.name) stream open (confirmed, PROTOCOL.md §7)", [JSONMember("streamOpen", .bool(true))])
            }
            let payload = Self.message(info.responseType, packet.payload)
            return done(" \(info.name) " + payload.text, payload.members)
        case .streamEnd, .error:
            let status = packet.status.map { "\($0)" } ?? "?"
            let detail = String(decoding: packet.payload, as: UTF8.self)
            var extra = [JSONMember("status", .string(status)), JSONMember("statusMessage", .string(detail))]
            var name = ""
            if let info = methods[packet.callID] {
                extra.insert(method(info), at: 0)
                name = " \(info.name)"
            }
            return done(name + " status \(status) \"\(detail)\"", extra)
        case .ack:
            guard let acked = packet.ackedSequence else { return done("") }
            return done(" acks seq \(acked)", [JSONMember("ackedSequence", .integer(acked))])
        default:
            return done("")
        }
    }

    /// The payload decoded as `type`: `cameracontrol.v1.Name {json}` (protobuf's JSON mapping, fields at
    /// their zero value left out), and as `messageType` and `message` members.
    package static func message(_ type: any WireMessage.Type, _ payload: [UInt8]) -> (text: String, members: [JSONMember]) {
        let name = type.protoMessageName
        guard let jsonType = type as? any ProtoJSONMessage.Type else {
            return ("\(name) <\(payload.count) bytes>", [JSONMember("messageType", .string(name))])
        }
        do {
            let message = try jsonType.init(serializedBytes: payload)
            let json = message.jsonValue(includingDefaults: false)
            return ("\(name) \(json.compactText)", [JSONMember("messageType", .string(name)), JSONMember("message", json)])
        } catch {
            return (
                "\(name) (does not decode: \(error))",
                [JSONMember("messageType", .string(name)), JSONMember("decodeError", .string("\(error)"))]
            )
        }
    }
}

extension FrameDirection {
    /// The direction in `--json`: `toDevice`, `fromDevice` or `unknown`.
    package var jsonName: String {
        switch self {
        case .toDevice: "toDevice"
        case .fromDevice: "fromDevice"
        case .unknown: "unknown"
        }
    }
}
