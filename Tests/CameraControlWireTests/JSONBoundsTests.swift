import Testing

@testable import CameraControlWire

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The JSON parser's bounds: escapes decode right, parsing takes time linear in the text (escapes or
/// not), and a text over ``JSONValue/maxTextBytes`` is refused before it is parsed.
@Suite struct JSONBoundsTests {
    @Test("every escape decodes, surrogate pairs included")
    func escapesDecode() throws {
        let value = try JSONValue(parsing: #"["a\"b\\c\/d\b\f\n\r\t", "\u00e9\u20ac\ud83d\ude00", "plain é"]"#)
        #expect(value == .array([.string("a\"b\\c/d\u{08}\u{0C}\n\r\t"), .string("é€😀"), .string("plain é")]))
    }

    @Test("a text over maxTextBytes is refused as too large, one at the limit is parsed")
    func sizeBound() throws {
        let filler = String(repeating: " ", count: JSONValue.maxTextBytes - 2)
        #expect(try JSONValue(parsing: "{}" + filler) == .object([]))
        let error = try #require(throws: ProtoJSONError.self) { try JSONValue(parsing: "{} " + filler) }
        #expect(error.code == .tooLarge)
    }

    @Test("an object of many members is parsed in linear time (duplicate names found through a set)")
    func duplicateNames() throws {
        #expect(throws: ProtoJSONError.self) { try JSONValue(parsing: #"{"a": 1, "b": 2, "a": 3}"#) }
    }

    /// Linear, not quadratic: parsing 8× the escapes takes well under 32× the CPU time (linear gives
    /// about 8×, the quadratic parser this replaced about 64×). CPU time of this thread, the best of
    /// three runs each, so a busy machine slows both sides alike.
    @Test("strings full of escapes parse in time linear in their length")
    func escapesParseInLinearTime() throws {
        func text(_ escapes: Int) -> String { "\"" + String(repeating: #"\""#, count: escapes) + "\"" }
        func cpuNanos(_ text: String) throws -> UInt64 {
            var best = UInt64.max
            for _ in 0..<3 {
                let start = threadCPUNanos()
                let value = try JSONValue(parsing: text)
                let spent = threadCPUNanos() - start
                guard case .string(let string) = value else { Issue.record("not a string"); return 0 }
                #expect(string.utf8.count == (text.utf8.count - 2) / 2)
                best = min(best, spent)
            }
            return max(best, 1)
        }
        let small = try cpuNanos(text(32 * 1024))
        let large = try cpuNanos(text(256 * 1024))
        #expect(large < 32 * small, "8× the escapes took \(Double(large) / Double(small))× the CPU time")
    }

    private func threadCPUNanos() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}
