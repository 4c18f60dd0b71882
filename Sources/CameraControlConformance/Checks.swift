import CameraControlWire

/// Helpers the cases share.
extension CaseContext {
    /// The device's announced maximum frame, clamped to the protocol's range.
    var maxFrame: Int { Int(min(max(capabilities.maxFrameBytes, 128), 4093)) }

    /// The device's heartbeat interval (§8; 50 ms when it announces none).
    var heartbeatInterval: Duration {
        .milliseconds(Int(capabilities.heartbeatIntervalMillis == 0 ? 50 : capabilities.heartbeatIntervalMillis))
    }

    /// How long `bytes` take on this line (``Probe/lineTime(bytes:)``; zero on a fast line).
    func lineTime(bytes: Int) async -> Duration { await probe.lineTime(bytes: bytes) }

    /// A Ping echoing `payload` as a barrier (``Probe/framesBeforeBarrier(echoing:within:)``): the frames before
    /// its answer, the answer's `device_time_us` and the answer; a ``ConformanceFailure`` naming `what` when
    /// no `RESPONSE` came within ``Probe/answerWait`` and the line time of the request and its echo.
    func framesBeforePingAnswer(
        echoing payload: [UInt8], _ what: String
    ) async throws -> (frames: [ReceivedFrame], deviceTime: UInt64, answer: ReceivedFrame) {
        // On a slow line the request and its echo each take their time (8.5 s for 4,029 bytes at 9600 baud).
        let wait = await Probe.answerWait + lineTime(bytes: 2 * (COBS.maxEncodedCount(payload.count + 64) + 1))
        let barrier = try await probe.framesBeforeBarrier(echoing: payload, within: wait)
        guard let frames = barrier.frames, let answer = barrier.answer, let packet = answer.packet, packet.type == .response,
            let time = (try? PingResponse(serializedBytes: packet.payload))?.deviceTimeMicros
        else {
            throw ConformanceFailure(
                "\(what) was not answered with a RESPONSE", sent: barrier.ping, seen: barrier.answer?.wire,
                expected: "RESPONSE PingResponse on call \(Probe.callIDOf(barrier.ping))")
        }
        return (frames, time, answer)
    }

    /// Fails when the cancelled call `callID` sends anything more once the device has the `CANCEL` (§7: it
    /// "sends nothing more for it"; it MAY already have sent packets). Judged by order, never by host time: a
    /// Ping written right behind the `CANCEL` is a barrier. The device reads its input in order, so it has
    /// the `CANCEL` before it answers the Ping; whatever of the call arrives before the answer had begun,
    /// or was sent, before that (on a loaded machine, or under QEMU, a device can be late by any amount, and
    /// keeps sending the stream until it reads the `CANCEL`); whatever arrives after the answer, within
    /// 100 ms and a small raw batch's line time (64 bytes), was sent after the device had the `CANCEL` and
    /// fails the case. A copy of a reliable packet that first arrived before the answer is a retransmission
    /// of something sent before (§6), not more.
    ///
    /// This catches a device that ignores the `CANCEL`, one that handles it late (at a later tick), and one
    /// that sends the call's queued batches after it when, as §6's priority asks, its answers go before
    /// queued batches: the reference device before it forgot a cancelled call's queued batches failed it
    /// at 9600 baud. A device sending strictly in queue order that sends its queued batches before the
    /// answer is not told from a late one (docs/CONFORMANCE.md).
    func expectNothingMoreAfterCancel(_ callID: UInt32, cancel: [UInt8]) async throws {
        let (_, _, answer) = try await framesBeforePingAnswer(echoing: [], "a Ping written right behind the CANCEL")
        let after = await probe.collect(for: .milliseconds(100) + lineTime(bytes: 64))
        let firstSeen = await probe.reliableFirstSeen
        let more = after.filter { frame in
            guard let packet = frame.packet, packet.callID == callID else { return false }
            return !(packet.isReliable && (firstSeen[packet.sequence].map { $0 < answer.at } ?? false))
        }
        try require(
            more.isEmpty, "\(more.count) packets on the cancelled call after the answer to a Ping written behind the CANCEL",
            sent: cancel, seen: more.first?.wire, expected: "nothing on call \(callID) once the device has the CANCEL")
    }

    /// True when `bytes` sent in one go keep the line for 3 heartbeat intervals or more: then the device may
    /// rightly end the session while they arrive, if they are no frame that keeps the link alive (§8: garbage,
    /// or a frame that fails, leaves the silence counted from the last valid frame, and the probe's
    /// heartbeats wait behind them on the line). A case that sends such bytes starts a new session after them.
    func mayOutlastDeadTimeout(bytes: Int) async -> Bool {
        await lineTime(bytes: bytes) >= heartbeatInterval * 3
    }

    /// Fails unless `reply` is a packet of `type` (and `status`, when given) on `callID`.
    @discardableResult
    func expect(
        _ reply: ReceivedFrame?, _ type: PacketType, status: StatusCode? = nil, callID: UInt32, sent: [UInt8],
        _ what: String
    ) throws -> Packet {
        var template = Packet(type: type, sequence: reply?.packet?.sequence ?? 0, callID: callID, status: status)
        if let packet = reply?.packet, packet.type == type, packet.callID == callID, status == nil || packet.status == status {
            return packet
        }
        let statusText = status.map { " \($0)" } ?? ""
        var expected = "\(type)\(statusText) on call \(callID)"
        // The expected frame's bytes, with the reply's payload, only when the reply is of that type (a wrong
        // call or status): another type's payload (an ERROR's text) would read as the answer expected.
        if let packet = reply?.packet, packet.type == type {
            template.payload = packet.payload
            if let bytes = try? PacketEncoder.encode(template) { expected += ": " + hex(bytes) }
        }
        throw ConformanceFailure(
            "\(what): expected \(type)\(statusText) on call \(callID), got \(Self.describe(reply))", sent: sent,
            seen: reply?.wire, expected: expected)
    }

    /// Fails when anything but link packets (ACK, HEARTBEAT) arrives within `duration`, or after it but
    /// before the answer to a Ping sent then (``Probe/framesBeforeBarrier(within:)``), or when that Ping is
    /// not answered.
    ///
    /// A retransmission of a reliable packet received before the window (same sequence number: the device
    /// sent it again because the probe's ACK was late, as §6 requires of it) is not an answer and is ignored,
    /// nor is a copy of one received since (``ReceivedFrame/isRepeat``: the case's own answer, sent again
    /// because a loaded machine delayed the probe's ACK past the device's 20 ms).
    /// The first frame `matching` within 150 ms, or else among those that came before the answer of a Ping sent
    /// then (a device answers in order, so an answer a loaded machine delayed still comes before the Ping's);
    /// nil when none came. Fails when that Ping goes unanswered: then nothing shows that none came.
    func frameBeforeBarrier(matching: @escaping @Sendable (ReceivedFrame) -> Bool) async throws -> ReceivedFrame? {
        if let frame = await probe.next(within: .milliseconds(150), where: matching) { return frame }
        let barrier = try await probe.framesBeforeBarrier()
        try require(
            barrier.frames != nil, "the Ping sent as a barrier went unanswered: nothing shows what the device did before it",
            sent: barrier.ping, expected: "the Ping's RESPONSE")
        return barrier.frames?.first(where: matching)
    }

    func expectSilence(after sent: [UInt8], for duration: Duration = .milliseconds(120), _ what: String) async throws {
        // Copies of reliable packets that arrived before `sent` went out are retransmissions, not answers; an
        // answer that arrived while this function was being reached is not (judged by arrival time, so the
        // moment this runs does not matter).
        let sentTime = await probe.sentAt[sent] ?? ContinuousClock.now
        let firstSeen = await probe.reliableFirstSeen
        // `duration` of quiet, then a Ping as a barrier: an answer that a loaded machine delays past the
        // window still comes before the Ping's, so it is seen. The Ping itself must be answered (the link
        // goes on after whatever was sent).
        let quiet = await probe.collect(for: duration)
        let barrier = try await probe.framesBeforeBarrier()
        guard let late = barrier.frames else {
            throw ConformanceFailure(
                "\(what): a Ping sent after it was not answered", sent: barrier.ping, seen: nil,
                expected: "RESPONSE PingResponse on call \(Probe.callIDOf(barrier.ping))")
        }
        let frames = quiet + late
        let answer = frames.first { frame in
            guard let packet = frame.packet else { return true }
            if packet.type == .ack || packet.type == .heartbeat || frame.isRepeat || frame.ofEndedSession { return false }
            return !(packet.isReliable && (firstSeen[packet.sequence].map { $0 < sentTime } ?? false))
        }
        if let other = answer {
            throw ConformanceFailure(
                "\(what): expected no answer, got \(Self.describe(other))", sent: sent, seen: other.wire,
                expected: "nothing (only ACK or HEARTBEAT)")
        }
    }

    /// The next packet on `callID` within `timeout` that is not an ACK and not a retransmission of a reliable
    /// packet received before `sent` went out (nil when none came): "was it answered again?" without
    /// counting the device's retransmission of its first answer, which a late ACK rightly causes (§6).
    /// Judged by arrival time against the moment `sent` last went out (``Probe/sentAt``,
    /// ``Probe/reliableFirstSeen``), so an answer that arrived before this call is still new: on a loaded
    /// machine it often does.
    ///
    /// When none came within `timeout`, a Ping barrier follows (as in ``expectSilence(after:for:_:)``): an
    /// answer that a loaded machine delayed past the window still comes before the Ping's, so "no new reply"
    /// is never concluded from a host that was merely slow.
    func newReply(to callID: UInt32, after sent: [UInt8], within timeout: Duration) async -> ReceivedFrame? {
        let sentTime = await probe.sentAt[sent] ?? ContinuousClock.now
        let older = Set(await probe.reliableFirstSeen.filter { $0.value < sentTime }.keys)
        let isNew: @Sendable (ReceivedFrame) -> Bool = { frame in
            guard let packet = frame.packet, packet.callID == callID, packet.type != .ack, !frame.isRepeat, !frame.ofEndedSession
            else { return false }
            return !(packet.isReliable && older.contains(packet.sequence))
        }
        if let reply = await probe.next(within: timeout, where: isNew) { return reply }
        return (try? await probe.framesBeforeBarrier())?.frames?.first(where: isNew)
    }

    /// Fails unless `after.<counter> - before.<counter> == expected`.
    func expectDelta(
        _ name: String, _ field: KeyPath<Counters, UInt32>, _ before: Counters, _ after: Counters, _ expected: Int,
        sent: [UInt8]
    ) throws {
        let delta = Int(after[keyPath: field]) - Int(before[keyPath: field])
        guard delta == expected else {
            throw ConformanceFailure(
                "\(name) grew by \(delta), expected \(expected)", sent: sent, seen: after.serializedBytes(),
                expected: "Counters.\(name) + \(expected)")
        }
    }

    /// Fails when the device broke one of `rules` in a frame the probe received during this case, its handshake
    /// included (``Probe/frameViolations``).
    func requireFrameRules(_ rules: FrameRule...) async throws {
        let violations = await probe.frameViolations
        for rule in rules {
            guard let violation = violations[rule] else { continue }
            throw ConformanceFailure(
                "\(violation.message) (\(Self.describe(violation.frame)))", seen: violation.frame.wire, expected: rule.rawValue)
        }
    }

    /// Fails with `message` unless `condition`.
    func require(
        _ condition: Bool, _ message: @autoclosure () -> String, sent: [UInt8]? = nil, seen: [UInt8]? = nil,
        expected: String = ""
    ) throws {
        guard condition else { throw ConformanceFailure(message(), sent: sent, seen: seen, expected: expected) }
    }

    /// A packet in words.
    static func describe(_ frame: ReceivedFrame?) -> String {
        guard let frame else { return "nothing" }
        guard let packet = frame.packet else { return "an undecodable frame (\(frame.error.map { "\($0)" } ?? "?"))" }
        var text = "\(packet.type) on call \(packet.callID), sequence \(packet.sequence)"
        if let status = packet.status { text += ", status \(status)" }
        if packet.isReliable { text += ", RELIABLE" }
        return text
    }

    /// Opens a server stream and returns its call id and request bytes.
    func openStream(_ method: MethodID, _ payload: [UInt8] = []) async throws -> (callID: UInt32, wire: [UInt8]) {
        try await probe.request(method, payload)
    }

    /// Sends CANCEL for `callID`; returns its bytes.
    @discardableResult
    func cancel(_ callID: UInt32) async throws -> [UInt8] {
        try await probe.send(Packet(type: .cancel, callID: callID))
    }

    /// With the probe silent (heartbeats off), waits until the device has ended the session (§8: after 4
    /// intervals of host silence): it has sent nothing for 3 intervals, and a Ping then gets ERROR
    /// FAILED_PRECONDITION. Judged by the device, not by a host-time deadline, which a loaded machine (or a
    /// simulator catching up after a stall, when host silence is not observed) would turn into a false
    /// failure: a Ping the device still answers only restarts the wait. A device that never ends the session
    /// fails after 5 s. Returns what it sent.
    func waitForLinkDeath(_ what: String) async throws -> [ReceivedFrame] {
        let interval = heartbeatInterval
        let deadline = ContinuousClock.now + .seconds(5)
        var last = ContinuousClock.now
        var frames: [ReceivedFrame] = []
        while ContinuousClock.now < deadline {
            let got = await probe.collect(for: interval)
            if let newest = got.last {
                last = max(last, newest.at)
                frames += got
            }
            guard ContinuousClock.now - last >= interval * 3 else { continue }
            let (_, reply) = try await probe.call(.devicePing, PingRequest().serializedBytes())
            if let packet = reply?.packet, packet.type == .error, packet.status == .failedPrecondition { return frames }
            last = ContinuousClock.now  // still alive (it was stalled): the Ping restarted its timer
        }
        throw ConformanceFailure(
            "\(what): the device still answers after 5 s of host silence (\(frames.count) frames)", seen: frames.last?.wire,
            expected: "silence, then FAILED_PRECONDITION: the session ended after 4 × heartbeat_interval_ms")
    }

    /// The device clock (`SimulatorService/GetSimulatorStatus`) and whether a scenario is still playing.
    func simulatorStatus() async throws -> SimulatorStatus {
        let (sent, reply) = try await probe.call(.simulatorGetSimulatorStatus, GetSimulatorStatusRequest().serializedBytes())
        let packet = try expect(reply, .response, callID: Probe.callIDOf(sent), sent: sent, "GetSimulatorStatus")
        return try SimulatorStatus(serializedBytes: packet.payload)
    }

    /// Waits, on the device's clock, until the scenario has ended and `settle` more has passed (for events the
    /// end of a scenario still causes: the release a conditioning filter reports a few ms late), then returns
    /// everything received meanwhile. Judged by the device's own `device_time_us`, not the host's clock: a
    /// loaded host that runs late only waits longer, and since the device answers in order, every frame it sent
    /// before its last status answer has arrived.
    /// It first sleeps `scenarioMicros` (the scenario's length), then asks every 50 ms: few status answers,
    /// which matters when a case does not acknowledge them (each is a reliable packet the device keeps). Each
    /// answered status call is also a barrier (``Probe/answeredCalls``).
    func framesUntilScenarioEnd(
        scenarioMicros: UInt64 = 0, settle: Duration = .milliseconds(150)
    ) async throws -> [ReceivedFrame] {
        let settleMicros = UInt64(settle.components.seconds) * 1_000_000 + UInt64(settle.components.attoseconds / 1_000_000_000_000)
        var ended: UInt64?
        let deadline = ContinuousClock.now + .seconds(30)
        try await Task.sleep(for: .microseconds(Int64(scenarioMicros)))
        while ContinuousClock.now < deadline {
            let status = try await simulatorStatus()
            if !status.isScenarioRunning {
                let end = ended ?? status.deviceTimeMicros
                ended = end
                if status.deviceTimeMicros >= end + settleMicros { return await probe.drain() }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ConformanceFailure("the scenario did not end within 30 s", code: .noAnswer)
    }

    /// Waits until the device's clock (`GetSimulatorStatus`) has advanced `duration` from its first answer here,
    /// then returns everything received meanwhile (as ``framesUntilScenarioEnd(settle:)``).
    /// Also returns the device time of the last status answer: every frame the device sent before it is in
    /// the frames (it answers in order).
    func framesForDeviceTime(_ duration: Duration) async throws -> (frames: [ReceivedFrame], deviceTimeMicros: UInt64) {
        let micros = UInt64(duration.components.seconds) * 1_000_000 + UInt64(duration.components.attoseconds / 1_000_000_000_000)
        let start = try await simulatorStatus().deviceTimeMicros
        let deadline = ContinuousClock.now + duration * 6 + .seconds(10)
        try await Task.sleep(for: duration * 0.9)
        while ContinuousClock.now < deadline {
            let now = try await simulatorStatus().deviceTimeMicros
            if now >= start + micros { return (await probe.drain(), now) }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw ConformanceFailure("the device clock did not advance \(duration) in \(duration * 6 + .seconds(10))", code: .noAnswer)
    }

    /// Plays `scenario` with `SimulatorService/RunScenario` while an input stream is open, and returns the
    /// stream's messages (retransmissions removed: one frame per sequence number) in arrival order.
    func inputEvents(of scenario: String) async throws -> [(frame: ReceivedFrame, packet: Packet, event: InputEvent)] {
        let stream = try await openStream(.inputStreamInputEvents)
        let body = RunScenarioRequest(scenario: scenario).serializedBytes()
        let (request, reply) = try await probe.call(.simulatorRunScenario, body)
        let packet = try expect(reply, .response, callID: Probe.callIDOf(request), sent: request, "RunScenario")
        let run = try RunScenarioResponse(serializedBytes: packet.payload)
        let frames = try await framesUntilScenarioEnd(scenarioMicros: run.durationMicros)
        try await cancel(stream.callID)
        var seen = Set<UInt16>()
        var events: [(ReceivedFrame, Packet, InputEvent)] = []
        for frame in frames {
            guard let packet = frame.packet, packet.callID == stream.callID, packet.type == .streamMessage else { continue }
            guard seen.insert(packet.sequence).inserted else { continue }
            events.append((frame, packet, try InputEvent(serializedBytes: packet.payload)))
        }
        return events
    }
}

/// A Ping request body whose payload is `count` bytes of `fill`.
func pingBody(count: Int, fill: UInt8 = 0x55) -> [UInt8] {
    PingRequest(payload: [UInt8](repeating: fill, count: count)).serializedBytes()
}
