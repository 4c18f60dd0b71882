import CameraControlWire

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

/// Everything a decoder gave for a stream, comparable (what ``DecoderVerifier`` checks).
struct Decoded: Equatable {
    var outputs: [FrameDecoderOutput]
    var counters: WireCounters
}

/// ``decodeAll(_:maxFrameBytes:)`` as a ``Decoded``.
func decoded(_ chunks: [[UInt8]], maxFrameBytes: Int = WireFormat.maxFrameBytes) -> Decoded {
    let (outputs, counters) = decodeAll(chunks, maxFrameBytes: maxFrameBytes)
    return Decoded(outputs: outputs, counters: counters)
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
