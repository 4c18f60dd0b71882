import CameraControlEmbedded
import CameraControlWire
import Testing

/// The raw-sample stream fits a 115200 baud UART with headroom.
///
/// 115200 baud 8N1 carries 11,520 bytes/s. With 40 % headroom a 1 kHz stream may use 6,912 bytes/s,
/// i.e. at most 6.9 bytes per sample, everything included (COBS, envelope, CRC, delimiter).
@Suite("Raw sample bandwidth")
struct BandwidthTests {
    static let budgetPerSample = 11_520.0 * 0.6 / 1_000.0   // 6.912

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
            firstTimestampMicros: 3_600_000_000 + 123_456,   // an hour of uptime: a 5-byte varint
            sampleIntervalMicros: 1_000,
            samples: samples.flatMap(\.recordBytes),
            droppedBefore: 3)
        let packet = Packet(type: .streamMessage, isReliable: false, sequence: 40_000, callID: 300,
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
        try host.send(Packet(type: .request, callID: callID,
                             address: MethodAddress(service: MethodID.inputStreamRawSamples.service,
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
