import CameraControlTransport
import CameraControlWire
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Which way a recorded frame went.
package enum FrameDirection: String, Sendable {
    /// Host → device (pcapng `outbound`).
    case toDevice = "host→device"
    /// Device → host (pcapng `inbound`).
    case fromDevice = "device→host"
    /// Not known (hex on stdin).
    case unknown = "?"
}

/// One frame of a recording: its wire bytes (COBS, ending in the `0x00` delimiter), when it went and which
/// way.
package struct RecordedFrame: Sendable {
    /// Host time, microseconds since the Unix epoch (pcapng's default resolution).
    package var timeMicros: UInt64
    /// Which way it went.
    package var direction: FrameDirection
    /// The stuffed bytes, delimiter included.
    package var bytes: [UInt8]

    /// A frame of `bytes` that went `direction` at `timeMicros`.
    package init(timeMicros: UInt64, direction: FrameDirection, bytes: [UInt8]) {
        self.timeMicros = timeMicros
        self.direction = direction
        self.bytes = bytes
    }

    /// The packet the frame carries, or why it carries none (a bad check, broken COBS, …).
    package var decoded: Result<Packet, WireError> {
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
package struct RecordingError: Error, CustomStringConvertible {
    /// Why.
    package var description: String
}

/// A pcapng file (the format Wireshark and tshark read) of CameraControl frames: one section, one
/// interface of link type `USER0` (147), and one Enhanced Packet Block per frame with its direction in
/// `epb_flags`, timestamps in microseconds. Every block is written with one `write(2)`, so the file is
/// complete after every frame, whenever the recorder stops. A write that fails (a full disk) closes the
/// file cut back to the frames before it, whole: ``failure`` says why, and later frames are not written.
package final class PcapngWriter: Sendable {
    /// pcapng's `LINKTYPE_USER0`: the link type private use starts at.
    package static let linkType: UInt16 = 147
    /// What is written: the open file, or why it closed early.
    private enum Output {
        /// The descriptor, and the bytes of whole blocks in the file.
        case open(Int32, size: Int)
        case closed
        case failed(RecordingError)
    }
    private let path: String
    private let output: Mutex<Output>
    private let frameCount = Mutex(0)

    /// Creates (or truncates) `path` and writes the section and interface headers.
    ///
    /// - Throws: ``RecordingError`` when the file cannot be created or written ("cannot write PATH: No
    ///   space left on device").
    package init(path: String, interfaceName: String) throws(RecordingError) {
        let descriptor = try BoundedFiles.create(path)
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
        let headers = shb.finished() + idb.finished()
        do {
            try BoundedFiles.write(headers, to: descriptor, path: path)
        } catch {
            _ = Glibc.close(descriptor)
            throw error
        }
        self.path = path
        self.output = Mutex(.open(descriptor, size: headers.count))
    }

    /// Frames written so far.
    package var count: Int { frameCount.withLock { $0 } }

    /// Why the file closed before ``close()`` (a write failed), or nil.
    package var failure: RecordingError? {
        output.withLock { output in
            if case .failed(let error) = output { return error }
            return nil
        }
    }

    /// Appends one frame (does nothing once closed or failed). Returns false when this write failed: the
    /// file is closed, ``failure`` says why.
    @discardableResult
    package func write(_ frame: RecordedFrame) -> Bool {
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
        let block = epb.finished()
        let written = output.withLock { output -> Bool? in
            guard case .open(let descriptor, let size) = output else { return nil }
            do throws(RecordingError) {
                try BoundedFiles.write(block, to: descriptor, path: path)
                output = .open(descriptor, size: size + block.count)
                return true
            } catch {
                // Part of the block may have gone in before the failure: the file ends at the last whole one.
                _ = ftruncate(descriptor, off_t(size))
                _ = Glibc.close(descriptor)
                output = .failed(error)
                return false
            }
        }
        if written == true { frameCount.withLock { $0 += 1 } }
        return written != false
    }

    /// Closes the file (a failed one stays failed).
    package func close() {
        output.withLock { output in
            guard case .open(let descriptor, _) = output else { return }
            _ = Glibc.close(descriptor)
            output = .closed
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
/// are whole frames on a little-endian section). A file cut short (a recorder killed, a copy
/// interrupted) keeps its whole frames and says where the cut is.
package enum PcapngReader {
    /// The largest recording read (256 MiB: hours of a session with raw samples).
    package static let maxFileBytes = 256 << 20

    /// What a file holds: its whole frames, in file order, and why reading stopped before the end of
    /// the file, if it did.
    package struct Contents {
        /// The frames of the whole blocks before the end or the cut.
        package var frames: [RecordedFrame]
        /// Where and how the file is cut short or broken, when it is.
        package var truncation: RecordingError?
    }

    /// The frames of the file at `path`, in file order.
    ///
    /// - Throws: ``RecordingError`` when the file cannot be read, is not pcapng, or is cut short.
    package static func frames(path: String) throws -> [RecordedFrame] {
        let contents = try contents(path: path)
        if let truncation = contents.truncation { throw truncation }
        return contents.frames
    }

    /// The frames of a pcapng file's bytes (cut short: an error).
    package static func frames(bytes: [UInt8], name: String) throws -> [RecordedFrame] {
        let contents = try contents(bytes: bytes, name: name)
        if let truncation = contents.truncation { throw truncation }
        return contents.frames
    }

    /// The whole frames of the file at `path` and, when it is cut short after at least one, where: what a
    /// tool uses before it reports the cut (a recorder killed mid-block leaves a file worth reading).
    ///
    /// - Throws: ``RecordingError`` as ``contents(path:)``, and the cut when no whole frame comes before it.
    package static func framesBeforeAnyCut(path: String) throws(RecordingError) -> Contents {
        let contents = try contents(path: path)
        if let truncation = contents.truncation, contents.frames.isEmpty { throw truncation }
        return contents
    }

    /// The file at `path` read through ``maxFileBytes``: its whole frames and its truncation.
    ///
    /// - Throws: ``RecordingError`` when the file cannot be read, is too large or is not pcapng.
    package static func contents(path: String) throws(RecordingError) -> Contents {
        try contents(bytes: BoundedFiles.read(path, maxBytes: maxFileBytes, what: "a recording"), name: path)
    }

    /// The whole frames of a pcapng file's bytes and, when the bytes end inside a block or a block is
    /// malformed, why reading stopped there.
    package static func contents(bytes: [UInt8], name: String) throws(RecordingError) -> Contents {
        let reader = PcapngFrameReader(bytes: bytes, name: name)
        var frames: [RecordedFrame] = []
        while let frame = try reader.next() { frames.append(frame) }
        return Contents(frames: frames, truncation: reader.truncation)
    }
}

extension RawSampleBatch {
    /// The batch's samples, from its 4-byte records or its delta coding (v1.2; `decodedSamples`).
    package var records: [(force: UInt32, position: UInt32, touch: Bool)] {
        decodedSamples.map { (UInt32($0.forceMillinewtons), UInt32($0.position), $0.isTouched) }
    }
}
