// The AVFoundation backend (macOS, iOS). Everything is behind `#if canImport(AVFoundation)`: on Linux
// this module is empty, and nothing here has been built or run in this project's CI (docs/CAMERA.md).
#if canImport(AVFoundation)
    import AVFoundation
    import CameraControlCapture
    import CameraControlControls
    import Foundation

    /// A real camera on AVFoundation: the zoom slider sets `AVCaptureDevice.videoZoomFactor`, the
    /// exposure-bias slider `setExposureTargetBias`, a click takes an `AVCapturePhotoOutput` photo
    /// (zero shutter lag where the system offers it) and a click and hold records an
    /// `AVCaptureMovieFileOutput` movie from the press to the release.
    public final class AVFoundationCamera: NSObject, CameraDevice, @unchecked Sendable {
        /// The capture device.
        public let device: AVCaptureDevice
        /// The session the outputs run in (start it with `startRunning()`; add a preview layer as you like).
        public let session = AVCaptureSession()
        /// Where photos and movies go.
        public let outputDirectory: URL
        private let photoOutput = AVCapturePhotoOutput()
        private let movieOutput = AVCaptureMovieFileOutput()
        private let movieWriter = MovieWriter()
        private let lock = NSLock()
        private var observers: [UInt64: @Sendable (CameraPropertyChange) -> Void] = [:]
        private var nextObserver: UInt64 = 1
        private var captures = 0
        private var recording: (id: CaptureEventID, url: URL)?

        /// The default video camera (or `device`) with a photo and a movie output.
        ///
        /// - Throws: ``ControlError/Code/cameraUnavailable`` without a camera or camera permission.
        public init(device: AVCaptureDevice? = AVCaptureDevice.default(for: .video), outputDirectory: URL) throws(ControlError) {
            guard let device else { throw ControlError(.cameraUnavailable, "no video capture device") }
            self.device = device
            self.outputDirectory = outputDirectory
            super.init()
            do {
                let input = try AVCaptureDeviceInput(device: device)
                session.beginConfiguration()
                if session.canAddInput(input) { session.addInput(input) }
                if session.canAddOutput(photoOutput) { session.addOutput(photoOutput) }
                if session.canAddOutput(movieOutput) { session.addOutput(movieOutput) }
                session.commitConfiguration()
            } catch {
                throw ControlError(.cameraUnavailable, "camera \(device.localizedName): \(error.localizedDescription)")
            }
        }

        /// The device's unique id.
        public var uniqueID: String { device.uniqueID }
        /// `minAvailableVideoZoomFactor ... maxAvailableVideoZoomFactor` (1...1 where the device has no zoom).
        public var zoomFactorRange: ClosedRange<Double> {
            #if os(iOS)
                let low = Double(device.minAvailableVideoZoomFactor)
                return low...max(low + 0.01, Double(device.maxAvailableVideoZoomFactor))
            #else
                return 1...1.01
            #endif
        }
        /// The current zoom factor.
        public var zoomFactor: Double {
            #if os(iOS)
                Double(device.videoZoomFactor)
            #else
                1
            #endif
        }
        /// The lens switch-over factors.
        public var prominentZoomFactors: [Double] {
            #if os(iOS)
                device.virtualDeviceSwitchOverVideoZoomFactors.map { $0.doubleValue }
            #else
                []
            #endif
        }
        /// `minExposureTargetBias ... maxExposureTargetBias`.
        public var exposureBiasRange: ClosedRange<Double> {
            let low = Double(device.minExposureTargetBias)
            return low...max(low + 0.01, Double(device.maxExposureTargetBias))
        }
        /// The current exposure target bias.
        public var exposureBias: Double { Double(device.exposureTargetBias) }

        /// Sets `videoZoomFactor` (iOS; macOS cameras do not zoom).
        public func setZoomFactor(_ factor: Double, source: CameraChangeSource) throws(ControlError) {
            try check(factor, zoomFactorRange, .zoomFactor)
            #if os(iOS)
                try configure { device.videoZoomFactor = CGFloat(factor) }
            #endif
            notify(CameraPropertyChange(property: .zoomFactor, value: factor, source: source))
        }

        /// Sets the exposure target bias.
        public func setExposureBias(_ bias: Double, source: CameraChangeSource) throws(ControlError) {
            try check(bias, exposureBiasRange, .exposureBias)
            try configure { device.setExposureTargetBias(Float(bias), completionHandler: nil) }
            notify(CameraPropertyChange(property: .exposureBias, value: bias, source: source))
        }

        /// What the device can lock: exposure when it supports `exposureMode = .locked`, focus when it
        /// supports `focusMode = .locked`.
        public var supportedFocusExposureLock: FocusExposureLock {
            var lock: FocusExposureLock = []
            if device.isExposureModeSupported(.locked) { lock.insert(.exposure) }
            if device.isFocusModeSupported(.locked) { lock.insert(.focus) }
            return lock
        }

        /// What the device holds locked now (`exposureMode` / `focusMode` are `.locked`).
        public var focusExposureLock: FocusExposureLock {
            var lock: FocusExposureLock = []
            if device.exposureMode == .locked { lock.insert(.exposure) }
            if device.focusMode == .locked { lock.insert(.focus) }
            return lock
        }

        /// The AE/AF lock: `exposureMode = .locked` and `focusMode = .locked` for what `lock` names, back to
        /// continuous auto exposure and autofocus for the rest.
        public func setFocusExposureLock(_ lock: FocusExposureLock) throws(ControlError) {
            let supported = supportedFocusExposureLock
            guard supported.isSuperset(of: lock) else {
                throw ControlError(.deviceRefused, "\(device.localizedName) cannot lock \(lock.subtracting(supported))")
            }
            try configure {
                if lock.contains(.exposure) {
                    device.exposureMode = .locked
                } else if device.isExposureModeSupported(.continuousAutoExposure) {
                    device.exposureMode = .continuousAutoExposure
                }
                if lock.contains(.focus) {
                    device.focusMode = .locked
                } else if device.isFocusModeSupported(.continuousAutoFocus) {
                    device.focusMode = .continuousAutoFocus
                }
            }
        }

        /// Takes a photo; the JPEG is written when AVFoundation delivers it (the record's path).
        public func capturePhoto() throws(ControlError) -> CapturedPhoto {
            let number = lock.withLock {
                captures += 1
                return captures
            }
            let url = outputDirectory.appendingPathComponent(String(format: "IMG_%04d.jpg", number))
            let settings = AVCapturePhotoSettings(format: [AVVideoCodecKey: AVVideoCodecType.jpeg])
            photoOutput.capturePhoto(with: settings, delegate: PhotoWriter(url: url))
            return CapturedPhoto(
                sequenceNumber: number, zoomFactor: zoomFactor, exposureBias: exposureBias, path: url.path,
                focusExposureLock: focusExposureLock)
        }

        /// `began`: starts a movie (kept only for a long press); `ended`: stops it, or takes a photo.
        public func capture(_ event: CaptureEvent, hostMicros: UInt64?) throws(ControlError) -> CapturedPhoto? {
            switch event.phase {
            case .began:
                let url = outputDirectory.appendingPathComponent("VID_press\(event.id.rawValue).mov")
                lock.withLock { recording = (event.id, url) }
                movieOutput.startRecording(to: url, recordingDelegate: movieWriter)
                return nil
            case .cancelled:
                stopRecording(for: event.id, keep: false)
                return nil
            case .ended:
                guard event.isLongPress, let url = stopRecording(for: event.id, keep: true) else {
                    stopRecording(for: event.id, keep: false)
                    return try capturePhoto()
                }
                let number = lock.withLock {
                    captures += 1
                    return captures
                }
                return CapturedPhoto(
                    sequenceNumber: number, zoomFactor: zoomFactor, exposureBias: exposureBias, path: url.path, isVideo: true)
            }
        }

        /// Adds a property observer.
        public func addObserver(_ observer: @escaping @Sendable (CameraPropertyChange) -> Void) -> ObserverToken {
            lock.withLock {
                defer { nextObserver += 1 }
                observers[nextObserver] = observer
                return ObserverToken(rawValue: nextObserver)
            }
        }

        /// Removes a property observer.
        public func removeObserver(_ token: ObserverToken) { _ = lock.withLock { observers.removeValue(forKey: token.rawValue) } }

        @discardableResult
        private func stopRecording(for id: CaptureEventID, keep: Bool) -> URL? {
            guard let current = lock.withLock({ recording }), current.id == id else { return nil }
            lock.withLock { recording = nil }
            movieOutput.stopRecording()
            if !keep { try? FileManager.default.removeItem(at: current.url) }
            return current.url
        }

        private func check(_ value: Double, _ range: ClosedRange<Double>, _ property: CameraProperty) throws(ControlError) {
            guard value.isFinite else { throw ControlError(.nonFiniteValue, "\(property) \(value) is not finite") }
            guard range.contains(value) else { throw ControlError(.valueOutOfRange, "\(property) \(value) is outside \(range)") }
        }

        private func configure(_ change: () -> Void) throws(ControlError) {
            do { try device.lockForConfiguration() } catch {
                throw ControlError(.deviceRefused, "\(device.localizedName): \(error.localizedDescription)")
            }
            change()
            device.unlockForConfiguration()
        }

        private func notify(_ change: CameraPropertyChange) {
            let current = lock.withLock { observers.sorted { $0.key < $1.key }.map(\.value) }
            for observer in current { observer(change) }
        }
    }

    /// Writes a delivered photo to its file (and keeps itself alive until then).
    private final class PhotoWriter: NSObject, AVCapturePhotoCaptureDelegate, @unchecked Sendable {
        let url: URL
        private var me: PhotoWriter?
        init(url: URL) {
            self.url = url
            super.init()
            me = self
        }
        func photoOutput(_ output: AVCapturePhotoOutput, didFinishProcessingPhoto photo: AVCapturePhoto, error: (any Error)?) {
            try? photo.fileDataRepresentation()?.write(to: url)
            me = nil
        }
    }

    /// Ignores movie delegate calls (the file is at the URL given when recording started).
    private final class MovieWriter: NSObject, AVCaptureFileOutputRecordingDelegate, @unchecked Sendable {
        func fileOutput(
            _ output: AVCaptureFileOutput, didFinishRecordingTo outputFileURL: URL, from connections: [AVCaptureConnection],
            error: (any Error)?
        ) {}
    }
#endif
