import CameraControlWire

/// A small deterministic generator (SplitMix64) so random tests are reproducible.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension Array where Element == UInt8 {
    /// Bytes from lowercase or uppercase hex (test input only; traps on bad hex).
    init(hex: String) {
        let digits = Array(hex.utf8)
        precondition(digits.count % 2 == 0, "odd hex")
        self = stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }

    /// Lowercase hex.
    var hex: String {
        map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    static func random(count: Int, using generator: inout SeededGenerator) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }
}

/// Feeds `chunks` to a fresh decoder, draining after each, and returns every output and the counters.
func decodeAll(
    _ chunks: [[UInt8]], maxFrameBytes: Int = WireFormat.maxFrameBytes
) -> (outputs: [FrameDecoderOutput], counters: WireCounters) {
    var decoder = FrameDecoder(maxFrameBytes: maxFrameBytes)
    var outputs: [FrameDecoderOutput] = []
    for chunk in chunks {
        decoder.append(chunk)
        while let output = decoder.next() { outputs.append(output) }
    }
    return (outputs, decoder.counters)
}

/// The packets among `outputs`.
func packets(_ outputs: [FrameDecoderOutput]) -> [Packet] {
    outputs.compactMap { if case .packet(let packet) = $0 { packet } else { nil } }
}

/// The error codes among `outputs`.
func errorCodes(_ outputs: [FrameDecoderOutput]) -> [WireError.Code] {
    outputs.compactMap { if case .error(let error) = $0 { error.code } else { nil } }
}

/// One packet of every v1 type, with varied fields.
let samplePacketsOfEveryType: [Packet] = [
    Packet(type: .request, sequence: 0, callID: 1, address: MethodID.deviceHandshake, payload: [0x0A, 0x02, 0x08, 0x01]),
    Packet(type: .response, sequence: 1, callID: 1, payload: [0x28, 0x05]),
    Packet(type: .streamMessage, isReliable: true, sequence: 0xFFFF, callID: 200, payload: Array(1...40)),
    Packet(type: .streamEnd, sequence: 3, callID: 200, status: .ok),
    Packet(type: .streamEnd, sequence: 4, callID: 201, status: StatusCode(rawValue: 200), payload: Array("odd".utf8)),
    Packet(type: .cancel, sequence: 5, callID: UInt32.max),
    Packet(type: .error, sequence: 6, callID: 9, status: .unimplemented, payload: Array("no such method".utf8)),
    Packet(type: .error, sequence: 7, callID: 0, status: .failedPrecondition),
    .ack(sequence: 8, acking: 0xBEEF),
    .heartbeat(sequence: 9),
]
