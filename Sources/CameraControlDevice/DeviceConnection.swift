import CameraControlRPC
import CameraControlWire

/// A device that stays connected: it opens a session, streams its input events, and when the link is
/// lost (unplugged, restarted, heartbeat timeout) reports it and opens a new session, again and again.
///
/// The capture layer listens to ``activity`` and cancels any press in flight on ``Activity/disconnected(_:)``
/// — a press whose release was never seen must never turn into a capture.
public actor DeviceConnection {
    /// What happens to the connection, in order.
    public enum Activity: Sendable {
        /// A session is up (first connect or reconnect).
        case connected(DeviceInfo)
        /// An input event from the current session.
        case input(InputEvent)
        /// The session ended; a reconnect is attempted after the delay unless stopped.
        case disconnected(RPCError)
        /// An attempt to connect failed; another follows after the delay unless attempts ran out.
        case connectFailed(DeviceError)
    }

    /// Opens a new session; called for the first connect and every reconnect.
    public typealias Opener = @Sendable () async throws(DeviceError) -> DeviceSession

    private let opener: Opener
    private let retryDelay: Duration
    private let maxConsecutiveFailures: Int?
    private var loop: Task<Void, Never>?
    private var current: DeviceSession?
    private let continuation: AsyncStream<Activity>.Continuation
    /// Every activity, from the first connect on. Finishes when ``stop()`` is called, attempts ran out,
    /// or the consumer fell more than 4096 activities behind (then the connection stops: a consumer that
    /// silently missed a `.disconnected` could leave a press uncancelled).
    public nonisolated let activity: AsyncStream<Activity>

    /// A connection that opens sessions with `opener`, waiting `retryDelay` between attempts and giving
    /// up after `maxConsecutiveFailures` failed connects in a row (nil: never).
    public init(retryDelay: Duration = .milliseconds(250), maxConsecutiveFailures: Int? = nil, opener: @escaping Opener) {
        self.opener = opener
        self.retryDelay = retryDelay
        self.maxConsecutiveFailures = maxConsecutiveFailures
        (activity, continuation) = AsyncStream<Activity>.makeStream(bufferingPolicy: .bufferingOldest(4096))
    }

    /// A connection to the port at `path`.
    public init(path: String, hostName: String = "camctl", retryDelay: Duration = .milliseconds(250), maxConsecutiveFailures: Int? = nil) {
        self.init(retryDelay: retryDelay, maxConsecutiveFailures: maxConsecutiveFailures) { () async throws(DeviceError) -> DeviceSession in
            try await DeviceSession.open(path: path, hostName: hostName)
        }
    }

    /// The session in use, nil while disconnected.
    public var session: DeviceSession? { current }

    /// Starts connecting (does nothing when already started).
    public func start() {
        guard loop == nil else { return }
        loop = Task { await self.run() }
    }

    /// Stops: closes the session and finishes ``activity``.
    public func stop() async {
        loop?.cancel()
        loop = nil
        if let current { await current.close() }
        current = nil
        continuation.finish()
    }

    /// Yields an activity; a full buffer ends the stream and the loop instead of dropping it.
    private func report(_ activity: Activity) {
        if case .dropped = continuation.yield(activity) {
            continuation.finish()
            loop?.cancel()
        }
    }

    private func run() async {
        var failures = 0
        while !Task.isCancelled {
            let session: DeviceSession
            do {
                session = try await opener()
            } catch {
                report(.connectFailed(error))
                failures += 1
                if let maxConsecutiveFailures, failures >= maxConsecutiveFailures { break }
                if (try? await Task.sleep(for: retryDelay)) == nil { break }
                continue
            }
            failures = 0
            current = session
            report(.connected(session.info))
            let ending: RPCError
            do {
                let events = try await session.inputEvents()
                for try await event in events {
                    report(.input(event))
                }
                ending = RPCError(code: .unavailable, message: "the device ended the event stream")
            } catch {
                ending = error
            }
            current = nil
            await session.close()
            if Task.isCancelled { break }
            report(.disconnected(ending))
            if (try? await Task.sleep(for: retryDelay)) == nil { break }
        }
        continuation.finish()
    }
}
