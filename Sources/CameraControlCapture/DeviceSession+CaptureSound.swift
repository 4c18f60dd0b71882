import CameraControlDevice

extension DeviceSession: CaptureSoundPlaying {
    /// Plays a capture sound on the device (`FeedbackService/PlaySound`).
    ///
    /// - Throws: ``CameraControlRPC/RPCError`` as ``DeviceSession/playSound(_:)``.
    public func play(_ sound: CaptureSound) async throws {
        try await playSound(sound.wireSound)
    }
}
