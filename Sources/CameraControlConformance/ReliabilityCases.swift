import CameraControlWire

/// §6 reliability: ACKs, retransmission, duplicates (docs/CONFORMANCE.md).
enum ReliabilityCases {
    /// Milliseconds between two instants.
    static func ms(_ a: ContinuousClock.Instant, _ b: ContinuousClock.Instant) -> Double {
        let d = b - a
        return Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
    }

    /// Opens an input stream, stops acknowledging, clicks the remote once and returns the stream's call id
    /// and every transmission of the click's reliable packet seen within `duration`.
    static func unacknowledgedClick(
        _ c: CaseContext, for duration: Duration
    ) async throws -> (UInt32, [ReceivedFrame], deviceTimeMicros: UInt64) {
        let stream = try await c.openStream(.inputStreamInputEvents)
        await c.probe.setAcknowledges(false)
        let (sent, reply) = try await c.probe.call(.simulatorRunScenario, RunScenarioRequest(scenario: "remote-click\n").serializedBytes())
        try c.expect(reply, .response, callID: Probe.callIDOf(sent), sent: sent, "RunScenario")
        // On the device's clock: a loaded host that runs late waits longer instead of cutting the schedule short.
        let (frames, deviceTime) = try await c.framesForDeviceTime(duration)
        await c.probe.setAcknowledges(true)
        let copies = frames.filter { $0.packet?.callID == stream.callID && $0.packet?.type == .streamMessage }
        return (stream.callID, copies, deviceTime)
    }

    static let all: [ConformanceCase] = [
        ConformanceCase(
            "acks-reliable-requests", "PROTOCOL.md §6", "A REQUEST sent RELIABLE is ACKed with its sequence number and answered once."
        ) { c in
            let (id, sent) = try await c.probe.request(.devicePing, [], reliable: true)
            // The request's own number, read from its bytes (the probe's ticker may send in between).
            let seq = (try? PacketDecoder.decode(unstuffed: COBS.decode(sent.dropLast())).sequence) ?? 0
            let ack = await c.probe.next { $0.packet?.type == .ack }
            let expected = try PacketEncoder.encode(
                Packet(type: .ack, sequence: ack?.packet?.sequence ?? 0, callID: 0, payload: [UInt8(seq & 0xFF), UInt8(seq >> 8)]))
            try c.require(
                ack?.packet?.payload == [UInt8(seq & 0xFF), UInt8(seq >> 8)], "no ACK of sequence \(seq)", sent: sent, seen: ack?.wire,
                expected: hex(expected))
            try c.expect(await c.probe.reply(to: id), .response, callID: id, sent: sent, "the reliable Ping")
            // §4 (v1.2): the device's own ACKs (and heartbeats) on call id 0, every one seen in the case.
            try await c.requireFrameRules(.linkPacketCallZero)
        },
        ConformanceCase(
            "duplicates-dropped-in-window", "PROTOCOL.md §6",
            "A reliable REQUEST received twice is ACKed twice and executed once; duplicates_dropped counts the copy."
        ) { c in
            let before = try await c.probe.counters()
            let (id, sent) = try await c.probe.request(.devicePing, [], reliable: true)
            _ = await c.probe.reply(to: id)
            try await c.probe.sendRaw(sent)
            let ack = await c.probe.next { $0.packet?.type == .ack }
            try c.require(
                ack != nil, "the duplicate was not ACKed again", sent: sent, expected: "ACK (every time: the first ACK may have been lost)")
            let again = await c.newReply(to: id, after: sent, within: .milliseconds(120))
            try c.require(again == nil, "the duplicate was answered again", sent: sent, seen: again?.wire, expected: "nothing")
            let after = try await c.probe.counters()
            try c.expectDelta("duplicates_dropped", \.duplicatesDropped, before, after, 1, sent: sent)
        },
        ConformanceCase(
            "duplicates-dropped-outside-window", "PROTOCOL.md §6",
            "A reliable REQUEST repeated after 70 newer packets (older than the 64-entry window) is dropped as a duplicate."
        ) { c in
            let (id, sent) = try await c.probe.request(.devicePing, [], reliable: true)
            _ = await c.probe.reply(to: id)
            for _ in 0..<70 { try await c.probe.send(Packet(type: .heartbeat, callID: 0)) }
            await c.probe.drain()
            try await c.probe.sendRaw(sent)
            let again = await c.newReply(to: id, after: sent, within: .milliseconds(150))
            try c.require(again == nil, "the old copy was executed again", sent: sent, seen: again?.wire, expected: "nothing")
        },
        ConformanceCase(
            "timestamps-monotonic", "PROTOCOL.md §8, device.proto",
            "device_time_us never goes back: handshake, then five Pings, strictly increasing."
        ) { c in
            var last = c.handshake.deviceTimeMicros
            for _ in 0..<5 {
                let (sent, reply) = try await c.probe.call(.devicePing, [])
                let packet = try c.expect(reply, .response, callID: Probe.callIDOf(sent), sent: sent, "Ping")
                let time = try PingResponse(serializedBytes: packet.payload).deviceTimeMicros
                try c.require(
                    time > last, "device_time_us \(time) after \(last)", sent: sent, seen: reply?.wire, expected: "more than \(last)")
                last = time
                try await Task.sleep(for: .milliseconds(3))
            }
        },
        ConformanceCase(
            "reliable-events-acked", "PROTOCOL.md §6",
            "An ACKed reliable event is delivered once and not sent again once the device has read its ACK "
                + "(after the answer to a request written after the ACK).",
            requires: .simulatorService
        ) { c in
            let stream = try await c.openStream(.inputStreamInputEvents)
            let scenario = RunScenarioRequest(scenario: "remote-click count=3\n").serializedBytes()
            let (sent, reply) = try await c.probe.call(.simulatorRunScenario, scenario)
            let packet = try c.expect(reply, .response, callID: Probe.callIDOf(sent), sent: sent, "RunScenario")
            let run = try RunScenarioResponse(serializedBytes: packet.payload)
            // A status call every 50 ms from the start: each answer is a barrier for the copies (below).
            let frames = try await c.framesUntilScenarioEnd(settle: .milliseconds(300))
            try await c.cancel(stream.callID)
            let copies = frames.filter { $0.packet?.callID == stream.callID && $0.packet?.type == .streamMessage }
            var firsts: [UInt16: InputEvent] = [:]
            for frame in copies where firsts[frame.packet!.sequence] == nil {
                firsts[frame.packet!.sequence] = try InputEvent(serializedBytes: frame.packet!.payload)
            }
            let clicks = firsts.values.filter { $0.kind == .remoteClick }
            try c.require(
                clicks.count == 3, "\(clicks.count) REMOTE_CLICK events for 3 clicks", seen: copies.first?.wire, expected: "3")
            let numbers = clicks.map(\.eventNumber)
            try c.require(
                Set(numbers).count == numbers.count, "event numbers \(numbers.sorted()) repeat: an event was delivered twice",
                seen: copies.last?.wire)
            // A copy may follow the ACK while the ACK is on its way (a late ACK rightly causes retransmission,
            // §6), but not once the device has read it. Judged by order, not by a grace on the host's clock (a
            // device a loaded machine stalls retransmits late, then reads the ACK): the status calls made while
            // the scenario played are barriers, and a copy that arrived after the answer to a request written
            // after its ACK was sent after the device had read that ACK.
            let ackSent = await c.probe.ackSent
            let answeredCalls = await c.probe.answeredCalls
            for frame in copies {
                guard let acked = ackSent[frame.packet!.sequence],
                    let barrier = answeredCalls.first(where: { $0.sent >= acked && $0.answered < frame.at })
                else { continue }
                throw ConformanceFailure(
                    "sequence \(frame.packet!.sequence) sent again \(ms(acked, frame.at)) ms after its ACK, after the answer "
                        + "to a request written \(ms(acked, barrier.sent)) ms after that ACK", seen: frame.wire,
                    expected: "no copy once the device has read the ACK")
            }
        },
        ConformanceCase(
            "retransmit-schedule", "PROTOCOL.md §6",
            "An unacknowledged reliable event is sent again with the same sequence after 20 ms, then 40, 80 (the timeout doubles; a device given its line's speed adds the same allowance to each).",
            requires: .simulatorService
        ) { c in
            let allowance = UInt64(try await c.simulatorStatus().retransmissionAllowanceMicros)
            let (_, copies, deviceTime) = try await unacknowledgedClick(c, for: .milliseconds(400))
            let first = copies.first
            let same = copies.filter { $0.packet?.sequence == first?.packet?.sequence && $0.packet?.isReliable == true }
            guard let first, let event = try? InputEvent(serializedBytes: first.packet!.payload) else {
                throw ConformanceFailure("the remote click sent no event", code: .noAnswer)
            }
            // Counted on the device's clock, not timed on the host's: the event went out at its timestamp_us, each
            // copy 20, 60, 140, 300 ms … after it (the timeout doubles), and every copy sent before the last
            // status answer (at deviceTime) has arrived. A stall of either process bunches copies on the host but
            // does not change how many the device had sent by then; one a step late is allowed (the device acts
            // on its sample ticks). A device given its line's speed (GetSimulatorStatus's allowance, 0 on a fast
            // link) waits that much more each time, from when the copy has left its buffer: on such a line a copy
            // may also leave up to its own time on the wire late (at most the allowance again: 32 bytes).
            func sent(by micros: UInt64, lateEach: UInt64) -> Int {
                1
                    + (1...7).filter { k in
                        event.timestampMicros + UInt64(20_000 * ((1 << k) - 1)) + UInt64(k) * (allowance + lateEach) <= micros
                    }.count
            }
            let range = sent(by: deviceTime &- 3_000, lateEach: allowance)...sent(by: deviceTime, lateEach: 0)
            let count = range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range.lowerBound) or \(range.upperBound)"
            try c.require(
                range.contains(same.count),
                "\(same.count) transmissions \((deviceTime &- event.timestampMicros) / 1_000) ms of device time after the event",
                seen: first.wire, expected: "\(count): the event, then copies 20, 40, 80, 160 ms apart")
            if let packet = first.packet {
                try await c.probe.send(
                    Packet(type: .ack, callID: 0, payload: [UInt8(packet.sequence & 0xFF), UInt8(packet.sequence >> 8)]))
            }
        },
        ConformanceCase(
            "reliable-given-up", "PROTOCOL.md §6",
            "A reliable event never ACKed is sent 8 times in all, then given up and counted (reliable_given_up).",
            requires: .simulatorService, slow: true
        ) { c in
            let before = try await c.probe.counters()
            // 5.1 s with the defaults; a device given its line's speed waits its allowance more after each copy,
            // and a copy may leave that much late again (see retransmit-schedule).
            let allowance = Int64(try await c.simulatorStatus().retransmissionAllowanceMicros)
            let (_, copies, _) = try await unacknowledgedClick(c, for: .milliseconds(5400) + .microseconds(16 * allowance))
            let seq = copies.first?.packet?.sequence
            let same = copies.filter { $0.packet?.sequence == seq }
            try c.require(
                same.count == 8, "\(same.count) transmissions", seen: copies.first?.wire, expected: "8 (the first and 7 retransmissions)")
            let after = try await c.probe.counters()
            // At least the event (v1.1: an unacknowledged reply of the same run is given up too).
            let givenUp = Int(after.reliableGivenUp) - Int(before.reliableGivenUp)
            try c.require(
                givenUp >= 1, "reliable_given_up grew by \(givenUp)", seen: after.serializedBytes(),
                expected: "Counters.reliable_given_up + at least 1")
        },
    ]
}
