import CameraControlTransport
import CameraControlWire
import Foundation
import Synchronization

/// Which way a recorded frame went.
enum FrameDirection: String, Sendable {
    /// Host → device (pcapng `outbound`).
    case toDevice = "host→device"
    /// Device → host (pcapng `inbound`).
    case fromDevice = "device→host"
    /// Not known (hex on stdin).
    case unknown = "?"
}

/// One frame of a recording: its wire bytes (COBS, ending in the `0x00` delimiter), when it went and which
/// way.
struct RecordedFrame: Sendable {
    /// Host time, microseconds since the Unix epoch (pcapng's default resolution).
    var timeMicros: UInt64
    /// Which way it went.
    var direction: FrameDirection
    /// The stuffed bytes, delimiter included.
    var bytes: [UInt8]

    /// The packet the frame carries, or why it carries none (a bad check, broken COBS, …).
    var decoded: Result<Packet, WireError> {
        var body = bytes[...]
        if body.last == WireFormat.delimiter { body = body.dropLast() }
        do throws(WireError) {
            return .success(try PacketDecoder.decode(unstuffed: try COBS.decode(body)))
        } catch {
            return .failure(error)
        }
    }
}

/// What went wrong reading or writing a recording.
struct RecordingError: Error, CustomStringConvertible {
    /// Why.
    var description: String
}

/// A pcapng file (the format Wireshark and tshark read) of CameraControl frames: one section, one
/// interface of link type `USER0` (147), and one Enhanced Packet Block per frame with its direction in
/// `epb_flags`, timestamps in microseconds. Every block is written with one `write(2)`, so the file is
/// complete after every frame, whenever the recorder stops.
final class PcapngWriter: Sendable {
    /// pcapng's `LINKTYPE_USER0`: the link type private use starts at.
    static let linkType: UInt16 = 147
    private let handle: Mutex<FileHandle?>
    private let frameCount = Mutex(0)

    /// Creates (or truncates) `path` and writes the section and interface headers.
    init(path: String, interfaceName: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw RecordingError(description: "cannot create \(path)")
        }
        guard let handle = FileHandle(forWritingAtPath: path) else {
            throw RecordingError(description: "cannot open \(path) for writing")
        }
        var shb = Block(type: 0x0A0D_0D0A)
        shb.u32(0x1A2B_3C4D)
        shb.u16(1)
        shb.u16(0)
        shb.u64(UInt64.max)  // section length: not known
        shb.option(4, Array("camctl".utf8))  // shb_userappl
        shb.endOptions()
        var idb = Block(type: 1)
        idb.u16(Self.linkType)
        idb.u16(0)
        idb.u32(0)  // no snap length
        idb.option(2, Array(interfaceName.utf8))  // if_name
        idb.option(9, [6])  // if_tsresol: microseconds
        idb.endOptions()
        handle.write(Data(shb.finished() + idb.finished()))
        self.handle = Mutex(handle)
    }

    /// Frames written so far.
    var count: Int { frameCount.withLock { $0 } }

    /// Appends one frame (does nothing once closed).
    func write(_ frame: RecordedFrame) {
        var epb = Block(type: 6)
        epb.u32(0)
        epb.u32(UInt32(truncatingIfNeeded: frame.timeMicros >> 32))
        epb.u32(UInt32(truncatingIfNeeded: frame.timeMicros))
        epb.u32(UInt32(frame.bytes.count))
        epb.u32(UInt32(frame.bytes.count))
        epb.bytes(frame.bytes)
        let flags: UInt32 =
            switch frame.direction {
            case .fromDevice: 1
            case .toDevice: 2
            case .unknown: 0
            }
        var flagBytes = Block(type: 0)
        flagBytes.u32(flags)
        epb.option(2, flagBytes.body)  // epb_flags: direction
        epb.endOptions()
        let data = Data(epb.finished())
        handle.withLock { $0?.write(data) }
        frameCount.withLock { $0 += 1 }
    }

    /// Closes the file.
    func close() {
        handle.withLock { handle in
            try? handle?.close()
            handle = nil
        }
    }

    /// A pcapng block being built: type, length, body, length.
    private struct Block {
        var type: UInt32
        var body: [UInt8] = []

        mutating func u16(_ value: UInt16) { body += [UInt8(value & 0xFF), UInt8(value >> 8)] }
        mutating func u32(_ value: UInt32) { for shift in stride(from: 0, to: 32, by: 8) { body.append(UInt8((value >> shift) & 0xFF)) } }
        mutating func u64(_ value: UInt64) {
            u32(UInt32(truncatingIfNeeded: value))
            u32(UInt32(truncatingIfNeeded: value >> 32))
        }
        mutating func bytes(_ bytes: [UInt8]) {
            body += bytes
            while body.count % 4 != 0 { body.append(0) }
        }
        mutating func option(_ code: UInt16, _ value: [UInt8]) {
            u16(code)
            u16(UInt16(value.count))
            bytes(value)
        }
        mutating func endOptions() { u32(0) }

        func finished() -> [UInt8] {
            var block = Block(type: 0)
            let length = UInt32(12 + body.count)
            block.u32(type)
            block.u32(length)
            block.body += body
            block.u32(length)
            return block.body
        }
    }
}

/// Reads the frames of a pcapng file written by ``PcapngWriter`` (or by any tool, as long as the packets
/// are whole frames on a little-endian section).
enum PcapngReader {
    /// The frames of the file at `path`, in file order.
    static func frames(path: String) throws -> [RecordedFrame] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw RecordingError(description: "cannot read \(path)")
        }
        return try frames(bytes: [UInt8](data), name: path)
    }

    /// The frames of a pcapng file's bytes.
    static func frames(bytes: [UInt8], name: String) throws -> [RecordedFrame] {
        func u32(_ at: Int) -> UInt32 {
            UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
        }
        func u16(_ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
        guard bytes.count >= 28, u32(0) == 0x0A0D_0D0A, u32(8) == 0x1A2B_3C4D else {
            throw RecordingError(description: "\(name) is not a little-endian pcapng file")
        }
        var frames: [RecordedFrame] = []
        var offset = 0
        while offset + 12 <= bytes.count {
            let type = u32(offset)
            let length = Int(u32(offset + 4))
            guard length >= 12, length % 4 == 0, offset + length <= bytes.count else {
                throw RecordingError(description: "\(name): a block at byte \(offset) is cut short")
            }
            if type == 6, length >= 32 {
                let time = UInt64(u32(offset + 12)) << 32 | UInt64(u32(offset + 16))
                let captured = Int(u32(offset + 20))
                let dataStart = offset + 28
                guard dataStart + captured <= offset + length - 4 else {
                    throw RecordingError(description: "\(name): a packet at byte \(offset) overruns its block")
                }
                var direction = FrameDirection.unknown
                var option = dataStart + (captured + 3) / 4 * 4
                while option + 4 <= offset + length - 4 {
                    let code = u16(option)
                    let size = Int(u16(option + 2))
                    if code == 0 { break }
                    if code == 2, size == 4, option + 8 <= bytes.count {
                        switch u32(option + 4) & 3 {
                        case 1: direction = .fromDevice
                        case 2: direction = .toDevice
                        default: break
                        }
                    }
                    option += 4 + (size + 3) / 4 * 4
                }
                frames.append(
                    RecordedFrame(timeMicros: time, direction: direction, bytes: Array(bytes[dataStart..<dataStart + captured])))
            }
            offset += length
        }
        return frames
    }
}

/// A transport that hands every byte through and records each frame, both ways, with the host time
/// it went (the frame is timestamped when its delimiter passes).
final class RecordingTransport: ByteTransport {
    private let inner: any ByteTransport
    private let writer: PcapngWriter
    private let partial = Mutex<(toDevice: [UInt8], fromDevice: [UInt8])>(([], []))

    /// Wraps `inner`, writing its frames to `writer`.
    init(_ inner: any ByteTransport, writer: PcapngWriter) {
        self.inner = inner
        self.writer = writer
    }

    var name: String { inner.name }

    func send(_ bytes: [UInt8]) async throws(TransportError) {
        // Recorded as it leaves, before the answer can arrive (and be recorded first).
        record(bytes, .toDevice)
        try await inner.send(bytes)
    }

    func receive() async throws(TransportError) -> [UInt8] {
        let bytes = try await inner.receive()
        record(bytes, .fromDevice)
        return bytes
    }

    func close() { inner.close() }

    private func record(_ bytes: [UInt8], _ direction: FrameDirection) {
        let time = Self.wallMicros()
        let frames = partial.withLock { buffers -> [[UInt8]] in
            var buffer = direction == .toDevice ? buffers.toDevice : buffers.fromDevice
            var done: [[UInt8]] = []
            for byte in bytes {
                if byte == WireFormat.delimiter {
                    if !buffer.isEmpty { done.append(buffer + [byte]) }  // a lone delimiter is no frame
                    buffer.removeAll(keepingCapacity: true)
                } else if buffer.count < 2 * WireFormat.maxFrameBytes {
                    buffer.append(byte)
                }
            }
            if direction == .toDevice { buffers.toDevice = buffer } else { buffers.fromDevice = buffer }
            return done
        }
        for frame in frames { writer.write(RecordedFrame(timeMicros: time, direction: direction, bytes: frame)) }
    }

    /// Microseconds since the Unix epoch (what pcapng timestamps are).
    static func wallMicros() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return UInt64(spec.tv_sec) * 1_000_000 + UInt64(spec.tv_nsec) / 1000
    }
}

/// Hex text (`03 08 05 01 03 f3 ea 00`, any spacing, `0x` prefixes allowed) as bytes.
func bytesFromHex(_ text: String) throws -> [UInt8] {
    var bytes: [UInt8] = []
    var digits = ""
    for token in text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "," || $0 == "\r" }) {
        var token = Substring(token)
        if token.hasPrefix("0x") || token.hasPrefix("0X") { token = token.dropFirst(2) }
        digits += token
    }
    guard digits.count % 2 == 0 else { throw RecordingError(description: "odd number of hex digits") }
    var index = digits.startIndex
    while index < digits.endIndex {
        let next = digits.index(index, offsetBy: 2)
        guard let byte = UInt8(digits[index..<next], radix: 16) else {
            throw RecordingError(description: "'\(digits[index..<next])' is not hex")
        }
        bytes.append(byte)
        index = next
    }
    return bytes
}

extension RawSampleBatch {
    /// The batch's samples, from its 4-byte records or its delta coding (v1.2; `decodedSamples`).
    var records: [(force: UInt32, position: UInt32, touch: Bool)] {
        decodedSamples.map { (UInt32($0.forceMillinewtons), UInt32($0.position), $0.isTouched) }
    }
}
