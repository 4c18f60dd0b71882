/// What watches a transport's bytes on their way, both ways, without driving it: a byte counter, a
/// recorder, a relay's mirror. A tap sits on the event loop's path (``TappedTransport``), so the
/// transport it watches keeps running on its loop, with no queue and no task in between.
///
/// Calls come from the thread that moves the bytes (the loop's thread for received bytes, the writer's for
/// sent ones): they must return promptly and must not block.
public protocol TransportTap: AnyObject, Sendable {
    /// Bytes were read from the device (valid only during the call).
    func received(_ bytes: UnsafeRawBufferPointer)

    /// Bytes are being written to the device (valid only during the call), before they reach it.
    func sent(_ bytes: UnsafeRawBufferPointer)
}

/// An ``EventLoopTransport`` that shows every byte it moves to a ``TransportTap`` and is otherwise the
/// transport it wraps: driven on an event loop, the tap sees the bytes between the read and the delegate,
/// and between the writer and ``EventLoopControl/write(_:)``.
///
/// ```
///   device ─▶ loop reads ─▶ tap.received ─▶ delegate (RPC core)
///   writer ─▶ tap.sent ─▶ control.write ─▶ device
/// ```
///
/// Its ``receive()`` and ``send(_:)`` (the pull adapter of the transport underneath) are tapped too.
public final class TappedTransport: EventLoopTransport {
    /// The transport underneath.
    public let inner: any EventLoopTransport
    /// What sees the bytes.
    public let tap: any TransportTap

    /// `inner`, its bytes shown to `tap`.
    public init(_ inner: any EventLoopTransport, tap: any TransportTap) {
        self.inner = inner
        self.tap = tap
    }

    /// The inner transport's name.
    public var name: String { inner.name }

    /// Shows `bytes` to the tap, then writes them (see ``ByteTransport/send(_:)``).
    public func send(_ bytes: [UInt8]) async throws(TransportError) {
        bytes.withUnsafeBytes { tap.sent($0) }
        try await inner.send(bytes)
    }

    /// Reads, then shows the bytes to the tap (see ``ByteTransport/receive()``).
    public func receive() async throws(TransportError) -> [UInt8] {
        let bytes = try await inner.receive()
        bytes.withUnsafeBytes { tap.received($0) }
        return bytes
    }

    /// Closes the inner transport.
    public func close() { inner.close() }

    /// Starts the inner transport on `loop` with the tap in the path (see
    /// ``EventLoopTransport/startEventLoop(delegate:on:)``).
    public func startEventLoop(delegate: any EventLoopDelegate, on loop: (any EventLoop)?) -> (any EventLoopControl)? {
        let tapped = TappedDelegate(delegate: delegate, tap: tap)
        guard let control = inner.startEventLoop(delegate: tapped, on: loop) else { return nil }
        return TappedControl(control: control, tap: tap)
    }
}

/// The delegate in the path of received bytes.
private final class TappedDelegate: EventLoopDelegate {
    let delegate: any EventLoopDelegate
    let tap: any TransportTap

    init(delegate: any EventLoopDelegate, tap: any TransportTap) {
        self.delegate = delegate
        self.tap = tap
    }

    func eventLoopReceived(_ bytes: UnsafeRawBufferPointer) {
        tap.received(bytes)
        delegate.eventLoopReceived(bytes)
    }

    func eventLoopTimerFired() { delegate.eventLoopTimerFired() }

    func eventLoopEnded(_ error: TransportError) { delegate.eventLoopEnded(error) }
}

/// The controls in the path of written bytes.
private struct TappedControl: EventLoopControl {
    let control: any EventLoopControl
    let tap: any TransportTap

    func write(_ bytes: UnsafeRawBufferPointer) {
        tap.sent(bytes)
        control.write(bytes)
    }

    func setTimer(after delay: Duration?) { control.setTimer(after: delay) }
    var now: Duration { control.now }
    var readsSystemClock: Bool { control.readsSystemClock }

    var taskExecutor: any TaskExecutor { control.taskExecutor }
}
