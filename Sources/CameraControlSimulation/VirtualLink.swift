import CameraControlEmbedded
import CameraControlRPC
import CameraControlWire

/// The real C firmware and the real host connection core, wired together in virtual time.
///
/// Both sides share one clock, the device's: every ``step()`` hands the host's outbound bytes to the
/// firmware, advances device time by ``stepMicros``, and feeds what the firmware sent to the host's
/// ``ConnectionCore``. Nothing sleeps and nothing races: the same seed, scenario and calls give the same
/// bytes, events and timings on every run. This is how the test suite runs the whole protocol stack, and
/// what a benchmark or conformance harness uses to run many devices in one process.
///
/// A ``linkFilter`` sees every chunk in either direction and may change it (drop, corrupt, delay bytes),
/// for fault-injection tests.
public final class VirtualLink {
    /// Which way a chunk of bytes travels.
    public enum Direction: Sendable {
        /// Host → device.
        case toDevice
        /// Device → host.
        case toHost
    }

    /// The firmware and its simulated sensors.
    public let device: EmbeddedDevice
    /// The host side of the link.
    public private(set) var connection: ConnectionCore
    /// Device time advanced by each ``step()``; one sample period at 1 kHz by default.
    public var stepMicros: UInt64 = 1_000
    /// Sees, and may rewrite, every chunk before it is delivered. nil passes everything.
    public var linkFilter: ((Direction, inout [UInt8]) -> Void)?
    /// Connection events not yet taken by ``takeEvents()``.
    private var pendingEvents: [ConnectionEvent] = []
    /// Messages of open streams, by call, not yet taken by ``takeStreamMessages(_:as:)``.
    private var streamBuffers: [CallID: [[UInt8]]] = [:]
    private var streamEnds: [CallID: RPCError?] = [:]
    private var unaryResults: [CallID: Result<[UInt8], RPCError>] = [:]
    /// True while the host is disconnected: bytes in both directions are lost (an unplugged cable).
    public var isUnplugged = false

    /// A device booted with `seed` and a host connection with `configuration`.
    public init(seed: UInt64 = 1, configuration: ConnectionConfiguration = ConnectionConfiguration()) {
        device = EmbeddedDevice(seed: seed)
        connection = ConnectionCore(configuration: configuration)
    }

    /// The shared virtual time as the host sees it.
    public var now: Duration { .microseconds(Int64(device.nowMicros)) }

    /// Device time, microseconds since boot.
    public var nowMicros: UInt64 { device.nowMicros }

    // MARK: Time

    /// One step: host bytes to the device, device time forward, device bytes to the host, host timers.
    public func step() {
        var outbound = connection.takeOutbound()
        if !outbound.isEmpty {
            linkFilter?(.toDevice, &outbound)
            if !isUnplugged { device.write(outbound) }
        }
        device.advance(byMicros: stepMicros)
        var inbound = device.read()
        if !inbound.isEmpty {
            linkFilter?(.toHost, &inbound)
            if !isUnplugged { connection.receive(inbound, now: now) }
        }
        connection.poll(now: now)
        collect()
    }

    /// Steps until `micros` of device time have passed.
    public func run(forMicros micros: UInt64) {
        let end = device.nowMicros + micros
        while device.nowMicros < end { step() }
    }

    /// Steps until `condition` holds or `timeoutMicros` passed; returns whether it holds.
    @discardableResult
    public func run(untilMicros timeoutMicros: UInt64 = 2_000_000, while condition: () -> Bool) -> Bool {
        let end = device.nowMicros + timeoutMicros
        while condition() {
            if device.nowMicros >= end { return false }
            step()
        }
        return true
    }

    // MARK: Calls

    /// Calls a unary method and steps until it ends.
    ///
    /// - Throws: ``RPCError`` as the device or the connection ends the call (`DEADLINE_EXCEEDED` after
    ///   `deadlineMicros` of virtual time).
    public func call<Request: WireMessage, Response: WireMessage>(
        _ method: MethodID, _ request: Request, as: Response.Type = Response.self, deadlineMicros: UInt64 = 1_000_000
    ) throws(RPCError) -> Response {
        let call = try connection.startCall(
            method: method, request: request.serializedBytes(),
            deadline: now + .microseconds(Int64(deadlineMicros)), now: now)
        run(untilMicros: deadlineMicros + 1_000_000) { unaryResults[call] == nil }
        guard let result = unaryResults.removeValue(forKey: call) else {
            throw RPCError(code: .internal, message: "the call never ended (connection core bug)", method: method)
        }
        let bytes = try result.get()
        do {
            return try Response(serializedBytes: bytes)
        } catch {
            throw RPCError(code: .internal, message: "response does not decode: \(error)", method: method, cause: error)
        }
    }

    /// Starts a unary call and returns at once, without stepping: later ``step()``s carry the request to
    /// the device and the answer back. Use it where stepping is already under way (a callback inside a
    /// rig's step must not nest a blocking ``call(_:_:as:deadlineMicros:)``); take the outcome with
    /// ``takeUnaryResult(_:)``.
    ///
    /// - Throws: ``RPCError`` when the call cannot start (link closed, too many calls in flight, request
    ///   too large).
    public func startUnaryCall<Request: WireMessage>(
        _ method: MethodID, _ request: Request, deadlineMicros: UInt64 = 1_000_000
    ) throws(RPCError) -> CallID {
        try connection.startCall(
            method: method, request: request.serializedBytes(),
            deadline: now + .microseconds(Int64(deadlineMicros)), now: now)
    }

    /// The outcome of a unary call once it ended (the response's bytes, or the error), removed when taken;
    /// nil while it is still in flight or for a call this link does not know.
    public func takeUnaryResult(_ call: CallID) -> Result<[UInt8], RPCError>? {
        unaryResults.removeValue(forKey: call)
    }

    /// Handshakes as the device session does (docs/PROTOCOL.md §9, v1.1): the reliable `REQUEST` is
    /// re-sent with a fresh call id with backoff — the first attempt waits 100 ms for its response, then
    /// 200 ms, 400 ms, … — until `attempts` attempts were made or `deadlineMicros` of virtual time passed.
    ///
    /// - Throws: ``RPCError`` as the device answers, or the last attempt's `DEADLINE_EXCEEDED`.
    @discardableResult
    public func handshake(
        version: ProtocolVersion = ProtocolVersion(major: 1, minor: 2), attempts: Int = 8, deadlineMicros: UInt64 = 3_000_000
    ) throws(RPCError) -> HandshakeResponse {
        let request = HandshakeRequest(hostVersion: version, hostName: "virtual-link")
        let end = nowMicros + deadlineMicros
        var wait: UInt64 = 100_000
        var lastError = RPCError(code: .deadlineExceeded, message: "handshake: no attempt fitted the deadline")
        let attempts = max(1, attempts)
        for attempt in 0..<attempts where nowMicros < end {
            let remaining = end - nowMicros
            let thisWait = attempt == attempts - 1 ? remaining : min(wait, remaining)
            wait *= 2
            do {
                let response: HandshakeResponse = try call(.deviceHandshake, request, deadlineMicros: thisWait)
                // What DeviceSession does next: the device's heartbeat interval and frame size.
                if let capabilities = response.capabilities {
                    adoptSession(capabilities, streamsConfirmed: (response.negotiatedVersion?.minor ?? 0) >= 1)
                }
                return response
            } catch {
                lastError = error
                if error.code != .deadlineExceeded { throw error }
            }
        }
        throw lastError
    }

    /// Adopts what a handshake announced, as the device session does after its handshake: the device's
    /// heartbeat interval (host heartbeats start) and its largest frame (requests up to that size may be
    /// sent; the connection's default is the protocol minimum, 128 bytes), and whether the session confirms
    /// its streams (`streamsConfirmed`: negotiated minor 1 or later; nil keeps what the connection knows).
    /// ``handshake(version:attempts:deadlineMicros:)`` itself leaves the connection as configured.
    public func adoptSession(_ capabilities: Capabilities, streamsConfirmed: Bool? = nil) {
        let interval = capabilities.heartbeatIntervalMillis
        connection.markSessionEstablished(
            heartbeatInterval: interval > 0 ? .milliseconds(Int64(interval)) : nil,
            maxFrameBytes: capabilities.maxFrameBytes > 0 ? Int(capabilities.maxFrameBytes) : nil,
            streamsConfirmed: streamsConfirmed, now: now)
        collect()
    }

    /// Starts a server stream; its messages are collected for ``takeStreamMessages(_:as:)``.
    ///
    /// - Throws: ``RPCError`` when the call cannot start.
    public func openStream<Request: WireMessage>(_ method: MethodID, _ request: Request) throws(RPCError) -> CallID {
        let call = try connection.startCall(method: method, request: request.serializedBytes(), now: now)
        streamBuffers[call] = []
        return call
    }

    /// Cancels a call (sends `CANCEL`).
    public func cancel(_ call: CallID) {
        connection.cancelCall(call, now: now)
        collect()
    }

    /// The messages a stream received since the last take, decoded.
    ///
    /// - Throws: ``RPCError`` with `INTERNAL` when a message does not decode.
    public func takeStreamMessages<Message: WireMessage>(_ call: CallID, as: Message.Type = Message.self) throws(RPCError) -> [Message] {
        let payloads = streamBuffers[call] ?? []
        if streamBuffers[call] != nil { streamBuffers[call] = [] }
        var messages: [Message] = []
        for payload in payloads {
            do {
                messages.append(try Message(serializedBytes: payload))
            } catch {
                throw RPCError(code: .internal, message: "stream message does not decode: \(error)", cause: error)
            }
        }
        return messages
    }

    /// How a stream ended: nil while it runs, `.some(nil)` for `OK`, `.some(error)` otherwise.
    public func streamEnd(_ call: CallID) -> RPCError?? {
        streamEnds[call]
    }

    /// Connection events since the last take (responses and stream messages are also routed to the
    /// call helpers above).
    public func takeEvents() -> [ConnectionEvent] {
        defer { pendingEvents.removeAll() }
        return pendingEvents
    }

    private func collect() {
        for event in connection.takeEvents() {
            switch event {
            case .response(let call, let payload):
                unaryResults[call] = .success(payload)
            case .streamMessage(let call, let payload):
                streamBuffers[call, default: []].append(payload)
            case .streamEnded(let call):
                streamEnds[call] = .some(nil)
            case .failed(let call, let error):
                if streamBuffers[call] != nil {
                    streamEnds[call] = .some(error)
                } else {
                    unaryResults[call] = .failure(error)
                }
            default:
                break
            }
            pendingEvents.append(event)
        }
    }
}
