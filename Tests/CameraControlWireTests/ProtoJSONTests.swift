import Testing

@testable import CameraControlWire

/// Protobuf's JSON mapping of the generated messages, against Google's `json_format`
/// (scripts/protobuf_oracle.py), and its errors.
@Suite struct ProtoJSONTests {
    private static var samples: [String: any ProtoJSONMessage] {
        Dictionary(
            uniqueKeysWithValues: AllFieldsSamples.all.map { sample in
                (type(of: sample).protoMessageName, sample as! any ProtoJSONMessage)
            })
    }

    private static func parses<M: ProtoJSONMessage>(_ text: String, as sample: M) throws -> Bool {
        try M(jsonText: text) == sample
    }

    /// json_format's JSON of every sample: Swift prints the same JSON (same members, order and values)
    /// and parses Google's text back to the sample; the empty message with defaults printed matches too.
    @Test func swiftPrintsAndParsesGooglesJSON() throws {
        let lines = try GeneratedBindingTests().runOracle("json")
        let samples = Self.samples
        #expect(lines.count == 2 * samples.count)
        for line in lines {
            let google = try JSONValue(parsing: line.rest)
            if line.name.hasPrefix("defaults:") {
                let type = try #require(ProtoJSON.messageType(named: String(line.name.dropFirst("defaults:".count))))
                #expect(type.init().jsonValue(includingDefaults: true) == google, "\(line.name)")
                continue
            }
            let sample = try #require(samples[line.name], "\(line.name) has no generated type")
            #expect(sample.jsonValue(includingDefaults: false) == google, "\(line.name): \(sample.jsonText())")
            #expect(try Self.parses(line.rest, as: sample), "\(line.name): Google's JSON parses to another value")
        }
        #expect(ProtoJSON.messageTypes.count == samples.count)
    }

    /// json_format parses Swift's JSON of every sample to the sample, refusing unknown fields.
    @Test func googleParsesSwiftsJSON() throws {
        let input = AllFieldsSamples.all.map { sample in
            "\(type(of: sample).protoMessageName) \((sample as! any ProtoJSONMessage).jsonText())\n"
        }.joined()
        let lines = try GeneratedBindingTests().runOracle("checkjson", input: input)
        #expect(lines.count == AllFieldsSamples.all.count)
        for line in lines { #expect(line.rest == "ok", "\(line.name): \(line.rest)") }
    }

    @Test func aMisspeltFieldIsRefusedWithANearMatch() {
        #expect(throws: ProtoJSONError.self) { try PlayHapticRequest(jsonText: #"{"patern": "HAPTIC_PATTERN_DETENT"}"#) }
        do {
            _ = try PlayHapticRequest(jsonText: #"{"patern": "HAPTIC_PATTERN_DETENT"}"#)
        } catch {
            #expect(error.code == .unknownField)
            #expect(error.suggestion == "pattern")
            #expect(error.description.contains("'patern'"))
            #expect(error.description.contains("did you mean 'pattern'?"))
        }
        // Nested: the path names where.
        do {
            _ = try ConfigureRequest(jsonText: #"{"config": {"thresholds": {"lightPressOnMN": 5}}}"#)
            Issue.record("accepted an unknown nested field")
        } catch {
            #expect(error.path == ["config", "thresholds"])
            #expect(error.suggestion == "lightPressOnMn")
        }
    }

    @Test func protoNamesAndJSONNamesBothParse() throws {
        let a = try Config(jsonText: #"{"sample_rate_hz": 100, "slideIntervalMs": "20"}"#)
        #expect(a.sampleRateHertz == 100 && a.slideIntervalMillis == 20)
        #expect(try Config(jsonText: "null") == Config())
    }

    @Test func enumsBytesAnd64BitIntegers() throws {
        let haptic = try PlayHapticRequest(jsonText: #"{"pattern": 2}"#)
        #expect(haptic.pattern == .click)
        do {
            _ = try PlayHapticRequest(jsonText: #"{"pattern": "detent"}"#)
            Issue.record("accepted a short enum name")
        } catch {
            #expect(error.code == .badValue)
            #expect(error.suggestion == "HAPTIC_PATTERN_DETENT")
        }
        let ping = PingResponse(payload: [0xFB, 0xFF, 0x00], deviceTimeMicros: 1 << 40)
        #expect(ping.jsonText() == #"{"payload":"+/8A","deviceTimeUs":"1099511627776"}"#)
        #expect(try PingResponse(jsonText: #"{"payload":"-_8A","deviceTimeUs":1099511627776}"#) == ping)
        #expect(try PingRequest(jsonText: #"{"payload":"-_8"}"#).payload == [0xFB, 0xFF])
        #expect(PingRequest(payload: [0xFB, 0xFF]).jsonText() == #"{"payload":"+/8="}"#)
        #expect(throws: ProtoJSONError.self) { try PingRequest(jsonText: #"{"payload":"not base64!"}"#) }
    }

    @Test func wrongKindsAndRangesAreRefused() {
        let cases: [(String, ProtoJSONError.Code)] = [
            (#"{"sampleRateHz": "fast"}"#, .wrongType), (#"{"sampleRateHz": 4294967296}"#, .outOfRange),
            (#"{"sampleRateHz": -1}"#, .outOfRange), (#"{"sampleRateHz": 1.5}"#, .wrongType),
            (#"{"thresholds": 3}"#, .wrongType), (#"[1]"#, .wrongType), (#"{"sampleRateHz": 1,}"#, .syntax),
        ]
        for (text, code) in cases {
            do {
                _ = try Config(jsonText: text)
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.code == code, "\(text): \(error)")
            }
        }
    }

    @Test func syntaxErrorsNameLineAndColumn() {
        do {
            _ = try JSONValue(parsing: "{\n  \"a\": tru\n}")
            Issue.record("accepted bad JSON")
        } catch {
            #expect(error.code == .syntax)
            #expect(error.description.contains("line 2, column 8"), "\(error)")
        }
    }

    @Test func textRoundTrips() throws {
        let value = JSONValue.object([
            JSONMember("s", .string("a\"b\\\n\u{1}é")), JSONMember("n", .array([.number("-1.5e3"), .null, .bool(false)])),
        ])
        #expect(try JSONValue(parsing: value.compactText) == value)
        #expect(try JSONValue(parsing: value.prettyText()) == value)
        #expect(try JSONValue(parsing: #""\ud83d\ude00""#) == .string("😀"))
    }

    @Test func nearMatches() {
        #expect(NearMatch.best(for: "patern", among: ["pattern", "intensityPercent"]) == "pattern")
        #expect(NearMatch.best(for: "xyz", among: ["pattern"]) == nil)
        #expect(NearMatch.best(for: "conuters", among: ["counters", "call"]) == "counters")
    }
}
