// libFuzzer harness (scripts/fuzz http): arbitrary bytes into the live page's HTTP request decoder.
//
// Properties: never a crash; whenever the decoder asks for more bytes it holds at most one head or one
// body (its limits); feeding the same bytes whole, one at a time, or in fuzzer-chosen splits gives the
// same requests and the same error.
import CameraControlHTTP

private struct Outcome: Equatable {
    var requests: [HTTPRequest] = []
    var error: HTTPRequestError?
}

private let limits = HTTPLimits(maxRequestLineBytes: 128, maxHeadBytes: 512, maxHeaderCount: 8, maxBodyBytes: 256)

private func run(_ chunks: [ArraySlice<UInt8>]) -> Outcome {
    var decoder = HTTPRequestDecoder(limits: limits)
    var outcome = Outcome()
    for chunk in chunks {
        decoder.append(chunk)
        do {
            while let request = try decoder.next() { outcome.requests.append(request) }
            precondition(
                decoder.bufferedBytes <= max(limits.maxHeadBytes, limits.maxBodyBytes),
                "the decoder holds more than one head or body while it waits")
        } catch {
            outcome.error = error
            precondition(decoder.bufferedBytes == 0, "a failed decoder holds bytes")
            return outcome
        }
    }
    return outcome
}

/// libFuzzer's entry point: one input, `size` bytes at `data`; returns 0 (a broken property traps).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = bytes.first else { return 0 }
    let input = Array(bytes.dropFirst())
    let whole = run([input[...]])
    let single = run(input.indices.map { input[$0...$0] })
    var pieces: [ArraySlice<UInt8>] = []
    var index = 0
    var step = Int(first) + 1
    while index < input.count {
        let end = min(input.count, index + step)
        pieces.append(input[index..<end])
        index = end
        step = step * 7 % 97 + 1
    }
    let split = run(pieces)
    precondition(whole == single && whole == split, "the outcome depends on how the bytes were split")
    return 0
}
