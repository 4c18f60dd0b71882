import CameraControlWire

/// Link-level cases: handshake and versions, liveness, framing errors, sequence numbers (docs/CONFORMANCE.md).
enum LinkCases {
    static let all: [ConformanceCase] = [
        ConformanceCase(
            "handshake", "PROTOCOL.md §9",
            "A 1.0 handshake is answered with major 1, negotiated 1.0 and capabilities inside the spec's ranges."
        ) { c in
            let r = c.handshake
            let caps = c.capabilities
            try c.require(r.deviceVersion?.major == 1, "device_version.major is \(r.deviceVersion?.major ?? 0), not 1")
            try c.require(
                r.negotiatedVersion?.major == 1 && r.negotiatedVersion?.minor == 0,
                "negotiated_version is \(r.negotiatedVersion?.major ?? 0).\(r.negotiatedVersion?.minor ?? 0), not 1.0 (the lower minor)")
            try c.require(
                (128...4093).contains(caps.maxFrameBytes), "max_frame_bytes \(caps.maxFrameBytes) is outside 128…4093")
            try c.require(caps.maxConcurrentCalls >= 4, "max_concurrent_calls \(caps.maxConcurrentCalls) is below 4")
            try c.require(caps.heartbeatIntervalMillis > 0, "heartbeat_interval_ms is 0")
            // §2 (v1.2): the response itself within the max_frame_bytes it announces (the probe measured its frame).
            try await c.requireFrameRules(.handshakeWithinSize)
        },
        ConformanceCase(
            "version-newer-minor", "PROTOCOL.md §9", "A host of a newer minor (1.99) is accepted; the session runs at the lower minor."
        ) { c in
            let r = try await c.probe.handshake(major: 1, minor: 99)
            let device = r.deviceVersion?.minor ?? 0
            try c.require(
                r.negotiatedVersion?.major == 1 && r.negotiatedVersion?.minor == min(device, 99),
                "negotiated \(r.negotiatedVersion?.major ?? 0).\(r.negotiatedVersion?.minor ?? 0), expected 1.\(min(device, 99))")
        },
        ConformanceCase(
            "version-other-major", "PROTOCOL.md §9",
            "A host of another major (2.0) gets ERROR FAILED_PRECONDITION naming the device's version."
        ) { c in
            let body = HandshakeRequest(hostVersion: ProtocolVersion(major: 2, minor: 0), hostName: "conformance").serializedBytes()
            let (sent, reply) = try await c.probe.call(.deviceHandshake, body)
            let packet = try c.expect(reply, .error, status: .failedPrecondition, callID: Probe.callIDOf(sent), sent: sent, "handshake 2.0")
            try c.require(!packet.payload.isEmpty, "the refusal has no message naming the device's version", sent: sent, seen: reply?.wire)
        },
        ConformanceCase(
            "rehandshake-new-session", "PROTOCOL.md §9",
            "A handshake during a session starts a new one: a new session_id, the device's sequence back at 0."
        ) { c in
            let before = c.handshake.sessionID
            try await c.probe.ping()
            let body = HandshakeRequest(hostVersion: ProtocolVersion(major: 1), hostName: "again").serializedBytes()
            let (sent, reply) = try await c.probe.call(.deviceHandshake, body)
            let packet = try c.expect(reply, .response, callID: Probe.callIDOf(sent), sent: sent, "second handshake")
            let after = try HandshakeResponse(serializedBytes: packet.payload)
            try c.require(
                after.sessionID != before, "session_id stayed \(before)", sent: sent, seen: reply?.wire,
                expected: "a session_id other than \(before)")
            try c.require(
                packet.sequence == 0, "the new session's first packet has sequence \(packet.sequence)", sent: sent, seen: reply?.wire,
                expected: "sequence 0")
        },
        ConformanceCase(
            "heartbeat-period", "PROTOCOL.md §8",
            "An idle device sends HEARTBEAT every heartbeat_interval_ms (none missing, none at twice the period)."
        ) { c in
            await c.probe.setHeartbeats(true)
            let interval = Double(c.capabilities.heartbeatIntervalMillis == 0 ? 50 : c.capabilities.heartbeatIntervalMillis)
            // Counted against the device's clock: the heartbeats between two Pings' answers, over the span of
            // their device_time_us. A stall of this host or of the device's process bunches heartbeats or
            // delays them past a host-time window, but does not change how many the device sent in that span;
            // a device at twice the period sends half as many. The second Ping is a barrier: what the device
            // sent after answering it (a device catching up a stall sends on at once) is not counted.
            let start = try await c.probe.ping().deviceTimeMicros
            await c.probe.drain()
            try? await Task.sleep(for: .milliseconds(Int(interval * 16)))
            let (frames, end, _) = try await c.framesBeforePingAnswer(echoing: [], "the Ping that ends the count")
            let beats = frames.filter { $0.packet?.type == .heartbeat }
            let span = Double(end &- start) / 1_000
            // The Pings' answers count as traffic (a heartbeat follows an idle interval), so one fewer.
            let least = Int((span / interval * 0.75).rounded(.down)) - 1
            try c.require(
                beats.count >= max(least, 1) && Double(beats.count) <= span / interval + 1,
                "\(beats.count) heartbeats in \(Int(span)) ms of device time", seen: beats.first?.wire,
                expected: "about \(Int(span / interval)) heartbeats, one every \(Int(interval)) ms (at least \(max(least, 1)))")
            // §4 (v1.2): every heartbeat (and ACK) on call id 0.
            try await c.requireFrameRules(.linkPacketCallZero)
        },
        ConformanceCase(
            "heartbeat-delimited", "PROTOCOL.md §8, §2",
            "A SHOULD: each HEARTBEAT an idle device sends starts with an extra delimiter (00 | frame | 00), so a frame before it whose delimiter was corrupted costs only that frame."
        ) { c in
            await c.probe.setHeartbeats(true)
            // An idle line: a Ping's answer, then nothing but heartbeats for 6 intervals, up to a barrier Ping's answer.
            try await c.probe.ping()
            await c.probe.drain()
            try? await Task.sleep(for: c.heartbeatInterval * 6)
            let (frames, _, _) = try await c.framesBeforePingAnswer(echoing: [], "the Ping that ends the wait")
            let beats = frames.filter { $0.packet?.type == .heartbeat }
            guard !beats.isEmpty else {
                throw CaseSkipped("no HEARTBEAT came in 6 heartbeat intervals (heartbeat-period checks that they come)")
            }
            let bare = beats.filter { !$0.afterDelimiter }
            try c.require(
                bare.isEmpty, "\(bare.count) of \(beats.count) heartbeats on an idle line came without an extra delimiter before them",
                seen: bare.first?.wire, expected: "00 | HEARTBEAT frame | 00 (the 00 of the frame before, then one more)")
        },
        ConformanceCase(
            "heartbeat-after-long-frame", "PROTOCOL.md §8",
            "Behind a frame of its own that takes many intervals to leave, the device counts the heartbeat interval from the frame's departure: no heartbeats queue back to back behind it (v1.2)."
        ) { c in
            await c.probe.setHeartbeats(true)
            let interval = c.heartbeatInterval
            // An echo as long as a frame allows (the response's envelope, device time and check fit in 64 bytes).
            let echo = [UInt8](repeating: 0x55, count: c.maxFrame - 64)
            let (_, start, long) = try await c.framesBeforePingAnswer(echoing: echo, "a Ping echoing \(echo.count) bytes")
            // The frame's time on the line, at the rate learnt from its own arrival in pieces (zero when it
            // arrived whole: a fast line, where the frame leaves within an interval or two and nothing can tell).
            let leaving = await c.lineTime(bytes: long.wire.count)
            let millis = { (d: Duration) in Double(d.components.seconds) * 1_000 + Double(d.components.attoseconds) / 1e15 }
            guard leaving >= interval * 12 else {
                let took = Int(millis(leaving))
                throw CaseSkipped("the line is too fast to tell: a \(long.wire.count)-byte frame leaves in \(took) ms, under 12 intervals")
            }
            // Counted against the device's clock, as heartbeat-period: the heartbeats between the echo's answer
            // and a barrier Ping's, over the span of their device_time_us (a stall of either side bunches
            // heartbeats, but does not change how many the device queued in that span).
            try? await Task.sleep(for: interval * 16)
            let (frames, end, _) = try await c.framesBeforePingAnswer(echoing: [], "the Ping that ends the count")
            let beats = frames.filter { $0.packet?.type == .heartbeat }
            let span = Double(end &- start) / 1_000
            let period = millis(interval)
            let line = millis(leaving)
            // A device that counts from the departure sends about (span − line) / period heartbeats in the span,
            // and one right behind the echo; one that counts from the queueing span / period (12 or more too
            // many). The bound lies a third of the frame's line time below the latter: a rate learnt low (a late
            // read only lowers it) makes the line time look longer, and up to 2.5 times too long (on a line where
            // the echo takes 12 intervals) fails no device that keeps the rule.
            let most = Int(((span - line / 3) / period).rounded(.down)) + 1
            let about = max(Int((span - line) / period), 0)
            try c.require(
                beats.count <= most,
                "\(beats.count) heartbeats in the \(Int(span)) ms of device time after a frame that took \(Int(line)) ms to leave",
                seen: beats.first?.wire,
                expected: "at most \(most): one every \(Int(period)) ms once the frame had left (about \(about))")
        },
        ConformanceCase(
            "link-death", "PROTOCOL.md §8",
            "After 4 × heartbeat_interval_ms of host silence the device ends the session, stops heartbeats and counts heartbeat_timeouts."
        ) { c in
            let before = try await c.probe.counters()
            await c.probe.setHeartbeats(false)
            await c.probe.drain()
            _ = try await c.waitForLinkDeath("host silence")
            try await c.probe.handshake()
            let after = try await c.probe.counters()
            try c.expectDelta("heartbeat_timeouts", \.heartbeatTimeouts, before, after, 1, sent: [])
        },
        ConformanceCase(
            "frame-arriving-keeps-link", "PROTOCOL.md §8",
            "A Ping whose frame takes twice the dead timeout to arrive (a few bytes every half interval, nothing else sent meanwhile) is answered: a frame still arriving keeps the link alive."
        ) { c in
            let interval = await c.probe.heartbeatInterval
            let id = await c.probe.nextCallID()
            let sequence = await c.probe.takeSequence()
            let wire = try PacketEncoder.encode(
                Packet(type: .request, sequence: sequence, callID: id, address: .devicePing, payload: pingBody(count: 64)))
            // 17 pieces, one every half interval: 16 gaps, 8 intervals, twice the dead timeout (§8), with no
            // HEARTBEAT or ACK in between (either would land inside the frame). The suite lets both go again
            // before the next case, should this one end early.
            await c.probe.setHeartbeatsHeld(true)
            await c.probe.setAcknowledges(false)
            let pieces = 17
            for piece in 0..<pieces {
                if piece > 0 { try await Task.sleep(for: interval / 2) }
                try await c.probe.sendRaw(Array(wire[piece * wire.count / pieces..<(piece + 1) * wire.count / pieces]))
            }
            await c.probe.setAcknowledges(true)
            await c.probe.setHeartbeatsHeld(false)
            let reply = await c.probe.reply(to: id, within: Probe.answerWait)
            // A device that counted only whole frames ended the session while the Ping arrived: it answers
            // FAILED_PRECONDITION (the suite runs the case again only when the probe itself stalled between
            // two pieces for most of the dead timeout).
            _ = try c.expect(reply, .response, callID: id, sent: wire, "a Ping sent in 17 pieces over 8 heartbeat intervals")
        },
        ConformanceCase(
            "call-before-handshake", "PROTOCOL.md §9, §6",
            "A call with no session (after link death) gets ERROR FAILED_PRECONDITION; a copy of a request of the dead session is still a duplicate: dropped unanswered (the receive window outlives the link)."
        ) { c in
            // A request of the session, answered; its copy after link death must still be found in the window
            // (§6: the device keeps its receive window over link death), so it is dropped, not answered "no session".
            // RELIABLE, so that only the window decides (a v1.0 device executes a best-effort copy again, R2).
            let (oldID, old) = try await c.probe.request(.devicePing, PingRequest().serializedBytes(), reliable: true)
            try c.expect(await c.probe.reply(to: oldID), .response, callID: oldID, sent: old, "Ping in the session")
            await c.probe.setHeartbeats(false)
            _ = try await c.waitForLinkDeath("host silence")
            let (sent, reply) = try await c.probe.call(.devicePing, PingRequest().serializedBytes())
            try c.expect(reply, .error, status: .failedPrecondition, callID: Probe.callIDOf(sent), sent: sent, "Ping without a session")
            // The copy: the same bytes, sequence number and call id, a few numbers behind the device's latest
            // (well inside its 64-entry window). A Ping barrier after it is answered FAILED_PRECONDITION.
            try await c.probe.sendRaw(old)
            do {
                try await c.expectSilence(after: old, "a copy of a request of the dead session")
            } catch var failure as ConformanceFailure {
                failure.noSessionLost = true  // the case ended the session; "no session" is the copy's wrong answer
                throw failure
            }
        },
        ConformanceCase(
            "resync-after-garbage", "PROTOCOL.md §2", "200 bytes of non-zero garbage and a delimiter; the next request is answered."
        ) { c in
            var garbage = [UInt8]()
            var x: UInt32 = 12345
            for _ in 0..<200 {
                x = x &* 1_103_515_245 &+ 12345
                garbage.append(UInt8(truncatingIfNeeded: x >> 16) | 1)
            }
            try await c.probe.sendRaw(garbage + [0])
            if await c.mayOutlastDeadTimeout(bytes: garbage.count + 1) {
                // Garbage keeps no link alive (§8): on a line this slow (208 ms at 9600 baud) the device rightly
                // ends the session while it arrives. The request after it is then a new handshake.
                try await c.probe.handshake()
            }
            try await c.probe.ping()
        },
        ConformanceCase(
            "bad-check-counted", "PROTOCOL.md §3",
            "A frame with a wrong CRC is dropped unanswered and counted in check_errors only; the next frame is fine."
        ) { c in
            let before = try await c.probe.counters()
            var body = try PacketEncoder.encodeUnstuffed(
                Packet(type: .request, sequence: await c.probe.sequence, callID: 900, address: .devicePing))
            body[body.count - 1] ^= 0x5A
            let wire = COBS.encode(body) + [0]
            try await c.probe.sendRaw(wire)
            try await c.expectSilence(after: wire, "a bad check")
            let after = try await c.probe.counters()
            try c.expectDelta("check_errors", \.checkErrors, before, after, 1, sent: wire)
            try c.expectDelta("framing_errors", \.framingErrors, before, after, 0, sent: wire)
        },
        ConformanceCase(
            "truncated-frame-counted", "PROTOCOL.md §4",
            "A frame with fewer than 4 bytes before its check is a framing error (framing_errors), unanswered.",
            supersededBy: "S2"
        ) { c in
            let before = try await c.probe.counters()
            let wire = Probe.frame(body: [0x08, 0x01, 0x00])
            try await c.probe.sendRaw(wire)
            try await c.expectSilence(after: wire, "a truncated frame")
            let after = try await c.probe.counters()
            try c.expectDelta("framing_errors", \.framingErrors, before, after, 1, sent: wire)
            try c.expectDelta("check_errors", \.checkErrors, before, after, 0, sent: wire)
        },
        ConformanceCase(
            "bad-cobs-counted", "PROTOCOL.md §2", "A frame ending inside a COBS group is a framing error (framing_errors), unanswered."
        ) { c in
            let before = try await c.probe.counters()
            let wire: [UInt8] = [0x09, 0x01, 0x02, 0x03, 0x00]
            try await c.probe.sendRaw(wire)
            try await c.expectSilence(after: wire, "bad COBS")
            let after = try await c.probe.counters()
            try c.expectDelta("framing_errors", \.framingErrors, before, after, 1, sent: wire)
        },
        ConformanceCase(
            "unknown-type", "PROTOCOL.md §4",
            "Type 9 on call 77 gets ERROR UNIMPLEMENTED on call 77; on call 0 no answer; both counted in unknown_packet_types."
        ) { c in
            let before = try await c.probe.counters()
            let wire = try await c.probe.send(Packet(type: PacketType(rawValue: 9), callID: 77))
            let reply = await c.probe.reply(to: 77)
            try c.expect(reply, .error, status: .unimplemented, callID: 77, sent: wire, "unknown type 9")
            // A fresh number: the probe may have sent an ACK for the (v1.1: reliable) ERROR meanwhile.
            let zero = try await c.probe.send(Packet(type: PacketType(rawValue: 9), callID: 0))
            try await c.expectSilence(after: zero, "unknown type 9 on call 0")
            let after = try await c.probe.counters()
            try c.expectDelta("unknown_packet_types", \.unknownPacketTypes, before, after, 2, sent: zero)
        },
        ConformanceCase(
            "unknown-type-live-call", "PROTOCOL.md §4",
            "(v1.2) Type 9 on the call id of a live stream is counted and not answered: an ERROR would end the call at the host while it went on at the device."
        ) { c in
            guard (c.handshake.deviceVersion?.minor ?? 0) >= 2 else {
                throw CaseSkipped("the device speaks 1.\(c.handshake.deviceVersion?.minor ?? 0): 1.1 answered on any call id")
            }
            let stream = try await c.openStream(.inputStreamInputEvents)
            let before = try await c.probe.counters()
            let wire = try await c.probe.send(Packet(type: PacketType(rawValue: 9), callID: stream.callID))
            let ending: @Sendable (ReceivedFrame) -> Bool = {
                $0.packet?.callID == stream.callID && ($0.packet?.type == .error || $0.packet?.type == .streamEnd)
            }
            let reply = try await c.frameBeforeBarrier(matching: ending)
            try c.require(
                reply == nil, "the unknown type on the live call \(stream.callID) was answered", sent: wire, seen: reply?.wire,
                expected: "nothing: the call goes on")
            let after = try await c.probe.counters()
            try c.expectDelta("unknown_packet_types", \.unknownPacketTypes, before, after, 1, sent: wire)
            try await c.cancel(stream.callID)
        },
        ConformanceCase(
            "sequence-gaps-counted", "PROTOCOL.md §6", "A host packet 5 ahead of the expected one (d = 5) counts exactly 4 lost packets."
        ) { c in
            let before = try await c.probe.counters()
            await c.probe.skip(4)
            let wire = try await c.probe.send(Packet(type: .heartbeat, callID: 0))
            let after = try await c.probe.counters()
            try c.expectDelta("sequence_gaps", \.sequenceGaps, before, after, 4, sent: wire)
        },
        ConformanceCase(
            "device-sequence-numbers", "PROTOCOL.md §6",
            "The device numbers its packets 0, 1, 2, … from the handshake response on, one number per new packet."
        ) { c in
            // Every number the session used, from every packet seen (answers, heartbeats, ACKs, in whatever
            // read they arrived: arrival times of one read are equal, so they cannot order packets): the numbers
            // run 0, 1, 2, … without a gap up to the last Ping's answer.
            var numbers: Set<UInt16> = [0]  // the handshake response
            var last: (sequence: UInt16, wire: [UInt8]) = (0, [])
            for _ in 0..<6 {
                let (sent, reply) = try await c.probe.call(.devicePing, PingRequest().serializedBytes())
                let packet = try c.expect(reply, .response, callID: Probe.callIDOf(sent), sent: sent, "Ping")
                numbers.insert(packet.sequence)
                last = (packet.sequence, reply!.wire)
                for other in await c.probe.drain() { if let p = other.packet { numbers.insert(p.sequence) } }
            }
            _ = try await c.probe.ping()  // a barrier: whatever the device numbered before it has arrived
            for other in await c.probe.drain() { if let p = other.packet { numbers.insert(p.sequence) } }
            let missing = (0...last.sequence).filter { !numbers.contains($0) }
            let listed = missing.prefix(5).map(String.init).joined(separator: ", ")
            try c.require(
                missing.isEmpty, "sequence numbers \(listed) never seen before \(last.sequence)",
                seen: last.wire, expected: "0, 1, 2, … one number per new packet")
        },
        ConformanceCase(
            "cobs-254-run", "PROTOCOL.md §2",
            "A frame whose last block is a full 254-byte run is accepted with and without a trailing 0x01 code byte.",
            requires: .frameBytes(257)
        ) { c in
            for trailing in [false, true] {
                // The probe's next number, reserved: a frame sent on a number its own heartbeats or ACKs
                // take is a duplicate the device rightly drops (§6), and one that skips a number is a gap.
                // Its low byte must not be 0x00 (that would end the run): then the next one (a gap of one).
                var seq = await c.probe.takeSequence()
                if seq & 0xFF == 0 {
                    seq = await c.probe.takeSequence()
                }
                let id = await c.probe.nextCallID()
                // REQUEST 01 | seq lo, hi | call id | 01 02 | 0a f6 01 payload×246 | crc: after seq's high byte
                // (0x00: a session's first 256 packets), exactly 254 non-zero bytes
                var fill: UInt8 = 0x55
                var body: [UInt8] = []
                // The call id: one odd byte (never 0x00), different for the two frames, so a retransmission
                // of the first answer is never taken for the second.
                let callByte = UInt8(2 * (id % 60) + 1)
                repeat {
                    body =
                        [0x01, UInt8(truncatingIfNeeded: seq), UInt8(truncatingIfNeeded: seq >> 8), callByte, 0x01, 0x02, 0x0a, 0xf6, 0x01]
                        + [UInt8](repeating: fill, count: 246)
                    fill &+= 1
                } while CRC16.checksum(body) & 0xFF == 0 || CRC16.checksum(body) >> 8 == 0
                let check = CRC16.checksum(body)
                body += [UInt8(check & 0xFF), UInt8(check >> 8)]
                var wire = COBS.encode(body)
                if trailing { wire.append(0x01) }
                wire.append(0)
                try await c.probe.sendRaw(wire)
                let callID = UInt32(body[3])
                let reply = await c.newReply(to: callID, after: wire, within: .seconds(2))  // a loaded machine is slow
                try c.expect(
                    reply, .response, callID: callID, sent: wire,
                    trailing ? "the 254-byte run with a trailing 01" : "the canonical 254-byte run")
            }
            // The device's own encoder (§2: it MUST NOT append the 01): a Ping whose RESPONSE ends in a full
            // 254-byte block, no zero among its last 254 bytes (the check included), the one frame a trailing 01
            // could follow. Its echo is sized from the answer before: the run after the last zero grows by as
            // many bytes as the echo does; a zero in the check (or a clock that grew a byte) asks again, with
            // another fill. Every frame of the case is checked (FrameRule.canonicalCOBS).
            var count = 240
            var fill: UInt8 = 0x55
            for _ in 0..<8 {
                let (sent, reply) = try await c.probe.call(.devicePing, pingBody(count: count, fill: fill))
                let packet = try c.expect(reply, .response, callID: Probe.callIDOf(sent), sent: sent, "a Ping echoing \(count) bytes")
                let body = try COBS.decode(reply!.wire.dropLast())
                let zero = body.lastIndex(of: 0) ?? -1
                let run = body.count - 1 - zero
                if run == 254 { break }
                if zero >= body.count - 2 || packet.payload.isEmpty || count + 254 - run < 1 {
                    fill = fill == 0xFF ? 0x11 : fill + 1
                } else {
                    count += 254 - run
                }
            }
            try await c.requireFrameRules(.canonicalCOBS)
        },
    ]
}
