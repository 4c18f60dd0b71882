import CameraControlTestSupport
import Testing

@testable import CameraControlWire

/// `RawSampleBatch.button_levels` (protocol v1.2, docs/PROTOCOL.md §7): the buttons' raw levels, one entry
/// `sample_index × 16 + levels` per change.
@Suite struct RawButtonLevelsTests {
    private let samples = (0..<10).map { RawSample(forceMillinewtons: UInt16(100 + $0), position: 0, isTouched: false) }

    @Test("levels code as changes only, the first sample's only when not all up, and decode back per sample")
    func changesRoundTrip() throws {
        let up = RawButtonLevels()
        let vol: RawButtonLevels = .volumeUp
        let both: RawButtonLevels = [.volumeUp, .actionButton]
        let levels = [up, up, vol, up, vol, vol, vol, both, both, up]
        let entries = RawButtonLevels.encode(levels)
        let expected: [UInt32] = [0x21, 0x30, 0x41, 0x75, 0x90]  // sample_index × 16 + levels
        #expect(entries == expected)
        #expect(try RawButtonLevels.decode(entries, sampleCount: 10) == levels)
        // Held from the first sample: an entry at 0; all up throughout: none.
        #expect(RawButtonLevels.encode([vol, vol]) == [1])
        #expect(RawButtonLevels.encode([up, up, up]).isEmpty)
        #expect(try RawButtonLevels.decode([], sampleCount: 3) == [up, up, up])
        // The bits are the firmware's CC_BUTTON_* bits; only the low four mean anything.
        #expect(RawButtonLevels(rawValue: 0xF8) == .shutterSwitch)

        let batch = RawSampleBatch(
            firstTimestampMicros: 0, sampleIntervalMicros: 1_000, samples: samples, deltaCoded: true, buttons: levels)
        #expect(batch.buttonLevels == entries)
        #expect(batch.decodedButtonLevels == levels)
        #expect(!batch.isMalformed)
        let decoded = try RawSampleBatch(serializedBytes: batch.serializedBytes())
        #expect(decoded.decodedButtonLevels == levels)
    }

    @Test("entries out of order, repeated or past the last sample are malformed, named by their entry")
    func badEntriesAreMalformed() {
        for (entries, why) in [
            ([0x31, 0x20], "sample 2 of 10, not after the entry before it"),
            ([0x31, 0x30], "sample 3 of 10, not after the entry before it"),
            ([0xA1], "sample 10 of 10"),
            ([UInt32.max], "of 10"),
        ] as [([UInt32], String)] {
            do {
                _ = try RawButtonLevels.decode(entries, sampleCount: 10)
                Issue.record("\(entries) decoded")
            } catch {
                #expect(error.code == .invalidValue && error.description.contains(why), "\(entries): \(error)")
            }
            let batch = RawSampleBatch(
                firstTimestampMicros: 0, sampleIntervalMicros: 1_000, samples: samples, deltaCoded: false)
            var bad = batch
            bad.buttonLevels = entries
            #expect(bad.isMalformed, "\(entries)")
            #expect(!batch.isMalformed)
            // Every sample still gets a level: the entries before the fault apply.
            #expect(bad.decodedButtonLevels.count == 10)
        }
        var early = RawSampleBatch(firstTimestampMicros: 0, sampleIntervalMicros: 1_000, samples: samples)
        early.buttonLevels = [0x21, 0x10]
        let held: [RawButtonLevels] = [[], []] + Array(repeating: .volumeUp, count: 8)
        #expect(early.decodedButtonLevels == held)
    }
}
