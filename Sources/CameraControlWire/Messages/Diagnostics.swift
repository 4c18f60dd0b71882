import CameraControlProtoC

/// Link and call counters since boot or the last ResetCounters (`cameracontrol.v1.Counters`).
public struct Counters: WireMessage, CBackedMessage {
    /// Time since boot, microseconds.
    public var uptimeMicros: UInt64 = 0
    /// Frames received.
    public var framesReceived: UInt32 = 0
    /// Frames sent.
    public var framesSent: UInt32 = 0
    /// Bytes received.
    public var bytesReceived: UInt32 = 0
    /// Bytes sent.
    public var bytesSent: UInt32 = 0
    /// Frames whose check failed.
    public var checkErrors: UInt32 = 0
    /// Frames that could not be unstuffed, or were shorter than an envelope.
    public var framingErrors: UInt32 = 0
    /// Frames longer than max_frame_bytes, dropped up to the next delimiter.
    public var oversizedFrames: UInt32 = 0
    /// Frames of an unknown packet type.
    public var unknownPacketTypes: UInt32 = 0
    /// Calls of an unknown or unimplemented method.
    public var unimplementedCalls: UInt32 = 0
    /// Requests whose payload did not parse or was invalid.
    public var invalidArguments: UInt32 = 0
    /// Calls cancelled by the host.
    public var cancelledCalls: UInt32 = 0
    /// Reliable packets sent again for want of an acknowledgement.
    public var retransmissions: UInt32 = 0
    /// Reliable packets received more than once and dropped.
    public var duplicatesDropped: UInt32 = 0
    /// Packets missing from the peer's sequence.
    public var sequenceGaps: UInt32 = 0
    /// Times the link was declared dead for want of heartbeats.
    public var heartbeatTimeouts: UInt32 = 0
    /// Calls refused because max_concurrent_calls were in flight.
    public var callsRefused: UInt32 = 0
    /// Best-effort messages dropped because the transmit buffer was full.
    public var txDropped: UInt32 = 0
    /// Reliable packets dropped after the last retransmission went unacknowledged.
    public var reliableGivenUp: UInt32 = 0
    /// Reliable packets sent once, unprotected, because every retransmission slot was taken.
    public var reliableUnprotected: UInt32 = 0

    /// All counters zero.
    public init() {}

    /// `cameracontrol.v1.Counters`.
    public static var protoMessageName: String { "cameracontrol.v1.Counters" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__Counters
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__counters__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__counters__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int { cameracontrol__v1__counters__pack(m, out) }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__counters__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__counters__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) {
        m.uptime_us = uptimeMicros
        m.frames_received = framesReceived
        m.frames_sent = framesSent
        m.bytes_received = bytesReceived
        m.bytes_sent = bytesSent
        m.check_errors = checkErrors
        m.framing_errors = framingErrors
        m.oversized_frames = oversizedFrames
        m.unknown_packet_types = unknownPacketTypes
        m.unimplemented_calls = unimplementedCalls
        m.invalid_arguments = invalidArguments
        m.cancelled_calls = cancelledCalls
        m.retransmissions = retransmissions
        m.duplicates_dropped = duplicatesDropped
        m.sequence_gaps = sequenceGaps
        m.heartbeat_timeouts = heartbeatTimeouts
        m.calls_refused = callsRefused
        m.tx_dropped = txDropped
        m.reliable_given_up = reliableGivenUp
        m.reliable_unprotected = reliableUnprotected
    }
    init(c m: CMessage) {
        uptimeMicros = m.uptime_us
        framesReceived = m.frames_received
        framesSent = m.frames_sent
        bytesReceived = m.bytes_received
        bytesSent = m.bytes_sent
        checkErrors = m.check_errors
        framingErrors = m.framing_errors
        oversizedFrames = m.oversized_frames
        unknownPacketTypes = m.unknown_packet_types
        unimplementedCalls = m.unimplemented_calls
        invalidArguments = m.invalid_arguments
        cancelledCalls = m.cancelled_calls
        retransmissions = m.retransmissions
        duplicatesDropped = m.duplicates_dropped
        sequenceGaps = m.sequence_gaps
        heartbeatTimeouts = m.heartbeat_timeouts
        callsRefused = m.calls_refused
        txDropped = m.tx_dropped
        reliableGivenUp = m.reliable_given_up
        reliableUnprotected = m.reliable_unprotected
    }
}

/// Reads the counters (`cameracontrol.v1.GetCountersRequest`; no fields).
public struct GetCountersRequest: WireMessage, CBackedMessage {
    /// The request.
    public init() {}

    /// `cameracontrol.v1.GetCountersRequest`.
    public static var protoMessageName: String { "cameracontrol.v1.GetCountersRequest" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__GetCountersRequest
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__get_counters_request__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__get_counters_request__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int {
        cameracontrol__v1__get_counters_request__pack(m, out)
    }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__get_counters_request__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__get_counters_request__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) {}
    init(c m: CMessage) {}
}

/// Resets the counters (`cameracontrol.v1.ResetCountersRequest`; no fields). The firmware core answers
/// the counters as they were before the reset (`cc_device.h`); the schema itself does not say.
public struct ResetCountersRequest: WireMessage, CBackedMessage {
    /// The request.
    public init() {}

    /// `cameracontrol.v1.ResetCountersRequest`.
    public static var protoMessageName: String { "cameracontrol.v1.ResetCountersRequest" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__ResetCountersRequest
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__reset_counters_request__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__reset_counters_request__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int {
        cameracontrol__v1__reset_counters_request__pack(m, out)
    }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__reset_counters_request__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__reset_counters_request__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) {}
    init(c m: CMessage) {}
}
