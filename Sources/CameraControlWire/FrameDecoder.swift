/// What ``FrameDecoder/next()`` found in the byte stream.
public enum FrameDecoderOutput: Hashable, Sendable {
    /// A frame that unstuffed, checked and parsed.
    case packet(Packet)
    /// A frame that was dropped; the decoder has resynchronised (or will, at the next `0x00`).
    case error(WireError)
}

/// What a ``FrameDecoder`` has seen, for the `Counters` of docs/PROTOCOL.md.
public struct WireCounters: Hashable, Sendable {
    /// Frames decoded into a packet of a known type.
    public var framesDecoded: UInt64 = 0
    /// Frames whose CRC-16 did not match (`check_errors`).
    public var checkErrors: UInt64 = 0
    /// Frames that could not be unstuffed or parsed (`framing_errors`).
    public var framingErrors: UInt64 = 0
    /// Frames longer than the decoder's limit (`oversized_frames`).
    public var oversizedFrames: UInt64 = 0
    /// Frames of a packet type v1 does not define (`unknown_packet_types`).
    public var unknownPacketTypes: UInt64 = 0
    /// Every byte taken from the input, delimiters and garbage included.
    public var bytesReceived: UInt64 = 0

    /// All counters zero.
    public init() {}
}

/// What ``FrameDecoder/nextView()`` found in the byte stream: as ``FrameDecoderOutput``, with the packet's
/// payload left in the decoder's buffer.
public enum FrameDecoderViewOutput: Hashable, Sendable {
    /// A frame that unstuffed, checked and parsed; its payload is a slice of the decoder's frame buffer.
    case packet(PacketView)
    /// A frame that was dropped; the decoder has resynchronised (or will, at the next `0x00`).
    case error(WireError)
}

/// Turns a byte stream into packets: a value type fed bytes in chunks of any size (docs/PROTOCOL.md §2–§4).
///
/// ```
/// … garbage 00 | COBS(frame) 00 | 00 | COBS(frame) 00 | …
///              ╰─ resynchronise at every 0x00; empty frames are ignored
/// ```
///
/// Feed it with `append(_:)` and drain it with ``next()`` (or ``nextView()``) until that returns nil
/// ("need more bytes"). Bytes appended but not yet consumed are kept; the frame being assembled is
/// unstuffed on the fly into one buffer allocated at init, and never holds more than `maxFrameBytes + 1`
/// bytes: a frame that grows past the limit is reported once as ``WireError/Code/oversizedFrame`` and
/// everything up to the next `0x00` is discarded. Every other bad frame (bad COBS, bad check, short
/// envelope, unknown type) is reported as an ``FrameDecoderOutput/error(_:)`` and the decoder goes on with
/// the next frame. The results do not depend on how the input is split into `append(_:)` calls.
///
/// On the steady path (`append(_:)` of a contiguous collection, then ``nextView()``, with each view
/// released before the next call) the decoder allocates nothing: the input buffer and the frame buffer
/// keep their storage, and a ``PacketView``'s payload is a slice of the frame buffer. Holding a view
/// across calls is safe (the buffer is copied on write, like any array), it only costs that copy.
public struct FrameDecoder: Sendable {
    /// The largest unstuffed frame accepted, check included.
    public let maxFrameBytes: Int
    /// What the decoder has seen so far.
    public private(set) var counters = WireCounters()

    /// Input not yet consumed by ``next()``.
    private var input: [UInt8] = []
    private var inputIndex = 0
    /// The unstuffed bytes of the frame being assembled: `frameCount` bytes of a buffer of
    /// `maxFrameBytes + 1`.
    private var frame: [UInt8]
    private var frameCount = 0
    /// Stuffed bytes of the current frame (for error sizes).
    private var stuffedCount = 0
    /// COBS: data bytes still to come in the current group; 0 means the next byte is a code byte.
    private var groupRemaining = 0
    /// COBS: true when the current group ends with an (implicit) zero.
    private var zeroPending = false
    /// True after an oversized frame, until the next delimiter.
    private var discarding = false

    /// A decoder for frames of at most `maxFrameBytes` unstuffed bytes (clamped to
    /// ``WireFormat/minFrameBytes``…``WireFormat/maxFrameBytes``; the host accepts 4093).
    public init(maxFrameBytes: Int = WireFormat.maxFrameBytes) {
        self.maxFrameBytes = min(max(maxFrameBytes, WireFormat.minFrameBytes), WireFormat.maxFrameBytes)
        frame = [UInt8](repeating: 0, count: self.maxFrameBytes + 1)
    }

    /// Adds received bytes; call ``next()`` until it returns nil to consume them.
    ///
    /// Contiguous collections (arrays, slices, `Data`, buffers) are copied in one block.
    @inlinable
    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        let copied: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            append(UnsafeRawBufferPointer(buffer))
        }
        if copied == nil {
            Array(bytes).withUnsafeBytes { buffer in append(buffer) }
        }
    }

    /// Adds received bytes from borrowed memory (copied); call ``next()`` until it returns nil to consume
    /// them.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if inputIndex == input.count {
            input.removeAll(keepingCapacity: true)
            inputIndex = 0
        } else if inputIndex > 4096 && inputIndex * 2 > input.count {
            input.removeFirst(inputIndex)
            inputIndex = 0
        }
        input.append(contentsOf: bytes)
    }

    /// The next packet or error from the bytes appended so far, or nil when more bytes are needed.
    ///
    /// The packet owns a copy of its payload; ``nextView()`` avoids that copy.
    public mutating func next() -> FrameDecoderOutput? {
        switch nextView() {
        case .packet(let view): .packet(view.packet)
        case .error(let error): .error(error)
        case nil: nil
        }
    }

    /// The next packet or error from the bytes appended so far, or nil when more bytes are needed; the
    /// packet's payload is a slice of the decoder's frame buffer (no copy; release it before the next call
    /// to keep the decoder free of allocations).
    public mutating func nextView() -> FrameDecoderViewOutput? {
        while inputIndex < input.count {
            switch unstuffUntilDelimiter() {
            case .needMoreInput:
                return nil
            case .oversized(let stuffedSize):
                counters.oversizedFrames &+= 1
                return .error(
                    WireError(
                        .oversizedFrame,
                        "frame longer than \(maxFrameBytes) bytes; discarding up to the next delimiter",
                        byteCount: stuffedSize))
            case .delimiter:
                if let output = endOfFrame() { return output }
            }
        }
        return nil
    }

    /// Unstuffed bytes of the frame being assembled (at most `maxFrameBytes + 1`); for diagnostics and
    /// tests of the memory bound.
    public var bufferedFrameBytes: Int { frameCount }

    /// True while a frame is partly assembled (bytes of it arrived, its delimiter not yet) and not being
    /// discarded as oversized: a frame is arriving.
    public var isAssemblingFrame: Bool { stuffedCount > 0 && !discarding }

    /// True when no frame is partly assembled and no appended input is waiting.
    public var isIdle: Bool { inputIndex == input.count && stuffedCount == 0 && !discarding }

    private enum ScanResult {
        case needMoreInput
        case delimiter
        case oversized(stuffedSize: Int)
    }

    /// Consumes input up to and including the next delimiter (or all of it), unstuffing into `frame`.
    private mutating func unstuffUntilDelimiter() -> ScanResult {
        var frame = self.frame
        self.frame = []  // `frame` is now the only reference: writing to it does not copy
        defer { self.frame = frame }
        let limit = maxFrameBytes
        var count = frameCount
        var stuffed = stuffedCount
        var remaining = groupRemaining
        var zero = zeroPending
        let discard = discarding
        let start = inputIndex
        var result = ScanResult.needMoreInput
        let end: Int = input.withUnsafeBufferPointer { source in
            frame.withUnsafeMutableBufferPointer { target in
                var index = start
                while index < source.count {
                    let byte = source[index]
                    index += 1
                    if byte == WireFormat.delimiter {
                        result = .delimiter
                        return index
                    }
                    stuffed &+= 1
                    if discard { continue }
                    if remaining == 0 {
                        remaining = Int(byte) &- 1
                        if zero {
                            target[count] = 0
                            count += 1
                        }
                        zero = byte != COBS.maxCode
                    } else {
                        target[count] = byte
                        count += 1
                        remaining &-= 1
                    }
                    if count > limit {
                        result = .oversized(stuffedSize: stuffed)
                        return index
                    }
                }
                return index
            }
        }
        counters.bytesReceived &+= UInt64(end - start)
        inputIndex = end
        (frameCount, stuffedCount, groupRemaining, zeroPending) = (count, stuffed, remaining, zero)
        if case .oversized = result {
            discarding = true
            frameCount = 0
            groupRemaining = 0
            zeroPending = false
        }
        return result
    }

    private mutating func endOfFrame() -> FrameDecoderViewOutput? {
        defer { resetFrame() }
        if discarding {
            discarding = false
            return nil
        }
        guard stuffedCount > 0 else { return nil }  // empty frame: ignored
        guard groupRemaining == 0 else {
            counters.framingErrors &+= 1
            return .error(WireError(.framing, "frame ends inside a COBS group", byteCount: frameCount))
        }
        do {
            let view = try PacketDecoder.decodeView(unstuffed: frame[0..<frameCount])
            counters.framesDecoded &+= 1
            return .packet(view)
        } catch {
            switch error.code {
            case .badCheck: counters.checkErrors &+= 1
            case .unknownPacketType: counters.unknownPacketTypes &+= 1
            default: counters.framingErrors &+= 1
            }
            return .error(error)
        }
    }

    private mutating func resetFrame() {
        frameCount = 0
        stuffedCount = 0
        groupRemaining = 0
        zeroPending = false
    }
}
