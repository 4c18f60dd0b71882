import CameraControlTestSupport
import Foundation
import Testing

@testable import CameraControlWire

extension GoldenVectors {
    /// What our side says each vector is: the packet (without payload) and the Swift message value.
    static let expected: [String: (packet: Packet, message: (any WireMessage)?)] = {
        let m = SampleMessages.self
        func event(
            _ t: UInt64, _ kind: InputEventKind, _ source: InputSource, force: UInt32 = 0, position: UInt32 = 0, peak: UInt32 = 0,
            number: UInt32, reliable: UInt32
        ) -> InputEvent {
            InputEvent(
                timestampMicros: t, kind: kind, source: source, forceMillinewtons: force, position: position, peakForceMillinewtons: peak,
                eventNumber: number, reliableEventNumber: reliable)
        }
        func request(_ call: UInt32, _ seq: UInt16, _ method: MethodID) -> Packet {
            Packet(type: .request, sequence: seq, callID: call, address: method)
        }
        func response(_ call: UInt32, _ seq: UInt16) -> Packet { Packet(type: .response, sequence: seq, callID: call) }
        func stream(_ call: UInt32, _ seq: UInt16, reliable: Bool) -> Packet {
            Packet(type: .streamMessage, isReliable: reliable, sequence: seq, callID: call)
        }
        return [
            "heartbeat-device-seq5": (.heartbeat(sequence: 5), nil),
            "heartbeat-host-seq0": (.heartbeat(sequence: 0), nil),
            "ack-of-0x1234": (.ack(sequence: 3, acking: 0x1234), nil),
            "handshake-request": (request(1, 0, .deviceHandshake), m.handshakeRequest),
            "handshake-request-v12": (
                Packet(type: .request, isReliable: true, sequence: 0, callID: 1, address: .deviceHandshake),
                HandshakeRequest(hostVersion: ProtocolVersion(major: 1, minor: 2), hostName: "camctl")
            ),
            "handshake-response": (response(1, 0), m.handshakeResponse),
            "ping-request": (request(2, 1, .devicePing), PingRequest(payload: [0, 1, 2, 0, 255])),
            "ping-response": (response(2, 1), PingResponse(payload: [0, 1, 2, 0, 255], deviceTimeMicros: 5_000_000)),
            "stream-input-events-request": (request(3, 2, .inputStreamInputEvents), StreamInputEventsRequest()),
            "input-event-full-press-down": (
                stream(3, 7, reliable: true),
                event(1_234_567, .fullPressDown, .cameraControl, force: 2500, position: 300, number: 42, reliable: 20)
            ),
            "input-event-full-press-up": (
                stream(3, 8, reliable: true),
                event(1_334_567, .fullPressUp, .cameraControl, force: 1900, position: 300, peak: 3100, number: 43, reliable: 21)
            ),
            "input-event-slide": (
                stream(3, 9, reliable: false), event(1_400_000, .slide, .cameraControl, position: 517, number: 44, reliable: 21)
            ),
            "input-event-volume-up": (stream(3, 10, reliable: true), event(1_500_000, .buttonDown, .volumeUp, number: 45, reliable: 22)),
            "stream-raw-samples-request": (request(4, 3, .inputStreamRawSamples), StreamRawSamplesRequest(samplesPerBatch: 16)),
            "raw-sample-batch": (stream(4, 11, reliable: false), m.rawSampleBatch),
            "raw-sample-batch-delta": (
                stream(4, 12, reliable: false),
                RawSampleBatch(
                    firstTimestampMicros: 2_000_000, sampleIntervalMicros: 1_000, samples: m.rawSamples, droppedBefore: 3,
                    deltaCoded: true)
            ),
            "stream-end-ok": (Packet(type: .streamEnd, sequence: 12, callID: 3, status: .ok), nil),
            "cancel": (Packet(type: .cancel, sequence: 4, callID: 3), nil),
            "error-unimplemented": (
                Packet(type: .error, sequence: 13, callID: 9, status: .unimplemented, payload: Array("no such method 7.1".utf8)), nil
            ),
            "error-unimplemented-reliable": (
                Packet(
                    type: .error, isReliable: true, sequence: 13, callID: 9, status: .unimplemented,
                    payload: Array("no such method 7.1".utf8)), nil
            ),
            "error-link-failed-precondition": (
                Packet(type: .error, sequence: 14, callID: 0, status: .failedPrecondition, payload: Array("handshake first".utf8)), nil
            ),
            "get-config-request": (request(5, 5, .configGetConfig), GetConfigRequest()),
            "config-response": (response(5, 15), m.config),
            "configure-request": (request(6, 6, .configConfigure), ConfigureRequest(config: m.config)),
            "get-settings-request": (request(16, 15, .configGetSettings), GetSettingsRequest()),
            "set-settings-request": (
                request(17, 16, .configSetSettings),
                SetSettingsRequest(settings: Settings(lightPressForce: .firmer, cameraAdjustments: .off))
            ),
            "settings-response": (
                response(17, 20),
                SettingsResponse(
                    settings: Settings(
                        lightPressForce: .firmer, doubleLightPressSpeed: .default, cameraControl: .on, cameraAdjustments: .off),
                    origin: .loaded, writes: 1)
            ),
            "play-haptic-request": (request(7, 7, .feedbackPlayHaptic), PlayHapticRequest(pattern: .detent, intensityPercent: 60)),
            "play-sound-request": (request(8, 8, .feedbackPlaySound), PlaySoundRequest(sound: .beginVideoRecording)),
            "set-indicator-request": (request(10, 9, .feedbackSetIndicator), SetIndicatorRequest(mode: .blink, rgb: 0xFF0000)),
            "feedback-response": (response(7, 16), FeedbackResponse(deviceTimeMicros: 7_000_123)),
            "get-counters-request": (request(11, 10, .diagnosticsGetCounters), GetCountersRequest()),
            "reset-counters-request": (request(12, 11, .diagnosticsResetCounters), ResetCountersRequest()),
            "counters-response": (response(11, 17), m.counters),
            "run-scenario-request": (
                request(13, 12, .simulatorRunScenario), RunScenarioRequest(scenario: "touch 0ms\npress 2500mN 100ms\nrelease\n")
            ),
            "run-scenario-response": (response(13, 18), RunScenarioResponse(steps: 3, durationMicros: 250_000)),
            "get-simulator-status-request": (request(14, 13, .simulatorGetSimulatorStatus), GetSimulatorStatusRequest()),
            "simulator-status": (response(14, 19), SimulatorStatus(isScenarioRunning: true, deviceTimeMicros: 9_000_000)),
            "call-id-300": (Packet(type: .cancel, sequence: 0xFFFF, callID: 300), nil),
            "call-id-max": (Packet(type: .cancel, sequence: 0x0100, callID: .max), nil),
            "ping-long-nonzero": (request(15, 14, .devicePing), PingRequest(payload: (0..<300).map { UInt8(1 + $0 % 255) })),
        ]
    }()
}

@Suite struct GoldenVectorTests {
    @Test func vectorFileLoadsAndMatchesTheSwiftTable() {
        #expect(!GoldenVectors.frames.isEmpty, "cannot read \(GoldenVectors.path.path)")
        #expect(Set(GoldenVectors.frames.map(\.name)) == Set(GoldenVectors.expected.keys))
        #expect(
            Set(GoldenVectors.frames.map(\.type)) == [
                "REQUEST", "RESPONSE", "STREAM_MESSAGE", "STREAM_END", "CANCEL", "ERROR", "ACK", "HEARTBEAT",
            ])
    }

    private func decodes<M: WireMessage>(_ bytes: [UInt8], as message: M) throws -> Bool {
        try M(serializedBytes: bytes) == message
    }

    /// Our encoder reproduces each vector byte for byte, and our decoder gives back the packet and the
    /// message the Swift table states.
    @Test(arguments: GoldenVectors.frames)
    func reencodesByteForByte(vector: GoldenFrame) throws {
        let entry = try #require(GoldenVectors.expected[vector.name], "no Swift value for \(vector.name)")
        var packet = entry.packet
        if let message = entry.message {
            #expect(type(of: message).protoMessageName == vector.message)
            #expect(message.serializedBytes().hex == vector.payloadHex)
            #expect(try decodes([UInt8](hex: vector.payloadHex), as: message))
            packet.payload = message.serializedBytes()
        } else {
            #expect(vector.message == nil)
        }
        #expect(packet == vector.packet)
        #expect(try PacketEncoder.encodeUnstuffed(packet).hex == vector.unstuffedHex)
        #expect(try PacketEncoder.encode(packet).hex == vector.wireHex)
        #expect(try PacketDecoder.decode(unstuffed: [UInt8](hex: vector.unstuffedHex)) == packet)
        #expect(decodeAll([[UInt8](hex: vector.wireHex)]).outputs == [.packet(packet)])
        #expect(try COBS.decode([UInt8](hex: vector.wireHex).dropLast()).hex == vector.unstuffedHex)
    }

    /// The hex examples of docs/PROTOCOL.md §4.1 are real vectors (unstuffed and wire bytes).
    @Test func protocolDocumentExamplesAreVectors() throws {
        let doc = try String(contentsOf: GoldenVectors.repoRoot.appendingPathComponent("docs/PROTOCOL.md"), encoding: .utf8)
        func hexLines(_ prefix: String) -> [String] {
            doc.split(separator: "\n").filter { $0.hasPrefix(prefix) }.map {
                String($0.dropFirst(prefix.count).filter { $0.isHexDigit })
            }
        }
        let wire = hexLines("wire       ")
        let unstuffed = hexLines("unstuffed  ")
        #expect(wire.count == 4 && unstuffed.count == 4)
        for (u, w) in zip(unstuffed, wire) {
            #expect(GoldenVectors.frames.contains { $0.unstuffedHex == u && $0.wireHex == w }, "\(u) / \(w)")
        }
    }

    /// The whole vector file as one byte stream decodes to every vector in order, however it is split.
    @Test func allVectorsAsOneStream() {
        let stream = GoldenVectors.frames.flatMap { [UInt8](hex: $0.wireHex) }
        let whole = DecoderVerifier.verify(stream, seed: 5, maxChunk: 64) { decoded($0) }
        #expect(packets(whole.outputs) == GoldenVectors.frames.map(\.packet))
    }
}

/// Checks the vectors against tools we did not write: Google's `protoc --decode` for every payload and
/// Python's `binascii.crc_hqx` for every check. Both are installed by the test command; a missing tool
/// fails the test.
@Suite struct OracleTests {
    static let protoc = "/usr/bin/protoc"
    static let python = "/usr/bin/python3"

    private func run(_ executable: String, _ arguments: [String], input: [UInt8]) throws -> (status: Int32, stdout: String, stderr: String)
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = GoldenVectors.repoRoot
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input))
        try stdin.fileHandleForWriting.close()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    private var protoFiles: [String] {
        let dir = GoldenVectors.repoRoot.appendingPathComponent("Proto/cameracontrol/v1")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { $0.hasSuffix(".proto") }.sorted().map { "Proto/cameracontrol/v1/" + $0 }
    }

    /// protoc decodes every payload to exactly the fields and values the vector states.
    @Test func protocDecodesEveryPayloadToTheStatedValues() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.protoc),
            "\(Self.protoc) is missing: apt-get install protobuf-compiler (the test command installs it)")
        #expect(protoFiles.count >= 8)
        let withMessages = GoldenVectors.frames.filter { $0.message != nil }
        #expect(withMessages.count >= 20)
        for vector in withMessages {
            let message = try #require(vector.message)
            let result = try run(Self.protoc, ["--decode=\(message)", "-I", "Proto"] + protoFiles, input: [UInt8](hex: vector.payloadHex))
            #expect(result.status == 0, "\(vector.name): protoc failed: \(result.stderr)")
            #expect(result.stdout == vector.text, "\(vector.name): protoc says\n\(result.stdout)\nvector says\n\(vector.text ?? "")")
        }
        // The oracle is not a rubber stamp: a changed payload decodes to other values.
        let sample = try #require(withMessages.first { $0.name == "input-event-full-press-down" })
        var bytes = [UInt8](hex: sample.payloadHex)
        bytes[bytes.count - 1] ^= 0x01  // reliable_event_number 20 → 21
        let changed = try run(Self.protoc, ["--decode=\(sample.message!)", "-I", "Proto"] + protoFiles, input: bytes)
        #expect(changed.status == 0)
        #expect(changed.stdout != sample.text)
        #expect(changed.stdout.contains("reliable_event_number: 21"))
    }

    /// Python's binascii computes the same CRC-16 for every frame, and a Python COBS-free check of the
    /// envelope fields agrees with the vector's.
    @Test func pythonAgreesOnEveryCheckAndEnvelope() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.python),
            "\(Self.python) is missing: it is Debian's python3 (the test command installs it)")
        let script = """
            import binascii, sys
            for line in sys.stdin:
                name, hexframe = line.split()
                frame = bytes.fromhex(hexframe)
                crc = binascii.crc_hqx(frame[:-2], 0xFFFF)
                ok = crc == int.from_bytes(frame[-2:], 'little')
                print(name, 'ok' if ok else 'bad', frame[0] & 0x0F, int.from_bytes(frame[1:3], 'little'))
            """
        let input = GoldenVectors.frames.map { "\($0.name) \($0.unstuffedHex)\n" }.joined()
        let result = try run(Self.python, ["-c", script], input: Array(input.utf8))
        #expect(result.status == 0, "python failed: \(result.stderr)")
        let expected = GoldenVectors.frames.map { "\($0.name) ok \($0.typeValue) \($0.sequence)" }
        #expect(result.stdout.split(separator: "\n").map(String.init) == expected)
    }
}
