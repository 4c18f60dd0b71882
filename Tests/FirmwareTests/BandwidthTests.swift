import CameraControlEmbedded
import CameraControlWire
import Testing

/// The raw-sample stream fits a 115200 baud UART with headroom.
///
/// 115200 baud 8N1 carries 11,520 bytes/s. With 40 % headroom a 1 kHz stream may use 6,912 bytes/s,
/// i.e. at most 6.9 bytes per sample, everything included (COBS, envelope, CRC, delimiter).
@Suite("Raw sample bandwidth")
struct BandwidthTests {
    static let budgetPerSample = 11_520.0 * 0.6 / 1_000.0  // 6.912

    @Test("a realistic 1 kHz batch is framed within 6.9 bytes per sample", arguments: [10, 16, 25, 32])
    func framedBatch(samplesPerBatch: Int) throws {
        var state: UInt32 = 7
        var samples: [RawSample] = []
        for index in 0..<samplesPerBatch {
            state = state &* 1_664_525 &+ 1_013_904_223
            // a pressing finger: force around 1–3.5 N with noise, a sliding position, touched
            let force = UInt16(1_000 + (index * 97) % 2_500) &+ UInt16(state >> 28)
            let position = UInt16((300 + index * 3 + Int(state >> 30)) & 0x3FF)
            samples.append(RawSample(forceMillinewtons: force, position: position, isTouched: true))
        }
        let batch = RawSampleBatch(
            firstTimestampMicros: 3_600_000_000 + 123_456,  // an hour of uptime: a 5-byte varint
            sampleIntervalMicros: 1_000,
            samples: samples.flatMap(\.recordBytes),
            droppedBefore: 3)
        let packet = Packet(
            type: .streamMessage, isReliable: false, sequence: 40_000, callID: 300,
            payload: batch.serializedBytes())
        let wire = try PacketEncoder.encode(packet)
        let perSample = Double(wire.count) / Double(samplesPerBatch)
        #expect(perSample <= 6.9, "\(wire.count) bytes for \(samplesPerBatch) samples")
    }

    @Test("the firmware's own raw stream stays within the budget")
    func firmwareStream() throws {
        var host = HostHarness(seed: 3)
        try host.connect()
        let callID = host.nextCallID
        host.nextCallID += 1
        try host.send(
            Packet(
                type: .request, callID: callID,
                address: MethodID(
                    service: MethodID.inputStreamRawSamples.service,
                    method: MethodID.inputStreamRawSamples.method),
                payload: StreamRawSamplesRequest(samplesPerBatch: 0).serializedBytes()))
        try host.run(millis: 100)
        let startBytes = host.wire.count
        let startPackets = host.received.count
        try host.play("slide from=0.1 to=0.9 over=1s force=1500mN", settleMillis: 0)
        let batches = host.received[startPackets...].filter { $0.type == .streamMessage && $0.callID == callID }
        let samples = try batches.reduce(0) { $0 + (try RawSampleBatch(serializedBytes: $1.payload)).decodedSamples.count }
        let seconds = Double(host.device.nowMicros) / 1e6
        #expect(samples > 1_000)
        // all bytes on the link (events, heartbeats too) per sample
        let perSample = Double(host.wire.count - startBytes) / Double(samples)
        #expect(perSample <= 6.9, "\(perSample) bytes/sample over \(seconds) s")
        // and the batches alone (what a host pays for the stream itself)
        let batchBytes = try batches.reduce(0) { $0 + (try PacketEncoder.encode($1)).count }
        #expect(Double(batchBytes) / Double(samples) <= 6.9)
    }
}

/// The same stream over a modelled 115200 baud UART.
@Suite("UART speed model")
struct UARTSpeedTests {
    static func streamingHost(baud: UInt32) throws -> (HostHarness, UInt32) {
        var host = HostHarness(seed: 8)
        host.device.setBaudRate(baud)
        try host.connect()
        let callID = host.nextCallID
        host.nextCallID += 1
        try host.send(
            Packet(
                type: .request, callID: callID,
                address: MethodID(
                    service: MethodID.inputStreamRawSamples.service,
                    method: MethodID.inputStreamRawSamples.method),
                payload: StreamRawSamplesRequest(samplesPerBatch: 0).serializedBytes()))
        try host.play("full-click\nslide from=0.1 to=0.9 over=500ms force=1200mN\nbutton action")
        return (host, callID)
    }

    @Test("at 115200 baud a 1 kHz raw stream and the events fit without loss")
    func fits() throws {
        let (host, callID) = try Self.streamingHost(baud: 115_200)
        #expect(host.events(.fullPressDown).count == 1)
        #expect(host.events(.buttonUp).count == 1)
        let batches = try host.received.filter { $0.type == .streamMessage && $0.callID == callID }
            .map { try RawSampleBatch(serializedBytes: $0.payload) }
        #expect(batches.allSatisfy { $0.droppedBefore == 0 })
        #expect(host.device.counters.txDropped == 0)
        // bytes on the wire never exceed what the line carries
        let seconds = Double(host.device.nowMicros) / 1e6
        #expect(Double(host.wire.count) <= 11_520 * seconds + 16)
    }

    /// A reliable event's latency at 9600 baud (960 bytes/s), in deterministic device time: the sample batch
    /// frame already on the line (25 samples, ~135 bytes, ~141 ms), then the event's own frame (~25 bytes) and
    /// perhaps another reliable event or an ACK queued before it. Measured at most 144 ms (button-up); before
    /// reliable packets took priority over sample batches it was seconds.
    static let reliableLatencyBoundMicros: UInt64 = 250_000

    @Test("at 9600 baud samples are dropped but reliable events go first and arrive once, promptly")
    func tooSlow() throws {
        var (host, callID) = try Self.streamingHost(baud: 9_600)
        try host.run(millis: 2_000)
        for kind in [InputEventKind.fullPressDown, .fullPressUp, .buttonDown, .buttonUp] {
            #expect(host.events(kind).count == 1, "\(kind)")
        }
        // Reliable events overtake the queued sample batches: each waits for at most the batch frame
        // already on the line, not behind a queue of them.
        let reliable = host.events.filter(\.kind.isReliable)
        #expect(reliable.count >= 4)
        for event in reliable {
            let latency = (host.arrivalMicros[event.eventNumber] ?? .max) - event.timestampMicros
            #expect(latency < Self.reliableLatencyBoundMicros, "\(event.kind) took \(latency) µs")
        }
        // exactly once: every copy of an event is the same packet (one sequence number), which the
        // host's duplicate window delivers once
        var sequences: [UInt32: Set<UInt16>] = [:]
        for packet in host.received where packet.type == .streamMessage && packet.callID == host.eventsCallID {
            sequences[try InputEvent(serializedBytes: packet.payload).eventNumber, default: []].insert(packet.sequence)
        }
        #expect(sequences.values.allSatisfy { $0.count == 1 })
        let seconds = Double(host.device.nowMicros) / 1e6
        #expect(Double(host.wire.count) <= 960 * seconds + 16)
        let batches = try host.received.filter { $0.type == .streamMessage && $0.callID == callID }
            .map { try RawSampleBatch(serializedBytes: $0.payload) }
        #expect(!batches.isEmpty)
        #expect(host.device.counters.txDropped > 0)
        #expect(batches.contains { $0.droppedBefore > 0 })
        #expect(host.decodeErrors.isEmpty)
    }
}
