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

/// Turns a byte stream into packets: a value type fed bytes, one byte at a time (docs/PROTOCOL.md §2–§4).
///
/// ```
/// … garbage 00 | COBS(frame) 00 | 00 | COBS(frame) 00 | …
///              ╰─ resynchronise at every 0x00; empty frames are ignored
/// ```
///
/// Feed it with ``append(_:)`` and drain it with ``next()`` until that returns nil ("need more bytes").
/// Bytes appended but not yet consumed by ``next()`` are kept; the frame being assembled is unstuffed on
/// the fly and never holds more than `maxFrameBytes + 1` bytes: a frame that grows past the limit is
/// reported once as ``WireError/Code/oversizedFrame`` and everything up to the next `0x00` is discarded.
/// Every other bad frame (bad COBS, bad check, short envelope, unknown type) is reported as an
/// ``FrameDecoderOutput/error(_:)`` and the decoder goes on with the next frame. The results do not
/// depend on how the input is split into ``append(_:)`` calls.
public struct FrameDecoder: Sendable {
    /// The largest unstuffed frame accepted, check included.
    public let maxFrameBytes: Int
    /// What the decoder has seen so far.
    public private(set) var counters = WireCounters()

    /// Input not yet consumed by ``next()``.
    private var input: [UInt8] = []
    private var inputIndex = 0
    /// The unstuffed bytes of the frame being assembled.
    private var frame: [UInt8] = []
    /// Stuffed bytes of the current frame (for error sizes).
    private var stuffedCount = 0
    private var unstuffer = COBSUnstuffer()
    /// True after an oversized frame, until the next delimiter.
    private var discarding = false

    /// A decoder for frames of at most `maxFrameBytes` unstuffed bytes (clamped to
    /// ``WireFormat/minFrameBytes``…``WireFormat/maxFrameBytes``; the host accepts 4093).
    public init(maxFrameBytes: Int = WireFormat.maxFrameBytes) {
        self.maxFrameBytes = min(max(maxFrameBytes, WireFormat.minFrameBytes), WireFormat.maxFrameBytes)
        frame.reserveCapacity(self.maxFrameBytes + 1)
    }

    /// Adds received bytes; call ``next()`` until it returns nil to consume them.
    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
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
    public mutating func next() -> FrameDecoderOutput? {
        while inputIndex < input.count {
            let byte = input[inputIndex]
            inputIndex += 1
            counters.bytesReceived &+= 1
            if let output = consume(byte) { return output }
        }
        return nil
    }

    /// Unstuffed bytes of the frame being assembled (at most `maxFrameBytes + 1`); for diagnostics and
    /// tests of the memory bound.
    public var bufferedFrameBytes: Int { frame.count }

    /// True when no frame is partly assembled and no appended input is waiting.
    public var isIdle: Bool { inputIndex == input.count && stuffedCount == 0 && !discarding }

    private mutating func consume(_ byte: UInt8) -> FrameDecoderOutput? {
        if byte == WireFormat.delimiter {
            defer { resetFrame() }
            if discarding {
                discarding = false
                return nil
            }
            return endOfFrame()
        }
        if discarding {
            stuffedCount &+= 1
            return nil
        }
        stuffedCount += 1
        unstuffer.feed(byte, into: &frame)
        if frame.count > maxFrameBytes {
            counters.oversizedFrames &+= 1
            let size = stuffedCount
            discarding = true
            frame.removeAll(keepingCapacity: true)
            unstuffer.reset()
            return .error(
                WireError(
                    .oversizedFrame,
                    "frame longer than \(maxFrameBytes) bytes; discarding up to the next delimiter",
                    byteCount: size))
        }
        return nil
    }

    private mutating func endOfFrame() -> FrameDecoderOutput? {
        guard stuffedCount > 0 else { return nil }  // empty frame: ignored
        guard unstuffer.isAtGroupEnd else {
            counters.framingErrors &+= 1
            return .error(WireError(.framing, "frame ends inside a COBS group", byteCount: frame.count))
        }
        do {
            let packet = try PacketDecoder.decode(unstuffed: frame)
            counters.framesDecoded &+= 1
            return .packet(packet)
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
        frame.removeAll(keepingCapacity: true)
        stuffedCount = 0
        unstuffer.reset()
    }
}
