/// Why a control, a camera or a controls session refused a request.
///
/// Every rule in `docs/CONTROLS.md` that can be broken by a caller has a ``Code``; nothing in this module
/// traps on bad input.
public struct ControlError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of rule was broken. Extensible: new codes may be added.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// A short kebab-case name.
        public var rawValue: String
        /// A code from its name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The name.
        public var description: String { rawValue }

        /// A range whose lower bound is not below its upper bound, or with a non-finite bound.
        public static let invalidRange = Code(rawValue: "invalid-range")
        /// A step that is not a finite number greater than zero.
        public static let invalidStep = Code(rawValue: "invalid-step")
        /// A range/step pair that would give more than ``ControlLimits/maximumDiscreteValues`` values.
        public static let tooManyValues = Code(rawValue: "too-many-values")
        /// An explicit value list that is empty.
        public static let emptyValues = Code(rawValue: "empty-values")
        /// A value that is NaN or infinite.
        public static let nonFiniteValue = Code(rawValue: "non-finite-value")
        /// A value outside the control's range.
        public static let valueOutOfRange = Code(rawValue: "value-out-of-range")
        /// A prominent value outside the control's range.
        public static let prominentValueOutOfRange = Code(rawValue: "prominent-value-out-of-range")
        /// A value format that does not contain exactly one `%@` (and no other specifier).
        public static let invalidValueFormat = Code(rawValue: "invalid-value-format")
        /// An index picker without titles.
        public static let emptyIndexTitles = Code(rawValue: "empty-index-titles")
        /// An index picker with a count that is not greater than zero.
        public static let invalidIndexCount = Code(rawValue: "invalid-index-count")
        /// An index outside `0 ..< numberOfIndexes`.
        public static let indexOutOfRange = Code(rawValue: "index-out-of-range")
        /// The device cannot drive capture controls (`supportsControls` is false).
        public static let controlsNotSupported = Code(rawValue: "controls-not-supported")
        /// The session already holds `maxControlsCount` controls.
        public static let controlLimitReached = Code(rawValue: "control-limit-reached")
        /// A second system zoom slider for the same camera device.
        public static let duplicateZoomSlider = Code(rawValue: "duplicate-zoom-slider")
        /// A control with no action (call `setActionQueue` first).
        public static let missingAction = Code(rawValue: "missing-action")
        /// The same control, or another with the same ``ControlID``, is already in the session.
        public static let duplicateControl = Code(rawValue: "duplicate-control")
        /// A control type this module does not know how to drive (a conformance from outside).
        public static let unsupportedControl = Code(rawValue: "unsupported-control")
        /// An ``OverlayConfiguration`` field that is NaN, negative or zero where it must be positive.
        public static let invalidConfiguration = Code(rawValue: "invalid-configuration")
        /// The host already has its controls session, with another overlay configuration (a host has one set of
        /// controls, as an `AVCaptureSession` has).
        public static let controlsSessionExists = Code(rawValue: "controls-session-exists")
        /// The camera device refused a setting.
        public static let deviceRefused = Code(rawValue: "device-refused")
        /// The camera is gone (unplugged, its stream ended or failed) or never started.
        public static let cameraUnavailable = Code(rawValue: "camera-unavailable")
        /// A photo or video could not be written.
        public static let captureFailed = Code(rawValue: "capture-failed")
    }

    /// What kind of rule was broken.
    public var code: Code
    /// A sentence for people, naming the offending values.
    public var message: String

    /// An error with a code and a message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}

/// Fixed limits that keep bad input from allocating without bound.
public enum ControlLimits {
    /// Most values a discrete slider may have (a strip cannot address more anyway).
    public static let maximumDiscreteValues = 10_000
    /// Most controls a session takes while it is bound to no device (``CaptureControlsSession/bind(to:)``
    /// gives the device's own limit).
    public static let maximumControls = 64
    /// Most diagnostics a control or session keeps (oldest dropped first).
    public static let maximumDiagnostics = 64
}
