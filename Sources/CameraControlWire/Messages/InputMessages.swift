import CameraControlProtoC

extension InputEvent: WireMessage, CBackedMessage {
    /// An event with every field zero or unspecified.
    public init() { self.init(timestampMicros: 0, kind: .unspecified, source: .unspecified) }

    /// `cameracontrol.v1.InputEvent`.
    public static var protoMessageName: String { "cameracontrol.v1.InputEvent" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__InputEvent
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__input_event__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__input_event__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int {
        cameracontrol__v1__input_event__pack(m, out)
    }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__input_event__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__input_event__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) {
        m.timestamp_us = timestampMicros
        m.kind = kind.c
        m.source = source.c
        m.force_mn = forceMillinewtons
        m.position = position
        m.peak_force_mn = peakForceMillinewtons
        m.event_number = eventNumber
    }
    init(c m: CMessage) {
        self.init(
            timestampMicros: m.timestamp_us, kind: InputEventKind(c: m.kind), source: InputSource(c: m.source),
            forceMillinewtons: m.force_mn, position: m.position, peakForceMillinewtons: m.peak_force_mn,
            eventNumber: m.event_number)
    }
}

/// Starts the input event stream (`cameracontrol.v1.StreamInputEventsRequest`; no fields).
public struct StreamInputEventsRequest: WireMessage, CBackedMessage {
    /// The request.
    public init() {}

    /// `cameracontrol.v1.StreamInputEventsRequest`.
    public static var protoMessageName: String { "cameracontrol.v1.StreamInputEventsRequest" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__StreamInputEventsRequest
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__stream_input_events_request__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__stream_input_events_request__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int {
        cameracontrol__v1__stream_input_events_request__pack(m, out)
    }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__stream_input_events_request__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__stream_input_events_request__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) {}
    init(c m: CMessage) {}
}

/// Starts the raw sample stream (`cameracontrol.v1.StreamRawSamplesRequest`).
public struct StreamRawSamplesRequest: WireMessage, CBackedMessage {
    /// Samples per batch message; 0 lets the device choose.
    public var samplesPerBatch: UInt32

    /// Device-chosen batch size.
    public init() { self.init(samplesPerBatch: 0) }
    /// A request for batches of `samplesPerBatch` samples.
    public init(samplesPerBatch: UInt32) { self.samplesPerBatch = samplesPerBatch }

    /// `cameracontrol.v1.StreamRawSamplesRequest`.
    public static var protoMessageName: String { "cameracontrol.v1.StreamRawSamplesRequest" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__StreamRawSamplesRequest
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__stream_raw_samples_request__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__stream_raw_samples_request__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int {
        cameracontrol__v1__stream_raw_samples_request__pack(m, out)
    }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__stream_raw_samples_request__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__stream_raw_samples_request__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) { m.samples_per_batch = samplesPerBatch }
    init(c m: CMessage) { self.init(samplesPerBatch: m.samples_per_batch) }
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

/// A batch of consecutive raw samples, best-effort (`cameracontrol.v1.RawSampleBatch`).
public struct RawSampleBatch: WireMessage, CBackedMessage {
    /// Device time of the first sample, microseconds since boot.
    public var firstTimestampMicros: UInt64
    /// Time between samples, microseconds.
    public var sampleIntervalMicros: UInt32
    /// The packed sample records, 4 bytes each (see ``RawSample``); ``decodedSamples`` decodes them.
    public var samples: [UInt8]
    /// Samples the device dropped before this batch because the link was full.
    public var droppedBefore: UInt32

    /// An empty batch.
    public init() { self.init(firstTimestampMicros: 0, sampleIntervalMicros: 0, samples: [UInt8]()) }

    /// A batch from packed records.
    public init(firstTimestampMicros: UInt64, sampleIntervalMicros: UInt32, samples: [UInt8], droppedBefore: UInt32 = 0) {
        self.firstTimestampMicros = firstTimestampMicros
        self.sampleIntervalMicros = sampleIntervalMicros
        self.samples = samples
        self.droppedBefore = droppedBefore
    }

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

    /// `cameracontrol.v1.RawSampleBatch`.
    public static var protoMessageName: String { "cameracontrol.v1.RawSampleBatch" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__RawSampleBatch
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__raw_sample_batch__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__raw_sample_batch__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int {
        cameracontrol__v1__raw_sample_batch__pack(m, out)
    }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__raw_sample_batch__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__raw_sample_batch__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) {
        m.first_timestamp_us = firstTimestampMicros
        m.sample_interval_us = sampleIntervalMicros
        m.samples = arena.bytes(samples)
        m.dropped_before = droppedBefore
    }
    init(c m: CMessage) {
        self.init(
            firstTimestampMicros: m.first_timestamp_us, sampleIntervalMicros: m.sample_interval_us,
            samples: CValue.bytes(m.samples), droppedBefore: m.dropped_before)
    }
}
