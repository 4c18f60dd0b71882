import CameraControlTransport

/// Receives from `transport` until `count` bytes arrived (or the stream ends) and returns them.
func receiveBytes(_ count: Int, from transport: any ByteTransport) async throws -> [UInt8] {
    var received: [UInt8] = []
    while received.count < count {
        received += try await transport.receive()
    }
    return received
}

/// Receives until the transport throws, returning the bytes before and the error.
func receiveUntilEnd(from transport: any ByteTransport) async -> (bytes: [UInt8], error: TransportError?) {
    var received: [UInt8] = []
    while true {
        do {
            received += try await transport.receive()
        } catch {
            return (received, error)
        }
    }
}

/// Bytes 0...255 repeated, `count` long, so ordering mistakes show.
func pattern(_ count: Int, seed: UInt8 = 0) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &+ Int(seed)) }
}
