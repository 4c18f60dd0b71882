import CameraControlWire
import Testing

@testable import CameraControlTools

/// `camctl decode -`'s input: hex text read chunk by chunk, through a bound.
@Suite struct HexFrameReaderTests {
    @Test("frames are cut at each 00, whatever the spacing, commas and 0x prefixes, across chunk boundaries")
    func framesAcrossChunks() throws {
        let text = Array("03 08 05 01 03 f3 ea 00\n0x02,0x01,0x00\r\n  0A0B00 07".utf8)
        for split in 0...text.count {
            var reader = HexFrameReader()
            var frames = try reader.feed(text[..<split])
            frames += try reader.feed(text[split...])
            frames += try reader.finish()
            #expect(
                frames.map(\.bytes) == [
                    [0x03, 0x08, 0x05, 0x01, 0x03, 0xF3, 0xEA, 0x00], [0x02, 0x01, 0x00], [0x0A, 0x0B, 0x00], [0x07],
                ],
                "split at \(split)")
        }
    }

    @Test("/dev/zero's first byte stops the reading: not hex, at byte 0, no frames before it")
    func zerosStopAtOnce() throws {
        var reader = HexFrameReader()
        let error = try #require(throws: RecordingError.self) { try reader.feed([UInt8](repeating: 0, count: 4096)) }
        #expect(error.description == "byte 0 of the hex text is 0x00, not a hex digit or separator (0 frames before it)")
        #expect(reader.bytesRead == 1)
    }

    @Test("a bad character after good frames names its offset and the frames before it")
    func badCharacterAfterFrames() throws {
        var reader = HexFrameReader()
        let error = try #require(throws: RecordingError.self) { try reader.feed(Array("02 01 00 zz".utf8)) }
        #expect(error.description == "byte 9 of the hex text is 'z', not a hex digit or separator (1 frames before it)")
    }

    @Test("a pcapng recording piped in is named as one: its block type, then a length byte that is no hex")
    func recordingPipedIn() throws {
        var reader = HexFrameReader()
        // A Section Header Block's type (0A 0D 0D 0A: four separators here), then its length, 28.
        let error = try #require(throws: RecordingError.self) { try reader.feed([0x0A, 0x0D, 0x0D, 0x0A, 28, 0, 0, 0]) }
        #expect(error.description.hasSuffix("; this is a pcapng recording: give its path (decode FILE.pcapng)"), "\(error)")
        // The same byte after other separators is only not hex.
        var other = HexFrameReader()
        let plain = try #require(throws: RecordingError.self) { try other.feed([0x0A, 0x20, 0x0D, 0x0A, 28]) }
        #expect(plain.description == "byte 4 of the hex text is 0x1C, not a hex digit or separator (0 frames before it)")
    }

    @Test("endless good hex stops at the input bound, memory flat")
    func inputBound() throws {
        var reader = HexFrameReader(maxInputBytes: 3000)
        var frames = 0
        let error = try #require(throws: RecordingError.self) {
            for _ in 0..<1000 { frames += try reader.feed(Array("01 00 ".utf8)).count }
        }
        #expect(error.description == "more than 3000 bytes of hex text (500 frames); not read further")
        #expect(frames == 500)
        #expect(reader.bytesRead == 3000)
    }

    @Test("an odd number of hex digits is an error at the end")
    func oddDigits() throws {
        var reader = HexFrameReader()
        _ = try reader.feed(Array("01 0".utf8))
        #expect(throws: RecordingError.self) { try reader.finish() }
    }
}
