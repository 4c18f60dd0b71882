import CameraControlWire
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Files read through a bound and written with the reason of a failure in one sentence: what the tools
/// read never grows without limit, and what they cannot write is said plainly (`cannot write x.svg: No
/// such file or directory`), not as a Foundation error dump.
package enum BoundedFiles {
    /// The bytes of the file at `path`, read in chunks; more than `maxBytes` is refused as soon as it is
    /// read (a device such as `/dev/zero` included).
    package static func read(_ path: String, maxBytes: Int, what: String) throws(RecordingError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw RecordingError(description: "cannot read \(path): \(reason(errno))") }
        defer { _ = close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw RecordingError(description: "cannot read \(path): \(reason(errno))")
            }
            if count == 0 { return bytes }
            guard bytes.count + count <= maxBytes else {
                throw RecordingError(
                    description: "\(path) is larger than \(maxBytes >> 20) MiB, more than \(what) may be; not read further")
            }
            bytes.append(contentsOf: chunk[..<count])
        }
    }

    /// Whether `first` and `second` name one file (the same device and inode: through a symlink, a hard
    /// link or `./`); false when either does not exist.
    package static func isSameFile(_ first: String, _ second: String) -> Bool {
        var a = stat()
        var b = stat()
        guard stat(first, &a) == 0, stat(second, &b) == 0 else { return false }
        return a.st_dev == b.st_dev && a.st_ino == b.st_ino
    }

    /// Creates (or truncates) `path` for writing; the descriptor is the caller's to close.
    package static func create(_ path: String) throws(RecordingError) -> Int32 {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw RecordingError(description: "cannot create \(path): \(reason(errno))") }
        return descriptor
    }

    /// Writes `bytes` to a new (or truncated) file at `path`.
    package static func write(_ bytes: [UInt8], to path: String) throws(RecordingError) {
        let descriptor = try create(path)
        defer { _ = close(descriptor) }
        try write(bytes, to: descriptor, path: path)
    }

    /// Writes all of `bytes` to `descriptor` (the file at `path`, named in the error), however many
    /// `write(2)`s it takes.
    package static func write(_ bytes: [UInt8], to descriptor: Int32, path: String) throws(RecordingError) {
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw RecordingError(description: "cannot write \(path): \(reason(errno))")
            }
            written += count
        }
    }

    /// `errno`'s text (`No such file or directory`).
    package static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }
}

/// Hex text (`03 08 05 01 03 f3 ea 00`, any spacing, commas, `0x` prefixes) read chunk by chunk and cut
/// into frames at each `0x00`: memory stays flat whatever the input's length, the first byte that is
/// neither a hex digit nor a separator stops the reading with its offset, and more than
/// ``maxInputBytes`` is refused.
package struct HexFrameReader {
    /// The most hex text read (16 MiB: some 5 million bytes of frames).
    package static let maxInputBytes = 16 << 20

    /// The most input bytes this reader takes.
    package let maxInputBytes: Int
    /// The input bytes read so far.
    package private(set) var bytesRead = 0
    /// The frames completed so far.
    package private(set) var framesRead = 0
    private var frame: [UInt8] = []
    private var highNibble: UInt8?
    /// The previous input byte, and the one before it (a `0x` prefix starts a token).
    private var previous: UInt8 = UInt8(ascii: " ")
    private var beforePrevious: UInt8 = UInt8(ascii: " ")
    /// The first four input bytes, the first in the high byte (a pcapng file begins 0A 0D 0D 0A: four
    /// separators to this reader).
    private var opening: UInt32 = 0

    /// A reader at the start of its input, taking at most `maxInputBytes`.
    package init(maxInputBytes: Int = Self.maxInputBytes) { self.maxInputBytes = maxInputBytes }

    /// The frames that `chunk` completes.
    package mutating func feed(_ chunk: some Sequence<UInt8>) throws(RecordingError) -> [RecordedFrame] {
        var frames: [RecordedFrame] = []
        for byte in chunk {
            guard bytesRead < maxInputBytes else {
                throw RecordingError(
                    description: "more than \(maxInputBytes) bytes of hex text (\(framesRead + frames.count) frames); not read further")
            }
            defer {
                beforePrevious = previous
                previous = byte
                if bytesRead < 4 { opening = opening << 8 | UInt32(byte) }
                bytesRead += 1
            }
            if Self.isSeparator(byte) { continue }
            if byte == UInt8(ascii: "x") || byte == UInt8(ascii: "X"), previous == UInt8(ascii: "0"), Self.isSeparator(beforePrevious),
                let high = highNibble, high == 0
            {
                highNibble = nil  // the `0` of a `0x` prefix
                continue
            }
            guard let value = Self.nibble(byte) else {
                let shown = (0x21...0x7E).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : String(format: "0x%02X", byte)
                // A recording piped in: its Section Header Block's type is what the reader saw first.
                let recording =
                    bytesRead == 4 && opening == 0x0A0D_0D0A ? "; this is a pcapng recording: give its path (decode FILE.pcapng)" : ""
                throw RecordingError(
                    description:
                        "byte \(bytesRead) of the hex text is \(shown), not a hex digit or separator "
                        + "(\(framesRead + frames.count) frames before it)\(recording)")
            }
            guard let high = highNibble else {
                highNibble = value
                continue
            }
            highNibble = nil
            let decoded = high << 4 | value
            frame.append(decoded)
            if decoded == WireFormat.delimiter {
                if frame.count > 1 { frames.append(RecordedFrame(timeMicros: 0, direction: .unknown, bytes: frame)) }
                frame.removeAll(keepingCapacity: true)
            }
        }
        framesRead += frames.count
        return frames
    }

    /// The frame left without its delimiter at the end of the input, if any.
    package mutating func finish() throws(RecordingError) -> [RecordedFrame] {
        guard highNibble == nil else { throw RecordingError(description: "odd number of hex digits") }
        guard !frame.isEmpty else { return [] }
        defer { frame = [] }
        framesRead += 1
        return [RecordedFrame(timeMicros: 0, direction: .unknown, bytes: frame)]
    }

    private static func isSeparator(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == 10 || byte == 9 || byte == 13 || byte == UInt8(ascii: ",")
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
