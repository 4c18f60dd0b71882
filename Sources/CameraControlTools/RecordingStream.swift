import CameraControlWire

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The frames of a pcapng file read block by block through a buffer of a few blocks, not the whole file:
/// what ``PcapngReader`` gives, with the same messages, in memory that does not grow with the recording.
/// A file cut short ends the frames; ``truncation`` then says where.
package final class PcapngFrameReader {
    private let descriptor: Int32
    private let name: String
    /// The bytes read and not yet consumed; `buffer[0]` is the file's byte `base`.
    private var buffer: [UInt8]
    private var base = 0
    private var atEnd: Bool
    /// No byte at or past this offset is read (the whole blocks a first pass found: a file still being
    /// recorded into reads the same every pass).
    private let stopAt: Int
    /// The file offset of the next block.
    package private(set) var offset = 0
    private var headerChecked = false
    private var done = false
    /// The whole frames read so far.
    package private(set) var framesRead = 0
    /// The most bytes the reader has held at once (about a chunk of 64 KiB and a block).
    package private(set) var mostBuffered = 0
    /// Where and how the file is cut short or broken, once reading stopped there.
    package private(set) var truncation: RecordingError?

    /// A reader of the regular file at `path`, reading nothing past `stopAt`.
    ///
    /// - Throws: ``RecordingError`` when the file cannot be opened or is not a regular file (a FIFO or a
    ///   device could block for ever, and a recording is read more than once).
    package init(path: String, stopAt: Int = .max) throws(RecordingError) {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw RecordingError(description: "cannot read \(path): \(BoundedFiles.reason(errno))") }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            _ = close(descriptor)
            throw RecordingError(description: "\(path) is not a regular file, not a recording")
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        self.descriptor = descriptor
        self.name = path
        self.buffer = []
        self.atEnd = false
        self.stopAt = stopAt
    }

    /// A reader of a pcapng file's bytes, `name` in its messages.
    package init(bytes: [UInt8], name: String) {
        self.descriptor = -1
        self.name = name
        self.buffer = bytes
        self.atEnd = true
        self.stopAt = bytes.count
    }

    deinit { if descriptor >= 0 { _ = close(descriptor) } }

    /// One past the last byte read.
    private var end: Int { base + buffer.count }

    /// Reads until `count` bytes from ``offset`` are in the buffer, or the file ends.
    private func fill(_ count: Int) throws(RecordingError) {
        while end - offset < count, !atEnd {
            if offset > base {
                buffer.removeFirst(offset - base)
                base = offset
            }
            let want = min(64 * 1024, stopAt - end)
            if want <= 0 {
                atEnd = true
                break
            }
            let old = buffer.count
            buffer.append(contentsOf: repeatElement(0, count: want))
            let got = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + old, want) }
            if got < 0 {
                buffer.removeLast(want)
                if errno == EINTR { continue }
                throw RecordingError(description: "cannot read \(name): \(BoundedFiles.reason(errno))")
            }
            buffer.removeLast(want - got)
            mostBuffered = max(mostBuffered, buffer.count)
            if got == 0 { atEnd = true }
            if end > PcapngReader.maxFileBytes {
                throw RecordingError(
                    description:
                        "\(name) is larger than \(PcapngReader.maxFileBytes >> 20) MiB, more than a recording may be; not read further")
            }
        }
    }

    private func u32(_ at: Int) -> UInt32 {
        let at = at - base
        return UInt32(buffer[at]) | UInt32(buffer[at + 1]) << 8 | UInt32(buffer[at + 2]) << 16 | UInt32(buffer[at + 3]) << 24
    }

    private func u16(_ at: Int) -> UInt16 { UInt16(buffer[at - base]) | UInt16(buffer[at - base + 1]) << 8 }

    /// The section header's checks: what is no pcapng file at all is an error, not a cut.
    private func checkHeader() throws(RecordingError) {
        try fill(28)
        let available = end
        let magic: [UInt8] = [0x0A, 0x0D, 0x0D, 0x0A]
        if available == 0 { throw RecordingError(description: "\(name) is empty, not a pcapng file") }
        guard buffer.starts(with: magic.prefix(available)), available < 12 || u32(8) == 0x1A2B_3C4D else {
            throw RecordingError(description: "\(name) is not a little-endian pcapng file")
        }
        guard available >= 28 else {
            throw RecordingError(description: "\(name) is cut short: \(available) bytes, within its section header (28 or more)")
        }
        let length = Int(u32(4))
        try fill(length)
        if length > end {
            throw RecordingError(description: "\(name) is cut short: \(end) bytes, within its section header (\(length) bytes)")
        }
        headerChecked = true
    }

    private func stop(_ why: String) -> RecordedFrame? {
        truncation = RecordingError(description: "\(name): \(why), after \(framesRead) whole frames")
        done = true
        return nil
    }

    /// The next frame in file order, or nil at the end of the file or at a cut (``truncation``).
    ///
    /// - Throws: ``RecordingError`` when the file cannot be read, is too large or is not pcapng.
    package func next() throws(RecordingError) -> RecordedFrame? {
        while !done {
            if !headerChecked { try checkHeader() }
            try fill(12)
            let available = end - offset
            if available == 0 {
                done = true
                return nil
            }
            guard available >= 12 else {
                return stop("cut short at byte \(end), \(available) bytes into a block (blocks are 12 bytes or more)")
            }
            let type = u32(offset)
            let length = Int(u32(offset + 4))
            guard length >= 12, length % 4 == 0 else {
                return stop("the block at byte \(offset) has a bad length (\(length))")
            }
            try fill(length)
            guard end - offset >= length else {
                return stop("cut short at byte \(end), inside the block at byte \(offset) (\(length) bytes long)")
            }
            var frame: RecordedFrame?
            if type == 6, length >= 32 {
                let time = UInt64(u32(offset + 12)) << 32 | UInt64(u32(offset + 16))
                let captured = Int(u32(offset + 20))
                let dataStart = offset + 28
                guard captured <= length - 32 else {
                    return stop("the packet in the block at byte \(offset) overruns its block")
                }
                var direction = FrameDirection.unknown
                var option = dataStart + (captured + 3) / 4 * 4
                while option + 4 <= offset + length - 4 {
                    let code = u16(option)
                    let size = Int(u16(option + 2))
                    if code == 0 { break }
                    if code == 2, size == 4, option + 8 <= offset + length - 4 {
                        switch u32(option + 4) & 3 {
                        case 1: direction = .fromDevice
                        case 2: direction = .toDevice
                        default: break
                        }
                    }
                    option += 4 + (size + 3) / 4 * 4
                }
                frame = RecordedFrame(
                    timeMicros: time, direction: direction, bytes: Array(buffer[(dataStart - base)..<(dataStart - base + captured)]))
            }
            offset += length
            if let frame {
                framesRead += 1
                return frame
            }
        }
        return nil
    }
}

/// A recording read in passes, each a stream of its frames (``PcapngFrameReader``), so that what reads it
/// holds a few frames at a time however long it is. The first pass (``init(path:)``) checks the file and
/// measures how far its frames stray from time order; ``replay(into:)`` then feeds a ``ReplayEngine`` in
/// time order, as ``ReplayEngine/run(_:)`` does, holding only the frames within that span.
package final class RecordingPasses {
    private enum Source {
        case file(String, wholeBytes: Int)
        case frames([RecordedFrame])
    }
    private let source: Source
    /// The whole frames in the recording (before its cut).
    package let frameCount: Int
    /// The most a frame's time is behind a frame before it in the file, microseconds (0: in time order).
    package let lateness: UInt64
    /// Where the file is cut short, if it is.
    package let truncation: RecordingError?
    /// Frames read in the pass under way.
    package private(set) var framesReadInPass = 0
    /// The passes started, the checking one included.
    package private(set) var passes = 1
    /// The most bytes a pass's reader held at once.
    package private(set) var mostBuffered = 0
    /// The most frames ``replay(into:)`` held back at once, waiting for earlier ones.
    package private(set) var mostHeld = 0

    /// The recording at `path`, read once through to check it.
    ///
    /// - Throws: ``RecordingError`` as ``PcapngReader/framesBeforeAnyCut(path:)`` does: a file that cannot
    ///   be read, is not pcapng, or is cut short before its first whole frame.
    package init(path: String) throws(RecordingError) {
        let reader = try PcapngFrameReader(path: path)
        var count = 0
        var lateness: UInt64 = 0
        var latest: UInt64 = 0
        while let frame = try reader.next() {
            count += 1
            latest = max(latest, frame.timeMicros)
            lateness = max(lateness, latest - frame.timeMicros)
        }
        if let truncation = reader.truncation, count == 0 { throw truncation }
        source = .file(path, wholeBytes: reader.offset)
        frameCount = count
        self.lateness = lateness
        truncation = reader.truncation
        mostBuffered = reader.mostBuffered
    }

    /// Frames already in memory (tests), read as a file's would be.
    package init(frames: [RecordedFrame]) {
        source = .frames(frames)
        frameCount = frames.count
        var lateness: UInt64 = 0
        var latest: UInt64 = 0
        for frame in frames {
            latest = max(latest, frame.timeMicros)
            lateness = max(lateness, latest - frame.timeMicros)
        }
        self.lateness = lateness
        truncation = nil
    }

    /// One more pass: `body` gets each frame in file order.
    ///
    /// - Throws: ``RecordingError`` when the file cannot be read again, or holds other frames than the
    ///   first pass found (it was rewritten or cut meanwhile).
    package func forEachFrame(_ body: (RecordedFrame) -> Void) throws(RecordingError) {
        passes += 1
        framesReadInPass = 0
        switch source {
        case .frames(let frames):
            for frame in frames {
                framesReadInPass += 1
                body(frame)
            }
        case .file(let path, let wholeBytes):
            let reader = try PcapngFrameReader(path: path, stopAt: wholeBytes)
            defer { mostBuffered = max(mostBuffered, reader.mostBuffered) }
            while let frame = try reader.next() {
                framesReadInPass += 1
                body(frame)
            }
            guard reader.framesRead == frameCount else {
                throw RecordingError(
                    description: "\(path) changed while it was read: \(reader.framesRead) whole frames, \(frameCount) before")
            }
        }
    }

    /// One more pass, feeding `engine` every frame in time order (at one time, in file order: what
    /// ``ReplayEngine/run(_:)``'s sort gives), then letting its last deadlines fall due.
    package func replay(into engine: ReplayEngine) throws(RecordingError) {
        struct Pending: Comparable {
            var time: UInt64
            var index: Int
            var frame: RecordedFrame
            static func < (a: Pending, b: Pending) -> Bool { (a.time, a.index) < (b.time, b.index) }
            static func == (a: Pending, b: Pending) -> Bool { (a.time, a.index) == (b.time, b.index) }
        }
        var pending = MinHeap<Pending>()
        var latest: UInt64 = 0
        var index = 0
        let lateness = lateness
        try forEachFrame { frame in
            pending.push(Pending(time: frame.timeMicros, index: index, frame: frame))
            index += 1
            latest = max(latest, frame.timeMicros)
            mostHeld = max(mostHeld, pending.count)
            // No frame still to come is earlier than `latest - lateness`.
            while let first = pending.first, latest - first.time > lateness {
                engine.feed(pending.pop()!.frame)
            }
        }
        while let next = pending.pop() { engine.feed(next.frame) }
        engine.finish()
    }
}

/// A binary min-heap: what is held out of order until its turn.
package struct MinHeap<Element: Comparable> {
    private var items: [Element] = []

    /// An empty heap.
    package init() {}

    /// The least element, or nil.
    package var first: Element? { items.first }
    /// The elements held.
    package var count: Int { items.count }

    /// Adds `element`.
    package mutating func push(_ element: Element) {
        items.append(element)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child] < items[parent] else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the least element, or nil.
    package mutating func pop() -> Element? {
        guard !items.isEmpty else { return nil }
        items.swapAt(0, items.count - 1)
        let least = items.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < items.count, items[left] < items[smallest] { smallest = left }
            if right < items.count, items[right] < items[smallest] { smallest = right }
            if smallest == parent { break }
            items.swapAt(parent, smallest)
            parent = smallest
        }
        return least
    }
}
