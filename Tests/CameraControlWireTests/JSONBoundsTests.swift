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

    /// Linear, not quadratic: parsing 16× the text takes well under 48× the CPU time (linear gives about
    /// 16×; the parser this replaced, which decoded each run of plain bytes between escapes into a
    /// growing scalar view, took about 130× on `a\n` repeated). CPU time of this thread, the best of
    /// three runs each, so a busy machine slows both sides alike.
    @Test("strings of plain bytes and escapes parse in time linear in their length")
    func escapesParseInLinearTime() throws {
        func text(_ pairs: Int) -> String { "\"" + String(repeating: #"a\n"#, count: pairs) + "\"" }
        func cpuNanos(_ pairs: Int) throws -> UInt64 {
            let text = text(pairs)
            var best = UInt64.max
            for _ in 0..<3 {
                let start = threadCPUNanos()
                let value = try JSONValue(parsing: text)
                let spent = threadCPUNanos() - start
                #expect(value == .string(String(repeating: "a\n", count: pairs)))
                best = min(best, spent)
            }
            return max(best, 1)
        }
        let small = try cpuNanos(16 * 1024)
        let large = try cpuNanos(256 * 1024)
        #expect(large < 48 * small, "16× the text took \(Double(large) / Double(small))× the CPU time")
    }

    private func threadCPUNanos() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}
