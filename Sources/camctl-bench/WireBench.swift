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
        // Raw samples: bytes per sample at each batch size.
        for batch in [1, 5, 10, 25, 32] {
            let samples = (0..<batch).map { RawSample(forceMillinewtons: UInt16(1_000 + $0), position: UInt16($0 * 7), isTouched: true) }
            let message = RawSampleBatch(firstTimestampMicros: 99_000_000, sampleIntervalMicros: 1_000, samples: samples)
            let packet = Packet(type: .streamMessage, sequence: 1_000, callID: 5, payload: message.serializedBytes())
            let perSample = Double(frameBytes(packet)) / Double(batch)
            let pwPerSample = Double(pwRPC(payload: message.serializedBytes().count)) / Double(batch)
            rows.append(
                BenchRow(
                    name: "raw sample, batch of \(batch)", unit: "bytes/sample", project: Stats([perSample]),
                    baseline: ("pw_rpc+pw_hdlc", Stats([pwPerSample]))))
        }
        return rows
    }
}
