import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a handler answers a request with.
public enum HTTPServerReply: Sendable {
    /// A whole response; the connection stays open for the next request unless the client asked to close.
    case response(HTTPResponse)
    /// An endless `text/event-stream`: these bytes first (events or nothing), then every
    /// ``HTTPServer/broadcast(_:to:)`` to ``HTTPServer/eventChannel`` until either side closes.
    case eventStream(initial: [UInt8])
    /// An endless response of another type (e.g. `multipart/x-mixed-replace; boundary=…` for an MJPEG
    /// preview): these bytes first, then every ``HTTPServer/broadcast(_:to:)`` to `channel`.
    case stream(contentType: String, channel: String, initial: [UInt8])
}

/// Why the server could not start.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    /// What failed, with the OS's reason.
    public var message: String

    /// An error with this message.
    public init(message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}

/// What the server has done so far (for tests and the page's own footer).
public struct HTTPServerStatistics: Sendable, Equatable {
    /// Connections accepted.
    public var accepted = 0
    /// Connections answered 503 at once because ``HTTPServer/Configuration/maxConnections`` were open.
    public var refusedBusy = 0
    /// Requests handed to the handler.
    public var requests = 0
    /// Requests refused by the decoder (400, 413, 414, 431, 501, 505).
    public var refusedBadRequest = 0
    /// Connections closed with 408 because their head did not arrive in time.
    public var timedOut = 0
    /// Event streams dropped because the client did not read and its backlog passed the bound.
    public var droppedSlowStreams = 0
    /// Connections open now.
    public var open = 0
}

/// A minimal, bounded HTTP/1.1 server for the live page: one thread `poll()`s a listening socket and
/// every connection, requests are decoded by ``HTTPRequestDecoder`` and answered by one handler that runs
/// on that thread (keep it short), and event streams get what ``broadcast(_:)`` is given.
///
/// Every resource is bounded: the number of connections (more are answered 503 and closed), a request's
/// head and body (``HTTPLimits``), the time a head may take to arrive (slow senders get 408), the time a
/// connection may sit idle, and each event stream's unsent backlog (a client that stops reading is
/// dropped). It listens on loopback unless told otherwise, writes with `MSG_NOSIGNAL` (a peer that went
/// away never raises SIGPIPE), and owns its descriptors and its wake-up pipe until ``shutdown()`` has
/// returned.
public final class HTTPServer: Sendable {
    /// Where to listen and the bounds.
    public struct Configuration: Sendable {
        /// An IPv4 address to bind (`127.0.0.1` by default: the page is for this machine).
        public var host: String
        /// The port; 0 lets the OS choose (read it back from ``HTTPServer/port``).
        public var port: UInt16
        /// Bounds of one request.
        public var limits: HTTPLimits
        /// The most connections open at once.
        public var maxConnections: Int
        /// How long a request's head may take from its first byte (or from the connection's start).
        public var headTimeout: Duration
        /// How long a connection without an event stream may stay idle between requests.
        public var idleTimeout: Duration
        /// The most unsent bytes an event stream may hold before its client is dropped.
        public var maxStreamBacklog: Int

        /// A configuration with these values.
        public init(
            host: String = "127.0.0.1", port: UInt16 = 0, limits: HTTPLimits = .default, maxConnections: Int = 64,
            headTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(60), maxStreamBacklog: Int = 1 << 20
        ) {
            self.host = host
            self.port = port
            self.limits = limits
            self.maxConnections = maxConnections
            self.headTimeout = headTimeout
            self.idleTimeout = idleTimeout
            self.maxStreamBacklog = maxStreamBacklog
        }
    }

    private struct Connection {
        var descriptor: Int32
        var decoder: HTTPRequestDecoder
        var output: [UInt8] = []
        /// The broadcast channel this connection streams, once it is a stream.
        var channel: String?
        var isStream: Bool { channel != nil }
        var closeAfterWrite = false
        /// The answer is out and the write side shut: the rest of what the peer sends is read and
        /// discarded until it closes or `lastActivity + lingerTime` (closing with unread bytes would reset
        /// the connection and could destroy the answer before the peer reads it).
        var lingering = false
        /// When the head being read must be complete (nil between requests).
        var headDeadline: ContinuousClock.Instant?
        var lastActivity: ContinuousClock.Instant
    }

    private struct State {
        var connections: [Int32: Connection] = [:]
        var pendingBroadcasts: [(channel: String, bytes: [UInt8])] = []
        var statistics = HTTPServerStatistics()
        var stopping = false
        var stopped = false
    }

    /// The configuration in force.
    public let configuration: Configuration
    /// The port the server listens on.
    public let port: UInt16
    private let listener: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let handler: @Sendable (HTTPRequest) -> HTTPServerReply
    private let state = Mutex(State())
    private let finished = DispatchSemaphore(value: 0)

    /// Binds, listens, and starts the server's thread.
    ///
    /// - Throws: ``HTTPServerError`` when the address is not IPv4, or the socket cannot be bound (in use, no
    ///   permission) or listened on.
    public init(
        configuration: Configuration = Configuration(), handler: @escaping @Sendable (HTTPRequest) -> HTTPServerReply
    ) throws(HTTPServerError) {
        self.configuration = configuration
        self.handler = handler
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = configuration.port.bigEndian
        guard inet_pton(AF_INET, configuration.host, &address.sin_addr) == 1 else {
            throw HTTPServerError(message: "\(configuration.host) is not an IPv4 address")
        }
        #if canImport(Glibc)
            let socketType = Int32(SOCK_STREAM.rawValue)
        #else
            let socketType = SOCK_STREAM
        #endif
        let listener = socket(AF_INET, socketType, 0)
        guard listener >= 0 else { throw HTTPServerError(message: "cannot create a socket: \(Self.reason())") }
        var one: Int32 = 1
        _ = setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            let why = Self.reason()
            close(listener)
            throw HTTPServerError(message: "cannot listen on \(configuration.host):\(configuration.port): \(why)")
        }
        guard listen(listener, 128) == 0 else {
            let why = Self.reason()
            close(listener)
            throw HTTPServerError(message: "cannot listen on \(configuration.host):\(configuration.port): \(why)")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else {
            let why = Self.reason()
            close(listener)
            throw HTTPServerError(message: "cannot create the server's wake-up pipe: \(why)")
        }
        for descriptor in [listener, pipeEnds[0], pipeEnds[1]] {
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        }
        self.listener = listener
        self.port = UInt16(bigEndian: actual.sin_port)
        self.wakeRead = pipeEnds[0]
        self.wakeWrite = pipeEnds[1]
        let thread = Thread { [self] in run() }
        thread.name = "camctl-http"
        thread.start()
    }

    /// What the server has done so far.
    public var statistics: HTTPServerStatistics { state.withLock { $0.statistics } }

    /// The channel of ``HTTPServerReply/eventStream(initial:)`` streams.
    public static let eventChannel = "events"

    /// Sends `bytes` (for event streams: one or more encoded events, ``ServerSentEvents/event(_:data:)``) to
    /// every stream of `channel` open now. A stream whose unsent backlog would pass
    /// ``Configuration/maxStreamBacklog`` is dropped.
    public func broadcast(_ bytes: [UInt8], to channel: String = HTTPServer.eventChannel) {
        let wake = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.pendingBroadcasts.append((channel, bytes))
            return state.pendingBroadcasts.count == 1
        }
        if wake { self.wake() }
    }

    /// Stops listening, closes every connection and waits for the thread to end. Idempotent; never call it
    /// from the handler (it runs on the thread this waits for).
    public func shutdown() {
        let first = state.withLock { state -> Bool in
            defer { state.stopping = true }
            return !state.stopping
        }
        if first {
            wake()
            finished.wait()
            close(wakeRead)
            close(wakeWrite)
        }
    }

    // MARK: The server's thread

    private func wake() {
        var one: UInt8 = 1
        _ = write(wakeWrite, &one, 1)
    }

    private func run() {
        var connections: [Int32: Connection] = [:]
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let (stopping, broadcasts) = state.withLock { state -> (Bool, [(channel: String, bytes: [UInt8])]) in
                defer { state.pendingBroadcasts.removeAll(keepingCapacity: true) }
                return (state.stopping, state.pendingBroadcasts)
            }
            if stopping { break }
            for (channel, bytes) in broadcasts {
                for (descriptor, connection) in connections where connection.channel == channel {
                    if connection.output.count + bytes.count > configuration.maxStreamBacklog {
                        drop(descriptor, from: &connections) { $0.droppedSlowStreams += 1 }
                    } else {
                        connections[descriptor]?.output.append(contentsOf: bytes)
                    }
                }
            }
            for descriptor in Array(connections.keys) { flush(descriptor, in: &connections) }

            var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0), pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            for (descriptor, connection) in connections {
                var events = Int16(POLLIN)
                if !connection.output.isEmpty { events |= Int16(POLLOUT) }
                fds.append(pollfd(fd: descriptor, events: events, revents: 0))
            }
            let now = ContinuousClock.now
            let nextDeadline = connections.values.compactMap { deadline(of: $0) }.min()
            let timeout = nextDeadline.map { Self.milliseconds(now.duration(to: $0)) } ?? -1
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready < 0 && errno != EINTR { break }

            if fds[0].revents != 0 {
                var drain = [UInt8](repeating: 0, count: 64)
                while read(wakeRead, &drain, drain.count) > 0 {}
            }
            if fds[1].revents & Int16(POLLIN) != 0 { acceptAll(into: &connections) }
            for entry in fds.dropFirst(2) where entry.revents != 0 {
                guard connections[entry.fd] != nil else { continue }
                if entry.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                    readFrom(entry.fd, into: &connections, buffer: &buffer)
                }
                if connections[entry.fd] != nil && entry.revents & Int16(POLLOUT) != 0 {
                    flush(entry.fd, in: &connections)
                }
            }
            expire(&connections, now: ContinuousClock.now)
            let open = connections.count
            state.withLock { $0.statistics.open = open }
        }
        for descriptor in connections.keys { close(descriptor) }
        close(listener)
        state.withLock {
            $0.statistics.open = 0
            $0.stopped = true
        }
        finished.signal()
    }

    /// How long a connection whose answer is out keeps reading (and discarding) before it is closed.
    static let lingerTime: Duration = .seconds(2)

    private func deadline(of connection: Connection) -> ContinuousClock.Instant? {
        if connection.lingering { return connection.lastActivity + Self.lingerTime }
        if connection.closeAfterWrite { return connection.lastActivity + configuration.headTimeout }
        if let head = connection.headDeadline { return head }
        if connection.isStream { return nil }
        return connection.lastActivity + configuration.idleTimeout
    }

    private func acceptAll(into connections: inout [Int32: Connection]) {
        while true {
            let descriptor = accept(listener, nil, nil)
            guard descriptor >= 0 else { return }
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            if connections.count >= configuration.maxConnections {
                let refusal = HTTPResponse.text("busy: at most \(configuration.maxConnections) connections\n", status: .serviceUnavailable)
                let bytes = refusal.encoded(closing: true)
                _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                close(descriptor)
                state.withLock {
                    $0.statistics.accepted += 1
                    $0.statistics.refusedBusy += 1
                }
                continue
            }
            let now = ContinuousClock.now
            connections[descriptor] = Connection(
                descriptor: descriptor, decoder: HTTPRequestDecoder(limits: configuration.limits),
                headDeadline: now + configuration.headTimeout, lastActivity: now)
            state.withLock { $0.statistics.accepted += 1 }
        }
    }

    private func readFrom(_ descriptor: Int32, into connections: inout [Int32: Connection], buffer: inout [UInt8]) {
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            drop(descriptor, from: &connections)
            return
        }
        guard count > 0, var connection = connections[descriptor] else { return }
        let now = ContinuousClock.now
        if connection.lingering {
            // Discarded; the linger time is not extended, so a peer that keeps sending is still closed.
            return
        }
        connection.lastActivity = now
        if connection.isStream || connection.closeAfterWrite {
            // Nothing more is read on a stream or a connection being closed; bytes are discarded.
            connections[descriptor] = connection
            return
        }
        connection.decoder.append(buffer[0..<count])
        if connection.headDeadline == nil { connection.headDeadline = now + configuration.headTimeout }
        serve(&connection)
        connections[descriptor] = connection
        flush(descriptor, in: &connections)
    }

    /// Answers every whole request `connection` holds.
    private func serve(_ connection: inout Connection) {
        while !connection.isStream && !connection.closeAfterWrite {
            let request: HTTPRequest?
            do {
                request = try connection.decoder.next()
            } catch {
                connection.output += HTTPResponse.text(error.message + "\n", status: error.status).encoded(closing: true)
                connection.closeAfterWrite = true
                connection.headDeadline = nil
                state.withLock { $0.statistics.refusedBadRequest += 1 }
                return
            }
            guard let request else { return }
            connection.headDeadline = connection.decoder.isIdle ? nil : ContinuousClock.now + configuration.headTimeout
            state.withLock { $0.statistics.requests += 1 }
            let closing = request.header("Connection")?.lowercased() == "close" || request.version == "HTTP/1.0"
            switch handler(request) {
            case .response(let response):
                connection.output += response.encoded(closing: closing)
                connection.closeAfterWrite = closing
            case .eventStream(let initial):
                connection.output += ServerSentEvents.responseHead + initial
                connection.channel = Self.eventChannel
                connection.headDeadline = nil
            case .stream(let contentType, let channel, let initial):
                let head = "HTTP/1.1 200 OK\r\nContent-Type: \(contentType)\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
                connection.output += Array(head.utf8) + initial
                connection.channel = channel
                connection.headDeadline = nil
            }
        }
    }

    private func flush(_ descriptor: Int32, in connections: inout [Int32: Connection]) {
        guard var connection = connections[descriptor] else { return }
        while !connection.output.isEmpty {
            let sent = connection.output.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent > 0 {
                connection.output.removeFirst(sent)
            } else if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                break
            } else {
                drop(descriptor, from: &connections)
                return
            }
        }
        if connection.output.isEmpty && connection.closeAfterWrite && !connection.lingering {
            Self.shutWrite(descriptor)
            connection.lingering = true
            connection.lastActivity = ContinuousClock.now
        }
        connections[descriptor] = connection
    }

    private func expire(_ connections: inout [Int32: Connection], now: ContinuousClock.Instant) {
        for (descriptor, connection) in connections {
            if let head = connection.headDeadline, now >= head, !connection.closeAfterWrite {
                var late = connection
                late.output += HTTPResponse.text("the request did not arrive in time\n", status: .requestTimeout).encoded(closing: true)
                late.closeAfterWrite = true
                late.headDeadline = nil
                connections[descriptor] = late
                state.withLock { $0.statistics.timedOut += 1 }
                flush(descriptor, in: &connections)
            } else if connection.headDeadline == nil, !connection.isStream,
                now >= connection.lastActivity + configuration.idleTimeout
            {
                drop(descriptor, from: &connections)
            } else if connection.lingering, now >= connection.lastActivity + Self.lingerTime {
                drop(descriptor, from: &connections)
            } else if connection.closeAfterWrite, now >= connection.lastActivity + configuration.headTimeout {
                // A refused client that does not read its refusal is not waited for.
                drop(descriptor, from: &connections)
            }
        }
    }

    private func drop(
        _ descriptor: Int32, from connections: inout [Int32: Connection], counting: (inout HTTPServerStatistics) -> Void = { _ in }
    ) {
        guard connections.removeValue(forKey: descriptor) != nil else { return }
        close(descriptor)
        state.withLock { counting(&$0.statistics) }
    }

    private static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        if seconds >= 86_400 { return 86_400_000 }
        return Int32(seconds * 1_000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }

    private static func shutWrite(_ descriptor: Int32) {
        #if canImport(Glibc)
            _ = Glibc.shutdown(descriptor, Int32(SHUT_WR))
        #elseif canImport(Darwin)
            _ = Darwin.shutdown(descriptor, SHUT_WR)
        #endif
    }

    private static func reason() -> String { String(cString: strerror(errno)) }
}
