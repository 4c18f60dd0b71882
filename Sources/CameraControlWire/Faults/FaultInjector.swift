/// One direction of a faulty link, sans-IO: bytes and time in, damaged bytes out, and a record of what
/// it did.
///
/// ```
///  feed(bytes, now) ─▶ split at 0x00 ─▶ per frame: garbage? drop? stall? ─▶ per byte: corrupt? drop?
///                                      ─▶ dup? reorder? ─▶ queue ─▶ take(now) ─▶ baud re-sampling ─▶ bytes
/// ```
///
/// When a fault needs whole frames (``LinkFaults/needsWholeFrames``: duplicate, reorder, a baud mismatch),
/// bytes are held until their frame's delimiter arrives (or 4 KiB gathered without one, which then pass as
/// one chunk with byte faults only). Otherwise bytes pass as they come: drop, garbage and stall are decided
/// at a frame's first byte, in the same order, with the same random numbers, as for a whole frame (a stall
/// still stops the line once the frame has passed). Held to its delimiter, a long frame on a slow line
/// reached its reader whole after a silence as long as its line time, which could outlast the reader's
/// dead timeout (§8). A frame held back for reordering leaves after the next frame, or after 50 ms.
/// Deterministic: the same faults (seed), bytes and times give the same output; streamed, the same bytes,
/// counts and records however the input is split into feeds (when they leave follows when they came).
public struct FaultInjector: Sendable {
    /// What the injector did, as counts.
    public struct Counts: Sendable, Hashable {
        /// Frames seen (delimited chunks).
        public var frames = 0
        /// Bytes seen.
        public var bytes = 0
        /// Bytes XOR-ed with a random value.
        public var corruptedBytes = 0
        /// Bytes lost one at a time.
        public var droppedBytes = 0
        /// Whole frames lost.
        public var droppedFrames = 0
        /// Frames sent twice.
        public var duplicatedFrames = 0
        /// Frames held back behind the next one.
        public var reorderedFrames = 0
        /// Garbage bursts injected.
        public var garbageBursts = 0
        /// Garbage bytes injected in all.
        public var garbageBytes = 0
        /// Stalls.
        public var stalls = 0
        /// Bytes whose value changed by baud re-sampling (or that it lost or made up).
        public var baudDamagedBytes = 0

        /// All zero.
        public init() {}
    }

    /// One thing the injector did, for a log.
    public struct Record: Sendable, Hashable, CustomStringConvertible {
        /// When, in the caller's microseconds.
        public var atMicros: UInt64
        /// What: `corrupt`, `drop`, `drop-frame`, `dup`, `reorder`, `garbage`, `stall`.
        public var kind: String
        /// Details (sizes, offsets).
        public var detail: String

        /// `kind detail`.
        public var description: String { detail.isEmpty ? kind : "\(kind) \(detail)" }
    }

    /// The faults applied.
    public let faults: LinkFaults
    /// What was done so far.
    public private(set) var counts = Counts()
    /// Whether ``takeRecords()`` gets a record of every fault (off: counts only).
    public var keepsRecords: Bool

    private var random: SplitMix64
    private var partial: [UInt8] = []
    private var queue: [(due: UInt64, bytes: [UInt8])] = []
    private var held: (since: UInt64, bytes: [UInt8])?
    private var stalledUntil: UInt64 = 0
    /// Bytes passing as they come: the frame begun (its frame faults rolled at its first byte).
    private var streamedFrame: StreamedFrame?

    private struct StreamedFrame {
        /// Its bytes go nowhere, up to its delimiter.
        var dropped: Bool
        /// The line stops when its delimiter has passed (as for a whole frame: it completes late).
        var stalls: Bool
        var number: Int
        /// Its bytes so far.
        var bytes = 0
    }
    private var records: [Record] = []
    private static let maximumUndelimited = 4096
    private static let reorderHoldMicros: UInt64 = 50_000

    /// An injector for `faults`; `stream` tells two directions with the same seed apart.
    public init(faults: LinkFaults, stream: UInt64 = 0, keepsRecords: Bool = false) {
        self.faults = faults
        self.keepsRecords = keepsRecords
        random = SplitMix64(seed: faults.seed &* 0x9E37_79B9_7F4A_7C15 &+ stream &+ 1)
    }

    /// Bytes that entered the link at `now`.
    public mutating func feed(_ bytes: [UInt8], atMicros now: UInt64) {
        counts.bytes += bytes.count
        guard faults.actsOnFrames else {
            // No fault acts on whole frames: the bytes pass as they come (byte faults need no frame). Held to
            // its delimiter, a long frame on a slow line (617 bytes, 0.64 s at 9600 baud) reached the host
            // whole, after the host had seen no byte of it for the dead timeout: it ended the link (§8).
            counts.frames += bytes.reduce(0) { $1 == 0 ? $0 + 1 : $0 }
            queue.append((now, damage(bytes, now: now)))
            return
        }
        guard faults.needsWholeFrames else {
            stream(bytes, now: now)
            return
        }
        for byte in bytes {
            partial.append(byte)
            if byte == 0 {
                frame(partial, now: now)
                partial.removeAll(keepingCapacity: true)
            } else if partial.count >= Self.maximumUndelimited {
                queue.append((now, damage(partial, now: now)))
                partial.removeAll(keepingCapacity: true)
            }
        }
    }

    /// The bytes that leave the link at `now` (possibly none: stalled, or nothing fed).
    public mutating func take(atMicros now: UInt64) -> [UInt8] {
        if let held, now >= held.since + Self.reorderHoldMicros {
            queue.append((now, held.bytes))
            self.held = nil
        }
        guard now >= stalledUntil else { return [] }
        var out: [UInt8] = []
        while let first = queue.first, first.due <= now {
            out += first.bytes
            queue.removeFirst()
        }
        if faults.baudRatio != 1, !out.isEmpty { out = resample(out) }
        return out
    }

    /// Bytes fed and not yet taken (held for a delimiter, queued, held back, or stalled).
    public var pendingByteCount: Int {
        partial.count + queue.reduce(0) { $0 + $1.bytes.count } + (held?.bytes.count ?? 0)
    }

    /// The next time ``take(atMicros:)`` may return bytes it cannot return now (the end of a stall, a
    /// held frame's release), or nil.
    public var nextDueMicros: UInt64? {
        var times: [UInt64] = []
        if let held { times.append(held.since + Self.reorderHoldMicros) }
        if !queue.isEmpty { times.append(max(stalledUntil, queue[0].due)) }
        return times.min()
    }

    /// The records since the last take (empty unless ``keepsRecords``).
    public mutating func takeRecords() -> [Record] {
        defer { records.removeAll() }
        return records
    }

    /// Forgets everything in flight (an unplugged cable).
    public mutating func flush() {
        partial.removeAll()
        streamedFrame = nil
        queue.removeAll()
        held = nil
        stalledUntil = 0
    }

    // MARK: Faults

    private mutating func roll(_ rate: Double) -> Bool {
        rate > 0 && random.nextUnit() < rate
    }

    private mutating func note(_ now: UInt64, _ kind: String, _ detail: String = "") {
        if keepsRecords { records.append(Record(atMicros: now, kind: kind, detail: detail)) }
    }

    /// Bytes passing as they come (no fault needs whole frames): a frame's faults are rolled at its first
    /// byte, its bytes damaged and queued as they come, or dropped up to its delimiter; a stall starts when
    /// the delimiter has passed. A frame without a delimiter ends after 4 KiB (so a dropped one cannot take
    /// more), and the next byte begins another.
    private mutating func stream(_ bytes: [UInt8], now: UInt64) {
        var start = bytes.startIndex
        while start < bytes.endIndex {
            var frame: StreamedFrame
            if let current = streamedFrame {
                frame = current
            } else {
                let rolled = beginFrame(now: now, bytes: nil)
                frame = StreamedFrame(dropped: rolled.dropped, stalls: rolled.stalls, number: counts.frames)
            }
            let limit = min(bytes.endIndex, start + (Self.maximumUndelimited - frame.bytes))
            let delimiter = bytes[start..<limit].firstIndex(of: 0)
            let end = delimiter.map { bytes.index(after: $0) } ?? limit
            let ends = delimiter != nil || frame.bytes + (end - start) >= Self.maximumUndelimited
            if ends && frame.stalls { stall(now: now) }
            if !frame.dropped {
                queue.append((now, damage(Array(bytes[start..<end]), now: now, at: frame.bytes, of: "frame \(frame.number)")))
            }
            frame.bytes += end - start
            streamedFrame = ends ? nil : frame
            start = end
        }
    }

    /// A frame begins: counted, and its garbage, drop and stall rolled (in this order). Returns whether it
    /// is dropped and whether it stalls the line (the caller stalls it when the frame has passed).
    /// `bytes`: its length when known (a whole frame), for the record.
    private mutating func beginFrame(now: UInt64, bytes: Int?) -> (dropped: Bool, stalls: Bool) {
        counts.frames += 1
        let number = counts.frames
        if roll(faults.garbageRate) {
            let length = 1 + Int(random.next() % UInt64(max(1, faults.garbageMaxBytes)))
            let burst = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            counts.garbageBursts += 1
            counts.garbageBytes += length
            note(now, "garbage", "\(length) bytes before frame \(number)")
            queue.append((now, burst))
        }
        if roll(faults.dropFrameRate) {
            counts.droppedFrames += 1
            note(now, "drop-frame", "frame \(number)" + (bytes.map { ", \($0) bytes" } ?? ""))
            return (true, false)
        }
        if roll(faults.stallRate) {
            counts.stalls += 1
            note(now, "stall", "\(faults.stallMicros) us at frame \(number)")
            return (false, true)
        }
        return (false, false)
    }

    private mutating func stall(now: UInt64) {
        stalledUntil = max(stalledUntil, now + faults.stallMicros)
    }

    private mutating func frame(_ frame: [UInt8], now: UInt64) {
        let rolled = beginFrame(now: now, bytes: frame.count)
        if rolled.dropped { return }
        if rolled.stalls { stall(now: now) }
        let number = counts.frames
        let damaged = damage(frame, now: now)
        if roll(faults.duplicateRate) {
            counts.duplicatedFrames += 1
            note(now, "dup", "frame \(number)")
            queue.append((now, damaged))
        }
        if held == nil, roll(faults.reorderRate) {
            counts.reorderedFrames += 1
            note(now, "reorder", "frame \(number) held behind the next")
            held = (now, damaged)
            return
        }
        queue.append((now, damaged))
        if let held {
            queue.append((now, held.bytes))
            self.held = nil
        }
    }

    /// Byte faults on `bytes`, the part from byte `first` of `whole` (for the record; nil: `bytes` is
    /// the whole).
    private mutating func damage(_ bytes: [UInt8], now: UInt64, at first: Int = 0, of whole: String? = nil) -> [UInt8] {
        guard faults.corruptRate > 0 || faults.dropByteRate > 0 else { return bytes }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        let of = whole ?? "\(bytes.count)"
        for offset in bytes.indices {
            let byte = bytes[offset]
            if roll(faults.dropByteRate) {
                counts.droppedBytes += 1
                note(now, "drop", "byte \(first + offset) of \(of)")
                continue
            }
            if roll(faults.corruptRate) {
                let mask = UInt8(1 + random.next() % 255)
                counts.corruptedBytes += 1
                note(now, "corrupt", "byte \(first + offset) of \(of): \(byte) → \(byte ^ mask)")
                out.append(byte ^ mask)
            } else {
                out.append(byte)
            }
        }
        return out
    }

    /// What a UART running at ``LinkFaults/baudRatio`` times the sender's rate reads from `bytes` sent
    /// back to back (8N1, idle high; each chunk starts on an idle line).
    private mutating func resample(_ bytes: [UInt8]) -> [UInt8] {
        let out = Self.uartResample(bytes, ratio: faults.baudRatio)
        let same = zip(bytes, out).filter { $0 == $1 }.count
        counts.baudDamagedBytes += max(bytes.count, out.count) - same
        return out
    }

    /// 8N1 re-sampling: the sender's bit `i` spans `[i, i+1)`; the receiver, at `ratio` times its rate,
    /// finds a falling edge, samples the data bits at the middle of its own bit times, and then looks for
    /// the next edge after its stop bit.
    static func uartResample(_ bytes: [UInt8], ratio: Double) -> [UInt8] {
        var bits: [Bool] = []
        bits.reserveCapacity(bytes.count * 10)
        for byte in bytes {
            bits.append(false)
            for bit in 0..<8 { bits.append(byte >> bit & 1 == 1) }
            bits.append(true)
        }
        func level(_ time: Double) -> Bool {
            let index = Int(time.rounded(.down))
            return index < 0 || index >= bits.count ? true : bits[index]
        }
        let period = 1 / ratio
        var out: [UInt8] = []
        var position = 0.0
        var edge = Int(position.rounded(.up))
        while edge < bits.count {
            guard !bits[edge], edge == 0 || bits[edge - 1] else {
                edge += 1
                continue
            }
            let start = Double(edge)
            var byte: UInt8 = 0
            for bit in 0..<8 where level(start + (Double(bit) + 1.5) * period) { byte |= 1 << bit }
            out.append(byte)
            position = start + 9.5 * period
            edge = max(edge + 1, Int(position.rounded(.up)))
        }
        return out
    }
}

/// SplitMix64: a small, fast, seeded generator (deterministic across platforms).
struct SplitMix64: Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
