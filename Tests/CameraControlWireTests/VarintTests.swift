import CameraControlTestSupport
import Testing

@testable import CameraControlWire

@Suite struct VarintTests {
    @Test(arguments: [
        (UInt32(0), "00"), (1, "01"), (127, "7f"), (128, "8001"), (300, "ac02"), (16383, "ff7f"), (16384, "808001"),
        (0x0FFF_FFFF, "ffffff7f"), (0x1000_0000, "8080808001"), (UInt32.max, "ffffffff0f"),
    ])
    func roundTrip(value: UInt32, hex: String) throws {
        #expect(Varint.encode(value).hex == hex)
        #expect(Varint.size(of: value) == hex.count / 2)
        let decoded = try Varint.decode([UInt8](hex: hex) + [0xAA])  // trailing bytes are not part of it
        #expect(decoded.value == value)
        #expect(decoded.length == hex.count / 2)
    }

    /// Truncated (no final byte), longer than five bytes, or at least 2³²: framing errors.
    @Test(arguments: ["", "80", "ffffffff", "8080808080", "808080808001", "ffffffff10", "ffffffff7f", "8080808010"])
    func rejected(hex: String) {
        do {
            let decoded = try Varint.decode([UInt8](hex: hex))
            Issue.record("decoded \(decoded) from \(hex)")
        } catch {
            #expect(error.code == .framing)
        }
    }

    /// A redundant (non-minimal) encoding within five bytes is accepted: LEB128 allows it.
    @Test func redundantEncodingAccepted() throws {
        let decoded = try Varint.decode([0x81, 0x80, 0x80, 0x80, 0x00])
        #expect(decoded.value == 1)
        #expect(decoded.length == 5)
    }
}
