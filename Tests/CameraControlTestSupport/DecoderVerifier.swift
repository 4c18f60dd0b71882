import Testing

/// Checks that a streaming decoder's result does not depend on how its input is split (the idea of
/// swift-nio's `ByteToMessageDecoderVerifier`).
///
/// `decode` gets the input as a list of chunks, feeds them in order to a fresh decoder (draining it
/// after each) and returns what came out (outputs, counters, whatever the decoder promises). The
/// verifier calls it with the input whole, one byte at a time and in seeded random splits (empty chunks
/// included) and records an issue for every split whose result differs from the whole input's.
///
/// ```swift
/// let whole = DecoderVerifier.verify(stream) { chunks in decoded(chunks) }  // outputs and counters
/// #expect(whole.outputs == expected)
/// ```
public enum DecoderVerifier {
    /// Feeds `input` in every split and returns the result of feeding it whole.
    ///
    /// - Parameters:
    ///   - input: the bytes to decode.
    ///   - seed: the seed of the random splits (a failure names the split's chunk sizes).
    ///   - randomSplits: how many random splits to try.
    ///   - maxChunk: the largest random chunk.
    ///   - decode: feeds the chunks to a fresh decoder and returns the result.
    @discardableResult
    public static func verify<Result: Equatable>(
        _ input: [UInt8], seed: UInt64 = 0x5EED, randomSplits: Int = 50, maxChunk: Int = 40,
        sourceLocation: SourceLocation = #_sourceLocation, decode: ([[UInt8]]) -> Result
    ) -> Result {
        let whole = decode([input])
        func check(_ chunks: [[UInt8]], _ name: String) {
            let result = decode(chunks)
            if result != whole {
                Issue.record(
                    "\(name) decoded differently: \(clipped(result)) instead of \(clipped(whole))", sourceLocation: sourceLocation)
            }
        }
        check(input.map { [$0] }, "one byte at a time")
        var random = SeededGenerator(seed: seed)
        for split in 0..<randomSplits {
            let chunks = randomChunks(of: input, maxChunk: maxChunk, using: &random)
            check(chunks, "random split \(split) of seed \(seed) (chunk sizes \(clipped(chunks.map(\.count))))")
        }
        return whole
    }

    /// `input` cut into consecutive chunks of 0...`maxChunk` bytes.
    public static func randomChunks(of input: [UInt8], maxChunk: Int, using random: inout SeededGenerator) -> [[UInt8]] {
        var chunks: [[UInt8]] = []
        var index = 0
        while index < input.count {
            let length = min(input.count - index, Int.random(in: 0...max(1, maxChunk), using: &random))
            chunks.append(Array(input[index..<index + length]))
            index += length
        }
        return chunks
    }

    private static func clipped(_ value: some Any) -> String {
        let text = String(describing: value)
        return text.count > 300 ? text.prefix(300) + "…" : text
    }
}
