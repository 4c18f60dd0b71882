import Testing

@testable import CameraControlWire

/// PROTOCOL.md §3 claims HD = 4 for codewords up to 32,767 bits. These tests check the algebra behind
/// the claim instead of trusting the citation: the generator is (x + 1)·p(x) with p primitive of degree
/// 15, so every odd-weight error is detected and a two-bit error x^i + x^j is missed only when
/// x^(j−i) ≡ 1 (mod G), i.e. when j − i is a multiple of the period of G.
@Suite("CRC-16 Hamming distance")
struct CRCHammingDistanceTests {
    /// x^n mod G over GF(2), for G = x^16 + 0x1021, computed bit by bit.
    private static func remainders(upTo count: Int) -> [UInt16] {
        var value: UInt16 = 1  // x^0
        var result: [UInt16] = [value]
        for _ in 1...count {
            let carry = value & 0x8000 != 0
            value <<= 1
            if carry { value ^= 0x1021 }
            result.append(value)
        }
        return result
    }

    @Test func theGeneratorHasPeriod32767SoNoTwoBitErrorHidesInA32767BitCodeword() {
        let powers = Self.remainders(upTo: 32_767)
        // The first n > 0 with x^n ≡ 1 is the period.
        let period = powers.indices.dropFirst().first { powers[$0] == 1 }
        #expect(period == 32_767)
    }

    @Test func everyOddWeightErrorIsDetectedBecauseXPlusOneDividesTheGenerator() {
        // (x + 1) divides G iff G(1) = 0 over GF(2), i.e. G has an even number of terms.
        let generator: UInt32 = 0x1_1021
        #expect(generator.nonzeroBitCount % 2 == 0)
        // And concretely: single-bit and three-bit errors in a 4,093-byte frame change the CRC.
        var frame = [UInt8](repeating: 0, count: 4_093)
        for index in frame.indices { frame[index] = UInt8(truncatingIfNeeded: index &* 31 &+ 7) }
        let clean = CRC16.checksum(frame)
        for bit in stride(from: 0, to: frame.count * 8, by: 997) {
            var copy = frame
            copy[bit / 8] ^= UInt8(1 << (bit % 8))
            copy[(bit + 4_001) % frame.count] ^= 0x10
            copy[(bit + 20_011) / 8 % frame.count] ^= 0x02
            #expect(CRC16.checksum(copy) != clean)
        }
    }
}
