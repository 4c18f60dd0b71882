import CameraControlTestSupport
import Testing

@testable import CameraControlWire

@Suite struct COBSTests {
    /// Cheshire & Baker's and Wikipedia's published examples, plus edge cases of our own.
    @Test(arguments: [
        ("", "01"),
        ("00", "0101"),
        ("0000", "010101"),
        ("00110000", "0102110101"), ("001100", "01021101"),
        ("11220033", "0311220233"),
        ("11223344", "0511223344"),
        ("11000000", "0211010101"),
        ("0000000000", "010101010101"),
    ])
    func knownVectors(plainHex: String, stuffedHex: String) throws {
        let plain = [UInt8](hex: plainHex)
        #expect(COBS.encode(plain).hex == stuffedHex)
        #expect(try COBS.decode([UInt8](hex: stuffedHex)) == plain)
    }

    /// 254 non-zero bytes fill one group exactly (code 0xFF, no trailing code); 255 need a second group;
    /// a leading zero then 254 non-zero bytes.
    @Test func longNonZeroRuns() throws {
        let run254 = [UInt8](1...254)
        #expect(COBS.encode(run254) == [0xFF] + run254)
        let run255 = [UInt8](1...255)
        #expect(COBS.encode(run255) == [0xFF] + [UInt8](1...254) + [0x02, 0xFF])
        let zeroThen254 = [0] + run254
        #expect(COBS.encode(zeroThen254) == [0x01, 0xFF] + run254)
        let run254ThenZero = run254 + [0]
        #expect(COBS.encode(run254ThenZero) == [0xFF] + run254 + [0x01, 0x01])
        for plain in [run254, run255, zeroThen254, run254ThenZero] {
            #expect(try COBS.decode(COBS.encode(plain)) == plain)
        }
        // The redundant trailing 0x01 some encoders emit after a full group decodes the same.
        #expect(try COBS.decode([0xFF] + run254 + [0x01]) == run254)
    }

    /// All zeros: one code byte per zero plus one, never a zero in the output.
    @Test(arguments: [1, 2, 253, 254, 255, 1000])
    func allZeros(count: Int) throws {
        let plain = [UInt8](repeating: 0, count: count)
        let stuffed = COBS.encode(plain)
        #expect(stuffed == [UInt8](repeating: 1, count: count + 1))
        #expect(try COBS.decode(stuffed) == plain)
    }

    /// Random data of every size class round-trips, never contains a zero when stuffed and costs at most
    /// ceil(n/254) bytes.
    @Test func randomRoundTrips() throws {
        var rng = SeededGenerator(seed: 254)
        for _ in 0..<500 {
            let count = Int.random(in: 1...1500, using: &rng)
            let zeroChance = Int.random(in: 0...3, using: &rng)  // 0: no zeros … 3: many zeros
            let plain = (0..<count).map { _ in
                zeroChance > 0 && Int.random(in: 0..<(8 >> zeroChance), using: &rng) == 0 ? 0 : UInt8.random(in: 1...255, using: &rng)
            }
            let stuffed = COBS.encode(plain)
            #expect(!stuffed.contains(0))
            #expect(stuffed.count <= count + (count + 253) / 254)
            #expect(stuffed.count <= COBS.maxEncodedCount(count))
            #expect(try COBS.decode(stuffed) == plain)
        }
    }

    /// The worst case (no zeros at all) reaches exactly n + ceil(n/254): for 1024 bytes, 5 extra.
    @Test(arguments: [1, 253, 254, 255, 508, 509, 1024, 4093])
    func worstCaseOverhead(count: Int) {
        let plain = (0..<count).map { UInt8(1 + $0 % 255) }
        let stuffed = COBS.encode(plain)
        #expect(stuffed.count == count + (count + 253) / 254)
        if count == 1024 { #expect(stuffed.count - count == 5) }
    }

    /// Stuffed data containing a zero, or ending inside a group, is a framing error, not a crash.
    @Test(arguments: ["00", "0311", "05112233", "0211000101", "ff01"])
    func malformed(stuffedHex: String) {
        #expect(throws: WireError.self) { try COBS.decode([UInt8](hex: stuffedHex)) }
        do {
            _ = try COBS.decode([UInt8](hex: stuffedHex))
        } catch {
            #expect(error.code == .framing)
        }
    }
}
