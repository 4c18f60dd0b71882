import CameraControlWire
import Foundation

/// `camctl decode FILE|-`: every frame of a recording (or of hex on stdin, e.g. bytes copied from a
/// logic analyser or `picocom --logfile`) decoded: time, direction, packet type, sequence, call id, the
/// method (answers are matched to their request's call id) and the payload decoded with the schema.
/// Frames that do not decode are shown with the reason (`bad check`, broken COBS, …).
enum Decode {
    static func run(_ argv: [String]) async throws {
        let args = try Arguments(argv, valued: [], switches: [])
        let source = try args.required(0, "FILE (a recording) or - (hex on stdin)")
        guard args.positional.count == 1 else { throw Arguments.Failure(description: "decode takes one FILE or -") }
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
            let stamp = String(format: "%10.3f ms", Double(Int64(bitPattern: frame.timeMicros &- origin)) / 1000)
            print("\(stamp)  \(frame.direction.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0))  \(decoder.describe(frame))")
        }
    }

    /// Hex bytes cut into frames at each `0x00` (a trailing frame without its delimiter is kept).
    static func splitFrames(_ bytes: [UInt8]) -> [RecordedFrame] {
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

/// Describes frames one by one, remembering which method each call id belongs to.
struct FrameDescriber {
    private var methods: [UInt32: MethodInfo] = [:]

    /// One line for `frame`.
    mutating func describe(_ frame: RecordedFrame) -> String {
        let packet: Packet
        switch frame.decoded {
        case .failure(let error):
            return "MALFORMED \(error.code): \(error.message)  [\(frame.bytes.count) bytes]"
        case .success(let decoded):
            packet = decoded
        }
        var text = "\(packet.type) seq \(packet.sequence)"
        if packet.isReliable { text += " reliable" }
        text += " call \(packet.callID)"
        switch packet.type {
        case .request:
            guard let address = packet.address else { return text }
            guard let info = MethodInfo.allV1.first(where: { $0.id == address }) else {
                return text + " method \(address.service)/\(address.method) (not in the v1 schema)"
            }
            methods[packet.callID] = info
            return text + " \(info.name) " + Self.message(info.requestType, packet.payload)
        case .response, .streamMessage:
            guard let info = methods[packet.callID] else { return text + " (\(packet.payload.count) bytes of an unknown call)" }
            if packet.type == .response, info.isServerStreaming, packet.payload.isEmpty {
                return text + " \(info.name) stream open (confirmed, PROTOCOL.md §7)"
            }
            return text + " \(info.name) " + Self.message(info.responseType, packet.payload)
        case .streamEnd, .error:
            let status = packet.status.map { "\($0)" } ?? "?"
            let method = methods[packet.callID].map { " \($0.name)" } ?? ""
            return text + method + " status \(status) \"\(String(decoding: packet.payload, as: UTF8.self))\""
        case .ack:
            return text + (packet.ackedSequence.map { " acks seq \($0)" } ?? "")
        default:
            return text
        }
    }

    /// The payload decoded as `type`, in protobuf text form.
    static func message(_ type: any WireMessage.Type, _ payload: [UInt8]) -> String {
        do {
            let message = try type.init(serializedBytes: payload)
            return "\(type.protoMessageName) \(ProtoText.describe(message))"
        } catch {
            return "\(type.protoMessageName) (does not decode: \(error))"
        }
    }
}

/// A message as compact protobuf-text-like `{ field: value … }`, read from its Swift properties (the
/// generated types mirror the schema field for field).
enum ProtoText {
    static func describe(_ value: Any) -> String {
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .struct:
            let fields = mirror.children.compactMap { child -> String? in
                guard let label = child.label, !label.hasPrefix("_") || label == "_storage" else { return nil }
                let text = describe(child.value)
                if text == "0" || text == "false" || text == "\"\"" || text == "[]" || text == "unspecified" || text == "nil" {
                    return nil
                }
                return "\(label.hasPrefix("_") ? String(label.dropFirst()) : label): \(text)"
            }
            return "{ " + fields.joined(separator: " ") + (fields.isEmpty ? "}" : " }")
        case .optional:
            guard let first = mirror.children.first else { return "nil" }
            return describe(first.value)
        case .collection:
            if let bytes = value as? [UInt8] {
                return bytes.count > 16 ? "<\(bytes.count) bytes>" : "<" + bytes.map { String(format: "%02x", $0) }.joined() + ">"
            }
            return "[" + mirror.children.map { describe($0.value) }.joined(separator: ", ") + "]"
        case .enum:
            return "\(value)"
        default:
            if let string = value as? String { return "\"" + string.replacingOccurrences(of: "\n", with: "\\n") + "\"" }
            return "\(value)"
        }
    }
}
