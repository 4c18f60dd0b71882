import CameraControlWire
import FirmwareSim

/// The firmware's counters (`cameracontrol.v1.Counters`, read directly from the core) plus the input
/// pipeline's queue overflows.
///
/// Every counter of the schema reads as a property (`counters.txDropped`); the fields are generated
/// from `Proto/cameracontrol/v1/diagnostics.proto`, so a new counter needs no edit here.
@dynamicMemberLookup
public struct FirmwareCounters: Hashable, Sendable {
    /// The core's counters as the schema's message (`uptimeMicros` stays 0: the core derives it from its
    /// clock only when it answers GetCounters).
    public var counters: Counters
    /// Input events lost because the pipeline's queue was full (a bug if non-zero).
    public var inputQueueOverflows: UInt32

    init(_ c: cc_counters_t, uptimeMicros: UInt64 = 0, inputQueueOverflows: UInt32) {
        counters = Counters(firmware: c, uptimeMicros: uptimeMicros)
        self.inputQueueOverflows = inputQueueOverflows
    }

    /// A counter of the schema, e.g. `framesReceived`.
    public subscript<Value>(dynamicMember keyPath: KeyPath<Counters, Value>) -> Value { counters[keyPath: keyPath] }
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
