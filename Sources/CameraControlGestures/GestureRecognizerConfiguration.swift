import CameraControlWire

extension GestureRecognizer {
    /// Every threshold and window the recogniser uses, with where each default comes from.
    ///
    /// Apple publishes no timing or distance figures for the Camera Control, so the defaults are borrowed
    /// from comparable systems (Android's `ViewConfiguration`, libinput); see docs/GESTURES.md.
    /// Values are sanitised when used (a zero resolution counts as 1, a non-finite or negative slop as
    /// the default), so no configuration can make the recogniser crash.
    public struct Configuration: Hashable, Sendable {
        /// Longest time from the end of a first light press to the start of a second one that still
        /// makes a double light press, microseconds.
        ///
        /// Default 300 ms: Android's double-tap timeout (`DOUBLE_TAP_TIMEOUT`).
        public var doubleLightPressWindowMicros: UInt64

        /// Shortest time from the end of a first light press to the start of the second one, microseconds.
        /// A second press sooner than this is taken as a bounce of the first and is not a double.
        ///
        /// Default 40 ms: Android's minimum time between the taps of a double tap (`DOUBLE_TAP_MIN_TIME`).
        public var doubleLightPressMinimumGapMicros: UInt64

        /// How long a first light press may be held before it can no longer start a double light press,
        /// microseconds: the first press must be released sooner (held less than this). A light press held
        /// this long or longer is a hold, not a tap, and is never the first half of a double.
        ///
        /// Default 400 ms: the same as the long-press threshold, where a hold begins (Android ends a tap at
        /// its long-press timeout; a press of 400 ms or more is long). The boundary is the AE/AF lock's too:
        /// a light press held exactly 400 ms locks and is not a tap (docs/GESTURES.md, "Decisions").
        public var doubleLightPressMaximumHoldMicros: UInt64

        /// How long a full press or button must be held before `longPressBegan` (click-and-hold), microseconds:
        /// a press held this long or longer is long.
        ///
        /// Default 400 ms: Android's long-press timeout (`DEFAULT_LONG_PRESS_TIMEOUT`, 500 ms before Android 12).
        /// Apple publishes no long-press threshold for capture events.
        public var longPressThresholdMicros: UInt64

        /// How far, as a fraction of the strip (0…1), the finger must move from where it came to rest
        /// before a slide begins.
        ///
        /// Default 0.03: libinput's 1.3 mm tap movement limit on a strip of about 40 mm (1.3 / 40 ≈ 3 %).
        /// ``init(slideResolution:slideLengthMicrometres:)`` computes it from the real strip length.
        public var slideSlopFraction: Double

        /// A slide whose position has not changed for this long ends (`slideEnded` with velocity 0) even
        /// while the finger still touches, microseconds; `nil` ends slides only when the touch ends.
        /// It also keeps a lost (best-effort) touch-up from leaving a slide open forever.
        ///
        /// Default 300 ms: libinput's drag timeout (how long a paused drag still counts as a drag).
        public var slideIdleEndMicros: UInt64?

        /// Time constant of the exponential smoothing applied to slide velocity, microseconds
        /// (each sample moves the estimate by `1 − e^(−Δt/τ)` of the way to the raw velocity; 0 = no smoothing).
        ///
        /// Default 50 ms: chosen here (no published figure); it averages over a few slide reports while
        /// keeping the lag well under the ~100 ms that still feels instantaneous for a UI response.
        public var velocitySmoothingMicros: UInt64

        /// Number of slide positions the device reports (positions run 0 ..< `slideResolution`).
        ///
        /// Default 1024: a placeholder; set it from the device's `Capabilities.slide_resolution`.
        public var slideResolution: UInt32

        /// An event whose device timestamp is this far behind the latest time seen is taken as a device
        /// clock restart (a reboot the host did not notice): the recogniser resets (cancelling what is in
        /// flight) before handling it, microseconds. Smaller reorderings are tolerated.
        ///
        /// Default 2 s: chosen here, far above any retransmission delay of the wire protocol.
        public var clockRestartToleranceMicros: UInt64

        /// Event numbers remembered to drop duplicated events (a retransmitted reliable event). Events
        /// with event number 0 are never treated as duplicates.
        ///
        /// Default 32: the firmware's input queue length (`CC_INPUT_QUEUE_LEN`).
        public var duplicateHistoryLength: Int

        /// The defaults, with every value as documented on its property.
        public init(
            doubleLightPressWindowMicros: UInt64 = 300_000,
            doubleLightPressMinimumGapMicros: UInt64 = 40_000,
            doubleLightPressMaximumHoldMicros: UInt64 = 400_000,
            longPressThresholdMicros: UInt64 = 400_000,
            slideSlopFraction: Double = 0.03,
            slideIdleEndMicros: UInt64? = 300_000,
            velocitySmoothingMicros: UInt64 = 50_000,
            slideResolution: UInt32 = 1024,
            clockRestartToleranceMicros: UInt64 = 2_000_000,
            duplicateHistoryLength: Int = 32
        ) {
            self.doubleLightPressWindowMicros = doubleLightPressWindowMicros
            self.doubleLightPressMinimumGapMicros = doubleLightPressMinimumGapMicros
            self.doubleLightPressMaximumHoldMicros = doubleLightPressMaximumHoldMicros
            self.longPressThresholdMicros = longPressThresholdMicros
            self.slideSlopFraction = slideSlopFraction
            self.slideIdleEndMicros = slideIdleEndMicros
            self.velocitySmoothingMicros = velocitySmoothingMicros
            self.slideResolution = slideResolution
            self.clockRestartToleranceMicros = clockRestartToleranceMicros
            self.duplicateHistoryLength = duplicateHistoryLength
        }

        /// The defaults, with the slide resolution and the slop taken from the device's capabilities:
        /// the slop is libinput's 1.3 mm movement limit divided by the strip length (when the length is
        /// known, i.e. non-zero), clamped to 0.5 % … 25 % of the strip.
        public init(slideResolution: UInt32, slideLengthMicrometres: UInt32) {
            self.init(slideResolution: slideResolution)
            if slideLengthMicrometres > 0 {
                let fraction = Self.slopMicrometres / Double(slideLengthMicrometres)
                slideSlopFraction = min(max(fraction, 0.005), 0.25)
            }
        }

        /// The defaults for a device, from its handshake capabilities: ``init(slideResolution:slideLengthMicrometres:)``
        /// with `capabilities.slideResolution` and `capabilities.slideLengthMicrometres` (a device without a
        /// slide strip reports 0 for both: then the resolution stays the default and slides never matter).
        public init(capabilities: Capabilities) {
            if capabilities.slideResolution > 0 {
                self.init(slideResolution: capabilities.slideResolution, slideLengthMicrometres: capabilities.slideLengthMicrometres)
            } else {
                self.init()
            }
        }

        /// libinput's tap movement limit, 1.3 mm, in micrometres.
        public static let slopMicrometres: Double = 1300

        /// The slop as used: finite and not negative.
        var effectiveSlop: Double {
            slideSlopFraction.isFinite && slideSlopFraction >= 0 ? slideSlopFraction : 0.03
        }

        /// The resolution as used: at least 1.
        var effectiveResolution: UInt32 { max(slideResolution, 1) }
    }
}
