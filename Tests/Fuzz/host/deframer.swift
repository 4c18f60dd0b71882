// libFuzzer harness (scripts/fuzz deframer): arbitrary bytes into the host's FrameDecoder.
//
// Properties: never a crash; the frame being assembled never exceeds the limit; feeding the same bytes
// whole, one at a time, or in fuzzer-chosen splits gives the same outputs; after a final delimiter the
// decoder is idle.
import CameraControlWire

/// libFuzzer's entry point: one input, `size` bytes at `data`; returns 0 (a broken property traps).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDeframer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = bytes.first else { return 0 }
    let input = Array(bytes.dropFirst())
    let limit = [128, 256, 1024, WireFormat.maxFrameBytes][Int(first & 3)]

    func drain(_ decoder: inout FrameDecoder, into outputs: inout [FrameDecoderOutput]) {
        while let output = decoder.next() {
            outputs.append(output)
            precondition(decoder.bufferedFrameBytes <= limit + 1, "frame buffer over the limit")
        }
    }
    var whole = FrameDecoder(maxFrameBytes: limit)
    var wholeOut: [FrameDecoderOutput] = []
    whole.append(input)
    drain(&whole, into: &wholeOut)

    var single = FrameDecoder(maxFrameBytes: limit)
    var singleOut: [FrameDecoderOutput] = []
    for byte in input {
        single.append([byte])
        drain(&single, into: &singleOut)
    }

    var split = FrameDecoder(maxFrameBytes: limit)
    var splitOut: [FrameDecoderOutput] = []
    var index = 0
    var step = Int(first >> 2) + 1
    while index < input.count {
        let end = min(input.count, index + step)
        split.append(input[index..<end])
        drain(&split, into: &splitOut)
        index = end
        step = step * 7 % 61 + 1
    }
    precondition(wholeOut == singleOut && wholeOut == splitOut, "outputs depend on how the bytes were split")
    precondition(whole.counters == single.counters && whole.counters == split.counters, "counters depend on the split")

    whole.append([WireFormat.delimiter])
    drain(&whole, into: &wholeOut)
    precondition(whole.isIdle, "not idle after a delimiter")
    return 0
}
