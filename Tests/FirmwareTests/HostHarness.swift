import CameraControlEmbedded
import CameraControlWire

/// A minimal host for driving an ``EmbeddedDevice`` with hand-built frames in virtual time: it encodes
/// requests with the wire codec, acknowledges reliable packets, keeps the link alive with heartbeats and
/// collects input events of a stream.
struct HostHarness {
    let device: EmbeddedDevice
    var decoder = FrameDecoder()
    var sequence: UInt16 = 0
    var nextCallID: UInt32 = 1
    var lastSendMicros: UInt64 = 0
    /// Every packet received, in order.
    var received: [Packet] = []
    /// Raw device bytes, in order (for determinism checks).
    var wire: [UInt8] = []
    /// Decoder errors seen (a working device produces none).
    var decodeErrors: [WireError] = []
    /// Call id of the input-event stream, if started.
    var eventsCallID: UInt32?
    /// Input events of the stream, duplicates removed, in arrival order.
    var events: [InputEvent] = []
    /// Device time at which each event (by event number) first arrived.
    var arrivalMicros: [UInt32: UInt64] = [:]
    private var seenEventNumbers: Set<UInt32> = []

    init(seed: UInt64 = 1) {
        device = EmbeddedDevice(seed: seed)
    }

    /// A host for `device` (a device that was reset, or booted with a settings store).
    init(device: EmbeddedDevice) {
        self.device = device
    }

    mutating func send(_ packet: Packet) throws {
        var p = packet
        p.sequence = sequence
        sequence &+= 1
        device.write(try PacketEncoder.encode(p))
        lastSendMicros = device.nowMicros
    }

    /// Reads and decodes what the device sent; acks reliable packets.
    mutating func drain() throws {
        let bytes = device.read()
        guard !bytes.isEmpty else { return }
        wire += bytes
        decoder.append(bytes)
        while let output = decoder.next() {
            switch output {
            case .error(let error):
                decodeErrors.append(error)
            case .packet(let packet):
                received.append(packet)
                if packet.isReliable {
                    try send(.ack(sequence: 0, acking: packet.sequence))
                }
                if packet.type == .streamMessage, packet.callID == eventsCallID {
                    let event = try InputEvent(serializedBytes: packet.payload)
                    if seenEventNumbers.insert(event.eventNumber).inserted {
                        events.append(event)
                        arrivalMicros[event.eventNumber] = device.nowMicros
                    }
                }
            }
        }
    }

    /// Runs `millis` of device time in 1 ms steps, draining and heartbeating as a host would.
    mutating func run(millis: Int) throws {
        for _ in 0..<millis {
            device.advance(byMicros: 1_000)
            try drain()
            if device.nowMicros - lastSendMicros >= 40_000 {
                try send(.heartbeat(sequence: 0))
            }
        }
    }

    /// Sends a request and runs until its RESPONSE or ERROR arrives (at most `timeoutMillis`).
    mutating func call(_ method: MethodID, _ request: some WireMessage, timeoutMillis: Int = 200) throws -> Packet {
        let callID = nextCallID
        nextCallID += 1
        let start = received.count
        try send(
            Packet(
                type: .request, callID: callID,
                address: MethodID(service: method.service, method: method.method),
                payload: request.serializedBytes()))
        for _ in 0..<timeoutMillis {
            try run(millis: 1)
            if let reply = received[start...].first(where: {
                $0.callID == callID && ($0.type == .response || $0.type == .error)
            }) {
                return reply
            }
        }
        throw HarnessError.noReply(method.name)
    }

    /// Handshake, then the input-event stream.
    mutating func connect() throws {
        let reply = try call(.deviceHandshake, HandshakeRequest(hostVersion: .v1_0, hostName: "tests"))
        guard reply.type == .response else { throw HarnessError.unexpected(reply) }
        let callID = nextCallID
        nextCallID += 1
        eventsCallID = callID
        try send(
            Packet(
                type: .request, callID: callID,
                address: MethodID(
                    service: MethodID.inputStreamInputEvents.service,
                    method: MethodID.inputStreamInputEvents.method),
                payload: StreamInputEventsRequest().serializedBytes()))
        try run(millis: 5)
    }

    /// Plays a scenario and runs until it has finished plus `settleMillis`.
    mutating func play(_ scenario: String, settleMillis: Int = 100) throws {
        try device.play(scenario: scenario)
        var guardMillis = 0
        while device.isScenarioRunning && guardMillis < 120_000 {
            try run(millis: 10)
            guardMillis += 10
        }
        try run(millis: settleMillis)
    }

    func events(_ kind: InputEventKind) -> [InputEvent] {
        events.filter { $0.kind == kind }
    }
}

enum HarnessError: Error {
    case noReply(String)
    case unexpected(Packet)
}
