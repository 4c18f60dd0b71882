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
    /// A batch from decoded samples, as 4-byte records in ``samples`` (what every session gets below v1.2), or
    /// delta-coded in ``deltaSamples`` when `deltaCoded` (``RawSampleDeltaCoding``, v1.2).
    ///
    /// `buttons`, when not empty, holds the buttons' raw levels at each sample (one per sample), coded in
    /// ``buttonLevels`` (``RawButtonLevels/encode(_:)``).
    public init(
        firstTimestampMicros: UInt64, sampleIntervalMicros: UInt32, samples: [RawSample], droppedBefore: UInt32 = 0,
        deltaCoded: Bool = false, buttons: [RawButtonLevels] = []
    ) {
        self.init(
            firstTimestampMicros: firstTimestampMicros, sampleIntervalMicros: sampleIntervalMicros,
            samples: deltaCoded ? [] : samples.flatMap(\.recordBytes), droppedBefore: droppedBefore,
            deltaSamples: deltaCoded ? RawSampleDeltaCoding.encode(samples) : [],
            buttonLevels: RawButtonLevels.encode(buttons))
    }

    /// The buttons' raw levels at each of ``decodedSamples`` (v1.2, ``buttonLevels``): all up where the batch
    /// carries no entry. Entries out of order or past the last sample are ignored from the first such one (the
    /// batch ``isMalformed``).
    public var decodedButtonLevels: [RawButtonLevels] {
        RawButtonLevels.decodePrefix(buttonLevels, sampleCount: decodedSamples.count).levels
    }

    /// The samples, from ``samples``' 4-byte records or, when the batch came delta-coded (v1.2), from
    /// ``deltaSamples``: the same values either way. A malformed batch yields the samples before the fault
    /// (a trailing partial record, or a delta coding that stops mid-sample or leaves the ranges), see
    /// ``isMalformed``.
    public var decodedSamples: [RawSample] {
        if !deltaSamples.isEmpty {
            return RawSampleDeltaCoding.decodePrefix(deltaSamples).samples
        }
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

    /// True when the batch is malformed: a partial record, a delta coding that does not decode, samples in
    /// both fields (PROTOCOL.md §7 allows one), or button levels out of order or past the last sample.
    public var isMalformed: Bool {
        if !buttonLevels.isEmpty, RawButtonLevels.decodePrefix(buttonLevels, sampleCount: decodedSamples.count).error != nil {
            return true
        }
        if deltaSamples.isEmpty { return hasPartialRecord }
        return !samples.isEmpty || RawSampleDeltaCoding.decodePrefix(deltaSamples).error != nil
    }

    /// The device time of the sample at `index`.
    public func timestampMicros(ofSample index: Int) -> UInt64 {
        firstTimestampMicros &+ UInt64(sampleIntervalMicros) &* UInt64(max(0, index))
    }
}

/// The delta coding of ``RawSampleBatch/deltaSamples`` (protocol v1.2, docs/PROTOCOL.md §7): each sample against
/// the one before it (the first against force 0, position 0), with `zigzag(d)` = 2d for d ≥ 0, −2d − 1 below.
///
/// ```
/// +--------------------------------------------------+-----------------------------------+
/// | varint  zigzag(Δforce) × 4 + moved × 2 + touch    | varint  zigzag(Δposition)         |
/// +--------------------------------------------------+-----------------------------------+
///                                                       only when moved (position changed)
/// ```
public enum RawSampleDeltaCoding {
    /// The delta coding of `samples`.
    public static func encode(_ samples: [RawSample]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(samples.count * 2)
        var force: Int32 = 0
        var position: Int32 = 0
        for sample in samples {
            let newForce = Int32(sample.forceMillinewtons)
            let newPosition = Int32(sample.position)
            let moved: UInt32 = newPosition != position ? 1 : 0
            appendVarint(zigzag(newForce - force) * 4 + moved * 2 + (sample.isTouched ? 1 : 0), to: &out)
            if moved == 1 { appendVarint(zigzag(newPosition - position), to: &out) }
            force = newForce
            position = newPosition
        }
        return out
    }

    /// The samples `bytes` code.
    /// - Throws: ``WireError`` `malformedMessage` when a varint is cut short or longer than 5 bytes,
    ///   `invalidValue` when a force leaves 0…65535 or a position 0…32767.
    public static func decode(_ bytes: [UInt8]) throws(WireError) -> [RawSample] {
        let result = decodePrefix(bytes)
        if let error = result.error { throw error }
        return result.samples
    }

    /// The samples decoded up to the first fault, and that fault (nil when `bytes` decode whole).
    static func decodePrefix(_ bytes: [UInt8]) -> (samples: [RawSample], error: WireError?) {
        var samples: [RawSample] = []
        var index = 0
        var force: Int64 = 0
        var position: Int64 = 0
        while index < bytes.count {
            guard let head = readVarint(bytes, &index) else {
                return (samples, WireError(.malformedMessage, "delta_samples: sample \(samples.count) is cut short"))
            }
            force += unzigzag(head >> 2)
            if head & 2 != 0 {
                guard let delta = readVarint(bytes, &index) else {
                    return (samples, WireError(.malformedMessage, "delta_samples: sample \(samples.count)'s position is cut short"))
                }
                position += unzigzag(delta)
            }
            guard (0...0xFFFF).contains(force), (0...Int64(RawSample.maxPosition)).contains(position) else {
                return (
                    samples,
                    WireError(.invalidValue, "delta_samples: sample \(samples.count) has force \(force) mN, position \(position)")
                )
            }
            samples.append(
                RawSample(forceMillinewtons: UInt16(force), position: UInt16(position), isTouched: head & 1 != 0))
        }
        return (samples, nil)
    }

    private static func zigzag(_ value: Int32) -> UInt32 {
        value >= 0 ? UInt32(value) * 2 : UInt32(-(value + 1)) * 2 + 1
    }

    private static func unzigzag(_ value: UInt64) -> Int64 {
        value & 1 == 0 ? Int64(value >> 1) : -Int64(value >> 1) - 1
    }

    private static func appendVarint(_ value: UInt32, to out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    /// A varint of at most 5 bytes (32 bits), or nil when cut short or longer.
    private static func readVarint(_ bytes: [UInt8], _ index: inout Int) -> UInt64? {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 35, by: 7) {
            guard index < bytes.count else { return nil }
            let byte = bytes[index]
            index += 1
            value |= UInt64(byte & 0x7F) << UInt64(shift)
            if byte & 0x80 == 0 { return value }
        }
        return nil
    }
}

/// The buttons' raw levels with one raw sample, before the device debounces them: the bits of
/// ``RawSampleBatch/buttonLevels`` (protocol v1.2, docs/PROTOCOL.md §7), which are the firmware's
/// `CC_BUTTON_*` bits.
///
/// A batch codes them as changes, one entry `sample_index × 16 + levels` for its first sample when any level
/// is 1 and one for every later sample whose levels differ from the sample before it; no entry means every
/// button stayed up.
public struct RawButtonLevels: OptionSet, Hashable, Sendable {
    /// The bits: 1 volume up, 2 volume down, 4 action button, 8 the full-press switch.
    public let rawValue: UInt8

    /// Levels from their bits; only the low four mean anything.
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x0F }

    /// The volume-up button is down.
    public static let volumeUp = RawButtonLevels(rawValue: 1)
    /// The volume-down button is down.
    public static let volumeDown = RawButtonLevels(rawValue: 2)
    /// The action button is down.
    public static let actionButton = RawButtonLevels(rawValue: 4)
    /// The Camera Control's full-press switch is closed (boards that have one).
    public static let shutterSwitch = RawButtonLevels(rawValue: 8)

    /// The entries of ``RawSampleBatch/buttonLevels`` for these levels, one per sample (canonical: only
    /// changes, the first sample's only when not all up).
    public static func encode(_ levels: [RawButtonLevels]) -> [UInt32] {
        var entries: [UInt32] = []
        var previous = RawButtonLevels()
        for (index, level) in levels.enumerated() where level != previous {
            entries.append(UInt32(index) * 16 + UInt32(level.rawValue))
            previous = level
        }
        return entries
    }

    /// The levels at each of `sampleCount` samples that `entries` code.
    /// - Throws: ``WireError`` `invalidValue` for an entry whose sample index does not follow the one before it
    ///   or is not below `sampleCount`.
    public static func decode(_ entries: [UInt32], sampleCount: Int) throws(WireError) -> [RawButtonLevels] {
        let result = decodePrefix(entries, sampleCount: sampleCount)
        if let error = result.error { throw error }
        return result.levels
    }

    /// The levels, every sample's, with the entries up to the first fault applied, and that fault.
    static func decodePrefix(_ entries: [UInt32], sampleCount: Int) -> (levels: [RawButtonLevels], error: WireError?) {
        var levels: [RawButtonLevels] = []
        levels.reserveCapacity(max(0, sampleCount))
        var current = RawButtonLevels()
        var next = 0
        var error: WireError?
        for (number, entry) in entries.enumerated() {
            let index = Int(entry >> 4)
            guard index >= next, index < sampleCount else {
                error = WireError(
                    .invalidValue,
                    "button_levels: entry \(number) is for sample \(index) of \(sampleCount)"
                        + (index < next ? ", not after the entry before it" : ""))
                break
            }
            while levels.count < index { levels.append(current) }
            current = RawButtonLevels(rawValue: UInt8(entry & 0x0F))
            next = index + 1
        }
        while levels.count < sampleCount { levels.append(current) }
        return (levels, error)
    }
}
