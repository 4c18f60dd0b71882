import CameraControlWire
import Foundation
import Testing

@testable import CameraControlTools

/// The pcapng writer and reader, and every way a recording can be cut short or unwritable.
@Suite struct RecordingTests {
    /// Three frames both ways, written by ``PcapngWriter``: the file's bytes and where each block ends.
    static func recording() throws -> (bytes: [UInt8], frames: [RecordedFrame]) {
        let folder = NSTemporaryDirectory() + "camctl-tools-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/three.pcapng"
        let writer = try PcapngWriter(path: path, interfaceName: "test")
        let frames = [
            RecordedFrame(timeMicros: 1_000, direction: .toDevice, bytes: [0x03, 0x08, 0x05, 0x01, 0x03, 0xF3, 0xEA, 0x00]),
            RecordedFrame(timeMicros: 2_000, direction: .fromDevice, bytes: [0x02, 0x01, 0x00]),
            RecordedFrame(timeMicros: 3_500, direction: .fromDevice, bytes: Array(repeating: 0x05, count: 13) + [0x00]),
        ]
        for frame in frames { writer.write(frame) }
        #expect(writer.count == 3)
        writer.close()
        return (try BoundedFiles.read(path, maxBytes: 1 << 20, what: "a recording"), frames)
    }

    @Test("a whole recording reads back frame for frame: time, direction, bytes")
    func roundTrip() throws {
        let (bytes, frames) = try Self.recording()
        let contents = try PcapngReader.contents(bytes: bytes, name: "three")
        #expect(contents.truncation == nil)
        #expect(contents.frames.map(\.bytes) == frames.map(\.bytes))
        #expect(contents.frames.map(\.timeMicros) == frames.map(\.timeMicros))
        #expect(contents.frames.map(\.direction) == frames.map(\.direction))
    }

    @Test("a recording read in passes: each pass gives the first's frames; one grown meanwhile reads as it was, one cut is an error")
    func readInPasses() throws {
        let (bytes, frames) = try Self.recording()
        let folder = NSTemporaryDirectory() + "camctl-tools-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/three.pcapng"
        try BoundedFiles.write(bytes, to: path)
        let passes = try RecordingPasses(path: path)
        #expect(passes.frameCount == 3 && passes.truncation == nil && passes.lateness == 0)
        var read: [RecordedFrame] = []
        try passes.forEachFrame { read.append($0) }
        #expect(read.map(\.bytes) == frames.map(\.bytes) && read.map(\.timeMicros) == frames.map(\.timeMicros))
        // A recorder still writing: the frames after the first pass are not read.
        try BoundedFiles.write(bytes + Array(bytes[28...]), to: path)
        read = []
        try passes.forEachFrame { read.append($0) }
        #expect(read.count == 3)
        // Cut (rewritten) between passes: fewer frames is an error, not a shorter recording.
        try BoundedFiles.write(Array(bytes[..<(bytes.count - 4)]), to: path)
        let error = try #require(throws: RecordingError.self) { try passes.forEachFrame { _ in } }
        #expect(error.description.contains("changed while it was read: 2 whole frames, 3 before"), "\(error)")
    }

    /// Cut at every byte: within the section header it is an error; anywhere later (the first 8 bytes
    /// of a block included) the whole frames before the cut are kept and the cut is reported.
    @Test("a recording cut at any byte: the whole frames before the cut, then the truncation")
    func cutAtEveryByte() throws {
        let (bytes, frames) = try Self.recording()
        // Where each block ends: the section and interface headers, then one block per frame.
        var ends: [Int] = []
        var offset = 0
        while offset < bytes.count {
            let length = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8
            offset += length
            ends.append(offset)
        }
        #expect(ends.count == 5)
        for cut in 1..<bytes.count {
            let prefix = Array(bytes[..<cut])
            guard cut >= ends[0] else {
                #expect(throws: RecordingError.self, "cut at \(cut), inside the section header") {
                    try PcapngReader.contents(bytes: prefix, name: "cut")
                }
                continue
            }
            let contents = try PcapngReader.contents(bytes: prefix, name: "cut")
            let whole = ends.dropFirst(2).filter { $0 <= cut }.count
            #expect(contents.frames.map(\.bytes) == frames.prefix(whole).map(\.bytes), "cut at \(cut)")
            if ends.contains(cut) {
                #expect(contents.truncation == nil, "cut at \(cut), between blocks")
            } else {
                let truncation = try #require(contents.truncation, "cut at \(cut) not reported")
                #expect(truncation.description.contains("cut short"), "\(truncation)")
                #expect(truncation.description.contains("after \(whole) whole frames"), "\(truncation)")
                #expect(throws: RecordingError.self) { try PcapngReader.frames(bytes: prefix, name: "cut") }
            }
        }
    }

    @Test("not pcapng, or empty: one sentence saying so")
    func notPcapng() throws {
        #expect(throws: RecordingError.self) { try PcapngReader.contents(bytes: [], name: "empty") }
        #expect(throws: RecordingError.self) { try PcapngReader.contents(bytes: Array("hello, world, not pcapng".utf8), name: "text") }
        #expect(throws: RecordingError.self) { try PcapngReader.contents(bytes: Array(repeating: 0, count: 64), name: "zeros") }
    }

    @Test("a recording that cannot be created says why, in one sentence")
    func writerErrors() throws {
        let directory = NSTemporaryDirectory()
        let error = try #require(throws: RecordingError.self) { try PcapngWriter(path: directory, interfaceName: "x") }
        #expect(error.description == "cannot create \(directory): Is a directory")
        let missing = try #require(throws: RecordingError.self) {
            try PcapngWriter(path: "/nonexistent-camctl/x.pcapng", interfaceName: "x")
        }
        #expect(missing.description == "cannot create /nonexistent-camctl/x.pcapng: No such file or directory")
    }

    @Test("a file read through a bound: /dev/zero is refused once past the bound")
    func boundedRead() throws {
        let error = try #require(throws: RecordingError.self) { try BoundedFiles.read("/dev/zero", maxBytes: 1 << 20, what: "a recording") }
        #expect(error.description.contains("larger than 1 MiB"))
        let missing = try #require(throws: RecordingError.self) { try BoundedFiles.read("/nonexistent-camctl", maxBytes: 1, what: "x") }
        #expect(missing.description == "cannot read /nonexistent-camctl: No such file or directory")
    }

    @Test("plot: an output path that cannot be written is one sentence with the reason")
    func plotOutputErrors() throws {
        let (bytes, _) = try Self.recording()
        let folder = NSTemporaryDirectory() + "camctl-tools-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let input = folder + "/in.pcapng"
        try BoundedFiles.write(bytes, to: input)
        for output in [folder + "/missing/trace.svg", folder + "/missing/trace.png"] {
            let error = try #require(throws: RecordingError.self) {
                try Plot.run(path: input, raw: false, output: output, width: 400, height: 300, json: false)
            }
            #expect(error.description == "cannot create \(output): No such file or directory")
        }
        try FileManager.default.createDirectory(atPath: folder + "/dir.svg", withIntermediateDirectories: true)
        let directory = try #require(throws: RecordingError.self) {
            try Plot.run(path: input, raw: false, output: folder + "/dir.svg", width: 400, height: 300, json: false)
        }
        #expect(directory.description == "cannot create \(folder)/dir.svg: Is a directory")
        try Plot.run(path: input, raw: false, output: folder + "/good.svg", width: 400, height: 300, json: false)
        let svg = try BoundedFiles.read(folder + "/good.svg", maxBytes: 1 << 20, what: "a plot")
        #expect(String(decoding: svg, as: UTF8.self).hasPrefix("<svg") || String(decoding: svg, as: UTF8.self).hasPrefix("<?xml"))
    }
}
