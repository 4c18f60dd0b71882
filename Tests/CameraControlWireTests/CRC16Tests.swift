import CameraControlTestSupport
import Testing

@testable import CameraControlWire

@Suite struct CRC16Tests {
    /// Known values of CRC-16/CCITT-FALSE (cross-checked with Python's `binascii.crc_hqx(data, 0xFFFF)`).
    @Test(
        arguments: [
            (Array("123456789".utf8), UInt16(0x29B1)),
            ([], 0xFFFF),
            (Array("A".utf8), 0xB915),
            (Array(0...255), 0x3FBD),
            ([0, 0, 0, 0], 0x84C0),
            ([UInt8](repeating: 0xFF, count: 8), 0x97DF),
        ] as [([UInt8], UInt16)])
    func knownValues(bytes: [UInt8], expected: UInt16) {
        #expect(CRC16.checksum(bytes) == expected)
    }

    /// The table agrees with a bit-at-a-time reference on random data, and incremental updates agree
    /// with one-shot checksums whatever the split.
    @Test func tableMatchesBitwiseReferenceAndIncremental() {
        func reference(_ bytes: [UInt8]) -> UInt16 {
            var crc: UInt16 = 0xFFFF
            for byte in bytes {
                crc ^= UInt16(byte) << 8
                for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
            }
            return crc
        }
        var rng = SeededGenerator(seed: 16)
        for _ in 0..<200 {
            let bytes = [UInt8].random(count: Int.random(in: 0...300, using: &rng), using: &rng)
            #expect(CRC16.checksum(bytes) == reference(bytes))
            let split = Int.random(in: 0...bytes.count, using: &rng)
            var crc = CRC16()
            crc.update(bytes[..<split])
            for byte in bytes[split...] { crc.update(byte) }
            #expect(crc.value == reference(bytes))
        }
    }

    /// Appending the CRC little-endian... is what the frame does; a frame's check then verifies.
    @Test func checkOfEmptyInputIsInitialValue() {
        #expect(CRC16().value == CRC16.initialValue)
    }
}
