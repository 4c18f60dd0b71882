import CameraControlDevice
import CameraControlHost
import CameraControlSerialTransport
import CameraControlTransport
import Synchronization

// A port by its path: the conveniences that open a serial port or a pseudo-terminal (`Transports.open`,
// libserialport) for the device and host layers, which take a transport and an event loop and link no
// serial library themselves.

extension DeviceSession {
    /// Opens `path` (a serial port, a pty or a symlink to one) and handshakes. The port runs on
    /// `eventLoop` (shared with other links and with the actors that use it as their executor), or on a
    /// loop of its own.
    ///
    /// - Throws: `DeviceError`: `.transport` when the port does not open (the `TransportError` attached),
    ///   otherwise as `DeviceSession.connect(transport:hostName:attempts:deadline:eventLoop:)`.
    public static func open(
        path: String, hostName: String = "camctl", eventLoop: (any EventLoop)? = nil
    ) async throws(DeviceError) -> DeviceSession {
        let transport: any EventLoopTransport
        do {
            transport = try Transports.open(path: path)
        } catch {
            throw DeviceError(.transport, "cannot open \(path): \(error)", transportError: error)
        }
        return try await connect(transport: transport, hostName: hostName, eventLoop: eventLoop)
    }

    /// Opens `port`'s path again (`PortReopener.open()`: never a pseudo-terminal that cannot be the one it
    /// opened before) and handshakes, as a host reconnecting does.
    ///
    /// - Throws: `DeviceError`: `.transport` when the port does not open (the `TransportError` attached: `.gone`
    ///   for a pseudo-terminal that closed for good), otherwise as
    ///   `DeviceSession.connect(transport:hostName:attempts:deadline:eventLoop:)`.
    public static func open(
        reopening port: PortReopener, hostName: String = "camctl", eventLoop: (any EventLoop)? = nil
    ) async throws(DeviceError) -> DeviceSession {
        let transport: any EventLoopTransport
        do {
            transport = try port.open()
        } catch {
            throw DeviceError(.transport, "cannot open \(port.path): \(error)", transportError: error)
        }
        return try await connect(transport: transport, hostName: hostName, eventLoop: eventLoop)
    }
}

extension DeviceConnection {
    /// A connection to the port at `path`, reopened after every loss (a pseudo-terminal that closed is not:
    /// `PortReopener`); the port runs on the connection's own event loop.
    public init(path: String, hostName: String = "camctl", retryDelay: Duration = .milliseconds(250), maxConsecutiveFailures: Int? = nil) {
        let port = PortReopener(path: path)
        self.init(retryDelay: retryDelay, maxConsecutiveFailures: maxConsecutiveFailures) {
            loop async throws(DeviceError) -> DeviceSession in
            try await DeviceSession.open(reopening: port, hostName: hostName, eventLoop: loop)
        }
    }
}

extension CameraControlHost {
    /// A host for the port at `path` (a serial port, a pseudo-terminal or a symlink to one), on one thread.
    /// Nothing happens until `start()` or `run()`. A pseudo-terminal that closed is not reopened (`PortReopener`):
    /// the host stops.
    public init(port path: String, hostName: String = "CameraControlHost", configuration: Configuration = Configuration()) {
        let port = PortReopener(path: path)
        self.init(configuration: configuration) { loop async throws(DeviceError) -> DeviceSession in
            try await DeviceSession.open(reopening: port, hostName: hostName, eventLoop: loop)
        }
    }

    /// Opens `path` now (so a wrong port fails here, with the reason), starts the host on that session and
    /// returns once it is connected and its clock estimated. Later sessions reconnect to the same path (a
    /// pseudo-terminal that closed is not reopened, `PortReopener`: the host stops).
    /// `prepare` runs before the host starts on the first session: what it attaches misses nothing of it
    /// (`connect(configuration:prepare:opener:)`).
    ///
    /// - Throws: `DeviceError` from the first open and handshake.
    public static func connect(
        to path: String, hostName: String = "CameraControlHost", configuration: Configuration = Configuration(),
        prepare: @Sendable (CameraControlHost) async -> Void = { _ in }
    ) async throws(DeviceError) -> CameraControlHost {
        let port = PortReopener(path: path)
        return try await connect(configuration: configuration, prepare: prepare) { loop async throws(DeviceError) -> DeviceSession in
            try await DeviceSession.open(reopening: port, hostName: hostName, eventLoop: loop)
        }
    }
}
