import CameraControlTestSupport
import Testing

@testable import CameraControlWire

@Suite struct MessageTests {
    private func roundTrips<M: WireMessage>(_ message: M) throws -> Bool {
        try M(serializedBytes: message.serializedBytes()) == message
    }

    private func defaultIsEmpty<M: WireMessage>(_ message: M) throws -> Bool {
        try M().serializedBytes().isEmpty && M(serializedBytes: []) == M()
    }

    /// Every message type of the schema, populated, round-trips.
    @Test func everyMessageTypeRoundTrips() throws {
        #expect(SampleMessages.everyType.count == 26)
        for message in SampleMessages.everyType {
            #expect(try roundTrips(message), "\(type(of: message))")
            #expect(try defaultIsEmpty(message), "\(type(of: message))")
            #expect(type(of: message).protoMessageName.hasPrefix("cameracontrol.v1."))
        }
        let names = Set(SampleMessages.everyType.map { type(of: $0).protoMessageName })
        #expect(names.count == SampleMessages.everyType.count)
    }

    /// Every enum case survives a round trip.
    @Test func everyEnumCaseRoundTrips() throws {
        for kind in InputEventKind.allCases {
            for source in InputSource.allCases {
                #expect(try roundTrips(InputEvent(timestampMicros: 1, kind: kind, source: source)))
            }
        }
        for pattern in HapticPattern.allCases { #expect(try roundTrips(PlayHapticRequest(pattern: pattern))) }
        for sound in Sound.allCases { #expect(try roundTrips(PlaySoundRequest(sound: sound))) }
        for mode in IndicatorMode.allCases { #expect(try roundTrips(SetIndicatorRequest(mode: mode, rgb: 1))) }
        var caps = Capabilities()
        caps.buttons = InputSource.allCases
        caps.hapticPatterns = HapticPattern.allCases
        #expect(try roundTrips(caps))
    }

    /// Extreme values of every scalar width.
    @Test func extremeValues() throws {
        #expect(
            try roundTrips(
                InputEvent(
                    timestampMicros: .max, kind: .slide, source: .remote, forceMillinewtons: .max, position: .max,
                    peakForceMillinewtons: .max, eventNumber: .max)))
        #expect(try roundTrips(ProtocolVersion(major: .max, minor: .max)))
        #expect(try roundTrips(PingRequest(payload: [UInt8](repeating: 0, count: 4000))))
        #expect(try roundTrips(RunScenarioRequest(scenario: "ünïcødé ✓ 📷")))
    }

    /// Enum values this version does not know (a newer peer, or a negative int32) decode to the zero case.
    @Test func unknownEnumValuesDoNotCrash() throws {
        // InputEvent { kind: 99, source: 77 }
        let event = try InputEvent(serializedBytes: [0x10, 0x63, 0x18, 0x4D])
        #expect(event.kind == .unspecified)
        #expect(event.source == .unspecified)
        // kind: -1 (ten-byte varint)
        let negative = try InputEvent(serializedBytes: [0x10, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])
        #expect(negative.kind == .unspecified)
        #expect(try PlayHapticRequest(serializedBytes: [0x08, 0x09]).pattern == .unspecified)
        #expect(try PlaySoundRequest(serializedBytes: [0x08, 0x09]).sound == .unspecified)
        #expect(try SetIndicatorRequest(serializedBytes: [0x08, 0x09]).mode == .off)
        // Capabilities { buttons: [2, 42] } (packed)
        #expect(try Capabilities(serializedBytes: [0x22, 0x02, 0x02, 0x2A]).buttons == [.volumeUp, .unspecified])
    }

    /// Unknown fields are skipped (a newer minor version may add fields).
    @Test func unknownFieldsAreSkipped() throws {
        // ProtocolVersion { major: 1, minor: 2, field 15: varint 5, field 16: "xy" }
        let bytes: [UInt8] = [0x08, 0x01, 0x10, 0x02, 0x78, 0x05, 0x82, 0x01, 0x02, 0x78, 0x79]
        #expect(try ProtocolVersion(serializedBytes: bytes) == ProtocolVersion(major: 1, minor: 2))
    }

    /// Bytes that do not parse are a typed error.
    @Test(
        arguments: [
            [0x0A, 0x05, 0x01],  // length-delimited field longer than the input
            [0x0A],  // tag without value
            [0x08, 0x80],  // truncated varint
            [0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],  // varint longer than 10 bytes
            [0x00],  // field number 0
            [0x0F],  // wire type 7
        ] as [[UInt8]])
    func malformedInputRejected(bytes: [UInt8]) {
        do {
            let message = try HandshakeResponse(serializedBytes: bytes)
            Issue.record("parsed \(message)")
        } catch {
            #expect(error.code == .malformedMessage)
        }
    }

    /// Input larger than a frame is refused before parsing.
    @Test func oversizedInputRejected() {
        let bytes = [0x0A, 0x80, 0x20] + [UInt8](repeating: 0x41, count: 4096)  // payload field of 4096 bytes
        do {
            _ = try PingRequest(serializedBytes: bytes)
            Issue.record("parsed")
        } catch {
            #expect(error.code == .malformedMessage)
            #expect(error.byteCount == bytes.count)
        }
    }

    /// Random bytes never crash the decoders (they parse or throw).
    @Test func randomBytesNeverCrash() {
        var rng = SeededGenerator(seed: 99)
        var parsed = 0
        for _ in 0..<2000 {
            let bytes = [UInt8].random(count: Int.random(in: 0...64, using: &rng), using: &rng)
            if (try? HandshakeResponse(serializedBytes: bytes)) != nil { parsed += 1 }
            _ = try? Capabilities(serializedBytes: bytes)
            _ = try? RawSampleBatch(serializedBytes: bytes)
        }
        #expect(parsed < 2000)
    }

    /// RawSample records: force bits 0–15, position bits 16–30, touch bit 31, little-endian.
    @Test func rawSampleRecords() {
        let batch = SampleMessages.rawSampleBatch
        #expect(batch.samples.hex == "00000000" + "78000082" + "ffffff" + "ff")
        #expect(batch.decodedSamples == SampleMessages.rawSamples)
        #expect(!batch.hasPartialRecord)
        #expect(batch.timestampMicros(ofSample: 2) == 2_002_000)
        var partial = batch
        partial.samples.append(0x01)
        #expect(partial.hasPartialRecord)
        #expect(partial.decodedSamples == SampleMessages.rawSamples)
        #expect(RawSample(record: 0x8001_0002) == RawSample(forceMillinewtons: 2, position: 1, isTouched: true))
        #expect(RawSample(forceMillinewtons: 1, position: 0xFFFF, isTouched: false).position == 0x7FFF)
    }

    /// v1.2's delta coding: the vector's bytes, a round trip, and every malformed form a typed error.
    @Test func rawSampleDeltaCoding() throws {
        let coded = RawSampleDeltaCoding.encode(SampleMessages.rawSamples)
        #expect(coded.hex == "00c3078008bbf81ffef703")  // Firmware-sim/tests/test_services.c raw_delta_coding
        #expect(try RawSampleDeltaCoding.decode(coded) == SampleMessages.rawSamples)
        let batch = RawSampleBatch(
            firstTimestampMicros: 5, sampleIntervalMicros: 1_000, samples: SampleMessages.rawSamples, deltaCoded: true)
        #expect(batch.samples.isEmpty && batch.deltaSamples == coded)
        #expect(batch.decodedSamples == SampleMessages.rawSamples)
        #expect(!batch.isMalformed)
        let ramp = (0..<25).map { RawSample(forceMillinewtons: UInt16(900 + 9 * $0), position: 300, isTouched: true) }
        #expect(try RawSampleDeltaCoding.decode(RawSampleDeltaCoding.encode(ramp)) == ramp)
        #expect(RawSampleDeltaCoding.encode(ramp).count == 4 + 24)  // 900 mN at position 300 (2 + 2), then 1 byte each
        for (bytes, code) in [
            ([0x81], WireError.Code.malformedMessage),  // cut short
            ([0x03], .malformedMessage),  // moved, but no position
            ([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], .malformedMessage),  // longer than 5 bytes
            ([0x04], .invalidValue),  // force −1
            ([0x80, 0x80, 0x20], .invalidValue),  // force 65,536
            ([0x02, 0x80, 0x80, 0x04], .invalidValue),  // position 32,768
        ] as [([UInt8], WireError.Code)] {
            #expect(throws: WireError.self) { try RawSampleDeltaCoding.decode(bytes) }
            do {
                _ = try RawSampleDeltaCoding.decode(bytes)
            } catch {
                #expect(error.code == code, "\(bytes.hex)")
            }
            #expect(RawSampleBatch(deltaSamples: bytes).isMalformed)
        }
        var both = batch
        both.samples = [0, 0, 0, 0]
        #expect(both.isMalformed)
    }

    @Test func thresholdValidity() {
        #expect(SampleMessages.thresholds.isValid)
        var bad = SampleMessages.thresholds
        bad.fullPressOnMillinewtons = 1500  // gap 700 < 1000 and below full-off
        #expect(!bad.isValid)
        #expect(!Thresholds().isValid)
    }
}
