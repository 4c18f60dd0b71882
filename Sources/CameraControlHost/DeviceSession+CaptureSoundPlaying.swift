import CameraControlCapture
import CameraControlDevice
import CameraControlWire

// Here rather than in either module: CameraControlCapture must not depend on CameraControlDevice (nor
// Device on Capture), and the host pipeline is the library target that imports both.
extension DeviceSession: CaptureSoundPlaying {
    /// Plays a capture sound on the device (`FeedbackService/PlaySound`).
    ///
    /// - Throws: ``CameraControlRPC/RPCError`` as ``DeviceSession/playSound(_:)``.
    public func play(_ sound: Sound) async throws {
        try await playSound(sound)
    }
}
