import CGStreamerShim
import CameraControlCapture
import CameraControlControls
import Foundation
import Synchronization

/// Where a ``GStreamerCamera``'s pictures come from.
public enum CameraSource: Sendable, Hashable, CustomStringConvertible {
    /// GStreamer's `videotestsrc` with a pattern and any further properties (`"smpte"`,
    /// `"solid-color foreground-color=0xff404040"`): every machine with gstreamer1.0-plugins-base has it.
    case test(pattern: String = "smpte")
    /// A V4L2 device (`/dev/video0`) through `v4l2src`.
    case v4l2(device: String)
    /// `libcamerasrc` (Raspberry Pi cameras), where it is installed.
    case libcamera
    /// Any gst-launch source text producing raw video, e.g. `videotestsrc is-live=true ! identity error-after=20`.
    case pipeline(String)

    /// `test`, `test:PATTERN`, `libcamera`, a path (`/dev/video0`), or `pipeline:TEXT`.
    public init(parsing text: String) throws(ControlError) {
        if text == "test" {
            self = .test()
        } else if text.hasPrefix("test:") {
            self = .test(pattern: String(text.dropFirst(5)))
        } else if text == "libcamera" {
            self = .libcamera
        } else if text.hasPrefix("pipeline:") {
            self = .pipeline(String(text.dropFirst(9)))
        } else if text.hasPrefix("/") {
            self = .v4l2(device: text)
        } else {
            throw ControlError(.cameraUnavailable, "unknown camera '\(text)': use test, libcamera or /dev/videoN")
        }
    }

    /// The text ``init(parsing:)`` reads.
    public var description: String {
        switch self {
        case .test(let pattern): pattern == "smpte" ? "test" : "test:\(pattern)"
        case .v4l2(let device): device
        case .libcamera: "libcamera"
        case .pipeline(let text): "pipeline:\(text)"
        }
    }

    /// The GStreamer element this source needs.
    var element: String {
        switch self {
        case .test: "videotestsrc"
        case .v4l2: "v4l2src"
        case .libcamera: "libcamerasrc"
        case .pipeline: "appsink"
        }
    }

    /// The capture pipeline: the source, scaled to `width × height` RGBx, into an appsink.
    func launch(width: Int, height: Int, fps: Int) throws(ControlError) -> String {
        let size = "width=\(width),height=\(height)"
        let tail =
            "videoconvert ! videoscale ! video/x-raw,format=RGBx,\(size),pixel-aspect-ratio=1/1 ! "
            + "appsink name=sink max-buffers=4 drop=true sync=false"
        switch self {
        case .test(let pattern):
            return "videotestsrc is-live=true pattern=\(pattern) ! video/x-raw,\(size),framerate=\(fps)/1 ! \(tail)"
        case .v4l2(let device):
            guard !device.contains("\""), !device.contains("!") else {
                throw ControlError(.cameraUnavailable, "bad device path '\(device)'")
            }
            return "v4l2src device=\"\(device)\" ! \(tail)"
        case .libcamera:
            return "libcamerasrc ! \(tail)"
        case .pipeline(let text):
            return "\(text) ! video/x-raw,\(size),framerate=\(fps)/1 ! \(tail)"
        }
    }
}

/// What became of a press the camera was told about (``GStreamerCamera/addCaptureObserver(_:)``).
public struct CaptureOutcome: Sendable, Hashable {
    /// How the press ended.
    public enum Result: Sendable, Hashable {
        /// A photo (or video) was written.
        case taken(CapturedPhoto)
        /// The press was cancelled (by the host, or because the camera went away): nothing was kept.
        case cancelled(reason: String)
    }
    /// The press.
    public var id: CaptureEventID
    /// How it ended.
    public var result: Result
}

/// A real camera behind the controls, on GStreamer: `videotestsrc`, a V4L2 device or `libcamerasrc`.
///
/// The system zoom slider zooms with `V4L2_CID_ZOOM_ABSOLUTE` when the device has it, else digitally (a
/// centre crop scaled back to the output size); the exposure-bias slider sets `V4L2_CID_AUTO_EXPOSURE_BIAS`
/// when present, else applies a digital gain of 2^EV. The camera keeps the last ``Configuration/ringMicros``
/// of frames: a full click saves the frame nearest the *press* (zero shutter lag) as a JPEG with a sidecar
/// JSON; a click and hold records a Motion-JPEG Matroska video from the press to the release.
/// docs/CAMERA.md has the details.
public final class GStreamerCamera: CameraDevice {
    /// How the camera is set up.
    public struct Configuration: Sendable {
        /// Where pictures come from.
        public var source: CameraSource
        /// Output width, pixels.
        public var width: Int
        /// Output height, pixels.
        public var height: Int
        /// Frames a second asked of the source (the test source keeps it exactly).
        public var framesPerSecond: Int
        /// The directory photos and videos are written to (created if missing).
        public var outputDirectory: String
        /// How much recent video the ring keeps, microseconds.
        public var ringMicros: UInt64
        /// A press held this long starts a recording (kept only if the press ends as a long press).
        public var recordAfterMicros: UInt64
        /// How late a release may reach the host and still end its video where it happened: recorded
        /// frames wait this long before they are written.
        public var releaseLatencyMicros: UInt64
        /// JPEG quality, 1–100.
        public var jpegQuality: Int
        /// The largest digital zoom factor.
        public var maximumDigitalZoom: Double
        /// The range of the digital exposure bias, EV.
        public var digitalExposureBiasRange: ClosedRange<Double>
        /// The host clock capture events are on, microseconds (``CaptureClock/continuous`` by default).
        public var hostMicros: @Sendable () -> UInt64

        /// A configuration; 640 × 480 at 30 fps into the current directory by default.
        public init(
            source: CameraSource = .test(), width: Int = 640, height: Int = 480, framesPerSecond: Int = 30,
            outputDirectory: String = ".", ringMicros: UInt64 = 500_000, recordAfterMicros: UInt64 = 300_000,
            releaseLatencyMicros: UInt64 = 500_000,
            jpegQuality: Int = 90, maximumDigitalZoom: Double = 8, digitalExposureBiasRange: ClosedRange<Double> = -2...2,
            hostMicros: @escaping @Sendable () -> UInt64 = CaptureClock.continuous.nowMicros
        ) {
            self.source = source
            self.width = width
            self.height = height
            self.framesPerSecond = framesPerSecond
            self.outputDirectory = outputDirectory
            self.ringMicros = ringMicros
            self.recordAfterMicros = recordAfterMicros
            self.releaseLatencyMicros = releaseLatencyMicros
            self.jpegQuality = jpegQuality
            self.maximumDigitalZoom = maximumDigitalZoom
            self.digitalExposureBiasRange = digitalExposureBiasRange
            self.hostMicros = hostMicros
        }
    }

    /// A press the camera is following.
    struct Press {
        var selection: ShutterSelection
        var pending: [Frame] = []
        var recorder: Recorder?
    }

    struct State {
        var ring: FrameRing
        var zoomFactor: Double = 1
        var exposureBias: Double = 0
        var lock: FocusExposureLock = []
        var presses: [CaptureEventID: Press] = [:]
        var photos = 0
        var written = 0
        var failure: ControlError?
        var stopped = false
        var observers: [UInt64: @Sendable (CameraPropertyChange) -> Void] = [:]
        var captureObservers: [UInt64: @Sendable (CaptureOutcome) -> Void] = [:]
        var previewObservers: [UInt64: Preview] = [:]
        var nextObserver: UInt64 = 1
    }

    /// A preview observer: its rate and when it last got a frame.
    struct Preview {
        var intervalMicros: UInt64
        var lastHostMicros: UInt64?
        var observer: @Sendable ([UInt8]) -> Void
    }

    /// The configuration it was made with.
    public let configuration: Configuration
    /// `gstreamer:` and the source.
    public let uniqueID: String
    /// Zoom factors accepted: 1 to the device's optical range, or to ``Configuration/maximumDigitalZoom``.
    public let zoomFactorRange: ClosedRange<Double>
    /// Exposure biases accepted, EV.
    public let exposureBiasRange: ClosedRange<Double>
    /// Zoom factors a slider lands on more easily: 2× when in range.
    public let prominentZoomFactors: [Double]
    /// True when zoom uses the device's `V4L2_CID_ZOOM_ABSOLUTE`.
    public let hasOpticalZoom: Bool
    /// True when the exposure bias uses the device's `V4L2_CID_AUTO_EXPOSURE_BIAS`.
    public let hasDeviceExposureBias: Bool

    let core: CameraCore
    private let controls: V4L2Controls?

    /// Starts the camera and waits for its first frame (5 s at most).
    ///
    /// - Throws: ``ControlError/Code/cameraUnavailable`` when GStreamer, the source's element or the device
    ///   is missing, or no frame comes; ``ControlError/Code/captureFailed`` when the output directory cannot
    ///   be made.
    public init(configuration: Configuration = Configuration()) throws(ControlError) {
        self.configuration = configuration
        uniqueID = "gstreamer:\(configuration.source)"
        try GStreamer.initialise()
        guard GStreamer.hasElement(configuration.source.element) else {
            throw ControlError(
                .cameraUnavailable, "camera \(configuration.source): GStreamer element \(configuration.source.element) is not installed")
        }
        do {
            try FileManager.default.createDirectory(atPath: configuration.outputDirectory, withIntermediateDirectories: true)
        } catch {
            // Foundation's text says little on Linux ("The file doesn't exist."); the system's reason says what.
            let path = configuration.outputDirectory
            let reason = mkdir(path, 0o755) == 0 || errno == EEXIST ? error.localizedDescription : String(cString: strerror(errno))
            throw ControlError(.captureFailed, "cannot create \(path): \(reason)")
        }
        var controls: V4L2Controls?
        if case .v4l2(let device) = configuration.source { controls = V4L2Controls(device: device) }
        self.controls = controls
        if let zoom = controls?.zoom {
            hasOpticalZoom = true
            zoomFactorRange = 1...max(1.01, zoom.maximumFactor)
        } else {
            hasOpticalZoom = false
            zoomFactorRange = 1...max(1.01, configuration.maximumDigitalZoom)
        }
        if let bias = controls?.exposureBias {
            hasDeviceExposureBias = true
            exposureBiasRange = bias.range
        } else {
            hasDeviceExposureBias = false
            exposureBiasRange = configuration.digitalExposureBiasRange
        }
        prominentZoomFactors = zoomFactorRange.contains(2) ? [2] : []
        let frameMicros = 1_000_000 / UInt64(max(1, configuration.framesPerSecond))
        let launch = try configuration.source.launch(
            width: configuration.width, height: configuration.height, fps: configuration.framesPerSecond)
        let pipeline = try Handle.capture(launch, source: configuration.source)
        // The pipeline clock is CLOCK_MONOTONIC; the host clock counts from its own start: measure the gap.
        let before = configuration.hostMicros()
        let pipelineNow = ccg_pipeline_clock_now_ns(pipeline.pointer) / 1000
        let after = configuration.hostMicros()
        let offset = Int64(bitPattern: before / 2 + after / 2) - Int64(bitPattern: pipelineNow)
        core = CameraCore(
            state: State(ring: FrameRing(capacity: Int(configuration.ringMicros / frameMicros) + 2)),
            configuration: configuration, clockOffsetMicros: offset, opticalZoom: hasOpticalZoom,
            deviceBias: hasDeviceExposureBias)

        // The first frame proves the source works.
        var frame: OpaquePointer?
        var error: UnsafeMutablePointer<CChar>?
        let status = ccg_capture_pull(pipeline.pointer, 5_000_000_000, &frame, &error)
        guard status == 1, let frame else {
            let message = GStreamer.take(error) ?? "no frame within 5 s"
            pipeline.close()
            throw ControlError(.cameraUnavailable, "camera \(configuration.source): \(message)")
        }
        core.accept(frame)
        writer.setSpecific(key: Self.writerKey, value: ObjectIdentifier(self))
        let worker = Thread { [core] in core.pull(pipeline: pipeline) }
        worker.name = "GStreamerCamera"
        worker.start()
    }

    // No write can be pending here: each holds the camera.
    deinit { core.fail(error: ControlError(.cameraUnavailable, "camera \(configuration.source) was stopped"), stopped: true) }

    /// Stops the camera (presses in flight end cancelled); later captures throw `camera-unavailable`. The
    /// photos and videos of presses that ended before are still written: it returns once they are.
    public func stop() {
        core.fail(error: ControlError(.cameraUnavailable, "camera \(configuration.source) was stopped"), stopped: true)
        waitForWrites()
    }

    /// Why the camera stopped working, if it did.
    public var failure: ControlError? { core.state.withLock { $0.failure } }

    /// The current zoom factor.
    public var zoomFactor: Double { core.state.withLock { $0.zoomFactor } }
    /// The current exposure bias, EV.
    public var exposureBias: Double { core.state.withLock { $0.exposureBias } }
    /// Photos and videos written so far (file numbers may skip: a recording started for a press that
    /// ends as a click is deleted).
    public var captureCount: Int { core.state.withLock { $0.written } }

    /// Sets the zoom (the device's control, or the digital crop of the frames from now on).
    public func setZoomFactor(_ factor: Double, source: CameraChangeSource) throws(ControlError) {
        try check(.zoomFactor, factor, range: zoomFactorRange)
        if let zoom = controls?.zoom { try controls?.set(zoom.id, zoom.value(forFactor: factor)) }
        try set(.zoomFactor, factor, source: source)
    }

    /// Sets the exposure bias (the device's control, or the digital gain 2^EV from now on).
    public func setExposureBias(_ bias: Double, source: CameraChangeSource) throws(ControlError) {
        try check(.exposureBias, bias, range: exposureBiasRange)
        if let control = controls?.exposureBias { try controls?.set(control.id, control.value(forBias: bias)) }
        try set(.exposureBias, bias, source: source)
    }

    /// What the camera can lock: on a V4L2 device, exposure and focus as its controls allow (`3A_LOCK`, or
    /// `exposure_auto` / `focus_auto`); nothing on `videotestsrc` and `libcamerasrc` (whose GStreamer
    /// element exposes no AE/AF lock control), where ``setFocusExposureLock(_:)`` says so.
    public var supportedFocusExposureLock: FocusExposureLock { controls?.locking.supported ?? [] }
    /// What the camera holds locked now.
    public var focusExposureLock: FocusExposureLock { core.state.withLock { $0.lock } }

    /// Locks focus and exposure through the device's V4L2 controls (the AE/AF lock); throws
    /// ``ControlError/Code/deviceRefused`` naming what is missing for a lock the source cannot hold.
    public func setFocusExposureLock(_ lock: FocusExposureLock) throws(ControlError) {
        let supported = supportedFocusExposureLock
        guard supported.isSuperset(of: lock) else {
            let why: String
            switch configuration.source {
            case .v4l2(let device):
                why = "\(device) has no V4L2 3A_LOCK, exposure_auto or focus_auto control for \(lock.subtracting(supported))"
            default:
                why = "\(configuration.source.element) exposes no focus or exposure lock to GStreamer"
            }
            throw ControlError(.deviceRefused, "camera \(configuration.source): \(why)")
        }
        try controls?.setLock(lock)
        core.state.withLock { $0.lock = lock }
    }

    /// Saves the newest frame as a photo (no press: no shutter-lag correction).
    public func capturePhoto() throws(ControlError) -> CapturedPhoto {
        let frame = try core.state.withLock { state throws(ControlError) -> Frame? in
            if let failure = state.failure { throw failure }
            return state.ring.newest
        }
        guard let frame else { throw ControlError(.cameraUnavailable, "camera \(configuration.source) has no frame yet") }
        let name = nextName("IMG", "jpg")
        let lock = focusExposureLock
        let write: Write = {
            Result { () throws(ControlError) in
                let photo = try self.writePhoto(frame, name: name, lock: lock, pressHostMicros: nil, event: nil)
                self.core.state.withLock { $0.written += 1 }
                return photo
            }
        }
        // On the writer, after the captures handed to it before: files are written one at a time.
        guard let photo = try (isOnWriter ? write() : writer.sync(execute: write)).get() else {
            throw ControlError(.captureFailed, "no photo")
        }
        return photo
    }

    /// `began`: follow the press (choose its frame, buffer for a video). `ended`: write the photo of the
    /// frame nearest the press, or, after a long press, finish the video. `cancelled`: drop it.
    /// Without `hostMicros` the press is taken to be now. The writing runs on the camera's writer, after
    /// the writing of every earlier event (``capture(_:hostMicros:completion:)``), and this call waits for it.
    ///
    /// - Throws: ``ControlError/Code/cameraUnavailable`` once the camera is gone,
    ///   ``ControlError/Code/captureFailed`` when a file cannot be written.
    public func capture(_ event: CaptureEvent, hostMicros: UInt64?) throws(ControlError) -> CapturedPhoto? {
        guard let write = try prepare(event, hostMicros: hostMicros) else { return nil }
        if isOnWriter { return try write().get() }
        return try writer.sync(execute: write).get()
    }

    /// Handles the event's time-critical part on the caller's thread (the press noted, its frame chosen, the
    /// file's number taken: microseconds, under the camera's lock) and writes off it, on the camera's own
    /// writer thread (JPEG encoding, the digital zoom and gain, finishing a video: tens to hundreds of
    /// milliseconds), so the host's event loop that delivers capture events is never held up. `completion`
    /// gets what was taken (nil for `began` and `cancelled`) or the error ``capture(_:hostMicros:)`` would
    /// throw, once per event, on the writer, in the order of the events. ``waitForWrites()`` waits for them.
    public func capture(
        _ event: CaptureEvent, hostMicros: UInt64?,
        completion: @escaping @Sendable (Result<CapturedPhoto?, ControlError>) -> Void
    ) {
        let write: Write?
        do {
            write = try prepare(event, hostMicros: hostMicros)
        } catch {
            writer.async { completion(.failure(error)) }
            return
        }
        writer.async { completion(write?() ?? .success(nil)) }
    }

    /// Returns once everything handed to the writer so far is written (and its completion called). At once
    /// on the writer itself.
    public func waitForWrites() {
        guard !isOnWriter else { return }
        writer.sync {}
    }

    /// The writing of one capture event, for the writer.
    private typealias Write = @Sendable () -> Result<CapturedPhoto?, ControlError>

    /// The camera's writer: photos and videos are written there, one at a time, in the order of their events.
    private let writer = DispatchQueue(label: "GStreamerCamera.writer")
    /// On each camera's writer, that camera's identity: on another camera's writer this one is not.
    private static let writerKey = DispatchSpecificKey<ObjectIdentifier>()
    private var isOnWriter: Bool { DispatchQueue.getSpecific(key: Self.writerKey) == ObjectIdentifier(self) }

    /// The time-critical part of `event`, now; its writing (nil when there is none) for the writer.
    private func prepare(_ event: CaptureEvent, hostMicros: UInt64?) throws(ControlError) -> Write? {
        let eventHost = hostMicros ?? configuration.hostMicros()
        switch event.phase {
        case .began:
            try core.state.withLock { state throws(ControlError) in
                if let failure = state.failure { throw failure }
                state.presses[event.id] = Press(selection: ShutterSelection(pressHostMicros: eventHost, ring: state.ring))
                state.presses[event.id]?.pending = state.ring.frames(since: eventHost)
            }
            return nil
        case .cancelled:
            guard let press = core.state.withLock({ $0.presses.removeValue(forKey: event.id) }) else { return nil }
            return { [core] in
                press.recorder?.cancel()  // waits for its pipeline to end: not on the caller's thread
                core.notify(CaptureOutcome(id: event.id, result: .cancelled(reason: "the press was cancelled")))
                return .success(nil)
            }
        case .ended:
            let pressHost = eventHost &- (event.pressDurationMicros ?? 0)
            let (press, ring) = try core.state.withLock { state throws(ControlError) in
                if let failure = state.failure { throw failure }
                return (state.presses.removeValue(forKey: event.id), state.ring)
            }
            // The file's number now, so files are numbered in the order of their presses' ends.
            if event.isLongPress {
                let name = press?.recorder == nil ? nextName("VID", "mkv") : nil
                let start = press?.selection.pressHostMicros ?? pressHost
                return {
                    Result { () throws(ControlError) in
                        let photo = try self.finishVideo(press, ring: ring, name: name, pressHost: start, endHost: eventHost, event: event)
                        self.taken(photo, event)
                        return photo
                    }
                }
            }
            let frame = press?.selection.chosen ?? ring.nearest(toHostMicros: pressHost)
            guard let frame else {
                if let recorder = press?.recorder { writer.async { recorder.cancel() } }
                throw ControlError(.cameraUnavailable, "camera \(configuration.source) has no frame yet")
            }
            let name = nextName("IMG", "jpg")
            let lock = focusExposureLock
            return {
                press?.recorder?.cancel()
                return Result { () throws(ControlError) in
                    let photo = try self.writePhoto(
                        frame, name: name, lock: lock, pressHostMicros: press?.selection.pressHostMicros ?? pressHost, event: event)
                    self.taken(photo, event)
                    return photo
                }
            }
        }
    }

    /// A photo or video of `event` is written: counted, and its observers told.
    private func taken(_ photo: CapturedPhoto, _ event: CaptureEvent) {
        core.state.withLock { $0.written += 1 }
        notify(CaptureOutcome(id: event.id, result: .taken(photo)))
    }

    /// Adds an observer of property changes.
    public func addObserver(_ observer: @escaping @Sendable (CameraPropertyChange) -> Void) -> ObserverToken {
        core.state.withLock { state in
            let id = state.nextObserver
            state.nextObserver += 1
            state.observers[id] = observer
            return ObserverToken(rawValue: id)
        }
    }

    /// Adds an observer of how each press ended (taken, or cancelled: by the host or because the camera
    /// went away). Called on the thread that decided it, without the camera's lock.
    public func addCaptureObserver(_ observer: @escaping @Sendable (CaptureOutcome) -> Void) -> ObserverToken {
        core.state.withLock { state in
            let id = state.nextObserver
            state.nextObserver += 1
            state.captureObservers[id] = observer
            return ObserverToken(rawValue: id)
        }
    }

    /// Adds an observer of the live picture: a JPEG image (``Configuration/jpegQuality``, the output size, the
    /// digital zoom and gain applied) of a frame at most `framesPerSecond` times a second, called on the
    /// camera's thread without its lock (`camctl monitor --http … --camera` feeds the page's preview with it).
    /// Frames are encoded only while a preview observer is added.
    public func addPreviewObserver(
        framesPerSecond: Int = 10, _ observer: @escaping @Sendable ([UInt8]) -> Void
    ) -> ObserverToken {
        core.state.withLock { state in
            let id = state.nextObserver
            state.nextObserver += 1
            state.previewObservers[id] = Preview(intervalMicros: 1_000_000 / UInt64(max(1, framesPerSecond)), observer: observer)
            return ObserverToken(rawValue: id)
        }
    }

    /// Removes an observer (of any kind).
    public func removeObserver(_ token: ObserverToken) {
        core.state.withLock { state in
            state.observers.removeValue(forKey: token.rawValue)
            state.captureObservers.removeValue(forKey: token.rawValue)
            state.previewObservers.removeValue(forKey: token.rawValue)
        }
    }

    // MARK: Settings

    private func check(_ property: CameraProperty, _ value: Double, range: ClosedRange<Double>) throws(ControlError) {
        guard value.isFinite else { throw ControlError(.nonFiniteValue, "\(property) \(value) is not finite") }
        guard range.contains(value) else { throw ControlError(.valueOutOfRange, "\(property) \(value) is outside \(range)") }
        if let failure = core.state.withLock({ $0.failure }) { throw failure }
    }

    private func set(_ property: CameraProperty, _ value: Double, source: CameraChangeSource) throws(ControlError) {
        let observers = core.state.withLock { state in
            switch property {
            case .zoomFactor: state.zoomFactor = value
            case .exposureBias: state.exposureBias = value
            }
            return state.observers.sorted { $0.key < $1.key }.map(\.value)
        }
        let change = CameraPropertyChange(property: property, value: value, source: source)
        for observer in observers { observer(change) }
    }

    private func notify(_ outcome: CaptureOutcome) { core.notify(outcome) }

    // MARK: Files

    private func nextName(_ prefix: String, _ ext: String) -> (Int, String) {
        let number = core.state.withLock { state in
            state.photos += 1
            return state.photos
        }
        let name = String(format: "%@_%04d.%@", prefix, number, ext)
        return (number, (configuration.outputDirectory as NSString).appendingPathComponent(name))
    }

    private func writePhoto(
        _ frame: Frame, name: (number: Int, path: String), lock: FocusExposureLock, pressHostMicros: UInt64?, event: CaptureEvent?
    ) throws(ControlError) -> CapturedPhoto {
        let (number, path) = name
        let pixels = Pixels.process(frame)
        var error: UnsafeMutablePointer<CChar>?
        let status = pixels.withUnsafeBufferPointer { buffer in
            ccg_write_jpeg(
                buffer.baseAddress, Int32(frame.width), Int32(frame.height), Int32(configuration.jpegQuality), path, &error)
        }
        guard status == 0 else {
            throw ControlError(.captureFailed, "cannot write \(path): \(GStreamer.take(error) ?? "unknown error")")
        }
        let photo = CapturedPhoto(
            sequenceNumber: number, zoomFactor: frame.zoomFactor, exposureBias: frame.exposureBias, path: path,
            frameHostMicros: frame.hostMicros, pressHostMicros: pressHostMicros, focusExposureLock: lock)
        try Sidecar.write(for: photo, frame: frame, event: event, source: configuration.source)
        return photo
    }

    private func finishVideo(
        _ press: Press?, ring: FrameRing, name: (number: Int, path: String)?, pressHost: UInt64, endHost: UInt64,
        event: CaptureEvent
    ) throws(ControlError) -> CapturedPhoto {
        var recorder = press?.recorder
        let pending = (press?.pending ?? ring.frames(since: pressHost)).filter { $0.hostMicros <= endHost }
        if recorder == nil {
            let (number, path) = name ?? nextName("VID", "mkv")
            recorder = try Recorder(
                path: path, sequenceNumber: number, width: configuration.width, height: configuration.height,
                fps: configuration.framesPerSecond, startHostMicros: pressHost,
                holdMicros: configuration.releaseLatencyMicros)
        }
        guard let recorder else { throw ControlError(.captureFailed, "no recorder") }
        for frame in pending { recorder.push(frame) }
        let first = recorder.firstFrame ?? ring.nearest(toHostMicros: pressHost)
        let durationMicros = try recorder.finish(endHostMicros: endHost)
        let photo = CapturedPhoto(
            sequenceNumber: recorder.sequenceNumber, zoomFactor: first?.zoomFactor ?? zoomFactor,
            exposureBias: first?.exposureBias ?? exposureBias, path: recorder.path, isVideo: true,
            frameHostMicros: first?.hostMicros, pressHostMicros: pressHost)
        if let first {
            try Sidecar.write(for: photo, frame: first, event: event, source: configuration.source, videoMicros: durationMicros)
        }
        return photo
    }

}

/// The camera's shared state and the frame thread's work (the thread and the camera share it).
final class CameraCore: Sendable {
    typealias State = GStreamerCamera.State
    typealias Press = GStreamerCamera.Press
    let state: Mutex<State>
    /// The live preview's encoder, made at its first frame (only the camera's thread uses it).
    private let previewEncoder = Mutex<PreviewEncoder?>(nil)
    let configuration: GStreamerCamera.Configuration
    let clockOffsetMicros: Int64
    let opticalZoom: Bool
    let deviceBias: Bool

    init(state: State, configuration: GStreamerCamera.Configuration, clockOffsetMicros: Int64, opticalZoom: Bool, deviceBias: Bool) {
        self.state = Mutex(state)
        self.configuration = configuration
        self.clockOffsetMicros = clockOffsetMicros
        self.opticalZoom = opticalZoom
        self.deviceBias = deviceBias
    }

    func notify(_ outcome: CaptureOutcome) {
        let observers = state.withLock { $0.captureObservers.sorted { $0.key < $1.key }.map(\.value) }
        for observer in observers { observer(outcome) }
    }

    func pull(pipeline: Handle) {
        while true {
            if state.withLock({ $0.stopped }) { break }
            var frame: OpaquePointer?
            var error: UnsafeMutablePointer<CChar>?
            let status = ccg_capture_pull(pipeline.pointer, 100_000_000, &frame, &error)
            if status == 1, let frame {
                accept(frame)
            } else if status < 0 {
                let message = GStreamer.take(error) ?? "the stream ended"
                fail(error: ControlError(.cameraUnavailable, "camera \(configuration.source) disappeared: \(message)"), stopped: true)
                break
            }
        }
        pipeline.close()
    }

    /// Files a frame: into the ring, the presses' selections and their videos.
    func accept(_ raw: OpaquePointer) {
        var size = 0
        let data = ccg_frame_data(raw, &size)
        let pixels = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        let width = Int(ccg_frame_width(raw))
        let height = Int(ccg_frame_height(raw))
        let host = UInt64(clamping: Int64(bitPattern: ccg_frame_clock_ns(raw) / 1000) + clockOffsetMicros)
        ccg_frame_free(raw)
        guard pixels.count == width * height * 4 else { return }
        var pushes: [(Recorder, Frame)] = []
        var opens: [CaptureEventID] = []
        var previewers: [@Sendable ([UInt8]) -> Void] = []
        var previewFrame: Frame?
        state.withLock { state in
            let digitalZoom = opticalZoom ? 1 : state.zoomFactor
            let frame = Frame(
                pixels: pixels, width: width, height: height, hostMicros: host, digitalZoom: digitalZoom,
                digitalGain: Pixels.gain(forBias: state.exposureBias, digital: !deviceBias),
                zoomFactor: state.zoomFactor, exposureBias: state.exposureBias)
            state.ring.append(frame)
            for id in state.previewObservers.keys.sorted() {
                guard let preview = state.previewObservers[id] else { continue }
                if let last = preview.lastHostMicros, host < last + preview.intervalMicros, host >= last { continue }
                state.previewObservers[id]?.lastHostMicros = host
                previewers.append(preview.observer)
                previewFrame = frame
            }
            for id in state.presses.keys {
                state.presses[id]?.selection.offer(frame)
                guard let press = state.presses[id], host >= press.selection.pressHostMicros else { continue }
                if let recorder = press.recorder {
                    pushes.append((recorder, frame))
                } else {
                    state.presses[id]?.pending.append(frame)
                    if host - press.selection.pressHostMicros >= configuration.recordAfterMicros { opens.append(id) }
                }
            }
        }
        for (recorder, frame) in pushes { recorder.push(frame) }
        for id in opens { startRecording(id) }
        if let previewFrame, !previewers.isEmpty, let jpeg = preview(previewFrame) {
            for observer in previewers { observer(jpeg) }
        }
    }

    /// The preview's JPEG image of `frame`, from an encoder made at the first preview (nil when it fails: a
    /// preview is best-effort, the camera goes on).
    private func preview(_ frame: Frame) -> [UInt8]? {
        previewEncoder.withLock { encoder -> [UInt8]? in
            if encoder == nil || encoder?.width != frame.width || encoder?.height != frame.height {
                encoder = try? PreviewEncoder(width: frame.width, height: frame.height, quality: configuration.jpegQuality)
            }
            return try? encoder?.encode(Pixels.process(frame))
        }
    }

    /// A press held long enough: open its recorder and hand it the frames so far.
    func startRecording(_ id: CaptureEventID) {
        let (number, pressHost) = state.withLock { state -> (Int, UInt64?) in
            state.photos += 1
            return (state.photos, state.presses[id]?.selection.pressHostMicros)
        }
        guard let pressHost else { return }
        let path = (configuration.outputDirectory as NSString).appendingPathComponent(String(format: "VID_%04d.mkv", number))
        guard
            let recorder = try? Recorder(
                path: path, sequenceNumber: number, width: configuration.width, height: configuration.height,
                fps: configuration.framesPerSecond, startHostMicros: pressHost,
                holdMicros: configuration.releaseLatencyMicros)
        else { return }
        let pending = state.withLock { state -> [Frame]? in
            guard state.presses[id] != nil else { return nil }
            state.presses[id]?.recorder = recorder
            defer { state.presses[id]?.pending = [] }
            return state.presses[id]?.pending
        }
        guard let pending else {
            recorder.cancel()
            return
        }
        for frame in pending { recorder.push(frame) }
    }

    /// The camera is gone: remember why, and cancel every press in flight.
    func fail(error: ControlError, stopped: Bool) {
        let presses = state.withLock { state -> [CaptureEventID: Press] in
            if state.failure == nil { state.failure = error }
            state.stopped = state.stopped || stopped
            defer { state.presses = [:] }
            return state.presses
        }
        for (id, press) in presses.sorted(by: { $0.key < $1.key }) {
            press.recorder?.cancel()
            notify(CaptureOutcome(id: id, result: .cancelled(reason: error.message)))
        }
    }
}
