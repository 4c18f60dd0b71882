import CameraControlRPC
import CameraControlTransport
import CameraControlWire
import Testing

/// A scripted device on the other end of a transport: decodes the host's packets, records them, and
/// answers with whatever `respond` returns (sequence numbers are filled in).
public actor FakeDevice {
    /// What the device answers to one packet from the host (nothing: `[]`).
    public typealias Responder = @Sendable (Packet) -> [Packet]

    private let transport: any ByteTransport
    private let respond: Responder
    private var decoder = FrameDecoder()
    private var sequence: UInt16 = 0
    /// Every packet the host sent, in order.
    public private(set) var received: [Packet] = []
    private var nextWaiterID = 0
    private var waiters: [(id: Int, predicate: @Sendable ([Packet]) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
    private var task: Task<Void, Never>?

    /// A device on `transport` answering with `respond`; call ``start()`` to begin reading.
    public init(transport: any ByteTransport, respond: @escaping Responder) {
        self.transport = transport
        self.respond = respond
    }

    /// Starts the device's read loop.
    public func start() {
        task = Task { await self.run() }
    }

    /// Sends packets to the host (sequence numbers filled in).
    public func send(_ packets: [Packet]) async {
        var bytes: [UInt8] = []
        for var packet in packets {
            packet.sequence = sequence
            sequence &+= 1
            bytes += try! PacketEncoder.encode(packet)
        }
        guard !bytes.isEmpty else { return }
        try? await transport.send(bytes)
    }

    /// Waits until the received packets satisfy `predicate`; records an issue and returns after a
    /// generous safety timeout so a broken implementation fails instead of hanging the suite.
    public func waitUntil(
        _ predicate: @escaping @Sendable ([Packet]) -> Bool, sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        if predicate(received) { return }
        let id = nextWaiterID
        nextWaiterID += 1
        let timeout = Task {
            try? await Task.sleep(for: .seconds(20))
            self.expire(id, sourceLocation: sourceLocation)
        }
        await withCheckedContinuation { continuation in
            waiters.append((id, predicate, continuation))
        }
        timeout.cancel()
    }

    /// Waits for a packet of `type` (on `call`, if given).
    public func waitFor(_ type: PacketType, call: CallID? = nil, sourceLocation: SourceLocation = #_sourceLocation) async {
        await waitUntil(
            { packets in packets.contains { $0.type == type && (call == nil || $0.callID == call!.rawValue) } },
            sourceLocation: sourceLocation)
    }

    private func expire(_ id: Int, sourceLocation: SourceLocation) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        let waiter = waiters.remove(at: index)
        Issue.record("the device never received the expected packets; got \(received)", sourceLocation: sourceLocation)
        waiter.continuation.resume()
    }

    private func run() async {
        while true {
            guard let bytes = try? await transport.receive() else { return }
            decoder.append(bytes)
            var answers: [Packet] = []
            while let output = decoder.next() {
                guard case .packet(let packet) = output else { continue }
                received.append(packet)
                answers += respond(packet)
            }
            await send(answers)
            let ready = waiters.filter { $0.predicate(received) }
            waiters.removeAll { $0.predicate(received) }
            for waiter in ready { waiter.continuation.resume() }
        }
    }
}

/// Answers handshakes and pings (echoing the request), ignores everything else.
@Sendable public func echoResponder(_ packet: Packet) -> [Packet] {
    guard packet.type == .request, let address = packet.address else { return [] }
    if address == MethodID.deviceHandshake || address == MethodID.devicePing {
        return [Packet(type: .response, callID: packet.callID, payload: packet.payload)]
    }
    return []
}
