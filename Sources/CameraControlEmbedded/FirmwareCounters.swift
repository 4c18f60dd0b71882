import FirmwareSim

/// The firmware's counters (`cameracontrol.v1.Counters`, read directly from the core) plus the input
/// pipeline's queue overflows.
public struct FirmwareCounters: Hashable, Sendable {
    /// Frames that decoded and passed the check.
    public var framesReceived: UInt32
    /// Frames the device sent.
    public var framesSent: UInt32
    /// Bytes the device read from its UART.
    public var bytesReceived: UInt32
    /// Bytes the device wrote to its UART.
    public var bytesSent: UInt32
    /// Frames dropped for a bad CRC.
    public var checkErrors: UInt32
    /// Frames too short for their envelope, or bad COBS.
    public var framingErrors: UInt32
    /// Frames longer than the device's maximum.
    public var oversizedFrames: UInt32
    /// Packets of an unknown type.
    public var unknownPacketTypes: UInt32
    /// Calls answered UNIMPLEMENTED.
    public var unimplementedCalls: UInt32
    /// Calls answered INVALID_ARGUMENT.
    public var invalidArguments: UInt32
    /// Calls the host cancelled.
    public var cancelledCalls: UInt32
    /// Reliable packets sent again.
    public var retransmissions: UInt32
    /// Reliable packets received twice and dropped.
    public var duplicatesDropped: UInt32
    /// Packets the device saw missing from the host's sequence.
    public var sequenceGaps: UInt32
    /// Times the device declared the link dead.
    public var heartbeatTimeouts: UInt32
    /// Calls refused (too many in flight, duplicate call id).
    public var callsRefused: UInt32
    /// Bytes the device could not hand to its UART.
    public var txDropped: UInt32
    /// Reliable packets dropped after the last retransmission went unacknowledged.
    public var reliableGivenUp: UInt32
    /// Reliable packets sent once, unprotected, because every retransmission slot was taken.
    public var reliableUnprotected: UInt32
    /// Input events lost because the pipeline's queue was full (a bug if non-zero).
    public var inputQueueOverflows: UInt32

    init(_ c: cc_counters_t, inputQueueOverflows: UInt32) {
        framesReceived = c.frames_received
        framesSent = c.frames_sent
        bytesReceived = c.bytes_received
        bytesSent = c.bytes_sent
        checkErrors = c.check_errors
        framingErrors = c.framing_errors
        oversizedFrames = c.oversized_frames
        unknownPacketTypes = c.unknown_packet_types
        unimplementedCalls = c.unimplemented_calls
        invalidArguments = c.invalid_arguments
        cancelledCalls = c.cancelled_calls
        retransmissions = c.retransmissions
        duplicatesDropped = c.duplicates_dropped
        sequenceGaps = c.sequence_gaps
        heartbeatTimeouts = c.heartbeat_timeouts
        callsRefused = c.calls_refused
        txDropped = c.tx_dropped
        reliableGivenUp = c.reliable_given_up
        reliableUnprotected = c.reliable_unprotected
        self.inputQueueOverflows = inputQueueOverflows
    }
}

/// The input pipeline's configuration in force (`cameracontrol.v1.Config`).
public struct InputConfiguration: Hashable, Sendable {
    /// Light press turns on at this force, mN.
    public var lightPressOnMillinewtons: UInt32
    /// Light press turns off below this force, mN.
    public var lightPressOffMillinewtons: UInt32
    /// Full press turns on at this force, mN.
    public var fullPressOnMillinewtons: UInt32
    /// Full press turns off below this force, mN.
    public var fullPressOffMillinewtons: UInt32
    /// Least distance between the two "on" thresholds, mN.
    public var minStageGapMillinewtons: UInt32
    /// Samples per second.
    public var sampleRateHz: UInt32
    /// At most one SLIDE per this interval, ms.
    public var slideIntervalMilliseconds: UInt32
    /// Button debounce, ms.
    public var debounceMilliseconds: UInt32

    init(_ c: cc_input_config_t) {
        lightPressOnMillinewtons = c.light_press_on_mn
        lightPressOffMillinewtons = c.light_press_off_mn
        fullPressOnMillinewtons = c.full_press_on_mn
        fullPressOffMillinewtons = c.full_press_off_mn
        minStageGapMillinewtons = c.min_stage_gap_mn
        sampleRateHz = c.sample_rate_hz
        slideIntervalMilliseconds = c.slide_interval_ms
        debounceMilliseconds = c.debounce_ms
    }
}
