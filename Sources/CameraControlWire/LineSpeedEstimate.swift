/// The speed of a serial line, learnt from the device's long frames, and when the host's bytes will have
/// left on it: what a reliable packet's retransmission timeout must allow for on a slow line (§6).
///
/// A host rarely knows its line's speed (a pseudo-terminal, a USB bridge at a rate the device chose). But a
/// frame that arrives in pieces shows it: while the device sends one frame its bytes follow back to back at
/// the line's rate, so the bytes read after the piece that started the frame, over the time until the read
/// that ended it, are that rate (at 9600 baud a 170-byte `HandshakeResponse` arrives over 177 ms). Every
/// such sample is the rate or below it: the first read took everything that had arrived, so the bytes
/// counted arrived after it, and a host that reads the end late only stretches the time. So the fastest
/// sample wins. A read that ends one frame and holds more (a next frame's start, a whole frame) is no
/// sample: its bytes are not all the frame's. A line whose frames arrive whole (a fast line, a USB CDC
/// port) gives no sample, and then nothing changes: the allowance is zero.
///
/// With a speed known, the host's own bytes are modelled on the line: each write starts when the line is
/// free and takes its bytes' time, so a packet queued behind others is timed from when it will have left.
/// ``allowance(forPacketEndingAt:now:)`` is that wait plus the time ``returnBytes`` take on the line (the
/// device's `ACK`, and its UART's FIFO still holding the end of whatever it was sending).
public struct LineSpeedEstimate: Sendable, Equatable {
    /// Bytes a reply needs on the line beyond the request itself: the device's `ACK` (about 10 bytes
    /// framed) behind the end of a frame still in its UART's FIFO (16 bytes at most on the reference
    /// boards), with a few to spare. The reference device allows the same for the host's `ACK`.
    public static let returnBytes = 32
    /// The fewest bytes after a frame's first piece that make a sample (a few pieces of a UART's FIFO).
    public static let minimumSampleBytes = 48
    /// The shortest span that makes a sample: below it a scheduler's jitter is most of the time measured.
    public static let minimumSampleSpan = Duration.milliseconds(2)
    /// The longest allowance for the reply's time on the line (``returnBytes``): once a request has left, its
    /// first three copies still go out within a stream's 1 s confirmation time (§7) on the slowest line
    /// (below about 1300 baud).
    public static let maximumAllowance = Duration.milliseconds(250)
    /// The longest wait for a packet to leave: a 1,024-byte frame at 4800 baud (2.1 s) and some behind it, or
    /// 2,400 bytes at 9600. Until it has left, a copy would only queue behind it (at 9600 baud a 611-byte
    /// request went out three times, and its copies held the line 1.3 s after the device had it; with a 1 s
    /// bound a 1,014-byte request went out again 1.05 s after the first, just before that copy had left, and
    /// the next process waited 1 s behind the device's second answer). Beyond this, a rate learnt too low (a
    /// read stalled in the middle of the one long frame that taught it) holds a lost packet's copy back no
    /// longer; the call's default deadline and a stream's confirmation time grow by the line's time too
    /// (``ConnectionCore``).
    public static let maximumDeparture = Duration.milliseconds(2_500)

    /// The line's rate in bytes per second, once a long frame arrived in pieces (nil before).
    public private(set) var bytesPerSecond: Int?
    /// When the frame still open at the end of the last read started arriving (nil: none open), and the
    /// bytes read since.
    private var spanStart: Duration?
    private var spanBytes = 0
    /// When the host's bytes written so far will have left, on the modelled line.
    private var freeAt = Duration.zero

    /// No speed known.
    public init() {}

    /// One read of `count` bytes at `now`. `continuing`: a frame was open before it; `completedFrames`: the
    /// frames that ended in it (checked or not); `open`: a frame is open after it.
    public mutating func read(_ count: Int, at now: Duration, continuing: Bool, completedFrames: Int, open: Bool) {
        if continuing, let start = spanStart {
            spanBytes += count
            // Only a read that ends the one frame and holds nothing after it counts: its bytes are the frame's.
            if completedFrames == 1 && !open { sample(bytes: spanBytes, over: now - start) }
        }
        if open && (!continuing || completedFrames > 0 || spanStart == nil) {
            // A frame started in this read (or its start was not seen): its remaining bytes are timed from here.
            spanStart = now
            spanBytes = 0
        } else if !open {
            spanStart = nil
        }
    }

    /// When the bytes written so far will have left, on the modelled line (on the timeline of `now`; zero
    /// before any was written on a line of known speed): from then on the line is quiet, unless more is written.
    public var lineFreeAt: Duration { freeAt }

    /// The host wrote `count` bytes at `now`: they leave after those before them.
    public mutating func wrote(_ count: Int, at now: Duration) {
        guard let rate = bytesPerSecond, count > 0 else { return }
        freeAt = max(freeAt, now) + Self.lineTime(bytes: count, rate: rate)
    }

    /// How much longer than its retransmission timeout a packet must wait for its `ACK`: until it has
    /// left (its last byte `pendingBytes` bytes behind what was written, counted from the line's being
    /// free; at most ``maximumDeparture``), plus the time ``returnBytes`` take (at most
    /// ``maximumAllowance``). Zero when no speed is known.
    public func allowance(forPacketEndingAt pendingBytes: Int, now: Duration) -> Duration {
        guard let rate = bytesPerSecond else { return .zero }
        return departure(forPacketEndingAt: pendingBytes, now: now)
            + min(Self.lineTime(bytes: Self.returnBytes, rate: rate), Self.maximumAllowance)
    }

    /// How long until a packet has left, its last byte `pendingBytes` bytes behind what was written (counted
    /// from the line's being free; at most ``maximumDeparture``): the part of a round trip the line itself
    /// takes on the way out. Zero when no speed is known.
    public func departure(forPacketEndingAt pendingBytes: Int, now: Duration) -> Duration {
        guard let rate = bytesPerSecond else { return .zero }
        let leaves = max(freeAt, now) + Self.lineTime(bytes: pendingBytes, rate: rate)
        return min(leaves - now, Self.maximumDeparture)
    }

    private mutating func sample(bytes: Int, over span: Duration) {
        guard bytes >= Self.minimumSampleBytes, span >= Self.minimumSampleSpan else { return }
        let (seconds, attoseconds) = span.components
        let micros = seconds * 1_000_000 + attoseconds / 1_000_000_000_000  // at least 2,000
        let rate = Int(min(Int64(bytes) * 1_000_000 / micros, Int64(Int32.max)))
        if rate > (bytesPerSecond ?? 0) { bytesPerSecond = rate }
    }

    /// How long `bytes` take on the line at ``bytesPerSecond`` (zero while it is not known).
    public func lineTime(bytes: Int) -> Duration {
        guard let rate = bytesPerSecond else { return .zero }
        return Self.lineTime(bytes: bytes, rate: rate)
    }

    private static func lineTime(bytes: Int, rate: Int) -> Duration {
        .microseconds(Int64(bytes) * 1_000_000 / Int64(max(rate, 1)))
    }
}
