import CBenchSupport
import CameraControlRPC
import CameraControlWire

/// `camctl-bench decode`: wire bytes → typed `InputEvent` on one core, through this project's
/// `FrameDecoder` and generated Swift decoder, next to a bare `protobuf_c_message_unpack` of the same
/// payloads (default allocator, then an arena allocator) and next to the firmware's own C receive path
/// over the same frames (`cc_bench_firmware_decode`: the core's streaming frame decoder, a byte at a time,
/// with COBS and the CRC-16, its envelope parse and protobuf-c's unpack over its static arena; timed in C).
/// Also heap allocations per message, counted by interposing malloc in this process. The same events
/// through a whole ``ConnectionCore`` (sequence window, ACKs of the reliable ones written to its output,
/// the payload handed out as a stream message, then decoded) show what the host's connection adds.
enum DecodeBench {
    static func run(_ options: BenchOptions) async throws -> [BenchRow] {
        let messages = options.smoke ? 1_000 : try options.integer("messages", default: 200_000)
        // A stream of realistic input events, framed as the device sends them.
        var wire: [UInt8] = []
        var payloads: [[UInt8]] = []
        for index in 0..<256 {
            let event = InputEvent(
                timestampMicros: 10_000_000 + UInt64(index) * 997, kind: index % 3 == 0 ? .slide : .lightPressDown,
                source: .cameraControl, forceMillinewtons: UInt32(800 + index), position: UInt32(index * 3),
                eventNumber: UInt32(index + 1))
            let payload = event.serializedBytes()
            payloads.append(payload)
            wire += try PacketEncoder.encode(
                Packet(type: .streamMessage, isReliable: index % 3 != 0, sequence: UInt16(index), callID: 3, payload: payload))
        }
        let rounds = options.rounds
        let loops = max(1, messages / payloads.count)

        func swiftRound() -> (nanos: Double, allocations: Double) {
            var decoder = FrameDecoder()
            var decoded = 0
            var checksum: UInt64 = 0
            let before = cc_bench_alloc_count()
            cc_bench_alloc_counting(1)
            let nanos = measureNanos {
                for _ in 0..<loops {
                    decoder.append(wire)
                    while let output = decoder.nextView() {
                        guard case .packet(let packet) = output,
                            let event = try? InputEvent(serializedBytes: packet.payload)
                        else { continue }
                        checksum &+= event.timestampMicros
                        decoded += 1
                    }
                }
            }
            cc_bench_alloc_counting(0)
            let allocations = Double(cc_bench_alloc_count() - before)
            precondition(decoded == loops * payloads.count && checksum != 0, "decode bench decoded \(decoded)")
            return (nanos / Double(decoded), allocations / Double(decoded))
        }

        func bareRound(_ unpack: (UnsafePointer<UInt8>, Int) -> Int32) -> (nanos: Double, allocations: Double) {
            var parsed = 0
            let before = cc_bench_alloc_count()
            cc_bench_alloc_counting(1)
            let nanos = measureNanos {
                for _ in 0..<loops {
                    for payload in payloads {
                        payload.withUnsafeBufferPointer { buffer in
                            if unpack(buffer.baseAddress!, buffer.count) != 0 { parsed += 1 }
                        }
                    }
                }
            }
            cc_bench_alloc_counting(0)
            let allocations = Double(cc_bench_alloc_count() - before)
            precondition(parsed == loops * payloads.count, "baseline parsed \(parsed)")
            return (nanos / Double(parsed), allocations / Double(parsed))
        }

        // The firmware's C path over the same wire bytes: with the unpack, or deframing and envelope only.
        func firmwareRound(unpack: Bool) -> (nanos: Double, allocations: Double) {
            var result = cc_bench_firmware_decode_result_t()
            let before = cc_bench_alloc_count()
            cc_bench_alloc_counting(1)
            let status = wire.withUnsafeBufferPointer { buffer in
                cc_bench_firmware_decode(buffer.baseAddress, buffer.count, loops, unpack ? 1 : 0, &result)
            }
            cc_bench_alloc_counting(0)
            let allocations = Double(cc_bench_alloc_count() - before)
            let messages = Int(result.messages)
            precondition(
                status == 0 && messages == loops * payloads.count && result.checksum != 0,
                "the firmware's C path decoded \(messages) (status \(status))")
            return (Double(result.nanos) / Double(messages), allocations / Double(messages))
        }

        // Through a ConnectionCore: a live stream call, and 65,536 frames numbered 0…65535 (so the
        // core's duplicate window never sees a number twice within its span), fed in turn.
        var core = ConnectionCore()
        let call = try core.startCall(method: .inputStreamInputEvents, request: [], now: .zero)
        core.drainOutbound { _ in }
        var numbered: [UInt8] = []
        for sequence in 0..<65_536 {
            numbered += try PacketEncoder.encode(
                Packet(
                    type: .streamMessage, isReliable: sequence % 3 != 0, sequence: UInt16(sequence), callID: call.rawValue,
                    payload: payloads[sequence % payloads.count]))
        }
        let chunk = wire.count  // bytes per feed: about 256 frames, as in the rounds above
        var feedOffset = 0
        var events: [ConnectionEvent] = []
        var acked = 0
        func coreRound() -> (nanos: Double, allocations: Double) {
            var decoded = 0
            var checksum: UInt64 = 0
            let target = loops * payloads.count
            let before = cc_bench_alloc_count()
            cc_bench_alloc_counting(1)
            let nanos = measureNanos {
                while decoded < target {
                    let end = min(feedOffset + chunk, numbered.count)
                    numbered.withUnsafeBytes { core.receive(UnsafeRawBufferPointer(rebasing: $0[feedOffset..<end]), now: .zero) }
                    feedOffset = end == numbered.count ? 0 : end
                    core.takeEvents(into: &events)
                    for event in events {
                        guard case .streamMessage(_, let payload) = event, let input = try? InputEvent(serializedBytes: payload)
                        else { continue }
                        checksum &+= input.timestampMicros
                        decoded += 1
                    }
                    events.removeAll(keepingCapacity: true)
                    core.drainOutbound { acked += $0.count }
                }
            }
            cc_bench_alloc_counting(0)
            let allocations = Double(cc_bench_alloc_count() - before)
            precondition(checksum != 0 && acked > 0 && core.counters.duplicatesDropped == 0, "core bench decoded \(decoded)")
            return (nanos / Double(decoded), allocations / Double(decoded))
        }

        func deframeRound() -> Double {
            var decoder = FrameDecoder()
            var frames = 0
            let nanos = measureNanos {
                for _ in 0..<loops {
                    decoder.append(wire)
                    while let output = decoder.nextView() {
                        if case .packet = output { frames += 1 }
                    }
                }
            }
            return nanos / Double(max(frames, 1))
        }

        func messageRound() -> Double {
            var checksum: UInt64 = 0
            let nanos = measureNanos {
                for _ in 0..<loops {
                    for payload in payloads {
                        if let event = try? InputEvent(serializedBytes: payload) { checksum &+= event.timestampMicros }
                    }
                }
            }
            precondition(checksum != 0)
            return nanos / Double(loops * payloads.count)
        }

        var deframe: [Double] = []
        var message: [Double] = []
        var ours: [(nanos: Double, allocations: Double)] = []
        var bare: [(nanos: Double, allocations: Double)] = []
        var arena: [(nanos: Double, allocations: Double)] = []
        var firmware: [(nanos: Double, allocations: Double)] = []
        var firmwareDeframe: [Double] = []
        var throughCore: [(nanos: Double, allocations: Double)] = []
        _ = swiftRound()  // warm-up
        _ = coreRound()
        _ = firmwareRound(unpack: true)
        for _ in 0..<rounds {
            ours.append(swiftRound())
            bare.append(bareRound { cc_bench_unpack_input_event($0, $1) })
            arena.append(bareRound { cc_bench_unpack_input_event_arena($0, $1) })
            firmware.append(firmwareRound(unpack: true))
            deframe.append(deframeRound())
            firmwareDeframe.append(firmwareRound(unpack: false).nanos)
            message.append(messageRound())
            throughCore.append(coreRound())
        }
        let firmwareName = "firmware C receive path"
        return [
            BenchRow(
                name: "frames → InputEvent (deframe, check, envelope, decode)", unit: "ns/msg",
                project: Stats(ours.map(\.nanos)), baseline: ("bare protobuf-c unpack+free", Stats(bare.map(\.nanos)))),
            BenchRow(
                name: "  same, against protobuf-c over an arena", unit: "ns/msg", project: Stats(ours.map(\.nanos)),
                baseline: ("protobuf-c unpack, arena", Stats(arena.map(\.nanos)))),
            BenchRow(
                name: "  same, against the firmware's own C receive path", unit: "ns/msg", project: Stats(ours.map(\.nanos)),
                baseline: (firmwareName, Stats(firmware.map(\.nanos)))),
            BenchRow(
                name: "  of which deframing (COBS, check, envelope)", unit: "ns/msg", project: Stats(deframe),
                baseline: ("firmware C, without the unpack", Stats(firmwareDeframe))),
            BenchRow(
                name: "  of which the generated message decoder", unit: "ns/msg", project: Stats(message),
                baseline: ("bare protobuf-c unpack+free", Stats(bare.map(\.nanos)))),
            BenchRow(
                name: "  through a ConnectionCore (window, ACKs, stream event)", unit: "ns/msg",
                project: Stats(throughCore.map(\.nanos)), baseline: ("bare protobuf-c unpack+free", Stats(bare.map(\.nanos)))),
            BenchRow(
                name: "heap allocations", unit: "allocs/msg", project: Stats(ours.map(\.allocations)),
                baseline: ("bare protobuf-c unpack+free", Stats(bare.map(\.allocations)))),
            BenchRow(
                name: "  same, against the firmware's own C receive path", unit: "allocs/msg",
                project: Stats(ours.map(\.allocations)), baseline: (firmwareName, Stats(firmware.map(\.allocations)))),
            BenchRow(
                name: "  through a ConnectionCore (the stream event's own payload)", unit: "allocs/msg",
                project: Stats(throughCore.map(\.allocations)),
                baseline: ("bare protobuf-c unpack+free", Stats(bare.map(\.allocations)))),
        ]
    }
}
