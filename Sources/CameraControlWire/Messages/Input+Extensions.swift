extension InputEventKind {
    /// True for the kinds a device sends reliably (presses, buttons, clicks).
    public var isReliable: Bool {
        switch self {
        case .lightPressDown, .lightPressUp, .fullPressDown, .fullPressUp, .buttonDown, .buttonUp, .remoteClick: true
        default: false
        }
    }
}

/// One raw conditioned sample: a 4-byte little-endian record of ``RawSampleBatch/samples``.
///
/// ```
///  bit 31    30 … 16            15 … 0
/// +-------+-----------------+--------------------------+
/// | touch | slide position  | force, mN (saturating)   |
/// +-------+-----------------+--------------------------+
/// ```
public struct RawSample: Hashable, Sendable {
    /// Bytes per record.
    public static let recordBytes = 4
    /// The largest position a record carries (15 bits).
    public static let maxPosition: UInt16 = 0x7FFF

    /// Force in millinewtons, saturated at 65535.
    public var forceMillinewtons: UInt16
    /// Slide position (15 bits).
    public var position: UInt16
    /// True while the strip is touched.
    public var isTouched: Bool

    /// A sample; `position` is masked to 15 bits.
    public init(forceMillinewtons: UInt16, position: UInt16, isTouched: Bool) {
        self.forceMillinewtons = forceMillinewtons
        self.position = position & Self.maxPosition
        self.isTouched = isTouched
    }

    /// Decodes a record from its 32-bit little-endian value.
    public init(record: UInt32) {
        self.init(
            forceMillinewtons: UInt16(truncatingIfNeeded: record),
            position: UInt16(truncatingIfNeeded: record >> 16) & Self.maxPosition,
            isTouched: record & 0x8000_0000 != 0)
    }

    /// The record as a 32-bit value.
    public var record: UInt32 {
        let touch: UInt32 = isTouched ? 0x8000_0000 : 0
        return UInt32(forceMillinewtons) | UInt32(position & Self.maxPosition) << 16 | touch
    }

    /// The record's four bytes, little-endian.
    public var recordBytes: [UInt8] {
        let value = record
        return [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: value >> $0) }
    }
}

extension RawSampleBatch {
    /// A batch from decoded samples.
    public init(
        firstTimestampMicros: UInt64, sampleIntervalMicros: UInt32, samples: [RawSample], droppedBefore: UInt32 = 0
    ) {
        self.init(
            firstTimestampMicros: firstTimestampMicros, sampleIntervalMicros: sampleIntervalMicros,
            samples: samples.flatMap(\.recordBytes), droppedBefore: droppedBefore)
    }

    /// The samples as records; a trailing partial record (fewer than 4 bytes) is ignored, see
    /// ``hasPartialRecord``.
    public var decodedSamples: [RawSample] {
        let count = samples.count / RawSample.recordBytes
        var decoded: [RawSample] = []
        decoded.reserveCapacity(count)
        for index in 0..<count {
            var record: UInt32 = 0
            for byte in 0..<RawSample.recordBytes {
                record |= UInt32(samples[index * RawSample.recordBytes + byte]) << UInt32(8 * byte)
            }
            decoded.append(RawSample(record: record))
        }
        return decoded
    }

    /// True when ``samples`` is not a whole number of 4-byte records (a malformed batch).
    public var hasPartialRecord: Bool { samples.count % RawSample.recordBytes != 0 }

    /// The device time of the sample at `index`.
    public func timestampMicros(ofSample index: Int) -> UInt64 {
        firstTimestampMicros &+ UInt64(sampleIntervalMicros) &* UInt64(max(0, index))
    }
}
