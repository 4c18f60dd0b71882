import CameraControlRPC
import CameraControlWire

/// A message whose protobuf bytes are whatever it holds (tests only need opaque payloads).
struct Blob: WireMessage {
    var bytes: [UInt8] = []
    init() {}
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    init(serializedBytes: [UInt8]) throws(WireError) { bytes = serializedBytes }
    func serializedBytes() -> [UInt8] { bytes }
}

/// A message that never decodes.
struct Undecodable: WireMessage {
    init() {}
    init(serializedBytes: [UInt8]) throws(WireError) {
        throw WireError(.malformedMessage, "test message never decodes")
    }
    func serializedBytes() -> [UInt8] { [] }
}

/// Builds device → host frames with the device's own sequence numbers.
struct DeviceFrames {
    var sequence: UInt16 = 0

    mutating func frame(_ packet: Packet) -> [UInt8] {
        var numbered = packet
        numbered.sequence = sequence
        sequence &+= 1
        return try! PacketEncoder.encode(numbered)
    }

    mutating func response(_ call: CallID, _ payload: [UInt8] = []) -> [UInt8] {
        frame(Packet(type: .response, callID: call.rawValue, payload: payload))
    }

    mutating func message(_ call: CallID, _ payload: [UInt8], reliable: Bool = false) -> [UInt8] {
        frame(Packet(type: .streamMessage, isReliable: reliable, callID: call.rawValue, payload: payload))
    }

    mutating func streamEnd(_ call: CallID, _ status: StatusCode = .ok, _ message: String = "") -> [UInt8] {
        frame(Packet(type: .streamEnd, callID: call.rawValue, status: status, payload: Array(message.utf8)))
    }

    mutating func error(_ call: CallID, _ status: StatusCode, _ message: String = "") -> [UInt8] {
        frame(Packet(type: .error, callID: call.rawValue, status: status, payload: Array(message.utf8)))
    }

    mutating func heartbeat() -> [UInt8] {
        frame(.heartbeat(sequence: 0))
    }

    /// An `ACK` of the host's packet numbered `acking`.
    mutating func ack(_ acking: UInt16) -> [UInt8] {
        frame(.ack(sequence: 0, acking: acking))
    }

    /// `ACK`s of every reliable packet in `hostBytes` (what a device answers to the host's requests).
    mutating func acks(of hostBytes: [UInt8]) -> [UInt8] {
        hostPackets(hostBytes).filter(\.isReliable).flatMap { ack($0.sequence) }
    }
}

/// Decodes everything the host wrote.
func hostPackets(_ bytes: [UInt8]) -> [Packet] {
    var decoder = FrameDecoder()
    decoder.append(bytes)
    var packets: [Packet] = []
    while let output = decoder.next() {
        if case .packet(let packet) = output { packets.append(packet) }
    }
    return packets
}

extension Duration {
    static func ms(_ value: Int) -> Duration { .milliseconds(value) }
}
