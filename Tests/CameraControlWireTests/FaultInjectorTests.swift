import Testing

@testable import CameraControlWire

@Suite("LinkFaults and FaultInjector")
struct FaultInjectorTests {
    static let frames: [[UInt8]] = (0..<400).map { index in
        (try? PacketEncoder.encode(Packet(type: .heartbeat, sequence: UInt16(index), callID: 0))) ?? []
    }
    static var stream: [UInt8] { frames.flatMap { $0 } }

    @Test("a spec parses into its fields and prints back to an equal value")
    func specRoundTrip() throws {
        let faults = try LinkFaults(
            spec: "corrupt=1%,drop=0.001,drop-frame=2%,dup=0.5%,reorder=1%,garbage=3%:16,stall=1%:20ms,baud=1.05,unplug=2s:300ms,seed=9")
        #expect(faults.corruptRate == 0.01 && faults.dropByteRate == 0.001 && faults.dropFrameRate == 0.02)
        #expect(faults.garbageMaxBytes == 16 && faults.stallMicros == 20_000 && faults.baudRatio == 1.05)
        #expect(faults.unplugEveryMicros == 2_000_000 && faults.unplugForMicros == 300_000 && faults.seed == 9)
        #expect(try LinkFaults(spec: faults.description) == faults)
        #expect(try LinkFaults(spec: "").isEmpty)
    }

    @Test("bad specs are refused with their code", arguments: ["bogus=1", "corrupt=2", "corrupt", "baud=9", "stall=1%:x"])
    func badSpecs(spec: String) {
        #expect(throws: LinkFaults.ParseError.self) { try LinkFaults(spec: spec) }
    }

    @Test("a misspelt item is unknown with or without a value; a known one without a value needs one")
    func unknownItemWithoutAValue() {
        for (spec, code, message) in [
            ("unplg", LinkFaults.ParseError.Code.unknownItem, "unknown item 'unplg'"),
            ("corupt=1%", .unknownItem, "unknown item 'corupt'"), ("dup", .badValue, "'dup' needs a value"),
        ] {
            #expect(throws: LinkFaults.ParseError(code: code, message: message)) { try LinkFaults(spec: spec) }
        }
    }

    @Test(
        "a bad value says the item's form",
        arguments: [
            ("stall=5s:200ms", "want stall=R[:D], R a rate (1%, 0.01) and D a duration above 0 (200ms)"),
            ("stall=10%:0", "want stall=R[:D]"),
            ("garbage=1%:0", "want garbage=R[:N]"), ("corrupt=2", "want corrupt=R, a rate"), ("baud=3", "want baud=X, a ratio 0.5…2"),
        ])
    func badValueSaysTheForm(spec: String, form: String) {
        #expect {
            try LinkFaults(spec: spec)
        } throws: { error in
            (error as? LinkFaults.ParseError).map { $0.message.hasPrefix("'\(spec)': bad value; \(form)") } ?? false
        }
    }

    @Test("no faults: every byte passes unchanged, in order")
    func transparent() {
        var injector = FaultInjector(faults: LinkFaults())
        injector.feed(Self.stream, atMicros: 0)
        #expect(injector.take(atMicros: 0) == Self.stream)
        #expect(injector.pendingByteCount == 0)
    }

    /// A long frame on a slow line arrives over its line time (617 bytes, 0.64 s at 9600 baud): held to its
    /// delimiter by a relay, it reached the host whole after the host had seen no byte of it for the dead
    /// timeout, and the host ended the link (§8). Only faults that need a whole frame hold one (dup, reorder),
    /// and a baud mismatch, whose damage must not depend on how reads split a frame; drop, garbage and
    /// stall are decided at its first byte.
    @Test(
        "unless a fault needs the whole frame, the bytes of a frame still arriving pass as they come",
        arguments: ["", "corrupt=1%", "drop-frame=1%", "garbage=1%", "dup=1%", "reorder=1%", "baud=1.05"])
    func bytesPassBeforeTheDelimiter(spec: String) throws {
        let faults = try LinkFaults(spec: spec)
        var injector = FaultInjector(faults: faults)
        let frame = Self.frames[0]
        injector.feed(Array(frame.dropLast()), atMicros: 0)
        let early = injector.take(atMicros: 0)
        #expect(early.count == (faults.needsWholeFrames ? 0 : frame.count - 1))
        injector.feed([0], atMicros: 1)
        _ = injector.take(atMicros: 1)
        #expect(injector.counts.frames == 1)
    }

    /// Decided at a frame's first byte, drop, garbage and stall give the same bytes however the reads split
    /// the frames, and a dropped frame's bytes never pass, not even those before its delimiter.
    @Test("streamed frame faults: the same output for any split of the input; a dropped frame leaves nothing")
    func streamedFrameFaultsIgnoreTheSplit() throws {
        let faults = try LinkFaults(spec: "drop-frame=10%,garbage=10%:8,stall=5%:1ms,corrupt=1%,seed=3")
        #expect(!faults.needsWholeFrames)
        func run(chunk: Int) -> ([UInt8], FaultInjector.Counts, [FaultInjector.Record]) {
            var injector = FaultInjector(faults: faults, keepsRecords: true)
            var out: [UInt8] = []
            var now: UInt64 = 0
            var start = 0
            let stream = Self.stream
            while start < stream.count {
                injector.feed(Array(stream[start..<min(start + chunk, stream.count)]), atMicros: now)
                out += injector.take(atMicros: now)
                start += chunk
                now += 100
            }
            out += injector.take(atMicros: now + 10_000_000)
            return (out, injector.counts, injector.takeRecords())
        }
        let whole = run(chunk: Self.stream.count)
        #expect(whole.1.frames == Self.frames.count)
        #expect(whole.1.droppedFrames > 0 && whole.1.garbageBursts > 0 && whole.1.stalls > 0)
        func described(_ records: [FaultInjector.Record]) -> [String] { records.map(\.description) }
        #expect(described(whole.2).contains { $0.hasPrefix("corrupt byte ") })
        for chunk in [1, 3, 7, 64] {
            let split = run(chunk: chunk)
            #expect(split.0 == whole.0, "chunks of \(chunk)")
            #expect(split.1 == whole.1, "chunks of \(chunk)")
            #expect(described(split.2) == described(whole.2), "the same faults recorded: chunks of \(chunk)")
        }
        // A stall decided at the first byte stops the line once the frame has passed: the frame completes
        // late, as when it was held whole.
        var stalling = FaultInjector(faults: try LinkFaults(spec: "stall=100%:30ms"))
        let frame = Self.frames[0]
        stalling.feed(Array(frame.dropLast()), atMicros: 0)
        #expect(stalling.take(atMicros: 0) == Array(frame.dropLast()))
        stalling.feed([0], atMicros: 1_000)
        #expect(stalling.take(atMicros: 1_000).isEmpty)
        #expect(stalling.take(atMicros: 31_000) == [0])
        // A frame without a delimiter ends after 4 KiB: a dropped one takes no more.
        var endless = FaultInjector(faults: try LinkFaults(spec: "drop-frame=100%"))
        endless.feed([UInt8](repeating: 1, count: 5000), atMicros: 0)
        #expect(endless.counts.frames == 2 && endless.counts.droppedFrames == 2)
        // Without garbage or corruption, the output is exactly the frames not dropped.
        let dropping = try LinkFaults(spec: "drop-frame=20%,seed=5")
        var injector = FaultInjector(faults: dropping, keepsRecords: true)
        var out: [UInt8] = []
        for byte in Self.stream {
            injector.feed([byte], atMicros: 0)
            out += injector.take(atMicros: 0)
        }
        let dropped = Set(
            injector.takeRecords().filter { $0.kind == "drop-frame" }
                .compactMap { Int($0.detail.split(separator: " ")[1]) })
        #expect(!dropped.isEmpty)
        let kept = Self.frames.enumerated().filter { !dropped.contains($0.offset + 1) }.flatMap { $0.element }
        #expect(out == kept)
    }

    @Test("a matched baud rate re-samples to the same bytes; a 10 % mismatch damages them")
    func baud() {
        let bytes = Self.stream
        #expect(FaultInjector.uartResample(bytes, ratio: 1) == bytes)
        #expect(FaultInjector.uartResample(bytes, ratio: 1.10) != bytes)
    }

    @Test("each fault happens at about its rate, is counted, and the same seed gives the same bytes")
    func ratesAndDeterminism() throws {
        let faults = try LinkFaults(spec: "drop-frame=10%,dup=10%,garbage=10%:8,corrupt=1%,seed=4")
        func run() -> ([UInt8], FaultInjector.Counts) {
            var injector = FaultInjector(faults: faults)
            injector.feed(Self.stream, atMicros: 0)
            return (injector.take(atMicros: 0), injector.counts)
        }
        let (out, counts) = run()
        #expect(run().0 == out, "deterministic")
        #expect(counts.frames == Self.frames.count)
        #expect((20...60).contains(counts.droppedFrames))
        #expect((20...60).contains(counts.duplicatedFrames))
        #expect((20...60).contains(counts.garbageBursts))
        #expect(counts.corruptedBytes > 0)
        var decoder = FrameDecoder()
        decoder.append(out)
        var packets = 0
        while let output = decoder.next() { if case .packet = output { packets += 1 } }
        #expect(packets < Self.frames.count + counts.duplicatedFrames, "faults destroyed frames")
        #expect(packets > Self.frames.count / 2, "most frames still decode")
    }

    @Test("a stall holds everything until it ends; a reordered frame leaves after the next one")
    func stallAndReorder() throws {
        var stalling = FaultInjector(faults: try LinkFaults(spec: "stall=100%:30ms"))
        stalling.feed(Self.frames[0], atMicros: 1_000)
        #expect(stalling.take(atMicros: 1_000).isEmpty)
        #expect(stalling.nextDueMicros == 31_000)
        #expect(stalling.take(atMicros: 31_000) == Self.frames[0])

        var reordering = FaultInjector(faults: try LinkFaults(spec: "reorder=100%"))
        reordering.feed(Self.frames[0], atMicros: 0)
        #expect(reordering.take(atMicros: 0).isEmpty)
        reordering.feed(Self.frames[1], atMicros: 1)
        // The next frame goes first, the held one right after it.
        #expect(reordering.take(atMicros: 1) == Self.frames[1] + Self.frames[0])
        // Alone, a held frame leaves after 50 ms.
        reordering.feed(Self.frames[2], atMicros: 10)
        #expect(reordering.take(atMicros: 10).isEmpty)
        #expect(reordering.take(atMicros: 50_010) == Self.frames[2])
    }
}
