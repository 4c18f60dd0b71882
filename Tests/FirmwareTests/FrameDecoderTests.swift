import CameraControlTestSupport
import CameraControlWire
import FirmwareCore
import Testing

/// What the firmware's frame decoder (`cc_frame`) reported for one delimiter: its result and, for a
/// good frame, the body (envelope and payload, the check removed).
struct FirmwareFrame: Equatable, CustomStringConvertible {
    var result: cc_frame_result_t
    var body: [UInt8] = []

    var description: String {
        switch result {
        case CC_FRAME_OK: "ok \(body.hex)"
        case CC_FRAME_EMPTY: "empty"
        case CC_FRAME_ERR_FRAMING: "framing"
        case CC_FRAME_ERR_CHECK: "check"
        case CC_FRAME_ERR_OVERSIZED: "oversized"
        default: "result \(result.rawValue)"
        }
    }
}

/// Feeds `chunks` to a fresh firmware decoder, byte by byte as the firmware does, and returns every
/// result other than `CC_FRAME_NEED_MORE`.
func firmwareDecode(_ chunks: [[UInt8]]) -> [FirmwareFrame] {
    var decoder = cc_frame_decoder_t()
    cc_frame_decoder_init(&decoder)
    var frames: [FirmwareFrame] = []
    for chunk in chunks {
        for byte in chunk {
            let result = cc_frame_decoder_feed(&decoder, byte)
            guard result != CC_FRAME_NEED_MORE else { continue }
            var frame = FirmwareFrame(result: result)
            if result == CC_FRAME_OK {
                var length = 0
                if let body = cc_frame_decoder_body(&decoder, &length) {
                    frame.body = Array(UnsafeBufferPointer(start: body, count: length))
                }
            }
            frames.append(frame)
        }
    }
    return frames
}

/// The firmware's decoder against the golden frames, through the same split-invariance verifier as
/// the host's `FrameDecoder`.
@Suite("Firmware frame decoder (cc_frame)")
struct FirmwareFrameDecoderTests {
    /// `CC_FRAME_STUFFED_CAP`: the most stuffed bytes the decoder buffers.
    static let stuffedCapacity = MemoryLayout.size(ofValue: cc_frame_decoder_t().buf)

    /// The body of a vector: its unstuffed bytes without the check.
    static func body(_ vector: GoldenFrame) -> [UInt8] { Array([UInt8](hex: vector.unstuffedHex).dropLast(2)) }

    /// Every vector decodes to its body, however its bytes are split.
    @Test(arguments: GoldenVectors.frames)
    func everyVectorDecodes(vector: GoldenFrame) {
        let frames = DecoderVerifier.verify([UInt8](hex: vector.wireHex), seed: 7, randomSplits: 10, maxChunk: 8) { firmwareDecode($0) }
        #expect(frames == [FirmwareFrame(result: CC_FRAME_OK, body: Self.body(vector))])
    }

    /// Every vector in one stream, with empty frames, garbage, bad checks, truncated and oversized frames
    /// in between: each good frame comes out in order, each bad one is one error, and the host's decoder
    /// accepts exactly the same frames.
    @Test func allVectorsAmongBadFrames() throws {
        let vectors = GoldenVectors.frames
        try #require(!vectors.isEmpty, "cannot read \(GoldenVectors.path.path)")
        var stream: [UInt8] = [0, 0]
        var badFrames = 0
        var badChecks = 0
        for (index, vector) in vectors.enumerated() {
            let wire = [UInt8](hex: vector.wireHex)
            stream += wire
            switch index % 5 {
            case 0: stream += [0x13, 0x37, 0xFF, 0x00]  // not COBS
            case 1:  // a bad check
                var unstuffed = [UInt8](hex: vector.unstuffedHex)
                unstuffed[unstuffed.count - 1] ^= 0x01
                stream += COBS.encode(unstuffed) + [0]
                badChecks += 1
            case 2: stream += Array(wire.prefix(4)) + [0]  // truncated
            case 3: stream += [UInt8](repeating: 0x55, count: Self.stuffedCapacity + 10) + [0]  // oversized
            default: stream += [0, 0, 0]
            }
            badFrames += index % 5 == 4 ? 0 : 1
        }
        let frames = DecoderVerifier.verify(stream, seed: 2024, maxChunk: 64) { firmwareDecode($0) }
        let good = frames.filter { $0.result == CC_FRAME_OK }.map(\.body)
        #expect(good == vectors.map(Self.body))
        let errors = frames.filter { $0.result != CC_FRAME_OK && $0.result != CC_FRAME_EMPTY }
        #expect(errors.count == badFrames)
        #expect(errors.filter { $0.result == CC_FRAME_ERR_CHECK }.count >= badChecks)
        #expect(errors.filter { $0.result == CC_FRAME_ERR_OVERSIZED }.count == (vectors.count + 1) / 5)

        var host = FrameDecoder()
        host.append(stream)
        var hostBodies: [[UInt8]] = []
        while let output = host.next() {
            if case .packet(let packet) = output { hostBodies.append(Array(try PacketEncoder.encodeUnstuffed(packet).dropLast(2))) }
        }
        #expect(hostBodies == good)
    }
}
