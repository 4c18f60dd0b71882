import CameraControlWire

/// Cases for the protocol v1.1 decisions (docs/CONFORMANCE.md, "Decisions"); each names its decision and is
/// skipped unless the run enables it.
enum DecisionCases {
    /// Sends the frame `body` builds from the probe's next sequence number, with a valid check, and expects no
    /// answer and a healthy link afterwards.
    static func dropped(_ c: CaseContext, _ what: String, _ body: @Sendable (UInt16) -> [UInt8]) async throws {
        let wire = try await c.probe.sendFrame(body)
        try await c.expectSilence(after: wire, what)
        try await c.probe.ping()
    }

    static let all: [ConformanceCase] = [
        ConformanceCase(
            "empty-frame-ignored", "PROTOCOL.md §2", "A stuffed empty frame (01 00) is ignored, not a framing error.", decision: "S1"
        ) { c in
            let before = try await c.probe.counters()
            try await c.probe.sendRaw([0x01, 0x00, 0x00])
            try await c.expectSilence(after: [0x01, 0x00, 0x00], "an empty frame")
            let after = try await c.probe.counters()
            try c.expectDelta("framing_errors", \.framingErrors, before, after, 0, sent: [0x01, 0x00])
        },
        ConformanceCase(
            "counter-precedence", "PROTOCOL.md §3/§4", "A 3-byte frame with a wrong check is a short frame, not a check error.",
            decision: "S2"
        ) { c in
            let before = try await c.probe.counters()
            let wire = COBS.encode([0x08, 0x01, 0x02]) + [0]
            try await c.probe.sendRaw(wire)
            try await c.expectSilence(after: wire, "a short frame with a bad check")
            let after = try await c.probe.counters()
            try c.expectDelta("check_errors", \.checkErrors, before, after, 0, sent: wire)
        },
        ConformanceCase(
            "call-id-zero-request", "PROTOCOL.md §4", "A REQUEST on call id 0 is an envelope error: dropped, unanswered.", decision: "S3"
        ) { c in
            try await dropped(c, "a REQUEST on call 0") { seq in [0x01, UInt8(seq & 0xFF), UInt8(seq >> 8), 0x00, 0x01, 0x02] }
        },
        ConformanceCase("call-id-six-bytes", "PROTOCOL.md §4", "A call id varint of 6 bytes is an envelope error.", decision: "S3") { c in
            try await dropped(c, "a 6-byte call id") { seq in
                [0x01, UInt8(seq & 0xFF), UInt8(seq >> 8), 0x81, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01, 0x02]
            }
        },
        ConformanceCase("call-id-too-large", "PROTOCOL.md §4", "A call id ≥ 2³² is an envelope error.", decision: "S3") { c in
            try await dropped(c, "call id 2³²") { seq in
                [0x01, UInt8(seq & 0xFF), UInt8(seq >> 8), 0x80, 0x80, 0x80, 0x80, 0x10, 0x01, 0x02]
            }
        },
        ConformanceCase(
            "non-minimal-varint", "PROTOCOL.md §4", "A non-minimal call id (81 00 = 1) is accepted and answered on call 1.", decision: "S3"
        ) { c in
            let wire = try await c.probe.sendFrame { seq in [0x01, UInt8(seq & 0xFF), UInt8(seq >> 8), 0x81, 0x00, 0x01, 0x02] }
            try c.expect(await c.probe.reply(to: 1), .response, callID: 1, sent: wire, "a non-minimal call id")
            // The other half of the rule: the device's own call ids are minimal (its answer on call 1 too). A
            // Ping on a two-byte call id, so a device that pads every varint by a byte is told from one that
            // only mirrors the host's.
            let (id, sent) = try await c.probe.request(.devicePing, [], callID: 300)
            try c.expect(await c.probe.reply(to: id), .response, callID: id, sent: sent, "a Ping on call \(id)")
            try await c.requireFrameRules(.minimalCallID)
        },
        ConformanceCase(
            "device-bound-types-dropped", "PROTOCOL.md §4",
            "RESPONSE, STREAM_MESSAGE, STREAM_END and ERROR sent to the device are dropped.", decision: "S3"
        ) { c in
            for body: [UInt8] in [[0x02], [0x03], [0x04], [0x06]] {
                try await dropped(c, "a device-bound packet of type \(body[0])") { seq in
                    body + [UInt8(seq & 0xFF), UInt8(seq >> 8), 0x05] + (body[0] == 0x04 || body[0] == 0x06 ? [0x00] : [])
                }
            }
        },
        ConformanceCase(
            "ack-without-payload", "PROTOCOL.md §4", "An ACK without its 2-byte payload is an envelope error; the link goes on.",
            decision: "S3"
        ) { c in
            try await dropped(c, "an empty ACK") { seq in [0x07, UInt8(seq & 0xFF), UInt8(seq >> 8), 0x00] }
        },
        ConformanceCase(
            "cancelled-calls-counted", "PROTOCOL.md §7",
            "cancelled_calls counts a stream ended by a new handshake and one ended by link death, as one cancelled by CANCEL (v1.2)."
        ) { c in
            let before = try await c.probe.counters()
            let first = try await c.openStream(.inputStreamInputEvents)
            let (_, sent) = try await c.probe.request(
                .deviceHandshake, HandshakeRequest(hostVersion: ProtocolVersion(major: 1), hostName: "again").serializedBytes())
            _ = await c.probe.next { $0.packet?.type == .response }
            _ = try await c.openStream(.inputStreamInputEvents)
            await c.probe.setHeartbeats(false)
            _ = await c.probe.collect(for: .milliseconds(Int(c.capabilities.heartbeatIntervalMillis) * 6))
            await c.probe.setHeartbeats(true)
            try await c.probe.handshake()
            let after = try await c.probe.counters()
            _ = first
            try c.expectDelta("cancelled_calls", \.cancelledCalls, before, after, 2, sent: sent)
        },
        ConformanceCase(
            "link-packets-lenient", "PROTOCOL.md §4",
            "An ACK on a non-zero call id with two bytes after its sequence stops the retransmissions of what it acknowledges; a HEARTBEAT on a non-zero call id is not answered; neither is an envelope error (v1.2)."
        ) { c in
            let before = try await c.probe.counters()
            await c.probe.setAcknowledges(false)
            let (id, sent) = try await c.probe.request(.devicePing, pingBody(count: 4), reliable: true)
            let reply = await c.probe.reply(to: id)
            let packet = try c.expect(reply, .response, callID: id, sent: sent, "a reliable Ping")
            try c.require(packet.isReliable, "the RESPONSE is best-effort", seen: reply?.wire, expected: "RELIABLE")
            let ackSequence = await c.probe.sequence
            await c.probe.skip(2)
            let ack = Probe.frame(body: [
                PacketType.ack.rawValue, UInt8(ackSequence & 0xFF), UInt8(ackSequence >> 8), 5,
                UInt8(packet.sequence & 0xFF), UInt8(packet.sequence >> 8), 0xAA, 0xBB,
            ])
            let heartbeatSequence = ackSequence &+ 1
            let heartbeat = Probe.frame(body: [
                PacketType.heartbeat.rawValue, UInt8(heartbeatSequence & 0xFF), UInt8(heartbeatSequence >> 8), 9,
            ])
            try await c.probe.sendRaw(ack + heartbeat)
            // A Ping as a barrier: the device read the ACK before it; copies after its answer were sent after the ACK.
            _ = try await c.probe.ping()
            let later = await c.probe.collect(for: .milliseconds(700))
            await c.probe.setAcknowledges(true)  // the barrier's answer is ACKed at its next copy
            let copies = later.filter { $0.packet?.callID == id && $0.packet?.sequence == packet.sequence }
            try c.require(
                copies.isEmpty, "the RESPONSE was sent again \(copies.count) times after the ACK on call 5", sent: ack,
                seen: copies.first?.wire, expected: "no retransmission: the ACK's call id and its bytes after the sequence are ignored")
            let answered = later.filter { $0.packet?.callID == 9 }
            try c.require(answered.isEmpty, "the HEARTBEAT on call 9 was answered", sent: heartbeat, seen: answered.first?.wire)
            let after = try await c.probe.counters()
            try c.expectDelta("envelope_errors", \.envelopeErrors, before, after, 0, sent: ack + heartbeat)
        },
        ConformanceCase(
            "heartbeat-with-payload", "PROTOCOL.md §4", "A HEARTBEAT with a payload keeps the link alive; the payload is ignored.",
            decision: "S3"
        ) { c in
            await c.probe.setHeartbeats(false)
            // 1 s, five dead timeouts: a device that drops them dies even if a loaded machine stalls it for
            // most of that time (a simulator catching up does not observe host silence).
            for _ in 0..<25 {
                try await c.probe.sendFrame { seq in [0x08, UInt8(seq & 0xFF), UInt8(seq >> 8), 0x00, 0xAA, 0xBB] }
                try await Task.sleep(for: .milliseconds(40))
            }
            try await c.probe.ping()
        },
        ConformanceCase(
            "rehandshake-cancels-calls", "PROTOCOL.md §5, §9",
            "A new handshake ends every live call with ERROR CANCELLED before the HandshakeResponse.", decision: "S4"
        ) { c in
            let stream = try await c.openStream(.inputStreamInputEvents)
            let body = HandshakeRequest(hostVersion: ProtocolVersion(major: 1), hostName: "again").serializedBytes()
            let (id, sent) = try await c.probe.request(.deviceHandshake, body)
            let first = await c.probe.next { $0.packet?.callID == stream.callID || $0.packet?.callID == id }
            try c.expect(first, .error, status: .cancelled, callID: stream.callID, sent: sent, "the old session's stream")
            if (c.handshake.deviceVersion?.minor ?? 0) >= 2 {
                // v1.2: nothing retransmits it, and an ACK of its old number could free a new packet (§9).
                try c.require(
                    first?.packet?.isReliable == false, "the new-session ERROR carries RELIABLE", seen: first?.wire,
                    expected: "ERROR CANCELLED without RELIABLE (a 1.2 device)")
            }
        },
        ConformanceCase(
            "stream-end", "PROTOCOL.md §7", "A stream that ends by itself ends with STREAM_END.", decision: "S4",
            skipReason: "no v1 method ends a stream by itself; STREAM_END exists for streams that do (PROTOCOL.md §7, decision S4)"
        ) { _ in },
        ConformanceCase(
            "unprotected-not-reliable", "PROTOCOL.md §6",
            "With all reliable slots taken, a new reliable packet goes out without the RELIABLE flag (reliable_unprotected).",
            requires: .simulatorService, decision: "S5"
        ) { c in
            let stream = try await c.openStream(.inputStreamInputEvents)
            await c.probe.setAcknowledges(false)
            let (sent, reply) = try await c.probe.call(
                .simulatorRunScenario, RunScenarioRequest(scenario: "remote-click count=20\n").serializedBytes())
            let packet = try c.expect(reply, .response, callID: Probe.callIDOf(sent), sent: sent, "RunScenario")
            let run = try RunScenarioResponse(serializedBytes: packet.payload)
            // Until the device's clock has passed the clicks (a device run late by a loaded machine sends them late).
            let frames = try await c.framesUntilScenarioEnd(scenarioMicros: run.durationMicros, settle: .milliseconds(100))
            await c.probe.setAcknowledges(true)
            try await c.cancel(stream.callID)
            var firsts: [UInt16: ReceivedFrame] = [:]
            for f in frames where f.packet?.callID == stream.callID && f.packet?.type == .streamMessage {
                if firsts[f.packet!.sequence] == nil { firsts[f.packet!.sequence] = f }
            }
            let unflagged = firsts.values.filter { $0.packet?.isReliable == false }
            try c.require(
                unflagged.count >= 1, "every one of \(firsts.count) clicks carried RELIABLE", seen: firsts.values.first?.wire,
                expected: "clicks 17… without RELIABLE")
        },
        ConformanceCase(
            "handshake-exempt-from-limit", "PROTOCOL.md §7", "With the call limit reached, a Handshake is still served.", decision: "S6"
        ) { c in
            for _ in 0..<Int(c.capabilities.maxConcurrentCalls) { _ = try await c.openStream(.inputStreamInputEvents) }
            try await c.probe.handshake()
        },
        ConformanceCase(
            "unknown-method-before-handshake", "PROTOCOL.md §9", "Before a handshake an unknown method gets FAILED_PRECONDITION.",
            decision: "S6"
        ) { c in
            await c.probe.setHeartbeats(false)
            _ = try await c.waitForLinkDeath("host silence")
            let (sent, reply) = try await c.probe.call(MethodID(service: 99, method: 1))
            try c.expect(reply, .error, status: .failedPrecondition, callID: Probe.callIDOf(sent), sent: sent, "service 99 with no session")
        },
        ConformanceCase(
            "empty-handshake-refused", "PROTOCOL.md §9", "An empty HandshakeRequest is version 0.0: refused with FAILED_PRECONDITION.",
            decision: "S6"
        ) { c in
            let (sent, reply) = try await c.probe.call(.deviceHandshake, [])
            try c.expect(reply, .error, status: .failedPrecondition, callID: Probe.callIDOf(sent), sent: sent, "an empty handshake")
        },
        ConformanceCase(
            "refused-handshake-keeps-session", "PROTOCOL.md §9", "After a refused handshake the old session goes on.", decision: "S6"
        ) { c in
            let body = HandshakeRequest(hostVersion: ProtocolVersion(major: 2), hostName: "x").serializedBytes()
            _ = try await c.probe.call(.deviceHandshake, body)
            try await c.probe.ping()
        },
        ConformanceCase(
            "config-survives-rehandshake", "PROTOCOL.md §9, config.proto", "Configuration set by Configure survives a new handshake.",
            decision: "S6", changesDeviceState: true
        ) { c in
            let (sentGet, got) = try await c.probe.call(.configGetConfig)
            var config = try Config(
                serializedBytes: try c.expect(got, .response, callID: Probe.callIDOf(sentGet), sent: sentGet, "GetConfig").payload)
            let original = config.debounceMillis
            config.debounceMillis = original == 7 ? 8 : 7
            let (sent, reply) = try await c.probe.call(.configConfigure, ConfigureRequest(config: config).serializedBytes())
            try c.expect(reply, .response, callID: Probe.callIDOf(sent), sent: sent, "Configure")
            try await c.probe.handshake()
            let (sent2, again) = try await c.probe.call(.configGetConfig)
            let now = try Config(
                serializedBytes: try c.expect(again, .response, callID: Probe.callIDOf(sent2), sent: sent2, "GetConfig").payload)
            config.debounceMillis = original
            _ = try await c.probe.call(.configConfigure, ConfigureRequest(config: config).serializedBytes())
            try c.require(
                now.debounceMillis != original, "debounce_ms went back to \(original) at the handshake", sent: sent2, seen: again?.wire)
        },
        ConformanceCase(
            "samples-per-batch-refused", "input.proto", "samples_per_batch 266 is refused with INVALID_ARGUMENT, not clamped.",
            requires: .forceSensor,
            decision: "S7"
        ) { c in
            let (sent, reply) = try await c.probe.call(
                .inputStreamRawSamples, StreamRawSamplesRequest(samplesPerBatch: 266).serializedBytes())
            try c.expect(reply, .error, status: .invalidArgument, callID: Probe.callIDOf(sent), sent: sent, "samples_per_batch 266")
        },
        ConformanceCase("responses-reliable", "PROTOCOL.md §6", "Every RESPONSE and ERROR is sent RELIABLE.", decision: "R1") { c in
            let (sent, reply) = try await c.probe.call(.devicePing, [])
            try c.require(
                reply?.packet?.isReliable == true, "the RESPONSE is best-effort", sent: sent, seen: reply?.wire, expected: "RELIABLE")
        },
        ConformanceCase(
            "duplicate-best-effort-dropped", "PROTOCOL.md §6", "A best-effort REQUEST received twice is executed once.", decision: "R2"
        ) { c in
            let (id, sent) = try await c.probe.request(.devicePing, [])
            _ = await c.probe.reply(to: id)
            try await c.probe.sendRaw(sent)
            let again = await c.newReply(to: id, after: sent, within: .milliseconds(120))
            try c.require(again == nil, "the duplicate was answered again", sent: sent, seen: again?.wire, expected: "nothing")
        },
        ConformanceCase(
            "duplicate-request-ignored", "PROTOCOL.md §7", "A REQUEST on a live call id is ignored: no ALREADY_EXISTS, the call goes on.",
            decision: "R3"
        ) { c in
            let stream = try await c.openStream(.inputStreamInputEvents)
            let (_, sent) = try await c.probe.request(.devicePing, [], callID: stream.callID)
            let refusal: @Sendable (ReceivedFrame) -> Bool = { $0.packet?.callID == stream.callID && $0.packet?.type == .error }
            let reply = try await c.frameBeforeBarrier(matching: refusal)
            try c.require(reply == nil, "the repeated REQUEST was refused", sent: sent, seen: reply?.wire, expected: "nothing")
            try await c.cancel(stream.callID)
        },
        ConformanceCase(
            "stream-confirmed", "PROTOCOL.md §7", "A server stream is confirmed by an empty RESPONSE before its first message.",
            decision: "R4"
        ) { c in
            // Streams are confirmed in sessions at minor 1 or later (a 1.0 host is not sent the RESPONSE).
            _ = try await c.probe.handshake(major: 1, minor: 1)
            let stream = try await c.openStream(.inputStreamInputEvents)
            let reply = await c.probe.reply(to: stream.callID)
            try c.require(
                reply?.packet?.type == .response && reply?.packet?.payload.isEmpty == true, "no empty RESPONSE opened the stream",
                sent: stream.wire, seen: reply?.wire, expected: "RESPONSE on call \(stream.callID), empty payload")
            try await c.cancel(stream.callID)
        },
        ConformanceCase(
            "pipelined-burst", "PROTOCOL.md §7",
            "200 Ping requests written in one burst are all answered, or (a UART that cannot hold the host back) every lost one is counted in rx_overruns.",
            decision: "R6"
        ) { c in
            let before = try await c.probe.counters()
            var burst: [UInt8] = []
            var ids: Set<UInt32> = []
            for _ in 0..<200 {
                let id = await c.probe.nextCallID()
                ids.insert(id)
                let seq = await c.probe.takeSequence()
                burst += try PacketEncoder.encode(Packet(type: .request, sequence: seq, callID: id, address: .devicePing))
            }
            try await c.probe.sendRaw(burst)
            var answered: Set<UInt32> = []
            // A slow device (an emulated board on a loaded machine) may take seconds: wait while answers keep
            // coming, and give up after the suite's answer wait (5.1 s, `Probe.answerWait`) without one (it was
            // 1 s: a board QEMU stalled longer in mid-burst would have failed).
            var progress = ContinuousClock.now
            var refusal: ReceivedFrame?
            while answered.count < ids.count, ContinuousClock.now - progress < Probe.answerWait {
                let ids = ids
                guard
                    let f = await c.probe.next(
                        within: .milliseconds(200),
                        where: { ($0.packet?.type == .response || $0.packet?.type == .error) && ids.contains($0.packet!.callID) })
                else { continue }
                if f.packet!.type == .error {
                    refusal = refusal ?? f
                } else if answered.insert(f.packet!.callID).inserted {
                    progress = ContinuousClock.now
                }
            }
            guard answered.count < ids.count else { return }
            if let refusal, refusal.packet?.status == .failedPrecondition {
                // The session ended under the burst (a stall past the dead-link time): the suite runs the case again.
                throw ConformanceFailure(
                    "the session ended during the burst", sent: Array(burst.prefix(16)), seen: refusal.wire, expected: "200 RESPONSEs")
            }
            // R6: a device that can hold the host back (a pty) answers all; one that cannot (a real UART)
            // may drop bytes, but never without counting them.
            let after = try await c.probe.counters()
            let overruns = Int(after.rxOverruns) - Int(before.rxOverruns)
            func grew(_ field: KeyPath<Counters, UInt32>) -> Int { Int(after[keyPath: field]) - Int(before[keyPath: field]) }
            try c.require(
                overruns > 0,
                "\(ids.count - answered.count) of 200 pipelined requests unanswered and rx_overruns grew by \(overruns) (frames_received +\(grew(\.framesReceived)), framing_errors +\(grew(\.framingErrors)), check_errors +\(grew(\.checkErrors)), tx_dropped +\(grew(\.txDropped)), heartbeat_timeouts +\(grew(\.heartbeatTimeouts)))",
                seen: refusal?.wire, expected: "200 RESPONSEs, or the dropped bytes counted in rx_overruns")
        },
        ConformanceCase(
            "long-garbage-then-request", "PROTOCOL.md §2",
            "15,000 non-zero bytes, a delimiter, then a request: it is answered, or (a UART that cannot hold the host back) the dropped bytes are counted in rx_overruns and the next request is answered.",
            decision: "R6"
        ) { c in
            let before = try await c.probe.counters()
            let garbageSent = ContinuousClock.now
            try await c.probe.sendRaw([UInt8](repeating: 0x41, count: 15_000) + [0])
            // On a slow line the garbage takes its time first (15.6 s at 9600 baud).
            let garbageTime = await c.lineTime(bytes: 15_001)
            let (wire, reply) = try await c.probe.call(
                .devicePing, PingRequest().serializedBytes(), within: .seconds(2) + garbageTime)
            guard let packet = reply?.packet else {
                // R6, as in pipelined-burst: a device that cannot hold the host back (a UART) may drop bytes, the
                // delimiter after the garbage too, but never without counting them; it must then resynchronise.
                let meanwhile = await c.probe.drain()
                let after: Counters
                do {
                    after = try await c.probe.counters()
                } catch var failure as ConformanceFailure {
                    guard ConformanceSuite.lostSession(failure) else {
                        // What the device did while nothing was answered tells a stalled device from a slow one.
                        failure.message +=
                            "; after the garbage (sent at +0 ms) and the unanswered Ping, the device sent "
                            + Probe.summary(meanwhile, since: garbageSent)
                        throw failure
                    }
                    // The garbage outlasted the dead timeout (§8) and the Ping went with the dropped bytes: the
                    // device rightly ended the session. Its counters are its own, not the session's: a new one
                    // reads them.
                    _ = try await c.probe.handshake()
                    after = try await c.probe.counters()
                }
                let overruns = Int(after.rxOverruns) - Int(before.rxOverruns)
                guard overruns > 0 else {
                    throw ConformanceFailure(
                        "the request after the garbage was not answered (lost with the garbage?) and rx_overruns grew by \(overruns)",
                        sent: wire, seen: nil, expected: "RESPONSE PingResponse, or the dropped bytes counted in rx_overruns")
                }
                // Overruns explain a lost request, not a device that loses the first one after any bad frame:
                // a short undecodable frame (nothing to overrun) and a Ping after it, which must be answered.
                try await c.probe.sendRaw([0x41, 0x41, 0x41, 0])
                let (afterShort, answer) = try await c.probe.call(.devicePing, PingRequest().serializedBytes(), within: .seconds(2))
                try c.require(
                    answer?.packet?.type == .response,
                    "after the overrun, a Ping that followed a short undecodable frame was not answered (no resynchronisation)",
                    sent: afterShort, seen: answer?.wire, expected: "RESPONSE PingResponse")
                return
            }
            if packet.type == .error, packet.status == .failedPrecondition {
                // On a UART at 115200 baud the garbage alone takes 1.3 s to arrive, longer than §8's dead
                // timeout: the device rightly ended the session. It resynchronised and answered the request
                // that followed (with "handshake first"); a new session then works.
                _ = try await c.probe.handshake()
                _ = try await c.probe.ping(within: .seconds(2))
                return
            }
            try c.require(
                packet.type == .response, "the request after the garbage got \(packet.type)", sent: wire, seen: reply?.wire,
                expected: "RESPONSE PingResponse")
        },
    ]
}
