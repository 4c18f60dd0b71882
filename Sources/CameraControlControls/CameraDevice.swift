import CameraControlCapture

/// A camera property a control can drive.
public enum CameraProperty: String, Hashable, Sendable, CustomStringConvertible {
    /// The video zoom factor (1 = no zoom).
    case zoomFactor = "zoom-factor"
    /// The exposure target bias, in EV.
    case exposureBias = "exposure-bias"

    /// The raw name.
    public var description: String { rawValue }
}

/// Who changed a camera property.
public enum CameraChangeSource: Hashable, Sendable, CustomStringConvertible {
    /// A capture control (by id) set it.
    case control(ControlID)
    /// Anything else: a pinch, app code, auto-exposure.
    case external

    /// `control <id>` or `external`.
    public var description: String {
        switch self {
        case .control(let id): "control \(id)"
        case .external: "external"
        }
    }
}

/// A change of one camera property, delivered to device observers.
public struct CameraPropertyChange: Hashable, Sendable {
    /// What changed.
    public var property: CameraProperty
    /// The new value.
    public var value: Double
    /// Who changed it.
    public var source: CameraChangeSource

    /// A change.
    public init(property: CameraProperty, value: Double, source: CameraChangeSource) {
        self.property = property
        self.value = value
        self.source = source
    }
}

/// A photo (or, for a click and hold on a camera that records, a video) a camera took.
public struct CapturedPhoto: Hashable, Sendable {
    /// 1 for the first photo of the device, then counting up.
    public var sequenceNumber: Int
    /// Zoom factor when it was taken.
    public var zoomFactor: Double
    /// Exposure bias when it was taken.
    public var exposureBias: Double
    /// The file written (a JPEG, or a video), or nil for a camera that writes none (``SyntheticCamera``).
    public var path: String?
    /// True for a video recorded while a press was held.
    public var isVideo: Bool
    /// Host clock time of the saved frame (a video's first frame), microseconds, when the camera knows it.
    public var frameHostMicros: UInt64?
    /// Host clock time of the press the photo was taken for, microseconds, when known.
    public var pressHostMicros: UInt64?
    /// What the camera held locked when it took the photo (the AE/AF lock of a light press held).
    public var focusExposureLock: FocusExposureLock

    /// A photo record.
    public init(
        sequenceNumber: Int, zoomFactor: Double, exposureBias: Double, path: String? = nil, isVideo: Bool = false,
        frameHostMicros: UInt64? = nil, pressHostMicros: UInt64? = nil, focusExposureLock: FocusExposureLock = []
    ) {
        self.sequenceNumber = sequenceNumber
        self.zoomFactor = zoomFactor
        self.exposureBias = exposureBias
        self.path = path
        self.isVideo = isVideo
        self.frameHostMicros = frameHostMicros
        self.pressHostMicros = pressHostMicros
        self.focusExposureLock = focusExposureLock
    }
}

/// Removes a device observer when passed to ``CameraDevice/removeObserver(_:)``.
public struct ObserverToken: Hashable, Sendable {
    /// A number unique within the object that handed it out.
    public var rawValue: UInt64
    /// A token from its number.
    public init(rawValue: UInt64) { self.rawValue = rawValue }
}

/// The camera abstraction the system sliders drive (the parts of `AVCaptureDevice` they need).
///
/// Implementations must be thread-safe, call observers synchronously after the change took effect and
/// without holding their own locks, and pass the caller's `source` through unchanged.
public protocol CameraDevice: AnyObject, Sendable {
    /// A stable id: the session allows one system zoom slider per id.
    var uniqueID: String { get }
    /// Zoom factors the device accepts.
    var zoomFactorRange: ClosedRange<Double> { get }
    /// The current zoom factor.
    var zoomFactor: Double { get }
    /// Zoom factors a zoom slider should land on more easily (lens switch-overs); may be empty.
    var prominentZoomFactors: [Double] { get }
    /// Sets the zoom factor; throws ``ControlError/Code/valueOutOfRange`` or
    /// ``ControlError/Code/nonFiniteValue`` and leaves it unchanged.
    func setZoomFactor(_ factor: Double, source: CameraChangeSource) throws(ControlError)
    /// Exposure biases the device accepts, EV.
    var exposureBiasRange: ClosedRange<Double> { get }
    /// The current exposure bias, EV.
    var exposureBias: Double { get }
    /// Sets the exposure bias; throws like ``setZoomFactor(_:source:)``.
    func setExposureBias(_ bias: Double, source: CameraChangeSource) throws(ControlError)
    /// Takes a photo with the current settings.
    func capturePhoto() throws(ControlError) -> CapturedPhoto
    /// Handles one capture event of a press and returns what it took, if anything. `hostMicros` is the
    /// event's ``CaptureEvent/deviceTimestampMicros`` on the host clock (nil when the host has no estimate of
    /// the device clock), so a camera that keeps recent frames can save the one taken at the press (zero
    /// shutter lag) and record while a press is held. The default calls ``capturePhoto()`` on every `ended`
    /// and does nothing otherwise.
    func capture(_ event: CaptureEvent, hostMicros: UInt64?) throws(ControlError) -> CapturedPhoto?
    /// Handles one capture event as ``capture(_:hostMicros:)`` does and hands `completion` what it took (or
    /// the error it would throw), exactly once per event and in the order of the events, at once or later
    /// on another thread. Capture handlers run on the host's event loop, which reads the port and answers
    /// heartbeats: a camera whose writing is slow (encoding a photo, finishing a video) does only the
    /// time-critical part here (noting the press, choosing its frame) and writes off the caller's thread.
    /// The default calls ``capture(_:hostMicros:)`` and then `completion`, on the caller's thread.
    func capture(
        _ event: CaptureEvent, hostMicros: UInt64?, completion: @escaping @Sendable (Result<CapturedPhoto?, ControlError>) -> Void)
    /// Calls `observer` after every property change, with its source.
    func addObserver(_ observer: @escaping @Sendable (CameraPropertyChange) -> Void) -> ObserverToken
    /// Stops calling the observer; unknown tokens are ignored.
    func removeObserver(_ token: ObserverToken)
    /// What the camera can lock of focus and exposure (the default: nothing).
    var supportedFocusExposureLock: FocusExposureLock { get }
    /// What it holds locked now (the default: nothing).
    var focusExposureLock: FocusExposureLock { get }
    /// Locks what `lock` names and unlocks the rest; throws ``ControlError/Code/deviceRefused`` for a lock
    /// the camera cannot hold (the default accepts only the empty lock).
    func setFocusExposureLock(_ lock: FocusExposureLock) throws(ControlError)
}

extension CameraDevice {
    /// Takes a photo (``capturePhoto()``) on `ended`; nothing for `began` and `cancelled`.
    public func capture(_ event: CaptureEvent, hostMicros: UInt64?) throws(ControlError) -> CapturedPhoto? {
        event.phase == .ended ? try capturePhoto() : nil
    }

    /// Calls ``capture(_:hostMicros:)``, then `completion` with its result, on the caller's thread.
    public func capture(
        _ event: CaptureEvent, hostMicros: UInt64?, completion: @escaping @Sendable (Result<CapturedPhoto?, ControlError>) -> Void
    ) {
        completion(Result { () throws(ControlError) in try capture(event, hostMicros: hostMicros) })
    }

    /// The range of `property`.
    public func range(of property: CameraProperty) -> ClosedRange<Double> {
        switch property {
        case .zoomFactor: zoomFactorRange
        case .exposureBias: exposureBiasRange
        }
    }

    /// The current value of `property`.
    public func value(of property: CameraProperty) -> Double {
        switch property {
        case .zoomFactor: zoomFactor
        case .exposureBias: exposureBias
        }
    }

    /// Sets `property`.
    public func setValue(_ value: Double, of property: CameraProperty, source: CameraChangeSource) throws(ControlError) {
        switch property {
        case .zoomFactor: try setZoomFactor(value, source: source)
        case .exposureBias: try setExposureBias(value, source: source)
        }
    }
}

/// A capture format of a ``SyntheticCamera`` (`AVCaptureDevice.Format`'s recommended ranges): the zoom and
/// exposure-bias ranges it offers. A nil range means the format has none (a fixed-focal lens, a
/// format without exposure bias): the camera then reports the degenerate `1...1` / `0...0` and the system
/// slider bound to it is disabled until a format with a range is active.
public struct CameraFormat: Hashable, Sendable {
    /// A name for logs (`4k-wide`, `1080p-tele`).
    public var name: String
    /// The recommended zoom range, or nil.
    public var zoomFactorRange: ClosedRange<Double>?
    /// The exposure-bias range, EV, or nil.
    public var exposureBiasRange: ClosedRange<Double>?
    /// Zoom factors a zoom slider lands on more easily.
    public var prominentZoomFactors: [Double]

    /// A format.
    public init(
        name: String, zoomFactorRange: ClosedRange<Double>?, exposureBiasRange: ClosedRange<Double>?,
        prominentZoomFactors: [Double] = []
    ) {
        self.name = name
        self.zoomFactorRange = zoomFactorRange
        self.exposureBiasRange = exposureBiasRange
        self.prominentZoomFactors = prominentZoomFactors
    }
}

/// An in-memory camera: ranges and values in memory, photos and videos recorded (no files). For tests and
/// the demo.
public final class SyntheticCamera: CameraDevice {
    private struct State: Sendable {
        var zoomFactorRange: ClosedRange<Double>
        var exposureBiasRange: ClosedRange<Double>
        var prominentZoomFactors: [Double]
        var activeFormat: Int?
        var zoomFactor: Double
        var exposureBias: Double
        var lock: FocusExposureLock = []
        var lockChanges: [FocusExposureLock] = []
        var photos: [CapturedPhoto] = []
        var observers: [UInt64: @Sendable (CameraPropertyChange) -> Void] = [:]
        var nextObserver: UInt64 = 1
    }

    /// The device's id.
    public let uniqueID: String
    /// Zoom factors accepted (the active format's).
    public var zoomFactorRange: ClosedRange<Double> { state.withLock { $0.zoomFactorRange } }
    /// Exposure biases accepted (the active format's).
    public var exposureBiasRange: ClosedRange<Double> { state.withLock { $0.exposureBiasRange } }
    /// Zoom factors a zoom slider lands on more easily.
    public var prominentZoomFactors: [Double] { state.withLock { $0.prominentZoomFactors } }
    /// The formats ``setActiveFormat(_:)`` chooses from (empty: the ranges given at init, fixed).
    public let formats: [CameraFormat]
    /// The index of the active format in ``formats`` (nil without formats).
    public var activeFormatIndex: Int? { state.withLock { $0.activeFormat } }
    /// What the camera can lock (both by default, like an iPhone's main camera).
    public let supportedFocusExposureLock: FocusExposureLock
    private let state: Locked<State>

    /// A camera at zoom `zoomFactorRange.lowerBound` (or 1 when inside the range) and bias 0 (or the
    /// nearest bound). Throws ``ControlError/Code/invalidRange`` for an empty or non-finite range.
    public init(
        uniqueID: String = "synthetic-back-camera",
        zoomFactorRange: ClosedRange<Double> = 1...10,
        exposureBiasRange: ClosedRange<Double> = -8...8,
        prominentZoomFactors: [Double] = [2, 5],
        supportedFocusExposureLock: FocusExposureLock = .both
    ) throws(ControlError) {
        try DiscreteValues.checkRange(zoomFactorRange)
        try DiscreteValues.checkRange(exposureBiasRange)
        self.uniqueID = uniqueID
        self.formats = []
        self.supportedFocusExposureLock = supportedFocusExposureLock
        state = Locked(
            State(
                zoomFactorRange: zoomFactorRange, exposureBiasRange: exposureBiasRange,
                prominentZoomFactors: prominentZoomFactors.filter { zoomFactorRange.contains($0) }.sorted(),
                zoomFactor: zoomFactorRange.contains(1) ? 1 : zoomFactorRange.lowerBound,
                exposureBias: min(max(0, exposureBiasRange.lowerBound), exposureBiasRange.upperBound)))
    }

    /// A camera with `formats` (at least one), the first active. Throws ``ControlError/Code/invalidRange``
    /// for an empty list or a format's empty or non-finite range.
    public init(
        uniqueID: String = "synthetic-back-camera", formats: [CameraFormat],
        supportedFocusExposureLock: FocusExposureLock = .both
    ) throws(ControlError) {
        guard let first = formats.first else { throw ControlError(.invalidRange, "a camera needs at least one format") }
        for format in formats {
            if let zoom = format.zoomFactorRange { try DiscreteValues.checkRange(zoom) }
            if let bias = format.exposureBiasRange { try DiscreteValues.checkRange(bias) }
        }
        self.uniqueID = uniqueID
        self.formats = formats
        self.supportedFocusExposureLock = supportedFocusExposureLock
        let zoom = first.zoomFactorRange ?? 1...1
        let bias = first.exposureBiasRange ?? 0...0
        state = Locked(
            State(
                zoomFactorRange: zoom, exposureBiasRange: bias,
                prominentZoomFactors: first.prominentZoomFactors.filter { zoom.contains($0) }.sorted(), activeFormat: 0,
                zoomFactor: zoom.contains(1) ? 1 : zoom.lowerBound,
                exposureBias: min(max(0, bias.lowerBound), bias.upperBound)))
    }

    /// Makes `formats[index]` active (`AVCaptureDevice.activeFormat`): its ranges replace the old ones, the
    /// zoom and bias are clamped into them, and observers hear both properties (source `.external`), so the
    /// system sliders re-range (or are disabled for a range the format lacks). Throws
    /// ``ControlError/Code/indexOutOfRange``.
    public func setActiveFormat(_ index: Int) throws(ControlError) {
        guard formats.indices.contains(index) else {
            throw ControlError(.indexOutOfRange, "format \(index) is outside 0..<\(formats.count)")
        }
        let format = formats[index]
        let (observers, zoom, bias) = state.withLock { state in
            let zoom = format.zoomFactorRange ?? 1...1
            let bias = format.exposureBiasRange ?? 0...0
            state.activeFormat = index
            state.zoomFactorRange = zoom
            state.exposureBiasRange = bias
            state.prominentZoomFactors = format.prominentZoomFactors.filter { zoom.contains($0) }.sorted()
            state.zoomFactor = min(max(state.zoomFactor, zoom.lowerBound), zoom.upperBound)
            state.exposureBias = min(max(state.exposureBias, bias.lowerBound), bias.upperBound)
            return (state.observers.sorted { $0.key < $1.key }.map(\.value), state.zoomFactor, state.exposureBias)
        }
        for observer in observers {
            observer(CameraPropertyChange(property: .zoomFactor, value: zoom, source: .external))
            observer(CameraPropertyChange(property: .exposureBias, value: bias, source: .external))
        }
    }

    /// The current zoom factor.
    public var zoomFactor: Double { state.withLock { $0.zoomFactor } }
    /// The current exposure bias.
    public var exposureBias: Double { state.withLock { $0.exposureBias } }
    /// Every photo and video taken, oldest first (a video has ``CapturedPhoto/isVideo``).
    public var photos: [CapturedPhoto] { state.withLock { $0.photos } }
    /// What the camera holds locked now.
    public var focusExposureLock: FocusExposureLock { state.withLock { $0.lock } }
    /// Every lock set, oldest first (`[]` for an unlock): what the AE/AF lock did to the camera.
    public var focusExposureLockChanges: [FocusExposureLock] { state.withLock { $0.lockChanges } }

    /// Locks what `lock` names and unlocks the rest; throws ``ControlError/Code/deviceRefused`` for a
    /// lock outside ``supportedFocusExposureLock``.
    public func setFocusExposureLock(_ lock: FocusExposureLock) throws(ControlError) {
        guard supportedFocusExposureLock.isSuperset(of: lock) else {
            throw ControlError(.deviceRefused, "this camera cannot lock \(lock) (it can lock \(supportedFocusExposureLock))")
        }
        state.withLock { state in
            state.lock = lock
            state.lockChanges.append(lock)
        }
    }

    /// Sets the zoom factor and notifies observers (also when the value did not change).
    public func setZoomFactor(_ factor: Double, source: CameraChangeSource) throws(ControlError) {
        try set(.zoomFactor, factor, range: zoomFactorRange, source: source)
    }

    /// Sets the exposure bias and notifies observers.
    public func setExposureBias(_ bias: Double, source: CameraChangeSource) throws(ControlError) {
        try set(.exposureBias, bias, range: exposureBiasRange, source: source)
    }

    /// A pinch (or any change from outside the controls): `setZoomFactor(factor, source: .external)`.
    public func pinch(toZoomFactor factor: Double) throws(ControlError) {
        try setZoomFactor(factor, source: .external)
    }

    /// Records a photo with the current settings.
    public func capturePhoto() throws(ControlError) -> CapturedPhoto {
        take(isVideo: false)
    }

    /// A click's `ended` takes a photo; a long press's `ended` a video, as a camera that records does
    /// (click and hold records video, Apple's QuickTake): a record with ``CapturedPhoto/isVideo``, at the
    /// zoom and bias of its end. `began` and `cancelled` take nothing.
    public func capture(_ event: CaptureEvent, hostMicros: UInt64?) throws(ControlError) -> CapturedPhoto? {
        event.phase == .ended ? take(isVideo: event.isLongPress) : nil
    }

    private func take(isVideo: Bool) -> CapturedPhoto {
        state.withLock { state in
            let photo = CapturedPhoto(
                sequenceNumber: state.photos.count + 1, zoomFactor: state.zoomFactor, exposureBias: state.exposureBias,
                isVideo: isVideo, focusExposureLock: state.lock)
            state.photos.append(photo)
            return photo
        }
    }

    /// Adds an observer, called synchronously on the thread that made each change.
    public func addObserver(_ observer: @escaping @Sendable (CameraPropertyChange) -> Void) -> ObserverToken {
        state.withLock { state in
            let id = state.nextObserver
            state.nextObserver += 1
            state.observers[id] = observer
            return ObserverToken(rawValue: id)
        }
    }

    /// Removes an observer.
    public func removeObserver(_ token: ObserverToken) {
        _ = state.withLock { $0.observers.removeValue(forKey: token.rawValue) }
    }

    private func set(
        _ property: CameraProperty, _ value: Double, range: ClosedRange<Double>, source: CameraChangeSource
    ) throws(ControlError) {
        guard value.isFinite else { throw ControlError(.nonFiniteValue, "\(property) \(value) is not finite") }
        guard range.contains(value) else {
            throw ControlError(.valueOutOfRange, "\(property) \(value) is outside \(range)")
        }
        let observers = state.withLock { state in
            switch property {
            case .zoomFactor: state.zoomFactor = value
            case .exposureBias: state.exposureBias = value
            }
            return state.observers.sorted { $0.key < $1.key }.map(\.value)
        }
        let change = CameraPropertyChange(property: property, value: value, source: source)
        for observer in observers { observer(change) }
    }
}
