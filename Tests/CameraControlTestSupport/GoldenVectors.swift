import CameraControlWire
import Foundation
import Testing

/// One frame of `Tests/Vectors/frames.json` (written by `scripts/make-vectors`).
public struct GoldenFrame: Decodable, Sendable, CustomTestStringConvertible {
    /// The vector's unique name.
    public var name: String
    /// Why the vector exists (often a PROTOCOL.md section).
    public var note: String
    /// The packet type's name, e.g. `HEARTBEAT`.
    public var type: String
    /// The packet type's number.
    public var typeValue: UInt8
    /// The envelope's reliable flag.
    public var reliable: Bool
    /// The envelope's sequence number.
    public var sequence: UInt16
    /// The envelope's call id.
    public var callId: UInt32
    /// The request's service, if the packet is a request.
    public var service: UInt8?
    /// The request's method, if the packet is a request.
    public var method: UInt8?
    /// The status byte, for packets that carry one.
    public var status: UInt8?
    /// The protobuf message name of the payload, if it is one.
    public var message: String?
    /// The payload as protobuf text format (what `protoc --decode` prints).
    public var text: String?
    /// The payload.
    public var payloadHex: String
    /// Envelope, payload and CRC-16 (little-endian).
    public var unstuffedHex: String
    /// The COBS-stuffed frame with its delimiter: the bytes on the wire.
    public var wireHex: String

    /// The vector's name.
    public var testDescription: String { name }

    /// The packet the vector's fields describe.
    public var packet: Packet {
        Packet(
            type: PacketType(rawValue: typeValue), isReliable: reliable, sequence: sequence, callID: callId,
            address: service.map { MethodID(service: $0, method: method ?? 0) },
            status: status.map(StatusCode.init(rawValue:)), payload: [UInt8](hex: payloadHex))
    }
}

/// The golden frames every implementation of the protocol is checked against.
public enum GoldenVectors {
    /// The repository's root directory.
    public static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// `Tests/Vectors/frames.json`.
    public static let path = repoRoot.appendingPathComponent("Tests/Vectors/frames.json")

    private struct File: Decodable { var frames: [GoldenFrame] }

    /// Every frame of the file, in order (empty when the file cannot be read: tests check it is not).
    public static let frames: [GoldenFrame] = {
        guard let data = try? Data(contentsOf: path), let file = try? JSONDecoder().decode(File.self, from: data) else {
            return []
        }
        return file.frames
    }()
}
