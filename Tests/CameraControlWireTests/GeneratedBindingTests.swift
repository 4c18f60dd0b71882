import CameraControlTestSupport
import Foundation
import Testing

@testable import CameraControlWire

/// The generated messages against Google's protobuf (scripts/protobuf_oracle.py), and the decoder's
/// edge cases.
@Suite struct GeneratedBindingTests {
    static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let python = "/usr/bin/python3"
    static let oracle = repoRoot.appendingPathComponent("scripts/protobuf_oracle.py").path

    private func runOracle(_ mode: String, input: String = "") throws -> [(name: String, rest: String)] {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.python),
            "\(Self.python) is missing: it is Debian's python3 with python3-protobuf")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments = [Self.oracle, mode]
        process.currentDirectoryURL = Self.repoRoot
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "oracle failed: \(String(decoding: err, as: UTF8.self))")
        return String(decoding: out, as: UTF8.self).split(separator: "\n").map { line in
            let parts = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
    }

    private static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    private static func bytes(hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            out.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return out
    }

    /// Decodes `bytes` as the sample's type: equal to the sample, and re-encoded byte for byte.
    private func decodesToSample<M: WireMessage>(_ sample: M, _ bytes: [UInt8]) throws -> (equal: Bool, sameBytes: Bool) {
        let decoded = try M(serializedBytes: bytes)
        return (decoded == sample, decoded.serializedBytes() == bytes)
    }

    /// Google's encoding of every message with every field set decodes to the same value in Swift and
    /// re-encodes to the same bytes; Swift's own encoding of the sample is those bytes too.
    @Test func googleEncodingsDecodeAndReencodeByteForByte() throws {
        let lines = try runOracle("encode")
        let samples = Dictionary(uniqueKeysWithValues: AllFieldsSamples.all.map { (type(of: $0).protoMessageName, $0) })
        // The oracle lists the schema's messages: each must have a generated type, and the other way round.
        #expect(Set(lines.map(\.name)) == Set(samples.keys))
        #expect(lines.count == AllFieldsSamples.all.count)
        for line in lines {
            let sample = try #require(samples[line.name], "\(line.name) has no generated Swift type")
            let google = Self.bytes(hex: line.rest)
            let result = try decodesToSample(sample, google)
            #expect(result.equal, "\(line.name): decodes to another value")
            #expect(result.sameBytes, "\(line.name): re-encodes differently")
            #expect(sample.serializedBytes() == google, "\(line.name): Swift's encoding differs from Google's")
        }
    }

    /// Google's protobuf parses Swift's encoding of every sample to the sample.
    @Test func swiftEncodingsParseInGoogleProtobuf() throws {
        let input = AllFieldsSamples.all.map { "\(type(of: $0).protoMessageName) \(Self.hex($0.serializedBytes()))\n" }
            .joined()
        let lines = try runOracle("check", input: input)
        #expect(lines.count == AllFieldsSamples.all.count)
        for line in lines { #expect(line.rest == "ok", "\(line.name): \(line.rest)") }
    }

    /// The samples are not vacuous: every message with fields encodes to something.
    @Test func samplesSetFields() {
        for sample in AllFieldsSamples.all where Mirror(reflecting: sample).children.count > 0 {
            #expect(!sample.serializedBytes().isEmpty, "\(type(of: sample))")
        }
    }

    /// Unknown fields of every wire type, before and after the known ones, are skipped.
    @Test func unknownFieldsOfEveryWireTypeAreSkipped() throws {
        let unknown: [UInt8] =
            [0xC0, 0x3E, 0x96, 0x01]  // field 1000, varint 150
            + [0xC1, 0x3E, 1, 2, 3, 4, 5, 6, 7, 8]  // fixed64
            + [0xC2, 0x3E, 0x03, 0x61, 0x62, 0x63]  // length-delimited
            + [0xC5, 0x3E, 1, 2, 3, 4]  // fixed32
            + [0xC3, 0x3E, 0xC8, 0x3E, 0x01, 0xCB, 0x3E, 0xCC, 0x3E, 0xC4, 0x3E]  // group 1000 { 1001: 1, group 1001 {} }
        for sample in AllFieldsSamples.all {
            let bytes = sample.serializedBytes()
            #expect(try decodesToSample(sample, unknown + bytes + unknown).equal, "\(type(of: sample))")
        }
    }

    /// Repeated scalars are accepted unpacked too; scalars: the last wins; message fields: merged.
    @Test func unpackedRepeatsLastScalarWinsAndMessagesMerge() throws {
        // Capabilities { sample_rates_hz: 100 (unpacked), 200 (unpacked), buttons: 2 (unpacked), [3] (packed) }
        let caps = try Capabilities(serializedBytes: [0x40, 0x64, 0x40, 0xC8, 0x01, 0x20, 0x02, 0x22, 0x01, 0x03])
        #expect(caps.sampleRatesHertz == [100, 200])
        #expect(caps.buttons == [.volumeUp, .volumeDown])
        // ProtocolVersion { major: 1, major: 2 }
        #expect(try ProtocolVersion(serializedBytes: [0x08, 0x01, 0x08, 0x02]).major == 2)
        // Config { thresholds { light_press_on_mn: 5 }, thresholds { light_press_off_mn: 3 } }
        let config = try Config(serializedBytes: [0x0A, 0x02, 0x08, 0x05, 0x0A, 0x02, 0x10, 0x03])
        #expect(config.thresholds == Thresholds(lightPressOnMillinewtons: 5, lightPressOffMillinewtons: 3))
    }

    /// Unknown enum numbers, alone or repeated, decode as the enum's zero case.
    @Test func unknownEnumNumbersDecodeAsZero() throws {
        #expect(try InputEvent(serializedBytes: [0x10, 0x7F]).kind == .unspecified)
        #expect(try Capabilities(serializedBytes: [0x6A, 0x02, 0x01, 0x63]).hapticPatterns == [.detent, .unspecified])
        #expect(try SetIndicatorRequest(serializedBytes: [0x08, 0x2A]).mode == .off)
    }

    private func isMalformed<M: WireMessage>(_ type: M.Type, _ bytes: [UInt8]) -> Bool {
        do {
            _ = try M(serializedBytes: bytes)
            return false
        } catch {
            return error.code == .malformedMessage
        }
    }

    /// Truncation, bad wire types, over-long varints, deep nesting and oversized input are typed errors.
    @Test func malformedInputThrows() {
        #expect(isMalformed(ProtocolVersion.self, [0x08]))  // value missing
        #expect(isMalformed(ProtocolVersion.self, [0x08, 0x80]))  // varint cut
        #expect(isMalformed(PingRequest.self, [0x0A, 0x05, 0x01]))  // length past the end
        #expect(isMalformed(PingResponse.self, [0x11, 1, 2, 3]))  // fixed64 cut
        #expect(isMalformed(PingResponse.self, [0x7D, 1, 2]))  // fixed32 cut
        #expect(isMalformed(ProtocolVersion.self, [0x0E, 0x00]))  // wire type 6
        #expect(isMalformed(ProtocolVersion.self, [0x0F, 0x00]))  // wire type 7
        #expect(isMalformed(ProtocolVersion.self, [0x0C]))  // end group without start
        #expect(isMalformed(ProtocolVersion.self, [0x0B, 0x08, 0x01]))  // group never ended
        #expect(isMalformed(ProtocolVersion.self, [0x00, 0x01]))  // field number 0
        let eleven: [UInt8] = [0x08] + [UInt8](repeating: 0xFF, count: 10) + [0x01]
        #expect(isMalformed(ProtocolVersion.self, eleven))
        let ten: [UInt8] = [0x08] + [UInt8](repeating: 0xFF, count: 9) + [0x01]
        #expect(!isMalformed(ProtocolVersion.self, ten))
        let deep = [UInt8](repeating: 0x2B, count: 40) + [UInt8](repeating: 0x2C, count: 40)  // 40 groups of field 5
        #expect(isMalformed(ProtocolVersion.self, deep))
        let shallow = [UInt8](repeating: 0x2B, count: 8) + [UInt8](repeating: 0x2C, count: 8)
        #expect(!isMalformed(ProtocolVersion.self, shallow))
        #expect(isMalformed(PingRequest.self, [UInt8](repeating: 0, count: WireFormat.maxFrameBytes + 1)))
    }

    /// Every prefix of every sample's encoding either decodes or throws a typed error (never crashes).
    @Test func everyPrefixDecodesOrThrows() {
        for sample in AllFieldsSamples.all {
            let bytes = sample.serializedBytes()
            for count in 0..<bytes.count {
                let prefix = Array(bytes[..<count])
                do {
                    _ = try type(of: sample).init(serializedBytes: prefix)
                } catch {
                    #expect(error.code == .malformedMessage)
                }
            }
        }
    }

    /// NUL inside a string is carried; invalid UTF-8 is repaired.
    @Test func stringsCarryNulAndRepairUTF8() throws {
        let request = RunScenarioRequest(scenario: "a\u{0}b")
        #expect(request.serializedBytes() == [0x0A, 0x03, 0x61, 0x00, 0x62])
        #expect(try RunScenarioRequest(serializedBytes: request.serializedBytes()) == request)
        #expect(try RunScenarioRequest(serializedBytes: [0x0A, 0x02, 0xFF, 0x41]).scenario == "\u{FFFD}A")
    }

    /// Decoding from a slice or a raw buffer gives the same value as from an array.
    @Test func decodesFromSlicesAndBuffers() throws {
        for sample in AllFieldsSamples.all {
            let bytes: [UInt8] = [0xEE] + sample.serializedBytes() + [0xEE]
            let slice = bytes[1..<(bytes.count - 1)]
            let type = type(of: sample)
            let fromSlice = try type.init(serializedBytes: slice)
            let fromBuffer = try slice.withUnsafeBytes { buffer in try type.init(serializedBytes: buffer) }
            #expect(fromSlice.serializedBytes() == sample.serializedBytes())
            #expect(fromBuffer.serializedBytes() == sample.serializedBytes())
        }
    }

    /// The method table names every method with its message types; unknown ids have none.
    @Test func methodTable() {
        #expect(MethodInfo.allV1.map(\.id) == MethodID.allV1)
        for info in MethodInfo.allV1 {
            #expect(info.id.info?.name == info.name)
            #expect(MethodID.known(service: info.id.service, method: info.id.method) == info.id)
            #expect(info.requestMessageName.hasPrefix("cameracontrol.v1."))
            #expect(info.responseMessageName.hasPrefix("cameracontrol.v1."))
        }
        #expect(MethodID.deviceHandshake.name == "DeviceService/Handshake")
        #expect(MethodID.deviceHandshake.info?.requestMessageName == "cameracontrol.v1.HandshakeRequest")
        #expect(MethodID.inputStreamInputEvents.isServerStreaming)
        #expect(MethodID.inputStreamInputEvents.info?.responseMessageName == "cameracontrol.v1.InputEvent")
        #expect(MethodID.known(service: 99, method: 1) == nil)
        #expect(MethodID(service: 99, method: 1).name == "99.1")
        #expect(!MethodID(service: 99, method: 1).isServerStreaming)
    }

    /// `Counters.fields` lists every field of the message, by schema name, reading the right value.
    @Test func counterFieldTable() throws {
        let sample = try #require(AllFieldsSamples.all.compactMap { $0 as? Counters }.first)
        #expect(Counters.fields.count == Mirror(reflecting: sample).children.count)
        #expect(Counters.fields.first?.name == "uptime_us")
        #expect(Counters.fields.first?.value(sample) == sample.uptimeMicros)
        let txDropped = try #require(Counters.fields.first { $0.name == "tx_dropped" })
        #expect(txDropped.value(sample) == UInt64(sample.txDropped))
        #expect(Set(Counters.fields.map { $0.value(sample) }).count == Counters.fields.count)
    }
}
