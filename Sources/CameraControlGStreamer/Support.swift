import CGStreamerShim
import CameraControlCapture
import CameraControlControls
import Foundation
import Synchronization

/// GStreamer itself: initialisation and what is installed.
public enum GStreamer {
    private static let initialised = Mutex<String??>(nil)

    /// Initialises GStreamer once. Throws ``ControlError/Code/cameraUnavailable`` when it cannot start.
    public static func initialise() throws(ControlError) {
        let failure = initialised.withLock { result -> String? in
            if let result { return result }
            var error: UnsafeMutablePointer<CChar>?
            let outcome: String? = ccg_init(&error) == 0 ? nil : (take(error) ?? "GStreamer did not initialise")
            result = .some(outcome)
            return outcome
        }
        if let failure { throw ControlError(.cameraUnavailable, failure) }
    }

    /// True when GStreamer has an element factory of this name (`videotestsrc`, `v4l2src`, `libcamerasrc`).
    public static func hasElement(_ name: String) -> Bool {
        (try? initialise()) != nil && ccg_has_element(name) == 1
    }

    /// A shim string as a Swift string, freed.
    static func take(_ pointer: UnsafeMutablePointer<CChar>?) -> String? {
        guard let pointer else { return nil }
        defer { ccg_free(pointer) }
        return String(cString: pointer)
    }
}

/// A file GStreamer decoded (``GStreamerMedia/decode(path:)``).
public struct DecodedMedia: Sendable {
    /// The first frame, RGBx (4 bytes a pixel, rows packed).
    public var pixels: [UInt8]
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// Frames decoded (1 for a photo).
    public var frameCount: Int
    /// End time of the last frame, microseconds (0 for a photo).
    public var durationMicros: UInt64

    /// The mean of the red, green and blue values of the first frame, 0–255.
    public var meanBrightness: Double {
        var total = 0
        var index = 0
        while index + 2 < pixels.count {
            total += Int(pixels[index]) + Int(pixels[index + 1]) + Int(pixels[index + 2])
            index += 4
        }
        return pixels.isEmpty ? 0 : Double(total) / Double(pixels.count / 4 * 3)
    }
}

/// Reading back what the camera wrote, with GStreamer's own decoders.
public enum GStreamerMedia {
    /// Decodes a photo or a video (decodebin: whatever the installed plugins play).
    ///
    /// - Throws: ``ControlError/Code/captureFailed`` when the file does not decode.
    public static func decode(path: String) throws(ControlError) -> DecodedMedia {
        try GStreamer.initialise()
        var pixels: UnsafeMutablePointer<UInt8>?
        var size = 0
        var width: Int32 = 0
        var height: Int32 = 0
        var frames: Int32 = 0
        var duration: UInt64 = 0
        var error: UnsafeMutablePointer<CChar>?
        guard ccg_decode_file(path, &pixels, &size, &width, &height, &frames, &duration, &error) == 0, let pixels else {
            throw ControlError(.captureFailed, "\(path) does not decode: \(GStreamer.take(error) ?? "unknown error")")
        }
        defer { ccg_free(pixels) }
        return DecodedMedia(
            pixels: Array(UnsafeBufferPointer(start: pixels, count: size)), width: Int(width), height: Int(height),
            frameCount: Int(frames), durationMicros: duration / 1000)
    }

    /// The digital zoom and gain the camera applies: the centre 1/`zoom` of an RGBx image scaled back to
    /// its size (bilinear), each colour times `gain`, clamped.
    public static func process(_ pixels: [UInt8], width: Int, height: Int, zoom: Double, gain: Double) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: width * height * 4)
        guard pixels.count >= width * height * 4 else { return output }
        pixels.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination in
                ccg_process(source.baseAddress, Int32(width), Int32(height), zoom, gain, destination.baseAddress)
            }
        }
        return output
    }
}

/// A GStreamer pipeline handle shared between the camera and its frame thread.
final class Handle: @unchecked Sendable {
    let pointer: OpaquePointer
    private let closed = Mutex(false)

    private init(_ pointer: OpaquePointer) { self.pointer = pointer }

    static func capture(_ launch: String, source: CameraSource) throws(ControlError) -> Handle {
        var error: UnsafeMutablePointer<CChar>?
        guard let pointer = ccg_capture_open(launch, 5_000_000_000, &error) else {
            throw ControlError(.cameraUnavailable, "camera \(source): \(GStreamer.take(error) ?? "cannot start")")
        }
        return Handle(pointer)
    }

    func close() {
        let first = closed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        if first { ccg_pipeline_close(pointer) }
    }
}

/// RGBx frames of one size to JPEG images in memory (a live preview's frames): one GStreamer encoder,
/// used from one thread at a time.
final class PreviewEncoder: @unchecked Sendable {
    let width: Int
    let height: Int
    private let pipeline: OpaquePointer

    /// An encoder for `width` × `height` frames at JPEG `quality`.
    /// - Throws: ``ControlError/Code/cameraUnavailable`` when GStreamer cannot start it (no `jpegenc`).
    init(width: Int, height: Int, quality: Int) throws(ControlError) {
        var error: UnsafeMutablePointer<CChar>?
        guard let pointer = ccg_jpeg_encoder_open(Int32(width), Int32(height), Int32(quality), &error) else {
            throw ControlError(.cameraUnavailable, "preview encoder: \(GStreamer.take(error) ?? "cannot start")")
        }
        self.width = width
        self.height = height
        pipeline = pointer
    }

    deinit { ccg_pipeline_close(pipeline) }

    /// The JPEG image of `pixels` (RGBx, the encoder's size).
    /// - Throws: ``ControlError/Code/captureFailed`` when the encoder fails or gives nothing within a second.
    func encode(_ pixels: [UInt8]) throws(ControlError) -> [UInt8] {
        guard pixels.count == width * height * 4 else {
            throw ControlError(.captureFailed, "preview encoder: \(pixels.count) bytes for a \(width)×\(height) frame")
        }
        var jpeg: UnsafeMutablePointer<UInt8>?
        var size = 0
        var error: UnsafeMutablePointer<CChar>?
        let status = pixels.withUnsafeBufferPointer { buffer in
            ccg_jpeg_encode(pipeline, buffer.baseAddress, buffer.count, 1_000_000_000, &jpeg, &size, &error)
        }
        guard status == 1, let jpeg else {
            throw ControlError(.captureFailed, "preview encoder: \(GStreamer.take(error) ?? "no image within 1 s")")
        }
        defer { ccg_free(jpeg) }
        return Array(UnsafeBufferPointer(start: jpeg, count: size))
    }
}

/// Pixel arithmetic for the digital fallbacks.
enum Pixels {
    /// 2^bias when the bias is applied digitally, else 1.
    static func gain(forBias bias: Double, digital: Bool) -> Double { digital ? pow(2, bias) : 1 }

    /// The frame with its digital zoom and gain applied (the pixels themselves when both are 1).
    static func process(_ frame: Frame) -> [UInt8] {
        if abs(frame.digitalZoom - 1) < 1e-9 && abs(frame.digitalGain - 1) < 1e-9 { return frame.pixels }
        return GStreamerMedia.process(
            frame.pixels, width: frame.width, height: frame.height, zoom: frame.digitalZoom, gain: frame.digitalGain)
    }
}

/// A video being written: frames in (host times), Motion-JPEG in Matroska out.
final class Recorder: @unchecked Sendable {
    let path: String
    let sequenceNumber: Int
    let startHostMicros: UInt64
    /// How long frames wait before they are written (the latest a release may reach the host).
    let holdMicros: UInt64
    private let frameNanos: UInt64
    private struct State {
        var pointer: OpaquePointer?
        var queue: [Frame] = []
        var first: Frame?
        var lastHost: UInt64?
        var frames = 0
        var failure: String?
    }
    private let state: Mutex<State>

    init(
        path: String, sequenceNumber: Int, width: Int, height: Int, fps: Int, startHostMicros: UInt64, holdMicros: UInt64
    ) throws(ControlError) {
        var error: UnsafeMutablePointer<CChar>?
        guard let pointer = ccg_recorder_open(path, Int32(width), Int32(height), Int32(max(1, fps)), &error) else {
            throw ControlError(.captureFailed, "cannot record \(path): \(GStreamer.take(error) ?? "unknown error")")
        }
        self.path = path
        self.sequenceNumber = sequenceNumber
        self.startHostMicros = startHostMicros
        self.holdMicros = holdMicros
        frameNanos = 1_000_000_000 / UInt64(max(1, fps))
        state = Mutex(State(pointer: pointer))
    }

    /// The first frame written or queued.
    var firstFrame: Frame? { state.withLock { $0.first ?? $0.queue.first } }

    /// Queues a frame; frames are written once they are ``holdMicros`` older than the newest, so that a
    /// release that reaches the host late still ends the video at the release (ignored once finished).
    func push(_ frame: Frame) {
        let ready = state.withLock { state -> [Frame] in
            guard state.pointer != nil, frame.hostMicros > (state.queue.last?.hostMicros ?? 0) else { return [] }
            state.queue.append(frame)
            let cut = state.queue.firstIndex { $0.hostMicros &+ holdMicros >= frame.hostMicros } ?? state.queue.count
            defer { state.queue.removeFirst(cut) }
            return Array(state.queue[..<cut])
        }
        for frame in ready { write(frame) }
    }

    private func write(_ frame: Frame) {
        let pixels = Pixels.process(frame)
        state.withLock { state in
            guard let pointer = state.pointer, frame.hostMicros > (state.lastHost ?? 0) || state.lastHost == nil else { return }
            let start = state.first?.hostMicros ?? frame.hostMicros
            let pts = (frame.hostMicros - start) * 1000
            var error: UnsafeMutablePointer<CChar>?
            let status = pixels.withUnsafeBufferPointer { buffer in
                ccg_recorder_push(pointer, buffer.baseAddress, buffer.count, pts, frameNanos, &error)
            }
            if status != 0 { state.failure = state.failure ?? GStreamer.take(error) }
            if state.first == nil { state.first = frame }
            state.lastHost = frame.hostMicros
            state.frames += 1
        }
    }

    /// Ends the video at `endHostMicros` (queued frames after it are dropped); returns its length,
    /// microseconds.
    func finish(endHostMicros: UInt64) throws(ControlError) -> UInt64 {
        let queued = state.withLock { state in
            defer { state.queue = [] }
            return state.queue.filter { $0.hostMicros <= endHostMicros }
        }
        for frame in queued { write(frame) }
        let (pointer, first, last, failure) = state.withLock { state in
            defer { state.pointer = nil }
            return (state.pointer, state.first, state.lastHost, state.failure)
        }
        guard let pointer else { throw ControlError(.captureFailed, "\(path) was already finished") }
        var error: UnsafeMutablePointer<CChar>?
        let status = ccg_recorder_finish(pointer, 10_000_000_000, &error)
        let message = GStreamer.take(error) ?? failure
        guard status == 0, failure == nil, first != nil else {
            try? FileManager.default.removeItem(atPath: path)
            throw ControlError(.captureFailed, "cannot record \(path): \(message ?? "no frames")")
        }
        return (last ?? 0) - (first?.hostMicros ?? 0) + frameNanos / 1000
    }

    /// Stops and deletes the file.
    func cancel() {
        let pointer = state.withLock { state in
            defer { state.pointer = nil }
            return state.pointer
        }
        guard let pointer else { return }
        _ = ccg_recorder_finish(pointer, 2_000_000_000, nil)
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// The V4L2 controls of a device, when it has them.
final class V4L2Controls: @unchecked Sendable {
    struct Zoom {
        let id: UInt32
        let minimum: Int64
        let maximum: Int64
        let step: Int64
        /// min → 1×, and each `minimum` more → 1× more (max/min when min > 0, else 1 + (max − min)/100).
        var maximumFactor: Double {
            minimum > 0 ? Double(maximum) / Double(minimum) : 1 + Double(maximum - minimum) / 100
        }
        func value(forFactor factor: Double) -> Int64 {
            let span = maximumFactor - 1
            let fraction = span > 0 ? (factor - 1) / span : 0
            let raw = Double(minimum) + fraction * Double(maximum - minimum)
            let step = max(1, self.step)
            return min(maximum, max(minimum, Int64((raw / Double(step)).rounded()) * step))
        }
    }
    struct Bias {
        let id: UInt32
        let minimum: Int64
        let maximum: Int64
        /// The control counts thousandths of an EV.
        var range: ClosedRange<Double> {
            let low = Double(minimum) / 1000
            let high = Double(maximum) / 1000
            return low < high ? low...high : -2...2
        }
        func value(forBias bias: Double) -> Int64 { min(maximum, max(minimum, Int64((bias * 1000).rounded()))) }
    }

    /// How the device holds focus and exposure for the AE/AF lock: `V4L2_CID_3A_LOCK` when it has it,
    /// else auto exposure switched to manual (`V4L2_CID_EXPOSURE_AUTO`) and autofocus off
    /// (`V4L2_CID_FOCUS_AUTO`), restored to their previous values on unlock.
    struct Locking {
        var threeA: Bool
        var exposureAuto: Bool
        var focusAuto: Bool
        var supported: FocusExposureLock {
            var lock: FocusExposureLock = []
            if threeA || exposureAuto { lock.insert(.exposure) }
            if threeA || focusAuto { lock.insert(.focus) }
            return lock
        }
    }

    private let fd: Int32
    let zoom: Zoom?
    let exposureBias: Bias?
    let locking: Locking
    /// The auto-exposure and autofocus values the lock replaced, restored on unlock.
    private var savedExposureAuto: Int64?
    private var savedFocusAuto: Int64?

    init?(device: String) {
        fd = ccg_v4l2_open(device)
        guard fd >= 0 else { return nil }
        var minimum: Int64 = 0
        var maximum: Int64 = 0
        var step: Int64 = 0
        var initial: Int64 = 0
        let zoomID = ccg_v4l2_cid_zoom_absolute()
        zoom =
            ccg_v4l2_query(fd, zoomID, &minimum, &maximum, &step, &initial) == 1 && maximum > minimum
            ? Zoom(id: zoomID, minimum: minimum, maximum: maximum, step: step) : nil
        let biasID = ccg_v4l2_cid_auto_exposure_bias()
        exposureBias =
            ccg_v4l2_query(fd, biasID, &minimum, &maximum, &step, &initial) == 1 && maximum > minimum
            ? Bias(id: biasID, minimum: minimum, maximum: maximum) : nil
        locking = Locking(
            threeA: ccg_v4l2_query(fd, ccg_v4l2_cid_3a_lock(), &minimum, &maximum, &step, &initial) == 1,
            exposureAuto: ccg_v4l2_query(fd, ccg_v4l2_cid_exposure_auto(), &minimum, &maximum, &step, &initial) == 1,
            focusAuto: ccg_v4l2_query(fd, ccg_v4l2_cid_focus_auto(), &minimum, &maximum, &step, &initial) == 1)
    }

    /// Locks what `lock` names (of what ``locking`` supports) and unlocks the rest. Driven from one
    /// context (the host's AE/AF lock), so the saved values need no lock of their own.
    func setLock(_ lock: FocusExposureLock) throws(ControlError) {
        if locking.threeA {
            var bits: Int64 = 0
            if lock.contains(.exposure) { bits |= ccg_v4l2_lock_exposure() }
            if lock.contains(.focus) { bits |= ccg_v4l2_lock_focus() }
            try set(ccg_v4l2_cid_3a_lock(), bits)
            return
        }
        if locking.exposureAuto {
            try hold(
                ccg_v4l2_cid_exposure_auto(), manual: ccg_v4l2_exposure_manual(), locked: lock.contains(.exposure),
                saved: &savedExposureAuto)
        }
        if locking.focusAuto {
            try hold(ccg_v4l2_cid_focus_auto(), manual: 0, locked: lock.contains(.focus), saved: &savedFocusAuto)
        }
    }

    private func hold(_ id: UInt32, manual: Int64, locked: Bool, saved: inout Int64?) throws(ControlError) {
        if locked {
            guard saved == nil else { return }
            var current: Int64 = 0
            let status = ccg_v4l2_get(fd, id, &current)
            guard status == 0 else {
                throw ControlError(.deviceRefused, "cannot read control 0x\(String(id, radix: 16)) (errno \(-status))")
            }
            try set(id, manual)
            saved = current
        } else if let previous = saved {
            try set(id, previous)
            saved = nil
        }
    }

    deinit { ccg_v4l2_close(fd) }

    func set(_ id: UInt32, _ value: Int64) throws(ControlError) {
        let status = ccg_v4l2_set(fd, id, value)
        guard status == 0 else {
            throw ControlError(.deviceRefused, "the device refused control 0x\(String(id, radix: 16)) = \(value) (errno \(-status))")
        }
    }
}

/// The sidecar JSON written beside every photo and video.
enum Sidecar {
    static func write(
        for photo: CapturedPhoto, frame: Frame, event: CaptureEvent?, source: CameraSource, videoMicros: UInt64? = nil
    ) throws(ControlError) {
        guard let path = photo.path else { return }
        var object: [String: Any] = [
            "file": (path as NSString).lastPathComponent, "kind": photo.isVideo ? "video" : "photo",
            "sequence": photo.sequenceNumber, "zoom_factor": photo.zoomFactor, "exposure_bias_ev": photo.exposureBias,
            "focus_exposure_lock": photo.focusExposureLock.description,
            "width": frame.width, "height": frame.height, "camera": source.description,
            "frame_host_micros": frame.hostMicros,
        ]
        if let event {
            object["input"] = event.source.description
            object["press_id"] = event.id.rawValue
            let pressDevice = event.deviceTimestampMicros &- (event.pressDurationMicros ?? 0)
            object["press_device_micros"] = pressDevice
            object["release_device_micros"] = event.deviceTimestampMicros
            object["long_press"] = event.isLongPress
        }
        if let press = photo.pressHostMicros {
            object["press_host_micros"] = press
            object["shutter_lag_micros"] = Int64(bitPattern: frame.hostMicros) - Int64(bitPattern: press)
            if let event {
                let pressDevice = event.deviceTimestampMicros &- (event.pressDurationMicros ?? 0)
                object["frame_device_micros"] =
                    Int64(bitPattern: pressDevice) + Int64(bitPattern: frame.hostMicros) - Int64(bitPattern: press)
            }
        }
        if let videoMicros { object["video_micros"] = videoMicros }
        let sidecar = (path as NSString).deletingPathExtension + ".json"
        do {
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])
            try data.write(to: URL(fileURLWithPath: sidecar))
        } catch {
            throw ControlError(.captureFailed, "cannot write \(sidecar): \(error.localizedDescription)")
        }
    }
}
