import CameraControlDevice
import CameraControlPorts
import CameraControlPosixTransport
import CameraControlRPC
import CameraControlTestSupport
import CameraControlTransport
import CameraControlWire
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Bad input written raw to `camctl-sim`'s pseudo-terminal, next to a live session: every case must be
/// counted by the device (`GetCounters`) and must leave the link working for the next frame
/// (docs/PROTOCOL.md §2–§9). Plus the host's side of bad links: a peer that never answers, a peer that
/// disappears mid-call, a call before the handshake.
extension OverRealPTY {
    @Suite("Bad input")
    struct BadInput {
        // MARK: Frames the device drops or refuses, one at a time

        @Test("a bad frame is counted, answered as the spec says, and the next frame works", arguments: BadFrame.allCases)
        func badFrame(_ bad: BadFrame) async throws {
            try await withTappedSession { tap, session in
                let call = tap.nextRawCallID()
                let before = try await session.counters()
                try await tap.inject(bad.wireBytes(callID: call))
                // The device answers in order: once this ping is answered, any answer to the bad frame is in.
                #expect(try await session.ping([0x00, 0xFF]).payload == [0x00, 0xFF])
                let after = try await session.counters()
                #expect(bad.count(after) == bad.count(before) + bad.expectedCount, "\(bad) not counted as expected")
                // A reliable answer sent again before the host's ACK reached the device (a loaded machine)
                // is the same answer: one per sequence number.
                var answers: [Packet] = []
                for packet in tap.packets(callID: call) where !answers.contains(where: { $0.sequence == packet.sequence }) {
                    answers.append(packet)
                }
                if let status = bad.expectedAnswer {
                    #expect(answers.map(\.type) == [.error], "\(answers)")
                    #expect(answers.first?.status == status)
                } else {
                    #expect(answers.isEmpty, "the device answered a frame it should drop: \(answers)")
                }
                // And a raw frame after it is served too.
                try await tap.expectRawPing(payload: [1, 2, 3])
            }
        }

        @Test("garbage between two valid frames in one write: both frames are served, the garbage counted")
        func garbageBetweenFrames() async throws {
            try await withTappedSession { tap, session in
                let before = try await session.counters()
                let first = tap.nextRawCallID()
                let second = tap.nextRawCallID()
                var bytes = try RawFrame.ping(callID: first, payload: [0xAA])
                bytes += [0x13, 0x37, 0xC0, 0xFF, 0xEE, 0x42, 0x99, 0x01, 0x02, 0x00]
                bytes += [0x00, 0x00]  // empty frames: ignored, not errors
                bytes += try RawFrame.ping(callID: second, payload: [0xBB])
                try await tap.inject(bytes)
                #expect(try await tap.rawPingReply(callID: first) == [0xAA])
                #expect(try await tap.rawPingReply(callID: second) == [0xBB])
                let after = try await session.counters()
                #expect(
                    after.framingErrors + after.checkErrors == before.framingErrors + before.checkErrors + 1)
                #expect(after.oversizedFrames == before.oversizedFrames)
            }
        }

        @Test("an oversized frame (no delimiter for a long time) is dropped and counted; the next frame works")
        func oversizedFrame() async throws {
            try await withTappedSession { tap, session in
                let maxFrame = Int(session.info.capabilities.maxFrameBytes)
                let before = try await session.counters()
                let call = tap.nextRawCallID()
                // Four times the limit, in pieces, with nothing from the host in between (no heartbeat's
                // delimiter may end the frame early); then a delimiter and a valid frame.
                try await tap.whileHoldingClient {
                    for _ in 0..<8 {
                        try await tap.inject([UInt8](repeating: 0x41, count: maxFrame / 2))
                        try await Task.sleep(for: .milliseconds(2))
                    }
                    try await tap.inject([0x00] + RawFrame.ping(callID: call, payload: [0x5A]))
                }
                #expect(try await tap.rawPingReply(callID: call) == [0x5A])
                let after = try await session.counters()
                #expect(after.oversizedFrames == before.oversizedFrames + 1)
                #expect(after.framingErrors == before.framingErrors)
                #expect(after.checkErrors == before.checkErrors)
                #expect(try await session.ping([3]).payload == [3])
            }
        }

        @Test("a request written one byte at a time is served")
        func requestByteByByte() async throws {
            try await withTappedSession { tap, session in
                let before = try await session.counters()
                let call = tap.nextRawCallID()
                let payload: [UInt8] = [0x00, 0x01, 0x00, 0xFE, 0xFF, 0x00]
                let frame = tap.numbered(try RawFrame.ping(callID: call, payload: payload))
                try await tap.whileHoldingClient {
                    for byte in frame {
                        try await tap.injectVerbatim([byte])
                        try await Task.sleep(for: .milliseconds(1))
                    }
                }
                #expect(try await tap.rawPingReply(callID: call) == payload)
                let after = try await session.counters()
                #expect(after.framingErrors == before.framingErrors)
                #expect(after.checkErrors == before.checkErrors)
            }
        }

        @Test("a request split in two at every byte boundary is served every time")
        func requestSplitAtEveryBoundary() async throws {
            try await withTappedSession { tap, session in
                let before = try await session.counters()
                let payload: [UInt8] = [0x10, 0x00, 0x20]
                let length = try RawFrame.ping(callID: tap.peekRawCallID(), payload: payload).count
                for split in 1..<length {
                    let call = tap.nextRawCallID()
                    let frame = tap.numbered(try RawFrame.ping(callID: call, payload: payload))
                    try await tap.whileHoldingClient {
                        try await tap.injectVerbatim(Array(frame[..<split]))
                        try await Task.sleep(for: .milliseconds(2))
                        try await tap.injectVerbatim(Array(frame[split...]))
                    }
                    #expect(try await tap.rawPingReply(callID: call) == payload, "split at \(split)")
                }
                let after = try await session.counters()
                #expect(after.framingErrors == before.framingErrors)
                #expect(after.checkErrors == before.checkErrors)
            }
        }

        // MARK: Calls the device refuses

        /// Issue 9 item 2 (R3): v1.0 answered ALREADY_EXISTS on the live call's id, which ended the host's
        /// stream; v1.1 ignores the request (a retransmission that slipped past the window) and counts it.
        @Test("a second request on a call id in flight is ignored and counted; the first call goes on")
        func duplicateCallID() async throws {
            try await withTappedSession { tap, session in
                let call = tap.nextRawCallID()
                let start = try await session.counters()
                try await tap.inject(RawFrame.request(.inputStreamInputEvents, callID: call, payload: []))
                try await tap.inject(RawFrame.ping(callID: call, payload: [1]))
                #expect(try await session.ping([2]).payload == [2])  // answered in order: after the two above
                #expect(!tap.packets(callID: call).contains { $0.type == .error })
                #expect(try await session.counters().duplicateRequests == start.duplicateRequests + 1)
                // The stream is still in flight: cancelling it is counted.
                let before = try await session.counters()
                try await tap.inject(RawFrame.wire(Packet(type: .cancel, callID: call)))
                let counted = try await eventually {
                    try await session.counters().cancelledCalls == before.cancelledCalls + 1
                }
                #expect(counted)
            }
        }

        @Test("one call more than max_concurrent_calls gets RESOURCE_EXHAUSTED and is counted")
        func tooManyCalls() async throws {
            try await withTappedSession { tap, session in
                let limit = Int(session.info.capabilities.maxConcurrentCalls)
                let before = try await session.counters()
                let calls = (0...limit).map { _ in tap.nextRawCallID() }
                var bytes: [UInt8] = []
                for call in calls {
                    bytes += try RawFrame.request(.inputStreamInputEvents, callID: call, payload: [])
                }
                try await tap.inject(bytes)
                let refused = try await tap.packet(callID: calls[limit]) { $0.type == .error }
                #expect(refused.status == .resourceExhausted)
                for call in calls.prefix(limit) {
                    // v1.1: an empty RESPONSE confirms each stream (§7)
                    #expect(
                        tap.packets(callID: call).allSatisfy {
                            $0.type == .streamMessage || ($0.type == .response && $0.payload.isEmpty)
                        }, "call \(call) refused")
                }
                // While every slot is taken, the session's own unary calls are refused too…
                let busy = await #expect(throws: RPCError.self) { try await session.ping([1]) }
                #expect(busy?.code == .resourceExhausted)
                // …and once they are cancelled, everything works again.
                var cancels: [UInt8] = []
                for call in calls.prefix(limit) { cancels += try RawFrame.wire(Packet(type: .cancel, callID: call)) }
                try await tap.inject(cancels)
                #expect(try await session.ping([2]).payload == [2])
                let after = try await session.counters()
                #expect(after.callsRefused >= before.callsRefused + 2)
                #expect(after.cancelledCalls == before.cancelledCalls + UInt32(limit))
            }
        }

        @Test("a call before the handshake gets FAILED_PRECONDITION; a handshake afterwards works")
        func callBeforeHandshake() async throws {
            try await withSimulator { simulator in
                let transport = try PTYTransport(path: simulator.ptyPath)
                let client = RPCClient(transport: transport)
                let error = await #expect(throws: RPCError.self) {
                    try await client.unary(.devicePing, PingRequest(payload: [1]), as: PingResponse.self, deadline: .seconds(10))
                }
                #expect(error?.code == .failedPrecondition)
                let counters = await #expect(throws: RPCError.self) {
                    try await client.unary(.diagnosticsGetCounters, GetCountersRequest(), as: Counters.self, deadline: .seconds(10))
                }
                #expect(counters?.code == .failedPrecondition)
                client.close()

                let session = try await DeviceSession.open(path: simulator.ptyPath)
                #expect(try await session.ping([5]).payload == [5])
                await session.close()
            }
        }

        // MARK: Bad links, seen from the host

        @Test("a peer that never answers: the call fails with DEADLINE_EXCEEDED, the handshake with handshakeFailed")
        func peerNeverAnswers() async throws {
            let pair = try PseudoTerminalPair.open()
            defer {
                pair.master.close()
                pair.subordinate.close()
            }
            let client = RPCClient(transport: pair.master)
            let error = try await withTimeout(.seconds(15), "a call nobody answers") {
                await rpcFailure {
                    _ = try await client.unary(.devicePing, PingRequest(payload: [1]), as: PingResponse.self, deadline: .milliseconds(300))
                }
            }
            #expect(error?.code == .deadlineExceeded)
            #expect(client.counters.deadlinesExceeded == 1)
            client.close()

            let silent = try PseudoTerminalPair.open()
            defer {
                silent.master.close()
                silent.subordinate.close()
            }
            let failure = try await withTimeout(.seconds(15), "a handshake nobody answers") {
                await deviceFailure {
                    _ = try await DeviceSession.connect(transport: silent.master, attempts: 2, deadline: .milliseconds(400))
                }
            }
            #expect(failure?.code == .handshakeFailed)
            #expect(failure?.rpcError?.code == .deadlineExceeded)
        }

        @Test("a device that sends garbage, an oversized frame, a bad check and strays before its answer: the call still succeeds")
        func hostSurvivesBadDeviceOutput() async throws {
            let pair = try PseudoTerminalPair.open()
            defer {
                pair.master.close()
                pair.subordinate.close()
            }
            // A scripted device on the subordinate side: every Ping is answered after a burst of bad frames.
            let device = pair.subordinate
            let script = Task {
                var decoder = FrameDecoder()
                var sequence: UInt16 = 100  // v1.1 drops repeated sequence numbers: number every packet
                func numbered(_ packet: Packet) -> Packet {
                    var packet = packet
                    packet.sequence = sequence
                    sequence &+= 1
                    return packet
                }
                while true {
                    decoder.append(try await device.receive())
                    while let output = decoder.next() {
                        guard case .packet(let packet) = output, packet.type == .request else { continue }
                        let echo = try PingRequest(serializedBytes: packet.payload).payload
                        var reply: [UInt8] = [0x13, 0x37, 0xC0, 0xFF, 0xEE, 0x00]  // garbage
                        reply += [UInt8](repeating: 0x41, count: 6000) + [0x00]  // > 4093 bytes, then a delimiter
                        var badCheck = try PacketEncoder.encodeUnstuffed(Packet(type: .heartbeat, callID: 0))
                        badCheck[badCheck.count - 1] ^= 0x80
                        reply += COBS.encode(badCheck) + [0x00]
                        reply += try RawFrame.wire(Packet(type: PacketType(rawValue: 11), callID: packet.callID))
                        reply += try RawFrame.wire(
                            numbered(Packet(type: .response, callID: packet.callID &+ 1000, payload: [0x08, 0x01])))
                        reply += try RawFrame.wire(
                            numbered(
                                Packet(
                                    type: .response, callID: packet.callID,
                                    payload: PingResponse(payload: echo, deviceTimeMicros: 1).serializedBytes())))
                        try await device.send(reply)
                    }
                }
            }
            defer { script.cancel() }

            let client = RPCClient(transport: pair.master)
            for payload: [UInt8] in [[1], [0x00, 0xFF]] {
                let reply = try await withTimeout(.seconds(15), "a ping behind bad frames") {
                    try await client.unary(.devicePing, PingRequest(payload: payload), as: PingResponse.self, deadline: .seconds(10))
                }
                #expect(reply.payload == payload)
            }
            let counters = client.counters
            #expect(counters.wire.oversizedFrames == 2)
            #expect(counters.wire.checkErrors == 2)
            #expect(counters.wire.unknownPacketTypes == 2)
            #expect(counters.wire.framingErrors + counters.wire.checkErrors >= 4)  // the garbage, too
            #expect(counters.unknownCallPackets == 2)
            #expect(counters.callsSucceeded == 2)
            client.close()
        }

        @Test(
            "a peer that never reads: a send past the write queue's bound ends the link with .io, no block and no growth; later sends say so"
        )
        func sendToAPeerThatNeverReads() async throws {
            let pair = try PseudoTerminalPair.open()
            defer {
                pair.subordinate.close()
                pair.master.close()
            }
            let master = pair.master
            let tooMuch = [UInt8](repeating: 0x41, count: FileDescriptorLink.writeQueueLimit + (1 << 20))
            let error = try await withTimeout(.seconds(10), "a send to a peer that never reads") {
                await #expect(throws: TransportError.self) { try await master.send(tooMuch) }
            }
            #expect(error?.code == .io)
            #expect(error?.message.contains("does not read") == true)
            let later = await #expect(throws: TransportError.self) { try await master.send([1]) }
            #expect(later?.code == .io)
            master.close()
            let afterClose = await #expect(throws: TransportError.self) { try await master.send([1]) }
            #expect(afterClose?.code == .closed)
        }

        @Test("the pty closing mid-call: the call and the stream in flight fail with UNAVAILABLE, no hang")
        func ptyClosesMidCall() async throws {
            let simulator = try SimulatorProcess()
            defer { simulator.kill() }
            let session = try await DeviceSession.open(path: simulator.ptyPath)
            let events = try await session.inputEvents()
            let streamTask = Task<RPCError?, Never> {
                await rpcFailure {
                    for try await _ in events {}
                }
            }
            _ = try await session.ping()  // the device has the stream now

            // Freeze the simulator so the next call cannot be answered, then kill it with the call in flight.
            simulator.send(signal: SIGSTOP)
            let started = session.client.counters.callsStarted
            let callTask = Task<RPCError?, Never> {
                await rpcFailure {
                    _ = try await session.ping([1], deadline: .seconds(600))
                }
            }
            let inFlight = await eventually { session.client.counters.callsStarted > started }
            #expect(inFlight)
            simulator.kill()

            let callError = try await withTimeout(.seconds(15), "the call in flight") { await callTask.value }
            let streamError = try await withTimeout(.seconds(15), "the stream in flight") { await streamTask.value }
            #expect(callError?.code == .unavailable)
            #expect(streamError?.code == .unavailable)
            // Nothing can start on the dead link, and that fails at once too.
            let after = await #expect(throws: RPCError.self) { try await session.ping([2], deadline: .seconds(600)) }
            #expect(after?.code == .unavailable)
            await session.close()
        }
    }
}

// MARK: - Bad frames

/// One kind of bad input for the table-driven test: what to write, which device counter must go up, and
/// what the device must answer.
enum BadFrame: String, CaseIterable, Sendable, CustomStringConvertible {
    /// Bytes that are no frame, then a delimiter.
    case garbage
    /// The first half of a valid frame's wire bytes, then a delimiter.
    case truncatedFrame
    /// A checked frame too short for an envelope (§4: fewer than 4 bytes before the check).
    case envelopeTooShort
    /// A valid request with one bit of its check flipped.
    case badCheck
    /// A checked frame of packet type 9, unknown in v1.
    case unknownPacketType
    /// A request to service 99.
    case unknownService
    /// A request to DeviceService method 99.
    case unknownMethod
    /// A request to SimulatorService method 99 (served by the simulator's extension).
    case unknownSimulatorMethod
    /// A Ping whose payload does not parse.
    case malformedPayload
    /// A Configure whose payload does not parse.
    case malformedConfigure
    /// A request on call id 0, which names the link (§4).
    case requestOnCallZero
    /// Only delimiters: empty frames, ignored without counting (§2).
    case emptyFrames

    var description: String { rawValue }

    /// The bytes to write for a frame on `callID`.
    func wireBytes(callID: UInt32) throws -> [UInt8] {
        switch self {
        case .garbage:
            return [0x13, 0x37, 0xC0, 0xFF, 0xEE, 0x42, 0x99, 0x01, 0x02, 0x00]
        case .truncatedFrame:
            let wire = try RawFrame.ping(callID: callID, payload: Array(0..<40))
            return Array(wire.prefix(wire.count / 2)) + [0x00]
        case .envelopeTooShort:
            return RawFrame.wire(body: [0x08, 0x00])
        case .badCheck:
            var frame = try PacketEncoder.encodeUnstuffed(RawFrame.pingPacket(callID: callID, payload: [1, 2]))
            frame[frame.count - 1] ^= 0x01
            return COBS.encode(frame) + [0x00]
        case .unknownPacketType:
            return try RawFrame.wire(Packet(type: PacketType(rawValue: 9), callID: callID))
        case .unknownService:
            return try RawFrame.request(address: MethodID(service: 99, method: 1), callID: callID, payload: [])
        case .unknownMethod:
            return try RawFrame.request(address: MethodID(service: 1, method: 99), callID: callID, payload: [])
        case .unknownSimulatorMethod:
            return try RawFrame.request(address: MethodID(service: 6, method: 99), callID: callID, payload: [])
        case .malformedPayload:
            // Field 1 (payload), length 5, but one byte follows.
            return try RawFrame.request(.devicePing, callID: callID, payload: [0x0A, 0x05, 0x01])
        case .malformedConfigure:
            // A varint that never ends.
            return try RawFrame.request(.configConfigure, callID: callID, payload: [0x08, 0xFF, 0xFF])
        case .requestOnCallZero:
            // type 1, sequence 0, call id 0, DeviceService/Ping: the encoder refuses this, so by hand.
            return RawFrame.wire(body: [0x01, 0x00, 0x00, 0x00, 0x01, 0x02])
        case .emptyFrames:
            return [0x00, 0x00, 0x00]
        }
    }

    /// The device counter(s) this input must raise.
    func count(_ c: Counters) -> UInt32 {
        switch self {
        case .garbage, .truncatedFrame: c.framingErrors + c.checkErrors
        case .envelopeTooShort: c.shortFrames  // v1.1 (§2's order); v1.0 counted framing_errors
        case .requestOnCallZero: c.envelopeErrors  // v1.1 (§4); v1.0 counted framing_errors
        case .badCheck: c.checkErrors
        case .unknownPacketType: c.unknownPacketTypes
        case .unknownService, .unknownMethod, .unknownSimulatorMethod: c.unimplementedCalls
        case .malformedPayload, .malformedConfigure: c.invalidArguments
        case .emptyFrames:
            c.framingErrors + c.checkErrors + c.oversizedFrames + c.unknownPacketTypes + c.unimplementedCalls
                + c.invalidArguments
        }
    }

    /// By how much ``count(_:)`` must go up.
    var expectedCount: UInt32 { self == .emptyFrames ? 0 : 1 }

    /// The status of the `ERROR` the device must answer on the call id, or nil when it must stay silent.
    var expectedAnswer: StatusCode? {
        switch self {
        case .unknownPacketType, .unknownService, .unknownMethod, .unknownSimulatorMethod: .unimplemented
        case .malformedPayload, .malformedConfigure: .invalidArgument
        default: nil
        }
    }
}

/// Frames built by hand for writing raw.
enum RawFrame {
    /// The wire bytes of `packet` (any size up to 4093; the sequence number does not matter to the device).
    static func wire(_ packet: Packet) throws -> [UInt8] {
        try PacketEncoder.encode(packet, maxFrameBytes: WireFormat.maxFrameBytes)
    }

    /// `COBS(body ‖ CRC-16 LE) 0x00` for an unstuffed body that the encoder would refuse.
    static func wire(body: [UInt8]) -> [UInt8] {
        let check = CRC16.checksum(body)
        return COBS.encode(body + [UInt8(truncatingIfNeeded: check), UInt8(truncatingIfNeeded: check >> 8)]) + [0x00]
    }

    /// A `REQUEST` for `method`.
    static func request(_ method: MethodID, callID: UInt32, payload: [UInt8]) throws -> [UInt8] {
        try request(address: method, callID: callID, payload: payload)
    }

    /// A `REQUEST` to any address.
    static func request(address: MethodID, callID: UInt32, payload: [UInt8]) throws -> [UInt8] {
        try wire(Packet(type: .request, callID: callID, address: address, payload: payload))
    }

    /// A `DeviceService/Ping` request packet.
    static func pingPacket(callID: UInt32, payload: [UInt8]) -> Packet {
        Packet(
            type: .request, callID: callID, address: MethodID.devicePing,
            payload: PingRequest(payload: payload).serializedBytes())
    }

    /// The wire bytes of a `DeviceService/Ping` request.
    static func ping(callID: UInt32, payload: [UInt8]) throws -> [UInt8] {
        try wire(pingPacket(callID: callID, payload: payload))
    }
}

// MARK: - A transport with a tap

/// Runs `body` with a simulator, a ``TapTransport`` on its pty and a session over that tap; closes and
/// kills everything afterwards.
func withTappedSession(_ body: (TapTransport, DeviceSession) async throws -> Void) async throws {
    try await withSimulator { simulator in
        let tap = try TapTransport(path: simulator.ptyPath)
        let session = try await DeviceSession.connect(transport: tap)
        do {
            try await body(tap, session)
        } catch {
            await session.close()
            throw error
        }
        await session.close()
    }
}

/// A ``PTYTransport`` that lets a test write raw bytes next to a live ``RPCClient``, hold the client's
/// writes back for a while, and see every packet the device sends on the test's own call ids. It runs on
/// the pty's event loop like any port: the client's writes and the device's bytes pass through it there.
///
/// Every write goes out whole, under one lock, so raw frames never land inside the client's frames. Call
/// ids from ``rawCallIDBase`` up are the test's; the client never reaches them (it counts from 1), and
/// drops the answers as packets of unknown calls.
///
/// Since v1.1 the device drops every packet whose sequence number it has seen (§6), so the tap numbers
/// every frame it writes, the client's and the raw ones, from one counter (a retransmission of the
/// client's keeps its number); frames that do not decode go out as they are.
final class TapTransport: EventLoopTransport, @unchecked Sendable {
    /// The first call id for raw frames (a 5-byte varint).
    static let rawCallIDBase: UInt32 = 0x1000_0000

    private let inner: PTYTransport
    private let lock = NSLock()
    private var decoder = FrameDecoder()
    private var seen: [UInt32: [Packet]] = [:]
    private var nextCall = TapTransport.rawCallIDBase
    private var renumbering = Renumbering()
    /// The pty's loop, once the client started it.
    private var control: (any EventLoopControl)?
    /// The client's writes held back (nil: not holding).
    private var held: [[UInt8]]?

    /// Opens the pty at `path`.
    init(path: String) throws {
        inner = try PTYTransport(path: path)
    }

    var name: String { "tap of \(inner.name)" }

    func send(_ bytes: [UInt8]) async throws(TransportError) {
        try await inner.send(bytes)
    }

    func receive() async throws(TransportError) -> [UInt8] {
        try await inner.receive()
    }

    func close() { inner.close() }

    func startEventLoop(delegate: any EventLoopDelegate, on loop: (any EventLoop)?) -> (any EventLoopControl)? {
        guard let control = inner.startEventLoop(delegate: TapDelegate(tap: self, delegate: delegate), on: loop) else {
            return nil
        }
        lock.withLock { self.control = control }
        return TapControl(tap: self, control: control)
    }

    /// The device's bytes, on their way to the client.
    fileprivate func observe(_ bytes: UnsafeRawBufferPointer) {
        lock.withLock {
            decoder.append(Array(bytes))
            while let output = decoder.next() {
                if case .packet(let packet) = output, packet.callID >= Self.rawCallIDBase {
                    seen[packet.callID, default: []].append(packet)
                }
            }
        }
    }

    /// The client's bytes: out now, renumbered, or held.
    fileprivate func clientWrite(_ bytes: UnsafeRawBufferPointer) {
        lock.withLock {
            if held != nil {
                held?.append(Array(bytes))
            } else {
                writeLocked(renumbering.rewrite(Array(bytes), keepingRetransmissions: true))
            }
        }
    }

    private func writeLocked(_ bytes: [UInt8]) {
        guard let control else { return }
        bytes.withUnsafeBytes { control.write($0) }
    }

    /// A fresh call id for a raw frame.
    func nextRawCallID() -> UInt32 {
        lock.lock()
        defer { lock.unlock() }
        nextCall += 1
        return nextCall
    }

    /// The call id ``nextRawCallID()`` will return next (for sizing frames).
    func peekRawCallID() -> UInt32 {
        lock.lock()
        defer { lock.unlock() }
        return nextCall + 1
    }

    /// Writes `bytes` to the pty, renumbered, bypassing the client (and its hold).
    func inject(_ bytes: [UInt8]) async throws {
        lock.withLock { writeLocked(renumbering.rewrite(bytes, keepingRetransmissions: false)) }
    }

    /// `bytes` with every frame numbered as ``inject(_:)`` would (for writing in pieces with
    /// ``injectVerbatim(_:)``).
    func numbered(_ bytes: [UInt8]) -> [UInt8] {
        lock.withLock { renumbering.rewrite(bytes, keepingRetransmissions: false) }
    }

    /// Writes `bytes` to the pty exactly as they are.
    func injectVerbatim(_ bytes: [UInt8]) async throws {
        lock.withLock { writeLocked(bytes) }
    }

    /// Runs `body` while the client's writes wait; they go out, in order, afterwards.
    func whileHoldingClient(_ body: () async throws -> Void) async throws {
        lock.withLock { held = [] }
        defer {
            lock.withLock {
                for chunk in held ?? [] { writeLocked(renumbering.rewrite(chunk, keepingRetransmissions: true)) }
                held = nil
            }
        }
        try await body()
    }

    /// Every packet the device sent on `callID` so far.
    func packets(callID: UInt32) -> [Packet] {
        lock.lock()
        defer { lock.unlock() }
        return seen[callID] ?? []
    }

    /// The first packet on `callID` that matches, waiting up to `timeout` for it.
    func packet(
        callID: UInt32, within timeout: Duration = .seconds(10), where match: (Packet) -> Bool = { _ in true }
    ) async throws -> Packet {
        var found: Packet?
        _ = await eventually(within: timeout) {
            found = packets(callID: callID).first(where: match)
            return found != nil
        }
        guard let found else {
            throw ChildProcessFailure(description: "no answer on raw call \(callID) within \(timeout)")
        }
        return found
    }

    /// The payload echoed by the device's `RESPONSE` to a raw ping on `callID`.
    func rawPingReply(callID: UInt32) async throws -> [UInt8] {
        let answer = try await packet(callID: callID)
        guard answer.type == .response else {
            throw ChildProcessFailure(description: "raw ping \(callID) answered \(answer.type) \(String(describing: answer.status))")
        }
        return try PingResponse(serializedBytes: answer.payload).payload
    }

    /// Writes a raw ping and expects its echo.
    func expectRawPing(payload: [UInt8]) async throws {
        let call = nextRawCallID()
        try await inject(RawFrame.ping(callID: call, payload: payload))
        #expect(try await rawPingReply(callID: call) == payload)
    }
}

/// Gives the frames of two writers one sequence of numbers (see ``TapTransport``).
struct Renumbering {
    private var next: UInt16 = 0
    /// The client's number → the number it went out with (its retransmissions keep it).
    private var given: [UInt16: UInt16] = [:]

    /// `bytes` with every complete frame that decodes renumbered; anything else unchanged.
    mutating func rewrite(_ bytes: [UInt8], keepingRetransmissions: Bool) -> [UInt8] {
        var out: [UInt8] = []
        var start = 0
        for (index, byte) in bytes.enumerated() where byte == 0 {
            out += renumber(Array(bytes[start..<index]), keepingRetransmissions) + [0]
            start = index + 1
        }
        return out + bytes[start...]
    }

    private mutating func renumber(_ stuffed: [UInt8], _ keep: Bool) -> [UInt8] {
        guard var frame = try? COBS.decode(stuffed), frame.count >= WireFormat.minFrameBytes else { return stuffed }
        let end = frame.count - 2
        guard CRC16.checksum(frame[0..<end]) == UInt16(frame[end]) | UInt16(frame[end + 1]) << 8 else { return stuffed }
        let original = UInt16(frame[1]) | UInt16(frame[2]) << 8
        let number: UInt16
        if keep, let earlier = given[original] {
            number = earlier
        } else {
            number = next
            next &+= 1
            if keep { given[original] = number }
        }
        frame[1] = UInt8(truncatingIfNeeded: number)
        frame[2] = UInt8(truncatingIfNeeded: number >> 8)
        let check = CRC16.checksum(frame[0..<end])
        frame[end] = UInt8(truncatingIfNeeded: check)
        frame[end + 1] = UInt8(truncatingIfNeeded: check >> 8)
        return COBS.encode(frame)
    }
}

/// The tap in the path of the device's bytes.
private final class TapDelegate: EventLoopDelegate {
    let tap: TapTransport
    let delegate: any EventLoopDelegate

    init(tap: TapTransport, delegate: any EventLoopDelegate) {
        self.tap = tap
        self.delegate = delegate
    }

    func eventLoopReceived(_ bytes: UnsafeRawBufferPointer) {
        tap.observe(bytes)
        delegate.eventLoopReceived(bytes)
    }

    func eventLoopTimerFired() { delegate.eventLoopTimerFired() }

    func eventLoopEnded(_ error: TransportError) { delegate.eventLoopEnded(error) }
}

/// The tap in the path of the client's bytes.
private struct TapControl: EventLoopControl {
    let tap: TapTransport
    let control: any EventLoopControl

    func write(_ bytes: UnsafeRawBufferPointer) { tap.clientWrite(bytes) }
    func setTimer(after delay: Duration?) { control.setTimer(after: delay) }
    var now: Duration { control.now }
    var taskExecutor: any TaskExecutor { control.taskExecutor }
}
