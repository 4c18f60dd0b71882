import CameraControlEmbedded
import CameraControlWire

/// `camctl-bench wire`: bytes on the wire per message kind and per raw sample, with our framing overhead
/// broken out, next to pw_rpc over pw_hdlc, eRPC (framed transport, basic codec) and MAVLink 2, whose
/// sizes are computed from their published packet layouts (no bytes are measured for them):
///
/// - pw_rpc (pigweed `pw_rpc/internal/packet.proto`): type (2 B), channel_id (2 B), service_id fixed32 (5 B),
///   method_id fixed32 (5 B), call_id (2 B), payload (2 B + n) in protobuf; pw_hdlc adds flag, address,
///   control, a 4-byte FCS and a closing flag (8 B), before escaping.
/// - eRPC: framed transport header (CRC-16 of header, size, CRC-16 of body: 6 B), basic-codec message
///   header (version/service/request/type: 4 B, sequence: 4 B), a binary field as a 4-byte length + n.
/// - MAVLink 2: 10-byte header, payload (trailing zeros truncated, so ≤ n), 2-byte checksum; unsigned.
///
/// Raw samples are measured twice: on a synthetic batch (a force ramp while sliding), and on the firmware's own
/// stream (the core in virtual time, `EmbeddedDevice`, with the simulator's sensor noise on) while a finger
/// rests, presses and slides, in a v1.1 session (4-byte records) and a v1.2 one (delta-coded, PROTOCOL.md §7).
/// The peers carry the same `RawSampleBatch` bytes as their payload: the difference is framing alone.
enum WireBench {
    static func frameBytes(_ packet: Packet) -> Int {
        (try? PacketEncoder.encode(packet).count) ?? 0
    }

    static func pwRPC(payload n: Int) -> Int { 2 + 2 + 5 + 5 + 2 + (2 + n) + 8 }
    static func eRPC(payload n: Int) -> Int { 6 + 8 + 4 + n }
    static func mavlink2(payload n: Int) -> Int { 10 + n + 2 }

    static func row(_ name: String, ours: Int, baseline: (String, Int)?) -> BenchRow {
        BenchRow(
            name: name, unit: "bytes", project: Stats([Double(ours)]),
            baseline: baseline.map { ($0.0, Stats([Double($0.1)])) })
    }

    static func run(_ options: BenchOptions) async throws -> [BenchRow] {
        var rows: [BenchRow] = []
        // A typical input event: a light press with force, position and event number.
        let event = InputEvent(
            timestampMicros: 12_345_678, kind: .lightPressDown, source: .cameraControl, forceMillinewtons: 900,
            position: 512, eventNumber: 42)
        let eventPayload = event.serializedBytes()
        let stream = Packet(
            type: .streamMessage, isReliable: true, sequence: 300, callID: 3, payload: eventPayload)
        let tenBytes = Packet(type: .streamMessage, sequence: 300, callID: 3, payload: Array(repeating: 0x55, count: 10))
        rows.append(row("stream message, 10-byte payload", ours: frameBytes(tenBytes), baseline: ("pw_rpc+pw_hdlc", pwRPC(payload: 10))))
        rows.append(row("  same, eRPC", ours: frameBytes(tenBytes), baseline: ("eRPC", eRPC(payload: 10))))
        rows.append(row("  same, MAVLink 2", ours: frameBytes(tenBytes), baseline: ("MAVLink 2", mavlink2(payload: 10))))
        rows.append(row("  overhead of our frame", ours: frameBytes(tenBytes) - 10, baseline: ("pw_rpc+pw_hdlc", pwRPC(payload: 10) - 10)))
        rows.append(
            row(
                "InputEvent (\(eventPayload.count)-byte payload)", ours: frameBytes(stream),
                baseline: ("pw_rpc+pw_hdlc", pwRPC(payload: eventPayload.count))))
        let ping = Packet(
            type: .request, isReliable: true, sequence: 7, callID: 9, address: .devicePing,
            payload: PingRequest(payload: [1, 2, 3, 4]).serializedBytes())
        rows.append(
            row("Ping request (4-byte payload)", ours: frameBytes(ping), baseline: ("pw_rpc+pw_hdlc", pwRPC(payload: ping.payload.count))))
        let heartbeat = Packet(type: .heartbeat, sequence: 8, callID: 0)
        rows.append(row("heartbeat", ours: frameBytes(heartbeat), baseline: nil))
        let ack = Packet(type: .ack, sequence: 9, callID: 0, payload: [0x2C, 0x01])
        rows.append(row("ACK", ours: frameBytes(ack), baseline: nil))
        // Raw samples: bytes per sample at each batch size, as records (v1.1) and delta-coded (v1.2).
        for batch in [1, 5, 10, 25, 32] {
            let samples = (0..<batch).map { RawSample(forceMillinewtons: UInt16(1_000 + $0), position: UInt16($0 * 7), isTouched: true) }
            for deltaCoded in [false, true] {
                let message = RawSampleBatch(
                    firstTimestampMicros: 99_000_000, sampleIntervalMicros: 1_000, samples: samples, deltaCoded: deltaCoded)
                let packet = Packet(type: .streamMessage, sequence: 1_000, callID: 5, payload: message.serializedBytes())
                rows += perSampleRows(
                    "raw sample, batch of \(batch)\(deltaCoded ? ", v1.2 delta" : ", v1.1 records")", frame: frameBytes(packet),
                    payload: packet.payload.count, samples: batch, peers: batch == 25 && deltaCoded)
            }
        }
        // The firmware's own stream at the default batch (25), noise on: what a host receives.
        for (name, scenario) in firmwareScenarios {
            for minor: UInt32 in [1, 2] {
                let measured = try firmwareRawStream(minor: minor, scenario: scenario)
                rows += perSampleRows(
                    "firmware stream, \(name), v1.\(minor)", frame: measured.frameBytes, payload: measured.payloadBytes,
                    samples: measured.samples, peers: minor == 2 && name == firmwareScenarios[0].name, batches: measured.batches)
            }
        }
        return rows
    }

    /// Scenarios for the firmware's raw stream (docs/SIMULATOR.md): a resting finger, clicks, a slide.
    static let firmwareScenarios: [(name: String, scenario: String)] = [
        ("clicks and rests", "touch at=0.4\nwait 300ms\nfull-click\nwait 200ms\nfull-click\nwait 300ms\nrelease\nwait 100ms\n"),
        ("resting touch", "touch at=0.5\nwait 1s\nrelease\n"),
        ("slide", "slide from=0.1 to=0.9 over=1s force=1500mN\n"),
    ]

    /// Bytes per sample of one batch kind (frame and payload bytes summed over `batches` batches), with the
    /// peers' framing of the same payloads next to it when `peers`.
    static func perSampleRows(
        _ name: String, frame: Int, payload: Int, samples: Int, peers: Bool, batches: Int = 1
    ) -> [BenchRow] {
        let perSample = { (bytes: Int) in Stats([Double(bytes) / Double(max(1, samples))]) }
        let averagePayload = payload / max(1, batches)
        func peer(_ peerName: String, _ framed: (Int) -> Int) -> BenchRow {
            BenchRow(
                name: "  same, \(peerName)", unit: "bytes/sample", project: perSample(frame),
                baseline: (peerName, perSample(framed(averagePayload) * batches)))
        }
        var rows = [
            BenchRow(
                name: name, unit: "bytes/sample", project: perSample(frame),
                baseline: ("pw_rpc+pw_hdlc", perSample(pwRPC(payload: averagePayload) * batches)))
        ]
        if peers { rows += [peer("eRPC", eRPC(payload:)), peer("MAVLink 2", mavlink2(payload:))] }
        return rows
    }

    /// The firmware core's raw stream (default batch) in a session at protocol 1.`minor` while `scenario`
    /// plays, in virtual time: wire bytes of its batches (frames with delimiters), their payload bytes, the
    /// samples they carry and how many batches.
    static func firmwareRawStream(
        minor: UInt32, scenario: String
    ) throws -> (frameBytes: Int, payloadBytes: Int, samples: Int, batches: Int) {
        let device = EmbeddedDevice(seed: 11)
        var decoder = FrameDecoder()
        var sequence: UInt16 = 0
        var received: [Packet] = []
        func send(_ packet: Packet) throws {
            var packet = packet
            packet.sequence = sequence
            sequence &+= 1
            device.write(try PacketEncoder.encode(packet))
        }
        func run(millis: Int) throws {
            for step in 0..<millis {
                device.advance(byMicros: 1_000)
                decoder.append(device.read())
                while let output = decoder.next() {
                    guard case .packet(let packet) = output else { continue }
                    received.append(packet)
                    if packet.isReliable { try send(.ack(sequence: 0, acking: packet.sequence)) }
                }
                if step % 40 == 0 { try send(.heartbeat(sequence: 0)) }
            }
        }
        let handshake = HandshakeRequest(hostVersion: ProtocolVersion(major: 1, minor: minor), hostName: "camctl-bench")
        try send(Packet(type: .request, callID: 1, address: .deviceHandshake, payload: handshake.serializedBytes()))
        try run(millis: 20)
        try send(
            Packet(
                type: .request, callID: 2, address: .inputStreamRawSamples,
                payload: StreamRawSamplesRequest(samplesPerBatch: 0).serializedBytes()))
        try run(millis: 20)
        let start = received.count
        try device.play(scenario: scenario)
        while device.isScenarioRunning { try run(millis: 10) }
        var result = (frameBytes: 0, payloadBytes: 0, samples: 0, batches: 0)
        for packet in received[start...] where packet.callID == 2 && packet.type == .streamMessage {
            let batch = try RawSampleBatch(serializedBytes: packet.payload)
            guard (minor >= 2) == !batch.deltaSamples.isEmpty || batch.samples.count < 8 else {
                throw WireError(.invalidValue, "a v1.\(minor) session got \(batch.deltaSamples.isEmpty ? "records" : "delta_samples")")
            }
            result.frameBytes += frameBytes(packet)
            result.payloadBytes += packet.payload.count
            result.samples += batch.decodedSamples.count
            result.batches += 1
        }
        return result
    }
}
